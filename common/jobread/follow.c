/*
 * follow.c - what the reader did not follow (issue 18: never pass an LLM
 * job silently).
 *
 * When no command of the job was recognised as a launcher or trainer, the
 * script's own lines are scanned for the words that start one (torchrun,
 * deepspeed, accelerate launch, vllm serve, python -m sglang.launch_server,
 * srun with python, Megatron's pretrain_*.py, tune run, axolotl, the
 * servers and evaluators of fw_serve.c and fw_lighteval.c, ...).  A
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
#include <stdio.h>
#include <string.h>

#include "ctx.h"
#include "engine/findings.h"
#include "follow.h"
#include "words.h"
#include "util.h"

/* A line longer than this is looked at only this far. */
#define FOLLOW_LINE_MAX 4096

/*
 * Evidence that a job trains, serves or evaluates an LLM (issue 28), matched
 * without case at a word's start anywhere in the script, its #SBATCH lines
 * and comments included (a job name, a model id, a path).  Strong: an LLM
 * family's name as Hugging Face ids and model cards spell it, or an LLM
 * framework's.  Weak: what LLM jobs use but others can too (a tokenizer, a
 * vocabulary, LoRA): evidence only where no word says the job is something
 * else (the counter-evidence below: BERT-style encoders, vision, diffusion,
 * science codes).
 */
