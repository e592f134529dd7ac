/*
 * shell.c - a static evaluator for the subset of bash that job scripts use
 * (shell.h): compound commands, pipelines and lists, and the API.
 * Nothing is ever executed: the script is parsed and "run" in the
 * evaluator's own memory, so that the job reader sees the commands the job
 * would start, with their arguments as bash would pass them.
 *
 * The evaluator is split by bash's phases (sh_impl.h lists the files):
 * scanning, variables, expansion, arithmetic, conditionals, simple
 * commands, recording and memory.  This file follows the bash manual's
 * "Shell Commands" (Pipelines, Lists of Commands, Compound Commands) and
 * "Shell Functions".  Control flow is followed where a test can be decided
 * from known values ([ ], [[ ]], test, (( )), case patterns with
 * fnmatch(3)); otherwise the first branch not known to be false is taken,
 * what it sets is unknown afterwards, and a note says so.  Loops run for
 * real while their condition is known, bounded (see "loops" below).
 * Function bodies are kept as text and evaluated at each
 * call.
 *
 * Every bound (sh_limits) stops the evaluation through longjmp back to
 * sh_run(), which keeps what was recorded so far; the arena (mem.c) makes
 * that unwinding leak-free.  No global state: one sh_t per job.
 */
#include "config.h"

#include <fnmatch.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "sh_impl.h"
#include "shell.h"
#include "util.h"

static int parse_list(struct sh *sh, struct sh_src *s, bool ex, const char *const *terms,
		      char *hit, size_t hitlen);

/* ---- compound commands -------------------------------------------------------------- */

static const char *const T_THEN[] = { "then", NULL };
static const char *const T_ELSE[] = { "elif", "else", "fi", NULL };
static const char *const T_FI[] = { "fi", NULL };
static const char *const T_DO[] = { "do", NULL };
static const char *const T_DONE[] = { "done", NULL };
static const char *const T_BRACE[] = { "}", NULL };
static const char *const T_PAREN[] = { ")", NULL };
static const char *const T_CASE[] = { ";;", ";&", ";;&", "esac", NULL };

static int parse_if(struct sh *sh, struct sh_src *s, bool ex)
{
	char hit[16];
	bool taken = false;
	int line = s->line, r = T_TRUE;

	sh_consume_tok(s, "if");
	for (;;) {
		int c = parse_list(sh, s, ex && !taken, T_THEN, hit, sizeof(hit));
		bool body = ex && !taken && c != T_FALSE;

		if (!hit[0])
			return T_UNKNOWN;
		if (body && c == T_UNKNOWN) {
			sh_note(sh, s->file, line, "a condition that cannot be decided before the job runs; "
				"its first branch is read");
			sh->uncertain++;
		}
		r = parse_list(sh, s, body, T_ELSE, hit, sizeof(hit));
		if (body && c == T_UNKNOWN)
			sh->uncertain--;
		if (body)
			taken = true;
		if (!strcmp(hit, "elif"))
			continue;
		if (!strcmp(hit, "else"))
			r = parse_list(sh, s, ex && !taken, T_FI, hit, sizeof(hit));
		return r;
	}
}

static void skip_to_do(struct sh *sh, struct sh_src *s)
{
	char tok[16];

	for (;;) {
		sh_skip_ws(s, true);
		if (sh_cur(s) == ';') {
			sh_adv1(s);
			continue;
		}
		sh_peek_tok(s, tok, sizeof(tok));
		if (!strcmp(tok, "do"))
			sh_consume_tok(s, "do");
		return;
	}
	(void)sh;
}

/* ---- loops ---------------------------------------------------------------------------
 *
 * A loop runs its body for real while its condition is known (bash's
 * "Looping Constructs"), with break [n] and continue [n] (sh->brk,
 * sh->cont: the levels still to leave).  Its iterations are bounded: per
 * loop (SH_MAX_LOOP), in all loops (SH_MAX_ITERS), and loops stop at half
 * the step bound so that what follows them is still read.  When the
 * condition is not known, a bound is hit or a break depends on a condition
 * not known, the body is read once more as under a condition not known
 * (what it sets is unknown afterwards, the commands in it are recorded)
 * and a note says why.  A command the loop runs again at the same place is
 * recorded once (record.c): the reader wants the commands, not their
 * count.
 */

