/*
 * fw_megatron.c - Megatron-LM and Megatron-DeepSpeed training scripts,
 * read from their command-line flags.
 *
 * The flags, their defaults and the values Megatron derives follow
 * Megatron-LM megatron/training/arguments.py (validate_args) and
 * megatron/core/transformer/transformer_config.py:
 * - --num-query-groups counts only with --group-query-attention (without
 *   it every head has its own K/V);
 * - without --ffn-hidden-size the MLP is 4h, or with --swiglu 4h*2/3
 *   rounded down to a multiple of 64;
 * - --kv-channels is the head dimension (default hidden/heads);
 * - embeddings and output weights are tied unless
 *   --untie-embeddings-and-output-weights; normalization is LayerNorm
 *   unless --normalization RMSNorm;
 * - the virtual pipeline size is (layers / pp) / --num-layers-per-
 *   virtual-pipeline-stage (the embedding and loss count as layers with
 *   --account-for-embedding/loss-in-pipeline-split), or
 *   --num-virtual-stages-per-pipeline-rank;
 * - --recompute-activations means selective recompute and wins over
 *   --recompute-granularity; Megatron-DeepSpeed's --checkpoint-activations
 *   recomputes whole layers; without any, nothing is recomputed;
 * - without --bf16/--fp16 Megatron trains in fp32; --fp8-format trains in
 *   fp8 (on top of bf16);
 * - --use-distributed-optimizer shards the optimizer state (ZeRO 1);
 * - --attention-backend (megatron/core/transformer/enums.py AttnBackend):
 *   flash, fused and auto (the default) run fused kernels that store no
 *   s x s scores; unfused (Transformer Engine's unfused attention) and
 *   local (Megatron's own DotProductAttention) materialise them: eager.
 *   Older Megatron-LM and Megatron-DeepSpeed say --use-flash-attn: flash;
 *   its absence is not read as eager (the advisor's default is flash);
 * - checkpoints are written every --save-interval iterations to --save;
 *   without --save nothing is written, and --save without an interval
 *   fails validation.
 * Megatron-DeepSpeed (microsoft/Megatron-DeepSpeed megatron/arguments.py)
 * adds --deepspeed, --deepspeed_config FILE and --zero-stage.
 *
 * The vocabulary: --vocab-size when given; else the tokenizer's, padded
 * as Megatron's _vocab_size_with_padding does (megatron/training/
 * tokenizer, or megatron/core/tokenizers/utils/build_tokenizer.py) to a
 * multiple of --make-vocab-size-divisible-by (default 128) times TP:
 * GPT2BPETokenizer (or a gpt2 --vocab-file with --merge-file) has 50257
 * tokens, a --vocab-file published under a known name (gpt2-vocab.json,
 * bert-large-uncased-vocab.txt ...: vocabfile.c) has its file's, a Hugging Face tokenizer named by --tokenizer-model or
 * --tokenizer-name-or-path is a catalog model's; BigScience's
 * --pad-vocab-size-to states the padded size itself.  Otherwise apply.c
 * takes a default and says so (SCRIPT_ASSUMED).
 *
 * Megatron-DeepSpeed's mixture of experts (megatron/arguments.py,
 * megatron/model/transformer.py get_num_experts_per_layer): --num-experts
 * takes a list (nargs='+', one count per MoE layer or one for all), only
 * every --expert-interval-th layer (default 2) is an MoE layer, the
 * router takes --topk experts (default 1), --moe-expert-parallel-size
 * is the expert-parallel size, and the experts are not split by tensor
 * parallelism unless --enable-expert-tensor-parallelism.  Legacy Megatron-LM's
 * --activations-checkpoint-method uniform|block recomputes whole layers.
 *
 * Megatron's memory dtype flags (issue 19: --grad-reduce-in-bf16,
 * --accumulate-allreduce-grads-in-fp32, --fp8-param-gather,
 * --use-precision-aware-optimizer with --main-grads-dtype,
 * --main-params-dtype, --exp-avg-dtype, --exp-avg-sq-dtype) set the
 * gradient dtype, the optimizer state's bytes and fp8 weights
 * (memory_flags; the engine's memory.c costs them).
 */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "jobread/ctx.h"
#include "jobread/reader.h"
#include "util.h"

/* Flags that only Megatron's argument parser has. */
static const char *const megatron_only[] = {
	"--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--micro-batch-size",
	"--num-layers-per-virtual-pipeline-stage", "--use-distributed-optimizer",
	"--untie-embeddings-and-output-weights", "--num-query-groups", "--context-parallel-size",
	"--expert-model-parallel-size", "--recompute-granularity", "--recompute-activations",
	NULL,
};

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

