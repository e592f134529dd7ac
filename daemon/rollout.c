/*
 * rollout.c - the per-code summary behind `advisorctl report` (issue 8).
 *
 * A site turns advisor on in steps: `mode: off`, then `warn` (users see the
 * findings, nothing is blocked), then `enforce`.  Before the last step an
 * admin wants to know what enforcement would have blocked.  The decision
 * log records, for every check, the mode in force, each code's severity and
 * the reject-level codes that warn mode let through ("unenforced"); this
 * module folds a period of it into counts by code and severity, by
 * partition, by verdict and by mode, with distinct users.
 *
 * The log is read row by row (dlog_scan), so a 90-day log costs one pass
 * and memory proportional to the distinct codes, partitions and users, not
 * to the number of decisions.
 *
 * Issue 14: only plugin decisions are in that table (what-if queries are
 * kept apart, see dlog.c), and a row that aggregates the identical checks
 * of a user over budget counts as many decisions as its repeat count, so
 * the totals are those of the checks made, however they were stored.
 *
 * Issue 30: one job makes several decisions (its submission at sbatch and
 * a node check per step), so counting decisions counts a job two or more
 * times.  By default the report counts jobs: a submission, or a node
 * check that names none (a job submitted around the plugin), is a job; a
 * node check that names its submission (its parent) adds nothing to the
 * counts but node_checks, and when it rejects, its submission's job counts
 * once in node_rejected (a set of those submissions' ids: the jobs killed
 * on the node, few).  --by decision counts every row, as before.  Exempt
 * rows (the policy's exemption, accepted unchecked) are counted apart too.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlog/dlog.h"
#include "engine/engine.h"
#include "rollout.h"
#include "util.h"

#define SEP "\x1f"
#define NO_SEVERITY -1

/* ---- a set of strings, to count distinct users per code and partition ------- */

struct strset {
	char **slot;
	size_t cap, n;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int strset_grow(struct strset *set)
{
	size_t cap = set->cap ? set->cap * 2 : 256;
	char **slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t i = 0; i < set->cap; i++) {
		size_t j;

		if (!set->slot[i])
			continue;
		for (j = fnv1a(set->slot[i]) & (cap - 1); slot[j]; j = (j + 1) & (cap - 1))
			;
		slot[j] = set->slot[i];
	}
	free(set->slot);
	set->slot = slot;
	set->cap = cap;
	return 0;
}

/* 1 when key is new, 0 when already there, -1 out of memory. */
static int strset_add(struct strset *set, const char *key)
{
	size_t j;

	if ((set->n + 1) * 2 > set->cap && strset_grow(set) != 0)
		return -1;
	for (j = fnv1a(key) & (set->cap - 1); set->slot[j]; j = (j + 1) & (set->cap - 1))
		if (strcmp(set->slot[j], key) == 0)
			return 0;
	if (!(set->slot[j] = strdup(key)))
		return -1;
	set->n++;
	return 1;
}

static void strset_free(struct strset *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slot[i]);
	free(set->slot);
}

/* ---- aggregation ----------------------------------------------------------------- */

struct code_agg {
	char code[ADV_CODE_MAX];
	int severity;
	uint64_t decisions, users, unenforced, rejected;
};

struct part_agg {
	char name[64];
	uint64_t decisions, users, verdict[ADV_VERDICT_COUNT], unenforced;
};

struct host_agg {
	char name[DLOG_HOST_MAX];
	uint64_t decisions;
};

struct agg {
	struct host_agg *hosts;
	size_t n_hosts, cap_hosts;
	struct code_agg *codes;
	size_t n_codes, cap_codes;
	struct part_agg *parts;
	size_t n_parts, cap_parts;
	struct strset seen;
	/* mode[ADV_MODE_COUNT]: decisions logged before modes were recorded. */
	uint64_t decisions, users, verdict[ADV_VERDICT_COUNT], mode[ADV_MODE_COUNT + 1];
	uint64_t unenforced, unenforced_users, rejected;
	/* Issue 30. */
	bool by_decision;
	uint64_t rows, node_checks, node_rejected, exempt, exempt_users;
	uint64_t exempt_by[3];         /* user, account, partition (exempt_kinds) */
	bool oom;
};

static const char *const exempt_kinds[] = { "user", "account", "partition" };

/* Grows *arr (elements of size sz) to hold one more; NULL out of memory. */
static void *push(void **arr, size_t *n, size_t *cap, size_t sz)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		void *p = realloc(*arr, ncap * sz);

		if (!p)
			return NULL;
		*arr = p;
		*cap = ncap;
	}
	memset((char *)*arr + *n * sz, 0, sz);
	return (char *)*arr + (*n)++ * sz;
}

