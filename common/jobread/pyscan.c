/*
 * pyscan.c - a static scanner of Python source (issue 28): the calls a
 * program makes, with the literal value of each argument, and the names
 * its statements assign, each with its line.  The job reader uses it to
 * read the program a job runs (fw/fw_python.c) without running it.
 *
 * The lexical rules are Python's own (The Python Language Reference,
 * "Lexical analysis", docs.python.org/3/reference/lexical_analysis.html):
 * comments run from '#' to the end of the line; string literals take an
 * optional prefix of r, b, u, f (any case, two at most), single or triple
 * quotes, backslash escapes (a raw string keeps them, but an escaped quote
 * still does not end it), and adjacent literals are one string; an
 * f-string with a replacement field is not a literal; a newline inside
 * brackets or after a backslash does not end the logical line.  On that,
 * the scanner recognises only call syntax: a dotted name followed by '('
 * is a call, its arguments split at the commas of its own bracket level,
 * "NAME=" starting a keyword argument; a statement "NAME = VALUE" or
 * "NAME: TYPE = VALUE" (a dataclass field) as an assignment; and "import
 * a.b" or "from a import b" (The Python Language Reference, 7.11 "The
 * import statement") as the modules a program imports.  Everything
 * else is an expression whose value is not known statically (PY_OTHER).
 *
 * The text is hostile: every loop advances through it once, brackets
 * deeper than PY_MAX_DEPTH are skipped by counting, and what is kept is
 * bounded (pyscan.h); nothing is allocated.
 */
#include "config.h"

#include <string.h>

#include "pyscan.h"
#include "util.h"

enum tk {
	T_END, T_NL, T_NAME, T_STR, T_NUM, T_OPEN, T_CLOSE, T_COMMA, T_DOT, T_ASSIGN, T_COLON,
	T_SEMI, T_AUG, T_MINUS, T_STARS, T_OP,
};

struct tok {
	enum tk k;
	char c;                    /* T_OPEN/T_CLOSE: the bracket */
	int line;
	bool plain;                /* T_STR: no f-string field, not bytes */
	char val[PY_TEXT_MAX];     /* T_NAME, T_NUM: the text; T_STR: the decoded value */
};

struct lex {
	const char *p, *end;
	int line;
	int depth;                 /* brackets open: a newline inside them is no token */
};

static bool name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c >= 0x80;
}

static void put(struct tok *t, size_t *n, char c)
{
	if (*n + 1 < sizeof(t->val))
		t->val[(*n)++] = c;
	t->val[*n] = '\0';
}

/* A string literal from its opening quote; flags from the prefix. */
static void lex_string(struct lex *lx, struct tok *t, bool raw, bool fmt, bool bytes)
{
	char q = *lx->p;
	bool triple = lx->end - lx->p >= 3 && lx->p[1] == q && lx->p[2] == q;
	size_t n = 0;

	t->k = T_STR;
	t->plain = !bytes;
	t->val[0] = '\0';
	lx->p += triple ? 3 : 1;
	while (lx->p < lx->end) {
		char c = *lx->p;

		if (c == '\\' && lx->p + 1 < lx->end) {
			char e = lx->p[1];

			if (e == '\n')
				lx->line++;
			if (raw) {
				put(t, &n, c);
				put(t, &n, e);
			} else if (e == 'n') {
				put(t, &n, '\n');
			} else if (e == 't') {
				put(t, &n, '\t');
			} else if (e == '\\' || e == '\'' || e == '"') {
				put(t, &n, e);
			} else if (e != '\n') {
				put(t, &n, c);
				put(t, &n, e);
			}
			lx->p += 2;
			continue;
		}
		if (c == q && (!triple || (lx->end - lx->p >= 3 && lx->p[1] == q && lx->p[2] == q))) {
			lx->p += triple ? 3 : 1;
			return;
		}
		if (c == '\n') {
			if (!triple)
				return;   /* unterminated: Python refuses it; the line ends here */
			lx->line++;
		}
		if (fmt && (c == '{' || c == '}')) {
			if (lx->p + 1 < lx->end && lx->p[1] == c) {
				put(t, &n, c);
				lx->p += 2;
				continue;
			}
			if (c == '{')
				t->plain = false;
		}
		put(t, &n, c);
		lx->p++;
	}
}

