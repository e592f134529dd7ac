/*
 * service.c - the answers advisord and `advisorctl --local` share.
 *
 * The CLI's --local mode runs exactly these functions in-process, so a
 * report printed from the daemon's answer and one printed locally come from
 * the same code and the same protobuf messages; only the transport differs.
 * The checkpoint arithmetic of the raw `ckpt` form is checkpoint.c's
 * (Young 1974, Daly 2006, the exact exponential waste model); the verdict
 * uses the policy's extra-waste thresholds like the engine does.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "engine/checkpoint.h"
#include "engine/findings.h"
#include "engine/options.h"
#include "engine/planner.h"
#include "jobread/jobread.h"
#include "service.h"
#include "slurmgres.h"
#include "util.h"
#include "wire/convert.h"

void service_error(Advisor__Response *resp, struct arena *a, int code, const char *msg)
{
	Advisor__Error *e = ARENA_NEW(a, Advisor__Error);

	if (!e)
		return;
	advisor__error__init(e);
	e->has_code = 1;
	e->code = (Advisor__ErrorCode)code;
	e->message = arena_strdup(a, msg);
	resp->error = e;
}

int service_check_request(const Advisor__CheckRequest *m, const char *user,
			  struct adv_request *req, char *err, size_t errlen)
{
	if (convert_request_from_pb(m, req, err, errlen) != 0)
		return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
	adv_strlcpy(req->user, user ? user : "", sizeof(req->user));
	return 0;
}

/* ---- the job reader over the files the client shipped ------------------------ */

struct shipped {
	const Advisor__JobText *jt;
	bool final;
	int unshipped;      /* files wanted that the client never tried to read */
};

/* The provider of jobread.h over JobText.files: the daemon never opens a
 * user's file; a file not shipped yet is asked for, unless the client said
 * it will ship no more (or already shipped as many as it may). */
static int shipped_open(void *arg, const char *path, const char **text, size_t *len)
{
	struct shipped *sh = arg;
	const Advisor__JobText *jt = sh->jt;

	for (size_t i = 0; i < jt->n_files; i++) {
		const Advisor__JobFile *f = jt->files[i];

		if (!f->path || strcmp(f->path, path) != 0)
			continue;
		if (f->has_status && f->status == 1)
			return JOBREAD_FILE_MISSING;
		if (f->has_status && f->status != 0)
			return JOBREAD_FILE_DENIED;
		*text = f->has_content ? (const char *)f->content.data : "";
		*len = f->has_content ? f->content.len : 0;
		return JOBREAD_FILE_OK;
	}
	if (sh->final || jt->n_files >= JOBREAD_MAX_FILES) {
		sh->unshipped++;
		return JOBREAD_FILE_DENIED;
	}
	return JOBREAD_FILE_NEED;
}

static const char *pb_or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

/*
 * Reads the job's own text (CheckRequest.job).  Returns 1 when the reader
 * needs files the client must ship first (their paths in *need), else 0.
 */
static int read_job(const struct snapshot *s, const Advisor__CheckRequest *m,
		    const struct adv_request *req, struct jobread_out *out, int *unshipped)
{
	const Advisor__JobText *jt = m->job;
	struct shipped sh = { jt, jt->has_final && jt->final, 0 };
	struct jobread_input in;
	size_t script_len = jt->has_script ? jt->script.len : 0;

	memset(&in, 0, sizeof(in));
	in.tool = jt->has_tool && jt->tool >= JOBREAD_SBATCH && jt->tool <= JOBREAD_SCRIPT
		? (enum jobread_tool)jt->tool : JOBREAD_SBATCH;
	in.script_name = pb_or(jt->script_name, "script");
	in.script = jt->has_script ? (const char *)jt->script.data : NULL;
	in.script_len = script_len > JOBREAD_MAX_BYTES ? JOBREAD_MAX_BYTES : script_len;
	in.argc = jt->n_argv > 4096 ? 4096 : (int)jt->n_argv;
	in.argv = jt->argv;
	/* env is NULL-terminated for the reader: copy the pointers. */
	in.env = NULL;
	in.cwd = pb_or(jt->cwd, "/");
	in.res = req->res;
	in.ntasks = jt->has_ntasks ? jt->ntasks : 0;
	in.ntasks_per_node = jt->has_ntasks_per_node ? jt->ntasks_per_node : 0;
	in.files.open = shipped_open;
	in.files.arg = &sh;
	{
		size_t n = jt->n_env > 4096 ? 4096 : jt->n_env;
		char **env = calloc(n + 1, sizeof(*env));

		if (env) {
			/* A JobText without env (a client may send none) has a NULL array. */
			if (n)
				memcpy(env, jt->env, n * sizeof(*env));
			in.env = env;
		}
		jobread_read(s->cat, &in, out);
		free(env);
	}
	*unshipped = sh.unshipped;
	return out->n_need > 0 ? 1 : 0;
}

