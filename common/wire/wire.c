/*
 * wire.c - framing of the advisor protocol on a unix stream socket, or on
 * TCP to a list of servers with a MUNGE credential (issue 13).
 *
 * A frame is a 4-byte big-endian length and a protobuf-c message (design.md,
 * "Wire").  Every call is bounded by a deadline on the monotonic clock and
 * waits with poll(), so neither a stuck daemon nor a stuck client can hang
 * the other: the plugin runs inside sbatch and must answer within its
 * timeout_ms whatever happens on the socket.  Sends use MSG_NOSIGNAL so a
 * daemon that goes away never kills the caller with SIGPIPE.
 *
 * TCP: "HOST:PORT[,HOST:PORT]" is tried in order, each server getting an
 * equal share of what is left of the timeout for everything: resolving its
 * name, connecting and the answer (issue 20).  A server that drops packets,
 * one that accepts and never answers, and a name whose DNS does not answer
 * all cost only their share, and the next server is tried.  Names are
 * resolved with getaddrinfo_a() and a deadline (a lookup still running is
 * cancelled, or left to finish in glibc's thread), and kept for a minute.
 *
 * Who answers (issue 20): a TCP connection opens with a hello.  The client
 * sends a nonce; the server must answer with a MUNGE credential of the
 * server uid bound to that nonce, its name and a nonce of its own
 * (auth.h), or nothing it says is used and its text is never shown (a
 * user who binds the port could print anything as advisor's answer).
 * Only then does the client mint its own credential, bound the same way,
 * so a fake server never collects one and a credential is good only on
 * its connection.  The daemon takes the caller's uid and gid from it as it
 * takes them from SO_PEERCRED on the unix socket, where the client checks
 * the daemon's uid by SO_PEERCRED in turn.  A daemon is trusted when it
 * runs as root, as the caller, as the system user advisord.service runs it
 * as (configure --with-daemon-user, "advisor"; issue 30), or as server_uid.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "advisor.pb-c.h"
#include "auth.h"
#include "convert.h"
#include "endpoint.h"
#include "jobship.h"
#include "util.h"
#include "wire.h"

const char *wire_strerror(int code)
{
	switch (code) {
	case WIRE_OK: return "ok";
	case WIRE_ERR_CONNECT: return "cannot connect to the daemon";
	case WIRE_ERR_TIMEOUT: return "timed out";
	case WIRE_ERR_CLOSED: return "connection closed by peer";
	case WIRE_ERR_IO: return "input/output error";
	case WIRE_ERR_TOO_LARGE: return "frame larger than 1 MiB";
	case WIRE_ERR_MALFORMED: return "malformed message";
	case WIRE_ERR_REMOTE: return "the daemon answered with an error";
	case WIRE_ERR_NOMEM: return "out of memory";
	case WIRE_ERR_AUTH: return "cannot mint a MUNGE credential (is munged running?)";
	case WIRE_ERR_SERVER: return "the server did not prove it is advisord";
	case WIRE_ERR_REFUSED: return "the daemon refused this client";
	default: return "unknown wire error";
	}
}

/* ---- who the daemon must be (issue 20) ------------------------------------------ */

static uid_t server_uid = (uid_t)-1;
static __thread char server_why[320];

void wire_set_server_uid(uid_t uid)
{
	server_uid = uid;
}

const char *wire_server_why(void)
{
	return server_why;
}

/*
 * The uid of ADV_DAEMON_USER ("advisor": the system user advisord.service
 * runs the daemon as, issue 30), looked up once per process; (uid_t)-1
 * when there is no such user.  Only root creates system users, so a
 * daemon running as it is the site's, as one running as slurm is.
 */
static uid_t daemon_user_uid = (uid_t)-1;
static pthread_once_t daemon_user_once = PTHREAD_ONCE_INIT;

static void look_up_daemon_user(void)
{
	struct passwd pw, *r = NULL;
	char buf[1024];

	if (getpwnam_r(ADV_DAEMON_USER, &pw, buf, sizeof(buf), &r) == 0 && r && pw.pw_uid != 0)
		daemon_user_uid = pw.pw_uid;
}

/* root, the caller, advisord's own system user, and server_uid (by default the user "slurm"). */
static bool trusted_uid(uid_t uid)
{
	struct passwd pw, *r = NULL;
	char buf[1024];

	if (uid == 0 || uid == getuid())
		return true;
	if (server_uid != (uid_t)-1 && uid == server_uid)
		return true;
	/* Looked up only when the daemon is none of the above. */
	(void)pthread_once(&daemon_user_once, look_up_daemon_user);
	if (daemon_user_uid != (uid_t)-1 && uid == daemon_user_uid)
		return true;
	if (server_uid != (uid_t)-1)
		return false;
	return getpwnam_r("slurm", &pw, buf, sizeof(buf), &r) == 0 && r && pw.pw_uid == uid;
}

