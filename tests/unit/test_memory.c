/*
 * test_memory.c - per-GPU memory against published figures.
 *
 * References: the ZeRO paper's 7.5B / N_d = 64 example (Rajbhandari et al.
 * 2020, figure 1: 120 -> 31.4 -> 16.6 -> 1.9 GB), the Llama-3-70B KV cache
 * (2 * 80 layers * 8 KV heads * 128 * 2 B = 320 KiB per token), GPT-3 175B
 * as trained in Korthikanti et al. 2022 (64 A100 80 GB, TP8 PP8 v=3, SP +
 * selective recompute) and the impossibility of plain-DDP 70B training;
 * NeMo's Llama 3 70B layout without recompute, with flash and eager
 * attention.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/catalog.h"
#include "config/policy.h"
#include "engine/engine.h"
#include "engine/evaluate.h"
#include "engine/findings.h"
#include "engine/layout.h"
#include "engine/memory.h"
#include "engine/options.h"
#include "engine/roofline.h"
#include "fixture.h"
#include "util.h"

static int setup(void **st)
{
	return fixture_setup(st, NULL, NULL);
}

static void check(struct fixture *s, const struct adv_request *r, struct adv_result *res)
{
	engine_check(s->cat, s->pol, r, res);
}

/* ZeRO paper figure 1: Psi = 7.5B, N_d = 64, K = 12, 2-byte gradients. */
static void test_zero_paper(void **st)
{
	struct mem_state_bytes b = { .weights = 2, .grads = 2, .optimizer = 12 };
	static const double expect_gb[4] = { 120.0, 31.4, 16.6, 1.9 };
	double w, g, o;
	int z;

	(void)st;
	for (z = 0; z <= 3; z++) {
		memory_model_states(7.5e9, 64, z, &b, &w, &g, &o);
		assert_true(fabs((w + g + o) / 1e9 - expect_gb[z]) <= 0.02 * expect_gb[z]);
	}
}

/* 320 KiB per token for Llama-3-70B in bf16, exactly; / TP while g >= t. */
static void test_kv_llama70b(void **st)
{
	struct fixture *s = *st;
	const struct adv_model *m = catalog_find_model(s->cat, "llama3-70b");

	assert_non_null(m);
	assert_true(roofline_kv_bytes_per_token(m, ADV_PREC_BF16, 1, 1) == 320.0 * 1024);
	assert_true(roofline_kv_bytes_per_token(m, ADV_PREC_BF16, 8, 1) == 40.0 * 1024);
	/* TP 16 > 8 KV heads: each rank still keeps one head. */
	assert_true(roofline_kv_bytes_per_token(m, ADV_PREC_BF16, 16, 1) == 40.0 * 1024);
	assert_true(roofline_kv_bytes_per_token(m, ADV_PREC_FP8, 1, 1) == 160.0 * 1024);
}

/* MLA caches kv_lora_rank + rope dim per layer, independent of TP. */
static void test_kv_mla(void **st)
{
	struct fixture *s = *st;
	const struct adv_model *m = catalog_find_model(s->cat, "deepseek-v3");

	assert_non_null(m);
	assert_true(roofline_kv_bytes_per_token(m, ADV_PREC_BF16, 1, 1) == (512 + 64) * 61 * 2.0);
	assert_true(roofline_kv_bytes_per_token(m, ADV_PREC_BF16, 8, 1) == (512 + 64) * 61 * 2.0);
}

static void gpt3_request(struct adv_request *r)
{
	fixture_request(r, "a100-80gb", 64, "gpt3-175b");
	r->wl.layout.tp = 8;
	r->wl.layout.pp = 8;
	r->wl.layout.vpp = 3;
	r->wl.layout.sp = 1;
	r->wl.recompute = ADV_RECOMPUTE_SELECTIVE;
	r->wl.mbs = 1;
	r->wl.gbs = 64;
	r->wl.seq = 2048;
	r->wl.framework = ADV_FW_MEGATRON;
}

