/*
 * test_dlog.c - what the decision log keeps of what a user saw (issue 21):
 * the findings and sources as bounded lines (daemon/dlog/dlog_detail.c),
 * and the SQLite store (daemon/dlog/dlog_sqlite.c) round-tripping them with
 * the script's name, its readers' filters (id, parent, script, until), and
 * a log written before the columns existed gaining them on open, its rows
 * reading "not recorded".  The store runs without the writer thread of
 * dlog.c: the test calls its ops table as the writer does.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "dlog/dlog_detail.h"
#include "dlog/dlog_sqlite.h"
#include "util.h"

static uint64_t logged, lost;

static void env_logged(uint64_t n)
{
	logged += n;
}

static void env_failed(const char *why, size_t n)
{
	(void)why;
	lost += n;
}

static void env_recovered(void)
{
}

static const struct dlog_env env = { "node1", env_logged, env_failed, env_recovered };

static char *db_path(void)
{
	static char path[64];
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd;

	adv_snprintf(path, sizeof(path), "%.40s/test_dlog.XXXXXX", dir);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	return path;
}

static void rm_db(const char *path)
{
	char p[96];

	unlink(path);
	adv_snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	adv_snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

/* ---- the lines ------------------------------------------------------------------ */

static void test_detail_lines(void **st)
{
	char buf[256] = "", line[256], *f[5];
	const char *a[] = { "reject", "TP_NOT_DIVIDE_HEADS", "TP=3\tdoes not\ndivide 64", "", NULL };
	const char *p = buf;
	unsigned left = 0, got = 0;
	size_t k;

	(void)st;
	dlog_detail_add(buf, sizeof(buf), &left, a, 5);
	dlog_detail_finish(buf, sizeof(buf), left);
	assert_int_equal(left, 0);
	/* A tab or a line end in a text is a space: it never breaks a field or a line. */
	assert_string_equal(buf, "reject\tTP_NOT_DIVIDE_HEADS\tTP=3 does not divide 64\t\t\n");
	k = dlog_detail_next(&p, line, sizeof(line), f, 5, &got);
	assert_int_equal(k, 5);
	assert_string_equal(f[1], "TP_NOT_DIVIDE_HEADS");
	assert_string_equal(f[2], "TP=3 does not divide 64");
	assert_string_equal(f[3], "");
	assert_int_equal(dlog_detail_next(&p, line, sizeof(line), f, 5, &got), 0);
	assert_int_equal(got, 0);
}

/* Bounded: what does not fit is counted on a "+N" line, never cut in the middle. */
static void test_detail_bound(void **st)
{
	char buf[200] = "", line[200], *f[2];
	const char *p = buf;
	unsigned left = 0, got = 0, n = 0;
	size_t k;

	(void)st;
	for (int i = 0; i < 20; i++) {
		char where[40];
		const char *a[] = { "tp", where };

		adv_snprintf(where, sizeof(where), "train.sbatch:%d --tensor-model", i);
		dlog_detail_add(buf, sizeof(buf), &left, a, 2);
	}
	dlog_detail_finish(buf, sizeof(buf), left);
	assert_true(left > 0);
	assert_true(strlen(buf) < sizeof(buf));
	while ((k = dlog_detail_next(&p, line, sizeof(line), f, 2, &got)) > 0) {
		char want[40];

		assert_int_equal(k, 2);
		adv_snprintf(want, sizeof(want), "train.sbatch:%u --tensor-model", n++);
		assert_string_equal(f[1], want);
	}
	assert_int_equal(got, left);
	assert_int_equal(n + left, 20);
}

/* ---- the SQLite store ------------------------------------------------------------- */

static void make_rec(struct dlog_rec *r, const char *id, int64_t t, bool detail)
{
	unsigned left = 0;
	const char *fd[] = { "reject", "MEM_OVER_CAPACITY", "391 GiB per GPU", "--llm-zero=3",
			     "--zero-stage 3 (train.sbatch line 9)" };
	const char *src[] = { "tp", "train.sbatch:4 --tensor-model-parallel-size" };

	memset(r, 0, sizeof(*r));
	adv_strlcpy(r->id, id, sizeof(r->id));
	r->time = t;
	r->uid = 1000;
	adv_strlcpy(r->user, "alice", sizeof(r->user));
	r->context = 1;
	r->verdict = 2;
	r->mode = 2;
	r->repeat = 1;
	r->mem_gib = r->ckpt_interval_s = -1;
	adv_strlcpy(r->codes, "MEM_OVER_CAPACITY", sizeof(r->codes));
	adv_strlcpy(r->workload, "task=train zero=0 precision=bf16", sizeof(r->workload));
	adv_strlcpy(r->host, "node1", sizeof(r->host));
	r->detail = detail;
	if (detail) {
		adv_strlcpy(r->script, "jobs/train.sbatch", sizeof(r->script));
		dlog_detail_add(r->findings, sizeof(r->findings), &left, fd, 5);
		dlog_detail_add(r->sources, sizeof(r->sources), &left, src, 2);
	}
}

static size_t query(struct dlog_filter *f, struct dlog_rec **out)
{
	char err[256];
	size_t n;

	f->verdict = -1;
	f->limit = 100;
	assert_int_equal(dlog_sqlite_ops.query(f, out, &n, err, sizeof(err)), 0);
	return n;
}

