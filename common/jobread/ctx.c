/*
 * ctx.c - the reading context of the job reader: the values the launcher
 * and framework readers find (jr_set_*, each with its source), the notes
 * they add, and the files they read (jr_load: a here-document the script
 * wrote, else the caller's provider; cached, parsed once, a parse error
 * turned into a SCRIPT_CONFIG_ERROR note with file:line:col).
 *
 * Split from jobread.c (issue 17), which keeps the orchestration: the
 * readers depend on this context, and the orchestrator on both, without
 * an include circle.  The daemon never opens a user's file: every file
 * comes through the jobread_files provider, and one the provider does not
 * have yet is listed in out->need so that the client can ship it.
 *
 * Container mounts (jr_mount): a trainer started in a container names its
 * files by their path inside it ("--config_file /grpo/ds.yaml" under
 * pyxis' --container-mounts=.:/grpo).  The launcher reader records each
 * bind mount the job states, and a path under a mount's target is read
 * from its source on the host, the longest target first, as the kernel's
 * mount table resolves nested mounts.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "engine/findings.h"
#include "jobread/shell/shell.h"
#include "util.h"

/* The last part of a path (ctx.c stays below reader.h, which needs it). */
static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Files the readers of one job may load (each once: cached). */
#define JR_MAX_LOADED 24
/* Words of the command of a program kept aside (jr_program_weak). */
#define JR_WEAK_WORDS 32
/* Commands whose program was read and holds no LLM, kept per job. */
#define JR_MAX_EXPLAINED 16
/* Container bind mounts of one job kept; more are not mapped. */
#define JR_MAX_MOUNTS 16

struct jr_mount {
	char src[JOBREAD_PATH_MAX];      /* on the host, absolute */
	char dst[JOBREAD_PATH_MAX];      /* in the container, absolute, no trailing '/' */
};

struct jr_loaded {
	char path[JOBREAD_PATH_MAX];     /* resolved */
	char display[JOBREAD_PATH_MAX];  /* as the job wrote it */
	cfg_t *cfg;                      /* NULL: text only or failed */
	const char *text;
	size_t len;
	bool parsed;
	bool failed;
};

struct jr_ctx {
	const catalog_t *cat;
	const struct jobread_input *in;
	struct jobread_out *out;
	const sh_t *sh;
	int n_loaded;
	struct jr_loaded loaded[JR_MAX_LOADED];
	int n_mounts;
	struct jr_mount mounts[JR_MAX_MOUNTS];
	bool program_set[JR_PROGRAM_STATES];
	struct jr_program program[JR_PROGRAM_STATES];
	int n_explained;
	struct { char file[256]; int line; } explained[JR_MAX_EXPLAINED];
	struct {
		bool set, is_module;
		int argc, line;
		char file[256];
		char words[JR_WEAK_WORDS][256];
		char *argv[JR_WEAK_WORDS + 1];
	} weak;
};

/* ---- the context's life ----------------------------------------------------- */

struct jr_ctx *jr_ctx_new(const catalog_t *cat, const struct jobread_input *in,
			  struct jobread_out *out, const sh_t *sh)
{
	struct jr_ctx *cx = calloc(1, sizeof(*cx));

	if (!cx)
		return NULL;
	cx->cat = cat;
	cx->in = in;
	cx->out = out;
	cx->sh = sh;
	return cx;
}

void jr_ctx_free(struct jr_ctx *cx)
{
	if (!cx)
		return;
	for (int i = 0; i < cx->n_loaded; i++)
		cfg_free(cx->loaded[i].cfg);
	free(cx);
}

/* ---- context --------------------------------------------------------------- */

const catalog_t *jr_catalog(const struct jr_ctx *cx)
{
	return cx->cat;
}

struct jobread_out *jr_out(struct jr_ctx *cx)
{
	return cx->out;
}

const struct jobread_input *jr_input(const struct jr_ctx *cx)
{
	return cx->in;
}

