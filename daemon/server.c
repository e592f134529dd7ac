/*
 * server.c - epoll event loops on the daemon's unix socket and, with
 * --listen, on a TCP socket whose clients authenticate with MUNGE (issue 13:
 * the credential's uid and gid replace SO_PEERCRED; handler.c decodes it).
 * TCP connections get the same frame limits, timeouts, turns and budgets as
 * unix ones: they are the same struct conn with peer.tcp set.
 *
 * A few worker threads (one per core by default) each run an epoll loop.
 * All of them watch the listening socket with EPOLLEXCLUSIVE, so the kernel
 * wakes one worker per incoming connection, and the worker that accepted a
 * connection serves it to the end: no locks on the connection path.  A
 * request is answered inline (the engine needs microseconds), so a client
 * that connects and never sends, or sends half a frame, only occupies a file
 * descriptor until its timeout: it never delays anyone else.
 *
 * A client may pipeline requests and read slowly or not at all: frames are
 * answered only while less than OUT_HIGH bytes of answers wait for it, the
 * rest wait in the input buffer and the socket (where the kernel bounds
 * them), so what the daemon holds per connection stays bounded.
 *
 * Out of file descriptors (EMFILE, ENFILE), accept() fails while the
 * listening socket stays readable: a worker that kept polling it would spin
 * at 100% CPU and log a line per failed accept.  It stops watching the
 * socket for ACCEPT_PAUSE_MS instead (closing connections free descriptors
 * meanwhile; new clients wait in the backlog), and the failure is logged at
 * most once a minute.
 *
 * Timeouts use two lists per worker, each ordered by deadline because each
 * has one fixed timeout: connections waiting between requests (idle) and
 * connections in the middle of a frame or of an answer (busy).  Expiry is a
 * look at two list heads per loop.
 *
 * Fairness (issue 14): one user over budget must not raise the others' p99
 * above 2 ms.  A connection is served in turns, like a round-robin
 * scheduler: a turn answers at most TURN_FRAMES frames, and a connection
 * with more complete frames waits in its worker's run queue, not reading
 * its socket meanwhile (the kernel's buffer then pushes back on the
 * client).  A connection whose user is over budget (the handler says so
 * after each frame; at accept, the budget is looked at) is "low": it gets
 * one frame a turn, and low turns run only while no other connection of
 * the worker waits, one at a time between looks at epoll.  So a frame of
 * another user waits for at most the one low frame in progress, whatever
 * the flood.  Low turns also get at most LOW_SLICE_US of every LOW_PERIOD_US
 * of a worker's time: on a small machine a worker busy with a flooder
 * would otherwise take the CPU the other users' clients and their workers
 * need (test_fair.sh on 2 cores: p99 3.6 ms for the others uncapped, 1.4 ms
 * with a 200 us slice, under 1 ms with 100 us).
 * The flooder's plugin checks are still all answered, only at a pace.
 *
 * Caps (issue 20): one user holding thousands of idle connections must not
 * run the daemon out of descriptors.  Identified connections (unix ones at
 * accept, SO_PEERCRED; TCP ones once their first credential verifies) are
 * counted per uid in one table shared by the workers: at most max_per_user
 * for a uid and max_conns in all, plus a reserve for privileged uids (root,
 * slurm, the policy's admins; handler_privileged()).  At a cap the accepting
 * worker first closes an idle connection of its own: the caller's oldest
 * when the caller is at its own cap, else the oldest of the heaviest user
 * (who must hold more than the caller).  With none to close, the new
 * connection is refused: it gets ERR_UNAVAILABLE with the reason as the
 * answer to its first request (a few such refusals are held per worker,
 * each for at most auth_timeout_ms; beyond that it is closed at once), and
 * the reason is logged at most every 10 s.
 *
 * Before its first request is decoded, a connection may send a frame of at
 * most FIRST_FRAME_MAX bytes, which fits the inline buffer: nothing is
 * allocated for a client the daemon does not know yet (clients with a
 * bigger first request send a `status` first).  TCP connections before
 * their credential verifies are at most max_unauth in all and are closed
 * after auth_timeout_ms (list NEW).  After a burst of closes the workers
 * give freed memory back to the system (malloc_trim).
 *
 * Socket activation (issue 30): under advisord.socket, systemd holds the
 * listening unix socket and passes it (sd_listen_fds); server_adopt()
 * checks it is the --socket path and takes the same lock as a socket of
 * our own, so connections made while the daemon restarts wait in the
 * socket's backlog instead of being refused.  The socket file is then
 * systemd's: advisord never removes it.
 *
 * MUNGE (issue 20): the calls a TCP connection's hello and credential
 * need are made on authq.c's threads, never on a worker: the connection
 * stops reading (WANT_NONE, its frame kept) until the job comes back on
 * the worker's sink, and is closed at auth_timeout_ms from accept if it
 * has not authenticated by then.  A hung munged so stalls only TCP
 * clients that have not authenticated yet.
 *
 * Acknowledged means durable (issue 20): a frame whose answer reports a
 * logged decision (the handler queued a record: dlog_take_mine) holds the
 * connection's answers until the decision log's writer has committed that
 * record.  The connection stops reading meanwhile (WANT_NONE, as during a
 * MUNGE call) and waits in its worker's held list; the writer's commit
 * hook writes the eventfd of each worker that waits (one write per commit
 * and worker, not per connection), and the worker sends what was
 * committed.  With group commit an answer waits about one commit, and a
 * kill -9 cannot take a decision a client was told about.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <pwd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "advisor.pb-c.h"
#include "authq.h"
#include "dlog/dlog.h"
#include "handler.h"
#include "msg.h"
#include "server.h"
#include "stats.h"
#include "util.h"
#include "wire/endpoint.h"
#include "wire/wire.h"

#define FIRST_FRAME_MAX 4096       /* a request before the first is decoded (WIRE_FIRST_FRAME_MAX) */
#define SMALL_IN (FIRST_FRAME_MAX + 4)
#define REFUSING_MAX 32            /* refused connections held per worker for their answer */
#define UID_SLOTS 8192
#define PRIV_CACHE_MS 60000
#define CAP_REPORT_MS 10000
#define TRIM_CLOSES 256            /* closes since the last malloc_trim that call for one */
#define TRIM_EVERY_MS 1000
#define MAX_EVENTS 128
#define ACCEPT_BATCH 64
#define FREE_CONNS 256
#define OUT_HIGH (64 * 1024)
#define ACCEPT_PAUSE_MS 100
#define ACCEPT_REPORT_MS 60000
#define TURN_FRAMES 8              /* frames a connection is answered per turn */
#define LOW_PERIOD_US 1000         /* low turns: at most LOW_SLICE_US in every period */
#define LOW_SLICE_US 100
#define AUTHQ_THREADS 2            /* MUNGE calls at once (issue 20) */

