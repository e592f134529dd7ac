/*
 * memory.c - per-GPU memory of the most loaded pipeline stage
 * (shared/notes/model-math.md, "Model states", "Activations", "KV cache",
 * "Capacity").
 *
 * Model states: Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward
 * Training Trillion Parameter Models", section 3.1 and 5: mixed-precision
 * Adam keeps 2 B weights + a gradient + K = 12 B optimizer state per
 * parameter; stage 1 shards the optimizer, stage 2 also the gradients,
 * stage 3 also the weights over N_d.  The gradient width is the job's
 * (issue 19): stated (Megatron --grad-reduce-in-bf16,
 * --accumulate-allreduce-grads-in-fp32, --main-grads-dtype; DeepSpeed
 * data_types.grad_accum_dtype; --llm-grad-dtype), else Megatron's
 * documented default (engine_default_grad_dtype: its DDP grad buffer,
 * megatron/core/distributed/param_and_grad_buffer.py, is fp32 for bf16 and
 * in the parameters' dtype for fp16), else site policy (grad_bytes: 2 in
 * the paper, 4 for Megatron's fp32 main grads).  The distributed
 * optimizer's fp32 copy of a bf16 gradient shard
 * (megatron/core/optimizer/distrib_optimizer.py,
 * _copy_model_grads_to_main_grads) lives only in the optimizer step, when
 * the activations are freed; it sets the peak only where it is larger than
 * they are (issue 29): Megatron's optimizers make main_param.grad =
 * grad.float(), a new fp32 tensor wherever the gradient is 16-bit (the
 * Float16 optimizer over the whole stage, the distributed optimizer over
 * its shard), and DeepSpeed's ZeRO 1/2 an fp32 partition of its gradients,
 * so a job with fp16/bf16 gradients and full recompute peaks in the step
 * (BigScience's 2021 Megatron fp16 runs on V100).  FSDP2 reduces in fp32
 * into fp32 shards: no copy.
 * The precision-aware optimizer (--use-precision-aware-optimizer with
 * --main-params-dtype, --exp-avg-dtype, --exp-avg-sq-dtype) keeps its
 * master weights and Adam moments at those widths instead of 4 + 4 + 4;
 * --fp8-param-gather keeps the transformer layers' weights in fp8 (1 B,
 * Transformer Engine's Float8Tensor in the param buffer) while the
 * embedding and output layer stay 16-bit.  Parameters
 * on a GPU are the stage's parameters / TP (Shoeybi et al. 2019); expert
 * parameters are / (EP * ETP) and shard over the expert data-parallel size
 * (Megatron-Core MoE).  Megatron's distributed optimizer shards over DP x CP
 * because context-parallel ranks hold the same weights.
 *
 * Activations: Korthikanti et al. 2022, "Reducing Activation Recomputation in
 * Large Transformer Models", section 4, equations (1)-(5), with the 34 of
 * F = 4h generalised to 18 + 4F/h, and 18 + 6F/h for gated MLPs (SwiGLU
 * stores the gate and up projections, 2 x 2sbF, and the down projection's
 * input, 2sbF, where GeLU stores 2 x 2sbF).  MoE layers use the routed
 * width (top_k + shared) * F_e.  The constants are taken term by term so
 * that grouped-query attention stores K and V of g heads, and models
 * trained without dropout (Llama-family recipes) store no dropout masks.
 * Pipeline: stage i of 1F1B holds min(p - i, m) micro-batches (Narayanan et
 * al. 2021); interleaved, the chunks Megatron-Core's and
 * torch.distributed.pipelining's warm-up leaves in flight
 * (megatron/core/pipeline_parallel/schedules.py get_pp_rank_microbatches,
 * torch/distributed/pipelining/schedules.py ScheduleInterleaved1F1B), for
 * rank 0 Korthikanti's 1 + (p-1)/(p v) (eq. 5); the last stage adds the
 * logits and the loss (logits_train).  Every stage is costed (its layers,
 * embedding or output layer, micro-batches in flight) and the most loaded
 * one is reported; uneven layers go to the last stages.
 * Attention scores: the 5as/h term (as^2 b: softmax output, its dropout
 * mask and output) exists only where attention is unfused ("eager",
 * --llm-attention=eager).  Fused and flash kernels (FlashAttention, Dao et
 * al. 2022, section 3.1; Transformer Engine's fused attention; PyTorch
 * SDPA), every current trainer's default, recompute the scores block by
 * block in the backward pass and never store them, with or without
 * activation recompute (model-math.md, "Activations").  So recompute none
 * with flash attention keeps every activation except the scores, which is
 * Korthikanti's selective-recompute figure; selective recompute with eager
 * attention drops the scores too (that is what it recomputes).
 *
 * Serving activations: vLLM and SGLang prefill in chunks of a token
 * budget (serving.c), so the activations live at one time are those of
 * one chunk inside one layer: no backward pass keeps anything, and a
 * layer's tensors are freed as the next op runs.  The peak of vLLM's
 * profile run (gpu_model_runner.py profile_run, _dummy_run of
 * max_num_batched_tokens tokens) is the MLP: the residual stream and the
 * normed hidden state (2 x 2h bytes per token, vllm/model_executor/models/
 * llama.py LlamaDecoderLayer keeps the residual beside the hidden state),
 * the fused gate_up projection's output (2 x 2F / t,
 * MergedColumnParallelLinear) and SiluAndMul's output (2F / t): 4h + 6F/t
 * bytes per token for a gated MLP, 4h + 4F/t for GeLU (up projection and
 * activation output); MoE layers take the routed width (fused_moe's
 * intermediate caches are top_k x F_e wide).  Measured: the V0 profile line
 * of vllm-project/vllm issue 10517 (Llama 3.1 8B, one GPU) grows
 * peak_torch_memory by 0.92 GiB from a 20000- to a 29000-token profile
 * run, 107 KiB per token, where 4h + 6F gives 100 KiB.  Plus the
 * profile run's sampler (sampler_profile); only the KV cache grows with
 * the sequences.
 *
 * KV cache: 2 L g d bytes per token, / t while g >= t (Pope et al. 2022,
 * "Efficiently Scaling Transformer Inference"; sliding-window layers keep
 * their window only, roofline.c, issue 19 item 4); MLA caches
 * kv_lora_rank + rope dim per token per layer (DeepSeek-V2, section 2.1.2).
 * Serving engines fill the memory left after weights and activations with
 * KV cache blocks and queue or preempt what does not fit (vLLM's
 * PagedAttention, Kwon et al. 2023), so a serving job holds the KV cache of
 * min(max(1, mbs), what fits) sequences of seq tokens, and needs room for
 * at least one: less is MEM_OVER_CAPACITY, fewer than mbs KV_CAPACITY_LOW
 * (engine.c).
 *
 * Serving pool (issue 19).  vLLM sizes its KV cache from a share of the
 * GPU's total memory, --gpu-memory-utilization (default 0.9): V1's
 * vllm/v1/worker/gpu_worker.py determine_available_memory() takes
 * requested_memory = total x utilization and subtracts what its profile run
 * left behind, non_kv_cache_memory = the weights + the torch peak of
 * gpu_model_runner.py profile_run() (one dummy forward pass of
 * max_num_batched_tokens tokens, then _dummy_sampler_run(): fp32 logits of
 * max_num_seqs rows over the whole vocabulary, sorted for top-k/top-p) +
 * the non-torch increase (NCCL communicators and the custom all-reduce
 * buffers at TP >= 2, cuBLAS workspaces).  CUDA graphs are captured after
 * the KV cache is allocated (compile_or_warm_up_model), so they come out
 * of the rest of the GPU, not out of the pool.  SGLang's
 * --mem-fraction-static is static: the pool holds the weights and the KV
 * cache only (python/sglang/srt/model_executor/model_runner.py,
 * profile_max_num_token: rest = free memory after the weights -
 * total x (1 - mem_fraction_static)); activations and CUDA graphs live in
 * the other share.  Its default (python/sglang/srt/server_args.py,
 * __post_init__) is 0.88 at TP 1, 0.87 at TP 2-3, 0.85 at 4-7, 0.81 at
 * 8-15 and 0.79 from 16 (the job reader sets it).  KV tokens per replica =
 * the pool's rest / the KV bytes of a token on one GPU.
 *
 * Quantized weights (issue 19): the checkpoint formats vLLM loads keep the
 * embedding and the lm_head 16-bit (VocabParallelEmbedding and
 * ParallelLMHead take UnquantizedEmbeddingMethod unless a config quantizes
 * lm_head; fp8 configs list lm_head in ignored_layers /
 * modules_to_not_convert) and quantize the linear layers: fp8 1 byte (+
 * one fp32 scale per 128 x 128 block for block-wise checkpoints,
 * DeepSeek-V3's weight_block_size), int8 w8a8 1 byte (per-channel scales,
 * negligible), int4 w4a16 (GPTQ, AWQ: group_size 128) half a byte + a
 * 16-bit scale and a packed 4-bit zero point per group, MXFP4 (OCP
 * Microscaling: 32-element blocks with a one-byte E8M0 scale) half a byte
 * + 1/32, on the MoE experts only (gpt-oss: attention stays bf16).
 *
 * Tied embeddings: one tensor, counted once on a stage that holds both
 * the input embedding and the output layer (pp = 1); with pp > 1 the last
 * stage keeps its own copy (Megatron's shared embedding group).
 *
 * LoRA (Hu et al. 2021): frozen base weights only; rank-16 adapters on every
 * attention and MLP projection, trained with full Adam states.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "findings.h"
#include "memory.h"
#include "names.h"
#include "roofline.h"
#include "util.h"

#define BYTES_16BIT 2.0
#define BYTES_FP32 4.0
#define BYTES_FP8 1.0
/* fp32 master weights + Adam m and v (ZeRO paper, K = 12). */
#define ADAM_MIXED_BYTES 12.0
/* Adam m and v when the weights are fp32 already. */
#define ADAM_FP32_BYTES 8.0
/* Korthikanti eq. (2): the 10 sbh that TP alone leaves unsplit (layer-norm
 * inputs 4, dropout masks 2, attention and MLP inputs 2 + 2). */
