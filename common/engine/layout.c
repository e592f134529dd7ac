/*
 * layout.c - resolves a job's parallel layout and judges it against the
 * layout rules of shared/notes/model-math.md ("Layout rules").
 *
 * Hard rules (the job cannot start, reject with a fix built from the user's
 * own sizes): world = TP*PP*CP*DP (Megatron-LM initialize_model_parallel),
 * heads and KV heads and FFN divisible by TP (Shoeybi et al. 2019), the
 * expert grid ETP*EP*PP dividing the world and EP dividing the experts
 * (Megatron-Core MoE), CP needing s % 2c == 0 (load-balanced causal ring
 * attention), GBS a multiple of b*N_d, interleaving needing p > 1 (Megatron-
 * Core with its default --overlap-p2p-communication; p > 2 without it) and
 * m % p == 0 (Narayanan et al. 2021), DeepSpeed pipelines only with ZeRO <= 1
 * (DeepSpeed PipelineEngine asserts it), and the partition's max_gpus.
 *
 * Soft rules (warnings): TP across nodes, L % p != 0 (BLOOM-176B ran 70
 * layers on PP=12 and Llama 3 405B 126 layers on PP=16, so this never
 * rejects), pipeline bubble (p-1)/(m*v) over policy, SP off with TP > 1,
 * GPUs left idle, sequences longer than the model's context.
 *
 * GPU count: launchers start one rank per GPU, and Megatron and
 * torch.distributed refuse a world size that TP*PP*CP does not divide, so
 * that is GPU_COUNT_MISMATCH (reject), as is a declared dpN whose product
 * exceeds the GPUs.  A declared dpN that uses fewer GPUs than the job holds
 * runs, with GPUs idle: GPUS_IDLE (warn), as does a launch that starts
 * fewer processes than the GPUs (torchrun --nproc_per_node 1 on 8 GPUs);
 * more processes than GPUs is WORLD_SIZE_MISMATCH.
 */
#include "config.h"

#include <limits.h>

#include <stdio.h>
#include <string.h>

#include "findings.h"
#include "layout.h"
#include "util.h"

/* Micro-batches per pipeline the engine assumes without --llm-gbs. */
#define LAYOUT_DEFAULT_M_PER_STAGE 4
/* Candidate sizes scanned for "nearest valid value" fixes. */
#define LAYOUT_FIX_SCAN_MAX 4096

int layout_default_gbs(int mbs, int dp, int pp)
{
	/* The wire allows sizes up to 2^24; their product must not overflow. */
	double gbs = (double)mbs * dp * (pp > 1 ? (double)LAYOUT_DEFAULT_M_PER_STAGE * pp : 1.0);

	return gbs > INT_MAX ? INT_MAX : (int)gbs;
}

int layout_microbatches(const struct adv_job *job)
{
	long per = (long)job->mbs * job->lay.dp;
	long m = per > 0 ? job->gbs / per : 1;

	return m > 0 ? (int)m : 1;
}

double layout_bubble(const struct adv_job *job)
{
	int p = job->lay.pp, v = job->lay.vpp;

	if (p <= 1)
		return 0;
	return (double)(p - 1) / ((double)layout_microbatches(job) * (v > 0 ? v : 1));
}

/*
 * Megatron-LM's --account-for-embedding-in-pipeline-split and
 * --account-for-loss-in-pipeline-split count the input embedding and the
 * loss as one layer each, and DeepSpeed's partition method
 * 'type:transformer|embedding' (BLOOM-176B: 70 layers + 2 on 12 stages)
 * does the same: L + 1 or L + 2 layers that divide p split evenly, the first
 * and last stages holding one transformer layer fewer (Llama 3 405B: 126 +
 * 2 on 16 stages, Dubey et al. 2024, section 3.3.2).
 */
bool layout_pp_accounted(int layers, int pp)
{
	return pp > 1 && layers % pp != 0 && ((layers + 1) % pp == 0 || (layers + 2) % pp == 0);
}

int layout_stage_layers(const struct adv_job *job)
{
	int L = job->model ? job->model->layers : 0;
	int p = job->lay.pp > 0 ? job->lay.pp : 1;

	return (L + p - 1) / p;
}

