/*
 * msg.h - the daemon's own log: stderr (systemd's journal) or syslog.
 */
#ifndef ADVISOR_MSG_H
#define ADVISOR_MSG_H

#include <stdbool.h>
#include <syslog.h>

void msg_open(const char *ident, bool use_syslog);
void msg_close(void);
/* level is a syslog priority (LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG). */
void msg_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
