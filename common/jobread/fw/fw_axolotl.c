/*
 * fw_axolotl.c - axolotl fine-tuning jobs: `axolotl train CFG.yml`,
 * `python -m axolotl.cli.train CFG.yml`, `accelerate launch -m
 * axolotl.cli.train CFG.yml`.
 *
 * The YAML holds axolotl's config (src/axolotl/utils/schemas/config.py,
 * AxolotlInputConfig; the layout of the examples/llama-3 YAML files): base_model
 * (a Hub id or a local directory), adapter (lora, qlora: the task is
 * lora), micro_batch_size, gradient_accumulation_steps, sequence_len,
 * gradient_checkpointing, bf16 / fp16 (true, false or "auto": the GPU
 * decides, not known here), deepspeed (a DeepSpeed JSON, read by
 * fw_deepspeed.c), fsdp (a list of FSDP options, "full_shard" ...) with
 * fsdp_config (fsdp_sharding_strategy; FSDP2's reshard_after_forward),
 * tensor_parallel_size, context_parallel_size, save_strategy, save_steps
 * and saves_per_epoch.  Options on the command line (`--key value`,
 * `--key=value`, '-' or '_') override the file (axolotl/cli/args.py and
 * the CLI's kwargs merge in axolotl/cli/config.py).  Without save_steps or
 * saves_per_epoch axolotl saves at the end of each epoch.
 *
 * `axolotl train CFG --launcher torchrun -- ARGS` runs `torchrun ARGS -m
 * axolotl.cli.train CFG` (accelerate: `accelerate launch ARGS -m ...`;
 * axolotl/cli/main.py takes what follows "--" as the launcher's
 * arguments, cli/utils/train.py builds the command): those arguments make
 * the world, read as the launcher's own (launch.c).  Options after "--"
 * are not axolotl's.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobread/ctx.h"
#include "jobread/reader.h"
#include "util.h"

/* Command-line words looked at, at most. */
#define AX_MAX_ARGS 512

struct ax {
	struct jr_ctx *cx;
	const struct jr_cmd *p;
	int from;                       /* first word after the config file */
	const struct cfg_node *root;
	const char *display;
};

struct axv {
	bool unknown;
	bool list;                      /* a YAML list (fsdp) */
	const struct cfg_node *node;
	char text[256];
	struct jobread_src src;
};

