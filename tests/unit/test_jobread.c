/*
 * test_jobread.c - from what the job reader found to the verdict and back
 * (common/jobread/apply.c, the engine's world-size and step-interval
 * rules): precedence of --llm-* options with SCRIPT_CONFLICT, unknowns as
 * SCRIPT_UNKNOWN infos, inline architectures, WORLD_SIZE_MISMATCH, and
 * fixes rewritten in the job's own terms.  The values are set directly
 * (as a framework reader would), so these tests do not depend on the shell
 * evaluator or the config parsers; test_fwflags and test_fwconfig read
 * real scripts end to end.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/options.h"
#include "fixture.h"
#include "jobread/jobread.h"

static const char policy_yaml[] =
	"mode: enforce\n"
	"partitions:\n"
	"  h100: { gpu: h100-sxm, gpus_per_node: 8 }\n"
	"  soft: { gpu: h100-sxm, gpus_per_node: 8, mode: warn }\n";

static int setup(void **st)
{
	return fixture_setup(st, NULL, policy_yaml);
}

static void set(struct jobread_out *o, enum jobread_field f, long long v, const char *file,
		int line, const char *key, enum jobread_style style)
{
	struct jobread_value *x = &o->v[f];

	memset(x, 0, sizeof(*x));
	x->set = true;
	x->i = v;
	x->f = (double)v;
	snprintf(x->s, sizeof(x->s), "%lld", v);
	snprintf(x->src.file, sizeof(x->src.file), "%s", file);
	x->src.line = line;
	snprintf(x->src.key, sizeof(x->src.key), "%s", key);
	x->src.style = style;
}

static void set_str(struct jobread_out *o, enum jobread_field f, const char *v, const char *file,
		    int line, const char *key)
{
	set(o, f, 0, file, line, key, JR_STYLE_FLAG);
	snprintf(o->v[f].s, sizeof(o->v[f].s), "%s", v);
}

/* Resources as Slurm resolved them; the workload comes from out only. */
static void judge(struct fixture *s, struct jobread_out *out, struct adv_request *r,
		  struct adv_result *res, const char *partition, int nodes)
{
	struct adv_finding pre[16];

	engine_request_init(r);
	snprintf(r->res.gpu, sizeof(r->res.gpu), "h100");
	r->res.nodes = nodes;
	r->res.gpus_per_node = 8;
	r->res.gpus = nodes * 8;
	snprintf(r->res.partition, sizeof(r->res.partition), "%s", partition);
	r->n_pre = jobread_apply(s->cat, out, r, pre, 16);
	r->pre = pre;
	engine_check(s->cat, s->pol, r, res);
	jobread_annotate(out, r, res);
}

static const char *source(const struct adv_result *res, const char *field)
{
	for (int i = 0; i < res->n_sources; i++)
		if (!strcmp(res->sources[i].field, field))
			return res->sources[i].where;
	return NULL;
}

/* Megatron, TP=3 with 64 heads on 4 x 8 GPUs: rejected, and the fix names
 * the line and the flag the job wrote. */
static void test_megatron_tp3(void **st)
{
	struct fixture *s = *st;
	struct jobread_out out;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	memset(&out, 0, sizeof(out));
	out.is_llm = true;
	set_str(&out, JR_MODEL, "llama3-70b", "train.sbatch", 4, "--llm-model");
	out.v[JR_MODEL].set = false;   /* the model comes from the architecture below */
	set(&out, JR_TP, 3, "train.sbatch", 6, "--tensor-model-parallel-size", JR_STYLE_FLAG);
	set(&out, JR_ARCH_LAYERS, 80, "train.sbatch", 9, "--num-layers", JR_STYLE_FLAG);
	set(&out, JR_ARCH_HIDDEN, 8192, "train.sbatch", 10, "--hidden-size", JR_STYLE_FLAG);
	set(&out, JR_ARCH_HEADS, 64, "train.sbatch", 11, "--num-attention-heads", JR_STYLE_FLAG);
	set(&out, JR_ARCH_KV_HEADS, 8, "train.sbatch", 12, "--num-query-groups", JR_STYLE_FLAG);
	set(&out, JR_ARCH_GATED, 1, "train.sbatch", 13, "--swiglu", JR_STYLE_BOOL);
	set(&out, JR_WORLD, 32, "train.sbatch", 20, "srun --ntasks-per-node", JR_STYLE_FLAG);
	judge(s, &out, &r, &res, "h100", 4);
	assert_int_equal(res.verdict, ADV_REJECT);
	f = fixture_finding(&res, "TP_NOT_DIVIDE_HEADS");
	assert_non_null(f);
	assert_non_null(strstr(f->fix_job, "--tensor-model-parallel-size "));
	assert_non_null(strstr(f->fix_job, "(train.sbatch line 6, TP=3)"));
	assert_string_equal(res.model, "inline");
	assert_true(res.llm_job);
	assert_string_equal(source(&res, "tp"), "train.sbatch:6 --tensor-model-parallel-size");
	assert_string_equal(source(&res, "heads"), "train.sbatch:11 --num-attention-heads");
	/* The vocabulary was not stated: the default taken is said. */
	assert_non_null(fixture_finding(&res, "SCRIPT_ASSUMED"));
	assert_null(fixture_finding(&res, "MODEL_NOT_GIVEN"));
}

