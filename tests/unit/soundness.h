/*
 * soundness.h - the property checks of issue 26 ("Tests that can fail"),
 * shared by the cmocka program test_soundness.c (a fixed-seed generator)
 * and the libFuzzer target tests/fuzz/fuzz_soundness.c (the input drives
 * the same generator).  Header-only, so that both compile the one copy.
 *
 * A generated job is PARTIAL: a catalog model on a catalog GPU with a GPU
 * count (or whole nodes), plus a random subset of the other --llm-*
 * settings.  For every such job engine_check() gives, two properties hold:
 *
 * 1. Soundness.  A reject-severity finding (BEST_PLAN, a warning, aside)
 *    is a proof: every completion of the values the job leaves unstated
 *    (res->from[f] ADV_FROM_ASSUMED or ADV_FROM_POLICY: a framework's
 *    documented default is the job's value, issue 26 item 1) among those
 *    the finding rests on (finding->uses) is rejected with the same code.
 *    Completions are drawn from a small grid per field (snd_grids):
 *    mbs, recompute, zero (not for a server), seq (up to the model's
 *    max_seq), precision (fp8 only on a GPU that has it: a completion is a
 *    job that can run) and grad-dtype (not for a server).  At most
 *    max_completions per finding (SND_MAX_COMPLETIONS unless the caller
 *    says): all of them when the grid is that small, else the corners of
 *    least memory first, then a deterministic sample.  The parallel sizes,
 *    task, framework and attention are not completed (their defaults
 *    describe the job as asked: no tensor parallelism when none is named).
 *    Grad-dtype is completed where it is assumed (not Megatron's
 *    documented fp32 buffer).
 *
 * 2. Fixes.  A fix is alternatives separated by "; ", ", or ", or an " or "
 *    before another alternative ("--llm-gbs=510 or --llm-gbs=515"); a
 *    resource alternative may carry the layout that uses the GPUs
 *    ("request at least 2 GPUs with --llm-layout=tp2 ...").  An alternative in
 *    options is --llm-NAME=VALUE words, optionally followed by a "(...)"
 *    note; "request at least N GPUs", "request at least N nodes (M GPUs)",
 *    "request N GPUs" and "request N or M GPUs" change the resources; any
 *    other alternative without an --llm- word is skipped (counted).  An
 *    alternative that mixes --llm- words with others ("--llm-layout=A or
 *    --llm-layout=B") is a format violation; its parts are then still
 *    applied one by one so that what they do is judged too.  Applying an
 *    alternative must remove its finding's code at reject severity; when
 *    the job has exactly one reject-severity finding, every alternative of
 *    it, and BEST_PLAN's fix, must leave a verdict other than reject.
 *
 * A violation is handed to the caller's report function with the job's
 * options, the finding and the completion or fix that shows it.
 */
#ifndef ADVISOR_TEST_SOUNDNESS_H
#define ADVISOR_TEST_SOUNDNESS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/catalog.h"
#include "config/policy.h"
#include "engine/engine.h"
#include "engine/names.h"
#include "engine/options.h"
#include "engine/provenance.h"

#define SND_MAX_COMPLETIONS 64
#define SND_MAX_OPTS 16
#define SND_TEXT_MAX 1024

/* ---- the random source ------------------------------------------------------ */

/* xorshift64*; or, for the fuzzer, the input's bytes first (each draw
 * takes one byte, two for a range above 256) and the PRNG after them. */
struct snd_rng {
	uint64_t s;
	const uint8_t *data;
	size_t len, pos;
};

