/*
 * util.h - small string and number helpers shared by every part.
 */
#ifndef ADVISOR_UTIL_H
#define ADVISOR_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Copies at most len-1 bytes and always terminates; returns strlen(src). */
size_t adv_strlcpy(char *dst, const char *src, size_t len);
/* Appends like strlcat; returns the length it tried to create. */
size_t adv_strlcat(char *dst, const char *src, size_t len);
/* snprintf that never overflows and returns the bytes written (<= len-1). */
size_t adv_snprintf(char *dst, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
size_t adv_vsnprintf(char *dst, size_t len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
bool adv_streq_nocase(const char *a, const char *b);
/* Strict integer and double parsing: the whole string, no overflow. */
int adv_parse_long(const char *s, long *out);
int adv_parse_double(const char *s, double *out);
char *adv_strdup(const char *s);
/* The noun for a count, for messages: adv_plural(1, "node", "nodes") is
 * "node", any other count "nodes" ("1 node", "0 GPUs", "2 processes"). */
const char *adv_plural(long n, const char *one, const char *many);
/* Milliseconds on the monotonic clock, for deadlines. */
long long adv_now_ms(void);

/*
 * Output safety (issue 20): the one rule for every printer.
 *
 * adv_utf8_seq() is the length of the well-formed UTF-8 sequence at s
 * (RFC 3629: 1 to 4 bytes, no overlong forms, no surrogates, nothing above
 * U+10FFFF), 0 when s does not start one or at the terminating NUL.
 *
 * adv_escape_text() copies s to dst (len bytes, always terminated) with
 * every byte a terminal could act on written as the four characters \xNN
 * (NN its value in lower-case hex): the C0 controls (newline and tab
 * included), DEL, both bytes of a C1 control in UTF-8 (U+0080..U+009F) and
 * each byte that is not part of well-formed UTF-8.  Everything else, other
 * languages included, is copied as is.  It cuts only between whole
 * characters or escapes, and returns the length the whole escaped text
 * needs (like snprintf).  adv_text_needs_escape() says whether it would
 * change s; adv_text_safe() is s itself when nothing needs escaping, else
 * its escaped form in buf; ADV_TEXT() gives that a buffer of its own for
 * the rest of the enclosing block: fprintf(f, "%s", ADV_TEXT(name)).
 *
 * adv_json_utf8() makes a JSON text as json-c writes it (json-c escapes
 * the C0 controls but copies every other byte) valid UTF-8 and inert on a
 * terminal: each byte that is not part of well-formed UTF-8, DEL and each
 * C1 control become \u00NN, the byte's own value read as Latin-1 (0xff is
 * U+00FF).  Bytes >= 0x80 and DEL occur in json-c's output only inside
 * strings, where such an escape is valid.  Same return as
 * adv_escape_text(); adv_json_utf8_dup() is a malloc'd copy, NULL when out
 * of memory.
 */
size_t adv_utf8_seq(const char *s);
bool adv_text_needs_escape(const char *s);
size_t adv_escape_text(char *dst, size_t len, const char *s);
const char *adv_text_safe(const char *s, char *buf, size_t len);
#define ADV_TEXT_MAX 4096
#define ADV_TEXT(s) adv_text_safe((s), (char[ADV_TEXT_MAX]){ 0 }, ADV_TEXT_MAX)
size_t adv_json_utf8(char *dst, size_t len, const char *json);
char *adv_json_utf8_dup(const char *json);

#define ADV_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GIB (1024.0 * 1024.0 * 1024.0)

#endif
