/*
 * test_checkpoint.c - checkpoint intervals against Daly 2006's published
 * cases, the exact waste model, and the engine's CKPT_* verdicts.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/policy.h"
#include "engine/checkpoint.h"
#include "engine/engine.h"
#include "engine/options.h"
#include "fixture.h"

/* Daly 2006, section 6: C = 5 min, R = 10 min. */
static void test_daly_published(void **st)
{
	static const struct {
		double m_min, t_min;
	} cases[] = { { 24 * 60, 117 }, { 6 * 60, 57 }, { 15, 9.1 } };
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double t = ckpt_daly(300, cases[i].m_min * 60) / 60;
		assert_true(fabs(t - cases[i].t_min) <= 0.01 * cases[i].t_min);
	}
	/* C >= 2M: checkpoint every M. */
	assert_true(ckpt_daly(1000, 400) == 400);
}

static void test_young(void **st)
{
	(void)st;
	assert_true(fabs(ckpt_young(300, 86400) - 7200) < 1e-9);
}

/* The numerical optimum minimises the exact waste, and is close to Daly. */
static void test_exact_optimum(void **st)
{
	static const double ms[] = { 900, 6 * 3600, 86400, 1e6 };
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		double m = ms[i], t = ckpt_optimal(300, m), w = ckpt_waste(t, 300, m, 600);
		assert_true(ckpt_waste(t * 1.01, 300, m, 600) >= w);
		assert_true(ckpt_waste(t * 0.99, 300, m, 600) >= w);
		/* Daly's higher-order estimate is within 5% of the exact optimum. */
		assert_true(fabs(ckpt_daly(300, m) / t - 1) < 0.05);
	}
}

/* W(T) by the formula; and 2x off the optimum costs ~1.25x its overhead. */
static void test_waste(void **st)
{
	double m = 86400, c = 300, r = 600, t = ckpt_optimal(c, m);
	double w = 1 - 3600 / (m * exp(r / m) * (exp((3600 + c) / m) - 1));
	double first = c / t + (t / 2 + r) / m;

	(void)st;
	assert_true(fabs(ckpt_waste(3600, c, m, r) - w) < 1e-12);
	assert_true(fabs(ckpt_waste(t, c, m, r) - first) < 0.1 * first);
	assert_true(ckpt_waste(2 * t, c, m, r) - ckpt_waste(t, c, m, r) < 0.5 * first);
	assert_true(ckpt_waste(0, c, m, r) == 1.0);
}

static void test_compute(void **st)
{
	struct ckpt_input in = { .write_s = 300, .mtbf_s = 86400, .restart_s = 600,
				 .interval_s = 3600 };
	struct ckpt_output out;

	(void)st;
	ckpt_compute(&in, &out);
	assert_true(fabs(out.daly_s - ckpt_daly(300, 86400)) < 1e-9);
	assert_true(out.waste > out.optimal_waste);
	in.interval_s = 0;
	ckpt_compute(&in, &out);
	assert_true(out.waste == out.optimal_waste);
}

/* ---- engine verdicts ---- */

static int setup(void **st)
{
	return fixture_setup(st, NULL, NULL);
}

static void job(struct adv_request *r, int gpus, const char *ckpt)
{
	char err[256];

	fixture_request(r, "h100", gpus, "llama3-70b");
	r->wl.layout.tp = 8;
	r->wl.layout.pp = 4;
	if (ckpt)
		assert_int_equal(options_apply(&r->wl, "ckpt", ckpt, err, sizeof(err)), 0);
}

static void test_engine_figures(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;

	job(&r, 1024, "1h");
	engine_check(s->cat, s->pol, &r, &res);
	assert_true(res.has_checkpoint);
	/* 14 B x 70.6B params = 988 GB at 50 GB/s. */
	assert_true(fabs(res.checkpoint.size_gb - 14 * 70.55) < 0.02 * 14 * 70.55);
	assert_true(fabs(res.checkpoint.write_s - res.checkpoint.size_gb / 50) < 1e-6);
	assert_true(fabs(res.checkpoint.job_mtbf_h - 25000.0 / 1024) < 1e-9);
	assert_true(res.checkpoint.interval_s == 3600);
	/* Per-node limit: 128 nodes x 0.1 GB/s = 12.8 GB/s < 50. */
	s->pol->node_write_gbps = 0.1;
	engine_check(s->cat, s->pol, &r, &res);
	assert_true(fabs(res.checkpoint.write_s - res.checkpoint.size_gb / 12.8) < 1e-6);
	/* Node MTBF wins when set. */
	s->pol->node_mtbf_hours = 1000;
	engine_check(s->cat, s->pol, &r, &res);
	assert_true(fabs(res.checkpoint.job_mtbf_h - 1000.0 / 128) < 1e-9);
	policy_defaults(s->pol);
}

