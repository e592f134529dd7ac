/*
 * policy.c - site policy, loaded from policy.yaml.
 *
 * Implements the policy half of issue 2 and the policy.yaml schema of
 * design.md (documented, with every default, in advisor-policy.yaml(5)).
 * Defaults come first and the file only overrides them, so an empty file
 * is a valid policy.  The defaults are the figures model-math.md argues
 * for: a per-GPU MTBF of 25,000 h (between Meta's research clusters,
 * 8,000-30,000 h, and Llama 3's ~50,000 h), extra checkpoint waste judged
 * in percentage points over the optimum because the optimum is flat, and a
 * few GiB of memory held back for the CUDA context, NCCL and fragmentation.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "policy.h"
#include "util.h"
#include "yamlutil.h"

_Static_assert((int)POLICY_ERR_IO == (int)YAMLUTIL_ERR_IO, "error codes must agree");
_Static_assert((int)POLICY_ERR_SYNTAX == (int)YAMLUTIL_ERR_SYNTAX, "error codes must agree");
_Static_assert((int)POLICY_ERR_SCHEMA == (int)YAMLUTIL_ERR_SCHEMA, "error codes must agree");
_Static_assert((int)POLICY_ERR_VALUE == (int)YAMLUTIL_ERR_VALUE, "error codes must agree");
_Static_assert((int)POLICY_ERR_DUPLICATE == (int)YAMLUTIL_ERR_DUPLICATE, "error codes must agree");
_Static_assert((int)POLICY_ERR_NOMEM == (int)YAMLUTIL_ERR_NOMEM, "error codes must agree");

/* Documented defaults (advisor-policy.yaml(5)). */
/*
 * Upper bounds of the checkpoint inputs: far beyond any real cluster, and
 * low enough that the engine's seconds (hours x 3600, exponentials of
 * T / M) stay finite.  A billion hours is 114,000 years; a million
 * minutes of restart is two years; a million GB/s is a petabyte per second.
 */
#define POLICY_MAX_MTBF_HOURS 1e9
#define POLICY_MAX_RESTART_MINUTES 1e6
#define POLICY_MAX_WRITE_GBPS 1e6
#define POLICY_DEFAULT_RESERVE_GIB 3.0
#define POLICY_DEFAULT_OVERHEAD_GIB 1.0
#define POLICY_DEFAULT_WARN_HEADROOM 0.10
#define POLICY_DEFAULT_GRAD_BYTES 4         /* fp32 main grads, as Megatron keeps them */
/*
 * Training: what PyTorch's CUDA caching allocator reserves beyond the peak
 * the tensors allocate (torch.cuda.max_memory_reserved over
 * max_memory_allocated): block rounding (requests above 1 MB rounded to
 * 2 MB, 2 MB and 20 MB segments) and fragmentation between segments, which
 * PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True reduces (PyTorch docs,
 * "CUDA semantics", "Memory management" and "Optimizing memory usage with
 * PYTORCH_CUDA_ALLOC_CONF").  The size is workload-dependent and no
 * upstream document gives one.  Issue 29 collected 13 published pairs of
 * Megatron's report_memory "max allocated" and "max reserved" (tests/
 * accuracy/allocator-pairs.json: LLM training runs, 8 to 64 GPUs): median
 * 1.145, 90th percentile 1.25, and about 1.01 for runs near the GPU's
 * capacity, where the allocator frees its cached blocks and retries a
 * failed cudaMalloc (c10/cuda/CUDACachingAllocator.cpp) before it raises
 * an OOM.  So the reject compares the allocated peak, and the margin, the
 * pairs' median rounded, 15%, is what the headroom warning adds; a site
 * sets its own from torch.cuda.memory_stats().
 */
#define POLICY_DEFAULT_ALLOCATOR_MARGIN 0.15
#define POLICY_DEFAULT_GPU_MTBF_HOURS 25000.0
#define POLICY_DEFAULT_RESTART_MINUTES 10.0
#define POLICY_DEFAULT_STORAGE_WRITE_GBPS 50.0
#define POLICY_DEFAULT_WARN_EXTRA_WASTE 0.02
#define POLICY_DEFAULT_REJECT_EXTRA_WASTE 0.10
#define POLICY_DEFAULT_REQUIRE_ABOVE_GPUS 64
#define POLICY_DEFAULT_MAX_PIPELINE_BUBBLE 0.25
/* 0: estimates come from the calibrated model of estimate.c; a site may
 * impose its own measured end-to-end MFU instead. */
#define POLICY_DEFAULT_MFU 0.0
#define POLICY_DEFAULT_PUE 1.2
#define POLICY_DEFAULT_RETENTION_DAYS 90
/*
 * Issue 14: a busy user's shell loop logged 30 MB a minute.  50 requests a
 * second per user with a burst of 500 is far above what a person or a job
 * array's sbatch calls need and far below a loop's pace; 1 GiB of log holds
 * about three million decisions.
 */
#define POLICY_DEFAULT_LOG_MAX_MB 1024
/*
 * Issue 27: a user's share of the log.  120 new rows a minute is a
 * submission every half second, sustained, above what a person or a
 * workflow's sbatch loop makes, and a flood beyond it folds into one row
 * per verdict per 10 s (dlog.c): at most about 160 rows a minute for one
 * user.  256 MiB of free space is kept for everyone else's decisions.
 */