enum { LIST_NONE = 0, LIST_IDLE, LIST_BUSY, LIST_NEW };
enum { WANT_IN = 0, WANT_OUT, WANT_NONE };

struct conn {
	int fd;
	struct peer peer;
	uint8_t *in;
	size_t in_len, in_cap;
	struct outbuf out;
	size_t out_off;
	bool closing;          /* close once out is flushed */
	int want;              /* WANT_IN, WANT_OUT or WANT_NONE (waiting for a turn) */
	int list;
	long long deadline;
	struct conn *prev, *next;
	/* Run queue: complete frames wait for a turn (issue 14). */
	bool low;              /* its user was over budget at the last frame */
	bool queued, in_low;   /* in a run queue; which one */
	struct conn *rq_prev, *rq_next;
	/* Caps (issue 20). */
	bool counted;          /* counted under peer.uid in the uid table */
	bool unauth;           /* a TCP connection counted in S.unauth */
	bool first_done;       /* a request was decoded: frames up to WIRE_MAX_FRAME */
	bool refusing;         /* over a cap: its first frame gets refuse_msg, then it closes */
	bool evicted;          /* closed for another: reaped after the event batch */
	struct authq_job *job; /* a MUNGE call in flight for its first frame (issue 20) */
	uint64_t hold;         /* answers wait until the decision log committed this (issue 20) */
	bool held;             /* in the worker's held list */
	struct conn *hprev, *hnext;
	long long born;        /* accept time, ms */
	char refuse_msg[192];
	uint8_t small[SMALL_IN];
};

struct clist {
	struct conn *head, *tail;
};

struct runq {
	struct conn *head, *tail;
	size_t n;
};

struct worker {
	pthread_t thread;
	int epfd, wakefd;
	int commitfd;              /* the decision log's writer committed (issue 20) */
	atomic_bool want_commit;   /* connections are held: the writer should say so */
	struct conn *held;         /* connections whose answers wait for a commit */
	struct authq_sink sink;    /* MUNGE jobs come back here (issue 20) */
	struct handler h;
	struct clist idle, busy, fresh;   /* fresh: LIST_NEW, deadline born + auth_timeout_ms */
	struct runq ready, low;    /* connections waiting for a turn */
	long long low_period_end, low_spent;   /* microseconds, CLOCK_MONOTONIC */
	int nconns, nrefusing;
	unsigned closes;           /* since the last malloc_trim */
	long long trimmed_at;
	struct conn *free_list;
	struct conn *zombies;      /* evicted, closed once the event batch is done */
	int n_free;
	bool draining;
	long long drain_deadline;
	long long accept_resume;   /* > 0: not watching the listener until then */
};

static struct {
	int lfd;
	int tfd;                   /* TCP listener, -1 without --listen */
	struct server_opts o;
	struct worker *w;
	int nw;
	bool authq;                /* authq_start() done */
} S = { .lfd = -1, .tfd = -1 };

/* Out-of-descriptor reports, shared by the workers: the last one and the failures since. */
static atomic_llong accept_reported_at = -ACCEPT_REPORT_MS;
static atomic_ulong accept_failures;

/* Connections per uid, shared by the workers (issue 20). */
struct uslot {
	uid_t uid;
	bool used;
	int n;                     /* identified connections open */
	signed char priv;          /* handler_privileged(), -1 unknown */
	long long priv_at;
};
static struct {
	pthread_mutex_t lock;
	struct uslot slot[UID_SLOTS];
	int used;                  /* slots in use */
	int total;                 /* identified connections counted */
	int unauth;                /* TCP connections not yet authenticated */
} U = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Cap events, logged at most every CAP_REPORT_MS. */
static atomic_llong cap_reported_at = -CAP_REPORT_MS;
static atomic_ulong cap_refused, cap_evicted, cap_unauth_closed, cap_auth_expired;

static __thread struct worker *cur_worker;

/* Tags for the fds that are not connections. */
static char tag_listen, tag_listen_tcp, tag_wake, tag_munge, tag_commit;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- socket setup ------------------------------------------------------------ */

static int make_dirs(const char *dir)
{
	char tmp[PATH_MAX];

	adv_strlcpy(tmp, dir, sizeof(tmp));
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0755) != 0)
		return errno == EEXIST ? 0 : -1;
	/* Only a directory we made gets our mode; an admin's stays as it is. */
	return chmod(tmp, 0755);
}

/*
 * The lock next to the socket (PATH.lock, with the holder's pid): the
 * lock, not the socket file, says whether a daemon is alive.  An adopted
 * socket (systemd's) is locked too, so that an advisord started by hand on
 * the same path refuses instead of taking the socket file for a stale one.
 */
static int take_lock(const char *path, char *err, size_t errlen)
{
	char lockpath[PATH_MAX + 8];
	int lfd;

	adv_snprintf(lockpath, sizeof(lockpath), "%s.lock", path);
	lfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0) {
		adv_snprintf(err, errlen, "cannot open %s: %s", lockpath, strerror(errno));
		return -1;
	}
	if (flock(lfd, LOCK_EX | LOCK_NB) != 0) {
		char pid[32] = "";
		ssize_t n = pread(lfd, pid, sizeof(pid) - 1, 0);

		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		adv_snprintf(err, errlen, "another advisord%s%s is already serving %s; stop it "
			     "first or choose another --socket", pid[0] ? " (pid " : "",
			     pid[0] ? strcat(pid, ")") : "", path);
		close(lfd);
		return -1;
	}
	if (ftruncate(lfd, 0) == 0) {
		char pid[32];
		size_t n = adv_snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

		if (pwrite(lfd, pid, n, 0) < 0)
			msg_log(LOG_WARNING, "cannot write pid to %s: %s", lockpath, strerror(errno));
	}
	return lfd;
}

int server_listen(const char *path, int *lock_fd, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX];
	struct stat st;
	int fd, lfd;

	*lock_fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		adv_snprintf(err, errlen, "socket path %s is longer than %zu bytes", path,
			     sizeof(sa.sun_path) - 1);
		return -1;
	}
	adv_strlcpy(dir, path, sizeof(dir));
	if (make_dirs(dirname(dir)) != 0) {
		adv_snprintf(err, errlen, "cannot create the socket directory for %s: %s", path,
			     strerror(errno));
		return -1;
	}
	if ((lfd = take_lock(path, err, errlen)) < 0)
		return -1;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			adv_snprintf(err, errlen, "%s exists and is not a socket; not removing it", path);
			goto fail;
		}
		/* We hold the lock, so whoever made this socket is gone. */
		msg_log(LOG_INFO, "replacing stale socket %s", path);
		if (unlink(path) != 0) {
			adv_snprintf(err, errlen, "cannot remove stale socket %s: %s", path,
				     strerror(errno));
			goto fail;
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		adv_snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* 0666: every user's sbatch and advisorctl connect; the daemon learns
	 * who they are from SO_PEERCRED, not from who may open the file.
	 * advisord.socket's SocketMode= is the same. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(path, 0666) != 0 || listen(fd, SOMAXCONN) != 0) {
		adv_snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		goto fail;
	}
	*lock_fd = lfd;
	return fd;
