#!/bin/sh
# sbatch_bench.sh - what spank_advisor.so adds to sbatch's own time.
#
# Against a running private cluster (scripts/cluster start), measures the
# median wall time of `sbatch --wrap true` with the plugin loaded and
# without it, interleaved in the same run (two client slurm.conf copies that
# differ only in PlugStackConfig: sbatch reads plugstack.conf at every
# call).  Also times a checked GPU job (one daemon round trip) against the
# same job without the plugin.  Prints a table and one JSON line; never
# fails on the numbers.
#
#   CLUSTER_DIR=/tmp/advisor-cluster RUNS=30 tests/bench/sbatch_bench.sh [PLUGIN.so]
set -eu

dir=${CLUSTER_DIR:-/tmp/advisor-cluster}
runs=${RUNS:-30}
conf=$dir/slurm.conf
[ -f "$conf" ] || { echo "sbatch_bench: no cluster in $dir (scripts/cluster start)" >&2; exit 77; }
plugin=${1:-$(awk '/spank_advisor/ {print $2; exit}' "$dir/plugstack.conf" 2>/dev/null || true)}
[ -n "$plugin" ] && [ -f "$plugin" ] || { echo "sbatch_bench: no plugin (pass its path)" >&2; exit 77; }
sock=${ADVISOR_SOCKET:-$dir/advisord.sock}

work=$(mktemp -d /tmp/sbatch-bench.XXXXXX)
trap 'SLURM_CONF=$conf scancel -n advbench >/dev/null 2>&1 || :; rm -rf "$work"' EXIT
printf 'required %s socket=%s timeout_ms=1000\n' "$plugin" "$sock" > "$work/with.conf"
: > "$work/without.conf"
for v in with without; do
	sed "s|^PlugStackConfig=.*|PlugStackConfig=$work/$v.conf|" "$conf" > "$work/slurm-$v.conf"
done

# one CONF ARGS...: wall time of one sbatch in microseconds
one() {
	c=$1; shift
	t0=$(date +%s%N)
	SLURM_CONF=$c sbatch -J advbench --hold -o /dev/null "$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000))
}

median() { sort -n "$1" | awk '{a[NR] = $1} END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

bench() {
	name=$1; shift
	: > "$work/$name.with"; : > "$work/$name.without"
	# Warm the page cache and the controller first.
	one "$work/slurm-with.conf" "$@" >/dev/null
	one "$work/slurm-without.conf" "$@" >/dev/null
	i=0
	while [ $i -lt "$runs" ]; do
		one "$work/slurm-with.conf" "$@" >> "$work/$name.with"
		one "$work/slurm-without.conf" "$@" >> "$work/$name.without"
		i=$((i + 1))
	done
	SLURM_CONF=$conf scancel -n advbench >/dev/null 2>&1 || :
}

bench plain --wrap true
# The checked job: without the plugin the --llm-* options do not exist, so
# the baseline submits the same resources without them.
: > "$work/gpu.with"; : > "$work/gpu.without"
one "$work/slurm-with.conf" -N4 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp8,pp4 --wrap true >/dev/null
i=0
while [ $i -lt "$runs" ]; do
	one "$work/slurm-with.conf" -N4 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp8,pp4 --llm-zero=1 \
		--wrap true >> "$work/gpu.with"
	one "$work/slurm-without.conf" -N4 --gres=gpu:8 --wrap true >> "$work/gpu.without"
	i=$((i + 1))
done
SLURM_CONF=$conf scancel -n advbench >/dev/null 2>&1 || :

pw=$(median "$work/plain.with"); po=$(median "$work/plain.without")
gw=$(median "$work/gpu.with"); go=$(median "$work/gpu.without")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# Each round ran with and without back to back: the median of the rounds'
# own ratios cancels the load drifting between rounds (other builds on a
# 2-core machine move both medians by more than the plugin costs).
paired() { paste "$1" "$2" | awk '{ print $1 / $2 }' > "$work/ratios"; median "$work/ratios" | awk '{ printf "%.3f", $1 }'; }
pp=$(paired "$work/plain.with" "$work/plain.without")
gp=$(paired "$work/gpu.with" "$work/gpu.without")
ms() { awk -v a="$1" 'BEGIN { printf "%.2f", a / 1000 }'; }
printf '%-44s %12s %12s %8s %8s\n' "sbatch, median of $runs runs" "with (ms)" "without (ms)" "ratio" "paired"
printf '%-44s %12s %12s %8s %8s\n' "--wrap true (no GPU: plugin loads, no call)" "$(ms "$pw")" "$(ms "$po")" "$(ratio "$pw" "$po")" "$pp"
printf '%-44s %12s %12s %8s %8s\n' "-N4 --gres=gpu:8 --llm-* (daemon check)" "$(ms "$gw")" "$(ms "$go")" "$(ratio "$gw" "$go")" "$gp"
printf '{"bench":"sbatch","runs":%d,"plain_with_ms":%s,"plain_without_ms":%s,"plain_ratio":%s,"plain_paired_ratio":%s,"checked_with_ms":%s,"checked_without_ms":%s,"checked_ratio":%s,"checked_paired_ratio":%s}\n' \
	"$runs" "$(ms "$pw")" "$(ms "$po")" "$(ratio "$pw" "$po")" "$pp" "$(ms "$gw")" "$(ms "$go")" "$(ratio "$gw" "$go")" "$gp"