#define POLICY_DEFAULT_LOG_USER_ROWS 120
#define POLICY_DEFAULT_LOG_RESERVE_MB 256
#define POLICY_DEFAULT_REQUESTS_PER_S 50.0
#define POLICY_DEFAULT_BURST 500

static const char *const policy_top_keys[] = {
	"mode", "user_mode_override", "memory", "checkpoint", "layout", "estimate",
	"log", "limits", "reader", "require", "partitions", "exempt", "admins", NULL
};

/*
 * What require: may name: the settings a job states in its own flags and
 * keys or as --llm-* options (the job reader's field names,
 * provenance_field_name), the ones whose unstated values advisor assumes.
 */
const char *const policy_require_names[] = {
	"model", "tp", "pp", "cp", "ep", "zero", "precision", "seq", "mbs", "gbs",
	"recompute", "ckpt", "grad_dtype", NULL
};
static const char *const policy_reader_keys[] = { "not_followed", NULL };
static const char *const policy_memory_keys[] = {
	"reserve_gib", "warn_headroom", "overhead_gib", "grad_bytes", "allocator_margin", NULL
};
static const char *const policy_checkpoint_keys[] = {
	"gpu_mtbf_hours", "node_mtbf_hours", "restart_minutes", "storage_write_gbps",
	"node_write_gbps", "warn_extra_waste", "reject_extra_waste", "require_above_gpus", NULL
};
static const char *const policy_layout_keys[] = { "max_pipeline_bubble", NULL };
static const char *const policy_estimate_keys[] = { "mfu", "pue", NULL };
static const char *const policy_log_keys[] = {
	"retention_days", "max_mb", "user_rows_per_min", "reserve_mb", NULL
};
static const char *const policy_limits_keys[] = { "requests_per_s", "burst", NULL };
static const char *const policy_partition_keys[] = {
	"gpu", "gpus_per_node", "mode", "max_gpus", NULL
};
static const char *const policy_exempt_keys[] = { "users", "accounts", NULL };
static const char *const policy_admins_keys[] = { "users", "groups", NULL };

/* 16 TiB of log, and a bucket no user could drain: beyond them a value is a typo. */
#define POLICY_MAX_LOG_MB (16L * 1024 * 1024)
#define POLICY_MAX_BURST 1000000000L

static const struct adv_partition *policy_find_n(const struct adv_policy *p, const char *name,
						 size_t len);

/* Longest user, account or group name kept. */
#define POLICY_NAME_MAX 256

struct policy_load {
	struct yamlutil_doc doc;
	const catalog_t *cat;
	struct adv_policy *p;
};

void policy_defaults(struct adv_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->mode = ADV_MODE_ENFORCE;
	p->user_mode_override = false;
	p->reserve_gib = POLICY_DEFAULT_RESERVE_GIB;
	p->overhead_gib = POLICY_DEFAULT_OVERHEAD_GIB;
	p->warn_headroom = POLICY_DEFAULT_WARN_HEADROOM;
	p->grad_bytes = POLICY_DEFAULT_GRAD_BYTES;
	p->allocator_margin = POLICY_DEFAULT_ALLOCATOR_MARGIN;
	p->gpu_mtbf_hours = POLICY_DEFAULT_GPU_MTBF_HOURS;
	p->node_mtbf_hours = 0;
	p->restart_minutes = POLICY_DEFAULT_RESTART_MINUTES;
	p->storage_write_gbps = POLICY_DEFAULT_STORAGE_WRITE_GBPS;
	p->node_write_gbps = 0;
	p->warn_extra_waste = POLICY_DEFAULT_WARN_EXTRA_WASTE;
	p->reject_extra_waste = POLICY_DEFAULT_REJECT_EXTRA_WASTE;
	p->require_above_gpus = POLICY_DEFAULT_REQUIRE_ABOVE_GPUS;
	p->max_pipeline_bubble = POLICY_DEFAULT_MAX_PIPELINE_BUBBLE;
	p->mfu = POLICY_DEFAULT_MFU;
	p->pue = POLICY_DEFAULT_PUE;
	p->retention_days = POLICY_DEFAULT_RETENTION_DAYS;
	p->log_max_mb = POLICY_DEFAULT_LOG_MAX_MB;
	p->log_user_rows_per_min = POLICY_DEFAULT_LOG_USER_ROWS;
	p->log_reserve_mb = POLICY_DEFAULT_LOG_RESERVE_MB;
	p->requests_per_s = POLICY_DEFAULT_REQUESTS_PER_S;
	p->reader_not_followed = 1;
	p->burst = POLICY_DEFAULT_BURST;
}

void policy_destroy(struct adv_policy *p)
{
	if (!p)
		return;
	free(p->partitions);
	yamlutil_strings_free(p->exempt_users, p->n_exempt_users);
	yamlutil_strings_free(p->exempt_accounts, p->n_exempt_accounts);
	yamlutil_strings_free(p->admin_users, p->n_admin_users);
	yamlutil_strings_free(p->admin_groups, p->n_admin_groups);
	yamlutil_strings_free(p->require, p->n_require);
	free(p->file);
	free(p);
}

const char *policy_mode_name(enum adv_mode m)
{
	switch (m) {
	case ADV_MODE_OFF:
		return "off";
	case ADV_MODE_WARN:
		return "warn";
	case ADV_MODE_ENFORCE:
		return "enforce";
	case ADV_MODE_COUNT:
		break;
	}
	return "unknown";
}

