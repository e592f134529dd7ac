/*
 * policy.h - site policy (policy.yaml, see advisor-policy.yaml(5)).
 *
 * The policy is a plain read-only struct once loaded; every key has a
 * documented default so that an empty file is a valid, permissive policy.
 */
#ifndef ADVISOR_POLICY_H
#define ADVISOR_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "catalog.h"

enum adv_mode { ADV_MODE_OFF = 0, ADV_MODE_WARN = 1, ADV_MODE_ENFORCE = 2, ADV_MODE_COUNT };

struct adv_partition {
	char name[ADV_NAME_MAX];
	char gpu[ADV_NAME_MAX];  /* catalog GPU name, "" = from the live cluster */
	int gpus_per_node;       /* 0 = from the GPU entry */
	bool has_mode;
	enum adv_mode mode;
	int max_gpus;            /* 0 = no limit */
};

struct adv_policy {
	enum adv_mode mode;
	bool user_mode_override;

	/* memory */
	double reserve_gib;        /* subtracted from the catalog capacity */
	double overhead_gib;       /* runtime overhead counted per GPU (NCCL, allocator) */
	double warn_headroom;      /* fraction of usable memory */
	int grad_bytes;            /* 2 (bf16) or 4 (fp32 main grads, Megatron) */
	double allocator_margin;   /* training: reserved over peak allocated, fraction */

	/* checkpoint */
	double gpu_mtbf_hours;
	double node_mtbf_hours;    /* 0 = use gpu_mtbf_hours */
	double restart_minutes;
	double storage_write_gbps; /* aggregate, GB/s */
	double node_write_gbps;    /* per node, GB/s; 0 = no per-node limit */
	double warn_extra_waste;   /* fraction, e.g. 0.02 = 2 points */
	double reject_extra_waste;
	int require_above_gpus;    /* CKPT_MISSING above this many GPUs */

	/* layout */
	double max_pipeline_bubble;

	/* estimates */
	double mfu;                /* model FLOPs utilisation assumed for estimates */
	double pue;

	/* decision log */
	int retention_days;
	int log_max_mb;            /* size bound of the decision log; 0 = none */
	/* Issue 27: rows one user's checks may add per minute; beyond, they
	 * fold into one row per verdict (what-if queries: not logged). */
	int log_user_rows_per_min;
	/* Free space kept on the log's file system: below it, an over-share
	 * user's checks are answered and counted, not logged. */
	int log_reserve_mb;

	/* per-uid request budget (issue 14); admins are exempt */
	double requests_per_s;     /* token refill rate; 0 = no limit */
	int burst;                 /* bucket size: requests a user may make at once */

	/* job reader (issue 18): severity of SCRIPT_NOT_FOLLOWED, 0 info,
	 * 1 warn (default), 2 reject (enum adv_severity's values) */
	int reader_not_followed;

	/* require: [recompute, zero] (issue 26): settings every LLM job must
	 * state (the job's text, an --llm-* option or its framework's
	 * documented default); a job that leaves one out is rejected with
	 * VALUE_REQUIRED.  Names from policy_require_names. */
	char **require;
	size_t n_require;

	struct adv_partition *partitions;
	size_t n_partitions;

	char **exempt_users;
	size_t n_exempt_users;
	char **exempt_accounts;
	size_t n_exempt_accounts;
	char **admin_users;
	size_t n_admin_users;
	char **admin_groups;
	size_t n_admin_groups;

	char *file;
};

enum policy_err {
	POLICY_OK = 0,
	POLICY_ERR_IO,
	POLICY_ERR_SYNTAX,
	POLICY_ERR_SCHEMA,
	POLICY_ERR_VALUE,
	POLICY_ERR_DUPLICATE,
	POLICY_ERR_NOMEM,
};

/* Fills every field with its documented default. */
void policy_defaults(struct adv_policy *p);

/*
 * Loads path into a new policy.  The catalog (may be NULL) checks that
 * partitions name known GPUs.  On error returns a policy_err, *out is NULL
 * and err holds "FILE:LINE:COL: message".
 */
int policy_load(const char *path, const catalog_t *cat, struct adv_policy **out,
		char *err, size_t errlen);
int policy_load_string(const char *name, const char *text, const catalog_t *cat,
		       struct adv_policy **out, char *err, size_t errlen);
void policy_destroy(struct adv_policy *p);
const char *policy_strerror(int code);

/* Case-insensitive partition lookup; NULL when the policy does not list it.
 * A comma list ("debug,h100", as sbatch -p takes) finds its first. */
const struct adv_partition *policy_find_partition(const struct adv_policy *p,
						  const char *name);
/* The mode in force for a partition (its own, else the global one); for a
 * comma list, the strictest of its partitions' (policy_mode_list). */
enum adv_mode policy_mode_for(const struct adv_policy *p, const char *partition);
/*
 * The strictest mode (enforce > warn > off) among the partitions of a
 * comma list, each its own mode or else the global one; by (bylen bytes,
 * may be NULL) gets the partition that set it, the first listed on a tie,
 * "" when the list is empty (the global mode).
 */
enum adv_mode policy_mode_list(const struct adv_policy *p, const char *partitions,
			       char *by, size_t bylen);
bool policy_is_admin(const struct adv_policy *p, uid_t uid, const char *user,
		     const gid_t *groups, size_t n_groups);
bool policy_is_exempt(const struct adv_policy *p, const char *user, const char *account);
const char *policy_mode_name(enum adv_mode m);
/* "info", "warn" or "reject" for 0, 1, 2 (reader.not_followed). */
const char *policy_severity_name(int sev);

/*
 * Renders the policy in force, every default filled in, as YAML that
 * policy_load() reads back to the same values (for `advisorctl policy`).
 * A leading comment names the file it came from.  Returns the length
 * written (buf is always terminated), or -1 when len is too small; 8 KiB
 * holds any policy with a few dozen partitions.
 */
int policy_render_yaml(const struct adv_policy *p, char *buf, size_t len);

/* The settings require: may name, NULL-ended (the job reader's field names). */
extern const char *const policy_require_names[];

#endif
