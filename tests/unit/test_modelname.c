/*
 * test_modelname.c - model ids and paths matched to catalog models by what
 * they name (common/config/modelname.c, issue 28): the words a name is
 * compared by, the suffixes set aside (roles, dates, quantizations), and
 * the names that must not match (another size, version or variant, a
 * name two models fit).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/catalog.h"
#include "config/modelname.h"

#define SHIPPED SRCDIR "/etc/catalog.yaml"

static int load(void **st)
{
	catalog_t *cat = catalog_create();
	char err[ADV_ERR_MAX];

	if (!cat || catalog_load(cat, SHIPPED, err, sizeof(err)) != CATALOG_OK) {
		print_error("%s\n", err);
		catalog_destroy(cat);
		return -1;
	}
	*st = cat;
	return 0;
}

static int unload(void **st)
{
	catalog_destroy(*st);
	return 0;
}

static void key_is(const char *name, const char *want)
{
	char k[400];

	modelname_key(name, k, sizeof(k), NULL);
	if (strcmp(k, want))
		print_error("%s: key '%s', want '%s'\n", name, k, want);
	assert_string_equal(k, want);
}

static void test_keys(void **st)
{
	key_is("Llama-3.1-70B", "llama 3 1 70b");
	key_is("llama3_1_70b", "llama 3 1 70b");
	key_is("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama 3 1 70b");
	key_is("/fsx/models/Meta-Llama-3.1-70B-Instruct/", "llama 3 1 70b");
	/* The Hugging Face cache: models--ORG--NAME/snapshots/REVISION. */
	key_is("/scratch/hf/hub/models--Qwen--Qwen2.5-7B-Instruct/snapshots/a09a3545", "qwen 2 5 7b");
	key_is("~/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B", "llama 3 1 8b");
	key_is("/x/models--/y", "y");
	key_is("/x/models--org--", "");
	key_is("Qwen/Qwen2.5-0.5B-Instruct-AWQ", "qwen 2 5 0.5b");
	key_is("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "qwen 3 30b a 3b");
	key_is("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral 8x 7b v 0 1");
	key_is("google/gemma-2-27b-it", "gemma 2 27b");
	key_is("deepseek-ai/DeepSeek-R1-0528", "deepseek r 1");
	/* The frameworks' spellings of sizes and versions (word_norm). */
	key_is("qwen25_1p5b", "qwen 2 5 1.5b");
	key_is("qwen25_500m", "qwen 2 5 0.5b");
	key_is("qwen3_600m", "qwen 3 0.6b");
	key_is("qwen2_5_0_5b_instruct", "qwen 2 5 0.5b");
	key_is("llama32_1b", "llama 3 2 1b");
	key_is("llama3_1_8b", "llama 3 1 8b");
	key_is("gpt2_125m", "gpt 2 0.125b");
	key_is("x-1000m", "x 1b");
	key_is("x-99m", "x 99m");
	key_is("Llama-3.0-8B", "llama 3 0 8b");
	key_is("llama333_8b", "llama 333 8b");
	key_is("m-0", "m 0");
	/* The role of "Meta" only before a Llama. */
	key_is("meta-opt-13b", "meta opt 13b");
	/* A local copy named after the Hub id with '_' for '/': the
	 * organisation before its own family only. */
	key_is("/models/meta-llama_Llama-3.1-8B-Instruct", "llama 3 1 8b");
	key_is("/models/meta-llama_Meta-Llama-3-70B", "llama 3 70b");
	key_is("Qwen_Qwen2.5-7B-Instruct", "qwen 2 5 7b");
	key_is("google_gemma-2-9b-it", "gemma 2 9b");
	key_is("deepseek-ai_DeepSeek-V2-Lite", "deepseek v 2 lite");
	key_is("mistralai_Mixtral-8x7B-v0.1", "mixtral 8x 7b v 0 1");
	key_is("google_t5-11b", "google t 5 11b");
	key_is("Qwen-7B", "qwen 7b");
	key_is("openai", "openai");
	/* A first word is never a suffix. */
	key_is("Instruct-7B", "instruct 7b");
	/* Not read: a URL, empty, a qualifier without a quantization. */
	key_is("s3://bucket/Llama-3.1-8B", "");
	key_is("", "");
	key_is("llama3-8b-dynamic", "");
}