/* Korthikanti et al. 2022, table 3: GPT-3 175B trains on 64 A100 80 GB. */
static void test_gpt3_fits(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;

	gpt3_request(&r);
	check(s, &r, &res);
	assert_true(res.has_memory);
	print_message("gpt3-175b tp8 pp8 v3: %.1f GiB (w %.1f g %.1f o %.1f a %.1f)\n",
		      res.memory.per_gpu_gib, res.memory.weights_gib, res.memory.grads_gib,
		      res.memory.optimizer_gib, res.memory.activations_gib);
	assert_true(res.memory.per_gpu_gib >= 50 && res.memory.per_gpu_gib <= 65);
	assert_false(engine_has_finding(&res, ADV_CODE_MEM_OVER_CAPACITY));
	assert_int_not_equal(res.verdict, ADV_REJECT);
}

/* Interleaving raises the first stage's activations by 1 + (p-1)/(p v). */
static void test_interleave_factor(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result a, b;

	gpt3_request(&r);
	check(s, &r, &a);
	r.wl.layout.vpp = ADV_UNSET;
	check(s, &r, &b);
	assert_true(fabs(a.memory.activations_gib / b.memory.activations_gib -
			 (1.0 + 7.0 / 24.0)) < 0.05);
}

/*
 * Each recompute mode is modelled: none > selective > full with unfused
 * ("eager") attention, the paper's setting, which stores the s x s scores
 * unless they are recomputed.
 */
static void test_recompute_modes(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result none, sel, full, flash;

	gpt3_request(&r);
	r.wl.attention = ADV_ATTN_EAGER;
	r.wl.recompute = ADV_RECOMPUTE_NONE;
	check(s, &r, &none);
	r.wl.recompute = ADV_RECOMPUTE_SELECTIVE;
	check(s, &r, &sel);
	r.wl.recompute = ADV_RECOMPUTE_FULL;
	check(s, &r, &full);
	assert_true(none.memory.activations_gib > sel.memory.activations_gib);
	assert_true(sel.memory.activations_gib > 3 * full.memory.activations_gib);
	/* Korthikanti: selective is 34/(34 + 5as/h) of none at s=2048, a=96, h=12288. */
	assert_true(fabs(sel.memory.activations_gib / none.memory.activations_gib -
			 34.0 / (34.0 + 5.0 * 96 * 2048 / 12288)) < 0.05);
	/* Flash attention stores no scores: recompute none keeps exactly what
	 * selective recompute keeps (model-math.md, "Activations"). */
	r.wl.attention = ADV_ATTN_FLASH;
	r.wl.recompute = ADV_RECOMPUTE_NONE;
	check(s, &r, &flash);
	assert_true(fabs(flash.memory.activations_gib - sel.memory.activations_gib) < 1e-9);
}

/*
 * NeMo's Llama 3 70B pre-training recipe: TP4 PP4 CP2 VP5 on 64 H100,
 * seq 8192, mbs 1, gbs 128, no activation recompute, distributed optimizer,
 * bf16 and fp8 (NVIDIA publishes runs of exactly this layout).  With flash
 * attention it fits; the stored activations of the first stage are, per
 * Korthikanti eq. (1) term by term for a no-dropout GQA SwiGLU model,
 * s b h k / t per layer with s = 8192 / CP = 4096, h 8192, t 4 and
 * k = 4 + 6 + 4 * 8/64 + 2 + 6 * 28672/8192 = 33.5, times 20 layers, times
 * min(p, m) = 4 micro-batches in flight (m = 128 / DP 2 = 64), times the
 * interleaving factor 1 + 3/(4 * 5) = 1.15: 24.08 GiB.  Eager attention
 * adds 2 a s / h = 64 per layer (the softmax output, no dropout): the old
 * 70 GiB figure and a rejection.  Tolerance 1%.
 */
