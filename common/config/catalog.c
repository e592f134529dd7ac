/*
 * catalog.c - the GPU and model catalog, loaded from catalog.yaml files.
 *
 * Implements the catalog half of issue 2 and the catalog.yaml schema of
 * design.md (documented in advisor-catalog.yaml(5)).  Each file is parsed
 * with libyaml's document API into a private catalog of its own, checked
 * completely (types, ranges, impossible architectures, names and aliases
 * defined twice in this file or in an earlier one) and only then merged,
 * so a bad file leaves the catalog exactly as it was.  After loading
 * nothing is written any more, which is what makes concurrent lookups from
 * the daemon's threads safe without a lock.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog.h"
#include "util.h"
#include "yamlutil.h"

_Static_assert((int)CATALOG_ERR_IO == (int)YAMLUTIL_ERR_IO, "error codes must agree");
_Static_assert((int)CATALOG_ERR_SYNTAX == (int)YAMLUTIL_ERR_SYNTAX, "error codes must agree");
_Static_assert((int)CATALOG_ERR_SCHEMA == (int)YAMLUTIL_ERR_SCHEMA, "error codes must agree");
_Static_assert((int)CATALOG_ERR_VALUE == (int)YAMLUTIL_ERR_VALUE, "error codes must agree");
_Static_assert((int)CATALOG_ERR_DUPLICATE == (int)YAMLUTIL_ERR_DUPLICATE, "error codes must agree");
_Static_assert((int)CATALOG_ERR_NOMEM == (int)YAMLUTIL_ERR_NOMEM, "error codes must agree");

/* Inter-node bandwidth per GPU when the catalog does not say: one 400 Gb/s NDR rail. */
#define CATALOG_DEFAULT_NETWORK_GBS 50.0
/*
 * Achieved fraction of the dense tensor peak when a GPU's entry does not
 * say (estimate.c, "Compute"): large bf16 GEMMs in cuBLAS reach 70-80% of
 * peak on A100 and H100 (NVIDIA's cuBLAS and Transformer Engine
 * benchmarks); fp8 GEMMs about half of the fp8 peak once the casts and
 * scaling are counted (NeMo's fp8 tables reach 1.3-1.5x their bf16 rows,
 * not 2x); FlashAttention-2 runs at 50-73% of peak on A100 (Dao 2023) and
 * 35% on H100 (Shah et al. 2024, FlashAttention-3, section 1), so 45% is
 * the middle.
 */
#define CATALOG_DEFAULT_GEMM_EFFICIENCY 0.70
#define CATALOG_DEFAULT_FP8_GEMM_EFFICIENCY 0.52
#define CATALOG_DEFAULT_ATTENTION_EFFICIENCY 0.45
/* Longest description of an entry used in messages ("model 'llama3-70b'"). */
#define CATALOG_WHAT_MAX (ADV_NAME_MAX + 32)

/* One name or alias, for lookups and for reporting where a duplicate came from. */
struct catalog_name {
	const char *name;   /* points into the entry */
	const char *owner;  /* the entry's canonical name */
	bool alias;
	const void *entry;
	const char *file;
	int line, column;
};

struct catalog_names {
	struct catalog_name *v;
	size_t n, cap;
};

struct catalog {
	struct adv_gpu **gpus;
	size_t n_gpus;
	struct adv_model **models;
	size_t n_models;
	struct catalog_names gpu_names;
	struct catalog_names model_names;
	char **files;
	size_t n_files;
};

/* What one file adds, built completely before it is merged. */
struct catalog_load {
	struct yamlutil_doc doc;
	const catalog_t *cat;     /* what is already loaded, for duplicates */
	catalog_t add;
	const char *file;         /* owned by add.files[0] */
};

static const char *const catalog_top_keys[] = { "gpus", "models", NULL };

static const char *const catalog_gpu_keys[] = {
	"name", "aliases", "vendor", "memory_gib", "memory_bandwidth_tbs",
	"bf16_tflops", "fp8_tflops", "fp32_tflops", "interconnect_gbs",
	"network_gbs", "gpus_per_node", "tdp_w", "price_per_hour_usd",
	"gemm_efficiency", "fp8_gemm_efficiency", "attention_efficiency", NULL
};
static const char *const catalog_gpu_required[] = {
	"name", "memory_gib", "bf16_tflops", "gpus_per_node", "tdp_w",
	"price_per_hour_usd", NULL
};

static const char *const catalog_model_keys[] = {
	"name", "aliases", "params_b", "layers", "hidden", "heads", "kv_heads",
	"head_dim", "ffn_hidden", "vocab", "gated_mlp", "norm", "tied_embeddings",
	"max_seq", "sliding_window", "sliding_layers", "moe", "mla", "weights_dtype", NULL
};
static const char *const catalog_model_required[] = {
	"name", "layers", "hidden", "heads", "ffn_hidden", "vocab", "max_seq", NULL
};

