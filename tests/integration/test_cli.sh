#!/bin/sh
# test_cli.sh - advisorctl --local reproduces the engine's public accuracy
# cases from the command line (issue 3), with the exit codes and JSON of
# design.md, and refuses bad options and bad files with a clear message.
#
# References: Korthikanti et al. 2022 (GPT-3 175B, TP8 PP8, SP + selective
# recompute on A100 80 GB), the Llama 3 70B config (80 layers, 8 KV heads of
# 128: 2*80*8*128*2 B = 320 KiB of KV cache per token in bf16), Daly 2006
# (C = 5 min, R = 10 min: 117 min at M = 24 h, 57 min at 6 h, 9.1 min at 15 min).
. "$(dirname "$0")/lib.sh"

command -v jq > /dev/null || skip_all "jq is needed (Debian package jq)"
scratch_dir
write_policy

ctl() { "$ADVISORCTL" --local --catalog "$CATALOG" --policy "$POLICY" "$@"; }

# run NAME ARGS...: status in $status, stdout/stderr in $SCRATCH/NAME.{out,err}
run() {
	name=$1; shift
	set +e
	"$@" > "$SCRATCH/$name.out" 2> "$SCRATCH/$name.err"
	status=$?
	set -e
}
set -e

# within VALUE LOW HIGH
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }

run gpt3 ctl --json check --gpu a100-80gb --gpus 64 --model gpt3-175b \
	--layout tp8,pp8,vpp3,sp --recompute selective --mbs 1 --gbs 64 --seq 2048
[ "$status" -eq 0 ] || fail "GPT-3 175B (Korthikanti 2022): exit $status, expected 0 (accept): $(cat "$SCRATCH/gpt3.err")"
[ "$(jq -r .verdict "$SCRATCH/gpt3.out")" = accept ] || fail "GPT-3 175B verdict is not accept"
mem=$(jq -r .memory.per_gpu_gib "$SCRATCH/gpt3.out")
within "$mem" 50 65 || fail "GPT-3 175B per-GPU memory $mem GiB, expected 50-65"
[ "$(jq -r '.layout | "\(.tp) \(.pp) \(.vpp) \(.dp) \(.sp)"' "$SCRATCH/gpt3.out")" = "8 8 3 1 true" ] ||
	fail "GPT-3 175B layout not echoed as tp8 pp8 vpp3 dp1 sp"
pass "GPT-3 175B on 64 A100 80GB, TP8 PP8 v3, SP + selective: accept, $mem GiB per GPU"

run ddp ctl --json check --gpu h100 --gpus 64 --model llama3-70b --task finetune \
	--layout tp1,pp1 --zero 0
[ "$status" -eq 2 ] || fail "Llama 3 70B DDP fine-tune: exit $status, expected 2 (reject)"
jq -e '.findings[] | select(.code == "MEM_OVER_CAPACITY" and .severity == "reject" and (.fix | length) > 0)' \
	"$SCRATCH/ddp.out" > /dev/null || fail "Llama 3 70B DDP fine-tune: no MEM_OVER_CAPACITY reject with a fix"
pass "Llama 3 70B full fine-tune with plain DDP on 64 H100: reject, MEM_OVER_CAPACITY with a fix"

# KV cache: one 8192-token sequence at TP1 is 8192 * 320 KiB = 2.5 GiB exactly.
run kv ctl --json check --gpu h200 --gpus 1 --model llama3-70b --task infer \
	--precision bf16 --seq 8192 --mbs 1 --layout tp1
kv=$(jq -r .memory.kv_cache_gib "$SCRATCH/kv.out")
within "$kv" 2.4999999 2.5000001 || fail "Llama 3 70B KV cache for 8192 tokens is $kv GiB, expected 2.5 (320 KiB/token)"
pass "Llama 3 70B KV cache: 320 KiB per token in bf16 ($kv GiB for 8192 tokens)"

