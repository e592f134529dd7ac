/*
 * test_fwconfig.c - the job reader end to end on jobs whose workload is in
 * framework config files: NeMo Hydra YAML with key=value overrides and
 * OmegaConf interpolations (fw_nemo.c), torchtitan TOML and its 2026
 * registry form (fw_torchtitan.c), nanotron (fw_nanotron.c), GPT-NeoX
 * merged YAML (fw_neox.c), torchtune (fw_torchtune.c), axolotl
 * (fw_axolotl.c) and the model a trainer names: catalog aliases and a
 * local directory's config.json (hfconfig.c).
 *
 * Scripts and configs are written for this test in the style of each
 * framework's published examples (NeMo conf/megatron_gpt_config.yaml and
 * its Slurm docs, torchtitan train_configs and multinode_trainer.slurm,
 * nanotron examples/config_tiny_llama.yaml, gpt-neox configs and deepy.py
 * usage, torchtune recipe configs, axolotl examples).  Files live in an
 * in-memory provider; every value is checked with its source (file, line
 * and key) and bad files must give SCRIPT_CONFIG_ERROR with file:line:col
 * while the rest of the job is still read.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "fixture.h"
#include "jobread/jobread.h"

#define CWD "/home/ada/run"

struct vfile {
	const char *path;   /* absolute */
	const char *text;
};

struct job {
	const char *script;
	const struct vfile *files;   /* ended by a NULL path; may be NULL */
	int nodes, gpus_per_node, ntasks, ntasks_per_node;
	char *const *env;
};

static int open_file(void *arg, const char *path, const char **text, size_t *len)
{
	const struct vfile *f = arg;

	for (; f && f->path; f++)
		if (!strcmp(f->path, path)) {
			*text = f->text;
			*len = strlen(f->text);
			return JOBREAD_FILE_OK;
		}
	return JOBREAD_FILE_MISSING;
}

static int setup(void **st)
{
	catalog_t *cat = fixture_catalog(NULL);

	*st = cat;
	return cat ? 0 : -1;
}

static int teardown(void **st)
{
	catalog_destroy(*st);
	return 0;
}

static void read_job(void **st, const struct job *j, struct jobread_out *out)
{
	struct jobread_input in;

	memset(&in, 0, sizeof(in));
	in.tool = JOBREAD_SBATCH;
	in.script_name = "job.sbatch";
	in.script = j->script;
	in.script_len = strlen(j->script);
	in.env = j->env;
	in.cwd = CWD;
	snprintf(in.res.gpu, sizeof(in.res.gpu), "h100");
	in.res.nodes = j->nodes;
	in.res.gpus_per_node = j->gpus_per_node;
	in.res.gpus = j->nodes * j->gpus_per_node;
	in.ntasks = j->ntasks;
	in.ntasks_per_node = j->ntasks_per_node;
	in.files.open = open_file;
	in.files.arg = (void *)j->files;
	jobread_read(*st, &in, out);
}

/* A value and where it came from; key NULL: not checked. */
static void want(const struct jobread_out *o, enum jobread_field f, long long v, const char *file,
		 int line, const char *key)
{
	const struct jobread_value *x = &o->v[f];

	if (!x->set || x->unknown || x->i != v || strcmp(x->src.file, file) || x->src.line != line ||
	    (key && strcmp(x->src.key, key)))
		fail_msg("%s: want %lld from %s:%d %s, got %s%s%lld from %s:%d '%s'",
			 jobread_field_name(f), v, file, line, key ? key : "", x->set ? "" : "(unset) ",
			 x->unknown ? "(unknown) " : "", x->i, x->src.file, x->src.line, x->src.key);
}

static void want_str(const struct jobread_out *o, enum jobread_field f, const char *v,
		     const char *file, int line)
{
	const struct jobread_value *x = &o->v[f];

	if (!x->set || x->unknown || strcmp(x->s, v) || strcmp(x->src.file, file) ||
	    x->src.line != line)
		fail_msg("%s: want '%s' from %s:%d, got %s'%s' from %s:%d", jobread_field_name(f), v,
			 file, line, x->unknown ? "(unknown) " : "", x->s, x->src.file, x->src.line);
}

static void want_unknown(const struct jobread_out *o, enum jobread_field f, const char *file,
			 int line)
{
	const struct jobread_value *x = &o->v[f];

	if (!x->set || !x->unknown || strcmp(x->src.file, file) || x->src.line != line)
		fail_msg("%s: want unknown from %s:%d, got %s'%s' from %s:%d", jobread_field_name(f),
			 file, line, x->unknown ? "(unknown) " : "", x->s, x->src.file, x->src.line);
}

static void want_unset(const struct jobread_out *o, enum jobread_field f)
{
	if (o->v[f].set)
		fail_msg("%s: want unset, got '%s' from %s:%d", jobread_field_name(f), o->v[f].s,
			 o->v[f].src.file, o->v[f].src.line);
}

static const struct jobread_note *note(const struct jobread_out *o, const char *code,
				       const char *text)
{
	for (int i = 0; i < o->n_notes; i++)
		if (!strcmp(o->notes[i].code, code) && (!text || strstr(o->notes[i].message, text)))
			return &o->notes[i];
	return NULL;
}

static void print_notes(const struct jobread_out *o)
{
	for (int i = 0; i < o->n_notes; i++)
		print_message("note %s: %s\n", o->notes[i].code, o->notes[i].message);
}

/* ---- NeMo ---------------------------------------------------------------------------- */

static const char nemo_primary[] =
	"# GPT 8B for NeMo 1.x (test)\n"                          /* 1 */
	"defaults:\n"                                             /* 2 */
	"  - base_trainer\n"                                      /* 3 */
	"  - _self_\n"                                            /* 4 */
	"name: gpt_8b\n"                                          /* 5 */
	"trainer:\n"                                              /* 6 */
	"  num_nodes: 1\n"                                        /* 7 */
	"  precision: bf16-mixed\n"                               /* 8 */
	"  val_check_interval: 500\n"                             /* 9 */
	"exp_manager:\n"                                          /* 10 */
	"  create_checkpoint_callback: True\n"                    /* 11 */
	"  checkpoint_callback_params:\n"                         /* 12 */
	"    every_n_train_steps: ${trainer.val_check_interval}\n" /* 13 */
	"    model_parallel_size: ${multiply:${model.tensor_model_parallel_size}, 2}\n" /* 14 */
	"model:\n"                                                /* 15 */
	"  micro_batch_size: 2\n"                                 /* 16 */
	"  global_batch_size: 256\n"                              /* 17 */
	"  tensor_model_parallel_size: 2\n"                       /* 18 */
	"  pipeline_model_parallel_size: 1\n"                     /* 19 */
	"  virtual_pipeline_model_parallel_size: null\n"          /* 20 */
	"  sequence_parallel: false\n"                            /* 21 */
	"  encoder_seq_length: 4096\n"                            /* 22 */
	"  max_position_embeddings: ${.encoder_seq_length}\n"     /* 23 */
	"  num_layers: 32\n"                                      /* 24 */
	"  hidden_size: 4096\n"                                   /* 25 */
	"  ffn_hidden_size: 14336\n"                              /* 26 */
	"  num_attention_heads: 32\n"                             /* 27 */
	"  num_query_groups: 8\n"                                 /* 28 */
	"  kv_channels: ${divide:${model.hidden_size},${model.num_attention_heads}}\n" /* 29 */
	"  activation: fast-swiglu\n"                             /* 30 */
	"  normalization: rmsnorm\n"                              /* 31 */
	"  share_embeddings_and_output_weights: false\n"          /* 32 */
	"  activations_checkpoint_granularity: selective\n"       /* 33 */
	"  loop_a: ${model.loop_b}\n"                             /* 34 */
	"  loop_b: ${model.loop_a}\n"                             /* 35 */
	"  num_moe_experts: ${model.loop_a}\n"                    /* 36 */
	"  optim:\n"                                              /* 37 */
	"    name: distributed_fused_adam\n"                      /* 38 */
	"  data:\n"                                               /* 39 */
	"    seq_length: ${model.encoder_seq_length}\n";          /* 40 */

static const char nemo_base[] =
	"trainer:\n"           /* 1 */
	"  devices: 8\n"       /* 2 */
	"  num_nodes: 16\n"    /* 3 */
	"model:\n"             /* 4 */
	"  hidden_size: 1024\n"; /* 5 */

static const char nemo_script[] =
	"#!/bin/bash\n"                                                        /* 1 */
	"#SBATCH -N 2 --ntasks-per-node=8 --gpus-per-node=8\n"                 /* 2 */
	"MBS=4\n"                                                              /* 3 */
	"srun python /opt/NeMo/examples/nlp/language_modeling/megatron_gpt_pretraining.py \\\n" /* 4 */
	"    --config-path=conf --config-name=gpt_8b.yaml \\\n"                /* 5 */
	"    trainer.num_nodes=$SLURM_JOB_NUM_NODES \\\n"                      /* 6 */
	"    model.tensor_model_parallel_size=4 \\\n"                          /* 7 */
	"    ++model.sequence_parallel=True \\\n"                              /* 8 */
	"    model.micro_batch_size=$MBS \\\n"                                 /* 9 */
	"    +model.encoder_seq_length=8192 \\\n"                              /* 10 */
	"    model.global_batch_size=$(cat gbs.txt)\n";                        /* 11 */