/* what: "it runs as" or the like, followed by the uid. */
static void refuse_server(const char *who, const char *what, uid_t uid)
{
	char want[64];

	if (server_uid == (uid_t)-1)
		adv_strlcpy(want, "root, " ADV_DAEMON_USER " or slurm", sizeof(want));
	else
		adv_snprintf(want, sizeof(want), "root, " ADV_DAEMON_USER " or uid %u",
			     (unsigned)server_uid);
	adv_snprintf(server_why, sizeof(server_why), "%s: %s uid %u, not as %s; nothing it said is "
		     "used (plugstack.conf server_uid=, advisorctl --server-uid)", who, what,
		     (unsigned)uid, want);
}

static long long deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : adv_now_ms() + timeout_ms;
}

/* Milliseconds left for poll(): -1 = forever, 0 = expired. */
static int remaining(long long deadline)
{
	long long left;

	if (deadline < 0)
		return -1;
	left = deadline - adv_now_ms();
	return left > 0 ? (int)left : 0;
}

/* Waits until fd is ready for events; WIRE_OK or WIRE_ERR_TIMEOUT/IO. */
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int left = remaining(deadline);
		int n;

		if (left == 0)
			return WIRE_ERR_TIMEOUT;
		n = poll(&p, 1, left);
		if (n > 0)
			return WIRE_OK;
		if (n == 0)
			return WIRE_ERR_TIMEOUT;
		if (errno != EINTR)
			return WIRE_ERR_IO;
	}
}

/* ---- name resolution with a deadline (issue 20) ------------------------------- */

#define RESOLVE_CACHE 8
#define RESOLVE_ADDRS 4
#define RESOLVE_TTL_MS 60000

struct resolved {
	int n;
	struct sockaddr_storage addr[RESOLVE_ADDRS];
	socklen_t len[RESOLVE_ADDRS];
};

static struct {
	pthread_mutex_t lock;
	struct {
		char host[ENDPOINT_HOST_MAX];
		int port;
		long long until;
		struct resolved r;
	} e[RESOLVE_CACHE];
	int next;
} rcache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void take_addrs(const struct addrinfo *res, struct resolved *r)
{
	r->n = 0;
	for (const struct addrinfo *ai = res; ai && r->n < RESOLVE_ADDRS; ai = ai->ai_next) {
		if (ai->ai_addrlen > sizeof(r->addr[0]) || ai->ai_socktype != SOCK_STREAM)
			continue;
		memcpy(&r->addr[r->n], ai->ai_addr, ai->ai_addrlen);
		r->len[r->n++] = ai->ai_addrlen;
	}
}

/*
 * host:port's addresses within deadline: a literal at once, a name from the
 * cache or getaddrinfo_a().  WIRE_OK, WIRE_ERR_TIMEOUT, or WIRE_ERR_CONNECT
 * (errno EHOSTUNREACH) with why.
 */
static int resolve(const char *host, int port, long long deadline, struct resolved *r,
		   char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	struct gaicb *cb;
	char service[8];
	int rc;

	adv_snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(host, service, &hints, &res) == 0) {
		take_addrs(res, r);
		freeaddrinfo(res);
		return r->n ? WIRE_OK : WIRE_ERR_CONNECT;
	}
	pthread_mutex_lock(&rcache.lock);
	for (int i = 0; i < RESOLVE_CACHE; i++) {
		if (rcache.e[i].port == port && !strcmp(rcache.e[i].host, host) &&
		    rcache.e[i].until > adv_now_ms()) {
			*r = rcache.e[i].r;
			pthread_mutex_unlock(&rcache.lock);
			return WIRE_OK;
		}
	}
	pthread_mutex_unlock(&rcache.lock);
	/* Heap, not stack: a lookup that cannot be cancelled goes on using it. */
	cb = calloc(1, sizeof(*cb) + sizeof(struct addrinfo));
	if (!cb)
		return WIRE_ERR_NOMEM;
	{
		struct addrinfo *h = (struct addrinfo *)(cb + 1);

		h->ai_socktype = SOCK_STREAM;
		h->ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV;
		cb->ar_request = h;
	}
	cb->ar_name = strdup(host);
	cb->ar_service = strdup(service);
	if (!cb->ar_name || !cb->ar_service ||
	    getaddrinfo_a(GAI_NOWAIT, &cb, 1, NULL) != 0) {
		free((char *)cb->ar_name);
		free((char *)cb->ar_service);
		free(cb);
		adv_snprintf(why, whylen, "cannot start resolving %s", host);
		errno = EHOSTUNREACH;
		return WIRE_ERR_CONNECT;
	}
	while ((rc = gai_error(cb)) == EAI_INPROGRESS) {
		const struct gaicb *list[1] = { cb };
		int left = remaining(deadline);
		struct timespec ts = { left / 1000, (long)(left % 1000) * 1000000 };

		if (left == 0)
			break;
		(void)gai_suspend(list, 1, deadline < 0 ? NULL : &ts);
	}
	if (rc == EAI_INPROGRESS) {
		if (gai_cancel(cb) == EAI_CANCELED) {
			free((char *)cb->ar_name);
			free((char *)cb->ar_service);
			free(cb);
		}
		/* else glibc's thread still uses cb: it is left to it (a few hundred bytes). */
		adv_snprintf(why, whylen, "name %s not resolved in time", host);
		errno = ETIMEDOUT;
		return WIRE_ERR_TIMEOUT;
	}
	if (rc != 0) {
		adv_snprintf(why, whylen, "cannot resolve %s: %s", host, gai_strerror(rc));
		free((char *)cb->ar_name);
		free((char *)cb->ar_service);
		if (cb->ar_result)
			freeaddrinfo(cb->ar_result);
		free(cb);
		errno = EHOSTUNREACH;
		return WIRE_ERR_CONNECT;
	}
	take_addrs(cb->ar_result, r);
	freeaddrinfo(cb->ar_result);
	free((char *)cb->ar_name);
	free((char *)cb->ar_service);
	free(cb);
	if (!r->n) {
		adv_snprintf(why, whylen, "%s has no usable address", host);
		errno = EHOSTUNREACH;
		return WIRE_ERR_CONNECT;
	}
	pthread_mutex_lock(&rcache.lock);
	{
		int i = rcache.next++ % RESOLVE_CACHE;

		adv_strlcpy(rcache.e[i].host, host, sizeof(rcache.e[i].host));
		rcache.e[i].port = port;
		rcache.e[i].until = adv_now_ms() + RESOLVE_TTL_MS;
		rcache.e[i].r = *r;
	}
	pthread_mutex_unlock(&rcache.lock);
	return WIRE_OK;
}