/*
 * Megatron-Core's --expert-tensor-parallel-size defaults to the TP size, and
 * vLLM and SGLang shard experts over TP unless expert parallelism is
 * switched on (then each expert lives whole on its EP rank).
 */
int layout_etp_for(int task, int tp, int ep)
{
	return task == ADV_TASK_INFER && ep > 1 ? 1 : tp;
}

int layout_default_etp(const struct adv_job *job)
{
	return layout_etp_for(job->task, job->lay.tp, job->lay.ep);
}

int layout_expert_dp(const struct adv_job *job)
{
	long grid = (long)job->lay.etp * job->lay.ep * job->lay.pp;
	long e = grid > 0 ? job->lay.gpus / grid : 1;

	return e > 0 ? (int)e : 1;
}

void layout_unset(struct adv_layout *l)
{
	l->tp = l->pp = l->cp = l->ep = l->etp = l->vpp = l->dp = ADV_UNSET;
	l->sp = ADV_UNSET;
}

static int pick(int over, int given, int resolved, bool have_given)
{
	if (over != ADV_UNSET)
		return over;
	return have_given ? given : resolved;
}

void layout_format_option(const struct adv_layout *given, const struct adv_job *job,
			  const struct adv_layout *over, char *buf, size_t len)
{
	const struct adv_layout_out *r = &job->lay;
	bool hg = given != NULL;
	struct adv_layout none;
	int v[6], i, dp, prod, sp;
	bool dp_given;
	static const char *const names[] = { "tp", "pp", "cp", "ep", "etp", "vpp" };
	size_t n = 0;

	if (!given) {
		layout_unset(&none);
		given = &none;
	}
	v[0] = pick(over->tp, given->tp, r->tp, hg);
	v[1] = pick(over->pp, given->pp, r->pp, hg);
	v[2] = pick(over->cp, given->cp, r->cp, hg);
	v[3] = pick(over->ep, given->ep, r->ep, hg);
	v[4] = pick(over->etp, given->etp, r->etp, hg);
	v[5] = pick(over->vpp, given->vpp, r->vpp, hg);
	/* An ETP nobody stated follows TP (layout_resolve): not an option to print. */
	if (over->etp == ADV_UNSET && given->etp == ADV_UNSET)
		v[4] = ADV_UNSET;
	buf[0] = '\0';
	for (i = 0; i < 6; i++) {
		if (v[i] == ADV_UNSET || v[i] <= 1)
			continue;
		n += adv_snprintf(buf + n, len - n, "%s%s%d", n ? "," : "", names[i], v[i]);
	}
	dp_given = over->dp != ADV_UNSET || given->dp != ADV_UNSET;
	if (dp_given) {
		prod = (v[0] > 0 ? v[0] : 1) * (v[1] > 0 ? v[1] : 1) * (v[2] > 0 ? v[2] : 1);
		dp = over->dp != ADV_UNSET ? over->dp : prod > 0 ? r->gpus / prod : 1;
		n += adv_snprintf(buf + n, len - n, "%sdp%d", n ? "," : "", dp > 0 ? dp : 1);
	}
	sp = over->sp != ADV_UNSET ? over->sp : given->sp;
	if (sp != ADV_UNSET)
		n += adv_snprintf(buf + n, len - n, "%s%s", n ? "," : "", sp ? "sp" : "nosp");
	if (n == 0)
		adv_strlcpy(buf, "tp1", len);
}

/* ---- resolving ---------------------------------------------------------- */

static int resolve_gpn(const struct adv_request *req, const struct adv_partition *part,
		       const struct adv_gpu *gpu)
{
	if (req->res.gpus_per_node > 0)
		return req->res.gpus_per_node;
	if (req->res.gpus > 0 && req->res.nodes > 0)
		return (req->res.gpus + req->res.nodes - 1) / req->res.nodes;
	if (part && part->gpus_per_node > 0)
		return part->gpus_per_node;
	return gpu ? gpu->gpus_per_node : 0;
}

static int or_one(int v)
{
	return v == ADV_UNSET || v < 1 ? 1 : v;
}

/*
 * tp*pp*cp (tpc) and its product with dp: each size is up to 2^20
 * (options.c, convert.c), so the products are long and saturate instead of
 * overflowing (fuzz_wire: tp 276095 x dp 15360 overflowed an int).
 */
