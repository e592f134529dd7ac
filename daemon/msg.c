/*
 * msg.c - one-line log messages to stderr or syslog.
 *
 * Under systemd stderr goes to the journal, so the default needs no syslog;
 * each line is written with a single write() so lines from worker threads
 * never interleave.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"

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
	char line[2048];
	va_list ap;
	int n, off;

	va_start(ap, fmt);
	if (msg_syslog) {
		vsyslog(level, fmt, ap);
		va_end(ap);
		return;
	}
	off = snprintf(line, sizeof(line), "advisord: %s", level_name(level));
	if (off < 0)
		off = 0;
	n = vsnprintf(line + off, sizeof(line) - (size_t)off - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	n += off;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* Nowhere left to report that stderr is gone. */
	}
}
