/*
 * test_soundness.c - property tests of the engine (issue 26, "Tests that
 * can fail"): rejects are proofs, and fixes fix.
 *
 * The hand-written tests of the other programs hold the engine to the
 * cases someone thought of; these hold it to two properties over jobs no
 * one chose.  A fixed-seed generator (soundness.h, shared with the
 * libFuzzer target tests/fuzz/fuzz_soundness.c) writes SOUNDNESS_JOBS
 * partial jobs (default 2000): a catalog model on a catalog GPU and count,
 * and a random subset of --llm-layout, zero, recompute, precision, seq,
 * mbs, gbs, task, framework, grad-dtype and ckpt.  For each:
 *
 * 1. every reject-severity finding holds for every completion of the
 *    unstated values it rests on (a reject is a proof, never a guess: issue
 *    18 said it, this checks it on jobs nobody wrote down);
 * 2. every alternative of a reject's fix removes that reject, and on a job
 *    of one reject, every alternative and BEST_PLAN's fix leave a verdict
 *    other than reject (a fix a user pastes must work).
 *
 * Each violation is printed with the job's options, the finding and the
 * completion or fix that shows it (the first three of each kind and code,
 * then counts).  SOUNDNESS_SEED changes the generator's seed,
 * SOUNDNESS_JOBS the number of jobs, SOUNDNESS_EXAMPLES the examples shown
 * per category; SOUNDNESS_LOG names a file that gets every violation, one
 * a line (kind, code, job, message, fix, detail; tab-separated).
 * test_checker_can_fail plants a false reject and a bad fix into the
 * engine's answer and requires the checker to find both, so a checker that
 * cannot fail fails here.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "fixture.h"
#include "soundness.h"

#define CATEGORIES_MAX 128
#define EXAMPLE_MAX 1600

/* Violations by kind and code, with the first few in full. */
struct category {
	enum snd_kind kind;
	char code[ADV_CODE_MAX];
	long count;
	int n_examples;
	char examples[8][EXAMPLE_MAX];
};

struct collected {
	FILE *log;                       /* SOUNDNESS_LOG: every violation, one a line */
	int examples;                    /* to keep per category */
	int n;
	struct category cats[CATEGORIES_MAX];
};

struct state {
	struct fixture *fx;
	struct snd_ctx ctx;
	struct collected col;
	unsigned long seed;
	long jobs;
};

static void collect(void *arg, const struct snd_violation *v)
{
	struct collected *col = arg;
	struct category *c = NULL;

	for (int i = 0; i < col->n; i++)
		if (col->cats[i].kind == v->kind && !strcmp(col->cats[i].code, v->code))
			c = &col->cats[i];
	if (!c) {
		if (col->n >= CATEGORIES_MAX)
			return;
		c = &col->cats[col->n++];
		memset(c, 0, sizeof(*c));
		c->kind = v->kind;
		snprintf(c->code, sizeof(c->code), "%s", v->code);
	}
	c->count++;
	if (col->log)
		fprintf(col->log, "%s\t%s\t%s\t%s\t%s\t%s\n", snd_kind_names[v->kind], v->code,
			v->job, v->message, v->fix, v->detail);
	if (c->n_examples < col->examples && c->n_examples < 8)
		snprintf(c->examples[c->n_examples++], EXAMPLE_MAX,
			 "    job:     %s\n    finding: %s: %s\n    fix:     %s\n    shown:   %s\n",
			 v->job, v->code, v->message, v->fix[0] ? v->fix : "(none)", v->detail);
}

static long env_long(const char *name, long dflt)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	v = strtol(s, &end, 0);
	return *end ? dflt : v;
}

static int setup(void **st)
{
	struct state *s = calloc(1, sizeof(*s));
	void *fx = NULL;

	if (!s)
		return -1;
	*st = s;
	if (fixture_setup(&fx, NULL, NULL) != 0) {
		s->fx = fx;
		return -1;
	}
	s->fx = fx;
	s->col.examples = (int)env_long("SOUNDNESS_EXAMPLES", 3);
	s->seed = (unsigned long)env_long("SOUNDNESS_SEED", 26);
	s->jobs = env_long("SOUNDNESS_JOBS", 2000);
	if (getenv("SOUNDNESS_LOG") && !(s->col.log = fopen(getenv("SOUNDNESS_LOG"), "w"))) {
		perror(getenv("SOUNDNESS_LOG"));
		return -1;
	}
	if (snd_ctx_init(&s->ctx, s->fx->cat, s->fx->pol, collect, &s->col) != 0)
		return -1;
	return 0;
}

static int teardown(void **st)
{
	struct state *s = *st;
	void *fx;

	if (!s)
		return 0;
	snd_ctx_free(&s->ctx);
	if (s->col.log)
		fclose(s->col.log);
	fx = s->fx;
	fixture_teardown(&fx);
	free(s);
	return 0;
}

