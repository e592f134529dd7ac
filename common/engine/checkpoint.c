/*
 * checkpoint.c - how often a job should checkpoint, and what its declared
 * interval costs (shared/notes/model-math.md, "Checkpoint interval").
 *
 * Symbols: C seconds the job is stopped per checkpoint, M the job's mean
 * time between interruptions, R the restart cost, T compute time between
 * checkpoints.
 * - Young, "A first order approximation to the optimum checkpoint interval",
 *   CACM 1974: T* = sqrt(2 C M).
 * - Daly, "A higher order estimate of the optimum checkpoint interval for
 *   restart dumps", FGCS 2006, eq. (37): for C < 2M
 *   T* = sqrt(2 C M) [1 + 1/3 sqrt(C/2M) + 1/9 (C/2M)] - C, else T* = M.
 * - The exact waste under exponential failures (Daly 2006, eq. (13), the
 *   expected wall time of a job of T-long segments, as a lost fraction):
 *   W(T) = 1 - T / (M e^(R/M) (e^((T+C)/M) - 1)).
 *   Its minimum solves dW/dT = 0, i.e. 1 - e^-(T+C)/M = T/M, independent
 *   of R; ckpt_optimal() solves that with Newton's method, which converges
 *   monotonically from the right because the function is convex.
 * Verdicts go by the extra waste of the job's T over the optimum, in
 * percentage points, against the policy's warn and reject thresholds: the
 * optimum is flat, so a factor of two either way costs little.
 *
 * Engine inputs (ckpt_check): size 14 B/param (full state; 2 B/param
 * weights for serving; LoRA saves only its adapters), written by all shards
 * in parallel, so C = size / min(storage_write_gbps, nodes x
 * node_write_gbps).  M = gpu_mtbf_hours / GPUs, or node_mtbf_hours / nodes
 * when the policy sets it; R = restart_minutes.  Asynchronous checkpoints
 * (--llm-ckpt=30m,async): only the copy of this GPU's weights and optimizer
 * state to host memory blocks, at CKPT_D2H_GBS (PCIe Gen4 x16 in practice),
 * and the background write of the whole checkpoint must finish within T.
 * CKPT_MISSING is a warning, not a reject: --llm-ckpt declares the
 * interval, and a job that does not declare one may still checkpoint from
 * its own configuration, which the advisor cannot see.  A synchronous write
 * (or an asynchronous background write) longer than T is a reject
 * (CKPT_WRITE_EXCEEDS_INTERVAL): the job would spend most of its time
 * writing, or pile up writes.  Serving jobs get figures but no findings.
 * A job that does not checkpoint (--llm-ckpt=off) has no interval: every
 * failure restarts it from the beginning, so its waste is the whole run
 * (W(T) tends to 1 as T grows), and ckpt_describe() says that in words
 * rather than as an interval.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "checkpoint.h"
#include "findings.h"
#include "memory.h"
#include "options.h"
#include "util.h"

#define CKPT_NEWTON_MAX_ITER 100
#define CKPT_NEWTON_TOL 1e-13
#define GB 1e9
/* Suggested intervals are rounded to what people type. */
#define CKPT_ROUND_MINUTE_ABOVE_S 600.0

double ckpt_young(double c, double m)
{
	return sqrt(2.0 * c * m);
}

double ckpt_daly(double c, double m)
{
	double x;

	if (c >= 2.0 * m)
		return m;
	x = c / (2.0 * m);
	return sqrt(2.0 * c * m) * (1.0 + sqrt(x) / 3.0 + x / 9.0) - c;
}

double ckpt_waste(double t, double c, double m, double r)
{
	if (t <= 0 || m <= 0)
		return 1.0;
	return 1.0 - t / (m * exp(r / m) * expm1((t + c) / m));
}

