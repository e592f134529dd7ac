/*
 * sh_impl.h - the shell evaluator's insides, shared by its files: the
 * evaluator's state (struct sh), the types the phases hand each other
 * (source text, raw words, fields with their line maps, variables) and the
 * functions one phase calls in another.  Not part of the API (shell.h).
 *
 * The evaluator is split by bash's phases, one file each:
 *   mem.c     memory and bounds: the arena, steps, nesting, notes
 *   field.c   fields: the arena's growable strings, with where each part
 *             of their text was written
 *   scan.c    scanning: the source text, where words and constructs end,
 *             tokens, assignment words, redirections, here-document bodies
 *   vars.c    variables: scalars, arrays, function locals, assignments
 *   expand.c  expansion: parameters, command substitution (never run),
 *             word splitting, quote removal
 *   cmdsub.c  the command substitutions whose output is known (pwd,
 *             dirname "$0", cd DIR && pwd, realpath, basename)
 *   arith.c   arithmetic: $(( )), (( )), array indices
 *   cond.c    conditionals: test, [ ] and [[ ]]
 *   record.c  recorded commands, here-document text and virtual files
 *   simple.c  simple commands: parsed, expanded, builtins run
 *   shell.c   compound commands, lists, pipelines and the API
 * The phases have no headers of their own: each file includes this one
 * (shell.c also its API, shell.h), so they depend on these declarations
 * and never on each other.
 */
#ifndef ADVISOR_JOBREAD_SH_IMPL_H
#define ADVISOR_JOBREAD_SH_IMPL_H

#include <ctype.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "sh_types.h"

#define SH_HASH 512
#define SH_MAX_NOTES 32
#define SH_MAX_FIELDS 65536
#define SH_MAX_WORDS 4096
#define SH_MAX_REDIRS 16
/* Loops: iterations of one loop, and of all loops together; a loop that
 * would go on is read once more as a loop whose end is not known. */
#define SH_MAX_LOOP 1024
#define SH_MAX_ITERS 8192

/* Results of a command or test: known true or false, or not known. */
enum { T_FALSE = 0, T_TRUE = 1, T_UNKNOWN = 2 };

/* Expansion contexts (sh_expand_*). */
#define X_SPLIT 1         /* field splitting of unquoted results (command words) */
#define X_HEREDOC 2       /* here-document body: quotes are literal */
#define X_DQ 4            /* inside double quotes */

/* ---- state -------------------------------------------------------------------------- */

struct sh_chunk;           /* mem.c */
struct sh_local;           /* vars.c */

/* A variable: a scalar is an array of one element without the array flag. */
struct sh_var {
	struct sh_var *next;       /* hash chain */
	const char *name;
	char **vals;
	int *lines;                /* per element: line of its assignment */
	const char **files;
	bool *unk;                 /* per element: unknown */
	bool *ne;                  /* per element: unknown but set and not empty (SLURM_JOB_ID) */
	const struct sh_lmap **maps;  /* per element: lines of its parts, or NULL */
	int n, cap;
	bool array, exported;
};

#define SH_MAX_UNSET 8

struct sh_pipe {
	const char *text;
	size_t len;
	const struct sh_lmap *map;
	int line;
	const char *file;
};

struct sh_unset_cmd {
	const char *file;
	int line;
	char name[64];
};

struct sh_func {
	struct sh_func *next;
	const char *name;
	const char *file;
	const char *text;          /* body text, from its first character */
	size_t len;
	int line;
};

struct sh_cmd_rec {
	struct sh_cmd pub;
	struct sh_cmd_rec *next;
	const char *at;            /* the source position it was read at (loop dedup) */
	unsigned loop_id;          /* recorded in that run of an outermost loop, 0 outside */
	bool noted;                /* a later run with other arguments was noted */
};

struct sh_vfile_rec {
	struct sh_vfile pub;
	struct sh_vfile_rec *next;
};

/*
 * Where the text of a value was written: from byte off on, line and file.
 * A value built over several lines (a multi-line string, NAME+=..., a
 * variable holding flags from elsewhere) keeps the line of each part, so
 * that a word split out of it names the line it was typed on.
 */
