/*
 * fw_openrlhf.c - OpenRLHF training jobs: `deepspeed --module
 * openrlhf.cli.train_sft ARGS` (and train_dpo, train_rm, train_kto,
 * train_kd, train_prm, train_ppo, train_ppo_ray, train_grpo...), `python -m`
 * or `torchrun -m` of the same modules, `ray job submit -- python3 -m ...`.
 *
 * Its entry points read plain argparse flags, in two spellings over the
 * releases (OpenRLHF/OpenRLHF openrlhf/cli/train_sft.py, f2afba4, and the
 * dotted sections of later releases: --ds.*, --train.*, --data.*,
 * --model.*, --ckpt.*).  One table (or_flags) gives each setting both
 * spellings, the workload field it sets and, where every entry point
 * agrees, its argparse default:
 * - --zero_stage / --ds.zero_stage, default 2 (DeepSpeed ZeRO-2);
 * - --pretrain / --model.model_name_or_path: the model trained (the
 *   actor of the RL entry points);
 * - --micro_train_batch_size / --train.micro_batch_size, --train_batch_size
 *   / --train.batch_size (the global batch), --max_len / --data.max_len:
 *   their defaults differ between entry points, so a job that leaves them
 *   out leaves them unknown;
 * - --gradient_checkpointing / --model.gradient_checkpointing_enable /
 *   --actor.gradient_checkpointing_enable (store_true, default off: no
 *   recompute);
 * - --bf16 (store_true) / --ds.param_dtype (bf16 by default in the dotted
 *   releases);
 * - --lora_rank / --ds.lora.rank (0: no LoRA), --load_in_4bit /
 *   --ds.load_in_4bit (a 4-bit base, QLoRA);
 * - --save_steps / --ckpt.save_steps (-1: only at the end).
 * The RL entry points run the actor beside a reference model, a critic and
 * vLLM engines on the same or other GPUs (--actor_num_nodes, Ray placement
 * groups): only the actor's training is costed, and that is said.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "jobread/ctx.h"
#include "jobread/reader.h"
#include "util.h"

/* Command-line words looked at, at most. */
#define OR_MAX_ARGS 1024

enum or_kind {
	OR_INT,          /* a whole number */
	OR_MODEL,        /* a model id or path */
	OR_ON_RECOMPUTE, /* a store_true flag: full recompute when given */
	OR_ON_BF16,      /* a store_true flag: bf16 when given */
	OR_DTYPE,        /* bf16 | fp16 */
	OR_LORA_RANK,    /* > 0: LoRA */
	OR_ON_4BIT,      /* a store_true flag: a 4-bit base */
	OR_SAVE_STEPS,   /* > 0 steps; -1 only at the end */
};

static const struct or_flag {
	const char *names[4];       /* the old spelling first, then the dotted ones */
	enum jobread_field field;
	enum or_kind kind;
	bool has_def;               /* every entry point's argparse default */
	long long def;
	const char *def_text;       /* the default as the source says it */
} or_flags[] = {
	{ { "--zero_stage", "--ds.zero_stage", NULL }, JR_ZERO, OR_INT, true, 2, "2" },
	{ { "--pretrain", "--model.model_name_or_path", "--actor.model_name_or_path", NULL },
	  JR_MODEL, OR_MODEL, false, 0, NULL },
	{ { "--micro_train_batch_size", "--train.micro_batch_size", NULL }, JR_MBS, OR_INT, false,
	  0, NULL },
	{ { "--train_batch_size", "--train.batch_size", NULL }, JR_GBS, OR_INT, false, 0, NULL },
	{ { "--max_len", "--data.max_len", NULL }, JR_SEQ, OR_INT, false, 0, NULL },
	{ { "--gradient_checkpointing", "--model.gradient_checkpointing_enable",
	    "--actor.gradient_checkpointing_enable", NULL },
	  JR_RECOMPUTE, OR_ON_RECOMPUTE, true, ADV_RECOMPUTE_NONE, "off" },
	{ { "--bf16", NULL }, JR_PRECISION, OR_ON_BF16, false, 0, NULL },
	{ { "--ds.param_dtype", NULL }, JR_PRECISION, OR_DTYPE, false, 0, NULL },
	{ { "--lora_rank", "--ds.lora.rank", NULL }, JR_TASK, OR_LORA_RANK, false, 0, NULL },
	{ { "--load_in_4bit", "--ds.load_in_4bit", NULL }, JR_WEIGHTS, OR_ON_4BIT, false, 0, NULL },
	{ { "--save_steps", "--ckpt.save_steps", NULL }, JR_CKPT_STEPS, OR_SAVE_STEPS, false, 0,
	  NULL },
};

/* The last occurrence of any of names: its index, the value (NULL for a
 * bare flag) and the spelling found. */
