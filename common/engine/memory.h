/*
 * memory.h - per-GPU memory of the most loaded pipeline stage (see memory.c
 * for the papers each term comes from).
 */
#ifndef ADVISOR_MEMORY_H
#define ADVISOR_MEMORY_H

#include "layout.h"

/* Bytes per parameter of the model states for a precision and task. */
struct mem_state_bytes {
	double weights, grads, optimizer;
};

/*
 * ZeRO sharding of psi parameters held by one GPU before data parallelism
 * (ZeRO paper, Rajbhandari et al. 2020, section 5): fills bytes per GPU.
 */
void memory_model_states(double psi, int nd, int zero, const struct mem_state_bytes *b,
			 double *weights, double *grads, double *optimizer);

/* LoRA adapter parameters of the whole model (rank 16 on every projection). */
double memory_lora_params(const struct adv_model *m);

/* Full per-GPU breakdown; capacity and usable are 0 without a GPU entry. */
void memory_estimate(const struct adv_job *job, const struct adv_policy *pol,
		     struct adv_memory *out);

/*
 * The same breakdown for one pipeline stage (0-based, the last one when
 * stage >= the stage count): what a measurement taken on that rank saw
 * (Megatron-LM logs the last rank's peak).
 */
void memory_estimate_stage(const struct adv_job *job, const struct adv_policy *pol, int stage,
			   struct adv_memory *out);

/* Bytes per parameter of a quantized weight format (enum adv_weights); 0
 * for 16-bit. */
double memory_quant_bytes(int weights);

/*
 * Serving (task infer): the share of GPU memory the engine takes as its
 * pool (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static), the
 * GiB of it left for the KV cache on one GPU of the most loaded stage
 * after mem's weights, the profile run's activations (not SGLang's) and
 * non-torch memory, and that room in tokens and in sequences of the job's
 * context, per model replica.
 */
double memory_serve_share(const struct adv_job *job);
double memory_kv_room_gib(const struct adv_job *job, const struct adv_memory *mem);
double memory_kv_tokens(const struct adv_job *job, const struct adv_memory *mem);
double memory_kv_seqs(const struct adv_job *job, const struct adv_memory *mem);

/* "weights 15.0, grads 29.9, ..." of a memory figure: its terms above
 * 0.05 GiB and the pipeline stage where there are several. */
void memory_terms(const struct adv_memory *m, char *buf, size_t len);

/* Why the pipeline stage of m peaks: ", 8 micro-batches of its layers in
 * flight" or ", the last: the logits and loss, ...". */
void memory_peak_why(const struct adv_memory *m, char *buf, size_t len);

/*
 * MEM_OVER_CAPACITY (reject, with fixes that fit, each with its memory) or
 * MEM_LOW_HEADROOM (warn).  Returns true when the job fits.
 */
bool memory_check(const struct adv_job *job, const struct adv_policy *pol,
		  const struct adv_layout *given, const struct adv_memory *mem,
		  struct adv_result *res);

#endif
