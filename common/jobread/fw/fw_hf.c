/*
 * fw_hf.c - Hugging Face Trainer and TRL scripts (transformers
 * examples/pytorch/language-modeling/run_clm.py and friends, TRL's
 * `trl sft|dpo|...` CLI and examples/scripts/sft.py, the alignment
 * handbook's run_sft.py with a recipe YAML), read from their arguments.
 *
 * The arguments are those of transformers' TrainingArguments
 * (src/transformers/training_args.py) as HfArgumentParser reads them
 * (src/transformers/hf_argparser.py): "--name VALUE" or "--name=VALUE",
 * a boolean given bare means True and takes "true/false/1/0/yes/no" in
 * any case; a single .yaml/.json argument, or TRL's --config FILE, holds
 * the same names as keys, and the command line wins over it.
 * Defaults taken from TrainingArguments: save_strategy "steps" with
 * save_steps 500 (a fraction below 1 is a share of the run's steps, not
 * known before it runs); precision follows --bf16/--fp16, else the
 * dtype the model is loaded in (--torch_dtype), else fp32 weights with no
 * statement, which is left to the engine's default.
 * --fsdp takes FSDP's sharding options ("full_shard auto_wrap":
 * ZeRO 3, "shard_grad_op": ZeRO 2, "hybrid_shard(_zero2)", "no_shard");
 * --deepspeed names a DeepSpeed config (fw_deepspeed.c).
 * PEFT (--use_peft, --lora_r, --peft ...) makes the task lora.
 * --attn_implementation (TRL's ModelConfig, the from_pretrained argument
 * of transformers' AttentionInterface): "eager" is unfused attention,
 * which stores the s x s scores; sdpa, flash_attention_2/3 and flex_attention
 * are fused (flash).
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

/* HF's save_steps default (TrainingArguments). */
#define HF_DEFAULT_SAVE_STEPS 500

struct hf {
	struct jr_ctx *cx;
	const struct jr_cmd *p;
	int from;                       /* first argument (after "trl sft") */
	const struct cfg_node *root;    /* the arguments file, or NULL */
	const char *display;
};

/* One argument, from the command line or else the arguments file. */
struct hfval {
	bool present;
	bool unknown;
	const char *text;               /* NULL: a bare flag */
	struct jobread_src src;
};

static bool get(const struct hf *h, const char *const names[], struct hfval *out)
{
	const char *v = NULL, *which = NULL;
	bool eq = false;
	int i = jr_arg_find_any(h->p, h->from, names, &v, &eq, &which);

	memset(out, 0, sizeof(*out));
	if (i >= 0) {
		int vi = eq ? i : i + 1;

		out->present = true;
		out->text = v;
		out->unknown = v && h->p->unknown && vi < h->p->argc && h->p->unknown[vi];
		jr_src_arg(&out->src, h->p, which, v ? (eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG)
						     : JR_STYLE_BOOL);
		return true;
	}
	for (size_t k = 0; h->root && names[k]; k++) {
		const char *key = names[k] + strspn(names[k], "-");
		const struct cfg_node *n = cfg_child(h->root, key);

		if (!n || n->type == CFG_NULL)
			continue;
		out->present = true;
		out->text = cfg_str(n);
		if (!out->text)
			out->text = "";
		jr_src_node(&out->src, h->display, n, key, JR_STYLE_YAML);
		return true;
	}
	return false;
}

/* HfArgumentParser's string_to_bool; a bare flag is True.  -1: neither. */
static int truth(const struct hfval *v)
{
	return v->text ? jr_parse_bool(v->text) : 1;
}

/* A count: set f, or unknown, or a note when it is not a whole number. */
static bool count(const struct hf *h, enum jobread_field f, const char *const names[])
{
	struct hfval v;
	long long n;

	if (!get(h, names, &v))
		return false;
	if (v.unknown)
		jr_set_unknown(h->cx, f, &v.src, "a value computed at run time");
	else if (v.text && jr_parse_ll(v.text, &n))
		jr_set_int(h->cx, f, n, &v.src);
	else
		jr_note(h->cx, ADV_CODE_SCRIPT_UNKNOWN, NULL, "%s:%d: %s '%s' is not a whole number; ignored",
			v.src.file, v.src.line, v.src.key, v.text ? v.text : "");
	return true;
}