static inline void snd_rng_seed(struct snd_rng *r, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

static inline void snd_rng_bytes(struct snd_rng *r, const uint8_t *data, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a of the input: the tail's seed */

	for (size_t i = 0; i < len; i++)
		h = (h ^ data[i]) * 0x100000001b3ull;
	snd_rng_seed(r, h);
	r->data = data;
	r->len = len;
}

static inline uint64_t snd_next(struct snd_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

/* A number in [0, n). */
static inline unsigned snd_below(struct snd_rng *r, unsigned n)
{
	if (n <= 1)
		return 0;
	if (r->pos < r->len) {
		unsigned v = r->data[r->pos++];

		if (n > 256 && r->pos < r->len)
			v = v << 8 | r->data[r->pos++];
		return v % n;
	}
	return (unsigned)(snd_next(r) % n);
}

/* True with probability pct/100. */
static inline bool snd_chance(struct snd_rng *r, unsigned pct)
{
	return snd_below(r, 100) < pct;
}

#define SND_PICK(r, arr) ((arr)[snd_below((r), sizeof(arr) / sizeof((arr)[0]))])

/* ---- a job --------------------------------------------------------------------- */

struct snd_job {
	char gpu[ADV_NAME_MAX];
	int gpus, nodes;               /* nodes 0: not given */
	int n_opts;
	char name[SND_MAX_OPTS][16];   /* option names without "llm-" */
	char value[SND_MAX_OPTS][48];
};

static inline void snd_opt(struct snd_job *j, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void snd_opt(struct snd_job *j, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (j->n_opts >= SND_MAX_OPTS)
		return;
	snprintf(j->name[j->n_opts], sizeof(j->name[0]), "%s", name);
	va_start(ap, fmt);
	vsnprintf(j->value[j->n_opts], sizeof(j->value[0]), fmt, ap);
	va_end(ap);
	j->n_opts++;
}

/* "gpu=h100 gpus=16 nodes=2 --llm-model=llama3-8b --llm-seq=4096 ..." */
static inline void snd_job_text(const struct snd_job *j, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "gpu=%s gpus=%d", j->gpu, j->gpus);

	if (j->nodes > 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " nodes=%d", j->nodes);
	for (int i = 0; i < j->n_opts && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " --llm-%s=%s", j->name[i], j->value[i]);
}

/* The request of a job; -1 with err when an option is refused. */
static inline int snd_job_request(const struct snd_job *j, struct adv_request *r, char *err,
				  size_t errlen)
{
	engine_request_init(r);
	snprintf(r->res.gpu, sizeof(r->res.gpu), "%s", j->gpu);
	r->res.gpus = j->gpus;
	r->res.nodes = j->nodes;
	for (int i = 0; i < j->n_opts; i++)
		if (options_apply(&r->wl, j->name[i], j->value[i], err, errlen) != 0)
			return -1;
	return 0;
}

/*
 * A partial job: a model and a GPU of the catalog, a GPU count, and each
 * other setting with some probability.  Layout sizes may or may not divide
 * the model or the GPUs: the engine has to judge both.
 */
static inline void snd_generate(const catalog_t *cat, struct snd_rng *r, struct snd_job *j)
{
	static const int counts[] = { 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64 };
	static const int tps[] = { 1, 2, 3, 4, 6, 8, 16 };
	static const int pps[] = { 1, 2, 3, 4, 6, 8 };
	static const int cps[] = { 1, 2, 3, 4 };
	static const int eps[] = { 1, 2, 4, 8, 16, 32, 64 };
	static const int vpps[] = { 2, 3, 4 };
	static const int seqs[] = { 512, 1000, 2048, 3000, 4096, 6144, 8192, 16384, 32768, 131072 };
	static const int mbss[] = { 1, 2, 3, 4, 8, 16 };
	static const int gbss[] = { 7, 16, 64, 100, 128, 256, 512, 1000, 1024, 1536, 2048, 4096 };
	static const char *const recs[] = { "none", "selective", "full" };
	static const char *const precs[] = { "bf16", "fp8" };
	static const char *const tasks[] = { "train", "finetune", "infer" };
	static const char *const fws[] = { "generic", "megatron", "deepspeed", "fsdp" };
	static const char *const grads[] = { "bf16", "fp32" };
	static const char *const ckpts[] = { "30s", "5m", "30m", "1h", "4h", "12h", "30m,async",
					     "2h,async", "off" };
	const struct adv_model *m = catalog_model_at(cat, snd_below(r, (unsigned)catalog_model_count(cat)));
	const struct adv_gpu *g = catalog_gpu_at(cat, snd_below(r, (unsigned)catalog_gpu_count(cat)));
	int gpn = g->gpus_per_node > 0 ? g->gpus_per_node : 8;

	memset(j, 0, sizeof(*j));
	snprintf(j->gpu, sizeof(j->gpu), "%s", g->name);
	switch (snd_below(r, 3)) {
	case 0:
		j->gpus = SND_PICK(r, counts);
		break;
	case 1:
		j->gpus = 1 + (int)snd_below(r, 64);
		break;
	default:
		j->nodes = 1 + (int)snd_below(r, 16);
		j->gpus = j->nodes * gpn;
	}
	snd_opt(j, "model", "%s", m->name);
	if (snd_chance(r, 50)) {
		char lay[64];
		size_t n = 0;
		int tp = 1, pp = 1, cp = 1;

		lay[0] = '\0';
		if (snd_chance(r, 70)) {
			tp = SND_PICK(r, tps);
			n += (size_t)snprintf(lay + n, sizeof(lay) - n, ",tp%d", tp);
		}
		if (snd_chance(r, 45)) {
			pp = SND_PICK(r, pps);
			n += (size_t)snprintf(lay + n, sizeof(lay) - n, ",pp%d", pp);
		}
		if (snd_chance(r, 20)) {
			cp = SND_PICK(r, cps);
			n += (size_t)snprintf(lay + n, sizeof(lay) - n, ",cp%d", cp);
		}
		if (snd_chance(r, m->has_moe ? 60 : 4))
			n += (size_t)snprintf(lay + n, sizeof(lay) - n, ",ep%d", SND_PICK(r, eps));
		if (snd_chance(r, 12))
			n += (size_t)snprintf(lay + n, sizeof(lay) - n, ",vpp%d", SND_PICK(r, vpps));
		if (snd_chance(r, 20)) {
			/* Mostly what the GPUs make, sometimes not. */
			int dp = j->gpus / (tp * pp * cp);

			if (dp < 1 || snd_chance(r, 30))
				dp = 1 + (int)snd_below(r, 16);
			n += (size_t)snprintf(lay + n, sizeof(lay) - n, ",dp%d", dp);
		}
		if (snd_chance(r, 15))
			n += (size_t)snprintf(lay + n, sizeof(lay) - n, ",%s",
					      snd_chance(r, 50) ? "sp" : "nosp");
		if (n > 0)
			snd_opt(j, "layout", "%s", lay + 1);
	}
	if (snd_chance(r, 35))
		snd_opt(j, "zero", "%u", snd_below(r, 4));
	if (snd_chance(r, 35))
		snd_opt(j, "recompute", "%s", SND_PICK(r, recs));
	if (snd_chance(r, 30))
		snd_opt(j, "precision", "%s", SND_PICK(r, precs));
	if (snd_chance(r, 40))
		snd_opt(j, "seq", "%d", SND_PICK(r, seqs));
	if (snd_chance(r, 35))
		snd_opt(j, "mbs", "%d", SND_PICK(r, mbss));
	if (snd_chance(r, 30))
		snd_opt(j, "gbs", "%d", SND_PICK(r, gbss));
	if (snd_chance(r, 40))
		snd_opt(j, "task", "%s", SND_PICK(r, tasks));
	if (snd_chance(r, 40))
		snd_opt(j, "framework", "%s", SND_PICK(r, fws));
	if (snd_chance(r, 10))
		snd_opt(j, "grad-dtype", "%s", SND_PICK(r, grads));
	if (snd_chance(r, 10))
		snd_opt(j, "ckpt", "%s", SND_PICK(r, ckpts));
}

/* ---- the checker ----------------------------------------------------------------- */

enum snd_kind {
	SND_UNSOUND = 0,       /* a completion of unstated values passes the reject */
	SND_FIX_FORMAT,        /* an alternative mixes --llm- words with other words */
	SND_FIX_REFUSED,       /* an --llm- word of a fix is not an option the parser takes */
	SND_FIX_KEEPS,         /* applying an alternative keeps the code at reject */
	SND_FIX_SOLE_REJECTS,  /* one reject; applying its alternative still rejects */
	SND_PLAN_REJECTS,      /* one reject; applying BEST_PLAN's fix still rejects */
	SND_KIND_COUNT
};

static const char *const snd_kind_names[SND_KIND_COUNT] = {
	[SND_UNSOUND] = "UNSOUND", [SND_FIX_FORMAT] = "FIX_FORMAT",
	[SND_FIX_REFUSED] = "FIX_REFUSED", [SND_FIX_KEEPS] = "FIX_KEEPS",
	[SND_FIX_SOLE_REJECTS] = "FIX_SOLE_REJECTS", [SND_PLAN_REJECTS] = "PLAN_REJECTS",
};

struct snd_violation {
	enum snd_kind kind;
	const char *code;                    /* the finding's */
	const char *job;                     /* the job's options */
	const char *message;                 /* the finding's message */
	const char *fix;                     /* the finding's whole fix */
	const char *detail;                  /* the completion or alternative, and what it gave */
};

struct snd_stats {
	long jobs, rejected_jobs, rejects;   /* rejects: reject-severity findings seen */
	long sole_jobs;                      /* jobs of exactly one reject */
	long with_unstated, completions;     /* findings resting on unstated values; runs */
	long alternatives, skipped;          /* fix alternatives applied; skipped (not options) */
	long plans, plans_multi_rejects;     /* BEST_PLAN applied; of jobs of several rejects,
						applying it left a reject (not a property) */
	long violations[SND_KIND_COUNT];
};

typedef void (*snd_check_fn)(const catalog_t *cat, const struct adv_policy *pol,
			     const struct adv_request *req, struct adv_result *res);

struct snd_ctx {
	const catalog_t *cat;
	const struct adv_policy *pol;
	snd_check_fn check;                  /* engine_check, or a test's wrapper of it */
	long max_completions;                /* per finding (SND_MAX_COMPLETIONS) */
	void (*report)(void *arg, const struct snd_violation *v);
	void *arg;
	struct snd_stats st;
	struct adv_result *res, *alt;        /* heap: a result is ~60 KiB */
};

static inline int snd_ctx_init(struct snd_ctx *c, const catalog_t *cat,
			       const struct adv_policy *pol,
			       void (*report)(void *arg, const struct snd_violation *v), void *arg)
{
	memset(c, 0, sizeof(*c));
	c->cat = cat;
	c->pol = pol;
	c->check = engine_check;
	c->max_completions = SND_MAX_COMPLETIONS;
	c->report = report;
	c->arg = arg;
	c->res = malloc(sizeof(*c->res));
	c->alt = malloc(sizeof(*c->alt));
	return c->res && c->alt ? 0 : -1;
}

static inline void snd_ctx_free(struct snd_ctx *c)
{
	free(c->res);
	free(c->alt);
	c->res = c->alt = NULL;
}

static inline void snd_violate(struct snd_ctx *c, enum snd_kind kind, const char *job,
			       const struct adv_finding *f, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static inline void snd_violate(struct snd_ctx *c, enum snd_kind kind, const char *job,
			       const struct adv_finding *f, const char *fmt, ...)
{
	char detail[SND_TEXT_MAX];
	struct snd_violation v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	v.kind = kind;
	v.code = f->code;
	v.job = job;
	v.message = f->message;
	v.fix = f->fix;
	v.detail = detail;
	c->st.violations[kind]++;
	if (c->report)
		c->report(c->arg, &v);
}

static inline bool snd_rejects_with(const struct adv_result *res, const char *code)
{
	for (int i = 0; i < res->n_findings; i++)
		if (res->findings[i].severity == ADV_SEV_REJECT && !strcmp(res->findings[i].code, code))
			return true;
	return false;
}

/* "MEM_OVER_CAPACITY, GPU_COUNT_MISMATCH" of a result's rejects. */
static inline void snd_reject_codes(const struct adv_result *res, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < res->n_findings && n < len; i++)
		if (res->findings[i].severity == ADV_SEV_REJECT)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
					      res->findings[i].code);
	if (!n)
		snprintf(buf, len, "none");
}

static inline int snd_count_rejects(const struct adv_result *res)
{
	int n = 0;

	for (int i = 0; i < res->n_findings; i++)
		n += res->findings[i].severity == ADV_SEV_REJECT;
	return n;
}

/* ---- completions ------------------------------------------------------------------ */

/* The grid of one field: values ordered least memory first. */
struct snd_grid {
	enum adv_field field;
	const char *option;
	int n;
	const char *v[8];
};

/* The grids of the fields a finding rests on that the job leaves unstated. */
static inline int snd_grids(const struct adv_result *res, const struct adv_request *req,
			    const catalog_t *cat, unsigned uses, struct snd_grid *g)
{
	static const char *const seqs[] = { "512", "2048", "4096", "8192" };
	static const int seqv[] = { 512, 2048, 4096, 8192 };
	const struct adv_model *m = catalog_find_model(cat, req->wl.model);
	const struct adv_gpu *gpu = catalog_find_gpu(cat, req->res.gpu);
	bool infer = res->task == ADV_TASK_INFER;
	int k = 0;

	for (int f = 0; f < ADV_F_COUNT; f++) {
		struct snd_grid *x = &g[k];

		/* A framework's documented default is the job's value
		 * (issue 26, item 1); advisor's assumptions and the
		 * site's gradient bytes are not. */
		if (!(uses & ADV_USES(f)) || (res->from[f] != ADV_FROM_ASSUMED &&
					      res->from[f] != ADV_FROM_POLICY))
			continue;
		x->field = (enum adv_field)f;
		x->n = 0;
		switch (f) {
		case ADV_F_MBS:
			x->option = "mbs";
			x->v[x->n++] = "1", x->v[x->n++] = "2", x->v[x->n++] = "4";
			x->v[x->n++] = "8";
			break;
		case ADV_F_RECOMPUTE:
			x->option = "recompute";
			x->v[x->n++] = "full", x->v[x->n++] = "selective", x->v[x->n++] = "none";
			break;
		case ADV_F_ZERO:
			if (infer)
				continue;
			x->option = "zero";
			x->v[x->n++] = "3", x->v[x->n++] = "2", x->v[x->n++] = "1";
			x->v[x->n++] = "0";
			break;
		case ADV_F_SEQ:
			x->option = "seq";
			for (int i = 0; i < 4; i++)
				if (!m || m->max_seq <= 0 || seqv[i] <= m->max_seq)
					x->v[x->n++] = seqs[i];
			break;
		case ADV_F_PRECISION:
			x->option = "precision";
			x->v[x->n++] = "bf16";
			/* A completion is a job that can run: fp8 needs fp8 tensor cores. */
			if (gpu && gpu->fp8_tflops > 0)
				x->v[x->n++] = "fp8";
			break;
		case ADV_F_GRAD_DTYPE:
			if (infer)
				continue;
			x->option = "grad-dtype";
			x->v[x->n++] = "bf16", x->v[x->n++] = "fp32";
			break;
		default:
			continue;
		}
		if (x->n > 0)
			k++;
	}
	return k;
}

/* "zero 0 (default), seq 4096 (default)": the unstated values of the grids
 * as the engine resolved them, with their origins. */
static inline void snd_unstated_text(const struct adv_result *res, const struct snd_grid *g,
				     int ng, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < ng && n < len; i++) {
		char v[32] = "";

		switch (g[i].field) {
		case ADV_F_MBS: snprintf(v, sizeof(v), " %d", res->mbs); break;
		case ADV_F_SEQ: snprintf(v, sizeof(v), " %d", res->seq); break;
		case ADV_F_ZERO: snprintf(v, sizeof(v), " %d", res->layout.zero); break;
		case ADV_F_RECOMPUTE:
			snprintf(v, sizeof(v), " %s", engine_recompute_name(res->recompute));
			break;
		case ADV_F_PRECISION:
			snprintf(v, sizeof(v), " %s", engine_precision_name(res->precision));
			break;
		default: break;
		}
		n += (size_t)snprintf(buf + n, len - n, "%s%s%s (%s)", n ? ", " : "",
				      provenance_field_name(g[i].field), v,
				      provenance_origin_name((enum adv_origin)res->from[g[i].field]));
	}
}