/*
 * The engine and the planner scan pipeline sizes up to the layer count and
 * expert-parallel sizes up to the expert count: bounds far above any real
 * model (Llama 3 405B has 126 layers, DeepSeek-V3 256 experts) keep every
 * check bounded in time and the planner's loops within an int.
 */
#define CATALOG_MAX_LAYERS 100000
#define CATALOG_MAX_EXPERTS 65536

static const char *const catalog_moe_keys[] = {
	"experts", "top_k", "expert_ffn_hidden", "shared_experts", "dense_layers", NULL
};
static const char *const catalog_moe_required[] = {
	"experts", "top_k", "expert_ffn_hidden", NULL
};

static const char *const catalog_mla_keys[] = {
	"q_lora_rank", "kv_lora_rank", "qk_rope_dim", "qk_head_dim", "v_head_dim", NULL
};
static const char *const catalog_mla_required[] = {
	"kv_lora_rank", "qk_rope_dim", "qk_head_dim", "v_head_dim", NULL
};

/* ---- memory ------------------------------------------------------------ */

static void catalog_gpu_free(struct adv_gpu *g)
{
	if (!g)
		return;
	yamlutil_strings_free(g->aliases, g->n_aliases);
	free(g);
}

static void catalog_model_free(struct adv_model *m)
{
	if (!m)
		return;
	yamlutil_strings_free(m->aliases, m->n_aliases);
	free(m);
}

static void catalog_clear(catalog_t *c)
{
	for (size_t i = 0; i < c->n_gpus; i++)
		catalog_gpu_free(c->gpus[i]);
	for (size_t i = 0; i < c->n_models; i++)
		catalog_model_free(c->models[i]);
	for (size_t i = 0; i < c->n_files; i++)
		free(c->files[i]);
	free(c->gpus);
	free(c->models);
	free(c->gpu_names.v);
	free(c->model_names.v);
	free(c->files);
	memset(c, 0, sizeof(*c));
}

catalog_t *catalog_create(void)
{
	return calloc(1, sizeof(catalog_t));
}

void catalog_destroy(catalog_t *cat)
{
	if (!cat)
		return;
	catalog_clear(cat);
	free(cat);
}

/* Grows an array of n elements of size sz to hold at least want. */
static int catalog_reserve(void **v, size_t *cap, size_t want, size_t sz)
{
	size_t c = *cap ? *cap : 8;
	void *nv;

	if (want <= *cap)
		return 0;
	while (c < want)
		c *= 2;
	nv = realloc(*v, c * sz);
	if (!nv)
		return -1;
	*v = nv;
	*cap = c;
	return 0;
}

static int catalog_push(void ***v, size_t *n, void *item)
{
	void **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -1;
	nv[(*n)++] = item;
	*v = nv;
	return 0;
}

/* ---- names ------------------------------------------------------------- */

static const struct catalog_name *catalog_name_find(const struct catalog_names *names,
						    const char *s)
{
	for (size_t i = 0; names && i < names->n; i++)
		if (!strcasecmp(names->v[i].name, s))
			return &names->v[i];
	return NULL;
}

/*
 * Registers one name or alias of an entry, refusing one that this file or
 * an earlier one already defined (case-insensitively).
 */
static int catalog_name_add(struct catalog_load *ld, bool gpu, const yaml_node_t *at,
			    const struct catalog_name *nm)
{
	struct catalog_names *mine = gpu ? &ld->add.gpu_names : &ld->add.model_names;
	const struct catalog_names *old = gpu ? &ld->cat->gpu_names : &ld->cat->model_names;
	const struct catalog_name *first = catalog_name_find(old, nm->name);

	if (!first)
		first = catalog_name_find(mine, nm->name);
	if (first) {
		char as[ADV_NAME_MAX + 32] = "";

		if (first->alias)
			adv_snprintf(as, sizeof(as), " as an alias of '%s'", first->owner);
		return yamlutil_fail(&ld->doc, at, YAMLUTIL_ERR_DUPLICATE,
				     "duplicate %s %s '%s', first defined at %s:%d:%d%s",
				     gpu ? "GPU" : "model", nm->alias ? "alias" : "name",
				     nm->name, first->file, first->line, first->column, as);
	}
	if (catalog_reserve((void **)&mine->v, &mine->cap, mine->n + 1, sizeof(*mine->v)))
		return yamlutil_fail(&ld->doc, at, YAMLUTIL_ERR_NOMEM, "out of memory");
	mine->v[mine->n++] = *nm;
	return YAMLUTIL_OK;
}

