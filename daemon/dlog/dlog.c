/*
 * dlog.c - the decision log's queue and its writer thread, the public API
 * of dlog.h: records are queued here and one background thread writes them
 * in batches to the store advisord.conf asks for, through its ops table
 * (dlog_store.h, as Slurm's plugins): dlog_sqlite_ops, a SQLite file
 * (dlog_sqlite.c), or dlog_spool_ops, the site's MariaDB through a local
 * spool (dlog_spool.c, dlog_mariadb.c).
 *
 * Durability contract (issue 4; issue 20: acknowledged means durable): a
 * decision acknowledged to a client survives a kill -9 of the daemon.  The
 * handler queues the record, and dlog_take_mine() gives the server the
 * record's sequence number: the server holds the answer until
 * dlog_committed() has passed it (the writer calls the dlog_on_commit()
 * hook after every commit).  Group commit: the writer commits whatever is
 * queued as soon as the previous commit returned, in one transaction
 * (SQLite's WAL, or the MariaDB store's local spool: either way the batch
 * survives the daemon once the store returns), so an answer waits about
 * one commit, and a busier daemon commits bigger batches, not more of
 * them.  On dlog_close() the writer commits whatever is still queued
 * before it exits (SIGTERM).
 *
 * The log is a record, not a gate (issue 7): when the disk is full, the
 * directory read-only or the database unopenable, decisions are still
 * answered; the lost records are counted, the failure is reported at most
 * once a minute (not once per request, which would flood the journal of a
 * busy site exactly when its disk is full), and the store tries again by
 * itself (dlog_sqlite.c reopens the database every few seconds), so
 * logging resumes once the cause is gone.
 *
 * Fairness and a bounded log (issue 14):
 * - What-if queries (advisorctl check, context CTX_ADVISORCTL) are not
 *   decisions: the store keeps them in the table `queries`, kept
 *   DLOG_QUERY_DAYS, read only by `history --include-queries`.  `history`,
 *   `report` and the decision counters see the table `decisions` alone.
 * - Aggregation: a plugin check of a user over budget is still judged and
 *   answered, but identical ones within DLOG_AGG_WINDOW_S become one row
 *   whose `repeat` column counts them (report sums it, so no decision is
 *   lost from the totals).  The first check of a window is inserted as
 *   usual; the later ones only bump a pending count in an in-memory table
 *   keyed by two independent 64-bit hashes of (uid, content), and the writer
 *   hands each batch's pending counts to the store, which writes them in
 *   the same transaction as the inserts: an answer waits for its count's commit
 *   as for a record, and a flood of identical checks costs an UPDATE per
 *   batch instead of a row per check.  Each uid may open DLOG_AGG_DISTINCT
 *   rows per window; beyond that only what `report` counts is compared (a
 *   flood of varied checks folds into a few rows per verdict and finding
 *   set).  The repeated checks are answered with the row's decision id.
 * - Size: after every batch the writer has the store compare the log's
 *   size with `log: max_mb` and prune the oldest rows above it; every
 *   hour, or at once when the retention changes, rows past the retention.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "advconf.h"
#include "dlog.h"
#include "dlog_spool.h"
#include "dlog_sqlite.h"
#include "dlog_store.h"
#include "engine/result.h"
#include "engine/workload.h"
#include "msg.h"
#include "util.h"

#define QUEUE_MAX (1u << 20)          /* records; beyond this they are dropped and counted */
#define PRUNE_EVERY_S 3600
#define QUEUE_KEEP 1024              /* records a drained buffer may keep */
#define AGG_SLOTS 16384              /* live aggregated rows; beyond, rows are not folded */
#define MAINT_EVERY_MS 100           /* a leader calls the writer to prune at most this often */

/* An aggregated row: identified by two hashes of its key, open while the window lasts. */
struct agg_slot {
	uint64_t h1, h2;
	int64_t start;               /* unix time the row was made; 0 = free slot */
	uint32_t uid;
	uint32_t gen, pending_idx;   /* its entry in D.pending when gen == D.pending_gen */
	uint32_t distinct;           /* the per-uid counter slot: rows opened this window */
	char id[DLOG_ID_MAX];
};

