/*
 * dlog_mariadb.c - the decision log's SQL in the site's MariaDB/MySQL
 * (issue 13), through libmariadb.
 *
 * Modelled on slurmdbd's MySQL storage (accounting_storage/mysql): a schema
 * of its own in its own database, a version recorded in the database and
 * migrated forward at start (slurmdbd's "conversion" step; a database newer
 * than the daemon is refused rather than written in a shape it does not
 * know), and a writer that treats "the server is gone" as an ordinary,
 * recoverable state: every call says DLOG_MARIADB_ERR_DOWN for it, and
 * dlog_spool.c keeps the records in its spool meanwhile, as slurmctld's
 * agent keeps its queue in a state file while slurmdbd is away.
 *
 * Tables (schema 1):
 *   schema_version  one row per version applied, with its time
 *   decisions       the plugin's decisions, the SQLite log's columns plus
 *                   host; `seq` AUTO_INCREMENT is the primary key, so InnoDB
 *                   appends in arrival order (the order replays keep), and
 *                   UNIQUE (id, host) makes every write an INSERT IGNORE that
 *                   a replay of an already committed batch cannot duplicate
 *   queries         what-if queries, the same columns (issue 14)
 *   repeat_ops      the repeat-count increments applied (op key, time), so
 *                   an increment replayed after a lost COMMIT answer counts
 *                   once: the op is inserted with INSERT IGNORE and the count
 *                   only added when that inserted a row, in one transaction
 * Schema 2 (issue 21) adds to decisions and queries what the user saw:
 * `script`, `findings` and `sources` (NULL in older rows: "not recorded"),
 * and an index on `parent`, so that show finds a submission's node checks.
 * Schema 3 (issue 30) adds `exempt` to both: the policy's exemption that
 * let the job through unchecked ("user alice"; NULL none, and in older rows).
 *
 * Writes use prepared statements with MariaDB's array binding (one
 * COM_STMT_BULK_EXECUTE per chunk of rows) when the server offers it, and
 * one execution per row otherwise (MySQL), always in one transaction per
 * batch.  Column names are quoted: `partition` and `repeat` are reserved
 * words there.  Strings are utf8mb4 with a binary collation, compared as
 * bytes as SQLite does.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlog_mariadb.h"
#include "engine/names.h"
#include "engine/result.h"
#include "util.h"

#define CONNECT_TIMEOUT_S 5
/* A hung server (SIGSTOP, a full disk) stalls the writer at most about this, per try. */
#define IO_TIMEOUT_S 10
#define BULK_ROWS 1000               /* rows per array execution */
#define SCHEMA_LOCK "advisor_decision_log_schema"
#define SCHEMA_LOCK_WAIT_S 60

struct dlog_mariadb {
	MYSQL *my;
	char where[ADVCONF_STR_MAX + 16];
	bool bulk;                       /* the server takes array binding */
	int schema;
	MYSQL_STMT *ins[2];              /* decisions, queries */
	MYSQL_STMT *op, *rep;            /* repeat_ops insert, repeat update */
};

static const char *const errors[DLOG_MARIADB_ERR_COUNT] = {
	[DLOG_MARIADB_OK] = "success",
	[DLOG_MARIADB_ERR_DOWN] = "the database server is unreachable or the connection was lost",
	[DLOG_MARIADB_ERR_ACCESS] = "the database refused the user, the password or the database",
	[DLOG_MARIADB_ERR_SCHEMA] = "the database's schema is newer than this advisord's",
	[DLOG_MARIADB_ERR_QUERY] = "the database refused a statement",
	[DLOG_MARIADB_ERR_NOMEM] = "out of memory",
};
/* A code left out is a NULL row (issue 27: tables sized by their enum). */
_Static_assert(ADV_ARRAY_SIZE(errors) == DLOG_MARIADB_ERR_COUNT, "a message for each error");

const char *dlog_mariadb_strerror(int code)
{
	if (code < 0 || (size_t)code >= ADV_ARRAY_SIZE(errors))
		return "unknown dlog_mariadb error";
	return errors[code];
}

/* ---- schema ------------------------------------------------------------------- */

#define RECORD_COLUMNS_DDL \
	" `id` VARCHAR(48) NOT NULL, `host` VARCHAR(64) NOT NULL DEFAULT ''," \
	" `time` BIGINT NOT NULL, `uid` INT UNSIGNED NOT NULL, `user` VARCHAR(64) NULL," \
	" `job_id` INT UNSIGNED NULL, `context` VARCHAR(16) NULL, `parent` VARCHAR(48) NULL," \
	" `gpu` VARCHAR(64) NULL, `gpus` INT NULL, `nodes` INT NULL," \
	" `partition` VARCHAR(64) NULL," \
	" `model` VARCHAR(128) NULL, `layout` VARCHAR(64) NULL, `workload` VARCHAR(192) NULL," \
	" `verdict` TINYINT NOT NULL, `verdict_name` VARCHAR(8) NULL, `codes` VARCHAR(320) NULL," \
	" `mem_gib` DOUBLE NULL, `ckpt_interval_s` DOUBLE NULL, `mode` TINYINT NULL," \
	" `severities` VARCHAR(192) NULL, `unenforced` VARCHAR(320) NULL," \
	" `repeat` INT UNSIGNED NULL,"
#define TABLE_OPTIONS " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"

/* Migration i brings the schema from version i to i + 1; statements in order. */
static const char *const migration_1[] = {
	"CREATE TABLE IF NOT EXISTS `decisions` (`seq` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,"
	RECORD_COLUMNS_DDL
	" PRIMARY KEY (`seq`), UNIQUE KEY `decision` (`id`, `host`), KEY `time` (`time`),"
	" KEY `user_time` (`user`, `time`), KEY `job` (`job_id`))" TABLE_OPTIONS,
	"CREATE TABLE IF NOT EXISTS `queries` (`seq` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,"
	RECORD_COLUMNS_DDL
	" PRIMARY KEY (`seq`), UNIQUE KEY `query` (`id`, `host`), KEY `time` (`time`),"
	" KEY `user_time` (`user`, `time`))" TABLE_OPTIONS,
	"CREATE TABLE IF NOT EXISTS `repeat_ops` (`op` VARCHAR(128) NOT NULL,"
	" `time` BIGINT NOT NULL, PRIMARY KEY (`op`), KEY `time` (`time`))" TABLE_OPTIONS,
	NULL
};

