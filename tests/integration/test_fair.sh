#!/bin/sh
# One user cannot flood the decision log or skew the rollout report (issue
# 14).  Two unprivileged users made here: A floods the daemon with a raw
# client (what-if queries and sbatch-context checks, pipelined as fast as one
# connection goes, for ADVISOR_FAIR_SECONDS, default 60); meanwhile B makes
# checks at a steady pace within its budget, runs `advisorctl check`, and,
# when a private Slurm cluster can run (root, Slurm and munge installed, no
# ADVISOR_SKIP_SLURM), submits real sbatch jobs; A submits a few too.
# Asserted:
#  - every one of B's submissions is answered and logged, one record each;
#  - B's p99 stays under FAIR_P99_MS, 10 ms (reported only under
#    ADVISOR_LAX_TIMING, or when other processes took a quarter of the
#    machine's CPU meanwhile, lib.sh's busy_others): 2 ms before issue 20, when answers did not wait
#    for the log; now each of B's answers waits for its record's commit
#    (acknowledged means durable), and beside A's flood on 2 cores that
#    measured p50 0.5-0.6 ms, p99 2.4-5.3 ms (BENCHMARKS.md);
#  - A's queries over budget get "rate limited, retry in N ms" (advisorctl: 75);
#  - A's aggregated records add up to the checks A made, in a few rows;
#  - report counts B's decisions and A's submissions, none of A's queries;
#    history shows the queries only with --include-queries;
#  - the log (policy max_mb, pre-filled with old queries past it) grows by no
#    more than max_mb, prunes queries with a warning, and keeps every decision;
#  - stats --prometheus: advisor_decision_log_bytes, advisor_rate_limited_total{user}.
. "$(dirname "$0")/lib.sh"

command -v jq > /dev/null || skip_all "jq is needed (Debian package jq)"
command -v sqlite3 > /dev/null || skip_all "the sqlite3 CLI is needed (Debian package sqlite3)"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to create the two test users"

FLOOD_S=${ADVISOR_FAIR_SECONDS:-60}
# Room for B's 1,400 checks and the jobs: a decision keeps its findings and
# sources since issue 21 (up to 6 KiB), about 1.5 MB of decisions here, and
# A's rows besides.  max_mb is a hard bound since issue 27: past the
# queries, the recent decisions of the user with the most (A) would go, so
# the bound leaves the decisions room under its 75% mark (at 4 MB, A's
# were pruned).  test_logbound.sh tests that pruning.
MAX_MB=8
USER_A=advtest-a$$
USER_B=advtest-b$$
CLUSTER_UP=

scratch_dir
write_policy 2048
# B's 25 checks a second are 1,500 rows a minute: a share above them
# (issue 27; test_logbound.sh tests the shipped share).
sed -i "s/^log: .*/log: { retention_days: 90, max_mb: $MAX_MB, user_rows_per_min: 1800 }/" "$POLICY"
echo "limits: { requests_per_s: 50, burst: 500 }" >> "$POLICY"

fair_cleanup() {
	[ -n "$CLUSTER_UP" ] && "$top_srcdir/scripts/cluster" stop > /dev/null 2>&1
	# What the cluster's daemons left (job steps of A and B), then the rest
	# (cleanup: the flood and the paced client, then the users).
	[ -n "${CLUSTER_DIR:-}" ] && end_by_path "$CLUSTER_DIR"
	[ -n "${CLUSTER_DIR:-}" ] && [ -z "${KEEP_SCRATCH:-}" ] && rm -rf "$CLUSTER_DIR"
	cleanup
}
trap fair_cleanup EXIT

make_users "$USER_A" "$USER_B"
as_a() { as_user "$USER_A" "$@"; }
as_b() { as_user "$USER_B" "$@"; }