static struct {
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t wake;        /* writer: records queued or stop */
	pthread_cond_t committed;   /* queriers: a batch is committed */
	struct dlog_rec *queue;
	size_t n, cap;
	bool stop;
	uint64_t seq_queued, seq_committed;
	atomic_uint_fast64_t committed_pub;   /* seq_committed, for dlog_committed() */
	void (*on_commit)(uint64_t seq);      /* the server's hook (under lock) */
	atomic_uint_fast64_t logged, dropped;
	atomic_int retention_days;
	atomic_int max_mb;
	/* Issue 27: each user's share of new rows, and the disk reserve. */
	atomic_int user_rows_per_min;
	atomic_int reserve_mb;
	atomic_bool low_space;      /* free space on the log's file system under reserve_mb */
	atomic_uint_fast64_t shed;  /* checks answered and counted, not logged */
	struct share_slot *share;   /* under lock */
	/* Issue 27: group commit led by the server's workers (dlog_lead). */
	bool leaders;               /* workers lead: appends do not wake the writer */
	bool committing;            /* a batch is being written (the writer's or a leader's) */
	bool maint_due;             /* the writer should prune and look at the disk */
	int64_t maint_at;           /* ms: a leader calls for maintenance again from then */
	pthread_cond_t idle;        /* a batch was committed: committing is false */
	struct dlog_rec *spare;     /* the last committed batch's buffer, for the next queue */
	size_t spare_cap;
	atomic_uint_fast64_t id_counter;
	atomic_bool prune_asap;     /* the retention changed: prune now, not in an hour */
	char host[DLOG_HOST_MAX];   /* records without a host are this one's */
	/* Aggregation (under lock). */
	struct agg_slot *agg;
	size_t agg_used;
	int64_t agg_next_compact;
	struct dlog_repeat *pending;
	size_t n_pending, cap_pending;
	uint32_t pending_gen;
} D = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.committed = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
};

/* A user's new rows this minute (issue 27): decisions and what-if queries apart. */
struct share_slot {
	uint32_t uid;
	bool query;
	uint32_t rows;
	int64_t minute;              /* unix minute; a slot of another minute is free */
};
#define SHARE_SLOTS 4096

/* The sequence number of the last record this thread queued, for dlog_take_mine(). */
static __thread uint64_t my_seq;

/* Failure state; the writer thread (and dlog_open before it starts) only. */
static struct {
	bool failing;
	time_t last_report;
	uint64_t lost;             /* records not written since the last recovery */
} F;

/*
 * The store in use: set by dlog_open and dlog_open_storage before the
 * writer starts, back to SQLite's (which answers "not open") by dlog_close
 * after it stopped.
 */
static const struct dlog_store_ops *store = &dlog_sqlite_ops;

/*
 * Time and pid alone repeat when a daemon restarts within a second with the
 * pid it had (PID 1 of a container), and INSERT OR REPLACE would then
 * overwrite a logged decision: the counter starts at a random point.
 */
static void seed_ids(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec << 20;
	}
	atomic_store(&D.id_counter, r);
}

void dlog_new_id(char *id, size_t len)
{
	uint64_t c = atomic_fetch_add(&D.id_counter, 1);

	adv_snprintf(id, len, "d-%llx-%x-%" PRIu64, (unsigned long long)time(NULL),
		     (unsigned)getpid(), c);
}

/* Any failure: count what was lost, and say so once a minute at most. */
static void dlog_failed(const char *why, size_t lost)
{
	time_t now = time(NULL);

	F.lost += lost;
	atomic_fetch_add(&D.dropped, lost);
	if (F.failing && now < F.last_report + DLOG_REPORT_EVERY_S)
		return;
	msg_log(LOG_ERR, "decision log %s: %s; decisions are still answered, %" PRIu64
		" of them not recorded so far (reported at most once a minute)", store->where(),
		why, F.lost);
	F.failing = true;
	F.last_report = now;
}

static void dlog_recovered(void)
{
	if (!F.failing)
		return;
	msg_log(LOG_WARNING, "decision log %s: writing again; %" PRIu64 " decisions were not "
		"recorded while it failed", store->where(), F.lost);
	F.failing = false;
	F.lost = 0;
}

static void dlog_logged(uint64_t n)
{
	atomic_fetch_add(&D.logged, n);
}

/* What the stores reach of the core. */
static const struct dlog_env store_env = {
	.host = D.host,
	.logged = dlog_logged,
	.failed = dlog_failed,
	.recovered = dlog_recovered,
};

/*
 * Queue buffers are mapped, not malloc'ed: worker threads grow them and the
 * writer frees them, and once glibc's dynamic mmap threshold has risen past
 * their size they were carved from the workers' heaps and fragmented them
 * (measured: RSS 29 -> 85 MiB over 770,000 checks; mapped, a flat 13 MiB).
 */
