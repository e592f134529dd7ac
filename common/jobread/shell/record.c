/*
 * record.c - what the shell evaluator records (sh_impl.h): each simple
 * command it would run (struct sh_cmd: fields, which are unknown, the
 * line each word was written on), and the files a here-document or echo
 * writes (virtual files, struct sh_vfile), with the here-document's text
 * as the command reads it.
 *
 * Here-documents follow the bash manual, "Here Documents": the body is
 * expanded unless the delimiter is quoted, and <<- strips leading tabs.
 * "cat > F <<EOF", "cat <<EOF > F", "tee [-a] F <<EOF" and "echo ... > F"
 * become F's content (>> appends), so that a config the script writes is
 * read as the script wrote it.  A path that is not known writes nothing.
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

static void vfile_write(struct sh *sh, const struct sh_src *s, int line, const char *path,
			const char *text, size_t len, bool append)
{
	struct sh_vfile_rec *v = append ? vfile_lookup(sh, path) : NULL;

	if (v) {
		char *t = sh_alloc(sh, v->pub.len + len + 1);

		memcpy(t, v->pub.text, v->pub.len);
		memcpy(t + v->pub.len, text, len);
		v->pub.text = t;
		v->pub.len += len;
		return;
	}
	v = sh_alloc(sh, sizeof(*v));
	v->pub.path = sh_strdup(sh, path);
	v->pub.text = sh_strndup(sh, text, len);
	v->pub.len = len;
	v->pub.file = s->file;
	v->pub.line = line;
	if (sh->vfiles_tail) {
		sh->vfiles_tail->next = v;
		sh->vfiles_tail->pub.next = &v->pub;
	} else {
		sh->vfiles = v;
	}
	sh->vfiles_tail = v;
}

/* The text of a here-document as the command reads it. */
static const char *heredoc_text(struct sh *sh, const struct sh_redir *r, const char *file, int line,
				size_t *len)
{
	const char *body = r->body;
	size_t n = r->body_len;
	struct sh_field f = { NULL, 0, 0, false, false, false, 0, NULL, NULL, 0, 0 };

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
		return body;
	}
	{
		bool unk;
		const char *t = sh_expand_str(sh, body, n, X_DQ | X_HEREDOC, line, file, &unk);

		*len = strlen(t);
		return t;
	}
}

/* cat/tee with a here-document, or echo, writing a file: a virtual file. */
void sh_maybe_vfile(struct sh *sh, const struct sh_src *s, int line, const struct sh_simple *c,
		    struct sh_fields *fs, int from)
{
	const char *prog = fs->n > from ? sh_fld_str(&fs->f[from]) : "";
	const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	const struct sh_redir *here = NULL, *out = NULL;
	const char *path = NULL, *text;
	size_t len;
	bool append = false, unk = false;

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
	if (!path && out) {
		path = sh_expand_str(sh, out->target.t, out->target.n, 0, out->target.line, s->file, &unk);
		append = !strcmp(out->op, ">>");
	}
	if (!path || unk || !*path)
		return;
	if ((!strcmp(base, "cat") || !strcmp(base, "tee")) && here) {
		text = heredoc_text(sh, here, s->file, line, &len);
		vfile_write(sh, s, line, path, text, len, append);
	} else if (!strcmp(base, "echo") && out) {
		struct sh_field f = { NULL, 0, 0, false, false, false, 0, NULL, NULL, 0, 0 };
		int k = from + 1;

		while (k < fs->n && (!strcmp(sh_fld_str(&fs->f[k]), "-e") || !strcmp(sh_fld_str(&fs->f[k]), "-n")))
			k++;
		for (int first = k; k < fs->n; k++) {
			if (k > first)
				sh_fld_addc(sh, &f, ' ');
			sh_fld_add(sh, &f, sh_fld_str(&fs->f[k]), fs->f[k].len);
		}
		sh_fld_addc(sh, &f, '\n');
		vfile_write(sh, s, line, path, sh_fld_str(&f), f.len, append);
	}
}
