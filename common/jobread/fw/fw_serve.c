/*
 * fw_serve.c - serving engines: vLLM and SGLang, read from their server
 * arguments.  The task is inference.
 *
 * vLLM (vllm/engine/arg_utils.py EngineArgs.add_cli_args, and
 * vllm/entrypoints/cli/serve.py): `vllm serve MODEL` or
 * `python -m vllm.entrypoints.openai.api_server --model MODEL`, and TRL's
 * generation server for GRPO/online DPO (`trl vllm-serve --model M` or
 * `python -m trl.scripts.vllm_serve`: --tensor_parallel_size,
 * --data_parallel_size, --max_model_len, --dtype, --kv_cache_dtype,
 * --gpu_memory_utilization; vLLM also reads the underscore spellings);
 * --tensor-parallel-size/-tp, --pipeline-parallel-size/-pp,
 * --data-parallel-size/-dp, --max-model-len (human-readable: "32k" is
 * 32000, "32K" 32768), --max-num-seqs, --dtype (auto keeps the model's),
 * --quantization/-q (fp8 serves in fp8; awq, gptq, mxfp4: the weights'
 * format, memory.c), --kv-cache-dtype,
 * --enable-expert-parallel/-ep (experts spread over tp x dp),
 * --gpu-memory-utilization (the engine's memory pool, default 0.9),
 * --max-num-batched-tokens (the prefill chunk's
 * token budget; human-readable like --max-model-len).
 *
 * SGLang (python/sglang/srt/server_args.py): `python -m
 * sglang.launch_server --model-path M`; --tensor-parallel-size/--tp-size
 * (and argparse's unique prefix --tp), --data-parallel-size/--dp-size
 * (--dp), --expert-parallel-size/--ep-size (--ep), --pipeline-parallel-
 * size/--pp-size, --nnodes, --context-length, --max-running-requests,
 * --quantization, --dtype, --mem-fraction-static (a static pool for
 * weights and KV cache; its default depends on TP), --chunked-prefill-size
 * (the prefill chunk's token budget; -1 turns chunking off, so a prefill
 * holds a whole prompt: --context-length tokens).  With
 * --enable-dp-attention the data-parallel attention runs inside the TP
 * group, so it takes no GPUs of its own.
 *
 * Both engines start one worker per GPU themselves, so the processes a
 * launcher (srun) starts are not the world: the world is the GPUs the
 * engine's layout takes (tp x pp x dp), which the engine compares with
 * the GPUs the job asked for.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobread/ctx.h"
#include "jobread/reader.h"
#include "util.h"

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* An option's value, with its source; false when absent. */
static bool opt(const struct jr_cmd *p, int from, const char *const names[], const char **val,
		bool *unknown, struct jobread_src *src)
{
	const char *v = NULL, *which = NULL;
	bool eq = false;
	int i = jr_arg_find_any(p, from, names, &v, &eq, &which);

	if (i < 0)
		return false;
	*val = v;
	*unknown = p->unknown && (eq ? p->unknown[i] : i + 1 < p->argc && p->unknown[i + 1]);
	jr_src_arg(src, p, which, v ? (eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG) : JR_STYLE_BOOL);
	return true;
}

/* vLLM's human_readable_int: "32k" = 32000, "32K" = 32768, "25.6k". */
static bool human_int(const char *s, long long *out)
{
	static const struct {
		char c;
		double m;
	} suf[] = {
		{ 'k', 1e3 }, { 'm', 1e6 }, { 'g', 1e9 }, { 'K', 1024.0 }, { 'M', 1048576.0 },
		{ 'G', 1073741824.0 },
	};
	char *end;
	double v;

	if (jr_parse_ll(s, out))
		return true;
	if (!s || !(*s >= '0' && *s <= '9'))
		return false;
	v = strtod(s, &end);
	if (end == s || !end[0] || end[1])
		return false;
	for (size_t k = 0; k < ADV_ARRAY_SIZE(suf); k++)
		if (*end == suf[k].c) {
			v *= suf[k].m;
			if (!(v >= 1 && v <= INT_MAX))
				return false;
			*out = (long long)v;
			return true;
		}
	return false;
}

