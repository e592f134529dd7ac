#!/bin/sh
# advisorctl check --script against a private advisord and in-process
# (issue 11): the daemon never opens the job's files, the client ships what
# the reader asks for, the two answers are the same, a file request is not
# a decision, and hostile scripts are cut off without harming other users.
. "$(dirname "$0")/lib.sh"

command -v jq > /dev/null || skip_all "jq is needed (Debian package jq)"
scratch_dir
write_policy 2048
start_daemon

job=$SCRATCH/job
mkdir -p "$job"
# A Megatron-DeepSpeed job of the kind its examples launch: the ZeRO stage
# and precision live in a JSON file next to the script; TP=3 is a typo.
cat > "$job/train.sbatch" <<'EOT'
#!/bin/bash
#SBATCH -N 4
#SBATCH --gres=gpu:h100:8
#SBATCH --ntasks-per-node=1
#SBATCH -p h100
MICRO=1
GLOBAL=$((MICRO * 512))
ARGS=(
  --tensor-model-parallel-size 3   # within a node
  --pipeline-model-parallel-size 4
  --num-layers 80 --hidden-size 8192 --num-attention-heads 64
  --num-query-groups 8 --group-query-attention --swiglu --ffn-hidden-size 28672
  --seq-length 4096 --micro-batch-size $MICRO --global-batch-size $GLOBAL --bf16
)
srun torchrun --nnodes "$SLURM_NNODES" --nproc_per_node 8 pretrain_gpt.py "${ARGS[@]}" \
  --deepspeed --deepspeed_config ds_config.json --zero-stage 1
EOT
cat > "$job/ds_config.json" <<'EOT'
{
  "train_micro_batch_size_per_gpu": 1,
  "zero_optimization": { "stage": 1 },
  "bf16": { "enabled": true }
}
EOT

# Through the daemon: the files are read here and shipped.
(cd "$job" && ctl --json check --script train.sbatch) > "$SCRATCH/remote.json"
rc=$?
[ $rc -eq 2 ] || fail "remote --script exit $rc, want 2 (reject): $(cat "$SCRATCH/remote.json")"
jq -e '.findings | map(.code) | index("TP_NOT_DIVIDE_HEADS")' "$SCRATCH/remote.json" > /dev/null ||
	fail "no TP_NOT_DIVIDE_HEADS: $(jq -c '.findings' "$SCRATCH/remote.json")"
jq -e '.findings[] | select(.code == "TP_NOT_DIVIDE_HEADS") | .fix_job |
	test("--tensor-model-parallel-size [0-9]+ \\(train.sbatch line 9, TP=3\\)")' \
	"$SCRATCH/remote.json" > /dev/null ||
	fail "fix not in the job's terms: $(jq -c '.findings' "$SCRATCH/remote.json")"
[ "$(jq -r '.sources.tp' "$SCRATCH/remote.json")" = "train.sbatch:9 --tensor-model-parallel-size" ] ||
	fail "source of tp: $(jq -c '.sources' "$SCRATCH/remote.json")"
jq -e '.layout.gpus == 32 and .layout.nodes == 4' "$SCRATCH/remote.json" > /dev/null ||
	fail "resources from #SBATCH: $(jq -c '.layout' "$SCRATCH/remote.json")"
pass "--script through the daemon: reject, fix names train.sbatch line 9, sources given"

# In-process: the same answer.
(cd "$job" && "$ADVISORCTL" --local --catalog "$CATALOG" --policy "$POLICY" --json check \
	--script train.sbatch) > "$SCRATCH/local.json"
for f in verdict layout findings sources unknown memory; do
	a=$(jq -cS ".$f" "$SCRATCH/remote.json")
	b=$(jq -cS ".$f" "$SCRATCH/local.json")
	[ "$a" = "$b" ] || fail "--local and the daemon differ in $f: $a vs $b"
done
pass "--local gives the same verdict, layout, findings and sources"

# A file request is not a decision: exactly one decision was logged.
n=$(ctl --json history --include-queries --limit 100 | jq '.decisions | length')
[ "$n" = 1 ] || fail "$n decisions logged for one check, want 1"
pass "one check, one decision (the file round trip is not logged)"