static bool has_ext(const char *s, const char *ext)
{
	size_t n = strlen(s), e = strlen(ext);

	return n > e && !strcasecmp(s + n - e, ext);
}

static bool is_trl(const struct jr_cmd *p, bool is_module)
{
	const char *a0 = p->argv[0];
	const char *b = jr_basename(a0);

	if (is_module)
		return !strcmp(a0, "trl") || !strncmp(a0, "trl.", 4);
	return !strcmp(b, "trl") || !strncmp(b, "sft", 3) || !strncmp(b, "run_sft", 7) ||
	       !strncmp(b, "dpo", 3) || !strncmp(b, "run_dpo", 7) || !strncmp(b, "grpo", 4) ||
	       !strncmp(b, "orpo", 4) || !strncmp(b, "kto", 3);
}

static bool is_hf(const struct hf *h, bool is_module)
{
	static const char *const scripts[] = {
		"run_clm.py", "run_clm_no_trainer.py", "run_mlm.py", "run_plm.py", "run_fim.py",
		"run_sft.py", "run_summarization.py", "run_translation.py", "run_qa.py",
		"run_glue.py", "run_seq2seq_qa.py",
	};
	const char *b = jr_basename(h->p->argv[0]);
	struct hfval v;

	if (!strcmp(b, "trl") && !is_module)
		return h->p->argc > 1;
	if (is_module && (!strcmp(h->p->argv[0], "trl") || !strncmp(h->p->argv[0], "trl.", 4)))
		return true;
	for (size_t k = 0; k < ADV_ARRAY_SIZE(scripts); k++)
		if (!strcmp(b, scripts[k]))
			return true;
	return get(h, NAMES("--model_name_or_path", "--per_device_train_batch_size"), &v) ||
	       (h->root && get(h, NAMES("--model_name", "--output_dir"), &v));
}

static void model(const struct hf *h)
{
	struct hfval v;

	if (get(h, NAMES("--model_name_or_path", "--model_name", "--model"), &v)) {
		if (v.unknown || !v.text || !v.text[0])
			jr_set_unknown(h->cx, JR_MODEL, &v.src, v.unknown ? "a value computed at run time"
								: "no model named");
		else
			jr_model_ref(h->cx, v.text, &v.src);
	}
}

static void precision(const struct hf *h)
{
	struct hfval v;

	if (get(h, NAMES("--bf16"), &v) && truth(&v) == 1) {
		jr_set_int(h->cx, JR_PRECISION, ADV_PREC_BF16, &v.src);
		return;
	}
	if (get(h, NAMES("--fp16"), &v) && truth(&v) == 1) {
		jr_set_int(h->cx, JR_PRECISION, ADV_PREC_FP16, &v.src);
		return;
	}
	/* No mixed precision: the weights train in the dtype they load in. */
	if (get(h, NAMES("--torch_dtype", "--dtype"), &v) && v.text && !v.unknown) {
		if (!strcmp(v.text, "bfloat16"))
			jr_set_int(h->cx, JR_PRECISION, ADV_PREC_BF16, &v.src);
		else if (!strcmp(v.text, "float16"))
			jr_set_int(h->cx, JR_PRECISION, ADV_PREC_FP16, &v.src);
		else if (!strcmp(v.text, "float32"))
			jr_set_int(h->cx, JR_PRECISION, ADV_PREC_FP32, &v.src);
	}
}

