/*
 * findings.c - the findings of a result: what the engine and the job reader
 * add, each with its code, severity, message and fix (shared/design.md,
 * "Finding codes"), and the table of codes behind them (codes.h).
 *
 * The names, severities and meanings are three arrays, not one array of
 * structs, so that the plugin, which links this file with
 * --gc-sections and only ever needs a name, does not carry the meanings.
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "findings.h"
#include "util.h"

#define CODE_NAME(name, sev, meaning) [ADV_CODE_##name] = #name,
static const char *const code_names[ADV_CODE_COUNT] = { ADV_CODES(CODE_NAME) };
#undef CODE_NAME

#define CODE_SEV(name, sev, meaning) [ADV_CODE_##name] = ADV_SEV_##sev,
static const enum adv_severity code_sevs[ADV_CODE_COUNT] = { ADV_CODES(CODE_SEV) };
#undef CODE_SEV

#define CODE_MEANING(name, sev, meaning) [ADV_CODE_##name] = meaning,
static const char *const code_meanings[ADV_CODE_COUNT] = { ADV_CODES(CODE_MEANING) };
#undef CODE_MEANING

/* One row per code by construction (ADV_CODES makes the enum and the rows);
 * the asserts keep the sizes the enum's should a table lose its bound. */
_Static_assert(ADV_ARRAY_SIZE(code_names) == ADV_CODE_COUNT, "a name for each code");
_Static_assert(ADV_ARRAY_SIZE(code_sevs) == ADV_CODE_COUNT, "a severity for each code");
_Static_assert(ADV_ARRAY_SIZE(code_meanings) == ADV_CODE_COUNT, "a meaning for each code");

/* Every code fits struct adv_finding's code (and the wire's copy of it). */
#define CODE_FITS(name, sev, meaning) \
	_Static_assert(sizeof(#name) <= ADV_CODE_MAX, #name " is longer than ADV_CODE_MAX");
ADV_CODES(CODE_FITS)
#undef CODE_FITS

static bool code_valid(enum adv_code code)
{
	return (int)code >= 0 && code < ADV_CODE_COUNT;
}

const char *engine_code_name(enum adv_code code)
{
	return code_valid(code) ? code_names[code] : "";
}

enum adv_severity engine_code_severity(enum adv_code code)
{
	return code_valid(code) ? code_sevs[code] : ADV_SEV_INFO;
}

const char *engine_code_meaning(enum adv_code code)
{
	return code_valid(code) ? code_meanings[code] : "";
}

enum adv_code engine_code_lookup(const char *name)
{
	int i;

	for (i = 0; i < ADV_CODE_COUNT; i++)
		if (!strcmp(code_names[i], name))
			return (enum adv_code)i;
	return ADV_CODE_COUNT;
}

static void add_finding(struct adv_result *res, enum adv_code code, enum adv_severity sev,
			const char *fix, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

static void add_finding(struct adv_result *res, enum adv_code code, enum adv_severity sev,
			const char *fix, const char *fmt, va_list ap)
{
	struct adv_finding *f;

	if (!res || res->n_findings >= ADV_MAX_FINDINGS)
		return;
	f = &res->findings[res->n_findings++];
	adv_strlcpy(f->code, engine_code_name(code), sizeof(f->code));
	f->severity = sev;
	adv_strlcpy(f->fix, fix ? fix : "", sizeof(f->fix));
	/* The job reader fills it afterwards, when there is a job text. */
	f->fix_job[0] = '\0';
	/* provenance.c fills it after the check. */
	f->uses = 0;
	adv_vsnprintf(f->message, sizeof(f->message), fmt, ap);
}

void engine_add_finding(struct adv_result *res, enum adv_code code, const char *fix,
			const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_finding(res, code, engine_code_severity(code), fix, fmt, ap);
	va_end(ap);
}

void engine_add_finding_sev(struct adv_result *res, enum adv_code code, enum adv_severity sev,
			    const char *fix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_finding(res, code, sev, fix, fmt, ap);
	va_end(ap);
}

bool engine_has_finding(const struct adv_result *res, enum adv_code code)
{
	int i;

	for (i = 0; i < res->n_findings; i++)
		if (engine_finding_is(&res->findings[i], code))
			return true;
	return false;
}

bool engine_finding_is(const struct adv_finding *f, enum adv_code code)
{
	return !strcmp(f->code, engine_code_name(code));
}

bool engine_finding_checkpoint(const struct adv_finding *f)
{
	return !strncmp(f->code, "CKPT_", 5);
}

void engine_finding_lines(const struct adv_finding *f, void (*line)(const char *text, void *ctx),
			  void *ctx)
{
	char buf[ADV_FINDING_LINE_MAX];
	const char *fix = f->fix_job, *lead = "fix:";

	adv_snprintf(buf, sizeof(buf), "advisor: %s%s: %s", f->severity == ADV_SEV_REJECT ? "" :
		     f->severity == ADV_SEV_WARN ? "warning: " : "note: ", f->code, f->message);
	line(buf, ctx);
	/* A fix in the job's terms changes one line per setting ("A; B; C"): one
	 * line each, so that none is cut at the plugin's line length. */
	while (*fix) {
		size_t n = strcspn(fix, ";");

		adv_snprintf(buf, sizeof(buf), "advisor:   %s %.*s", lead, (int)n, fix);
		line(buf, ctx);
		lead = "and:";
		fix += n;
		while (*fix == ';' || *fix == ' ')
			fix++;
	}
	if (f->fix[0]) {
		adv_snprintf(buf, sizeof(buf), "advisor:   %s %s", f->fix_job[0] ? "or: " : "fix:",
			     f->fix);
		line(buf, ctx);
	}
}
