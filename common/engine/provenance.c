/*
 * provenance.c - where each value a finding rests on came from, and the
 * rule of issue 18 that follows from it: never reject on a guess.
 *
 * Every workload value the checks use is stated by the job (the job reader
 * marks it, jobread_apply), given as an --llm-* option, a framework's
 * documented default, the site policy's, advisor's documented default that
 * describes the job as asked (no tensor parallelism when none is named), or
 * assumed: the engine's own guess where nothing says (sequence
 * min(max_seq, 4096), micro-batch 1, recompute selective, bf16, ZeRO 0; the
 * defaults of engine.c), or a value the job states in a form the reader
 * cannot know before it runs (SCRIPT_UNKNOWN).
 *
 * A finding records the values it rests on (uses, by code: the rule each
 * check of layout.c, memory.c, serving.c and checkpoint.c applies).  One
 * that would reject and rests on an assumed value becomes a warning that
 * names the assumption and the option that states it.  Memory is judged
 * once more first, with every assumed value at the least memory it could
 * take (micro-batch 1, full recompute, ZeRO-3, the shortest sequence, fp8
 * weights when serving): when even that does not fit, the reject rests on
 * what the job states and stays, and its uses drop the values shown not to
 * matter.  The planner never sees this (engine_evaluate): a plan must pass
 * on its own values.
 */
#include "config.h"

#include <string.h>

#include "evaluate.h"
#include "findings.h"
#include "memory.h"
#include "names.h"
#include "provenance.h"
#include "util.h"

static const char *const field_names[ADV_F_COUNT] = {
	[ADV_F_MODEL] = "model", [ADV_F_TP] = "tp", [ADV_F_PP] = "pp", [ADV_F_CP] = "cp",
	[ADV_F_EP] = "ep", [ADV_F_ETP] = "etp", [ADV_F_VPP] = "vpp", [ADV_F_DP] = "dp",
	[ADV_F_SP] = "sp", [ADV_F_ZERO] = "zero", [ADV_F_PRECISION] = "precision",
	[ADV_F_SEQ] = "seq", [ADV_F_MBS] = "mbs", [ADV_F_GBS] = "gbs",
	[ADV_F_RECOMPUTE] = "recompute", [ADV_F_TASK] = "task", [ADV_F_FRAMEWORK] = "framework",
	[ADV_F_ATTENTION] = "attention", [ADV_F_CKPT] = "ckpt", [ADV_F_WORLD] = "world",
	[ADV_F_GRAD_DTYPE] = "grad_dtype",
};

static const char *const origin_names[ADV_FROM_COUNT] = {
	[ADV_FROM_UNSET] = "", [ADV_FROM_JOB] = "job", [ADV_FROM_OPTION] = "option",
	[ADV_FROM_FRAMEWORK] = "framework default", [ADV_FROM_POLICY] = "policy default",
	[ADV_FROM_DEFAULT] = "default", [ADV_FROM_ASSUMED] = "assumed",
};
/* Designated rows: a value left out is a NULL row, which test_tables
 * finds; the sizes are the enums' (issue 27). */
_Static_assert(ADV_ARRAY_SIZE(field_names) == ADV_F_COUNT, "a name for each field");
_Static_assert(ADV_ARRAY_SIZE(origin_names) == ADV_FROM_COUNT, "a name for each origin");

const char *provenance_field_name(enum adv_field f)
{
	return (unsigned)f < ADV_F_COUNT ? field_names[f] : "";
}

const char *provenance_origin_name(enum adv_origin o)
{
	return (unsigned)o < ADV_FROM_COUNT ? origin_names[o] : "";
}

/* The --llm-* option that states a field ("layout" for the parallel sizes). */
const char *provenance_option(enum adv_field f)
{
	switch (f) {
	case ADV_F_TP: case ADV_F_PP: case ADV_F_CP: case ADV_F_EP: case ADV_F_ETP:
	case ADV_F_VPP: case ADV_F_DP: case ADV_F_SP:
		return "layout";
	case ADV_F_WORLD:
		return "";
	case ADV_F_GRAD_DTYPE:
		return "grad-dtype";
	default:
		return provenance_field_name(f);
	}
}

