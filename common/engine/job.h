/*
 * job.h - the resolved form of a request, types only: defaults filled in,
 * the catalog entries looked up, every parallel size >= 1.  Built by
 * engine_resolve() (evaluate.c) or by the planner, and computed on by
 * layout.c, roofline.c, memory.c, serving.c, estimate.c and checkpoint.c.
 */
#ifndef ADVISOR_ENGINE_JOB_H
#define ADVISOR_ENGINE_JOB_H

#include <stdbool.h>

#include "config/catalog.h"
#include "result.h"
#include "workload.h"

struct adv_job {
	const struct adv_model *model;   /* NULL when unknown */
	const struct adv_gpu *gpu;       /* NULL when unknown */
	struct adv_params params;        /* valid when model != NULL */
	struct adv_layout_out lay;       /* resolved sizes, all >= 1 */
	int precision, recompute, task, framework;
	int seq, mbs, gbs;               /* gbs assumed when not given (gbs_given) */
	bool gbs_given;
	bool mbs_given;                  /* serving: max_num_seqs stated (else vLLM's default) */
	bool sp_given;
	bool etp_given;                  /* else ETP follows TP (layout_default_etp) */
	int attention;                   /* enum adv_attention (0 = flash) */
	int prefill_chunk;               /* serving: tokens per prefill chunk; 0 = default */
	int grad_dtype;                  /* enum adv_precision; ADV_UNSET: policy grad_bytes */
	int optim_bytes;                 /* optimizer state bytes per parameter; 0: Adam's */
	bool fp8_params;                 /* weights kept in fp8 (Megatron --fp8-param-gather) */
	bool kv_fp8;
	int mem_share;                   /* serving pool, per mille of GPU memory; 0 = 900 */
	bool share_static;               /* SGLang: the pool holds weights and KV cache only */
	bool kv_dtype_set;               /* else kv_fp8, else the activations' dtype */
	int kv_dtype;                    /* enum adv_precision of the KV cache, when set */
	int weights;                     /* enum adv_weights of a server's linear layers */
	bool no_act;                     /* count no activations: the least memory of a job
					    whose framework advisor does not model (provenance.c) */
};

#endif
