/*
 * expand.c - expansion in the shell evaluator (sh_impl.h): a word as
 * written becomes the fields a command would get.
 *
 * It follows the bash manual's order of expansion ("Shell Expansions"):
 * tilde, parameter ("Shell Parameter Expansion": defaults, alternatives,
 * lengths, pattern cuts with fnmatch(3), literal substitutions, substrings,
 * case changes) and arithmetic expansion (arith.c), then word splitting
 * on IFS white space of the unquoted results only, then quote removal;
 * "${A[@]}" and "$@" give one field per element, "$*" joins.
 * Here-document bodies are expanded as in double quotes, where quotes are
 * plain characters ("Here Documents").  Command substitution is never
 * run: its value is unknown, and it keeps its own text ("$(hostname...)")
 * so that a string evaluated again (bash -c, eval) finds it unknown again.
 * Brace expansion and filename expansion (globbing) are not done: their
 * words stay as written.
 */
#include "config.h"

#include <ctype.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sh_impl.h"
#include "util.h"

/* ---- fields out of expansions ------------------------------------------------------- */

/* What one expansion yields: one value, or several ("${A[@]}", "$@"). */
struct sh_val {
	int n;
	const char **v;
	const bool *unk;
	const bool *ne;       /* unknown but not empty; may be NULL */
	const int *lines;
	const char *const *files;
	const struct sh_lmap *const *maps;   /* may be NULL */
	bool multi;           /* [@] / $@: one field per element even when quoted */
	/* storage for a single value */
	const char *one;
	bool one_unk, one_ne;
	int one_line;
	const char *one_file;
	const struct sh_lmap *one_map;
};

struct sh_exp {
	struct sh *sh;
	struct sh_fields *out;
	int cur;              /* index of the field being built, -1 when none */
	int line;             /* the line of the text being read (advances over newlines) */
	const char *file;
};

static void val_single(struct sh_val *v, const char *s, bool unk, int line, const char *file)
{
	memset(v, 0, sizeof(*v));
	v->one = s;
	v->one_unk = unk;
	v->one_line = line;
	v->one_file = file;
	v->n = 1;
	v->v = &v->one;
	v->unk = &v->one_unk;
	v->ne = &v->one_ne;
	v->lines = &v->one_line;
	v->files = &v->one_file;
	v->maps = &v->one_map;
}

static struct sh_field *ex_cur(struct sh_exp *e, int line, const char *file)
{
	if (e->cur < 0) {
		sh_flds_new(e->sh, e->out, line, file);
		e->cur = e->out->n - 1;
	}
	return &e->out->f[e->cur];
}

/* Newlines in the word's own text move its line on (multi-line strings). */
static void ex_newlines(struct sh_exp *e, const char *s, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (s[k] == '\n' && e->line > 0)
			e->line++;
}

/* Literal text of the word. */
static void ex_lit(struct sh_exp *e, const char *s, size_t n, bool quoted)
{
	struct sh_field *f = ex_cur(e, e->line, e->file);

	while (n > 0) {
		const char *nl = memchr(s, '\n', n);
		size_t k = nl ? (size_t)(nl - s) + 1 : n;

		sh_fld_mark(e->sh, f, e->line, e->file);
		sh_fld_add(e->sh, f, s, k);
		f->ne = true;
		ex_newlines(e, s, k);
		s += k;
		n -= k;
	}
	if (quoted)
		f->present = true;
}

static void ex_end_field(struct sh_exp *e)
{
	e->cur = -1;
}

/*
 * An expansion's text: split on IFS white space when unquoted in a
 * command word, else appended as it is.  A value that is unknown in part
 * keeps its unknown parts as their own text ("$(hostname)", "${SLURM_JOB_ID}",
 * "$((N*8))"), so when it is split only the pieces holding such a part are
 * unknown: "--nnodes 4 --rdzv_id $SLURM_JOB_ID" still gives "--nnodes 4".
 * A value written over several lines (a multi-line string) gives each
 * piece the line it is on.
 */
