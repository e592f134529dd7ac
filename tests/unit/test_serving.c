/*
 * test_serving.c - serving figures (--llm-task=infer, common/engine/serving.c)
 * against their sources.
 *
 * References: the Llama 3.1 8B and Llama 3 70B configs (32 layers x 8 KV
 * heads x 128 x 2 (K, V) x 2 B = 128 KiB of KV cache per token; 80 layers:
 * 320 KiB, model-math.md), vLLM's and SGLang's 8192-token prefill chunk,
 * the H100's 3.35 TB/s of HBM3 (catalog), and the standard DeepSeek-V3
 * fp8 deployment on 8 H200 at TP8 (SGLang and vLLM --tp 8).
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
#include "engine/findings.h"
#include "engine/layout.h"
#include "engine/memory.h"
#include "engine/roofline.h"
#include "engine/serving.h"
#include "fixture.h"
#include "util.h"
#include "wire/convert.h"

#define KIB 1024.0
/* The catalog's H100 SXM HBM3 bandwidth (NVIDIA datasheet), bytes/s. */
#define H100_BW (3.35e12)

static int setup(void **st)
{
	return fixture_setup(st, NULL, NULL);
}

static void check(struct fixture *s, const struct adv_request *r, struct adv_result *res)
{
	engine_check(s->cat, s->pol, r, res);
}

static bool has_code_prefix(const struct adv_result *res, const char *prefix)
{
	for (int i = 0; i < res->n_findings; i++)
		if (!strncmp(res->findings[i].code, prefix, strlen(prefix)))
			return true;
	return false;
}

/*
 * Llama 3.1 8B serving 128 sequences of 8K on one H100 (issue 12): the
 * activations are one 8192-token chunk's at the MLP (issue 19: residual and
 * hidden state 4h, gate_up output and SiluAndMul 6F bytes per token, the
 * working set of vLLM's profile run) = 0.75 GiB, or
 * vLLM's profile-run sampler after it, whichever is larger (issue 29: 16 B
 * x 128256 x 128 rows, the job's max_num_seqs, = 251 MiB); before
 * this change they were 136 GiB (every sequence prefilled at once).  The
 * KV cache holds floor(free / (8192 x 128 KiB = 1 GiB)) sequences, free
 * being the usable memory less weights, activations and overhead.
 */
static void test_llama8b_128_seqs(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	double act = 8192.0 * (4.0 * 4096 + 6.0 * 14336) / GIB, room, seqs;

	fixture_req(&r, "h100", 1, "llama3.1-8b", "task", "infer", "seq", "8192", "mbs", "128",
		    NULL);
	check(s, &r, &res);
	assert_true(res.has_memory && res.has_serving);
	print_message("8b x128: act %.3f GiB (expected %.3f), kv %.2f GiB, %.0f seqs, verdict %s\n",
		      res.memory.activations_gib, act, res.memory.kv_cache_gib,
		      res.serving.kv_capacity_seqs, engine_verdict_name(res.verdict));
	assert_true(res.memory.activations_gib < 5.0);
	assert_true(fabs(res.memory.activations_gib - act) < 0.01 * act);
	assert_true(res.serving.kv_bytes_per_token == 32 * 8 * 128 * 2 * 2.0);
	assert_true(res.serving.kv_bytes_per_token == 128 * KIB);
	/* vLLM's pool: 0.9 x 79.65 GiB less weights, the profile run's
	 * activations and 0.35 GiB of non-torch memory (issue 19). */
	room = 0.9 * 79.65 - res.memory.weights_gib - res.memory.activations_gib - 0.35;
	seqs = floor(floor(room * GIB / (128 * KIB)) / 8192);
	assert_true(res.serving.kv_capacity_seqs == seqs);
	assert_true(res.serving.kv_capacity_tokens == floor(room * GIB / (128 * KIB)));
	assert_true(seqs >= 50 && seqs <= 56);   /* about 53 */
	/* The KV cache holds what fits, and the job is warned, not rejected. */
	assert_true(fabs(res.memory.kv_cache_gib - seqs) < 1e-9);
	assert_non_null(fixture_finding(&res, "KV_CAPACITY_LOW"));
	assert_non_null(strstr(fixture_finding(&res, "KV_CAPACITY_LOW")->fix, "--llm-mbs="));
	assert_false(engine_has_finding(&res, ADV_CODE_MEM_OVER_CAPACITY));
	assert_false(engine_has_finding(&res, ADV_CODE_MEM_LOW_HEADROOM));
	assert_int_equal(res.verdict, ADV_WARN);
	/* No checkpoint figures or findings for a server. */
	assert_false(res.has_checkpoint);
	assert_false(has_code_prefix(&res, "CKPT_"));
	/* Decode runs at the sequences that fit. */
	assert_int_equal(res.serving.decode_batch, (int)seqs);
	assert_int_equal(res.serving.prefill_chunk, SERVE_DEFAULT_PREFILL_CHUNK);
	/* As many sequences as fit: no warning. */
	r.wl.mbs = (int)seqs;
	check(s, &r, &res);
	assert_null(fixture_finding(&res, "KV_CAPACITY_LOW"));
	assert_int_equal(res.verdict, ADV_ACCEPT);
}

