/*
 * dlog.h - the decision log: every decision in SQLite (WAL) at --db.
 *
 * dlog_append() only copies the record into a queue; a writer thread commits
 * queued records in one transaction per batch, as soon as the previous
 * commit returned (group commit).  The server holds a logged decision's
 * answer until its record is committed (dlog_take_mine, dlog_committed,
 * dlog_on_commit; issue 20), so what a client was told survives a kill -9.
 *
 * Issue 14: what-if queries (advisorctl check) go to a table of their own,
 * kept DLOG_QUERY_DAYS; plugin checks of a user over budget are folded by
 * dlog_aggregate() into one record with a repeat count; policy `log: max_mb`
 * bounds the file (dlog_set_limits).
 *
 * Issue 13: the log may live in the site's MariaDB instead
 * (dlog_open_storage with advisord.conf's `storage: type: mariadb`), shared
 * by every advisord of the cluster; each record says which host decided it.
 * The writer is the same; a batch the server cannot take goes to a local
 * SQLite spool and is replayed in order once it is back (dlog_spool.c).
 * Readers (history, report) see the central database: the records of a
 * node still in its spool appear there when they are replayed.
 *
 * The record and the filter are in dlog_rec.h; the stores behind this API
 * (dlog_sqlite.c, dlog_spool.c) fill the ops table of dlog_store.h.
 */
#ifndef ADVISOR_DLOG_H
#define ADVISOR_DLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dlog_rec.h"

struct advconf;

/* Over budget, identical plugin checks of a uid within this many seconds are one record. */
#define DLOG_AGG_WINDOW_S 10

/* Opens (creating) the database and starts the writer.  -1 with err on failure. */
int dlog_open(const char *path, char *err, size_t errlen);
/*
 * The log advisord.conf asks for: conf NULL or storage sqlite, dlog_open()
 * of conf->path or else db_path; storage mariadb, the central database
 * (schema migrated now) with the spool conf->spool, or db_path with
 * ".spool" appended.  A server that is down is not fatal (records are
 * spooled until it is back); a refused login, a missing database, a schema
 * newer than this daemon's or a spool that cannot be opened are.
 */
int dlog_open_storage(const struct advconf *conf, const char *db_path, char *err,
		      size_t errlen);
/*
 * Where the log is kept, for `advisorctl status`: the SQLite file, or
 * "MariaDB DB on HOST:PORT" with *spool its local spool file (*spool NULL
 * for SQLite).
 */
const char *dlog_where(const char **spool);
/* The host name records are made with: $ADVISOR_HOSTNAME (tests), else gethostname(). */
const char *dlog_host(void);
/* Commits everything queued, stops the writer, closes the database. */
void dlog_close(void);
/* Fills rec->id with a fresh decision id ("d-<time hex>-<pid hex>-<counter>"; the
 * counter starts at a random point, so a restart with the same pid does not repeat ids). */
void dlog_new_id(char *id, size_t len);
/* Queues a copy of rec (rec->query: into the queries table). */
void dlog_append(const struct dlog_rec *rec);
/*
 * The sequence number of the last record (or repeat count) the calling
 * thread queued since its last call, 0 none: its answer may be sent once
 * dlog_committed() reaches it.  Records are committed in sequence order.
 */
uint64_t dlog_take_mine(void);
/*
 * Issue 27, group commit led by a worker: commits what is queued now, on
 * the calling thread, unless a commit is running or nothing is queued
 * (false).  The server's workers call it when their answers wait, once
 * dlog_set_leaders(true) stopped the writer thread being woken for each
 * record; the writer still commits what a leader leaves, prunes and looks
 * at the disk.
 */
bool dlog_lead(void);
void dlog_set_leaders(bool on);
/* Records up to this sequence number are committed (or were counted as lost). */
uint64_t dlog_committed(void);
/*
 * fn(seq) after every commit, from the writer thread with the log's lock
 * held: it must only wake someone (write an eventfd).  NULL: none; once
 * dlog_on_commit(NULL) returns, fn is not running and will not be called.
 */
void dlog_on_commit(void (*fn)(uint64_t seq));
/*
 * A plugin check of a user over budget: when a record with the same uid and
 * the same content (every field but id, time and the figures derived from
 * the request) was made within DLOG_AGG_WINDOW_S, its repeat count grows and
 * rec->id becomes its id; otherwise rec is queued as a new record.  After
 * DLOG_AGG_DISTINCT distinct records of one uid in a window, the content
 * compared is only what `report` counts (context, partition, verdict, mode,
 * findings), so a flood of varied checks cannot grow the log either.
 * Returns true when rec was folded into an earlier record.  open = false
 * (a check within budget): rec only joins a row that is still open for its
 * exact content, else it is queued as a new record: a flooder's checks
 * that find a token between the refused ones do not make a row each.
 */