static void ex_text_m(struct sh_exp *e, const char *s, bool unk, int line, const char *file,
		      bool split, const struct sh_lmap *map, bool ne)
{
	struct sh_field *f;
	const char *base = s;
	int l = line;

	if (!split) {
		f = ex_cur(e, map ? map->r[0].line : line, file);
		sh_fld_add_mapped(e->sh, f, s, strlen(s), map, line, file);
		f->unknown = f->unknown || unk;
		f->ne = f->ne || (unk ? ne : *s != '\0');
		f->present = true;
		return;
	}
	/* An unknown value with no placeholder in it ("${#X}" of an unknown X)
	 * is unknown in every piece. */
	bool all = unk && !strpbrk(s, "$`");

	while (*s) {
		size_t k;
		bool pu;

		if (sh_ifs_ws(*s)) {
			while (sh_ifs_ws(*s)) {
				if (*s == '\n' && l > 0)
					l++;
				s++;
			}
			ex_end_field(e);
			continue;
		}
		k = 0;
		pu = all;
		while (s[k] && !sh_ifs_ws(s[k])) {
			if (unk && (s[k] == '$' || s[k] == '`'))
				pu = true;
			k++;
		}
		{
			const char *pf = file;
			int pl = map ? sh_map_line(map, (size_t)(s - base), l, &pf) : l;

			f = ex_cur(e, pl, pf);
			sh_fld_mark(e->sh, f, pl, pf);
			sh_fld_add(e->sh, f, s, k);
		}
		f->unknown = f->unknown || pu;
		/* A piece that is the whole unknown value keeps its "not empty". */
		f->ne = f->ne || !pu || (ne && s == base && !s[k]);
		s += k;
	}
}

static void ex_text(struct sh_exp *e, const char *s, bool unk, int line, const char *file,
		    bool split)
{
	ex_text_m(e, s, unk, line, file, split, NULL, false);
}

static void ex_val(struct sh_exp *e, const struct sh_val *v, bool quoted, bool split)
{
	for (int k = 0; k < v->n; k++) {
		/* Unquoted $* and ${A[*]} give one field per element too, as
		 * $@ does (POSIX 2.5.2); only quoted they join into one. */
		if (k > 0 && ((v->multi && (quoted || split)) || (split && !quoted)))
			ex_end_field(e);
		else if (k > 0)
			ex_text(e, " ", false, v->lines[k], v->files[k], false);
		if (v->multi && quoted)
			ex_cur(e, v->lines[k], v->files[k])->present = true;
		ex_text_m(e, v->v[k], v->unk[k], v->lines[k], v->files[k], split && !quoted,
			  v->maps ? v->maps[k] : NULL, v->ne && v->ne[k]);
	}
}

static void expand_into(struct sh *sh, const char *t, size_t n, int flags, struct sh_exp *e);

/* A word expanded to one string (assignment values, operands of ${:-}). */
const char *sh_expand_str_ne(struct sh *sh, const char *t, size_t n, int flags, int line,
			     const char *file, bool *unk, const struct sh_lmap **map, bool *ne)
{
	struct sh_fields fs = { NULL, 0, 0 };
	struct sh_exp e = { sh, &fs, -1, line, file };
	struct sh_field *f;

	if (map)
		*map = NULL;

	sh_xnest_in(sh);
	expand_into(sh, t, n, flags & ~X_SPLIT, &e);
	sh->xnest--;
	if (ne)
		*ne = false;
	if (fs.n == 0) {
		if (unk)
			*unk = false;
		return "";
	}
	/* Several fields (quoted "$@" in an assignment): joined by spaces. */
	f = &fs.f[0];
	for (int k = 1; k < fs.n; k++) {
		sh_fld_addc(sh, f, ' ');
		sh_fld_add_mapped(sh, f, sh_fld_str(&fs.f[k]), fs.f[k].len, sh_fld_map(sh, &fs.f[k]),
				  fs.f[k].n_runs ? fs.f[k].runs[0].line : fs.f[k].line, fs.f[k].file);
		f->unknown = f->unknown || fs.f[k].unknown;
		f->ne = true;
	}
	if (unk)
		*unk = f->unknown;
	if (ne)
		*ne = f->ne;
	if (map)
		*map = sh_fld_map(sh, f);
	if (map && !*map && f->n_runs == 1 && f->runs[0].line > 0 &&
	    (f->runs[0].line != line || (f->runs[0].file && f->runs[0].file != file))) {
		/* All written on one line, not the line of the word: a
		 * here-document's text, a value set elsewhere. */
		struct sh_lmap *m = sh_alloc(sh, sizeof(*m) + sizeof(m->r[0]));

		m->n = 1;
		m->r[0] = f->runs[0];
		m->r[0].off = 0;
		*map = m;
	}
	return sh_fld_str(f);
}

