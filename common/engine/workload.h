/*
 * workload.h - the request side of the engine, types only: the resources a
 * job asked Slurm for and the workload it runs (the --llm-* options, or
 * what the job reader found in the job's own text).
 *
 * Every module of the engine, the wire conversion, the job reader and the
 * daemon depend on these types, never on each other's functions; result.h
 * holds the answer side.
 */
#ifndef ADVISOR_ENGINE_WORKLOAD_H
#define ADVISOR_ENGINE_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "config/catalog.h"

#define ADV_UNSET (-1)

/*
 * Each enum of values that name tables index (names.c, options.c) ends in
 * a _COUNT that sizes them and bounds every index (issue 27); it is no
 * value of its own, and the wire carries the values before it unchanged.
 */
enum adv_precision {
	ADV_PREC_BF16 = 0, ADV_PREC_FP16, ADV_PREC_FP8, ADV_PREC_FP32, ADV_PREC_COUNT
};
/* How a server stores its linear weights (issue 19; memory.c): 16-bit, or
 * a quantized checkpoint format (--llm-weights). */
enum adv_weights {
	ADV_WEIGHTS_16BIT = 0, ADV_WEIGHTS_FP8, ADV_WEIGHTS_INT8, ADV_WEIGHTS_INT4, ADV_WEIGHTS_MXFP4,
	ADV_WEIGHTS_COUNT
};
enum adv_recompute {
	ADV_RECOMPUTE_NONE = 0, ADV_RECOMPUTE_SELECTIVE, ADV_RECOMPUTE_FULL, ADV_RECOMPUTE_COUNT
};
enum adv_task {
	ADV_TASK_TRAIN = 0, ADV_TASK_FINETUNE, ADV_TASK_LORA, ADV_TASK_INFER, ADV_TASK_COUNT
};
enum adv_framework {
	ADV_FW_GENERIC = 0, ADV_FW_MEGATRON, ADV_FW_DEEPSPEED, ADV_FW_FSDP, ADV_FW_COUNT
};
/* --llm-attention: fused/flash kernels never store the s x s scores; unfused
 * ("eager") attention does (Korthikanti et al. 2022, the 5as/h term). */
enum adv_attention { ADV_ATTN_FLASH = 0, ADV_ATTN_EAGER, ADV_ATTN_COUNT };
/* Where a request came from (decision log, plugin). */
enum adv_context {
	ADV_CTX_ADVISORCTL = 0, ADV_CTX_SBATCH, ADV_CTX_SALLOC, ADV_CTX_SRUN, ADV_CTX_STEP,
	ADV_CTX_SUBMIT,            /* slurmctld's job_submit/lua (issue 31) */
	ADV_CTX_COUNT
};

/*
 * Where a workload value came from (issue 18: never reject on a guess).
 * The engine resolves every value the checks use (evaluate.c) and keeps its
 * origin in the result; a finding that would reject but rests on a value
 * only ADV_FROM_ASSUMED becomes a warning naming it (provenance.c).
 * ADV_FROM_UNSET in a request means "not said": a value that is set is then
 * an --llm-* option's (the only other writer of a request is the job
 * reader, jobread_apply, which marks what it fills).
 */
enum adv_origin {
	ADV_FROM_UNSET = 0,
	ADV_FROM_JOB,        /* the job states it: file:line, flag or key (result sources) */
	ADV_FROM_OPTION,     /* an --llm-* option */
	ADV_FROM_FRAMEWORK,  /* the framework's documented default */
	ADV_FROM_POLICY,     /* the site policy's default */
	ADV_FROM_DEFAULT,    /* advisor's documented default that describes the job as asked
				(TP/PP/CP/EP 1: no such parallelism; a derived DP) */
	ADV_FROM_ASSUMED,    /* the engine's guess (seq, mbs, recompute, ...) or a value the
				job states but the reader cannot know before it runs */
	ADV_FROM_COUNT
};

/* The values a finding may rest on, in report order; names as the job
 * reader's fields (jobread_field_name) so that JSON joins them with the
 * sources.  A finding's "uses" is a mask of 1u << field. */