bool dlog_aggregate(struct dlog_rec *rec, bool open);
#define DLOG_AGG_DISTINCT 64
/* Retention in days from the policy (0 = keep forever); pruned in the background. */
void dlog_set_retention(int days);
/*
 * Bounds from the policy's `log:` section.  max_mb (0 = none) is a hard
 * bound (issue 27): above 85% of it rows are pruned down to 75%: the
 * what-if queries of the user with the most, then the other queries, then
 * decisions older than the retention, then the decisions of the user with
 * the most, oldest first.  user_rows_per_min: new rows one user's checks
 * may make in a minute; beyond, a decision folds into one row per user and
 * verdict per DLOG_AGG_WINDOW_S, a what-if query is not logged.
 * reserve_mb: while the log's file system has less free space, a user over
 * the share is not logged at all.  Checks not logged are counted (shed).
 */
void dlog_set_limits(int max_mb, int user_rows_per_min, int reserve_mb);
/* Bytes of the log on disk (database and WAL), now; MariaDB: its tables, as last measured. */
uint64_t dlog_bytes(void);
/*
 * Newest first; *out is malloc'ed (free()).  Waits for the writer to commit
 * what was queued before the call, so a decision just made is found.
 * 0, -1 with err, or DLOG_ERR_UNAVAILABLE: the log's server is down (err
 * says its error and how many records wait in this node's spool; dlog_rec.h).
 */
int dlog_query(const struct dlog_filter *f, struct dlog_rec **out, size_t *n,
	       char *err, size_t errlen);
/*
 * Whether a node check may go by decision id (issue 27): the job's
 * environment names it, and the job's user controls that.  YES only when
 * the decision is in this log, was made for uid, is not a reject, was made
 * from the same text (digest, jobdigest.h), and was used by no other job:
 * a submission is bound to the first job that confirms it (its job_id
 * set, committed before this returns), and a node check's decision
 * already has its job.  A submission made without the job's text
 * (NO_DIGEST) is bound the same way, for history --job (issue 30), though
 * it vouches for nothing.  *parent: the decision as read (zeroed when not
 * found).  Only the SQLite log answers: under MariaDB a node check would
 * wait for the server, so nothing is vouched for (CANNOT_TELL) and the
 * node judges the job's text itself.
 */
enum dlog_confirm_rc {
	DLOG_CONFIRM_YES = 0,
	DLOG_CONFIRM_NOT_FOUND,     /* no such decision of uid (another user's is "not found") */
	DLOG_CONFIRM_REJECTED,      /* a reject cannot vouch for a job that runs */
	DLOG_CONFIRM_NO_DIGEST,     /* made without the job's whole text (none, SCRIPT_TRUNCATED,
				     * or an older advisord) */
	DLOG_CONFIRM_OTHER_TEXT,    /* made for another script or command */
	DLOG_CONFIRM_OTHER_JOB,     /* used by another job (or this check names no job) */
	DLOG_CONFIRM_CANNOT_TELL,   /* the store cannot answer now */
	DLOG_CONFIRM_COUNT
};
enum dlog_confirm_rc dlog_confirm(const char *id, uint32_t job_id, uint32_t uid,
				  const char *digest, struct dlog_rec *parent);
/*
 * The same vouching for slurmctld's job_submit (issue 31), where the job
 * has no id yet: YES when the decision would be confirmed and is bound to
 * no job so far.  Nothing is bound: the node check binds it to the job.
 */
enum dlog_confirm_rc dlog_confirm_submission(const char *id, uint32_t uid, const char *digest,
					     struct dlog_rec *parent);
/* What the code says, for PARENT_UNCONFIRMED's message: "is a rejected submission". */
const char *dlog_confirm_why(enum dlog_confirm_rc rc);
/* shed: checks answered and counted, not logged (a user over its share, issue 27). */
void dlog_counters(uint64_t *queued, uint64_t *logged, uint64_t *dropped, uint64_t *shed);
/*
 * Calls fn for every decision matching f (limit ignored), oldest first,
 * without holding them all in memory: the per-code summary of
 * `advisorctl report`.  0, or -1 or DLOG_ERR_UNAVAILABLE with err, as dlog_query.
 */
int dlog_scan(const struct dlog_filter *f, void (*fn)(const struct dlog_rec *r, void *ctx),
	      void *ctx, char *err, size_t errlen);

#endif