const char *sh_expand_str_m(struct sh *sh, const char *t, size_t n, int flags, int line,
			    const char *file, bool *unk, const struct sh_lmap **map)
{
	return sh_expand_str_ne(sh, t, n, flags, line, file, unk, map, NULL);
}

const char *sh_expand_str(struct sh *sh, const char *t, size_t n, int flags, int line,
			  const char *file, bool *unk)
{
	return sh_expand_str_m(sh, t, n, flags, line, file, unk, NULL);
}

/*
 * What stands for a command substitution's output: "$(scontrol...)".  It
 * has no blanks, so that field splitting keeps it one (unknown) word, and
 * it is itself a command substitution, so that a string evaluated again
 * (bash -c, eval) finds it unknown again.
 */
static const char *cmdsub_placeholder(struct sh *sh, const char *t, size_t n)
{
	char buf[48];
	size_t k = 0, o;
	bool tick = n > 0 && t[0] == '`';

	t += tick ? 1 : 2;
	n = n >= (tick ? 1u : 2u) ? n - (tick ? 1 : 2) : 0;
	while (k < n && (t[k] == ' ' || t[k] == '\t'))
		k++;
	o = (size_t)adv_snprintf(buf, sizeof(buf), "$(");
	while (k < n && o + 6 < sizeof(buf) && !sh_ifs_ws(t[k]) && !sh_in_set(")`|;&<>", t[k]))
		buf[o++] = t[k++];
	memcpy(buf + o, "...)", 5);
	return sh_strdup(sh, buf);
}

/* A command substitution: its output when it is known (cmdsub.c), else
 * its placeholder. */
static void ex_cmdsub(struct sh *sh, struct sh_exp *e, const char *t, size_t n, bool split)
{
	bool unk = false;
	const struct sh_lmap *map = NULL;
	const char *r = sh_cmdsub_known(sh, t, n, e->line, e->file, &unk, &map);

	if (r) {
		/* Unknown output of pwd, dirname, ... is a path: not empty. */
		ex_text_m(e, r, unk, e->line, e->file, split, map, unk);
		return;
	}
	ex_text(e, cmdsub_placeholder(sh, t, n), true, e->line, e->file, false);
}

/* ---- parameter expansion ------------------------------------------------------------ */

static void val_var(struct sh *sh, const char *name, const char *idx, struct sh_val *v, bool *set)
{
	struct sh_var *x = sh_var_find(sh, name);

	memset(v, 0, sizeof(*v));
	*set = x && x->n > 0;
	if (!*set && idx && (!strcmp(idx, "@") || !strcmp(idx, "*"))) {
		/* "${A[@]}" of an empty or unset array: no value at all. */
		v->n = 0;
		v->v = &v->one;
		v->unk = &v->one_unk;
		v->ne = &v->one_ne;
		v->lines = &v->one_line;
		v->files = &v->one_file;
		v->multi = idx[0] == '@';
		return;
	}
	if (!*set) {
		val_single(v, "", false, 0, NULL);
		return;
	}
	if (idx && (!strcmp(idx, "@") || !strcmp(idx, "*"))) {
		v->n = x->n;
		v->v = (const char **)x->vals;
		v->unk = x->unk;
		v->ne = x->ne;
		v->lines = x->lines;
		v->files = (const char *const *)x->files;
		v->maps = x->maps;
		v->multi = idx[0] == '@';
		return;
	}
	if (idx) {
		char *end;
		long k = strtol(idx, &end, 10);

		if (*end || k < 0 || k >= x->n) {
			*set = false;
			val_single(v, "", false, 0, NULL);
			return;
		}
		val_single(v, x->vals[k], x->unk[k], x->lines[k], x->files[k]);
		v->one_map = x->maps[k];
		v->one_ne = x->ne[k];
		return;
	}
	val_single(v, x->vals[0], x->unk[0], x->lines[0], x->files[0]);
	v->one_map = x->maps[0];
	v->one_ne = x->ne[0];
}

