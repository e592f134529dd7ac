#!/bin/sh
# build.sh - builds the libFuzzer targets of tests/fuzz with clang.
#
# The normal build uses gcc and no -fsanitize=fuzzer, so the targets are
# compiled here directly from the sources, which protoc-c's wire schema
# joins (generated into OUTDIR/gen).  build.sh knows no file names: it
# reads the source lists from the Makefile.am files, so a file moved,
# split or added there is built here too:
#   common/Makefile.am                libutil_la_SOURCES, libadvisor_la_SOURCES
#   common/jobread/Makefile.am        libjobread_la_SOURCES
#   common/jobread/shell/Makefile.am  libshell_la_SOURCES
#   common/jobread/cfg/Makefile.am    libcfg_la_SOURCES
#   daemon/Makefile.am                advisord_SOURCES, SERVICE_SOURCES and
#                                     advisorctl_SOURCES (the printers of
#                                     fuzz_path), less the mains advisord.c
#                                     and ctl/advisorctl.c, and msg.c:
#                                     msg_stub.h has a msg_log that drops
#                                     the per-decision log lines
# Each entry is a path from its Makefile.am's folder; .h entries are
# skipped, .c is compiled with clang and .cpp (the TOML reader, toml++)
# with clang++.  Sources include the bare name within their folder and the
# path from common/ or daemon/ across folders, hence -I common -I daemon.
# Everything is built with ASan + UBSan (no recovery) and libFuzzer
# coverage, so a sanitizer report is a crash.  OUTDIR/targets lists the
# targets built; run.sh runs those.
#
# usage: build.sh [OUTDIR [CONFIG_H]]
#   OUTDIR    where the targets go (default: ./fuzz-build)
#   CONFIG_H  config.h of a configured tree (default: a minimal one)
# env: CLANG (default clang), CLANGXX (default clang++), FUZZ_CFLAGS and
#      FUZZ_CXXFLAGS (extra flags), JOBS (default nproc)
#
# Only OUTDIR and $TMPDIR are written: the source tree may be read-only
# (make distcheck's).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-fuzz-build}
config_h=${2:-}
cc=${CLANG:-clang}
cxx=${CLANGXX:-clang++}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

die() { echo "build.sh: $*" >&2; exit 1; }

command -v "$cc" >/dev/null 2>&1 || die "$cc not found; install the Debian package clang"
command -v "$cxx" >/dev/null 2>&1 || die "$cxx not found; install the Debian package clang"
command -v protoc-c >/dev/null 2>&1 || die "protoc-c not found; install the Debian package protobuf-c-compiler"
command -v pkg-config >/dev/null 2>&1 || die "pkg-config not found; install the Debian package pkg-config"
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n){(void)d;(void)n;return 0;}\n' \
	> "${TMPDIR:-/tmp}/advfuzz-probe.$$.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined -o "${TMPDIR:-/tmp}/advfuzz-probe.$$" \
	"${TMPDIR:-/tmp}/advfuzz-probe.$$.c" 2>/dev/null; then
	rm -f "${TMPDIR:-/tmp}/advfuzz-probe.$$" "${TMPDIR:-/tmp}/advfuzz-probe.$$.c"
	die "$cc cannot link -fsanitize=fuzzer; install the Debian package libclang-rt-14-dev"
fi
rm -f "${TMPDIR:-/tmp}/advfuzz-probe.$$" "${TMPDIR:-/tmp}/advfuzz-probe.$$.c"

# ---- the source lists, from the Makefile.am files -----------------------------