#define ACT_TP_UNSPLIT 10.0
/* Korthikanti eq. (1), 34 = 18 + 4F/h, term by term (see act_coefficient). */
#define ACT_NORM_INPUTS 4.0
#define ACT_ATTN_FIXED 6.0      /* QKV input 2, Q 2, attention output 2 */
#define ACT_KV 4.0              /* K 2 + V 2, times g/a */
#define ACT_MLP_INPUT 2.0
#define ACT_DROPOUT_MASKS 2.0   /* attention and MLP output dropout, 1 byte each */
#define ACT_MLP_PER_F 4.0
#define ACT_GATED_MLP_PER_F 6.0
/* 5 a s / h: softmax output 2, its dropout mask 1 and the dropout output 2;
 * without dropout only the softmax output (2) is kept. */
#define ACT_SCORES 5.0
#define ACT_SCORES_NO_DROPOUT 2.0
/* Full recompute keeps each layer's 2-byte input (Korthikanti section 4.2). */
#define ACT_FULL_RECOMPUTE_INPUT 2.0
/*
 * torchtitan's per-op selective checkpointing (activation_checkpoint.py,
 * mode "selective", selective_ac_option "op", its default): inside each
 * checkpointed transformer block the policy saves the outputs of the ops in
 * its save list (aten.mm, the SDPA kernels, c10d reduce_scatter_tensor)
 * except every second mm (a per-block mm counter: the 2nd, 4th, 6th are
 * recomputed) and recomputes everything else.  A Llama block calls its mms
 * as wq, wk, wv, wo, w1, w3, w2, so it saves the block input 2 (the
 * checkpoint's own input), wq's output Q 2, wv's output V 2 g/a, the SDPA
 * output 2 (its fp32 logsumexp, 4 a/h, is left out: under 0.1), w1's output
 * 2F/h and w2's output 2, bytes per s b h.  Under TP the column-parallel
 * outputs (Q, V, SDPA, w1) and the sequence-parallel input are / t, w2's
 * mm output is the partial sum before the reduce-scatter (full s b h) and the
 * two reduce-scatter outputs (after wo and w2) add 2 + 2, / t.
 */
#define SAC_INPUT 2.0
#define SAC_Q 2.0
#define SAC_V 2.0               /* times g/a */
#define SAC_SDPA_OUT 2.0
#define SAC_GATE_PER_F 2.0      /* w1's output, per F/h */
#define SAC_DOWN_OUT 2.0
#define SAC_REDUCE_SCATTER 4.0  /* TP only: wo's and w2's reduce-scatter outputs */
/* Serving: the last-token logits, upcast to fp32 for sampling. */
#define LOGITS_BYTES 4.0
/* Serving, bytes per token at the MLP of the profile run ("Serving
 * activations"): residual and hidden state 2 + 2 per h; gate_up output 4
 * and its activation 2 per F (gated), up output 2 and activation 2 (GeLU). */
#define SERVE_ACT_RESIDUAL 4.0
#define SERVE_ACT_GATED_PER_F 6.0
#define SERVE_ACT_PER_F 4.0
/*
 * Serving: vLLM's profile run samples max_num_seqs rows (the job's, else
 * get_batch_defaults' 1024 on GPUs of 70 GiB or more that are not A100s,
 * 256 on the others: roofline.h) over the whole vocabulary
 * (logits are gathered over TP): fp32 logits 4, and the top-k/top-p sort
 * of _dummy_sampler_run's dummy sampling parameters, fp32 values 4 and
 * int64 indices 8.
 */
#define SAMPLER_BYTES (BYTES_FP32 + BYTES_FP32 + 8.0)
/*
 * vLLM's default --gpu-memory-utilization (vllm/config CacheConfig,
 * gpu_memory_utilization = 0.9), per mille.
 */
#define SERVE_DEFAULT_SHARE 900
/*
 * Non-torch memory a server's profile sees grow (vLLM's memory_profiling
 * non_torch_increase): cuBLAS and allocator workspaces, 0.35 GiB in the
 * profile line of vllm-project/vllm issue 10517 (one GPU), and at TP >= 2
 * NCCL's communicators (NCCL_BUFFSIZE 4 MiB per channel and peer, send and
 * receive) and vLLM's custom all-reduce (2 x 8 MiB IPC buffers plus
 * graph-registered ones): 0.25 GiB more.  On GPUs joined by NVLink 4
 * switches (NVLS: H100, H200 and Blackwell SXM, interconnect 900 GB/s and
 * up) NCCL also maps its NVLink SHARP buffers (NCCL_NVLS_ENABLE, on by
 * default there), and vLLM's own accounting ("Actual usage is ... GiB for
 * non-torch memory", gpu_worker.py, vLLM 0.19) reads 2.07-2.21 GiB at TP 2
 * and 4 against 0.24-0.26 at TP 1 and 0.07 at PP 2 on H100 (the
 * llm-d-planner start-up logs of Llama 3.1 8B, Qwen2.5 72B and Mixtral in
 * tests/accuracy/memory-measured.json): 1.85 GiB more.  A measured size,
 * not one derived from NCCL's code.  These terms size the KV pool only
 * (KV_CAPACITY_LOW, an estimate); the capacity check and its bound count
 * the policy's overhead_gib instead.
 */
