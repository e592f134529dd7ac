/*
 * test_params.c - parameter counts from the architecture (model-math.md).
 *
 * References: the models' published totals (model cards, papers), and hand
 * counts from their config.json files.  Every shipped model with params_b
 * must agree within 2% (issue 2); known models are held tighter.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/catalog.h"
#include "fixture.h"

/* issue 2: computed vs published parameter count. */
#define PARAMS_TOLERANCE 0.02

static catalog_t *cat;

static int load(void **st)
{
	cat = fixture_catalog(NULL);
	return cat ? 0 : -1;
}

static int unload(void **st)
{
	catalog_destroy(cat);
	return 0;
}

static struct adv_params params_of(const char *name)
{
	const struct adv_model *m = catalog_find_model(cat, name);
	struct adv_params p;

	assert_non_null(m);
	catalog_model_params(m, &p);
	return p;
}

/* |got - want| <= rel * want */
static void assert_near(double got, double want, double rel)
{
	if (fabs(got - want) > rel * want)
		print_error("%.6g is not within %.2g%% of %.6g\n", got, rel * 100, want);
	assert_true(fabs(got - want) <= rel * want);
}

static void test_every_model_within_2_percent(void **st)
{
	size_t checked = 0;

	printf("  %-16s %12s %12s %8s %12s\n", "model", "computed B", "published B", "diff %",
	       "active B");
	for (size_t i = 0; i < catalog_model_count(cat); i++) {
		const struct adv_model *m = catalog_model_at(cat, i);
		struct adv_params p;

		catalog_model_params(m, &p);
		printf("  %-16s %12.3f %12.3f %+8.2f %12.3f\n", m->name, p.total / 1e9, m->params_b,
		       m->params_b ? 100.0 * (p.total / 1e9 - m->params_b) / m->params_b : 0.0,
		       p.active / 1e9);
		if (m->params_b <= 0)
			continue;
		assert_near(p.total / 1e9, m->params_b, PARAMS_TOLERANCE);
		checked++;
	}
	/* Every shipped model states its published size. */
	assert_int_equal(checked, catalog_model_count(cat));
}

/* Llama 3 8B: 8,030,261,248 parameters (safetensors total). */
static void test_llama3_8b_exact(void **st)
{
	struct adv_params p = params_of("llama3-8b");

	assert_float_equal(p.total, 8030261248.0, 0.5);
	assert_float_equal(p.embedding, 128256.0 * 4096, 0.5);
	assert_float_equal(p.output, 128256.0 * 4096, 0.5);
	/* Q,O 2*4096*4096 + K,V 2*4096*1024 */
	assert_float_equal(p.attn_per_layer, 41943040.0, 0.5);
	/* attention + SwiGLU 3*4096*14336 + 2 RMSNorms */
	assert_float_equal(p.per_layer_dense, 41943040.0 + 176160768.0 + 8192.0, 0.5);
	assert_float_equal(p.final_norm, 4096, 0.5);
	assert_float_equal(p.active, p.total, 0.5);
	assert_float_equal(p.per_layer_moe, 0, 0);
	assert_int_equal(p.dense_layer_count, 32);
	assert_int_equal(p.moe_layer_count, 0);
}

/* Llama 3 70B: 70,553,706,496 (safetensors total); 70.55B within 0.5%. */
static void test_llama3_70b(void **st)
{
	struct adv_params p = params_of("llama3-70b");

	assert_near(p.total, 70.55e9, 0.005);
	assert_float_equal(p.total, 70553706496.0, 0.5);
}

/* GPT-3 175B: 174.6B without biases and position embeddings, within 1%. */
static void test_gpt3(void **st)
{
	struct adv_params p = params_of("gpt3-175b");

	assert_near(p.total, 174.6e9, 0.01);
	/* 12*h^2 per layer plus 4h of LayerNorm, tied embedding. */
	assert_float_equal(p.per_layer_dense, 12.0 * 12288 * 12288 + 4.0 * 12288, 0.5);
	assert_float_equal(p.output, 0, 0);
}

