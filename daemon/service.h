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
#include "engine.h"
#include "snapshot.h"

/* Decodes a check, runs the engine; user names the caller. */
int service_check_request(const Advisor__CheckRequest *m, const char *user,
			  struct adv_request *req, char *err, size_t errlen);
Advisor__CheckResponse *service_check_answer(struct arena *a, const struct adv_result *res,
					     const char *decision_id);
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
