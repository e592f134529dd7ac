#!/bin/sh
# The systemd units (issues 8 and 30): they pass systemd-analyze verify and
# declare the hardening, user and directories the README promises; the
# check before start and before reload takes the daemon's own options,
# $ADVISORD_OPTS included, so that a site catalog given there passes it,
# and a broken policy fails the reload; the daemon speaks the Type=notify
# protocol it declares (READY=1 on start, RELOADING=1 then READY=1 and
# STATUS= on SIGHUP, STOPPING=1 on SIGTERM); and it runs unprivileged, as
# the unit's user, on a listening socket handed to it as advisord.socket
# hands it, which keeps taking connections while the daemon restarts.
# systemd is not PID 1 here: the units are checked offline, their command
# lines expanded as systemd expands them, and the daemon started by hand
# as the units would start it.
. "$(dirname "$0")/lib.sh"

command -v systemd-analyze > /dev/null || skip_all "systemd-analyze is needed (Debian package systemd)"
scratch_dir
write_policy 2048

UNIT=$SCRATCH/advisord.service
SUNIT=$SCRATCH/advisord.socket
if [ -n "${ADVISORD_UNIT:-}" ]; then
	# The installed units (scripts/package-test): the daemon exists where they say.
	cp "$ADVISORD_UNIT" "$UNIT"
	[ -f "$(dirname "$ADVISORD_UNIT")/advisord.socket" ] && cp "$(dirname "$ADVISORD_UNIT")/advisord.socket" "$SUNIT"
else
	# The built units with the daemon path pointing into the build tree, so
	# that verify finds an executable without `make install`.
	sbindir=$(sed -n 's|^ExecStart=\(.*\)/advisord .*|\1|p' "$top_builddir/etc/advisord.service")
	[ -n "$sbindir" ] || fail "no ExecStart in $top_builddir/etc/advisord.service"
	sed "s|$sbindir/advisord|$top_builddir/daemon/advisord|g" "$top_builddir/etc/advisord.service" > "$UNIT"
	[ -f "$top_builddir/etc/advisord.socket" ] && cp "$top_builddir/etc/advisord.socket" "$SUNIT"
fi
HAVE_SOCKET_UNIT=
[ -f "$SUNIT" ] && HAVE_SOCKET_UNIT=1

# verify looks at the units' dependencies too: the socket unit sits next to the service.
if [ -n "$HAVE_SOCKET_UNIT" ]; then
	set -- "$UNIT" "$SUNIT"
else
	set -- "$UNIT"
fi
systemd-analyze verify --man=no "$@" > "$SCRATCH/verify" 2>&1 ||
	fail "systemd-analyze verify: $(cat "$SCRATCH/verify")"
# The unit's User= need not exist on the machine that runs the tests.
grep -v "User=advisor\|Group=advisor\|user advisor\|group advisor" "$SCRATCH/verify" > "$SCRATCH/verify.rest" || true
[ ! -s "$SCRATCH/verify.rest" ] || fail "systemd-analyze verify complains: $(cat "$SCRATCH/verify")"
pass "systemd-analyze verify: no complaints about $(echo "$@" | sed "s|$SCRATCH/||g")"

for d in Type=notify ProtectSystem=strict PrivateTmp=yes NoNewPrivileges=yes ProtectHome=yes \
	StateDirectory=advisor RuntimeDirectory=advisor RuntimeDirectoryMode=0755 \
	RuntimeDirectoryPreserve=yes User=advisor Group=advisor \
	'ExecReload=/bin/kill -HUP $MAINPID' CapabilityBoundingSet= \
	'EnvironmentFile=-'; do
	grep -q "^$d" "$UNIT" || fail "unit lacks $d"
done
grep -q '^ExecStart=.* --foreground .*\$ADVISORD_OPTS$' "$UNIT" || fail "ExecStart lacks --foreground or \$ADVISORD_OPTS"
grep -q '^ExecStartPre=.* --check-config ' "$UNIT" || fail "no --check-config before start"
pass "unit declares the hardening, directories, reload and options it documents"

