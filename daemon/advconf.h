/*
 * advconf.h - advisord's own configuration file (issue 13): where the
 * decision log lives (SQLite, or the site's MariaDB with a local spool) and
 * the TCP address to listen on.  It may hold database credentials, so it is
 * root's alone, as slurmdbd.conf is.
 *
 *   storage:
 *     type: mariadb            # or sqlite (the default, with path:)
 *     path: FILE               # sqlite: the database (default: advisord --db)
 *     host: 127.0.0.1          # or socket: /run/mysqld/mysqld.sock
 *     port: 3306
 *     user: advisor
 *     password: secret         # or password_file: FILE
 *     database: advisor
 *     spool: FILE              # mariadb: SQLite spool while the server is down
 *   listen: 0.0.0.0:6830       # MUNGE-authenticated TCP (optional)
 *   munge_socket: PATH         # munged's socket (default: libmunge's)
 *   name: NAME                 # the daemon's name in TCP credentials (issue 20;
 *                              # default: this host's name and the listen port)
 *   connections:               # caps (issue 20)
 *     max: 4096                # identified connections in all
 *     per_user: 64             # of one uid
 *     reserve: 64              # above max, for root, slurm and the policy's admins
 *     unauthenticated: 256     # TCP connections whose credential has not verified
 *     auth_timeout_ms: 2000    # time a TCP connection has to present a good credential
 */
#ifndef ADVISOR_ADVCONF_H
#define ADVISOR_ADVCONF_H

#include <stdbool.h>
#include <stddef.h>

#define ADVCONF_STR_MAX 256

enum advconf_storage { ADVCONF_SQLITE = 0, ADVCONF_MARIADB };

enum advconf_err {
	ADVCONF_OK = 0,
	ADVCONF_ERR_IO,
	ADVCONF_ERR_SYNTAX,
	ADVCONF_ERR_SCHEMA,
	ADVCONF_ERR_VALUE,
	ADVCONF_ERR_DUPLICATE,
	ADVCONF_ERR_NOMEM,
	ADVCONF_ERR_MODE,          /* holds a password and others may read it, or
				      group or others may write it */
	ADVCONF_ERR_OWNER,         /* it or its password_file belongs to another user */
	ADVCONF_ERR_COUNT          /* sizes advconf_strerror's table; no error */
};

struct advconf {
	enum advconf_storage storage;
	char path[ADVCONF_STR_MAX];        /* sqlite database; "" = advisord's --db */
	char host[ADVCONF_STR_MAX];        /* mariadb; "" with socket set */
	char socket[ADVCONF_STR_MAX];      /* mariadb unix socket */
	int port;                          /* 0 = 3306 */
	char user[ADVCONF_STR_MAX];
	char password[ADVCONF_STR_MAX];    /* read from password_file when given */
	bool password_from_file;
	char password_file[ADVCONF_STR_MAX];
	char database[ADVCONF_STR_MAX];
	char spool[ADVCONF_STR_MAX];       /* "" = next to the default database */
	char listen[ADVCONF_STR_MAX];      /* "ADDR:PORT", "" = no TCP */
	char munge_socket[ADVCONF_STR_MAX];
	char name[ADVCONF_STR_MAX];        /* "" = HOSTNAME:PORT of listen */
	int conn_max, conn_per_user, conn_reserve, conn_unauth, auth_timeout_ms;
};

/* Defaults: SQLite, no TCP. */
void advconf_defaults(struct advconf *c);
/*
 * Reads path into c (defaults first).  Errors name FILE:LINE:COL; a file
 * that holds a password (inline) and is readable or writable by group or
 * others is refused (ADVCONF_ERR_MODE), as is a password_file that is; so
 * is a file that group or others may write (ADVCONF_ERR_MODE), and the
 * file or its password_file when it belongs to a user other than
 * advisord's or root (ADVCONF_ERR_OWNER).
 */
int advconf_load(const char *path, struct advconf *c, char *err, size_t errlen);
/* The same from a string (tests, fuzzing): no mode check, and a
 * password_file is recorded, not read. */
int advconf_load_string(const char *name, const char *text, struct advconf *c,
			char *err, size_t errlen);
const char *advconf_strerror(int code);
#endif
