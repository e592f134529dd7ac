/*
 * msg.c - one-line log messages to stderr or syslog.
 *
 * Under systemd stderr goes to the journal, so the default needs no syslog;
 * each line is written with a single write() so lines from worker threads
 * never interleave.  A message may quote a client (a TCP peer's error, a
 * user's name): it is escaped by util.h's rule (issue 20), so one line
 * stays one line and carries nothing a terminal acts on.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"
#include "util.h"

static bool msg_syslog;

void msg_open(const char *ident, bool use_syslog)
{
	msg_syslog = use_syslog;
	if (use_syslog)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void msg_close(void)
{
	if (msg_syslog)
		closelog();
	msg_syslog = false;
}

static const char *level_name(int level)
{
	switch (level) {
	case LOG_ERR: return "error: ";
	case LOG_WARNING: return "warning: ";
	default: return "";
	}
}

void msg_log(int level, const char *fmt, ...)
{
	char raw[2048], line[2048];
	va_list ap;
	size_t n, off;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (msg_syslog) {
		syslog(level, "%s", ADV_TEXT(raw));
		return;
	}
	off = adv_snprintf(line, sizeof(line), "advisord: %s", level_name(level));
	n = adv_escape_text(line + off, sizeof(line) - off - 1, raw);
	n += off;
	if (n > sizeof(line) - 2)
		n = strlen(line);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0) {
		/* Nowhere left to report that stderr is gone. */
	}
}
