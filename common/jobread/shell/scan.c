/*
 * scan.c - scanning for the shell evaluator (sh_impl.h): reading the
 * source text (line counts, blanks, comments, backslash-newlines), finding
 * where a word and each construct in it ends (quotes, $( ), ${ }, $(( )),
 * backquotes), the next token, assignment words, and redirections with
 * the here-document bodies they read.
 *
 * It follows the bash manual, "Shell Syntax" (Shell Operation, Quoting,
 * Comments), "Definitions" (metacharacters, names), "Redirections" and
 * "Here Documents": a here-document's body starts on the line after its
 * <<, so the lexer notes where the body ends and jumps over it at the
 * newline that ends the line of the <<.  Scanning only finds extents;
 * what a word means is expand.c's.  Its depth is bounded (64) apart from
 * sh_limits, as it recurses on nested constructs.
 */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "sh_impl.h"
#include "util.h"

/* ---- source text -------------------------------------------------------------------- */

void sh_src_sync(struct sh_src *s)
{
	const struct sh_lmap *m = s->map;

	size_t i;

	if (!m || s->i < s->map_base)
		return;
	i = s->i - s->map_base;
	/* s->i only grows (a source is copied to be read again, with its
	 * run): each entry of the map is passed once. */
	while (s->run + 1 < m->n && m->r[s->run + 1].off <= i)
		s->run++;
	if (s->run < m->n && m->r[s->run].off <= i && m->r[s->run].line > 0) {
		s->line = m->r[s->run].line;
		s->file = m->r[s->run].file ? m->r[s->run].file : s->file0;
	}
}

/* Consumes one character, keeping the line count and jumping over the
 * here-document bodies at the end of their line. */
void sh_adv1(struct sh_src *s)
{
	if (s->i >= s->n)
		return;
	if (s->t[s->i] == '\n') {
		if (s->has_skip && s->i == s->skip_at) {
			s->i = s->skip_to;
			s->line += 1 + s->skip_lines;
			s->has_skip = false;
			s->skip_lines = 0;
			sh_src_sync(s);
			return;
		}
		s->line++;
	}
	s->i++;
	sh_src_sync(s);
}

/* Blanks, backslash-newlines and comments; newlines too when asked. */
void sh_skip_ws(struct sh_src *s, bool newlines)
{
	for (;;) {
		char c = sh_cur(s);

		if (c == ' ' || c == '\t' || c == '\r') {
			sh_adv1(s);
		} else if (c == '\\' && sh_peekc(s, 1) == '\n') {
			sh_adv1(s);
			sh_adv1(s);
		} else if (c == '#') {
			/* A comment holds no newline but its last: jump to it. */
			const char *nl = memchr(s->t + s->i, '\n', s->n - s->i);

			s->i = nl ? (size_t)(nl - s->t) : s->n;
			sh_src_sync(s);
		} else if (c == '\n' && newlines) {
			sh_adv1(s);
		} else {
			return;
		}
	}
}

/* ---- where constructs end ----------------------------------------------------------- */

static size_t scan_dollar(const char *t, size_t n, size_t i, int depth);

static size_t scan_squote(const char *t, size_t n, size_t i)
{
	/* t[i] == '\'' */
	for (i++; i < n && t[i] != '\''; i++)
		;
	return i < n ? i + 1 : n;
}

static size_t scan_backtick(const char *t, size_t n, size_t i)
{
	for (i++; i < n && t[i] != '`'; i++)
		if (t[i] == '\\')
			i++;
	return i < n ? i + 1 : n;
}

static size_t scan_dquote(const char *t, size_t n, size_t i, int depth)
{
	for (i++; i < n && t[i] != '"';) {
		if (t[i] == '\\')
			i += 2;
		else if (t[i] == '$')
			i = scan_dollar(t, n, i, depth + 1);
		else if (t[i] == '`')
			i = scan_backtick(t, n, i);
		else
			i++;
	}
	return i < n ? i + 1 : n;
}