# The daemon never opens the job's files: a file only root can read is
# read by the client as the user, and the daemon, running as root, does
# not fall back on reading it itself.
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
	chmod 755 "$job"
	chmod 600 "$job/ds_config.json"
	(cd "$job" && as_nobody "$ADVISORCTL" --socket "$SOCK" --json check --script train.sbatch) \
		> "$SCRATCH/nobody.json" 2> "$SCRATCH/err"
	# jq -e passes on no input at all: an advisorctl that did not run must fail here.
	[ -s "$SCRATCH/nobody.json" ] || fail "advisorctl as nobody answered nothing: $(cat "$SCRATCH/err")"
	jq -e '[.findings[] | select(.code == "SCRIPT_UNKNOWN") | .message |
		test("ds_config.json cannot be read")] | any' "$SCRATCH/nobody.json" > /dev/null ||
		fail "an unreadable config is not reported unknown: $(cat "$SCRATCH/nobody.json" "$SCRATCH/err")"
	chmod 644 "$job/ds_config.json"
	pass "a config the user cannot read stays unknown (the daemon does not read it as root)"
fi

# Not an LLM job: a GPU job running a CUDA program gets no findings.
cat > "$job/cuda.sbatch" <<'EOT'
#!/bin/bash
#SBATCH -N 2
#SBATCH --gres=gpu:h100:8
srun ./nbody -benchmark -numbodies=1000000
EOT
(cd "$job" && ctl --json check --script cuda.sbatch) > "$SCRATCH/cuda.json" ||
	fail "a CUDA job was not accepted: $(cat "$SCRATCH/cuda.json")"
jq -e '.findings == [] and .llm_job == false' "$SCRATCH/cuda.json" > /dev/null ||
	fail "a CUDA job got findings: $(cat "$SCRATCH/cuda.json")"
pass "a plain CUDA job passes silently"

# The script's arguments (check --script FILE -- ARGS), as sbatch's words
# after the script name: a while/case/shift loop reads them (issue 18).
cat > "$job/args.sbatch" <<'EOT'
#!/bin/bash
#SBATCH -N 1
#SBATCH --gres=gpu:h100:8
#SBATCH -p h100
TP=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --tp) TP=$2; shift 2 ;;
    *) echo "unknown option $1"; exit 1 ;;
  esac
done
srun python pretrain_gpt.py --tensor-model-parallel-size "$TP" --num-layers 32 \
  --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 \
  --micro-batch-size 1 --global-batch-size 64 --bf16
EOT
(cd "$job" && ctl --json check --script args.sbatch -- --tp 4) > "$SCRATCH/args.json"
jq -e '.layout.tp == 4' "$SCRATCH/args.json" > /dev/null ||
	fail "-- --tp 4 did not reach the script: $(cat "$SCRATCH/args.json")"
(cd "$job" && ctl --json check --script args.sbatch -- --tp 2) > "$SCRATCH/args.json"
jq -e '.layout.tp == 2' "$SCRATCH/args.json" > /dev/null ||
	fail "-- --tp 2 did not reach the script: $(cat "$SCRATCH/args.json")"
(cd "$job" && ctl --json check --script args.sbatch) > "$SCRATCH/args.json"
jq -e '.layout.tp == 1' "$SCRATCH/args.json" > /dev/null ||
	fail "no arguments: TP is not the script's default: $(cat "$SCRATCH/args.json")"
ctl check --gpu h100 --gpus 8 -- --tp 4 > /dev/null 2> "$SCRATCH/args.err"
[ $? -eq 64 ] && grep -q "give --script FILE" "$SCRATCH/args.err" ||
	fail "arguments after -- without --script were not refused"
pass "check --script FILE -- ARGS: the script's arguments reach \$1, \$2, ..."

# The program the job runs, read as text (issue 28): shipped like a config
# file, then the DeepSpeed JSON it names in a later round; the daemon and
# --local read the same values from the same lines.  One it cannot read
# leaves the workload unknown (PROGRAM_NOT_READ); one read without an LLM
# makes no LLM job, and says why.
cat > "$job/py.sbatch" <<'EOT2'
#!/bin/bash
#SBATCH -N 1
#SBATCH --gres=gpu:h100:8
#SBATCH -p h100
deepspeed --num_gpus 8 sft.py --model meta-llama/Meta-Llama-3-70B
EOT2
cat > "$job/sft.py" <<'EOT2'
import argparse
p = argparse.ArgumentParser()
p.add_argument("--model", default="meta-llama/Meta-Llama-3-8B")
args = p.parse_args()
model = AutoModelForCausalLM.from_pretrained(args.model)
cfg = TrainingArguments(output_dir="o", deepspeed="z3.json", bf16=True,
                        per_device_train_batch_size=1)