/* One TCP address, non-blocking connect bounded by deadline. */
static int connect_addr(const struct sockaddr_storage *sa, socklen_t salen, long long deadline,
			int *fd_out)
{
	int fd, rc, one = 1, soerr = 0;
	socklen_t sl = sizeof(soerr);

	fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return WIRE_ERR_IO;
	/* Requests are one small frame each: no Nagle delay. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)sa, salen) != 0) {
		if (errno != EINPROGRESS && errno != EINTR) {
			rc = errno;
			close(fd);
			errno = rc;
			return WIRE_ERR_CONNECT;
		}
		rc = wait_fd(fd, POLLOUT, deadline);
		if (rc != WIRE_OK) {
			close(fd);
			return rc;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			close(fd);
			errno = soerr ? soerr : errno;
			return WIRE_ERR_CONNECT;
		}
	}
	*fd_out = fd;
	return WIRE_OK;
}

static int login(int fd, long long deadline, const char *who, char *err, size_t errlen);

/*
 * What is done on one connection (an exchange, or a check's rounds): the
 * first answer must come within share, the rest within deadline.  Returns
 * a wire_err; WIRE_OK and WIRE_ERR_REMOTE are answers.
 */
typedef int (*session_fn)(int fd, long long share, long long deadline, void *arg);

static const char *why_of(int rc)
{
	switch (rc) {
	case WIRE_ERR_TIMEOUT: return "no answer in time";
	case WIRE_ERR_CLOSED: return "closed the connection";
	case WIRE_ERR_CONNECT: return strerror(errno);
	default: return wire_strerror(rc);
	}
}

/*
 * The servers of list in order, each within its share of what is left:
 * resolving, connecting and (with fn) the first answer.  Without fn the
 * first connection is returned in *fd_out.  err (may be NULL) names each
 * server that failed and why.
 */
static int tcp_session(const char *list, long long deadline, session_fn fn, void *arg, int *fd_out,
		       bool bare, char *err, size_t errlen)
{
	struct endpoint eps[ENDPOINT_MAX];
	char why[160];
	int n, i, rc = WIRE_ERR_CONNECT, saved = ECONNREFUSED;
	size_t used = 0;

	if (err && errlen)
		err[0] = '\0';
	n = endpoint_list(list, eps, ENDPOINT_MAX, why, sizeof(why));
	if (n <= 0) {
		if (err && errlen)
			adv_strlcpy(err, why, errlen);
		errno = EINVAL;
		return WIRE_ERR_CONNECT;
	}
	server_why[0] = '\0';
	for (i = 0; i < n; i++) {
		long long left = deadline < 0 ? -1 : remaining(deadline);
		long long share = left < 0 ? -1 : adv_now_ms() + left / (n - i);
		struct resolved r;
		int src = WIRE_ERR_CONNECT;

		if (left == 0) {
			rc = WIRE_ERR_TIMEOUT;
			break;
		}
		why[0] = '\0';
		src = resolve(eps[i].host, eps[i].port, share, &r, why, sizeof(why));
		if (src != WIRE_OK) {
			rc = src;
			saved = errno;
		} else {
			for (int k = 0; k < r.n; k++) {
				int fd = -1;

				src = connect_addr(&r.addr[k], r.len[k], share, &fd);
				if (src != WIRE_OK) {
					saved = src == WIRE_ERR_TIMEOUT ? ETIMEDOUT : errno;
					adv_snprintf(why, sizeof(why), "%s", src == WIRE_ERR_TIMEOUT
						     ? "no connection in time" : strerror(saved));
					continue;
				}
				if (!bare) {
					char who[ENDPOINT_HOST_MAX + 16];

					adv_snprintf(who, sizeof(who), "%s:%d", eps[i].host, eps[i].port);
					src = login(fd, share, who, err, errlen);
					if (src == WIRE_ERR_REFUSED || src == WIRE_ERR_AUTH ||
					    src == WIRE_ERR_NOMEM) {
						close(fd);
						return src;
					}
					if (src != WIRE_OK) {
						close(fd);
						saved = src == WIRE_ERR_TIMEOUT ? ETIMEDOUT : ECONNRESET;
						adv_snprintf(why, sizeof(why), "%s", src == WIRE_ERR_SERVER
							     ? server_why + strlen(who) + 2 : why_of(src));
						rc = src;
						break;   /* not advisord, or no hello in time: next server */
					}
				}
				if (!fn) {
					*fd_out = fd;
					return WIRE_OK;
				}
				src = fn(fd, share, deadline, arg);
				close(fd);
				if (src == WIRE_OK || src == WIRE_ERR_REMOTE || src == WIRE_ERR_AUTH ||
				    src == WIRE_ERR_NOMEM)
					return src;
				saved = src == WIRE_ERR_TIMEOUT ? ETIMEDOUT : ECONNRESET;
				adv_snprintf(why, sizeof(why), "%s", why_of(src));
				break;   /* it answered badly or not at all: next server */
			}
			if (src != WIRE_ERR_SERVER)
				rc = src;
		}
		if (err && errlen && used < errlen)
			used += (size_t)snprintf(err + used, errlen - used, "%s%s:%d: %s",
						 used ? "; " : "", eps[i].host, eps[i].port,
						 why[0] ? why : why_of(src));
	}
	errno = saved;
	/* A fake server anywhere in the list is what the caller must hear of. */
	if (server_why[0] && rc != WIRE_OK)
		return WIRE_ERR_SERVER;
	return rc == WIRE_ERR_TIMEOUT ? WIRE_ERR_TIMEOUT : rc == WIRE_OK ? WIRE_ERR_CONNECT : rc;
}

static int connect_tcp(const char *list, long long deadline, int *fd_out)
{
	return tcp_session(list, deadline, NULL, NULL, fd_out, false, NULL, 0);
}

int wire_connect_bare(const char *list, int timeout_ms, int *fd_out)
{
	*fd_out = -1;
	return tcp_session(list, deadline_of(timeout_ms), NULL, NULL, fd_out, true, NULL, 0);
}

/* Is fd a TCP connection (its requests carry a credential)? */
static bool is_tcp(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return false;
	return ss.ss_family == AF_INET || ss.ss_family == AF_INET6;
}

int wire_connect(const char *path, int timeout_ms, int *fd_out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long long deadline = deadline_of(timeout_ms);
	int fd, rc;

	*fd_out = -1;
	if (path && !endpoint_is_path(path) && strchr(path, ':'))
		return connect_tcp(path, deadline, fd_out);
	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return WIRE_ERR_CONNECT;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return WIRE_ERR_IO;
	for (;;) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			/* Backlog full: the daemon is alive but busy; retry until the deadline. */
			struct timespec ts = { 0, 1000000 };

			if (remaining(deadline) == 0) {
				close(fd);
				return WIRE_ERR_TIMEOUT;
			}
			nanosleep(&ts, NULL);
			continue;
		}
		if (errno == EINPROGRESS) {
			int soerr = 0;
			socklen_t sl = sizeof(soerr);

			rc = wait_fd(fd, POLLOUT, deadline);
			if (rc != WIRE_OK) {
				close(fd);
				return rc;
			}
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
				close(fd);
				errno = soerr ? soerr : errno;
				return WIRE_ERR_CONNECT;
			}
			break;
		}
		rc = errno;
		close(fd);
		errno = rc;
		return WIRE_ERR_CONNECT;
	}
	{
		struct ucred cr = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
		socklen_t cl = sizeof(cr);

		server_why[0] = '\0';
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || !trusted_uid(cr.uid)) {
			refuse_server(path, "the daemon on this socket runs as", cr.uid);
			close(fd);
			return WIRE_ERR_SERVER;
		}
	}
	*fd_out = fd;
	return WIRE_OK;
}

