/*
 * roofline.c - the bounds the engine's modules share: a GPU's peak dense
 * FLOP/s per precision (the catalog's datasheet figures), the KV cache of
 * a token and of a sequence (GQA: 2 L g d bytes per token, Ainslie et al.
 * 2023; MLA: L (d_c + d_rope), DeepSeek-V2 section 2.1.2), and the whole
 * sequences that fit in what is left of a GPU (serving.c, memory.c).
 *
 * Sliding-window attention (issue 19): a layer that attends to the last W
 * tokens keeps only those.  vLLM V1 sizes a request's cache per layer group
 * (vllm/v1/kv_cache_interface.py, SlidingWindowSpec.max_memory_usage_bytes:
 * min(W - 1 + max_num_batched_tokens, max_model_len) tokens for a
 * sliding-window group, the whole context for a full-attention group;
 * vllm/v1/core/kv_cache_utils.py reports "GPU KV cache size" as that
 * concurrency x max_model_len).  SGLang's hybrid SWA pool
 * (python/sglang/srt/server_args.py, swa_full_tokens_ratio = 0.8) gives
 * the sliding-window layers 0.8 as many token slots as the full layers.
 * The window's block rounding (one block per group) is left out.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "roofline.h"
#include "util.h"

#define BYTES_16BIT 2.0
#define BYTES_FP32 4.0
#define BYTES_FP8 1.0
#define TFLOPS 1e12
/* SGLang server_args.py swa_full_tokens_ratio default. */
#define SGLANG_SWA_FULL_TOKENS_RATIO 0.8

double roofline_peak_flops(const struct adv_gpu *gpu, int precision)
{
	double bf16 = gpu->bf16_tflops;

	switch (precision) {
	case ADV_PREC_FP8:
		return (gpu->fp8_tflops > 0 ? gpu->fp8_tflops : bf16) * TFLOPS;
	case ADV_PREC_FP32:
		return (gpu->fp32_tflops > 0 ? gpu->fp32_tflops : bf16) * TFLOPS;
	default:
		return bf16 * TFLOPS;
	}
}

double roofline_kv_bytes_per_token(const struct adv_model *m, int precision, int tp, int pp)
{
	double bytes = precision == ADV_PREC_FP8 ? BYTES_FP8
		     : precision == ADV_PREC_FP32 ? BYTES_FP32 : BYTES_16BIT;
	int p = pp > 0 ? pp : 1, t = tp > 0 ? tp : 1;
	double layers = (m->layers + p - 1) / p;
	double heads;

	if (m->has_mla)
		return (double)(m->mla.kv_lora_rank + m->mla.qk_rope_dim) * layers * bytes;
	/* Each TP rank keeps at least one KV head (replicated when t > g). */
	heads = m->kv_heads >= t ? (double)m->kv_heads / t : 1.0;
	return 2.0 * layers * heads * m->head_dim * bytes;
}

int roofline_kv_precision(const struct adv_job *job)
{
	if (job->kv_dtype_set)
		return job->kv_dtype;
	if (job->kv_fp8)
		return ADV_PREC_FP8;
	return job->precision == ADV_PREC_FP8 ? ADV_PREC_BF16 : job->precision;
}

bool roofline_serve_big_gpu(const struct adv_job *job)
{
	return !job->gpu || (job->gpu->memory_gib >= 70 && !strcasestr(job->gpu->name, "a100"));
}

int roofline_prefill_budget(const struct adv_job *job)
{
	if (job->prefill_chunk > 0)
		return job->prefill_chunk;
	/* SGLang keeps its own (share_static); vLLM's follows the GPU. */
	return job->share_static || roofline_serve_big_gpu(job) ? SERVE_DEFAULT_PREFILL_CHUNK
								 : SERVE_SMALL_PREFILL_CHUNK;
}

int roofline_prefill_tokens(const struct adv_job *job)
{
	double want = (double)job->seq * (job->mbs > 1 ? job->mbs : 1);
	int budget = roofline_prefill_budget(job);

	return want < budget ? (int)want : budget;
}

/*
 * Tokens of a seq-token request that a sliding-window layer keeps, as a
 * share of the full-attention layers' seq (SGLang: the SWA pool's ratio).
 */
static double swa_share(const struct adv_job *job)
{
	double keep;

	if (job->share_static)
		return SGLANG_SWA_FULL_TOKENS_RATIO;
	keep = job->model->sliding_window - 1.0 + roofline_prefill_budget(job);
	return job->seq > 0 && keep < job->seq ? keep / job->seq : 1.0;
}

double roofline_kv_seq_bytes(const struct adv_job *job)
{
	const struct adv_model *m = job->model;
	double per_tok, swa;

	if (!m)
		return 0;
	per_tok = roofline_kv_bytes_per_token(m, roofline_kv_precision(job), job->lay.tp,
					      job->lay.pp);
	if (m->sliding_window <= 0 || m->sliding_layers <= 0 || m->has_mla || m->layers <= 0)
		return per_tok * (double)job->seq;
	/* The per-token bytes are the stage's layers: split them into the
	 * model's share of full and sliding-window layers. */
	swa = (double)m->sliding_layers / m->layers;
	return per_tok * (double)job->seq * ((1.0 - swa) + swa * swa_share(job));
}

double roofline_kv_capacity(const struct adv_job *job, double usable_gib, double fixed_gib)
{
	double per_seq = roofline_kv_seq_bytes(job), free_b = (usable_gib - fixed_gib) * GIB;

	if (per_seq <= 0 || free_b <= 0)
		return 0;
	return floor(free_b / per_seq);
}