/* Applies the completion pick[] (a value index per grid) as options, and
 * writes them as text. */
static inline int snd_complete(const struct snd_grid *g, int ng, const int *pick,
			       struct adv_request *r, char *text, size_t len)
{
	char err[256];
	size_t n = 0;

	text[0] = '\0';
	for (int i = 0; i < ng; i++) {
		const char *v = g[i].v[pick[i]];

		if (options_apply(&r->wl, g[i].option, v, err, sizeof(err)) != 0)
			return -1;
		if (n < len)
			n += (size_t)snprintf(text + n, len - n, "%s--llm-%s=%s", n ? " " : "",
					      g[i].option, v);
	}
	return 0;
}

/*
 * Property 1 for finding f of the job: every completion checked keeps the
 * code at reject.  On a violation, a completion whose whole verdict is not
 * reject is named when there is one (else the first that passes).
 */
static inline void snd_check_sound(struct snd_ctx *c, const struct adv_request *req,
				   const char *job, const struct adv_finding *f, uint64_t seed)
{
	struct snd_grid g[ADV_F_COUNT];
	int ng = snd_grids(c->res, req, c->cat, f->uses, g), pick[ADV_F_COUNT];
	long total = 1, runs;
	struct snd_rng r;
	char text[512], found[512] = "", codes[256] = "", unstated[256], singles[256];
	bool clean = false;

	if (ng == 0)
		return;
	c->st.with_unstated++;
	for (int i = 0; i < ng; i++)
		total *= g[i].n;
	snd_rng_seed(&r, seed);
	runs = total <= c->max_completions ? total : c->max_completions;
	for (long k = 0; k < runs && !clean; k++) {
		struct adv_request cr = *req;

		if (total <= c->max_completions) {
			long x = k;
			for (int i = 0; i < ng; i++) {
				pick[i] = (int)(x % g[i].n);
				x /= g[i].n;
			}
		} else {
			/* First the corners of least memory (every field at its
			 * first value; precision and grad-dtype both ways), then
			 * a sample. */
			long x = k;
			bool corner = true;

			for (int i = 0; i < ng; i++) {
				bool both = g[i].field == ADV_F_PRECISION ||
					    g[i].field == ADV_F_GRAD_DTYPE;
				pick[i] = both ? (int)(x % g[i].n) : 0;
				if (both)
					x /= g[i].n;
			}
			if (x > 0)
				corner = false;
			if (!corner)
				for (int i = 0; i < ng; i++)
					pick[i] = (int)snd_below(&r, (unsigned)g[i].n);
		}
		if (snd_complete(g, ng, pick, &cr, text, sizeof(text)) != 0)
			continue;
		c->st.completions++;
		c->check(c->cat, c->pol, &cr, c->alt);
		if (snd_rejects_with(c->alt, f->code))
			continue;
		if (!found[0] || c->alt->verdict != ADV_REJECT) {
			snprintf(found, sizeof(found), "%s", text);
			snd_reject_codes(c->alt, codes, sizeof(codes));
			clean = c->alt->verdict != ADV_REJECT;
		}
	}
	if (!found[0])
		return;
	/* Which one value alone, the others as the engine took them, passes. */
	singles[0] = '\0';
	for (int i = 0, n = 0; i < ng; i++)
		for (int v = 0; v < g[i].n; v++) {
			struct adv_request cr = *req;
			char e[256];

			if (options_apply(&cr.wl, g[i].option, g[i].v[v], e, sizeof(e)) != 0)
				continue;
			c->check(c->cat, c->pol, &cr, c->alt);
			if (snd_rejects_with(c->alt, f->code) || n + 1 >= (int)sizeof(singles))
				continue;
			n += snprintf(singles + n, sizeof(singles) - (size_t)n, "%s--llm-%s=%s",
				      n ? " " : "", g[i].option, g[i].v[v]);
		}
	snd_unstated_text(c->res, g, ng, unstated, sizeof(unstated));
	snd_violate(c, SND_UNSOUND, job, f,
		    "it rests on unstated %s; completion %s passes it (its rejects: %s); "
		    "one value alone that passes: %s",
		    unstated, found, codes, singles[0] ? singles : "none");
}