static int write_all(int fd, const uint8_t *buf, size_t len, long long deadline)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int rc = wait_fd(fd, POLLOUT, deadline);

			if (rc != WIRE_OK)
				return rc;
			continue;
		}
		return (n < 0 && (errno == EPIPE || errno == ECONNRESET)) ? WIRE_ERR_CLOSED
									   : WIRE_ERR_IO;
	}
	return WIRE_OK;
}

static int read_all(int fd, uint8_t *buf, size_t len, long long deadline)
{
	while (len > 0) {
		ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return WIRE_ERR_CLOSED;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int rc = wait_fd(fd, POLLIN, deadline);

			if (rc != WIRE_OK)
				return rc;
			continue;
		}
		return errno == ECONNRESET ? WIRE_ERR_CLOSED : WIRE_ERR_IO;
	}
	return WIRE_OK;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int wire_write_frame(int fd, const uint8_t *buf, size_t len, int timeout_ms)
{
	long long deadline = deadline_of(timeout_ms);
	uint8_t hdr[4];
	int rc;

	if (len > WIRE_MAX_FRAME)
		return WIRE_ERR_TOO_LARGE;
	put_be32(hdr, (uint32_t)len);
	rc = write_all(fd, hdr, sizeof(hdr), deadline);
	if (rc != WIRE_OK)
		return rc;
	return write_all(fd, buf, len, deadline);
}

