/*
 * record.c - what the shell evaluator records (sh_impl.h): each simple
 * command it would run (struct sh_cmd: fields, which are unknown, the
 * line each word was written on), and the files a here-document or echo
 * writes (virtual files, struct sh_vfile), with the here-document's text
 * as the command reads it.
 *
 * Here-documents follow the bash manual, "Here Documents": the body is
 * expanded unless the delimiter is quoted, and <<- strips leading tabs.
 * "cat > F <<EOF", "cat <<EOF > F", "tee [-a] F <<EOF", "echo ... > F" and
 * "printf FORMAT ARGS > F" (bash's printf builtin: format escapes, %s %b
 * %d %c %%, the format used again while arguments are left) become F's
 * content (>> appends), so that a config or driver script the script
 * writes is read as the script wrote it, each part with the line that
 * wrote it (sh_vfile.map).  A path that is not known writes nothing.
 * Not redirected, what cat of a here-document, echo or printf writes goes
 * down the pipeline (sh->pipe_out, bash manual "Pipelines"): tee writes it
 * to its file and passes it on, a shell runs it as its script.
 * A command that a loop runs again with the same words is recorded once
 * (loop_seen).
 */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "sh_impl.h"
#include "shell.h"

/* A name no script can give a file (shell.h): compared by address. */
const char sh_mark_file[] = "(the batch shell's environment)";

static bool same_argv(const struct sh_cmd *c, struct sh_fields *fs, int from)
{
	if (c->argc != fs->n - from)
		return false;
	for (int k = 0; k < c->argc; k++)
		if (strcmp(c->argv[k], sh_fld_str(&fs->f[from + k])))
			return false;
	return true;
}

/*
 * A command a loop runs again.  The same words at the same place (or, for
 * the text of eval and bash -c, made anew each time, on the same line)
 * are recorded once: a loop that runs srun 100 times gives one srun.
 * Other words at the same place (for m in a b; do vllm serve $m & done)
 * are recorded too, as each is a command the job runs, up to
 * SH_LOOP_VARIANTS per place, so that a long loop cannot fill
 * max_commands and stop the evaluation; past that a note says that the
 * later runs are not read.
 */
#define SH_LOOP_VARIANTS 16

static bool loop_seen(struct sh *sh, const struct sh_src *s, int line, struct sh_fields *fs,
		      int from)
{
	const char *at = s->t + s->i;
	struct sh_cmd_rec *r = sh->loop_mark ? sh->loop_mark->next : sh->cmds, *first = NULL;
	int variants = 0;

	for (; r; r = r->next) {
		sh_step(sh);
		if (r->loop_id != sh->loop_id)
			continue;
		if (r->at == at || (r->pub.line == line && r->pub.file == s->file)) {
			if (same_argv(&r->pub, fs, from))
				return true;
			if (r->at == at) {
				variants++;
				first = first ? first : r;
			}
		}
	}
	if (variants < SH_LOOP_VARIANTS)
		return false;
	if (!first->noted) {
		first->noted = true;
		sh_note(sh, s->file, line, "a loop runs this command with other arguments more than "
			"%d times; the later runs are not read", SH_LOOP_VARIANTS);
	}
	return true;
}

