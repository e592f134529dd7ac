/*
 * bench.c - advisor benchmarks: figures to read, never a pass/fail test.
 *
 * Each benchmark is one function in the table below; it fills a figure
 * (operations per second and microseconds per operation).  The program
 * prints a readable line per benchmark and then one JSON line with all of
 * them, so CI can keep the history.  Add a benchmark by adding a function
 * and a table row (daemon round trips, planner runs, ...).
 *
 *   advisor-bench [--catalog FILE] [--seconds S] [--only NAME]
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/catalog.h"
#include "config/policy.h"
#include "engine/engine.h"
#include "engine/options.h"
#include "engine/planner.h"
#include "jobread/jobread.h"
#include "util.h"
#include "wire/scripttext.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif
#define BENCH_DEFAULT_CATALOG SRCDIR "/etc/catalog.yaml"
#define BENCH_DEFAULT_SECONDS 1.0
#define BENCH_BATCH 1000

struct bench_env {
	catalog_t *cat;
	struct adv_policy pol;
	double seconds;
};

struct bench_figure {
	double ops_per_s;
	double us_per_op;
	long ops;
	char note[ADV_MSG_MAX];
};

typedef int (*bench_fn)(const struct bench_env *env, struct bench_figure *fig);

/*
 * CPU time of this thread: the figures are per core and stay meaningful on
 * a loaded machine (CI runners, other builds), where wall time is not.
 */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int build_request(struct adv_request *r, const char *gpu, int gpus, const char *model,
			 const char *const *opts)
{
	char err[256];

	engine_request_init(r);
	adv_strlcpy(r->res.gpu, gpu, sizeof(r->res.gpu));
	r->res.gpus = gpus;
	adv_strlcpy(r->wl.model, model, sizeof(r->wl.model));
	for (; opts && opts[0]; opts += 2) {
		if (options_apply(&r->wl, opts[0], opts[1], err, sizeof(err)) != 0) {
			fprintf(stderr, "advisor-bench: %s\n", err);
			return -1;
		}
	}
	return 0;
}

static void set_rate(struct bench_figure *fig, long ops, double el)
{
	fig->ops = ops;
	fig->ops_per_s = ops / el;
	fig->us_per_op = el * 1e6 / ops;
}

/*
 * Runs engine_check() on one request for env->seconds on one core, reading
 * the clock every batch checks (1 for slow checks, more for fast ones so the
 * clock does not dominate); *res is the last answer.
 */
static void run_checks(const struct bench_env *env, const struct adv_request *r, int batch,
		       struct adv_result *res, struct bench_figure *fig)
{
	double start = now_s(), el;
	long n = 0;
	int i;

	do {
		for (i = 0; i < batch; i++)
			engine_check(env->cat, &env->pol, r, res);
		n += batch;
		el = now_s() - start;
	} while (el < env->seconds);
	set_rate(fig, n, el);
}

static int time_checks(const struct bench_env *env, const struct adv_request *r,
		       struct bench_figure *fig)
{
	static struct adv_result res;

	run_checks(env, r, BENCH_BATCH, &res, fig);
	adv_snprintf(fig->note, sizeof(fig->note), "verdict %s, %d findings, %.1f GiB per GPU",
		     engine_verdict_name(res.verdict), res.n_findings, res.memory.per_gpu_gib);
	return 0;
}

/* Llama 3 405B on 16,384 H100 as Meta laid it out (TP8 PP16 DP128). */
static int bench_check_405b(const struct bench_env *env, struct bench_figure *fig)
{
	static const char *const opts[] = { "layout", "tp8,pp16", "seq", "8192", "zero", "1",
					    "recompute", "full", "gbs", "16384",
					    "ckpt", "20m", "tokens", "15.6T", NULL };
	struct adv_request r;

	if (build_request(&r, "h100", 16384, "llama3-405b", opts) != 0)
		return -1;
	return time_checks(env, &r, fig);
}

