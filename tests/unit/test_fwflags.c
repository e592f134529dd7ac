/*
 * test_fwflags.c - the job reader end to end on scripts whose workload is
 * in command-line flags: the launchers and wrappers (launch.c), Megatron-LM
 * and Megatron-DeepSpeed (fw_megatron.c), Hugging Face Trainer and TRL
 * (fw_hf.c), vLLM and SGLang (fw_serve.c), and the DeepSpeed and
 * accelerate config files they name (fw_deepspeed.c).
 *
 * Each script is written for this test in the style of the frameworks'
 * published examples (Megatron-LM examples/gpt3, Megatron-DeepSpeed
 * examples_deepspeed, transformers examples/pytorch/language-modeling,
 * TRL's sft docs, the alignment handbook's recipes, vLLM and SGLang
 * serving docs).  Every value is checked with its source: the file, the
 * line the flag or key is written on, and the flag or key itself.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "fixture.h"
#include "jobread/jobread.h"
#include "jobread/reader.h"

#define CWD "/home/ada/run"

struct vfile {
	const char *path;   /* absolute */
	const char *text;
};

struct job {
	const char *script;
	const struct vfile *files;   /* NULL-terminated by path, may be NULL */
	int nodes, gpus_per_node, ntasks, ntasks_per_node;
	char *const *argv;           /* srun's command (script NULL) */
	int argc;
};

static int open_file(void *arg, const char *path, const char **text, size_t *len)
{
	const struct vfile *f = arg;

	for (; f && f->path; f++)
		if (!strcmp(f->path, path)) {
			*text = f->text;
			*len = strlen(f->text);
			return JOBREAD_FILE_OK;
		}
	return JOBREAD_FILE_MISSING;
}

static void read_job(void **st, const struct job *j, struct jobread_out *out)
{
	struct jobread_input in;

	memset(&in, 0, sizeof(in));
	in.tool = j->script ? JOBREAD_SBATCH : JOBREAD_SRUN;
	in.script_name = j->script ? "train.sbatch" : NULL;
	in.script = j->script;
	in.script_len = j->script ? strlen(j->script) : 0;
	in.argv = j->argv;
	in.argc = j->argc;
	in.cwd = CWD;
	snprintf(in.res.gpu, sizeof(in.res.gpu), "h100");
	in.res.nodes = j->nodes;
	in.res.gpus_per_node = j->gpus_per_node;
	in.res.gpus = j->nodes * j->gpus_per_node;
	in.ntasks = j->ntasks;
	in.ntasks_per_node = j->ntasks_per_node;
	in.files.open = open_file;
	in.files.arg = (void *)j->files;
	jobread_read(*st, &in, out);
}

/* The 1-based line of text where needle first occurs (0: nowhere). */
static int line_of(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);
	int line = 1;

	if (!p)
		return 0;
	for (const char *q = text; q < p; q++)
		line += *q == '\n';
	return line;
}

static void check(const struct jobread_out *out, enum jobread_field f, long long v,
		  const char *file, int line, const char *key, const char *where)
{
	const struct jobread_value *x = &out->v[f];

	if (!x->set || x->unknown || x->i != v || strcmp(x->src.file, file) ||
	    (line >= 0 && x->src.line != line) || (key && strcmp(x->src.key, key))) {
		print_error("%s: %s: got %s%s%lld (%s:%d '%s'), want %lld (%s:%d '%s')\n", where,
			    jobread_field_name(f), x->set ? "" : "unset ", x->unknown ? "unknown " : "",
			    x->i, x->src.file, x->src.line, x->src.key, v, file, line, key ? key : "*");
		fail();
	}
}

#define CHECK(out, f, v, file, line, key) check(out, f, v, file, line, key, __func__)

static void check_unknown(const struct jobread_out *out, enum jobread_field f, const char *where)
{
	if (!out->v[f].set || !out->v[f].unknown) {
		print_error("%s: %s should be unknown (set %d, value %lld)\n", where,
			    jobread_field_name(f), out->v[f].set, out->v[f].i);
		fail();
	}
}

#define UNKNOWN(out, f) check_unknown(out, f, __func__)
#define UNSET(out, f) assert_false((out)->v[f].set)

static bool has_note(const struct jobread_out *out, const char *code, const char *text)
{
	for (int i = 0; i < out->n_notes; i++)
		if (!strcmp(out->notes[i].code, code) && (!text || strstr(out->notes[i].message, text)))
			return true;
	return false;
}

static int setup(void **st)
{
	*st = fixture_catalog(NULL);
	return *st ? 0 : -1;
}

static int teardown(void **st)
{
	catalog_destroy(*st);
	return 0;
}

#define S "train.sbatch"

/* ---- Megatron-LM ------------------------------------------------------------------- */

/* GPT-3 style: torchrun with the arguments in bash arrays, as Megatron-LM's
 * examples/gpt3 script writes them. */
static const char gpt_script[] =
	"#!/bin/bash\n"
	"#SBATCH -N 2 --gpus-per-node=8 --ntasks-per-node=1\n"
	"export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
	"GPUS_PER_NODE=8\n"
	"NUM_NODES=$SLURM_NNODES\n"
	"CHECKPOINT_PATH=/lustre/ckpt/gpt-13b\n"
	"DISTRIBUTED_ARGS=(\n"
	"    --nproc_per_node $GPUS_PER_NODE\n"
	"    --nnodes $NUM_NODES\n"
	"    --master_addr localhost --master_port 6000\n"
	")\n"
	"GPT_MODEL_ARGS=(\n"
	"    --num-layers 40\n"
	"    --hidden-size 5120\n"
	"    --num-attention-heads 40\n"
	"    --seq-length 2048\n"
	"    --max-position-embeddings 2048\n"
	")\n"
	"TRAINING_ARGS=(\n"
	"    --micro-batch-size 2\n"
	"    --global-batch-size 512   # tokens per step: 1M\n"
	"    --train-iters 100000\n"
	"    --fp16\n"
	")\n"
	"MODEL_PARALLEL_ARGS=(\n"
	"    --tensor-model-parallel-size 4\n"
	"    --pipeline-model-parallel-size 2\n"
	")\n"
	"LOG_ARGS=(\n"
	"    --save-interval 1000 --save $CHECKPOINT_PATH --load $CHECKPOINT_PATH\n"
	")\n"
	"torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \\\n"
	"    ${GPT_MODEL_ARGS[@]} \\\n"
	"    ${TRAINING_ARGS[@]} \\\n"
	"    ${MODEL_PARALLEL_ARGS[@]} \\\n"
	"    ${LOG_ARGS[@]}\n";

static void test_megatron_gpt_torchrun(void **st)
{
	struct job j = { gpt_script, NULL, 2, 8, 0, 1, NULL, 0 };
	struct jobread_out out;
	const char *t = gpt_script;
	int cmd = line_of(t, "torchrun ");

	read_job(st, &j, &out);
	assert_true(out.is_llm);
	assert_string_equal(out.launcher, "torchrun");
	assert_string_equal(out.trainer, "megatron");
	CHECK(&out, JR_FRAMEWORK, ADV_FW_MEGATRON, S, -1, NULL);
	CHECK(&out, JR_TP, 4, S, line_of(t, "--tensor-model"), "--tensor-model-parallel-size");
	CHECK(&out, JR_PP, 2, S, line_of(t, "--pipeline-model"), "--pipeline-model-parallel-size");
	CHECK(&out, JR_ARCH_LAYERS, 40, S, line_of(t, "--num-layers"), "--num-layers");
	CHECK(&out, JR_ARCH_HIDDEN, 5120, S, line_of(t, "--hidden-size"), "--hidden-size");
	CHECK(&out, JR_ARCH_HEADS, 40, S, line_of(t, "--num-attention-heads"), "--num-attention-heads");
	CHECK(&out, JR_ARCH_MAX_SEQ, 2048, S, line_of(t, "--max-position"), "--max-position-embeddings");
	CHECK(&out, JR_SEQ, 2048, S, line_of(t, "--seq-length"), "--seq-length");
	CHECK(&out, JR_MBS, 2, S, line_of(t, "--micro-batch"), "--micro-batch-size");
	CHECK(&out, JR_GBS, 512, S, line_of(t, "--global-batch"), "--global-batch-size");
	CHECK(&out, JR_PRECISION, ADV_PREC_FP16, S, line_of(t, "--fp16"), "--fp16");
	CHECK(&out, JR_CKPT_STEPS, 1000, S, line_of(t, "--save-interval"), "--save-interval");
	UNSET(&out, JR_CKPT_OFF);
	/* Tied by default; no KV groups without --group-query-attention. */
	CHECK(&out, JR_ARCH_TIED, 1, S, -1, "");
	UNSET(&out, JR_ARCH_KV_HEADS);
	UNSET(&out, JR_ARCH_GATED);
	UNSET(&out, JR_ARCH_VOCAB);
	CHECK(&out, JR_TASK, ADV_TASK_TRAIN, S, -1, NULL);
	/* The launcher: 2 nodes x 8 = 16 processes. */
	CHECK(&out, JR_NODES, 2, S, line_of(t, "--nnodes"), "--nnodes");
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, line_of(t, "--nproc_per_node"), "--nproc_per_node");
	CHECK(&out, JR_WORLD, 16, S, cmd, "torchrun");
	assert_int_equal(out.n_need, 0);
}

/* Llama-style Megatron started by srun directly: srun's tasks are the world. */
static const char llama_script[] =
	"#!/bin/bash\n"
	"#SBATCH --nodes=4 --ntasks-per-node=8 --gpus-per-node=8\n"
	"MODEL=(--num-layers 32 --hidden-size 4096 --num-attention-heads 32\n"
	"  --group-query-attention --num-query-groups 8 --swiglu\n"
	"  --normalization RMSNorm --untie-embeddings-and-output-weights\n"
	"  --kv-channels 128 --vocab-size 128256)\n"
	"PAR=\"--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 --sequence-parallel\"\n"
	"srun --cpu-bind=none -l python pretrain_gpt.py \"${MODEL[@]}\" $PAR \\\n"
	"  --num-layers-per-virtual-pipeline-stage 2 \\\n"
	"  --seq-length 8192 --micro-batch-size 1 --global-batch-size 256 --bf16 \\\n"
	"  --recompute-granularity full --recompute-activations \\\n"
	"  --use-distributed-optimizer --save-interval 500\n";

static void test_megatron_llama_srun(void **st)
{
	struct job j = { llama_script, NULL, 4, 8, 0, 8, NULL, 0 };
	struct jobread_out out;
	const char *t = llama_script;
	int cmd = line_of(t, "srun "), par = line_of(t, "PAR=");

	read_job(st, &j, &out);
	assert_true(out.is_llm);
	assert_string_equal(out.launcher, "srun");
	assert_string_equal(out.trainer, "megatron");
	CHECK(&out, JR_TP, 2, S, par, "--tensor-model-parallel-size");
	CHECK(&out, JR_PP, 4, S, par, "--pipeline-model-parallel-size");
	CHECK(&out, JR_SP, 1, S, par, "--sequence-parallel");
	CHECK(&out, JR_ARCH_KV_HEADS, 8, S, line_of(t, "--num-query-groups"), "--num-query-groups");
	CHECK(&out, JR_ARCH_GATED, 1, S, line_of(t, "--swiglu"), "--swiglu");
	CHECK(&out, JR_ARCH_NORM, 0, S, line_of(t, "--normalization"), "--normalization");
	CHECK(&out, JR_ARCH_TIED, 0, S, line_of(t, "--untie"), "--untie-embeddings-and-output-weights");
	CHECK(&out, JR_ARCH_HEAD_DIM, 128, S, line_of(t, "--kv-channels"), "--kv-channels");
	CHECK(&out, JR_ARCH_VOCAB, 128256, S, line_of(t, "--vocab-size"), "--vocab-size");
	/* arguments.py: int((4 * 4096 * 2 / 3) / 64) * 64 = 10880. */
	CHECK(&out, JR_ARCH_FFN, 10880, S, line_of(t, "--swiglu"), "");
	/* 32 layers / pp 4 = 8 per stage, 2 per virtual stage: vpp 4. */
	CHECK(&out, JR_VPP, 4, S, line_of(t, "--num-layers-per-virtual"), "");
	CHECK(&out, JR_PRECISION, ADV_PREC_BF16, S, line_of(t, "--bf16"), "--bf16");
	/* --recompute-activations wins over --recompute-granularity. */
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_SELECTIVE, S, line_of(t, "--recompute-activations"),
	      "--recompute-activations");
	CHECK(&out, JR_ZERO, 1, S, line_of(t, "--use-distributed"), "--use-distributed-optimizer");
	/* No --save: nothing is ever written. */
	CHECK(&out, JR_CKPT_OFF, 1, S, -1, "");
	UNSET(&out, JR_CKPT_STEPS);
	/* srun inherits 8 tasks per node on 4 nodes. */
	CHECK(&out, JR_WORLD, 32, S, cmd, "--ntasks");
	UNSET(&out, JR_NODES);
}

