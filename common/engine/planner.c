/*
 * planner.c - the layout planner (issue 6): every parallel layout and
 * workload setting of a job that fits, ranked by the engine's own estimated
 * tokens/s (estimate.c), ties broken by memory headroom.
 *
 * Search space (shared/notes/model-math.md, "Layout rules"):
 * - TP: every size the heads, KV heads and FFN allow (Shoeybi et al. 2019),
 *   up to the GPUs of one node unless cross-node TP is asked for;
 * - CP: from PLANNER_CP_MIN_SEQ tokens on, sizes with s % 2c == 0 (ring
 *   attention is only worth its traffic for long sequences);
 * - PP: divisors of the layer count that divide the GPUs, and those that
 *   divide it once the embedding and the loss count as layers (BLOOM-176B's
 *   70 + 2 on 12 stages, Llama 3 405B's 126 + 2 on 16: Megatron-LM's
 *   --account-for-* flags, layout_pp_accounted()); other near-divisors
 *   only when warnings are allowed, because the engine warns about them;
 * - EP over divisors of the experts, ETP 1 or TP (Megatron-Core's two
 *   settings), MoE models only;
 * - VPP 2..PLANNER_VPP_MAX when it divides the stage's layers (counted
 *   as above) and p > 1 (Narayanan et al. 2021; Megatron-Core);
 * - ZeRO 0-3 as the framework allows (DeepSpeed pipelines: 0-1; FSDP: 3;
 *   serving: 0), recompute none/selective/full, micro-batch 1-8.
 *
 * Bounds instead of brute force, each from a monotonicity of memory.c and
 * estimate.c:
 * - memory never shrinks with a larger micro-batch or interleaving, so a
 *   tp/pp/cp/ep/etp "base" that fits with none of its ZeRO stages and
 *   recompute modes at micro-batch 1 without interleaving is dropped (the
 *   most sharded setting is tried first and usually answers at once: ZeRO
 *   and recompute are not monotone at the edges, see base_fits()), and per
 *   setting the micro-batch is found by bisection;
 * - tokens/s never grows with full recompute (4/3 compute), with ZeRO-2/3
 *   over ZeRO-0/1 (per-micro-batch gathers and reductions against one
 *   reduction per step) or with a larger bubble, and grows with the
 *   micro-batch when the global batch follows it (the DP reduction is per
 *   step); with a fixed global batch ZeRO-0/1 at micro-batch 1 (the most
 *   micro-batches, the smallest bubble) is the fastest any micro-batch and
 *   ZeRO stage can be; so one estimate of the fastest setting bounds a
 *   base, and a base that cannot beat the K-th plan kept is dropped.
 * Each base keeps only its best setting, so the K plans are K different
 * layouts.  The survivors are then checked with the engine itself
 * (engine_evaluate()), which guarantees that a plan passed back to
 * engine_check() gets the verdict and the figures the planner reports.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "estimate.h"
#include "evaluate.h"
#include "findings.h"
#include "layout.h"
#include "memory.h"
#include "names.h"
#include "planner.h"
#include "util.h"

/* Context parallelism is searched from this sequence length on. */
#define PLANNER_CP_MIN_SEQ 8192
#define PLANNER_CP_MAX 64
/* Published layouts go up to 16 (Narayanan et al. 2021, table 1). */
#define PLANNER_MBS_MAX 16
/*
 * Interleaving adds point-to-point transfers that grow with v and that the
 * step-time model leaves out, so v stops where published layouts stop
 * (NeMo's Llama 2 70B: 20 chunks of one layer on PP4; Megatron-LM's Llama 3
 * 405B recipe: 8 on PP8).
 */
#define PLANNER_VPP_MAX 32
/* A near-divisor PP leaves at most this fraction of stage slots empty. */
#define PLANNER_NEAR_PP_IDLE 0.10
/* Candidates kept beyond K in case the engine's verification drops some. */
#define PLANNER_SPARE 8
#define PLANNER_TABLE_MAX (PLANNER_MAX_PLANS + PLANNER_SPARE)
/* Relative tokens/s difference under which two plans tie. */
#define PLANNER_TIE 1e-9

/* One configuration: what the planner varies. */
struct cand {
	int tp, pp, cp, ep, etp, vpp, zero, recompute, mbs;
	double tokens_per_s;
	double per_gpu_gib;
};