int wire_read_frame(int fd, uint8_t **buf, size_t *len, int timeout_ms)
{
	long long deadline = deadline_of(timeout_ms);
	uint8_t hdr[4];
	uint32_t n;
	uint8_t *p;
	int rc;

	*buf = NULL;
	*len = 0;
	rc = read_all(fd, hdr, sizeof(hdr), deadline);
	if (rc != WIRE_OK)
		return rc;
	n = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
	if (n > WIRE_MAX_FRAME)
		return WIRE_ERR_TOO_LARGE;
	p = malloc(n ? n : 1);
	if (!p)
		return WIRE_ERR_NOMEM;
	rc = read_all(fd, p, n, deadline);
	if (rc != WIRE_OK) {
		free(p);
		return rc;
	}
	*buf = p;
	*len = n;
	return WIRE_OK;
}

int wire_write_message(int fd, const struct ProtobufCMessage *msg, int timeout_ms)
{
	uint8_t stackbuf[4096];
	size_t size = protobuf_c_message_get_packed_size(msg);
	uint8_t *p = stackbuf;
	int rc;

	if (size > WIRE_MAX_FRAME)
		return WIRE_ERR_TOO_LARGE;
	if (size + 4 > sizeof(stackbuf)) {
		p = malloc(size + 4);
		if (!p)
			return WIRE_ERR_NOMEM;
	}
	put_be32(p, (uint32_t)size);
	protobuf_c_message_pack(msg, p + 4);
	/* One send for header and body: a single segment for the daemon to read. */
	rc = write_all(fd, p, size + 4, deadline_of(timeout_ms));
	if (p != stackbuf)
		free(p);
	return rc;
}

/* The fields every request carries, set before its size is measured or sent. */
static void fill_header(struct Advisor__Request *req)
{
	if (!req->has_version) {
		req->has_version = 1;
		req->version = WIRE_VERSION;
	}
	if (!req->has_id) {
		req->has_id = 1;
		req->id = 1;
	}
}

int wire_exchange(int fd, int timeout_ms, struct Advisor__Request *req,
		  struct Advisor__Response **resp, char *err, size_t errlen)
{
	long long deadline = deadline_of(timeout_ms);
	Advisor__Response *r;
	uint8_t *buf;
	size_t len;
	int rc;

	*resp = NULL;
	if (err && errlen)
		err[0] = '\0';
	fill_header(req);
	rc = wire_write_message(fd, &req->base, remaining(deadline));
	if (rc != WIRE_OK)
		return rc;
	rc = wire_read_frame(fd, &buf, &len, remaining(deadline));
	if (rc != WIRE_OK)
		return rc;
	r = advisor__response__unpack(NULL, len, buf);
	free(buf);
	if (!r)
		return WIRE_ERR_MALFORMED;
	*resp = r;
	if (r->error && r->error->code != ADVISOR__ERROR_CODE__ERR_NONE) {
		if (err && errlen)
			adv_strlcpy(err, r->error->message ? r->error->message
							  : "error without message", errlen);
		return WIRE_ERR_REMOTE;
	}
	return WIRE_OK;
}

/*
 * The hello (issue 20): the server's credential must be of a trusted uid
 * and bound to our nonce, its name and its nonce.  Until it is, nothing
 * the server sent is shown: an error's text is left out, only its code said.
 */