/* ---- parsing ----------------------------------------------------------- */

static int policy_mode_parse(struct yamlutil_doc *d, const yaml_node_t *map, bool *has,
			     enum adv_mode *out)
{
	static const enum adv_mode modes[] = { ADV_MODE_OFF, ADV_MODE_WARN, ADV_MODE_ENFORCE };
	yaml_node_t *v = yamlutil_get(d, map, "mode");
	const char *s = yamlutil_scalar(v);

	if (!v)
		return YAMLUTIL_OK;
	/* YAML 1.1 reads a bare off as false; libyaml keeps the text, so "off" works. */
	for (size_t i = 0; s && i < ADV_ARRAY_SIZE(modes); i++) {
		if (!strcasecmp(s, policy_mode_name(modes[i]))) {
			*out = modes[i];
			if (has)
				*has = true;
			return YAMLUTIL_OK;
		}
	}
	if (s && !yamlutil_is_null(v))
		return yamlutil_fail(d, v, YAMLUTIL_ERR_VALUE,
				     "expected off, warn or enforce for 'mode', got '%s'", s);
	return yamlutil_fail(d, v, YAMLUTIL_ERR_SCHEMA,
			     "expected off, warn or enforce for 'mode', got %s", yamlutil_kind(v));
}

/*
 * A section such as 'memory': a mapping with only its own keys; an empty
 * value ("memory:") means all defaults.  *out is NULL when absent or empty.
 */
static int policy_section(struct yamlutil_doc *d, const yaml_node_t *root, const char *key,
			  const char *const *keys, yaml_node_t **out)
{
	yaml_node_t *map = yamlutil_get(d, root, key);
	char what[64];
	int rc;

	*out = NULL;
	if (!map || yamlutil_is_null(map))
		return YAMLUTIL_OK;
	adv_snprintf(what, sizeof(what), "section '%s'", key);
	if ((rc = yamlutil_expect(d, map, YAML_MAPPING_NODE, what)) ||
	    (rc = yamlutil_check_keys(d, map, keys, NULL, what)))
		return rc;
	*out = map;
	return YAMLUTIL_OK;
}

static int policy_memory(struct policy_load *ld, const yaml_node_t *root)
{
	struct yamlutil_doc *d = &ld->doc;
	struct adv_policy *p = ld->p;
	yaml_node_t *m;
	yaml_node_t *gb;
	int rc;

	if ((rc = policy_section(d, root, "memory", policy_memory_keys, &m)) || !m)
		return rc;
	if ((rc = yamlutil_double(d, m, "reserve_gib", 0, false, HUGE_VAL, &p->reserve_gib)) ||
	    (rc = yamlutil_double(d, m, "overhead_gib", 0, false, HUGE_VAL, &p->overhead_gib)) ||
	    (rc = yamlutil_double(d, m, "warn_headroom", 0, false, 1, &p->warn_headroom)) ||
	    (rc = yamlutil_int(d, m, "grad_bytes", 2, 4, &p->grad_bytes)) ||
	    (rc = yamlutil_double(d, m, "allocator_margin", 0, false, 1, &p->allocator_margin)))
		return rc;
	gb = yamlutil_get(d, m, "grad_bytes");
	if (gb && p->grad_bytes == 3)
		return yamlutil_fail(d, gb, YAMLUTIL_ERR_VALUE,
				     "'grad_bytes' must be 2 (bf16) or 4 (fp32), got 3");
	return YAMLUTIL_OK;
}

static int policy_checkpoint(struct policy_load *ld, const yaml_node_t *root)
{
	struct yamlutil_doc *d = &ld->doc;
	struct adv_policy *p = ld->p;
	yaml_node_t *c;
	int rc;

	if ((rc = policy_section(d, root, "checkpoint", policy_checkpoint_keys, &c)) || !c)
		return rc;
	if ((rc = yamlutil_double(d, c, "gpu_mtbf_hours", 0, true, POLICY_MAX_MTBF_HOURS,
				  &p->gpu_mtbf_hours)) ||
	    (rc = yamlutil_double(d, c, "node_mtbf_hours", 0, false, POLICY_MAX_MTBF_HOURS,
				  &p->node_mtbf_hours)) ||
	    (rc = yamlutil_double(d, c, "restart_minutes", 0, false, POLICY_MAX_RESTART_MINUTES,
				  &p->restart_minutes)) ||
	    (rc = yamlutil_double(d, c, "storage_write_gbps", 0, true, POLICY_MAX_WRITE_GBPS,
				  &p->storage_write_gbps)) ||
	    (rc = yamlutil_double(d, c, "node_write_gbps", 0, false, POLICY_MAX_WRITE_GBPS,
				  &p->node_write_gbps)) ||
	    (rc = yamlutil_double(d, c, "warn_extra_waste", 0, false, 1, &p->warn_extra_waste)) ||
	    (rc = yamlutil_double(d, c, "reject_extra_waste", 0, false, 1,
				  &p->reject_extra_waste)) ||
	    (rc = yamlutil_int(d, c, "require_above_gpus", 0, INT_MAX, &p->require_above_gpus)))
		return rc;
	if (p->reject_extra_waste < p->warn_extra_waste) {
		yaml_node_t *at = yamlutil_get(d, c, "reject_extra_waste");

		return yamlutil_fail(d, at ? at : yamlutil_get(d, c, "warn_extra_waste"),
				     YAMLUTIL_ERR_VALUE,
				     "'reject_extra_waste' (%g) must not be below 'warn_extra_waste' (%g)",
				     p->reject_extra_waste, p->warn_extra_waste);
	}
	return YAMLUTIL_OK;
}

