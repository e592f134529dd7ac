# lib.sh - shared helpers for the daemon integration tests (sourced, POSIX sh).
#
# Each test gets a scratch directory, a private advisord on its own socket
# with the shipped etc/catalog.yaml and a test policy, and tears it all
# down on exit.  Needs top_srcdir and top_builddir (set by make check).

: "${top_srcdir:?run from make check, or set top_srcdir}"
: "${top_builddir:?run from make check, or set top_builddir}"

# ADVISORD and ADVISORCTL may name installed programs (scripts/package-test).
ADVISORD=${ADVISORD:-$top_builddir/daemon/advisord}
ADVISORCTL=${ADVISORCTL:-$top_builddir/daemon/advisorctl}
WIRECLIENT=${WIRECLIENT:-$top_builddir/tests/integration/wireclient}
CATALOG=$top_srcdir/etc/catalog.yaml
DAEMON_PID=

fail() {
	echo "FAIL: $*" >&2
	if [ -n "${SCRATCH:-}" ] && [ -f "$SCRATCH/advisord.log" ]; then
		echo "--- advisord log (last 20 lines)" >&2
		tail -n 20 "$SCRATCH/advisord.log" >&2
	fi
	exit 1
}

pass() {
	echo "ok - $*"
}

skip_all() {
	echo "SKIP: $*"
	exit 77
}

cleanup() {
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -KILL "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
	fi
	[ -n "${SCRATCH:-}" ] && [ -z "${KEEP_SCRATCH:-}" ] && rm -rf "$SCRATCH"
}

# world_reachable DIR: every user can enter DIR (it and each directory
# above it has the x bit for others).
world_reachable() {
	_wr_dir=$1
	while :; do
		_wr_mode=$(stat -L -c %a "$_wr_dir" 2> /dev/null) || return 1
		[ $((0$_wr_mode & 1)) -eq 1 ] || return 1
		[ "$_wr_dir" != / ] && [ "$_wr_dir" != . ] || return 0
		_wr_dir=$(dirname "$_wr_dir")
	done
}

# Creates $SCRATCH (world-traversable so tests can run commands as nobody:
# under /tmp when TMPDIR is a directory other users cannot enter).
scratch_dir() {
	_sd_base=${TMPDIR:-/tmp}
	world_reachable "$_sd_base" || _sd_base=/tmp
	SCRATCH=$(mktemp -d "$_sd_base/advisor-test.XXXXXX") || fail "mktemp"
	chmod 755 "$SCRATCH"
	trap cleanup EXIT
	trap 'exit 1' INT TERM
	SOCK=$SCRATCH/run/advisord.sock
	DB=$SCRATCH/lib/decisions.db
	POLICY=$SCRATCH/policy.yaml
}

# write_policy [MAX_GPUS_H100]: the shipped policy's shape with a test knob.
write_policy() {
	cat > "$POLICY" <<EOT
mode: enforce
user_mode_override: false
memory: { reserve_gib: 3, warn_headroom: 0.10 }
checkpoint: { gpu_mtbf_hours: 25000, restart_minutes: 10, storage_write_gbps: 50,
              warn_extra_waste: 0.02, reject_extra_waste: 0.10, require_above_gpus: 64 }
layout: { max_pipeline_bubble: 0.25 }
log: { retention_days: 90 }
partitions:
  h100: { gpu: h100-sxm, gpus_per_node: 8, mode: enforce, max_gpus: ${1:-2048} }
  debug: { gpu: h100-sxm, mode: warn, max_gpus: 16 }
exempt: { users: [], accounts: [] }
admins: { users: [root], groups: [] }
EOT
}

# start_daemon [ADVISORD OPTIONS...]: starts it and waits for the socket.
# ADVISORD_WRAPPER (e.g. "valgrind --error-exitcode=1 --leak-check=full")
# runs the daemon under a tool; the tool must keep the daemon's pid and
# pass its exit status through, as valgrind does.
start_daemon() {
	served=$(grep -c ' serving ' "$SCRATCH/advisord.log" 2>/dev/null) || served=0
	# shellcheck disable=SC2086
	${ADVISORD_WRAPPER:-} "$ADVISORD" --foreground --catalog "$CATALOG" --policy "$POLICY" \
		--socket "$SOCK" --db "$DB" "$@" >> "$SCRATCH/advisord.log" 2>&1 &
	DAEMON_PID=$!
	i=0
	limit=200
	[ -n "${ADVISORD_WRAPPER:-}" ] && limit=1200
	while ! ctl status > /dev/null 2>&1; do
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "advisord exited at start"
		i=$((i + 1))
		[ $i -lt $limit ] || fail "advisord did not answer on $SOCK within $((limit / 20)) s"
		sleep 0.05
	done
	# Its workers answer as soon as they run, a moment before it logs
	# that it serves (and tells systemd READY=1): a test that reads that
	# line waits for it, bounded as above.
	while [ "$(grep -c ' serving ' "$SCRATCH/advisord.log" 2>/dev/null || echo 0)" -le "$served" ]; do
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "advisord exited at start"
		i=$((i + 1))
		[ $i -lt $limit ] || fail "advisord did not log that it serves within $((limit / 20)) s"
		sleep 0.05
	done
}

