/*
 * print.c - how advisorctl prints answers.
 *
 * Both the daemon's answers and --local ones arrive here as the same
 * structs, so the two modes print identical reports.  JSON follows
 * design.md field for field; a field that does not apply is null (memory of
 * a job the engine could not lay out, KV cache of a training job, time and
 * cost without --tokens).
 *
 * Output safety (issue 20): the decision log keeps what users sent as they
 * sent it; it is escaped here, as it is printed, by the rule of util.h.
 * Text shows each control character and each byte of invalid UTF-8 as
 * \xNN (ADV_TEXT around every string that came from a client or a server),
 * so a model name cannot move an admin's cursor or forge a line of
 * history; JSON is made valid UTF-8 as a whole (adv_json_utf8), every
 * string in it at once.
 */
#include "config.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/checkpoint.h"
#include "dlog/dlog_rec.h"
#include "engine/findings.h"
#include "engine/memory.h"
#include "engine/options.h"
#include "engine/provenance.h"
#include "print.h"
#include "util.h"
#include "wire/convert.h"

/* ---- JSON helpers ------------------------------------------------------------ */

static json_object *jnum(double v)
{
	char s[40];

	/* 10 significant digits: exact enough for scripts, free of 0.1000000001 noise. */
	snprintf(s, sizeof(s), "%.10g", v);
	return json_object_new_double_s(v, s);
}

static json_object *jstr(const char *s)
{
	return (s && *s) ? json_object_new_string(s) : NULL;
}

static void put(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

void print_json(FILE *f, json_object *o)
{
	char *s = adv_json_utf8_dup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								  JSON_C_TO_STRING_SPACED |
								  JSON_C_TO_STRING_NOSLASHESCAPE));

	fprintf(f, "%s\n", s ? s : "null");
	free(s);
	json_object_put(o);
}

/* A value off the wire or out of the log, held to its enum's range: below
 * it the first value, above it the last (issue 27: every index bounded by
 * the enum's count). */
static int clamp_to(int v, int count)
{
	return v < 0 ? 0 : v >= count ? count - 1 : v;
}

static const char *sev_name(int s)
{
	return engine_severity_name((enum adv_severity)clamp_to(s, ADV_SEV_COUNT));
}

static const char *verdict_name(int v)
{
	return engine_verdict_name((enum adv_verdict)clamp_to(v, ADV_VERDICT_COUNT));
}

static const char *mode_name(int m)
{
	return policy_mode_name((enum adv_mode)clamp_to(m, ADV_MODE_COUNT));
}

/* Where one value came from, as "uses" says it: the job's line, the
 * option, or the origin's name ("assumed", "default", ...). */
static json_object *use_json(const struct adv_result *res, enum adv_field f)
{
	/* Sized by the enum: every field indexes it (a field past the last
	 * named row read past the table: issue 27). */
	static const char *const alias[ADV_F_COUNT][4] = {
		[ADV_F_CKPT] = { "ckpt_steps", "ckpt_time", "ckpt_off", NULL },
		[ADV_F_WORLD] = { "world", "nodes", "nproc_per_node", NULL },
		[ADV_F_MBS] = { "mbs", "max_seqs", NULL },
		[ADV_F_GBS] = { "gbs", "gas", NULL },
	};
	_Static_assert(ADV_ARRAY_SIZE(alias) == ADV_F_COUNT, "a row for each field");
	const char *name = provenance_field_name(f);
	enum adv_origin o = (enum adv_origin)res->from[f];
	char opt[48];

	if (o == ADV_FROM_UNSET)
		return NULL;
	if (o == ADV_FROM_JOB || o == ADV_FROM_OPTION) {
		for (int i = 0; i < res->n_sources; i++) {
			const char *field = res->sources[i].field;
			bool match = !strcmp(field, name);

			for (int k = 0; !match && k < 4 && alias[f][k]; k++)
				match = !strcmp(field, alias[f][k]);
			if (match)
				return jstr(res->sources[i].where);
		}
	}
	if (o == ADV_FROM_OPTION && provenance_option(f)[0]) {
		snprintf(opt, sizeof(opt), "--llm-%s", provenance_option(f));
		return jstr(opt);
	}
	return jstr(provenance_origin_name(o));
}

/* The values a finding rests on, each with where it came from (issue 18);
 * NULL without a check's result or when it rests on none. */
static json_object *uses_json(const struct adv_result *res, unsigned uses)
{
	json_object *o;

	if (!res || !uses)
		return NULL;
	o = json_object_new_object();
	for (int f = 0; f < ADV_F_COUNT; f++) {
		json_object *v;

		if (!(uses & ADV_USES(f)) || !(v = use_json(res, (enum adv_field)f)))
			continue;
		put(o, provenance_field_name((enum adv_field)f), v);
	}
	return o;
}

static json_object *findings_json(const struct adv_finding *fs, int n,
				  const struct adv_result *res)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < n; i++) {
		json_object *o = json_object_new_object();

		put(o, "code", jstr(fs[i].code));
		put(o, "severity", jstr(sev_name((int)fs[i].severity)));
		put(o, "message", jstr(fs[i].message));
		put(o, "fix", jstr(fs[i].fix));
		put(o, "fix_job", fs[i].fix_job[0] ? jstr(fs[i].fix_job) : NULL);
		put(o, "uses", uses_json(res, fs[i].uses));
		json_object_array_add(a, o);
	}
	return a;
}

/*
 * Issue 28: a value only the engine assumed (ADV_FROM_ASSUMED: advisor's
 * sequence, micro-batch, recompute, a layout the reader could not read) is
 * never shown as the job's.  JSON gives it as null where the job's values
 * are, and under "assumed" with the value the estimates used; the text
 * prints "?" and lists the assumptions on a line of their own.
 */
static bool is_assumed(const struct adv_result *res, enum adv_field f)
{
	return res && res->from[f] == ADV_FROM_ASSUMED;
}

/* The value the engine used for f: a name (*name set) or a number (*v);
 * false where f has no single value in a check's result (model,
 * checkpoint, world, gradients). */
static bool field_value(const struct adv_result *res, enum adv_field f, int *v, const char **name)
{
	const struct adv_layout_out *l = &res->layout;

	*name = NULL;
	*v = 0;
	switch (f) {
	case ADV_F_TP: *v = l->tp; break;
	case ADV_F_PP: *v = l->pp; break;
	case ADV_F_CP: *v = l->cp; break;
	case ADV_F_EP: *v = l->ep; break;
	case ADV_F_ETP: *v = l->etp; break;
	case ADV_F_VPP: *v = l->vpp; break;
	case ADV_F_DP: *v = l->dp; break;
	case ADV_F_ZERO: *v = l->zero; break;
	case ADV_F_SEQ: *v = res->seq; break;
	case ADV_F_MBS: *v = res->mbs; break;
	case ADV_F_GBS: *v = res->gbs; break;
	case ADV_F_SP: *name = l->sp ? "on" : "off"; break;
	case ADV_F_PRECISION: *name = engine_precision_name(res->precision); break;
	case ADV_F_RECOMPUTE: *name = engine_recompute_name(res->recompute); break;
	case ADV_F_TASK: *name = engine_task_name(res->task); break;
	case ADV_F_FRAMEWORK: *name = engine_framework_name(res->framework); break;
	case ADV_F_ATTENTION: *name = engine_attention_name(res->attention); break;
	default: return false;
	}
	return true;
}

/* The same as text. */
static bool field_text(const struct adv_result *res, enum adv_field f, char *buf, size_t len)
{
	const char *name;
	int v;

	if (!field_value(res, f, &v, &name))
		return false;
	if (name)
		adv_snprintf(buf, len, "%s", name);
	else
		adv_snprintf(buf, len, "%d", v);
	return true;
}

/* The value as the job's, or "?" where only the engine assumed it. */
static const char *shown(const struct adv_result *res, enum adv_field f, char *buf, size_t len)
{
	if (is_assumed(res, f) || !field_text(res, f, buf, len))
		adv_snprintf(buf, len, "?");
	return buf;
}

/* An int, or null where only the engine assumed it. */
static json_object *jint_known(const struct adv_result *res, enum adv_field f, int v)
{
	return is_assumed(res, f) ? NULL : json_object_new_int(v);
}

/* A name, or null where only the engine assumed it. */
static json_object *jstr_known(const struct adv_result *res, enum adv_field f, const char *v)
{
	return is_assumed(res, f) ? NULL : jstr(v);
}

/* A plan's layout (res NULL: the planner's own values) or a check's. */
static json_object *layout_json(const struct adv_layout_out *l, const struct adv_result *res)
{
	json_object *o = json_object_new_object();

	put(o, "gpus", json_object_new_int(l->gpus));
	put(o, "nodes", json_object_new_int(l->nodes));
	put(o, "gpus_per_node", json_object_new_int(l->gpus_per_node));
	put(o, "tp", jint_known(res, ADV_F_TP, l->tp));
	put(o, "pp", jint_known(res, ADV_F_PP, l->pp));
	put(o, "cp", jint_known(res, ADV_F_CP, l->cp));
	put(o, "ep", jint_known(res, ADV_F_EP, l->ep));
	put(o, "etp", jint_known(res, ADV_F_ETP, l->etp));
	put(o, "vpp", jint_known(res, ADV_F_VPP, l->vpp));
	put(o, "dp", jint_known(res, ADV_F_DP, l->dp));
	put(o, "zero", jint_known(res, ADV_F_ZERO, l->zero));
	put(o, "sp", is_assumed(res, ADV_F_SP) ? NULL : json_object_new_boolean(l->sp));
	return o;
}

/* {"seq": 4096, "recompute": "selective"}: what the estimates used where the
 * job says nothing; NULL when nothing was assumed. */
static json_object *assumed_json(const struct adv_result *res)
{
	json_object *o = NULL;

	for (int f = 0; f < ADV_F_COUNT; f++) {
		const char *name;
		int v;

		if (!is_assumed(res, (enum adv_field)f) || !field_value(res, (enum adv_field)f, &v, &name))
			continue;
		if (!o)
			o = json_object_new_object();
		put(o, provenance_field_name((enum adv_field)f),
		    name ? jstr(name) : json_object_new_int(v));
	}
	return o;
}

/* {"tp": "job", "seq": "assumed", ...}: the origin of every resolved value. */
static json_object *origins_json(const struct adv_result *res)
{
	json_object *o = json_object_new_object();

	for (int f = 0; f < ADV_F_COUNT; f++)
		if (res->from[f] != ADV_FROM_UNSET)
			put(o, provenance_field_name((enum adv_field)f),
			    jstr(provenance_origin_name((enum adv_origin)res->from[f])));
	return o;
}