if systemd-analyze security --offline=true "$UNIT" > "$SCRATCH/security" 2>&1; then
	sed -n 's/.*Overall exposure level for [^:]*: /# systemd-analyze security: /p' "$SCRATCH/security"
fi

# --- the same options before start, at start and before reload (issue 30) ----------
# unit_line KEY [N]: the Nth (default 1st) KEY= line's command, prefixes
# such as "-" or "@" left out.
unit_line() {
	sed -n "s/^$1=[-@:+!]*//p" "$UNIT" | sed -n "${2:-1}p"
}
# expand CMDLINE: its words one per line, as systemd expands a command
# line: $NAME alone is the variable's value split at white space, ${NAME}
# its value as one word (the units use only the first), other words as
# they are.  ADVISORD_OPTS comes from the environment file as systemd
# reads it; the files of these tests hold plain NAME="value" lines.
expand() {
	(
		set -f
		# shellcheck disable=SC2086
		for w in $1; do
			case $w in
			'$ADVISORD_OPTS') for o in ${ADVISORD_OPTS:-}; do printf '%s\n' "$o"; done ;;
			'$'*) fail "the unit uses $w, which this test does not expand" ;;
			*) printf '%s\n' "$w" ;;
			esac
		done
	)
}
# options CMDLINE DROP: its arguments less the program and the option DROP.
options() {
	expand "$1" | sed 1d | grep -vx -- "$2"
}
pre=$(unit_line ExecStartPre)
start=$(unit_line ExecStart)
reload_check=$(unit_line ExecReload 1)
[ -n "$pre" ] && [ -n "$start" ] && [ -n "$reload_check" ] || fail "ExecStartPre, ExecStart or ExecReload missing"
[ "$(unit_line ExecReload 2)" = '/bin/kill -HUP $MAINPID' ] || fail "the second ExecReload is not the SIGHUP: $(unit_line ExecReload 2)"
[ "$(options "$pre" --check-config)" = "$(options "$start" --foreground)" ] ||
	fail "ExecStartPre and ExecStart take different options: '$pre' vs '$start'"
[ "$reload_check" = "$pre" ] || fail "ExecReload's check differs from ExecStartPre's: '$reload_check'"
pass "ExecStartPre, ExecReload's check and ExecStart take the same options, \$ADVISORD_OPTS included"

# The unit's installed paths, mapped onto scratch copies: the catalog and
# policy under $SCRATCH/etc/advisor, socket and log under $SCRATCH.
confdir=$(expand "$start" | sed -n 's|/catalog\.yaml$||p' | head -n 1)
[ -n "$confdir" ] || fail "no catalog.yaml in ExecStart: $start"
mkdir -p "$SCRATCH/etc/advisor"
cp "$CATALOG" "$SCRATCH/etc/advisor/catalog.yaml"
# as systemd runs it: the unit's words, the installed paths swapped for the scratch copies.
run_unit_line() {
	# shellcheck disable=SC2046
	set -f
	set -- $(expand "$1" | sed -e "s|^$confdir/|$SCRATCH/etc/advisor/|" \
		-e "s|.*/advisord\.sock$|$SOCK|" -e "s|.*/decisions\.db$|$DB|" \
		-e "s|^$sbindir/advisord$|$ADVISORD|")
	set +f
	"$@"
}
sbindir=$(expand "$start" | head -n 1 | sed 's|/advisord$||')
# A site GPU the shipped catalog lacks, in a second catalog given in
# ADVISORD_OPTS as the README says, and a policy that uses it.
cat > "$SCRATCH/etc/advisor/site.yaml" <<'EOT'
gpus:
  - name: h100nvl
    vendor: nvidia
    memory_gib: 93.0
    memory_bandwidth_tbs: 3.9
    bf16_tflops: 835
    fp32_tflops: 60
    interconnect_gbs: 600
    network_gbs: 50
    gpus_per_node: 4
    tdp_w: 400
    price_per_hour_usd: 3.0
