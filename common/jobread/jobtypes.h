/*
 * jobtypes.h - the job reader's types, and nothing else: the fields it can
 * find (enum jobread_field), how the job writes a value (jobread_style),
 * where a value came from (jobread_src), what was read (jobread_value,
 * jobread_note, jobread_out), the file provider (jobread_files) and what a
 * caller hands in (jobread_input).
 *
 * A header of its own so that the readers' context (ctx.h) and the
 * readers' entry points (reader.h) depend on these types and not on
 * jobread.h, whose functions (jobread_read, jobread_apply, ...) are the
 * public side and call into them.
 */
#ifndef ADVISOR_JOBREAD_JOBTYPES_H
#define ADVISOR_JOBREAD_JOBTYPES_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/result.h"
#include "engine/workload.h"
#include "wire/jobtext.h"

/* The name srun's own command goes by in sources ("srun's command
 * --tensor-model-parallel-size"): it has no file and no lines. */
#define JR_CMDLINE_FILE "srun's command"

/* The fields the reader can find, in report order.  Counts are ints;
 * JR_PRECISION, JR_RECOMPUTE, JR_TASK, JR_FRAMEWORK and JR_ATTENTION hold the values of
 * engine.h's enums (adv_precision, ...; a name such as "bf16" set with
 * jr_set_str is accepted too); JR_SP, JR_CKPT_OFF, JR_LAYOUT_EXACT and
 * JR_ARCH_GATED/TIED are 0/1; JR_ARCH_NORM is enum adv_norm;
 * JR_CKPT_TIME is seconds (jr_set_num). */
enum jobread_field {
	JR_MODEL = 0,      /* catalog name, alias, HF id or torchtitan name/flavor */
	JR_TP, JR_PP, JR_CP, JR_EP, JR_ETP, JR_VPP, JR_DP, JR_SP,
	JR_ZERO, JR_PRECISION, JR_SEQ, JR_MBS, JR_GBS, JR_GAS,
	JR_RECOMPUTE, JR_TASK, JR_FRAMEWORK,
	JR_CKPT_STEPS,     /* checkpoint every N optimizer steps */
	JR_CKPT_TIME,      /* checkpoint every N seconds */
	JR_CKPT_OFF,       /* 1: the job writes no checkpoint */
	JR_WORLD,          /* processes the launch starts */
	JR_NODES,          /* nodes the launcher assumes (torchrun --nnodes) */
	JR_NPROC_PER_NODE, /* processes per node the launcher starts */
	JR_LAYOUT_EXACT,   /* 1: the framework asserts tp*pp*cp*dp == world (nanotron) */
	/* Inline architecture (Megatron, NeMo, NeoX, nanotron keys, HF config.json). */
	JR_ARCH_LAYERS, JR_ARCH_HIDDEN, JR_ARCH_HEADS, JR_ARCH_KV_HEADS, JR_ARCH_HEAD_DIM,
	JR_ARCH_FFN, JR_ARCH_VOCAB, JR_ARCH_GATED, JR_ARCH_NORM /* 0 rms 1 layer */,
	JR_ARCH_TIED, JR_ARCH_MAX_SEQ,
	JR_ARCH_EXPERTS, JR_ARCH_TOPK, JR_ARCH_EXPERT_FFN, JR_ARCH_SHARED_EXPERTS,
	JR_ARCH_DENSE_LAYERS,
	JR_ARCH_Q_LORA, JR_ARCH_KV_LORA, JR_ARCH_QK_ROPE, JR_ARCH_QK_HEAD, JR_ARCH_V_HEAD,
	/* Serving. */
	JR_MAX_SEQS,       /* vLLM --max-num-seqs, SGLang --max-running-requests */
	JR_PREFILL_CHUNK,  /* vLLM --max-num-batched-tokens, SGLang --chunked-prefill-size */
	/* Training and serving. */
	JR_ATTENTION,      /* enum adv_attention: Megatron --attention-backend, HF attn_implementation */
	/* Training memory (issue 19). */
	JR_GRAD_DTYPE,     /* enum adv_precision: Megatron --grad-reduce-in-bf16, DeepSpeed grad_accum_dtype */
	JR_OPTIM_BYTES,    /* optimizer state bytes per parameter (Megatron precision-aware optimizer) */
	JR_FP8_PARAMS,     /* 1: weights kept in fp8 (Megatron --fp8-param-gather) */
	/* Serving memory (issue 19). */
	JR_MEM_SHARE,      /* per mille: vLLM --gpu-memory-utilization, SGLang --mem-fraction-static */
	JR_WEIGHTS,        /* enum adv_weights: --quantization, config.json quantization_config */
	JR_FIELD_COUNT
};

