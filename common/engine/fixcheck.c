/*
 * fixcheck.c - every fix advisor prints has been checked by advisor
 * (issue 26).
 *
 * A finding's fix is a list of alternatives ("A; B", "A or B").  Each one
 * that has the shape of options (--llm-NAME=VALUE words) or of resources
 * ("request at least 12 nodes (96 GPUs)", "request 15 or 18 GPUs") is
 * applied to the request and the job judged again, as engine_check()
 * judges it without its mode.  It is printed only when its finding is gone
 * (at its severity or above), no reject appears that the job did not
 * have, and, where the finding was the job's only reject, the job then
 * passes.  Words of any other shape ("state --llm-seq ... to have it
 * checked", "use a GPU with more memory") are advice, not settings, and
 * are kept as they are.
 *
 * Alternatives are also held to what the job's framework can change
 * (workload.fixed): no tensor parallelism for the HF Trainer.
 *
 * Fixes compose, one root cause at a time.  The rejects are taken in the
 * order in which one causes another (the model's shape rules of the
 * layout, then the GPU count, the batch, memory); once a root's first
 * working alternative is applied, a later reject that it removes as well
 * follows from that root: it is listed under it as a note, without a fix
 * of its own ("TP=3 is one reject").  A later reject that stays gets its
 * fix from the job with the root's fix applied, printed together with
 * that fix (compose()), so that the batch fix is computed for the layout
 * that works; only where none of those works is its own fix, checked
 * alone, printed instead.
 *
 * A resource fix that does not remove its finding at the count named
 * (the count is a bound on the model's states alone) is searched upward,
 * in whole nodes where the job asks for whole nodes, and carries the
 * layout that makes it work where the job's own does not (a server needs
 * the tensor parallelism to spread its weights): the planner's best plan
 * on those GPUs, which the planner has itself judged.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "evaluate.h"
#include "findings.h"
#include "fixcheck.h"
#include "options.h"
#include "planner.h"
#include "util.h"

#define FIX_ALTS 8
/* Resource counts tried above the named one: x1.25 ... x4. */
static const double grow[] = { 1.0, 1.25, 1.5, 2.0, 3.0, 4.0 };

/* The order in which one reject causes another (lower first). */
static int cause_rank(const struct adv_finding *f)
{
	static const struct {
		enum adv_code code;
		int rank;
	} ranks[] = {
		{ ADV_CODE_TP_NOT_DIVIDE_HEADS, 0 }, { ADV_CODE_TP_NOT_DIVIDE_KV_HEADS, 1 },
		{ ADV_CODE_TP_NOT_DIVIDE_FFN, 1 }, { ADV_CODE_EP_NOT_DIVIDE_EXPERTS, 1 },
		{ ADV_CODE_PP_UNEVEN_LAYERS, 1 }, { ADV_CODE_VPP_INVALID, 2 },
		{ ADV_CODE_CP_SEQ_NOT_DIVISIBLE, 2 }, { ADV_CODE_EP_GRID_NOT_DIVIDE_GPUS, 2 },
		{ ADV_CODE_WORLD_SIZE_MISMATCH, 3 }, { ADV_CODE_GPU_COUNT_MISMATCH, 3 },
		{ ADV_CODE_ZERO_WITH_PIPELINE, 4 }, { ADV_CODE_GBS_NOT_DIVISIBLE, 4 },
		{ ADV_CODE_MEM_OVER_CAPACITY, 5 },
	};

	for (size_t k = 0; k < ADV_ARRAY_SIZE(ranks); k++)
		if (engine_finding_is(f, ranks[k].code))
			return ranks[k].rank;
	return 6;
}

/* The job with a fix applied, judged as engine_check() judges it without
 * the policy's mode, the job reader's notes and the best plan. */
static void judge(const catalog_t *cat, const struct adv_policy *pol,
		  const struct adv_request *req, struct adv_result *res)
{
	memset(res, 0, offsetof(struct adv_result, findings));
	res->mode = ADV_MODE_ENFORCE;
	engine_judge(cat, pol, req, res);
}

static int worst_of(const struct adv_result *res, const char *code)
{
	int w = -1;

	for (int i = 0; i < res->n_findings; i++)
		if (!strcmp(res->findings[i].code, code) && (int)res->findings[i].severity > w)
			w = (int)res->findings[i].severity;
	return w;
}

/* Splits a fix into alternatives at "; " and " or " (outside parentheses);
 * seps[i] is the separator before alternative i (kept when it is printed). */