EOT
sed 's/h100: { gpu: h100-sxm, gpus_per_node: 8,/h100: { gpu: h100nvl, gpus_per_node: 4,/' "$POLICY" \
	> "$SCRATCH/etc/advisor/policy.yaml"
grep -q 'gpu: h100nvl' "$SCRATCH/etc/advisor/policy.yaml" || fail "test policy does not name h100nvl"
ADVISORD_OPTS=
expect_status 65 "the unit's ExecStartPre without the site catalog" run_unit_line "$pre"
grep -q "unknown GPU 'h100nvl'" "$SCRATCH/err" || fail "no 'unknown GPU' without the site catalog: $(cat "$SCRATCH/err")"
printf 'ADVISORD_OPTS="--catalog %s --workers 2"\n' "$SCRATCH/etc/advisor/site.yaml" > "$SCRATCH/default"
# shellcheck disable=SC1091
. "$SCRATCH/default"
expect_status 0 "the unit's ExecStartPre with a site catalog in ADVISORD_OPTS" run_unit_line "$pre"
grep -q "from 2 catalog files" "$SCRATCH/out" || fail "ExecStartPre did not read the site catalog: $(cat "$SCRATCH/out")"
pass "ExecStartPre as systemd expands it passes with a site catalog in ADVISORD_OPTS (and fails without)"

# Reload: the check fails on a broken policy, so `systemctl reload` fails
# and the SIGHUP that follows it never runs.
cp "$SCRATCH/etc/advisor/policy.yaml" "$SCRATCH/good-policy.yaml"
printf 'partitions:\n  h100: { gpu: no-such-gpu }\n' > "$SCRATCH/etc/advisor/policy.yaml"
expect_status 65 "ExecReload's check on a broken policy" run_unit_line "$reload_check"
grep -q "policy.yaml:2:.*no-such-gpu" "$SCRATCH/err" || fail "reload check does not name FILE:LINE: $(cat "$SCRATCH/err")"
cp "$SCRATCH/good-policy.yaml" "$SCRATCH/etc/advisor/policy.yaml"
expect_status 0 "ExecReload's check on the good policy" run_unit_line "$reload_check"
pass "ExecReload's check fails on a broken policy (FILE:LINE), passes on a good one"
unset ADVISORD_OPTS

# --- Type=notify: the messages systemd waits for ---------------------------------------
PY=$(command -v python3 || true)
[ -n "$PY" ] || { echo "# skip the notify protocol: python3 is needed"; exit 0; }
dgram_listen "$SCRATCH/notify" "$SCRATCH/notify.txt" "notify socket"
NOTIFY_SOCKET=$SCRATCH/notify
export NOTIFY_SOCKET
start_daemon
kill -HUP "$DAEMON_PID"
ready_n() { [ "$(count '^READY=1' "$SCRATCH/notify.txt")" -eq "$1" ]; }
wait_until -s 'cat "$SCRATCH/notify.txt"' 5 "READY=1 after SIGHUP" ready_n 2
# A broken policy: the daemon keeps the one it has and says so in STATUS=.
cp "$POLICY" "$SCRATCH/policy.good"
printf 'partitions:\n  h100: { gpu: no-such-gpu }\n' > "$POLICY"
kill -HUP "$DAEMON_PID"
wait_until -s 'cat "$SCRATCH/notify.txt"' 5 "READY=1 after the failed reload" ready_n 3
grep -q "^STATUS=reload failed, previous configuration kept: .*no-such-gpu" "$SCRATCH/notify.txt" ||
	fail "no STATUS= for the failed reload: $(cat "$SCRATCH/notify.txt")"
ctl check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1 --partition h100 > /dev/null 2>&1 ||
	fail "after a failed reload the daemon does not serve the previous policy"
