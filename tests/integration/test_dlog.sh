#!/bin/sh
# The decision log (issue 4): complete after SIGTERM; after kill -9 every
# decision acknowledged before the kill is in it (issue 20: an answer waits
# for its record's commit; before, only those older than 200 ms); a crashed
# daemon's stale socket is replaced on restart.  A log from before issue 13
# and 21 gains the host and what the user saw (script, findings, sources).
. "$(dirname "$0")/lib.sh"

command -v sqlite3 > /dev/null || skip_all "the sqlite3 CLI is needed (Debian package sqlite3)"
scratch_dir
write_policy 2048

# ids_missing ACKS: acknowledged ids (third column) that are not in the log.
ids_missing() {
	awk '{print $3}' "$1" | sort > "$SCRATCH/acked"
	sqlite3 "$DB" "SELECT id FROM decisions" | sort > "$SCRATCH/logged"
	comm -23 "$SCRATCH/acked" "$SCRATCH/logged"
}

# acks FILE...: how many decisions the streams writing FILE... have had acknowledged.
acks() {
	cat "$@" 2> /dev/null | wc -l
}
# acked_over N FILE...: more than N.
acked_over() {
	_n=$1
	shift
	[ "$(acks "$@")" -gt "$_n" ]
}

# --- SIGTERM: everything queued is committed --------------------------------------
start_daemon
# The stream sends until the daemon is gone (its next connect fails).
spawn "$WIRECLIENT" "$SOCK" stream 600000 > "$SCRATCH/acks1"
sp=$!
# Stop while the stream is still sending: the last decisions are seconds old at most.
sleep 1   # not a wait: how long the stream runs before the stop (then the count it needs)
wait_until -p "$sp" -s 'echo "$(acks "$SCRATCH/acks1") acknowledged"' 10 "more than 100 decisions acknowledged" \
	acked_over 100 "$SCRATCH/acks1"
stop_daemon TERM
stop_pid "$sp" 0 10 "the stream (its daemon gone)"
[ "$DAEMON_STATUS" -eq 0 ] || fail "advisord exited $DAEMON_STATUS on SIGTERM"
n=$(wc -l < "$SCRATCH/acks1")
[ "$n" -gt 100 ] || fail "only $n decisions acknowledged before SIGTERM"
missing=$(ids_missing "$SCRATCH/acks1" | wc -l)
[ "$missing" -eq 0 ] || fail "$missing of $n acknowledged decisions missing after SIGTERM"
[ "$(sqlite3 "$DB" 'PRAGMA journal_mode')" = wal ] || fail "decision log is not in WAL mode"
row=$(sqlite3 "$DB" "SELECT context, gpu, model, verdict_name FROM decisions WHERE id = '$(head -n 1 "$SCRATCH/acks1" | awk '{print $3}')'")
case "$row" in
sbatch\|h100\|llama3-8b\|*) ;;
*) fail "logged row does not match the request: $row" ;;
esac
pass "SIGTERM: all $n acknowledged decisions are in the WAL log"

# --- kill -9: every acknowledged decision survives (issue 20) -------------------------
# Eight clients, so batches are in flight at the kill; an answer is sent
# only once its record is committed, so even the last ones are there.
start_daemon
sps=
for c in 1 2 3 4 5 6 7 8; do
	spawn "$WIRECLIENT" "$SOCK" stream 600000 > "$SCRATCH/acks2.$c"
	sps="$sps $!"