static bool has(const struct jr_cmd *p, const char *flag)
{
	return jr_arg_find(p, 1, flag, NULL, NULL) >= 0;
}

static bool is_megatron(const struct jr_cmd *p, bool is_module)
{
	const char *b = jr_basename(p->argv[0]);
	int n = 0;

	if (!is_module && (!strcmp(b, "pretrain_gpt.py") || !strcmp(b, "pretrain_llama.py") ||
			   !strcmp(b, "pretrain_mamba.py") || !strcmp(b, "pretrain_gpt_core.py") ||
			   !strcmp(b, "pretrain_mixtral.py")))
		return true;
	for (size_t k = 0; megatron_only[k]; k++)
		if (has(p, megatron_only[k]))
			n++;
	/* finetune*.py and other drivers of Megatron's trainer: one of its
	 * own flags; any program: two, or the architecture flags together. */
	if (!is_module && !strncmp(b, "finetune", 8) && n >= 1)
		return true;
	if (n >= 2)
		return true;
	return has(p, "--num-layers") && has(p, "--hidden-size") && has(p, "--num-attention-heads") &&
	       (n >= 1 || has(p, "--seq-length") || has(p, "--global-batch-size"));
}

/* An integer flag's value (false when absent, unknown or not a number;
 * jr_arg_int has already said so). */
static bool int_of(struct jr_ctx *cx, const struct jr_cmd *p, enum jobread_field f,
		   const char *const names[], long long *out)
{
	const struct jobread_value *v;

	if (!jr_arg_int(cx, p, 1, f, names))
		return false;
	v = jr_get(cx, f);
	if (!v->set || v->unknown)
		return false;
	*out = v->i;
	return true;
}

/* A flag's value as text, NULL when absent, bare or unknown. */
static const char *str_of(const struct jr_cmd *p, const char *const names[], const char **which,
			  bool *eq, bool *unknown)
{
	const char *v = NULL;
	bool e = false;
	int i = jr_arg_find_any(p, 1, names, &v, &e, which);

	*unknown = false;
	if (eq)
		*eq = e;
	if (i < 0)
		return NULL;
	if (p->unknown && (e ? p->unknown[i] : (i + 1 < p->argc && p->unknown[i + 1]))) {
		*unknown = true;
		return NULL;
	}
	return v;
}

/* Megatron-DeepSpeed's flags, not Megatron-LM's: its MoE differs. */
static bool is_deepspeed_flavour(const struct jr_cmd *p)
{
	return has(p, "--deepspeed") || has(p, "--moe-expert-parallel-size") ||
	       has(p, "--expert-interval");
}

/* Expert counts per MoE layer, written at most this many times. */
#define MEG_MAX_EXPERT_LIST 256