# am_words FILE VAR...: the words of the variables VAR of the Makefile.am
# FILE, one a line.  Lines continued with a backslash are joined, comments
# dropped, "=", "+=" and ":=" understood, and a word that is $(NAME) or
# ${NAME} is replaced by the words of NAME, which must be a variable of the
# same file (a configure substitution in a source list is an error here).
# Automake conditionals are not evaluated: both branches count.
am_words() {
	f=$1
	shift
	awk -v want="$*" '
	function expand(name, depth,    n, i, w, inner, res) {
		if (!(name in defined)) {
			printf "build.sh: %s: $(%s) is not a variable of this file\n", FILENAME, name > "/dev/stderr"
			bad = 1
			return ""
		}
		if (depth > 16) {
			printf "build.sh: %s: $(%s) refers to itself\n", FILENAME, name > "/dev/stderr"
			bad = 1
			return ""
		}
		res = ""
		n = split(val[name], w, /[ \t]+/)
		for (i = 1; i <= n; i++) {
			if (w[i] == "")
				continue
			if (w[i] ~ /^\$[({][A-Za-z_][A-Za-z0-9_]*[)}]$/) {
				inner = substr(w[i], 3, length(w[i]) - 3)
				res = res " " expand(inner, depth + 1)
			} else if (w[i] ~ /\$/) {
				printf "build.sh: %s: %s: cannot read \"%s\"\n", FILENAME, name, w[i] > "/dev/stderr"
				bad = 1
			} else {
				res = res " " w[i]
			}
		}
		return res
	}
	{
		line = $0
		while (line ~ /\\$/) {
			sub(/\\$/, " ", line)
			if ((getline more) <= 0)
				break
			line = line more
		}
		sub(/#.*/, "", line)
		if (!match(line, /^[A-Za-z_][A-Za-z0-9_]*[ \t]*[+:]?=/))
			next
		name = substr(line, 1, RLENGTH)
		rest = substr(line, RLENGTH + 1)
		append = (name ~ /[+]=$/)
		sub(/[ \t]*[+:]?=$/, "", name)
		if (append && (name in defined))
			val[name] = val[name] " " rest
		else
			val[name] = rest
		defined[name] = 1
	}
	END {
		n = split(want, names, " ")
		for (k = 1; k <= n; k++) {
			m = split(expand(names[k], 0), words, " ")
			for (j = 1; j <= m; j++)
				print words[j]
		}
		exit bad
	}' "$f"
}

# am_sources DIR VAR...: the .c and .cpp sources of the variables VAR of
# DIR/Makefile.am (DIR from the top of the tree), as paths from the top.
am_sources() {
	d=$1
	shift
	[ -f "$top/$d/Makefile.am" ] || die "$d/Makefile.am not found"
	words=$(am_words "$top/$d/Makefile.am" "$@") || die "cannot read $* of $d/Makefile.am"
	[ -n "$words" ] || die "$d/Makefile.am: $* empty"
	for w in $words; do
		case $w in
		*.h|*.hh|*.hpp) ;;
		*.c|*.cpp)
			[ -f "$top/$d/$w" ] || die "$d/Makefile.am lists $w, which is not in the tree"
			echo "$d/$w" ;;
		*) die "$d/Makefile.am: $w: not a source build.sh knows (.c, .cpp, .h)" ;;
		esac
	done
}

# The code under test, once for all targets: every library's sources and
# the modules of advisord and advisorctl, less their mains and msg.c (see
# above).
lib_srcs=$(am_sources common libutil_la_SOURCES libadvisor_la_SOURCES) || exit 1
lib_srcs="$lib_srcs $(am_sources common/jobread libjobread_la_SOURCES)" || exit 1
lib_srcs="$lib_srcs $(am_sources common/jobread/shell libshell_la_SOURCES)" || exit 1
lib_srcs="$lib_srcs $(am_sources common/jobread/cfg libcfg_la_SOURCES)" || exit 1
daemon_srcs=$(am_sources daemon advisord_SOURCES SERVICE_SOURCES advisorctl_SOURCES) || exit 1
for s in $daemon_srcs; do
	case $s in daemon/advisord.c|daemon/ctl/advisorctl.c|daemon/msg.c) continue ;; esac
	# SERVICE_SOURCES is in both programs' sources too: each source once.
	case " $lib_srcs " in *" $s "*) continue ;; esac
	lib_srcs="$lib_srcs $s"
done

# ---- generated files ----------------------------------------------------------

mkdir -p "$out/gen" "$out/obj"
out=$(cd "$out" && pwd)
gen=$out/gen
obj=$out/obj

# Each generated file replaces the old one only when it differs, so that
# its time stamp does not make every object out of date.
update() { if cmp -s "$1.new" "$1"; then rm -f "$1.new"; else mv "$1.new" "$1"; fi; }

