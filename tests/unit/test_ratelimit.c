/*
 * test_ratelimit.c - the per-uid token bucket of advisord (daemon/ratelimit.c,
 * issue 14): a full bucket for a new user, burst then refill at the rate,
 * the retry time an over-budget caller is told, users independent of each
 * other, a reload keeping what buckets hold, rate 0 as no limit, and a
 * table that grows past its first size, and the top users the metric
 * keeps (issue 30).  Time is given, not read, so every figure is exact.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ratelimit.h"

#define MS 1000000ull           /* nanoseconds */
#define T0 (1000 * 1000 * MS)   /* an arbitrary start: a monotonic clock is not 0 */

static void test_burst_then_rate(void **st)
{
	ratelimit_t *rl = ratelimit_new();
	uint32_t retry = 99;

	(void)st;
	assert_non_null(rl);
	assert_int_equal(ratelimit_configure(rl, 50, 500), RATELIMIT_OK);
	/* A new user may make burst requests at once... */
	for (int i = 0; i < 500; i++)
		assert_int_equal(ratelimit_take(rl, 1000, T0, &retry), RATELIMIT_OK);
	assert_int_equal(retry, 0);
	/* ...and then waits 1/50 s for the next token. */
	assert_int_equal(ratelimit_take(rl, 1000, T0, &retry), RATELIMIT_OVER);
	assert_int_equal(retry, 20);
	assert_int_equal(ratelimit_take(rl, 1000, T0 + 5 * MS, &retry), RATELIMIT_OVER);
	assert_int_equal(retry, 15);
	assert_int_equal(ratelimit_take(rl, 1000, T0 + 20 * MS, &retry), RATELIMIT_OK);
	assert_int_equal(ratelimit_take(rl, 1000, T0 + 20 * MS, NULL), RATELIMIT_OVER);
	/* One second at 50 a second: 50 requests, not 51. */
	for (int i = 0; i < 50; i++)
		assert_int_equal(ratelimit_take(rl, 1000, T0 + 1020 * MS, NULL), RATELIMIT_OK);
	assert_int_equal(ratelimit_take(rl, 1000, T0 + 1020 * MS, NULL), RATELIMIT_OVER);
	/* An idle minute refills the bucket to burst, no more. */
	for (int i = 0; i < 500; i++)
		assert_int_equal(ratelimit_take(rl, 1000, T0 + 61 * 1000 * MS, NULL), RATELIMIT_OK);
	assert_int_equal(ratelimit_take(rl, 1000, T0 + 61 * 1000 * MS, NULL), RATELIMIT_OVER);
	ratelimit_free(rl);
}

static void test_users_independent_and_counted(void **st)
{
	ratelimit_t *rl = ratelimit_new();
	struct ratelimit_count c[4];

	(void)st;
	assert_int_equal(ratelimit_configure(rl, 1, 2), RATELIMIT_OK);
	for (int i = 0; i < 5; i++)
		ratelimit_take(rl, 2000, T0, NULL);          /* 2 within, 3 over */
	/* Another user is not touched by the first one's flood. */
	assert_int_equal(ratelimit_take(rl, 3000, T0, NULL), RATELIMIT_OK);
	assert_int_equal(ratelimit_take(rl, 3000, T0, NULL), RATELIMIT_OK);
	assert_int_equal(ratelimit_take(rl, 3000, T0, NULL), RATELIMIT_OVER);
	assert_int_equal(ratelimit_take(rl, 4000, T0, NULL), RATELIMIT_OK);
	assert_int_equal(ratelimit_counts(rl, c, 4), 2);
	assert_int_equal(c[0].uid, 2000);
	assert_int_equal(c[0].over, 3);
	assert_int_equal(c[1].uid, 3000);
	assert_int_equal(c[1].over, 1);
	/* A table too small still learns how many there are. */
	assert_int_equal(ratelimit_counts(rl, c, 1), 2);
	ratelimit_free(rl);
}

