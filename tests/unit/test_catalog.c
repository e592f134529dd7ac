/*
 * test_catalog.c - catalog loading, lookups, merging and every error class.
 *
 * Each bad-input test asserts the whole message, so the file, line and
 * column (1-based, as an editor shows them) and the wording are pinned.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/catalog.h"

#define SHIPPED SRCDIR "/etc/catalog.yaml"

/* A GPU and a model with only their required keys; line 2 is "  - name: ...". */
#define GPU_G1 \
	"gpus:\n" \
	"  - name: g1\n" \
	"    aliases: [gee-one, \"The G1\"]\n" \
	"    memory_gib: 80\n" \
	"    bf16_tflops: 989\n" \
	"    gpus_per_node: 8\n" \
	"    tdp_w: 700\n" \
	"    price_per_hour_usd: 2\n"

#define MODEL_M1_HEAD \
	"models:\n" \
	"  - name: m1\n" \
	"    layers: 32\n" \
	"    hidden: 4096\n" \
	"    vocab: 32000\n" \
	"    ffn_hidden: 14336\n" \
	"    max_seq: 4096\n"

struct state {
	catalog_t *cat;
	char err[ADV_ERR_MAX];
};

static int setup(void **st)
{
	struct state *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	s->cat = catalog_create();
	*st = s;
	return s->cat ? 0 : -1;
}

static int teardown(void **st)
{
	struct state *s = *st;

	catalog_destroy(s->cat);
	free(s);
	return 0;
}

/* Loads text as file name and expects code and exactly the message want. */
static void expect_error(struct state *s, const char *name, const char *text, int code,
			 const char *want)
{
	int rc = catalog_load_string(s->cat, name, text, s->err, sizeof(s->err));

	if (rc != code)
		print_error("got code %d (%s): %s\n", rc, catalog_strerror(rc), s->err);
	assert_int_equal(rc, code);
	assert_string_equal(s->err, want);
	/* A failed load adds nothing. */
	assert_int_equal(catalog_gpu_count(s->cat), 0);
	assert_int_equal(catalog_model_count(s->cat), 0);
	assert_int_equal(catalog_file_count(s->cat), 0);
}

static void test_shipped_catalog(void **st)
{
	struct state *s = *st;
	static const char *const gpus[] = {
		"h100-sxm", "h100-pcie", "h200", "h800", "b200", "gb200", "a100-40gb",
		"a100-80gb", "l40s", "l4", "v100-32gb", "mi300x", "mi325x", "mi250", "gaudi3",
	};
	static const char *const models[] = {
		"llama3-8b", "llama3-70b", "llama3-405b", "llama3.1-8b", "mixtral-8x7b",
		"mixtral-8x22b", "deepseek-v3", "qwen2.5-7b", "qwen2.5-72b", "gpt3-175b",
		"bloom-176b", "falcon-180b", "mistral-7b", "gemma2-27b", "llama3.1-70b",
		/* issue 28 */
		"llama3.2-1b", "llama3.2-3b", "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b",
		"qwen2.5-14b", "qwen2.5-32b", "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b",
		"qwen3-14b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-v2",
		"deepseek-v2-lite", "mistral-nemo-12b", "gemma2-2b", "gemma2-9b", "gemma3-1b",
		"gemma3-27b", "phi3-mini-128k", "gpt-oss-120b", "gpt-oss-20b", "llama2-7b",
		"llama2-13b", "llama2-70b", "phi4", "mistral-7b-v0.3", "mistral-small-24b",
	};
	int rc = catalog_load(s->cat, SHIPPED, s->err, sizeof(s->err));

	if (rc)
		print_error("%s\n", s->err);
	assert_int_equal(rc, CATALOG_OK);
	assert_int_equal(catalog_file_count(s->cat), 1);
	assert_string_equal(catalog_file_at(s->cat, 0), SHIPPED);
	for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++) {
		const struct adv_gpu *g = catalog_find_gpu(s->cat, gpus[i]);

		assert_non_null(g);
		assert_string_equal(g->name, gpus[i]);
		assert_string_equal(g->file, SHIPPED);
		assert_true(g->memory_gib > 0 && g->bf16_tflops > 0 && g->network_gbs > 0);
	}
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		const struct adv_model *m = catalog_find_model(s->cat, models[i]);

		assert_non_null(m);
		assert_int_equal(m->heads % m->kv_heads, 0);
	}
	assert_int_equal(catalog_gpu_count(s->cat), 16);
	assert_int_equal(catalog_model_count(s->cat), sizeof(models) / sizeof(models[0]));
}

