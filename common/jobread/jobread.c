/*
 * jobread.c - the job reader: job text -> workload with sources.
 *
 * The flow is one way.  The batch script (or srun's command) is evaluated
 * statically (shell.c) with the submission environment and Slurm's output
 * variables as the request resolves them (sbatch(1), OUTPUT ENVIRONMENT
 * VARIABLES); the commands it would run are scanned in order; wrappers and
 * launchers are stripped (launch.c) and the first command a framework
 * reader recognises (fw_*.c) gives the workload.  A shell script the job
 * runs from the submit directory (srun ./entrypoint.sh ARGS) is loaded
 * like a config file, evaluated with ARGS as its positional parameters
 * and the caller's environment, and walked the same way (bounded: 4
 * scripts, 2 deep).  The readers write into
 * a reading context (ctx.c).  Config files come through the caller's
 * provider only (the daemon never opens a user's file); a file the provider
 * does not have yet is listed in out->need so that the client, running as
 * the user, can ship it and ask again.
 *
 * Precedence follows Slurm's own rule for options, command line over
 * #SBATCH: an explicit --llm-* option wins over what the reader found, and
 * a disagreement is a SCRIPT_CONFLICT warning naming both values.  What
 * cannot be known statically is an info finding naming the option that
 * would supply it: never a guess.  A job with no recognised LLM launcher or
 * trainer and no --llm-* option is not an LLM job and gets no findings,
 * unless one of its lines names a launcher the reader did not reach or
 * follow (follow.c, SCRIPT_NOT_FOLLOWED).  A Python program no framework
 * reader knows is read as text (fw_python.c, issue 28): literal evidence
 * of an LLM makes the job one, with only the values read; a program that
 * cannot be read leaves the workload unknown (PROGRAM_NOT_READ).
 *
 * Slurm's side (issue 28): a heterogeneous batch script (#SBATCH hetjob,
 * sbatch(1) HETEROGENEOUS JOB SUPPORT) is judged on all its components'
 * resources, whichever one the caller gave (het_resources; launch.c judges
 * each srun --het-group step against its component).  The batch shell's
 * own rank variables are marked where they are expanded, so that a rank
 * flag the batch shell fills once for every task is seen (launch.c,
 * RANK_EXPANDED_ONCE).  A Ray driver (verl, OpenRLHF, vLLM) in a step of
 * its own joins the cluster the script's "ray start" steps made
 * (ray_world; Ray's ray.init() connects to the running cluster, verl's
 * and vLLM's Slurm examples start it so).
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "follow.h"
#include "words.h"
#include "jobread.h"
#include "jobread/shell/shell.h"
#include "reader.h"
#include "util.h"
#include "wire/jobreq.h"

/* Commands worth trying a framework reader on, per job. */
#define JR_MAX_CANDIDATES 64

/* ---- the walk ------------------------------------------------------------------- */

static void set_var_int(sh_t *sh, const char *name, int v)
{
	char b[24];

	if (v > 0) {
		adv_snprintf(b, sizeof(b), "%d", v);
		sh_setvar(sh, name, b, true, false);
	}
}

/* Slurm's output variables as the job will see them (sbatch(1)).  batch:
 * sh runs the batch script itself (not a script a task runs). */
static void set_slurm_vars(sh_t *sh, const struct jobread_input *in, bool batch)
{
	int nodes = in->res.nodes, gpn = in->res.gpus_per_node, ntasks = in->ntasks;

	if (nodes <= 0 && gpn > 0 && in->res.gpus > 0)
		nodes = (in->res.gpus + gpn - 1) / gpn;
	if (gpn <= 0 && nodes > 0 && in->res.gpus > 0 && in->res.gpus % nodes == 0)
		gpn = in->res.gpus / nodes;
	/* The counts come from the client: a product that does not fit an
	 * int is not a job Slurm would run, and stays unset. */
	if (ntasks <= 0 && in->ntasks_per_node > 0 && nodes > 0 &&
	    (long long)in->ntasks_per_node * nodes <= INT_MAX)
		ntasks = in->ntasks_per_node * nodes;
	if (ntasks <= 0 && nodes > 0)
		ntasks = nodes;   /* sbatch's default: one task per node */
	set_var_int(sh, "SLURM_NNODES", nodes);
	set_var_int(sh, "SLURM_JOB_NUM_NODES", nodes);
	set_var_int(sh, "SLURM_NTASKS", ntasks);
	set_var_int(sh, "SLURM_NPROCS", ntasks);
	set_var_int(sh, "SLURM_NTASKS_PER_NODE",
		    in->ntasks_per_node > 0 ? in->ntasks_per_node
		    : nodes > 0 && ntasks % nodes == 0 ? ntasks / nodes : 0);
	set_var_int(sh, "SLURM_GPUS_ON_NODE", gpn);
	set_var_int(sh, "SLURM_GPUS_PER_NODE", gpn);
	set_var_int(sh, "SLURM_GPUS", in->res.gpus);
	/* -p a,b: Slurm picks one when the job starts (issue 20). */
	bool one_partition = in->res.partition[0] && !strchr(in->res.partition, ',');

	if (one_partition)
		sh_setvar(sh, "SLURM_JOB_PARTITION", in->res.partition, true, false);
	if (in->cwd)
		sh_setvar(sh, "SLURM_SUBMIT_DIR", in->cwd, true, false);
	/* Set in every job but not known at submission: unknown values that
	 * are not empty, so [ -z "$SLURM_JOB_ID" ] is false (sbatch(1),
	 * OUTPUT ENVIRONMENT VARIABLES). */
	static const char *const set_unknown[] = {
		"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NAME", "SLURM_JOB_NODELIST",
		"SLURM_NODELIST", "SLURMD_NODENAME", "SLURM_CLUSTER_NAME", "SLURM_SUBMIT_HOST",
		"SLURM_JOB_USER", "SLURM_JOB_UID", "SLURM_JOB_GID", "SLURM_TASK_PID",
		"SLURM_CPUS_ON_NODE", "SLURM_JOB_CPUS_PER_NODE",
	};

	for (size_t k = 0; k < ADV_ARRAY_SIZE(set_unknown); k++)
		sh_setvar(sh, set_unknown[k], "", true, true);
	if (!one_partition)
		sh_setvar(sh, "SLURM_JOB_PARTITION", "", true, true);
	/* Rank placeholders: every rank runs the same command.  The batch
	 * script runs as task 0 of node 0 of the batch step (sbatch(1),
	 * OUTPUT ENVIRONMENT VARIABLES): there the value is 0, and a word
	 * that holds it is marked (sh_mark_file), since what it gives an
	 * srun on several nodes is the same 0 on each (RANK_EXPANDED_ONCE). */
	static const char *const ranks[] = { "SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID" };

	for (size_t k = 0; k < ADV_ARRAY_SIZE(ranks); k++)
		if (batch)
			sh_setvar_at(sh, ranks[k], "0", true, false, 1, sh_mark_file);
		else
			sh_setvar(sh, ranks[k], "0", true, false);
}

