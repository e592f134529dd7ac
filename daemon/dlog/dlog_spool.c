/*
 * dlog_spool.c - the decision log's store for advisord.conf's `storage:
 * type: mariadb`: the site's MariaDB (dlog_mariadb.c speaks its SQL),
 * always through a local SQLite spool.  dlog.c calls it through
 * dlog_spool_ops from its writer thread, as it calls dlog_sqlite_ops
 * otherwise; a shipper thread of its own moves the spool to the server;
 * the readers (history, report) use a small pool of connections of their
 * own.
 *
 * The cluster's log (issue 13), as slurmdbd keeps accounting: every
 * advisord of the cluster writes there, each record with its host.  The
 * queue, the group commit and the aggregation are dlog.c's, the same as
 * with SQLite.  Spool first (issue 20): the writer commits every batch to
 * the spool (SQLite, WAL: once the commit returns the batch survives a
 * kill -9 of the daemon, as the SQLite log does) and nothing else; the
 * server's I/O never stands between a decision and its durability.  A
 * server that hangs (stopped, not down: every call waits the client's
 * IO_TIMEOUT_S, every reconnect CONNECT_TIMEOUT_S) so holds up only the
 * shipper, never an acknowledged record in memory (measured before this:
 * 17,019 of 24,658 acknowledged decisions lost to a kill -9 while
 * mariadbd was SIGSTOPped).  The shipper, as slurmctld's agent sends the
 * messages of its state file to slurmdbd:
 * - moves the spool's rows to MariaDB oldest first, MARIA_REPLAY_ROWS per
 *   transaction, deleting a chunk from the spool only after MariaDB
 *   committed it.  A crash between the two ships a chunk again that is
 *   already there: records are keyed by (id, host) and inserted with
 *   INSERT IGNORE, repeat counts by an op key applied once, so nothing is
 *   counted twice.  What it holds in memory is one chunk, whatever the
 *   outage; the spool is on disk;
 * - reconnects with exponential backoff (MARIA_BACKOFF_MIN_MS doubling to
 *   MARIA_BACKOFF_MAX_MS) while the server is away;
 * - prunes and measures the central tables (the writer only asks it to);
 * - on SIGTERM ships what the spool holds for at most MARIA_DRAIN_MS if
 *   the server is there; the rest is shipped by the next start.
 * The outage is reported at most once a minute, with how many records
 * wait in the spool, and once more when the server is back.  Readers
 * (history, report) read the central database: they first wait (at most
 * MARIA_READ_WAIT_MS) for the shipper to pass what was spooled before
 * the call, so a decision just made is found; a node's records still in
 * its spool are not visible anywhere until they are shipped.  While the
 * shipper knows the server is down they fail at once, with its error and
 * the records waiting (DLOG_ERR_UNAVAILABLE: advisorctl exits 69), rather
 * than each waiting a connect timeout.
 * Retention and max_mb apply to the central tables (size from
 * information_schema); every advisord prunes, which is harmless.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <unistd.h>

#include "dlog_mariadb.h"
#include "dlog_spool.h"
#include "dlog_sqlite.h"
#include "msg.h"
#include "util.h"

#define MARIA_BACKOFF_MIN_MS 250      /* first retry after an outage began */
#define MARIA_BACKOFF_MAX_MS 10000    /* retries at least this often while it lasts */
#define MARIA_REPLAY_ROWS 1000        /* spooled rows per MariaDB transaction */
#define MARIA_SHIP_SLICE_MS 1000      /* then the shipper looks at pruning and size */
#define MARIA_DRAIN_MS 5000           /* SIGTERM: shipping what the spool holds, at most */
#define MARIA_READ_WAIT_MS 2000       /* a reader waits for the shipper at most this long */
#define MARIA_SPOOL_BUSY_MS 10000     /* the writer and the shipper share the spool file */
#define MARIA_SIZE_EVERY_S 10         /* information_schema is an estimate: not every batch */
#define MARIA_READERS_IDLE 4          /* reader connections kept for history and report */
#define MARIA_OP_KEEP_DAYS 30         /* repeat op keys outlive any plausible replay */

/*
 * The spool: the log's columns in the order dlog_sqlite_bind_rec binds them,
 * what each row is, oldest first.
 */
static const char spool_schema_sql[] =
	"CREATE TABLE IF NOT EXISTS spool (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" id TEXT NOT NULL, time INTEGER, uid INTEGER, user TEXT, job_id INTEGER, context TEXT,"
	" parent TEXT, gpu TEXT, gpus INTEGER, nodes INTEGER, partition TEXT, model TEXT,"
	" layout TEXT, workload TEXT, verdict INTEGER, verdict_name TEXT, codes TEXT,"
	" mem_gib REAL, ckpt_interval_s REAL, mode INTEGER, severities TEXT, unenforced TEXT,"
	" repeat INTEGER, host TEXT, script TEXT, findings TEXT, sources TEXT, exempt TEXT,"
	" kind INTEGER NOT NULL,"     /* SPOOL_DECISION, SPOOL_QUERY, SPOOL_REPEAT */
	" op TEXT, n INTEGER)";        /* SPOOL_REPEAT: the op key and the count */