static void test_shipped_values(void **st)
{
	struct state *s = *st;
	const struct adv_gpu *h100;
	const struct adv_model *m;

	assert_int_equal(catalog_load(s->cat, SHIPPED, s->err, sizeof(s->err)), CATALOG_OK);
	/* design.md's example entry and model-math.md's usable memory figures. */
	/* Llama 3.3 70B is Llama 3.1 70B's architecture (torchtune builds it
	 * with llama3_1_70b): one entry, 128K context. */
	m = catalog_find_model(s->cat, "llama3.3-70b");
	assert_non_null(m);
	assert_string_equal(m->name, "llama3.1-70b");
	assert_int_equal(m->max_seq, 131072);
	h100 = catalog_find_gpu(s->cat, "h100-sxm");
	assert_float_equal(h100->memory_gib, 79.65, 1e-9);
	assert_float_equal(h100->bf16_tflops, 989, 1e-9);
	assert_float_equal(h100->fp8_tflops, 1979, 1e-9);
	assert_float_equal(h100->interconnect_gbs, 900, 1e-9);
	assert_int_equal(h100->gpus_per_node, 8);
	assert_float_equal(catalog_find_gpu(s->cat, "h200")->memory_gib, 140.4, 1e-9);
	assert_float_equal(catalog_find_gpu(s->cat, "b200")->memory_gib, 179.1, 1e-9);
	assert_float_equal(catalog_find_gpu(s->cat, "a100-80gb")->memory_gib, 80.0, 1e-9);
	assert_float_equal(catalog_find_gpu(s->cat, "mi300x")->memory_gib, 191.7, 1e-9);
	assert_float_equal(catalog_find_gpu(s->cat, "a100-40gb")->memory_gib, 39.4, 1e-9);
	/* Absent network_gbs defaults to one 400 Gb/s rail. */
	assert_float_equal(catalog_find_gpu(s->cat, "h200")->network_gbs, 50, 1e-9);

	m = catalog_find_model(s->cat, "meta-llama/Meta-Llama-3-70B");
	assert_non_null(m);
	assert_string_equal(m->name, "llama3-70b");
	assert_int_equal(m->layers, 80);
	assert_int_equal(m->kv_heads, 8);
	assert_int_equal(m->head_dim, 128);
	assert_true(m->gated_mlp);
	assert_int_equal(m->norm, ADV_NORM_RMSNORM);
	m = catalog_find_model(s->cat, "gpt3-175b");
	assert_int_equal(m->kv_heads, 96);   /* defaults to heads */
	assert_int_equal(m->head_dim, 128);  /* defaults to hidden/heads */
	assert_int_equal(m->norm, ADV_NORM_LAYERNORM);
	assert_true(m->tied_embeddings);
	m = catalog_find_model(s->cat, "llama3.1-8b");
	assert_int_equal(m->max_seq, 131072);
	m = catalog_find_model(s->cat, "deepseek-v3");
	assert_true(m->has_moe && m->has_mla);
	assert_int_equal(m->moe.experts, 256);
	assert_int_equal(m->moe.top_k, 8);
	assert_int_equal(m->moe.shared_experts, 1);
	assert_int_equal(m->moe.dense_layers, 3);
	assert_int_equal(m->mla.kv_lora_rank, 512);
	assert_int_equal(m->head_dim, 192);  /* MLA: qk_head_dim + qk_rope_dim */
}