static void test_suffixes(void **st)
{
	struct catalog_match mt;
	char k[400];

	assert_true(modelname_key("meta-llama/Llama-3.1-405B-Instruct-FP8", k, sizeof(k), &mt));
	assert_int_equal(mt.quant, CATALOG_QUANT_FP8);
	assert_string_equal(mt.quant_text, "FP8");
	assert_string_equal(mt.variant, "Instruct");
	assert_true(modelname_key("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int8", k, sizeof(k), &mt));
	assert_int_equal(mt.quant, CATALOG_QUANT_INT8);
	assert_false(mt.quant_bits_assumed);
	assert_string_equal(mt.quant_text, "GPTQ-Int8");
	assert_true(modelname_key("TheBloke/Llama-3-8B-GPTQ", k, sizeof(k), &mt));
	assert_int_equal(mt.quant, CATALOG_QUANT_INT4);
	assert_true(mt.quant_bits_assumed);
	assert_true(modelname_key("unsloth/Llama-3.3-70B-Instruct-bnb-4bit", k, sizeof(k), &mt));
	assert_int_equal(mt.quant, CATALOG_QUANT_INT4);
	assert_true(modelname_key("x/Llama-3.1-8B-bnb", k, sizeof(k), &mt));
	assert_int_equal(mt.quant, CATALOG_QUANT_OTHER);
	assert_true(modelname_key("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic", k, sizeof(k),
				     &mt));
	assert_int_equal(mt.quant, CATALOG_QUANT_FP8);
	assert_string_equal(mt.quant_text, "FP8-dynamic");
	assert_true(modelname_key("mistralai/Mistral-Nemo-Instruct-2407", k, sizeof(k), &mt));
	assert_string_equal(mt.date, "2407");
	assert_int_equal(mt.quant, CATALOG_QUANT_NONE);
	/* Not dates: 2048 (no month 20, no year 2020 on), 1300. */
	key_is("gpt-2048", "gpt 2048");
	key_is("m-7b-1300", "m 7b 1300");
	assert_string_equal(modelname_quant(CATALOG_QUANT_MXFP4), "mxfp4");
	assert_string_equal(modelname_quant(CATALOG_QUANT_COUNT), "");
}

static const char *match(const catalog_t *cat, const char *name, struct catalog_match *mt)
{
	return modelname_match(cat, name, mt) ? mt->model->name : NULL;
}

static void matches(const catalog_t *cat, const char *name, const char *want)
{
	struct catalog_match mt;
	const char *got = match(cat, name, &mt);

	if (!got || strcmp(got, want))
		print_error("%s: matched %s, want %s\n", name, got ? got : "nothing", want);
	assert_non_null(got);
	assert_string_equal(got, want);
}

static void no_match(const catalog_t *cat, const char *name)
{
	struct catalog_match mt;
	const char *got = match(cat, name, &mt);

	if (got)
		print_error("%s: matched %s, want nothing\n", name, got);
	assert_null(got);
}

