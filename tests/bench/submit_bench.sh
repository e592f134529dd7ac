#!/bin/sh
# submit_bench.sh - slurmctld's submission rate under load with job_submit/lua
# (and advisor behind it) against the same slurmctld without job_submit
# (issue 31: "with job_submit and advisor at >= 90% of the rate without").
#
# CLIENTS submitters at once, each sending its share of JOBS held GPU jobs
# through sbatch as fast as it can; the rate is the jobs accepted divided by
# the wall time from the first sbatch to the last answer.  Each round starts
# a fresh private cluster (scripts/cluster start: slurmctld -c, an empty
# queue), once without job_submit and once with JOB_SUBMIT_LUA loaded, back
# to back, ROUNDS times; the order alternates so a drifting load on the
# machine falls on both.  The client's slurm.conf names an empty plugstack:
# only slurmctld's side differs (the SPANK plugin is sbatch_bench.sh's).
# The clients run at nice 10: on a site they run on login nodes, not on
# the controller, and here 8 of them (5 ms of CPU per sbatch) would
# otherwise take the cores slurmctld and advisord serve them with, and
# measure the clients (without it, 0.81 on 2 cores where the check costs
# slurmctld 0.3 ms of CPU per job).
# Prints a table and one JSON line; never fails on the numbers, only when a
# configuration accepted no job at all.  Exits 77 when it cannot run.
#
#   JOB_SUBMIT_LUA=/path/job_submit.lua [CLIENTS=8] [JOBS=400] [ROUNDS=3]
#   [CLUSTER_DIR=DIR] [CLUSTER_PORT=PORT] [ADVISORD=BUILD/daemon/advisord]
#   [ADVISOR_SOCKET=PATH] tests/bench/submit_bench.sh
#
# CLUSTER_DIR defaults to a new directory under /tmp (removed at the end;
# a cluster already running in a given one is restarted and stopped),
# CLUSTER_PORT to the first free block of 7 ports from 33000.  With ADVISORD,
# the script starts that daemon (the shipped catalog and policy) on
# CLUSTER_DIR/advisord.sock, counts the checks it answered during the "with"
# rounds (so a job_submit.lua that never reached it shows: daemon checks 0),
# and adds a third configuration per round: job_submit loaded, advisord
# stopped.  slurmctld inherits ADVISOR_SOCKET from this script's
# environment, for a job_submit.lua that reads it with os.getenv.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
clients=${CLIENTS:-8}
jobs=${JOBS:-400}
rounds=${ROUNDS:-3}
lua=${JOB_SUBMIT_LUA:-}
advisord=${ADVISORD:-}