static void set_count(struct jr_ctx *cx, const struct jr_cmd *p, int from, enum jobread_field f,
		      const char *const names[], bool human)
{
	struct jobread_src src;
	const char *v;
	bool unk;
	long long n;

	if (!opt(p, from, names, &v, &unk, &src))
		return;
	if (unk)
		jr_set_unknown(cx, f, &src, "a value computed at run time");
	else if (v && (human ? human_int(v, &n) : jr_parse_ll(v, &n)))
		jr_set_int(cx, f, n, &src);
	else if (v && (!strcmp(v, "auto") || !strcmp(v, "-1")))
		return;   /* the engine picks it from the model */
	else
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL, "%s:%d: %s '%s' is not a whole number; ignored",
			src.file, src.line, src.key, v ? v : "");
}

/* --dtype: bfloat16/bf16, float16/half/fp16, float32/float; auto: the
 * model's own (left to the engine). */
static void dtype(struct jr_ctx *cx, const struct jr_cmd *p, int from)
{
	struct jobread_src src;
	const char *v;
	bool unk;

	if (!opt(p, from, NAMES("--dtype"), &v, &unk, &src) || unk || !v)
		return;
	if (!strcmp(v, "bfloat16") || !strcmp(v, "bf16"))
		jr_set_int(cx, JR_PRECISION, ADV_PREC_BF16, &src);
	else if (!strcmp(v, "float16") || !strcmp(v, "half") || !strcmp(v, "fp16"))
		jr_set_int(cx, JR_PRECISION, ADV_PREC_FP16, &src);
	else if (!strcmp(v, "float32") || !strcmp(v, "float") || !strcmp(v, "fp32"))
		jr_set_int(cx, JR_PRECISION, ADV_PREC_FP32, &src);
}

/*
 * --quantization (vLLM's QUANTIZATION_METHODS, SGLang's the same names):
 * fp8, fbgemm_fp8 and modelopt serve fp8 weights in fp8; awq, gptq and
 * their Marlin kernels (awq_marlin, gptq_marlin) load 4-bit w4a16
 * checkpoints (group scales, memory.c); mxfp4 the MoE experts in MXFP4;
 * experts_int8 and w8a8_int8 int8.  Other schemes (bitsandbytes,
 * compressed-tensors, whose bits are in the checkpoint's config.json) are
 * said, and memory is judged at the dtype.
 */
static int quant_format(const char *v)
{
	if (!strncasecmp(v, "fp8", 3) || !strcasecmp(v, "fbgemm_fp8") || !strcasecmp(v, "modelopt"))
		return ADV_WEIGHTS_FP8;
	if (!strncasecmp(v, "awq", 3) || !strncasecmp(v, "gptq", 4))
		return ADV_WEIGHTS_INT4;
	if (!strcasecmp(v, "mxfp4"))
		return ADV_WEIGHTS_MXFP4;
	if (!strcasecmp(v, "experts_int8") || !strcasecmp(v, "w8a8_int8"))
		return ADV_WEIGHTS_INT8;
	return -1;
}

static void quantization(struct jr_ctx *cx, const struct jr_cmd *p, int from,
			 const char *const names[])
{
	struct jobread_src src;
	const char *v;
	bool unk;
	int w;

	if (!opt(p, from, names, &v, &unk, &src) || !v)
		return;
	if (unk) {
		jr_set_unknown(cx, JR_PRECISION, &src, "a quantization chosen at run time");
		jr_set_unknown(cx, JR_WEIGHTS, &src, "a quantization chosen at run time");
		return;
	}
	if ((w = quant_format(v)) >= 0) {
		jr_set_int(cx, JR_WEIGHTS, w, &src);
		if (w == ADV_WEIGHTS_FP8)
			jr_set_int(cx, JR_PRECISION, ADV_PREC_FP8, &src);
	} else if (strcasecmp(v, "none") != 0)
		jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-precision=...",
			"%s:%d: %s %s is not modelled; memory is judged at the unquantized dtype",
			src.file, src.line, src.key, v);
}

