/*
 * test_advconf.c - advisord.conf (daemon/advconf.c) and the TCP addresses
 * of clients and servers (common/wire/endpoint.c), issue 13: every bad input
 * names the file, line and column, or the address and what is wrong with
 * it; a file that holds a password and that others may read is refused.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "advconf.h"
#include "wire/endpoint.h"

static void test_endpoints(void **st)
{
	struct endpoint eps[ENDPOINT_MAX], ep;
	char err[256];

	(void)st;
	assert_int_equal(endpoint_split("login1:6830", &ep, err, sizeof(err)), 0);
	assert_string_equal(ep.host, "login1");
	assert_int_equal(ep.port, 6830);
	assert_int_equal(endpoint_split("[::1]:7", &ep, err, sizeof(err)), 0);
	assert_string_equal(ep.host, "::1");
	assert_int_equal(ep.port, 7);
	assert_int_equal(endpoint_split("login1", &ep, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "HOST:PORT"));
	assert_int_equal(endpoint_split("login1:0", &ep, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "1 to 65535"));
	assert_int_equal(endpoint_split("login1:65536", &ep, err, sizeof(err)), -1);
	assert_int_equal(endpoint_split(":80", &ep, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "empty"));
	assert_int_equal(endpoint_split("::1:80", &ep, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "[ADDR]:PORT"));
	assert_int_equal(endpoint_split("[::1]80", &ep, err, sizeof(err)), -1);

	assert_int_equal(endpoint_list("a:1,b:2,[fe80::1]:3", eps, ENDPOINT_MAX, err, sizeof(err)), 3);
	assert_string_equal(eps[1].host, "b");
	assert_int_equal(eps[2].port, 3);
	assert_int_equal(endpoint_list("a:1,,b:2", eps, ENDPOINT_MAX, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "empty"));
	assert_int_equal(endpoint_list("a:1,b:2,c:3", eps, 2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 2"));
	assert_true(endpoint_is_path("/run/advisor/advisord.sock"));
	assert_false(endpoint_is_path("login1:6830"));
}

static void expect_error(const char *text, int code, const char *want)
{
	struct advconf c;
	char err[512] = "";
	int rc = advconf_load_string("advisord.conf", text, &c, err, sizeof(err));

	if (rc != code)
		print_error("got %d: %s\n", rc, err);
	assert_int_equal(rc, code);
	assert_string_equal(err, want);
}

static void test_conf_values(void **st)
{
	struct advconf c;
	char err[512] = "";

	(void)st;
	assert_int_equal(advconf_load_string("advisord.conf", "", &c, err, sizeof(err)), 0);
	assert_int_equal(c.storage, ADVCONF_SQLITE);
	assert_string_equal(c.listen, "");
	assert_int_equal(advconf_load_string("advisord.conf",
					     "storage:\n"
					     "  type: mariadb\n"
					     "  host: db1\n"
					     "  port: 3307\n"
					     "  user: advisor\n"
					     "  password: secret\n"
					     "  database: advisor\n"
					     "  spool: /var/spool/advisor/spool.db\n"
					     "listen: 0.0.0.0:6830\n",
					     &c, err, sizeof(err)), 0);
	assert_int_equal(c.storage, ADVCONF_MARIADB);
	assert_string_equal(c.host, "db1");
	assert_int_equal(c.port, 3307);
	assert_string_equal(c.password, "secret");
	assert_string_equal(c.listen, "0.0.0.0:6830");
	assert_string_equal(c.spool, "/var/spool/advisor/spool.db");
	/* Connection caps (issue 20): defaults, then given. */
	assert_int_equal(c.conn_max, 4096);
	assert_int_equal(c.conn_per_user, 64);
	assert_int_equal(c.conn_reserve, 64);
	assert_int_equal(c.conn_unauth, 256);
	assert_int_equal(c.auth_timeout_ms, 2000);
	assert_int_equal(advconf_load_string("advisord.conf",
					     "connections:\n"
					     "  max: 500\n"
					     "  per_user: 8\n"
					     "  reserve: 10\n"
					     "  unauthenticated: 32\n"
					     "  auth_timeout_ms: 700\n",
					     &c, err, sizeof(err)), 0);
	assert_int_equal(c.conn_max, 500);
	assert_int_equal(c.conn_per_user, 8);
	assert_int_equal(c.conn_reserve, 10);
	assert_int_equal(c.conn_unauth, 32);
	assert_int_equal(c.auth_timeout_ms, 700);
	/* The name TCP credentials are bound to (issue 20). */
	assert_string_equal(c.name, "");
	assert_int_equal(advconf_load_string("advisord.conf", "name: svc1.example.org:6830\n",
					     &c, err, sizeof(err)), 0);
	assert_string_equal(c.name, "svc1.example.org:6830");
}

