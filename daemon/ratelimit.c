/*
 * ratelimit.c - a token bucket per uid, the per-user request budget of
 * advisord (issue 14: one user's shell loop logged 13,845 decisions in
 * 20 s and made `advisorctl report` say what it liked).
 *
 * The classic token bucket (as in the Linux tc TBF qdisc and nginx
 * limit_req): a bucket holds at most `burst` tokens and gains `per_s` a
 * second; a request takes one, and finds the bucket empty only when the user
 * has gone on faster than per_s for longer than burst allows.  Buckets are
 * refilled lazily from the time of the last take, so an idle user costs
 * nothing.  Time comes from the caller (CLOCK_MONOTONIC in the daemon, made
 * up in the unit tests), so the arithmetic is testable to the nanosecond.
 *
 * The caller is the uid SO_PEERCRED gives, never a name a client claims: a
 * uid cannot be forged, so the table only grows with the site's real
 * accounts (an open-addressing hash, doubled at half full; never shrunk).
 * One mutex guards it: a take is a probe and a few floating-point
 * operations, far below the engine's microseconds per check, so the workers
 * do not queue on it.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ratelimit.h"

#define INITIAL_SLOTS 64

struct bucket {
	bool used;
	uint32_t uid;
	double tokens;
	uint64_t last_ns;          /* when tokens was last brought up to date */
	uint64_t over;             /* requests over budget */
};

struct ratelimit {
	pthread_mutex_t lock;
	double per_s;              /* 0 = no limit */
	double burst;
	struct bucket *slot;
	size_t cap, n;
};

ratelimit_t *ratelimit_new(void)
{
	ratelimit_t *rl = calloc(1, sizeof(*rl));

	if (!rl)
		return NULL;
	rl->slot = calloc(INITIAL_SLOTS, sizeof(*rl->slot));
	if (!rl->slot) {
		free(rl);
		return NULL;
	}
	rl->cap = INITIAL_SLOTS;
	rl->burst = 1;
	pthread_mutex_init(&rl->lock, NULL);
	return rl;
}

void ratelimit_free(ratelimit_t *rl)
{
	if (!rl)
		return;
	pthread_mutex_destroy(&rl->lock);
	free(rl->slot);
	free(rl);
}

int ratelimit_configure(ratelimit_t *rl, double per_s, long burst)
{
	if (!isfinite(per_s) || per_s < 0 || burst < 1)
		return RATELIMIT_ERR_VALUE;
	pthread_mutex_lock(&rl->lock);
	rl->per_s = per_s;
	rl->burst = (double)burst;
	for (size_t i = 0; i < rl->cap; i++)
		if (rl->slot[i].used && rl->slot[i].tokens > rl->burst)
			rl->slot[i].tokens = rl->burst;
	pthread_mutex_unlock(&rl->lock);
	return RATELIMIT_OK;
}

/* Knuth's multiplicative hash: uids are small and dense, their low bits alike. */
static size_t slot_of(uint32_t uid, size_t cap)
{
	return (size_t)((uid * 2654435761u) & (uint32_t)(cap - 1));
}

static struct bucket *probe(struct bucket *slot, size_t cap, uint32_t uid)
{
	size_t i = slot_of(uid, cap);

	while (slot[i].used && slot[i].uid != uid)
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

static int grow(ratelimit_t *rl)
{
	size_t cap = rl->cap * 2;
	struct bucket *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t i = 0; i < rl->cap; i++)
		if (rl->slot[i].used)
			*probe(slot, cap, rl->slot[i].uid) = rl->slot[i];
	free(rl->slot);
	rl->slot = slot;
	rl->cap = cap;
	return 0;
}

/* uid's bucket, added full on first sight; NULL out of memory. */
static struct bucket *bucket_of(ratelimit_t *rl, uint32_t uid, uint64_t now_ns)
{
	struct bucket *b = probe(rl->slot, rl->cap, uid);