static struct dlog_rec *buf_grow(struct dlog_rec *old, size_t old_cap, size_t cap)
{
	void *p = old ? mremap(old, old_cap * sizeof(*old), cap * sizeof(*old), MREMAP_MAYMOVE)
		      : mmap(NULL, cap * sizeof(*old), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void buf_free(struct dlog_rec *p, size_t cap)
{
	if (p && munmap(p, cap * sizeof(*p)) != 0)
		msg_log(LOG_ERR, "decision log: munmap: %s", strerror(errno));
}

/* Under D.lock: records up to seq are in the store (or counted lost); held answers may go. */
static void committed_locked(uint64_t seq)
{
	D.seq_committed = seq;
	atomic_store(&D.committed_pub, seq);
	pthread_cond_broadcast(&D.committed);
	if (D.on_commit)
		D.on_commit(seq);
}

/*
 * The file the log writes on this node: the SQLite log, or the spool in
 * front of MariaDB.
 */
static const char *local_file(void)
{
	return store == &dlog_spool_ops ? dlog_spool_file() : store->where();
}

/*
 * Free space on the log's file system against reserve_mb, once a second
 * at most (writer thread): below it, over-share users' checks are no
 * longer logged (issue 27), so that a flood cannot take the room others'
 * decisions need.
 */
static void check_space(void)
{
	static time_t next;
	char dir[4096], *slash;
	const char *f = local_file();
	struct statvfs vfs;
	time_t now = time(NULL);
	int reserve = atomic_load(&D.reserve_mb);
	bool low;

	if (now < next)
		return;
	next = now + 1;
	if (reserve <= 0 || !f || !*f) {
		atomic_store(&D.low_space, false);
		return;
	}
	adv_strlcpy(dir, f, sizeof(dir));
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		adv_strlcpy(dir, ".", sizeof(dir));
	if (statvfs(dir, &vfs) != 0)
		return;
	low = (double)vfs.f_bavail * (double)vfs.f_frsize < (double)reserve * DLOG_MIB;
	if (low != atomic_exchange(&D.low_space, low))
		msg_log(low ? LOG_WARNING : LOG_INFO, "decision log %s: %s (reserve_mb %d): %s", f,
			low ? "free space is under the reserve" : "free space is above the reserve again",
			reserve, low ? "checks of users over their share are answered and counted, "
			"not logged" : "logging every user's checks");
}

static int64_t time_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Under D.lock: the store's connection is the caller's alone (its writes,
 * pruning and size bound are not to run at once: one SQLite connection,
 * opened without a mutex).  Waits for a committer to finish.
 */
static void store_take_locked(void)
{
	while (D.committing)
		pthread_cond_wait(&D.idle, &D.lock);
	D.committing = true;
}

static void store_give_locked(void)
{
	D.committing = false;
	pthread_cond_broadcast(&D.idle);
}

/* A batch being committed: taken from the queue by its committer, the writer or a leader. */
struct batch {
	struct dlog_rec *recs;
	size_t n, cap;
	struct dlog_repeat *reps;
	size_t n_reps;
	uint64_t upto;
};

/* Under D.lock, the store taken, something queued: the batch is the caller's until batch_done_locked. */
static void batch_take_locked(struct batch *b)
{
	b->recs = D.queue;
	b->cap = D.cap;
	b->n = D.n;
	D.queue = D.spare;
	D.cap = D.spare_cap;
	D.n = 0;
	D.spare = NULL;
	D.spare_cap = 0;
	/* The repeats counted so far; slots find a fresh entry by the new generation. */
	b->reps = D.pending;
	b->n_reps = D.n_pending;
	D.pending = NULL;
	D.n_pending = D.cap_pending = 0;
	D.pending_gen++;
	b->upto = D.seq_queued;
}

/* Under D.lock, after store->write and committed_locked: the buffer is kept for the next. */
static void batch_done_locked(struct batch *b)
{
	free(b->reps);
	/* A burst (a slow disk, a checkpoint) grew the buffer: do not keep its peak for ever. */
	if (!D.spare && b->cap <= QUEUE_KEEP) {
		D.spare = b->recs;
		D.spare_cap = b->cap;
	} else {
		buf_free(b->recs, b->cap);
	}
}

static bool queued_locked(void)
{
	return D.n > 0 || D.n_pending > 0;
}

/*
 * Under D.lock, the store taken, something queued: commits the queue
 * (the lock released meanwhile) and releases the answers held for it.
 * The caller still has the store.  Every committer goes through here:
 * the writer, a leading worker, dlog_close.
 */
static void commit_queue_locked(void)
{
	struct batch b;

	batch_take_locked(&b);
	pthread_mutex_unlock(&D.lock);
	/* Committed (or spooled): either way it survives the daemon from here. */
	store->write(b.recs, b.n, b.reps, b.n_reps);
	pthread_mutex_lock(&D.lock);
	committed_locked(b.upto);
	batch_done_locked(&b);
}

/* Writer thread, D.lock held: runs fn with the store to itself (lock released meanwhile). */
static void with_store(void (*fn)(void))
{
	store_take_locked();
	pthread_mutex_unlock(&D.lock);
	fn();
	pthread_mutex_lock(&D.lock);
	store_give_locked();
}

static int prune_days;

static void do_prune(void)
{
	store->prune(prune_days);
}

/* The size bound and the disk reserve: after the writer's batches, and when a leader calls for them. */
static void maintain(void)
{
	store->enforce_size(atomic_load(&D.max_mb), atomic_load(&D.retention_days));
	check_space();
}

static void *writer_main(void *arg)
{
	time_t next_prune = 0;

	(void)arg;
	pthread_mutex_lock(&D.lock);
	for (;;) {
		struct timespec ts;
		bool maint;

		if (time(NULL) >= next_prune || atomic_exchange(&D.prune_asap, false)) {
			prune_days = atomic_load(&D.retention_days);
			with_store(do_prune);
			next_prune = time(NULL) + PRUNE_EVERY_S;
		}
		while ((!queued_locked() || D.committing) && !D.stop && !D.maint_due) {
			if (atomic_load(&D.prune_asap))
				break;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&D.wake, &D.lock, &ts);
			if (time(NULL) >= next_prune)
				break;
		}
		maint = D.maint_due;
		D.maint_due = false;
		store_take_locked();
		/* No batch window: answers wait for this commit (group commit);
		 * they go before any pruning. */
		if (queued_locked()) {
			commit_queue_locked();
			maint = true;
		}
		if (maint) {
			pthread_mutex_unlock(&D.lock);
			maintain();
			pthread_mutex_lock(&D.lock);
		}
		store_give_locked();
		if (D.stop && !queued_locked())
			break;
	}
	committed_locked(D.seq_queued);
	pthread_mutex_unlock(&D.lock);
	return NULL;
}

/*
 * Issue 27: group commit led by a worker.  The server's worker whose
 * answers wait for a commit makes it itself when none is running, on its
 * own thread: the writer thread is not woken for it, nor does it wake the
 * worker back (two thread switches an answer on a 2-core machine).
 * Records queued meanwhile are the next committer's: a leader that finds a
 * commit running leaves its records to it, and a committer that finishes
 * with records queued wakes the writer for them.
 */
bool dlog_lead(void)
{
	bool maint;

	pthread_mutex_lock(&D.lock);
	if (!D.running || D.committing || !queued_locked()) {
		pthread_mutex_unlock(&D.lock);
		return false;
	}
	D.committing = true;
	commit_queue_locked();
	store_give_locked();
	/* Pruning and the disk reserve are the writer's, ten times a second at most. */
	maint = time_ms() >= D.maint_at;
	if (maint) {
		D.maint_at = time_ms() + MAINT_EVERY_MS;
		D.maint_due = true;
	}
	if (queued_locked() || maint)
		pthread_cond_signal(&D.wake);
	pthread_mutex_unlock(&D.lock);
	return true;
}

void dlog_set_leaders(bool on)
{
	pthread_mutex_lock(&D.lock);
	D.leaders = on;
	/* Whatever waits now is the writer's. */
	if (!on && queued_locked())
		pthread_cond_signal(&D.wake);
	pthread_mutex_unlock(&D.lock);
}

/* $ADVISOR_HOSTNAME lets one machine's tests play several nodes. */
static void init_host(void)
{
	const char *env = getenv("ADVISOR_HOSTNAME");
	char *dot;

	if (env && *env) {
		adv_strlcpy(D.host, env, sizeof(D.host));
		return;
	}
	if (gethostname(D.host, sizeof(D.host)) != 0 || !D.host[0])
		adv_strlcpy(D.host, "localhost", sizeof(D.host));
	D.host[sizeof(D.host) - 1] = '\0';
	/* Short, as Slurm names its nodes (slurmd -N, NodeName). */
	if ((dot = strchr(D.host, '.')) && dot != D.host)
		*dot = '\0';
}

const char *dlog_host(void)
{
	if (!D.host[0])
		init_host();
	return D.host;
}

static int start_writer(char *err, size_t errlen)
{
	int rc;

	D.stop = false;
	rc = pthread_create(&D.thread, NULL, writer_main, NULL);
	if (rc) {
		adv_snprintf(err, errlen, "cannot start decision log writer: %s", strerror(rc));
		return -1;
	}
	D.running = true;
	return 0;
}

static void open_common(void)
{
	memset(&F, 0, sizeof(F));
	seed_ids();
	init_host();
	atomic_store(&D.prune_asap, false);
}

int dlog_open(const char *path, char *err, size_t errlen)
{
	store = &dlog_sqlite_ops;
	open_common();
	if (dlog_sqlite_open(path, &store_env, err, errlen) != 0 || start_writer(err, errlen) != 0) {
		store->close();
		return -1;
	}
	return 0;
}

int dlog_open_storage(const struct advconf *conf, const char *db_path, char *err,
		      size_t errlen)
{
	if (!conf || conf->storage != ADVCONF_MARIADB)
		return dlog_open(conf && conf->path[0] ? conf->path : db_path, err, errlen);
	store = &dlog_spool_ops;
	open_common();
	if (dlog_spool_open(conf, db_path, &store_env, err, errlen) != 0 ||
	    start_writer(err, errlen) != 0) {
		store->close();
		store = &dlog_sqlite_ops;
		return -1;
	}
	return 0;
}

void dlog_close(void)
{
	if (!D.running)
		return;
	pthread_mutex_lock(&D.lock);
	D.stop = true;
	pthread_cond_signal(&D.wake);
	pthread_mutex_unlock(&D.lock);
	pthread_join(D.thread, NULL);
	/* A leader still committing keeps the store until it is done; none after. */
	pthread_mutex_lock(&D.lock);
	store_take_locked();
	/* Queued by a worker after the writer's last batch: committed here. */
	if (queued_locked())
		commit_queue_locked();
	D.running = false;
	store_give_locked();
	pthread_mutex_unlock(&D.lock);
	store->close();
	store = &dlog_sqlite_ops;
	buf_free(D.queue, D.cap);
	D.queue = NULL;
	D.n = D.cap = 0;
	buf_free(D.spare, D.spare_cap);
	D.spare = NULL;
	D.spare_cap = 0;
	D.leaders = false;
	free(D.pending);
	D.pending = NULL;
	D.n_pending = D.cap_pending = 0;
	free(D.agg);
	D.agg = NULL;
	D.agg_used = 0;
	free(D.share);
	D.share = NULL;
}

/* Under D.lock. */
static void append_locked(const struct dlog_rec *rec)
{
	if (!D.running || D.n >= QUEUE_MAX) {
		atomic_fetch_add(&D.dropped, 1);
		return;
	}
	if (D.n == D.cap) {
		size_t cap = D.cap ? D.cap * 2 : 256;
		struct dlog_rec *q = buf_grow(D.queue, D.cap, cap);

		if (!q) {
			atomic_fetch_add(&D.dropped, 1);
			return;
		}
		D.queue = q;
		D.cap = cap;
	}
	D.queue[D.n] = *rec;
	if (!D.queue[D.n].host[0])
		adv_strlcpy(D.queue[D.n].host, D.host, sizeof(D.queue[D.n].host));
	D.n++;
	my_seq = ++D.seq_queued;
	if (D.n == 1 && D.n_pending == 0 && !D.leaders)
		pthread_cond_signal(&D.wake);
}

/*
 * Under D.lock: whether uid may add a row this minute (a decision, or a
 * what-if query: each has the share, so that a user's queries never fold
 * their submissions), counting it if so.
 * A user the table has no room for (4096 others wrote this minute) is
 * let through: the size bound still holds.
 */
static bool share_take(uint32_t uid, bool query, int64_t now)
{
	int64_t minute = now / 60;
	int limit = atomic_load(&D.user_rows_per_min);
	size_t i = ((uid * 2u + query) * 2654435761u) & (SHARE_SLOTS - 1);

	if (limit <= 0)
		return true;
	if (!D.share && !(D.share = calloc(SHARE_SLOTS, sizeof(*D.share))))
		return true;
	for (size_t n = 0; n < SHARE_SLOTS; n++, i = (i + 1) & (SHARE_SLOTS - 1)) {
		struct share_slot *sl = &D.share[i];

		if (sl->minute == minute && (sl->uid != uid || sl->query != query))
			continue;
		if (sl->minute != minute) {
			sl->uid = uid;
			sl->query = query;
			sl->minute = minute;
			sl->rows = 0;
		}
		if (sl->rows >= (uint32_t)limit)
			return false;
		sl->rows++;
		return true;
	}
	return true;
}

void dlog_append(const struct dlog_rec *rec)
{
	pthread_mutex_lock(&D.lock);
	/* A what-if query beyond its user's share is answered, not logged. */
	if (rec->query && D.running && !rec->exempt && !share_take(rec->uid, true, rec->time))
		atomic_fetch_add(&D.shed, 1);
	else
		append_locked(rec);
	pthread_mutex_unlock(&D.lock);
}

/* ---- aggregation (issue 14) ----------------------------------------------------- */

struct hash2 {
	uint64_t h1, h2;
};

/* FNV-1a and a multiply-xorshift mix over the same bytes: two unrelated 64-bit hashes. */
static void hash_bytes(struct hash2 *h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h->h1 = (h->h1 ^ p[i]) * 1099511628211ull;
		h->h2 = (h->h2 ^ p[i]) * 0xff51afd7ed558ccdull;
		h->h2 ^= h->h2 >> 29;
	}
}