static void test_nemo_hydra(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/conf/gpt_8b.yaml", nemo_primary },
		{ CWD "/conf/base_trainer.yaml", nemo_base },
		{ NULL, NULL },
	};
	struct job j = { nemo_script, files, 2, 8, 0, 8, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	assert_true(o.is_llm);
	assert_string_equal(o.trainer, "nemo");
	/* Overrides win over the YAML, and Slurm's variables are known. */
	want(&o, JR_NODES, 2, "job.sbatch", 6, "trainer.num_nodes");
	want(&o, JR_TP, 4, "job.sbatch", 7, "model.tensor_model_parallel_size");
	want(&o, JR_SP, 1, "job.sbatch", 8, "++model.sequence_parallel");
	want(&o, JR_MBS, 4, "job.sbatch", 9, "model.micro_batch_size");
	want_unknown(&o, JR_GBS, "job.sbatch", 11);
	/* The base file of the defaults list gives what the primary lacks;
	 * the primary (before _self_ ends the list) wins where both say. */
	want(&o, JR_NPROC_PER_NODE, 8, "conf/base_trainer.yaml", 2, "trainer.devices");
	want(&o, JR_ARCH_HIDDEN, 4096, "conf/gpt_8b.yaml", 25, "model.hidden_size");
	/* srun's 16 tasks are the world, not Lightning's expectation. */
	want(&o, JR_WORLD, 16, "job.sbatch", 4, NULL);
	want(&o, JR_PP, 1, "conf/gpt_8b.yaml", 19, "model.pipeline_model_parallel_size");
	want_unset(&o, JR_VPP);
	/* Interpolations follow the override of the key they name. */
	want(&o, JR_SEQ, 8192, "job.sbatch", 10, "+model.encoder_seq_length");
	want(&o, JR_ARCH_MAX_SEQ, 8192, "job.sbatch", 10, "+model.encoder_seq_length");
	want(&o, JR_CKPT_STEPS, 500, "conf/gpt_8b.yaml", 9, "trainer.val_check_interval");
	/* Resolvers and loops are Python: unknown, never guessed. */
	want_unknown(&o, JR_ARCH_HEAD_DIM, "conf/gpt_8b.yaml", 29);
	want_unknown(&o, JR_ARCH_EXPERTS, "conf/gpt_8b.yaml", 36);
	want(&o, JR_ARCH_LAYERS, 32, "conf/gpt_8b.yaml", 24, "model.num_layers");
	want(&o, JR_ARCH_HEADS, 32, "conf/gpt_8b.yaml", 27, NULL);
	want(&o, JR_ARCH_KV_HEADS, 8, "conf/gpt_8b.yaml", 28, "model.num_query_groups");
	want(&o, JR_ARCH_FFN, 14336, "conf/gpt_8b.yaml", 26, NULL);
	want(&o, JR_ARCH_GATED, 1, "conf/gpt_8b.yaml", 30, "model.activation");
	want(&o, JR_ARCH_NORM, ADV_NORM_RMSNORM, "conf/gpt_8b.yaml", 31, NULL);
	want(&o, JR_ARCH_TIED, 0, "conf/gpt_8b.yaml", 32, NULL);
	want(&o, JR_PRECISION, ADV_PREC_BF16, "conf/gpt_8b.yaml", 8, "trainer.precision");
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_SELECTIVE, "conf/gpt_8b.yaml", 33, NULL);
	want(&o, JR_ZERO, 1, "conf/gpt_8b.yaml", 38, "model.optim.name");
	want(&o, JR_FRAMEWORK, ADV_FW_MEGATRON, "job.sbatch", 4, NULL);
	want(&o, JR_TASK, ADV_TASK_TRAIN, "job.sbatch", 4, NULL);
}

/* The example script's own config (conf/megatron_gpt_config.yaml next to
 * it) when no --config-name is given; ~key deletes; checkpoint off. */
static void test_nemo_default_config(void **st)
{
	static const char cfg[] =
		"trainer:\n"                          /* 1 */
		"  devices: 4\n"                      /* 2 */
		"  num_nodes: 1\n"                    /* 3 */
		"  precision: 16\n"                   /* 4 */
		"exp_manager:\n"                      /* 5 */
		"  create_checkpoint_callback: true\n" /* 6 */
		"model:\n"                            /* 7 */
		"  micro_batch_size: 4\n"             /* 8 */
		"  tensor_model_parallel_size: 2\n"   /* 9 */
		"  train_time: 1\n";                  /* 10 */
	static const struct vfile files[] = {
		{ "/opt/nemo/examples/conf/megatron_gpt_config.yaml", cfg },
		{ NULL, NULL },
	};
	static const char script[] =
		"#!/bin/bash\n"
		"python /opt/nemo/examples/megatron_gpt_pretraining.py \\\n"     /* 2 */
		"  ~model.tensor_model_parallel_size \\\n"                      /* 3 */
		"  exp_manager.create_checkpoint_callback=False\n";             /* 4 */
	struct job j = { script, files, 1, 4, 0, 0, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "nemo");
	want(&o, JR_NPROC_PER_NODE, 4, "/opt/nemo/examples/conf/megatron_gpt_config.yaml", 2, NULL);
	/* No srun: Lightning starts num_nodes x devices itself. */
	want(&o, JR_WORLD, 4, "/opt/nemo/examples/conf/megatron_gpt_config.yaml", 2, NULL);
	want(&o, JR_PRECISION, ADV_PREC_FP16, "/opt/nemo/examples/conf/megatron_gpt_config.yaml", 4,
	     NULL);
	want_unset(&o, JR_TP);
	want(&o, JR_CKPT_OFF, 1, "job.sbatch", 4, "exp_manager.create_checkpoint_callback");
	want(&o, JR_MBS, 4, "/opt/nemo/examples/conf/megatron_gpt_config.yaml", 8, NULL);
}

/* A truncated Hydra YAML: SCRIPT_CONFIG_ERROR with file:line:col, and the
 * command line's overrides are still read; train_time_interval. */
static void test_nemo_bad_yaml(void **st)
{
	static const char bad[] =
		"trainer:\n"
		"  devices: 8\n"
		"model:\n"
		"  tensor_model_parallel_size: [2, 4\n"
		"  pipeline_model_parallel_size: 2\n";
	static const struct vfile files[] = {
		{ CWD "/cfg/bad.yaml", bad },
		{ NULL, NULL },
	};
	static const char script[] =
		"#!/bin/bash\n"
		"srun python megatron_gpt_pretraining.py --config-path cfg --config-name bad \\\n" /* 2 */
		"  model.pipeline_model_parallel_size=4 \\\n"                                    /* 3 */
		"  exp_manager.checkpoint_callback_params.train_time_interval=01:30:00\n";      /* 4 */
	struct job j = { script, files, 1, 8, 0, 8, NULL };
	struct jobread_out o;
	const struct jobread_note *n;

	read_job(st, &j, &o);
	print_notes(&o);
	n = note(&o, "SCRIPT_CONFIG_ERROR", "cfg/bad.yaml:");
	assert_non_null(n);
	assert_non_null(strstr(n->message, "cfg/bad.yaml:5:"));
	want(&o, JR_PP, 4, "job.sbatch", 3, "model.pipeline_model_parallel_size");
	assert_true(o.v[JR_CKPT_TIME].set && !o.v[JR_CKPT_TIME].unknown);
	assert_true(o.v[JR_CKPT_TIME].f == 5400.0);
	assert_int_equal(o.v[JR_CKPT_TIME].src.line, 4);
	want_unset(&o, JR_TP);
}

/* NeMo 2.0: the CLI's factory and a NeMo-Run script's recipe name the
 * model through the catalog; the Python itself is unknown. */
static void test_nemo2(void **st)
{
	static const char run_py[] =
		"import nemo_run as run\n"
		"from nemo.collections import llm\n"
		"def configure():\n"
		"    recipe = llm.llama3_8b.pretrain_recipe(name='x', num_nodes=2)\n"
		"    return recipe\n";
	static const struct vfile files[] = {
		{ CWD "/nemo_pretrain.py", run_py },
		{ NULL, NULL },
	};
	static const char cli[] =
		"#!/bin/bash\n"
		"nemo llm pretrain --factory llama3_70b \\\n"                  /* 2 */
		"  trainer.num_nodes=4 \\\n"                                    /* 3 */
		"  trainer.strategy.tensor_model_parallel_size=8 -y\n";         /* 4 */
	static const char script[] =
		"#!/bin/bash\n"
		"python nemo_pretrain.py\n";                                    /* 2 */
	static const char unknown[] =
		"#!/bin/bash\n"
		"nemo llm finetune -f nemotron_mystery_12b\n";                  /* 2 */
	struct job j = { cli, files, 4, 8, 0, 0, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	want_str(&o, JR_MODEL, "llama3-70b", "job.sbatch", 2);
	want(&o, JR_NODES, 4, "job.sbatch", 3, "trainer.num_nodes");
	want(&o, JR_TP, 8, "job.sbatch", 4, "trainer.strategy.tensor_model_parallel_size");
	want(&o, JR_TASK, ADV_TASK_TRAIN, "job.sbatch", 2, NULL);
	assert_non_null(note(&o, "SCRIPT_UNKNOWN", "recipe is Python"));

	j.script = script;
	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "nemo");
	want_str(&o, JR_MODEL, "llama3-8b", "job.sbatch", 2);
	assert_non_null(note(&o, "SCRIPT_UNKNOWN", "llama3_8b.pretrain_recipe"));

	j.script = unknown;
	read_job(st, &j, &o);
	want_unknown(&o, JR_MODEL, "job.sbatch", 2);
	want(&o, JR_TASK, ADV_TASK_FINETUNE, "job.sbatch", 2, NULL);
}

/* ---- torchtitan ----------------------------------------------------------------------- */

static const char titan_toml[] =
	"# Llama 3 8B preset (test)\n"                 /* 1 */
	"[job]\n"                                      /* 2 */
	"dump_folder = \"./outputs\"\n"                /* 3 */
	"\n"                                           /* 4 */
	"[model]\n"                                    /* 5 */
	"name = \"llama3\"\n"                          /* 6 */
	"flavor = \"8B\"\n"                            /* 7 */
	"converters = [\"float8\"]\n"                  /* 8 */
	"\n"                                           /* 9 */
	"[training]\n"                                 /* 10 */
	"local_batch_size = 2\n"                       /* 11 */
	"seq_len = 4096\n"                             /* 12 */
	"mixed_precision_param = \"bfloat16\"\n"       /* 13 */
	"\n"                                           /* 14 */
	"[parallelism]\n"                              /* 15 */
	"data_parallel_replicate_degree = 1\n"         /* 16 */
	"data_parallel_shard_degree = -1\n"            /* 17 */
	"tensor_parallel_degree = 1\n"                 /* 18 */
	"pipeline_parallel_degree = 1\n"               /* 19 */
	"context_parallel_degree = 1\n"                /* 20 */
	"\n"                                           /* 21 */
	"[checkpoint]\n"                               /* 22 */
	"enable = true\n"                              /* 23 */
	"interval = 500\n"                             /* 24 */
	"\n"                                           /* 25 */
	"[activation_checkpoint]\n"                    /* 26 */
	"mode = \"selective\"\n";                      /* 27 */