static int hello(int fd, long long deadline, const char *who, struct wire_hello *h)
{
	Advisor__Request rq = ADVISOR__REQUEST__INIT;
	Advisor__HelloRequest hr = ADVISOR__HELLO_REQUEST__INIT;
	Advisor__Response *resp = NULL;
	const Advisor__HelloResponse *hp;
	char want[AUTH_BINDING_MAX], why[256];
	uid_t uid;
	gid_t gid;
	int rc;

	server_why[0] = '\0';
	if (auth_nonce(h->cnonce) != 0) {
		adv_snprintf(server_why, sizeof(server_why), "%s: no random nonce: %s", who,
			     strerror(errno));
		return WIRE_ERR_AUTH;
	}
	rq.body_case = ADVISOR__REQUEST__BODY_HELLO;
	rq.hello = &hr;
	hr.has_nonce = 1;
	hr.nonce.data = h->cnonce;
	hr.nonce.len = AUTH_NONCE_LEN;
	rc = wire_exchange(fd, remaining(deadline), &rq, &resp, NULL, 0);
	if (rc != WIRE_OK && rc != WIRE_ERR_REMOTE) {
		if (resp)
			advisor__response__free_unpacked(resp, NULL);
		if (rc != WIRE_ERR_MALFORMED && rc != WIRE_ERR_TOO_LARGE)
			return rc;
		adv_snprintf(server_why, sizeof(server_why), "%s: it answered the hello with something "
			     "that is not advisor's protocol; nothing it said is used (plugstack.conf "
			     "server_uid=, advisorctl --server-uid)", who);
		return WIRE_ERR_SERVER;
	}
	hp = resp->hello;
	if (rc == WIRE_ERR_REMOTE || resp->body_case != ADVISOR__RESPONSE__BODY_HELLO || !hp ||
	    !hp->name || !hp->has_nonce || hp->nonce.len != AUTH_NONCE_LEN || !hp->has_cred ||
	    hp->cred.len == 0 || !auth_name_ok(hp->name)) {
		adv_snprintf(server_why, sizeof(server_why), "%s: it did not prove its identity "
			     "(it answered the hello %s%d; an advisord older than this client, or not "
			     "advisord); nothing it said is used (plugstack.conf server_uid=, "
			     "advisorctl --server-uid)", who, rc == WIRE_ERR_REMOTE
			     ? "with an error, code " : "without a credential, body ",
			     rc == WIRE_ERR_REMOTE && resp->error ? (int)resp->error->code
			     : (int)resp->body_case);
		advisor__response__free_unpacked(resp, NULL);
		return WIRE_ERR_SERVER;
	}
	adv_strlcpy(h->name, hp->name, sizeof(h->name));
	memcpy(h->snonce, hp->nonce.data, AUTH_NONCE_LEN);
	auth_binding(want, sizeof(want), AUTH_SERVER, h->name, h->cnonce, h->snonce);
	rc = auth_decode(NULL, (const char *)hp->cred.data, hp->cred.len, want, &uid, &gid, why,
			 sizeof(why));
	advisor__response__free_unpacked(resp, NULL);
	if (rc == AUTH_ERR_SOCKET || rc == AUTH_ERR_OTHER) {
		adv_snprintf(server_why, sizeof(server_why), "%s: cannot check the server's "
			     "credential: %s", who, why);
		return WIRE_ERR_AUTH;
	}
	if (rc != AUTH_OK) {
		adv_snprintf(server_why, sizeof(server_why), "%s: its credential does not verify (%s); "
			     "nothing it said is used (plugstack.conf server_uid=, advisorctl "
			     "--server-uid)", who, why);
		return WIRE_ERR_SERVER;
	}
	if (!trusted_uid(uid)) {
		refuse_server(who, "it proved to run as", uid);
		return WIRE_ERR_SERVER;
	}
	return WIRE_OK;
}

int wire_hello(int fd, int timeout_ms, struct wire_hello *h, char *err, size_t errlen)
{
	int rc = hello(fd, deadline_of(timeout_ms), "server", h);

	if (rc != WIRE_OK && err && errlen)
		adv_strlcpy(err, server_why[0] ? server_why : wire_strerror(rc), errlen);
	return rc;
}

/*
 * The hello, then our credential bound to it, sent with a hello without a
 * nonce: the connection is the caller's from then on.  WIRE_ERR_REFUSED:
 * the server, proven, refused us (its words in err).
 */
static int login(int fd, long long deadline, const char *who, char *err, size_t errlen)
{
	Advisor__Request rq = ADVISOR__REQUEST__INIT;
	Advisor__HelloRequest hr = ADVISOR__HELLO_REQUEST__INIT;
	Advisor__Response *resp = NULL;
	struct wire_hello h;
	char payload[AUTH_BINDING_MAX], why[256], *cred = NULL;
	int rc;

	rc = hello(fd, deadline, who, &h);
	if (rc != WIRE_OK) {
		if (rc == WIRE_ERR_AUTH && err && errlen)
			adv_strlcpy(err, server_why, errlen);
		return rc;
	}
	auth_binding(payload, sizeof(payload), AUTH_CLIENT, h.name, h.cnonce, h.snonce);
	if (auth_encode(NULL, payload, 0, &cred, why, sizeof(why)) != AUTH_OK) {
		if (err && errlen)
			adv_snprintf(err, errlen, "cannot authenticate to the daemon: %s", why);
		return WIRE_ERR_AUTH;
	}
	rq.body_case = ADVISOR__REQUEST__BODY_HELLO;
	rq.hello = &hr;
	rq.has_auth = 1;
	rq.auth.data = (uint8_t *)cred;
	rq.auth.len = strlen(cred);
	rc = wire_exchange(fd, remaining(deadline), &rq, &resp, why, sizeof(why));
	free(cred);
	if (resp)
		advisor__response__free_unpacked(resp, NULL);
	if (rc == WIRE_ERR_REMOTE) {
		if (err && errlen)
			adv_snprintf(err, errlen, "%s refused this client: %s", who, why);
		return WIRE_ERR_REFUSED;
	}
	return rc;
}

/*
 * Before the first request of a connection, when it is bigger than the
 * daemon takes from a caller it does not know yet (WIRE_FIRST_FRAME_MAX,
 * with room for a credential on TCP): a `status` first (issue 20).
 */
