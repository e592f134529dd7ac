/*
 * shell.h - a static evaluator for the subset of bash that job scripts use.
 *
 * Nothing is ever executed.  The evaluator walks a script, keeps its
 * variables, expands words as bash would and records every simple command
 * it would run (with the file and line it starts on), so that the job
 * reader can find the launch command and the trainer's flags.  Here-
 * documents redirected into a file become that file's content (a "virtual
 * file"), so a config written by the script is read as the script wrote it.
 *
 * A value the evaluator cannot know statically (a command substitution
 * other than $(( )), an unknown Slurm variable such as SLURM_JOB_ID) is
 * marked unknown, never guessed.  Work is bounded (sh_limits) against
 * hostile scripts: when a bound is hit the evaluation stops, what was
 * found so far is kept, and sh_run() says which bound.
 *
 * The types it hands out (sh_limits, sh_err, sh_cmd, sh_vfile, sh_open_fn)
 * are in sh_types.h, included here.
 */
#ifndef ADVISOR_JOBREAD_SHELL_H
#define ADVISOR_JOBREAD_SHELL_H

#include <stdbool.h>
#include <stddef.h>

#include "sh_types.h"

typedef struct sh sh_t;

/* lim may be NULL (defaults). */
sh_t *sh_create(const struct sh_limits *lim);
void sh_destroy(sh_t *sh);

/* Sets a variable before the run (the submission environment, Slurm's
 * output variables).  unknown: the value is not known at submission
 * (SLURM_JOB_ID), but the variable is set and not empty: expansions that
 * use it are unknown, while [ -z "$SLURM_JOB_ID" ] is false and
 * ${SLURM_JOB_ID:-x} does not take x. */
int sh_setvar(sh_t *sh, const char *name, const char *value, bool exported, bool unknown);
/* The same, with the place the value was written (file must outlive
 * sh): a wrapper script's arguments keep the caller's lines. */
int sh_setvar_at(sh_t *sh, const char *name, const char *value, bool exported, bool unknown,
		 int line, const char *file);
/* A variable set with sh_setvar_at(..., line > 0, sh_mark_file) marks every
 * recorded word its value went into (sh_cmd.marked). */
extern const char sh_mark_file[];

/*
 * The script's arguments ($1.., $#, "$@": sbatch's words after the script
 * name) and $0.  arg0_unknown: $0 is set but its value is not known (a
 * batch job runs slurmd's copy of the script, SlurmdSpoolDir/jobN/
 * slurm_script: sbatch(1)); arg0 is then its text with placeholders.
 * arg0 may be NULL (the script's name).  The arrays are copied.
 */
int sh_set_args(sh_t *sh, const char *arg0, bool arg0_unknown, int argc, char *const argv[]);

/* The job's working directory (absolute): what pwd and $(pwd) give until
 * the script changes it with cd.  Not set: not known. */
int sh_set_cwd(sh_t *sh, const char *cwd);

/*
 * Evaluates a script.  name is used as sh_cmd.file.  open may be NULL (no
 * file is sourced).  Returns SH_OK or the bound that stopped it; what was
 * found until then stays available.
 */
int sh_run(sh_t *sh, const char *name, const char *text, size_t len, sh_open_fn open, void *arg);

/*
 * sh_run of a text whose bytes from skip on are a file another evaluator
 * wrote (vf: a driver script the batch script wrote, then runs): the
 * commands' words keep the lines of the batch script that wrote them, as
 * vf->map says.  vf (and the evaluator that made it) must outlive sh.
 * vf NULL: sh_run.
 */
int sh_run_vfile(sh_t *sh, const char *name, const char *text, size_t len, size_t skip,
		 const struct sh_vfile *vf, sh_open_fn open, void *arg);

/* The recorded commands, in the order they would run. */
const struct sh_cmd *sh_commands(const sh_t *sh);
/* Files written by here-documents; the last write of a path wins. */
const struct sh_vfile *sh_vfiles(const sh_t *sh);
const struct sh_vfile *sh_vfile_find(const sh_t *sh, const char *path);
/* A variable's value after the run (NULL when unset); *unknown is set
 * when its value is unknown.  unknown may be NULL. */
const char *sh_getvar(const sh_t *sh, const char *name, bool *unknown);
/* The same for an exported scalar only (what a program the script starts
 * sees in its environment), with the line and file of its assignment
 * (0 and NULL when it came from the submission environment).  line and
 * file may be NULL. */
const char *sh_getenv(const sh_t *sh, const char *name, bool *unknown, int *line,
		      const char **file);
/* Notes the evaluator made (skipped constructs, failed sources), for the
 * reader's info findings: "file:line: message", NULL-terminated. */
const char *const *sh_notes(const sh_t *sh, size_t *n);

/*
 * The first syntax error bash would stop at (a redirection with no word:
 * "VAR=<placeholder>"): its file and line, and whether it is in a file the
 * script runs (source, bash -c, eval: that file stops, the script goes
 * on) rather than the script itself (bash exits there).  false when none.
 */
bool sh_syntax_error(const sh_t *sh, const char **file, int *line, bool *nested);

/*
 * The k-th command (from 0) whose program is the value of a variable that
 * is not set when it runs, neither by the script nor by the environment
 * it was given ("srun $TRAIN_CMD", "bash -c \"$CMD\"", "$LAUNCH args"):
 * the job's command comes from the environment sbatch passes and is not
 * known.  false past the last one.
 */
bool sh_unset_command(const sh_t *sh, int k, const char **file, int *line, const char **name);

const char *sh_strerror(int code);

#endif
