/*
 * test_policy.c - site policy: defaults, the shipped example, lookups,
 * admin and exemption rules, rendering, and every error class with its
 * exact message and position.
 */
#include "config.h"

#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/catalog.h"
#include "config/policy.h"
#include "fixture.h"

#define SHIPPED_POLICY SRCDIR "/etc/policy.yaml"

static catalog_t *cat;

static int load_catalog(void **st)
{
	cat = fixture_catalog(NULL);
	return cat ? 0 : -1;
}

static int free_catalog(void **st)
{
	catalog_destroy(cat);
	return 0;
}

static struct adv_policy *load_ok(const char *text)
{
	struct adv_policy *p = NULL;
	char err[ADV_ERR_MAX];
	int rc = policy_load_string("p.yaml", text, cat, &p, err, sizeof(err));

	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, POLICY_OK);
	assert_non_null(p);
	return p;
}

static void expect_error(const char *text, const catalog_t *c, int code, const char *want)
{
	struct adv_policy *p = (struct adv_policy *)1;
	char err[ADV_ERR_MAX];
	int rc = policy_load_string("p.yaml", text, c, &p, err, sizeof(err));

	if (rc != code)
		print_error("got code %d: %s\n", rc, err);
	assert_int_equal(rc, code);
	assert_null(p);
	assert_string_equal(err, want);
}

static void assert_defaults(const struct adv_policy *p)
{
	assert_int_equal(p->mode, ADV_MODE_ENFORCE);
	assert_false(p->user_mode_override);
	assert_float_equal(p->reserve_gib, 3, 0);
	assert_float_equal(p->overhead_gib, 1.0, 0);
	assert_float_equal(p->warn_headroom, 0.10, 0);
	assert_int_equal(p->grad_bytes, 4);
	assert_float_equal(p->gpu_mtbf_hours, 25000, 0);
	assert_float_equal(p->node_mtbf_hours, 0, 0);
	assert_float_equal(p->restart_minutes, 10, 0);
	assert_float_equal(p->storage_write_gbps, 50, 0);
	assert_float_equal(p->node_write_gbps, 0, 0);
	assert_float_equal(p->warn_extra_waste, 0.02, 0);
	assert_float_equal(p->reject_extra_waste, 0.10, 0);
	assert_int_equal(p->require_above_gpus, 64);
	assert_float_equal(p->max_pipeline_bubble, 0.25, 0);
	assert_float_equal(p->mfu, 0, 0);
	assert_float_equal(p->pue, 1.2, 0);
	assert_int_equal(p->retention_days, 90);
	assert_int_equal(p->log_max_mb, 1024);
	assert_float_equal(p->requests_per_s, 50, 0);
	assert_int_equal(p->burst, 500);
	assert_int_equal(p->n_partitions, 0);
	assert_int_equal(p->n_admin_users, 0);
	assert_int_equal(p->n_exempt_users, 0);
}

static void test_defaults_and_empty_file(void **st)
{
	struct adv_policy d, *p;

	policy_defaults(&d);
	assert_defaults(&d);
	p = load_ok("");
	assert_defaults(p);
	assert_string_equal(p->file, "p.yaml");
	policy_destroy(p);
	p = load_ok("# only a comment\n");
	assert_defaults(p);
	policy_destroy(p);
	/* Empty sections mean their defaults. */
	p = load_ok("memory:\ncheckpoint: {}\npartitions:\nexempt:\n  users:\nlimits:\nlog: {}\n");
	assert_defaults(p);
	policy_destroy(p);
}

/* Issue 30: the shipped policy (installed and started by the package)
 * blocks nothing: warn at the top, no partition with an enforce of its own. */