static void test_nemo_llama70b_no_recompute(void **st)
{
	static const char *const precisions[] = { "bf16", "fp8" };
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result flash, eager;
	double k = 4 + 6 + 4.0 * 8 / 64 + 2 + 6.0 * 28672 / 8192;
	double per_layer = 4096.0 * 8192 * k / 4;
	double expect = per_layer * 20 * 4 * (1 + 3.0 / 20) / (1024.0 * 1024 * 1024);
	size_t i;

	for (i = 0; i < ADV_ARRAY_SIZE(precisions); i++) {
		fixture_req(&r, "h100", 64, "llama3-70b", "layout", "tp4,pp4,cp2,vpp5", "seq", "8192",
			    "mbs", "1", "gbs", "128", "recompute", "none", "zero", "1",
			    "framework", "megatron", "precision", precisions[i], NULL);
		check(s, &r, &flash);
		print_message("nemo 70b %s flash: %.2f GiB (activations %.2f, expected %.2f)\n",
			      precisions[i], flash.memory.per_gpu_gib, flash.memory.activations_gib,
			      expect);
		assert_true(fabs(flash.memory.activations_gib - expect) < 0.01 * expect);
		assert_false(engine_has_finding(&flash, ADV_CODE_MEM_OVER_CAPACITY));
		assert_int_not_equal(flash.verdict, ADV_REJECT);
		assert_int_equal(flash.attention, ADV_ATTN_FLASH);

		r.wl.attention = ADV_ATTN_EAGER;
		check(s, &r, &eager);
		print_message("nemo 70b %s eager: %.2f GiB (activations %.2f)\n", precisions[i],
			      eager.memory.per_gpu_gib, eager.memory.activations_gib);
		assert_true(fabs(eager.memory.activations_gib - expect * (k + 64) / k) <
			    0.01 * expect * (k + 64) / k);
		assert_true(eager.memory.activations_gib > 69 && eager.memory.activations_gib < 71);
		assert_true(engine_has_finding(&eager, ADV_CODE_MEM_OVER_CAPACITY));
	}
}

/* SP divides the 10 sbh that TP alone leaves replicated. */
static void test_sequence_parallel(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result sp, nosp;

	gpt3_request(&r);
	check(s, &r, &sp);
	r.wl.layout.sp = 0;
	check(s, &r, &nosp);
	assert_true(nosp.memory.activations_gib > 2 * sp.memory.activations_gib);
	assert_true(engine_has_finding(&nosp, ADV_CODE_SP_OFF_WITH_TP));
	assert_false(engine_has_finding(&sp, ADV_CODE_SP_OFF_WITH_TP));
}

/* 70B x 18 B/param = 1.2 TiB on every GPU: plain DDP can never train it. */
static void test_llama70b_ddp_rejected(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;

	fixture_request(&r, "h100", 64, "llama3-70b");
	r.wl.task = ADV_TASK_FINETUNE;
	r.wl.zero = 0;
	r.wl.layout.tp = 1;
	r.wl.layout.pp = 1;
	check(s, &r, &res);
	assert_true(engine_has_finding(&res, ADV_CODE_MEM_OVER_CAPACITY));
	assert_int_equal(res.verdict, ADV_REJECT);
	assert_true(res.memory.per_gpu_gib > 1000);
	print_message("70B DDP fix: %s\n", res.findings[0].fix);
}

/*
 * Applies every alternative of a MEM_OVER_CAPACITY fix ("--llm-zero=3 (x GiB
 * per GPU); --llm-recompute=full (y GiB per GPU)") to the request and checks
 * that each one fits with the memory the fix announced.  Returns how many.
 */