/*
 * Before the model is read: a --quantization the job states is what the
 * server loads, so the model's name is not taken to say it (jr_model_ref:
 * a -FP8 or -AWQ suffix is an assumption only when nothing states the
 * format).  A method the memory model does not have is costed at 16 bits,
 * as quantization() says.  quantization() reads the flag again, after
 * --dtype, for the precision.
 */
static void quantization_stated(struct jr_ctx *cx, const struct jr_cmd *p, int from,
				const char *const names[])
{
	struct jobread_src src;
	const char *v;
	bool unk;
	int w;

	if (!opt(p, from, names, &v, &unk, &src) || !v)
		return;
	if (unk)
		jr_set_unknown(cx, JR_WEIGHTS, &src, "a quantization chosen at run time");
	else if ((w = quant_format(v)) >= 0)
		jr_set_int(cx, JR_WEIGHTS, w, &src);
	else if (strcasecmp(v, "none") != 0)
		jr_set_int(cx, JR_WEIGHTS, ADV_WEIGHTS_16BIT, &src);
}

/*
 * A catalog model whose published checkpoint stores fp8 weights
 * (DeepSeek-V3/R1: config.json quantization_config, quant_method fp8):
 * vLLM takes the checkpoint's quantization when --quantization does not
 * name one (ModelConfig._verify_quantization: quantization_config wins
 * over a None quantization), and so does SGLang (ModelConfig
 * _verify_quantization); --dtype sets the activations' dtype, not the
 * stored weights.  The KV cache stays in the activations' dtype
 * (kv_cache_dtype "auto"), which the engine keeps apart.
 */
static void checkpoint_dtype(struct jr_ctx *cx, const struct jr_cmd *p, int from,
			     const char *const quant_names[])
{
	const struct jobread_value *mv = jr_get(cx, JR_MODEL);
	const catalog_t *cat = jr_catalog(cx);
	const struct adv_model *m;
	const struct adv_gpu *g;
	struct jobread_src src;
	const char *v;
	bool unk;

	if (!cat || !mv->set || mv->unknown || !mv->s[0] || opt(p, from, quant_names, &v, &unk, &src))
		return;
	m = catalog_find_model(cat, mv->s);
	if (m && m->weights_mxfp4 && !jr_get(cx, JR_WEIGHTS)->set) {
		/* gpt-oss: vLLM and SGLang load the MXFP4 experts as
		 * published (vLLM's Mxfp4Config from quantization_config),
		 * on Hopper and Blackwell alike; memory.c costs the experts
		 * at MXFP4 and the rest at 16 bits. */
		memset(&src, 0, sizeof(src));
		adv_snprintf(src.key, sizeof(src.key),
			     "the checkpoint's mxfp4 experts (catalog %s: weights_dtype mxfp4)",
			     m->name);
		jr_set_int(cx, JR_WEIGHTS, ADV_WEIGHTS_MXFP4, &src);
		return;
	}
	if (!m || !m->weights_fp8)
		return;
	g = jr_input(cx)->res.gpu[0] ? catalog_find_gpu(cat, jr_input(cx)->res.gpu) : NULL;
	if (g && g->fp8_tflops <= 0) {
		/* Without fp8 tensor cores the engines run such weights
		 * weight-only (vLLM's FP8 Marlin kernels), which the
		 * precision model here does not have: costed at 16 bits, said. */
		jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-precision=...",
			"%s ships fp8 weights, which %s runs weight-only (no fp8 tensor cores); "
			"they are costed at 16 bits, so the memory estimate may be high", m->name,
			g->name);
		return;
	}
	memset(&src, 0, sizeof(src));
	adv_snprintf(src.key, sizeof(src.key),
		     "the checkpoint's fp8 weights (catalog %s: weights_dtype fp8)", m->name);
	jr_set_int(cx, JR_PRECISION, ADV_PREC_FP8, &src);
}

