/*
 * dlog_spool.h - the decision log's store in the site's MariaDB, through a
 * local SQLite spool while the server is away (dlog_spool.c, issue 13).
 */
#ifndef ADVISOR_DLOG_SPOOL_H
#define ADVISOR_DLOG_SPOOL_H

#include <stddef.h>

#include "advconf.h"
#include "dlog_store.h"

extern const struct dlog_store_ops dlog_spool_ops;

/*
 * Opens the store for dlog_spool_ops with conf's storage keys, env for its
 * reports: the spool conf->spool (or db_path with ".spool" appended), and
 * the central database, its schema migrated now.  A server that is down is
 * not fatal (records are spooled until it is back); a refused login, a
 * missing database, a schema newer than this daemon's or a spool that
 * cannot be opened are: -1 with err.
 */
int dlog_spool_open(const struct advconf *conf, const char *db_path, const struct dlog_env *env,
		    char *err, size_t errlen);
/* The spool's file, for `advisorctl status` (NULL when not open). */
const char *dlog_spool_file(void);

#endif