/* The issue's first job: TP 3 with 64 heads, srun with its own counts. */
static void test_megatron_issue_tp3(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"#SBATCH -N 4 --gpus-per-node=8\n"
		"srun -N4 --ntasks-per-node=8 python pretrain_gpt.py \\\n"
		"  --tensor-model-parallel-size 3 --num-layers 80 --hidden-size 8192 \\\n"
		"  --num-attention-heads 64 --seq-length 4096 --micro-batch-size 1 --bf16 \\\n"
		"  --save /ckpt --save-interval 200\n";
	struct job j = { script, NULL, 4, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	CHECK(&out, JR_TP, 3, S, 4, "--tensor-model-parallel-size");
	CHECK(&out, JR_ARCH_HEADS, 64, S, 5, "--num-attention-heads");
	CHECK(&out, JR_NODES, 4, S, 3, "-N");
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, 3, "--ntasks-per-node");
	CHECK(&out, JR_WORLD, 32, S, 3, "srun");
	CHECK(&out, JR_CKPT_STEPS, 200, S, 6, "--save-interval");
}

/* MoE, context and expert parallelism, fp8, full recompute. */
static void test_megatron_moe(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"ARGS=\"--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --swiglu\"\n"
		"MOE=\"--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 14336\"\n"
		"SHARED=\"--moe-shared-expert-intermediate-size 28672\"\n"
		"torchrun --nproc-per-node=8 --nnodes=$SLURM_NNODES pretrain_gpt.py $ARGS $MOE $SHARED \\\n"
		"  --expert-model-parallel-size 8 --expert-tensor-parallel-size 1 \\\n"
		"  --context-parallel-size 2 --fp8-format hybrid --bf16 \\\n"
		"  --recompute-granularity full --recompute-method uniform \\\n"
		"  --ffn-hidden-size 14336 --save /ckpt --save-interval=250\n";
	struct job j = { script, NULL, 2, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "megatron");
	CHECK(&out, JR_ARCH_EXPERTS, 8, S, 3, "--num-experts");
	CHECK(&out, JR_ARCH_TOPK, 2, S, 3, "--moe-router-topk");
	CHECK(&out, JR_ARCH_EXPERT_FFN, 14336, S, 3, "--moe-ffn-hidden-size");
	/* 28672 of shared width = 2 experts of 14336. */
	CHECK(&out, JR_ARCH_SHARED_EXPERTS, 2, S, 4, "--moe-shared-expert-intermediate-size");
	CHECK(&out, JR_ARCH_FFN, 14336, S, 9, "--ffn-hidden-size");
	CHECK(&out, JR_EP, 8, S, 6, "--expert-model-parallel-size");
	CHECK(&out, JR_ETP, 1, S, 6, "--expert-tensor-parallel-size");
	CHECK(&out, JR_CP, 2, S, 7, "--context-parallel-size");
	CHECK(&out, JR_PRECISION, ADV_PREC_FP8, S, 7, "--fp8-format");
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, S, 8, "--recompute-granularity");
	CHECK(&out, JR_CKPT_STEPS, 250, S, 9, "--save-interval");
	assert_int_equal(out.v[JR_CKPT_STEPS].src.style, JR_STYLE_FLAG_EQ);
	CHECK(&out, JR_NODES, 2, S, 5, "--nnodes");
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, 5, "--nproc-per-node");
	CHECK(&out, JR_WORLD, 16, S, 5, "torchrun");
	/* No precision default over an explicit one; Megatron's fp32 default
	 * only without any. */
}

/* Megatron without --bf16/--fp16 trains in fp32; --save without an
 * interval is said. */
static void test_megatron_defaults(void **st)
{
	static const char script[] =
		"python pretrain_gpt.py --tensor-model-parallel-size 1 --micro-batch-size 4 \\\n"
		"  --num-layers 12 --hidden-size 768 --num-attention-heads 12 --save ckpt\n";
	struct job j = { script, NULL, 1, 1, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "megatron");
	/* Megatron's documented defaults, said as such (apply.c: framework). */
	CHECK(&out, JR_PRECISION, ADV_PREC_FP32, "", 0, "megatron default (no --bf16/--fp16: fp32)");
	assert_true(out.v[JR_PRECISION].src.fw_default);
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_NONE, "", 0,
	      "megatron default (no --recompute-granularity: none)");
	UNSET(&out, JR_CKPT_STEPS);
	UNSET(&out, JR_CKPT_OFF);
	assert_true(has_note(&out, "SCRIPT_UNKNOWN", "--save without --save-interval"));
	/* python alone starts one process: no launcher world. */
	UNSET(&out, JR_WORLD);
}

/* Megatron run with no flag at all (they come from an environment
 * variable empty here): said, and no default taken for what it leaves out. */
static void test_megatron_no_flags(void **st)
{
	static const char script[] =
		"srun python -u pretrain_gpt.py ${GPT_ARGS}\n";
	struct job j = { script, NULL, 1, 8, 8, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "megatron");
	assert_true(has_note(&out, "SCRIPT_UNKNOWN", "runs without any flag"));
	UNSET(&out, JR_PRECISION);
	UNSET(&out, JR_RECOMPUTE);
	UNSET(&out, JR_CKPT_OFF);
	UNSET(&out, JR_TP);
}

/* Megatron-DeepSpeed: the deepspeed launcher, a DeepSpeed config written
 * by a here-document, and flags that win over it. */
static const char mds_script[] =
	"#!/bin/bash\n"
	"ZERO_STAGE=1\n"
	"GAS=4\n"
	"cat <<EOT > ds_config.json\n"
	"{\n"
	"  \"train_batch_size\": 1024,\n"
	"  \"train_micro_batch_size_per_gpu\": 2,\n"
	"  \"gradient_accumulation_steps\": $GAS,\n"
	"  \"zero_optimization\": { \"stage\": 2 },\n"
	"  \"bf16\": { \"enabled\": true },\n"
	"  \"fp16\": { \"enabled\": false }\n"
	"}\n"
	"EOT\n"
	"deepspeed -H hostfile --num_nodes 2 --num_gpus 8 --master_port 29600 pretrain_gpt.py \\\n"
	"  --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 \\\n"
	"  --num-layers 24 --hidden-size 2048 --num-attention-heads 16 \\\n"
	"  --seq-length 2048 --micro-batch-size 4 --global-batch-size 1024 \\\n"
	"  --deepspeed --deepspeed_config ds_config.json --zero-stage $ZERO_STAGE \\\n"
	"  --checkpoint-activations --save /ckpt --save-interval 2000\n";

static void test_megatron_deepspeed(void **st)
{
	struct job j = { mds_script, NULL, 2, 8, 0, 0, NULL, 0 };
	struct jobread_out out;
	const char *t = mds_script;
	int cmd = line_of(t, "deepspeed -H");

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "deepspeed");
	assert_string_equal(out.trainer, "megatron");
	CHECK(&out, JR_FRAMEWORK, ADV_FW_DEEPSPEED, S, line_of(t, "--deepspeed "), "--deepspeed");
	/* The flag wins over the config's stage 2. */
	CHECK(&out, JR_ZERO, 1, S, line_of(t, "--zero-stage"), "--zero-stage");
	CHECK(&out, JR_MBS, 4, S, line_of(t, "--micro-batch-size"), "--micro-batch-size");
	/* From the config, where the flags say nothing. */
	CHECK(&out, JR_GAS, 4, "ds_config.json", 4, "gradient_accumulation_steps");
	CHECK(&out, JR_PRECISION, ADV_PREC_BF16, "ds_config.json", 6, "bf16.enabled");
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, S, line_of(t, "--checkpoint-act"),
	      "--checkpoint-activations");
	CHECK(&out, JR_NODES, 2, S, cmd, "--num_nodes");
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, cmd, "--num_gpus");
	CHECK(&out, JR_WORLD, 16, S, cmd, "deepspeed");
}

/* ---- Hugging Face Trainer and TRL ---------------------------------------------------- */

static const char zero3_json[] =
	"{\n"
	"  \"zero_optimization\": {\n"
	"    \"stage\": 3,\n"
	"    \"overlap_comm\": true\n"
	"  },\n"
	"  \"bf16\": { \"enabled\": \"auto\" },\n"
	"  \"train_micro_batch_size_per_gpu\": \"auto\",\n"
	"  \"gradient_accumulation_steps\": \"auto\",\n"
	"  \"train_batch_size\": \"auto\"\n"
	"}\n";

static void test_hf_run_clm_deepspeed(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"#SBATCH -N1 --gres=gpu:4\n"
		"torchrun --nproc_per_node=gpu run_clm.py \\\n"
		"    --model_name_or_path meta-llama/Meta-Llama-3-8B \\\n"
		"    --dataset_name wikitext --dataset_config_name wikitext-2-raw-v1 \\\n"
		"    --per_device_train_batch_size 4 --gradient_accumulation_steps 8 \\\n"
		"    --block_size 2048 --bf16 --gradient_checkpointing \\\n"
		"    --deepspeed ds_zero3.json --do_train --output_dir /tmp/out \\\n"
		"    --save_steps 1000\n";
	static const struct vfile files[] = { { CWD "/ds_zero3.json", zero3_json }, { NULL, NULL } };
	struct job j = { script, files, 1, 4, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "torchrun");
	assert_string_equal(out.trainer, "hf");
	assert_true(out.v[JR_MODEL].set);
	assert_string_equal(out.v[JR_MODEL].src.key, "--model_name_or_path");
	assert_int_equal(out.v[JR_MODEL].src.line, 4);
	CHECK(&out, JR_ZERO, 3, "ds_zero3.json", 3, "zero_optimization.stage");
	CHECK(&out, JR_FRAMEWORK, ADV_FW_DEEPSPEED, S, 8, "--deepspeed");
	/* "auto" is the Trainer's to fill: its flags give the values. */
	CHECK(&out, JR_MBS, 4, S, 6, "--per_device_train_batch_size");
	CHECK(&out, JR_GAS, 8, S, 6, "--gradient_accumulation_steps");
	UNSET(&out, JR_GBS);
	CHECK(&out, JR_SEQ, 2048, S, 7, "--block_size");
	CHECK(&out, JR_PRECISION, ADV_PREC_BF16, S, 7, "--bf16");
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, S, 7, "--gradient_checkpointing");
	CHECK(&out, JR_CKPT_STEPS, 1000, S, 9, "--save_steps");
	CHECK(&out, JR_TASK, ADV_TASK_FINETUNE, S, -1, NULL);
	/* --nproc_per_node=gpu: the node's 4 GPUs. */
	CHECK(&out, JR_NPROC_PER_NODE, 4, S, 3, "--nproc_per_node");
	assert_int_equal(out.v[JR_NPROC_PER_NODE].src.style, JR_STYLE_FLAG_EQ);
	CHECK(&out, JR_NODES, 1, S, 3, "--nnodes");
	CHECK(&out, JR_WORLD, 4, S, 3, "torchrun");
	assert_false(has_note(&out, "SCRIPT_UNKNOWN", NULL));
}

/* TRL's CLI under accelerate with a DeepSpeed accelerate config; the
 * command line's --num_processes wins over the config's. */
