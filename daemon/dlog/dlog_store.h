/*
 * dlog_store.h - what a store of the decision log implements, and what
 * dlog.c lends it.  Types and shared bounds only.
 *
 * As Slurm's plugins fill an ops table that the core calls (a
 * slurm_*_ops_t of function pointers, one plugin per backend), each store
 * fills a struct dlog_store_ops and dlog.c calls the one advisord.conf
 * asks for: dlog_sqlite_ops (the log in a SQLite file, dlog_sqlite.c) or
 * dlog_spool_ops (the site's MariaDB, always through a local SQLite
 * spool, dlog_spool.c).  The queue, the writer thread, the group commit
 * and the aggregation are dlog.c's and the same for both.
 *
 * Every call but query, scan and bytes comes from the writer thread (and
 * from dlog_open before it starts, dlog_close after it stopped).  A store
 * may run threads of its own (the spool's shipper); write must not wait
 * for a remote server, since answers wait for it (issue 20).  A store
 * reaches the core only through the struct dlog_env it was opened with, so
 * it includes no header of the core's: dlog.c includes the stores'.
 */
#ifndef ADVISOR_DLOG_STORE_H
#define ADVISOR_DLOG_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "dlog_rec.h"

/* Failures are said at most this often, not once per request or batch. */
#define DLOG_REPORT_EVERY_S 60
/* Rows per DELETE, at most, when pruning. */
#define DLOG_PRUNE_CHUNK 10000
#define DLOG_PRUNE_HIGH 0.85         /* of max_mb: pruning starts */
#define DLOG_PRUNE_LOW 0.75          /* of max_mb: pruning stops */
#define DLOG_PRUNE_WARN_EVERY_S 3600
#define DLOG_MIB (1024.0 * 1024.0)

/* What dlog.c lends the store it opens. */
struct dlog_env {
	/* This node's name: records carry it already; a store's own keys use it. */
	const char *host;
	/* n more records (or repeats of one) are in the log. */
	void (*logged)(uint64_t n);
	/*
	 * Writing failed and lost records are not in the log: they are counted
	 * as dropped and the failure is said, with why, at most once a minute.
	 */
	void (*failed)(const char *why, size_t lost);
	/* A batch is in the log again: said once, after failures. */
	void (*recovered)(void);
};

struct dlog_store_ops {
	/* The log's name in messages: its file, or "MariaDB advisor on db1:3306". */
	const char *(*where)(void);
	/*
	 * One batch: the records (rec->query: the queries table), then the
	 * repeat counts, in one transaction; what it cannot write goes to
	 * env->failed, what it wrote to env->logged.
	 */
	void (*write)(const struct dlog_rec *recs, size_t n, const struct dlog_repeat *reps,
		      size_t n_reps);
	/*
	 * After every batch: the size for dlog_bytes, and pruning oldest first
	 * above max_mb (0 = no bound), decisions only when older than days.
	 */
	void (*enforce_size)(int max_mb, int days);
	/*
	 * Hourly, and when the retention changes (the spool store: asks its
	 * shipper to, and returns): decisions older than days
	 * (0 = kept for ever), what-if queries older than DLOG_QUERY_DAYS.
	 */
	void (*prune)(int days);
	/* Bytes of the log, for stats (any thread). */
	uint64_t (*bytes)(void);
	/* dlog_query and dlog_scan (dlog.h), after dlog.c waited for the batch before the call. */
	int (*query)(const struct dlog_filter *f, struct dlog_rec **out, size_t *n, char *err,
		     size_t errlen);
	int (*scan)(const struct dlog_filter *f, void (*fn)(const struct dlog_rec *r, void *ctx),
		    void *ctx, char *err, size_t errlen);
	/*
	 * Issue 27: decision id with its digest (any thread, committed rows
	 * only): 1 found, 0 no such decision, -1 with err when it cannot tell
	 * now.  NULL: this store cannot answer without waiting for a remote
	 * server (the spool's), and dlog_confirm vouches for nothing.
	 */
	int (*lookup)(const char *id, struct dlog_rec *r, char *err, size_t errlen);
	/* After the writer stopped (or its start failed): closes and forgets everything. */
	void (*close)(void);
};

#endif