static struct jobread_value *slot(struct jr_ctx *cx, enum jobread_field f,
				  const struct jobread_src *src)
{
	struct jobread_value *v;

	if ((unsigned)f >= JR_FIELD_COUNT)
		return NULL;
	v = &cx->out->v[f];
	memset(v, 0, sizeof(*v));
	v->set = true;
	if (src)
		v->src = *src;
	return v;
}

void jr_set_int(struct jr_ctx *cx, enum jobread_field f, long long n, const struct jobread_src *src)
{
	struct jobread_value *v = slot(cx, f, src);

	if (v) {
		v->i = n;
		v->f = (double)n;
		adv_snprintf(v->s, sizeof(v->s), "%lld", n);
	}
}

void jr_set_num(struct jr_ctx *cx, enum jobread_field f, double n, const struct jobread_src *src)
{
	struct jobread_value *v = slot(cx, f, src);

	if (v) {
		v->f = n;
		/* 2^63 itself is out of range, and NaN compares false: both cut. */
		v->i = n != n ? 0 : n >= 9223372036854775808.0 ? LLONG_MAX
		     : n < -9223372036854775808.0 ? LLONG_MIN : (long long)n;
		adv_snprintf(v->s, sizeof(v->s), "%g", n);
	}
}

void jr_set_str(struct jr_ctx *cx, enum jobread_field f, const char *s, const struct jobread_src *src)
{
	struct jobread_value *v = slot(cx, f, src);

	if (v)
		adv_strlcpy(v->s, s ? s : "", sizeof(v->s));
}

void jr_set_unknown(struct jr_ctx *cx, enum jobread_field f, const struct jobread_src *src,
		    const char *what)
{
	struct jobread_value *v = slot(cx, f, src);

	if (v) {
		v->unknown = true;
		adv_strlcpy(v->s, what ? what : "unknown", sizeof(v->s));
	}
}

const struct jobread_value *jr_get(const struct jr_ctx *cx, enum jobread_field f)
{
	return (unsigned)f < JR_FIELD_COUNT ? &cx->out->v[f] : NULL;
}

void jr_set_trainer(struct jr_ctx *cx, const char *name, int fw, const struct jobread_src *src)
{
	adv_strlcpy(cx->out->trainer, name, sizeof(cx->out->trainer));
	cx->out->is_llm = true;
	if (fw >= 0)
		jr_set_int(cx, JR_FRAMEWORK, fw, src);
}

/* srun and mpirun start any program: only the ML launchers make a job an
 * LLM job on their own. */
void jr_set_launcher(struct jr_ctx *cx, const char *name)
{
	adv_strlcpy(cx->out->launcher, name, sizeof(cx->out->launcher));
	if (strcmp(name, "srun") && strcmp(name, "mpirun") && strcmp(name, "mpiexec"))
		cx->out->is_llm = true;
}

void jr_note(struct jr_ctx *cx, enum adv_code code, const char *fix, const char *fmt, ...)
{
	struct jobread_note *n;
	va_list ap;

	if (cx->out->n_notes >= JOBREAD_MAX_NOTES)
		return;
	n = &cx->out->notes[cx->out->n_notes++];
	adv_strlcpy(n->code, engine_code_name(code), sizeof(n->code));
	adv_strlcpy(n->fix, fix ? fix : "", sizeof(n->fix));
	va_start(ap, fmt);
	adv_vsnprintf(n->message, sizeof(n->message), fmt, ap);
	va_end(ap);
}

void jr_program_said(struct jr_ctx *cx, enum jr_program_state st, const char *name,
		     const struct jobread_src *src, const char *why)
{
	struct jr_program *p;

	if ((unsigned)st >= JR_PROGRAM_STATES || cx->program_set[st])
		return;
	p = &cx->program[st];
	memset(p, 0, sizeof(*p));
	adv_strlcpy(p->name, name ? name : "", sizeof(p->name));
	if (src)
		p->src = *src;
	adv_strlcpy(p->why, why ? why : "", sizeof(p->why));
	cx->program_set[st] = true;
}

