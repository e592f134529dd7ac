/*
 * fw_python.c - the program a job runs when no framework reader knows it
 * (issue 28): `python train.py`, `torchrun train.py`, `accelerate launch
 * train.py`, `deepspeed train.py`, `python -m pkg.mod` of a package in the
 * submit directory.  The file is read as text through the reader's file
 * rounds (jr_load_text: the client ships it, within the reader's bounds),
 * scanned statically (pyscan.c, never run), and the calls it makes are
 * looked up in one table of the libraries' own signatures:
 *
 *  - transformers (v4.46, src/transformers/modeling_utils.py
 *    PreTrainedModel.from_pretrained: pretrained_model_name_or_path first,
 *    device_map, torch_dtype, attn_implementation, load_in_4bit/8bit and
 *    quantization_config; models/auto/modeling_auto.py AutoModelForCausalLM;
 *    utils/quantization_config.py BitsAndBytesConfig; pipelines/__init__.py
 *    pipeline(task, model); training_args.py TrainingArguments:
 *    per_device_train_batch_size, gradient_accumulation_steps, bf16, fp16,
 *    gradient_checkpointing, deepspeed, fsdp, save_strategy, save_steps
 *    (default 500); trainer.py Trainer._wrap_model: one process that sees
 *    several GPUs trains with nn.DataParallel over all of them);
 *  - accelerate (v1.0, utils/modeling.py get_balanced_memory and
 *    infer_auto_device_map: device_map "auto"/"balanced" places whole
 *    layers in order over every visible GPU; accelerator.py prepare_model
 *    refuses to train such a model in a distributed mode);
 *  - peft (v0.13, tuners/lora/config.py LoraConfig(r=8), mapping.py
 *    get_peft_model, utils/other.py prepare_model_for_kbit_training);
 *  - TRL (v0.12-0.19, trl/trainer/sft_config.py SFTConfig max_seq_length,
 *    later max_length; dpo_config.py, grpo_config.py, orpo_config.py,
 *    kto_config.py, reward_config.py: TrainingArguments subclasses; the
 *    trainers take a Hub id as model and a peft_config);
 *  - Unsloth (commit 0050c73, unsloth/models/loader.py FastLanguageModel.
 *    from_pretrained(model_name, max_seq_length, dtype, load_in_4bit=True,
 *    device_map="sequential"): a quantized model under a distributed
 *    launcher is placed on each rank's own GPU (prepare_device_map), so its
 *    device_map is no conflict there; get_peft_model(model, r));
 *  - DeepSpeed (v0.15, deepspeed/__init__.py initialize(args, model, ...,
 *    config, config_params), --deepspeed_config of add_config_arguments);
 *  - vLLM (v0.6, vllm/entrypoints/llm.py LLM(model, tensor_parallel_size,
 *    pipeline_parallel_size, dtype, quantization, gpu_memory_utilization,
 *    max_model_len, max_num_seqs)).
 *
 * A program that holds no model of its own follows the modules it imports
 * from its own directory ("from lab.modeling import load_model" ->
 * lab/modeling.py; at most PYR_MAX_MODULES, never a library's name), read
 * with the same table: Python puts the script's directory first on
 * sys.path (The Python Tutorial, 6.1.2 "The Module Search Path").
 *
 * A value is the job's only when it is a literal: in the call itself, in
 * a name the program assigns one literal (model_id = "..."), or in a
 * parameter of the program's command line (argparse add_argument, an
 * HfArgumentParser dataclass field) with the flag the job passes, else
 * its default.  Anything else is unknown and said so.  A program with no
 * LLM evidence (no causal-LM load, no LLM engine, no TRL trainer, no
 * catalog model) is not an LLM job; one that cannot be read leaves the
 * job's workload unknown (PROGRAM_NOT_READ), never "not an LLM job".
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobread/ctx.h"
#include "jobread/pyscan.h"
#include "jobread/reader.h"
#include "util.h"

/* What a call is, by the library that defines it. */
enum role {
	R_NONE = 0,
	R_LOAD,          /* X.from_pretrained of another class: evidence when the model is an LLM */
	R_LOAD_LLM,      /* a causal language model's from_pretrained */
	R_UNSLOTH,       /* FastLanguageModel.from_pretrained */
	R_VLLM,          /* vllm.LLM */
	R_PIPELINE,      /* transformers.pipeline */
	R_BNB,           /* BitsAndBytesConfig */
	R_LORA,          /* LoraConfig, FastLanguageModel.get_peft_model */
	R_PEFT,          /* get_peft_model, prepare_model_for_kbit_training */
	R_TARGS_HF,      /* TrainingArguments */
	R_TARGS_TRL,     /* SFTConfig, DPOConfig, GRPOConfig, ... */
	R_TRAINER_HF,    /* Trainer, Seq2SeqTrainer */
	R_TRAINER_TRL,   /* SFTTrainer, DPOTrainer, GRPOTrainer, ... */
	R_ARGUMENT,      /* argparse add_argument */
	R_FIELD,         /* dataclasses.field */
	R_BACKWARD,      /* loss.backward(): a training loop */
	R_GENERATE,      /* model.generate() */
	R_MULTI,         /* DataParallel, init_process_group, Accelerator, ...: several GPUs */
	R_TO_DEVICE,     /* .to("cuda"), .cuda(): placed on one device */
	R_DS_INIT,       /* deepspeed.initialize: a DeepSpeed training engine */
	R_COUNT
};

/*
 * The calls, by name.  owner: the class or module before the last dot;
 * NULL: none, or a module (lower case: "vllm.LLM"); "*": any; "*Suffix":
 * a class name that ends so (LlamaForCausalLM, AutoPeftModelForCausalLM).
 * The first row that matches wins.
 */
static const struct callee {
	const char *owner;
	const char *name;
	enum role role;
} callees[] = {
	{ "*ForCausalLM", "from_pretrained", R_LOAD_LLM },
	{ "FastLanguageModel", "from_pretrained", R_UNSLOTH },
	{ "FastModel", "from_pretrained", R_UNSLOTH },
	{ "FastLanguageModel", "get_peft_model", R_LORA },
	{ "FastModel", "get_peft_model", R_LORA },
	{ "*Tokenizer", "from_pretrained", R_NONE },
	{ "*TokenizerFast", "from_pretrained", R_NONE },
	{ "*Config", "from_pretrained", R_NONE },
	{ "*Processor", "from_pretrained", R_NONE },
	{ "*", "from_pretrained", R_LOAD },
	{ NULL, "LLM", R_VLLM },
	{ NULL, "pipeline", R_PIPELINE },
	{ "*", "BitsAndBytesConfig", R_BNB },
	{ "*", "LoraConfig", R_LORA },
	{ "*", "get_peft_model", R_PEFT },
	{ "*", "prepare_model_for_kbit_training", R_PEFT },
	{ "*", "TrainingArguments", R_TARGS_HF },
	{ "*", "Seq2SeqTrainingArguments", R_TARGS_HF },
	{ "*", "SFTConfig", R_TARGS_TRL },
	{ "*", "DPOConfig", R_TARGS_TRL },
	{ "*", "GRPOConfig", R_TARGS_TRL },
	{ "*", "ORPOConfig", R_TARGS_TRL },
	{ "*", "KTOConfig", R_TARGS_TRL },
	{ "*", "CPOConfig", R_TARGS_TRL },
	{ "*", "RewardConfig", R_TARGS_TRL },
	{ "*", "Trainer", R_TRAINER_HF },
	{ "*", "Seq2SeqTrainer", R_TRAINER_HF },
	{ "*", "SFTTrainer", R_TRAINER_TRL },
	{ "*", "DPOTrainer", R_TRAINER_TRL },
	{ "*", "GRPOTrainer", R_TRAINER_TRL },
	{ "*", "ORPOTrainer", R_TRAINER_TRL },
	{ "*", "KTOTrainer", R_TRAINER_TRL },
	{ "*", "CPOTrainer", R_TRAINER_TRL },
	{ "*", "RewardTrainer", R_TRAINER_TRL },
	{ "*", "add_argument", R_ARGUMENT },
	{ NULL, "field", R_FIELD },
	{ "*", "backward", R_BACKWARD },
	{ "*", "generate", R_GENERATE },
	{ "*", "DataParallel", R_MULTI },
	{ "*", "DistributedDataParallel", R_MULTI },
	{ "*", "FullyShardedDataParallel", R_MULTI },
	{ "*", "fully_shard", R_MULTI },
	{ "*", "init_process_group", R_MULTI },
	{ "*", "Accelerator", R_MULTI },
	{ "deepspeed", "initialize", R_DS_INIT },
	{ "*", "spawn", R_MULTI },
	{ "*", "notebook_launcher", R_MULTI },
	{ "*", "to", R_TO_DEVICE },
	{ "*", "cuda", R_TO_DEVICE },
};