/* ---- fixes ------------------------------------------------------------------------ */

/* The next alternative of a fix: up to "; ", ", or " or an " or " that
 * starts another alternative ("A or --llm-B", "A or request ..."), or the
 * end; returns its length and sets *next past the separator. */
static inline size_t snd_alternative(const char *s, const char **next)
{
	for (const char *p = s; *p; p++) {
		if (!strncmp(p, "; ", 2)) {
			*next = p + 2;
			return (size_t)(p - s);
		}
		if (!strncmp(p, ", or ", 5)) {
			*next = p + 5;
			return (size_t)(p - s);
		}
		if (!strncmp(p, " or --llm-", 10) || !strncmp(p, " or request ", 12)) {
			*next = p + 4;
			return (size_t)(p - s);
		}
	}
	*next = s + strlen(s);
	return strlen(s);
}

/* Whether text (an alternative without its note) is --llm-NAME=VALUE words only. */
static inline bool snd_option_words(const char *text)
{
	char buf[ADV_MSG_MAX], *tok, *save = NULL;
	bool any = false;

	snprintf(buf, sizeof(buf), "%s", text);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (strncmp(tok, "--llm-", 6) || !strchr(tok, '='))
			return false;
		any = true;
	}
	return any;
}

/* Cuts an alternative at its " (...)" note, if it ends with one. */
static inline void snd_cut_note(char *s)
{
	size_t n = strlen(s);
	char *p;

	while (n > 0 && s[n - 1] == ' ')
		s[--n] = '\0';
	if (n == 0 || s[n - 1] != ')')
		return;
	p = strstr(s, " (");
	if (p)
		*p = '\0';
}