const struct jr_program *jr_program_get(const struct jr_ctx *cx, enum jr_program_state st)
{
	return (unsigned)st < JR_PROGRAM_STATES && cx->program_set[st] ? &cx->program[st] : NULL;
}

void jr_program_weak(struct jr_ctx *cx, const struct jr_cmd *cmd, bool is_module)
{
	if (cx->weak.set || !cmd || cmd->argc < 1)
		return;
	cx->weak.set = true;
	cx->weak.is_module = is_module;
	cx->weak.line = cmd->line;
	adv_strlcpy(cx->weak.file, cmd->file ? cmd->file : "", sizeof(cx->weak.file));
	cx->weak.argc = cmd->argc < JR_WEAK_WORDS ? cmd->argc : JR_WEAK_WORDS;
	for (int i = 0; i < cx->weak.argc; i++) {
		/* An unknown word keeps no text: it stays unknown. */
		adv_strlcpy(cx->weak.words[i], cmd->unknown && cmd->unknown[i] ? "" : cmd->argv[i],
			    sizeof(cx->weak.words[0]));
		cx->weak.argv[i] = cx->weak.words[i];
	}
	cx->weak.argv[cx->weak.argc] = NULL;
}

bool jr_program_weak_get(const struct jr_ctx *cx, struct jr_cmd *cmd, bool *is_module)
{
	if (!cx->weak.set)
		return false;
	memset(cmd, 0, sizeof(*cmd));
	cmd->file = cx->weak.file;
	cmd->line = cx->weak.line;
	cmd->argc = cx->weak.argc;
	cmd->argv = cx->weak.argv;
	*is_module = cx->weak.is_module;
	return true;
}

/* The file's name is copied: a wrapper script's evaluator is gone by the
 * time follow.c asks.  Names are compared as far as they are kept. */
void jr_program_explained(struct jr_ctx *cx, const char *file, int line)
{
	if (!file || cx->n_explained >= JR_MAX_EXPLAINED || jr_program_is_explained(cx, file, line))
		return;
	adv_strlcpy(cx->explained[cx->n_explained].file, file, sizeof(cx->explained[0].file));
	cx->explained[cx->n_explained++].line = line;
}

bool jr_program_is_explained(const struct jr_ctx *cx, const char *file, int line)
{
	for (int i = 0; file && i < cx->n_explained; i++)
		if (cx->explained[i].line == line &&
		    !strncmp(cx->explained[i].file, file, sizeof(cx->explained[0].file) - 1))
			return true;
	return false;
}

/* ---- sources ----------------------------------------------------------------- */

/* ---- the program's environment ------------------------------------------------- */

/* Words of cmd's recorded command before its program; 0 when cmd is not
 * a view into it. */
static int words_before(const struct jr_cmd *cmd)
{
	const struct sh_cmd *r = cmd->rec;

	if (!r || !r->argv || !cmd->argv)
		return 0;
	for (int k = 0; k <= r->argc && k < 4096; k++)
		if ((char *const *)r->argv + k == cmd->argv)
			return k;
	return 0;
}

char *const *jr_cmd_before(const struct jr_cmd *cmd, int *n)
{
	*n = cmd ? words_before(cmd) : 0;
	return *n > 0 ? cmd->rec->argv : NULL;
}

bool jr_cmd_after(const struct jr_cmd *cmd, const char *w)
{
	int n = cmd ? words_before(cmd) : 0;

	for (int k = 0; k < n; k++)
		if (cmd->rec->argv[k] && !strcmp(base_name(cmd->rec->argv[k]), w))
			return true;
	return false;
}

