#!/bin/sh
# The systemd unit (issue 8): it passes systemd-analyze verify, declares the
# hardening and directories the README promises, and the daemon speaks the
# Type=notify protocol it declares (READY=1 on start, RELOADING=1 then
# READY=1 on SIGHUP, STOPPING=1 on SIGTERM).  systemd is not running here:
# the unit is checked offline and the daemon started by hand as the unit would.
. "$(dirname "$0")/lib.sh"

command -v systemd-analyze > /dev/null || skip_all "systemd-analyze is needed (Debian package systemd)"
scratch_dir
write_policy 2048

UNIT=$SCRATCH/advisord.service
if [ -n "${ADVISORD_UNIT:-}" ]; then
	# The installed unit (scripts/package-test): its daemon exists where it says.
	cp "$ADVISORD_UNIT" "$UNIT"
else
	# The built unit with its daemon path pointing into the build tree, so
	# that verify finds an executable without `make install`.
	sbindir=$(sed -n 's|^ExecStart=\(.*\)/advisord .*|\1|p' "$top_builddir/etc/advisord.service")
	[ -n "$sbindir" ] || fail "no ExecStart in $top_builddir/etc/advisord.service"
	sed "s|$sbindir/advisord|$top_builddir/daemon/advisord|g" "$top_builddir/etc/advisord.service" > "$UNIT"
fi

systemd-analyze verify --man=no "$UNIT" > "$SCRATCH/verify" 2>&1 ||
	fail "systemd-analyze verify: $(cat "$SCRATCH/verify")"
[ ! -s "$SCRATCH/verify" ] || fail "systemd-analyze verify complains: $(cat "$SCRATCH/verify")"
pass "systemd-analyze verify: no complaints"

for d in Type=notify ProtectSystem=strict PrivateTmp=yes NoNewPrivileges=yes ProtectHome=yes \
	StateDirectory=advisor RuntimeDirectory=advisor RuntimeDirectoryMode=0755 \
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

# --- Type=notify: the messages systemd waits for ---------------------------------------
PY=$(command -v python3 || true)
[ -n "$PY" ] || { echo "# skip the notify protocol: python3 is needed"; exit 0; }
dgram_listen "$SCRATCH/notify" "$SCRATCH/notify.txt" "notify socket"
NOTIFY_SOCKET=$SCRATCH/notify
export NOTIFY_SOCKET
start_daemon
kill -HUP "$DAEMON_PID"
ready_twice() { [ "$(count '^READY=1' "$SCRATCH/notify.txt")" -eq 2 ]; }
wait_until -s 'cat "$SCRATCH/notify.txt"' 5 "READY=1 after SIGHUP" ready_twice
stop_daemon TERM
unset NOTIFY_SOCKET
[ "$DAEMON_STATUS" -eq 0 ] || fail "advisord exited $DAEMON_STATUS"
# Sent before it exited; the listener may not have written it yet.
wait_until -s 'cat "$SCRATCH/notify.txt"' 5 "the listener to write STOPPING=1" grep -q '^STOPPING=1' "$SCRATCH/notify.txt"
tr '\n' ' ' < "$SCRATCH/notify.txt" > "$SCRATCH/seq"
[ "$(cat "$SCRATCH/seq")" = "READY=1 RELOADING=1 READY=1 STOPPING=1 " ] ||
	fail "notify sequence: $(cat "$SCRATCH/seq")"
pass "Type=notify: READY=1, RELOADING=1 + READY=1 on SIGHUP, STOPPING=1 on SIGTERM"