for case in "24 117" "6 57" "0.25 9.1"; do
	set -- $case
	run daly ctl --json ckpt --job-mtbf-hours "$1" --write-seconds 300 --restart-seconds 600
	[ "$status" -eq 0 ] || fail "ckpt raw form exit $status: $(cat "$SCRATCH/daly.err")"
	daly=$(jq -r '.daly_s / 60' "$SCRATCH/daly.out")
	within "$daly" "$(awk -v m="$2" 'BEGIN{print m*0.99}')" "$(awk -v m="$2" 'BEGIN{print m*1.01}')" ||
		fail "Daly optimum at M = $1 h is $daly min, expected $2 min within 1%"
	jq -e '.young_s > 0 and .optimal_s > 0 and .optimal_waste >= 0' "$SCRATCH/daly.out" > /dev/null ||
		fail "ckpt --json lacks young_s/optimal_s/optimal_waste"
done
pass "Daly 2006 cases from the command line within 1%"

run badopt ctl check --gpu h100 --gpus 8 --model llama3-8b --zero 7
[ "$status" -eq 64 ] || fail "--zero 7: exit $status, expected 64"
grep -q "zero" "$SCRATCH/badopt.err" && grep -q "0, 1, 2, 3" "$SCRATCH/badopt.err" ||
	fail "--zero 7: message does not name the option and the accepted values: $(cat "$SCRATCH/badopt.err")"
run badlayout ctl check --gpu h100 --gpus 8 --model llama3-8b --layout tp8,xx2
[ "$status" -eq 64 ] || fail "--layout tp8,xx2: exit $status, expected 64"
grep -q "layout" "$SCRATCH/badlayout.err" || fail "--layout: message does not name the option"
# The issue-19 options: each bad value is refused with the option and what it takes.
for bad in "grad-dtype=fp7:fp32, bf16, fp16" "kv-dtype=int3:bf16, fp16, fp8" \
	"weights=fp9:16bit, fp8, int8, int4, mxfp4" "mem-share=1.5:0 < F <= 1" "mem-share=abc:0 < F <= 1"; do
	opt=${bad%%:*}
	run badnew ctl check --gpu h100 --gpus 8 --model llama3-8b "--$opt"
	[ "$status" -eq 64 ] || fail "--$opt: exit $status, expected 64"
	grep -qF -- "--${opt%%=*}: '${opt#*=}' is not valid" "$SCRATCH/badnew.err" &&
		grep -qF -- "${bad#*:}" "$SCRATCH/badnew.err" ||
		fail "--$opt: message does not name the option and the accepted values: $(cat "$SCRATCH/badnew.err")"
done
pass "bad option values: exit 64, the message names the option and the accepted values"

printf 'gpus:\n  - name: g1\n    memory_gib: -80\n    bf16_tflops: 989\n    gpus_per_node: 8\n    tdp_w: 700\n    price_per_hour_usd: 2\n' > "$SCRATCH/bad.yaml"
run badcat "$ADVISORCTL" --local --catalog "$SCRATCH/bad.yaml" --policy "$POLICY" catalog
[ "$status" -eq 65 ] || fail "broken catalog: exit $status, expected 65"
grep -q "bad.yaml:3:17: .*memory_gib" "$SCRATCH/badcat.err" || fail "broken catalog: no FILE:LINE:COL: $(cat "$SCRATCH/badcat.err")"
pass "broken catalog file: exit 65 with file:line:col"

run plan ctl --json plan --gpu h100 --gpus 64 --model llama3-70b --seq 8192 --top 2
[ "$status" -eq 0 ] || fail "plan: exit $status, expected 0: $(cat "$SCRATCH/plan.err")"
[ "$(jq '.plans | length' "$SCRATCH/plan.out")" -eq 2 ] || fail "plan --top 2 did not give 2 plans"
jq -e '[.plans[].layout.tp] | all(. <= 8)' "$SCRATCH/plan.out" > /dev/null ||
	fail "plan without --cross-node-tp gave a TP beyond one node"