/* "NAME=V" (w, n bytes) for name: the value, else NULL. */
static const char *assign_of(const char *w, size_t n, const char *name)
{
	size_t l = strlen(name);

	return n > l && !strncmp(w, name, l) && w[l] == '=' ? w + l + 1 : NULL;
}

static void env_src(struct jobread_src *src, const char *name, const char *file, int line)
{
	if (!src)
		return;
	memset(src, 0, sizeof(*src));
	adv_strlcpy(src->file, file ? file : "", sizeof(src->file));
	src->line = file && !strcmp(file, JR_CMDLINE_FILE) ? 0 : line;
	adv_strlcpy(src->key, name, sizeof(src->key));
	src->style = JR_STYLE_ENV;
}

/* A value the evaluator could not know keeps its placeholder text
 * ("$(...)", "${NAME}"): prefix assignments carry no unknown marks. */
static bool placeholder(const char *v)
{
	return strstr(v, "$(") || strstr(v, "${") || strchr(v, '`');
}

/* NAME=V in a comma-separated list (srun --export=ALL,A=1,B=2, apptainer
 * --env A=1,B=2): copied to buf; false when name is not in it. */
static bool list_value(const char *list, const char *name, char *buf, size_t len)
{
	bool got = false;

	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		const char *v = assign_of(p, l, name);

		if (v) {
			adv_snprintf(buf, len, "%.*s", (int)(l - (size_t)(v - p)), v);
			got = true;
		}
		p = c ? c + 1 : NULL;
	}
	return got;
}

static bool is_sing(const char *b)
{
	return b && (!strcmp(b, "singularity") || !strcmp(b, "apptainer"));
}

bool jr_cmd_env(const struct jr_cmd *cmd, const char *name, char *buf, size_t len, bool *unknown,
		struct jobread_src *src)
{
	const struct sh_cmd *r = cmd ? cmd->rec : NULL;
	const char *v, *cur = NULL;
	int n = cmd ? words_before(cmd) : 0, at = -1;
	bool clean = false, found = false;

	if (unknown)
		*unknown = false;
	if (!cmd || !name || !name[0] || !buf || !len)
		return false;
	/* The wrappers' words, in order: the last setting wins.  cur: the
	 * wrapper whose options these are, as far as its name was seen. */
	for (int k = 0; k < n; k++) {
		const char *w = r->argv[k], *b;

		if (!w)
			continue;
		b = base_name(w);
		if (!strcmp(b, "docker") || !strcmp(b, "podman") || is_sing(b) || !strcmp(b, "env") ||
		    !strcmp(b, "srun"))
			cur = b;
		/* A clean environment, where what was set before is gone:
		 * docker/podman run (only -e's variables), env -i, apptainer
		 * -e/--cleanenv and -C/--containall, srun --export=NONE. */
		if (!strcmp(b, "docker") || !strcmp(b, "podman") ||
		    (cur && !strcmp(cur, "env") && (!strcmp(w, "-i") || !strcmp(w, "--ignore-environment"))) ||
		    (is_sing(cur) && (!strcmp(w, "-e") || !strcmp(w, "--cleanenv") || !strcmp(w, "-C") ||
				      !strcmp(w, "--containall"))) ||
		    !strcmp(w, "--export=NONE") || !strncmp(w, "--export=NONE,", 14)) {
			clean = true;
			found = false;
			if (strncmp(w, "--export=", 9) != 0)
				continue;
		}
		if (!strncmp(w, "--export=", 9) || (is_sing(cur) && !strncmp(w, "--env=", 6)) ||
		    (is_sing(cur) && !strcmp(w, "--env") && k + 1 < n)) {
			/* Comma-separated lists of NAME=V. */
			const char *list = !strncmp(w, "--export=", 9) ? w + 9
					   : !strncmp(w, "--env=", 6) ? w + 6 : r->argv[++k];

			if (list_value(list, name, buf, len)) {
				found = true;
				at = k;
			}
			continue;
		}
		if (!strncmp(w, "--env=", 6))
			w += 6;
		else if ((!strcmp(w, "-e") || !strcmp(w, "--env")) && k + 1 < n)
			w = r->argv[++k];
		if (w && (v = assign_of(w, strlen(w), name))) {
			adv_strlcpy(buf, v, len);
			found = true;
			at = k;
		}
	}
	if (found) {
		if (unknown)
			*unknown = (r->unknown && r->unknown[at]) || placeholder(buf);
		env_src(src, name, r->word_file && r->word_file[at] ? r->word_file[at] : r->file,
			r->word_line && r->word_line[at] > 0 ? r->word_line[at] : r->line);
		return true;
	}
	if (clean)
		return false;
	/* The command's prefix assignments, then the script's exports. */
	for (int k = 0; r && r->assign && k < r->n_assign; k++)
		if (r->assign[k] && (v = assign_of(r->assign[k], strlen(r->assign[k]), name))) {
			adv_strlcpy(buf, v, len);
			found = true;
			env_src(src, name, r->file, r->line);
		}
	if (found) {
		if (unknown)
			*unknown = placeholder(buf);
		return true;
	}
	if (cmd->sh) {
		const char *file = NULL;
		int line = 0;
		bool unk = false;

		v = sh_getenv(cmd->sh, name, &unk, &line, &file);
		if (v) {
			adv_strlcpy(buf, v, len);
			if (unknown)
				*unknown = unk;
			env_src(src, name, file ? file : "the submission environment", line);
			return true;
		}
	}
	return false;
}