static void test_conf_errors(void **st)
{
	(void)st;
	expect_error("storage:\n  type: postgres\n", ADVCONF_ERR_VALUE,
		     "advisord.conf:2:9: 'type' must be sqlite or mariadb, got 'postgres'");
	expect_error("storage:\n  type: mariadb\n  user: a\n  database: b\n", ADVCONF_ERR_VALUE,
		     "advisord.conf:2:3: storage type mariadb needs 'host' or 'socket'");
	expect_error("storage:\n  type: mariadb\n  host: h\n", ADVCONF_ERR_VALUE,
		     "advisord.conf:2:3: storage type mariadb needs 'user' and 'database'");
	expect_error("listen: 6830\n", ADVCONF_ERR_VALUE,
		     "advisord.conf:1:9: 'listen': '6830': expected HOST:PORT (IPv6 as [ADDR]:PORT)");
	expect_error("storage:\n  port: 99999\n", ADVCONF_ERR_VALUE,
		     "advisord.conf:2:9: 'port' must be between 1 and 65535, got 99999");
	expect_error("storage:\n  passwd: x\n", ADVCONF_ERR_SCHEMA,
		     "advisord.conf:2:3: unknown key 'passwd' in 'storage'; expected one of: type, "
		     "path, host, socket, port, user, password, password_file, database, spool");
	expect_error("storage:\n  password: a\n  password_file: /x\n", ADVCONF_ERR_VALUE,
		     "advisord.conf:3:18: give 'password' or 'password_file', not both");
	expect_error("connections:\n  per_user: 0\n", ADVCONF_ERR_VALUE,
		     "advisord.conf:2:13: 'per_user' must be between 1 and 1000000, got 0");
	expect_error("connections:\n  idle: 5\n", ADVCONF_ERR_SCHEMA,
		     "advisord.conf:2:3: unknown key 'idle' in 'connections'; expected one of: max, "
		     "per_user, reserve, unauthenticated, auth_timeout_ms");
	expect_error("name: two words\n", ADVCONF_ERR_VALUE,
		     "advisord.conf:1:7: 'name': 'two words': 1 to 255 printable characters without spaces");
	expect_error("storage: [1]\n", ADVCONF_ERR_SCHEMA,
		     "advisord.conf:1:10: expected a mapping for 'storage', got a list");
	expect_error("storage:\n  type: mariadb\n type: x\n", ADVCONF_ERR_SYNTAX,
		     "advisord.conf:3:2: YAML syntax error: did not find expected key (while parsing a block mapping at line 1, column 1)");
}