static void kv_cache(struct jr_ctx *cx, const struct jr_cmd *p, int from)
{
	struct jobread_src src;
	const char *v;
	bool unk;

	if (!opt(p, from, NAMES("--kv-cache-dtype", "--kv_cache_dtype"), &v, &unk, &src) || !v)
		return;
	/* "auto" (the default) keeps the model's dtype; fp8, fp8_e4m3 and
	 * fp8_e5m2 store one byte per value. */
	if (unk)
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-precision=...",
			"%s:%d: %s is chosen at run time; the KV cache is costed in the model's dtype",
			src.file, src.line, src.key);
	else
		jr_out(cx)->kv_fp8 = !strncasecmp(v, "fp8", 3);
}

static long long field_or(const struct jr_ctx *cx, enum jobread_field f, long long dflt)
{
	const struct jobread_value *v = jr_get(cx, f);

	return v->set && !v->unknown ? v->i : v->set ? -1 : dflt;
}

/*
 * vLLM --gpu-memory-utilization, SGLang --mem-fraction-static: the share
 * of GPU memory the engine takes as its pool (memory.c, "Serving pool"),
 * per mille.  Absent, vLLM's 0.9 is the engine's default; SGLang's
 * depends on TP (python/sglang/srt/server_args.py, __post_init__: 0.79
 * from TP 16, 0.81 from 8, 0.85 from 4, 0.87 from 2, else 0.88), set here
 * as the framework's default.
 */
static void mem_fraction(struct jr_ctx *cx, const struct jr_cmd *p, int from,
			 const char *const names[], bool sglang)
{
	struct jobread_src src;
	const char *v;
	bool unk;
	char *end;
	double f;

	if (sglang)
		jr_out(cx)->share_static = true;
	if (!opt(p, from, names, &v, &unk, &src) || !v) {
		long long tp = field_or(cx, JR_TP, 1);

		if (!sglang || tp < 1)
			return;
		jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
		adv_snprintf(src.key, sizeof(src.key), "--mem-fraction-static");
		src.fw_default = true;
		jr_set_int(cx, JR_MEM_SHARE, tp >= 16 ? 790 : tp >= 8 ? 810 : tp >= 4 ? 850
				   : tp >= 2 ? 870 : 880, &src);
		return;
	}
	if (unk) {
		jr_set_unknown(cx, JR_MEM_SHARE, &src, "a value computed at run time");
		return;
	}
	f = strtod(v, &end);
	if (end != v && !*end && f > 0 && f <= 1)
		jr_set_int(cx, JR_MEM_SHARE, (long long)(f * 1000 + 0.5), &src);
	else
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
			"%s:%d: %s '%s' is not a fraction of GPU memory; ignored", src.file, src.line,
			src.key, v);
}

/* SGLang --chunked-prefill-size: a count, or -1 for no chunking (a whole
 * prompt of the context length per prefill). */
static void sglang_chunk(struct jr_ctx *cx, const struct jr_cmd *p, int from)
{
	struct jobread_src src;
	const struct jobread_value *seq = jr_get(cx, JR_SEQ);
	const char *v;
	bool unk;

	if (!opt(p, from, NAMES("--chunked-prefill-size"), &v, &unk, &src) || unk || !v ||
	    strcmp(v, "-1") != 0) {
		set_count(cx, p, from, JR_PREFILL_CHUNK, NAMES("--chunked-prefill-size"), false);
		return;
	}
	if (seq->set && !seq->unknown)
		jr_set_int(cx, JR_PREFILL_CHUNK, seq->i, &src);
	else
		jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
			"%s:%d: --chunked-prefill-size -1 prefills whole prompts, but the context length "
			"is not stated; activations are costed for the default chunk",
			src.file, src.line);
}

/* The GPUs the engine's layout takes: its world, replacing a launcher's
 * process count.  Unknown when a size is. */