struct loop {
	int line;
	int iters;
	bool unsure_save;
};

static void loop_enter(struct sh *sh, struct loop *l, int line)
{
	l->line = line;
	l->iters = 0;
	l->unsure_save = sh->loop_unsure;
	sh->loop_unsure = false;
	if (sh->loops++ == 0) {
		sh->loop_id++;
		sh->loop_mark = sh->cmds_tail;
	}
}

static void loop_leave(struct sh *sh, struct loop *l)
{
	sh->loops--;
	sh->loop_unsure = l->unsure_save;
}

/* NULL while the loop may run once more, else why not (for the note). */
static const char *loop_bounded(struct sh *sh, const struct loop *l)
{
	if (l->iters >= SH_MAX_LOOP)
		return "runs more times than the reader's bound on one loop";
	if (sh->iters >= SH_MAX_ITERS)
		return "is past the reader's bound on loop iterations";
	if (sh->steps > sh->lim.max_steps / 2)
		return "is past half of the reader's step bound";
	return NULL;
}

/* After a run of the body: whether the loop goes on. */
static bool loop_next(struct sh *sh, struct loop *l)
{
	l->iters++;
	sh->iters++;
	if (sh->brk > 0) {
		sh->brk--;
		return false;
	}
	if (sh->cont > 1) {
		/* continue N: leave this loop, the one around it goes on */
		sh->cont--;
		return false;
	}
	sh->cont = 0;
	return true;
}

/* The body once more, as under a condition not known. */
static void loop_unsure_pass(struct sh *sh, struct sh_src *s, const struct sh_src *body)
{
	char hit[16];

	*s = *body;
	sh->uncertain++;
	parse_list(sh, s, true, T_DONE, hit, sizeof(hit));
	sh->uncertain--;
	sh->brk = 0;
	sh->cont = 0;
	sh->loop_unsure = false;
}

static void loop_skip(struct sh *sh, struct sh_src *s, const struct sh_src *body)
{
	char hit[16];

	*s = *body;
	parse_list(sh, s, false, T_DONE, hit, sizeof(hit));
}

/* Runs the body once; false when the loop ends (break, exit, a bound). */
static bool loop_body(struct sh *sh, struct sh_src *s, const struct sh_src *body, struct loop *l)
{
	char hit[16];
	const char *why;

	if (sh->stop) {
		loop_skip(sh, s, body);
		return false;
	}
	why = loop_bounded(sh, l);
	if (why) {
		sh_note(sh, s->file, l->line, "a loop that %s: it is read once more as not known", why);
		loop_unsure_pass(sh, s, body);
		return false;
	}
	*s = *body;
	parse_list(sh, s, true, T_DONE, hit, sizeof(hit));
	if (sh->loop_unsure) {
		sh_note(sh, s->file, l->line, "a loop left by a break or continue under a condition "
			"not known: it is read once more as not known");
		loop_unsure_pass(sh, s, body);
		return false;
	}
	return loop_next(sh, l) && !sh->stop;
}