/*
 * Best first; a fixed array kept sorted (K is small).  The bounds prune
 * against the K-th entry; the spare entries after it are only a fallback
 * for a candidate the engine's verification would drop (none should be).
 */
struct table {
	struct cand c[PLANNER_TABLE_MAX];
	int n, cap, want;
};

struct search {
	const struct adv_policy *pol;
	const struct adv_partition *part;
	const struct planner_opts *opts;
	struct adv_job job;      /* the base job; layout and workload varied in place */
	double mem_limit;        /* GiB a plan may use per GPU */
	int zeros[4], n_zeros;   /* for the current PP */
	int rcs[3], n_rcs;
	unsigned fixed;          /* what the job's framework cannot change (workload.fixed) */
	struct table top;
};
#define FIXED(s, f) ((s)->fixed & ADV_USES(ADV_F_##f))

static const char *const planner_errors[PLANNER_ERR_COUNT] = {
	[PLANNER_OK] = "success",
	[PLANNER_ERR_ARG] = "invalid argument",
	[PLANNER_ERR_MODEL_NOT_GIVEN] = "no model given",
	[PLANNER_ERR_MODEL_UNKNOWN] = "model not in the catalog",
	[PLANNER_ERR_GPU_UNKNOWN] = "GPU type unknown",
	[PLANNER_ERR_NO_GPUS] = "no GPUs",
	[PLANNER_ERR_MAX_GPUS] = "more GPUs than the partition allows",
	[PLANNER_ERR_FP8_UNSUPPORTED] = "fp8 not supported by the GPU",
};
/* A code left out is a NULL row, which test_tables finds (issue 27). */
_Static_assert(ADV_ARRAY_SIZE(planner_errors) == PLANNER_ERR_COUNT, "a message for each error");

const char *planner_strerror(int code)
{
	if (code < 0 || (size_t)code >= ADV_ARRAY_SIZE(planner_errors))
		return "unknown planner error";
	return planner_errors[code];
}

void planner_opts_init(struct planner_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->top = PLANNER_DEFAULT_TOP;
}

/* ---- ranking ------------------------------------------------------------- */

static bool ranks_before(const struct cand *a, const struct cand *b)
{
	double d = a->tokens_per_s - b->tokens_per_s;

	if (fabs(d) > PLANNER_TIE * fmax(a->tokens_per_s, b->tokens_per_s))
		return d > 0;
	return a->per_gpu_gib < b->per_gpu_gib;
}

static bool table_full(const struct table *t)
{
	return t->n >= t->cap;
}

/* Can a candidate with this bound still make the first K? */
static bool may_enter(const struct table *t, const struct cand *bound)
{
	return t->n < t->want || ranks_before(bound, &t->c[t->want - 1]);
}

static void table_insert(struct table *t, const struct cand *c)
{
	int i;

	if (table_full(t) && !ranks_before(c, &t->c[t->n - 1]))
		return;
	i = table_full(t) ? t->n - 1 : t->n++;
	while (i > 0 && ranks_before(c, &t->c[i - 1])) {
		t->c[i] = t->c[i - 1];
		i--;
	}
	t->c[i] = *c;
}

/* ---- the job under test ---------------------------------------------------- */

static void set_layout(struct adv_job *job, const struct cand *c)
{
	struct adv_layout_out *l = &job->lay;

	l->tp = c->tp;
	l->pp = c->pp;
	l->cp = c->cp;
	l->ep = c->ep;
	l->etp = c->etp;
	l->vpp = c->vpp;
	l->dp = l->gpus / (c->tp * c->pp * c->cp);
	l->sp = c->tp > 1;     /* the engine's default */
	l->zero = c->zero;
	job->recompute = c->recompute;
	job->mbs = c->mbs;
	if (!job->gbs_given)
		job->gbs = layout_default_gbs(c->mbs, l->dp, c->pp);
}

static double mem_gib(struct search *s, const struct cand *c)
{
	struct adv_memory m;

	set_layout(&s->job, c);
	memory_estimate(&s->job, s->pol, &m);
	/* As memory.c judges it: the reject and the headroom warning both on
	 * the allocated peak (the allocator gives its cache back near the
	 * limit: policy.c, allocator_margin). */
	return m.per_gpu_gib;
}