/* A smaller chunk costs proportionally less; a short batch is its own chunk. */
static void test_prefill_chunk(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result a, b, c;
	/* The job's max_num_seqs 1: the profile run's sampler (16 B x
	 * 128256) is below either chunk's forward pass. */
	fixture_req(&r, "h100", 1, "llama3.1-8b", "task", "infer", "seq", "8192", "mbs", "1",
		    NULL);
	check(s, &r, &a);
	r.wl.prefill_chunk = 2048;
	check(s, &r, &b);
	assert_true(fabs(b.memory.activations_gib / a.memory.activations_gib - 0.25) < 1e-6);
	assert_int_equal(b.serving.prefill_chunk, 2048);
	/* seq 1024 x 1 sequence < the 8192 budget: the chunk is 1024 tokens. */
	r.wl.prefill_chunk = ADV_UNSET;
	r.wl.seq = 1024;
	check(s, &r, &c);
	assert_true(fabs(c.memory.activations_gib / a.memory.activations_gib - 0.125) < 1e-6);
}

/*
 * Decode of an 8B model at batch 1 on one H100 is bound by reading the
 * weights (16.06 GB in bf16) and the sequence's KV cache (8192 x 128 KiB =
 * 1.07 GB) once per token: at most 3.35 TB/s / 17.13 GB = 196 tokens/s,
 * and 3.35 / 16.06 = 209 tokens/s for the weights alone (the "about 200
 * tokens/s" upper bound).  The advisor reports that roofline times its
 * achievable share of the bandwidth: between 60% and 100% of the bound,
 * and exactly the bound times that share within 1%.
 */
static void test_decode_roofline_8b(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	double w, kv, bound;

	fixture_req(&r, "h100", 1, "llama3.1-8b", "task", "infer", "seq", "8192", NULL);
	check(s, &r, &res);
	w = res.memory.weights_gib * GIB;
	kv = 8192 * 128 * KIB;
	bound = H100_BW / (w + kv);
	print_message("8b decode batch 1: %.1f tokens/s (bound %.1f, weights-only %.1f); prefill %.0f\n",
		      res.serving.decode_tokens_per_s, bound, H100_BW / w,
		      res.serving.prefill_tokens_per_s);
	assert_true(fabs(w - 8.03e9 * 2) < 0.01 * 8.03e9 * 2);
	assert_true(bound > 190 && bound < 200);
	assert_int_equal(res.serving.decode_batch, 1);
	assert_true(res.serving.decode_tokens_per_s <= H100_BW / w);
	assert_true(res.serving.decode_tokens_per_s >= 0.6 * bound);
	assert_true(res.serving.decode_tokens_per_s <= bound);
	/* The job's estimate carries the same decode rate, without MFU. */
	assert_true(fabs(res.estimate.tokens_per_s - res.serving.decode_tokens_per_s) < 1e-9);
	assert_true(res.estimate.mfu == 0);
	/*
	 * Prefill is compute-bound: 2 x 7.5B multiplied parameters + causal
	 * attention 2 x 32 x 32 x 256 x 8192 / 2 FLOPs per token, about
	 * 17.2 GFLOP; 989 TFLOP/s gives at most 57.5K tokens/s.
	 */
	assert_true(res.serving.prefill_tokens_per_s < 989e12 / 17.0e9);
	assert_true(res.serving.prefill_tokens_per_s > 0.4 * 989e12 / 17.5e9);
}

/*
 * Llama 3 70B at TP4: 320 KiB of KV cache per token for the replica, 80 KiB
 * on each GPU; 32 sequences of 8K are 20 GiB per GPU and fit.
 */