static void test_trl_accelerate(void **st)
{
	static const char acc_yaml[] =
		"compute_environment: LOCAL_MACHINE\n"
		"distributed_type: DEEPSPEED\n"
		"deepspeed_config:\n"
		"  zero3_init_flag: true\n"
		"  zero_stage: 3\n"
		"mixed_precision: bf16\n"
		"num_machines: 1\n"
		"num_processes: 4\n";
	static const char script[] =
		"#!/bin/bash\n"
		"accelerate launch --config_file recipes/zero3.yaml --num_processes 8 \\\n"
		"  trl sft --model_name_or_path Qwen/Qwen2.5-7B --dataset_name trl-lib/Capybara \\\n"
		"  --use_peft --lora_r 16 --max_length 4096 --per_device_train_batch_size 2 \\\n"
		"  --gradient_checkpointing True --save_strategy no\n";
	static const struct vfile files[] = { { CWD "/recipes/zero3.yaml", acc_yaml },
					      { NULL, NULL } };
	struct job j = { script, files, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "accelerate");
	assert_string_equal(out.trainer, "trl");
	CHECK(&out, JR_FRAMEWORK, ADV_FW_DEEPSPEED, "recipes/zero3.yaml", 2, "distributed_type");
	CHECK(&out, JR_ZERO, 3, "recipes/zero3.yaml", 5, "deepspeed_config.zero_stage");
	CHECK(&out, JR_NODES, 1, "recipes/zero3.yaml", 7, "num_machines");
	CHECK(&out, JR_WORLD, 8, S, 2, "--num_processes");
	CHECK(&out, JR_PRECISION, ADV_PREC_BF16, "recipes/zero3.yaml", 6, "mixed_precision");
	CHECK(&out, JR_TASK, ADV_TASK_LORA, S, 4, "--use_peft");
	CHECK(&out, JR_SEQ, 4096, S, 4, "--max_length");
	CHECK(&out, JR_MBS, 2, S, 4, "--per_device_train_batch_size");
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, S, 5, "--gradient_checkpointing");
	CHECK(&out, JR_CKPT_OFF, 1, S, 5, "--save_strategy");
	UNSET(&out, JR_CKPT_STEPS);
}

/* The alignment handbook: accelerate with an FSDP config, the script's
 * arguments in a recipe YAML. */
static void test_hf_recipe_fsdp(void **st)
{
	static const char fsdp_yaml[] =
		"distributed_type: FSDP\n"
		"fsdp_config:\n"
		"  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
		"  fsdp_sharding_strategy: SHARD_GRAD_OP\n"
		"  fsdp_state_dict_type: SHARDED_STATE_DICT\n"
		"num_machines: 2\n"
		"num_processes: 16\n";
	static const char recipe[] =
		"# Model arguments\n"
		"model_name_or_path: mistralai/Mistral-7B-v0.1\n"
		"torch_dtype: bfloat16\n"
		"# Trainer arguments\n"
		"bf16: true\n"
		"gradient_checkpointing: true\n"
		"per_device_train_batch_size: 8\n"
		"gradient_accumulation_steps: 2\n"
		"max_seq_length: 2048\n"
		"save_strategy: \"steps\"\n"
		"save_steps: 200\n";
	static const char script[] =
		"#!/bin/bash\n"
		"#SBATCH -N2 --gpus-per-node=8\n"
		"srun --ntasks-per-node=1 accelerate launch --config_file recipes/fsdp.yaml \\\n"
		"    --machine_rank $SLURM_NODEID --main_process_ip $HEAD \\\n"
		"    scripts/run_sft.py recipes/mistral/sft/config_full.yaml\n";
	static const struct vfile files[] = {
		{ CWD "/recipes/fsdp.yaml", fsdp_yaml },
		{ CWD "/recipes/mistral/sft/config_full.yaml", recipe },
		{ NULL, NULL },
	};
	struct job j = { script, files, 2, 8, 0, 1, NULL, 0 };
	struct jobread_out out;
	const char *rf = "recipes/mistral/sft/config_full.yaml";

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "accelerate");
	assert_string_equal(out.trainer, "trl");
	CHECK(&out, JR_FRAMEWORK, ADV_FW_FSDP, "recipes/fsdp.yaml", 1, "distributed_type");
	CHECK(&out, JR_ZERO, 2, "recipes/fsdp.yaml", 4, "fsdp_config.fsdp_sharding_strategy");
	/* accelerate's world, not srun's one task per node. */
	CHECK(&out, JR_WORLD, 16, "recipes/fsdp.yaml", 7, "num_processes");
	CHECK(&out, JR_NODES, 2, "recipes/fsdp.yaml", 6, "num_machines");
	UNSET(&out, JR_NPROC_PER_NODE);
	assert_string_equal(out.v[JR_MODEL].src.file, rf);
	assert_int_equal(out.v[JR_MODEL].src.line, 2);
	CHECK(&out, JR_PRECISION, ADV_PREC_BF16, rf, 5, "bf16");
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, rf, 6, "gradient_checkpointing");
	CHECK(&out, JR_MBS, 8, rf, 7, "per_device_train_batch_size");
	CHECK(&out, JR_GAS, 2, rf, 8, "gradient_accumulation_steps");
	CHECK(&out, JR_SEQ, 2048, rf, 9, "max_seq_length");
	CHECK(&out, JR_CKPT_STEPS, 200, rf, 11, "save_steps");
	assert_int_equal(out.v[JR_CKPT_STEPS].src.style, JR_STYLE_YAML);
}

/* --fsdp on the Trainer's command line; HF's default checkpoint interval. */
static void test_hf_fsdp_flag(void **st)
{
	static const char script[] =
		"python -m torch.distributed.launch --nproc_per_node 4 --use_env run_clm.py \\\n"
		"  --model_name_or_path gpt2 --fsdp \"full_shard auto_wrap\" --fp16 True \\\n"
		"  --per_device_train_batch_size=1\n";
	struct job j = { script, NULL, 1, 4, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "torch.distributed.launch");
	assert_string_equal(out.trainer, "hf");
	CHECK(&out, JR_ZERO, 3, S, 2, "--fsdp");
	CHECK(&out, JR_FRAMEWORK, ADV_FW_FSDP, S, 2, "--fsdp");
	CHECK(&out, JR_PRECISION, ADV_PREC_FP16, S, 2, "--fp16");
	CHECK(&out, JR_MBS, 1, S, 3, "--per_device_train_batch_size");
	/* TrainingArguments: save_strategy "steps", every 500. */
	CHECK(&out, JR_CKPT_STEPS, 500, S, 1, "--save_steps");
	CHECK(&out, JR_WORLD, 4, S, 1, "torchrun");
}

/* ---- serving ------------------------------------------------------------------------- */

static void test_vllm_serve(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"#SBATCH -N1 --gpus-per-node=8 --ntasks-per-node=1\n"
		"MODEL=meta-llama/Meta-Llama-3-70B-Instruct\n"
		"srun vllm serve $MODEL --tensor-parallel-size 4 --pipeline-parallel-size 2 \\\n"
		"  --max-model-len 32k --max-num-seqs 128 --dtype bfloat16 \\\n"
		"  --kv-cache-dtype fp8 --gpu-memory-utilization 0.92 --port 8000\n";
	struct job j = { script, NULL, 1, 8, 0, 1, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_true(out.is_llm);
	assert_string_equal(out.trainer, "vllm");
	/* The model is where $MODEL was assigned. */
	assert_true(out.v[JR_MODEL].set);
	assert_int_equal(out.v[JR_MODEL].src.line, 3);
	CHECK(&out, JR_TASK, ADV_TASK_INFER, S, 4, NULL);
	CHECK(&out, JR_TP, 4, S, 4, "--tensor-parallel-size");
	CHECK(&out, JR_PP, 2, S, 4, "--pipeline-parallel-size");
	/* vLLM's human-readable ints: k is 1000. */
	CHECK(&out, JR_SEQ, 32000, S, 5, "--max-model-len");
	CHECK(&out, JR_MAX_SEQS, 128, S, 5, "--max-num-seqs");
	CHECK(&out, JR_PRECISION, ADV_PREC_BF16, S, 5, "--dtype");
	/* vLLM starts its own 8 workers: srun's one task is not the world. */
	CHECK(&out, JR_WORLD, 8, S, 4, "");
	UNSET(&out, JR_NPROC_PER_NODE);
	/* --kv-cache-dtype fp8: the KV cache is costed at one byte. */
	assert_true(out.kv_fp8);
	assert_false(has_note(&out, "SCRIPT_ASSUMED", "--kv-cache-dtype"));
	/* --gpu-memory-utilization 0.92: the engine's pool (issue 19). */
	assert_int_equal(out.v[JR_MEM_SHARE].i, 920);
	assert_false(out.share_static);
	assert_false(has_note(&out, "SCRIPT_ASSUMED", "--gpu-memory-utilization"));
	UNSET(&out, JR_EP);
}

/* srun's own command (no script): the OpenAI server module, fp8, EP. */
static void test_vllm_api_server_srun(void **st)
{
	static char *argv[] = {
		"python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
		"mistralai/Mixtral-8x7B-Instruct-v0.1", "-tp", "4", "-dp", "2", "--quantization",
		"fp8", "--enable-expert-parallel", "--max-model-len=16K", NULL,
	};
	struct job j = { NULL, NULL, 1, 8, 0, 0, argv, 13 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "vllm");
	assert_string_equal(out.v[JR_MODEL].src.key, "--model");
	CHECK(&out, JR_TP, 4, JR_CMDLINE_FILE, 0, "-tp");
	CHECK(&out, JR_DP, 2, JR_CMDLINE_FILE, 0, "-dp");
	CHECK(&out, JR_PRECISION, ADV_PREC_FP8, JR_CMDLINE_FILE, 0, "--quantization");
	CHECK(&out, JR_EP, 8, JR_CMDLINE_FILE, 0, "--enable-expert-parallel");
	CHECK(&out, JR_SEQ, 16384, JR_CMDLINE_FILE, 0, "--max-model-len");
	CHECK(&out, JR_WORLD, 8, JR_CMDLINE_FILE, 0, "");
}

static void test_sglang(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"#SBATCH -N2 --gpus-per-node=8 --ntasks-per-node=1\n"
		"srun python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 \\\n"
		"  --tp 16 --nnodes 2 --node-rank $SLURM_NODEID --dist-init-addr $HEAD:5000 \\\n"
		"  --enable-dp-attention --dp 8 --ep-size 16 --trust-remote-code \\\n"
		"  --context-length 8192 --max-running-requests 64 --mem-fraction-static 0.85\n";
	struct job j = { script, NULL, 2, 8, 0, 1, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "sglang");
	assert_string_equal(out.v[JR_MODEL].src.key, "--model-path");
	CHECK(&out, JR_TASK, ADV_TASK_INFER, S, 3, NULL);
	CHECK(&out, JR_TP, 16, S, 4, "--tp");
	CHECK(&out, JR_NODES, 2, S, 4, "--nnodes");
	CHECK(&out, JR_EP, 16, S, 5, "--ep-size");
	/* DP attention runs inside the TP group: no GPUs of its own. */
	UNSET(&out, JR_DP);
	CHECK(&out, JR_SEQ, 8192, S, 6, "--context-length");
	CHECK(&out, JR_MAX_SEQS, 64, S, 6, "--max-running-requests");
	CHECK(&out, JR_WORLD, 16, S, 3, "");
	UNSET(&out, JR_NPROC_PER_NODE);
	/* SGLang's pool is static: weights and KV cache (issue 19). */
	assert_int_equal(out.v[JR_MEM_SHARE].i, 850);
	assert_true(out.share_static);
	/* The published DeepSeek-V3 checkpoint stores fp8 weights (catalog
	 * weights_dtype): served so, with the KV cache in bf16. */
	assert_int_equal(out.v[JR_PRECISION].i, ADV_PREC_FP8);
	assert_non_null(strstr(out.v[JR_PRECISION].src.key, "weights_dtype fp8"));
	assert_false(out.kv_fp8);
}

/* TRL's generation server: vLLM with TRL's underscore flags, in a Slurm
 * step on one node of three; a TP computed at run time leaves the
 * engine's world unknown (srun's one task is not it). */
static void test_trl_vllm_serve(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"TP=$(nvidia-smi -L | wc -l)\n"
		"srun -N 1 -n 1 -w \"$GEN\" trl vllm-serve --model meta-llama/Meta-Llama-3-8B \\\n"
		"  --tensor_parallel_size 8 --max_model_len 4096 --kv_cache_dtype fp8_e5m2 &\n"
		"srun --nodes=1 --ntasks=1 trl vllm-serve --model meta-llama/Meta-Llama-3-8B \\\n"
		"  --tensor_parallel_size \"$TP\" &\n"
		"wait\n";
	struct job j = { script, NULL, 3, 8, 0, 1, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "vllm");
	CHECK(&out, JR_TASK, ADV_TASK_INFER, S, 3, NULL);
	CHECK(&out, JR_TP, 8, S, 4, "--tensor_parallel_size");
	CHECK(&out, JR_SEQ, 4096, S, 4, "--max_model_len");
	CHECK(&out, JR_WORLD, 8, S, 3, "");
	assert_true(out.kv_fp8);
	assert_int_equal(out.step_nodes, 1);
	assert_string_equal(out.step_src.key, "-N");
}

/* A model path no Hub id can be (huggingface_hub's validate_repo_id: at
 * most one '/', none leading) and with no config.json here is a directory
 * on the cluster: unknown.  "org/name" not in the catalog stays a name. */
static void test_serve_local_model_path(void **st)
{
	static const char *const paths[] = {
		"/fsx/deepseek-r1-checkpoint", "./out/final", "~/models/x", "ckpts/run1/final",
	};
	char script[512];

	for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
		struct job j = { script, NULL, 1, 8, 0, 1, NULL, 0 };
		struct jobread_out out;

		snprintf(script, sizeof(script),
			 "#!/bin/bash\npython -m sglang.launch_server --model-path %s --tp 8\n",
			 paths[k]);
		read_job(st, &j, &out);
		UNKNOWN(&out, JR_MODEL);
		assert_non_null(strstr(out.v[JR_MODEL].s, paths[k]));
	}
	{
		struct job j = { "#!/bin/bash\nvllm serve acme/house-model-7b -tp 8\n", NULL, 1, 8, 0,
				 1, NULL, 0 };
		struct jobread_out out;

		read_job(st, &j, &out);
		assert_false(out.v[JR_MODEL].unknown);
		assert_string_equal(out.v[JR_MODEL].s, "acme/house-model-7b");
	}
}