static void sharding(const struct hf *h)
{
	struct hfval v;

	if (get(h, NAMES("--deepspeed"), &v)) {
		struct hfval z;
		long long n;

		if (v.unknown)
			jr_set_unknown(h->cx, JR_ZERO, &v.src, "a DeepSpeed config named at run time");
		else if (v.text)
			jr_read_ds_config(h->cx, v.text);
		/* A bare --deepspeed is DeepSpeed's own switch
		 * (deepspeed.add_config_arguments: --deepspeed, then
		 * --deepspeed_config FILE), which programs such as
		 * DeepSpeed-Chat's main.py pair with a --zero_stage N of their
		 * own that builds the config. */
		else if (get(h, NAMES("--deepspeed_config"), &z) && z.text && !z.unknown)
			jr_read_ds_config(h->cx, z.text);
		else if (get(h, NAMES("--zero_stage", "--zero-stage"), &z) && z.text && !z.unknown &&
			 jr_parse_ll(z.text, &n) && n >= 0 && n <= 3)
			jr_set_int(h->cx, JR_ZERO, n, &z.src);
		else
			jr_set_unknown(h->cx, JR_ZERO, &v.src, "the program builds its DeepSpeed config");
		jr_set_int(h->cx, JR_FRAMEWORK, ADV_FW_DEEPSPEED, &v.src);
	}
	if (get(h, NAMES("--fsdp"), &v) && !v.unknown && v.text && v.text[0] &&
	    strcasecmp(v.text, "false") != 0)
		jr_hf_fsdp(h->cx, v.text, &v.src);
}

void jr_hf_fsdp(struct jr_ctx *cx, const char *text, const struct jobread_src *src)
{
	int z = strstr(text, "hybrid_shard_zero2") || strstr(text, "shard_grad_op") ? 2
	      : strstr(text, "full_shard") || strstr(text, "hybrid_shard") ? 3
	      : strstr(text, "no_shard") ? 0 : -1;

	if (z >= 0) {
		jr_set_int(cx, JR_ZERO, z, src);
		jr_set_int(cx, JR_FRAMEWORK, ADV_FW_FSDP, src);
	}
}

static void checkpoints(const struct hf *h)
{
	struct hfval st, ss;
	bool strategy = get(h, NAMES("--save_strategy"), &st);
	bool steps = get(h, NAMES("--save_steps"), &ss);
	long long n;

	if (strategy && !st.unknown && st.text) {
		if (!strcasecmp(st.text, "no")) {
			jr_set_int(h->cx, JR_CKPT_OFF, 1, &st.src);
			return;
		}
		if (!strcasecmp(st.text, "epoch") || !strcasecmp(st.text, "best")) {
			jr_set_unknown(h->cx, JR_CKPT_STEPS, &st.src,
				       !strcasecmp(st.text, "epoch") ? "once per epoch"
				       : "whenever the evaluation improves");
			return;
		}
	}
	if (!steps) {
		/* TrainingArguments' default: every 500 steps. */
		jr_src_arg(&ss.src, h->p, NULL, JR_STYLE_FLAG);
		adv_strlcpy(ss.src.key, "--save_steps", sizeof(ss.src.key));
		jr_set_int(h->cx, JR_CKPT_STEPS, HF_DEFAULT_SAVE_STEPS, &ss.src);
		return;
	}
	if (ss.unknown)
		jr_set_unknown(h->cx, JR_CKPT_STEPS, &ss.src, "a value computed at run time");
	else if (ss.text && jr_parse_ll(ss.text, &n) && n > 0)
		jr_set_int(h->cx, JR_CKPT_STEPS, n, &ss.src);
	else if (ss.text && strtod(ss.text, NULL) > 0 && strtod(ss.text, NULL) < 1)
		jr_set_unknown(h->cx, JR_CKPT_STEPS, &ss.src, "a share of the run's steps");
}

