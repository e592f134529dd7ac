/*
 * gen_wire_seeds.c - writes the seed corpus of fuzz_wire: encoded
 * advisor.Request messages of every kind (real checks of the shipped
 * catalog's models, plans, checkpoints, catalog/policy/history/stats/
 * reload/status) and out-of-range ones, each in the three input modes of
 * fuzz_wire.c (raw, framed through wire_read_frame, framed to the server)
 * and as root or as an unprivileged caller.
 *
 * usage: gen_wire_seeds DIR
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor.pb-c.h"

static const char *outdir;
static int count;

static void put(const uint8_t *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%03d", outdir, count++);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "gen_wire_seeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static size_t frame(uint8_t *dst, const uint8_t *msg, size_t len)
{
	dst[0] = (uint8_t)(len >> 24);
	dst[1] = (uint8_t)(len >> 16);
	dst[2] = (uint8_t)(len >> 8);
	dst[3] = (uint8_t)len;
	memcpy(dst + 4, msg, len);
	return len + 4;
}

/*
 * One request in two of the five (mode, caller) combinations, rotating so
 * that every request kind reaches every mode somewhere in the corpus.
 */
static void emit(Advisor__Request *req)
{
	static const uint8_t variants[5] = { 0, 4, 1, 5, 2 };   /* byte 0 of fuzz_wire */
	static uint8_t msg[65536], in[3 * 65536];
	static unsigned turn;
	size_t len;

	if (advisor__request__get_packed_size(req) > sizeof(msg))
		abort();
	len = advisor__request__pack(req, msg);
	for (unsigned k = 0; k < 2; k++) {
		uint8_t v = variants[(turn + 2 * k) % 5];
		size_t n = 1;

		in[0] = v;
		if ((v & 3) == 0) {
			memcpy(in + 1, msg, len);
			n += len;
		} else {
			n += frame(in + n, msg, len);
			if ((v & 3) == 2 || req->body_case == ADVISOR__REQUEST__BODY_CHECK)
				n += frame(in + n, msg, len);   /* pipelined */
		}
		put(in, n);
	}
	turn++;
}

static void base(Advisor__Request *req, uint64_t id)
{
	advisor__request__init(req);
	req->has_version = 1;
	req->version = 1;
	req->has_id = 1;
	req->id = id;
}

#define SET(m, f, v) do { (m)->has_##f = 1; (m)->f = (v); } while (0)

struct check_case {
	const char *gpu, *model, *partition;
	int gpus, nodes, gpn;
	int tp, pp, cp, ep, etp, vpp, dp;
	int zero, precision, seq, mbs, gbs, recompute, task, framework;
	double ckpt_s;
	int ckpt_off, ckpt_async;
	double tokens;
};

static const struct check_case checks[] = {
	{ "h100", "llama3-70b", "h100", 64, 8, 8, 8, 4, 1, 1, 1, 1, -1, 1, 0, 8192, 1, 512, 1, 0, 1, 7200, 0, 1, 15e12 },
	{ "h100-sxm", "llama3-405b", "h100", 16384, 2048, 8, 8, 16, 1, 1, 1, 1, -1, 1, 0, 8192, 1, 2048, 1, 0, 1, 1800, 0, 0, 15.6e12 },
	{ "h800", "deepseek-v3", "", 2048, 256, 8, 1, 16, 1, 64, 1, 1, -1, 1, 2, 4096, 1, 15360, 0, 0, 1, 3600, 0, 1, 14.8e12 },
	{ "a100-80gb", "mixtral-8x7b", "", 32, 4, 8, 2, 1, 1, 8, 1, 1, -1, 3, 0, 4096, 2, 256, 2, 1, 3, 0, 1, 0, 0 },
	{ "h200", "qwen2.5-72b", "h200", 8, 1, 8, 8, 1, 1, 1, 1, 1, -1, 0, 0, 32768, 1, 1, 0, 3, 0, 0, 0, 0, 0 },
	{ "mi300x", "llama3-8b", "", 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 8192, 1, 8, 0, 2, 0, 0, 0, 0, 0 },
	{ "l40s", "gpt3-175b", "debug", 8, 1, 8, 8, 1, 1, 1, 1, 1, 1, 0, 1, 2048, 1, 8, 0, 0, 0, 60, 0, 0, 1e9 },
	{ "no-such-gpu", "no-such-model", "nowhere", 3, 2, 5, 7, 3, 2, 1, 1, 5, 9, 2, 2, 100, 3, 7, 1, 1, 2, 1, 0, 0, 0 },
	{ "", "", "", 0, 0, 0, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0 },
	{ "h100", "deepseek-v3", "h100", 2147483647, 2147483647, 2147483647, 2147483647, 2147483647,
	  2147483647, 2147483647, 2147483647, 2147483647, 2147483647, 2147483647, 2147483647,
	  2147483647, 2147483647, 2147483647, 2147483647, 2147483647, 2147483647, 1e308, 0, 1, 1e308 },
	{ "h100", "llama3-70b", "", -8, -1, -8, -8, -4, -1, -1, -1, -1, -2, -3, -1, -8192, -1, -512, -1, -1, -1, -7200, 0, 0, -1 },
	{ "gb200", "gemma2-27b", "", 72, 1, 72, 4, 2, 2, 1, 1, 3, 9, 3, 2, 131072, 4, 4096, 2, 1, 2, 86400, 0, 0, 1e15 },
};