run plantop ctl plan --gpu h100 --gpus 64 --model llama3-70b --top=0
[ "$status" -eq 64 ] || fail "plan --top=0: exit $status, expected 64"
grep -q -- "--top" "$SCRATCH/plantop.err" && grep -q "1 to 100" "$SCRATCH/plantop.err" ||
	fail "plan --top=0: message does not name --top and its range: $(cat "$SCRATCH/plantop.err")"
run plancross ctl plan --gpu h100 --gpus 64 --model llama3-70b --cross-node-tp --top 1
[ "$status" -eq 0 ] || fail "plan --cross-node-tp: exit $status"
pass "plan: --top limits the plans, --top=0 is refused naming the option, --cross-node-tp accepted"

# sbatch's own resource options and syntax (issue 18): each form below gives
# the same 16 GPUs on 2 nodes of 8 as --nodes 2 --gpus-per-node 8.
for form in "-N 2 --gpus-per-node=h100:8" "--nodes=2-4 --gres=gpu:h100:8" "-G 16 -N2" \
	    "-n 16 --ntasks-per-node 8 --gpus-per-task 1" "--ntasks=16 --gpus-per-task=1 -N 2" \
	    "-N 2 --gres gpu:8 --mem=224GB --mem-per-gpu 80gb --exclusive -p h100 -A proj"; do
	# shellcheck disable=SC2086
	run sform ctl --json check --gpu h100 $form --model llama3-8b --layout tp8
	[ "$status" -le 2 ] || fail "check $form: exit $status: $(cat "$SCRATCH/sform.err")"
	jq -e '.layout.gpus == 16 and .layout.nodes == 2' "$SCRATCH/sform.out" > /dev/null ||
		fail "check $form: not 16 GPUs on 2 nodes: $(jq -c .layout "$SCRATCH/sform.out")"
done
for bad in "-N 4-2" "-N 2x" "-n 0" "--mem=224GiB" "--mem 1.5G" "--gpus-per-node=h100:x"; do
	# shellcheck disable=SC2086
	run sbad ctl check --gpu h100 $bad --gres gpu:8 --model llama3-8b
	[ "$status" -eq 64 ] || fail "check $bad: exit $status, expected 64 as sbatch refuses it"
	grep -q -- "invalid --" "$SCRATCH/sbad.err" || fail "check $bad: $(cat "$SCRATCH/sbad.err")"
done
pass "check takes sbatch's resource options (-N ranges, -G, --gres, -n with --gpus-per-task, --mem=224GB) and refuses what sbatch refuses"

# An #SBATCH line sbatch cannot parse: refused with its line, as sbatch does.
printf '#!/bin/bash\n#SBATCH -N 1 --gres=gpu:8\n#SBATCH <SLURM OPTIONS>\nsrun torchrun --nproc_per_node 8 train.py\n' \
	> "$SCRATCH/placeholder.sbatch"
run placeholder ctl check --gpu h100 --script "$SCRATCH/placeholder.sbatch"
[ "$status" -eq 65 ] || fail "#SBATCH <SLURM OPTIONS>: exit $status, expected 65"
grep -q "line 3: invalid #SBATCH directive '<SLURM'" "$SCRATCH/placeholder.err" ||
	fail "#SBATCH <SLURM OPTIONS>: $(cat "$SCRATCH/placeholder.err")"
# The command line wins option by option over the #SBATCH lines, as in sbatch.
printf '#!/bin/bash\n#SBATCH -N 4\n#SBATCH --gres=gpu:h100:8\nsrun true\n' > "$SCRATCH/layers.sbatch"
run layers ctl --json check -N 2 --script "$SCRATCH/layers.sbatch" --model llama3-8b
jq -e '.layout.gpus == 16 and .layout.nodes == 2' "$SCRATCH/layers.out" > /dev/null ||
	fail "-N 2 over #SBATCH -N 4 --gres=gpu:h100:8: $(jq -c .layout "$SCRATCH/layers.out") $(cat "$SCRATCH/layers.err")"
pass "an #SBATCH placeholder is refused with its line; -N on the command line wins over #SBATCH -N"