static long mul_sat(long a, long b)
{
	long p;

	return __builtin_mul_overflow(a, b, &p) ? LONG_MAX : p;
}

static void count_mismatch(struct adv_job *job, const struct adv_layout *g, long tpc,
			   struct adv_result *res)
{
	struct adv_layout over;
	char lay[96], fix[ADV_MSG_MAX];
	int gpus = job->lay.gpus;

	if (!res)
		return;
	layout_unset(&over);
	if (g->dp != ADV_UNSET && gpus % tpc == 0 && gpus >= tpc) {
		over.dp = (int)(gpus / tpc);
		layout_format_option(g, job, &over, lay, sizeof(lay));
		adv_snprintf(fix, sizeof(fix), "--llm-layout=%s, or request %ld %s", lay,
			     mul_sat(tpc, g->dp), adv_plural(mul_sat(tpc, g->dp), "GPU", "GPUs"));
	} else if (g->dp != ADV_UNSET) {
		adv_snprintf(fix, sizeof(fix), "request %ld GPUs (tp*pp*cp*dp = %d*%d*%d*%d)",
			     mul_sat(tpc, g->dp), job->lay.tp, job->lay.pp, job->lay.cp, g->dp);
	} else {
		/* The first multiple of tpc from gpus on: tpc itself when it is larger. */
		long up = tpc >= gpus ? tpc : (gpus + tpc - 1) / tpc * tpc, down = gpus / tpc * tpc;
		if (down > 0)
			adv_snprintf(fix, sizeof(fix), "request %ld or %ld GPUs (a multiple of tp*pp*cp = %ld)",
				     down, up, tpc);
		else
			adv_snprintf(fix, sizeof(fix), "request %ld GPUs (tp*pp*cp = %ld)", up, tpc);
	}
	if (g->dp != ADV_UNSET)
		engine_add_finding(res, ADV_CODE_GPU_COUNT_MISMATCH, fix,
				   "tp*pp*cp*dp = %d*%d*%d*%d = %ld %s but the job has %d %s",
				   job->lay.tp, job->lay.pp, job->lay.cp, g->dp,
				   mul_sat(tpc, g->dp), adv_plural(mul_sat(tpc, g->dp), "GPU", "GPUs"),
				   gpus, adv_plural(gpus, "GPU", "GPUs"));
	else
		engine_add_finding(res, ADV_CODE_GPU_COUNT_MISMATCH, fix,
				   "%d %s cannot be split into data-parallel groups of tp*pp*cp = %d*%d*%d = %ld GPUs",
				   gpus, adv_plural(gpus, "GPU", "GPUs"), job->lay.tp, job->lay.pp, job->lay.cp, tpc);
}

/*
 * The processes the launch starts (torchrun --nnodes x --nproc_per_node,
 * srun -n, ...) against the GPUs of the job, one process per GPU as every
 * launcher the job reader knows runs them; and, for frameworks that assert
 * it (nanotron's dp*tp*pp == world size), the declared layout against the
 * world.  Returns true when the declared layout was judged here.
 */
static bool world_check(const struct adv_request *req, struct adv_job *job, long tpc, int step_gpus,
			struct adv_result *res)
{
	const struct adv_workload *wl = &req->wl;
	const struct adv_layout *g = &wl->layout;
	struct adv_layout_out *l = &job->lay;
	int world = wl->world > 0 ? wl->world : step_gpus;
	/* A step on part of the job (srun -N 8 in a 9-node job) is held to
	 * its own nodes; one whose size is not known is not compared. */
	bool part = wl->step_nodes > 0 && wl->step_nodes < l->nodes;
	int nodes = part ? wl->step_nodes : l->nodes;
	const char *whose = part || step_gpus < l->gpus ? "its Slurm step" : "the job";
	char fix[ADV_MSG_MAX], lay[96];

