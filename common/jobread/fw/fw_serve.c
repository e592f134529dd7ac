/*
 * fw_serve.c - serving engines: vLLM and SGLang, read from their server
 * arguments, and the other servers (TensorRT-LLM, TGI, LMDeploy,
 * llama.cpp, ollama, Basaran) from a table of their programs and options
 * (second half of the file, where their upstream parsers are cited).  The
 * task is inference.
 *
 * vLLM (vllm/engine/arg_utils.py EngineArgs.add_cli_args, and
 * vllm/entrypoints/cli/serve.py): `vllm serve MODEL` (also `python -m
 * vllm.entrypoints.cli.main serve`, the console script's module, and the
 * vllm/vllm-openai image, whose entrypoint is the OpenAI server) or
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
 * token budget; human-readable like --max-model-len), and --config FILE
 * (a YAML of the same options, which the command line's flags override).
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

/* A container image's name without its registry, tag or digest:
 * "docker://ghcr.io/huggingface/text-generation-inference:2.4" is
 * "text-generation-inference". */
static bool image_is(const char *image, const char *name)
{
	const char *b = jr_basename(image);
	size_t n = strlen(name);

	return !strncmp(b, name, n) && (!b[n] || b[n] == ':' || b[n] == '@');
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

	int prec;

	if (!opt(p, from, NAMES("--dtype"), &v, &unk, &src) || unk || !v)
		return;
	if ((prec = jr_torch_dtype(v)) >= 0)
		jr_set_int(cx, JR_PRECISION, prec, &src);
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
int jr_vllm_quant(const char *v)
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
	if ((w = jr_vllm_quant(v)) >= 0) {
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
	else if ((w = jr_vllm_quant(v)) >= 0)
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

	if (!cat || !mv->set || mv->unknown || !mv->s[0] || opt(p, from, quant_names, &v, &unk, &src) ||
	    jr_get(cx, JR_WEIGHTS)->set)
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

/* "--model "$M"" with M set nowhere the reader sees (the submission's
 * environment has it, or not): said, not read as no model at all. */
#define EMPTY_MODEL "an empty value (a variable not set when the job was read)"

static void model_at(struct jr_ctx *cx, const struct jr_cmd *p, int i)
{
	struct jobread_src src;

	jr_src_word(&src, p, i, NULL, JR_STYLE_FLAG);
	if (p->unknown && p->unknown[i])
		jr_set_unknown(cx, JR_MODEL, &src, "a value computed at run time");
	else if (!p->argv[i][0])
		jr_set_unknown(cx, JR_MODEL, &src, EMPTY_MODEL);
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
	if (unk || !v || !v[0])
		jr_set_unknown(cx, JR_MODEL, &src, unk ? "a value computed at run time"
				 : v ? EMPTY_MODEL : "no model named");
	else
		jr_model_ref(cx, v, &src);
}

/*
 * vLLM's --config FILE (vllm/utils FlexibleArgumentParser: a YAML file of
 * `option: value`, each made the "--option value" words ahead of the
 * command line's, so that a flag the job also gives wins; a key may be
 * written with dashes or underscores).  The keys that set a field are read
 * here, before the flags.
 */
static void vllm_config(struct jr_ctx *cx, const struct jr_cmd *p, int from)
{
	static const struct {
		const char *key;
		enum jobread_field f;
	} counts[] = {
		{ "tensor-parallel-size", JR_TP }, { "pipeline-parallel-size", JR_PP },
		{ "data-parallel-size", JR_DP }, { "max-model-len", JR_SEQ },
		{ "max-num-seqs", JR_MAX_SEQS }, { "max-num-batched-tokens", JR_PREFILL_CHUNK },
	};
	struct jobread_src src;
	const char *v, *display = NULL, *t;
	const struct cfg_node *root, *n;
	const cfg_t *cfg;
	bool unk;
	long long x;
	double f;
	int w;

	if (!opt(p, from, NAMES("--config"), &v, &unk, &src) || !v)
		return;
	if (unk) {
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-layout=LIST",
			"%s:%d: vLLM's --config is named at run time: what it sets is not known",
			src.file, src.line);
		return;
	}
	cfg = jr_load(cx, v, CFG_YAML, &display);
	root = cfg ? cfg_root(cfg) : NULL;
	if (!root || root->type != CFG_MAP)
		return;
	for (n = root->child; n; n = n->next) {
		size_t kl = n->key ? strlen(n->key) : 0;

		if (!kl)
			continue;
		jr_src_node(&src, display, n, n->key, JR_STYLE_YAML);
		t = cfg_str(n);
		for (size_t k = 0; k < ADV_ARRAY_SIZE(counts); k++)
			if (jr_same_key(n->key, kl, counts[k].key)) {
				if (t && human_int(t, &x) && x > 0 && x <= INT_MAX)
					jr_set_int(cx, counts[k].f, x, &src);
				else if (t && strcmp(t, "auto") && strcmp(t, "-1"))
					jr_set_unknown(cx, counts[k].f, &src, t);
			}
		if (!t)
			continue;
		if (jr_same_key(n->key, kl, "model") && t[0] && !jr_get(cx, JR_MODEL)->set)
			jr_model_ref(cx, t, &src);   /* `vllm serve MODEL` wins */
		else if (jr_same_key(n->key, kl, "dtype") && jr_torch_dtype(t) >= 0)
			jr_set_int(cx, JR_PRECISION, jr_torch_dtype(t), &src);
		else if (jr_same_key(n->key, kl, "kv-cache-dtype"))
			jr_out(cx)->kv_fp8 = !strncasecmp(t, "fp8", 3);
		else if (jr_same_key(n->key, kl, "quantization") && (w = jr_vllm_quant(t)) >= 0) {
			jr_set_int(cx, JR_WEIGHTS, w, &src);
			if (w == ADV_WEIGHTS_FP8)
				jr_set_int(cx, JR_PRECISION, ADV_PREC_FP8, &src);
		} else if (jr_same_key(n->key, kl, "gpu-memory-utilization") && cfg_num(n, &f) &&
			   f > 0 && f <= 1)
			jr_set_int(cx, JR_MEM_SHARE, (long long)(f * 1000 + 0.5), &src);
	}
}

bool jr_fw_vllm(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct jobread_src src;
	const char *a0, *v;
	bool serve, trl, unk, image;
	int from = 1;
	long long tp, pp, dp;

	if (!prog || prog->argc < 1 || !prog->argv[0])
		return false;
	a0 = prog->argv[0];
	/* `vllm serve`, also as `python -m vllm.entrypoints.cli.main serve`
	 * (the console script's module). */
	serve = (is_module ? !strcmp(a0, "vllm.entrypoints.cli.main")
			   : !strcmp(jr_basename(a0), "vllm")) && prog->argc > 1 &&
		prog->argv[1] && !strcmp(prog->argv[1], "serve");
	/* The vllm/vllm-openai image: its entrypoint is the OpenAI server,
	 * given the words after the image (launch.c). */
	image = !is_module && strchr(a0, '/') && image_is(a0, "vllm-openai");
	/* TRL's generation server for online RL (`trl vllm-serve`,
	 * trl/scripts/vllm_serve.py): vLLM with TRL's argument names. */
	trl = !is_module && !strcmp(jr_basename(a0), "trl") && prog->argc > 1 && prog->argv[1] &&
	      !strcmp(prog->argv[1], "vllm-serve");
	if (trl)
		from = 2;
	else if (is_module && !strcmp(a0, "trl.scripts.vllm_serve"))
		trl = true;
	if (!serve && !trl && !image &&
	    !(is_module && (!strcmp(a0, "vllm.entrypoints.openai.api_server") ||
			    !strcmp(a0, "vllm.entrypoints.api_server"))))
		return false;
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	jr_set_trainer(cx, "vllm", -1, &src);
	/* A server: known before its model is read, whose name may say
	 * how the weights are stored (jr_model_ref). */
	task_infer(cx, prog);
	quantization_stated(cx, prog, serve ? 2 : image ? 1 : from, NAMES("--quantization", "-q"));
	if (serve || image) {
		from = serve ? 2 : 1;
		/* `vllm serve MODEL`: the model is the first word, unless
		 * --model is given. */
		if (from < prog->argc && prog->argv[from] && prog->argv[from][0] != '-') {
			model_at(cx, prog, from);
			from++;
		}
	}
	if (!trl)
		vllm_config(cx, prog, from);
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

/* ==== the other servers: a table of programs and their options =================== */

/*
 * Servers read the same way, from a table: the program (its name, the
 * module python -m runs, or the container image whose entrypoint it is),
 * where its model is named, and its options that set a field, each with
 * the environment variable the program reads when the flag is absent
 * (clap's `env`, llama.cpp's LLAMA_ARG_*).  What a server does beyond a
 * count (its world, its quantization names) is its own function.
 *
 * - TensorRT-LLM trtllm-serve (NVIDIA/TensorRT-LLM
 *   tensorrt_llm/commands/serve.py at 00209af, click): `trtllm-serve
 *   [serve] MODEL`; --tp_size/--tensor_parallel_size,
 *   --pp_size/--pipeline_parallel_size, --cp_size/--context_parallel_size
 *   (each default 1), --ep_size/--moe_expert_parallel_size,
 *   --max_batch_size, --max_num_tokens, --max_seq_len (defaults from
 *   BuildConfig, or the model's), --kv_cache_free_gpu_memory_fraction
 *   (0.9 of the memory left after the weights), --backend
 *   pytorch|tensorrt|_autodeploy, and --config/--extra_llm_api_options
 *   YAML whose keys (tensor_parallel_size, ..., kv_cache_config.dtype,
 *   enable_attention_dp) override the flags (update_llm_args_with_extra_
 *   dict).  It starts its own MPI workers, tp x pp x cp; under
 *   trtllm-llmapi-launch (run by srun or mpirun, one task per GPU) the
 *   launcher's tasks are the workers.
 * - Hugging Face TGI text-generation-launcher (huggingface/text-
 *   generation-inference launcher/src/main.rs at d957e32, clap with
 *   `env`: every flag also read from its upper-case variable):
 *   --model-id/MODEL_ID, --num-shard/NUM_SHARD, --sharded/SHARDED,
 *   --quantize/QUANTIZE, --dtype/DTYPE, --kv-cache-dtype/KV_CACHE_DTYPE,
 *   --max-total-tokens/MAX_TOTAL_TOKENS, --max-batch-prefill-tokens,
 *   --max-batch-size, --cuda-memory-fraction (default 1.0).  The shards
 *   (tensor parallel) default to the entries of CUDA_VISIBLE_DEVICES or
 *   NVIDIA_VISIBLE_DEVICES (find_num_shards), which Slurm sets to the
 *   GPUs of the step (those srun names, else the job's on the node); 1
 *   when neither is set or --sharded false.  The image
 *   ghcr.io/huggingface/text-generation-inference runs it.
 * - LMDeploy `lmdeploy serve api_server MODEL` (InternLM/lmdeploy
 *   lmdeploy/cli/serve.py and cli/utils.py ArgumentHelper): --tp (1),
 *   --session-len, --max-batch-size, --max-prefill-token-num,
 *   --cache-max-entry-count (0.8 of the memory left after the weights),
 *   --model-format awq|gptq (4-bit), --quant-policy 4|8 (KV cache int4,
 *   int8), --dtype auto|float16|bfloat16.
 * - llama.cpp llama-server (ggml-org/llama.cpp common/arg.cpp, each flag
 *   with its LLAMA_ARG_* variable): -m/--model FILE.gguf, -hf/--hf-repo,
 *   -c/--ctx-size (shared by the -np/--parallel slots), -ngl/
 *   --n-gpu-layers, -sm/--split-mode none|layer|row (layer by default:
 *   the layers spread over every visible GPU, as pipeline stages),
 *   -ts/--tensor-split (a share per GPU; 0 leaves one out).  A GGUF file's
 *   quantization is in the file, not read.
 * - ollama serve (ollama/ollama envconfig/config.go): the model is pulled
 *   and loaded at run time by a client's request (ollama run/pull NAME),
 *   so it is not known from the job; the server takes the visible GPUs.
 *   OLLAMA_NUM_PARALLEL, OLLAMA_CONTEXT_LENGTH.  Image ollama/ollama.
 * - Basaran `python -m basaran` (hyperonym/basaran basaran/__init__.py,
 *   model.py): configured from the environment only: MODEL,
 *   MODEL_LOAD_IN_8BIT, MODEL_LOAD_IN_4BIT, MODEL_HALF_PRECISION (without
 *   it and without quantization the weights load in float32, transformers'
 *   default); device_map "auto" spreads the layers over every visible GPU.
 */

/* How an option's value is read. */
enum srv_conv {
	SC_COUNT = 0,   /* a whole number */
	SC_FRACTION,    /* a share of GPU memory: per mille */
	SC_BOOLSET,     /* a boolean the table's value stands for when true */
};

struct srv_opt {
	enum jobread_field f;
	const char *names[4];   /* flag spellings (NULL-terminated) */
	const char *env;        /* the variable read when no flag is given */
	enum srv_conv conv;
};

enum srv_id { SRV_TRTLLM = 0, SRV_TGI, SRV_LMDEPLOY, SRV_LLAMACPP, SRV_OLLAMA, SRV_BASARAN, SRV_COUNT };

struct server {
	enum srv_id id;
	const char *trainer;    /* the name the job's trainer goes by */
	const char *prog;       /* the program's base name, or NULL */
	const char *sub;        /* '|'-separated subcommands that serve, or NULL */
	const char *sub2;       /* a second word ("lmdeploy serve api_server"), or NULL */
	bool sub_optional;      /* `trtllm-serve MODEL` is `trtllm-serve serve MODEL` */
	const char *module;     /* python -m MODULE, or NULL */
	const char *image;      /* the container image that runs it, or NULL */
	bool model_word;        /* the first operand after the program is the model */
	const char *const *bools;   /* its options that take no value (the rest take one) */
	const char *model_flags[4];
	const char *model_env;
	struct srv_opt opts[8];
};

#define OPT(f, env, conv, ...) { f, { __VA_ARGS__, NULL }, env, conv }

/* trtllm-serve's is_flag options (commands/serve.py), and LMDeploy's
 * store_true ones of api_server (cli/serve.py, cli/utils.py): the other
 * options take a value, so that the model operand is found after them. */
static const char *const trtllm_bools[] = {
	"--trust_remote_code", "--fail_fast_on_attention_window_too_large",
	"--enable_chunked_prefill", NULL,
};
static const char *const lmdeploy_bools[] = {
	"--enable-prefix-caching", "--disable-fastapi-docs", "--allow-terminate-by-client",
	"--enable-abort-handling", "--enable-metrics", "--trust-remote-code",
	"--disable-vision-encoder", "--eager-mode", NULL,
};

static const struct server servers[] = {
	{ SRV_TRTLLM, "trtllm", "trtllm-serve", "serve|grpc", NULL, true,
	  "tensorrt_llm.commands.serve", NULL, true, trtllm_bools, { NULL }, NULL, {
		  OPT(JR_TP, NULL, SC_COUNT, "--tp_size", "--tensor_parallel_size"),
		  OPT(JR_PP, NULL, SC_COUNT, "--pp_size", "--pipeline_parallel_size"),
		  OPT(JR_CP, NULL, SC_COUNT, "--cp_size", "--context_parallel_size"),
		  OPT(JR_EP, NULL, SC_COUNT, "--ep_size", "--moe_expert_parallel_size"),
		  OPT(JR_MAX_SEQS, NULL, SC_COUNT, "--max_batch_size"),
		  OPT(JR_PREFILL_CHUNK, NULL, SC_COUNT, "--max_num_tokens"),
		  OPT(JR_SEQ, NULL, SC_COUNT, "--max_seq_len"),
	  } },
	{ SRV_TGI, "tgi", "text-generation-launcher", NULL, NULL, false, NULL,
	  "text-generation-inference", false, NULL, { "--model-id" }, "MODEL_ID", {
		  OPT(JR_SEQ, "MAX_TOTAL_TOKENS", SC_COUNT, "--max-total-tokens"),
		  OPT(JR_PREFILL_CHUNK, "MAX_BATCH_PREFILL_TOKENS", SC_COUNT,
		      "--max-batch-prefill-tokens"),
		  OPT(JR_MAX_SEQS, "MAX_BATCH_SIZE", SC_COUNT, "--max-batch-size"),
		  OPT(JR_MEM_SHARE, "CUDA_MEMORY_FRACTION", SC_FRACTION, "--cuda-memory-fraction"),
	  } },
	{ SRV_LMDEPLOY, "lmdeploy", "lmdeploy", "serve", "api_server", false, NULL, NULL, true,
	  lmdeploy_bools, { NULL }, NULL, {
		  OPT(JR_TP, NULL, SC_COUNT, "--tp"),
		  OPT(JR_SEQ, NULL, SC_COUNT, "--session-len"),
		  OPT(JR_MAX_SEQS, NULL, SC_COUNT, "--max-batch-size"),
		  OPT(JR_PREFILL_CHUNK, NULL, SC_COUNT, "--max-prefill-token-num"),
	  } },
	{ SRV_LLAMACPP, "llama.cpp", "llama-server", NULL, NULL, false, NULL, NULL, false, NULL,
	  { "-m", "--model" }, "LLAMA_ARG_MODEL", {
		  OPT(JR_MAX_SEQS, "LLAMA_ARG_N_PARALLEL", SC_COUNT, "-np", "--parallel"),
	  } },
	{ SRV_OLLAMA, "ollama", "ollama", "serve", NULL, false, NULL, "ollama", false, NULL,
	  { NULL }, NULL, {
		  OPT(JR_MAX_SEQS, "OLLAMA_NUM_PARALLEL", SC_COUNT, NULL),
		  OPT(JR_SEQ, "OLLAMA_CONTEXT_LENGTH", SC_COUNT, NULL),
	  } },
	{ SRV_BASARAN, "basaran", NULL, NULL, NULL, false, "basaran", "basaran", false, NULL,
	  { NULL }, "MODEL", {
		  OPT(JR_WEIGHTS, "MODEL_LOAD_IN_8BIT", SC_BOOLSET, NULL),
		  OPT(JR_WEIGHTS, "MODEL_LOAD_IN_4BIT", SC_BOOLSET, NULL),
	  } },
};
_Static_assert(ADV_ARRAY_SIZE(servers) == SRV_COUNT, "one row per server");

static const struct server *server_of_image(const char *image)
{
	if (!image)
		return NULL;
	/* vLLM's image runs its OpenAI server (vllm/vllm-openai). */
	for (size_t k = 0; k < ADV_ARRAY_SIZE(servers); k++)
		if (servers[k].image && image_is(image, servers[k].image))
			return &servers[k];
	return NULL;
}

bool jr_image_entry(const char *image)
{
	return image && (server_of_image(image) || image_is(image, "vllm-openai"));
}

/* An option's value, from the flag or else from the program's
 * environment variable: false when neither is given.  v points at buf
 * for a variable. */
static bool srv_value(const struct jr_cmd *p, int from, const char *const names[], const char *env,
		      char *buf, size_t len, const char **v, bool *unk, struct jobread_src *src)
{
	if (names && names[0] && opt(p, from, names, v, unk, src))
		return true;
	if (env && jr_cmd_env(p, env, buf, len, unk, src)) {
		*v = buf;
		return true;
	}
	return false;
}

static void srv_opt_read(struct jr_ctx *cx, const struct jr_cmd *p, int from,
			 const struct srv_opt *o)
{
	struct jobread_src src;
	char buf[128];
	const char *v = NULL;
	bool unk = false;
	long long n;
	double f;
	char *end;

	if (!srv_value(p, from, o->names, o->env, buf, sizeof(buf), &v, &unk, &src))
		return;
	if (unk) {
		if (o->conv != SC_BOOLSET)
			jr_set_unknown(cx, o->f, &src, "a value computed at run time");
		return;
	}
	switch (o->conv) {
	case SC_COUNT:
		if (v && jr_parse_ll(v, &n) && n > 0 && n <= INT_MAX)
			jr_set_int(cx, o->f, n, &src);
		else
			jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
				"%s:%d: %s '%s' is not a whole number; ignored", src.file, src.line,
				src.key, v ? v : "");
		break;
	case SC_FRACTION:
		f = v ? strtod(v, &end) : 0;
		if (v && end != v && !*end && f > 0 && f <= 1)
			jr_set_int(cx, o->f, (long long)(f * 1000 + 0.5), &src);
		else
			jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
				"%s:%d: %s '%s' is not a fraction of GPU memory; ignored", src.file,
				src.line, src.key, v ? v : "");
		break;
	case SC_BOOLSET:
		/* Basaran's is_true: "1", "true", "yes", "on" (any case). */
		if (v && jr_parse_bool(v) == 1)
			jr_set_int(cx, o->f, strstr(o->env, "4BIT") ? ADV_WEIGHTS_INT4 : ADV_WEIGHTS_INT8,
				   &src);
		break;
	}
}