cp "$SCRATCH/policy.good" "$POLICY"
stop_daemon TERM
unset NOTIFY_SOCKET
[ "$DAEMON_STATUS" -eq 0 ] || fail "advisord exited $DAEMON_STATUS"
# Sent before it exited; the listener may not have written it yet.
wait_until -s 'cat "$SCRATCH/notify.txt"' 5 "the listener to write STOPPING=1" grep -q '^STOPPING=1' "$SCRATCH/notify.txt"
grep -v '^STATUS=' "$SCRATCH/notify.txt" | tr '\n' ' ' > "$SCRATCH/seq"
[ "$(cat "$SCRATCH/seq")" = "READY=1 RELOADING=1 READY=1 RELOADING=1 READY=1 STOPPING=1 " ] ||
	fail "notify sequence: $(cat "$SCRATCH/seq")"
[ "$(grep -c '^STATUS=reloaded: ' "$SCRATCH/notify.txt")" -eq 1 ] || fail "no STATUS= for the good reload: $(cat "$SCRATCH/notify.txt")"
pass "Type=notify: READY=1, RELOADING=1 + READY=1 + STATUS= on SIGHUP (a failed reload keeps the policy), STOPPING=1 on SIGTERM"

# --- unprivileged, on a socket systemd would hand over (issue 30) -----------------------
# As advisord.socket and advisord.service do: a listening socket made by
# root (0666) is passed (LISTEN_FDS) to advisord running as the unit's
# user, which owns only the socket's directory and the log's.  The holder
# below stands for systemd: it restarts the daemon when it exits, and a
# check made in between waits in the socket's backlog and is answered.
[ "$(id -u)" -eq 0 ] || { echo "# skip the unprivileged daemon: needs root to create its user"; exit 0; }
user=$(sed -n 's/^User=//p' "$UNIT")
[ -n "$user" ] || fail "the unit has no User="
ldd "$ADVISORD" 2> /dev/null | grep -q libsystemd ||
	{ echo "# skip socket activation: advisord is built without libsystemd"; exit 0; }
make_users "$user"
# Directories of the user's own, as RuntimeDirectory= and StateDirectory= make them.
SOCK=$SCRATCH/unit-run/advisord.sock
DB=$SCRATCH/unit-lib/decisions.db
mkdir -m 755 "$SCRATCH/unit-run"
mkdir -m 750 "$SCRATCH/unit-lib"
chown "$user:" "$SCRATCH/unit-run" "$SCRATCH/unit-lib"
daemon=$(stage "$ADVISORD")
# The daemon's user reads what it is given, as it reads /etc/advisor: the
# source tree may be in a directory only root can enter (CI's 0700 clone).
ucat=$(stage "$CATALOG")
upol=$(stage "$POLICY")
spawn "$PY" - "$SOCK" "$SCRATCH/child" setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups -- \
	"$daemon" --foreground --catalog "$ucat" --policy "$upol" --socket "$SOCK" --db "$DB" \
	--workers 2 >> "$SCRATCH/advisord.log" 2>&1 <<'EOT'
# Stands for systemd: holds the listening socket and (re)starts the daemon
# with it as fd 3 (made by root, as systemd makes it), LISTEN_FDS=1, LISTEN_PID=its pid; a restart comes 1 s
# after the daemon exits, as with RestartSec=.
import os, socket, sys, time
path, pidfile, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o666)  # advisord.socket's SocketMode=
s.listen(128)
while True:
    pid = os.fork()
    if pid == 0:
        if s.fileno() != 3:
            os.dup2(s.fileno(), 3)
        os.set_inheritable(3, True)
        os.environ["LISTEN_FDS"] = "1"
        os.environ["LISTEN_PID"] = str(os.getpid())
        os.execvp(cmd[0], cmd)
    with open(pidfile + ".tmp", "w") as f:
        f.write("%d\n" % pid)
    os.rename(pidfile + ".tmp", pidfile)
    os.waitpid(pid, 0)
    time.sleep(1)