/* nanotron: dp*tp*pp = 8 but torchrun starts 2 x 8 = 16 processes. */
static void test_nanotron_world(void **st)
{
	struct fixture *s = *st;
	struct jobread_out out;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	memset(&out, 0, sizeof(out));
	out.is_llm = true;
	set_str(&out, JR_MODEL, "llama3-8b", "config.yaml", 30, "model");
	set(&out, JR_DP, 4, "config.yaml", 12, "parallelism.dp", JR_STYLE_YAML);
	set(&out, JR_TP, 2, "config.yaml", 16, "parallelism.tp", JR_STYLE_YAML);
	set(&out, JR_PP, 1, "config.yaml", 14, "parallelism.pp", JR_STYLE_YAML);
	set(&out, JR_LAYOUT_EXACT, 1, "", 0, "", JR_STYLE_FLAG);
	set(&out, JR_WORLD, 16, "run.sbatch", 9, "torchrun", JR_STYLE_FLAG);
	set(&out, JR_NODES, 2, "run.sbatch", 9, "--nnodes", JR_STYLE_FLAG);
	set(&out, JR_NPROC_PER_NODE, 8, "run.sbatch", 9, "--nproc_per_node", JR_STYLE_FLAG);
	judge(s, &out, &r, &res, "h100", 2);
	assert_int_equal(res.verdict, ADV_REJECT);
	f = fixture_finding(&res, "WORLD_SIZE_MISMATCH");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "16"));
	assert_string_equal(f->fix_job, "dp: 8 (config.yaml line 12, DP=4)");
	assert_null(fixture_finding(&res, "GPU_COUNT_MISMATCH"));

	/* Right layout: accepted as far as the world goes. */
	set(&out, JR_DP, 8, "config.yaml", 12, "parallelism.dp", JR_STYLE_YAML);
	judge(s, &out, &r, &res, "h100", 2);
	assert_null(fixture_finding(&res, "WORLD_SIZE_MISMATCH"));

	/* torchrun --nnodes 1 in a 2-node job. */
	set(&out, JR_NODES, 1, "run.sbatch", 9, "--nnodes", JR_STYLE_FLAG);
	set(&out, JR_WORLD, 8, "run.sbatch", 9, "torchrun", JR_STYLE_FLAG);
	set(&out, JR_DP, 4, "config.yaml", 12, "parallelism.dp", JR_STYLE_YAML);
	judge(s, &out, &r, &res, "h100", 2);
	f = fixture_finding(&res, "WORLD_SIZE_MISMATCH");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "on 1 node but the job has 2"));
	assert_non_null(strstr(f->fix_job, "--nnodes 2 (run.sbatch line 9, NODES=1)"));
}

