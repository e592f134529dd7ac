/*
 * audit.h - the jobs Slurm's accounting kept, read through sacct, for
 * `advisorctl audit` (issue 30).
 */
#ifndef ADVISOR_CTL_AUDIT_H
#define ADVISOR_CTL_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* One job as sacct lists it, and advisor's verdict when it was judged. */
struct audit_job {
	char id[32];
	char user[64];
	char account[64];
	char partition[64];
	char state[32];
	char exit[16];
	char workdir[1024];
	long elapsed_s;
	int nnodes;
	int gpus;                  /* AllocTRES gres/gpu */
	/* Filled by the caller. */
	bool judged;               /* false: no script stored, or unreadable */
	char why[128];             /* why not judged */
	enum adv_verdict verdict;
	bool exempt;
	char codes[256];           /* the findings' codes, comma separated */
};

/* A run of sacct: at most max_out bytes of its output, within timeout_ms. */
struct audit_query {
	int64_t since, until;      /* epoch seconds; until 0: now */
	const char *user;          /* NULL: every user */
	const char *partition;     /* NULL: every partition */
	size_t limit;              /* at most this many jobs */
	int timeout_ms;            /* per sacct run */
};

/* Exit statuses as advisorctl's (sysexits). */
#define AUDIT_UNAVAIL 69
#define AUDIT_SOFTWARE 70

/* The jobs of the period (oldest first), *n of them, malloc'd in *jobs; 0,
 * or an exit status with the reason on stderr.  *more: there were more
 * than q->limit. */
int audit_list(const struct audit_query *q, struct audit_job **jobs, size_t *n, bool *more);

/* The job's batch script as Slurm stored it (at most max bytes) in *text,
 * malloc'd: 0; 1 when none is stored (*text NULL); -1 on failure (why). */
int audit_script(const char *id, int timeout_ms, size_t max, char **text, size_t *len,
		 char *why, size_t whylen);

/* The job's environment as stored (AccountingStoreFlags=job_env) as a
 * NULL-terminated "NAME=value" array in *env (audit_env_free), or *env NULL
 * when none is stored.  0, or -1 on failure. */
int audit_env(const char *id, int timeout_ms, char ***env);
void audit_env_free(char **env);

/* The audit's rows and summary, text or --json (advisorctl(1) audit). */
void audit_print(FILE *f, const struct audit_job *jobs, size_t n, bool more, bool json);

#endif
