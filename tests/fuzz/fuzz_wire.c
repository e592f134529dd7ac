/*
 * fuzz_wire.c - libFuzzer target for the daemon's input path: the frame
 * readers, the request decoder (advisor__request__unpack) and the request
 * handler (daemon/handler.c: dispatch, service.c, convert.c, the engine).
 *
 * The daemon runs in-process on the shipped catalog and policy, with a
 * real decision log (SQLite in a temporary directory) and, for mode 2, its
 * real epoll server on a unix socket there.  Byte 0 of the input picks:
 *   bit 0-1  0: the rest is one encoded Request given to handler_frame;
 *            1: the rest is a byte stream read with wire_read_frame over a
 *               socketpair, each frame given to handler_frame;
 *            2 or 3: the rest is written to the daemon's socket (the
 *               server's own frame reader, process_frames in server.c).
 *   bit 2    handler modes: the caller is uid 65534 instead of root.
 * Every answer must be a complete frame holding a Response of the current
 * protocol version that carries a body or an error, and the daemon must
 * close the connection once the client has stopped sending.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "advisor.pb-c.h"
#include "dlog/dlog.h"
#include "fuzz.h"
#include "handler.h"
#include "msg_stub.h"
#include "server.h"
#include "service/snapshot.h"
#include "stats.h"
#include "wire/wire.h"

#ifndef FUZZ_TOP_SRCDIR
#define FUZZ_TOP_SRCDIR "."
#endif

static char tmpdir[] = "/tmp/advisor-fuzz-XXXXXX";
static char sock_path[sizeof(tmpdir) + 32];   /* + ".lock" still fits p in cleanup() */
static char db_path[sizeof(tmpdir) + 32];
static const char *catalogs[1];
static struct handler H;
static bool server_up;