static int apply_each_fix(struct fixture *s, const struct adv_request *r, const char *fix)
{
	char buf[ADV_MSG_MAX], *alt, *save = NULL;
	int count = 0;

	snprintf(buf, sizeof(buf), "%s", fix);
	for (alt = strtok_r(buf, ";", &save); alt; alt = strtok_r(NULL, ";", &save)) {
		struct adv_request t = *r;
		struct adv_result res;
		const char *paren = strchr(alt, '(');
		double announced;

		/* "state --llm-seq ... to have it checked" is advice, not a setting. */
		if (!strncmp(alt + strspn(alt, " "), "state ", 6))
			continue;

		assert_non_null(paren);
		assert_int_equal(sscanf(paren, "(%lf GiB per GPU)", &announced), 1);
		fixture_apply_fix(&t, alt);
		engine_check(s->cat, s->pol, &t, &res);
		assert_false(engine_has_finding(&res, ADV_CODE_MEM_OVER_CAPACITY));
		assert_true(fabs(res.memory.per_gpu_gib - announced) < 0.051);
		count++;
	}
	return count;
}

/* Every fix offered for MEM_OVER_CAPACITY fits when applied. */
static void test_over_capacity_fix_fits(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;

	fixture_request(&r, "h100", 64, "llama3-70b");
	r.wl.layout.tp = 8;
	r.wl.seq = 8192;
	r.wl.zero = 1;
	r.wl.recompute = ADV_RECOMPUTE_NONE;
	check(s, &r, &res);
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_non_null(f);
	print_message("fix: %s\n", f->fix);
	assert_non_null(strstr(f->fix, "--llm-recompute=full"));
	assert_true(apply_each_fix(s, &r, f->fix) >= 1);
	/* The combined fix of the plain-DDP 70B job fits as well. */
	fixture_request(&r, "h100", 64, "llama3-70b");
	r.wl.zero = 0;
	check(s, &r, &res);
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_non_null(f);
	print_message("fix: %s\n", f->fix);
	assert_int_equal(apply_each_fix(s, &r, f->fix), 1);
}

/*
 * A layout offered to fix MEM_OVER_CAPACITY must not break the layout rules
 * the job already breaks: for TP=3 on a 64-head model, "tp6,pp2" or
 * "tp3,pp8" would fit in memory and still be rejected for the heads.
 */
static void test_over_capacity_layout_fix_is_valid(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	const struct adv_finding *f;
	char buf[ADV_MSG_MAX], *alt, *save = NULL;
	int layouts = 0;

	fixture_request(&r, "h100", 48, "llama3-70b");
	r.wl.layout.tp = 3;
	r.wl.layout.pp = 2;
	r.wl.zero = 1;
	check(s, &r, &res);
	assert_true(engine_has_finding(&res, ADV_CODE_TP_NOT_DIVIDE_HEADS));
	f = fixture_finding(&res, "MEM_OVER_CAPACITY");
	assert_non_null(f);
	print_message("fix: %s\n", f->fix);
	snprintf(buf, sizeof(buf), "%s", f->fix);
	for (alt = strtok_r(buf, ";", &save); alt; alt = strtok_r(NULL, ";", &save)) {
		struct adv_request t = r;
		struct adv_result tr;

		if (!strstr(alt, "--llm-layout="))
			continue;
		layouts++;
		fixture_apply_fix(&t, alt);
		engine_check(s->cat, s->pol, &t, &tr);
		assert_false(engine_has_finding(&tr, ADV_CODE_TP_NOT_DIVIDE_HEADS));
		assert_false(engine_has_finding(&tr, ADV_CODE_TP_NOT_DIVIDE_KV_HEADS));
		assert_false(engine_has_finding(&tr, ADV_CODE_TP_NOT_DIVIDE_FFN));
		assert_false(engine_has_finding(&tr, ADV_CODE_MEM_OVER_CAPACITY));
	}
	assert_true(layouts >= 1);
}

