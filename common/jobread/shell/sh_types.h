/*
 * sh_types.h - the types the shell evaluator's API (shell.h) hands out,
 * and nothing else: its bounds (sh_limits) and the codes of the bound that
 * stopped a run (sh_err), a recorded command (sh_cmd), a file a
 * here-document wrote (sh_vfile) and the provider of sourced files
 * (sh_open_fn).
 *
 * A header of its own so that the evaluator's internal header (sh_impl.h)
 * depends on these types and not on shell.h, whose functions shell.c
 * defines on top of sh_impl.h: no include circle between the two.
 */
#ifndef ADVISOR_JOBREAD_SH_TYPES_H
#define ADVISOR_JOBREAD_SH_TYPES_H

#include <stdbool.h>
#include <stddef.h>

enum sh_err {
	SH_OK = 0,
	SH_ERR_NOMEM,
	SH_ERR_INPUT,      /* input over max_input bytes: cut there */
	SH_ERR_STEPS,      /* more than max_steps evaluation steps */
	SH_ERR_DEPTH,      /* nesting (source, bash -c, eval, functions, $( )) over max_depth */
	SH_ERR_EXPANSION,  /* a word or variable grew over max_word bytes */
	SH_ERR_MEMORY,     /* total memory over max_memory bytes */
	SH_ERR_COMMANDS,   /* more than max_commands simple commands recorded */
};

struct sh_limits {
	size_t max_input;     /* bytes of script text in all (script + sourced), default 1 MiB */
	size_t max_steps;     /* evaluation steps, default 200000 */
	int max_depth;        /* default 48 (every nested construct counts) */
	size_t max_word;      /* bytes of one expanded word or variable value, default 64 KiB */
	size_t max_memory;    /* bytes allocated in all, default 16 MiB */
	size_t max_commands;  /* simple commands recorded, default 4096 */
};

/* One simple command as it would run, after expansion and field splitting.
 * Assignments-only commands and shell builtins that only set state
 * (export, cd, set, shift, ...) are not recorded; every other command is,
 * including those run by srun/bash -c/exec/eval (each recorded once, as
 * the innermost command that runs: "srun bash -c 'torchrun ...'" records
 * "srun bash -c ..." AND the inner "torchrun ..." with inner=true). */
struct sh_cmd {
	const char *file;      /* the script's name or the sourced file's path */
	int line;              /* 1-based line where the command starts */
	int argc;
	char **argv;           /* expanded fields, NULL-terminated */
	const bool *unknown;   /* argc entries: the field holds an unknown value */
	/* argc entries (or NULL): where each field's text was written.  A word
	 * typed on the command's own line has the command's file and line; a
	 * field that came from an array element or a variable has the file and
	 * line of that element or assignment (ARGS=( ... --tp 4 ... ) over
	 * several lines gives "--tp" the line it is on), so that a fix can
	 * name the line to edit. */
	const int *word_line;
	const char *const *word_file;
	/* argc entries: some text of the field came from a variable set with
	 * sh_setvar_at(..., sh_mark_file): the caller's way to recognise an
	 * expansion it cares about (the batch shell's rank variables). */
	const bool *marked;
	char **assign;         /* "NAME=value" prefix assignments (env for this command), NULL-terminated */
	int n_assign;
	bool inner;            /* run through bash -c / eval / srun bash -c */
	/* Recorded under a condition that cannot be decided before the job
	 * runs (if, while, && on an unknown value): the job may not run it. */
	bool uncertain;
	const struct sh_cmd *next;
};

struct sh_lmap;             /* the evaluator's line maps (opaque here) */

/* A file a here-document (or a plain "echo/printf ... > file") wrote. */
struct sh_vfile {
	const char *path;      /* as the script named it, expanded */
	const char *text;      /* expanded content ('EOF'-quoted: literal) */
	size_t len;
	const char *file;      /* where the here-document is */
	int line;              /* line of the <<EOF */
	/* where each part of text was written (the here-document's lines, the
	 * echo or printf that appended it): sh_run_vfile() */
	const struct sh_lmap *map;
	const struct sh_vfile *next;
};

/*
 * Gives the text of a file the script sources ("source F", ". F").  path
 * is as the script wrote it (expanded).  Returns 0 and sets text/len (the
 * provider keeps ownership; valid until sh_destroy) or -1 when it cannot
 * (the source is then skipped and noted).
 */
typedef int (*sh_open_fn)(void *arg, const char *path, const char **text, size_t *len);

#endif
