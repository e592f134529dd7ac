/*
 * dlog_sqlite.c - the decision log's store in a SQLite file (WAL) at --db:
 * its schema and the columns added since, the batch insert, the readers
 * (history, report), retention and the size bound.  dlog.c queues the
 * records and calls this store through dlog_sqlite_ops from its writer
 * thread; dlog_spool.c keeps the same columns in its spool and binds and
 * reads them with the functions exported here.
 *
 * Durability contract (issue 4): the writer commits each batch in one
 * transaction.  WAL with synchronous=NORMAL makes a commit durable against
 * process death (the WAL is in the page cache) at a cost of one write per
 * batch instead of one fsync per decision.
 *
 * The log is a record, not a gate (issue 7): when the disk is full, the
 * directory read-only or the database unopenable, the batch is reported
 * lost (dlog.c says so at most once a minute) and the database is opened
 * again every REOPEN_EVERY_S at the next batch, so logging resumes by
 * itself once the cause is gone.
 *
 * A bounded log (issue 14):
 * - What-if queries (advisorctl check, context CTX_ADVISORCTL) are not
 *   decisions: they go to the table `queries`, same columns, kept
 *   DLOG_QUERY_DAYS, read only by `history --include-queries`.  `history`
 *   and `report` see the table `decisions` alone.
 * - An aggregated row's `repeat` column counts the checks it stands for:
 *   each batch's repeat counts are one UPDATE per row in the same
 *   transaction as the inserts.
 * - Size: after every batch the writer compares the pages in use with
 *   `log: max_mb`; above DLOG_PRUNE_HIGH of it, it deletes the oldest
 *   queries, then decisions older than retention_days, oldest first, down
 *   to DLOG_PRUNE_LOW, and says so in the daemon log (at most once an
 *   hour).  The last retention_days of decisions are never pruned for
 *   size, only when a write fails with the disk full (SQLITE_FULL), oldest
 *   first.  Deleted pages are reused, so the file stops growing; the WAL
 *   is checkpointed and truncated to a tenth of max_mb.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "dlog_sqlite.h"
#include "engine/names.h"
#include "engine/result.h"
#include "msg.h"
#include "util.h"

#define REOPEN_EVERY_S 5
#define SIZE_CHUNK 500               /* rows per DELETE when pruning for size */

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS decisions ("
	" id TEXT PRIMARY KEY, time INTEGER NOT NULL, uid INTEGER NOT NULL, user TEXT,"
	" job_id INTEGER, context TEXT, parent TEXT, gpu TEXT, gpus INTEGER, nodes INTEGER,"
	" partition TEXT, model TEXT, layout TEXT, workload TEXT, verdict INTEGER NOT NULL,"
	" verdict_name TEXT, codes TEXT, mem_gib REAL, ckpt_interval_s REAL);"
	"CREATE INDEX IF NOT EXISTS decisions_time ON decisions(time);"
	"CREATE INDEX IF NOT EXISTS decisions_user ON decisions(user, time);"
	"CREATE INDEX IF NOT EXISTS decisions_job ON decisions(job_id);"
	/* Issue 14: what-if queries, the same columns, kept DLOG_QUERY_DAYS. */
	"CREATE TABLE IF NOT EXISTS queries ("
	" id TEXT PRIMARY KEY, time INTEGER NOT NULL, uid INTEGER NOT NULL, user TEXT,"
	" job_id INTEGER, context TEXT, parent TEXT, gpu TEXT, gpus INTEGER, nodes INTEGER,"
	" partition TEXT, model TEXT, layout TEXT, workload TEXT, verdict INTEGER NOT NULL,"
	" verdict_name TEXT, codes TEXT, mem_gib REAL, ckpt_interval_s REAL, mode INTEGER,"
	" severities TEXT, unenforced TEXT, repeat INTEGER);"
	"CREATE INDEX IF NOT EXISTS queries_time ON queries(time);"
	"CREATE INDEX IF NOT EXISTS queries_user ON queries(user, time);"
	/* Issue 27: the digest of the text a decision was made from, what a
	 * node check must ship to be vouched for by it (dlog_confirm). */
	"CREATE TABLE IF NOT EXISTS digests (id TEXT PRIMARY KEY, digest TEXT NOT NULL)"
	" WITHOUT ROWID;";

/*
 * Columns added after the first release (issue 8: rollout reports).  A log
 * written by an older daemon gains them on open; its rows keep NULL there,
 * which reads back as "mode not recorded".
 */
static const struct {
	const char *name, *type;
} added_columns[] = {
	{ "mode", "INTEGER" },          /* enum adv_mode in force */
	{ "severities", "TEXT" },       /* per code, same order as codes */
	{ "unenforced", "TEXT" },       /* reject codes warn mode let through */
	{ "repeat", "INTEGER" },        /* issue 14: checks an aggregated row stands for */
	{ "host", "TEXT" },             /* issue 13: the node it was decided on */
	/* Issue 21: what the user saw; NULL in an older row reads as "not recorded". */
	{ "script", "TEXT" },           /* the batch script's name as sbatch was given it */
	{ "findings", "TEXT" },         /* dlog_detail.h lines: severity, code, message, fixes */
	{ "sources", "TEXT" },          /* dlog_detail.h lines: field, where it came from */
	/* Issue 30: the exemption that let the job through unchecked; NULL none. */
	{ "exempt", "TEXT" },           /* "user alice", "account physics", "partition debug" */
};

/* Issue 21: show finds a submission's node checks; history --script a user's scripts. */
static const char index_sql[] =
	"CREATE INDEX IF NOT EXISTS decisions_parent ON decisions(parent);"
	"CREATE INDEX IF NOT EXISTS queries_parent ON queries(parent);";

#define INSERT_SQL(table) \
	"INSERT OR REPLACE INTO " table " (id, time, uid, user, job_id, context, parent, gpu," \
	" gpus, nodes, partition, model, layout, workload, verdict, verdict_name, codes," \
	" mem_gib, ckpt_interval_s, mode, severities, unenforced, repeat, host, script," \
	" findings, sources, exempt) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
static const char repeat_sql[] =
	"UPDATE decisions SET repeat = coalesce(repeat, 1) + ? WHERE id = ?";
/* Issue 27: a submission is used by the first job that confirms it, once. */
static const char bind_sql[] =
	"UPDATE decisions SET job_id = ? WHERE id = ? AND coalesce(job_id, 0) = 0";
static const char digest_sql[] = "INSERT OR REPLACE INTO digests (id, digest) VALUES (?, ?)";

/* The rows' verdict_name column, indexed by enum adv_verdict (bounded by
 * its count); the context column is engine_context_name's. */
static const char *const verdict_names[] = { "accept", "warn", "reject" };
_Static_assert(ADV_ARRAY_SIZE(verdict_names) == ADV_VERDICT_COUNT, "a name for each verdict");

static struct {
	char *path;
	sqlite3 *db;
	sqlite3_stmt *insert, *insert_query, *repeat, *bind, *digest;
	const struct dlog_env *env;
} D;

/*
 * The checkpointer (issue 27; first tried for issue 20 in 2082659 and
 * taken out in e2d42cb).  Answers wait for the writer's commits, and
 * SQLite's automatic checkpoint runs inside the commit that crosses
 * wal_autocheckpoint, with synchronous=NORMAL fsyncing the WAL and the
 * database: measured on this machine (one row per transaction, the log's
 * schema) 64-73 us a commit without it, 134-147 us with it on average, the
 * fsyncs landing on a few commits.  So the writer's connection has none:
 * its WAL hook wakes this thread, which runs PASSIVE checkpoints (they
 * wait for no reader or writer) on a connection of its own.
 *
 * What took the first one out: after a full disk, decisions committed
 * once space was freed were missing.  This one checkpoints only while the
 * writer's last batch was written, drops its connection when a batch
 * fails or the writer opens its database again (gen), and is stopped
 * before the writer's connection closes, so that the writer's is always
 * the last one and its close makes the final checkpoint.  If the WAL
 * still outgrows WAL_HARD_FACTOR times its threshold (a reader that never
 * lets a checkpoint finish), the writer checkpoints itself.
 */
#define WAL_HARD_FACTOR 8
static struct {
	pthread_t thread;
	bool on, stop, due;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	atomic_int pages;             /* WAL pages that call for a checkpoint */
	atomic_llong limit;           /* journal_size_limit, bytes (-1 none) */
	atomic_uint gen;              /* the writer's connection: a new one, a new value */
	atomic_bool healthy;          /* the writer's last batch was written */
	atomic_int wal_pages;         /* the WAL's pages after the writer's last commit */
} C = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.pages = 1000,
	.limit = -1,
};

