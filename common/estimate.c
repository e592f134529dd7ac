/*
 * estimate.c - how long a step takes, how many tokens a second, how many
 * days, dollars and megawatt-hours (shared/notes/model-math.md, "Compute,
 * time, cost").
 *
 * The model is deliberately simple and every term is visible:
 *
 *   FLOPs per token  = 6 * Psi_active + 12 * L * h * s   (Kaplan et al. 2020;
 *                      attention term as in PaLM, Chowdhery et al. 2022,
 *                      appendix B).  Psi_active counts the output layer but not
 *                      the input embedding, which is a lookup.
 *   compute          = FLOPs per step * r / (GPUs * peak * E)
 *                      with peak from the catalog for the precision, r = 4/3
 *                      for full recompute (one more forward) and E the
 *                      kernel efficiency below.
 *   E                = mfu * (1 + TUNED_RUN_OVERHEAD).  The policy's mfu is
 *                      model FLOPs utilisation as papers report it (PaLM's
 *                      definition: end-to-end, bubble and communication
 *                      included): Llama 3 405B 38-43% (Llama 3 paper, table
 *                      4), Megatron-LM 175B 44% of peak (Narayanan et al.
 *                      2021, table 2; 141 TFLOP/s per A100 counting the
 *                      recompute).  Those well-tuned runs still lose about
 *                      15% of the step to their bubble (about 10%: m >= 8p or
 *                      interleaving) and exposed communication (about 5%), so
 *                      applying mfu to the compute alone and then adding the
 *                      bubble and communication counted those losses twice.
 *                      A job with a typical bubble now shows about the
 *                      policy's MFU; a worse layout shows less.  (Llama 3
 *                      405B's 15.6T tokens at 41% MFU on 16,384 H100 take
 *                      about 70 days; the paper's "54 days" is the span of
 *                      its reliability snapshot, not the whole run.)
 *   bubble           = compute * (p - 1) / (m * v)   (Narayanan et al. 2021)
 *   TP               = L/p * m * 4 all-reduces of s/c * b * h * 2 bytes per
 *                      micro-batch (6 with full recompute; Shoeybi et al. 2019,
 *                      section 3), ring cost 2 (t-1)/t * bytes / bandwidth.
 *   CP               = per layer, (c - 1) exchanges of the local K and V
 *                      (ring attention), forward and twice backward.
 *   EP               = per MoE layer 4 all-to-alls of s/c * b * h * 2 * top_k
 *                      bytes * (e - 1)/e (GShard dispatch and combine).
 *   DP               = ring all-reduce of the stage's gradients, 2 (n-1)/n *
 *                      grad bytes / bandwidth; ZeRO-3 adds a weight
 *                      all-gather in forward and backward (1.5x, ZeRO paper
 *                      section 7).  Counted as exposed although frameworks
 *                      overlap part of it with the last backward pass: the
 *                      exposed communication of a tuned run is the part of
 *                      TUNED_RUN_OVERHEAD this term stands for, and it is
 *                      what expert parallelism saves (experts reduce over
 *                      the smaller expert-DP group).
 *   bandwidth        = the catalog's interconnect_gbs when the group fits in
 *                      one node, else network_gbs.
 *   step             = compute + bubble + TP + CP + EP + DP (PP
 *                      point-to-point traffic is small and ignored).
 *
 * Monotonicity: with a fixed global batch, doubling the data-parallel size
 * halves the compute but not the gradient all-reduce, so a job whose
 * all-reduce costs more than the compute it saves would look slower on more
 * GPUs.  Such a job can always keep the same global batch on half of the
 * replicas (twice the gradient accumulation), so the reported step time is
 * the best over DP, DP/2, DP/4, ... of the same TP/PP/CP layout: more GPUs
 * never show slower.
 *
 * Serving (task infer): decoding is memory-bound, so a pipeline produces
 * mbs tokens per (weights + KV cache bytes per GPU) / HBM bandwidth.
 *
 * Days = tokens / tokens per second; GPU-hours = GPUs * hours; cost =
 * GPU-hours * catalog price; energy = GPU-hours * TDP * PUE.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "estimate.h"
#include "memory.h"
#include "util.h"

#define TRAIN_FLOPS_PER_PARAM 6.0
#define ATTN_FLOPS_PER_LAYER_H_S 12.0
#define INFER_FLOPS_PER_PARAM 2.0
#define FULL_RECOMPUTE_FACTOR (8.0 / 6.0)
#define TP_ALLREDUCES_PER_LAYER 4.0
#define TP_ALLREDUCES_FULL_RECOMPUTE 6.0
#define EP_ALL_TO_ALLS_PER_LAYER 4.0
#define CP_PASSES_PER_LAYER 3.0
#define ZERO3_COMM_FACTOR 1.5
#define ACT_BYTES 2.0
#define DEFAULT_MFU 0.40
/* Share of a well-tuned run's step lost to its bubble and exposed
 * communication (see above): the policy's end-to-end MFU becomes the
 * kernel efficiency mfu * (1 + this). */