/* "300 KiB", "4.0 MiB": a script's size for a message. */
static void size_words(uint64_t n, char *buf, size_t len)
{
	if (n < 1024)
		adv_snprintf(buf, len, "%llu bytes", (unsigned long long)n);
	else if (n < 1024 * 1024)
		adv_snprintf(buf, len, "%.0f KiB", n / 1024.0);
	else
		adv_snprintf(buf, len, "%.1f MiB", n / (1024.0 * 1024.0));
}

/*
 * SCRIPT_TRUNCATED (issue 27): the script shipped stands for the first
 * script_read bytes of the batch script only (JobText.script_cut, or an
 * older client's script over the reader's bound), so what comes after was
 * not read.  Returns false when the script is whole.
 */
static bool script_cut_finding(const Advisor__JobText *jt, struct adv_finding *f)
{
	size_t shipped = jt->script.len > JOBREAD_MAX_BYTES ? JOBREAD_MAX_BYTES : jt->script.len;
	int cut = jt->has_script_cut ? jt->script_cut : JOBREAD_CUT_NONE;
	uint64_t size = jt->has_script_size ? jt->script_size : jt->script.len;
	uint64_t read = jt->has_script_read ? jt->script_read : shipped;
	const char *name = jt->script_name ? jt->script_name : "the batch script";
	/* An empty script may come with no data at all: no arithmetic on NULL. */
	const char *p = (const char *)jt->script.data, *end = p ? p + shipped : p;
	char total[32], part[32];
	long lines = 0;

	if (!jt->has_script)
		return false;
	if (cut == JOBREAD_CUT_NONE && jt->script.len > JOBREAD_MAX_BYTES)
		cut = JOBREAD_CUT_SHIP;
	if (cut == JOBREAD_CUT_NONE)
		return false;
	if (read > size)
		read = size;
	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		lines++;
		p++;
	}
	size_words(size, total, sizeof(total));
	size_words(read, part, sizeof(part));
	memset(f, 0, sizeof(*f));
	adv_strlcpy(f->code, engine_code_name(ADV_CODE_SCRIPT_TRUNCATED), sizeof(f->code));
	f->severity = engine_code_severity(ADV_CODE_SCRIPT_TRUNCATED);
	adv_snprintf(f->message, sizeof(f->message),
		     "%s is %s (%llu bytes); advisor read its first %s (%llu bytes, %ld %s) and did "
		     "not check the rest: %s", ADV_TEXT(name), total, (unsigned long long)size, part,
		     (unsigned long long)read, lines, adv_plural(lines, "line", "lines"),
		     cut == JOBREAD_CUT_LIMIT ? "it is over Slurm's max_script_size, which slurmctld "
						"refuses"
		     : cut == JOBREAD_CUT_TIME ? "reading it took longer than the client's time"
		     : "its lines other than comments are over the 256 KiB advisor reads");
	adv_strlcpy(f->fix, cut == JOBREAD_CUT_LIMIT
		    ? "shorten the script below SchedulerParameters=max_script_size (4 MiB unless set)"
		    : cut == JOBREAD_CUT_TIME
		    ? "submit the script from a faster file system"
		    : "move long data (here-documents, generated lines) into files the script reads, "
		      "and keep the launch line near the top", sizeof(f->fix));
	return true;
}