/* TGI reads every flag from its upper-case variable too (clap's env): an
 * exported variable, a prefix assignment, env's NAME=V and docker's -e,
 * the last of which a container sees alone.  No --num-shard: one shard per
 * GPU of CUDA_VISIBLE_DEVICES, as the job sets it or Slurm does. */
static void test_tgi_env(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"export MODEL_ID=meta-llama/Meta-Llama-3-70B-Instruct\n"
		"PLAIN_ONLY=7\n"
		"MAX_TOTAL_TOKENS=4096 text-generation-launcher --max-batch-size 16 &\n"
		"env CUDA_VISIBLE_DEVICES=0,1 NUM_SHARD=$PLAIN_ONLY text-generation-launcher\n";
	struct job j = { script, NULL, 1, 8, 0, 1, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "tgi");
	assert_string_equal(out.v[JR_MODEL].s, "meta-llama/Meta-Llama-3-70B-Instruct");
	assert_string_equal(out.v[JR_MODEL].src.key, "MODEL_ID");
	assert_int_equal(out.v[JR_MODEL].src.line, 2);
	assert_int_equal(out.v[JR_MODEL].src.style, JR_STYLE_ENV);
	CHECK(&out, JR_SEQ, 4096, S, 4, "MAX_TOTAL_TOKENS");
	CHECK(&out, JR_MAX_SEQS, 16, S, 4, "--max-batch-size");
	/* Slurm's 8 GPUs of the node: TGI's default, said as one. */
	assert_int_equal(out.v[JR_TP].i, 8);
	assert_true(out.v[JR_TP].src.fw_default);
	CHECK(&out, JR_WORLD, 8, S, 4, "");
	/* --cuda-memory-fraction's default 1.0. */
	assert_int_equal(out.v[JR_MEM_SHARE].i, 1000);
	{
		static const char docker[] =
			"#!/bin/bash\n"
			"export NUM_SHARD=8\n"
			"docker run --gpus all -e NUM_SHARD=2 -e MODEL_ID=Qwen/Qwen2.5-72B-Instruct \\\n"
			"  ghcr.io/huggingface/text-generation-inference:3.0 --dtype bfloat16\n";
		struct job d = { docker, NULL, 1, 8, 0, 1, NULL, 0 };

		read_job(st, &d, &out);
		assert_string_equal(out.trainer, "tgi");
		assert_string_equal(out.v[JR_MODEL].s, "Qwen/Qwen2.5-72B-Instruct");
		CHECK(&out, JR_TP, 2, S, 3, "NUM_SHARD");
		CHECK(&out, JR_PRECISION, ADV_PREC_BF16, S, 4, "--dtype");
	}
	{
		/* A clean environment: apptainer --cleanenv passes none of the
		 * script's variables, nor srun's, only its own --env ones;
		 * srun --export=ALL,NAME=V adds one. */
		static const char clean[] =
			"#!/bin/bash\n"
			"export MODEL_ID=meta-llama/Meta-Llama-3-70B-Instruct\n"
			"MAX_TOTAL_TOKENS=100 srun --export=ALL,NUM_SHARD=4 apptainer exec --nv \\\n"
			"  --cleanenv --env DTYPE=float16,MAX_BATCH_SIZE=8 tgi.sif text-generation-launcher\n";
		static const char exported[] =
			"#!/bin/bash\n"
			"export MODEL_ID=meta-llama/Meta-Llama-3-70B-Instruct\n"
			"srun --export=ALL,NUM_SHARD=4 text-generation-launcher\n";
		struct job c = { clean, NULL, 1, 8, 0, 1, NULL, 0 };
		struct job e = { exported, NULL, 1, 8, 0, 1, NULL, 0 };

		read_job(st, &c, &out);
		assert_string_equal(out.trainer, "tgi");
		UNKNOWN(&out, JR_MODEL);
		CHECK(&out, JR_MAX_SEQS, 8, S, 4, "MAX_BATCH_SIZE");
		CHECK(&out, JR_PRECISION, ADV_PREC_FP16, S, 4, "DTYPE");
		assert_int_equal(out.v[JR_TP].i, 8);   /* not srun's NUM_SHARD */
		UNSET(&out, JR_SEQ);                    /* nor the prefix's */
		read_job(st, &e, &out);
		assert_string_equal(out.v[JR_MODEL].s, "meta-llama/Meta-Llama-3-70B-Instruct");
		CHECK(&out, JR_TP, 4, S, 3, "NUM_SHARD");
	}
	{
		/* A Slurm step that names its GPUs sees those (srun --gres). */
		struct job g = { "#!/bin/bash\nsrun -n 1 --gres=gpu:h100:4 text-generation-launcher "
				 "--model-id Qwen/Qwen2.5-72B-Instruct\n", NULL, 1, 8, 0, 1, NULL, 0 };

		read_job(st, &g, &out);
		CHECK(&out, JR_TP, 4, S, 2, "srun --gres");
		assert_false(out.v[JR_TP].src.fw_default);
	}
	{
		/* In a container, without --num-shard: docker's --gpus decides. */
		static const char docker[] =
			"#!/bin/bash\n"
			"docker run --gpus all ghcr.io/huggingface/text-generation-inference \\\n"
			"  --model-id Qwen/Qwen2.5-72B-Instruct\n";
		struct job d = { docker, NULL, 1, 8, 0, 1, NULL, 0 };

		read_job(st, &d, &out);
		UNKNOWN(&out, JR_TP);
		UNKNOWN(&out, JR_WORLD);
	}
}

/* trtllm-serve: it starts tp x pp x cp workers itself, unless
 * trtllm-llmapi-launch runs it in each of srun's tasks; its YAML overrides
 * the flags. */
static void test_trtllm_serve(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/extra.yml", "tensor_parallel_size: 8\nkv_cache_config:\n  dtype: fp8\n"
				    "quant_config:\n  quant_algo: W4A16_AWQ\n" },
		{ NULL, NULL },
	};
	static const char script[] =
		"#!/bin/bash\n"
		"trtllm-serve meta-llama/Meta-Llama-3-70B-Instruct --tp_size 4 --pp_size 2 \\\n"
		"  --max_batch_size 64 --extra_llm_api_options extra.yml\n";
	static const char launched[] =
		"#!/bin/bash\n"
		"srun --ntasks-per-node=8 trtllm-llmapi-launch trtllm-serve serve \\\n"
		"  meta-llama/Meta-Llama-3-70B-Instruct --tp_size 4\n";
	struct job j = { script, files, 1, 8, 0, 1, NULL, 0 };
	struct job l = { launched, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "trtllm");
	assert_int_equal(out.v[JR_MODEL].src.line, 2);
	CHECK(&out, JR_TP, 8, "extra.yml", 1, "tensor_parallel_size");
	CHECK(&out, JR_PP, 2, S, 2, "--pp_size");
	CHECK(&out, JR_MAX_SEQS, 64, S, 3, "--max_batch_size");
	assert_true(out.kv_fp8);
	CHECK(&out, JR_WEIGHTS, ADV_WEIGHTS_INT4, "extra.yml", 5, "quant_config.quant_algo");
	CHECK(&out, JR_WORLD, 16, S, 2, "");
	assert_true(has_note(&out, "SCRIPT_ASSUMED", "--kv_cache_free_gpu_memory_fraction"));
	read_job(st, &l, &out);
	assert_string_equal(out.trainer, "trtllm");
	CHECK(&out, JR_TP, 4, S, 3, "--tp_size");
	/* srun's 8 tasks are the workers. */
	assert_int_equal(out.v[JR_WORLD].i, 8);
	assert_false(out.v[JR_WORLD].src.fw_default);
	{
		/* click takes options before the operand; a disaggregated
		 * server is not read (said by follow.c instead). */
		struct job o = { "#!/bin/bash\ntrtllm-serve --tp_size 2 --trust_remote_code "
				 "meta-llama/Meta-Llama-3-8B-Instruct --port 8000\n", NULL, 1, 8, 0, 1,
				 NULL, 0 };
		struct job d = { "#!/bin/bash\ntrtllm-serve disaggregated -c disagg.yaml\n", NULL, 1,
				 8, 0, 1, NULL, 0 };

		read_job(st, &o, &out);
		assert_string_equal(out.v[JR_MODEL].s, "meta-llama/Meta-Llama-3-8B-Instruct");
		CHECK(&out, JR_WORLD, 2, S, 2, "");
		read_job(st, &d, &out);
		assert_string_not_equal(out.trainer, "trtllm");
		assert_true(has_note(&out, "SCRIPT_NOT_FOLLOWED", "trtllm-serve"));
	}
	{
		/* The module of the console script, with its subcommand. */
		struct job m = { "#!/bin/bash\npython -m tensorrt_llm.commands.serve serve "
				 "meta-llama/Meta-Llama-3-8B-Instruct --pp_size 2\n", NULL, 1, 8, 0, 1,
				 NULL, 0 };

		read_job(st, &m, &out);
		assert_string_equal(out.trainer, "trtllm");
		assert_string_equal(out.v[JR_MODEL].s, "meta-llama/Meta-Llama-3-8B-Instruct");
		CHECK(&out, JR_PP, 2, S, 2, "--pp_size");
	}
	{
		/* A built engine: its model is not the directory's name. */
		struct job e = { "#!/bin/bash\ntrtllm-serve /engines/llama70b-tp4 --backend tensorrt "
				 "--tp_size 4\n", NULL, 1, 8, 0, 1, NULL, 0 };

		read_job(st, &e, &out);
		UNKNOWN(&out, JR_MODEL);
		assert_non_null(strstr(out.v[JR_MODEL].s, "TensorRT engine"));
		CHECK(&out, JR_TP, 4, S, 2, "--tp_size");
	}
}

/* llama-server: the GPUs its one process uses: every visible one, split
 * by layer (pipeline) or by row (tensor); --tensor-split's zero shares
 * leave devices out; -sm none is one GPU. */
static void test_llama_server(void **st)
{
	static const struct {
		const char *flags;
		enum jobread_field f;
		long long gpus;
	} cases[] = {
		{ "", JR_PP, 4 },
		{ "-sm row", JR_TP, 4 },
		{ "--tensor-split 3,0,1,0", JR_PP, 2 },
		{ "--split-mode none", JR_PP, 1 },
	};
	char script[256];

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct job j = { script, NULL, 1, 4, 0, 1, NULL, 0 };
		struct jobread_out out;

		snprintf(script, sizeof(script), "#!/bin/bash\nllama-server -m /m/x.gguf -ngl 99 %s\n",
			 cases[k].flags);
		read_job(st, &j, &out);
		assert_string_equal(out.trainer, "llama.cpp");
		UNKNOWN(&out, JR_MODEL);
		UNKNOWN(&out, JR_WEIGHTS);
		assert_int_equal(out.v[JR_WORLD].i, cases[k].gpus);
		if (cases[k].gpus > 1)
			assert_int_equal(out.v[cases[k].f].i, cases[k].gpus);
		else
			UNSET(&out, JR_PP);
	}
}

/* lm_eval --model hf without a launcher or parallelize: one process on one
 * GPU (HFLM's device cuda), said as the default; an API model runs
 * elsewhere. */