enum adv_field {
	ADV_F_MODEL = 0, ADV_F_TP, ADV_F_PP, ADV_F_CP, ADV_F_EP, ADV_F_ETP, ADV_F_VPP, ADV_F_DP,
	ADV_F_SP, ADV_F_ZERO, ADV_F_PRECISION, ADV_F_SEQ, ADV_F_MBS, ADV_F_GBS, ADV_F_RECOMPUTE,
	ADV_F_TASK, ADV_F_FRAMEWORK, ADV_F_ATTENTION, ADV_F_CKPT, ADV_F_WORLD,
	ADV_F_GRAD_DTYPE,
	ADV_F_COUNT
};
#define ADV_USES(f) (1u << (f))

/* What the job asked Slurm for.  0 / "" = not given. */
struct adv_resources {
	char gpu[ADV_NAME_MAX];        /* catalog name or alias */
	int gpus;                      /* total GPUs */
	int nodes;
	int gpus_per_node;
	char partition[ADV_NAME_MAX];
	/* sbatch -C/--constraint as given (node features): a feature that is a
	 * catalog GPU's name names the GPU type where nothing else does. */
	char constraint[ADV_NAME_MAX * 2];
	/* Why the GPU type is not known where the cluster was asked for it
	 * (daemon/service/slurmgres.c), for GPU_TYPE_UNKNOWN; "" otherwise.
	 * Filled after decoding, never on the wire. */
	char gpu_why[160];
	/* A -p list whose partitions have different GPU types and a job
	 * that names none (daemon/service/service.c): the message of
	 * PARTITION_GPUS_DIFFER; "" otherwise.  Never on the wire. */
	char gpus_differ[160];
};

/* Parallel sizes; ADV_UNSET = not given (1 for tp..vpp, derived for dp). */
struct adv_layout {
	int tp, pp, cp, ep, etp, vpp, dp;
	int sp;                        /* ADV_UNSET, 0 off, 1 on */
};

struct adv_ckpt_req {
	bool given;                    /* --llm-ckpt was passed, or the job states an interval */
	bool off;                      /* --llm-ckpt=off */
	double interval_s;
	bool async;
	long steps;                    /* > 0: the interval is in optimizer steps (the job's
					  --save-interval ...); the engine turns it into time
					  with its step-time estimate */
};