/* The components of the batch script (one for a job that is not
 * heterogeneous), *n of them, malloc'd; NULL when there is no script or it
 * cannot be read so (jobreq_parse_script_het). */
static struct jobreq_opts *het_components(const struct jobread_input *in, int *n)
{
	struct jobreq_opts *comp;
	char err[8];

	*n = 0;
	if (!in->script || !in->script_len)
		return NULL;
	comp = malloc(sizeof(*comp) * JOBREQ_HET_MAX);
	if (comp && jobreq_parse_script_het(in->script, in->script_len, comp, JOBREQ_HET_MAX, n,
					    NULL, err, sizeof(err)) != 0) {
		free(comp);
		return NULL;
	}
	return comp;
}

/*
 * A heterogeneous job's batch shell, as Slurm 22.05.8 set it on the test
 * cluster: SLURM_JOB_NUM_NODES, SLURM_NNODES, SLURM_NTASKS and
 * SLURM_GPUS_ON_NODE describe component 0 (where the script runs), and
 * each component N has SLURM_JOB_NUM_NODES_HET_GROUP_N,
 * SLURM_JOB_NODELIST_HET_GROUP_N, SLURM_GPUS_PER_NODE_HET_GROUP_N,
 * SLURM_NTASKS_HET_GROUP_N and SLURM_NTASKS_PER_NODE_HET_GROUP_N (when
 * given), each also spelled _PACK_GROUP_N, and SLURM_HET_SIZE the count.
 */
static void het_vars(sh_t *sh, const struct jobread_input *in)
{
	static const char *const spell[] = { "HET", "PACK" };
	struct jobreq_opts *comp;
	char name[64];
	int n = 0;

	if (!(comp = het_components(in, &n)))
		return;
	if (n < 2) {
		free(comp);
		return;
	}
	set_var_int(sh, "SLURM_HET_SIZE", n);
	for (int i = 0; i < n && i < JOBREQ_HET_MAX; i++) {
		struct jobreq r;
		int nodes, tasks;

		memset(&r, 0, sizeof(r));
		r.opt = comp[i];
		jobreq_resolve(&r);
		nodes = r.nodes > 0 ? r.nodes : 1;
		tasks = comp[i].ntasks > 0 ? comp[i].ntasks
		      : comp[i].ntasks_per_node > 0 && (long long)comp[i].ntasks_per_node * nodes <= INT_MAX
		      ? comp[i].ntasks_per_node * nodes : nodes;
		if (i == 0) {
			set_var_int(sh, "SLURM_NNODES", nodes);
			set_var_int(sh, "SLURM_JOB_NUM_NODES", nodes);
			set_var_int(sh, "SLURM_NTASKS", tasks);
			set_var_int(sh, "SLURM_NPROCS", tasks);
			set_var_int(sh, "SLURM_GPUS_ON_NODE", r.gpus_per_node);
			set_var_int(sh, "SLURM_GPUS_PER_NODE", r.gpus_per_node);
		}
		for (size_t s = 0; s < ADV_ARRAY_SIZE(spell); s++) {
			adv_snprintf(name, sizeof(name), "SLURM_JOB_NUM_NODES_%s_GROUP_%d", spell[s], i);
			set_var_int(sh, name, nodes);
			adv_snprintf(name, sizeof(name), "SLURM_NTASKS_%s_GROUP_%d", spell[s], i);
			set_var_int(sh, name, tasks);
			adv_snprintf(name, sizeof(name), "SLURM_NTASKS_PER_NODE_%s_GROUP_%d", spell[s], i);
			set_var_int(sh, name, comp[i].ntasks_per_node);
			adv_snprintf(name, sizeof(name), "SLURM_GPUS_PER_NODE_%s_GROUP_%d", spell[s], i);
			set_var_int(sh, name, r.gpus_per_node);
			adv_snprintf(name, sizeof(name), "SLURM_JOB_NODELIST_%s_GROUP_%d", spell[s], i);
			sh_setvar(sh, name, "", true, true);
		}
	}
	free(comp);
}