/* A string prefix ("r", "rb", "f", "u", ...) directly before a quote. */
static bool string_prefix(const char *s, size_t n, bool *raw, bool *fmt, bool *bytes)
{
	*raw = *fmt = *bytes = false;
	if (n == 0 || n > 2)
		return false;
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case 'r': case 'R': *raw = true; break;
		case 'f': case 'F': *fmt = true; break;
		case 'b': case 'B': *bytes = true; break;
		case 'u': case 'U': if (n != 1) return false; break;
		default: return false;
		}
	}
	return !(*fmt && *bytes);
}

static void lex_next(struct lex *lx, struct tok *t)
{
	memset(t, 0, offsetof(struct tok, val));
	t->val[0] = '\0';
	while (lx->p < lx->end) {
		unsigned char c = (unsigned char)*lx->p;
		const char *s = lx->p;
		size_t n = 0;

		t->line = lx->line;
		if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
			lx->p++;
			continue;
		}
		if (c == '\\' && lx->p + 1 < lx->end && (lx->p[1] == '\n' || lx->p[1] == '\r')) {
			lx->p += 2;
			if (lx->p[-1] == '\r' && lx->p < lx->end && *lx->p == '\n')
				lx->p++;
			lx->line++;
			continue;
		}
		if (c == '#') {
			while (lx->p < lx->end && *lx->p != '\n')
				lx->p++;
			continue;
		}
		if (c == '\n') {
			lx->p++;
			lx->line++;
			if (lx->depth > 0)
				continue;
			t->k = T_NL;
			return;
		}
		if (c == '\'' || c == '"') {
			lex_string(lx, t, false, false, false);
			return;
		}
		if (name_char(c) && !(c >= '0' && c <= '9')) {
			bool raw, fmt, bytes;

			while (lx->p < lx->end && name_char((unsigned char)*lx->p))
				lx->p++;
			n = (size_t)(lx->p - s);
			if (lx->p < lx->end && (*lx->p == '\'' || *lx->p == '"') &&
			    string_prefix(s, n, &raw, &fmt, &bytes)) {
				lex_string(lx, t, raw, fmt, bytes);
				return;
			}
			t->k = T_NAME;
			adv_snprintf(t->val, sizeof(t->val), "%.*s", (int)(n < sizeof(t->val) ? n : sizeof(t->val) - 1), s);
			return;
		}
		if ((c >= '0' && c <= '9') ||
		    (c == '.' && lx->p + 1 < lx->end && lx->p[1] >= '0' && lx->p[1] <= '9')) {
			bool hex = c == '0' && lx->p + 1 < lx->end && (lx->p[1] == 'x' || lx->p[1] == 'X');

			lx->p++;
			while (lx->p < lx->end) {
				char d = *lx->p;

				if (name_char((unsigned char)d) || d == '.' ||
				    ((d == '+' || d == '-') && !hex && (lx->p[-1] == 'e' || lx->p[-1] == 'E')))
					lx->p++;
				else
					break;
			}
			n = (size_t)(lx->p - s);
			t->k = T_NUM;
			adv_snprintf(t->val, sizeof(t->val), "%.*s", (int)(n < sizeof(t->val) ? n : sizeof(t->val) - 1), s);
			return;
		}
		lx->p++;
		t->c = (char)c;
		switch (c) {
		case '(': case '[': case '{':
			lx->depth++;
			t->k = T_OPEN;
			return;
		case ')': case ']': case '}':
			if (lx->depth > 0)
				lx->depth--;
			t->k = T_CLOSE;
			return;
		case ',': t->k = T_COMMA; return;
		case ';': t->k = T_SEMI; return;
		case '.':
			if (lx->end - lx->p >= 2 && lx->p[0] == '.' && lx->p[1] == '.') {
				lx->p += 2;
				t->k = T_OP;   /* Ellipsis */
			} else {
				t->k = T_DOT;
			}
			return;
		case ':':
			if (lx->p < lx->end && *lx->p == '=') {
				lx->p++;
				t->k = T_OP;   /* := */
			} else {
				t->k = T_COLON;
			}
			return;
		case '=':
			if (lx->p < lx->end && *lx->p == '=') {
				lx->p++;
				t->k = T_OP;
			} else {
				t->k = T_ASSIGN;
			}
			return;
		case '-':
			if (lx->p < lx->end && (*lx->p == '=' || *lx->p == '>')) {
				t->k = *lx->p == '=' ? T_AUG : T_OP;
				lx->p++;
			} else {
				t->k = T_MINUS;
			}
			return;
		case '<': case '>': case '!':
			if (lx->p < lx->end && *lx->p == '=') {
				lx->p++;
				t->k = T_OP;   /* a comparison */
				return;
			}
			/* fall through */
		default:
			/* + * / % & | ^ @ ~ << >> ** //, and "=" after them */
			if (lx->p < lx->end && *lx->p == (char)c && (c == '*' || c == '/' || c == '<' || c == '>'))
				lx->p++;
			if (lx->p < lx->end && *lx->p == '=' && c != '~') {
				lx->p++;
				t->k = T_AUG;
				return;
			}
			t->k = c == '*' ? T_STARS : T_OP;
			return;
		}
	}
	t->k = T_END;
	t->line = lx->line;
}

