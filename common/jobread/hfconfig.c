/*
 * hfconfig.c - the model a trainer names: a catalog model by name or alias
 * (Hugging Face ids, torchtitan and torchtune names are catalog aliases), a
 * local directory holding a Hugging Face config.json (read as an inline
 * architecture), or else the name as given (the engine then says
 * MODEL_UNKNOWN with suggestions).
 *
 * The order follows transformers' from_pretrained (src/transformers/
 * configuration_utils.py, PretrainedConfig.get_config_dict): a path that is
 * a local directory wins over a Hub id of the same spelling.  The catalog
 * is asked first only because its answer needs no file: a catalog alias is
 * a Hub id, and nobody keeps a directory named "meta-llama/Llama-3.1-8B" in
 * the submit directory.
 *
 * config.json keys are those of the model classes' configs in transformers
 * (models/llama/configuration_llama.py, mixtral, qwen2, qwen2_moe,
 * deepseek_v3, gemma2, gpt2's n_embd/n_layer/n_head spellings):
 * hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads
 * (absent: every head has its own K/V), head_dim, intermediate_size,
 * vocab_size, max_position_embeddings, tie_word_embeddings (only when
 * written: its default differs between model classes), hidden_act "silu"
 * (a gated MLP in every class that uses it), rms_norm_eps vs layer_norm_eps,
 * the MoE keys (num_local_experts / n_routed_experts / num_experts,
 * num_experts_per_tok, moe_intermediate_size, n_shared_experts or Qwen's
 * shared_expert_intermediate_size, first_k_dense_replace), the MLA keys
 * (q_lora_rank, kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim,
 * v_head_dim) and torch_dtype.  A multimodal config keeps the language
 * model under text_config.
 *
 * A name that is no catalog alias and no readable directory is matched by
 * its words (common/config/modelname.c, issue 28): a Hub id with -Instruct,
 * a release date or a quantization suffix, a local copy under the Hub's
 * name, a framework's spelling.  A matched name's model is the catalog's
 * name (its source style derived: no fix quotes it as the job's value);
 * what rests on the name is said (name_says()).  A name that can only be
 * a local path (not a Hub id: validate_repo_id), has no readable
 * config.json here and matches no model is a directory on the cluster:
 * the model is unknown (SCRIPT_UNKNOWN, --llm-model), not a catalog miss.
 *
 * quantization_config (transformers' quantizers: quant_method fp8,
 * bitsandbytes, gptq, awq, compressed-tensors ..., with bits or
 * load_in_4bit/8bit) means the weights ship quantized.  The workload has
 * no weight dtype yet, so they are costed as 16-bit: the reader says so
 * (SCRIPT_ASSUMED) rather than let a memory figure that may be high pass
 * unsaid.
 */
#include "config.h"

#include <ctype.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config/modelname.h"
#include "ctx.h"
#include "reader.h"
#include "util.h"

/* Model classes whose MLP is gated whatever their activation is called
 * (Gemma's GeGLU says gelu_pytorch_tanh). */
static const char *const gated_types[] = {
	"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
	"gemma2", "gemma3", "gemma3_text", "deepseek_v2", "deepseek_v3", "phi3", "olmo2",
	"granite", "cohere", "internlm2", "yi",
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t k = 0; s && k < n; k++)
		if (!strcasecmp(s, list[k]))
			return true;
	return false;
}

/* One key below base ("" or "text_config."): set when present and not null. */
static bool key_int(struct jr_ctx *cx, const char *display, const struct cfg_node *root,
		    const char *base, const char *key, enum jobread_field f)
{
	char path[128];
	const struct cfg_node *n;

	adv_snprintf(path, sizeof(path), "%s%s", base, key);
	n = cfg_path(root, path);
	if (!n || n->type == CFG_NULL)
		return false;
	return jr_set_node_int(cx, f, display, root, path, JR_STYLE_JSON);
}

