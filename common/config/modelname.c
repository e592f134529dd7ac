/*
 * modelname.c - a model id or path matched to the catalog model it names,
 * by what the name says (family, version, size, variant) rather than by
 * its spelling (issue 28).
 *
 * A name is cut into words at '-', '_' and blanks after its last '/' (the
 * Hub's "org/name", a local directory's last component: huggingface_hub
 * validate_repo_id allows one '/'; in the Hub cache's
 * models--ORG--NAME/snapshots/REV, NAME), lower-cased.  A Hub
 * organisation before its own family is the publisher's (lead_orgs[]:
 * "Meta-Llama-3-8B", a copy named "Qwen_Qwen2.5-7B").  Words that do not
 * change the architecture are set aside by one table (suffixes[] below,
 * each with what it means and where the convention is published): the
 * role of a fine-tuned release (-Instruct, -Chat, -it, -Base, -hf: same
 * config.json as the base model), a release date (-0528, -2407: a re-release, said as
 * an assumption by the reader), and a quantization (-FP8, -AWQ,
 * -GPTQ-Int4, -Int8, -bnb-4bit, -MXFP4: the same architecture with its
 * linear weights stored in fewer bits, which the caller must say).  The
 * rest is split where letters turn to digits ("llama3" -> "llama 3") and
 * dotted versions at their dots ("3.1" -> "3 1"), so that "Llama-3.1-70B",
 * "llama3_1_70b" and "meta-llama/Meta-Llama-3.1-70B-Instruct" all read
 * "llama 3 1 70b".  Sizes keep their unit and decimals ("0.5b", "8x7b",
 * "a3b" -> "a 3b"), and the frameworks' spellings of sizes and versions
 * read as the Hub's (word_norm(): "1p5b", "500m", "0_5b", "qwen25").  A
 * name matches a catalog model when its words equal those of the model's
 * name or of one alias, and of no other model's: every word the table
 * does not know (a size, "lite", "4k", "coder", "distill", a version
 * "v0.3") must agree, so a different size, version or variant never
 * matches, and a name two models fit matches neither.
 *
 * Nothing is stored: the catalog is read-only after loading (catalog.h),
 * and the keys are made again for each lookup (tens of models, a few
 * aliases each).
 */
#include "config.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "modelname.h"
#include "util.h"

enum suffix_kind {
	SUF_ROLE,    /* a fine-tuned release of the same architecture */
	SUF_QUANT,   /* a quantization method or its bits */
	SUF_QUAL,    /* qualifies a quantization ("dynamic" activation scales) */
};

struct suffix {
	const char *word;          /* one lower-case word of the name */
	enum suffix_kind kind;
	enum catalog_quant quant;  /* SUF_QUANT: the format it says */
	bool bits;                 /* SUF_QUANT: it states the bits (wins over a method) */
	/* what it means, and where the convention is published */
	const char *means;
};