/* The same job without ZeRO or recompute: rejected, with its fix search. */
static int bench_check_405b_reject(const struct bench_env *env, struct bench_figure *fig)
{
	static const char *const opts[] = { "layout", "tp8,pp16", "seq", "8192", "zero", "0",
					    "recompute", "none", "gbs", "16384",
					    "ckpt", "20m", NULL };
	struct adv_request r;

	if (build_request(&r, "h100", 16384, "llama3-405b", opts) != 0)
		return -1;
	return time_checks(env, &r, fig);
}

/* Runs planner_plan() (po NULL: default options) for env->seconds. */
static int time_plans(const struct bench_env *env, const struct adv_request *r,
		      const struct planner_opts *po, struct bench_figure *fig)
{
	static struct planner_plan plans[PLANNER_DEFAULT_TOP];
	char err[ADV_ERR_MAX], opt[PLANNER_OPTS_MAX];
	double start = now_s(), el;
	long ops = 0;
	int n = 0;

	do {
		if (planner_plan(env->cat, &env->pol, r, po, plans, PLANNER_DEFAULT_TOP, &n,
				 err, sizeof(err)) != PLANNER_OK) {
			fprintf(stderr, "advisor-bench: %s\n", err);
			return -1;
		}
		ops++;
		el = now_s() - start;
	} while (el < env->seconds);
	set_rate(fig, ops, el);
	opt[0] = '\0';
	if (n > 0)
		planner_plan_options(&plans[0], opt, sizeof(opt));
	adv_snprintf(fig->note, sizeof(fig->note), "%d plans, best %s", n, opt);
	return 0;
}

/* The full plan for Llama 3 405B on 16,384 H100 at 8K, Meta's global batch. */
static int bench_plan_405b(const struct bench_env *env, struct bench_figure *fig)
{
	static const char *const opts[] = { "seq", "8192", "gbs", "16384", "ckpt", "20m", NULL };
	struct adv_request r;

	if (build_request(&r, "h100", 16384, "llama3-405b", opts) != 0)
		return -1;
	return time_plans(env, &r, NULL, fig);
}

/* The same with warnings allowed: near-divisor PP (Meta's PP16) joins the search. */
static int bench_plan_405b_warn(const struct bench_env *env, struct bench_figure *fig)
{
	static const char *const opts[] = { "seq", "8192", "gbs", "16384", "ckpt", "20m", NULL };
	struct planner_opts po;
	struct adv_request r;

	if (build_request(&r, "h100", 16384, "llama3-405b", opts) != 0)
		return -1;
	planner_opts_init(&po);
	po.allow_warnings = true;
	return time_plans(env, &r, &po, fig);
}

/* The full plan for DeepSeek-V3 on 2,048 H800 (its paper's cluster). */
static int bench_plan_dsv3(const struct bench_env *env, struct bench_figure *fig)
{
	static const char *const opts[] = { "ckpt", "20m", NULL };
	struct adv_request r;

	if (build_request(&r, "h800", 2048, "deepseek-v3", opts) != 0)
		return -1;
	return time_plans(env, &r, NULL, fig);
}

/* A rejected 405B job (TP=3) with the BEST_PLAN fix the engine adds. */
static int bench_reject_with_fix(const struct bench_env *env, struct bench_figure *fig)
{
	static const char *const opts[] = { "layout", "tp3,pp16", "seq", "8192", "gbs", "16384",
					    "ckpt", "20m", NULL };
	static struct adv_result res;
	struct adv_request r;
	int i;

	if (build_request(&r, "h100", 16384, "llama3-405b", opts) != 0)
		return -1;
	run_checks(env, &r, 1, &res, fig);
	adv_snprintf(fig->note, sizeof(fig->note), "verdict %s, no BEST_PLAN",
		     engine_verdict_name(res.verdict));
	for (i = 0; i < res.n_findings; i++)
		if (!strcmp(res.findings[i].code, "BEST_PLAN"))
			adv_snprintf(fig->note, sizeof(fig->note), "verdict %s, fix %s",
				     engine_verdict_name(res.verdict), res.findings[i].fix);
	return 0;
}

