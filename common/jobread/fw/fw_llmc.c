/*
 * fw_llmc.c - llm.c's CUDA trainer, train_gpt2cu (karpathy/llm.c,
 * train_gpt2.cu, read at commit f1e2ace, 2025-05-10): `mpirun -np 8
 * ./train_gpt2cu -i ... -e d12 -b 64 -t 1024 -d 524288 -z 1`, often run
 * through srun, or as bash -c "$binary ...".
 *
 * Its main() reads its arguments in pairs, "-x VALUE" for i = 1, 3, 5 ...
 * (a flag of one dash and one or two letters, told apart by its first
 * letter and, for some, its second; the last of a flag wins), with these
 * defaults (main()'s declarations; error_usage() lists them):
 *   -e  the model: a .bin checkpoint (default gpt2_124M_bf16.bin), whose
 *       header holds the shape, or a descriptor gpt_build_from_descriptor
 *       builds: "dN" or "gpt2:dN" (gpt2_set_hyperparameters: depth N of 6,
 *       12, 24, 36, 48, 60, 72, 84, each with its width and heads, 1024
 *       positions) or "gpt3:cN" (gpt3_set_hyperparameters: width N, its
 *       depth and head size, 2048 positions); GPT-2's vocabulary, 50257
 *       tokens padded to 50304; LayerNorm, a GELU MLP of 4 x width, the
 *       token embedding tied to the output layer (GPT-2's schema)
 *   -t  sequence length T, 1024
 *   -b  micro-batch B per GPU, 4
 *   -d  total batch in tokens, default B * T * processes (no gradient
 *       accumulation); grad_accum_steps = d / (B * T * processes), which
 *       main() asserts is whole
 *   -z  ZeRO stage 0; llmc/zero.cuh set_zero_configs keeps 0 and 1 only
 *       (2 and 3 are "not yet supported" and run as 0)
 *   -r  recompute 1: 0 none, 1 GELU, 2 GELU and LayerNorm (selective)
 *   -n  checkpoint every N steps, 0 (none); written only with -o DIR
 *   -w  an fp32 master copy of the weights, 1
 * Precision is fixed when the program is built (the Makefile's PRECISION,
 * BF16 by default), not by a flag: bf16 is assumed and said.  The model
 * is data parallel only: every process holds all of it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "jobread/ctx.h"
#include "jobread/reader.h"
#include "util.h"

/* gpt2_set_hyperparameters: depth -> width, heads. */
static const struct { int depth, channels, heads; } gpt2_shapes[] = {
	{ 6, 384, 6 }, { 12, 768, 12 }, { 24, 1024, 16 }, { 36, 1280, 20 },
	{ 48, 1600, 25 }, { 60, 1920, 30 }, { 72, 2880, 30 }, { 84, 3456, 36 },
};

/* gpt3_set_hyperparameters: width -> depth, head size. */
static const struct { int channels, depth, head_size; } gpt3_shapes[] = {
	{ 384, 6, 64 }, { 768, 12, 64 }, { 1024, 24, 64 }, { 1536, 24, 96 },
	{ 2048, 24, 128 }, { 2560, 32, 80 }, { 4096, 32, 128 }, { 5140, 40, 128 },
	{ 12288, 96, 128 },
};

/* gpt_build_from_descriptor: GPT-2's tokenizer, padded for the kernels. */
#define LLMC_VOCAB_PADDED 50304

/* The flags this reader takes, as main() tells them apart: first letter,
 * and second letter ('\0': a flag of one letter; '*': any). */
enum llmc_flag { F_MODEL, F_SEQ, F_MBS, F_TOTAL, F_ZERO, F_RECOMPUTE, F_CKPT, F_OUTDIR, F_COUNT };

static const struct { char a, b; const char *name; } llmc_flags[] = {
	[F_MODEL] = { 'e', '*', "-e" },
	[F_SEQ] = { 't', '*', "-t" },
	[F_MBS] = { 'b', '*', "-b" },
	[F_TOTAL] = { 'd', '*', "-d" },
	[F_ZERO] = { 'z', '*', "-z" },
	[F_RECOMPUTE] = { 'r', '*', "-r" },
	[F_CKPT] = { 'n', '\0', "-n" },
	[F_OUTDIR] = { 'o', '*', "-o" },
};
_Static_assert(sizeof(llmc_flags) / sizeof(llmc_flags[0]) == F_COUNT, "one entry per flag");