/* How the job writes a value, so a fix can be written the same way. */
enum jobread_style {
	JR_STYLE_FLAG = 0, /* "--flag VALUE" (or "--flag=VALUE" when written so) */
	JR_STYLE_FLAG_EQ,  /* "--flag=VALUE" */
	JR_STYLE_BOOL,     /* a bare flag: "--sequence-parallel" */
	JR_STYLE_YAML,     /* "key: VALUE" */
	JR_STYLE_JSON,     /* "\"key\": VALUE" */
	JR_STYLE_TOML,     /* "key = VALUE" */
	JR_STYLE_OVERRIDE, /* Hydra/torchtune "a.b.key=VALUE" */
	JR_STYLE_ENV,      /* "NAME=VALUE" */
	JR_STYLE_DERIVED,  /* computed from what key states (the vocabulary of --vocab-file),
			      or a default the job left out ("megatron default (...)", with
			      fw_default): the source names it, but no fix writes a value there */
};

struct jobread_src {
	char file[JOBREAD_PATH_MAX];  /* as the job names it ("" = none) */
	int line;                     /* 1-based; 0 = unknown */
	int col;
	char key[96];                 /* the flag or key as written */
	enum jobread_style style;
	/* The job does not state it: the framework's documented default
	 * (ADV_FROM_FRAMEWORK), the key above being where it would be said. */
	bool fw_default;
	/* Where the value's own text was written, when that is elsewhere: a
	 * flag "--tp $TP" whose $TP was assigned on another line or in a
	 * sourced file.  That is the line a fix edits.  0 = the flag's. */
	int val_line;
	char val_file[JOBREAD_PATH_MAX];
};

struct jobread_value {
	bool set;
	bool unknown;                 /* present, but not known statically */
	bool overridden;              /* an --llm-* option gave this field (jobread_apply) */
	long long i;
	double f;
	char s[256];
	struct jobread_src src;
};

/* An info the reader reports (unknowns, bad config files, defaults taken). */
struct jobread_note {
	char code[ADV_CODE_MAX];      /* SCRIPT_UNKNOWN, SCRIPT_CONFIG_ERROR, SCRIPT_ASSUMED */
	char message[ADV_MSG_MAX];
	char fix[ADV_MSG_MAX];
};

#define JOBREAD_MAX_NOTES 12

/* The reason a job is not an LLM job, as one line (adv_result's). */
#define JOBREAD_WHY_MAX 256

