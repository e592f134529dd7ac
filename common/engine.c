/*
 * engine.c - the advisor engine: one job's resources and workload in, a
 * verdict with findings, memory, checkpoint and estimate figures out.
 *
 * The order follows the data: resolve names and defaults, resolve the
 * layout (layout.c), judge its rules, compute memory (memory.c), the
 * checkpoint interval (checkpoint.c) and estimates (estimate.c), then apply
 * the policy's mode.  No allocation and no I/O here, so the daemon, the CLI
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
 * Severity choices: GPU_TYPE_UNKNOWN is a warning (the job may be fine; the
 * catalog lacks its GPU), MODEL_UNKNOWN a reject (the user can fix the name).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "checkpoint.h"
#include "engine.h"
#include "estimate.h"
#include "layout.h"
#include "memory.h"
#include "options.h"
#include "planner.h"
#include "serving.h"
#include "util.h"

#define ENGINE_DEFAULT_SEQ 4096
#define ENGINE_SUGGESTIONS 3
#define WARN_MODE_NOTE " [not enforced: advisor mode warn]"

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
}

void engine_add_finding(struct adv_result *res, const char *code, enum adv_severity sev,
			const char *fix, const char *fmt, ...)
{
	struct adv_finding *f;
	va_list ap;

	if (!res || res->n_findings >= ADV_MAX_FINDINGS)
		return;
	f = &res->findings[res->n_findings++];
	adv_strlcpy(f->code, code, sizeof(f->code));
	f->severity = sev;
	adv_strlcpy(f->fix, fix ? fix : "", sizeof(f->fix));
	/* The job reader fills it afterwards, when there is a job text. */
	f->fix_job[0] = '\0';
	va_start(ap, fmt);
	adv_vsnprintf(f->message, sizeof(f->message), fmt, ap);
	va_end(ap);
}

bool engine_has_finding(const struct adv_result *res, const char *code)
{
	int i;

	for (i = 0; i < res->n_findings; i++)
		if (!strcmp(res->findings[i].code, code))
			return true;
	return false;
}

static const char *name_at(const char *const *names, size_t n, int i)
{
	return i >= 0 && (size_t)i < n ? names[i] : "unknown";
}

const char *engine_verdict_name(enum adv_verdict v)
{
	static const char *const n[] = { "accept", "warn", "reject" };
	return name_at(n, ADV_ARRAY_SIZE(n), (int)v);
}

const char *engine_severity_name(enum adv_severity s)
{
	static const char *const n[] = { "info", "warn", "reject" };
	return name_at(n, ADV_ARRAY_SIZE(n), (int)s);
}

const char *engine_precision_name(int p)
{
	return name_at(options_precision_names, 4, p);
}

const char *engine_recompute_name(int r)
{
	return name_at(options_recompute_names, 3, r);
}

const char *engine_task_name(int t)
{
	return name_at(options_task_names, 4, t);
}

const char *engine_framework_name(int f)
{
	return name_at(options_framework_names, 4, f);
}

const char *engine_attention_name(int a)
{
	return name_at(options_attention_names, 2, a);
}

const char *engine_context_name(enum adv_context c)
{
	static const char *const n[] = { "advisorctl", "sbatch", "salloc", "srun", "step" };
	return name_at(n, ADV_ARRAY_SIZE(n), (int)c);
}

void engine_layout_string(const struct adv_layout_out *l, char *buf, size_t len)
{
	adv_snprintf(buf, len, "tp%d.pp%d.cp%d.ep%d.dp%d", l->tp, l->pp, l->cp, l->ep, l->dp);
}

/* ---- names ---------------------------------------------------------------- */