/* The first of several spellings that is present. */
static bool key_any(struct jr_ctx *cx, const char *display, const struct cfg_node *root,
		    const char *base, const char *const keys[], enum jobread_field f)
{
	for (size_t k = 0; keys[k]; k++)
		if (key_int(cx, display, root, base, keys[k], f))
			return true;
	return false;
}

static const struct cfg_node *node_at(const struct cfg_node *root, const char *base,
				      const char *key, char *path, size_t len)
{
	adv_snprintf(path, len, "%s%s", base, key);
	return cfg_path(root, path);
}

#define KEYS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* quantization_config: weights stored in fewer bits than the 16 the
 * memory figure assumes. */
static void quantized(struct jr_ctx *cx, const char *display, const struct cfg_node *root)
{
	const struct cfg_node *q = cfg_child(root, "quantization_config"), *n;
	const char *method;
	char what[96] = "";
	long long bits = 0;
	int format = -1;
	bool b;

	if (!q || q->type != CFG_MAP)
		return;
	method = cfg_str(cfg_child(q, "quant_method"));
	if ((n = cfg_child(q, "bits")) != NULL && cfg_int(n, &bits) && bits > 0 && bits < 64)
		;
	else if ((n = cfg_child(q, "load_in_4bit")) != NULL && cfg_bool(n, &b) && b)
		bits = 4;
	else if ((n = cfg_child(q, "load_in_8bit")) != NULL && cfg_bool(n, &b) && b)
		bits = 8;
	else if (method && !strncasecmp(method, "fp8", 3))
		bits = 8;
	if (bits > 0)
		adv_snprintf(what, sizeof(what), "%s, %lld-bit", method ? method : "quantized", bits);
	else
		adv_snprintf(what, sizeof(what), "%s", method ? method : "quantized");
	/* The formats a server loads as such (memory.c, "Quantized
	 * weights"): fp8 and fbgemm_fp8, GPTQ/AWQ 4- or 8-bit, mxfp4.
	 * bitsandbytes and others stay a note. */
	if (method && (!strncasecmp(method, "fp8", 3) || !strcasecmp(method, "fbgemm_fp8")))
		format = ADV_WEIGHTS_FP8;
	else if (method && (!strcasecmp(method, "gptq") || !strcasecmp(method, "awq")))
		format = bits == 4 ? ADV_WEIGHTS_INT4 : bits == 8 ? ADV_WEIGHTS_INT8 : -1;
	else if (method && !strcasecmp(method, "mxfp4"))
		format = ADV_WEIGHTS_MXFP4;
	if (format >= 0) {
		struct jobread_src src;

		memset(&src, 0, sizeof(src));
		adv_strlcpy(src.file, display, sizeof(src.file));
		src.line = q->line;
		adv_snprintf(src.key, sizeof(src.key), "quantization_config (%s)", what);
		jr_set_int(cx, JR_WEIGHTS, format, &src);
		return;
	}
	jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-model=NAME",
		"%s:%d: quantization_config (%s): the weights ship quantized, but they are costed "
		"as 16-bit; the memory estimate may be high", display, q->line, what);
}

