/*
 * engine.c - the advisor engine: one job's resources and workload in, a
 * verdict with findings, memory, checkpoint and estimate figures out.
 *
 * The order follows the data: resolve names and defaults, resolve the
 * layout (layout.c), judge its rules, compute memory (memory.c), the
 * checkpoint interval (checkpoint.c) and estimates (estimate.c), then apply
 * the policy's mode.  evaluate.c judges one job; this file adds what only a
 * whole check does: the user's mode, the job reader's findings first and
 * the best plan of a rejected job.  No allocation and no I/O here, so the daemon, the CLI
 * and the benchmarks get the same answer at the same cost.
 *
 * Defaults when an option is not given (documented in advisorctl(1)):
 * - precision bf16, task train, framework generic, micro-batch 1;
 * - attention flash: every current framework (Megatron-Core with
 *   Transformer Engine, PyTorch SDPA, FlashAttention, DeepSpeed) runs a
 *   fused, memory-efficient attention kernel by default, which never
 *   stores the s x s attention scores, whatever the recompute mode;
 *   --llm-attention=eager models unfused attention, which keeps them
 *   (Korthikanti's 5as/h term, memory.c);
 * - recompute selective (with flash attention its memory is that of
 *   recompute none: every activation but the scores, which flash
 *   attention does not store anyway);
 * - sequence min(model max_seq, 4096);
 * - ZeRO 0 (plain data parallel, Megatron's and DeepSpeed's default), but 3
 *   with --llm-framework=fsdp (FULL_SHARD), and none for inference;
 * - sequence parallelism on when TP > 1 (Megatron's recommended setting);
 * - global batch: m = 4 * PP micro-batches per pipeline (see layout.c), and
 *   batch-dependent rules (GBS divisibility, bubble) are only judged when
 *   --llm-gbs is given.
 * A job rejected for a cause another layout can remove also gets a
 * BEST_PLAN finding (warning) whose fix is the planner's best plan for its
 * GPUs (planner.c); the rule-specific fixes stay as they are.
 * Serving (task infer): no checkpoint figures or findings (a server keeps
 * no training state); serving.c gives the KV capacity and the prefill and
 * decode rooflines, and KV_CAPACITY_LOW warns when fewer than
 * max(1, --llm-mbs) sequences of --llm-seq tokens fit.
 * A reject that rests on one of these defaults, where neither the job nor
 * an option states the value, becomes a warning that says so
 * (provenance.c; issue 18).
 * Severity choices: GPU_TYPE_UNKNOWN is a warning (the job may be fine; the
 * catalog lacks its GPU), MODEL_UNKNOWN a reject (the user can fix the name).
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "engine.h"
#include "evaluate.h"
#include "findings.h"
#include "fixcheck.h"
#include "layout.h"
#include "planner.h"
#include "provenance.h"
#include "util.h"

void engine_request_init(struct adv_request *req)
{
	memset(req, 0, sizeof(*req));
	layout_unset(&req->wl.layout);
	req->wl.zero = ADV_UNSET;
	req->wl.precision = ADV_UNSET;
	req->wl.seq = req->wl.mbs = req->wl.gbs = ADV_UNSET;
	req->wl.recompute = ADV_UNSET;
	req->wl.task = ADV_UNSET;
	req->wl.framework = ADV_UNSET;
	req->wl.mode = ADV_UNSET;
	req->wl.world = req->wl.world_nodes = ADV_UNSET;
	req->wl.attention = ADV_UNSET;
	req->wl.prefill_chunk = ADV_UNSET;
	req->wl.grad_dtype = req->wl.optim_bytes = ADV_UNSET;
	req->wl.mem_share = req->wl.kv_dtype = req->wl.weights = ADV_UNSET;
}

/* A partition list's mode is its strictest partition's, and the result
 * names that partition (issue 20). */
static enum adv_mode resolve_mode(const struct adv_policy *pol, const struct adv_request *req,
				  struct adv_result *res, bool *denied)
{
	char by[ADV_NAME_MAX];
	enum adv_mode mode = policy_mode_list(pol, req->res.partition, by, sizeof(by));

