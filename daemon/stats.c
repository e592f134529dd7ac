/*
 * stats.c - request counters and latency histograms since start.
 *
 * Everything on the request path is a relaxed atomic increment, so
 * counting costs the workers no lock.  Two latency records are kept:
 * - a log-linear histogram (16 sub-buckets per power of two of
 *   microseconds, like HdrHistogram at 2 significant bits) for the p50/p99
 *   of `advisorctl stats`, within about 6% of the true quantile;
 * - fixed Prometheus buckets (100 us .. 1 s) per kind, exact counts, for
 *   `advisorctl stats --prometheus` (histogram_quantile() needs buckets
 *   that do not move between scrapes).
 * Partition names and finding codes become labels.  They are kept in
 * append-only tables: a reader sees an entry only after its name is
 * written (release/acquire on the count), and a new name takes a mutex
 * only the first time it is seen.  Partition names come from clients: the
 * handler passes only those the policy names, "" and "_other"
 * (service_partition_label, issue 20), and the table is still bounded;
 * names past it share the label "_other".
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "stats.h"
#include "util.h"

#define SUB 16
#define POWERS 32
#define NBUCKETS (POWERS * SUB)
#define LABEL_MAX 64
#define OTHER_LABEL "_other"

const double stats_latency_bounds_s[STATS_LATENCY_BUCKETS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
};

/* Indexed by the kind (handler.c: the body case from check on). */
static const char *const kind_names[] = {
	"check", "plan", "ckpt", "catalog", "policy", "history", "stats", "reload", "status",
	"report",
};
_Static_assert(ADV_ARRAY_SIZE(kind_names) == STATS_KINDS, "a name for each kind");

struct label_entry {
	char name[LABEL_MAX];
	atomic_uint_fast64_t n[STATS_LABEL_N];
};

struct label_table {
	struct label_entry *e;         /* max + 1 entries; the last is "_other" */
	size_t max;
	atomic_size_t used;
	pthread_mutex_t lock;
};

static struct label_entry partition_entries[STATS_MAX_PARTITIONS + 1] = {
	[STATS_MAX_PARTITIONS] = { .name = OTHER_LABEL },
};
static struct label_entry code_entries[STATS_MAX_CODES + 1] = {
	[STATS_MAX_CODES] = { .name = OTHER_LABEL },
};
static struct label_table partitions = {
	partition_entries, STATS_MAX_PARTITIONS, 0, PTHREAD_MUTEX_INITIALIZER
};
static struct label_table codes = {
	code_entries, STATS_MAX_CODES, 0, PTHREAD_MUTEX_INITIALIZER
};

struct latency_counts {
	atomic_uint_fast64_t bucket[STATS_LATENCY_BUCKETS + 1];   /* last: over 1 s */
	atomic_uint_fast64_t sum_ns;
};

static atomic_uint_fast64_t n_requests, n_accept, n_warn, n_reject, n_errors, n_conns;
static atomic_uint_fast64_t by_kind[STATS_KINDS];
static atomic_uint_fast64_t hist[NBUCKETS];
static struct latency_counts latency[STATS_LAT_KINDS];
static time_t started;

void stats_init(void)
{
	started = time(NULL);
}

const char *stats_kind_name(int kind)
{
	return kind >= 0 && kind < STATS_KINDS ? kind_names[kind] : NULL;
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

static void latency_add(struct latency_counts *l, double us)
{
	double s = us / 1e6;
	int b = 0;

	while (b < STATS_LATENCY_BUCKETS && s > stats_latency_bounds_s[b])
		b++;
	atomic_fetch_add_explicit(&l->bucket[b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&l->sum_ns, (uint_fast64_t)(us < 0 ? 0 : us * 1e3),
				  memory_order_relaxed);
}

void stats_request(int kind, int verdict, double latency_us)
{
	atomic_fetch_add_explicit(&n_requests, 1, memory_order_relaxed);
	if (kind >= 0 && kind < STATS_KINDS)
		atomic_fetch_add_explicit(&by_kind[kind], 1, memory_order_relaxed);
	if (verdict == 0)
		atomic_fetch_add_explicit(&n_accept, 1, memory_order_relaxed);
	else if (verdict == 1)
		atomic_fetch_add_explicit(&n_warn, 1, memory_order_relaxed);
	else if (verdict == 2)
		atomic_fetch_add_explicit(&n_reject, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&hist[bucket_of(latency_us)], 1, memory_order_relaxed);
	latency_add(&latency[kind == 0 ? STATS_LAT_CHECK : STATS_LAT_OTHER], latency_us);
}

static struct label_entry *scan(struct label_table *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t->e[i].name, name) == 0)
			return &t->e[i];
	return NULL;
}