static const char spool_insert_sql[] =
	"INSERT INTO spool (id, time, uid, user, job_id, context, parent, gpu, gpus, nodes,"
	" partition, model, layout, workload, verdict, verdict_name, codes, mem_gib,"
	" ckpt_interval_s, mode, severities, unenforced, repeat, host, script, findings, sources,"
	" exempt, kind, op, n)"
	" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
/* Parameters after dlog_sqlite_bind_rec's 28. */
enum { SPOOL_P_KIND = 29, SPOOL_P_OP, SPOOL_P_N };
/* dlog_sqlite_row_to_rec's columns, then the query flag, seq, kind, op, n. */
static const char spool_peek_sql[] =
	"SELECT " DLOG_SQLITE_COLUMNS ", kind = 1, seq, kind, op, n FROM spool ORDER BY seq"
	" LIMIT ?";
enum { SPOOL_DECISION = 0, SPOOL_QUERY = 1, SPOOL_REPEAT = 2 };
enum { SPOOL_C_SEQ = DLOG_SQLITE_NCOLS + 1, SPOOL_C_KIND, SPOOL_C_OP, SPOOL_C_N };

static struct {
	bool on;                       /* storage: mariadb */
	const struct dlog_env *env;
	char *path;                    /* the log's name in messages: "MariaDB advisor on db1:3306" */
	struct advconf conf;           /* kept for reconnects (holds the password) */
	char *spool_path;
	sqlite3 *spool;                /* the writer's connection: it appends */
	sqlite3_stmt *spool_ins;
	sqlite3 *ship;                 /* the shipper's: it reads and deletes */
	sqlite3_stmt *spool_peek, *spool_del;
	/* The shipper's (only the shipper thread touches these after open). */
	struct dlog_mariadb *w;        /* NULL while the server is down */
	int64_t next_try_ms, backoff_ms;
	bool down, was_down;           /* was_down: the spool holds an outage's rows */
	time_t down_since, last_report;
	uint64_t boot, batch_no;       /* repeat op keys: this run, this batch */
	time_t next_size;
	time_t prune_warned, size_stuck_until;
	/* The shipper thread and what wakes it. */
	pthread_t shipper;
	bool shipper_on;
	pthread_mutex_t slock;
	pthread_cond_t swake;          /* shipper: rows spooled, work asked for, or stop */
	pthread_cond_t sdone;          /* readers: rows shipped */
	bool stop;                     /* under slock */
	int64_t pushed_seq;            /* under slock: the spool's last row committed */
	int64_t shipped_seq;           /* under slock: rows up to this one are in MariaDB */
	atomic_bool prune_asked;
	atomic_int prune_days, max_mb, ret_days;
	/* Read by other threads. */
	atomic_uint_fast64_t spooled;  /* rows in the spool */
	atomic_uint_fast64_t bytes;    /* the tables' size, last measured */
	pthread_mutex_t rlock;         /* the idle reader connections, and what follows */
	struct dlog_mariadb *idle[MARIA_READERS_IDLE];
	size_t n_idle;
	/* The writer's last word on the server, for the readers: while it is
	 * down they answer at once with its error (issue 21), instead of each
	 * waiting a connect timeout on a server the writer already knows is
	 * gone; the shipper retries every MARIA_BACKOFF_MAX_MS at most. */
	bool readers_down;
	time_t readers_down_since;
	char readers_why[256];
} M = {
	.rlock = PTHREAD_MUTEX_INITIALIZER,
	.slock = PTHREAD_MUTEX_INITIALIZER,
	.swake = PTHREAD_COND_INITIALIZER,
	.sdone = PTHREAD_COND_INITIALIZER,
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the spool (SQLite, WAL: survives the daemon's death as the log does) */

static void spool_close(void)
{
	sqlite3_finalize(M.spool_ins);
	sqlite3_finalize(M.spool_peek);
	sqlite3_finalize(M.spool_del);
	M.spool_ins = M.spool_peek = M.spool_del = NULL;
	sqlite3_close(M.spool);
	sqlite3_close(M.ship);
	M.spool = M.ship = NULL;
}

/* One connection to the spool; both wait for each other's short transactions. */
static int spool_connect(sqlite3 **db)
{
	int rc = sqlite3_open_v2(M.spool_path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				 SQLITE_OPEN_NOMUTEX, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_busy_timeout(*db, MARIA_SPOOL_BUSY_MS);
	/* WAL, synchronous NORMAL: a commit is in the OS once it returns (kill -9 safe). */
	return sqlite3_exec(*db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL,
			    NULL);
}

static int spool_open(char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc;

	dlog_sqlite_private(M.spool_path);
	rc = spool_connect(&M.spool);
	if (rc != SQLITE_OK ||
	    sqlite3_exec(M.spool, spool_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    /* A spool left by an older daemon gains the columns of issue 21. */
	    dlog_sqlite_add_columns(M.spool, "spool") != 0 ||
	    sqlite3_prepare_v2(M.spool, spool_insert_sql, -1, &M.spool_ins, NULL) != SQLITE_OK ||
	    (rc = spool_connect(&M.ship)) != SQLITE_OK ||
	    sqlite3_prepare_v2(M.ship, spool_peek_sql, -1, &M.spool_peek, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(M.ship, "DELETE FROM spool WHERE seq <= ?", -1, &M.spool_del,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(M.spool, "SELECT count(*), coalesce(max(seq), 0) FROM spool", -1,
			       &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		sqlite3 *db = M.ship ? M.ship : M.spool;

		adv_snprintf(err, errlen, "spool %s: %s", M.spool_path,
			     db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_finalize(st);
		spool_close();
		return -1;
	}
	atomic_store(&M.spooled, (uint64_t)sqlite3_column_int64(st, 0));
	M.pushed_seq = sqlite3_column_int64(st, 1);
	M.shipped_seq = 0;
	M.was_down = atomic_load(&M.spooled) > 0;
	sqlite3_finalize(st);
	if (sqlite3_db_readonly(M.spool, "main") == 1) {
		adv_snprintf(err, errlen, "spool %s: the file or its directory is read-only",
			     M.spool_path);
		spool_close();
		return -1;
	}
	return 0;
}

/* Appends a batch behind what the spool holds, in one transaction. */
static int spool_push(const struct dlog_rec *recs, size_t n, const struct dlog_mariadb_repeat *reps,
		      size_t n_reps, char *why, size_t whylen)
{
	sqlite3_stmt *st = M.spool_ins;
	int rc = SQLITE_DONE;

	if (!M.spool) {
		adv_snprintf(why, whylen, "spool %s is not open", M.spool_path);
		return -1;
	}
	if (sqlite3_exec(M.spool, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < n && rc == SQLITE_DONE; i++) {
		sqlite3_clear_bindings(st);
		dlog_sqlite_bind_rec(st, &recs[i]);
		sqlite3_bind_int(st, SPOOL_P_KIND, recs[i].query ? SPOOL_QUERY : SPOOL_DECISION);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
	}
	for (size_t i = 0; i < n_reps && rc == SQLITE_DONE; i++) {
		sqlite3_clear_bindings(st);
		sqlite3_bind_text(st, 1, reps[i].id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, reps[i].time);
		dlog_sqlite_bind_text(st, 24, reps[i].host);
		sqlite3_bind_int(st, SPOOL_P_KIND, SPOOL_REPEAT);
		sqlite3_bind_text(st, SPOOL_P_OP, reps[i].op, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, SPOOL_P_N, (sqlite3_int64)reps[i].n);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
	}
	if (rc != SQLITE_DONE || sqlite3_exec(M.spool, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	/* Durable from here: the shipper takes it on. */
	pthread_mutex_lock(&M.slock);
	atomic_fetch_add(&M.spooled, n + n_reps);
	M.pushed_seq = sqlite3_last_insert_rowid(M.spool);
	pthread_cond_signal(&M.swake);
	pthread_mutex_unlock(&M.slock);
	return 0;
fail:
	adv_snprintf(why, whylen, "cannot spool to %s: %s", M.spool_path, sqlite3_errmsg(M.spool));
	sqlite3_exec(M.spool, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

/*
 * The oldest rows of the spool, at most max, split into records and repeat
 * counts (order within each kept); *last is the seq of the last one.
 */
static int spool_peek(size_t max, struct dlog_rec *recs, size_t *n,
		      struct dlog_mariadb_repeat *reps, size_t *n_reps, int64_t *last)
{
	sqlite3_stmt *st = M.spool_peek;
	int rc;

	*n = *n_reps = 0;
	*last = 0;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*last = sqlite3_column_int64(st, SPOOL_C_SEQ);
		if (sqlite3_column_int(st, SPOOL_C_KIND) == SPOOL_REPEAT) {
			struct dlog_mariadb_repeat *p = &reps[(*n_reps)++];
			const unsigned char *op = sqlite3_column_text(st, SPOOL_C_OP);

			memset(p, 0, sizeof(*p));
			dlog_sqlite_col_text(st, 0, p->id, sizeof(p->id));
			dlog_sqlite_col_text(st, 22, p->host, sizeof(p->host));
			adv_strlcpy(p->op, op ? (const char *)op : "", sizeof(p->op));
			p->time = sqlite3_column_int64(st, 1);
			p->n = (uint64_t)sqlite3_column_int64(st, SPOOL_C_N);
		} else {
			dlog_sqlite_row_to_rec(st, &recs[(*n)++]);
		}
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int spool_drop(int64_t upto, char *why, size_t whylen)
{
	int rc;

	sqlite3_bind_int64(M.spool_del, 1, upto);
	rc = sqlite3_step(M.spool_del);
	sqlite3_reset(M.spool_del);
	if (rc != SQLITE_DONE) {
		adv_snprintf(why, whylen, "spool %s: %s", M.spool_path, sqlite3_errmsg(M.ship));
		return -1;
	}
	atomic_fetch_sub(&M.spooled, (uint64_t)sqlite3_changes(M.ship));
	pthread_mutex_lock(&M.slock);
	M.shipped_seq = upto;
	pthread_cond_broadcast(&M.sdone);
	pthread_mutex_unlock(&M.slock);
	return 0;
}

/* ---- the server's comings and goings (shipper thread) */

static void maria_down(const char *why)
{
	time_t now = time(NULL);

	dlog_mariadb_close(M.w);
	M.w = NULL;
	M.backoff_ms = M.backoff_ms ? M.backoff_ms * 2 : MARIA_BACKOFF_MIN_MS;
	if (M.backoff_ms > MARIA_BACKOFF_MAX_MS)
		M.backoff_ms = MARIA_BACKOFF_MAX_MS;
	M.next_try_ms = mono_ms() + M.backoff_ms;
	if (!M.down) {
		M.down = true;
		M.was_down = true;
		M.down_since = now;
		M.last_report = 0;
	}
	pthread_mutex_lock(&M.rlock);
	M.readers_down = true;
	M.readers_down_since = M.down_since;
	adv_strlcpy(M.readers_why, why, sizeof(M.readers_why));
	pthread_mutex_unlock(&M.rlock);
	/* Readers waiting for the shipper: it will not get there soon. */
	pthread_mutex_lock(&M.slock);
	pthread_cond_broadcast(&M.sdone);
	pthread_mutex_unlock(&M.slock);
	/* Once a minute, not per batch: an outage must not flood the journal too. */
	if (now < M.last_report + DLOG_REPORT_EVERY_S)
		return;
	msg_log(LOG_ERR, "decision log %s: %s; decisions are still answered and kept in the "
		"spool %s (%" PRIu64 " records waiting), retrying every %d s at most (said at "
		"most once a minute)", M.path, why, M.spool_path,
		(uint64_t)atomic_load(&M.spooled), MARIA_BACKOFF_MAX_MS / 1000);
	M.last_report = now;
}

static void maria_up(void)
{
	M.backoff_ms = 0;
	if (!M.down)
		return;
	pthread_mutex_lock(&M.rlock);
	M.readers_down = false;
	pthread_mutex_unlock(&M.rlock);
	msg_log(LOG_WARNING, "decision log %s: reachable again after %lld s; replaying the %"
		PRIu64 " records of the spool %s", M.path, (long long)(time(NULL) - M.down_since),
		(uint64_t)atomic_load(&M.spooled), M.spool_path);
	M.down = false;
}

/* A connection for the writer: the open one, or a new one when the backoff allows. */
static bool maria_ready(void)
{
	char why[512];

	if (M.w)
		return true;
	if (mono_ms() < M.next_try_ms)
		return false;
	if (dlog_mariadb_connect(&M.conf, true, &M.w, why, sizeof(why)) != DLOG_MARIADB_OK) {
		maria_down(why);
		return false;
	}
	maria_up();
	return true;
}

static uint64_t reps_total(const struct dlog_mariadb_repeat *reps, size_t n_reps)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n_reps; i++)
		t += reps[i].n;
	return t;
}

/*
 * A batch (writer thread): behind what the spool holds, in one SQLite
 * transaction; the shipper takes it to MariaDB.  The server is not
 * touched here, so a hung one cannot keep a batch in memory.
 */
static void maria_batch(const struct dlog_rec *recs, size_t n, const struct dlog_repeat *pend,
			size_t n_pend)
{
	struct dlog_mariadb_repeat *reps = NULL;
	char spool_why[512];
	uint64_t total = n;

	M.batch_no++;
	if (n_pend && !(reps = calloc(n_pend, sizeof(*reps)))) {
		M.env->failed("out of memory", n);
		return;
	}
	for (size_t i = 0; i < n_pend; i++) {
		adv_strlcpy(reps[i].id, pend[i].id, sizeof(reps[i].id));
		adv_strlcpy(reps[i].host, M.env->host, sizeof(reps[i].host));
		/* Unique per daemon run, batch and row: applied once however often shipped. */
		adv_snprintf(reps[i].op, sizeof(reps[i].op), "%.60s/%016" PRIx64 ".%" PRIu64 ".%zu",
			     M.env->host, M.boot, M.batch_no, i);
		reps[i].n = pend[i].n;
		reps[i].time = (int64_t)time(NULL);
		total += pend[i].n;
	}
	if (spool_push(recs, n, reps, n_pend, spool_why, sizeof(spool_why)) == 0)
		M.env->recovered();
	else
		M.env->failed(spool_why, total);
	free(reps);
}

/* The spool could not be read or emptied: said once a minute at most (shipper thread). */
static void ship_failed(const char *why)
{
	static time_t last;
	time_t now = time(NULL);

	if (now < last + DLOG_REPORT_EVERY_S)
		return;
	msg_log(LOG_ERR, "decision log %s: %s (said at most once a minute)", M.path, why);
	last = now;
}

/*
 * Ships the spool oldest first until it is empty, the server fails, stop
 * is asked or the time is up (until, in ms of mono_ms, when > 0; else
 * MARIA_SHIP_SLICE_MS, so pruning is not starved); each chunk leaves the
 * spool only once MariaDB committed it.  0 empty, 1 time up, -1 failed.
 */
static int ship_some(int64_t until)
{
	struct dlog_rec *recs = NULL;
	struct dlog_mariadb_repeat *reps = NULL;
	int64_t last, end = until > 0 ? until : mono_ms() + MARIA_SHIP_SLICE_MS;
	char why[512];
	size_t n, n_reps;
	int rc = -1;

	if (!maria_ready())
		return -1;
	recs = malloc(MARIA_REPLAY_ROWS * sizeof(*recs));
	reps = malloc(MARIA_REPLAY_ROWS * sizeof(*reps));
	if (!recs || !reps)
		goto out;
	for (;;) {
		int64_t pushed;
		bool stop;

		/* Read before the peek: what was committed by then is in what it sees. */
		pthread_mutex_lock(&M.slock);
		stop = M.stop;
		pushed = M.pushed_seq;
		pthread_mutex_unlock(&M.slock);
		if (stop && until == 0)
			break;
		if (mono_ms() >= end) {
			rc = 1;
			break;
		}
		if (spool_peek(MARIA_REPLAY_ROWS, recs, &n, reps, &n_reps, &last) != 0) {
			ship_failed("cannot read the spool");
			break;
		}
		if (n + n_reps == 0) {
			/* Everything spooled so far is in MariaDB. */
			pthread_mutex_lock(&M.slock);
			if (M.shipped_seq < pushed)
				M.shipped_seq = pushed;
			/* The count was off (it cannot be, but a spin would be worse): nothing new came. */
			if (M.pushed_seq == pushed)
				atomic_store(&M.spooled, 0);
			pthread_cond_broadcast(&M.sdone);
			pthread_mutex_unlock(&M.slock);
			rc = 0;
			break;
		}
		if (dlog_mariadb_write(M.w, recs, n, reps, n_reps, why, sizeof(why)) != 0) {
			maria_down(why);
			break;
		}
		/*
		 * Committed: only now out of the spool.  Should this fail (or the
		 * daemon die first), the chunk is shipped again later, and the
		 * server's keys take it as already there.
		 */
		if (spool_drop(last, why, sizeof(why)) != 0) {
			ship_failed(why);
			break;
		}
		M.env->logged(n + reps_total(reps, n_reps));
	}
	/* After an outage (or rows left by an earlier run), once: everything is shipped. */
	if (rc == 0 && M.was_down) {
		msg_log(LOG_INFO, "decision log %s: the spool is replayed, every record is in the "
			"database", M.path);
		M.was_down = false;
		/* The spool stays small: give its pages back after an outage. */
		sqlite3_exec(M.ship, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	}
out:
	free(recs);
	free(reps);
	return rc;
}

/* Hourly: decisions past retention, queries past DLOG_QUERY_DAYS, old repeat op keys. */
static void maria_prune(int days)
{
	int op_days = days < MARIA_OP_KEEP_DAYS ? MARIA_OP_KEEP_DAYS : days;
	int64_t now = (int64_t)time(NULL);
	long d = 0, q = 0, k;
	char why[512];
	int rc = 0;

	if (!M.on || !maria_ready())
		return;
	if (days > 0)
		while (!(rc = dlog_mariadb_prune(M.w, "decisions", now - (int64_t)days * 86400,
						 DLOG_PRUNE_CHUNK, &k, why, sizeof(why))) && k > 0) {
			d += k;
			if (k < DLOG_PRUNE_CHUNK)
				break;
		}
	while (!rc && !(rc = dlog_mariadb_prune(M.w, "queries", now - DLOG_QUERY_DAYS * 86400,
						DLOG_PRUNE_CHUNK, &k, why, sizeof(why))) && k > 0) {
		q += k;
		if (k < DLOG_PRUNE_CHUNK)
			break;
	}
	if (!rc)
		rc = dlog_mariadb_prune(M.w, "repeat_ops", now - (int64_t)op_days * 86400,
					DLOG_PRUNE_CHUNK * 10, &k, why, sizeof(why));
	if (rc == DLOG_MARIADB_ERR_DOWN)
		maria_down(why);
	else if (rc)
		msg_log(LOG_ERR, "decision log %s: prune: %s", M.path, why);
	if (d)
		msg_log(LOG_INFO, "decision log: pruned %ld decisions older than %d days", d,
			days);
	if (q)
		msg_log(LOG_INFO, "decision log: pruned %ld what-if queries older than %d days", q,
			DLOG_QUERY_DAYS);
}

/*
 * log: max_mb on the server.  information_schema's sizes are the server's
 * estimate, refreshed by its statistics rather than by each DELETE, so the
 * oldest rows are deleted in proportion to the excess (queries first, then
 * decisions older than retention_days), the server is asked to measure
 * again, and the next look is a minute later if that was not enough.
 */
static long chunk_of(uint64_t left)
{
	return left < DLOG_PRUNE_CHUNK ? (long)left : DLOG_PRUNE_CHUNK;
}

static void maria_enforce_size(int mb, int days)
{
	time_t now = time(NULL);
	uint64_t bytes, drows, qrows, want, gone = 0;
	double max = mb * DLOG_MIB, before;
	long q = 0, d = 0, k;
	char why[512];
	int rc;

	if (now < M.next_size || !M.w)
		return;
	M.next_size = now + MARIA_SIZE_EVERY_S;
	if ((rc = dlog_mariadb_size(M.w, &bytes, &drows, &qrows, why, sizeof(why))) != 0) {
		if (rc == DLOG_MARIADB_ERR_DOWN)
			maria_down(why);
		return;
	}
	atomic_store(&M.bytes, bytes);
	if (mb <= 0 || now < M.size_stuck_until || bytes <= DLOG_PRUNE_HIGH * max || !bytes)
		return;
	before = (double)bytes;
	want = (uint64_t)((double)(drows + qrows) * (before - DLOG_PRUNE_LOW * max) / before) + 1;
	while (!rc && gone < want &&
	       !(rc = dlog_mariadb_prune(M.w, "queries", INT64_MAX, chunk_of(want - gone), &k,
					 why, sizeof(why))) && k > 0) {
		q += k;
		gone += (uint64_t)k;
	}
	while (!rc && days > 0 && gone < want &&
	       !(rc = dlog_mariadb_prune(M.w, "decisions", (int64_t)now - (int64_t)days * 86400,
					 chunk_of(want - gone), &k, why, sizeof(why))) && k > 0) {
		d += k;
		gone += (uint64_t)k;
	}
	if (!rc && (rc = dlog_mariadb_analyze(M.w, why, sizeof(why))) == 0 &&
	    (rc = dlog_mariadb_size(M.w, &bytes, &drows, &qrows, why, sizeof(why))) == 0)
		atomic_store(&M.bytes, bytes);
	if (rc == DLOG_MARIADB_ERR_DOWN) {
		maria_down(why);
		return;
	}
	if (rc || bytes > DLOG_PRUNE_LOW * max)
		M.size_stuck_until = now + 60;
	if (now >= M.prune_warned + DLOG_PRUNE_WARN_EVERY_S) {
		msg_log(LOG_WARNING, "decision log %s: %.1f MiB in use is over %.0f%% of log "
			"max_mb %d; pruning oldest first: %ld what-if queries and %ld decisions "
			"older than %d days deleted, %.1f MiB in use now (said at most once an "
			"hour)", M.path, before / DLOG_MIB, DLOG_PRUNE_HIGH * 100, mb, q, d, days,
			(double)bytes / DLOG_MIB);
		M.prune_warned = now;
	}
}

/* ---- the shipper thread */

static void deadline_in(struct timespec *ts, int64_t ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	ts->tv_sec += (time_t)(ms / 1000) + ts->tv_nsec / 1000000000;
	ts->tv_nsec %= 1000000000;
}

/* Under slock: until rows are spooled (and the backoff allows), work is asked, or a second. */
static void shipper_wait(int64_t pause_until)
{
	struct timespec ts;
	int64_t ms = 1000, now = mono_ms();

	if (M.stop || atomic_load(&M.prune_asked))
		return;
	if (atomic_load(&M.spooled) > 0 || M.down) {
		/* Connected: now; else when the backoff allows; after a spool failure, later. */
		int64_t due = M.w ? 0 : M.next_try_ms;

		if (pause_until > due)
			due = pause_until;
		if (due <= now)
			return;
		if (due - now < ms)
			ms = due - now;
	}
	deadline_in(&ts, ms);
	pthread_cond_timedwait(&M.swake, &M.slock, &ts);
}

static void *shipper_main(void *arg)
{
	int64_t pause_until = 0;

	(void)arg;
	for (;;) {
		bool stop;

		pthread_mutex_lock(&M.slock);
		shipper_wait(pause_until);
		stop = M.stop;
		pthread_mutex_unlock(&M.slock);
		if (stop)
			break;
		if (atomic_exchange(&M.prune_asked, false))
			maria_prune(atomic_load(&M.prune_days));
		if (atomic_load(&M.spooled) == 0) {
			/* Known down: readers fail at once until a retry finds it back. */
			if (M.down)
				(void)maria_ready();
		} else if (mono_ms() >= pause_until && (M.w || mono_ms() >= M.next_try_ms) &&
			   ship_some(0) < 0 && M.w) {
			/* The spool itself failed (the server did not): not in a busy loop. */
			pause_until = mono_ms() + 1000;
		}
		maria_enforce_size(atomic_load(&M.max_mb), atomic_load(&M.ret_days));
	}
	/* SIGTERM: the spool to the server while it is there, for a while; else the next start. */
	if (atomic_load(&M.spooled) > 0 && !M.down)
		ship_some(mono_ms() + MARIA_DRAIN_MS);
	return NULL;
}

/* What the writer asks of the shipper (dlog_store.h's prune and enforce_size). */
static void spool_prune(int days)
{
	atomic_store(&M.prune_days, days);
	atomic_store(&M.prune_asked, true);
	pthread_mutex_lock(&M.slock);
	pthread_cond_signal(&M.swake);
	pthread_mutex_unlock(&M.slock);
}

static void spool_enforce_size(int max_mb, int days)
{
	atomic_store(&M.max_mb, max_mb);
	atomic_store(&M.ret_days, days);
}

/*
 * A reader first lets the shipper pass what was spooled before the call
 * (a decision just made is then found), unless the server is known down
 * or MARIA_READ_WAIT_MS passed.
 */
static void wait_shipped(void)
{
	struct timespec ts;
	int64_t want;

	deadline_in(&ts, MARIA_READ_WAIT_MS);
	pthread_mutex_lock(&M.slock);
	want = M.pushed_seq;
	while (M.shipper_on && M.shipped_seq < want && atomic_load(&M.spooled) > 0) {
		bool down;

		pthread_mutex_lock(&M.rlock);
		down = M.readers_down;
		pthread_mutex_unlock(&M.rlock);
		if (down || pthread_cond_timedwait(&M.sdone, &M.slock, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&M.slock);
}

/* ---- readers: history, report (worker threads) */

static struct dlog_mariadb *reader_get(bool *pooled, int *rc, char *err, size_t errlen)
{
	struct dlog_mariadb *m = NULL;

	pthread_mutex_lock(&M.rlock);
	if (M.n_idle)
		m = M.idle[--M.n_idle];
	pthread_mutex_unlock(&M.rlock);
	*pooled = m != NULL;
	*rc = DLOG_MARIADB_OK;
	if (!m)
		*rc = dlog_mariadb_connect(&M.conf, false, &m, err, errlen);
	return m;
}

static void reader_put(struct dlog_mariadb *m)
{
	pthread_mutex_lock(&M.rlock);
	if (M.n_idle < MARIA_READERS_IDLE) {
		M.idle[M.n_idle++] = m;
		m = NULL;
	}
	pthread_mutex_unlock(&M.rlock);
	dlog_mariadb_close(m);
}

struct maria_read {
	const struct dlog_filter *f;
	struct dlog_rec **out;
	size_t *n;
	void (*fn)(const struct dlog_rec *r, void *ctx);
	void *ctx;
};

/*
 * One read on a pooled connection, again on a fresh one when the pooled
 * one had gone stale (the server restarted since it was last used).
 */
static int maria_read(struct maria_read *a, char *err, size_t errlen)
{
	char more[160];
	bool down;

	wait_shipped();
	pthread_mutex_lock(&M.rlock);
	down = M.readers_down;
	if (down) {
		struct tm tm;
		char since[16];

		localtime_r(&M.readers_down_since, &tm);
		strftime(since, sizeof(since), "%H:%M:%S", &tm);
		adv_snprintf(err, errlen, "%s is unreachable since %s: %s", M.path, since,
			     M.readers_why);
	}
	pthread_mutex_unlock(&M.rlock);
	for (int attempt = 0; !down && attempt < 2; attempt++) {
		bool pooled;
		int rc;
		struct dlog_mariadb *m = reader_get(&pooled, &rc, err, errlen);

		if (m)
			rc = a->fn ? dlog_mariadb_scan(m, a->f, a->fn, a->ctx, err, errlen)
				   : dlog_mariadb_query(m, a->f, a->out, a->n, err, errlen);
		if (rc == DLOG_MARIADB_OK) {
			reader_put(m);
			return 0;
		}
		dlog_mariadb_close(m);
		/* A scan may have called fn already: only a failed connect or query is retried. */
		if (rc != DLOG_MARIADB_ERR_DOWN || !pooled || a->fn)
			break;
	}
	/* As the README says: the server's error and the records waiting (0 too). */
	adv_snprintf(more, sizeof(more), "; %" PRIu64 " records of this node wait in its "
		     "spool %s", (uint64_t)atomic_load(&M.spooled), M.spool_path);
	adv_strlcat(err, more, errlen);
	return DLOG_ERR_UNAVAILABLE;
}

int dlog_spool_open(const struct advconf *conf, const char *db_path, const struct dlog_env *env,
		    char *err, size_t errlen)
{
	char why[512], path[4096];
	uint64_t boot;
	int rc;

	M.env = env;
	M.prune_warned = M.size_stuck_until = 0;
	if (!conf->spool[0] && !db_path) {
		adv_snprintf(err, errlen, "decision log: storage mariadb needs a spool file "
			     "(advisord.conf spool:)");
		return -1;
	}
	M.conf = *conf;
	if (conf->spool[0])
		adv_strlcpy(path, conf->spool, sizeof(path));
	else
		adv_snprintf(path, sizeof(path), "%s.spool", db_path);
	M.spool_path = strdup(path);
	if (conf->socket[0])
		adv_snprintf(path, sizeof(path), "MariaDB %s (%s)", conf->database, conf->socket);
	else
		adv_snprintf(path, sizeof(path), "MariaDB %s on %s:%d", conf->database, conf->host,
			     conf->port ? conf->port : 3306);
	M.path = strdup(path);
	if (!M.spool_path || !M.path) {
		adv_snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (getrandom(&boot, sizeof(boot), GRND_NONBLOCK) != (ssize_t)sizeof(boot))
		boot = (uint64_t)time(NULL) << 32 ^ (uint64_t)getpid();
	M.boot = boot;
	M.batch_no = 0;
	M.down = false;
	M.readers_down = false;
	atomic_store(&M.prune_asked, false);
	M.backoff_ms = 0;
	M.next_try_ms = 0;
	M.next_size = 0;
	atomic_store(&M.bytes, 0);
	if (dlog_mariadb_init() != DLOG_MARIADB_OK) {
		adv_snprintf(err, errlen, "cannot initialise libmariadb");
		return -1;
	}
	M.on = true;
	if (spool_open(why, sizeof(why)) != 0) {
		adv_snprintf(err, errlen, "decision log: %s", why);
		return -1;
	}
	switch (dlog_mariadb_connect(&M.conf, true, &M.w, why, sizeof(why))) {
	case DLOG_MARIADB_OK:
		msg_log(LOG_INFO, "decision log %s, schema version %d, spool %s%s", M.path,
			dlog_mariadb_schema(M.w), M.spool_path, atomic_load(&M.spooled)
			? " (records left from before: replaying them)" : "");
		break;
	case DLOG_MARIADB_ERR_DOWN:
		/* Not fatal: the daemon answers and spools until the server is up. */
		maria_down(why);
		break;
	default:
		adv_snprintf(err, errlen, "decision log: %s", why);
		return -1;
	}
	M.stop = false;
	if ((rc = pthread_create(&M.shipper, NULL, shipper_main, NULL)) != 0) {
		adv_snprintf(err, errlen, "cannot start the decision log's shipper: %s",
			     strerror(rc));
		return -1;
	}
	M.shipper_on = true;
	return 0;
}

static void maria_close(void)
{
	if (!M.on)
		return;
	if (M.shipper_on) {
		pthread_mutex_lock(&M.slock);
		M.stop = true;
		pthread_cond_signal(&M.swake);
		pthread_mutex_unlock(&M.slock);
		pthread_join(M.shipper, NULL);
		M.shipper_on = false;
	}
	dlog_mariadb_close(M.w);
	M.w = NULL;
	pthread_mutex_lock(&M.rlock);
	while (M.n_idle)
		dlog_mariadb_close(M.idle[--M.n_idle]);
	pthread_mutex_unlock(&M.rlock);
	spool_close();
	free(M.spool_path);
	M.spool_path = NULL;
	dlog_mariadb_end();
	/* The password lived here for reconnects. */
	memset(&M.conf, 0, sizeof(M.conf));
	M.on = false;
}

/* ---- the store ------------------------------------------------------------------ */

static const char *spool_where(void)
{
	return M.path;
}

const char *dlog_spool_file(void)
{
	return M.spool_path;
}

static uint64_t spool_bytes(void)
{
	return atomic_load(&M.bytes);
}

static int spool_query(const struct dlog_filter *f, struct dlog_rec **out, size_t *n, char *err,
		       size_t errlen)
{
	struct maria_read a = { .f = f, .out = out, .n = n };

	*out = NULL;
	*n = 0;
	return maria_read(&a, err, errlen);
}

static int spool_scan(const struct dlog_filter *f, void (*fn)(const struct dlog_rec *r, void *ctx),
		      void *ctx, char *err, size_t errlen)
{
	struct maria_read a = { .f = f, .fn = fn, .ctx = ctx };

	return maria_read(&a, err, errlen);
}

static void spool_store_close(void)
{
	maria_close();
	free(M.path);
	M.path = NULL;
}

const struct dlog_store_ops dlog_spool_ops = {
	.where = spool_where,
	.write = maria_batch,
	.enforce_size = spool_enforce_size,
	.prune = spool_prune,
	.bytes = spool_bytes,
	.query = spool_query,
	.scan = spool_scan,
	.close = spool_store_close,
};