EOT
served() { [ "$(count "serving $SOCK (systemd's socket)" "$SCRATCH/advisord.log")" -ge "$1" ]; }
wait_until -s 'tail -n 5 "$SCRATCH/advisord.log"' 10 "advisord to serve the passed socket" served 1
child=$(cat "$SCRATCH/child")
[ "$(ps -o user= -p "$child")" = "$user" ] || fail "the daemon runs as $(ps -o user= -p "$child"), not $user"
[ "$(stat -c %a "$SOCK")" = 666 ] || fail "socket mode $(stat -c %a "$SOCK")"
ctl check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1 > /dev/null ||
	fail "root's advisorctl: no answer from the daemon running as $user"
as_nobody "$ADVISORCTL" --socket "$SOCK" check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1 \
	> "$SCRATCH/out" 2>&1 || fail "nobody's advisorctl: $(cat "$SCRATCH/out")"
[ "$(stat -c %U "$DB")" = "$user" ] || fail "the decision log belongs to $(stat -c %U "$DB")"
pass "advisord runs as $user on the passed socket; root's and nobody's advisorctl are answered; the log is $user's"

# Restart: the socket file stays, and a check made while no daemon runs is answered by the next.
kill -TERM "$child"
wait_until 10 "the daemon to exit" not_running "$child"
[ -S "$SOCK" ] || fail "the daemon removed the socket systemd holds"
ctl --timeout 20000 status > "$SCRATCH/out" 2>&1 || fail "a check during the restart was turned away: $(cat "$SCRATCH/out")"
served 2 || fail "answered, but not by a restarted daemon: $(tail -n 5 "$SCRATCH/advisord.log")"
[ "$(cat "$SCRATCH/child")" != "$child" ] || fail "no new daemon"
pass "during a restart a check waits in the socket's backlog and is answered by the next daemon"

# A second advisord on the same path refuses, instead of taking systemd's socket for a stale one.
expect_status 1 "a second advisord on the held socket" "$ADVISORD" --foreground --catalog "$CATALOG" \
	--policy "$POLICY" --socket "$SOCK" --db "$SCRATCH/other.db"
grep -q "already serving" "$SCRATCH/out" "$SCRATCH/err" || fail "second daemon: $(cat "$SCRATCH/err")"
# What systemd passes must be a listening unix socket (and --socket's path).
expect_status 1 "advisord handed something other than a listening socket" env LISTEN_FDS=1 sh -c \
	'export LISTEN_PID=$$; exec "$0" "$@" 3<> /dev/null' "$ADVISORD" --foreground --catalog "$CATALOG" \
	--policy "$POLICY" --socket "$SCRATCH/other.sock" --db "$SCRATCH/other.db"
grep -q "not a listening unix stream socket" "$SCRATCH/out" "$SCRATCH/err" || fail "wrong socket: $(cat "$SCRATCH/out" "$SCRATCH/err")"
[ ! -e "$SCRATCH/other.sock" ] || fail "advisord made a socket of its own besides the passed one"
pass "a second advisord on the held path, and a passed descriptor that is not a listening socket, are refused"

# Without advisord.socket the daemon makes its own socket as the unit's
# user; the plugin and advisorctl trust that user as they trust root and
# SlurmUser (the daemon's uid is the socket's peer then, not root's).
own=$SCRATCH/unit-run/own.sock
spawn as_user "$user" "$ADVISORD" --foreground --catalog "$ucat" --policy "$upol" --socket "$own" \
	--db "$SCRATCH/unit-lib/own.db" --workers 1 >> "$SCRATCH/advisord.log" 2>&1
own_pid=$!
wait_until -p "$own_pid" -s 'tail -n 3 "$SCRATCH/advisord.log"' 10 "advisord as $user on its own socket" test -S "$own"
"$ADVISORCTL" --socket "$own" check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1 > "$SCRATCH/out" 2>&1 ||
	fail "root's advisorctl does not trust advisord running as $user: $(cat "$SCRATCH/out")"
[ "$(stat -c %U:%a "$own")" = "$user:666" ] || fail "own socket: $(stat -c %U:%a "$own")"
stop_pid "$own_pid" TERM 30 "advisord as $user"
[ "$STOP_STATUS" -eq 0 ] || fail "advisord as $user exited $STOP_STATUS"
pass "advisord as $user on a socket of its own: root's advisorctl trusts it, socket 0666 and $user's"
