/*
 * mariadbtest.c - daemon/dlog/dlog_mariadb.c against a real MariaDB server, for
 * test_mariadb.sh (issue 13); unit tests cannot start a server, this
 * program is given one:
 *
 *   mariadbtest SOCKET USER PASSWORD DATABASE DEADPORT
 *
 * DATABASE must be empty and only this program's.  It checks: refusals
 * (wrong password, unknown database, nobody listening on DEADPORT) are told
 * apart; the schema is made at version 1 and found there again; records of
 * every field round-trip exactly, NULLs included; writing a batch again (a
 * replay) adds nothing; a repeat op counts once however often it is written;
 * history filters and orders as the SQLite log does; the scan is oldest
 * first; pruning deletes the oldest rows only; a schema newer than the
 * daemon's is refused.  Prints "ok - ..." per check; exits 1 at the first
 * failure.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mysql.h>

#include "advconf.h"
#include "dlog/dlog_mariadb.h"
#include "dlog/dlog_rec.h"
#include "util.h"

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL line %d: %s: ", __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		exit(1); \
	} \
} while (0)

static struct advconf conf;
static char err[1024];

static struct dlog_mariadb *connect_ok(bool migrate)
{
	struct dlog_mariadb *m;
	int rc = dlog_mariadb_connect(&conf, migrate, &m, err, sizeof(err));

	CHECK(rc == DLOG_MARIADB_OK, "connect: %s (%s)", err, dlog_mariadb_strerror(rc));
	return m;
}

/* A record whose every field says which one it is; odd ones have the optional fields NULL. */
static void make_rec(struct dlog_rec *r, int i, int64_t t, bool query)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "d-test-%d", i);
	snprintf(r->host, sizeof(r->host), "login%d", i % 2 + 1);
	r->time = t;
	r->uid = 1000 + (uint32_t)(i % 5);
	snprintf(r->user, sizeof(r->user), "user%d", i % 5);
	r->job_id = i % 2 ? 0 : 5000 + (uint32_t)i;
	r->context = 1 + i % 4;
	if (i % 2 == 0)
		snprintf(r->parent, sizeof(r->parent), "d-parent-%d", i);
	snprintf(r->gpu, sizeof(r->gpu), "h100-sxm");
	r->gpus = 8 * (i % 64 + 1);
	r->nodes = i % 64 + 1;
	snprintf(r->partition, sizeof(r->partition), "p%d", i % 2);
	/* Bytes beyond ASCII come back as they went in. */
	snprintf(r->model, sizeof(r->model), "llama3-70b-\xc3\xa9t\xc3\xa9-%d", i);
	snprintf(r->layout, sizeof(r->layout), "tp8.pp%d.cp1.ep1.dp1", i % 4 + 1);
	snprintf(r->workload, sizeof(r->workload), "task=train zero=%d seq=8192", i % 4);
	r->verdict = i % 3;
	if (i % 2 == 0)
		snprintf(r->codes, sizeof(r->codes), "MEM_OVER_CAPACITY CKPT_TOO_LONG");
	r->mem_gib = i % 2 ? -1 : 12.5 + i;
	r->ckpt_interval_s = i % 2 ? -1 : 3600.25;
	r->mode = i % 2 ? -1 : 2;
	if (i % 2 == 0)
		snprintf(r->severities, sizeof(r->severities), "reject warn");
	if (i % 4 == 0)
		snprintf(r->unenforced, sizeof(r->unenforced), "MEM_OVER_CAPACITY");
	r->repeat = 1;
	r->query = query;
	/* Issue 30: an exemption on every fifth record. */
	if (i % 5 == 0)
		snprintf(r->exempt_by, sizeof(r->exempt_by), "account phys-%d", i);
	/* Issue 21: what the user saw; a third of the records are from an older daemon (none). */
	r->detail = i % 3 != 0;
	if (r->detail && i % 6 != 1) {
		snprintf(r->script, sizeof(r->script), "jobs/train-%d.sbatch", i % 7);
		snprintf(r->findings, sizeof(r->findings), "reject\tMEM_OVER_CAPACITY\t%d GiB \xc3\xa9\t"
			 "--llm-zero=3\t\nwarn\tCKPT_TOO_LONG\tevery 5h\t\t--save-interval 100\n+2\n", i);
		snprintf(r->sources, sizeof(r->sources), "tp\ttrain.sbatch:%d --tensor-model-parallel-size\n",
			 i % 40);
	}
}