static void set_env(sh_t *sh, const struct jobread_input *in)
{
	char name[256];

	for (char *const *e = in->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) : 0;

		if (!eq || n == 0 || n >= sizeof(name))
			continue;
		memcpy(name, *e, n);
		name[n] = '\0';
		sh_setvar(sh, name, eq + 1, true, false);
	}
	/* The batch script runs in the submit directory (sbatch(1), --chdir). */
	if (in->cwd && in->cwd[0] == '/') {
		sh_set_cwd(sh, in->cwd);
		sh_setvar(sh, "PWD", in->cwd, true, false);
	}
}

/*
 * $0 of a batch script.  slurmd writes the script it was sent to its
 * spool directory and bash runs that copy: $0 (and BASH_SOURCE) is
 * SlurmdSpoolDir/jobNNNNN/slurm_script (slurmd's _make_batch_script), not
 * the file the user submitted.  So $(dirname "$0") is not the directory
 * of the script, and it is not the submit directory either: resolving it
 * to either would make the reader open a file the job will not find.  It
 * stays unknown (set, not empty), its last part "slurm_script" known; a
 * path built from it is unknown, and the evaluator notes it.
 */
#define JR_SLURM_ARG0 "$(SlurmdSpoolDir)/job${SLURM_JOB_ID}/slurm_script"

/* A cheap filter: only commands that mention a launcher or an
 * interpreter are worth a framework reader's time.  Wrappers (time nohup
 * stdbuf taskset uv run ...) come first: look a little further than the
 * program word. */
static bool candidate(const struct sh_cmd *c)
{
	return jr_words_in_argv(c->argv, c->argc, 0, 32, JR_WORD_TRY);
}

/* A launcher or trainer word among the command's arguments (not the
 * program itself): a wrapper script it starts is part of the launch, and
 * one that cannot be followed is said. */
static bool launch_word(const struct sh_cmd *c)
{
	return jr_words_in_argv(c->argv, c->argc, 1, 64, JR_WORD_ARG);
}

/* An ML launcher or trainer named in the command: a launch of it that was
 * not followed still makes an LLM job, so that what was said is shown
 * (a plain MPI or CUDA job passes silently). */
static bool ml_word(const struct sh_cmd *c)
{
	return jr_words_in_argv(c->argv, c->argc, 0, 64, JR_WORD_ML);
}

typedef bool (*jr_fw_fn)(struct jr_ctx *, const struct jr_cmd *, bool);

/* Most specific first: the flag-based readers (Megatron by its flags, HF
 * by --model_name_or_path) would also claim the others' scripts. */
static const jr_fw_fn jr_trainers[] = {
	jr_fw_nemo, jr_fw_torchtitan, jr_fw_nanotron, jr_fw_neox, jr_fw_torchtune,
	jr_fw_axolotl, jr_fw_llamafactory, jr_fw_openrlhf, jr_fw_olmo, jr_fw_levanter,
	jr_fw_llamacookbook, jr_fw_llmc, jr_fw_lighteval, jr_fw_lmeval, jr_fw_verl, jr_fw_vllm,
	jr_fw_sglang, jr_fw_server, jr_fw_megatron, jr_fw_hf,
};

/* try_command's answers. */
enum { TRY_NONE = -1, TRY_LAUNCHER = 0, TRY_TRAINER = 1, TRY_SCRIPT = 2 };

/* The placeholder of a wrapper's argument whose value is unknown: the
 * positional parameters keep no unknown mark, so the word is found again
 * by its text. */
#define JR_ARG_VAR "__ADVISOR_ARG_"

/*
 * Tries one command.  Returns TRY_TRAINER when a trainer read it,
 * TRY_LAUNCHER when only an ML launcher was recognised, TRY_SCRIPT when the
 * program is a shell script (*prog and *at say which word), TRY_NONE when
 * nothing was (the values it set are then undone by the caller).
 */
/* The trainers on a stripped command. */
static int try_trainers(struct jr_ctx *cx, struct jobread_out *out, const struct jr_cmd *prog,
			bool is_module, bool was_llm)
{
	if (prog->argc >= 1 && prog->argv)
		for (size_t k = 0; k < ADV_ARRAY_SIZE(jr_trainers); k++)
			if (jr_trainers[k](cx, prog, is_module)) {
				out->is_llm = true;
				/* An HF or TRL script of the job's own: its
				 * flags read, the program for the rest. */
				if (!is_module && (!strcmp(out->trainer, "hf") || !strcmp(out->trainer, "trl")))
					jr_py_supplement(cx, prog);
				return TRY_TRAINER;
			}
	/* A program of the job's own that no framework reader knows: read
	 * as text (fw_python.c).  One read and found to hold no LLM explains
	 * the launch: it is no LLM job's, whatever launcher starts it. */
	switch (prog->argc >= 1 && prog->argv ? jr_py_program(cx, prog, is_module) : JR_PY_NONE) {
	case JR_PY_LLM:
		out->is_llm = true;
		return TRY_TRAINER;
	case JR_PY_NOT_LLM:
	case JR_PY_WEAK:   /* kept aside: a later command may be the workload */
		out->is_llm = was_llm;
		return TRY_NONE;
	default:
		break;
	}
	{
		bool ml = out->is_llm;

		out->is_llm = was_llm || ml;
		return ml ? TRY_LAUNCHER : TRY_NONE;
	}
}

