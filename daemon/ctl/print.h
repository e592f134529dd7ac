/*
 * print.h - advisorctl's output: short verdict lines and aligned tables
 * for people, the JSON objects of design.md for scripts (--json).
 */
#ifndef ADVISOR_CTL_PRINT_H
#define ADVISOR_CTL_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "advisor.pb-c.h"
#include "engine/engine.h"

struct json_object;

/* One JSON document, pretty, UTF-8 checked (every --json output). */
void print_json(FILE *f, struct json_object *o);

void print_check(FILE *f, const struct adv_result *res, const char *decision_id, bool json);
/* check --verbose: for a job that is not an LLM job, what the reader read
 * that says so (the "read from the job" table); nothing otherwise. */
void print_not_llm_why(FILE *f, const struct adv_result *res);
void print_ckpt(FILE *f, const Advisor__CkptResponse *r, bool json);
void print_plan(FILE *f, const Advisor__PlanResponse *r, bool json);
void print_catalog(FILE *f, const Advisor__CatalogResponse *r, bool json);
void print_policy(FILE *f, const Advisor__PolicyResponse *r, bool json);
void print_history(FILE *f, const Advisor__HistoryResponse *r, bool json);
/* advisorctl show (issue 21): r->decisions[0] with what its user saw, and its links. */
void print_show(FILE *f, const Advisor__HistoryResponse *r, bool json);
void print_stats(FILE *f, const Advisor__StatsResponse *r, bool json);
void print_reload(FILE *f, const Advisor__ReloadResponse *r, bool json);
void print_status(FILE *f, const Advisor__StatusResponse *r, bool json);
/* Prometheus text exposition format 0.0.4 of `advisorctl stats --prometheus`. */
void print_prometheus(FILE *f, const Advisor__StatsResponse *r);
/* What --prometheus prints when the daemon cannot be reached: advisor_up 0. */
void print_prometheus_down(FILE *f);
void print_report(FILE *f, const Advisor__ReportResponse *r, bool json);

#endif
