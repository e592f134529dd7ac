/*
 * dlog_rec.h - the decision log's record and filter: what dlog.c queues and
 * every store (dlog_sqlite.c, dlog_spool.c, dlog_mariadb.c) writes, reads
 * and selects by.  Types and the bounds of their fields only, so that a
 * store depends on the record, not on the queue that carries it.
 */
#ifndef ADVISOR_DLOG_REC_H
#define ADVISOR_DLOG_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* dlog_query and dlog_scan (and the stores' query and scan): the log's
 * server is down, err says so; -1 is any other failure. */
#define DLOG_ERR_UNAVAILABLE (-2)

#define DLOG_ID_MAX 48
#define DLOG_HOST_MAX 64
/*
 * Issue 21: what the user saw, kept with the decision, each field cut to
 * its bound (bytes): the script's name as sbatch was given it, the
 * findings and the sources of the workload's values.  The job corpus
 * (tests/jobs) needs at most 1.9 KiB of findings and 1.1 KiB of sources.
 */
#define DLOG_SCRIPT_MAX 256
#define DLOG_FINDINGS_MAX 4096
#define DLOG_SOURCES_MAX 2048
/* Issue 27: a SHA-256 of the job's text as hex (jobdigest.h), and its NUL. */
#define DLOG_DIGEST_MAX 65
/* Issue 30: "account " and a policy name (ADV_NAME_MAX), and its NUL. */
#define DLOG_EXEMPT_MAX 80

struct dlog_rec {
	char id[DLOG_ID_MAX];
	int64_t time;              /* unix seconds */
	uint32_t uid;
	char user[64];
	uint32_t job_id;           /* 0 = not known */
	int context;               /* enum adv_context */
	char parent[DLOG_ID_MAX];  /* submission's decision id for steps */
	char gpu[64];
	int gpus, nodes;
	char partition[64];
	bool partition_other;      /* not a partition of the policy: folded as one (issue 27) */
	bool exempt;               /* an admin's (or root's node check): no share (not stored) */
	char model[128];
	char layout[64];           /* "tp8.pp4.cp1.ep1.dp16" */
	char workload[192];        /* "zero=1 precision=bf16 seq=4096 ..." */
	int verdict;
	char codes[320];           /* finding codes, space separated */
	double mem_gib;            /* < 0 = not computed */
	double ckpt_interval_s;    /* < 0 = not computed */
	/* Rollout (issue 8): what enforcement would have done. */
	int mode;                  /* enum adv_mode in force; -1 = not recorded (older rows) */
	char severities[192];      /* severity name per code, same order, space separated */
	char unenforced[320];      /* reject-level codes that warn mode let through */
	/* Issue 14. */
	uint32_t repeat;           /* checks this record stands for; 0 reads as 1 */
	bool query;                /* a what-if query (queries table), not a decision */
	/* Issue 13: the node it was decided on; "" = this one (dlog fills it in). */
	char host[DLOG_HOST_MAX];
	/*
	 * Issue 21: what the user saw.  findings: one line per finding,
	 * "SEVERITY<TAB>CODE<TAB>message<TAB>fix<TAB>fix_job" (tabs and line
	 * ends in the texts become spaces); sources: "field<TAB>where" per
	 * line.  What does not fit ends in a line "+N": N lines left out.
	 * dlog_detail.h writes and reads them.  detail false: a row of an
	 * older daemon, which recorded none of the three ("not recorded").
	 */
	bool detail;
	char script[DLOG_SCRIPT_MAX];  /* "train.sbatch", "stdin", "--wrap"; "" none */
	char findings[DLOG_FINDINGS_MAX];
	char sources[DLOG_SOURCES_MAX];
	/*
	 * Issue 27: the digest of the job's text this decision was made
	 * from, "" none; what a node check naming it as parent must ship
	 * (dlog_confirm).  Kept by the SQLite store only, beside the row.
	 */
	char digest[DLOG_DIGEST_MAX];
	/*
	 * Issue 30: the policy's exemption that let the job through unchecked,
	 * "user alice", "account physics" or "partition debug" (adv_result's
	 * exempt); "" none, and in every row of an older daemon.  Column
	 * `exempt`.  Not the same as exempt above (no share), which is not stored.
	 */
	char exempt_by[DLOG_EXEMPT_MAX];
};

/* show (issue 21) lists at most this many node checks of a submission. */
#define DLOG_SHOW_CHILDREN_MAX 500

/* Days the queries table keeps what-if queries. */
#define DLOG_QUERY_DAYS 7

struct dlog_filter {
	const char *user;          /* NULL = any */
	uint32_t job_id;           /* 0 = any */
	int verdict;               /* < 0 = any */
	int64_t since;             /* unix time, 0 = any */
	int limit;
	bool include_queries;      /* dlog_query: the queries table too */
	/* Issue 21 (dlog_query only). */
	int64_t until;             /* unix time, before it; 0 = any */
	const char *id;            /* one decision by its id; NULL = any */
	const char *parent;        /* the node checks of this submission; NULL = any */
	const char *script;        /* the script's name, or its last path component; NULL = any */
	bool detail;               /* read findings and sources too (show); else left "" */
};

/*
 * Repeats of an aggregated decision (dlog_aggregate) not yet written: n
 * more checks that the row id stands for.  The writer hands a batch's
 * repeats to the store with the batch's records, one UPDATE each.
 */
struct dlog_repeat {
	char id[DLOG_ID_MAX];
	uint64_t n;
	/* Issue 27: not a repeat but a binding: the submission id is now
	 * job bind_job's (dlog_confirm); 0 for a repeat. */
	uint32_t bind_job;
};

#endif