void jr_read_hf_config(struct jr_ctx *cx, const char *display, const cfg_t *cfg)
{
	const struct cfg_node *root = cfg ? cfg_root(cfg) : NULL, *n, *t;
	const char *base = "", *act, *type;
	struct jobread_src src;
	char path[128], act_path[128];
	bool b;

	if (!root || root->type != CFG_MAP)
		return;
	/* Llava, Gemma 3, Llama 4 ...: the language model is text_config. */
	t = cfg_child(root, "text_config");
	if (!cfg_child(root, "hidden_size") && t && t->type == CFG_MAP)
		base = "text_config.";
	key_any(cx, display, root, base, KEYS("num_hidden_layers", "n_layer", "num_layers"),
		JR_ARCH_LAYERS);
	key_any(cx, display, root, base, KEYS("hidden_size", "n_embd", "d_model"), JR_ARCH_HIDDEN);
	key_any(cx, display, root, base, KEYS("num_attention_heads", "n_head"), JR_ARCH_HEADS);
	key_any(cx, display, root, base, KEYS("num_key_value_heads", "num_kv_heads"),
		JR_ARCH_KV_HEADS);
	key_int(cx, display, root, base, "head_dim", JR_ARCH_HEAD_DIM);
	key_any(cx, display, root, base, KEYS("intermediate_size", "n_inner", "ffn_dim"),
		JR_ARCH_FFN);
	key_int(cx, display, root, base, "vocab_size", JR_ARCH_VOCAB);
	key_any(cx, display, root, base, KEYS("max_position_embeddings", "n_positions"),
		JR_ARCH_MAX_SEQ);

	n = node_at(root, base, "tie_word_embeddings", path, sizeof(path));
	if (n && cfg_bool(n, &b)) {
		jr_src_node(&src, display, n, path, JR_STYLE_JSON);
		jr_set_int(cx, JR_ARCH_TIED, b, &src);
	}

	/* Gated MLP: by activation, or by the model class. */
	n = node_at(root, base, "hidden_act", act_path, sizeof(act_path));
	if (!n || !cfg_str(n))
		n = node_at(root, base, "hidden_activation", act_path, sizeof(act_path));
	act = cfg_str(n);
	type = cfg_str(node_at(root, base, "model_type", path, sizeof(path)));
	if (type && in_list(type, gated_types, ADV_ARRAY_SIZE(gated_types))) {
		jr_src_node(&src, display, cfg_path(root, path), path, JR_STYLE_JSON);
		jr_set_int(cx, JR_ARCH_GATED, 1, &src);
	} else if (act) {
		jr_src_node(&src, display, n, act_path, JR_STYLE_JSON);
		jr_set_int(cx, JR_ARCH_GATED,
			   !strcasecmp(act, "silu") || !strcasecmp(act, "swish") ||
			   !strcasecmp(act, "swiglu"), &src);
	}

	/* Normalisation: the epsilon key names it. */
	if ((n = node_at(root, base, "rms_norm_eps", path, sizeof(path))) != NULL ||
	    (n = node_at(root, base, "rms_norm_epsilon", path, sizeof(path))) != NULL) {
		jr_src_node(&src, display, n, path, JR_STYLE_JSON);
		jr_set_int(cx, JR_ARCH_NORM, ADV_NORM_RMSNORM, &src);
	} else if ((n = node_at(root, base, "layer_norm_eps", path, sizeof(path))) != NULL ||
		   (n = node_at(root, base, "layer_norm_epsilon", path, sizeof(path))) != NULL ||
		   (n = node_at(root, base, "layernorm_epsilon", path, sizeof(path))) != NULL) {
		jr_src_node(&src, display, n, path, JR_STYLE_JSON);
		jr_set_int(cx, JR_ARCH_NORM, ADV_NORM_LAYERNORM, &src);
	}

	/* Mixture of experts. */
	key_any(cx, display, root, base, KEYS("num_local_experts", "n_routed_experts", "num_experts"),
		JR_ARCH_EXPERTS);
	key_any(cx, display, root, base, KEYS("num_experts_per_tok", "moe_topk"), JR_ARCH_TOPK);
	key_int(cx, display, root, base, "moe_intermediate_size", JR_ARCH_EXPERT_FFN);
	if (!key_int(cx, display, root, base, "n_shared_experts", JR_ARCH_SHARED_EXPERTS)) {
		/* Qwen2-MoE states the shared experts' total width; the
		 * catalog counts experts of the routed width. */
		long long shared = 0, eff = 0;
		const struct jobread_value *e = jr_get(cx, JR_ARCH_EXPERT_FFN);

		n = node_at(root, base, "shared_expert_intermediate_size", path, sizeof(path));
		eff = e && e->set && !e->unknown ? e->i : 0;
		if (n && cfg_int(n, &shared) && shared > 0 && eff > 0 && shared <= (1LL << 30)) {
			jr_src_node(&src, display, n, path, JR_STYLE_JSON);
			jr_set_int(cx, JR_ARCH_SHARED_EXPERTS, (shared + eff - 1) / eff, &src);
		}
	}
	key_int(cx, display, root, base, "first_k_dense_replace", JR_ARCH_DENSE_LAYERS);

	/* Multi-head latent attention (DeepSeek V2/V3). */
	key_int(cx, display, root, base, "q_lora_rank", JR_ARCH_Q_LORA);
	key_int(cx, display, root, base, "kv_lora_rank", JR_ARCH_KV_LORA);
	key_int(cx, display, root, base, "qk_rope_head_dim", JR_ARCH_QK_ROPE);
	key_int(cx, display, root, base, "qk_nope_head_dim", JR_ARCH_QK_HEAD);
	key_int(cx, display, root, base, "v_head_dim", JR_ARCH_V_HEAD);

	quantized(cx, display, root);

	/* The dtype the weights are stored in is what a server loads them in
	 * (vLLM/SGLang --dtype auto); a trainer's precision comes from its
	 * own flags, so it is only taken for inference. */
	n = node_at(root, "", "torch_dtype", path, sizeof(path));
	if (!cfg_str(n))
		n = node_at(root, "", "dtype", path, sizeof(path));
	if (cfg_str(n)) {
		const struct jobread_value *task = jr_get(cx, JR_TASK);
		const struct jobread_value *prec = jr_get(cx, JR_PRECISION);
		const char *d = cfg_str(n);
		int p = !strcmp(d, "bfloat16") ? ADV_PREC_BF16 : !strcmp(d, "float16") ? ADV_PREC_FP16 : -1;

		if (p >= 0 && task && task->set && !task->unknown && task->i == ADV_TASK_INFER &&
		    prec && !prec->set) {
			jr_src_node(&src, display, n, path, JR_STYLE_JSON);
			jr_set_int(cx, JR_PRECISION, p, &src);
		}
	}
}

