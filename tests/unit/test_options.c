/*
 * test_options.c - the --llm-* value parsers: what each accepts, what it
 * refuses, and that every refusal names the option and the accepted forms;
 * and the option table (engine/optlist.h) against the contract of names
 * (doc/interfaces.md, "User options" and "advisorctl") and the man pages
 * spank_advisor(8) and advisorctl(1), which must list every option.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/options.h"
#include "util.h"

static void test_layout_ok(void **st)
{
	struct adv_layout l;
	char err[256];

	(void)st;
	memset(&l, 0, sizeof(l));
	assert_int_equal(options_parse_layout("tp8,pp4,cp2,ep8,etp1,vpp2,dp16,sp", &l, err,
					      sizeof(err)), 0);
	assert_int_equal(l.tp, 8);
	assert_int_equal(l.pp, 4);
	assert_int_equal(l.cp, 2);
	assert_int_equal(l.ep, 8);
	assert_int_equal(l.etp, 1);
	assert_int_equal(l.vpp, 2);
	assert_int_equal(l.dp, 16);
	assert_int_equal(l.sp, 1);
	assert_int_equal(options_parse_layout("TP2,nosp", &l, err, sizeof(err)), 0);
	assert_int_equal(l.tp, 2);
	assert_int_equal(l.sp, 0);
	/* Sizes not named are unset again: the value replaces the layout. */
	assert_int_equal(l.pp, ADV_UNSET);
}