static struct code_agg *code_of(struct agg *g, const char *code, int severity)
{
	struct code_agg *c;

	for (size_t i = 0; i < g->n_codes; i++)
		if (g->codes[i].severity == severity && strcmp(g->codes[i].code, code) == 0)
			return &g->codes[i];
	c = push((void **)&g->codes, &g->n_codes, &g->cap_codes, sizeof(*c));
	if (c) {
		adv_strlcpy(c->code, code, sizeof(c->code));
		c->severity = severity;
	}
	return c;
}

static struct part_agg *part_of(struct agg *g, const char *name)
{
	struct part_agg *p;

	for (size_t i = 0; i < g->n_parts; i++)
		if (strcmp(g->parts[i].name, name) == 0)
			return &g->parts[i];
	p = push((void **)&g->parts, &g->n_parts, &g->cap_parts, sizeof(*p));
	if (p)
		adv_strlcpy(p->name, name, sizeof(p->name));
	return p;
}

/* Few hosts (the nodes running advisord): a list is enough. */
static struct host_agg *host_of(struct agg *g, const char *name)
{
	struct host_agg *h;

	for (size_t i = 0; i < g->n_hosts; i++)
		if (strcmp(g->hosts[i].name, name) == 0)
			return &g->hosts[i];
	h = push((void **)&g->hosts, &g->n_hosts, &g->cap_hosts, sizeof(*h));
	if (h)
		adv_strlcpy(h->name, name, sizeof(h->name));
	return h;
}

/* 1 when (kind, a, b, user) was not seen before. */
static int first_time(struct agg *g, const char *kind, const char *a, const char *b,
		      const char *user)
{
	char key[512];
	int rc;

	adv_snprintf(key, sizeof(key), "%s" SEP "%s" SEP "%s" SEP "%s", kind, a, b, user);
	rc = strset_add(&g->seen, key);
	if (rc < 0)
		g->oom = true;
	return rc > 0;
}

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

static int severity_of(const char *name)
{
	for (int s = ADV_SEV_INFO; s <= ADV_SEV_REJECT; s++)
		if (strcmp(name, engine_severity_name((enum adv_severity)s)) == 0)
			return s;
	return NO_SEVERITY;
}

/* The codes of r with the severity each has under enforcement; w decisions. */
static void add_codes(struct agg *g, const struct dlog_rec *r, const char *user, uint64_t w)
{
	char codes[sizeof(r->codes)], sevs[sizeof(r->severities)];
	char *cs = NULL, *ss = NULL, *sev;

	adv_strlcpy(codes, r->codes, sizeof(codes));
	adv_strlcpy(sevs, r->severities, sizeof(sevs));
	/* Older rows have no severities: their codes count under "unknown". */
	sev = strtok_r(sevs, " ", &ss);
	for (char *code = strtok_r(codes, " ", &cs); code; code = strtok_r(NULL, " ", &cs)) {
		bool unenforced = has_word(r->unenforced, code);
		struct code_agg *c;
		char sevname[16];
		int s;

		s = sev ? severity_of(sev) : NO_SEVERITY;
		if (unenforced)
			s = ADV_SEV_REJECT;
		if (!(c = code_of(g, code, s))) {
			g->oom = true;
			return;
		}
		c->decisions += w;
		adv_snprintf(sevname, sizeof(sevname), "%d", s);
		c->users += (uint64_t)first_time(g, "c", code, sevname, user);
		if (unenforced)
			c->unenforced += w;
		else if (s == ADV_SEV_REJECT && r->verdict == ADV_REJECT)
			c->rejected += w;
		if (sev)
			sev = strtok_r(NULL, " ", &ss);
	}
}

