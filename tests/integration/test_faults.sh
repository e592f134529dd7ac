#!/bin/sh
# advisord under faults (issue 7), loopback only, bounded in time:
#  - killed with SIGKILL, hung with SIGSTOP and restarted while plugin-style
#    calls (wire_client_check with timeout_ms) keep coming: every call in the
#    gap fails within timeout_ms (where the plugin applies on_unavailable),
#    every decision acknowledged more than 200 ms before the kill is in the
#    log, and the log passes PRAGMA integrity_check;
#  - disk full and a read-only log directory: decisions are still answered,
#    the failure is logged once (at most once a minute), and logging resumes
#    once the cause is gone;
#  - an unprivileged test user (advtest-fPID, created and removed here):
#    reload and other users' history refused, own history allowed; an admin
#    group in the policy grants reload.
# The disk and user parts need root (mount, useradd); they are skipped otherwise.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 > /dev/null || skip_all "the sqlite3 CLI is needed (Debian package sqlite3)"
command -v jq > /dev/null || skip_all "jq is needed (Debian package jq)"
scratch_dir
write_policy 2048

TEST_USER=advtest-f$$
MOUNTS=
faults_cleanup() {
	# The daemon first (a stopped one too): its log holds the mounts busy.
	end_spawned
	for m in $MOUNTS; do umount "$m" 2>/dev/null; done
	cleanup
}
trap faults_cleanup EXIT

# ids_missing ACKS DB: acknowledged ids (third column) not in the log.
ids_missing() {
	awk '$1 == "ack" {print $3}' "$1" | sort > "$SCRATCH/acked"
	sqlite3 "$2" "SELECT id FROM decisions" | sort > "$SCRATCH/logged"
	comm -23 "$SCRATCH/acked" "$SCRATCH/logged"
}

# log_errors: how many times the daemon reported a failing decision log.
log_errors() {
	count "error: decision log .*still answered" "$SCRATCH/advisord.log"
}

# acks_where AWK_COND FILE: how many "ack <unix ms> <id>" lines of FILE meet
# AWK_COND (on $2, the time of the answer; now is the current unix ms).
acks_where() {
	awk -v now="$(date +%s%3N)" "\$1 == \"ack\" && ($1) { n++ } END { print n + 0 }" "$2"
}
# more_acks N AWK_COND FILE: more than N such lines.
more_acks() {
	[ "$(acks_where "$2" "$3")" -gt "$1" ]
}
# stop_plugin PID NAME: ends a plugin client spawned with WIRECLIENT_STOP=$SCRATCH/stop.NAME.
stop_plugin() {
	touch "$SCRATCH/stop.$2"
	stop_pid "$1" 0 30 "the plugin client ($2) to stop"
}

# --- SIGKILL, SIGSTOP and restart under plugin calls ------------------------------
TIMEOUT_MS=300
SLACK_MS=250
start_daemon
# The calls go on until the scenario is over (WIRECLIENT_STOP), however
# long a restart takes here.
WIRECLIENT_STOP=$SCRATCH/stop.gap spawn "$WIRECLIENT" "$SOCK" plugin $TIMEOUT_MS 600000 > "$SCRATCH/plugin" 2>&1
ppid=$!
sleep 1.5   # not a wait: how long the calls run before the kill
wait_until -p "$ppid" -s 'echo "$(acks_where "\$2 < now - 200" "$SCRATCH/plugin") of $(acks_where 1 "$SCRATCH/plugin")"' \
	10 "more than 50 decisions acknowledged more than 200 ms ago" more_acks 50 '$2 < now - 200' "$SCRATCH/plugin"
kill_ms=$(date +%s%3N)
stop_daemon KILL
sleep 1   # not a wait: the daemon stays dead 1 s while the calls go on
start_daemon
restart_ms=$(date +%s%3N)
wait_until -p "$ppid" -s 'tail -n 3 "$SCRATCH/plugin"' 10 "a call answered after the restart" \
	more_acks 0 "\$2 > $restart_ms" "$SCRATCH/plugin"
# Hung, not dead: connects succeed (the backlog), answers never come.
kill -STOP "$DAEMON_PID"
stop_ms=$(date +%s%3N)
sleep 1.2   # not a wait: how long the daemon hangs
timed_out() { awk -v s="$stop_ms" '$1 == "unavail" && $2 > s && / timed out/ { f = 1 } END { exit !f }' "$SCRATCH/plugin"; }
wait_until -p "$ppid" -s 'tail -n 3 "$SCRATCH/plugin"' 10 "a call to time out while the daemon is stopped" timed_out
kill -CONT "$DAEMON_PID"
cont_ms=$(date +%s%3N)
wait_until -p "$ppid" -s 'tail -n 3 "$SCRATCH/plugin"' 10 "a call answered after SIGCONT" \
	more_acks 0 "\$2 > $cont_ms" "$SCRATCH/plugin"