/* ZeRO stages shrink memory monotonically; FSDP means ZeRO-3. */
static void test_zero_stages_and_fsdp(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res[4], fsdp;
	int z;

	fixture_request(&r, "h100", 64, "llama3-8b");
	/* "selective" means torchtitan's per-op policy under FSDP2: compare
	 * with a mode every framework means the same by. */
	r.wl.recompute = ADV_RECOMPUTE_FULL;
	for (z = 0; z <= 3; z++) {
		r.wl.zero = z;
		check(s, &r, &res[z]);
		if (z)
			assert_true(res[z].memory.per_gpu_gib < res[z - 1].memory.per_gpu_gib);
	}
	r.wl.zero = ADV_UNSET;
	r.wl.framework = ADV_FW_FSDP;
	check(s, &r, &fsdp);
	assert_int_equal(fsdp.layout.zero, 3);
	assert_true(fabs(fsdp.memory.per_gpu_gib - res[3].memory.per_gpu_gib) < 1e-9);
}

/* Inference: weights + KV cache; 70B bf16 on 4 x H100 with TP4 at 8K x 8. */
static void test_inference(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	double w;

	fixture_request(&r, "h100", 4, "llama3-70b");
	r.wl.task = ADV_TASK_INFER;
	r.wl.layout.tp = 4;
	r.wl.seq = 8192;
	r.wl.mbs = 8;
	check(s, &r, &res);
	w = 70.55e9 * 2 / 4 / (1024.0 * 1024 * 1024);
	assert_true(fabs(res.memory.weights_gib - w) < 0.02 * w);
	/* 8 sequences x 8192 tokens x 320 KiB / 4 = 5 GiB. */
	assert_true(fabs(res.memory.kv_cache_gib - 5.0) < 1e-9);
	assert_true(res.memory.grads_gib == 0 && res.memory.optimizer_gib == 0);
	assert_false(engine_has_finding(&res, ADV_CODE_MEM_OVER_CAPACITY));
	/* The same on a single GPU does not fit. */
	r.res.gpus = 1;
	r.wl.layout.tp = ADV_UNSET;
	check(s, &r, &res);
	assert_true(engine_has_finding(&res, ADV_CODE_MEM_OVER_CAPACITY));
}

/* LoRA: the base is frozen, so 70B fits where full fine-tuning does not. */
static void test_lora(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result lora, full;

	fixture_request(&r, "h100", 8, "llama3-70b");
	r.wl.layout.tp = 8;
	r.wl.task = ADV_TASK_LORA;
	check(s, &r, &lora);
	r.wl.task = ADV_TASK_FINETUNE;
	check(s, &r, &full);
	assert_false(engine_has_finding(&lora, ADV_CODE_MEM_OVER_CAPACITY));
	assert_true(engine_has_finding(&full, ADV_CODE_MEM_OVER_CAPACITY));
	assert_true(lora.memory.optimizer_gib < 1.0);
}

/* MoE: expert parameters shard over EP. */
static void test_moe_expert_sharding(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result e1, e8;

	fixture_request(&r, "h100", 64, "mixtral-8x7b");
	r.wl.layout.tp = 1;
	check(s, &r, &e1);
	r.wl.layout.ep = 8;
	check(s, &r, &e8);
	assert_true(e8.memory.weights_gib < e1.memory.weights_gib / 3);
	assert_false(engine_has_finding(&e8, ADV_CODE_EP_NOT_DIVIDE_EXPERTS));
}

/* Within the headroom band the verdict is a warning, not a reject. */
static void test_low_headroom(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;

	gpt3_request(&r);
	check(s, &r, &res);
	/* Narrow usable memory to just above the estimate. */
	s->pol->reserve_gib = res.memory.capacity_gib - res.memory.per_gpu_gib * 1.05;
	check(s, &r, &res);
	policy_defaults(s->pol);
	assert_true(engine_has_finding(&res, ADV_CODE_MEM_LOW_HEADROOM));
	assert_false(engine_has_finding(&res, ADV_CODE_MEM_OVER_CAPACITY));
}

