/*
 * follow.c - what the reader did not follow (issue 18: never pass an LLM
 * job silently).
 *
 * When no command of the job was recognised as a launcher or trainer, the
 * script's own lines are scanned for the words that start one (torchrun,
 * deepspeed, accelerate launch, vllm serve, python -m sglang.launch_server,
 * srun with python, Megatron's pretrain_*.py, tune run, axolotl, ...).  A
 * hit is a SCRIPT_NOT_FOLLOWED finding naming the line and why the reader
 * did not follow it: it stopped at a bound, the line comes after an exit,
 * sits in a function or a branch the evaluator did not take, or its command
 * was reached but is not known before it runs or not one the reader
 * follows.  The job then counts as an LLM job, so that the verdict carries
 * the finding at the policy's severity (reader.not_followed).  A script
 * with none of these words stays "not an LLM job" (tests/jobs 04, 05).
 *
 * The scan is bounded by the script's size (JOBREAD_MAX_BYTES) and looks
 * at each line once.
 */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "ctx.h"
#include "follow.h"
#include "util.h"

/* A line longer than this is looked at only this far. */
#define FOLLOW_LINE_MAX 4096

/* Words that start a launcher or trainer, matched at a word's start. */
static const char *const launch_words[] = {
	"torchrun", "torch.distributed.run", "torch.distributed.launch", "deepspeed",
	"accelerate launch", "accelerate-launch", "vllm serve", "vllm.entrypoints",
	"sglang.launch_server", "pretrain_gpt", "pretrain_llama", "pretrain_t5",
	"pretrain_bert", "pretrain_mamba", "tune run", "axolotl", "deepy.py", "torchtitan",
	"nanotron", "run_train.py", "llamafactory-cli", "megatron", "nemo_launcher",
	"trl sft", "trl grpo", "trl dpo", "lighteval", "levanter",
};

static bool word_start(const char *line, const char *p)
{
	return p == line || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
}

/* w as a word of its own: "torchrunner" is not torchrun; python3 is python. */
static bool has_word(const char *line, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = strstr(line, w); p; p = strstr(p + 1, w)) {
		unsigned char after = (unsigned char)p[n];

		if (word_start(line, p) &&
		    (!isalnum(after) || (isdigit(after) && !strcmp(w, "python"))))
			return true;
	}
	return false;
}

/* The first launch word of a line, or NULL. */
static const char *launch_word(const char *line)
{
	for (size_t k = 0; k < ADV_ARRAY_SIZE(launch_words); k++)
		if (has_word(line, launch_words[k]))
			return launch_words[k];
	/* srun (or mpirun) starting a Python program. */
	if (has_word(line, "python") && (has_word(line, "srun") || has_word(line, "mpirun")))
		return "srun ... python";
	return NULL;
}

/* The line's first word, if it is "exit" (top-level or not: a hint only). */
static bool is_exit(const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	return !strncmp(line, "exit", 4) && (!line[4] || isspace((unsigned char)line[4]) ||
					     line[4] == ';');
}

/* "name() {" or "function name": a function's first line; its name to buf. */
static bool is_function(const char *line, char *buf, size_t len)
{
	const char *p = line + strspn(line, " \t"), *q;
	bool kw = !strncmp(p, "function ", 9);

	if (kw)
		p += 9 + strspn(p + 9, " ");
	for (q = p; isalnum((unsigned char)*q) || *q == '_' || *q == '-' || *q == '.'; q++)
		;
	if (q == p || (!kw && strncmp(q + strspn(q, " "), "()", 2)))
		return false;
	adv_snprintf(buf, len, "%.*s", (int)(q - p), p);
	return true;
}

static const struct sh_cmd *recorded_at(const sh_t *sh, const char *name, int line)
{
	for (const struct sh_cmd *c = sh_commands(sh); c; c = c->next)
		if (c->line == line && c->file && !strcmp(c->file, name))
			return c;
	return NULL;
}