/* What a keyword (or positional argument) of a call states. */
enum act {
	A_MODEL, A_INT, A_BF16, A_FP16, A_DTYPE, A_RECOMPUTE, A_DS, A_FSDP, A_SAVE_STEPS,
	A_SAVE_STRATEGY, A_DEVICE_MAP, A_4BIT, A_8BIT, A_QCONF, A_ATTN, A_QUANT, A_SHARE,
	A_PEFT, A_TASK, A_DEVICE,
};

static const struct kwrule {
	enum role role;
	const char *kw;
	int pos;                   /* the positional index that is the same argument, -1 none */
	enum act act;
	enum jobread_field f;      /* A_INT */
} kwrules[] = {
	/* PreTrainedModel.from_pretrained (and any class's, for an LLM). */
	{ R_LOAD_LLM, "pretrained_model_name_or_path", 0, A_MODEL, JR_MODEL },
	{ R_LOAD, "pretrained_model_name_or_path", 0, A_MODEL, JR_MODEL },
	{ R_UNSLOTH, "model_name", 0, A_MODEL, JR_MODEL },
	{ R_UNSLOTH, "max_seq_length", -1, A_INT, JR_SEQ },
	{ R_UNSLOTH, "dtype", -1, A_DTYPE, JR_PRECISION },
	{ R_VLLM, "model", 0, A_MODEL, JR_MODEL },
	{ R_VLLM, "tensor_parallel_size", -1, A_INT, JR_TP },
	{ R_VLLM, "pipeline_parallel_size", -1, A_INT, JR_PP },
	{ R_VLLM, "max_model_len", -1, A_INT, JR_SEQ },
	{ R_VLLM, "max_num_seqs", -1, A_INT, JR_MAX_SEQS },
	{ R_VLLM, "dtype", -1, A_DTYPE, JR_PRECISION },
	{ R_VLLM, "quantization", -1, A_QUANT, JR_WEIGHTS },
	{ R_VLLM, "gpu_memory_utilization", -1, A_SHARE, JR_MEM_SHARE },
	{ R_PIPELINE, "task", 0, A_TASK, JR_TASK },
	{ R_PIPELINE, "model", 1, A_MODEL, JR_MODEL },
	{ R_BNB, "load_in_4bit", -1, A_4BIT, JR_WEIGHTS },
	{ R_BNB, "load_in_8bit", -1, A_8BIT, JR_WEIGHTS },
	{ R_LORA, "r", -1, A_PEFT, JR_TASK },
	{ R_TRAINER_TRL, "model", 0, A_MODEL, JR_MODEL },
	{ R_TRAINER_TRL, "peft_config", -1, A_PEFT, JR_TASK },
	{ R_TRAINER_HF, "peft_config", -1, A_PEFT, JR_TASK },
	/* TrainingArguments and TRL's configs (its subclasses). */
	{ R_TARGS_HF, "per_device_train_batch_size", -1, A_INT, JR_MBS },
	{ R_TARGS_HF, "gradient_accumulation_steps", -1, A_INT, JR_GAS },
	{ R_TARGS_HF, "bf16", -1, A_BF16, JR_PRECISION },
	{ R_TARGS_HF, "fp16", -1, A_FP16, JR_PRECISION },
	{ R_TARGS_HF, "gradient_checkpointing", -1, A_RECOMPUTE, JR_RECOMPUTE },
	{ R_TARGS_HF, "deepspeed", -1, A_DS, JR_ZERO },
	{ R_TARGS_HF, "fsdp", -1, A_FSDP, JR_ZERO },
	{ R_TARGS_HF, "save_strategy", -1, A_SAVE_STRATEGY, JR_CKPT_STEPS },
	{ R_TARGS_HF, "save_steps", -1, A_SAVE_STEPS, JR_CKPT_STEPS },
	{ R_TARGS_TRL, "max_seq_length", -1, A_INT, JR_SEQ },
	{ R_TARGS_TRL, "max_length", -1, A_INT, JR_SEQ },
	/* The loading keywords, on every from_pretrained. */
	{ R_LOAD_LLM, "device_map", -1, A_DEVICE_MAP, JR_WORLD },
	{ R_LOAD_LLM, "load_in_4bit", -1, A_4BIT, JR_WEIGHTS },
	{ R_LOAD_LLM, "load_in_8bit", -1, A_8BIT, JR_WEIGHTS },
	{ R_LOAD_LLM, "quantization_config", -1, A_QCONF, JR_WEIGHTS },
	{ R_LOAD_LLM, "torch_dtype", -1, A_DTYPE, JR_PRECISION },
	{ R_LOAD_LLM, "dtype", -1, A_DTYPE, JR_PRECISION },
	{ R_LOAD_LLM, "attn_implementation", -1, A_ATTN, JR_ATTENTION },
	{ R_TO_DEVICE, "device", 0, A_DEVICE, JR_WORLD },
	/* deepspeed.initialize(args, model, ..., config=None, config_params=None). */
	{ R_DS_INIT, "config", -1, A_DS, JR_ZERO },
	{ R_DS_INIT, "config_params", -1, A_DS, JR_ZERO },
};

/* Parameters of the program's own command line, by dest. */
#define PYR_MAX_PARAMS 128
/* Names followed through assignments (x = y, y = "lit"). */
#define PYR_MAX_HOPS 4

struct param {
	const char *dest;          /* into the scan, or destbuf */
	char destbuf[PY_KW_MAX];
	char flag[PY_KW_MAX + 2];  /* "--dest" as declared */
	char flag2[PY_KW_MAX + 2]; /* another spelling ("-m", "--model-name") */
	int call;                  /* add_argument, or -1 */
	int assign;                /* a dataclass field, or -1 */
	bool store_true, store_false;
};

struct pyr {
	struct jr_ctx *cx;
	const struct jr_cmd *prog;
	const char *display;       /* the program as the job names it */
	struct pyscan_run *s;
	enum role role[PY_MAX_CALLS];
	int n_params;
	struct param params[PYR_MAX_PARAMS];
};

/* A value as resolved: known, unknown, or absent. */
struct pyval {
	bool present, known;
	enum py_kind kind;
	char text[PY_TEXT_MAX];
	struct jobread_src src;
};

/* ---- the table ------------------------------------------------------------------- */