static double tokens_per_s(struct search *s, const struct cand *c)
{
	struct adv_estimate e;

	set_layout(&s->job, c);
	estimate_step(&s->job, s->pol, 0, &e);
	return e.tokens_per_s;
}

/* Hard rules (layout.c) and, unless warnings are allowed, the bubble rule. */
static bool rules_ok(struct search *s, const struct cand *c)
{
	set_layout(&s->job, c);
	if (layout_check(&s->job, NULL, s->pol, s->part, NULL) != 0)
		return false;
	if (!s->opts->allow_warnings && s->job.gbs_given && c->pp > 1 &&
	    s->job.task != ADV_TASK_INFER && layout_bubble(&s->job) > s->pol->max_pipeline_bubble)
		return false;
	return true;
}

/* Does one size pass the hard rules with everything else at 1? */
static bool size_ok(struct search *s, int tp, int pp, int cp, int ep, int etp)
{
	struct cand c = { tp, pp, cp, ep, etp, 1, 0, ADV_RECOMPUTE_SELECTIVE, 1, 0, 0 };
	bool given = s->job.gbs_given;
	int gbs = s->job.gbs, bad;

	if (s->job.lay.gpus % ((long)tp * pp * cp) || s->job.lay.gpus % ((long)etp * ep * pp))
		return false;
	/* Batch rules depend on the micro-batch: judged per candidate. */
	s->job.gbs_given = false;
	set_layout(&s->job, &c);
	bad = layout_check(&s->job, NULL, s->pol, s->part, NULL);
	s->job.gbs_given = given;
	s->job.gbs = gbs;
	return bad == 0;
}

/* ---- one base layout -------------------------------------------------------- */

static void zero_options(struct search *s, int pp)
{
	const struct adv_job *j = &s->job;
	int z, hi = 3, lo = 0;

	if (j->task == ADV_TASK_INFER)
		hi = 0;
	else if (FIXED(s, ZERO))
		lo = hi = j->lay.zero;
	else if (j->framework == ADV_FW_FSDP)
		lo = 3;
	else if (j->framework == ADV_FW_DEEPSPEED && pp > 1)
		hi = 1;
	/* Megatron-LM shards optimizer states (--use-distributed-optimizer,
	 * docs/source/api-guide/dist_optimizer.md) and keeps the whole
	 * gradient buffer: there is no ZeRO-2 flag to offer the job, and its
	 * FSDP paths are other launch options, not a stage. */
	else if (j->framework == ADV_FW_MEGATRON)
		hi = 1;
	s->n_zeros = 0;
	for (z = lo; z <= hi; z++)
		s->zeros[s->n_zeros++] = z;
}

/*
 * The best micro-batch of one setting, 0 when none fits.  A global batch
 * that follows the micro-batch makes the largest fitting one the fastest.
 * With a fixed one, a larger micro-batch means fewer micro-batches: a
 * larger bubble, but fewer ZeRO-2/3 gathers and reductions (estimate.c), so
 * every valid one that fits is tried (memory grows with it: the first that
 * does not fit ends the scan).
 */
static int best_mbs(struct search *s, struct cand *c)
{
	int lo = 1, hi = PLANNER_MBS_MAX, b, best = 0;
	double t, best_t = 0;

	if (s->job.gbs_given) {
		for (b = 1; b <= PLANNER_MBS_MAX; b++) {
			c->mbs = b;
			if (!rules_ok(s, c))
				continue;
			if (mem_gib(s, c) > s->mem_limit)
				break;
			/* ZeRO-0/1 move nothing per micro-batch: the smallest valid
			 * micro-batch (the smallest bubble) is the fastest. */
			if (c->zero < 2)
				return b;
			t = tokens_per_s(s, c);
			if (!best || t > best_t * (1 + PLANNER_TIE)) {
				best = b;
				best_t = t;
			}
		}
		c->mbs = best > 0 ? best : 1;
		return best;
	}
	c->mbs = 1;
	if (!rules_ok(s, c) || mem_gib(s, c) > s->mem_limit)
		return 0;
	while (lo < hi) {
		c->mbs = (lo + hi + 1) / 2;
		if (mem_gib(s, c) <= s->mem_limit)
			lo = c->mbs;
		else
			hi = c->mbs - 1;
	}
	c->mbs = lo;
	if (rules_ok(s, c))
		return lo;
	c->mbs = 1;
	return 1;
}

