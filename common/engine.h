/*
 * engine.h - the advisor engine: resources + workload -> verdict and findings.
 *
 * Pure computation, no I/O and no allocation on the check path: the daemon,
 * advisorctl --local, the plugin's tests and the benchmarks all call
 * engine_check() with the same inputs and get the same answer.
 * The arithmetic follows shared/notes/model-math.md; each module says which
 * paper each formula comes from (layout.c, memory.c, checkpoint.c, estimate.c).
 */
#ifndef ADVISOR_ENGINE_H
#define ADVISOR_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"
#include "policy.h"

#define ADV_UNSET (-1)
#define ADV_MAX_FINDINGS 32
#define ADV_CODE_MAX 40
#define ADV_MSG_MAX 320

enum adv_precision { ADV_PREC_BF16 = 0, ADV_PREC_FP16, ADV_PREC_FP8, ADV_PREC_FP32 };
enum adv_recompute { ADV_RECOMPUTE_NONE = 0, ADV_RECOMPUTE_SELECTIVE, ADV_RECOMPUTE_FULL };
enum adv_task { ADV_TASK_TRAIN = 0, ADV_TASK_FINETUNE, ADV_TASK_LORA, ADV_TASK_INFER };
enum adv_framework { ADV_FW_GENERIC = 0, ADV_FW_MEGATRON, ADV_FW_DEEPSPEED, ADV_FW_FSDP };
/* --llm-attention: fused/flash kernels never store the s x s scores; unfused
 * ("eager") attention does (Korthikanti et al. 2022, the 5as/h term). */
enum adv_attention { ADV_ATTN_FLASH = 0, ADV_ATTN_EAGER };
enum adv_verdict { ADV_ACCEPT = 0, ADV_WARN = 1, ADV_REJECT = 2 };
enum adv_severity { ADV_SEV_INFO = 0, ADV_SEV_WARN = 1, ADV_SEV_REJECT = 2 };
/* Where a request came from (decision log, plugin). */
enum adv_context { ADV_CTX_ADVISORCTL = 0, ADV_CTX_SBATCH, ADV_CTX_SALLOC, ADV_CTX_SRUN, ADV_CTX_STEP };

/* What the job asked Slurm for.  0 / "" = not given. */
struct adv_resources {
	char gpu[ADV_NAME_MAX];        /* catalog name or alias */
	int gpus;                      /* total GPUs */
	int nodes;
	int gpus_per_node;
	char partition[ADV_NAME_MAX];
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
};

struct adv_request {
	struct adv_resources res;
	struct adv_workload wl;
	char user[ADV_NAME_MAX];
	char account[ADV_NAME_MAX];
	/* Findings the engine reports first (the job reader's: SCRIPT_CONFLICT,
	 * SCRIPT_UNKNOWN, ...); they count toward the verdict and the mode. */
	const struct adv_finding *pre;
	int n_pre;
};

struct adv_finding {
	char code[ADV_CODE_MAX];
	enum adv_severity severity;
	char message[ADV_MSG_MAX];
	char fix[ADV_MSG_MAX];         /* "" when there is no fix */
	char fix_job[ADV_MSG_MAX];     /* the same fix in the job's own terms, "" when none */
};

#define ADV_MAX_SOURCES 48
#define ADV_MAX_UNKNOWN 8
#define ADV_SOURCE_MAX 200

/* Where a workload value came from (the job reader). */
struct adv_source {
	char field[24];                /* "tp", "model", "world", ... */
	char where[ADV_SOURCE_MAX];    /* "train.sbatch:6 --tensor-model-parallel-size" */
};

/* The layout as resolved (all sizes >= 1). */
struct adv_layout_out {
	int gpus, nodes, gpus_per_node;
	int tp, pp, cp, ep, etp, vpp, dp;
	int zero;
	bool sp;
};