static void test_llama70b_tp4(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;
	double fixed, seqs;

	fixture_req(&r, "h100", 4, "llama3-70b", "task", "infer", "layout", "tp4", "seq", "8192",
		    "mbs", "32", NULL);
	check(s, &r, &res);
	assert_true(res.serving.kv_bytes_per_token == 320 * KIB);
	assert_true(fabs(res.memory.kv_cache_gib - 32 * 8192 * 80 * KIB / GIB) < 1e-9);
	/* vLLM's pool at TP 4: 0.35 GiB non-torch + 0.25 GiB NCCL and custom
	 * all-reduce (issue 19, memory.c) + 1.85 GiB of NCCL's NVLS buffers on
	 * H100's NVLink switches (issue 29, vLLM 0.19's own accounting). */
	fixed = res.memory.weights_gib + res.memory.activations_gib + 0.35 + 0.25 + 1.85;
	seqs = floor(floor((0.9 * 79.65 - fixed) * GIB / (80 * KIB)) / 8192);
	print_message("70b tp4: %.0f sequences of 8K, decode %.0f tokens/s at 32\n",
		      res.serving.kv_capacity_seqs, res.serving.decode_tokens_per_s);
	assert_true(res.serving.kv_capacity_seqs == seqs);
	assert_null(fixture_finding(&res, "KV_CAPACITY_LOW"));
	assert_false(res.has_checkpoint);
	/* 128 sequences do not fit on TP4; TP8 is offered and holds them. */
	fixture_req(&r, "h100", 8, "llama3-70b", "task", "infer", "layout", "tp4", "seq", "8192",
		    "mbs", "128", NULL);
	check(s, &r, &res);
	assert_non_null(fixture_finding(&res, "KV_CAPACITY_LOW"));
	print_message("fix: %s\n", fixture_finding(&res, "KV_CAPACITY_LOW")->fix);
	assert_non_null(strstr(fixture_finding(&res, "KV_CAPACITY_LOW")->fix, "--llm-layout=tp8"));
	r.wl.layout.tp = 8;
	check(s, &r, &res);
	assert_null(fixture_finding(&res, "KV_CAPACITY_LOW"));
}

/*
 * DeepSeek-V3 in fp8 at TP8 on 8 H200, the standard serving deployment:
 * with the experts sharded over TP (ETP = TP) it fits, with room for many
 * 8K sequences of its MLA cache, kept in bf16 as vLLM's kv_cache_dtype
 * "auto" does ((512 + 64) x 61 x 2 B), or in fp8 when the job says so
 * (--kv-cache-dtype fp8: x 1 B, twice the sequences).
 */
static void test_deepseek_v3_h200(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res;

	fixture_req(&r, "h200", 8, "deepseek-v3", "task", "infer", "layout", "tp8",
		    "precision", "fp8", "seq", "8192", NULL);
	check(s, &r, &res);
	print_message("deepseek-v3 tp8 fp8 h200: %.1f GiB, %.0f sequences, %s\n",
		      res.memory.per_gpu_gib, res.serving.kv_capacity_seqs,
		      engine_verdict_name(res.verdict));
	assert_false(engine_has_finding(&res, ADV_CODE_MEM_OVER_CAPACITY));
	assert_int_not_equal(res.verdict, ADV_REJECT);
	assert_true(res.serving.kv_bytes_per_token == (512 + 64) * 61 * 2.0);
	assert_true(res.serving.kv_capacity_seqs >= 16);
	{
		double seqs = res.serving.kv_capacity_seqs;

		r.wl.kv_fp8 = true;
		check(s, &r, &res);
		assert_true(res.serving.kv_bytes_per_token == (512 + 64) * 61 * 1.0);
		assert_true(res.serving.kv_capacity_seqs >= 2 * seqs - 1);
	}
}

/* The serving figures survive the wire bit for bit. */
static void test_serving_wire(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result res, back;
	struct convert_result_pb *buf = calloc(1, sizeof(*buf));
	Advisor__CheckResponse *m, *u;
	uint8_t *bytes;
	size_t n;

	assert_non_null(buf);
	fixture_req(&r, "h100", 1, "llama3.1-8b", "task", "infer", "seq", "8192", "mbs", "128",
		    NULL);
	check(s, &r, &res);
	m = convert_result_to_pb(&res, NULL, buf);
	n = advisor__check_response__get_packed_size(m);
	bytes = malloc(n);
	assert_non_null(bytes);
	advisor__check_response__pack(m, bytes);
	u = advisor__check_response__unpack(NULL, n, bytes);
	assert_non_null(u);
	convert_result_from_pb(u, &back);
	assert_true(back.has_serving);
	assert_memory_equal(&back.serving, &res.serving, sizeof(res.serving));
	assert_false(back.has_checkpoint);
	assert_int_equal(back.attention, ADV_ATTN_FLASH);
	advisor__check_response__free_unpacked(u, NULL);
	free(bytes);
	free(buf);
}