static int try_command(struct jr_ctx *cx, const sh_t *sh, struct jobread_out *out,
		       const struct sh_cmd *c, const bool *unknown, struct jr_cmd *prog, int *at)
{
	/* The marks of the batch shell's rank variables (set_slurm_vars)
	 * hold for its own commands only: an inner shell (srun bash -c
	 * '...') expands them again in each task. */
	struct jr_cmd cmd = { c->file, c->line, c->argc, c->argv, unknown, c->word_line,
			      c->word_file, c, sh, c->inner ? NULL : c->marked };
	bool is_module = false, was_llm = out->is_llm;

	out->is_llm = false;
	*at = -1;
	if (jr_launch_strip(cx, &cmd, prog, &is_module) && prog->argc >= 1 && !is_module) {
		*at = jr_launch_script(prog);
		if (*at >= 0) {
			out->is_llm = was_llm || out->is_llm;
			return TRY_SCRIPT;
		}
	}
	return try_trainers(cx, out, prog, is_module, was_llm);
}

/* Wrapper scripts followed per job, and how deep one may start another
 * (srun ./entrypoint.sh -> exec ./inner.sh -> torchrun): each is a file
 * the client ships, within JOBREAD_MAX_FILES. */
#define JR_MAX_WRAPPERS 4
#define JR_WRAP_DEPTH 2

static int walk(struct jr_ctx *cx, sh_t *sh, struct jobread_out *out, int depth, int *n_wrap);

/* Names the script refers to ($NAME, ${NAME...}) that the caller has set:
 * the wrapper runs as a child process and sees the caller's environment
 * (srun's default --export=ALL passes the batch script's).  Bounded by
 * the text (each name at most once is not needed: a repeat sets the same
 * value). */
static void inherit_vars(sh_t *sub, const sh_t *parent, const char *text, size_t len)
{
	char name[128];
	int set = 0;

	for (size_t i = 0; i + 1 < len && set < 512; i++) {
		size_t k = i + 1, n = 0;
		const char *v;
		bool unk = false;

		if (text[i] != '$')
			continue;
		if (text[k] == '{')
			k++;
		while (k < len && n + 1 < sizeof(name) &&
		       ((text[k] >= 'A' && text[k] <= 'Z') || (text[k] >= 'a' && text[k] <= 'z') ||
			text[k] == '_' || (n > 0 && text[k] >= '0' && text[k] <= '9')))
			name[n++] = text[k++];
		name[n] = '\0';
		if (!n || !strncmp(name, JR_ARG_VAR, strlen(JR_ARG_VAR)))
			continue;
		v = sh_getvar(parent, name, &unk);
		if (v && sh_getvar(sub, name, NULL) == NULL) {
			sh_setvar(sub, name, v, true, unk);
			set++;
		}
	}
}

/* "NAME=value" words of the command before the script (env NAME=value,
 * srun's prefix assignments): the script's environment. */
static void command_env(sh_t *sub, const struct sh_cmd *c, int upto)
{
	char name[128];

	for (int k = 0; c->assign && k < c->n_assign; k++) {
		const char *eq = strchr(c->assign[k], '=');

		if (eq && (size_t)(eq - c->assign[k]) < sizeof(name)) {
			memcpy(name, c->assign[k], (size_t)(eq - c->assign[k]));
			name[eq - c->assign[k]] = '\0';
			sh_setvar(sub, name, eq + 1, true, false);
		}
	}
	for (int k = 1; k < upto && k < c->argc; k++) {
		const char *w = c->argv[k], *eq = strchr(w, '=');
		size_t n = eq ? (size_t)(eq - w) : 0;
		bool ok = n > 0 && n < sizeof(name) && !(w[0] >= '0' && w[0] <= '9');

		for (size_t q = 0; ok && q < n; q++)
			ok = (w[q] >= 'A' && w[q] <= 'Z') || (w[q] >= 'a' && w[q] <= 'z') ||
			     (w[q] >= '0' && w[q] <= '9') || w[q] == '_';
		if (ok) {
			memcpy(name, w, n);
			name[n] = '\0';
			sh_setvar(sub, name, eq + 1, true, c->unknown && c->unknown[k]);
		}
	}
}

/*
 * Follows a shell script the job runs (word `at` of prog, from command c):
 * loads it through the provider (a file the client ships, like a config
 * file), evaluates it with its arguments as the positional parameters and
 * the caller's environment, and walks the commands it would run.  Returns
 * walk()'s answer, TRY_NONE when it was not followed (then said, unless
 * the file is only being asked for).
 */
