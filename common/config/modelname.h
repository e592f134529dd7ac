/*
 * modelname.h - a model id or path matched to a catalog model by what it
 * names (family, version, size, variant), not by its spelling (modelname.c).
 */
#ifndef ADVISOR_MODELNAME_H
#define ADVISOR_MODELNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"

/* The weight format a name's quantization suffix says. */
enum catalog_quant {
	CATALOG_QUANT_NONE = 0,
	CATALOG_QUANT_FP8,     /* fp8 e4m3 linear weights (-FP8, -FP8-dynamic) */
	CATALOG_QUANT_INT8,    /* 8-bit integer weights (-Int8, -8bit, -W8A8) */
	CATALOG_QUANT_INT4,    /* 4-bit integer weights (-AWQ, -GPTQ-Int4, -bnb-4bit) */
	CATALOG_QUANT_MXFP4,   /* OCP MXFP4 experts (-MXFP4) */
	CATALOG_QUANT_OTHER,   /* quantized in a format not modelled (-GGUF, -NVFP4, -bnb) */
	CATALOG_QUANT_COUNT
};

/* The longest name the matcher reads; a longer one does not match. */
#define CATALOG_MATCH_NAME_MAX 160
/* Tokens of one name read at most; a name with more does not match. */
#define CATALOG_MATCH_TOKENS_MAX 24

struct catalog_match {
	const struct adv_model *model; /* NULL: none, or more than one */
	bool exact;                    /* the name or an alias itself (case aside) */
	enum catalog_quant quant;      /* what the name's quantization suffix says */
	bool quant_bits_assumed;       /* a method without its bits (-GPTQ): 4 taken */
	char quant_text[40];           /* the suffix as written: "GPTQ-Int4" */
	char date[16];                 /* a release date suffix as written: "0528" */
	char variant[48];              /* dropped role words: "Instruct" */
};

/*
 * Matches a Hugging Face id, a local path or a framework's model name to
 * the one catalog model it names: case, separators ('-', '_', '.', ' '),
 * an organisation prefix ("org/" and Meta's "Meta-"), the role words of
 * fine-tuned releases (-Instruct, -Chat, -it, -Base, -hf), a release date
 * (-0528, -2407) and a quantization suffix (-FP8, -AWQ, -GPTQ-Int4 ...)
 * aside, every other word must agree with one of the model's name or
 * aliases: a different family, version, size or variant ("Qwen2-7B" vs
 * "Qwen2.5-7B", "-Lite", "-4k") does not match, nor does a name two models
 * fit.  Returns true and fills out when one model matches.  Bounded: names
 * over CATALOG_MATCH_NAME_MAX or of more than CATALOG_MATCH_TOKENS_MAX
 * words do not match.
 */
bool modelname_match(const catalog_t *cat, const char *name, struct catalog_match *out);

/*
 * The words a name is compared by, joined with single spaces into buf
 * ("Meta-Llama-3.1-70B-Instruct-FP8" -> "llama 3 1 70b"), and what its
 * suffixes say in info (may be NULL).  Returns false (buf "") for a name
 * the matcher does not read (too long, too many words, a URL, empty).
 */
bool modelname_key(const char *name, char *buf, size_t len, struct catalog_match *info);

/* "fp8", "int8", "int4", "mxfp4", "quantized" ("" for none). */
const char *modelname_quant(enum catalog_quant q);

#endif