static void engine_world(struct jr_ctx *cx, const struct jr_cmd *p, long long tp, long long pp,
			 long long dp)
{
	struct jobread_src src;
	long long w;

	if (tp < 0 || pp < 0 || dp < 0) {
		/* A size known only at run time: so are the engine's workers,
		 * which a launcher's task count does not give either. */
		jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
		src.key[0] = '\0';
		jr_set_unknown(cx, JR_WORLD, &src, "the engine's workers (tp x pp x dp), sizes known "
			       "only at run time");
		return;
	}
	if (tp <= 0 || pp <= 0 || dp <= 0 || tp > INT_MAX / pp || tp * pp > INT_MAX / dp)
		return;
	w = tp * pp * dp;
	jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';   /* derived from the sizes: they are what a fix changes */
	jr_set_int(cx, JR_WORLD, w, &src);
	if (jr_get(cx, JR_NPROC_PER_NODE)->set) {
		const struct jobread_value *nd = jr_get(cx, JR_NODES);
		long long nodes = nd->set && !nd->unknown && nd->i > 0 ? nd->i : 1;

		if (w % nodes == 0)
			jr_set_int(cx, JR_NPROC_PER_NODE, w / nodes, &src);
		else
			jr_set_unknown(cx, JR_NPROC_PER_NODE, &src, "the engine places its own workers");
	}
}

static void task_infer(struct jr_ctx *cx, const struct jr_cmd *p)
{
	struct jobread_src src;

	jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
	jr_set_int(cx, JR_TASK, ADV_TASK_INFER, &src);
}

static void model_at(struct jr_ctx *cx, const struct jr_cmd *p, int i)
{
	struct jobread_src src;

	jr_src_word(&src, p, i, NULL, JR_STYLE_FLAG);
	if (p->unknown && p->unknown[i])
		jr_set_unknown(cx, JR_MODEL, &src, "a value computed at run time");
	else
		jr_model_ref(cx, p->argv[i], &src);
}

static void model_flag(struct jr_ctx *cx, const struct jr_cmd *p, int from, const char *const names[])
{
	struct jobread_src src;
	const char *v;
	bool unk;

	if (!opt(p, from, names, &v, &unk, &src))
		return;
	if (unk || !v)
		jr_set_unknown(cx, JR_MODEL, &src, unk ? "a value computed at run time" : "no model named");
	else
		jr_model_ref(cx, v, &src);
}

bool jr_fw_vllm(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct jobread_src src;
	const char *a0, *v;
	bool serve, trl, unk;
	int from = 1;
	long long tp, pp, dp;

	if (!prog || prog->argc < 1 || !prog->argv[0])
		return false;
	a0 = prog->argv[0];
	serve = !is_module && !strcmp(jr_basename(a0), "vllm") && prog->argc > 1 &&
		prog->argv[1] && !strcmp(prog->argv[1], "serve");
	/* TRL's generation server for online RL (`trl vllm-serve`,
	 * trl/scripts/vllm_serve.py): vLLM with TRL's argument names. */
	trl = !is_module && !strcmp(jr_basename(a0), "trl") && prog->argc > 1 && prog->argv[1] &&
	      !strcmp(prog->argv[1], "vllm-serve");
	if (trl)
		from = 2;
	else if (is_module && !strcmp(a0, "trl.scripts.vllm_serve"))
		trl = true;
	if (!serve && !trl && !(is_module && (!strcmp(a0, "vllm.entrypoints.openai.api_server") ||
					      !strcmp(a0, "vllm.entrypoints.api_server"))))
		return false;
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	jr_set_trainer(cx, "vllm", -1, &src);
	/* A server: known before its model is read, whose name may say
	 * how the weights are stored (jr_model_ref). */
	task_infer(cx, prog);
	quantization_stated(cx, prog, serve ? 2 : from, NAMES("--quantization", "-q"));
	if (serve) {
		from = 2;
		/* `vllm serve MODEL`: the model is the first word, unless
		 * --model is given. */
		if (from < prog->argc && prog->argv[from] && prog->argv[from][0] != '-') {
			model_at(cx, prog, from);
			from++;
		}
	}
	model_flag(cx, prog, from, NAMES("--model"));
	/* vLLM's FlexibleArgumentParser reads "--max_model_len" as
	 * "--max-model-len"; TRL's parser (HfArgumentParser) takes both. */
	set_count(cx, prog, from, JR_TP, NAMES("--tensor-parallel-size", "--tensor_parallel_size", "-tp"),
		  false);
	set_count(cx, prog, from, JR_PP, NAMES("--pipeline-parallel-size", "--pipeline_parallel_size",
					      "-pp"), false);
	set_count(cx, prog, from, JR_DP, NAMES("--data-parallel-size", "--data_parallel_size", "-dp"),
		  false);
	set_count(cx, prog, from, JR_SEQ, NAMES("--max-model-len", "--max_model_len"), true);
	set_count(cx, prog, from, JR_MAX_SEQS, NAMES("--max-num-seqs", "--max_num_seqs"), false);
	set_count(cx, prog, from, JR_PREFILL_CHUNK, NAMES("--max-num-batched-tokens",
							  "--max_num_batched_tokens"), true);
	dtype(cx, prog, from);
	quantization(cx, prog, from, NAMES("--quantization", "-q"));
	checkpoint_dtype(cx, prog, from, NAMES("--quantization", "-q"));
	kv_cache(cx, prog, from);
	mem_fraction(cx, prog, from, NAMES("--gpu-memory-utilization", "--gpu_memory_utilization"),
		     false);
	tp = field_or(cx, JR_TP, 1);
	pp = field_or(cx, JR_PP, 1);
	dp = field_or(cx, JR_DP, 1);
	if (opt(prog, from, NAMES("--enable-expert-parallel", "-ep"), &v, &unk, &src) &&
	    tp > 0 && dp > 0 && tp * dp <= INT_MAX) {
		/* vLLM spreads the experts over the whole TP x DP group. */
		src.style = JR_STYLE_BOOL;
		jr_set_int(cx, JR_EP, tp * dp, &src);
	}
	engine_world(cx, prog, tp, pp, dp);
	return true;
}

