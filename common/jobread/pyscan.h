/*
 * pyscan.h - a static scanner of Python source text (pyscan.c): the calls
 * a program makes with their literal arguments, and the names it assigns,
 * each with its line.  It never runs anything; it knows Python's strings,
 * comments, brackets and call syntax, and nothing of its semantics.  What
 * the calls mean is the reader's (fw/fw_python.c).
 */
#ifndef ADVISOR_JOBREAD_PYSCAN_H
#define ADVISOR_JOBREAD_PYSCAN_H

#include <stdbool.h>
#include <stddef.h>

/* Bounds: what a scan keeps at most (a program with more is read in part:
 * pyscan_run.cut). */
#define PY_MAX_CALLS 512
#define PY_MAX_ARGS 1024
#define PY_MAX_ASSIGN 512
#define PY_NAME_MAX 96
#define PY_KW_MAX 48
#define PY_TEXT_MAX 160
/* Brackets open at once that are followed; deeper ones are skipped. */
#define PY_MAX_DEPTH 64

/* What an argument or an assigned value is, when it is one literal. */
enum py_kind {
	PY_OTHER = 0,  /* an expression: not known statically */
	PY_STR,        /* a string literal (adjacent literals joined), no f-string field */
	PY_NUM,        /* a number literal, with its sign */
	PY_TRUE, PY_FALSE, PY_NONE,
	PY_NAME,       /* a name or dotted name: "torch.bfloat16", "args.model" */
	PY_CALL,       /* exactly one call: .call is its index (when recorded), else -1 */
	PY_KIND_COUNT
};

struct py_arg {
	int call;                  /* the call it belongs to */
	char kw[PY_KW_MAX];        /* keyword, "" for a positional argument */
	int pos;                   /* position among the positional arguments, -1 for a keyword */
	enum py_kind kind;
	char text[PY_TEXT_MAX];    /* the literal's value (a string decoded), or the dotted name */
	int sub;                   /* PY_CALL: the call's index, -1 when not recorded */
	int line;
};

struct py_call {
	char name[PY_NAME_MAX];    /* as written: "AutoModelForCausalLM.from_pretrained",
				      ".to" after a call or subscript */
	int line;
	int n_args;
};

struct py_assign {
	char name[PY_KW_MAX];      /* NAME = VALUE or NAME: TYPE = VALUE at a statement's start */
	bool annotated;            /* NAME: TYPE = VALUE (a dataclass field) */
	enum py_kind kind;         /* PY_OTHER for augmented assignment (+=) */
	char text[PY_TEXT_MAX];
	int sub;                   /* PY_CALL: the call's index */
	int line;
};

/* A module the program imports: "import a.b", "from a.b import c" (a.b,
 * and a.b.c: c may be a module), "from .m import x" (".m": relative). */
#define PY_MAX_IMPORTS 64
struct py_import {
	char name[PY_NAME_MAX];
	int line;
};

/* Which calls to keep (by their dotted name as written); arg as given. */
typedef bool (*py_want_fn)(const char *name, void *arg);

struct pyscan_run {
	int lines;
	bool cut;                  /* a bound was reached: what follows was not kept */
	int n_calls, n_args, n_assign;
	struct py_call calls[PY_MAX_CALLS];
	struct py_arg args[PY_MAX_ARGS];
	struct py_assign assign[PY_MAX_ASSIGN];
	int n_imports;
	struct py_import imports[PY_MAX_IMPORTS];
};

/* Scans text (len bytes, any content) into *out, keeping the calls want
 * accepts (all when want is NULL), every assignment and every import.
 * Linear in len; never fails. */
void pyscan_run(const char *text, size_t len, py_want_fn want, void *arg, struct pyscan_run *out);

/* The last component of a dotted name ("a.b.from_pretrained" ->
 * "from_pretrained"), and the one before it ("" when none). */
const char *pyscan_last(const char *name);
void pyscan_owner(const char *name, char *buf, size_t len);

#endif