static void check_req(const struct check_case *c, uint64_t id)
{
	Advisor__Request req;
	Advisor__CheckRequest m;
	Advisor__Resources r;
	Advisor__Workload w;
	Advisor__Layout l;
	Advisor__Ckpt ck;

	base(&req, id);
	advisor__check_request__init(&m);
	advisor__resources__init(&r);
	advisor__workload__init(&w);
	advisor__layout__init(&l);
	advisor__ckpt__init(&ck);
	r.gpu = c->gpu[0] ? (char *)(uintptr_t)c->gpu : NULL;
	r.partition = c->partition[0] ? (char *)(uintptr_t)c->partition : NULL;
	if (c->gpus) SET(&r, gpus, c->gpus);
	if (c->nodes) SET(&r, nodes, c->nodes);
	if (c->gpn) SET(&r, gpus_per_node, c->gpn);
	if (c->tp != -1) SET(&l, tp, c->tp);
	if (c->pp != -1) SET(&l, pp, c->pp);
	if (c->cp != -1) SET(&l, cp, c->cp);
	if (c->ep != -1) SET(&l, ep, c->ep);
	if (c->etp != -1) SET(&l, etp, c->etp);
	if (c->vpp != -1) SET(&l, vpp, c->vpp);
	if (c->dp != -1) SET(&l, dp, c->dp);
	w.model = c->model[0] ? (char *)(uintptr_t)c->model : NULL;
	w.layout = c->tp != -1 ? &l : NULL;
	if (c->zero != -1) SET(&w, zero, c->zero);
	if (c->precision != -1) SET(&w, precision, c->precision);
	if (c->seq != -1) SET(&w, seq, c->seq);
	if (c->mbs != -1) SET(&w, mbs, c->mbs);
	if (c->gbs != -1) SET(&w, gbs, c->gbs);
	if (c->recompute != -1) SET(&w, recompute, c->recompute);
	if (c->task != -1) SET(&w, task, c->task);
	if (c->framework != -1) SET(&w, framework, c->framework);
	if (c->ckpt_s || c->ckpt_off) {
		if (c->ckpt_off) SET(&ck, off, 1);
		else SET(&ck, interval_s, c->ckpt_s);
		if (c->ckpt_async) SET(&ck, async, 1);
		w.ckpt = &ck;
	}
	if (c->tokens) SET(&w, tokens, c->tokens);
	m.resources = &r;
	m.workload = &w;
	SET(&m, context, ADVISOR__CONTEXT__CTX_SBATCH);
	SET(&m, job_id, (uint32_t)id);
	m.parent_decision = id % 2 ? (char *)"d-1-2-3" : NULL;
	req.body_case = ADVISOR__REQUEST__BODY_CHECK;
	req.check = &m;
	emit(&req);
	/* The same resources and workload as a plan and a checkpoint question. */
	{
		Advisor__PlanRequest p;
		Advisor__CkptRequest k;

		advisor__plan_request__init(&p);
		p.resources = &r;
		p.workload = &w;
		SET(&p, top, (int)(id % 5));
		SET(&p, cross_node_tp, id % 2);
		req.body_case = ADVISOR__REQUEST__BODY_PLAN;
		req.plan = &p;
		if (id % 3 == 0)
			emit(&req);
		advisor__ckpt_request__init(&k);
		k.resources = &r;
		k.workload = &w;
		if (id % 2) {
			SET(&k, job_mtbf_hours, 12.5);
			SET(&k, write_seconds, 30);
			SET(&k, restart_seconds, 600);
			SET(&k, interval_s, 3600);
		}
		req.body_case = ADVISOR__REQUEST__BODY_CKPT;
		req.ckpt = &k;
		emit(&req);
	}
}