# show and history's filters of issue 21: bad words refused before any daemon is asked.
run show0 "$ADVISORCTL" --socket "$SCRATCH/none.sock" show
[ "$status" -eq 64 ] && grep -q "which decision" "$SCRATCH/show0.err" || fail "show without an id: $status $(cat "$SCRATCH/show0.err")"
run show2 "$ADVISORCTL" --socket "$SCRATCH/none.sock" show d-1 d-2
[ "$status" -eq 64 ] && grep -q "unexpected argument 'd-2'" "$SCRATCH/show2.err" || fail "show with two ids: $status $(cat "$SCRATCH/show2.err")"
run until "$ADVISORCTL" --socket "$SCRATCH/none.sock" history --until soon
[ "$status" -eq 64 ] && grep -q -- "--until: 'soon' is neither a duration" "$SCRATCH/until.err" || fail "history --until soon: $status $(cat "$SCRATCH/until.err")"
run script0 "$ADVISORCTL" --socket "$SCRATCH/none.sock" history --script ''
[ "$status" -eq 64 ] || fail "history --script '': $status"
run dec0 "$ADVISORCTL" --socket "$SCRATCH/none.sock" history --decision ''
[ "$status" -eq 64 ] || fail "history --decision '': $status"
run showhelp "$ADVISORCTL" show --help
[ "$status" -eq 0 ] && grep -q "^Usage: advisorctl \[--json\] show DECISION" "$SCRATCH/showhelp.out" || fail "show --help"
run histhelp "$ADVISORCTL" history --help
grep -q -- "--script NAME" "$SCRATCH/histhelp.out" && grep -q -- "--until TIME" "$SCRATCH/histhelp.out" &&
	grep -q -- "--decision ID" "$SCRATCH/histhelp.out" || fail "history --help lacks the filters of issue 21"
run nodaemon "$ADVISORCTL" --socket "$SCRATCH/none.sock" show d-1
[ "$status" -eq 69 ] || fail "show without a daemon: $status, want 69"
# An in-process check makes no decision: it names no show command.
run localcheck ctl check --gpu h100 --gpus 8 --model llama3-8b
grep -q "^see: " "$SCRATCH/localcheck.out" && fail "--local check names a show command: $(cat "$SCRATCH/localcheck.out")"
pass "show and history --until/--script/--decision refuse bad words (exit 64), need the daemon (69); --local check names no show command"
# A job that never checkpoints (issue 21): said in words (each failure loses
# the whole run so far, and how often failures come), not "every T loses 100%".
run ckoff ctl check --gpu h100 --nodes 16 --gpus-per-node 8 --model llama3-70b --layout tp8,pp4 --ckpt off
grep -q "^checkpoint: none: each failure loses the whole run so far, and the job fails every 195.3 h on average" \
	"$SCRATCH/ckoff.out" || fail "--ckpt off: $(grep checkpoint: "$SCRATCH/ckoff.out")"
grep -q "100.00%" "$SCRATCH/ckoff.out" && fail "--ckpt off still says 100.00%"
run ckoffj ctl --json check --gpu h100 --nodes 16 --gpus-per-node 8 --model llama3-70b --layout tp8,pp4 --ckpt off
jq -e '.checkpoint.interval_s == null and .checkpoint.waste == 1' "$SCRATCH/ckoffj.out" > /dev/null ||
	fail "--ckpt off --json: $(jq -c .checkpoint "$SCRATCH/ckoffj.out")"
pass "--ckpt off: the checkpoint line says each failure loses the whole run, and the job MTBF; interval_s null"

# Fixes in advisorctl's own options (issue 21): --model NAME, --ckpt D, not
# the plugin's --llm-model=NAME; --json keeps sbatch's spelling.
run nomodel ctl check --gpu h100 --gpus 8
grep -q "MODEL_NOT_GIVEN  no --model: " "$SCRATCH/nomodel.out" && grep -q "fix: --model NAME$" "$SCRATCH/nomodel.out" ||
	fail "MODEL_NOT_GIVEN not in advisorctl's spelling: $(cat "$SCRATCH/nomodel.out")"
