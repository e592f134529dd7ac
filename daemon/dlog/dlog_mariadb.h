/*
 * dlog_mariadb.h - the decision log in the site's MariaDB/MySQL (issue 13).
 *
 * One handle is one connection.  dlog_spool.c owns the policy (spool,
 * reconnect and backoff, once-a-minute reports; dlog.c the writer thread);
 * this module only speaks SQL: it connects, migrates the versioned schema,
 * writes a batch in one transaction, and reads, prunes and sizes the
 * tables.  Every function returns DLOG_MARIADB_OK or an error code
 * (dlog_mariadb_strerror) with the server's words in err;
 * DLOG_MARIADB_ERR_DOWN means "the server or the connection is gone, try
 * again later": the caller spools and reconnects.
 */
#ifndef ADVISOR_DLOG_MARIADB_H
#define ADVISOR_DLOG_MARIADB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "advconf.h"
#include "dlog_rec.h"

/* The schema this daemon writes; a database at a higher version is refused. */
/* 2: issue 21, what the user saw (script, findings, sources).
 * 3: issue 30, the exemption that let a job through unchecked (exempt). */
#define DLOG_MARIADB_SCHEMA 3

enum dlog_mariadb_err {
	DLOG_MARIADB_OK = 0,
	DLOG_MARIADB_ERR_DOWN,         /* unreachable or connection lost: retry later */
	DLOG_MARIADB_ERR_ACCESS,       /* refused: user, password, grants or database */
	DLOG_MARIADB_ERR_SCHEMA,       /* the database's schema is newer than this daemon's */
	DLOG_MARIADB_ERR_QUERY,        /* the server refused a statement */
	DLOG_MARIADB_ERR_NOMEM,
	DLOG_MARIADB_ERR_COUNT         /* sizes dlog_mariadb_strerror's table; no error */
};

struct dlog_mariadb;

/*
 * A repeat count for an aggregated decision (dlog_aggregate), applied at
 * most once: op names this increment uniquely (writer run and batch), and
 * the server remembers the ops it applied, so a batch replayed after a
 * commit whose answer was lost does not count twice.
 */
struct dlog_mariadb_repeat {
	char id[DLOG_ID_MAX];
	char host[64];
	char op[128];
	uint64_t n;
	int64_t time;
};

/* Once per process, before any thread uses the library (mysql_library_init). */
int dlog_mariadb_init(void);
void dlog_mariadb_end(void);
/*
 * Connects with conf's storage keys; with migrate, brings the schema to
 * DLOG_MARIADB_SCHEMA (serialized between daemons by a named lock).
 */
int dlog_mariadb_connect(const struct advconf *conf, bool migrate, struct dlog_mariadb **out,
			 char *err, size_t errlen);
void dlog_mariadb_close(struct dlog_mariadb *m);
/* "host:port" or the socket, for messages. */
const char *dlog_mariadb_where(const struct dlog_mariadb *m);
const char *dlog_mariadb_strerror(int code);
/* The schema version the database is at (after connect). */
int dlog_mariadb_schema(struct dlog_mariadb *m);

/*
 * One transaction: every record (INSERT IGNORE into decisions or queries by
 * rec->query; a record whose (id, host) is there already is skipped), then
 * the repeat counts.  On any error it is rolled back and nothing was written
 * (or, when the connection died at COMMIT, everything may have been: the
 * caller writes the batch again and the keys make that harmless).
 */
int dlog_mariadb_write(struct dlog_mariadb *m, const struct dlog_rec *recs, size_t n,
		       const struct dlog_mariadb_repeat *reps, size_t n_reps,
		       char *err, size_t errlen);

/* As dlog_query and dlog_scan (dlog.h), from the central tables. */
int dlog_mariadb_query(struct dlog_mariadb *m, const struct dlog_filter *f,
		       struct dlog_rec **out, size_t *n, char *err, size_t errlen);
int dlog_mariadb_scan(struct dlog_mariadb *m, const struct dlog_filter *f,
		      void (*fn)(const struct dlog_rec *r, void *ctx), void *ctx,
		      char *err, size_t errlen);

/*
 * Deletes up to limit of the oldest rows of table ("decisions", "queries"
 * or "repeat_ops") older than before; *deleted says how many.
 */
int dlog_mariadb_prune(struct dlog_mariadb *m, const char *table, int64_t before, long limit,
		       long *deleted, char *err, size_t errlen);
/*
 * Bytes of the advisor tables (information_schema.TABLES data_length +
 * index_length, as the server last measured them) and the estimated rows
 * of decisions and queries.
 */
int dlog_mariadb_size(struct dlog_mariadb *m, uint64_t *bytes, uint64_t *decision_rows,
		      uint64_t *query_rows, char *err, size_t errlen);
/* Asks the server to measure the tables again (ANALYZE TABLE), after pruning. */
int dlog_mariadb_analyze(struct dlog_mariadb *m, char *err, size_t errlen);

#endif