/* $1.., $@, $*, $#, $0 and the specials nobody can know ($$, $!, $?, $RANDOM). */
static bool val_special(struct sh *sh, const char *name, struct sh_val *v, bool *set,
			const struct sh_exp *e)
{
	char buf[24];

	if (isdigit((unsigned char)name[0])) {
		long k = strtol(name, NULL, 10);

		*set = k >= 1 && k <= sh->n_pos;
		if (k == 0 && sh->arg0) {
			/* The script's own name (sh_set_args): in a batch job,
			 * Slurm's copy in slurmd's spool directory. */
			val_single(v, sh->arg0, sh->arg0_spool, e->line, e->file);
			v->one_ne = true;
			*set = true;
			if (sh->arg0_spool && !sh->arg0_noted) {
				sh->arg0_noted = true;
				sh_note(sh, e->file, e->line, "$0 is Slurm's copy of the batch script "
					"(slurm_script in slurmd's spool directory), not the submitted file: "
					"a path built from it is not known");
			}
		} else if (k == 0)
			val_single(v, e->file ? e->file : "", false, e->line, e->file), *set = true;
		else if (*set && sh->pos_lines)
			val_single(v, sh->pos[k - 1], false, sh->pos_lines[k - 1], sh->pos_files[k - 1]);
		else
			val_single(v, *set ? sh->pos[k - 1] : "", false, e->line, e->file);
		return true;
	}
	if (!strcmp(name, "@") || !strcmp(name, "*")) {
		const char **vals = sh_alloc(sh, sizeof(*vals) * (size_t)(sh->n_pos + 1));
		bool *unk = sh_alloc(sh, sizeof(*unk) * (size_t)(sh->n_pos + 1));
		int *lines = sh_alloc(sh, sizeof(*lines) * (size_t)(sh->n_pos + 1));
		const char **files = sh_alloc(sh, sizeof(*files) * (size_t)(sh->n_pos + 1));

		for (int k = 0; k < sh->n_pos; k++) {
			vals[k] = sh->pos[k];
			lines[k] = sh->pos_lines ? sh->pos_lines[k] : e->line;
			files[k] = sh->pos_lines ? sh->pos_files[k] : e->file;
		}
		memset(v, 0, sizeof(*v));
		v->n = sh->n_pos;
		v->v = vals;
		v->unk = unk;
		v->lines = lines;
		v->files = files;
		v->multi = name[0] == '@';
		*set = sh->n_pos > 0;
		return true;
	}
	if (!strcmp(name, "#")) {
		adv_snprintf(buf, sizeof(buf), "%d", sh->n_pos);
		val_single(v, sh_strdup(sh, buf), false, e->line, e->file);
		*set = true;
		return true;
	}
	if (!strcmp(name, "$") || !strcmp(name, "!") || !strcmp(name, "?") || !strcmp(name, "-") ||
	    !strcmp(name, "RANDOM") || !strcmp(name, "SECONDS") || !strcmp(name, "BASHPID") ||
	    !strcmp(name, "EPOCHSECONDS")) {
		val_single(v, sh_strdup(sh, name), true, e->line, e->file);
		*set = true;
		return true;
	}
	return false;
}

/* ${V#pat} ${V##pat} ${V%pat} ${V%%pat}: fnmatch(3) over every cut. */
static const char *cut_pattern(struct sh *sh, const char *s, const char *pat, bool prefix,
			       bool longest)
{
	size_t n = strlen(s);
	char *buf = sh_strdup(sh, s);

	for (size_t k = 0; k <= n; k++) {
		size_t len = longest ? n - k : k;

		if (prefix) {
			char c = buf[len];

			buf[len] = '\0';
			if (fnmatch(pat, buf, 0) == 0) {
				buf[len] = c;
				return s + len;
			}
			buf[len] = c;
		} else {
			if (fnmatch(pat, s + (n - len), 0) == 0)
				return sh_strndup(sh, s, n - len);
		}
		sh_step(sh);
	}
	return s;
}

