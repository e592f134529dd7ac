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
 *
 * For test_load.sh and test_faults.sh (issue 7):
 *   wireclient SOCKET sig            one partition check; prints its signature
 *   wireclient SOCKET load C N       C clients, N partition checks each; counts
 *                                    answers per signature ("sig COUNT SIG")
 *   wireclient SOCKET plugin TMO MS  wire_client_check() with timeout TMO for MS
 *                                    ms, as the plugin calls it: "ack <unix ms>
 *                                    <id>" or "unavail <unix ms> <elapsed ms>"
 *   wireclient SOCKET hold N MS KIND N connections (KIND idle: silent, half:
 *                                    half a frame each) held MS ms; counts the
 *                                    ones the daemon closed
 *   wireclient SOCKET slowread K S   K pipelined checks, then reads one byte a
 *                                    second for S seconds
 *   wireclient SOCKET latency C N    C clients, N checks each on a fresh
 *                                    connection; p50, p99 and max latency
 *
 * For test_robust.sh:
 *   wireclient SOCKET flood C MS     C connections pipeline catalog requests for
 *                                    MS ms and never read an answer; prints the
 *                                    KiB of requests the daemon took per client
 *
 * For test_fair.sh and test_ops.sh (issue 14):
 *   wireclient SOCKET decide CTX K=V...  one check as the plugin (CTX sbatch, salloc,
 *                                    srun, step) or advisorctl would send it; K is
 *                                    gpu, gpus, nodes, gpus_per_node, partition, job,
 *                                    account (issue 30) or a workload option (model, layout, zero...);
 *                                    parent=ID a node check's submission, script=FILE
 *                                    the batch script as sbatch ships it (issue 21),
 *                                    uid=N the job's owner as slurmstepd sends it
 *                                    (issue 27); prints verdict, id, codes and
 *                                    text_read; exits 0/1/2 by verdict
 *   wireclient SOCKET fair MS        one connection pipelines, as fast as it goes for
 *                                    MS ms, identical what-if queries and identical
 *                                    sbatch-context checks, alternately; counts the
 *                                    answers of each kind, the rate-limited ones and
 *                                    the distinct decision ids
 *   wireclient SOCKET flood MS       as fair, only sbatch-context checks, each naming a
 *                                    partition of its own (issue 27)
 *   wireclient SOCKET paced N MS     N sbatch-context checks, one every MS ms, each on
 *                                    a fresh connection; p50, p99 and max latency
 *
 * For test_tcp.sh (issue 13), SOCKET being HOST:PORT:
 *   wireclient ADDR auth CRED        after the hello (issue 20), one check carrying CRED
 *                                    as its MUNGE credential ("none": none; "good": one
 *                                    bound to the hello, printed as cred=; "ttl1": the
 *                                    same with a time to live of 1 s, sent 2.2 s later;
 *                                    "legacy": an old client's, payload "advisor", with
 *                                    no hello); prints the error and whether the daemon
 *                                    closed the connection
 *
 * So that the shell waits for a state rather than sleeping (issue 25):
 * silent and half print "connected=1", hold "opened=N", flood "opened=N"
 * and then "stalled=1" once the daemon takes no more, slowread
 * "pipelined=1" once its checks are sent, each as soon as it happens.
 * With WIRECLIENT_STOP=FILE in the environment, stream, plugin, hold and
 * fair also end (and print their summary) once FILE exists: a test runs
 * them for as long as its scenario takes, however slow the machine.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "advisor.pb-c.h"
#include "engine/names.h"
#include "engine/options.h"
#include "util.h"
#include "wire/auth.h"
#include "wire/convert.h"
#include "wire/jobship.h"
#include "wire/wire.h"

static const char *sock;

/* WIRECLIENT_STOP names a file whose existence ends the timed modes early. */
static bool stop_asked(void)
{
	static const char *path;
	static bool looked;

	if (!looked) {
		path = getenv("WIRECLIENT_STOP");
		looked = true;
	}
	return path && path[0] && access(path, F_OK) == 0;
}

/* A state line the shell waits for: out at once, whatever stdout is. */
static void say(const char *line)
{
	printf("%s\n", line);
	fflush(stdout);
}

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

/* Llama 3 8B on gpus H100s with plain data parallelism (ZeRO 0 stated, so
 * that its memory reject rests on what the check states: issue 26): the
 * answer's layout must echo gpus. */
static void make_check(Advisor__Request *rq, struct convert_request_pb *buf,
		       struct adv_request *ar, int gpus)
{
	char err[256];