static int split(const char *fix, char alts[][ADV_MSG_MAX], const char **seps, int max)
{
	const char *sep = "; ";

	int n = 0, depth = 0;
	size_t o = 0;

	for (const char *p = fix; *p && n < max; p++) {
		bool cut = false;
		size_t skip = 0;

		if (*p == '(')
			depth++;
		else if (*p == ')' && depth > 0)
			depth--;
		if (!depth && !strncmp(p, "; ", 2)) {
			cut = true;
			skip = 1;
		} else if (!depth && !strncmp(p, ", or ", 5)) {
			cut = true;
			skip = 4;
		} else if (!depth && (!strncmp(p, " or --llm-", 10) || !strncmp(p, " or request ", 12))) {
			/* "request 15 or 18 GPUs" is one alternative of two counts. */
			cut = true;
			skip = 3;
		}
		if (cut) {
			alts[n][o] = '\0';
			if (o)
				seps[n++] = sep;
			sep = skip == 1 ? "; " : skip == 4 ? ", or " : " or ";
			o = 0;
			p += skip;
			continue;
		}
		if (o + 1 < ADV_MSG_MAX)
			alts[n][o++] = *p;
	}
	if (n < max) {
		alts[n][o] = '\0';
		if (o)
			seps[n++] = sep;
	}
	/* "or --llm-zero=2": a leading "or" joins, it is no word of the fix. */
	for (int i = 0; i < n; i++)
		if (!strncmp(alts[i], "or ", 3))
			memmove(alts[i], alts[i] + 3, strlen(alts[i] + 3) + 1);
	return n;
}

enum shape { SHAPE_ADVICE = 0, SHAPE_SETTINGS };

/* The settings a layout option changes, as ADV_USES bits. */
static unsigned layout_changes(const struct adv_layout *was, const struct adv_layout *now)
{
	unsigned m = 0;

	if (now->tp != was->tp && !(now->tp == 1 && was->tp == ADV_UNSET))
		m |= ADV_USES(ADV_F_TP);
	if (now->pp != was->pp && !(now->pp == 1 && was->pp == ADV_UNSET))
		m |= ADV_USES(ADV_F_PP);
	if (now->cp != was->cp && !(now->cp == 1 && was->cp == ADV_UNSET))
		m |= ADV_USES(ADV_F_CP);
	if (now->ep != was->ep && !(now->ep == 1 && was->ep == ADV_UNSET))
		m |= ADV_USES(ADV_F_EP);
	if (now->vpp != was->vpp && !(now->vpp == 1 && was->vpp == ADV_UNSET))
		m |= ADV_USES(ADV_F_VPP);
	return m;
}

/* Sets the job's GPUs to gpus, in whole nodes when nodes > 0. */
static void set_gpus(struct adv_request *r, int gpus, int nodes, int gpn)
{
	int was = r->res.gpus;

	if (nodes > 0 && gpn > 0) {
		r->res.nodes = nodes;
		r->res.gpus_per_node = gpn;
		r->res.gpus = nodes * gpn;
	} else {
		r->res.gpus = gpus;
		r->res.nodes = 0;
		r->res.gpus_per_node = 0;
	}
	/* A launch that started one process per GPU follows the allocation. */
	if (r->wl.world != ADV_UNSET && was > 0 && r->wl.world == was)
		r->wl.world = r->res.gpus;
	else
		r->wl.world = ADV_UNSET;
	r->wl.world_nodes = ADV_UNSET;
	r->wl.step_nodes = 0;
	r->wl.step_gpus = 0;
}

/*
 * Applies one alternative to r.  Returns SHAPE_SETTINGS when it names
 * settings (options or a resource count) and they parse, SHAPE_ADVICE
 * otherwise; *bad when it changes what the framework cannot.  A resource
 * alternative's counts go to gpus[] / nodes[] (up to 2), the caller tries
 * each.
 */