static void test_torchtitan_toml(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/train_configs/llama3_8b.toml", titan_toml },
		{ NULL, NULL },
	};
	static const char script[] =
		"#!/bin/bash\n"                                                            /* 1 */
		"#SBATCH --nodes=2 --ntasks-per-node=1 --gpus-per-node=8\n"                 /* 2 */
		"CONFIG_FILE=./train_configs/llama3_8b.toml\n"                             /* 3 */
		"ARGS=(\n"                                                                 /* 4 */
		"  --parallelism.tensor_parallel_degree 2\n"                               /* 5 */
		"  --training.seq-len=8192\n"                                               /* 6 */
		"  --activation_checkpoint.mode full\n"                                    /* 7 */
		")\n"                                                                      /* 8 */
		"srun torchrun --nnodes 2 --nproc_per_node 8 --rdzv_backend c10d \\\n"      /* 9 */
		"  -m torchtitan.train --job.config_file $CONFIG_FILE \"${ARGS[@]}\" \\\n"  /* 10 */
		"  --checkpoint.interval=250\n";                                           /* 11 */
	struct job j = { script, files, 2, 8, 0, 1, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "torchtitan");
	want_str(&o, JR_MODEL, "llama3-8b", "./train_configs/llama3_8b.toml", 7);
	want(&o, JR_TP, 2, "job.sbatch", 5, "--parallelism.tensor_parallel_degree");
	want(&o, JR_SEQ, 8192, "job.sbatch", 6, "--training.seq-len");
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, "job.sbatch", 7, "--activation_checkpoint.mode");
	want(&o, JR_CKPT_STEPS, 250, "job.sbatch", 11, "--checkpoint.interval");
	want(&o, JR_MBS, 2, "./train_configs/llama3_8b.toml", 11, "training.local_batch_size");
	want(&o, JR_PP, 1, "./train_configs/llama3_8b.toml", 19, NULL);
	/* -1: the rest of the 16 processes after TP 2. */
	want(&o, JR_DP, 8, "./train_configs/llama3_8b.toml", 17, "");
	want(&o, JR_ZERO, 3, "./train_configs/llama3_8b.toml", 17, NULL);
	want(&o, JR_FRAMEWORK, ADV_FW_FSDP, "./train_configs/llama3_8b.toml", 17, NULL);
	want(&o, JR_PRECISION, ADV_PREC_FP8, "./train_configs/llama3_8b.toml", 8, "model.converters");
	want(&o, JR_WORLD, 16, "job.sbatch", 9, NULL);
}

/* No [checkpoint]: JobConfig's default writes none; a bare --checkpoint.enable
 * turns it on with the default interval; bad TOML. */
static void test_torchtitan_defaults(void **st)
{
	static const char toml[] =
		"[model]\n"
		"name = \"llama3\"\n"
		"flavor = \"405B\"\n"
		"[parallelism]\n"
		"data_parallel_shard_degree = 4\n"     /* 5 */
		"tensor_parallel_degree = 8\n";
	static const char bad[] =
		"[model]\n"
		"name = \"llama3\n"
		"flavor = \"70B\"\n";
	static const struct vfile files[] = {
		{ CWD "/a.toml", toml },
		{ CWD "/bad.toml", bad },
		{ NULL, NULL },
	};
	static const char s1[] =
		"#!/bin/bash\n"
		"torchrun --nproc_per_node 8 -m torchtitan.train --job.config-file a.toml\n";
	static const char s2[] =
		"#!/bin/bash\n"
		"torchrun --nproc_per_node 8 -m torchtitan.train --job.config-file a.toml \\\n"
		"   --checkpoint.enable --parallelism.no-enable-async-tensor-parallel\n"; /* 3 */
	static const char s3[] =
		"#!/bin/bash\n"
		"torchrun --nproc_per_node=8 -m torchtitan.train --job.config_file=bad.toml \\\n"
		"  --parallelism.tensor_parallel_degree=4\n";                          /* 3 */
	struct job j = { s1, files, 4, 8, 0, 0, NULL };
	struct jobread_out o;
	const struct jobread_note *n;

	read_job(st, &j, &o);
	print_notes(&o);
	want_str(&o, JR_MODEL, "llama3-405b", "a.toml", 3);
	want(&o, JR_CKPT_OFF, 1, "job.sbatch", 2, NULL);
	want(&o, JR_DP, 4, "a.toml", 5, "parallelism.data_parallel_shard_degree");
	want(&o, JR_ZERO, 3, "a.toml", 5, NULL);

	j.script = s2;
	read_job(st, &j, &o);
	want_unset(&o, JR_CKPT_OFF);
	want(&o, JR_CKPT_STEPS, 500, "job.sbatch", 3, "");

	j.script = s3;
	read_job(st, &j, &o);
	print_notes(&o);
	n = note(&o, "SCRIPT_CONFIG_ERROR", "bad.toml:2:");
	assert_non_null(n);
	want(&o, JR_TP, 4, "job.sbatch", 3, "--parallelism.tensor_parallel_degree");
	want_unset(&o, JR_CKPT_OFF);
	want_unset(&o, JR_MODEL);
	want_unset(&o, JR_ZERO);
}

/*
 * Issue 29: releases with the degrees under [experimental] split the local
 * batch into a COUNT of micro-batches, experimental.pipeline_parallel_
 * microbatches, by default the pipeline degree (pipelining_utils.py at
 * 9dec370): 32 at PP 8 is micro-batches of 4; a stated count wins; a count
 * that does not divide the batch, or no number, is said and sets nothing.
 */
static void test_torchtitan_older_microbatches(void **st)
{
	static const char toml[] =
		"[model]\n"
		"name = \"llama3\"\n"
		"flavor = \"405B\"\n"
		"[training]\n"
		"batch_size = 32\n"                    /* 5 */
		"tensor_parallel_degree = 8\n"
		"[experimental]\n"
		"pipeline_parallel_degree = 8\n";      /* 8 */
	static const struct vfile files[] = {
		{ CWD "/a.toml", toml },
		{ NULL, NULL },
	};
	static const char s1[] =
		"#!/bin/bash\n"
		"torchrun --nproc_per_node 8 -m torchtitan.train --job.config-file a.toml\n";
	static const char s2[] =
		"#!/bin/bash\n"
		"torchrun --nproc_per_node 8 -m torchtitan.train --job.config-file a.toml \\\n"
		"  --experimental.pipeline_parallel_microbatches 16\n";              /* 3 */
	static const char s3[] =
		"#!/bin/bash\n"
		"torchrun --nproc_per_node 8 -m torchtitan.train --job.config-file a.toml \\\n"
		"  --experimental.pipeline_parallel_microbatches 5\n";               /* 3 */
	static const char s4[] =
		"#!/bin/bash\n"
		"torchrun --nproc_per_node 8 -m torchtitan.train --job.config-file a.toml \\\n"
		"  --experimental.pipeline_parallel_microbatches many\n";            /* 3 */
	struct job j = { s1, files, 8, 8, 0, 0, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	want(&o, JR_PP, 8, "a.toml", 8, "experimental.pipeline_parallel_degree");
	want(&o, JR_MBS, 4, "a.toml", 8, "experimental.pipeline_parallel_microbatches");
	assert_true(o.v[JR_MBS].src.fw_default);

	j.script = s2;
	read_job(st, &j, &o);
	want(&o, JR_MBS, 2, "job.sbatch", 3, NULL);
	assert_false(o.v[JR_MBS].src.fw_default);

	j.script = s3;
	read_job(st, &j, &o);
	print_notes(&o);
	assert_non_null(note(&o, "SCRIPT_UNKNOWN", "does not split into 5 pipeline micro-batches"));
	want(&o, JR_MBS, 32, "a.toml", 5, NULL);   /* the local batch, as read */

	j.script = s4;
	read_job(st, &j, &o);
	print_notes(&o);
	assert_non_null(note(&o, "SCRIPT_UNKNOWN", "'many' is not a whole number"));
	want(&o, JR_MBS, 32, "a.toml", 5, NULL);
}

/* 2026: --module/--config names a Python config; overrides still apply. */
static void test_torchtitan_registry(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"
		"CONFIG=${CONFIG:-llama3_405b}\n"
		"srun torchrun --nnodes 2 --nproc_per_node 8 \\\n"                      /* 3 */
		"  -m torchtitan.train --module llama3 --config $CONFIG \\\n"          /* 4 */
		"  --parallelism.pipeline_parallel_degree 2 \\\n"                      /* 5 */
		"  --checkpoint.interval 100\n";                                       /* 6 */
	static const char unknown[] =
		"#!/bin/bash\n"
		"torchrun --nproc_per_node 8 -m torchtitan.train --module llama3 \\\n"
		"  --config=llama3_debugmodel_flex_attn\n";                            /* 3 */
	static const char variant[] =
		"#!/bin/bash\n"
		"torchrun --nproc_per_node 8 -m torchtitan.train --module llama3 \\\n"
		"  --config llama3_8b_float8\n";                                       /* 3 */
	struct job j = { script, NULL, 2, 8, 0, 1, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	want_str(&o, JR_MODEL, "llama3-405b", "job.sbatch", 4);
	want(&o, JR_PP, 2, "job.sbatch", 5, "--parallelism.pipeline_parallel_degree");
	want(&o, JR_CKPT_STEPS, 100, "job.sbatch", 6, "--checkpoint.interval");
	/* FSDP is ParallelismConfig's default; the DP degree needs the TP
	 * the Python sets, which is not known. */
	want(&o, JR_ZERO, 3, "job.sbatch", 4, NULL);
	want_unset(&o, JR_DP);
	want_unset(&o, JR_TP);
	want_unset(&o, JR_CKPT_OFF);
	assert_non_null(note(&o, "SCRIPT_UNKNOWN", "llama3_405b is Python"));

	j.script = unknown;
	read_job(st, &j, &o);
	want_unknown(&o, JR_MODEL, "job.sbatch", 3);
	assert_non_null(strstr(o.v[JR_MODEL].s, "llama3_debugmodel_flex_attn"));

	j.script = variant;
	read_job(st, &j, &o);
	want_str(&o, JR_MODEL, "llama3-8b", "job.sbatch", 3);
}

/* run_train.sh: CONFIG_FILE and NGPU from the environment. */
static void test_torchtitan_run_sh(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/train_configs/llama3_8b.toml", titan_toml },
		{ NULL, NULL },
	};
	static char *const env[] = { "CONFIG_FILE=./train_configs/llama3_8b.toml", "NGPU=4", NULL };
	static const char script[] =
		"#!/bin/bash\n"
		"srun -N1 -n1 ./run_train.sh --parallelism.tensor_parallel_degree 4\n"; /* 2 */
	struct job j = { script, files, 1, 4, 0, 0, env };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "torchtitan");
	want_str(&o, JR_MODEL, "llama3-8b", "./train_configs/llama3_8b.toml", 7);
	want(&o, JR_WORLD, 4, "job.sbatch", 2, "NGPU");
	want(&o, JR_TP, 4, "job.sbatch", 2, "--parallelism.tensor_parallel_degree");
	want(&o, JR_DP, 1, "./train_configs/llama3_8b.toml", 17, "");
}