static bool is_llmc(const struct jr_cmd *p)
{
	return !strcmp(jr_basename(p->argv[0]), "train_gpt2cu");
}

/* The word index of each flag's value (the last one wins), -1 when absent.
 * Stops at the first pair main() would refuse (error_usage exits). */
static void scan(const struct jr_cmd *p, int at[F_COUNT])
{
	for (int k = 0; k < F_COUNT; k++)
		at[k] = -1;
	for (int i = 1; i + 1 < p->argc && i < 4096; i += 2) {
		const char *w = p->argv[i];
		size_t n = strlen(w);

		if (w[0] != '-' || n < 2 || n > 3)
			return;
		for (int k = 0; k < F_COUNT; k++)
			if (w[1] == llmc_flags[k].a &&
			    (llmc_flags[k].b == '*' || (llmc_flags[k].b == '\0' && n == 2))) {
				at[k] = i + 1;
				break;
			}
	}
}

/* The source of a value main() takes when the job leaves the flag out. */
static void llmc_default(struct jobread_src *src, const char *what)
{
	memset(src, 0, sizeof(*src));
	adv_strlcpy(src->key, what, sizeof(src->key));
	src->style = JR_STYLE_DERIVED;
	src->fw_default = true;
}

/* An int flag: its value, or def (from llm.c's default) when absent;
 * false when it is not known. */
static bool int_flag(struct jr_ctx *cx, const struct jr_cmd *p, const int at[F_COUNT],
		     enum llmc_flag f, long long def, const char *def_what, enum jobread_field field,
		     long long *out, struct jobread_src *src)
{
	if (at[f] < 0) {
		llmc_default(src, def_what);
		*out = def;
		if (field != JR_FIELD_COUNT)
			jr_set_int(cx, field, def, src);
		return true;
	}
	jr_src_word(src, p, at[f] - 1, llmc_flags[f].name, JR_STYLE_FLAG);
	if ((p->unknown && p->unknown[at[f]]) || !jr_parse_ll(p->argv[at[f]], out)) {
		if (field != JR_FIELD_COUNT)
			jr_set_unknown(cx, field, src, p->argv[at[f]]);
		return false;
	}
	if (field != JR_FIELD_COUNT)
		jr_set_int(cx, field, *out, src);
	return true;
}

/* The model of -e: a descriptor's shape, or a checkpoint not read. */
static void model(struct jr_ctx *cx, const struct jr_cmd *p, const int at[F_COUNT], long long *max_seq)
{
	struct jobread_src src;
	const char *d = at[F_MODEL] >= 0 ? p->argv[at[F_MODEL]] : NULL;
	long long n = 0, layers = 0, channels = 0, heads = 0;

	*max_seq = 0;
	if (!d) {
		llmc_default(&src, "llm.c default (-e gpt2_124M_bf16.bin)");
		jr_set_unknown(cx, JR_MODEL, &src, "the checkpoint gpt2_124M_bf16.bin, not read");
		return;
	}
	jr_src_word(&src, p, at[F_MODEL] - 1, "-e", JR_STYLE_FLAG);
	if (p->unknown && p->unknown[at[F_MODEL]]) {
		jr_set_unknown(cx, JR_MODEL, &src, d);
		return;
	}
	if ((d[0] == 'd' && jr_parse_ll(d + 1, &n)) ||
	    (!strncmp(d, "gpt2:d", 6) && jr_parse_ll(d + 6, &n))) {
		for (size_t k = 0; k < ADV_ARRAY_SIZE(gpt2_shapes); k++)
			if (gpt2_shapes[k].depth == n) {
				layers = n;
				channels = gpt2_shapes[k].channels;
				heads = gpt2_shapes[k].heads;
				*max_seq = 1024;
			}
	} else if (!strncmp(d, "gpt3:c", 6) && jr_parse_ll(d + 6, &n)) {
		for (size_t k = 0; k < ADV_ARRAY_SIZE(gpt3_shapes); k++)
			if (gpt3_shapes[k].channels == n) {
				layers = gpt3_shapes[k].depth;
				channels = n;
				heads = n / gpt3_shapes[k].head_size;
				*max_seq = 2048;
			}
	}
	if (!layers) {
		/* A checkpoint (.bin: its header holds the shape), or a
		 * descriptor llm.c refuses. */
		jr_set_unknown(cx, JR_MODEL, &src, d);
		return;
	}
	jr_set_int(cx, JR_ARCH_LAYERS, layers, &src);
	jr_set_int(cx, JR_ARCH_HIDDEN, channels, &src);
	jr_set_int(cx, JR_ARCH_HEADS, heads, &src);
	jr_set_int(cx, JR_ARCH_KV_HEADS, heads, &src);
	jr_set_int(cx, JR_ARCH_FFN, 4 * channels, &src);
	jr_set_int(cx, JR_ARCH_VOCAB, LLMC_VOCAB_PADDED, &src);
	jr_set_int(cx, JR_ARCH_GATED, 0, &src);
	jr_set_int(cx, JR_ARCH_NORM, 1, &src);
	jr_set_int(cx, JR_ARCH_TIED, 1, &src);
	jr_set_int(cx, JR_ARCH_MAX_SEQ, *max_seq, &src);
}