rm -rf "$gen/new"
mkdir "$gen/new"
protoc-c --proto_path="$top/proto" --c_out="$gen/new" "$top/proto/advisor.proto"
for f in advisor.pb-c.c advisor.pb-c.h; do
	mv "$gen/new/$f" "$gen/$f.new"
	update "$gen/$f"
done
rmdir "$gen/new"
if [ -n "$config_h" ]; then
	cp "$config_h" "$gen/config.h.new"
else
	cat > "$gen/config.h.new" <<'EOF'
/* Minimal config.h for the fuzz build (no configured tree given). */
#define _GNU_SOURCE 1
#define PACKAGE "advisor"
#define PACKAGE_VERSION "fuzz"
#define ADVISOR_SLURM_VERSION "fuzz"
EOF
fi
update "$gen/config.h"

# ---- the library --------------------------------------------------------------

deps_cflags=$(pkg-config --cflags yaml-0.1 libprotobuf-c sqlite3 json-c munge libmariadb libcrypto)
deps_libs="$(pkg-config --libs yaml-0.1 libprotobuf-c sqlite3 json-c munge libmariadb libcrypto) -lslurm -lpthread -lm"
# A tree configured with libsystemd (socket activation, issue 30) links it.
if grep -q '^#define HAVE_LIBSYSTEMD 1' "$gen/config.h"; then
	deps_libs="$deps_libs $(pkg-config --libs libsystemd)"
fi
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# The flags are expanded unquoted, so the quotes of the -D strings stay.
# shellcheck disable=SC2089
cflags="-std=gnu11 -g -O1 $san -fsanitize=fuzzer-no-link -I$gen -I$top/common -I$top/daemon \
 -DADV_CONFDIR=\"/etc/advisor\" -DADV_SOCKET_PATH=\"/run/advisor/advisord.sock\" \
 -DADV_DB_PATH=\"/var/lib/advisor/decisions.db\" $deps_cflags ${FUZZ_CFLAGS:-}"
cxxflags="-std=c++17 -g -O1 $san -fsanitize=fuzzer-no-link -I$gen -I$top/common -I$top/daemon \
 ${FUZZ_CXXFLAGS:-}"

# obj_of SRC: its object, named after its path (common/engine/memory.c ->
# OUTDIR/obj/common_engine_memory.o), so that equal names in two folders
# do not meet.
obj_of() { o=$(echo "${1%.*}" | tr / _); echo "$obj/$o.o"; }