	if (!res)
		return false;
	if (wl->step_nodes < 0)
		;   /* the step's nodes are chosen at run time */
	else if (wl->world_nodes > 0 && req->res.nodes > 0 && wl->world_nodes != nodes)
		engine_add_finding(res, ADV_CODE_WORLD_SIZE_MISMATCH, NULL,
				   "the launcher starts its processes on %d %s but %s has %d",
				   wl->world_nodes, adv_plural(wl->world_nodes, "node", "nodes"), whose,
				   nodes);
	else if (wl->world > 0 && wl->world < step_gpus) {
		/* Fewer processes than GPUs runs: each process takes a GPU of
		 * its node and the rest hold nothing.  Not a reject (the job
		 * works), a waste said as GPUS_IDLE. */
		adv_snprintf(fix, sizeof(fix), "start %d %s, one per GPU, or request %d %s",
			     step_gpus, adv_plural(step_gpus, "process", "processes"), wl->world,
			     adv_plural(wl->world, "GPU", "GPUs"));
		engine_add_finding(res, ADV_CODE_GPUS_IDLE, fix,
				   "the launch starts %d %s but %s has %d %s: %d %s stay idle",
				   wl->world, adv_plural(wl->world, "process", "processes"), whose,
				   step_gpus, adv_plural(step_gpus, "GPU", "GPUs"),
				   step_gpus - wl->world, adv_plural(step_gpus - wl->world, "GPU", "GPUs"));
	} else if (wl->world > 0 && wl->world != step_gpus) {
		adv_snprintf(fix, sizeof(fix), "start %d %s, one per GPU", step_gpus,
			     adv_plural(step_gpus, "process", "processes"));
		engine_add_finding(res, ADV_CODE_WORLD_SIZE_MISMATCH, fix,
				   "the launch starts %d %s but %s has %d %s: processes share GPUs",
				   wl->world, adv_plural(wl->world, "process", "processes"), whose,
				   step_gpus, adv_plural(step_gpus, "GPU", "GPUs"));
	}
	if (!wl->layout_exact || g->dp == ADV_UNSET || mul_sat(tpc, g->dp) == world)
		return false;
	fix[0] = '\0';
	if (world % tpc == 0) {
		struct adv_layout over;

		layout_unset(&over);
		over.dp = (int)(world / tpc);
		layout_format_option(g, job, &over, lay, sizeof(lay));
		adv_snprintf(fix, sizeof(fix), "--llm-layout=%s", lay);
	}
	engine_add_finding(res, ADV_CODE_WORLD_SIZE_MISMATCH, fix[0] ? fix : NULL,
			   "dp*tp*pp*cp = %d*%d*%d*%d = %ld processes, but the launch starts %d: the "
			   "framework requires them equal", g->dp, l->tp, l->pp, l->cp,
			   mul_sat(tpc, g->dp), world);
	l->dp = g->dp;
	return true;
}

int layout_resolve(const struct adv_request *req, const struct adv_partition *part,
		   struct adv_job *job, struct adv_result *res)
{
	const struct adv_layout *g = &req->wl.layout;
	struct adv_layout_out *l = &job->lay;
	long tpc;
	int step_gpus;

