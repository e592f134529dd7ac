/*
 * fw_deepspeed.c - the two configuration files other launchers and
 * trainers name: a DeepSpeed JSON config and an accelerate config.
 *
 * DeepSpeed (docs "DeepSpeed Configuration JSON", deepspeed/runtime/
 * config.py): zero_optimization.stage, train_micro_batch_size_per_gpu,
 * train_batch_size, gradient_accumulation_steps, bf16.enabled (alias
 * bfloat16.enabled) and fp16.enabled; bf16 with stage 0 (or none) is the
 * BF16_Optimizer, which shards as ZeRO-1 does.  The Hugging Face integration
 * writes "auto" for values it fills in from its own arguments
 * (transformers integrations/deepspeed.py): those are left unset, with
 * no note, because the trainer's flags give them.  activation_checkpointing
 * only configures how checkpointing is done once the model code asks for
 * it (deepspeed.checkpointing), so it does not say whether recompute is on
 * and is not read.
 *
 * accelerate (src/accelerate/commands/config/config_args.py, the YAML
 * "accelerate config" writes): distributed_type (DEEPSPEED, FSDP,
 * MULTI_GPU, ...), deepspeed_config.zero_stage and
 * .deepspeed_config_file, fsdp_config.fsdp_sharding_strategy (FULL_SHARD
 * or 1, SHARD_GRAD_OP or 2, ...; FSDP2's fsdp_reshard_after_forward),
 * num_processes (all machines), num_machines, mixed_precision.
 *
 * A config the job names that cannot be had (missing at submission, as a
 * path inside a container is; unreadable; malformed) leaves the ZeRO stage
 * unknown (SCRIPT_UNKNOWN, --llm-zero): it is never taken as the trainer's
 * default, which would cost the job unsharded and reject it on a guess.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "jobread/ctx.h"
#include "jobread/reader.h"
#include "util.h"

/* A DeepSpeed "<section>.enabled": true, false, or "auto"/absent (-1). */
static int enabled(const struct cfg_node *root, const char *section, const struct cfg_node **node)
{
	char path[64];
	const struct cfg_node *n;
	bool b;

	adv_snprintf(path, sizeof(path), "%s.enabled", section);
	n = cfg_path(root, path);
	*node = n;
	if (!n || !cfg_bool(n, &b))
		return -1;
	return b ? 1 : 0;
}

/* A config the job names that cannot be read: its ZeRO stage is not
 * known, and must not become the trainer's default (plain data parallel),
 * which would cost the job unsharded and could reject it on a guess. */
static void zero_unknown(struct jr_ctx *cx, const char *path, const char *what)
{
	struct jobread_src src;

	if (!jr_unreadable(cx, path) || (jr_get(cx, JR_ZERO)->set && !jr_get(cx, JR_ZERO)->unknown))
		return;
	memset(&src, 0, sizeof(src));
	adv_strlcpy(src.file, path, sizeof(src.file));
	src.style = JR_STYLE_FLAG;
	jr_set_unknown(cx, JR_ZERO, &src, what);
}