/* The GPU type of one partition: the policy's gpu:, else its nodes' in Slurm. */
static void partition_gpu(const struct snapshot *s, const char *name, char *gpu, size_t len,
			  char *why, size_t whylen)
{
	const struct adv_partition *pt = policy_find_partition(s->pol, name);

	gpu[0] = '\0';
	if (pt && pt->gpu[0])
		adv_strlcpy(gpu, pt->gpu, len);
	else if (slurmgres_gpu_for_partition(name, gpu, len, why, whylen) != 0)
		gpu[0] = '\0';
}

/*
 * -p a,b (issue 20): the job is judged on a's GPU type, the first listed;
 * when another listed partition has another type, the job may start
 * there instead, and PARTITION_GPUS_DIFFER says so.  A partition whose
 * type is not known counts as no difference.
 */
static void partition_list_gpus(const struct snapshot *s, struct adv_request *req,
				const char *first_gpu)
{
	const char *p = strchr(req->res.partition, ',');
	char name[ADV_NAME_MAX], gpu[ADV_NAME_MAX], others[128] = "";
	size_t first_len = strcspn(req->res.partition, ",");

	while (p && first_gpu[0]) {
		size_t n = strcspn(++p, ",");

		adv_snprintf(name, sizeof(name), "%.*s", (int)n, p);
		partition_gpu(s, name, gpu, sizeof(gpu), NULL, 0);
		if (gpu[0] && strcasecmp(gpu, first_gpu) != 0)
			adv_snprintf(others + strlen(others), sizeof(others) - strlen(others),
				     "%s%s (%s)", others[0] ? ", " : "", name, gpu);
		p = strchr(p, ',');
	}
	if (others[0])
		adv_snprintf(req->res.gpus_differ, sizeof(req->res.gpus_differ),
			     "-p %s: judged on %s of partition %.*s, the first listed; "
			     "the job may also start in %s", req->res.partition, first_gpu,
			     (int)first_len, req->res.partition, others);
}

/*
 * No -p: Slurm puts a submitted job in the default partition, so that
 * partition's mode, GPU and limits apply (and it is what gets logged).  A
 * what-if query from advisorctl is judged the same way (issue 26: the
 * same script got warn from advisorctl and reject from sbatch); where no
 * Slurm answers, the policy's top-level mode applies to both.  A GPU type that
 * neither the job nor the partition's policy names comes from the
 * partition's nodes in Slurm, or gpu_why says why it did not (issue 21: the
 * daemon and advisorctl --local run this same code).
 */
static void resolve_cluster(const struct snapshot *s, struct adv_request *req)
{
	char first[ADV_NAME_MAX], gpu[ADV_NAME_MAX];

	if (!req->res.partition[0])
		if (slurmgres_default_partition(req->res.partition, sizeof(req->res.partition)) != 0)
			req->res.partition[0] = '\0';   /* unknown: the global policy applies */
	if (req->res.gpu[0])
		return;
	/* A list's first partition (policy_find_partition reads it alike). */
	adv_snprintf(first, sizeof(first), "%.*s", (int)strcspn(req->res.partition, ","),
		     req->res.partition);
	partition_gpu(s, first, gpu, sizeof(gpu), req->res.gpu_why, sizeof(req->res.gpu_why));
	/* The policy's gpu: reaches the engine through the partition. */
	{
		const struct adv_partition *pt = policy_find_partition(s->pol, first);

		if (!pt || !pt->gpu[0])
			adv_strlcpy(req->res.gpu, gpu, sizeof(req->res.gpu));
	}
	partition_list_gpus(s, req, gpu);
}

const char *service_partition_label(const struct snapshot *s, const char *named)
{
	const struct adv_partition *pt;

	if (!named || !named[0])
		return "";
	pt = policy_find_partition(s->pol, named);
	return pt ? pt->name : "_other";
}

