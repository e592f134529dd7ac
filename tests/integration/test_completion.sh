#!/bin/sh
# The bash completion (etc/advisor.bash-completion, issue 30) against the
# programs it completes: every command of advisorctl's commands[] table,
# each command's own --long options, advisord's options, and files where a
# path is wanted.  The completion reads the programs' --help, so these
# checks fail when a program's help stops listing what it parses.
. "$(dirname "$0")/lib.sh"

command -v bash > /dev/null || skip_all "bash is needed"
comp=$top_srcdir/etc/advisor.bash-completion
bin=$(dirname "$ADVISORCTL")

# complete WORD...: what the completion offers for the last word.
complete_words() {
	PATH=$bin:$(dirname "$ADVISORD"):$PATH bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		case $1 in advisord) _advisord ;; *) _advisorctl ;; esac
		printf "%s\n" "${COMPREPLY[@]}"' complete "$comp" "$@"
}

# The commands: those advisorctl dispatches on (its usage error lists them).
cmds=$("$ADVISORCTL" no-such-command 2>&1 | sed -n 's/.*(accepted: \(.*\))/\1/p' | tr -d ',')
[ -n "$cmds" ] || fail "advisorctl's unknown-command error lists no commands"
got=$(complete_words advisorctl "" | tr '\n' ' ')
for c in $cmds; do
	case " $got " in *" $c "*) ;; *) fail "advisorctl <TAB> lacks $c (got: $got)" ;; esac
done
[ "$(complete_words advisorctl --json rep)" = report ] || fail "advisorctl --json rep<TAB>"
[ "$(complete_words advisorctl --socket /tmp/s sh)" = show ] ||
	fail "the command after an option's argument: $(complete_words advisorctl --socket /tmp/s sh)"
pass "advisorctl <TAB>: the $(echo "$cmds" | wc -w) commands advisorctl dispatches on"

# Each command's options: its own --help's, among them the ones it parses.
for pair in "history --verdict" "history --job" "report --since" "check --script" \
	"check --model" "plan --gpus" "show --json"; do
	set -- $pair
	complete_words advisorctl "$1" -- | grep -qx -- "$2" ||
		fail "advisorctl $1 --<TAB> lacks $2"
done
complete_words advisorctl history --ver | grep -qx -- --verdict || fail "history --ver<TAB>"
complete_words advisord --check | grep -qx -- --check-config || fail "advisord --check<TAB>"
complete_words advisord -- | grep -qx -- --syslog-json || fail "advisord --<TAB> lacks --syslog-json"
pass "each command's --long options, and advisord's, from their own --help"

# Files where a path is wanted.
scratch_dir
: > "$SCRATCH/train.sbatch"
[ "$(complete_words advisorctl check --script "$SCRATCH/tra")" = "$SCRATCH/train.sbatch" ] ||
	fail "check --script <TAB> does not complete a file"
pass "a file after --script"