/* ${...}: t[0..n) is what is between the braces. */
static void param(struct sh *sh, const char *t, size_t n, struct sh_exp *e, struct sh_val *v,
		  int flags, bool quoted, bool *emitted)
{
	char name[128], idx[64] = "";
	bool set = false, length = false, has_idx = false;
	size_t i = 0, k = 0;
	struct sh_val base;

	if (n > 0 && t[0] == '#' && n > 1 && t[1] != '}') {
		length = true;
		i = 1;
	}
	if (i < n && (sh_is_name_start(t[i]))) {
		while (i < n && sh_is_name_char(t[i]) && k + 1 < sizeof(name))
			name[k++] = t[i++];
	} else if (i < n && isdigit((unsigned char)t[i])) {
		while (i < n && isdigit((unsigned char)t[i]) && k + 1 < sizeof(name))
			name[k++] = t[i++];
	} else if (i < n && sh_in_set("@*#?$!-", t[i])) {
		name[k++] = t[i++];
	} else {
		/* ${!prefix*} and friends: not worth knowing. */
		val_single(v, sh_strndup(sh, t, n), true, e->line, e->file);
		return;
	}
	name[k] = '\0';
	if (i < n && t[i] == '[') {
		size_t j = i + 1, m = 0;
		bool iu = false;
		const char *ix;

		while (j < n && t[j] != ']')
			j++;
		ix = sh_expand_str(sh, t + i + 1, j - i - 1, 0, e->line, e->file, &iu);
		if (strcmp(ix, "@") && strcmp(ix, "*")) {
			/* An arithmetic index. */
			ix = sh_arith(sh, ix, strlen(ix), e->line, e->file, &iu);
		}
		while (ix[m] && m + 1 < sizeof(idx)) {
			idx[m] = ix[m];
			m++;
		}
		idx[m] = '\0';
		has_idx = true;
		i = j < n ? j + 1 : n;
		if (iu) {
			val_single(v, sh_strndup(sh, t, n), true, e->line, e->file);
			return;
		}
	}
	if (!has_idx && val_special(sh, name, &base, &set, e))
		;
	else
		val_var(sh, name, has_idx ? idx : NULL, &base, &set);
	if (length) {
		char buf[24];
		bool u = false;
		long long len = 0;

		/* ${#@} and ${#*} count the positional parameters, ${#A[@]} the elements. */
		if (base.multi || (has_idx && (idx[0] == '@' || idx[0] == '*')) ||
		    (!has_idx && (name[0] == '@' || name[0] == '*'))) {
			len = base.n;
		} else if (base.n == 0 || !base.v[0]) {
			len = 0;
		} else {
			len = (long long)strlen(base.v[0]);
			u = base.unk[0];
		}
		adv_snprintf(buf, sizeof(buf), "%lld", len);
		val_single(v, sh_strdup(sh, buf), u, e->line, e->file);
		return;
	}
	*v = base;
	if (v->v == &base.one) {
		v->v = &v->one;
		v->unk = &v->one_unk;
		v->ne = &v->one_ne;
		v->lines = &v->one_line;
		v->files = &v->one_file;
		v->maps = &v->one_map;
	}
	if (i >= n)
		return;
	{
		const char *op = t + i;
		bool colon = op[0] == ':';
		const char *w;
		size_t wn;
		bool empty = !set || (v->n == 1 && v->v[0][0] == '\0' && !v->unk[0]);
		bool wu = false;

		if (colon && i + 1 < n && sh_in_set("-=+?", op[1])) {
			w = op + 2;
			wn = n - i - 2;
		} else if (!colon && sh_in_set("-=+?", op[0])) {
			w = op + 1;
			wn = n - i - 1;
			empty = !set;
		} else {
			w = NULL;
			wn = 0;
		}
		if (w) {
			char o = colon ? op[1] : op[0];
			/* Whether the default is taken depends on a value not known:
			 * so is what comes out. */
			bool base_unk = set && v->n == 1 && v->unk[0] && !(v->ne && v->ne[0]);
			/* The operand is a word of its own: its quotes are removed and
			 * protect from splitting, its unquoted expansions are split
			 * unless the whole ${...} is quoted (bash, Parameter Expansion). */
			int ctx = quoted ? (flags & ~(X_SPLIT | X_DQ)) : (flags & ~X_DQ);

			if (o == '-' || o == '=' || o == '?') {
				if (!empty)
					return;
				if (o == '?') {
					/* The job would stop here with a message; its
					 * value is not knowable. */
					val_single(v, "", true, e->line, e->file);
					return;
				}
				if (o == '=' && !has_idx && sh_is_name_start(name[0])) {
					const char *sv = sh_expand_str(sh, w, wn, 0, e->line, e->file, &wu);

					sh_var_set(sh, name, sv, wu, e->line, e->file);
				}
				expand_into(sh, w, wn, ctx, e);
				*emitted = true;
				return;
			}
			/* + */
			if (empty) {
				val_single(v, "", false, e->line, e->file);
			} else if (base_unk) {
				w = sh_expand_str(sh, w, wn, 0, e->line, e->file, &wu);
				val_single(v, w, true, e->line, e->file);
			} else {
				expand_into(sh, w, wn, ctx, e);
				*emitted = true;
			}
			return;
		}
		if (v->multi || v->n != 1) {
			/* Pattern operators on arrays: rare in job scripts. */
			val_single(v, sh_strndup(sh, t, n), true, e->line, e->file);
			return;
		}
		{
			const char *s = v->v[0];
			bool su = v->unk[0];
			const char *res = NULL;

			if (op[0] == '#' || op[0] == '%') {
				bool longest = i + 1 < n && op[1] == op[0];
				const char *pat = sh_expand_str(sh, op + (longest ? 2 : 1),
								n - i - (longest ? 2 : 1), 0, e->line,
								e->file, &wu);

				res = cut_pattern(sh, s, pat, op[0] == '#', longest);
			} else if (op[0] == '/') {
				/* ${V/a/b}, ${V//a/b}: literal patterns only. */
				bool all = i + 1 < n && op[1] == '/';
				const char *rest = op + (all ? 2 : 1), *slash;
				size_t rn = n - i - (all ? 2 : 1);
				const char *pat, *rep = "";
				struct sh_field f = { NULL, 0, 0, false, false, false, 0, NULL, NULL, 0, 0 };

				slash = memchr(rest, '/', rn);
				pat = sh_expand_str(sh, rest, slash ? (size_t)(slash - rest) : rn, 0,
						    e->line, e->file, &wu);
				if (slash)
					rep = sh_expand_str(sh, slash + 1, rn - (size_t)(slash - rest) - 1, 0,
							    e->line, e->file, &wu);
				if (!*pat || strpbrk(pat, "*?[")) {
					su = true;
					res = s;
				} else {
					const char *p = s, *hit;

					sh_fld_add(sh, &f, "", 0);
					while ((hit = strstr(p, pat))) {
						sh_fld_add(sh, &f, p, (size_t)(hit - p));
						sh_fld_add(sh, &f, rep, strlen(rep));
						p = hit + strlen(pat);
						sh_step(sh);
						if (!all)
							break;
					}
					sh_fld_add(sh, &f, p, strlen(p));
					res = sh_fld_str(&f);
				}
			} else if (op[0] == ':') {
				/* ${V:off[:len]} */
				const char *rest = op + 1, *c2 = memchr(rest, ':', n - i - 1);
				bool u1 = false, u2 = false;
				const char *o1 = sh_arith(sh, rest, c2 ? (size_t)(c2 - rest) : n - i - 1,
							  e->line, e->file, &u1);
				long long off = strtoll(o1, NULL, 10), len = LLONG_MAX;
				long long sl = (long long)strlen(s);

				if (c2) {
					const char *o2 = sh_arith(sh, c2 + 1, n - i - 1 - (size_t)(c2 - rest) - 1,
								  e->line, e->file, &u2);

					len = strtoll(o2, NULL, 10);
				}
				if (u1 || u2 || len < 0) {
					su = true;
					res = s;
				} else {
					if (off < 0)
						off = sl + off < 0 ? 0 : sl + off;
					if (off > sl)
						off = sl;
					if (len > sl - off)
						len = sl - off;
					res = sh_strndup(sh, s + off, (size_t)len);
				}
			} else if (op[0] == '^' || op[0] == ',') {
				char *c = sh_strdup(sh, s);
				bool all = i + 1 < n && op[1] == op[0];

				for (size_t q = 0; c[q] && (all || q == 0); q++)
					c[q] = (char)(op[0] == '^' ? toupper((unsigned char)c[q])
								   : tolower((unsigned char)c[q]));
				res = c;
			} else {
				su = true;
				res = sh_strndup(sh, t, n);
			}
			{
				int rl = v->one_line ? v->one_line : e->line;
				const char *rf = v->one_file ? v->one_file : e->file;
				const struct sh_lmap *rm = res == s ? v->one_map : NULL;

				val_single(v, res, su || wu, rl, rf);
				v->one_map = rm;
			}
		}
	}
}