int service_check(const struct snapshot *s, const Advisor__CheckRequest *m, const char *user,
		  struct adv_request *req, struct adv_result *res, struct service_check_io *io,
		  char *err, size_t errlen)
{
	struct jobread_out *out = NULL;
	int rc = service_check_request(m, user, req, err, errlen);

	io->need = NULL;
	io->n_need = 0;
	io->unshipped = 0;
	if (rc)
		return rc;
	resolve_cluster(s, req);
	if (m->job) {
		bool cut;

		out = arena_alloc(io->arena, sizeof(*out));
		if (!out)
			return ADVISOR__ERROR_CODE__ERR_INTERNAL;
		if (read_job(s, m, req, out, &io->unshipped)) {
			io->need = out->need;
			io->n_need = out->n_need;
			return 0;
		}
		req->pre = io->pre;
		/* A script read in part comes first: the rest is judged on it. */
		cut = script_cut_finding(m->job, &io->pre[0]);
		req->n_pre = cut + jobread_apply(s->cat, out, req, io->pre + cut, SERVICE_MAX_PRE - cut);
		/* A script read in part may launch one after the cut: said. */
		if (!out->is_llm && !jobread_options_given(&req->wl) && !cut) {
			/* Not an LLM job: a plain MPI or CUDA job passes silently. */
			memset(res, 0, offsetof(struct adv_result, findings));
			res->verdict = ADV_ACCEPT;
			res->mode = ADV_MODE_ENFORCE;
			jobread_annotate(out, req, res);
			return 0;
		}
	}
	engine_check(s->cat, s->pol, req, res);
	jobread_annotate(out, req, res);
	return 0;
}

Advisor__CheckResponse *service_need_answer(struct arena *a, char (*need)[JOBREAD_PATH_MAX], int n)
{
	Advisor__CheckResponse *m = ARENA_NEW(a, Advisor__CheckResponse);
	char **paths = ARENA_ARRAY(a, char *, n > 0 ? (size_t)n : 1);

	if (!m || !paths)
		return NULL;
	advisor__check_response__init(m);
	for (int i = 0; i < n; i++)
		paths[i] = need[i];
	m->n_need_files = (size_t)n;
	m->need_files = paths;
	return m;
}

Advisor__CheckResponse *service_check_answer(struct arena *a, const struct adv_result *res,
					     const char *decision_id)
{
	struct convert_result_pb *buf = ARENA_NEW(a, struct convert_result_pb);

	if (!buf)
		return NULL;
	return convert_result_to_pb(res, decision_id, buf);
}

/* Arena-backed builders: NULL only when the arena is out of memory. */
static Advisor__Checkpoint *checkpoint_pb(struct arena *a, const struct adv_checkpoint *c)
{
	Advisor__Checkpoint *m = ARENA_NEW(a, Advisor__Checkpoint);

	return m ? convert_checkpoint_to_pb(c, m) : NULL;
}

static Advisor__LayoutOut *layout_pb(struct arena *a, const struct adv_layout_out *l)
{
	Advisor__LayoutOut *m = ARENA_NEW(a, Advisor__LayoutOut);

	return m ? convert_layout_to_pb(l, m) : NULL;
}

static Advisor__Memory *memory_pb(struct arena *a, const struct adv_memory *mem)
{
	Advisor__Memory *m = ARENA_NEW(a, Advisor__Memory);

	return m ? convert_memory_to_pb(mem, m) : NULL;
}

static Advisor__Estimate *estimate_pb(struct arena *a, const struct adv_estimate *e)
{
	Advisor__Estimate *m = ARENA_NEW(a, Advisor__Estimate);

	return m ? convert_estimate_to_pb(e, m) : NULL;
}

/* ---- ckpt -------------------------------------------------------------------- */

static Advisor__Finding **findings_pb(struct arena *a, const struct adv_finding *f, size_t n)
{
	Advisor__Finding **ptrs = ARENA_ARRAY(a, Advisor__Finding *, n ? n : 1);
	Advisor__Finding *msgs = ARENA_ARRAY(a, Advisor__Finding, n ? n : 1);

	if (!ptrs || !msgs)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		ptrs[i] = convert_finding_to_pb(&f[i], &msgs[i]);
		/* The source findings live on the stack: copy the strings. */
		ptrs[i]->code = arena_strdup(a, f[i].code);
		ptrs[i]->message = arena_strdup(a, f[i].message);
		ptrs[i]->fix = f[i].fix[0] ? arena_strdup(a, f[i].fix) : NULL;
	}
	return ptrs;
}