	l->gpus_per_node = resolve_gpn(req, part, job->gpu);
	l->gpus = req->res.gpus > 0 ? req->res.gpus
		: req->res.nodes > 0 ? req->res.nodes * l->gpus_per_node : 0;
	l->nodes = req->res.nodes > 0 ? req->res.nodes
		 : l->gpus_per_node > 0 ? (l->gpus + l->gpus_per_node - 1) / l->gpus_per_node : 1;
	l->tp = or_one(g->tp);
	l->pp = or_one(g->pp);
	l->cp = or_one(g->cp);
	l->ep = or_one(g->ep);
	job->etp_given = g->etp != ADV_UNSET;
	l->etp = job->etp_given ? g->etp : layout_default_etp(job);
	l->vpp = or_one(g->vpp);
	/* Megatron's sequence parallelism is the default with TP (see engine.c). */
	l->sp = g->sp == ADV_UNSET ? l->tp > 1 : g->sp == 1;
	job->sp_given = g->sp != ADV_UNSET;
	if (l->gpus <= 0) {
		l->dp = 1;
		if (res)
			engine_add_finding(res, ADV_CODE_NO_GPUS, NULL,
					   "the job requests no GPUs, so its LLM options cannot be checked");
		return -1;
	}
	tpc = mul_sat(mul_sat(l->tp, l->pp), l->cp);
	/* The GPUs of the launch's Slurm step: the layout's data parallelism
	 * spans those, not the nodes another step of the job uses. */
	step_gpus = req->wl.step_gpus > 0 && req->wl.step_gpus < l->gpus ? req->wl.step_gpus
		    : req->wl.step_nodes > 0 && req->wl.step_nodes < l->nodes && l->gpus_per_node > 0
		    ? req->wl.step_nodes * l->gpus_per_node : l->gpus;
	if (world_check(req, job, tpc, step_gpus, res))
		return 0;
	/* A launch of fewer processes than GPUs (GPUS_IDLE above) spreads
	 * its data parallelism over its own processes only. */
	if (req->wl.world > 0 && req->wl.world < step_gpus && req->wl.step_nodes >= 0)
		step_gpus = req->wl.world;
	if (g->dp != ADV_UNSET) {
		l->dp = g->dp;
		if (mul_sat(tpc, g->dp) > step_gpus)
			count_mismatch(job, g, tpc, res);
		else if (mul_sat(tpc, g->dp) < step_gpus && res)
			engine_add_finding(res, ADV_CODE_GPUS_IDLE, NULL,
					   "the layout uses tp*pp*cp*dp = %ld of the job's %d GPUs; %ld stay idle",
					   mul_sat(tpc, g->dp), step_gpus, step_gpus - mul_sat(tpc, g->dp));
		return 0;
	}
	l->dp = step_gpus / tpc > 0 ? (int)(step_gpus / tpc) : 1;
	if (step_gpus % tpc != 0)
		count_mismatch(job, g, tpc, res);
	return 0;
}

/* ---- hard rules ---------------------------------------------------------- */

static bool tp_ok(const struct adv_job *job, int t)
{
	const struct adv_model *m = job->model;
	int g = m->kv_heads;

	if (m->heads % t || !(g % t == 0 || t % g == 0))
		return false;
	if (m->ffn_hidden > 0 && (!m->has_moe || m->moe.dense_layers > 0) && m->ffn_hidden % t)
		return false;
	return job->lay.gpus % ((long)t * job->lay.pp * job->lay.cp) == 0;
}

static bool ep_ok(const struct adv_job *job, int e)
{
	int experts = job->model->has_moe ? job->model->moe.experts : 1;

	return experts % e == 0 &&
	       job->lay.gpus % ((long)job->lay.etp * e * job->lay.pp) == 0;
}

static bool cp_ok(const struct adv_job *job, int c)
{
	return (c == 1 || job->seq % (2 * c) == 0) &&
	       job->lay.gpus % ((long)job->lay.tp * job->lay.pp * c) == 0;
}

/* Nearest valid values above and below cur (0 when none). */
static void nearest(const struct adv_job *job, bool (*ok)(const struct adv_job *, int),
		    int cur, int limit, int *above, int *below)
{
	int v;

	*above = *below = 0;
	if (limit > LAYOUT_FIX_SCAN_MAX)
		limit = LAYOUT_FIX_SCAN_MAX;
	for (v = cur + 1; v <= limit; v++)
		if (ok(job, v)) {
			*above = v;
			break;
		}
	for (v = cur - 1; v >= 1; v--)
		if (ok(job, v)) {
			*below = v;
			break;
		}
}

/* "--llm-layout=A or --llm-layout=B" from the nearest valid values of one size. */
static void size_fix(const struct adv_job *job, const struct adv_layout *given, int *field,
		     struct adv_layout *over, int above, int below, char *fix, size_t len)
{
	char a[96], b[96];

	fix[0] = '\0';
	if (above) {
		*field = above;
		layout_format_option(given, job, over, a, sizeof(a));
	}
	if (below) {
		*field = below;
		layout_format_option(given, job, over, b, sizeof(b));
	}
	if (above && below)
		adv_snprintf(fix, len, "--llm-layout=%s or --llm-layout=%s", a, b);
	else if (above || below)
		adv_snprintf(fix, len, "--llm-layout=%s", above ? a : b);
	*field = ADV_UNSET;
}

static int check_tp(const struct adv_job *job, const struct adv_layout *given,
		    struct adv_result *res)
{
	const struct adv_model *m = job->model;
	int t = job->lay.tp, g = m->kv_heads, above, below, bad = 0;
	bool ffn_rule = m->ffn_hidden > 0 && (!m->has_moe || m->moe.dense_layers > 0);
	struct adv_layout over;
	char fix[ADV_MSG_MAX];

