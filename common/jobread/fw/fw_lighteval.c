/*
 * fw_lighteval.c - evaluation jobs: lighteval (`lighteval vllm MODEL_ARGS
 * TASKS ...`, `lighteval accelerate`, `lighteval sglang`) and the
 * lm-evaluation-harness (`lm_eval --model hf|vllm --model_args ...`,
 * below), both with a comma-separated model string read by one splitter.
 * An evaluation generates with the model: the task is inference.
 *
 * huggingface/lighteval src/lighteval/main_vllm.py: MODEL_ARGS is a YAML
 * file (a name ending in .yaml) or a string of key=value pairs separated
 * by commas, generation_parameters={...} cut out first (its braces hold
 * commas of their own); the pairs build VLLMModelConfig
 * (src/lighteval/models/vllm/vllm_model.py), whose fields and defaults are
 * model_name (required), dtype "bfloat16", tensor_parallel_size 1,
 * data_parallel_size 1, pipeline_parallel_size 1, gpu_memory_utilization
 * 0.9, max_model_length None (the model's own), quantization None,
 * max_num_seqs 128 and max_num_batched_tokens 2048, handed to vLLM's LLM()
 * as model, dtype, tensor_parallel_size, pipeline_parallel_size,
 * max_model_len, max_num_seqs, max_num_batched_tokens.  With
 * data_parallel_size > 1 lighteval starts that many vLLM engines through
 * Ray, one per tensor-parallel group: the GPUs taken are tp x pp x dp.
 * `lighteval accelerate` and `lighteval sglang` take the same string
 * (ModelConfig._parse_args); of them only model_name and dtype are read.
 * The YAML form is not read: what it configures is said to be unknown.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobread/ctx.h"
#include "jobread/reader.h"
#include "util.h"

/* Keys of the model string read here: more is not a real job. */
#define LE_MAX_PAIRS 64

struct le_pair {
	char key[48];
	char val[256];
	bool unknown;     /* holds a value computed at run time */
};

/* A value the shell could not know keeps its placeholder: "$(nvidia-smi...)",
 * "${NAME}". */
static bool placeholder(const char *v)
{
	return strstr(v, "$(") || strstr(v, "${") || strchr(v, '`');
}

/* Splits "k=v,k2=v2,generation_parameters={a:1,b:2}" at the commas outside
 * braces.  Returns the number of pairs (at most max). */
static int split_pairs(const char *s, struct le_pair *out, int max)
{
	int n = 0;

	while (*s && n < max) {
		const char *e = s, *eq;
		int depth = 0;
		size_t kl, vl;

		while (*e && (depth > 0 || *e != ',')) {
			if (*e == '{' || *e == '(' || *e == '[')
				depth++;
			else if ((*e == '}' || *e == ')' || *e == ']') && depth > 0)
				depth--;
			e++;
		}
		eq = memchr(s, '=', (size_t)(e - s));
		kl = eq ? (size_t)(eq - s) : (size_t)(e - s);
		vl = eq ? (size_t)(e - eq - 1) : 0;
		if (kl > 0 && kl < sizeof(out[n].key)) {
			memcpy(out[n].key, s, kl);
			out[n].key[kl] = '\0';
			if (vl >= sizeof(out[n].val))
				vl = sizeof(out[n].val) - 1;
			memcpy(out[n].val, eq ? eq + 1 : "", vl);
			out[n].val[vl] = '\0';
			out[n].unknown = placeholder(out[n].val);
			n++;
		}
		s = *e ? e + 1 : e;
	}
	return n;
}

static const struct le_pair *pair(const struct le_pair *p, int n, const char *key)
{
	/* The last one wins, as the dict comprehension builds it. */
	for (int k = n - 1; k >= 0; k--)
		if (!strcmp(p[k].key, key))
			return &p[k];
	return NULL;
}

/* Not in the string: VLLMModelConfig's documented default, where the key
 * would be written (jobread_src.fw_default). */
static void fw_default(struct jobread_src *src)
{
	src->line = 0;
	src->fw_default = true;
}