static int follow_script(struct jr_ctx *cx, sh_t *sh, struct jobread_out *out, const struct sh_cmd *c,
			 const struct jr_cmd *prog, int at, bool launched, int depth, int *n_wrap,
			 bool *read)
{
	const char *path = prog->argv[at];
	const char *display = path[0] == '.' && path[1] == '/' ? path + 2 : path;
	const char *text;
	char *buf = NULL;
	size_t len, cap, o;
	int n_need = out->n_need, nargs = prog->argc - at - 1, rc = TRY_NONE;
	struct jobread_src s;
	sh_t *sub = NULL;
	const struct sh_vfile *vf;

	jr_src_word(&s, prog, at, "", JR_STYLE_FLAG);
	if (depth >= JR_WRAP_DEPTH || *n_wrap >= JR_MAX_WRAPPERS) {
		if (launched)
			jr_note(cx, ADV_CODE_SCRIPT_NOT_FOLLOWED, NULL,
				"%s:%d: %s was not followed: the reader follows at most %d wrapper "
				"scripts, %d deep; give the job's values with the --llm-* options",
				s.file, s.line, display, JR_MAX_WRAPPERS, JR_WRAP_DEPTH);
		return TRY_NONE;
	}
	text = jr_load_text(cx, path, &len);
	if (!text) {
		if (out->n_need == n_need && launched)
			jr_note(cx, ADV_CODE_SCRIPT_NOT_FOLLOWED, NULL,
				"%s:%d: %s could not be read (missing, not shipped, or over the reader's "
				"budget), so the launch it makes was not followed; give the job's values "
				"with the --llm-* options", s.file, s.line, display);
		return TRY_NONE;
	}
	(*n_wrap)++;
	*read = true;
	/* "set -- ARGS; " before the script's first line keeps its lines. */
	cap = len + 16 + (size_t)(nargs > 0 ? nargs : 0) * (sizeof(JR_ARG_VAR) + 16);
	if (nargs > 4096 || cap > JOBREAD_MAX_BYTES + 4096 * 64)
		return TRY_NONE;
	buf = malloc(cap);
	sub = buf ? sh_create(NULL) : NULL;
	if (!sub) {
		free(buf);
		return TRY_NONE;
	}
	set_env(sub, jr_input(cx));
	set_slurm_vars(sub, jr_input(cx), false);
	het_vars(sub, jr_input(cx));
	inherit_vars(sub, sh, text, len);
	command_env(sub, c, (int)(prog->argv - c->argv) + at);
	o = (size_t)adv_snprintf(buf, cap, "set --");
	for (int k = 0; k < nargs; k++) {
		char name[sizeof(JR_ARG_VAR) + 12];
		bool unk = prog->unknown && prog->unknown[at + 1 + k];

		adv_snprintf(name, sizeof(name), JR_ARG_VAR "%d", k + 1);
		sh_setvar_at(sub, name, unk ? "" : prog->argv[at + 1 + k], false, unk,
			     prog->word_line ? prog->word_line[at + 1 + k] : prog->line,
			     prog->word_file ? prog->word_file[at + 1 + k] : prog->file);
		o += (size_t)adv_snprintf(buf + o, cap - o, " \"${%s}\"", name);
	}
	o += (size_t)adv_snprintf(buf + o, cap - o, "; ");
	memcpy(buf + o, text, len);
	/* A driver script the job wrote (cat > run.sh <<EOF, printf, echo):
	 * its values name the lines of the script that wrote them. */
	vf = sh_vfile_find(sh, path);
	if (vf && (vf->text != text || vf->len != len))
		vf = NULL;
	o += len;
	if (sh_run_vfile(sub, display, buf, o, o - len, vf, jr_ctx_open, cx) != SH_OK)
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
			"%s was read only in part (the reader's bounds); what comes after is not judged",
			display);
	rc = walk(cx, sub, out, depth + 1, n_wrap);
	sh_destroy(sub);
	free(buf);
	return rc;
}

/* The words of c that hold a wrapper's unknown argument (by its
 * placeholder), added to c's own unknown marks; NULL when none does. */
static bool *arg_unknowns(const struct sh_cmd *c)
{
	bool *u = NULL;

	for (int k = 0; k < c->argc; k++) {
		if (!strstr(c->argv[k], "${" JR_ARG_VAR))
			continue;
		if (!u) {
			u = calloc((size_t)c->argc, sizeof(*u));
			if (!u)
				return NULL;
			for (int q = 0; c->unknown && q < c->argc; q++)
				u[q] = c->unknown[q];
		}
		u[k] = true;
	}
	return u;
}

/*
 * One command of the walk: an inner command ("srun ... bash -c STRING")
 * runs in the Slurm step of the outer one, unless it names its own; then
 * the readers try it, with unk (when not NULL) as its unknown marks.
 */
/* The Slurm step of an outer command, for the inner commands it runs. */
struct walk_step {
	int nodes, gpus, het_group;
	struct jobread_src src;
};

static int walk_try(struct jr_ctx *cx, const sh_t *sh, struct jobread_out *out,
		    const struct sh_cmd *c, const bool *unk, const struct walk_step *step,
		    struct jr_cmd *prog, int *at)
{
	if (c->inner && step->nodes && !out->step_nodes) {
		out->step_nodes = step->nodes;
		out->step_gpus = step->gpus;
		out->het_group = step->het_group;
		out->step_src = step->src;
	}
	memset(prog, 0, sizeof(*prog));
	return try_command(cx, sh, out, c, unk ? unk : c->unknown, prog, at);
}

/* ---- a Ray cluster over several Slurm steps ------------------------------------------ */

/* Ray programs connect to the cluster "ray start" made (ray.init()
 * finds it): verl's trainers, OpenRLHF's, and vLLM, whose executor is Ray
 * once the world passes one node (vllm/config.py ParallelConfig,
 * distributed_executor_backend) and which joins a running cluster. */
static const char *const ray_drivers[] = { "verl", "openrlhf", "vllm" };

/* Where a step of "srun ... ray start" runs.  nodes: -N's value (0 when
 * srun has no -N: every node of the job, -1 when not known); excl: -x. */
struct ray_step {
	long long nodes;
	bool excl, listed;
};

/* srun's options among words [0, end) of c (after "srun"). */
static void ray_srun_opts(const struct sh_cmd *c, int from, int end, struct ray_step *st)
{
	st->nodes = 0;
	st->excl = st->listed = false;
	for (int i = from; i < end; i++) {
		const char *w = c->argv[i], *v = NULL;
		bool unk = false;

		if (!strcmp(w, "-N") || !strcmp(w, "--nodes")) {
			if (i + 1 < end) {
				v = c->argv[i + 1];
				unk = c->unknown && c->unknown[i + 1];
			}
		} else if (!strncmp(w, "--nodes=", 8)) {
			v = w + 8;
			unk = c->unknown && c->unknown[i];
		} else if (!strncmp(w, "-N", 2) && w[2]) {
			v = w + 2;
			unk = c->unknown && c->unknown[i];
		} else if (!strcmp(w, "-x") || !strncmp(w, "--exclude", 9) || !strncmp(w, "-x", 2)) {
			st->excl = true;
		} else if (!strcmp(w, "-w") || !strncmp(w, "--nodelist", 10) || !strncmp(w, "-w", 2)) {
			st->listed = true;
		}
		if (v) {
			long long n;

			st->nodes = !unk && jr_parse_ll(v, &n) && n > 0 ? n : -1;
		}
	}
}