#define SERVE_NON_TORCH_GIB 0.35
#define SERVE_NCCL_GIB 0.25
#define SERVE_NVLS_GIB 1.85
#define NVLS_MIN_GBS 900.0
/* Quantized weight formats, bytes per parameter (see the top comment). */
#define FP8_BLOCK_SCALE (BYTES_FP32 / (128.0 * 128.0))
#define INT4_GROUP 128.0
#define INT4_BYTES (0.5 + (BYTES_16BIT + 0.5) / INT4_GROUP)
#define MXFP4_BYTES (0.5 + 1.0 / 32.0)
/*
 * Training, bytes per logit element (tokens x vocabulary / TP) live at the
 * loss, on the last stage (issue 19).  Megatron-Core's vocab-parallel cross
 * entropy (megatron/core/tensor_parallel/cross_entropy.py,
 * calculate_logits_max) copies the 16-bit logits to fp32 and works in place
 * from there (subtract the max, exp, divide: the softmax it saves for the
 * backward is that fp32 buffer), so the 16-bit logits 2 and the fp32 copy 4
 * are live together in the forward; in the backward the fp32 gradient is
 * made in place in the saved softmax and cast back to 16 bits, 4 + 2 again.
 * PyTorch trainers (torchtitan's cross_entropy_loss, HF transformers'
 * ForCausalLMLoss) call F.cross_entropy(logits.float()): in the forward
 * the 16-bit logits 2, the fp32 upcast 4 and log_softmax's fp32 output 4,
 * which it saves; the backward is the peak (issue 29): nll_loss_backward
 * makes a dense fp32 gradient 4 and aten's _log_softmax_backward_data
 * the input's fp32 gradient 4, beside the saved output 4, while the
 * 16-bit logits are gone (torchtitan's train step `del pred` before
 * backward; the Trainer's compute_loss returns the loss only).
 */
#define LOGITS_TRAIN_MEGATRON (BYTES_16BIT + BYTES_FP32)
#define LOGITS_TRAIN_TORCH (BYTES_FP32 + BYTES_FP32 + BYTES_FP32)
#define LORA_RANK 16.0
/* LoRA checkpoints default to Adam on bf16 adapters: 2 + 4 + 12. */
#define LORA_ADAPTER_STATE_BYTES (2.0 + 4.0 + ADAM_MIXED_BYTES)

static double weight_bytes(int precision)
{
	if (precision == ADV_PREC_FP32)
		return BYTES_FP32;
	/* fp8 training keeps bf16 weights (Transformer Engine); a server's
	 * quantized weights are costed per format (serve_weights). */
	return BYTES_16BIT;
}

double memory_quant_bytes(int weights)
{
	switch (weights) {
	case ADV_WEIGHTS_FP8:
		return BYTES_FP8 + FP8_BLOCK_SCALE;
	case ADV_WEIGHTS_INT8:
		return BYTES_FP8;
	case ADV_WEIGHTS_INT4:
		return INT4_BYTES;
	case ADV_WEIGHTS_MXFP4:
		return MXFP4_BYTES;
	default:
		return 0;
	}
}

static void state_bytes(const struct adv_job *job, const struct adv_policy *pol,
			struct mem_state_bytes *b)
{
	bool frozen = job->task == ADV_TASK_INFER || job->task == ADV_TASK_LORA;

	b->weights = weight_bytes(job->precision);
	if (frozen) {
		b->grads = b->optimizer = 0;
	} else if (job->precision == ADV_PREC_FP32) {
		b->grads = BYTES_FP32;
		b->optimizer = ADAM_FP32_BYTES;
	} else {
		b->grads = job->grad_dtype == ADV_PREC_FP32 ? BYTES_FP32
			 : job->grad_dtype != ADV_UNSET ? BYTES_16BIT
			 : pol->grad_bytes > 0 ? pol->grad_bytes : BYTES_FP32;
		b->optimizer = job->optim_bytes > 0 ? job->optim_bytes : ADAM_MIXED_BYTES;
	}
}

void memory_model_states(double psi, int nd, int zero, const struct mem_state_bytes *b,
			 double *weights, double *grads, double *optimizer)
{
	double n = nd > 0 ? nd : 1;

	*weights = psi * b->weights / (zero >= 3 ? n : 1);
	*grads = psi * b->grads / (zero >= 2 ? n : 1);
	*optimizer = psi * b->optimizer / (zero >= 1 ? n : 1);
}

/*
 * One pipeline stage.  L = q p + r layers: the engine places the r spare
 * layers on the last r stages, so the first stages, which hold the most
 * micro-batches in flight under 1F1B and the input embedding, hold q.
 * Frameworks let users do exactly this (Megatron-LM's
 * --decoder-first-pipeline-num-layers; DeepSpeed's partition method
 * 'type:transformer|embedding' as BLOOM-176B used it; Llama 3, section
 * 3.3.2, removed a layer from the first and the last stage), so a job with
 * uneven layers is judged by its best placement, not its worst.
 */
struct stage {
	int index, first_layer, layers;
	bool first, last;
};

static void stage_at(const struct adv_job *job, int i, struct stage *st)
{
	int L = job->model->layers, p = job->lay.pp > 0 ? job->lay.pp : 1;
	int q = L / p, short_stages = p - L % p;

	st->index = i;
	st->layers = i < short_stages ? q : q + 1;
	st->first_layer = i * q + (i > short_stages ? i - short_stages : 0);
	st->first = i == 0;
	st->last = i == p - 1;
}

/* Parameters one GPU of a stage holds, split by sharding. */
struct stage_params {
	double dense;      /* non-expert, already / TP */
	double expert;     /* routed experts, already / (EP * ETP) */
	double layer_max;  /* the largest layer on this GPU (ZeRO-3 gather) */
	double embedding;  /* of dense: embedding and output layer, already / TP */
	double adapters;   /* LoRA adapter parameters on this GPU */
	int dense_layers, moe_layers;
};

static double lora_layer(const struct adv_model *m)
{
	double h = m->hidden, ad = (double)m->heads * m->head_dim;
	double gd = (double)m->kv_heads * m->head_dim;
	double F = m->ffn_hidden > 0 ? m->ffn_hidden : m->has_moe ? m->moe.expert_ffn_hidden : 0;
	double attn = (h + ad) + 2 * (h + gd) + (ad + h);
	double mlp = (m->gated_mlp ? 2 : 1) * (h + F) + (F + h);

	return LORA_RANK * (attn + mlp);
}

double memory_lora_params(const struct adv_model *m)
{
	return m->layers * lora_layer(m);
}