void sh_record(struct sh *sh, const struct sh_src *s, int line, struct sh_fields *fs, int from,
	       char **assign, int n_assign)
{
	struct sh_cmd_rec *r;
	int argc = fs->n - from;
	char **argv;
	bool *unk, *mk;
	int *wl;
	const char **wf;

	if (argc <= 0)
		return;
	if (sh->loops > 0 && loop_seen(sh, s, line, fs, from))
		return;
	if (++sh->n_cmds > sh->lim.max_commands)
		sh_fail(sh, SH_ERR_COMMANDS);
	r = sh_alloc(sh, sizeof(*r));
	argv = sh_alloc(sh, sizeof(*argv) * (size_t)(argc + 1));
	unk = sh_alloc(sh, sizeof(*unk) * (size_t)argc);
	wl = sh_alloc(sh, sizeof(*wl) * (size_t)argc);
	wf = sh_alloc(sh, sizeof(*wf) * (size_t)argc);
	mk = sh_alloc(sh, sizeof(*mk) * (size_t)argc);
	for (int k = 0; k < argc; k++) {
		struct sh_field *f = &fs->f[from + k];

		mk[k] = f->file == sh_mark_file;
		for (int q = 0; q < f->n_runs && !mk[k]; q++)
			mk[k] = f->runs[q].file == sh_mark_file;

		argv[k] = (char *)sh_fld_str(f);
		unk[k] = f->unknown;
		wl[k] = f->n_runs ? f->runs[0].line : f->line;
		wf[k] = f->n_runs && f->runs[0].file ? f->runs[0].file : f->file ? f->file : s->file;
	}
	r->pub.file = s->file;
	r->pub.line = line;
	if (sh->eval_line > 0 && sh->eval_file &&
	    (line < sh->eval_line || !s->file || strcmp(s->file, sh->eval_file))) {
		/* Written before the eval or bash -c that runs it: it runs there. */
		r->pub.file = sh->eval_file;
		r->pub.line = sh->eval_line;
	}
	r->pub.argc = argc;
	r->pub.argv = argv;
	r->pub.unknown = unk;
	r->pub.word_line = wl;
	r->pub.word_file = wf;
	r->pub.marked = mk;
	r->pub.assign = assign;
	r->pub.n_assign = n_assign;
	r->pub.inner = sh->inner > 0;
	r->pub.uncertain = sh->uncertain > 0;
	r->at = s->t + s->i;
	r->loop_id = sh->loops > 0 ? sh->loop_id : 0;
	if (sh->cmds_tail) {
		sh->cmds_tail->next = r;
		sh->cmds_tail->pub.next = &r->pub;
	} else {
		sh->cmds = r;
	}
	sh->cmds_tail = r;
}

static struct sh_vfile_rec *vfile_lookup(struct sh *sh, const char *path)
{
	struct sh_vfile_rec *hit = NULL;

	for (struct sh_vfile_rec *v = sh->vfiles; v; v = v->next)
		if (!strcmp(v->pub.path, path))
			hit = v;
	return hit;
}

/* A map that names every part of text: m, or the line of the command
 * that wrote it. */
static const struct sh_lmap *full_map(struct sh *sh, const struct sh_lmap *m, int line,
				      const char *file)
{
	struct sh_lmap *one;

	if (m)
		return m;
	one = sh_alloc(sh, sizeof(*one) + sizeof(one->r[0]));
	one->n = 1;
	one->r[0] = (struct sh_lrun){ 0, line, file };
	return one;
}

static void vfile_write(struct sh *sh, const struct sh_src *s, int line, const char *path,
			const char *text, size_t len, bool append, const struct sh_lmap *map)
{
	struct sh_vfile_rec *v = append ? vfile_lookup(sh, path) : NULL;

	map = full_map(sh, map, line, s->file);
	if (v) {
		/* >>: the text before keeps its lines */
		struct sh_field f;

		memset(&f, 0, sizeof(f));
		sh_fld_add_range(sh, &f, v->pub.text, 0, v->pub.len, v->pub.map, v->pub.line,
				 v->pub.file);
		sh_fld_add_range(sh, &f, text, 0, len, map, line, s->file);
		v->pub.text = sh_fld_str(&f);
		v->pub.len = f.len;
		v->pub.map = full_map(sh, sh_fld_map(sh, &f), f.n_runs ? f.runs[0].line : line,
				      f.n_runs && f.runs[0].file ? f.runs[0].file : s->file);
		return;
	}
	v = sh_alloc(sh, sizeof(*v));
	v->pub.path = sh_strdup(sh, path);
	v->pub.text = sh_strndup(sh, text, len);
	v->pub.len = len;
	v->pub.file = s->file;
	v->pub.line = line;
	v->pub.map = map;
	if (sh->vfiles_tail) {
		sh->vfiles_tail->next = v;
		sh->vfiles_tail->pub.next = &v->pub;
	} else {
		sh->vfiles = v;
	}
	sh->vfiles_tail = v;
}

/* A map of text written as it is from line on: one entry per line. */
static const struct sh_lmap *lines_map(struct sh *sh, const char *t, size_t n, int line,
				       const char *file)
{
	struct sh_field f;

	memset(&f, 0, sizeof(f));
	for (size_t k = 0; k < n;) {
		const char *nl = memchr(t + k, '\n', n - k);
		size_t e = nl ? (size_t)(nl - t) + 1 : n;

		sh_fld_mark(sh, &f, line++, file);
		sh_fld_add(sh, &f, t + k, e - k);
		k = e;
	}
	if (f.n_runs == 0)
		return NULL;
	{
		struct sh_lmap *m = sh_alloc(sh, sizeof(*m) + sizeof(m->r[0]) * (size_t)f.n_runs);

		m->n = f.n_runs;
		memcpy(m->r, f.runs, sizeof(m->r[0]) * (size_t)f.n_runs);
		return m;
	}
}

