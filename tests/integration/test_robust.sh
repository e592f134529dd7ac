#!/bin/sh
# advisord when resources run out or other processes get in the way
# (reviewer r4), loopback only, bounded in time:
#  - out of file descriptors: accept() failing with EMFILE must not spin a
#    worker at 100% CPU or flood the log, and the daemon serves again as
#    soon as descriptors are free;
#  - a client pipelining requests it never reads: the answers the daemon
#    buffers for it stay bounded (the rest wait in the socket), and closing
#    with answers unread (EPIPE) harms nothing;
#  - SIGTERM while clients hold half frames or never read: the drain ends
#    within its 2 s;
#  - the decision log's write lock held by another process (an admin's
#    sqlite3): the writer waits instead of dropping decisions, and
#    `advisorctl history` returns the decision made meanwhile;
#  - decision ids stay unique when the daemon restarts with the same pid in
#    the same second (PID 1 of a container, here a fresh pid namespace).
. "$(dirname "$0")/lib.sh"

scratch_dir
write_policy 2048

# cpu_ticks PID: user + system time of a process, clock ticks.
cpu_ticks() {
	awk '{print $14 + $15}' "/proc/$1/stat"
}

# hwm_kib PID: the peak resident set of a process.
hwm_kib() {
	awk '/^VmHWM:/ {print $2}' "/proc/$1/status"
}

# ---- EMFILE -------------------------------------------------------------------

ADVISORD_WRAPPER="prlimit --nofile=64:64 -- ${ADVISORD_WRAPPER:-}" start_daemon --workers 1
# Held until the measurement is over (WIRECLIENT_STOP), however long 150 connects take.
WIRECLIENT_STOP=$SCRATCH/stop.hold spawn "$WIRECLIENT" "$SOCK" hold 150 600000 idle > "$SCRATCH/hold" 2>&1
HOLD=$!
wait_until -p "$HOLD" -s 'cat "$SCRATCH/hold"' 10 "150 connections opened past the file limit" grep -q '^opened=' "$SCRATCH/hold"
t0=$(cpu_ticks "$DAEMON_PID")
sleep 1   # not a wait: the window the daemon's CPU time is measured over
t1=$(cpu_ticks "$DAEMON_PID")
touch "$SCRATCH/stop.hold"
stop_pid "$HOLD" 0 30 "the 150 connections to be let go"
spent=$((t1 - t0))
tck=$(getconf CLK_TCK)
[ "$(value opened "$SCRATCH/hold")" -eq 150 ] || { cat "$SCRATCH/hold" >&2; fail "hold: not all 150 connected"; }
# A spinning worker burns a whole second of CPU per second.
[ "$spent" -lt $((tck * 3 / 10)) ] || fail "out of descriptors, the daemon used $spent/$tck s of CPU in 1 s (accept spins)"
# Since issue 20 the connection caps (lowered to fit the file limit) usually
# refuse the flood before accept() runs out: either is reported, not flooded.
n=$(grep -c 'accept\|connection caps' "$SCRATCH/advisord.log")
[ "$n" -ge 1 ] && [ "$n" -le 4 ] || fail "out of descriptors: $n accept or cap lines in the log, want 1..4 (reported, not flooded)"
ctl status > /dev/null 2>&1 || fail "daemon does not answer once descriptors are free again"
expect_status 0 "check after EMFILE" ctl check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1
pass "out of descriptors: $spent/$tck s CPU in 1 s, $n log line(s), serving again afterwards"
stop_daemon TERM
[ "$DAEMON_STATUS" -eq 0 ] || fail "advisord exited $DAEMON_STATUS after EMFILE"

# ---- pipelined answers nobody reads -----------------------------------------------

start_daemon --workers 1 --read-timeout 4000
h0=$(hwm_kib "$DAEMON_PID")
"$WIRECLIENT" "$SOCK" flood 40 1500 > "$SCRATCH/flood" 2>&1 || { cat "$SCRATCH/flood" >&2; fail "flood client"; }
grown=$(( $(hwm_kib "$DAEMON_PID") - h0 ))
ctl status > /dev/null || fail "daemon does not answer after the flood"
echo "# flood: $(value sent_kib "$SCRATCH/flood") KiB of requests per client; daemon peak RSS grew ${grown} KiB"
# Bounded: 40 clients x 256 KiB of answers each, plus the allocator's slack.
[ "$grown" -lt $((40 * 256 + 16384)) ] || fail "40 clients that never read made the daemon grow ${grown} KiB"
pass "40 clients pipelining requests they never read: daemon grew ${grown} KiB and still serves"
stop_daemon TERM

# ---- SIGTERM with clients that block ------------------------------------------------

