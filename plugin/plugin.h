/*
 * plugin.h - state and entry points shared by the files of spank_advisor.so
 * (one file per SPANK context, as in pyxis).  Nothing here is exported
 * from the .so: the build hides every symbol but the SPANK ones.
 */
#ifndef ADVISOR_PLUGIN_H
#define ADVISOR_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "engine/engine.h"

#define PLUGIN_PATH_MAX 4096
#define PLUGIN_DEFAULT_TIMEOUT_MS 300
/* Per finding: the finding, its fix in the job's terms, its --llm-* fix. */
#define PLUGIN_MAX_LINES (3 * ADV_MAX_FINDINGS + 4)
#define PLUGIN_LINE_MAX (ADV_MSG_MAX + ADV_CODE_MAX + 32)

/* plugstack.conf arguments (design.md). */
struct plugin_args {
	char socket[PLUGIN_PATH_MAX];
	int timeout_ms;
	bool deny_unavailable;    /* on_unavailable=deny */
	bool quiet;
	bool resources_parse;     /* resources=parse: never read Slurm's own `opt` */
	uid_t server_uid;         /* server_uid=: who advisord must run as; -1: SlurmUser (issue 20) */
	bool allow_unchecked;     /* on_unchecked=allow: the node does not read an unjudged batch script */
};

/* Lines a remote check wants printed (and failed) in task_init. */
struct plugin_lines {
	int n;
	char line[PLUGIN_MAX_LINES][PLUGIN_LINE_MAX];
};

struct plugin_state {
	struct plugin_args args;
	struct adv_workload wl;   /* from the --llm-* option callbacks */
	int n_llm;                /* how many --llm-* options were given */
	bool remote_reject;       /* task_init must fail the step */
	int remote_fd;            /* the node check's connection, made as root; -1 none */
	int remote_rc;            /* how making it went (enum wire_err) */
	struct plugin_lines remote_lines;
	size_t script_max;        /* Slurm's max_script_size (issue 27) */
};

/*
 * ADVISOR_SCRIPT_UNREAD, set by sbatch for the node: "1" when the
 * submission had no script to read (sbatch fed on a pipe), "partial" when
 * its text stood for part of it only (issue 27: SCRIPT_TRUNCATED); either
 * way the node reads the script and judges it.
 */
#define PLUGIN_UNREAD_NONE "1"
#define PLUGIN_UNREAD_PART "partial"

/* args.c: parses "key=value" words; unknown keys and bad values are
 * reported in err ("; "-separated) and skipped.  Returns their count. */
void args_defaults(struct plugin_args *a);
int args_parse(int argc, char *const argv[], struct plugin_args *a, char *err, size_t errlen);
/* The time to read the batch script (issue 27): half of timeout_ms, the
 * daemon's answer has the rest; at least 1 ms. */
int args_read_ms(const struct plugin_args *a);

/* annotate.c: the user-visible lines of a verdict, each "advisor: ..." */
void annotate_lines(const struct adv_result *res, const struct adv_request *req,
		  bool with_warnings, struct plugin_lines *out);
/* The ADVISOR_* values of design.md: annotate_var_names and annotate_vars'
 * values are indexed by these. */
enum report_var {
	REPORT_VERDICT = 0, REPORT_LAYOUT, REPORT_MEM_GIB, REPORT_CKPT_INTERVAL_S,
	REPORT_DECISION_ID, REPORT_NVARS
};
extern const char *const annotate_var_names[REPORT_NVARS];
void annotate_vars(const struct adv_result *res, const char *decision_id,
		 char values[REPORT_NVARS][64]);
/* "user" of the calling uid, "" when unknown */
void annotate_user_name(unsigned uid, char *buf, size_t len);

#endif