/* A password in a file others may read: refused, with the chmod that fixes it. */
static void test_conf_mode(void **st)
{
	char dir[] = "/tmp/advconf.XXXXXX", path[128], pw[128], err[512];
	const char *text = "storage:\n  type: mariadb\n  socket: /run/mysqld/mysqld.sock\n"
			   "  user: advisor\n  password: secret\n  database: advisor\n";
	struct advconf c;
	FILE *f;

	(void)st;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/advisord.conf", dir);
	snprintf(pw, sizeof(pw), "%s/pw", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, 0644);
	assert_int_equal(advconf_load(path, &c, err, sizeof(err)), ADVCONF_ERR_MODE);
	assert_non_null(strstr(err, "mode 0644"));
	assert_non_null(strstr(err, "chmod 600"));
	assert_string_equal(c.password, "");
	chmod(path, 0600);
	assert_int_equal(advconf_load(path, &c, err, sizeof(err)), 0);
	assert_string_equal(c.password, "secret");

	/* password_file: the same rule for the file that holds it. */
	f = fopen(pw, "w");
	assert_non_null(f);
	fputs("s3cret\n", f);
	fclose(f);
	chmod(pw, 0640);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "storage:\n  type: mariadb\n  host: db\n  user: a\n  database: b\n"
		   "  password_file: %s\n", pw);
	fclose(f);
	chmod(path, 0644);   /* no secret in it: may be world-readable */
	assert_int_equal(advconf_load(path, &c, err, sizeof(err)), ADVCONF_ERR_MODE);
	assert_non_null(strstr(err, pw));
	chmod(pw, 0600);
	assert_int_equal(advconf_load(path, &c, err, sizeof(err)), 0);
	assert_string_equal(c.password, "s3cret");
	unlink(pw);
	unlink(path);
	rmdir(dir);
}

/*
 * Issue 20: an advisord.conf others may write, or one that another user
 * owns, is refused even without a password in it, and so is a
 * password_file another user owns; each message names the fix.
 */
static void test_conf_trust(void **st)
{
	char dir[] = "/tmp/advconf.XXXXXX", path[128], pw[128], err[512];
	struct advconf c;
	FILE *f;

	(void)st;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/advisord.conf", dir);
	snprintf(pw, sizeof(pw), "%s/pw", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("listen: 127.0.0.1:6830\n", f);
	fclose(f);
	chmod(path, 0646);
	assert_int_equal(advconf_load(path, &c, err, sizeof(err)), ADVCONF_ERR_MODE);
	assert_non_null(strstr(err, "mode 0646"));
	assert_non_null(strstr(err, "chmod go-w"));
	chmod(path, 0664);
	assert_int_equal(advconf_load(path, &c, err, sizeof(err)), ADVCONF_ERR_MODE);
	chmod(path, 0644);
	assert_int_equal(advconf_load(path, &c, err, sizeof(err)), 0);
	assert_string_equal(c.listen, "127.0.0.1:6830");

	f = fopen(pw, "w");
	assert_non_null(f);
	fputs("s3cret\n", f);
	fclose(f);
	chmod(pw, 0600);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "storage:\n  type: mariadb\n  host: db\n  user: a\n  database: b\n"
		   "  password_file: %s\n", pw);
	fclose(f);
	assert_int_equal(advconf_load(path, &c, err, sizeof(err)), 0);
	/* Owned by another user (nobody's uid): only root can give a file away. */
	if (geteuid() == 0) {
		assert_int_equal(chown(pw, 65534, (gid_t)-1), 0);
		assert_int_equal(advconf_load(path, &c, err, sizeof(err)), ADVCONF_ERR_OWNER);
		assert_non_null(strstr(err, pw));
		assert_non_null(strstr(err, "belongs to uid 65534"));
		assert_non_null(strstr(err, "chown 0"));
		assert_string_equal(c.password, "");
		assert_int_equal(chown(pw, 0, (gid_t)-1), 0);
		assert_int_equal(chown(path, 65534, (gid_t)-1), 0);
		assert_int_equal(advconf_load(path, &c, err, sizeof(err)), ADVCONF_ERR_OWNER);
		assert_non_null(strstr(err, "configuration) belongs to uid 65534"));
		assert_int_equal(chown(path, 0, (gid_t)-1), 0);
		assert_int_equal(advconf_load(path, &c, err, sizeof(err)), 0);
	}
	unlink(pw);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_conf_values),
		cmocka_unit_test(test_conf_errors),
		cmocka_unit_test(test_conf_mode),
		cmocka_unit_test(test_conf_trust),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
