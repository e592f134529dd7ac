/*
 * dlog_sqlite.h - the decision log's store in a SQLite file (dlog_sqlite.c):
 * the default store, and the log's columns in SQLite for the spool
 * (dlog_spool.c), which keeps them in the same order.
 */
#ifndef ADVISOR_DLOG_SQLITE_H
#define ADVISOR_DLOG_SQLITE_H

#include <sqlite3.h>
#include <stddef.h>

#include "dlog_rec.h"
#include "dlog_store.h"

/* The columns dlog_sqlite_row_to_rec() reads, in its order. */
#define DLOG_SQLITE_COLUMNS \
	"id, time, uid, user, job_id, context, parent, gpu, gpus, nodes, partition, model," \
	" layout, workload, verdict, codes, mem_gib, ckpt_interval_s, mode, severities," \
	" unenforced, repeat, host, script, findings, sources, exempt"
/* The same without the findings and sources (NULL there): history's list, report. */
#define DLOG_SQLITE_COLUMNS_BRIEF \
	"id, time, uid, user, job_id, context, parent, gpu, gpus, nodes, partition, model," \
	" layout, workload, verdict, codes, mem_gib, ckpt_interval_s, mode, severities," \
	" unenforced, repeat, host, script, NULL, NULL, exempt"
/* How many: a column after them (dlog_query's union, the spool) is the query flag. */
#define DLOG_SQLITE_NCOLS 27

extern const struct dlog_store_ops dlog_sqlite_ops;

/*
 * Opens (creating) the log at path for dlog_sqlite_ops, with env for its
 * reports.  A database that cannot be opened now is not fatal (env->failed,
 * and the writer tries again); -1 with err only when out of memory.
 */
int dlog_sqlite_open(const char *path, const struct dlog_env *env, char *err, size_t errlen);

/*
 * Binds r to parameters 1..27 of an INSERT in the log's column order (id,
 * time, uid, user, job_id, context, parent, gpu, gpus, nodes, partition,
 * model, layout, workload, verdict, verdict_name, codes, mem_gib,
 * ckpt_interval_s, mode, severities, unenforced, repeat, host, script,
 * findings, sources).
 */
void dlog_sqlite_bind_rec(sqlite3_stmt *st, const struct dlog_rec *r);
/*
 * Adds to table the columns added to the log since its first release that
 * it lacks (ALTER TABLE ADD COLUMN; the rows it holds read NULL there):
 * the log's tables, and the spool's.  0, or -1.
 */
int dlog_sqlite_add_columns(sqlite3 *db, const char *table);
/*
 * Creates the file at path 0640 when it does not exist, whatever the umask,
 * and takes the bits for others from it (and its -wal and -shm) when it
 * is the daemon's and has them, saying so in the daemon log: the log and
 * the spool hold every user's decisions.  Called before sqlite3_open_v2.
 */
void dlog_sqlite_private(const char *path);
/* s, or NULL when s is NULL or empty. */
void dlog_sqlite_bind_text(sqlite3_stmt *st, int i, const char *s);
/*
 * The record of a row whose columns start with DLOG_SQLITE_COLUMNS; a
 * column after them of 1 marks a what-if query (rec->query).
 */
void dlog_sqlite_row_to_rec(sqlite3_stmt *st, struct dlog_rec *r);
/* Column i as a string in dst ("" for NULL), cut to len. */
void dlog_sqlite_col_text(sqlite3_stmt *st, int i, char *dst, size_t len);

#endif
