/*
 * fuzz_soundness.c - libFuzzer target for the engine's two properties of
 * issue 26 ("Tests that can fail"): a reject is a proof, and a fix fixes.
 *
 * The checks are tests/unit/soundness.h, the same code test_soundness.c
 * runs with a fixed seed in make check; here the input's bytes drive the
 * generator (one byte a choice; the PRNG seeded with the input's hash once
 * they run out), so the fuzzer explores the jobs whose choices reach new
 * engine code.  One input is one partial job: a catalog model, GPU and
 * count, and a subset of the --llm-* settings.  Against the shipped
 * catalog and the documented default policy it asserts:
 *
 *   - every reject-severity finding stays a reject (same code) for every
 *     completion checked of the unstated values it rests on (mbs,
 *     recompute, zero, seq, precision, grad-dtype);
 *   - every alternative of a reject's fix ("; "-separated --llm-NAME=VALUE
 *     words, or "request at least N GPUs/nodes") removes that reject, and
 *     on a job of one reject leaves no reject at all, nor does BEST_PLAN's
 *     fix.
 *
 * A violation prints the job's options, the finding and the completion or
 * fix that shows it, then aborts, so that libFuzzer keeps the input.  With
 * FUZZ_SOUNDNESS_SURVEY=1 in the environment it aborts on nothing: the
 * first violation of each kind and code is printed, and at exit the counts
 * (a survey of an engine known to break the properties).
 */
#include "config/catalog.h"
#include "config/policy.h"
#include "engine/engine.h"
#include "fuzz.h"
#include "../unit/soundness.h"

#ifndef FUZZ_TOP_SRCDIR
#define FUZZ_TOP_SRCDIR "."
#endif

static catalog_t *cat;
static struct adv_policy pol;
static struct snd_ctx ctx;

/* The survey's kinds and codes seen (FUZZ_SOUNDNESS_SURVEY). */
static int survey;
static struct {
	enum snd_kind kind;
	char code[ADV_CODE_MAX];
	long count;
} seen[128];
static int n_seen;

static void report(void *arg, const struct snd_violation *v)
{
	int i;

	(void)arg;
	if (survey) {
		for (i = 0; i < n_seen; i++)
			if (seen[i].kind == v->kind && !strcmp(seen[i].code, v->code))
				break;
		if (i < n_seen) {
			seen[i].count++;
			return;
		}
		if (n_seen < (int)(sizeof(seen) / sizeof(seen[0]))) {
			seen[n_seen].kind = v->kind;
			fuzz_copy(seen[n_seen].code, v->code, sizeof(seen[n_seen].code));
			seen[n_seen++].count = 1;
		}
	}
	fprintf(stderr, "fuzz_soundness: %s %s\n  job:     %s\n  finding: %s\n  fix:     %s\n"
		"  shown:   %s\n", snd_kind_names[v->kind], v->code, v->job, v->message,
		v->fix[0] ? v->fix : "(none)", v->detail);
	FUZZ_ASSERT(survey && "a property of issue 26 does not hold");
}

static void survey_summary(void)
{
	fprintf(stderr, "fuzz_soundness: survey of %ld jobs (%ld rejected, %ld reject findings)\n",
		ctx.st.jobs, ctx.st.rejected_jobs, ctx.st.rejects);
	for (int i = 0; i < n_seen; i++)
		fprintf(stderr, "fuzz_soundness: %-16s %-26s %ld\n", snd_kind_names[seen[i].kind],
			seen[i].code, seen[i].count);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512] = "", path[4096];
	const char *top = getenv("ADVISOR_TOP");

	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "%s/etc/catalog.yaml", top ? top : FUZZ_TOP_SRCDIR);
	cat = catalog_create();
	if (!cat || catalog_load(cat, path, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_soundness: %s (set ADVISOR_TOP to the source tree)\n", err);
		abort();
	}
	policy_defaults(&pol);
	if (snd_ctx_init(&ctx, cat, &pol, report, NULL) != 0)
		abort();
	/* Instrumented, a check costs ten times make check's: fewer
	 * completions per finding, more jobs per second. */
	ctx.max_completions = 16;
	survey = getenv("FUZZ_SOUNDNESS_SURVEY") && !strcmp(getenv("FUZZ_SOUNDNESS_SURVEY"), "1");
	if (survey)
		atexit(survey_summary);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snd_rng r;
	struct snd_job j;

	snd_rng_bytes(&r, data, size);
	snd_generate(cat, &r, &j);
	snd_check_job(&ctx, &j);
	return 0;
}
