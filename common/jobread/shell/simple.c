/*
 * simple.c - simple commands in the shell evaluator (sh_impl.h): read
 * from the source (assignments, words, redirections), expanded (expand.c)
 * and "run": nothing is executed, but the builtins that change the
 * shell's state are followed and every other command is recorded
 * (record.c).
 *
 * It follows the bash manual, "Simple Commands", "Simple Command
 * Expansion" and "Command Search and Execution" (prefix assignments,
 * functions before builtins before programs), and the builtins job
 * scripts use ("Bourne Shell Builtins", "Bash Builtin Commands"): export,
 * declare, typeset, local and readonly assign (a word that becomes
 * NAME=value once expanded too: export "$KEY"="$VALUE", export "$@");
 * set -- and shift move the positional parameters; read takes a
 * here-document or here-string as bash's read builtin does (read -r -d ''
 * CMD <<EOF), and sets unknown values from any other input, as readarray
 * and mapfile do; printf -v NAME sets NAME; unset; exec, command and
 * builtin run their arguments; source and . evaluate the file the provider
 * gives (sh_open_fn); eval and bash -c (also behind srun, singularity exec,
 * ...), and a shell reading its script from a here-document (bash <<EOF),
 * evaluate their string as a script of its own, recorded as inner commands
 * whose words keep the lines their text was written on; [ and test are
 * decided by cond.c.  A command whose program is a variable never set
 * (srun $TRAIN_CMD) is kept for sh_unset_command().
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sh_impl.h"
#include "util.h"

/* ---- running a simple command ------------------------------------------------------- */