/* From just after an opening '(' to just after its ')'. */
static size_t scan_paren(const char *t, size_t n, size_t i, int depth)
{
	int level = 1;

	if (depth > 64)
		return n;
	while (i < n && level > 0) {
		char c = t[i];

		if (c == '\\')
			i += 2;
		else if (c == '\'')
			i = scan_squote(t, n, i);
		else if (c == '"')
			i = scan_dquote(t, n, i, depth);
		else if (c == '`')
			i = scan_backtick(t, n, i);
		else if (c == '$')
			i = scan_dollar(t, n, i, depth + 1);
		else if (c == '#' && (i == 0 || t[i - 1] == ' ' || t[i - 1] == '\t' || t[i - 1] == '\n')) {
			while (i < n && t[i] != '\n')
				i++;
		} else {
			if (c == '(')
				level++;
			else if (c == ')')
				level--;
			i++;
		}
	}
	return i > n ? n : i;
}

/* From just after "${" to just after its '}'. */
static size_t scan_brace(const char *t, size_t n, size_t i, int depth)
{
	if (depth > 64)
		return n;
	while (i < n && t[i] != '}') {
		if (t[i] == '\\')
			i += 2;
		else if (t[i] == '\'')
			i = scan_squote(t, n, i);
		else if (t[i] == '"')
			i = scan_dquote(t, n, i, depth);
		else if (t[i] == '$')
			i = scan_dollar(t, n, i, depth + 1);
		else if (t[i] == '`')
			i = scan_backtick(t, n, i);
		else
			i++;
	}
	return i < n ? i + 1 : n;
}

static size_t scan_dollar(const char *t, size_t n, size_t i, int depth)
{
	/* t[i] == '$' */
	if (depth > 64 || i + 1 >= n)
		return i + 1 > n ? n : i + 1;
	if (t[i + 1] == '(' && i + 2 < n && t[i + 2] == '(') {
		/* $(( ... )): arithmetic, unless it is $( (subshell) ) */
		size_t e = scan_paren(t, n, i + 3, depth);   /* inner '(' closed */

		if (e >= n)
			return n;
		/* "$( (cmd) )" is a command substitution of a subshell. */
		return t[e] == ')' ? e + 1 : scan_paren(t, n, e, depth);
	}
	if (t[i + 1] == '(')
		return scan_paren(t, n, i + 2, depth);
	if (t[i + 1] == '{')
		return scan_brace(t, n, i + 2, depth);
	if (t[i + 1] == '\'') {
		/* $'...': backslash escapes, \' among them. */
		for (i += 2; i < n && t[i] != '\''; i++)
			if (t[i] == '\\')
				i++;
		return i < n ? i + 1 : n;
	}
	if (t[i + 1] == '"')
		return scan_dquote(t, n, i + 1, depth);
	if (sh_is_name_start(t[i + 1])) {
		i += 2;
		while (i < n && sh_is_name_char(t[i]))
			i++;
		return i;
	}
	if (isdigit((unsigned char)t[i + 1]) || sh_in_set("@*#?$!-", t[i + 1]))
		return i + 2;
	return i + 1;
}

/*
 * The scanners for the other phases.  The recursive scanners above stay
 * static, so that the compiler optimizes them together as it did when the
 * evaluator was one file: exported, they made the hostile 1 MiB script of
 * tests/bench 20% slower to cut off.
 */
size_t sh_scan_squote(const char *t, size_t n, size_t i)
{
	return scan_squote(t, n, i);
}

size_t sh_scan_backtick(const char *t, size_t n, size_t i)
{
	return scan_backtick(t, n, i);
}

size_t sh_scan_dquote(const char *t, size_t n, size_t i, int depth)
{
	return scan_dquote(t, n, i, depth);
}

size_t sh_scan_paren(const char *t, size_t n, size_t i, int depth)
{
	return scan_paren(t, n, i, depth);
}

size_t sh_scan_dollar(const char *t, size_t n, size_t i, int depth)
{
	return scan_dollar(t, n, i, depth);
}