/* ---- the parser ------------------------------------------------------------------ */

/* A statement's assignment, as it is read. */
enum { ST_START, ST_TARGET, ST_ANNOT, ST_VALUE, ST_NONE, ST_IMPORT, ST_FROM, ST_FROM_NAMES };

struct frame {
	int call;                  /* the call it is the argument list of (recorded), else -1 */
	bool is_call;
	int npos;
	/* The item being read: a keyword argument, or the statement's value. */
	int ntok;
	bool cand;                 /* the item so far is one NAME: "NAME=" may follow */
	bool minus;
	bool pending;              /* a call opened on the value's name */
	char kw[PY_KW_MAX];
	enum py_kind vk;
	char vt[PY_TEXT_MAX];
	int vsub;
	int vline;
	/* The dotted name being written, for a call. */
	char chain[PY_NAME_MAX];
	bool live;
	bool def;                  /* the name follows "def" or "class": no call */
	int chain_line;
	enum tk last;
	bool last_def;
	/* The statement frame (depth 0) only. */
	int st;
	char target[PY_KW_MAX];
	bool annotated, aug;
	/* import statements: the dotted name being read, the from-module */
	char mod[PY_NAME_MAX];
	char from[PY_NAME_MAX];
	bool as;
};

struct parser {
	struct pyscan_run *out;
	py_want_fn want;
	void *arg;
	struct frame f[PY_MAX_DEPTH];
	int depth;                 /* frames in f; f[0] is the statement */
	int skip;                  /* brackets open past PY_MAX_DEPTH */
};

static void item_reset(struct frame *f)
{
	f->ntok = 0;
	f->cand = f->minus = f->pending = false;
	f->kw[0] = '\0';
	f->vk = PY_OTHER;
	f->vt[0] = '\0';
	f->vsub = -1;
	f->vline = 0;
}

static void frame_init(struct frame *f, int call, bool is_call)
{
	memset(f, 0, sizeof(*f));
	f->call = call;
	f->is_call = is_call;
	f->last = T_NL;
	item_reset(f);
}

/* One token of a value: a literal stays one, anything more is an expression. */
static void value_tok(struct frame *f, const struct tok *t)
{
	size_t n = strlen(f->vt);

	if (f->ntok == 0 && !f->minus) {
		f->vline = t->line;
		switch (t->k) {
		case T_STR:
			f->vk = t->plain ? PY_STR : PY_OTHER;
			adv_strlcpy(f->vt, t->val, sizeof(f->vt));
			break;
		case T_NUM:
			f->vk = PY_NUM;
			adv_strlcpy(f->vt, t->val, sizeof(f->vt));
			break;
		case T_MINUS:
			f->minus = true;
			return;   /* the number follows */
		case T_NAME:
			f->vk = !strcmp(t->val, "True") ? PY_TRUE : !strcmp(t->val, "False") ? PY_FALSE
			      : !strcmp(t->val, "None") ? PY_NONE : PY_NAME;
			adv_strlcpy(f->vt, t->val, sizeof(f->vt));
			break;
		default:
			f->vk = PY_OTHER;
		}
	} else if (f->minus && f->ntok == 0) {
		f->minus = false;
		if (t->k == T_NUM) {
			f->vk = PY_NUM;
			adv_snprintf(f->vt, sizeof(f->vt), "-%s", t->val);
		} else {
			f->vk = PY_OTHER;
		}
	} else if (f->vk == PY_STR && t->k == T_STR && t->plain) {
		adv_strlcpy(f->vt + n, t->val, sizeof(f->vt) - n);   /* "a" "b" */
	} else if (f->vk == PY_NAME && t->k == T_DOT && n > 0 && f->vt[n - 1] != '.' &&
		   n + 1 < sizeof(f->vt)) {
		f->vt[n] = '.';
		f->vt[n + 1] = '\0';
	} else if (f->vk == PY_NAME && t->k == T_NAME && n > 0 && f->vt[n - 1] == '.') {
		adv_strlcpy(f->vt + n, t->val, sizeof(f->vt) - n);
	} else {
		f->vk = PY_OTHER;
	}
	f->ntok++;
}