struct sh_lrun {
	size_t off;
	int line;
	const char *file;
};

struct sh_lmap {
	int n;
	struct sh_lrun r[];
};

/* One field being built by expansion. */
struct sh_field {
	char *s;
	size_t len, cap;
	bool unknown;
	bool ne;                   /* known not to be empty, though unknown in part */
	bool present;              /* a quoted part or text: kept even when empty */
	int line;
	const char *file;
	struct sh_lrun *runs;      /* where each part of the text was written */
	int n_runs, cap_runs;
};

struct sh_fields {
	struct sh_field *f;
	int n, cap;
};

struct sh {
	struct sh_limits lim;
	struct sh_chunk *chunks;
	size_t mem;
	size_t steps, input;
	int depth;
	jmp_buf jb;
	bool jb_set;
	int err;
	struct sh_var *vars[SH_HASH];
	struct sh_func *funcs;
	struct sh_cmd_rec *cmds, *cmds_tail;
	size_t n_cmds;
	struct sh_vfile_rec *vfiles, *vfiles_tail;
	const char *notes[SH_MAX_NOTES + 1];
	size_t n_notes;
	/* positional parameters of the current function or bash -c */
	char **pos;
	int n_pos;
	const int *pos_lines;      /* where each positional parameter was written */
	const char *const *pos_files;
	int nest;                  /* syntactic nesting, bounded to protect the C stack */
	int xnest;                 /* expansions within expansions */
	struct sh_local *locals;
	int frame;                 /* the function call being run, 0 outside */
	int frames;                /* calls so far (bounded by max_steps) */
	sh_open_fn open;
	void *open_arg;
	bool stop;                 /* exit seen */
	/* The first syntax error bash stops at (sh_syntax): its file and
	 * line, and whether it is in a file the script runs (source, bash -c,
	 * eval) rather than the script.  syn_abort while the file that holds
	 * it is being left: bash runs none of it past that command. */
	int syn_line;
	char syn_file[256];
	bool syn_nested;
	bool syn_abort;
	/* return seen: the function or sourced file being run is left, as
	 * stop leaves the script (the caller puts stop back). */
	bool ret;
	int files;                 /* sh_eval_text nesting: 1 = the script */
	/* The script's own arguments and $0 (sh_set_args), its working
	 * directory (NULL: not known) */
	char **args;
	int n_args;
	const char *arg0;
	bool arg0_spool;           /* $0 is Slurm's copy in slurmd's spool directory */
	bool arg0_noted;
	const char *cwd;
	/* loops: how many run now, break/continue levels pending, iterations
	 * so far in all loops (bounded: SH_MAX_ITERS), getopts' place in a
	 * word of grouped options */
	int loops;
	int brk, cont;
	bool loop_unsure;          /* a break/continue under a condition not known */
	size_t iters;
	unsigned loop_id;          /* the outermost loop being run (record dedup) */
	struct sh_cmd_rec *loop_mark;   /* the last command recorded before it */
	int opt_sub, opt_ind;
	int uncertain;             /* > 0: under a condition not known */
	int inner;                 /* > 0: inside bash -c / eval */
	/* The outermost bash -c / eval being run (0: none): a command whose
	 * text was written before it (a here-document read into CMD) is
	 * recorded at that line, where it runs; its words keep their own. */
	int eval_line;
	const char *eval_file;
	/* Commands whose program is a variable the script never sets
	 * (srun $TRAIN_CMD): sh_unset_command() */
	struct sh_unset_cmd unset_cmds[SH_MAX_UNSET];
	int n_unset_cmds;
	/* A pipeline's text: what the command before the | writes when it is
	 * known (cat of a here-document, echo, printf: pipe_out), handed to
	 * the next simple command (pipe_in, taken by run_simple into cur_in):
	 * tee writes it to its file, a shell runs it as its script. */
	struct sh_pipe *pipe_out, *pipe_in, *cur_in;
};

/* ---- source text and raw words ------------------------------------------------------ */

/* A text being evaluated: the script, a sourced file, a function body,
 * the string of bash -c or eval. */
