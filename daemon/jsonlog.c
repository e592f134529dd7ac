/*
 * jsonlog.c - decisions as JSON lines for central log collection (issue 8).
 *
 * The decision log (SQLite) stays on the login node; sites that collect
 * logs centrally (rsyslog/journald forwarding into Elasticsearch, Loki,
 * Splunk) want each decision as one self-describing line instead.  The
 * fields and their names are those of `advisorctl history --json`, so one
 * parser serves both.  The line is built with json-c (user and model names
 * are client data and need escaping) and written with one syslog(3) call
 * or one write(2), so lines from worker threads never interleave.
 * json-c copies bytes >= 0x80 as they come: the line is made valid UTF-8
 * (adv_json_utf8, issue 20) before it leaves, or a collector's parser
 * would drop it.
 */
#include "config.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "config/policy.h"
#include "engine/engine.h"
#include "jsonlog.h"
#include "util.h"

static bool use_syslog, use_stderr;

void jsonlog_open(bool to_syslog, bool to_stderr)
{
	use_syslog = to_syslog;
	use_stderr = to_stderr;
	/* Same ident and facility as advisord --syslog; opening twice is harmless. */
	if (use_syslog)
		openlog("advisord", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void jsonlog_close(void)
{
	if (use_syslog)
		closelog();
	use_stderr = false;
	use_syslog = false;
}

bool jsonlog_to_stderr(void)
{
	return use_stderr;
}

static json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

/* 10 significant digits, as advisorctl --json prints numbers. */
static json_object *number(double v)
{
	char s[40];

	snprintf(s, sizeof(s), "%.10g", v);
	return json_object_new_double_s(v, s);
}

static json_object *words(const char *list)
{
	json_object *a = json_object_new_array();
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		json_object_array_add(a, json_object_new_string(t));
	return a;
}

static json_object *decision_json(const struct dlog_rec *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(r->id));
	json_object_object_add(o, "time", json_object_new_int64(r->time));
	json_object_object_add(o, "host", str_or_null(r->host));
	json_object_object_add(o, "user", str_or_null(r->user));
	json_object_object_add(o, "uid", json_object_new_int64(r->uid));
	json_object_object_add(o, "job_id", r->job_id ? json_object_new_int64(r->job_id) : NULL);
	json_object_object_add(o, "context",
			       json_object_new_string(engine_context_name((enum adv_context)r->context)));
	json_object_object_add(o, "partition", str_or_null(r->partition));
	json_object_object_add(o, "gpu", str_or_null(r->gpu));
	json_object_object_add(o, "gpus", json_object_new_int(r->gpus));
	json_object_object_add(o, "nodes", json_object_new_int(r->nodes));
	json_object_object_add(o, "model", str_or_null(r->model));
	json_object_object_add(o, "layout", str_or_null(r->layout));
	json_object_object_add(o, "verdict",
			       json_object_new_string(engine_verdict_name((enum adv_verdict)r->verdict)));
	json_object_object_add(o, "mode", r->mode >= 0
			       ? json_object_new_string(policy_mode_name((enum adv_mode)r->mode)) : NULL);
	json_object_object_add(o, "codes", words(r->codes));
	json_object_object_add(o, "unenforced", words(r->unenforced));
	json_object_object_add(o, "mem_gib", r->mem_gib >= 0 ? number(r->mem_gib) : NULL);
	json_object_object_add(o, "ckpt_interval_s", r->ckpt_interval_s >= 0
			       ? number(r->ckpt_interval_s) : NULL);
	/* Issue 21: a node check's submission, the batch script's name (history --json's). */
	json_object_object_add(o, "parent", str_or_null(r->parent));
	json_object_object_add(o, "script", str_or_null(r->script));
	/* Issue 30: the exemption that let the job through unchecked. */
	json_object_object_add(o, "exempt", str_or_null(r->exempt_by));
	return o;
}

void jsonlog_decision(const struct dlog_rec *r)
{
	json_object *o;
	char *s;

	if (!use_syslog && !use_stderr)
		return;
	o = decision_json(r);
	s = adv_json_utf8_dup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	if (!s) {
		json_object_put(o);
		return;
	}
	if (use_syslog)
		syslog(LOG_INFO, "%s", s);
	if (use_stderr) {
		size_t n = strlen(s);
		char line[4096];

		if (n < sizeof(line) - 1) {
			memcpy(line, s, n);
			line[n++] = '\n';
			if (write(STDERR_FILENO, line, n) < 0) {
				/* Nowhere left to report that stderr is gone. */
			}
		}
	}
	free(s);
	json_object_put(o);
}