/*
 * Quantized weight formats (issue 19): bytes per parameter.  GPTQ/AWQ
 * w4a16 with group_size 128: 4-bit values + a 16-bit scale and a packed
 * 4-bit zero per group (https://github.com/AutoGPTQ/AutoGPTQ, qzeros and
 * scales per group); MXFP4: 32-element blocks with one E8M0 byte (OCP
 * Microscaling Formats v1.0, https://www.opencompute.org/documents/
 * ocp-microscaling-formats-mx-v1-0-spec-final-pdf); fp8 block-wise: one
 * fp32 scale per 128 x 128 block (DeepSeek-V3 config.json
 * weight_block_size, https://huggingface.co/deepseek-ai/DeepSeek-V3).
 */
static void test_quant_bytes(void **st)
{
	(void)st;
	assert_true(fabs(memory_quant_bytes(ADV_WEIGHTS_INT4) - (0.5 + 2.5 / 128)) < 1e-12);
	assert_true(fabs(memory_quant_bytes(ADV_WEIGHTS_MXFP4) - 0.53125) < 1e-12);
	assert_true(fabs(memory_quant_bytes(ADV_WEIGHTS_FP8) - (1 + 4.0 / 16384)) < 1e-12);
	assert_true(memory_quant_bytes(ADV_WEIGHTS_INT8) == 1.0);
	assert_true(memory_quant_bytes(ADV_WEIGHTS_16BIT) == 0);
}

/* int4 weights of Llama 3 70B at TP 4: the linear layers at 0.52 B, the
 * embedding and lm_head (2 x 128256 x 8192) 16-bit; fp8 KV from
 * --llm-kv-dtype halves the bytes per token. */
static void test_int4_70b(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result a, b;
	double emb = 2.0 * 128256 * 8192;

	fixture_req(&r, "h100", 4, "llama3-70b", "task", "infer", "layout", "tp4", NULL);
	check(s, &r, &a);
	r.wl.weights = ADV_WEIGHTS_INT4;
	r.wl.kv_dtype = ADV_PREC_FP8;
	check(s, &r, &b);
	assert_true(fabs(b.memory.weights_gib * GIB -
			 ((a.memory.weights_gib * GIB - emb / 4 * 2) / 2 * memory_quant_bytes(ADV_WEIGHTS_INT4) +
			  emb / 4 * 2)) < 1e5);   /* the final norm, 16-bit too */
	assert_true(b.serving.kv_bytes_per_token * 2 == a.serving.kv_bytes_per_token);
	assert_true(b.serving.kv_capacity_tokens > 2 * a.serving.kv_capacity_tokens);
}

/*
 * Sliding-window attention (issue 19 item 4): Gemma 2 27B keeps 4096
 * tokens on 23 of its 46 layers.  At a 32K context and the default 8K
 * prefill budget vLLM's hybrid allocator holds min(4096 - 1 + 8192, 32768)
 * = 12287 tokens on those layers, so a request costs (23 x 32768 + 23 x
 * 12287) / (46 x 32768) of the full-attention bytes and the pool holds
 * that much more; at a 4K context the window covers it all.  SGLang's SWA
 * pool gives those layers 0.8 of the slots.
 */
static void test_sliding_window(void **st)
{
	struct fixture *s = *st;
	struct adv_request r;
	struct adv_result a, b;
	double share = (23.0 * 32768 + 23.0 * 12287) / (46.0 * 32768), full;

	fixture_req(&r, "h100", 1, "gemma2-27b", "task", "infer", "seq", "32768", NULL);
	check(s, &r, &a);
	full = a.serving.kv_bytes_per_token;
	assert_true(fabs(a.memory.kv_cache_gib * GIB - full * 32768 * share) < 1e3);
	r.wl.seq = 4096;
	check(s, &r, &b);
	assert_true(fabs(b.memory.kv_cache_gib * GIB - full * 4096) < 1e3);
	r.wl.seq = 32768;
	r.wl.share_static = true;
	r.wl.mem_share = 880;
	check(s, &r, &b);
	assert_true(fabs(b.memory.kv_cache_gib * GIB - full * 32768 * 0.9) < 1e3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quant_bytes),
		cmocka_unit_test(test_int4_70b),
		cmocka_unit_test(test_sliding_window),
		cmocka_unit_test(test_llama8b_128_seqs),
		cmocka_unit_test(test_prefill_chunk),
		cmocka_unit_test(test_decode_roofline_8b),
		cmocka_unit_test(test_llama70b_tp4),
		cmocka_unit_test(test_deepseek_v3_h200),
		cmocka_unit_test(test_serving_wire),
	};

	return cmocka_run_group_tests(tests, setup, fixture_teardown);
}