static void test_matches(void **st)
{
	const catalog_t *cat = *st;
	struct catalog_match mt;

	matches(cat, "Llama-3.1-70B", "llama3.1-70b");
	matches(cat, "llama3_1_70b", "llama3.1-70b");
	matches(cat, "Meta-Llama-3.1-70B-Instruct", "llama3.1-70b");
	matches(cat, "unsloth/Llama-3.3-70B-Instruct", "llama3.1-70b");
	matches(cat, "Llama-3.1-405B", "llama3-405b");
	matches(cat, "meta-llama/Llama-3.1-405B-Instruct-FP8", "llama3-405b");
	matches(cat, "meta-llama/Meta-Llama-3-8B", "llama3-8b");
	matches(cat, "LLAMA3_8B", "llama3-8b");
	matches(cat, "DeepSeek-R1-0528", "deepseek-v3");
	matches(cat, "deepseek-ai/DeepSeek-V3-0324", "deepseek-v3");
	matches(cat, "Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b");
	matches(cat, "gemma-2-27b-it", "gemma2-27b");
	matches(cat, "Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4", "qwen2.5-72b");
	matches(cat, "meta-llama/Llama-2-70b-chat-hf", "llama2-70b");
	matches(cat, "Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "qwen3-30b-a3b");
	matches(cat, "openai/gpt-oss-20b", "gpt-oss-20b");
	matches(cat, "google/gemma-3-27b-it", "gemma3-27b");
	matches(cat, "mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo-12b");
	matches(cat, "deepseek-ai/DeepSeek-V2-Lite-Chat", "deepseek-v2-lite");
	matches(cat, "microsoft/Phi-3.5-mini-instruct", "phi3-mini-128k");
	matches(cat, "mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3");
	matches(cat, "mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b");
	/* NeMo recipe and torchtune builder names. */
	matches(cat, "qwen25_1p5b", "qwen2.5-1.5b");
	matches(cat, "qwen25_500m", "qwen2.5-0.5b");
	matches(cat, "qwen25_72b", "qwen2.5-72b");
	matches(cat, "qwen2_5_0_5b_instruct", "qwen2.5-0.5b");
	matches(cat, "llama32_3b", "llama3.2-3b");
	matches(cat, "deepseek_v2_lite", "deepseek-v2-lite");
	matches(cat, "mistral_nemo_12b", "mistral-nemo-12b");
	matches(cat, "gemma2_9b", "gemma2-9b");
	/* The name or an alias itself: exact. */
	assert_non_null(match(cat, "meta-llama/Llama-3.1-8B", &mt));
	assert_true(mt.exact);
	assert_non_null(match(cat, "Llama-3.1-8B-Instruct", &mt));
	assert_false(mt.exact);
}

static void test_no_false_match(void **st)
{
	const catalog_t *cat = *st;

	/* Another size, version or family. */
	no_match(cat, "Llama-3.1-7B");
	no_match(cat, "Llama-3.2-70B");
	no_match(cat, "CodeLlama-70b-hf");
	no_match(cat, "Llama-2-34b-hf");
	no_match(cat, "Qwen2-7B");
	no_match(cat, "Qwen2.5-Coder-7B-Instruct");
	no_match(cat, "Mistral-7B-Instruct-v0.2");
	no_match(cat, "mistralai/Mistral-Small-3.1-24B-Instruct-2503");
	no_match(cat, "Mixtral-8x7B-v0.2");
	no_match(cat, "Qwen3-30B-A3B-Base-Coder");
	no_match(cat, "microsoft/Phi-3-mini-4k-instruct");
	no_match(cat, "deepseek-ai/DeepSeek-V2.5");
	no_match(cat, "Qwen/Qwen3-8B-Base-0.5B");
	/* Fine-tunes of another make, distillations: not the same model by name. */
	no_match(cat, "nvidia/Llama-3.1-Nemotron-70B-Instruct");
	no_match(cat, "deepseek-ai/DeepSeek-R1-Distill-Llama-70B");
	/* Paths that name no model, URLs. */
	no_match(cat, "/lustre/ckpts/sft-run-42/final");
	no_match(cat, "s3://bucket/meta-llama/Llama-3.1-8B");
	no_match(cat, "");
	no_match(cat, NULL);
}

/* The matcher is only sure when no two shipped models read the same
 * words: each name and alias reads its own model's. */
static void test_shipped_keys_unique(void **st)
{
	const catalog_t *cat = *st;

	for (size_t i = 0; i < catalog_model_count(cat); i++) {
		const struct adv_model *m = catalog_model_at(cat, i);
		struct catalog_match mt;
		char variant[ADV_NAME_MAX + 40];

		assert_true(modelname_match(cat, m->name, &mt));
		assert_ptr_equal(mt.model, m);
		for (size_t a = 0; a < m->n_aliases; a++) {
			snprintf(variant, sizeof(variant), "%s-Instruct", m->aliases[a]);
			if (!modelname_match(cat, variant, &mt) || mt.model != m)
				print_error("%s: does not match %s alone\n", variant, m->name);
			assert_true(modelname_match(cat, variant, &mt));
			assert_ptr_equal(mt.model, m);
		}
	}
}

/* Hostile names: long, many words, separators only. */
static void test_bounds(void **st)
{
	const catalog_t *cat = *st;
	char longname[4096], k[64];

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	no_match(cat, longname);
	memset(longname, '-', 200);
	longname[200] = '\0';
	no_match(cat, longname);
	no_match(cat, "a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-llama3-8b");
	no_match(cat, "////");
	/* A key that does not fit is no key (a cut one could read as another
	 * model's), and the buffer is never overrun. */
	assert_false(modelname_key("Meta-Llama-3.1-70B-Instruct-with-many-more-words-here", k, 8,
				      NULL));
	assert_string_equal(k, "");
	assert_true(modelname_key("llama3-8b", k, 12, NULL));
	assert_string_equal(k, "llama 3 8b");
	/* 160 characters of letter-digit pairs: 320 with the spaces, which
	 * the matcher's own buffers hold. */
	memset(longname, 0, sizeof(longname));
	for (int i = 0; i < 80; i++)
		memcpy(longname + 2 * i, "a1", 2);
	assert_false(modelname_match(cat, longname, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_suffixes),
		cmocka_unit_test(test_matches),
		cmocka_unit_test(test_no_false_match),
		cmocka_unit_test(test_shipped_keys_unique),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, load, unload);
}
