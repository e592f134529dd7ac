/*
 * advconf.c - advisord.conf (issue 13), read with the same libyaml loader
 * and FILE:LINE:COL messages as the catalog and the policy (yamlutil.c).
 *
 * Like slurmdbd.conf, the file may hold the database password, so advisord
 * refuses one that holds a password and that group or others may read or
 * write (slurmdbd insists on mode 0600 and its owner for the same reason):
 * the message names the file, its mode and the chmod that fixes it.  A
 * password_file gets the same check, and is read whole, trailing newline
 * stripped, as mysql's option files and Docker secrets are written.
 * Whoever may rewrite advisord.conf chooses where the decisions go and
 * where the password is sent, so (issue 20), as sshd's StrictModes, the
 * file is refused when group or others may write it or when it belongs
 * to a user other than advisord's own, its system user (issue 30) or root; a password_file another
 * user owns is refused too (that user may read it, whatever its mode).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advconf.h"
#include "config/yamlutil.h"
#include "util.h"
#include "wire/auth.h"
#include "wire/endpoint.h"

#define ADVCONF_DEFAULT_PORT 3306
#define ADVCONF_SECRET_MODE_BITS (S_IRWXG | S_IRWXO)

static const char *const advconf_top_keys[] = { "storage", "listen", "munge_socket", "name",
						 "connections", NULL };
static const char *const advconf_conn_keys[] = {
	"max", "per_user", "reserve", "unauthenticated", "auth_timeout_ms", NULL
};
static const char *const advconf_storage_keys[] = {
	"type", "path", "host", "socket", "port", "user", "password", "password_file",
	"database", "spool", NULL
};

static const char *const advconf_errors[ADVCONF_ERR_COUNT] = {
	[ADVCONF_OK] = "success",
	[ADVCONF_ERR_IO] = "cannot read the file",
	[ADVCONF_ERR_SYNTAX] = "YAML syntax error",
	[ADVCONF_ERR_SCHEMA] = "unknown key or wrong type",
	[ADVCONF_ERR_VALUE] = "invalid value",
	[ADVCONF_ERR_DUPLICATE] = "duplicate key",
	[ADVCONF_ERR_NOMEM] = "out of memory",
	[ADVCONF_ERR_MODE] = "holds a password that others may read, or others may write it",
	[ADVCONF_ERR_OWNER] = "belongs to another user",
};
/* A code left out is a NULL row, which test_tables finds (issue 27). */
_Static_assert(ADV_ARRAY_SIZE(advconf_errors) == ADVCONF_ERR_COUNT, "a message for each error");

const char *advconf_strerror(int code)
{
	if (code < 0 || (size_t)code >= ADV_ARRAY_SIZE(advconf_errors))
		return "unknown advconf error";
	return advconf_errors[code];
}

void advconf_defaults(struct advconf *c)
{
	memset(c, 0, sizeof(*c));
	c->storage = ADVCONF_SQLITE;
	c->port = ADVCONF_DEFAULT_PORT;
	c->conn_max = 4096;
	c->conn_per_user = 64;
	c->conn_reserve = 64;
	c->conn_unauth = 256;
	c->auth_timeout_ms = 2000;
}

/* A file that holds a secret: owner only. */
static int secret_mode_ok(const char *path, const char *what, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		adv_snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
		return ADVCONF_ERR_IO;
	}
	if (st.st_mode & ADVCONF_SECRET_MODE_BITS) {
		adv_snprintf(err, errlen,
			     "%s holds %s and is open to group or others (mode %04o): "
			     "chmod 600 %s", path, what, (unsigned)(st.st_mode & 07777), path);
		return ADVCONF_ERR_MODE;
	}
	return ADVCONF_OK;
}

/*
 * uid is the system user advisord.service runs the daemon as (issue 30):
 * the package gives it advisord.conf, and root's `advisord --check-config`
 * reads that file as the daemon does.
 */
static bool daemon_user_owns(uid_t uid)
{
	struct passwd pw, *r = NULL;
	char buf[1024];

	return getpwnam_r(ADV_DAEMON_USER, &pw, buf, sizeof(buf), &r) == 0 && r && pw.pw_uid == uid;
}

/*
 * A file advisord trusts: owned by advisord's user, the daemon's system
 * user (ADV_DAEMON_USER) or root, and no one else may write it.  The messages name the command that fixes each.
 */
