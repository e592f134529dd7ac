/*
 * fw_neox.c - GPT-NeoX training jobs: `deepy.py train.py [-d DIR] A.yml B.yml`.
 *
 * deepy.py's arguments follow megatron/neox_arguments/arguments.py
 * (NeoXArgs.consume_deepy_args): the user script, then --conf_dir/-d (a
 * directory prefixed to every config path), then one or more YAML files.
 * NeoXArgs.from_ymls loads them in order, writes every key with '-'
 * replaced by '_' (so "model-parallel-size" and "model_parallel_size" are
 * one key) and stops with "duplicate keys" when a later file repeats a
 * key an earlier one set; the reader still takes the later value and says
 * that NeoX refuses it.
 *
 * The keys and their defaults are those of
 * megatron/neox_arguments/neox_args.py: model_parallel_size (tp),
 * pipe_parallel_size (pp; 0 and 1 both mean no pipeline), num_layers,
 * hidden_size, num_attention_heads, num_kv_heads, intermediate_size,
 * seq_length, max_position_embeddings, norm (layernorm default, rmsnorm),
 * activation (gelu default; swiglu, geglu, reglu, glu, bilinear are gated:
 * megatron/model/activations.py), no_weight_tying, precision or DeepSpeed's
 * fp16/bf16 sections, train_micro_batch_size_per_gpu,
 * gradient_accumulation_steps, train_batch_size, zero_optimization.stage,
 * checkpoint_activations (whole layers), checkpoint_factor with
 * checkpoint_scale "linear" (older configs: save_interval) and save (no
 * checkpoint without it).  The MLP width follows ParallelMLP
 * (megatron/model/transformer.py): intermediate_size (or 4h), two thirds
 * of it for a gated MLP halved into its two branches, rounded up to
 * mlp_multiple_of.  The vocabulary of a published vocab_file (gpt2-vocab.json
 * ...) padded as NeoX pads it (vocab() below).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobread/ctx.h"
#include "jobread/reader.h"
#include "util.h"

/* Config files deepy.py is given, at most. */
#define NEOX_MAX_FILES 8
/* Top-level keys per file compared for duplicates, at most. */
#define NEOX_MAX_DUP_KEYS 512

struct neox {
	struct jr_ctx *cx;
	int n;
	const struct cfg_node *root[NEOX_MAX_FILES];
	const char *display[NEOX_MAX_FILES];
};

/* A top-level key, the later file winning. */
static const struct cfg_node *find(const struct neox *nx, const char *key, const char **display)
{
	for (int f = nx->n - 1; f >= 0; f--) {
		const struct cfg_node *hit = NULL;

		for (const struct cfg_node *e = nx->root[f]->child; e; e = e->next)
			if (e->key && jr_same_key(e->key, strlen(e->key), key))
				hit = e;   /* PyYAML: the last one in a file */
		if (hit) {
			*display = nx->display[f];
			return hit;
		}
	}
	return NULL;
}

static bool get_int(struct neox *nx, enum jobread_field f, const char *key, long long *out,
		    bool set)
{
	const char *d = NULL;
	const struct cfg_node *n = find(nx, key, &d);
	struct jobread_src src;
	long long v;

	if (!n || n->type == CFG_NULL)
		return false;
	jr_src_node(&src, d, n, n->key, JR_STYLE_YAML);
	if (!cfg_int(n, &v) || v > INT_MAX || v < INT_MIN) {
		if (set && cfg_str(n) && strcasecmp(cfg_str(n), "auto"))
			jr_note(nx->cx, ADV_CODE_SCRIPT_UNKNOWN, NULL, "%s:%d: %s '%s' is not a whole number; ignored",
				src.file, src.line, n->key, cfg_str(n));
		return false;
	}
	if (set)
		jr_set_int(nx->cx, f, v, &src);
	if (out)
		*out = v;
	return true;
}

/* A top-level key with its source; *display (may be NULL) gets its file. */
static const struct cfg_node *get_node_in(const struct neox *nx, const char *key,
					  struct jobread_src *src, const char **display)
{
	const char *d = NULL;
	const struct cfg_node *n = find(nx, key, &d);

	if (n)
		jr_src_node(src, d, n, n->key, JR_STYLE_YAML);
	if (display)
		*display = d;
	return n;
}

static const struct cfg_node *get_node(const struct neox *nx, const char *key,
				       struct jobread_src *src)
{
	return get_node_in(nx, key, src, NULL);
}

/* Duplicate keys across files: NeoX stops before training.  Quadratic,
 * so only the first NEOX_MAX_DUP_KEYS keys of each file are compared
 * (real configs have about a hundred). */
