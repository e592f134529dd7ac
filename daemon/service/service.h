/*
 * service.h - answers computed the same way by advisord and by
 * `advisorctl --local`: check, ckpt, catalog, policy and plan.
 *
 * Everything an answer points to is allocated in the caller's arena, so the
 * answer lives until the arena is reset.  Functions return 0 or an
 * Advisor__ErrorCode with a message in err.
 */
#ifndef ADVISOR_SERVICE_H
#define ADVISOR_SERVICE_H

#include <stddef.h>

#include "advisor.pb-c.h"
#include "arena.h"
#include "engine/engine.h"
#include "jobread/jobread.h"
#include "snapshot.h"

#define SERVICE_MAX_PRE 16

/* What a check needs besides the request, and what it may answer instead
 * of a verdict. */
struct service_check_io {
	struct arena *arena;            /* where the reader's output lives */
	struct adv_finding pre[SERVICE_MAX_PRE];  /* the reader's findings */
	/* Set when the reader needs files first: answer with need_files. */
	char (*need)[JOBREAD_PATH_MAX];
	int n_need;
	/* Files the reader wanted that the client never read (job_submit ships
	 * none, issue 31): the judgment lacks them, and the node reads them. */
	int unshipped;
};

/* Decodes a check, runs the engine; user names the caller. */
int service_check_request(const Advisor__CheckRequest *m, const char *user,
			  struct adv_request *req, char *err, size_t errlen);
Advisor__CheckResponse *service_check_answer(struct arena *a, const struct adv_result *res,
					     const char *decision_id);
/*
 * A whole check: decode, take what the job leaves out from the live cluster
 * (a plugin's check without -p runs in the default partition; a GPU type
 * neither the job nor the partition's policy names is that of the
 * partition's nodes: slurmgres.h), read the job's own text when the
 * request carries it (jobread.h), apply the --llm-* options over it, run the engine and
 * annotate the result with sources and fixes in the job's terms.  When
 * the reader needs files first, io->n_need > 0 and res is not filled.
 */
int service_check(const struct snapshot *s, const Advisor__CheckRequest *m, const char *user,
		  struct adv_request *req, struct adv_result *res, struct service_check_io *io,
		  char *err, size_t errlen);
/*
 * The partition's label in the metrics (issue 20): for the partition a
 * request named (before Slurm's default is filled in), the policy's
 * spelling when the policy lists it, "" when it named none (the default
 * partition), "_other" for any other name: a client names the partition,
 * so made-up names must not become labels or push the policy's out of the
 * bounded table.
 */
const char *service_partition_label(const struct snapshot *s, const char *named);
/* The answer that asks the client for files (no verdict, no decision). */
Advisor__CheckResponse *service_need_answer(struct arena *a, char (*need)[JOBREAD_PATH_MAX], int n);
int service_ckpt(const struct snapshot *s, const Advisor__CkptRequest *m, const char *user,
		 struct arena *a, Advisor__CkptResponse **out, char *err, size_t errlen);
int service_catalog(const struct snapshot *s, const Advisor__CatalogRequest *m,
		    struct arena *a, Advisor__CatalogResponse **out, char *err, size_t errlen);
int service_policy(const struct snapshot *s, struct arena *a, Advisor__PolicyResponse **out,
		   char *err, size_t errlen);
int service_plan(const struct snapshot *s, const Advisor__PlanRequest *m, const char *user,
		 struct arena *a, Advisor__PlanResponse **out, char *err, size_t errlen);

/* Sets resp->error (allocated in a). */
void service_error(Advisor__Response *resp, struct arena *a, int code, const char *msg);

/*
 * advisorctl --local: answers req as the daemon would for the requests that
 * need no daemon state; others get ERR_UNAVAILABLE.
 */
void service_local(const struct snapshot *s, const Advisor__Request *req, const char *user,
		   struct arena *a, Advisor__Response *resp);

#endif