/* MoE models put their dense layers first (DeepSeek-V3: layers 0-2). */
static int stage_moe_layers(const struct adv_model *m, const struct stage *st)
{
	int from, to = st->first_layer + st->layers;

	if (!m->has_moe)
		return 0;
	from = st->first_layer > m->moe.dense_layers ? st->first_layer : m->moe.dense_layers;
	return to > from ? to - from : 0;
}

static void stage_params(const struct adv_job *job, const struct stage *st,
			 struct stage_params *sp)
{
	const struct adv_model *m = job->model;
	const struct adv_params *pr = &job->params;
	const struct adv_layout_out *l = &job->lay;
	int n_moe = m->has_moe ? m->layers - m->moe.dense_layers : 0;
	double per_expert_layer = n_moe > 0 ? pr->expert_params / n_moe : 0;
	double moe_rest = n_moe > 0 ? pr->per_layer_moe - per_expert_layer : 0;
	double out = m->tied_embeddings ? pr->embedding : pr->output;
	double emb = 0, ept = (double)l->ep * l->etp;

	sp->moe_layers = stage_moe_layers(m, st);
	sp->dense_layers = st->layers - sp->moe_layers;
	/* The first stage holds the input embedding, the last the output
	 * layer (a copy of the embedding when tied) and the final norm. */
	if (st->first)
		emb += pr->embedding;
	if (st->last)
		emb += (m->tied_embeddings && st->first ? 0 : out) + pr->final_norm;
	sp->dense = (sp->dense_layers * pr->per_layer_dense + sp->moe_layers * moe_rest + emb) / l->tp;
	sp->embedding = emb / l->tp;
	sp->expert = sp->moe_layers * per_expert_layer / ept;
	sp->layer_max = sp->dense_layers ? pr->per_layer_dense / l->tp : 0;
	if (sp->moe_layers && moe_rest / l->tp + per_expert_layer / ept > sp->layer_max)
		sp->layer_max = moe_rest / l->tp + per_expert_layer / ept;
	sp->adapters = job->task == ADV_TASK_LORA ? st->layers * lora_layer(m) / l->tp : 0;
}

/*
 * Dropout: Korthikanti's counts include the 1-byte masks of the attention
 * and MLP output dropouts (2 sbh) and of the attention-probability dropout
 * (as^2 b).  Llama-family recipes train with dropout 0 (the Llama, Mistral,
 * Qwen, Mixtral and DeepSeek configs set attention_dropout 0.0, NeMo's
 * Llama 3 configs hidden_dropout 0.0 and attention_dropout 0.0) and
 * frameworks store no mask then.  The catalog has no dropout key; an
 * RMSNorm model is taken to be such a recipe, a LayerNorm one (GPT-3's
 * Megatron reproduction uses 0.1) keeps the masks: the conservative side.
 */
static bool model_dropout(const struct adv_model *m)
{
	return m->norm != ADV_NORM_RMSNORM;
}

/*
 * sbh coefficient of one layer's stored activations without the scores
 * (Korthikanti eq. (1) term by term): layer-norm inputs 4; attention:
 * QKV input 2, Q 2, K and V 2 + 2 (times g/a with grouped-query attention,
 * whose K and V have g heads), attention output (the projection's input) 2,
 * dropout mask 1; MLP: input 2, dropout mask 1, and the F terms.  With
 * a = g and dropout this is the paper's 18 + 4F/h.
 */
static double act_coefficient(const struct adv_model *m, double F)
{
	double kv = m->heads > 0 && m->kv_heads > 0 ? (double)m->kv_heads / m->heads : 1.0;

	return ACT_NORM_INPUTS + ACT_ATTN_FIXED + ACT_KV * kv + ACT_MLP_INPUT +
	       (model_dropout(m) ? ACT_DROPOUT_MASKS : 0) +
	       (m->gated_mlp ? ACT_GATED_MLP_PER_F : ACT_MLP_PER_F) * F / m->hidden;
}

/* Korthikanti eq. (1)-(4): bytes of one layer for one micro-batch on one GPU. */
static double act_layer(const struct adv_job *job, double F, bool scores)
{
	const struct adv_model *m = job->model;
	const struct adv_layout_out *l = &job->lay;
	double s = (double)job->seq / l->cp, b = job->mbs, h = m->hidden, t = l->tp;
	double k = act_coefficient(m, F);
	double per_score = model_dropout(m) ? ACT_SCORES : ACT_SCORES_NO_DROPOUT;
	double att = scores ? per_score * m->heads * s / h : 0;
	double unsplit = ACT_TP_UNSPLIT - (model_dropout(m) ? 0 : ACT_DROPOUT_MASKS);

	if (l->sp || t == 1)
		return s * b * h * (k + att) / t;
	return s * b * h * (unsplit + (k - unsplit) / t + att / t);
}

/*
 * Bytes one block keeps under torchtitan's per-op selective checkpointing
 * (SAC_* above), for one micro-batch on one GPU.
 */
static double act_layer_sac(const struct adv_job *job, double F)
{
	const struct adv_model *m = job->model;
	const struct adv_layout_out *l = &job->lay;
	double s = (double)job->seq / l->cp, b = job->mbs, h = m->hidden, t = l->tp;
	double kv = m->heads > 0 && m->kv_heads > 0 ? (double)m->kv_heads / m->heads : 1.0;
	double split = SAC_INPUT + SAC_Q + SAC_V * kv + SAC_SDPA_OUT + SAC_GATE_PER_F * F / h;

	if (t > 1)
		return s * b * h * ((split + SAC_REDUCE_SCATTER) / t + SAC_DOWN_OUT);
	return s * b * h * (split + SAC_DOWN_OUT);
}

/*
 * "selective" is torchtitan's per-op checkpointing for FSDP2 trainers (the
 * framework that offers the mode; its config default is "op"), Korthikanti's
 * selective recompute for Megatron and the others.
 */
static bool sac_ops(const struct adv_job *job)
{
	return job->framework == ADV_FW_FSDP && job->recompute == ADV_RECOMPUTE_SELECTIVE;
}

/*
 * FSDP2 under pipeline parallelism (torchtitan parallelize.py apply_fsdp:
 * reshard_after_forward = not pp_enabled under its "default" policy):
 * each stage's parameters stay all-gathered from the first forward to the
 * last backward of the step, and torch.distributed.pipelining's stage
 * (stage.py, backward_maybe_with_nosync) turns gradient sync off until the
 * last micro-batch, so FSDP2 keeps each parameter's unsharded gradient,
 * upcast to the reduce dtype (FSDPParam.to_accumulated_grad_if_needed:
 * fp32 under torchtitan's mixed_precision_reduce default), across the
 * micro-batches.
 */
static bool fsdp_unsharded_pp(const struct adv_job *job)
{
	return job->framework == ADV_FW_FSDP && job->task != ADV_TASK_INFER &&
	       job->lay.zero >= 3 && job->lay.pp > 1;
}

static double act_width_scale(const struct adv_job *job)
{
	/* The constants count 16-bit activations. */
	return job->precision == ADV_PREC_FP32 ? BYTES_FP32 / BYTES_16BIT : 1.0;
}

static void moe_width(const struct adv_model *m, double *dense_F, double *moe_F)
{
	*dense_F = m->ffn_hidden;
	*moe_F = m->has_moe ? (double)(m->moe.top_k + m->moe.shared_experts) *
				      m->moe.expert_ffn_hidden : 0;
}