static bool owner_match(const char *want, const char *owner)
{
	size_t n = strlen(owner), w;

	if (!want)
		return !owner[0] || (owner[0] >= 'a' && owner[0] <= 'z');
	if (!strcmp(want, "*"))
		return true;
	if (want[0] == '*') {
		w = strlen(want + 1);
		return n >= w && !strcmp(owner + n - w, want + 1);
	}
	return !strcmp(want, owner);
}

static enum role role_of(const char *name)
{
	char owner[PY_NAME_MAX];
	const char *last = pyscan_last(name);

	pyscan_owner(name, owner, sizeof(owner));
	for (size_t k = 0; k < ADV_ARRAY_SIZE(callees); k++)
		if (!strcmp(callees[k].name, last) && owner_match(callees[k].owner, owner))
			return callees[k].role;
	return R_NONE;
}

static bool want_call(const char *name, void *arg)
{
	(void)arg;
	return role_of(name) != R_NONE;
}

/* The loading keywords hold for every from_pretrained and Unsloth's. */
static bool loads(enum role r)
{
	return r == R_LOAD_LLM || r == R_LOAD || r == R_UNSLOTH;
}

static bool rule_applies(const struct kwrule *k, enum role r)
{
	if (k->role == r)
		return true;
	if (k->role == R_LOAD_LLM && k->act != A_MODEL && loads(r))
		return true;
	if (k->role == R_TARGS_HF && r == R_TARGS_TRL)
		return true;   /* TRL's configs subclass TrainingArguments */
	return false;
}

/* ---- values ---------------------------------------------------------------------- */

static void src_at(const struct pyr *r, struct jobread_src *s, int line, const char *key,
		   enum jobread_style style)
{
	memset(s, 0, sizeof(*s));
	adv_strlcpy(s->file, r->display, sizeof(s->file));
	s->line = line;
	adv_strlcpy(s->key, key, sizeof(s->key));
	s->style = style;
}

static const struct param *param_of(const struct pyr *r, const char *dest)
{
	for (int i = 0; i < r->n_params; i++)
		if (!strcmp(r->params[i].dest, dest))
			return &r->params[i];
	return NULL;
}

static const struct py_arg *arg_of(const struct pyr *r, int call, const char *kw, int pos)
{
	const struct py_arg *found = NULL;

	for (int i = 0; i < r->s->n_args; i++) {
		const struct py_arg *a = &r->s->args[i];

		if (a->call != call)
			continue;
		if ((kw && !strcmp(a->kw, kw)) || (pos >= 0 && a->pos == pos))
			found = a;
	}
	return found;
}

/* A "**kwargs" among the call's arguments: keywords it does not show. */
static bool hides_keywords(const struct pyr *r, int call)
{
	for (int i = 0; i < r->s->n_args; i++)
		if (r->s->args[i].call == call && !strcmp(r->s->args[i].kw, "*") &&
		    r->s->args[i].pos < 0)
			return true;
	return false;
}

static void resolve_text(const struct pyr *r, enum py_kind kind, const char *text, int line,
			 const char *key, int hops, struct pyval *v);

/* The flag of a parameter as the job passes it, else the default. */
static void resolve_param(const struct pyr *r, const struct param *p, int hops, struct pyval *v)
{
	const char *names[4] = { p->flag, p->flag2[0] ? p->flag2 : NULL, NULL, NULL };
	const char *val = NULL, *which = NULL;
	bool eq = false;
	int i = p->flag[0] ? jr_arg_find_any(r->prog, 1, names, &val, &eq, &which) : -1;

	if (i >= 0) {
		int vi = eq ? i : i + 1;

		v->present = true;
		jr_src_arg(&v->src, r->prog, which, val ? (eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG)
							  : JR_STYLE_BOOL);
		if (p->store_true || p->store_false) {
			v->known = true;
			v->kind = p->store_true ? PY_TRUE : PY_FALSE;
			return;
		}
		if (!val || (r->prog->unknown && vi < r->prog->argc && r->prog->unknown[vi]))
			return;
		v->known = true;
		v->kind = PY_STR;
		adv_strlcpy(v->text, val, sizeof(v->text));
		return;
	}
	if (p->call >= 0) {
		const struct py_arg *d = arg_of(r, p->call, "default", -1);

		if (!d) {
			v->present = true;
			src_at(r, &v->src, r->s->calls[p->call].line, p->flag, JR_STYLE_FLAG);
			if (p->store_true || p->store_false) {
				v->known = true;
				v->kind = p->store_true ? PY_FALSE : PY_TRUE;
			}
			return;
		}
		resolve_text(r, d->kind, d->text, d->line, p->flag, hops + 1, v);
		v->src.style = JR_STYLE_FLAG;
		adv_strlcpy(v->src.key, p->flag, sizeof(v->src.key));
		return;
	}
	if (p->assign >= 0) {
		const struct py_assign *a = &r->s->assign[p->assign];

		if (a->kind == PY_CALL && a->sub >= 0) {
			const struct py_arg *d = arg_of(r, a->sub, "default", -1);

			v->present = true;
			src_at(r, &v->src, a->line, p->flag, JR_STYLE_FLAG);
			if (d)
				resolve_text(r, d->kind, d->text, d->line, p->flag, hops + 1, v);
		} else {
			resolve_text(r, a->kind, a->text, a->line, p->flag, hops + 1, v);
		}
		v->src.style = JR_STYLE_FLAG;
		adv_strlcpy(v->src.key, p->flag, sizeof(v->src.key));
	}
}

/* A name the program assigns: known when every assignment of it is the
 * same literal. */
static void resolve_name(const struct pyr *r, const char *name, int line, const char *key, int hops,
			 struct pyval *v)
{
	const struct py_assign *one = NULL;
	bool same = true;

	for (int i = 0; i < r->s->n_assign; i++) {
		const struct py_assign *a = &r->s->assign[i];

		if (strcmp(a->name, name) != 0)
			continue;
		if (one && (a->kind != one->kind || strcmp(a->text, one->text) != 0))
			same = false;
		if (!one)
			one = a;
	}
	v->present = true;
	src_at(r, &v->src, line, key, JR_STYLE_FLAG_EQ);
	if (!one || !same || one->kind == PY_OTHER || one->kind == PY_CALL)
		return;
	resolve_text(r, one->kind, one->text, one->line, one->name, hops + 1, v);
}

static void resolve_text(const struct pyr *r, enum py_kind kind, const char *text, int line,
			 const char *key, int hops, struct pyval *v)
{
	memset(v, 0, sizeof(*v));
	v->present = true;
	src_at(r, &v->src, line, key, JR_STYLE_FLAG_EQ);
	if (hops > PYR_MAX_HOPS)
		return;
	switch (kind) {
	case PY_STR: case PY_NUM: case PY_TRUE: case PY_FALSE: case PY_NONE:
		v->known = true;
		v->kind = kind;
		adv_strlcpy(v->text, text, sizeof(v->text));
		return;
	case PY_NAME:
		break;
	default:
		return;
	}
	/* torch's dtypes are names of a module, known by themselves. */
	if (!strncmp(text, "torch.", 6) && !strchr(text + 6, '.')) {
		v->known = true;
		v->kind = PY_STR;
		adv_strlcpy(v->text, text + 6, sizeof(v->text));
		return;
	}
	if (!strchr(text, '.')) {
		resolve_name(r, text, line, key, hops, v);
		return;
	}
	/* args.NAME, script_args.NAME, training_args.NAME: a parameter. */
	{
		const struct param *p = param_of(r, pyscan_last(text));
		char k[PY_KW_MAX];

		adv_strlcpy(k, key, sizeof(k));
		if (p) {
			memset(v, 0, sizeof(*v));
			resolve_param(r, p, hops, v);
			if (!v->present) {
				v->present = true;
				src_at(r, &v->src, line, k, JR_STYLE_FLAG_EQ);
			}
		}
	}
}

