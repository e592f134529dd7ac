#!/bin/sh
# build.sh - builds the libFuzzer targets of tests/fuzz with clang.
#
# The normal build uses gcc and no -fsanitize=fuzzer, so the targets are
# compiled here directly from the sources: common/*.c, plugin/jobreq.c, the
# daemon's request handler and the wire schema, which protoc-c generates
# into OUTDIR/gen.  Everything is built with ASan + UBSan (no recovery) and
# libFuzzer coverage, so a sanitizer report is a crash.
#
# usage: build.sh [OUTDIR [CONFIG_H]]
#   OUTDIR    where the targets go (default: ./fuzz-build)
#   CONFIG_H  config.h of a configured tree (default: a minimal one)
# env: CLANG (default clang), FUZZ_CFLAGS (extra flags), JOBS (default nproc)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-fuzz-build}
config_h=${2:-}
cc=${CLANG:-clang}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
targets="fuzz_catalog fuzz_policy fuzz_options fuzz_jobreq fuzz_wire"

die() { echo "build.sh: $*" >&2; exit 1; }

command -v "$cc" >/dev/null 2>&1 || die "$cc not found; install the Debian package clang"
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

mkdir -p "$out/gen" "$out/obj"
out=$(cd "$out" && pwd)
gen=$out/gen
obj=$out/obj

protoc-c --proto_path="$top/proto" --c_out="$gen" "$top/proto/advisor.proto"
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
# Keep the old file (and its time stamp) when nothing changed.
if cmp -s "$gen/config.h.new" "$gen/config.h"; then rm -f "$gen/config.h.new"; else mv "$gen/config.h.new" "$gen/config.h"; fi

deps_cflags=$(pkg-config --cflags yaml-0.1 libprotobuf-c sqlite3 json-c)
deps_libs="$(pkg-config --libs yaml-0.1 libprotobuf-c sqlite3 json-c) -lslurm -lpthread -lm"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cflags="-std=gnu11 -g -O1 $san -fsanitize=fuzzer-no-link -I$gen -I$top/common -I$top/plugin -I$top/daemon \
 -DADV_CONFDIR=\"/etc/advisor\" -DADV_SOCKET_PATH=\"/run/advisor/advisord.sock\" \
 -DADV_DB_PATH=\"/var/lib/advisor/decisions.db\" $deps_cflags ${FUZZ_CFLAGS:-}"

# The code under test, once for all targets.  daemon/msg.c is left out:
# fuzz_wire.c has its own msg_log that drops the per-decision log lines.
lib_srcs="$gen/advisor.pb-c.c $(ls "$top"/common/*.c) $top/plugin/jobreq.c"
# Every daemon module but the two programs' mains; the archive below keeps
# each target to the modules it reaches.
for s in "$top"/daemon/*.c; do
	case ${s##*/} in advisord.c|advisorctl.c|msg.c) continue ;; esac
	lib_srcs="$lib_srcs $s"
done

# One compile line per source, run $jobs at a time; a source is rebuilt when
# it, any header of the tree or config.h is newer than its object.
newest_hdr=$(ls -t "$top"/common/*.h "$top"/plugin/*.h "$top"/daemon/*.h "$gen"/*.h | head -n 1)
for s in $lib_srcs; do
	o=$obj/$(basename "$(dirname "$s")")_$(basename "$s" .c).o
	if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ "$newest_hdr" -nt "$o" ]; then
		printf '%s\n%s\n' "$s" "$o"
	fi
done | xargs -r -n 2 -P "$jobs" sh -c "echo '  CC      '\"\$0\" && exec $cc $cflags -w -c \"\$0\" -o \"\$1\""

# An archive, so that each target links only the modules it calls.
rm -f "$out/libadvfuzz.a"
objs=""
for s in $lib_srcs; do objs="$objs $obj/$(basename "$(dirname "$s")")_$(basename "$s" .c).o"; done
# shellcheck disable=SC2086
ar rcs "$out/libadvfuzz.a" $objs
for t in $targets; do
	echo "  CCLD    $t"
	# shellcheck disable=SC2086
	$cc $cflags -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
		-DFUZZ_TOP_SRCDIR="\"$top\"" -fsanitize=fuzzer "$here/$t.c" "$out/libadvfuzz.a" \
		$deps_libs -o "$out/$t"
done
# The seed generator of fuzz_wire (tests/fuzz/corpus/wire): plain, no sanitizers.
echo "  CCLD    gen_wire_seeds"
# shellcheck disable=SC2086
$cc -std=gnu11 -O1 -Wall -Wextra -Werror -I"$gen" $deps_cflags "$here/gen_wire_seeds.c" \
	"$gen/advisor.pb-c.c" $(pkg-config --libs libprotobuf-c) -o "$out/gen_wire_seeds"
echo "build.sh: targets in $out: $targets"
