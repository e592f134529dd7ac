/*
 * argscan.c - finding a trainer's options in its argument vector, the way
 * Python's argparse reads them: "--name VALUE" or "--name=VALUE", the last
 * occurrence wins, and a bare flag is followed by another option or by
 * nothing.  Every framework reader (fw_*.c, launch.c) uses these so that
 * all of them accept the same spellings and give the same sources.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctx.h"
#include "reader.h"
#include "util.h"

/*
 * A whole number as the trainers' parsers take it: Python's int() (argparse
 * type=int, PEP 515) and PyYAML's int both allow '_' between digits
 * ("32_000"); anywhere else it is not a number.
 */
bool jr_parse_ll(const char *s, long long *out)
{
	char digits[32], *end;
	long long v;
	size_t n = 0;

	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '_') {
			if (p == s || !isdigit((unsigned char)p[-1]) || !isdigit((unsigned char)p[1]))
				return false;
			continue;
		}
		if (n + 1 >= sizeof(digits))
			return false;
		digits[n++] = *p;
	}
	digits[n] = '\0';
	s = digits;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return false;
	/* Every count the reader keeps fits an int with room to multiply. */
	if (v > INT_MAX || v < INT_MIN)
		return false;
	*out = v;
	return true;
}

bool jr_word_in(const char *w, const char *alts)
{
	size_t n = strlen(w);

	for (const char *p = alts; p && *p;) {
		const char *e = strchr(p, '|');
		size_t k = e ? (size_t)(e - p) : strlen(p);

		if (k == n && !strncmp(p, w, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

const char *jr_basename(const char *path)
{
	const char *s;

	if (!path)
		return "";
	s = strrchr(path, '/');
	return s ? s + 1 : path;
}

bool jr_same_key(const char *w, size_t n, const char *key)
{
	size_t k = strlen(key);

	if (n != k)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((w[i] == '-' ? '_' : w[i]) != (key[i] == '-' ? '_' : key[i]))
			return false;
	return true;
}

/* A word that is an option rather than a value: "-x", "--x", but not a
 * negative number ("-1" is torchtitan's "the rest"). */
static bool is_option(const char *w)
{
	long long n;

	return w && w[0] == '-' && w[1] && !jr_parse_ll(w, &n);
}

int jr_arg_find(const struct jr_cmd *cmd, int from, const char *name, const char **value, bool *eq)
{
	size_t nl = strlen(name);
	int i, found = -1;

	for (i = from < 0 ? 0 : from; i < cmd->argc; i++) {
		const char *a = cmd->argv[i];

		if (!a || strncmp(a, name, nl) != 0)
			continue;
		if (a[nl] == '=') {
			found = i;
			if (value)
				*value = a + nl + 1;
			if (eq)
				*eq = true;
		} else if (a[nl] == '\0') {
			found = i;
			if (value)
				*value = i + 1 < cmd->argc && !is_option(cmd->argv[i + 1])
					 ? cmd->argv[i + 1] : NULL;
			if (eq)
				*eq = false;
		}
	}
	return found;
}

int jr_arg_find_any(const struct jr_cmd *cmd, int from, const char *const names[],
		    const char **value, bool *eq, const char **which)
{
	int best = -1;

	for (size_t k = 0; names[k]; k++) {
		const char *v = NULL;
		bool e = false;
		int i = jr_arg_find(cmd, from, names[k], &v, &e);

		if (i > best) {
			best = i;
			if (value)
				*value = v;
			if (eq)
				*eq = e;
			if (which)
				*which = names[k];
		}
	}
	return best;
}

void jr_src_arg(struct jobread_src *s, const struct jr_cmd *cmd, const char *flag,
		enum jobread_style style)
{
	bool eq = false;
	const char *value = NULL;
	int i = flag && *flag ? jr_arg_find(cmd, 0, flag, &value, &eq) : -1;

	jr_src_word(s, cmd, i, flag, style);
	/* "--flag $VAR": the value word has the line of VAR's assignment.  A
	 * bare flag has no value word (the next word is another option). */
	if (i >= 0 && !eq && value && style != JR_STYLE_BOOL && i + 1 < cmd->argc && cmd->word_line && cmd->word_line[i + 1] > 0 &&
	    s->line > 0) {
		const char *vf = cmd->word_file && cmd->word_file[i + 1] ? cmd->word_file[i + 1]
									 : cmd->file;

		if (cmd->word_line[i + 1] != s->line || strcmp(vf ? vf : "", s->file) != 0) {
			s->val_line = cmd->word_line[i + 1];
			adv_strlcpy(s->val_file, vf ? vf : "", sizeof(s->val_file));
		}
	}
}

/* The value word of option index i is unknown to the shell evaluator. */
static bool value_unknown(const struct jr_cmd *cmd, int i, bool eq)
{
	int vi = eq ? i : i + 1;

	return cmd->unknown && vi < cmd->argc && cmd->unknown[vi];
}

bool jr_arg_int(struct jr_ctx *cx, const struct jr_cmd *cmd, int from, enum jobread_field f,
		const char *const names[])
{
	struct jobread_src src;
	const char *v = NULL, *which = NULL;
	bool eq = false;
	long long n;
	int i = jr_arg_find_any(cmd, from, names, &v, &eq, &which);

	if (i < 0)
		return false;
	jr_src_arg(&src, cmd, which, eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
	if (value_unknown(cmd, i, eq))
		jr_set_unknown(cx, f, &src, "a value computed at run time");
	else if (v && jr_parse_ll(v, &n))
		jr_set_int(cx, f, n, &src);
	else
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL, "%s:%d: %s '%s' is not a whole number; ignored",
			src.file, src.line, which, v ? v : "");
	return true;
}

bool jr_arg_flag(struct jr_ctx *cx, const struct jr_cmd *cmd, int from, enum jobread_field f,
		 long long v, const char *const names[])
{
	struct jobread_src src;
	const char *which = NULL;
	int i = jr_arg_find_any(cmd, from, names, NULL, NULL, &which);

	if (i < 0)
		return false;
	jr_src_arg(&src, cmd, which, JR_STYLE_BOOL);
	jr_set_int(cx, f, v, &src);
	return true;
}

int jr_parse_bool(const char *s)
{
	/* Python's bool strings as the frameworks read them: PyYAML and
	 * OmegaConf (true/yes/on), HfArgumentParser's string_to_bool (y/t). */
	static const char *const yes[] = { "true", "yes", "on", "1", "y", "t" };
	static const char *const no[] = { "false", "no", "off", "0", "n", "f" };

	for (size_t k = 0; s && k < ADV_ARRAY_SIZE(yes); k++)
		if (!strcasecmp(s, yes[k]))
			return 1;
	for (size_t k = 0; s && k < ADV_ARRAY_SIZE(no); k++)
		if (!strcasecmp(s, no[k]))
			return 0;
	return -1;
}

int jr_torch_dtype(const char *s)
{
	/* torch's dtype names as the servers and evaluators take them
	 * (vLLM's --dtype choices, TGI's Dtype, lighteval's and lm_eval's
	 * dtype=, LMDeploy's --dtype), with their short spellings. */
	static const struct {
		const char *name;
		int prec;
	} names[] = {
		{ "bfloat16", ADV_PREC_BF16 }, { "bf16", ADV_PREC_BF16 },
		{ "float16", ADV_PREC_FP16 }, { "half", ADV_PREC_FP16 }, { "fp16", ADV_PREC_FP16 },
		{ "float32", ADV_PREC_FP32 }, { "float", ADV_PREC_FP32 }, { "fp32", ADV_PREC_FP32 },
	};

	for (size_t k = 0; s && k < ADV_ARRAY_SIZE(names); k++)
		if (!strcasecmp(s, names[k].name))
			return names[k].prec;
	return -1;
}