fail:
	close(lfd);
	return -1;
}

#ifdef HAVE_LIBSYSTEMD
int server_adopt(int fd, const char *path, int *lock_fd, char *err, size_t errlen)
{
	int flags;

	*lock_fd = -1;
	if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
		adv_snprintf(err, errlen, "the socket systemd passed (fd %d) is not a listening unix "
			     "stream socket: advisord.socket needs ListenStream=%s", fd, path);
		return -1;
	}
	/* The plugin looks at --socket: serving another path would turn every
	 * job away while advisord looks healthy. */
	if (sd_is_socket_unix(fd, SOCK_STREAM, 1, path, 0) <= 0) {
		struct sockaddr_un sa;
		socklen_t len = sizeof(sa);

		memset(&sa, 0, sizeof(sa));
		if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
			sa.sun_path[0] = '\0';
		sa.sun_path[sizeof(sa.sun_path) - 1] = '\0';
		adv_snprintf(err, errlen, "the socket systemd passed is %s, not --socket %s: make "
			     "advisord.socket's ListenStream= and advisord's --socket the same path",
			     sa.sun_path[0] ? sa.sun_path : "not a named socket", path);
		return -1;
	}
	/* The workers' loops never block on accept(): the same as our own socket. */
	if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
		adv_snprintf(err, errlen, "the socket systemd passed: fcntl: %s", strerror(errno));
		return -1;
	}
	if ((*lock_fd = take_lock(path, err, errlen)) < 0)
		return -1;
	return fd;
}
#endif

int server_listen_tcp(const char *addr, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res = NULL, *ai;
	struct endpoint ep;
	char port[8], why[160];
	int fd = -1, one = 1, rc;

	if (endpoint_split(addr, &ep, why, sizeof(why)) != 0) {
		adv_snprintf(err, errlen, "--listen: %s", why);
		return -1;
	}
	adv_snprintf(port, sizeof(port), "%d", ep.port);
	rc = getaddrinfo(ep.host, port, &hints, &res);
	if (rc != 0) {
		adv_snprintf(err, errlen, "--listen %s: %s", addr, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0)
			continue;
		/* A restarted daemon rebinds while old connections sit in TIME_WAIT. */
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0)
			break;
		rc = errno;
		close(fd);
		fd = -1;
		errno = rc;
	}
	freeaddrinfo(res);
	if (fd < 0)
		adv_snprintf(err, errlen, "cannot listen on %s: %s", addr, strerror(errno));
	return fd;
}

/* ---- connection lists -------------------------------------------------------- */

static struct clist *list_of(struct worker *w, int which)
{
	return which == LIST_IDLE ? &w->idle : which == LIST_BUSY ? &w->busy : &w->fresh;
}

static void list_remove(struct worker *w, struct conn *c)
{
	struct clist *l = list_of(w, c->list);

	if (c->list == LIST_NONE)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
	c->list = LIST_NONE;
}

static void list_append(struct worker *w, struct conn *c, int which, long long deadline)
{
	struct clist *l = list_of(w, which);

	c->list = which;
	c->deadline = deadline;
	c->prev = l->tail;
	c->next = NULL;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
}

/* Busy deadlines run from the first byte of a frame: trickling cannot extend them. */
static void set_timer(struct worker *w, struct conn *c)
{
	bool busy = c->in_len > 0 || c->out.len > c->out_off;

	/* Not yet known (TCP) or refused: the short deadline from accept, whatever it does. */
	if (c->refusing || c->unauth) {
		if (c->list != LIST_NEW) {
			list_remove(w, c);
			list_append(w, c, LIST_NEW, c->born + S.o.auth_timeout_ms);
		}
		return;
	}
	if (busy && c->list == LIST_BUSY)
		return;
	list_remove(w, c);
	if (busy)
		list_append(w, c, LIST_BUSY, now_ms() + S.o.read_timeout_ms);
	else
		list_append(w, c, LIST_IDLE, now_ms() + S.o.idle_timeout_ms);
}

/* ---- run queues --------------------------------------------------------------- */

static void rq_push(struct worker *w, struct conn *c)
{
	struct runq *q = c->low ? &w->low : &w->ready;

	if (c->queued)
		return;
	c->queued = true;
	c->in_low = c->low;
	c->rq_next = NULL;
	c->rq_prev = q->tail;
	if (q->tail)
		q->tail->rq_next = c;
	else
		q->head = c;
	q->tail = c;
	q->n++;
}

static void rq_remove(struct worker *w, struct conn *c)
{
	struct runq *q;

	if (!c->queued)
		return;
	q = c->in_low ? &w->low : &w->ready;
	if (c->rq_prev)
		c->rq_prev->rq_next = c->rq_next;
	else
		q->head = c->rq_next;
	if (c->rq_next)
		c->rq_next->rq_prev = c->rq_prev;
	else
		q->tail = c->rq_prev;
	c->rq_prev = c->rq_next = NULL;
	c->queued = false;
	q->n--;
}

static struct conn *rq_pop(struct worker *w, struct runq *q)
{
	struct conn *c = q->head;

	if (!c)
		return NULL;
	q->head = c->rq_next;
	if (q->head)
		q->head->rq_prev = NULL;
	else
		q->tail = NULL;
	c->rq_prev = c->rq_next = NULL;
	c->queued = false;
	q->n--;
	return c;
}

/* ---- connections ------------------------------------------------------------- */

static struct conn *conn_new(struct worker *w)
{
	struct conn *c = w->free_list;

	if (c) {
		w->free_list = c->next;
		w->n_free--;
	} else {
		c = malloc(sizeof(*c));
		if (!c)
			return NULL;
		c->out.data = NULL;
		c->out.cap = 0;
	}
	c->in = c->small;
	c->in_cap = SMALL_IN;
	c->in_len = 0;
	c->out.len = 0;
	c->out_off = 0;
	c->closing = false;
	c->want = WANT_IN;
	c->list = LIST_NONE;
	c->prev = c->next = NULL;
	c->low = c->queued = false;
	c->rq_prev = c->rq_next = NULL;
	c->counted = c->unauth = c->first_done = c->refusing = c->evicted = false;
	c->job = NULL;
	c->hold = 0;
	c->held = false;
	c->hprev = c->hnext = NULL;
	c->born = now_ms();
	c->refuse_msg[0] = '\0';
	return c;
}

/* ---- connection caps (issue 20) ------------------------------------------------ */

/* The uid's slot (U.lock held); NULL only when the table is full of live uids. */
static struct uslot *uslot_get(uid_t uid)
{
	size_t i = ((size_t)uid * 2654435761u) % UID_SLOTS;