static int policy_small_sections(struct policy_load *ld, const yaml_node_t *root)
{
	struct yamlutil_doc *d = &ld->doc;
	struct adv_policy *p = ld->p;
	yaml_node_t *s;
	int rc;

	if ((rc = policy_section(d, root, "layout", policy_layout_keys, &s)) ||
	    (s && (rc = yamlutil_double(d, s, "max_pipeline_bubble", 0, false, 1,
					&p->max_pipeline_bubble))))
		return rc;
	if ((rc = policy_section(d, root, "estimate", policy_estimate_keys, &s)) ||
	    (s && (rc = yamlutil_double(d, s, "mfu", 0, false, 1, &p->mfu))) ||
	    (s && (rc = yamlutil_double(d, s, "pue", 1, false, HUGE_VAL, &p->pue))))
		return rc;
	if ((rc = policy_section(d, root, "log", policy_log_keys, &s)) ||
	    (s && (rc = yamlutil_int(d, s, "retention_days", 0, INT_MAX, &p->retention_days))) ||
	    (s && (rc = yamlutil_int(d, s, "max_mb", 0, POLICY_MAX_LOG_MB, &p->log_max_mb))) ||
	    (s && (rc = yamlutil_int(d, s, "user_rows_per_min", 1, 1000000,
				     &p->log_user_rows_per_min))) ||
	    (s && (rc = yamlutil_int(d, s, "reserve_mb", 0, POLICY_MAX_LOG_MB, &p->log_reserve_mb))))
		return rc;
	/* A rate above a million a second is no limit at all: say so with 0. */
	if ((rc = policy_section(d, root, "limits", policy_limits_keys, &s)) ||
	    (s && (rc = yamlutil_double(d, s, "requests_per_s", 0, false, 1e6,
					&p->requests_per_s))) ||
	    (s && (rc = yamlutil_int(d, s, "burst", 1, POLICY_MAX_BURST, &p->burst))))
		return rc;
	return YAMLUTIL_OK;
}

const char *policy_severity_name(int sev)
{
	return sev == 0 ? "info" : sev == 2 ? "reject" : "warn";
}

/* reader: { not_followed: info|warn|reject }: how much a launcher or
 * trainer the job reader could not follow weighs (SCRIPT_NOT_FOLLOWED). */
static int policy_reader(struct policy_load *ld, const yaml_node_t *root)
{
	struct yamlutil_doc *d = &ld->doc;
	yaml_node_t *s, *v;
	const char *t;
	int rc;

	if ((rc = policy_section(d, root, "reader", policy_reader_keys, &s)) || !s)
		return rc;
	v = yamlutil_get(d, s, "not_followed");
	if (!v)
		return YAMLUTIL_OK;
	t = yamlutil_scalar(v);
	for (int sev = 0; t && sev <= 2; sev++) {
		if (!strcasecmp(t, policy_severity_name(sev))) {
			ld->p->reader_not_followed = sev;
			return YAMLUTIL_OK;
		}
	}
	if (t && !yamlutil_is_null(v))
		return yamlutil_fail(d, v, YAMLUTIL_ERR_VALUE,
				     "expected info, warn or reject for 'not_followed', got '%s'", t);
	return yamlutil_fail(d, v, YAMLUTIL_ERR_SCHEMA,
			     "expected info, warn or reject for 'not_followed', got %s",
			     yamlutil_kind(v));
}

/* require: [recompute, zero]: each a name of policy_require_names. */
static int policy_require(struct policy_load *ld, const yaml_node_t *root)
{
	struct yamlutil_doc *d = &ld->doc;
	int rc = yamlutil_strings(d, root, "require", POLICY_NAME_MAX, &ld->p->require,
				  &ld->p->n_require);

	for (size_t i = 0; !rc && i < ld->p->n_require; i++) {
		size_t k;

		for (k = 0; policy_require_names[k]; k++)
			if (!strcmp(ld->p->require[i], policy_require_names[k]))
				break;
		if (!policy_require_names[k])
			return yamlutil_fail(d, yamlutil_get(d, root, "require"), YAMLUTIL_ERR_VALUE,
					     "unknown setting '%s' in require: expected model, tp, pp, "
					     "cp, ep, zero, precision, seq, mbs, gbs, recompute, ckpt "
					     "or grad_dtype", ld->p->require[i]);
	}
	return rc;
}