/* Case-insensitive edit distance, for "did you mean" suggestions. */
static int edit_distance(const char *a, const char *b)
{
	int row[ADV_NAME_MAX * 2 + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > ADV_NAME_MAX * 2)
		la = ADV_NAME_MAX * 2;
	if (lb > ADV_NAME_MAX * 2)
		lb = ADV_NAME_MAX * 2;

	for (j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = (a[i - 1] | 32) == (b[j - 1] | 32) ? 0 : 1;
			int best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static void suggest_models(const catalog_t *cat, const char *name, char *fix, size_t len)
{
	const char *best[ENGINE_SUGGESTIONS] = { 0 };
	int dist[ENGINE_SUGGESTIONS] = { 0 };
	size_t i, n = catalog_model_count(cat), used = 0;
	int k, j;

	for (i = 0; i < n; i++) {
		const char *cand = catalog_model_at(cat, i)->name;
		int d = edit_distance(name, cand);
		for (k = 0; k < ENGINE_SUGGESTIONS; k++) {
			if (!best[k] || d < dist[k]) {
				for (j = ENGINE_SUGGESTIONS - 1; j > k; j--) {
					best[j] = best[j - 1];
					dist[j] = dist[j - 1];
				}
				best[k] = cand;
				dist[k] = d;
				break;
			}
		}
	}
	fix[0] = '\0';
	for (k = 0; k < ENGINE_SUGGESTIONS && best[k]; k++)
		used += adv_snprintf(fix + used, len - used, "%s--llm-model=%s",
				     k ? " or " : "", best[k]);
}

static const struct adv_gpu *resolve_gpu(const catalog_t *cat, const struct adv_request *req,
					 const struct adv_partition *part, struct adv_result *res)
{
	const char *name = req->res.gpu[0] ? req->res.gpu : part && part->gpu[0] ? part->gpu : "";
	const struct adv_gpu *gpu = name[0] ? catalog_find_gpu(cat, name) : NULL;

	if (!gpu)
		engine_add_finding(res, "GPU_TYPE_UNKNOWN", ADV_SEV_WARN, NULL,
				   name[0] ? "GPU type '%s' is not in the catalog; memory and estimates are not checked"
					   : "the job's GPU type is not known%s; memory and estimates are not checked",
				   name);
	return gpu;
}

static const struct adv_model *resolve_model(const catalog_t *cat, const struct adv_request *req,
					     struct adv_result *res)
{
	const struct adv_model *m;
	char fix[ADV_MSG_MAX];

	if (!req->wl.model[0] && req->wl.has_arch)
		return &req->wl.arch;
	if (!req->wl.model[0]) {
		engine_add_finding(res, "MODEL_NOT_GIVEN", ADV_SEV_INFO, "--llm-model=NAME",
				   "no --llm-model: only the layout is checked, not memory, checkpoints or estimates");
		return NULL;
	}
	m = catalog_find_model(cat, req->wl.model);
	if (!m && res && req->wl.model_read) {
		/* The job's own model name: the user typed no option to correct,
		 * and the job may well work; say what is not checked. */
		engine_add_finding(res, "MODEL_UNKNOWN", ADV_SEV_INFO,
				   "--llm-model=NAME, or add the model to the catalog",
				   "the job's model '%s' is not in the catalog: memory, checkpoints and "
				   "estimates are not checked", req->wl.model);
	} else if (!m && res) {
		suggest_models(cat, req->wl.model, fix, sizeof(fix));
		engine_add_finding(res, "MODEL_UNKNOWN", ADV_SEV_REJECT, fix[0] ? fix : NULL,
				   "model '%s' is not in the catalog (advisorctl catalog models lists it)",
				   req->wl.model);
	}
	return m;
}

static int or_default(int v, int def)
{
	return v == ADV_UNSET ? def : v;
}

static void resolve_workload(const struct adv_request *req, struct adv_job *job)
{
	const struct adv_workload *wl = &req->wl;
	int max_seq = job->model && job->model->max_seq > 0 ? job->model->max_seq : ENGINE_DEFAULT_SEQ;

	job->precision = or_default(wl->precision, ADV_PREC_BF16);
	job->recompute = or_default(wl->recompute, ADV_RECOMPUTE_SELECTIVE);
	job->task = or_default(wl->task, ADV_TASK_TRAIN);
	job->framework = or_default(wl->framework, ADV_FW_GENERIC);
	job->seq = or_default(wl->seq, max_seq < ENGINE_DEFAULT_SEQ ? max_seq : ENGINE_DEFAULT_SEQ);
	job->mbs = or_default(wl->mbs, 1);
	job->attention = or_default(wl->attention, ADV_ATTN_FLASH);
	job->prefill_chunk = or_default(wl->prefill_chunk, 0);
	job->lay.zero = or_default(wl->zero, job->framework == ADV_FW_FSDP ? 3 : 0);
	if (job->task == ADV_TASK_INFER)
		job->lay.zero = 0;
}

static void check_precision(const struct adv_job *job, struct adv_result *res)
{
	if (job->gpu && job->precision == ADV_PREC_FP8 && job->gpu->fp8_tflops <= 0)
		engine_add_finding(res, "FP8_UNSUPPORTED", ADV_SEV_REJECT, "--llm-precision=bf16",
				   "%s has no fp8 tensor cores", job->gpu->name);
}

/* ---- mode and verdict --------------------------------------------------------- */

static enum adv_mode resolve_mode(const struct adv_policy *pol, const struct adv_request *req,
				  bool *denied)
{
	enum adv_mode mode = policy_mode_for(pol, req->res.partition);

	*denied = false;
	if (policy_is_exempt(pol, req->user, req->account))
		return ADV_MODE_OFF;
	if (req->wl.mode != ADV_UNSET) {
		if (pol->user_mode_override)
			return (enum adv_mode)req->wl.mode;
		*denied = true;
	}
	return mode;
}

static void apply_mode(struct adv_result *res)
{
	enum adv_severity worst = ADV_SEV_INFO;
	int i;

	for (i = 0; i < res->n_findings; i++) {
		struct adv_finding *f = &res->findings[i];
		if (res->mode == ADV_MODE_WARN && f->severity == ADV_SEV_REJECT) {
			f->severity = ADV_SEV_WARN;
			adv_strlcat(f->message, WARN_MODE_NOTE, sizeof(f->message));
		}
		if (f->severity > worst)
			worst = f->severity;
	}
	res->verdict = worst == ADV_SEV_REJECT ? ADV_REJECT
		     : worst == ADV_SEV_WARN ? ADV_WARN : ADV_ACCEPT;
}

static void fill_workload(struct adv_result *res, const struct adv_job *job)
{
	res->precision = job->precision;
	res->recompute = job->recompute;
	res->task = job->task;
	res->framework = job->framework;
	res->seq = job->seq;
	res->mbs = job->mbs;
	res->gbs = job->gbs;
	res->attention = job->attention;
}

int engine_resolve(const catalog_t *cat, const struct adv_request *req,
		   const struct adv_partition *part, struct adv_job *job, struct adv_result *res)
{
	memset(job, 0, sizeof(*job));
	job->gpu = resolve_gpu(cat, req, part, res);
	job->model = resolve_model(cat, req, res);
	if (job->model)
		catalog_model_params(job->model, &job->params);
	resolve_workload(req, job);
	if (layout_resolve(req, part, job, res) != 0)
		return -1;
	job->gbs_given = req->wl.gbs != ADV_UNSET;
	job->gbs = job->gbs_given ? req->wl.gbs
		: layout_default_gbs(job->mbs, job->lay.dp, job->lay.pp);
	return 0;
}

/*
 * A checkpoint interval the job states in optimizer steps (Megatron's
 * --save-interval, HF's --save_steps) becomes time through the step-time
 * estimate, and an info finding says so; without an estimate the interval
 * is not known and the job is judged as one that states none.
 */
static const struct adv_ckpt_req *ckpt_in_time(const struct adv_ckpt_req *in,
					       struct adv_result *res, struct adv_ckpt_req *tmp)
{
	char d[32];

	if (in->steps <= 0 || in->off)
		return in;
	*tmp = *in;
	if (!res->has_estimate || res->estimate.step_time_s <= 0) {
		tmp->given = false;
		engine_add_finding(res, "CKPT_STEPS", ADV_SEV_INFO, "--llm-ckpt=DURATION",
				   "the job checkpoints every %ld steps, but its step time cannot be "
				   "estimated, so the interval is not judged", in->steps);
		return tmp;
	}
	tmp->interval_s = (double)in->steps * res->estimate.step_time_s;
	options_format_duration(tmp->interval_s, d, sizeof(d));
	engine_add_finding(res, "CKPT_STEPS", ADV_SEV_INFO, NULL,
			   "the job checkpoints every %ld steps: about %s at the estimated %.2f s per step",
			   in->steps, d, res->estimate.step_time_s);
	return tmp;
}

/* Resolution, layout rules, memory, estimates and checkpoint of one job. */
static void evaluate(const catalog_t *cat, const struct adv_policy *pol,
		     const struct adv_request *req, struct adv_result *res)
{
	const struct adv_partition *part = policy_find_partition(pol, req->res.partition);
	struct adv_job job;
	struct adv_memory mem;
	struct adv_ckpt_req ck;

	if (engine_resolve(cat, req, part, &job, res) != 0)
		return;
	res->has_layout = true;
	res->layout = job.lay;
	fill_workload(res, &job);
	check_precision(&job, res);
	layout_check(&job, &req->wl.layout, pol, part, res);
	if (!job.model)
		return;
	memory_estimate(&job, pol, &mem);
	if (job.gpu) {
		res->memory = mem;
		res->has_memory = true;
		memory_check(&job, pol, &req->wl.layout, &mem, res);
		estimate_step(&job, pol, req->wl.tokens, &res->estimate);
		res->has_estimate = true;
		if (job.task == ADV_TASK_INFER) {
			serving_estimate(&job, pol, &mem, &res->serving);
			res->has_serving = true;
			serving_check(&job, pol, &req->wl.layout, &res->serving, res);
		}
	}
	/* A server writes no checkpoints: no interval, no findings. */
	if (job.task == ADV_TASK_INFER)
		return;
	ckpt_check(&job, pol, &mem, ckpt_in_time(&req->wl.ckpt, res, &ck), &res->checkpoint, res);
	res->has_checkpoint = true;
}

void engine_evaluate(const catalog_t *cat, const struct adv_policy *pol,
		     const struct adv_request *req, struct adv_result *res)
{
	memset(res, 0, offsetof(struct adv_result, findings));
	res->mode = ADV_MODE_ENFORCE;
	evaluate(cat, pol, req, res);
	apply_mode(res);
}

/* Reject-level causes that another layout or workload setting can remove. */
static bool plan_fixable(const struct adv_result *res)
{
	static const char *const codes[] = {
		"GPU_COUNT_MISMATCH", "TP_NOT_DIVIDE_HEADS", "TP_NOT_DIVIDE_KV_HEADS",
		"TP_NOT_DIVIDE_FFN", "EP_NOT_DIVIDE_EXPERTS", "EP_GRID_NOT_DIVIDE_GPUS",
		"CP_SEQ_NOT_DIVISIBLE", "GBS_NOT_DIVISIBLE", "VPP_INVALID",
		"ZERO_WITH_PIPELINE", "MEM_OVER_CAPACITY",
	};
	int i;
	size_t k;

	for (i = 0; i < res->n_findings; i++) {
		if (res->findings[i].severity != ADV_SEV_REJECT)
			continue;
		for (k = 0; k < ADV_ARRAY_SIZE(codes); k++)
			if (!strcmp(res->findings[i].code, codes[k]))
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
	engine_add_finding(res, "BEST_PLAN", ADV_SEV_WARN, fix,
			   "the fastest layout of %s on these %d GPUs that passes every rule%s (advisorctl plan lists more)",
			   req->wl.model, plan.layout.gpus,
			   plan.verdict == ADV_ACCEPT ? "" : " (with warnings)");
}

void engine_check(const catalog_t *cat, const struct adv_policy *pol,
		  const struct adv_request *req, struct adv_result *res)
{
	bool denied;

	/* The findings array is written as it fills; clearing it costs more
	 * than the rest of a check. */
	memset(res, 0, offsetof(struct adv_result, findings));
	res->mode = resolve_mode(pol, req, &denied);
	if (res->mode == ADV_MODE_OFF) {
		res->verdict = ADV_ACCEPT;
		return;
	}
	for (int i = 0; i < req->n_pre && req->pre; i++)
		if (res->n_findings < ADV_MAX_FINDINGS)
			res->findings[res->n_findings++] = req->pre[i];
	if (denied)
		engine_add_finding(res, "POLICY_MODE_OVERRIDE_DENIED", ADV_SEV_REJECT,
				   "remove --llm-advisor",
				   "site policy does not let users choose the advisor mode (--llm-advisor=%s)",
				   policy_mode_name((enum adv_mode)req->wl.mode));
	evaluate(cat, pol, req, res);
	add_best_plan(cat, pol, req, res);
	apply_mode(res);
}