/* "assumed: seq 4096, mbs 1 (...)": the values only the engine chose, and
 * the options that state them; nothing when there are none. */
static void print_assumed(FILE *f, const struct adv_result *res)
{
	char vals[512] = "", opts[256] = "", line[256], v[32];
	size_t nv = 0, no = 0;

	for (int i = 0; i < ADV_F_COUNT; i++) {
		enum adv_field fl = (enum adv_field)i;
		const char *opt = provenance_option(fl);
		char flag[48];

		if (!is_assumed(res, fl) || !field_text(res, fl, v, sizeof(v)))
			continue;
		nv += (size_t)snprintf(vals + nv, nv < sizeof(vals) ? sizeof(vals) - nv : 0, "%s%s %s",
				       nv ? ", " : "", provenance_field_name(fl), v);
		if (nv >= sizeof(vals))
			nv = sizeof(vals) - 1;
		if (!opt[0])
			continue;
		adv_snprintf(flag, sizeof(flag), "--llm-%s", opt);
		if (strstr(opts, flag))
			continue;
		no += (size_t)snprintf(opts + no, no < sizeof(opts) ? sizeof(opts) - no : 0, "%s%s",
				       no ? " " : "", flag);
		if (no >= sizeof(opts))
			no = sizeof(opts) - 1;
	}
	if (!nv)
		return;
	/* advisorctl's spelling of the options (--layout, not --llm-layout=). */
	options_ctl_spelling(opts, line, sizeof(line));
	fprintf(f, "assumed: %s\n         (the job does not state these: advisor's assumptions, "
		"for the estimates only; %s state%s them)\n", vals, line,
		strchr(line, ' ') ? "" : "s");
}

static json_object *memory_json(const struct adv_memory *m, bool infer)
{
	json_object *o = json_object_new_object();

	put(o, "per_gpu_gib", jnum(m->per_gpu_gib));
	put(o, "usable_gib", jnum(m->usable_gib));
	put(o, "capacity_gib", jnum(m->capacity_gib));
	put(o, "weights_gib", jnum(m->weights_gib));
	put(o, "grads_gib", infer ? NULL : jnum(m->grads_gib));
	put(o, "optimizer_gib", infer ? NULL : jnum(m->optimizer_gib));
	put(o, "activations_gib", jnum(m->activations_gib));
	put(o, "kv_cache_gib", infer ? jnum(m->kv_cache_gib) : NULL);
	put(o, "overhead_gib", jnum(m->overhead_gib));
	put(o, "allocator_gib", infer ? NULL : jnum(m->allocator_gib));
	put(o, "peak_stage", json_object_new_int(m->peak_stage));
	put(o, "stages", json_object_new_int(m->stages > 0 ? m->stages : 1));
	/* Why that stage peaks (issue 29): null without a pipeline. */
	put(o, "peak_inflight", m->peak_inflight > 0 ? jnum(m->peak_inflight) : NULL);
	put(o, "peak_logits", m->peak_inflight > 0 ? json_object_new_boolean(m->peak_logits) : NULL);
	put(o, "least_gib", m->least_bounded ? jnum(m->least_gib) : NULL);
	return o;
}

/* extra: the Young and Daly intervals, which `ckpt` shows and `check` leaves out. */
static json_object *checkpoint_json(const struct adv_checkpoint *c, bool extra)
{
	json_object *o = json_object_new_object();

	/* null: the job does not checkpoint (waste 1: a failure loses the run). */
	put(o, "interval_s", c->interval_s > 0 ? jnum(c->interval_s) : NULL);
	put(o, "optimal_s", jnum(c->optimal_s));
	put(o, "waste", jnum(c->waste));
	put(o, "optimal_waste", jnum(c->optimal_waste));
	put(o, "write_s", jnum(c->write_s));
	put(o, "job_mtbf_h", jnum(c->job_mtbf_h));
	if (extra) {
		put(o, "young_s", jnum(c->young_s));
		put(o, "daly_s", jnum(c->daly_s));
	}
	return o;
}

static json_object *estimate_json(const struct adv_estimate *e)
{
	json_object *o = json_object_new_object();
	bool run = e->train_days > 0;

	put(o, "params_b", jnum(e->params_b));
	put(o, "active_params_b", jnum(e->active_params_b));
	put(o, "step_time_s", e->step_time_s > 0 ? jnum(e->step_time_s) : NULL);
	put(o, "tokens_per_s", e->tokens_per_s > 0 ? jnum(e->tokens_per_s) : NULL);
	put(o, "mfu", e->mfu > 0 ? jnum(e->mfu) : NULL);
	put(o, "train_days", run ? jnum(e->train_days) : NULL);
	/* A GPU without a catalog price has no cost, not a cost of $0. */
	put(o, "cost_usd", run && e->cost_usd > 0 ? jnum(e->cost_usd) : NULL);
	put(o, "energy_mwh", run ? jnum(e->energy_mwh) : NULL);
	put(o, "bubble", jnum(e->bubble));
	return o;
}

/* Serving figures (task infer), per model replica: design.md names
 * kv_capacity_seqs; the rest sit next to it. */
static json_object *serving_json(const struct adv_serving *sv)
{
	json_object *o = json_object_new_object();

	put(o, "kv_capacity_seqs", jnum(sv->kv_capacity_seqs));
	put(o, "kv_capacity_tokens", jnum(sv->kv_capacity_tokens));
	put(o, "mem_share", jnum(sv->mem_share));
	put(o, "kv_bytes_per_token", jnum(sv->kv_bytes_per_token));
	put(o, "prefill_chunk_tokens", json_object_new_int(sv->prefill_chunk));
	put(o, "decode_batch", json_object_new_int(sv->decode_batch));
	put(o, "prefill_tokens_per_s", sv->prefill_tokens_per_s > 0 ?
				       jnum(sv->prefill_tokens_per_s) : NULL);
	put(o, "decode_tokens_per_s", sv->decode_tokens_per_s > 0 ?
				      jnum(sv->decode_tokens_per_s) : NULL);
	put(o, "decode_step_s", sv->decode_step_s > 0 ? jnum(sv->decode_step_s) : NULL);
	return o;
}

/* ---- text helpers ------------------------------------------------------------ */

static void dur(double s, char *buf, size_t len)
{
	if (s > 0 && s < 1)
		adv_snprintf(buf, len, "%.2fs", s);
	else
		options_format_duration(s, buf, len);
}

/*
 * The findings of check and ckpt, their messages and fixes in advisorctl's
 * own options ("--model NAME", not the plugin's "--llm-model=NAME"; the
 * JSON keeps sbatch's spelling, which a script may hand to sbatch).
 */
static void print_findings(FILE *f, const struct adv_finding *fs, int n)
{
	char msg[ADV_MSG_MAX], fix[ADV_MSG_MAX];
	size_t w = 4;

	for (int i = 0; i < n; i++)
		if (strlen(fs[i].code) > w)
			w = strlen(fs[i].code);
	for (int i = 0; i < n; i++) {
		options_ctl_spelling(fs[i].message, msg, sizeof(msg));
		fprintf(f, "  %-6s  %-*s  %s\n", sev_name((int)fs[i].severity), (int)w,
			ADV_TEXT(fs[i].code), ADV_TEXT(msg));
		/* The job's own terms first: that is the line the user edits. */
		if (fs[i].fix_job[0])
			fprintf(f, "  %-6s  %-*s  fix: %s\n", "", (int)w, "", ADV_TEXT(fs[i].fix_job));
		options_ctl_spelling(fs[i].fix, fix, sizeof(fix));
		if (fix[0])
			fprintf(f, "  %-6s  %-*s  %s %s\n", "", (int)w, "",
				fs[i].fix_job[0] ? "or: " : "fix:", ADV_TEXT(fix));
	}
}

/* "from" table: where each workload value came from (the job reader). */
static void print_sources(FILE *f, const struct adv_result *res)
{
	size_t w = 5;

	for (int i = 0; i < res->n_sources; i++)
		if (strlen(res->sources[i].field) > w)
			w = strlen(res->sources[i].field);
	fprintf(f, "read from the job:\n  %-*s  from\n", (int)w, "value");
	for (int i = 0; i < res->n_sources; i++)
		fprintf(f, "  %-*s  %s\n", (int)w, ADV_TEXT(res->sources[i].field),
			ADV_TEXT(res->sources[i].where));
	for (int i = 0; i < res->n_unknown; i++)
		fprintf(f, "  unknown: %s\n", ADV_TEXT(res->unknown[i]));
}

static json_object *sources_json(const struct adv_result *res)
{
	json_object *o = json_object_new_object();

	for (int i = 0; i < res->n_sources; i++)
		put(o, res->sources[i].field, jstr(res->sources[i].where));
	return o;
}

static json_object *unknown_json(const struct adv_result *res)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < res->n_unknown; i++)
		json_object_array_add(a, jstr(res->unknown[i]));
	return a;
}

static void print_memory(FILE *f, const struct adv_memory *m, bool infer)
{
	struct { const char *name; double v; bool show; } rows[] = {
		{ "weights", m->weights_gib, true },
		{ "gradients", m->grads_gib, !infer },
		{ "optimizer states", m->optimizer_gib, !infer },
		{ "activations", m->activations_gib, true },
		{ "KV cache", m->kv_cache_gib, infer },
		{ "runtime overhead", m->overhead_gib, true },
	};
	int stages = m->stages > 0 ? m->stages : 1;

	/* The rank a user compares with what torch.cuda reports: the stage
	 * costed, and which counter the total stands for. */
	if (stages > 1) {
		char why[96] = "";

		if (m->peak_inflight > 0)
			memory_peak_why(m, why, sizeof(why));
		fprintf(f, "memory per GPU (pipeline stage %d of %d, PP rank %d: the most loaded%s):\n",
			m->peak_stage, stages, m->peak_stage, why);
	}
	else
		fprintf(f, "memory per GPU:\n");
	for (size_t i = 0; i < ADV_ARRAY_SIZE(rows); i++)
		if (rows[i].show)
			fprintf(f, "  %-18s %9.2f GiB\n", rows[i].name, rows[i].v);
	fprintf(f, "  %-18s %9s\n", "", "---------");
	if (!infer)
		fprintf(f, "  %-18s %9.2f GiB  (policy allocator_margin)\n", "allocator margin",
			m->allocator_gib);
	if (!infer)
		fprintf(f, "  %-18s %9.2f GiB  (allocated + overhead + allocator margin: what torch logs as reserved)\n",
			"reserved", m->per_gpu_gib + m->allocator_gib);
	fprintf(f, "  %-18s %9.2f GiB  (%.0f%% of %.2f GiB usable; %.2f GiB on the GPU)\n",
		infer ? "total" : "total allocated", m->per_gpu_gib,
		m->usable_gib > 0 ? 100.0 * m->per_gpu_gib / m->usable_gib : 0.0,
		m->usable_gib, m->capacity_gib);
	/* The two figures (issue 26): the total is the estimate with advisor's
	 * assumptions; a reject rests on the least. */
	if (m->least_bounded && m->least_gib < m->per_gpu_gib - 0.005)
		fprintf(f, "  %-18s %9.2f GiB  (whatever the job leaves unstated: what a reject rests on)\n",
			"at least", m->least_gib);
}