/*
 * The nodes of the Ray cluster the script starts with "ray start" in
 * Slurm steps (the head in one srun, the workers in another: verl's and
 * vLLM's Slurm examples): 0 when it has every node of the job, n > 0 when
 * it is known to have n, -1 when the script starts one whose size is not
 * known, -2 when it starts none.  The steps' nodes are summed where they
 * are surely apart (each worker step excludes the head with -x, or the
 * head is one named node and the workers the rest); otherwise only a step
 * that spans the whole job says anything.
 */
static long long ray_cluster_nodes(sh_t *sh, long long job)
{
	const struct sh_cmd *outer = NULL;
	long long sum = 0;
	int steps = 0;
	bool unknown = false, whole = false, apart = true;

	for (const struct sh_cmd *c = sh_commands(sh); c && steps < 64; c = c->next) {
		const struct sh_cmd *s = c;
		struct ray_step st;
		int k, i, end;

		if (!c->inner)
			outer = c;
		for (k = 0; k + 1 < c->argc; k++)
			if (!strcmp(jr_basename(c->argv[k]), "ray") && !strcmp(c->argv[k + 1], "start"))
				break;
		if (k + 1 >= c->argc)
			continue;
		steps++;
		/* The srun that runs it: on this command's line, or the outer
		 * command of an inner one (srun bash -c "ray start ..."). */
		end = k;
		if (c->inner && outer && outer != c) {
			s = outer;
			end = outer->argc;
		}
		for (i = 0; i < end && strcmp(jr_basename(s->argv[i]), "srun"); i++)
			;
		if (i >= end) {
			/* Started by the batch shell itself: the batch node. */
			sum += 1;
			continue;
		}
		ray_srun_opts(s, i + 1, end, &st);
		if (st.nodes == 0 && !st.listed && !st.excl)
			whole = true;
		else if (st.nodes <= 0)
			unknown = true;
		else {
			sum += st.nodes;
			/* A worker step that excludes, or a step of one named node. */
			if (!st.excl && !(st.listed && st.nodes == 1))
				apart = false;
		}
	}
	if (steps == 0)
		return -2;
	if (whole)
		return 0;
	if (unknown)
		return -1;
	if (steps == 1 || apart)
		return job > 0 && sum >= job ? 0 : sum;
	return -1;
}

/*
 * A Ray driver's launch, read in a Slurm step on part of the job (srun -N1
 * -w $head python -m verl...), runs on the Ray cluster the script started
 * in other steps: its world is that cluster's nodes, not its own step's.
 */
static void ray_world(struct jr_ctx *cx, sh_t *sh, struct jobread_out *out)
{
	const struct jobread_input *in = jr_input(cx);
	long long job = out->het_nodes > 0 ? out->het_nodes : in->res.nodes;
	bool driver = false;
	long long n;

	for (size_t k = 0; k < ADV_ARRAY_SIZE(ray_drivers); k++)
		if (!strcmp(out->trainer, ray_drivers[k]))
			driver = true;
	if (!driver || out->step_nodes == 0)
		return;
	n = ray_cluster_nodes(sh, job);
	if (n == -2)
		return;
	jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
		"%s:%d: %s runs in a Slurm step of its own but connects to the Ray cluster the script "
		"starts with \"ray start\" in other steps: its world is that cluster (%s)",
		out->step_src.file, out->step_src.line, out->trainer,
		n == 0 ? "every node of the job"
		: n < 0 ? "nodes not known before the job runs, so they are not compared"
		: "the nodes of those steps");
	/* srun's own -N is the driver's step, not the nodes its world spans. */
	if (out->v[JR_NODES].set && out->v[JR_NODES].src.line == out->step_src.line &&
	    !strcmp(out->v[JR_NODES].src.file, out->step_src.file) &&
	    !strcmp(out->v[JR_NODES].src.key, out->step_src.key))
		memset(&out->v[JR_NODES], 0, sizeof(out->v[JR_NODES]));
	out->step_nodes = n == 0 ? 0 : n > 0 && n <= INT_MAX ? (int)n : -1;
	out->step_gpus = 0;
	out->het_group = 0;
}

/*
 * Walks the commands sh recorded, in order, until a trainer reads one.
 * Returns TRY_TRAINER then, TRY_LAUNCHER when an ML launcher was kept,
 * TRY_NONE otherwise.
 */