static int policy_lists(struct policy_load *ld, const yaml_node_t *root)
{
	struct yamlutil_doc *d = &ld->doc;
	struct adv_policy *p = ld->p;
	yaml_node_t *s;
	int rc;

	if ((rc = policy_section(d, root, "exempt", policy_exempt_keys, &s)) ||
	    (rc = yamlutil_strings(d, s, "users", POLICY_NAME_MAX, &p->exempt_users,
				   &p->n_exempt_users)) ||
	    (rc = yamlutil_strings(d, s, "accounts", POLICY_NAME_MAX, &p->exempt_accounts,
				   &p->n_exempt_accounts)))
		return rc;
	if ((rc = policy_section(d, root, "admins", policy_admins_keys, &s)) ||
	    (rc = yamlutil_strings(d, s, "users", POLICY_NAME_MAX, &p->admin_users,
				   &p->n_admin_users)) ||
	    (rc = yamlutil_strings(d, s, "groups", POLICY_NAME_MAX, &p->admin_groups,
				   &p->n_admin_groups)))
		return rc;
	return YAMLUTIL_OK;
}

/* The partition's GPU must be in the catalog; keep its canonical name. */
static int policy_partition_gpu(struct policy_load *ld, const yaml_node_t *map,
				struct adv_partition *part)
{
	struct yamlutil_doc *d = &ld->doc;
	const struct adv_gpu *g;
	int rc = yamlutil_string(d, map, "gpu", part->gpu, sizeof(part->gpu));

	if (rc || !part->gpu[0] || !ld->cat)
		return rc;
	g = catalog_find_gpu(ld->cat, part->gpu);
	if (!g)
		return yamlutil_fail(d, yamlutil_get(d, map, "gpu"), YAMLUTIL_ERR_VALUE,
				     "unknown GPU '%s' in partition '%s': not a name or alias in the catalog",
				     part->gpu, part->name);
	adv_strlcpy(part->gpu, g->name, sizeof(part->gpu));
	return YAMLUTIL_OK;
}

static int policy_partition(struct policy_load *ld, const yaml_node_pair_t *pair, size_t index)
{
	struct yamlutil_doc *d = &ld->doc;
	yaml_node_t *kn = yamlutil_node(d, pair->key), *map = yamlutil_node(d, pair->value);
	struct adv_partition *part = &ld->p->partitions[index];
	const char *name = yamlutil_scalar(kn);
	char what[ADV_NAME_MAX + 16];
	int rc;

	if (!name || !*name || strlen(name) >= ADV_NAME_MAX)
		return yamlutil_fail(d, kn, YAMLUTIL_ERR_SCHEMA,
				     "expected a partition name of 1 to %d characters, got %s",
				     ADV_NAME_MAX - 1, name ? "a longer or empty name" : yamlutil_kind(kn));
	/* Slurm separates a partition list with commas (-p debug,h100), so no
	 * partition's name has one, and a lookup stops at the first (fuzz_policy:
	 * a name with a comma loaded, and was then not found). */
	if (strchr(name, ','))
		return yamlutil_fail(d, kn, YAMLUTIL_ERR_SCHEMA,
				     "partition name '%s' has a ',': Slurm partition names cannot "
				     "(a comma separates a list of partitions)", name);
	/* n_partitions counts the ones before this one: the lookup jobs will use. */
	if (policy_find_n(ld->p, name, strlen(name)))
		return yamlutil_fail(d, kn, YAMLUTIL_ERR_DUPLICATE,
				     "duplicate partition '%s'", name);
	adv_strlcpy(part->name, name, sizeof(part->name));
	adv_snprintf(what, sizeof(what), "partition '%s'", name);
	if (yamlutil_is_null(map))
		return YAMLUTIL_OK;
	if ((rc = yamlutil_expect(d, map, YAML_MAPPING_NODE, what)) ||
	    (rc = yamlutil_check_keys(d, map, policy_partition_keys, NULL, what)) ||
	    (rc = policy_partition_gpu(ld, map, part)) ||
	    (rc = yamlutil_int(d, map, "gpus_per_node", 1, 4096, &part->gpus_per_node)) ||
	    (rc = policy_mode_parse(d, map, &part->has_mode, &part->mode)) ||
	    (rc = yamlutil_int(d, map, "max_gpus", 0, INT_MAX, &part->max_gpus)))
		return rc;
	return YAMLUTIL_OK;
}

static int policy_partitions(struct policy_load *ld, const yaml_node_t *root)
{
	struct yamlutil_doc *d = &ld->doc;
	yaml_node_t *map = yamlutil_get(d, root, "partitions");
	size_t n;
	int rc;

	if (!map || yamlutil_is_null(map))
		return YAMLUTIL_OK;
	if ((rc = yamlutil_expect(d, map, YAML_MAPPING_NODE, "'partitions'")))
		return rc;
	n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	ld->p->partitions = calloc(n ? n : 1, sizeof(*ld->p->partitions));
	if (!ld->p->partitions)
		return yamlutil_fail(d, map, YAMLUTIL_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		rc = policy_partition(ld, map->data.mapping.pairs.start + i, i);
		if (rc)
			return rc;
		ld->p->n_partitions = i + 1;
	}
	return YAMLUTIL_OK;
}

static int policy_parse(struct policy_load *ld)
{
	struct yamlutil_doc *d = &ld->doc;
	yaml_node_t *root = yamlutil_root(d);
	int rc;

	if (!root || yamlutil_is_null(root))
		return YAMLUTIL_OK;
	if ((rc = yamlutil_expect(d, root, YAML_MAPPING_NODE, "the policy")) ||
	    (rc = yamlutil_check_keys(d, root, policy_top_keys, NULL, "the policy")) ||
	    (rc = policy_mode_parse(d, root, NULL, &ld->p->mode)) ||
	    (rc = yamlutil_bool(d, root, "user_mode_override", &ld->p->user_mode_override)) ||
	    (rc = policy_memory(ld, root)) ||
	    (rc = policy_checkpoint(ld, root)) ||
	    (rc = policy_small_sections(ld, root)) ||
	    (rc = policy_reader(ld, root)) ||
	    (rc = policy_require(ld, root)) ||
	    (rc = policy_partitions(ld, root)) ||
	    (rc = policy_lists(ld, root)))
		return rc;
	return YAMLUTIL_OK;
}