static void test_engine_verdicts(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;
	char fix[ADV_MSG_MAX];

	/* The optimum itself passes. */
	job(&r, 1024, NULL);
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "CKPT_MISSING");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	snprintf(fix, sizeof(fix), "%s", f->fix);
	job(&r, 1024, fix + strlen("--llm-ckpt="));
	engine_check(s->cat, s->pol, &r, &res);
	assert_null(fixture_finding(&res, "CKPT_TOO_LONG"));
	assert_null(fixture_finding(&res, "CKPT_TOO_SHORT"));
	assert_null(fixture_finding(&res, "CKPT_MISSING"));
	/* Small jobs need not declare one. */
	job(&r, 64, NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_null(fixture_finding(&res, "CKPT_MISSING"));
	/* A day between checkpoints on 1,024 GPUs (MTBF 24 h): far too long. */
	job(&r, 1024, "1d");
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "CKPT_TOO_LONG");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	assert_non_null(strstr(f->fix, "--llm-ckpt="));
	/* Moderately long: a warning. */
	job(&r, 1024, "3h");
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "CKPT_TOO_LONG");
	assert_non_null(f);
	print_message("3h: %s fix %s\n", f->message, f->fix);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	/* Shorter than the 20 s write: the write exceeds the interval. */
	job(&r, 1024, "15s");
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "CKPT_WRITE_EXCEEDS_INTERVAL");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	/* Too short but longer than the write. */
	job(&r, 1024, "2m");
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "CKPT_TOO_SHORT");
	assert_non_null(f);
	print_message("2m: %s\n", f->message);
	/* Asynchronous: only the snapshot blocks, so a short interval is fine... */
	job(&r, 1024, "2m,async");
	engine_check(s->cat, s->pol, &r, &res);
	assert_null(fixture_finding(&res, "CKPT_TOO_SHORT"));
	assert_true(res.checkpoint.write_s < 2);
	/* ...but the background write must still fit in the interval. */
	job(&r, 1024, "15s,async");
	engine_check(s->cat, s->pol, &r, &res);
	assert_non_null(fixture_finding(&res, "CKPT_WRITE_EXCEEDS_INTERVAL"));
	/* off on a large job. */
	job(&r, 1024, "off");
	engine_check(s->cat, s->pol, &r, &res);
	assert_non_null(fixture_finding(&res, "CKPT_MISSING"));
}

/* The line a user reads: an interval and its loss, or, without checkpoints,
 * that a failure loses the whole run and how often failures come (issue 21:
 * not "every 5h36m16s loses 100.00% of the run"). */
static void test_describe(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	char line[ADV_MSG_MAX], want[128];

	job(&r, 1024, "off");
	engine_check(s->cat, s->pol, &r, &res);
	assert_true(res.checkpoint.interval_s == 0);
	assert_true(res.checkpoint.waste == 1.0);
	ckpt_describe(&res.checkpoint, line, sizeof(line));
	print_message("off: %s\n", line);
	assert_null(strstr(line, "100.00%"));
	assert_non_null(strstr(line, "none: each failure loses the whole run so far"));
	snprintf(want, sizeof(want), "fails every %.1f h on average", 25000.0 / 1024);
	assert_non_null(strstr(line, want));
	assert_non_null(strstr(line, "checkpointing every "));
	/* A declared interval: what it loses beside the optimum. */
	job(&r, 1024, "1h");
	engine_check(s->cat, s->pol, &r, &res);
	ckpt_describe(&res.checkpoint, line, sizeof(line));
	assert_true(strncmp(line, "every 1h loses ", 15) == 0);
	assert_non_null(strstr(line, "; the optimum every "));
	/* None declared: the optimum stands for the interval, as before. */
	job(&r, 64, NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_true(res.checkpoint.interval_s == res.checkpoint.optimal_s);
	ckpt_describe(&res.checkpoint, line, sizeof(line));
	assert_true(strncmp(line, "every ", 6) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_daly_published),
		cmocka_unit_test(test_young),
		cmocka_unit_test(test_exact_optimum),
		cmocka_unit_test(test_waste),
		cmocka_unit_test(test_compute),
		cmocka_unit_test(test_engine_figures),
		cmocka_unit_test(test_engine_verdicts),
		cmocka_unit_test(test_describe),
	};

	return cmocka_run_group_tests(tests, setup, fixture_teardown);
}