static int walk(struct jr_ctx *cx, sh_t *sh, struct jobread_out *out, int depth, int *n_wrap)
{
	struct jobread_out *save = malloc(sizeof(*save));
	int tried = 0, best = TRY_NONE;
	/* The Slurm step of the last command that is not an inner one: the
	 * commands of its "srun ... bash -c STRING" run in that step. */
	struct walk_step step;
	/* The first launcher kept without a trainer, and what was found
	 * before it: a trainer read later in another Slurm step is judged
	 * on its own, not merged with that launcher's counts. */
	struct jobread_out *before_launcher = NULL;
	const struct sh_cmd *launcher_cmd = NULL, *launcher_outer = NULL, *outer = NULL;
	int launcher_step = 0;

	if (!save)
		return TRY_NONE;
	memset(&step, 0, sizeof(step));
	/* Two passes: the commands the job surely runs first, then those under
	 * a condition the reader cannot decide (a helper server started only
	 * when a config file says so must not be taken for the launch). */
	for (int pass = 0; pass < 2 && best != TRY_TRAINER; pass++)
	for (const struct sh_cmd *c = sh_commands(sh); c && tried < JR_MAX_CANDIDATES; c = c->next) {
		struct jr_cmd prog;
		bool *unk, said;
		int rc, at;

		if (!c->inner) {
			step.nodes = 0;
			outer = c;
		}
		if (c->argc < 1 || !candidate(c) || c->uncertain != (pass == 1))
			continue;
		tried++;
		memcpy(save, out, sizeof(*save));
		unk = depth > 0 ? arg_unknowns(c) : NULL;
		rc = walk_try(cx, sh, out, c, unk, &step, &prog, &at);
		if (!c->inner) {
			bool own = out->step_nodes != save->step_nodes;

			step.nodes = own ? out->step_nodes : 0;
			step.gpus = own ? out->step_gpus : 0;
			step.het_group = own ? out->het_group : 0;
			step.src = out->step_src;
		}
		/* What is said of a launch that was not followed stays. */
		said = launch_word(c);
		if (rc == TRY_SCRIPT) {
			int n_notes = out->n_notes;
			bool read = false;

			said = said || prog.argv != c->argv;
			rc = follow_script(cx, sh, out, c, &prog, at, said, depth, n_wrap, &read);
			if (rc == TRY_NONE && !read &&
			    try_trainers(cx, out, &prog, false, out->is_llm) == TRY_TRAINER) {
				/* A script a trainer knows by name (torchtitan's
				 * run_train.sh), read from its arguments and the
				 * environment when the file itself is not here. */
				out->n_notes = n_notes;
				rc = TRY_TRAINER;
			}
		}
		free(unk);
		if (rc == TRY_TRAINER && at < 0 && launcher_cmd && before_launcher &&
		    outer != launcher_outer && (launcher_step || out->step_nodes != launcher_step)) {
			/* Two Slurm steps: the launcher kept earlier runs on its own
			 * part of the job and starts a program no reader knows; this
			 * one is read alone, and that step is said. */
			int n_need = out->n_need;

			memcpy(before_launcher->need, out->need, sizeof(out->need));
			before_launcher->n_need = n_need;
			memcpy(out, before_launcher, sizeof(*out));
			unk = depth > 0 ? arg_unknowns(c) : NULL;
			rc = walk_try(cx, sh, out, c, unk, &step, &prog, &at);
			free(unk);
			jr_note(cx, ADV_CODE_SCRIPT_NOT_FOLLOWED, NULL,
				"%s:%d: the launch there runs in another Slurm step and starts a program "
				"the reader does not know, so that step is not judged; the job is judged "
				"on the step at %s:%d", launcher_cmd->file, launcher_cmd->line, c->file,
				c->line);
		}
		if (rc == TRY_TRAINER) {
			best = rc;
			ray_world(cx, sh, out);
			if (c->uncertain && !out->launch_uncertain) {
				out->launch_uncertain = true;
				jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
					"%s:%d: the launch read here runs only under a condition not known "
					"before the job runs, so what it states is judged as assumed",
					c->file, c->line);
			}
			break;
		}
		if (rc == TRY_LAUNCHER) {
			best = rc;
			if (!launcher_cmd && (before_launcher ||
					      (before_launcher = malloc(sizeof(*before_launcher))))) {
				memcpy(before_launcher, save, sizeof(*save));
				launcher_cmd = c;
				launcher_outer = outer;
				launcher_step = out->step_nodes;
			}
		}
		if (rc == TRY_NONE) {
			/* Keep what was asked for (a later round ships it), and
			 * what was said of a launch not followed. */
			int n_need = out->n_need, n_notes = out->n_notes;
			bool noted = said && n_notes > save->n_notes;

			memcpy(save->need, out->need, sizeof(save->need));
			save->n_need = n_need;
			if (noted) {
				memcpy(save->notes, out->notes, sizeof(save->notes));
				save->n_notes = n_notes;
			}
			/* srun broken by a split host list starts nothing the
			 * reader knows, and is said all the same. */
			if (out->split_list.message[0] && !save->split_list.message[0]) {
				save->split_list = out->split_list;
				save->split_uncertain = c->uncertain;
			}
			memcpy(out, save, sizeof(*save));
			if (noted && ml_word(c))
				out->is_llm = true;
		}
	}
	free(before_launcher);
	free(save);
	return best;
}

static void shell_notes(struct jr_ctx *cx, sh_t *sh, int rc)
{
	size_t n = 0;
	const char *const *notes = sh_notes(sh, &n);

	const char *file;
	int line;
	bool nested;

	if (rc != SH_OK)
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
			"the script was read only in part (%s); what comes after is not judged",
			sh_strerror(rc));
	/* bash reads a file command by command: at a syntax error it stops
	 * that file (a sourced one fails, the script goes on; the script
	 * itself exits), so what follows is what the job never runs. */
	if (sh_syntax_error(sh, &file, &line, &nested))
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "replace the placeholder with a value",
			nested ? "%s line %d: bash refuses this line (a redirection with no file, "
				 "as a <placeholder> left in) and stops reading the file there: what "
				 "it sets after this line is not set when the job runs"
			       : "%s line %d: bash refuses this line (a redirection with no file, "
				 "as a <placeholder> left in) and the job ends there when it runs: "
				 "what follows is not judged", file, line);
	(void)notes;   /* the evaluator's own notes are for debugging, not users */
}