/*
 * A name that cannot be a Hugging Face Hub id, so only a local path:
 * huggingface_hub's validate_repo_id allows "name" or "namespace/name" (one
 * '/', no leading '/', no ".." or "--"), and from_pretrained takes an
 * existing directory first.  "/fsx/ckpt", "./out/ckpt", "~/models/x",
 * "a/b/c" are paths; "MODEL_PATH" or "org/model" may be Hub ids.
 */
static bool hub_id_impossible(const char *name)
{
	const char *slash = strchr(name, '/');

	if (name[0] == '/' || name[0] == '.' || name[0] == '~')
		return true;
	if (strstr(name, "..") || strstr(name, "--"))
		return true;
	return slash && strchr(slash + 1, '/') != NULL;
}

/*
 * A name matched to a catalog model by its words (modelname.c): sets the
 * model and says what rests on the name.  A local directory's content is
 * assumed from its name; a release date is taken to keep the model's
 * architecture; a quantized checkpoint (-FP8, -AWQ, -GPTQ-Int4 ...) that
 * the catalog's entry does not confirm (weights_dtype) is costed in the
 * format the name says, the least memory it allows, so that no reject
 * rests on the 16-bit weights it may not have; said, with the option
 * that states it.  A trainer's quantized base (QLoRA on "-bnb-4bit") and
 * a format the memory model does not have (-GGUF, -NVFP4) are not
 * modelled: the name stays unmatched, and says why.  Returns false
 * when the name is not taken.
 */