stop_plugin "$ppid" gap
grep -v '^ack\|^unavail' "$SCRATCH/plugin" | sed 's/^/# /'
n_unavail=$(value unavailable "$SCRATCH/plugin")
[ "$n_unavail" -gt 0 ] || fail "no call fell in the gap"
grep -q "^unavail .* timed out" "$SCRATCH/plugin" || fail "no call timed out while the daemon was stopped"
worst=$(value max_unavailable_ms "$SCRATCH/plugin")
awk -v w="$worst" -v t=$TIMEOUT_MS -v s=$SLACK_MS 'BEGIN { exit !(w <= t + s) }' ||
	fail "a call in the gap took $worst ms, want <= timeout_ms $TIMEOUT_MS + $SLACK_MS ms"
after=$(awk -v r="$restart_ms" '$1 == "ack" && $2 > r' "$SCRATCH/plugin" | wc -l)
[ "$after" -gt 0 ] || fail "no call answered after the restart"
awk -v k="$kill_ms" '$1 == "ack" && $2 < k - 200' "$SCRATCH/plugin" > "$SCRATCH/old"
n_old=$(wc -l < "$SCRATCH/old")
[ "$n_old" -gt 50 ] || fail "only $n_old decisions acknowledged more than 200 ms before the kill"
stop_daemon TERM
[ "$DAEMON_STATUS" -eq 0 ] || fail "restarted advisord exited $DAEMON_STATUS"
missing=$(ids_missing "$SCRATCH/old" "$DB" | wc -l)
[ "$missing" -eq 0 ] || fail "$missing of $n_old decisions acknowledged > 200 ms before SIGKILL are missing"
missing=$(ids_missing "$SCRATCH/plugin" "$DB" | wc -l)
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check: $(sqlite3 "$DB" 'PRAGMA integrity_check' | head -n 3)"
pass "SIGKILL + SIGSTOP + restart: $n_unavail calls in the gaps failed within $worst ms (timeout_ms $TIMEOUT_MS), all $n_old decisions acked > 200 ms before the kill logged ($missing newer ones lost), integrity ok"

if [ "$(id -u)" -ne 0 ]; then
	echo "# not root: disk-full, read-only and test-user cases skipped"
	exit 0
fi