static void same_rec(const struct dlog_rec *a, const struct dlog_rec *b)
{
#define S(f) CHECK(strcmp(a->f, b->f) == 0, "%s: %s: '%s' != '%s'", a->id, #f, a->f, b->f)
#define N(f) CHECK(a->f == b->f, "%s: %s differs", a->id, #f)
	S(id); S(host); N(time); N(uid); S(user); N(job_id); N(context); S(parent); S(gpu);
	N(gpus); N(nodes); S(partition); S(model); S(layout); S(workload); N(verdict);
	S(codes); N(mem_gib); N(ckpt_interval_s); N(mode); S(severities); S(unenforced);
	N(repeat); N(query);
	S(script); S(findings); S(sources); N(detail); S(exempt_by);
#undef S
#undef N
}

struct scan_ctx {
	size_t n;
	int64_t last_time;
	bool ordered;
	uint64_t weight;
};

static void scan_fn(const struct dlog_rec *r, void *ctx)
{
	struct scan_ctx *s = ctx;

	if (r->time < s->last_time)
		s->ordered = false;
	s->last_time = r->time;
	s->weight += r->repeat;
	s->n++;
}

static long long count_rows(struct dlog_mariadb *m, bool query)
{
	struct dlog_filter f = { .verdict = -1, .limit = 1000000, .include_queries = query };
	struct dlog_rec *recs;
	size_t n, q = 0;

	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "query: %s", err);
	for (size_t i = 0; i < n; i++)
		q += recs[i].query;
	free(recs);
	return query ? (long long)q : (long long)n;
}