static void experts(struct jr_ctx *cx, const struct jr_cmd *p, long long layers)
{
	struct jobread_src src;
	long long e = 0, first = 0, max = 0, interval = 2, v;
	int i = jr_arg_find(p, 1, "--num-experts", NULL, NULL), n = 0;
	bool differ = false, ds = is_deepspeed_flavour(p);
	const char *val;
	bool eq;

	if (i < 0)
		return;
	jr_src_arg(&src, p, "--num-experts", JR_STYLE_FLAG);
	if (strchr(p->argv[i], '=')) {
		/* "--num-experts=8": one value. */
		jr_arg_int(cx, p, 1, JR_ARCH_EXPERTS, NAMES("--num-experts"));
		e = jr_get(cx, JR_ARCH_EXPERTS)->set ? jr_get(cx, JR_ARCH_EXPERTS)->i : 0;
		n = 1;
		max = e;
	} else {
		/* argparse's nargs='+': the words up to the next option. */
		for (int k = i + 1; k < p->argc && n < MEG_MAX_EXPERT_LIST; k++) {
			if (!p->argv[k] || p->argv[k][0] == '-')
				break;
			if (p->unknown && p->unknown[k]) {
				jr_set_unknown(cx, JR_ARCH_EXPERTS, &src, "a value computed at run time");
				return;
			}
			if (!jr_parse_ll(p->argv[k], &v) || v <= 0) {
				jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-model=NAME",
					"%s:%d: --num-experts '%s' is not a whole number; ignored",
					src.file, src.line, p->argv[k]);
				return;
			}
			if (!n)
				first = v;
			differ |= v != first;
			max = v > max ? v : max;
			n++;
		}
		if (!n)
			return;
		e = max;
		jr_set_int(cx, JR_ARCH_EXPERTS, e, &src);
		if (differ)
			jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-model=NAME",
				"%s:%d: --num-experts gives the MoE layers different expert counts; "
				"%lld, the largest, is assumed for every one of them (the estimate may be "
				"high)", src.file, src.line, e);
	}
	if (!ds)
		return;
	jr_arg_int(cx, p, 1, JR_EP, NAMES("--moe-expert-parallel-size"));
	if (e <= 1)
		return;   /* one expert: a dense model */
	/* DeepSpeed's experts are whole on each rank unless
	 * --enable-expert-tensor-parallelism. */
	if (!jr_arg_flag(cx, p, 1, JR_ETP, 0, NAMES("--enable-expert-tensor-parallelism"))) {
		jr_src_arg(&src, p, "--moe-expert-parallel-size", JR_STYLE_FLAG);
		src.key[0] = '\0';
		jr_set_int(cx, JR_ETP, 1, &src);
	} else {
		const struct jobread_value *tp = jr_get(cx, JR_TP);

		src = jr_get(cx, JR_ETP)->src;
		if (tp->set && !tp->unknown)
			jr_set_int(cx, JR_ETP, tp->i, &src);
		else
			jr_set_unknown(cx, JR_ETP, &src, "the tensor-parallel size");
	}
	/* The router: --topk, 1 unless stated. */
	if (!jr_arg_int(cx, p, 1, JR_ARCH_TOPK, NAMES("--topk", "--moe-router-topk"))) {
		jr_src_arg(&src, p, "--num-experts", JR_STYLE_FLAG);
		src.key[0] = '\0';
		jr_set_int(cx, JR_ARCH_TOPK, 1, &src);
	}
	/* Every interval-th layer is an MoE layer; the others are dense. */
	i = jr_arg_find(p, 1, "--expert-interval", &val, &eq);
	if (i >= 0) {
		jr_src_arg(&src, p, "--expert-interval", eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
		if (!val || !jr_parse_ll(val, &interval) || interval <= 0 ||
		    (p->unknown && p->unknown[eq ? i : i + 1 < p->argc ? i + 1 : i])) {
			jr_set_unknown(cx, JR_ARCH_DENSE_LAYERS, &src,
				       val ? val : "no value");
			return;
		}
	} else {
		jr_src_arg(&src, p, "--num-experts", JR_STYLE_FLAG);
	}
	src.key[0] = '\0';   /* derived: no flag states it */
	if (layers > 0) {
		if (n > 1 && n != layers / interval)
			jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
				"%s:%d: --num-experts lists %d counts for %lld MoE layers (every %lld-th "
				"of %lld); Megatron-DeepSpeed stops at start", src.file, src.line, n,
				layers / interval, interval, layers);
		jr_set_int(cx, JR_ARCH_DENSE_LAYERS, layers - layers / interval, &src);
	}
}

/* GPT-2's BPE vocabulary (the encoder.json every gpt2-vocab.json is). */
#define MEG_GPT2_VOCAB 50257