static void test_shipped_policy(void **st)
{
	struct adv_policy *p = NULL;
	char err[ADV_ERR_MAX];
	const struct adv_partition *h100;
	const char *const names[] = { "h100", "H100", "h200", "debug", "cpu", "", "debug,h100",
				      "h200,h100,cpu" };

	assert_int_equal(policy_load(SHIPPED_POLICY, cat, &p, err, sizeof(err)), POLICY_OK);
	assert_string_equal(p->file, SHIPPED_POLICY);
	assert_int_equal(p->mode, ADV_MODE_WARN);
	assert_int_equal(p->n_partitions, 3);
	h100 = policy_find_partition(p, "H100");
	assert_non_null(h100);
	assert_string_equal(h100->gpu, "h100-sxm");
	assert_int_equal(h100->gpus_per_node, 8);
	assert_int_equal(h100->max_gpus, 2048);
	assert_false(h100->has_mode);
	assert_false(policy_find_partition(p, "h200")->has_mode);
	assert_string_equal(policy_find_partition(p, "h200")->gpu, "h200");
	assert_string_equal(policy_find_partition(p, "debug")->gpu, "");
	assert_true(policy_find_partition(p, "debug")->has_mode);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(policy_mode_for(p, names[i]), ADV_MODE_WARN);
	assert_int_equal(policy_mode_for(p, NULL), ADV_MODE_WARN);
	assert_null(policy_find_partition(p, "cpu"));
	assert_string_equal(policy_find_partition(p, "h200,debug")->gpu, "h200");
	assert_null(policy_find_partition(p, "cpu,h200"));
	assert_int_equal(p->n_admin_users, 1);
	assert_string_equal(p->admin_users[0], "root");
	/* The example spells out the defaults: same values. */
	assert_float_equal(p->gpu_mtbf_hours, 25000, 0);
	assert_float_equal(p->mfu, 0, 0);
	assert_int_equal(p->retention_days, 90);
	assert_int_equal(p->log_max_mb, 1024);
	assert_float_equal(p->requests_per_s, 50, 0);
	assert_int_equal(p->burst, 500);
	policy_destroy(p);
}

/* The shipped file with one of its lines replaced (README, "Rollout: warn,
 * then enforce"): FROM must occur exactly once. */