/* The findings and the verdict they make (the worst severity). */
static int ckpt_findings(struct arena *a, Advisor__CkptResponse *r,
			 const struct adv_finding *f, size_t n)
{
	int verdict = ADV_ACCEPT;

	for (size_t i = 0; i < n; i++)
		if ((int)f[i].severity > verdict)
			verdict = (int)f[i].severity;
	r->findings = findings_pb(a, f, n);
	r->n_findings = n;
	r->has_verdict = 1;
	r->verdict = verdict;
	return r->findings ? 0 : ADVISOR__ERROR_CODE__ERR_INTERNAL;
}

/* Scores the interval of the raw form against the policy's extra-waste thresholds. */
static void ckpt_raw_findings(const struct adv_policy *pol, const struct ckpt_input *in,
			      const struct ckpt_output *out, struct adv_result *res)
{
	char t[32], opt[32], fix[64];
	double extra = out->waste - out->optimal_waste;
	enum adv_severity sev;
	enum adv_code code;

	if (in->interval_s <= 0)
		return;
	options_format_duration(in->interval_s, t, sizeof(t));
	options_format_duration(out->optimal_s, opt, sizeof(opt));
	adv_snprintf(fix, sizeof(fix), "--llm-ckpt=%s", opt);
	if (in->write_s > in->interval_s)
		engine_add_finding(res, ADV_CODE_CKPT_WRITE_EXCEEDS_INTERVAL, fix,
				   "a checkpoint takes %.0f s to write, longer than the interval "
				   "of %s", in->write_s, t);
	if (extra >= pol->reject_extra_waste)
		sev = ADV_SEV_REJECT;
	else if (extra >= pol->warn_extra_waste)
		sev = ADV_SEV_WARN;
	else
		return;
	code = in->interval_s > out->optimal_s ? ADV_CODE_CKPT_TOO_LONG : ADV_CODE_CKPT_TOO_SHORT;
	engine_add_finding_sev(res, code, sev, fix, "checkpointing every %s loses %.1f%% of the "
			       "run, %.1f points more than every %s (%.1f%%)", t, 100 * out->waste,
			       100 * extra, opt, 100 * out->optimal_waste);
}

static int ckpt_raw(const struct snapshot *s, const Advisor__CkptRequest *m,
		    struct arena *a, Advisor__CkptResponse *r, char *err, size_t errlen)
{
	struct adv_checkpoint c = { 0 };
	struct ckpt_input in = { 0 };
	struct ckpt_output out;
	struct adv_result res;

	if (!m->has_job_mtbf_hours || !m->has_write_seconds) {
		adv_snprintf(err, errlen, "the raw ckpt form needs --job-mtbf-hours and --write-seconds");
		return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
	}
	in.mtbf_s = m->job_mtbf_hours * 3600.0;
	in.write_s = m->write_seconds;
	in.restart_s = m->has_restart_seconds ? m->restart_seconds
					      : s->pol->restart_minutes * 60.0;
	in.interval_s = m->has_interval_s ? m->interval_s : 0;
	if (!(in.mtbf_s > 0) || !isfinite(in.mtbf_s) || !(in.write_s >= 0) ||
	    !isfinite(in.write_s) || !(in.restart_s >= 0) || !isfinite(in.restart_s) ||
	    !(in.interval_s >= 0) || !isfinite(in.interval_s)) {
		adv_snprintf(err, errlen, "ckpt: the MTBF must be positive and the write, restart "
			     "and interval times zero or positive");
		return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
	}
	ckpt_compute(&in, &out);
	c.interval_s = in.interval_s > 0 ? in.interval_s : out.optimal_s;
	c.optimal_s = out.optimal_s;
	c.young_s = out.young_s;
	c.daly_s = out.daly_s;
	c.waste = out.waste;
	c.optimal_waste = out.optimal_waste;
	c.write_s = in.write_s;
	c.job_mtbf_h = m->job_mtbf_hours;
	res.n_findings = 0;
	ckpt_raw_findings(s->pol, &in, &out, &res);
	r->checkpoint = checkpoint_pb(a, &c);
	if (!r->checkpoint)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	/* The size of a checkpoint is not known in the raw form. */
	r->checkpoint->has_size_gb = 0;
	return ckpt_findings(a, r, res.findings, (size_t)res.n_findings);
}

