/*
 * fw_llamafactory.c - LLaMA-Factory fine-tuning jobs: `llamafactory-cli
 * train CFG.yaml [key=value ...]`, `llamafactory-cli train --key value ...`
 * (also `lmf`), and its entry point run directly, `python|torchrun
 * src/train.py CFG.yaml`.
 *
 * How LLaMA-Factory reads its arguments (hiyouga/LLaMA-Factory,
 * src/llamafactory/hparams/parser.py read_args, f74d33f): when the first
 * argument ends in .yaml/.yml (or .json) the file is loaded and merged
 * with OmegaConf.from_cli(the remaining words), "key=value" dotlist
 * overrides, the last one winning; otherwise the words are
 * HfArgumentParser flags ("--key value", "--key=value", a bare "--flag"
 * for a true bool).  The keys are the fields of its dataclasses, read here
 * from one table (lf_ints, the special keys in lf_read):
 * - data_args.py (072bfe2) DataArguments.cutoff_len, default 2048: the
 *   longest tokenized sample, the sequence;
 * - transformers' TrainingArguments (training_args.py):
 *   per_device_train_batch_size 8, gradient_accumulation_steps 1,
 *   save_steps 500 with save_strategy "steps" ("no": none), bf16 / fp16
 *   (neither: what the model loads in, not known here), deepspeed (a JSON
 *   read by fw_deepspeed.c);
 * - finetuning_args.py FinetuningArguments: stage (pt, sft, rm, ppo, dpo,
 *   kto; default sft) and finetuning_type (lora, oft, freeze, full;
 *   default lora): LoRA and OFT train adapters only;
 * - model_args.py ModelArguments: model_name_or_path; quantization_bit
 *   (None; 4 or 8: bitsandbytes QLoRA, which _verify_model_args allows with
 *   lora/oft only); disable_gradient_checkpointing (default False: whole
 *   layers are recomputed unless the job turns it off).
 * `llamafactory-cli train` itself (cli.py, d4908d5) runs torchrun with
 * --nnodes $NNODES (1), --nproc_per_node $NPROC_PER_NODE (every visible
 * GPU) when the node has more than one GPU: those come from the
 * environment at run time, so the world is left to the job's resources.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "jobread/ctx.h"
#include "jobread/reader.h"
#include "util.h"

/* Command-line words looked at, at most. */
#define LF_MAX_ARGS 512

struct lf {
	struct jr_ctx *cx;
	const struct jr_cmd *p;
	int from;                       /* first argument word */
	bool dotlist;                   /* key=value overrides (a config file first) */
	const struct cfg_node *root;    /* the YAML's root map, or NULL */
	const char *display;
};

struct lfv {
	bool unknown;
	char text[256];
	struct jobread_src src;
};

/* The integer keys: field, the dataclass default, where it is defined. */
static const struct lf_int {
	const char *key;
	enum jobread_field field;
	long long def;                  /* < 0: no default the job can be held to */
	const char *defined;
} lf_ints[] = {
	{ "cutoff_len", JR_SEQ, 2048, "hparams/data_args.py DataArguments" },
	{ "per_device_train_batch_size", JR_MBS, 8, "transformers TrainingArguments" },
	{ "gradient_accumulation_steps", JR_GAS, 1, "transformers TrainingArguments" },
};

/* The last "key=value" (a config file first) or "--key value" of key. */
static bool from_args(const struct lf *l, const char *key, struct lfv *out)
{
	const struct jr_cmd *p = l->p;
	int found = -1, limit = p->argc < LF_MAX_ARGS ? p->argc : LF_MAX_ARGS;
	const char *val = NULL;
	enum jobread_style style = JR_STYLE_FLAG;

	for (int i = l->from; i < limit; i++) {
		const char *w = p->argv[i], *e;

		if (!w)
			continue;
		if (l->dotlist) {
			e = strchr(w, '=');
			if (e && jr_same_key(w, (size_t)(e - w), key)) {
				found = i;
				val = e + 1;
				style = JR_STYLE_OVERRIDE;
			}
			continue;
		}
		if (strncmp(w, "--", 2))
			continue;
		e = strchr(w + 2, '=');
		if (!jr_same_key(w + 2, e ? (size_t)(e - w - 2) : strlen(w + 2), key))
			continue;
		found = i;
		if (e) {
			val = e + 1;
			style = JR_STYLE_FLAG_EQ;
		} else if (i + 1 < p->argc && p->argv[i + 1] && strncmp(p->argv[i + 1], "--", 2)) {
			val = p->argv[i + 1];
			style = JR_STYLE_FLAG;
		} else {
			val = "true";
			style = JR_STYLE_BOOL;
		}
	}
	if (found < 0)
		return false;
	memset(out, 0, sizeof(*out));
	{
		char written[96];
		const char *w = p->argv[found], *e = strchr(w, '=');

		adv_snprintf(written, sizeof(written), "%.*s",
			     (int)(e ? (size_t)(e - w) : strlen(w)), w);
		jr_src_arg(&out->src, p, written, style);
	}
	/* The value word's unknown mark: its own word, or the next one. */
	out->unknown = p->unknown && (style == JR_STYLE_FLAG && val != p->argv[found]
				      ? p->unknown[found + 1] : p->unknown[found]);
	adv_strlcpy(out->text, out->unknown ? "a value computed at run time" : val,
		    sizeof(out->text));
	return true;
}