skip() { echo "submit_bench: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (scripts/cluster runs slurmd as root)"
for b in slurmctld slurmd sbatch scancel scontrol; do
	command -v "$b" > /dev/null 2>&1 || skip "$b not found (Debian packages slurm-wlm and munge)"
done
[ -n "$lua" ] || skip "JOB_SUBMIT_LUA names no job_submit.lua"
[ -r "$lua" ] || skip "cannot read JOB_SUBMIT_LUA=$lua"
if [ -n "$advisord" ]; then
	[ -x "$advisord" ] || skip "ADVISORD=$advisord is not executable"
	advisorctl=$(dirname "$advisord")/advisorctl
	[ -x "$advisorctl" ] || skip "no advisorctl beside $advisord"
fi
[ "$clients" -ge 1 ] && [ "$jobs" -ge "$clients" ] && [ "$rounds" -ge 1 ] ||
	{ echo "submit_bench: need CLIENTS >= 1, JOBS >= CLIENTS, ROUNDS >= 1" >&2; exit 64; }
per=$((jobs / clients))
jobs=$((per * clients))

work=$(mktemp -d /tmp/submit-bench.XXXXXX)
own_dir=
if [ -n "${CLUSTER_DIR:-}" ]; then
	dir=$CLUSTER_DIR
else
	dir=$work/cluster
	own_dir=1
fi
mkdir -p "$dir"
# slurmd and the jobs' users read the cluster's files.
chmod 755 "$work" "$dir"
if [ -n "${CLUSTER_PORT:-}" ]; then
	port=$CLUSTER_PORT
else
	# slurmctld on PORT, the six slurmd on PORT+1..+6: all seven free.
	port_free() { ! ss -ltnH 2> /dev/null | awk '{print $4}' | grep -Eq ":($1|$(($1 + 1))|$(($1 + 2))|$(($1 + 3))|$(($1 + 4))|$(($1 + 5))|$(($1 + 6)))\$"; }
	port=33000
	while ! port_free $port; do port=$((port + 10)); done
fi
conf=$dir/slurm.conf
client_conf=$work/slurm-client.conf
daemon_pid=
if [ -n "$advisord" ]; then
	ADVISOR_SOCKET=${ADVISOR_SOCKET:-$dir/advisord.sock}
	export ADVISOR_SOCKET
fi
sock=${ADVISOR_SOCKET:-}

cluster_up=
cluster_stop() {
	[ -n "$cluster_up" ] || return 0
	CLUSTER_DIR=$dir "$top/scripts/cluster" stop > /dev/null 2>&1 || :
	cluster_up=
}
# Nothing talks to a controller that is down: scontrol and scancel would
# retry it for ten seconds and more.
cleanup() {
	cluster_stop
	daemon_stop
	[ -z "$own_dir" ] || rm -rf "$dir"
	rm -rf "$work"
}
daemon_stop() {
	[ -n "$daemon_pid" ] || return 0
	kill "$daemon_pid" 2> /dev/null && wait "$daemon_pid" 2> /dev/null || :
	daemon_pid=
}
daemon_start() {
	[ -n "$advisord" ] || return 0
	"$advisord" --foreground --catalog "$top/etc/catalog.yaml" --policy "$top/etc/policy.yaml" \
		--socket "$sock" --db "$work/decisions.db" > /dev/null 2>> "$work/advisord.err" &
	daemon_pid=$!
	i=0
	until "$advisorctl" --socket "$sock" status > /dev/null 2>&1; do
		i=$((i + 1))
		kill -0 "$daemon_pid" 2> /dev/null && [ $i -lt 200 ] || {
			echo "submit_bench: advisord did not start" >&2; tail -n 5 "$work/advisord.err" >&2; exit 1; }
		sleep 0.05
	done
}
# The checks the daemon decided so far (0 without one): its first accept,
# warn and reject counters (requests counts these stats calls too).
daemon_requests() {
	[ -n "$daemon_pid" ] || { echo 0; return; }
	"$advisorctl" --socket "$sock" --json stats 2> /dev/null |
		awk -F: '/"(accept|warn|reject)":/ && !seen[$1]++ { n += $2 + 0 } END { print n + 0 }'
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A GPU LLM training job advisor judges and accepts (Llama 3 70B, TP 8 x
# PP 2 x DP 2 on 4 nodes x 8 H100, ZeRO-1, full recompute, checkpoints),
# so a job_submit.lua calling advisor does its whole work for each
# submission and the job is queued, not refused.
cat > "$work/job.sbatch" << 'EOF'
#!/bin/bash
#SBATCH --gres=gpu:h100:8
#SBATCH -N 4
#SBATCH -p h100
#SBATCH --ntasks-per-node=1
export CUDA_DEVICE_MAX_CONNECTIONS=1
srun torchrun --nnodes 4 --nproc_per_node 8 pretrain_gpt.py \
	--tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 \
	--num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 \
	--num-attention-heads 64 --group-query-attention --num-query-groups 8 --swiglu \
	--seq-length 4096 --max-position-embeddings 4096 \
	--micro-batch-size 1 --global-batch-size 256 --bf16 --use-distributed-optimizer \
	--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 \
	--save /checkpoints/llama3-70b --save-interval 500 \
	--tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-70B
EOF
: > "$work/plugstack-empty.conf"

# slurmctld's CPU time so far (user + system, in clock ticks): the
# controller's own cost per job, which the rate hides when the submitters
# take most of the machine's cores (8 sbatch on 2 cores do).
hz=$(getconf CLK_TCK)
ctld_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$(cat "$dir/slurmctld.pid")/stat"
}

# start CONFIG: a fresh cluster for one configuration (without, with,
# stopped); the client slurm.conf copy has no SPANK plugin.
start() {
	case $1 in
	without) js= ;;
	*) js=$lua ;;
	esac
	cluster_up=1
	CLUSTER_DIR=$dir CLUSTER_PORT=$port CLUSTER_JOB_SUBMIT=$js ADVISOR_PLUGIN= \
		"$top/scripts/cluster" start > "$work/cluster.log" 2>&1 || {
		echo "submit_bench: cluster ($1) did not start:" >&2; tail -n 5 "$work/cluster.log" >&2; exit 1; }
	# scripts/cluster writes JobSubmitPlugins only when CLUSTER_JOB_SUBMIT is set.
	if [ -n "$js" ]; then grep -q '^JobSubmitPlugins=lua' "$conf"; else ! grep -q '^JobSubmitPlugins' "$conf"; fi ||
		{ echo "submit_bench: $conf does not match configuration $1" >&2; exit 1; }
	sed "s|^PlugStackConfig=.*|PlugStackConfig=$work/plugstack-empty.conf|" "$conf" > "$client_conf"
}

