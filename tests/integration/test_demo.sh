#!/bin/sh
# test_demo.sh - scripts/deps and the build step of scripts/demo (issue 21),
# with stand-ins for apt-get, dpkg-query, id, configure and make on PATH:
# needs no root and installs nothing.
#  - deps prints one line while it installs, and apt-get's output only when
#    apt-get fails (then all of it, and a non-zero exit);
#  - after an in-tree build (config.status in the source tree) the demo
#    builds there instead of running configure in build-demo/, which
#    autoconf refuses ("source directory already configured").
. "$(dirname "$0")/lib.sh"

scratch_dir
set -e

fake=$SCRATCH/bin
mkdir -p "$fake"
# id -u says root, as the demo and deps require.
printf '#!/bin/sh\n[ "$1" = -u ] && { echo 0; exit 0; }\nexec /usr/bin/id "$@"\n' > "$fake/id"
# Every package missing unless FAKE_INSTALLED is set.
printf '#!/bin/sh\n[ -n "${FAKE_INSTALLED:-}" ] && echo "install ok installed"\nexit 0\n' > "$fake/dpkg-query"
# apt-get: 150 lines of progress per call, exit FAKE_APT_RC on install.
cat > "$fake/apt-get" <<'EOT'
#!/bin/sh
i=0
while [ $i -lt 150 ]; do echo "apt-get $1: progress line $i"; i=$((i + 1)); done
[ "$1" = install ] && exit "${FAKE_APT_RC:-0}"
exit 0
EOT
# make: records where it ran.
printf '#!/bin/sh\npwd >> "$FAKE_LOG/make.dirs"\necho "make: noise on stdout"; echo "make: noise on stderr" >&2\n' > "$fake/make"
chmod 755 "$fake"/*
export FAKE_LOG=$SCRATCH POLICY_RC_D=$SCRATCH/policy-rc.d
PATH=$fake:$PATH

# run NAME CMD...: status in $status, stdout and stderr together in $SCRATCH/NAME.out
run() {
	name=$1; shift
	set +e
	"$@" > "$SCRATCH/$name.out" 2>&1
	status=$?
	set -e
}

run deps_ok "$top_srcdir/scripts/deps"
[ "$status" -eq 0 ] || fail "deps: exit $status: $(cat "$SCRATCH/deps_ok.out")"
[ "$(wc -l < "$SCRATCH/deps_ok.out")" -eq 1 ] ||
	fail "deps printed $(wc -l < "$SCRATCH/deps_ok.out") lines, expected 1: $(head -5 "$SCRATCH/deps_ok.out")"
grep -q "^scripts/deps: installing [0-9]* Debian packages: .*jq.* done$" "$SCRATCH/deps_ok.out" ||
	fail "deps: $(cat "$SCRATCH/deps_ok.out")"
[ ! -e "$POLICY_RC_D" ] || fail "deps left its policy-rc.d behind"
pass "scripts/deps installing: one line, apt-get's 300 lines kept back"

FAKE_APT_RC=100 run deps_bad "$top_srcdir/scripts/deps"
[ "$status" -ne 0 ] || fail "deps: apt-get failed, yet exit 0"
grep -q "apt-get update: progress line 149" "$SCRATCH/deps_bad.out" &&
	grep -q "apt-get install: progress line 149" "$SCRATCH/deps_bad.out" &&
	grep -q "apt-get failed (exit 100); its output is above" "$SCRATCH/deps_bad.out" ||
	fail "deps: apt-get's output not shown on failure: $(tail -3 "$SCRATCH/deps_bad.out")"
pass "scripts/deps when apt-get fails: all of its output, and exit non-zero"

FAKE_INSTALLED=1 run deps_none "$top_srcdir/scripts/deps"
[ "$status" -eq 0 ] && [ ! -s "$SCRATCH/deps_none.out" ] || fail "deps with nothing missing: $(cat "$SCRATCH/deps_none.out")"
pass "scripts/deps with nothing missing: silent"

# A source tree of the demo's shape: scripts/, and a configure that refuses
# a build directory once the tree itself is configured, as autoconf's does.
tree=$SCRATCH/top
mkdir -p "$tree/scripts"
cp "$top_srcdir/scripts/demo" "$top_srcdir/scripts/deps" "$tree/scripts/"
cat > "$tree/configure" <<'EOT'
#!/bin/sh
top=$(cd "$(dirname "$0")" && pwd)
if [ -f "$top/config.status" ] && [ "$(pwd)" != "$top" ]; then
	echo "configure: error: source directory already configured; run \"make distclean\" there first" >&2
	exit 1
fi
echo "configure: noise"
: > Makefile
EOT
chmod 755 "$tree/configure"
: > "$tree/config.status"
: > "$tree/Makefile"
FAKE_INSTALLED=1 DEMO_STOP_AFTER=build CLUSTER_DIR=$SCRATCH/cluster run intree "$tree/scripts/demo"
[ "$status" -eq 0 ] || fail "demo after an in-tree build: exit $status: $(cat "$SCRATCH/intree.out")"
[ "$(cat "$SCRATCH/make.dirs")" = "$tree" ] || fail "demo built in $(cat "$SCRATCH/make.dirs"), not the configured tree $tree"
grep -q "noise" "$SCRATCH/intree.out" && fail "demo printed the build's output: $(cat "$SCRATCH/intree.out")"
grep -q "built in $tree" "$SCRATCH/intree.out" || fail "demo: $(cat "$SCRATCH/intree.out")"
pass "scripts/demo after an in-tree build: builds in the tree, quietly"

rm -f "$tree/config.status" "$tree/Makefile" "$SCRATCH/make.dirs"
FAKE_INSTALLED=1 DEMO_STOP_AFTER=build CLUSTER_DIR=$SCRATCH/cluster run vpath "$tree/scripts/demo"
[ "$status" -eq 0 ] && [ "$(cat "$SCRATCH/make.dirs")" = "$tree/build-demo" ] ||
	fail "demo without an in-tree build: exit $status, make in $(cat "$SCRATCH/make.dirs" 2>/dev/null): $(cat "$SCRATCH/vpath.out")"
pass "scripts/demo on a clean tree: builds in build-demo/"