void jr_read_ds_config(struct jr_ctx *cx, const char *path)
{
	static const struct {
		enum jobread_field f;
		const char *key;
	} ints[] = {
		{ JR_ZERO, "zero_optimization.stage" },
		{ JR_MBS, "train_micro_batch_size_per_gpu" },
		{ JR_GBS, "train_batch_size" },
		{ JR_GAS, "gradient_accumulation_steps" },
	};
	static const struct {
		const char *section;
		int precision;
	} precs[] = {
		{ "fp16", ADV_PREC_FP16 }, { "bfloat16", ADV_PREC_BF16 }, { "bf16", ADV_PREC_BF16 },
	};
	const char *display = NULL;
	const cfg_t *cfg = jr_load(cx, path, CFG_AUTO, &display);
	const struct cfg_node *root, *bf16 = NULL;

	if (!cfg) {
		zero_unknown(cx, path, "set in a DeepSpeed config that could not be read (missing, "
			     "unreadable or malformed)");
		return;
	}
	root = cfg_root(cfg);
	if (!root || root->type != CFG_MAP) {
		jr_note(cx, ADV_CODE_SCRIPT_CONFIG_ERROR, NULL,
			"%s: a DeepSpeed config is a JSON object; the job is judged on everything else",
			display);
		return;
	}
	for (size_t k = 0; k < ADV_ARRAY_SIZE(ints); k++)
		jr_set_node_int(cx, ints[k].f, display, root, ints[k].key, JR_STYLE_JSON);
	/* bf16 is read last: DeepSpeed refuses both enabled, and bf16 is what
	 * current configs mean when a template leaves fp16 on as well. */
	for (size_t k = 0; k < ADV_ARRAY_SIZE(precs); k++) {
		const struct cfg_node *n;
		struct jobread_src src;
		char key[32];

		if (enabled(root, precs[k].section, &n) != 1)
			continue;
		adv_snprintf(key, sizeof(key), "%s.enabled", precs[k].section);
		jr_src_node(&src, display, n, key, JR_STYLE_JSON);
		jr_set_int(cx, JR_PRECISION, precs[k].precision, &src);
		bf16 = precs[k].precision == ADV_PREC_BF16 ? n : bf16;
	}
	/*
	 * data_types.grad_accum_dtype (deepspeed/runtime/config.py,
	 * get_data_types: fp32, fp16 or bf16) is the dtype the gradients are
	 * accumulated and kept in (issue 19).  communication_data_type only
	 * sets the dtype of the reduction's buffers, transient: not read.
	 */
	{
		const struct cfg_node *n = cfg_path(root, "data_types.grad_accum_dtype");
		const char *s = n ? cfg_str(n) : NULL;
		struct jobread_src src;

		if (s && (!strcasecmp(s, "fp32") || !strcasecmp(s, "bf16") || !strcasecmp(s, "fp16"))) {
			jr_src_node(&src, display, n, "data_types.grad_accum_dtype", JR_STYLE_JSON);
			jr_set_int(cx, JR_GRAD_DTYPE, !strcasecmp(s, "fp32") ? ADV_PREC_FP32
					: !strcasecmp(s, "bf16") ? ADV_PREC_BF16 : ADV_PREC_FP16, &src);
		}
	}
	/*
	 * bf16 without ZeRO is DeepSpeed's BF16_Optimizer
	 * (deepspeed/runtime/bf16_optimizer.py, the engine's BFLOAT16 wrapper):
	 * each data-parallel rank keeps only its partition of the fp32 master
	 * weights and of the optimizer states, and full fp32 gradients: what
	 * ZeRO-1 keeps (BLOOM-176B trained so with "stage": 0).
	 */
	if (bf16) {
		const struct cfg_node *st = cfg_path(root, "zero_optimization.stage");
		long long stage = 0;
		struct jobread_src src;

		if (!st || (cfg_int(st, &stage) && stage == 0)) {
			jr_src_node(&src, display, bf16, "bf16.enabled (BF16_Optimizer: ZeRO-1)",
				    JR_STYLE_JSON);
			jr_set_int(cx, JR_ZERO, 1, &src);
		}
	}
}

/* FSDP sharding strategies, by name or by accelerate's numbers. */
static int fsdp_zero(const struct cfg_node *n)
{
	static const struct {
		const char *name;
		int zero;
	} map[] = {
		{ "FULL_SHARD", 3 }, { "1", 3 }, { "SHARD_GRAD_OP", 2 }, { "2", 2 },
		{ "NO_SHARD", 0 }, { "3", 0 }, { "HYBRID_SHARD", 3 }, { "4", 3 },
		{ "HYBRID_SHARD_ZERO2", 2 }, { "_HYBRID_SHARD_ZERO2", 2 }, { "5", 2 },
	};
	const char *s = cfg_str(n);

	for (size_t k = 0; s && k < ADV_ARRAY_SIZE(map); k++)
		if (!strcasecmp(s, map[k].name))
			return map[k].zero;
	return -1;
}