/* Applies --llm-NAME=VALUE words; -1 with the refused word in err. */
static inline int snd_apply_options(struct adv_request *r, const char *text, char *err,
				    size_t errlen)
{
	char buf[ADV_MSG_MAX], *tok, *save = NULL, e[256];

	snprintf(buf, sizeof(buf), "%s", text);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		if (strncmp(tok, "--llm-", 6) || !eq) {
			snprintf(err, errlen, "%s: not --llm-NAME=VALUE", tok);
			return -1;
		}
		*eq = '\0';
		if (options_apply(&r->wl, tok + 6, eq + 1, e, sizeof(e)) != 0) {
			snprintf(err, errlen, "%s", e);
			return -1;
		}
	}
	return 0;
}

/*
 * The resource forms: "request at least N GPUs", "request at least N nodes
 * (M GPUs)", "request N GPUs ...", "request at most N GPUs ...".  "request
 * N or M GPUs" is two alternatives: which (0 or 1) picks one.  Returns the
 * number of alternatives it holds (0: not a resource form).
 */
static inline int snd_resource_form(const char *s, int which, struct adv_request *r)
{
	long a, b;
	char unit[16];
	int n = 0;

	if (sscanf(s, "request at least %ld %15[a-zA-Z] (%ld GPU%n", &a, unit, &b, &n) == 3 &&
	    n > 0 && !strncmp(unit, "node", 4)) {
		r->res.nodes = (int)a;
		r->res.gpus = (int)b;
		return 1;
	}
	if ((sscanf(s, "request at least %ld %15[a-zA-Z]", &a, unit) == 2 ||
	     sscanf(s, "request at most %ld %15[a-zA-Z]", &a, unit) == 2) &&
	    !strncmp(unit, "GPU", 3)) {
		r->res.gpus = (int)a;
		r->res.nodes = 0;
		return 1;
	}
	if (sscanf(s, "request %ld or %ld %15[a-zA-Z]", &a, &b, unit) == 3 &&
	    !strncmp(unit, "GPU", 3)) {
		r->res.gpus = (int)(which ? b : a);
		r->res.nodes = 0;
		return 2;
	}
	if (sscanf(s, "request %ld %15[a-zA-Z]", &a, unit) == 2 && !strncmp(unit, "GPU", 3)) {
		r->res.gpus = (int)a;
		r->res.nodes = 0;
		return 1;
	}
	return 0;
}