/* The name and every alias of an entry, each with the position it was written at. */
static int catalog_names_add(struct catalog_load *ld, bool gpu, const yaml_node_t *map,
			     const void *entry, const char *name, char **aliases, size_t n_aliases)
{
	yaml_node_t *name_node = yamlutil_get(&ld->doc, map, "name");
	yaml_node_t *seq = yamlutil_get(&ld->doc, map, "aliases");
	struct catalog_name nm = { .name = name, .owner = name, .entry = entry, .file = ld->file };
	int rc;

	yamlutil_position(name_node, &nm.line, &nm.column);
	rc = catalog_name_add(ld, gpu, name_node, &nm);
	for (size_t i = 0; !rc && i < n_aliases; i++) {
		yaml_node_t *at = yamlutil_node(&ld->doc, seq->data.sequence.items.start[i]);

		nm.name = aliases[i];
		nm.alias = true;
		yamlutil_position(at, &nm.line, &nm.column);
		rc = catalog_name_add(ld, gpu, at, &nm);
	}
	return rc;
}

/* ---- entries ----------------------------------------------------------- */

/* "model 'x'" when the entry's name is readable, else "model #3 in 'models'". */
static void catalog_what(struct catalog_load *ld, const yaml_node_t *map, const char *kind,
			 const char *section, size_t index, char *buf, size_t len)
{
	const char *name = yamlutil_scalar(yamlutil_get(&ld->doc, map, "name"));

	if (name && *name && strlen(name) < ADV_NAME_MAX)
		adv_snprintf(buf, len, "%s '%s'", kind, name);
	else
		adv_snprintf(buf, len, "%s #%zu in '%s'", kind, index + 1, section);
}

static int catalog_gpu_numbers(struct yamlutil_doc *d, const yaml_node_t *map, struct adv_gpu *g)
{
	int rc;

	if ((rc = yamlutil_double(d, map, "memory_gib", 0, true, HUGE_VAL, &g->memory_gib)) ||
	    (rc = yamlutil_double(d, map, "memory_bandwidth_tbs", 0, false, HUGE_VAL,
				  &g->memory_bandwidth_tbs)) ||
	    (rc = yamlutil_double(d, map, "bf16_tflops", 0, true, HUGE_VAL, &g->bf16_tflops)) ||
	    (rc = yamlutil_double(d, map, "fp8_tflops", 0, false, HUGE_VAL, &g->fp8_tflops)) ||
	    (rc = yamlutil_double(d, map, "fp32_tflops", 0, false, HUGE_VAL, &g->fp32_tflops)) ||
	    (rc = yamlutil_double(d, map, "interconnect_gbs", 0, false, HUGE_VAL,
				  &g->interconnect_gbs)) ||
	    (rc = yamlutil_double(d, map, "network_gbs", 0, true, HUGE_VAL, &g->network_gbs)) ||
	    (rc = yamlutil_int(d, map, "gpus_per_node", 1, 4096, &g->gpus_per_node)) ||
	    (rc = yamlutil_double(d, map, "tdp_w", 0, true, HUGE_VAL, &g->tdp_w)) ||
	    (rc = yamlutil_double(d, map, "price_per_hour_usd", 0, false, HUGE_VAL,
				  &g->price_per_hour_usd)) ||
	    (rc = yamlutil_double(d, map, "gemm_efficiency", 0, true, 1, &g->gemm_efficiency)) ||
	    (rc = yamlutil_double(d, map, "fp8_gemm_efficiency", 0, true, 1,
				  &g->fp8_gemm_efficiency)) ||
	    (rc = yamlutil_double(d, map, "attention_efficiency", 0, true, 1,
				  &g->attention_efficiency)))
		return rc;
	return YAMLUTIL_OK;
}