static int vpp_options(const struct search *s, int pp, int *v)
{
	int L = s->job.model->layers, n = 0, k;

	v[n++] = 1;
	if (FIXED(s, VPP))
		return n;
	/* DeepSpeed's pipeline engine (GPT-NeoX, Megatron-DeepSpeed) runs one
	 * 1F1B schedule: it has no interleaved (virtual) stages to offer. */
	if (s->job.framework == ADV_FW_DEEPSPEED)
		return n;
	if (pp > 1 && layout_pp_accounted(L, pp))
		L = (L + 1) % pp == 0 ? L + 1 : L + 2;
	if (pp < 2 || L % pp)
		return n;
	for (k = 2; k <= PLANNER_VPP_MAX; k++)
		if ((L / pp) % k == 0)
			v[n++] = k;
	return n;
}

/*
 * The fastest a setting could be at any micro-batch: ZeRO-2/3 move more per
 * micro-batch than ZeRO-0/1 move per step (estimate.c), so ZeRO at most 1
 * at the micro-batch that minimises the bubble (1 with a fixed global batch)
 * bounds every ZeRO stage and micro-batch.
 */
static int bound_zero(int zero)
{
	return zero < 1 ? zero : 1;
}

/* The fastest setting any configuration of the base could reach. */
static double base_bound(struct search *s, const struct cand *base, int vmax)
{
	struct cand c = *base;

	c.vpp = vmax;
	c.zero = bound_zero(s->zeros[0]);
	c.recompute = s->rcs[0];
	c.mbs = s->job.gbs_given ? 1 : PLANNER_MBS_MAX;
	return tokens_per_s(s, &c);
}

/*
 * Does any setting of the base fit?  Micro-batch 1 and no interleaving
 * need the least memory for every ZeRO stage and recompute mode; those two
 * are tried all, most sharded first: ZeRO-3's gathered layer costs more
 * than it saves without data parallelism, and full recompute's extra layer
 * more than it saves on one-layer stages.
 */
static bool base_fits(struct search *s, const struct cand *base)
{
	struct cand c = *base;
	int iz, ir;

	c.vpp = 1;
	c.mbs = 1;
	for (iz = s->n_zeros - 1; iz >= 0; iz--)
		for (ir = s->n_rcs - 1; ir >= 0; ir--) {
			c.zero = s->zeros[iz];
			c.recompute = s->rcs[ir];
			if (mem_gib(s, &c) <= s->mem_limit)
				return true;
		}
	return false;
}

/*
 * Can this setting (at its fastest micro-batch) beat the base's best so
 * far and the last plan kept?  Ties may still win on headroom.
 */
static bool setting_may_win(struct search *s, const struct cand *set, const struct cand *best)
{
	struct cand c = *set;

	c.mbs = s->job.gbs_given ? 1 : PLANNER_MBS_MAX;
	c.zero = bound_zero(c.zero);
	c.tokens_per_s = tokens_per_s(s, &c);
	c.per_gpu_gib = 0;
	if (best && !ranks_before(&c, best))
		return false;
	return may_enter(&s->top, &c);
}

static void plan_base(struct search *s, struct cand base)
{
	int v[PLANNER_VPP_MAX + 1], nv, iv, iz, ir;
	struct cand best = { 0 }, c;
	bool have = false;

	zero_options(s, base.pp);
	nv = vpp_options(s, base.pp, v);
	if (!base_fits(s, &base))
		return;
	if (s->top.n >= s->top.want) {
		c = base;
		c.tokens_per_s = base_bound(s, &base, v[nv - 1]);
		c.per_gpu_gib = 0;
		if (!may_enter(&s->top, &c))
			return;
	}
	/* Fastest settings first, so that the bound below cuts early. */
	for (iv = nv - 1; iv >= 0; iv--)
		for (iz = 0; iz < s->n_zeros; iz++)
			for (ir = 0; ir < s->n_rcs; ir++) {
				c = base;
				c.vpp = v[iv];
				c.zero = s->zeros[iz];
				c.recompute = s->rcs[ir];
				if (!setting_may_win(s, &c, have ? &best : NULL) || !best_mbs(s, &c))
					continue;
				c.per_gpu_gib = mem_gib(s, &c);
				c.tokens_per_s = tokens_per_s(s, &c);
				if (!have || ranks_before(&c, &best)) {
					best = c;
					have = true;
				}
			}
	if (have)
		table_insert(&s->top, &best);
}