static bool is_meta(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' ||
	       c == '|' || c == '<' || c == '>' || c == '(' || c == ')';
}

/* The end of the word starting at s->i (not consumed). */
size_t sh_scan_word(const struct sh_src *s)
{
	const char *t = s->t;
	size_t n = s->n, i = s->i;

	/* A process substitution, <(cmd) or >(cmd), is one word (bash gives
	 * it a /dev/fd name): `cmd > >(tee log)` redirects to it. */
	if (i + 1 < n && (t[i] == '<' || t[i] == '>') && t[i + 1] == '(')
		i = scan_paren(t, n, i + 2, 0);
	while (i < n && !is_meta(t[i])) {
		char c = t[i];

		if (c == '\\')
			i = i + 2 > n ? n : i + 2;
		else if (c == '\'')
			i = scan_squote(t, n, i);
		else if (c == '"')
			i = scan_dquote(t, n, i, 0);
		else if (c == '`')
			i = scan_backtick(t, n, i);
		else if (c == '$')
			i = scan_dollar(t, n, i, 0);
		else
			i++;
	}
	return i;
}

/* Advances over [s->i, end), counting lines. */
void sh_adv_to(struct sh_src *s, size_t end)
{
	if (end > s->n)
		end = s->n;
	if (!s->has_skip || s->skip_at < s->i || s->skip_at >= end) {
		/* No here-document to jump over in between: count and go. */
		const char *p = s->t + s->i, *e = s->t + end;

		while (p < e && (p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
			s->line++;
			p++;
		}
		if (end > s->i)
			s->i = end;
		sh_src_sync(s);
		return;
	}
	while (s->i < end && s->i < s->n)
		sh_adv1(s);
}

/* ---- tokens, assignment words, redirections ----------------------------------------- */

/* The next token, not consumed: an operator or a plain word. */
void sh_peek_tok(struct sh_src *s, char *buf, size_t len)
{
	static const char *const ops[] = { ";;&", ";;", ";&", "&&", "||", "|&", "((", ";", "&",
					   "|", "(", ")", "\n", NULL };
	size_t end;

	buf[0] = '\0';
	if (sh_at_end(s))
		return;
	for (int k = 0; sh_in_set(";&|()\n", sh_cur(s)) && ops[k]; k++) {
		size_t n = strlen(ops[k]);

		if (s->i + n <= s->n && !memcmp(s->t + s->i, ops[k], n)) {
			adv_strlcpy(buf, ops[k], len);
			return;
		}
	}
	end = sh_scan_word(s);
	if (end > s->i && end - s->i < len) {
		memcpy(buf, s->t + s->i, end - s->i);
		buf[end - s->i] = '\0';
	}
}

void sh_consume_tok(struct sh_src *s, const char *tok)
{
	sh_adv_to(s, s->i + strlen(tok));
}

/* A word is an assignment: NAME=, NAME+=, NAME[...]= before any quote. */
bool sh_raw_assignment(const struct sh_raw *r, size_t *name_len, size_t *eq)
{
	size_t k = 0;

	if (r->n == 0 || !sh_is_name_start(r->t[0]))
		return false;
	while (k < r->n && sh_is_name_char(r->t[k]))
		k++;
	*name_len = k;
	if (k < r->n && r->t[k] == '[') {
		while (k < r->n && r->t[k] != ']')
			k++;
		if (k >= r->n)
			return false;
		k++;
	}
	if (k < r->n && r->t[k] == '+')
		k++;
	if (k < r->n && r->t[k] == '=') {
		*eq = k;
		return true;
	}
	return false;
}

bool sh_at_redirect(const struct sh_src *s)
{
	size_t i = s->i;

	while (i < s->n && isdigit((unsigned char)s->t[i]))
		i++;
	/* <(cmd) and >(cmd) are words (process substitution), not redirections. */
	if (i == s->i && i + 1 < s->n && (s->t[i] == '<' || s->t[i] == '>') && s->t[i + 1] == '(')
		return false;
	if (i < s->n && (s->t[i] == '<' || s->t[i] == '>'))
		return true;
	return i == s->i && i + 1 < s->n && s->t[i] == '&' && s->t[i + 1] == '>';
}

/* A here-document body: from the line after the one being read up to the
 * delimiter line; the lexer jumps over it at that line's end. */
static void heredoc_body(struct sh *sh, struct sh_src *s, struct sh_redir *r, const char *delim)
{
	size_t start, p, dl = strlen(delim);
	int lines = 0;

	/* The body starts on the line after the one its << is on, after the
	 * bodies of the here-documents before it on that line. */
	r->body_line = s->line + 1 + s->skip_lines;
	if (s->has_skip) {
		start = s->skip_to;
	} else {
		const char *nl = memchr(s->t + s->i, '\n', s->n - s->i);

		if (!nl) {
			r->body = "";
			r->body_len = 0;
			return;
		}
		s->skip_at = (size_t)(nl - s->t);
		start = s->skip_at + 1;
	}
	p = start;
	for (;;) {
		const char *nl;
		size_t ls = p, le;

		if (p >= s->n) {
			/* No delimiter: the rest of the file (bash warns the same). */
			r->body = s->t + start;
			r->body_len = s->n - start;
			s->skip_to = s->n;
			break;
		}
		nl = memchr(s->t + p, '\n', s->n - p);
		le = nl ? (size_t)(nl - s->t) : s->n;
		if (r->strip_tabs)
			while (ls < le && s->t[ls] == '\t')
				ls++;
		if (le - ls == dl && !memcmp(s->t + ls, delim, dl)) {
			r->body = s->t + start;
			r->body_len = p - start;
			s->skip_to = nl ? le + 1 : s->n;
			lines++;
			break;
		}
		lines++;
		p = nl ? le + 1 : s->n;
		sh_step(sh);
	}
	s->skip_lines += lines;
	s->has_skip = true;
}

void sh_syntax(struct sh *sh, const struct sh_src *s, int line)
{
	/* Past an exit bash never reads the text; and the first error is the
	 * one bash reports. */
	if (sh->stop)
		return;
	if (!sh->syn_line) {
		sh->syn_line = line;
		adv_strlcpy(sh->syn_file, s->file ? s->file : "", sizeof(sh->syn_file));
		sh->syn_nested = sh->files > 1;
	}
	sh->syn_abort = true;
	sh->stop = true;
}

void sh_parse_redir(struct sh *sh, struct sh_src *s, struct sh_redir *r)
{
	static const char *const ops[] = { "&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", ">&",
					   "<&", "<>", ">", "<", NULL };
	size_t end;

	memset(r, 0, sizeof(*r));
	while (isdigit((unsigned char)sh_cur(s)))
		sh_adv1(s);
	for (int k = 0; ops[k]; k++) {
		size_t n = strlen(ops[k]);

		if (s->i + n <= s->n && !memcmp(s->t + s->i, ops[k], n)) {
			adv_strlcpy(r->op, ops[k], sizeof(r->op));
			sh_adv_to(s, s->i + n);
			break;
		}
	}
	sh_skip_ws(s, false);
	end = sh_scan_word(s);
	r->target.t = s->t + s->i;
	r->target.n = end - s->i;
	r->target.line = s->line;
	/* "VAR=<placeholder>" or "cmd >" at the end of a line: a redirection
	 * with no word is bash's "syntax error near unexpected token". */
	if (end == s->i)
		sh_syntax(sh, s, s->line);
	sh_adv_to(s, end);
	if (!strcmp(r->op, "<<") || !strcmp(r->op, "<<-")) {
		char delim[256];
		size_t k = 0;

		r->strip_tabs = r->op[2] == '-';
		for (size_t q = 0; q < r->target.n && k + 1 < sizeof(delim); q++) {
			char c = r->target.t[q];

			if (c == '\'' || c == '"' || c == '\\') {
				r->quoted = true;
				continue;
			}
			delim[k++] = c;
		}
		delim[k] = '\0';
		heredoc_body(sh, s, r, delim);
	}
}