	engine_request_init(ar);
	adv_strlcpy(ar->res.gpu, "h100", sizeof(ar->res.gpu));
	ar->res.gpus = gpus;
	if (options_apply(&ar->wl, "model", "llama3-8b", err, sizeof(err)) != 0 ||
	    options_apply(&ar->wl, "zero", "0", err, sizeof(err)) != 0) {
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
	say("connected=1");
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
	say("connected=1");
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

/*
 * TCP (issue 13): one check whose credential is cred as given ("none": no
 * credential at all), packed by hand so that nothing mints a fresh one;
 * prints the daemon's error (or "verdict=N" when accepted).  Before it,
 * the hello (issue 20), unless cred is "legacy".
 */
static int run_auth(const char *cred)
{
	Advisor__Request rq;
	struct convert_request_pb buf;
	struct adv_request ar;
	Advisor__Response *r;
	uint8_t frame[8192], *in;
	size_t len, ilen;
	char *minted = NULL, payload[AUTH_BINDING_MAX], err[400];
	bool legacy = !strcmp(cred, "legacy");
	int fd, rc;

	if (wire_connect_bare(sock, 5000, &fd) != WIRE_OK)
		return 2;
	if (!legacy) {
		struct wire_hello h;

		if (wire_hello(fd, 5000, &h, err, sizeof(err)) != WIRE_OK) {
			printf("hello=refused\nwhy=%s\n", err);
			close(fd);
			return 1;
		}
		printf("hello=ok\nname=%s\n", h.name);
		auth_binding(payload, sizeof(payload), AUTH_CLIENT, h.name, h.cnonce, h.snonce);
	} else {
		adv_strlcpy(payload, "advisor", sizeof(payload));
	}
	if (legacy || !strcmp(cred, "good") || !strcmp(cred, "ttl1")) {
		if (auth_encode(NULL, payload, !strcmp(cred, "ttl1") ? 1 : 0, &minted, err,
				sizeof(err)) != AUTH_OK) {
			printf("mint=%s\n", err);
			close(fd);
			return 2;
		}
		printf("cred=%s\n", minted);
		if (!strcmp(cred, "ttl1")) {
			struct timespec ts = { 2, 200000000 };

			nanosleep(&ts, NULL);
		}
		cred = minted;
	}
	fflush(stdout);
	make_check(&rq, &buf, &ar, 8);
	rq.has_version = 1;
	rq.version = WIRE_VERSION;
	if (strcmp(cred, "none")) {
		rq.has_auth = 1;
		rq.auth.data = (uint8_t *)(uintptr_t)cred;
		rq.auth.len = strlen(cred);
	}
	len = advisor__request__get_packed_size(&rq);
	if (len + 4 > sizeof(frame)) {
		free(minted);
		close(fd);
		return 2;
	}
	frame[0] = frame[1] = 0;
	frame[2] = (uint8_t)(len >> 8);
	frame[3] = (uint8_t)len;
	advisor__request__pack(&rq, frame + 4);
	free(minted);
	if (send(fd, frame, len + 4, MSG_NOSIGNAL) != (ssize_t)(len + 4)) {
		close(fd);
		return 2;
	}
	rc = wire_read_frame(fd, &in, &ilen, 5000);
	if (rc != WIRE_OK) {
		printf("answer=none (%s)\n", wire_strerror(rc));
		close(fd);
		return 1;
	}
	r = advisor__response__unpack(NULL, ilen, in);
	free(in);
	if (!r) {
		close(fd);
		return 1;
	}
	if (r->error && r->error->code)
		printf("error_code=%d\nerror=%s\n", r->error->code, r->error->message);
	else
		printf("verdict=%d\n", r->check ? r->check->verdict : -1);
	advisor__response__free_unpacked(r, NULL);
	rc = wire_read_frame(fd, &in, &ilen, 2000);
	printf("closed=%d\n", rc == WIRE_ERR_CLOSED);
	if (rc == WIRE_OK)
		free(in);
	close(fd);
	return 0;
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
	while (mono_ms() < end && !stop_asked()) {
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

/* ---- issue 7: load, faults, hostile clients --------------------------------- */

/*
 * The load request: its answer depends on both catalog and policy (the
 * partition names the GPU, max_gpus, mode and reserve_gib all show), so an
 * answer from a half-loaded configuration would not match either policy.
 */
static void make_load(Advisor__Request *rq, struct convert_request_pb *buf,
		      struct adv_request *ar)
{
	static const char *const kv[][2] = {
		{ "model", "llama3-8b" }, { "layout", "tp2" }, { "zero", "1" }, { "ckpt", "1h" },
	};
	char err[256];

	engine_request_init(ar);
	adv_strlcpy(ar->res.partition, "h100", sizeof(ar->res.partition));
	ar->res.gpus = 4096;
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		if (options_apply(&ar->wl, kv[i][0], kv[i][1], err, sizeof(err)) != 0) {
			fprintf(stderr, "wireclient: %s\n", err);
			exit(2);
		}
	advisor__request__init(rq);
	rq->body_case = ADVISOR__REQUEST__BODY_CHECK;
	rq->check = convert_request_to_pb(ar, ADV_CTX_SBATCH, 0, NULL, buf);
}

/* What distinguishes one configuration's answer from another's. */
static void signature(const Advisor__CheckResponse *c, char *sig, size_t len)
{
	size_t off;

	off = (size_t)snprintf(sig, len, "verdict=%d,mode=%d,gpus=%d,usable=%.3f,codes=",
			       c->verdict, c->mode, c->layout ? c->layout->gpus : -1,
			       c->memory ? c->memory->usable_gib : -1.0);
	for (size_t i = 0; i < c->n_findings && off < len; i++)
		off += (size_t)snprintf(sig + off, len - off, "%s%s", i ? "+" : "",
					c->findings[i]->code ? c->findings[i]->code : "?");
}

/* One load check on fd; 0 with sig filled, -1 when unanswered. */
static int load_on(int fd, char *sig, size_t len)
{
	Advisor__Request rq;
	struct convert_request_pb buf;
	struct adv_request ar;
	Advisor__Response *resp;
	char err[256];
	int rc;

	make_load(&rq, &buf, &ar);
	rc = wire_exchange(fd, 5000, &rq, &resp, err, sizeof(err));
	if (rc != WIRE_OK) {
		if (resp)
			advisor__response__free_unpacked(resp, NULL);
		return -1;
	}
	if (resp->check && resp->check->decision_id)
		signature(resp->check, sig, len);
	else
		snprintf(sig, len, "not-a-check");
	advisor__response__free_unpacked(resp, NULL);
	return 0;
}

static int run_sig(void)
{
	char sig[512];
	int fd;

	if (wire_connect(sock, 5000, &fd) != WIRE_OK)
		return 2;
	if (load_on(fd, sig, sizeof(sig)) != 0) {
		close(fd);
		return 1;
	}
	close(fd);
	printf("%s\n", sig);
	return 0;
}

#define MAX_SIGS 16

struct load_client {
	pthread_t th;
	int id, n;
	int answered, lost;
	char sigs[MAX_SIGS][512];
	int counts[MAX_SIGS];
	int nsigs;
};

static void tally(struct load_client *c, const char *sig)
{
	for (int i = 0; i < c->nsigs; i++)
		if (!strcmp(c->sigs[i], sig)) {
			c->counts[i]++;
			return;
		}
	if (c->nsigs < MAX_SIGS) {
		adv_strlcpy(c->sigs[c->nsigs], sig, sizeof(c->sigs[0]));
		c->counts[c->nsigs++] = 1;
	}
}

/* Even clients keep one connection, odd ones connect per request (like sbatch). */
static void *load_thread(void *arg)
{
	struct load_client *c = arg;
	bool keep = c->id % 2 == 0;
	int fd = -1;

	for (int i = 0; i < c->n; i++) {
		char sig[512];

		if (fd < 0 && wire_connect(sock, 5000, &fd) != WIRE_OK) {
			fd = -1;
			c->lost++;
			continue;
		}
		if (load_on(fd, sig, sizeof(sig)) == 0) {
			c->answered++;
			tally(c, sig);
		} else {
			c->lost++;
			close(fd);
			fd = -1;
		}
		if (!keep && fd >= 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int run_load(int clients, int n)
{
	struct load_client *cs = calloc((size_t)clients, sizeof(*cs));
	struct load_client all = { 0 };
	int started = 0;

	if (!cs)
		return 2;
	for (int i = 0; i < clients; i++) {
		cs[i].id = i;
		cs[i].n = n;
		if (pthread_create(&cs[i].th, NULL, load_thread, &cs[i]) != 0)
			break;
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(cs[i].th, NULL);
		all.answered += cs[i].answered;
		all.lost += cs[i].lost;
		for (int k = 0; k < cs[i].nsigs; k++)
			for (int m = 0; m < cs[i].counts[k]; m++)
				tally(&all, cs[i].sigs[k]);
	}
	printf("requests=%d\nanswered=%d\nlost=%d\n", clients * n, all.answered,
	       clients * n - all.answered);
	for (int k = 0; k < all.nsigs; k++)
		printf("sig %d %s\n", all.counts[k], all.sigs[k]);
	free(cs);
	return started == clients ? 0 : 1;
}

/* The plugin's own call; any result but WIRE_OK is where on_unavailable applies. */
static int run_plugin(int timeout_ms, int ms)
{
	double end = mono_ms() + ms, max_unavail = 0, max_ok = 0;
	int calls = 0, ok = 0, unavail = 0;
	char err[256];

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (mono_ms() < end && !stop_asked()) {
		struct adv_request ar;
		struct adv_result res;
		char id[64];
		double t0 = mono_ms(), dt;
		int rc;

		engine_request_init(&ar);
		adv_strlcpy(ar.res.gpu, "h100", sizeof(ar.res.gpu));
		ar.res.gpus = 8 * (1 + calls % 32);
		if (options_apply(&ar.wl, "model", "llama3-8b", err, sizeof(err)) != 0)
			return 2;
		rc = wire_client_check(sock, timeout_ms, &ar, ADV_CTX_SBATCH, 0, NULL, &res,
				       id, sizeof(id), err, sizeof(err));
		dt = mono_ms() - t0;
		calls++;
		if (rc == WIRE_OK && res.has_layout && res.layout.gpus == ar.res.gpus && id[0]) {
			ok++;
			max_ok = fmax(max_ok, dt);
			printf("ack %lld %s\n", real_ms(), id);
		} else {
			unavail++;
			max_unavail = fmax(max_unavail, dt);
			printf("unavail %lld %.1f %s\n", real_ms(), dt, wire_strerror(rc));
			/* A failed call returns fast when nothing listens: do not spin. */
			if (dt < 5) {
				struct timespec w = { 0, 5 * 1000 * 1000 };

				nanosleep(&w, NULL);
			}
		}
	}
	printf("calls=%d\nok=%d\nunavailable=%d\nmax_unavailable_ms=%.1f\nmax_ok_ms=%.1f\n",
	       calls, ok, unavail, max_unavail, max_ok);
	return 0;
}

/* Lets this process hold many descriptors (the hard limit is the ceiling). */
static void raise_nofile(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		perror("wireclient: setrlimit");
}

static int run_hold(int n, int ms, const char *kind)
{
	uint8_t half[10] = { 0, 0, 0, 100, 0x0a, 0x02 };
	bool is_half = !strcmp(kind, "half");
	struct pollfd *pf = calloc((size_t)n, sizeof(*pf));
	int opened = 0, closed = 0;
	double t0 = mono_ms(), end, first_close = -1;

	if (!pf)
		return 2;
	raise_nofile((rlim_t)n + 64);
	for (int i = 0; i < n; i++) {
		int fd;

		if (wire_connect(sock, 5000, &fd) != WIRE_OK) {
			pf[i].fd = -1;
			continue;
		}
		if (is_half && send(fd, half, sizeof(half), MSG_NOSIGNAL) != (ssize_t)sizeof(half)) {
			close(fd);
			pf[i].fd = -1;
			continue;
		}
		pf[i].fd = fd;
		pf[i].events = POLLIN;
		opened++;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("opened=%d\n", opened);
	end = t0 + ms;
	while (mono_ms() < end && !stop_asked()) {
		/* A tenth of a second at most, to see the stop file. */
		int r = poll(pf, (nfds_t)n, (int)fmax(0, fmin(end - mono_ms() + 1, 100)));

		if (r < 0 && errno != EINTR)
			break;
		for (int i = 0; r > 0 && i < n; i++) {
			char b[256];

			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			/* Drain; an error answer before the close is fine. */
			if (recv(pf[i].fd, b, sizeof(b), MSG_DONTWAIT) > 0)
				continue;
			if (first_close < 0)
				first_close = mono_ms() - t0;
			close(pf[i].fd);
			pf[i].fd = -1;
			closed++;
		}
	}
	printf("closed=%d\nopen_at_end=%d\nfirst_close_ms=%.0f\n", closed, opened - closed,
	       first_close);
	for (int i = 0; i < n; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	free(pf);
	return 0;
}

/* Pipelines k checks without reading, so the answers back up in the daemon. */
static int run_slowread(int k, int seconds)
{
	Advisor__Request rq;
	struct convert_request_pb buf;
	struct adv_request ar;
	size_t len, total = 0;
	uint8_t *frames;
	double t0 = mono_ms();
	long got = 0;
	int fd;
	bool closed = false;
	char err[256];

	make_check(&rq, &buf, &ar, 64);
	/* An accepted job (ZeRO-1 fits): no fix search, so even a daemon under
	 * valgrind fills the reader's socket within seconds and the read
	 * timeout, not the answers, is what is measured. */
	if (options_apply(&ar.wl, "zero", "1", err, sizeof(err)) != 0)
		return 2;
	rq.check = convert_request_to_pb(&ar, ADV_CTX_SBATCH, 0, NULL, &buf);
	rq.has_version = 1;
	rq.version = WIRE_VERSION;
	len = advisor__request__get_packed_size(&rq);
	frames = malloc((len + 4) * (size_t)k);
	if (!frames || wire_connect(sock, 5000, &fd) != WIRE_OK) {
		free(frames);
		return 2;
	}
	for (int i = 0; i < k; i++) {
		uint8_t *f = frames + total;

		f[0] = (uint8_t)(len >> 24);
		f[1] = (uint8_t)(len >> 16);
		f[2] = (uint8_t)(len >> 8);
		f[3] = (uint8_t)len;
		advisor__request__pack(&rq, f + 4);
		total += len + 4;
	}
	blocking(fd);
	{
		struct timeval tv = { 2, 0 };

		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	for (size_t off = 0; off < total;) {
		ssize_t n = send(fd, frames + off, total - off, MSG_NOSIGNAL);

		if (n <= 0)
			break;      /* the daemon stopped reading: that is its backpressure */
		off += (size_t)n;
	}
	free(frames);
	setvbuf(stdout, NULL, _IOLBF, 0);
	say("pipelined=1");
	for (int s = 0; s < seconds; s++) {
		/* The daemon's close shows as a hang-up while its answers are still unread. */
		struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
		char b;

		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR))) {
			closed = true;
			break;
		}
		got += recv(fd, &b, 1, MSG_DONTWAIT) > 0;
		sleep(1);
	}
	printf("bytes_read=%ld\nclosed=%d\nclosed_after_ms=%.0f\n", got, closed, mono_ms() - t0);
	close(fd);
	return 0;
}

struct lat_client {
	pthread_t th;
	int id, n, errors;
	double *ms;
};

/* Catalog requests (small question, big answer) until the socket is full, for ms. */
static int run_flood(int clients, int ms)
{
	Advisor__Request rq = ADVISOR__REQUEST__INIT;
	Advisor__CatalogRequest cr = ADVISOR__CATALOG_REQUEST__INIT;
	uint8_t frame[64];
	size_t len;
	int *fds = calloc((size_t)clients, sizeof(*fds));
	size_t sent = 0;
	double end = mono_ms() + ms;
	int open = 0;
	bool stalled = false;

	if (!fds)
		return 2;
	rq.has_version = 1;
	rq.version = WIRE_VERSION;
	rq.body_case = ADVISOR__REQUEST__BODY_CATALOG;
	rq.catalog = &cr;
	len = advisor__request__get_packed_size(&rq);
	if (len + 4 > sizeof(frame))
		return 2;
	frame[0] = frame[1] = frame[2] = 0;
	frame[3] = (uint8_t)len;
	advisor__request__pack(&rq, frame + 4);
	len += 4;
	raise_nofile((rlim_t)clients + 64);
	for (int i = 0; i < clients; i++) {
		if (wire_connect(sock, 5000, &fds[i]) != WIRE_OK) {
			fds[i] = -1;
			continue;
		}
		open++;
	}
	{
		char line[64];

		snprintf(line, sizeof(line), "opened=%d", open);
		say(line);
	}
	while (mono_ms() < end) {
		bool progress = false;

		for (int i = 0; i < clients; i++) {
			uint8_t many[64 * 64];
			size_t k = sizeof(many) / len;
			ssize_t n;

			if (fds[i] < 0)
				continue;
			for (size_t j = 0; j < k; j++)
				memcpy(many + j * len, frame, len);
			/* Whole frames only, so the stream stays parseable. */
			n = send(fds[i], many, k * len, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n > 0) {
				sent += (size_t)n;
				progress = true;
			} else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
				close(fds[i]);
				fds[i] = -1;
			}
		}
		if (!progress) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };

			if (!stalled && open > 0) {
				say("stalled=1");
				stalled = true;
			}
			nanosleep(&ts, NULL);
		}
	}
	printf("connections=%d\nsent_kib=%zu\n", open, open ? sent / 1024 / (size_t)open : 0);
	for (int i = 0; i < clients; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return open == clients ? 0 : 1;
}

static void *lat_thread(void *arg)
{
	struct lat_client *c = arg;

	for (int i = 0; i < c->n; i++) {
		double t0 = mono_ms();
		int fd, ok = 0;

		if (wire_connect(sock, 5000, &fd) == WIRE_OK) {
			ok = check_on(fd, 8 * (1 + (c->id + i) % 32), NULL, 0);
			close(fd);
		}
		c->ms[i] = mono_ms() - t0;
		c->errors += !ok;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int run_latency(int clients, int n)
{
	struct lat_client *cs = calloc((size_t)clients, sizeof(*cs));
	double *all = calloc((size_t)clients * (size_t)n, sizeof(double));
	int errors = 0, started = 0;
	size_t total = 0;

	if (!cs || !all) {
		free(cs);
		free(all);
		return 2;
	}
	for (int i = 0; i < clients; i++) {
		cs[i].id = i;
		cs[i].n = n;
		cs[i].ms = all + (size_t)i * (size_t)n;
		if (pthread_create(&cs[i].th, NULL, lat_thread, &cs[i]) != 0)
			break;
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(cs[i].th, NULL);
		errors += cs[i].errors;
	}
	total = (size_t)started * (size_t)n;
	qsort(all, total, sizeof(double), cmp_double);
	printf("checks=%zu\nerrors=%d\np50_ms=%.3f\np99_ms=%.3f\nmax_ms=%.3f\n", total, errors,
	       total ? all[total / 2] : 0, total ? all[(size_t)((double)total * 0.99)] : 0,
	       total ? all[total - 1] : 0);
	free(cs);
	free(all);
	return started == clients && errors == 0 ? 0 : 1;
}

/* ---- issue 14: fairness ------------------------------------------------------- */

static int run_decide(int argc, char **argv)
{
	Advisor__Request rq = ADVISOR__REQUEST__INIT;
	struct convert_request_pb buf;
	struct adv_request ar;
	Advisor__Response *resp = NULL;
	uint32_t job = 0, uid = 0;
	bool has_uid = false;
	int ctx = -1, fd, rc;
	char err[256];
	const char *parent = NULL, *script = NULL;
	struct scripttext text = { NULL, 0, 0, 0, JOBREAD_CUT_NONE };
	struct jobship *js = NULL;

	for (int i = 0; i < ADV_CTX_COUNT; i++)
		if (!strcmp(argv[3], engine_context_name((enum adv_context)i)))
			ctx = i;
	if (ctx < 0) {
		fprintf(stderr, "wireclient: unknown context %s\n", argv[3]);
		return 64;
	}
	engine_request_init(&ar);
	for (int i = 4; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		const char *k = argv[i], *v;

		if (!eq) {
			fprintf(stderr, "wireclient: want KEY=VALUE, got %s\n", argv[i]);
			return 64;
		}
		*eq = '\0';
		v = eq + 1;
		if (!strcmp(k, "gpu"))
			adv_strlcpy(ar.res.gpu, v, sizeof(ar.res.gpu));
		else if (!strcmp(k, "partition"))
			adv_strlcpy(ar.res.partition, v, sizeof(ar.res.partition));
		else if (!strcmp(k, "account"))
			adv_strlcpy(ar.account, v, sizeof(ar.account));
		else if (!strcmp(k, "gpus"))
			ar.res.gpus = atoi(v);
		else if (!strcmp(k, "nodes"))
			ar.res.nodes = atoi(v);
		else if (!strcmp(k, "gpus_per_node"))
			ar.res.gpus_per_node = atoi(v);
		else if (!strcmp(k, "job"))
			job = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(k, "parent"))
			parent = v;
		else if (!strcmp(k, "uid")) {
			uid = (uint32_t)strtoul(v, NULL, 10);
			has_uid = true;
		}
		else if (!strcmp(k, "script"))
			script = v;
		else if (options_apply(&ar.wl, k, v, err, sizeof(err)) != 0) {
			fprintf(stderr, "wireclient: %s\n", err);
			return 64;
		}
	}
	rq.body_case = ADVISOR__REQUEST__BODY_CHECK;
	ar.has_job_uid = has_uid;
	ar.job_uid = uid;
	rq.check = convert_request_to_pb(&ar, (enum adv_context)ctx, job, parent, &buf);
	if (script) {
		static char cwd[4096];

		/* As the plugin reads and ships it (scripttext.h). */
		if (scripttext_read(&text, script, 0, scripttext_limit(NULL), 0) != 0 ||
		    !getcwd(cwd, sizeof(cwd))) {
			fprintf(stderr, "wireclient: cannot read %s\n", script);
			return 66;
		}
		/* The last round: files the reader wants count as unreadable. */
		js = jobship_new(JOBREAD_SBATCH, script, &text, 0, NULL, NULL, cwd, 0, 0);
		if (!js)
			return 70;
		rq.check->job = jobship_text(js, true);
	}
	if (wire_connect(sock, 5000, &fd) != WIRE_OK)
		return 69;
	rc = wire_exchange(fd, 5000, &rq, &resp, err, sizeof(err));
	close(fd);
	jobship_free(js);
	scripttext_free(&text);
	if (rc != WIRE_OK || !resp || !resp->check) {
		fprintf(stderr, "wireclient: %s\n", resp && resp->error && resp->error->message
			? resp->error->message : err);
		if (resp)
			advisor__response__free_unpacked(resp, NULL);
		return 3;
	}
	printf("verdict=%d\nid=%s\ncodes=", resp->check->verdict,
	       resp->check->decision_id ? resp->check->decision_id : "");
	for (size_t i = 0; i < resp->check->n_findings; i++)
		printf("%s%s", i ? "," : "", resp->check->findings[i]->code);
	printf("\ntext_read=%d\n", resp->check->has_text_read && resp->check->text_read);
	rc = resp->check->verdict;
	advisor__response__free_unpacked(resp, NULL);
	return rc >= 0 && rc <= 2 ? rc : 3;
}

/* Appends rq as a frame to out (size cap); false when it does not fit. */
static bool frame_append(uint8_t *out, size_t cap, size_t *len, Advisor__Request *rq)
{
	size_t n = advisor__request__get_packed_size(rq);

	if (*len + 4 + n > cap)
		return false;
	out[*len] = (uint8_t)(n >> 24);
	out[*len + 1] = (uint8_t)(n >> 16);
	out[*len + 2] = (uint8_t)(n >> 8);
	out[*len + 3] = (uint8_t)n;
	advisor__request__pack(rq, out + *len + 4);
	*len += 4 + n;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct fair_counts {
	unsigned long plugin_sent, plugin_ok, query_sent, query_ok, limited, errors;
	unsigned retry_max;
	char **ids;                /* plugin answers' decision ids, one per change */
	size_t n_ids, cap_ids;
};

static void fair_answer(struct fair_counts *fc, const Advisor__Response *r)
{
	bool plugin = r->has_id && (r->id & 1);

	if (r->error && r->error->code == ADVISOR__ERROR_CODE__ERR_RATE_LIMITED && !plugin) {
		fc->limited++;
		if (r->error->retry_after_ms > fc->retry_max)
			fc->retry_max = r->error->retry_after_ms;
		return;
	}
	if (!r->check || !r->check->decision_id || r->error) {
		fc->errors++;
		return;
	}
	if (!plugin) {
		fc->query_ok++;
		return;
	}
	fc->plugin_ok++;
	/* Folded answers repeat the id of their record: keep one per run of equal ids. */
	if (fc->n_ids && !strcmp(fc->ids[fc->n_ids - 1], r->check->decision_id))
		return;
	if (fc->n_ids == fc->cap_ids) {
		size_t cap = fc->cap_ids ? fc->cap_ids * 2 : 1024;
		char **p = realloc(fc->ids, cap * sizeof(*p));

		if (!p)
			exit(2);
		fc->ids = p;
		fc->cap_ids = cap;
	}
	fc->ids[fc->n_ids++] = strdup(r->check->decision_id);
}

/*
 * User A of test_fair.sh: what a broken workflow script or a raw client
 * does, as fast as one connection goes, with up to WINDOW requests in flight.
 */
/*
 * fair, or (varied, issue 27) only sbatch-context checks, each naming a
 * partition of its own ("flood-N"), as the probe that grew the log past
 * max_mb sent them.
 */
static int run_fair(int ms, bool varied)
{
	static char part[32];
	enum { WINDOW = 256 };
	static uint8_t out[256 * 1024], in[512 * 1024];
	Advisor__Request q, pl;
	struct convert_request_pb qb, pb;
	struct adv_request qa, pa;
	struct fair_counts fc = { 0 };
	size_t out_len = 0, out_off = 0, in_len = 0, distinct = 0;
	unsigned long seq = 0, answered = 0;
	double t0 = mono_ms(), end = t0 + ms, took;
	int fd;

	make_check(&q, &qb, &qa, 8);
	q.check->has_context = 1;
	q.check->context = ADVISOR__CONTEXT__CTX_ADVISORCTL;
	make_check(&pl, &pb, &pa, 8);
	/* A partition of the test policy: no default-partition lookup, the same row each time. */
	q.check->resources->partition = pl.check->resources->partition = (char *)"h100";
	q.has_version = pl.has_version = 1;
	q.version = pl.version = WIRE_VERSION;
	q.has_id = pl.has_id = 1;
	if (wire_connect(sock, 5000, &fd) != WIRE_OK)
		return 2;
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		bool sending = mono_ms() < end && !stop_asked();

		while (sending && seq - answered < WINDOW) {
			Advisor__Request *rq = (seq & 1) || varied ? &pl : &q;

			if (varied) {
				snprintf(part, sizeof(part), "flood-%lu", seq);
				pl.check->resources->partition = part;
			}
			/* Odd ids are plugin checks (fair_answer). */
			rq->id = varied ? seq * 2 + 1 : seq;
			if (!frame_append(out, sizeof(out), &out_len, rq))
				break;
			if (seq & 1 || varied)
				fc.plugin_sent++;
			else
				fc.query_sent++;
			seq++;
		}
		if (!sending && answered == seq)
			break;
		if (out_off < out_len)
			p.events |= POLLOUT;
		if (poll(&p, 1, 5000) <= 0) {
			fprintf(stderr, "wireclient: no answer for 5 s (%lu of %lu answered)\n",
				answered, seq);
			break;
		}
		if (p.revents & POLLOUT) {
			ssize_t n = send(fd, out + out_off, out_len - out_off, MSG_NOSIGNAL);

			if (n > 0)
				out_off += (size_t)n;
			if (out_off == out_len)
				out_off = out_len = 0;
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = recv(fd, in + in_len, sizeof(in) - in_len, 0);
			size_t off = 0;

			if (n <= 0) {
				fprintf(stderr, "wireclient: connection closed (%lu of %lu answered)\n",
					answered, seq);
				break;
			}
			in_len += (size_t)n;
			while (in_len - off >= 4) {
				uint32_t len = (uint32_t)in[off] << 24 | (uint32_t)in[off + 1] << 16 |
					       (uint32_t)in[off + 2] << 8 | in[off + 3];
				Advisor__Response *r;

				if (in_len - off - 4 < len)
					break;
				r = advisor__response__unpack(NULL, len, in + off + 4);
				if (r) {
					fair_answer(&fc, r);
					advisor__response__free_unpacked(r, NULL);
				} else {
					fc.errors++;
				}
				answered++;
				off += 4 + len;
			}
			memmove(in, in + off, in_len - off);
			in_len -= off;
		}
	}
	took = (mono_ms() - t0) / 1000;
	close(fd);
	if (fc.n_ids) {
		qsort(fc.ids, fc.n_ids, sizeof(*fc.ids), cmp_str);
		distinct = 1;
		for (size_t i = 1; i < fc.n_ids; i++)
			distinct += strcmp(fc.ids[i], fc.ids[i - 1]) != 0;
	}
	printf("seconds=%.1f\nrequests=%lu\nanswered=%lu\nrate=%.0f\nplugin_sent=%lu\n"
	       "plugin_ok=%lu\nplugin_records=%zu\nquery_sent=%lu\nquery_ok=%lu\n"
	       "query_limited=%lu\nretry_ms_max=%u\nerrors=%lu\n", took, seq, answered,
	       took > 0 ? (double)answered / took : 0, fc.plugin_sent, fc.plugin_ok, distinct,
	       fc.query_sent, fc.query_ok, fc.limited, fc.retry_max, fc.errors);
	for (size_t i = 0; i < fc.n_ids; i++)
		free(fc.ids[i]);
	free(fc.ids);
	return answered == seq && fc.errors == 0 ? 0 : 1;
}

/* User B of test_fair.sh: checks at a steady pace, within its budget. */
static int run_paced(int n, int interval_ms)
{
	double *ms = calloc((size_t)n > 0 ? (size_t)n : 1, sizeof(double));
	double t0 = mono_ms();
	int errors = 0;

	if (!ms)
		return 2;
	for (int i = 0; i < n; i++) {
		double at = t0 + (double)i * interval_ms, start;
		int fd, ok = 0;

		while ((start = mono_ms()) < at) {
			struct timespec ts = { 0, (long)((at - start) * 1e6) };

			nanosleep(&ts, NULL);
		}
		if (wire_connect(sock, 5000, &fd) == WIRE_OK) {
			ok = check_on(fd, 8 * (1 + i % 4), NULL, 0);
			close(fd);
		}
		ms[i] = mono_ms() - start;
		errors += !ok;
	}
	qsort(ms, (size_t)n, sizeof(double), cmp_double);
	printf("checks=%d\nerrors=%d\np50_ms=%.3f\np99_ms=%.3f\nmax_ms=%.3f\n", n, errors,
	       n ? ms[n / 2] : 0, n ? ms[(size_t)((double)n * 0.99)] : 0, n ? ms[n - 1] : 0);
	free(ms);
	return errors ? 1 : 0;
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
	if (!strcmp(mode, "auth") && argc > 3) return run_auth(argv[3]);
	if (!strcmp(mode, "stream")) return run_stream(n);
	if (!strcmp(mode, "sig")) return run_sig();
	if (!strcmp(mode, "load") && argc > 4) return run_load(n, atoi(argv[4]));
	if (!strcmp(mode, "plugin") && argc > 4) return run_plugin(n, atoi(argv[4]));
	if (!strcmp(mode, "hold") && argc > 5) return run_hold(n, atoi(argv[4]), argv[5]);
	if (!strcmp(mode, "slowread") && argc > 4) return run_slowread(n, atoi(argv[4]));
	if (!strcmp(mode, "latency") && argc > 4) return run_latency(n, atoi(argv[4]));
	if (!strcmp(mode, "flood") && argc > 4) return run_flood(n, atoi(argv[4]));
	if (!strcmp(mode, "decide") && argc > 3) return run_decide(argc, argv);
	if (!strcmp(mode, "fair")) return run_fair(n, false);
	if (!strcmp(mode, "flood")) return run_fair(n, true);
	if (!strcmp(mode, "paced") && argc > 4) return run_paced(n, atoi(argv[4]));
	fprintf(stderr, "wireclient: unknown mode %s\n", mode);
	return 2;
}