/* A count from the string.  When absent, the config's documented default
 * (dflt > 0) is returned, and set (with the model string as its source)
 * only when set_dflt: lighteval's 1 for the parallel sizes is advisor's own
 * default too, while its max_num_seqs and max_num_batched_tokens differ
 * from vLLM's.  Returns the value, -1 when unknown. */
static long long count(struct jr_ctx *cx, const struct jr_cmd *p, int at, const struct le_pair *ps,
		       int n, const char *key, enum jobread_field f, long long dflt, bool set_dflt)
{
	const struct le_pair *v = pair(ps, n, key);
	struct jobread_src src;
	long long x;

	jr_src_word(&src, p, at, key, JR_STYLE_OVERRIDE);
	if (!v) {
		if (dflt > 0 && set_dflt) {
			fw_default(&src);
			jr_set_int(cx, f, dflt, &src);
		}
		return dflt;
	}
	if (v->unknown) {
		jr_set_unknown(cx, f, &src, v->val);
		return -1;
	}
	if (!jr_parse_ll(v->val, &x) || x <= 0) {
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL, "%s:%d: lighteval %s=%s is not a whole number; "
			"ignored", src.file, src.line, key, v->val);
		return -1;
	}
	jr_set_int(cx, f, x, &src);
	return x;
}

static void dtype(struct jr_ctx *cx, const struct jr_cmd *p, int at, const struct le_pair *ps, int n)
{
	const struct le_pair *v = pair(ps, n, "dtype");
	struct jobread_src src;
	const char *d = v ? v->val : "bfloat16";

	jr_src_word(&src, p, at, "dtype", JR_STYLE_OVERRIDE);
	if (!v)
		fw_default(&src);
	if (v && v->unknown) {
		jr_set_unknown(cx, JR_PRECISION, &src, v->val);
		return;
	}
	/* "auto" keeps the checkpoint's dtype: the engine's default stands. */
	if (jr_torch_dtype(d) >= 0)
		jr_set_int(cx, JR_PRECISION, jr_torch_dtype(d), &src);
}

/* quantization=NAME, handed to vLLM's LLM(): its names (jr_vllm_quant). */
static void quantization(struct jr_ctx *cx, const struct jr_cmd *p, int at, const struct le_pair *ps,
			 int n, const char *who)
{
	const struct le_pair *m = pair(ps, n, "quantization");
	struct jobread_src src;
	int w;

	if (!m || m->unknown || !m->val[0] || !strcasecmp(m->val, "none"))
		return;
	jr_src_word(&src, p, at, "quantization", JR_STYLE_OVERRIDE);
	if ((w = jr_vllm_quant(m->val)) >= 0) {
		jr_set_int(cx, JR_WEIGHTS, w, &src);
		if (w == ADV_WEIGHTS_FP8)
			jr_set_int(cx, JR_PRECISION, ADV_PREC_FP8, &src);
		return;
	}
	jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
		"%s:%d: %s quantization=%s is not modelled; memory is judged at the unquantized dtype",
		src.file, src.line, who, m->val);
}