static int parse_for(struct sh *sh, struct sh_src *s, bool ex)
{
	char hit[16], name[128] = "";
	struct sh_fields words = { NULL, 0, 0 };
	struct sh_src body;
	struct loop l;
	int line = s->line;

	sh_consume_tok(s, "for");
	sh_skip_ws(s, false);
	if (sh_cur(s) == '(' && sh_peekc(s, 1) == '(') {
		/* for (( init; cond; step )) */
		size_t e = sh_scan_paren(s->t, s->n, s->i + 2, 0);
		const char *t = s->t + s->i + 2;
		size_t n = e > s->i + 2 ? e - s->i - 3 : 0;
		const char *p1 = memchr(t, ';', n), *p2 = p1 ? memchr(p1 + 1, ';', n - (size_t)(p1 + 1 - t)) : NULL;
		bool u = false, ran = false;

		sh_adv_to(s, e < s->n && s->t[e] == ')' ? e + 1 : e);
		skip_to_do(sh, s);
		body = *s;
		if (!ex || !p1 || !p2) {
			loop_skip(sh, s, &body);
			return T_UNKNOWN;
		}
		loop_enter(sh, &l, line);
		sh_arith(sh, t, (size_t)(p1 - t), line, s->file, &u);
		for (;;) {
			const char *cv = u ? "1" : sh_arith(sh, p1 + 1, (size_t)(p2 - p1 - 1), line, s->file, &u);

			if (u) {
				sh_note(sh, s->file, line, "a loop bound that is not known");
				loop_unsure_pass(sh, s, &body);
				ran = true;
				break;
			}
			if (!strcmp(cv, "0"))
				break;
			ran = true;
			if (!loop_body(sh, s, &body, &l))
				break;
			sh_arith(sh, p2 + 1, n - (size_t)(p2 + 1 - t), line, s->file, &u);
		}
		if (!ran)
			loop_skip(sh, s, &body);
		loop_leave(sh, &l);
		return T_UNKNOWN;
	}
	{
		size_t end = sh_scan_word(s);

		if (end - s->i < sizeof(name)) {
			memcpy(name, s->t + s->i, end - s->i);
			name[end - s->i] = '\0';
		}
		sh_adv_to(s, end);
	}
	sh_skip_ws(s, true);
	{
		char tok[16];

		sh_peek_tok(s, tok, sizeof(tok));
		if (!strcmp(tok, "in")) {
			sh_consume_tok(s, "in");
			for (;;) {
				size_t end;

				sh_skip_ws(s, false);
				if (sh_at_end(s) || sh_cur(s) == ';' || sh_cur(s) == '\n')
					break;
				end = sh_scan_word(s);
				if (end == s->i) {
					sh_adv1(s);
					continue;
				}
				if (ex)
					sh_expand_word(sh, s->t + s->i, end - s->i, s->line, s->file, X_SPLIT, &words);
				sh_adv_to(s, end);
			}
		} else if (ex) {
			for (int k = 0; k < sh->n_pos; k++) {
				struct sh_field *f = sh_flds_new(sh, &words, line, s->file);

				sh_fld_add(sh, f, sh->pos[k], strlen(sh->pos[k]));
			}
		}
	}
	skip_to_do(sh, s);
	body = *s;
	if (!ex || !sh_valid_name(name, strlen(name)) || words.n == 0) {
		loop_skip(sh, s, &body);
		return T_UNKNOWN;
	}
	loop_enter(sh, &l, line);
	for (int k = 0; k < words.n; k++) {
		/* Past a bound the body is read as not known: so is the name. */
		bool last = loop_bounded(sh, &l) != NULL;

		sh->uncertain += last;
		sh_var_set(sh, name, sh_fld_str(&words.f[k]), words.f[k].unknown, words.f[k].line, s->file);
		sh->uncertain -= last;
		if (!loop_body(sh, s, &body, &l))
			break;
	}
	(void)hit;
	loop_leave(sh, &l);
	return T_UNKNOWN;
}

static int parse_while(struct sh *sh, struct sh_src *s, bool ex, bool until)
{
	char hit[16];
	int line = s->line;
	struct sh_src cond, body;
	struct loop l;

	sh_consume_tok(s, until ? "until" : "while");
	cond = *s;
	if (!ex) {
		parse_list(sh, s, false, T_DO, hit, sizeof(hit));
		parse_list(sh, s, false, T_DONE, hit, sizeof(hit));
		return T_UNKNOWN;
	}
	loop_enter(sh, &l, line);
	for (;;) {
		int c;

		*s = cond;
		c = parse_list(sh, s, !sh->stop, T_DO, hit, sizeof(hit));
		body = *s;
		if (!hit[0])
			break;
		if (sh->stop || c == (until ? T_TRUE : T_FALSE)) {
			loop_skip(sh, s, &body);
			break;
		}
		if (c == T_UNKNOWN) {
			if (l.iters == 0)
				sh_note(sh, s->file, line, "a loop whose end is not known: its body is read once");
			else
				sh_note(sh, s->file, line, "a loop whose end is not known after %d runs: "
					"its body is read once more as not known", l.iters);
			loop_unsure_pass(sh, s, &body);
			break;
		}
		if (!loop_body(sh, s, &body, &l))
			break;
	}
	loop_leave(sh, &l);
	return T_UNKNOWN;
}