/* A server's default, where the job would state it: the command's line. */
static void srv_default_src(struct jobread_src *src, const struct jr_cmd *p, const char *key)
{
	jr_src_arg(src, p, NULL, JR_STYLE_FLAG);
	adv_strlcpy(src->key, key, sizeof(src->key));
	src->fw_default = true;
}

/*
 * The GPUs of the Slurm step that starts the server, where srun names
 * them (srun(1): --gpus/-G, --gres=gpu[:TYPE]:N, --gpus-per-node,
 * --gpus-per-task with one task): Slurm makes those visible to it.
 * Without them a step has every GPU of the job on its node.  0 when srun
 * names none, -1 when the count is known only at run time.
 */
static long long step_gpus(const struct jr_cmd *p, struct jobread_src *src)
{
	static const char *const names[] = {
		"--gpus", "-G", "--gres", "--gpus-per-node", "--gpus-per-task", NULL,
	};
	int n = 0;
	char *const *w = jr_cmd_before(p, &n);
	long long got = 0;
	bool srun = false;

	for (int k = 0; w && k < n; k++) {
		const char *a = w[k], *v = NULL, *c;
		size_t l;

		if (!a)
			continue;
		if (!strcmp(jr_basename(a), "srun")) {
			srun = true;
			continue;
		}
		if (!srun || a[0] != '-')
			continue;
		for (size_t q = 0; names[q] && !v; q++) {
			l = strlen(names[q]);
			if (!strncmp(a, names[q], l) && a[l] == '=')
				v = a + l + 1;
			else if (!strcmp(a, names[q]) && k + 1 < n)
				v = w[k + 1];
		}
		if (!v)
			continue;
		/* gpu:h100:4, gpu:4, h100:4, 4: the count is the last field;
		 * --gres names other resources too (only gpu counts). */
		if (!strncmp(a, "--gres", 6) && strncmp(v, "gpu", 3))
			continue;
		c = strrchr(v, ':');
		if (!jr_parse_ll(c ? c + 1 : v, &got) || got < 1) {
			got = -1;
			continue;
		}
		/* The job states it: srun's option, not a default. */
		adv_snprintf(src->key, sizeof(src->key), "srun %.*s", (int)(strcspn(a, "=")), a);
		src->fw_default = false;
		src->style = JR_STYLE_FLAG;
	}
	return got;
}