static int catalog_gpu_parse(struct catalog_load *ld, const yaml_node_t *map, size_t index)
{
	struct yamlutil_doc *d = &ld->doc;
	char what[CATALOG_WHAT_MAX];
	struct adv_gpu *g;
	int rc;

	catalog_what(ld, map, "GPU", "gpus", index, what, sizeof(what));
	if ((rc = yamlutil_expect(d, map, YAML_MAPPING_NODE, what)) ||
	    (rc = yamlutil_check_keys(d, map, catalog_gpu_keys, catalog_gpu_required, what)))
		return rc;
	g = calloc(1, sizeof(*g));
	if (!g)
		return yamlutil_fail(d, map, YAMLUTIL_ERR_NOMEM, "out of memory");
	g->network_gbs = CATALOG_DEFAULT_NETWORK_GBS;
	g->gemm_efficiency = CATALOG_DEFAULT_GEMM_EFFICIENCY;
	g->fp8_gemm_efficiency = CATALOG_DEFAULT_FP8_GEMM_EFFICIENCY;
	g->attention_efficiency = CATALOG_DEFAULT_ATTENTION_EFFICIENCY;
	g->file = ld->file;
	yamlutil_position(yamlutil_get(d, map, "name"), &g->line, &g->column);
	if ((rc = yamlutil_string(d, map, "name", g->name, sizeof(g->name))) ||
	    (rc = yamlutil_strings(d, map, "aliases", ADV_NAME_MAX, &g->aliases, &g->n_aliases)) ||
	    (rc = yamlutil_string(d, map, "vendor", g->vendor, sizeof(g->vendor))) ||
	    (rc = catalog_gpu_numbers(d, map, g)) ||
	    (rc = catalog_names_add(ld, true, map, g, g->name, g->aliases, g->n_aliases))) {
		catalog_gpu_free(g);
		return rc;
	}
	if (catalog_push((void ***)&ld->add.gpus, &ld->add.n_gpus, g)) {
		catalog_gpu_free(g);
		return yamlutil_fail(d, map, YAMLUTIL_ERR_NOMEM, "out of memory");
	}
	return YAMLUTIL_OK;
}

static int catalog_norm_parse(struct yamlutil_doc *d, const yaml_node_t *map, enum adv_norm *out)
{
	yaml_node_t *v = yamlutil_get(d, map, "norm");
	const char *s = yamlutil_scalar(v);

	if (!v)
		return YAMLUTIL_OK;
	if (s && !strcasecmp(s, "rmsnorm"))
		*out = ADV_NORM_RMSNORM;
	else if (s && !strcasecmp(s, "layernorm"))
		*out = ADV_NORM_LAYERNORM;
	else if (s && !yamlutil_is_null(v))
		return yamlutil_fail(d, v, YAMLUTIL_ERR_VALUE,
				     "expected rmsnorm or layernorm for 'norm', got '%s'", s);
	else
		return yamlutil_fail(d, v, YAMLUTIL_ERR_SCHEMA,
				     "expected rmsnorm or layernorm for 'norm', got %s",
				     yamlutil_kind(v));
	return YAMLUTIL_OK;
}

/* weights_dtype: what the published checkpoint stores (bf16, fp16, fp8;
 * mxfp4: gpt-oss's MoE experts, config.json quantization_config
 * quant_method mxfp4, the rest bf16). */
static int catalog_weights_parse(struct yamlutil_doc *d, const yaml_node_t *map,
				 struct adv_model *m)
{
	yaml_node_t *v = yamlutil_get(d, map, "weights_dtype");
	const char *s = yamlutil_scalar(v);

	if (!v)
		return YAMLUTIL_OK;
	m->weights_fp8 = m->weights_mxfp4 = false;
	if (s && !strcasecmp(s, "fp8"))
		m->weights_fp8 = true;
	else if (s && !strcasecmp(s, "mxfp4"))
		m->weights_mxfp4 = true;
	else if (!(s && (!strcasecmp(s, "bf16") || !strcasecmp(s, "fp16"))))
		return yamlutil_fail(d, v, YAMLUTIL_ERR_VALUE,
				     "expected bf16, fp16, fp8 or mxfp4 for 'weights_dtype', got '%s'",
				     s ? s : yamlutil_kind(v));
	return YAMLUTIL_OK;
}

static int catalog_moe_parse(struct yamlutil_doc *d, const yaml_node_t *model,
			     struct adv_model *m, const char *what)
{
	yaml_node_t *map = yamlutil_get(d, model, "moe");
	char sub[CATALOG_WHAT_MAX + 16];
	int rc;

	if (!map)
		return YAMLUTIL_OK;
	adv_snprintf(sub, sizeof(sub), "'moe' of %s", what);
	if ((rc = yamlutil_expect(d, map, YAML_MAPPING_NODE, sub)) ||
	    (rc = yamlutil_check_keys(d, map, catalog_moe_keys, catalog_moe_required, sub)) ||
	    (rc = yamlutil_int(d, map, "experts", 1, CATALOG_MAX_EXPERTS, &m->moe.experts)) ||
	    (rc = yamlutil_int(d, map, "top_k", 1, INT_MAX, &m->moe.top_k)) ||
	    (rc = yamlutil_int(d, map, "expert_ffn_hidden", 1, INT_MAX, &m->moe.expert_ffn_hidden)) ||
	    (rc = yamlutil_int(d, map, "shared_experts", 0, INT_MAX, &m->moe.shared_experts)) ||
	    (rc = yamlutil_int(d, map, "dense_layers", 0, INT_MAX, &m->moe.dense_layers)))
		return rc;
	if (m->moe.top_k > m->moe.experts)
		return yamlutil_fail(d, yamlutil_get(d, map, "top_k"), YAMLUTIL_ERR_VALUE,
				     "'top_k' (%d) must not exceed 'experts' (%d)", m->moe.top_k,
				     m->moe.experts);
	if (m->moe.dense_layers >= m->layers)
		return yamlutil_fail(d, yamlutil_get(d, map, "dense_layers"), YAMLUTIL_ERR_VALUE,
				     "'dense_layers' (%d) must be less than 'layers' (%d)",
				     m->moe.dense_layers, m->layers);
	m->has_moe = true;
	return YAMLUTIL_OK;
}