static bool get(const struct lf *l, const char *key, struct lfv *out)
{
	const struct cfg_node *n;

	if (from_args(l, key, out))
		return true;
	if (!l->root || !(n = cfg_path(l->root, key)) || n->type == CFG_NULL || !cfg_str(n))
		return false;
	memset(out, 0, sizeof(*out));
	adv_strlcpy(out->text, cfg_str(n), sizeof(out->text));
	jr_src_node(&out->src, l->display, n, key, JR_STYLE_YAML);
	return true;
}

/* The dataclass default where the job says nothing: the framework's,
 * sourced as "llamafactory default (no KEY: VALUE)". */
static void default_src(const char *key, const char *value, struct jobread_src *src)
{
	memset(src, 0, sizeof(*src));
	adv_snprintf(src->key, sizeof(src->key), "llamafactory default (no %s: %s)", key, value);
	src->style = JR_STYLE_DERIVED;
	src->fw_default = true;
}

static void read_int(struct lf *l, const struct lf_int *k)
{
	struct lfv v;
	struct jobread_src src;
	long long n;

	if (!get(l, k->key, &v)) {
		if (k->def >= 0) {
			char v2[24];

			adv_snprintf(v2, sizeof(v2), "%lld", k->def);
			default_src(k->key, v2, &src);
			jr_set_int(l->cx, k->field, k->def, &src);
		}
		return;
	}
	if (v.unknown)
		jr_set_unknown(l->cx, k->field, &v.src, v.text);
	else if (jr_parse_ll(v.text, &n) && n > 0)
		jr_set_int(l->cx, k->field, n, &v.src);
	else
		jr_note(l->cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
			"%s:%d: %s '%s' is not a whole number; ignored", v.src.file, v.src.line,
			k->key, v.text);
}

/* stage and finetuning_type: what is trained. */
static void read_task(struct lf *l, const struct jobread_src *cmd)
{
	struct lfv st, ft;
	struct jobread_src src = *cmd;
	bool have_ft = get(l, "finetuning_type", &ft);

	if (get(l, "stage", &st) && st.unknown) {
		jr_set_unknown(l->cx, JR_TASK, &st.src, st.text);
		return;
	}
	if (have_ft && ft.unknown) {
		jr_set_unknown(l->cx, JR_TASK, &ft.src, ft.text);
		return;
	}
	if (!have_ft)
		default_src("finetuning_type", "lora", &src);
	else
		src = ft.src;
	/* lora is the default (finetuning_args.py); OFT trains adapters too. */
	if (!have_ft || !strcasecmp(ft.text, "lora") || !strcasecmp(ft.text, "oft"))
		jr_set_int(l->cx, JR_TASK, ADV_TASK_LORA, &src);
	else
		jr_set_int(l->cx, JR_TASK, ADV_TASK_FINETUNE, &src);
}