static void duplicates(struct neox *nx)
{
	for (int f = 1; f < nx->n; f++) {
		size_t ne = 0;

		for (const struct cfg_node *e = nx->root[f]->child; e && ne < NEOX_MAX_DUP_KEYS;
		     e = e->next, ne++)
			for (int g = 0; g < f; g++) {
				size_t no = 0;

				for (const struct cfg_node *o = nx->root[g]->child;
				     e->key && o && no < NEOX_MAX_DUP_KEYS; o = o->next, no++)
					if (o->key && jr_same_key(o->key, strlen(o->key), e->key)) {
						jr_note(nx->cx, ADV_CODE_SCRIPT_CONFIG_ERROR, NULL,
							"%s:%d:%d: %s is also set in %s; GPT-NeoX stops with "
							"\"duplicate keys\" (the later value was taken)",
							nx->display[f], e->line, e->col, e->key, nx->display[g]);
						return;
					}
			}
	}
}

static void arch(struct neox *nx)
{
	static const char *const gated[] = { "swiglu", "geglu", "reglu", "glu", "bilinear" };
	long long hidden = 0, inter = 0, mult = 1, ffn;
	const struct cfg_node *n;
	struct jobread_src src;
	bool is_gated = false, b;

	get_int(nx, JR_ARCH_LAYERS, "num_layers", NULL, true);
	get_int(nx, JR_ARCH_HIDDEN, "hidden_size", &hidden, true);
	get_int(nx, JR_ARCH_HEADS, "num_attention_heads", NULL, true);
	get_int(nx, JR_ARCH_KV_HEADS, "num_kv_heads", NULL, true);
	get_int(nx, JR_ARCH_MAX_SEQ, "max_position_embeddings", NULL, true);
	get_int(nx, JR_ARCH_EXPERTS, "moe_num_experts", NULL, true);
	get_int(nx, JR_ARCH_TOPK, "moe_top_k", NULL, true);
	n = get_node(nx, "activation", &src);
	if (cfg_str(n)) {
		for (size_t k = 0; k < ADV_ARRAY_SIZE(gated); k++)
			if (!strcasecmp(cfg_str(n), gated[k]))
				is_gated = true;
		jr_set_int(nx->cx, JR_ARCH_GATED, is_gated, &src);
	}
	n = get_node(nx, "norm", &src);
	if (cfg_str(n)) {
		const char *s = cfg_str(n);

		if (strstr(s, "rmsnorm"))
			jr_set_int(nx->cx, JR_ARCH_NORM, ADV_NORM_RMSNORM, &src);
		else if (strstr(s, "layernorm"))
			jr_set_int(nx->cx, JR_ARCH_NORM, ADV_NORM_LAYERNORM, &src);
	}
	n = get_node(nx, "no_weight_tying", &src);
	if (n && cfg_bool(n, &b))
		jr_set_int(nx->cx, JR_ARCH_TIED, !b, &src);
	/* ParallelMLP's width. */
	get_int(nx, JR_ARCH_FFN, "mlp_multiple_of", &mult, false);
	if (mult <= 0 || mult > (1 << 20))
		mult = 1;
	if (get_int(nx, JR_ARCH_FFN, "intermediate_size", &inter, false) && inter > 0 &&
	    inter < (1LL << 30)) {
		get_node(nx, "intermediate_size", &src);
	} else if (hidden > 0 && hidden < (1LL << 28)) {
		inter = 4 * hidden;
		get_node(nx, "hidden_size", &src);
		src.key[0] = '\0';   /* derived: no key to rewrite */
	} else {
		return;
	}
	if (is_gated)
		ffn = (inter * 2 / 3) / 2;
	else
		ffn = inter;
	ffn = (ffn + mult - 1) / mult * mult;
	if (is_gated)
		src.key[0] = '\0';   /* the branch width is derived from the key */
	jr_set_int(nx->cx, JR_ARCH_FFN, ffn, &src);
}

/*
 * The vocabulary (issue 28): GPT-NeoX builds its tokenizer from
 * tokenizer_type (default GPT2BPETokenizer, neox_args.py) and vocab_file,
 * and pads its count to a multiple of make_vocab_size_divisible_by
 * (default 128) x model_parallel_size (megatron/tokenizer/tokenizer.py
 * _vocab_size_with_padding).  The count is known here when vocab_file is
 * a file published under its name (vocabfile.c) that the type reads.
 */