/* One $-construct at t[i] (end e_i): appends what it yields. */
static void dollar(struct sh *sh, const char *t, size_t i, size_t end, struct sh_exp *e,
		   int flags, bool quoted)
{
	struct sh_val v;
	bool split = (flags & X_SPLIT) && !quoted;

	sh_step(sh);
	if (end - i >= 5 && t[i + 1] == '(' && t[i + 2] == '(' && t[end - 1] == ')' &&
	    t[end - 2] == ')') {
		bool unk = false;
		const char *r = sh_arith(sh, t + i + 3, end - i - 5, e->line, e->file, &unk);

		ex_text(e, r, unk, e->line, e->file, split);
		return;
	}
	if (end - i >= 2 && t[i + 1] == '(') {
		/* Command substitution: never run, never guessed. */
		ex_cmdsub(sh, e, t + i, end - i, split);
		return;
	}
	if (end - i >= 3 && t[i + 1] == '{') {
		bool emitted = false;

		sh_xnest_in(sh);
		param(sh, t + i + 2, end - i - 3, e, &v, flags, quoted, &emitted);
		sh->xnest--;
		if (!emitted)
			ex_val(e, &v, quoted, flags & X_SPLIT);
		return;
	}
	if (end - i >= 2 && t[i + 1] == '\'') {
		/* $'...': ANSI-C quoting. */
		struct sh_field *f = ex_cur(e, e->line, e->file);

		f->present = true;
		for (size_t k = i + 2; k + 1 < end; k++) {
			char c = t[k];

			if (c == '\\' && k + 2 < end) {
				char d = t[++k];

				c = d == 'n' ? '\n' : d == 't' ? '\t' : d == 'r' ? '\r' : d;
			}
			sh_fld_addc(sh, f, c);
		}
		return;
	}
	if (end - i >= 2 && t[i + 1] == '"') {
		/* $"...": a translatable string, i.e. a double-quoted one. */
		expand_into(sh, t + i + 1, end - i - 1, flags, e);
		return;
	}
	if (end - i >= 2) {
		char name[128];
		size_t k = end - i - 1 < sizeof(name) - 1 ? end - i - 1 : sizeof(name) - 1;
		bool set;

		memcpy(name, t + i + 1, k);
		name[k] = '\0';
		if (!val_special(sh, name, &v, &set, e))
			val_var(sh, name, NULL, &v, &set);
		if (v.v == &v.one) {
			/* val_single pointed into the local copy: fine, v is local. */
		}
		ex_val(e, &v, quoted, flags & X_SPLIT);
		return;
	}
	ex_lit(e, "$", 1, quoted);
}