/* The entry for name, added on first sight; "_other" when the table is full. */
static struct label_entry *label_get(struct label_table *t, const char *name)
{
	size_t n = atomic_load_explicit(&t->used, memory_order_acquire);
	struct label_entry *e = scan(t, n, name);

	if (e)
		return e;
	pthread_mutex_lock(&t->lock);
	n = atomic_load_explicit(&t->used, memory_order_relaxed);
	e = scan(t, n, name);
	if (!e && n < t->max && strlen(name) < LABEL_MAX) {
		e = &t->e[n];
		adv_strlcpy(e->name, name, LABEL_MAX);
		atomic_store_explicit(&t->used, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&t->lock);
	return e ? e : &t->e[t->max];
}

void stats_check(const char *partition, const struct adv_result *res, bool unenforced)
{
	struct label_entry *p = label_get(&partitions, partition ? partition : "");
	int v = (int)res->verdict;

	if (v >= 0 && v < ADV_VERDICT_COUNT)
		atomic_fetch_add_explicit(&p->n[v], 1, memory_order_relaxed);
	if (unenforced)
		atomic_fetch_add_explicit(&p->n[STATS_UNENFORCED], 1, memory_order_relaxed);
	for (int i = 0; i < res->n_findings; i++) {
		struct label_entry *c = label_get(&codes, res->findings[i].code);
		int s = (int)res->findings[i].severity;

		if (s >= 0 && s < ADV_SEV_COUNT)
			atomic_fetch_add_explicit(&c->n[s], 1, memory_order_relaxed);
	}
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

/* Copies the used entries, then "_other" if anything was counted there. */
static size_t labels_get(struct label_table *t, struct stats_label *out)
{
	size_t n = atomic_load_explicit(&t->used, memory_order_acquire), k = 0;

	for (size_t i = 0; i <= t->max; i++) {
		struct label_entry *e = &t->e[i];
		uint64_t sum = 0;

		if (i >= n && i != t->max)
			continue;
		out[k].name = e->name;
		for (int j = 0; j < STATS_LABEL_N; j++)
			sum += out[k].n[j] = atomic_load_explicit(&e->n[j], memory_order_relaxed);
		if (i < n || sum)
			k++;
	}
	return k;
}

static void latency_get(struct latency_counts *l, struct stats_latency *out)
{
	uint64_t c = 0;

	for (int b = 0; b < STATS_LATENCY_BUCKETS; b++) {
		c += atomic_load_explicit(&l->bucket[b], memory_order_relaxed);
		out->cumulative[b] = c;
	}
	out->count = c + atomic_load_explicit(&l->bucket[STATS_LATENCY_BUCKETS],
					      memory_order_relaxed);
	out->sum_s = (double)atomic_load_explicit(&l->sum_ns, memory_order_relaxed) / 1e9;
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
	for (int k = 0; k < STATS_KINDS; k++)
		v->by_kind[k] = atomic_load_explicit(&by_kind[k], memory_order_relaxed);
	v->n_partitions = labels_get(&partitions, v->partitions);
	v->n_codes = labels_get(&codes, v->codes);
	for (int k = 0; k < STATS_LAT_KINDS; k++)
		latency_get(&latency[k], &v->latency[k]);
}