bool jr_fw_lighteval(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct le_pair *ps;
	const struct le_pair *m;
	struct jobread_src src;
	const char *a0, *sub;
	int at, n;
	bool vllm;

	if (!prog || prog->argc < 3 || !prog->argv[0] || !prog->argv[1])
		return false;
	a0 = prog->argv[0];
	if (is_module ? strcmp(a0, "lighteval") && strcmp(a0, "lighteval.__main__")
		      : strcmp(jr_basename(a0), "lighteval"))
		return false;
	sub = prog->argv[1];
	vllm = !strcmp(sub, "vllm");
	if (!vllm && strcmp(sub, "accelerate") && strcmp(sub, "sglang"))
		return false;   /* endpoint, litellm, ...: the model runs elsewhere */
	at = 2;
	jr_src_word(&src, prog, 0, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';
	jr_set_trainer(cx, "lighteval", -1, &src);
	jr_set_int(cx, JR_TASK, ADV_TASK_INFER, &src);
	if (!prog->argv[at] || (prog->unknown && prog->unknown[at] && !strchr(prog->argv[at], '='))) {
		jr_src_word(&src, prog, at, NULL, JR_STYLE_FLAG);
		jr_set_unknown(cx, JR_MODEL, &src, "lighteval's model arguments, given at run time");
		return true;
	}
	{
		size_t l = strlen(prog->argv[at]);

		if (l > 5 && !strcmp(prog->argv[at] + l - 5, ".yaml")) {
			jr_src_word(&src, prog, at, NULL, JR_STYLE_FLAG);
			jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-model=NAME --llm-layout=LIST",
				"%s:%d: lighteval's model config %s is not read, so its model and "
				"layout are not known", src.file, src.line, prog->argv[at]);
			jr_set_unknown(cx, JR_MODEL, &src, "lighteval's model config file, not read");
			return true;
		}
	}
	ps = calloc(LE_MAX_PAIRS, sizeof(*ps));
	if (!ps)
		return true;
	n = split_pairs(prog->argv[at], ps, LE_MAX_PAIRS);
	jr_src_word(&src, prog, at, "model_name", JR_STYLE_OVERRIDE);
	m = pair(ps, n, "model_name");
	if (!m)
		m = pair(ps, n, "pretrained");   /* the name before lighteval 0.8 */
	if (!m || !m->val[0])
		jr_set_unknown(cx, JR_MODEL, &src, "no model_name in lighteval's model arguments");
	else if (m->unknown)
		jr_set_unknown(cx, JR_MODEL, &src, m->val);
	else
		jr_model_ref(cx, m->val, &src);
	dtype(cx, prog, at, ps, n);
	if (vllm) {
		long long tp, pp, dp;

		tp = count(cx, prog, at, ps, n, "tensor_parallel_size", JR_TP, 1, false);
		pp = count(cx, prog, at, ps, n, "pipeline_parallel_size", JR_PP, 1, false);
		dp = count(cx, prog, at, ps, n, "data_parallel_size", JR_DP, 1, false);
		count(cx, prog, at, ps, n, "max_model_length", JR_SEQ, -1, false);
		count(cx, prog, at, ps, n, "max_num_seqs", JR_MAX_SEQS, 128, true);
		count(cx, prog, at, ps, n, "max_num_batched_tokens", JR_PREFILL_CHUNK, 2048, true);
		if (tp > 0 && pp > 0 && dp > 0 && tp <= INT_MAX / pp && tp * pp <= INT_MAX / dp) {
			/* One engine per tp x pp group, dp of them: the GPUs it takes. */
			jr_src_word(&src, prog, at, NULL, JR_STYLE_FLAG);
			src.key[0] = '\0';
			jr_set_int(cx, JR_WORLD, tp * pp * dp, &src);
		} else {
			jr_src_word(&src, prog, at, NULL, JR_STYLE_FLAG);
			src.key[0] = '\0';
			jr_set_unknown(cx, JR_WORLD, &src, "lighteval's parallel sizes, known at run time");
		}
		quantization(cx, prog, at, ps, n, "lighteval");
	}
	free(ps);
	return true;
}

/*
 * lm-evaluation-harness (EleutherAI/lm-evaluation-harness lm_eval/
 * __main__.py, v0.4): `lm_eval --model hf|vllm --model_args K=V,...`
 * (also `lm-eval`, `python -m lm_eval`, `accelerate launch -m lm_eval`,
 * and the `run` subcommand of the newer CLI).  --model defaults to hf;
 * --model_args is split at commas into key=value pairs
 * (lm_eval/utils.py simple_parse_args_string), read here with the
 * splitter above.  The task is inference.
 * - hf (lm_eval/models/huggingface.py HFLM): pretrained, dtype ("auto":
 *   the checkpoint's), parallelize=True (device_map "auto": the layers
 *   spread over every GPU the process sees, one after another, as
 *   pipeline stages); without it each process holds the whole model on
 *   one GPU, and the processes are the launcher's (accelerate launch: data
 *   parallel), one when there is none.
 * - vllm (lm_eval/models/vllm_causallms.py VLLM): pretrained,
 *   tensor_parallel_size (1), data_parallel_size (1: more start that many
 *   engines through Ray), dtype, gpu_memory_utilization (0.9),
 *   max_model_len, max_num_seqs, quantization (vLLM's names), and the
 *   other keys handed to vLLM's LLM() as they are (kv_cache_dtype): the
 *   GPUs taken are tp x dp.
 * --batch_size N is the sequences run at once (not "auto").
 */
