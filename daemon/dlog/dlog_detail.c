/*
 * dlog_detail.c - a decision's findings and sources as lines of the
 * decision log (issue 21).  One line per item, fields separated by tabs,
 * as tab-separated values are usually written: the texts are the engine's
 * one-line messages, so a tab or a line end in one is only a space lost,
 * never a field or a line broken.  The field is bounded (dlog_rec.h); what
 * does not fit is counted on a last line "+N", so a reader can say how
 * much was left out rather than show a cut message.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlog_detail.h"
#include "util.h"

/* Room kept for the "+N" line: '+', ten digits, the line end and the NUL. */
#define LEFT_LINE_MAX 13

static size_t line_len(const char *const *fields, size_t n)
{
	size_t len = n;   /* the tabs between fields and the line end */

	for (size_t i = 0; i < n; i++)
		len += fields[i] ? strlen(fields[i]) : 0;
	return len;
}

void dlog_detail_add(char *buf, size_t cap, unsigned *left, const char *const *fields, size_t n)
{
	size_t used = strnlen(buf, cap), need = line_len(fields, n);
	char *p;

	if (*left || n == 0 || cap < LEFT_LINE_MAX || used + need + LEFT_LINE_MAX > cap) {
		(*left)++;
		return;
	}
	p = buf + used;
	for (size_t i = 0; i < n; i++) {
		for (const char *s = fields[i] ? fields[i] : ""; *s; s++)
			*p++ = (*s == '\t' || *s == '\n' || *s == '\r') ? ' ' : *s;
		*p++ = i + 1 < n ? '\t' : '\n';
	}
	*p = '\0';
}

void dlog_detail_finish(char *buf, size_t cap, unsigned left)
{
	size_t used = strnlen(buf, cap);

	if (left && used + LEFT_LINE_MAX <= cap)
		adv_snprintf(buf + used, cap - used, "+%u\n", left);
}

size_t dlog_detail_next(const char **p, char *line, size_t len, char **fields, size_t max,
			unsigned *left)
{
	while (**p) {
		size_t n = strcspn(*p, "\n"), k = 0;
		char *s;

		adv_snprintf(line, len, "%.*s", (int)n, *p);
		*p += n + ((*p)[n] == '\n');
		if (line[0] == '+') {
			char *end;
			unsigned long v = strtoul(line + 1, &end, 10);

			if (end != line + 1 && !*end)
				*left += (unsigned)v;
			continue;
		}
		if (!line[0] || max == 0)
			continue;
		for (s = line; k < max; ) {
			fields[k++] = s;
			if (!(s = strchr(s, '\t')))
				break;
			*s++ = '\0';
		}
		return k;
	}
	return 0;
}