static const char *const llm_strong[] = {
	"llama", "codellama", "tinyllama", "mistral", "mixtral", "qwen", "gemma", "deepseek",
	"falcon", "bloom", "gpt2", "gpt-2", "gpt-j", "gpt-neo", "gpt_neox", "gpt-oss", "gpt_oss",
	"gpt3", "gpt-3", "opt-", "olmo", "pythia", "starcoder", "phi-2", "phi-3", "phi3", "phi-4",
	"phi4", "smollm", "vicuna", "baichuan", "internlm", "chatglm", "mpt-", "dbrx", "jamba",
	"nemotron", "granite", "command-r", "yi-", "glm-", "kimi", "minimax",
	"causal_lm", "llm", "llms", "language model", "language_model", "megatron",
	"vllm", "sglang", "trtllm", "tensorrt_llm", "text-generation", "lm_eval", "lm-eval",
	"nanogpt", "llm.c",
};
static const char *const llm_weak[] = {
	"tokenizer", "vocab", "sentencepiece", "tiktoken", "lora", "qlora", "loraconfig", "peft",
	"sft",
	"instruct", "rlhf", "grpo", "dpo", "pretrain", "finetune", "fine-tune", "seq_length",
	"seq-length", "seq_len", "seq-len", "max_seq_len", "max-seq-len", "context_length",
	"context-length", "block_size",
};
static const char *const not_llm[] = {
	"bert", "roberta", "deberta", "electra", "vit", "resnet", "convnext", "efficientnet",
	"unet", "diffusion", "diffusers", "stable-diffusion", "sdxl", "dit-", "imagenet", "cifar",
	"coco", "detectron", "yolo", "segment", "segmentation", "weather", "era5", "climate", "fourcastnet",
	"graphcast", "alphafold", "openfold", "lammps", "gromacs", "namd", "molecular", "nbody",
	"vision", "visiontransformer", "vision_transformer", "torchvision", "open_clip", "laion",
	"mnist", "whisper", "wav2vec", "speech",
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

/* Evidence inside a CamelCase name (AutoModelForCausalLM), matched anywhere. */
static const char *const llm_inside[] = { "causallm" };

/*
 * w (lower case) at a word's start in lower (a lower-cased line), followed
 * by anything but a letter: "llama" in "Meta-Llama-3", "llama3",
 * "llama_7b" and "train_llama.py", not in "llamas"; "bert" not in
 * "bertopic".
 */
static bool has_evidence_word(const char *lower, const char *w)
{
	size_t n = strlen(w);

	/* '_' separates words here (ddp_visiontransformer.py, train_llama.py). */
	for (const char *p = strstr(lower, w); p; p = strstr(p + 1, w))
		if ((p == lower || !isalnum((unsigned char)p[-1])) && !isalpha((unsigned char)p[n]))
			return true;
	return false;
}

/* The first word of words[] in lower, or NULL. */
static const char *evidence_in(const char *lower, const char *const *words, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (has_evidence_word(lower, words[k]))
			return words[k];
	return NULL;
}

/* The evidence a script gives, by kind, with the first line of each. */
struct evidence {
	const char *strong, *weak, *against, *launch;
	int strong_line, weak_line, against_line, launch_line;
};

/* s in lower case into out (cut to len). */
static void lower_copy(char *out, size_t len, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	out[i] = '\0';
}

static void evidence_of_line(struct evidence *e, const char *line, int lineno, bool comment)
{
	char lower[FOLLOW_LINE_MAX];
	const char *w;
	size_t nw;
	const struct jr_word *words = jr_words(&nw);

	lower_copy(lower, sizeof(lower), line);
	if (!e->strong) {
		w = evidence_in(lower, llm_strong, ADV_ARRAY_SIZE(llm_strong));
		/* An LLM trainer's, server's or evaluator's own launch word. */
		for (size_t k = 0; !w && k < nw; k++)
			if ((words[k].roles & JR_WORD_LINE) && has_evidence_word(lower, words[k].word))
				w = words[k].word;
		for (size_t k = 0; !w && k < ADV_ARRAY_SIZE(llm_inside); k++)
			if (strstr(lower, llm_inside[k]))
				w = llm_inside[k];
		if (w) {
			e->strong = w;
			e->strong_line = lineno;
		}
	}
	/* A comment is strong evidence only (a job name, a model card's
	 * name): "# tokenizer" in a comment says little. */
	if (!comment && !e->weak && (w = evidence_in(lower, llm_weak, ADV_ARRAY_SIZE(llm_weak)))) {
		e->weak = w;
		e->weak_line = lineno;
	}
	if (!e->against && (w = evidence_in(lower, not_llm, ADV_ARRAY_SIZE(not_llm)))) {
		e->against = w;
		e->against_line = lineno;
	}
}

/* Strong evidence, or weak evidence with nothing against it. */
static bool is_evidence(const struct evidence *e)
{
	return e->strong || (e->weak && !e->against);
}

/* The first launch word of a line, or NULL; *generic: a launcher that
 * starts any program (an LLM job only with evidence). */
static const char *launch_word(const char *line, bool *generic)
{
	const char *llm = NULL, *any = NULL;
	size_t n;
	const struct jr_word *w = jr_words(&n);

	for (size_t k = 0; k < n; k++) {
		if (!llm && (w[k].roles & JR_WORD_LINE) && has_word(line, w[k].word))
			llm = w[k].word;
		if (!any && (w[k].roles & JR_WORD_GENERIC) && has_word(line, w[k].word))
			any = w[k].word;
	}
	/* srun (or mpirun) starting a Python program. */
	if (!any && has_word(line, "python") && (has_word(line, "srun") || has_word(line, "mpirun")))
		any = "srun ... python";
	/* The launcher names the line (torchrun ... pretrain_gpt.py); the
	 * LLM word makes it an LLM job's. */
	*generic = !llm;
	return any ? any : llm;
}

/* The line of text at *i (its first FOLLOW_LINE_MAX - 1 bytes) into line,
 * *i moved past it; its length. */
static size_t next_line(const char *text, size_t len, size_t *i, char line[FOLLOW_LINE_MAX])
{
	size_t n, eol = *i;

	while (eol < len && text[eol] != '\n')
		eol++;
	n = eol - *i < FOLLOW_LINE_MAX - 1 ? eol - *i : FOLLOW_LINE_MAX - 1;
	memcpy(line, text + *i, n);
	line[n] = '\0';
	*i = eol + 1;
	return n;
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

/* A command that runs a program of the job's own: a Slurm or MPI step,
 * a script run by bash or sh, a program by its path (not a system tool's). */
static bool runs_program(const struct sh_cmd *c)
{
	const char *p = c->argv[0];

	if (!strcmp(p, "srun") || !strcmp(p, "mpirun") || !strcmp(p, "mpiexec"))
		return true;
	if ((!strcmp(p, "bash") || !strcmp(p, "sh")) && c->argc > 1 && c->argv[1] &&
	    c->argv[1][0] != '-')
		return true;
	return (p[0] == '.' && p[1] == '/') ||
	       (p[0] == '/' && strncmp(p, "/usr/", 5) && strncmp(p, "/bin/", 5));
}

/* The first command the job runs that starts a program of its own, as the
 * reader recorded it (the script's own lines): what a job runs, for the
 * reason, and the step a trainer behind a wrapper hides in. */
static const struct sh_cmd *first_step(const sh_t *sh, const char *name)
{
	for (const struct sh_cmd *c = sh_commands(sh); c; c = c->next)
		if (c->argc > 0 && c->argv[0] && c->file && !strcmp(c->file, name) &&
		    runs_program(c))
			return c;
	return NULL;
}

/* "srun ./my_cuda_app --bodies ...": a command's first words, escaped. */
static void command_text(const struct sh_cmd *c, char *buf, size_t len)
{
	char raw[128];
	size_t n = 0;

	raw[0] = '\0';
	for (int i = 0; i < c->argc && i < 4 && n < sizeof(raw) - 1; i++)
		n += (size_t)snprintf(raw + n, sizeof(raw) - n, "%s%s", i ? " " : "",
				      c->argv[i] ? c->argv[i] : "");
	if (n >= sizeof(raw) - 1 || c->argc > 4)
		adv_strlcpy(raw + (n < sizeof(raw) - 5 ? n : sizeof(raw) - 5), " ...", 5);
	adv_escape_text(buf, len, raw);
}

/* Why the reader did not follow the command at line hit (SCRIPT_NOT_FOLLOWED). */
static void not_followed_why(const sh_t *sh, const char *name, int hit, int rc, int exit_line,
			     int fn_line, const char *fn, char *why, size_t len)
{
	const struct sh_cmd *c = recorded_at(sh, name, hit);
	const char *syn_file = NULL;
	int syn_line = 0;
	bool syn_nested = false;

	if (c && any_unknown(c))
		adv_strlcpy(why, "its command is not known before it runs (a command "
			    "substitution or a value set at run time)", len);
	else if (c)
		adv_strlcpy(why, "the command was reached but is not one the reader follows "
			    "(a wrapper or a launcher it does not know)", len);
	else if (rc != SH_OK)
		adv_snprintf(why, len, "the reader stopped before it (%s)", sh_strerror(rc));
	else if (sh_syntax_error(sh, &syn_file, &syn_line, &syn_nested) && !syn_nested &&
		 syn_line < hit)
		adv_snprintf(why, len, "bash stops the script at the syntax error on line %d",
			     syn_line);
	else if (exit_line > 0 && exit_line < hit)
		adv_snprintf(why, len, "it comes after the exit on line %d", exit_line);
	else if (fn_line > 0 && fn_line < hit)
		adv_snprintf(why, len, "it sits in the function %s (line %d), which the reader "
			     "did not see called", fn, fn_line);
	else
		adv_strlcpy(why, "the reader did not reach it (a branch or loop it did not take)",
			    len);
}

void follow_scan(struct jr_ctx *cx, const sh_t *sh, const char *name, const char *text,
		 size_t len, int rc, struct jobread_out *out)
{
	char line[FOLLOW_LINE_MAX], fn[64] = "", why[ADV_MSG_MAX / 2], said[160] = "";
	const char *word = NULL, *gword = NULL;
	struct evidence ev = { 0 };
	size_t i = 0;
	int lineno = 0, start = 0, hit = 0, ghit = 0, exit_line = 0, fn_line = 0, more = 0;
	int exit_before = 0, fn_before = 0;
	bool cont = false, srun = false, generic;
	const struct sh_cmd *step;

	if (out->is_llm || !text)
		return;
	if (len > JOBREAD_MAX_BYTES)
		len = JOBREAD_MAX_BYTES;
	while (i < len) {
		size_t n = next_line(text, len, &i, line);
		const char *w;
		bool comment;

		lineno++;
		if (!cont) {
			start = lineno;
			srun = false;
		}
		cont = n > 0 && line[n - 1] == '\\';
		comment = line[strspn(line, " \t")] == '#';
		if (lineno > 1 || strncmp(line, "#!", 2))
			evidence_of_line(&ev, line, lineno, comment && strncmp(line, "#SBATCH", 7));
		if (comment)
			continue;
		/* srun on one line of a command continued with backslashes, python
		 * on a later one (srun \ OPTIONS \ wrapper \ python train.py). */
		srun = srun || has_word(line, "srun") || has_word(line, "mpirun");
		if (!hit && is_exit(line))
			exit_line = lineno;
		if (!hit && is_function(line, fn, sizeof(fn)))
			fn_line = lineno;
		w = launch_word(line, &generic);
		if (!w && srun && has_word(line, "python")) {
			w = "srun ... python";
			generic = true;
		}
		if (!w)
			continue;
		if (generic) {
			/* The first generic launch, kept in case no LLM one follows. */
			if (!ghit) {
				ghit = start;
				gword = w;
				exit_before = exit_line;
				fn_before = fn_line;
			}
			continue;
		}
		if (hit) {
			more++;
			continue;
		}
		hit = start;
		word = w;
	}
	/* An LLM word at a launch names an LLM job; a generic launcher does
	 * only with evidence in the job (issue 28). */
	if (!hit && ghit && is_evidence(&ev)) {
		hit = ghit;
		word = gword;
		exit_line = exit_before;
		fn_line = fn_before;
		if (ev.strong)
			adv_snprintf(said, sizeof(said), " (line %d names '%s')", ev.strong_line,
				     ev.strong);
		else
			adv_snprintf(said, sizeof(said), " (line %d names '%s')", ev.weak_line,
				     ev.weak);
	}
	/* No launch line at all, but a step the reader did not follow and a
	 * job that names an LLM: a trainer behind a wrapper (srun ./run.sh). */
	step = first_step(sh, name);
	if (!hit && !ghit && ev.strong && step) {
		hit = step->line;
		word = step->argv[0];
		adv_snprintf(said, sizeof(said), " (line %d names '%s')", ev.strong_line,
			     ev.strong);
	}
	if (!hit) {
		char cmd[160];

		/* Not an LLM job: say why (sbatch -v, advisorctl check). */
		if (ghit)
			adv_snprintf(out->not_llm_why, sizeof(out->not_llm_why),
				     "line %d starts %s, but nothing in the job names an LLM (a "
				     "model, tokenizer, or LLM trainer or server)%s%s%s%s", ghit,
				     gword, ev.against ? "; it names '" : "",
				     ev.against ? ev.against : "", ev.against ? "'" : "",
				     ev.against ? ", not an LLM" : "");
		else if (step) {
			command_text(step, cmd, sizeof(cmd));
			adv_snprintf(out->not_llm_why, sizeof(out->not_llm_why),
				     "line %d runs '%s', not a launcher, trainer or server advisor "
				     "knows, and nothing in the job names an LLM", step->line, cmd);
		} else
			adv_strlcpy(out->not_llm_why, "no command of the job starts a launcher, "
				    "trainer or server advisor knows, and nothing in it names an LLM",
				    sizeof(out->not_llm_why));
		return;
	}
	{
		const struct sh_cmd *c = recorded_at(sh, name, hit);

		/* Its program was read and holds no LLM (fw_python.c): the
		 * reason is the program's (jr_program_finish). */
		if (c && jr_program_is_explained(cx, c->file, c->line))
			return;
	}
	not_followed_why(sh, name, hit, rc, exit_line, fn_line, fn, why, sizeof(why));
	jr_note(cx, ADV_CODE_SCRIPT_NOT_FOLLOWED,
		"--llm-model=NAME --llm-layout=LIST (or make the launch line one the reader follows)",
		"%s:%d names %s%s, but the reader did not follow it: %s%s; the job is not judged "
		"as what it launches", name, hit, word, said, why,
		more ? " (more such lines follow)" : "");
	out->is_llm = true;
}

/* The evidence of a whole script (its first line's #! aside). */
static void evidence_scan(const char *text, size_t len, struct evidence *ev)
{
	char line[FOLLOW_LINE_MAX];
	size_t i = 0;
	int lineno = 0;
	bool generic;

	if (len > JOBREAD_MAX_BYTES)
		len = JOBREAD_MAX_BYTES;
	while (i < len) {
		bool comment;

		next_line(text, len, &i, line);
		lineno++;
		comment = line[strspn(line, " \t")] == '#';
		if (lineno > 1 || strncmp(line, "#!", 2))
			evidence_of_line(ev, line, lineno, comment && strncmp(line, "#SBATCH", 7));
		if (!comment && !ev->launch && (ev->launch = launch_word(line, &generic)))
			ev->launch_line = lineno;
	}
}

static bool noted(const struct jobread_out *out, enum adv_code code)
{
	for (int i = 0; i < out->n_notes && i < JOBREAD_MAX_NOTES; i++)
		if (!strcmp(out->notes[i].code, engine_code_name(code)))
			return true;
	return false;
}

/* Not an LLM job after all: what was read and said of it is dropped, and
 * the reason kept. */
static void drop_llm(struct jobread_out *out)
{
	out->is_llm = false;
	out->n_notes = 0;
	out->launch_uncertain = false;
	out->step_nodes = 0;
	memset(out->v, 0, sizeof(out->v));
}

void follow_gate(const char *text, size_t len, struct jobread_out *out)
{
	struct evidence ev = { 0 };
	const struct jobread_value *model = &out->v[JR_MODEL];
	char lower[sizeof(model->s)];
	const char *against = NULL;
	bool not_read, any_model = !out->trainer[0] || !strcmp(out->trainer, "hf") ||
				   !strcmp(out->trainer, "trl");

	if (!out->is_llm || !text)
		return;
	if (any_model && model->set && !model->unknown && model->s[0]) {
		lower_copy(lower, sizeof(lower), model->s);
		against = evidence_in(lower, not_llm, ADV_ARRAY_SIZE(not_llm));
	}
	/* None of the rules below can apply (a trainer of its own read the
	 * job, its program was read): the script is not scanned again. */
	not_read = noted(out, ADV_CODE_PROGRAM_NOT_READ);
	if (!not_read && !against && out->trainer[0])
		return;
	evidence_scan(text, len, &ev);
	if (ev.strong)
		return;
	/* A program that could not be read leaves the workload unknown
	 * (PROGRAM_NOT_READ), unless the job itself says what it is: a
	 * vision, diffusion or science job named as such, with nothing that
	 * names an LLM, is not an LLM job. */
	if (not_read) {
		if (!ev.against)
			return;
		drop_llm(out);
		adv_snprintf(out->not_llm_why, sizeof(out->not_llm_why),
			     "its program was not read, and the job names '%s' (line %d), not an "
			     "LLM, and nothing that names one", ev.against, ev.against_line);
		return;
	}
	/* A model the job names that is not an LLM (an encoder, a vision
	 * model) read by a trainer that takes any model (the HF Trainer). */
	if (against) {
		char m[128], where[96];

		adv_escape_text(m, sizeof(m), model->s);
		adv_snprintf(where, sizeof(where), "%s:%d", model->src.file, model->src.line);
		drop_llm(out);
		adv_snprintf(out->not_llm_why, sizeof(out->not_llm_why),
			     "the model '%s' (%s) is not an LLM ('%s'), and nothing in the job names "
			     "one", m, where, against);
		return;
	}
	/* A launcher that starts any program, no trainer read, and nothing
	 * that names an LLM: a launcher alone is no evidence. */
	if (!out->trainer[0] && !is_evidence(&ev)) {
		char l[64];

		if (ev.launch)
			adv_snprintf(l, sizeof(l), "line %d starts %s", ev.launch_line, ev.launch);
		else
			adv_snprintf(l, sizeof(l), "it starts %s", out->launcher[0] ? out->launcher
									    : "a launcher");
		drop_llm(out);
		adv_snprintf(out->not_llm_why, sizeof(out->not_llm_why),
			     "%s, but nothing in the job names an LLM (a model, tokenizer, or LLM "
			     "trainer or server)%s%s%s", l, ev.against ? "; it names '" : "",
			     ev.against ? ev.against : "", ev.against ? "', not an LLM" : "");
	}
}