static int policy_finish(struct policy_load *ld, int rc, const char *name,
			 struct adv_policy **out)
{
	if (!rc) {
		ld->p->file = adv_strdup(name);
		if (!ld->p->file)
			rc = yamlutil_fail(&ld->doc, NULL, YAMLUTIL_ERR_NOMEM, "out of memory");
	}
	yamlutil_free(&ld->doc);
	if (rc) {
		policy_destroy(ld->p);
		return rc;
	}
	*out = ld->p;
	return POLICY_OK;
}

static int policy_begin(struct policy_load *ld, const catalog_t *cat, struct adv_policy **out,
			const char *name, char *err, size_t errlen)
{
	memset(ld, 0, sizeof(*ld));
	ld->cat = cat;
	if (out)
		*out = NULL;
	ld->p = malloc(sizeof(*ld->p));
	if (!ld->p) {
		adv_snprintf(err, errlen, "%s: out of memory", name);
		return POLICY_ERR_NOMEM;
	}
	policy_defaults(ld->p);
	return POLICY_OK;
}

int policy_load(const char *path, const catalog_t *cat, struct adv_policy **out,
		char *err, size_t errlen)
{
	struct policy_load ld;
	int rc = policy_begin(&ld, cat, out, path, err, errlen);

	if (rc)
		return rc;
	rc = yamlutil_load_file(&ld.doc, path, err, errlen);
	if (!rc)
		rc = policy_parse(&ld);
	return policy_finish(&ld, rc, path, out);
}

int policy_load_string(const char *name, const char *text, const catalog_t *cat,
		       struct adv_policy **out, char *err, size_t errlen)
{
	struct policy_load ld;
	int rc = policy_begin(&ld, cat, out, name ? name : "-", err, errlen);

	if (rc)
		return rc;
	rc = yamlutil_load_string(&ld.doc, name, text, err, errlen);
	if (!rc)
		rc = policy_parse(&ld);
	return policy_finish(&ld, rc, name ? name : "-", out);
}

const char *policy_strerror(int code)
{
	switch (code) {
	case POLICY_OK:
		return "success";
	case POLICY_ERR_IO:
		return "cannot read the policy file";
	case POLICY_ERR_SYNTAX:
		return "YAML syntax error";
	case POLICY_ERR_SCHEMA:
		return "policy does not follow the schema";
	case POLICY_ERR_VALUE:
		return "impossible value in the policy";
	case POLICY_ERR_DUPLICATE:
		return "partition or key defined twice";
	case POLICY_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown policy error";
	}
}

/* ---- queries ----------------------------------------------------------- */

/* The partition named by the len bytes at name. */
static const struct adv_partition *policy_find_n(const struct adv_policy *p, const char *name,
						 size_t len)
{
	for (size_t i = 0; p && name && i < p->n_partitions; i++)
		if (strlen(p->partitions[i].name) == len &&
		    !strncasecmp(p->partitions[i].name, name, len))
			return &p->partitions[i];
	return NULL;
}

/* A comma list (sbatch -p a,b) names its first: the limits and the GPU
 * type the job is judged with are that partition's. */
const struct adv_partition *policy_find_partition(const struct adv_policy *p, const char *name)
{
	return name ? policy_find_n(p, name, strcspn(name, ",")) : NULL;
}

/*
 * Slurm runs a job given -p a,b in whichever listed partition starts it
 * first, so the job is held to the strictest mode among them (issue 20:
 * -p debug,h100 was judged in debug's warn mode and could run in h100).
 * Ties go to the first listed.
 */
enum adv_mode policy_mode_list(const struct adv_policy *p, const char *partitions,
			       char *by, size_t bylen)
{
	enum adv_mode best = ADV_MODE_OFF;
	const char *s = partitions ? partitions : "";
	bool any = false;

	if (by && bylen)
		by[0] = '\0';
	for (;;) {
		size_t n = strcspn(s, ",");
		const struct adv_partition *part = policy_find_n(p, s, n);
		enum adv_mode m = part && part->has_mode ? part->mode
							  : p ? p->mode : ADV_MODE_ENFORCE;

		if (n > 0 && (!any || m > best)) {
			best = m;
			any = true;
			if (by && bylen)
				adv_snprintf(by, bylen, "%.*s", (int)n, s);
		}
		if (!s[n])
			break;
		s += n + 1;
	}
	if (!any)
		return p ? p->mode : ADV_MODE_ENFORCE;
	return best;
}

enum adv_mode policy_mode_for(const struct adv_policy *p, const char *partition)
{
	return policy_mode_list(p, partition, NULL, 0);
}

static bool policy_listed(char *const *list, size_t n, const char *s, bool nocase)
{
	for (size_t i = 0; s && i < n; i++)
		if (nocase ? !strcasecmp(list[i], s) : !strcmp(list[i], s))
			return true;
	return false;
}

