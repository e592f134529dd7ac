/*
 * test_codes.c - the table of finding codes (common/engine/codes.h) against
 * the two places that document them: advisorctl(1), "FINDING CODES", and
 * doc/interfaces.md, "Finding codes" (issue 17: a code in the table that
 * the man page or the contract lacks, or one they list that the table does
 * not have, fails here).
 *
 * The man page gives each code as ".TP", ".B CODE", then "(severity ...)"
 * and, in one of its entries, an "Example:"; the contract gives each as a
 * markdown row "| `CODE` | severity | meaning |", word for word the table's.
 */
#include "config.h"

#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/findings.h"
#include "engine/names.h"

#define MAN SRCDIR "/man/advisorctl.1.in"
#define CONTRACT SRCDIR "/doc/interfaces.md"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Cuts text down to the section that starts with the line head and ends
 * before the next line that starts with next ("" when there is none). */
static char *section(char *text, const char *head, const char *next)
{
	char *s = strstr(text, head), *e;

	if (!s)
		fail_msg("no section '%s'", head);
	s = strchr(s, '\n');
	assert_non_null(s);
	for (e = s; (e = strstr(e + 1, next)); )
		if (e[-1] == '\n')
			break;
	if (e)
		*e = '\0';
	return s;
}

/* The line after pos (pos is inside a line), or NULL at the end. */
static const char *next_line(const char *pos)
{
	const char *nl = strchr(pos, '\n');

	return nl ? nl + 1 : NULL;
}

static void test_table(void **st)
{
	int i, j;

	(void)st;
	assert_true(ADV_CODE_COUNT >= 36);
	for (i = 0; i < ADV_CODE_COUNT; i++) {
		const char *name = engine_code_name((enum adv_code)i);
		const char *meaning = engine_code_meaning((enum adv_code)i);

		assert_true(name[0] != '\0');
		for (const char *p = name; *p; p++)
			assert_true(isupper((unsigned char)*p) || isdigit((unsigned char)*p) ||
				    *p == '_');
		assert_true(strlen(name) < ADV_CODE_MAX);
		/* One line of plain text that fits a markdown cell. */
		assert_true(strlen(meaning) > 10);
		assert_null(strpbrk(meaning, "|\n`"));
		assert_int_equal(meaning[strlen(meaning) - 1], '.');
		assert_int_equal(engine_code_lookup(name), i);
		for (j = 0; j < i; j++)
			assert_string_not_equal(name, engine_code_name((enum adv_code)j));
	}
	assert_int_equal(engine_code_lookup("MEM_OVER_CAPACITY"), ADV_CODE_MEM_OVER_CAPACITY);
	assert_int_equal(engine_code_severity(ADV_CODE_MEM_OVER_CAPACITY), ADV_SEV_REJECT);
	assert_int_equal(engine_code_severity(ADV_CODE_SCRIPT_UNKNOWN), ADV_SEV_INFO);
	assert_int_equal(engine_code_severity(ADV_CODE_TP_CROSSES_NODE), ADV_SEV_WARN);
	assert_int_equal(engine_code_lookup("MEM_OVER_CAPACITYX"), ADV_CODE_COUNT);
	assert_int_equal(engine_code_lookup(""), ADV_CODE_COUNT);
	assert_string_equal(engine_code_name(ADV_CODE_COUNT), "");
	assert_string_equal(engine_code_meaning(ADV_CODE_COUNT), "");
}

static void test_findings(void **st)
{
	struct adv_result res;

	(void)st;
	memset(&res, 0, sizeof(res));
	engine_add_finding(&res, ADV_CODE_CKPT_MISSING, NULL, "no interval");
	engine_add_finding_sev(&res, ADV_CODE_CKPT_TOO_LONG, ADV_SEV_REJECT, "--llm-ckpt=1h",
			       "%d", 12);
	assert_int_equal(res.n_findings, 2);
	assert_string_equal(res.findings[0].code, "CKPT_MISSING");
	assert_int_equal(res.findings[0].severity, ADV_SEV_WARN);
	assert_string_equal(res.findings[0].fix, "");
	assert_string_equal(res.findings[1].code, "CKPT_TOO_LONG");
	assert_int_equal(res.findings[1].severity, ADV_SEV_REJECT);
	assert_string_equal(res.findings[1].message, "12");
	assert_true(engine_finding_is(&res.findings[1], ADV_CODE_CKPT_TOO_LONG));
	assert_false(engine_finding_is(&res.findings[1], ADV_CODE_CKPT_TOO_SHORT));
	assert_true(engine_finding_checkpoint(&res.findings[0]));
	assert_true(engine_has_finding(&res, ADV_CODE_CKPT_TOO_LONG));
	assert_false(engine_has_finding(&res, ADV_CODE_BEST_PLAN));
	engine_add_finding(&res, ADV_CODE_BEST_PLAN, NULL, "plan");
	assert_false(engine_finding_checkpoint(&res.findings[2]));
}