bool jr_fw_sglang(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct jobread_src src;
	const char *a0, *v;
	bool unk, dp_attention;
	long long tp, pp, dp;

	if (!prog || prog->argc < 1 || !prog->argv[0])
		return false;
	a0 = prog->argv[0];
	if (!(is_module && (!strcmp(a0, "sglang.launch_server") ||
			    !strcmp(a0, "sglang_router.launch_server"))) &&
	    !(!is_module && !strcmp(jr_basename(a0), "sglang") && prog->argc > 1 && prog->argv[1] &&
	      !strcmp(prog->argv[1], "serve")))
		return false;
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	jr_set_trainer(cx, "sglang", -1, &src);
	task_infer(cx, prog);
	quantization_stated(cx, prog, 1, NAMES("--quantization"));
	model_flag(cx, prog, 1, NAMES("--model-path", "--model"));
	set_count(cx, prog, 1, JR_TP, NAMES("--tensor-parallel-size", "--tp-size", "--tp"), false);
	set_count(cx, prog, 1, JR_PP, NAMES("--pipeline-parallel-size", "--pp-size", "--pp"), false);
	set_count(cx, prog, 1, JR_EP, NAMES("--expert-parallel-size", "--ep-size", "--ep"), false);
	set_count(cx, prog, 1, JR_SEQ, NAMES("--context-length"), false);
	set_count(cx, prog, 1, JR_MAX_SEQS, NAMES("--max-running-requests"), false);
	sglang_chunk(cx, prog, 1);
	set_count(cx, prog, 1, JR_NODES, NAMES("--nnodes"), false);
	dtype(cx, prog, 1);
	quantization(cx, prog, 1, NAMES("--quantization"));
	checkpoint_dtype(cx, prog, 1, NAMES("--quantization"));
	kv_cache(cx, prog, 1);
	mem_fraction(cx, prog, 1, NAMES("--mem-fraction-static"), true);
	dp_attention = opt(prog, 1, NAMES("--enable-dp-attention"), &v, &unk, &src);
	if (!dp_attention) {
		set_count(cx, prog, 1, JR_DP, NAMES("--data-parallel-size", "--dp-size", "--dp"), false);
		dp = field_or(cx, JR_DP, 1);
	} else {
		/* Attention data parallelism lives inside the TP group. */
		dp = 1;
	}
	tp = field_or(cx, JR_TP, 1);
	pp = field_or(cx, JR_PP, 1);
	engine_world(cx, prog, tp, pp, dp);
	return true;
}