	*denied = false;
	if (policy_is_exempt(pol, req->user, req->account)) {
		/* The user's entry first: it is the one an admin looks for. */
		if (policy_is_exempt(pol, req->user, NULL))
			adv_snprintf(res->exempt, sizeof(res->exempt), "user %s", req->user);
		else
			adv_snprintf(res->exempt, sizeof(res->exempt), "account %s", req->account);
		return ADV_MODE_OFF;
	}
	if (req->wl.mode != ADV_UNSET) {
		if (pol->user_mode_override)
			return (enum adv_mode)req->wl.mode;
		*denied = true;
	}
	if (strchr(req->res.partition, ','))
		adv_strlcpy(res->mode_partition, by, sizeof(res->mode_partition));
	/* A partition's own `mode: off` exempts its jobs; the global mode off is no exemption. */
	if (mode == ADV_MODE_OFF && by[0]) {
		const struct adv_partition *part = policy_find_partition(pol, by);

		if (part && part->has_mode)
			adv_snprintf(res->exempt, sizeof(res->exempt), "partition %s", by);
	}
	return mode;
}

/* Reject-level causes that another layout or workload setting can remove. */
static bool plan_fixable(const struct adv_result *res)
{
	static const enum adv_code codes[] = {
		ADV_CODE_GPU_COUNT_MISMATCH, ADV_CODE_TP_NOT_DIVIDE_HEADS,
		ADV_CODE_TP_NOT_DIVIDE_KV_HEADS, ADV_CODE_TP_NOT_DIVIDE_FFN,
		ADV_CODE_EP_NOT_DIVIDE_EXPERTS, ADV_CODE_EP_GRID_NOT_DIVIDE_GPUS,
		ADV_CODE_CP_SEQ_NOT_DIVISIBLE, ADV_CODE_GBS_NOT_DIVISIBLE, ADV_CODE_VPP_INVALID,
		ADV_CODE_ZERO_WITH_PIPELINE, ADV_CODE_MEM_OVER_CAPACITY,
	};
	int i;
	size_t k;

	for (i = 0; i < res->n_findings; i++) {
		if (res->findings[i].severity != ADV_SEV_REJECT)
			continue;
		for (k = 0; k < ADV_ARRAY_SIZE(codes); k++)
			if (engine_finding_is(&res->findings[i], codes[k]))
				return true;
	}
	return false;
}