	if (U.used > UID_SLOTS / 2) {
		/* Compact: drop the uids without a connection. */
		static struct uslot keep[UID_SLOTS];
		int n = 0;

		for (size_t k = 0; k < UID_SLOTS; k++)
			if (U.slot[k].used && U.slot[k].n > 0)
				keep[n++] = U.slot[k];
		memset(U.slot, 0, sizeof(U.slot));
		U.used = 0;
		for (int k = 0; k < n; k++) {
			size_t j = ((size_t)keep[k].uid * 2654435761u) % UID_SLOTS;

			while (U.slot[j].used)
				j = (j + 1) % UID_SLOTS;
			U.slot[j] = keep[k];
			U.used++;
		}
		if (U.used > UID_SLOTS / 2)
			return NULL;
	}
	for (size_t k = 0; k < UID_SLOTS; k++, i = (i + 1) % UID_SLOTS) {
		if (U.slot[i].used && U.slot[i].uid == uid)
			return &U.slot[i];
		if (!U.slot[i].used) {
			U.slot[i] = (struct uslot){ .uid = uid, .used = true, .priv = -1 };
			U.used++;
			return &U.slot[i];
		}
	}
	return NULL;
}

static int uid_count(uid_t uid)
{
	struct uslot *u = uslot_get(uid);

	return u ? u->n : 0;
}

static void uncount(struct conn *c)
{
	if (!c->counted && !c->unauth)
		return;
	pthread_mutex_lock(&U.lock);
	if (c->counted) {
		struct uslot *u = uslot_get(c->peer.uid);

		if (u && u->n > 0)
			u->n--;
		U.total--;
	}
	if (c->unauth)
		U.unauth--;
	pthread_mutex_unlock(&U.lock);
	c->counted = c->unauth = false;
}

/* handler_privileged() of the uid, cached a minute in its slot. */
static bool privileged(uid_t uid, gid_t gid)
{
	long long now = now_ms();
	struct uslot *u;
	bool yes;

	pthread_mutex_lock(&U.lock);
	u = uslot_get(uid);
	if (u && u->priv >= 0 && now - u->priv_at < PRIV_CACHE_MS) {
		yes = u->priv;
		pthread_mutex_unlock(&U.lock);
		return yes;
	}
	pthread_mutex_unlock(&U.lock);
	yes = handler_privileged(uid, gid);
	pthread_mutex_lock(&U.lock);
	if ((u = uslot_get(uid))) {
		u->priv = yes;
		u->priv_at = now;
	}
	pthread_mutex_unlock(&U.lock);
	return yes;
}

static void cap_report(void)
{
	long long now = now_ms(), last = atomic_load(&cap_reported_at);
	unsigned long r, e, u, x;

	if (now - last < CAP_REPORT_MS || !atomic_compare_exchange_strong(&cap_reported_at, &last, now))
		return;
	r = atomic_exchange(&cap_refused, 0);
	e = atomic_exchange(&cap_evicted, 0);
	u = atomic_exchange(&cap_unauth_closed, 0);
	x = atomic_exchange(&cap_auth_expired, 0);
	if (r || e || u || x)
		msg_log(LOG_WARNING, "connection caps: %lu refused, %lu idle closed for others, "
			"%lu TCP closed at the unauthenticated cap, %lu TCP closed without a good "
			"credential in %d ms (advisord.conf connections:; reported at most every %d s)",
			r, e, u, x, S.o.auth_timeout_ms, CAP_REPORT_MS / 1000);
}

static void conn_close(struct worker *w, struct conn *c);

/*
 * The idle connection of this worker to close for c: the oldest of c's own
 * uid (own), else the oldest of the heaviest uid holding more than c's.
 */
static struct conn *victim(struct worker *w, struct conn *c, bool own)
{
	struct conn *best = NULL;
	int best_n, mine;

	pthread_mutex_lock(&U.lock);
	mine = uid_count(c->peer.uid);
	best_n = own ? -1 : mine + 1;
	for (struct conn *v = w->idle.head; v; v = v->next) {
		int n;

		if (v == c || !v->counted || v->queued || v->evicted || v->out.len > v->out_off)
			continue;
		if (own) {
			if (v->peer.uid == c->peer.uid) {
				best = v;
				break;
			}
			continue;
		}
		n = uid_count(v->peer.uid);
		if (n > best_n) {
			best = v;
			best_n = n;
		}
	}
	pthread_mutex_unlock(&U.lock);
	return best;
}

/*
 * Counts c under its uid, closing an idle connection to make room when a
 * cap is reached; false with the reason in why when it cannot.
 */
static bool admit(struct worker *w, struct conn *c, char *why, size_t len)
{
	uid_t uid = c->peer.uid;
	bool priv = false, priv_known = false;

	for (int tries = 0; tries < 2; tries++) {
		struct uslot *u;
		struct conn *v;
		bool own;

		pthread_mutex_lock(&U.lock);
		u = uslot_get(uid);
		if (u && (u->n < S.o.max_per_user || (priv_known && priv)) &&
		    (U.total < S.o.max_conns || (priv_known && priv && U.total < S.o.max_conns + S.o.reserve))) {
			u->n++;
			U.total++;
			pthread_mutex_unlock(&U.lock);
			c->counted = true;
			return true;
		}
		own = u && u->n >= S.o.max_per_user;
		pthread_mutex_unlock(&U.lock);
		if (!priv_known) {
			priv = privileged(uid, c->peer.gid);
			priv_known = true;
			if (priv)
				continue;
		}
		/* Make room: the caller's own oldest idle one, or the heaviest user's. */
		v = victim(w, c, own && !priv);
		if (!v)
			break;
		atomic_fetch_add(&cap_evicted, 1);
		/* Its events may still be in this batch: close it after (reap_zombies). */
		list_remove(w, v);
		uncount(v);
		shutdown(v->fd, SHUT_RDWR);
		v->evicted = true;
		v->next = w->zombies;
		w->zombies = v;
	}
	{
		struct passwd pw, *r = NULL;
		char buf[1024];
		const char *name = getpwuid_r(uid, &pw, buf, sizeof(buf), &r) == 0 && r ? pw.pw_name : "?";
		int n;

		pthread_mutex_lock(&U.lock);
		n = uid_count(uid);
		pthread_mutex_unlock(&U.lock);
		if (n >= S.o.max_per_user && !priv)
			adv_snprintf(why, len, "too many connections: uid %u (%s) already holds %d, "
				     "the most one user may (advisord.conf connections: per_user); "
				     "close some and retry", (unsigned)uid, name, n);
		else
			adv_snprintf(why, len, "too many connections: the daemon holds %d, its limit "
				     "(advisord.conf connections: max); retry later", S.o.max_conns);
	}
	atomic_fetch_add(&cap_refused, 1);
	return false;
}

/* handler.c's hook: a TCP connection's first credential verified. */
static int admit_tcp(struct peer *p, char *err, size_t errlen)
{
	struct conn *c = (struct conn *)((char *)p - offsetof(struct conn, peer));
	struct worker *w = cur_worker;

	uncount(c);   /* no longer unauthenticated */
	if (!w || admit(w, c, err, errlen))
		return 0;
	return -1;
}