static void test_reconfigure(void **st)
{
	ratelimit_t *rl = ratelimit_new();
	uint32_t retry;

	(void)st;
	/* No limit until configured, and with rate 0: nothing is counted. */
	for (int i = 0; i < 10000; i++)
		assert_int_equal(ratelimit_take(rl, 5, T0, NULL), RATELIMIT_OK);
	assert_int_equal(ratelimit_configure(rl, 10, 100), RATELIMIT_OK);
	for (int i = 0; i < 100; i++)
		assert_int_equal(ratelimit_take(rl, 6, T0, NULL), RATELIMIT_OK);
	/* A smaller burst caps what a full bucket holds... */
	assert_int_equal(ratelimit_configure(rl, 10, 3), RATELIMIT_OK);
	for (int i = 0; i < 3; i++)
		assert_int_equal(ratelimit_take(rl, 5, T0, NULL), RATELIMIT_OK);
	assert_int_equal(ratelimit_take(rl, 5, T0, NULL), RATELIMIT_OVER);
	/* ...and an empty one stays empty: a reload forgives no one. */
	assert_int_equal(ratelimit_take(rl, 6, T0, &retry), RATELIMIT_OVER);
	assert_int_equal(retry, 100);
	assert_int_equal(ratelimit_configure(rl, 0, 1), RATELIMIT_OK);
	assert_int_equal(ratelimit_take(rl, 6, T0, NULL), RATELIMIT_OK);
	ratelimit_free(rl);
}

static void test_bad_values(void **st)
{
	ratelimit_t *rl = ratelimit_new();

	(void)st;
	assert_int_equal(ratelimit_configure(rl, -1, 10), RATELIMIT_ERR_VALUE);
	assert_int_equal(ratelimit_configure(rl, INFINITY, 10), RATELIMIT_ERR_VALUE);
	assert_int_equal(ratelimit_configure(rl, 5, 0), RATELIMIT_ERR_VALUE);
	assert_string_equal(ratelimit_strerror(RATELIMIT_ERR_VALUE),
			    "requests_per_s must be a finite number >= 0 and burst at least 1");
	assert_string_equal(ratelimit_strerror(RATELIMIT_OVER), "over the request budget");
	assert_string_equal(ratelimit_strerror(42), "unknown rate limit error");
	ratelimit_free(rl);
	ratelimit_free(NULL);
}

/* Fractional rates and a clock that stands still or goes back. */
static void test_slow_rate_and_clock(void **st)
{
	ratelimit_t *rl = ratelimit_new();
	uint32_t retry;

	(void)st;
	assert_int_equal(ratelimit_configure(rl, 0.5, 1), RATELIMIT_OK);
	assert_int_equal(ratelimit_take(rl, 7, T0, NULL), RATELIMIT_OK);
	assert_int_equal(ratelimit_take(rl, 7, T0 + 500 * MS, &retry), RATELIMIT_OVER);
	assert_int_equal(retry, 1500);
	assert_int_equal(ratelimit_take(rl, 7, T0 - 500 * MS, &retry), RATELIMIT_OVER);
	assert_int_equal(retry, 1500);
	assert_int_equal(ratelimit_take(rl, 7, T0 + 2000 * MS, NULL), RATELIMIT_OK);
	ratelimit_free(rl);
}

/* Thousands of users: the table grows and keeps every bucket. */
static void test_many_users(void **st)
{
	ratelimit_t *rl = ratelimit_new();
	static struct ratelimit_count c[5000];

	(void)st;
	assert_int_equal(ratelimit_configure(rl, 1, 1), RATELIMIT_OK);
	for (uint32_t u = 0; u < 5000; u++)
		assert_int_equal(ratelimit_take(rl, u * 7919, T0, NULL), RATELIMIT_OK);
	for (uint32_t u = 0; u < 5000; u++)
		assert_int_equal(ratelimit_take(rl, u * 7919, T0, NULL), RATELIMIT_OVER);
	assert_int_equal(ratelimit_counts(rl, c, 5000), 5000);
	for (size_t i = 0; i < 5000; i++) {
		assert_int_equal(c[i].uid, i * 7919);
		assert_int_equal(c[i].over, 1);
	}
	ratelimit_free(rl);
}

/* Issue 30: the metric keeps the users with the most, the rest summed as one. */
static void test_top_users(void **st)
{
	struct ratelimit_count c[] = {
		{ .uid = 5, .over = 3 }, { .uid = 1, .over = 9 }, { .uid = 4, .over = 3 },
		{ .uid = 2, .over = 1 }, { .uid = 3, .over = 7 },
	};
	uint64_t other = 99;

	(void)st;
	assert_int_equal(ratelimit_top(c, 5, 3, &other), 3);
	assert_int_equal(c[0].uid, 1);
	assert_int_equal(c[1].uid, 3);
	assert_int_equal(c[2].uid, 4);   /* a tie: the lower uid */
	assert_int_equal(other, 3 + 1);
	assert_int_equal(ratelimit_top(c, 2, 3, &other), 2);
	assert_int_equal(other, 0);
	assert_int_equal(ratelimit_top(c, 0, 3, &other), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_rate),
		cmocka_unit_test(test_users_independent_and_counted),
		cmocka_unit_test(test_reconfigure),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_slow_rate_and_clock),
		cmocka_unit_test(test_many_users),
		cmocka_unit_test(test_top_users),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