/* ---- the job reader ------------------------------------------------------------ */

/* A Megatron-DeepSpeed job of 64 KiB (long, as real launch scripts with
 * their comments and argument arrays are) naming two config files. */
static const char script_head[] =
	"#!/bin/bash\n"
	"#SBATCH -N 4\n#SBATCH --gres=gpu:h100:8\n#SBATCH --ntasks-per-node=1\n"
	"set -euo pipefail\n"
	"export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
	"export MASTER_PORT=${MASTER_PORT:-6000}\n"
	"NNODES=${SLURM_NNODES:-1}\nGPUS_PER_NODE=8\n"
	"WORLD=$((NNODES * GPUS_PER_NODE))\n"
	"TP=8\nPP=4\n";
static const char script_tail[] =
	"GPT_ARGS=(\n"
	"  --tensor-model-parallel-size $TP   # within a node\n"
	"  --pipeline-model-parallel-size $PP\n"
	"  --num-layers 80 --hidden-size 8192 --num-attention-heads 64\n"
	"  --num-query-groups 8 --group-query-attention --ffn-hidden-size 28672 --swiglu\n"
	"  --seq-length 8192 --max-position-embeddings 8192\n"
	"  --micro-batch-size 1 --global-batch-size 512 --bf16\n"
	"  --use-distributed-optimizer --recompute-activations\n"
	"  --save /ckpt/llama70b --save-interval 500\n"
	")\n"
	"srun torchrun --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE \\\n"
	"  --rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \\\n"
	"  pretrain_gpt.py \"${GPT_ARGS[@]}\" --deepspeed --deepspeed_config ds_config.json \\\n"
	"  --data-path $(cat data.txt) --vocab-size 128256 --untie-embeddings-and-output-weights\n";
static const char ds_config[] =
	"{\n  \"train_micro_batch_size_per_gpu\": 1,\n  \"gradient_accumulation_steps\": 16,\n"
	"  \"zero_optimization\": { \"stage\": 1 },\n  \"bf16\": { \"enabled\": true }\n}\n";

struct bench_files {
	const char *name[2];
	const char *text[2];
};

static int bench_open(void *arg, const char *path, const char **text, size_t *len)
{
	const struct bench_files *f = arg;

	for (int i = 0; i < 2; i++)
		if (f->name[i] && strstr(path, f->name[i])) {
			*text = f->text[i];
			*len = strlen(f->text[i]);
			return JOBREAD_FILE_OK;
		}
	return JOBREAD_FILE_MISSING;
}

static char *script_64k(size_t *len)
{
	size_t cap = 64 * 1024, n;
	char *s = malloc(cap + 1);

	if (!s)
		return NULL;
	n = adv_snprintf(s, cap, "%s", script_head);
	/* Comments and variables, as real scripts carry them. */
	for (int i = 0; n + 200 + sizeof(script_tail) < cap; i++)
		n += adv_snprintf(s + n, cap - n, "# step %d: data mix, tokenizer and logging notes\n"
				  "LOG_DIR_%d=${HOME}/logs/run_%d\n", i, i % 50, i);
	n += adv_snprintf(s + n, cap - n, "%s", script_tail);
	*len = n;
	return s;
}

/* A hostile 1 MiB script: one word of nested "${A:=" that every level
 * would scan again, the slowest input the shell tests and fuzzing found. */
static char *script_hostile(size_t *len)
{
	size_t cap = 1024 * 1024, n = 0;
	char *s = malloc(cap + 1);

	if (!s)
		return NULL;
	n += adv_snprintf(s + n, cap - n, "srun torchrun --nnodes 1 train.py ");
	while (n + 8 < cap)
		n += adv_snprintf(s + n, cap - n, "${A:=");
	*len = n;
	return s;
}