static void task(const struct hf *h)
{
	struct hfval v;
	struct jobread_src src;

	if ((get(h, NAMES("--use_peft", "--peft"), &v) && truth(&v) != 0) ||
	    get(h, NAMES("--lora_r", "--lora_rank", "--peft_method"), &v)) {
		jr_set_int(h->cx, JR_TASK, ADV_TASK_LORA, &v.src);
		return;
	}
	if (get(h, NAMES("--model_name_or_path", "--model_name"), &v)) {
		jr_src_arg(&src, h->p, NULL, JR_STYLE_FLAG);
		jr_set_int(h->cx, JR_TASK, ADV_TASK_FINETUNE, &src);
		return;
	}
	/* run_clm.py from a config (--model_type/--config_name): pretraining. */
	jr_src_arg(&src, h->p, NULL, JR_STYLE_FLAG);
	jr_set_int(h->cx, JR_TASK, ADV_TASK_TRAIN, &src);
}

static void attn_implementation(const struct hf *h)
{
	struct hfval v;

	if (!get(h, NAMES("--attn_implementation"), &v) || !v.text)
		return;
	if (v.unknown)
		jr_set_unknown(h->cx, JR_ATTENTION, &v.src, "a value computed at run time");
	else if (!strcmp(v.text, "eager"))
		jr_set_int(h->cx, JR_ATTENTION, ADV_ATTN_EAGER, &v.src);
	else if (!strncmp(v.text, "flash_attention", 15) || !strcmp(v.text, "sdpa") ||
		 !strcmp(v.text, "flex_attention"))
		jr_set_int(h->cx, JR_ATTENTION, ADV_ATTN_FLASH, &v.src);
}

bool jr_fw_hf(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct hf h = { cx, prog, 1, NULL, NULL };
	struct jobread_src src;
	struct hfval v;
	bool trl;

	if (!prog || prog->argc < 1 || !prog->argv[0])
		return false;
	/* `trl sft ...`: the subcommand is no argument. */
	if (!is_module && !strcmp(jr_basename(prog->argv[0]), "trl"))
		h.from = 2;
	/* The arguments file: a lone .yaml/.json argument or --config. */
	if (h.from < prog->argc && prog->argv[h.from] &&
	    (has_ext(prog->argv[h.from], ".yaml") || has_ext(prog->argv[h.from], ".yml") ||
	     has_ext(prog->argv[h.from], ".json")) &&
	    !(prog->unknown && prog->unknown[h.from])) {
		const cfg_t *c = jr_load(cx, prog->argv[h.from], CFG_AUTO, &h.display);

		h.root = c ? cfg_root(c) : NULL;
	} else {
		const char *cv = NULL;
		bool eq = false;
		int i = jr_arg_find(prog, h.from, "--config", &cv, &eq);

		if (i >= 0 && cv && !(prog->unknown && prog->unknown[eq ? i : i + 1])) {
			const cfg_t *c = jr_load(cx, cv, CFG_AUTO, &h.display);

			h.root = c ? cfg_root(c) : NULL;
		}
	}
	if (h.root && h.root->type != CFG_MAP)
		h.root = NULL;
	if (!is_hf(&h, is_module))
		return false;
	trl = is_trl(prog, is_module);
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	jr_set_trainer(cx, trl ? "trl" : "hf", -1, &src);
	/* The DeepSpeed config first: TrainingArguments win over it. */
	sharding(&h);
	model(&h);
	count(&h, JR_MBS, NAMES("--per_device_train_batch_size", "--per_gpu_train_batch_size"));
	count(&h, JR_GAS, NAMES("--gradient_accumulation_steps"));
	count(&h, JR_SEQ, NAMES("--max_seq_length", "--max_length", "--block_size",
				"--model_max_length", "--cutoff_len", "--max_seq_len", "--max_len"));
	if (get(&h, NAMES("--gradient_checkpointing"), &v) && !v.unknown && truth(&v) >= 0)
		jr_set_int(cx, JR_RECOMPUTE, truth(&v) ? ADV_RECOMPUTE_FULL : ADV_RECOMPUTE_NONE, &v.src);
	precision(&h);
	attn_implementation(&h);
	checkpoints(&h);
	task(&h);
	return true;
}