static bool value_of(const struct pyr *r, int call, const char *kw, int pos, struct pyval *v)
{
	const struct py_arg *a = arg_of(r, call, kw, pos);

	memset(v, 0, sizeof(*v));
	if (!a)
		return false;
	resolve_text(r, a->kind, a->text, a->line ? a->line : r->s->calls[call].line, kw, 0, v);
	return true;
}

/* ---- the program's parameters ------------------------------------------------------ */

static void add_param_names(struct param *p, const char *name)
{
	if (name[0] != '-')
		return;
	if (!p->flag[0] && name[1] == '-')
		adv_strlcpy(p->flag, name, sizeof(p->flag));
	else if (!p->flag2[0])
		adv_strlcpy(p->flag2, name, sizeof(p->flag2));
}

static void params(struct pyr *r)
{
	struct pyscan_run *s = r->s;

	for (int c = 0; c < s->n_calls && r->n_params < PYR_MAX_PARAMS; c++) {
		struct param *p = &r->params[r->n_params];
		const struct py_arg *a;

		if (r->role[c] != R_ARGUMENT)
			continue;
		memset(p, 0, sizeof(*p));
		p->call = c;
		p->assign = -1;
		for (int i = 0; i < s->n_args; i++)
			if (s->args[i].call == c && s->args[i].pos >= 0 && s->args[i].kind == PY_STR)
				add_param_names(p, s->args[i].text);
		if (!p->flag[0] && !p->flag2[0])
			continue;   /* a positional parameter */
		if (!p->flag[0]) {
			adv_strlcpy(p->flag, p->flag2, sizeof(p->flag));
			p->flag2[0] = '\0';
		}
		a = arg_of(r, c, "dest", -1);
		/* argparse's dest: the first long option, '-' as '_'. */
		if (a && a->kind == PY_STR) {
			p->dest = a->text;
		} else {
			adv_strlcpy(p->destbuf, p->flag + strspn(p->flag, "-"), sizeof(p->destbuf));
			for (char *q = p->destbuf; *q; q++)
				if (*q == '-')
					*q = '_';
			p->dest = p->destbuf;
		}
		a = arg_of(r, c, "action", -1);
		p->store_true = a && a->kind == PY_STR && !strcmp(a->text, "store_true");
		p->store_false = a && a->kind == PY_STR && !strcmp(a->text, "store_false");
		r->n_params++;
	}
	/* HfArgumentParser's dataclass fields: --name and, since transformers
	 * 4.29, --name-with-dashes (hf_argparser.py _parse_dataclass_field). */
	for (int i = 0; i < s->n_assign && r->n_params < PYR_MAX_PARAMS; i++) {
		struct param *p = &r->params[r->n_params];
		const struct py_assign *a = &s->assign[i];

		if (!a->annotated || param_of(r, a->name))
			continue;
		memset(p, 0, sizeof(*p));
		p->call = -1;
		p->assign = i;
		p->dest = a->name;
		adv_snprintf(p->flag, sizeof(p->flag), "--%s", a->name);
		adv_snprintf(p->flag2, sizeof(p->flag2), "--%s", a->name);
		for (char *q = p->flag2 + 2; *q; q++)
			if (*q == '_')
				*q = '-';
		if (!strcmp(p->flag, p->flag2))
			p->flag2[0] = '\0';
		r->n_params++;
	}
}

/* ---- what the program states ------------------------------------------------------- */

static int truth(const struct pyval *v)
{
	if (!v->known)
		return -1;
	if (v->kind == PY_TRUE)
		return 1;
	if (v->kind == PY_FALSE || v->kind == PY_NONE)
		return 0;
	return jr_parse_bool(v->text);
}

static void say_unknown(struct pyr *r, enum jobread_field f, const struct pyval *v)
{
	jr_set_unknown(r->cx, f, &v->src, "a value the program computes at run time");
}

static void set_int(struct pyr *r, enum jobread_field f, const struct pyval *v)
{
	long long n;

	if (!v->known) {
		say_unknown(r, f, v);
		return;
	}
	if (v->kind == PY_NONE)
		return;
	if ((v->kind == PY_NUM || v->kind == PY_STR) && jr_parse_ll(v->text, &n))
		jr_set_int(r->cx, f, n, &v->src);
}

static int dtype_of(const char *t)
{
	if (!strcmp(t, "bfloat16") || !strcmp(t, "bf16"))
		return ADV_PREC_BF16;
	if (!strcmp(t, "float16") || !strcmp(t, "half") || !strcmp(t, "fp16"))
		return ADV_PREC_FP16;
	if (!strcmp(t, "float32") || !strcmp(t, "float") || !strcmp(t, "fp32"))
		return ADV_PREC_FP32;
	return -1;
}

/* vLLM's QUANTIZATION_METHODS as weight formats (as fw_serve.c). */
static int quant_of(const char *t)
{
	if (!strncmp(t, "awq", 3) || !strncmp(t, "gptq", 4) || !strcmp(t, "bitsandbytes"))
		return ADV_WEIGHTS_INT4;
	if (!strncmp(t, "fp8", 3))
		return ADV_WEIGHTS_FP8;
	if (!strcmp(t, "mxfp4"))
		return ADV_WEIGHTS_MXFP4;
	return -1;
}

/* What reading the program found, beyond the fields. */
struct found {
	bool llm;                  /* evidence of an LLM */
	bool train, infer, lora, hf, trl, multi, one_device, quant4, quant8, vllm;
	int model_call;            /* the call that named the model, -1 */
	int task_line;
	int precision_set;         /* from bf16=/fp16= */
	const char *why;
	int dm;                    /* device_map: 0 none, 1 spread, 2 one device, 3 unknown */
	bool dm_unsloth;           /* given to Unsloth's loader */
	struct jobread_src dm_src;
	struct jobread_src quant_src;
	struct jobread_src task_src;
	bool task_src_set;
};

static void task_at(struct pyr *r, struct found *fd, int call)
{
	if (fd->task_src_set)
		return;
	src_at(r, &fd->task_src, r->s->calls[call].line, pyscan_last(r->s->calls[call].name),
	       JR_STYLE_DERIVED);
	fd->task_src_set = true;
}

/* pipeline("text-generation", ...) or pipeline(task="text2text-generation"). */
static bool text_generation(const struct pyr *r, int c)
{
	const struct py_arg *t = arg_of(r, c, "task", 0);

	return t && t->kind == PY_STR && (!strcmp(t->text, "text-generation") ||
					  !strcmp(t->text, "text2text-generation"));
}

/* The model a call names: LLM evidence when the class says so or the
 * catalog knows it. */
static void model_arg(struct pyr *r, struct found *fd, int c, const struct kwrule *k)
{
	enum role role = r->role[c];
	struct pyval v;

	if (!value_of(r, c, k->kw, k->pos, &v))
		return;
	if (role == R_TRAINER_TRL && !(v.known && v.kind == PY_STR))
		return;   /* a model object, loaded elsewhere */
	/* Another class's load, or a pipeline of another task (image
	 * classification, ...): an LLM only when the catalog knows the model. */
	if ((role == R_LOAD || (role == R_PIPELINE && !text_generation(r, c))) &&
	    !(v.known && v.kind == PY_STR && catalog_find_model(jr_catalog(r->cx), v.text)))
		return;
	if (fd->model_call >= 0)
		return;   /* the first model named is the job's (a reward or draft model follows) */
	fd->model_call = c;
	fd->llm = true;
	if (v.known && v.kind == PY_STR && v.text[0])
		jr_model_ref(r->cx, v.text, &v.src);
	else
		jr_set_unknown(r->cx, JR_MODEL, &v.src, "a value the program computes at run time");
}