start_daemon --workers 2
spawn "$WIRECLIENT" "$SOCK" hold 20 8000 half > "$SCRATCH/h1" 2>&1
H1=$!
spawn "$WIRECLIENT" "$SOCK" flood 10 8000 > "$SCRATCH/h2" 2>&1
H2=$!
# Blocking: the half frames sent, the flood's sockets full (the daemon takes no more).
clients_block() { grep -q '^opened=' "$SCRATCH/h1" && grep -q '^stalled=1' "$SCRATCH/h2"; }
wait_until -s 'cat "$SCRATCH/h1" "$SCRATCH/h2"' 5 "20 half frames sent and 10 flooding clients stalled" clients_block
t0=$(date +%s%N)
stop_daemon TERM
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill "$H1" "$H2" 2> /dev/null
wait "$H1" "$H2" 2> /dev/null
[ "$DAEMON_STATUS" -eq 0 ] || fail "SIGTERM with blocked clients: exit $DAEMON_STATUS"
# The drain lasts 2 s at most; a tool (valgrind) adds its own exit time.
[ "$ms" -lt 8000 ] || fail "SIGTERM with blocked clients: exited after $ms ms"
pass "SIGTERM with 20 half-frame and 10 non-reading clients: exit 0 after $ms ms"

# ---- the decision log's write lock held by another process --------------------------------

if command -v sqlite3 > /dev/null && command -v jq > /dev/null; then
	start_daemon
	ctl check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1 > /dev/null
	# Another writer (an admin's sqlite3, a backup) holds the write lock for 0.8 s.
	# (The 0.8 s is how long the lock is held: not a wait.)
	spawn sh -c '{ echo "BEGIN IMMEDIATE; SELECT count(*) FROM decisions;"; sleep 0.8; echo "COMMIT;"; } |
		sqlite3 -cmd ".timeout 2000" "$1"' sh "$DB" > "$SCRATCH/locker" 2>&1
	LOCKER=$!
	# sqlite3 prints the count once BEGIN IMMEDIATE holds the lock.
	wait_until -p "$LOCKER" 5 "the other process to take the write lock" test -s "$SCRATCH/locker"
	id=$(ctl check --json --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1 | jq -r .decision_id)
	expect_status 0 "history while another process holds the write lock" ctl history --json --include-queries --limit 5
	wait "$LOCKER"
	grep -q . "$SCRATCH/locker" && ! grep -q '^[0-9]' "$SCRATCH/locker" && fail "the lock holder failed: $(cat "$SCRATCH/locker")"
	jq -e --arg id "$id" '.decisions | map(.id) | index($id) != null' "$SCRATCH/out" > /dev/null ||
		fail "history during the lock lacks $id, made during the lock"
	dropped=$(ctl stats --json | jq '.log_dropped // 0')
	[ "$dropped" -eq 0 ] || fail "$dropped decisions dropped while another process held the lock"
	pass "another process holding the log's write lock for 0.8 s: the writer waits, history waits and finds the decision"
	stop_daemon TERM
fi

# ---- decision ids across restarts with the same pid -------------------------------------

# pidns_check: a daemon that is PID 1 of a new pid namespace makes one
# check, then is killed; PIDNS_ID is the check's decision id.  Not run in
# $(...): a daemon a subshell starts is not in this shell's cleanup.
pidns_check() {
	# shellcheck disable=SC2086
	spawn unshare --pid --fork --kill-child ${ADVISORD_WRAPPER:-} "$ADVISORD" --foreground \
		--catalog "$CATALOG" --policy "$POLICY" --socket "$SOCK" --db "$DB" \
		>> "$SCRATCH/advisord.log" 2>&1
	DAEMON_PID=$!
	wait_until -p "$DAEMON_PID" 10 "advisord in a pid namespace to answer" ctl_answers
	PIDNS_ID=$(ctl check --json --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1 | jq -r .decision_id)
	# In the log before the SIGKILL (an answer waits for its commit since issue 20).
	wait_until 5 "decision $PIDNS_ID in the log" shown "$PIDNS_ID"
	stop_daemon KILL
	# SIGKILL ends unshare at once, its child (the daemon) only when the
	# kernel delivers --kill-child's death signal: wait until the socket is
	# dead, or the next daemon finds this one still serving it.
	wait_until 5 "advisord in a pid namespace to die with its SIGKILLed parent" not ctl_answers
}
not() { ! "$@"; }
shown() { ctl show "$1" > /dev/null 2>&1; }

if command -v jq > /dev/null && unshare --pid --fork true 2> /dev/null; then
	same=0
	for attempt in 1 2 3 4 5 6 7 8; do
		pidns_check
		a=$PIDNS_ID
		pidns_check
		b=$PIDNS_ID
		[ -n "$a" ] && [ -n "$b" ] || fail "no decision id from a daemon in a pid namespace"
		[ "$a" != "$b" ] || fail "two daemons with pid 1 gave the same decision id $a"
		# Only a pair from the same second (same time and pid) tests anything.
		[ "${a%-*}" = "${b%-*}" ] && { same=1; break; }
	done
	[ "$same" -eq 1 ] || echo "# no two restarts fell in the same second; ids $a $b"
	start_daemon
	n=$(ctl history --json --include-queries --limit 100 | jq "[.decisions[] | select(.id == \"$a\" or .id == \"$b\")] | length")
	[ "$n" -eq 2 ] || fail "history holds $n of the decisions $a and $b, want 2 (one overwrote the other)"
	pass "decision ids unique across restarts as pid 1 ($a, $b)"
	stop_daemon TERM
else
	echo "# skipped: pid namespace (unshare --pid) or jq not available"
fi