	bad += m->heads % t != 0;
	bad += !(g % t == 0 || t % g == 0);
	bad += ffn_rule && m->ffn_hidden % t != 0;
	if (!bad || !res)
		return bad;
	layout_unset(&over);
	nearest(job, tp_ok, t, m->heads, &above, &below);
	size_fix(job, given, &over.tp, &over, above, below, fix, sizeof(fix));
	if (m->heads % t)
		engine_add_finding(res, ADV_CODE_TP_NOT_DIVIDE_HEADS, fix,
				   "TP=%d does not divide the %d attention heads of %s", t,
				   m->heads, m->name);
	if (!(g % t == 0 || t % g == 0))
		engine_add_finding(res, ADV_CODE_TP_NOT_DIVIDE_KV_HEADS, fix,
				   "TP=%d and the %d KV heads of %s: one must divide the other",
				   t, g, m->name);
	if (ffn_rule && m->ffn_hidden % t)
		engine_add_finding(res, ADV_CODE_TP_NOT_DIVIDE_FFN, fix,
				   "TP=%d does not divide the FFN hidden size %d of %s", t,
				   m->ffn_hidden, m->name);
	return bad;
}

static int check_experts(const struct adv_job *job, const struct adv_layout *given,
			 struct adv_result *res)
{
	const struct adv_model *m = job->model;
	const struct adv_layout_out *l = &job->lay;
	int experts = m->has_moe ? m->moe.experts : 1, above, below, bad = 0;
	long grid = (long)l->etp * l->ep * l->pp;
	struct adv_layout over;
	char fix[ADV_MSG_MAX];

	layout_unset(&over);
	if (experts % l->ep) {
		bad++;
		if (res) {
			nearest(job, ep_ok, l->ep, experts, &above, &below);
			size_fix(job, given, &over.ep, &over, above, below, fix, sizeof(fix));
			if (m->has_moe)
				engine_add_finding(res, ADV_CODE_EP_NOT_DIVIDE_EXPERTS, fix,
						   "EP=%d does not divide the %d experts of %s",
						   l->ep, experts, m->name);
			else
				engine_add_finding(res, ADV_CODE_EP_NOT_DIVIDE_EXPERTS, fix,
						   "%s is a dense model without experts; EP must be 1 (got %d)",
						   m->name, l->ep);
		}
	} else if (m->has_moe && l->gpus % grid) {
		/* Dense models have no expert grid: the TP/PP count check covers it. */
		bad++;
		if (res) {
			nearest(job, ep_ok, l->ep, experts, &above, &below);
			size_fix(job, given, &over.ep, &over, above, below, fix, sizeof(fix));
			engine_add_finding(res, ADV_CODE_EP_GRID_NOT_DIVIDE_GPUS, fix,
					   "the expert grid etp*ep*pp = %d*%d*%d = %ld does not divide %d GPUs",
					   l->etp, l->ep, l->pp, grid, l->gpus);
		}
	}
	return bad;
}

static int check_cp(const struct adv_job *job, const struct adv_layout *given,
		    struct adv_result *res)
{
	int c = job->lay.cp, above, below;
	struct adv_layout over;
	char fix[ADV_MSG_MAX];
	size_t n;

	if (c <= 1 || job->seq % (2 * c) == 0)
		return 0;
	if (!res)
		return 1;
	layout_unset(&over);
	nearest(job, cp_ok, c, job->seq / 2, &above, &below);
	size_fix(job, given, &over.cp, &over, above, below, fix, sizeof(fix));
	n = strlen(fix);
	adv_snprintf(fix + n, sizeof(fix) - n, "%s--llm-seq=%d", n ? " or " : "",
		     (job->seq + 2 * c - 1) / (2 * c) * (2 * c));
	engine_add_finding(res, ADV_CODE_CP_SEQ_NOT_DIVISIBLE, fix,
			   "context parallelism CP=%d needs the sequence length to be a multiple of 2*CP = %d (got %d)",
			   c, 2 * c, job->seq);
	return 1;
}