static void small_reqs(void)
{
	Advisor__Request req;
	Advisor__CatalogRequest cat;
	Advisor__PolicyRequest pol;
	Advisor__HistoryRequest hist;
	Advisor__StatsRequest st;
	Advisor__ReloadRequest rl;
	Advisor__StatusRequest sts;
	static const char *const kinds[][2] = {
		{ NULL, NULL }, { "gpus", NULL }, { "models", NULL }, { "gpus", "H100" },
		{ "models", "deepseek-v3" }, { "models", "no-such" }, { "bogus", "x" }, { "", "llama3-8b" },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		base(&req, 100 + i);
		advisor__catalog_request__init(&cat);
		cat.kind = (char *)(uintptr_t)kinds[i][0];
		cat.name = (char *)(uintptr_t)kinds[i][1];
		req.body_case = ADVISOR__REQUEST__BODY_CATALOG;
		req.catalog = &cat;
		emit(&req);
	}
	base(&req, 200);
	advisor__policy_request__init(&pol);
	req.body_case = ADVISOR__REQUEST__BODY_POLICY;
	req.policy = &pol;
	emit(&req);

	base(&req, 300);
	advisor__history_request__init(&hist);
	req.body_case = ADVISOR__REQUEST__BODY_HISTORY;
	req.history = &hist;
	emit(&req);
	hist.user = (char *)"root";
	SET(&hist, job_id, 7);
	SET(&hist, verdict, 2);
	SET(&hist, since, 1700000000);
	SET(&hist, limit, 5);
	emit(&req);
	hist.user = (char *)"nobody";
	SET(&hist, limit, -2147483647 - 1);
	SET(&hist, verdict, -1);
	SET(&hist, since, INT64_MIN);
	emit(&req);

	base(&req, 400);
	advisor__stats_request__init(&st);
	req.body_case = ADVISOR__REQUEST__BODY_STATS;
	req.stats = &st;
	emit(&req);
	base(&req, 500);
	advisor__reload_request__init(&rl);
	req.body_case = ADVISOR__REQUEST__BODY_RELOAD;
	req.reload = &rl;
	emit(&req);
	base(&req, 600);
	advisor__status_request__init(&sts);
	req.body_case = ADVISOR__REQUEST__BODY_STATUS;
	req.status = &sts;
	emit(&req);

	/* Wrong version, no version, no body. */
	req.version = 2;
	emit(&req);
	req.has_version = 0;
	emit(&req);
	base(&req, 700);
	emit(&req);
}

/* Raw byte streams the readers must refuse or survive. */
static void raw_streams(void)
{
	static const struct {
		size_t len;
		uint8_t b[12];
	} streams[] = {
		{ 5, { 1, 0, 0, 0, 0 } },                       /* empty frame then EOF */
		{ 5, { 1, 0xff, 0xff, 0xff, 0xff } },           /* 4 GiB frame */
		{ 5, { 1, 0, 0x10, 0, 1 } },                    /* just over the limit */
		{ 7, { 1, 0, 0, 0, 9, 8, 1 } },                 /* truncated */
		{ 9, { 2, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff } },/* garbage in a frame */
		{ 6, { 2, 0, 0x10, 0, 0, 1 } },                 /* at the limit, truncated */
		{ 3, { 2, 0, 0 } },                             /* half a header */
		{ 5, { 0, 0x08, 0x01, 0x52, 0x00 } },           /* version 1, check {} */
		{ 5, { 0, 0x08, 0x01, 0x52, 0x7f } },           /* length past the end */
	};

	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++)
		put(streams[i].b, streams[i].len);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_wire_seeds DIR\n");
		return 2;
	}
	outdir = argv[1];
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		check_req(&checks[i], i + 1);
	small_reqs();
	raw_streams();
	printf("gen_wire_seeds: %d seeds in %s\n", count, outdir);
	return 0;
}
