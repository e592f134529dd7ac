#!/bin/sh
# One user cannot grow the decision log past its bound or drown others'
# decisions (issue 27).  The probe that found the hole sent, as one
# unprivileged user, thousands of plugin checks each naming a partition of
# its own: rate-limited, yet each made a row, and the log reached four
# times max_mb.  Replayed here with wireclient's flood mode (one
# connection, pipelined, as fast as the daemon answers):
#  1. max_mb 5, the shipped user_rows_per_min (120): the log stays within
#     max_mb, the flooder's rows stay within its share and the overflow
#     rows (one per verdict per 10 s), and the rows' repeat counts plus the
#     shed count add up to every answered check;
#  2. the log on a small file system (tmpfs, 32 MiB) with reserve_mb 24
#     and no max_mb: while the flood runs, another user's 110 submissions
#     (paced over 10 s, within their share) are logged, at least 99% of
#     them (all, in practice), and the flooder's are shed
#     (advisor_decision_log_shed_total);
#  3. what one user can cost: rows and bytes a minute of flooding,
#     extrapolated to an hour (printed; README's "The decision log").
. "$(dirname "$0")/lib.sh"

command -v sqlite3 > /dev/null || skip_all "the sqlite3 CLI is needed (Debian package sqlite3)"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to create the test users and mount a tmpfs"

FLOOD_MS=${ADVISOR_LOGBOUND_MS:-20000}
USER_A=advtest-fa$$
USER_B=advtest-fb$$
SMALL=

scratch_dir
lb_cleanup() {
	[ -n "$DAEMON_PID" ] && stop_daemon KILL
	[ -n "$SMALL" ] && umount "$SMALL" 2> /dev/null
	remove_users
	cleanup
}
trap lb_cleanup EXIT
make_users "$USER_A" "$USER_B"
q() { sqlite3 "$DB" "$1"; }

# --- 1. max_mb is a hard bound -----------------------------------------------------------
write_policy 2048
sed -i "s/^log: .*/log: { retention_days: 90, max_mb: 5 }/" "$POLICY"
start_daemon
as_user "$USER_A" "$WIRECLIENT" "$SOCK" flood "$FLOOD_MS" > "$SCRATCH/flood.out" ||
	fail "the flood was not answered: $(cat "$SCRATCH/flood.out")"
sent=$(value plugin_sent "$SCRATCH/flood.out")
ok=$(value plugin_ok "$SCRATCH/flood.out")
secs=$(value seconds "$SCRATCH/flood.out")
[ "$ok" = "$sent" ] || fail "$ok of $sent checks answered"
shed=$(ctl --json stats | jq '.log_shed')
stop_daemon TERM
rows=$(q "SELECT count(*) FROM decisions WHERE user = '$USER_A'")
sum=$(q "SELECT coalesce(sum(coalesce(repeat, 1)), 0) FROM decisions WHERE user = '$USER_A'")
bytes=$(( $(stat -c %s "$DB") + $(stat -c %s "$DB-wal" 2> /dev/null || echo 0) ))
minutes=$(awk -v s="$secs" 'BEGIN { print int(s / 60) + 1 }')
# The share each minute the flood touched, the overflow rows (3 verdicts a 10 s window).
bound=$(( (minutes + 1) * (120 + 3 * 6) ))
echo "# $sent checks in $secs s: $rows rows (bound $bound), repeats add up to $sum, $shed shed; log $bytes bytes"
[ "$((sum + shed))" -eq "$sent" ] || fail "rows stand for $sum checks and $shed were shed, of $sent"
[ "$rows" -le "$bound" ] || fail "the flood made $rows rows, more than its share ($bound)"
[ "$bytes" -le $((5 * 1048576)) ] || fail "the log is $bytes bytes, over max_mb 5"
row_bytes=$(q "SELECT avg(length(findings) + length(sources) + length(workload) + 200) FROM decisions WHERE user = '$USER_A'" | cut -d. -f1)
# An hour of flooding: the share and the overflow rows every minute, at
# these rows' size and at the 4 KiB of a decision with its findings.
per_hour_mb=$(awk -v b="$row_bytes" 'BEGIN { printf "%.1f", (120 + 18) * 60 * b / 1048576 }')
per_hour_4k=$(awk 'BEGIN { printf "%.1f", (120 + 18) * 60 * 4096 / 1048576 }')
pass "flood: $sent checks of distinct partitions in $secs s made $rows rows ($row_bytes bytes each); log $bytes bytes within max_mb 5; an hour of it: at most 8280 rows, $per_hour_mb MiB ($per_hour_4k MiB at 4 KiB a row)"