static void print_checkpoint(FILE *f, const struct adv_checkpoint *c)
{
	char line[ADV_MSG_MAX], y[32], d[32], w[32];

	ckpt_describe(c, line, sizeof(line));
	dur(c->young_s, y, sizeof(y));
	dur(c->daly_s, d, sizeof(d));
	dur(c->write_s, w, sizeof(w));
	fprintf(f, "checkpoint: %s\n", line);
	fprintf(f, "  Young %s, Daly %s; write %s per checkpoint", y, d, w);
	if (c->size_gb > 0)
		fprintf(f, " (%.0f GB)", c->size_gb);
	fprintf(f, "; job MTBF %.1f h\n", c->job_mtbf_h);
}

/* A serving job: what fits and how fast, instead of training figures. */
static void print_serving(FILE *f, const struct adv_serving *sv, int seq, int dp)
{
	fprintf(f, "serving, per replica (the job runs %d): KV cache room for %.0f tokens, %.0f "
		"sequences of %d tokens (%.0f KiB per token, pool %.0f%% of GPU memory)\n",
		dp > 0 ? dp : 1, sv->kv_capacity_tokens, sv->kv_capacity_seqs, seq,
		sv->kv_bytes_per_token / 1024.0, 100.0 * sv->mem_share);
	fprintf(f, "  prefill ~%.0f tokens/s (chunks of %d tokens); decode ~%.0f tokens/s at %d "
		"sequences (%.1f ms per step)\n", sv->prefill_tokens_per_s, sv->prefill_chunk,
		sv->decode_tokens_per_s, sv->decode_batch, 1000.0 * sv->decode_step_s);
}

static void print_estimate(FILE *f, const struct adv_estimate *e, bool infer)
{
	fprintf(f, "estimate: %.1fB parameters", e->params_b);
	if (e->active_params_b > 0 && fabs(e->active_params_b - e->params_b) > 0.05)
		fprintf(f, " (%.1fB active)", e->active_params_b);
	if (infer) {
		/* The serving line has the throughput; no step time or MFU. */
	} else if (e->step_time_s > 0)
		fprintf(f, "; step %.2f s, %.0f tokens/s at %.0f%% MFU", e->step_time_s,
			e->tokens_per_s, 100 * e->mfu);
	if (e->bubble > 0)
		fprintf(f, "; pipeline bubble %.1f%%", 100 * e->bubble);
	fprintf(f, "\n");
	if (e->train_days > 0 && e->cost_usd > 0)
		fprintf(f, "  %.1f days, $%.0f, %.1f MWh\n", e->train_days, e->cost_usd,
			e->energy_mwh);
	else if (e->train_days > 0)
		fprintf(f, "  %.1f days, cost unknown (no price in the catalog), %.1f MWh\n",
			e->train_days, e->energy_mwh);
}

/* ---- tables ------------------------------------------------------------------ */

#define TABLE_COLS 12

struct table {
	size_t ncols, nrows, cap;
	char **cells;                  /* nrows * ncols, row 0 = header */
	bool right[TABLE_COLS];        /* right-align numbers */
};

/* Adds a row of ncols strings (copied). */
static void table_row(struct table *t, const char *const *row)
{
	size_t need = (t->nrows + 1) * t->ncols;

	if (need > t->cap) {
		size_t cap = t->cap ? t->cap : 64;
		char **p;

		while (cap < need)
			cap *= 2;
		p = realloc(t->cells, cap * sizeof(*p));
		if (!p)
			return;
		t->cells = p;
		t->cap = cap;
	}
	/* Cells come from clients (model, layout, host, partition): escaped here. */
	for (size_t i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = strdup(row[i] ? ADV_TEXT(row[i]) : "");
	t->nrows++;
}

static void table_init(struct table *t, size_t ncols, const char *const *header,
		       const bool *right)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	for (size_t i = 0; i < ncols; i++)
		t->right[i] = right && right[i];
	table_row(t, header);
}

static void table_print(FILE *f, struct table *t)
{
	size_t w[TABLE_COLS] = { 0 };

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t l = s ? strlen(s) : 0;

			if (l > w[c])
				w[c] = l;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			bool last = c + 1 == t->ncols;

			if (t->right[c])
				fprintf(f, "%*s", (int)w[c], s ? s : "");
			else
				fprintf(f, "%-*s", last ? 0 : (int)w[c], s ? s : "");
			fputs(last ? "\n" : "  ", f);
		}
	}
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
}

static json_object *strings_json(char **s, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(s[i]));
	return a;
}

/* ---- check ------------------------------------------------------------------- */

void print_check(FILE *f, const struct adv_result *res, const char *decision_id, bool json)
{
	bool infer = res->task == ADV_TASK_INFER;

	if (json) {
		json_object *o = json_object_new_object();
		json_object *w = json_object_new_object();

		put(o, "verdict", jstr(engine_verdict_name(res->verdict)));
		put(o, "mode", jstr(policy_mode_name(res->mode)));
		put(o, "mode_partition", res->mode_partition[0] ? jstr(res->mode_partition) : NULL);
		put(o, "decision_id", jstr(decision_id));
		put(o, "layout", res->has_layout ? layout_json(&res->layout, res) : NULL);
		put(w, "precision", jstr_known(res, ADV_F_PRECISION,
					       engine_precision_name(res->precision)));
		put(w, "recompute", jstr_known(res, ADV_F_RECOMPUTE,
					       engine_recompute_name(res->recompute)));
		put(w, "task", jstr_known(res, ADV_F_TASK, engine_task_name(res->task)));
		put(w, "framework", jstr_known(res, ADV_F_FRAMEWORK,
					       engine_framework_name(res->framework)));
		put(w, "seq", jint_known(res, ADV_F_SEQ, res->seq));
		put(w, "mbs", jint_known(res, ADV_F_MBS, res->mbs));
		put(w, "gbs", jint_known(res, ADV_F_GBS, res->gbs));
		put(w, "attention", jstr_known(res, ADV_F_ATTENTION,
					       engine_attention_name(res->attention)));
		put(o, "workload", w);
		put(o, "assumed", assumed_json(res));
		put(o, "from", origins_json(res));
		put(o, "memory", res->has_memory ? memory_json(&res->memory, infer) : NULL);
		put(o, "checkpoint", res->has_checkpoint ? checkpoint_json(&res->checkpoint, false)
							 : NULL);
		put(o, "estimate", res->has_estimate ? estimate_json(&res->estimate) : NULL);
		put(o, "serving", res->has_serving ? serving_json(&res->serving) : NULL);
		put(o, "findings", findings_json(res->findings, res->n_findings, res));
		put(o, "llm_job", json_object_new_boolean(res->llm_job));
		put(o, "not_llm_why", !res->llm_job && res->not_llm_why[0] ? jstr(res->not_llm_why)
									      : NULL);
		put(o, "model", res->model[0] ? jstr(res->model) : NULL);
		put(o, "sources", sources_json(res));
		put(o, "unknown", unknown_json(res));
		print_json(f, o);
		return;
	}
	if (!res->llm_job && res->n_findings == 0 && !res->has_layout) {
		/* Issue 28: why, as the reader found it (the command the job
		 * runs, the evidence not found, the program read without an
		 * LLM), escaped: it quotes the job.  --verbose adds the sources. */
		if (res->not_llm_why[0])
			fprintf(f, "verdict: %s   (not an LLM job: %s; nothing to check)\n",
				engine_verdict_name(res->verdict), ADV_TEXT(res->not_llm_why));
		else
			fprintf(f, "verdict: %s   (not an LLM job: no launcher, trainer or --llm-* "
				"option recognised; nothing to check)\n",
				engine_verdict_name(res->verdict));
		return;
	}
	fprintf(f, "verdict: %s", engine_verdict_name(res->verdict));
	/* The partition is the job's spelling of it (-p a,b), the decision id
	 * the server's: both escaped (fuzz_path found the partition raw). */
	if (res->mode_partition[0])
		fprintf(f, " (mode %s, set by partition %s of the list)", policy_mode_name(res->mode),
			ADV_TEXT(res->mode_partition));
	else if (res->mode != ADV_MODE_ENFORCE)
		fprintf(f, " (mode %s)", policy_mode_name(res->mode));
	if (decision_id && *decision_id)
		fprintf(f, "   decision %s", ADV_TEXT(decision_id));
	fprintf(f, "\n");
	if (res->has_layout) {
		char l[96], b[7][32];

		engine_layout_string_from(&res->layout, res->from, l, sizeof(l));
		if (infer)
			fprintf(f, "layout: %s  (%d %s = %d %s x %d; %s%s%s, seq %s, "
				"%s %s at once)\n", l, res->layout.gpus,
				adv_plural(res->layout.gpus, "GPU", "GPUs"), res->layout.nodes,
				adv_plural(res->layout.nodes, "node", "nodes"),
				res->layout.gpus_per_node, engine_task_name(res->task),
				is_assumed(res, ADV_F_PRECISION) ? ", precision " : " ",
				shown(res, ADV_F_PRECISION, b[0], sizeof(b[0])),
				shown(res, ADV_F_SEQ, b[1], sizeof(b[1])),
				shown(res, ADV_F_MBS, b[2], sizeof(b[2])),
				adv_plural(res->mbs, "sequence", "sequences"));
		else
			fprintf(f, "layout: %s  (%d %s = %d %s x %d; ZeRO-%s%s; %s%s%s, seq %s, "
				"mbs %s, gbs %s, recompute %s, %s attention)\n", l, res->layout.gpus,
				adv_plural(res->layout.gpus, "GPU", "GPUs"), res->layout.nodes,
				adv_plural(res->layout.nodes, "node", "nodes"), res->layout.gpus_per_node,
				shown(res, ADV_F_ZERO, b[0], sizeof(b[0])),
				res->layout.sp && !is_assumed(res, ADV_F_SP) ? "; sequence parallel" : "",
				engine_task_name(res->task),
				is_assumed(res, ADV_F_PRECISION) ? ", precision " : " ",
				shown(res, ADV_F_PRECISION, b[1], sizeof(b[1])),
				shown(res, ADV_F_SEQ, b[2], sizeof(b[2])),
				shown(res, ADV_F_MBS, b[3], sizeof(b[3])),
				shown(res, ADV_F_GBS, b[4], sizeof(b[4])),
				shown(res, ADV_F_RECOMPUTE, b[5], sizeof(b[5])),
				shown(res, ADV_F_ATTENTION, b[6], sizeof(b[6])));
		print_assumed(f, res);
	}
	if (res->model[0])
		fprintf(f, "model: %s\n", ADV_TEXT(res->model));
	if (res->n_findings) {
		fprintf(f, "findings:\n");
		print_findings(f, res->findings, res->n_findings);
	}
	if (res->n_sources || res->n_unknown)
		print_sources(f, res);
	if (res->has_memory)
		print_memory(f, &res->memory, infer);
	if (res->has_checkpoint)
		print_checkpoint(f, &res->checkpoint);
	if (res->has_estimate)
		print_estimate(f, &res->estimate, infer);
	if (res->has_serving)
		print_serving(f, &res->serving, res->seq, res->layout.dp);
	/* Issue 21: the command that prints this report's findings again later. */
	if (decision_id && *decision_id)
		fprintf(f, "see: advisorctl show %s\n", ADV_TEXT(decision_id));
}