static int catalog_mla_parse(struct yamlutil_doc *d, const yaml_node_t *model,
			     struct adv_model *m, const char *what)
{
	yaml_node_t *map = yamlutil_get(d, model, "mla");
	char sub[CATALOG_WHAT_MAX + 16];
	int rc;

	if (!map)
		return YAMLUTIL_OK;
	adv_snprintf(sub, sizeof(sub), "'mla' of %s", what);
	if ((rc = yamlutil_expect(d, map, YAML_MAPPING_NODE, sub)) ||
	    (rc = yamlutil_check_keys(d, map, catalog_mla_keys, catalog_mla_required, sub)) ||
	    (rc = yamlutil_int(d, map, "q_lora_rank", 0, INT_MAX, &m->mla.q_lora_rank)) ||
	    (rc = yamlutil_int(d, map, "kv_lora_rank", 1, INT_MAX, &m->mla.kv_lora_rank)) ||
	    (rc = yamlutil_int(d, map, "qk_rope_dim", 0, INT_MAX, &m->mla.qk_rope_dim)) ||
	    (rc = yamlutil_int(d, map, "qk_head_dim", 1, INT_MAX, &m->mla.qk_head_dim)) ||
	    (rc = yamlutil_int(d, map, "v_head_dim", 1, INT_MAX, &m->mla.v_head_dim)))
		return rc;
	m->has_mla = true;
	return YAMLUTIL_OK;
}

static int catalog_model_numbers(struct yamlutil_doc *d, const yaml_node_t *map,
				 struct adv_model *m)
{
	int rc;

	if ((rc = yamlutil_double(d, map, "params_b", 0, true, HUGE_VAL, &m->params_b)) ||
	    (rc = yamlutil_int(d, map, "layers", 1, CATALOG_MAX_LAYERS, &m->layers)) ||
	    (rc = yamlutil_int(d, map, "hidden", 1, INT_MAX, &m->hidden)) ||
	    (rc = yamlutil_int(d, map, "heads", 1, INT_MAX, &m->heads)) ||
	    (rc = yamlutil_int(d, map, "kv_heads", 1, INT_MAX, &m->kv_heads)) ||
	    (rc = yamlutil_int(d, map, "head_dim", 1, INT_MAX, &m->head_dim)) ||
	    (rc = yamlutil_int(d, map, "ffn_hidden", 1, INT_MAX, &m->ffn_hidden)) ||
	    (rc = yamlutil_int(d, map, "vocab", 1, INT_MAX, &m->vocab)) ||
	    (rc = yamlutil_int(d, map, "max_seq", 1, INT_MAX, &m->max_seq)) ||
	    (rc = yamlutil_int(d, map, "sliding_window", 1, INT_MAX, &m->sliding_window)) ||
	    (rc = yamlutil_int(d, map, "sliding_layers", 1, CATALOG_MAX_LAYERS, &m->sliding_layers)) ||
	    (rc = yamlutil_bool(d, map, "gated_mlp", &m->gated_mlp)) ||
	    (rc = yamlutil_bool(d, map, "tied_embeddings", &m->tied_embeddings)) ||
	    (rc = catalog_norm_parse(d, map, &m->norm)) ||
	    (rc = catalog_weights_parse(d, map, m)))
		return rc;
	return YAMLUTIL_OK;
}

/*
 * Shapes no implementation can build: grouped-query attention needs the
 * query heads to split evenly over the KV heads, and without an explicit
 * head_dim the hidden size must split evenly over the heads.
 */
static int catalog_model_shape(struct yamlutil_doc *d, const yaml_node_t *map,
			       struct adv_model *m)
{
	bool has_kv = yamlutil_get(d, map, "kv_heads") != NULL;
	bool has_hd = yamlutil_get(d, map, "head_dim") != NULL;

