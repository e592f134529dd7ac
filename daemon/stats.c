/*
 * stats.c - request counters and a latency histogram since start.
 *
 * Latencies go into a log-linear histogram (16 sub-buckets per power of two
 * of microseconds, like HdrHistogram at 2 significant bits) so p50/p99 cost a
 * relaxed atomic increment on the hot path and the quantiles are within
 * about 6% of the true value.
 */
#include "config.h"

#include <math.h>
#include <stdatomic.h>

#include "stats.h"

#define SUB 16
#define POWERS 32
#define NBUCKETS (POWERS * SUB)

static atomic_uint_fast64_t n_requests, n_accept, n_warn, n_reject, n_errors, n_conns;
static atomic_uint_fast64_t hist[NBUCKETS];
static time_t started;

void stats_init(void)
{
	started = time(NULL);
}

void stats_connection(void)
{
	atomic_fetch_add_explicit(&n_conns, 1, memory_order_relaxed);
}

/* Bucket b covers [lo(b), lo(b+1)) microseconds. */
static int bucket_of(double us)
{
	int e, s;

	if (us < SUB)
		return us < 0 ? 0 : (int)us;
	e = (int)floor(log2(us)) - 4;      /* us in [16 * 2^e, 32 * 2^e) */
	s = (int)(us / ldexp(1.0, e)) - SUB;
	if (e + 1 >= POWERS)
		return NBUCKETS - 1;
	return (e + 1) * SUB + (s < 0 ? 0 : s >= SUB ? SUB - 1 : s);
}

static double bucket_mid(int b)
{
	int e = b / SUB - 1, s = b % SUB;

	if (b < SUB)
		return b + 0.5;
	return ldexp(SUB + s + 0.5, e);
}

void stats_request(int verdict, double latency_us)
{
	atomic_fetch_add_explicit(&n_requests, 1, memory_order_relaxed);
	if (verdict == 0)
		atomic_fetch_add_explicit(&n_accept, 1, memory_order_relaxed);
	else if (verdict == 1)
		atomic_fetch_add_explicit(&n_warn, 1, memory_order_relaxed);
	else if (verdict == 2)
		atomic_fetch_add_explicit(&n_reject, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&hist[bucket_of(latency_us)], 1, memory_order_relaxed);
}

void stats_error(void)
{
	atomic_fetch_add_explicit(&n_errors, 1, memory_order_relaxed);
}

static double quantile(const uint64_t *h, uint64_t total, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)total), seen = 0;

	if (total == 0)
		return 0;
	for (int b = 0; b < NBUCKETS; b++) {
		seen += h[b];
		if (seen >= want)
			return bucket_mid(b) / 1000.0;
	}
	return bucket_mid(NBUCKETS - 1) / 1000.0;
}

void stats_get(struct stats_view *v)
{
	uint64_t h[NBUCKETS];
	uint64_t total = 0;

	for (int b = 0; b < NBUCKETS; b++) {
		h[b] = atomic_load_explicit(&hist[b], memory_order_relaxed);
		total += h[b];
	}
	v->requests = atomic_load(&n_requests);
	v->accept = atomic_load(&n_accept);
	v->warn = atomic_load(&n_warn);
	v->reject = atomic_load(&n_reject);
	v->errors = atomic_load(&n_errors);
	v->connections = atomic_load(&n_conns);
	v->p50_ms = quantile(h, total, 0.50);
	v->p99_ms = quantile(h, total, 0.99);
	v->started = started;
}