static bool lmeval_prog(const struct jr_cmd *p, bool is_module, int *from)
{
	const char *a0 = p->argv[0];

	*from = 1;
	if (is_module ? strcmp(a0, "lm_eval") && strcmp(a0, "lm_eval.__main__")
		      : strcmp(jr_basename(a0), "lm_eval") && strcmp(jr_basename(a0), "lm-eval"))
		return false;
	if (p->argc > 1 && p->argv[1] && !strcmp(p->argv[1], "run"))
		*from = 2;
	return true;
}

/* "--name V" or "--name=V" from index from; NULL when absent. */
static const char *lm_flag(const struct jr_cmd *p, int from, const char *name, int *at, bool *unk)
{
	const char *const names[] = { name, NULL };
	const char *v = NULL, *which = NULL;
	bool eq = false;
	int i = jr_arg_find_any(p, from, names, &v, &eq, &which);

	if (i < 0 || !v)
		return NULL;
	*at = eq ? i : i + 1;
	*unk = p->unknown && p->unknown[*at];
	return v;
}

bool jr_fw_lmeval(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct le_pair *ps = NULL;
	const struct le_pair *m;
	struct jobread_src src;
	const char *model = "hf", *args, *bs;
	int from, at = -1, mat = -1, bat = -1, n = 0;
	bool unk = false, munk = false, bunk = false, vllm, hf;
	long long x;

	if (!prog || prog->argc < 1 || !prog->argv[0] || !lmeval_prog(prog, is_module, &from))
		return false;
	jr_src_word(&src, prog, 0, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';
	jr_set_trainer(cx, "lm-eval", -1, &src);
	jr_set_int(cx, JR_TASK, ADV_TASK_INFER, &src);
	if ((args = lm_flag(prog, from, "--model", &mat, &munk)))
		model = args;
	vllm = !munk && !strcmp(model, "vllm");
	hf = !munk && (!strcmp(model, "hf") || !strcmp(model, "hf-auto") ||
		       !strcmp(model, "huggingface") || !strcmp(model, "hf-causal"));
	/* The backends set different layouts (apply.c's trainer table):
	 * vLLM's tensor parallelism, transformers' none of its own. */
	if (hf)
		jr_set_trainer(cx, "lm-eval-hf", -1, &src);
	args = lm_flag(prog, from, "--model_args", &at, &unk);
	jr_src_word(&src, prog, at >= 0 ? at : 0, "pretrained", JR_STYLE_OVERRIDE);
	if (!vllm && !hf) {
		/* An API model (openai-completions, local-completions, ...) or one
		 * named at run time: nothing runs on the job's GPUs that is
		 * known here. */
		jr_set_unknown(cx, JR_MODEL, &src, munk ? "lm_eval's --model, given at run time"
			       : "lm_eval's --model is not hf or vllm: the model runs elsewhere");
		return true;
	}
	if (!args || (unk && !strchr(args, '='))) {
		jr_set_unknown(cx, JR_MODEL, &src, args ? "lm_eval's --model_args, given at run time"
			       : "no --model_args");
		return true;
	}
	ps = calloc(LE_MAX_PAIRS, sizeof(*ps));
	if (!ps)
		return true;
	n = split_pairs(args, ps, LE_MAX_PAIRS);
	m = pair(ps, n, "pretrained");
	if (!m || !m->val[0])
		jr_set_unknown(cx, JR_MODEL, &src, "no pretrained= in lm_eval's --model_args");
	else if (m->unknown)
		jr_set_unknown(cx, JR_MODEL, &src, m->val);
	else
		jr_model_ref(cx, m->val, &src);
	if (pair(ps, n, "dtype"))
		dtype(cx, prog, at, ps, n);
	if ((bs = lm_flag(prog, from, "--batch_size", &bat, &bunk)) && !bunk) {
		jr_src_word(&src, prog, bat, "--batch_size", JR_STYLE_FLAG);
		if (jr_parse_ll(bs, &x) && x > 0 && x <= INT_MAX)
			jr_set_int(cx, JR_MAX_SEQS, x, &src);
	}
	if (vllm) {
		long long tp = count(cx, prog, at, ps, n, "tensor_parallel_size", JR_TP, 1, false);
		long long dp = count(cx, prog, at, ps, n, "data_parallel_size", JR_DP, 1, false);

		count(cx, prog, at, ps, n, "max_model_len", JR_SEQ, -1, false);
		count(cx, prog, at, ps, n, "max_num_seqs", JR_MAX_SEQS, -1, false);
		m = pair(ps, n, "gpu_memory_utilization");
		if (m && !m->unknown) {
			char *end;
			double f = strtod(m->val, &end);

			jr_src_word(&src, prog, at, "gpu_memory_utilization", JR_STYLE_OVERRIDE);
			if (end != m->val && !*end && f > 0 && f <= 1)
				jr_set_int(cx, JR_MEM_SHARE, (long long)(f * 1000 + 0.5), &src);
		}
		jr_src_word(&src, prog, at, NULL, JR_STYLE_FLAG);
		src.key[0] = '\0';
		if (tp > 0 && dp > 0 && tp <= INT_MAX / dp)
			jr_set_int(cx, JR_WORLD, tp * dp, &src);
		else
			jr_set_unknown(cx, JR_WORLD, &src, "lm_eval's parallel sizes, known at run time");
	} else {
		const struct jobread_input *in = jr_input(cx);
		long long gpn = in->res.gpus_per_node > 0 ? in->res.gpus_per_node
				: in->res.gpus > 0 && in->res.nodes <= 1 ? in->res.gpus : 0;

		m = pair(ps, n, "parallelize");
		jr_src_word(&src, prog, at, "parallelize", JR_STYLE_OVERRIDE);
		if (m && !m->unknown && jr_parse_bool(m->val) == 1 && !jr_get(cx, JR_WORLD)->set &&
		    gpn > 0) {
			/* One process, its layers over every GPU it sees. */
			if (gpn > 1)
				jr_set_int(cx, JR_PP, gpn, &src);
			jr_set_int(cx, JR_WORLD, gpn, &src);
		} else if (m && !m->unknown && jr_parse_bool(m->val) == 1 && jr_get(cx, JR_WORLD)->set) {
			jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-layout=LIST",
				"%s:%d: parallelize=True under a launcher splits each process's model "
				"over the GPUs it sees, which advisor does not model: each process is "
				"costed with the whole model", src.file, src.line);
		} else if (!jr_get(cx, JR_WORLD)->set) {
			/* No launcher: one process on one GPU (device cuda:0). */
			src.fw_default = true;
			adv_strlcpy(src.key, "parallelize", sizeof(src.key));
			jr_set_int(cx, JR_WORLD, 1, &src);
		}
		m = pair(ps, n, "load_in_4bit");
		if (m && !m->unknown && jr_parse_bool(m->val) == 1) {
			jr_src_word(&src, prog, at, "load_in_4bit", JR_STYLE_OVERRIDE);
			jr_set_int(cx, JR_WEIGHTS, ADV_WEIGHTS_INT4, &src);
		}
		m = pair(ps, n, "load_in_8bit");
		if (m && !m->unknown && jr_parse_bool(m->val) == 1) {
			jr_src_word(&src, prog, at, "load_in_8bit", JR_STYLE_OVERRIDE);
			jr_set_int(cx, JR_WEIGHTS, ADV_WEIGHTS_INT8, &src);
		}
	}
	if (vllm) {
		quantization(cx, prog, at, ps, n, "lm_eval");
		m = pair(ps, n, "kv_cache_dtype");
		if (m && !m->unknown)
			jr_out(cx)->kv_fp8 = !strncasecmp(m->val, "fp8", 3);
	}
	free(ps);
	return true;
}