static void hold_unlink(struct worker *w, struct conn *c)
{
	if (!c->held)
		return;
	if (c->hprev)
		c->hprev->hnext = c->hnext;
	else
		w->held = c->hnext;
	if (c->hnext)
		c->hnext->hprev = c->hprev;
	c->hprev = c->hnext = NULL;
	c->held = false;
}

static void conn_close(struct worker *w, struct conn *c)
{
	hold_unlink(w, c);
	c->hold = 0;
	if (c->job) {
		authq_cancel(c->job);
		c->job = NULL;
	}
	handler_munge_clear(&c->peer.munge);
	list_remove(w, c);
	rq_remove(w, c);
	uncount(c);
	if (c->refusing)
		w->nrefusing--;
	close(c->fd);
	w->nconns--;
	w->closes++;
	if (c->in != c->small)
		free(c->in);
	/* Keep big answer buffers from living on in the free list. */
	if (c->out.cap > 64 * 1024)
		handler_outbuf_free(&c->out);
	if (w->n_free < FREE_CONNS) {
		c->next = w->free_list;
		w->free_list = c;
		w->n_free++;
	} else {
		handler_outbuf_free(&c->out);
		free(c);
	}
}

/* WANT_NONE: a connection waiting for its turn reads nothing more meanwhile. */
static int epoll_set(struct worker *w, struct conn *c, int want)
{
	struct epoll_event ev = {
		.events = want == WANT_OUT ? EPOLLOUT : want == WANT_IN ? EPOLLIN : 0,
		.data.ptr = c,
	};

	if (want == c->want)
		return 0;
	c->want = want;
	return epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Sends what is pending; false when the connection is dead. */
static bool flush_out(struct conn *c)
{
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	}
	c->out.len = c->out_off = 0;
	return true;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Makes room for a whole frame of total bytes (header included). */
static bool grow_in(struct conn *c, size_t total)
{
	uint8_t *p;

	if (total <= c->in_cap)
		return true;
	p = malloc(total);
	if (!p)
		return false;
	memcpy(p, c->in, c->in_len);
	if (c->in != c->small)
		free(c->in);
	c->in = p;
	c->in_cap = total;
	return true;
}

static bool out_full(const struct conn *c)
{
	return c->out.len - c->out_off >= OUT_HIGH;
}

/* A complete frame (or a header to refuse) waits in the input buffer. */
static bool frame_ready(const struct conn *c)
{
	uint32_t n;

	if (c->in_len < 4 || c->job)
		return false;
	n = be32(c->in);
	return n > (c->first_done ? WIRE_MAX_FRAME : FIRST_FRAME_MAX) || c->in_len - 4 >= (size_t)n;
}

/*
 * One turn: answers up to TURN_FRAMES complete frames of the input buffer
 * (one when the connection is low) while the answers fit under OUT_HIGH.
 */
static void process_frames(struct worker *w, struct conn *c)
{
	size_t off = 0;
	uint64_t seq;
	int frames = 0, rc;

	while (!c->closing && !out_full(c) && c->in_len - off >= 4 &&
	       frames < (c->low ? 1 : TURN_FRAMES)) {
		uint32_t n = be32(c->in + off);

		if (c->refusing && (n > FIRST_FRAME_MAX || c->in_len - off >= 4 + (size_t)n)) {
			handler_refuse(&w->h, ADVISOR__ERROR_CODE__ERR_UNAVAILABLE, c->refuse_msg, &c->out);
			c->closing = true;
			break;
		}
		if (n > (c->first_done ? WIRE_MAX_FRAME : FIRST_FRAME_MAX)) {
			char m[200];

			if (c->first_done)
				adv_snprintf(m, sizeof(m), "frame of %u bytes refused: the limit is %u bytes",
					     n, WIRE_MAX_FRAME);
			else
				adv_snprintf(m, sizeof(m), "first frame of %u bytes refused: until a "
					     "connection's first request is decoded%s, the limit is %u bytes",
					     n, c->peer.tcp ? " and its credential verified" : "",
					     FIRST_FRAME_MAX);
			handler_refuse(&w->h, ADVISOR__ERROR_CODE__ERR_TOO_LARGE, m, &c->out);
			c->closing = true;
			break;
		}
		if (c->in_len - off < 4 + (size_t)n) {
			if (off == 0 && !grow_in(c, 4 + (size_t)n)) {
				handler_refuse(&w->h, ADVISOR__ERROR_CODE__ERR_INTERNAL,
					       "out of memory", &c->out);
				c->closing = true;
			}
			break;
		}
		rc = handler_frame(&w->h, &c->peer, c->in + off + 4, n, &c->out);
		/* A logged decision: this answer (and those after it) wait for its commit. */
		if ((seq = dlog_take_mine()) > c->hold)
			c->hold = seq;
		switch (rc) {
		case HANDLER_CLOSE:
			c->closing = true;
			break;
		case HANDLER_MUNGE: {
			struct peer_munge *m = &c->peer.munge;

			/* The frame stays; it is given again with the job's result. */
			c->job = authq_submit(&w->sink, m->want == PEER_MUNGE_ENCODE ? AUTHQ_ENCODE
					      : AUTHQ_DECODE, m->text, m->len, m->bind, c);
			if (!c->job) {
				handler_munge_clear(m);
				handler_refuse(&w->h, ADVISOR__ERROR_CODE__ERR_UNAVAILABLE,
					       "the daemon's MUNGE queue is full; retry", &c->out);
				c->closing = true;
			}
			goto out;
		}
		default:
			break;
		}
		c->first_done = !c->peer.tcp || c->peer.authed;
		c->low = w->h.over_budget;
		off += 4 + (size_t)n;
		frames++;
	}
out:
	if (c->closing) {
		c->in_len = 0;
	} else if (off) {
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
	}
	/* Back to the inline buffer once a big frame is done. */
	if (c->in != c->small && c->in_len <= SMALL_IN) {
		memcpy(c->small, c->in, c->in_len);
		free(c->in);
		c->in = c->small;
		c->in_cap = SMALL_IN;
	}
}

/*
 * Answers that report a decision not yet committed: the connection waits in
 * the held list, reading nothing, and true.  want_commit is set before the
 * second look, and the writer publishes a commit before it looks at
 * want_commit, so a commit in between is not missed.
 */
static bool held_back(struct worker *w, struct conn *c)
{
	if (c->hold > dlog_committed()) {
		if (!c->held) {
			c->hnext = w->held;
			c->hprev = NULL;
			if (w->held)
				w->held->hprev = c;
			w->held = c;
			c->held = true;
		}
		atomic_store(&w->want_commit, true);
		if (c->hold > dlog_committed()) {
			if (epoll_set(w, c, WANT_NONE) != 0) {
				conn_close(w, c);
				return true;
			}
			set_timer(w, c);
			return true;
		}
	}
	hold_unlink(w, c);
	c->hold = 0;
	return false;
}

/*
 * After any progress: send, queue the connection for a turn when complete
 * frames wait, and decide what it waits for next.
 */
static void settle(struct worker *w, struct conn *c)
{
	bool had_out = c->out.len > c->out_off, pending;

	if (c->hold && held_back(w, c))
		return;
	if (!flush_out(c)) {
		conn_close(w, c);
		return;
	}
	pending = c->out.len > c->out_off;
	if (c->job) {
		/* Its MUNGE call is in flight: nothing more is read meanwhile. */
		if (epoll_set(w, c, WANT_NONE) != 0) {
			conn_close(w, c);
			return;
		}
		set_timer(w, c);
		return;
	}
	if (!pending && !c->closing && frame_ready(c)) {
		/* The client read every answer: its held-back requests get a fresh deadline. */
		if (had_out)
			list_remove(w, c);
		rq_push(w, c);
	}
	if (!pending && (c->closing || w->draining)) {
		if (c->closing || c->in_len == 0) {
			conn_close(w, c);
			return;
		}
	}
	if (epoll_set(w, c, pending ? WANT_OUT : c->queued ? WANT_NONE : WANT_IN) != 0) {
		conn_close(w, c);
		return;
	}
	set_timer(w, c);
}

/* A connection's turn from the run queue. */
static void take_turn(struct worker *w, struct conn *c)
{
	/* Waiting for a turn is the daemon's doing: the read timeout starts again. */
	list_remove(w, c);
	process_frames(w, c);
	settle(w, c);
}

static int next_timeout(struct worker *w);

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Whether a low turn may run now: LOW_SLICE_US of each LOW_PERIOD_US. */
static bool low_allowed(struct worker *w, long long now)
{
	if (now >= w->low_period_end) {
		w->low_period_end = now + LOW_PERIOD_US;
		w->low_spent = 0;
	}
	return w->low_spent < LOW_SLICE_US;
}

/*
 * Every connection that waited at the start gets a turn; then, if none is
 * left waiting and the slice allows, one low connection gets one (and goes
 * to the back).
 */
static void run_queues(struct worker *w)
{
	size_t n = w->ready.n;
	struct conn *c;
	long long t0;

	while (n-- > 0 && (c = rq_pop(w, &w->ready)))
		take_turn(w, c);
	if (w->ready.head || !w->low.head || !low_allowed(w, t0 = now_us()))
		return;
	c = rq_pop(w, &w->low);
	take_turn(w, c);
	w->low_spent += now_us() - t0;
}

/* epoll_wait's timeout: 0 while turns wait, else the next deadline or slice. */
static int loop_timeout(struct worker *w)
{
	long long now, t;

	if (w->ready.head)
		return 0;
	if (!w->low.head)
		return next_timeout(w);
	now = now_us();
	if (low_allowed(w, now))
		return 0;
	/* Rounded up: epoll_wait counts milliseconds. */
	t = (w->low_period_end - now + 999) / 1000;
	return next_timeout(w) >= 0 && next_timeout(w) < t ? next_timeout(w) : (int)t;
}

static void on_readable(struct worker *w, struct conn *c)
{
	ssize_t n;

	/* Its complete frames wait for a turn; the rest stays in the socket (a hang-up too). */
	if (c->queued || c->job || c->held)
		return;
	if (c->in_len == c->in_cap) {
		/* Full of requests held back for a slow reader: they wait for it. */
		if (frame_ready(c))
			return;
		if (!grow_in(c, c->in_cap * 2)) {
			conn_close(w, c);
			return;
		}
	}
	n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		if (n == 0 && c->in_len > 0) {
			/* Half a frame, then EOF: say why before closing (the peer may only have shut down writing). */
			handler_refuse(&w->h, ADVISOR__ERROR_CODE__ERR_MALFORMED,
				       "truncated frame: the connection ended inside it", &c->out);
			c->closing = true;
			c->in_len = 0;
			settle(w, c);
			return;
		}
		conn_close(w, c);
		return;
	}
	c->in_len += (size_t)n;
	/* A low connection waits for a low turn; the others are answered at once. */
	if (!c->low)
		process_frames(w, c);
	settle(w, c);
}