/* "3,100" */
static void format_count(double v, char *buf, size_t len)
{
	char digits[32];
	size_t n, i, o = 0;

	adv_snprintf(digits, sizeof(digits), "%.0f", v > 0 ? v : 0);
	n = strlen(digits);
	for (i = 0; i < n && o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

/*
 * A rejected job also gets the best plan that fits its GPUs (BEST_PLAN):
 * the rule-by-rule fixes above name the nearest valid value of one size,
 * which may still break another rule or not fit; the plan passes them all.
 * It is a warning so that every front end shows it next to the rejection.
 * Plans that draw warnings are offered only when no clean plan exists.
 */
static void add_best_plan(const catalog_t *cat, const struct adv_policy *pol,
			  const struct adv_request *req, struct adv_result *res)
{
	struct planner_opts opts;
	struct planner_plan plan;
	char opt[PLANNER_OPTS_MAX], tps[32], fix[ADV_MSG_MAX];
	int n = 0;

	if (!res->has_memory || !plan_fixable(res))
		return;
	planner_opts_init(&opts);
	opts.top = 1;
	if (planner_plan(cat, pol, req, &opts, &plan, 1, &n, NULL, 0) != PLANNER_OK)
		return;
	if (n == 0) {
		opts.allow_warnings = true;
		if (planner_plan(cat, pol, req, &opts, &plan, 1, &n, NULL, 0) != PLANNER_OK ||
		    n == 0)
			return;
	}
	planner_plan_options(&plan, opt, sizeof(opt));
	format_count(plan.estimate.tokens_per_s, tps, sizeof(tps));
	adv_snprintf(fix, sizeof(fix), "%s (%.1f GiB per GPU, est. %s tokens/s)", opt,
		     plan.memory.per_gpu_gib, tps);
	engine_add_finding(res, ADV_CODE_BEST_PLAN, fix,
			   "the fastest layout of %s on these %d %s that passes every rule%s (advisorctl plan lists more)",
			   /* An inline model (the job's own config) has no name. */
			   req->wl.model[0] ? req->wl.model : "this model", plan.layout.gpus,
			   adv_plural(plan.layout.gpus, "GPU", "GPUs"),
			   plan.verdict == ADV_ACCEPT ? "" : " (with warnings)");
}

/*
 * The policy's require: (issue 26): a site that wants users to state a
 * setting rejects the job that leaves it to an assumption, and says so,
 * instead of judging it on advisor's guess.  The job's text, an --llm-*
 * option and a framework's documented default state it.  A job with no
 * model is not an LLM job to hold to it; a server is not asked for what
 * only training has.
 */
static void require_stated(const struct adv_policy *pol, const struct adv_request *req,
			   struct adv_result *res)
{
	bool infer = req->wl.task == ADV_TASK_INFER;

	if (!req->wl.model[0] && !req->wl.has_arch)
		return;
	for (size_t i = 0; i < pol->n_require; i++) {
		int f;

		for (f = 0; f < ADV_F_COUNT; f++)
			if (!strcmp(pol->require[i], provenance_field_name((enum adv_field)f)))
				break;
		if (f == ADV_F_COUNT)
			continue;
		if (infer && (f == ADV_F_ZERO || f == ADV_F_RECOMPUTE || f == ADV_F_GBS ||
			      f == ADV_F_CKPT || f == ADV_F_GRAD_DTYPE))
			continue;
		if (res->from[f] == ADV_FROM_JOB || res->from[f] == ADV_FROM_OPTION ||
		    res->from[f] == ADV_FROM_FRAMEWORK)
			continue;
		if (res->n_findings < ADV_MAX_FINDINGS) {
			char fix[ADV_MSG_MAX];

			adv_snprintf(fix, sizeof(fix), "state it: --llm-%s=VALUE, or the job's own flag",
				     provenance_option((enum adv_field)f));
			engine_add_finding(res, ADV_CODE_VALUE_REQUIRED, fix,
					   "the site policy requires every job to state %s (require:), "
					   "and this job does not", pol->require[i]);
			res->findings[res->n_findings - 1].uses = ADV_USES(f);
		}
	}
}

void engine_judge(const catalog_t *cat, const struct adv_policy *pol,
		  const struct adv_request *req, struct adv_result *res)
{
	provenance_resolve(req, res);
	require_stated(pol, req, res);
	evaluate_job(cat, pol, req, res);
	/* Never reject on a guess (provenance.c), before the plan: a job
	 * that is no longer rejected needs none. */
	provenance_guard(cat, pol, req, res, 0);
}

void engine_check(const catalog_t *cat, const struct adv_policy *pol,
		  const struct adv_request *req, struct adv_result *res)
{
	bool denied;
	int judged_from;

	/* The findings array is written as it fills; clearing it costs more
	 * than the rest of a check. */
	memset(res, 0, offsetof(struct adv_result, findings));
	res->mode = resolve_mode(pol, req, res, &denied);
	if (res->mode == ADV_MODE_OFF) {
		res->verdict = ADV_ACCEPT;
		return;
	}
	for (int i = 0; i < req->n_pre && req->pre; i++) {
		if (res->n_findings >= ADV_MAX_FINDINGS)
			break;
		res->findings[res->n_findings] = req->pre[i];
		/* What the reader could not follow weighs as the site says. */
		if (engine_finding_is(&req->pre[i], ADV_CODE_SCRIPT_NOT_FOLLOWED))
			res->findings[res->n_findings].severity =
				(enum adv_severity)pol->reader_not_followed;
		res->n_findings++;
	}
	/* -p a,b with other GPUs in b: the job may run on either. */
	if (req->res.gpus_differ[0])
		engine_add_finding(res, ADV_CODE_PARTITION_GPUS_DIFFER,
				   "name one partition (-p) or the GPU type (--gres=gpu:TYPE:N)", "%s",
				   req->res.gpus_differ);
	if (denied)
		engine_add_finding(res, ADV_CODE_POLICY_MODE_OVERRIDE_DENIED,
				   "remove --llm-advisor",
				   "site policy does not let users choose the advisor mode (--llm-advisor=%s)",
				   policy_mode_name((enum adv_mode)req->wl.mode));
	judged_from = res->n_findings;
	engine_judge(cat, pol, req, res);
	/* Every fix printed has been applied and judged again. */
	fixcheck_run(cat, pol, req, res, judged_from);
	add_best_plan(cat, pol, req, res);
	evaluate_apply_mode(res);
}