/* The item of a call frame ends (',' or ')'): kept as an argument. */
static void item_end(struct parser *ps, struct frame *f)
{
	struct pyscan_run *o = ps->out;
	struct py_arg *a;

	if (f->ntok == 0 && !f->kw[0] && !f->minus) {
		item_reset(f);
		return;
	}
	if (f->call >= 0) {
		if (o->n_args >= PY_MAX_ARGS) {
			o->cut = true;
		} else {
			a = &o->args[o->n_args++];
			memset(a, 0, sizeof(*a));
			a->call = f->call;
			adv_strlcpy(a->kw, f->kw, sizeof(a->kw));
			a->pos = f->kw[0] ? -1 : f->npos;
			a->kind = f->pending || f->minus || (f->vk == PY_NAME && f->vt[strlen(f->vt) - 1] == '.')
				  ? PY_OTHER : f->vk;
			adv_strlcpy(a->text, f->vt, sizeof(a->text));
			a->sub = a->kind == PY_CALL ? f->vsub : -1;
			a->line = f->vline;
			o->calls[f->call].n_args++;
		}
	}
	if (!f->kw[0])
		f->npos++;
	item_reset(f);
}

static void import_add(struct pyscan_run *o, const char *a, const char *b, int line)
{
	struct py_import *im;

	if (!a[0])
		return;
	if (o->n_imports >= PY_MAX_IMPORTS) {
		o->cut = true;
		return;
	}
	im = &o->imports[o->n_imports];
	if (b && b[0])
		adv_snprintf(im->name, sizeof(im->name), "%s%s%s", a,
			     a[strlen(a) - 1] == '.' ? "" : ".", b);
	else
		adv_strlcpy(im->name, a, sizeof(im->name));
	im->line = line;
	o->n_imports++;
}

/* The statement ends: "NAME = VALUE" is kept. */
static void statement_end(struct parser *ps, struct frame *f)
{
	struct pyscan_run *o = ps->out;

	if (f->st == ST_IMPORT)
		import_add(o, f->mod, NULL, f->vline > 0 ? f->vline : 0);

	if (f->st == ST_VALUE && f->target[0]) {
		if (o->n_assign >= PY_MAX_ASSIGN) {
			o->cut = true;
		} else {
			struct py_assign *a = &o->assign[o->n_assign++];

			memset(a, 0, sizeof(*a));
			adv_strlcpy(a->name, f->target, sizeof(a->name));
			a->annotated = f->annotated;
			a->kind = f->aug || f->pending || f->minus || f->ntok == 0 ? PY_OTHER : f->vk;
			adv_strlcpy(a->text, f->vt, sizeof(a->text));
			a->sub = a->kind == PY_CALL ? f->vsub : -1;
			a->line = f->vline;
		}
	}
	f->st = ST_START;
	f->target[0] = '\0';
	f->annotated = f->aug = false;
	item_reset(f);
}

static bool is_keyword(const char *s)
{
	static const char *const kw[] = {
		"if", "elif", "else", "for", "while", "def", "class", "return", "import", "from",
		"with", "try", "except", "finally", "assert", "del", "global", "nonlocal", "lambda",
		"yield", "raise", "pass", "break", "continue", "async", "await", "not", "and", "or",
		"in", "is", "match", "case", "print",
	};

	for (size_t k = 0; k < ADV_ARRAY_SIZE(kw); k++)
		if (!strcmp(s, kw[k]))
			return true;
	return false;
}

/* A dotted name of an import statement, one token at a time. */
static void mod_tok(char *buf, size_t len, const struct tok *t)
{
	size_t n = strlen(buf);

	if (t->k == T_DOT && n + 1 < len) {
		buf[n] = '.';
		buf[n + 1] = '\0';
	} else if (t->k == T_NAME && (n == 0 || buf[n - 1] == '.')) {
		adv_strlcpy(buf + n, t->val, len - n);
	}
}