/* Whether the request sets the field. */
bool provenance_is_set(const struct adv_workload *wl, enum adv_field f)
{
	switch (f) {
	case ADV_F_MODEL: return wl->model[0] || wl->has_arch;
	case ADV_F_TP: return wl->layout.tp != ADV_UNSET;
	case ADV_F_PP: return wl->layout.pp != ADV_UNSET;
	case ADV_F_CP: return wl->layout.cp != ADV_UNSET;
	case ADV_F_EP: return wl->layout.ep != ADV_UNSET;
	case ADV_F_ETP: return wl->layout.etp != ADV_UNSET;
	case ADV_F_VPP: return wl->layout.vpp != ADV_UNSET;
	case ADV_F_DP: return wl->layout.dp != ADV_UNSET;
	case ADV_F_SP: return wl->layout.sp != ADV_UNSET;
	case ADV_F_ZERO: return wl->zero != ADV_UNSET;
	case ADV_F_PRECISION: return wl->precision != ADV_UNSET;
	case ADV_F_SEQ: return wl->seq != ADV_UNSET;
	case ADV_F_MBS: return wl->mbs != ADV_UNSET;
	case ADV_F_GBS: return wl->gbs != ADV_UNSET;
	case ADV_F_RECOMPUTE: return wl->recompute != ADV_UNSET;
	case ADV_F_TASK: return wl->task != ADV_UNSET;
	case ADV_F_FRAMEWORK: return wl->framework != ADV_UNSET;
	case ADV_F_ATTENTION: return wl->attention != ADV_UNSET;
	case ADV_F_CKPT: return wl->ckpt.given;
	case ADV_F_WORLD: return wl->world != ADV_UNSET;
	case ADV_F_GRAD_DTYPE: return wl->grad_dtype != ADV_UNSET;
	default: return false;
	}
}

/*
 * What is not stated is not known (issue 26): advisor's own conveniences
 * (sequence min(max_seq, 4096), micro-batch 1, selective recompute, bf16,
 * ZeRO 0, the policy's gradient bytes) are assumptions whether the job was
 * read from its text or described by --llm-* options, and a reject never
 * rests on one.  Documented framework defaults are the job's: Megatron's
 * and DeepSpeed's plain data parallelism and Megatron's fp32 gradient
 * buffer (engine_default_grad_dtype), FSDP's FULL_SHARD, and a server's
 * weights in the checkpoint's dtype (vLLM and SGLang --dtype auto,
 * vllm/config/model.py _get_and_verify_dtype: the config's torch_dtype,
 * bf16 for every catalog checkpoint that names no other weights_dtype).
 * A layout the job's own config file holds but the reader could not open
 * (SCRIPT_NOT_FOLLOWED, SCRIPT_CONFIG_ERROR), or that a program of the
 * job's own sets (PROGRAM_NOT_READ), is unknown, not 1.
 */
static bool layout_unread(const struct adv_request *req)
{
	for (int i = 0; i < req->n_pre && req->pre; i++)
		if (engine_finding_is(&req->pre[i], ADV_CODE_SCRIPT_NOT_FOLLOWED) ||
		    engine_finding_is(&req->pre[i], ADV_CODE_SCRIPT_CONFIG_ERROR) ||
		    engine_finding_is(&req->pre[i], ADV_CODE_PROGRAM_NOT_READ))
			return true;
	return false;
}