# stop_daemon [SIGNAL]: stops it and sets DAEMON_STATUS.
stop_daemon() {
	kill "-${1:-TERM}" "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_STATUS=$?
	DAEMON_PID=
}

ctl() {
	"$ADVISORCTL" --socket "$SOCK" "$@"
}

ctl_local() {
	"$ADVISORCTL" --local --catalog "$CATALOG" --policy "$POLICY" "$@"
}

# ---- commands run as another user ------------------------------------------
# The build and source trees may sit under a directory other users cannot
# enter: a clone under /root, or under `mktemp -d` (mode 0700).  What a test
# runs or loads as an unprivileged user (advisorctl, wireclient, the SPANK
# plugin that sbatch loads) is therefore staged first: a copy in
# $SCRATCH/stage, which every user can read.  Files a test writes for such a
# user (policies, configs, job scripts, plugstack.conf) go to $SCRATCH or
# another world-traversable scratch directory, readable thanks to the umask.
umask 022

# stage FILE: copies FILE to $SCRATCH/stage (once; readable by all, and
# executable by all when it is executable) and prints the copy's path.
stage() {
	[ -n "${SCRATCH:-}" ] || fail "stage $1: no scratch directory yet (scratch_dir)"
	[ -f "$1" ] || fail "stage $1: no such file"
	_st_copy=$SCRATCH/stage/$(basename "$1")
	if [ -f "$_st_copy" ]; then
		cmp -s "$1" "$_st_copy" || fail "stage $1: another file of that name is staged"
	else
		_st_mode=644
		[ -x "$1" ] && _st_mode=755
		# A copy under a name of its own, then renamed: tests stage from
		# commands run in the background too.
		mkdir -p "$SCRATCH/stage" && chmod 755 "$SCRATCH/stage" &&
			_st_tmp=$(mktemp "$SCRATCH/stage/.tmp.XXXXXX") && cp "$1" "$_st_tmp" &&
			chmod "$_st_mode" "$_st_tmp" && mv -f "$_st_tmp" "$_st_copy" ||
			fail "cannot stage $1 in $SCRATCH/stage"
	fi
	world_reachable "$SCRATCH/stage" || fail "$SCRATCH/stage is not reachable by other users"
	echo "$_st_copy"
}

