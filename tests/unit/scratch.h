/*
 * scratch.h - a scratch directory of real files for the tests of the
 * client's reads (test_jobship, test_scripttext): made under $TMPDIR (else
 * /tmp) by the group setup, removed by its teardown.
 */
#ifndef ADVISOR_TEST_SCRATCH_H
#define ADVISOR_TEST_SCRATCH_H

#include <limits.h>
#include <stddef.h>

extern char scratch[PATH_MAX];

/* cmocka group setup and teardown. */
int scratch_setup(void **state);
int scratch_teardown(void **state);
/* The path of name in the scratch directory. */
void scratch_path(char *buf, size_t len, const char *name);
/* Writes len bytes of text as name in the scratch directory. */
void scratch_write(const char *name, const char *text, size_t len);

#endif