static bool name_says(struct jr_ctx *cx, const char *name, const struct catalog_match *mt,
		      const struct jobread_src *src)
{
	static const int format[] = {
		[CATALOG_QUANT_NONE] = -1, [CATALOG_QUANT_FP8] = ADV_WEIGHTS_FP8,
		[CATALOG_QUANT_INT8] = ADV_WEIGHTS_INT8, [CATALOG_QUANT_INT4] = ADV_WEIGHTS_INT4,
		[CATALOG_QUANT_MXFP4] = ADV_WEIGHTS_MXFP4, [CATALOG_QUANT_OTHER] = -1,
	};
	_Static_assert(ADV_ARRAY_SIZE(format) == CATALOG_QUANT_COUNT, "a weight format for each");
	const struct adv_model *m = mt->model;
	const struct jobread_value *task = jr_get(cx, JR_TASK);
	bool infer = task && task->set && !task->unknown && task->i == ADV_TASK_INFER;
	bool confirmed = (mt->quant == CATALOG_QUANT_FP8 && m->weights_fp8) ||
			 (mt->quant == CATALOG_QUANT_MXFP4 && m->weights_mxfp4);
	struct jobread_src wsrc, msrc;
	int w;

	w = (unsigned)mt->quant < CATALOG_QUANT_COUNT ? format[mt->quant] : -1;
	if (mt->quant != CATALOG_QUANT_NONE && !confirmed && !infer) {
		jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-model=NAME",
			"%s is catalog model %s with %s weights (-%s); training on quantized base "
			"weights is not modelled, so the model is not taken from its name", name,
			m->name, modelname_quant(mt->quant), mt->quant_text);
		return false;
	}
	if (mt->quant != CATALOG_QUANT_NONE && !confirmed && w < 0 && !jr_get(cx, JR_WEIGHTS)->set) {
		/* Costed at 16 bits, a reject could rest on weights the job
		 * does not load. */
		jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-model=NAME",
			"%s is catalog model %s with weights in a format not modelled (-%s), so "
			"the model is not taken from its name", name, m->name, mt->quant_text);
		return false;
	}
	/* The value is the catalog's name, not the job's spelling: no fix
	 * in the job's terms may quote it as what the job says (the source
	 * still names the line). */
	msrc = *src;
	msrc.style = JR_STYLE_DERIVED;
	jr_set_str(cx, JR_MODEL, m->name, &msrc);
	if (hub_id_impossible(name))
		jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-model=NAME",
			"%s has no readable config.json; taken as catalog model %s by its name", name,
			m->name);
	else if (mt->date[0])
		jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-model=NAME",
			"%s is taken as catalog model %s: its -%s suffix dates a re-release, "
			"assumed to keep %s's architecture", name, m->name, mt->date, m->name);
	if (mt->quant == CATALOG_QUANT_NONE || confirmed)
		return true;
	if (w < 0 || jr_get(cx, JR_WEIGHTS)->set)
		return true;   /* the job's own --quantization says */
	wsrc = *src;
	adv_snprintf(wsrc.key, sizeof(wsrc.key), "the model name's -%s suffix", mt->quant_text);
	wsrc.style = JR_STYLE_DERIVED;
	jr_set_int(cx, JR_WEIGHTS, w, &wsrc);
	jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-weights=16bit|fp8|int8|int4|mxfp4",
		"%s: the -%s suffix says %s weights%s, which the catalog's %s does not confirm; "
		"they are costed as %s, the least memory the name allows", name, mt->quant_text,
		modelname_quant(mt->quant), mt->quant_bits_assumed ? " (4-bit taken: the bits "
		"are not in the name)" : "", m->name, modelname_quant(mt->quant));
	return true;
}