/* Runs the generated jobs once; both properties' tests read the outcome. */
static void run_jobs(struct state *s)
{
	struct snd_rng r;
	struct snd_job j;
	const struct snd_stats *st = &s->ctx.st;

	if (st->jobs > 0)
		return;
	snd_rng_seed(&r, s->seed);
	for (long i = 0; i < s->jobs; i++) {
		snd_generate(s->fx->cat, &r, &j);
		snd_check_job(&s->ctx, &j);
	}
	print_message("soundness: seed %lu, %ld jobs, %ld rejected (%ld of one reject), "
		      "%ld reject findings "
		      "(%ld on unstated values, %ld completions run), %ld fix alternatives "
		      "applied, %ld skipped (not options), %ld best plans applied (%ld left a "
		      "reject on a job of several rejects: not a property)\n",
		      s->seed, st->jobs, st->rejected_jobs, st->sole_jobs, st->rejects, st->with_unstated,
		      st->completions, st->alternatives, st->skipped, st->plans,
		      st->plans_multi_rejects);
}

/* Prints the categories of the given kinds; returns their violations. */
static long report(const struct state *s, const enum snd_kind *kinds, int n_kinds)
{
	long total = 0;

	for (int k = 0; k < n_kinds; k++) {
		for (int i = 0; i < s->col.n; i++) {
			const struct category *c = &s->col.cats[i];

			if (c->kind != kinds[k])
				continue;
			print_message("%s %s: %ld\n", snd_kind_names[c->kind], c->code, c->count);
			for (int e = 0; e < c->n_examples; e++)
				print_message("%s", c->examples[e]);
		}
		total += s->ctx.st.violations[kinds[k]];
	}
	for (int k = 0; k < n_kinds; k++)
		print_message("%-18s %ld\n", snd_kind_names[kinds[k]], s->ctx.st.violations[kinds[k]]);
	return total;
}

/* Property 1: a reject holds for every completion of its unstated values. */
static void test_rejects_are_proofs(void **st)
{
	static const enum snd_kind kinds[] = { SND_UNSOUND };
	struct state *s = *st;

	run_jobs(s);
	assert_true(s->ctx.st.rejects > 0);
	assert_int_equal(report(s, kinds, 1), 0);
}

/* Property 2: a reject's fix removes it; on a job of one reject, the
 * fixes and the best plan leave no reject. */
static void test_fixes_fix(void **st)
{
	static const enum snd_kind kinds[] = {
		SND_FIX_FORMAT, SND_FIX_REFUSED, SND_FIX_KEEPS, SND_FIX_SOLE_REJECTS,
		SND_PLAN_REJECTS,
	};
	struct state *s = *st;

	run_jobs(s);
	assert_true(s->ctx.st.alternatives > 0);
	assert_int_equal(report(s, kinds, (int)(sizeof(kinds) / sizeof(kinds[0]))), 0);
}

/* ---- the checker can fail -------------------------------------------------------- */

/*
 * The engine, plus a planted reject on an unstated micro-batch (resting on
 * it, false for mbs 2) whose fix does not remove it and whose second
 * alternative is not in option form.
 */
static void planted_check(const catalog_t *cat, const struct adv_policy *pol,
			  const struct adv_request *req, struct adv_result *res)
{
	struct adv_finding *f;

	engine_check(cat, pol, req, res);
	if (req->wl.mbs == 2 || res->n_findings >= ADV_MAX_FINDINGS)
		return;
	f = &res->findings[res->n_findings++];
	memset(f, 0, sizeof(*f));
	snprintf(f->code, sizeof(f->code), "GBS_NOT_DIVISIBLE");
	f->severity = ADV_SEV_REJECT;
	snprintf(f->message, sizeof(f->message), "planted");
	snprintf(f->fix, sizeof(f->fix),
		 "--llm-mbs=4 (1.0 GiB per GPU); --llm-layout=tp1 and tp2");
	f->uses = ADV_USES(ADV_F_MBS);
	res->verdict = ADV_REJECT;
}

static void count_only(void *arg, const struct snd_violation *v)
{
	(void)arg;
	(void)v;
}

static void test_checker_can_fail(void **st)
{
	struct state *s = *st;
	struct snd_ctx c;
	struct snd_job j;

	memset(&j, 0, sizeof(j));
	snprintf(j.gpu, sizeof(j.gpu), "h100");
	j.gpus = 8;
	snd_opt(&j, "model", "llama3-8b");
	snd_opt(&j, "layout", "tp2");
	snd_opt(&j, "zero", "1");
	assert_int_equal(snd_ctx_init(&c, s->fx->cat, s->fx->pol, count_only, NULL), 0);
	c.check = planted_check;
	snd_check_job(&c, &j);
	print_message("planted: %ld unsound, %ld keeps, %ld format\n", c.st.violations[SND_UNSOUND],
		      c.st.violations[SND_FIX_KEEPS], c.st.violations[SND_FIX_FORMAT]);
	assert_true(c.st.violations[SND_UNSOUND] >= 1);
	assert_true(c.st.violations[SND_FIX_KEEPS] >= 1);
	assert_true(c.st.violations[SND_FIX_FORMAT] >= 1);
	snd_ctx_free(&c);

	/* The same job through the engine alone: llama3-8b at TP 2, ZeRO-1 on
	 * 8 H100 fits (45.6 GiB) and breaks no rule, so nothing is reported. */
	assert_int_equal(snd_ctx_init(&c, s->fx->cat, s->fx->pol, count_only, NULL), 0);
	snd_check_job(&c, &j);
	assert_int_equal(c.st.rejects, 0);
	snd_ctx_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checker_can_fail),
		cmocka_unit_test(test_rejects_are_proofs),
		cmocka_unit_test(test_fixes_fix),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