	if (!has_kv)
		m->kv_heads = m->heads;
	if (m->sliding_layers > m->layers)
		return yamlutil_fail(d, yamlutil_get(d, map, "sliding_layers"), YAMLUTIL_ERR_VALUE,
				     "'sliding_layers' (%d) must not exceed 'layers' (%d)",
				     m->sliding_layers, m->layers);
	if (m->sliding_layers > 0 && m->sliding_window <= 0)
		return yamlutil_fail(d, yamlutil_get(d, map, "sliding_layers"), YAMLUTIL_ERR_VALUE,
				     "'sliding_layers' needs 'sliding_window'");
	if (m->sliding_window > 0 && m->sliding_layers == 0)
		m->sliding_layers = m->layers;
	if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
		return yamlutil_fail(d, yamlutil_get(d, map, "kv_heads"), YAMLUTIL_ERR_VALUE,
				     "'kv_heads' (%d) must divide 'heads' (%d)", m->kv_heads,
				     m->heads);
	if (has_hd)
		return YAMLUTIL_OK;
	if (m->has_mla) {
		/* MLA attention scores use the non-rotary plus the rotary part. */
		if (m->mla.qk_head_dim > INT_MAX - m->mla.qk_rope_dim)
			return yamlutil_fail(d, yamlutil_get(d, map, "mla"), YAMLUTIL_ERR_VALUE,
					     "'qk_head_dim' + 'qk_rope_dim' of 'mla' (%d + %d) is "
					     "too large", m->mla.qk_head_dim, m->mla.qk_rope_dim);
		m->head_dim = m->mla.qk_head_dim + m->mla.qk_rope_dim;
		return YAMLUTIL_OK;
	}
	if (m->hidden % m->heads != 0)
		return yamlutil_fail(d, yamlutil_get(d, map, "heads"), YAMLUTIL_ERR_VALUE,
				     "'hidden' (%d) is not divisible by 'heads' (%d); give 'head_dim'",
				     m->hidden, m->heads);
	m->head_dim = m->hidden / m->heads;
	return YAMLUTIL_OK;
}

static int catalog_model_fill(struct catalog_load *ld, const yaml_node_t *map,
			      struct adv_model *m, const char *what)
{
	struct yamlutil_doc *d = &ld->doc;
	int rc;

	if ((rc = yamlutil_string(d, map, "name", m->name, sizeof(m->name))) ||
	    (rc = yamlutil_strings(d, map, "aliases", ADV_NAME_MAX, &m->aliases, &m->n_aliases)) ||
	    (rc = catalog_model_numbers(d, map, m)) ||
	    (rc = catalog_moe_parse(d, map, m, what)) ||
	    (rc = catalog_mla_parse(d, map, m, what)) ||
	    (rc = catalog_model_shape(d, map, m)))
		return rc;
	return catalog_names_add(ld, false, map, m, m->name, m->aliases, m->n_aliases);
}

static int catalog_model_parse(struct catalog_load *ld, const yaml_node_t *map, size_t index)
{
	struct yamlutil_doc *d = &ld->doc;
	char what[CATALOG_WHAT_MAX];
	struct adv_model *m;
	int rc;

	catalog_what(ld, map, "model", "models", index, what, sizeof(what));
	if ((rc = yamlutil_expect(d, map, YAML_MAPPING_NODE, what)) ||
	    (rc = yamlutil_check_keys(d, map, catalog_model_keys, catalog_model_required, what)))
		return rc;
	m = calloc(1, sizeof(*m));
	if (!m)
		return yamlutil_fail(d, map, YAMLUTIL_ERR_NOMEM, "out of memory");
	m->norm = ADV_NORM_RMSNORM;
	m->file = ld->file;
	yamlutil_position(yamlutil_get(d, map, "name"), &m->line, &m->column);
	rc = catalog_model_fill(ld, map, m, what);
	if (!rc && catalog_push((void ***)&ld->add.models, &ld->add.n_models, m))
		rc = yamlutil_fail(d, map, YAMLUTIL_ERR_NOMEM, "out of memory");
	if (rc)
		catalog_model_free(m);
	return rc;
}

/* Each item of the 'gpus' or 'models' list; an empty section adds nothing. */
static int catalog_section(struct catalog_load *ld, const yaml_node_t *root, const char *key,
			   int (*parse)(struct catalog_load *, const yaml_node_t *, size_t))
{
	yaml_node_t *seq = yamlutil_get(&ld->doc, root, key);
	char what[32];
	size_t i = 0;
	int rc;

	if (!seq || yamlutil_is_null(seq))
		return YAMLUTIL_OK;
	adv_snprintf(what, sizeof(what), "'%s'", key);
	rc = yamlutil_expect(&ld->doc, seq, YAML_SEQUENCE_NODE, what);
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     !rc && it < seq->data.sequence.items.top; it++, i++)
		rc = parse(ld, yamlutil_node(&ld->doc, *it), i);
	return rc;
}