static int listen_watch(struct worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &tag_listen };
	struct epoll_event tev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &tag_listen_tcp };

	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, S.lfd, &ev) != 0)
		return -1;
	return S.tfd >= 0 ? epoll_ctl(w->epfd, EPOLL_CTL_ADD, S.tfd, &tev) : 0;
}

/* No descriptor for a new client: stop polling the listener for a while. */
static void accept_pause(struct worker *w, int err)
{
	long long now = now_ms(), last = atomic_load(&accept_reported_at);
	unsigned long n = atomic_fetch_add(&accept_failures, 1) + 1;

	if (epoll_ctl(w->epfd, EPOLL_CTL_DEL, S.lfd, NULL) != 0 ||
	    (S.tfd >= 0 && epoll_ctl(w->epfd, EPOLL_CTL_DEL, S.tfd, NULL) != 0))
		msg_log(LOG_ERR, "epoll_ctl: cannot pause accepting: %s", strerror(errno));
	w->accept_resume = now + ACCEPT_PAUSE_MS;
	if (now - last >= ACCEPT_REPORT_MS &&
	    atomic_compare_exchange_strong(&accept_reported_at, &last, now)) {
		atomic_store(&accept_failures, 0);
		msg_log(LOG_ERR, "accept: %s; new clients wait (%lu failed accepts, reported at "
			"most once a minute; raise LimitNOFILE)", strerror(err), n);
	}
}

static void accept_resume(struct worker *w)
{
	if (!w->accept_resume || now_ms() < w->accept_resume || w->draining)
		return;
	w->accept_resume = 0;
	if (listen_watch(w) != 0) {
		msg_log(LOG_ERR, "epoll_ctl: cannot resume accepting: %s", strerror(errno));
		w->accept_resume = now_ms() + ACCEPT_PAUSE_MS;
	}
}

/* The client's address in text, for the daemon log. */
static void peer_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		adv_snprintf(buf, len, "%s:%d", host, port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		adv_snprintf(buf, len, "[%s]:%d", host, port);
	} else {
		adv_strlcpy(buf, "?", len);
	}
}

/*
 * Who the new connection's caller is.  Unix socket: SO_PEERCRED, and a
 * flooder opening a connection per request is low from its first frame.
 * TCP: nobody until its first request's credential says who it is
 * (handler.c); no budget is looked at before then.  false: refuse it.
 */