Trainer(model=model, args=cfg).train()
EOT2
echo '{"zero_optimization": {"stage": 3}}' > "$job/z3.json"
(cd "$job" && ctl --json check --script py.sbatch) > "$SCRATCH/py.json"
[ "$(jq -r '.sources.zero' "$SCRATCH/py.json")" = "z3.json:1 zero_optimization.stage" ] &&
	[ "$(jq -r '.sources.mbs' "$SCRATCH/py.json")" = "sft.py:7 per_device_train_batch_size" ] &&
	[ "$(jq -r '.model' "$SCRATCH/py.json")" = "meta-llama/Meta-Llama-3-70B" ] ||
	fail "the program's values did not come through the daemon: $(cat "$SCRATCH/py.json")"
(cd "$job" && "$ADVISORCTL" --local --catalog "$CATALOG" --policy "$POLICY" --json check \
	--script py.sbatch) > "$SCRATCH/py-local.json"
for f in verdict layout findings sources unknown memory; do
	a=$(jq -cS ".$f" "$SCRATCH/py.json")
	b=$(jq -cS ".$f" "$SCRATCH/py-local.json")
	[ "$a" = "$b" ] || fail "program read: --local and the daemon differ in $f: $a vs $b"
done
rm "$job/sft.py"
(cd "$job" && ctl --json check --script py.sbatch) > "$SCRATCH/py.json"
jq -e '.llm_job == true and ([.findings[].code] | index("PROGRAM_NOT_READ"))' \
	"$SCRATCH/py.json" > /dev/null ||
	fail "a program not shipped is not PROGRAM_NOT_READ: $(cat "$SCRATCH/py.json")"
echo 'import torchvision; torchvision.models.resnet50().cuda()' > "$job/sft.py"
(cd "$job" && ctl --json check --script py.sbatch) > "$SCRATCH/py.json"
jq -e '.llm_job == false and .findings == [] and (.sources.program | test("sft.py read"))' \
	"$SCRATCH/py.json" > /dev/null ||
	fail "a program without an LLM is not 'not an LLM job': $(cat "$SCRATCH/py.json")"
(cd "$job" && ctl check --script py.sbatch --verbose) | grep -q "program  sft.py read" ||
	fail "check --verbose does not say which program was read"
pass "the program a job runs is shipped and read (issue 28): values, PROGRAM_NOT_READ, not an LLM job"

# Scripts as long as sbatch allows (issue 27).  The script is shipped with
# its comment lines emptied: 300 KiB of comments before a broken launch
# cost a byte a line, and the launch keeps its line number.
long_head='#!/bin/bash
#SBATCH -N 4
#SBATCH --gres=gpu:h100:8
#SBATCH -p h100'
long_launch='srun python pretrain_gpt.py --tensor-model-parallel-size 3 --num-layers 80 --hidden-size 8192 --num-attention-heads 64 --ffn-hidden-size 28672 --seq-length 4096 --micro-batch-size 1 --global-batch-size 512 --bf16'
# long_script FILE LINES FORMAT: the head, LINES lines of FORMAT (each %d:
# the line's index), the launch.
long_script() {
	{
		echo "$long_head"
		awk -v n="$2" -v f="$3" 'BEGIN { for (i = 0; i < n; i++) printf f "\n", i, i }'
		echo "$long_launch"
	} > "$job/$1"
}
long_script probe.sbatch 4100 '# %05d: notes on the data mix, the tokenizer and the logging, kept for the record'
(cd "$job" && ctl --json check --script probe.sbatch) > "$SCRATCH/probe.json"
rc=$?
[ $rc -eq 2 ] || fail "300 KiB of comments, then TP=3: exit $rc, want 2: $(head -c 600 "$SCRATCH/probe.json")"
jq -e '.findings[] | select(.code == "TP_NOT_DIVIDE_HEADS") | .fix_job | test("probe.sbatch line 4105, TP=3")' \
	"$SCRATCH/probe.json" > /dev/null || fail "the launch lost its line number: $(jq -c '.findings' "$SCRATCH/probe.json")"