double ckpt_optimal(double c, double m)
{
	/* u = T/M, k = C/M: g(u) = u - (1 - e^-(u+k)) = 0, g convex increasing. */
	double k = c / m, u, g, dg;
	int i;

	if (m <= 0)
		return 0;
	/* Daly's estimate is within a few per cent: Newton needs a few steps
	 * (from the left the first step lands right of the root). */
	u = k < 2.0 ? ckpt_daly(c, m) / m : 1.0;
	if (u <= 0)
		u = 1.0;
	for (i = 0; i < CKPT_NEWTON_MAX_ITER; i++) {
		double step;

		g = u + expm1(-(u + k));
		dg = -expm1(-(u + k));
		if (dg <= 0)
			break;
		step = g / dg;
		u -= step;
		if (fabs(step) <= CKPT_NEWTON_TOL * u)
			break;
	}
	return u * m;
}

void ckpt_compute(const struct ckpt_input *in, struct ckpt_output *out)
{
	double c = in->write_s, m = in->mtbf_s, r = in->restart_s;

	out->young_s = ckpt_young(c, m);
	out->daly_s = ckpt_daly(c, m);
	out->optimal_s = ckpt_optimal(c, m);
	out->optimal_waste = ckpt_waste(out->optimal_s, c, m, r);
	out->waste = in->interval_s > 0 ? ckpt_waste(in->interval_s, c, m, r)
					: out->optimal_waste;
}

double ckpt_size_bytes(const struct adv_job *job)
{
	if (!job->model)
		return 0;
	switch (job->task) {
	case ADV_TASK_INFER:
		return job->params.total * CKPT_WEIGHTS_BYTES_PER_PARAM;
	case ADV_TASK_LORA:
		/* The frozen base is not saved again: adapters and their Adam state. */
		return memory_lora_params(job->model) * CKPT_FULL_BYTES_PER_PARAM;
	default:
		return job->params.total * CKPT_FULL_BYTES_PER_PARAM;
	}
}

static double write_bandwidth_gbs(const struct adv_job *job, const struct adv_policy *pol)
{
	double bw = pol->storage_write_gbps;
	double node = pol->node_write_gbps * job->lay.nodes;

	if (pol->node_write_gbps > 0 && (bw <= 0 || node < bw))
		bw = node;
	return bw;
}

static double job_mtbf_s(const struct adv_job *job, const struct adv_policy *pol)
{
	if (pol->node_mtbf_hours > 0 && job->lay.nodes > 0)
		return pol->node_mtbf_hours * 3600.0 / job->lay.nodes;
	return pol->gpu_mtbf_hours * 3600.0 / (job->lay.gpus > 0 ? job->lay.gpus : 1);
}

static void suggest(double t, bool async, char *buf, size_t len)
{
	char d[32];

	if (t >= CKPT_ROUND_MINUTE_ABOVE_S)
		t = round(t / 60.0) * 60.0;
	else
		t = fmax(round(t), 1.0);
	options_format_duration(t, d, sizeof(d));
	adv_snprintf(buf, len, "--llm-ckpt=%s%s", d, async ? ",async" : "");
}

static void judge_interval(const struct adv_policy *pol, const struct adv_ckpt_req *req,
			   const struct adv_checkpoint *out, double sync_write_s,
			   struct adv_result *res)
{
	char fix[ADV_MSG_MAX], have[32], best[32];
	double extra = out->waste - out->optimal_waste;
	enum adv_severity sev;
	bool too_long = req->interval_s > out->optimal_s;

	if (sync_write_s > req->interval_s) {
		options_format_duration(req->interval_s, have, sizeof(have));
		suggest(fmax(out->optimal_s, sync_write_s * 2.0), req->async, fix, sizeof(fix));
		engine_add_finding(res, ADV_CODE_CKPT_WRITE_EXCEEDS_INTERVAL, fix,
				   "%s checkpoint write of %.0f GB takes %.0f s, longer than the %s interval",
				   req->async ? "the background" : "each", out->size_gb,
				   sync_write_s, have);
		return;
	}
	if (extra > pol->reject_extra_waste)
		sev = ADV_SEV_REJECT;
	else if (extra > pol->warn_extra_waste)
		sev = ADV_SEV_WARN;
	else
		return;
	/* Formatting only once a finding is certain: the check path is hot. */
	suggest(out->optimal_s, req->async, fix, sizeof(fix));
	options_format_duration(req->interval_s, have, sizeof(have));
	options_format_duration(fmax(round(out->optimal_s), 1.0), best, sizeof(best));
	engine_add_finding_sev(res, too_long ? ADV_CODE_CKPT_TOO_LONG : ADV_CODE_CKPT_TOO_SHORT,
			       sev, fix,
			       "checkpointing every %s wastes %.1f%% of the run, %.1f points more than every %s (%.1f%%; write %.0f s, job MTBF %.1f h)",
			       have, out->waste * 100, extra * 100, best, out->optimal_waste * 100,
			       out->write_s, out->job_mtbf_h);
}