/* The inside of "...": $, ` and the escapes \$ \` \" \\ \newline. */
static void dquoted(struct sh *sh, const char *t, size_t n, struct sh_exp *e, int flags)
{
	size_t i = 0;
	/* "${A[@]}" and "$@" alone give no field at all when empty, as in
	 * bash; any other quoted text gives at least an empty one. */
	bool only_at = (n == 2 && !memcmp(t, "$@", 2)) || (n == 4 && !memcmp(t, "${@}", 4)) ||
		       (n >= 5 && t[0] == '$' && t[1] == '{' && !memcmp(t + n - 4, "[@]}", 4) &&
			sh_scan_dollar(t, n, 0, 0) == n);

	if (!only_at)
		ex_cur(e, e->line, e->file)->present = true;
	while (i < n) {
		char c = t[i];

		if (c == '\\' && i + 1 < n && sh_in_set("$`\"\\\n", t[i + 1])) {
			if (t[i + 1] != '\n')
				ex_lit(e, t + i + 1, 1, true);
			else if (e->line > 0)
				e->line++;
			i += 2;
		} else if (c == '$') {
			size_t end = sh_scan_dollar(t, n, i, 0);

			dollar(sh, t, i, end, e, flags, true);
			i = end;
		} else if (c == '`') {
			size_t end = sh_scan_backtick(t, n, i);

			ex_cmdsub(sh, e, t + i, end - i, false);
			i = end;
		} else {
			size_t k = i;

			while (k < n && t[k] != '\\' && t[k] != '$' && t[k] != '`')
				k++;
			if (k == i)
				k++;
			ex_lit(e, t + i, k - i, true);
			i = k;
		}
	}
}