/*
 * torchtitan's Llama 3.1 405B 3D run (benchmarks/llama3_h100_202412_
 * torchtitan.md at b5bcd76, https://github.com/pytorch/torchtitan/blob/
 * b5bcd76c66d0acb1a08b176d9639425bc55e0b2a/benchmarks/llama3_h100_202412_torchtitan.md):
 * 512 H100, FSDP 8 x TP 8 x PP 8, 1F1B, full AC, local batch 32 (32
 * micro-batches of 1), 82.5 GiB max reserved over all GPUs.  Under PP,
 * torchtitan's apply_fsdp sets reshard_after_forward = not pp_enabled and
 * torch.distributed.pipelining keeps gradient sync off until the last
 * micro-batch: the stage's 405B / 64 = 6.3B parameters stay all-gathered
 * in bf16 (11.8 GiB) and their gradients unsharded in fp32 (23.6 GiB).
 * Without PP the same job gathers one layer at a time.  The engine still
 * reads 0.68 of the published peak (torch.compile and Float8 are not
 * modelled); the test holds the structure and that it is no longer the 0.22
 * that would accept jobs that run out of memory.
 */
static void tt405b_request(struct adv_request *r)
{
	fixture_request(r, "h100", 512, "llama3-405b");
	r->wl.layout.tp = 8;
	r->wl.layout.pp = 8;
	r->wl.framework = ADV_FW_FSDP;
	r->wl.zero = 3;
	r->wl.recompute = ADV_RECOMPUTE_FULL;
	r->wl.seq = 8192;
	r->wl.mbs = 1;
	r->wl.gbs = 32 * 8;
}

static void test_fsdp_pp_unsharded(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result pp, flat;
	double stage = 405e9 / 64 / GIB;

	tt405b_request(&r);
	check(s, &r, &pp);
	print_message("405b fsdp8 tp8 pp8: %.1f GiB (w %.1f g %.1f o %.1f a %.1f) stage %d/%d\n",
		      pp.memory.per_gpu_gib, pp.memory.weights_gib, pp.memory.grads_gib,
		      pp.memory.optimizer_gib, pp.memory.activations_gib, pp.memory.peak_stage,
		      pp.memory.stages);
	assert_true(pp.memory.weights_gib >= 2 * stage * 0.95);
	assert_true(pp.memory.grads_gib >= 4 * stage * 0.95);
	assert_true(pp.memory.grads_gib <= 4 * stage * 1.25 + 4 * stage / 8);
	assert_true(pp.memory.per_gpu_gib - pp.memory.overhead_gib >= 0.6 * 82.5);
	assert_true(pp.memory.per_gpu_gib - pp.memory.overhead_gib <= 1.15 * 82.5);
	/* The same model without PP reshards after forward: no stage copy. */
	r.wl.layout.pp = 1;
	r.wl.gbs = ADV_UNSET;
	check(s, &r, &flat);
	assert_true(flat.memory.grads_gib < 4 * stage / 4);
	/* Megatron's distributed optimizer under PP keeps no such copy. */
	tt405b_request(&r);
	r.wl.framework = ADV_FW_MEGATRON;
	r.wl.zero = 1;
	check(s, &r, &flat);
	assert_true(flat.memory.weights_gib < pp.memory.weights_gib + 2 * stage);
}

/*
 * torchtitan's per-op selective checkpointing (torchtitan/distributed/
 * activation_checkpoint.py, https://github.com/pytorch/torchtitan/blob/main/
 * torchtitan/distributed/activation_checkpoint.py): per block it saves the
 * input and the outputs of wq, wv, SDPA, w1 and w2 (mm 1, 3, 5, 7 and the
 * attention), 2 + 2 + 2 g/a + 2 + 2 F/h + 2 bytes per s b h; for Llama 3.1
 * 8B (h 4096, a 32, g 8, F 14336) 15.5, against Korthikanti's 34.  The
 * 8-GPU FSDP row of the same torchtitan table (seq 8192 from llama3_8b.toml,
 * local batch 2, selective): 82.4 GiB max reserved.  Expected activations:
 * 32 blocks x 15.5 s b h + one block recomputed in the backward (34 s b h)
 * + the loss's 12 bytes per logit at its backward (issue 29: the saved fp32
 * log_softmax output, nll_loss's fp32 gradient and the input's).
 */