/* "import a.b as c, d" and "from .a import b as c, d". */
static void import_tok(struct pyscan_run *o, struct frame *f, const struct tok *t)
{
	bool name = t->k == T_NAME;

	if (f->as) {
		f->as = false;   /* the alias */
		return;
	}
	if (name && !strcmp(t->val, "as")) {
		f->as = true;
		return;
	}
	switch (f->st) {
	case ST_IMPORT:
		if (t->k == T_COMMA) {
			import_add(o, f->mod, NULL, t->line);
			f->mod[0] = '\0';
		} else {
			mod_tok(f->mod, sizeof(f->mod), t);
		}
		break;
	case ST_FROM:
		if (name && !strcmp(t->val, "import")) {
			import_add(o, f->from, NULL, t->line);
			f->st = ST_FROM_NAMES;
		} else {
			mod_tok(f->from, sizeof(f->from), t);
		}
		break;
	case ST_FROM_NAMES:
		if (name)
			import_add(o, f->from, t->val, t->line);
		break;
	default:
		break;
	}
}

/* The statement frame's own view of a token at depth 0. */
static bool statement_tok(struct pyscan_run *o, struct frame *f, const struct tok *t)
{
	switch (f->st) {
	case ST_IMPORT: case ST_FROM: case ST_FROM_NAMES:
		import_tok(o, f, t);
		return true;
	case ST_START:
		if (t->k == T_NAME && (!strcmp(t->val, "import") || !strcmp(t->val, "from"))) {
			f->st = t->val[0] == 'i' ? ST_IMPORT : ST_FROM;
			f->mod[0] = f->from[0] = '\0';
			f->as = false;
			f->vline = t->line;
		} else if (t->k == T_NAME && !is_keyword(t->val)) {
			adv_strlcpy(f->target, t->val, sizeof(f->target));
			f->st = ST_TARGET;
		} else {
			f->st = ST_NONE;
		}
		return true;
	case ST_TARGET:
		if (t->k == T_ASSIGN || t->k == T_AUG) {
			f->aug = t->k == T_AUG;
			f->st = ST_VALUE;
			item_reset(f);
		} else if (t->k == T_COLON) {
			f->annotated = true;
			f->st = ST_ANNOT;
		} else {
			f->st = ST_NONE;
		}
		return true;
	case ST_ANNOT:
		if (t->k == T_ASSIGN) {
			f->st = ST_VALUE;
			item_reset(f);
		}
		return true;
	case ST_VALUE:
		if (t->k == T_ASSIGN || t->k == T_COMMA)
			f->vk = PY_OTHER, f->ntok++;   /* a = b = 1, a = 1, 2 */
		else
			return false;   /* the value's token */
		return true;
	default:
		return true;
	}
}

/* The dotted name a call would be made on. */
static void chain_tok(struct frame *f, const struct tok *t)
{
	if (t->k == T_NAME) {
		size_t n = strlen(f->chain);

		if (f->last == T_DOT && f->live && n + 1 + strlen(t->val) < sizeof(f->chain)) {
			f->chain[n] = '.';
			adv_strlcpy(f->chain + n + 1, t->val, sizeof(f->chain) - n - 1);
		} else if (f->last == T_DOT && f->live) {
			f->live = false;
		} else {
			adv_strlcpy(f->chain, t->val, sizeof(f->chain));
			f->live = true;
			f->def = f->last_def;
			f->chain_line = t->line;
		}
		f->last_def = !strcmp(t->val, "def") || !strcmp(t->val, "class");
	} else if (t->k == T_DOT) {
		if (f->last == T_CLOSE) {
			f->chain[0] = '\0';   /* f(...).method */
			f->live = true;
			f->def = false;
			f->chain_line = t->line;
		} else if (f->last != T_NAME) {
			f->live = false;
		}
		f->last_def = false;
	} else {
		f->last_def = false;
		if (t->k != T_OPEN)
			f->live = false;
	}
	f->last = t->k;
}

static void open_bracket(struct parser *ps, const struct tok *t)
{
	struct frame *f = &ps->f[ps->depth - 1], *c;
	struct pyscan_run *o = ps->out;
	bool call = t->c == '(' && f->live && f->last == T_NAME && !f->def && !is_keyword(f->chain);
	int idx = -1;

	if (ps->depth >= PY_MAX_DEPTH) {
		ps->skip++;
		f->vk = PY_OTHER;
		return;
	}
	if (call && (!ps->want || ps->want(f->chain, ps->arg))) {
		if (o->n_calls >= PY_MAX_CALLS) {
			o->cut = true;
		} else {
			idx = o->n_calls++;
			memset(&o->calls[idx], 0, sizeof(o->calls[idx]));
			adv_strlcpy(o->calls[idx].name, f->chain, sizeof(o->calls[idx].name));
			o->calls[idx].line = f->chain_line;
		}
	}
	/* The value the bracket is part of: a call on the value's own name
	 * may be all of it; anything else is an expression. */
	if (call && f->vk == PY_NAME && !f->pending && f->ntok > 0) {
		f->pending = true;
		f->vsub = idx;
	} else {
		if (f->ntok == 0)
			f->vline = t->line;
		f->vk = PY_OTHER;
		f->pending = false;
		f->ntok++;
	}
	f->cand = false;
	chain_tok(f, t);
	c = &ps->f[ps->depth++];
	frame_init(c, idx, call);
}