static bool peer_of(int fd, bool tcp, const struct sockaddr_storage *ss, struct conn *c)
{
	struct ucred cr;
	socklen_t sl = sizeof(cr);
	int one = 1;

	memset(&c->peer, 0, sizeof(c->peer));
	if (tcp) {
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->peer.uid = (uid_t)-1;
		c->peer.gid = (gid_t)-1;
		c->peer.tcp = true;
		peer_addr(ss, c->peer.addr, sizeof(c->peer.addr));
		c->low = false;
		return true;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) != 0)
		return false;
	c->peer.uid = cr.uid;
	c->peer.gid = cr.gid;
	c->peer.pid = cr.pid;
	c->low = handler_over_budget(cr.uid);
	return true;
}

/*
 * Caps at accept: a TCP connection counts as unauthenticated (at most
 * max_unauth, else closed at once); a unix one is admitted under its uid,
 * or kept only to answer its first request with the refusal (at most
 * REFUSING_MAX per worker, else closed at once).  false: close it now.
 */
static bool admit_new(struct worker *w, struct conn *c)
{
	if (c->peer.tcp) {
		bool ok;

		pthread_mutex_lock(&U.lock);
		ok = U.unauth < S.o.max_unauth;
		if (ok)
			U.unauth++;
		pthread_mutex_unlock(&U.lock);
		if (!ok) {
			atomic_fetch_add(&cap_unauth_closed, 1);
			return false;
		}
		c->unauth = true;
		return true;
	}
	if (admit(w, c, c->refuse_msg, sizeof(c->refuse_msg)))
		return true;
	if (w->nrefusing >= REFUSING_MAX)
		return false;
	c->refusing = true;
	return true;
}

/* Accepts up to ACCEPT_BATCH connections on the unix (tcp false) or TCP listener. */
static void accept_some(struct worker *w, bool tcp)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct epoll_event ev = { .events = EPOLLIN };
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct conn *c;
		int fd = accept4(tcp ? S.tfd : S.lfd, (struct sockaddr *)&ss, &sl,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				accept_pause(w, errno);
			return;
		}
		stats_connection();
		if (!(c = conn_new(w))) {
			close(fd);
			continue;
		}
		c->fd = fd;
		ev.data.ptr = c;
		if (!peer_of(fd, tcp, &ss, c) || !admit_new(w, c) ||
		    epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			uncount(c);
			close(fd);
			c->next = w->free_list;
			w->free_list = c;
			w->n_free++;
			continue;
		}
		if (c->refusing)
			w->nrefusing++;
		w->nconns++;
		set_timer(w, c);
		/* sbatch writes right after connecting: the request is often already here. */
		on_readable(w, c);
	}
}

/* MUNGE jobs that came back: their frames are given to the handler again. */
static void munge_done(struct worker *w)
{
	struct authq_job *j = authq_take(&w->sink);

	while (j) {
		struct authq_job *next = j->next;
		struct conn *c = j->owner;

		if (c) {
			struct peer_munge *m = &c->peer.munge;

			c->job = NULL;
			free(m->text);
			m->text = j->text;
			m->len = j->len;
			j->text = NULL;
			m->rc = j->rc;
			m->uid = j->uid;
			m->gid = j->gid;
			adv_strlcpy(m->err, j->err, sizeof(m->err));
			m->done = true;
			process_frames(w, c);
			settle(w, c);
		}
		authq_job_free(j);
		j = next;
	}
}

/* The writer committed: the held connections whose records are in go on. */
static void commits_done(struct worker *w)
{
	uint64_t v, done;
	struct conn *c, *next;

	if (read(w->commitfd, &v, sizeof(v)) < 0) {
		/* already consumed: look anyway */
	}
	atomic_store(&w->want_commit, false);
	done = dlog_committed();
	for (c = w->held; c; c = next) {
		next = c->hnext;
		if (c->hold <= done)
			settle(w, c);
	}
	/* Still waiting: ask again, and look once more for a commit in between. */
	if (w->held) {
		atomic_store(&w->want_commit, true);
		if (dlog_committed() > done) {
			v = 1;
			if (write(w->commitfd, &v, sizeof(v)) < 0) {
				/* the counter is full: a wake-up is pending anyway */
			}
		}
	}
}

/* The decision log's writer committed up to seq (its thread, its lock held). */
static void server_committed(uint64_t seq)
{
	uint64_t one = 1;

	(void)seq;
	for (int i = 0; i < S.nw; i++)
		/* A leading worker settles its own after dlog_lead(). */
		if (&S.w[i] != cur_worker && atomic_exchange(&S.w[i].want_commit, false) &&
		    write(S.w[i].commitfd, &one, sizeof(one)) < 0) {
			/* the counter is full: a wake-up is pending anyway */
		}
}

static void reap_zombies(struct worker *w)
{
	while (w->zombies) {
		struct conn *c = w->zombies;

		w->zombies = c->next;
		c->next = NULL;
		conn_close(w, c);
	}
}

static void expire(struct worker *w)
{
	long long now = now_ms();

	while (w->busy.head && w->busy.head->deadline <= now) {
		struct conn *c = w->busy.head;

		/* Waiting in the run queue or for a commit is not the client's delay. */
		if (c->queued || c->held) {
			list_remove(w, c);
			list_append(w, c, LIST_BUSY, now + S.o.read_timeout_ms);
			continue;
		}
		conn_close(w, c);
	}
	while (w->idle.head && (w->idle.head->deadline <= now || w->draining))
		conn_close(w, w->idle.head);
	while (w->fresh.head && (w->fresh.head->deadline <= now || w->draining)) {
		if (w->fresh.head->unauth)
			atomic_fetch_add(&cap_auth_expired, 1);
		conn_close(w, w->fresh.head);
	}
}

static int next_timeout(struct worker *w)
{
	long long now = now_ms(), t = -1;

	if (w->busy.head)
		t = w->busy.head->deadline;
	if (w->idle.head && (t < 0 || w->idle.head->deadline < t))
		t = w->idle.head->deadline;
	if (w->fresh.head && (t < 0 || w->fresh.head->deadline < t))
		t = w->fresh.head->deadline;
	if (w->draining && (t < 0 || w->drain_deadline < t))
		t = w->drain_deadline;
	if (w->accept_resume && !w->draining && (t < 0 || w->accept_resume < t))
		t = w->accept_resume;
	if (t < 0)
		return -1;
	/* +1: the coarse clock must have passed the deadline when we wake. */
	return t <= now ? 0 : (int)(t - now) + 1;
}

static void start_drain(struct worker *w)
{
	uint64_t v;

	if (read(w->wakefd, &v, sizeof(v)) < 0) {
		/* eventfd counter already consumed: nothing to do */
	}
	if (w->draining)
		return;
	w->draining = true;
	w->drain_deadline = now_ms() + S.o.drain_ms;
	/* Paused, they are not watched already. */
	if (!w->accept_resume && (epoll_ctl(w->epfd, EPOLL_CTL_DEL, S.lfd, NULL) != 0 ||
				  (S.tfd >= 0 && epoll_ctl(w->epfd, EPOLL_CTL_DEL, S.tfd, NULL) != 0)))
		msg_log(LOG_ERR, "epoll_ctl: cannot stop accepting: %s", strerror(errno));
}