/*
 * A job whose launch is a variable the script never sets (srun $TRAIN_CMD,
 * bash -c "$CMD"): its command comes from the environment sbatch passes
 * (sbatch --export=ALL,TRAIN_CMD=...), which the reader does not see.  It
 * may be an LLM job: its workload is not known, and that is said, naming
 * the variable, instead of passing it as "not an LLM job".
 */
static void unset_commands(struct jr_ctx *cx, const sh_t *sh, struct jobread_out *out)
{
	const char *file = NULL, *name = NULL;
	int line = 0, more = 0;
	char fix[ADV_MSG_MAX / 2];

	if (out->is_llm || !sh_unset_command(sh, 0, &file, &line, &name))
		return;
	while (sh_unset_command(sh, more + 1, NULL, NULL, NULL))
		more++;
	adv_snprintf(fix, sizeof(fix), "set %s in the script, or give the workload with "
		     "--llm-model=NAME --llm-layout=LIST", name);
	jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, fix,
		"%s:%d: the job's command is the value of $%s, which the script never sets: it "
		"comes from the environment the job is submitted with, so what the job runs "
		"(and whether it is an LLM job) is not known and not checked%s",
		file ? file : "script", line, name, more ? " (more such commands follow)" : "");
	out->is_llm = true;
}

/* The resources of a heterogeneous batch script, all components together
 * (jobtypes.h, het_nodes), and whether the script asks for GPUs at all. */
static void het_resources(const struct jobread_input *in, struct jobread_out *out)
{
	struct jobreq_opts *comp;
	struct jobreq u;
	int n = 0;

	if (!(comp = het_components(in, &n)))
		return;
	if (n > 1) {
		jobreq_het_union(comp, n < JOBREQ_HET_MAX ? n : JOBREQ_HET_MAX, &u);
		out->het_nodes = u.nodes;
		out->het_gpus = u.gpus;
		out->het_gpn = u.gpus_per_node;
	}
	/* No GPU in the script nor in what the caller resolved (command line,
	 * environment): what the job holds depends on the partition. */
	out->no_gpu_asked = in->res.gpus <= 0 && in->res.gpus_per_node <= 0;
	for (int i = 0; i < n && i < JOBREQ_HET_MAX; i++)
		if (comp[i].gpus || comp[i].gpus_per_node || comp[i].gpus_per_task || comp[i].gres_gpus)
			out->no_gpu_asked = false;
	out->whole_nodes = comp[0].exclusive == 1;
	free(comp);
}

static void out_init(struct jobread_out *out)
{
	memset(out, 0, sizeof(*out));
}

/* srun's command, quoted back into one line for the evaluator. */
static char *command_text(const struct jobread_input *in, size_t *len)
{
	size_t cap = 1, o = 0;
	char *buf;

	for (int i = 0; i < in->argc; i++)
		cap += strlen(in->argv[i]) * 4 + 3;
	if (cap > JOBREAD_MAX_BYTES)
		return NULL;
	buf = malloc(cap);
	if (!buf)
		return NULL;
	for (int i = 0; i < in->argc; i++) {
		buf[o++] = i ? ' ' : '\0';
		if (!i)
			o = 0;
		buf[o++] = '\'';
		for (const char *p = in->argv[i]; *p; p++) {
			if (*p == '\'') {
				memcpy(buf + o, "'\\''", 4);
				o += 4;
			} else {
				buf[o++] = *p;
			}
		}
		buf[o++] = '\'';
	}
	buf[o] = '\0';
	*len = o;
	return buf;
}

void jobread_read(const catalog_t *cat, const struct jobread_input *in, struct jobread_out *out)
{
	struct jr_ctx *cx = NULL;
	sh_t *sh = NULL;
	char *cmdline = NULL;
	const char *text = in->script;
	size_t len = in->script_len;
	const char *name = in->script_name && in->script_name[0] ? in->script_name : "script";
	int rc;

	out_init(out);
	het_resources(in, out);
	sh = sh_create(NULL);
	if (!sh)
		goto done;
	cx = jr_ctx_new(cat, in, out, sh);
	if (!cx)
		goto done;
	set_env(sh, in);
	set_slurm_vars(sh, in, in->script != NULL);
	het_vars(sh, in);
	if (!text && in->argc > 0) {
		cmdline = command_text(in, &len);
		text = cmdline;
		name = JR_CMDLINE_FILE;
	} else if (text) {
		/* The script's own arguments (sbatch's words after the script
		 * name): $1.., $#, "$@". */
		sh_set_args(sh, JR_SLURM_ARG0, true, in->argc, in->argv);
		sh_setvar(sh, "BASH_SOURCE", JR_SLURM_ARG0, false, true);
	}
	if (!text)
		goto done;
	rc = sh_run(sh, name, text, len, jr_ctx_open, cx);
	shell_notes(cx, sh, rc);
	{
		int n_wrap = 0;

		walk(cx, sh, out, 0, &n_wrap);
	}
	/* Never pass an LLM job silently: a launcher on a line the walk
	 * did not reach or follow is said (follow.c). */
	follow_scan(cx, sh, name, text, len, rc, out);
	/* A program not read leaves the workload unknown, never "not an LLM
	 * job"; one read without an LLM says why the job is not one. */
	jr_program_finish(cx);
	follow_gate(text, len, out);
	/* A launch from a variable the script never sets: said, after the
	 * gate (its command is unknown, not evidence-free). */
	unset_commands(cx, sh, out);
done:
	jr_ctx_free(cx);
	if (sh)
		sh_destroy(sh);
	free(cmdline);
}
