/*
 * jobreq.h - the resource request of a job as sbatch, salloc or srun sees
 * it at submission time.
 *
 * In allocator and local context SPANK gives the plugin no item about the
 * job, so the plugin rebuilds the request itself from the same sources as
 * Slurm: the command line, the batch script's #SBATCH lines (sbatch only),
 * the input environment variables (SBATCH_*, SALLOC_*, SLURM_*) and, for
 * srun inside an allocation, the allocation's output variables.
 * Precedence is Slurm's: command line > environment > script (> allocation).
 *
 * Pure: no Slurm calls, no global state left behind (getopt's globals are
 * saved and restored), so it is unit-tested without a cluster.
 */
#ifndef ADVISOR_JOBREQ_H
#define ADVISOR_JOBREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JOBREQ_NAME_MAX 64

enum jobreq_tool { JOBREQ_SBATCH = 0, JOBREQ_SALLOC, JOBREQ_SRUN };

/* One layer of options (command line, environment, script, allocation). */
struct jobreq_opts {
	int nodes;                 /* -N min[-max]: min; 0 = not given */
	int nodes_max;             /* -N's max (min when no range); 0 = none */
	int ntasks;                /* -n */
	int ntasks_per_node;
	int gpus;                  /* -G/--gpus [TYPE:]N */
	int gpus_per_node;         /* --gpus-per-node [TYPE:]N */
	int gpus_per_task;         /* --gpus-per-task [TYPE:]N */
	int gres_gpus;             /* --gres gpu[:TYPE][:N], per node */
	char gpus_type[JOBREQ_NAME_MAX];
	char gpn_type[JOBREQ_NAME_MAX];
	char gpt_type[JOBREQ_NAME_MAX];
	char gres_type[JOBREQ_NAME_MAX];
	char partition[JOBREQ_NAME_MAX];   /* -p, a comma list as given */
	char account[JOBREQ_NAME_MAX];     /* -A/--account; "" = Slurm's default */
	char constraint[128];
	long mem_mb;               /* --mem, MB; 0 = not given */
	long mem_per_gpu_mb;
	int exclusive;             /* -1 not given, 0/1 */
	bool wrap;                 /* sbatch --wrap: there is no script */
	char chdir[1024];          /* -D/--chdir: where the script and srun's tasks
				      run, as given ("" = the submit directory) */
	char script[4096];         /* sbatch: first non-option argument */
	/* jobreq_parse_argv only (the command line layer): */
	int first_arg;             /* argv index where the options stop (the script,
				      srun's command); argc when there is none */
	const char *wrap_text;     /* sbatch --wrap's command, pointing into argv */
};

/* The request as resolved from every layer. */
struct jobreq {
	struct jobreq_opts opt;    /* merged by precedence */
	int gpus;                  /* total GPUs; 0 = the job asks for none */
	int nodes;                 /* 0 = not given and not derivable */
	int gpus_per_node;         /* 0 = unknown or uneven */
	char gpu_type[JOBREQ_NAME_MAX];    /* "" = not given */
	char partition[JOBREQ_NAME_MAX];
	bool in_allocation;        /* srun inside an existing job */
	uint32_t job_id;           /* that job, else 0 */
	int llm_options;           /* --llm-* options seen on the command line or in the script */
};

/* Looks up an environment variable; NULL when unset.  arg is passed through. */
typedef const char *(*jobreq_getenv_fn)(const char *name, void *arg);

void jobreq_opts_init(struct jobreq_opts *o);

/*
 * The directory the job runs in, as sbatch and srun resolve -D/--chdir
 * (slurm_opt.c: a relative path is taken from the current directory):
 * o->chdir when absolute, the current directory joined with it when
 * relative, the current directory when not given.  "" when the current
 * directory cannot be read or the result does not fit.
 */
void jobreq_workdir(const struct jobreq_opts *o, char *buf, size_t len);

/*
 * Parses one argument vector (argv[0] is the program name) of tool into o
 * with getopt_long and the tool's own option table, stopping like Slurm at
 * the first non-option argument (sbatch: the script path).  Unknown options
 * are skipped.  Returns 0, or -1 with err set for a malformed value of an
 * option this module reads (e.g. --nodes=abc); the rest of argv is still
 * parsed (first_arg, script, wrap_text, llm_options), the bad value is not.
 */
int jobreq_parse_argv(enum jobreq_tool tool, int argc, char *const argv[],
		      struct jobreq_opts *o, int *llm_options, char *err, size_t errlen);

/*
 * As jobreq_parse_argv, knowing the options of other SPANK plugins:
 * spank_env is an environment (NULL-terminated "NAME=value" strings, or
 * NULL) in which Slurm has set _SLURM_SPANK_OPTION_<plugin>_<opt>=value for
 * each SPANK option it parsed.  An option this module does not know, given
 * as "--opt value", then has its value skipped instead of taken for the
 * batch script.
 */
int jobreq_parse_argv_spank(enum jobreq_tool tool, int argc, char *const argv[],
			    char *const spank_env[], struct jobreq_opts *o, int *llm_options,
			    char *err, size_t errlen);

/*
 * Parses the #SBATCH lines of a batch script held in text (len bytes),
 * stopping at the first line that is neither blank nor a comment, as sbatch
 * does.
 */
