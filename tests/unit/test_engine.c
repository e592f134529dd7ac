/*
 * test_engine.c - the engine as a whole: name resolution, defaults, policy
 * modes, verdicts, estimates (magnitude and monotonicity) and helpers.
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

#include "config/policy.h"
#include "engine/engine.h"
#include "engine/estimate.h"
#include "engine/findings.h"
#include "engine/layout.h"
#include "engine/options.h"
#include "engine/roofline.h"
#include "fixture.h"

static const char policy_yaml[] =
	"mode: enforce\n"
	"user_mode_override: false\n"
	"partitions:\n"
	"  h100: { gpu: h100-sxm, gpus_per_node: 8 }\n"
	"  debug: { gpu: h100-sxm, mode: warn }\n"
	"  idle: { gpu: h100-sxm, mode: off }\n"
	"exempt: { users: [bench], accounts: [] }\n";

static int setup(void **st)
{
	return fixture_setup(st, NULL, policy_yaml);
}

static void test_defaults(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	/* Plain DDP keeps 18 B/param on every GPU: 8B needs 144 GB.  ZeRO 0
	 * is advisor's convenience, not the job's (issue 26: what is not
	 * stated is not known, also for a job given by --llm-* options), and
	 * ZeRO-3 would fit: a warning that names the assumption, with both
	 * figures. */
	fixture_req(&r, "h100", 8, "llama3-8b", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.verdict, ADV_WARN);
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	assert_non_null(strstr(f->message, "as assumed: zero 0"));
	assert_non_null(strstr(f->message, "at least"));
	assert_non_null(strstr(f->fix, "state --llm-zero"));
	assert_true(f->uses & ADV_USES(ADV_F_ZERO));
	assert_int_equal(res.from[ADV_F_ZERO], ADV_FROM_ASSUMED);
	assert_int_equal(res.from[ADV_F_MODEL], ADV_FROM_OPTION);
	assert_true(res.memory.least_bounded);
	assert_true(res.memory.least_gib < res.memory.usable_gib);
	assert_true(res.memory.per_gpu_gib > res.memory.usable_gib);
	assert_false(engine_has_finding(&res, ADV_CODE_BEST_PLAN));
	/* Read from the job's own text: the same. */
	r.wl.model_read = true;
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.verdict, ADV_WARN);
	/* Stated, the same memory is a reject. */
	fixture_req(&r, "h100", 8, "llama3-8b", "zero", "0", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.verdict, ADV_REJECT);
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	assert_null(strstr(f->message, "assumes"));
	assert_int_equal(res.from[ADV_F_ZERO], ADV_FROM_OPTION);
	assert_int_equal(res.precision, ADV_PREC_BF16);
	assert_int_equal(res.recompute, ADV_RECOMPUTE_SELECTIVE);
	assert_int_equal(res.task, ADV_TASK_TRAIN);
	assert_int_equal(res.framework, ADV_FW_GENERIC);
	assert_int_equal(res.seq, 4096);
	assert_int_equal(res.mbs, 1);
	assert_int_equal(res.gbs, 8);
	assert_int_equal(res.layout.zero, 0);
	assert_int_equal(res.layout.dp, 8);
	assert_int_equal(res.mode, ADV_MODE_ENFORCE);
	assert_true(res.has_layout && res.has_memory && res.has_checkpoint && res.has_estimate);
	/* With ZeRO-2 it fits and is accepted. */
	fixture_req(&r, "h100", 8, "llama3-8b", "zero", "2", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.verdict, ADV_ACCEPT);
	assert_int_equal(res.n_findings, 0);
	/* Short-context models default to their own max_seq. */
	fixture_req(&r, "a100", 64, "gpt3-175b", "layout", "tp8,pp8", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.seq, 2048);
	assert_int_equal(res.gbs, 32);  /* m = 4 * PP with dp = 1 */
}

/*
 * Issue 18: a reject rests only on what the job or an option states.  One
 * that rests on an engine default becomes a warning naming it; memory
 * stays a reject when even the least memory the defaults could take does
 * not fit; GBS stays one when only micro-batch 1 is assumed.
 */