static int ckpt_job(const struct snapshot *s, const Advisor__CkptRequest *m, const char *user,
		    struct arena *a, Advisor__CkptResponse *r, char *err, size_t errlen)
{
	Advisor__CheckRequest cm = ADVISOR__CHECK_REQUEST__INIT;
	struct adv_finding keep[ADV_MAX_FINDINGS];
	struct adv_request req;
	struct adv_result res;
	size_t n = 0;

	cm.resources = m->resources;
	cm.workload = m->workload;
	if (service_check_request(&cm, user, &req, err, errlen))
		return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
	engine_check(s->cat, s->pol, &req, &res);
	/* Checkpoint findings, or everything that kept the engine from getting that far. */
	for (int i = 0; i < res.n_findings; i++) {
		const struct adv_finding *f = &res.findings[i];

		if (engine_finding_checkpoint(f) ||
		    (!res.has_checkpoint && f->severity == ADV_SEV_REJECT))
			keep[n++] = *f;
	}
	if (res.has_checkpoint && !(r->checkpoint = checkpoint_pb(a, &res.checkpoint)))
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	return ckpt_findings(a, r, keep, n);
}

int service_ckpt(const struct snapshot *s, const Advisor__CkptRequest *m, const char *user,
		 struct arena *a, Advisor__CkptResponse **out, char *err, size_t errlen)
{
	Advisor__CkptResponse *r = ARENA_NEW(a, Advisor__CkptResponse);

	*out = NULL;
	if (!r)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	advisor__ckpt_response__init(r);
	*out = r;
	if (m->has_job_mtbf_hours || m->has_write_seconds || m->has_restart_seconds)
		return ckpt_raw(s, m, a, r, err, errlen);
	return ckpt_job(s, m, user, a, r, err, errlen);
}

/* ---- catalog ----------------------------------------------------------------- */

static Advisor__GpuInfo *gpu_pb(struct arena *a, const struct adv_gpu *g)
{
	Advisor__GpuInfo *m = ARENA_NEW(a, Advisor__GpuInfo);

	if (!m)
		return NULL;
	advisor__gpu_info__init(m);
	/* Strings point into the snapshot, which outlives the packed answer. */
	m->name = (char *)(uintptr_t)g->name;
	m->aliases = g->aliases;
	m->n_aliases = g->n_aliases;
	m->vendor = g->vendor[0] ? (char *)(uintptr_t)g->vendor : NULL;
#define D(f) do { m->has_##f = 1; m->f = g->f; } while (0)
	D(memory_gib); D(memory_bandwidth_tbs); D(bf16_tflops); D(fp8_tflops); D(fp32_tflops);
	D(interconnect_gbs); D(gpus_per_node); D(tdp_w); D(price_per_hour_usd); D(network_gbs);
#undef D
	return m;
}

static Advisor__ModelInfo *model_pb(struct arena *a, const struct adv_model *md)
{
	Advisor__ModelInfo *m = ARENA_NEW(a, Advisor__ModelInfo);
	struct adv_params p;

	if (!m)
		return NULL;
	advisor__model_info__init(m);
	catalog_model_params(md, &p);
	m->name = (char *)(uintptr_t)md->name;
	m->aliases = md->aliases;
	m->n_aliases = md->n_aliases;
	if (md->params_b > 0) {
		m->has_params_b = 1;
		m->params_b = md->params_b;
	}
	m->has_computed_params_b = 1;
	m->computed_params_b = p.total / 1e9;
	m->has_active_params_b = 1;
	m->active_params_b = p.active / 1e9;
#define I(f) do { m->has_##f = 1; m->f = md->f; } while (0)
	I(layers); I(hidden); I(heads); I(kv_heads); I(head_dim); I(ffn_hidden); I(vocab);
	I(max_seq);
#undef I
	if (md->has_moe) {
		m->has_experts = m->has_top_k = 1;
		m->experts = md->moe.experts;
		m->top_k = md->moe.top_k;
	}
	m->has_mla = 1;
	m->mla = md->has_mla;
	return m;
}