/* ---- wrapper scripts and launch-through commands ---------------------------------------- */

#define MEG_MODEL "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 "

/* srun ./w.sh ARGS: the wrapper's "$@" carries the arguments, an unknown
 * one stays unknown; a value passed in names the line that wrote it (the
 * job script), what the wrapper adds names the wrapper's line. */
static void test_wrapper_args(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/w.sh", "#!/bin/bash\n"
			       "set -e\n"
			       "exec torchrun --nproc-per-node 8 pretrain_gpt.py " MEG_MODEL "\"$@\"\n" },
		{ NULL, NULL },
	};
	static const char script[] =
		"#!/bin/bash\n"
		"srun ./w.sh --tensor-model-parallel-size 2 --pipeline-model-parallel-size $(cat pp)\n";
	struct job j = { script, files, 1, 8, 0, 0, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	want(&o, JR_TP, 2, "job.sbatch", 2, "--tensor-model-parallel-size");
	want(&o, JR_WORLD, 8, "w.sh", 3, "torchrun");
	want_unknown(&o, JR_PP, "job.sbatch", 2);
	assert_int_equal(o.n_need, 0);
}

/* A wrapper that starts a wrapper that starts a wrapper: two are
 * followed, the third is said. */
static void test_wrapper_depth(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/a.sh", "bash b.sh \"$@\"\n" },
		{ CWD "/b.sh", "bash c.sh \"$@\"\n" },
		{ CWD "/c.sh", "torchrun --nproc-per-node 8 pretrain_gpt.py " MEG_MODEL "\"$@\"\n" },
		{ NULL, NULL },
	};
	static const char script[] = "srun ./a.sh --tensor-model-parallel-size 2\n";
	struct job j = { script, files, 1, 8, 0, 0, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	want_unset(&o, JR_TP);
	assert_non_null(note(&o, "SCRIPT_NOT_FOLLOWED", "c.sh was not followed"));
}

/* A wrapper that is not there, and a wrapper option that is not known:
 * said, and nothing after them guessed. */
static void test_wrapper_not_followed(void **st)
{
	static const char missing[] = "srun ./nothere.sh --tensor-model-parallel-size 2\n";
	static const char docker[] =
		"docker run --rm --brand-new-flag img torchrun --nproc-per-node 8 pretrain_gpt.py "
		MEG_MODEL "--tensor-model-parallel-size 2\n";
	static const char sing[] =
		"srun apptainer exec --nv -B /a:/a img.sif python pretrain_gpt.py " MEG_MODEL
		"--tensor-model-parallel-size 4\n";
	static const char ray[] =
		"ray job submit --address http://h:8265 --no-wait -- vllm serve m --tensor-parallel-size 4\n";
	struct job j = { missing, NULL, 1, 8, 0, 0, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	assert_non_null(note(&o, "SCRIPT_NOT_FOLLOWED", "nothere.sh could not be read"));
	want_unset(&o, JR_TP);

	j.script = docker;
	read_job(st, &j, &o);
	assert_non_null(note(&o, "SCRIPT_NOT_FOLLOWED", "--brand-new-flag is not known"));
	want_unset(&o, JR_TP);
	assert_true(o.is_llm);

	j.script = sing;
	read_job(st, &j, &o);
	want(&o, JR_TP, 4, "job.sbatch", 1, "--tensor-model-parallel-size");

	j.script = ray;
	read_job(st, &j, &o);
	want(&o, JR_TP, 4, "job.sbatch", 1, "--tensor-parallel-size");
}

/* ---- nanotron ------------------------------------------------------------------------- */

static const char nanotron_yaml[] =
	"checkpoints:\n"                         /* 1 */
	"  checkpoint_interval: 250\n"           /* 2 */
	"  checkpoints_path: /scratch/ckpt\n"    /* 3 */
	"parallelism:\n"                         /* 4 */
	"  dp: 4\n"                              /* 5 */
	"  pp: 1\n"                              /* 6 */
	"  tp: 2\n"                              /* 7 */
	"  expert_parallel_size: 1\n"            /* 8 */
	"  tp_mode: REDUCE_SCATTER\n"            /* 9 */
	"model:\n"                               /* 10 */
	"  dtype: bfloat16\n"                    /* 11 */
	"  model_config:\n"                      /* 12 */
	"    hidden_act: silu\n"                 /* 13 */
	"    hidden_size: 2048\n"                /* 14 */
	"    intermediate_size: 5632\n"          /* 15 */
	"    num_attention_heads: 32\n"          /* 16 */
	"    num_hidden_layers: 22\n"            /* 17 */
	"    num_key_value_heads: 4\n"           /* 18 */
	"    max_position_embeddings: 2048\n"    /* 19 */
	"    rms_norm_eps: 1.0e-05\n"            /* 20 */
	"    tie_word_embeddings: true\n"        /* 21 */
	"    vocab_size: 32000\n"                /* 22 */
	"optimizer:\n"                           /* 23 */
	"  zero_stage: 1\n"                      /* 24 */
	"tokens:\n"                              /* 25 */
	"  batch_accumulation_per_replica: 4\n"  /* 26 */
	"  micro_batch_size: 8\n"                /* 27 */
	"  sequence_length: 2048\n";             /* 28 */

static void test_nanotron(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/examples/tiny.yaml", nanotron_yaml },
		{ NULL, NULL },
	};
	static const char script[] =
		"#!/bin/bash\n"
		"export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
		"torchrun --nproc_per_node=8 run_train.py --config-file examples/tiny.yaml\n"; /* 3 */
	struct job j = { script, files, 1, 8, 0, 0, NULL };
	struct jobread_out o;
	const char *y = "examples/tiny.yaml";

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "nanotron");
	want(&o, JR_LAYOUT_EXACT, 1, "job.sbatch", 3, NULL);
	want(&o, JR_DP, 4, y, 5, "parallelism.dp");
	want(&o, JR_PP, 1, y, 6, "parallelism.pp");
	want(&o, JR_TP, 2, y, 7, "parallelism.tp");
	want(&o, JR_EP, 1, y, 8, NULL);
	want(&o, JR_SP, 1, y, 9, "parallelism.tp_mode");
	want(&o, JR_PRECISION, ADV_PREC_BF16, y, 11, "model.dtype");
	want(&o, JR_ARCH_GATED, 1, y, 13, NULL);
	want(&o, JR_ARCH_HIDDEN, 2048, y, 14, "model.model_config.hidden_size");
	want(&o, JR_ARCH_FFN, 5632, y, 15, NULL);
	want(&o, JR_ARCH_HEADS, 32, y, 16, NULL);
	want(&o, JR_ARCH_LAYERS, 22, y, 17, NULL);
	want(&o, JR_ARCH_KV_HEADS, 4, y, 18, NULL);
	want(&o, JR_ARCH_MAX_SEQ, 2048, y, 19, NULL);
	want(&o, JR_ARCH_NORM, ADV_NORM_RMSNORM, y, 20, NULL);
	want(&o, JR_ARCH_TIED, 1, y, 21, NULL);
	want(&o, JR_ARCH_VOCAB, 32000, y, 22, NULL);
	want(&o, JR_ZERO, 1, y, 24, "optimizer.zero_stage");
	want(&o, JR_GAS, 4, y, 26, "tokens.batch_accumulation_per_replica");
	want(&o, JR_MBS, 8, y, 27, "tokens.micro_batch_size");
	want(&o, JR_SEQ, 2048, y, 28, "tokens.sequence_length");
	want(&o, JR_CKPT_STEPS, 250, y, 2, "checkpoints.checkpoint_interval");
	want(&o, JR_WORLD, 8, "job.sbatch", 3, NULL);
	/* No parallelism.recompute_layer: nanotron's default, False. */
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_NONE, "", 0, NULL);
	assert_true(o.v[JR_RECOMPUTE].src.fw_default);
	assert_non_null(strstr(o.v[JR_RECOMPUTE].src.key, "nanotron default"));
}

/* parallelism.recompute_layer: whole layers (ParallelismArgs); nanotron
 * reads no model.model_config.recompute_layer. */
static void test_nanotron_recompute(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/a.yaml", "parallelism:\n  dp: 8\n  tp: 1\n  pp: 1\n  recompute_layer: true\n" },
		{ CWD "/b.yaml", "parallelism:\n  dp: 8\n  tp: 1\n  pp: 1\n"
				 "model:\n  model_config:\n    recompute_layer: true\n" },
		{ NULL, NULL },
	};
	struct job j = { "torchrun --nproc_per_node=8 run_train.py --config-file a.yaml\n", files, 1, 8,
			 0, 0, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, "a.yaml", 5, "parallelism.recompute_layer");
	j.script = "torchrun --nproc_per_node=8 run_train.py --config-file b.yaml\n";
	read_job(st, &j, &o);
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_NONE, "", 0, NULL);
}

