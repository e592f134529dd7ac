/*
 * stats.h - counters and latency of the running daemon (`advisorctl stats`).
 */
#ifndef ADVISOR_STATS_H
#define ADVISOR_STATS_H

#include <stdint.h>
#include <time.h>

struct stats_view {
	uint64_t requests, accept, warn, reject, errors, connections;
	double p50_ms, p99_ms;
	time_t started;
};

void stats_init(void);
void stats_connection(void);
/* One answered request; verdict < 0 for requests that are not checks. */
void stats_request(int verdict, double latency_us);
void stats_error(void);
void stats_get(struct stats_view *v);

#endif
