/*
 * rollout.h - `advisorctl report`: what the decision log says about a
 * period, per finding code, partition, verdict and mode, so that an admin
 * can see what `mode: enforce` would have blocked while the site ran in
 * `mode: warn` (issue 8).
 */
#ifndef ADVISOR_ROLLOUT_H
#define ADVISOR_ROLLOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "advisor.pb-c.h"
#include "service/arena.h"

/*
 * Summarises the decisions since `since` (unix time) of user (NULL = all)
 * into *out, allocated in a: by job (by_decision false, issue 30: a node
 * check that names its submission is folded into it) or by decision.
 * 0, or an Advisor__ErrorCode with err.
 */
int rollout_report(int64_t since, const char *user, bool by_decision, struct arena *a,
		   Advisor__ReportResponse **out, char *err, size_t errlen);

#endif