static int parse_case(struct sh *sh, struct sh_src *s, bool ex)
{
	char hit[16], tok[16];
	const char *subject = "";
	bool unk = true, taken = false;
	int line = s->line;
	size_t end;

	sh_consume_tok(s, "case");
	sh_skip_ws(s, false);
	end = sh_scan_word(s);
	if (ex)
		subject = sh_expand_str(sh, s->t + s->i, end - s->i, 0, s->line, s->file, &unk);
	sh_adv_to(s, end);
	sh_skip_ws(s, true);
	sh_peek_tok(s, tok, sizeof(tok));
	if (strcmp(tok, "in"))
		return T_UNKNOWN;
	sh_consume_tok(s, "in");
	if (ex && unk)
		sh_note(sh, s->file, line, "case on a value that is not known: no branch is read");
	for (;;) {
		bool match = false;

		sh_skip_ws(s, true);
		if (sh_at_end(s))
			return T_UNKNOWN;
		sh_peek_tok(s, tok, sizeof(tok));
		if (!strcmp(tok, "esac")) {
			sh_consume_tok(s, "esac");
			return T_UNKNOWN;
		}
		if (sh_cur(s) == '(')
			sh_adv1(s);
		for (;;) {
			sh_skip_ws(s, false);
			end = sh_scan_word(s);
			if (ex && !unk && !taken) {
				bool pu = false;
				const char *pat = sh_expand_str(sh, s->t + s->i, end - s->i, 0, s->line, s->file, &pu);

				if (!pu && fnmatch(pat, subject, 0) == 0)
					match = true;
			}
			sh_adv_to(s, end);
			sh_skip_ws(s, false);
			if (sh_cur(s) == '|') {
				sh_adv1(s);
				continue;
			}
			if (sh_cur(s) == ')')
				sh_adv1(s);
			else if (!sh_at_end(s) && end == s->i)
				sh_adv1(s);
			break;
		}
		{
			bool body = ex && !taken && match;

			parse_list(sh, s, body, T_CASE, hit, sizeof(hit));
			if (body)
				taken = true;
			if (!hit[0] || !strcmp(hit, "esac"))
				return T_UNKNOWN;
		}
	}
}

/* name() { ... } and function name { ... }: the body is kept as text. */
static int parse_funcdef(struct sh *sh, struct sh_src *s, bool ex, size_t name_start, size_t name_end)
{
	struct sh_func *fn;
	size_t start;
	int line;

	sh_skip_ws(s, false);
	if (sh_cur(s) == '(') {
		sh_adv1(s);
		sh_skip_ws(s, false);
		if (sh_cur(s) == ')')
			sh_adv1(s);
	}
	sh_skip_ws(s, true);
	start = s->i;
	line = s->line;
	sh_parse_command(sh, s, false);
	if (!ex)
		return T_TRUE;
	fn = sh_alloc(sh, sizeof(*fn));
	fn->name = sh_strndup(sh, s->t + name_start, name_end - name_start);
	fn->file = s->file;
	fn->text = s->t + start;
	fn->len = s->i > start ? s->i - start : 0;
	fn->line = line;
	fn->next = sh->funcs;
	sh->funcs = fn;
	return T_TRUE;
}

static bool func_name_ok(const char *t, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (sh_in_set("'\"$`\\=", t[k]))
			return false;
	return n > 0;
}

/* Redirections after a compound command (done < file, } > log): skipped,
 * but here-documents are located so that the lexer jumps over them. */
static void trailing_redirs(struct sh *sh, struct sh_src *s)
{
	for (;;) {
		struct sh_redir r;

		sh_skip_ws(s, false);
		if (!sh_at_redirect(s))
			return;
		sh_parse_redir(sh, s, &r);
	}
}