static void test_lookup_case_insensitive(void **st)
{
	struct state *s = *st;
	const struct adv_gpu *g;

	assert_int_equal(catalog_load(s->cat, SHIPPED, s->err, sizeof(s->err)), CATALOG_OK);
	g = catalog_find_gpu(s->cat, "h100-sxm");
	assert_non_null(g);
	assert_ptr_equal(catalog_find_gpu(s->cat, "H100"), g);
	assert_ptr_equal(catalog_find_gpu(s->cat, "NVIDIA H100 80GB HBM3"), g);
	assert_ptr_equal(catalog_find_gpu(s->cat, "nvidia h100 80gb hbm3"), g);
	assert_ptr_equal(catalog_find_gpu(s->cat, "H100-SXM"), g);
	assert_null(catalog_find_gpu(s->cat, "h100-sx"));
	/* As slurm.conf and gres.conf spell types (issue 28): the vendor's
	 * prefix and '_' for '-'; never a prefix or another size. */
	assert_ptr_equal(catalog_find_gpu(s->cat, "nvidia_h100"), g);
	assert_ptr_equal(catalog_find_gpu(s->cat, "NVIDIA_H100_SXM"), g);
	assert_ptr_equal(catalog_find_gpu(s->cat, "nvidia_h200"), catalog_find_gpu(s->cat, "h200"));
	assert_ptr_equal(catalog_find_gpu(s->cat, "a100_80gb"), catalog_find_gpu(s->cat, "a100-80gb"));
	assert_null(catalog_find_gpu(s->cat, "nvidia_h10"));
	assert_null(catalog_find_gpu(s->cat, "nvidia_"));
	assert_null(catalog_find_gpu(s->cat, "nvidia"));
	assert_null(catalog_find_gpu(s->cat, ""));
	assert_null(catalog_find_gpu(s->cat, NULL));
	/* Models and GPUs are separate name spaces. */
	assert_null(catalog_find_model(s->cat, "h100"));
	assert_ptr_equal(catalog_find_model(s->cat, "LLAMA3-8B"),
			 catalog_find_model(s->cat, "meta-llama/meta-llama-3-8b"));
}

static void test_merge_two_files(void **st)
{
	struct state *s = *st;
	const char *f2 =
		"gpus:\n"
		"  - name: g2\n"
		"    memory_gib: 40\n"
		"    bf16_tflops: 312\n"
		"    gpus_per_node: 4\n"
		"    tdp_w: 400\n"
		"    price_per_hour_usd: 1.5\n"
		"    network_gbs: 25\n"
		MODEL_M1_HEAD
		"    heads: 32\n";

	assert_int_equal(catalog_load_string(s->cat, "f1.yaml", GPU_G1, s->err, sizeof(s->err)),
			 CATALOG_OK);
	assert_int_equal(catalog_load_string(s->cat, "f2.yaml", f2, s->err, sizeof(s->err)),
			 CATALOG_OK);
	assert_int_equal(catalog_gpu_count(s->cat), 2);
	assert_int_equal(catalog_model_count(s->cat), 1);
	assert_int_equal(catalog_file_count(s->cat), 2);
	assert_string_equal(catalog_file_at(s->cat, 0), "f1.yaml");
	assert_string_equal(catalog_file_at(s->cat, 1), "f2.yaml");
	assert_null(catalog_file_at(s->cat, 2));
	assert_string_equal(catalog_find_gpu(s->cat, "the g1")->file, "f1.yaml");
	assert_string_equal(catalog_find_gpu(s->cat, "G2")->file, "f2.yaml");
	assert_int_equal(catalog_find_gpu(s->cat, "g2")->line, 2);
	assert_int_equal(catalog_find_gpu(s->cat, "g2")->column, 11);
	assert_float_equal(catalog_find_gpu(s->cat, "g2")->network_gbs, 25, 1e-9);
	assert_float_equal(catalog_find_gpu(s->cat, "g1")->network_gbs, 50, 1e-9);
	assert_float_equal(catalog_find_gpu(s->cat, "g1")->fp8_tflops, 0, 1e-9);
	assert_int_equal(catalog_find_model(s->cat, "m1")->head_dim, 128);
	assert_int_equal(catalog_find_model(s->cat, "m1")->kv_heads, 32);
	assert_false(catalog_find_model(s->cat, "m1")->gated_mlp);
}