static struct sh_func *func_find(struct sh *sh, const char *name)
{
	for (struct sh_func *f = sh->funcs; f; f = f->next)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

static bool raw_is(const struct sh_raw *r, const char *w)
{
	return r->n == strlen(w) && !memcmp(r->t, w, r->n);
}

/* A string run as a script of its own (bash -c STRING, eval): its words
 * keep the lines their text was written on (a here-document read into
 * CMD, an assignment), which the fix of a value names. */
static void eval_field(struct sh *sh, const struct sh_src *s, const struct sh_field *f, int line,
		       char **pos, int npos)
{
	const char *file = f->n_runs && f->runs[0].file ? f->runs[0].file : s->file;
	int l = f->n_runs && f->runs[0].line > 0 ? f->runs[0].line : f->line > 0 ? f->line : line;
	int save_line = sh->eval_line;
	const char *save_file = sh->eval_file;

	if (!sh->eval_line) {
		sh->eval_line = line;
		sh->eval_file = s->file;
	}
	sh_eval_text_m(sh, file, sh_fld_str(f), f->len, l, pos, npos, true, sh_fld_map(sh, f));
	sh->eval_line = save_line;
	sh->eval_file = save_file;
}

/* The string of bash -c / sh -c anywhere in argv (after srun, singularity
 * exec IMAGE, ...): evaluated as a script of its own. */
static const char *rd_input(struct sh *sh, const struct sh_src *s, const struct sh_simple *c,
			    size_t *len, const struct sh_lmap **map, int *line, bool *unk);

/* A shell reading its script from a here-document or here-string (bash
 * <<EOF, bash -s <<<"$CMD"; behind srun, which passes its input to every
 * task): the text is run as bash -c would run it. */
static void shell_stdin(struct sh *sh, const struct sh_src *s, int line, const struct sh_simple *c)
{
	const struct sh_lmap *map = NULL;
	size_t len = 0;
	int tl = line;
	bool unk = false;
	const char *text = rd_input(sh, s, c, &len, &map, &tl, &unk);
	struct sh_field f;

	if (!text && sh->cur_in) {
		/* cat <<EOF | bash: the text before the pipe */
		text = sh->cur_in->text;
		len = sh->cur_in->len;
		map = sh->cur_in->map;
		tl = sh->cur_in->line;
	}
	if (!text)
		return;
	memset(&f, 0, sizeof(f));
	sh_fld_add_range(sh, &f, text, 0, len, map, tl, s->file);
	f.line = tl;
	eval_field(sh, s, &f, line, sh->pos, 0);
}

static void shell_c(struct sh *sh, const struct sh_src *s, int line, struct sh_fields *fs, int from,
		    const struct sh_simple *c)
{
	for (int k = from; k < fs->n; k++) {
		const char *w = sh_fld_str(&fs->f[k]);
		const char *b = strrchr(w, '/') ? strrchr(w, '/') + 1 : w;

		if (strcmp(b, "bash") && strcmp(b, "sh") && strcmp(b, "dash") && strcmp(b, "zsh") &&
		    strcmp(b, "ksh"))
			continue;
		for (int j = k + 1; j < fs->n; j++) {
			const char *o = sh_fld_str(&fs->f[j]);

			if (o[0] != '-')
				return;
			if (o[1] != '-' && strchr(o, 'c') && j + 1 < fs->n) {
				const struct sh_field *str = &fs->f[j + 1];
				int npos = fs->n - (j + 3) > 0 ? fs->n - (j + 3) : 0;
				char **pos = sh_alloc(sh, sizeof(*pos) * (size_t)(npos + 1));

				/* A string with unknown parts keeps them as their own text
				 * ("$(hostname)"), which the inner evaluation finds unknown
				 * again: what is known of it is still read. */
				for (int q = 0; q < npos; q++)
					pos[q] = (char *)sh_fld_str(&fs->f[j + 3 + q]);
				eval_field(sh, s, str, line, pos, npos);
				return;
			}
		}
		/* Options only, no script operand: the script is the input. */
		shell_stdin(sh, s, line, c);
		return;
	}
}

static void call_func(struct sh *sh, struct sh_func *fn, struct sh_fields *fs, int from)
{
	char **save_pos = sh->pos;
	int save_n = sh->n_pos;
	const int *save_lines = sh->pos_lines;
	const char *const *save_files = sh->pos_files;
	int n = fs->n - from - 1;
	char **pos = sh_alloc(sh, sizeof(*pos) * (size_t)(n > 0 ? n + 1 : 1));
	int *lines = sh_alloc(sh, sizeof(*lines) * (size_t)(n > 0 ? n : 1));
	const char **files = sh_alloc(sh, sizeof(*files) * (size_t)(n > 0 ? n : 1));
	struct sh_src body = { fn->file, fn->text, fn->len, 0, fn->line, false, 0, 0, 0, NULL, 0,
			       fn->file, 0 };

	for (int k = 0; k < n; k++) {
		pos[k] = (char *)sh_fld_str(&fs->f[from + 1 + k]);
		lines[k] = fs->f[from + 1 + k].line;
		files[k] = fs->f[from + 1 + k].file;
	}
	if (++sh->depth > sh->lim.max_depth)
		sh_fail(sh, SH_ERR_DEPTH);
	sh->pos = pos;
	sh->n_pos = n;
	sh->pos_lines = lines;
	sh->pos_files = files;
	{
		int save_frame = sh->frame;
		bool save_stop = sh->stop;

		sh->frame = ++sh->frames;
		sh_parse_command(sh, &body, true);
		if (sh->ret) {
			sh->ret = false;
			sh->stop = save_stop;
		}
		/* local variables come back */
		sh_var_restore_locals(sh);
		sh->frame = save_frame;
	}
	sh->pos = save_pos;
	sh->n_pos = save_n;
	sh->pos_lines = save_lines;
	sh->pos_files = save_files;
	sh->depth--;
}

/* set [options] [--] [args]: the positional parameters when words follow
 * the options, or after "--" or "-" even when none do (bash, "The Set
 * Builtin"); -o and +o take an option name. */
static int builtin_set(struct sh *sh, struct sh_fields *fs, int from)
{
	int k = from + 1;
	bool end = false, dash = false;

	while (k < fs->n) {
		const char *a = sh_fld_str(&fs->f[k]);

		if (!strcmp(a, "--") || !strcmp(a, "-")) {
			end = true;
			dash = a[1] == '\0';
			k++;
			break;
		}
		if (a[0] != '-' && a[0] != '+')
			break;
		/* -o NAME, and -euo NAME: the o of a group takes the next word */
		if (a[1] && a[strlen(a) - 1] == 'o' && k + 1 < fs->n)
			k++;
		k++;
	}
	/* Options only, or "set -" alone: the parameters stay. */
	if (k >= fs->n && (!end || dash))
		return T_TRUE;
	sh->n_pos = fs->n - k;
	sh->pos = sh_alloc(sh, sizeof(char *) * (size_t)(sh->n_pos + 1));
	{
		/* Each parameter keeps where its value was written (a wrapper
		 * script's arguments: the caller's lines, record.c's rule). */
		int *lines = sh_alloc(sh, sizeof(*lines) * (size_t)(sh->n_pos + 1));
		const char **files = sh_alloc(sh, sizeof(*files) * (size_t)(sh->n_pos + 1));

		for (int q = 0; q < sh->n_pos; q++) {
			const struct sh_field *f = &fs->f[k + q];

			sh->pos[q] = (char *)sh_fld_str(f);
			lines[q] = f->n_runs ? f->runs[0].line : f->line;
			files[q] = f->n_runs && f->runs[0].file ? f->runs[0].file : f->file;
		}
		sh->pos_lines = lines;
		sh->pos_files = files;
	}
	return T_TRUE;
}

/*
 * getopts OPTSTRING NAME [ARGS]: one option of the positional parameters
 * (or ARGS) per call, as bash's builtin (getopts.def, sh_getopt): OPTIND
 * is the next word, a word of grouped options (-xvf) is read a letter at
 * a time, "--" or the first word not starting with '-' ends, a letter
 * followed by ':' takes an argument (the rest of the word or the next
 * word).  A letter not in OPTSTRING, or a missing argument, gives NAME
 * "?" (and OPTARG unset), or with a leading ':' (silent) "?" or ":" with
 * OPTARG the letter.
 */
static int builtin_getopts(struct sh *sh, struct sh_src *s, int line, struct sh_fields *fs,
			   int from)
{
	const char *opts, *name, *ind_s, *arg;
	bool silent, iu = false;
	char **args;
	int nargs, ind;
	char c[2] = "", buf[24];
	const char *hit;

	if (fs->n - from < 3)
		return T_FALSE;
	opts = sh_fld_str(&fs->f[from + 1]);
	name = sh_fld_str(&fs->f[from + 2]);
	if (fs->f[from + 1].unknown || !sh_valid_name(name, strlen(name)))
		return T_UNKNOWN;
	if (fs->n - from > 3) {
		nargs = fs->n - from - 3;
		args = sh_alloc(sh, sizeof(*args) * (size_t)nargs);
		for (int k = 0; k < nargs; k++)
			args[k] = (char *)sh_fld_str(&fs->f[from + 3 + k]);
	} else {
		nargs = sh->n_pos;
		args = sh->pos;
	}
	{
		struct sh_var *v = sh_var_find(sh, "OPTIND");

		ind_s = v && v->n > 0 ? v->vals[0] : "1";
		iu = v && v->n > 0 && v->unk[0];
	}
	ind = atoi(ind_s);
	if (iu || ind < 1) {
		sh_var_set(sh, name, "?", true, line, s->file);
		return T_UNKNOWN;
	}
	/* OPTIND set by the script (OPTIND=1 to parse again) starts a word anew. */
	if (ind != sh->opt_ind)
		sh->opt_sub = 0;
	silent = opts[0] == ':';
	if (silent)
		opts++;
	if (ind > nargs || (sh->opt_sub == 0 && (args[ind - 1][0] != '-' || !args[ind - 1][1]))) {
		sh_var_set(sh, name, "?", false, line, s->file);
		return T_FALSE;
	}
	arg = args[ind - 1];
	if (sh->opt_sub == 0 && !strcmp(arg, "--")) {
		ind++;
		adv_snprintf(buf, sizeof(buf), "%d", ind);
		sh_var_set(sh, "OPTIND", buf, false, line, s->file);
		sh->opt_ind = ind;
		sh_var_set(sh, name, "?", false, line, s->file);
		return T_FALSE;
	}
	if (sh->opt_sub == 0)
		sh->opt_sub = 1;
	c[0] = arg[sh->opt_sub++];
	hit = c[0] != ':' ? strchr(opts, c[0]) : NULL;
	if (!arg[sh->opt_sub]) {
		ind++;
		sh->opt_sub = 0;
	}
	if (!hit) {
		sh_var_set(sh, name, "?", false, line, s->file);
		if (silent)
			sh_var_set(sh, "OPTARG", c, false, line, s->file);
		else
			sh_var_unset(sh, "OPTARG");
	} else if (hit[1] == ':') {
		if (sh->opt_sub > 0) {
			/* -mVALUE */
			sh_var_set(sh, "OPTARG", arg + sh->opt_sub, false, line, s->file);
			ind++;
			sh->opt_sub = 0;
			sh_var_set(sh, name, c, false, line, s->file);
		} else if (ind <= nargs) {
			sh_var_set(sh, "OPTARG", args[ind - 1], false, line, s->file);
			ind++;
			sh_var_set(sh, name, c, false, line, s->file);
		} else if (silent) {
			sh_var_set(sh, name, ":", false, line, s->file);
			sh_var_set(sh, "OPTARG", c, false, line, s->file);
		} else {
			sh_var_set(sh, name, "?", false, line, s->file);
			sh_var_unset(sh, "OPTARG");
		}
	} else {
		sh_var_set(sh, name, c, false, line, s->file);
		sh_var_unset(sh, "OPTARG");
	}
	adv_snprintf(buf, sizeof(buf), "%d", ind);
	sh_var_set(sh, "OPTIND", buf, false, line, s->file);
	sh->opt_ind = ind;
	return T_TRUE;
}

/* ---- read with its input in the script ---------------------------------------------
 *
 * read -r -d '' CMD <<EOF ... EOF (a command written over several lines
 * into a variable), read -r LINE <<< "$S", IFS=, read -ra A <<< "$LIST":
 * the input is the here-document or here-string, known when its text is.
 * It follows bash's read builtin (builtins/read.def, bash 5.2): the input
 * up to the delimiter (-d DELIM: its first character; -d '': NUL, which a
 * here-document never holds, so all of it); without -r, backslash-newline
 * is removed and a backslash keeps the next character (taken here before
 * splitting, so an escaped IFS character still splits: a simplification);
 * leading IFS white space goes, the text is split on IFS into the names,
 * the last name taking the rest less its trailing IFS white space (IFS
 * empty: no splitting); -a NAME takes every field as an array.  The status
 * is 1 when the input ends before the delimiter (read -d '' always, hence
 * the "|| true" scripts write), 0 otherwise.  Every value keeps the line
 * it was written on.  -n, -N, -t and -u (input from elsewhere, counted
 * characters) and any other input are not followed: the names are unknown.
 */

#define RD_NAMES 64

struct rd_opts {
	bool raw;
	char delim;
	const char *array;
	const char *names[RD_NAMES];
	int n_names;
};

/* The options and names of read; false when the input is not the text. */
static bool rd_parse(struct sh_fields *fs, int from, struct rd_opts *o)
{
	int k = from + 1;

	memset(o, 0, sizeof(*o));
	o->delim = '\n';
	for (; k < fs->n; k++) {
		const char *a = sh_fld_str(&fs->f[k]);

		if (fs->f[k].unknown)
			return false;
		if (!strcmp(a, "--")) {
			k++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		for (const char *p = a + 1; *p; p++) {
			const char *arg;

			if (*p == 'r')
				o->raw = true;
			if (*p == 'r' || *p == 's' || *p == 'e')
				continue;
			if (!strchr("adpi", *p))
				return false;   /* -n -N -t -u and unknown letters */
			arg = p[1] ? p + 1 : k + 1 < fs->n ? sh_fld_str(&fs->f[++k]) : NULL;
			if (!arg || fs->f[k].unknown)
				return false;
			if (*p == 'a')
				o->array = arg;
			else if (*p == 'd')
				o->delim = arg[0];
			break;
		}
	}
	for (; k < fs->n && o->n_names < RD_NAMES; k++) {
		const char *a = sh_fld_str(&fs->f[k]);

		if (fs->f[k].unknown || !sh_valid_name(a, strlen(a)))
			return false;
		o->names[o->n_names++] = a;
	}
	if (o->array && !sh_valid_name(o->array, strlen(o->array)))
		return false;
	if (!o->array && o->n_names == 0)
		o->names[o->n_names++] = "REPLY";
	return true;
}

/* The input of read when the script holds it: a here-document or a
 * here-string (its word expanded, and a newline, as bash adds one). */
static const char *rd_input(struct sh *sh, const struct sh_src *s, const struct sh_simple *c,
			    size_t *len, const struct sh_lmap **map, int *line, bool *unk)
{
	for (int k = c ? c->n_redirs - 1 : -1; k >= 0; k--) {
		const struct sh_redir *r = &c->redirs[k];

		if (r->body) {
			*line = r->body_line > 0 ? r->body_line : r->target.line;
			return sh_heredoc_text(sh, r, s->file, len, map, unk);
		}
		if (!strcmp(r->op, "<<<")) {
			struct sh_field f;
			const struct sh_lmap *m = NULL;
			const char *w = sh_expand_str_m(sh, r->target.t, r->target.n, 0, r->target.line,
							s->file, unk, &m);

			memset(&f, 0, sizeof(f));
			sh_fld_add_range(sh, &f, w, 0, strlen(w), m, r->target.line, s->file);
			sh_fld_addc(sh, &f, '\n');
			*map = sh_fld_map(sh, &f);
			*line = r->target.line;
			*len = f.len;
			return sh_fld_str(&f);
		}
		if (r->op[0] == '<')
			return NULL;        /* < file, <&: input from elsewhere */
	}
	return NULL;
}

/* The IFS that read splits on: the command's own IFS=..., else the
 * variable; NULL when it is not known. */
static const char *rd_ifs(struct sh *sh, char **assign, int n_assign)
{
	const struct sh_var *v;

	for (int k = n_assign - 1; k >= 0; k--)
		if (!strncmp(assign[k], "IFS=", 4))
			return assign[k] + 4;
	v = sh_var_find(sh, "IFS");
	if (!v || v->n == 0)
		return " \t\n";
	return v->unk[0] ? NULL : v->vals[0];
}

static void rd_set(struct sh *sh, const char *name, int idx, const struct sh_field *f, bool unk,
		   int line, const char *file)
{
	struct sh_var *v = sh_var_get(sh, name);

	/* idx < 0: a scalar */
	if (idx < 0) {
		v->array = false;
		v->n = 0;
		idx = 0;
	}
	sh_var_set_at_m(sh, v, idx, sh_fld_str(f), unk, f->n_runs ? f->runs[0].line : line,
			f->n_runs && f->runs[0].file ? f->runs[0].file : file, false, sh_fld_map(sh, f));
}

/* false when the input is not followed (the names are then unknown). */
static bool builtin_read(struct sh *sh, struct sh_src *s, int line, const struct sh_simple *c,
			 struct sh_fields *fs, int from, char **assign, int n_assign, int *status)
{
	struct rd_opts o;
	struct sh_field in, val;
	const struct sh_lmap *map = NULL, *im;
	const char *text, *ifs;
	size_t len = 0, n, i = 0;
	int tl = line, lcur;
	bool unk = false, found = false;

	if (!rd_parse(fs, from, &o) || !(ifs = rd_ifs(sh, assign, n_assign)) ||
	    !(text = rd_input(sh, s, c, &len, &map, &tl, &unk)))
		return false;
	/* Up to the delimiter, the escapes done: the line read, with the line
	 * of each part. */
	memset(&in, 0, sizeof(in));
	lcur = tl;
	for (size_t k = 0; k < len; k++) {
		const char *pf = s->file;
		int pl = map ? sh_map_line(map, k, tl, &pf) : lcur;

		sh_step(sh);
		if (text[k] == o.delim) {
			found = true;
			break;
		}
		if (text[k] == '\n')
			lcur++;
		if (!o.raw && text[k] == '\\' && k + 1 < len) {
			if (text[++k] == '\n') {
				lcur++;
				continue;
			}
		}
		sh_fld_mark(sh, &in, pl, pf);
		sh_fld_addc(sh, &in, text[k]);
	}
	/* bash: 1 at the end of the input before the delimiter, and the
	 * names still set. */
	*status = found ? T_TRUE : T_FALSE;
	text = sh_fld_str(&in);
	n = in.len;
	im = sh_fld_map(sh, &in);
	if (*ifs) {
		while (i < n && strchr(ifs, text[i]) && sh_ifs_ws(text[i]))
			i++;
	}
	if (o.array) {
		struct sh_var *v = sh_var_get(sh, o.array);

		v->n = 0;
		v->array = true;
	}
	for (int k = 0; o.array || k < o.n_names; k++) {
		bool last = !o.array && k == o.n_names - 1;
		size_t a = i, b;

		if (o.array && i >= n)
			break;
		if (k >= 4096) {
			sh_note(sh, s->file, line, "read: more fields than the reader keeps");
			break;
		}
		if (!*ifs || last) {
			b = n;
			while (*ifs && b > a && strchr(ifs, text[b - 1]) && sh_ifs_ws(text[b - 1]))
				b--;
			i = n;
		} else {
			while (i < n && !sh_in_set(ifs, text[i]))
				i++;
			b = i;
			/* the delimiter: IFS white space, at most one other IFS
			 * character, IFS white space */
			while (i < n && sh_in_set(ifs, text[i]) && sh_ifs_ws(text[i]))
				i++;
			if (i < n && sh_in_set(ifs, text[i]) && !sh_ifs_ws(text[i]))
				i++;
			while (i < n && sh_in_set(ifs, text[i]) && sh_ifs_ws(text[i]))
				i++;
		}
		memset(&val, 0, sizeof(val));
		sh_fld_add_range(sh, &val, text, a, b, im, in.n_runs ? in.runs[0].line : tl, s->file);
		rd_set(sh, o.array ? o.array : o.names[k], o.array ? k : -1, &val, unk, tl, s->file);
	}
	return true;
}

/* cd DIR, pushd DIR, popd: the working directory that pwd and $(pwd)
 * give; PWD follows, as bash sets it. */
static void builtin_cd(struct sh *sh, struct sh_src *s, int line, struct sh_fields *fs, int from)
{
	const char *w = sh_fld_str(&fs->f[from]), *dir = NULL, *to = NULL;
	bool known = w[0] != 'p' || w[1] != 'o';   /* popd: the stack is not kept */

	for (int k = from + 1; k < fs->n && known; k++) {
		const char *a = sh_fld_str(&fs->f[k]);

		if (a[0] == '-' && (a[1] == 'P' || a[1] == 'L') && !a[2])
			continue;
		if (fs->f[k].unknown || !strcmp(a, "-") || dir)
			known = false;
		dir = a;
	}
	if (known && !dir) {
		struct sh_var *h = sh_var_find(sh, "HOME");

		if (h && h->n > 0 && !h->unk[0])
			dir = h->vals[0];
	}
	if (known && dir && *dir && sh->uncertain == 0)
		to = sh_path_resolve(sh, sh->cwd, dir);
	sh->cwd = to;
	if (to)
		sh_var_set(sh, "PWD", to, false, line, s->file);
	else
		sh_var_set(sh, "PWD", "$(pwd...)", true, line, s->file);
}

/*
 * A word of export/declare that is no assignment as written but becomes
 * one once expanded: export "$KEY"="$VALUE" in a loop over the script's
 * KEY=VALUE arguments, export "$@".  bash expands the word, then takes
 * each field NAME=value as an assignment (bash manual, "Bash Builtin
 * Commands", declare: arguments are expanded first).  A field whose name
 * is not known assigns nothing the reader can name, so it is noted.
 */
static void decl_expanded(struct sh *sh, const struct sh_src *s, const struct sh_raw *w, bool exp)
{
	struct sh_fields fs = { NULL, 0, 0 };

	sh_expand_word(sh, w->t, w->n, w->line, s->file, X_SPLIT, &fs);
	for (int k = 0; k < fs.n; k++) {
		const struct sh_field *f = &fs.f[k];
		const char *v = sh_fld_str(f), *eq = strchr(v, '=');
		char name[128];
		size_t nl = eq ? (size_t)(eq - v) : 0;

		if (!eq || nl == 0 || nl >= sizeof(name) || !sh_valid_name(v, nl)) {
			if (f->unknown)
				sh_note(sh, s->file, w->line, "an export of a name not known");
			continue;
		}
		memcpy(name, v, nl);
		name[nl] = '\0';
		{
			struct sh_var *var = sh_var_get(sh, name);
			const struct sh_lmap *m = sh_fld_map(sh, f);
			struct sh_field val;

			/* the value keeps the line it was written on (the
			 * script's argument, the caller's line) */
			memset(&val, 0, sizeof(val));
			sh_fld_add_range(sh, &val, v, nl + 1, f->len, m,
					 f->n_runs ? f->runs[0].line : f->line,
					 f->n_runs && f->runs[0].file ? f->runs[0].file : f->file);
			var->array = false;
			var->n = 0;
			sh_var_set_at_m(sh, var, 0, sh_fld_str(&val), f->unknown,
					val.n_runs ? val.runs[0].line : w->line,
					val.n_runs && val.runs[0].file ? val.runs[0].file : s->file, false,
					sh_fld_map(sh, &val));
			if (exp)
				var->exported = true;
		}
	}
}

static bool is_decl(const char *w)
{
	return !strcmp(w, "export") || !strcmp(w, "declare") || !strcmp(w, "typeset") ||
	       !strcmp(w, "local") || !strcmp(w, "readonly");
}

/* Builtins that only change the shell's state, and commands that say
 * nothing about the job: not recorded. */
static bool is_quiet(const char *w)
{
	static const char *const q[] = {
		":", "true", "false", "cd", "pushd", "popd", "set", "shopt", "trap", "ulimit",
		"umask", "wait", "return", "alias", "unalias", "hash", "exit", "break", "continue",
		"let", "getopts", NULL,
	};

	for (int k = 0; q[k]; k++)
		if (!strcmp(q[k], w))
			return true;
	return false;
}

/* The NAME of a raw word that is only an expansion of it: $NAME,
 * ${NAME}, "$NAME", "${NAME}", ${NAME[@]}, "${NAME[@]}". */
static bool raw_var_name(const struct sh_raw *r, char *name, size_t len)
{
	const char *t = r->t;
	size_t n = r->n, k = 0;

	if (n >= 2 && t[0] == '"' && t[n - 1] == '"')
		t++, n -= 2;
	if (n < 2 || t[0] != '$')
		return false;
	t++, n--;
	if (t[0] == '{') {
		if (t[n - 1] != '}')
			return false;
		t++, n -= 2;
		if (n > 3 && !memcmp(t + n - 3, "[@]", 3))
			n -= 3;
		else if (n > 3 && !memcmp(t + n - 3, "[*]", 3))
			n -= 3;
	}
	if (!sh_valid_name(t, n) || n >= len)
		return false;
	for (k = 0; k < n; k++)
		name[k] = t[k];
	name[k] = '\0';
	return true;
}

static bool raw_in(const struct sh_raw *r, const char *const *list)
{
	for (int k = 0; list[k]; k++)
		if (raw_is(r, list[k]))
			return true;
	return false;
}

/*
 * A command whose program is a variable not set when it runs: "$LAUNCH
 * ARGS", "srun [OPTIONS] $TRAIN_CMD [$ARGS]", "bash -c \"$CMD\"", "eval
 * $CMD".  The variable expands to nothing, or the job's environment (what
 * sbatch passes, not known here) sets it: the job's command is not known.
 * Kept for sh_unset_command().  Only the program position counts: the
 * first word, the word after eval/exec/command/-c of a shell, or the
 * word of srun/mpirun after which only options and expansions follow.
 */
static void note_unset_program(struct sh *sh, const struct sh_src *s, int line,
			       const struct sh_simple *c)
{
	static const char *const prefix[] = { "eval", "exec", "command", "nohup", "time", NULL };
	static const char *const starters[] = { "srun", "mpirun", "mpiexec", NULL };
	static const char *const shells[] = { "bash", "sh", "/bin/bash", "/bin/sh", NULL };
	char name[64];

	if (sh->n_unset_cmds >= SH_MAX_UNSET || sh->uncertain > 0)
		return;
	for (int k = 0; k < c->n_words; k++) {
		const struct sh_var *v;
		bool prog = k == 0;

		if (!raw_var_name(&c->words[k], name, sizeof(name)))
			continue;
		v = sh_var_find(sh, name);
		if (v && v->n > 0)
			continue;
		if (!prog && k == 1 && raw_in(&c->words[0], prefix))
			prog = true;
		if (!prog && raw_is(&c->words[k - 1], "-c"))
			for (int q = 0; q < k - 1 && !prog; q++)
				prog = raw_in(&c->words[q], shells);
		if (!prog && raw_in(&c->words[0], starters)) {
			prog = true;
			for (int q = k + 1; q < c->n_words && prog; q++)
				prog = c->words[q].n > 0 && (c->words[q].t[0] == '$' || c->words[q].t[0] == '-' ||
							      c->words[q].t[0] == '"');
		}
		if (!prog)
			continue;
		sh->unset_cmds[sh->n_unset_cmds].file = s->file;
		sh->unset_cmds[sh->n_unset_cmds].line = line;
		memcpy(sh->unset_cmds[sh->n_unset_cmds].name, name, sizeof(name));
		sh->n_unset_cmds++;
		return;
	}
}

static int run_fields(struct sh *sh, struct sh_src *s, int line, const struct sh_simple *c,
		      struct sh_fields *fs, int from, char **assign, int n_assign);

static int run_simple(struct sh *sh, struct sh_src *s, int line, struct sh_simple *c)
{
	struct sh_fields fs = { NULL, 0, 0 };
	char **assign = NULL;
	int n_assign = 0;

	/* The pipeline's input is this command's only (not of the commands
	 * a function it calls runs). */
	sh->cur_in = sh->pipe_in;
	sh->pipe_in = NULL;

	if (c->n_words == 0) {
		for (int k = 0; k < c->n_assigns; k++)
			sh_var_assign(sh, &c->assigns[k], c->elems[k], c->n_elems[k], s->file, false);
		return T_TRUE;
	}
	/* export/declare/local ...: their NAME=value words are assignments. */
	if (raw_is(&c->words[0], "export") || raw_is(&c->words[0], "declare") ||
	    raw_is(&c->words[0], "typeset") || raw_is(&c->words[0], "local") ||
	    raw_is(&c->words[0], "readonly")) {
		bool exp = raw_is(&c->words[0], "export");

		/* local (and declare in a function): the old values come back
		 * when the function returns. */
		if (sh->frame > 0 && !exp && !raw_is(&c->words[0], "readonly")) {
			for (int k = 0; k < c->n_assigns + c->n_words - 1; k++) {
				const struct sh_raw *w = k < c->n_assigns ? &c->assigns[k]
								       : &c->words[k - c->n_assigns + 1];
				size_t nl = 0, eq;
				char name[128];

				if (!sh_raw_assignment(w, &nl, &eq)) {
					nl = 0;
					while (nl < w->n && sh_is_name_char(w->t[nl]))
						nl++;
					if (nl != w->n)
						continue;
				}
				if (nl == 0 || nl >= sizeof(name))
					continue;
				memcpy(name, w->t, nl);
				name[nl] = '\0';
				sh_var_save_local(sh, name);
			}
		}

		/* export NAME=V, declare -x NAME=V: the NAME=V words are in
		 * assigns, and exported (what a program the script starts sees:
		 * jr_cmd_env). */
		for (int k = 1; k < c->n_words; k++)
			if (c->words[k].n && c->words[k].t[0] == '-' &&
			    memchr(c->words[k].t, 'x', c->words[k].n))
				exp = true;
		for (int k = 0; k < c->n_assigns; k++)
			sh_var_assign(sh, &c->assigns[k], c->elems[k], c->n_elems[k], s->file, exp);
		for (int k = 1; k < c->n_words; k++) {
			const struct sh_raw *w = &c->words[k];
			size_t nl, eq;

			if (w->n && w->t[0] == '-')
				continue;
			if (sh_raw_assignment(w, &nl, &eq)) {
				sh_var_assign(sh, w, NULL, 0, s->file, exp);
			} else if (sh_valid_name(w->t, w->n)) {
				char name[128];

				if (w->n < sizeof(name)) {
					memcpy(name, w->t, w->n);
					name[w->n] = '\0';
					if (exp)
						sh_var_get(sh, name)->exported = true;
				}
			} else {
				decl_expanded(sh, s, w, exp);
			}
		}
		return T_TRUE;
	}
	note_unset_program(sh, s, line, c);
	for (int k = 0; k < c->n_words; k++)
		sh_expand_word(sh, c->words[k].t, c->words[k].n, c->words[k].line, s->file, X_SPLIT, &fs);
	if (c->n_assigns) {
		assign = sh_alloc(sh, sizeof(*assign) * (size_t)(c->n_assigns + 1));
		for (int k = 0; k < c->n_assigns; k++) {
			const struct sh_raw *r = &c->assigns[k];
			size_t nl, eq;
			bool unk;

			if (!sh_raw_assignment(r, &nl, &eq))
				continue;
			{
				const char *val = sh_expand_str(sh, r->t + eq + 1, r->n - eq - 1, 0, r->line,
								s->file, &unk);
				size_t vl = strlen(val);
				char *a = sh_alloc(sh, nl + vl + 2);

				memcpy(a, r->t, nl);
				a[nl] = '=';
				memcpy(a + nl + 1, val, vl + 1);
				assign[n_assign++] = a;
			}
		}
	}
	if (fs.n == 0) {
		for (int k = 0; k < c->n_assigns; k++)
			sh_var_assign(sh, &c->assigns[k], c->elems[k], c->n_elems[k], s->file, false);
		return T_TRUE;
	}
	return run_fields(sh, s, line, c, &fs, 0, assign, n_assign);
}

static int run_fields(struct sh *sh, struct sh_src *s, int line, const struct sh_simple *c,
		      struct sh_fields *fs, int from, char **assign, int n_assign)
{
	const char *w = sh_fld_str(&fs->f[from]);
	int argc = fs->n - from;
	struct sh_func *fn;

	sh_step(sh);
	if (!strcmp(w, "command") && argc > 1 &&
	    (!strcmp(sh_fld_str(&fs->f[from + 1]), "-v") || !strcmp(sh_fld_str(&fs->f[from + 1]), "-V")))
		return T_UNKNOWN;   /* command -v NAME looks a program up; it runs nothing */
	if (!strcmp(w, "exec") || !strcmp(w, "command") || !strcmp(w, "builtin") ||
	    !strcmp(w, "noglob")) {
		int r;

		if (argc == 1)
			return T_TRUE;   /* exec > log 2>&1: only redirections */
		r = run_fields(sh, s, line, c, fs, from + 1, assign, n_assign);
		/* exec replaces the shell: nothing after it runs. */
		if (w[0] == 'e' && sh->uncertain == 0)
			sh->stop = true;
		return r;
	}
	fn = func_find(sh, w);
	if (fn) {
		call_func(sh, fn, fs, from);
		return T_UNKNOWN;
	}
	if (!strcmp(w, "[") || !strcmp(w, "test")) {
		int n = argc - 1;
		char **a = sh_alloc(sh, sizeof(*a) * (size_t)(n + 1));
		bool *u = sh_alloc(sh, sizeof(*u) * (size_t)(n + 1));
		bool *ne = sh_alloc(sh, sizeof(*ne) * (size_t)(n + 1));

		for (int k = 0; k < n; k++) {
			a[k] = (char *)sh_fld_str(&fs->f[from + 1 + k]);
			u[k] = fs->f[from + 1 + k].unknown;
			ne[k] = fs->f[from + 1 + k].ne;
		}
		if (w[0] == '[' && n > 0 && !strcmp(a[n - 1], "]"))
			n--;
		return sh_cond_eval(sh, a, u, ne, n, false);
	}
	if (!strcmp(w, "true") || !strcmp(w, ":"))
		return T_TRUE;
	if (!strcmp(w, "false"))
		return T_FALSE;
	if (!strcmp(w, "exit")) {
		if (sh->uncertain == 0)
			sh->stop = true;
		return T_FALSE;
	}
	/* return leaves the function or the sourced file; the rest of it does
	 * not run (a guard "[ -n "$SLURM_JOB_ID" ] && return" is common).
	 * Outside both, bash refuses it and goes on. */
	if (!strcmp(w, "return")) {
		if (sh->frame == 0 && sh->files < 2)
			return T_FALSE;
		if (sh->uncertain == 0) {
			sh->ret = true;
			sh->stop = true;
		}
		return argc > 1 && strcmp(sh_fld_str(&fs->f[from + 1]), "0") ? T_FALSE : T_TRUE;
	}
	if (!strcmp(w, "read")) {
		int r;

		if (builtin_read(sh, s, line, c, fs, from, assign, n_assign, &r))
			return r;
	}
	if (!strcmp(w, "read") || !strcmp(w, "readarray") || !strcmp(w, "mapfile")) {
		/* The values come from input only the job sees. */
		for (int k = from + 1; k < fs->n; k++) {
			const char *a = sh_fld_str(&fs->f[k]);

			if (a[0] != '-' && sh_valid_name(a, strlen(a)))
				sh_var_set(sh, a, "$(read...)", true, line, s->file);
		}
		return T_UNKNOWN;
	}
	if (!strcmp(w, "unset")) {
		for (int k = from + 1; k < fs->n; k++)
			if (sh_fld_str(&fs->f[k])[0] != '-')
				sh_var_unset(sh, sh_fld_str(&fs->f[k]));
		return T_TRUE;
	}
	if (!strcmp(w, "shift")) {
		int by = argc > 1 ? atoi(sh_fld_str(&fs->f[from + 1])) : 1;

		if (argc > 1 && fs->f[from + 1].unknown) {
			sh_note(sh, s->file, line, "shift by a count that is not known");
			return T_UNKNOWN;
		}
		/* bash: a count over $# shifts nothing and fails. */
		if (by < 0 || by > sh->n_pos)
			return T_FALSE;
		/* shift 0 with no parameters: pos may be NULL, and NULL + 0
		 * is undefined in C. */
		if (by == 0)
			return T_TRUE;
		sh->pos += by;
		sh->n_pos -= by;
		if (sh->pos_lines) {
			sh->pos_lines += by;
			sh->pos_files += by;
		}
		return T_TRUE;
	}
	if (!strcmp(w, "set"))
		return builtin_set(sh, fs, from);
	if (!strcmp(w, "getopts"))
		return builtin_getopts(sh, s, line, fs, from);
	if (!strcmp(w, "break") || !strcmp(w, "continue")) {
		/* break [n], continue [n]: the loops look at sh->brk/cont. */
		int by = argc > 1 ? atoi(sh_fld_str(&fs->f[from + 1])) : 1;

		if (by < 1 || sh->loops == 0)
			return T_FALSE;
		if (by > sh->loops)
			by = sh->loops;
		if (sh->uncertain > 0) {
			/* It may or may not run: the loop's end is not known. */
			sh->loop_unsure = true;
			return T_UNKNOWN;
		}
		if (w[0] == 'b')
			sh->brk = by;
		else
			sh->cont = by;
		return T_TRUE;
	}
	if (!strcmp(w, "cd") || !strcmp(w, "pushd") || !strcmp(w, "popd")) {
		builtin_cd(sh, s, line, fs, from);
		return T_UNKNOWN;
	}
	if (!strcmp(w, "source") || !strcmp(w, ".")) {
		const char *text;
		size_t len;
		const char *path = argc > 1 ? sh_fld_str(&fs->f[from + 1]) : "";

		if (argc < 2 || fs->f[from + 1].unknown) {
			sh_note(sh, s->file, line, "the file sourced here is not known");
			return T_UNKNOWN;
		}
		if (!sh->open || sh->open(sh->open_arg, path, &text, &len) != 0) {
			sh_note(sh, s->file, line, "%s could not be read; what it sets is unknown", path);
			return T_UNKNOWN;
		}
		{
			int n = argc - 2;
			char **pos = n > 0 ? sh_alloc(sh, sizeof(*pos) * (size_t)(n + 1)) : sh->pos;

			for (int k = 0; k < n; k++)
				pos[k] = (char *)sh_fld_str(&fs->f[from + 2 + k]);
			if (!sh_eval_text(sh, sh_strdup(sh, path), text, len, 1, pos,
					  n > 0 ? n : sh->n_pos, sh->inner > 0))
				return T_FALSE;
		}
		return T_TRUE;
	}
	if (!strcmp(w, "eval")) {
		struct sh_field f = { NULL, 0, 0, false, false, false, 0, NULL, NULL, 0, 0 };

		/* Unknown parts keep their own text ("$(hostname)"), which the
		 * evaluation finds unknown again. */
		for (int k = from + 1; k < fs->n; k++) {
			if (k > from + 1)
				sh_fld_addc(sh, &f, ' ');
			/* each part keeps where it was written */
			sh_fld_add_mapped(sh, &f, sh_fld_str(&fs->f[k]), fs->f[k].len,
					  sh_fld_map(sh, &fs->f[k]),
					  fs->f[k].n_runs ? fs->f[k].runs[0].line : fs->f[k].line,
					  fs->f[k].n_runs ? fs->f[k].runs[0].file : fs->f[k].file);
		}
		eval_field(sh, s, &f, line, sh->pos, sh->n_pos);
		return T_UNKNOWN;
	}
	if (is_decl(w)) {
		/* Reached only through exec/command: ignore. */
		return T_TRUE;
	}
	if (!strcmp(w, "printf") && argc > 3 && !strcmp(sh_fld_str(&fs->f[from + 1]), "-v")) {
		/* printf -v NAME FORMAT ARGS: the text goes to NAME (bash's
		 * builtin), nothing runs. */
		const char *name = sh_fld_str(&fs->f[from + 2]);
		struct sh_field f;
		bool unk = false;

		if (fs->f[from + 2].unknown || !sh_valid_name(name, strlen(name)))
			return T_UNKNOWN;
		for (int k = from + 3; k < fs->n; k++)
			unk = unk || fs->f[k].unknown;
		memset(&f, 0, sizeof(f));
		sh_printf_text(sh, &f, &fs->f[from + 3], fs, from + 4);
		{
			struct sh_var *v = sh_var_get(sh, name);

			v->array = false;
			v->n = 0;
			sh_var_set_at_m(sh, v, 0, sh_fld_str(&f), unk, f.n_runs ? f.runs[0].line : line,
					f.n_runs && f.runs[0].file ? f.runs[0].file : s->file, false,
					sh_fld_map(sh, &f));
		}
		return T_TRUE;
	}
	sh_maybe_vfile(sh, s, line, c, fs, from);
	if (!is_quiet(w)) {
		sh_record(sh, s, line, fs, from, assign, n_assign);
		shell_c(sh, s, line, fs, from, c);
	}
	return T_UNKNOWN;
}

/* ---- reading a simple command ------------------------------------------------------- */

static void raw_push(struct sh *sh, struct sh_raw **arr, int *n, int *cap, struct sh_raw r)
{
	if (*n >= SH_MAX_WORDS)
		sh_fail(sh, SH_ERR_EXPANSION);
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 8;
		struct sh_raw *a = sh_alloc(sh, sizeof(*a) * (size_t)nc);

		if (*n)
			memcpy(a, *arr, sizeof(*a) * (size_t)*n);
		*arr = a;
		*cap = nc;
	}
	(*arr)[(*n)++] = r;
}

/* Parses one simple command from s; runs it when ex. */
int sh_simple_command(struct sh *sh, struct sh_src *s, bool ex)
{
	/* On the stack: it lives only while the command runs, and a script
	 * is mostly simple commands (the arena would keep each one). */
	struct sh_simple cs, *c = &cs;
	int line = s->line, cap_e = 0;

	memset(&cs, 0, sizeof(cs));

	for (;;) {
		size_t end;
		char ch;

		sh_skip_ws(s, false);
		ch = sh_cur(s);
		if (sh_at_end(s) || ch == ';' || ch == '|' || ch == ')' || ch == '\n' ||
		    (ch == '&' && sh_peekc(s, 1) != '>'))
			break;
		sh_step(sh);
		if (sh_at_redirect(s)) {
			if (c->n_redirs < SH_MAX_REDIRS)
				sh_parse_redir(sh, s, &c->redirs[c->n_redirs++]);
			else {
				struct sh_redir dummy;

				sh_parse_redir(sh, s, &dummy);
			}
			continue;
		}
		end = sh_scan_word(s);
		if (end == s->i) {
			sh_adv1(s);        /* a stray '(' or '<' */
			continue;
		}
		{
			struct sh_raw r = { s->t + s->i, end - s->i, s->line };
			size_t nl, eq;

			/* Assignments come before the command word, or are the
			 * arguments of export/declare/local (NAME=(...) too). */
			bool decl = c->n_words > 0 &&
				    (raw_is(&c->words[0], "export") || raw_is(&c->words[0], "declare") ||
				     raw_is(&c->words[0], "typeset") || raw_is(&c->words[0], "local") ||
				     raw_is(&c->words[0], "readonly"));

			if ((c->n_words == 0 || decl) && sh_raw_assignment(&r, &nl, &eq)) {
				struct sh_raw *elems = NULL;
				int n_el = 0, cap_el = 0;
				bool array = eq + 1 == r.n && end < s->n && s->t[end] == '(';

				sh_adv_to(s, end);
				if (array) {
					sh_adv1(s);
					for (;;) {
						size_t e2;

						sh_skip_ws(s, true);
						if (sh_at_end(s) || sh_cur(s) == ')') {
							sh_adv1(s);
							break;
						}
						e2 = sh_scan_word(s);
						if (e2 == s->i) {
							sh_adv1(s);
							continue;
						}
						raw_push(sh, &elems, &n_el, &cap_el,
							 (struct sh_raw){ s->t + s->i, e2 - s->i, s->line });
						sh_adv_to(s, e2);
					}
				}
				if (c->n_assigns == cap_e) {
					int nc = cap_e ? cap_e * 2 : 4;
					struct sh_raw **ne = sh_alloc(sh, sizeof(*ne) * (size_t)nc);
					int *nn = sh_alloc(sh, sizeof(*nn) * (size_t)nc);

					if (c->n_assigns) {
						memcpy(ne, c->elems, sizeof(*ne) * (size_t)c->n_assigns);
						memcpy(nn, c->n_elems, sizeof(*nn) * (size_t)c->n_assigns);
					}
					c->elems = ne;
					c->n_elems = nn;
					cap_e = nc;
				}
				c->elems[c->n_assigns] = array ? (elems ? elems : sh_alloc(sh, sizeof(*elems)))
							       : NULL;
				c->n_elems[c->n_assigns] = n_el;
				raw_push(sh, &c->assigns, &c->n_assigns, &c->cap_assigns, r);
				continue;
			}
			raw_push(sh, &c->words, &c->n_words, &c->cap_words, r);
			sh_adv_to(s, end);
		}
	}
	if (!ex || sh->stop)
		return T_UNKNOWN;
	return run_simple(sh, s, line, c);
}