static void add_decision(const struct dlog_rec *r, void *ctx)
{
	struct agg *g = ctx;
	char uid[32];
	const char *user = r->user;
	struct part_agg *p;
	struct host_agg *h;
	int v = r->verdict >= 0 && r->verdict < ADV_VERDICT_COUNT ? r->verdict : 0;
	uint64_t w = r->repeat > 1 ? r->repeat : 1;

	if (!user[0]) {
		adv_snprintf(uid, sizeof(uid), "uid%u", (unsigned)r->uid);
		user = uid;
	}
	g->rows += w;
	/* By job, a node check of a known submission is that job's, counted with it. */
	if (!g->by_decision && r->context == ADV_CTX_STEP && r->parent[0]) {
		g->node_checks += w;
		if (v == ADV_REJECT)
			g->node_rejected += (uint64_t)first_time(g, "n", r->parent, "", "");
		return;
	}
	if (r->exempt_by[0]) {
		size_t k;

		g->exempt += w;
		g->exempt_users += (uint64_t)first_time(g, "e", "", "", user);
		for (k = 0; k < ADV_ARRAY_SIZE(exempt_kinds); k++)
			if (!strncmp(r->exempt_by, exempt_kinds[k], strlen(exempt_kinds[k])) &&
			    r->exempt_by[strlen(exempt_kinds[k])] == ' ')
				g->exempt_by[k] += w;
	}
	g->decisions += w;
	g->verdict[v] += w;
	g->mode[r->mode >= 0 && r->mode < ADV_MODE_COUNT ? r->mode : ADV_MODE_COUNT] += w;
	g->users += (uint64_t)first_time(g, "u", "", "", user);
	if (v == ADV_REJECT)
		g->rejected += w;
	if (r->unenforced[0]) {
		g->unenforced += w;
		g->unenforced_users += (uint64_t)first_time(g, "x", "", "", user);
	}
	if (!(h = host_of(g, r->host)) || !(p = part_of(g, r->partition))) {
		g->oom = true;
		return;
	}
	h->decisions += w;
	p->decisions += w;
	p->verdict[v] += w;
	p->users += (uint64_t)first_time(g, "p", r->partition, "", user);
	if (r->unenforced[0])
		p->unenforced += w;
	add_codes(g, r, user, w);
}

static int by_decisions(const void *a, const void *b)
{
	const struct code_agg *x = a, *y = b;

	if (x->decisions != y->decisions)
		return x->decisions > y->decisions ? -1 : 1;
	if (strcmp(x->code, y->code))
		return strcmp(x->code, y->code);
	return y->severity - x->severity;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct part_agg *)a)->name, ((const struct part_agg *)b)->name);
}

static int by_host(const void *a, const void *b)
{
	return strcmp(((const struct host_agg *)a)->name, ((const struct host_agg *)b)->name);
}

/* ---- the answer ------------------------------------------------------------------ */

#define SET(m, f, v) do { (m)->has_##f = 1; (m)->f = (v); } while (0)

static Advisor__LabelledCount *count_pb(struct arena *a, uint64_t n)
{
	Advisor__LabelledCount *c = ARENA_NEW(a, Advisor__LabelledCount);

	if (c) {
		advisor__labelled_count__init(c);
		SET(c, count, n);
	}
	return c;
}

static int totals_pb(const struct agg *g, struct arena *a, Advisor__ReportResponse *r)
{
	r->verdicts = ARENA_ARRAY(a, Advisor__LabelledCount *, ADV_VERDICT_COUNT);
	r->modes = ARENA_ARRAY(a, Advisor__LabelledCount *, ADV_MODE_COUNT + 1);
	if (!r->verdicts || !r->modes)
		return -1;
	for (int v = 0; v < ADV_VERDICT_COUNT; v++) {
		Advisor__LabelledCount *c = count_pb(a, g->verdict[v]);

		if (!c)
			return -1;
		SET(c, verdict, v);
		r->verdicts[r->n_verdicts++] = c;
	}
	for (int m = 0; m <= ADV_MODE_COUNT; m++) {
		Advisor__LabelledCount *c;

		if (!g->mode[m])
			continue;
		if (!(c = count_pb(a, g->mode[m])))
			return -1;
		if (m < ADV_MODE_COUNT)
			SET(c, mode, m);
		r->modes[r->n_modes++] = c;
	}
	return 0;
}

static int codes_pb(const struct agg *g, struct arena *a, Advisor__ReportResponse *r)
{
	r->codes = ARENA_ARRAY(a, Advisor__ReportCode *, g->n_codes + 1);
	if (!r->codes)
		return -1;
	for (size_t i = 0; i < g->n_codes; i++) {
		const struct code_agg *c = &g->codes[i];
		Advisor__ReportCode *pc = ARENA_NEW(a, Advisor__ReportCode);

		if (!pc)
			return -1;
		advisor__report_code__init(pc);
		if (!(pc->code = arena_strdup(a, c->code)))
			return -1;
		if (c->severity != NO_SEVERITY)
			SET(pc, severity, c->severity);
		SET(pc, decisions, c->decisions);
		SET(pc, users, c->users);
		SET(pc, unenforced, c->unenforced);
		SET(pc, rejected, c->rejected);
		r->codes[r->n_codes++] = pc;
	}
	return 0;
}