/*
 * The GPUs the server's process sees: the entries of CUDA_VISIBLE_DEVICES
 * (then NVIDIA_VISIBLE_DEVICES) where the job sets it, else those Slurm
 * gives the step on a node (it sets CUDA_VISIBLE_DEVICES to them).
 * literal: count the entries as TGI does ("all" is one).  Returns the
 * count, -1 when it is known only at run time (src says where), 0 when the
 * job's GPUs are not known.
 */
static long long visible_gpus(const struct jr_ctx *cx, const struct jr_cmd *p, bool literal,
			      struct jobread_src *src)
{
	static const char *const vars[] = { "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES" };
	const struct jobread_input *in = jr_input(cx);
	char buf[256];
	bool unk;
	long long n;

	for (size_t k = 0; k < ADV_ARRAY_SIZE(vars); k++) {
		long long cnt = 1;

		if (!jr_cmd_env(p, vars[k], buf, sizeof(buf), &unk, src))
			continue;
		if (unk)
			return -1;
		if (!literal && !strcmp(buf, "all"))
			break;
		for (const char *c = buf; *c; c++)
			cnt += *c == ',';
		return buf[0] || literal ? cnt : 0;
	}
	srv_default_src(src, p, "CUDA_VISIBLE_DEVICES");
	src->style = JR_STYLE_DERIVED;
	if ((n = step_gpus(p, src)) != 0)
		return n;
	if (in->res.gpus_per_node > 0)
		return in->res.gpus_per_node;
	if (in->res.gpus > 0 && in->res.nodes > 0 && in->res.gpus % in->res.nodes == 0)
		return in->res.gpus / in->res.nodes;
	if (in->res.gpus > 0 && in->res.nodes <= 1)
		return in->res.gpus;
	return 0;
}