static void test_lm_eval_hf(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"lm_eval --model hf --model_args pretrained=meta-llama/Meta-Llama-3-8B,dtype=float16 \\\n"
		"  --tasks arc_easy --batch_size 8\n";
	static const char api[] =
		"#!/bin/bash\n"
		"lm-eval run --model local-completions --model_args model=x,base_url=http://h/v1\n";
	struct job j = { script, NULL, 1, 4, 0, 1, NULL, 0 };
	struct job a = { api, NULL, 1, 4, 0, 1, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "lm-eval-hf");
	assert_string_equal(out.v[JR_MODEL].s, "meta-llama/Meta-Llama-3-8B");
	CHECK(&out, JR_PRECISION, ADV_PREC_FP16, S, 2, "dtype");
	CHECK(&out, JR_MAX_SEQS, 8, S, 3, "--batch_size");
	assert_int_equal(out.v[JR_WORLD].i, 1);
	assert_true(out.v[JR_WORLD].src.fw_default);
	CHECK(&out, JR_TASK, ADV_TASK_INFER, S, 2, NULL);
	read_job(st, &a, &out);
	assert_true(out.is_llm);
	UNKNOWN(&out, JR_MODEL);
	UNSET(&out, JR_WORLD);
	{
		/* vLLM's quantization names and KV dtype, handed to LLM(). */
		struct job v = { "#!/bin/bash\nlm_eval --model vllm --model_args "
				 "pretrained=meta-llama/Meta-Llama-3-70B-Instruct,quantization=fp8,"
				 "kv_cache_dtype=fp8,tensor_parallel_size=2 --tasks gsm8k\n", NULL, 1, 4,
				 0, 1, NULL, 0 };

		read_job(st, &v, &out);
		CHECK(&out, JR_WEIGHTS, ADV_WEIGHTS_FP8, S, 2, "quantization");
		CHECK(&out, JR_PRECISION, ADV_PREC_FP8, S, 2, "quantization");
		assert_true(out.kv_fp8);
		CHECK(&out, JR_WORLD, 2, S, 2, "");
	}
}

/* vllm serve --config FILE: the file's options come before the command
 * line's (a flag wins), the positional model before the file's model. */
static void test_vllm_config(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/v.yaml", "model: meta-llama/Meta-Llama-3-8B\ntensor_parallel_size: 2\n"
				 "dtype: float16\nquantization: fp8\nmax-num-seqs: 8\n" },
		{ NULL, NULL },
	};
	struct job j = { "#!/bin/bash\nvllm serve meta-llama/Meta-Llama-3-70B-Instruct --config v.yaml "
			 "--max-num-seqs 16\n", files, 1, 8, 0, 1, NULL, 0 };
	struct job m = { "#!/bin/bash\nvllm serve --config v.yaml\n", files, 1, 8, 0, 1, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.v[JR_MODEL].s, "meta-llama/Meta-Llama-3-70B-Instruct");
	CHECK(&out, JR_TP, 2, "v.yaml", 2, "tensor_parallel_size");
	CHECK(&out, JR_MAX_SEQS, 16, S, 2, "--max-num-seqs");
	CHECK(&out, JR_WEIGHTS, ADV_WEIGHTS_FP8, "v.yaml", 4, "quantization");
	CHECK(&out, JR_PRECISION, ADV_PREC_FP8, "v.yaml", 4, "quantization");
	CHECK(&out, JR_WORLD, 2, S, 2, "");
	read_job(st, &m, &out);
	assert_string_equal(out.v[JR_MODEL].s, "meta-llama/Meta-Llama-3-8B");
	CHECK(&out, JR_MAX_SEQS, 8, "v.yaml", 5, "max-num-seqs");
}

/* The torch dtype names the servers and evaluators share (jr_torch_dtype):
 * "auto" and the unknown are left to the engine. */
static void test_torch_dtype(void **st)
{
	(void)st;
	assert_int_equal(jr_torch_dtype("bfloat16"), ADV_PREC_BF16);
	assert_int_equal(jr_torch_dtype("BF16"), ADV_PREC_BF16);
	assert_int_equal(jr_torch_dtype("half"), ADV_PREC_FP16);
	assert_int_equal(jr_torch_dtype("float16"), ADV_PREC_FP16);
	assert_int_equal(jr_torch_dtype("float"), ADV_PREC_FP32);
	assert_int_equal(jr_torch_dtype("fp32"), ADV_PREC_FP32);
	assert_int_equal(jr_torch_dtype("auto"), -1);
	assert_int_equal(jr_torch_dtype("float8"), -1);
	assert_int_equal(jr_torch_dtype(""), -1);
	assert_int_equal(jr_torch_dtype(NULL), -1);
}

/* A model word left empty by a variable the reader does not see set
 * ("$MODEL" of the submission's environment): said, not dropped. */
static void test_serve_empty_model(void **st)
{
	static const char *const scripts[] = {
		"#!/bin/bash\npython3 -m vllm.entrypoints.openai.api_server --model \"$M\" -tp 2\n",
		"#!/bin/bash\nvllm serve \"$M\" -tp 2\n",
		"#!/bin/bash\ntrtllm-serve \"$M\" --tp_size 2\n",
		"#!/bin/bash\ntext-generation-launcher --model-id \"$M\" --num-shard 2\n",
	};

	for (size_t k = 0; k < sizeof(scripts) / sizeof(scripts[0]); k++) {
		struct job j = { scripts[k], NULL, 1, 2, 0, 1, NULL, 0 };
		struct jobread_out out;

		read_job(st, &j, &out);
		UNKNOWN(&out, JR_MODEL);
		assert_non_null(strstr(out.v[JR_MODEL].s, "an empty value"));
		assert_int_equal(out.v[JR_TP].i, 2);
	}
}

/* srun -w "$HOSTS" without -N: a part of the job whose size is known only
 * at run time. */
static void test_srun_nodelist_unknown(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"HOSTS=$(scontrol show hostnames | head -2 | paste -sd,)\n"
		"srun --nodelist=\"$HOSTS\" torchrun --nnodes 2 --nproc_per_node 8 train.py "
		"--model meta-llama/Llama-3.1-8B\n";
	struct job j = { script, NULL, 4, 8, 0, 1, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_int_equal(out.step_nodes, -1);
	assert_string_equal(out.step_src.key, "--nodelist");
	CHECK(&out, JR_NODES, 2, S, 3, "--nnodes");
	{
		/* --overlap: a driver beside a Ray cluster, whose workers run on
		 * every node: no part of the job. */
		static const char overlap[] =
			"#!/bin/bash\n"
			"srun --overlap -N1 -n1 -w \"$HEAD\" torchrun --nnodes 4 --nproc_per_node 8 t.py\n";
		struct job k = { overlap, NULL, 4, 8, 0, 1, NULL, 0 };

		read_job(st, &k, &out);
		assert_int_equal(out.step_nodes, 0);
	}
}

/* ---- launchers and wrappers ------------------------------------------------------------ */

/* srun, env, numactl, singularity and the interpreter's options. */
static void test_wrappers_srun(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"srun --ntasks-per-node=8 --cpu-bind=none --container-image x \\\n"
		"  env -u SLURM_PROCID NCCL_DEBUG=INFO numactl --interleave=all -N 0 \\\n"
		"  singularity exec --nv -B /data:/data megatron.sif \\\n"
		"  python3 -u -X faulthandler -W ignore pretrain_gpt.py \\\n"
		"  --tensor-model-parallel-size 8 --micro-batch-size 1\n";
	struct job j = { script, NULL, 2, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "srun");
	assert_string_equal(out.trainer, "megatron");
	CHECK(&out, JR_TP, 8, S, 6, "--tensor-model-parallel-size");
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, 2, "--ntasks-per-node");
	CHECK(&out, JR_WORLD, 16, S, 2, "srun");
}

/* time, nohup, stdbuf, taskset, uv run and python -m torch.distributed.run. */
static void test_wrappers_module(void **st)
{
	static const char script[] =
		"time nohup uv run --with wandb python -m \\\n"
		"  torch.distributed.run --standalone --nproc-per-node 8 pretrain_gpt.py \\\n"
		"  --tensor-model-parallel-size 2 --pipeline-model-parallel-size 1\n";
	struct job j = { script, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "torchrun");
	assert_string_equal(out.trainer, "megatron");
	CHECK(&out, JR_NODES, 1, S, 2, "--nnodes");
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, 2, "--nproc-per-node");
	/* The launcher's word (the module) is on line 2. */
	CHECK(&out, JR_WORLD, 8, S, 2, "torchrun");
	CHECK(&out, JR_TP, 2, S, 3, "--tensor-model-parallel-size");

	/* taskset's CPU list, then the command. */
	j.script = "stdbuf -oL taskset -c 0-63 torchrun --nproc_per_node 4 pretrain_gpt.py \\\n"
		   "  --tensor-model-parallel-size 4\n";
	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "torchrun");
	CHECK(&out, JR_WORLD, 4, S, 1, "torchrun");
	CHECK(&out, JR_TP, 4, S, 2, "--tensor-model-parallel-size");
}

/* conda run and a module program: `python -m trl sft`. */
static void test_conda_trl_module(void **st)
{
	static const char script[] =
		"conda run -n train --no-capture-output python -m trl sft \\\n"
		"  --model_name_or_path meta-llama/Meta-Llama-3-8B --lora_r 8 --save_strategy epoch\n";
	struct job j = { script, NULL, 1, 1, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "trl");
	CHECK(&out, JR_TASK, ADV_TASK_LORA, S, 2, "--lora_r");
	/* Once per epoch: how long that is is not known. */
	UNKNOWN(&out, JR_CKPT_STEPS);
}

/* srun -n16 (attached) starting an HF script directly. */
static void test_srun_ntasks(void **st)
{
	static const char script[] =
		"srun -n16 -N2-2 --gpus-per-task=1 python train.py --model_name_or_path gpt2 \\\n"
		"  --per_device_train_batch_size 8\n";
	struct job j = { script, NULL, 2, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "hf");
	CHECK(&out, JR_WORLD, 16, S, 1, "-n");
	CHECK(&out, JR_NODES, 2, S, 1, "-N");
	CHECK(&out, JR_MBS, 8, S, 2, "--per_device_train_batch_size");
}

/* srun starting torchrun once per node: torchrun's world wins. */
static void test_srun_torchrun(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"#SBATCH -N4 --ntasks-per-node=1 --gpus-per-node=8\n"
		"HEAD=node001\n"
		"srun torchrun --nnodes $SLURM_NNODES --nproc_per_node $SLURM_GPUS_ON_NODE \\\n"
		"  --rdzv_id 42 --rdzv_backend c10d --rdzv_endpoint $HEAD:29500 \\\n"
		"  pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4\n";
	struct job j = { script, NULL, 4, 8, 0, 1, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "torchrun");
	CHECK(&out, JR_NODES, 4, S, 4, "--nnodes");
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, 4, "--nproc_per_node");
	CHECK(&out, JR_WORLD, 32, S, 4, "torchrun");
	CHECK(&out, JR_PP, 4, S, 6, "--pipeline-model-parallel-size");
}

/* torchrun --nnodes MIN:MAX: elastic, MAX assumed and said. */
static void test_torchrun_elastic(void **st)
{
	static const char script[] =
		"torchrun --nnodes=1:4 --nproc_per_node 8 --max-restarts 3 pretrain_gpt.py \\\n"
		"  --tensor-model-parallel-size 8 --micro-batch-size 1\n";
	struct job j = { script, NULL, 4, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	CHECK(&out, JR_NODES, 4, S, 1, "--nnodes");
	CHECK(&out, JR_WORLD, 32, S, 1, "torchrun");
	assert_true(has_note(&out, "SCRIPT_ASSUMED", "elastic"));
}

static void test_mpirun(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"mpirun -np 16 --map-by ppr:8:node -x NCCL_DEBUG=INFO --mca btl ^openib \\\n"
		"  --bind-to none python pretrain_gpt.py --tensor-model-parallel-size 4 \\\n"
		"  --micro-batch-size 2\n";
	struct job j = { script, NULL, 2, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "mpirun");
	assert_string_equal(out.trainer, "megatron");
	CHECK(&out, JR_WORLD, 16, S, 2, "-np");
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, 2, "--map-by");
	CHECK(&out, JR_TP, 4, S, 3, "--tensor-model-parallel-size");
}