/* Through the engine: 8 ranks declared, torchrun starts 16. */
static void test_nanotron_world_mismatch(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/examples/tiny.yaml", nanotron_yaml },
		{ NULL, NULL },
	};
	static const char script[] =
		"#!/bin/bash\n"
		"srun torchrun --nnodes 2 --nproc_per_node 8 run_train.py --config-file examples/tiny.yaml\n";
	struct job j = { script, files, 2, 8, 0, 1, NULL };
	struct jobread_out o;
	struct adv_request r;
	struct adv_result res;
	struct adv_finding pre[16];
	struct adv_policy pol;
	const struct adv_finding *f;

	read_job(st, &j, &o);
	engine_request_init(&r);
	snprintf(r.res.gpu, sizeof(r.res.gpu), "h100");
	r.res.nodes = 2;
	r.res.gpus_per_node = 8;
	r.res.gpus = 16;
	r.n_pre = jobread_apply(*st, &o, &r, pre, 16);
	r.pre = pre;
	policy_defaults(&pol);
	engine_check(*st, &pol, &r, &res);
	jobread_annotate(&o, &r, &res);
	f = fixture_finding(&res, "WORLD_SIZE_MISMATCH");
	assert_non_null(f);
	assert_int_equal(res.verdict, ADV_REJECT);
	assert_string_equal(res.model, "inline");
}

/* ---- GPT-NeoX ------------------------------------------------------------------------- */

static const char neox_model[] =
	"# NeoX llama-style 7B (test), braces style\n"   /* 1 */
	"{\n"                                            /* 2 */
	"  \"pipe-parallel-size\": 2,\n"                 /* 3 */
	"  \"model-parallel-size\": 2,\n"                /* 4 */
	"  \"num-layers\": 32,\n"                        /* 5 */
	"  \"hidden_size\": 4096,\n"                     /* 6 */
	"  \"num-attention-heads\": 32,\n"               /* 7 */
	"  \"num_kv_heads\": 8,\n"                       /* 8 */
	"  \"intermediate_size\": 32768,\n"              /* 9 */
	"  \"mlp_multiple_of\": 256,\n"                  /* 10 */
	"  \"seq-length\": 4096,\n"                      /* 11 */
	"  \"max-position-embeddings\": 4096,\n"         /* 12 */
	"  \"norm\": \"rmsnorm\",\n"                     /* 13 */
	"  \"activation\": \"swiglu\",\n"                /* 14 */
	"  \"no-weight-tying\": true,\n"                 /* 15 */
	"  \"zero_optimization\": { \"stage\": 1 },\n"   /* 16 */
	"  \"train_micro_batch_size_per_gpu\": 2,\n"     /* 17 */
	"  \"gradient_accumulation_steps\": 16,\n"       /* 18 */
	"  \"checkpoint-activations\": true,\n"          /* 19 */
	"  \"bf16\": { \"enabled\": true },\n"           /* 20 */
	"  \"checkpoint-factor\": 1000\n"                /* 21 */
	"}\n";

static const char neox_site[] =
	"save: /lustre/ckpt/neox\n"      /* 1 */
	"launcher: slurm\n"              /* 2 */
	"model_parallel_size: 4\n";      /* 3: also in the model file */

static void test_neox(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/configs/7B.yml", neox_model },
		{ CWD "/configs/site.yml", neox_site },
		{ NULL, NULL },
	};
	static const char script[] =
		"#!/bin/bash\n"
		"python ./deepy.py train.py -d configs 7B.yml site.yml\n";  /* 2 */
	static const char nosave[] =
		"#!/bin/bash\n"
		"python3 deepy.py train.py configs/7B.yml\n";
	struct job j = { script, files, 2, 8, 0, 1, NULL };
	struct jobread_out o;
	const char *m = "configs/7B.yml";

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "neox");
	/* The later file wins; NeoX itself refuses the duplicate. */
	want(&o, JR_TP, 4, "configs/site.yml", 3, "model_parallel_size");
	assert_non_null(note(&o, "SCRIPT_CONFIG_ERROR", "configs/site.yml:3:"));
	want(&o, JR_PP, 2, m, 3, "pipe-parallel-size");
	want(&o, JR_ARCH_LAYERS, 32, m, 5, "num-layers");
	want(&o, JR_ARCH_HIDDEN, 4096, m, 6, "hidden_size");
	want(&o, JR_ARCH_HEADS, 32, m, 7, NULL);
	want(&o, JR_ARCH_KV_HEADS, 8, m, 8, NULL);
	/* ParallelMLP: 32768 * 2/3 / 2, up to a multiple of 256 = 11008. */
	want(&o, JR_ARCH_FFN, 11008, m, 9, "");
	want(&o, JR_SEQ, 4096, m, 11, "seq-length");
	want(&o, JR_ARCH_MAX_SEQ, 4096, m, 12, NULL);
	want(&o, JR_ARCH_NORM, ADV_NORM_RMSNORM, m, 13, NULL);
	want(&o, JR_ARCH_GATED, 1, m, 14, NULL);
	want(&o, JR_ARCH_TIED, 0, m, 15, NULL);
	want(&o, JR_ZERO, 1, m, 16, "zero_optimization.stage");
	want(&o, JR_MBS, 2, m, 17, NULL);
	want(&o, JR_GAS, 16, m, 18, NULL);
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, m, 19, "checkpoint-activations");
	want(&o, JR_PRECISION, ADV_PREC_BF16, m, 20, "bf16.enabled");
	want(&o, JR_CKPT_STEPS, 1000, m, 21, "checkpoint-factor");

	/* Without a save path NeoX writes no checkpoint. */
	j.script = nosave;
	read_job(st, &j, &o);
	want(&o, JR_CKPT_OFF, 1, m, 0, "");
	want(&o, JR_TP, 2, m, 4, "model-parallel-size");
	/* No vocab_file: the vocabulary is not read. */
	assert_false(o.v[JR_ARCH_VOCAB].set);
}

/* Issue 28: GPT-NeoX's vocab_file by its published name, padded as NeoX
 * pads it (make_vocab_size_divisible_by x model_parallel_size); another
 * tokenizer_type reading the file says nothing. */
static const char neox_vocab[] =
	"model_parallel_size: 2\n"                       /* 1 */
	"num_layers: 24\n"                               /* 2 */
	"hidden_size: 2048\n"                            /* 3 */
	"num_attention_heads: 16\n"                      /* 4 */
	"vocab_file: /lustre/data/gpt2-vocab.json\n"     /* 5 */
	"merge_file: /lustre/data/gpt2-merges.txt\n"     /* 6 */
	"make_vocab_size_divisible_by: 64\n";            /* 7 */

static const char neox_vocab_hf[] =
	"model_parallel_size: 2\n"
	"vocab_file: /lustre/data/gpt2-vocab.json\n"
	"tokenizer_type: HFTokenizer\n";

static void test_neox_vocab(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/v.yml", neox_vocab },
		{ CWD "/hf.yml", neox_vocab_hf },
		{ NULL, NULL },
	};
	static const char script[] = "#!/bin/bash\npython deepy.py train.py v.yml\n";
	static const char hf[] = "#!/bin/bash\npython deepy.py train.py hf.yml\n";
	struct job j = { script, files, 1, 8, 0, 1, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	/* 50257 to a multiple of 64 x 2. */
	want(&o, JR_ARCH_VOCAB, 50304, "v.yml", 5, "vocab_file");
	assert_int_equal(o.v[JR_ARCH_VOCAB].src.style, JR_STYLE_DERIVED);
	j.script = hf;
	read_job(st, &j, &o);
	assert_false(o.v[JR_ARCH_VOCAB].set);
}

/* ---- torchtune ------------------------------------------------------------------------ */

static const char tune_yaml[] =
	"output_dir: /scratch/out\n"                                       /* 1 */
	"model:\n"                                                         /* 2 */
	"  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"      /* 3 */
	"  lora_rank: 16\n"                                                /* 4 */
	"tokenizer:\n"                                                     /* 5 */
	"  _component_: torchtune.models.llama3.llama3_tokenizer\n"        /* 6 */
	"  max_seq_len: 4096\n"                                            /* 7 */
	"batch_size: 2\n"                                                  /* 8 */
	"epochs: 1\n"                                                      /* 9 */
	"gradient_accumulation_steps: 8\n"                                 /* 10 */
	"enable_activation_checkpointing: True\n"                          /* 11 */
	"dtype: bf16\n";                                                   /* 12 */