static void close_bracket(struct parser *ps, const struct tok *t)
{
	struct frame *f, *p;

	if (ps->skip > 0) {
		ps->skip--;
		return;
	}
	if (ps->depth <= 1)
		return;   /* unbalanced: ignored */
	f = &ps->f[ps->depth - 1];
	if (f->is_call)
		item_end(ps, f);
	ps->depth--;
	p = &ps->f[ps->depth - 1];
	if (p->pending) {
		p->pending = false;
		p->vk = PY_CALL;
	}
	chain_tok(p, t);
}

void pyscan_run(const char *text, size_t len, py_want_fn want, void *arg, struct pyscan_run *out)
{
	struct parser *ps;
	struct parser local;
	struct lex lx = { text, text ? text + len : text, 1, 0 };
	struct tok t;

	memset(out, 0, offsetof(struct pyscan_run, calls));
	out->n_imports = 0;
	ps = &local;
	memset(ps, 0, offsetof(struct parser, f));
	ps->out = out;
	ps->want = want;
	ps->arg = arg;
	ps->depth = 1;
	ps->skip = 0;
	frame_init(&ps->f[0], -1, false);
	if (!text)
		return;
	for (;;) {
		struct frame *f;

		lex_next(&lx, &t);
		if (t.k == T_END)
			break;
		if (ps->skip > 0) {
			if (t.k == T_OPEN)
				ps->skip++;
			else if (t.k == T_CLOSE)
				ps->skip--;
			continue;
		}
		f = &ps->f[ps->depth - 1];
		if (t.k == T_OPEN) {
			if (ps->depth == 1 && f->st != ST_VALUE && f->st != ST_ANNOT)
				f->st = ST_NONE;
			open_bracket(ps, &t);
			continue;
		}
		if (t.k == T_CLOSE) {
			close_bracket(ps, &t);
			continue;
		}
		if (ps->depth == 1) {
			if (t.k == T_NL || t.k == T_SEMI) {
				statement_end(ps, f);
				chain_tok(f, &t);
				continue;
			}
			if (!statement_tok(ps->out, f, &t))
				value_tok(f, &t);
			chain_tok(f, &t);
			continue;
		}
		/* Inside brackets. */
		if (f->is_call && t.k == T_COMMA) {
			item_end(ps, f);
		} else if (f->is_call && t.k == T_ASSIGN && f->cand && f->ntok == 1) {
			adv_strlcpy(f->kw, f->vt, sizeof(f->kw));
			f->ntok = 0;
			f->vk = PY_OTHER;
			f->vt[0] = '\0';
			f->cand = false;
		} else if (f->is_call && t.k == T_STARS && f->ntok == 0 && !f->kw[0]) {
			adv_strlcpy(f->kw, "*", sizeof(f->kw));   /* *args, **kwargs */
			f->ntok = 1;
			f->vk = PY_OTHER;
		} else if (f->is_call) {
			f->cand = f->ntok == 0 && t.k == T_NAME && !f->kw[0];
			value_tok(f, &t);
		}
		chain_tok(f, &t);
	}
	statement_end(ps, &ps->f[0]);
	/* A last line ended by its newline starts no other. */
	out->lines = lx.line - (len > 0 && text[len - 1] == '\n' ? 1 : 0);
}

const char *pyscan_last(const char *name)
{
	const char *d = strrchr(name, '.');

	return d ? d + 1 : name;
}

void pyscan_owner(const char *name, char *buf, size_t len)
{
	const char *d = strrchr(name, '.'), *s;

	buf[0] = '\0';
	if (!d || len == 0)
		return;
	for (s = d; s > name && s[-1] != '.'; s--)
		;
	adv_snprintf(buf, len, "%.*s", (int)(d - s), s);
}