/* ---- enumeration ------------------------------------------------------------ */

static bool pp_wanted(const struct search *s, int pp)
{
	int L = s->job.model->layers, per = (L + pp - 1) / pp;

	if (pp > L)
		return false;
	if (L % pp == 0 || layout_pp_accounted(L, pp))
		return true;
	return s->opts->allow_warnings &&
	       (double)(per * pp - L) / (per * pp) <= PLANNER_NEAR_PP_IDLE;
}

static void plan_experts(struct search *s, struct cand base)
{
	const struct adv_model *m = s->job.model;
	int experts = m->has_moe && !FIXED(s, EP) ? m->moe.experts : 1, e, k;
	int etps[2] = { 1, base.tp };

	for (e = 1; e <= experts; e++) {
		if (experts % e)
			continue;
		for (k = 0; k < (base.tp > 1 && m->has_moe ? 2 : 1); k++) {
			if (!size_ok(s, base.tp, base.pp, base.cp, e, etps[k]))
				continue;
			base.ep = e;
			base.etp = etps[k];
			plan_base(s, base);
		}
	}
}

static void plan_all(struct search *s)
{
	const struct adv_layout_out *l = &s->job.lay;
	int tmax = l->gpus_per_node > 0 && !s->opts->cross_node_tp ? l->gpus_per_node : l->gpus;
	int cmax = s->job.seq >= PLANNER_CP_MIN_SEQ ? PLANNER_CP_MAX : 1;
	struct cand base = { 1, 1, 1, 1, 1, 1, 0, ADV_RECOMPUTE_SELECTIVE, 1, 0, 0 };
	int t, c, p;

	if (tmax > s->job.model->heads)
		tmax = s->job.model->heads;
	/* Only what the job's framework can set (issue 26). */
	if (FIXED(s, TP))
		tmax = 1;
	if (FIXED(s, CP))
		cmax = 1;
	for (t = tmax; t >= 1; t--) {
		if (!size_ok(s, t, 1, 1, 1, 1))
			continue;
		for (c = 1; c <= cmax && (long)t * c <= l->gpus; c++) {
			if (c > 1 && !size_ok(s, t, 1, c, 1, 1))
				continue;
			for (p = 1; p <= (FIXED(s, PP) ? 1 : s->job.model->layers) &&
				    (long)t * c * p <= l->gpus; p++) {
				if (l->gpus % ((long)t * c * p) || !pp_wanted(s, p))
					continue;
				base.tp = t;
				base.cp = c;
				base.pp = p;
				plan_experts(s, base);
			}
		}
	}
}

/* ---- request, verification and output ---------------------------------------- */

static void fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	adv_vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The request without the settings the planner chooses. */
static void base_request(const struct adv_request *req, struct adv_request *out)
{
	*out = *req;
	layout_unset(&out->wl.layout);
	out->wl.mbs = ADV_UNSET;
	/* What the framework cannot change stays the job's. */
	if (!(req->wl.fixed & ADV_USES(ADV_F_ZERO)))
		out->wl.zero = ADV_UNSET;
	if (!(req->wl.fixed & ADV_USES(ADV_F_RECOMPUTE)))
		out->wl.recompute = ADV_UNSET;
}