static void test_duplicate_across_files(void **st)
{
	struct state *s = *st;
	const char *f2 =
		"gpus:\n"
		"  - name: other\n"
		"    memory_gib: 40\n"
		"    bf16_tflops: 312\n"
		"    gpus_per_node: 4\n"
		"    tdp_w: 400\n"
		"    price_per_hour_usd: 1.5\n"
		"  - name: G1\n"
		"    memory_gib: 40\n"
		"    bf16_tflops: 312\n"
		"    gpus_per_node: 4\n"
		"    tdp_w: 400\n"
		"    price_per_hour_usd: 1.5\n";

	assert_int_equal(catalog_load_string(s->cat, "f1.yaml", GPU_G1, s->err, sizeof(s->err)),
			 CATALOG_OK);
	assert_int_equal(catalog_load_string(s->cat, "f2.yaml", f2, s->err, sizeof(s->err)),
			 CATALOG_ERR_DUPLICATE);
	assert_string_equal(s->err,
			    "f2.yaml:8:11: duplicate GPU name 'G1', first defined at f1.yaml:2:11");
	/* The catalog is as it was: 'other' was not added, f2 is not listed. */
	assert_int_equal(catalog_gpu_count(s->cat), 1);
	assert_int_equal(catalog_file_count(s->cat), 1);
	assert_null(catalog_find_gpu(s->cat, "other"));
	assert_non_null(catalog_find_gpu(s->cat, "g1"));
}

static void test_duplicate_alias_across_files(void **st)
{
	struct state *s = *st;
	const char *f2 =
		"gpus:\n"
		"  - name: g9\n"
		"    aliases: [g9a, GEE-ONE]\n"
		"    memory_gib: 40\n"
		"    bf16_tflops: 312\n"
		"    gpus_per_node: 4\n"
		"    tdp_w: 400\n"
		"    price_per_hour_usd: 1.5\n";

	assert_int_equal(catalog_load_string(s->cat, "f1.yaml", GPU_G1, s->err, sizeof(s->err)),
			 CATALOG_OK);
	assert_int_equal(catalog_load_string(s->cat, "f2.yaml", f2, s->err, sizeof(s->err)),
			 CATALOG_ERR_DUPLICATE);
	assert_string_equal(s->err,
			    "f2.yaml:3:20: duplicate GPU alias 'GEE-ONE', first defined at "
			    "f1.yaml:3:15 as an alias of 'g1'");
	assert_int_equal(catalog_gpu_count(s->cat), 1);
}

static void test_load_shipped_twice_is_duplicate(void **st)
{
	struct state *s = *st;

	assert_int_equal(catalog_load(s->cat, SHIPPED, s->err, sizeof(s->err)), CATALOG_OK);
	assert_int_equal(catalog_load(s->cat, SHIPPED, s->err, sizeof(s->err)),
			 CATALOG_ERR_DUPLICATE);
	assert_non_null(strstr(s->err, "duplicate GPU name 'h100-sxm', first defined at " SHIPPED));
	assert_int_equal(catalog_gpu_count(s->cat), 16);
	assert_int_equal(catalog_file_count(s->cat), 1);
}

static void test_err_syntax(void **st)
{
	expect_error(*st, "bad.yaml",
		     "gpus:\n"
		     "  - name: g1\n"
		     "    memory_gib: [80\n"
		     "    tdp_w: 700\n",
		     CATALOG_ERR_SYNTAX,
		     "bad.yaml:4:10: YAML syntax error: did not find expected ',' or ']' "
		     "(while parsing a flow sequence at line 3, column 17)");
}

static void test_err_syntax_tab(void **st)
{
	expect_error(*st, "tab.yaml", "gpus:\n\t- name: g1\n", CATALOG_ERR_SYNTAX,
		     "tab.yaml:2:1: YAML syntax error: found character that cannot start any "
		     "token (while scanning for the next token at line 2, column 1)");
}