int service_catalog(const struct snapshot *s, const Advisor__CatalogRequest *m,
		    struct arena *a, Advisor__CatalogResponse **out, char *err, size_t errlen)
{
	const char *kind = m->kind ? m->kind : "";
	const char *name = (m->name && *m->name) ? m->name : NULL;
	bool want_gpus = !*kind || strcmp(kind, "gpus") == 0;
	bool want_models = !*kind || strcmp(kind, "models") == 0;
	Advisor__CatalogResponse *r = ARENA_NEW(a, Advisor__CatalogResponse);
	size_t ng = catalog_gpu_count(s->cat), nm = catalog_model_count(s->cat);

	*out = NULL;
	if (!want_gpus && !want_models) {
		adv_snprintf(err, errlen, "catalog: unknown kind '%s'; accepted: gpus, models", kind);
		return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
	}
	if (!r)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	advisor__catalog_response__init(r);
	r->gpus = ARENA_ARRAY(a, Advisor__GpuInfo *, ng + 1);
	r->models = ARENA_ARRAY(a, Advisor__ModelInfo *, nm + 1);
	if (!r->gpus || !r->models)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	if (name) {
		const struct adv_gpu *g = want_gpus ? catalog_find_gpu(s->cat, name) : NULL;
		const struct adv_model *md = want_models ? catalog_find_model(s->cat, name) : NULL;

		if (g)
			r->gpus[r->n_gpus++] = gpu_pb(a, g);
		if (md)
			r->models[r->n_models++] = model_pb(a, md);
		if (!g && !md) {
			adv_snprintf(err, errlen, "catalog: no %s named '%s'",
				     !*kind ? "GPU or model" : want_gpus ? "GPU" : "model", name);
			return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
		}
	} else {
		for (size_t i = 0; want_gpus && i < ng; i++)
			r->gpus[r->n_gpus++] = gpu_pb(a, catalog_gpu_at(s->cat, i));
		for (size_t i = 0; want_models && i < nm; i++)
			r->models[r->n_models++] = model_pb(a, catalog_model_at(s->cat, i));
	}
	for (size_t i = 0; i < r->n_gpus; i++)
		if (!r->gpus[i])
			return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	for (size_t i = 0; i < r->n_models; i++)
		if (!r->models[i])
			return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	*out = r;
	return 0;
}

/* ---- policy ------------------------------------------------------------------ */

/* The policy in force as YAML (policy.c renders it); grows until it fits. */
static char *render_policy(struct arena *a, const struct adv_policy *p)
{
	for (size_t len = 8192; len <= 4u << 20; len *= 4) {
		char *buf = arena_alloc(a, len);

		if (!buf)
			return NULL;
		if (policy_render_yaml(p, buf, len) >= 0)
			return buf;
	}
	return NULL;
}

int service_policy(const struct snapshot *s, struct arena *a, Advisor__PolicyResponse **out,
		   char *err, size_t errlen)
{
	Advisor__PolicyResponse *r = ARENA_NEW(a, Advisor__PolicyResponse);

	*out = NULL;
	if (!r)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	advisor__policy_response__init(r);
	r->yaml = render_policy(a, s->pol);
	r->file = s->pol->file;
	if (!r->yaml) {
		adv_snprintf(err, errlen, "out of memory");
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	}
	*out = r;
	return 0;
}

/* ---- plan -------------------------------------------------------------------- */

int service_plan(const struct snapshot *s, const Advisor__PlanRequest *m, const char *user,
		 struct arena *a, Advisor__PlanResponse **out, char *err, size_t errlen)
{
	Advisor__CheckRequest cm = ADVISOR__CHECK_REQUEST__INIT;
	struct planner_plan *plans = ARENA_ARRAY(a, struct planner_plan, PLANNER_MAX_PLANS);
	Advisor__PlanResponse *r = ARENA_NEW(a, Advisor__PlanResponse);
	struct planner_opts opts;
	struct adv_request req;
	int n = 0, rc;