int sh_parse_command(struct sh *sh, struct sh_src *s, bool ex)
{
	char tok[64];
	int r;

	sh_skip_ws(s, false);
	sh_step(sh);
	sh_nest_in(sh);
	/* After exit, or a break/continue until the loop it leaves. */
	if (sh->stop || sh->brk || sh->cont)
		ex = false;
	sh_peek_tok(s, tok, sizeof(tok));
	if (!strcmp(tok, "if")) {
		r = parse_if(sh, s, ex);
	} else if (!strcmp(tok, "for")) {
		r = parse_for(sh, s, ex);
	} else if (!strcmp(tok, "while") || !strcmp(tok, "until")) {
		r = parse_while(sh, s, ex, tok[0] == 'u');
	} else if (!strcmp(tok, "case")) {
		r = parse_case(sh, s, ex);
	} else if (!strcmp(tok, "{")) {
		char hit[8];

		sh_consume_tok(s, "{");
		r = parse_list(sh, s, ex, T_BRACE, hit, sizeof(hit));
	} else if (!strcmp(tok, "((")) {
		size_t e = sh_scan_paren(s->t, s->n, s->i + 2, 0);
		bool u = false;
		const char *v = "0";

		if (ex)
			v = sh_arith(sh, s->t + s->i + 2, e > s->i + 3 ? e - s->i - 3 : 0, s->line, s->file, &u);
		sh_adv_to(s, e < s->n && s->t[e] == ')' ? e + 1 : e);
		r = !ex || u ? T_UNKNOWN : strcmp(v, "0") ? T_TRUE : T_FALSE;
	} else if (!strcmp(tok, "(")) {
		char hit[8];

		sh_adv1(s);
		r = parse_list(sh, s, ex, T_PAREN, hit, sizeof(hit));
	} else if (!strcmp(tok, "[[")) {
		r = sh_cond_dbracket(sh, s, ex);
	} else if (!strcmp(tok, "function")) {
		size_t a, b;

		sh_consume_tok(s, "function");
		sh_skip_ws(s, false);
		a = s->i;
		b = sh_scan_word(s);
		sh_adv_to(s, b);
		r = parse_funcdef(sh, s, ex, a, b);
	} else {
		/* name () compound: bash takes any plain word as a name (":" too) */
		struct sh_src save = *s;
		size_t b = sh_scan_word(s);

		if (b > s->i && func_name_ok(s->t + s->i, b - s->i)) {
			size_t a = s->i;

			sh_adv_to(s, b);
			sh_skip_ws(s, false);
			if (sh_cur(s) == '(') {
				struct sh_src save2 = *s;

				sh_adv1(s);
				sh_skip_ws(s, false);
				if (sh_cur(s) == ')') {
					sh_adv1(s);
					*s = save2;
					r = parse_funcdef(sh, s, ex, a, b);
					goto out;
				}
			}
		}
		*s = save;
		sh->nest--;
		return sh_simple_command(sh, s, ex);
	}
	trailing_redirs(sh, s);
out:
	sh->nest--;
	return r;
}

static int parse_pipeline(struct sh *sh, struct sh_src *s, bool ex)
{
	bool neg = false;
	int r;

	sh_skip_ws(s, false);
	if (sh_cur(s) == '!' && (sh_peekc(s, 1) == ' ' || sh_peekc(s, 1) == '\t')) {
		sh_adv1(s);
		neg = true;
	}
	if (s->i + 5 <= s->n && !memcmp(s->t + s->i, "time ", 5)) {
		/* The time keyword: times the pipeline, runs it. */
		sh_adv_to(s, s->i + 5);
	}
	sh->pipe_out = NULL;
	r = sh_parse_command(sh, s, ex);
	for (;;) {
		sh_skip_ws(s, false);
		if (sh_cur(s) == '|' && sh_peekc(s, 1) != '|') {
			sh_adv1(s);
			if (sh_cur(s) == '&')
				sh_adv1(s);
			sh_skip_ws(s, true);
			/* What the command before wrote, when known, is the
			 * input of the next one. */
			sh->pipe_in = sh->pipe_out;
			sh->pipe_out = NULL;
			r = sh_parse_command(sh, s, ex);
			sh->pipe_in = NULL;
		} else {
			break;
		}
	}
	sh->pipe_out = NULL;
	return neg ? sh_tri_not(r) : r;
}

static int parse_and_or(struct sh *sh, struct sh_src *s, bool ex)
{
	int r = parse_pipeline(sh, s, ex);

	for (;;) {
		bool and;
		bool run;
		int r2;

		sh_skip_ws(s, false);
		if (sh_cur(s) == '&' && sh_peekc(s, 1) == '&')
			and = true;
		else if (sh_cur(s) == '|' && sh_peekc(s, 1) == '|')
			and = false;
		else
			return r;
		sh_adv_to(s, s->i + 2);
		sh_skip_ws(s, true);
		run = ex && (and ? r != T_FALSE : r != T_TRUE);
		if (run && r == T_UNKNOWN)
			sh->uncertain++;
		r2 = parse_pipeline(sh, s, run);
		if (run && r == T_UNKNOWN)
			sh->uncertain--;
		if (and)
			r = r == T_FALSE ? T_FALSE : r == T_TRUE ? r2 : r2 == T_FALSE ? T_FALSE : T_UNKNOWN;
		else
			r = r == T_TRUE ? T_TRUE : r == T_FALSE ? r2 : r2 == T_TRUE ? T_TRUE : T_UNKNOWN;
	}
}