struct sh_src {
	const char *file;
	const char *t;
	size_t n, i;
	int line;
	/* Here-document bodies to jump over at the newline that ends the
	 * line of their <<. */
	bool has_skip;
	size_t skip_at, skip_to;
	int skip_lines;
	/* A string built elsewhere (bash -c "$CMD", eval "$CMD"): where each
	 * part of it was written, so that its words keep the lines of the
	 * here-document or assignment that wrote them; run is the map's entry
	 * at i, file0 the file of parts the map names none for. */
	const struct sh_lmap *map;
	int run;
	const char *file0;
	size_t map_base;           /* the map's offset 0 is text[map_base] */
};

/* A word as written, before expansion. */
struct sh_raw {
	const char *t;
	size_t n;
	int line;
};

struct sh_redir {
	char op[4];
	struct sh_raw target;
	const char *body;          /* here-document text, NULL otherwise */
	size_t body_len;
	bool quoted;               /* <<'EOF': no expansion */
	bool strip_tabs;           /* <<- */
	int body_line;             /* the line the here-document's text starts on */
};

struct sh_simple {
	struct sh_raw *words;
	int n_words, cap_words;
	struct sh_raw *assigns;
	int n_assigns, cap_assigns;
	/* array assignment elements, per assignment (NULL for scalars) */
	struct sh_raw **elems;
	int *n_elems;
	struct sh_redir redirs[SH_MAX_REDIRS];
	int n_redirs;
};

/* ---- small helpers every phase uses ------------------------------------------------- */

static inline bool sh_is_name_start(char c)
{
	return c == '_' || isalpha((unsigned char)c);
}

static inline bool sh_is_name_char(char c)
{
	return c == '_' || isalnum((unsigned char)c);
}

/* strchr(set, c) that does not take a NUL byte of the input for the
 * set's terminator. */
static inline bool sh_in_set(const char *set, char c)
{
	return c != '\0' && strchr(set, c) != NULL;
}

static inline bool sh_ifs_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static inline bool sh_at_end(const struct sh_src *s)
{
	return s->i >= s->n;
}

static inline char sh_cur(const struct sh_src *s)
{
	return s->i < s->n ? s->t[s->i] : '\0';
}

static inline char sh_peekc(const struct sh_src *s, size_t k)
{
	return s->i + k < s->n ? s->t[s->i + k] : '\0';
}

static inline int sh_tri_not(int r)
{
	return r == T_UNKNOWN ? r : !r;
}

/* ---- mem.c: memory and bounds ------------------------------------------------------- */

/* Stops the evaluation with code (longjmp back to sh_run or sh_setvar). */
void sh_fail(struct sh *sh, int code);
/* Zeroed memory from the arena; over max_memory stops the evaluation. */
void *sh_alloc(struct sh *sh, size_t n);
char *sh_strndup(struct sh *sh, const char *s, size_t n);
char *sh_strdup(struct sh *sh, const char *s);
/* Frees the arena (sh_destroy). */
void sh_arena_free(struct sh *sh);
/* One level deeper in the parser (sh->nest) or in nested expansions
 * (sh->xnest); the caller decrements the counter when it comes back. */