/* The model: the first word after the program, a flag, or a variable. */
static void srv_model(struct jr_ctx *cx, const struct server *s, const struct jr_cmd *p, int *from)
{
	struct jobread_src src;
	char buf[256];
	const char *v;
	bool unk;

	if (s->id == SRV_LLAMACPP &&
	    srv_value(p, *from, s->model_flags, s->model_env, buf, sizeof(buf), &v, &unk, &src)) {
		/* A GGUF file: its architecture and quantization are in the
		 * file, which is not read. */
		jr_set_unknown(cx, JR_MODEL, &src, unk || !v ? "a value computed at run time"
			       : "a GGUF file, whose architecture is in the file (not read)");
		return;
	}
	if (s->model_word) {
		/* The first operand: click and argparse take options before it
		 * too ("trtllm-serve --tp_size 8 MODEL"). */
		for (int i = *from; i < p->argc && i < *from + 256; i++) {
			const char *w = p->argv[i];
			bool listed = false;

			if (!w)
				break;
			if (w[0] != '-') {
				model_at(cx, p, i);
				if (i == *from)
					(*from)++;
				return;
			}
			for (size_t k = 0; s->bools && s->bools[k]; k++)
				listed = listed || !strcmp(w, s->bools[k]);
			if (!listed && !strchr(w, '='))
				i++;   /* its value */
		}
	}
	if (srv_value(p, *from, s->model_flags[0] ? s->model_flags : NULL, s->model_env, buf,
		      sizeof(buf), &v, &unk, &src)) {
		if (unk || !v || !v[0])
			jr_set_unknown(cx, JR_MODEL, &src, unk ? "a value computed at run time"
				       : v ? EMPTY_MODEL : "no model named");
		else
			jr_model_ref(cx, v, &src);
		return;
	}
	jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
	adv_strlcpy(src.key, s->model_flags[0] ? s->model_flags[0] : s->model_env ? s->model_env : "",
		    sizeof(src.key));
	if (s->id == SRV_OLLAMA)
		jr_set_unknown(cx, JR_MODEL, &src, "ollama loads the model a client asks for at run "
			       "time (ollama run/pull NAME), not named in the job");
	else if (s->id == SRV_LLAMACPP && (opt(p, *from, NAMES("-hf", "--hf-repo", "-hfr"), &v, &unk,
					       &src)))
		jr_set_unknown(cx, JR_MODEL, &src, "a GGUF file of a Hugging Face repository, chosen "
			       "at run time");
	else
		jr_set_unknown(cx, JR_MODEL, &src, "no model named");
}

