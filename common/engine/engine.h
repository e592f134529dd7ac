/*
 * engine.h - the advisor engine: resources + workload -> verdict and findings.
 *
 * Pure computation, no I/O; the only allocation is fixcheck.c's results of
 * the judged fixes (a rejected or warned job, issue 26), freed before it
 * returns: the daemon,
 * advisorctl --local, the plugin's tests and the benchmarks all call
 * engine_check() with the same inputs and get the same answer.
 * The types are in workload.h (the request) and result.h (the answer);
 * the names of their enums in names.h.  The arithmetic follows shared/notes/model-math.md; each module says which
 * paper each formula comes from (layout.c, memory.c, checkpoint.c, estimate.c).
 */
#ifndef ADVISOR_ENGINE_H
#define ADVISOR_ENGINE_H

#include "config/catalog.h"
#include "config/policy.h"
#include "names.h"
#include "result.h"
#include "workload.h"

/* Fills a request with "not given" everywhere. */
void engine_request_init(struct adv_request *req);

/*
 * Checks one job.  Never fails: unknown names and impossible inputs are
 * findings.  The verdict is the worst severity after the policy's mode is
 * applied (mode off: accept; warn: rejects become warnings).
 */
void engine_check(const catalog_t *cat, const struct adv_policy *pol,
		  const struct adv_request *req, struct adv_result *res);

#endif