/* Failure and size state; the writer thread (and dlog_sqlite_open before it starts) only. */
static struct {
	time_t next_open;
	time_t prune_warned, full_warned;
	int wal_mb;                /* the max_mb the WAL limits were set for */
} F;

static const char *nz(const char *s)
{
	return (s && *s) ? s : NULL;
}

void dlog_sqlite_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (nz(s))
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (v >= 0)
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* What the user saw: NULL only for a record without it, "" for none of it. */
static void bind_detail(sqlite3_stmt *st, int i, bool detail, const char *s)
{
	if (detail)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* Binds r to parameters 1..28 of an INSERT_SQL-shaped statement (the log's or the spool's). */
void dlog_sqlite_bind_rec(sqlite3_stmt *st, const struct dlog_rec *r)
{
	sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, r->time);
	sqlite3_bind_int64(st, 3, r->uid);
	dlog_sqlite_bind_text(st, 4, r->user);
	if (r->job_id)
		sqlite3_bind_int64(st, 5, r->job_id);
	else
		sqlite3_bind_null(st, 5);
	dlog_sqlite_bind_text(st, 6, r->context >= 0 && r->context < ADV_CTX_COUNT
			      ? engine_context_name((enum adv_context)r->context) : NULL);
	dlog_sqlite_bind_text(st, 7, r->parent);
	dlog_sqlite_bind_text(st, 8, r->gpu);
	sqlite3_bind_int(st, 9, r->gpus);
	sqlite3_bind_int(st, 10, r->nodes);
	dlog_sqlite_bind_text(st, 11, r->partition);
	dlog_sqlite_bind_text(st, 12, r->model);
	dlog_sqlite_bind_text(st, 13, r->layout);
	dlog_sqlite_bind_text(st, 14, r->workload);
	sqlite3_bind_int(st, 15, r->verdict);
	dlog_sqlite_bind_text(st, 16, r->verdict >= 0 && r->verdict < ADV_VERDICT_COUNT
			      ? verdict_names[r->verdict] : NULL);
	dlog_sqlite_bind_text(st, 17, r->codes);
	bind_real(st, 18, r->mem_gib);
	bind_real(st, 19, r->ckpt_interval_s);
	if (r->mode >= 0)
		sqlite3_bind_int(st, 20, r->mode);
	else
		sqlite3_bind_null(st, 20);
	dlog_sqlite_bind_text(st, 21, r->severities);
	dlog_sqlite_bind_text(st, 22, r->unenforced);
	if (r->repeat > 1)
		sqlite3_bind_int64(st, 23, r->repeat);
	else
		sqlite3_bind_null(st, 23);
	dlog_sqlite_bind_text(st, 24, r->host);
	bind_detail(st, 25, r->detail, r->script);
	bind_detail(st, 26, r->detail, r->findings);
	bind_detail(st, 27, r->detail, r->sources);
	dlog_sqlite_bind_text(st, 28, r->exempt_by);
}