bool jr_read_accelerate_config(struct jr_ctx *cx, const char *path, char *rdzv, size_t rdzvlen,
			       char *ds_launcher, size_t dslen)
{
	const char *display = NULL;
	const cfg_t *cfg = jr_load(cx, path, CFG_AUTO, &display);
	const struct cfg_node *root, *n;
	struct jobread_src src;
	const char *s;

	rdzv[0] = ds_launcher[0] = '\0';
	if (!cfg) {
		zero_unknown(cx, path, "set in an accelerate config that could not be read (missing, "
			     "unreadable or malformed)");
		return false;
	}
	root = cfg_root(cfg);
	if (!root || root->type != CFG_MAP)
		return false;
	/* accelerate config_args.py ClusterConfig: rdzv_backend (default
	 * "static"), deepspeed_config's deepspeed_multinode_launcher. */
	if ((s = cfg_str(cfg_child(root, "rdzv_backend"))))
		adv_strlcpy(rdzv, s, rdzvlen);
	if ((s = cfg_str(cfg_path(root, "deepspeed_config.deepspeed_multinode_launcher"))))
		adv_strlcpy(ds_launcher, s, dslen);
	n = cfg_child(root, "distributed_type");
	s = cfg_str(n);
	if (s) {
		jr_src_node(&src, display, n, "distributed_type", JR_STYLE_YAML);
		if (!strcasecmp(s, "DEEPSPEED"))
			jr_set_int(cx, JR_FRAMEWORK, ADV_FW_DEEPSPEED, &src);
		else if (!strcasecmp(s, "FSDP")) {
			jr_set_int(cx, JR_FRAMEWORK, ADV_FW_FSDP, &src);
			/* accelerate's default strategy is FULL_SHARD. */
			jr_set_int(cx, JR_ZERO, 3, &src);
		} else if (!strcasecmp(s, "MEGATRON_LM"))
			jr_set_int(cx, JR_FRAMEWORK, ADV_FW_MEGATRON, &src);
	}
	if (s && !strcasecmp(s, "DEEPSPEED")) {
		n = cfg_path(root, "deepspeed_config.deepspeed_config_file");
		if (cfg_str(n) && strcasecmp(cfg_str(n), "none") != 0)
			jr_read_ds_config(cx, cfg_str(n));
		jr_set_node_int(cx, JR_ZERO, display, root, "deepspeed_config.zero_stage", JR_STYLE_YAML);
		jr_set_node_int(cx, JR_GAS, display, root, "deepspeed_config.gradient_accumulation_steps",
				JR_STYLE_YAML);
	}
	if (s && !strcasecmp(s, "FSDP")) {
		int z;
		bool b;

		n = cfg_path(root, "fsdp_config.fsdp_sharding_strategy");
		z = fsdp_zero(n);
		if (z >= 0) {
			jr_src_node(&src, display, n, "fsdp_config.fsdp_sharding_strategy", JR_STYLE_YAML);
			jr_set_int(cx, JR_ZERO, z, &src);
		}
		/* FSDP2 says it with a boolean instead. */
		n = cfg_path(root, "fsdp_config.fsdp_reshard_after_forward");
		if (n && cfg_bool(n, &b)) {
			jr_src_node(&src, display, n, "fsdp_config.fsdp_reshard_after_forward",
				    JR_STYLE_YAML);
			jr_set_int(cx, JR_ZERO, b ? 3 : 2, &src);
		} else if (n && (z = fsdp_zero(n)) >= 0) {
			jr_src_node(&src, display, n, "fsdp_config.fsdp_reshard_after_forward",
				    JR_STYLE_YAML);
			jr_set_int(cx, JR_ZERO, z, &src);
		}
	}
	n = cfg_child(root, "mixed_precision");
	s = cfg_str(n);
	if (s) {
		int p = !strcasecmp(s, "bf16") ? ADV_PREC_BF16 : !strcasecmp(s, "fp16") ? ADV_PREC_FP16
		      : !strcasecmp(s, "fp8") ? ADV_PREC_FP8 : !strcasecmp(s, "no") ? ADV_PREC_FP32 : -1;

		jr_src_node(&src, display, n, "mixed_precision", JR_STYLE_YAML);
		if (p >= 0)
			jr_set_int(cx, JR_PRECISION, p, &src);
	}
	/* num_processes counts every machine's processes: it is the world. */
	jr_set_node_int(cx, JR_NODES, display, root, "num_machines", JR_STYLE_YAML);
	jr_set_node_int(cx, JR_WORLD, display, root, "num_processes", JR_STYLE_YAML);
	return true;
}
