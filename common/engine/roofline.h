/*
 * roofline.h - what the hardware and the model bound, shared by memory.c,
 * serving.c and estimate.c: the peak FLOP/s of a GPU and the KV cache a
 * token or a sequence needs, and how many sequences fit (roofline.c).
 */
#ifndef ADVISOR_ENGINE_ROOFLINE_H
#define ADVISOR_ENGINE_ROOFLINE_H

#include "config/catalog.h"
#include "job.h"

/* Peak dense FLOP/s of one GPU for a precision (fp8 falls back to bf16). */
double roofline_peak_flops(const struct adv_gpu *gpu, int precision);

/* KV cache bytes per token of one sequence on one GPU (GQA / MLA aware). */
double roofline_kv_bytes_per_token(const struct adv_model *m, int precision, int tp, int pp);
/* The dtype the job's KV cache is kept in: fp8 only when the job says so
 * (--kv-cache-dtype fp8); else the activations' dtype, 16-bit when the
 * weights are fp8 (vLLM and SGLang's kv_cache_dtype "auto" follows the
 * model's dtype, not its weight quantization).  --llm-kv-dtype (job
 * kv_dtype) wins over both. */
int roofline_kv_precision(const struct adv_job *job);

/*
 * Tokens one prefill chunk processes when the job does not say: vLLM V1's
 * max_num_batched_tokens for the OpenAI server on GPUs of 70 GiB or more
 * (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults) and SGLang's
 * chunked_prefill_size on GPUs of 35-160 GB (python/sglang/srt/
 * server_args.py): 8192 in both.  vLLM's smaller default, 2048, applies on
 * smaller GPUs and on A100s ("a100" not in device_name: PR 17885 measured
 * the larger budget slower there), with max_num_seqs 256 instead of 1024
 * (SERVE_DEFAULT_SEQS_*).
 */
#define SERVE_DEFAULT_PREFILL_CHUNK 8192
#define SERVE_SMALL_PREFILL_CHUNK 2048
#define SERVE_DEFAULT_SEQS_BIG 1024
#define SERVE_DEFAULT_SEQS_SMALL 256

/* vLLM's larger batch defaults apply on the job's GPU (70 GiB or more and
 * not an A100); true without a GPU. */
bool roofline_serve_big_gpu(const struct adv_job *job);

/* The chunk's token budget: the job's, else the default. */
int roofline_prefill_budget(const struct adv_job *job);
/* Tokens of the chunk in flight: min(budget, seq * max(1, mbs)). */
int roofline_prefill_tokens(const struct adv_job *job);
/* KV cache bytes of one sequence of job->seq tokens on one GPU of the most
 * loaded pipeline stage. */
double roofline_kv_seq_bytes(const struct adv_job *job);
/* Whole sequences that fit in usable_gib after fixed_gib (weights,
 * activations, overhead), per model replica; 0 when none. */
double roofline_kv_capacity(const struct adv_job *job, double usable_gib, double fixed_gib);

#endif