static void gbs_fix(long unit, int gbs, char *fix, size_t len)
{
	long down = gbs / unit * unit, up = down + unit;

	if (down > 0)
		adv_snprintf(fix, len, "--llm-gbs=%ld or --llm-gbs=%ld", up, down);
	else
		adv_snprintf(fix, len, "--llm-gbs=%ld", up);
}

static int check_batch(const struct adv_job *job, const struct adv_layout *given,
		       struct adv_result *res)
{
	const struct adv_layout_out *l = &job->lay;
	long unit = (long)job->mbs * l->dp;
	int m = layout_microbatches(job), bad = 0;
	char fix[ADV_MSG_MAX];
	struct adv_layout over;

	if (job->gbs_given && job->gbs % unit) {
		bad++;
		if (res) {
			gbs_fix(unit, job->gbs, fix, sizeof(fix));
			engine_add_finding(res, ADV_CODE_GBS_NOT_DIVISIBLE, fix,
					   "global batch %d is not a multiple of mbs*dp = %d*%d = %ld",
					   job->gbs, job->mbs, l->dp, unit);
		}
	}
	if (l->vpp > 1 && (l->pp < 2 || m % l->pp)) {
		bad++;
		if (!res)
			return bad;
		layout_unset(&over);
		over.vpp = 1;
		if (l->pp < 2) {
			char lay[96];
			layout_format_option(given, job, &over, lay, sizeof(lay));
			adv_snprintf(fix, sizeof(fix), "--llm-layout=%s", lay);
			engine_add_finding(res, ADV_CODE_VPP_INVALID, fix,
					   "interleaved pipelining (vpp=%d) needs PP > 1 (got PP=%d)",
					   l->vpp, l->pp);
		} else {
			gbs_fix(unit * l->pp, job->gbs, fix, sizeof(fix));
			engine_add_finding(res, ADV_CODE_VPP_INVALID, fix,
					   "interleaved pipelining (vpp=%d) needs the %d micro-batches per step to be a multiple of PP=%d",
					   l->vpp, m, l->pp);
		}
	}
	return bad;
}

static int check_framework(const struct adv_job *job, const struct adv_layout *given,
			   struct adv_result *res)
{
	struct adv_layout over;
	char lay[96], fix[ADV_MSG_MAX];

	if (job->framework != ADV_FW_DEEPSPEED || job->lay.pp <= 1 || job->lay.zero < 2 ||
	    job->task == ADV_TASK_INFER)
		return 0;
	if (!res)
		return 1;
	layout_unset(&over);
	over.pp = 1;
	over.vpp = 1;
	layout_format_option(given, job, &over, lay, sizeof(lay));
	adv_snprintf(fix, sizeof(fix), "--llm-zero=1 or --llm-layout=%s", lay);
	engine_add_finding(res, ADV_CODE_ZERO_WITH_PIPELINE, fix,
			   "DeepSpeed's pipeline engine (PP=%d) supports ZeRO stage 0 or 1 only (got %d)",
			   job->lay.pp, job->lay.zero);
	return 1;
}

static int check_policy(const struct adv_job *job, const struct adv_partition *part,
			struct adv_result *res)
{
	long tpc = (long)job->lay.tp * job->lay.pp * job->lay.cp;
	long fit;
	char fix[ADV_MSG_MAX];

	if (!part || part->max_gpus <= 0 || job->lay.gpus <= part->max_gpus)
		return 0;
	if (!res)
		return 1;
	fit = part->max_gpus / tpc * tpc;
	if (fit > 0)
		adv_snprintf(fix, sizeof(fix), "request at most %ld GPUs (--gpus=%ld)", fit, fit);
	else
		adv_snprintf(fix, sizeof(fix), "use another partition");
	engine_add_finding(res, ADV_CODE_POLICY_MAX_GPUS, fix,
			   "partition %s allows at most %d GPUs per job (requested %d)",
			   part->name, part->max_gpus, job->lay.gpus);
	return 1;
}

/* ---- soft rules ---------------------------------------------------------- */