static void hash_str(struct hash2 *h, const char *s)
{
	hash_bytes(h, s, strlen(s) + 1);   /* with its NUL: fields cannot run together */
}

static void hash_int(struct hash2 *h, int64_t v)
{
	hash_bytes(h, &v, sizeof(v));
}

static struct hash2 hash_init(char tag)
{
	struct hash2 h = { 1469598103934665603ull, 0x9e3779b97f4a7c15ull };

	hash_bytes(&h, &tag, 1);
	return h;
}

/* The content that makes two checks the same record; coarse: what `report` counts. */
static struct hash2 rec_key(const struct dlog_rec *r, bool coarse)
{
	struct hash2 h = hash_init(coarse ? 'c' : 'r');

	hash_int(&h, r->uid);
	hash_int(&h, r->context);
	hash_int(&h, r->verdict);
	hash_int(&h, r->mode);
	/* A partition the policy does not know is the user's word: one label. */
	hash_str(&h, r->partition_other ? "_other" : r->partition);
	hash_str(&h, r->codes);
	hash_str(&h, r->severities);
	hash_str(&h, r->unenforced);
	hash_str(&h, r->exempt_by);
	if (coarse)
		return h;
	hash_int(&h, r->job_id);
	hash_int(&h, r->gpus);
	hash_int(&h, r->nodes);
	hash_str(&h, r->parent);
	hash_str(&h, r->gpu);
	hash_str(&h, r->model);
	hash_str(&h, r->layout);
	hash_str(&h, r->workload);
	return h;
}