	*out = NULL;
	if (!plans || !r)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	cm.resources = m->resources;
	cm.workload = m->workload;
	if (service_check_request(&cm, user, &req, err, errlen))
		return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
	planner_opts_init(&opts);
	if (m->has_top)
		opts.top = m->top < 1 ? 1 : m->top > PLANNER_MAX_PLANS ? PLANNER_MAX_PLANS : m->top;
	if (m->has_cross_node_tp)
		opts.cross_node_tp = m->cross_node_tp;
	rc = planner_plan(s->cat, s->pol, &req, &opts, plans, PLANNER_MAX_PLANS, &n, err, errlen);
	if (rc != PLANNER_OK)
		return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
	advisor__plan_response__init(r);
	r->plans = ARENA_ARRAY(a, Advisor__Plan *, n > 0 ? (size_t)n : 1);
	if (!r->plans)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	for (int i = 0; i < n; i++) {
		const struct planner_plan *p = &plans[i];
		Advisor__Plan *pm = ARENA_NEW(a, Advisor__Plan);
		Advisor__WorkloadOut *w = ARENA_NEW(a, Advisor__WorkloadOut);

		if (!pm || !w)
			return ADVISOR__ERROR_CODE__ERR_INTERNAL;
		advisor__plan__init(pm);
		advisor__workload_out__init(w);
		pm->layout = layout_pb(a, &p->layout);
		pm->memory = memory_pb(a, &p->memory);
		pm->estimate = estimate_pb(a, &p->estimate);
		if (!pm->layout || !pm->memory || !pm->estimate)
			return ADVISOR__ERROR_CODE__ERR_INTERNAL;
#define W(f, v) do { w->has_##f = 1; w->f = (v); } while (0)
		W(precision, p->precision); W(recompute, p->recompute); W(task, p->task);
		W(framework, p->framework); W(seq, p->seq); W(mbs, p->mbs); W(gbs, p->gbs);
#undef W
		pm->workload = w;
		pm->why = arena_strdup(a, p->why);
		r->plans[r->n_plans++] = pm;
	}
	if (n == 0)
		r->note = arena_strdup(a, "no layout of this job fits; try more GPUs, a larger GPU "
				       "or a shorter sequence");
	*out = r;
	return 0;
}

/* ---- local mode -------------------------------------------------------------- */

void service_local(const struct snapshot *s, const Advisor__Request *req, const char *user,
		   struct arena *a, Advisor__Response *resp)
{
	char err[ADV_ERR_MAX] = "";
	int rc = 0;

	advisor__response__init(resp);
	resp->has_version = 1;
	resp->version = 1;
	resp->has_id = req->has_id;
	resp->id = req->id;
	switch (req->body_case) {
	case ADVISOR__REQUEST__BODY_CHECK: {
		struct adv_request r;
		struct adv_result *res = ARENA_NEW(a, struct adv_result);
		struct service_check_io io = { .arena = a };

		rc = res ? service_check(s, req->check, user, &r, res, &io, err, sizeof(err))
			 : ADVISOR__ERROR_CODE__ERR_INTERNAL;
		if (rc)
			break;
		resp->check = io.n_need ? service_need_answer(a, io.need, io.n_need)
					: service_check_answer(a, res, NULL);
		resp->body_case = ADVISOR__RESPONSE__BODY_CHECK;
		break;
	}
	case ADVISOR__REQUEST__BODY_CKPT:
		rc = service_ckpt(s, req->ckpt, user, a, &resp->ckpt, err, sizeof(err));
		resp->body_case = ADVISOR__RESPONSE__BODY_CKPT;
		break;
	case ADVISOR__REQUEST__BODY_CATALOG:
		rc = service_catalog(s, req->catalog, a, &resp->catalog, err, sizeof(err));
		resp->body_case = ADVISOR__RESPONSE__BODY_CATALOG;
		break;
	case ADVISOR__REQUEST__BODY_POLICY:
		rc = service_policy(s, a, &resp->policy, err, sizeof(err));
		resp->body_case = ADVISOR__RESPONSE__BODY_POLICY;
		break;
	case ADVISOR__REQUEST__BODY_PLAN:
		rc = service_plan(s, req->plan, user, a, &resp->plan, err, sizeof(err));
		resp->body_case = ADVISOR__RESPONSE__BODY_PLAN;
		break;
	default:
		rc = ADVISOR__ERROR_CODE__ERR_UNAVAILABLE;
		adv_snprintf(err, sizeof(err), "this command needs the running daemon; "
			     "drop --local");
		break;
	}
	if (rc) {
		resp->body_case = ADVISOR__RESPONSE__BODY__NOT_SET;
		service_error(resp, a, rc, err);
	}
}