done
sleep 1.5   # not a wait: how long the load runs before the kill (then the state it needs)
# All eight sending, and more than 100 acknowledged among them.
all_streaming() {
	for c in 1 2 3 4 5 6 7 8; do [ -s "$SCRATCH/acks2.$c" ] || return 1; done
	acked_over 100 "$SCRATCH"/acks2.*
}
wait_until -s 'wc -l "$SCRATCH"/acks2.*' 10 "8 streams each acknowledged, more than 100 in all" all_streaming
kill_ms=$(date +%s%3N)
stop_daemon KILL
for p in $sps; do stop_pid "$p" 0 10 "a stream (its daemon gone)"; done
[ -S "$SOCK" ] || fail "expected a stale socket after kill -9"
cat "$SCRATCH"/acks2.* > "$SCRATCH/acks2"
n=$(wc -l < "$SCRATCH/acks2")
[ "$n" -gt 100 ] || fail "only $n decisions acknowledged before the kill"
ids_missing "$SCRATCH/acks2" > "$SCRATCH/missing"
missing=$(wc -l < "$SCRATCH/missing")
if [ "$missing" -ne 0 ]; then
	late=$(grep -Ff "$SCRATCH/missing" "$SCRATCH/acks2" | awk -v k="$kill_ms" '{print k - $2}' | sort -n | tail -n 1)
	fail "$missing of $n acknowledged decisions missing after kill -9 (the oldest acknowledged $late ms before it)"
fi
last=$(sort -k2n "$SCRATCH/acks2" | tail -n 1 | awk -v k="$kill_ms" '{d = $2 - k; print d < 0 ? -d : d}')
pass "kill -9: all $n acknowledged decisions are logged, the last one $last ms from the kill"

# --- the stale socket of the killed daemon is replaced -------------------------------
before=$(sqlite3 "$DB" "SELECT count(*) FROM decisions")
start_daemon
"$WIRECLIENT" "$SOCK" check 10 > /dev/null || fail "restarted daemon does not answer"
grep -q "stale socket" "$SCRATCH/advisord.log" || fail "no note about replacing the stale socket"
stop_daemon TERM
after=$(sqlite3 "$DB" "SELECT count(*) FROM decisions")
[ "$after" -eq $((before + 10)) ] || fail "log has $after rows, want $before + 10"
pass "restart after kill -9 replaces the stale socket and keeps the log"

# --- every record names its host (issue 13); a log from before gains the column -------
rm -f "$DB" "$DB-wal" "$DB-shm"
sqlite3 "$DB" <<'EOT' || fail "cannot write an old-style log"
CREATE TABLE decisions (id TEXT PRIMARY KEY, time INTEGER NOT NULL, uid INTEGER NOT NULL, user TEXT,
 job_id INTEGER, context TEXT, parent TEXT, gpu TEXT, gpus INTEGER, nodes INTEGER, partition TEXT,
 model TEXT, layout TEXT, workload TEXT, verdict INTEGER NOT NULL, verdict_name TEXT, codes TEXT,
 mem_gib REAL, ckpt_interval_s REAL, mode INTEGER, severities TEXT, unenforced TEXT, repeat INTEGER);
CREATE TABLE queries (id TEXT PRIMARY KEY, time INTEGER NOT NULL, uid INTEGER NOT NULL, user TEXT,
 job_id INTEGER, context TEXT, parent TEXT, gpu TEXT, gpus INTEGER, nodes INTEGER, partition TEXT,
 model TEXT, layout TEXT, workload TEXT, verdict INTEGER NOT NULL, verdict_name TEXT, codes TEXT,
 mem_gib REAL, ckpt_interval_s REAL, mode INTEGER, severities TEXT, unenforced TEXT, repeat INTEGER);