static enum shape apply_alt(const char *alt, struct adv_request *r, bool *bad, int *gpus,
			    int *nodes, int *n_counts)
{
	char buf[ADV_MSG_MAX], *save = NULL, *w;
	bool any = false, request = false, advice = false;
	int depth = 0, last = 0;
	struct adv_layout was = r->wl.layout;
	/* DeepSpeed's pipeline engine has no virtual stages (planner.c). */
	unsigned fixed = r->wl.fixed |
		(r->wl.framework == ADV_FW_DEEPSPEED ? ADV_USES(ADV_F_VPP) : 0);

	*bad = false;
	*n_counts = 0;
	adv_strlcpy(buf, alt, sizeof(buf));
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (depth || w[0] == '(') {
			/* "(52.8 GiB per GPU)", "(96 GPUs)": a note on the fix */
			for (const char *p = w; *p; p++)
				depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
			continue;
		}
		if (!strncmp(w, "--llm-", 6)) {
			char *eq = strchr(w, '='), err[128];

			if (!eq)
				return SHAPE_ADVICE;
			*eq = '\0';
			/* "--llm-model=NAME": a placeholder to fill in, not a value. */
			if (eq[1] >= 'A' && eq[1] <= 'Z' && strspn(eq + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
			    strlen(eq + 1))
				return SHAPE_ADVICE;
			if (options_apply(&r->wl, w + 6, eq + 1, err, sizeof(err)) != 0)
				return SHAPE_ADVICE;
			if (!strcmp(w + 6, "zero") && (fixed & ADV_USES(ADV_F_ZERO)))
				*bad = true;
			if (!strcmp(w + 6, "recompute") && (fixed & ADV_USES(ADV_F_RECOMPUTE)))
				*bad = true;
			any = true;
			continue;
		}
		if (!strcmp(w, "request")) {
			request = true;
			continue;
		}
		if (request && w[0] >= '0' && w[0] <= '9') {
			last = atoi(w);
			continue;
		}
		if (request && last > 0 && (!strncmp(w, "node", 4) || !strncmp(w, "GPU", 3))) {
			if (*n_counts < 2) {
				nodes[*n_counts] = w[0] == 'n' ? last : 0;
				gpus[*n_counts] = w[0] == 'n' ? 0 : last;
				(*n_counts)++;
			}
			last = 0;
			continue;
		}
		if (request && !strcmp(w, "or") && last > 0 && *n_counts < 2) {
			/* "request 15 or 18 GPUs": the first count takes the unit
			 * of the second. */
			nodes[*n_counts] = 0;
			gpus[*n_counts] = last;
			(*n_counts)++;
			last = 0;
			continue;
		}
		if (request && (!strcmp(w, "at") || !strcmp(w, "least") || !strcmp(w, "or") ||
				!strcmp(w, "with") || !strcmp(w, "and")))
			continue;
		advice = true;
	}
	/* "request 15 or 18 GPUs": the first count has its unit after the second. */
	if (request && last > 0 && *n_counts < 2) {
		nodes[*n_counts] = 0;
		gpus[*n_counts] = last;
		(*n_counts)++;
	}
	if (fixed & layout_changes(&was, &r->wl.layout))
		*bad = true;
	if (advice || (!any && !*n_counts))
		return SHAPE_ADVICE;
	return SHAPE_SETTINGS;
}

struct verdict_ctx {
	const catalog_t *cat;
	const struct adv_policy *pol;
	const struct adv_request *req;   /* the job as submitted */
	const struct adv_result *orig;   /* its findings */
	int n_rejects;                   /* its own rejects (engine_judge()'s) */
};

/* Whether r, the job with a fix applied, is rid of finding f. */
static bool works(const struct verdict_ctx *v, const struct adv_finding *f,
		  const struct adv_request *r)
{
	struct adv_result *res = malloc(sizeof(*res));
	bool ok;

	if (!res)
		return false;
	judge(v->cat, v->pol, r, res);
	ok = worst_of(res, f->code) < (int)f->severity;
	for (int i = 0; ok && i < res->n_findings; i++) {
		const struct adv_finding *g = &res->findings[i];

		if (g->severity != ADV_SEV_REJECT)
			continue;
		/* The job's only reject: the fix must make it pass. */
		if (v->n_rejects == 1 && f->severity == ADV_SEV_REJECT)
			ok = false;
		/* No reject the job did not have. */
		else if (worst_of(v->orig, g->code) < (int)ADV_SEV_REJECT)
			ok = false;
	}
	free(res);
	return ok;
}

/* The planner's best plan on r's GPUs, as options; "" when none. */
static void plan_for(const struct verdict_ctx *v, const struct adv_request *r, char *buf,
		     size_t len)
{
	struct planner_opts opts;
	struct planner_plan plan;
	int n = 0;

	buf[0] = '\0';
	planner_opts_init(&opts);
	opts.top = 1;
	if (planner_plan(v->cat, v->pol, r, &opts, &plan, 1, &n, NULL, 0) == PLANNER_OK && n > 0)
		planner_plan_options(&plan, buf, len);
}

