#!/bin/sh
# test_accuracy.sh - the throughput estimate against published runs (issue 12).
#
# Prints the accuracy report (tests/accuracy/accuracy.c) for the calibration
# rows and the held-out rows and fails when fewer than the goal are within
# +-20% of the published tokens/s per GPU: ACCURACY_MIN_CALIBRATION (default
# 0.80, the issue's goal) for calibration.json, ACCURACY_MIN_HELDOUT for
# heldout.json (default 0.50: rows the constants were never fitted to, so
# a lower bar that still fails when the physics goes wrong).  --plan also
# plans every row whose published layout check passes and fails when the
# planner's first plan is slower than that layout by the engine's own
# estimate (issue 12: the planner sees every layout check accepts).
set -eu
acc=${ACCURACY:-./accuracy}
data=${ACCURACY_DATA:-.}
"$acc" --plan --min-within20 "${ACCURACY_MIN_CALIBRATION:-0.80}" "$data/calibration.json"
if [ "$(tr -d ' \n' < "$data/heldout.json")" != "[]" ]; then
	"$acc" --plan --min-within20 "${ACCURACY_MIN_HELDOUT:-0.50}" "$data/heldout.json"
fi