static void vocab(struct neox *nx)
{
	const struct jobread_value *tpv = jr_get(nx->cx, JR_TP);
	const struct jr_vocab_file *kv;
	const struct cfg_node *vf, *tt;
	struct jobread_src src, tsrc;
	const char *type = "GPT2BPETokenizer", *dfile = NULL;
	long long div = 128, tp = 1, padded;

	if (jr_get(nx->cx, JR_ARCH_VOCAB)->set)
		return;
	vf = get_node(nx, "vocab_file", &src);
	if (!vf || !cfg_str(vf) || !(kv = jr_vocab_file(cfg_str(vf))))
		return;
	if ((tt = get_node(nx, "tokenizer_type", &tsrc)) != NULL && !(type = cfg_str(tt)))
		return;
	if (strcmp(type, kv->tokenizer))
		return;
	if (find(nx, "make_vocab_size_divisible_by", &dfile) &&
	    !get_int(nx, JR_ARCH_VOCAB, "make_vocab_size_divisible_by", &div, false))
		return;
	if (tpv->set) {
		if (tpv->unknown)
			return;
		tp = tpv->i;
	}
	if ((padded = jr_vocab_padded(kv->tokens, div, tp)) <= 0)
		return;
	/* Derived from the file's name: only vocab_file is in the job. */
	src.style = JR_STYLE_DERIVED;
	jr_set_int(nx->cx, JR_ARCH_VOCAB, padded, &src);
}

static void precision(struct neox *nx)
{
	const struct cfg_node *n, *e;
	struct jobread_src src;
	const char *d = NULL;
	bool b;

	n = get_node(nx, "precision", &src);
	if (cfg_str(n)) {
		const char *s = cfg_str(n);
		int p = !strcmp(s, "bfloat16") ? ADV_PREC_BF16 : !strcmp(s, "fp16") ? ADV_PREC_FP16
		      : !strcmp(s, "fp32") ? ADV_PREC_FP32 : -1;

		if (p >= 0) {
			jr_set_int(nx->cx, JR_PRECISION, p, &src);
			return;
		}
	}
	/* NeoXArgs derives it from DeepSpeed's sections. */
	n = get_node_in(nx, "bf16", &src, &d);
	e = n ? cfg_child(n, "enabled") : NULL;
	if (e && cfg_bool(e, &b) && b) {
		jr_src_node(&src, d, e, "bf16.enabled", JR_STYLE_YAML);
		jr_set_int(nx->cx, JR_PRECISION, ADV_PREC_BF16, &src);
		return;
	}
	n = get_node_in(nx, "fp16", &src, &d);
	e = n ? cfg_child(n, "enabled") : NULL;
	if (e && cfg_bool(e, &b) && b) {
		jr_src_node(&src, d, e, "fp16.enabled", JR_STYLE_YAML);
		jr_set_int(nx->cx, JR_PRECISION, ADV_PREC_FP16, &src);
		return;
	}
	if (nx->n > 0) {
		/* Neither: fp32. */
		jr_src_node(&src, nx->display[0], NULL, "", JR_STYLE_YAML);
		jr_set_int(nx->cx, JR_PRECISION, ADV_PREC_FP32, &src);
	}
}

static void checkpoint(struct neox *nx)
{
	struct jobread_src src, ssrc;
	const struct cfg_node *save = get_node(nx, "save", &ssrc), *n;
	long long steps;

	if (!save || save->type == CFG_NULL || !cfg_str(save)) {
		/* No save path: NeoX writes no checkpoint. */
		if (nx->n > 0) {
			jr_src_node(&src, nx->display[0], NULL, "", JR_STYLE_YAML);
			jr_set_int(nx->cx, JR_CKPT_OFF, 1, &src);
		}
		return;
	}
	n = get_node(nx, "checkpoint_scale", &src);
	if (cfg_str(n) && !strcmp(cfg_str(n), "log")) {
		jr_set_unknown(nx->cx, JR_CKPT_STEPS, &src, "log-spaced checkpoints");
		return;
	}
	if (get_int(nx, JR_CKPT_STEPS, "checkpoint_factor", &steps, false) && steps > 0) {
		get_int(nx, JR_CKPT_STEPS, "checkpoint_factor", NULL, true);
		return;
	}
	if (get_int(nx, JR_CKPT_STEPS, "save_interval", &steps, false) && steps > 0) {
		get_int(nx, JR_CKPT_STEPS, "save_interval", NULL, true);
		return;
	}
	/* A save path and no interval: only the last step is saved. */
	jr_set_int(nx->cx, JR_CKPT_OFF, 1, &ssrc);
}

static bool is_neox(const struct jr_cmd *p, bool is_module)
{
	const char *b = jr_basename(p->argv[0]);

	return !is_module && !strcmp(b, "deepy.py");
}