static const struct suffix suffixes[] = {
	/* Roles.  A fine-tuned model keeps its base's config.json. */
	{ "instruct", SUF_ROLE, CATALOG_QUANT_NONE, false,
	  "instruction-tuned (meta-llama/Llama-3.1-8B-Instruct, Qwen/Qwen2.5-7B-Instruct)" },
	{ "chat", SUF_ROLE, CATALOG_QUANT_NONE, false,
	  "chat-tuned (deepseek-ai/DeepSeek-V2-Chat, meta-llama/Llama-2-7b-chat-hf)" },
	{ "it", SUF_ROLE, CATALOG_QUANT_NONE, false,
	  "instruction-tuned (google/gemma-2-27b-it, google/gemma-3-27b-it)" },
	{ "base", SUF_ROLE, CATALOG_QUANT_NONE, false,
	  "the pretrained model (deepseek-ai/DeepSeek-V3-Base, mistralai/Mistral-Nemo-Base-2407)" },
	{ "hf", SUF_ROLE, CATALOG_QUANT_NONE, false,
	  "converted to the transformers layout (meta-llama/Llama-2-7b-hf)" },
	/* Quantization methods.  Formats as memory.c costs them: fp8 e4m3
	 * with block or channel scales; AWQ is 4-bit only (AutoAWQ's
	 * w_bit 4, vLLM awq); GPTQ's bits are in its config (AutoGPTQ
	 * BaseQuantizeConfig bits, default 4); bitsandbytes loads 4- or
	 * 8-bit as the next word says; MXFP4 as gpt-oss ships its experts
	 * (openai/gpt-oss-120b config.json quantization_config). */
	{ "fp8", SUF_QUANT, CATALOG_QUANT_FP8, true,
	  "fp8 weights (meta-llama/Llama-3.1-405B-Instruct-FP8, Qwen/Qwen3-30B-A3B-FP8)" },
	{ "awq", SUF_QUANT, CATALOG_QUANT_INT4, true,
	  "AWQ 4-bit weights (Qwen/Qwen2.5-7B-Instruct-AWQ; AutoAWQ w_bit 4)" },
	{ "gptq", SUF_QUANT, CATALOG_QUANT_INT4, false,
	  "GPTQ weights, bits in the next word (Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4)" },
	{ "bnb", SUF_QUANT, CATALOG_QUANT_OTHER, false,
	  "bitsandbytes weights, bits in the next word (unsloth/Llama-3.3-70B-Instruct-bnb-4bit)" },
	{ "mxfp4", SUF_QUANT, CATALOG_QUANT_MXFP4, true,
	  "MXFP4 expert weights (openai/gpt-oss-120b quantization_config quant_method mxfp4)" },
	{ "nvfp4", SUF_QUANT, CATALOG_QUANT_OTHER, true,
	  "NVFP4 weights (nvidia/DeepSeek-R1-FP4 ModelOpt checkpoints), not modelled" },
	{ "gguf", SUF_QUANT, CATALOG_QUANT_OTHER, true,
	  "a llama.cpp GGUF file, its quantization per file, not modelled" },
	/* Bits. */
	{ "int4", SUF_QUANT, CATALOG_QUANT_INT4, true,
	  "4-bit integer weights (Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4, hugging-quants ...-AWQ-INT4)" },
	{ "int8", SUF_QUANT, CATALOG_QUANT_INT8, true,
	  "8-bit integer weights (Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8)" },
	{ "4bit", SUF_QUANT, CATALOG_QUANT_INT4, true,
	  "4-bit weights (unsloth ...-bnb-4bit, mlx-community ...-4bit)" },
	{ "8bit", SUF_QUANT, CATALOG_QUANT_INT8, true,
	  "8-bit weights (unsloth ...-bnb-8bit, mlx-community ...-8bit)" },
	{ "w4a16", SUF_QUANT, CATALOG_QUANT_INT4, true,
	  "4-bit weights, 16-bit activations (llm-compressor scheme W4A16)" },
	{ "w8a8", SUF_QUANT, CATALOG_QUANT_INT8, true,
	  "8-bit weights and activations (llm-compressor scheme W8A8)" },
	{ "w8a16", SUF_QUANT, CATALOG_QUANT_INT8, true,
	  "8-bit weights, 16-bit activations (llm-compressor scheme W8A16)" },
	{ "dynamic", SUF_QUAL, CATALOG_QUANT_NONE, false,
	  "activation scales computed per token (RedHatAI ...-FP8-dynamic)" },
};

/* Leading words that are the publisher's, not the model's, dropped when
 * the next word starts with the family it publishes: Meta names its
 * Llama 3 and 3.1 repositories "Meta-Llama-3-8B" (meta-llama on the Hub;
 * Llama 3.2 is "Llama-3.2-1B": the same models), and a local copy named
 * after the Hub id with '_' for '/' keeps the organisation
 * ("meta-llama_Llama-3.1-8B", "Qwen_Qwen2.5-7B-Instruct"): the Hub's
 * organisations meta-llama, Qwen, google, mistralai, deepseek-ai,
 * microsoft and openai, each before its own family only. */
static const struct {
	const char *words[2];   /* one or two words; NULL ends */
	const char *before;     /* the next word's start */
} lead_orgs[] = {
	/* The longer spelling first: "meta-llama_Llama-3.1-8B". */
	{ { "meta", "llama" }, "llama" },
	{ { "meta", "llama" }, "meta" },
	{ { "meta", NULL }, "llama" },
	{ { "qwen", NULL }, "qwen" },
	{ { "google", NULL }, "gemma" },
	{ { "mistralai", NULL }, "mistral" },
	{ { "mistralai", NULL }, "mixtral" },
	{ { "deepseek", "ai" }, "deepseek" },
	{ { "microsoft", NULL }, "phi" },
	{ { "openai", NULL }, "gpt" },
};

