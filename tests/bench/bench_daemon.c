/*
 * bench_daemon.c - drives a running advisord the way sbatch does: every
 * check on a fresh connection (connect, one frame out, one frame back,
 * close), from N concurrent clients, and prints throughput and latency.
 *
 * It starts nothing itself: point it at a daemon with --socket.  Figures
 * only; it never fails on wall time (issue 4 target on a 2-core machine:
 * >= 20,000 checks/s and p99 < 2 ms with 64 clients).
 *
 * Two kinds of run.  "max": every client sends its next check as soon as
 * the last one is answered; that measures throughput, but by Little's law
 * its latency is just clients / throughput (64 clients at 32,000/s wait
 * 2 ms on average whatever the daemon does).  "paced": the clients together
 * offer a fixed rate (--rate, default 20,000/s), each on its own schedule,
 * and latency is measured from the scheduled send time, so a stalled daemon
 * cannot hide behind clients that stop sending (coordinated omission).
 */
#include "config.h"

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "advisor.pb-c.h"
#include "engine/options.h"
#include "util.h"
#include "wire/auth.h"
#include "wire/convert.h"
#include "wire/endpoint.h"
#include "wire/wire.h"

#define JOB_SCRIPT_MAX (256 * 1024)

struct client {
	pthread_t thread;
	const char *socket;
	const uint8_t *frame;
	size_t frame_len;
	const uint8_t *hello;     /* a status request sent first when frame is big, or NULL */
	size_t hello_len;
	double until;
	double start, period;     /* paced: first send time and interval; period 0 = max */
	double *lat_us;
	size_t n, cap;
	size_t errors;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool one_check(struct client *c)
{
	Advisor__Response *r;
	uint8_t *buf;
	size_t len;
	int fd;
	bool ok;

	if (wire_connect(c->socket, 5000, &fd) != WIRE_OK)
		return false;
	if (!endpoint_is_path(c->socket) && strchr(c->socket, ':')) {
		/* TCP: wire_connect() did the hello and authenticated the
		 * connection (issue 20), as the plugin's call does. */
		Advisor__Request *rq = advisor__request__unpack(NULL, c->frame_len, c->frame);

		r = NULL;
		ok = rq && wire_exchange(fd, 5000, rq, &r, NULL, 0) == WIRE_OK &&
		     r->body_case == ADVISOR__RESPONSE__BODY_CHECK;
		if (r)
			advisor__response__free_unpacked(r, NULL);
		if (rq)
			advisor__request__free_unpacked(rq, NULL);
		close(fd);
		return ok;
	}
	/* A first frame over WIRE_FIRST_FRAME_MAX is refused (issue 20):
	 * the plugin sends a status first (wire.c hello_if_big), so do we. */
	if (c->hello) {
		if (wire_write_frame(fd, c->hello, c->hello_len, 5000) != WIRE_OK ||
		    wire_read_frame(fd, &buf, &len, 5000) != WIRE_OK) {
			close(fd);
			return false;
		}
		free(buf);
	}
	if (wire_write_frame(fd, c->frame, c->frame_len, 5000) != WIRE_OK ||
	    wire_read_frame(fd, &buf, &len, 5000) != WIRE_OK) {
		close(fd);
		return false;
	}
	close(fd);
	r = advisor__response__unpack(NULL, len, buf);
	free(buf);
	ok = r && !r->error && r->body_case == ADVISOR__RESPONSE__BODY_CHECK;
	if (r)
		advisor__response__free_unpacked(r, NULL);
	return ok;
}

static void *client_main(void *arg)
{
	struct client *c = arg;

	double next = c->start;

	while (now_s() < c->until) {
		double t0 = now_s();
		bool ok;
		double us;

		if (c->period > 0) {
			struct timespec ts;

			if (next > t0) {
				ts.tv_sec = (time_t)next;
				ts.tv_nsec = (long)((next - (double)ts.tv_sec) * 1e9);
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			}
			t0 = next;
			next += c->period;
			if (t0 >= c->until)
				break;
		}
		ok = one_check(c);
		us = (now_s() - t0) * 1e6;

		if (!ok) {
			c->errors++;
			continue;
		}
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 4096;
			double *p = realloc(c->lat_us, cap * sizeof(*p));

			if (!p)
				break;
			c->lat_us = p;
			c->cap = cap;
		}
		c->lat_us[c->n++] = us;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct result {
	double offered;           /* 0 = max */
	int clients;
	double rate, p50_ms, p99_ms;
	size_t n, errors;
};

static int run(const char *socket, int nclients, double seconds, double rate,
	       const uint8_t *frame, size_t len, struct result *out)
{
	struct client *cs = calloc((size_t)nclients, sizeof(*cs));
	double t0, elapsed, *all;
	size_t total = 0, k = 0;
	static uint8_t hello[64];
	static size_t hello_len;

	if (!cs)
		return -1;
	if (!hello_len) {
		Advisor__Request h = ADVISOR__REQUEST__INIT;
		Advisor__StatusRequest st = ADVISOR__STATUS_REQUEST__INIT;

		h.has_version = h.has_id = 1;
		h.version = WIRE_VERSION;
		h.id = 1;
		h.body_case = ADVISOR__REQUEST__BODY_STATUS;
		h.status = &st;
		hello_len = advisor__request__pack(&h, hello);
	}
	t0 = now_s();
	for (int i = 0; i < nclients; i++) {
		double period = rate > 0 ? nclients / rate : 0;

		cs[i] = (struct client){ .socket = socket, .frame = frame, .frame_len = len,
					 .hello = len > WIRE_FIRST_FRAME_MAX ? hello : NULL,
					 .hello_len = hello_len,
					 .until = t0 + seconds, .period = period,
					 .start = t0 + 0.01 + period * i / nclients };
		if (pthread_create(&cs[i].thread, NULL, client_main, &cs[i]) != 0) {
			fprintf(stderr, "cannot start client %d\n", i);
			nclients = i;
			break;
		}
	}
	out->errors = 0;
	for (int i = 0; i < nclients; i++) {
		pthread_join(cs[i].thread, NULL);
		total += cs[i].n;
		out->errors += cs[i].errors;
	}
	elapsed = now_s() - t0;
	all = malloc((total ? total : 1) * sizeof(*all));
	for (int i = 0; i < nclients; i++) {
		if (all)
			memcpy(all + k, cs[i].lat_us, cs[i].n * sizeof(*all));
		k += cs[i].n;
		free(cs[i].lat_us);
	}
	free(cs);
	if (!all)
		return -1;
	qsort(all, total, sizeof(*all), cmp_double);
	out->offered = rate;
	out->clients = nclients;
	out->n = total;
	out->rate = (double)total / elapsed;
	out->p50_ms = total ? all[(size_t)(0.50 * (double)(total - 1))] / 1000 : 0;
	out->p99_ms = total ? all[(size_t)(0.99 * (double)(total - 1))] / 1000 : 0;
	free(all);
	return 0;
}

static void usage(void)
{
	printf("Usage: advisor-bench-daemon --socket PATH [--clients 1,16,64] [--seconds S]\n"
	       "          [--rate R] [--paced-clients N] [--script FILE] [--premint N]\n"
	       "Checks on a running advisord, one connection per check: as fast as possible\n"
	       "with each client count, then N clients (default 64) offering R checks/s\n"
	       "together (default 20000; 0 skips the paced run).  --script FILE sends FILE\n"
	       "as the job's batch script (4 x 8 H100) instead of --llm-* options.\n"
	       "--socket HOST:PORT: TCP with MUNGE, each connection with its hello and\n"
	       "credentials both ways (issue 20).  --premint N is accepted and ignored:\n"
	       "credentials are bound to each connection's nonces, so none can be minted\n"
	       "before the clock starts.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "clients", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'r' },
		{ "paced-clients", required_argument, NULL, 'p' },
		{ "script", required_argument, NULL, 'j' },
		{ "premint", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	struct convert_request_pb buf;
	struct adv_request ar;
	struct result res[16];
	const char *socket = NULL, *script = NULL;
	Advisor__JobText jt = ADVISOR__JOB_TEXT__INIT;
	char *script_text = NULL;
	char clients[128] = "1,16,64", err[256], *save = NULL;
	double seconds = 3, rate = 20000;
	long paced_clients = 64, premint_n = 0;
	uint8_t *frame;
	size_t len;
	int opt, nres = 0;

	while ((opt = getopt_long(argc, argv, "s:c:t:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': socket = optarg; break;
		case 'c': adv_strlcpy(clients, optarg, sizeof(clients)); break;
		case 't':
			if (adv_parse_double(optarg, &seconds) != 0 || seconds <= 0) {
				fprintf(stderr, "--seconds: '%s' is not a positive number\n", optarg);
				return 64;
			}
			break;
		case 'r':
			if (adv_parse_double(optarg, &rate) != 0 || rate < 0) {
				fprintf(stderr, "--rate: '%s' is not a rate (checks/s >= 0)\n", optarg);
				return 64;
			}
			break;
		case 'p':
			if (adv_parse_long(optarg, &paced_clients) != 0 || paced_clients < 1 ||
			    paced_clients > 4096) {
				fprintf(stderr, "--paced-clients: '%s' is not a client count (1..4096)\n",
					optarg);
				return 64;
			}
			break;
		case 'j': script = optarg; break;
		case 'm':
			/* Ignored since issue 20 (see usage); still parsed so old runs work. */
			if (adv_parse_long(optarg, &premint_n) != 0 || premint_n < 0 ||
			    premint_n > 1000000) {
				fprintf(stderr, "--premint: '%s' is not a count (0..1000000)\n", optarg);
				return 64;
			}
			break;
		case 'h': usage(); return 0;
		default: usage(); return 64;
		}
	}
	if (!socket) {
		usage();
		return 64;
	}
	/* A typical submission: Llama 3 70B on 64 H100, TP8 PP2, ZeRO-1, hourly checkpoints. */
	engine_request_init(&ar);
	adv_strlcpy(ar.res.gpu, "h100", sizeof(ar.res.gpu));
	ar.res.gpus = 64;
	if (options_apply(&ar.wl, "model", "llama3-70b", err, sizeof(err)) ||
	    options_apply(&ar.wl, "layout", "tp8,pp2,sp", err, sizeof(err)) ||
	    options_apply(&ar.wl, "zero", "1", err, sizeof(err)) ||
	    options_apply(&ar.wl, "recompute", "selective", err, sizeof(err)) ||
	    options_apply(&ar.wl, "ckpt", "1h", err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 70;
	}
	req.has_version = req.has_id = 1;
	req.version = WIRE_VERSION;
	req.id = 1;
	req.body_case = ADVISOR__REQUEST__BODY_CHECK;
	req.check = convert_request_to_pb(&ar, ADV_CTX_SBATCH, 0, NULL, &buf);
	if (script) {
		/* The job's own text instead of --llm-* options, as the plugin
		 * ships it: the daemon reads the workload from it every time. */
		FILE *f = fopen(script, "re");
		size_t n;

		script_text = malloc(JOB_SCRIPT_MAX);
		if (!f || !script_text) {
			fprintf(stderr, "--script %s: cannot read it\n", script);
			return 66;
		}
		n = fread(script_text, 1, JOB_SCRIPT_MAX, f);
		fclose(f);
		engine_request_init(&ar);
		adv_strlcpy(ar.res.gpu, "h100", sizeof(ar.res.gpu));
		ar.res.gpus = 32;
		ar.res.nodes = 4;
		ar.res.gpus_per_node = 8;
		req.check = convert_request_to_pb(&ar, ADV_CTX_SBATCH, 0, NULL, &buf);
		jt.has_tool = 1;
		jt.tool = 0;
		jt.script_name = (char *)"train.sbatch";
		jt.has_script = 1;
		jt.script.data = (uint8_t *)script_text;
		jt.script.len = n;
		jt.cwd = (char *)"/tmp";
		req.check->job = &jt;
	}
	len = advisor__request__get_packed_size(&req);
	frame = malloc(len);
	if (!frame)
		return 70;
	advisor__request__pack(&req, frame);

	for (char *t = strtok_r(clients, ",", &save); t && nres < 16; t = strtok_r(NULL, ",", &save)) {
		long n;

		if (adv_parse_long(t, &n) != 0 || n < 1 || n > 4096) {
			fprintf(stderr, "--clients: '%s' is not a client count (1..4096)\n", t);
			free(frame);
			return 64;
		}
		if (run(socket, (int)n, seconds, 0, frame, len, &res[nres]) == 0)
			nres++;
	}
	if (rate > 0 && nres < 16 &&
	    run(socket, (int)paced_clients, seconds, rate, frame, len, &res[nres]) == 0)
		nres++;
	free(frame);
	free(script_text);
	printf("%-6s %10s %8s %12s %10s %10s %10s %8s\n", "mode", "offered/s", "clients",
	       "checks/s", "p50 ms", "p99 ms", "checks", "errors");
	for (int i = 0; i < nres; i++) {
		char offered[32] = "-";

		if (res[i].offered > 0)
			snprintf(offered, sizeof(offered), "%.0f", res[i].offered);
		printf("%-6s %10s %8d %12.0f %10.3f %10.3f %10zu %8zu\n",
		       res[i].offered > 0 ? "paced" : "max", offered, res[i].clients, res[i].rate,
		       res[i].p50_ms, res[i].p99_ms, res[i].n, res[i].errors);
	}
	printf("{\"bench\":\"daemon\",\"connection_per_request\":true,\"runs\":[");
	for (int i = 0; i < nres; i++)
		printf("%s{\"mode\":\"%s\",\"offered_per_s\":%.0f,\"clients\":%d,\"checks_per_s\":%.0f,\"p50_ms\":%.4f,\"p99_ms\":%.4f,"
		       "\"checks\":%zu,\"errors\":%zu}", i ? "," : "",
		       res[i].offered > 0 ? "paced" : "max", res[i].offered, res[i].clients, res[i].rate,
		       res[i].p50_ms, res[i].p99_ms, res[i].n, res[i].errors);
	printf("]}\n");
	return 0;
}
