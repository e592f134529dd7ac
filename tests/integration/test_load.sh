#!/bin/sh
# advisord under load (issue 7), loopback only, bounded in count:
#  - 64 concurrent clients x 200 checks while `advisorctl reload` runs again
#    and again with two valid policies that answer the same request
#    differently and a broken one: every request is answered, and every
#    answer is exactly the answer of one of the two valid policies;
#  - 1,000 idle connections, 50 half frames and a client that reads its
#    answers one byte a second: other clients' p99 stays under LOAD_P99_MS,
#    20 ms (10 ms before issue 20: each answer now waits for its record's
#    commit, and the commit that checkpoints SQLite's WAL waits for two
#    fsyncs, though a checkpoint after the answers did not lower the bench
#    p99; measured 1.5-13.4 ms on 2 quiet cores, BENCHMARKS.md).
#
# The bound is a wall-time assertion; on a busy 2-core CI box a
# single measurement can catch a scheduler hiccup, so it is measured up to
# three times and must hold once (a daemon that stalls behind hostile
# clients fails all three).  ADVISOR_LAX_TIMING=1 only prints it.
. "$(dirname "$0")/lib.sh"
LOAD_P99_MS=20

scratch_dir
write_policy 2048
cp "$POLICY" "$SCRATCH/policy.a"
# Policy B answers the load request differently in four ways: no
# POLICY_MAX_GPUS (8192 > 4096), warn instead of enforce, 10 GiB reserve.
sed -e 's/reserve_gib: 3/reserve_gib: 10/' -e 's/max_gpus: 2048/max_gpus: 8192/' \
	-e 's/h100: { gpu: h100-sxm, gpus_per_node: 8, mode: enforce/h100: { gpu: h100-sxm, gpus_per_node: 8, mode: warn/' \
	"$SCRATCH/policy.a" > "$SCRATCH/policy.b"
cmp -s "$SCRATCH/policy.a" "$SCRATCH/policy.b" && fail "policy B is not different from A"
# Broken halfway through: a loader that kept what it read so far would
# serve a policy with A's mode and no partitions.
head -n 3 "$SCRATCH/policy.a" > "$SCRATCH/policy.broken"
printf 'checkpoint: { gpu_mtbf_hours: [\npartitions: {}\n' >> "$SCRATCH/policy.broken"

# use_policy NAME: replaces the policy file atomically.
use_policy() {
	cp "$SCRATCH/policy.$1" "$SCRATCH/policy.tmp" && mv "$SCRATCH/policy.tmp" "$POLICY"
}

# --- reload under load -----------------------------------------------------------
start_daemon
sig_a=$("$WIRECLIENT" "$SOCK" sig) || fail "signature under policy A"
use_policy b
expect_status 0 "reload to policy B" ctl reload
sig_b=$("$WIRECLIENT" "$SOCK" sig) || fail "signature under policy B"
[ "$sig_a" != "$sig_b" ] || fail "policies A and B give the same answer: $sig_a"
use_policy broken
expect_status 65 "reload of the broken policy" ctl reload
[ "$("$WIRECLIENT" "$SOCK" sig)" = "$sig_b" ] || fail "a failed reload changed the answer"
echo "# A: $sig_a"
echo "# B: $sig_b"

# Reloads in a loop until the load is done: A, broken, B, broken, ...
reloader() {
	n=0
	while [ ! -e "$SCRATCH/load.done" ] && [ $n -lt 2000 ]; do
		for p in a broken b broken; do
			use_policy $p
			ctl reload > /dev/null 2>&1
			rc=$?
			want=0; [ $p = broken ] && want=65
			[ $rc -eq $want ] || echo "reload of $p: exit $rc, want $want" >> "$SCRATCH/reload.errors"
			n=$((n + 1))
		done
	done
	echo $n > "$SCRATCH/reload.count"
}
spawn reloader
rpid=$!
"$WIRECLIENT" "$SOCK" load 64 200 > "$SCRATCH/load" 2>&1
lrc=$?
touch "$SCRATCH/load.done"
stop_pid "$rpid" 0 30 "the reload loop to see load.done"
cat "$SCRATCH/load" | sed 's/^/# /'
[ $lrc -eq 0 ] || fail "load client failed (exit $lrc)"
[ ! -s "$SCRATCH/reload.errors" ] || fail "reloads: $(head -n 5 "$SCRATCH/reload.errors")"
reloads=$(cat "$SCRATCH/reload.count")
[ "$reloads" -ge 4 ] || fail "only $reloads reloads ran during the load"
[ "$(value answered "$SCRATCH/load")" = 12800 ] || fail "answered $(value answered "$SCRATCH/load") of 12800"
[ "$(value lost "$SCRATCH/load")" = 0 ] || fail "$(value lost "$SCRATCH/load") requests lost"
seen_a=0; seen_b=0
while read -r tag count sig; do
	[ "$tag" = sig ] || continue
	if [ "$sig" = "$sig_a" ]; then seen_a=$count
	elif [ "$sig" = "$sig_b" ]; then seen_b=$count
	else fail "$count answers match neither policy: $sig"
	fi