# used_bytes: pages holding rows of the log (freed pages are reused, the file does not shrink).
used_bytes() {
	sqlite3 "$DB" "SELECT (SELECT page_count FROM pragma_page_count) -
		(SELECT freelist_count FROM pragma_freelist_count)" | awk -v p="$(sqlite3 "$DB" 'PRAGMA page_size')" '{ print $1 * p }'
}
disk_bytes() {
	echo $(( $(stat -c %s "$DB" 2> /dev/null || echo 0) + $(stat -c %s "$DB-wal" 2> /dev/null || echo 0) ))
}
metric() {
	awk -v k="$1" 'substr($0, 1, 1) != "#" && $1 == k { print $2 }' "$2"
}

# --- a private Slurm cluster, when one can run ----------------------------------------
plugin=$top_builddir/plugin/.libs/spank_advisor.so
slurm=1
[ -z "${ADVISOR_SKIP_SLURM:-}" ] || slurm=
for b in slurmctld slurmd sbatch munged; do command -v "$b" > /dev/null 2>&1 || slurm=; done
[ -f "$plugin" ] || slurm=
if [ -n "$slurm" ]; then
	CLUSTER_DIR=$(mktemp -d /tmp/advisor-fair-cluster.XXXXXX)
	chmod 755 "$CLUSTER_DIR"
	port_free() { ! ss -tanH 2>/dev/null | awk '{print $4}' | grep -Eq ":($1|$(($1 + 1))|$(($1 + 2))|$(($1 + 3))|$(($1 + 4))|$(($1 + 5))|$(($1 + 6)))\$"; }
	CLUSTER_PORT=$((24000 + ($$ % 4000) * 10))
	while ! port_free "$CLUSTER_PORT"; do CLUSTER_PORT=$((CLUSTER_PORT + 10)); done
	ADVISOR_SOCKET=$SOCK ADVISOR_PLUGIN_ARGS=timeout_ms=2000
	export CLUSTER_DIR CLUSTER_PORT ADVISOR_SOCKET ADVISOR_PLUGIN_ARGS
	export SLURM_CONF=$CLUSTER_DIR/slurm.conf
	# A and B's sbatch loads the plugin: its staged copy (lib.sh), since
	# the build tree may be out of their reach.
	plugin=$(stage "$plugin") || exit 1
	"$top_srcdir/scripts/cluster" start "$plugin" > "$SCRATCH/cluster.log" 2>&1 ||
		fail "cannot start the private cluster: $(tail -n 5 "$SCRATCH/cluster.log")"
	CLUSTER_UP=1
else
	echo "# no private Slurm cluster (not installed or ADVISOR_SKIP_SLURM): raw clients and advisorctl only"
fi

# --- the log pre-filled past max_mb with old what-if queries ---------------------------
start_daemon
stop_daemon TERM
sqlite3 "$DB" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $((MAX_MB * 3000)))
	INSERT INTO queries (id, time, uid, user, context, verdict, verdict_name, workload)
	SELECT 'q-old-' || i, strftime('%s', 'now') - 86400 + i, 0, 'root', 'advisorctl', 0,
	       'accept', hex(zeroblob(120)) FROM n;" || fail "cannot pre-fill the log"
queries_before=$(sqlite3 "$DB" "SELECT count(*) FROM queries")
used_before=$(used_bytes)
[ "$used_before" -gt $((MAX_MB * 1048576)) ] || fail "pre-filled log holds only $used_before bytes"
: > "$SCRATCH/advisord.log"
start_daemon
# The first batch after the start finds the log over its bound.
ctl check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1 > /dev/null
wait_until 5 "the warning in the daemon log that pruning started" \
	grep -q "warning: decision log .*over 85% of log max_mb $MAX_MB; pruning: " "$SCRATCH/advisord.log"
bytes_before=$(disk_bytes)
pass "log pre-filled to $used_before bytes of queries (max_mb $MAX_MB): pruning starts with a warning"