static void test_store_round_trip(void **st)
{
	char *path = db_path(), err[256];
	int64_t now = (int64_t)time(NULL);
	struct dlog_rec recs[4], *out;
	struct dlog_filter f;
	size_t n;

	(void)st;
	assert_int_equal(dlog_sqlite_open(path, &env, err, sizeof(err)), 0);
	make_rec(&recs[0], "d-sub", now - 100, true);
	make_rec(&recs[1], "d-node", now - 50, true);
	adv_strlcpy(recs[1].parent, "d-sub", sizeof(recs[1].parent));
	recs[1].context = 4;
	recs[1].script[0] = recs[1].findings[0] = recs[1].sources[0] = '\0';   /* recorded, empty */
	make_rec(&recs[2], "d-other", now - 10, true);
	adv_strlcpy(recs[2].script, "other.sbatch", sizeof(recs[2].script));
	make_rec(&recs[3], "q-what-if", now, true);
	recs[3].query = true;
	dlog_sqlite_ops.write(recs, 4, NULL, 0);
	assert_int_equal(logged, 4);

	/* One decision by its id, with what the user saw. */
	memset(&f, 0, sizeof(f));
	f.id = "d-sub";
	f.detail = true;
	assert_int_equal(n = query(&f, &out), 1);
	assert_true(out[0].detail);
	assert_string_equal(out[0].script, "jobs/train.sbatch");
	assert_string_equal(out[0].findings, recs[0].findings);
	assert_string_equal(out[0].sources, recs[0].sources);
	assert_string_equal(out[0].workload, recs[0].workload);
	free(out);
	/* Recorded but empty is not "not recorded". */
	f.id = "d-node";
	assert_int_equal(query(&f, &out), 1);
	assert_true(out[0].detail);
	assert_string_equal(out[0].findings, "");
	free(out);
	/* A what-if query by its id: only with the queries table. */
	f.id = "q-what-if";
	assert_int_equal(query(&f, &out), 0);
	free(out);
	f.include_queries = true;
	assert_int_equal(query(&f, &out), 1);
	assert_true(out[0].query && out[0].detail);
	free(out);
	/* The list reads no findings, but the script. */
	memset(&f, 0, sizeof(f));
	assert_int_equal(n = query(&f, &out), 3);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(out[i].findings, "");
	assert_string_equal(out[2].script, "jobs/train.sbatch");
	free(out);
	/* A submission's node checks. */
	memset(&f, 0, sizeof(f));
	f.parent = "d-sub";
	assert_int_equal(query(&f, &out), 1);
	assert_string_equal(out[0].id, "d-node");
	free(out);
	/* The script as given, or its file name; not a part of a name. */
	memset(&f, 0, sizeof(f));
	f.script = "train.sbatch";
	assert_int_equal(query(&f, &out), 1);
	assert_string_equal(out[0].id, "d-sub");
	free(out);
	f.script = "jobs/train.sbatch";
	assert_int_equal(query(&f, &out), 1);
	free(out);
	f.script = "rain.sbatch";
	assert_int_equal(query(&f, &out), 0);
	free(out);
	/* until: before it only. */
	memset(&f, 0, sizeof(f));
	f.until = now - 50;
	assert_int_equal(query(&f, &out), 1);
	assert_string_equal(out[0].id, "d-sub");
	free(out);
	dlog_sqlite_ops.close();
	rm_db(path);
}

/* A log from before issue 21 (and 13): the columns are added, its rows read "not recorded". */
static void test_store_migration(void **st)
{
	static const char old[] =
		"CREATE TABLE decisions (id TEXT PRIMARY KEY, time INTEGER NOT NULL, uid INTEGER NOT"
		" NULL, user TEXT, job_id INTEGER, context TEXT, parent TEXT, gpu TEXT, gpus INTEGER,"
		" nodes INTEGER, partition TEXT, model TEXT, layout TEXT, workload TEXT, verdict"
		" INTEGER NOT NULL, verdict_name TEXT, codes TEXT, mem_gib REAL, ckpt_interval_s REAL);"
		"INSERT INTO decisions (id, time, uid, user, verdict, context, codes, workload) VALUES"
		" ('d-old', strftime('%s','now') - 5, 0, 'alice', 2, 'sbatch', 'MEM_OVER_CAPACITY',"
		" 'task=train');";
	char *path = db_path(), err[256];
	struct dlog_rec rec, *out;
	struct dlog_filter f;
	sqlite3 *db;

	(void)st;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, old, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(dlog_sqlite_open(path, &env, err, sizeof(err)), 0);
	make_rec(&rec, "d-new", (int64_t)time(NULL), true);
	logged = 0;
	dlog_sqlite_ops.write(&rec, 1, NULL, 0);
	assert_int_equal(logged, 1);
	memset(&f, 0, sizeof(f));
	f.detail = true;
	f.id = "d-old";
	assert_int_equal(query(&f, &out), 1);
	assert_false(out[0].detail);
	assert_int_equal(out[0].mode, -1);
	assert_string_equal(out[0].script, "");
	assert_string_equal(out[0].workload, "task=train");
	free(out);
	f.id = "d-new";
	assert_int_equal(query(&f, &out), 1);
	assert_true(out[0].detail);
	assert_string_equal(out[0].findings, rec.findings);
	free(out);
	dlog_sqlite_ops.close();
	/* The spool's table gains them as well. */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE spool (seq INTEGER PRIMARY KEY, id TEXT,"
				      " host TEXT, kind INTEGER)", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(dlog_sqlite_add_columns(db, "spool"), 0);
	assert_int_equal(sqlite3_exec(db, "SELECT script, findings, sources FROM spool", NULL, NULL,
				      NULL), SQLITE_OK);
	sqlite3_close(db);
	rm_db(path);
	assert_int_equal(lost, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detail_lines),
		cmocka_unit_test(test_detail_bound),
		cmocka_unit_test(test_store_round_trip),
		cmocka_unit_test(test_store_migration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