#define TUNED_RUN_OVERHEAD 0.15
#define DEFAULT_PUE 1.2
#define DEFAULT_NETWORK_GBS 50.0
#define GB 1e9
#define TFLOPS 1e12

double estimate_peak_flops(const struct adv_gpu *gpu, int precision)
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

static double flops_params(const struct adv_job *job)
{
	const struct adv_params *p = &job->params;

	/* The logits matmul runs even when the output layer is tied. */
	return p->active - p->embedding + (job->model->tied_embeddings ? p->embedding : 0);
}

double estimate_flops_per_token(const struct adv_job *job)
{
	const struct adv_model *m = job->model;

	return TRAIN_FLOPS_PER_PARAM * flops_params(job) +
	       ATTN_FLOPS_PER_LAYER_H_S * m->layers * (double)m->hidden * job->seq;
}

static double ring(double n)
{
	return n > 1 ? 2.0 * (n - 1) / n : 0;
}

static double link_gbs(const struct adv_job *job, long group_span)
{
	const struct adv_gpu *g = job->gpu;
	double net = g->network_gbs > 0 ? g->network_gbs : DEFAULT_NETWORK_GBS;

	if (job->lay.gpus_per_node > 0 && group_span <= job->lay.gpus_per_node)
		return g->interconnect_gbs > 0 ? g->interconnect_gbs : net;
	return net;
}

static double mfu_of(const struct adv_policy *pol)
{
	return pol->mfu > 0 ? pol->mfu : DEFAULT_MFU;
}

/* Efficiency of the compute itself (never above peak). */
static double kernel_efficiency(const struct adv_policy *pol)
{
	return fmin(1.0, mfu_of(pol) * (1.0 + TUNED_RUN_OVERHEAD));
}

/*
 * The step time as a function of the data-parallel size d with everything
 * else fixed: compute, TP, CP and EP traffic scale with the micro-batches
 * per replica, m = GBS / (b d), so they are per_d / d; the bubble
 * compute * (p-1) / (m v) is then independent of d; the gradient all-reduce
 * is ring(d c) * grad bytes / bandwidth(d).
 */
struct step_terms {
	double per_d;       /* seconds * d: compute, TP, CP, EP */
	double bubble;      /* seconds */
	double grad_bytes;  /* all-reduced per GPU per step */
};

static void train_terms(const struct adv_job *job, const struct adv_policy *pol,
			struct step_terms *st)
{
	const struct adv_layout_out *l = &job->lay;
	const struct adv_model *m = job->model;
	double t = l->tp, c = l->cp, e = l->ep, s = (double)job->seq / l->cp, b = job->mbs;
	double h = m->hidden, Ls = layout_stage_layers(job);
	double mb_d = (double)job->gbs / b;          /* micro-batches per step times d */
	double r = job->recompute == ADV_RECOMPUTE_FULL ? FULL_RECOMPUTE_FACTOR : 1.0;
	double compute_d, comm_d = 0, n_ar, moe_frac, ex, gb;