bool jr_fw_neox(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct neox nx;
	struct jobread_src src;
	const char *dir = NULL, *zd = NULL;
	const struct cfg_node *n;
	int i = 1;
	bool b;

	if (!prog || prog->argc < 1 || !prog->argv[0] || !is_neox(prog, is_module))
		return false;
	memset(&nx, 0, sizeof(nx));
	nx.cx = cx;
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';
	jr_set_trainer(cx, "neox", ADV_FW_DEEPSPEED, &src);
	jr_set_int(cx, JR_TASK, ADV_TASK_TRAIN, &src);
	/* argparse: the user script, then -d/--conf_dir anywhere, then the
	 * config files. */
	for (; i < prog->argc; i++) {
		const char *w = prog->argv[i];
		bool unk = prog->unknown && prog->unknown[i];

		if (!w)
			continue;
		if (!strcmp(w, "-d") || !strcmp(w, "--conf_dir") || !strcmp(w, "--conf-dir")) {
			if (i + 1 < prog->argc)
				dir = prog->unknown && prog->unknown[i + 1] ? NULL : prog->argv[i + 1];
			i++;
			continue;
		}
		if (!strncmp(w, "--conf_dir=", 11)) {
			dir = unk ? NULL : w + 11;
			continue;
		}
		if (!strncmp(w, "--", 2)) {
			/* --wandb_group X and the like. */
			if (!strchr(w, '=') && i + 1 < prog->argc)
				i++;
			continue;
		}
	}
	{
		bool script_seen = false;

		for (i = 1; i < prog->argc; i++) {
			const char *w = prog->argv[i], *d = NULL;
			char path[JOBREAD_PATH_MAX];
			const cfg_t *c;
			size_t len;

			if (!w)
				continue;
			if (!strcmp(w, "-d") || !strcmp(w, "--conf_dir") || !strcmp(w, "--conf-dir") ||
			    (!strncmp(w, "--", 2) && !strchr(w, '='))) {
				i++;
				continue;
			}
			if (w[0] == '-')
				continue;
			if (!script_seen) {
				script_seen = true;   /* train.py */
				continue;
			}
			if (prog->unknown && prog->unknown[i]) {
				jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
				jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-layout=...",
					"%s:%d: a GPT-NeoX config file is named at run time, so what it "
					"configures is not known", src.file, src.line);
				continue;
			}
			len = strlen(w);
			if (!(len > 4 && (!strcmp(w + len - 4, ".yml") || !strcmp(w + len - 5, ".yaml"))))
				continue;
			if (nx.n >= NEOX_MAX_FILES)
				break;
			if (dir && w[0] != '/')
				adv_snprintf(path, sizeof(path), "%s/%s", dir, w);
			else
				adv_strlcpy(path, w, sizeof(path));
			c = jr_load(cx, path, CFG_YAML, &d);
			if (c && cfg_root(c) && cfg_root(c)->type == CFG_MAP) {
				nx.root[nx.n] = cfg_root(c);
				nx.display[nx.n++] = d;
			}
		}
	}
	if (!nx.n)
		return true;
	duplicates(&nx);
	get_int(&nx, JR_TP, "model_parallel_size", NULL, true);
	{
		long long pp;

		if (get_int(&nx, JR_PP, "pipe_parallel_size", &pp, false)) {
			/* 0 means the non-pipelined engine: one stage. */
			get_node(&nx, "pipe_parallel_size", &src);
			jr_set_int(cx, JR_PP, pp < 1 ? 1 : pp, &src);
		}
	}
	get_int(&nx, JR_SEQ, "seq_length", NULL, true);
	get_int(&nx, JR_MBS, "train_micro_batch_size_per_gpu", NULL, true);
	get_int(&nx, JR_GAS, "gradient_accumulation_steps", NULL, true);
	get_int(&nx, JR_GBS, "train_batch_size", NULL, true);
	n = get_node_in(&nx, "zero_optimization", &src, &zd);
	if (n && n->type == CFG_MAP) {
		const struct cfg_node *st = cfg_child(n, "stage");
		long long z;

		if (st && cfg_int(st, &z) && z >= 0 && z <= 3) {
			jr_src_node(&src, zd, st, "zero_optimization.stage", JR_STYLE_YAML);
			jr_set_int(cx, JR_ZERO, z, &src);
		}
	}
	n = get_node(&nx, "sequence_parallel", &src);
	if (n && cfg_bool(n, &b))
		jr_set_int(cx, JR_SP, b, &src);
	n = get_node(&nx, "checkpoint_activations", &src);
	if (n && cfg_bool(n, &b))
		jr_set_int(cx, JR_RECOMPUTE, b ? ADV_RECOMPUTE_FULL : ADV_RECOMPUTE_NONE, &src);
	arch(&nx);
	vocab(&nx);
	precision(&nx);
	checkpoint(&nx);
	return true;
}