void sh_nest_in(struct sh *sh);
void sh_xnest_in(struct sh *sh);
/* One step of work, bounded by max_steps. */
void sh_step(struct sh *sh);
/* A note for the reader (sh_notes): "file:line: message", at most SH_MAX_NOTES. */
void sh_note(struct sh *sh, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- field.c: fields ---------------------------------------------------------------- */

void sh_fld_add(struct sh *sh, struct sh_field *f, const char *s, size_t n);
void sh_fld_addc(struct sh *sh, struct sh_field *f, char c);
/* Appends s[a, b) of a value whose parts were written where m (or
 * line/file) says. */
void sh_fld_add_range(struct sh *sh, struct sh_field *f, const char *s, size_t a, size_t b,
		      const struct sh_lmap *m, int line, const char *file);
/* From the field's current end on, the text was written at line/file. */
void sh_fld_mark(struct sh *sh, struct sh_field *f, int line, const char *file);
/* Appends text whose parts were written where map (or line/file) says. */
void sh_fld_add_mapped(struct sh *sh, struct sh_field *f, const char *s, size_t n,
		       const struct sh_lmap *m, int line, const char *file);
/* The field's line map (NULL when it was all written on one line). */
const struct sh_lmap *sh_fld_map(struct sh *sh, const struct sh_field *f);
/* The line of byte off of a value. */
int sh_map_line(const struct sh_lmap *m, size_t off, int dflt, const char **file);
const char *sh_fld_str(const struct sh_field *f);
/* A new empty field at the end of fs. */
struct sh_field *sh_flds_new(struct sh *sh, struct sh_fields *fs, int line, const char *file);

/* ---- scan.c: scanning --------------------------------------------------------------- */

void sh_adv1(struct sh_src *s);
/* The line (and file) of s->i from the source's map, when it has one. */
void sh_src_sync(struct sh_src *s);
void sh_adv_to(struct sh_src *s, size_t end);
void sh_skip_ws(struct sh_src *s, bool newlines);
/* Where a construct that starts at t[i] ends (just after it). */
size_t sh_scan_squote(const char *t, size_t n, size_t i);
size_t sh_scan_dquote(const char *t, size_t n, size_t i, int depth);
size_t sh_scan_backtick(const char *t, size_t n, size_t i);
size_t sh_scan_dollar(const char *t, size_t n, size_t i, int depth);
/* From just after an opening '(' to just after its ')'. */
size_t sh_scan_paren(const char *t, size_t n, size_t i, int depth);
/* The end of the word starting at s->i (not consumed). */
size_t sh_scan_word(const struct sh_src *s);
void sh_peek_tok(struct sh_src *s, char *buf, size_t len);
void sh_consume_tok(struct sh_src *s, const char *tok);
bool sh_raw_assignment(const struct sh_raw *r, size_t *name_len, size_t *eq);
bool sh_at_redirect(const struct sh_src *s);
void sh_parse_redir(struct sh *sh, struct sh_src *s, struct sh_redir *r);
/* A syntax error bash reports at this command: nothing more of the file
 * runs (the first one is kept for sh_syntax_error). */
void sh_syntax(struct sh *sh, const struct sh_src *s, int line);

/* ---- vars.c: variables -------------------------------------------------------------- */

struct sh_var *sh_var_find(const struct sh *sh, const char *name);
/* The variable, created (unset) when there is none. */
struct sh_var *sh_var_get(struct sh *sh, const char *name);
void sh_var_set(struct sh *sh, const char *name, const char *val, bool unk, int line,
		const char *file);
/* The same for a value not known but set and not empty. */
void sh_var_set_ne(struct sh *sh, const char *name, const char *val, int line, const char *file);
/* Sets element idx (0 for a scalar); append: += on a scalar. */
void sh_var_set_at_m(struct sh *sh, struct sh_var *v, int idx, const char *val, bool unk,
		     int line, const char *file, bool append, const struct sh_lmap *map);
/* Marks element idx, just set, as unknown but not empty. */
void sh_var_mark_ne(struct sh *sh, struct sh_var *v, int idx, bool ne);
void sh_var_unset(struct sh *sh, const char *name);
bool sh_valid_name(const char *s, size_t n);
void sh_var_assign(struct sh *sh, const struct sh_raw *r, const struct sh_raw *elems, int n_elems,
		   const char *file, bool exported);
/* local NAME in the function being run: the value comes back at its return. */
void sh_var_save_local(struct sh *sh, const char *name);
void sh_var_restore_locals(struct sh *sh);

/* ---- expand.c: expansion ------------------------------------------------------------ */

/* A word expanded to one string; map (may be NULL) gets its line map. */
const char *sh_expand_str_m(struct sh *sh, const char *t, size_t n, int flags, int line,
			    const char *file, bool *unk, const struct sh_lmap **map);
const char *sh_expand_str(struct sh *sh, const char *t, size_t n, int flags, int line,
			  const char *file, bool *unk);
/* The same, and *ne: unknown but known not to be empty. */
const char *sh_expand_str_ne(struct sh *sh, const char *t, size_t n, int flags, int line,
			     const char *file, bool *unk, const struct sh_lmap **map, bool *ne);

/* A command word: fields after splitting, appended to out. */
void sh_expand_word(struct sh *sh, const char *t, size_t n, int line, const char *file,
		    int flags, struct sh_fields *out);

/* ---- cmdsub.c: command substitutions known at submission ---------------------------- */

/* The output of $(...) or `...` (t, n: the whole construct) when it is
 * known (pwd, cd, dirname, basename, realpath, readlink -f, echo, cut,
 * cat of a here-document), else NULL; *unk: known in part (the
 * placeholders of what is not); *map: where its parts were written, or
 * NULL (all on the line of the substitution). */
const char *sh_cmdsub_known(struct sh *sh, const char *t, size_t n, int line, const char *file,
			    bool *unk, const struct sh_lmap **map);
/* The working directory after cd to dir from cwd (NULL: not known), . and
 * .. resolved. */
const char *sh_path_resolve(struct sh *sh, const char *cwd, const char *dir);

/* ---- arith.c: arithmetic ------------------------------------------------------------ */

/* $(( text )): the value as a string, or the expansion itself when unknown. */
const char *sh_arith(struct sh *sh, const char *t, size_t n, int line, const char *file,
		     bool *unk);

/* ---- cond.c: test, [ ], [[ ]] ------------------------------------------------------- */

/* T_TRUE, T_FALSE or T_UNKNOWN of the n words a (u: unknown; ne: unknown
 * but known not to be empty, may be NULL); dbl: [[ ]]. */
int sh_cond_eval(struct sh *sh, char **a, const bool *u, const bool *ne, int n, bool dbl);
/* [[ ... ]] at s: read, and decided when ex. */
int sh_cond_dbracket(struct sh *sh, struct sh_src *s, bool ex);

/* ---- record.c: recorded commands and virtual files ---------------------------------- */

void sh_record(struct sh *sh, const struct sh_src *s, int line, struct sh_fields *fs, int from,
	       char **assign, int n_assign);
/* The text of a here-document (r->body) as the command reads it: expanded
 * unless its delimiter is quoted, leading tabs gone for <<-.  *map (may be
 * NULL) gets the line each part was written on; *unk: unknown in part. */
const char *sh_heredoc_text(struct sh *sh, const struct sh_redir *r, const char *file,
			    size_t *len, const struct sh_lmap **map, bool *unk);
/* The text printf FORMAT ARGS writes (format ff, ARGS from fs->f[arg] on),
 * appended to f with the lines each part was written on. */
void sh_printf_text(struct sh *sh, struct sh_field *f, const struct sh_field *ff,
		    struct sh_fields *fs, int arg);
/* cat/tee with a here-document, or echo/printf, writing a file: a virtual file. */
void sh_maybe_vfile(struct sh *sh, const struct sh_src *s, int line, const struct sh_simple *c,
		    struct sh_fields *fs, int from);

/* ---- simple.c: simple commands ------------------------------------------------------ */

/* Parses one simple command from s; runs it when ex. */
int sh_simple_command(struct sh *sh, struct sh_src *s, bool ex);

/* ---- shell.c: commands -------------------------------------------------------------- */

int sh_parse_command(struct sh *sh, struct sh_src *s, bool ex);
/* A text evaluated as a script of its own (the script, source, bash -c,
 * eval); false when bash would stop reading it at a syntax error. */
bool sh_eval_text(struct sh *sh, const char *file, const char *text, size_t len, int line,
		  char **pos, int n_pos, bool inner);
/* The same for a string whose parts were written where map says. */
bool sh_eval_text_m(struct sh *sh, const char *file, const char *text, size_t len, int line,
		    char **pos, int n_pos, bool inner, const struct sh_lmap *map);
/* The same, the map starting at text[map_base]. */
bool sh_eval_text_mb(struct sh *sh, const char *file, const char *text, size_t len, int line,
		     char **pos, int n_pos, bool inner, const struct sh_lmap *map, size_t map_base);

#endif