/* A host list decides at run time: said, and no world. */
static void test_mpirun_hosts(void **st)
{
	static const char script[] =
		"mpiexec -hosts $(cat hosts.txt) -ppn 8 python pretrain_gpt.py \\\n"
		"  --tensor-model-parallel-size 4 --micro-batch-size 2\n";
	struct job j = { script, NULL, 2, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "mpiexec");
	assert_true(has_note(&out, "SCRIPT_UNKNOWN", "-hosts"));
	UNSET(&out, JR_WORLD);
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, 1, "-ppn");
}

/* The deepspeed launcher with a hostfile or a GPU filter: unknown. */
static void test_deepspeed_hostfile(void **st)
{
	static const char script[] =
		"deepspeed --hostfile=/job/hostfile --num_gpus 8 train.py \\\n"
		"  --model_name_or_path gpt2 --deepspeed ds.json --per_device_train_batch_size 2\n"
		"deepspeed --include localhost:0,1 train.py --model_name_or_path gpt2\n";
	static const char ds[] = "{ \"zero_optimization\": { \"stage\": \"auto\" } }\n";
	static const struct vfile files[] = { { CWD "/ds.json", ds }, { NULL, NULL } };
	struct job j = { script, files, 2, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "deepspeed");
	assert_string_equal(out.trainer, "hf");
	UNKNOWN(&out, JR_NODES);
	assert_string_equal(out.v[JR_NODES].src.key, "--hostfile");
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, 1, "--num_gpus");
	UNSET(&out, JR_WORLD);
	/* "auto" stage: the Trainer's; not a note. */
	UNSET(&out, JR_ZERO);
	CHECK(&out, JR_FRAMEWORK, ADV_FW_DEEPSPEED, S, 2, "--deepspeed");

	/* The second command alone: --include filters GPUs at run time. */
	j.script = "deepspeed --include localhost:0,1 train.py --model_name_or_path gpt2\n";
	read_job(st, &j, &out);
	UNKNOWN(&out, JR_WORLD);
	assert_string_equal(out.v[JR_WORLD].src.key, "--include");
}

/* accelerate without a config or a count: the user's default config is
 * not read, and that is said. */
static void test_accelerate_default(void **st)
{
	static const char script[] =
		"accelerate launch --mixed_precision fp16 train.py --model_name_or_path gpt2\n"
		"accelerate launch --multi_gpu --num_machines 2 --use_fsdp train.py "
		"--model_name_or_path gpt2\n";
	struct job j = { script, NULL, 2, 4, 0, 0, NULL, 0 };
	struct jobread_out out;

	j.script = "accelerate launch --mixed_precision fp16 train.py --model_name_or_path gpt2\n";
	read_job(st, &j, &out);
	assert_string_equal(out.launcher, "accelerate");
	UNKNOWN(&out, JR_WORLD);
	CHECK(&out, JR_PRECISION, ADV_PREC_FP16, S, 1, "--mixed_precision");

	j.script = script + strlen("accelerate launch --mixed_precision fp16 train.py "
				   "--model_name_or_path gpt2\n");
	read_job(st, &j, &out);
	/* --multi_gpu without a count: every GPU of each machine. */
	CHECK(&out, JR_WORLD, 8, S, 1, "--num_processes");
	CHECK(&out, JR_NODES, 2, S, 1, "--num_machines");
	CHECK(&out, JR_ZERO, 3, S, 1, "--use_fsdp");
	CHECK(&out, JR_FRAMEWORK, ADV_FW_FSDP, S, 1, "--use_fsdp");
}

/* ---- unknowns and bad values ----------------------------------------------------------- */

static void test_unknowns(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"NODES=$(cat nodes.txt)\n"
		"torchrun --nnodes $NODES --nproc_per_node 8 pretrain_gpt.py \\\n"
		"  --tensor-model-parallel-size $(python -c 'print(8)') \\\n"
		"  --pipeline-model-parallel-size 2 --micro-batch-size 1\n";
	struct job j = { script, NULL, 2, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "megatron");
	UNKNOWN(&out, JR_NODES);
	assert_string_equal(out.v[JR_NODES].src.key, "--nnodes");
	assert_int_equal(out.v[JR_NODES].src.line, 3);
	UNKNOWN(&out, JR_TP);
	assert_int_equal(out.v[JR_TP].src.line, 4);
	/* Nodes unknown: the world is not guessed. */
	UNSET(&out, JR_WORLD);
	CHECK(&out, JR_NPROC_PER_NODE, 8, S, 3, "--nproc_per_node");
	CHECK(&out, JR_PP, 2, S, 5, "--pipeline-model-parallel-size");
}

/* `scontrol show hostnames $SLURM_JOB_NODELIST | wc -l` is the job's node
 * count (nanotron's and SmolLM's scripts): known when the job's resources
 * say it, with the source at the flag that uses it; unknown otherwise, and
 * after the script sets the node list itself. */
static void test_hostname_count(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"export COUNT_NODE=`scontrol show hostnames \"$SLURM_JOB_NODELIST\" | wc -l`\n"
		"srun bash -c \"torchrun --nproc_per_node 8 --nnodes $COUNT_NODE run_train.py \\\n"
		"  --config-file c.yaml\"\n";
	static const char script2[] =
		"N=$(scontrol show hostnames $SLURM_JOB_NODELIST | wc -l)\n"
		"torchrun --nproc_per_node 8 --nnodes $N pretrain_gpt.py --num-layers 2\n";
	static const char script3[] =
		"SLURM_JOB_NODELIST=a,b,c\n"
		"N=$(scontrol show hostnames $SLURM_JOB_NODELIST | wc -l)\n"
		"torchrun --nproc_per_node 8 --nnodes $N pretrain_gpt.py --num-layers 2\n";
	static const char script5[] =
		"N=$(scontrol show hostname ${SLURM_NODELIST}|wc -l)\n"
		"M=$(scontrol show hostnames | wc -l)\n"
		"torchrun --nproc_per_node 8 --nnodes $N pretrain_gpt.py --num-layers $M\n";
	static const char script4[] =
		"N=$(scontrol show hostnames $SLURM_JOB_NODELIST | wc -l -c)\n"
		"torchrun --nproc_per_node 8 --nnodes $N pretrain_gpt.py --num-layers 2\n";
	struct job j = { script, NULL, 4, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "nanotron");
	CHECK(&out, JR_NODES, 4, S, 3, "--nnodes");
	CHECK(&out, JR_WORLD, 32, S, -1, NULL);
	/* scontrol's other spelling, ${...}, no blanks around |, no list. */
	j = (struct job){ script5, NULL, 3, 8, 0, 0, NULL, 0 };
	read_job(st, &j, &out);
	CHECK(&out, JR_NODES, 3, S, 3, "--nnodes");
	CHECK(&out, JR_ARCH_LAYERS, 3, S, 3, "--num-layers");
	/* Resources without a node count: unknown, never a guess. */
	j = (struct job){ script2, NULL, 0, 8, 0, 0, NULL, 0 };
	read_job(st, &j, &out);
	UNKNOWN(&out, JR_NODES);
	/* The script's own node list, and another pipeline: unknown. */
	j = (struct job){ script3, NULL, 2, 8, 0, 0, NULL, 0 };
	read_job(st, &j, &out);
	UNKNOWN(&out, JR_NODES);
	j = (struct job){ script4, NULL, 2, 8, 0, 0, NULL, 0 };
	read_job(st, &j, &out);
	UNKNOWN(&out, JR_NODES);
}

/* Hostile values are refused or bounded, never overflow. */
static void test_hostile_values(void **st)
{
	static const char script[] =
		"srun -n 99999999999999999999 --ntasks-per-node=65536 python pretrain_gpt.py \\\n"
		"  --num-layers 99999999999 \\\n"
		"  --hidden-size 4096 --num-attention-heads 32 --tensor-model-parallel-size 8 \\\n"
		"  --num-layers-per-virtual-pipeline-stage 0 --global-batch-size -4 \\\n"
		"  --moe-shared-expert-intermediate-size 99999999999\n"
		"vllm serve x --max-model-len 99999999999999k --tensor-parallel-size 2147483647 \\\n"
		"  --data-parallel-size 2147483647\n";
	struct job j = { script, NULL, 65536, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "megatron");
	UNSET(&out, JR_ARCH_LAYERS);
	UNSET(&out, JR_VPP);
	UNSET(&out, JR_WORLD);
	CHECK(&out, JR_GBS, -4, S, 4, "--global-batch-size");   /* apply.c bounds it */
	assert_true(has_note(&out, "SCRIPT_UNKNOWN", "99999999999"));

	j.script = "vllm serve x --max-model-len 99999999999999k --tensor-parallel-size 2147483647 \\\n"
		   "  --data-parallel-size 2147483647 --enable-expert-parallel\n";
	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "vllm");
	UNSET(&out, JR_SEQ);
	UNSET(&out, JR_WORLD);
	UNSET(&out, JR_EP);
	CHECK(&out, JR_TP, 2147483647, S, 1, "--tensor-parallel-size");
}

/* A Python program of the job's, read and holding no LLM (issue 28: one
 * that cannot be read leaves the workload unknown, PROGRAM_NOT_READ). */
static const struct vfile analyse_py[] = {
	{ CWD "/analyse.py", "import numpy as np\nimport matplotlib.pyplot as plt\n"
			     "plt.plot(np.loadtxt('out.dat'))\nplt.savefig('out.png')\n" },
	{ NULL, NULL },
};