/* trtllm-serve's YAML (--config/--extra_llm_api_options): it overrides
 * the flags.  Only the keys that set a field are read. */
static void trtllm_yaml(struct jr_ctx *cx, const struct jr_cmd *p, int from, bool *attention_dp)
{
	static const struct {
		const char *key;
		enum jobread_field f;
	} keys[] = {
		{ "tensor_parallel_size", JR_TP }, { "pipeline_parallel_size", JR_PP },
		{ "context_parallel_size", JR_CP }, { "moe_expert_parallel_size", JR_EP },
		{ "max_batch_size", JR_MAX_SEQS }, { "max_num_tokens", JR_PREFILL_CHUNK },
		{ "max_seq_len", JR_SEQ },
	};
	struct jobread_src src;
	const char *v, *display = NULL, *t;
	const struct cfg_node *root, *n;
	const cfg_t *cfg;
	bool unk, b;

	*attention_dp = false;
	if (!opt(p, from, NAMES("--config", "--extra_llm_api_options"), &v, &unk, &src) || !v)
		return;
	if (unk) {
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-layout=LIST",
			"%s:%d: trtllm-serve's %s is named at run time: what it overrides is not known",
			src.file, src.line, src.key);
		return;
	}
	cfg = jr_load(cx, v, CFG_YAML, &display);
	root = cfg ? cfg_root(cfg) : NULL;
	if (!root)
		return;
	for (size_t k = 0; k < ADV_ARRAY_SIZE(keys); k++)
		jr_set_node_int(cx, keys[k].f, display, root, keys[k].key, JR_STYLE_YAML);
	n = cfg_path(root, "kv_cache_config.dtype");
	if ((t = cfg_str(n)))
		jr_out(cx)->kv_fp8 = !strncasecmp(t, "fp8", 3);
	/* quant_config.quant_algo (tensorrt_llm/quantization/mode.py
	 * QuantAlgo): FP8 and its block-scaled form, the 4-bit weight-only
	 * and AWQ/GPTQ ones, the 8-bit weight-only and SmoothQuant ones;
	 * the others (NVFP4, MXFP4 mixes) are said. */
	n = cfg_path(root, "quant_config.quant_algo");
	if ((t = cfg_str(n)) && strcasecmp(t, "null") && strcasecmp(t, "none")) {
		int w = !strncasecmp(t, "FP8", 3) ? ADV_WEIGHTS_FP8
			: !strncasecmp(t, "W4A16", 5) || !strcasecmp(t, "W4A8_AWQ") ? ADV_WEIGHTS_INT4
			: !strncasecmp(t, "W8A16", 5) || !strncasecmp(t, "W8A8_SQ", 7) ? ADV_WEIGHTS_INT8
			: -1;

		jr_src_node(&src, display, n, "quant_config.quant_algo", JR_STYLE_YAML);
		if (w >= 0) {
			jr_set_int(cx, JR_WEIGHTS, w, &src);
			if (w == ADV_WEIGHTS_FP8)
				jr_set_int(cx, JR_PRECISION, ADV_PREC_FP8, &src);
		} else {
			jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-precision=...",
				"%s:%d: quant_config.quant_algo %s is not modelled; memory is judged at the "
				"unquantized dtype", src.file, src.line, t);
		}
	}
	n = cfg_child(root, "enable_attention_dp");
	*attention_dp = n && cfg_bool(n, &b) && b;
}