static int hello_if_big(int fd, long long deadline, Advisor__Request *req, char *err, size_t errlen)
{
	Advisor__Request h = ADVISOR__REQUEST__INIT;
	Advisor__StatusRequest st = ADVISOR__STATUS_REQUEST__INIT;
	Advisor__Response *resp = NULL;
	int rc;

	/* A TCP connection is the caller's once connected (login).  The size
	 * is the frame's as sent: with the version and id wire_exchange adds
	 * (a 4093-byte request went out as 4099 bytes and was refused). */
	fill_header(req);
	if (protobuf_c_message_get_packed_size(&req->base) <= WIRE_FIRST_FRAME_MAX || is_tcp(fd))
		return WIRE_OK;
	h.body_case = ADVISOR__REQUEST__BODY_STATUS;
	h.status = &st;
	rc = wire_exchange(fd, remaining(deadline), &h, &resp, err, errlen);
	if (resp)
		advisor__response__free_unpacked(resp, NULL);
	return rc;
}

struct call_arg {
	Advisor__Request *req;
	Advisor__Response **resp;
	char *err;
	size_t errlen;
};

static int call_fn(int fd, long long share, long long deadline, void *arg)
{
	struct call_arg *a = arg;
	int rc;

	(void)deadline;
	if (*a->resp) {
		advisor__response__free_unpacked(*a->resp, NULL);
		*a->resp = NULL;
	}
	rc = hello_if_big(fd, share, a->req, a->err, a->errlen);
	if (rc == WIRE_OK)
		rc = wire_exchange(fd, remaining(share), a->req, a->resp, a->err, a->errlen);
	return rc;
}

static bool is_list(const char *target)
{
	return target && !endpoint_is_path(target) && strchr(target, ':');
}

/* fn on a connection to target: the unix socket, or each server of a list in turn. */
static int session(const char *target, int timeout_ms, session_fn fn, void *arg, char *err,
		   size_t errlen)
{
	long long deadline = deadline_of(timeout_ms);
	char tried[512];
	int fd, rc;

	if (is_list(target)) {
		rc = tcp_session(target, deadline, fn, arg, NULL, false, tried, sizeof(tried));
		if (rc != WIRE_OK && err && errlen && tried[0] && (rc != WIRE_ERR_REMOTE || !err[0])) {
			int e = errno;

			if (rc == WIRE_ERR_REFUSED || rc == WIRE_ERR_AUTH)
				adv_strlcpy(err, tried, errlen);
			else
				adv_snprintf(err, errlen, "%s: %s", wire_strerror(rc), tried);
			errno = e;
		}
		return rc;
	}
	rc = wire_connect(target, timeout_ms, &fd);
	if (rc == WIRE_ERR_SERVER && err && errlen)
		adv_snprintf(err, errlen, "%s: %s", wire_strerror(rc), server_why);
	if (rc != WIRE_OK)
		return rc;
	rc = fn(fd, deadline, deadline, arg);
	close(fd);
	return rc;
}

int wire_call(const char *socket_path, int timeout_ms, struct Advisor__Request *req,
	      struct Advisor__Response **resp, char *err, size_t errlen)
{
	struct call_arg a = { req, resp, err, errlen };

	*resp = NULL;
	if (err && errlen)
		err[0] = '\0';
	return session(socket_path, timeout_ms, call_fn, &a, err, errlen);
}

int wire_client_check(const char *socket_path, int timeout_ms,
		      const struct adv_request *req, enum adv_context ctx,
		      uint32_t job_id, const char *parent_decision,
		      struct adv_result *res, char *decision_id, size_t idlen,
		      char *err, size_t errlen)
{
	return wire_client_check_job(socket_path, timeout_ms, req, ctx, job_id, parent_decision,
				     NULL, res, decision_id, idlen, err, errlen);
}

/*
 * One connection for every round: the daemon serves several requests on a
 * connection, and each round resends the whole job (the daemon keeps no
 * state between requests) with the files read so far.  The last round
 * allowed says final, so the daemon answers whatever it still lacks.
 */
struct check_arg {
	Advisor__Request *rq;
	struct jobship *js;
	Advisor__Response *resp;
	char *err;
	size_t errlen;
};