static bool any_unknown(const struct sh_cmd *c)
{
	for (int i = 0; c->unknown && i < c->argc; i++)
		if (c->unknown[i])
			return true;
	return false;
}

void follow_scan(struct jr_ctx *cx, const sh_t *sh, const char *name, const char *text,
		 size_t len, int rc, struct jobread_out *out)
{
	char line[FOLLOW_LINE_MAX], fn[64] = "", why[ADV_MSG_MAX / 2];
	const char *word = NULL;
	size_t i = 0;
	int lineno = 0, start = 0, hit = 0, exit_line = 0, fn_line = 0, more = 0;
	bool cont = false, srun = false, syn_nested = false;
	const char *syn_file = NULL;
	int syn_line = 0;

	if (out->is_llm || !text)
		return;
	if (len > JOBREAD_MAX_BYTES)
		len = JOBREAD_MAX_BYTES;
	while (i < len) {
		size_t n = 0, eol = i;
		const char *w;

		while (eol < len && text[eol] != '\n')
			eol++;
		n = eol - i < sizeof(line) - 1 ? eol - i : sizeof(line) - 1;
		memcpy(line, text + i, n);
		line[n] = '\0';
		i = eol + 1;
		lineno++;
		if (!cont) {
			start = lineno;
			srun = false;
		}
		cont = n > 0 && line[n - 1] == '\\';
		if (line[strspn(line, " \t")] == '#')
			continue;
		/* srun on one line of a command continued with backslashes, python
		 * on a later one (srun \ OPTIONS \ wrapper \ python train.py). */
		srun = srun || has_word(line, "srun") || has_word(line, "mpirun");
		if (!hit && is_exit(line))
			exit_line = lineno;
		if (!hit && is_function(line, fn, sizeof(fn)))
			fn_line = lineno;
		w = launch_word(line);
		if (!w && srun && has_word(line, "python"))
			w = "srun ... python";
		if (!w)
			continue;
		if (hit) {
			more++;
			continue;
		}
		hit = start;
		word = w;
	}
	if (!hit)
		return;
	{
		const struct sh_cmd *c = recorded_at(sh, name, hit);

		/* Its program was read and holds no LLM (fw_python.c). */
		if (c && jr_program_is_explained(cx, c->file, c->line))
			return;
		if (c && any_unknown(c))
			adv_strlcpy(why, "its command is not known before it runs (a command "
				    "substitution or a value set at run time)", sizeof(why));
		else if (c)
			adv_strlcpy(why, "the command was reached but is not one the reader follows "
				    "(a wrapper or a launcher it does not know)", sizeof(why));
		else if (rc != SH_OK)
			adv_snprintf(why, sizeof(why), "the reader stopped before it (%s)",
				     sh_strerror(rc));
		else if (sh_syntax_error(sh, &syn_file, &syn_line, &syn_nested) && !syn_nested &&
			 syn_line < hit)
			adv_snprintf(why, sizeof(why), "bash stops the script at the syntax error "
				     "on line %d", syn_line);
		else if (exit_line > 0 && exit_line < hit)
			adv_snprintf(why, sizeof(why), "it comes after the exit on line %d",
				     exit_line);
		else if (fn_line > 0 && fn_line < hit)
			adv_snprintf(why, sizeof(why), "it sits in the function %s (line %d), "
				     "which the reader did not see called", fn, fn_line);
		else
			adv_strlcpy(why, "the reader did not reach it (a branch or loop it did "
				    "not take)", sizeof(why));
	}
	jr_note(cx, ADV_CODE_SCRIPT_NOT_FOLLOWED,
		"--llm-model=NAME --llm-layout=LIST (or make the launch line one the reader follows)",
		"%s:%d names %s, but the reader did not follow it: %s%s; the job is not judged "
		"as what it launches", name, hit, word, why,
		more ? " (more such lines follow)" : "");
	out->is_llm = true;
}
