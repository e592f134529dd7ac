/*
 * dlog_detail.h - the text of a decision's findings and sources as the
 * decision log keeps them (issue 21): lines of tab-separated fields in a
 * bounded field of struct dlog_rec, cut at a line, with a last line "+N"
 * that counts the lines left out.
 */
#ifndef ADVISOR_DLOG_DETAIL_H
#define ADVISOR_DLOG_DETAIL_H

#include <stddef.h>

/*
 * Appends a line of the n fields (NULL reads as "") to buf, a string of
 * cap bytes.  Tabs and line ends in a field become spaces.  A line that
 * does not fit beside room for the "+N" line, and every line after it, is
 * only counted in *left.
 */
void dlog_detail_add(char *buf, size_t cap, unsigned *left, const char *const *fields, size_t n);
/* After the last line: the "+N" line when *left lines were left out. */
void dlog_detail_finish(char *buf, size_t cap, unsigned left);
/*
 * The next line of *p split into at most max fields, pointing into line (a
 * copy of len bytes); *p moves past it.  Returns the number of fields, 0
 * at the end.  A "+N" line adds N to *left and is skipped.
 */
size_t dlog_detail_next(const char **p, char *line, size_t len, char **fields, size_t max,
			unsigned *left);

#endif
