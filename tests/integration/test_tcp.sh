#!/bin/sh
# test_tcp.sh - advisord over MUNGE-authenticated TCP (issue 13), with the
# system munged the cluster tests use (scripts/cluster munge starts it):
#  - advisorctl --server works as over the unix socket, and the caller is
#    the credential's uid: an unprivileged user sees only its own history
#    and is refused reload and other users' history;
#  - a missing, forged, foreign, replayed or expired credential is refused
#    with munge's own words, and the connection is closed; so is one sent
#    before the hello (an older client's, issue 20);
#  - oversized, half-sent and never-completed frames are handled as on the
#    unix socket, and the daemon keeps answering;
#  - failover: with the first server down, the second answers within the
#    timeout;
#  - advisord.conf: listen: and a password in a world-readable file.
# Needs root (a test user, munged); skips otherwise.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (munged, a test user)"
for b in munge unmunge munged setpriv useradd; do
	command -v "$b" > /dev/null 2>&1 || skip_all "$b not found (Debian packages munge, util-linux, passwd)"
done
"$top_srcdir/scripts/cluster" munge > /dev/null 2>&1 || skip_all "munged does not start"

scratch_dir
write_policy 2048
USER_T=advtest-t$$
# cleanup (scratch_dir's EXIT trap) removes the user once its processes are gone.
make_users "$USER_T"
as_t() { as_user "$USER_T" "$@"; }

# A free loopback port, and one nobody listens on.
port_free() { ! ss -ltnH 2> /dev/null | awk '{print $4}' | grep -q ":$1\$"; }
# Below Linux's ephemeral range (32768-60999): a client connection there
# would hold the port and make the daemon's bind fail.
PORT=$((10000 + ($$ % 2000) * 2))
while ! port_free "$PORT" || ! port_free $((PORT + 1)); do PORT=$((PORT + 2)); done
ADDR=127.0.0.1:$PORT
DEAD=127.0.0.1:$((PORT + 1))

start_daemon --listen "$ADDR"
grep -q "and TCP $ADDR" "$SCRATCH/advisord.log" || fail "advisord does not say it serves $ADDR"
tctl() { "$ADVISORCTL" --server "$ADDR" "$@"; }

# --- the same answers as on the unix socket, the caller from the credential ------------
expect_status 2 "check over TCP" tctl check --gpu h100 --gpus 8 --model llama3-70b --layout tp8
grep -q "MEM_OVER_CAPACITY" "$SCRATCH/out" || fail "TCP check without its finding: $(cat "$SCRATCH/out")"
expect_status 0 "status over TCP" tctl status
pass "advisorctl --server answers as the unix socket does"

expect_status 0 "check as $USER_T over TCP" as_t "$ADVISORCTL" --server "$ADDR" check --gpu h100 \
	--gpus 8 --model llama3-8b --layout tp2 --zero 1
expect_status 0 "history over TCP" tctl history --include-queries --json
jq -e --arg u "$USER_T" '[.decisions[] | select(.user == $u)] | length == 1' "$SCRATCH/out" > /dev/null ||
	fail "the check as $USER_T is not logged under $USER_T: $(cat "$SCRATCH/out")"
expect_status 0 "own history as $USER_T" as_t "$ADVISORCTL" --server "$ADDR" history --include-queries --json
jq -e --arg u "$USER_T" '.decisions | length == 1 and .[0].user == $u' "$SCRATCH/out" > /dev/null ||
	fail "$USER_T sees more than its own history over TCP: $(cat "$SCRATCH/out")"
expect_status 77 "reload as $USER_T" as_t "$ADVISORCTL" --server "$ADDR" reload
grep -q "reload is for admins only; $USER_T" "$SCRATCH/err" ||
	fail "reload as $USER_T not refused as $USER_T: $(cat "$SCRATCH/err")"
expect_status 77 "root's history as $USER_T" as_t "$ADVISORCTL" --server "$ADDR" history --user root
pass "the caller is the credential's uid: $USER_T sees only its own decisions, no reload"

# --- credentials ------------------------------------------------------------------------
auth() {
	"$WIRECLIENT" "$ADDR" auth "$1" > "$SCRATCH/auth.out" 2>&1
	[ "$(value error_code "$SCRATCH/auth.out")" = 9 ] ||
		fail "$2: not refused with ERR_AUTH: $(cat "$SCRATCH/auth.out")"
	grep -q "^error=.*$3" "$SCRATCH/auth.out" || fail "$2: want '$3': $(cat "$SCRATCH/auth.out")"
	[ "$(value closed "$SCRATCH/auth.out")" = 1 ] || fail "$2: the connection stays open"
}
auth none "no credential" "must present a MUNGE credential"
auth "MUNGE:AwQDAAD+forged+credential+that+is+not+one:" "a forged credential" "munge: "
auth "$(munge -n)" "a credential minted for something else" "not minted for this daemon and connection"
"$WIRECLIENT" "$ADDR" auth good > "$SCRATCH/auth.out" 2>&1
grep -q "^verdict=" "$SCRATCH/auth.out" || fail "a good credential refused: $(cat "$SCRATCH/auth.out")"
CRED=$(value cred "$SCRATCH/auth.out")
auth "$CRED" "the same credential again" "Replayed credential"
# issue 20: an old client sends its credential before the daemon proved itself.
auth legacy "a credential before any hello (an older client)" "did not ask the daemon to prove its identity"
grep -q "TCP client 127.0.0.1:[0-9]*: credential refused: munge: Replayed credential" \
	"$SCRATCH/advisord.log" || fail "refusals are not in the daemon log with the client's address"