INSERT INTO decisions (id, time, uid, user, verdict, context) VALUES ('d-old', strftime('%s','now'), 0, 'root', 0, 'sbatch');
EOT
ADVISOR_HOSTNAME=node-a
export ADVISOR_HOSTNAME
start_daemon
unset ADVISOR_HOSTNAME
"$WIRECLIENT" "$SOCK" check 3 > /dev/null || fail "checks on the migrated log"
ctl check --gpu h100 --gpus 8 --model llama3-8b > /dev/null
ctl --json history --include-queries > "$SCRATCH/h" || fail "history"
stop_daemon TERM
[ "$(sqlite3 "$DB" "SELECT COUNT(*) FROM decisions WHERE host = 'node-a'")" = 3 ] || fail "decisions without their host: $(sqlite3 "$DB" 'SELECT id, host FROM decisions')"
[ "$(sqlite3 "$DB" "SELECT COUNT(*) FROM queries WHERE host = 'node-a'")" = 1 ] || fail "the query without its host"
[ "$(sqlite3 "$DB" "SELECT host IS NULL FROM decisions WHERE id = 'd-old'")" = 1 ] || fail "the old row"
command -v jq > /dev/null && { jq -e '[.decisions[] | .host] | sort == [null, "node-a", "node-a", "node-a", "node-a"]' "$SCRATCH/h" > /dev/null ||
	fail "history --json hosts: $(cat "$SCRATCH/h")"; }
pass "records carry their host (ADVISOR_HOSTNAME): a log without the column gains it, older rows show none"

# --- what the user saw (issue 21): an older log gains the columns, its rows "not recorded" --
cols() { sqlite3 "$DB" "SELECT group_concat(name, ' ') FROM pragma_table_info('$1') WHERE name IN ('script', 'findings', 'sources')"; }
[ "$(cols decisions)" = "script findings sources" ] || fail "decisions lacks the columns of issue 21: $(cols decisions)"
[ "$(cols queries)" = "script findings sources" ] || fail "queries lacks the columns of issue 21: $(cols queries)"
[ "$(sqlite3 "$DB" "SELECT findings IS NULL AND sources IS NULL AND script IS NULL FROM decisions WHERE id = 'd-old'")" = 1 ] ||
	fail "the old row gained a detail it never had"
# The new rows recorded it, empty or not: NULL is only "not recorded".
[ "$(sqlite3 "$DB" "SELECT COUNT(*) FROM decisions WHERE findings IS NOT NULL AND sources IS NOT NULL")" = 3 ] ||
	fail "new decisions without their findings: $(sqlite3 "$DB" 'SELECT id, findings IS NULL FROM decisions')"
[ "$(sqlite3 "$DB" "SELECT findings LIKE 'info	MODEL_%' OR findings LIKE '%	%' FROM queries")" = 1 ] ||
	fail "the query's findings are not tab-separated lines: $(sqlite3 "$DB" 'SELECT findings FROM queries')"
start_daemon
ctl show d-old > "$SCRATCH/old" || fail "show of the old row: $(cat "$SCRATCH/old")"
grep -q "^findings: not recorded" "$SCRATCH/old" && grep -q "^read from the job: not recorded" "$SCRATCH/old" &&
	grep -q "^script: not recorded" "$SCRATCH/old" || fail "show of an old row: $(cat "$SCRATCH/old")"
command -v jq > /dev/null && { ctl --json show d-old | jq -e '.recorded == false and .findings == null and .sources == null' > /dev/null ||
	fail "show --json of an old row: $(ctl --json show d-old)"; }
# Findings the writer left out (past 4 KiB) are counted on a last line "+N".
big=$(awk 'BEGIN { for (i = 0; i < 20; i++) printf "reject\tCODE_%d\t%0150d\t\t\\n", i, 0 }')
sqlite3 "$DB" "INSERT INTO decisions (id, time, uid, user, verdict, context, findings, sources, script) VALUES
	('d-big', strftime('%s','now'), 0, 'root', 2, 'sbatch', replace('$big', '\\n', char(10)) || '+7' || char(10), '', 'big.sbatch')" ||
	fail "cannot insert a long row"
ctl --json show d-big > "$SCRATCH/big" || fail "show d-big"
command -v jq > /dev/null && { jq -e '(.findings | length) == 20 and .findings_left_out == 7 and .recorded' "$SCRATCH/big" > /dev/null ||
	fail "show of a cut row: $(cat "$SCRATCH/big")"; }
stop_daemon TERM
pass "a log from before issue 21 gains script, findings and sources; its rows show 'not recorded'; new rows record them"