jq -e '[.findings[].code] | index("SCRIPT_TRUNCATED") | not' "$SCRATCH/probe.json" > /dev/null ||
	fail "comments made the script truncated: $(jq -c '.findings' "$SCRATCH/probe.json")"
pass "300 KiB of comments before a broken launch: rejected, the launch at its own line"

# 400 KiB of commands: the reader takes the lines that fit in 256 KiB and
# says so, through the daemon and in-process alike.
long_script exports.sbatch 8300 'export DATA_SHARD_%05d=/fsx/data/shard_%05d.bin'
size=$(wc -c < "$job/exports.sbatch" | tr -d ' ')
for how in daemon local; do
	if [ $how = daemon ]; then
		(cd "$job" && ctl --json check --script exports.sbatch) > "$SCRATCH/exports.json"
	else
		(cd "$job" && ctl_local --json check --script exports.sbatch) > "$SCRATCH/exports.json"
	fi
	rc=$?
	[ $rc -eq 1 ] || fail "$how: 400 KiB of commands: exit $rc, want 1 (warn): $(head -c 600 "$SCRATCH/exports.json")"
	jq -e --arg s "($size bytes); advisor read its first 256 KiB" '.findings[] |
		select(.code == "SCRIPT_TRUNCATED" and .severity == "warn") | .message | contains($s)' \
		"$SCRATCH/exports.json" > /dev/null ||
		fail "$how: no SCRIPT_TRUNCATED naming $size bytes: $(jq -c '.findings' "$SCRATCH/exports.json")"
done
pass "400 KiB of commands: SCRIPT_TRUNCATED names the size and what was read (daemon and --local)"

# Over Slurm's max_script_size (4 MiB unless slurm.conf raises it): read up
# to it and said; a slurm.conf that raises it has the whole script read.
long_script huge.sbatch 72000 '# %05d: notes on the data mix, the tokenizer and the logging, kept for the record'
(cd "$job" && ADVISOR_NO_SLURM=1 ctl --json check --script huge.sbatch) > "$SCRATCH/huge.json"
rc=$?
[ $rc -eq 1 ] || fail "5 MiB script: exit $rc, want 1 (warn): $(head -c 600 "$SCRATCH/huge.json")"
jq -e '.findings[] | select(.code == "SCRIPT_TRUNCATED") | .message | test("max_script_size")' \
	"$SCRATCH/huge.json" > /dev/null || fail "5 MiB script not said over max_script_size: $(jq -c '.findings' "$SCRATCH/huge.json")"
printf 'ClusterName=advtest\nSlurmctldHost=localhost\nSchedulerParameters=bf_continue,max_script_size=8388608\n' \
	> "$SCRATCH/max8m.conf"
(cd "$job" && SLURM_CONF=$SCRATCH/max8m.conf ctl --json check --script huge.sbatch) > "$SCRATCH/huge8.json"
rc=$?
[ $rc -eq 2 ] || fail "5 MiB script under max_script_size=8388608: exit $rc, want 2: $(head -c 600 "$SCRATCH/huge8.json")"
jq -e '[.findings[].code] | (index("TP_NOT_DIVIDE_HEADS") != null) and (index("SCRIPT_TRUNCATED") == null)' \
	"$SCRATCH/huge8.json" > /dev/null || fail "max_script_size=8388608: $(jq -c '.findings' "$SCRATCH/huge8.json")"
pass "a script over max_script_size is read up to it and said; slurm.conf's max_script_size is the bound"

# A hostile script is cut off within bounds, and the daemon keeps serving.
{
	printf 'A=x\nf() { f | f & }\nf\n'
	i=0
	while [ $i -lt 20000 ]; do printf 'A=$A$A${A:-$A}\n'; i=$((i + 1)); done
} > "$job/hostile.sbatch"
start=$(date +%s)
(cd "$job" && ctl --json check --gpu h100 --gpus 8 --script hostile.sbatch) > "$SCRATCH/hostile.json"
[ $(($(date +%s) - start)) -le 5 ] || fail "a hostile script took over 5 s"
ctl status > /dev/null || fail "the daemon died on a hostile script"
(cd "$job" && ctl --json check --script train.sbatch) > /dev/null
[ $? -eq 2 ] || fail "the daemon no longer judges after a hostile script"
pass "a hostile script is cut off; the daemon keeps judging"
