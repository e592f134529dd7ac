/*
 * fuzz.h - what the libFuzzer targets of tests/fuzz share.
 *
 * A target must treat a wrong answer it can detect as a crash, so that the
 * fuzzer keeps the input: FUZZ_ASSERT aborts with the condition and line.
 */
#ifndef ADVISOR_FUZZ_H
#define ADVISOR_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(c)                                                            \
	do {                                                                      \
		if (!(c)) {                                                       \
			fprintf(stderr, "%s:%d: fuzz assertion failed: %s\n",     \
				__FILE__, __LINE__, #c);                          \
			abort();                                                  \
		}                                                                 \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The input as a malloc'ed C string (cut at its first NUL byte). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* True when err is terminated inside its buffer and not empty. */
static inline int fuzz_err_ok(const char *err, size_t len)
{
	return memchr(err, '\0', len) != NULL && err[0] != '\0';
}

/* strlcpy for the targets: src may be NULL. */
static inline void fuzz_copy(char *dst, const char *src, size_t len)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

#endif