# as_user USER CMD [ARGS...]: runs CMD as USER, with USER's group and
# groups.  A CMD given as a path (a program of the build tree) runs from its
# staged copy; when it cannot be staged, the status is 126 and the reason is
# on stderr, as for a command that cannot run.
as_user() {
	_au_user=$1
	_au_cmd=$2
	shift 2
	case $_au_cmd in */*) _au_cmd=$(stage "$_au_cmd") || return 126 ;; esac
	setpriv --reuid="$_au_user" --regid="$(id -g "$_au_user")" --init-groups -- "$_au_cmd" "$@"
}

# make_users USER...: creates each user that does not exist (a system
# user, no home, no login shell) and remembers it in MADE_USERS, for
# remove_users to take away again in the test's cleanup.
MADE_USERS=
make_users() {
	for _mu in "$@"; do
		id "$_mu" > /dev/null 2>&1 && continue
		useradd --system --no-create-home --user-group --shell /usr/sbin/nologin "$_mu" ||
			fail "cannot create $_mu"
		MADE_USERS="$MADE_USERS $_mu"
	done
}

remove_users() {
	for _mu in $MADE_USERS; do userdel "$_mu" 2> /dev/null; done
	MADE_USERS=
}

# as_nobody CMD...: runs a command as an unprivileged user.
as_nobody() {
	as_user nobody "$@"
}

# expect_status WANT DESCRIPTION CMD...: runs CMD, checks its exit status.
expect_status() {
	want=$1
	what=$2
	shift 2
	"$@" > "$SCRATCH/out" 2> "$SCRATCH/err"
	got=$?
	[ "$got" -eq "$want" ] || {
		cat "$SCRATCH/out" "$SCRATCH/err" >&2
		fail "$what: exit $got, want $want"
	}
}

# value KEY FILE: the value of a key=value line.
value() {
	sed -n "s/^$1=//p" "$2" | head -n 1
}

# dgram_listen SOCKET FILE WHAT: a background listener (python3 as $PY)
# that appends every datagram arriving on the unix socket SOCKET to FILE,
# one per line: a stand-in for /dev/log or systemd's NOTIFY_SOCKET.
# LISTENER is its pid; it is killed on exit.  Returns once SOCKET exists.
dgram_listen() {
	"$PY" - "$1" "$2" <<'EOT' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(s.recv(65536) + b"\n")
EOT
	LISTENER=$!
	trap 'kill "$LISTENER" 2> /dev/null; cleanup' EXIT
	i=0
	while [ ! -S "$1" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "$3 did not appear"; sleep 0.05
	done
}

# ---- a private MariaDB server (issue 13) ---------------------------------------------
# mariadb_start DIR: mariadbd with its datadir in DIR (created on first use,
# kept across restarts), on the unix socket DIR/mysqld.sock and on loopback
# port MARIADB_PORT (a free one is picked on first use and kept, so a
# restart comes back where the clients look).  The database "advisor" and
# the user advisor@% (password in MARIADB_PW) with the grants the README
# gives are made on first use.  Sets MARIADB_PID and MARIADB_SOCK; the
# server is killed on exit by mariadb_cleanup (tests chain it into their trap).
MARIADB_PID=
MARIADB_PW=advisor-test-pw
mariadb_start() {
	MARIADB_DIR=$1
	MARIADB_SOCK=$MARIADB_DIR/mysqld.sock
	if [ -z "${MARIADB_PORT:-}" ]; then
		# Below the ephemeral range, apart from test_tcp.sh's ports.
		MARIADB_PORT=$((14000 + ($$ % 2000) * 3))
		while ss -ltnH 2> /dev/null | awk '{print $4}' | grep -q ":$MARIADB_PORT\$"; do
			MARIADB_PORT=$((MARIADB_PORT + 1))
		done
	fi
	fresh=
	if [ ! -d "$MARIADB_DIR/data/mysql" ]; then
		mkdir -p "$MARIADB_DIR" || fail "mkdir $MARIADB_DIR"
		mariadb-install-db --no-defaults --datadir="$MARIADB_DIR/data" --user=root \
			--auth-root-authentication-method=normal --skip-test-db \
			> "$MARIADB_DIR/install.log" 2>&1 ||
			fail "mariadb-install-db: $(tail -n 5 "$MARIADB_DIR/install.log")"
		fresh=1
	fi
	# Small: a test server beside the daemon on 2 shared cores.
	mariadbd --no-defaults --datadir="$MARIADB_DIR/data" --socket="$MARIADB_SOCK" \
		--port="$MARIADB_PORT" --bind-address=127.0.0.1 --pid-file="$MARIADB_DIR/pid" \
		--log-error="$MARIADB_DIR/err.log" --user=root --skip-name-resolve \
		--innodb-buffer-pool-size=64M --max-connections=200 > /dev/null 2>&1 &
	MARIADB_PID=$!
	i=0
	until mariadb-admin --no-defaults --socket="$MARIADB_SOCK" -uroot ping > /dev/null 2>&1; do
		kill -0 "$MARIADB_PID" 2> /dev/null || fail "mariadbd exited: $(tail -n 5 "$MARIADB_DIR/err.log")"
		i=$((i + 1)); [ $i -lt 600 ] || fail "mariadbd did not answer within 30 s"
		sleep 0.05
	done
	[ -z "$fresh" ] || mariadb_sql <<EOT || fail "cannot create the advisor database and user"
CREATE DATABASE advisor;
CREATE USER 'advisor'@'%' IDENTIFIED BY '$MARIADB_PW';
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX ON advisor.* TO 'advisor'@'%';
EOT
}

# mariadb_stop [SIGNAL]: stops the server (default: a clean shutdown; KILL: a crash).
mariadb_stop() {
	[ -n "$MARIADB_PID" ] || return 0
	if [ "${1:-}" = KILL ]; then
		kill -KILL "$MARIADB_PID" 2> /dev/null
	else
		mariadb-admin --no-defaults --socket="$MARIADB_SOCK" -uroot shutdown > /dev/null 2>&1 ||
			kill -TERM "$MARIADB_PID" 2> /dev/null
	fi
	wait "$MARIADB_PID" 2> /dev/null
	MARIADB_PID=
}

mariadb_cleanup() {
	[ -n "$MARIADB_PID" ] && kill -KILL "$MARIADB_PID" 2> /dev/null && wait "$MARIADB_PID" 2> /dev/null
	MARIADB_PID=
}

# mariadb_sql [ARGS]: the mariadb client as root on the private server, database advisor
# when it exists; -N -B output (no headers, tab-separated).
mariadb_sql() {
	mariadb --no-defaults --socket="$MARIADB_SOCK" -uroot -N -B "$@"
}