	compute_d = estimate_flops_per_token(job) * (double)job->gbs * job->seq * r /
		    (t * l->pp * c * estimate_peak_flops(job->gpu, job->precision) *
		     kernel_efficiency(pol));
	st->bubble = l->pp > 1 ? compute_d * (l->pp - 1) / (mb_d * l->vpp) : 0;
	if (l->tp > 1) {
		n_ar = job->recompute == ADV_RECOMPUTE_FULL ? TP_ALLREDUCES_FULL_RECOMPUTE
							    : TP_ALLREDUCES_PER_LAYER;
		comm_d += Ls * mb_d * n_ar * ring(t) * s * b * h * ACT_BYTES /
			  (link_gbs(job, l->tp) * GB);
	}
	if (l->cp > 1) {
		double kv = 2.0 * s * b * m->kv_heads * m->head_dim * ACT_BYTES / t;
		comm_d += Ls * mb_d * CP_PASSES_PER_LAYER * (c - 1) * kv /
			  (link_gbs(job, (long)l->tp * l->cp) * GB);
	}
	moe_frac = m->has_moe ? (double)(m->layers - m->moe.dense_layers) / m->layers : 0;
	if (l->ep > 1 && m->has_moe)
		comm_d += Ls * moe_frac * mb_d * EP_ALL_TO_ALLS_PER_LAYER * s * b * h * ACT_BYTES *
			  m->moe.top_k * (e - 1) / e / t /
			  (link_gbs(job, (long)l->tp * l->ep) * GB);
	st->per_d = compute_d + comm_d;
	/* Gradient bytes of one GPU: its share of the stage's parameters. */
	ex = job->params.expert_params;
	gb = job->precision == ADV_PREC_FP32 ? 4.0 : pol->grad_bytes > 0 ? pol->grad_bytes : 4.0;
	st->grad_bytes = ((job->params.total - ex) / t + ex / ((double)l->ep * l->etp)) / l->pp *
			 gb * (l->zero >= 3 ? ZERO3_COMM_FACTOR : 1.0);
}

static double train_step(const struct adv_job *job, const struct step_terms *st, int dp)
{
	const struct adv_layout_out *l = &job->lay;
	double n = (double)dp * l->cp;
	double dpc = n > 1 ? ring(n) * st->grad_bytes /
				     (link_gbs(job, (long)l->tp * l->cp * dp) * GB) : 0;

	return st->per_d / dp + st->bubble + dpc;
}

static void estimate_train(const struct adv_job *job, const struct adv_policy *pol,
			   struct adv_estimate *out)
{
	struct step_terms st;
	int dp = job->lay.dp;
	double best;

	train_terms(job, pol, &st);
	best = train_step(job, &st, dp);
	while (dp % 2 == 0 && dp > 1) {
		dp /= 2;
		best = fmin(best, train_step(job, &st, dp));
	}
	out->step_time_s = best;
	out->tokens_per_s = (double)job->gbs * job->seq / best;
	out->mfu = estimate_flops_per_token(job) * out->tokens_per_s /
		   (job->lay.gpus * estimate_peak_flops(job->gpu, job->precision));
	out->bubble = layout_bubble(job);
}

static void estimate_infer(const struct adv_job *job, const struct adv_policy *pol,
			   struct adv_estimate *out)
{
	struct adv_memory mem;
	double bytes, per_token, bw = job->gpu->memory_bandwidth_tbs * TFLOPS;

	memory_estimate(job, pol, &mem);
	bytes = (mem.weights_gib + mem.kv_cache_gib) * GIB;
	/* Each stage reads its weights once per decoding step of the batch. */
	per_token = bw > 0 ? bytes / bw : 0;
	out->step_time_s = per_token * job->lay.pp;
	out->tokens_per_s = per_token > 0 ? (double)job->mbs * job->lay.dp / per_token : 0;
	out->mfu = INFER_FLOPS_PER_PARAM * flops_params(job) * out->tokens_per_s /
		   (job->lay.gpus * estimate_peak_flops(job->gpu, job->precision));
	out->bubble = 0;
}

void estimate_step(const struct adv_job *job, const struct adv_policy *pol, double tokens,
		   struct adv_estimate *out)
{
	double hours, gpu_hours, pue = pol->pue > 0 ? pol->pue : DEFAULT_PUE;

	memset(out, 0, sizeof(*out));
	if (!job->model)
		return;
	out->params_b = job->params.total / 1e9;
	out->active_params_b = job->params.active / 1e9;
	if (!job->gpu || job->lay.gpus <= 0)
		return;
	if (job->task == ADV_TASK_INFER)
		estimate_infer(job, pol, out);
	else
		estimate_train(job, pol, out);
	if (tokens <= 0 || out->tokens_per_s <= 0)
		return;
	hours = tokens / out->tokens_per_s / 3600.0;
	gpu_hours = hours * job->lay.gpus;
	out->train_days = hours / 24.0;
	out->cost_usd = gpu_hours * job->gpu->price_per_hour_usd;
	out->energy_mwh = gpu_hours * job->gpu->tdp_w * pue / 1e6;
}