static void test_sac_ops(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res, meg;
	double sbh = 8192.0 * 2 * 4096, expect;

	fixture_request(&r, "h100", 8, "llama3.1-8b");
	r.wl.framework = ADV_FW_FSDP;
	r.wl.zero = 3;
	r.wl.recompute = ADV_RECOMPUTE_SELECTIVE;
	r.wl.seq = 8192;
	r.wl.mbs = 2;
	check(s, &r, &res);
	expect = (32 * 15.5 * sbh + 34.0 * sbh + 12.0 * 8192 * 2 * 128256) / GIB;
	print_message("8b sac: activations %.2f GiB, expected %.2f; reserved %.2f vs 82.4\n",
		      res.memory.activations_gib, expect,
		      res.memory.per_gpu_gib - res.memory.overhead_gib);
	assert_true(fabs(res.memory.activations_gib / expect - 1) < 1e-6);
	assert_true(fabs((res.memory.per_gpu_gib - res.memory.overhead_gib +
			  res.memory.allocator_gib) / 82.4 - 1) <= 0.15);
	/* Megatron's selective recompute is Korthikanti's, as before. */
	r.wl.framework = ADV_FW_MEGATRON;
	r.wl.zero = 1;
	check(s, &r, &meg);
	assert_true(meg.memory.activations_gib > res.memory.activations_gib * 1.4);
}

/*
 * The memory table names the stage it costs: under 1F1B the first stage
 * holds p micro-batches (GPT-3 175B, TP8 PP8 v3: stage 0 of 8); with one
 * micro-batch every stage holds one and the last, with the logits and the
 * loss, is the most loaded.
 */
static void test_peak_stage(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;

	gpt3_request(&r);
	check(s, &r, &res);
	assert_int_equal(res.memory.stages, 8);
	assert_int_equal(res.memory.peak_stage, 0);
	fixture_request(&r, "h100", 2, "llama3-8b");
	r.wl.layout.pp = 2;
	r.wl.mbs = 1;
	r.wl.gbs = 1;
	r.wl.seq = 8192;
	check(s, &r, &res);
	assert_int_equal(res.memory.stages, 2);
	assert_int_equal(res.memory.peak_stage, 1);
	fixture_request(&r, "h100", 8, "llama3-8b");
	check(s, &r, &res);
	assert_int_equal(res.memory.stages, 1);
	assert_int_equal(res.memory.peak_stage, 0);
}

/*
 * Interleaved 1F1B as Megatron-Core schedules it (get_pp_rank_microbatches):
 * Llama 3 8B on PP 4 with v = 8 (one layer per chunk) and m = 4 = p.
 * Rank 0's warm-up (2 x 3 + 7 x 4 = 34) covers all m v = 32 chunks: 4
 * stages' worth, as without interleaving.  The last rank holds 7 x 4 + 1
 * = 29 chunks, 3.625 stages, where 1F1B leaves it one.  With m = 8 rank 0
 * holds 35 chunks, Korthikanti's p (1 + (p-1)/(p v)) = 4.375.
 */
static double stage_act(struct fixture *s, int vpp, int gbs, int stage)
{
	struct adv_request r;
	struct adv_job job;
	struct adv_memory mem;

	fixture_request(&r, "h100", 8, "llama3-8b");
	r.wl.framework = ADV_FW_MEGATRON;
	r.wl.layout.tp = 1;
	r.wl.layout.pp = 4;
	r.wl.layout.vpp = vpp;
	r.wl.mbs = 1;
	r.wl.gbs = gbs;
	r.wl.seq = 8192;
	r.wl.recompute = ADV_RECOMPUTE_NONE;
	assert_int_equal(engine_resolve(s->cat, &r, NULL, &job, NULL), 0);
	memory_estimate_stage(&job, s->pol, stage, &mem);
	assert_int_equal(mem.peak_stage, stage);
	return mem.activations_gib;
}