/* getgrnam_r with a buffer that grows until the entry fits. */
static bool policy_group_gid(const char *name, gid_t *gid)
{
	long hint = sysconf(_SC_GETGR_R_SIZE_MAX);
	size_t len = hint > 0 ? (size_t)hint : 4096;
	bool found = false;

	for (;;) {
		struct group gr, *res = NULL;
		char *buf = malloc(len);
		int e;

		if (!buf)
			return false;
		e = getgrnam_r(name, &gr, buf, len, &res);
		if (e == 0 && res) {
			*gid = res->gr_gid;
			found = true;
		}
		free(buf);
		if (e != ERANGE || len > (1u << 24))
			return found;
		len *= 2;
	}
}

bool policy_is_admin(const struct adv_policy *p, uid_t uid, const char *user,
		     const gid_t *groups, size_t n_groups)
{
	if (uid == 0)
		return true;
	if (!p)
		return false;
	if (policy_listed(p->admin_users, p->n_admin_users, user, false))
		return true;
	for (size_t i = 0; i < p->n_admin_groups; i++) {
		gid_t gid;

		if (!policy_group_gid(p->admin_groups[i], &gid))
			continue;
		for (size_t j = 0; groups && j < n_groups; j++)
			if (groups[j] == gid)
				return true;
	}
	return false;
}

/* Slurm stores account names in lower case, so accounts compare without case. */
bool policy_is_exempt(const struct adv_policy *p, const char *user, const char *account)
{
	if (!p)
		return false;
	return policy_listed(p->exempt_users, p->n_exempt_users, user, false) ||
	       policy_listed(p->exempt_accounts, p->n_exempt_accounts, account, true);
}

/* ---- rendering --------------------------------------------------------- */

struct policy_out {
	char *buf;
	size_t len, used;
	bool overflow;
};

static int policy_out_write(void *data, unsigned char *text, size_t size)
{
	struct policy_out *o = data;

	if (o->used + size >= o->len) {
		o->overflow = true;
		return 0;
	}
	memcpy(o->buf + o->used, text, size);
	o->used += size;
	o->buf[o->used] = '\0';
	return 1;
}

static int policy_emit(yaml_emitter_t *e, yaml_event_t *ev)
{
	return yaml_emitter_emit(e, ev) ? 0 : -1;
}

static int policy_emit_scalar(yaml_emitter_t *e, const char *s, bool quoted)
{
	yaml_event_t ev;

	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s),
					  !quoted, quoted,
					  quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE))
		return -1;
	return policy_emit(e, &ev);
}

static int policy_emit_begin(yaml_emitter_t *e, bool map, bool flow)
{
	yaml_event_t ev;
	int ok;

	if (map)
		ok = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 flow ? YAML_FLOW_MAPPING_STYLE
							      : YAML_BLOCK_MAPPING_STYLE);
	else
		ok = yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							  flow ? YAML_FLOW_SEQUENCE_STYLE
							       : YAML_BLOCK_SEQUENCE_STYLE);
	return ok ? policy_emit(e, &ev) : -1;
}

static int policy_emit_end(yaml_emitter_t *e, bool map)
{
	yaml_event_t ev;

	if (map)
		yaml_mapping_end_event_initialize(&ev);
	else
		yaml_sequence_end_event_initialize(&ev);
	return policy_emit(e, &ev);
}

static int policy_kv_num(yaml_emitter_t *e, const char *k, double v)
{
	char num[64];

	adv_snprintf(num, sizeof(num), "%.15g", v);
	return policy_emit_scalar(e, k, false) || policy_emit_scalar(e, num, false) ? -1 : 0;
}

static int policy_kv_str(yaml_emitter_t *e, const char *k, const char *v)
{
	return policy_emit_scalar(e, k, false) || policy_emit_scalar(e, v, false) ? -1 : 0;
}

static int policy_kv_list(yaml_emitter_t *e, const char *k, char *const *v, size_t n)
{
	if (policy_emit_scalar(e, k, false) || policy_emit_begin(e, false, true))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (policy_emit_scalar(e, v[i], true))
			return -1;
	return policy_emit_end(e, false);
}