static int trusted_file(const char *path, const char *what, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		adv_snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
		return ADVCONF_ERR_IO;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0 && !daemon_user_owns(st.st_uid)) {
		adv_snprintf(err, errlen,
			     "%s (%s) belongs to uid %u, who may rewrite it: advisord (uid %u) "
			     "reads it only from itself or root: chown %u %s", path, what,
			     (unsigned)st.st_uid, (unsigned)geteuid(), (unsigned)geteuid(), path);
		return ADVCONF_ERR_OWNER;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		adv_snprintf(err, errlen,
			     "%s (%s) may be written by group or others (mode %04o): chmod go-w %s",
			     path, what, (unsigned)(st.st_mode & 07777), path);
		return ADVCONF_ERR_MODE;
	}
	return ADVCONF_OK;
}

static int read_password_file(struct yamlutil_doc *d, const yaml_node_t *node, const char *path,
			      struct advconf *c, bool check_mode)
{
	char buf[ADVCONF_STR_MAX + 2];
	ssize_t n;
	int fd, rc;

	if (check_mode && ((rc = trusted_file(path, "password_file", d->err, d->errlen)) != 0 ||
			   (rc = secret_mode_ok(path, "a password", d->err, d->errlen)) != 0))
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return yamlutil_fail(d, node, YAMLUTIL_ERR_IO, "password_file %s: %s", path,
				     strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return yamlutil_fail(d, node, YAMLUTIL_ERR_IO, "password_file %s: %s", path,
				     strerror(errno));
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	if (n == 0 || (size_t)n >= sizeof(c->password))
		return yamlutil_fail(d, node, YAMLUTIL_ERR_VALUE, "password_file %s is %s", path,
				     n == 0 ? "empty" : "longer than 255 bytes");
	memcpy(c->password, buf, (size_t)n + 1);
	c->password_from_file = true;
	return YAMLUTIL_OK;
}

/* check_mode: advconf_load(), which also reads password_file; the string
 * form (tests, fuzzing) records the path and opens nothing. */
static int parse_storage(struct yamlutil_doc *d, const yaml_node_t *map, struct advconf *c,
			 bool check_mode)
{
	char type[32] = "sqlite", pwfile[ADVCONF_STR_MAX] = "";
	yaml_node_t *n;
	int rc;

	if ((rc = yamlutil_expect(d, map, YAML_MAPPING_NODE, "'storage'")) ||
	    (rc = yamlutil_check_keys(d, map, advconf_storage_keys, NULL, "'storage'")) ||
	    (rc = yamlutil_string(d, map, "type", type, sizeof(type))) ||
	    (rc = yamlutil_string(d, map, "path", c->path, sizeof(c->path))) ||
	    (rc = yamlutil_string(d, map, "host", c->host, sizeof(c->host))) ||
	    (rc = yamlutil_string(d, map, "socket", c->socket, sizeof(c->socket))) ||
	    (rc = yamlutil_int(d, map, "port", 1, 65535, &c->port)) ||
	    (rc = yamlutil_string(d, map, "user", c->user, sizeof(c->user))) ||
	    (rc = yamlutil_string(d, map, "password", c->password, sizeof(c->password))) ||
	    (rc = yamlutil_string(d, map, "password_file", pwfile, sizeof(pwfile))) ||
	    (rc = yamlutil_string(d, map, "database", c->database, sizeof(c->database))) ||
	    (rc = yamlutil_string(d, map, "spool", c->spool, sizeof(c->spool))))
		return rc;
	n = yamlutil_get(d, map, "type");
	if (!strcmp(type, "sqlite")) {
		c->storage = ADVCONF_SQLITE;
	} else if (!strcmp(type, "mariadb") || !strcmp(type, "mysql")) {
		c->storage = ADVCONF_MARIADB;
	} else {
		return yamlutil_fail(d, n, YAMLUTIL_ERR_VALUE,
				     "'type' must be sqlite or mariadb, got '%s'", type);
	}
	if (c->password[0] && pwfile[0])
		return yamlutil_fail(d, yamlutil_get(d, map, "password_file"), YAMLUTIL_ERR_VALUE,
				     "give 'password' or 'password_file', not both");
	adv_strlcpy(c->password_file, pwfile, sizeof(c->password_file));
	if (pwfile[0] && check_mode &&
	    (rc = read_password_file(d, yamlutil_get(d, map, "password_file"), pwfile, c, true)))
		return rc;
	if (c->storage == ADVCONF_MARIADB) {
		if (!c->host[0] && !c->socket[0])
			return yamlutil_fail(d, map, YAMLUTIL_ERR_VALUE,
					     "storage type mariadb needs 'host' or 'socket'");
		if (!c->user[0] || !c->database[0])
			return yamlutil_fail(d, map, YAMLUTIL_ERR_VALUE,
					     "storage type mariadb needs 'user' and 'database'");
	}
	return YAMLUTIL_OK;
}

static int parse(struct yamlutil_doc *d, struct advconf *c, bool check_mode)
{
	yaml_node_t *root = yamlutil_root(d), *n;
	struct endpoint ep;
	char why[160];
	int rc;

	if (!root)
		return YAMLUTIL_OK;
	if ((rc = yamlutil_expect(d, root, YAML_MAPPING_NODE, "advisord.conf")) ||
	    (rc = yamlutil_check_keys(d, root, advconf_top_keys, NULL, "advisord.conf")) ||
	    (rc = yamlutil_string(d, root, "listen", c->listen, sizeof(c->listen))) ||
	    (rc = yamlutil_string(d, root, "munge_socket", c->munge_socket,
				  sizeof(c->munge_socket))) ||
	    (rc = yamlutil_string(d, root, "name", c->name, sizeof(c->name))))
		return rc;
	if (c->name[0] && !auth_name_ok(c->name))
		return yamlutil_fail(d, yamlutil_get(d, root, "name"), YAMLUTIL_ERR_VALUE,
				     "'name': '%s': 1 to 255 printable characters without spaces",
				     c->name);
	n = yamlutil_get(d, root, "listen");
	if (c->listen[0] && endpoint_split(c->listen, &ep, why, sizeof(why)) != 0)
		return yamlutil_fail(d, n, YAMLUTIL_ERR_VALUE, "'listen': %s", why);
	n = yamlutil_get(d, root, "storage");
	if (n && (rc = parse_storage(d, n, c, check_mode)))
		return rc;
	n = yamlutil_get(d, root, "connections");
	if (n && ((rc = yamlutil_expect(d, n, YAML_MAPPING_NODE, "'connections'")) ||
		  (rc = yamlutil_check_keys(d, n, advconf_conn_keys, NULL, "'connections'")) ||
		  (rc = yamlutil_int(d, n, "max", 16, 1000000, &c->conn_max)) ||
		  (rc = yamlutil_int(d, n, "per_user", 1, 1000000, &c->conn_per_user)) ||
		  (rc = yamlutil_int(d, n, "reserve", 0, 100000, &c->conn_reserve)) ||
		  (rc = yamlutil_int(d, n, "unauthenticated", 1, 1000000, &c->conn_unauth)) ||
		  (rc = yamlutil_int(d, n, "auth_timeout_ms", 100, 60000, &c->auth_timeout_ms))))
		return rc;
	return YAMLUTIL_OK;
}

int advconf_load(const char *path, struct advconf *c, char *err, size_t errlen)
{
	struct yamlutil_doc d;
	int rc;

	advconf_defaults(c);
	memset(&d, 0, sizeof(d));
	rc = yamlutil_load_file(&d, path, err, errlen);
	/* Trusted before anything it names is opened. */
	if (rc == YAMLUTIL_OK)
		rc = trusted_file(path, "advisord's configuration", err, errlen);
	if (rc == YAMLUTIL_OK)
		rc = parse(&d, c, true);
	yamlutil_free(&d);
	if (rc == YAMLUTIL_OK && c->password[0] && !c->password_from_file)
		rc = secret_mode_ok(path, "a password", err, errlen);
	if (rc != ADVCONF_OK)
		memset(c->password, 0, sizeof(c->password));
	return rc;
}

int advconf_load_string(const char *name, const char *text, struct advconf *c, char *err,
			size_t errlen)
{
	struct yamlutil_doc d;
	int rc;

	advconf_defaults(c);
	memset(&d, 0, sizeof(d));
	rc = yamlutil_load_string(&d, name, text, err, errlen);
	if (rc == YAMLUTIL_OK)
		rc = parse(&d, c, false);
	yamlutil_free(&d);
	return rc;
}