void ckpt_check(const struct adv_job *job, const struct adv_policy *pol,
		const struct adv_memory *mem, const struct adv_ckpt_req *req,
		struct adv_checkpoint *out, struct adv_result *res)
{
	struct ckpt_input in;
	struct ckpt_output o;
	double size = ckpt_size_bytes(job), bw = write_bandwidth_gbs(job, pol);
	double sync_write = bw > 0 ? size / (bw * GB) : 0;
	char fix[ADV_MSG_MAX];
	bool declared = req->given && !req->off;

	memset(out, 0, sizeof(*out));
	in.mtbf_s = job_mtbf_s(job, pol);
	in.restart_s = pol->restart_minutes * 60.0;
	in.write_s = sync_write;
	if (req->async && declared) {
		/* Only the copy of this GPU's state to host memory blocks training. */
		double state = (mem->weights_gib + mem->optimizer_gib) * GIB;
		in.write_s = state / (CKPT_D2H_GBS * GB);
	}
	in.interval_s = declared ? req->interval_s : 0;
	ckpt_compute(&in, &o);
	/* off: no interval at all (0), and a failure loses everything (waste 1). */
	out->interval_s = declared ? req->interval_s : req->off ? 0 : o.optimal_s;
	out->optimal_s = o.optimal_s;
	out->young_s = o.young_s;
	out->daly_s = o.daly_s;
	out->waste = req->given && req->off ? 1.0 : o.waste;
	out->optimal_waste = o.optimal_waste;
	out->write_s = in.write_s;
	out->job_mtbf_h = in.mtbf_s / 3600.0;
	out->size_gb = size / GB;
	if (!res || job->task == ADV_TASK_INFER)
		return;
	if (!declared) {
		if (job->lay.gpus <= pol->require_above_gpus)
			return;
		suggest(o.optimal_s, false, fix, sizeof(fix));
		engine_add_finding(res, ADV_CODE_CKPT_MISSING, fix,
				   req->off ? "checkpointing is off on a %d-GPU job that fails every %.1f h on average"
					    : "a %d-GPU job (failing every %.1f h on average) declares no checkpoint interval",
				   job->lay.gpus, out->job_mtbf_h);
		return;
	}
	judge_interval(pol, req, out, sync_write, res);
}

/* Durations as advisorctl prints them: under a second with two decimals. */
static void ckpt_duration(double s, char *buf, size_t len)
{
	if (s > 0 && s < 1)
		adv_snprintf(buf, len, "%.2fs", s);
	else
		options_format_duration(s, buf, len);
}

void ckpt_describe(const struct adv_checkpoint *c, char *buf, size_t len)
{
	char t[32], o[32];

	ckpt_duration(c->interval_s, t, sizeof(t));
	ckpt_duration(c->optimal_s, o, sizeof(o));
	if (c->interval_s > 0)
		adv_snprintf(buf, len, "every %s loses %.2f%% of the run; the optimum every %s "
			     "loses %.2f%%", t, 100 * c->waste, o, 100 * c->optimal_waste);
	else
		adv_snprintf(buf, len, "none: each failure loses the whole run so far, and the "
			     "job fails every %.1f h on average (job MTBF); checkpointing every %s "
			     "would lose %.2f%%", c->job_mtbf_h, o, 100 * c->optimal_waste);
}