void jr_model_ref(struct jr_ctx *cx, const char *name, const struct jobread_src *src)
{
	const catalog_t *cat = jr_catalog(cx);
	char dir[JOBREAD_PATH_MAX], cfgpath[JOBREAD_PATH_MAX];
	const struct jobread_value *layers;
	struct catalog_match mt;
	const char *display = NULL;
	const cfg_t *cfg;
	size_t len;

	if (!name || !*name)
		return;
	if (cat && catalog_find_model(cat, name)) {
		jr_set_str(cx, JR_MODEL, name, src);
		return;
	}
	/* URLs and object stores are not local directories. */
	if (strstr(name, "://")) {
		jr_set_str(cx, JR_MODEL, name, src);
		return;
	}
	adv_strlcpy(dir, name, sizeof(dir));
	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		dir[--len] = '\0';
	if (strlen(dir) + sizeof("/config.json") > sizeof(cfgpath)) {
		jr_set_str(cx, JR_MODEL, name, src);
		return;
	}
	adv_snprintf(cfgpath, sizeof(cfgpath), "%s/config.json", dir);
	if (jr_exists(cx, cfgpath)) {
		cfg = jr_load(cx, cfgpath, CFG_JSON, &display);
		if (cfg) {
			jr_read_hf_config(cx, display ? display : cfgpath, cfg);
			layers = jr_get(cx, JR_ARCH_LAYERS);
			/* The architecture is the model: no name to look up. */
			if (layers && layers->set && !layers->unknown)
				return;
		}
		jr_set_str(cx, JR_MODEL, name, src);
		return;
	}
	/* Not a directory here (or one without a readable config.json):
	 * the name says which model when one catalog model fits its words
	 * (modelname.c). */
	if (cat && modelname_match(cat, name, &mt) && name_says(cx, name, &mt, src))
		return;
	/* A name no Hub id can be is a directory on the cluster: what model it
	 * holds is not known before the job runs. */
	if (hub_id_impossible(name)) {
		char what[256];

		adv_snprintf(what, sizeof(what), "the local directory %s, whose config.json cannot be "
			     "read at submission", name);
		jr_set_unknown(cx, JR_MODEL, src, what);
		return;
	}
	jr_set_str(cx, JR_MODEL, name, src);
}

const struct adv_model *jr_catalog_tokenizer(const catalog_t *cat, const char *name)
{
	char dir[JOBREAD_PATH_MAX];
	struct catalog_match mt;
	const struct adv_model *m;
	const char *base;
	char *slash;
	size_t len;

	if (!cat || !name || !*name || strstr(name, "://"))
		return NULL;
	if ((m = catalog_find_model(cat, name)) != NULL)
		return m;
	adv_strlcpy(dir, name, sizeof(dir));
	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		dir[--len] = '\0';
	/* Two components at most: the directory, or the file in it. */
	for (int k = 0; k < 2; k++) {
		slash = strrchr(dir, '/');
		base = slash ? slash + 1 : dir;
		if (*base && modelname_match(cat, base, &mt))
			return mt.model;
		if (!slash || !strchr(base, '.'))
			break;
		*slash = '\0';
	}
	return NULL;
}

/* "llama3_70b", "llama31_405b", "llama3_1_8b", "mixtral_8x7b": the
 * catalog spells these with hyphens and a dotted minor version. */
const struct adv_model *jr_catalog_variant(const catalog_t *cat, const char *name)
{
	char v[128], w[128];
	const struct adv_model *m;
	size_t o = 0;

	if (!cat || !name || !*name || strlen(name) >= sizeof(v))
		return NULL;
	if ((m = catalog_find_model(cat, name)) != NULL)
		return m;
	for (const char *s = name; *s; s++)
		v[o++] = *s == '_' ? '-' : (char)tolower((unsigned char)*s);
	v[o] = '\0';
	if ((m = catalog_find_model(cat, v)) != NULL)
		return m;
	/* "llama3-1-8b" -> "llama3.1-8b"; "llama31-405b" -> "llama3.1-405b". */
	o = 0;
	for (size_t i = 0; v[i] && o + 1 < sizeof(w); i++) {
		w[o++] = v[i];
		if (isdigit((unsigned char)v[i]) && i > 0 && isalpha((unsigned char)v[i - 1])) {
			if (v[i + 1] == '-' && isdigit((unsigned char)v[i + 2]) &&
			    (v[i + 3] == '-' || v[i + 3] == '\0')) {
				w[o++] = '.';
				i++;
			} else if (!strncmp(v, "llama", 5) && isdigit((unsigned char)v[i + 1]) &&
				   v[i + 2] == '-') {
				w[o++] = '.';
			}
		}
	}
	w[o] = '\0';
	if ((m = catalog_find_model(cat, w)) != NULL)
		return m;
	/* By its words (modelname.c); a recipe's name says no quantization. */
	{
		struct catalog_match mt;

		if (modelname_match(cat, name, &mt) && mt.quant == CATALOG_QUANT_NONE)
			return mt.model;
	}
	return NULL;
}
