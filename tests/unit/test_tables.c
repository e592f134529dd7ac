/*
 * test_tables.c - every table indexed by an enum has a row for each of its
 * values (issue 27: a field-alias table of print.c had 20 rows and was read
 * at row 20, which crashed advisorctl on two public Megatron scripts).
 *
 * The tables are sized by their enum's count and _Static_assert'ed where
 * they are defined; a positional table with a row too few or too many does
 * not compile.  A table of designated rows ([X] = "x") compiles with a row
 * left out, which is then NULL: this test looks up every value of every
 * such enum through the table's own function and fails on a NULL, an empty
 * or an "unknown" name, and on two values with the same name.  One past
 * the last value must read as unknown, not as a row of another table.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advconf.h"
#include "engine/engine.h"
#include "engine/findings.h"
#include "engine/options.h"
#include "engine/planner.h"
#include "engine/provenance.h"
#include "jobread/jobread.h"
#include "plugin.h"
#include "stats.h"
#include "wire/auth.h"

/* name(v) for v in 0..count-1: set, not "unknown", not twice; name(count)
 * is the function's answer for a value it does not know. */
typedef const char *(*name_fn)(int v);

static void names_complete(const char *what, name_fn name, int count, const char *unknown)
{
	for (int v = 0; v < count; v++) {
		const char *n = name(v);

		if (!n || !n[0] || (unknown && !strcmp(n, unknown)))
			fail_msg("%s: value %d has no name (%s)", what, v, n ? n : "NULL");
		for (int w = 0; w < v; w++)
			if (!strcmp(n, name(w)))
				fail_msg("%s: values %d and %d are both '%s'", what, w, v, n);
	}
	if (unknown) {
		const char *n = name(count);

		if (!n || strcmp(n, unknown) != 0)
			fail_msg("%s: the count %d reads as '%s', want '%s'", what, count,
				 n ? n : "NULL", unknown);
		n = name(-1);
		if (!n || strcmp(n, unknown) != 0)
			fail_msg("%s: -1 reads as '%s', want '%s'", what, n ? n : "NULL", unknown);
	}
}

static const char *verdict_of(int v) { return engine_verdict_name((enum adv_verdict)v); }
static const char *severity_of(int v) { return engine_severity_name((enum adv_severity)v); }
static const char *context_of(int v) { return engine_context_name((enum adv_context)v); }
static const char *mode_of(int v) { return policy_mode_name((enum adv_mode)v); }
static const char *field_of(int v) { return provenance_field_name((enum adv_field)v); }
static const char *jr_field_of(int v) { return jobread_field_name((enum jobread_field)v); }
static const char *code_of(int v) { return engine_code_name((enum adv_code)v); }
static const char *meaning_of(int v) { return engine_code_meaning((enum adv_code)v); }
static const char *planner_err_of(int v) { return planner_strerror(v); }
static const char *auth_err_of(int v) { return auth_strerror(v); }
static const char *advconf_err_of(int v) { return advconf_strerror(v); }
static const char *stats_kind_of(int v) { return stats_kind_name(v); }

static void test_engine_names(void **state)
{
	(void)state;
	names_complete("engine_verdict_name", verdict_of, ADV_VERDICT_COUNT, "unknown");
	names_complete("engine_severity_name", severity_of, ADV_SEV_COUNT, "unknown");
	names_complete("engine_precision_name", engine_precision_name, ADV_PREC_COUNT, "unknown");
	names_complete("engine_recompute_name", engine_recompute_name, ADV_RECOMPUTE_COUNT,
		       "unknown");
	names_complete("engine_task_name", engine_task_name, ADV_TASK_COUNT, "unknown");
	names_complete("engine_framework_name", engine_framework_name, ADV_FW_COUNT, "unknown");
	names_complete("engine_attention_name", engine_attention_name, ADV_ATTN_COUNT, "unknown");
	names_complete("engine_context_name", context_of, ADV_CTX_COUNT, "unknown");
	names_complete("policy_mode_name", mode_of, ADV_MODE_COUNT, "unknown");
}