static void vocab(struct jr_ctx *cx, const struct jr_cmd *p)
{
	const struct jobread_value *tpv = jr_get(cx, JR_TP);
	struct jobread_src src;
	const struct jr_vocab_file *kv;
	const char *t, *which = NULL, *name, *vf;
	long long base = 0, div = 128, tp = tpv->set && !tpv->unknown && tpv->i > 0 ? tpv->i : 1;
	long long mult, padded;
	bool eq, unk;

	if (jr_get(cx, JR_ARCH_VOCAB)->set)
		return;   /* --vocab-size */
	if (jr_arg_int(cx, p, 1, JR_ARCH_VOCAB, NAMES("--pad-vocab-size-to")))
		return;   /* BigScience: the padded size itself */
	t = str_of(p, NAMES("--tokenizer-type"), &which, &eq, &unk);
	vf = str_of(p, NAMES("--vocab-file"), NULL, NULL, &unk);
	name = str_of(p, NAMES("--tokenizer-model", "--tokenizer-name-or-path"), &which, &eq, &unk);
	kv = vf ? jr_vocab_file(vf) : NULL;
	if ((t && !strcmp(t, "GPT2BPETokenizer")) ||
	    (!t && vf && has(p, "--merge-file") && strstr(jr_basename(vf), "gpt2"))) {
		base = MEG_GPT2_VOCAB;
		jr_src_arg(&src, p, t ? "--tokenizer-type" : "--vocab-file", JR_STYLE_DERIVED);
	} else if (kv && (!t || !strcmp(t, kv->tokenizer))) {
		/* A published vocabulary file by its name (vocabfile.c). */
		base = kv->tokens;
		jr_src_arg(&src, p, "--vocab-file", JR_STYLE_DERIVED);
	} else if (name && !(t && (!strcmp(t, "NullTokenizer") || !strcmp(t, "GPT2BPETokenizer")))) {
		const struct adv_model *m = jr_catalog_tokenizer(jr_catalog(cx), name);

		if (!m || m->vocab <= 0)
			return;
		base = m->vocab;
		jr_src_arg(&src, p, which, JR_STYLE_DERIVED);
	} else {
		return;
	}
	/* The source names the flag the vocabulary follows from; the size
	 * is derived (only --vocab-size would state it), so no fix writes it
	 * there (JR_STYLE_DERIVED). */
	{
		const char *dv;
		bool deq;
		int i = jr_arg_find(p, 1, "--make-vocab-size-divisible-by", &dv, &deq);

		if (i >= 0 && (!dv || !jr_parse_ll(dv, &div) || div <= 0 ||
			       (p->unknown && p->unknown[deq ? i : i + 1 < p->argc ? i + 1 : i]))) {
			jr_set_unknown(cx, JR_ARCH_VOCAB, &src,
				       "padded to a multiple computed at run time");
			return;
		}
	}
	mult = div * tp;
	if (mult <= 0 || mult > (1LL << 24))
		return;
	padded = (base + mult - 1) / mult * mult;
	jr_set_int(cx, JR_ARCH_VOCAB, padded, &src);
}

/* Bytes of one element of a precision-aware optimizer dtype flag, 0 when
 * not one of arguments.py's choices (fp32, fp16, bf16, fp8). */
static int dtype_bytes(const char *v)
{
	if (!strcmp(v, "fp32"))
		return 4;
	if (!strcmp(v, "fp16") || !strcmp(v, "bf16"))
		return 2;
	if (!strcmp(v, "fp8"))
		return 1;
	return 0;
}

/*
 * The gradient, optimizer-state and weight dtypes (issue 19), as
 * megatron/training/arguments.py resolves them: --grad-reduce-in-bf16 turns
 * accumulate_allreduce_grads_in_fp32 off (it wins), --main-grads-dtype bf16
 * of the precision-aware optimizer leaves it off, and
 * --accumulate-allreduce-grads-in-fp32 turns it on; the DDP grad buffer is
 * fp32 when it is on and bf16 otherwise.  Without any, Megatron's default
 * (fp32 for bf16, the parameters' dtype for fp16) is the engine's
 * (engine_default_grad_dtype).  The precision-aware optimizer keeps the
 * master weights in --main-params-dtype and Adam's moments in
 * --exp-avg-dtype and --exp-avg-sq-dtype (default fp32 each); without
 * --use-precision-aware-optimizer those flags are refused by Megatron and
 * not read.  --fp8-param-gather keeps the layers' weights in fp8.
 */