static void test_torchtune(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/8B_lora.yaml", tune_yaml },
		{ NULL, NULL },
	};
	static const char script[] =
		"#!/bin/bash\n"
		"tune run --nnodes 2 --nproc_per_node 8 \\\n"                   /* 2 */
		"  lora_finetune_distributed --config ./8B_lora.yaml \\\n"      /* 3 */
		"  batch_size=4 \\\n"                                           /* 4 */
		"  tokenizer.max_seq_len=8192 \\\n"                             /* 5 */
		"  fsdp_reshard_after_forward=False\n";                         /* 6 */
	static const char builtin[] =
		"#!/bin/bash\n"
		"tune run full_finetune_single_device --config llama3_1/8B_full_single_device \\\n" /* 2 */
		"  gradient_accumulation_steps=2\n";                                             /* 3 */
	static const char builtin_multinode[] =
		"#!/bin/bash\n"
		"tune run --nnodes 2 --nproc_per_node 8 full_finetune_distributed \\\n"      /* 2 */
		"  --config llama3_3/70B_full_multinode \\\n"                             /* 3 */
		"  tokenizer.max_seq_len=2048 dtype=bf16\n";                               /* 4 */
	static const char unknown[] =
		"#!/bin/bash\n"
		"tune run --nproc_per_node 4 lora_finetune_distributed --config gemma9/2B_lora\n";
	struct job j = { script, files, 2, 8, 0, 1, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "torchtune");
	assert_string_equal(o.launcher, "tune");
	want(&o, JR_NODES, 2, "job.sbatch", 2, "--nnodes");
	want(&o, JR_NPROC_PER_NODE, 8, "job.sbatch", 2, "--nproc_per_node");
	want(&o, JR_WORLD, 16, "job.sbatch", 2, "");
	want_str(&o, JR_MODEL, "llama3.1-8b", "./8B_lora.yaml", 3);
	want(&o, JR_TASK, ADV_TASK_LORA, "job.sbatch", 2, NULL);
	want(&o, JR_MBS, 4, "job.sbatch", 4, "batch_size");
	want(&o, JR_SEQ, 8192, "job.sbatch", 5, "tokenizer.max_seq_len");
	want(&o, JR_GAS, 8, "./8B_lora.yaml", 10, "gradient_accumulation_steps");
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, "./8B_lora.yaml", 11, NULL);
	want(&o, JR_PRECISION, ADV_PREC_BF16, "./8B_lora.yaml", 12, "dtype");
	want(&o, JR_ZERO, 2, "job.sbatch", 6, "fsdp_reshard_after_forward");
	want_unknown(&o, JR_CKPT_STEPS, "./8B_lora.yaml", 9);

	j.script = builtin;
	read_job(st, &j, &o);
	print_notes(&o);
	want_str(&o, JR_MODEL, "llama3.1-8b", "job.sbatch", 2);
	want(&o, JR_TASK, ADV_TASK_FINETUNE, "job.sbatch", 2, NULL);
	want(&o, JR_GAS, 2, "job.sbatch", 3, "gradient_accumulation_steps");
	want_unset(&o, JR_WORLD);   /* one process: no launcher options */
	want_unset(&o, JR_ZERO);
	assert_non_null(note(&o, "SCRIPT_UNKNOWN", "built-in"));
	/* The packaged YAML's values are not known: unknown, never the
	 * engine's defaults; an override states one; a single-device recipe
	 * has no tensor_parallel_dim. */
	want_unknown(&o, JR_MBS, "job.sbatch", 2);
	want_unknown(&o, JR_SEQ, "job.sbatch", 2);
	want_unknown(&o, JR_RECOMPUTE, "job.sbatch", 2);
	want_unknown(&o, JR_PRECISION, "job.sbatch", 2);
	want_unset(&o, JR_TP);
	assert_non_null(note(&o, "SCRIPT_UNKNOWN", "llama3_1/8B_full_single_device"));

	j.script = builtin_multinode;
	read_job(st, &j, &o);
	print_notes(&o);
	want_str(&o, JR_MODEL, "llama3.1-70b", "job.sbatch", 3);
	want_unknown(&o, JR_TP, "job.sbatch", 3);
	want_unknown(&o, JR_MBS, "job.sbatch", 3);
	want_unknown(&o, JR_RECOMPUTE, "job.sbatch", 3);
	want(&o, JR_SEQ, 2048, "job.sbatch", 4, "tokenizer.max_seq_len");
	want(&o, JR_PRECISION, ADV_PREC_BF16, "job.sbatch", 4, "dtype");
	want(&o, JR_WORLD, 16, "job.sbatch", 2, "");

	j.script = unknown;
	read_job(st, &j, &o);
	want_unknown(&o, JR_MODEL, "job.sbatch", 2);
	want(&o, JR_WORLD, 4, "job.sbatch", 2, "");
	want(&o, JR_ZERO, 3, "job.sbatch", 2, "");
}

/* ---- axolotl and models ---------------------------------------------------------------- */

static const char axolotl_yaml[] =
	"base_model: ./models/tiny-moe\n"      /* 1 */
	"adapter: qlora\n"                     /* 2 */
	"sequence_len: 2048\n"                 /* 3 */
	"micro_batch_size: 2\n"                /* 4 */
	"gradient_accumulation_steps: 4\n"     /* 5 */
	"gradient_checkpointing: true\n"       /* 6 */
	"bf16: auto\n"                         /* 7 */
	"fp16: false\n"                        /* 8 */
	"deepspeed: ds/zero2.json\n"           /* 9 */
	"saves_per_epoch: 4\n";                /* 10 */

static const char ds_json[] =
	"{\n"
	"  \"zero_optimization\": {\n"
	"    \"stage\": 2\n"                   /* 3 */
	"  },\n"
	"  \"bf16\": { \"enabled\": true }\n"  /* 5 */
	"}\n";

/* A DeepSeek-style MoE with MLA, written as a Hugging Face config.json. */
static const char moe_json[] =
	"{\n"                                               /* 1 */
	"  \"architectures\": [\"DeepseekV3ForCausalLM\"],\n" /* 2 */
	"  \"model_type\": \"deepseek_v3\",\n"              /* 3 */
	"  \"hidden_size\": 2048,\n"                        /* 4 */
	"  \"num_hidden_layers\": 12,\n"                    /* 5 */
	"  \"num_attention_heads\": 16,\n"                  /* 6 */
	"  \"num_key_value_heads\": 16,\n"                  /* 7 */
	"  \"intermediate_size\": 8192,\n"                  /* 8 */
	"  \"moe_intermediate_size\": 1024,\n"              /* 9 */
	"  \"n_routed_experts\": 64,\n"                     /* 10 */
	"  \"num_experts_per_tok\": 6,\n"                   /* 11 */
	"  \"n_shared_experts\": 2,\n"                      /* 12 */
	"  \"first_k_dense_replace\": 1,\n"                 /* 13 */
	"  \"q_lora_rank\": null,\n"                        /* 14 */
	"  \"kv_lora_rank\": 512,\n"                        /* 15 */
	"  \"qk_rope_head_dim\": 64,\n"                     /* 16 */
	"  \"qk_nope_head_dim\": 128,\n"                    /* 17 */
	"  \"v_head_dim\": 128,\n"                          /* 18 */
	"  \"vocab_size\": 102400,\n"                       /* 19 */
	"  \"max_position_embeddings\": 16384,\n"           /* 20 */
	"  \"rms_norm_eps\": 1e-06,\n"                      /* 21 */
	"  \"hidden_act\": \"silu\",\n"                     /* 22 */
	"  \"tie_word_embeddings\": false,\n"               /* 23 */
	"  \"torch_dtype\": \"bfloat16\"\n"                 /* 24 */
	"}\n";

static void test_axolotl(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/qlora.yml", axolotl_yaml },
		{ CWD "/ds/zero2.json", ds_json },
		{ CWD "/models/tiny-moe/config.json", moe_json },
		{ NULL, NULL },
	};
	static const char script[] =
		"#!/bin/bash\n"
		"accelerate launch --num_processes 8 -m axolotl.cli.train qlora.yml \\\n" /* 2 */
		"  --micro-batch-size 4\n";                                                /* 3 */
	struct job j = { script, files, 1, 8, 0, 0, NULL };
	struct jobread_out o;
	const char *c = "./models/tiny-moe/config.json";

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "axolotl");
	want(&o, JR_TASK, ADV_TASK_LORA, "qlora.yml", 2, "adapter");
	want(&o, JR_SEQ, 2048, "qlora.yml", 3, "sequence_len");
	want(&o, JR_MBS, 4, "job.sbatch", 3, "--micro-batch-size");
	want(&o, JR_GAS, 4, "qlora.yml", 5, NULL);
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_FULL, "qlora.yml", 6, "gradient_checkpointing");
	/* bf16: auto is the GPU's call; the DeepSpeed file states bf16. */
	want(&o, JR_PRECISION, ADV_PREC_BF16, "ds/zero2.json", 5, "bf16.enabled");
	want(&o, JR_ZERO, 2, "ds/zero2.json", 3, "zero_optimization.stage");
	want(&o, JR_FRAMEWORK, ADV_FW_DEEPSPEED, "qlora.yml", 9, "deepspeed");
	want_unknown(&o, JR_CKPT_STEPS, "qlora.yml", 10);
	/* The local model directory's config.json is the architecture. */
	want_unset(&o, JR_MODEL);
	want(&o, JR_ARCH_HIDDEN, 2048, c, 4, "hidden_size");
	want(&o, JR_ARCH_LAYERS, 12, c, 5, "num_hidden_layers");
	want(&o, JR_ARCH_HEADS, 16, c, 6, NULL);
	want(&o, JR_ARCH_KV_HEADS, 16, c, 7, NULL);
	want(&o, JR_ARCH_FFN, 8192, c, 8, NULL);
	want(&o, JR_ARCH_EXPERT_FFN, 1024, c, 9, NULL);
	want(&o, JR_ARCH_EXPERTS, 64, c, 10, "n_routed_experts");
	want(&o, JR_ARCH_TOPK, 6, c, 11, NULL);
	want(&o, JR_ARCH_SHARED_EXPERTS, 2, c, 12, NULL);
	want(&o, JR_ARCH_DENSE_LAYERS, 1, c, 13, NULL);
	want_unset(&o, JR_ARCH_Q_LORA);
	want(&o, JR_ARCH_KV_LORA, 512, c, 15, NULL);
	want(&o, JR_ARCH_QK_ROPE, 64, c, 16, NULL);
	want(&o, JR_ARCH_QK_HEAD, 128, c, 17, "qk_nope_head_dim");
	want(&o, JR_ARCH_V_HEAD, 128, c, 18, NULL);
	want(&o, JR_ARCH_VOCAB, 102400, c, 19, NULL);
	want(&o, JR_ARCH_MAX_SEQ, 16384, c, 20, NULL);
	want(&o, JR_ARCH_NORM, ADV_NORM_RMSNORM, c, 21, NULL);
	want(&o, JR_ARCH_GATED, 1, c, 3, "model_type");
	want(&o, JR_ARCH_TIED, 0, c, 23, NULL);
}

/* Model names: a Hub id alias, an unknown name, a local copy without
 * config.json, and `axolotl train` with save_steps. */