void jr_src_word(struct jobread_src *s, const struct jr_cmd *cmd, int i, const char *key,
		 enum jobread_style style)
{
	const char *file = cmd->file;

	memset(s, 0, sizeof(*s));
	s->line = cmd->line;
	if (i >= 0 && i < cmd->argc && cmd->word_line && cmd->word_line[i] > 0) {
		s->line = cmd->word_line[i];
		if (cmd->word_file && cmd->word_file[i])
			file = cmd->word_file[i];
	}
	/* srun's own command has no lines to name. */
	if (file && !strcmp(file, JR_CMDLINE_FILE))
		s->line = 0;
	adv_strlcpy(s->file, file ? file : "", sizeof(s->file));
	adv_strlcpy(s->key, key ? key : "", sizeof(s->key));
	s->style = style;
}

void jr_src_node(struct jobread_src *s, const char *file, const struct cfg_node *n,
		 const char *key, enum jobread_style style)
{
	struct jobread_src t;

	/* Built aside: file or key may point into *s itself. */
	memset(&t, 0, sizeof(t));
	adv_strlcpy(t.file, file ? file : "", sizeof(t.file));
	if (n) {
		t.line = n->line;
		t.col = n->col;
	}
	adv_strlcpy(t.key, key ? key : "", sizeof(t.key));
	t.style = style;
	*s = t;
}

bool jr_set_node_int(struct jr_ctx *cx, enum jobread_field f, const char *file,
		     const struct cfg_node *root, const char *dotted, enum jobread_style style)
{
	const struct cfg_node *n = cfg_path(root, dotted);
	struct jobread_src src;
	long long v;

	if (!n)
		return false;
	jr_src_node(&src, file, n, dotted, style);
	if (!cfg_int(n, &v) || v > INT_MAX || v < INT_MIN) {
		const char *t = cfg_str(n);

		/* "${model.x}" left unresolved, "auto" and the like. */
		if (t && strcmp(t, "auto") != 0)
			jr_set_unknown(cx, f, &src, t);
		return false;
	}
	jr_set_int(cx, f, v, &src);
	return true;
}

/* ---- files ------------------------------------------------------------------- */