/*
 * A resource alternative: the counts it names, or the least above them
 * that works, with the planner's layout when the job's own does not.
 * Writes the checked alternative to out; false when none works.
 */
static bool check_resources(const struct verdict_ctx *v, const struct adv_finding *f,
			    const struct adv_request *base, const char *alt, const int *gpus,
			    const int *nodes, int n_counts, char *out, size_t len)
{
	const struct adv_layout_out *l = &v->orig->layout;
	int gpn = l->gpus_per_node > 0 ? l->gpus_per_node : 0;
	char plan[PLANNER_OPTS_MAX];
	struct adv_request r, p;
	bool searched = false;

	/* Two counts named ("request 56 or 64 GPUs"): as written when both
	 * work, else the one that does. */
	if (n_counts == 2 && !nodes[0] && !nodes[1]) {
		bool w[2];

		for (int c = 0; c < 2; c++) {
			r = *base;
			set_gpus(&r, gpus[c], 0, 0);
			w[c] = works(v, f, &r);
		}
		if (w[0] && w[1]) {
			adv_strlcpy(out, alt, len);
			return true;
		}
		if (w[0] || w[1]) {
			adv_snprintf(out, len, "request %d GPUs", gpus[w[0] ? 0 : 1]);
			return true;
		}
	}
	/* Every count named first; then the first one, grown. */
	for (int c = 0; c < n_counts; c++) {
		for (size_t k = 0; k < ADV_ARRAY_SIZE(grow); k++) {
			int nn = nodes[c] > 0 ? (int)(nodes[c] * grow[k] + 0.999) : 0;
			int ng = nodes[c] > 0 ? nn * gpn : (int)(gpus[c] * grow[k] + 0.999);

			if (k > 0 && (c > 0 || searched))
				break;
			if (k > 0 && ng <= (nodes[c] > 0 ? nodes[c] * gpn : gpus[c]))
				continue;
			if (nodes[c] > 0 && gpn <= 0)
				break;
			r = *base;
			set_gpus(&r, ng, nn, gpn);
			if (works(v, f, &r)) {
				if (k == 0 && n_counts == 1)
					adv_strlcpy(out, alt, len);   /* as the check wrote it */
				else if (nn > 0)
					adv_snprintf(out, len, "request at least %d %s (%d GPUs)", nn,
						     adv_plural(nn, "node", "nodes"), ng);
				else if (k == 0 && n_counts > 1)
					adv_snprintf(out, len, "request %d GPUs", ng);
				else
					adv_snprintf(out, len, "request at least %d %s", ng,
						     adv_plural(ng, "GPU", "GPUs"));
				return true;
			}
			/* The job's layout may not use the GPUs: the plan does. */
			plan_for(v, &r, plan, sizeof(plan));
			if (plan[0]) {
				bool bad;
				int g2[2], n2[2], nc;

				p = r;
				if (apply_alt(plan, &p, &bad, g2, n2, &nc) == SHAPE_SETTINGS && !bad &&
				    works(v, f, &p)) {
					if (nn > 0)
						adv_snprintf(out, len, "request at least %d %s (%d GPUs) with %s",
							     nn, adv_plural(nn, "node", "nodes"), ng, plan);
					else
						adv_snprintf(out, len, "request at least %d %s with %s", ng,
							     adv_plural(ng, "GPU", "GPUs"), plan);
					return true;
				}
			}
		}
		searched = true;
	}
	return false;
}

/*
 * The roots' settings (prefix) and an alternative computed after them, as
 * one set of settings: where both set an option, the alternative's value
 * stands, as it did when it was applied last (an --llm-layout list
 * replaces the whole layout: options_parse_layout).  Its note stays last.
 */