# --- A floods, B works ------------------------------------------------------------------
spawn as_user "$USER_A" "$WIRECLIENT" "$SOCK" fair $((FLOOD_S * 1000)) > "$SCRATCH/a.out" 2> "$SCRATCH/a.err"
APID=$!
# Past A's burst before B starts measuring: A is over budget all the while.
a_limited() {
	[ "$(ctl stats --prometheus | awk -v k="advisor_rate_limited_total{user=\"$USER_A\"}" '$1 == k { n = $2 } END { print n + 0 }')" -gt 0 ]
}
wait_until -p "$APID" -s 'ctl stats --prometheus | grep rate_limited' 10 "$USER_A's flood to be past its burst (rate limited)" a_limited
B_N=$(( (FLOOD_S - 4) * 25 ))
spawn as_user "$USER_B" "$WIRECLIENT" "$SOCK" paced "$B_N" 40 > "$SCRATCH/b.out" 2> "$SCRATCH/b.err"
BPID=$!
busy_mark
b_queries=0 a_limited=0 a_tries=0 a_lucky=0 b_jobs=0 a_jobs=0 round=0
good="-N1 --gres=gpu:8 --llm-model=llama3-8b --llm-layout=tp2 --llm-zero=1"
cd "$SCRATCH" || fail "cd"
while running "$BPID"; do
	round=$((round + 1))
	as_b "$ADVISORCTL" --socket "$SOCK" check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 \
		--zero 1 > "$SCRATCH/bq.out" 2>&1 || fail "advisorctl check as $USER_B during the flood: $(cat "$SCRATCH/bq.out")"
	b_queries=$((b_queries + 1))
	if [ $((round % 5)) -eq 1 ]; then
		as_a "$ADVISORCTL" --socket "$SOCK" check --gpu h100 --gpus 8 --model llama3-8b \
			--layout tp2 --zero 1 > "$SCRATCH/aq.out" 2>&1
		st=$?
		a_tries=$((a_tries + 1))
		# The bucket refills 50 tokens a second and the flood takes each
		# within a fraction of a millisecond; a check that lands in that
		# window is answered, as it should be.  Anything else must be 75.
		if [ "$st" -eq 0 ]; then
			a_lucky=$((a_lucky + 1))
		else
			[ "$st" -eq 75 ] || fail "advisorctl check as $USER_A over budget: exit $st, want 75: $(cat "$SCRATCH/aq.out")"
			grep -Eq "^advisorctl: rate limited, retry in [0-9]+ ms" "$SCRATCH/aq.out" ||
				fail "over budget, A is not told to retry: $(cat "$SCRATCH/aq.out")"
			a_limited=$((a_limited + 1))
		fi
	fi
	if [ -n "$CLUSTER_UP" ] && [ $((round % 3)) -eq 0 ]; then
		# shellcheck disable=SC2086
		as_b timeout 30 sbatch -p h100 $good -J fair-b -o /dev/null --wrap true > "$SCRATCH/bs.out" 2>&1 ||
			fail "sbatch as $USER_B during the flood: $(cat "$SCRATCH/bs.out")"
		grep -q "^Submitted batch job" "$SCRATCH/bs.out" || fail "B's job not submitted: $(cat "$SCRATCH/bs.out")"
		b_jobs=$((b_jobs + 1))
	fi
	if [ -n "$CLUSTER_UP" ] && [ $((round % 10)) -eq 5 ]; then
		# A is over budget: its real submission is still judged (a reject here proves it).
		as_a timeout 30 sbatch -p h100 -N1 --gres=gpu:8 --llm-model=llama3-405b --llm-layout=tp8 \
			-J fair-a -o /dev/null --wrap true > "$SCRATCH/as.out" 2>&1 &&
			fail "A's impossible job went through unchecked: $(cat "$SCRATCH/as.out")"
		grep -q "MEM_OVER_CAPACITY" "$SCRATCH/as.out" || fail "A's job was not judged: $(cat "$SCRATCH/as.out")"
		a_jobs=$((a_jobs + 1))
	fi
	sleep 1   # not a wait: B's advisorctl checks (and jobs) come once a second
done
wait "$BPID" || fail "B's checks failed: $(cat "$SCRATCH/b.out" "$SCRATCH/b.err")"
# The timing bounds below are reported, not asserted, under ADVISOR_LAX_TIMING
# and where other processes took a quarter of the machine's CPU or more
# meanwhile (a CPU hog on both cores: B's p99 13 ms; B alone beside the
# hog, no flood: 3.6-3.9 ms): they are for advisord, not for the CPU the
# machine left it.
busy=$(busy_others)
lax=
[ "$busy" -lt 25 ] || lax="other processes took $busy% of the machine's CPU"
[ -z "${ADVISOR_LAX_TIMING:-}" ] || lax="ADVISOR_LAX_TIMING set"
wait "$APID" || fail "A's flood client: $(cat "$SCRATCH/a.out" "$SCRATCH/a.err")"
cd / || fail "cd"
sed 's/^/# A: /' "$SCRATCH/a.out"
sed 's/^/# B: /' "$SCRATCH/b.out"
echo "# B: $b_queries advisorctl checks, $b_jobs sbatch jobs; A: $a_limited of $a_tries advisorctl checks refused, $a_jobs sbatch jobs"
# How often a check lands in the refill window depends on how fast A's flood
# takes the tokens: under ASan or valgrind (ADVISOR_LAX_TIMING), or on a busy
# machine, the flood is slower and the window wider (3 of 11 answered in one
# ASan run), so there the share is reported; every refused check was still
# checked above.
[ "$a_tries" -gt 0 ] || fail "A made no advisorctl check during the flood"
if [ $((a_lucky * 4)) -gt "$a_tries" ]; then
	[ -n "$lax" ] || fail "A's advisorctl checks over budget: only $a_limited of $a_tries refused (exit 75; other processes took $busy% of the CPU)"
	echo "# A: only $a_limited of $a_tries checks refused ($lax: not failing)"
fi

a_plugin=$(value plugin_ok "$SCRATCH/a.out")
# The flood's answered queries, and the advisorctl checks of A that found a token.
a_queries=$(( $(value query_ok "$SCRATCH/a.out") + a_lucky ))
[ "$(value plugin_sent "$SCRATCH/a.out")" = "$a_plugin" ] || fail "A's plugin checks not all answered"
[ "$(value query_limited "$SCRATCH/a.out")" -gt 0 ] || fail "none of A's queries was rate limited"
[ "$a_plugin" -gt 1000 ] || fail "A made only $a_plugin plugin checks: no flood"
pass "A: $(value rate "$SCRATCH/a.out") requests/s for $(value seconds "$SCRATCH/a.out") s; all $a_plugin plugin checks answered, $(value query_limited "$SCRATCH/a.out") queries rate limited (advisorctl exit 75)"

p99=$(value p99_ms "$SCRATCH/b.out")
[ "$(value errors "$SCRATCH/b.out")" = 0 ] || fail "B's checks failed"
FAIR_P99_MS=10
if ! awk -v p="$p99" -v b="$FAIR_P99_MS" 'BEGIN { exit !(p < b) }'; then
	[ -n "$lax" ] || fail "B's p99 is $p99 ms beside A's flood, want < $FAIR_P99_MS ms (other processes took $busy% of the CPU)"
	echo "# B's p99 $p99 ms >= $FAIR_P99_MS ms ($lax: not failing)"
fi
pass "B: $B_N checks at 25/s beside the flood, p50 $(value p50_ms "$SCRATCH/b.out") ms, p99 $p99 ms, max $(value max_ms "$SCRATCH/b.out") ms (other processes: $busy% of the CPU)"

# --- every decision in the log, A's folded ----------------------------------------------
stop_daemon TERM
[ "$DAEMON_STATUS" -eq 0 ] || fail "advisord exited $DAEMON_STATUS"
q() { sqlite3 "$DB" "$1"; }
b_logged=$(q "SELECT count(*) FROM decisions WHERE user = '$USER_B' AND context = 'sbatch'")
[ "$b_logged" -eq $((B_N + b_jobs)) ] || fail "B made $B_N checks and $b_jobs submissions, $b_logged logged"
[ "$(q "SELECT count(*) FROM decisions WHERE user = '$USER_B' AND coalesce(repeat, 1) > 1")" = 0 ] ||
	fail "B's decisions were aggregated although B stayed within budget"
a_sum=$(q "SELECT sum(coalesce(repeat, 1)) FROM decisions WHERE user = '$USER_A' AND model = 'llama3-8b'")
a_rows=$(q "SELECT count(*) FROM decisions WHERE user = '$USER_A' AND model = 'llama3-8b'")
[ "$a_sum" = "$a_plugin" ] || fail "A's records add up to $a_sum checks, A made $a_plugin"
# Within its burst (500 requests, half of them checks) each is a row; then one per 10 s window.
# Under valgrind (ADVISOR_LAX_TIMING) or on a busy machine A is slow enough
# to find tokens more often, each a row of its own: reported, not failed.
if [ "$a_rows" -gt $((250 + FLOOD_S / 10 + 5)) ]; then
	[ -n "$lax" ] || fail "A's $a_plugin checks took $a_rows rows (other processes took $busy% of the CPU)"
	echo "# A's $a_plugin checks took $a_rows rows ($lax: not failing)"
fi
a_real=$(q "SELECT coalesce(sum(coalesce(repeat, 1)), 0) FROM decisions WHERE user = '$USER_A' AND model = 'llama3-405b' AND context = 'sbatch'")
[ "$a_real" -eq "$a_jobs" ] || fail "A submitted $a_jobs jobs, $a_real logged"
# Queries go to their own table; max_mb prunes the oldest of them, never a decision.
a_q=$(q "SELECT count(*) FROM queries WHERE user = '$USER_A'")
b_q=$(q "SELECT count(*) FROM queries WHERE user = '$USER_B'")
[ "$a_q" -gt 0 ] && [ "$a_q" -le "$a_queries" ] || fail "$a_q of A's $a_queries answered queries in the queries table"
[ "$b_q" -gt 0 ] && [ "$b_q" -le "$b_queries" ] || fail "$b_q of B's $b_queries queries in the queries table"
pass "log: B's $B_N checks and $b_jobs jobs one row each; A's $a_plugin checks in $a_rows rows adding up to $a_sum; A's $a_jobs jobs logged"

# --- the bound ------------------------------------------------------------------------------
bytes_after=$(disk_bytes)
used_after=$(used_bytes)
echo "# log on disk: $bytes_before bytes before the flood, $bytes_after after; in use $used_before before pruning, $used_after now; queries $queries_before -> $(q 'SELECT count(*) FROM queries')"
[ $((bytes_after - bytes_before)) -le $((MAX_MB * 1048576)) ] ||
	fail "the log grew by $((bytes_after - bytes_before)) bytes, more than max_mb $MAX_MB"
[ "$used_after" -le $((MAX_MB * 1048576)) ] || fail "$used_after bytes in use, over max_mb $MAX_MB"
[ "$(q "SELECT count(*) FROM queries WHERE id LIKE 'q-old-%'")" -lt "$queries_before" ] ||
	fail "no old query was pruned"
pass "log bounded: grew $((bytes_after - bytes_before)) bytes (max_mb $MAX_MB), $used_after in use; old queries pruned, no decision"

# --- what history, report and stats say ----------------------------------------------------
start_daemon
ctl --json report --user "$USER_A" > "$SCRATCH/ra.json" || fail "report --user A"
jq -e --argjson n $((a_plugin + a_real)) '.decisions == $n' "$SCRATCH/ra.json" > /dev/null ||
	fail "report for A: $(jq -c '{decisions, users}' "$SCRATCH/ra.json"), want $((a_plugin + a_real)) (its checks and jobs, no queries)"
ctl --json report --user "$USER_B" > "$SCRATCH/rb.json" || fail "report --user B"
b_all=$(q "SELECT count(*) FROM decisions WHERE user = '$USER_B'")
jq -e --argjson n "$b_all" '.decisions == $n' "$SCRATCH/rb.json" > /dev/null ||
	fail "report for B: $(jq -c '{decisions}' "$SCRATCH/rb.json"), want $b_all"
ctl --json report > "$SCRATCH/r.json" || fail "report"
total=$(q "SELECT sum(coalesce(repeat, 1)) FROM decisions")
jq -e --argjson n "$total" '.decisions == $n' "$SCRATCH/r.json" > /dev/null ||
	fail "report: $(jq -c '{decisions, users}' "$SCRATCH/r.json"), want $total"
expect_status 0 "history as A" as_a "$ADVISORCTL" --socket "$SOCK" --json history --limit 5000
jq -e 'all(.decisions[]; .query == false and .context != "advisorctl")' "$SCRATCH/out" > /dev/null ||
	fail "history shows queries without --include-queries"
jq -e '[.decisions[] | select(.repeat > 1)] | length > 0' "$SCRATCH/out" > /dev/null ||
	fail "history shows no aggregated record of A"
expect_status 0 "history --include-queries" ctl --json history --include-queries --user "$USER_A" --limit 5000
jq -e '[.decisions[] | select(.query)] | length > 0 and all(.[]; .context == "advisorctl")' \
	"$SCRATCH/out" > /dev/null || fail "history --include-queries shows none of A's queries"
pass "report: A's $((a_plugin + a_real)) decisions (checks and jobs, no queries), B's $b_all, $total in all; history --include-queries shows queries"

ctl stats --prometheus > "$SCRATCH/prom" || fail "stats --prometheus"
lb=$(metric advisor_decision_log_bytes "$SCRATCH/prom")
[ "$lb" = "$(disk_bytes)" ] || [ "$lb" -gt 0 ] || fail "advisor_decision_log_bytes is '$lb'"
pass "stats --prometheus: advisor_decision_log_bytes $lb"
stop_daemon TERM
# The counter lives as long as the daemon: a fresh one over budget shows it.
start_daemon
# A flood of 1.5 s, and on until A is over budget: under valgrind on a busy
# machine 1.5 s made fewer requests than the burst (484 of 500), none
# limited, and no counter to read.
WIRECLIENT_STOP=$SCRATCH/stop.a2 spawn as_user "$USER_A" "$WIRECLIENT" "$SOCK" fair 600000 > "$SCRATCH/a2.out" 2>&1
a2=$!
sleep 1.5   # not a wait: the flood's length (then the state it needs)
wait_until -p "$a2" -s 'ctl stats --prometheus | grep rate_limited' 30 "$USER_A's second flood to be rate limited" a_limited
touch "$SCRATCH/stop.a2"
stop_pid "$a2" 0 30 "the second flood to end"
[ "$STOP_STATUS" -eq 0 ] || fail "second flood: $(cat "$SCRATCH/a2.out")"
ctl stats --prometheus > "$SCRATCH/prom"
n=$(metric "advisor_rate_limited_total{user=\"$USER_A\"}" "$SCRATCH/prom")
want=$(( $(value requests "$SCRATCH/a2.out") - 500 ))
# Less what the bucket refilled while the flood ran, 50 tokens a second
# (and 25 to spare): the 100 of a 1.5 s flood, more for a longer one.
refill=$(awk -v s="$(value seconds "$SCRATCH/a2.out")" 'BEGIN { printf "%d\n", 50 * s + 25 }')
[ -n "$n" ] && [ "$n" -ge $((want - refill)) ] && [ "$n" -le "$want" ] ||
	fail "advisor_rate_limited_total{user=\"$USER_A\"} is '$n', want $((want - refill))..$want ($(value requests "$SCRATCH/a2.out") requests in $(value seconds "$SCRATCH/a2.out") s, burst 500, 50/s)"
[ -z "$(metric "advisor_rate_limited_total{user=\"$USER_B\"}" "$SCRATCH/prom")" ] || fail "B counted as rate limited"
pass "stats --prometheus: advisor_rate_limited_total{user=\"$USER_A\"} $n"
stop_daemon TERM