static void device_map(struct pyr *r, struct found *fd, const struct pyval *v)
{
	static const char *const spread[] = { "auto", "balanced", "balanced_low_0", "sequential" };

	fd->dm_src = v->src;
	fd->dm = 3;
	if (!v->known)
		return;
	if (v->kind == PY_NUM || (v->kind == PY_STR && !strncmp(v->text, "cuda", 4))) {
		fd->dm = 2;
		return;
	}
	for (size_t k = 0; k < ADV_ARRAY_SIZE(spread); k++)
		if (v->kind == PY_STR && !strcmp(v->text, spread[k]))
			fd->dm = 1;
	if (v->kind == PY_NONE)
		fd->dm = 0;
}

static void keyword(struct pyr *r, struct found *fd, int c, const struct kwrule *k)
{
	struct pyval v;
	int t;

	if (k->act == A_MODEL) {
		model_arg(r, fd, c, k);
		return;
	}
	if (!value_of(r, c, k->kw, k->pos, &v))
		return;
	switch (k->act) {
	case A_MODEL:
		break;   /* model_arg, above */
	case A_INT:
		set_int(r, k->f, &v);
		break;
	case A_BF16: case A_FP16:
		if (truth(&v) == 1) {
			jr_set_int(r->cx, JR_PRECISION, k->act == A_BF16 ? ADV_PREC_BF16 : ADV_PREC_FP16,
				   &v.src);
			fd->precision_set = 1;
		} else if (truth(&v) < 0) {
			say_unknown(r, JR_PRECISION, &v);
		}
		break;
	case A_DTYPE:
		/* The dtype the weights load in: the precision unless the
		 * trainer's bf16/fp16 says otherwise (read after). */
		if (v.known && v.kind == PY_STR && dtype_of(v.text) >= 0 && !fd->precision_set)
			jr_set_int(r->cx, JR_PRECISION, dtype_of(v.text), &v.src);
		break;
	case A_RECOMPUTE:
		t = truth(&v);
		if (t >= 0)
			jr_set_int(r->cx, JR_RECOMPUTE, t ? ADV_RECOMPUTE_FULL : ADV_RECOMPUTE_NONE, &v.src);
		else
			say_unknown(r, JR_RECOMPUTE, &v);
		break;
	case A_DS:
		if (v.known && v.kind == PY_STR && v.text[0])
			jr_read_ds_config(r->cx, v.text);
		else if (v.kind != PY_NONE)
			jr_set_unknown(r->cx, JR_ZERO, &v.src, "a DeepSpeed config named at run time");
		if (v.kind != PY_NONE)
			jr_set_int(r->cx, JR_FRAMEWORK, ADV_FW_DEEPSPEED, &v.src);
		break;
	case A_FSDP:
		if (v.known && v.kind == PY_STR && v.text[0])
			jr_hf_fsdp(r->cx, v.text, &v.src);
		else if (!v.known)
			jr_set_unknown(r->cx, JR_ZERO, &v.src, "an FSDP setting chosen at run time");
		break;
	case A_SAVE_STRATEGY:
		if (v.known && v.kind == PY_STR && !strcasecmp(v.text, "no"))
			jr_set_int(r->cx, JR_CKPT_OFF, 1, &v.src);
		else if (v.known && v.kind == PY_STR && strcasecmp(v.text, "steps") != 0)
			jr_set_unknown(r->cx, JR_CKPT_STEPS, &v.src, "once per epoch or evaluation");
		break;
	case A_SAVE_STEPS:
		if (!jr_get(r->cx, JR_CKPT_OFF)->set && !jr_get(r->cx, JR_CKPT_STEPS)->unknown)
			set_int(r, JR_CKPT_STEPS, &v);
		break;
	case A_DEVICE_MAP:
		device_map(r, fd, &v);
		fd->dm_unsloth = r->role[c] == R_UNSLOTH;
		break;
	case A_4BIT: case A_8BIT:
		if (truth(&v) == 1) {
			fd->quant4 = fd->quant4 || k->act == A_4BIT;
			fd->quant8 = fd->quant8 || k->act == A_8BIT;
			fd->quant_src = v.src;
		}
		break;
	case A_QCONF:
		break;   /* BitsAndBytesConfig is read as a call of its own */
	case A_ATTN:
		if (v.known && v.kind == PY_STR) {
			if (!strcmp(v.text, "eager"))
				jr_set_int(r->cx, JR_ATTENTION, ADV_ATTN_EAGER, &v.src);
			else if (!strncmp(v.text, "flash_attention", 15) || !strcmp(v.text, "sdpa") ||
				 !strcmp(v.text, "flex_attention"))
				jr_set_int(r->cx, JR_ATTENTION, ADV_ATTN_FLASH, &v.src);
		}
		break;
	case A_QUANT:
		if (v.known && v.kind == PY_STR && quant_of(v.text) >= 0)
			jr_set_int(r->cx, JR_WEIGHTS, quant_of(v.text), &v.src);
		break;
	case A_SHARE:
		if (v.known && v.kind == PY_NUM) {
			double d = strtod(v.text, NULL);

			if (d > 0 && d <= 1)
				jr_set_int(r->cx, JR_MEM_SHARE, (long long)(d * 1000 + 0.5), &v.src);
		}
		break;
	case A_PEFT:
		if (v.kind != PY_NONE) {
			fd->lora = true;
			task_at(r, fd, c);
		}
		break;
	case A_TASK:
		if (v.known && v.kind == PY_STR && (!strcmp(v.text, "text-generation") ||
						    !strcmp(v.text, "text2text-generation"))) {
			fd->llm = true;
			fd->infer = true;
			task_at(r, fd, c);
		}
		break;
	case A_DEVICE:
		if (v.known && v.kind == PY_STR && !strncmp(v.text, "cuda", 4))
			fd->one_device = true;
		break;
	}
}

/*
 * deepspeed.initialize with no config of its own takes the one its args
 * name: deepspeed.add_config_arguments adds --deepspeed and
 * --deepspeed_config to the program's parser (DeepSpeed v0.15,
 * deepspeed/__init__.py _add_core_arguments; initialize reads
 * args.deepspeed_config when config is None).
 */