static int catalog_parse(struct catalog_load *ld)
{
	yaml_node_t *root = yamlutil_root(&ld->doc);
	int rc;

	if (!root || yamlutil_is_null(root))
		return YAMLUTIL_OK;
	if ((rc = yamlutil_expect(&ld->doc, root, YAML_MAPPING_NODE, "the catalog")) ||
	    (rc = yamlutil_check_keys(&ld->doc, root, catalog_top_keys, NULL, "the catalog")) ||
	    (rc = catalog_section(ld, root, "gpus", catalog_gpu_parse)) ||
	    (rc = catalog_section(ld, root, "models", catalog_model_parse)))
		return rc;
	return YAMLUTIL_OK;
}

/* ---- merge ------------------------------------------------------------- */

static int catalog_grow(void **v, size_t n, size_t more, size_t sz)
{
	void *nv;

	if (more == 0)
		return 0;
	nv = realloc(*v, (n + more) * sz);
	if (!nv)
		return -1;
	*v = nv;
	return 0;
}

/* Copies more elements after the n already in dst (either may be empty). */
static void catalog_append(void *dst, size_t n, const void *src, size_t more, size_t sz)
{
	if (more)
		memcpy((char *)dst + n * sz, src, more * sz);
}

/*
 * Every allocation happens before anything moves, so a failure here still
 * leaves the catalog as it was (grown arrays with the same contents).
 */
static int catalog_merge(catalog_t *cat, catalog_t *add)
{
	size_t gcap = cat->gpu_names.cap, mcap = cat->model_names.cap;

	if (catalog_grow((void **)&cat->gpus, cat->n_gpus, add->n_gpus, sizeof(*cat->gpus)) ||
	    catalog_grow((void **)&cat->models, cat->n_models, add->n_models,
			 sizeof(*cat->models)) ||
	    catalog_grow((void **)&cat->files, cat->n_files, add->n_files, sizeof(*cat->files)) ||
	    catalog_reserve((void **)&cat->gpu_names.v, &gcap, cat->gpu_names.n + add->gpu_names.n,
			    sizeof(*cat->gpu_names.v)) ||
	    catalog_reserve((void **)&cat->model_names.v, &mcap,
			    cat->model_names.n + add->model_names.n, sizeof(*cat->model_names.v)))
		return -1;
	cat->gpu_names.cap = gcap;
	cat->model_names.cap = mcap;
	catalog_append(cat->gpus, cat->n_gpus, add->gpus, add->n_gpus, sizeof(*add->gpus));
	catalog_append(cat->models, cat->n_models, add->models, add->n_models,
		       sizeof(*add->models));
	catalog_append(cat->files, cat->n_files, add->files, add->n_files, sizeof(*add->files));
	catalog_append(cat->gpu_names.v, cat->gpu_names.n, add->gpu_names.v, add->gpu_names.n,
		       sizeof(*add->gpu_names.v));
	catalog_append(cat->model_names.v, cat->model_names.n, add->model_names.v,
		       add->model_names.n, sizeof(*add->model_names.v));
	cat->n_gpus += add->n_gpus;
	cat->n_models += add->n_models;
	cat->n_files += add->n_files;
	cat->gpu_names.n += add->gpu_names.n;
	cat->model_names.n += add->model_names.n;
	/* The entries now belong to cat; only add's arrays are left to free. */
	add->n_gpus = add->n_models = add->n_files = 0;
	catalog_clear(add);
	return 0;
}

static int catalog_finish(catalog_t *cat, struct catalog_load *ld, int rc, const char *name)
{
	if (!rc) {
		char *file = adv_strdup(name);

		if (!file || catalog_push((void ***)&ld->add.files, &ld->add.n_files, file)) {
			free(file);
			rc = yamlutil_fail(&ld->doc, NULL, YAMLUTIL_ERR_NOMEM, "out of memory");
		}
	}
	if (!rc) {
		/* Entries point at the doc's copy of the name; repoint them at the kept one. */
		const char *kept = ld->add.files[0];

		for (size_t i = 0; i < ld->add.n_gpus; i++)
			ld->add.gpus[i]->file = kept;
		for (size_t i = 0; i < ld->add.n_models; i++)
			ld->add.models[i]->file = kept;
		for (size_t i = 0; i < ld->add.gpu_names.n; i++)
			ld->add.gpu_names.v[i].file = kept;
		for (size_t i = 0; i < ld->add.model_names.n; i++)
			ld->add.model_names.v[i].file = kept;
		if (catalog_merge(cat, &ld->add))
			rc = yamlutil_fail(&ld->doc, NULL, YAMLUTIL_ERR_NOMEM, "out of memory");
	}
	catalog_clear(&ld->add);
	yamlutil_free(&ld->doc);
	return rc;
}