void provenance_resolve(const struct adv_request *req, struct adv_result *res)
{
	const struct adv_workload *wl = &req->wl;
	bool infer = wl->task == ADV_TASK_INFER, unread = layout_unread(req);

	for (int f = 0; f < ADV_F_COUNT; f++) {
		enum adv_origin o = (enum adv_origin)wl->from[f];

		if (o >= ADV_FROM_COUNT)
			o = ADV_FROM_UNSET;
		if (provenance_is_set(wl, (enum adv_field)f)) {
			/* Set by an --llm-* option unless the reader marked it:
			 * the job states it (ADV_FROM_JOB), or states it in a
			 * launch that may not run (ADV_FROM_ASSUMED, apply.c). */
			res->from[f] = (unsigned char)(o != ADV_FROM_UNSET ? o : ADV_FROM_OPTION);
			continue;
		}
		if (o == ADV_FROM_ASSUMED || o == ADV_FROM_FRAMEWORK || o == ADV_FROM_POLICY) {
			res->from[f] = (unsigned char)o;
			continue;
		}
		switch (f) {
		case ADV_F_SEQ: case ADV_F_MBS: case ADV_F_RECOMPUTE: case ADV_F_GBS:
			o = ADV_FROM_ASSUMED;
			break;
		case ADV_F_PRECISION:
			/* A server loads the checkpoint's dtype; what a trainer
			 * computes in is a guess (its weights stay 16-bit). */
			o = infer ? ADV_FROM_FRAMEWORK : ADV_FROM_ASSUMED;
			break;
		case ADV_F_ZERO:
			/* FSDP shards fully unless told (FULL_SHARD, its
			 * documented default), Megatron and DeepSpeed not at
			 * all (no --use-distributed-optimizer, no
			 * zero_optimization); a server keeps no optimizer. */
			o = infer ? ADV_FROM_DEFAULT
			  : wl->framework == ADV_FW_FSDP || wl->framework == ADV_FW_MEGATRON ||
			    wl->framework == ADV_FW_DEEPSPEED ? ADV_FROM_FRAMEWORK : ADV_FROM_ASSUMED;
			break;
		case ADV_F_MODEL:
			o = ADV_FROM_UNSET;
			break;
		case ADV_F_GRAD_DTYPE:
			/* Megatron's documented default (engine_default_grad_dtype);
			 * else the site's grad_bytes, which the job may not keep. */
			o = infer ? ADV_FROM_DEFAULT
			  : engine_default_grad_dtype(wl) != ADV_UNSET ? ADV_FROM_FRAMEWORK
			  : ADV_FROM_ASSUMED;
			break;
		case ADV_F_TP: case ADV_F_PP: case ADV_F_CP: case ADV_F_EP: case ADV_F_ETP:
		case ADV_F_VPP: case ADV_F_DP:
			o = unread ? ADV_FROM_ASSUMED : ADV_FROM_DEFAULT;
			break;
		default:
			o = ADV_FROM_DEFAULT;
		}
		res->from[f] = (unsigned char)o;
	}
}

#define U(f) ADV_USES(ADV_F_##f)
#define USES_LAYOUT (U(TP) | U(PP) | U(CP) | U(EP) | U(ETP) | U(VPP) | U(DP))
#define USES_MEMORY (U(MODEL) | USES_LAYOUT | U(SP) | U(ZERO) | U(PRECISION) | U(SEQ) | \
		     U(MBS) | U(RECOMPUTE) | U(TASK) | U(ATTENTION) | U(GRAD_DTYPE))