static bool is_term(const char *const *terms, const char *tok)
{
	for (int k = 0; terms && terms[k]; k++)
		if (!strcmp(terms[k], tok))
			return true;
	return false;
}

static int parse_list(struct sh *sh, struct sh_src *s, bool ex, const char *const *terms,
		      char *hit, size_t hitlen)
{
	int r = T_TRUE;
	char tok[64];

	hit[0] = '\0';
	for (;;) {
		size_t before;

		sh_skip_ws(s, true);
		while (sh_cur(s) == ';' && sh_peekc(s, 1) != ';' && sh_peekc(s, 1) != '&') {
			sh_adv1(s);
			sh_skip_ws(s, true);
		}
		if (sh_at_end(s))
			return r;
		sh_peek_tok(s, tok, sizeof(tok));
		if (is_term(terms, tok)) {
			sh_consume_tok(s, tok);
			adv_strlcpy(hit, tok, hitlen);
			return r;
		}
		before = s->i;
		r = parse_and_or(sh, s, ex && !sh->stop && !sh->brk && !sh->cont);
		sh_skip_ws(s, false);
		if (sh_cur(s) == ';' && sh_peekc(s, 1) != ';' && sh_peekc(s, 1) != '&')
			sh_adv1(s);
		else if (sh_cur(s) == '&' && sh_peekc(s, 1) != '&')
			sh_adv1(s);
		else if (sh_cur(s) == '\n')
			sh_adv1(s);
		if (s->i == before) {
			/* Something no rule takes (a stray ')' or ";;"): skip it. */
			sh_step(sh);
			sh_adv1(s);
		}
	}
}

bool sh_eval_text(struct sh *sh, const char *file, const char *text, size_t len, int line,
		  char **pos, int n_pos, bool inner)
{
	return sh_eval_text_m(sh, file, text, len, line, pos, n_pos, inner, NULL);
}

bool sh_eval_text_m(struct sh *sh, const char *file, const char *text, size_t len, int line,
		    char **pos, int n_pos, bool inner, const struct sh_lmap *map)
{
	return sh_eval_text_mb(sh, file, text, len, line, pos, n_pos, inner, map, 0);
}

bool sh_eval_text_mb(struct sh *sh, const char *file, const char *text, size_t len, int line,
		     char **pos, int n_pos, bool inner, const struct sh_lmap *map, size_t map_base)
{
	bool save_stop = sh->stop, ok = true, shared;
	int save_frame = sh->frame;
	struct sh_src s = { file, text, len, 0, line > 0 ? line : 1, false, 0, 0, 0, map, 0, file,
			    map_base };
	char **save_pos = sh->pos;
	int save_n = sh->n_pos;
	const int *save_lines = sh->pos_lines;
	const char *const *save_files = sh->pos_files;
	char hit[8];

	sh->input += len;
	if (sh->input > sh->lim.max_input)
		sh_fail(sh, SH_ERR_INPUT);
	if (++sh->depth > sh->lim.max_depth)
		sh_fail(sh, SH_ERR_DEPTH);
	if (pos != save_pos) {
		sh->pos_lines = NULL;
		sh->pos_files = NULL;
	}
	shared = sh->files > 0 && pos == save_pos && n_pos == save_n;
	sh->pos = pos;
	sh->n_pos = n_pos;
	if (inner)
		sh->inner++;
	sh->files++;
	sh_src_sync(&s);
	parse_list(sh, &s, true, NULL, hit, sizeof(hit));
	sh->files--;
	if (inner)
		sh->inner--;
	/* A syntax error stops this file only: source, bash -c and eval fail
	 * (status 2) and their caller goes on; in the script, bash exits. */
	if (sh->syn_abort) {
		sh->syn_abort = false;
		ok = false;
		if (sh->files > 0)
			sh->stop = save_stop;
	}
	/* return in a sourced file (not in a function it defines) leaves it. */
	if (sh->ret && sh->files > 0 && sh->frame == save_frame) {
		sh->ret = false;
		sh->stop = save_stop;
	}
	/* eval, and source without arguments, share the caller's positional
	 * parameters: a set -- or shift in them stays (bash manual, "Bourne
	 * Shell Builtins": eval, and "." which restores them only when it was
	 * given arguments).  bash -c and source with arguments have their own. */
	if (!shared) {
		sh->pos = save_pos;
		sh->n_pos = save_n;
		sh->pos_lines = save_lines;
		sh->pos_files = save_files;
	}
	sh->depth--;
	return ok;
}