grep -q -- "--llm-" "$SCRATCH/nomodel.out" "$SCRATCH/ckoff.out" && fail "advisorctl printed a --llm-* option"
grep -q "fix: --ckpt 1h28m$" "$SCRATCH/ckoff.out" || fail "CKPT_MISSING fix: $(grep fix: "$SCRATCH/ckoff.out")"
run nomodelj ctl --json check --gpu h100 --gpus 8
jq -e '.findings[] | select(.code == "MODEL_NOT_GIVEN" and .fix == "--llm-model=NAME")' "$SCRATCH/nomodelj.out" > /dev/null ||
	fail "--json fix is not sbatch's --llm-model=NAME: $(jq -c .findings "$SCRATCH/nomodelj.out")"
pass "advisorctl's fixes name its own options (--model NAME, --ckpt 1h28m); --json keeps --llm-model=NAME"

# --local and the daemon agree on the default partition's GPU type (issue
# 21): the same code asks Slurm for it (daemon/service/slurmgres.c), and
# where there is no Slurm to ask both say so, alike.  The live case is in
# test_slurm.sh.
SLURM_CONF=$SCRATCH/no-slurm.conf
export SLURM_CONF
# From here on ctl asks the daemon, as in lib.sh (start_daemon uses it).
ctl() { "$ADVISORCTL" --socket "$SOCK" "$@"; }
start_daemon
run gpud ctl --json check --gpus 8 --model llama3-8b
run gpul ctl_local --json check --gpus 8 --model llama3-8b
stop_daemon
unset SLURM_CONF
for w in gpud gpul; do
	jq -r '.findings[] | select(.code == "GPU_TYPE_UNKNOWN") | .message' "$SCRATCH/$w.out" > "$SCRATCH/$w.msg"
	grep -qF "the job's GPU type is not known (Slurm not asked: $SCRATCH/no-slurm.conf: No such file or directory)" \
		"$SCRATCH/$w.msg" || fail "$w: GPU_TYPE_UNKNOWN does not say why Slurm was not asked: $(cat "$SCRATCH/$w.msg" "$SCRATCH/$w.err")"
done
cmp -s "$SCRATCH/gpud.msg" "$SCRATCH/gpul.msg" ||
	fail "the daemon and --local differ: $(cat "$SCRATCH/gpud.msg") / $(cat "$SCRATCH/gpul.msg")"
pass "no Slurm to ask: the daemon and --local both say GPU_TYPE_UNKNOWN with the same reason (slurm.conf not readable)"

# Configless (issue 30) with a slurmctld that does not answer: the fetch
# fails in its child, the daemon's check says so loudly and nothing dies.
# (A slurm.conf of the machine's own would come first, as for Slurm's
# commands: then there is nothing to try here.)
if [ ! -e /etc/slurm/slurm.conf ] && [ ! -e /run/slurm/conf/slurm.conf ]; then
	env -u SLURM_CONF SLURM_CONF_SERVER=127.0.0.1:1 "$ADVISORD" --check-config --catalog "$CATALOG" \
		--policy "$POLICY" --db "$SCRATCH/cl.db" > "$SCRATCH/cl.out" 2>&1 ||
		fail "--check-config with an unreachable configless server exited $?: $(cat "$SCRATCH/cl.out")"
	grep -q "^advisord: WARNING: Slurm asked through configless, from slurmctld 127.0.0.1:1 (SLURM_CONF_SERVER), without an answer yet: libslurm could not fetch the configuration from slurmctld" \
		"$SCRATCH/cl.out" || fail "an unreachable configless server: $(cat "$SCRATCH/cl.out")"
	env -u SLURM_CONF SLURM_CONF_SERVER=127.0.0.1:1 "$ADVISORCTL" --local --catalog "$CATALOG" \
		--policy "$POLICY" --json check --gpus 8 --model llama3-8b > "$SCRATCH/cl.json" 2>&1 || :
	jq -r '.findings[] | select(.code == "GPU_TYPE_UNKNOWN") | .message' "$SCRATCH/cl.json" |
		grep -q "could not fetch the configuration from slurmctld" ||
		fail "GPU_TYPE_UNKNOWN does not say the configless fetch failed: $(head -c 600 "$SCRATCH/cl.json")"
	pass "configless with a slurmctld that does not answer: --check-config warns, GPU_TYPE_UNKNOWN says why, nothing dies"