/* What each check reads (layout.c, memory.c, serving.c, checkpoint.c). */
static unsigned code_uses(enum adv_code c, const struct adv_request *req)
{
	unsigned ck_time = req->wl.ckpt.steps > 0 ? U(SEQ) | U(MBS) | U(GBS) | USES_LAYOUT : 0;

	switch (c) {
	case ADV_CODE_GPU_COUNT_MISMATCH:
		return USES_LAYOUT;
	case ADV_CODE_GPUS_IDLE:
		return USES_LAYOUT | U(WORLD);
	case ADV_CODE_MODEL_UNKNOWN:
		return U(MODEL);
	case ADV_CODE_WORLD_SIZE_MISMATCH:
		return U(WORLD);
	case ADV_CODE_TP_NOT_DIVIDE_HEADS: case ADV_CODE_TP_NOT_DIVIDE_KV_HEADS:
	case ADV_CODE_TP_NOT_DIVIDE_FFN:
		return U(MODEL) | U(TP);
	case ADV_CODE_TP_CROSSES_NODE:
		return U(TP);
	case ADV_CODE_PP_UNEVEN_LAYERS: case ADV_CODE_VPP_INVALID:
		return U(MODEL) | U(PP) | U(VPP);
	case ADV_CODE_EP_NOT_DIVIDE_EXPERTS:
		return U(MODEL) | U(EP);
	case ADV_CODE_EP_GRID_NOT_DIVIDE_GPUS:
		return U(EP) | U(ETP) | U(TP);
	case ADV_CODE_CP_SEQ_NOT_DIVISIBLE:
		return U(SEQ) | U(CP);
	case ADV_CODE_GBS_NOT_DIVISIBLE:
		return U(GBS) | U(MBS) | U(TP) | U(PP) | U(CP) | U(DP);
	case ADV_CODE_ZERO_WITH_PIPELINE:
		return U(ZERO) | U(PP) | U(FRAMEWORK);
	case ADV_CODE_PIPELINE_BUBBLE:
		return U(PP) | U(VPP) | U(GBS) | U(MBS) | U(DP);
	case ADV_CODE_MEM_OVER_CAPACITY: case ADV_CODE_MEM_LOW_HEADROOM:
		/* A server keeps no gradients, optimizer or recompute. */
		return req->wl.task == ADV_TASK_INFER
			? U(MODEL) | USES_LAYOUT | U(PRECISION) | U(SEQ) | U(MBS) | U(TASK)
			: USES_MEMORY;
	case ADV_CODE_KV_CAPACITY_LOW:
		return U(MODEL) | U(TP) | U(PP) | U(PRECISION) | U(SEQ) | U(MBS);
	case ADV_CODE_SEQ_EXCEEDS_MAX:
		return U(MODEL) | U(SEQ);
	case ADV_CODE_SP_OFF_WITH_TP:
		return U(TP) | U(SP);
	case ADV_CODE_FP8_UNSUPPORTED:
		return U(PRECISION);
	case ADV_CODE_CKPT_MISSING:
		return U(CKPT);
	case ADV_CODE_CKPT_TOO_LONG: case ADV_CODE_CKPT_TOO_SHORT:
	case ADV_CODE_CKPT_WRITE_EXCEEDS_INTERVAL: case ADV_CODE_CKPT_STEPS:
		/* The checkpoint holds the full model states whatever the
		 * sharding and compute precision; an interval in steps is
		 * timed through the step, which the batch sets. */
		return U(CKPT) | U(MODEL) | ck_time;
	default:
		return 0;
	}
}

/* Values of a request that only the engine assumed. */
static unsigned assumed_of(const struct adv_result *res, unsigned uses)
{
	unsigned m = 0;

	for (int f = 0; f < ADV_F_COUNT; f++)
		if ((uses & ADV_USES(f)) && res->from[f] == ADV_FROM_ASSUMED)
			m |= ADV_USES(f);
	return m;
}

/*
 * The request with every assumed value at the least memory it could take;
 * returns the mask of those it changed, or ~0u when one cannot be bounded
 * (a parallel size).  The least is what must be resident whatever the
 * job leaves out: weights in their stated or documented dtype, gradients
 * and optimizer states at their least dtype and sharding, the activations
 * of one micro-batch with full recompute on the shortest sequence, none
 * where advisor does not model the framework's (act_unmodeled).
 */
static unsigned least_memory(const struct adv_result *res, struct adv_request *r)
{
	unsigned a = assumed_of(res, USES_MEMORY), done = 0;
	bool infer = res->task == ADV_TASK_INFER;

	if (a & (USES_LAYOUT | U(SP) | U(TASK) | U(MODEL)))
		return ~0u;
	if (a & U(MBS)) {
		r->wl.mbs = 1;
		done |= U(MBS);
	}
	if ((a & U(RECOMPUTE)) && !infer) {
		r->wl.recompute = ADV_RECOMPUTE_FULL;
		done |= U(RECOMPUTE);
	}
	if (a & U(SEQ)) {
		/* A sequence the job might train on: any, down to one chunk
		 * per context-parallel rank. */
		r->wl.seq = 2 * (res->layout.cp > 0 ? res->layout.cp : 1);
		done |= U(SEQ);
	}
	if ((a & U(ZERO)) && !infer) {
		r->wl.zero = 3;
		done |= U(ZERO);
	}
	if ((a & U(GRAD_DTYPE)) && !infer) {
		/* bf16 holds the least between steps; least_of also tries fp32,
		 * whose step makes no fp32 copy (memory.c, issue 29). */
		r->wl.grad_dtype = ADV_PREC_BF16;
		done |= U(GRAD_DTYPE);
	}
	if (a & U(PRECISION)) {
		/* Training keeps 16-bit weights whatever it computes in
		 * (memory.c); a server may hold fp8 ones. */
		r->wl.precision = infer ? ADV_PREC_FP8 : ADV_PREC_BF16;
		r->wl.kv_fp8 = infer;
		done |= U(PRECISION);
	}
	if (a & U(ATTENTION)) {
		r->wl.attention = ADV_ATTN_FLASH;
		done |= U(ATTENTION);
	}
	return done;
}