# One compile line per source, run $jobs at a time; a source is rebuilt when
# it, any header of the tree or config.h is newer than its object.
newest_hdr=$(find "$top/common" "$top/daemon" "$gen" -name '*.h' -exec ls -t {} + | head -n 1)
BS_CC=$cc BS_CXX=$cxx BS_CFLAGS=$cflags BS_CXXFLAGS=$cxxflags
# shellcheck disable=SC2090
export BS_CC BS_CXX BS_CFLAGS BS_CXXFLAGS
for s in $lib_srcs gen/advisor.pb-c.c; do
	case $s in gen/*) src=$out/$s ;; *) src=$top/$s ;; esac
	o=$(obj_of "$s")
	if [ ! -f "$o" ] || [ "$src" -nt "$o" ] || [ "$newest_hdr" -nt "$o" ]; then
		printf '%s\n%s\n' "$src" "$o"
	fi
done | xargs -r -n 2 -P "$jobs" sh -c '
	case $0 in
	*.cpp) echo "  CXX     $0"; exec $BS_CXX $BS_CXXFLAGS -w -c "$0" -o "$1" ;;
	*)     echo "  CC      $0"; exec $BS_CC $BS_CFLAGS -w -c "$0" -o "$1" ;;
	esac' || die "a source does not compile"

# An archive, so that each target links only the modules it reaches (the
# linker rescans an archive until nothing more resolves, so the order of
# its members does not matter).
rm -f "$out/libadvfuzz.a"
objs=""
for s in $lib_srcs gen/advisor.pb-c.c; do objs="$objs $(obj_of "$s")"; done
# shellcheck disable=SC2086
ar rcs "$out/libadvfuzz.a" $objs

# ---- targets ------------------------------------------------------------------
# Linked by clang++ (the TOML reader is C++).
target_cflags="-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes"
built=""
# build_target NAME SOURCE [EXTRA CFLAGS]
build_target() {
	echo "  CCLD    $1"
	# shellcheck disable=SC2086,SC2090
	$cc $cflags $target_cflags -DFUZZ_TOP_SRCDIR="\"$top\"" ${3:-} -c "$2" -o "$obj/target_$1.o" ||
		die "$1 does not compile"
	rm -f "$out/$1"
	# shellcheck disable=SC2086
	$cxx $san -fsanitize=fuzzer "$obj/target_$1.o" "$out/libadvfuzz.a" $deps_libs -lstdc++ \
		-o "$out/$1" || die "$1 does not link"
	built="$built $1"
}

for t in fuzz_catalog fuzz_policy fuzz_options fuzz_jobreq fuzz_wire fuzz_advconf; do
	build_target "$t" "$here/$t.c"
done
# The job reader: its config trees once per format, the shell evaluator,
# and the whole reader with the engine after it.
for fmt in yaml json toml; do
	build_target "fuzz_cfg_$fmt" "$here/fuzz_cfg.c" \
		"-DFUZZ_CFG_FORMAT=CFG_$(echo "$fmt" | tr a-z A-Z)"
done
build_target fuzz_shell "$here/fuzz_shell.c"
# The batch script as the clients read and ship it (issue 27).
build_target fuzz_scripttext "$here/fuzz_scripttext.c"
build_target fuzz_jobread "$here/fuzz_jobread.c"
# The program a job runs, read as text (issue 28): scanner and reader.
build_target fuzz_pyprog "$here/fuzz_pyprog.c"
# The engine's properties (issue 26): the checks of tests/unit/soundness.h.
build_target fuzz_soundness "$here/fuzz_soundness.c"
# A job's text through every output (issue 27): reader, engine, printers,
# wire and decision log.
build_target fuzz_path "$here/fuzz_path.c"
# The Lua module of slurmctld's job_submit (issue 31) with its plugin
# sources (plugin/Makefile.am advisor_la_SOURCES), where Lua 5.1 is there.
if pkg-config --exists lua5.1; then
	lua_cflags=$(pkg-config --cflags lua5.1)
	lua_objs=
	for s in $(am_sources plugin advisor_la_SOURCES); do
		o=$(obj_of "$s")
		echo "  CC      $s"
		# shellcheck disable=SC2086
		$cc $cflags $lua_cflags -I"$top/plugin" -w -c "$top/$s" -o "$o" || die "$s does not compile"
		lua_objs="$lua_objs $o"
	done
	echo "  CCLD    fuzz_jobsubmit"
	# shellcheck disable=SC2086
	$cc $cflags $target_cflags $lua_cflags -c "$here/fuzz_jobsubmit.c" -o "$obj/target_fuzz_jobsubmit.o" ||
		die "fuzz_jobsubmit does not compile"
	# shellcheck disable=SC2086
	$cxx $san -fsanitize=fuzzer "$obj/target_fuzz_jobsubmit.o" $lua_objs "$out/libadvfuzz.a" $deps_libs \
		$(pkg-config --libs lua5.1) -lstdc++ -o "$out/fuzz_jobsubmit" || die "fuzz_jobsubmit does not link"
	built="$built fuzz_jobsubmit"
fi
echo "$built" | tr ' ' '\n' | sed '/^$/d' > "$out/targets"

# The seed generator of fuzz_wire (tests/fuzz/corpus/wire): plain, no sanitizers.
echo "  CCLD    gen_wire_seeds"
# shellcheck disable=SC2086
$cc -std=gnu11 -O1 -Wall -Wextra -Werror -I"$gen" $deps_cflags "$here/gen_wire_seeds.c" \
	"$gen/advisor.pb-c.c" $(pkg-config --libs libprotobuf-c) -o "$out/gen_wire_seeds"
echo "build.sh: targets in $out:" $built