static bool slot_live(const struct agg_slot *s, int64_t now)
{
	return s->start && now < s->start + DLOG_AGG_WINDOW_S;
}

/*
 * The live slot of key k, or NULL and in *room a slot it may take (an empty
 * or expired one on its probe path; NULL when the table is full).
 */
static struct agg_slot *agg_find(struct hash2 k, int64_t now, struct agg_slot **room)
{
	size_t i = k.h1 & (AGG_SLOTS - 1);

	*room = NULL;
	for (size_t n = 0; n < AGG_SLOTS; n++, i = (i + 1) & (AGG_SLOTS - 1)) {
		struct agg_slot *s = &D.agg[i];

		if (!s->start) {
			if (!*room)
				*room = s;
			return NULL;
		}
		if (!slot_live(s, now)) {
			if (!*room)
				*room = s;
			continue;
		}
		if (s->h1 == k.h1 && s->h2 == k.h2)
			return s;
	}
	return NULL;
}

static struct agg_slot *agg_take(struct agg_slot *s, struct hash2 k, int64_t now, uint32_t uid)
{
	if (!s->start)
		D.agg_used++;
	memset(s, 0, sizeof(*s));
	s->h1 = k.h1;
	s->h2 = k.h2;
	s->start = now;
	s->uid = uid;
	s->gen = D.pending_gen - 1;
	return s;
}