static void srv_trtllm(struct jr_ctx *cx, const struct jr_cmd *p, int from)
{
	struct jobread_src src;
	const char *v = NULL;
	bool unk = false, adp;

	/* --backend tensorrt serves a built engine: MODEL is its directory,
	 * whose model and layout were fixed when it was built (the engine's
	 * own config.json, not an HF one). */
	if (opt(p, from, NAMES("--backend"), &v, &unk, &src) && v && !unk &&
	    (!strcmp(v, "tensorrt") || !strcmp(v, "trt")) && jr_get(cx, JR_MODEL)->set) {
		src = jr_get(cx, JR_MODEL)->src;
		jr_set_unknown(cx, JR_MODEL, &src, "a TensorRT engine (--backend tensorrt), built "
			       "from a model the job does not name");
	}
	trtllm_yaml(cx, p, from, &adp);
	if (!opt(p, from, NAMES("--kv_cache_free_gpu_memory_fraction", "--free_gpu_memory_fraction"),
		 &v, &unk, &src)) {
		jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
		v = NULL;
	}
	jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
		"%s:%d: trtllm-serve gives its KV cache %s of the memory left after the weights "
		"(--kv_cache_free_gpu_memory_fraction), which advisor does not model: the KV "
		"capacity is costed as a pool of 0.9 of the GPU's memory", src.file, src.line,
		v && !unk ? v : "a share (default 0.9)");
	/* Attention data parallelism (enable_attention_dp) runs inside the
	 * TP group: it takes no GPUs of its own. */
	(void)adp;
	if (jr_cmd_after(p, "trtllm-llmapi-launch"))
		return;   /* srun's or mpirun's tasks are the workers, one per GPU */
	engine_world(cx, p, field_or(cx, JR_TP, 1), field_or(cx, JR_PP, 1), field_or(cx, JR_CP, 1));
}

/* TGI --quantize: its Quantization enum. */
static void srv_tgi_quant(struct jr_ctx *cx, const struct jr_cmd *p, int from)
{
	static const struct {
		const char *name;
		int w;
	} q[] = {
		{ "awq", ADV_WEIGHTS_INT4 }, { "gptq", ADV_WEIGHTS_INT4 }, { "marlin", ADV_WEIGHTS_INT4 },
		{ "bitsandbytes-nf4", ADV_WEIGHTS_INT4 }, { "bitsandbytes-fp4", ADV_WEIGHTS_INT4 },
		{ "bitsandbytes", ADV_WEIGHTS_INT8 }, { "eetq", ADV_WEIGHTS_INT8 },
		{ "fp8", ADV_WEIGHTS_FP8 },
	};
	struct jobread_src src;
	char buf[64];
	const char *v;
	bool unk;

	if (srv_value(p, from, NAMES("--quantize"), "QUANTIZE", buf, sizeof(buf), &v, &unk, &src) &&
	    v) {
		if (unk) {
			jr_set_unknown(cx, JR_WEIGHTS, &src, "a quantization chosen at run time");
		} else {
			size_t k;

			for (k = 0; k < ADV_ARRAY_SIZE(q); k++)
				if (!strcasecmp(v, q[k].name)) {
					jr_set_int(cx, JR_WEIGHTS, q[k].w, &src);
					if (q[k].w == ADV_WEIGHTS_FP8)
						jr_set_int(cx, JR_PRECISION, ADV_PREC_FP8, &src);
					break;
				}
			if (k == ADV_ARRAY_SIZE(q))
				jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-precision=...",
					"%s:%d: %s %s is not modelled; memory is judged at the "
					"unquantized dtype", src.file, src.line, src.key, v);
		}
	}
	if (srv_value(p, from, NAMES("--dtype"), "DTYPE", buf, sizeof(buf), &v, &unk, &src) && v &&
	    !unk && jr_torch_dtype(v) >= 0)
		jr_set_int(cx, JR_PRECISION, jr_torch_dtype(v), &src);
	if (srv_value(p, from, NAMES("--kv-cache-dtype"), "KV_CACHE_DTYPE", buf, sizeof(buf), &v, &unk,
		      &src) && v && !unk)
		jr_out(cx)->kv_fp8 = !strncasecmp(v, "fp8", 3);
}

/* TGI's shards (find_num_shards): --num-shard, else --sharded false: 1,
 * else the visible devices, else 1. */
