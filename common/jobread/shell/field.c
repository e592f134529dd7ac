/*
 * field.c - fields, the strings expansion builds (bash manual, "Word
 * Splitting": a word expands to zero or more fields): growable strings in
 * the evaluator's arena (mem.c), bounded by max_word, that keep where each
 * part of their text was written.
 *
 * A field made of text from several places (a variable's value holding
 * flags set on another line, ARGS=( ... ) over several lines, NAME+=...)
 * carries a line map: from byte off on, this line of this file.  A
 * recorded command then names, for each of its words, the line a fix
 * should edit (sh_cmd.word_line in sh_types.h).
 */
#include "config.h"

#include <string.h>

#include "sh_impl.h"

static void fld_reserve(struct sh *sh, struct sh_field *f, size_t more)
{
	size_t need = f->len + more + 1;
	char *n;

	if (need > sh->lim.max_word)
		sh_fail(sh, SH_ERR_EXPANSION);
	if (need <= f->cap)
		return;
	f->cap = f->cap ? f->cap * 2 : 32;
	while (f->cap < need)
		f->cap *= 2;
	n = sh_alloc(sh, f->cap);
	if (f->len)
		memcpy(n, f->s, f->len);
	f->s = n;
}

void sh_fld_add(struct sh *sh, struct sh_field *f, const char *s, size_t n)
{
	fld_reserve(sh, f, n);
	memcpy(f->s + f->len, s, n);
	f->len += n;
	f->s[f->len] = '\0';
}

/* From the field's current end on, the text was written at line/file. */
void sh_fld_mark(struct sh *sh, struct sh_field *f, int line, const char *file)
{
	struct sh_lrun *last = f->n_runs ? &f->runs[f->n_runs - 1] : NULL;

	if (line <= 0)
		return;
	if (last && last->line == line && last->file == file)
		return;
	if (last && last->off == f->len) {
		last->line = line;
		last->file = file;
		return;
	}
	if (f->n_runs == f->cap_runs) {
		int cap = f->cap_runs ? f->cap_runs * 2 : 4;
		struct sh_lrun *r = sh_alloc(sh, sizeof(*r) * (size_t)cap);

		if (f->n_runs)
			memcpy(r, f->runs, sizeof(*r) * (size_t)f->n_runs);
		f->runs = r;
		f->cap_runs = cap;
	}
	f->runs[f->n_runs++] = (struct sh_lrun){ f->len, line, file };
}

/* The field's line map (NULL when it was all written on one line). */
const struct sh_lmap *sh_fld_map(struct sh *sh, const struct sh_field *f)
{
	struct sh_lmap *m;

	if (f->n_runs <= 1)
		return NULL;
	m = sh_alloc(sh, sizeof(*m) + sizeof(m->r[0]) * (size_t)f->n_runs);
	m->n = f->n_runs;
	memcpy(m->r, f->runs, sizeof(m->r[0]) * (size_t)f->n_runs);
	return m;
}

/* The line of byte off of a value. */
int sh_map_line(const struct sh_lmap *m, size_t off, int dflt, const char **file)
{
	int line = dflt;

	for (int k = 0; m && k < m->n && m->r[k].off <= off; k++) {
		line = m->r[k].line;
		if (file && m->r[k].file)
			*file = m->r[k].file;
	}
	return line;
}

/* Appends text whose parts were written where map (or line/file) says. */
void sh_fld_add_mapped(struct sh *sh, struct sh_field *f, const char *s, size_t n,
		       const struct sh_lmap *m, int line, const char *file)
{
	if (!m) {
		sh_fld_mark(sh, f, line, file);
		sh_fld_add(sh, f, s, n);
		return;
	}
	for (int k = 0; k < m->n; k++) {
		size_t a = m->r[k].off, b = k + 1 < m->n ? m->r[k + 1].off : n;

		if (a >= n)
			break;
		if (b > n)
			b = n;
		sh_fld_mark(sh, f, m->r[k].line, m->r[k].file ? m->r[k].file : file);
		sh_fld_add(sh, f, s + a, b - a);
	}
}

/* Appends s[a, b) of a value whose parts were written where m (or
 * line/file) says: a slice of a value keeps its lines. */
void sh_fld_add_range(struct sh *sh, struct sh_field *f, const char *s, size_t a, size_t b,
		      const struct sh_lmap *m, int line, const char *file)
{
	if (a >= b)
		return;
	if (!m || m->r[0].off > a) {
		size_t e = m && m->r[0].off < b ? m->r[0].off : b;

		sh_fld_mark(sh, f, line, file);
		sh_fld_add(sh, f, s + a, e - a);
		a = e;
	}
	for (int k = 0; m && k < m->n && a < b; k++) {
		size_t ra = m->r[k].off, rb = k + 1 < m->n ? m->r[k + 1].off : b;

		if (ra < a)
			ra = a;
		if (rb > b)
			rb = b;
		if (ra >= rb)
			continue;
		sh_fld_mark(sh, f, m->r[k].line, m->r[k].file ? m->r[k].file : file);
		sh_fld_add(sh, f, s + ra, rb - ra);
	}
}

void sh_fld_addc(struct sh *sh, struct sh_field *f, char c)
{
	sh_fld_add(sh, f, &c, 1);
}

const char *sh_fld_str(const struct sh_field *f)
{
	return f->s ? f->s : "";
}

struct sh_field *sh_flds_new(struct sh *sh, struct sh_fields *fs, int line, const char *file)
{
	struct sh_field *f;

	if (fs->n == fs->cap) {
		int cap = fs->cap ? fs->cap * 2 : 2;
		struct sh_field *n;

		if (cap > SH_MAX_FIELDS)
			sh_fail(sh, SH_ERR_EXPANSION);
		n = sh_alloc(sh, sizeof(*n) * (size_t)cap);
		if (fs->n)
			memcpy(n, fs->f, sizeof(*n) * (size_t)fs->n);
		fs->f = n;
		fs->cap = cap;
	}
	f = &fs->f[fs->n++];
	memset(f, 0, sizeof(*f));
	f->line = line;
	f->file = file;
	return f;
}