/* An option that disagrees wins, with a warning naming both. */
static void test_conflict(void **st)
{
	struct fixture *s = *st;
	struct jobread_out out;
	struct adv_request r;
	struct adv_result res;
	struct adv_finding pre[16];
	const struct adv_finding *f;
	char err[128];

	memset(&out, 0, sizeof(out));
	out.is_llm = true;
	set_str(&out, JR_MODEL, "llama3-8b", "job.sh", 3, "--model_name_or_path");
	set(&out, JR_TP, 2, "job.sh", 5, "--tp", JR_STYLE_FLAG);
	engine_request_init(&r);
	snprintf(r.res.gpu, sizeof(r.res.gpu), "h100");
	r.res.gpus = 8;
	assert_int_equal(options_apply(&r.wl, "layout", "tp4", err, sizeof(err)), 0);
	r.n_pre = jobread_apply(s->cat, &out, &r, pre, 16);
	r.pre = pre;
	engine_check(s->cat, s->pol, &r, &res);
	jobread_annotate(&out, &r, &res);
	f = fixture_finding(&res, "SCRIPT_CONFLICT");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	assert_non_null(strstr(f->message, "tp 4"));
	assert_non_null(strstr(f->message, "gives 2 (job.sh:5 --tp)"));
	assert_int_equal(res.layout.tp, 4);
	assert_non_null(strstr(source(&res, "tp"), "--llm-* option"));
	/* The same model under another alias is no conflict. */
	assert_null(strstr(f->message, "model"));
}

/* What is not known is said, with the option that supplies it. */
static void test_unknown(void **st)
{
	struct fixture *s = *st;
	struct jobread_out out;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	memset(&out, 0, sizeof(out));
	out.is_llm = true;
	set(&out, JR_MODEL, 0, "job.sh", 7, "--model", JR_STYLE_FLAG);
	out.v[JR_MODEL].unknown = true;
	snprintf(out.v[JR_MODEL].s, sizeof(out.v[JR_MODEL].s), "the output of $(...)");
	judge(s, &out, &r, &res, "h100", 1);
	f = fixture_finding(&res, "SCRIPT_UNKNOWN");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_INFO);
	assert_string_equal(f->fix, "--llm-model=NAME");
	assert_non_null(strstr(f->message, "job.sh:7 --model"));
	assert_int_equal(res.n_unknown, 1);
	assert_non_null(strstr(res.unknown[0], "model (job.sh:7 --model)"));
	assert_int_not_equal(res.verdict, ADV_REJECT);
}

/* Issue 18: what the job states is marked job, what it states in a form
 * not known before it runs assumed, and a trainer's documented default its
 * own; a finding's uses name them, and a reject resting on the assumed
 * one is a warning. */
static void test_provenance_marks(void **st)
{
	struct fixture *s = *st;
	struct jobread_out out;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	memset(&out, 0, sizeof(out));
	out.is_llm = true;
	snprintf(out.trainer, sizeof(out.trainer), "megatron");
	set_str(&out, JR_MODEL, "llama3-70b", "train.sbatch", 4, "--model");
	set(&out, JR_SEQ, 8192, "train.sbatch", 7, "--seq-length", JR_STYLE_FLAG);
	set(&out, JR_MBS, 1, "train.sbatch", 8, "--micro-batch-size", JR_STYLE_FLAG);
	set(&out, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, "train.sbatch", 9, "--recompute-granularity",
	    JR_STYLE_FLAG);
	set(&out, JR_PRECISION, ADV_PREC_BF16, "train.sbatch", 10, "--bf16", JR_STYLE_BOOL);
	set(&out, JR_TP, 0, "train.sbatch", 6, "--tensor-model-parallel-size", JR_STYLE_FLAG);
	out.v[JR_TP].unknown = true;
	judge(s, &out, &r, &res, "h100", 1);
	assert_int_equal(r.wl.from[ADV_F_SEQ], ADV_FROM_JOB);
	assert_int_equal(r.wl.from[ADV_F_TP], ADV_FROM_ASSUMED);
	assert_int_equal(r.wl.from[ADV_F_ZERO], ADV_FROM_FRAMEWORK);
	assert_int_equal(res.from[ADV_F_ZERO], ADV_FROM_FRAMEWORK);
	assert_int_equal(res.from[ADV_F_MODEL], ADV_FROM_JOB);
	/* 70B at ZeRO 0 on 8 GPUs with TP unknown: TP 1 is a guess. */
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	assert_non_null(strstr(f->message, "as assumed: tp 1"));
	assert_true(f->uses & ADV_USES(ADV_F_SEQ));
	assert_int_equal(res.verdict, ADV_WARN);
	/* Stated, the same TP makes it a reject. */
	set(&out, JR_TP, 1, "train.sbatch", 6, "--tensor-model-parallel-size", JR_STYLE_FLAG);
	judge(s, &out, &r, &res, "h100", 1);
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	assert_int_equal(res.from[ADV_F_TP], ADV_FROM_JOB);
	assert_string_equal(source(&res, "tp"), "train.sbatch:6 --tensor-model-parallel-size");
}