/* How many of words[at..n) are a publisher's before its family (0: none). */
static size_t lead_org(char *const *words, size_t at, size_t n)
{
	for (size_t k = 0; k < ADV_ARRAY_SIZE(lead_orgs); k++) {
		size_t w = lead_orgs[k].words[1] ? 2 : 1;

		if (at + w >= n || strcmp(words[at], lead_orgs[k].words[0]) ||
		    (w == 2 && strcmp(words[at + 1], lead_orgs[k].words[1])))
			continue;
		if (!strncmp(words[at + w], lead_orgs[k].before, strlen(lead_orgs[k].before)))
			return w;
	}
	return 0;
}

const char *modelname_quant(enum catalog_quant q)
{
	static const char *const n[] = { "", "fp8", "int8", "int4", "mxfp4", "quantized" };
	_Static_assert(ADV_ARRAY_SIZE(n) == CATALOG_QUANT_COUNT, "a name for each format");
	return (unsigned)q < CATALOG_QUANT_COUNT ? n[q] : "";
}

static const struct suffix *suffix_of(const char *w)
{
	for (size_t k = 0; k < ADV_ARRAY_SIZE(suffixes); k++)
		if (!strcmp(suffixes[k].word, w))
			return &suffixes[k];
	return NULL;
}

/* A release date: MMDD (DeepSeek-R1-0528, DeepSeek-V3-0324) or YYMM from
 * 2023 on (Mistral-Nemo-Instruct-2407, Mistral-Small-24B-Instruct-2501). */
static bool is_date(const char *w)
{
	int a, b;

	if (strlen(w) != 4 || !isdigit((unsigned char)w[0]) || !isdigit((unsigned char)w[1]) ||
	    !isdigit((unsigned char)w[2]) || !isdigit((unsigned char)w[3]))
		return false;
	a = (w[0] - '0') * 10 + (w[1] - '0');
	b = (w[2] - '0') * 10 + (w[3] - '0');
	return (a >= 1 && a <= 12 && b >= 1 && b <= 31) || (a >= 23 && a <= 29 && b >= 1 && b <= 12);
}

/* Appends sep (when buf is not empty) and w; false, buf unchanged, when
 * they do not fit. */
static bool append(char *buf, size_t len, const char *sep, const char *w)
{
	size_t o = strlen(buf);

	if (o + strlen(sep) + strlen(w) + 1 > len)
		return false;
	if (o)
		adv_strlcpy(buf + o, sep, len - o), o += strlen(sep);
	adv_strlcpy(buf + o, w, len - o);
	return true;
}

/* Is every character of w[0..n) a digit or a dot? */
static bool numeric(const char *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)w[i]) && w[i] != '.')
			return false;
	return true;
}

/* Families whose frameworks join major and minor version digits in
 * recipe names: NeMo's llama31_8b, llama32_1b, qwen25_7b
 * (nemo/collections/llm/recipes), torchtitan's llama31 spellings. */
static const char *const joined_version_families[] = { "llama", "qwen" };

static bool all_digits(const char *w, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)w[i]))
			return false;
	return true;
}

/*
 * The frameworks' own spellings of a size or version, as the Hub writes
 * them: "1p5b" (NeMo recipe qwen25_1p5b, Megatron-Bridge
 * Qwen25ModelProvider1P5B) is "1.5b"; "500m" (NeMo qwen25_500m,
 * Qwen3Config600M) is "0.5b"; "0" then "5b" as separate words (torchtune
 * builder qwen2_5_0_5b) is "0.5b" (*used_next); "llama31", "qwen25" are
 * "llama3.1", "qwen2.5".  Anything else is copied.  out has room for the
 * word and 8 more characters.
 */
