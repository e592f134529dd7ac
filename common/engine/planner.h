/*
 * planner.h - the layout planner: resources + model in, the parallel
 * layouts and workload settings that fit, ranked by estimated tokens/s
 * (see planner.c for the search and its bounds).
 *
 * Every plan returned is admissible: passing its values back to
 * engine_check() (planner_plan_request() builds that request) gives the
 * same memory and estimate figures and no finding the plan controls above
 * the plan's verdict (accept by default).  Findings the plan does not
 * control (checkpoint interval, a sequence longer than the model's context)
 * are the request's own and are left to it.
 *
 * No allocation: a fixed-size top-K table on the stack.  Thread-safe (reads
 * the catalog and policy only).
 */
#ifndef ADVISOR_PLANNER_H
#define ADVISOR_PLANNER_H

#include <stdbool.h>
#include <stddef.h>

#include "config/catalog.h"
#include "config/policy.h"
#include "result.h"
#include "workload.h"

#define PLANNER_DEFAULT_TOP 5
#define PLANNER_MAX_PLANS 64
#define PLANNER_WHY_MAX 200
#define PLANNER_OPTS_MAX 160

enum planner_err {
	PLANNER_OK = 0,
	PLANNER_ERR_ARG,             /* NULL pointer or max_plans < 1 */
	PLANNER_ERR_MODEL_NOT_GIVEN, /* the request names no model */
	PLANNER_ERR_MODEL_UNKNOWN,   /* the model is not in the catalog */
	PLANNER_ERR_GPU_UNKNOWN,     /* no GPU type, or not in the catalog */
	PLANNER_ERR_NO_GPUS,         /* zero GPUs (nor nodes x GPUs per node) */
	PLANNER_ERR_MAX_GPUS,        /* more GPUs than the partition allows */
	PLANNER_ERR_FP8_UNSUPPORTED, /* fp8 on a GPU without fp8 tensor cores */
	PLANNER_ERR_COUNT            /* sizes planner_strerror's table; no error */
};

struct planner_opts {
	int top;             /* plans wanted; <= 0: PLANNER_DEFAULT_TOP */
	bool cross_node_tp;  /* TP beyond the GPUs of one node (TP_CROSSES_NODE warning) */
	bool allow_warnings; /* also plans the engine would warn about: uneven
				pipeline stages (near-divisor PP), low memory
				headroom, a pipeline bubble over policy */
};

struct planner_plan {
	struct adv_layout_out layout;  /* tp..dp, zero, sp, gpus, nodes, gpus_per_node */
	int mbs, recompute, precision; /* the workload the plan chose or kept */
	int seq, gbs, task, framework; /* as the engine resolves them for this plan */
	bool gbs_given;                /* gbs came from the request (pass it back) */
	struct adv_memory memory;      /* engine_check()'s figures for the plan */
	struct adv_estimate estimate;
	double headroom_gib;           /* usable - per GPU */
	enum adv_verdict verdict;      /* accept, or warn (allow_warnings / cross_node_tp) */
	char why[PLANNER_WHY_MAX];     /* why it ranks where it does */
};

/* Fills opts with the defaults (top 5, TP inside a node, accept only). */
void planner_opts_init(struct planner_opts *opts);

/*
 * Plans the request's job: resources (GPU type, --gpus or nodes x GPUs per
 * node, partition) and workload (model, task, sequence, global batch if
 * given, precision, framework, --tokens).  The request's layout, ZeRO stage,
 * micro-batch and recompute are what the planner chooses, so they are
 * ignored.  Writes up to min(max_plans, opts->top) plans best first
 * (estimated tokens/s, ties by memory headroom; at most one plan per
 * tp/pp/cp/ep/etp) and their number to *n_out (0 when nothing fits: not an
 * error).  Returns PLANNER_OK or a planner_err with a message in err
 * (may be NULL).
 */
int planner_plan(const catalog_t *cat, const struct adv_policy *pol,
		 const struct adv_request *req, const struct planner_opts *opts,
		 struct planner_plan *plans, int max_plans, int *n_out,
		 char *err, size_t errlen);

const char *planner_strerror(int code);

/*
 * The request that checks a plan: base (the request planned) with the
 * plan's layout, ZeRO stage, micro-batch, recompute and precision set.
 */
void planner_plan_request(const struct planner_plan *plan, const struct adv_request *base,
			  struct adv_request *out);

/* The plan as user options: "--llm-layout=tp8,pp4 --llm-zero=1 --llm-mbs=2 ..." */
void planner_plan_options(const struct planner_plan *plan, char *buf, size_t len);

#endif