	if (b->used)
		return b;
	if ((rl->n + 1) * 2 > rl->cap) {
		if (grow(rl) != 0)
			return NULL;
		b = probe(rl->slot, rl->cap, uid);
	}
	b->used = true;
	b->uid = uid;
	b->tokens = rl->burst;
	b->last_ns = now_ns;
	b->over = 0;
	rl->n++;
	return b;
}

int ratelimit_take(ratelimit_t *rl, uint32_t uid, uint64_t now_ns, uint32_t *retry_ms)
{
	struct bucket *b;
	int rc = RATELIMIT_OK;

	if (retry_ms)
		*retry_ms = 0;
	pthread_mutex_lock(&rl->lock);
	if (rl->per_s <= 0) {
		pthread_mutex_unlock(&rl->lock);
		return RATELIMIT_OK;
	}
	b = bucket_of(rl, uid, now_ns);
	if (!b) {
		pthread_mutex_unlock(&rl->lock);
		return RATELIMIT_ERR_NOMEM;
	}
	/* A clock that went back (it cannot: monotonic) must not drain anyone. */
	if (now_ns > b->last_ns) {
		b->tokens += (double)(now_ns - b->last_ns) / 1e9 * rl->per_s;
		if (b->tokens > rl->burst)
			b->tokens = rl->burst;
		b->last_ns = now_ns;
	}
	if (b->tokens >= 1) {
		b->tokens -= 1;
	} else {
		double ms = ceil((1 - b->tokens) / rl->per_s * 1000);

		b->over++;
		rc = RATELIMIT_OVER;
		if (retry_ms)
			*retry_ms = ms < 1 ? 1 : ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
	}
	pthread_mutex_unlock(&rl->lock);
	return rc;
}

bool ratelimit_over(ratelimit_t *rl, uint32_t uid, uint64_t now_ns)
{
	struct bucket *b;
	bool over = false;

	pthread_mutex_lock(&rl->lock);
	if (rl->per_s > 0) {
		b = probe(rl->slot, rl->cap, uid);
		if (b->used) {
			double t = b->tokens;

			if (now_ns > b->last_ns)
				t += (double)(now_ns - b->last_ns) / 1e9 * rl->per_s;
			over = t < 1;
		}
	}
	pthread_mutex_unlock(&rl->lock);
	return over;
}

static int by_uid(const void *a, const void *b)
{
	uint32_t x = ((const struct ratelimit_count *)a)->uid;
	uint32_t y = ((const struct ratelimit_count *)b)->uid;

	return x < y ? -1 : x > y;
}

size_t ratelimit_counts(ratelimit_t *rl, struct ratelimit_count *out, size_t max)
{
	size_t n = 0, k = 0;

	pthread_mutex_lock(&rl->lock);
	for (size_t i = 0; i < rl->cap; i++) {
		if (!rl->slot[i].used || !rl->slot[i].over)
			continue;
		if (k < max) {
			out[k].uid = rl->slot[i].uid;
			out[k].over = rl->slot[i].over;
			k++;
		}
		n++;
	}
	pthread_mutex_unlock(&rl->lock);
	if (k > 1)
		qsort(out, k, sizeof(*out), by_uid);
	return n;
}

static int by_over(const void *a, const void *b)
{
	const struct ratelimit_count *x = a, *y = b;

	if (x->over != y->over)
		return x->over > y->over ? -1 : 1;
	return by_uid(a, b);
}

size_t ratelimit_top(struct ratelimit_count *c, size_t n, size_t top, uint64_t *other)
{
	*other = 0;
	if (n > 1)
		qsort(c, n, sizeof(*c), by_over);
	for (size_t i = top; i < n; i++)
		*other += c[i].over;
	return n < top ? n : top;
}

const char *ratelimit_strerror(int code)
{
	switch (code) {
	case RATELIMIT_OK:
		return "within budget";
	case RATELIMIT_OVER:
		return "over the request budget";
	case RATELIMIT_ERR_VALUE:
		return "requests_per_s must be a finite number >= 0 and burst at least 1";
	case RATELIMIT_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown rate limit error";
	}
}
