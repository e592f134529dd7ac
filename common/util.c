/*
 * util.c - small string and number helpers shared by every part.
 *
 * Strict parsers here are the only place numbers from users, YAML and the
 * environment are converted, so "8x", "" and overflow are refused the same
 * way everywhere.
 *
 * The escaping of text and JSON output (issue 20) is written here once, so
 * advisorctl, the --log-json lines and the plugin's lines follow one rule:
 * UTF-8 well-formedness as RFC 3629 section 4 and Unicode's Table 3-7
 * define it, controls as ECMA-48 names them (C0, DEL, C1).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util.h"

size_t adv_strlcpy(char *dst, const char *src, size_t len)
{
	size_t n = strlen(src);

	if (len > 0) {
		size_t c = n < len - 1 ? n : len - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

size_t adv_strlcat(char *dst, const char *src, size_t len)
{
	size_t d = strnlen(dst, len);

	if (d == len)
		return len + strlen(src);
	return d + adv_strlcpy(dst + d, src, len - d);
}

size_t adv_vsnprintf(char *dst, size_t len, const char *fmt, va_list ap)
{
	int n;

	if (len == 0)
		return 0;
	n = vsnprintf(dst, len, fmt, ap);
	if (n < 0) {
		dst[0] = '\0';
		return 0;
	}
	return (size_t)n < len ? (size_t)n : len - 1;
}

size_t adv_snprintf(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = adv_vsnprintf(dst, len, fmt, ap);
	va_end(ap);
	return n;
}

bool adv_streq_nocase(const char *a, const char *b)
{
	return a && b && strcasecmp(a, b) == 0;
}

int adv_parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int adv_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

char *adv_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

const char *adv_plural(long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

long long adv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

size_t adv_utf8_seq(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	/* Table 3-7: the second byte's range excludes overlongs (E0, F0),
	 * surrogates (ED) and code points above U+10FFFF (F4). */
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	/* A NUL is no continuation byte: the checks stop at the string's end. */
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* The bytes at s to escape: 0 when the character there is printed as is. */
static size_t text_bad(const unsigned char *s, size_t *keep)
{
	size_t n = adv_utf8_seq((const char *)s);

	*keep = n;
	if (n == 0)
		return 1;
	if (n == 1 && (s[0] < 0x20 || s[0] == 0x7f))
		return 1;
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 2;
	/* The bidirectional controls, which reorder what a terminal shows
	 * ("Trojan Source", CVE-2021-42574): U+061C, U+200E, U+200F,
	 * U+202A-U+202E, U+2066-U+2069. */
	if (n == 2 && s[0] == 0xd8 && s[1] == 0x9c)
		return 2;
	if (n == 3 && s[0] == 0xe2 &&
	    ((s[1] == 0x80 && (s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xaa && s[2] <= 0xae))) ||
	     (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)))
		return 3;
	return 0;
}

bool adv_text_needs_escape(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t keep;

	while (s && *s) {
		if (text_bad(s, &keep))
			return true;
		s += keep;
	}
	return false;
}

size_t adv_escape_text(char *dst, size_t len, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t out = 0;
	bool full = len == 0;

	while (*s) {
		size_t keep, bad = text_bad(s, &keep);
		size_t step = bad ? 4 * bad : keep;

		if (!full && out + step < len) {
			if (bad)
				for (size_t i = 0; i < bad; i++)
					snprintf(dst + out + 4 * i, 5, "\\x%02x", s[i]);
			else
				memcpy(dst + out, s, keep);
		} else {
			full = true;
		}
		if (!full)
			dst[out + step] = '\0';
		out += step;
		s += bad ? bad : keep;
	}
	if (len > 0 && out < len)
		dst[out] = '\0';
	return out;
}

const char *adv_text_safe(const char *s, char *buf, size_t len)
{
	if (!s || !adv_text_needs_escape(s))
		return s;
	adv_escape_text(buf, len, s);
	return buf;
}

size_t adv_json_utf8(char *dst, size_t len, const char *json)
{
	const unsigned char *s = (const unsigned char *)(json ? json : "");
	size_t out = 0;
	bool full = len == 0;

	while (*s) {
		size_t n = adv_utf8_seq((const char *)s);
		/* The byte read as Latin-1, or the C1 control's code point. */
		int cp = n == 0 ? s[0] : n == 1 && s[0] == 0x7f ? 0x7f
			 : n == 2 && s[0] == 0xc2 && s[1] < 0xa0 ? s[1] : -1;
		size_t step = cp >= 0 ? 6 : n;

		if (!full && out + step < len) {
			if (cp >= 0)
				snprintf(dst + out, 7, "\\u%04x", (unsigned)cp);
			else
				memcpy(dst + out, s, n);
			dst[out + step] = '\0';
		} else {
			full = true;
		}
		out += step;
		s += n ? n : 1;
	}
	if (len > 0 && out < len)
		dst[out] = '\0';
	return out;
}

char *adv_json_utf8_dup(const char *json)
{
	size_t n = adv_json_utf8(NULL, 0, json);
	char *s = malloc(n + 1);

	if (s)
		adv_json_utf8(s, n + 1, json);
	return s;
}
