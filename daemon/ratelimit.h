/*
 * ratelimit.h - per-uid request budget of advisord: a token bucket per user
 * (policy `limits: { requests_per_s, burst }`, issue 14).
 */
#ifndef ADVISOR_RATELIMIT_H
#define ADVISOR_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ratelimit ratelimit_t;

enum ratelimit_err {
	RATELIMIT_OK = 0,          /* a token was taken: the request is within budget */
	RATELIMIT_OVER,            /* the bucket is empty: over budget */
	RATELIMIT_ERR_VALUE,       /* a rate or burst out of range */
	RATELIMIT_ERR_NOMEM,
};

/* Requests over budget of one uid since the daemon started. */
struct ratelimit_count {
	uint32_t uid;
	uint64_t over;
};

/* A limiter without a limit (rate 0) until ratelimit_configure(); NULL out of memory. */
ratelimit_t *ratelimit_new(void);
void ratelimit_free(ratelimit_t *rl);

/*
 * per_s tokens a second refill every bucket up to burst tokens; per_s 0 =
 * no limit.  Buckets keep what they hold (at most the new burst), so a
 * reload neither forgives nor punishes anyone.  RATELIMIT_ERR_VALUE when
 * per_s < 0 or not finite, or burst < 1.
 */
int ratelimit_configure(ratelimit_t *rl, double per_s, long burst);

/*
 * Takes a token of uid's bucket at now_ns (CLOCK_MONOTONIC nanoseconds);
 * a new uid starts with a full bucket.  RATELIMIT_OK, or RATELIMIT_OVER
 * with *retry_ms (if not NULL) the milliseconds until a token is there
 * again; an over-budget request is counted for uid either way.
 * RATELIMIT_ERR_NOMEM when uid cannot be added: the caller lets it through.
 */
int ratelimit_take(ratelimit_t *rl, uint32_t uid, uint64_t now_ns, uint32_t *retry_ms);

/*
 * Whether uid's bucket is empty at now_ns, without taking from it (a new
 * uid, or no limit: false).  The server asks this of a new connection.
 */
bool ratelimit_over(ratelimit_t *rl, uint32_t uid, uint64_t now_ns);

/*
 * Copies the uids with requests over budget, at most max of them, into
 * out in uid order; returns how many there are in all (more than max: the
 * caller's table is too small, and which ones it got is unspecified).
 */
size_t ratelimit_counts(ratelimit_t *rl, struct ratelimit_count *out, size_t max);

/*
 * Issue 30: the metric advisor_rate_limited_total{user} has one series per
 * user over budget, and a flood from many accounts would grow a scraper's
 * series without bound.  Keeps the top users with the most requests over
 * budget (ties: the lower uid) at the front of c, in that order, and
 * returns how many (at most top); *other gets the sum of the rest (0 when
 * none), reported as one series user="_other".
 */
#define RATELIMIT_METRIC_USERS 10
size_t ratelimit_top(struct ratelimit_count *c, size_t n, size_t top, uint64_t *other);

const char *ratelimit_strerror(int code);

#endif