/* Resolves the job as the engine does; a planner_err on bad input. */
static int setup(const catalog_t *cat, const struct adv_request *req, struct search *s,
		 char *err, size_t errlen)
{
	const char *gpu = req->res.gpu[0] ? req->res.gpu : s->part && s->part->gpu[0] ? s->part->gpu : "";
	struct adv_job *j = &s->job;
	/* The job only: engine_evaluate() would also judge (and fix) the base request. */
	int rc = engine_resolve(cat, req, s->part, j, NULL);

	if (!req->wl.model[0] && !req->wl.has_arch) {
		fail(err, errlen, "no model: give --model NAME (advisorctl catalog models lists them)");
		return PLANNER_ERR_MODEL_NOT_GIVEN;
	}
	if (!j->model) {
		fail(err, errlen, "model '%s' is not in the catalog (advisorctl catalog models lists them)",
		     req->wl.model);
		return PLANNER_ERR_MODEL_UNKNOWN;
	}
	if (!j->gpu) {
		if (gpu[0])
			fail(err, errlen, "GPU type '%s' is not in the catalog (advisorctl catalog gpus lists them)", gpu);
		else
			fail(err, errlen, "no GPU type: give --gpu TYPE or a partition with a GPU type");
		return PLANNER_ERR_GPU_UNKNOWN;
	}
	if (rc != 0) {
		fail(err, errlen, "no GPUs: give --gpus N, or --nodes N with --gpus-per-node G");
		return PLANNER_ERR_NO_GPUS;
	}
	if (s->part && s->part->max_gpus > 0 && j->lay.gpus > s->part->max_gpus) {
		fail(err, errlen, "partition %s allows at most %d GPUs per job (requested %d)",
		     s->part->name, s->part->max_gpus, j->lay.gpus);
		return PLANNER_ERR_MAX_GPUS;
	}
	if (j->precision == ADV_PREC_FP8 && j->gpu->fp8_tflops <= 0) {
		fail(err, errlen, "%s has no fp8 tensor cores: use --precision bf16", j->gpu->name);
		return PLANNER_ERR_FP8_UNSUPPORTED;
	}
	return PLANNER_OK;
}

static void search_limits(struct search *s)
{
	double usable = s->job.gpu->memory_gib - s->pol->reserve_gib;

	/* The engine warns (MEM_LOW_HEADROOM) above usable * (1 - warn_headroom). */
	s->mem_limit = s->opts->allow_warnings ? usable : usable * (1.0 - s->pol->warn_headroom);
	s->n_rcs = 0;
	if (s->job.task == ADV_TASK_INFER) {
		s->rcs[s->n_rcs++] = ADV_RECOMPUTE_SELECTIVE;  /* no backward pass */
	} else if (FIXED(s, RECOMPUTE)) {
		s->rcs[s->n_rcs++] = s->job.recompute;
	} else {
		s->rcs[s->n_rcs++] = ADV_RECOMPUTE_NONE;
		s->rcs[s->n_rcs++] = ADV_RECOMPUTE_SELECTIVE;
		s->rcs[s->n_rcs++] = ADV_RECOMPUTE_FULL;
	}
}

void planner_plan_request(const struct planner_plan *plan, const struct adv_request *base,
			  struct adv_request *out)
{
	const struct adv_layout_out *l = &plan->layout;

	base_request(base, out);
	out->wl.layout.tp = l->tp;
	out->wl.layout.pp = l->pp;
	out->wl.layout.cp = l->cp;
	out->wl.layout.ep = l->ep;
	out->wl.layout.etp = l->etp;
	out->wl.layout.vpp = l->vpp;
	out->wl.zero = l->zero;
	out->wl.mbs = plan->mbs;
	out->wl.recompute = plan->recompute;
	out->wl.precision = plan->precision;
}

void planner_plan_options(const struct planner_plan *plan, char *buf, size_t len)
{
	const struct adv_layout_out *l = &plan->layout;
	const int v[] = { l->tp, l->pp, l->cp, l->ep, l->etp, l->vpp };
	static const char *const names[] = { "tp", "pp", "cp", "ep", "etp", "vpp" };
	size_t n, i, start;

	n = adv_snprintf(buf, len, "--llm-layout=");
	start = n;
	for (i = 0; i < ADV_ARRAY_SIZE(v); i++) {
		/* Expert TP is written whenever it is not what an unwritten
		 * one resolves to: pasted back, the plan is the same grid. */
		bool etp_default = l->etp == layout_etp_for(plan->task, l->tp, l->ep);

		if (i == 4 ? l->ep > 1 && !etp_default : v[i] > 1)
			n += adv_snprintf(buf + n, len - n, "%s%s%d", n > start ? "," : "",
					  names[i], v[i]);
	}
	if (n == start)
		n += adv_snprintf(buf + n, len - n, "tp1");
	if (plan->task != ADV_TASK_INFER)
		n += adv_snprintf(buf + n, len - n, " --llm-zero=%d --llm-recompute=%s", l->zero,
				  engine_recompute_name(plan->recompute));
	adv_snprintf(buf + n, len - n, " --llm-mbs=%d", plan->mbs);
}