/*
 * Schema 2 (issue 21): columns added only where missing, so that a
 * migration cut short runs again; MySQL has no ADD COLUMN IF NOT EXISTS.
 */
static const struct {
	const char *name, *ddl;
} added_2[] = {
	{ "script", "ADD COLUMN `script` VARCHAR(256) NULL" },
	{ "findings", "ADD COLUMN `findings` TEXT NULL" },
	{ "sources", "ADD COLUMN `sources` TEXT NULL" },
};

/* Schema 3 (issue 30), the same way. */
static const struct {
	const char *name, *ddl;
} added_3[] = {
	{ "exempt", "ADD COLUMN `exempt` VARCHAR(80) NULL" },
};

static const char *const *const migrations[DLOG_MARIADB_SCHEMA] = { migration_1, NULL, NULL };

#define INSERT_COLUMNS \
	"`id`, `host`, `time`, `uid`, `user`, `job_id`, `context`, `parent`, `gpu`, `gpus`," \
	" `nodes`, `partition`, `model`, `layout`, `workload`, `verdict`, `verdict_name`," \
	" `codes`, `mem_gib`, `ckpt_interval_s`, `mode`, `severities`, `unenforced`, `repeat`," \
	" `script`, `findings`, `sources`, `exempt`"
#define INSERT_SQL(table) \
	"INSERT IGNORE INTO `" table "` (" INSERT_COLUMNS ") VALUES" \
	" (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
#define N_INSERT 28
/* The columns read_row() reads, in its order. */
#define SELECT_HEAD \
	"`id`, `host`, `time`, `uid`, `user`, `job_id`, `context`, `parent`, `gpu`, `gpus`," \
	" `nodes`, `partition`, `model`, `layout`, `workload`, `verdict`, `codes`, `mem_gib`," \
	" `ckpt_interval_s`, `mode`, `severities`, `unenforced`, `repeat`, `script`"
#define SELECT_COLUMNS SELECT_HEAD ", `findings`, `sources`, `exempt`"
/* Without what only show prints: history's list, report. */
#define SELECT_BRIEF SELECT_HEAD ", NULL AS `findings`, NULL AS `sources`, `exempt`"
#define N_SELECT 27

/* The rows' verdict_name column, indexed by enum adv_verdict (bounded by
 * its count); the context column is engine_context_name's. */
static const char *const verdict_names[] = { "accept", "warn", "reject" };
_Static_assert(ADV_ARRAY_SIZE(verdict_names) == ADV_VERDICT_COUNT, "a name for each verdict");

/* ---- errors ------------------------------------------------------------------- */

/* The server is gone or busy for now: worth trying again, spool meanwhile. */
static bool transient(unsigned e)
{
	switch (e) {
	case CR_CONNECTION_ERROR: case CR_CONN_HOST_ERROR: case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST: case CR_UNKNOWN_HOST: case CR_SERVER_LOST_EXTENDED:
	case CR_COMMANDS_OUT_OF_SYNC: case CR_ERR_NET_READ: case CR_ERR_NET_WRITE:
	case ER_CON_COUNT_ERROR: case ER_SERVER_SHUTDOWN: case ER_LOCK_WAIT_TIMEOUT:
	case ER_LOCK_DEADLOCK: case ER_QUERY_INTERRUPTED: case ER_CONNECTION_KILLED:
	case ER_OUT_OF_RESOURCES: case ER_TOO_MANY_USER_CONNECTIONS: case ER_RECORD_FILE_FULL:
	case ER_DISK_FULL: case ER_READ_ONLY_MODE: case ER_OPTION_PREVENTS_STATEMENT:
	case ER_NET_READ_ERROR: case ER_NET_READ_INTERRUPTED: case ER_NET_ERROR_ON_WRITE:
	case ER_NET_WRITE_INTERRUPTED: case ER_ABORTING_CONNECTION:
		return true;
	default:
		return false;
	}
}

static int classify(unsigned e)
{
	switch (e) {
	case ER_ACCESS_DENIED_ERROR: case ER_DBACCESS_DENIED_ERROR: case ER_BAD_DB_ERROR:
	case ER_TABLEACCESS_DENIED_ERROR: case ER_COLUMNACCESS_DENIED_ERROR:
	case ER_SPECIFIC_ACCESS_DENIED_ERROR: case ER_PASSWORD_NO_MATCH:
		return DLOG_MARIADB_ERR_ACCESS;
	default:
		return transient(e) ? DLOG_MARIADB_ERR_DOWN : DLOG_MARIADB_ERR_QUERY;
	}
}

static int my_fail(struct dlog_mariadb *m, const char *what, char *err, size_t errlen)
{
	unsigned e = mysql_errno(m->my);

	adv_snprintf(err, errlen, "%s %s: %s (%u)", m->where, what, mysql_error(m->my), e);
	return classify(e);
}

static int st_fail(struct dlog_mariadb *m, MYSQL_STMT *st, const char *what, char *err,
		   size_t errlen)
{
	unsigned e = mysql_stmt_errno(st);

	adv_snprintf(err, errlen, "%s %s: %s (%u)", m->where, what, mysql_stmt_error(st), e);
	return classify(e);
}

/* ---- connection --------------------------------------------------------------- */

int dlog_mariadb_init(void)
{
	return mysql_library_init(0, NULL, NULL) == 0 ? DLOG_MARIADB_OK : DLOG_MARIADB_ERR_NOMEM;
}

void dlog_mariadb_end(void)
{
	mysql_library_end();
}

const char *dlog_mariadb_where(const struct dlog_mariadb *m)
{
	return m->where;
}

int dlog_mariadb_schema(struct dlog_mariadb *m)
{
	return m->schema;
}

static int exec(struct dlog_mariadb *m, const char *sql, char *err, size_t errlen)
{
	MYSQL_RES *res;

	if (mysql_real_query(m->my, sql, strlen(sql)) != 0)
		return my_fail(m, "query", err, errlen);
	/* Statements that answer with rows (GET_LOCK, ANALYZE) leave them to be read. */
	if ((res = mysql_store_result(m->my)))
		mysql_free_result(res);
	else if (mysql_field_count(m->my) != 0)
		return my_fail(m, "reading a result", err, errlen);
	return DLOG_MARIADB_OK;
}