/* BLOOM-176B: 176,247,271,424 on the model card; biases make up the rest. */
static void test_bloom(void **st)
{
	assert_near(params_of("bloom-176b").total, 176247271424.0, 0.005);
}

/*
 * DeepSeek-V3: 671B total (without the 14B MTP module), 37B activated
 * (technical report).  MLA per layer by hand: q_a 7168*1536, q norm 1536,
 * q_b 1536*128*192, kv_a 7168*576, kv norm 512, kv_b 512*128*256,
 * o 128*128*7168.
 */
static void test_deepseek_v3(void **st)
{
	struct adv_params p = params_of("deepseek-v3");
	double mla = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512 +
		     512.0 * 128 * 256 + 128.0 * 128 * 7168;
	double expert = 3.0 * 7168 * 2048;

	assert_float_equal(p.attn_per_layer, mla, 0.5);
	assert_float_equal(p.per_layer_dense, mla + 3.0 * 7168 * 18432 + 2 * 7168, 0.5);
	assert_float_equal(p.per_layer_moe, mla + 7168.0 * 256 + 257 * expert + 2 * 7168, 0.5);
	assert_float_equal(p.expert_params, 58.0 * 256 * expert, 0.5);
	assert_int_equal(p.dense_layer_count, 3);
	assert_int_equal(p.moe_layer_count, 58);
	assert_near(p.total, 671e9, 0.005);
	assert_near(p.active, 37e9, 0.02);
	assert_float_equal(p.total - p.active, 58.0 * (256 - 8) * expert, 1.0);
}

/* Mixtral: 46.7B total / 12.9B active; 141B / 39B (Mistral AI). */
static void test_mixtral(void **st)
{
	struct adv_params p = params_of("mixtral-8x7b");

	assert_near(p.total, 46.7e9, 0.005);
	assert_near(p.active, 12.9e9, 0.01);
	assert_true(p.per_layer_dense > 0); /* what a dense layer would weigh */
	assert_int_equal(p.dense_layer_count, 0);
	assert_int_equal(p.moe_layer_count, 32);
	p = params_of("mixtral-8x22b");
	assert_near(p.total, 141e9, 0.005);
	assert_near(p.active, 39e9, 0.01);
}

/*
 * Issue 28's models: each within 1.5% of its published total (the model
 * cards; the Hub's safetensors totals where a card rounds), tighter than
 * issue 2's 2%: what is left out (QKV biases, QK-norms, attention sinks,
 * a multimodal model's vision encoder) is under 1.5% of each.  MoE
 * active counts within 3% of the cards', which round them to two digits
 * (DeepSeek-V2-Lite's 2.45B is "2.4B"); gpt-oss and DeepSeek-V2-Lite
 * publish theirs without the input embedding.
 */
#define ISSUE28_TOLERANCE 0.015