/* Findings that belong to the request, not to the plan (same for every plan). */
static bool request_finding(const struct adv_finding *f)
{
	return engine_finding_checkpoint(f) || engine_finding_is(f, ADV_CODE_SEQ_EXCEEDS_MAX) ||
	       engine_finding_is(f, ADV_CODE_POLICY_MODE_OVERRIDE_DENIED);
}

/* The verdict the engine gives the plan, -1 when the options forbid it. */
static int admit(const struct adv_result *res, const struct planner_opts *opts)
{
	enum adv_verdict v = ADV_ACCEPT;
	int i;

	for (i = 0; i < res->n_findings; i++) {
		const struct adv_finding *f = &res->findings[i];
		if (f->severity == ADV_SEV_INFO || request_finding(f))
			continue;
		if (f->severity == ADV_SEV_REJECT)
			return -1;
		if (!opts->allow_warnings &&
		    !(opts->cross_node_tp && engine_finding_is(f, ADV_CODE_TP_CROSSES_NODE)))
			return -1;
		v = ADV_WARN;
	}
	return (int)v;
}

static void cand_plan(const struct search *s, const struct cand *c, struct planner_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->layout = s->job.lay;
	p->layout.tp = c->tp;
	p->layout.pp = c->pp;
	p->layout.cp = c->cp;
	p->layout.ep = c->ep;
	p->layout.etp = c->etp;
	p->layout.vpp = c->vpp;
	p->layout.zero = c->zero;
	p->mbs = c->mbs;
	p->recompute = c->recompute;
	p->precision = s->job.precision;
}

/* Verifies a candidate with the engine and fills the plan from its answer. */
static bool verify(const catalog_t *cat, const struct search *s, const struct adv_request *req,
		   const struct cand *c, struct planner_plan *p)
{
	struct adv_request r;
	struct adv_result res;
	int v;

	cand_plan(s, c, p);
	planner_plan_request(p, req, &r);
	engine_evaluate(cat, s->pol, &r, &res);
	v = admit(&res, s->opts);
	if (v < 0 || !res.has_memory || !res.has_estimate)
		return false;
	p->layout = res.layout;
	p->mbs = res.mbs;
	p->recompute = res.recompute;
	p->precision = res.precision;
	p->seq = res.seq;
	p->gbs = res.gbs;
	p->task = res.task;
	p->framework = res.framework;
	p->gbs_given = req->wl.gbs != ADV_UNSET;
	p->memory = res.memory;
	p->estimate = res.estimate;
	p->headroom_gib = res.memory.usable_gib - res.memory.per_gpu_gib;
	p->verdict = (enum adv_verdict)v;
	return true;
}

/* What makes a plan slower than the first, in the model's own terms. */
static size_t why_slower(const struct planner_plan *p, const struct planner_plan *b,
			 char *buf, size_t len)
{
	size_t n = 0;
	int gpn = p->layout.gpus_per_node;

#define WHY(...) (n += adv_snprintf(buf + n, len - n, "%s", n ? ", " : ""), \
		  n += adv_snprintf(buf + n, len - n, __VA_ARGS__))
	if (p->estimate.bubble > b->estimate.bubble + 0.001)
		WHY("bubble %.1f%% vs %.1f%%", p->estimate.bubble * 100, b->estimate.bubble * 100);
	if (p->recompute == ADV_RECOMPUTE_FULL && b->recompute != ADV_RECOMPUTE_FULL)
		WHY("full recompute (+1/3 compute)");
	if (p->layout.zero >= 3 && b->layout.zero < 3)
		WHY("ZeRO-3 weight gathers");
	if (gpn > 0 && p->layout.tp > gpn)
		WHY("TP%d across nodes", p->layout.tp);
	else if (p->layout.tp > b->layout.tp)
		WHY("more TP traffic (TP%d)", p->layout.tp);
	if (p->layout.cp > b->layout.cp)
		WHY("CP%d ring exchange", p->layout.cp);
	if (p->layout.ep > b->layout.ep)
		WHY("EP%d all-to-all", p->layout.ep);
	else if (p->layout.ep < b->layout.ep)
		WHY("%s experts per GPU", p->layout.ep > 1 ? "more" : "all");
	if (p->layout.tp * p->layout.pp < b->layout.tp * b->layout.pp)
		WHY("larger gradient all-reduce");
	if (p->mbs < b->mbs && !p->gbs_given)
		WHY("micro-batch %d amortises the all-reduce less", p->mbs);
	if (!n)
		WHY("more communication per token");