/* Judges one applied alternative: its own code gone; the verdict when sole. */
static inline void snd_judge_fix(struct snd_ctx *c, const struct adv_request *fr,
				 const char *job, const struct adv_finding *f, const char *alt,
				 bool sole)
{
	char codes[256];

	c->st.alternatives++;
	c->check(c->cat, c->pol, fr, c->alt);
	snd_reject_codes(c->alt, codes, sizeof(codes));
	if (snd_rejects_with(c->alt, f->code))
		snd_violate(c, SND_FIX_KEEPS, job, f, "fix \"%s\" keeps it (rejects after: %s)",
			    alt, codes);
	else if (sole && c->alt->verdict == ADV_REJECT)
		snd_violate(c, SND_FIX_SOLE_REJECTS, job, f,
			    "fix \"%s\" of the only reject leaves a reject (%s)", alt, codes);
}

/* One part of an alternative: options, or a resource form, or skipped. */
static inline void snd_try_part(struct snd_ctx *c, const struct adv_request *req,
				const char *job, const struct adv_finding *f, const char *part,
				bool sole)
{
	char buf[ADV_MSG_MAX], err[320];
	struct adv_request fr;
	int n;

	snprintf(buf, sizeof(buf), "%s", part);
	/* "request at least N GPUs with --llm-layout=...": the resources,
	 * then the layout that uses them. */
	if (!strncmp(buf, "request ", 8) && strstr(buf, " with --llm-")) {
		char *with = strstr(buf, " with --llm-");

		*with = '\0';
		fr = *req;
		if (snd_resource_form(buf, 0, &fr) == 0) {
			c->st.skipped++;
			return;
		}
		snd_cut_note(with + 6);
		if (snd_apply_options(&fr, with + 6, err, sizeof(err)) != 0) {
			snd_violate(c, SND_FIX_REFUSED, job, f, "fix \"%s\": %s", part, err);
			return;
		}
		snd_judge_fix(c, &fr, job, f, part, sole);
		return;
	}
	if (strstr(buf, "--llm-")) {
		snd_cut_note(buf);
		fr = *req;
		if (snd_apply_options(&fr, buf, err, sizeof(err)) != 0) {
			snd_violate(c, SND_FIX_REFUSED, job, f, "fix \"%s\": %s", part, err);
			return;
		}
		snd_judge_fix(c, &fr, job, f, part, sole);
		return;
	}
	fr = *req;
	n = snd_resource_form(buf, 0, &fr);
	if (n == 0) {
		c->st.skipped++;
		return;
	}
	snd_judge_fix(c, &fr, job, f, part, sole);
	if (n == 2) {
		char one[96];

		fr = *req;
		snd_resource_form(buf, 1, &fr);
		snprintf(one, sizeof(one), "%s [the second count]", part);
		snd_judge_fix(c, &fr, job, f, one, sole);
	}
}