/* Every code of the table in advisorctl(1), with its default severity first
 * and an example; every code the man page lists in the table. */
static void test_man_page(void **st)
{
	char *text = slurp(MAN);
	const char *sec = section(text, ".SH FINDING CODES", ".SH ");
	const char *p;
	char want[ADV_CODE_MAX + 16];
	int i, listed = 0;

	(void)st;
	for (i = 0; i < ADV_CODE_COUNT; i++) {
		const char *name = engine_code_name((enum adv_code)i);
		const char *sev = engine_severity_name(engine_code_severity((enum adv_code)i));
		const char *entry, *line;
		bool first = true, example = false;

		snprintf(want, sizeof(want), "\n.TP\n.B %s\n", name);
		if (!(entry = strstr(sec, want)))
			fail_msg("advisorctl(1) lacks the finding code %s (see common/engine/codes.h)",
				 name);
		for (; entry; entry = strstr(entry + 1, want), first = false) {
			line = entry + strlen(want);
			/* The first entry gives the default severity. */
			if (first && (line[0] != '(' || strncmp(line + 1, sev, strlen(sev))))
				fail_msg("advisorctl(1): %s is (%s) in the table, the man page says %.20s",
					 name, sev, line);
			for (; line && strncmp(line, ".TP", 3); line = next_line(line))
				if (!strncmp(line, "Example:", 8))
					example = true;
		}
		if (!example)
			fail_msg("advisorctl(1) gives no example of %s", name);
	}
	for (p = sec; (p = strstr(p, "\n.TP\n.B ")); p++) {
		char name[ADV_CODE_MAX + 1];
		size_t n;

		p += strlen("\n.TP\n.B ");
		n = strcspn(p, "\n");
		assert_true(n < sizeof(name));
		memcpy(name, p, n);
		name[n] = '\0';
		if (engine_code_lookup(name) == ADV_CODE_COUNT)
			fail_msg("advisorctl(1) lists %s, which common/engine/codes.h lacks", name);
		listed++;
	}
	assert_true(listed >= ADV_CODE_COUNT);
	free(text);
}

/* Every code of the table in doc/interfaces.md as a row word for word;
 * every row there a code of the table. */
static void test_contract(void **st)
{
	char *text = slurp(CONTRACT);
	const char *sec = section(text, "## Finding codes", "## ");
	const char *p;
	char want[ADV_CODE_MAX + 512];
	int i, rows = 0;

	(void)st;
	for (i = 0; i < ADV_CODE_COUNT; i++) {
		enum adv_code c = (enum adv_code)i;

		snprintf(want, sizeof(want), "\n| `%s` | %s | %s |\n", engine_code_name(c),
			 engine_severity_name(engine_code_severity(c)), engine_code_meaning(c));
		if (!strstr(sec, want))
			fail_msg("doc/interfaces.md, \"Finding codes\", lacks the row%s", want);
	}
	for (p = sec; (p = strstr(p, "\n| `")); p++) {
		char name[ADV_CODE_MAX + 1];
		size_t n;

		p += strlen("\n| `");
		n = strcspn(p, "`\n");
		assert_true(n < sizeof(name));
		memcpy(name, p, n);
		name[n] = '\0';
		if (engine_code_lookup(name) == ADV_CODE_COUNT)
			fail_msg("doc/interfaces.md lists %s, which common/engine/codes.h lacks", name);
		rows++;
	}
	assert_int_equal(rows, ADV_CODE_COUNT);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_findings),
		cmocka_unit_test(test_man_page),
		cmocka_unit_test(test_contract),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