/* vLLM's profile-run sampler: max_num_seqs (the job's, else the GPU's
 * default) rows of the whole vocabulary. */
static double sampler_profile(const struct adv_job *job)
{
	double seqs = job->mbs_given ? job->mbs
		    : roofline_serve_big_gpu(job) ? SERVE_DEFAULT_SEQS_BIG : SERVE_DEFAULT_SEQS_SMALL;

	return SAMPLER_BYTES * seqs * job->model->vocab;
}

/*
 * The logits and the loss of one micro-batch on the last stage, per GPU:
 * s/c tokens of b sequences over V/t of the vocabulary (Megatron's
 * vocab-parallel loss, torchtitan's loss_parallel).  fp32 training has no
 * 16-bit copy and no upcast: the logits 4 and (PyTorch) log_softmax's 4.
 */
static double logits_train(const struct adv_job *job)
{
	double elems = (double)job->seq / job->lay.cp * job->mbs * job->model->vocab / job->lay.tp;
	bool megatron = job->framework == ADV_FW_MEGATRON;
	double per;

	if (job->precision == ADV_PREC_FP32)
		per = megatron ? BYTES_FP32 : 2 * BYTES_FP32;
	else
		per = megatron ? LOGITS_TRAIN_MEGATRON : LOGITS_TRAIN_TORCH;
	return per * elems;
}

/*
 * Micro-batches of a whole stage that rank r of a pipeline holds in flight
 * at its peak.  1F1B (Narayanan et al. 2021): min(p - r, m).  Interleaved
 * 1F1B, as Megatron-Core schedules it
 * (megatron/core/pipeline_parallel/schedules.py, get_pp_rank_microbatches:
 * 2 (p - r - 1) + (v - 1) g warm-up forwards of one model chunk, g =
 * microbatch_group_size_per_vp_stage, default p, all m v of them when that
 * is not fewer; then one forward before each backward) and
 * torch.distributed.pipelining's ScheduleInterleaved1F1B (the same warm-up,
 * g = microbatches_per_round, p when m is a multiple of p): min(warm-up + 1, m v) chunks of L/v layers, that is
 * min(warm-up + 1, m v) / v stages' worth.  For rank 0 and many
 * micro-batches this is Korthikanti's p (1 + (p-1)/(p v)) (eq. 5); the last
 * rank holds (v-1) p + 1 chunks, not one stage.
 */
static double stage_inflight(const struct adv_job *job, const struct stage *st)
{
	int p = job->lay.pp, v = job->lay.vpp, m = layout_microbatches(job);
	long warm, total;

	if (p <= 1)
		return 1;
	if (v <= 1)
		return m < p - st->index ? m : p - st->index;
	warm = 2L * (p - st->index - 1) + (long)(v - 1) * p;
	total = (long)m * v;
	return (double)(warm + 1 < total ? warm + 1 : total) / v;
}

/*
 * The stage's activations: its in-flight micro-batches (stage_inflight);
 * the last stage adds the logits and the loss of one micro-batch (its
 * backward follows each forward at once).
 */
static double activations_train(const struct adv_job *job, const struct stage *st,
				 const struct stage_params *sp)
{
	const struct adv_layout_out *l = &job->lay;
	double dF, mF, per_mb, one_layer, act;
	/* Only unfused attention stores the scores; selective recompute
	 * drops them there too (it recomputes exactly them). */
	bool scores = job->attention == ADV_ATTN_EAGER && job->recompute == ADV_RECOMPUTE_NONE;

	moe_width(job->model, &dF, &mF);
	per_mb = sp->dense_layers * act_layer(job, dF, scores) +
		 sp->moe_layers * act_layer(job, mF, scores);
	one_layer = act_layer(job, sp->moe_layers ? mF : dF, false);
	if (sac_ops(job)) {
		/* What the policy saves; the backward recomputes one block's
		 * other activations at a time (one_layer). */
		per_mb = sp->dense_layers * act_layer_sac(job, dF) +
			 sp->moe_layers * act_layer_sac(job, mF);
	} else if (job->recompute == ADV_RECOMPUTE_FULL) {
		double s = (double)job->seq / l->cp;
		double in = ACT_FULL_RECOMPUTE_INPUT * s * job->mbs * job->model->hidden /
			    (l->sp ? l->tp : 1);
		per_mb = (sp->dense_layers + sp->moe_layers) * in;
	} else {
		one_layer = 0;
	}
	act = (per_mb * stage_inflight(job, st) + one_layer) * act_width_scale(job);
	if (st->last)
		act += logits_train(job);
	return act;
}

/*
 * Serving: the MLP's working set for one prefill chunk (SERVE_ACT_*, see
 * "Serving activations" above) + the profile run's sampler
 * (sampler_profile).  Serving runs no context parallelism.
 */
static double activations_infer(const struct adv_job *job, const struct stage_params *sp)
{
	const struct adv_model *m = job->model;
	double dF, mF, F, per_tok, fwd, samp;

	moe_width(m, &dF, &mF);
	F = sp->moe_layers ? mF : dF;
	per_tok = SERVE_ACT_RESIDUAL * m->hidden +
		  (m->gated_mlp ? SERVE_ACT_GATED_PER_F : SERVE_ACT_PER_F) * F / job->lay.tp;
	fwd = roofline_prefill_tokens(job) * per_tok * act_width_scale(job);
	/* profile_run runs the dummy forward pass, frees it, then the dummy
	 * sampler: the torch peak is the larger of the two, not their sum
	 * (vLLM 0.19's "GiB for peak activation" follows 15 B x max_num_seqs
	 * x vocabulary across Llama, Qwen, Gemma and gpt-oss: the sampler). */
	samp = sampler_profile(job);
	return fwd > samp ? fwd : samp;
}

/* Bytes of one stage's GPU, split as struct adv_memory reports them. */
struct stage_bytes {
	double w, g, o, act, kv;
};

static double stage_total(const struct stage_bytes *sb)
{
	return sb->w + sb->g + sb->o + sb->act + sb->kv;
}