/* The first column of the first row of sql as an integer; -1 for NULL or no row. */
static int query_int(struct dlog_mariadb *m, const char *sql, long long *v, char *err,
		     size_t errlen)
{
	MYSQL_RES *res;
	MYSQL_ROW row;

	*v = -1;
	if (mysql_real_query(m->my, sql, strlen(sql)) != 0 || !(res = mysql_store_result(m->my)))
		return my_fail(m, "query", err, errlen);
	if ((row = mysql_fetch_row(res)) && row[0])
		*v = strtoll(row[0], NULL, 10);
	mysql_free_result(res);
	return DLOG_MARIADB_OK;
}

/* A column of ddl to both tables, only when missing (a migration cut short runs again). */
static int add_column(struct dlog_mariadb *m, const char *name, const char *ddl, char *err,
		      size_t errlen)
{
	static const char *const tables[] = { "decisions", "queries" };
	char sql[320];
	long long n;
	int rc;

	for (size_t t = 0; t < ADV_ARRAY_SIZE(tables); t++) {
		adv_snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM information_schema.COLUMNS"
			     " WHERE `table_schema` = DATABASE() AND `table_name` = '%s' AND"
			     " `column_name` = '%s'", tables[t], name);
		if ((rc = query_int(m, sql, &n, err, errlen)))
			return rc;
		adv_snprintf(sql, sizeof(sql), "ALTER TABLE `%s` %s", tables[t], ddl);
		if (n == 0 && (rc = exec(m, sql, err, errlen)))
			return rc;
	}
	return DLOG_MARIADB_OK;
}

/* Schema 2 to 3: the exemption of issue 30. */
static int migrate_3(struct dlog_mariadb *m, char *err, size_t errlen)
{
	int rc;

	for (size_t i = 0; i < ADV_ARRAY_SIZE(added_3); i++)
		if ((rc = add_column(m, added_3[i].name, added_3[i].ddl, err, errlen)))
			return rc;
	return DLOG_MARIADB_OK;
}

/* Schema 1 to 2: the columns of issue 21 and the index on parent, each only when missing. */
static int migrate_2(struct dlog_mariadb *m, char *err, size_t errlen)
{
	static const char *const tables[] = { "decisions", "queries" };
	char sql[320];
	long long n;
	int rc;

	for (size_t t = 0; t < ADV_ARRAY_SIZE(tables); t++) {
		for (size_t i = 0; i < ADV_ARRAY_SIZE(added_2); i++) {
			adv_snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM information_schema.COLUMNS"
				     " WHERE `table_schema` = DATABASE() AND `table_name` = '%s' AND"
				     " `column_name` = '%s'", tables[t], added_2[i].name);
			if ((rc = query_int(m, sql, &n, err, errlen)))
				return rc;
			adv_snprintf(sql, sizeof(sql), "ALTER TABLE `%s` %s", tables[t],
				     added_2[i].ddl);
			if (n == 0 && (rc = exec(m, sql, err, errlen)))
				return rc;
		}
		adv_snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM information_schema.STATISTICS"
			     " WHERE `table_schema` = DATABASE() AND `table_name` = '%s' AND"
			     " `index_name` = 'parent'", tables[t]);
		if ((rc = query_int(m, sql, &n, err, errlen)))
			return rc;
		adv_snprintf(sql, sizeof(sql), "ALTER TABLE `%s` ADD KEY `parent` (`parent`)",
			     tables[t]);
		if (n == 0 && (rc = exec(m, sql, err, errlen)))
			return rc;
	}
	return DLOG_MARIADB_OK;
}

/*
 * Brings the schema to DLOG_MARIADB_SCHEMA.  Two daemons starting at once
 * (two login nodes after a power cut) take turns on a named lock, so one
 * migrates and the other finds it done.  DDL commits by itself in MariaDB,
 * so each migration is recorded only after all its statements ran, and its
 * statements are written to be run again (IF NOT EXISTS).
 */
static int migrate(struct dlog_mariadb *m, char *err, size_t errlen)
{
	char sql[160];
	long long got, v;
	int rc;

	adv_snprintf(sql, sizeof(sql), "SELECT GET_LOCK('%s', %d)", SCHEMA_LOCK,
		     SCHEMA_LOCK_WAIT_S);
	if ((rc = query_int(m, sql, &got, err, errlen)))
		return rc;
	if (got != 1) {
		adv_snprintf(err, errlen, "%s: another advisord held the schema lock for %d s",
			     m->where, SCHEMA_LOCK_WAIT_S);
		return DLOG_MARIADB_ERR_DOWN;
	}
	if ((rc = exec(m, "CREATE TABLE IF NOT EXISTS `schema_version` (`version` INT NOT NULL,"
		       " `time` BIGINT NOT NULL, PRIMARY KEY (`version`))" TABLE_OPTIONS,
		       err, errlen)) ||
	    (rc = query_int(m, "SELECT MAX(`version`) FROM `schema_version`", &v, err, errlen)))
		goto out;
	if (v < 0)
		v = 0;
	if (v > DLOG_MARIADB_SCHEMA) {
		adv_snprintf(err, errlen, "%s: the decision log's schema is at version %lld, this "
			     "advisord knows %d: upgrade advisord (it never writes a newer schema)",
			     m->where, v, DLOG_MARIADB_SCHEMA);
		rc = DLOG_MARIADB_ERR_SCHEMA;
		goto out;
	}
	for (; v < DLOG_MARIADB_SCHEMA; v++) {
		for (const char *const *s = migrations[v]; s && *s; s++)
			if ((rc = exec(m, *s, err, errlen)))
				goto out;
		if (v == 1 && (rc = migrate_2(m, err, errlen)))
			goto out;
		if (v == 2 && (rc = migrate_3(m, err, errlen)))
			goto out;
		adv_snprintf(sql, sizeof(sql),
			     "INSERT IGNORE INTO `schema_version` VALUES (%lld, %lld)", v + 1,
			     (long long)time(NULL));
		if ((rc = exec(m, sql, err, errlen)) || (rc = exec(m, "COMMIT", err, errlen)))
			goto out;
	}
	m->schema = (int)v;
out:
	{
		char e2[8];
		long long ignored;

		adv_snprintf(sql, sizeof(sql), "SELECT RELEASE_LOCK('%s')", SCHEMA_LOCK);
		if (rc != DLOG_MARIADB_ERR_DOWN)
			(void)query_int(m, sql, &ignored, e2, sizeof(e2));
	}
	return rc;
}