void print_not_llm_why(FILE *f, const struct adv_result *res)
{
	if (res->llm_job || res->n_findings || res->has_layout)
		return;
	if (res->n_sources || res->n_unknown)
		print_sources(f, res);
	else
		fprintf(f, "the reader found no launcher, trainer or program of the job's to read\n");
}

/* ---- ckpt, plan -------------------------------------------------------------- */

void print_ckpt(FILE *f, const Advisor__CkptResponse *r, bool json)
{
	struct adv_finding fs[ADV_MAX_FINDINGS];
	struct adv_checkpoint c;
	int n = (int)(r->n_findings < ADV_MAX_FINDINGS ? r->n_findings : ADV_MAX_FINDINGS);
	int verdict = r->has_verdict ? r->verdict : 0;

	for (int i = 0; i < n; i++)
		convert_finding_from_pb(r->findings[i], &fs[i]);
	if (r->checkpoint)
		convert_checkpoint_from_pb(r->checkpoint, &c);
	if (json) {
		json_object *o = r->checkpoint ? checkpoint_json(&c, true) : json_object_new_object();

		if (r->checkpoint && !r->checkpoint->has_size_gb)
			put(o, "size_gb", NULL);
		else if (r->checkpoint)
			put(o, "size_gb", jnum(c.size_gb));
		put(o, "verdict", jstr(verdict_name(verdict)));
		put(o, "findings", findings_json(fs, n, NULL));
		print_json(f, o);
		return;
	}
	fprintf(f, "verdict: %s\n", verdict_name(verdict));
	if (n) {
		fprintf(f, "findings:\n");
		print_findings(f, fs, n);
	}
	if (r->checkpoint)
		print_checkpoint(f, &c);
}

/* The plan as the options to pass back to sbatch or check. */
static void plan_options(const Advisor__Plan *p, char *buf, size_t len)
{
	const Advisor__LayoutOut *l = p->layout;
	const Advisor__WorkloadOut *w = p->workload;

	char vpp[16] = "";

	if (l->vpp > 1)
		adv_snprintf(vpp, sizeof(vpp), ",vpp%d", l->vpp);
	adv_snprintf(buf, len, "--llm-layout=tp%d,pp%d,cp%d,ep%d,etp%d%s%s --llm-zero=%d "
		     "--llm-mbs=%d --llm-recompute=%s --llm-precision=%s",
		     l->tp, l->pp, l->cp, l->ep, l->etp, vpp,
		     l->sp ? ",sp" : ",nosp", l->zero, w ? w->mbs : 1,
		     engine_recompute_name(w ? w->recompute : 0),
		     engine_precision_name(w ? w->precision : 0));
}

void print_plan(FILE *f, const Advisor__PlanResponse *r, bool json)
{
	if (json) {
		json_object *o = json_object_new_object(), *a = json_object_new_array();

		for (size_t i = 0; i < r->n_plans; i++) {
			const Advisor__Plan *p = r->plans[i];
			json_object *x = json_object_new_object(), *w = json_object_new_object();
			struct adv_layout_out l;
			struct adv_memory m;
			struct adv_estimate e;
			char opts[512];

			convert_layout_from_pb(p->layout, &l);
			convert_memory_from_pb(p->memory, &m);
			convert_estimate_from_pb(p->estimate, &e);
			put(x, "layout", layout_json(&l, NULL));
			put(w, "mbs", json_object_new_int(p->workload ? p->workload->mbs : 1));
			put(w, "recompute", jstr(engine_recompute_name(p->workload ? p->workload->recompute : 0)));
			put(w, "precision", jstr(engine_precision_name(p->workload ? p->workload->precision : 0)));
			put(w, "seq", json_object_new_int(p->workload ? p->workload->seq : 0));
			put(w, "gbs", json_object_new_int(p->workload ? p->workload->gbs : 0));
			put(x, "workload", w);
			put(x, "memory", memory_json(&m, p->workload &&
						      p->workload->task == ADV_TASK_INFER));
			put(x, "estimate", estimate_json(&e));
			put(x, "why", jstr(p->why));
			plan_options(p, opts, sizeof(opts));
			put(x, "options", jstr(opts));
			json_object_array_add(a, x);
		}
		put(o, "plans", a);
		put(o, "note", jstr(r->note));
		print_json(f, o);
		return;
	}
	if (r->n_plans == 0) {
		fprintf(f, "no plan: %s\n", r->note ? ADV_TEXT(r->note) : "nothing fits");
		return;
	}
	{
		static const char *const hdr[] = { "#", "LAYOUT", "ZERO", "MBS", "RECOMPUTE",
						   "MEM GiB", "TOKENS/S", "STEP s", "MFU", "WHY" };
		static const bool right[] = { 1, 0, 1, 1, 0, 1, 1, 1, 1, 0 };
		struct table t;

		table_init(&t, 10, hdr, right);
		for (size_t i = 0; i < r->n_plans; i++) {
			const Advisor__Plan *p = r->plans[i];
			struct adv_layout_out l;
			char c[9][96];
			const char *row[10];

			convert_layout_from_pb(p->layout, &l);
			snprintf(c[0], sizeof(c[0]), "%zu", i + 1);
			engine_layout_string(&l, c[1], sizeof(c[1]));
			snprintf(c[2], sizeof(c[2]), "%d", l.zero);
			snprintf(c[3], sizeof(c[3]), "%d", p->workload ? p->workload->mbs : 1);
			snprintf(c[4], sizeof(c[4]), "%s",
				 engine_recompute_name(p->workload ? p->workload->recompute : 0));
			snprintf(c[5], sizeof(c[5]), "%.1f", p->memory ? p->memory->per_gpu_gib : 0);
			snprintf(c[6], sizeof(c[6]), "%.0f", p->estimate ? p->estimate->tokens_per_s : 0);
			snprintf(c[7], sizeof(c[7]), "%.2f", p->estimate ? p->estimate->step_time_s : 0);
			snprintf(c[8], sizeof(c[8]), "%.0f%%", p->estimate ? 100 * p->estimate->mfu : 0);
			for (int k = 0; k < 9; k++)
				row[k] = c[k];
			row[9] = p->why ? p->why : "";
			table_row(&t, row);
		}
		table_print(f, &t);
		{
			char opts[512];

			plan_options(r->plans[0], opts, sizeof(opts));
			fprintf(f, "\nbest: %s\n", ADV_TEXT(opts));
		}
	}
}

/* ---- catalog ----------------------------------------------------------------- */

#define OPT_NUM(m, f) ((m)->has_##f ? jnum((m)->f) : NULL)
#define OPT_INT(m, f) ((m)->has_##f ? json_object_new_int((m)->f) : NULL)

static json_object *gpu_json(const Advisor__GpuInfo *g)
{
	json_object *o = json_object_new_object();

	put(o, "name", jstr(g->name));
	put(o, "aliases", strings_json(g->aliases, g->n_aliases));
	put(o, "vendor", jstr(g->vendor));
	put(o, "memory_gib", OPT_NUM(g, memory_gib));
	put(o, "memory_bandwidth_tbs", OPT_NUM(g, memory_bandwidth_tbs));
	put(o, "bf16_tflops", OPT_NUM(g, bf16_tflops));
	put(o, "fp8_tflops", g->has_fp8_tflops && g->fp8_tflops > 0 ? jnum(g->fp8_tflops) : NULL);
	put(o, "fp32_tflops", OPT_NUM(g, fp32_tflops));
	put(o, "interconnect_gbs", OPT_NUM(g, interconnect_gbs));
	put(o, "network_gbs", OPT_NUM(g, network_gbs));
	put(o, "gpus_per_node", OPT_INT(g, gpus_per_node));
	put(o, "tdp_w", OPT_NUM(g, tdp_w));
	put(o, "price_per_hour_usd", OPT_NUM(g, price_per_hour_usd));
	return o;
}

static json_object *model_json(const Advisor__ModelInfo *m)
{
	json_object *o = json_object_new_object();

	put(o, "name", jstr(m->name));
	put(o, "aliases", strings_json(m->aliases, m->n_aliases));
	put(o, "params_b", OPT_NUM(m, params_b));
	put(o, "computed_params_b", OPT_NUM(m, computed_params_b));
	put(o, "active_params_b", OPT_NUM(m, active_params_b));
	put(o, "layers", OPT_INT(m, layers));
	put(o, "hidden", OPT_INT(m, hidden));
	put(o, "heads", OPT_INT(m, heads));
	put(o, "kv_heads", OPT_INT(m, kv_heads));
	put(o, "head_dim", OPT_INT(m, head_dim));
	put(o, "ffn_hidden", OPT_INT(m, ffn_hidden));
	put(o, "vocab", OPT_INT(m, vocab));
	put(o, "max_seq", OPT_INT(m, max_seq));
	put(o, "experts", OPT_INT(m, experts));
	put(o, "top_k", OPT_INT(m, top_k));
	put(o, "mla", json_object_new_boolean(m->has_mla && m->mla));
	return o;
}