static void stage_bytes(const struct adv_job *job, const struct mem_state_bytes *b,
			const struct stage *st, struct stage_bytes *sb)
{
	const struct adv_layout_out *l = &job->lay;
	struct stage_params sp;
	double ew, eg, eo;
	int zero = job->task == ADV_TASK_INFER ? 0 : l->zero;

	stage_params(job, st, &sp);
	memory_model_states(sp.dense, l->dp * l->cp, zero, b, &sb->w, &sb->g, &sb->o);
	memory_model_states(sp.expert, layout_expert_dp(job), zero, b, &ew, &eg, &eo);
	sb->w += ew;
	sb->g += eg;
	sb->o += eo;
	if (job->fp8_params && job->task != ADV_TASK_INFER && b->weights > BYTES_FP8) {
		/* The layers' weights in fp8, the embedding and output layer
		 * 16-bit (Megatron --fp8-param-gather). */
		double layers = sp.dense - sp.embedding;

		sb->w -= (b->weights - BYTES_FP8) *
			 (layers / (zero >= 3 ? l->dp * l->cp : 1) +
			  sp.expert / (zero >= 3 ? layout_expert_dp(job) : 1));
	}
	if (fsdp_unsharded_pp(job)) {
		/* The whole stage all-gathered, and its unsharded gradients
		 * accumulated over the micro-batches (fsdp_unsharded_pp). */
		sb->w += (sp.dense + sp.expert) * b->weights;
		sb->g += (sp.dense + sp.expert) * b->grads;
	} else if (zero >= 3) {
		sb->w += sp.layer_max * b->weights;   /* one gathered layer in flight */
	}
	if ((job->task == ADV_TASK_INFER || job->task == ADV_TASK_LORA) &&
	    job->weights != ADV_WEIGHTS_16BIT) {
		/* A quantized checkpoint: the linear layers in the format's
		 * bytes, the embedding and lm_head 16-bit; MXFP4 quantizes
		 * the MoE experts only.  LoRA over frozen 4- or 8-bit weights
		 * (QLoRA, Dettmers et al. 2023: bitsandbytes quantizes the
		 * linear layers, NF4 in blocks of 64 with a scale each) holds
		 * the base the same way. */
		double q = memory_quant_bytes(job->weights);
		double linear = job->weights == ADV_WEIGHTS_MXFP4 ? 0 : sp.dense - sp.embedding;

		sb->w = (sp.dense - linear) * b->weights + (linear + sp.expert) * q;
	}
	if (sp.adapters > 0) {
		sb->w += sp.adapters * BYTES_16BIT;
		sb->g += sp.adapters * BYTES_FP32;
		sb->o += sp.adapters * ADAM_MIXED_BYTES;
	}
	sb->kv = 0;
	if (job->task == ADV_TASK_INFER) {
		sb->act = activations_infer(job, &sp);
		sb->kv = roofline_kv_seq_bytes(job) * (job->mbs > 1 ? job->mbs : 1);
	} else {
		sb->act = activations_train(job, st, &sp);
	}
	if (job->no_act)
		sb->act = 0;
	/* The optimizer step's fp32 copy of 16-bit gradients (top comment):
	 * it comes after the activations are freed, so the larger of the two
	 * is the transient term. */
	if (job->task == ADV_TASK_TRAIN && b->grads == BYTES_16BIT && job->optim_bytes == 0 &&
	    (job->framework == ADV_FW_MEGATRON || job->framework == ADV_FW_DEEPSPEED)) {
		double copy = BYTES_FP32 * (sp.dense / (zero >= 1 ? l->dp * l->cp : 1) +
					    sp.expert / (zero >= 1 ? layout_expert_dp(job) : 1));

		if (copy > sb->act)
			sb->act = copy;
	}
}

/* One stage (stage >= 0) or the most loaded one (stage < 0). */
static void estimate_stage(const struct adv_job *job, const struct adv_policy *pol, int stage,
			   struct adv_memory *out)
{
	struct mem_state_bytes b;
	struct stage st, best_st;
	struct stage_bytes best, cur;
	int i, p = job->lay.pp > 0 ? job->lay.pp : 1;

	memset(out, 0, sizeof(*out));
	out->stages = p;
	if (!job->model)
		return;
	state_bytes(job, pol, &b);
	/* The most loaded stage: every stage is a few dozen operations.  The
	 * first of equals is kept, so the stage reported is the lowest PP
	 * rank that reaches the peak. */
	memset(&best, 0, sizeof(best));
	for (i = 0; i < p; i++) {
		if (stage >= 0 && i != (stage < p ? stage : p - 1))
			continue;
		stage_at(job, i, &st);
		stage_bytes(job, &b, &st, &cur);
		if (stage >= 0 || i == 0 || stage_total(&cur) > stage_total(&best)) {
			best = cur;
			best_st = st;
			out->peak_stage = i;
		}
	}
	if (job->task != ADV_TASK_INFER && p > 1) {
		out->peak_inflight = stage_inflight(job, &best_st);
		out->peak_logits = best_st.last;
	}
	out->weights_gib = best.w / GIB;
	out->grads_gib = best.g / GIB;
	out->optimizer_gib = best.o / GIB;
	out->activations_gib = best.act / GIB;
	out->kv_cache_gib = best.kv / GIB;
	out->overhead_gib = pol->overhead_gib;
	/* Training: the caching allocator reserves more than the tensors
	 * allocate (policy allocator_margin, from published report_memory
	 * pairs: policy.c).  It is reported, the figure torch logs as
	 * max_memory_reserved, and judged by nothing: near the GPU's capacity
	 * the allocator frees its cache and retries before it fails (those
	 * pairs' near-full runs reserve about 1% over allocated), so the reject
	 * and the headroom warning both judge the allocated peak.  A server's
	 * pool is sized as a share of the whole GPU, the allocator's slack
	 * inside it. */
	if (job->task != ADV_TASK_INFER)
		out->allocator_gib = stage_total(&best) / GIB * pol->allocator_margin;
	out->per_gpu_gib = out->weights_gib + out->grads_gib + out->optimizer_gib +
			   out->activations_gib + out->kv_cache_gib + out->overhead_gib;
	if (job->gpu) {
		out->capacity_gib = job->gpu->memory_gib;
		out->usable_gib = job->gpu->memory_gib - pol->reserve_gib;
	}
	if (job->task == ADV_TASK_INFER && job->gpu) {
		/* The KV cache holds the sequences that fit in the engine's
		 * pool, at least one. */
		double fixed = out->per_gpu_gib - out->kv_cache_gib;
		double fit = memory_kv_seqs(job, out);
		double want = job->mbs > 1 ? job->mbs : 1;
		double n = fit < want ? (fit >= 1 ? fit : 1) : want;

		out->kv_cache_gib = n * roofline_kv_seq_bytes(job) / GIB;
		out->per_gpu_gib = fixed + out->kv_cache_gib;
	}
}

void memory_estimate(const struct adv_job *job, const struct adv_policy *pol,
		     struct adv_memory *out)
{
	estimate_stage(job, pol, -1, out);
}

void memory_estimate_stage(const struct adv_job *job, const struct adv_policy *pol, int stage,
			   struct adv_memory *out)
{
	estimate_stage(job, pol, stage < 0 ? 0 : stage, out);
}

double memory_serve_share(const struct adv_job *job)
{
	return (job->mem_share > 0 ? job->mem_share : SERVE_DEFAULT_SHARE) / 1000.0;
}

double memory_kv_room_gib(const struct adv_job *job, const struct adv_memory *mem)
{
	double pool, used;

	if (!job->gpu)
		return 0;
	pool = memory_serve_share(job) * job->gpu->memory_gib;
	used = mem->weights_gib + SERVE_NON_TORCH_GIB + (job->lay.tp > 1 ? SERVE_NCCL_GIB : 0);
	if (job->lay.tp > 1 && !strcmp(job->gpu->vendor, "nvidia") &&
	    job->gpu->interconnect_gbs >= NVLS_MIN_GBS)
		used += SERVE_NVLS_GIB;
	if (!job->share_static)
		used += mem->activations_gib;
	return pool > used ? pool - used : 0;
}

double memory_kv_tokens(const struct adv_job *job, const struct adv_memory *mem)
{
	double per_tok;

	if (!job->model)
		return 0;
	/* Per token of a full request: with sliding-window layers, vLLM's
	 * concurrency x max_model_len (roofline.c). */
	per_tok = job->seq > 0 ? roofline_kv_seq_bytes(job) / job->seq
			       : roofline_kv_bytes_per_token(job->model, roofline_kv_precision(job),
							     job->lay.tp, job->lay.pp);
	return per_tok > 0 ? floor(memory_kv_room_gib(job, mem) * GIB / per_tok) : 0;
}