int catalog_load(catalog_t *cat, const char *path, char *err, size_t errlen)
{
	struct catalog_load ld = { .cat = cat };
	int rc;

	rc = yamlutil_load_file(&ld.doc, path, err, errlen);
	ld.file = ld.doc.name;
	if (!rc)
		rc = catalog_parse(&ld);
	return catalog_finish(cat, &ld, rc, path);
}

int catalog_load_string(catalog_t *cat, const char *name, const char *text,
			char *err, size_t errlen)
{
	struct catalog_load ld = { .cat = cat };
	int rc;

	rc = yamlutil_load_string(&ld.doc, name, text, err, errlen);
	ld.file = ld.doc.name;
	if (!rc)
		rc = catalog_parse(&ld);
	return catalog_finish(cat, &ld, rc, name ? name : "-");
}

/* ---- queries ----------------------------------------------------------- */

const char *catalog_strerror(int code)
{
	switch (code) {
	case CATALOG_OK:
		return "success";
	case CATALOG_ERR_IO:
		return "cannot read the catalog file";
	case CATALOG_ERR_SYNTAX:
		return "YAML syntax error";
	case CATALOG_ERR_SCHEMA:
		return "catalog does not follow the schema";
	case CATALOG_ERR_VALUE:
		return "impossible value in the catalog";
	case CATALOG_ERR_DUPLICATE:
		return "name or alias defined twice";
	case CATALOG_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown catalog error";
	}
}

size_t catalog_gpu_count(const catalog_t *cat)
{
	return cat ? cat->n_gpus : 0;
}

const struct adv_gpu *catalog_gpu_at(const catalog_t *cat, size_t i)
{
	return cat && i < cat->n_gpus ? cat->gpus[i] : NULL;
}

size_t catalog_model_count(const catalog_t *cat)
{
	return cat ? cat->n_models : 0;
}

const struct adv_model *catalog_model_at(const catalog_t *cat, size_t i)
{
	return cat && i < cat->n_models ? cat->models[i] : NULL;
}

/*
 * A GPU name as sites and drivers spell it, for comparing: lower case, the
 * vendor's prefix dropped and '_' or ' ' as '-' ("nvidia_h200",
 * "NVIDIA-H100" and "h100" alike: slurm.conf's Gres=gpu:nvidia_h200:8 is
 * the type AutoDetect=nvml names from the device, gres.conf(5)).
 */
static void gpu_key(const char *s, char *out, size_t len)
{
	static const char *const vendors[] = { "nvidia", "amd", "intel" };
	size_t n = 0;

	for (size_t k = 0; k < ADV_ARRAY_SIZE(vendors); k++) {
		size_t vl = strlen(vendors[k]);

		if (!strncasecmp(s, vendors[k], vl) && s[vl] && strchr("_- ", s[vl])) {
			s += vl + 1;
			break;
		}
	}
	for (; *s && n + 1 < len; s++)
		out[n++] = *s == '_' || *s == ' ' ? '-' : (char)tolower((unsigned char)*s);
	out[n] = '\0';
}

const struct adv_gpu *catalog_find_gpu(const catalog_t *cat, const char *name)
{
	const struct catalog_name *n;
	char want[ADV_NAME_MAX * 2], have[ADV_NAME_MAX * 2];

	if (!cat || !name)
		return NULL;
	n = catalog_name_find(&cat->gpu_names, name);
	if (n)
		return n->entry;
	gpu_key(name, want, sizeof(want));
	if (!want[0])
		return NULL;
	for (size_t i = 0; i < cat->gpu_names.n; i++) {
		gpu_key(cat->gpu_names.v[i].name, have, sizeof(have));
		if (!strcmp(have, want))
			return cat->gpu_names.v[i].entry;
	}
	return NULL;
}

const struct adv_model *catalog_find_model(const catalog_t *cat, const char *name)
{
	const struct catalog_name *n;

	if (!cat || !name)
		return NULL;
	n = catalog_name_find(&cat->model_names, name);
	return n ? n->entry : NULL;
}

size_t catalog_file_count(const catalog_t *cat)
{
	return cat ? cat->n_files : 0;
}

const char *catalog_file_at(const catalog_t *cat, size_t i)
{
	return cat && i < cat->n_files ? cat->files[i] : NULL;
}