fi

# Each command's --help lists exactly what it takes (issue 21; generated
# from one table in advisorctl.c): every option a help names is accepted by
# that command (given with --help after it: no "unrecognized", no "does not
# take"), and the options it refuses (--local, --catalog, --policy for the
# commands that need the daemon's state) are not named and are refused
# with exit 64 and their name.
for cmd in check plan ckpt catalog policy history report stats reload status; do
	"$ADVISORCTL" "$cmd" --help > "$SCRATCH/help" || fail "$cmd --help: exit $?"
	# --NAME, and whether an argument follows ("--gpu TYPE", "--zero 0..3", "-G, --gpus [TYPE:]N").
	grep -oE -- '--[a-z][a-z0-9-]*(\[=[A-Z]+\]| [A-Z0-9[][^ ,]*)?' "$SCRATCH/help" | grep -v '^--llm-' | sort -u > "$SCRATCH/opts"
	[ -s "$SCRATCH/opts" ] || fail "$cmd --help names no option"
	n=0
	while read -r opt arg; do
		if [ -n "$arg" ]; then set -- "$opt=x"; else set -- "${opt%%\[*}"; fi
		run hopt "$ADVISORCTL" "$cmd" "$1" --help
		if grep -Eq "unrecognized option|does not take|doesn't allow" "$SCRATCH/hopt.err"; then
			fail "$cmd --help lists $opt, which $cmd refuses: $(cat "$SCRATCH/hopt.err")"
		fi
		n=$((n + 1))
	done < "$SCRATCH/opts"
	case $cmd in
	check|plan|ckpt|catalog|policy)
		grep -q -- "--local" "$SCRATCH/help" || fail "$cmd --help does not list --local, which it takes" ;;
	*)
		for refused in --local "--catalog=$CATALOG" "--policy=$POLICY"; do
			grep -q -- "${refused%%=*}" "$SCRATCH/help" && fail "$cmd --help lists ${refused%%=*}, which it refuses"
			run hrefused "$ADVISORCTL" "$cmd" "$refused"
			[ "$status" -eq 64 ] && grep -q "$cmd does not take ${refused%%=*}" "$SCRATCH/hrefused.err" ||
				fail "$cmd $refused: exit $status: $(cat "$SCRATCH/hrefused.err")"
		done
		run hrefused "$ADVISORCTL" --local "$cmd"
		[ "$status" -eq 64 ] || fail "--local $cmd: exit $status, expected 64"
		;;
	esac
	echo "# $cmd: $n options in its --help, each accepted"
done
pass "each command's --help lists only options it takes; history, report, stats, reload and status refuse --local, --catalog, --policy by name"