static void test_provenance(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	/* TP stated: a reject, whatever else is assumed. */
	fixture_req(&r, "h100", 48, "llama3-8b", "layout", "tp3", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "TP_NOT_DIVIDE_HEADS");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	assert_int_equal(f->uses, ADV_USES(ADV_F_MODEL) | ADV_USES(ADV_F_TP));
	assert_int_equal(res.from[ADV_F_TP], ADV_FROM_OPTION);
	assert_int_equal(res.from[ADV_F_PP], ADV_FROM_DEFAULT);
	/* CP over a sequence the engine fills in: a guess, also for the
	 * options (issue 26): a warning naming it and the option; stated, a
	 * reject. */
	fixture_req(&r, "h100", 48, "llama3-8b", "layout", "tp8,cp3", "zero", "1", "seq", "4096",
		    NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(fixture_finding(&res, "CP_SEQ_NOT_DIVISIBLE")->severity, ADV_SEV_REJECT);
	fixture_req(&r, "h100", 48, "llama3-8b", "layout", "tp8,cp3", "zero", "1", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "CP_SEQ_NOT_DIVISIBLE");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	assert_non_null(strstr(f->message, "it assumes seq 4096"));
	assert_non_null(strstr(f->fix, "state --llm-seq"));
	assert_true(f->uses & ADV_USES(ADV_F_SEQ));
	/* ... and a reject once stated. */
	fixture_req(&r, "h100", 48, "llama3-8b", "layout", "tp8,cp3", "seq", "4096", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "CP_SEQ_NOT_DIVISIBLE");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	/* A value the job states in a form not known before it runs (the
	 * reader marks it assumed): TP 1 is a guess, memory warns. */
	fixture_req(&r, "h100", 8, "llama3-70b", "zero", "3", "seq", "8192", "mbs", "2",
		    "recompute", "none", "precision", "bf16", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(fixture_finding(&res, "MEM_OVER_CAPACITY")->severity, ADV_SEV_REJECT);
	r.wl.from[ADV_F_TP] = ADV_FROM_ASSUMED;
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	assert_non_null(strstr(f->message, "as assumed: tp 1"));
	assert_non_null(strstr(f->fix, "state --llm-layout"));
	assert_int_equal(res.verdict, ADV_WARN);
	/* 405B on 8 GPUs: no sequence, batch or sharding makes it fit, so
	 * the reject stands and no longer rests on those. */
	fixture_req(&r, "h100", 8, "llama3-405b", "layout", "tp8", NULL);
	r.wl.model_read = true;
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	assert_false(f->uses & ADV_USES(ADV_F_SEQ));
	assert_false(f->uses & ADV_USES(ADV_F_ZERO));
	assert_true(f->uses & ADV_USES(ADV_F_TP));
	/* GBS over DP with micro-batch 1 assumed: any micro-batch fails too. */
	fixture_req(&r, "h100", 64, "llama3-8b", "layout", "tp8", "gbs", "100", "zero", "1", NULL);
	r.wl.model_read = true;
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "GBS_NOT_DIVISIBLE");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	assert_false(f->uses & ADV_USES(ADV_F_MBS));
}

/* SCRIPT_NOT_FOLLOWED from the reader weighs as reader.not_followed says. */
static void test_not_followed_severity(void **st)
{
	struct fixture *s = *st;
	struct adv_policy *pol;
	struct adv_request r;
	struct adv_result res;
	struct adv_finding pre;
	char err[256];

	memset(&pre, 0, sizeof(pre));
	strcpy(pre.code, "SCRIPT_NOT_FOLLOWED");
	pre.severity = ADV_SEV_INFO;
	strcpy(pre.message, "job.sbatch:12 names torchrun, but the reader did not follow it");
	fixture_req(&r, "h100", 8, "", NULL);
	r.pre = &pre;
	r.n_pre = 1;
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(fixture_finding(&res, "SCRIPT_NOT_FOLLOWED")->severity, ADV_SEV_WARN);
	assert_int_equal(res.verdict, ADV_WARN);
	for (int sev = 0; sev <= 2; sev++) {
		static const char *const yaml[] = { "reader: { not_followed: info }\n",
						    "reader: { not_followed: warn }\n",
						    "reader: { not_followed: reject }\n" };

		assert_int_equal(policy_load_string("p", yaml[sev], s->cat, &pol, err, sizeof(err)), 0);
		engine_check(s->cat, pol, &r, &res);
		assert_int_equal(fixture_finding(&res, "SCRIPT_NOT_FOLLOWED")->severity, sev);
		assert_int_equal(res.verdict, sev);
		policy_destroy(pol);
	}
}

static void test_unknown_names(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	fixture_req(&r, "h100", 8, "llama3-7b", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "MODEL_UNKNOWN");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	assert_non_null(strstr(f->fix, "--llm-model=llama3-8b"));
	assert_int_equal(res.verdict, ADV_REJECT);
	assert_false(res.has_memory);
	/* An option is looked up by name and alias; a name whose words are
	 * one model's (issue 28, modelname.c) is that model's one
	 * suggestion, with the weights its quantization suffix says. */
	fixture_req(&r, "h100", 1, "Qwen/Qwen2.5-7B-Instruct-AWQ", "task", "infer", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "MODEL_UNKNOWN");
	assert_non_null(f);
	assert_string_equal(f->fix, "--llm-model=qwen2.5-7b --llm-weights=int4");
	/* Aliases resolve. */
	fixture_req(&r, "NVIDIA H100 80GB HBM3", 8, "meta-llama/Meta-Llama-3-70B", "layout", "tp8",
		    NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_null(fixture_finding(&res, "MODEL_UNKNOWN"));
	assert_null(fixture_finding(&res, "GPU_TYPE_UNKNOWN"));
	/* Unknown GPU: a warning, the layout is still judged. */
	fixture_req(&r, "tpu-v5p", 8, "llama3-8b", "layout", "tp3", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "GPU_TYPE_UNKNOWN");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	assert_non_null(fixture_finding(&res, "TP_NOT_DIVIDE_HEADS"));
	assert_false(res.has_memory);
	/* No model: only the layout. */
	fixture_req(&r, "h100", 8, "", "layout", "tp8", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "MODEL_NOT_GIVEN");
	assert_non_null(f);
	assert_int_equal(res.verdict, ADV_ACCEPT);
}

static void test_fp8(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;

	fixture_req(&r, "a100", 8, "llama3-8b", "precision", "fp8", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_non_null(fixture_finding(&res, "FP8_UNSUPPORTED"));
	fixture_req(&r, "h100", 8, "llama3-8b", "precision", "fp8", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_null(fixture_finding(&res, "FP8_UNSUPPORTED"));
}

static void test_modes(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	/* warn partition: the reject becomes a warning, the code stays. */
	fixture_req(&r, "", 48, "llama3-8b", "layout", "tp3", "partition", "debug", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.mode, ADV_MODE_WARN);
	assert_int_equal(res.verdict, ADV_WARN);
	f = fixture_finding(&res, "TP_NOT_DIVIDE_HEADS");
	assert_non_null(f);
	assert_int_equal(f->severity, ADV_SEV_WARN);
	assert_non_null(strstr(f->message, "not enforced"));
	/* off partition: accepted, nothing checked. */
	fixture_req(&r, "", 48, "llama3-8b", "layout", "tp3", "partition", "idle", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.verdict, ADV_ACCEPT);
	assert_int_equal(res.n_findings, 0);
	/* Exempt users are not checked. */
	fixture_req(&r, "h100", 48, "llama3-8b", "layout", "tp3", "user", "bench", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.verdict, ADV_ACCEPT);
	/* --llm-advisor without user_mode_override: denied. */
	fixture_req(&r, "h100", 8, "llama3-8b", "advisor", "off", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "POLICY_MODE_OVERRIDE_DENIED");
	assert_non_null(f);
	assert_string_equal(f->fix, "remove --llm-advisor");
	assert_int_equal(res.verdict, ADV_REJECT);
	/* With the override allowed the user's mode holds. */
	s->pol->user_mode_override = true;
	fixture_req(&r, "h100", 48, "llama3-8b", "layout", "tp3", "advisor", "warn", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	s->pol->user_mode_override = false;
	assert_null(fixture_finding(&res, "POLICY_MODE_OVERRIDE_DENIED"));
	assert_int_equal(res.mode, ADV_MODE_WARN);
	assert_int_equal(res.verdict, ADV_WARN);
}

/* Llama 3 405B on 16,384 H100 for 15.6T tokens: Meta reports 54 days at
 * 38-43% MFU; at the policy's 40% the model must land in the same range. */
static void test_estimate_405b(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;

	fixture_req(&r, "h100", 16384, "llama3-405b", "layout", "tp8,pp16", "seq", "8192",
		    "zero", "1", "recompute", "full", "tokens", "15.6T", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	print_message("405B: step %.2f s, %.0f tok/s, MFU %.2f, %.1f days, $%.0f, %.0f MWh\n",
		      res.estimate.step_time_s, res.estimate.tokens_per_s, res.estimate.mfu,
		      res.estimate.train_days, res.estimate.cost_usd, res.estimate.energy_mwh);
	assert_true(fabs(res.estimate.params_b - 405) < 0.02 * 405);
	assert_true(res.estimate.train_days > 40 && res.estimate.train_days < 150);
	assert_true(res.estimate.mfu > 0.15 && res.estimate.mfu <= 0.40);
	/* cost = GPU-hours x price, energy = GPU-hours x TDP x PUE */
	assert_true(fabs(res.estimate.cost_usd - res.estimate.train_days * 24 * 16384 * 2.89) <
		    1e-6 * res.estimate.cost_usd);
	assert_true(fabs(res.estimate.energy_mwh -
			 res.estimate.train_days * 24 * 16384 * 0.7 * 1.2 / 1000) <
		    1e-6 * res.estimate.energy_mwh);
}

/* More GPUs never show slower for the same layout family and global batch. */
static void test_estimate_monotone(void **st)
{
	static const char *const layouts[] = { "tp8", "tp8,pp4", "tp2", "tp8,pp2,cp2" };
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	size_t i;
	int gpus;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		double prev = 0;
		for (gpus = 32; gpus <= 16384; gpus *= 2) {
			fixture_req(&r, "h100", gpus, "llama3-70b", "layout", layouts[i],
				    "gbs", "4096", "tokens", "1T", NULL);
			engine_check(s->cat, s->pol, &r, &res);
			assert_true(res.has_estimate);
			assert_true(res.estimate.tokens_per_s >= prev);
			prev = res.estimate.tokens_per_s;
		}
	}
	/* Serving throughput grows with replicas too. */
	fixture_req(&r, "h100", 8, "llama3-70b", "task", "infer", "layout", "tp8", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	{
		double one = res.estimate.tokens_per_s;
		fixture_req(&r, "h100", 16, "llama3-70b", "task", "infer", "layout", "tp8", NULL);
		engine_check(s->cat, s->pol, &r, &res);
		assert_true(res.estimate.tokens_per_s > one);
	}
}

static void test_flops(void **st)
{
	struct fixture *s = *st;
	struct adv_job job;

	memset(&job, 0, sizeof(job));
	job.model = catalog_find_model(s->cat, "llama3-70b");
	catalog_model_params(job.model, &job.params);
	job.seq = 8192;
	/* 6 (Psi - V h) + 6 L a d s: causal attention, half of PaLM's 12 L h s
	 * (Megatron-Bridge's and Llama 3's count). */
	assert_true(fabs(estimate_flops_per_token(&job) -
			 (6 * (job.params.total - 128256.0 * 8192) + 6.0 * 80 * 64 * 128 * 8192)) < 1);
	assert_true(roofline_peak_flops(catalog_find_gpu(s->cat, "h100"), ADV_PREC_FP8) == 1979e12);
	assert_true(roofline_peak_flops(catalog_find_gpu(s->cat, "a100"), ADV_PREC_FP8) == 312e12);
}

/*
 * Issue 12: expert weights shard over TP unless ETP says otherwise
 * (Megatron-Core's --expert-tensor-parallel-size defaults to TP; vLLM and
 * SGLang shard experts over TP without expert parallelism).  DeepSeek-V3
 * in fp8 on 8 H200 at TP8 is SGLang's and vLLM's standard deployment:
 * 671B x 1 B / 8 = 78 GiB of weights per GPU, which fits the 137 GiB
 * usable (it was rejected at 611 GiB with ETP 1).  Mixtral 8x7B at TP8
 * holds 1/8 of its 46.7B parameters per GPU (2 B each), within 2%.
 */
static void test_etp_follows_tp(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	double want;

	fixture_req(&r, "h200", 8, "deepseek-v3", "task", "infer", "precision", "fp8", "layout",
		    "tp8", "seq", "4096", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	print_message("deepseek-v3 fp8 tp8 on 8 h200: %s, weights %.1f GiB, %.1f of %.1f GiB\n",
		      engine_verdict_name(res.verdict), res.memory.weights_gib,
		      res.memory.per_gpu_gib, res.memory.usable_gib);
	assert_null(fixture_finding(&res, "MEM_OVER_CAPACITY"));
	assert_true(res.memory.weights_gib < 85 && res.memory.weights_gib > 75);
	assert_int_equal(res.layout.etp, 8);

	fixture_req(&r, "h100", 8, "mixtral-8x7b", "task", "infer", "layout", "tp8", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	want = res.estimate.params_b * 1e9 * 2 / 8 / (1024.0 * 1024 * 1024);
	print_message("mixtral-8x7b tp8: weights %.2f GiB per GPU, 1/8 of the model is %.2f\n",
		      res.memory.weights_gib, want);
	assert_true(fabs(res.memory.weights_gib - want) <= 0.02 * want);

	/* Serving with expert parallelism keeps each expert whole: ETP 1. */
	fixture_req(&r, "h100", 8, "mixtral-8x7b", "task", "infer", "layout", "tp8,ep8", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.layout.etp, 1);
	/* An explicit ETP still wins. */
	fixture_req(&r, "h100", 8, "mixtral-8x7b", "layout", "tp8,etp1", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.layout.etp, 1);
}

static void test_helpers(void **st)
{
	struct adv_result res;
	char big[600];
	int i;

	(void)st;
	assert_string_equal(engine_verdict_name(ADV_REJECT), "reject");
	assert_string_equal(engine_severity_name(ADV_SEV_INFO), "info");
	assert_string_equal(engine_precision_name(ADV_PREC_FP8), "fp8");
	assert_string_equal(engine_recompute_name(ADV_RECOMPUTE_FULL), "full");
	assert_string_equal(engine_task_name(ADV_TASK_INFER), "infer");
	assert_string_equal(engine_framework_name(ADV_FW_FSDP), "fsdp");
	assert_string_equal(engine_context_name(ADV_CTX_SBATCH), "sbatch");
	assert_string_equal(engine_precision_name(17), "unknown");
	memset(&res, 0, sizeof(res));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (i = 0; i < ADV_MAX_FINDINGS + 5; i++)
		engine_add_finding(&res, ADV_CODE_GPUS_IDLE, big, "%s", big);
	assert_int_equal(res.n_findings, ADV_MAX_FINDINGS);
	assert_int_equal(strlen(res.findings[0].message), ADV_MSG_MAX - 1);
	assert_string_equal(res.findings[0].code, "GPUS_IDLE");
	assert_int_equal(res.findings[0].severity, ADV_SEV_WARN);
	assert_true(engine_has_finding(&res, ADV_CODE_GPUS_IDLE));
	assert_false(engine_has_finding(&res, ADV_CODE_BEST_PLAN));
}

/* Number of findings with code. */
static int count_code(const struct adv_result *res, const char *code)
{
	int n = 0;

	for (int i = 0; i < res->n_findings; i++)
		n += !strcmp(res->findings[i].code, code);
	return n;
}

/*
 * Policy require: (issue 26): a value left to an assumption is a reject
 * that says so; stated by an option or the framework's documented
 * default, it is not; a server is not asked for training settings.
 */
static void test_require(void **st)
{
	struct fixture *s = *st;
	struct adv_policy *pol = NULL;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;
	char err[ADV_ERR_MAX];

	assert_int_equal(policy_load_string("p.yaml", "require: [recompute, zero]\n", s->cat, &pol,
					    err, sizeof(err)), POLICY_OK);
	fixture_req(&r, "h100", 8, "llama3-8b", "zero", "2", NULL);
	engine_check(s->cat, pol, &r, &res);
	assert_int_equal(res.verdict, ADV_REJECT);
	assert_int_equal(count_code(&res, "VALUE_REQUIRED"), 1);
	f = fixture_finding(&res, "VALUE_REQUIRED");
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	assert_non_null(strstr(f->message, "state recompute"));
	assert_string_equal(f->fix, "state it: --llm-recompute=VALUE, or the job's own flag");
	assert_int_equal(f->uses, ADV_USES(ADV_F_RECOMPUTE));
	/* Both stated: nothing required. */
	fixture_req(&r, "h100", 8, "llama3-8b", "zero", "2", "recompute", "full", NULL);
	engine_check(s->cat, pol, &r, &res);
	assert_int_equal(count_code(&res, "VALUE_REQUIRED"), 0);
	assert_int_not_equal(res.verdict, ADV_REJECT);
	/* Megatron's documented default states ZeRO (no distributed optimizer). */
	fixture_req(&r, "h100", 8, "llama3-8b", "framework", "megatron", "recompute", "full", NULL);
	engine_check(s->cat, pol, &r, &res);
	assert_int_equal(count_code(&res, "VALUE_REQUIRED"), 0);
	/* A server keeps no optimizer and recomputes nothing. */
	fixture_req(&r, "h100", 8, "llama3-8b", "task", "infer", NULL);
	engine_check(s->cat, pol, &r, &res);
	assert_int_equal(count_code(&res, "VALUE_REQUIRED"), 0);
	/* No model: not an LLM job to hold to it. */
	fixture_req(&r, "h100", 8, "", NULL);
	engine_check(s->cat, pol, &r, &res);
	assert_int_equal(count_code(&res, "VALUE_REQUIRED"), 0);
	policy_destroy(pol);
}

/*
 * One root cause, one reject, and fixes that compose (issue 26): TP=3 on
 * a 64-head model breaks the heads, the KV heads, the FFN width, the GPU
 * count and a batch computed for DP=5; the TP fix removes them all, so
 * they are notes under it.  Memory stays over after the TP fix: its fix
 * is computed with the TP fix applied and printed with it, and both
 * applied pass the job.
 */
static void test_root_cause(void **st)
{
	struct fixture *s = *st;
	struct adv_request r, t;
	struct adv_result res;
	const struct adv_finding *f;
	const char *with;

	fixture_req(&r, "h100", 16, "llama3-70b", "layout", "tp3", "gbs", "512", "zero", "1",
		    "recompute", "full", "seq", "4096", "mbs", "1", NULL);
	engine_check(s->cat, s->pol, &r, &res);
	assert_int_equal(res.verdict, ADV_REJECT);
	f = fixture_finding(&res, "TP_NOT_DIVIDE_HEADS");
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	assert_string_equal(f->fix, "--llm-layout=tp4 or --llm-layout=tp2");
	for (int i = 0; i < 4; i++) {
		static const char *const follows[] = { "TP_NOT_DIVIDE_KV_HEADS", "TP_NOT_DIVIDE_FFN",
						       "GPU_COUNT_MISMATCH", "GBS_NOT_DIVISIBLE" };

		f = fixture_finding(&res, follows[i]);
		assert_non_null(f);
		assert_int_equal(f->severity, ADV_SEV_INFO);
		assert_non_null(strstr(f->message, "follows from TP_NOT_DIVIDE_HEADS"));
		assert_string_equal(f->fix, "");
	}
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	/* "--llm-zero=3 --llm-layout=tp8" or one with the TP fix: either way,
	 * applied, it passes the job's memory with no other reject. */
	t = r;
	with = strstr(f->fix, "with ");
	fixture_apply_fix(&t, with ? with + 5 : f->fix);
	engine_check(s->cat, s->pol, &t, &res);
	if (!with)
		assert_int_not_equal(res.verdict, ADV_REJECT);
	assert_null(fixture_finding(&res, "TP_NOT_DIVIDE_HEADS"));
	/* On one node memory needs more GPUs, and the fix that brings them
	 * brings the TP fix too: applied whole, the job passes. */
	fixture_req(&r, "h100", 8, "llama3-70b", "layout", "tp3", NULL);
	r.res.nodes = 1;
	r.res.gpus_per_node = 8;
	engine_check(s->cat, s->pol, &r, &res);
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_int_equal(f->severity, ADV_SEV_REJECT);
	assert_string_equal(f->fix, "request at least 2 nodes (16 GPUs) with --llm-layout=tp4");
	t = r;
	t.res.nodes = 2;
	t.res.gpus = 16;
	fixture_apply_fix(&t, "--llm-layout=tp4");
	engine_check(s->cat, s->pol, &t, &res);
	assert_int_not_equal(res.verdict, ADV_REJECT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_provenance),
		cmocka_unit_test(test_not_followed_severity),
		cmocka_unit_test(test_unknown_names),
		cmocka_unit_test(test_fp8),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_estimate_405b),
		cmocka_unit_test(test_estimate_monotone),
		cmocka_unit_test(test_flops),
		cmocka_unit_test(test_etp_follows_tp),
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_require),
		cmocka_unit_test(test_root_cause),
	};

	return cmocka_run_group_tests(tests, setup, fixture_teardown);
}