void print_catalog(FILE *f, const Advisor__CatalogResponse *r, bool json)
{
	char b[10][48];

	if (json) {
		json_object *o = json_object_new_object(), *g = json_object_new_array(),
			    *m = json_object_new_array();

		for (size_t i = 0; i < r->n_gpus; i++)
			json_object_array_add(g, gpu_json(r->gpus[i]));
		for (size_t i = 0; i < r->n_models; i++)
			json_object_array_add(m, model_json(r->models[i]));
		put(o, "gpus", g);
		put(o, "models", m);
		print_json(f, o);
		return;
	}
	if (r->n_gpus) {
		static const char *const hdr[] = { "GPU", "VENDOR", "MEM GiB", "BF16 TF", "FP8 TF",
						   "HBM TB/s", "LINK GB/s", "PER NODE", "$/h",
						   "ALIASES" };
		static const bool right[] = { 0, 0, 1, 1, 1, 1, 1, 1, 1, 0 };
		struct table t;

		table_init(&t, 10, hdr, right);
		for (size_t i = 0; i < r->n_gpus; i++) {
			const Advisor__GpuInfo *g = r->gpus[i];
			char aliases[256] = "";
			const char *row[10];

			for (size_t k = 0; k < g->n_aliases; k++) {
				if (k)
					adv_strlcat(aliases, ", ", sizeof(aliases));
				adv_strlcat(aliases, g->aliases[k], sizeof(aliases));
			}
			snprintf(b[2], sizeof(b[2]), "%.2f", g->memory_gib);
			snprintf(b[3], sizeof(b[3]), "%.0f", g->bf16_tflops);
			snprintf(b[4], sizeof(b[4]), g->fp8_tflops > 0 ? "%.0f" : "-", g->fp8_tflops);
			snprintf(b[5], sizeof(b[5]), "%.2f", g->memory_bandwidth_tbs);
			snprintf(b[6], sizeof(b[6]), "%.0f", g->interconnect_gbs);
			snprintf(b[7], sizeof(b[7]), "%d", g->gpus_per_node);
			snprintf(b[8], sizeof(b[8]), "%.2f", g->price_per_hour_usd);
			row[0] = g->name; row[1] = g->vendor; row[2] = b[2]; row[3] = b[3];
			row[4] = b[4]; row[5] = b[5]; row[6] = b[6]; row[7] = b[7]; row[8] = b[8];
			row[9] = aliases;
			table_row(&t, row);
		}
		table_print(f, &t);
	}
	if (r->n_gpus && r->n_models)
		fputc('\n', f);
	if (r->n_models) {
		static const char *const hdr[] = { "MODEL", "PARAMS B", "ACTIVE B", "LAYERS",
						   "HIDDEN", "HEADS", "KV", "FFN", "VOCAB",
						   "MAX SEQ", "MOE" };
		static const bool right[] = { 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 };
		struct table t;

		table_init(&t, 11, hdr, right);
		for (size_t i = 0; i < r->n_models; i++) {
			const Advisor__ModelInfo *m = r->models[i];
			char moe[32] = "-", c[11][24];
			const char *row[11];

			snprintf(c[1], sizeof(c[1]), "%.1f", m->has_params_b ? m->params_b
								 : m->computed_params_b);
			snprintf(c[2], sizeof(c[2]), "%.1f", m->active_params_b);
			snprintf(c[3], sizeof(c[3]), "%d", m->layers);
			snprintf(c[4], sizeof(c[4]), "%d", m->hidden);
			snprintf(c[5], sizeof(c[5]), "%d", m->heads);
			snprintf(c[6], sizeof(c[6]), "%d", m->kv_heads);
			snprintf(c[7], sizeof(c[7]), "%d", m->ffn_hidden);
			snprintf(c[8], sizeof(c[8]), "%d", m->vocab);
			snprintf(c[9], sizeof(c[9]), "%d", m->max_seq);
			if (m->has_experts && m->experts > 0)
				snprintf(moe, sizeof(moe), "%d experts, top-%d", m->experts, m->top_k);
			row[0] = m->name;
			for (int k = 1; k <= 9; k++)
				row[k] = c[k];
			row[10] = moe;
			table_row(&t, row);
		}
		table_print(f, &t);
	}
}

void print_policy(FILE *f, const Advisor__PolicyResponse *r, bool json)
{
	if (json) {
		json_object *o = json_object_new_object();

		put(o, "file", jstr(r->file));
		put(o, "yaml", jstr(r->yaml));
		print_json(f, o);
		return;
	}
	fputs(r->yaml ? r->yaml : "", f);
}

/* ---- history ----------------------------------------------------------------- */

static const char *context_name(int c)
{
	/* An unknown context reads as advisorctl's, the first. */
	return engine_context_name((enum adv_context)(c < 0 || c >= ADV_CTX_COUNT ? 0 : c));
}

static void iso_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		adv_snprintf(buf, len, "%lld", (long long)t);
}

/* One record of history --json; show adds what its user saw. */
static json_object *decision_json(const Advisor__Decision *d)
{
	json_object *x = json_object_new_object();

	put(x, "id", jstr(d->id));
	put(x, "time", json_object_new_int64(d->time));
	/* Issue 13: the node that decided (the log may be the cluster's). */
	put(x, "host", jstr(d->host));
	put(x, "uid", json_object_new_int64(d->uid));
	put(x, "user", jstr(d->user));
	put(x, "job_id", d->has_job_id ? json_object_new_int64(d->job_id) : NULL);
	put(x, "context", jstr(context_name(d->context)));
	put(x, "gpu", jstr(d->gpu));
	put(x, "gpus", json_object_new_int(d->gpus));
	put(x, "nodes", json_object_new_int(d->nodes));
	put(x, "partition", jstr(d->partition));
	put(x, "model", jstr(d->model));
	put(x, "layout", jstr(d->layout));
	put(x, "verdict", jstr(verdict_name(d->verdict)));
	/* Issue 30: the mode in force (null: an older advisord's row) and
	 * the rejects warn let through, as --syslog-json has them. */
	put(x, "mode", d->has_mode ? jstr(mode_name(d->mode)) : NULL);
	put(x, "codes", strings_json(d->codes, d->n_codes));
	put(x, "unenforced", strings_json(d->unenforced, d->n_unenforced));
	put(x, "mem_gib", d->has_mem_gib ? jnum(d->mem_gib) : NULL);
	put(x, "ckpt_interval_s", d->has_ckpt_interval_s ? jnum(d->ckpt_interval_s) : NULL);
	/* Issue 14: checks an aggregated record stands for; a what-if query. */
	put(x, "repeat", json_object_new_int64(d->has_repeat && d->repeat > 1 ? d->repeat : 1));
	put(x, "query", json_object_new_boolean(d->has_query && d->query));
	/* Issue 21: the submission of a node check; the batch script's name. */
	put(x, "parent", jstr(d->parent));
	put(x, "script", jstr(d->script));
	/* Issue 30: "user alice", "account physics", "partition debug": accepted unchecked. */
	put(x, "exempt", jstr(d->exempt));
	return x;
}

/*
 * Issue 30: an exempt job is accepted without a check; said so, with the
 * policy's rule, so that it does not read as a clean accept.
 */
static const char *exempt_rule(const char *exempt)
{
	if (!strncmp(exempt, "user ", 5))
		return "the policy's exempt: users lists the user";
	if (!strncmp(exempt, "account ", 8))
		return "the policy's exempt: accounts lists the job's account";
	if (!strncmp(exempt, "partition ", 10))
		return "the policy sets mode off on the partition";
	return "the policy exempts it";
}

void print_history(FILE *f, const Advisor__HistoryResponse *r, bool json)
{
	if (json) {
		json_object *o = json_object_new_object(), *a = json_object_new_array();

		for (size_t i = 0; i < r->n_decisions; i++)
			json_object_array_add(a, decision_json(r->decisions[i]));
		put(o, "decisions", a);
		print_json(f, o);
		return;
	}
	if (r->n_decisions == 0) {
		fprintf(f, "no decisions match\n");
		return;
	}
	{
		static const char *const hdr[] = { "TIME", "DECISION", "HOST", "USER", "JOB",
						   "FROM", "MODEL", "GPUS", "LAYOUT", "MEM GiB",
						   "VERDICT", "FINDINGS" };
		static const bool right[] = { 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0 };
		struct table t;

		table_init(&t, 12, hdr, right);
		for (size_t i = 0; i < r->n_decisions; i++) {
			const Advisor__Decision *d = r->decisions[i];
			char when[32], job[16] = "-", gpus[16], mem[16] = "-", codes[512] = "";
			const char *row[12];

			iso_time(d->time, when, sizeof(when));
			if (d->has_job_id)
				snprintf(job, sizeof(job), "%u", d->job_id);
			snprintf(gpus, sizeof(gpus), "%d", d->gpus);
			if (d->has_mem_gib)
				snprintf(mem, sizeof(mem), "%.1f", d->mem_gib);
			/* An exempt job has no findings: the exemption stands in their column. */
			if (d->exempt)
				snprintf(codes, sizeof(codes), "exempt (%s)", d->exempt);
			for (size_t k = 0; k < d->n_codes; k++) {
				if (codes[0])
					adv_strlcat(codes, ",", sizeof(codes));
				adv_strlcat(codes, d->codes[k], sizeof(codes));
			}
			row[0] = when; row[1] = d->id; row[2] = d->host ? d->host : "-";
			row[3] = d->user; row[4] = job;
			row[5] = context_name(d->context); row[6] = d->model ? d->model : "-";
			row[7] = gpus; row[8] = d->layout ? d->layout : "-"; row[9] = mem;
			row[10] = verdict_name(d->verdict); row[11] = codes[0] ? codes : "-";
			table_row(&t, row);
		}
		table_print(f, &t);
	}
}

/* ---- show (issue 21) --------------------------------------------------------- */

static void show_line(const char *text, void *ctx)
{
	fprintf(ctx, "%s\n", ADV_TEXT(text));
}

static void show_json_line(const char *text, void *ctx)
{
	json_object_array_add(ctx, json_object_new_string(text));
}

