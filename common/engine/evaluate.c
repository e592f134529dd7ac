/*
 * evaluate.c - one job judged: names and defaults resolved, the layout
 * rules (layout.c), memory (memory.c), serving (serving.c), estimates
 * (estimate.c) and the checkpoint interval (checkpoint.c), in that order;
 * then the verdict from the worst finding under the policy's mode.
 *
 * engine_check() (engine.c) adds what only a whole check does (the
 * policy's mode for the user, the job reader's findings, the best plan);
 * the planner calls engine_resolve() and engine_evaluate() on the layouts
 * it tries, so that a plan passes exactly what check passes.
 * The defaults are listed in engine.c.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "checkpoint.h"
#include "config/modelname.h"
#include "estimate.h"
#include "evaluate.h"
#include "findings.h"
#include "layout.h"
#include "memory.h"
#include "options.h"
#include "serving.h"
#include "util.h"

#define ENGINE_DEFAULT_SEQ 4096
#define ENGINE_SUGGESTIONS 3
#define WARN_MODE_NOTE " [not enforced: advisor mode warn]"

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
	struct catalog_match mt;

	/* A name whose words are one model's (modelname.c: a Hub id with
	 * -Instruct, a date, a quantization) names that model: it is the
	 * one suggestion, with the weights its quantization suffix says. */
	if (modelname_match(cat, name, &mt) && mt.model) {
		if (mt.quant != CATALOG_QUANT_NONE && mt.quant != CATALOG_QUANT_OTHER)
			adv_snprintf(fix, len, "--llm-model=%s --llm-weights=%s", mt.model->name,
				     modelname_quant(mt.quant));
		else
			adv_snprintf(fix, len, "--llm-model=%s", mt.model->name);
		return;
	}
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

/*
 * The GPU type a constraint names (sbatch -C h100, "h100&ib", "[h100*2]"):
 * the one catalog GPU its features name, NULL when none does or when it
 * allows several ("h100|a100": Slurm may pick either; *several is set).
 * Features are the site's names (slurm.conf Features=); one that is a
 * catalog GPU's name or alias is that GPU's, as sites name them.
 */
static const struct adv_gpu *constraint_gpu(const catalog_t *cat, const char *c, bool *several)
{
	const struct adv_gpu *found = NULL;
	char tok[ADV_NAME_MAX];
	size_t n = 0;

	*several = false;
	for (const char *p = c;; p++) {
		if (*p && !strchr("&|,[]()*: ", *p)) {
			if (n < sizeof(tok) - 1)
				tok[n++] = *p;
			continue;
		}
		tok[n] = '\0';
		if (n && !isdigit((unsigned char)tok[0])) {
			const struct adv_gpu *g = catalog_find_gpu(cat, tok);

			if (g && found && g != found)
				*several = true;
			if (g && !found)
				found = g;
		}
		n = 0;
		if (!*p)
			break;
	}
	return *several ? NULL : found;
}

static const struct adv_gpu *resolve_gpu(const catalog_t *cat, const struct adv_request *req,
					 const struct adv_partition *part, struct adv_result *res)
{
	const char *name = req->res.gpu[0] ? req->res.gpu : part && part->gpu[0] ? part->gpu : "";
	const struct adv_gpu *gpu = name[0] ? catalog_find_gpu(cat, name) : NULL;
	bool several = false;

	if (!name[0] && req->res.constraint[0]) {
		gpu = constraint_gpu(cat, req->res.constraint, &several);
		if (gpu)
			return gpu;
		if (several) {
			engine_add_finding(res, ADV_CODE_GPU_TYPE_UNKNOWN, NULL,
					   "the constraint '%s' allows more than one GPU type; memory "
					   "and estimates are not checked", req->res.constraint);
			return NULL;
		}
	}
	if (!gpu && name[0])
		engine_add_finding(res, ADV_CODE_GPU_TYPE_UNKNOWN, NULL,
				   "GPU type '%s' is not in the catalog; memory and estimates are not checked",
				   name);
	else if (!gpu)
		/* The daemon and advisorctl --local say alike why the cluster did not tell. */
		engine_add_finding(res, ADV_CODE_GPU_TYPE_UNKNOWN, NULL,
				   "the job's GPU type is not known (%s); memory and estimates are not checked",
				   req->res.gpu_why[0] ? req->res.gpu_why
						       : "neither the job nor the policy names one");
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
		engine_add_finding(res, ADV_CODE_MODEL_NOT_GIVEN, "--llm-model=NAME",
				   "no --llm-model: only the layout is checked, not memory, checkpoints or estimates");
		return NULL;
	}
	m = catalog_find_model(cat, req->wl.model);
	if (!m && res && req->wl.model_read) {
		/* The job's own model name: the user typed no option to correct,
		 * and the job may well work; say what is not checked. */
		engine_add_finding_sev(res, ADV_CODE_MODEL_UNKNOWN, ADV_SEV_INFO,
				       "--llm-model=NAME, or add the model to the catalog",
				       "the job's model '%s' is not in the catalog: memory, checkpoints "
				       "and estimates are not checked", req->wl.model);
	} else if (!m && res) {
		suggest_models(cat, req->wl.model, fix, sizeof(fix));
		engine_add_finding(res, ADV_CODE_MODEL_UNKNOWN, fix[0] ? fix : NULL,
				   "model '%s' is not in the catalog (advisorctl catalog models lists it)",
				   req->wl.model);
	}
	return m;
}