static void compose(const char *prefix, const char *alt, char *out, size_t len)
{
	char pre[ADV_MSG_MAX], *save = NULL, *w;
	const char *note = strstr(alt, " (");
	size_t o = 0, alen = note ? (size_t)(note - alt) : strlen(alt);

	out[0] = '\0';
	adv_strlcpy(pre, prefix, sizeof(pre));
	for (w = strtok_r(pre, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		const char *eq = strchr(w, '='), *both;
		char name[40];

		if (!eq)
			continue;
		adv_snprintf(name, sizeof(name), "%.*s", (int)(eq - w + 1), w);
		both = strstr(alt, name);
		if ((!both || (size_t)(both - alt) >= alen) && o + strlen(w) + 2 < len)
			o += adv_snprintf(out + o, len - o, "%s%s", o ? " " : "", w);
	}
	adv_snprintf(out + o, len - o, "%s%s", o ? " " : "", alt);
}

/*
 * Checks the alternatives of f against base (the job, with the root fixes
 * in prefix applied); writes the ones that work, prefix first, to out.
 * Returns how many settings alternatives were kept; *first gets the first
 * kept one's settings (for the findings that follow).
 */
static int check_alts(const struct verdict_ctx *v, const struct adv_finding *f,
		      const char *fix, const char *prefix, char *out, size_t len, char *first,
		      size_t flen)
{
	char alts[FIX_ALTS][ADV_MSG_MAX], one[ADV_MSG_MAX];
	const char *seps[FIX_ALTS];
	int n = split(fix, alts, seps, FIX_ALTS), kept = 0;
	size_t o = 0;

	out[0] = '\0';
	if (first)
		first[0] = '\0';
	for (int i = 0; i < n; i++) {
		struct adv_request r = *v->req;
		int gpus[2], nodes[2], nc;
		bool bad;
		enum shape sh;

		if (prefix[0]) {
			int g[2], nd[2], c;
			bool b;

			apply_alt(prefix, &r, &b, g, nd, &c);
		}
		sh = apply_alt(alts[i], &r, &bad, gpus, nodes, &nc);
		if (sh == SHAPE_ADVICE) {
			/* Advice is printed as it is, settings only once checked. */
			if (!prefix[0])
				o += adv_snprintf(out + o, len - o, "%s%s", o ? seps[i] : "", alts[i]);
			continue;
		}
		if (bad)
			continue;
		if (nc > 0) {
			char res_only[ADV_MSG_MAX];
			const char *with;

			if (!check_resources(v, f, &r, alts[i], gpus, nodes, nc, res_only,
					     sizeof(res_only)))
				continue;
			/* The roots' settings first, as they were applied: then
			 * a plan's words, which were applied over them. */
			with = strstr(res_only, " with ");
			if (!prefix[0])
				adv_strlcpy(one, res_only, sizeof(one));
			else if (with)
				adv_snprintf(one, sizeof(one), "%.*s with %s %s", (int)(with - res_only),
					     res_only, prefix, with + 6);
			else
				adv_snprintf(one, sizeof(one), "%s with %s", res_only, prefix);
		} else {
			if (!works(v, f, &r))
				continue;
			compose(prefix, alts[i], one, sizeof(one));
		}
		if (o + strlen(one) + 3 >= len)
			break;
		o += adv_snprintf(out + o, len - o, "%s%s", o ? seps[i] : "", one);
		if (first && !kept)
			adv_strlcpy(first, one, flen);
		kept++;
	}
	return kept;
}

/* The option words of a checked alternative (its notes dropped), appended. */
static void add_settings(char *prefix, size_t len, const char *alt)
{
	char buf[ADV_MSG_MAX], *save = NULL, *w;
	size_t o = strlen(prefix);

	adv_strlcpy(buf, alt, sizeof(buf));
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (!strncmp(w, "--llm-", 6) && o + strlen(w) + 2 < len)
			o += adv_snprintf(prefix + o, len - o, "%s%s", o ? " " : "", w);
}

/* Whether a finding from index from on has a fix to check: a reject, or a
 * warning with one. */
static bool needs_check(const struct adv_result *res, int from)
{
	for (int i = from; i < res->n_findings; i++)
		if (res->findings[i].severity == ADV_SEV_REJECT ||
		    (res->findings[i].severity == ADV_SEV_WARN && res->findings[i].fix[0]))
			return true;
	return false;
}

/*
 * The findings that follow from a root become notes under it: the root's
 * fix removes them, and a user reads one mistake once.
 */
static void fold(struct adv_result *res, const int *root_of)
{
	struct adv_finding *out = malloc(sizeof(res->findings));
	int n = 0;

	if (!out)
		return;
	for (int i = 0; i < res->n_findings; i++) {
		if (root_of[i] >= 0)
			continue;
		out[n++] = res->findings[i];
		for (int j = 0; j < res->n_findings; j++) {
			struct adv_finding g;

			if (root_of[j] != i)
				continue;
			g = res->findings[j];
			g.severity = ADV_SEV_INFO;
			adv_snprintf(g.message, sizeof(g.message), "follows from %s (its fix removes this too): %s",
				     res->findings[i].code, res->findings[j].message);
			g.fix[0] = g.fix_job[0] = '\0';
			out[n++] = g;
		}
	}
	memcpy(res->findings, out, (size_t)n * sizeof(*out));
	res->n_findings = n;
	free(out);
}

void fixcheck_run(const catalog_t *cat, const struct adv_policy *pol,
		  const struct adv_request *req, struct adv_result *res, int from)
{
	struct verdict_ctx v = { cat, pol, req, NULL, 0 };
	struct adv_result *orig = NULL, *now = NULL;
	int order[ADV_MAX_FINDINGS], n = 0, root_of[ADV_MAX_FINDINGS], first_root = -1;
	char prefix[ADV_MSG_MAX] = "", fix[ADV_MSG_MAX], first[ADV_MSG_MAX];
	struct adv_request applied;
	bool stale = false;          /* applied changed since now judged it */

	/* An accepted job has nothing to check: the common case costs nothing. */
	if (!needs_check(res, from))
		return;
	orig = malloc(sizeof(*orig));
	now = malloc(sizeof(*now));
	applied = *req;
	if (!orig || !now)
		goto out;
	memcpy(orig, res, sizeof(*orig));
	v.orig = orig;
	for (int i = 0; i < res->n_findings; i++) {
		root_of[i] = -1;
		if (i >= from && res->findings[i].severity == ADV_SEV_REJECT)
			v.n_rejects++;
	}
	/* The rejects by cause, then every other finding with a fix. */
	for (int rank = 0; rank <= 6; rank++)
		for (int i = from; i < res->n_findings; i++)
			if (res->findings[i].severity == ADV_SEV_REJECT &&
			    cause_rank(&res->findings[i]) == rank)
				order[n++] = i;
	for (int i = from; i < res->n_findings; i++)
		if (res->findings[i].severity == ADV_SEV_WARN && res->findings[i].fix[0])
			order[n++] = i;

	for (int k = 0; k < n; k++) {
		struct adv_finding *f = &res->findings[order[k]];
		bool reject = f->severity == ADV_SEV_REJECT;
		int kept = 0, j, g[2], nd[2], c;
		bool b;

		if (reject && first_root >= 0) {
			/* Does a root's fix remove it as well? */
			if (stale)
				judge(cat, pol, &applied, now);
			stale = false;
			if (worst_of(now, f->code) < (int)ADV_SEV_REJECT) {
				root_of[order[k]] = first_root;
				continue;
			}
		}
		if (!f->fix[0])
			continue;
		if (reject && prefix[0]) {
			/* A reject after a root: its fix computed for the job
			 * with the roots' fixes, and printed with them. */
			for (j = 0; j < now->n_findings; j++)
				if (!strcmp(now->findings[j].code, f->code))
					break;
			if (j < now->n_findings && now->findings[j].fix[0])
				kept = check_alts(&v, f, now->findings[j].fix, prefix, fix, sizeof(fix),
						  first, sizeof(first));
		}
		if (!kept)
			kept = check_alts(&v, f, f->fix, "", fix, sizeof(fix), first, sizeof(first));
		adv_strlcpy(f->fix, fix, sizeof(f->fix));
		f->fix_job[0] = '\0';
		if (!reject || !kept)
			continue;
		/* A root: what follows is judged with its fix applied. */
		add_settings(prefix, sizeof(prefix), first);
		applied = *req;
		apply_alt(prefix, &applied, &b, g, nd, &c);
		stale = true;
		if (first_root < 0)
			first_root = order[k];
	}
	/* One root left: its fix must make the job pass (the rejects folded
	 * under it go with it); checked again with that rule. */
	{
		int left = -1, count = 0;

		for (int i = from; i < res->n_findings; i++)
			if (root_of[i] < 0 && res->findings[i].severity == ADV_SEV_REJECT) {
				left = i;
				count++;
			}
		if (count == 1 && v.n_rejects > 1 && orig->findings[left].fix[0]) {
			v.n_rejects = 1;
			check_alts(&v, &res->findings[left], orig->findings[left].fix, "", fix,
				   sizeof(fix), NULL, 0);
			adv_strlcpy(res->findings[left].fix, fix, sizeof(res->findings[left].fix));
		}
	}
	fold(res, root_of);
out:
	free(orig);
	free(now);
}