/* The least memory of the job and the name of its GPU; false when it
 * cannot be bounded.  *changed: the assumed values it moved. */
static bool least_of(const catalog_t *cat, const struct adv_policy *pol,
		     const struct adv_request *req, const struct adv_result *res,
		     unsigned *changed, struct adv_memory *mem, const char **gpu)
{
	struct adv_request r = *req;
	struct adv_job job;

	*changed = least_memory(res, &r);
	if (*changed == ~0u)
		return false;
	/* Nothing assumed to move: the estimate is the least (and the
	 * check's own message names the GPU). */
	if (*changed == 0 && !req->wl.act_unmodeled) {
		*mem = res->memory;
		*gpu = "";
		return true;
	}
	r.n_pre = 0;
	r.pre = NULL;
	if (engine_resolve(cat, &r, policy_find_partition(pol, r.res.partition), &job, NULL) != 0 ||
	    !job.model || !job.gpu)
		return false;
	job.no_act = req->wl.act_unmodeled;
	memory_estimate(&job, pol, mem);
	if (*changed & U(GRAD_DTYPE)) {
		/* 16-bit gradients hold less between steps, but the step of
		 * Megatron's and DeepSpeed's optimizers copies them to fp32: the
		 * least is the smaller of the two. */
		struct adv_memory other;

		job.grad_dtype = ADV_PREC_FP32;
		memory_estimate(&job, pol, &other);
		if (other.per_gpu_gib < mem->per_gpu_gib)
			*mem = other;
	}
	*gpu = job.gpu->name;
	return true;
}

/* "seq 4096, recompute selective" into what, "--llm-seq, --llm-recompute" into opts. */
static void describe(const struct adv_result *res, unsigned a, char *what, size_t wlen,
		     char *opts, size_t olen)
{
	size_t o = 0, p = 0;

	what[0] = opts[0] = '\0';
	for (int f = 0; f < ADV_F_COUNT; f++) {
		const char *opt = provenance_option((enum adv_field)f);
		char v[32];

		/* Expert TP follows TP, DP is derived: no value of their own. */
		if (!(a & ADV_USES(f)) || f == ADV_F_ETP || f == ADV_F_DP)
			continue;
		switch (f) {
		case ADV_F_SEQ: adv_snprintf(v, sizeof(v), " %d", res->seq); break;
		case ADV_F_MBS: adv_snprintf(v, sizeof(v), " %d", res->mbs); break;
		case ADV_F_GBS: adv_snprintf(v, sizeof(v), " %d", res->gbs); break;
		case ADV_F_ZERO: adv_snprintf(v, sizeof(v), " %d", res->layout.zero); break;
		case ADV_F_PRECISION:
			adv_snprintf(v, sizeof(v), " %s", engine_precision_name(res->precision));
			break;
		case ADV_F_RECOMPUTE:
			adv_snprintf(v, sizeof(v), " %s", engine_recompute_name(res->recompute));
			break;
		case ADV_F_TP: adv_snprintf(v, sizeof(v), " %d", res->layout.tp); break;
		case ADV_F_PP: adv_snprintf(v, sizeof(v), " %d", res->layout.pp); break;
		case ADV_F_CP: adv_snprintf(v, sizeof(v), " %d", res->layout.cp); break;
		case ADV_F_EP: adv_snprintf(v, sizeof(v), " %d", res->layout.ep); break;
		case ADV_F_VPP: adv_snprintf(v, sizeof(v), " %d", res->layout.vpp); break;
		default: v[0] = '\0';
		}
		if (o + 1 < wlen)
			o += adv_snprintf(what + o, wlen - o, "%s%s%s", o ? ", " : "",
					  provenance_field_name((enum adv_field)f), v);
		/* The layout's sizes share one option: name it once. */
		if (opt[0] && p + 1 < olen && !(strstr(opts, opt) && !strcmp(opt, "layout")))
			p += adv_snprintf(opts + p, olen - p, "%s--llm-%s", p ? ", " : "", opt);
	}
}