static bool from_args(const struct ax *a, const char *key, struct axv *out)
{
	const struct jr_cmd *p = a->p;
	int found = -1, limit = p->argc < AX_MAX_ARGS ? p->argc : AX_MAX_ARGS;
	bool eq = false;

	for (int i = a->from; i < limit; i++) {
		const char *w = p->argv[i], *e;

		if (!w || strncmp(w, "--", 2))
			continue;
		if (!w[2])
			break;   /* "--": the launcher's arguments follow */
		e = strchr(w + 2, '=');
		if (jr_same_key(w + 2, e ? (size_t)(e - w - 2) : strlen(w + 2), key)) {
			found = i;
			eq = e != NULL;
		}
	}
	if (found < 0)
		return false;
	memset(out, 0, sizeof(*out));
	{
		const char *w = p->argv[found], *e = strchr(w, '=');
		char written[96];

		adv_snprintf(written, sizeof(written), "%.*s", (int)(e ? (size_t)(e - w) : strlen(w)), w);
		jr_src_arg(&out->src, p, written, eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
		if (eq) {
			out->unknown = p->unknown && p->unknown[found];
			adv_strlcpy(out->text, e + 1, sizeof(out->text));
		} else if (found + 1 < p->argc && p->argv[found + 1] && strncmp(p->argv[found + 1], "--", 2)) {
			out->unknown = p->unknown && p->unknown[found + 1];
			adv_strlcpy(out->text, p->argv[found + 1], sizeof(out->text));
		} else {
			adv_strlcpy(out->text, "true", sizeof(out->text));
			out->src.style = JR_STYLE_BOOL;
		}
	}
	if (out->unknown)
		adv_strlcpy(out->text, "a value computed at run time", sizeof(out->text));
	return true;
}

static bool get(const struct ax *a, const char *key, struct axv *out)
{
	const struct cfg_node *n;

	if (!strchr(key, '.') && from_args(a, key, out))
		return true;
	if (!a->root)
		return false;
	n = cfg_path(a->root, key);
	if (!n || n->type == CFG_NULL)
		return false;
	memset(out, 0, sizeof(*out));
	out->node = n;
	out->list = n->type == CFG_LIST;
	if (cfg_str(n))
		adv_strlcpy(out->text, cfg_str(n), sizeof(out->text));
	jr_src_node(&out->src, a->display, n, key, JR_STYLE_YAML);
	return true;
}

static bool set_int(struct ax *a, enum jobread_field f, const char *key, long long *out)
{
	struct axv v;
	long long n;

	if (!get(a, key, &v) || v.list)
		return false;
	if (v.unknown) {
		jr_set_unknown(a->cx, f, &v.src, v.text);
		return false;
	}
	if (!jr_parse_ll(v.text, &n)) {
		jr_note(a->cx, ADV_CODE_SCRIPT_UNKNOWN, NULL, "%s:%d: %s '%s' is not a whole number; ignored",
			v.src.file, v.src.line, key, v.text);
		return false;
	}
	jr_set_int(a->cx, f, n, &v.src);
	if (out)
		*out = n;
	return true;
}

/* FSDP sharding strategies (torch names, accelerate's numbers). */
static int fsdp_zero(const char *s)
{
	if (!strcasecmp(s, "full_shard") || !strcasecmp(s, "hybrid_shard") || !strcmp(s, "1") ||
	    !strcmp(s, "4"))
		return 3;
	if (!strcasecmp(s, "shard_grad_op") || !strcasecmp(s, "hybrid_shard_zero2") ||
	    !strcasecmp(s, "_hybrid_shard_zero2") || !strcmp(s, "2") || !strcmp(s, "5"))
		return 2;
	if (!strcasecmp(s, "no_shard") || !strcmp(s, "3"))
		return 0;
	return -1;
}

static void sharding(struct ax *a)
{
	struct axv v;
	bool b;
	int z = -1;

	if (get(a, "deepspeed", &v) && !v.list) {
		if (v.unknown || !v.text[0])
			jr_set_unknown(a->cx, JR_ZERO, &v.src, "a DeepSpeed config named at run time");
		else
			jr_read_ds_config(a->cx, v.text);
		jr_set_int(a->cx, JR_FRAMEWORK, ADV_FW_DEEPSPEED, &v.src);
		return;
	}
	if (get(a, "fsdp", &v)) {
		struct jobread_src src = v.src;

		if (v.list) {
			for (const struct cfg_node *e = v.node->child; e; e = e->next)
				if (cfg_str(e) && fsdp_zero(cfg_str(e)) >= 0)
					z = fsdp_zero(cfg_str(e));
		} else if (!v.unknown) {
			/* "full_shard auto_wrap" */
			z = strstr(v.text, "shard_grad_op") || strstr(v.text, "zero2") ? 2
			  : strstr(v.text, "full_shard") || strstr(v.text, "hybrid_shard") ? 3 : -1;
		}
		if (get(a, "fsdp_config.fsdp_sharding_strategy", &v) && !v.unknown && fsdp_zero(v.text) >= 0) {
			z = fsdp_zero(v.text);
			src = v.src;
		}
		if (z >= 0) {
			jr_set_int(a->cx, JR_ZERO, z, &src);
			jr_set_int(a->cx, JR_FRAMEWORK, ADV_FW_FSDP, &src);
		}
	}
	/* FSDP2 (fsdp_version: 2) says it with a boolean. */
	if (get(a, "fsdp_config.reshard_after_forward", &v) && v.node && cfg_bool(v.node, &b)) {
		jr_set_int(a->cx, JR_ZERO, b ? 3 : 2, &v.src);
		jr_set_int(a->cx, JR_FRAMEWORK, ADV_FW_FSDP, &v.src);
	} else if (z < 0 && get(a, "fsdp_config.fsdp_sharding_strategy", &v) && !v.unknown &&
		   (z = fsdp_zero(v.text)) >= 0) {
		jr_set_int(a->cx, JR_ZERO, z, &v.src);
		jr_set_int(a->cx, JR_FRAMEWORK, ADV_FW_FSDP, &v.src);
	}
}

static void checkpoints(struct ax *a)
{
	struct axv st, v;
	struct jobread_src src;

	if (get(a, "save_strategy", &st) && !st.unknown) {
		if (!strcasecmp(st.text, "no")) {
			jr_set_int(a->cx, JR_CKPT_OFF, 1, &st.src);
			return;
		}
		if (!strcasecmp(st.text, "epoch") || !strcasecmp(st.text, "best")) {
			jr_set_unknown(a->cx, JR_CKPT_STEPS, &st.src,
				       !strcasecmp(st.text, "epoch") ? "at the end of each epoch"
				       : "whenever the evaluation improves");
			return;
		}
	}
	if (get(a, "save_steps", &v) && !v.list) {
		long long n;
		double d = strtod(v.text, NULL);

		if (v.unknown)
			jr_set_unknown(a->cx, JR_CKPT_STEPS, &v.src, v.text);
		else if (jr_parse_ll(v.text, &n) && n > 0)
			jr_set_int(a->cx, JR_CKPT_STEPS, n, &v.src);
		else if (d > 0 && d < 1)
			jr_set_unknown(a->cx, JR_CKPT_STEPS, &v.src, "a share of the run's steps");
		return;
	}
	if (get(a, "saves_per_epoch", &v) && !v.list) {
		char what[96];

		adv_snprintf(what, sizeof(what), "%s times per epoch", v.unknown ? "some" : v.text);
		jr_set_unknown(a->cx, JR_CKPT_STEPS, &v.src, what);
		return;
	}
	jr_src_node(&src, a->display, NULL, "save_steps", JR_STYLE_YAML);
	jr_set_unknown(a->cx, JR_CKPT_STEPS, &src, "at the end of each epoch (axolotl's default)");
}

/* `--launcher torchrun|accelerate|python` and the launcher's arguments
 * after "--": the command axolotl runs, read by launch.c. */
static void launcher(struct jr_ctx *cx, const struct jr_cmd *p, int from)
{
	static char *const torchrun[] = { "torchrun" }, *const accel[] = { "accelerate", "launch" };
	static char *const tail[] = { "-m", "axolotl.cli.train" };
	char *argv[AX_MAX_ARGS + 4];
	bool unknown[AX_MAX_ARGS + 4];
	int line[AX_MAX_ARGS + 4];
	const char *file[AX_MAX_ARGS + 4];
	char *const *head;
	const char *l = "accelerate";
	int dash = -1, n = 0, nh, limit = p->argc < AX_MAX_ARGS ? p->argc : AX_MAX_ARGS;
	struct jr_cmd cmd, prog;
	bool m;

	for (int i = from; i < limit; i++) {
		const char *w = p->argv[i];

		if (!w)
			continue;
		if (!strcmp(w, "--")) {
			dash = i;
			break;
		}
		if (!strcmp(w, "--launcher") && i + 1 < p->argc && p->argv[i + 1])
			l = p->argv[i + 1];
		else if (!strncmp(w, "--launcher=", 11))
			l = w + 11;
	}
	if (!strcmp(l, "torchrun")) {
		head = torchrun;
		nh = 1;
	} else if (!strcmp(l, "accelerate") && dash >= 0) {
		head = accel;
		nh = 2;
	} else {
		return;   /* python, or accelerate with its own config */
	}
	for (int k = 0; k < nh; k++, n++) {
		argv[n] = head[k];
		unknown[n] = false;
		line[n] = dash >= 0 && p->word_line ? p->word_line[dash] : p->line;
		file[n] = dash >= 0 && p->word_file ? p->word_file[dash] : p->file;
	}
	for (int i = dash >= 0 ? dash + 1 : limit; i < limit; i++, n++) {
		argv[n] = p->argv[i];
		unknown[n] = p->unknown && p->unknown[i];
		line[n] = p->word_line ? p->word_line[i] : p->line;
		file[n] = p->word_file ? p->word_file[i] : p->file;
	}
	for (int k = 0; k < 2; k++, n++) {
		argv[n] = tail[k];
		unknown[n] = false;
		line[n] = p->line;
		file[n] = p->file;
	}
	cmd = (struct jr_cmd){ p->file, p->line, n, argv, unknown, line, file, NULL, p->sh, NULL };
	jr_launch_strip(cx, &cmd, &prog, &m);
}

/* The config file: the first word that is not an option. */
static int config_index(const struct jr_cmd *p, int from)
{
	for (int i = from; i < p->argc; i++) {
		if (p->argv[i] && !strcmp(p->argv[i], "--launcher"))
			i++;   /* its value */
		else if (p->argv[i] && p->argv[i][0] != '-')
			return i;
	}
	return -1;
}

bool jr_fw_axolotl(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct ax a = { cx, prog, 1, NULL, NULL };
	struct jobread_src src;
	struct axv v;
	const char *a0;
	int ci, task = ADV_TASK_TRAIN;

	if (!prog || prog->argc < 1 || !(a0 = prog->argv[0]))
		return false;
	if (is_module) {
		if (strncmp(a0, "axolotl.cli", 11))
			return false;
		if (strstr(a0, "inference"))
			task = ADV_TASK_INFER;
		ci = config_index(prog, 1);
	} else {
		if (strcmp(jr_basename(a0), "axolotl") || prog->argc < 2)
			return false;
		/* axolotl train|inference|preprocess|... */
		if (!strcmp(prog->argv[1], "inference"))
			task = ADV_TASK_INFER;
		else if (strcmp(prog->argv[1], "train"))
			return false;
		ci = config_index(prog, 2);
	}
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';
	jr_set_trainer(cx, "axolotl", -1, &src);
	if (ci >= 0) {
		a.from = ci + 1;
		if (prog->unknown && prog->unknown[ci]) {
			jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-model=NAME",
				"%s:%d: the axolotl config is named at run time, so what it configures is "
				"not known", src.file, src.line);
		} else {
			const cfg_t *c = jr_load(cx, prog->argv[ci], CFG_YAML, &a.display);

			a.root = c ? cfg_root(c) : NULL;
			if (a.root && a.root->type != CFG_MAP)
				a.root = NULL;
		}
	}
	if (!is_module)
		launcher(cx, prog, 2);
	sharding(&a);
	if (get(&a, "base_model", &v) && !v.list) {
		if (v.unknown)
			jr_set_unknown(cx, JR_MODEL, &v.src, v.text);
		else
			jr_model_ref(cx, v.text, &v.src);
	}
	if (task != ADV_TASK_INFER) {
		if (get(&a, "adapter", &v) && !v.unknown &&
		    (!strcasecmp(v.text, "lora") || !strcasecmp(v.text, "qlora")))
			jr_set_int(cx, JR_TASK, ADV_TASK_LORA, &v.src);
		else
			jr_set_int(cx, JR_TASK, ADV_TASK_FINETUNE, &src);
	} else {
		jr_set_int(cx, JR_TASK, ADV_TASK_INFER, &src);
	}
	set_int(&a, JR_MBS, "micro_batch_size", NULL);
	set_int(&a, JR_GAS, "gradient_accumulation_steps", NULL);
	set_int(&a, JR_SEQ, "sequence_len", NULL);
	set_int(&a, JR_TP, "tensor_parallel_size", NULL);
	set_int(&a, JR_CP, "context_parallel_size", NULL);
	if (get(&a, "gradient_checkpointing", &v) && !v.unknown && !v.list) {
		/* true, or "offload": whole layers either way. */
		int t = jr_parse_bool(v.text);

		if (t >= 0 || !strcasecmp(v.text, "offload"))
			jr_set_int(cx, JR_RECOMPUTE, t == 0 ? ADV_RECOMPUTE_NONE : ADV_RECOMPUTE_FULL, &v.src);
	}
	/* bf16 first: fp16 only when bf16 is off. "auto" is the GPU's call. */
	if (get(&a, "bf16", &v) && !v.unknown && jr_parse_bool(v.text) == 1)
		jr_set_int(cx, JR_PRECISION, ADV_PREC_BF16, &v.src);
	else if (get(&a, "fp16", &v) && !v.unknown && jr_parse_bool(v.text) == 1)
		jr_set_int(cx, JR_PRECISION, ADV_PREC_FP16, &v.src);
	if (task != ADV_TASK_INFER)
		checkpoints(&a);
	return true;
}