/* No LLM launcher or trainer: not an LLM job, nothing kept. */
static void test_not_llm(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"#SBATCH -N2 --gpus-per-node=8\n"
		"module load cuda\n"
		"srun -n 16 ./nbody --size 1000000\n"
		"mpirun -np 16 ./lammps -in in.lj\n"
		"python analyse.py --input out.dat\n";
	struct job j = { script, analyse_py, 2, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_false(out.is_llm);
	assert_string_equal(out.trainer, "");
	UNSET(&out, JR_WORLD);
	UNSET(&out, JR_TP);
}

/* Only a wrapper, or a program that is itself unknown: nothing to read;
 * but Megatron's pretrain_gpt.py behind a command substitution is a launch
 * the reader could not follow, and says so (SCRIPT_NOT_FOLLOWED, issue 18). */
static void test_nothing_to_run(void **st)
{
	static const char script[] =
		"srun --pty\n"
		"env FOO=1\n"
		"$(which python) pretrain_gpt.py --tensor-model-parallel-size 4 --micro-batch-size 1\n"
		"python -c 'import torch; print(torch.cuda.device_count())'\n";
	struct job j = { script, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_true(out.is_llm);
	assert_string_equal(out.trainer, "");
	assert_int_equal(out.n_notes, 1);
	assert_string_equal(out.notes[0].code, "SCRIPT_NOT_FOLLOWED");
	assert_non_null(strstr(out.notes[0].message, ":3 names pretrain_gpt"));
	assert_non_null(strstr(out.notes[0].message, "not known before it runs"));
	UNSET(&out, JR_TP);
}

/* ---- issue 18: Megatron-DeepSpeed MoE, legacy flags, vocabulary, memory flags ---------- */

/* Megatron-DeepSpeed: --num-experts as a list, experts every second layer
 * (--expert-interval's default), --topk, --moe-expert-parallel-size. */
static void test_megatron_ds_moe(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"                                                              /* 1 */
		"E=\"16 16 16 16\"\n"                                                          /* 2 */
		"deepspeed --num_nodes 1 --num_gpus 8 pretrain_gpt.py --deepspeed \\\n"        /* 3 */
		"  --num-layers 8 --hidden-size 1024 --num-attention-heads 16 \\\n"          /* 4 */
		"  --num-experts $E --topk 2 --moe-expert-parallel-size 4 \\\n"              /* 5 */
		"  --tensor-model-parallel-size 2 --tokenizer-type GPT2BPETokenizer\n";      /* 6 */
	struct job j = { script, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "megatron");
	CHECK(&out, JR_ARCH_EXPERTS, 16, S, 5, "--num-experts");
	CHECK(&out, JR_ARCH_TOPK, 2, S, 5, "--topk");
	CHECK(&out, JR_EP, 4, S, 5, "--moe-expert-parallel-size");
	/* Experts whole on each rank; 4 of the 8 layers dense. */
	CHECK(&out, JR_ETP, 1, S, 5, "");
	CHECK(&out, JR_ARCH_DENSE_LAYERS, 4, S, 5, "");
	/* 50257 padded to a multiple of 128 x TP 2. */
	CHECK(&out, JR_ARCH_VOCAB, 50432, S, 6, "--tokenizer-type");
	assert_int_equal(out.v[JR_ARCH_VOCAB].src.style, JR_STYLE_DERIVED);
	assert_false(has_note(&out, "SCRIPT_ASSUMED", "different expert counts"));
}

/* Different counts per MoE layer: the largest, said; --expert-interval 1. */
static void test_megatron_ds_moe_list(void **st)
{
	static const char script[] =
		"deepspeed pretrain_gpt.py --deepspeed --num-layers 4 --hidden-size 512 \\\n"
		"  --num-attention-heads 8 --num-experts 4 8 8 4 --expert-interval=1\n";
	struct job j = { script, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	CHECK(&out, JR_ARCH_EXPERTS, 8, S, 2, "--num-experts");
	CHECK(&out, JR_ARCH_TOPK, 1, S, 2, "");
	CHECK(&out, JR_ARCH_DENSE_LAYERS, 0, S, 2, "");
	assert_true(has_note(&out, "SCRIPT_ASSUMED", "different expert counts"));
}

/* Legacy Megatron-LM: --activations-checkpoint-method recomputes whole
 * layers; a gpt2 --vocab-file with --merge-file is GPT-2's BPE. */
static void test_megatron_legacy(void **st)
{
	static const char script[] =
		"python pretrain_gpt.py --tensor-model-parallel-size 4 --num-layers 24 \\\n"
		"  --hidden-size 2048 --num-attention-heads 16 --micro-batch-size 2 \\\n"
		"  --activations-checkpoint-method=block --vocab-file /d/gpt2-vocab.json \\\n"
		"  --merge-file /d/gpt2-merges.txt --make-vocab-size-divisible-by 64\n";
	struct job j = { script, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, S, 3, "--activations-checkpoint-method");
	/* 50257 to a multiple of 64 x 4. */
	CHECK(&out, JR_ARCH_VOCAB, 50432, S, 3, "--vocab-file");
}

/* Issue 28: a published vocabulary file by its name (vocabfile.c): BERT's
 * WordPiece files with the tokenizer type that reads them; another type
 * reading the file says nothing; the padding as Megatron pads. */
static void test_megatron_vocab_file(void **st)
{
	static const char bert[] =
		"python pretrain_bert.py --tensor-model-parallel-size 2 --num-layers 24 \\\n"
		"  --hidden-size 1024 --num-attention-heads 16 --micro-batch-size 4 \\\n"
		"  --tokenizer-type BertWordPieceLowerCase \\\n"
		"  --vocab-file /data/bert-large-uncased-vocab.txt\n";
	static const char wrong_type[] =
		"python pretrain_bert.py --tensor-model-parallel-size 2 --num-layers 24 \\\n"
		"  --hidden-size 1024 --num-attention-heads 16 --micro-batch-size 4 \\\n"
		"  --tokenizer-type BertWordPieceCase \\\n"
		"  --vocab-file /data/bert-large-uncased-vocab.txt\n";
	struct job j = { bert, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	/* 30522 to a multiple of 128 x 2. */
	CHECK(&out, JR_ARCH_VOCAB, 30720, S, 4, "--vocab-file");
	assert_int_equal(out.v[JR_ARCH_VOCAB].src.style, JR_STYLE_DERIVED);
	j.script = wrong_type;
	read_job(st, &j, &out);
	UNSET(&out, JR_ARCH_VOCAB);

	assert_int_equal(jr_vocab_file("/x/gpt2-vocab.json")->tokens, 50257);
	assert_string_equal(jr_vocab_file("GPT2-MERGES.TXT")->tokenizer, "GPT2BPETokenizer");
	assert_int_equal(jr_vocab_file("bert-base-cased-vocab.txt")->tokens, 28996);
	assert_null(jr_vocab_file("/x/vocab.json"));
	assert_null(jr_vocab_file("/x/gpt2-vocab.json/"));
	assert_null(jr_vocab_file(""));
	assert_null(jr_vocab_file(NULL));
	assert_int_equal(jr_vocab_padded(50257, 128, 1), 50304);
	assert_int_equal(jr_vocab_padded(50257, 128, 8), 51200);
	assert_int_equal(jr_vocab_padded(0, 128, 1), 0);
	assert_int_equal(jr_vocab_padded(50257, 0, 1), 0);
	assert_int_equal(jr_vocab_padded(50257, 1LL << 20, 1LL << 20), 0);
}

/* A Hugging Face tokenizer id names a catalog model's vocabulary;
 * --pad-vocab-size-to states the padded size; the memory flags are read. */
static void test_megatron_vocab_memory(void **st)
{
	static const char hf[] =
		"torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 \\\n"
		"  --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --bf16 \\\n"
		"  --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-8B \\\n"
		"  --grad-reduce-in-bf16 --use-precision-aware-optimizer --main-grads-dtype fp32 \\\n"
		"  --exp-avg-dtype fp16\n";
	static const char pad[] =
		"python pretrain_gpt.py --tensor-model-parallel-size 4 --num-layers 24 \\\n"
		"  --hidden-size 2048 --num-attention-heads 16 --pad-vocab-size-to 250880 \\\n"
		"  --tokenizer-type PretrainedFromHF --tokenizer-name-or-path bigscience/tokenizer\n";
	struct job j = { hf, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	/* Llama 3's 128256 to a multiple of 128 x 8 = 1024. */
	CHECK(&out, JR_ARCH_VOCAB, 129024, S, 3, "--tokenizer-model");
	/* Issue 19: modelled, not said.  --grad-reduce-in-bf16 wins over
	 * --main-grads-dtype fp32 (arguments.py); the precision-aware
	 * optimizer keeps fp32 master weights 4 + exp_avg fp16 2 +
	 * exp_avg_sq fp32 4. */
	CHECK(&out, JR_GRAD_DTYPE, ADV_PREC_BF16, S, 4, "--grad-reduce-in-bf16");
	CHECK(&out, JR_OPTIM_BYTES, 10, S, 4, "--use-precision-aware-optimizer");
	assert_false(has_note(&out, "SCRIPT_ASSUMED", "memory figure"));
	j.script = pad;
	read_job(st, &j, &out);
	CHECK(&out, JR_ARCH_VOCAB, 250880, S, 2, "--pad-vocab-size-to");
	assert_false(has_note(&out, "SCRIPT_ASSUMED", "memory figure"));
}

/* llama-cookbook finetuning.py: python-fire flags and the dataclasses'
 * defaults; without --enable_fsdp each rank holds the whole model. */
static void test_llama_cookbook(void **st)
{
	static const char fsdp[] =
		"torchrun --nnodes 1 --nproc_per_node 8 finetuning.py --enable_fsdp \\\n"
		"  --model_name meta-llama/Meta-Llama-3-8B --batch_size_training=2 \\\n"
		"  --fsdp_config.sharding_strategy SHARD_GRAD_OP --quantization 4bit\n";
	static const char plain[] =
		"python -m llama_recipes.finetuning --use_peft --peft_method lora \\\n"
		"  --model_name meta-llama/Meta-Llama-3-8B --context_length 1024 --save_model False\n";
	struct job j = { fsdp, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "llama-cookbook");
	CHECK(&out, JR_ZERO, 2, S, 3, "--fsdp_config.sharding_strategy");
	CHECK(&out, JR_MBS, 2, S, 2, "--batch_size_training");
	CHECK(&out, JR_TASK, ADV_TASK_FINETUNE, "train_config", 0, "use_peft");
	CHECK(&out, JR_SEQ, 4096, "train_config", 0, "context_length");
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, "train_config", 0,
	      "fsdp_activation_checkpointing");
	/* Quantized weights: no pure bf16, and said. */
	CHECK(&out, JR_PRECISION, ADV_PREC_BF16, "train_config", 0, "mixed_precision");
	assert_true(has_note(&out, "SCRIPT_ASSUMED", "--quantization 4bit"));
	j.script = plain;
	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "llama-cookbook");
	CHECK(&out, JR_TASK, ADV_TASK_LORA, S, 1, "--use_peft");
	CHECK(&out, JR_ZERO, 0, "train_config", 0, "enable_fsdp");
	CHECK(&out, JR_SEQ, 1024, S, 2, "--context_length");
	CHECK(&out, JR_CKPT_OFF, 1, S, 2, "--save_model");
	UNSET(&out, JR_PRECISION);
}

/* llm.c train_gpt2cu: "-x VALUE" pairs, the descriptor's GPT-2 shape,
 * -d tokens as sequences, -z 2 run as 0, the build's precision assumed. */
static void test_llmc(void **st)
{
	static const char d24[] =
		"mpirun -np 8 ./train_gpt2cu -i 'train_*.bin' -e gpt2:d24 -b 16 -t 1024 \\\n"
		"  -d 262144 -z 2 -r 0 -n 500\n";
	static const char dflt[] =
		"srun ./train_gpt2cu -e gpt2_350M.bin -t 2048 -d 1000\n";
	struct job j = { d24, NULL, 1, 8, 0, 8, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "llm.c");
	CHECK(&out, JR_ARCH_LAYERS, 24, S, 1, "-e");
	CHECK(&out, JR_ARCH_HIDDEN, 1024, S, 1, "-e");
	CHECK(&out, JR_ARCH_HEADS, 16, S, 1, "-e");
	CHECK(&out, JR_ARCH_FFN, 4096, S, 1, "-e");
	CHECK(&out, JR_ARCH_VOCAB, 50304, S, 1, "-e");
	CHECK(&out, JR_ARCH_MAX_SEQ, 1024, S, 1, "-e");
	CHECK(&out, JR_MBS, 16, S, 1, "-b");
	CHECK(&out, JR_SEQ, 1024, S, 1, "-t");
	CHECK(&out, JR_GBS, 256, S, 2, "-d");
	CHECK(&out, JR_ZERO, 0, S, 2, "-z");
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_NONE, S, 2, "-r");
	/* -n without -o writes nothing */
	CHECK(&out, JR_CKPT_OFF, 1, S, 2, "-n");
	CHECK(&out, JR_PRECISION, ADV_PREC_BF16, "", 0, "llm.c default (built with PRECISION=BF16)");
	assert_true(has_note(&out, "SCRIPT_ASSUMED", "PRECISION=BF16"));
	j.script = dflt;
	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "llm.c");
	/* a checkpoint file: its shape is in its header, not read */
	UNKNOWN(&out, JR_MODEL);
	UNSET(&out, JR_ARCH_LAYERS);
	CHECK(&out, JR_MBS, 4, "", 0, "llm.c default (-b 4)");
	UNKNOWN(&out, JR_GBS);
	CHECK(&out, JR_RECOMPUTE, ADV_RECOMPUTE_SELECTIVE, "", 0,
	      "llm.c default (-r 1: GELU recomputed)");
}

/* axolotl --launcher torchrun -- ARGS: torchrun's arguments are the world;
 * options after "--" are not axolotl's. */
static void test_axolotl_launcher(void **st)
{
	static const char script[] =
		"srun axolotl train cfg.yml --launcher torchrun --micro_batch_size 3 -- \\\n"
		"  --nnodes 2 --nproc_per_node 4 --sequence_len 9\n";
	static const struct vfile files[] = {
		{ CWD "/cfg.yml", "base_model: meta-llama/Meta-Llama-3-8B\nsequence_len: 2048\n" },
		{ NULL, NULL },
	};
	struct job j = { script, files, 2, 4, 0, 1, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "axolotl");
	assert_string_equal(out.launcher, "torchrun");
	CHECK(&out, JR_WORLD, 8, S, 1, "torchrun");   /* where "--" is */
	CHECK(&out, JR_NODES, 2, S, 2, "--nnodes");
	CHECK(&out, JR_NPROC_PER_NODE, 4, S, 2, "--nproc_per_node");
	CHECK(&out, JR_MBS, 3, S, 1, "--micro_batch_size");
	CHECK(&out, JR_SEQ, 2048, "cfg.yml", 2, "sequence_len");
}

/* Issue 28, Slurm semantics: the batch shell's rank expanded once
 * (RANK_EXPANDED_ONCE: reject under torchrun's static rendezvous, nothing
 * under c10d or inside bash -c '...', a warning with a backend named at
 * run time), a heterogeneous job's step against its component, and a
 * Ray driver in a one-node step against the cluster its steps made. */
static void test_slurm_topology(void **st)
{
	static const char rank_static[] =
		"srun torchrun --nnodes 2 --nproc_per_node 8 --node_rank $SLURM_NODEID "
		"--master_addr h0 train.py\n";
	static const char rank_c10d[] =
		"srun torchrun --nnodes 2 --nproc_per_node 8 --node_rank=$SLURM_NODEID "
		"--rdzv_backend=c10d --rdzv_endpoint h0:1 train.py\n";
	static const char rank_var[] =
		"srun torchrun --nnodes 2 --nproc_per_node 8 --node-rank $SLURM_PROCID "
		"--rdzv-backend $B train.py\n";
	static const char rank_inner[] =
		"srun bash -c 'torchrun --nnodes 2 --nproc_per_node 8 --node_rank $SLURM_NODEID "
		"--master_addr h0 train.py'\n";
	static const char het[] =
		"#!/bin/bash\n#SBATCH -N 2 --gpus-per-node=8\n#SBATCH hetjob\n"
		"#SBATCH -N 1 --gpus-per-node=4\n"
		"srun --het-group=1 torchrun --nnodes 1 --nproc_per_node 4 train.py\n";
	static const char ray[] =
		"srun -N1 -n1 -w h0 ray start --head --block &\n"
		"srun -N3 -n3 -x h0 ray start --address h0:6379 --block &\n"
		"srun -N1 -n1 -w h0 vllm serve meta-llama/Llama-3.1-70B --tensor-parallel-size 8 "
		"--pipeline-parallel-size 4\n";
	struct job j = { rank_static, NULL, 2, 8, 0, 1, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	assert_string_equal(out.rank_once.code, "RANK_EXPANDED_ONCE");
	assert_int_equal(out.rank_sev, ADV_SEV_REJECT);
	assert_non_null(strstr(out.rank_once.message, "its 2 tasks"));
	j.script = rank_c10d;
	read_job(st, &j, &out);
	assert_string_equal(out.rank_once.message, "");
	j.script = rank_var;
	read_job(st, &j, &out);
	assert_int_equal(out.rank_sev, ADV_SEV_WARN);
	assert_non_null(strstr(out.rank_once.message, "named at run time"));
	j.script = rank_inner;
	read_job(st, &j, &out);
	assert_string_equal(out.rank_once.message, "");
	/* The plugin gives one component's resources: the union is the job's. */
	j.script = het;
	read_job(st, &j, &out);
	assert_int_equal(out.het_nodes, 3);
	assert_int_equal(out.het_gpus, 20);
	assert_int_equal(out.het_gpn, 0);
	assert_int_equal(out.step_nodes, 1);
	assert_int_equal(out.step_gpus, 4);
	assert_int_equal(out.het_group, 2);
	/* The component's variables in the batch shell, component 0's plain. */
	j.script = "#!/bin/bash\n#SBATCH -N 2 --gpus-per-node=8\n#SBATCH hetjob\n"
		   "#SBATCH -N 1 --gpus-per-node=4\n"
		   "srun --het-group=1 torchrun --nnodes $SLURM_JOB_NUM_NODES_HET_GROUP_1 "
		   "--nproc_per_node $SLURM_GPUS_PER_NODE_HET_GROUP_1 --max-restarts $SLURM_NNODES "
		   "train.py\n";
	read_job(st, &j, &out);
	CHECK(&out, JR_NODES, 1, S, 5, "--nnodes");
	CHECK(&out, JR_NPROC_PER_NODE, 4, S, 5, "--nproc_per_node");
	/* deepspeed takes --node_rank only with --no_ssh. */
	j.script = "srun deepspeed --no_ssh --node_rank $SLURM_NODEID --num_nodes 2 t.py\n";
	read_job(st, &j, &out);
	assert_int_equal(out.rank_sev, ADV_SEV_REJECT);
	j.script = "srun deepspeed --node_rank $SLURM_NODEID --num_nodes 2 t.py\n";
	read_job(st, &j, &out);
	assert_string_equal(out.rank_once.message, "");
	/* A step's own GPUs per node: --gres=gpu:N, --gpus-per-node; not --gpus. */
	j.script = "srun --gres=gpu:4 torchrun --nproc_per_node 8 t.py\n";
	j.nodes = 1;
	read_job(st, &j, &out);
	assert_int_equal(out.step_gpus, 4);
	j.script = "srun --gpus=4 torchrun --nproc_per_node 8 t.py\n";
	read_job(st, &j, &out);
	assert_int_equal(out.step_gpus, 0);
	j.nodes = 2;
	/* A host list split into srun's arguments (NODELIST_SPLIT). */
	j.script = "H=$(scontrol show hostnames)\nsrun -w $H torchrun --nnodes 3 train.py\n";
	j.nodes = 3;
	read_job(st, &j, &out);
	assert_string_equal(out.split_list.code, "NODELIST_SPLIT");
	assert_false(out.split_lines);
	assert_non_null(strstr(out.split_list.message, "splits into 3 words"));
	j.script = "H=$(scontrol show hostnames)\nsrun -w \"$H\" torchrun --nnodes 3 train.py\n";
	read_job(st, &j, &out);
	assert_true(out.split_lines);
	j.script = "H=$(scontrol show hostnames | paste -sd,)\nsrun -w $H torchrun train.py\n";
	read_job(st, &j, &out);
	assert_string_equal(out.split_list.message, "");
	j.script = ray;
	j.nodes = 4;
	read_job(st, &j, &out);
	assert_string_equal(out.trainer, "vllm");
	assert_int_equal(out.step_nodes, 0);
	assert_false(out.v[JR_NODES].set);
	CHECK(&out, JR_WORLD, 32, S, 3, NULL);
}

/* A launch the reader did not reach or follow is said with its line and
 * the reason (follow.c, SCRIPT_NOT_FOLLOWED, issue 18); without a launch
 * word the job stays not an LLM job. */
static void not_followed(void **st, const char *script, const char *word, int line,
			 const char *why)
{
	struct job j = { script, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;
	char at[64];
	int k, found = -1;

	read_job(st, &j, &out);
	for (k = 0; k < out.n_notes; k++)
		if (!strcmp(out.notes[k].code, "SCRIPT_NOT_FOLLOWED"))
			found = k;
	if (found < 0)
		fail_msg("no SCRIPT_NOT_FOLLOWED for %s", word);
	print_message("%s\n", out.notes[found].message);
	assert_true(out.is_llm);
	snprintf(at, sizeof(at), "train.sbatch:%d names %s", line, word);
	assert_non_null(strstr(out.notes[found].message, at));
	assert_non_null(strstr(out.notes[found].message, why));
}

static void test_not_followed(void **st)
{
	struct job j = { "#!/bin/bash\nmodule load python\npython analyse.py --in x\n"
			 "echo torchrunner deepspeedy\n# torchrun in a comment\n",
			 analyse_py, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	/* torchrun and deepspeed start any program: an LLM job's only with
	 * evidence in the job (issue 28), here a model family's name. */
	not_followed(st, "#!/bin/bash\necho dry\nexit 0\ntorchrun --nproc_per_node 8 train.py\n"
		     "# pretrains a llama model\n", "torchrun", 4, "after the exit on line 3");
	not_followed(st, "#!/bin/bash\nfunction go {\n  deepspeed train.py \\\n"
		     "    --deepspeed ds.json --model_name Qwen/Qwen2.5-7B\n}\n", "deepspeed", 3,
		     "in the function go (line 2)");
	not_followed(st, "#!/bin/bash\nif [ -n \"$RUN\" ]; then\n  vllm serve m --port 1\nfi\n",
		     "vllm serve", 3, "did not reach it");
	/* A continued line is reported where its command starts. */
	not_followed(st, "#!/bin/bash\necho start\nsrun -n 8 \\\n  $(which torchrun) train.py\n"
		     "# tokenizer: gpt2\n", "torchrun", 3, "not known before it runs");
	not_followed(st, "#!/bin/bash\nf() { f; }\nf\npython -m sglang.launch_server --tp 8\n",
		     "sglang.launch_server", 4, "the reader stopped before it (nested too deeply");
	/* Launch words in comments, or as part of other words: nothing. */
	read_job(st, &j, &out);
	assert_false(out.is_llm);
	assert_int_equal(out.n_notes, 0);
	/* A generic launcher not followed, and nothing that names an LLM: not
	 * an LLM job, and the reason says which line and what is missing. */
	j.script = "#!/bin/bash\necho dry\nexit 0\ntorchrun --nproc_per_node 8 train_unet.py\n";
	read_job(st, &j, &out);
	assert_false(out.is_llm);
	assert_int_equal(out.n_notes, 0);
	assert_non_null(strstr(out.not_llm_why, "line 4 starts torchrun"));
	assert_non_null(strstr(out.not_llm_why, "nothing in the job names an LLM"));
}

/* Megatron-DeepSpeed in bf16 with --zero-stage 0 runs DeepSpeed's
 * BF16_Optimizer, which shards the fp32 master weights and Adam states as
 * ZeRO-1 does (BLOOM-176B's setting); fp16 with stage 0 does not. */
static void test_megatron_ds_bf16_zero0(void **st)
{
	static const char bf16[] =
		"deepspeed pretrain_gpt.py --deepspeed --zero-stage 0 --bf16 \\\n"
		"  --num-layers 8 --hidden-size 1024 --num-attention-heads 16\n";
	static const char fp16[] =
		"deepspeed pretrain_gpt.py --deepspeed --zero-stage 0 --fp16 \\\n"
		"  --num-layers 8 --hidden-size 1024 --num-attention-heads 16\n";
	struct job j = { bf16, NULL, 1, 8, 0, 0, NULL, 0 };
	struct jobread_out out;

	read_job(st, &j, &out);
	CHECK(&out, JR_ZERO, 1, S, 1, "--bf16 (DeepSpeed BF16_Optimizer: ZeRO-1)");
	j.script = fp16;
	read_job(st, &j, &out);
	CHECK(&out, JR_ZERO, 0, S, 1, "--zero-stage");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_megatron_gpt_torchrun),
		cmocka_unit_test(test_megatron_llama_srun),
		cmocka_unit_test(test_megatron_issue_tp3),
		cmocka_unit_test(test_megatron_moe),
		cmocka_unit_test(test_megatron_defaults),
		cmocka_unit_test(test_megatron_no_flags),
		cmocka_unit_test(test_megatron_deepspeed),
		cmocka_unit_test(test_hf_run_clm_deepspeed),
		cmocka_unit_test(test_trl_accelerate),
		cmocka_unit_test(test_hf_recipe_fsdp),
		cmocka_unit_test(test_hf_fsdp_flag),
		cmocka_unit_test(test_vllm_serve),
		cmocka_unit_test(test_vllm_config),
		cmocka_unit_test(test_torch_dtype),
		cmocka_unit_test(test_serve_empty_model),
		cmocka_unit_test(test_tgi_env),
		cmocka_unit_test(test_trtllm_serve),
		cmocka_unit_test(test_llama_server),
		cmocka_unit_test(test_lm_eval_hf),
		cmocka_unit_test(test_vllm_api_server_srun),
		cmocka_unit_test(test_sglang),
		cmocka_unit_test(test_trl_vllm_serve),
		cmocka_unit_test(test_srun_nodelist_unknown),
		cmocka_unit_test(test_serve_local_model_path),
		cmocka_unit_test(test_wrappers_srun),
		cmocka_unit_test(test_wrappers_module),
		cmocka_unit_test(test_conda_trl_module),
		cmocka_unit_test(test_srun_ntasks),
		cmocka_unit_test(test_srun_torchrun),
		cmocka_unit_test(test_torchrun_elastic),
		cmocka_unit_test(test_mpirun),
		cmocka_unit_test(test_mpirun_hosts),
		cmocka_unit_test(test_deepspeed_hostfile),
		cmocka_unit_test(test_accelerate_default),
		cmocka_unit_test(test_unknowns),
		cmocka_unit_test(test_hostname_count),
		cmocka_unit_test(test_hostile_values),
		cmocka_unit_test(test_not_llm),
		cmocka_unit_test(test_nothing_to_run),
		cmocka_unit_test(test_megatron_ds_moe),
		cmocka_unit_test(test_megatron_ds_moe_list),
		cmocka_unit_test(test_megatron_legacy),
		cmocka_unit_test(test_megatron_vocab_file),
		cmocka_unit_test(test_megatron_vocab_memory),
		cmocka_unit_test(test_llama_cookbook),
		cmocka_unit_test(test_llmc),
		cmocka_unit_test(test_axolotl_launcher),
		cmocka_unit_test(test_not_followed),
		cmocka_unit_test(test_slurm_topology),
		cmocka_unit_test(test_megatron_ds_bf16_zero0),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