static int time_reads(const struct bench_env *env, const char *text, size_t len,
		      struct bench_figure *fig)
{
	static struct jobread_out out;
	struct bench_files files = { { "ds_config.json", "data.txt" }, { ds_config, "/data/x\n" } };
	struct jobread_input in;
	double t0 = now_s(), el;
	long n = 0;

	memset(&in, 0, sizeof(in));
	in.tool = JOBREAD_SBATCH;
	in.script_name = "train.sbatch";
	in.script = text;
	in.script_len = len;
	in.cwd = "/home/user/run";
	adv_strlcpy(in.res.gpu, "h100", sizeof(in.res.gpu));
	in.res.gpus = 32;
	in.res.nodes = 4;
	in.res.gpus_per_node = 8;
	in.files.open = bench_open;
	in.files.arg = &files;
	do {
		jobread_read(env->cat, &in, &out);
		n++;
		el = now_s() - t0;
	} while (el < env->seconds);
	set_rate(fig, n, el);
	adv_snprintf(fig->note, sizeof(fig->note), "%.3f ms per read, %zu bytes, trainer %s, tp %s",
		     fig->us_per_op / 1000, len, out.trainer[0] ? out.trainer : "-",
		     out.v[JR_TP].set ? out.v[JR_TP].s : "-");
	return 0;
}

static int bench_script_read(const struct bench_env *env, struct bench_figure *fig)
{
	size_t len;
	char *s = script_64k(&len);
	int rc;

	if (!s)
		return -1;
	rc = time_reads(env, s, len, fig);
	free(s);
	return rc;
}

static int bench_script_hostile(const struct bench_env *env, struct bench_figure *fig)
{
	size_t len;
	char *s = script_hostile(&len);
	int rc;

	if (!s)
		return -1;
	rc = time_reads(env, s, len, fig);
	free(s);
	return rc;
}

/*
 * The largest script sbatch sends (Slurm's max_script_size, 4 MiB unless
 * set) read from a file and compacted as the plugin does before it ships
 * it (scripttext_read, issue 27): the 64 KiB job with 4 MiB of comments
 * before its launch, the case that reads the whole file (a script of
 * commands stops at the reader's 256 KiB).  From the page cache.
 */
static int bench_script_max(const struct bench_env *env, struct bench_figure *fig)
{
	size_t len, n = 0, cap = SCRIPTTEXT_SLURM_DEFAULT;
	char *job = script_64k(&len), path[256];
	struct scripttext st = { NULL, 0, 0, 0, JOBREAD_CUT_NONE };
	double t0, el;
	long reads = 0;
	FILE *f;
	int fd;

	adv_snprintf(path, sizeof(path), "%s/advisor-bench-script.XXXXXX",
		     getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = job ? mkstemp(path) : -1;
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		free(job);
		return -1;
	}
	while (n + len + 80 < cap)
		n += (size_t)fprintf(f, "# %06zu: data mix, tokenizer and logging notes, kept for the "
				     "record\n", n);
	fwrite(job, 1, len, f);
	n += len;
	free(job);
	if (fclose(f) != 0) {
		unlink(path);
		return -1;
	}
	t0 = now_s();
	do {
		scripttext_free(&st);
		if (scripttext_read(&st, path, 0, SCRIPTTEXT_SLURM_DEFAULT, 0) != 0)
			break;
		reads++;
		el = now_s() - t0;
	} while (el < env->seconds);
	unlink(path);
	if (!reads)
		return -1;
	set_rate(fig, reads, now_s() - t0);
	adv_snprintf(fig->note, sizeof(fig->note), "%.3f ms per read, %zu bytes -> %zu shipped, %s",
		     fig->us_per_op / 1000, n, st.len, st.cut == JOBREAD_CUT_NONE ? "whole" : "cut");
	scripttext_free(&st);
	return 0;
}