/* Per-GPU memory of the most loaded pipeline stage, GiB. */
struct adv_memory {
	double per_gpu_gib;
	double usable_gib;
	double capacity_gib;
	double weights_gib;
	double grads_gib;
	double optimizer_gib;
	double activations_gib;
	double kv_cache_gib;           /* inference only, else 0 */
	double overhead_gib;
};

struct adv_checkpoint {
	double interval_s;             /* the job's (or the optimum when none) */
	double optimal_s;              /* exact-model optimum */
	double young_s;
	double daly_s;
	double waste;                  /* fraction of time lost at interval_s */
	double optimal_waste;
	double write_s;                /* C: blocking time per checkpoint */
	double job_mtbf_h;
	double size_gb;                /* full checkpoint size */
};

struct adv_estimate {
	double params_b;               /* total */
	double active_params_b;
	double step_time_s;
	double tokens_per_s;
	double mfu;
	double train_days;             /* 0 when --tokens was not given */
	double cost_usd;
	double energy_mwh;
	double bubble;                 /* pipeline bubble fraction */
};

/* Serving figures (task infer, serving.c), per model replica. */
struct adv_serving {
	double kv_capacity_seqs;       /* sequences of seq tokens that fit in the KV cache */
	double kv_bytes_per_token;     /* KV cache of one token, whole replica */
	int prefill_chunk;             /* tokens per prefill chunk (activations) */
	int decode_batch;              /* sequences decoded together: min(max(1, mbs), capacity) */
	double prefill_tokens_per_s;   /* compute-bound roofline */
	double decode_tokens_per_s;    /* memory-bound roofline at decode_batch */
	double decode_step_s;          /* one decoding step of the batch */
};

struct adv_result {
	enum adv_verdict verdict;
	enum adv_mode mode;            /* mode in force; warn mode turns rejects into warnings */
	bool has_layout, has_memory, has_checkpoint, has_estimate;
	struct adv_layout_out layout;
	/* Workload as resolved (defaults filled in) */
	int precision, recompute, task, framework, seq, mbs, gbs;
	struct adv_memory memory;
	struct adv_checkpoint checkpoint;
	struct adv_estimate estimate;
	bool has_serving;              /* task infer with a GPU and a model */
	struct adv_serving serving;
	int attention;                 /* enum adv_attention as resolved */
	/* The job reader's part (filled by the caller after the engine). */
	bool llm_job;                  /* a launcher, trainer or --llm-* option */
	char model[ADV_NAME_MAX * 2];  /* the model as judged; "inline" for an architecture */
	int n_sources;
	int n_unknown;
	int n_findings;
	/* Arrays last: engine_check() clears only what comes before them. */
	struct adv_finding findings[ADV_MAX_FINDINGS];
	struct adv_source sources[ADV_MAX_SOURCES];
	char unknown[ADV_MAX_UNKNOWN][ADV_SOURCE_MAX];
};

/* Fills a request with "not given" everywhere. */
void engine_request_init(struct adv_request *req);

/*
 * Checks one job.  Never fails: unknown names and impossible inputs are
 * findings.  The verdict is the worst severity after the policy's mode is
 * applied (mode off: accept; warn: rejects become warnings).
 */
void engine_check(const catalog_t *cat, const struct adv_policy *pol,
		  const struct adv_request *req, struct adv_result *res);

/* Adds a finding (no-op when full).  fix may be NULL. */
void engine_add_finding(struct adv_result *res, const char *code,
			enum adv_severity sev, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
bool engine_has_finding(const struct adv_result *res, const char *code);

const char *engine_verdict_name(enum adv_verdict v);
const char *engine_severity_name(enum adv_severity s);
const char *engine_precision_name(int p);
const char *engine_recompute_name(int r);
const char *engine_task_name(int t);
const char *engine_framework_name(int f);
const char *engine_attention_name(int a);
const char *engine_context_name(enum adv_context c);
/* "tp8.pp4.cp1.ep1.dp16" (ADVISOR_LAYOUT) */
void engine_layout_string(const struct adv_layout_out *l, char *buf, size_t len);

#endif