const char *sh_heredoc_text(struct sh *sh, const struct sh_redir *r, const char *file,
			    size_t *len, const struct sh_lmap **map, bool *unk)
{
	const char *body = r->body;
	size_t n = r->body_len;
	int line = r->body_line > 0 ? r->body_line : 1;
	struct sh_field f = { NULL, 0, 0, false, false, false, 0, NULL, NULL, 0, 0 };

	if (map)
		*map = NULL;
	if (unk)
		*unk = false;
	if (r->strip_tabs) {
		/* <<-: leading tabs of every line go. */
		for (size_t k = 0; k < n;) {
			size_t e = k;

			while (k < n && body[k] == '\t')
				k++;
			e = k;
			while (e < n && body[e] != '\n')
				e++;
			sh_fld_add(sh, &f, body + k, e - k + (e < n ? 1 : 0));
			k = e + 1;
		}
		body = sh_fld_str(&f);
		n = f.len;
	}
	if (r->quoted) {
		*len = n;
		if (map)
			*map = lines_map(sh, body, n, line, file);
		return body;
	}
	{
		bool u = false;
		const char *t = sh_expand_str_m(sh, body, n, X_DQ | X_HEREDOC, line, file, &u, map);

		if (unk)
			*unk = u;
		*len = strlen(t);
		/* All on one line: the map still names it (the body is not on
		 * the line of its <<). */
		if (map && !*map)
			*map = lines_map(sh, t, *len, line, file);
		return t;
	}
}

/* A backslash escape of printf's format (or of %b's argument) at p:
 * appends it and returns the characters it took. */
static size_t printf_escape(struct sh *sh, struct sh_field *f, const char *p)
{
	static const char from[] = "ntr\\\"'avfb", to[] = "\n\t\r\\\"'\a\v\f\b";
	const char *hit = p[1] ? strchr(from, p[1]) : NULL;

	if (hit) {
		sh_fld_addc(sh, f, to[hit - from]);
		return 2;
	}
	sh_fld_addc(sh, f, '\\');
	return 1;
}

/*
 * printf FORMAT ARGS as bash's builtin writes it (bash manual, "Bash
 * Builtin Commands", printf): the escapes of the format, %s %b %d %i %c
 * %% (flags and widths read and left out: a driver script's text, not a
 * table), the format used again while arguments are left, a missing
 * argument empty.
 */
void sh_printf_text(struct sh *sh, struct sh_field *f, const struct sh_field *ff,
		    struct sh_fields *fs, int arg)
{
	const char *fmt = sh_fld_str(ff);
	int fl = ff->n_runs ? ff->runs[0].line : ff->line;
	const char *ffile = ff->n_runs && ff->runs[0].file ? ff->runs[0].file : ff->file;

	for (int round = 0; round < 4096; round++) {
		int used = arg;

		for (const char *p = fmt; *p;) {
			const char *a;
			const struct sh_field *af = NULL;

			sh_step(sh);
			sh_fld_mark(sh, f, fl, ffile);
			if (*p == '\\') {
				p += printf_escape(sh, f, p);
				continue;
			}
			if (*p != '%') {
				sh_fld_addc(sh, f, *p++);
				continue;
			}
			p++;
			if (*p == '%') {
				sh_fld_addc(sh, f, *p++);
				continue;
			}
			while (*p && strchr("-+ #0123456789.", *p))
				p++;
			if (!*p)
				break;
			if (used < fs->n)
				af = &fs->f[used++];
			a = af ? sh_fld_str(af) : "";
			if (*p == 'b') {
				for (const char *q = a; *q;)
					q += *q == '\\' ? printf_escape(sh, f, q) : (sh_fld_addc(sh, f, *q), 1);
			} else if (*p == 'c') {
				if (*a)
					sh_fld_addc(sh, f, *a);
			} else if ((*p == 'd' || *p == 'i') && !*a) {
				sh_fld_addc(sh, f, '0');
			} else if (af) {
				/* an argument keeps the lines it was written on */
				sh_fld_add_range(sh, f, a, 0, af->len, sh_fld_map(sh, af),
						 af->n_runs ? af->runs[0].line : af->line,
						 af->n_runs && af->runs[0].file ? af->runs[0].file : af->file);
			}
			p++;
		}
		/* Again while arguments are left, if the format took any. */
		if (used == arg || used >= fs->n)
			break;
		arg = used;
	}
}