int main(int argc, char **argv)
{
	enum { N_DEC = 2500, N_Q = 300 };
	struct dlog_rec *batch = calloc(N_DEC + N_Q, sizeof(*batch)), *recs;
	struct dlog_filter f;
	struct dlog_mariadb *m, *bad;
	struct dlog_mariadb_repeat rep;
	struct scan_ctx sc;
	int64_t now = (int64_t)time(NULL), t0 = now - 110 * 86400;
	size_t n;
	long deleted;
	uint64_t bytes, drows, qrows;
	int rc;

	if (argc != 6) {
		fprintf(stderr, "usage: mariadbtest SOCKET USER PASSWORD DATABASE DEADPORT\n");
		return 64;
	}
	CHECK(batch != NULL, "out of memory");
	CHECK(dlog_mariadb_init() == 0, "mysql_library_init");
	advconf_defaults(&conf);
	conf.storage = ADVCONF_MARIADB;
	adv_strlcpy(conf.socket, argv[1], sizeof(conf.socket));
	adv_strlcpy(conf.user, argv[2], sizeof(conf.user));
	adv_strlcpy(conf.password, argv[3], sizeof(conf.password));
	adv_strlcpy(conf.database, argv[4], sizeof(conf.database));

	/* --- refusals are told apart: configuration errors from a server that is away */
	{
		struct advconf good = conf;

		adv_strlcpy(conf.password, "wrong", sizeof(conf.password));
		rc = dlog_mariadb_connect(&conf, true, &bad, err, sizeof(err));
		CHECK(rc == DLOG_MARIADB_ERR_ACCESS && !bad, "wrong password: %d %s", rc, err);
		conf = good;
		adv_strlcpy(conf.database, "advisor_no_such_db", sizeof(conf.database));
		rc = dlog_mariadb_connect(&conf, true, &bad, err, sizeof(err));
		CHECK(rc == DLOG_MARIADB_ERR_ACCESS, "unknown database: %d %s", rc, err);
		conf = good;
		conf.socket[0] = '\0';
		adv_strlcpy(conf.host, "127.0.0.1", sizeof(conf.host));
		conf.port = atoi(argv[5]);
		rc = dlog_mariadb_connect(&conf, true, &bad, err, sizeof(err));
		CHECK(rc == DLOG_MARIADB_ERR_DOWN, "nobody listening: %d %s", rc, err);
		CHECK(strstr(err, "127.0.0.1") != NULL, "the message names the server: %s", err);
		conf = good;
		printf("ok - wrong password and unknown database are refusals, a dead port "
		       "is 'down'\n");
	}

	/* --- schema */
	m = connect_ok(true);
	CHECK(dlog_mariadb_schema(m) == DLOG_MARIADB_SCHEMA, "schema %d", dlog_mariadb_schema(m));
	dlog_mariadb_close(m);
	m = connect_ok(true);
	CHECK(dlog_mariadb_schema(m) == DLOG_MARIADB_SCHEMA, "schema again %d",
	      dlog_mariadb_schema(m));
	printf("ok - schema made at version %d, found there on the next start\n",
	       DLOG_MARIADB_SCHEMA);

	/* --- a batch round-trips; its replay adds nothing */
	for (int i = 0; i < N_DEC; i++)
		make_rec(&batch[i], i, t0 + i * 3600, false);
	for (int i = 0; i < N_Q; i++)
		make_rec(&batch[N_DEC + i], 100000 + i, now - 3600 + i, true);
	/* A query between decisions: the writer keeps each table's order. */
	{
		struct dlog_rec tmp = batch[N_DEC];

		memmove(&batch[11], &batch[10], (N_DEC - 10) * sizeof(*batch));
		batch[10] = tmp;
	}
	rc = dlog_mariadb_write(m, batch, N_DEC + 1, NULL, 0, err, sizeof(err));
	CHECK(rc == 0, "write: %s", err);
	rc = dlog_mariadb_write(m, batch + N_DEC + 1, N_Q - 1, NULL, 0, err, sizeof(err));
	CHECK(rc == 0, "write queries: %s", err);
	CHECK(count_rows(m, false) == N_DEC, "%lld decisions", count_rows(m, false));
	CHECK(count_rows(m, true) == N_Q, "%lld queries", count_rows(m, true));
	rc = dlog_mariadb_write(m, batch, N_DEC + N_Q, NULL, 0, err, sizeof(err));
	CHECK(rc == 0, "replay: %s", err);
	CHECK(count_rows(m, false) == N_DEC, "after a replay: %lld decisions",
	      count_rows(m, false));
	CHECK(count_rows(m, true) == N_Q, "after a replay: %lld queries", count_rows(m, true));
	/* The same id from another host is another decision. */
	{
		struct dlog_rec other = batch[0];

		adv_strlcpy(other.host, "login9", sizeof(other.host));
		CHECK(dlog_mariadb_write(m, &other, 1, NULL, 0, err, sizeof(err)) == 0, "%s", err);
		CHECK(count_rows(m, false) == N_DEC + 1, "same id, other host: %lld",
		      count_rows(m, false));
		CHECK(dlog_mariadb_prune(m, "decisions", t0 + 1, 10, &deleted, err,
					 sizeof(err)) == 0 && deleted == 2, "%ld %s", deleted, err);
		CHECK(dlog_mariadb_write(m, batch, 1, NULL, 0, err, sizeof(err)) == 0, "%s", err);
	}
	printf("ok - %d decisions and %d queries written in bulk; writing them again adds none\n",
	       N_DEC, N_Q);

	/* --- every field, newest first */
	memset(&f, 0, sizeof(f));
	f.verdict = -1;
	f.limit = 1000000;
	f.detail = true;
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == N_DEC, "%zu", n);
	for (size_t i = 0, k = N_DEC; i < n; i++) {
		struct dlog_rec want;

		/* batch[] holds the query at 10: the decisions newest first are these. */
		k--;
		want = batch[k >= 10 ? k + 1 : k];
		same_rec(&recs[i], &want);
	}
	free(recs);
	printf("ok - every field round-trips, NULLs and UTF-8 included, newest first\n");

	/* --- filters */
	memset(&f, 0, sizeof(f));
	f.verdict = 2;
	f.user = "user1";
	f.limit = 5;
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 5, "user1 rejects: %zu", n);
	for (size_t i = 0; i < n; i++)
		CHECK(recs[i].verdict == 2 && !strcmp(recs[i].user, "user1") &&
		      (i == 0 || recs[i].time < recs[i - 1].time), "row %zu", i);
	free(recs);
	memset(&f, 0, sizeof(f));
	f.verdict = -1;
	f.job_id = 5000 + 42;
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 1 && !strcmp(recs[0].id, "d-test-42"), "job: %zu", n);
	free(recs);
	memset(&f, 0, sizeof(f));
	f.verdict = -1;
	f.since = now - 7200;
	f.limit = 1000;
	f.include_queries = true;
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == N_Q, "since 2 h ago with queries: %zu", n);
	for (size_t i = 0; i < n; i++)
		CHECK(recs[i].query && (i == 0 || recs[i].time <= recs[i - 1].time), "row %zu", i);
	free(recs);
	printf("ok - history filters: user, verdict, job, since, limit, include_queries\n");

	/* --- issue 21: one decision by id, a submission's node checks, the script, until */
	memset(&f, 0, sizeof(f));
	f.verdict = -1;
	f.id = "d-test-44";
	f.detail = true;
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 1 && recs[0].detail && strstr(recs[0].findings, "44 GiB") &&
	      !strcmp(recs[0].script, "jobs/train-2.sbatch"), "by id: %zu", n);
	free(recs);
	f.id = "d-test-47";
	f.detail = false;
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 1 && !recs[0].detail && !recs[0].findings[0] && !strcmp(recs[0].script,
	      "jobs/train-5.sbatch"), "brief: the script without the findings");
	free(recs);
	memset(&f, 0, sizeof(f));
	f.verdict = -1;
	f.parent = "d-parent-42";
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 1 && !strcmp(recs[0].id, "d-test-42"), "by parent: %zu", n);
	free(recs);
	memset(&f, 0, sizeof(f));
	f.verdict = -1;
	f.limit = 100000;
	f.script = "train-2.sbatch";
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	for (size_t i = 0; i < n; i++)
		CHECK(!strcmp(recs[i].script, "jobs/train-2.sbatch"), "script %s", recs[i].script);
	CHECK(n > 100, "by the script's file name: %zu", n);
	free(recs);
	f.script = "jobs/train-2.sbatch";
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n > 100, "by the script as given: %zu", n);
	free(recs);
	f.script = "rain-2.sbatch";
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 0, "part of a name: %zu", n);
	free(recs);
	memset(&f, 0, sizeof(f));
	f.verdict = -1;
	f.limit = 100000;
	f.until = t0 + 10 * 3600;
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 10, "until: %zu", n);
	free(recs);
	printf("ok - issue 21: by id with findings and sources or without, by parent, by script "
	       "(as given or its file name), until\n");

	/* --- repeat counts: an op applies once */
	memset(&rep, 0, sizeof(rep));
	adv_strlcpy(rep.id, "d-test-2499", sizeof(rep.id));
	adv_strlcpy(rep.host, "login2", sizeof(rep.host));
	adv_strlcpy(rep.op, "login1/test.1.0", sizeof(rep.op));
	rep.n = 41;
	rep.time = now;
	CHECK(dlog_mariadb_write(m, NULL, 0, &rep, 1, err, sizeof(err)) == 0, "%s", err);
	CHECK(dlog_mariadb_write(m, NULL, 0, &rep, 1, err, sizeof(err)) == 0, "%s", err);
	adv_strlcpy(rep.op, "login1/test.2.0", sizeof(rep.op));
	rep.n = 8;
	CHECK(dlog_mariadb_write(m, NULL, 0, &rep, 1, err, sizeof(err)) == 0, "%s", err);
	memset(&f, 0, sizeof(f));
	f.verdict = -1;
	f.limit = 1;
	CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 1 && !strcmp(recs[0].id, "d-test-2499") && recs[0].repeat == 50,
	      "repeat %u of %s", n ? recs[0].repeat : 0, n ? recs[0].id : "-");
	free(recs);
	printf("ok - repeat counts: 1 + 41 + 8 = 50, the op written twice counted once\n");

	/* --- scan */
	memset(&f, 0, sizeof(f));
	f.verdict = -1;
	memset(&sc, 0, sizeof(sc));
	sc.ordered = true;
	CHECK(dlog_mariadb_scan(m, &f, scan_fn, &sc, err, sizeof(err)) == 0, "%s", err);
	CHECK(sc.n == N_DEC && sc.ordered && sc.weight == N_DEC + 49, "scan: %zu rows, weight %"
	      PRIu64 ", %s", sc.n, sc.weight, sc.ordered ? "ordered" : "not ordered");
	printf("ok - scan: %zu decisions oldest first, weighted by repeat\n", sc.n);

	/* --- retention and size */
	CHECK(dlog_mariadb_prune(m, "decisions", now - 90 * 86400, 100, &deleted, err,
				 sizeof(err)) == 0, "%s", err);
	CHECK(deleted == 100, "prune chunk: %ld", deleted);
	CHECK(dlog_mariadb_prune(m, "decisions", now - 90 * 86400, 100000, &deleted, err,
				 sizeof(err)) == 0, "%s", err);
	CHECK(deleted == 480 - 100, "prune rest: %ld", deleted);
	memset(&f, 0, sizeof(f));
	f.verdict = -1;
	memset(&sc, 0, sizeof(sc));
	sc.ordered = true;
	CHECK(dlog_mariadb_scan(m, &f, scan_fn, &sc, err, sizeof(err)) == 0, "%s", err);
	CHECK(sc.n == N_DEC - 480, "after pruning: %zu", sc.n);
	CHECK(dlog_mariadb_prune(m, "nosuch", now, 1, &deleted, err, sizeof(err)) ==
	      DLOG_MARIADB_ERR_QUERY, "unknown table pruned");
	CHECK(dlog_mariadb_analyze(m, err, sizeof(err)) == 0, "%s", err);
	CHECK(dlog_mariadb_size(m, &bytes, &drows, &qrows, err, sizeof(err)) == 0, "%s", err);
	CHECK(bytes > 0 && drows > 0, "size %" PRIu64 " rows %" PRIu64, bytes, drows);
	printf("ok - pruned the 480 decisions older than 90 days, in chunks; tables hold %"
	       PRIu64 " bytes\n", bytes);

	/* --- a newer schema is refused */
	{
		MYSQL *my = mysql_init(NULL);

		CHECK(mysql_real_connect(my, NULL, conf.user, conf.password, conf.database, 0,
					 conf.socket, 0) != NULL, "%s", mysql_error(my));
		CHECK(mysql_query(my, "INSERT INTO schema_version VALUES (99, 0)") == 0, "%s",
		      mysql_error(my));
		rc = dlog_mariadb_connect(&conf, true, &bad, err, sizeof(err));
		CHECK(rc == DLOG_MARIADB_ERR_SCHEMA && strstr(err, "99"), "newer schema: %d %s", rc,
		      err);
		CHECK(mysql_query(my, "DELETE FROM schema_version WHERE version = 99") == 0, "%s",
		      mysql_error(my));
		printf("ok - a schema newer than this daemon's is refused: %s\n", err);
		/* Schema 1, as an older advisord left it: migrated, its rows "not recorded". */
		CHECK(mysql_query(my, "ALTER TABLE decisions DROP COLUMN script, DROP COLUMN findings,"
				  " DROP COLUMN sources, DROP COLUMN exempt, DROP KEY parent") == 0,
		      "%s", mysql_error(my));
		CHECK(mysql_query(my, "ALTER TABLE queries DROP COLUMN script, DROP COLUMN findings,"
				  " DROP COLUMN sources, DROP COLUMN exempt, DROP KEY parent") == 0,
		      "%s", mysql_error(my));
		CHECK(mysql_query(my, "DELETE FROM schema_version WHERE version >= 2") == 0, "%s",
		      mysql_error(my));
		CHECK(mysql_query(my, "COMMIT") == 0, "%s", mysql_error(my));
		mysql_close(my);
		dlog_mariadb_close(m);
		m = connect_ok(true);
		CHECK(dlog_mariadb_schema(m) == 3, "migrated to %d", dlog_mariadb_schema(m));
		memset(&f, 0, sizeof(f));
		f.verdict = -1;
		f.limit = 1000000;
		f.detail = true;
		CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
		CHECK(n == N_DEC - 480, "after the migration: %zu", n);
		for (size_t i = 0; i < n; i++)
			CHECK(!recs[i].detail && !recs[i].script[0] && !recs[i].findings[0] &&
			      !recs[i].exempt_by[0], "%s recorded after the migration", recs[i].id);
		free(recs);
		make_rec(&batch[0], 44, now, false);
		adv_strlcpy(batch[0].id, "d-after", sizeof(batch[0].id));
		CHECK(dlog_mariadb_write(m, batch, 1, NULL, 0, err, sizeof(err)) == 0, "%s", err);
		f.id = "d-after";
		CHECK(dlog_mariadb_query(m, &f, &recs, &n, err, sizeof(err)) == 0, "%s", err);
		CHECK(n == 1, "d-after: %zu", n);
		same_rec(&recs[0], &batch[0]);
		free(recs);
		printf("ok - schema 1 migrated to 3: the columns and index added, older rows not "
		       "recorded (nor exempt), new ones round-trip\n");
	}
	dlog_mariadb_close(m);
	dlog_mariadb_end();
	free(batch);
	return 0;
}