static int insert_one(const struct dlog_rec *r)
{
	sqlite3_stmt *st = r->query ? D.insert_query : D.insert;
	int rc;

	dlog_sqlite_bind_rec(st, r);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return rc;
	if (r->query || !r->digest[0])
		return 0;
	sqlite3_bind_text(D.digest, 1, r->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(D.digest, 2, r->digest, -1, SQLITE_STATIC);
	rc = sqlite3_step(D.digest);
	sqlite3_reset(D.digest);
	return rc == SQLITE_DONE ? 0 : rc;
}

/* A repeat count, or (bind_job) the job that used a submission. */
static int repeat_one(const struct dlog_repeat *p)
{
	sqlite3_stmt *st = p->bind_job ? D.bind : D.repeat;
	int rc;

	sqlite3_bind_int64(st, 1, p->bind_job ? (sqlite3_int64)p->bind_job : (sqlite3_int64)p->n);
	sqlite3_bind_text(st, 2, p->id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : rc;
}

static void close_db(void)
{
	sqlite3_finalize(D.insert);
	sqlite3_finalize(D.insert_query);
	sqlite3_finalize(D.repeat);
	sqlite3_finalize(D.bind);
	sqlite3_finalize(D.digest);
	D.insert = D.insert_query = D.repeat = D.bind = D.digest = NULL;
	sqlite3_close(D.db);
	D.db = NULL;
}

static bool has_column(sqlite3 *db, const char *table, const char *name)
{
	sqlite3_stmt *st;
	bool found = false;

	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?)", -1, &st,
			       NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (!found && sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *c = sqlite3_column_text(st, 0);

		found = c && strcmp((const char *)c, name) == 0;
	}
	sqlite3_finalize(st);
	return found;
}

int dlog_sqlite_add_columns(sqlite3 *db, const char *table)
{
	for (size_t i = 0; i < ADV_ARRAY_SIZE(added_columns); i++) {
		char sql[128];

		if (has_column(db, table, added_columns[i].name))
			continue;
		adv_snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN %s %s", table,
			     added_columns[i].name, added_columns[i].type);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			return -1;
	}
	return 0;
}

/*
 * Adds the columns an older log lacks; ADD COLUMN only touches the schema.
 * Both tables: a queries table made by an issue-14 daemon has no host.
 */
static int migrate(sqlite3 *db)
{
	return dlog_sqlite_add_columns(db, "decisions") || dlog_sqlite_add_columns(db, "queries")
	       ? -1 : 0;
}

/*
 * The log holds every user's decisions (issue 20): SQLite creates a file
 * 0644 less the umask (SQLITE_DEFAULT_FILE_PERMISSIONS), readable by all
 * when advisord is started by hand under a umask of 022.  So the file is
 * created here first, 0640, which no umask widens; SQLite gives its -wal
 * and -shm files the mode of the database.  A file of ours that others
 * may already read (made by an older advisord) loses those bits, and the
 * daemon log says so.  A path that cannot be opened is left to SQLite,
 * whose error the caller reports.
 */
void dlog_sqlite_private(const char *path)
{
	static const char *const suffix[] = { "", "-wal", "-shm" };
	char name[4096];

	if (!path || !path[0] || path[0] == ':' || strlen(path) + sizeof("-wal") > sizeof(name))
		return;
	for (size_t i = 0; i < ADV_ARRAY_SIZE(suffix); i++) {
		struct stat st;
		int fd;

		adv_snprintf(name, sizeof(name), "%s%s", path, suffix[i]);
		fd = open(name, O_RDWR | O_CLOEXEC | O_NOCTTY | (i == 0 ? O_CREAT : 0), 0640);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    (st.st_mode & S_IRWXO)) {
			mode_t m = st.st_mode & 0777 & ~(mode_t)S_IRWXO;

			if (fchmod(fd, m) == 0)
				msg_log(LOG_WARNING, "%s was open to all users (mode %04o): now %04o, "
					"as advisord creates it", name, (unsigned)(st.st_mode & 07777),
					(unsigned)m);
			else
				msg_log(LOG_WARNING, "%s is open to all users (mode %04o) and cannot "
					"be changed: %s; chmod o-rwx %s", name,
					(unsigned)(st.st_mode & 07777), strerror(errno), name);
		}
		close(fd);
	}
}