static void test_err_unknown_key(void **st)
{
	expect_error(*st, "k.yaml", MODEL_M1_HEAD "    heads: 32\n    hiden: 4096\n",
		     CATALOG_ERR_SCHEMA,
		     "k.yaml:9:5: unknown key 'hiden' in model 'm1'; expected one of: name, "
		     "aliases, params_b, layers, hidden, heads, kv_heads, head_dim, ffn_hidden, "
		     "vocab, gated_mlp, norm, tied_embeddings, max_seq, sliding_window, sliding_layers, moe, mla, weights_dtype");
}

static void test_err_unknown_top_key(void **st)
{
	expect_error(*st, "k.yaml", "gpu:\n  - name: x\n", CATALOG_ERR_SCHEMA,
		     "k.yaml:1:1: unknown key 'gpu' in the catalog; expected one of: gpus, models");
}

static void test_err_missing_key(void **st)
{
	/* Reported at the start of the mapping that lacks it. */
	expect_error(*st, "m.yaml",
		     "models:\n"
		     "  - name: m1\n"
		     "    hidden: 4096\n"
		     "    heads: 32\n"
		     "    vocab: 32000\n"
		     "    ffn_hidden: 14336\n"
		     "    max_seq: 4096\n",
		     CATALOG_ERR_SCHEMA, "m.yaml:2:5: missing required key 'layers' in model 'm1'");
}

static void test_err_missing_gpu_key(void **st)
{
	expect_error(*st, "m.yaml",
		     "gpus:\n"
		     "  - name: g1\n"
		     "    memory_gib: 80\n"
		     "    gpus_per_node: 8\n"
		     "    tdp_w: 700\n"
		     "    price_per_hour_usd: 2\n",
		     CATALOG_ERR_SCHEMA, "m.yaml:2:5: missing required key 'bf16_tflops' in GPU 'g1'");
}

static void test_err_wrong_type(void **st)
{
	expect_error(*st, "t.yaml", MODEL_M1_HEAD "    heads: abc\n", CATALOG_ERR_SCHEMA,
		     "t.yaml:8:12: expected an integer for 'heads', got 'abc'");
}

static void test_err_wrong_type_quoted_and_list(void **st)
{
	struct state *s = *st;

	expect_error(s, "t.yaml", MODEL_M1_HEAD "    heads: \"32\"\n", CATALOG_ERR_SCHEMA,
		     "t.yaml:8:12: expected an integer for 'heads', got the quoted string \"32\"");
	expect_error(s, "t.yaml", MODEL_M1_HEAD "    heads: 32\n    gated_mlp: maybe\n",
		     CATALOG_ERR_SCHEMA,
		     "t.yaml:9:16: expected true or false for 'gated_mlp', got 'maybe'");
	expect_error(s, "t.yaml", MODEL_M1_HEAD "    heads: 32\n    aliases: m-one\n",
		     CATALOG_ERR_SCHEMA,
		     "t.yaml:9:14: expected a list of strings for 'aliases', got a scalar");
	expect_error(s, "t.yaml", "gpus: {name: x}\n", CATALOG_ERR_SCHEMA,
		     "t.yaml:1:7: expected a list for 'gpus', got a mapping");
	expect_error(s, "t.yaml", MODEL_M1_HEAD "    heads: 32.5\n", CATALOG_ERR_SCHEMA,
		     "t.yaml:8:12: expected an integer for 'heads', got '32.5'");
	expect_error(s, "t.yaml", MODEL_M1_HEAD "    heads: 32\n    norm: batchnorm\n",
		     CATALOG_ERR_VALUE,
		     "t.yaml:9:11: expected rmsnorm or layernorm for 'norm', got 'batchnorm'");
}

static void test_err_out_of_range(void **st)
{
	expect_error(*st, "r.yaml",
		     "gpus:\n"
		     "  - name: g1\n"
		     "    memory_gib: 80\n"
		     "    bf16_tflops: 989\n"
		     "    gpus_per_node: 0\n"
		     "    tdp_w: 700\n"
		     "    price_per_hour_usd: 2\n",
		     CATALOG_ERR_VALUE, "r.yaml:5:20: 'gpus_per_node' must be between 1 and 4096, got 0");
}