static void ds_cli(struct pyr *r, int c)
{
	const char *v = NULL;
	bool eq = false;
	int i;
	struct jobread_src src;

	if (arg_of(r, c, "config", -1) || arg_of(r, c, "config_params", -1))
		return;
	i = jr_arg_find(r->prog, 1, "--deepspeed_config", &v, &eq);
	if (i < 0)
		return;
	jr_src_arg(&src, r->prog, "--deepspeed_config", eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
	if (v && !(r->prog->unknown && r->prog->unknown[eq ? i : i + 1]))
		jr_read_ds_config(r->cx, v);
	else
		jr_set_unknown(r->cx, JR_ZERO, &src, "a DeepSpeed config named at run time");
	jr_set_int(r->cx, JR_FRAMEWORK, ADV_FW_DEEPSPEED, &src);
}

static void calls(struct pyr *r, struct found *fd)
{
	for (int c = 0; c < r->s->n_calls; c++) {
		enum role role = r->role[c];

		switch (role) {
		case R_LOAD_LLM: case R_UNSLOTH:
			fd->llm = true;
			break;
		case R_VLLM:
			fd->llm = fd->infer = fd->vllm = true;
			task_at(r, fd, c);
			break;
		case R_TARGS_TRL: case R_TRAINER_TRL:
			fd->llm = fd->trl = fd->train = true;
			task_at(r, fd, c);
			break;
		case R_TARGS_HF: case R_TRAINER_HF:
			fd->hf = fd->train = true;
			task_at(r, fd, c);
			break;
		case R_LORA: case R_PEFT:
			fd->lora = true;
			break;
		case R_BACKWARD:
			fd->train = true;
			task_at(r, fd, c);
			break;
		case R_GENERATE:
			fd->infer = true;
			if (!fd->train)
				task_at(r, fd, c);
			break;
		case R_MULTI:
			fd->multi = true;
			break;
		case R_DS_INIT:
			fd->multi = fd->train = true;
			task_at(r, fd, c);
			ds_cli(r, c);
			break;
		case R_TO_DEVICE:
			if (!strcmp(pyscan_last(r->s->calls[c].name), "cuda"))
				fd->one_device = true;
			break;
		default:
			break;
		}
		/* Unsloth loads in 4 bits unless told otherwise (loader.py). */
		if (role == R_UNSLOTH && !arg_of(r, c, "load_in_4bit", -1) &&
		    !arg_of(r, c, "load_in_8bit", -1)) {
			fd->quant4 = true;
			src_at(r, &fd->quant_src, r->s->calls[c].line, "load_in_4bit", JR_STYLE_FLAG_EQ);
			fd->quant_src.fw_default = true;
		}
		if (loads(role) && hides_keywords(r, c) && fd->dm == 0) {
			fd->dm = 3;   /* **kwargs may hold a device_map */
			src_at(r, &fd->dm_src, r->s->calls[c].line, "device_map", JR_STYLE_FLAG_EQ);
		}
		for (size_t k = 0; k < ADV_ARRAY_SIZE(kwrules); k++)
			if (rule_applies(&kwrules[k], role))
				keyword(r, fd, c, &kwrules[k]);
	}
}

/* ---- processes and GPUs ------------------------------------------------------------ */

/* Processes the launch starts on one node: 1 for a program the batch
 * script runs itself; 0 when not known. */
static int procs_per_node(struct pyr *r)
{
	const struct jobread_value *np = jr_get(r->cx, JR_NPROC_PER_NODE), *w = jr_get(r->cx, JR_WORLD);
	const struct jobread_out *o = jr_out(r->cx);
	int nodes = jr_input(r->cx)->res.nodes;

	if (np->set)
		return np->unknown ? 0 : (int)np->i;
	if (w->set)
		return w->unknown ? 0 : nodes > 0 && w->i % nodes == 0 ? (int)(w->i / nodes)
		       : w->i == 1 ? 1 : 0;
	return o->launcher[0] ? 0 : 1;
}

static void gpus(struct pyr *r, struct found *fd)
{
	const struct jobread_input *in = jr_input(r->cx);
	int per = procs_per_node(r);
	int gpn = in->res.gpus_per_node > 0 ? in->res.gpus_per_node
		: in->res.nodes <= 1 ? in->res.gpus : 0;
	struct jobread_src s;

	/* The batch script runs on the job's first node (sbatch(1)): a
	 * program it starts without a launcher uses that node's GPUs alone
	 * (vLLM may reach other nodes through a Ray cluster: not said). */
	if (!jr_out(r->cx)->launcher[0] && in->res.nodes > 1 && !fd->vllm && !fd->multi &&
	    jr_out(r->cx)->step_nodes == 0) {
		jr_note(r->cx, ADV_CODE_GPUS_IDLE, "request 1 node (-N 1), or start the program on "
			"every node (srun, torchrun --nnodes)",
			"%s runs in the batch script, on the first of the job's %d nodes only: the "
			"GPUs of the other %d stay idle", r->display, in->res.nodes,
			in->res.nodes - 1);
		return;
	}
	if (fd->dm == 1 && per > 1 && !(fd->dm_unsloth && (fd->quant4 || fd->quant8))) {
		jr_note(r->cx, ADV_CODE_SCRIPT_CONFLICT,
			"device_map=None under the launcher, or one process (python) with device_map",
			"%s:%d: device_map=\"auto\" under %d processes per node: each process spreads its "
			"own copy of the model over every GPU it sees, and accelerate refuses to train "
			"such a model in a distributed mode", fd->dm_src.file, fd->dm_src.line, per);
		return;
	}
	/* One process (python, or accelerate launch --num_processes 1 as
	 * accelerate's own refusal advises) that spreads its model. */
	if (fd->dm == 1 && per == 1 && gpn > 1 && in->res.nodes <= 1 &&
	    (!jr_get(r->cx, JR_WORLD)->set || (!jr_get(r->cx, JR_WORLD)->unknown &&
					      jr_get(r->cx, JR_WORLD)->i == 1)) &&
	    !jr_get(r->cx, JR_TP)->set && !jr_get(r->cx, JR_PP)->set) {
		/* One process drives every GPU of the node, the model's layers
		 * placed in order over them: as many pipeline stages, run one
		 * at a time. */
		s = fd->dm_src;
		s.fw_default = true;
		jr_set_int(r->cx, JR_WORLD, gpn, &s);
		jr_set_int(r->cx, JR_NPROC_PER_NODE, gpn, &s);
		s.style = JR_STYLE_DERIVED;
		jr_set_int(r->cx, JR_PP, gpn, &s);
		jr_note(r->cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
			"%s:%d: device_map=\"auto\": one process places the model's layers in order over "
			"the node's %d GPUs (accelerate's balanced map); judged as %d pipeline stages",
			fd->dm_src.file, fd->dm_src.line, gpn, gpn);
		return;
	}
	/* vLLM's engine starts tensor_parallel_size x pipeline_parallel_size
	 * workers of its own, one per GPU, whatever the node has. */
	if (fd->vllm && per == 1 && gpn > 1 && !jr_out(r->cx)->launcher[0] && !fd->multi) {
		const struct jobread_value *tp = jr_get(r->cx, JR_TP), *pp = jr_get(r->cx, JR_PP);
		long long w = (tp->set && !tp->unknown ? tp->i : tp->set ? 0 : 1) *
			      (pp->set && !pp->unknown ? pp->i : pp->set ? 0 : 1);

		char fix[128];

		adv_snprintf(fix, sizeof(fix), "request %lld GPUs (--gres=gpu:%lld), or spread the "
			     "engine over %d", w, w, gpn);
		if (w > 0 && w < gpn)
			jr_note(r->cx, ADV_CODE_GPUS_IDLE, fix,
				"%s starts vLLM's engine on tensor_parallel_size x pipeline_parallel_size "
				"= %lld GPUs: %lld of the node's %d GPUs stay idle", r->display, w,
				gpn - w, gpn);
		return;
	}
	if (fd->dm != 1 && fd->dm != 3 && per == 1 && gpn > 1 && fd->one_device && !fd->multi &&
	    !fd->hf && !fd->trl && !fd->vllm && !jr_out(r->cx)->launcher[0])
		jr_note(r->cx, ADV_CODE_GPUS_IDLE, "request 1 GPU (--gres=gpu:1), or spread the model "
			"with device_map=\"auto\"",
			"%s runs as one process that places its model on one GPU (no device_map, "
			"DataParallel or launcher): %d of the node's %d GPUs stay idle", r->display,
			gpn - 1, gpn);
}

static bool has_py(const char *s)
{
	size_t n = strlen(s);

	return n > 3 && !strcmp(s + n - 3, ".py");
}

/* Inside the submit directory: relative without "..", or absolute under it. */
static bool in_submit_dir(struct jr_ctx *cx, const char *path)
{
	const char *cwd = jr_input(cx)->cwd;
	char abs[JOBREAD_PATH_MAX];
	size_t n;

	if (strstr(path, "../") || !strcmp(path, ".."))
		return false;
	jr_resolve(cx, path, abs, sizeof(abs));
	if (!cwd || !cwd[0] || !strcmp(cwd, "/"))
		return true;
	n = strlen(cwd);
	while (n > 1 && cwd[n - 1] == '/')
		n--;
	return !strncmp(abs, cwd, n) && abs[n] == '/';
}

/* ---- the program's own modules ----------------------------------------------- */

/* Modules of the program's own directory followed per program, and files
 * tried for them: each is a file the client ships, within JOBREAD_MAX_FILES
 * (a config file the program names must still find room). */
#define PYR_MAX_MODULES 3
#define PYR_MAX_TRIES 4

/* Libraries, not the job's modules: never asked of the client. */
static bool library(const char *name)
{
	static const char *const libs[] = {
		"torch", "transformers", "peft", "trl", "datasets", "accelerate", "vllm", "unsloth",
		"deepspeed", "bitsandbytes", "numpy", "pandas", "os", "sys", "json", "argparse",
		"dataclasses", "typing", "math", "re", "random", "time", "logging", "pathlib",
		"functools", "itertools", "collections", "subprocess", "yaml", "wandb", "tqdm",
		"evaluate", "sklearn", "scipy", "torchvision", "safetensors", "huggingface_hub",
		"tokenizers", "sentencepiece", "einops", "flash_attn", "omegaconf", "hydra", "fire",
		"contextlib", "shutil", "glob", "warnings", "copy", "abc", "enum", "io", "socket",
		"datetime", "pickle", "__future__",
	};
	size_t n = strcspn(name, ".");

	for (size_t k = 0; k < ADV_ARRAY_SIZE(libs); k++)
		if (strlen(libs[k]) == n && !strncmp(name, libs[k], n))
			return true;
	return false;
}

/*
 * The modules the program imports from its own directory ("from model
 * import load", "from .data import x", "import lab.train"): read for the
 * evidence the program itself does not hold (its model loaded by a helper),
 * with the same table.  Names the program's parameters hold are not
 * followed across files: a module's own literals only.  *read lists the
 * modules read, for the reason a program is no LLM job's.
 */
static void modules(struct pyr *r, struct found *fd, const char *path, bool is_module, char *read,
		    size_t len)
{
	char dir[JOBREAD_PATH_MAX], cand[JOBREAD_PATH_MAX], seen[PYR_MAX_TRIES][JOBREAD_PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct pyr *m = NULL;
	int tries = 0, n_read = 0;

	adv_snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
	for (int i = 0; i < r->s->n_imports && tries < PYR_MAX_TRIES && n_read < PYR_MAX_MODULES; i++) {
		const char *name = r->s->imports[i].name, *text;
		/* An absolute import from the script's directory, or from the
		 * working directory under "python -m" (sys.path[0]); a relative
		 * one from the program's package, its directory. */
		const char *base = name[0] == '.' || !is_module ? dir : "";
		size_t n, tl = 0;
		bool dup = false;

		if (name[0] == '.')
			name++;
		if (!name[0] || name[0] == '.' || library(name))
			continue;
		n = (size_t)adv_snprintf(cand, sizeof(cand), "%s%s%s.py", base, base[0] ? "/" : "", name);
		if (n >= sizeof(cand))
			continue;
		for (char *q = cand + strlen(base) + (base[0] ? 1 : 0); *q && q < cand + n - 3; q++)
			if (*q == '.')
				*q = '/';
		for (int k = 0; k < tries; k++)
			dup = dup || !strcmp(seen[k], cand);
		if (dup || !strcmp(cand, path) || !in_submit_dir(r->cx, cand))
			continue;
		adv_strlcpy(seen[tries++], cand, sizeof(seen[0]));
		text = jr_load_text(r->cx, cand, &tl);
		if (!text)
			continue;   /* not the job's, or asked of the client (a later round) */
		if (!m) {
			m = malloc(sizeof(*m));
			if (m)
				m->s = malloc(sizeof(*m->s));
			if (!m || !m->s) {
				free(m);
				return;
			}
		}
		m->cx = r->cx;
		m->prog = r->prog;
		m->display = cand;
		m->n_params = 0;
		pyscan_run(text, tl, want_call, NULL, m->s);
		for (int c = 0; c < m->s->n_calls; c++)
			m->role[c] = role_of(m->s->calls[c].name);
		calls(m, fd);
		n_read++;
		adv_snprintf(read + strlen(read), len - strlen(read), "%s%s", read[0] ? ", " : "", cand);
	}
	if (m)
		free(m->s);
	free(m);
}

/* ---- the program ------------------------------------------------------------------- */

/* Modules that are tools, not a job's program. */
static bool tool_module(const char *m)
{
	static const char *const tools[] = {
		"pip", "venv", "ensurepip", "http.server", "json.tool", "site", "sysconfig",
		"torch.utils.collect_env", "huggingface_hub", "wandb", "nvitop", "gpustat", "timeit",
		"compileall", "pytest", "unittest",
	};

	for (size_t k = 0; k < ADV_ARRAY_SIZE(tools); k++)
		if (!strcmp(m, tools[k]) || (!strncmp(m, tools[k], strlen(tools[k])) &&
					     m[strlen(tools[k])] == '.'))
			return true;
	return false;
}

static void reason(struct jr_ctx *cx, const char *name, const struct jobread_src *src, const char *why)
{
	jr_program_said(cx, JR_PROGRAM_NOT_READ, name, src, why);
}

/*
 * Reads one program.  A program whose only evidence is a model it loads,
 * with nothing that trains or serves it (a download or a conversion script
 * before the launch), does not end the walk: it is kept aside
 * (JR_PY_WEAK) and read for good (final) only when no other command of the
 * job is read as its workload (jr_program_finish).
 */
static int py_program(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module, bool final)
{
	const char *a0 = prog && prog->argc > 0 ? prog->argv[0] : NULL;
	int n_notes = jr_out(cx)->n_notes;
	char path[2][JOBREAD_PATH_MAX];
	const char *text = NULL, *display = NULL;
	size_t len = 0;
	int n_path = 0, n_need = jr_out(cx)->n_need;
	struct jobread_src src;
	struct pyr *r;
	struct found fd;
	char mods[JOBREAD_PATH_MAX] = "";

	if (!a0 || (prog->unknown && prog->unknown[0]))
		return JR_PY_NONE;
	jr_src_word(&src, prog, 0, "", JR_STYLE_FLAG);
	if (is_module) {
		size_t n = strlen(a0);

		if (n == 0 || n >= JOBREAD_PATH_MAX - 16 || strspn(a0, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != n || tool_module(a0))
			return JR_PY_NONE;
		adv_snprintf(path[0], sizeof(path[0]), "%s.py", a0);
		for (char *q = path[0]; *q && q < path[0] + n; q++)
			if (*q == '.')
				*q = '/';
		adv_snprintf(path[1], sizeof(path[1]), "%.*s/__main__.py", (int)n, path[0]);
		n_path = 2;
	} else {
		if (!has_py(a0))
			return JR_PY_NONE;
		adv_strlcpy(path[0], a0, sizeof(path[0]));
		n_path = 1;
	}
	for (int i = 0; i < n_path && !text; i++) {
		if (!in_submit_dir(cx, path[i])) {
			reason(cx, a0, &src, "it is not in the submit directory");
			return JR_PY_NOT_READ;
		}
		text = jr_load_text(cx, path[i], &len);
		display = path[i][0] == '.' && path[i][1] == '/' ? path[i] + 2 : path[i];
	}
	if (!text) {
		if (jr_out(cx)->n_need > n_need)
			return JR_PY_NEED;   /* the client ships it; a later round reads it */
		reason(cx, a0, &src, is_module ? "it is no file of the submit directory (an installed "
					       "package is not read)"
					     : "it is missing, or over the reader's 256 KiB budget");
		return JR_PY_NOT_READ;
	}
	r = malloc(sizeof(*r));
	if (r)
		r->s = malloc(sizeof(*r->s));
	if (!r || !r->s) {
		free(r);
		return JR_PY_NONE;
	}
	r->cx = cx;
	r->prog = prog;
	r->display = display;
	r->n_params = 0;
	pyscan_run(text, len, want_call, NULL, r->s);
	for (int c = 0; c < r->s->n_calls; c++)
		r->role[c] = role_of(r->s->calls[c].name);
	params(r);
	memset(&fd, 0, sizeof(fd));
	fd.model_call = -1;
	/* Read in order: the loading calls' dtype, then the trainer's bf16/fp16. */
	calls(r, &fd);
	if (!fd.llm || fd.model_call < 0)
		modules(r, &fd, display, is_module, mods, sizeof(mods));
	if (!fd.llm) {
		char why[ADV_MSG_MAX];

		adv_snprintf(why, sizeof(why), "%s read (%d lines%s%s%s): no causal-LM load, LLM "
			     "engine, TRL trainer or catalog model in it", display, r->s->lines,
			     r->s->cut ? ", in part" : "", mods[0] ? "; with " : "", mods);
		jr_program_said(cx, JR_PROGRAM_NOT_LLM, a0, &src, why);
		jr_program_explained(cx, prog->file, prog->line);
		free(r->s);
		free(r);
		return JR_PY_NOT_LLM;
	}
	if (!final && !fd.train && !fd.infer && !fd.hf && !fd.trl && !fd.vllm) {
		jr_out(cx)->n_notes = n_notes;
		jr_program_weak(cx, prog, is_module);
		free(r->s);
		free(r);
		return JR_PY_WEAK;
	}
	{
		struct jobread_src ts = fd.task_src_set ? fd.task_src : src;
		int task = -1;

		jr_set_trainer(cx, fd.trl ? "trl" : fd.hf ? "hf" : "python", -1, &src);
		if (fd.train)
			task = fd.lora ? ADV_TASK_LORA : ADV_TASK_FINETUNE;
		else if (fd.infer)
			task = ADV_TASK_INFER;
		if (task >= 0)
			jr_set_int(cx, JR_TASK, task, &ts);
		/* 4- and 8-bit loading: the frozen weights of a server or of LoRA (QLoRA). */
		if ((fd.quant4 || fd.quant8) && (task == ADV_TASK_LORA || task == ADV_TASK_INFER))
			jr_set_int(cx, JR_WEIGHTS, fd.quant4 ? ADV_WEIGHTS_INT4 : ADV_WEIGHTS_INT8,
				   &fd.quant_src);
		/* TrainingArguments' save_steps default (training_args.py). */
		if (fd.hf || fd.trl) {
			const struct jobread_value *st = jr_get(cx, JR_CKPT_STEPS);

			if (!st->set && !jr_get(cx, JR_CKPT_OFF)->set) {
				struct jobread_src ss = ts;

				adv_strlcpy(ss.key, "save_steps", sizeof(ss.key));
				ss.style = JR_STYLE_FLAG_EQ;
				ss.fw_default = true;
				jr_set_int(cx, JR_CKPT_STEPS, 500, &ss);
			}
		}
		if (r->s->cut)
			jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
				"%s was read in part (over the reader's bounds of calls and names); what "
				"comes after is not judged", display);
		gpus(r, &fd);
	}
	free(r->s);
	free(r);
	return JR_PY_LLM;
}

int jr_py_program(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	return py_program(cx, prog, is_module, false);
}

void jr_program_finish(struct jr_ctx *cx)
{
	struct jobread_out *o = jr_out(cx);
	const struct jr_program *nr = jr_program_get(cx, JR_PROGRAM_NOT_READ);
	const struct jr_program *nl = jr_program_get(cx, JR_PROGRAM_NOT_LLM);
	struct jr_cmd weak;
	bool weak_module;

	if (o->n_need > 0 || o->trainer[0])
		return;
	/* A program that only loads a model, where nothing else is the
	 * job's workload: it is (its file is read already). */
	if (!nr && jr_program_weak_get(cx, &weak, &weak_module) &&
	    py_program(cx, &weak, weak_module, true) == JR_PY_LLM) {
		o->is_llm = true;
		return;
	}
	if (nr) {
		jr_note(cx, ADV_CODE_PROGRAM_NOT_READ, "--llm-model=NAME --llm-task=train|finetune|lora|infer "
			"--llm-layout=LIST --llm-mbs=N --llm-seq=N",
			"%s:%d: %s was not read (%s), so what it trains or serves is unknown and not "
			"checked; state it with the --llm-* options", nr->src.file, nr->src.line,
			nr->name, nr->why);
		o->is_llm = true;
		return;
	}
	if (nl && !o->is_llm) {
		adv_strlcpy(o->program_why, nl->why, sizeof(o->program_why));
		adv_snprintf(o->not_llm_why, sizeof(o->not_llm_why), "%s:%d: %s", nl->src.file,
			     nl->src.line, nl->why);
	}
}

/*
 * A program a flag-based trainer reader already read (fw_hf.c: an HF or
 * TRL script by its --model_name_or_path, --per_device_train_batch_size
 * flags): the flags win, as HfArgumentParser gives them over the
 * dataclasses' defaults, but what only the program states (LoRA over 4-bit
 * weights, device_map, a DeepSpeed JSON in TrainingArguments) is read from
 * it.  LoRA in the program makes the task lora whatever the flags derived.
 */
void jr_py_supplement(struct jr_ctx *cx, const struct jr_cmd *prog)
{
	struct jobread_out *o = jr_out(cx);
	struct jobread_value *save;
	char trainer[sizeof(o->trainer)];
	int rc;

	if (!prog || prog->argc < 1 || !prog->argv[0] || !has_py(prog->argv[0]) ||
	    (prog->unknown && prog->unknown[0]))
		return;
	save = malloc(sizeof(o->v));
	if (!save)
		return;
	memcpy(save, o->v, sizeof(o->v));
	adv_strlcpy(trainer, o->trainer, sizeof(trainer));
	rc = py_program(cx, prog, false, true);
	for (int f = 0; f < JR_FIELD_COUNT; f++) {
		bool lora = f == JR_TASK && rc == JR_PY_LLM && o->v[f].set && !o->v[f].unknown &&
			    o->v[f].i == ADV_TASK_LORA;

		if (rc != JR_PY_LLM || (save[f].set && !lora))
			o->v[f] = save[f];
	}
	adv_strlcpy(o->trainer, trainer, sizeof(o->trainer));
	o->is_llm = true;
	free(save);
}