/* "d-... 2026-11-25 06:09:07 on node1: step, job 1234, verdict accept" */
static void show_link(FILE *f, const char *lead, const Advisor__Decision *d)
{
	char when[32];

	iso_time(d->time, when, sizeof(when));
	fprintf(f, "%s%s  %s", lead, ADV_TEXT(d->id), when);
	if (d->host)
		fprintf(f, " on %s", ADV_TEXT(d->host));
	fprintf(f, ": %s", context_name(d->context));
	if (d->has_job_id)
		fprintf(f, ", job %u", d->job_id);
	fprintf(f, ", verdict %s", verdict_name(d->verdict));
	if (d->exempt)
		fprintf(f, ", exempt (%s)", ADV_TEXT(d->exempt));
	for (size_t k = 0; k < d->n_codes; k++)
		fprintf(f, "%s%s", k ? "," : " (", ADV_TEXT(d->codes[k]));
	fprintf(f, "%s\n", d->n_codes ? ")" : "");
}

static void print_show_json(FILE *f, const Advisor__HistoryResponse *r)
{
	const Advisor__Decision *d = r->decisions[0];
	json_object *o = decision_json(d), *a;

	put(o, "workload", jstr(d->workload));
	/* false: an older advisord made it and kept none of what follows. */
	put(o, "recorded", json_object_new_boolean(d->has_detail && d->detail));
	a = NULL;
	if (d->detail) {
		a = json_object_new_array();
		for (size_t i = 0; i < d->n_findings; i++) {
			struct adv_finding fd;
			json_object *x = json_object_new_object(), *lines = json_object_new_array();

			convert_finding_from_pb(d->findings[i], &fd);
			put(x, "code", jstr(fd.code));
			put(x, "severity", jstr(sev_name((int)fd.severity)));
			put(x, "message", jstr(fd.message));
			put(x, "fix", jstr(fd.fix));
			put(x, "fix_job", jstr(fd.fix_job));
			engine_finding_lines(&fd, show_json_line, lines);
			put(x, "lines", lines);
			json_object_array_add(a, x);
		}
	}
	put(o, "findings", a);
	put(o, "findings_left_out", json_object_new_int64(d->findings_left_out));
	a = NULL;
	if (d->detail) {
		a = json_object_new_array();
		for (size_t i = 0; i < d->n_sources; i++) {
			json_object *x = json_object_new_object();

			put(x, "field", jstr(d->sources[i]->field));
			put(x, "where", jstr(d->sources[i]->where));
			json_object_array_add(a, x);
		}
	}
	put(o, "sources", a);
	put(o, "sources_left_out", json_object_new_int64(d->sources_left_out));
	put(o, "parent", r->parent ? decision_json(r->parent) : NULL);
	a = json_object_new_array();
	for (size_t i = 0; i < r->n_children; i++)
		json_object_array_add(a, decision_json(r->children[i]));
	put(o, "children", a);
	print_json(f, o);
}

void print_show(FILE *f, const Advisor__HistoryResponse *r, bool json)
{
	const Advisor__Decision *d = r->decisions[0];
	char when[32];

	if (json) {
		print_show_json(f, r);
		return;
	}
	iso_time(d->time, when, sizeof(when));
	fprintf(f, "decision %s  %s%s%s\n", ADV_TEXT(d->id), when, d->host ? " on " : "",
		d->host ? ADV_TEXT(d->host) : "");
	fprintf(f, "user: %s (uid %u), %s%s", d->user ? ADV_TEXT(d->user) : "-", d->uid,
		d->has_query && d->query ? "what-if query of advisorctl check"
					 : context_name(d->context), d->has_job_id ? ", job " : "");
	if (d->has_job_id)
		fprintf(f, "%u", d->job_id);
	fprintf(f, "\nscript: %s\n", d->script ? ADV_TEXT(d->script)
			  : d->has_detail && d->detail ? "none (no batch script was read)"
						       : "not recorded");
	fprintf(f, "verdict: %s", verdict_name(d->verdict));
	if (d->has_repeat && d->repeat > 1)
		fprintf(f, " (%u identical checks of a user over the request budget)", d->repeat);
	if (d->exempt)
		fprintf(f, "\nexempt: %s (%s: accepted without a check)", ADV_TEXT(d->exempt),
			exempt_rule(d->exempt));
	fprintf(f, "\nresources: %d %s%s%s on %d %s%s%s\n", d->gpus, d->gpu ? ADV_TEXT(d->gpu) : "",
		d->gpu ? " " : "", adv_plural(d->gpus, "GPU", "GPUs"), d->nodes,
		adv_plural(d->nodes, "node", "nodes"), d->partition ? ", partition " : "",
		d->partition ? ADV_TEXT(d->partition) : "");
	fprintf(f, "model: %s   layout: %s", d->model ? ADV_TEXT(d->model) : "-",
		d->layout ? ADV_TEXT(d->layout) : "-");
	if (d->has_mem_gib)
		fprintf(f, "   memory: %.1f GiB per GPU", d->mem_gib);
	fprintf(f, "\nworkload: %s\n", d->workload ? ADV_TEXT(d->workload) : "-");
	if (!d->has_detail || !d->detail) {
		fprintf(f, "findings: not recorded (an advisord older than this one made the "
			"decision; its codes: ");
		for (size_t k = 0; k < d->n_codes; k++)
			fprintf(f, "%s%s", k ? " " : "", ADV_TEXT(d->codes[k]));
		fprintf(f, "%s)\nread from the job: not recorded\n", d->n_codes ? "" : "none");
	} else {
		fprintf(f, "findings:%s\n", d->n_findings ? " (as the user saw them)" : " none");
		for (size_t i = 0; i < d->n_findings; i++) {
			struct adv_finding fd;

			convert_finding_from_pb(d->findings[i], &fd);
			engine_finding_lines(&fd, show_line, f);
		}
		if (d->findings_left_out)
			fprintf(f, "(%u more %s left out: the decision log keeps %d KiB of findings "
				"per decision)\n", d->findings_left_out,
				adv_plural((int)d->findings_left_out, "finding", "findings"),
				DLOG_FINDINGS_MAX / 1024);
		if (d->n_sources) {
			size_t w = 5;

			for (size_t i = 0; i < d->n_sources; i++)
				if (d->sources[i]->field && strlen(d->sources[i]->field) > w)
					w = strlen(d->sources[i]->field);
			fprintf(f, "read from the job:\n  %-*s  from\n", (int)w, "value");
			for (size_t i = 0; i < d->n_sources; i++)
				fprintf(f, "  %-*s  %s\n", (int)w,
					d->sources[i]->field ? ADV_TEXT(d->sources[i]->field) : "",
					d->sources[i]->where ? ADV_TEXT(d->sources[i]->where) : "");
		} else {
			fprintf(f, "read from the job: nothing (the values are options or defaults)\n");
		}
		if (d->sources_left_out)
			fprintf(f, "(%u more %s left out: the decision log keeps %d KiB of sources "
				"per decision)\n", d->sources_left_out,
				adv_plural((int)d->sources_left_out, "source", "sources"),
				DLOG_SOURCES_MAX / 1024);
	}
	if (d->parent) {
		if (r->parent)
			show_link(f, "submission: ", r->parent);
		else
			fprintf(f, "submission: %s (not in this log, or not yours)\n",
				ADV_TEXT(d->parent));
	}
	if (r->n_children) {
		fprintf(f, "node checks (%zu%s):\n", r->n_children,
			r->n_children >= DLOG_SHOW_CHILDREN_MAX ? ", the oldest only: history --job "
			"lists them all" : "");
		for (size_t i = 0; i < r->n_children; i++)
			show_link(f, "  ", r->children[i]);
	}
}

/* ---- stats, reload, status --------------------------------------------------- */

static json_object *count_json(const Advisor__LabelledCount *c)
{
	json_object *x = json_object_new_object();

	if (c->kind)
		put(x, "kind", jstr(c->kind));
	if (c->partition)
		put(x, "partition", json_object_new_string(c->partition));
	if (c->code)
		put(x, "code", jstr(c->code));
	if (c->has_verdict)
		put(x, "verdict", jstr(verdict_name(c->verdict)));
	if (c->has_severity)
		put(x, "severity", jstr(sev_name(c->severity)));
	if (c->has_mode)
		put(x, "mode", jstr(mode_name(c->mode)));
	if (c->host)
		put(x, "host", jstr(c->host));
	put(x, "count", json_object_new_uint64(c->count));
	return x;
}

static json_object *counts_json(Advisor__LabelledCount **c, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, count_json(c[i]));
	return a;
}

/* The labelled counters and histograms that --prometheus prints, for scripts. */
static void stats_json_more(json_object *o, const Advisor__StatsResponse *r)
{
	json_object *lat = json_object_new_array();

	put(o, "log_dropped", json_object_new_uint64(r->log_dropped));
	put(o, "log_shed", json_object_new_uint64(r->log_shed));
	put(o, "log_bytes", json_object_new_uint64(r->log_bytes));
	{
		json_object *rl = json_object_new_array();

		for (size_t i = 0; i < r->n_rate_limited; i++) {
			json_object *y = json_object_new_object();

			put(y, "user", jstr(r->rate_limited[i]->user));
			put(y, "count", json_object_new_uint64(r->rate_limited[i]->count));
			json_object_array_add(rl, y);
		}
		put(o, "rate_limited", rl);
	}
	put(o, "version", jstr(r->version));
	put(o, "now", json_object_new_int64(r->now));
	put(o, "config_loaded", json_object_new_int64(r->config_loaded));
	put(o, "requests_by_kind", counts_json(r->requests_by_kind, r->n_requests_by_kind));
	put(o, "decisions", counts_json(r->decisions, r->n_decisions));
	put(o, "unenforced", counts_json(r->unenforced, r->n_unenforced));
	put(o, "findings", counts_json(r->findings, r->n_findings));
	for (size_t i = 0; i < r->n_latency; i++) {
		const Advisor__LatencyHistogram *h = r->latency[i];
		json_object *x = json_object_new_object(), *b = json_object_new_array();

		put(x, "kind", jstr(h->kind));
		for (size_t k = 0; k < h->n_upper_s && k < h->n_cumulative; k++) {
			json_object *y = json_object_new_object();

			put(y, "le", jnum(h->upper_s[k]));
			put(y, "count", json_object_new_uint64(h->cumulative[k]));
			json_object_array_add(b, y);
		}
		put(x, "buckets", b);
		put(x, "count", json_object_new_uint64(h->count));
		put(x, "sum_s", jnum(h->sum_s));
		json_object_array_add(lat, x);
	}
	put(o, "latency", lat);
}