/* ---- the API ------------------------------------------------------------------------ */

sh_t *sh_create(const struct sh_limits *lim)
{
	struct sh *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	sh->lim.max_input = lim && lim->max_input ? lim->max_input : 1024 * 1024;
	sh->lim.max_steps = lim && lim->max_steps ? lim->max_steps : 200000;
	sh->lim.max_depth = lim && lim->max_depth ? lim->max_depth : 48;
	sh->lim.max_word = lim && lim->max_word ? lim->max_word : 64 * 1024;
	sh->lim.max_memory = lim && lim->max_memory ? lim->max_memory : 16 * 1024 * 1024;
	sh->lim.max_commands = lim && lim->max_commands ? lim->max_commands : 4096;
	sh->notes[0] = NULL;
	return sh;
}

void sh_destroy(sh_t *sh)
{
	if (!sh)
		return;
	sh_arena_free(sh);
	free(sh);
}

int sh_setvar(sh_t *sh, const char *name, const char *value, bool exported, bool unknown)
{
	return sh_setvar_at(sh, name, value, exported, unknown, 0, NULL);
}

int sh_setvar_at(sh_t *sh, const char *name, const char *value, bool exported, bool unknown,
		 int line, const char *file)
{
	if (!sh || !name || !sh_valid_name(name, strlen(name)) || strlen(name) >= 128)
		return -1;
	if (setjmp(sh->jb)) {
		sh->jb_set = false;
		return -1;
	}
	sh->jb_set = true;
	if (unknown && (!value || !*value)) {
		/* The placeholder of a value not known yet is its own expansion,
		 * found unknown again when a string is evaluated again. */
		char ph[140];

		adv_snprintf(ph, sizeof(ph), "${%s}", name);
		sh_var_set_ne(sh, name, ph, line, file);
	} else if (unknown) {
		sh_var_set_ne(sh, name, value, line, file);
	} else {
		sh_var_set(sh, name, value ? value : "", false, line, file);
	}
	sh_var_get(sh, name)->exported = exported;
	sh->jb_set = false;
	return 0;
}

int sh_set_args(sh_t *sh, const char *arg0, bool arg0_unknown, int argc, char *const argv[])
{
	if (!sh || argc < 0 || (argc > 0 && !argv))
		return -1;
	if (setjmp(sh->jb)) {
		sh->jb_set = false;
		return -1;
	}
	sh->jb_set = true;
	sh->arg0 = arg0 ? sh_strdup(sh, arg0) : NULL;
	sh->arg0_spool = arg0 && arg0_unknown;
	sh->args = sh_alloc(sh, sizeof(char *) * (size_t)(argc + 1));
	for (int k = 0; k < argc; k++)
		sh->args[k] = sh_strdup(sh, argv[k] ? argv[k] : "");
	sh->n_args = argc;
	sh->jb_set = false;
	return 0;
}

int sh_set_cwd(sh_t *sh, const char *cwd)
{
	if (!sh || !cwd || cwd[0] != '/')
		return -1;
	if (setjmp(sh->jb)) {
		sh->jb_set = false;
		return -1;
	}
	sh->jb_set = true;
	sh->cwd = sh_path_resolve(sh, NULL, cwd);
	sh->jb_set = false;
	return 0;
}

int sh_run(sh_t *sh, const char *name, const char *text, size_t len, sh_open_fn open, void *arg)
{
	return sh_run_vfile(sh, name, text, len, 0, NULL, open, arg);
}