pass "missing, forged, foreign, replayed, expired and pre-hello credentials refused in munge's words"

# --- hostile frames as on the unix socket -------------------------------------------------
"$WIRECLIENT" "$ADDR" oversized > "$SCRATCH/o.out" 2>&1
[ "$(value error_code "$SCRATCH/o.out")" = 3 ] && [ "$(value closed "$SCRATCH/o.out")" = 1 ] ||
	fail "oversized frame over TCP: $(cat "$SCRATCH/o.out")"
spawn "$WIRECLIENT" "$ADDR" hold 20 1500 half > "$SCRATCH/h.out" 2>&1
HOLD=$!
wait_until -p "$HOLD" -s 'cat "$SCRATCH/h.out"' 10 "20 half frames sent over TCP" grep -q '^opened=' "$SCRATCH/h.out"
expect_status 0 "status while 20 half frames are held" tctl status
wait "$HOLD"
expect_status 0 "status after the half frames" tctl status
pass "oversized and half frames over TCP: refused or held without stalling others"

# --- failover -----------------------------------------------------------------------------
expect_status 0 "the second server of a list" "$ADVISORCTL" --server "$DEAD,$ADDR" --timeout 2000 status
expect_status 69 "no server of a list up" "$ADVISORCTL" --server "$DEAD" --timeout 500 status
grep -q "$DEAD" "$SCRATCH/err" || fail "the unreachable server is not named: $(cat "$SCRATCH/err")"
expect_status 64 "a bad server list" "$ADVISORCTL" --server "login1" status
grep -q "HOST:PORT" "$SCRATCH/err" || fail "a bad --server value is not explained: $(cat "$SCRATCH/err")"
"$WIRECLIENT" "$DEAD,$ADDR" plugin 1000 300 > "$SCRATCH/p.out" 2>&1
grep -q "^ack " "$SCRATCH/p.out" || fail "the plugin's call does not reach the second server: $(cat "$SCRATCH/p.out")"
grep -q "^unavail " "$SCRATCH/p.out" && fail "the plugin's call failed over too slowly: $(grep unavail "$SCRATCH/p.out" | head -n 3)"
pass "failover: the first server down, the second answers within the timeout"

# --- advisord.conf ------------------------------------------------------------------------
stop_daemon
CONF=$SCRATCH/advisord.conf
printf 'listen: %s\nstorage:\n  type: sqlite\n  path: %s\nconnections:\n  auth_timeout_ms: 5000\n' \
	"$ADDR" "$SCRATCH/lib/conf.db" > "$CONF"
start_daemon --config "$CONF"
expect_status 0 "listen: from advisord.conf" tctl status
# A credential bound to its hello lives 1 s and is sent 2.2 s later (auth_timeout_ms 5000).
auth ttl1 "an expired credential" "Expired credential"
stop_daemon
# path: is the log unless --db names one.
expect_status 0 "advisord.conf's path:" "$ADVISORD" --catalog "$CATALOG" --policy "$POLICY" \
	--config "$CONF" --check-config
grep -q "decision log $SCRATCH/lib/conf.db" "$SCRATCH/out" ||
	fail "storage path: from advisord.conf not used: $(cat "$SCRATCH/out")"
printf 'storage:\n  type: mariadb\n  host: 127.0.0.1\n  user: advisor\n  password: secret\n  database: advisor\n' > "$CONF"
chmod 644 "$CONF"
expect_status 65 "a world-readable advisord.conf with a password" "$ADVISORD" --foreground \
	--catalog "$CATALOG" --policy "$POLICY" --socket "$SOCK" --db "$DB" --config "$CONF" --check-config
grep -q "mode 0644.*chmod 600" "$SCRATCH/err" || fail "the refusal does not say how to fix it: $(cat "$SCRATCH/err")"
printf 'listen: 6830\n' > "$CONF"
expect_status 65 "a bad listen: in advisord.conf" "$ADVISORD" --foreground --catalog "$CATALOG" \
	--policy "$POLICY" --socket "$SOCK" --db "$DB" --config "$CONF" --check-config
grep -q "advisord.conf:1:9: 'listen'" "$SCRATCH/err" || fail "no file:line:col: $(cat "$SCRATCH/err")"
pass "advisord.conf: listen: and path: used; a readable password and a bad address refused"