/* path relative to the submit directory, or absolute. */
/* path against the submit directory, without mounts. */
static void resolve_cwd(const struct jr_ctx *cx, const char *path, char *buf, size_t len)
{
	const char *cwd = cx->in->cwd && cx->in->cwd[0] ? cx->in->cwd : "/";

	if (path[0] == '/')
		adv_strlcpy(buf, path, len);
	else if (!strcmp(path, "."))
		adv_strlcpy(buf, cwd, len);
	else if (path[0] == '.' && path[1] == '/')
		adv_snprintf(buf, len, "%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", path + 2);
	else
		adv_snprintf(buf, len, "%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", path);
}

/* The mount whose target holds abs (the longest), or NULL. */
static const struct jr_mount *mount_of(const struct jr_ctx *cx, const char *abs)
{
	const struct jr_mount *best = NULL;
	size_t best_n = 0;

	for (int i = 0; i < cx->n_mounts; i++) {
		const struct jr_mount *m = &cx->mounts[i];
		size_t n = strlen(m->dst);

		if (strncmp(abs, m->dst, n) != 0 || (abs[n] != '/' && abs[n] != '\0'))
			continue;
		if (!best || n > best_n) {
			best = m;
			best_n = n;
		}
	}
	return best;
}

static void resolve_path(const struct jr_ctx *cx, const char *path, char *buf, size_t len)
{
	char abs[JOBREAD_PATH_MAX];
	const struct jr_mount *m;

	resolve_cwd(cx, path, abs, sizeof(abs));
	m = mount_of(cx, abs);
	if (!m) {
		adv_strlcpy(buf, abs, len);
		return;
	}
	adv_snprintf(buf, len, "%s%s", m->src, abs + strlen(m->dst));
}

void jr_resolve(const struct jr_ctx *cx, const char *path, char *buf, size_t len)
{
	resolve_path(cx, path ? path : "", buf, len);
}

void jr_mount(struct jr_ctx *cx, const char *src, size_t src_len, const char *dst, size_t dst_len)
{
	char s[JOBREAD_PATH_MAX], d[JOBREAD_PATH_MAX], abs[JOBREAD_PATH_MAX];
	struct jr_mount *m;

	if (!src_len || !dst_len || src_len >= sizeof(s) || dst_len >= sizeof(d))
		return;
	memcpy(s, src, src_len);
	s[src_len] = '\0';
	memcpy(d, dst, dst_len);
	d[dst_len] = '\0';
	/* A target is absolute; a source is a host path (absolute, or "."
	 * and "./x" from the step's directory), not a named volume. */
	if (d[0] != '/' || (s[0] != '/' && s[0] != '.'))
		return;
	while (dst_len > 1 && d[dst_len - 1] == '/')
		d[--dst_len] = '\0';
	resolve_cwd(cx, s, abs, sizeof(abs));
	for (int i = 0; i < cx->n_mounts; i++)
		if (!strcmp(cx->mounts[i].dst, d)) {
			adv_strlcpy(cx->mounts[i].src, abs, sizeof(cx->mounts[i].src));
			return;
		}
	if (cx->n_mounts >= JR_MAX_MOUNTS || !strcmp(d, "/"))
		return;
	m = &cx->mounts[cx->n_mounts++];
	adv_strlcpy(m->src, abs, sizeof(m->src));
	adv_strlcpy(m->dst, d, sizeof(m->dst));
	while (strlen(m->src) > 1 && m->src[strlen(m->src) - 1] == '/')
		m->src[strlen(m->src) - 1] = '\0';
}

static void need(struct jr_ctx *cx, const char *abs)
{
	struct jobread_out *o = cx->out;

	for (int i = 0; i < o->n_need; i++)
		if (!strcmp(o->need[i], abs))
			return;
	if (o->n_need < JOBREAD_MAX_FILES)
		adv_strlcpy(o->need[o->n_need++], abs, sizeof(o->need[0]));
}

/* A file's text: a here-document the script wrote, else the provider. */
static struct jr_loaded *load(struct jr_ctx *cx, const char *path, bool quiet_missing)
{
	char abs[JOBREAD_PATH_MAX];
	const struct sh_vfile *vf;
	struct jr_loaded *l;
	int rc;