static void srv_tgi(struct jr_ctx *cx, const struct jr_cmd *p, int from, bool image)
{
	struct jobread_src src, ssrc;
	char buf[32];
	const char *v;
	bool unk, sharded_set;
	long long n = -1;
	int sharded = -1;

	srv_tgi_quant(cx, p, from);
	if (!jr_get(cx, JR_MEM_SHARE)->set) {
		srv_default_src(&src, p, "--cuda-memory-fraction");
		jr_set_int(cx, JR_MEM_SHARE, 1000, &src);
	}
	sharded_set = srv_value(p, from, NAMES("--sharded"), "SHARDED", buf, sizeof(buf), &v, &unk,
				&ssrc);
	if (sharded_set && !unk)
		sharded = v ? jr_parse_bool(v) : 1;
	if (srv_value(p, from, NAMES("--num-shard"), "NUM_SHARD", buf, sizeof(buf), &v, &unk, &src)) {
		if (unk || !v || !jr_parse_ll(v, &n) || n < 1) {
			jr_set_unknown(cx, JR_TP, &src, "a value computed at run time");
			engine_world(cx, p, -1, 1, 1);
			return;
		}
	} else if (sharded == 0) {
		n = 1;
		src = ssrc;
	} else if (image && !sharded_set) {
		/* In a container the devices are docker's --gpus, counted from
		 * NVIDIA_VISIBLE_DEVICES as the container sees it. */
		n = visible_gpus(cx, p, true, &src);
		if (n <= 0 || src.style == JR_STYLE_DERIVED) {
			jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
			adv_strlcpy(src.key, "--num-shard", sizeof(src.key));
			jr_set_unknown(cx, JR_TP, &src, "TGI's shards default to the GPUs named in the "
				       "container's NVIDIA_VISIBLE_DEVICES, set by docker at run time");
			engine_world(cx, p, -1, 1, 1);
			return;
		}
	} else {
		n = visible_gpus(cx, p, true, &src);
		if (n < 0) {
			jr_set_unknown(cx, JR_TP, &src, "the GPUs made visible at run time");
			engine_world(cx, p, -1, 1, 1);
			return;
		}
		if (n == 0)
			n = 1;
		if (src.style == JR_STYLE_DERIVED)
			adv_strlcpy(src.key, "--num-shard (default: the GPUs in CUDA_VISIBLE_DEVICES)",
				    sizeof(src.key));
	}
	jr_set_int(cx, JR_TP, n, &src);
	engine_world(cx, p, n, 1, 1);
}

static void srv_lmdeploy(struct jr_ctx *cx, const struct jr_cmd *p, int from)
{
	struct jobread_src src;
	const char *v;
	bool unk;
	long long q;

	if (opt(p, from, NAMES("--model-format"), &v, &unk, &src) && v && !unk &&
	    (!strcasecmp(v, "awq") || !strcasecmp(v, "gptq")))
		jr_set_int(cx, JR_WEIGHTS, ADV_WEIGHTS_INT4, &src);
	dtype(cx, p, from);
	if (opt(p, from, NAMES("--quant-policy"), &v, &unk, &src) && v && !unk && jr_parse_ll(v, &q)) {
		if (q == 8)
			jr_out(cx)->kv_fp8 = true;   /* one byte per value, as fp8 */
		else if (q == 4)
			jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
				"%s:%d: --quant-policy 4 keeps the KV cache in 4 bits, which advisor "
				"costs at 16 bits: the KV capacity may be low", src.file, src.line);
	}
	jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
	jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
		"%s:%d: LMDeploy gives its KV cache a share of the memory left after the weights "
		"(--cache-max-entry-count, default 0.8), which advisor does not model: the KV "
		"capacity is costed as a pool of 0.9 of the GPU's memory", src.file, src.line);
	engine_world(cx, p, field_or(cx, JR_TP, 1), 1, 1);
}

/* llama-server: the GPUs its one process spreads the model over. */
static void srv_llamacpp(struct jr_ctx *cx, const struct jr_cmd *p, int from)
{
	struct jobread_src src, gsrc;
	char buf[256];
	const char *v;
	bool unk;
	long long gpus, ctx, np;
	enum jobread_field split = JR_PP;

	jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
	adv_strlcpy(src.key, "-m", sizeof(src.key));
	jr_set_unknown(cx, JR_WEIGHTS, &src, "the GGUF file's quantization, not read");
	gpus = visible_gpus(cx, p, false, &gsrc);
	if (srv_value(p, from, NAMES("-ngl", "--n-gpu-layers", "--gpu-layers"), "LLAMA_ARG_N_GPU_LAYERS",
		      buf, sizeof(buf), &v, &unk, &src) && v && !unk && !strcmp(v, "0")) {
		jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
			"%s:%d: %s 0 keeps every layer on the CPU: the job's GPUs are not used by the "
			"model", src.file, src.line, src.key);
		return;
	}
	if (srv_value(p, from, NAMES("-sm", "--split-mode"), "LLAMA_ARG_SPLIT_MODE", buf, sizeof(buf),
		      &v, &unk, &src) && v && !unk) {
		if (!strcmp(v, "none"))
			gpus = 1, gsrc = src;
		else if (!strcmp(v, "row"))
			split = JR_TP;
	}
	if (srv_value(p, from, NAMES("-ts", "--tensor-split"), "LLAMA_ARG_TENSOR_SPLIT", buf,
		      sizeof(buf), &v, &unk, &src) && v && !unk && gpus != 1) {
		/* "3,1" or "3/1": a share per device; a 0 leaves one out. */
		long long n = 0;

		for (const char *c = v; *c;) {
			char *end;
			double f = strtod(c, &end);

			if (end == c)
				break;
			n += f > 0;
			c = *end ? end + 1 : end;
		}
		if (n > 0)
			gpus = n, gsrc = src;
	}
	if (gpus < 0) {
		jr_set_unknown(cx, JR_WORLD, &gsrc, "the GPUs made visible at run time");
		return;
	}
	if (gpus == 0)
		return;
	if (gpus > 1)
		jr_set_int(cx, split, gpus, &gsrc);
	jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';
	jr_set_int(cx, JR_WORLD, gpus, &src);
	/* -c is shared by the slots: a sequence has ctx / np. */
	if (srv_value(p, from, NAMES("-c", "--ctx-size"), "LLAMA_ARG_CTX_SIZE", buf, sizeof(buf), &v,
		      &unk, &src) && v && !unk && jr_parse_ll(v, &ctx) && ctx > 0) {
		np = field_or(cx, JR_MAX_SEQS, 0);
		if (np > 0) {
			adv_strlcpy(src.key, "-c / -np", sizeof(src.key));
			jr_set_int(cx, JR_SEQ, ctx / np > 0 ? ctx / np : 1, &src);
		}
	}
}