#undef WHY
	return n;
}

static void explain(struct planner_plan *plans, int n)
{
	const struct planner_plan *b = &plans[0];
	char what[PLANNER_WHY_MAX];
	int i;

	for (i = 0; i < n; i++) {
		struct planner_plan *p = &plans[i];
		double rel = b->estimate.tokens_per_s > 0
			   ? 1.0 - p->estimate.tokens_per_s / b->estimate.tokens_per_s : 0;
		char tail[64];

		adv_snprintf(tail, sizeof(tail), "%.1f GiB headroom%s", p->headroom_gib,
			     p->verdict == ADV_WARN ? ", draws warnings" : "");
		if (i == 0 && p->task == ADV_TASK_INFER) {
			/* Serving: decode throughput; MFU and bubbles are training figures. */
			adv_snprintf(p->why, sizeof(p->why), "fastest that fits: %.0f decode tokens/s, %s",
				     p->estimate.tokens_per_s, tail);
		} else if (i == 0) {
			adv_snprintf(p->why, sizeof(p->why), "fastest that fits: bubble %.1f%%, MFU %.0f%%, %s",
				     p->estimate.bubble * 100, p->estimate.mfu * 100, tail);
		} else if (rel <= PLANNER_TIE) {
			adv_snprintf(p->why, sizeof(p->why), "as fast as #1, less headroom: %s", tail);
		} else {
			why_slower(p, b, what, sizeof(what));
			adv_snprintf(p->why, sizeof(p->why), "%.*f%% slower than #1 (%s); %s",
				     rel < 0.001 ? 2 : 1, rel * 100, what, tail);
		}
	}
}

int planner_plan(const catalog_t *cat, const struct adv_policy *pol,
		 const struct adv_request *req, const struct planner_opts *opts,
		 struct planner_plan *plans, int max_plans, int *n_out,
		 char *err, size_t errlen)
{
	struct planner_opts defaults;
	struct adv_request base;
	struct search s;
	int want, i, rc;

	if (n_out)
		*n_out = 0;
	if (!cat || !pol || !req || !plans || !n_out || max_plans < 1) {
		fail(err, errlen, "planner: invalid argument (NULL pointer or max_plans < 1)");
		return PLANNER_ERR_ARG;
	}
	if (!opts) {
		planner_opts_init(&defaults);
		opts = &defaults;
	}
	want = opts->top > 0 ? opts->top : PLANNER_DEFAULT_TOP;
	if (want > max_plans)
		want = max_plans;
	if (want > PLANNER_MAX_PLANS)
		want = PLANNER_MAX_PLANS;
	memset(&s, 0, sizeof(s));
	s.pol = pol;
	s.opts = opts;
	s.part = policy_find_partition(pol, req->res.partition);
	base_request(req, &base);
	rc = setup(cat, &base, &s, err, errlen);
	if (rc != PLANNER_OK)
		return rc;
	s.fixed = req->wl.fixed;
	search_limits(&s);
	s.top.want = want;
	s.top.cap = want + PLANNER_SPARE;
	plan_all(&s);
	for (i = 0; i < s.top.n && *n_out < want; i++)
		if (verify(cat, &s, &base, &s.top.c[i], &plans[*n_out]))
			(*n_out)++;
	if (*n_out == 0 && !opts->allow_warnings) {
		/* Nothing fits without a warning: the layouts that draw one
		 * (less headroom, a larger bubble, uneven stages) still run,
		 * and check accepts them with that warning, so they are the
		 * answer rather than "nothing fits". */
		struct planner_opts relaxed = *opts;

		relaxed.allow_warnings = true;
		return planner_plan(cat, pol, req, &relaxed, plans, max_plans, n_out, err, errlen);
	}
	explain(plans, *n_out);
	return PLANNER_OK;
}
