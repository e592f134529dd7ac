/*
 * layout.h - resolving a job's parallel layout and judging it against the
 * layout rules of shared/notes/model-math.md (see layout.c).
 *
 * struct adv_job (job.h) is the resolved form of a request (defaults filled
 * in, the catalog entries looked up) that memory.c, estimate.c, checkpoint.c
 * and the planner compute on.  A planner may build one directly, change its layout
 * and call layout_check(), memory_estimate() and estimate_step() on it.
 */
#ifndef ADVISOR_LAYOUT_H
#define ADVISOR_LAYOUT_H

#include <stdbool.h>

#include "config/policy.h"
#include "job.h"
#include "result.h"
#include "workload.h"


/* Micro-batches per step per pipeline: m = GBS / (b * N_d), at least 1. */
int layout_microbatches(const struct adv_job *job);
/* Pipeline bubble (p - 1) / (m * v) of 1F1B / interleaved 1F1B. */
double layout_bubble(const struct adv_job *job);
/* L + 1 or L + 2 (embedding and loss counted as layers) divide p. */
bool layout_pp_accounted(int layers, int pp);
/* Layers on the most loaded pipeline stage: ceil(L / p). */
int layout_stage_layers(const struct adv_job *job);
/* The ETP of a job that states none: TP, or 1 for serving with EP; by
 * task, tp and ep for what has no job (the planner's plans). */
int layout_etp_for(int task, int tp, int ep);
int layout_default_etp(const struct adv_job *job);
/* Expert data-parallel size: GPUs / (etp * ep * pp). */
int layout_expert_dp(const struct adv_job *job);
/*
 * The GBS the engine assumes when --llm-gbs is not given: m = 4 * PP
 * micro-batches per pipeline (1 without a pipeline).
 */
int layout_default_gbs(int mbs, int dp, int pp);

/*
 * Fills job->lay from the request: GPU count (--gpus, or nodes x GPUs per
 * node), GPUs per node (request, else partition, else GPU entry), sizes
 * (1 when not given) and DP (derived).  Adds GPU_COUNT_MISMATCH / GPUS_IDLE
 * findings to res (may be NULL).  Returns 0 when a layout exists (DP >= 1).
 */
int layout_resolve(const struct adv_request *req, const struct adv_partition *part,
		   struct adv_job *job, struct adv_result *res);

/*
 * Judges the resolved layout.  Every hard rule broken is a reject-level
 * finding with a fix built from the user's own sizes (given, may be NULL
 * for callers without one); soft rules are warnings.  With res == NULL only
 * counts (planner).  Returns the number of hard rules broken.
 */
int layout_check(const struct adv_job *job, const struct adv_layout *given,
		 const struct adv_policy *pol, const struct adv_partition *part,
		 struct adv_result *res);

/* All fields ADV_UNSET: "change nothing" for layout_format_option(). */
void layout_unset(struct adv_layout *l);

/*
 * Writes the user's layout with the sizes set in over replaced, as an
 * --llm-layout value ("tp4,pp4,sp").  given == NULL means the job's resolved
 * sizes.  A given DP is recomputed from the GPU count when the product
 * changes; sizes of 1 that were not given are left out.
 */
void layout_format_option(const struct adv_layout *given, const struct adv_job *job,
			  const struct adv_layout *over, char *buf, size_t len);

#endif
