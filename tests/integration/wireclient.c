/*
 * wireclient.c - a small C client that misbehaves on purpose, for
 * test_daemon.sh: many concurrent clients, silent clients, half frames,
 * oversized, truncated, malformed and random frames, wrong versions, many
 * requests on one connection, and a stream of acknowledged decisions for the
 * kill -9 test.  It prints key=value lines for the shell to assert on.
 *
 *   wireclient SOCKET check N        N concurrent clients, one check each
 *   wireclient SOCKET multi N        N checks on one connection
 *   wireclient SOCKET silent         connect, send nothing, wait for close
 *   wireclient SOCKET half           send half a frame, wait for close
 *   wireclient SOCKET oversized      announce a 2 MiB frame
 *   wireclient SOCKET truncated      half a frame, then shut down writing
 *   wireclient SOCKET malformed      a frame that is not a Request
 *   wireclient SOCKET version        a Request with protocol version 99
 *   wireclient SOCKET random N       N connections of random bytes
 *   wireclient SOCKET stream MS      checks for MS ms; prints "ack <unix ms> <id>"
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "advisor.pb-c.h"
#include "convert.h"
#include "options.h"
#include "util.h"
#include "wire.h"

static const char *sock;

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long long real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Llama 3 8B on gpus H100s: the answer's layout must echo gpus. */
static void make_check(Advisor__Request *rq, struct convert_request_pb *buf,
		       struct adv_request *ar, int gpus)
{
	char err[256];

	engine_request_init(ar);
	adv_strlcpy(ar->res.gpu, "h100", sizeof(ar->res.gpu));
	ar->res.gpus = gpus;
	if (options_apply(&ar->wl, "model", "llama3-8b", err, sizeof(err)) != 0) {
		fprintf(stderr, "wireclient: %s\n", err);
		exit(2);
	}
	advisor__request__init(rq);
	rq->body_case = ADVISOR__REQUEST__BODY_CHECK;
	rq->check = convert_request_to_pb(ar, ADV_CTX_SBATCH, 0, NULL, buf);
}

/* One check on fd; 1 when answered with the right layout, 0 otherwise. */
static int check_on(int fd, int gpus, char *id, size_t idlen)
{
	Advisor__Request rq;
	struct convert_request_pb buf;
	struct adv_request ar;
	Advisor__Response *resp;
	char err[256];
	int ok;

	make_check(&rq, &buf, &ar, gpus);
	if (wire_exchange(fd, 5000, &rq, &resp, err, sizeof(err)) != WIRE_OK) {
		if (resp)
			advisor__response__free_unpacked(resp, NULL);
		return 0;
	}
	ok = resp->check && resp->check->layout && resp->check->layout->gpus == gpus &&
	     resp->check->decision_id;
	if (ok && id)
		adv_strlcpy(id, resp->check->decision_id, idlen);
	advisor__response__free_unpacked(resp, NULL);
	return ok;
}

struct job {
	pthread_t th;
	int gpus;
	int ok;
	double ms;
};

static void *check_thread(void *arg)
{
	struct job *j = arg;
	double t0 = mono_ms();
	int fd;

	if (wire_connect(sock, 5000, &fd) == WIRE_OK) {
		j->ok = check_on(fd, j->gpus, NULL, 0);
		close(fd);
	}
	j->ms = mono_ms() - t0;
	return NULL;
}

static int run_check(int n)
{
	struct job *jobs = calloc((size_t)n, sizeof(*jobs));
	double max = 0;
	int ok = 0, started = 0;

	if (!jobs)
		return 2;
	for (int i = 0; i < n; i++) {
		jobs[i].gpus = 8 * (1 + i % 32);
		if (pthread_create(&jobs[i].th, NULL, check_thread, &jobs[i]) != 0)
			break;
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(jobs[i].th, NULL);
		ok += jobs[i].ok;
		if (jobs[i].ms > max)
			max = jobs[i].ms;
	}
	printf("clients=%d\ncorrect=%d\nmax_ms=%.0f\n", n, ok, max);
	free(jobs);
	return ok == n ? 0 : 1;
}

static int run_multi(int n)
{
	int fd, ok = 0;

	if (wire_connect(sock, 5000, &fd) != WIRE_OK)
		return 2;
	for (int i = 0; i < n; i++)
		ok += check_on(fd, 8 * (1 + i % 32), NULL, 0);
	close(fd);
	printf("requests=%d\ncorrect=%d\n", n, ok);
	return ok == n ? 0 : 1;
}

/* wire_connect() gives a non-blocking socket; the raw modes here want blocking reads. */
static void blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

/* Waits until the daemon closes fd; prints how long that took. */
static int wait_closed(int fd, double t0)
{
	char b[256];
	ssize_t n;

	blocking(fd);
	while ((n = recv(fd, b, sizeof(b), 0)) > 0 || (n < 0 && errno == EINTR))
		;
	printf("closed_after_ms=%.0f\n", mono_ms() - t0);
	close(fd);
	return 0;
}

static int run_silent(void)
{
	double t0 = mono_ms();
	int fd;

	if (wire_connect(sock, 5000, &fd) != WIRE_OK)
		return 2;
	return wait_closed(fd, t0);
}