int jobreq_parse_script(const char *text, size_t len, struct jobreq_opts *o,
			int *llm_options, char *err, size_t errlen);

/*
 * The components of a heterogeneous job: "#SBATCH hetjob" (or "packjob")
 * lines separate the #SBATCH options of each (sbatch(1), HETEROGENEOUS
 * JOB SUPPORT); each component is parsed on its own, as sbatch does, and
 * options are not carried from one to the next.  comp[0..max) are
 * filled, *n_comp gets the count in the script (1 without a separator;
 * above max, the extra ones are checked and not kept).  Returns 0, or -1
 * with err set for an invalid directive in any component.
 * jobreq_parse_script is this with max 1: the first component.
 */
#define JOBREQ_HET_MAX 16
int jobreq_parse_script_het(const char *text, size_t len, struct jobreq_opts comp[], int max,
			    int *n_comp, int *llm_options, char *err, size_t errlen);

/*
 * The resources a heterogeneous job holds in all: nodes and GPUs summed
 * over the n components (each resolved alone; one without -N has one
 * node), GPUs per node when every component has the same, else 0; the
 * first component's partition and options.  n == 1: that component.
 */
void jobreq_het_union(const struct jobreq_opts comp[], int n, struct jobreq *r);

/*
 * --gpus (per job) with --gpus-per-node or --gres=gpu (per node), as
 * Slurm checks them: the quotient must be a whole node count within -N.
 * Returns 0, or -1 with err saying why Slurm refuses the job.
 */
int jobreq_check_gpus(const struct jobreq_opts *o, char *err, size_t errlen);

/* Reads the tool's input variables (SBATCH_GPUS, SALLOC_GRES, SLURM_NNODES, ...). */
int jobreq_parse_env(enum jobreq_tool tool, jobreq_getenv_fn get, void *arg,
		     struct jobreq_opts *o, char *err, size_t errlen);

/*
 * For srun inside an allocation (SLURM_JOB_ID set): the allocation's
 * output variables (SLURM_JOB_NUM_NODES, SLURM_GPUS_ON_NODE, SLURM_JOB_GPUS,
 * SLURM_JOB_PARTITION, ...).  Returns the job id, 0 outside a job.
 */
uint32_t jobreq_parse_allocation(jobreq_getenv_fn get, void *arg, struct jobreq_opts *o);

/* Merges layers: each option from the first layer that gives it. */
void jobreq_merge(const struct jobreq_opts *const layers[], size_t n, struct jobreq_opts *out);

/* Derives total GPUs, nodes, GPUs per node, GPU type and partition. */
void jobreq_resolve(struct jobreq *r);

/*
 * Everything at once, the way the plugin calls it.  script_text may be NULL
 * (no script, or it could not be read).  Returns 0 or -1 with err set.
 */
int jobreq_build(enum jobreq_tool tool, int argc, char *const argv[],
		 const char *script_text, size_t script_len,
		 jobreq_getenv_fn get, void *arg, struct jobreq *r,
		 char *err, size_t errlen);

/* As jobreq_build, with the SPANK option environment of jobreq_parse_argv_spank. */
int jobreq_build_spank(enum jobreq_tool tool, int argc, char *const argv[],
		       char *const spank_env[], const char *script_text, size_t script_len,
		       jobreq_getenv_fn get, void *arg, struct jobreq *r,
		       char *err, size_t errlen);

/*
 * The parts of jobreq_build_spank, for a caller that parsed the command
 * line itself (the plugin needs cmd.first_arg and cmd.wrap_text anyway):
 * cmd is the command line layer, llm_options its --llm-* count.
 */
int jobreq_build_parsed(enum jobreq_tool tool, const struct jobreq_opts *cmd, int llm_options,
			const char *script_text, size_t script_len,
			jobreq_getenv_fn get, void *arg, struct jobreq *r,
			char *err, size_t errlen);

/*
 * As jobreq_build_parsed, with the request as Slurm itself resolved it
 * (slurmopt.h) in place of the command line, environment and script
 * layers; for srun inside an allocation the allocation still fills what
 * the step does not say.  Never fails.
 */
void jobreq_build_resolved(enum jobreq_tool tool, const struct jobreq_opts *resolved,
			   int llm_options, jobreq_getenv_fn get, void *arg, struct jobreq *r);

/*
 * Applies one option given by its long name as Slurm's option table names
 * it ("nodes", "gres", "gpus-per-node", "mem-per-gpu", ...) and its value
 * as slurm_option_get() prints it ("gres:gpu:h100:8", "2-4", "10G").
 * Names this module does not read are ignored.  Returns 0, or -1 with err
 * set for a value it cannot read.
 */
int jobreq_apply_named(struct jobreq_opts *o, const char *name, const char *value,
		       char *err, size_t errlen);

/* The launcher and trainer words a job must contain to be worth reading
 * (jobreq_mentions_launcher), NULL-terminated. */
extern const char *const jobreq_launcher_words[];
/* true when text (len bytes) contains one of jobreq_launcher_words: a
 * cheap substring scan that keeps jobs with nothing to read off the wire. */
bool jobreq_mentions_launcher(const char *text, size_t len);

/* "--mem" values: "64G", "4000", "512M", "1T" -> MB; -1 when malformed. */
long jobreq_parse_mem_mb(const char *s);

#endif