static int find(const struct jr_cmd *p, const char *const *names, const char **val,
		const char **which, bool *unknown)
{
	int found = -1, limit = p->argc < OR_MAX_ARGS ? p->argc : OR_MAX_ARGS;

	*val = NULL;
	*which = NULL;
	*unknown = false;
	for (int i = 1; i < limit; i++) {
		const char *w = p->argv[i];

		if (!w || strncmp(w, "--", 2))
			continue;
		for (int k = 0; k < 4 && names[k]; k++) {
			size_t n = strlen(names[k]);

			if (strncmp(w, names[k], n) || (w[n] && w[n] != '='))
				continue;
			found = i;
			*which = names[k];
			if (w[n] == '=') {
				*val = w + n + 1;
				*unknown = p->unknown && p->unknown[i];
			} else if (i + 1 < p->argc && p->argv[i + 1] && strncmp(p->argv[i + 1], "--", 2)) {
				*val = p->argv[i + 1];
				*unknown = p->unknown && p->unknown[i + 1];
			} else {
				*val = NULL;
			}
		}
	}
	return found;
}

static void set_default(struct jr_ctx *cx, const struct or_flag *f)
{
	struct jobread_src src;

	memset(&src, 0, sizeof(src));
	adv_snprintf(src.key, sizeof(src.key), "openrlhf default (no %s: %s)", f->names[0],
		     f->def_text);
	src.style = JR_STYLE_DERIVED;
	src.fw_default = true;
	jr_set_int(cx, f->field, f->def, &src);
}

static void read_flag(struct jr_ctx *cx, const struct jr_cmd *p, const struct or_flag *f)
{
	const char *val, *which;
	bool unknown;
	struct jobread_src src;
	long long n;
	int i = find(p, f->names, &val, &which, &unknown);

	if (i < 0) {
		if (f->has_def)
			set_default(cx, f);
		return;
	}
	jr_src_arg(&src, p, which, val && strchr(p->argv[i], '=') ? JR_STYLE_FLAG_EQ
				   : val ? JR_STYLE_FLAG : JR_STYLE_BOOL);
	if (unknown) {
		jr_set_unknown(cx, f->field, &src, "a value computed at run time");
		return;
	}
	switch (f->kind) {
	case OR_MODEL:
		if (val)
			jr_model_ref(cx, val, &src);
		break;
	case OR_ON_RECOMPUTE:
		jr_set_int(cx, f->field, ADV_RECOMPUTE_FULL, &src);
		break;
	case OR_ON_BF16:
		jr_set_int(cx, f->field, ADV_PREC_BF16, &src);
		break;
	case OR_ON_4BIT:
		jr_set_int(cx, f->field, ADV_WEIGHTS_INT4, &src);
		break;
	case OR_DTYPE:
		if (val && !strcasecmp(val, "bf16"))
			jr_set_int(cx, f->field, ADV_PREC_BF16, &src);
		else if (val && !strcasecmp(val, "fp16"))
			jr_set_int(cx, f->field, ADV_PREC_FP16, &src);
		break;
	case OR_LORA_RANK:
		if (val && jr_parse_ll(val, &n))
			jr_set_int(cx, f->field, n > 0 ? ADV_TASK_LORA : ADV_TASK_FINETUNE, &src);
		break;
	case OR_SAVE_STEPS:
		if (val && jr_parse_ll(val, &n) && n > 0)
			jr_set_int(cx, f->field, n, &src);
		else if (val && jr_parse_ll(val, &n))
			jr_set_unknown(cx, f->field, &src, "only at the end of training");
		break;
	case OR_INT:
		if (val && jr_parse_ll(val, &n) && n >= 0)
			jr_set_int(cx, f->field, n, &src);
		else
			jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
				"%s:%d: %s '%s' is not a whole number; ignored", src.file, src.line,
				which, val ? val : "");
		break;
	}
}

bool jr_fw_openrlhf(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct jobread_src src;
	const char *a0;
	bool rl;

	if (!prog || prog->argc < 1 || !(a0 = prog->argv[0]) || !is_module ||
	    strncmp(a0, "openrlhf.cli.train_", 19))
		return false;
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';
	jr_set_trainer(cx, "openrlhf", ADV_FW_DEEPSPEED, &src);
	jr_set_int(cx, JR_TASK, ADV_TASK_FINETUNE, &src);
	for (size_t k = 0; k < ADV_ARRAY_SIZE(or_flags); k++)
		read_flag(cx, prog, &or_flags[k]);
	/* The RL entry points: the actor is costed, not its companions. */
	rl = strstr(a0, "ppo") || strstr(a0, "grpo") || strstr(a0, "reinforce");
	if (rl) {
		/* Ray places the actor (--actor_num_nodes x --actor_num_gpus_per_node)
		 * at run time: the launch's own world is the driver's. */
		jr_set_unknown(cx, JR_WORLD, &src, "the Ray placement of the actor");
		jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
			"%s:%d: %s trains the actor beside a reference model, a critic and vLLM "
			"engines that advisor does not cost: memory is the actor's alone", src.file,
			src.line, a0);
	}
	return true;
}