void print_stats(FILE *f, const Advisor__StatsResponse *r, bool json)
{
	char since[32];

	if (json) {
		json_object *o = json_object_new_object();

		put(o, "requests", json_object_new_uint64(r->requests));
		put(o, "accept", json_object_new_uint64(r->accept));
		put(o, "warn", json_object_new_uint64(r->warn));
		put(o, "reject", json_object_new_uint64(r->reject));
		put(o, "errors", json_object_new_uint64(r->errors));
		put(o, "p50_ms", jnum(r->p50_ms));
		put(o, "p99_ms", jnum(r->p99_ms));
		put(o, "started", json_object_new_int64(r->started));
		put(o, "connections", json_object_new_uint64(r->connections));
		put(o, "reloads", json_object_new_uint64(r->reloads));
		put(o, "last_reload_ok", json_object_new_boolean(r->last_reload_ok));
		put(o, "log_queue", json_object_new_uint64(r->log_queue));
		put(o, "logged", json_object_new_uint64(r->logged));
		stats_json_more(o, r);
		print_json(f, o);
		return;
	}
	iso_time(r->started, since, sizeof(since));
	fprintf(f, "%-12s %llu (accept %llu, warn %llu, reject %llu), %llu errors\n", "requests",
		(unsigned long long)r->requests, (unsigned long long)r->accept,
		(unsigned long long)r->warn, (unsigned long long)r->reject,
		(unsigned long long)r->errors);
	fprintf(f, "%-12s p50 %.3f ms, p99 %.3f ms\n", "latency", r->p50_ms, r->p99_ms);
	fprintf(f, "%-12s %llu\n", "connections", (unsigned long long)r->connections);
	fprintf(f, "%-12s %llu%s\n", "reloads", (unsigned long long)r->reloads,
		r->reloads ? (r->last_reload_ok ? " (last ok)" : " (last FAILED)") : "");
	fprintf(f, "%-12s %llu logged, %llu queued\n", "decisions",
		(unsigned long long)r->logged, (unsigned long long)r->log_queue);
	fprintf(f, "%-12s %s\n", "since", since);
}

void print_reload(FILE *f, const Advisor__ReloadResponse *r, bool json)
{
	if (json) {
		json_object *o = json_object_new_object();

		put(o, "ok", json_object_new_boolean(r->ok));
		put(o, "message", jstr(r->message));
		print_json(f, o);
		return;
	}
	fprintf(f, "%s\n", r->message ? r->message : (r->ok ? "reloaded" : "reload failed"));
}

void print_status(FILE *f, const Advisor__StatusResponse *r, bool json)
{
	char since[32], loaded[32];

	if (json) {
		json_object *o = json_object_new_object();

		put(o, "up", json_object_new_boolean(1));
		put(o, "version", jstr(r->version));
		put(o, "pid", json_object_new_int(r->pid));
		put(o, "started", json_object_new_int64(r->started));
		put(o, "loaded", json_object_new_int64(r->loaded));
		put(o, "socket", jstr(r->socket));
		put(o, "db", jstr(r->db));
		put(o, "log", jstr(r->log ? r->log : r->db));
		put(o, "spool", jstr(r->spool));
		put(o, "catalog_files", strings_json(r->catalog_files, r->n_catalog_files));
		put(o, "policy_file", jstr(r->policy_file));
		put(o, "slurm", jstr(r->slurm));
		put(o, "slurm_answered", r->has_slurm_answered
			? json_object_new_boolean(r->slurm_answered) : NULL);
		print_json(f, o);
		return;
	}
	iso_time(r->started, since, sizeof(since));
	iso_time(r->loaded, loaded, sizeof(loaded));
	fprintf(f, "advisord %s is up (pid %d) since %s\n", r->version ? r->version : "?",
		r->pid, since);
	fprintf(f, "  %-8s %s\n", "socket", r->socket ? r->socket : "-");
	/* An older daemon sends db alone. */
	fprintf(f, "  %-8s %s\n", "log", r->log ? r->log : r->db ? r->db : "-");
	if (r->spool)
		fprintf(f, "  %-8s %s\n", "spool", r->spool);
	for (size_t i = 0; i < r->n_catalog_files; i++)
		fprintf(f, "  %-8s %s\n", i ? "" : "catalog", r->catalog_files[i]);
	fprintf(f, "  %-8s %s\n", "policy", r->policy_file ? r->policy_file : "-");
	fprintf(f, "  %-8s %s\n", "loaded", loaded);
	if (r->slurm)
		fprintf(f, "  %-8s %s%s\n", "slurm", r->has_slurm_answered && !r->slurm_answered
			? "WARNING: " : "", r->slurm);
}

/* ---- Prometheus text exposition (stats --prometheus) ----------------------- */