static int run_half(void)
{
	uint8_t half[10] = { 0, 0, 0, 100, 0x0a, 0x02 };
	double t0 = mono_ms();
	int fd;

	if (wire_connect(sock, 5000, &fd) != WIRE_OK)
		return 2;
	if (send(fd, half, sizeof(half), MSG_NOSIGNAL) != (ssize_t)sizeof(half))
		return 2;
	return wait_closed(fd, t0);
}

/* Sends raw bytes (optionally shutting down writing) and reports the answer. */
static int raw_exchange(const uint8_t *bytes, size_t len, bool shut)
{
	Advisor__Response *r;
	uint8_t *buf;
	size_t blen;
	int fd, rc;

	if (wire_connect(sock, 5000, &fd) != WIRE_OK)
		return 2;
	if (send(fd, bytes, len, MSG_NOSIGNAL) != (ssize_t)len)
		return 2;
	if (shut)
		shutdown(fd, SHUT_WR);
	rc = wire_read_frame(fd, &buf, &blen, 5000);
	if (rc != WIRE_OK) {
		printf("answer=none (%s)\n", wire_strerror(rc));
		close(fd);
		return 1;
	}
	r = advisor__response__unpack(NULL, blen, buf);
	free(buf);
	if (!r || !r->error) {
		printf("answer=not-an-error\n");
		return 1;
	}
	printf("error_code=%d\nerror=%s\n", r->error->code, r->error->message);
	advisor__response__free_unpacked(r, NULL);
	/* The daemon must close after an error answer. */
	rc = wire_read_frame(fd, &buf, &blen, 5000);
	printf("closed=%d\n", rc == WIRE_ERR_CLOSED);
	close(fd);
	return 0;
}

static int run_oversized(void)
{
	uint8_t hdr[4] = { 0x00, 0x20, 0x00, 0x00 };   /* 2 MiB */

	return raw_exchange(hdr, sizeof(hdr), false);
}

static int run_truncated(void)
{
	uint8_t half[10] = { 0, 0, 0, 100, 0x08, 0x01 };

	return raw_exchange(half, sizeof(half), true);
}

static int run_malformed(void)
{
	uint8_t f[12] = { 0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	return raw_exchange(f, sizeof(f), false);
}

static int run_version(void)
{
	Advisor__Request rq;
	struct convert_request_pb buf;
	struct adv_request ar;
	uint8_t frame[1024];
	size_t len;

	make_check(&rq, &buf, &ar, 8);
	rq.has_version = 1;
	rq.version = 99;
	len = advisor__request__get_packed_size(&rq);
	if (len + 4 > sizeof(frame))
		return 2;
	frame[0] = frame[1] = 0;
	frame[2] = (uint8_t)(len >> 8);
	frame[3] = (uint8_t)len;
	advisor__request__pack(&rq, frame + 4);
	return raw_exchange(frame, len + 4, false);
}

static int run_random(int n)
{
	unsigned seed = 12345;
	int done = 0;

	for (int i = 0; i < n; i++) {
		uint8_t junk[256];
		char b[256];
		size_t len = 1 + (size_t)(rand_r(&seed) % (int)sizeof(junk));
		int fd;

		for (size_t k = 0; k < len; k++)
			junk[k] = (uint8_t)rand_r(&seed);
		if (wire_connect(sock, 5000, &fd) != WIRE_OK)
			continue;
		if (send(fd, junk, len, MSG_NOSIGNAL) >= 0) {
			struct timeval tv = { 10, 0 };

			shutdown(fd, SHUT_WR);
			blocking(fd);
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			while (recv(fd, b, sizeof(b), 0) > 0)
				;
			done++;
		}
		close(fd);
	}
	printf("random_connections=%d\n", done);
	return done == n ? 0 : 1;
}

static int run_stream(int ms)
{
	double end = mono_ms() + ms;
	int i = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (mono_ms() < end) {
		char id[64];
		int fd;

		if (wire_connect(sock, 1000, &fd) != WIRE_OK)
			break;
		if (check_on(fd, 8 * (1 + i++ % 32), id, sizeof(id)))
			printf("ack %lld %s\n", real_ms(), id);
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode;
	int n = argc > 3 ? atoi(argv[3]) : 1;

	if (argc < 3) {
		fprintf(stderr, "usage: wireclient SOCKET MODE [N]\n");
		return 2;
	}
	sock = argv[1];
	mode = argv[2];
	if (!strcmp(mode, "check")) return run_check(n);
	if (!strcmp(mode, "multi")) return run_multi(n);
	if (!strcmp(mode, "silent")) return run_silent();
	if (!strcmp(mode, "half")) return run_half();
	if (!strcmp(mode, "oversized")) return run_oversized();
	if (!strcmp(mode, "truncated")) return run_truncated();
	if (!strcmp(mode, "malformed")) return run_malformed();
	if (!strcmp(mode, "version")) return run_version();
	if (!strcmp(mode, "random")) return run_random(n);
	if (!strcmp(mode, "stream")) return run_stream(n);
	fprintf(stderr, "wireclient: unknown mode %s\n", mode);
	return 2;
}
