/*
 * ctx.h - the reading context (ctx.c): what the launcher and framework
 * readers (argscan.c, launch.c, hfconfig.c, fw/fw_*.c) write what they
 * find into, and the files they read through.
 *
 * A reader sets the values it finds with jr_set_*(), each with its source.
 * Values are set in precedence order: a reader reads config files first
 * and command-line overrides last, and the last jr_set of a field wins.
 * Config files are loaded through jr_load(), which resolves the path
 * against the submit directory, serves files the script wrote with a
 * here-document, goes through the provider (the daemon never opens a
 * user's file), caches, and turns a parse error into a SCRIPT_CONFIG_ERROR
 * note with file:line:col.
 *
 * struct jr_ctx is opaque: only ctx.c sees inside it.  The orchestrator
 * (jobread.c) makes one per job with jr_ctx_new().
 */
#ifndef ADVISOR_JOBREAD_CTX_H
#define ADVISOR_JOBREAD_CTX_H

#include <stdbool.h>
#include <stddef.h>

#include "config/catalog.h"
#include "engine/codes.h"
#include "jobread/cfg/cfg.h"
#include "jobtypes.h"

struct jr_ctx;
struct sh;
struct sh_cmd;

/* One command: argv[0..argc) are the program and its arguments. */
struct jr_cmd {
	const char *file;         /* where it is written */
	int line;
	int argc;
	char *const *argv;
	const bool *unknown;      /* per argument: value not known statically (may be NULL) */
	const int *word_line;     /* per argument: line it was written on (may be NULL) */
	const char *const *word_file;  /* per argument: file it was written in (may be NULL) */
	/* The recorded command this one is part of (its prefix assignments,
	 * the wrappers' words before the program) and the evaluator that
	 * recorded it (the exported variables): the program's environment,
	 * jr_cmd_env.  Both may be NULL. */
	const struct sh_cmd *rec;
	const struct sh *sh;
	/* per argument: holds the batch shell's own rank variable
	 * ($SLURM_NODEID, $SLURM_PROCID, $SLURM_LOCALID) expanded once,
	 * before srun starts its tasks (may be NULL: none, or a command of
	 * an inner shell, which each task runs itself) */
	const bool *batch_rank;
};

/* ---- for the orchestrator (jobread.c) -------------------------------------- */

/* A context for reading one job into out (which the caller has cleared).
 * sh is the evaluator that ran the script: jr_load serves the files it
 * wrote with a here-document (may be NULL).  NULL when out of memory. */
struct jr_ctx *jr_ctx_new(const catalog_t *cat, const struct jobread_input *in,
			  struct jobread_out *out, const struct sh *sh);
/* Frees the context and the trees jr_load parsed.  cx may be NULL. */
void jr_ctx_free(struct jr_ctx *cx);
/* The evaluator's file opener (sh_open_fn, arg = the context): a file
 * the script sources, loaded as jr_load_text does but noted when it is
 * missing.  0, or -1 when there is no text. */
int jr_ctx_open(void *arg, const char *path, const char **text, size_t *len);

/* ---- context ------------------------------------------------------------------ */

const catalog_t *jr_catalog(const struct jr_ctx *cx);
const struct jobread_input *jr_input(const struct jr_ctx *cx);
/* What the reader found so far (the launch's Slurm step, launch.c). */
struct jobread_out *jr_out(struct jr_ctx *cx);

/* A bind mount the job states for the container its trainer runs in
 * (pyxis --container-mounts, apptainer --bind, docker --volume): a file
 * the job names under dst is loaded from src on the host (relative to the
 * submit directory).  Named volumes and a target of "/" are not mapped;
 * the same target again replaces the source.  Bounded (16). */
void jr_mount(struct jr_ctx *cx, const char *src, size_t src_len, const char *dst, size_t dst_len);

/* Sets a field; the last call wins.  src may be NULL. */
void jr_set_int(struct jr_ctx *cx, enum jobread_field f, long long v, const struct jobread_src *src);
void jr_set_num(struct jr_ctx *cx, enum jobread_field f, double v, const struct jobread_src *src);
void jr_set_str(struct jr_ctx *cx, enum jobread_field f, const char *v, const struct jobread_src *src);
/* The field is given but its value is not known statically ($(...), a
 * Python config): reported as SCRIPT_UNKNOWN with the --llm-* option that
 * would supply it. what: e.g. "the output of $(...)". */
void jr_set_unknown(struct jr_ctx *cx, enum jobread_field f, const struct jobread_src *src,
		    const char *what);
const struct jobread_value *jr_get(const struct jr_ctx *cx, enum jobread_field f);
/* Names the trainer ("megatron", "nemo", ...) and sets JR_FRAMEWORK when
 * fw >= 0 (enum adv_framework).  Marks the job as an LLM job. */
void jr_set_trainer(struct jr_ctx *cx, const char *name, int fw, const struct jobread_src *src);
void jr_set_launcher(struct jr_ctx *cx, const char *name);
/* Adds a note (SCRIPT_UNKNOWN, SCRIPT_CONFIG_ERROR, SCRIPT_ASSUMED), an
 * info finding once applied (jobread_apply). */