done < "$SCRATCH/load"
[ $((seen_a + seen_b)) -eq 12800 ] || fail "A $seen_a + B $seen_b answers, want 12800"
[ $seen_a -gt 0 ] && [ $seen_b -gt 0 ] || fail "reloads did not switch the answers (A $seen_a, B $seen_b)"
ctl --json stats > "$SCRATCH/stats" || fail "stats after the load"
jq -e '.reloads > 4' "$SCRATCH/stats" > /dev/null || fail "stats: $(cat "$SCRATCH/stats")"
pass "64 clients x 200 checks during $reloads reloads (valid A, broken, valid B): all answered, $seen_a as A, $seen_b as B, none otherwise"
stop_daemon TERM
[ "$DAEMON_STATUS" -eq 0 ] || fail "advisord exited $DAEMON_STATUS after the load"

# --- slow and hostile clients ----------------------------------------------------------
use_policy a
# Idle connections stay for the whole test (60 s idle timeout); half frames
# and the slow reader hit the 3 s read timeout.
start_daemon --idle-timeout 60000 --read-timeout 3000
spawn "$WIRECLIENT" "$SOCK" hold 1000 9000 idle > "$SCRATCH/idle" 2>&1; ipid=$!
spawn "$WIRECLIENT" "$SOCK" hold 50 9000 half > "$SCRATCH/half" 2>&1; hpid=$!
# Under valgrind (ADVISOR_LAX_TIMING) the daemon answers the reader's checks
# beside the other clients' for several seconds before its output stalls,
# and each turn starts the read timeout again: watch for longer there.
slow_s=8
[ -n "${ADVISOR_LAX_TIMING:-}" ] && slow_s=30
spawn "$WIRECLIENT" "$SOCK" slowread 2000 $slow_s > "$SCRATCH/slow" 2>&1; spid=$!
# All in place: the connections open, the half frames sent, the reader's
# checks pipelined (it stops sending once the daemon stops reading them).
hostile_ready() { grep -q opened "$SCRATCH/idle" && grep -q opened "$SCRATCH/half" && grep -q pipelined "$SCRATCH/slow"; }
wait_until -s 'cat "$SCRATCH/idle" "$SCRATCH/half" "$SCRATCH/slow"' 10 \
	"1000 idle and 50 half-frame connections open and the slow reader's checks pipelined" hostile_ready
[ "$(value opened "$SCRATCH/idle")" = 1000 ] || fail "only $(value opened "$SCRATCH/idle") of 1000 idle connections opened"
best=
for attempt in 1 2 3; do
	"$WIRECLIENT" "$SOCK" latency 4 250 > "$SCRATCH/lat" || fail "checks beside hostile clients: $(cat "$SCRATCH/lat")"
	p99=$(value p99_ms "$SCRATCH/lat")
	max=$(value max_ms "$SCRATCH/lat")
	echo "# attempt $attempt: p50 $(value p50_ms "$SCRATCH/lat") ms, p99 $p99 ms, max $max ms (1000 checks)"
	# Under valgrind every answer is slow; there the bound is reported only.
	awk -v m="$max" 'BEGIN { exit !(m < 1000) }' || [ -n "${ADVISOR_LAX_TIMING:-}" ] ||
		fail "a check waited $max ms: stuck behind a hostile client"
	best=$p99
	awk -v p="$p99" -v b="$LOAD_P99_MS" 'BEGIN { exit !(p < b) }' && break