/*
 * Give freed memory back to the system. Under ASan or TSan the heap is the
 * sanitizer's, not glibc's: glibc's arenas were never set up, and two
 * workers trimming at once race in its lazy ptmalloc_init (a NULL arena,
 * seen as a SEGV in mtrim in the ASan lane). There is nothing of glibc's
 * to trim then, so skip it.
 */
static void trim_heap(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return;
#else
	malloc_trim(0);
#endif
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event ev[MAX_EVENTS];

	cur_worker = w;
	for (;;) {
		int n = epoll_wait(w->epfd, ev, MAX_EVENTS, loop_timeout(w));
		bool munge_due = false, commit_due = false;

		if (n < 0 && errno != EINTR) {
			msg_log(LOG_ERR, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			void *p = ev[i].data.ptr;

			if (p != &tag_listen && p != &tag_listen_tcp && p != &tag_wake &&
			    p != &tag_munge && p != &tag_commit && ((struct conn *)p)->evicted)
				continue;
			if (p == &tag_listen || p == &tag_listen_tcp)
				accept_some(w, p == &tag_listen_tcp);
			else if (p == &tag_wake)
				start_drain(w);
			else if (p == &tag_munge)
				munge_due = true;
			else if (p == &tag_commit)
				commit_due = true;
			else if (((struct conn *)p)->job || ((struct conn *)p)->held) {
				/* Not watched while its MUNGE call runs or its answer is held, but a hang-up is still reported. */
				if (ev[i].events & (EPOLLHUP | EPOLLERR))
					conn_close(w, p);
			}
			else if (ev[i].events & EPOLLOUT)
				settle(w, p);
			else
				on_readable(w, p);
		}
		/*
		 * After the batch, not in it: these settle (and may close) other
		 * connections, whose events may still be in this batch; a closed
		 * one's struct goes back to the free list and would be taken for
		 * the next event of its old fd (a double free at SIGTERM after a
		 * SIGSTOP, when hang-ups and a commit arrive together).
		 */
		if (munge_due)
			munge_done(w);
		if (commit_due)
			commits_done(w);
		reap_zombies(w);
		run_queues(w);
		reap_zombies(w);
		/* Group commit led by a worker (issue 27): answers wait here, so
		 * commit them now on this thread unless a commit is running. */
		if (w->held) {
			(void)dlog_lead();
			commits_done(w);
		}
		expire(w);
		accept_resume(w);
		cap_report();
		/* A flood's buffers go back to the system once it ends (issue 20). */
		if (w->closes >= TRIM_CLOSES && now_ms() - w->trimmed_at >= TRIM_EVERY_MS) {
			w->closes = 0;
			w->trimmed_at = now_ms();
			trim_heap();
		}
		if (w->draining && (w->nconns == 0 || now_ms() >= w->drain_deadline))
			break;
	}
	while (w->busy.head)
		conn_close(w, w->busy.head);
	while (w->idle.head)
		conn_close(w, w->idle.head);
	while (w->fresh.head)
		conn_close(w, w->fresh.head);
	reap_zombies(w);
	return NULL;
}

static int worker_init(struct worker *w, char *err, size_t errlen)
{
	struct epoll_event wev = { .events = EPOLLIN, .data.ptr = &tag_wake };
	struct epoll_event mev = { .events = EPOLLIN, .data.ptr = &tag_munge };
	struct epoll_event cev = { .events = EPOLLIN, .data.ptr = &tag_commit };

	memset(w, 0, sizeof(*w));
	handler_init(&w->h);
	(void)authq_sink_init(&w->sink);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	w->commitfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->epfd < 0 || w->wakefd < 0 || w->commitfd < 0 || w->sink.efd < 0 ||
	    listen_watch(w) != 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wakefd, &wev) != 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->commitfd, &cev) != 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->sink.efd, &mev) != 0) {
		adv_snprintf(err, errlen, "cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void worker_free(struct worker *w)
{
	while (w->free_list) {
		struct conn *c = w->free_list;

		w->free_list = c->next;
		handler_outbuf_free(&c->out);
		free(c);
	}
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->wakefd >= 0)
		close(w->wakefd);
	if (w->commitfd >= 0)
		close(w->commitfd);
	authq_sink_destroy(&w->sink);
	handler_destroy(&w->h);
}

int server_start(int listen_fd, const struct server_opts *o, char *err, size_t errlen)
{
	/* A script check mallocs and frees a few hundred KiB (the reader's
	 * context and output): with glibc's defaults those go back to the
	 * kernel at each free and fault back in at the next check, a tenth of
	 * the daemon's time under job_submit's one-at-a-time load (issue 31).
	 * Kept instead, up to these sizes; trim_heap gives them back after a
	 * flood (issue 20). */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
	mallopt(M_TRIM_THRESHOLD, 8 * 1024 * 1024);
#endif
	S.lfd = listen_fd;
	S.tfd = o->tcp_fd;
	S.o = *o;
	handler_set_admit(admit_tcp);
	if (S.tfd >= 0) {
		if (authq_start(o->munge_socket, AUTHQ_THREADS, err, errlen) != 0)
			return -1;
		S.authq = true;
	}
	S.nw = o->workers > 0 ? o->workers : 1;
	S.w = calloc((size_t)S.nw, sizeof(*S.w));
	if (!S.w) {
		adv_snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < S.nw; i++) {
		int rc;

		if (worker_init(&S.w[i], err, errlen) != 0) {
			S.nw = i + 1;
			server_stop();
			return -1;
		}
		rc = pthread_create(&S.w[i].thread, NULL, worker_main, &S.w[i]);
		if (rc) {
			adv_snprintf(err, errlen, "cannot start worker: %s", strerror(rc));
			S.w[i].thread = 0;
			S.nw = i + 1;
			server_stop();
			return -1;
		}
	}
	/* Held answers go when the decision log commits (issue 20). */
	dlog_on_commit(server_committed);
	dlog_set_leaders(true);
	return 0;
}

void server_stop(void)
{
	uint64_t one = 1;

	for (int i = 0; i < S.nw; i++)
		if (S.w[i].wakefd >= 0 && write(S.w[i].wakefd, &one, sizeof(one)) < 0)
			msg_log(LOG_ERR, "cannot wake worker %d: %s", i, strerror(errno));
	for (int i = 0; i < S.nw; i++)
		if (S.w[i].thread)
			pthread_join(S.w[i].thread, NULL);
	/* After the workers: draining, they waited for commits; before their eventfds go. */
	dlog_set_leaders(false);
	dlog_on_commit(NULL);
	/* Before the sinks go: a MUNGE thread may still return a job to one. */
	if (S.authq)
		authq_stop();
	S.authq = false;
	for (int i = 0; i < S.nw; i++)
		worker_free(&S.w[i]);
	free(S.w);
	S.w = NULL;
	S.nw = 0;
}