void jr_note(struct jr_ctx *cx, enum adv_code code, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Loads and parses a config file named by the job (relative to the submit
 * directory, or absolute).  fmt CFG_AUTO picks by extension.  Returns the
 * tree (owned by the context, freed with it) or NULL when the file is
 * missing, unreadable, not yet shipped (then it is asked for) or bad (then
 * a note says where).  *display gets the name to use in sources (as the
 * job wrote it); display may be NULL.
 */
const cfg_t *jr_load(struct jr_ctx *cx, const char *path, enum cfg_format fmt,
		     const char **display);
/* The raw text of a file, the same way (for HF config.json in a model
 * directory: path is the directory + "/config.json").  NULL when absent. */
const char *jr_load_text(struct jr_ctx *cx, const char *path, size_t *len);
/* true when path (resolved like jr_load) names a file or directory the
 * provider knows to exist: used to tell a local model directory from a
 * Hugging Face id. */
bool jr_exists(struct jr_ctx *cx, const char *path);
/* True when path was asked of jr_load and could not be had for good
 * (missing, unreadable, over the budget, or not parsed): what it would
 * have configured stays unknown.  False for a file the client is still
 * to ship (a later round reads it). */
bool jr_unreadable(const struct jr_ctx *cx, const char *path);

/*
 * The value of environment variable name as the program of cmd sees it:
 * NAME=V words and docker/apptainer -e/--env NAME=V and srun
 * --export=...,NAME=V among the words before the program, else the
 * command's prefix assignments, else an exported variable of the script
 * (not inside docker/podman run, whose container starts with only the
 * variables -e gives, nor after env -i, apptainer --cleanenv/--containall
 * or srun --export=NONE).  The value is copied to buf (cut to len); false
 * when the variable is not set.  *unknown: the value is not known
 * statically; src (may be NULL): where it was set, under key name, style
 * JR_STYLE_ENV.
 */
bool jr_cmd_env(const struct jr_cmd *cmd, const char *name, char *buf, size_t len, bool *unknown,
		struct jobread_src *src);
/* true when a word before cmd's program in its recorded command has base
 * name w ("trtllm-llmapi-launch": the wrapper the program runs under). */
bool jr_cmd_after(const struct jr_cmd *cmd, const char *w);
/* The words before cmd's program in its recorded command (the launchers
 * and wrappers that start it), *n of them; NULL and 0 when none. */
char *const *jr_cmd_before(const struct jr_cmd *cmd, int *n);
/* A path as jr_load resolves it (submit directory, container mounts). */
void jr_resolve(const struct jr_ctx *cx, const char *path, char *buf, size_t len);

/*
 * The programs the launches run, as the Python reader (fw/fw_python.c)
 * left them: the first one it could not read, and the first it read and
 * found no LLM in.  Kept in the context, not in jobread_out: the walk
 * undoes what a command it does not take set, and these decide the job
 * once the walk is done (jr_program_finish).
 */
enum jr_program_state { JR_PROGRAM_NOT_READ = 0, JR_PROGRAM_NOT_LLM, JR_PROGRAM_STATES };
struct jr_program {
	char name[JOBREAD_PATH_MAX];   /* as the job names it */
	struct jobread_src src;        /* the command that runs it */
	char why[ADV_MSG_MAX];
};
/* Keeps the first program said in each state. */
void jr_program_said(struct jr_ctx *cx, enum jr_program_state st, const char *name,
		     const struct jobread_src *src, const char *why);
/* NULL when none was said. */
const struct jr_program *jr_program_get(const struct jr_ctx *cx, enum jr_program_state st);
/* The first program that only loads a model (fw_python.c, JR_PY_WEAK),
 * copied (the evaluator of a wrapper script is gone by the end): its
 * command's words (at most 32, each cut at 255 bytes), file and line.
 * jr_program_weak_get fills *cmd with pointers into the context. */
void jr_program_weak(struct jr_ctx *cx, const struct jr_cmd *cmd, bool is_module);
bool jr_program_weak_get(const struct jr_ctx *cx, struct jr_cmd *cmd, bool *is_module);
/* The commands (file, line) whose program was read and holds no LLM: a
 * launcher on that line is explained, not "not followed" (follow.c).
 * Bounded (16); more are not kept. */
void jr_program_explained(struct jr_ctx *cx, const char *file, int line);
bool jr_program_is_explained(const struct jr_ctx *cx, const char *file, int line);

/* ---- sources -------------------------------------------------------------- */

/* Source of word i of cmd (i < 0: the command itself) under key. */
void jr_src_word(struct jobread_src *s, const struct jr_cmd *cmd, int i, const char *key,
		 enum jobread_style style);
/* Source of a config node: file display name, node line/col, dotted key. */
void jr_src_node(struct jobread_src *s, const char *file, const struct cfg_node *n,
		 const char *key, enum jobread_style style);

/* Sets a field from a config node: ints through cfg_int, with the node's
 * source.  Returns true when set. */
bool jr_set_node_int(struct jr_ctx *cx, enum jobread_field f, const char *file,
		     const struct cfg_node *root, const char *dotted, enum jobread_style style);

#endif
