#!/bin/sh
# run.sh - replays the regression inputs and the seed corpus of every
# fuzz target, then fuzzes each for a bounded time.  Exits non-zero when any
# input crashes (sanitizer report, assertion, timeout, leak).
#
# usage: run.sh [BINDIR]          (BINDIR: where build.sh put the targets;
#                                  default ./fuzz-build)
# env:   FUZZ_SECONDS  seconds of fuzzing per target (default 60; 0 = replay only)
#        FUZZ_TOTAL_SECONDS  when FUZZ_SECONDS is not set: seconds of
#                      fuzzing shared by the targets run, the same for each
#                      (the first ones a second more where it does not
#                      divide), so that a target added takes its time from
#                      the others (scripts/check's fuzz lane: 480)
#        FUZZ_TARGETS  targets to run (default: those build.sh built, as
#                      listed in BINDIR/targets: the six of libadvisor and
#                      the daemon, the job reader's fuzz_cfg_yaml,
#                      fuzz_cfg_json, fuzz_cfg_toml, fuzz_shell and
#                      fuzz_jobread, fuzz_soundness and fuzz_path; at 60 s
#                      each that is about 15 min)
#        FUZZ_WORKDIR  where the growing corpora and crash inputs go
#                      (default: BINDIR/work; kept, so a later run resumes)
#
# A crash leaves the input in FUZZ_WORKDIR/crashes/; to keep it as a
# regression test copy it to tests/fuzz/regress/<target>/.
set -u

here=$(cd "$(dirname "$0")" && pwd)
bindir=${1:-fuzz-build}
all="fuzz_catalog fuzz_policy fuzz_options fuzz_jobreq fuzz_wire fuzz_advconf fuzz_cfg_yaml
	fuzz_cfg_json fuzz_cfg_toml fuzz_shell fuzz_scripttext fuzz_jobread fuzz_soundness fuzz_path fuzz_pyprog fuzz_jobsubmit"
[ -f "$bindir/targets" ] && all=$(tr '\n' ' ' < "$bindir/targets")
targets=${FUZZ_TARGETS:-$all}
# shellcheck disable=SC2086
n_targets=$(echo $targets | wc -w)
work=${FUZZ_WORKDIR:-$bindir/work}
failed=""

mkdir -p "$work/crashes" || exit 1
# fuzz_jobread, fuzz_soundness and fuzz_path load the shipped catalog (and
# policy) from the source tree.
ADVISOR_TOP=${ADVISOR_TOP:-$(cd "$here/../.." && pwd)}
export ADVISOR_TOP
summary=$work/summary.txt
: > "$summary"

# Per-target libFuzzer options: the wire target's inputs are request
# streams (4 KiB is dozens of requests); the YAML targets start from the
# whole shipped catalog (~25 KiB).
opts_for() {
	case $1 in
	fuzz_wire) echo "-max_len=4096" ;;
	fuzz_catalog|fuzz_policy) echo "-max_len=32768" ;;
	# Config files: the seeds are real-sized (up to ~2 KiB); 8 KiB leaves
	# room for nesting and alias chains without slowing the runs down.
	fuzz_cfg_*) echo "-max_len=8192" ;;
	# Job scripts: the seeds are tests/jobs scripts (1-3 KiB).
	fuzz_jobread|fuzz_shell|fuzz_scripttext|fuzz_path) echo "-max_len=16384" ;;
	# One generated job: a byte a choice, about 30 of them.
	fuzz_soundness) echo "-max_len=64" ;;
	*) echo "-max_len=4096" ;;
	esac
}

# seconds_of I: the fuzzing time of the I-th target run (from 0): FUZZ_SECONDS,
# else its share of FUZZ_TOTAL_SECONDS, else 60.
seconds_of() {
	if [ -z "${FUZZ_SECONDS:-}" ] && [ -n "${FUZZ_TOTAL_SECONDS:-}" ]; then
		echo $((FUZZ_TOTAL_SECONDS / n_targets + ($1 < FUZZ_TOTAL_SECONDS % n_targets)))
	else
		echo "${FUZZ_SECONDS:-60}"
	fi
}

i=0
for t in $targets; do
	seconds=$(seconds_of $i)
	i=$((i + 1))
	name=${t#fuzz_}
	bin=$bindir/$t
	seeds=$here/corpus/$name
	# The script reader takes the shell evaluator's job scripts.
	[ "$t" = fuzz_scripttext ] && seeds=$here/corpus/shell
	regress=$here/regress/$t
	dict=$here/dict/$name.dict
	log=$work/$t.log
	if [ ! -x "$bin" ]; then
		echo "run.sh: $bin not built (make fuzz, or tests/fuzz/build.sh)" >&2
		failed="$failed $t"
		continue
	fi
	common="-timeout=25 -rss_limit_mb=2560 -malloc_limit_mb=2560 -detect_leaks=1 \
		-artifact_prefix=$work/crashes/$t- $(opts_for "$t")"
	[ -f "$dict" ] && common="$common -dict=$dict"

	# 1. Every regression input and every seed must pass, one run each.
	set --
	[ -d "$regress" ] && set -- "$@" "$regress"
	[ -d "$seeds" ] && set -- "$@" "$seeds"
	if [ $# -gt 0 ]; then
		# shellcheck disable=SC2086
		if ! "$bin" $common -runs=0 "$@" > "$log.replay" 2>&1; then
			echo "run.sh: $t: a regression or seed input fails:" >&2
			grep -E 'Running:|ERROR|SUMMARY|runtime error|assertion|Test unit written' \
				"$log.replay" | tail -n 20 >&2
			failed="$failed $t"
			continue
		fi
		echo "run.sh: $t: $(ls "$regress" 2>/dev/null | wc -l) regression and" \
			"$(ls "$seeds" 2>/dev/null | wc -l) seed inputs pass"
	fi
	[ "$seconds" -gt 0 ] || continue

	# 2. Fuzz, growing a corpus of our own from the seeds.
	mkdir -p "$work/corpus/$t"
	# shellcheck disable=SC2086
	"$bin" $common -max_total_time="$seconds" -print_final_stats=1 \
		"$work/corpus/$t" ${seeds:+"$seeds"} > "$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	printf '%-14s %8s s %12s runs %8s exec/s  %s  %s\n' "$t" "$seconds" "${runs:-?}" \
		"${eps:-?}" "${cov:-?}" "$([ $rc -eq 0 ] && echo ok || echo CRASH)" | tee -a "$summary"
	if [ $rc -ne 0 ]; then
		echo "run.sh: $t crashed; input and log:" >&2
		grep -E 'ERROR|SUMMARY|runtime error|assertion|Test unit written|Base64' "$log" \
			| tail -n 20 >&2
		failed="$failed $t"
	fi
done

if [ -n "$failed" ]; then
	echo "run.sh: FAILED:$failed (logs in $work)" >&2
	exit 1
fi
echo "run.sh: all targets passed (logs in $work)"
