/*
 * options.h - parsing of the --llm-* option values, shared by the SPANK
 * plugin, advisorctl and the daemon so that every front end accepts and
 * refuses exactly the same strings.  Each parser returns 0 on success or -1
 * with a message in err that names the option and the accepted values.
 */
#ifndef ADVISOR_OPTIONS_H
#define ADVISOR_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "optlist.h"
#include "workload.h"

/* "tp8,pp4,cp1,ep1,etp1,vpp2,dp16,sp|nosp" into lay (unset fields stay unset) */
int options_parse_layout(const char *s, struct adv_layout *lay, char *err, size_t errlen);
/* "90s", "30m", "2h", "1h30m", "1d", plain seconds */
int options_parse_duration(const char *s, double *seconds, char *err, size_t errlen);
/* "DURATION[,async]" or "off" */
int options_parse_ckpt(const char *s, struct adv_ckpt_req *ck, char *err, size_t errlen);
/* Positive integer within [min, max]; name is used in messages. */
int options_parse_int(const char *name, const char *s, long min, long max, int *out,
		      char *err, size_t errlen);
int options_parse_enum(const char *name, const char *s, const char *const *names,
		       int *out, char *err, size_t errlen);

/*
 * The names of an enum's values, indexed by the value, then NULL (the list
 * options_parse_enum takes): X_COUNT + 1 entries, which options.c asserts
 * at compile time (issue 27: a table shorter than its enum was read past
 * its end).  The sizes are left out here on purpose: declared, they would
 * pad a short definition with NULLs instead of failing its assert.
 */
extern const char *const options_precision_names[];  /* enum adv_precision */
extern const char *const options_recompute_names[];  /* enum adv_recompute */
extern const char *const options_task_names[];       /* enum adv_task */
extern const char *const options_framework_names[];  /* enum adv_framework */
extern const char *const options_mode_names[];       /* enum adv_mode */
extern const char *const options_attention_names[];  /* enum adv_attention */
extern const char *const options_weights_names[];    /* enum adv_weights */

/* The options of optlist.h: OPTIONS_MODEL, OPTIONS_LAYOUT, ... */
enum options_id {
#define OPTIONS_ENUM_ROW(id, name, arg, sbatch, plugin_help, ctl_help) OPTIONS_##id,
	OPTIONS_LIST(OPTIONS_ENUM_ROW)
#undef OPTIONS_ENUM_ROW
	OPTIONS_COUNT
};

/* What the parsers need of a row of optlist.h (its help texts stay with
 * the plugin and advisorctl, which print them). */
struct options_def {
	const char *name;         /* without the "llm-" prefix */
	const char *arg;          /* argument form: "NAME", "0..3", ... */
	bool sbatch;              /* a SPANK option (--llm-NAME) too */
};

/* Indexed by enum options_id. */
extern const struct options_def options_table[OPTIONS_COUNT];

/* The id of an option named without the "llm-" prefix, or -1. */
int options_find(const char *name);

/*
 * Applies one option by its name without the "llm-" prefix ("model",
 * "layout", "zero", ...) to a workload.  Used by advisorctl, for its
 * options and #SBATCH lines.  Unknown names are an error.
 */
int options_apply(struct adv_workload *wl, const char *name, const char *value,
		  char *err, size_t errlen);
/* The same by id (the plugin's callbacks). */
int options_apply_id(struct adv_workload *wl, enum options_id id, const char *value,
		     char *err, size_t errlen);

/* True when the workload holds a value of option id (for layout: any size
 * or sp; for ckpt: given, off included). */
bool options_is_set(const struct adv_workload *wl, enum options_id id);

/* Fills what dst leaves unset from src (options of lower precedence:
 * #SBATCH lines under the command line). */
void options_merge(struct adv_workload *dst, const struct adv_workload *src);

/*
 * Writes text with each option of the table respelled as advisorctl takes
 * it: "--llm-model=NAME" becomes "--model NAME", "--llm-seq" "--seq"; every
 * other word stays (a fix in the job's own flags, an --llm-NAME that is no
 * row).  For the fixes advisorctl prints; the plugin prints sbatch's.
 */
void options_ctl_spelling(const char *text, char *out, size_t len);

/* Formats seconds as "1h30m" / "45m" / "90s". */
void options_format_duration(double seconds, char *buf, size_t len);

#endif