/* A label value with \, " and newline escaped as the text format requires. */
static void prom_label_value(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void prom_value(FILE *f, const char *name, double v)
{
	fprintf(f, "%s %.10g\n", name, v);
}

static void prom_count(FILE *f, const char *name, uint64_t v)
{
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

/* name{k1="v1",k2="v2"} n, for labelled counters (k2 may be NULL). */
static void prom_labelled(FILE *f, const char *name, const char *k1, const char *v1,
			  const char *k2, const char *v2, uint64_t n)
{
	fprintf(f, "%s{%s=\"", name, k1);
	prom_label_value(f, v1);
	if (k2) {
		fprintf(f, "\",%s=\"", k2);
		prom_label_value(f, v2);
	}
	fprintf(f, "\"} %llu\n", (unsigned long long)n);
}

static void prom_histograms(FILE *f, const Advisor__StatsResponse *r)
{
	static const char name[] = "advisor_request_duration_seconds";

	prom_family(f, name, "histogram", "Time from a decoded request to its encoded answer, "
		    "by kind (check, or any other request).");
	for (size_t i = 0; i < r->n_latency; i++) {
		const Advisor__LatencyHistogram *h = r->latency[i];

		for (size_t k = 0; k < h->n_upper_s && k < h->n_cumulative; k++) {
			fprintf(f, "%s_bucket{kind=\"", name);
			prom_label_value(f, h->kind);
			fprintf(f, "\",le=\"%g\"} %llu\n", h->upper_s[k],
				(unsigned long long)h->cumulative[k]);
		}
		fprintf(f, "%s_bucket{kind=\"", name);
		prom_label_value(f, h->kind);
		fprintf(f, "\",le=\"+Inf\"} %llu\n", (unsigned long long)h->count);
		fprintf(f, "%s_sum{kind=\"", name);
		prom_label_value(f, h->kind);
		fprintf(f, "\"} %.9g\n", h->sum_s);
		fprintf(f, "%s_count{kind=\"", name);
		prom_label_value(f, h->kind);
		fprintf(f, "\"} %llu\n", (unsigned long long)h->count);
	}
}

static void prom_labelled_families(FILE *f, const Advisor__StatsResponse *r)
{
	prom_family(f, "advisor_requests_total", "counter", "Requests answered, by kind.");
	for (size_t i = 0; i < r->n_requests_by_kind; i++)
		prom_labelled(f, "advisor_requests_total", "kind", r->requests_by_kind[i]->kind,
			      NULL, NULL, r->requests_by_kind[i]->count);
	prom_family(f, "advisor_decisions_total", "counter",
		    "Checks answered, by partition and verdict (partition \"\" = none given, "
		    "\"_other\" = one the policy does not list).");
	for (size_t i = 0; i < r->n_decisions; i++)
		prom_labelled(f, "advisor_decisions_total", "partition", r->decisions[i]->partition,
			      "verdict", verdict_name(r->decisions[i]->verdict),
			      r->decisions[i]->count);
	prom_family(f, "advisor_unenforced_rejects_total", "counter",
		    "Checks that mode warn let through but mode enforce would have rejected, "
		    "by partition.");
	for (size_t i = 0; i < r->n_unenforced; i++)
		prom_labelled(f, "advisor_unenforced_rejects_total", "partition",
			      r->unenforced[i]->partition, NULL, NULL, r->unenforced[i]->count);
	prom_family(f, "advisor_findings_total", "counter",
		    "Findings in answered checks, by code and severity as answered.");
	for (size_t i = 0; i < r->n_findings; i++)
		prom_labelled(f, "advisor_findings_total", "code", r->findings[i]->code,
			      "severity", sev_name(r->findings[i]->severity), r->findings[i]->count);
}

void print_prometheus(FILE *f, const Advisor__StatsResponse *r)
{
	prom_family(f, "advisor_up", "gauge", "1 when advisorctl reached advisord.");
	prom_value(f, "advisor_up", 1);
	prom_family(f, "advisor_build_info", "gauge", "The daemon's version, as a label.");
	fputs("advisor_build_info{version=\"", f);
	prom_label_value(f, r->version ? r->version : "unknown");
	fputs("\"} 1\n", f);
	prom_family(f, "advisor_start_time_seconds", "gauge", "When advisord started, unix time.");
	prom_value(f, "advisor_start_time_seconds", (double)r->started);
	prom_family(f, "advisor_uptime_seconds", "gauge", "Seconds since advisord started.");
	prom_value(f, "advisor_uptime_seconds",
		   r->has_now && r->now >= r->started ? (double)(r->now - r->started) : 0);
	prom_labelled_families(f, r);
	prom_family(f, "advisor_request_errors_total", "counter",
		    "Requests answered with an error (malformed, denied, bad request, ...).");
	prom_count(f, "advisor_request_errors_total", r->errors);
	prom_family(f, "advisor_connections_total", "counter", "Client connections accepted.");
	prom_count(f, "advisor_connections_total", r->connections);
	prom_histograms(f, r);
	prom_family(f, "advisor_reloads_total", "counter",
		    "Reloads of catalog and policy (SIGHUP or advisorctl reload), good or bad.");
	prom_count(f, "advisor_reloads_total", r->reloads);
	prom_family(f, "advisor_last_reload_success", "gauge",
		    "1 when the last reload succeeded (or none happened), 0 when it failed and "
		    "the previous configuration is still in force.");
	prom_value(f, "advisor_last_reload_success", r->last_reload_ok ? 1 : 0);
	prom_family(f, "advisor_config_loaded_timestamp_seconds", "gauge",
		    "When the catalog and policy in force were loaded, unix time.");
	prom_value(f, "advisor_config_loaded_timestamp_seconds", (double)r->config_loaded);
	prom_family(f, "advisor_decision_log_queue", "gauge",
		    "Decisions queued for the SQLite decision log, not yet committed.");
	prom_count(f, "advisor_decision_log_queue", r->log_queue);
	prom_family(f, "advisor_decision_log_written_total", "counter",
		    "Decisions committed to the decision log.");
	prom_count(f, "advisor_decision_log_written_total", r->logged);
	prom_family(f, "advisor_decision_log_dropped_total", "counter",
		    "Decisions that could not be queued for the decision log (queue full).");
	prom_count(f, "advisor_decision_log_dropped_total", r->log_dropped);
	prom_family(f, "advisor_decision_log_shed_total", "counter",
		    "Checks answered and counted but not logged: a user over policy log: "
		    "user_rows_per_min (what-if queries), or over it while the disk is under "
		    "log: reserve_mb (decisions).");
	prom_count(f, "advisor_decision_log_shed_total", r->log_shed);
	/* Issue 14. */
	prom_family(f, "advisor_decision_log_bytes", "gauge",
		    "Size of the decision log on disk (database and WAL), bytes.");
	prom_count(f, "advisor_decision_log_bytes", r->log_bytes);
	prom_family(f, "advisor_rate_limited_total", "counter",
		    "Requests over the user's budget (policy limits:): queries refused, plugin "
		    "checks answered and aggregated.");
	for (size_t i = 0; i < r->n_rate_limited; i++)
		prom_labelled(f, "advisor_rate_limited_total", "user", r->rate_limited[i]->user,
			      NULL, NULL, r->rate_limited[i]->count);
}

void print_prometheus_down(FILE *f)
{
	prom_family(f, "advisor_up", "gauge", "1 when advisorctl reached advisord.");
	prom_value(f, "advisor_up", 0);
}

/* ---- report: what enforcement would have blocked ------------------------------ */

/* Issue 30: the counts are of jobs, unless asked by decision (or from an older advisord). */
static bool report_by_job(const Advisor__ReportResponse *r)
{
	return r->has_by_decision && !r->by_decision;
}

static void print_report_json(FILE *f, const Advisor__ReportResponse *r)
{
	json_object *o = json_object_new_object(), *codes = json_object_new_array();
	json_object *parts = json_object_new_array(), *ex = json_object_new_object();
	bool by_job = report_by_job(r);

	put(o, "since", json_object_new_int64(r->since));
	put(o, "until", json_object_new_int64(r->until));
	/* What verdicts, modes, codes, partitions and the totals below count. */
	put(o, "by", jstr(by_job ? "job" : "decision"));
	/* Every decision of the period, however counted. */
	put(o, "decisions", json_object_new_uint64(r->has_rows ? r->rows : r->decisions));
	put(o, "jobs", by_job ? json_object_new_uint64(r->decisions) : NULL);
	put(o, "node_checks", by_job ? json_object_new_uint64(r->node_checks) : NULL);
	put(o, "node_rejected", by_job ? json_object_new_uint64(r->node_rejected) : NULL);
	put(o, "users", json_object_new_uint64(r->users));
	put(o, "exempt", json_object_new_uint64(r->exempt));
	put(o, "exempt_users", json_object_new_uint64(r->exempt_users));
	for (size_t i = 0; i < r->n_exemptions; i++)
		if (r->exemptions[i]->kind)
			put(ex, r->exemptions[i]->kind,
			    json_object_new_uint64(r->exemptions[i]->count));
	put(o, "exempt_by", ex);
	put(o, "rejected", json_object_new_uint64(r->rejected));
	put(o, "unenforced", json_object_new_uint64(r->unenforced));
	put(o, "unenforced_users", json_object_new_uint64(r->unenforced_users));
	put(o, "verdicts", counts_json(r->verdicts, r->n_verdicts));
	put(o, "modes", counts_json(r->modes, r->n_modes));
	/* Issue 13: the cluster's log has every node's decisions; which node made how many. */
	put(o, "hosts", counts_json(r->hosts, r->n_hosts));
	for (size_t i = 0; i < r->n_codes; i++) {
		const Advisor__ReportCode *c = r->codes[i];
		json_object *x = json_object_new_object();

		put(x, "code", jstr(c->code));
		put(x, "severity", c->has_severity ? jstr(sev_name(c->severity)) : NULL);
		put(x, "decisions", json_object_new_uint64(c->decisions));
		put(x, "users", json_object_new_uint64(c->users));
		put(x, "unenforced", json_object_new_uint64(c->unenforced));
		put(x, "rejected", json_object_new_uint64(c->rejected));
		json_object_array_add(codes, x);
	}
	put(o, "codes", codes);
	for (size_t i = 0; i < r->n_partitions; i++) {
		const Advisor__ReportPartition *p = r->partitions[i];
		json_object *x = json_object_new_object();

		put(x, "partition", p->partition ? json_object_new_string(p->partition) : NULL);
		put(x, "decisions", json_object_new_uint64(p->decisions));
		put(x, "users", json_object_new_uint64(p->users));
		put(x, "accept", json_object_new_uint64(p->accept));
		put(x, "warn", json_object_new_uint64(p->warn));
		put(x, "reject", json_object_new_uint64(p->reject));
		put(x, "unenforced", json_object_new_uint64(p->unenforced));
		json_object_array_add(parts, x);
	}
	put(o, "partitions", parts);
	print_json(f, o);
}

static void fmt_u(char *buf, size_t len, uint64_t v)
{
	adv_snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void print_report_codes(FILE *f, const Advisor__ReportResponse *r)
{
	const char *hdr[] = { "CODE", "SEVERITY", report_by_job(r) ? "JOBS" : "DECISIONS",
			      "USERS", "WOULD-REJECT", "REJECTED" };
	static const bool right[] = { 0, 0, 1, 1, 1, 1 };
	struct table t;

	table_init(&t, 6, hdr, right);
	for (size_t i = 0; i < r->n_codes; i++) {
		const Advisor__ReportCode *c = r->codes[i];
		char n[4][24];
		const char *row[6];

		fmt_u(n[0], sizeof(n[0]), c->decisions);
		fmt_u(n[1], sizeof(n[1]), c->users);
		fmt_u(n[2], sizeof(n[2]), c->unenforced);
		fmt_u(n[3], sizeof(n[3]), c->rejected);
		row[0] = c->code;
		row[1] = c->has_severity ? sev_name(c->severity) : "?";
		row[2] = n[0]; row[3] = n[1]; row[4] = n[2]; row[5] = n[3];
		table_row(&t, row);
	}
	table_print(f, &t);
}

static void print_report_partitions(FILE *f, const Advisor__ReportResponse *r)
{
	const char *hdr[] = { "PARTITION", report_by_job(r) ? "JOBS" : "DECISIONS", "USERS",
			      "ACCEPT", "WARN", "REJECT", "WOULD-REJECT" };
	static const bool right[] = { 0, 1, 1, 1, 1, 1, 1 };
	struct table t;

	table_init(&t, 7, hdr, right);
	for (size_t i = 0; i < r->n_partitions; i++) {
		const Advisor__ReportPartition *p = r->partitions[i];
		char n[6][24];
		const char *row[7];

		fmt_u(n[0], sizeof(n[0]), p->decisions);
		fmt_u(n[1], sizeof(n[1]), p->users);
		fmt_u(n[2], sizeof(n[2]), p->accept);
		fmt_u(n[3], sizeof(n[3]), p->warn);
		fmt_u(n[4], sizeof(n[4]), p->reject);
		fmt_u(n[5], sizeof(n[5]), p->unenforced);
		row[0] = p->partition ? p->partition : "-";
		for (int k = 0; k < 6; k++)
			row[k + 1] = n[k];
		table_row(&t, row);
	}
	table_print(f, &t);
}

void print_report(FILE *f, const Advisor__ReportResponse *r, bool json)
{
	char from[32], to[32];
	uint64_t v[ADV_VERDICT_COUNT] = { 0 };
	const char *what;

	if (json) {
		print_report_json(f, r);
		return;
	}
	iso_time(r->since, from, sizeof(from));
	iso_time(r->until, to, sizeof(to));
	for (size_t i = 0; i < r->n_verdicts; i++)
		if (r->verdicts[i]->verdict >= 0 && r->verdicts[i]->verdict < ADV_VERDICT_COUNT)
			v[r->verdicts[i]->verdict] = r->verdicts[i]->count;
	what = report_by_job(r) ? "job" : "decision";
	fprintf(f, "%ss %s .. %s: %llu by %llu user%s (accept %llu, warn %llu, reject %llu)\n",
		what, from, to, (unsigned long long)r->decisions, (unsigned long long)r->users,
		r->users == 1 ? "" : "s", (unsigned long long)v[0], (unsigned long long)v[1],
		(unsigned long long)v[2]);
	/* Issue 30: how the jobs came from the decisions, so neither count surprises. */
	if (report_by_job(r))
		fprintf(f, "from %llu decision%s: %llu node check%s counted with the submission "
			"they name; %llu job%s rejected on the node\n",
			(unsigned long long)r->rows, r->rows == 1 ? "" : "s",
			(unsigned long long)r->node_checks, r->node_checks == 1 ? "" : "s",
			(unsigned long long)r->node_rejected, r->node_rejected == 1 ? "" : "s");
	fprintf(f, "enforcement would have rejected %llu more %s%s by %llu user%s "
		"(mode warn let them through); %llu were rejected\n",
		(unsigned long long)r->unenforced, what, r->unenforced == 1 ? "" : "s",
		(unsigned long long)r->unenforced_users, r->unenforced_users == 1 ? "" : "s",
		(unsigned long long)r->rejected);
	if (r->exempt) {
		fprintf(f, "exempt: %llu %s%s by %llu user%s accepted unchecked (",
			(unsigned long long)r->exempt, what, r->exempt == 1 ? "" : "s",
			(unsigned long long)r->exempt_users, r->exempt_users == 1 ? "" : "s");
		for (size_t i = 0; i < r->n_exemptions; i++)
			fprintf(f, "%s%s %llu", i ? ", " : "",
				r->exemptions[i]->kind ? ADV_TEXT(r->exemptions[i]->kind) : "?",
				(unsigned long long)r->exemptions[i]->count);
		fprintf(f, ")\n");
	}
	if (r->n_hosts) {
		fprintf(f, "decided on %zu host%s:", r->n_hosts, r->n_hosts == 1 ? "" : "s");
		for (size_t i = 0; i < r->n_hosts; i++)
			fprintf(f, "%s %s %llu", i ? "," : "",
				r->hosts[i]->host ? ADV_TEXT(r->hosts[i]->host) : "(unknown)",
				(unsigned long long)r->hosts[i]->count);
		fputc('\n', f);
	}
	if (r->decisions == 0)
		return;
	if (r->n_codes) {
		fputc('\n', f);
		print_report_codes(f, r);
	}
	fputc('\n', f);
	print_report_partitions(f, r);
	for (size_t i = 0; i < r->n_modes; i++)
		if (!r->modes[i]->has_mode)
			fprintf(f, "\n%llu decisions were logged before modes were recorded; their "
				"codes show severity ?\n", (unsigned long long)r->modes[i]->count);
}