static void memory_flags(struct jr_ctx *cx, const struct jr_cmd *p)
{
	static const char *const dtypes[] = { "--main-params-dtype", "--exp-avg-dtype",
					      "--exp-avg-sq-dtype", NULL };
	struct jobread_src src;
	const char *v, *w;
	bool eq, unk;
	int bytes = 0;

	if (has(p, "--grad-reduce-in-bf16")) {
		jr_src_arg(&src, p, "--grad-reduce-in-bf16", JR_STYLE_BOOL);
		jr_set_int(cx, JR_GRAD_DTYPE, ADV_PREC_BF16, &src);
	} else if (has(p, "--use-precision-aware-optimizer") &&
		   (v = str_of(p, NAMES("--main-grads-dtype"), &w, &eq, &unk)) != NULL &&
		   !strcmp(v, "bf16")) {
		jr_src_arg(&src, p, "--main-grads-dtype", eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
		jr_set_int(cx, JR_GRAD_DTYPE, ADV_PREC_BF16, &src);
	} else if (has(p, "--accumulate-allreduce-grads-in-fp32")) {
		jr_src_arg(&src, p, "--accumulate-allreduce-grads-in-fp32", JR_STYLE_BOOL);
		jr_set_int(cx, JR_GRAD_DTYPE, ADV_PREC_FP32, &src);
	}
	if (has(p, "--fp8-param-gather")) {
		jr_src_arg(&src, p, "--fp8-param-gather", JR_STYLE_BOOL);
		jr_set_int(cx, JR_FP8_PARAMS, 1, &src);
	}
	if (!has(p, "--use-precision-aware-optimizer"))
		return;
	for (size_t k = 0; dtypes[k]; k++) {
		int b = 4;

		v = str_of(p, (const char *const[]){ dtypes[k], NULL }, &w, &eq, &unk);
		if (unk) {
			jr_src_arg(&src, p, dtypes[k], JR_STYLE_FLAG);
			jr_set_unknown(cx, JR_OPTIM_BYTES, &src, "set at run time");
			return;
		}
		if (v && (b = dtype_bytes(v)) == 0)
			return;   /* Megatron's argparse refuses it: nothing to cost */
		bytes += b;
	}
	/* The source names the switch; the dtype flags are beside it. */
	jr_src_arg(&src, p, "--use-precision-aware-optimizer", JR_STYLE_BOOL);
	jr_set_int(cx, JR_OPTIM_BYTES, bytes, &src);
}

static void arch(struct jr_ctx *cx, const struct jr_cmd *p, long long *layers)
{
	struct jobread_src src;
	long long hidden = 0, ffn = 0;
	const char *v, *which;
	bool eq, unk;

	int_of(cx, p, JR_ARCH_LAYERS, NAMES("--num-layers"), layers);
	int_of(cx, p, JR_ARCH_HIDDEN, NAMES("--hidden-size"), &hidden);
	jr_arg_int(cx, p, 1, JR_ARCH_HEADS, NAMES("--num-attention-heads"));
	if (has(p, "--group-query-attention"))
		jr_arg_int(cx, p, 1, JR_ARCH_KV_HEADS, NAMES("--num-query-groups"));
	jr_arg_int(cx, p, 1, JR_ARCH_HEAD_DIM, NAMES("--kv-channels"));
	jr_arg_flag(cx, p, 1, JR_ARCH_GATED, 1, NAMES("--swiglu", "--quick-geglu"));
	if (!int_of(cx, p, JR_ARCH_FFN, NAMES("--ffn-hidden-size"), &ffn) &&
	    !has(p, "--ffn-hidden-size") && has(p, "--swiglu") && hidden > 0) {
		/* Megatron's SwiGLU default keeps the parameter count of a 4h
		 * MLP: 4h * 2/3, down to a multiple of 64. */
		jr_src_arg(&src, p, "--swiglu", JR_STYLE_BOOL);
		src.key[0] = '\0';   /* derived: no flag to rewrite */
		jr_set_int(cx, JR_ARCH_FFN, (4 * hidden * 2 / 3) / 64 * 64, &src);
	}
	v = str_of(p, NAMES("--normalization"), &which, &eq, &unk);
	if (v) {
		jr_src_arg(&src, p, which, eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
		if (!strcmp(v, "RMSNorm"))
			jr_set_int(cx, JR_ARCH_NORM, 0, &src);
		else if (!strcmp(v, "LayerNorm"))
			jr_set_int(cx, JR_ARCH_NORM, 1, &src);
	}
	if (has(p, "--untie-embeddings-and-output-weights")) {
		jr_src_arg(&src, p, "--untie-embeddings-and-output-weights", JR_STYLE_BOOL);
		jr_set_int(cx, JR_ARCH_TIED, 0, &src);
	} else if (*layers > 0) {
		/* Megatron ties them by default: the command is the source. */
		jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
		jr_set_int(cx, JR_ARCH_TIED, 1, &src);
	}
	jr_arg_int(cx, p, 1, JR_ARCH_MAX_SEQ, NAMES("--max-position-embeddings"));
	jr_arg_int(cx, p, 1, JR_ARCH_VOCAB, NAMES("--vocab-size"));
	/* Mixture of experts. */
	experts(cx, p, *layers);
	if (!is_deepspeed_flavour(p))
		jr_arg_int(cx, p, 1, JR_ARCH_TOPK, NAMES("--moe-router-topk"));
	{
		long long eff = 0, shared = 0;
		const struct jobread_value *fv;

		if (!int_of(cx, p, JR_ARCH_EXPERT_FFN, NAMES("--moe-ffn-hidden-size"), &eff)) {
			fv = jr_get(cx, JR_ARCH_FFN);
			eff = fv->set && !fv->unknown ? fv->i : 0;
		}
		if (jr_arg_find(p, 1, "--moe-shared-expert-intermediate-size", &v, &eq) >= 0 && v &&
		    jr_parse_ll(v, &shared) && shared > 0 && eff > 0) {
			/* Megatron states the shared experts' total width;
			 * the catalog counts experts of the routed width. */
			jr_src_arg(&src, p, "--moe-shared-expert-intermediate-size",
				   eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
			jr_set_int(cx, JR_ARCH_SHARED_EXPERTS, (shared + eff - 1) / eff, &src);
		}
	}
	/* Multi-latent attention. */
	if (has(p, "--multi-latent-attention")) {
		jr_arg_int(cx, p, 1, JR_ARCH_Q_LORA, NAMES("--q-lora-rank"));
		jr_arg_int(cx, p, 1, JR_ARCH_KV_LORA, NAMES("--kv-lora-rank"));
		jr_arg_int(cx, p, 1, JR_ARCH_QK_HEAD, NAMES("--qk-head-dim"));
		jr_arg_int(cx, p, 1, JR_ARCH_QK_ROPE, NAMES("--qk-pos-emb-head-dim"));
		jr_arg_int(cx, p, 1, JR_ARCH_V_HEAD, NAMES("--v-head-dim"));
	}
}

static void vpp(struct jr_ctx *cx, const struct jr_cmd *p, long long layers)
{
	const struct jobread_value *ppv = jr_get(cx, JR_PP);
	long long pp = ppv->set && !ppv->unknown ? ppv->i : 1, per, n;
	struct jobread_src src;
	const char *v;
	bool eq;
	int i;

	if (jr_arg_int(cx, p, 1, JR_VPP, NAMES("--num-virtual-stages-per-pipeline-rank")))
		return;
	i = jr_arg_find(p, 1, "--num-layers-per-virtual-pipeline-stage", &v, &eq);
	if (i < 0)
		return;
	jr_src_arg(&src, p, "--num-layers-per-virtual-pipeline-stage",
		   eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
	src.key[0] = '\0';   /* the value is derived: a fix cannot rewrite it as vpp */
	if (p->unknown && p->unknown[eq ? i : i + 1 < p->argc ? i + 1 : i]) {
		jr_set_unknown(cx, JR_VPP, &src, "a value computed at run time");
		return;
	}
	if (!v || !jr_parse_ll(v, &n) || n <= 0 || layers <= 0 || pp <= 0)
		return;
	if (has(p, "--account-for-embedding-in-pipeline-split"))
		layers++;
	if (has(p, "--account-for-loss-in-pipeline-split"))
		layers++;
	if (layers % pp != 0 || (layers / pp) % n != 0) {
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-layout=...,vppN",
			"%s:%d: --num-layers-per-virtual-pipeline-stage %lld does not divide the %lld layers "
			"of each of the %lld pipeline stages; Megatron stops at start", src.file, src.line,
			n, layers / pp, pp);
		return;
	}
	per = layers / pp;
	jr_set_int(cx, JR_VPP, per / n, &src);
}

/* The source of a value Megatron takes when the job says nothing: its
 * documented default (apply.c marks it so, not as stated by the job). */
static void meg_default(struct jobread_src *src, const char *what)
{
	memset(src, 0, sizeof(*src));
	adv_strlcpy(src->key, what, sizeof(src->key));
	src->style = JR_STYLE_DERIVED;
	src->fw_default = true;
}

static void precision(struct jr_ctx *cx, const struct jr_cmd *p)
{
	struct jobread_src src;
	const char *which = NULL;
	int i = jr_arg_find_any(p, 1, NAMES("--fp8-format", "--fp8-hybrid", "--fp8-e4m3"), NULL, NULL, &which);

	if (i >= 0) {
		jr_src_arg(&src, p, which, JR_STYLE_FLAG);
		jr_set_int(cx, JR_PRECISION, ADV_PREC_FP8, &src);
		return;
	}
	if (jr_arg_flag(cx, p, 1, JR_PRECISION, ADV_PREC_BF16, NAMES("--bf16")))
		return;
	if (jr_arg_flag(cx, p, 1, JR_PRECISION, ADV_PREC_FP16, NAMES("--fp16")))
		return;
	if (!jr_get(cx, JR_PRECISION)->set) {
		/* Megatron's documented default: fp32 (arguments.py: --fp16 and
		 * --bf16 are store_true, params_dtype float32 without them; a
		 * DeepSpeed config may have said otherwise). */
		meg_default(&src, "megatron default (no --bf16/--fp16: fp32)");
		jr_set_int(cx, JR_PRECISION, ADV_PREC_FP32, &src);
	}
}

static void recompute(struct jr_ctx *cx, const struct jr_cmd *p)
{
	struct jobread_src src;
	const char *v, *which;
	bool eq, unk;

	v = str_of(p, NAMES("--recompute-granularity"), &which, &eq, &unk);
	if (v || unk) {
		jr_src_arg(&src, p, which, eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
		if (unk)
			jr_set_unknown(cx, JR_RECOMPUTE, &src, "a value computed at run time");
		else if (!strcmp(v, "full"))
			jr_set_int(cx, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, &src);
		else if (!strcmp(v, "selective"))
			jr_set_int(cx, JR_RECOMPUTE, ADV_RECOMPUTE_SELECTIVE, &src);
	}
	jr_arg_flag(cx, p, 1, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, NAMES("--checkpoint-activations"));
	/* Legacy Megatron-LM: a method alone recomputes whole layers. */
	v = str_of(p, NAMES("--activations-checkpoint-method"), &which, &eq, &unk);
	if (v || unk) {
		jr_src_arg(&src, p, which, eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
		if (unk)
			jr_set_unknown(cx, JR_RECOMPUTE, &src, "a value computed at run time");
		else if (!strcmp(v, "uniform") || !strcmp(v, "block"))
			jr_set_int(cx, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, &src);
	}
	jr_arg_flag(cx, p, 1, JR_RECOMPUTE, ADV_RECOMPUTE_SELECTIVE, NAMES("--recompute-activations"));
	if (!jr_get(cx, JR_RECOMPUTE)->set) {
		/* Megatron's documented default: no recompute
		 * (recompute_granularity None; a DeepSpeed config may have said
		 * otherwise). */
		meg_default(&src, "megatron default (no --recompute-granularity: none)");
		jr_set_int(cx, JR_RECOMPUTE, ADV_RECOMPUTE_NONE, &src);
	}
}

static void attention(struct jr_ctx *cx, const struct jr_cmd *p)
{
	struct jobread_src src;
	const char *v, *which;
	bool eq, unk;

	v = str_of(p, NAMES("--attention-backend"), &which, &eq, &unk);
	if (v || unk) {
		jr_src_arg(&src, p, which, eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
		if (unk)
			jr_set_unknown(cx, JR_ATTENTION, &src, "a value computed at run time");
		else if (!strcmp(v, "unfused") || !strcmp(v, "local"))
			jr_set_int(cx, JR_ATTENTION, ADV_ATTN_EAGER, &src);
		else if (!strcmp(v, "flash") || !strcmp(v, "fused") || !strcmp(v, "auto"))
			jr_set_int(cx, JR_ATTENTION, ADV_ATTN_FLASH, &src);
		return;
	}
	jr_arg_flag(cx, p, 1, JR_ATTENTION, ADV_ATTN_FLASH, NAMES("--use-flash-attn"));
}

static void checkpoint(struct jr_ctx *cx, const struct jr_cmd *p)
{
	struct jobread_src src;
	int save = jr_arg_find(p, 1, "--save", NULL, NULL);
	bool interval = jr_arg_find(p, 1, "--save-interval", NULL, NULL) >= 0;

	if (save < 0) {
		/* Without --save Megatron writes no checkpoint at all. */
		jr_src_arg(&src, p, interval ? "--save-interval" : NULL, JR_STYLE_FLAG);
		src.key[0] = '\0';
		jr_set_int(cx, JR_CKPT_OFF, 1, &src);
		return;
	}
	if (!interval) {
		jr_src_arg(&src, p, "--save", JR_STYLE_FLAG);
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-ckpt=DURATION",
			"%s:%d: --save without --save-interval: Megatron refuses to start", src.file,
			src.line);
		return;
	}
	jr_arg_int(cx, p, 1, JR_CKPT_STEPS, NAMES("--save-interval"));
}

/* Whether the command has any flag at all (or a word not known before it
 * runs, which the readers above report one by one). */
static bool any_flags(const struct jr_cmd *p)
{
	for (int i = 1; i < p->argc; i++)
		if ((p->unknown && p->unknown[i]) || (p->argv[i] && p->argv[i][0] == '-'))
			return true;
	return false;
}

bool jr_fw_megatron(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct jobread_src src;
	const char *v, *which;
	bool eq, unk, ds;
	long long layers = 0;

	if (!prog || prog->argc < 1 || !prog->argv[0] || !is_megatron(prog, is_module))
		return false;
	ds = has(prog, "--deepspeed");
	jr_src_arg(&src, prog, ds ? "--deepspeed" : NULL, ds ? JR_STYLE_BOOL : JR_STYLE_FLAG);
	if (!ds)
		src.key[0] = '\0';
	jr_set_trainer(cx, "megatron", ds ? ADV_FW_DEEPSPEED : ADV_FW_MEGATRON, &src);
	if (!any_flags(prog)) {
		/* Megatron stops without the model's shape (arguments.py,
		 * validate_args: num_layers, hidden_size, num_attention_heads
		 * must not be None), so a command with no flag at all gets its
		 * flags from somewhere the reader does not see: a variable of
		 * the submitting environment (sbatch --export) that is empty
		 * here.  Nothing is taken for them, not even Megatron's
		 * defaults: the command line that runs is not this one. */
		jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-model=NAME --llm-layout=LIST",
			"%s:%d: %s runs without any flag, though Megatron requires --num-layers, "
			"--hidden-size and --num-attention-heads: its flags come from outside the script (a variable "
			"of the submitting environment?), so its model, layout, batches and precision "
			"are not known", src.file, src.line, jr_basename(prog->argv[0]));
		return true;
	}
	/* The DeepSpeed config first: the flags win over it. */
	v = str_of(prog, NAMES("--deepspeed_config", "--deepspeed-config"), &which, &eq, &unk);
	if (v)
		jr_read_ds_config(cx, v);
	else if (unk) {
		jr_src_arg(&src, prog, which, JR_STYLE_FLAG);
		jr_set_unknown(cx, JR_ZERO, &src, "a DeepSpeed config named at run time");
	}
	jr_arg_int(cx, prog, 1, JR_TP, NAMES("--tensor-model-parallel-size"));
	jr_arg_int(cx, prog, 1, JR_PP, NAMES("--pipeline-model-parallel-size"));
	jr_arg_int(cx, prog, 1, JR_CP, NAMES("--context-parallel-size"));
	jr_arg_int(cx, prog, 1, JR_EP, NAMES("--expert-model-parallel-size"));
	jr_arg_int(cx, prog, 1, JR_ETP, NAMES("--expert-tensor-parallel-size"));
	jr_arg_flag(cx, prog, 1, JR_SP, 1, NAMES("--sequence-parallel"));
	arch(cx, prog, &layers);
	vpp(cx, prog, layers);
	jr_arg_int(cx, prog, 1, JR_SEQ, NAMES("--seq-length"));
	jr_arg_int(cx, prog, 1, JR_MBS, NAMES("--micro-batch-size"));
	jr_arg_int(cx, prog, 1, JR_GBS, NAMES("--global-batch-size"));
	precision(cx, prog);
	recompute(cx, prog);
	attention(cx, prog);
	jr_arg_flag(cx, prog, 1, JR_ZERO, 1, NAMES("--use-distributed-optimizer"));
	jr_arg_int(cx, prog, 1, JR_ZERO, NAMES("--zero-stage"));
	/* Megatron-DeepSpeed in bf16 without ZeRO runs DeepSpeed's
	 * BF16_Optimizer, which partitions the fp32 master weights and the
	 * optimizer states over data parallel as ZeRO-1 does (fw_deepspeed.c;
	 * BLOOM's scripts: "bf16 must use z0! it implements its own zero stage
	 * 1 equivalent"). */
	if (ds) {
		const struct jobread_value *z = jr_get(cx, JR_ZERO), *p = jr_get(cx, JR_PRECISION);

		if ((!z->set || (!z->unknown && z->i == 0)) && p->set && !p->unknown &&
		    p->i == ADV_PREC_BF16 && has(prog, "--bf16")) {
			jr_src_arg(&src, prog, "--bf16", JR_STYLE_BOOL);
			adv_strlcpy(src.key, "--bf16 (DeepSpeed BF16_Optimizer: ZeRO-1)", sizeof(src.key));
			jr_set_int(cx, JR_ZERO, 1, &src);
		}
	}
	checkpoint(cx, prog);
	vocab(cx, prog);
	memory_flags(cx, prog);
	{
		const char *b = jr_basename(prog->argv[0]);

		jr_src_arg(&src, prog, has(prog, "--finetune") ? "--finetune" : NULL, JR_STYLE_BOOL);
		src.key[0] = '\0';
		jr_set_int(cx, JR_TASK, has(prog, "--finetune") || !strncmp(b, "finetune", 8)
			   ? ADV_TASK_FINETUNE : ADV_TASK_TRAIN, &src);
	}
	return true;
}
