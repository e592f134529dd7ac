/*
 * fuzz_catalog.c - libFuzzer target for the catalog YAML loader
 * (catalog_load_string, common/config/catalog.c + yamlutil.c).
 *
 * Beyond "no crash, no leak, no UB" it checks the loader's contract
 * (catalog.h): a failed load names the input in its message and leaves the
 * catalog as it was, and loading the same names twice is refused.  Every
 * model of an accepted catalog has its parameters computed and every name
 * and alias found again (also through modelname_match, whose word
 * matching reads the fuzzed names, alone and with suffixes added), and the
 * engine checks a few jobs of the first
 * models on the first GPUs (engine_check.h).
 */
#include <math.h>
#include <stdio.h>

#include "config/catalog.h"
#include "config/modelname.h"
#include "config/policy.h"
#include "engine_check.h"
#include "fuzz.h"

static void check_loaded(const catalog_t *cat)
{
	for (size_t i = 0; i < catalog_gpu_count(cat); i++) {
		const struct adv_gpu *g = catalog_gpu_at(cat, i);

		FUZZ_ASSERT(catalog_find_gpu(cat, g->name) == g);
		for (size_t a = 0; a < g->n_aliases; a++)
			FUZZ_ASSERT(catalog_find_gpu(cat, g->aliases[a]) == g);
	}
	for (size_t i = 0; i < catalog_model_count(cat); i++) {
		const struct adv_model *m = catalog_model_at(cat, i);
		struct adv_params p;

		struct catalog_match mt;
		char suffixed[ADV_NAME_MAX + 32];

		FUZZ_ASSERT(catalog_find_model(cat, m->name) == m);
		FUZZ_ASSERT(modelname_match(cat, m->name, &mt) && mt.model == m && mt.exact);
		for (size_t a = 0; a < m->n_aliases; a++)
			FUZZ_ASSERT(catalog_find_model(cat, m->aliases[a]) == m);
		/* Another model may read the same words: then none matches. */
		snprintf(suffixed, sizeof(suffixed), "org/%s-Instruct-GPTQ-Int4", m->name);
		if (modelname_match(cat, suffixed, &mt))
			FUZZ_ASSERT(mt.model != NULL);
		catalog_model_params(m, &p);
		FUZZ_ASSERT(!isnan(p.total) && p.total >= 0);
		FUZZ_ASSERT(p.active <= p.total * (1 + 1e-9));
	}
}

static void check_engine(const catalog_t *cat)
{
	static struct adv_policy pol;
	size_t ng = catalog_gpu_count(cat), nm = catalog_model_count(cat);

	policy_defaults(&pol);
	for (size_t i = 0; i < nm && i < 3; i++) {
		const char *model = catalog_model_at(cat, i)->name;

		for (size_t j = 0; j < (ng ? ng : 1) && j < 2; j++) {
			const struct adv_gpu *g = ng ? catalog_gpu_at(cat, j) : NULL;
			int gpn = g && g->gpus_per_node < 1024 ? g->gpus_per_node : 8;

			fuzz_engine_once(cat, &pol, model, g ? g->name : "h100", gpn, "", NULL, NULL);
			fuzz_engine_once(cat, &pol, model, g ? g->name : "h100", 4 * gpn, "",
					 "tp2,pp2", "1h");
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	catalog_t *cat = catalog_create();
	char err[ADV_ERR_MAX];
	size_t ng, nm;
	int rc;

	FUZZ_ASSERT(cat);
	rc = catalog_load_string(cat, "fuzz.yaml", text, err, sizeof(err));
	if (rc != CATALOG_OK) {
		FUZZ_ASSERT(fuzz_err_ok(err, sizeof(err)));
		FUZZ_ASSERT(rc == CATALOG_ERR_NOMEM || strncmp(err, "fuzz.yaml", 9) == 0);
		FUZZ_ASSERT(catalog_gpu_count(cat) == 0 && catalog_model_count(cat) == 0);
	}
	check_loaded(cat);
	check_engine(cat);
	ng = catalog_gpu_count(cat);
	nm = catalog_model_count(cat);

	/* The same file again: every name is now a duplicate. */
	rc = catalog_load_string(cat, "again.yaml", text, err, sizeof(err));
	if (rc != CATALOG_OK) {
		FUZZ_ASSERT(fuzz_err_ok(err, sizeof(err)));
		FUZZ_ASSERT(catalog_gpu_count(cat) == ng && catalog_model_count(cat) == nm);
	} else {
		FUZZ_ASSERT(ng + nm == 0);
	}
	check_loaded(cat);
	catalog_destroy(cat);
	free(text);
	return 0;
}