static int prepare(struct dlog_mariadb *m, MYSQL_STMT **st, const char *sql, char *err,
		   size_t errlen)
{
	if (!(*st = mysql_stmt_init(m->my)))
		return DLOG_MARIADB_ERR_NOMEM;
	if (mysql_stmt_prepare(*st, sql, strlen(sql)) != 0)
		return st_fail(m, *st, "prepare", err, errlen);
	return DLOG_MARIADB_OK;
}

int dlog_mariadb_connect(const struct advconf *c, bool do_migrate, struct dlog_mariadb **out,
			 char *err, size_t errlen)
{
	struct dlog_mariadb *m = calloc(1, sizeof(*m));
	unsigned int ct = CONNECT_TIMEOUT_S, io = IO_TIMEOUT_S;
	my_bool off = 0;
	unsigned long ext = 0;
	const char *host = c->socket[0] ? NULL : c->host;
	int rc;

	*out = NULL;
	if (!m || !(m->my = mysql_init(NULL))) {
		free(m);
		adv_snprintf(err, errlen, "out of memory");
		return DLOG_MARIADB_ERR_NOMEM;
	}
	if (c->socket[0])
		adv_snprintf(m->where, sizeof(m->where), "MariaDB %s", c->socket);
	else
		adv_snprintf(m->where, sizeof(m->where), "MariaDB %s:%d", c->host,
			     c->port ? c->port : 3306);
	/*
	 * No automatic reconnect: it would silently drop the open transaction
	 * and the prepared statements; dlog_spool.c reconnects, with backoff,
	 * itself.
	 */
	mysql_optionsv(m->my, MYSQL_OPT_RECONNECT, &off);
	mysql_optionsv(m->my, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
	mysql_optionsv(m->my, MYSQL_OPT_READ_TIMEOUT, &io);
	mysql_optionsv(m->my, MYSQL_OPT_WRITE_TIMEOUT, &io);
	mysql_optionsv(m->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (!mysql_real_connect(m->my, host, c->user, c->password[0] ? c->password : NULL,
				c->database, (unsigned)(c->port > 0 ? c->port : 0),
				c->socket[0] ? c->socket : NULL, 0)) {
		rc = my_fail(m, "connect", err, errlen);
		dlog_mariadb_close(m);
		return rc;
	}
	mariadb_get_infov(m->my, MARIADB_CONNECTION_EXTENDED_SERVER_CAPABILITIES, &ext);
	m->bulk = (ext & (MARIADB_CLIENT_STMT_BULK_OPERATIONS >> 32)) != 0;
	/*
	 * Autocommit off: a batch is one transaction.  READ COMMITTED: readers
	 * see every batch committed by any node as soon as it is, and the
	 * writer takes no gap locks that would make two nodes' inserts wait.
	 */
	if (mysql_autocommit(m->my, 0) != 0) {
		rc = my_fail(m, "autocommit", err, errlen);
		dlog_mariadb_close(m);
		return rc;
	}
	if ((rc = exec(m, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", err, errlen)) ||
	    (do_migrate && (rc = migrate(m, err, errlen)))) {
		dlog_mariadb_close(m);
		return rc;
	}
	*out = m;
	return DLOG_MARIADB_OK;
}

void dlog_mariadb_close(struct dlog_mariadb *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < 2; i++)
		if (m->ins[i])
			mysql_stmt_close(m->ins[i]);
	if (m->op)
		mysql_stmt_close(m->op);
	if (m->rep)
		mysql_stmt_close(m->rep);
	if (m->my)
		mysql_close(m->my);
	free(m);
}

/* ---- writing ---------------------------------------------------------------------- */

enum col_kind { C_STR, C_I64, C_DBL };

/*
 * One chunk of rows laid out column by column, as array binding wants it:
 * strings as arrays of pointers into the records, numbers as arrays of
 * values, each column with its indicator array (NULL or NTS).
 */
struct cols {
	size_t n;
	const char **s[N_INSERT];
	int64_t *i[N_INSERT];
	double *d[N_INSERT];
	char *ind[N_INSERT];
	void *block;
};

static const enum col_kind kinds[N_INSERT] = {
	C_STR, C_STR, C_I64, C_I64, C_STR, C_I64, C_STR, C_STR, C_STR, C_I64, C_I64, C_STR,
	C_STR, C_STR, C_STR, C_I64, C_STR, C_STR, C_DBL, C_DBL, C_I64, C_STR, C_STR, C_I64,
	C_STR, C_STR, C_STR, C_STR,
};

static int cols_alloc(struct cols *c, size_t n)
{
	size_t per = sizeof(void *) + sizeof(char);   /* the largest value and its indicator */
	char *p;

	memset(c, 0, sizeof(*c));
	if (!(c->block = malloc(n * per * N_INSERT)))
		return -1;
	p = c->block;
	/* Values first (8-byte aligned), then the indicators. */
	for (size_t k = 0; k < N_INSERT; k++, p += n * sizeof(void *)) {
		if (kinds[k] == C_STR)
			c->s[k] = (const char **)(void *)p;
		else if (kinds[k] == C_I64)
			c->i[k] = (int64_t *)(void *)p;
		else
			c->d[k] = (double *)(void *)p;
	}
	for (size_t k = 0; k < N_INSERT; k++, p += n)
		c->ind[k] = p;
	c->n = n;
	return 0;
}

static void set_str(struct cols *c, size_t k, size_t row, const char *s)
{
	c->s[k][row] = s ? s : "";
	c->ind[k][row] = (s && *s) ? STMT_INDICATOR_NTS : STMT_INDICATOR_NULL;
}

static void set_i64(struct cols *c, size_t k, size_t row, int64_t v, bool null)
{
	c->i[k][row] = v;
	c->ind[k][row] = null ? STMT_INDICATOR_NULL : STMT_INDICATOR_NONE;
}

static void set_dbl(struct cols *c, size_t k, size_t row, double v)
{
	c->d[k][row] = v;
	c->ind[k][row] = v >= 0 ? STMT_INDICATOR_NONE : STMT_INDICATOR_NULL;
}

/* What the user saw: NULL only for a record without it, "" for none of it. */
static void set_detail(struct cols *c, size_t k, size_t row, bool detail, const char *s)
{
	c->s[k][row] = s;
	c->ind[k][row] = detail ? STMT_INDICATOR_NTS : STMT_INDICATOR_NULL;
}

static void fill_row(struct cols *c, size_t row, const struct dlog_rec *r)
{
	size_t k = 0;

	set_str(c, k++, row, r->id);
	c->s[1][row] = r->host;                /* NOT NULL: "" when unknown */
	c->ind[1][row] = STMT_INDICATOR_NTS;
	k++;
	set_i64(c, k++, row, r->time, false);
	set_i64(c, k++, row, r->uid, false);
	set_str(c, k++, row, r->user);
	set_i64(c, k++, row, r->job_id, r->job_id == 0);
	set_str(c, k++, row, r->context >= 0 && r->context < ADV_CTX_COUNT ? engine_context_name((enum adv_context)r->context)
								    : NULL);
	set_str(c, k++, row, r->parent);
	set_str(c, k++, row, r->gpu);
	set_i64(c, k++, row, r->gpus, false);
	set_i64(c, k++, row, r->nodes, false);
	set_str(c, k++, row, r->partition);
	set_str(c, k++, row, r->model);
	set_str(c, k++, row, r->layout);
	set_str(c, k++, row, r->workload);
	set_i64(c, k++, row, r->verdict, false);
	set_str(c, k++, row, r->verdict >= 0 && r->verdict < ADV_VERDICT_COUNT
			     ? verdict_names[r->verdict] : NULL);
	set_str(c, k++, row, r->codes);
	set_dbl(c, k++, row, r->mem_gib);
	set_dbl(c, k++, row, r->ckpt_interval_s);
	set_i64(c, k++, row, r->mode, r->mode < 0);
	set_str(c, k++, row, r->severities);
	set_str(c, k++, row, r->unenforced);
	set_i64(c, k++, row, r->repeat, r->repeat <= 1);
	set_detail(c, k++, row, r->detail, r->script);
	set_detail(c, k++, row, r->detail, r->findings);
	set_detail(c, k++, row, r->detail, r->sources);
	set_str(c, k++, row, r->exempt_by);
}

/* Binds the whole chunk for one array execution. */
static void bind_array(struct cols *c, MYSQL_BIND *b)
{
	memset(b, 0, N_INSERT * sizeof(*b));
	for (size_t k = 0; k < N_INSERT; k++) {
		b[k].u.indicator = c->ind[k];
		if (kinds[k] == C_STR) {
			b[k].buffer_type = MYSQL_TYPE_STRING;
			b[k].buffer = (void *)c->s[k];
		} else if (kinds[k] == C_I64) {
			b[k].buffer_type = MYSQL_TYPE_LONGLONG;
			b[k].buffer = c->i[k];
		} else {
			b[k].buffer_type = MYSQL_TYPE_DOUBLE;
			b[k].buffer = c->d[k];
		}
	}
}

/* Binds one row of the chunk for a plain execution (servers without array binding). */
static void bind_row(struct cols *c, size_t row, MYSQL_BIND *b, unsigned long *len,
		     my_bool *null)
{
	memset(b, 0, N_INSERT * sizeof(*b));
	for (size_t k = 0; k < N_INSERT; k++) {
		null[k] = c->ind[k][row] == STMT_INDICATOR_NULL;
		b[k].is_null = &null[k];
		if (kinds[k] == C_STR) {
			b[k].buffer_type = MYSQL_TYPE_STRING;
			b[k].buffer = (void *)c->s[k][row];
			len[k] = (unsigned long)strlen(c->s[k][row]);
			b[k].buffer_length = len[k];
			b[k].length = &len[k];
		} else if (kinds[k] == C_I64) {
			b[k].buffer_type = MYSQL_TYPE_LONGLONG;
			b[k].buffer = &c->i[k][row];
		} else {
			b[k].buffer_type = MYSQL_TYPE_DOUBLE;
			b[k].buffer = &c->d[k][row];
		}
	}
}

/* Inserts the records of one table (query or not), in their order. */
static int insert_table(struct dlog_mariadb *m, bool query, const struct dlog_rec *recs,
			size_t n, struct cols *c, char *err, size_t errlen)
{
	MYSQL_STMT **st = &m->ins[query];
	MYSQL_BIND b[N_INSERT];
	int rc;

	if (!*st && (rc = prepare(m, st, query ? INSERT_SQL("queries") : INSERT_SQL("decisions"),
				  err, errlen)))
		return rc;
	for (size_t i = 0; i < n;) {
		size_t k = 0;

		while (i < n && k < c->n) {
			if (recs[i].query == query)
				fill_row(c, k++, &recs[i]);
			i++;
		}
		if (k == 0)
			break;
		if (m->bulk) {
			unsigned int size = (unsigned int)k;

			bind_array(c, b);
			if (mysql_stmt_attr_set(*st, STMT_ATTR_ARRAY_SIZE, &size) ||
			    mysql_stmt_bind_param(*st, b) || mysql_stmt_execute(*st))
				return st_fail(m, *st, "insert", err, errlen);
			continue;
		}
		for (size_t r = 0; r < k; r++) {
			unsigned long len[N_INSERT];
			my_bool null[N_INSERT];

			bind_row(c, r, b, len, null);
			if (mysql_stmt_bind_param(*st, b) || mysql_stmt_execute(*st))
				return st_fail(m, *st, "insert", err, errlen);
		}
	}
	return DLOG_MARIADB_OK;
}

static int repeat_one(struct dlog_mariadb *m, const struct dlog_mariadb_repeat *r, char *err,
		      size_t errlen)
{
	MYSQL_BIND b[3];
	unsigned long len[3];
	long long n = (long long)r->n, t = r->time;
	int rc;

	if (!m->op && (rc = prepare(m, &m->op, "INSERT IGNORE INTO `repeat_ops` (`op`, `time`)"
				    " VALUES (?, ?)", err, errlen)))
		return rc;
	if (!m->rep && (rc = prepare(m, &m->rep, "UPDATE `decisions` SET `repeat` ="
				     " COALESCE(`repeat`, 1) + ? WHERE `id` = ? AND `host` = ?",
				     err, errlen)))
		return rc;
	memset(b, 0, sizeof(b));
	len[0] = (unsigned long)strlen(r->op);
	b[0].buffer_type = MYSQL_TYPE_STRING;
	b[0].buffer = (void *)r->op;
	b[0].buffer_length = len[0];
	b[0].length = &len[0];
	b[1].buffer_type = MYSQL_TYPE_LONGLONG;
	b[1].buffer = &t;
	if (mysql_stmt_bind_param(m->op, b) || mysql_stmt_execute(m->op))
		return st_fail(m, m->op, "recording a repeat", err, errlen);
	/* Applied before (the batch is a replay): the count is in already. */
	if (mysql_stmt_affected_rows(m->op) == 0)
		return DLOG_MARIADB_OK;
	memset(b, 0, sizeof(b));
	b[0].buffer_type = MYSQL_TYPE_LONGLONG;
	b[0].buffer = &n;
	len[1] = (unsigned long)strlen(r->id);
	b[1].buffer_type = MYSQL_TYPE_STRING;
	b[1].buffer = (void *)r->id;
	b[1].buffer_length = len[1];
	b[1].length = &len[1];
	len[2] = (unsigned long)strlen(r->host);
	b[2].buffer_type = MYSQL_TYPE_STRING;
	b[2].buffer = (void *)r->host;
	b[2].buffer_length = len[2];
	b[2].length = &len[2];
	if (mysql_stmt_bind_param(m->rep, b) || mysql_stmt_execute(m->rep))
		return st_fail(m, m->rep, "counting a repeat", err, errlen);
	return DLOG_MARIADB_OK;
}

int dlog_mariadb_write(struct dlog_mariadb *m, const struct dlog_rec *recs, size_t n,
		       const struct dlog_mariadb_repeat *reps, size_t n_reps, char *err,
		       size_t errlen)
{
	struct cols c;
	int rc = DLOG_MARIADB_OK;

	if (n && cols_alloc(&c, n < BULK_ROWS ? n : BULK_ROWS) != 0) {
		adv_snprintf(err, errlen, "out of memory");
		return DLOG_MARIADB_ERR_NOMEM;
	}
	if (n) {
		rc = insert_table(m, false, recs, n, &c, err, errlen);
		if (!rc)
			rc = insert_table(m, true, recs, n, &c, err, errlen);
		free(c.block);
	}
	/* After the inserts: a row and its first repeats may share a batch. */
	for (size_t i = 0; !rc && i < n_reps; i++)
		rc = repeat_one(m, &reps[i], err, errlen);
	if (!rc && mysql_commit(m->my) != 0)
		rc = my_fail(m, "commit", err, errlen);
	if (rc)
		(void)mysql_rollback(m->my);
	return rc;
}

/* ---- reading ------------------------------------------------------------------------ */

/* Result buffers for one row of SELECT_COLUMNS. */
struct row {
	struct dlog_rec r;
	char context[16];
	long long time, uid, job_id, gpus, nodes, verdict, mode, repeat;
	double mem, ckpt;
	unsigned long len[N_SELECT];
	my_bool null[N_SELECT], error[N_SELECT];
	MYSQL_BIND b[N_SELECT];
};

static void bind_out(struct row *w, size_t k, enum enum_field_types t, void *buf, size_t size)
{
	w->b[k].buffer_type = t;
	w->b[k].buffer = buf;
	w->b[k].buffer_length = (unsigned long)size;
	w->b[k].length = &w->len[k];
	w->b[k].is_null = &w->null[k];
	w->b[k].error = &w->error[k];
}

static void bind_result_row(struct row *w)
{
	size_t k = 0;

	memset(w, 0, sizeof(*w));
#define S(f) bind_out(w, k++, MYSQL_TYPE_STRING, f, sizeof(f))
#define I(f) bind_out(w, k++, MYSQL_TYPE_LONGLONG, &f, sizeof(f))
	S(w->r.id); S(w->r.host); I(w->time); I(w->uid); S(w->r.user); I(w->job_id);
	S(w->context); S(w->r.parent); S(w->r.gpu); I(w->gpus); I(w->nodes);
	S(w->r.partition); S(w->r.model); S(w->r.layout); S(w->r.workload); I(w->verdict);
	S(w->r.codes);
	bind_out(w, k++, MYSQL_TYPE_DOUBLE, &w->mem, sizeof(w->mem));
	bind_out(w, k++, MYSQL_TYPE_DOUBLE, &w->ckpt, sizeof(w->ckpt));
	I(w->mode); S(w->r.severities); S(w->r.unenforced); I(w->repeat);
	S(w->r.script); S(w->r.findings); S(w->r.sources); S(w->r.exempt_by);
#undef S
#undef I
}

/* The fetched row into out; strings cut to their buffers, always terminated. */
static void row_to_rec(struct row *w, bool query, struct dlog_rec *out)
{
	for (size_t k = 0; k < N_SELECT; k++) {
		if (w->b[k].buffer_type != MYSQL_TYPE_STRING)
			continue;
		char *s = w->b[k].buffer;
		size_t cap = w->b[k].buffer_length;

		s[w->null[k] ? 0 : (w->len[k] < cap ? w->len[k] : cap - 1)] = '\0';
	}
	*out = w->r;
	out->time = w->time;
	out->uid = (uint32_t)w->uid;
	out->job_id = w->null[5] ? 0 : (uint32_t)w->job_id;
	out->context = 0;
	for (int i = 0; i < ADV_CTX_COUNT; i++)
		if (strcmp(w->context, engine_context_name((enum adv_context)i)) == 0)
			out->context = i;
	out->gpus = (int)w->gpus;
	out->nodes = (int)w->nodes;
	out->verdict = (int)w->verdict;
	out->mem_gib = w->null[17] ? -1 : w->mem;
	out->ckpt_interval_s = w->null[18] ? -1 : w->ckpt;
	out->mode = w->null[19] ? -1 : (int)w->mode;
	out->repeat = w->null[22] || w->repeat < 1 ? 1 : (uint32_t)w->repeat;
	out->detail = !w->null[24];
	out->query = query;
}

/* The WHERE of history and report, with its parameters. */
struct where {
	char sql[512];
	MYSQL_BIND b[10];
	unsigned long user_len, id_len, parent_len, script_len;
	long long job, verdict, since, until;
	size_t n;
};

static void where_str(struct where *w, const char *s, unsigned long *len)
{
	*len = (unsigned long)strlen(s);
	w->b[w->n].buffer_type = MYSQL_TYPE_STRING;
	w->b[w->n].buffer = (void *)s;
	w->b[w->n].buffer_length = *len;
	w->b[w->n++].length = len;
}

static void where_build(struct where *w, const struct dlog_filter *f, bool job)
{
	memset(w, 0, sizeof(*w));
	adv_strlcpy(w->sql, " WHERE `time` >= ?", sizeof(w->sql));
	w->since = f->since;
	w->b[w->n].buffer_type = MYSQL_TYPE_LONGLONG;
	w->b[w->n++].buffer = &w->since;
	if (f->user) {
		adv_strlcat(w->sql, " AND `user` = ?", sizeof(w->sql));
		w->user_len = (unsigned long)strlen(f->user);
		w->b[w->n].buffer_type = MYSQL_TYPE_STRING;
		w->b[w->n].buffer = (void *)f->user;
		w->b[w->n].buffer_length = w->user_len;
		w->b[w->n++].length = &w->user_len;
	}
	if (job && f->job_id) {
		adv_strlcat(w->sql, " AND `job_id` = ?", sizeof(w->sql));
		w->job = f->job_id;
		w->b[w->n].buffer_type = MYSQL_TYPE_LONGLONG;
		w->b[w->n++].buffer = &w->job;
	}
	if (f->verdict >= 0) {
		adv_strlcat(w->sql, " AND `verdict` = ?", sizeof(w->sql));
		w->verdict = f->verdict;
		w->b[w->n].buffer_type = MYSQL_TYPE_LONGLONG;
		w->b[w->n++].buffer = &w->verdict;
	}
	/* Issue 21: history's (and show's) own filters; report sets none of them. */
	if (f->until) {
		adv_strlcat(w->sql, " AND `time` < ?", sizeof(w->sql));
		w->until = f->until;
		w->b[w->n].buffer_type = MYSQL_TYPE_LONGLONG;
		w->b[w->n++].buffer = &w->until;
	}
	if (f->id) {
		adv_strlcat(w->sql, " AND `id` = ?", sizeof(w->sql));
		where_str(w, f->id, &w->id_len);
	}
	if (f->parent) {
		adv_strlcat(w->sql, " AND `parent` = ?", sizeof(w->sql));
		where_str(w, f->parent, &w->parent_len);
	}
	/* The name as sbatch was given it, or its last component. */
	if (f->script) {
		adv_strlcat(w->sql, " AND (`script` = ? OR RIGHT(`script`, CHAR_LENGTH(?) + 1) ="
			    " CONCAT('/', ?))", sizeof(w->sql));
		for (int i = 0; i < 3; i++)
			where_str(w, f->script, &w->script_len);
	}
}

/*
 * Runs sql with params; on success the rows are read with fetch_row().  q
 * is the index of the "which table" column (the union's), or -1.
 */
static int run_select(struct dlog_mariadb *m, MYSQL_STMT **st, const char *sql,
		      MYSQL_BIND *params, struct row *w, long long *q, char *err, size_t errlen)
{
	MYSQL_BIND b[N_SELECT + 1];
	int rc;

	if ((rc = prepare(m, st, sql, err, errlen)))
		return rc;
	if ((params && mysql_stmt_bind_param(*st, params)) || mysql_stmt_execute(*st))
		return st_fail(m, *st, "select", err, errlen);
	bind_result_row(w);
	memcpy(b, w->b, sizeof(w->b));
	if (q) {
		memset(&b[N_SELECT], 0, sizeof(b[N_SELECT]));
		b[N_SELECT].buffer_type = MYSQL_TYPE_LONGLONG;
		b[N_SELECT].buffer = q;
	}
	if (mysql_stmt_bind_result(*st, b))
		return st_fail(m, *st, "binding the result", err, errlen);
	return DLOG_MARIADB_OK;
}

/* 1 a row, 0 the end, or a negative error code. */
static int fetch_row(struct dlog_mariadb *m, MYSQL_STMT *st, char *err, size_t errlen)
{
	int rc = mysql_stmt_fetch(st);

	if (rc == 0 || rc == MYSQL_DATA_TRUNCATED)
		return 1;
	if (rc == MYSQL_NO_DATA)
		return 0;
	return -st_fail(m, st, "fetch", err, errlen);
}

int dlog_mariadb_query(struct dlog_mariadb *m, const struct dlog_filter *f,
		       struct dlog_rec **out, size_t *n, char *err, size_t errlen)
{
	const char *cols = f->detail ? SELECT_COLUMNS : SELECT_BRIEF;
	char sql[4096];
	struct where w;
	MYSQL_BIND params[2 * 10 + 3];
	MYSQL_STMT *st = NULL;
	struct row *row = malloc(sizeof(*row));
	struct dlog_rec *recs = NULL;
	size_t count = 0, cap = 0, np;
	long long limit = f->limit > 0 ? f->limit : 100, q = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!row) {
		adv_snprintf(err, errlen, "out of memory");
		return DLOG_MARIADB_ERR_NOMEM;
	}
	where_build(&w, f, true);
	/* Newest first; within a second, decisions before queries, then newest written first. */
	if (f->include_queries)
		adv_snprintf(sql, sizeof(sql),
			     "SELECT " SELECT_COLUMNS ", `q` FROM ((SELECT %s,"
			     " 0 AS `q`, `seq` FROM `decisions`%s ORDER BY `time` DESC, `seq` DESC"
			     " LIMIT ?) UNION ALL (SELECT %s, 1 AS `q`, `seq` FROM"
			     " `queries`%s ORDER BY"
			     " `time` DESC, `seq` DESC LIMIT ?)) AS `u` ORDER BY `time` DESC, `q`,"
			     " `seq` DESC LIMIT ?", cols, w.sql, cols, w.sql);
	else
		adv_snprintf(sql, sizeof(sql), "SELECT %s, 0 FROM `decisions`%s"
			     " ORDER BY `time` DESC, `seq` DESC LIMIT ?", cols, w.sql);
	memset(params, 0, sizeof(params));
	memcpy(params, w.b, w.n * sizeof(*w.b));
	np = w.n;
	params[np].buffer_type = MYSQL_TYPE_LONGLONG;
	params[np++].buffer = &limit;
	if (f->include_queries) {
		memcpy(&params[np], w.b, w.n * sizeof(*w.b));
		np += w.n;
		params[np].buffer_type = MYSQL_TYPE_LONGLONG;
		params[np++].buffer = &limit;
		params[np].buffer_type = MYSQL_TYPE_LONGLONG;
		params[np++].buffer = &limit;
	}
	if ((rc = run_select(m, &st, sql, params, row, &q, err, errlen)))
		goto out;
	while ((rc = fetch_row(m, st, err, errlen)) > 0) {
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct dlog_rec *p = realloc(recs, ncap * sizeof(*p));

			if (!p) {
				adv_snprintf(err, errlen, "out of memory");
				rc = -DLOG_MARIADB_ERR_NOMEM;
				break;
			}
			recs = p;
			cap = ncap;
		}
		row_to_rec(row, q == 1, &recs[count++]);
	}
	if (rc < 0) {
		rc = -rc;
		goto out;
	}
	*out = recs;
	*n = count;
	recs = NULL;
out:
	free(recs);
	free(row);
	if (st)
		mysql_stmt_close(st);
	/* A read-only transaction still holds a snapshot: end it. */
	(void)mysql_commit(m->my);
	return rc;
}

int dlog_mariadb_scan(struct dlog_mariadb *m, const struct dlog_filter *f,
		      void (*fn)(const struct dlog_rec *r, void *ctx), void *ctx,
		      char *err, size_t errlen)
{
	char sql[2048];
	struct where w;
	MYSQL_STMT *st = NULL;
	struct row *row = malloc(sizeof(*row));
	struct dlog_rec *rec = malloc(sizeof(*rec));
	int rc;

	if (!row || !rec) {
		free(row);
		free(rec);
		adv_snprintf(err, errlen, "out of memory");
		return DLOG_MARIADB_ERR_NOMEM;
	}
	where_build(&w, f, false);
	adv_snprintf(sql, sizeof(sql), "SELECT " SELECT_BRIEF " FROM `decisions`%s"
		     " ORDER BY `time`, `seq`", w.sql);
	/* Rows stream from the server as fn folds them: memory stays flat for a long log. */
	if ((rc = run_select(m, &st, sql, w.b, row, NULL, err, errlen)) == 0) {
		while ((rc = fetch_row(m, st, err, errlen)) > 0) {
			row_to_rec(row, false, rec);
			fn(rec, ctx);
		}
		rc = rc < 0 ? -rc : 0;
	}
	free(row);
	free(rec);
	if (st)
		mysql_stmt_close(st);
	(void)mysql_commit(m->my);
	return rc;
}

/* ---- retention and size ------------------------------------------------------------------ */

int dlog_mariadb_prune(struct dlog_mariadb *m, const char *table, int64_t before, long limit,
		       long *deleted, char *err, size_t errlen)
{
	char sql[160];
	MYSQL_STMT *st = NULL;
	MYSQL_BIND b[2];
	long long t = before, l = limit;
	int rc;

	*deleted = 0;
	if (strcmp(table, "decisions") && strcmp(table, "queries") && strcmp(table, "repeat_ops")) {
		adv_snprintf(err, errlen, "no table %s", table);
		return DLOG_MARIADB_ERR_QUERY;
	}
	/* Oldest first, in chunks: a long prune never holds many row locks at once. */
	adv_snprintf(sql, sizeof(sql), "DELETE FROM `%s` WHERE `time` < ? ORDER BY `time` LIMIT ?",
		     table);
	memset(b, 0, sizeof(b));
	b[0].buffer_type = b[1].buffer_type = MYSQL_TYPE_LONGLONG;
	b[0].buffer = &t;
	b[1].buffer = &l;
	if ((rc = prepare(m, &st, sql, err, errlen)) == 0) {
		if (mysql_stmt_bind_param(st, b) || mysql_stmt_execute(st))
			rc = st_fail(m, st, "prune", err, errlen);
		else
			*deleted = (long)mysql_stmt_affected_rows(st);
	}
	if (st)
		mysql_stmt_close(st);
	if (!rc && mysql_commit(m->my) != 0)
		rc = my_fail(m, "commit", err, errlen);
	if (rc)
		(void)mysql_rollback(m->my);
	return rc;
}

int dlog_mariadb_size(struct dlog_mariadb *m, uint64_t *bytes, uint64_t *decision_rows,
		      uint64_t *query_rows, char *err, size_t errlen)
{
	static const char sql[] =
		"SELECT CAST(COALESCE(SUM(`data_length` + `index_length`), 0) AS UNSIGNED),"
		" CAST(COALESCE(SUM(IF(`table_name` = 'decisions', `table_rows`, 0)), 0)"
		" AS UNSIGNED),"
		" CAST(COALESCE(SUM(IF(`table_name` = 'queries', `table_rows`, 0)), 0) AS UNSIGNED)"
		" FROM information_schema.TABLES WHERE `table_schema` = DATABASE() AND `table_name`"
		" IN ('decisions', 'queries', 'repeat_ops', 'schema_version')";
	MYSQL_STMT *st = NULL;
	MYSQL_BIND b[3];
	unsigned long long v[3] = { 0, 0, 0 };
	int rc;

	memset(b, 0, sizeof(b));
	for (size_t i = 0; i < 3; i++) {
		b[i].buffer_type = MYSQL_TYPE_LONGLONG;
		b[i].buffer = &v[i];
		b[i].is_unsigned = 1;
	}
	if ((rc = prepare(m, &st, sql, err, errlen)) == 0) {
		if (mysql_stmt_execute(st) || mysql_stmt_bind_result(st, b))
			rc = st_fail(m, st, "size", err, errlen);
		else if ((rc = fetch_row(m, st, err, errlen)) < 0)
			rc = -rc;
		else
			rc = DLOG_MARIADB_OK;
	}
	if (st)
		mysql_stmt_close(st);
	(void)mysql_commit(m->my);
	*bytes = v[0];
	*decision_rows = v[1];
	*query_rows = v[2];
	return rc;
}

int dlog_mariadb_analyze(struct dlog_mariadb *m, char *err, size_t errlen)
{
	return exec(m, "ANALYZE TABLE `decisions`, `queries`, `repeat_ops`", err, errlen);
}