static int parts_pb(const struct agg *g, struct arena *a, Advisor__ReportResponse *r)
{
	r->partitions = ARENA_ARRAY(a, Advisor__ReportPartition *, g->n_parts + 1);
	if (!r->partitions)
		return -1;
	for (size_t i = 0; i < g->n_parts; i++) {
		const struct part_agg *p = &g->parts[i];
		Advisor__ReportPartition *pp = ARENA_NEW(a, Advisor__ReportPartition);

		if (!pp)
			return -1;
		advisor__report_partition__init(pp);
		pp->partition = p->name[0] ? arena_strdup(a, p->name) : NULL;
		SET(pp, decisions, p->decisions);
		SET(pp, users, p->users);
		SET(pp, accept, p->verdict[ADV_ACCEPT]);
		SET(pp, warn, p->verdict[ADV_WARN]);
		SET(pp, reject, p->verdict[ADV_REJECT]);
		SET(pp, unenforced, p->unenforced);
		r->partitions[r->n_partitions++] = pp;
	}
	return 0;
}

static int hosts_pb(const struct agg *g, struct arena *a, Advisor__ReportResponse *r)
{
	r->hosts = ARENA_ARRAY(a, Advisor__LabelledCount *, g->n_hosts + 1);
	if (!r->hosts)
		return -1;
	for (size_t i = 0; i < g->n_hosts; i++) {
		Advisor__LabelledCount *c = count_pb(a, g->hosts[i].decisions);

		if (!c)
			return -1;
		/* Rows from before hosts were recorded have none. */
		if (g->hosts[i].name[0] && !(c->host = arena_strdup(a, g->hosts[i].name)))
			return -1;
		r->hosts[r->n_hosts++] = c;
	}
	return 0;
}

static int exempt_pb(const struct agg *g, struct arena *a, Advisor__ReportResponse *r)
{
	r->exemptions = ARENA_ARRAY(a, Advisor__LabelledCount *, ADV_ARRAY_SIZE(exempt_kinds));
	if (!r->exemptions)
		return -1;
	for (size_t k = 0; k < ADV_ARRAY_SIZE(exempt_kinds); k++) {
		Advisor__LabelledCount *c;

		if (!g->exempt_by[k])
			continue;
		if (!(c = count_pb(a, g->exempt_by[k])))
			return -1;
		c->kind = (char *)exempt_kinds[k];
		r->exemptions[r->n_exemptions++] = c;
	}
	return 0;
}

static void agg_free(struct agg *g)
{
	free(g->hosts);
	free(g->codes);
	free(g->parts);
	strset_free(&g->seen);
}

int rollout_report(int64_t since, const char *user, bool by_decision, struct arena *a,
		   Advisor__ReportResponse **out, char *err, size_t errlen)
{
	struct dlog_filter f = { .user = user, .verdict = -1, .since = since };
	Advisor__ReportResponse *r = ARENA_NEW(a, Advisor__ReportResponse);
	struct agg g;
	int rc = ADVISOR__ERROR_CODE__ERR_INTERNAL;

	memset(&g, 0, sizeof(g));
	g.by_decision = by_decision;
	if (!r) {
		adv_snprintf(err, errlen, "out of memory");
		return rc;
	}
	advisor__report_response__init(r);
	switch (dlog_scan(&f, add_decision, &g, err, errlen)) {
	case 0:
		break;
	case DLOG_ERR_UNAVAILABLE:
		rc = ADVISOR__ERROR_CODE__ERR_UNAVAILABLE;   /* the server is down: advisorctl exits 69 */
		goto out;
	default:
		goto out;
	}
	if (g.oom) {
		adv_snprintf(err, errlen, "out of memory summarising the decision log");
		goto out;
	}
	if (g.n_codes)
		qsort(g.codes, g.n_codes, sizeof(*g.codes), by_decisions);
	if (g.n_parts)
		qsort(g.parts, g.n_parts, sizeof(*g.parts), by_name);
	if (g.n_hosts)
		qsort(g.hosts, g.n_hosts, sizeof(*g.hosts), by_host);
	SET(r, since, since);
	SET(r, until, (int64_t)time(NULL));
	SET(r, decisions, g.decisions);
	SET(r, users, g.users);
	SET(r, unenforced, g.unenforced);
	SET(r, unenforced_users, g.unenforced_users);
	SET(r, rejected, g.rejected);
	SET(r, by_decision, by_decision);
	SET(r, rows, g.rows);
	SET(r, node_checks, g.node_checks);
	SET(r, node_rejected, g.node_rejected);
	SET(r, exempt, g.exempt);
	SET(r, exempt_users, g.exempt_users);
	if (totals_pb(&g, a, r) || codes_pb(&g, a, r) || parts_pb(&g, a, r) ||
	    hosts_pb(&g, a, r) || exempt_pb(&g, a, r)) {
		adv_snprintf(err, errlen, "out of memory");
		goto out;
	}
	*out = r;
	rc = 0;
out:
	agg_free(&g);
	return rc;
}