/* Expired slots never become empty by themselves: drop them once the table fills. */
static void agg_compact(int64_t now)
{
	struct agg_slot *old = D.agg, *room;

	if (D.agg_used * 4 < AGG_SLOTS * 3 || now < D.agg_next_compact)
		return;
	/* Full of live rows: they expire within the window, look again in a second. */
	D.agg_next_compact = now + 1;
	if (!(D.agg = calloc(AGG_SLOTS, sizeof(*D.agg)))) {
		D.agg = old;
		return;
	}
	D.agg_used = 0;
	for (size_t i = 0; i < AGG_SLOTS; i++) {
		struct hash2 k = { old[i].h1, old[i].h2 };

		if (!slot_live(&old[i], now))
			continue;
		(void)agg_find(k, now, &room);
		if (room) {
			D.agg_used++;
			*room = old[i];
		}
	}
	free(old);
}

/* Under D.lock: a zeroed entry of the next batch's repeats for row id, or NULL. */
static struct dlog_repeat *pending_new(const char *id)
{
	struct dlog_repeat *e;

	if (D.n_pending == D.cap_pending) {
		size_t cap = D.cap_pending ? D.cap_pending * 2 : 16;
		struct dlog_repeat *p = realloc(D.pending, cap * sizeof(*p));

		if (!p)
			return NULL;
		D.pending = p;
		D.cap_pending = cap;
	}
	e = &D.pending[D.n_pending];
	memset(e, 0, sizeof(*e));
	adv_strlcpy(e->id, id, DLOG_ID_MAX);
	return e;
}

/* Counts one more repeat of s for the writer's next batch. */
static bool agg_repeat(struct agg_slot *s)
{
	if (s->gen != D.pending_gen) {
		if (!pending_new(s->id))
			return false;
		s->gen = D.pending_gen;
		s->pending_idx = (uint32_t)D.n_pending++;
		if (D.n_pending == 1 && D.n == 0 && !D.leaders)
			pthread_cond_signal(&D.wake);
	}
	D.pending[s->pending_idx].n++;
	my_seq = ++D.seq_queued;
	return true;
}

/*
 * Under D.lock, D.agg allocated: rec makes a new row.  Within its user's
 * share it is queued; beyond, it is folded into the user's overflow row of
 * its verdict for the window (made by the first such check), or, when the
 * disk is under its reserve, counted and not logged at all.  True when rec
 * made no row of its own (rec->id: the overflow row's when folded).
 */
static bool new_row_locked(struct dlog_rec *rec, int64_t now)
{
	struct agg_slot *s, *room;
	struct hash2 k;

	if (rec->exempt || share_take(rec->uid, false, now)) {
		append_locked(rec);
		return false;
	}
	if (atomic_load(&D.low_space)) {
		atomic_fetch_add(&D.shed, 1);
		return true;
	}
	k = hash_init('o');
	hash_int(&k, rec->uid);
	hash_int(&k, rec->verdict);
	s = agg_find(k, now, &room);
	if (s && agg_repeat(s)) {
		adv_strlcpy(rec->id, s->id, sizeof(rec->id));
		return true;
	}
	if (!s && room)
		adv_strlcpy(agg_take(room, k, now, rec->uid)->id, rec->id, DLOG_ID_MAX);
	append_locked(rec);
	return false;
}

