/*
 * findings.h - adding findings to a result, and the table of finding codes
 * (codes.h) by enum: name, default severity, meaning (findings.c).
 */
#ifndef ADVISOR_ENGINE_FINDINGS_H
#define ADVISOR_ENGINE_FINDINGS_H

#include <stdbool.h>

#include "codes.h"
#include "result.h"

/* Adds a finding with the code's default severity (no-op when full).  fix
 * may be NULL. */
void engine_add_finding(struct adv_result *res, enum adv_code code, const char *fix,
			const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same with a severity other than the default (the few codes whose
 * severity depends on the case: codes.h says which). */
void engine_add_finding_sev(struct adv_result *res, enum adv_code code, enum adv_severity sev,
			    const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
bool engine_has_finding(const struct adv_result *res, enum adv_code code);

/* The table: the code as the wire, JSON and log carry it, its default
 * severity and its one-line meaning.  Out of range: "", info, "". */
const char *engine_code_name(enum adv_code code);
enum adv_severity engine_code_severity(enum adv_code code);
const char *engine_code_meaning(enum adv_code code);
/* The enum of a code string, or ADV_CODE_COUNT when it is none of the table's. */
enum adv_code engine_code_lookup(const char *name);

/* Whether f has the code. */
bool engine_finding_is(const struct adv_finding *f, enum adv_code code);
/* Whether f is one of the checkpoint findings (the codes named CKPT_*). */
bool engine_finding_checkpoint(const struct adv_finding *f);

/* The longest line engine_finding_lines() hands over, with its NUL. */
#define ADV_FINDING_LINE_MAX (ADV_CODE_MAX + ADV_FIX_JOB_MAX + 32)
/*
 * The lines a user sees of f, as the plugin prints them at submission and
 * `advisorctl show` prints them again (issue 21), each handed to line():
 * "advisor: [warning: |note: ]CODE: message", then the fix in the job's
 * own terms, one line per setting ("advisor:   fix: A", "advisor:   and:
 * B"), then the --llm-* form ("advisor:   or:  ..."; "advisor:   fix: ..."
 * alone when there is no fix in the job's terms).
 */
void engine_finding_lines(const struct adv_finding *f, void (*line)(const char *text, void *ctx),
			  void *ctx);

#endif
