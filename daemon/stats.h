/*
 * stats.h - counters and latency of the running daemon (`advisorctl stats`,
 * and its Prometheus exposition `advisorctl stats --prometheus`).
 */
#ifndef ADVISOR_STATS_H
#define ADVISOR_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "engine/engine.h"

/* Request kinds in the order of advisor.proto's Request body (check = 10). */
#define STATS_KINDS 10
/* Distinct partition and code labels kept; more share the label "_other". */
#define STATS_MAX_PARTITIONS 64
#define STATS_MAX_CODES 128
#define STATS_LATENCY_BUCKETS 12

enum stats_latency_kind { STATS_LAT_CHECK = 0, STATS_LAT_OTHER, STATS_LAT_KINDS };

/*
 * n[] by verdict (partitions: enum adv_verdict, then STATS_UNENFORCED, the
 * rejects warn mode let through) or by severity (codes: enum adv_severity).
 */
#define STATS_UNENFORCED ADV_VERDICT_COUNT
#define STATS_LABEL_N (STATS_UNENFORCED + 1)
_Static_assert(ADV_SEV_COUNT <= STATS_LABEL_N, "a count for each severity");
struct stats_label {
	const char *name;              /* lives as long as the daemon */
	uint64_t n[STATS_LABEL_N];
};

struct stats_latency {
	uint64_t cumulative[STATS_LATENCY_BUCKETS];
	uint64_t count;
	double sum_s;
};

struct stats_view {
	uint64_t requests, accept, warn, reject, errors, connections;
	double p50_ms, p99_ms;
	time_t started;
	uint64_t by_kind[STATS_KINDS];
	struct stats_label partitions[STATS_MAX_PARTITIONS + 1];
	size_t n_partitions;
	struct stats_label codes[STATS_MAX_CODES + 1];
	size_t n_codes;
	struct stats_latency latency[STATS_LAT_KINDS];
};

/* Upper bounds of the latency buckets, seconds, ascending. */
extern const double stats_latency_bounds_s[STATS_LATENCY_BUCKETS];

void stats_init(void);
void stats_connection(void);
/*
 * One answered request.  kind is the Request body number minus 10
 * (0 = check, see stats_kind_name); verdict < 0 for requests that are not
 * checks.
 */
void stats_request(int kind, int verdict, double latency_us);
/*
 * One answered check: counts by partition and verdict, findings by code and
 * severity; unenforced = warn mode let through what enforce would reject.
 */
void stats_check(const char *partition, const struct adv_result *res, bool unenforced);
void stats_error(void);
void stats_get(struct stats_view *v);
/* "check", "plan", ... for a kind; NULL out of range. */
const char *stats_kind_name(int kind);

#endif