/* Splits a mixed alternative at ", or " and " or " for snd_try_part. */
static inline void snd_try_parts(struct snd_ctx *c, const struct adv_request *req,
				 const char *job, const struct adv_finding *f, const char *alt,
				 bool sole)
{
	char buf[ADV_MSG_MAX], *p = buf;

	snprintf(buf, sizeof(buf), "%s", alt);
	while (p && *p) {
		char *a = strstr(p, ", or "), *b = strstr(p, " or "), *e;
		size_t skip;

		if (a && (!b || a < b)) {
			e = a;
			skip = 5;
		} else {
			e = b;
			skip = 4;
		}
		if (e)
			*e = '\0';
		snd_try_part(c, req, job, f, p, sole);
		p = e ? e + skip : NULL;
	}
}

/* Property 2 for finding f (reject severity): each alternative of its fix. */
static inline void snd_check_fix(struct snd_ctx *c, const struct adv_request *req,
				 const char *job, const struct adv_finding *f, bool sole)
{
	const char *s = f->fix, *next;

	while (*s) {
		char alt[ADV_MSG_MAX], words[ADV_MSG_MAX];
		size_t n = snd_alternative(s, &next);

		if (n >= sizeof(alt))
			n = sizeof(alt) - 1;
		memcpy(alt, s, n);
		alt[n] = '\0';
		s = next;
		if (!alt[0])
			continue;
		snprintf(words, sizeof(words), "%s", alt);
		snd_cut_note(words);
		if (strstr(words, "--llm-") && !snd_option_words(words) &&
		    !(!strncmp(words, "request ", 8) && strstr(words, " with --llm-"))) {
			snd_violate(c, SND_FIX_FORMAT, job, f,
				    "alternative \"%s\" is not --llm-NAME=VALUE words (+ note)", alt);
			snd_try_parts(c, req, job, f, alt, sole);
			continue;
		}
		snd_try_part(c, req, job, f, alt, sole);
	}
}