sub() { SLURM_CONF=$client_conf nice -n 10 sbatch --parsable --hold -o /dev/null -J advbench-submit "$work/job.sbatch"; }

# measure CONFIG ROUND: one round, its rate appended to $work/CONFIG.
measure() {
	start "$1"
	# Warm the controller (and the Lua state) and the page cache; the
	# warm-up job's AdminComment shows whether job_submit ran.
	sub > "$work/warm" 2>&1 || :
	sub >> "$work/warm" 2>&1 || :
	wid=$(grep -m 1 '^[0-9]' "$work/warm" || :)
	[ -z "$wid" ] ||
		SLURM_CONF=$conf scontrol show job "$wid" 2> /dev/null | sed -n 's/.*AdminComment=\(.*[^ ]\) *$/\1/p' > "$work/$1.comment"
	req0=$(daemon_requests)
	cpu0=$(ctld_ticks)
	c=0
	pids=
	t0=$(date +%s%N)
	while [ $c -lt "$clients" ]; do
		(
			i=0
			while [ $i -lt "$per" ]; do
				sub || :
				i=$((i + 1))
			done
		) > "$work/out.$c" 2> "$work/err.$c" &
		pids="$pids $!"
		c=$((c + 1))
	done
	# The submitters only: a bare wait would wait for advisord too.
	wait $pids
	t1=$(date +%s%N)
	cpu1=$(ctld_ticks)
	req1=$(daemon_requests)
	ok=$(cat "$work"/out.* | grep -c '^[0-9]' || :)
	cat "$work"/err.* >> "$work/$1.errors"
	rm -f "$work"/out.* "$work"/err.*
	rate=$(awk -v n="$ok" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", n / (ns / 1e9) }')
	echo "$rate" >> "$work/$1"
	echo "$ok" >> "$work/$1.ok"
	echo $((req1 - req0)) >> "$work/$1.checks"
	awk -v t=$((cpu1 - cpu0)) -v hz="$hz" -v n="$ok" 'BEGIN { printf "%.3f\n", (n > 0 ? t * 1000 / hz / n : 0) }' >> "$work/$1.cpu"
	printf '# round %d %-8s %4d/%d accepted in %5.2f s: %s jobs/s\n' "$2" "$1" "$ok" "$jobs" \
		"$(awk -v ns=$((t1 - t0)) 'BEGIN { print ns / 1e9 }')" "$rate" >&2
	SLURM_CONF=$conf scancel -n advbench-submit > /dev/null 2>&1 || :
}

configs="without with"
[ -z "$advisord" ] || configs="without with stopped"
t_start=$(date +%s)
echo "# submit_bench: $clients clients x $per held jobs, $rounds rounds, cluster $dir port $port" >&2
daemon_start
r=1
while [ $r -le "$rounds" ]; do
	# Alternate the order: without first in odd rounds, last in even ones.
	order=$configs
	[ $((r % 2)) -eq 1 ] || order=$(printf '%s\n' $configs | awk '{ a[NR] = $0 } END { for (i = NR; i > 0; i--) printf "%s ", a[i] }')
	for cfg in $order; do
		if [ "$cfg" = stopped ]; then
			daemon_stop
			measure "$cfg" $r
			daemon_start
		else
			measure "$cfg" $r
		fi
	done
	r=$((r + 1))
done
cluster_stop
daemon_stop
secs=$(($(date +%s) - t_start))

median() { sort -n "$1" | awk '{a[NR] = $1} END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
sum() { awk '{ s += $1 } END { print s + 0 }' "$1"; }
list() { tr '\n' ' ' < "$1" | sed 's/ $//'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "null" }'; }
wo=$(median "$work/without"); wi=$(median "$work/with")
# The rounds ran with and without back to back: the median of the rounds'
# own ratios cancels load that drifts between rounds.
paste "$work/with" "$work/without" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }' > "$work/ratios"
paired=$(median "$work/ratios" | awk '{ printf "%.3f", $1 }')
st=null; checks=null
if [ -n "$advisord" ]; then
	st=$(median "$work/stopped")
	checks=$(sum "$work/with.checks")
fi

label() {
	case $1 in
	without) echo "without job_submit" ;;
	with) echo "with $(basename "$lua")" ;;
	stopped) echo "with it, advisord stopped" ;;
	esac
}
printf '%-30s %9s  %s\n' "submissions/s, $clients clients" "median" "rounds (jobs/s; accepted of $jobs each)"
for cfg in $configs; do
	printf '%-30s %9s  %s (accepted %s)\n' "$(label $cfg)" \
		"$(median "$work/$cfg")" "$(list "$work/$cfg")" "$(list "$work/$cfg.ok")"