/* The option names: one per value, NULL after the last, and each parses
 * back to its value (options_parse_enum is how a name becomes the index). */
static void option_names(const char *what, const char *const *names, int count)
{
	for (int v = 0; v < count; v++) {
		char err[256];
		int got = -1;

		if (!names[v])
			fail_msg("%s: value %d has no name", what, v);
		assert_int_equal(options_parse_enum(what, names[v], names, &got, err, sizeof(err)), 0);
		assert_int_equal(got, v);
	}
	if (names[count])
		fail_msg("%s: a name '%s' past the enum's %d values", what, names[count], count);
}

static void test_option_names(void **state)
{
	(void)state;
	option_names("precision", options_precision_names, ADV_PREC_COUNT);
	option_names("recompute", options_recompute_names, ADV_RECOMPUTE_COUNT);
	option_names("task", options_task_names, ADV_TASK_COUNT);
	option_names("framework", options_framework_names, ADV_FW_COUNT);
	option_names("mode", options_mode_names, ADV_MODE_COUNT);
	option_names("attention", options_attention_names, ADV_ATTN_COUNT);
	option_names("weights", options_weights_names, ADV_WEIGHTS_COUNT);
	/* The engine's names are the options' (check --json prints what
	 * --llm-* takes). */
	for (int v = 0; v < ADV_PREC_COUNT; v++)
		assert_string_equal(engine_precision_name(v), options_precision_names[v]);
	for (int v = 0; v < ADV_MODE_COUNT; v++)
		assert_string_equal(policy_mode_name((enum adv_mode)v), options_mode_names[v]);
}

static void test_field_names(void **state)
{
	(void)state;
	names_complete("provenance_field_name", field_of, ADV_F_COUNT, "");
	/* ADV_FROM_UNSET has the empty name on purpose: "not said". */
	assert_string_equal(provenance_origin_name(ADV_FROM_UNSET), "");
	for (int o = ADV_FROM_UNSET + 1; o < ADV_FROM_COUNT; o++) {
		const char *n = provenance_origin_name((enum adv_origin)o);

		if (!n || !n[0])
			fail_msg("provenance_origin_name: origin %d has no name", o);
	}
	assert_string_equal(provenance_origin_name(ADV_FROM_COUNT), "");
	names_complete("jobread_field_name", jr_field_of, JR_FIELD_COUNT, "?");
}

static void test_codes(void **state)
{
	(void)state;
	names_complete("engine_code_name", code_of, ADV_CODE_COUNT, "");
	names_complete("engine_code_meaning", meaning_of, ADV_CODE_COUNT, NULL);
	for (int c = 0; c < ADV_CODE_COUNT; c++) {
		int s = (int)engine_code_severity((enum adv_code)c);

		assert_true(s >= 0 && s < ADV_SEV_COUNT);
		assert_int_equal(engine_code_lookup(engine_code_name((enum adv_code)c)), c);
	}
}

static void test_error_messages(void **state)
{
	(void)state;
	names_complete("planner_strerror", planner_err_of, PLANNER_ERR_COUNT,
		       "unknown planner error");
	names_complete("auth_strerror", auth_err_of, AUTH_ERR_COUNT, "unknown auth error");
	names_complete("advconf_strerror", advconf_err_of, ADVCONF_ERR_COUNT,
		       "unknown advconf error");
}

static void test_daemon_and_plugin(void **state)
{
	(void)state;
	names_complete("stats_kind_name", stats_kind_of, STATS_KINDS, NULL);
	assert_null(stats_kind_name(STATS_KINDS));
	for (int i = 0; i < REPORT_NVARS; i++) {
		if (!annotate_var_names[i] || strncmp(annotate_var_names[i], "ADVISOR_", 8) != 0)
			fail_msg("annotate_var_names[%d] is '%s'", i,
				 annotate_var_names[i] ? annotate_var_names[i] : "NULL");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_names),
		cmocka_unit_test(test_option_names),
		cmocka_unit_test(test_field_names),
		cmocka_unit_test(test_codes),
		cmocka_unit_test(test_error_messages),
		cmocka_unit_test(test_daemon_and_plugin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