static void test_interleaved_inflight(void **st)
{
	struct fixture *s = *st;
	double one = stage_act(s, 1, 8, 0) / 4;   /* one micro-batch of a stage */

	assert_true(fabs(stage_act(s, 8, 8, 0) - 4 * one) < 1e-9);
	assert_true(fabs(stage_act(s, 8, 8, 3) - stage_act(s, 1, 8, 3) - 2.625 * one) < 1e-6);
	assert_true(fabs(stage_act(s, 8, 16, 0) - 4.375 * one) < 1e-6);
}

/*
 * Allocated versus reserved: a training job's total (the reject's figure)
 * is the allocated peak plus overhead_gib; policy allocator_margin of the
 * peak (the caching allocator's reserve, 15% by default: the median of the
 * published pairs in tests/accuracy/allocator-pairs.json) is reported
 * beside it and judged by nothing (issue 29: the allocator gives its cache
 * back near the limit), not even the headroom warning; a serving job gets
 * no margin.
 */
static void test_allocator_margin(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	double alloc;

	fixture_request(&r, "h100", 8, "llama3-8b");
	check(s, &r, &res);
	alloc = res.memory.weights_gib + res.memory.grads_gib + res.memory.optimizer_gib +
		res.memory.activations_gib;
	assert_true(fabs(res.memory.allocator_gib - 0.15 * alloc) < 1e-9);
	assert_true(fabs(res.memory.per_gpu_gib - (alloc + res.memory.overhead_gib)) < 1e-9);
	s->pol->allocator_margin = 0;
	check(s, &r, &res);
	assert_true(res.memory.allocator_gib == 0);
	/* A margin that would put the reserved figure over the GPU warns of
	 * nothing while the allocated one leaves the headroom. */
	r.wl.zero = 1;
	r.wl.recompute = ADV_RECOMPUTE_FULL;
	check(s, &r, &res);
	assert_true(res.memory.per_gpu_gib < 0.9 * res.memory.usable_gib);
	assert_false(engine_has_finding(&res, ADV_CODE_MEM_LOW_HEADROOM));
	s->pol->allocator_margin = 1.0;
	check(s, &r, &res);
	assert_true(res.memory.per_gpu_gib + res.memory.allocator_gib > res.memory.usable_gib);
	assert_false(engine_has_finding(&res, ADV_CODE_MEM_LOW_HEADROOM));
	policy_defaults(s->pol);
	r.wl.zero = ADV_UNSET;
	r.wl.recompute = ADV_UNSET;
	r.wl.task = ADV_TASK_INFER;
	check(s, &r, &res);
	assert_true(res.memory.allocator_gib == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_paper),
		cmocka_unit_test(test_kv_llama70b),
		cmocka_unit_test(test_kv_mla),
		cmocka_unit_test(test_gpt3_fits),
		cmocka_unit_test(test_interleave_factor),
		cmocka_unit_test(test_recompute_modes),
		cmocka_unit_test(test_nemo_llama70b_no_recompute),
		cmocka_unit_test(test_sequence_parallel),
		cmocka_unit_test(test_llama70b_ddp_rejected),
		cmocka_unit_test(test_over_capacity_fix_fits),
		cmocka_unit_test(test_over_capacity_layout_fix_is_valid),
		cmocka_unit_test(test_zero_stages_and_fsdp),
		cmocka_unit_test(test_inference),
		cmocka_unit_test(test_lora),
		cmocka_unit_test(test_moe_expert_sharding),
		cmocka_unit_test(test_low_headroom),
		cmocka_unit_test(test_fsdp_pp_unsharded),
		cmocka_unit_test(test_sac_ops),
		cmocka_unit_test(test_peak_stage),
		cmocka_unit_test(test_interleaved_inflight),
		cmocka_unit_test(test_allocator_margin),
	};

	return cmocka_run_group_tests(tests, setup, fixture_teardown);
}