# The docs name every option (issue 21): each option of advisord --help is
# in advisord(8)'s SYNOPSIS, each common option of advisorctl --help in
# advisorctl(1)'s, and each plugstack.conf key the plugin parses
# (plugin/args.c) in spank_advisor(8)'s SYNOPSIS and in the example
# etc/plugstack.conf, explained and on its plugin line.
synopsis() { sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$top_srcdir/man/$1.in" | sed 's/\\-/-/g; s/\\f[BIR]//g'; }
synopsis advisord.8 > "$SCRATCH/syn"
"$ADVISORD" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u > "$SCRATCH/dopts"
[ "$(wc -l < "$SCRATCH/dopts")" -ge 15 ] || fail "advisord --help names only $(wc -l < "$SCRATCH/dopts") options"
while read -r o; do
	grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$SCRATCH/syn" || fail "advisord(8) SYNOPSIS lacks $o"
done < "$SCRATCH/dopts"
synopsis advisorctl.1 > "$SCRATCH/syn"
"$ADVISORCTL" --help | sed -n '/^Common options:/,$p' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u > "$SCRATCH/copts"
echo --version >> "$SCRATCH/copts"
while read -r o; do
	grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$SCRATCH/syn" || fail "advisorctl(1) SYNOPSIS lacks $o"
done < "$SCRATCH/copts"
# Issue 30: and every command of advisorctl --help in the SYNOPSIS's list
# and in the README's list of commands (show and report were missing).
"$ADVISORCTL" --help | sed -n '/^Commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' > "$SCRATCH/cmds"
[ "$(wc -l < "$SCRATCH/cmds")" -ge 11 ] || fail "advisorctl --help lists only $(wc -l < "$SCRATCH/cmds") commands"
sed -n '/^- `advisorctl` lets users/,/^$/p' "$top_srcdir/README.md" | tr '\n' ' ' > "$SCRATCH/readme_cmds"
[ -s "$SCRATCH/readme_cmds" ] || fail "README.md has no list of advisorctl's commands"
while read -r c; do
	grep -q "^\.BR $c [,;]" "$SCRATCH/syn" || fail "advisorctl(1) SYNOPSIS does not list the command $c"
	grep -q "\`$c\`" "$SCRATCH/readme_cmds" || fail "README.md's list of commands lacks $c"
done < "$SCRATCH/cmds"
# Issue 30: the man pages are made with the configured paths: the built
# pages name the catalog, policy and socket that advisorctl uses by default,
# and nothing is left unsubstituted.
cat_default=$("$ADVISORCTL" --help | sed -n 's/.*(default \(.*\/catalog\.yaml\)).*/\1/p')
sock_default=$("$ADVISORCTL" --help | sed -n 's/.*daemon socket (default \(.*\))$/\1/p')
[ -n "$cat_default" ] && [ -n "$sock_default" ] || fail "advisorctl --help names no default catalog or socket"
for m in advisorctl.1 advisord.8 spank_advisor.8 advisor-catalog.yaml.5 advisor-policy.yaml.5; do
	[ -f "$top_builddir/man/$m" ] || fail "man/$m was not built"
	! grep -n '@[a-z]*dir@' "$top_builddir/man/$m" || fail "man/$m keeps a placeholder"
done
# A path is written with - or \- (the substitution keeps the configured
# path as it is; a prefix such as distcheck's has dashes).
sed 's/\\-/-/g' "$top_builddir/man/advisorctl.1" | grep -qF -- "$cat_default" ||
	fail "advisorctl(1) does not name the default catalog $cat_default"
sed 's/\\-/-/g' "$top_builddir/man/advisord.8" | grep -qF -- "$sock_default" ||
	fail "advisord(8) does not name the default socket $sock_default"
pass "SYNOPSIS lists every command of --help, as does the README; the built man pages name the configured $cat_default and $sock_default"
keys=$(sed -n '/keys\[\] = {/,/NULL }/p' "$top_srcdir/plugin/args.c" | tr -d '\n' |
	sed -n 's/.*keys\[\] = {\(.*\)NULL }.*/\1/p' | tr -d '" \t')
[ -n "$keys" ] || fail "cannot read the plugstack keys of plugin/args.c"
grep -q '"server="' "$top_srcdir/plugin/args.c" || fail "plugin/args.c no longer parses server="
synopsis spank_advisor.8 > "$SCRATCH/syn"
for k in $(echo "$keys" | tr ',' ' ') server; do
	grep -q "$k=" "$SCRATCH/syn" || fail "spank_advisor(8) SYNOPSIS lacks $k="
	grep -q "^#   $k=" "$top_srcdir/etc/plugstack.conf" || fail "etc/plugstack.conf does not explain $k="
	grep -Eq "^#? ?(required|optional) .* $k=" "$top_srcdir/etc/plugstack.conf" ||
		fail "etc/plugstack.conf has no plugin line with $k="
done
pass "advisord(8), advisorctl(1) and spank_advisor(8) SYNOPSIS name every option; etc/plugstack.conf every key ($(echo "$keys" | tr ',' ' ') server)"