/* BEST_PLAN's fix on a job of one reject must leave no reject. */
static inline void snd_check_plan(struct snd_ctx *c, const struct adv_request *req,
				  const char *job, const struct adv_finding *plan, int n_rejects)
{
	char words[ADV_MSG_MAX], err[320], codes[256];
	struct adv_request fr = *req;

	snprintf(words, sizeof(words), "%s", plan->fix);
	snd_cut_note(words);
	if (!snd_option_words(words)) {
		snd_violate(c, SND_FIX_FORMAT, job, plan,
			    "BEST_PLAN fix \"%s\" is not --llm-NAME=VALUE words (+ note)", plan->fix);
		return;
	}
	if (snd_apply_options(&fr, words, err, sizeof(err)) != 0) {
		snd_violate(c, SND_FIX_REFUSED, job, plan, "BEST_PLAN fix \"%s\": %s", plan->fix, err);
		return;
	}
	c->st.plans++;
	c->check(c->cat, c->pol, &fr, c->alt);
	if (c->alt->verdict != ADV_REJECT)
		return;
	snd_reject_codes(c->alt, codes, sizeof(codes));
	if (n_rejects == 1)
		snd_violate(c, SND_PLAN_REJECTS, job, plan,
			    "BEST_PLAN \"%s\" on the job of one reject leaves a reject (%s)",
			    plan->fix, codes);
	else
		c->st.plans_multi_rejects++;
}

/*
 * Both properties on one job.  The findings are copied out first: the
 * checks below reuse the context's results.
 */
static inline void snd_check_job(struct snd_ctx *c, const struct snd_job *j)
{
	static struct adv_finding fs[ADV_MAX_FINDINGS];
	struct adv_request req;
	char job[SND_TEXT_MAX], err[256];
	int n, n_rejects;
	uint64_t seed = 0x243f6a8885a308d3ull;

	snd_job_text(j, job, sizeof(job));
	for (const char *p = job; *p; p++)
		seed = (seed ^ (unsigned char)*p) * 0x100000001b3ull;
	if (snd_job_request(j, &req, err, sizeof(err)) != 0) {
		fprintf(stderr, "soundness: %s: generated option refused: %s\n", job, err);
		abort();
	}
	c->st.jobs++;
	c->check(c->cat, c->pol, &req, c->res);
	n = c->res->n_findings;
	memcpy(fs, c->res->findings, sizeof(fs[0]) * (size_t)n);
	n_rejects = snd_count_rejects(c->res);
	if (c->res->verdict == ADV_REJECT)
		c->st.rejected_jobs++;
	if (n_rejects == 1)
		c->st.sole_jobs++;
	for (int i = 0; i < n; i++) {
		if (fs[i].severity != ADV_SEV_REJECT || !strcmp(fs[i].code, "BEST_PLAN"))
			continue;
		c->st.rejects++;
		/* snd_check_sound reads c->res (the job's origins); the
		 * fix checks after it only c->alt. */
		snd_check_sound(c, &req, job, &fs[i], seed + (uint64_t)i);
		snd_check_fix(c, &req, job, &fs[i], n_rejects == 1);
	}
	for (int i = 0; i < n; i++)
		if (!strcmp(fs[i].code, "BEST_PLAN") && fs[i].fix[0])
			snd_check_plan(c, &req, job, &fs[i], n_rejects);
}

#endif