static void test_issue28_published_sizes(void **st)
{
	static const struct {
		const char *name;
		double total_b, active_b;
		bool active_without_embedding;
	} m[] = {
		{ "llama3.2-1b", 1.24, 0, false },    { "llama3.2-3b", 3.21, 0, false },
		{ "qwen2.5-0.5b", 0.49, 0, false },   { "qwen2.5-1.5b", 1.54, 0, false },
		{ "qwen2.5-3b", 3.09, 0, false },     { "qwen2.5-14b", 14.7, 0, false },
		{ "qwen2.5-32b", 32.5, 0, false },    { "qwen3-0.6b", 0.6, 0, false },
		{ "qwen3-1.7b", 1.7, 0, false },      { "qwen3-4b", 4.0, 0, false },
		{ "qwen3-8b", 8.2, 0, false },        { "qwen3-14b", 14.8, 0, false },
		{ "qwen3-32b", 32.8, 0, false },      { "qwen3-30b-a3b", 30.5, 3.3, false },
		{ "qwen3-235b-a22b", 235, 22, false }, { "deepseek-v2", 236, 21, false },
		{ "deepseek-v2-lite", 15.7, 2.4, true }, { "mistral-nemo-12b", 12.2, 0, false },
		{ "gemma2-2b", 2.61, 0, false },      { "gemma2-9b", 9.24, 0, false },
		{ "gemma3-1b", 1.0, 0, false },       { "gemma3-27b", 27, 0, false },
		{ "phi3-mini-128k", 3.82, 0, false }, { "gpt-oss-120b", 116.8, 5.1, true },
		{ "gpt-oss-20b", 20.9, 3.6, true },   { "llama2-7b", 6.74, 0, false },
		{ "llama2-13b", 13.0, 0, false },     { "llama2-70b", 69.0, 0, false },
		{ "phi4", 14.7, 0, false },           { "mistral-7b-v0.3", 7.25, 0, false },
		{ "mistral-small-24b", 23.6, 0, false },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct adv_params p = params_of(m[i].name);

		printf("  %-18s %8.3f B (published %.3f)\n", m[i].name, p.total / 1e9, m[i].total_b);
		assert_near(p.total, m[i].total_b * 1e9, ISSUE28_TOLERANCE);
		if (m[i].active_b > 0)
			assert_near(p.active - (m[i].active_without_embedding ? p.embedding : 0),
				    m[i].active_b * 1e9, 0.03);
		else
			assert_float_equal(p.active, p.total, 0.5);
	}
}

/* MLA with full-rank queries (q_lora_rank 0, as DeepSeek-V2-Lite) uses h*a*(qk+rope). */
static void test_mla_without_q_lora(void **st)
{
	struct adv_model m = {
		.layers = 1, .hidden = 2048, .heads = 16, .kv_heads = 16, .head_dim = 192,
		.ffn_hidden = 10944, .vocab = 102400, .gated_mlp = true, .max_seq = 4096,
		.has_mla = true,
		.mla = { .q_lora_rank = 0, .kv_lora_rank = 512, .qk_rope_dim = 64,
			 .qk_head_dim = 128, .v_head_dim = 128 },
	};
	struct adv_params p;

	catalog_model_params(&m, &p);
	assert_float_equal(p.attn_per_layer,
			   2048.0 * 16 * 192 + 2048.0 * 576 + 512 + 512.0 * 16 * 256 +
				   16.0 * 128 * 2048,
			   0.5);
}

/* LayerNorm counts weight and bias; a non-gated MLP has two matrices. */
static void test_dense_layernorm_tied(void **st)
{
	struct adv_model m = {
		.layers = 2, .hidden = 64, .heads = 4, .kv_heads = 4, .head_dim = 16,
		.ffn_hidden = 256, .vocab = 1000, .norm = ADV_NORM_LAYERNORM,
		.tied_embeddings = true, .max_seq = 128,
	};
	struct adv_params p;

	catalog_model_params(&m, &p);
	assert_float_equal(p.attn_per_layer, 4.0 * 64 * 64, 0);
	assert_float_equal(p.per_layer_dense, 4.0 * 64 * 64 + 2.0 * 64 * 256 + 4.0 * 64, 0);
	assert_float_equal(p.total, 1000.0 * 64 + 2 * p.per_layer_dense + 2.0 * 64, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_model_within_2_percent),
		cmocka_unit_test(test_llama3_8b_exact),
		cmocka_unit_test(test_llama3_70b),
		cmocka_unit_test(test_gpt3),
		cmocka_unit_test(test_bloom),
		cmocka_unit_test(test_deepseek_v3),
		cmocka_unit_test(test_mixtral),
		cmocka_unit_test(test_issue28_published_sizes),
		cmocka_unit_test(test_mla_without_q_lora),
		cmocka_unit_test(test_dense_layernorm_tied),
	};

	return cmocka_run_group_tests(tests, load, unload);
}