double memory_kv_seqs(const struct adv_job *job, const struct adv_memory *mem)
{
	return job->seq > 0 ? floor(memory_kv_tokens(job, mem) / job->seq) : 0;
}

/* ---- MEM_OVER_CAPACITY fixes ----------------------------------------------- */

static int max_zero(const struct adv_job *job)
{
	if (job->framework == ADV_FW_DEEPSPEED && job->lay.pp > 1)
		return 1;
	return 3;
}

static double mem_of(const struct adv_job *job, const struct adv_policy *pol)
{
	struct adv_memory m;

	memory_estimate(job, pol, &m);
	return m.per_gpu_gib;
}

/* A changed micro-batch must not break more hard rules than the user's. */
static bool still_valid(const struct adv_job *cand, const struct adv_policy *pol, int base_bad)
{
	return layout_check(cand, NULL, pol, NULL, NULL) <= base_bad;
}

/*
 * A changed TP or PP is offered only when it removes rules the user's
 * layout breaks, or breaks none: "--llm-layout=tp6,pp2" for a TP=3 job on a
 * 64-head model would fit in memory and still be rejected for the heads.
 */
static bool layout_change_ok(const struct adv_job *cand, const struct adv_policy *pol,
			     int base_bad)
{
	int n = layout_check(cand, NULL, pol, NULL, NULL);

	return n == 0 || n < base_bad;
}

static void set_pp(struct adv_job *c, const struct adv_job *job, int pp)
{
	c->lay.pp = pp;
	c->lay.dp = job->lay.gpus / (c->lay.tp * pp * c->lay.cp);
	if (c->lay.dp < 1)
		c->lay.dp = 1;
	if (c->lay.vpp > 1 && pp < 2)
		c->lay.vpp = 1;
	if (!c->gbs_given)
		c->gbs = layout_default_gbs(c->mbs, c->lay.dp, pp);
}

static void set_tp(struct adv_job *c, const struct adv_job *job, int tp)
{
	c->lay.tp = tp;
	c->lay.sp = true;
	if (!c->etp_given)
		c->lay.etp = layout_default_etp(c);
	set_pp(c, job, c->lay.pp);
}

static int add_fix(char *fix, size_t len, size_t *n, int count, const char *opt, double gib)
{
	if (count >= 1)
		*n += adv_snprintf(fix + *n, len - *n, "; ");
	*n += adv_snprintf(fix + *n, len - *n, "%s (%.1f GiB per GPU)", opt, gib);
	return count + 1;
}

static void layout_opt(const struct adv_job *c, const struct adv_layout *given,
		       const struct adv_job *job, char *buf, size_t len)
{
	struct adv_layout over;
	char lay[96];

	layout_unset(&over);
	if (c->lay.tp != job->lay.tp)
		over.tp = c->lay.tp;
	if (c->lay.pp != job->lay.pp)
		over.pp = c->lay.pp;
	if (c->lay.vpp != job->lay.vpp)
		over.vpp = c->lay.vpp;
	if (c->lay.tp != job->lay.tp && job->sp_given && !job->lay.sp)
		over.sp = 1;
	layout_format_option(given, job, &over, lay, sizeof(lay));
	adv_snprintf(buf, len, "--llm-layout=%s", lay);
}

/* The smallest PP above the job's that fits, 0 when none. */
static int fit_pp(const struct adv_job *job, const struct adv_policy *pol, double usable,
		  int bad, struct adv_job *c, double *gib)
{
	int pp;

	for (pp = job->lay.pp + 1; pp <= job->model->layers; pp++) {
		if (job->lay.gpus % (job->lay.tp * pp * job->lay.cp))
			continue;
		set_pp(c, job, pp);
		if (!layout_change_ok(c, pol, bad))
			continue;
		*gib = mem_of(c, pol);
		if (*gib <= usable)
			return pp;
	}
	return 0;
}

static int fit_tp(const struct adv_job *job, const struct adv_policy *pol, double usable,
		  int bad, struct adv_job *c, double *gib)
{
	int tp, limit = job->lay.gpus_per_node > 0 ? job->lay.gpus_per_node : job->lay.gpus;

	for (tp = job->lay.tp + 1; tp <= limit; tp++) {
		if (job->lay.gpus % (tp * job->lay.pp * job->lay.cp))
			continue;
		set_tp(c, job, tp);
		if (!layout_change_ok(c, pol, bad))
			continue;
		*gib = mem_of(c, pol);
		if (*gib <= usable)
			return tp;
	}
	return 0;
}

static int single_fixes(const struct adv_job *job, const struct adv_policy *pol,
			const struct adv_layout *given, double usable, int bad,
			char *fix, size_t len)
{
	struct adv_job c;
	char opt[128];
	size_t n = 0;
	int count = 0, v;
	double gib;

	fix[0] = '\0';
	if (job->task != ADV_TASK_INFER) {
		for (v = job->lay.zero + 1; v <= max_zero(job); v++) {
			c = *job;
			c.lay.zero = v;
			if ((gib = mem_of(&c, pol)) <= usable) {
				adv_snprintf(opt, sizeof(opt), "--llm-zero=%d", v);
				count = add_fix(fix, len, &n, count, opt, gib);
				break;
			}
		}
		for (v = job->recompute + 1; v <= ADV_RECOMPUTE_FULL; v++) {
			c = *job;
			c.recompute = v;
			if ((gib = mem_of(&c, pol)) <= usable) {
				adv_snprintf(opt, sizeof(opt), "--llm-recompute=%s",
					     engine_recompute_name(v));
				count = add_fix(fix, len, &n, count, opt, gib);
				break;
			}
		}
	}
	for (v = job->mbs / 2; v >= 1 && job->mbs > 1; v /= 2) {
		c = *job;
		c.mbs = v;
		if (!c.gbs_given)
			c.gbs = layout_default_gbs(v, c.lay.dp, c.lay.pp);
		if (!still_valid(&c, pol, bad))
			continue;
		if ((gib = mem_of(&c, pol)) <= usable) {
			adv_snprintf(opt, sizeof(opt), "--llm-mbs=%d", v);
			count = add_fix(fix, len, &n, count, opt, gib);
			break;
		}
	}
	c = *job;
	if (fit_pp(job, pol, usable, bad, &c, &gib)) {
		layout_opt(&c, given, job, opt, sizeof(opt));
		count = add_fix(fix, len, &n, count, opt, gib);
	}
	c = *job;
	if (fit_tp(job, pol, usable, bad, &c, &gib)) {
		layout_opt(&c, given, job, opt, sizeof(opt));
		count = add_fix(fix, len, &n, count, opt, gib);
	}
	return count;
}

/* The options that differ between the job and a candidate, as a fix. */
static void describe(const struct adv_job *c, const struct adv_job *job,
		     const struct adv_layout *given, double gib, char *fix, size_t len)
{
	size_t n = 0;

	if (c->lay.zero != job->lay.zero)
		n += adv_snprintf(fix + n, len - n, "--llm-zero=%d ", c->lay.zero);
	if (c->recompute != job->recompute)
		n += adv_snprintf(fix + n, len - n, "--llm-recompute=%s ",
				  engine_recompute_name(c->recompute));
	if (c->mbs != job->mbs)
		n += adv_snprintf(fix + n, len - n, "--llm-mbs=%d ", c->mbs);
	if (c->lay.tp != job->lay.tp || c->lay.pp != job->lay.pp || c->lay.vpp != job->lay.vpp) {
		layout_opt(c, given, job, fix + n, len - n);
		n = strlen(fix);
		n += adv_snprintf(fix + n, len - n, " ");
	}
	adv_snprintf(fix + n, len - n, "(%.1f GiB per GPU)", gib);
}