/* A model name the catalog does not know, read from the job: an info,
 * not a reject (the user typed no option to correct). */
static void test_unknown_model_read(void **st)
{
	struct fixture *s = *st;
	struct jobread_out out;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	memset(&out, 0, sizeof(out));
	out.is_llm = true;
	set_str(&out, JR_MODEL, "my-org/secret-model-13b", "job.sh", 7, "--model_name_or_path");
	judge(s, &out, &r, &res, "h100", 1);
	f = fixture_finding(&res, "MODEL_UNKNOWN");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_INFO);
	assert_int_equal(res.verdict, ADV_ACCEPT);
}

/* Checkpoint every N steps becomes time through the step estimate. */
static void test_ckpt_steps(void **st)
{
	struct fixture *s = *st;
	struct jobread_out out;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	memset(&out, 0, sizeof(out));
	out.is_llm = true;
	set_str(&out, JR_MODEL, "llama3-70b", "job.sh", 3, "--model");
	set(&out, JR_TP, 8, "job.sh", 4, "--tensor-model-parallel-size", JR_STYLE_FLAG);
	set(&out, JR_PP, 4, "job.sh", 5, "--pipeline-model-parallel-size", JR_STYLE_FLAG);
	set(&out, JR_ZERO, 1, "job.sh", 6, "--use-distributed-optimizer", JR_STYLE_BOOL);
	set(&out, JR_CKPT_STEPS, 20, "job.sh", 9, "--save-interval", JR_STYLE_FLAG);
	judge(s, &out, &r, &res, "h100", 16);
	f = fixture_finding(&res, "CKPT_STEPS");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "every 20 steps"));
	assert_true(res.checkpoint.interval_s > 0);
	assert_true(fabs(res.checkpoint.interval_s - 20 * res.estimate.step_time_s) < 1e-6);
	/* Far too often: the fix is in steps, on the job's line. */
	f = fixture_finding(&res, "CKPT_TOO_SHORT");
	assert_non_null(f);
	assert_non_null(strstr(f->fix_job, "--save-interval "));
	assert_non_null(strstr(f->fix_job, "(job.sh line 9, CKPT_STEPS=20)"));
	assert_non_null(strstr(f->fix_job, "s per step"));
}

/* Not an LLM job: no model, no flags: the options say nothing either. */
static void test_not_llm(void **st)
{
	struct jobread_out out;
	struct adv_request r;

	(void)st;
	memset(&out, 0, sizeof(out));
	engine_request_init(&r);
	assert_false(jobread_options_given(&r.wl));
	assert_int_equal(r.wl.world, ADV_UNSET);
	r.wl.zero = 2;
	assert_true(jobread_options_given(&r.wl));
}

/* Warn mode turns a world-size reject into a warning like any other. */
static void test_world_warn_mode(void **st)
{
	struct fixture *s = *st;
	struct jobread_out out;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	memset(&out, 0, sizeof(out));
	out.is_llm = true;
	set_str(&out, JR_MODEL, "llama3-8b", "job.sh", 3, "--model");
	set(&out, JR_WORLD, 16, "job.sh", 8, "--nproc_per_node", JR_STYLE_FLAG);
	judge(s, &out, &r, &res, "soft", 1);
	f = fixture_finding(&res, "WORLD_SIZE_MISMATCH");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	assert_non_null(strstr(f->message, "processes share GPUs"));
}

/* Fewer processes than GPUs runs: GPUS_IDLE (a warning, whatever the
 * mode), DP over the processes, and the fix in the launcher's terms. */
static void test_world_fewer_idle(void **st)
{
	struct fixture *s = *st;
	struct jobread_out out;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	memset(&out, 0, sizeof(out));
	out.is_llm = true;
	set_str(&out, JR_MODEL, "llama3-8b", "job.sh", 3, "--model");
	set(&out, JR_WORLD, 4, "job.sh", 8, "--nproc_per_node", JR_STYLE_FLAG);
	set(&out, JR_NPROC_PER_NODE, 4, "job.sh", 8, "--nproc_per_node", JR_STYLE_FLAG);
	judge(s, &out, &r, &res, "h100", 1);
	assert_null(fixture_finding(&res, "WORLD_SIZE_MISMATCH"));
	f = fixture_finding(&res, "GPUS_IDLE");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	assert_non_null(strstr(f->message, "4 GPUs stay idle"));
	assert_non_null(strstr(f->fix_job, "--nproc_per_node 8"));
	assert_int_equal(res.layout.dp, 4);
}