static void word_norm(const char *w, const char *next, char *out, size_t len, bool *used_next)
{
	size_t n = strlen(w), p = 0;

	*used_next = false;
	adv_strlcpy(out, w, len);
	while (p < n && isdigit((unsigned char)w[p]))
		p++;
	if (p > 0 && p + 2 < n && w[p] == 'p' && all_digits(w + p + 1, n - p - 2) &&
	    (w[n - 1] == 'b' || w[n - 1] == 'm')) {
		out[p] = '.';
		return;
	}
	if (p > 2 && p + 1 == n && w[p] == 'm' && p <= 6) {
		long v = 0;
		char frac[8];
		int f = 0;

		for (size_t i = 0; i < p; i++)
			v = v * 10 + (w[i] - '0');
		if (v < 100)
			return;
		for (long r = v % 1000, d = 100; r > 0 && d > 0; d /= 10) {
			frac[f++] = (char)('0' + r / d);
			r %= d;
		}
		frac[f] = '\0';
		adv_snprintf(out, len, f ? "%ld.%sb" : "%ldb", v / 1000, frac);
		return;
	}
	if (!strcmp(w, "0") && next) {
		size_t nn = strlen(next), q = 0;

		while (q < nn && isdigit((unsigned char)next[q]))
			q++;
		if (q > 0 && q + 1 == nn && next[q] == 'b' && nn + 3 <= len) {
			adv_snprintf(out, len, "0.%s", next);
			*used_next = true;
		}
		return;
	}
	for (size_t k = 0; k < ADV_ARRAY_SIZE(joined_version_families); k++) {
		size_t fl = strlen(joined_version_families[k]);

		if (n == fl + 2 && !strncmp(w, joined_version_families[k], fl) &&
		    all_digits(w + fl, 2) && n + 2 <= len) {
			adv_snprintf(out, len, "%s%c.%c", joined_version_families[k], w[fl], w[fl + 1]);
			return;
		}
	}
}

/* One word of the core into its parts: "llama3" -> "llama 3", "qwen2.5"
 * -> "qwen 2 5", "v0.1" -> "v 0 1"; "0.5b", "8x7b", "70b" stay whole.
 * False when the key does not fit buf: a cut key could read as another
 * model's, so the caller matches nothing. */
static bool add_core(char *buf, size_t len, const char *w)
{
	size_t n = strlen(w), start = 0;
	bool ok = true;

	for (size_t i = 1; i <= n; i++) {
		bool cut = i == n || (isalpha((unsigned char)w[i - 1]) && isdigit((unsigned char)w[i]));
		char part[CATALOG_MATCH_NAME_MAX + 1];
		size_t pn = i - start;

		if (!cut)
			continue;
		if (pn > 0 && pn <= CATALOG_MATCH_NAME_MAX) {
			memcpy(part, w + start, pn);
			part[pn] = '\0';
			if (numeric(part, pn)) {
				/* A version "3.1": its numbers, whatever joins
				 * them (no strtok: lookups run on many threads). */
				char *t = part;

				for (size_t j = 0; j <= pn; j++) {
					if (part[j] != '.' && part[j] != '\0')
						continue;
					part[j] = '\0';
					if (*t)
						ok = append(buf, len, " ", t) && ok;
					t = part + j + 1;
				}
			} else {
				ok = append(buf, len, " ", part) && ok;
			}
		}
		start = i;
	}
	return ok;
}

