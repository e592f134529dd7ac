/*
 * evaluate.h - one job judged (evaluate.c): what engine_check() and the
 * planner share.
 */
#ifndef ADVISOR_ENGINE_EVALUATE_H
#define ADVISOR_ENGINE_EVALUATE_H

#include "config/catalog.h"
#include "config/policy.h"
#include "job.h"
#include "result.h"
#include "workload.h"

/*
 * engine_check() without the policy's mode and without the BEST_PLAN
 * finding (evaluate.c): every finding at its own severity.  The planner
 * verifies its plans with it (engine_check() itself plans for rejected jobs).
 */
void engine_evaluate(const catalog_t *cat, const struct adv_policy *pol,
		     const struct adv_request *req, struct adv_result *res);

/*
 * The job a request describes, as engine_check() resolves it (evaluate.c):
 * catalog entries, workload defaults, layout and global batch.  Findings
 * about names and the GPU count go to res (may be NULL).  Returns 0 when
 * the job has a layout (at least one GPU), -1 otherwise.
 */
/*
 * The gradient dtype (enum adv_precision) a request's job keeps: stated, or
 * its framework's documented default; ADV_UNSET leaves it to the policy's
 * grad_bytes.
 */
int engine_default_grad_dtype(const struct adv_workload *wl);

int engine_resolve(const catalog_t *cat, const struct adv_request *req,
		   const struct adv_partition *part, struct adv_job *job, struct adv_result *res);

/* Resolution, layout rules, memory, estimates and checkpoint of one job,
 * the findings added to res as they arise. */
void evaluate_job(const catalog_t *cat, const struct adv_policy *pol,
		  const struct adv_request *req, struct adv_result *res);

/*
 * One job judged as engine_check() judges it, after the mode and the job
 * reader's findings and before the fixes are checked and the best plan:
 * origins, the policy's require:, the job's evaluation, and the rule that
 * a reject never rests on an assumed value (engine.c).  fixcheck.c judges
 * every fix it prints with it.
 */
void engine_judge(const catalog_t *cat, const struct adv_policy *pol,
		  const struct adv_request *req, struct adv_result *res);

/* The verdict from the worst finding under res->mode (warn mode turns
 * rejects into warnings and says so in their message). */
void evaluate_apply_mode(struct adv_result *res);

#endif
