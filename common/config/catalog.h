/*
 * catalog.h - the GPU and model catalog (catalog.yaml, see advisor-catalog.yaml(5)).
 *
 * A catalog is loaded from one or more YAML files; later files add GPUs and
 * models to earlier ones and a name or alias defined twice is an error.
 * Lookups are case-insensitive over names and aliases.  The loaded structs
 * are read-only after catalog_load() returns, so a catalog may be shared by
 * many threads.
 */
#ifndef ADVISOR_CATALOG_H
#define ADVISOR_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#define ADV_NAME_MAX 64
#define ADV_ERR_MAX 512

typedef struct catalog catalog_t;

struct adv_gpu {
	char name[ADV_NAME_MAX];
	char **aliases;
	size_t n_aliases;
	char vendor[ADV_NAME_MAX];
	double memory_gib;           /* usable, as the driver reports it */
	double memory_bandwidth_tbs;
	double bf16_tflops;          /* dense */
	double fp8_tflops;           /* dense; 0 when the GPU has no fp8 */
	double fp32_tflops;
	double interconnect_gbs;     /* GPU-to-GPU inside a node, per GPU, GB/s */
	double network_gbs;          /* between nodes, per GPU, GB/s (optional; default 50) */
	int gpus_per_node;
	double tdp_w;
	double price_per_hour_usd;
	/* Achieved fractions of peak (estimate.c): large bf16/fp16 GEMMs, fp8
	 * GEMMs (of fp8_tflops), fused attention (of bf16_tflops). */
	double gemm_efficiency;
	double fp8_gemm_efficiency;
	double attention_efficiency;
	const char *file;            /* where it was defined */
	int line;                    /* 1-based position of its name */
	int column;
};

enum adv_norm { ADV_NORM_RMSNORM = 0, ADV_NORM_LAYERNORM = 1 };

struct adv_moe {
	int experts;           /* routed experts E */
	int top_k;
	int expert_ffn_hidden; /* F_e */
	int shared_experts;
	int dense_layers;      /* leading layers with a dense MLP of ffn_hidden */
};

struct adv_mla {
	int q_lora_rank;       /* 0: queries are not low-rank */
	int kv_lora_rank;
	int qk_rope_dim;
	int qk_head_dim;       /* non-rotary part of the query/key head */
	int v_head_dim;
};

struct adv_model {
	char name[ADV_NAME_MAX];
	char **aliases;
	size_t n_aliases;
	double params_b;       /* published total, 0 when not given */
	int layers;
	int hidden;
	int heads;
	int kv_heads;
	int head_dim;          /* hidden/heads when not given */
	int ffn_hidden;
	int vocab;
	bool gated_mlp;
	enum adv_norm norm;
	bool tied_embeddings;
	int max_seq;
	/* Sliding-window attention (Mistral 7B v0.1, Gemma 2/3, gpt-oss):
	 * the window in tokens (0: none) and how many of the layers use it
	 * (the rest attend to the whole context).  Catalog keys
	 * sliding_window and sliding_layers (default: every layer). */
	int sliding_window;
	int sliding_layers;
	bool has_moe;
	struct adv_moe moe;
	bool has_mla;
	struct adv_mla mla;
	/* The published checkpoint stores its linear weights in fp8 (its
	 * config.json quantization_config, quant_method fp8): a server loads
	 * them so unless told to quantize otherwise.  Catalog key
	 * weights_dtype: fp8 (default bf16). */
	bool weights_fp8;
	/* The published checkpoint stores its MoE experts in MXFP4 (gpt-oss:
	 * quantization_config quant_method mxfp4, attention and embeddings
	 * bf16).  Catalog key weights_dtype: mxfp4. */
	bool weights_mxfp4;
	const char *file;      /* where it was defined */
	int line;              /* 1-based position of its name */
	int column;
};

/*
 * Parameter counts computed from the architecture (model-math.md), as plain
 * numbers of parameters (not billions).  Bias terms and learned position
 * embeddings are not counted (they are well under 1% of every catalog model).
 *
 * total = embedding + output + final_norm
 *       + dense_layers * per_layer_dense + moe_layers * per_layer_moe
 * where moe_layers = layers - moe.dense_layers for MoE models (else 0) and
 * dense_layers = the other layers.  attn_per_layer is included in both
 * per-layer figures; so are the layer's two norms.
 */
struct adv_params {
	double total;          /* all parameters */
	double active;         /* used per token: total minus the routed experts a
				  token does not visit (MoE: top_k routed + shared) */
	double embedding;      /* input embedding V*h */
	double output;         /* output projection V*h, 0 when tied */
	double per_layer_dense;/* one layer with a dense MLP of ffn_hidden:
				  attention + MLP + 2 norms; counted
				  dense_layer_count times in total */
	double per_layer_moe;  /* one MoE layer: attention + router h*E + E routed
				  experts + shared experts + 2 norms (0 for dense models) */
	double attn_per_layer; /* attention of one layer (Q, K, V, O; MLA: its
				  low-rank projections and their norms) */
	double expert_params;  /* all routed expert MLPs of the model (all MoE layers) */
	double final_norm;     /* the norm after the last layer */
	int dense_layer_count; /* layers with a dense MLP */
	int moe_layer_count;   /* layers with routed experts */
};

enum catalog_err {
	CATALOG_OK = 0,
	CATALOG_ERR_IO,        /* file cannot be opened or read */
	CATALOG_ERR_SYNTAX,    /* YAML syntax */
	CATALOG_ERR_SCHEMA,    /* unknown/missing key, wrong type */
	CATALOG_ERR_VALUE,     /* out of range or impossible */
	CATALOG_ERR_DUPLICATE, /* a name or alias defined twice */
	CATALOG_ERR_NOMEM,
};

catalog_t *catalog_create(void);
void catalog_destroy(catalog_t *cat);

/*
 * Adds the GPUs and models of one file.  On error returns a catalog_err,
 * leaves the catalog as it was and writes "FILE:LINE:COL: message" to err.
 */
int catalog_load(catalog_t *cat, const char *path, char *err, size_t errlen);
/* Same, from a string; name is used in messages. */
int catalog_load_string(catalog_t *cat, const char *name, const char *text,
			char *err, size_t errlen);
const char *catalog_strerror(int code);

size_t catalog_gpu_count(const catalog_t *cat);
const struct adv_gpu *catalog_gpu_at(const catalog_t *cat, size_t i);
size_t catalog_model_count(const catalog_t *cat);
const struct adv_model *catalog_model_at(const catalog_t *cat, size_t i);

/* Case-insensitive lookup by name or alias; NULL when unknown. */
const struct adv_gpu *catalog_find_gpu(const catalog_t *cat, const char *name);
const struct adv_model *catalog_find_model(const catalog_t *cat, const char *name);

/* Parameters from the architecture (dense, gated MLP, MoE, MLA). */
void catalog_model_params(const struct adv_model *m, struct adv_params *out);

/* Files the catalog was loaded from, in order. */
size_t catalog_file_count(const catalog_t *cat);
const char *catalog_file_at(const catalog_t *cat, size_t i);

#endif
