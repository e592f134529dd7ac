/*
 * provenance.h - where the values a finding rests on came from, and the
 * rule that a reject never rests on an assumed one (provenance.c).
 */
#ifndef ADVISOR_ENGINE_PROVENANCE_H
#define ADVISOR_ENGINE_PROVENANCE_H

#include <stdbool.h>

#include "config/catalog.h"
#include "config/policy.h"
#include "result.h"
#include "workload.h"

/* "tp", "seq", ... (the job reader's field names). */
const char *provenance_field_name(enum adv_field f);
/* "job", "option", "framework default", "policy default", "default", "assumed". */
const char *provenance_origin_name(enum adv_origin o);
/* The --llm-* option (without "--llm-") that states a field: "seq", "layout"; "" for none. */
const char *provenance_option(enum adv_field f);

/* Fills res->from with the origin of every resolved value. */
void provenance_resolve(const struct adv_request *req, struct adv_result *res);

/* The request gives field f a value (an --llm-* option or the job). */
bool provenance_is_set(const struct adv_workload *wl, enum adv_field f);

/*
 * For the findings from index from on: records the values each rests on
 * (uses), and turns a reject that rests on an assumed value into a warning
 * that names the assumption and the options that state it.  Memory stays a
 * reject when it does not fit even at the least memory the assumed values
 * could take, which it writes to res->memory.least_gib (least_bounded:
 * issue 26's "at least" figure).  Call after provenance_resolve() and the
 * job's evaluation, before the mode applies.
 */
void provenance_guard(const catalog_t *cat, const struct adv_policy *pol,
		      const struct adv_request *req, struct adv_result *res, int from);

#endif