# --- 1b. recent decisions past max_mb: the largest contributor's go first ---------------
# Before issue 27 the last retention_days of decisions were never pruned for
# size, and the log stayed past its bound.  A log of 8 MiB of this week's
# decisions, most of them one user's: the next check prunes that user's
# oldest down to 75% of max_mb, and keeps every row of the others.
now=$(date +%s)
q "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1800)
   INSERT INTO decisions (id, time, uid, user, context, verdict, verdict_name, findings, sources)
   SELECT 'd-bulk-' || i, $now - 86400 + i, 4242, 'bulk', 'sbatch', 0, 'accept',
          hex(randomblob(2048)), '' FROM n;
   WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
   INSERT INTO decisions (id, time, uid, user, context, verdict, verdict_name, findings, sources)
   SELECT 'd-keep-' || i, $now - 86400 - 1000 + i, 4243, 'keep', 'sbatch', 0, 'accept',
          hex(randomblob(2048)), '' FROM n;"
start_daemon
ctl check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1 > /dev/null 2>&1 || :
as_user "$USER_B" "$WIRECLIENT" "$SOCK" paced 5 10 > /dev/null || fail "a check after the fill"
wait_until 10 "the log to be pruned under max_mb" grep -q "recent decisions (bulk's first)" "$SCRATCH/advisord.log"
stop_daemon TERM
used=$(sqlite3 "$DB" "SELECT (SELECT page_count FROM pragma_page_count) - (SELECT freelist_count FROM pragma_freelist_count)" |
	awk -v p="$(sqlite3 "$DB" 'PRAGMA page_size')" '{ print $1 * p }')
bulk=$(q "SELECT count(*) FROM decisions WHERE user = 'bulk'")
keep=$(q "SELECT count(*) FROM decisions WHERE user = 'keep'")
[ "$used" -le $((5 * 1048576)) ] || fail "$used bytes in use after pruning, over max_mb 5"
[ "$keep" = 50 ] || fail "$keep of the other user's 50 recent decisions left"
[ "$bulk" -lt 1800 ] || fail "none of the largest contributor's decisions pruned"
[ "$(q "SELECT min(time) FROM decisions WHERE user = 'bulk'")" -gt $((now - 86400 + 1)) ] ||
	fail "the largest contributor's newest went before its oldest"
pass "max_mb 5 over recent decisions: $used bytes in use after pruning the largest contributor's oldest ($bulk of 1800 left), the other user's 50 kept"

# --- 2. the disk reserve: another user's decisions are still logged ----------------------
SMALL=$SCRATCH/small
mkdir -p "$SMALL"
mount -t tmpfs -o size=32m,mode=0755 tmpfs "$SMALL" || { SMALL=; skip_all "cannot mount a tmpfs"; }
DB=$SMALL/decisions.db
write_policy 2048
sed -i "s/^log: .*/log: { retention_days: 90, max_mb: 0, reserve_mb: 24 }/" "$POLICY"
start_daemon
# Fill the file system to under the reserve, as a long flood would have:
# from the first batch on the daemon is short of space (whatever the
# speed of the build: valgrind, TSan).
dd if=/dev/zero of="$SMALL/filler" bs=1M count=12 2> /dev/null
as_user "$USER_A" "$WIRECLIENT" "$SOCK" flood "$FLOOD_MS" > "$SCRATCH/flood2.out" &
flood=$!
as_user "$USER_B" "$WIRECLIENT" "$SOCK" paced 110 90 > "$SCRATCH/b.out" || fail "B's checks: $(cat "$SCRATCH/b.out")"
wait "$flood" || fail "the second flood was not answered: $(cat "$SCRATCH/flood2.out")"
shed=$(ctl --json stats | jq '.log_shed')
ctl stats --prometheus > "$SCRATCH/prom" 2>&1 || :
stop_daemon TERM
b=$(q "SELECT count(*) FROM decisions WHERE user = '$USER_B'")
a=$(q "SELECT count(*) FROM decisions WHERE user = '$USER_A'")
free=$(df -k --output=avail "$SMALL" | tail -n 1)
echo "# B: $b of 110 logged; A: $a rows of $(value plugin_sent "$SCRATCH/flood2.out") checks, $shed shed; ${free} KiB free"
[ "$b" -ge 109 ] || fail "only $b of B's 110 decisions were logged beside the flood"
[ "$shed" -gt 0 ] || fail "no check of the flooder was shed under the reserve"
grep -q "^advisor_decision_log_shed_total $shed" "$SCRATCH/prom" ||
	fail "advisor_decision_log_shed_total: $(grep shed "$SCRATCH/prom")"
grep -q "free space is under the reserve" "$SCRATCH/advisord.log" ||
	fail "the daemon did not say the reserve was reached: $(tail -n 5 "$SCRATCH/advisord.log")"
pass "reserve: B's $b of 110 decisions logged beside the flood; $shed of the flooder's checks answered and shed"