static void expect_layout_error(const char *value, const char *needle)
{
	struct adv_layout l = { 1, 1, 1, 1, 1, 1, 1, 1 };
	struct adv_layout before = l;
	char err[512];

	assert_int_equal(options_parse_layout(value, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--llm-layout"));
	assert_non_null(strstr(err, "tpN, ppN, cpN, epN, etpN, vppN, dpN"));
	assert_non_null(strstr(err, needle));
	/* A refused value changes nothing. */
	assert_memory_equal(&l, &before, sizeof(l));
}

static void test_layout_errors(void **st)
{
	(void)st;
	expect_layout_error("tp8,xp2", "'xp2' is not valid");
	expect_layout_error("tp0", "'tp0' is not valid: sizes start at 1");
	expect_layout_error("tp8,tp4", "'tp4' is not valid: this size is already given");
	expect_layout_error("sp,nosp", "'nosp' is not valid: given twice");
	expect_layout_error("tp8,,pp2", "'tp8,,pp2' is not valid");
	expect_layout_error("", "empty");
	expect_layout_error("tp-1", "'tp-1' is not valid");
	expect_layout_error("tp8x", "'tp8x' is not valid");
	expect_layout_error("tp", "'tp' is not valid");
}

static void test_duration(void **st)
{
	static const struct {
		const char *s;
		double v;
	} ok[] = { { "90s", 90 }, { "30m", 1800 }, { "2h", 7200 }, { "1h30m", 5400 },
		   { "1d", 86400 }, { "45", 45 }, { "1d2h3m4s", 93784 }, { "2H", 7200 } };
	static const char *const bad[] = { "", "0", "-5", "30x", "m", "30m1h", "1h1h", "1.5h",
					   "0m", "400d" };
	char err[256];
	double v;
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(options_parse_duration(ok[i].s, &v, err, sizeof(err)), 0);
		assert_true(v == ok[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(options_parse_duration(bad[i], &v, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "90s, 30m, 2h, 1h30m"));
	}
}

static void test_ckpt(void **st)
{
	struct adv_ckpt_req ck;
	char err[256];

	(void)st;
	assert_int_equal(options_parse_ckpt("45m", &ck, err, sizeof(err)), 0);
	assert_true(ck.given && !ck.off && !ck.async && ck.interval_s == 2700);
	assert_int_equal(options_parse_ckpt("1h30m,async", &ck, err, sizeof(err)), 0);
	assert_true(ck.given && ck.async && ck.interval_s == 5400);
	assert_int_equal(options_parse_ckpt("off", &ck, err, sizeof(err)), 0);
	assert_true(ck.given && ck.off);
	assert_int_equal(options_parse_ckpt("45m,later", &ck, err, sizeof(err)), -1);
	assert_string_equal(err, "--llm-ckpt: '45m,later' is not valid; accepted values: "
				 "DURATION[,async] (90s, 30m, 2h, 1h30m, 1d) or off");
	assert_int_equal(options_parse_ckpt("never", &ck, err, sizeof(err)), -1);
}

static void test_enums_and_ints(void **st)
{
	struct adv_workload wl;
	struct adv_request r;
	char err[256];

	(void)st;
	engine_request_init(&r);
	wl = r.wl;
	assert_int_equal(options_apply(&wl, "zero", "2", err, sizeof(err)), 0);
	assert_int_equal(wl.zero, 2);
	assert_int_equal(options_apply(&wl, "zero", "x", err, sizeof(err)), -1);
	assert_string_equal(err, "--llm-zero: 'x' is not valid; accepted values: 0, 1, 2, 3");
	assert_int_equal(options_apply(&wl, "llm-precision", "FP8", err, sizeof(err)), 0);
	assert_int_equal(wl.precision, ADV_PREC_FP8);
	assert_int_equal(options_apply(&wl, "precision", "int4", err, sizeof(err)), -1);
	assert_string_equal(err, "--llm-precision: 'int4' is not valid; accepted values: "
				 "bf16, fp16, fp8, fp32");
	assert_int_equal(options_apply(&wl, "recompute", "full", err, sizeof(err)), 0);
	assert_int_equal(wl.recompute, ADV_RECOMPUTE_FULL);
	assert_int_equal(options_apply(&wl, "task", "lora", err, sizeof(err)), 0);
	assert_int_equal(wl.task, ADV_TASK_LORA);
	assert_int_equal(options_apply(&wl, "framework", "fsdp", err, sizeof(err)), 0);
	assert_int_equal(wl.framework, ADV_FW_FSDP);
	assert_int_equal(options_apply(&wl, "framework", "jax", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "generic, megatron, deepspeed, fsdp"));
	assert_int_equal(options_apply(&wl, "advisor", "warn", err, sizeof(err)), 0);
	assert_int_equal(wl.mode, ADV_MODE_WARN);
	assert_int_equal(options_apply(&wl, "seq", "8192", err, sizeof(err)), 0);
	assert_int_equal(wl.seq, 8192);
	assert_int_equal(options_apply(&wl, "seq", "0", err, sizeof(err)), -1);
	assert_string_equal(err, "--llm-seq: '0' is not valid; accepted values: an integer "
				 "from 1 to 16777216");
	assert_int_equal(options_apply(&wl, "mbs", "2x", err, sizeof(err)), -1);
	assert_int_equal(options_apply(&wl, "gbs", "1024", err, sizeof(err)), 0);
	assert_int_equal(wl.gbs, 1024);
	assert_int_equal(options_apply(&wl, "model", "llama3-70b", err, sizeof(err)), 0);
	assert_string_equal(wl.model, "llama3-70b");
	assert_int_equal(options_apply(&wl, "model", "", err, sizeof(err)), -1);
	assert_int_equal(options_apply(&wl, "tokens", "15T", err, sizeof(err)), 0);
	assert_true(wl.tokens == 15e12);
	assert_int_equal(options_apply(&wl, "tokens", "2e9", err, sizeof(err)), 0);
	assert_true(wl.tokens == 2e9);
	assert_int_equal(options_apply(&wl, "tokens", "lots", err, sizeof(err)), -1);
	assert_int_equal(options_apply(&wl, "layout", "tp4,pp2", err, sizeof(err)), 0);
	assert_int_equal(wl.layout.tp, 4);
	assert_int_equal(options_apply(&wl, "ckpt", "30m", err, sizeof(err)), 0);
	assert_true(wl.ckpt.interval_s == 1800);
	assert_int_equal(options_apply(&wl, "colour", "red", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--llm-colour: unknown option"));
}

/* --llm-attention: flash (the default when unset) or eager, by name. */
static void test_attention(void **st)
{
	struct adv_workload wl, sb;
	struct adv_request r;
	char err[256];

	(void)st;
	engine_request_init(&r);
	wl = r.wl;
	assert_int_equal(wl.attention, ADV_UNSET);
	assert_int_equal(options_apply(&wl, "llm-attention", "EAGER", err, sizeof(err)), 0);
	assert_int_equal(wl.attention, ADV_ATTN_EAGER);
	assert_int_equal(options_apply(&wl, "attention", "flash", err, sizeof(err)), 0);
	assert_int_equal(wl.attention, ADV_ATTN_FLASH);
	assert_int_equal(options_apply(&wl, "attention", "sdpa", err, sizeof(err)), -1);
	assert_string_equal(err, "--llm-attention: 'sdpa' is not valid; accepted values: "
				 "flash, eager");
	assert_string_equal(engine_attention_name(ADV_ATTN_EAGER), "eager");
	/* An #SBATCH line fills what the command line left unset. */
	sb = r.wl;
	sb.attention = ADV_ATTN_EAGER;
	wl = r.wl;
	options_merge(&wl, &sb);
	assert_int_equal(wl.attention, ADV_ATTN_EAGER);
	wl.attention = ADV_ATTN_FLASH;
	options_merge(&wl, &sb);
	assert_int_equal(wl.attention, ADV_ATTN_FLASH);
}

static void test_format_duration(void **st)
{
	char b[32];

	(void)st;
	options_format_duration(5400, b, sizeof(b));
	assert_string_equal(b, "1h30m");
	options_format_duration(2700, b, sizeof(b));
	assert_string_equal(b, "45m");
	options_format_duration(90, b, sizeof(b));
	assert_string_equal(b, "1m30s");
	options_format_duration(45, b, sizeof(b));
	assert_string_equal(b, "45s");
	options_format_duration(90000, b, sizeof(b));
	assert_string_equal(b, "1d1h");
}


/* ---- the option table ----------------------------------------------------- */

/* A good value of each option, to apply every row. */
static const char *const sample_value[OPTIONS_COUNT] = {
	[OPTIONS_MODEL] = "llama3-8b", [OPTIONS_LAYOUT] = "tp2", [OPTIONS_ZERO] = "1",
	[OPTIONS_PRECISION] = "bf16", [OPTIONS_SEQ] = "4096", [OPTIONS_MBS] = "1",
	[OPTIONS_GBS] = "8", [OPTIONS_RECOMPUTE] = "full", [OPTIONS_ATTENTION] = "eager",
	[OPTIONS_GRAD_DTYPE] = "bf16", [OPTIONS_MEM_SHARE] = "0.9", [OPTIONS_KV_DTYPE] = "fp8",
	[OPTIONS_WEIGHTS] = "int4",
	[OPTIONS_TASK] = "train", [OPTIONS_FRAMEWORK] = "megatron", [OPTIONS_CKPT] = "30m",
	[OPTIONS_ADVISOR] = "warn", [OPTIONS_TOKENS] = "1T",
};

/* The help columns, which only the plugin and advisorctl compile in. */
static const struct {
	const char *plugin_help, *ctl_help;
} help_cols[] = {
#define HELP_ROW(id, name, arg, sbatch, plugin_help, ctl_help) { plugin_help, ctl_help },
	OPTIONS_LIST(HELP_ROW)
#undef HELP_ROW
};

/* Every row is found by its name, applies, and is then set; the unknown
 * option's message lists them all. */
static void test_table_rows(void **st)
{
	struct adv_request r;
	char err[512];

	(void)st;
	assert_int_equal(ADV_ARRAY_SIZE(help_cols), OPTIONS_COUNT);
	assert_non_null(help_cols[0].ctl_help);
	for (int id = 0; id < OPTIONS_COUNT; id++) {
		const struct options_def *o = &options_table[id];
		struct adv_workload wl;
		char llm[64];

		engine_request_init(&r);
		wl = r.wl;
		assert_non_null(o->name);
		assert_true(o->arg && o->arg[0]);
		assert_int_equal(options_find(o->name), id);
		if (!sample_value[id])
			fail_msg("test_options.c: no sample value for --%s", o->name);
		assert_false(options_is_set(&wl, (enum options_id)id));
		assert_int_equal(options_apply_id(&wl, (enum options_id)id, sample_value[id], err,
						  sizeof(err)), 0);
		assert_true(options_is_set(&wl, (enum options_id)id));
		for (int other = 0; other < OPTIONS_COUNT; other++)
			if (other != id && options_is_set(&wl, (enum options_id)other))
				fail_msg("--%s sets --%s too", o->name, options_table[other].name);
		wl = r.wl;
		adv_snprintf(llm, sizeof(llm), "llm-%s", o->name);
		assert_int_equal(options_apply(&wl, llm, sample_value[id], err, sizeof(err)), 0);
		if (o->sbatch)
			assert_true(help_cols[id].plugin_help && help_cols[id].plugin_help[0]);
		assert_int_equal(options_apply(&wl, o->name, "", err, sizeof(err)), -1);
		assert_non_null(strstr(err, "'' is not valid"));
	}
	assert_int_equal(options_find("colour"), -1);
	assert_int_equal(options_find(NULL), -1);
	engine_request_init(&r);
	assert_int_equal(options_apply(&r.wl, "colour", "red", err, sizeof(err)), -1);
	for (int id = 0; id < OPTIONS_COUNT; id++)
		assert_non_null(strstr(err, options_table[id].name));
}

/* SRCDIR/rel, whole, NUL-terminated. */
static char *slurp(const char *rel)
{
	char path[1024];
	FILE *f;
	char *buf;
	long n;

	adv_snprintf(path, sizeof(path), "%s/%s", SRCDIR, rel);
	f = fopen(path, "r");
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

/* The text of a markdown section, from its heading to the next "## ". */
static char *md_section(char *text, const char *heading)
{
	char *start = strstr(text, heading), *end;

	if (!start)
		fail_msg("doc/interfaces.md has no section '%s'", heading);
	end = strstr(start + strlen(heading), "\n## ");
	if (end)
		end[1] = '\0';
	return start;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/*
 * doc/interfaces.md: the "User options" table names exactly the SPANK rows
 * as --llm-NAME, and the advisorctl section names every row as `--NAME.
 */
static void test_table_contract(void **st)
{
	char *doc = slurp("doc/interfaces.md");
	char *ctl_doc = strdup(doc);
	char *users = md_section(doc, "\n## User options");
	char *ctl = md_section(ctl_doc, "\n## advisorctl");
	bool seen[OPTIONS_COUNT] = { false };
	const char *p;

	(void)st;
	for (p = strstr(users, "--llm-"); p; p = strstr(p, "--llm-")) {
		char name[64];
		size_t n = 0;
		int id;

		p += 6;
		while (name_char(p[n]) && n < sizeof(name) - 1)
			n++;
		memcpy(name, p, n);
		name[n] = '\0';
		if (n == 0)
			continue;   /* --llm-* */
		id = options_find(name);
		if (id < 0 || !options_table[id].sbatch)
			fail_msg("doc/interfaces.md lists --llm-%s, which engine/optlist.h has not "
				 "as a SPANK option", name);
		seen[id] = true;
	}
	for (int id = 0; id < OPTIONS_COUNT; id++) {
		const char *name = options_table[id].name;
		char pat[64];
		bool found = false;

		if (options_table[id].sbatch && !seen[id])
			fail_msg("doc/interfaces.md, User options: --llm-%s is missing", name);
		if (!options_table[id].sbatch && seen[id])
			fail_msg("doc/interfaces.md, User options: --llm-%s is advisorctl's only", name);
		adv_snprintf(pat, sizeof(pat), "`--%s", name);
		for (p = strstr(ctl, pat); p && !found; p = strstr(p + 1, pat))
			found = !name_char(p[strlen(pat)]);
		if (!found)
			fail_msg("doc/interfaces.md, advisorctl: `--%s` is missing", name);
	}
	free(ctl_doc);
	free(doc);
}

/* "llm-seq" as roff writes it: every '-' as "\-". */
static void roff_name(const char *prefix, const char *name, char *buf, size_t len)
{
	char plain[64];
	size_t n = 0;

	adv_snprintf(plain, sizeof(plain), "%s%s", prefix, name);
	for (const char *s = plain; *s && n + 3 < len; s++) {
		if (*s == '-')
			buf[n++] = '\\';
		buf[n++] = *s;
	}
	buf[n] = '\0';
}

/* True when text holds pat not followed by more of a name ("\-\-gpus" is
 * not "\-\-gpus\-per\-node"). */
static bool roff_has(const char *text, const char *pat)
{
	for (const char *p = strstr(text, pat); p; p = strstr(p + 1, pat)) {
		const char *q = p + strlen(pat);

		if (!name_char(*q) && strncmp(q, "\\-", 2) != 0)
			return true;
	}
	return false;
}

/*
 * spank_advisor(8) documents every SPANK row as \-\-llm\-NAME and names no
 * other; advisorctl(1) documents every row as \-\-NAME.
 */
static void test_table_man_pages(void **st)
{
	char *spank = slurp("man/spank_advisor.8.in");
	char *ctl = slurp("man/advisorctl.1.in");
	const char *p;

	(void)st;
	for (int id = 0; id < OPTIONS_COUNT; id++) {
		const char *name = options_table[id].name;
		char pat[128];

		roff_name("--llm-", name, pat, sizeof(pat));
		if (options_table[id].sbatch && !roff_has(spank, pat))
			fail_msg("man/spank_advisor.8.in does not document --llm-%s", name);
		roff_name("--", name, pat, sizeof(pat));
		if (!roff_has(ctl, pat))
			fail_msg("man/advisorctl.1.in does not document --%s", name);
	}
	for (p = strstr(spank, "\\-\\-llm\\-"); p; p = strstr(p, "\\-\\-llm\\-")) {
		char name[64];
		size_t n = 0;
		int id;

		p += 9;
		while (n < sizeof(name) - 1 && (name_char(*p) || !strncmp(p, "\\-", 2))) {
			if (*p == '\\')
				p++;
			name[n++] = *p++;
		}
		name[n] = '\0';
		if (n == 0)
			continue;   /* \-\-llm\-* */
		id = options_find(name);
		if (id < 0 || !options_table[id].sbatch)
			fail_msg("man/spank_advisor.8.in names --llm-%s, which is no SPANK option", name);
	}
	free(ctl);
	free(spank);
}

/*
 * README.md's table of --llm-* options (issue 30: four rows were missing)
 * has a row "| `--llm-NAME..." for every SPANK row of the table, and no
 * row for an option the plugin does not have.
 */
static void test_table_readme(void **st)
{
	char *readme = slurp("README.md");
	bool seen[OPTIONS_COUNT] = { false };
	const char *p;

	(void)st;
	for (p = strstr(readme, "\n| `--llm-"); p; p = strstr(p + 1, "\n| `--llm-")) {
		/* A row may list several: "| `--llm-seq=N`, `--llm-mbs=N` |". */
		const char *end = strchr(p + 1, '\n');

		for (const char *o = strstr(p, "`--llm-"); o && (!end || o < end);
		     o = strstr(o + 1, "`--llm-")) {
			char name[64];
			size_t n = 0;
			int id;

			o += 7;
			while (n < sizeof(name) - 1 && name_char(*o))
				name[n++] = *o++;
			name[n] = '\0';
			id = options_find(name);
			if (id < 0 || !options_table[id].sbatch)
				fail_msg("README.md's table names --llm-%s, which is no SPANK option", name);
			seen[id] = true;
		}
	}
	for (int id = 0; id < OPTIONS_COUNT; id++)
		if (options_table[id].sbatch && !seen[id])
			fail_msg("README.md's --llm-* table has no row for --llm-%s", options_table[id].name);
	free(readme);
}

/* advisorctl prints fixes in its own spelling, from the table (issue 21). */
static void test_ctl_spelling(void **st)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "--llm-model=NAME", "--model NAME" },
		{ "--llm-ckpt=1h28m", "--ckpt 1h28m" },
		{ "--llm-layout=tp4,pp2 or --llm-layout=tp2,pp2", "--layout tp4,pp2 or --layout tp2,pp2" },
		{ "state --llm-seq, --llm-recompute (or the job's own flags)",
		  "state --seq, --recompute (or the job's own flags)" },
		{ "--llm-grad-dtype=bf16; --llm-zero=2 (72.7 GiB per GPU)",
		  "--grad-dtype bf16; --zero 2 (72.7 GiB per GPU)" },
		/* Not rows of the table, or not options: as they are. */
		{ "--llm-nosuch=1 --llm-models=x --tensor-model-parallel-size 4", "--llm-nosuch=1 --llm-models=x --tensor-model-parallel-size 4" },
		{ "", "" },
		{ "--llm-", "--llm-" },
	};
	char out[ADV_MSG_MAX], small[8];

	(void)st;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		options_ctl_spelling(cases[i].in, out, sizeof(out));
		assert_string_equal(out, cases[i].want);
	}
	/* Every row, by the table's own names. */
	for (int id = 0; id < OPTIONS_COUNT; id++) {
		char in[64], want[64];

		snprintf(in, sizeof(in), "--llm-%s=X", options_table[id].name);
		snprintf(want, sizeof(want), "--%s X", options_table[id].name);
		options_ctl_spelling(in, out, sizeof(out));
		assert_string_equal(out, want);
	}
	/* Bounded: cut, always terminated. */
	options_ctl_spelling("--llm-model=llama3-70b", small, sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_string_equal(small, "--model");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_ok),
		cmocka_unit_test(test_layout_errors),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_ckpt),
		cmocka_unit_test(test_enums_and_ints),
		cmocka_unit_test(test_attention),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_table_rows),
		cmocka_unit_test(test_table_contract),
		cmocka_unit_test(test_table_man_pages),
		cmocka_unit_test(test_table_readme),
		cmocka_unit_test(test_ctl_spelling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