done
if ! awk -v p="$best" -v b="$LOAD_P99_MS" 'BEGIN { exit !(p < b) }'; then
	[ -n "${ADVISOR_LAX_TIMING:-}" ] || fail "p99 $best ms beside hostile clients, want < $LOAD_P99_MS ms"
	echo "# p99 $best ms >= $LOAD_P99_MS ms (ADVISOR_LAX_TIMING set: not failing)"
fi
for p in $ipid $hpid; do stop_pid "$p" 0 30 "the held connections (9 s) to end"; done
stop_pid "$spid" 0 $((slow_s + 10)) "the slow reader ($slow_s s) to end"
sed 's/^/# idle: /' "$SCRATCH/idle"; sed 's/^/# half: /' "$SCRATCH/half"; sed 's/^/# slow: /' "$SCRATCH/slow"
[ "$(value open_at_end "$SCRATCH/idle")" = 1000 ] || fail "idle connections were dropped: $(cat "$SCRATCH/idle")"
[ "$(value closed "$SCRATCH/half")" = 50 ] || fail "half frames not all closed: $(cat "$SCRATCH/half")"
fc=$(value first_close_ms "$SCRATCH/half")
[ "$fc" -ge 2900 ] || fail "a half frame was closed after $fc ms, before the 3 s read timeout"
[ "$(value closed "$SCRATCH/slow")" = 1 ] || fail "the slow reader was not cut off: $(cat "$SCRATCH/slow")"
sc=$(value closed_after_ms "$SCRATCH/slow")
# Under valgrind (ADVISOR_LAX_TIMING) the daemon needs seconds just to
# answer the reader's 2,000 checks before its output stalls: report, not fail.
if [ "$sc" -ge 7000 ]; then
	[ -n "${ADVISOR_LAX_TIMING:-}" ] || fail "the slow reader was cut off after $sc ms, want about the 3 s read timeout"
	echo "# slow reader cut off after $sc ms (ADVISOR_LAX_TIMING set: not failing)"
fi
grep -q "Too many open files" "$SCRATCH/advisord.log" && fail "advisord ran out of file descriptors"
running "$DAEMON_PID" || fail "advisord died"
"$WIRECLIENT" "$SOCK" check 20 > /dev/null || fail "checks after the hostile clients"
pass "1000 idle + 50 half-frame connections + a 1 byte/s reader: p99 $best ms for others; idle ones kept, half frames and the slow reader cut at the 3 s read timeout"

# --- scripts read side by side -----------------------------------------------------
# Every worker reads #SBATCH words with getopt_long, whose state is the
# process's: two at once crashed advisord in _getopt_internal_r (16 clients
# shipping a script whose srun line the reader parses; found by
# tests/bench/run).  16 clients for 2 s: no error, the daemon alive.
cat > "$SCRATCH/het.sbatch" <<'EOT'
#!/bin/bash
#SBATCH -N 4
#SBATCH --gres=gpu:h100:8
ARGS=(--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --num-layers 80
  --hidden-size 8192 --num-attention-heads 64 --num-query-groups 8 --swiglu
  --seq-length 8192 --micro-batch-size 1 --global-batch-size 512 --bf16)
srun -N 4 --ntasks-per-node=1 torchrun --nnodes 4 --nproc_per_node 8 pretrain_gpt.py "${ARGS[@]}"
EOT
"$top_builddir/tests/bench/advisor-bench-daemon" --socket "$SOCK" --clients 16 --seconds 2 --rate 0 \
	--script "$SCRATCH/het.sbatch" > "$SCRATCH/scripts.out" 2>&1 ||
	fail "advisor-bench-daemon --script: $(cat "$SCRATCH/scripts.out")"
running "$DAEMON_PID" || fail "advisord died reading scripts side by side: $(tail -n 20 "$SCRATCH/advisord.log")"
sc_checks=$(awk '$1 == "max" && $3 == 16 { print $7 }' "$SCRATCH/scripts.out")
sc_errors=$(awk '$1 == "max" && $3 == 16 { print $8 }' "$SCRATCH/scripts.out")
[ "${sc_checks:-0}" -gt 0 ] && [ "${sc_errors:-1}" -eq 0 ] ||
	fail "16 clients shipping scripts: $sc_checks checks, $sc_errors errors"
pass "16 clients shipping a script with srun lines for 2 s: $sc_checks checks, no error, advisord alive"
stop_daemon TERM
[ "$DAEMON_STATUS" -eq 0 ] || fail "advisord exited $DAEMON_STATUS"
