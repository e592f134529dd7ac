/*
 * scratch.c - the scratch directory of scratch.h.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "scratch.h"
#include "util.h"

char scratch[PATH_MAX];

int scratch_setup(void **state)
{
	(void)state;
	adv_snprintf(scratch, sizeof(scratch), "%s/advisor-test.XXXXXX",
		     getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(scratch) ? 0 : -1;
}

int scratch_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	adv_snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	return system(cmd) == 0 ? 0 : -1;
}

void scratch_path(char *buf, size_t len, const char *name)
{
	adv_snprintf(buf, len, "%s/%s", scratch, name);
}

void scratch_write(const char *name, const char *text, size_t len)
{
	char p[PATH_MAX];
	FILE *f;

	scratch_path(p, sizeof(p), name);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}