/* Opens the database for writing; -1 with err (and nothing open) on failure. */
/* After each commit of the writer: wakes the checkpointer once the WAL is long enough. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
	(void)arg;
	(void)db;
	(void)name;
	atomic_store(&C.wal_pages, pages);
	if (pages >= atomic_load(&C.pages) && atomic_load(&C.healthy)) {
		pthread_mutex_lock(&C.lock);
		C.due = true;
		pthread_cond_signal(&C.wake);
		pthread_mutex_unlock(&C.lock);
	}
	return SQLITE_OK;
}

static void *checkpointer_main(void *arg)
{
	sqlite3 *db = NULL;
	unsigned gen = 0;
	int nlog, nckpt;

	(void)arg;
	pthread_mutex_lock(&C.lock);
	for (;;) {
		char sql[64];

		while (!C.due && !C.stop)
			pthread_cond_wait(&C.wake, &C.lock);
		if (C.stop)
			break;
		C.due = false;
		pthread_mutex_unlock(&C.lock);
		/* Only beside a writer that writes, and on its database as opened now. */
		if (db && (gen != atomic_load(&C.gen) || !atomic_load(&C.healthy))) {
			sqlite3_close(db);
			db = NULL;
		}
		gen = atomic_load(&C.gen);
		/* D.path is set before this thread starts and freed after it stopped. */
		if (!db && atomic_load(&C.healthy) &&
		    sqlite3_open_v2(D.path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
				    NULL) != SQLITE_OK) {
			sqlite3_close(db);
			db = NULL;
		}
		adv_snprintf(sql, sizeof(sql), "PRAGMA journal_size_limit=%lld",
			     (long long)atomic_load(&C.limit));
		/*
		 * A connection opens the WAL at its first read: until then a
		 * checkpoint returns SQLITE_OK having done nothing (its WAL
		 * "not in WAL mode", -1 frames).  2082659's checkpointer read
		 * nothing, so it never checkpointed: the WAL grew until the
		 * disk was full, which is how the first one lost decisions.
		 * nlog < 0 after a read is as wrong, and is treated as a failure.
		 */
		nlog = nckpt = -1;
		if (db && (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK ||
			   sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL,
					NULL) != SQLITE_OK ||
			   sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog,
						     &nckpt) != SQLITE_OK || nlog < 0)) {
			/* Busy, full or gone: a fresh connection next time. */
			sqlite3_close(db);
			db = NULL;
		}
		pthread_mutex_lock(&C.lock);
	}
	pthread_mutex_unlock(&C.lock);
	sqlite3_close(db);
	return NULL;
}

static void checkpointer_stop(void)
{
	if (!C.on)
		return;
	pthread_mutex_lock(&C.lock);
	C.stop = true;
	pthread_cond_signal(&C.wake);
	pthread_mutex_unlock(&C.lock);
	pthread_join(C.thread, NULL);
	C.on = false;
}