static const struct {
	const char *name;
	const char *what;
	bench_fn fn;
} benches[] = {
	{ "script_read", "reads/s, 64 KiB Megatron-DeepSpeed script + 2 config files",
	  bench_script_read },
	{ "script_hostile", "reads/s, hostile 1 MiB script cut off by the reader's bounds",
	  bench_script_hostile },
	{ "script_max", "reads/s, 4 MiB script (max_script_size) read and compacted for shipping",
	  bench_script_max },
	{ "engine_check_405b_16k", "engine checks/s, Llama 3 405B on 16,384 H100", bench_check_405b },
	{ "engine_reject_405b_16k", "engine checks/s, rejected 405B job incl. fix search",
	  bench_check_405b_reject },
	{ "plan_405b_16k", "plans/s, plan 405B on 16,384 H100", bench_plan_405b },
	{ "plan_405b_16k_warn", "plans/s, plan 405B on 16,384 H100, near-divisor PP allowed",
	  bench_plan_405b_warn },
	{ "plan_dsv3_2k", "plans/s, plan DeepSeek-V3 on 2,048 H800", bench_plan_dsv3 },
	{ "reject_with_fix", "checks/s, reject with fix (405B TP3, BEST_PLAN)", bench_reject_with_fix },
};

static int setup(struct bench_env *env, const char *catalog)
{
	char err[ADV_ERR_MAX];

	env->cat = catalog_create();
	if (!env->cat)
		return -1;
	if (catalog_load(env->cat, catalog, err, sizeof(err)) != CATALOG_OK) {
		fprintf(stderr, "advisor-bench: %s\n", err);
		return -1;
	}
	policy_defaults(&env->pol);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: advisor-bench [--catalog FILE] [--seconds S] [--only NAME]\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "catalog", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "only", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_env env = { .seconds = BENCH_DEFAULT_SECONDS };
	struct bench_figure figs[ADV_ARRAY_SIZE(benches)];
	const char *catalog = BENCH_DEFAULT_CATALOG, *only = NULL;
	bool ran[ADV_ARRAY_SIZE(benches)] = { false };
	size_t i;
	int c, rc = 0, first = 1;

	while ((c = getopt_long(argc, argv, "c:s:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			catalog = optarg;
			break;
		case 's':
			if (adv_parse_double(optarg, &env.seconds) != 0 || env.seconds <= 0) {
				fprintf(stderr, "advisor-bench: --seconds: '%s' is not a positive number\n",
					optarg);
				return 64;
			}
			break;
		case 'o':
			only = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 64;
		}
	}
	if (setup(&env, catalog) != 0) {
		catalog_destroy(env.cat);
		return 65;
	}
	for (i = 0; i < ADV_ARRAY_SIZE(benches); i++) {
		if (only && strcmp(only, benches[i].name))
			continue;
		memset(&figs[i], 0, sizeof(figs[i]));
		if (benches[i].fn(&env, &figs[i]) != 0) {
			rc = 1;
			continue;
		}
		ran[i] = true;
		printf("%-26s %12.0f /s %9.2f us  %s (%s)\n", benches[i].name, figs[i].ops_per_s,
		       figs[i].us_per_op, benches[i].what, figs[i].note);
	}
	printf("{\"bench\": {");
	for (i = 0; i < ADV_ARRAY_SIZE(benches); i++) {
		if (!ran[i])
			continue;
		printf("%s\"%s\": {\"ops_per_s\": %.0f, \"us_per_op\": %.3f, \"ops\": %ld}",
		       first ? "" : ", ", benches[i].name, figs[i].ops_per_s, figs[i].us_per_op,
		       figs[i].ops);
		first = 0;
	}
	printf("}}\n");
	catalog_destroy(env.cat);
	return rc;
}