/* cat/tee with a here-document, or echo or printf, writing a file: a
 * virtual file. */
void sh_maybe_vfile(struct sh *sh, const struct sh_src *s, int line, const struct sh_simple *c,
		    struct sh_fields *fs, int from)
{
	const char *prog = fs->n > from ? sh_fld_str(&fs->f[from]) : "";
	const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	const struct sh_redir *here = NULL, *out = NULL;
	const char *path = NULL, *text = NULL;
	const struct sh_lmap *map = NULL;
	size_t len = 0;
	bool append = false, unk = false, cat_args = false;
	struct sh_field f = { NULL, 0, 0, false, false, false, 0, NULL, NULL, 0, 0 };

	for (int k = 0; k < c->n_redirs; k++) {
		const struct sh_redir *r = &c->redirs[k];

		if (r->body)
			here = r;
		else if ((!strcmp(r->op, ">") || !strcmp(r->op, ">>") || !strcmp(r->op, ">|")) &&
			 r->target.n && !isdigit((unsigned char)r->target.t[0]))
			out = r;
	}
	if (!strcmp(base, "tee")) {
		for (int k = from + 1; k < fs->n; k++) {
			const char *w = sh_fld_str(&fs->f[k]);

			if (w[0] == '-') {
				append = append || !strcmp(w, "-a") || !strcmp(w, "--append");
				continue;
			}
			path = w;
			unk = fs->f[k].unknown;
			break;
		}
	}
	for (int k = from + 1; !strcmp(base, "cat") && k < fs->n; k++)
		cat_args = cat_args || strcmp(sh_fld_str(&fs->f[k]), "-");
	/* What the command writes, when it is known. */
	if ((!strcmp(base, "cat") && !cat_args) || !strcmp(base, "tee")) {
		if (here) {
			text = sh_heredoc_text(sh, here, s->file, &len, &map, NULL);
		} else if (sh->cur_in) {
			/* ... | tee F: what came down the pipe */
			text = sh->cur_in->text;
			len = sh->cur_in->len;
			map = sh->cur_in->map;
		}
	} else if (!strcmp(base, "printf") && fs->n > from + 1 &&
		   strcmp(sh_fld_str(&fs->f[from + 1]), "-v")) {
		int k = from + 1;

		if (!strcmp(sh_fld_str(&fs->f[k]), "--"))
			k++;
		if (k < fs->n) {
			sh_printf_text(sh, &f, &fs->f[k], fs, k + 1);
			text = sh_fld_str(&f);
			len = f.len;
		}
	} else if (!strcmp(base, "echo")) {
		int k = from + 1;
		bool nl = true;

		for (; k < fs->n; k++) {
			const char *w = sh_fld_str(&fs->f[k]);

			if (strcmp(w, "-e") && strcmp(w, "-n") && strcmp(w, "-E"))
				break;
			nl = nl && strcmp(w, "-n");
		}
		for (int first = k; k < fs->n; k++) {
			const struct sh_field *a = &fs->f[k];

			if (k > first)
				sh_fld_addc(sh, &f, ' ');
			sh_fld_add_range(sh, &f, sh_fld_str(a), 0, a->len, sh_fld_map(sh, a),
					 a->n_runs ? a->runs[0].line : a->line > 0 ? a->line : line,
					 a->n_runs && a->runs[0].file ? a->runs[0].file : s->file);
		}
		if (nl)
			sh_fld_addc(sh, &f, '\n');
		text = sh_fld_str(&f);
		len = f.len;
	}
	if (!text)
		return;
	if (text == sh_fld_str(&f))
		map = sh_fld_map(sh, &f) ? sh_fld_map(sh, &f)
		      : full_map(sh, NULL, f.n_runs ? f.runs[0].line : line,
				 f.n_runs && f.runs[0].file ? f.runs[0].file : s->file);
	if (!out) {
		/* To the pipe (a tee passes it on): the next command's input. */
		struct sh_pipe *p = sh_alloc(sh, sizeof(*p));

		p->text = text;
		p->len = len;
		p->map = full_map(sh, map, line, s->file);
		p->line = line;
		p->file = s->file;
		sh->pipe_out = p;
	}
	if (!path && out) {
		path = sh_expand_str(sh, out->target.t, out->target.n, 0, out->target.line, s->file, &unk);
		append = !strcmp(out->op, ">>");
	}
	if (!path || unk || !*path)
		return;
	vfile_write(sh, s, line, path, text, len, append, map);
}