static int policy_render_sections(yaml_emitter_t *e, const struct adv_policy *p)
{
	if (policy_kv_str(e, "mode", policy_mode_name(p->mode)) ||
	    policy_kv_str(e, "user_mode_override", p->user_mode_override ? "true" : "false") ||
	    policy_emit_scalar(e, "memory", false) || policy_emit_begin(e, true, false) ||
	    policy_kv_num(e, "reserve_gib", p->reserve_gib) ||
	    policy_kv_num(e, "overhead_gib", p->overhead_gib) ||
	    policy_kv_num(e, "warn_headroom", p->warn_headroom) ||
	    policy_kv_num(e, "grad_bytes", p->grad_bytes) ||
	    policy_kv_num(e, "allocator_margin", p->allocator_margin) || policy_emit_end(e, true) ||
	    policy_emit_scalar(e, "checkpoint", false) || policy_emit_begin(e, true, false) ||
	    policy_kv_num(e, "gpu_mtbf_hours", p->gpu_mtbf_hours) ||
	    policy_kv_num(e, "node_mtbf_hours", p->node_mtbf_hours) ||
	    policy_kv_num(e, "restart_minutes", p->restart_minutes) ||
	    policy_kv_num(e, "storage_write_gbps", p->storage_write_gbps) ||
	    policy_kv_num(e, "node_write_gbps", p->node_write_gbps) ||
	    policy_kv_num(e, "warn_extra_waste", p->warn_extra_waste) ||
	    policy_kv_num(e, "reject_extra_waste", p->reject_extra_waste) ||
	    policy_kv_num(e, "require_above_gpus", p->require_above_gpus) ||
	    policy_emit_end(e, true) ||
	    policy_emit_scalar(e, "layout", false) || policy_emit_begin(e, true, false) ||
	    policy_kv_num(e, "max_pipeline_bubble", p->max_pipeline_bubble) ||
	    policy_emit_end(e, true) ||
	    policy_emit_scalar(e, "estimate", false) || policy_emit_begin(e, true, false) ||
	    policy_kv_num(e, "mfu", p->mfu) || policy_kv_num(e, "pue", p->pue) ||
	    policy_emit_end(e, true) ||
	    policy_emit_scalar(e, "log", false) || policy_emit_begin(e, true, false) ||
	    policy_kv_num(e, "retention_days", p->retention_days) ||
	    policy_kv_num(e, "max_mb", p->log_max_mb) ||
	    policy_kv_num(e, "user_rows_per_min", p->log_user_rows_per_min) ||
	    policy_kv_num(e, "reserve_mb", p->log_reserve_mb) || policy_emit_end(e, true) ||
	    policy_emit_scalar(e, "limits", false) || policy_emit_begin(e, true, false) ||
	    policy_kv_num(e, "requests_per_s", p->requests_per_s) ||
	    policy_kv_num(e, "burst", p->burst) || policy_emit_end(e, true) ||
	    policy_emit_scalar(e, "reader", false) || policy_emit_begin(e, true, false) ||
	    policy_kv_str(e, "not_followed", policy_severity_name(p->reader_not_followed)) ||
	    policy_emit_end(e, true) ||
	    (p->n_require && policy_kv_list(e, "require", p->require, p->n_require)))
		return -1;
	return 0;
}

static int policy_render_partition(yaml_emitter_t *e, const struct adv_partition *part)
{
	if (policy_emit_scalar(e, part->name, false) || policy_emit_begin(e, true, true))
		return -1;
	if (part->gpu[0] && policy_kv_str(e, "gpu", part->gpu))
		return -1;
	if (part->gpus_per_node && policy_kv_num(e, "gpus_per_node", part->gpus_per_node))
		return -1;
	if (part->has_mode && policy_kv_str(e, "mode", policy_mode_name(part->mode)))
		return -1;
	if (policy_kv_num(e, "max_gpus", part->max_gpus))
		return -1;
	return policy_emit_end(e, true);
}

static int policy_render_rest(yaml_emitter_t *e, const struct adv_policy *p)
{
	if (policy_emit_scalar(e, "partitions", false) || policy_emit_begin(e, true, false))
		return -1;
	for (size_t i = 0; i < p->n_partitions; i++)
		if (policy_render_partition(e, &p->partitions[i]))
			return -1;
	if (policy_emit_end(e, true) ||
	    policy_emit_scalar(e, "exempt", false) || policy_emit_begin(e, true, false) ||
	    policy_kv_list(e, "users", p->exempt_users, p->n_exempt_users) ||
	    policy_kv_list(e, "accounts", p->exempt_accounts, p->n_exempt_accounts) ||
	    policy_emit_end(e, true) ||
	    policy_emit_scalar(e, "admins", false) || policy_emit_begin(e, true, false) ||
	    policy_kv_list(e, "users", p->admin_users, p->n_admin_users) ||
	    policy_kv_list(e, "groups", p->admin_groups, p->n_admin_groups) ||
	    policy_emit_end(e, true))
		return -1;
	return 0;
}

static int policy_render_document(yaml_emitter_t *e, const struct adv_policy *p)
{
	yaml_event_t ev;

	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) || policy_emit(e, &ev) ||
	    !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) || policy_emit(e, &ev) ||
	    policy_emit_begin(e, true, false) || policy_render_sections(e, p) ||
	    policy_render_rest(e, p) || policy_emit_end(e, true) ||
	    !yaml_document_end_event_initialize(&ev, 1) || policy_emit(e, &ev) ||
	    !yaml_stream_end_event_initialize(&ev) || policy_emit(e, &ev))
		return -1;
	return 0;
}

int policy_render_yaml(const struct adv_policy *p, char *buf, size_t len)
{
	struct policy_out o = { .buf = buf, .len = len };
	yaml_emitter_t e;
	int rc;

	if (!p || !buf || len == 0)
		return -1;
	buf[0] = '\0';
	if (p->file) {
		o.used = adv_snprintf(buf, len, "# policy in force, from %s (defaults filled in)\n",
				      p->file);
		if (o.used + 1 >= len)
			return -1;
	}
	if (!yaml_emitter_initialize(&e))
		return -1;
	yaml_emitter_set_output(&e, policy_out_write, &o);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, 100);
	rc = policy_render_document(&e, p);
	if (!rc && !yaml_emitter_flush(&e))
		rc = -1;
	yaml_emitter_delete(&e);
	if (rc || o.overflow)
		return -1;
	return o.used > INT_MAX ? -1 : (int)o.used;
}