static void read_rest(struct lf *l)
{
	struct lfv v;
	struct jobread_src src;
	long long n;

	if (get(l, "model_name_or_path", &v)) {
		if (v.unknown)
			jr_set_unknown(l->cx, JR_MODEL, &v.src, v.text);
		else
			jr_model_ref(l->cx, v.text, &v.src);
	}
	/* QLoRA: the frozen base in 4 or 8 bits (bitsandbytes). */
	if (get(l, "quantization_bit", &v) && !v.unknown && jr_parse_ll(v.text, &n) &&
	    (n == 4 || n == 8))
		jr_set_int(l->cx, JR_WEIGHTS, n == 4 ? ADV_WEIGHTS_INT4 : ADV_WEIGHTS_INT8, &v.src);
	if (get(l, "deepspeed", &v)) {
		if (v.unknown || !v.text[0])
			jr_set_unknown(l->cx, JR_ZERO, &v.src, "a DeepSpeed config named at run time");
		else
			jr_read_ds_config(l->cx, v.text);
		jr_set_int(l->cx, JR_FRAMEWORK, ADV_FW_DEEPSPEED, &v.src);
	}
	/* bf16 first: fp16 only when bf16 is off. */
	if (get(l, "bf16", &v) && !v.unknown && jr_parse_bool(v.text) == 1)
		jr_set_int(l->cx, JR_PRECISION, ADV_PREC_BF16, &v.src);
	else if (get(l, "fp16", &v) && !v.unknown && jr_parse_bool(v.text) == 1)
		jr_set_int(l->cx, JR_PRECISION, ADV_PREC_FP16, &v.src);
	if (get(l, "disable_gradient_checkpointing", &v)) {
		if (!v.unknown && jr_parse_bool(v.text) >= 0)
			jr_set_int(l->cx, JR_RECOMPUTE, jr_parse_bool(v.text) ? ADV_RECOMPUTE_NONE
									    : ADV_RECOMPUTE_FULL, &v.src);
	} else {
		default_src("disable_gradient_checkpointing", "false", &src);
		jr_set_int(l->cx, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, &src);
	}
	if (get(l, "save_strategy", &v) && !v.unknown && !strcasecmp(v.text, "no")) {
		jr_set_int(l->cx, JR_CKPT_OFF, 1, &v.src);
	} else if (get(l, "save_strategy", &v) && !v.unknown && strcasecmp(v.text, "steps")) {
		jr_set_unknown(l->cx, JR_CKPT_STEPS, &v.src, "at the end of each epoch");
	} else if (get(l, "save_steps", &v)) {
		if (v.unknown)
			jr_set_unknown(l->cx, JR_CKPT_STEPS, &v.src, v.text);
		else if (jr_parse_ll(v.text, &n) && n > 0)
			jr_set_int(l->cx, JR_CKPT_STEPS, n, &v.src);
		else
			jr_set_unknown(l->cx, JR_CKPT_STEPS, &v.src, "a share of the run's steps");
	} else {
		default_src("save_steps", "500", &src);
		jr_set_int(l->cx, JR_CKPT_STEPS, 500, &src);
	}
}

/* A config file's name: LLaMA-Factory reads a .yaml/.yml/.json first word. */
static bool is_config(const char *w)
{
	size_t n = w ? strlen(w) : 0;

	return (n > 5 && !strcasecmp(w + n - 5, ".yaml")) || (n > 4 && !strcasecmp(w + n - 4, ".yml")) ||
	       (n > 5 && !strcasecmp(w + n - 5, ".json"));
}

bool jr_fw_llamafactory(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct lf l = { cx, prog, 1, false, NULL, NULL };
	struct jobread_src src;
	const char *a0, *base;
	int first;

	if (!prog || prog->argc < 2 || !(a0 = prog->argv[0]) || is_module)
		return false;
	base = jr_basename(a0);
	if (!strcmp(base, "llamafactory-cli") || !strcmp(base, "lmf")) {
		/* Only train is a training run (api, chat, eval, export, webui). */
		if (!prog->argv[1] || strcmp(prog->argv[1], "train"))
			return false;
		first = 2;
	} else {
		size_t n = strlen(a0);

		/* The entry point run directly: src/train.py with a config whose
		 * keys are LLaMA-Factory's (stage, finetuning_type), not any
		 * train.py given a YAML. */
		if (n < 12 || strcmp(a0 + n - 12, "src/train.py") || !is_config(prog->argv[1]))
			return false;
		first = 1;
	}
	if (first < prog->argc && is_config(prog->argv[first]) &&
	    !(prog->unknown && prog->unknown[first])) {
		const cfg_t *c = jr_load(cx, prog->argv[first],
					 strcasecmp(prog->argv[first] + strlen(prog->argv[first]) - 5,
						    ".json") ? CFG_YAML : CFG_JSON, &l.display);

		l.root = c ? cfg_root(c) : NULL;
		if (l.root && l.root->type != CFG_MAP)
			l.root = NULL;
		l.dotlist = true;
		l.from = first + 1;
		if (first == 1 && (!l.root || (!cfg_path(l.root, "stage") &&
						!cfg_path(l.root, "finetuning_type"))))
			return false;
	} else {
		if (first == 1)
			return false;
		l.from = first;
	}
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';
	jr_set_trainer(cx, "llamafactory", -1, &src);
	read_task(&l, &src);
	for (size_t k = 0; k < ADV_ARRAY_SIZE(lf_ints); k++)
		read_int(&l, &lf_ints[k]);
	read_rest(&l);
	return true;
}
