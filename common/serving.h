/*
 * serving.h - what a serving job (task infer) can hold and how fast it
 * runs: the prefill chunk, the KV cache capacity in sequences, and the
 * prefill and decode rooflines (see serving.c for the sources).
 */
#ifndef ADVISOR_SERVING_H
#define ADVISOR_SERVING_H

#include "layout.h"

/*
 * Tokens one prefill chunk processes when the job does not say: vLLM V1's
 * max_num_batched_tokens for the OpenAI server on GPUs of 70 GiB or more
 * (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults) and SGLang's
 * chunked_prefill_size on GPUs of 35-160 GB (python/sglang/srt/
 * server_args.py): 8192 in both.
 */
#define SERVE_DEFAULT_PREFILL_CHUNK 8192

/* The chunk's token budget: the job's, else the default. */
int serving_prefill_budget(const struct adv_job *job);
/* Tokens of the chunk in flight: min(budget, seq * max(1, mbs)). */
int serving_prefill_tokens(const struct adv_job *job);
/* KV cache bytes of one sequence of job->seq tokens on one GPU of the most
 * loaded pipeline stage. */
double serving_kv_seq_bytes(const struct adv_job *job);
/* Whole sequences that fit in usable_gib after fixed_gib (weights,
 * activations, overhead), per model replica; 0 when none. */
double serving_kv_capacity(const struct adv_job *job, double usable_gib, double fixed_gib);

/*
 * The serving figures of a job whose memory has been estimated (mem from
 * memory_estimate()).  Needs job->gpu and job->model; zeroes out otherwise.
 */
void serving_estimate(const struct adv_job *job, const struct adv_policy *pol,
		      const struct adv_memory *mem, struct adv_serving *out);

/*
 * KV_CAPACITY_LOW (warn) when fewer than max(1, mbs) sequences of seq
 * tokens fit, with the settings that make them fit.  given is the user's
 * --llm-layout (may be NULL).
 */
void serving_check(const struct adv_job *job, const struct adv_policy *pol,
		   const struct adv_layout *given, const struct adv_serving *sv,
		   struct adv_result *res);

#endif