bool jr_fw_llmc(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct jobread_src src, tsrc;
	int at[F_COUNT];
	long long seq = 1024, mbs = 4, total = -1, zero = 0, rc = 1, every = 0, max_seq;
	bool seq_known;

	if (is_module || !prog || prog->argc < 1 || !prog->argv[0] || !is_llmc(prog))
		return false;
	scan(prog, at);
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';
	jr_set_trainer(cx, "llm.c", ADV_FW_GENERIC, &src);
	jr_set_int(cx, JR_TASK, ADV_TASK_TRAIN, &src);
	model(cx, prog, at, &max_seq);
	seq_known = int_flag(cx, prog, at, F_SEQ, 1024, "llm.c default (-t 1024)", JR_SEQ, &seq, &tsrc);
	int_flag(cx, prog, at, F_MBS, 4, "llm.c default (-b 4)", JR_MBS, &mbs, &src);
	if (int_flag(cx, prog, at, F_TOTAL, -1, "llm.c default (-d B*T*processes: no accumulation)",
		     JR_FIELD_COUNT, &total, &src)) {
		if (total <= 0)
			jr_set_int(cx, JR_GAS, 1, &src);
		else if (seq_known && seq > 0 && total % seq == 0)
			jr_set_int(cx, JR_GBS, total / seq, &src);
		else
			jr_set_unknown(cx, JR_GBS, &src, "a token count that is no whole number of sequences");
	} else {
		jr_set_unknown(cx, JR_GBS, &src, prog->argv[at[F_TOTAL]]);
	}
	if (int_flag(cx, prog, at, F_ZERO, 0, "llm.c default (-z 0)", JR_FIELD_COUNT, &zero, &src))
		/* set_zero_configs: stages 2 and 3 run as 0 */
		jr_set_int(cx, JR_ZERO, zero == 1 ? 1 : 0, &src);
	else
		jr_set_unknown(cx, JR_ZERO, &src, prog->argv[at[F_ZERO]]);
	if (int_flag(cx, prog, at, F_RECOMPUTE, 1, "llm.c default (-r 1: GELU recomputed)",
		     JR_FIELD_COUNT, &rc, &src))
		jr_set_int(cx, JR_RECOMPUTE, rc > 0 ? ADV_RECOMPUTE_SELECTIVE : ADV_RECOMPUTE_NONE, &src);
	else
		jr_set_unknown(cx, JR_RECOMPUTE, &src, prog->argv[at[F_RECOMPUTE]]);
	/* Checkpoints: every -n steps, only into -o's directory. */
	if (int_flag(cx, prog, at, F_CKPT, 0, "llm.c default (-n 0: no checkpoints)", JR_FIELD_COUNT,
		     &every, &src)) {
		if (every > 0 && at[F_OUTDIR] >= 0)
			jr_set_int(cx, JR_CKPT_STEPS, every, &src);
		else
			jr_set_int(cx, JR_CKPT_OFF, 1, &src);
	}
	/* Precision is the build's, not a flag. */
	llmc_default(&src, "llm.c default (built with PRECISION=BF16)");
	jr_set_int(cx, JR_PRECISION, ADV_PREC_BF16, &src);
	jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, "--llm-precision=P",
		"%s:%d: train_gpt2cu's precision is chosen when it is built (make PRECISION=BF16, "
		"FP16 or FP32), not by a flag: bf16, the Makefile's default, is assumed",
		prog->file ? prog->file : "script", prog->line);
	if (seq_known && max_seq > 0 && seq > max_seq)
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
			"%s:%d: -t %lld is longer than the %lld positions of the model -e builds; "
			"train_gpt2cu stops at its assert(T <= max_seq_len) before the first step", tsrc.file, tsrc.line, seq,
			max_seq);
	return true;
}