/* weights_dtype takes what a published checkpoint stores, nothing else. */
static void test_err_weights_dtype(void **st)
{
	expect_error(*st, "w.yaml", MODEL_M1_HEAD "    heads: 32\n    weights_dtype: int3\n",
		     CATALOG_ERR_VALUE, "w.yaml:9:20: expected bf16, fp16, fp8 or mxfp4 for 'weights_dtype', got 'int3'");
}

static void test_err_zero_heads(void **st)
{
	expect_error(*st, "z.yaml", MODEL_M1_HEAD "    heads: 0\n", CATALOG_ERR_VALUE,
		     "z.yaml:8:12: 'heads' must be at least 1, got 0");
}

static void test_err_negative_memory(void **st)
{
	expect_error(*st, "n.yaml",
		     "gpus:\n"
		     "  - name: g1\n"
		     "    memory_gib: -80\n"
		     "    bf16_tflops: 989\n"
		     "    gpus_per_node: 8\n"
		     "    tdp_w: 700\n"
		     "    price_per_hour_usd: 2\n",
		     CATALOG_ERR_VALUE, "n.yaml:3:17: 'memory_gib' must be greater than 0, got -80");
}

static void test_err_kv_heads(void **st)
{
	expect_error(*st, "kv.yaml", MODEL_M1_HEAD "    heads: 32\n    kv_heads: 6\n",
		     CATALOG_ERR_VALUE, "kv.yaml:9:15: 'kv_heads' (6) must divide 'heads' (32)");
}

static void test_err_hidden_not_divisible(void **st)
{
	struct state *s = *st;

	expect_error(s, "h.yaml", MODEL_M1_HEAD "    heads: 30\n", CATALOG_ERR_VALUE,
		     "h.yaml:8:12: 'hidden' (4096) is not divisible by 'heads' (30); give 'head_dim'");
	/* With an explicit head_dim it is a valid (if odd) model. */
	assert_int_equal(catalog_load_string(s->cat, "h.yaml",
					     MODEL_M1_HEAD "    heads: 30\n    head_dim: 128\n",
					     s->err, sizeof(s->err)),
			 CATALOG_OK);
}

static void test_err_moe(void **st)
{
	struct state *s = *st;

	expect_error(s, "moe.yaml",
		     MODEL_M1_HEAD "    heads: 32\n"
		     "    moe: { experts: 8, top_k: 9, expert_ffn_hidden: 1024 }\n",
		     CATALOG_ERR_VALUE, "moe.yaml:9:31: 'top_k' (9) must not exceed 'experts' (8)");
	expect_error(s, "moe.yaml",
		     MODEL_M1_HEAD "    heads: 32\n"
		     "    moe: { experts: 8, top_k: 2, expert_ffn_hidden: 1024, dense_layers: 32 }\n",
		     CATALOG_ERR_VALUE,
		     "moe.yaml:9:73: 'dense_layers' (32) must be less than 'layers' (32)");
	expect_error(s, "moe.yaml",
		     MODEL_M1_HEAD "    heads: 32\n"
		     "    moe: { experts: 8, expert_ffn_hidden: 1024 }\n",
		     CATALOG_ERR_SCHEMA, "moe.yaml:9:10: missing required key 'top_k' in 'moe' of model 'm1'");
	expect_error(s, "mla.yaml",
		     MODEL_M1_HEAD "    heads: 32\n"
		     "    mla: { kv_lora_rank: 512, qk_rope_dim: 64, qk_head_dim: 128, v_head: 1 }\n",
		     CATALOG_ERR_SCHEMA,
		     "mla.yaml:9:66: unknown key 'v_head' in 'mla' of model 'm1'; expected one of: "
		     "q_lora_rank, kv_lora_rank, qk_rope_dim, qk_head_dim, v_head_dim");
}