static int or_default(int v, int def)
{
	return v == ADV_UNSET ? def : v;
}

/*
 * The gradient dtype a job keeps: the job's or --llm-grad-dtype's, else
 * Megatron's documented default, else ADV_UNSET (policy grad_bytes).
 * Megatron-LM's megatron/training/arguments.py sets
 * accumulate_allreduce_grads_in_fp32 for bf16 unless --grad-reduce-in-bf16
 * (or the precision-aware optimizer's --main-grads-dtype bf16), and leaves
 * it off for fp16; its DDP grad buffer
 * (megatron/core/distributed/param_and_grad_buffer.py) is fp32 when that is
 * set and in the parameters' dtype otherwise.  fp8 training keeps bf16
 * parameters (Transformer Engine), so bf16's rule applies.
 */
int engine_default_grad_dtype(const struct adv_workload *wl)
{
	int prec = or_default(wl->precision, ADV_PREC_BF16);

	if (wl->grad_dtype != ADV_UNSET)
		return wl->grad_dtype;
	if (wl->framework != ADV_FW_MEGATRON || wl->task == ADV_TASK_LORA ||
	    wl->task == ADV_TASK_INFER)
		return ADV_UNSET;
	return prec == ADV_PREC_FP16 ? ADV_PREC_FP16 : ADV_PREC_FP32;
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
	job->mbs_given = wl->mbs != ADV_UNSET;
	job->attention = or_default(wl->attention, ADV_ATTN_FLASH);
	job->prefill_chunk = or_default(wl->prefill_chunk, 0);
	job->grad_dtype = engine_default_grad_dtype(wl);
	job->optim_bytes = or_default(wl->optim_bytes, 0);
	job->fp8_params = wl->fp8_params;
	job->kv_fp8 = wl->kv_fp8;
	job->mem_share = or_default(wl->mem_share, 0);
	job->share_static = wl->share_static;
	job->kv_dtype_set = wl->kv_dtype != ADV_UNSET;
	job->kv_dtype = wl->kv_dtype;
	/* A server running fp8 (--quantization fp8, an fp8 checkpoint)
	 * stores fp8 weights; training keeps 16-bit ones (memory.c). */
	job->weights = or_default(wl->weights, job->task == ADV_TASK_INFER &&
			job->precision == ADV_PREC_FP8 ? ADV_WEIGHTS_FP8 : ADV_WEIGHTS_16BIT);
	job->lay.zero = or_default(wl->zero, job->framework == ADV_FW_FSDP ? 3 : 0);
	if (job->task == ADV_TASK_INFER)
		job->lay.zero = 0;
}

static void check_precision(const struct adv_job *job, struct adv_result *res)
{
	if (job->gpu && job->precision == ADV_PREC_FP8 && job->gpu->fp8_tflops <= 0)
		engine_add_finding(res, ADV_CODE_FP8_UNSUPPORTED, "--llm-precision=bf16",
				   "%s has no fp8 tensor cores", job->gpu->name);
}

/* ---- mode and verdict --------------------------------------------------------- */

void evaluate_apply_mode(struct adv_result *res)
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
		engine_add_finding(res, ADV_CODE_CKPT_STEPS, "--llm-ckpt=DURATION",
				   "the job checkpoints every %ld %s, but its step time cannot be "
				   "estimated, so the interval is not judged", in->steps,
				   adv_plural(in->steps, "step", "steps"));
		return tmp;
	}
	tmp->interval_s = (double)in->steps * res->estimate.step_time_s;
	options_format_duration(tmp->interval_s, d, sizeof(d));
	engine_add_finding(res, ADV_CODE_CKPT_STEPS, NULL,
			   "the job checkpoints every %ld %s: about %s at the estimated %.2f s per step",
			   in->steps, adv_plural(in->steps, "step", "steps"), d,
			   res->estimate.step_time_s);
	return tmp;
}

/* Resolution, layout rules, memory, estimates and checkpoint of one job. */
void evaluate_job(const catalog_t *cat, const struct adv_policy *pol,
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
	evaluate_job(cat, pol, req, res);
	evaluate_apply_mode(res);
}

