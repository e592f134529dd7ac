/*
 * result.h - the answer side of the engine, types only: the verdict, the
 * findings with their fixes, the resolved layout and the memory,
 * checkpoint, estimate and serving figures (shared/design.md's check --json).
 */
#ifndef ADVISOR_ENGINE_RESULT_H
#define ADVISOR_ENGINE_RESULT_H

#include <stdbool.h>

#include "config/policy.h"
#include "workload.h"

#define ADV_MAX_FINDINGS 32
#define ADV_CODE_MAX 40
#define ADV_MSG_MAX 320
/* A fix in the job's terms names a line per setting it changes: a whole
 * BEST_PLAN on a Megatron command line takes about 500 bytes. */
#define ADV_FIX_JOB_MAX 768

enum adv_verdict { ADV_ACCEPT = 0, ADV_WARN = 1, ADV_REJECT = 2, ADV_VERDICT_COUNT };
enum adv_severity { ADV_SEV_INFO = 0, ADV_SEV_WARN = 1, ADV_SEV_REJECT = 2, ADV_SEV_COUNT };

struct adv_finding {
	char code[ADV_CODE_MAX];
	enum adv_severity severity;
	char message[ADV_MSG_MAX];
	char fix[ADV_MSG_MAX];         /* "" when there is no fix */
	char fix_job[ADV_FIX_JOB_MAX];     /* the same fix in the job's own terms, "" when none */
	unsigned uses;                 /* the values it rests on: ADV_USES(enum adv_field) bits */
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

/*
 * Per-GPU memory of the most loaded pipeline stage, GiB.  weights to
 * kv_cache add up to the peak that torch.cuda.max_memory_allocated
 * counts; allocator is the caching allocator's margin over it (training,
 * policy allocator_margin), so that with it they make the reserved peak
 * (max_memory_reserved); overhead is what torch never counts (CUDA
 * context, NCCL).  per_gpu is allocated + overhead, what the capacity
 * check (MEM_OVER_CAPACITY) compares with usable; per_gpu + allocator,
 * the reserved figure, is what the headroom warning judges (the margin is
 * a site default, not a documented size: never a reject on its own).
 */
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
	double allocator_gib;          /* caching allocator margin (training), else 0 */
	int peak_stage;                /* the pipeline stage (PP rank) costed, 0-based */
	int stages;                    /* pipeline stages (PP) */
	/* Why that rank peaks (issue 29): the micro-batches of a whole stage
	 * it holds in flight at its peak (the schedule's warm-up), and
	 * whether it is the last stage, which adds the logits and the loss. */
	double peak_inflight;
	bool peak_logits;
	/* The proof (issue 26): per-GPU memory at the least that every value
	 * the job leaves unstated could take (provenance.c), per_gpu_gib's
	 * terms; "at least" where per_gpu_gib is "about".  least_gib ==
	 * per_gpu_gib when nothing is assumed; 0 when it cannot be bounded
	 * (a parallel size the job may set elsewhere). */
	double least_gib;
	bool least_bounded;
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
	double kv_capacity_tokens;     /* tokens that fit in the KV cache (issue 19) */
	double mem_share;              /* the engine's pool, share of GPU memory (0.9 vLLM) */
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
	/* For a partition list (-p debug,h100): the listed partition whose
	 * mode is in force, the strictest (policy_mode_list); "" otherwise. */
	char mode_partition[ADV_NAME_MAX];
	/*
	 * Issue 30: why the job was not checked, when the policy exempts it
	 * ("user alice", "account physics": exempt.users, exempt.accounts; or
	 * "partition debug": that partition's own mode off); "" otherwise.
	 * The decision log keeps it, so that show does not print an exempt
	 * job as a clean accept.
	 */
	char exempt[ADV_NAME_MAX + 16];
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
	/* Where each resolved value came from (enum adv_origin by enum
	 * adv_field; provenance.c). */
	unsigned char from[ADV_F_COUNT];
	/* The job reader's part (filled by the caller after the engine). */
	bool llm_job;                  /* a launcher, trainer or --llm-* option */
	/* When not: why, as the reader found it (issue 28); "" otherwise. */
	char not_llm_why[256];
	/* Issue 27: the job's text was read for this answer (a node check:
	 * its parent did not vouch for it). */
	bool text_read;
	/* Issue 31: a job_submit check whose parent the log vouched for: the
	 * parent's verdict and id stand, nothing was judged again. */
	bool parent_confirmed;
	char model[ADV_NAME_MAX * 2];  /* the model as judged; "inline" for an architecture */
	int n_sources;
	int n_unknown;
	int n_findings;
	/* Arrays last: engine_check() clears only what comes before them. */
	struct adv_finding findings[ADV_MAX_FINDINGS];
	struct adv_source sources[ADV_MAX_SOURCES];
	char unknown[ADV_MAX_UNKNOWN][ADV_SOURCE_MAX];
};

#endif
