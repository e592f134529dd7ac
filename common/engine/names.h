/*
 * names.h - the names of the engine's enums as users write them (names.c).
 */
#ifndef ADVISOR_ENGINE_NAMES_H
#define ADVISOR_ENGINE_NAMES_H

#include <stddef.h>

#include "result.h"
#include "workload.h"

const char *engine_verdict_name(enum adv_verdict v);
const char *engine_severity_name(enum adv_severity s);
const char *engine_precision_name(int p);
const char *engine_recompute_name(int r);
const char *engine_task_name(int t);
const char *engine_framework_name(int f);
const char *engine_attention_name(int a);
const char *engine_context_name(enum adv_context c);
/* "tp8.pp4.cp1.ep1.dp16" (ADVISOR_LAYOUT) */
void engine_layout_string(const struct adv_layout_out *l, char *buf, size_t len);
/* The same as shown to people: "tp?" for a size only the engine assumed
 * (from: a result's origins, enum adv_origin by enum adv_field; NULL for
 * none), so that no made-up size reads as the job's. */
void engine_layout_string_from(const struct adv_layout_out *l, const unsigned char *from,
			       char *buf, size_t len);

#endif