static void check_soft(const struct adv_job *job, const struct adv_layout *given,
		       const struct adv_policy *pol, struct adv_result *res)
{
	const struct adv_layout_out *l = &job->lay;
	const struct adv_model *m = job->model;
	struct adv_layout over;
	char lay[96], fix[ADV_MSG_MAX];
	double bubble;

	layout_unset(&over);
	if (l->gpus_per_node > 0 && l->tp > l->gpus_per_node) {
		fix[0] = '\0';
		if (l->tp % l->gpus_per_node == 0) {
			over.tp = l->gpus_per_node;
			over.pp = l->pp * (l->tp / l->gpus_per_node);
			layout_format_option(given, job, &over, lay, sizeof(lay));
			adv_snprintf(fix, sizeof(fix), "--llm-layout=%s", lay);
			layout_unset(&over);
		}
		engine_add_finding(res, ADV_CODE_TP_CROSSES_NODE, fix[0] ? fix : NULL,
				   "TP=%d spans more than the %d GPUs of one node: tensor-parallel traffic crosses the slower inter-node network",
				   l->tp, l->gpus_per_node);
	}
	if (m && l->pp > 1 && m->layers % l->pp && layout_pp_accounted(m->layers, l->pp))
		engine_add_finding_sev(res, ADV_CODE_PP_UNEVEN_LAYERS, ADV_SEV_INFO,
				       "Megatron-LM: --account-for-embedding-in-pipeline-split "
				       "--account-for-loss-in-pipeline-split; DeepSpeed: "
				       "partition_method type:transformer|embedding",
				       "%d layers split evenly over PP=%d once the embedding and the "
				       "loss count as layers (as BLOOM-176B and Llama 3 405B ran): the "
				       "first and last stages hold one layer fewer", m->layers, l->pp);
	else if (m && l->pp > 1 && m->layers % l->pp)
		engine_add_finding(res, ADV_CODE_PP_UNEVEN_LAYERS, NULL,
				   "%d layers do not split evenly over PP=%d: stages hold %d or %d layers; memory is computed for the most loaded stage",
				   m->layers, l->pp, m->layers / l->pp, layout_stage_layers(job));
	bubble = layout_bubble(job);
	if (job->gbs_given && l->pp > 1 && job->task != ADV_TASK_INFER &&
	    bubble > pol->max_pipeline_bubble) {
		/* The smallest GBS that brings the bubble under the limit. */
		long unit = (long)job->mbs * l->dp;
		double need_m = (l->pp - 1) / (pol->max_pipeline_bubble * l->vpp);
		long m_ok = (long)need_m + 1;
		adv_snprintf(fix, sizeof(fix), "--llm-gbs=%ld", m_ok * unit);
		engine_add_finding(res, ADV_CODE_PIPELINE_BUBBLE, fix,
				   "pipeline bubble (p-1)/(m*v) = %d/(%d*%d): the pipeline idles for %.0f%% of the compute time (policy limit %.0f%%)",
				   l->pp - 1, layout_microbatches(job), l->vpp, bubble * 100,
				   pol->max_pipeline_bubble * 100);
	}
	if (l->tp > 1 && job->sp_given && !l->sp) {
		over.sp = 1;
		layout_format_option(given, job, &over, lay, sizeof(lay));
		adv_snprintf(fix, sizeof(fix), "--llm-layout=%s", lay);
		engine_add_finding(res, ADV_CODE_SP_OFF_WITH_TP, fix,
				   "sequence parallelism is off with TP=%d: activations outside attention and MLP are replicated on every TP rank",
				   l->tp);
	}
	if (m && m->max_seq > 0 && job->seq > m->max_seq) {
		adv_snprintf(fix, sizeof(fix), "--llm-seq=%d", m->max_seq);
		engine_add_finding(res, ADV_CODE_SEQ_EXCEEDS_MAX, fix,
				   "sequence length %d is longer than the %d tokens %s was trained for",
				   job->seq, m->max_seq, m->name);
	}
}

int layout_check(const struct adv_job *job, const struct adv_layout *given,
		 const struct adv_policy *pol, const struct adv_partition *part,
		 struct adv_result *res)
{
	int bad = 0;

	if (job->lay.gpus <= 0)
		return 0;
	bad += check_policy(job, part, res);
	if (job->model) {
		bad += check_tp(job, given, res);
		bad += check_experts(job, given, res);
	}
	bad += check_cp(job, given, res);
	bad += check_batch(job, given, res);
	bad += check_framework(job, given, res);
	if (res)
		check_soft(job, given, pol, res);
	return bad;
}