/* The least memory of the job (least_of): the proof of a memory reject. */
struct least {
	bool bounded;
	struct adv_memory mem;
	unsigned changed;            /* the assumed values it moved */
	const char *gpu;             /* "" where it is the estimate itself */
};

/*
 * MEM_OVER_CAPACITY as a proof: at least X GiB per GPU whatever the job
 * leaves unstated, with the estimate beside it.  Returns false when the
 * least fits (the caller makes it a warning).
 */
static bool memory_proof(const struct least *l, struct adv_result *res, struct adv_finding *f)
{
	char t[ADV_MSG_MAX / 2];

	if (!l->bounded || l->mem.per_gpu_gib <= l->mem.usable_gib)
		return false;
	/* Whatever those values are, it does not fit. */
	f->uses &= ~l->changed;
	if (!l->gpu[0])
		return true;   /* the estimate itself: memory.c's message stands */
	memory_terms(&l->mem, t, sizeof(t));
	adv_snprintf(f->message, sizeof(f->message),
		     "at least %.1f GiB per GPU (%s) whatever the job leaves unstated, more than "
		     "the %.1f GiB usable on %s (about %.1f GiB with advisor's assumptions)",
		     l->mem.per_gpu_gib, t, l->mem.usable_gib, l->gpu, res->memory.per_gpu_gib);
	return true;
}

void provenance_guard(const catalog_t *cat, const struct adv_policy *pol,
		      const struct adv_request *req, struct adv_result *res, int from)
{
	struct least l = { false, { 0 }, 0, "" };

	/* The least memory, once: the figure beside the estimate, and the
	 * proof a memory reject rests on. */
	l.bounded = res->has_memory && least_of(cat, pol, req, res, &l.changed, &l.mem, &l.gpu);
	/* Never above the estimate: both describe the same job. */
	res->memory.least_gib = !l.bounded ? 0
		: l.mem.per_gpu_gib < res->memory.per_gpu_gib ? l.mem.per_gpu_gib
		: res->memory.per_gpu_gib;
	res->memory.least_bounded = l.bounded;
	for (int i = from; i < res->n_findings; i++) {
		struct adv_finding *f = &res->findings[i];
		enum adv_code c = engine_code_lookup(f->code);
		unsigned a;
		char what[ADV_MSG_MAX / 2], opts[ADV_MSG_MAX / 2], fix[ADV_MSG_MAX];
		size_t n;

		if (!f->uses)
			f->uses = code_uses(c, req);
		/* A required value left unstated is the reject's reason itself. */
		if (f->severity != ADV_SEV_REJECT || c == ADV_CODE_VALUE_REQUIRED)
			continue;
		a = assumed_of(res, f->uses);
		if (!a)
			continue;
		/* Micro-batch 1 is the weakest the rule can ask (the global
		 * batch a multiple of DP): any other fails as well. */
		if (c == ADV_CODE_GBS_NOT_DIVISIBLE && a == U(MBS) && res->mbs == 1) {
			f->uses &= ~U(MBS);
			continue;
		}
		if (c == ADV_CODE_MEM_OVER_CAPACITY && memory_proof(&l, res, f))
			continue;
		describe(res, a, what, sizeof(what), opts, sizeof(opts));
		f->severity = ADV_SEV_WARN;
		n = strlen(f->message);
		if (c == ADV_CODE_MEM_OVER_CAPACITY) {
			char least[64] = "";

			/* memory.c's "about Y ... usable on GPU", then what Y
			 * assumes and the least. */
			if (res->memory.least_bounded)
				adv_snprintf(least, sizeof(least), "; at least %.1f GiB whatever they are",
					     res->memory.least_gib);
			adv_snprintf(f->message + n, sizeof(f->message) - n,
				     ", if the job runs as assumed: %s%s", what, least);
		} else {
			adv_snprintf(f->message + n, sizeof(f->message) - n,
				     "; not a reject: it assumes %s, which the job does not state", what);
		}
		adv_snprintf(fix, sizeof(fix), "state %s (or the job's own flags) to have it checked%s%s",
			     opts, f->fix[0] ? "; or " : "", f->fix);
		adv_strlcpy(f->fix, fix, sizeof(f->fix));
	}
}