static void expand_into(struct sh *sh, const char *t, size_t n, int flags, struct sh_exp *e)
{
	size_t i = 0;

	if (flags & X_DQ) {
		if (flags & X_HEREDOC) {
			/* Quotes are plain characters in a here-document body. */
			size_t k = 0;

			while (k < n) {
				size_t j = k;

				while (j < n && t[j] != '$' && t[j] != '`' && t[j] != '\\')
					j++;
				if (j > k)
					ex_lit(e, t + k, j - k, true);
				if (j >= n)
					break;
				if (t[j] == '\\') {
					if (j + 1 < n && sh_in_set("$`\\\n", t[j + 1])) {
						if (t[j + 1] != '\n')
							ex_lit(e, t + j + 1, 1, true);
						else if (e->line > 0)
							e->line++;   /* \newline: the text goes on below */
						k = j + 2;
					} else {
						ex_lit(e, "\\", 1, true);
						k = j + 1;
					}
				} else if (t[j] == '$') {
					size_t end = sh_scan_dollar(t, n, j, 0);

					dollar(sh, t, j, end, e, 0, true);
					k = end;
				} else {
					size_t end = sh_scan_backtick(t, n, j);

					ex_cmdsub(sh, e, t + j, end - j, false);
					k = end;
				}
			}
			return;
		}
		dquoted(sh, t, n, e, flags);
		return;
	}
	/* A tilde at the start of a word is $HOME. */
	if (n > 0 && t[0] == '~' && (n == 1 || t[1] == '/')) {
		struct sh_var *h = sh_var_find(sh, "HOME");

		if (h && h->n > 0) {
			ex_text(e, h->vals[0], h->unk[0], e->line, e->file, false);
			i = 1;
		}
	}
	while (i < n) {
		char c = t[i];

		sh_step(sh);
		if (c == '\\') {
			if (i + 1 < n && t[i + 1] != '\n')
				ex_lit(e, t + i + 1, 1, true);
			else if (i + 1 < n && e->line > 0)
				e->line++;
			i += 2;
		} else if (c == '\'') {
			size_t end = sh_scan_squote(t, n, i);

			ex_lit(e, t + i + 1, end - i >= 2 ? end - i - 2 : 0, true);
			i = end;
		} else if (c == '"') {
			size_t end = sh_scan_dquote(t, n, i, 0);

			dquoted(sh, t + i + 1, end - i >= 2 ? end - i - 2 : 0, e, flags);
			i = end;
		} else if (c == '$') {
			size_t end = sh_scan_dollar(t, n, i, 0);

			dollar(sh, t, i, end, e, flags, false);
			i = end;
		} else if (c == '`') {
			size_t end = sh_scan_backtick(t, n, i);

			ex_cmdsub(sh, e, t + i, end - i, (flags & X_SPLIT) != 0);
			i = end;
		} else if ((c == '<' || c == '>') && i + 1 < n && t[i + 1] == '(') {
			/* A process substitution: a pipe's name (/dev/fd/N), known
			 * only when the job runs; its command is not the launch. */
			size_t end = sh_scan_paren(t, n, i + 2, 0);

			ex_text_m(e, "/dev/fd/63", true, e->line, e->file, false, NULL, true);
			i = end;
		} else {
			size_t k = i;

			while (k < n && t[k] != '\\' && t[k] != '\'' && t[k] != '"' && t[k] != '$' &&
			       t[k] != '`' && !((t[k] == '<' || t[k] == '>') && k + 1 < n && t[k + 1] == '('))
				k++;
			ex_lit(e, t + i, k - i, false);
			i = k;
		}
	}
}

/* A command word: fields after splitting; empty unquoted results vanish. */
void sh_expand_word(struct sh *sh, const char *t, size_t n, int line, const char *file,
		    int flags, struct sh_fields *out)
{
	struct sh_exp e = { sh, out, -1, line, file };
	int first = out->n;

	expand_into(sh, t, n, flags, &e);
	/* Drop fields that hold nothing and were never quoted. */
	for (int k = first; k < out->n;) {
		struct sh_field *f = &out->f[k];

		if (f->len == 0 && !f->present && !f->unknown) {
			memmove(f, f + 1, sizeof(*f) * (size_t)(out->n - k - 1));
			out->n--;
		} else {
			k++;
		}
	}
}