bool dlog_aggregate(struct dlog_rec *rec, bool open)
{
	int64_t now = rec->time;
	struct hash2 k = rec_key(rec, false), ck;
	struct agg_slot *s, *room, *counter = NULL, *croom;
	bool folded = false;

	/* Here too: the caller writes the JSON line from rec. */
	if (!rec->host[0])
		adv_strlcpy(rec->host, D.host, sizeof(rec->host));
	pthread_mutex_lock(&D.lock);
	if (!D.running) {
		append_locked(rec);      /* counts it as dropped */
		pthread_mutex_unlock(&D.lock);
		return false;
	}
	if (!D.agg && !(D.agg = calloc(AGG_SLOTS, sizeof(*D.agg)))) {
		append_locked(rec);
		pthread_mutex_unlock(&D.lock);
		return false;
	}
	agg_compact(now);
	s = agg_find(k, now, &room);
	/* Within budget, a check only joins a row its user's flood opened. */
	if (!s && !open) {
		folded = new_row_locked(rec, now);
		pthread_mutex_unlock(&D.lock);
		return folded;
	}
	if (!s) {
		/* A new row for this uid: past DLOG_AGG_DISTINCT of them, only the report's fields count. */
		ck = hash_init('u');
		hash_int(&ck, rec->uid);
		counter = agg_find(ck, now, &croom);
		if (!counter && croom)
			counter = agg_take(croom, ck, now, rec->uid);
		if (counter && counter->distinct >= DLOG_AGG_DISTINCT)
			k = rec_key(rec, true);
		/* Again: the counter may have taken the slot found for the row. */
		s = agg_find(k, now, &room);
	}
	if (s && agg_repeat(s)) {
		adv_strlcpy(rec->id, s->id, sizeof(rec->id));
		folded = true;
	} else if (!s) {
		char id[DLOG_ID_MAX];

		adv_strlcpy(id, rec->id, sizeof(id));
		folded = new_row_locked(rec, now);
		/* Its own row: later repeats of the same content fold into it
		 * (looked up again: an overflow row may have taken the slot). */
		if (!folded && !agg_find(k, now, &room) && room) {
			adv_strlcpy(agg_take(room, k, now, rec->uid)->id, id, DLOG_ID_MAX);
			if (counter)
				counter->distinct++;
		}
	} else {
		folded = new_row_locked(rec, now);   /* no memory to count a repeat */
	}
	pthread_mutex_unlock(&D.lock);
	return folded;
}

uint64_t dlog_take_mine(void)
{
	uint64_t s = my_seq;

	my_seq = 0;
	return s;
}

uint64_t dlog_committed(void)
{
	return atomic_load(&D.committed_pub);
}

void dlog_on_commit(void (*fn)(uint64_t seq))
{
	pthread_mutex_lock(&D.lock);
	D.on_commit = fn;
	pthread_mutex_unlock(&D.lock);
}

void dlog_set_retention(int days)
{
	/* At start (0 -> the policy's) and on a reload that changes it: prune now. */
	if (atomic_exchange(&D.retention_days, days) != days) {
		atomic_store(&D.prune_asap, true);
		pthread_cond_signal(&D.wake);
	}
}

void dlog_set_limits(int max_mb, int user_rows_per_min, int reserve_mb)
{
	atomic_store(&D.max_mb, max_mb);
	atomic_store(&D.user_rows_per_min, user_rows_per_min);
	atomic_store(&D.reserve_mb, reserve_mb);
}

uint64_t dlog_bytes(void)
{
	return store->bytes();
}

void dlog_counters(uint64_t *queued, uint64_t *logged, uint64_t *dropped, uint64_t *shed)
{
	pthread_mutex_lock(&D.lock);
	*queued = D.n;
	pthread_mutex_unlock(&D.lock);
	*logged = atomic_load(&D.logged);
	*dropped = atomic_load(&D.dropped);
	*shed = atomic_load(&D.shed);
}