static struct adv_policy *shipped_edited(const char *from, const char *to)
{
	char text[16384], edited[16384];
	FILE *f = fopen(SHIPPED_POLICY, "r");
	size_t n;
	const char *at;
	struct adv_policy *p;

	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	assert_true(n < sizeof(text) - 1);
	fclose(f);
	text[n] = '\0';
	at = strstr(text, from);
	assert_non_null(at);
	assert_null(strstr(at + 1, from));
	assert_true(n - strlen(from) + strlen(to) < sizeof(edited));
	snprintf(edited, sizeof(edited), "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	p = load_ok(edited);
	return p;
}

/* The rollout's enforcing steps, as the README shows them: one partition
 * first, then the top-level mode (debug keeps its own warn). */
static void test_shipped_policy_enforced(void **st)
{
	struct adv_policy *p;
	char by[64];

	p = shipped_edited("\n  h100:  { gpu: h100-sxm, gpus_per_node: 8, max_gpus: 2048 }\n",
			   "\n  h100:  { gpu: h100-sxm, gpus_per_node: 8, mode: enforce, max_gpus: 2048 }\n");
	assert_int_equal(policy_mode_for(p, "h100"), ADV_MODE_ENFORCE);
	assert_int_equal(policy_mode_for(p, "h200"), ADV_MODE_WARN);
	assert_int_equal(policy_mode_for(p, "cpu"), ADV_MODE_WARN);
	assert_int_equal(policy_mode_for(p, "debug"), ADV_MODE_WARN);
	assert_int_equal(policy_mode_list(p, "h200,h100", by, sizeof(by)), ADV_MODE_ENFORCE);
	assert_string_equal(by, "h100");
	policy_destroy(p);

	p = shipped_edited("\nmode: warn\n", "\nmode: enforce\n");
	assert_int_equal(p->mode, ADV_MODE_ENFORCE);
	assert_int_equal(policy_mode_for(p, "h100"), ADV_MODE_ENFORCE);
	assert_int_equal(policy_mode_for(p, "h200"), ADV_MODE_ENFORCE);
	assert_int_equal(policy_mode_for(p, "cpu"), ADV_MODE_ENFORCE);
	assert_int_equal(policy_mode_for(p, NULL), ADV_MODE_ENFORCE);
	assert_int_equal(policy_mode_for(p, "debug"), ADV_MODE_WARN);
	assert_int_equal(policy_mode_for(p, "DEBUG"), ADV_MODE_WARN);
	/* Issue 20: -p debug,h100 is held to the strictest listed mode, and
	 * says which partition set it; limits and GPU are the first's. */
	assert_int_equal(policy_mode_list(p, "debug,h100", by, sizeof(by)), ADV_MODE_ENFORCE);
	assert_string_equal(by, "h100");
	assert_int_equal(policy_mode_list(p, "h100,debug", by, sizeof(by)), ADV_MODE_ENFORCE);
	assert_string_equal(by, "h100");
	assert_int_equal(policy_mode_list(p, "debug,DEBUG", by, sizeof(by)), ADV_MODE_WARN);
	assert_string_equal(by, "debug");
	/* An unlisted partition has the global mode (enforce). */
	assert_int_equal(policy_mode_list(p, "debug,cpu", by, sizeof(by)), ADV_MODE_ENFORCE);
	assert_string_equal(by, "cpu");
	assert_int_equal(policy_mode_list(p, "", by, sizeof(by)), ADV_MODE_ENFORCE);
	assert_string_equal(by, "");
	assert_int_equal(policy_mode_for(p, "debug,h100"), ADV_MODE_ENFORCE);
	policy_destroy(p);
}

static void test_all_keys(void **st)
{
	struct adv_policy *p = load_ok(
		"mode: warn\n"
		"user_mode_override: true\n"
		"memory: { reserve_gib: 2.5, overhead_gib: 0.5, warn_headroom: 0.2, grad_bytes: 2 }\n"
		"checkpoint:\n"
		"  gpu_mtbf_hours: 50000\n"
		"  node_mtbf_hours: 4000\n"
		"  restart_minutes: 15\n"
		"  storage_write_gbps: 200\n"
		"  node_write_gbps: 10\n"
		"  warn_extra_waste: 0.03\n"
		"  reject_extra_waste: 0.2\n"
		"  require_above_gpus: 128\n"
		"layout: { max_pipeline_bubble: 0.5 }\n"
		"estimate: { mfu: 0.35, pue: 1.1 }\n"
		"log: { retention_days: 30, max_mb: 64 }\n"
		"limits: { requests_per_s: 2.5, burst: 10 }\n"
		"partitions:\n"
		"  gpu: { gpu: \"NVIDIA H100 80GB HBM3\", mode: off }\n"
		"exempt: { users: [alice, bob], accounts: [Bench] }\n"
		"admins: { users: [carol], groups: [root] }\n");

	assert_int_equal(p->mode, ADV_MODE_WARN);
	assert_true(p->user_mode_override);
	assert_float_equal(p->reserve_gib, 2.5, 0);
	assert_float_equal(p->overhead_gib, 0.5, 0);
	assert_float_equal(p->warn_headroom, 0.2, 0);
	assert_int_equal(p->grad_bytes, 2);
	assert_float_equal(p->gpu_mtbf_hours, 50000, 0);
	assert_float_equal(p->node_mtbf_hours, 4000, 0);
	assert_float_equal(p->restart_minutes, 15, 0);
	assert_float_equal(p->storage_write_gbps, 200, 0);
	assert_float_equal(p->node_write_gbps, 10, 0);
	assert_float_equal(p->warn_extra_waste, 0.03, 0);
	assert_float_equal(p->reject_extra_waste, 0.2, 0);
	assert_int_equal(p->require_above_gpus, 128);
	assert_float_equal(p->max_pipeline_bubble, 0.5, 0);
	assert_float_equal(p->mfu, 0.35, 0);
	assert_float_equal(p->pue, 1.1, 0);
	assert_int_equal(p->retention_days, 30);
	assert_int_equal(p->log_max_mb, 64);
	assert_float_equal(p->requests_per_s, 2.5, 0);
	assert_int_equal(p->burst, 10);
	/* An alias is stored as the catalog's canonical name; "off" is a mode, not false. */
	assert_string_equal(p->partitions[0].gpu, "h100-sxm");
	assert_int_equal(policy_mode_for(p, "gpu"), ADV_MODE_OFF);
	assert_int_equal(p->partitions[0].max_gpus, 0);
	assert_true(policy_is_exempt(p, "alice", "x"));
	assert_false(policy_is_exempt(p, "Alice", "x"));   /* user names keep their case */
	assert_true(policy_is_exempt(p, "dave", "bench")); /* Slurm accounts do not */
	assert_false(policy_is_exempt(p, "dave", "prod"));
	assert_false(policy_is_exempt(p, NULL, NULL));
	policy_destroy(p);
}

static void test_is_admin(void **st)
{
	struct adv_policy *p = load_ok("admins: { users: [carol], groups: [root, no-such-group-x] }\n");
	struct group *root = getgrnam("root");
	gid_t mine[] = { 12345, 0 };
	gid_t other[] = { 12345 };

	assert_non_null(root);
	assert_true(policy_is_admin(p, 0, "anyone", NULL, 0));
	assert_true(policy_is_admin(p, 1000, "carol", NULL, 0));
	assert_false(policy_is_admin(p, 1000, "Carol", NULL, 0));
	assert_false(policy_is_admin(p, 1000, "alice", other, 1));
	mine[1] = root->gr_gid;
	assert_true(policy_is_admin(p, 1000, "alice", mine, 2));
	assert_false(policy_is_admin(NULL, 1000, "carol", mine, 2));
	policy_destroy(p);
}

/* The rendering reads back to the same policy. */
static void test_render_round_trip(void **st)
{
	struct adv_policy *p = NULL, *q = NULL;
	char err[ADV_ERR_MAX], buf[8192], small[64];
	int n;

	assert_int_equal(policy_load(SHIPPED_POLICY, cat, &p, err, sizeof(err)), POLICY_OK);
	n = policy_render_yaml(p, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(buf));
	assert_non_null(strstr(buf, "# policy in force, from " SHIPPED_POLICY));
	assert_non_null(strstr(buf, "mode: warn"));
	assert_non_null(strstr(buf, "h100: {gpu: h100-sxm, gpus_per_node: 8, max_gpus: 2048}"));
	assert_non_null(strstr(buf, "debug: {mode: warn, max_gpus: 16}"));
	assert_int_equal(policy_load_string("rendered", buf, cat, &q, err, sizeof(err)), POLICY_OK);
	assert_int_equal(q->n_partitions, p->n_partitions);
	for (size_t i = 0; i < p->n_partitions; i++) {
		assert_string_equal(q->partitions[i].name, p->partitions[i].name);
		assert_string_equal(q->partitions[i].gpu, p->partitions[i].gpu);
		assert_int_equal(q->partitions[i].mode, p->partitions[i].mode);
		assert_int_equal(q->partitions[i].has_mode, p->partitions[i].has_mode);
		assert_int_equal(q->partitions[i].max_gpus, p->partitions[i].max_gpus);
		assert_int_equal(q->partitions[i].gpus_per_node, p->partitions[i].gpus_per_node);
	}
	assert_float_equal(q->gpu_mtbf_hours, p->gpu_mtbf_hours, 0);
	assert_float_equal(q->warn_headroom, p->warn_headroom, 0);
	assert_float_equal(q->pue, p->pue, 0);
	assert_int_equal(q->retention_days, p->retention_days);
	assert_int_equal(q->log_max_mb, p->log_max_mb);
	assert_float_equal(q->requests_per_s, p->requests_per_s, 0);
	assert_int_equal(q->burst, p->burst);
	assert_non_null(strstr(buf, "max_mb: 1024"));
	assert_non_null(strstr(buf, "requests_per_s: 50"));
	assert_non_null(strstr(buf, "burst: 500"));
	assert_int_equal(q->n_admin_users, p->n_admin_users);
	assert_int_equal(policy_render_yaml(p, small, sizeof(small)), -1);
	policy_destroy(q);
	policy_destroy(p);
}

static void test_err_syntax(void **st)
{
	expect_error("mode: enforce\nmemory: { reserve_gib: 3\n", cat, POLICY_ERR_SYNTAX,
		     "p.yaml:3:1: YAML syntax error: did not find expected ',' or '}' "
		     "(while parsing a flow mapping at line 2, column 9)");
}

static void test_err_unknown_key(void **st)
{
	expect_error("memory:\n  reserve_gib: 3\n  reserve: 4\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:3:3: unknown key 'reserve' in section 'memory'; expected one of: "
		     "reserve_gib, warn_headroom, overhead_gib, grad_bytes, allocator_margin");
	expect_error("modes: warn\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:1: unknown key 'modes' in the policy; expected one of: mode, "
		     "user_mode_override, memory, checkpoint, layout, estimate, log, limits, "
		     "reader, require, partitions, exempt, admins");
	expect_error("limits:\n  rate: 5\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:2:3: unknown key 'rate' in section 'limits'; expected one of: "
		     "requests_per_s, burst");
	expect_error("log: { retention_days: 7, maxmb: 5 }\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:27: unknown key 'maxmb' in section 'log'; expected one of: "
		     "retention_days, max_mb, user_rows_per_min, reserve_mb");
	expect_error("partitions:\n  a: { gpu: h100, max_gpu: 8 }\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:2:19: unknown key 'max_gpu' in partition 'a'; expected one of: gpu, "
		     "gpus_per_node, mode, max_gpus");
}

static void test_err_wrong_type(void **st)
{
	expect_error("checkpoint:\n  gpu_mtbf_hours: lots\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:2:19: expected a number for 'gpu_mtbf_hours', got 'lots'");
	expect_error("user_mode_override: sometimes\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:21: expected true or false for 'user_mode_override', got 'sometimes'");
	expect_error("memory: [3]\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:9: expected a mapping for section 'memory', got a list");
	expect_error("admins: { users: root }\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:18: expected a list of strings for 'users', got a scalar");
	expect_error("- mode\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:1: expected a mapping for the policy, got a list");
	expect_error("mode: strict\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:7: expected off, warn or enforce for 'mode', got 'strict'");
}

static void test_err_out_of_range(void **st)
{
	/* fuzz_policy: 1e308 hours made the engine's seconds infinite and its
	 * checkpoint figures NaN. */
	expect_error("checkpoint: {gpu_mtbf_hours: 01e308}\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:30: 'gpu_mtbf_hours' must be at most 1e+09, got 01e308");
	expect_error("checkpoint: {restart_minutes: 1e7}\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:31: 'restart_minutes' must be at most 1e+06, got 1e7");
	expect_error("checkpoint: {storage_write_gbps: 2e6}\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:34: 'storage_write_gbps' must be at most 1e+06, got 2e6");
	expect_error("memory: { warn_headroom: 1.5 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:26: 'warn_headroom' must be at most 1, got 1.5");
	expect_error("memory: { reserve_gib: -1 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:24: 'reserve_gib' must be at least 0, got -1");
	expect_error("memory: { grad_bytes: 3 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:23: 'grad_bytes' must be 2 (bf16) or 4 (fp32), got 3");
	expect_error("memory: { grad_bytes: 8 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:23: 'grad_bytes' must be between 2 and 4, got 8");
	expect_error("memory: { allocator_margin: 1.5 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:29: 'allocator_margin' must be at most 1, got 1.5");
	expect_error("memory: { allocator_margin: -0.1 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:29: 'allocator_margin' must be at least 0 and at most 1, got -0.1");
	expect_error("estimate: { mfu: 1.5 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:18: 'mfu' must be at most 1, got 1.5");
	expect_error("checkpoint:\n  warn_extra_waste: 0.05\n  reject_extra_waste: 0.01\n", cat,
		     POLICY_ERR_VALUE,
		     "p.yaml:3:23: 'reject_extra_waste' (0.01) must not be below 'warn_extra_waste' (0.05)");
	expect_error("partitions:\n  a: { max_gpus: -8 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:2:18: 'max_gpus' must be at least 0, got -8");
}

/* Issue 14: the request budget and the log's size bound. */
/* reader: { not_followed: info|warn|reject } (SCRIPT_NOT_FOLLOWED, issue 18). */
static void test_reader(void **st)
{
	struct adv_policy *p;
	char buf[8192];

	(void)st;
	p = load_ok("mode: enforce\n");
	assert_int_equal(p->reader_not_followed, 1);
	policy_destroy(p);
	p = load_ok("reader: { not_followed: reject }\n");
	assert_int_equal(p->reader_not_followed, 2);
	assert_true(policy_render_yaml(p, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "not_followed: reject"));
	policy_destroy(p);
	p = load_ok("reader:\n  not_followed: INFO\n");
	assert_int_equal(p->reader_not_followed, 0);
	policy_destroy(p);
	p = load_ok("reader:\n");
	assert_int_equal(p->reader_not_followed, 1);
	policy_destroy(p);
	expect_error("reader: { not_followed: deny }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:25: expected info, warn or reject for 'not_followed', got 'deny'");
	expect_error("reader: { not_followed: [warn] }\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:25: expected info, warn or reject for 'not_followed', got a list");
	expect_error("reader: { followed: warn }\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:11: unknown key 'followed' in section 'reader'; expected one of: not_followed");
	expect_error("reader: warn\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:9: expected a mapping for section 'reader', got a scalar");
}

/* require: (issue 26): the settings a job must state; names checked. */
static void test_require(void **st)
{
	struct adv_policy *p, *q;
	char buf[8192];

	(void)st;
	p = load_ok("mode: enforce\n");
	assert_int_equal(p->n_require, 0);
	assert_true(policy_render_yaml(p, buf, sizeof(buf)) > 0);
	assert_null(strstr(buf, "require:"));
	policy_destroy(p);
	p = load_ok("require: [recompute, zero, grad_dtype]\n");
	assert_int_equal(p->n_require, 3);
	assert_string_equal(p->require[0], "recompute");
	assert_string_equal(p->require[2], "grad_dtype");
	/* Rendered, it loads again to the same list. */
	assert_true(policy_render_yaml(p, buf, sizeof(buf)) > 0);
	q = load_ok(buf);
	assert_int_equal(q->n_require, 3);
	assert_string_equal(q->require[1], "zero");
	policy_destroy(q);
	policy_destroy(p);
	expect_error("require: [recompte]\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:10: unknown setting 'recompte' in require: expected model, tp, pp, "
		     "cp, ep, zero, precision, seq, mbs, gbs, recompute, ckpt or grad_dtype");
	expect_error("require: recompute\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:10: expected a list of strings for 'require', got a scalar");
	expect_error("require: [[a]]\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:11: expected a string for 'require', got a list");
}

static void test_err_limits(void **st)
{
	struct adv_policy *p;

	expect_error("limits: { requests_per_s: -1 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:27: 'requests_per_s' must be at least 0 and at most 1e+06, got -1");
	expect_error("limits: { requests_per_s: 2e6 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:27: 'requests_per_s' must be at most 1e+06, got 2e6");
	expect_error("limits: { requests_per_s: lots }\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:27: expected a number for 'requests_per_s', got 'lots'");
	expect_error("limits: { requests_per_s: .nan }\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:27: expected a number for 'requests_per_s', got '.nan'");
	expect_error("limits: { burst: 0 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:18: 'burst' must be between 1 and 1000000000, got 0");
	expect_error("limits:\n  burst: 1.5\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:2:10: expected an integer for 'burst', got '1.5'");
	expect_error("limits: [50, 500]\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:1:9: expected a mapping for section 'limits', got a list");
	expect_error("log: { max_mb: -5 }\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:1:16: 'max_mb' must be between 0 and 16777216, got -5");
	expect_error("log:\n  retention_days: 7\n  max_mb: 99999999999\n", cat, POLICY_ERR_VALUE,
		     "p.yaml:3:11: 'max_mb' must be between 0 and 16777216, got 99999999999");
	/* 0 is no limit and no bound: allowed. */
	p = load_ok("limits: { requests_per_s: 0 }\nlog: { max_mb: 0 }\n");
	assert_float_equal(p->requests_per_s, 0, 0);
	assert_int_equal(p->burst, 500);
	assert_int_equal(p->log_max_mb, 0);
	policy_destroy(p);
}

static void test_err_partition_unknown_gpu(void **st)
{
	struct adv_policy *p = NULL;
	char err[ADV_ERR_MAX];

	expect_error("mode: enforce\n"
		     "partitions:\n"
		     "  h100: { gpu: h100-sxm }\n"
		     "  big:\n"
		     "    gpu: h900\n"
		     "    max_gpus: 64\n",
		     cat, POLICY_ERR_VALUE,
		     "p.yaml:5:10: unknown GPU 'h900' in partition 'big': not a name or alias in "
		     "the catalog");
	/* Without a catalog there is nothing to check against. */
	assert_int_equal(policy_load_string("p.yaml", "partitions:\n  big: { gpu: h900 }\n", NULL,
					    &p, err, sizeof(err)),
			 POLICY_OK);
	assert_string_equal(p->partitions[0].gpu, "h900");
	policy_destroy(p);
}

static void test_err_duplicates(void **st)
{
	expect_error("partitions:\n  gpu: { max_gpus: 8 }\n  GPU: { max_gpus: 16 }\n", cat,
		     POLICY_ERR_DUPLICATE, "p.yaml:3:3: duplicate partition 'GPU'");
	/* fuzz_policy: a name with a comma loaded, and its lookup then stopped at the comma. */
	expect_error("partitions:\n  \"a,b\": { max_gpus: 8 }\n", cat, POLICY_ERR_SCHEMA,
		     "p.yaml:2:3: partition name 'a,b' has a ',': Slurm partition names cannot "
		     "(a comma separates a list of partitions)");
	expect_error("mode: warn\nlog: {}\nmode: enforce\n", cat, POLICY_ERR_DUPLICATE,
		     "p.yaml:3:1: duplicate key 'mode' in the policy, first given at line 1, column 1");
}

static void test_err_unreadable(void **st)
{
	struct adv_policy *p = (struct adv_policy *)1;
	char err[ADV_ERR_MAX];

	assert_int_equal(policy_load("/nonexistent/policy.yaml", cat, &p, err, sizeof(err)),
			 POLICY_ERR_IO);
	assert_null(p);
	assert_string_equal(err, "/nonexistent/policy.yaml: cannot open: No such file or directory");
	assert_string_equal(policy_strerror(POLICY_ERR_IO), "cannot read the policy file");
	assert_string_equal(policy_mode_name(ADV_MODE_WARN), "warn");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_empty_file),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_shipped_policy),
		cmocka_unit_test(test_shipped_policy_enforced),
		cmocka_unit_test(test_all_keys),
		cmocka_unit_test(test_is_admin),
		cmocka_unit_test(test_render_round_trip),
		cmocka_unit_test(test_err_syntax),
		cmocka_unit_test(test_err_unknown_key),
		cmocka_unit_test(test_err_wrong_type),
		cmocka_unit_test(test_err_out_of_range),
		cmocka_unit_test(test_require),
		cmocka_unit_test(test_err_limits),
		cmocka_unit_test(test_err_partition_unknown_gpu),
		cmocka_unit_test(test_err_duplicates),
		cmocka_unit_test(test_err_unreadable),
	};

	return cmocka_run_group_tests(tests, load_catalog, free_catalog);
}