done
printf '%-30s %9s  %s\n' "slurmctld CPU ms per job" "median" "rounds"
for cfg in $configs; do
	printf '%-30s %9s  %s\n' "$(label $cfg)" "$(median "$work/$cfg.cpu")" "$(list "$work/$cfg.cpu")"
done
printf '%-30s %9s  paired: %s (%s)\n' "with / without" "$(ratio "$wi" "$wo")" "$paired" "$(list "$work/ratios")"
for cfg in $configs; do
	[ ! -s "$work/$cfg.comment" ] || echo "# $cfg: a warm-up job's AdminComment: $(head -n 1 "$work/$cfg.comment")"
	[ ! -s "$work/$cfg.errors" ] || echo "# $cfg: $(wc -l < "$work/$cfg.errors") sbatch errors, e.g. $(sort "$work/$cfg.errors" | uniq -c | sort -rn | head -n 1 | sed 's/^ *//')"
done
if [ -n "$advisord" ]; then
	echo "# advisord answered $checks checks during the with rounds ($(list "$work/with.checks") per round)"
	[ "$checks" -gt 0 ] || echo "# so $(basename "$lua") never asked advisord on $sock: the with figures are job_submit/lua's alone"
fi
echo "# $secs s in all"
printf '{"bench":"submit","submit_rate_without": %s, "submit_rate_with": %s, "submit_rate_ratio": %s, "submit_rate_paired_ratio": %s, "submit_rate_stopped": %s, "submit_daemon_checks": %s, "submit_ctld_cpu_ms_without": %s, "submit_ctld_cpu_ms_with": %s, "submit_jobs": %d, "submit_clients": %d, "submit_rounds": %d}\n' \
	"$wo" "$wi" "$(ratio "$wi" "$wo")" "$paired" "$st" "$checks" "$(median "$work/without.cpu")" "$(median "$work/with.cpu")" "$jobs" "$clients" "$rounds"

# A configuration that accepted no job in some round measured nothing.
for cfg in without with; do
	if grep -qx 0 "$work/$cfg.ok"; then
		echo "submit_bench: configuration '$cfg' accepted no job in a round" >&2
		exit 1
	fi
done