static void test_err_duplicate_name(void **st)
{
	expect_error(*st, "d.yaml",
		     MODEL_M1_HEAD "    heads: 32\n"
		     "  - name: M1\n"
		     "    layers: 2\n"
		     "    hidden: 64\n"
		     "    heads: 4\n"
		     "    vocab: 100\n"
		     "    ffn_hidden: 256\n"
		     "    max_seq: 128\n",
		     CATALOG_ERR_DUPLICATE,
		     "d.yaml:9:11: duplicate model name 'M1', first defined at d.yaml:2:11");
}

static void test_err_duplicate_alias(void **st)
{
	expect_error(*st, "a.yaml",
		     GPU_G1
		     "  - name: g2\n"
		     "    aliases: [g2a, \"the g1\"]\n"
		     "    memory_gib: 80\n"
		     "    bf16_tflops: 989\n"
		     "    gpus_per_node: 8\n"
		     "    tdp_w: 700\n"
		     "    price_per_hour_usd: 2\n",
		     CATALOG_ERR_DUPLICATE,
		     "a.yaml:10:20: duplicate GPU alias 'the g1', first defined at a.yaml:3:24 as an "
		     "alias of 'g1'");
}

static void test_err_duplicate_key(void **st)
{
	expect_error(*st, "dk.yaml", MODEL_M1_HEAD "    heads: 32\n    layers: 40\n",
		     CATALOG_ERR_DUPLICATE,
		     "dk.yaml:9:5: duplicate key 'layers' in model 'm1', first given at line 3, column 5");
}

static void test_err_unreadable(void **st)
{
	struct state *s = *st;
	int rc = catalog_load(s->cat, "/nonexistent/catalog.yaml", s->err, sizeof(s->err));

	assert_int_equal(rc, CATALOG_ERR_IO);
	assert_string_equal(s->err,
			    "/nonexistent/catalog.yaml: cannot open: No such file or directory");
	rc = catalog_load(s->cat, "/", s->err, sizeof(s->err));
	assert_int_equal(rc, CATALOG_ERR_IO);
	assert_string_equal(s->err, "/: cannot read: Is a directory");
	assert_int_equal(catalog_file_count(s->cat), 0);
}

static void test_err_small_buffer_and_names(void **st)
{
	struct state *s = *st;
	char tiny[12];

	/* Messages are cut, never overflow, and the code still tells what went wrong. */
	assert_int_equal(catalog_load_string(s->cat, "z.yaml", MODEL_M1_HEAD "    heads: 0\n",
					     tiny, sizeof(tiny)),
			 CATALOG_ERR_VALUE);
	assert_string_equal(tiny, "z.yaml:8:12");
	assert_int_equal(catalog_load_string(s->cat, "z.yaml", MODEL_M1_HEAD "    heads: 0\n",
					     NULL, 0),
			 CATALOG_ERR_VALUE);
	assert_string_equal(catalog_strerror(CATALOG_ERR_DUPLICATE), "name or alias defined twice");
	/* A second YAML document is refused rather than silently ignored. */
	expect_error(s, "two.yaml", GPU_G1 "---\nmodels: []\n", CATALOG_ERR_SYNTAX,
		     "two.yaml:10:1: only one YAML document is allowed in this file");
}

static void test_empty_file(void **st)
{
	struct state *s = *st;

	assert_int_equal(catalog_load_string(s->cat, "empty.yaml", "", s->err, sizeof(s->err)),
			 CATALOG_OK);
	assert_int_equal(catalog_load_string(s->cat, "c.yaml", "# nothing\ngpus:\nmodels: []\n",
					     s->err, sizeof(s->err)),
			 CATALOG_OK);
	assert_int_equal(catalog_gpu_count(s->cat), 0);
	assert_int_equal(catalog_file_count(s->cat), 2);
}

/*
 * fuzz_catalog found these (tests/fuzz): the catalog admits architecture
 * counts up to INT_MAX, and parameter counting added two of them as int
 * (experts + shared_experts wrapped to -2, a negative MoE layer), and MLA's
 * head_dim = qk_head_dim + qk_rope_dim overflowed at load time.
 */