bool modelname_key(const char *name, char *buf, size_t len, struct catalog_match *out)
{
	struct catalog_match mine, *info = &mine;
	char copy[CATALOG_MATCH_NAME_MAX + 1];
	char *words[CATALOG_MATCH_TOKENS_MAX];
	char *orig[CATALOG_MATCH_TOKENS_MAX];
	char lower[CATALOG_MATCH_NAME_MAX + 1];
	const char *base;
	size_t n = 0, blen, first = 0;
	bool quant_bits = false;

	memset(info, 0, sizeof(*info));
	if (out)
		memset(out, 0, sizeof(*out));
	if (!buf || len == 0)
		return false;
	buf[0] = '\0';
	if (!name || !*name || strstr(name, "://"))
		return false;
	/* The last component of a path or Hub id ("org/name", "/ckpt/name/"). */
	blen = strlen(name);
	if (blen > 4 * CATALOG_MATCH_NAME_MAX)
		return false;
	while (blen > 0 && name[blen - 1] == '/')
		blen--;
	base = name;
	for (size_t i = 0; i < blen; i++)
		if (name[i] == '/')
			base = name + i + 1;
	blen -= (size_t)(base - name);
	/* The Hugging Face cache keeps a Hub model under
	 * hub/models--ORG--NAME/snapshots/REVISION (huggingface_hub
	 * file_download.py repo_folder_name: "--" joins the repository
	 * type, the org and the name; validate_repo_id allows no "--" in a
	 * name): such a path is the model NAME, whatever follows. */
	for (const char *c = name; c && *c && c < name + 4 * CATALOG_MATCH_NAME_MAX; ) {
		const char *end = strchr(c, '/');
		size_t cl = end ? (size_t)(end - c) : strlen(c);

		if (cl > 8 && !strncmp(c, "models--", 8)) {
			const char *last = c + 8;

			for (size_t k = 8; k + 1 < cl; k++)
				if (c[k] == '-' && c[k + 1] == '-')
					last = c + k + 2;
			base = last;
			blen = cl - (size_t)(last - c);
			break;
		}
		c = end ? end + 1 : NULL;
	}
	if (blen == 0 || blen > CATALOG_MATCH_NAME_MAX)
		return false;
	memcpy(copy, base, blen);
	copy[blen] = '\0';
	for (size_t i = 0; i <= blen; i++)
		lower[i] = (char)tolower((unsigned char)copy[i]);
	/* Words at the separators, in both spellings. */
	{
		char *p = lower, *q = copy;

		while (*p) {
			while (*p == '-' || *p == '_' || *p == ' ' || *p == '\t')
				*p++ = '\0', *q++ = '\0';
			if (!*p)
				break;
			if (n == CATALOG_MATCH_TOKENS_MAX)
				return false;
			words[n] = p;
			orig[n++] = q;
			while (*p && *p != '-' && *p != '_' && *p != ' ' && *p != '\t')
				p++, q++;
		}
	}
	/* Publishers' words first, a few at most ("meta-llama_Meta-Llama-3"). */
	for (int round = 0; round < 3; round++) {
		size_t w = lead_org(words, first, n);

		if (!w)
			break;
		first += w;
	}
	for (size_t i = first; i < n; i++) {
		const struct suffix *s = i > first ? suffix_of(words[i]) : NULL;

		if (s && s->kind == SUF_ROLE) {
			append(info->variant, sizeof(info->variant), "-", orig[i]);
			continue;
		}
		if (s && (s->kind == SUF_QUANT || s->kind == SUF_QUAL)) {
			append(info->quant_text, sizeof(info->quant_text), "-", orig[i]);
			/* Bits win over a method's default; the first of
			 * either kind otherwise. */
			if (s->kind == SUF_QUANT &&
			    ((s->bits && !quant_bits) || info->quant == CATALOG_QUANT_NONE)) {
				info->quant = s->quant;
				quant_bits = s->bits;
			}
			continue;
		}
		if (i > first && is_date(words[i])) {
			if (!info->date[0])
				adv_strlcpy(info->date, orig[i], sizeof(info->date));
			continue;
		}
		{
			char norm[CATALOG_MATCH_NAME_MAX + 9];
			bool used_next;

			word_norm(words[i], i + 1 < n ? words[i + 1] : NULL, norm, sizeof(norm),
				  &used_next);
			if (used_next)
				i++;
			if (!add_core(buf, len, norm)) {
				buf[0] = '\0';
				return false;
			}
		}
	}
	if (info->quant == CATALOG_QUANT_INT4 && !quant_bits)
		info->quant_bits_assumed = true;   /* -GPTQ alone: 4-bit, said */
	/* A qualifier alone ("-dynamic") is no quantization: the name is
	 * not one the table reads. */
	if (info->quant_text[0] && info->quant == CATALOG_QUANT_NONE) {
		buf[0] = '\0';
		return false;
	}
	if (out)
		*out = *info;
	return buf[0] != '\0';
}

/* Does some name or alias of m read key? */
static bool model_reads(const struct adv_model *m, const char *key)
{
	char k[CATALOG_MATCH_NAME_MAX * 2];

	if (modelname_key(m->name, k, sizeof(k), NULL) && !strcmp(k, key))
		return true;
	for (size_t a = 0; a < m->n_aliases; a++)
		if (m->aliases[a] && modelname_key(m->aliases[a], k, sizeof(k), NULL) &&
		    !strcmp(k, key))
			return true;
	return false;
}

bool modelname_match(const catalog_t *cat, const char *name, struct catalog_match *out)
{
	char key[CATALOG_MATCH_NAME_MAX * 2];
	struct catalog_match info;
	const struct adv_model *found = NULL, *m;
	size_t n;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!cat || !name || !*name)
		return false;
	if ((m = catalog_find_model(cat, name)) != NULL) {
		if (out) {
			out->model = m;
			out->exact = true;
		}
		return true;
	}
	if (!modelname_key(name, key, sizeof(key), &info))
		return false;
	n = catalog_model_count(cat);
	for (size_t i = 0; i < n; i++) {
		m = catalog_model_at(cat, i);
		if (!m || !model_reads(m, key))
			continue;
		if (found && found != m)
			return false;   /* two models fit: unsure */
		found = m;
	}
	if (!found)
		return false;
	if (out) {
		*out = info;
		out->model = found;
	}
	return true;
}