/* A launch in a Slurm step on part of the job (srun -N 2 in a 3-node job)
 * is held to its step: 16 processes on 2 machines match it, dp spans the
 * step's GPUs, and STEP_SUBSET says the other node is not judged.  The
 * same launch with the whole job as its step is a mismatch; a part whose
 * size is only known at run time is not compared at all. */
static void test_step_subset(void **st)
{
	struct fixture *s = *st;
	struct jobread_out out;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	memset(&out, 0, sizeof(out));
	out.is_llm = true;
	set_str(&out, JR_MODEL, "llama3-8b", "job.sbatch", 12, "--model_name_or_path");
	set(&out, JR_WORLD, 16, "job.sbatch", 10, "--num_processes", JR_STYLE_FLAG);
	set(&out, JR_NODES, 2, "job.sbatch", 10, "--num_machines", JR_STYLE_FLAG);
	out.step_nodes = 2;
	snprintf(out.step_src.file, sizeof(out.step_src.file), "job.sbatch");
	out.step_src.line = 9;
	snprintf(out.step_src.key, sizeof(out.step_src.key), "--nodes");
	judge(s, &out, &r, &res, "h100", 3);
	assert_null(fixture_finding(&res, "WORLD_SIZE_MISMATCH"));
	assert_int_equal(res.layout.dp, 16);
	assert_int_equal(res.layout.nodes, 3);
	f = fixture_finding(&res, "STEP_SUBSET");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_INFO);
	assert_non_null(strstr(f->message, "2 of the job's 3 nodes (job.sbatch:9 --nodes)"));

	/* The step's own count is still checked: 8 processes on its 16 GPUs
	 * leave 8 idle, 24 share them. */
	set(&out, JR_WORLD, 8, "job.sbatch", 10, "--num_processes", JR_STYLE_FLAG);
	out.v[JR_NODES].set = false;
	judge(s, &out, &r, &res, "h100", 3);
	f = fixture_finding(&res, "GPUS_IDLE");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "its Slurm step has 16 GPUs"));
	set(&out, JR_WORLD, 24, "job.sbatch", 10, "--num_processes", JR_STYLE_FLAG);
	judge(s, &out, &r, &res, "h100", 3);
	f = fixture_finding(&res, "WORLD_SIZE_MISMATCH");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "its Slurm step has 16 GPUs"));

	/* No step of its own: 2 machines in a 3-node job is a mismatch. */
	set(&out, JR_WORLD, 16, "job.sbatch", 10, "--num_processes", JR_STYLE_FLAG);
	set(&out, JR_NODES, 2, "job.sbatch", 10, "--num_machines", JR_STYLE_FLAG);
	out.step_nodes = 0;
	judge(s, &out, &r, &res, "h100", 3);
	f = fixture_finding(&res, "WORLD_SIZE_MISMATCH");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "on 2 nodes but the job has 3"));
	assert_null(fixture_finding(&res, "STEP_SUBSET"));

	/* srun -w "$HOSTS": a part of unknown size is not compared. */
	out.step_nodes = -1;
	judge(s, &out, &r, &res, "h100", 3);
	assert_null(fixture_finding(&res, "WORLD_SIZE_MISMATCH"));
	f = fixture_finding(&res, "STEP_SUBSET");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "chosen at run time"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_megatron_tp3),
		cmocka_unit_test(test_nanotron_world),
		cmocka_unit_test(test_conflict),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_unknown_model_read),
		cmocka_unit_test(test_ckpt_steps),
		cmocka_unit_test(test_not_llm),
		cmocka_unit_test(test_provenance_marks),
		cmocka_unit_test(test_world_warn_mode),
		cmocka_unit_test(test_world_fewer_idle),
		cmocka_unit_test(test_step_subset),
	};

	return cmocka_run_group_tests(tests, setup, fixture_teardown);
}