	if (!path || !*path)
		return NULL;
	resolve_path(cx, path, abs, sizeof(abs));
	for (int i = 0; i < cx->n_loaded; i++)
		if (!strcmp(cx->loaded[i].path, abs))
			return cx->loaded[i].failed ? NULL : &cx->loaded[i];
	if (cx->n_loaded >= JR_MAX_LOADED)
		return NULL;
	l = &cx->loaded[cx->n_loaded];
	memset(l, 0, sizeof(*l));
	adv_strlcpy(l->path, abs, sizeof(l->path));
	adv_strlcpy(l->display, path, sizeof(l->display));
	vf = cx->sh ? sh_vfile_find(cx->sh, path) : NULL;
	if (vf) {
		l->text = vf->text;
		l->len = vf->len;
		cx->n_loaded++;
		return l;
	}
	rc = cx->in->files.open ? cx->in->files.open(cx->in->files.arg, abs, &l->text, &l->len)
				: JOBREAD_FILE_MISSING;
	if (rc == JOBREAD_FILE_OK) {
		cx->n_loaded++;
		return l;
	}
	if (rc == JOBREAD_FILE_NEED) {
		need(cx, abs);
		return NULL;
	}
	l->failed = true;
	cx->n_loaded++;
	if (!quiet_missing)
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL, "%s %s, so what it configures is not known",
			path, rc == JOBREAD_FILE_MISSING ? "does not exist"
			: "cannot be read (or is over the reader's 256 KiB budget)");
	return NULL;
}

const cfg_t *jr_load(struct jr_ctx *cx, const char *path, enum cfg_format fmt, const char **display)
{
	struct jr_loaded *l = load(cx, path, false);
	char err[ADV_MSG_MAX];

	if (!l)
		return NULL;
	if (display)
		*display = l->display;
	if (!l->parsed) {
		l->parsed = true;
		if (cfg_parse(fmt, l->display, l->text, l->len, NULL, &l->cfg, err, sizeof(err)) != CFG_OK) {
			l->cfg = NULL;
			jr_note(cx, ADV_CODE_SCRIPT_CONFIG_ERROR, NULL,
				"%s; the job is judged on everything else", err);
		}
	}
	return l->cfg;
}

const char *jr_load_text(struct jr_ctx *cx, const char *path, size_t *len)
{
	struct jr_loaded *l = load(cx, path, true);

	if (!l)
		return NULL;
	if (len)
		*len = l->len;
	return l->text;
}

bool jr_exists(struct jr_ctx *cx, const char *path)
{
	char abs[JOBREAD_PATH_MAX];
	const char *t;
	size_t n;
	int rc;

	if (!path || !*path || !cx->in->files.open)
		return false;
	resolve_path(cx, path, abs, sizeof(abs));
	rc = cx->in->files.open(cx->in->files.arg, abs, &t, &n);
	if (rc == JOBREAD_FILE_NEED)
		need(cx, abs);
	return rc == JOBREAD_FILE_OK;
}

bool jr_unreadable(const struct jr_ctx *cx, const char *path)
{
	char abs[JOBREAD_PATH_MAX];

	if (!path || !*path)
		return false;
	resolve_path(cx, path, abs, sizeof(abs));
	for (int i = 0; i < cx->n_loaded; i++)
		if (!strcmp(cx->loaded[i].path, abs))
			return cx->loaded[i].failed || (cx->loaded[i].parsed && !cx->loaded[i].cfg);
	return false;
}

/* The evaluator's opener: a file the script sources ("source x.sh"). */
int jr_ctx_open(void *arg, const char *path, const char **text, size_t *len)
{
	struct jr_loaded *l = load(arg, path, false);

	if (!l)
		return -1;
	*text = l->text;
	*len = l->len;
	return 0;
}
