/*
 * fixcheck.h - every fix a check prints is applied to the job and judged
 * again first (fixcheck.c, issue 26).
 */
#ifndef ADVISOR_ENGINE_FIXCHECK_H
#define ADVISOR_ENGINE_FIXCHECK_H

#include "config/catalog.h"
#include "config/policy.h"
#include "result.h"
#include "workload.h"

/*
 * Keeps only the fix alternatives of res's findings that remove their
 * finding when applied (and pass the job, where it was its only reject);
 * composes the fixes of rejects that follow from another, and folds those
 * the root's fix removes into notes under it.  Only the findings from
 * index from on are the job's judgement (engine_judge()): the reader's
 * notes and the front end's own findings before them are left as they
 * are.  Call before the best plan and the mode.
 */
void fixcheck_run(const catalog_t *cat, const struct adv_policy *pol,
		  const struct adv_request *req, struct adv_result *res, int from);

#endif