static void test_model_refs(void **st)
{
	static const char y1[] =
		"base_model: meta-llama/Llama-3.1-8B-Instruct\n"
		"save_steps: 200\n";
	static const char y2[] =
		"base_model: acme/secret-model-13b\n"
		"save_strategy: \"no\"\n";
	static const char y3[] =
		"base_model: /lustre/models/Meta-Llama-3-70B\n"
		"fsdp:\n"
		"  - full_shard\n"
		"  - auto_wrap\n"
		"fsdp_config:\n"
		"  fsdp_sharding_strategy: SHARD_GRAD_OP\n";
	static const char bad[] =
		"base_model: meta-llama/Llama-3.1-8B\n"
		"sequence_len: 4096\n"
		"adapter: [lora\n";
	static const struct vfile files[] = {
		{ CWD "/a.yml", y1 }, { CWD "/b.yml", y2 }, { CWD "/c.yml", y3 }, { CWD "/bad.yml", bad },
		{ NULL, NULL },
	};
	struct job j = { "axolotl train a.yml\n", files, 1, 8, 0, 0, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	want_str(&o, JR_MODEL, "meta-llama/Llama-3.1-8B-Instruct", "a.yml", 1);
	want(&o, JR_CKPT_STEPS, 200, "a.yml", 2, "save_steps");
	want(&o, JR_TASK, ADV_TASK_FINETUNE, "job.sbatch", 1, NULL);

	j.script = "axolotl train b.yml\n";
	read_job(st, &j, &o);
	want_str(&o, JR_MODEL, "acme/secret-model-13b", "b.yml", 1);
	want(&o, JR_CKPT_OFF, 1, "b.yml", 2, "save_strategy");

	j.script = "python -m axolotl.cli.train c.yml\n";
	read_job(st, &j, &o);
	print_notes(&o);
	want_str(&o, JR_MODEL, "llama3-70b", "c.yml", 1);
	assert_non_null(note(&o, "SCRIPT_ASSUMED", "Meta-Llama-3-70B"));
	want(&o, JR_ZERO, 2, "c.yml", 6, "fsdp_config.fsdp_sharding_strategy");
	want(&o, JR_FRAMEWORK, ADV_FW_FSDP, "c.yml", 6, NULL);

	/* A bad YAML: the error names file:line:col, the job is still an
	 * axolotl job. */
	j.script = "axolotl train bad.yml --sequence_len=1024\n";
	read_job(st, &j, &o);
	print_notes(&o);
	assert_true(o.is_llm);
	assert_non_null(note(&o, "SCRIPT_CONFIG_ERROR", "bad.yml:"));
	want(&o, JR_SEQ, 1024, "job.sbatch", 1, "--sequence_len");
}

/* End to end: the issue's torchtitan 405B on one node of 8 H100. */
static void test_torchtitan_405b_one_node(void **st)
{
	static const char toml[] =
		"[model]\n"
		"name = \"llama3\"\n"
		"flavor = \"405B\"\n"
		"[training]\n"
		"local_batch_size = 2\n"
		"seq_len = 8192\n"
		"[parallelism]\n"
		"data_parallel_shard_degree = -1\n"
		"tensor_parallel_degree = 8\n"
		"[checkpoint]\n"
		"enable = true\n"
		"interval = 500\n"
		"[activation_checkpoint]\n"
		"mode = \"full\"\n";
	static const struct vfile files[] = { { CWD "/405b.toml", toml }, { NULL, NULL } };
	static const char script[] =
		"#!/bin/bash\n"
		"srun torchrun --nnodes 1 --nproc_per_node 8 -m torchtitan.train "
		"--job.config_file 405b.toml\n";
	struct job j = { script, files, 1, 8, 1, 0, NULL };
	struct jobread_out o;
	struct adv_request r;
	struct adv_result res;
	struct adv_finding pre[16];
	struct adv_policy pol;

	read_job(st, &j, &o);
	engine_request_init(&r);
	snprintf(r.res.gpu, sizeof(r.res.gpu), "h100");
	r.res.nodes = 1;
	r.res.gpus_per_node = 8;
	r.res.gpus = 8;
	r.n_pre = jobread_apply(*st, &o, &r, pre, 16);
	r.pre = pre;
	policy_defaults(&pol);
	engine_check(*st, &pol, &r, &res);
	jobread_annotate(&o, &r, &res);
	assert_int_equal(res.verdict, ADV_REJECT);
	assert_non_null(fixture_finding(&res, "MEM_OVER_CAPACITY"));
	assert_string_equal(res.model, "llama3-405b");
	assert_int_equal(res.layout.tp, 8);
}

/* ---- issue 18: OLMo scripts/train.py, quantization_config ------------------------------ */

static const char olmo_yaml[] =
	"model:\n"                          /* 1 */
	"  d_model: 4096\n"                 /* 2 */
	"  n_heads: 32\n"                   /* 3 */
	"  n_layers: 32\n"                  /* 4 */
	"  mlp_hidden_size: 22016\n"        /* 5 */
	"  max_sequence_length: 2048\n"     /* 6 */
	"  embedding_size: null\n"          /* 7 */
	"  vocab_size: 50280\n"             /* 8 */
	"precision: amp_bf16\n"             /* 9 */
	"activation_checkpointing: one_in_two\n" /* 10 */
	"save_interval: null\n"             /* 11 */
	"save_interval_unsharded: 500\n";   /* 12 */

static void test_olmo(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"                                                             /* 1 */
		"srun torchrun --nnodes 2 --nproc_per_node 8 scripts/train.py cfg/olmo7.yaml \\\n" /* 2 */
		"  --model.n-layers=16 --fsdp.sharding_strategy=HYBRID_SHARD \\\n"           /* 3 */
		"  --global_train_batch_size 99 --device_train_microbatch_size=2\n";        /* 4 */
	static const struct vfile files[] = {
		{ CWD "/cfg/olmo7.yaml", olmo_yaml },
		{ NULL, NULL },
	};
	struct job j = { script, files, 2, 8, 0, 1, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "olmo");
	want(&o, JR_ARCH_HIDDEN, 4096, "cfg/olmo7.yaml", 2, "model.d_model");
	want(&o, JR_ARCH_LAYERS, 16, "job.sbatch", 3, "--model.n-layers");
	/* SwiGLU (the default) keeps half of mlp_hidden_size. */
	want(&o, JR_ARCH_FFN, 11008, "cfg/olmo7.yaml", 5, "model.mlp_hidden_size");
	want(&o, JR_ARCH_GATED, 1, "cfg/olmo7.yaml", 0, "model.activation_type");
	/* embedding_size null: the vocabulary itself. */
	want(&o, JR_ARCH_VOCAB, 50280, "cfg/olmo7.yaml", 8, "model.vocab_size");
	want(&o, JR_ARCH_TIED, 1, "cfg/olmo7.yaml", 0, "model.weight_tying");
	want(&o, JR_SEQ, 2048, "cfg/olmo7.yaml", 6, "model.max_sequence_length");
	want(&o, JR_ZERO, 3, "job.sbatch", 3, "--fsdp.sharding_strategy");
	/* "--key value" is not OLMo's: the bare flag is key=True, no count
	 * (OmegaConf refuses it), and that is said. */
	want_unset(&o, JR_GBS);
	assert_non_null(note(&o, "SCRIPT_UNKNOWN", "global_train_batch_size 'true'"));
	want(&o, JR_MBS, 2, "job.sbatch", 4, "--device_train_microbatch_size");
	want(&o, JR_PRECISION, ADV_PREC_BF16, "cfg/olmo7.yaml", 9, "precision");
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_SELECTIVE, "cfg/olmo7.yaml", 10,
	     "activation_checkpointing");
	assert_non_null(note(&o, "SCRIPT_ASSUMED", "one_in_two"));
	want(&o, JR_CKPT_STEPS, 500, "cfg/olmo7.yaml", 12, "save_interval_unsharded");
	want(&o, JR_WORLD, 16, "job.sbatch", 2, "torchrun");
}

/* Levanter: --config_path YAML with draccus overrides ("--a.b VALUE" and
 * "--a.b=VALUE"), `key: !include FILE` relative to the including file,
 * and the dataclasses' defaults marked as the framework's. */
static void test_levanter(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"                                                          /* 1 */
		"srun python -m levanter.main.train_lm --config_path cfg/run.yaml \\\n"   /* 2 */
		"  --trainer.train_batch_size 96 --trainer.per_device_parallelism=-1\n";  /* 3 */
	static const char run_yaml[] =
		"model: !include m/model.yaml\n"    /* 1 */
		"trainer:\n"                        /* 2 */
		"  mp: p=f32,c=bfloat16\n"          /* 3 */
		"  model_axis_size: 2\n";           /* 4 */
	static const char model_yaml[] =
		"type: llama\n"                     /* 1 */
		"num_layers: 8\n"                   /* 2 */
		"hidden_dim: 512\n"                 /* 3 */
		"gradient_checkpointing: save_all\n"; /* 4 */
	static const struct vfile files[] = {
		{ CWD "/cfg/run.yaml", run_yaml },
		{ CWD "/cfg/m/model.yaml", model_yaml },
		{ NULL, NULL },
	};
	struct job j = { script, files, 2, 8, 0, 1, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "levanter");
	want(&o, JR_ARCH_LAYERS, 8, "cfg/m/model.yaml", 2, "model.num_layers");
	want(&o, JR_ARCH_HIDDEN, 512, "cfg/m/model.yaml", 3, "model.hidden_dim");
	/* LlamaConfig's defaults for what the file leaves out. */
	want(&o, JR_ARCH_HEADS, 32, "cfg/run.yaml", 0, "model.num_heads");
	assert_true(o.v[JR_ARCH_HEADS].src.fw_default);
	assert_false(o.v[JR_ARCH_LAYERS].src.fw_default);
	want(&o, JR_SEQ, 2048, "cfg/run.yaml", 0, "model.seq_len");
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_NONE, "cfg/m/model.yaml", 4,
	     "model.gradient_checkpointing");
	want(&o, JR_PRECISION, ADV_PREC_BF16, "cfg/run.yaml", 3, "trainer.mp");
	want(&o, JR_TP, 2, "cfg/run.yaml", 4, "trainer.model_axis_size");
	want(&o, JR_GBS, 96, "job.sbatch", 3, "--trainer.train_batch_size");
	/* -1: the whole batch over the data axis (16 GPUs / TP 2). */
	want(&o, JR_MBS, 12, "job.sbatch", 3, "--trainer.per_device_parallelism");
	want(&o, JR_ZERO, 3, "cfg/run.yaml", 0, "trainer.fsdp_axis");
	assert_true(o.v[JR_ZERO].src.fw_default);
}

