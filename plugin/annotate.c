/*
 * annotate.c - what a user sees from the plugin, and the ADVISOR_* variables
 * of design.md.  Every line starts with "advisor: " so a user can tell the
 * advisor's words from Slurm's; a reject shows each finding with the fix
 * that would make the job pass, so the next submission can just work:
 * first in the job's own terms when the daemon read the job
 * ("fix: --tensor-model-parallel-size 4 (train.sbatch line 6, TP=3)"),
 * then as an --llm-* option ("or:  --llm-layout=tp4").
 */
#include "config.h"

#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/findings.h"
#include "plugin.h"
#include "util.h"

const char *const annotate_var_names[REPORT_NVARS] = {
	[REPORT_VERDICT] = "ADVISOR_VERDICT", [REPORT_LAYOUT] = "ADVISOR_LAYOUT",
	[REPORT_MEM_GIB] = "ADVISOR_MEM_GIB", [REPORT_CKPT_INTERVAL_S] = "ADVISOR_CKPT_INTERVAL_S",
	[REPORT_DECISION_ID] = "ADVISOR_DECISION_ID",
};
/* Designated rows: one left out is a NULL row, which test_tables finds
 * (issue 27). */
_Static_assert(ADV_ARRAY_SIZE(annotate_var_names) == REPORT_NVARS, "a name for each value");

static void report_add(struct plugin_lines *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One line, its control characters and invalid UTF-8 shown as \xNN
 * (issue 20): the model name and the daemon's words reach the user's
 * terminal and the slurmd log, which must not act on them. */
static void report_add(struct plugin_lines *out, const char *fmt, ...)
{
	char raw[PLUGIN_LINE_MAX];
	va_list ap;

	if (out->n >= PLUGIN_MAX_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	adv_escape_text(out->line[out->n++], PLUGIN_LINE_MAX, raw);
}

/* One line of a finding (engine_finding_lines), cut at PLUGIN_LINE_MAX. */
static void report_line(const char *text, void *ctx)
{
	report_add(ctx, "%s", text);
}

static void report_summary(const struct adv_result *res, const struct adv_request *req,
			   struct plugin_lines *out)
{
	/* The model as judged: read from the job, or --llm-model. */
	const char *model = res->model[0] ? res->model : req->wl.model;
	char what[160], layout[96] = "", mode[ADV_NAME_MAX * 2 + 80] = "";

	if (res->has_layout)
		engine_layout_string_from(&res->layout, res->from, layout, sizeof(layout));
	adv_snprintf(what, sizeof(what), "%s%s%d %s%s%s%s",
		     model, model[0] ? " on " : "",
		     res->has_layout ? res->layout.gpus : req->res.gpus,
		     req->res.gpu[0] ? req->res.gpu : "", req->res.gpu[0] ? " GPUs" : "GPUs",
		     layout[0] ? ", layout " : "", layout);
	/* -p a,b: the partition whose mode applies, the strictest (issue 20). */
	if (res->mode_partition[0])
		adv_snprintf(mode, sizeof(mode), " [%s mode, set by partition %s of -p %s%s]",
			     res->mode == ADV_MODE_ENFORCE ? "enforce" :
			     res->mode == ADV_MODE_WARN ? "warn" : "off", res->mode_partition,
			     req->res.partition, res->mode == ADV_MODE_WARN
			     ? ": problems are not enforced here" : "");
	else if (res->mode == ADV_MODE_WARN)
		adv_strlcpy(mode, " [warn mode: problems are not enforced here]", sizeof(mode));
	if (res->verdict == ADV_REJECT)
		report_add(out, "advisor: job rejected (%s): it cannot work as submitted%s", what,
			   mode);
	else if (res->verdict == ADV_WARN)
		report_add(out, "advisor: job accepted with warnings (%s)%s", what, mode);
	else
		report_add(out, "advisor: job accepted (%s)%s", what,
			   res->mode_partition[0] ? mode : "");
}

void annotate_lines(const struct adv_result *res, const struct adv_request *req,
		  bool with_warnings, struct plugin_lines *out)
{
	int i;

	out->n = 0;
	report_summary(res, req, out);
	for (i = 0; i < res->n_findings; i++) {
		const struct adv_finding *f = &res->findings[i];

		if (f->severity == ADV_SEV_INFO && res->verdict != ADV_ACCEPT)
			continue;
		/* BEST_PLAN carries the layout that would pass: a reject always
		 * shows it, even where warnings are hidden (quiet=1, the node). */
		if (f->severity < ADV_SEV_REJECT && !with_warnings &&
		    !(res->verdict == ADV_REJECT && engine_finding_is(f, ADV_CODE_BEST_PLAN)))
			continue;
		/* The fix in the job's own terms first (the line and the flag
		 * to change), then the --llm-* form: the lines `advisorctl
		 * show` prints again. */
		engine_finding_lines(f, report_line, out);
	}
}

void annotate_vars(const struct adv_result *res, const char *decision_id,
		 char values[REPORT_NVARS][64])
{
	adv_snprintf(values[REPORT_VERDICT], 64, "%s", engine_verdict_name(res->verdict));
	values[REPORT_LAYOUT][0] = '\0';
	if (res->has_layout)
		engine_layout_string_from(&res->layout, res->from, values[REPORT_LAYOUT], 64);
	values[REPORT_MEM_GIB][0] = '\0';
	if (res->has_memory)
		adv_snprintf(values[REPORT_MEM_GIB], 64, "%.1f", res->memory.per_gpu_gib);
	values[REPORT_CKPT_INTERVAL_S][0] = '\0';
	if (res->has_checkpoint)
		adv_snprintf(values[REPORT_CKPT_INTERVAL_S], 64, "%.0f", res->checkpoint.optimal_s);
	adv_snprintf(values[REPORT_DECISION_ID], 64, "%s", decision_id ? decision_id : "");
}

void annotate_user_name(unsigned uid, char *buf, size_t len)
{
	struct passwd pw, *found = NULL;
	char tmp[1024];

	buf[0] = '\0';
	if (getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &found) == 0 && found)
		adv_strlcpy(buf, found->pw_name, len);
}