# --- disk full ---------------------------------------------------------------------
mkdir -p "$SCRATCH/full"
if mount -t tmpfs -o size=16m advisor-test-full "$SCRATCH/full" 2> /dev/null; then
	MOUNTS="$SCRATCH/full"
	DB=$SCRATCH/full/decisions.db
	: > "$SCRATCH/advisord.log"
	start_daemon
	"$WIRECLIENT" "$SOCK" check 10 > /dev/null || fail "checks before the disk is full"
	dd if=/dev/zero of="$SCRATCH/full/filler" bs=4k > /dev/null 2>&1
	WIRECLIENT_STOP=$SCRATCH/stop.full spawn "$WIRECLIENT" "$SOCK" plugin 5000 600000 > "$SCRATCH/full.out" 2>&1
	fpid=$!
	sleep 3   # not a wait: decisions on a full disk for 3 s, its failure to be reported once
	wait_until -p "$fpid" -s 'tail -n 3 "$SCRATCH/full.out"' 10 "more than 100 checks answered on the full disk" \
		more_acks 100 1 "$SCRATCH/full.out"
	stop_plugin "$fpid" full
	[ "$(value unavailable "$SCRATCH/full.out")" = 0 ] || fail "checks failed on a full disk: $(tail -n 5 "$SCRATCH/full.out")"
	answered=$(value ok "$SCRATCH/full.out")
	[ "$answered" -gt 100 ] || fail "only $answered checks answered on a full disk"
	[ "$(log_errors)" -eq 1 ] || fail "$(log_errors) failure reports for $answered decisions on a full disk, want 1"
	rm -f "$SCRATCH/full/filler"
	# Short: a few hundred decisions must fit in the freed space.
	"$WIRECLIENT" "$SOCK" plugin 5000 200 > "$SCRATCH/full.after" 2>&1
	wait_until 10 "logging to resume after space was freed" grep -q "decision log .*writing again" "$SCRATCH/advisord.log"
	stop_daemon TERM
	missing=$(ids_missing "$SCRATCH/full.after" "$DB" | wc -l)
	[ "$missing" -eq 0 ] || fail "$missing decisions missing after space was freed"
	[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check after disk full"
	grep "decision log" "$SCRATCH/advisord.log" | sed 's/^/# /'
	pass "disk full: $answered decisions answered, the failure reported once; logging resumed after space was freed"
	umount "$SCRATCH/full"
	MOUNTS=
else
	echo "# cannot mount a tmpfs: disk-full case skipped"
fi

# --- read-only log directory ---------------------------------------------------------
mkdir -p "$SCRATCH/rw" "$SCRATCH/ro"
if mount --bind -o ro "$SCRATCH/rw" "$SCRATCH/ro" 2> /dev/null; then
	MOUNTS="$SCRATCH/ro"
	DB=$SCRATCH/ro/decisions.db
	: > "$SCRATCH/advisord.log"
	start_daemon
	WIRECLIENT_STOP=$SCRATCH/stop.ro spawn "$WIRECLIENT" "$SOCK" plugin 5000 600000 > "$SCRATCH/ro.out" 2>&1
	rpid=$!
	sleep 2   # not a wait: decisions into a read-only directory for 2 s, its failure to be reported once
	wait_until -p "$rpid" -s 'tail -n 3 "$SCRATCH/ro.out"' 10 "more than 100 checks answered with a read-only log directory" \
		more_acks 100 1 "$SCRATCH/ro.out"
	stop_plugin "$rpid" ro
	[ "$(value unavailable "$SCRATCH/ro.out")" = 0 ] || fail "checks failed with a read-only log directory"
	answered=$(value ok "$SCRATCH/ro.out")
	[ "$answered" -gt 100 ] || fail "only $answered checks answered with a read-only log directory"
	[ "$(log_errors)" -eq 1 ] || fail "$(log_errors) failure reports for $answered decisions, want 1"
	expect_status 0 "status with a read-only log" ctl status
	mount -o remount,bind,rw "$SCRATCH/ro" || fail "cannot make the directory writable again"
	# The writer retries every 5 s; calls go on meanwhile, and for 200
	# more once it writes again, the ones checked below.
	WIRECLIENT_STOP=$SCRATCH/stop.after spawn "$WIRECLIENT" "$SOCK" plugin 5000 600000 > "$SCRATCH/ro.after" 2>&1
	apid=$!
	wait_until -p "$apid" 15 "logging to resume once the directory is writable" grep -q "decision log .*writing again" "$SCRATCH/advisord.log"
	n0=$(acks_where 1 "$SCRATCH/ro.after")
	wait_until -p "$apid" -s 'echo "$(acks_where 1 "$SCRATCH/ro.after") acknowledged, $n0 when it wrote again"' \
		10 "200 more calls answered once logging resumed" more_acks $((n0 + 199)) 1 "$SCRATCH/ro.after"
	stop_plugin "$apid" after
	stop_daemon TERM
	n=$(sqlite3 "$DB" "SELECT count(*) FROM decisions")
	[ "$n" -gt 0 ] || fail "nothing logged after the directory became writable"
	grep '^ack ' "$SCRATCH/ro.after" | tail -n 200 > "$SCRATCH/ro.last"
	missing=$(ids_missing "$SCRATCH/ro.last" "$DB" | wc -l)
	[ "$missing" -eq 0 ] || fail "$missing of the last decisions missing after recovery"
	grep "decision log" "$SCRATCH/advisord.log" | sed 's/^/# /'
	pass "read-only log directory: $answered decisions answered, failure reported once; $n logged once writable"
	umount "$SCRATCH/ro"
	MOUNTS=
else
	echo "# cannot bind-mount read-only: read-only case skipped"
fi
DB=$SCRATCH/lib/decisions.db

# --- an unprivileged test user ---------------------------------------------------------
make_users "$TEST_USER"
as_test() {
	as_user "$TEST_USER" "$ADVISORCTL" --socket "$SOCK" "$@"
}
: > "$SCRATCH/advisord.log"
start_daemon
ctl check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1 > /dev/null
for i in 1 2 3; do
	expect_status 0 "check as $TEST_USER" as_test check --gpu h100 --gpus $((8 * i)) --model llama3-8b --layout tp2 --zero 1
done
expect_status 77 "reload as $TEST_USER" as_test reload
grep -q "admins" "$SCRATCH/err" || fail "refused reload does not say why: $(cat "$SCRATCH/err")"
expect_status 77 "root's history as $TEST_USER" as_test history --user root
# advisorctl checks are what-if queries (issue 14): history shows them with --include-queries.
expect_status 0 "own history as $TEST_USER" as_test --json history --include-queries
jq -e --arg u "$TEST_USER" '(.decisions | length) == 3 and all(.decisions[]; .user == $u)' "$SCRATCH/out" > /dev/null ||
	fail "$TEST_USER should see exactly its 3 decisions: $(cat "$SCRATCH/out")"
expect_status 0 "own history by name" as_test --json history --include-queries --user "$TEST_USER"
jq -e '(.decisions | length) == 3' "$SCRATCH/out" > /dev/null || fail "history --user $TEST_USER"
ctl --json history --include-queries --user "$TEST_USER" > "$SCRATCH/out" || fail "root reading $TEST_USER's history"
jq -e '(.decisions | length) == 3' "$SCRATCH/out" > /dev/null || fail "root sees $(cat "$SCRATCH/out")"
# An admin group in the policy makes the same user an admin.
sed "s/admins: { users: \[root\], groups: \[\] }/admins: { users: [root], groups: [$TEST_USER] }/" "$POLICY" > "$SCRATCH/p.tmp"
mv "$SCRATCH/p.tmp" "$POLICY"
expect_status 0 "reload by root" ctl reload
expect_status 0 "reload as a member of an admin group" as_test reload
expect_status 0 "root's history as an admin" as_test --json history --include-queries --user root
jq -e '(.decisions | length) >= 1 and all(.decisions[]; .user == "root")' "$SCRATCH/out" > /dev/null ||
	fail "admin group member should see root's decisions: $(cat "$SCRATCH/out")"
stop_daemon TERM
pass "test user $TEST_USER: reload and root's history refused (77), own 3 decisions shown; admin group grants both"