/* What the reader found. */
struct jobread_out {
	bool is_llm;                  /* a launcher or trainer was recognised */
	/* Why the job was judged not to be an LLM job (issue 28: sbatch -v,
	 * advisorctl): the command it runs and the evidence not found. */
	char not_llm_why[JOBREAD_WHY_MAX];
	char launcher[32];            /* "srun", "torchrun", "deepspeed", ... or "" */
	char trainer[32];             /* "megatron", "nemo", "torchtitan", "vllm", ... or "" */
	/* The launch read runs only under a condition the reader cannot
	 * decide (an if on a file's content, a variable set at run time):
	 * its values are judged as assumed (jobread_apply). */
	bool launch_uncertain;
	/* The Slurm step the launch runs in names its own part of the
	 * allocation (srun -N/--nodes, -w/--nodelist, -x/--exclude,
	 * -r/--relative): its node count (> 0), -1 when its size is not
	 * known before the job runs, 0 when the step has the whole job. */
	int step_nodes;
	struct jobread_src step_src;
	/* The GPUs of that step when they are known apart from the job's GPUs
	 * per node (srun --het-group: a component of a heterogeneous job; srun
	 * --gpus/--gres=gpu:N asking fewer than the job holds); 0 otherwise.  het_group: 1 + the component it runs in, 0 none. */
	int step_gpus;
	int het_group;
	/* A heterogeneous batch script (#SBATCH hetjob): every component's
	 * nodes and GPUs together, GPUs per node when all alike (0 else);
	 * het_nodes 0 = not one.  The job is judged on these, whichever
	 * component's resources the caller gave (sbatch calls the plugin
	 * once per component). */
	int het_nodes, het_gpus, het_gpn;
	/* The batch script asks Slurm for no GPU (no --gpus, --gres=gpu,
	 * --gpus-per-node or --gpus-per-task in any #SBATCH block);
	 * whole_nodes: it asks for whole nodes (--exclusive).  gpu_step: an
	 * srun step of the script asks for GPUs of its own (its place in
	 * gpu_step_src, key the option). */
	bool no_gpu_asked, whole_nodes, gpu_step;
	struct jobread_src gpu_step_src;
	/* RANK_EXPANDED_ONCE (launch.c): the launch's rank flag holds the
	 * batch shell's own rank, the same on every node; rank_sev is
	 * ADV_SEV_REJECT where that is a proof, ADV_SEV_WARN where it rests
	 * on a value not known before the job runs; message "" = none.  Kept
	 * apart from notes[], which may be full. */
	struct jobread_note rank_once;
	enum adv_severity rank_sev;
	/* NODELIST_SPLIT (launch.c): an srun's host list split into its
	 * arguments; message "" = none. */
	struct jobread_note split_list;
	bool split_uncertain;         /* that srun runs only under a condition */
	bool split_lines;             /* the list quoted, names a line: a warning */
	/* A server's KV cache in fp8 (vLLM/SGLang --kv-cache-dtype fp8*). */
	bool kv_fp8;
	/* SGLang: the share holds weights and KV cache only (memory.c). */
	bool share_static;
	struct jobread_value v[JR_FIELD_COUNT];
	int n_notes;
	struct jobread_note notes[JOBREAD_MAX_NOTES];
	/* Files the reader wanted and the provider did not have yet
	 * (JOBREAD_FILE_NEED): a client reads them and asks again. */
	int n_need;
	char need[JOBREAD_MAX_FILES][JOBREAD_PATH_MAX];
	/* Not an LLM job because the program it runs was read and holds no
	 * LLM (fw_python.c): which program, and what was not found in it. */
	char program_why[ADV_MSG_MAX];
};

enum jobread_file_rc {
	JOBREAD_FILE_OK = 0,
	JOBREAD_FILE_MISSING,   /* does not exist */
	JOBREAD_FILE_DENIED,    /* cannot be read, or over the byte budget */
	JOBREAD_FILE_NEED,      /* not here yet: ask the client */
};

/*
 * The provider of file contents.  path is absolute (the reader resolves it
 * against the submit directory).  Returns a jobread_file_rc; on OK, text
 * and len stay valid until the reader is done.
 */
struct jobread_files {
	int (*open)(void *arg, const char *path, const char **text, size_t *len);
	void *arg;
};

struct jobread_input {
	enum jobread_tool tool;
	const char *script_name;      /* as the user named it (messages, sources) */
	const char *script;           /* sbatch: the batch script; NULL for srun */
	size_t script_len;
	char *const *argv;            /* srun: the command it runs; sbatch: the script's arguments */
	int argc;
	char *const *env;             /* "NAME=value", NULL-terminated; may be NULL */
	const char *cwd;              /* submit directory (absolute) */
	struct adv_resources res;     /* as Slurm resolved them */
	int ntasks;                   /* -n as resolved, 0 = not given */
	int ntasks_per_node;          /* 0 = not given */
	struct jobread_files files;
};

#endif