/* The --llm-* options.  ADV_UNSET / "" = not given (engine defaults). */
struct adv_workload {
	char model[ADV_NAME_MAX * 2];
	struct adv_layout layout;
	int zero;                      /* 0..3 or ADV_UNSET */
	int precision;                 /* enum adv_precision or ADV_UNSET */
	int seq, mbs, gbs;
	int recompute;                 /* enum adv_recompute or ADV_UNSET */
	int task;                      /* enum adv_task or ADV_UNSET (train) */
	int framework;                 /* enum adv_framework or ADV_UNSET (generic) */
	struct adv_ckpt_req ckpt;
	double tokens;                 /* for time/cost estimates; 0 = none */
	int mode;                      /* --llm-advisor: enum adv_mode or ADV_UNSET */
	/* From the job reader (common/jobread): what the launch starts. */
	int world;                     /* processes the launch starts; ADV_UNSET = unknown */
	int world_nodes;               /* nodes the launcher assumes; ADV_UNSET = unknown */
	/* Nodes of the Slurm step the launch runs in when it names its own
	 * part of the allocation (srun -N 8 in a 9-node job): the launch is
	 * judged against those.  0: the whole job; -1: a part whose size is
	 * not known before the job runs (srun -w "$HOSTS"). */
	int step_nodes;
	/* GPUs of the launch's step when the reader knows them apart from the
	 * job's GPUs per node (a component of a heterogeneous job, or srun's
	 * own --gpus/--gres=gpu:N asking fewer than the job holds); 0 =
	 * step_nodes x the job's GPUs per node. */
	int step_gpus;
	bool layout_exact;             /* the framework asserts tp*pp*cp*dp == world */
	bool model_read;               /* model came from the job's own text, not --llm-model */
	/* An inline architecture (Megatron/NeMo/NeoX/nanotron keys, HF
	 * config.json) when the model is not named: used when model is "". */
	bool has_arch;
	struct adv_model arch;
	int attention;                 /* enum adv_attention or ADV_UNSET (flash) */
	/* Serving: tokens one prefill chunk processes (vLLM
	 * --max-num-batched-tokens, SGLang --chunked-prefill-size); ADV_UNSET =
	 * the engines' default (serving.c). */
	int prefill_chunk;
	/* Training memory (issue 19): the dtype of the gradients the job keeps
	 * (enum adv_precision: Megatron's grad buffer, DeepSpeed's
	 * grad_accum_dtype, --llm-grad-dtype; ADV_UNSET = the framework's
	 * documented default, else policy grad_bytes), the optimizer state in
	 * bytes per parameter (Megatron's precision-aware optimizer:
	 * main params + exp_avg + exp_avg_sq; ADV_UNSET = 12, fp32 Adam) and
	 * whether the weights are kept in fp8 (Megatron --fp8-param-gather;
	 * job reader only, never on the wire: the daemon reads the job). */
	int grad_dtype;
	int optim_bytes;
	bool fp8_params;
	/* Serving: the KV cache is stored in fp8 (vLLM/SGLang --kv-cache-dtype
	 * fp8*).  Else it is kept in the activations' dtype, as the engines'
	 * "auto" does, also when the weights are fp8 (a quantized checkpoint or
	 * --quantization fp8).  Read from the job only. */
	bool kv_fp8;
	/* Serving memory (issue 19, memory.c): the share of GPU memory the
	 * engine takes as its pool, per mille (vLLM --gpu-memory-utilization,
	 * SGLang --mem-fraction-static, --llm-mem-share; ADV_UNSET = vLLM's
	 * default 0.9); whether that share is static (SGLang: weights and KV
	 * cache only, the activations and CUDA graphs live outside it; job
	 * reader only); the KV cache dtype (enum adv_precision, --llm-kv-dtype;
	 * ADV_UNSET = kv_fp8, else the activations' dtype) and the weights'
	 * storage (enum adv_weights, --llm-weights, vLLM/SGLang --quantization,
	 * a checkpoint's quantization_config; ADV_UNSET = 16-bit, or fp8 when
	 * a serving job's precision is fp8). */
	int mem_share;
	bool share_static;
	int kv_dtype;
	int weights;
	/* What the job's framework cannot change (issue 26): ADV_USES bits of
	 * the settings it has no flag or key for (the HF Trainer has no tensor
	 * or pipeline parallelism, DeepSpeed no virtual stages).  A fix and a
	 * plan never offer them.  0: every setting (an --llm-* job).  Set by
	 * the job reader from its trainer table (apply.c); never on the wire. */
	unsigned fixed;
	/* The framework's activation memory is not modelled (JAX
	 * rematerialisation, Levanter): the least memory, the proof of a
	 * reject, counts none.  Job reader only. */
	bool act_unmodeled;
	/* Where each value came from (enum adv_origin by enum adv_field);
	 * ADV_FROM_UNSET where the writer did not say (see above). */
	unsigned char from[ADV_F_COUNT];
};

/* Findings of the job reader come with the request (result.h). */
struct adv_finding;

struct adv_request {
	struct adv_resources res;
	struct adv_workload wl;
	char user[ADV_NAME_MAX];
	char account[ADV_NAME_MAX];
	/* The node check: the job's owner, sent with a parent decision and the
	 * job's text so that advisord confirms the parent is this job's
	 * (CheckRequest.job_uid); has_job_uid false elsewhere. */
	bool has_job_uid;
	uint32_t job_uid;
	/* Findings the engine reports first (the job reader's: SCRIPT_CONFLICT,
	 * SCRIPT_UNKNOWN, ...); they count toward the verdict and the mode. */
	const struct adv_finding *pre;
	int n_pre;
};

#endif