/* ollama serve and Basaran: one process over every visible GPU. */
static void srv_all_visible(struct jr_ctx *cx, const struct jr_cmd *p, bool layers)
{
	struct jobread_src src;
	long long gpus = visible_gpus(cx, p, false, &src);

	if (gpus < 0) {
		jr_set_unknown(cx, JR_WORLD, &src, "the GPUs made visible at run time");
		return;
	}
	if (gpus == 0)
		return;
	if (layers && gpus > 1)
		jr_set_int(cx, JR_PP, gpus, &src);
	jr_src_arg(&src, p, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';
	jr_set_int(cx, JR_WORLD, gpus, &src);
}

static void srv_basaran(struct jr_ctx *cx, const struct jr_cmd *p)
{
	struct jobread_src src;
	char buf[32];
	bool unk;

	if (jr_cmd_env(p, "MODEL_HALF_PRECISION", buf, sizeof(buf), &unk, &src) && !unk &&
	    jr_parse_bool(buf) == 1) {
		jr_set_int(cx, JR_PRECISION, ADV_PREC_FP16, &src);
	} else if (jr_get(cx, JR_WEIGHTS)->set && !jr_get(cx, JR_WEIGHTS)->unknown) {
		/* Quantized loads cast the rest to float16 (model.py). */
		src = jr_get(cx, JR_WEIGHTS)->src;
		jr_set_int(cx, JR_PRECISION, ADV_PREC_FP16, &src);
	} else {
		srv_default_src(&src, p, "MODEL_HALF_PRECISION");
		jr_set_int(cx, JR_PRECISION, ADV_PREC_FP32, &src);
	}
	srv_all_visible(cx, p, true);
}

/* The server a stripped command runs, and the index of its first
 * argument; NULL when none. */
static const struct server *server_of(const struct jr_cmd *p, bool is_module, int *from, bool *image)
{
	const char *a0 = p->argv[0], *b = jr_basename(a0);

	*from = 1;
	*image = false;
	for (size_t k = 0; k < ADV_ARRAY_SIZE(servers); k++) {
		const struct server *s = &servers[k];

		if (is_module ? s->module && !strcmp(a0, s->module) : s->prog && !strcmp(b, s->prog)) {
			if (!s->sub)
				return s;
			if (p->argc > 1 && p->argv[1] && jr_word_in(p->argv[1], s->sub)) {
				*from = 2;
				if (!s->sub2)
					return s;
				if (p->argc > 2 && p->argv[2] && !strcmp(p->argv[2], s->sub2)) {
					*from = 3;
					return s;
				}
				continue;
			}
			/* trtllm-serve's DefaultGroup: a first word that is no
			 * subcommand of it starts `serve` (trtllm-serve MODEL);
			 * the disaggregated ones are not read. */
			if (s->sub_optional && p->argc > 1 && p->argv[1] &&
			    !jr_word_in(p->argv[1], "disaggregated|disaggregated_mpi_worker|"
					     "mm_embedding_serve"))
				return s;
			continue;
		}
	}
	if (!is_module && server_of_image(a0) && strchr(a0, '/') != NULL) {
		/* The image's entrypoint, given the words after the image
		 * (launch.c hands them on with the image in front). */
		const struct server *s = server_of_image(a0);

		*image = true;
		if (s->sub && p->argc > 1 && p->argv[1] && jr_word_in(p->argv[1], s->sub))
			*from = 2;
		else if (s->sub && p->argc > 1 && p->argv[1] && p->argv[1][0] != '-')
			return NULL;   /* ollama/ollama pull ...: not the server */
		return s;
	}
	return NULL;
}

bool jr_fw_server(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	const struct server *s;
	struct jobread_src src;
	int from;
	bool image;

	if (!prog || prog->argc < 1 || !prog->argv[0] || (prog->unknown && prog->unknown[0]))
		return false;
	s = server_of(prog, is_module, &from, &image);
	if (!s)
		return false;
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	jr_set_trainer(cx, s->trainer, -1, &src);
	task_infer(cx, prog);
	srv_model(cx, s, prog, &from);
	for (size_t k = 0; k < ADV_ARRAY_SIZE(s->opts) && (s->opts[k].env || s->opts[k].names[0]); k++)
		srv_opt_read(cx, prog, from, &s->opts[k]);
	if (!jr_get(cx, JR_WEIGHTS)->set)
		checkpoint_dtype(cx, prog, from, NAMES("--quantize"));
	switch (s->id) {
	case SRV_TRTLLM:
		srv_trtllm(cx, prog, from);
		break;
	case SRV_TGI:
		srv_tgi(cx, prog, from, image);
		break;
	case SRV_LMDEPLOY:
		srv_lmdeploy(cx, prog, from);
		break;
	case SRV_LLAMACPP:
		srv_llamacpp(cx, prog, from);
		break;
	case SRV_OLLAMA:
		/* llama.cpp's layer split when a model needs several GPUs. */
		srv_all_visible(cx, prog, true);
		break;
	case SRV_BASARAN:
		srv_basaran(cx, prog);
		break;
	case SRV_COUNT:
		break;
	}
	return true;
}