static void wait_committed(void)
{
	struct timespec ts;
	uint64_t want;

	/* What this thread's worker queued is committed by a leader: be it. */
	(void)dlog_lead();
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2;
	pthread_mutex_lock(&D.lock);
	want = D.seq_queued;
	while (D.running && D.seq_committed < want) {
		if (pthread_cond_timedwait(&D.committed, &D.lock, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&D.lock);
}

const char *dlog_where(const char **spool)
{
	*spool = store == &dlog_spool_ops ? dlog_spool_file() : NULL;
	return store->where();
}

int dlog_query(const struct dlog_filter *f, struct dlog_rec **out, size_t *n,
	       char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	wait_committed();
	return store->query(f, out, n, err, errlen);
}

/* Whether the space-separated codes hold code. */
static bool codes_has(const char *codes, const char *code)
{
	size_t n = strlen(code);

	for (const char *p = codes; (p = strstr(p, code)) != NULL; p += n)
		if ((p == codes || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

/* Queues that submission id is job_id's now (dlog_confirm), under D.lock. */
static bool bind_locked(const char *id, uint32_t job_id)
{
	struct dlog_repeat *e = pending_new(id);

	if (!e)
		return false;
	e->bind_job = job_id;
	D.n_pending++;
	++D.seq_queued;
	pthread_cond_signal(&D.wake);
	return true;
}

/*
 * One confirmation at a time, each from the committed log after the
 * previous one's binding is committed: two jobs naming one submission at
 * once cannot both be vouched for.  Node checks are one per step, so this
 * costs them a commit at most, and never the submissions.
 */
static pthread_mutex_t confirm_lock = PTHREAD_MUTEX_INITIALIZER;

/* dlog_confirm's body; submission: job_submit's, before the job has an id. */
static enum dlog_confirm_rc confirm(const char *id, uint32_t job_id, uint32_t uid,
				    const char *digest, struct dlog_rec *parent, bool submission)
{
	enum dlog_confirm_rc rc;
	char err[256];
	bool bound;

	memset(parent, 0, sizeof(*parent));
	if (!store->lookup || !D.running)
		return DLOG_CONFIRM_CANNOT_TELL;
	pthread_mutex_lock(&confirm_lock);
	wait_committed();
	switch (store->lookup(id, parent, err, sizeof(err))) {
	case 1:
		break;
	case 0:
		rc = DLOG_CONFIRM_NOT_FOUND;
		goto out;
	default:
		rc = DLOG_CONFIRM_CANNOT_TELL;
		goto out;
	}
	if (parent->context == ADV_CTX_ADVISORCTL || parent->uid != uid)
		rc = DLOG_CONFIRM_NOT_FOUND;        /* another user's is not said to exist */
	else if (parent->verdict == ADV_REJECT)
		rc = DLOG_CONFIRM_REJECTED;
	else if (!parent->digest[0] || codes_has(parent->codes, "SCRIPT_TRUNCATED"))
		rc = DLOG_CONFIRM_NO_DIGEST;
	else if (!digest || strcmp(digest, parent->digest) != 0)
		rc = DLOG_CONFIRM_OTHER_TEXT;
	else if (submission ? parent->job_id != 0
			    : !job_id || (parent->job_id && parent->job_id != job_id))
		rc = DLOG_CONFIRM_OTHER_JOB;
	else
		rc = DLOG_CONFIRM_YES;
	/*
	 * Issue 30: a submission made without the job's whole text (sbatch
	 * on a pipe, --wrap) vouches for nothing, yet it is the job's, and
	 * history --job lists it: the first job of its user to name it gets
	 * it, as a confirmed one does; the answer stays NO_DIGEST.
	 */
	if ((rc != DLOG_CONFIRM_YES && rc != DLOG_CONFIRM_NO_DIGEST) || parent->job_id || !job_id ||
	    submission)
		goto out;
	/* First use: the submission is this job's from now on, committed before the answer. */
	pthread_mutex_lock(&D.lock);
	bound = bind_locked(id, job_id);
	pthread_mutex_unlock(&D.lock);
	if (!bound) {
		if (rc == DLOG_CONFIRM_YES)
			rc = DLOG_CONFIRM_CANNOT_TELL;
		goto out;
	}
	wait_committed();
	parent->job_id = job_id;
out:
	pthread_mutex_unlock(&confirm_lock);
	return rc;
}

enum dlog_confirm_rc dlog_confirm(const char *id, uint32_t job_id, uint32_t uid,
				  const char *digest, struct dlog_rec *parent)
{
	return confirm(id, job_id, uid, digest, parent, false);
}

enum dlog_confirm_rc dlog_confirm_submission(const char *id, uint32_t uid, const char *digest,
					     struct dlog_rec *parent)
{
	return confirm(id, 0, uid, digest, parent, true);
}

const char *dlog_confirm_why(enum dlog_confirm_rc rc)
{
	static const char *const why[DLOG_CONFIRM_COUNT] = {
		[DLOG_CONFIRM_YES] = "confirmed",
		[DLOG_CONFIRM_NOT_FOUND] = "is not a decision of this job's user in the log"
					   " (made up, another user's, pruned, or made by another"
					   " advisord)",
		[DLOG_CONFIRM_REJECTED] = "is a rejected submission",
		[DLOG_CONFIRM_NO_DIGEST] = "was not made from the job's whole text",
		[DLOG_CONFIRM_OTHER_TEXT] = "was made for another script or command",
		[DLOG_CONFIRM_OTHER_JOB] = "was used by another job already",
		[DLOG_CONFIRM_CANNOT_TELL] = "cannot be confirmed without waiting for the log's"
					     " server",
	};
	_Static_assert(ADV_ARRAY_SIZE(why) == DLOG_CONFIRM_COUNT, "one reason per code");

	return (unsigned)rc < DLOG_CONFIRM_COUNT && why[rc] ? why[rc] : "unknown";
}

int dlog_scan(const struct dlog_filter *f, void (*fn)(const struct dlog_rec *r, void *ctx),
	      void *ctx, char *err, size_t errlen)
{
	wait_committed();
	return store->scan(f, fn, ctx, err, errlen);
}