/* A check's rounds on one connection: the first answer within share. */
static int check_fn(int fd, long long share, long long deadline, void *arg)
{
	struct check_arg *a = arg;
	int rc = WIRE_OK, round;

	if (a->resp) {
		advisor__response__free_unpacked(a->resp, NULL);
		a->resp = NULL;
	}
	if (a->js)
		a->rq->check->job = jobship_text(a->js, JOBREAD_MAX_ROUNDS <= 1);
	rc = hello_if_big(fd, share, a->rq, a->err, a->errlen);
	for (round = 0; rc == WIRE_OK; round++) {
		const Advisor__CheckResponse *cr;

		if (a->js)
			a->rq->check->job = jobship_text(a->js, round + 1 >= JOBREAD_MAX_ROUNDS);
		a->rq->has_id = 1;
		a->rq->id = (uint64_t)round + 1;
		rc = wire_exchange(fd, remaining(round == 0 ? share : deadline), a->rq, &a->resp,
				   a->err, a->errlen);
		if (rc != WIRE_OK)
			break;
		cr = a->resp->check;
		if (a->resp->body_case != ADVISOR__RESPONSE__BODY_CHECK || !cr) {
			if (a->err && a->errlen)
				adv_strlcpy(a->err, "the daemon answered a check with another message",
					    a->errlen);
			rc = WIRE_ERR_MALFORMED;
			break;
		}
		if (cr->n_need_files == 0)
			break;   /* the verdict */
		if (!a->js || round + 1 >= JOBREAD_MAX_ROUNDS) {
			if (a->err && a->errlen)
				adv_snprintf(a->err, a->errlen, "the daemon still asked for files after %d rounds",
					     round + 1);
			rc = WIRE_ERR_MALFORMED;
			break;
		}
		if (remaining(deadline) == 0) {
			rc = WIRE_ERR_TIMEOUT;
			break;
		}
		if (jobship_fetch(a->js, cr->need_files, cr->n_need_files) != 0) {
			rc = WIRE_ERR_NOMEM;
			break;
		}
		advisor__response__free_unpacked(a->resp, NULL);
		a->resp = NULL;
	}
	if (rc != WIRE_OK && rc != WIRE_ERR_REMOTE && a->resp) {
		advisor__response__free_unpacked(a->resp, NULL);
		a->resp = NULL;
	}
	return rc;
}

/* wire_client_check_job's body: on fd when >= 0 (left open), else a session to socket_path. */
static int check_job(int fd, const char *socket_path, int timeout_ms,
		     const struct adv_request *req, enum adv_context ctx, uint32_t job_id,
		     const char *parent_decision, struct jobship *js, struct adv_result *res,
		     char *decision_id, size_t idlen, char *err, size_t errlen)
{
	Advisor__Request rq = ADVISOR__REQUEST__INIT;
	struct convert_request_pb buf;
	struct check_arg a = { &rq, js, NULL, err, errlen };
	int rc;

	if (decision_id && idlen)
		decision_id[0] = '\0';
	if (err && errlen)
		err[0] = '\0';
	rq.body_case = ADVISOR__REQUEST__BODY_CHECK;
	rq.check = convert_request_to_pb(req, ctx, job_id, parent_decision, &buf);
	if (fd >= 0) {
		long long deadline = deadline_of(timeout_ms);

		rc = check_fn(fd, deadline, deadline, &a);
	} else {
		rc = session(socket_path, timeout_ms, check_fn, &a, err, errlen);
	}
	/* The request pointed into js: leave nothing dangling in the caller's view. */
	rq.check->job = NULL;
	if (rc == WIRE_OK) {
		convert_result_from_pb(a.resp->check, res);
		if (decision_id && idlen && a.resp->check->decision_id)
			adv_strlcpy(decision_id, a.resp->check->decision_id, idlen);
	} else if (rc != WIRE_ERR_REMOTE && err && errlen && !err[0]) {
		adv_snprintf(err, errlen, "%s", wire_strerror(rc));
	}
	if (a.resp)
		advisor__response__free_unpacked(a.resp, NULL);
	return rc;
}

int wire_client_check_job(const char *socket_path, int timeout_ms,
			  const struct adv_request *req, enum adv_context ctx,
			  uint32_t job_id, const char *parent_decision, struct jobship *js,
			  struct adv_result *res, char *decision_id, size_t idlen,
			  char *err, size_t errlen)
{
	return check_job(-1, socket_path, timeout_ms, req, ctx, job_id, parent_decision, js, res,
			 decision_id, idlen, err, errlen);
}

int wire_client_check_job_on(int fd, int timeout_ms, const struct adv_request *req,
			     enum adv_context ctx, uint32_t job_id, const char *parent_decision,
			     struct jobship *js, struct adv_result *res, char *decision_id,
			     size_t idlen, char *err, size_t errlen)
{
	return check_job(fd, NULL, timeout_ms, req, ctx, job_id, parent_decision, js, res,
			 decision_id, idlen, err, errlen);
}

int wire_open(const char *target, int timeout_ms, int *fd_out, char *err, size_t errlen)
{
	Advisor__Request h = ADVISOR__REQUEST__INIT;
	Advisor__StatusRequest st = ADVISOR__STATUS_REQUEST__INIT;
	Advisor__Response *resp = NULL;
	long long deadline = deadline_of(timeout_ms);
	int rc, fd;

	*fd_out = -1;
	if (err && errlen)
		err[0] = '\0';
	rc = wire_connect(target, timeout_ms, &fd);
	if (rc == WIRE_ERR_SERVER && err && errlen)
		adv_snprintf(err, errlen, "%s: %s", wire_strerror(rc), server_why);
	if (rc != WIRE_OK)
		return rc;
	/* A first request now: the daemon then waits idle_timeout_ms for the
	 * next, not auth_timeout_ms from accept. */
	h.body_case = ADVISOR__REQUEST__BODY_STATUS;
	h.status = &st;
	rc = wire_exchange(fd, remaining(deadline), &h, &resp, err, errlen);
	if (resp)
		advisor__response__free_unpacked(resp, NULL);
	if (rc != WIRE_OK) {
		close(fd);
		return rc;
	}
	*fd_out = fd;
	return WIRE_OK;
}