int sh_run_vfile(sh_t *sh, const char *name, const char *text, size_t len, size_t skip,
		 const struct sh_vfile *vf, sh_open_fn open, void *arg)
{
	size_t n = len;
	int cut;

	if (!sh)
		return SH_ERR_NOMEM;
	cut = n > sh->lim.max_input;
	if (cut)
		n = sh->lim.max_input;
	sh->open = open;
	sh->open_arg = arg;
	sh->err = SH_OK;
	sh->stop = false;
	if (setjmp(sh->jb)) {
		sh->jb_set = false;
		sh->depth = 0;
		sh->nest = 0;
		sh->xnest = 0;
		sh->inner = 0;
		sh->eval_line = 0;
		sh->eval_file = NULL;
		sh->pipe_in = sh->pipe_out = sh->cur_in = NULL;
		sh->uncertain = 0;
		sh->loops = 0;
		sh->brk = 0;
		sh->cont = 0;
		sh->files = 0;
		sh->syn_abort = false;
		sh->ret = false;
		return sh->err;
	}
	sh->jb_set = true;
	sh_eval_text_mb(sh, name ? name : "script", text ? text : "", text ? n : 0, 1, sh->args,
			sh->n_args, false, vf && skip <= n ? vf->map : NULL, skip);
	sh->jb_set = false;
	return cut ? SH_ERR_INPUT : SH_OK;
}

const struct sh_cmd *sh_commands(const sh_t *sh)
{
	return sh && sh->cmds ? &sh->cmds->pub : NULL;
}

const struct sh_vfile *sh_vfiles(const sh_t *sh)
{
	return sh && sh->vfiles ? &sh->vfiles->pub : NULL;
}

const struct sh_vfile *sh_vfile_find(const sh_t *sh, const char *path)
{
	const struct sh_vfile *hit = NULL;

	if (!sh || !path)
		return NULL;
	for (const struct sh_vfile_rec *v = sh->vfiles; v; v = v->next) {
		const char *p = v->pub.path;

		/* "./ds.json" and "ds.json" name the same file. */
		while (p[0] == '.' && p[1] == '/')
			p += 2;
		if (!strcmp(p, path) || !strcmp(v->pub.path, path) ||
		    (path[0] == '.' && path[1] == '/' && !strcmp(p, path + 2)))
			hit = &v->pub;
	}
	return hit;
}

const char *sh_getvar(const sh_t *sh, const char *name, bool *unknown)
{
	const struct sh_var *v = sh && name ? sh_var_find(sh, name) : NULL;

	if (!v || v->n == 0)
		return NULL;
	if (unknown)
		*unknown = v->unk[0];
	return v->vals[0];
}

const char *sh_getenv(const sh_t *sh, const char *name, bool *unknown, int *line,
		      const char **file)
{
	const struct sh_var *v = sh && name ? sh_var_find(sh, name) : NULL;

	if (!v || v->n == 0 || v->array || !v->exported)
		return NULL;
	if (unknown)
		*unknown = v->unk[0];
	if (line)
		*line = v->lines ? v->lines[0] : 0;
	if (file)
		*file = v->files ? v->files[0] : NULL;
	return v->vals[0];
}

bool sh_syntax_error(const sh_t *sh, const char **file, int *line, bool *nested)
{
	if (!sh || !sh->syn_line)
		return false;
	if (file)
		*file = sh->syn_file;
	if (line)
		*line = sh->syn_line;
	if (nested)
		*nested = sh->syn_nested;
	return true;
}

bool sh_unset_command(const sh_t *sh, int k, const char **file, int *line, const char **name)
{
	if (!sh || k < 0 || k >= sh->n_unset_cmds)
		return false;
	if (file)
		*file = sh->unset_cmds[k].file;
	if (line)
		*line = sh->unset_cmds[k].line;
	if (name)
		*name = sh->unset_cmds[k].name;
	return true;
}

const char *const *sh_notes(const sh_t *sh, size_t *n)
{
	if (n)
		*n = sh ? sh->n_notes : 0;
	return sh ? sh->notes : NULL;
}

const char *sh_strerror(int code)
{
	switch (code) {
	case SH_OK: return "ok";
	case SH_ERR_NOMEM: return "out of memory";
	case SH_ERR_INPUT: return "over the reader's 1 MiB of script text";
	case SH_ERR_STEPS: return "over the reader's step bound";
	case SH_ERR_DEPTH: return "nested too deeply (source, bash -c, eval, functions)";
	case SH_ERR_EXPANSION: return "a word or variable grew over the reader's bound";
	case SH_ERR_MEMORY: return "over the reader's memory bound";
	case SH_ERR_COMMANDS: return "too many commands";
	default: return "unknown error";
	}
}