static void test_fuzz_moe_counts_at_int_max(void **st)
{
	struct state *s = *st;
	const struct adv_model *m;
	struct adv_params p;
	/* Non-gated MLP of one expert: 2 * h * F_e = 2 * 4096 * 1024. */
	const double expert = 2.0 * 4096 * 1024;
	double want;

	assert_int_equal(catalog_load_string(s->cat, "big.yaml",
					     MODEL_M1_HEAD "    heads: 32\n"
					     "    moe: { experts: 65536, top_k: 1, "
					     "expert_ffn_hidden: 1024, shared_experts: 2147483647 }\n",
					     s->err, sizeof(s->err)),
			 CATALOG_OK);
	m = catalog_find_model(s->cat, "m1");
	assert_non_null(m);
	catalog_model_params(m, &p);
	/*
	 * 65536 routed (the most the catalog takes) + (2^31 - 1) shared
	 * experts, a sum past INT_MAX, and a router of h * 65536 per MoE
	 * layer; attention and norms (~7e7) are within the 1e-6 tolerance.
	 */
	want = (65536.0 + 2147483647.0) * expert + 4096.0 * 65536.0;
	assert_true(p.per_layer_moe > 0);
	assert_true(fabs(p.per_layer_moe - want) <= 1e-6 * want);
	assert_true(p.total > 0 && p.active > 0 && p.active <= p.total);
}

static void test_fuzz_mla_head_dim_overflow(void **st)
{
	expect_error(*st, "mla.yaml",
		     MODEL_M1_HEAD "    heads: 32\n"
		     "    mla: { kv_lora_rank: 512, qk_rope_dim: 1, qk_head_dim: 2147483647, "
		     "v_head_dim: 128 }\n",
		     CATALOG_ERR_VALUE,
		     "mla.yaml:9:10: 'qk_head_dim' + 'qk_rope_dim' of 'mla' (2147483647 + 1) is too large");
}

/*
 * fuzz regression (tests/fuzz/regress/fuzz_catalog/experts-int-max): the
 * planner scans expert-parallel sizes up to the expert count, and with
 * 2^31 - 1 experts its loop overflowed after two billion steps.  The catalog
 * bounds experts and layers far above any real model instead.
 */
static void test_architecture_bounds(void **st)
{
	expect_error(*st, "experts.yaml",
		     MODEL_M1_HEAD "    heads: 32\n"
		     "    moe: { experts: 2147483647, top_k: 8, expert_ffn_hidden: 2048 }\n",
		     CATALOG_ERR_VALUE,
		     "experts.yaml:9:21: 'experts' must be between 1 and 65536, got 2147483647");
}

/* Lookups from many threads at once see the same entries (run under TSan/helgrind too). */
static void *lookup_thread(void *arg)
{
	const catalog_t *cat = arg;
	long bad = 0;

	for (int i = 0; i < 2000; i++) {
		if (catalog_find_gpu(cat, "H100") != catalog_find_gpu(cat, "h100-sxm"))
			bad++;
		if (!catalog_find_model(cat, "deepseek-ai/DeepSeek-V3"))
			bad++;
	}
	return (void *)bad;
}

static void test_concurrent_lookups(void **st)
{
	struct state *s = *st;
	pthread_t t[4];

	assert_int_equal(catalog_load(s->cat, SHIPPED, s->err, sizeof(s->err)), CATALOG_OK);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, lookup_thread, s->cat), 0);
	for (int i = 0; i < 4; i++) {
		void *bad;

		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_null(bad);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_shipped_catalog, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shipped_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_case_insensitive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_two_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_across_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_alias_across_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_shipped_twice_is_duplicate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_syntax, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_syntax_tab, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_unknown_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_unknown_top_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_missing_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_missing_gpu_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_wrong_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_wrong_type_quoted_and_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_out_of_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_weights_dtype, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_zero_heads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_negative_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_kv_heads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_hidden_not_divisible, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_moe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_duplicate_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_duplicate_alias, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_duplicate_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_err_small_buffer_and_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_lookups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuzz_moe_counts_at_int_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuzz_mla_head_dim_overflow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_architecture_bounds, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