/* No single change fits: the most memory-saving settings, then more TP and PP. */
static bool combined_fix(const struct adv_job *job, const struct adv_policy *pol,
			 const struct adv_layout *given, double usable, int bad,
			 char *fix, size_t len)
{
	struct adv_job c = *job, d;
	double gib;
	int tp, limit = job->lay.gpus_per_node > 0 ? job->lay.gpus_per_node : job->lay.tp;

	if (job->task != ADV_TASK_INFER) {
		c.lay.zero = max_zero(job);
		c.recompute = ADV_RECOMPUTE_FULL;
	}
	c.mbs = 1;
	if (!c.gbs_given)
		c.gbs = layout_default_gbs(1, c.lay.dp, c.lay.pp);
	for (tp = job->lay.tp; tp <= (limit > job->lay.tp ? limit : job->lay.tp); tp++) {
		if (job->lay.gpus % (tp * job->lay.pp * job->lay.cp))
			continue;
		d = c;
		if (tp != job->lay.tp)
			set_tp(&d, job, tp);
		if (tp != job->lay.tp ? !layout_change_ok(&d, pol, bad) : !still_valid(&d, pol, bad))
			continue;
		gib = mem_of(&d, pol);
		if (gib > usable) {
			struct adv_job e = d;
			if (!fit_pp(&d, pol, usable, bad, &e, &gib))
				continue;
			d = e;
		}
		describe(&d, job, given, gib, fix, len);
		return true;
	}
	return false;
}

/* How many GPUs the model states need with everything sharded. */
static long gpus_needed(const struct adv_job *job, const struct adv_policy *pol, double usable)
{
	struct mem_state_bytes b;
	double per_param, total;

	state_bytes(job, pol, &b);
	per_param = b.weights + b.grads + b.optimizer;
	total = job->params.total * per_param / GIB;
	if (usable <= pol->overhead_gib)
		return 0;
	return (long)ceil(total / (usable - pol->overhead_gib));
}

void memory_peak_why(const struct adv_memory *m, char *buf, size_t len)
{
	if (m->peak_logits)
		adv_snprintf(buf, len, ", the last: the logits and loss, %.3g %s in flight",
			     m->peak_inflight, m->peak_inflight == 1 ? "micro-batch" : "micro-batches");
	else
		adv_snprintf(buf, len, ", %.3g %s of its layers in flight", m->peak_inflight,
			     m->peak_inflight == 1 ? "micro-batch" : "micro-batches");
}

void memory_terms(const struct adv_memory *m, char *buf, size_t len)
{
	const struct {
		const char *name;
		double v;
	} t[] = {
		{ "weights", m->weights_gib }, { "grads", m->grads_gib },
		{ "optimizer", m->optimizer_gib }, { "activations", m->activations_gib },
		{ "KV cache", m->kv_cache_gib }, { "overhead", m->overhead_gib },
	};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ADV_ARRAY_SIZE(t); i++)
		if (t[i].v >= 0.05 && n + 1 < len)
			n += adv_snprintf(buf + n, len - n, "%s%s %.1f", n ? ", " : "", t[i].name,
					  t[i].v);
	if (m->stages > 1 && n + 1 < len)
		n += adv_snprintf(buf + n, len - n, "; pipeline stage %d of %d", m->peak_stage,
				  m->stages);
	if (m->stages > 1 && m->peak_inflight > 0 && n + 1 < len)
		memory_peak_why(m, buf + n, len - n);
}

bool memory_check(const struct adv_job *job, const struct adv_policy *pol,
		  const struct adv_layout *given, const struct adv_memory *mem,
		  struct adv_result *res)
{
	char fix[ADV_MSG_MAX], terms[ADV_MSG_MAX / 2];
	int bad;
	long need;

	if (!job->model || !job->gpu)
		return true;
	if (mem->per_gpu_gib <= mem->usable_gib) {
		/* A server's KV cache fills the memory by design (paged, so
		 * nothing fragments): the headroom is judged with one
		 * sequence, and whether the others fit is KV_CAPACITY_LOW's
		 * question (engine.c). */
		double judged = job->task != ADV_TASK_INFER ? mem->per_gpu_gib
			: mem->per_gpu_gib - mem->kv_cache_gib + roofline_kv_seq_bytes(job) / GIB;

		if (!res || judged <= mem->usable_gib * (1.0 - pol->warn_headroom))
			return true;
		/* The allocated figure (ADVISOR_MEM_GIB) is judged; the reserved
		 * one is named beside it, as torch would log it with room. */
		if (job->task != ADV_TASK_INFER)
			engine_add_finding(res, ADV_CODE_MEM_LOW_HEADROOM, NULL,
					   "about %.1f GiB per GPU allocated (%.1f GiB reserved with the caching allocator's usual margin, which it gives back near the limit) leaves less than %.0f%% of the %.1f GiB usable on %s",
					   mem->per_gpu_gib, mem->per_gpu_gib + mem->allocator_gib,
					   pol->warn_headroom * 100, mem->usable_gib, job->gpu->name);
		else
			engine_add_finding(res, ADV_CODE_MEM_LOW_HEADROOM, NULL,
					   "about %.1f GiB per GPU with one sequence's KV cache leaves less than %.0f%% of the %.1f GiB usable on %s",
					   judged, pol->warn_headroom * 100, mem->usable_gib,
					   job->gpu->name);
		return true;
	}
	if (!res)
		return false;
	bad = layout_check(job, NULL, pol, NULL, NULL);
	if (!single_fixes(job, pol, given, mem->usable_gib, bad, fix, sizeof(fix)) &&
	    !combined_fix(job, pol, given, mem->usable_gib, bad, fix, sizeof(fix))) {
		int gpn = job->lay.gpus_per_node;

		need = gpus_needed(job, pol, mem->usable_gib);
		/* A job of whole nodes grows by whole nodes: the fix it can paste
		 * is a node count (-N), with the GPUs that makes. */
		if (need > job->lay.gpus && gpn > 0 && gpn == job->gpu->gpus_per_node &&
		    job->lay.gpus == job->lay.nodes * gpn) {
			long nodes = (need + gpn - 1) / gpn;

			adv_snprintf(fix, sizeof(fix), "request at least %ld %s (%ld GPUs)", nodes,
				     adv_plural(nodes, "node", "nodes"), nodes * gpn);
		} else if (need > job->lay.gpus)
			adv_snprintf(fix, sizeof(fix), "request at least %ld %s", need,
				     adv_plural(need, "GPU", "GPUs"));
		else
			adv_snprintf(fix, sizeof(fix), "use a GPU with more memory");
	}
	memory_terms(mem, terms, sizeof(terms));
	engine_add_finding(res, ADV_CODE_MEM_OVER_CAPACITY, fix,
			   "about %.1f GiB per GPU (%s) exceeds the %.1f GiB usable on %s",
			   mem->per_gpu_gib, terms, mem->usable_gib, job->gpu->name);
	return false;
}