static void cleanup(void)
{
	char p[sizeof(tmpdir) + 32];

	if (server_up)
		server_stop();
	dlog_close();
	unlink(sock_path);
	snprintf(p, sizeof(p), "%s.lock", sock_path);
	unlink(p);
	unlink(db_path);
	snprintf(p, sizeof(p), "%s-wal", db_path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", db_path);
	unlink(p);
	rmdir(tmpdir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static struct snapshot_files files;
	static struct handler_info info;
	const char *etc = getenv("ADVISOR_FUZZ_ETC");
	static char cat_path[4096], pol_path[4096];
	struct server_opts so = { .workers = 1, .read_timeout_ms = 1000, .tcp_fd = -1,
				  .idle_timeout_ms = 2000, .max_conns = 64, .drain_ms = 100 };
	struct snapshot *snap;
	char err[ADV_ERR_MAX];
	int lfd, lock_fd;

	(void)argc;
	(void)argv;
	setenv("ADVISOR_NO_SLURM", "1", 1);
	signal(SIGPIPE, SIG_IGN);
	snprintf(cat_path, sizeof(cat_path), "%s/catalog.yaml", etc ? etc : FUZZ_TOP_SRCDIR "/etc");
	snprintf(pol_path, sizeof(pol_path), "%s/policy.yaml", etc ? etc : FUZZ_TOP_SRCDIR "/etc");
	catalogs[0] = cat_path;
	files = (struct snapshot_files){ catalogs, 1, pol_path };
	if (snapshot_load(&files, &snap, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_wire: %s (set ADVISOR_FUZZ_ETC to the etc/ directory)\n", err);
		exit(1);
	}
	FUZZ_ASSERT(mkdtemp(tmpdir) != NULL);
	snprintf(sock_path, sizeof(sock_path), "%s/advisord.sock", tmpdir);
	snprintf(db_path, sizeof(db_path), "%s/decisions.db", tmpdir);
	atexit(cleanup);
	stats_init();
	snapshot_install(&files, snap);
	if (dlog_open(db_path, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_wire: %s\n", err);
		exit(1);
	}
	info = (struct handler_info){ .socket = sock_path, .db = db_path,
				      .started = time(NULL) };
	handler_set_info(&info);
	handler_init(&H);
	lfd = server_listen(sock_path, &lock_fd, err, sizeof(err));
	if (lfd < 0 || server_start(lfd, &so, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_wire: %s\n", err);
		exit(1);
	}
	server_up = true;
	return 0;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* One encoded Response: the version and a body or an error. */
static void check_response(const uint8_t *buf, size_t len, const Advisor__Request *req)
{
	Advisor__Response *r = advisor__response__unpack(NULL, len, buf);

	if (!r) {
		fprintf(stderr, "the daemon sent a Response that does not decode (%zu bytes)\n",
			len);
		abort();
	}
	FUZZ_ASSERT(r->has_version && r->version == WIRE_VERSION);
	FUZZ_ASSERT(r->error != NULL || r->body_case != ADVISOR__RESPONSE__BODY__NOT_SET);
	if (r->error)
		FUZZ_ASSERT(r->error->message && r->error->message[0]);
	if (req && req->has_id)
		FUZZ_ASSERT(r->has_id && r->id == req->id);
	advisor__response__free_unpacked(r, NULL);
}

/* Frames in buf; a trailing part of a frame is a bug.  Returns the count. */
static size_t check_frames(const uint8_t *buf, size_t len, const Advisor__Request *req)
{
	size_t off = 0, n = 0;

	while (off < len) {
		uint32_t flen;

		FUZZ_ASSERT(len - off >= 4);
		flen = be32(buf + off);
		FUZZ_ASSERT(flen <= WIRE_MAX_FRAME && len - off - 4 >= flen);
		check_response(buf + off + 4, flen, req);
		off += 4 + flen;
		n++;
	}
	return n;
}

/* handler_frame on one frame: exactly one answer frame. */
static void handle(const struct peer *p, const uint8_t *frame, size_t len)
{
	Advisor__Request *req = advisor__request__unpack(NULL, len, frame);
	struct outbuf out = { NULL, 0, 0 };
	struct peer q = *p;

	(void)handler_frame(&H, &q, frame, len, &out);
	FUZZ_ASSERT(check_frames(out.data, out.len, req) == 1);
	handler_outbuf_free(&out);
	if (req)
		advisor__request__free_unpacked(req, NULL);
}

/* wire_read_frame over a socketpair holding the whole stream, then EOF. */
static void via_wire_reader(const struct peer *p, const uint8_t *data, size_t size)
{
	int sv[2], rc, sndbuf = 1 << 20;
	size_t frames = 0;

	FUZZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	(void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (size)
		FUZZ_ASSERT(send(sv[0], data, size, MSG_NOSIGNAL) == (ssize_t)size);
	FUZZ_ASSERT(shutdown(sv[0], SHUT_WR) == 0);
	for (;;) {
		uint8_t *buf = NULL;
		size_t len = 0;

		rc = wire_read_frame(sv[1], &buf, &len, 1000);
		if (rc != WIRE_OK) {
			FUZZ_ASSERT(buf == NULL);
			break;
		}
		FUZZ_ASSERT(len <= WIRE_MAX_FRAME);
		if (frames++ < 64)
			handle(p, buf, len);
		free(buf);
	}
	/* Everything is buffered and EOF follows: waiting would be a bug. */
	FUZZ_ASSERT(rc != WIRE_ERR_TIMEOUT);
	close(sv[0]);
	close(sv[1]);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The real server: send everything, stop sending, read until it closes. */
static void via_server(const uint8_t *data, size_t size)
{
	long long deadline = now_ms() + 10000;
	size_t sent = 0, got = 0, cap = 1 << 16;
	uint8_t *in = malloc(cap);
	bool shut = false;
	int fd = -1;

	FUZZ_ASSERT(in);
	FUZZ_ASSERT(wire_connect(sock_path, 2000, &fd) == WIRE_OK);
	FUZZ_ASSERT(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;

		if (!shut && sent == size) {
			FUZZ_ASSERT(shutdown(fd, SHUT_WR) == 0);
			shut = true;
		}
		if (!shut)
			pfd.events |= POLLOUT;
		if (left <= 0) {
			fprintf(stderr, "the daemon did not close the connection within 10 s "
				"of the client's EOF (sent %zu of %zu bytes)\n", sent, size);
			abort();
		}
		if (poll(&pfd, 1, (int)left) < 0) {
			FUZZ_ASSERT(errno == EINTR);
			continue;
		}
		if (!shut && (pfd.revents & POLLOUT)) {
			n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
			if (n > 0)
				sent += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				sent = size;   /* the daemon closed: it said why below */
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			if (got == cap) {
				cap *= 2;
				in = realloc(in, cap);
				FUZZ_ASSERT(in);
			}
			n = recv(fd, in + got, cap - got, 0);
			if (n == 0 || (n < 0 && errno == ECONNRESET))
				break;
			if (n > 0)
				got += (size_t)n;
		}
	}
	close(fd);
	check_frames(in, got, NULL);
	free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peer p = { .uid = 0, .gid = 0, .pid = 1 };

	if (size == 0)
		return 0;
	if (data[0] & 4)
		p.uid = p.gid = 65534;
	switch (data[0] & 3) {
	case 0:
		handle(&p, data + 1, size - 1);
		break;
	case 1:
		via_wire_reader(&p, data + 1, size - 1);
		break;
	default:
		via_server(data + 1, size - 1);
		break;
	}
	return 0;
}