/* An !include that includes itself ends: each include takes one key
 * component, so a lookup follows at most as many as the key has (and
 * JR_DOTCFG_MAX_INCLUDE); the key not found is the default. */
static void test_levanter_include_loop(void **st)
{
	static const char script[] =
		"srun python src/levanter/main/train_lm.py --config c/a\n";
	static const char a_yaml[] = "model: !include a.yaml\n";
	static const struct vfile files[] = {
		{ CWD "/c/a.yaml", a_yaml },
		{ NULL, NULL },
	};
	struct job j = { script, files, 1, 8, 0, 1, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	assert_string_equal(o.trainer, "levanter");
	want(&o, JR_ARCH_LAYERS, 32, "c/a.yaml", 0, "model.num_layers");
	assert_true(o.v[JR_ARCH_LAYERS].src.fw_default);
}

/* lighteval vllm "MODEL_ARGS" TASKS: an inference job; the string is split
 * at commas outside braces, the last key wins, an unknown part stays
 * unknown, and the world is tp x pp x dp. */
static void test_lighteval(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"                                                              /* 1 */
		"N=$(nvidia-smi -L | wc -l)\n"                                               /* 2 */
		"A=\"model_name=meta-llama/Llama-3.1-8B,dtype=float16,tensor_parallel_size=2\"\n" /* 3 */
		"lighteval vllm \"$A,generation_parameters={a:1,b:2},tensor_parallel_size=4,max_model_length=4096,data_parallel_size=$N\" \"l|t|0|0\"\n"; /* 4 */
	struct job j = { script, NULL, 1, 8, 0, 1, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "lighteval");
	want(&o, JR_TASK, ADV_TASK_INFER, "job.sbatch", 4, NULL);
	want_str(&o, JR_MODEL, "meta-llama/Llama-3.1-8B", "job.sbatch", 3);
	want(&o, JR_PRECISION, ADV_PREC_FP16, "job.sbatch", 3, "dtype");
	want(&o, JR_TP, 4, "job.sbatch", 3, "tensor_parallel_size");
	want(&o, JR_SEQ, 4096, "job.sbatch", 3, "max_model_length");
	/* Not in the string: VLLMModelConfig's defaults, marked as such. */
	want(&o, JR_MAX_SEQS, 128, "job.sbatch", 0, "max_num_seqs");
	assert_true(o.v[JR_MAX_SEQS].src.fw_default);
	want(&o, JR_PREFILL_CHUNK, 2048, "job.sbatch", 0, "max_num_batched_tokens");
	/* $(nvidia-smi -L | wc -l): not known before the job runs. */
	want_unknown(&o, JR_DP, "job.sbatch", 3);
	want_unknown(&o, JR_WORLD, "job.sbatch", 3);
}

/* python3 -m verl.trainer.main_ppo with Hydra overrides: the Ray pool is
 * the world, FSDP is ZeRO-3, defaults where nothing is said. */
static void test_verl(void **st)
{
	static const char script[] =
		"#!/bin/bash\n"                                                       /* 1 */
		"python3 -m verl.trainer.main_ppo \\\n"                                /* 2 */
		"  actor_rollout_ref.model.path=Qwen/Qwen2.5-7B \\\n"                /* 3 */
		"  actor_rollout_ref.actor.ppo_mini_batch_size=32 \\\n"              /* 4 */
		"  +actor_rollout_ref.rollout.n=8 data.max_response_length=1536 \\\n" /* 5 */
		"  actor_rollout_ref.model.enable_gradient_checkpointing=False \\\n" /* 6 */
		"  trainer.nnodes=2\n";                                              /* 7 */
	struct job j = { script, NULL, 2, 8, 0, 1, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	print_notes(&o);
	assert_string_equal(o.trainer, "verl");
	want(&o, JR_TASK, ADV_TASK_FINETUNE, "job.sbatch", 2, NULL);
	want_str(&o, JR_MODEL, "Qwen/Qwen2.5-7B", "job.sbatch", 3);
	want(&o, JR_ZERO, 3, "job.sbatch", 0, "actor_rollout_ref.actor.strategy");
	assert_true(o.v[JR_ZERO].src.fw_default);
	want(&o, JR_GBS, 256, "job.sbatch", 4, "actor_rollout_ref.actor.ppo_mini_batch_size");
	/* data.max_prompt_length's default 512 + 1536 */
	want(&o, JR_SEQ, 2048, "job.sbatch", 5, NULL);
	want(&o, JR_RECOMPUTE, ADV_RECOMPUTE_NONE, "job.sbatch", 6,
	     "actor_rollout_ref.model.enable_gradient_checkpointing");
	want(&o, JR_NODES, 2, "job.sbatch", 7, "trainer.nnodes");
	/* trainer.n_gpus_per_node's default 8 */
	want(&o, JR_WORLD, 16, "job.sbatch", 2, NULL);
	want_unset(&o, JR_MBS);
	assert_non_null(note(&o, "SCRIPT_ASSUMED", "costs the actor's training only"));
}

/* quantization_config in a local config.json sets the weights' format. */
static void test_hf_quantization_config(void **st)
{
	static const char script[] = "vllm serve /m/q4 --max-model-len 4096\n";
	static const char cfg[] =
		"{\"model_type\": \"llama\", \"hidden_size\": 2048, \"num_hidden_layers\": 16,\n"
		" \"num_attention_heads\": 32, \"intermediate_size\": 8192, \"vocab_size\": 32000,\n"
		" \"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 4}}\n";
	static const struct vfile files[] = {
		{ "/m/q4/config.json", cfg },
		{ NULL, NULL },
	};
	struct job j = { script, files, 1, 1, 1, 0, NULL };
	struct jobread_out o;

	read_job(st, &j, &o);
	want(&o, JR_ARCH_LAYERS, 16, "/m/q4/config.json", 1, "num_hidden_layers");
	/* GPTQ 4-bit: vLLM loads w4a16 weights (issue 19, memory.c). */
	want(&o, JR_WEIGHTS, ADV_WEIGHTS_INT4, "/m/q4/config.json", 3, "quantization_config (gptq, 4-bit)");
	assert_null(note(&o, "SCRIPT_ASSUMED", "quantization_config"));
}

/*
 * Container bind mounts (ctx.c jr_mount, launch.c): a config named by its
 * path in the container is read from the mount's source on the host.
 * docker -v with a named volume and a path that only shares a prefix with
 * a target are not mapped; the longest target wins; --mount type=bind is
 * read by key, type=volume is not a host path.
 */
static void test_container_mounts(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/cfg/ds2.json", "{\"zero_optimization\": {\"stage\": 2}}" },
		{ "/srv/shared/inner/ds3.json", "{\"zero_optimization\": {\"stage\": 3}}" },
		{ "/srv/keyed/ds1.json", "{\"zero_optimization\": {\"stage\": 1}}" },
		{ NULL, NULL },
	};
	struct job j = { NULL, files, 1, 8, 0, 0, NULL };
	struct jobread_out o;

	/* docker -v: "./cfg" on the host is /w in the container. */
	j.script = "#!/bin/bash\n"
		   "docker run --gpus all -v hf-cache:/root/.cache -v ./cfg:/w:ro img \\\n"
		   "  torchrun --nproc_per_node 8 -m trl.scripts.sft --deepspeed /w/ds2.json\n";
	read_job(st, &j, &o);
	want(&o, JR_ZERO, 2, "/w/ds2.json", 1, NULL);

	/* The longer target /data/inner wins over /data; "/datax" is not under /data. */
	j.script = "#!/bin/bash\n"
		   "apptainer exec --nv -B /srv:/data,/srv/shared/inner:/data/inner img.sif \\\n"
		   "  torchrun --nproc_per_node 8 -m trl.scripts.sft --deepspeed /data/inner/ds3.json\n";
	read_job(st, &j, &o);
	want(&o, JR_ZERO, 3, "/data/inner/ds3.json", 1, NULL);
	j.script = "#!/bin/bash\n"
		   "apptainer exec --nv -B /srv/shared:/data img.sif \\\n"
		   "  torchrun --nproc_per_node 8 -m trl.scripts.sft --deepspeed /datax/inner/ds3.json\n";
	read_job(st, &j, &o);
	assert_true(o.v[JR_ZERO].unknown);   /* "/datax/..." was looked for as is, and is not there */

	/* --mount by key; a volume mount maps nothing. */
	j.script = "#!/bin/bash\n"
		   "docker run --mount type=volume,src=v,dst=/k "
		   "--mount type=bind,source=/srv/keyed,target=/k2 img \\\n"
		   "  torchrun --nproc_per_node 8 -m trl.scripts.sft --deepspeed /k2/ds1.json\n";
	read_job(st, &j, &o);
	want(&o, JR_ZERO, 1, "/k2/ds1.json", 1, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nemo_hydra),
		cmocka_unit_test(test_nemo_default_config),
		cmocka_unit_test(test_nemo_bad_yaml),
		cmocka_unit_test(test_nemo2),
		cmocka_unit_test(test_torchtitan_toml),
		cmocka_unit_test(test_torchtitan_defaults),
		cmocka_unit_test(test_torchtitan_older_microbatches),
		cmocka_unit_test(test_torchtitan_registry),
		cmocka_unit_test(test_torchtitan_run_sh),
		cmocka_unit_test(test_wrapper_args),
		cmocka_unit_test(test_wrapper_depth),
		cmocka_unit_test(test_wrapper_not_followed),
		cmocka_unit_test(test_nanotron),
		cmocka_unit_test(test_nanotron_recompute),
		cmocka_unit_test(test_nanotron_world_mismatch),
		cmocka_unit_test(test_neox),
		cmocka_unit_test(test_neox_vocab),
		cmocka_unit_test(test_torchtune),
		cmocka_unit_test(test_axolotl),
		cmocka_unit_test(test_model_refs),
		cmocka_unit_test(test_torchtitan_405b_one_node),
		cmocka_unit_test(test_olmo),
		cmocka_unit_test(test_lighteval),
		cmocka_unit_test(test_verl),
		cmocka_unit_test(test_levanter),
		cmocka_unit_test(test_levanter_include_loop),
		cmocka_unit_test(test_hf_quantization_config),
		cmocka_unit_test(test_container_mounts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