static int open_db(char *err, size_t errlen)
{
	int rc;

	F.next_open = time(NULL) + REOPEN_EVERY_S;
	dlog_sqlite_private(D.path);
	rc = sqlite3_open_v2(D.path, &D.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		adv_snprintf(err, errlen, "cannot open: %s",
			     D.db ? sqlite3_errmsg(D.db) : sqlite3_errstr(rc));
		close_db();
		return -1;
	}
	sqlite3_busy_timeout(D.db, 5000);
	/* Checkpoints are the checkpointer's, never inside a commit (this replaces autocheckpoint). */
	sqlite3_wal_hook(D.db, wal_hook, NULL);
	atomic_fetch_add(&C.gen, 1);
	if (sqlite3_exec(D.db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(D.db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    migrate(D.db) != 0 ||
	    sqlite3_exec(D.db, index_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(D.db, INSERT_SQL("decisions"), -1, &D.insert, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(D.db, INSERT_SQL("queries"), -1, &D.insert_query, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(D.db, repeat_sql, -1, &D.repeat, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(D.db, bind_sql, -1, &D.bind, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(D.db, digest_sql, -1, &D.digest, NULL) != SQLITE_OK) {
		adv_snprintf(err, errlen, "cannot set up: %s", sqlite3_errmsg(D.db));
		close_db();
		return -1;
	}
	/* SQLite quietly opens a file it may not write read-only. */
	if (sqlite3_db_readonly(D.db, "main") == 1) {
		adv_snprintf(err, errlen, "cannot write: the file or its directory is read-only");
		close_db();
		return -1;
	}
	F.wal_mb = -1;   /* a fresh connection: WAL limits set again */
	return 0;
}

/* ---- size ------------------------------------------------------------------- */

static void prune_digests(void);

static int64_t pragma_int(const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(D.db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static uint64_t file_size(const char *path, const char *suffix)
{
	char p[4096];
	struct stat st;

	adv_snprintf(p, sizeof(p), "%s%s", path, suffix);
	return stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Pages holding rows; freed pages are reused before the file grows. */
static double used_bytes(void)
{
	int64_t pages = pragma_int("PRAGMA page_count");
	int64_t free_pages = pragma_int("PRAGMA freelist_count");
	int64_t size = pragma_int("PRAGMA page_size");

	if (pages < 0 || free_pages < 0 || size < 0)
		return 0;
	return (double)(pages - free_pages) * (double)size;
}

/*
 * Deletes up to chunk of the oldest rows of table older than before, of
 * user only when not NULL (index table_user); rows deleted, -1 on error.
 */
static long delete_oldest_of(const char *table, const char *user, int64_t before, int chunk)
{
	char sql[256];
	sqlite3_stmt *st;
	int rc;

	adv_snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE rowid IN (SELECT rowid FROM %s"
		     " WHERE time < ?1 AND (?3 IS NULL OR user = ?3) ORDER BY time LIMIT ?2)",
		     table, table);
	if (sqlite3_prepare_v2(D.db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, before);
	sqlite3_bind_int(st, 2, chunk);
	dlog_sqlite_bind_text(st, 3, user);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? (long)sqlite3_changes(D.db) : -1;
}

static long delete_oldest(const char *table, int64_t before, int chunk)
{
	return delete_oldest_of(table, NULL, before, chunk);
}

/* Deletes the oldest rows of table older than before until used <= target. */
static long prune_down_to(const char *table, int64_t before, double target, double *used)
{
	long total = 0, k;

	while (*used > target && (k = delete_oldest(table, before, SIZE_CHUNK)) > 0) {
		total += k;
		*used = used_bytes();
	}
	return total;
}

/* The user with the most rows in table (the index on user), in top; false when none. */
static bool top_user(const char *table, char *top, size_t len)
{
	char sql[160];
	sqlite3_stmt *st;
	bool found = false;

	adv_snprintf(sql, sizeof(sql), "SELECT user FROM %s GROUP BY user ORDER BY count(*) DESC"
		     " LIMIT 1", table);
	if (sqlite3_prepare_v2(D.db, sql, -1, &st, NULL) != SQLITE_OK)
		return false;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		dlog_sqlite_col_text(st, 0, top, len);
		found = true;
	}
	sqlite3_finalize(st);
	return found;
}

/*
 * Issue 27: the largest contributor's rows first, oldest first, until
 * used <= target; the user is looked up again after every TOP_ROUNDS
 * chunks, so the next largest follows.  One call does at most
 * TOP_CALL_CHUNKS chunks: the writer's next batch waits for it, and a
 * flood that outruns it is pruned over the following batches.
 */
#define TOP_ROUNDS 8
#define TOP_CALL_CHUNKS 16
static long prune_top_down_to(const char *table, double target, double *used, char *who,
			      size_t wholen, bool *more)
{
	long total = 0, k = 0;
	char user[64] = "";
	int i;

	*more = false;
	for (i = 0; i < TOP_CALL_CHUNKS && *used > target; i++) {
		if (i % TOP_ROUNDS == 0 && !top_user(table, user, sizeof(user)))
			return total;
		if ((k = delete_oldest_of(table, user, INT64_MAX, SIZE_CHUNK)) <= 0) {
			if (k < 0)
				return total;
			user[0] = '\0';
			i = ((i / TOP_ROUNDS) + 1) * TOP_ROUNDS - 1;   /* look the top up again */
			continue;
		}
		if (!who[0])
			adv_strlcpy(who, user, wholen);
		total += k;
		*used = used_bytes();
	}
	/* Stopped by the call's bound with rows left over the target: the next batch goes on. */
	*more = *used > target && i >= TOP_CALL_CHUNKS;
	return total;
}

static void apply_wal_limit(int mb)
{
	char sql[128];
	int64_t page = pragma_int("PRAGMA page_size");
	int64_t limit = mb > 0 ? (int64_t)(mb * DLOG_MIB / 10) : -1;
	int64_t pages = page > 0 && limit > 0 ? limit / page : 1000;

	pages = pages < 16 ? 16 : pages > 1000 ? 1000 : pages;
	/* Not PRAGMA wal_autocheckpoint: it would replace the WAL hook (the checkpointer's). */
	atomic_store(&C.pages, (int)pages);
	atomic_store(&C.limit, (long long)limit);
	adv_snprintf(sql, sizeof(sql), "PRAGMA journal_size_limit=%" PRId64 ";", limit);
	if (sqlite3_exec(D.db, sql, NULL, NULL, NULL) != SQLITE_OK)
		msg_log(LOG_ERR, "decision log: %s", sqlite3_errmsg(D.db));
	F.wal_mb = mb;
}

/* After every batch: the size on disk for stats, and pruning above max_mb. */
static void enforce_size(int mb, int days)
{
	time_t now = time(NULL);
	double max = mb * DLOG_MIB, used, before;
	long q, d = 0, r = 0;
	char who_q[64] = "", who_d[64] = "";
	bool more;

	if (!D.db)
		return;
	if (mb != F.wal_mb)
		apply_wal_limit(mb);
	if (mb <= 0 || (used = used_bytes()) <= DLOG_PRUNE_HIGH * max)
		return;
	before = used;
	q = prune_top_down_to("queries", DLOG_PRUNE_LOW * max, &used, who_q, sizeof(who_q), &more);
	/* Queries left (the call's bound): decisions wait for the next batch. */
	if (!more && days > 0)
		d = prune_down_to("decisions", (int64_t)now - (int64_t)days * 86400,
				  DLOG_PRUNE_LOW * max, &used);
	/* A hard bound (issue 27): the recent decisions of the user with the most go next. */
	if (!more)
		r = prune_top_down_to("decisions", DLOG_PRUNE_LOW * max, &used, who_d,
				      sizeof(who_d), &more);
	if (d + r > 0)
		prune_digests();
	if (now >= F.prune_warned + DLOG_PRUNE_WARN_EVERY_S) {
		msg_log(LOG_WARNING, "decision log %s: %.1f MiB in use is over %.0f%% of log "
			"max_mb %d; pruning: %ld what-if queries (%s's first), %ld decisions older "
			"than %d days and %ld recent decisions (%s's first) deleted, %.1f MiB in use "
			"now (said at most once an hour)", D.path, before / DLOG_MIB,
			DLOG_PRUNE_HIGH * 100, mb, q, who_q[0] ? who_q : "nobody", d, days, r,
			who_d[0] ? who_d : "nobody", used / DLOG_MIB);
		F.prune_warned = now;
	}
}

/* The disk is full: the oldest rows go, queries first, whatever their age. */
static void prune_for_space(void)
{
	const char *what = "what-if queries";
	long k = delete_oldest("queries", INT64_MAX, DLOG_PRUNE_CHUNK);
	time_t now = time(NULL);

	if (k <= 0) {
		what = "decisions";
		k = delete_oldest("decisions", INT64_MAX, DLOG_PRUNE_CHUNK);
	}
	if (k > 0 && now >= F.full_warned + DLOG_REPORT_EVERY_S) {
		msg_log(LOG_WARNING, "decision log %s: the disk is full; deleted the %ld oldest %s "
			"to make room (said at most once a minute)", D.path, k, what);
		F.full_warned = now;
	}
}

static void write_batch(const struct dlog_rec *recs, size_t n, const struct dlog_repeat *reps,
			size_t n_reps)
{
	char why[512] = "";
	size_t ok = 0, total = n;
	bool full = false;
	int rc;

	for (size_t i = 0; i < n_reps; i++)
		total += reps[i].bind_job ? 0 : reps[i].n;
	if (!D.db && (time(NULL) < F.next_open || open_db(why, sizeof(why)) != 0)) {
		atomic_store(&C.healthy, false);
		D.env->failed(why[0] ? why : "not open", total);
		return;
	}
	if (sqlite3_exec(D.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		adv_snprintf(why, sizeof(why), "BEGIN failed: %s", sqlite3_errmsg(D.db));
		atomic_store(&C.healthy, false);
		D.env->failed(why, total);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if ((rc = insert_one(&recs[i])) == 0) {
			ok++;
			continue;
		}
		full = full || rc == SQLITE_FULL;
		if (!why[0])
			adv_snprintf(why, sizeof(why), "cannot insert %s: %s", recs[i].id,
				     sqlite3_errmsg(D.db));
	}
	/* After the inserts: a row and its first repeats may share a batch. */
	for (size_t i = 0; i < n_reps; i++) {
		if ((rc = repeat_one(&reps[i])) == 0) {
			ok += reps[i].bind_job ? 0 : reps[i].n;
			continue;
		}
		full = full || rc == SQLITE_FULL;
		if (!why[0])
			adv_snprintf(why, sizeof(why), "cannot count repeats of %s: %s", reps[i].id,
				     sqlite3_errmsg(D.db));
	}
	if (sqlite3_exec(D.db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		atomic_store(&C.healthy, false);
		full = full || sqlite3_errcode(D.db) == SQLITE_FULL;
		adv_snprintf(why, sizeof(why), "COMMIT failed: %s", sqlite3_errmsg(D.db));
		sqlite3_exec(D.db, "ROLLBACK", NULL, NULL, NULL);
		D.env->failed(why, total);
		if (full)
			prune_for_space();
		return;
	}
	D.env->logged(ok);
	atomic_store(&C.healthy, ok == total);
	if (ok < total)
		D.env->failed(why, total - ok);
	else
		D.env->recovered();
	if (full)
		prune_for_space();
	/* The checkpointer cannot finish (a reader holds the WAL): the writer does, bounded. */
	if (atomic_load(&C.wal_pages) >= WAL_HARD_FACTOR * atomic_load(&C.pages) &&
	    sqlite3_wal_checkpoint_v2(D.db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) == SQLITE_OK)
		atomic_store(&C.wal_pages, 0);
}

/* Deletes rows older than the retention in small chunks so queries never stall. */
static void prune(int days)
{
	sqlite3_stmt *st;
	int64_t cutoff;
	long total = 0;

	if (days <= 0 || !D.db)
		return;
	cutoff = (int64_t)time(NULL) - (int64_t)days * 86400;
	if (sqlite3_prepare_v2(D.db, "DELETE FROM decisions WHERE rowid IN (SELECT rowid FROM"
			       " decisions WHERE time < ? LIMIT ?)", -1, &st, NULL) != SQLITE_OK) {
		msg_log(LOG_ERR, "decision log: prune: %s", sqlite3_errmsg(D.db));
		return;
	}
	for (;;) {
		int changed;

		sqlite3_bind_int64(st, 1, cutoff);
		sqlite3_bind_int(st, 2, DLOG_PRUNE_CHUNK);
		if (sqlite3_step(st) != SQLITE_DONE) {
			msg_log(LOG_ERR, "decision log: prune: %s", sqlite3_errmsg(D.db));
			break;
		}
		sqlite3_reset(st);
		changed = sqlite3_changes(D.db);
		total += changed;
		if (changed < DLOG_PRUNE_CHUNK)
			break;
	}
	sqlite3_finalize(st);
	if (total)
		msg_log(LOG_INFO, "decision log: pruned %ld decisions older than %d days", total, days);
}

/* What-if queries are kept DLOG_QUERY_DAYS whatever the decisions' retention. */
static void prune_queries(void)
{
	int64_t cutoff = (int64_t)time(NULL) - (int64_t)DLOG_QUERY_DAYS * 86400;
	long total = 0, k;

	if (!D.db)
		return;
	while ((k = delete_oldest("queries", cutoff, DLOG_PRUNE_CHUNK)) > 0)
		total += k;
	if (total)
		msg_log(LOG_INFO, "decision log: pruned %ld what-if queries older than %d days",
			total, DLOG_QUERY_DAYS);
}

void dlog_sqlite_col_text(sqlite3_stmt *st, int i, char *dst, size_t len)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	adv_strlcpy(dst, s ? (const char *)s : "", len);
}

static double col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_double(st, i);
}

static int context_of(const char *s)
{
	for (int i = 0; i < ADV_CTX_COUNT; i++)
		if (strcmp(s, engine_context_name((enum adv_context)i)) == 0)
			return i;
	return 0;
}

void dlog_sqlite_row_to_rec(sqlite3_stmt *st, struct dlog_rec *r)
{
	char ctx[32];

	memset(r, 0, sizeof(*r));
	dlog_sqlite_col_text(st, 0, r->id, sizeof(r->id));
	r->time = sqlite3_column_int64(st, 1);
	r->uid = (uint32_t)sqlite3_column_int64(st, 2);
	dlog_sqlite_col_text(st, 3, r->user, sizeof(r->user));
	r->job_id = (uint32_t)sqlite3_column_int64(st, 4);
	dlog_sqlite_col_text(st, 5, ctx, sizeof(ctx));
	r->context = context_of(ctx);
	dlog_sqlite_col_text(st, 6, r->parent, sizeof(r->parent));
	dlog_sqlite_col_text(st, 7, r->gpu, sizeof(r->gpu));
	r->gpus = sqlite3_column_int(st, 8);
	r->nodes = sqlite3_column_int(st, 9);
	dlog_sqlite_col_text(st, 10, r->partition, sizeof(r->partition));
	dlog_sqlite_col_text(st, 11, r->model, sizeof(r->model));
	dlog_sqlite_col_text(st, 12, r->layout, sizeof(r->layout));
	dlog_sqlite_col_text(st, 13, r->workload, sizeof(r->workload));
	r->verdict = sqlite3_column_int(st, 14);
	dlog_sqlite_col_text(st, 15, r->codes, sizeof(r->codes));
	r->mem_gib = col_real(st, 16);
	r->ckpt_interval_s = col_real(st, 17);
	r->mode = sqlite3_column_type(st, 18) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 18);
	dlog_sqlite_col_text(st, 19, r->severities, sizeof(r->severities));
	dlog_sqlite_col_text(st, 20, r->unenforced, sizeof(r->unenforced));
	r->repeat = sqlite3_column_type(st, 21) == SQLITE_NULL ? 1
		    : (uint32_t)sqlite3_column_int64(st, 21);
	dlog_sqlite_col_text(st, 22, r->host, sizeof(r->host));
	r->detail = sqlite3_column_type(st, 24) != SQLITE_NULL;
	dlog_sqlite_col_text(st, 23, r->script, sizeof(r->script));
	dlog_sqlite_col_text(st, 24, r->findings, sizeof(r->findings));
	dlog_sqlite_col_text(st, 25, r->sources, sizeof(r->sources));
	dlog_sqlite_col_text(st, 26, r->exempt_by, sizeof(r->exempt_by));
	/* dlog_query's union (and the spool) say which table a row came from. */
	r->query = sqlite3_column_count(st) > DLOG_SQLITE_NCOLS &&
		   sqlite3_column_int(st, DLOG_SQLITE_NCOLS) == 1;
}

/*
 * Opens a reader connection of its own on the committed log (WAL lets it
 * run beside the writer) and prepares sql on it.  On failure *db and *st
 * may still need sqlite3_finalize()/sqlite3_close().
 */
static int reader_open(const char *sql, sqlite3 **db, sqlite3_stmt **st, char *err,
		       size_t errlen)
{
	int rc;

	if (!D.path) {
		adv_snprintf(err, errlen, "the decision log is not open");
		return -1;
	}
	rc = sqlite3_open_v2(D.path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	/* Before prepare: reading the schema already waits for another process's lock. */
	if (rc == SQLITE_OK)
		sqlite3_busy_timeout(*db, 2000);
	if (rc != SQLITE_OK || sqlite3_prepare_v2(*db, sql, -1, st, NULL) != SQLITE_OK) {
		adv_snprintf(err, errlen, "decision log: %s",
			     *db ? sqlite3_errmsg(*db) : "cannot open");
		return -1;
	}
	return 0;
}

#define HISTORY_WHERE \
	" WHERE (?1 IS NULL OR user = ?1) AND (?2 IS NULL OR job_id = ?2)" \
	" AND (?3 IS NULL OR verdict = ?3) AND time >= ?4"

/*
 * HISTORY_WHERE and the filters of issue 21 that are set, each its own
 * term so that the planner takes the index of id or parent for show.
 */
static void history_where(const struct dlog_filter *f, char *buf, size_t len)
{
	adv_strlcpy(buf, HISTORY_WHERE, len);
	if (f->until)
		adv_strlcat(buf, " AND time < ?6", len);
	if (f->id)
		adv_strlcat(buf, " AND id = ?7", len);
	if (f->parent)
		adv_strlcat(buf, " AND parent = ?8", len);
	/* The name as sbatch was given it, or its last component: "train.sbatch" finds "jobs/train.sbatch". */
	if (f->script)
		adv_strlcat(buf, " AND (script = ?9 OR substr(script, -length(?9) - 1) = '/' || ?9)",
			    len);
}

static int sqlite_query(const struct dlog_filter *f, struct dlog_rec **out, size_t *n,
			char *err, size_t errlen)
{
	const char *cols = f->detail ? DLOG_SQLITE_COLUMNS : DLOG_SQLITE_COLUMNS_BRIEF;
	char where[512], sql[2048];
	struct dlog_rec *recs = NULL;
	size_t count = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	int rc, ret = -1;

	*out = NULL;
	*n = 0;
	history_where(f, where, sizeof(where));
	/* Newest first across both tables; within a second, decisions before queries. */
	if (f->include_queries)
		adv_snprintf(sql, sizeof(sql), "SELECT * FROM (SELECT %s, 0 AS q, rowid AS r FROM"
			     " decisions%s UNION ALL SELECT %s, 1 AS q, rowid AS r FROM queries%s)"
			     " ORDER BY time DESC, q, r DESC LIMIT ?5", cols, where, cols, where);
	else
		adv_snprintf(sql, sizeof(sql), "SELECT %s, 0 FROM decisions%s ORDER BY time DESC,"
			     " rowid DESC LIMIT ?5", cols, where);
	if (reader_open(sql, &db, &st, err, errlen))
		goto out;
	dlog_sqlite_bind_text(st, 1, f->user);
	if (f->job_id)
		sqlite3_bind_int64(st, 2, f->job_id);
	if (f->verdict >= 0)
		sqlite3_bind_int(st, 3, f->verdict);
	sqlite3_bind_int64(st, 4, f->since);
	sqlite3_bind_int(st, 5, f->limit > 0 ? f->limit : 100);
	if (f->until)
		sqlite3_bind_int64(st, 6, f->until);
	if (f->id)
		sqlite3_bind_text(st, 7, f->id, -1, SQLITE_STATIC);
	if (f->parent)
		sqlite3_bind_text(st, 8, f->parent, -1, SQLITE_STATIC);
	if (f->script)
		sqlite3_bind_text(st, 9, f->script, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct dlog_rec *p = realloc(recs, ncap * sizeof(*p));

			if (!p) {
				adv_snprintf(err, errlen, "out of memory");
				goto out;
			}
			recs = p;
			cap = ncap;
		}
		dlog_sqlite_row_to_rec(st, &recs[count++]);
	}
	if (rc != SQLITE_DONE) {
		adv_snprintf(err, errlen, "decision log: %s", sqlite3_errmsg(db));
		goto out;
	}
	*out = recs;
	*n = count;
	recs = NULL;
	ret = 0;
out:
	free(recs);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ret;
}

static int sqlite_scan(const struct dlog_filter *f,
		       void (*fn)(const struct dlog_rec *r, void *ctx), void *ctx, char *err,
		       size_t errlen)
{
	static const char sql[] =
		"SELECT " DLOG_SQLITE_COLUMNS_BRIEF " FROM decisions WHERE (?1 IS NULL OR user = ?1)"
		" AND (?2 IS NULL OR verdict = ?2) AND time >= ?3 ORDER BY time, rowid";
	struct dlog_rec *rec = malloc(sizeof(*rec));
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	int rc, ret = -1;

	if (!rec) {
		adv_snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (reader_open(sql, &db, &st, err, errlen))
		goto out;
	dlog_sqlite_bind_text(st, 1, f->user);
	if (f->verdict >= 0)
		sqlite3_bind_int(st, 2, f->verdict);
	sqlite3_bind_int64(st, 3, f->since);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		dlog_sqlite_row_to_rec(st, rec);
		fn(rec, ctx);
	}
	if (rc != SQLITE_DONE) {
		adv_snprintf(err, errlen, "decision log: %s", sqlite3_errmsg(db));
		goto out;
	}
	ret = 0;
out:
	free(rec);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ret;
}

/* ---- the store ------------------------------------------------------------------ */

static const char *sqlite_where(void)
{
	return D.path;
}

static uint64_t sqlite_bytes(void)
{
	/* stat() at the scrape: a daemon that has not written yet has a size too. */
	return D.path ? file_size(D.path, "") + file_size(D.path, "-wal") : 0;
}

static void sqlite_close(void)
{
	/* The checkpointer's connection first: the writer's closes last, checkpointing. */
	checkpointer_stop();
	close_db();
	free(D.path);
	D.path = NULL;
}

/* Digests whose decision was pruned (for retention, size or space) go hourly. */
static void prune_digests(void)
{
	if (D.db && sqlite3_exec(D.db, "DELETE FROM digests WHERE id NOT IN (SELECT id FROM"
				 " decisions)", NULL, NULL, NULL) != SQLITE_OK)
		msg_log(LOG_ERR, "decision log: prune digests: %s", sqlite3_errmsg(D.db));
}

static void sqlite_prune(int days)
{
	prune(days);
	prune_queries();
	prune_digests();
}

/* Issue 27: a decision and its digest, for dlog_confirm. */
static int sqlite_lookup(const char *id, struct dlog_rec *r, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	int rc, ret = -1;

	if (reader_open("SELECT " DLOG_SQLITE_COLUMNS_BRIEF ", 0, (SELECT digest FROM digests"
			" WHERE id = ?1) FROM decisions WHERE id = ?1", &db, &st, err, errlen))
		goto out;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		dlog_sqlite_row_to_rec(st, r);
		dlog_sqlite_col_text(st, DLOG_SQLITE_NCOLS + 1, r->digest, sizeof(r->digest));
		ret = 1;
	} else if (rc == SQLITE_DONE) {
		ret = 0;
	} else {
		adv_snprintf(err, errlen, "decision log: %s", sqlite3_errmsg(db));
	}
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ret;
}

int dlog_sqlite_open(const char *path, const struct dlog_env *env, char *err, size_t errlen)
{
	char why[512];
	int rc;

	D.env = env;
	memset(&F, 0, sizeof(F));
	F.wal_mb = -1;
	D.path = strdup(path);
	if (!D.path) {
		adv_snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* Not fatal: the daemon answers, and the writer keeps trying to open it. */
	if (open_db(why, sizeof(why)) != 0)
		env->failed(why, 0);
	C.stop = C.due = false;
	atomic_store(&C.healthy, D.db != NULL);
	if ((rc = pthread_create(&C.thread, NULL, checkpointer_main, NULL)) != 0) {
		adv_snprintf(err, errlen, "cannot start the decision log's checkpointer: %s",
			     strerror(rc));
		close_db();
		free(D.path);
		D.path = NULL;
		return -1;
	}
	C.on = true;
	return 0;
}

const struct dlog_store_ops dlog_sqlite_ops = {
	.where = sqlite_where,
	.write = write_batch,
	.enforce_size = enforce_size,
	.prune = sqlite_prune,
	.bytes = sqlite_bytes,
	.query = sqlite_query,
	.scan = sqlite_scan,
	.lookup = sqlite_lookup,
	.close = sqlite_close,
};
