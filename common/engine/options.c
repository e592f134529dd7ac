/*
 * options.c - parsing of the --llm-* option values (design.md, "User
 * options").  The SPANK plugin, advisorctl and the daemon all go through
 * these functions so that every front end accepts and refuses exactly the
 * same strings, with a message that names the option and what it accepts.
 *
 * These parse option VALUES (after getopt_long / SPANK has split the
 * command line): a comma list of parallel sizes, durations and enums.
 * The options themselves (names, argument forms, help texts) are the rows
 * of optlist.h; options_table is what of them the parsers need.
 */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/policy.h"
#include "options.h"
#include "util.h"

/* Sizes above this are typing errors, not clusters. */
#define OPT_MAX_PARALLEL (1L << 20)
/* A year: longer checkpoint intervals are typing errors. */
#define OPT_MAX_DURATION_S (366.0 * 86400.0)
#define OPT_TOKEN_MAX 32

/* Each indexed by its enum; positional, so that the asserts below count
 * the names (a designated row left out would only be a NULL). */
const char *const options_precision_names[] = { "bf16", "fp16", "fp8", "fp32", NULL };
const char *const options_recompute_names[] = { "none", "selective", "full", NULL };
const char *const options_task_names[] = { "train", "finetune", "lora", "infer", NULL };
const char *const options_framework_names[] = { "generic", "megatron", "deepspeed", "fsdp", NULL };
const char *const options_mode_names[] = { "off", "warn", "enforce", NULL };
const char *const options_attention_names[] = { "flash", "eager", NULL };
const char *const options_weights_names[] = { "16bit", "fp8", "int8", "int4", "mxfp4", NULL };
#define OPTIONS_NAMES_OF(table, count) \
	_Static_assert(ADV_ARRAY_SIZE(table) == (count) + 1, \
		       #table ": a name for each value of its enum, then NULL")
OPTIONS_NAMES_OF(options_precision_names, ADV_PREC_COUNT);
OPTIONS_NAMES_OF(options_recompute_names, ADV_RECOMPUTE_COUNT);
OPTIONS_NAMES_OF(options_task_names, ADV_TASK_COUNT);
OPTIONS_NAMES_OF(options_framework_names, ADV_FW_COUNT);
OPTIONS_NAMES_OF(options_mode_names, ADV_MODE_COUNT);
OPTIONS_NAMES_OF(options_attention_names, ADV_ATTN_COUNT);
OPTIONS_NAMES_OF(options_weights_names, ADV_WEIGHTS_COUNT);
#undef OPTIONS_NAMES_OF
static const char *const zero_names[] = { "0", "1", "2", "3", NULL };

static const char layout_forms[] =
	"accepted form: a comma list of tpN, ppN, cpN, epN, etpN, vppN, dpN "
	"(N >= 1, each at most once) and sp or nosp, e.g. --llm-layout=tp8,pp4,sp";

/* "--llm-zero: 'x' is not valid; accepted values: 0, 1, 2, 3" */
static int fail(char *err, size_t errlen, const char *opt, const char *val,
		const char *why, const char *accepted)
{
	if (err && errlen)
		adv_snprintf(err, errlen, "%s: '%s' is not valid%s; %s", opt, val, why, accepted);
	return -1;
}

/* The field of a layout named by a token prefix ("etp" before "ep"). */
static int *layout_field(struct adv_layout *lay, const char *tok, size_t *plen)
{
	static const struct {
		const char *prefix;
		size_t off;
	} fields[] = {
		{ "etp", offsetof(struct adv_layout, etp) },
		{ "vpp", offsetof(struct adv_layout, vpp) },
		{ "tp", offsetof(struct adv_layout, tp) },
		{ "pp", offsetof(struct adv_layout, pp) },
		{ "cp", offsetof(struct adv_layout, cp) },
		{ "ep", offsetof(struct adv_layout, ep) },
		{ "dp", offsetof(struct adv_layout, dp) },
	};
	size_t i;

	for (i = 0; i < ADV_ARRAY_SIZE(fields); i++) {
		size_t n = strlen(fields[i].prefix);
		if (strncasecmp(tok, fields[i].prefix, n) == 0 &&
		    isdigit((unsigned char)tok[n])) {
			*plen = n;
			return (int *)((char *)lay + fields[i].off);
		}
	}
	return NULL;
}

static int layout_token(const char *tok, struct adv_layout *lay, char *err, size_t errlen)
{
	size_t plen;
	long v;
	int *field;

	if (adv_streq_nocase(tok, "sp") || adv_streq_nocase(tok, "nosp")) {
		if (lay->sp != ADV_UNSET)
			return fail(err, errlen, "--llm-layout", tok, ": given twice",
				    layout_forms);
		lay->sp = adv_streq_nocase(tok, "sp") ? 1 : 0;
		return 0;
	}
	field = layout_field(lay, tok, &plen);
	if (!field || adv_parse_long(tok + plen, &v) != 0 || v < 0 || v > OPT_MAX_PARALLEL)
		return fail(err, errlen, "--llm-layout", tok, "",
			    layout_forms);
	if (v == 0)
		return fail(err, errlen, "--llm-layout", tok, ": sizes start at 1",
			    layout_forms);
	if (*field != ADV_UNSET)
		return fail(err, errlen, "--llm-layout", tok, ": this size is already given",
			    layout_forms);
	*field = (int)v;
	return 0;
}

int options_parse_layout(const char *s, struct adv_layout *lay, char *err, size_t errlen)
{
	struct adv_layout tmp = *lay;
	const char *p = s;

	if (!s || !*s)
		return fail(err, errlen, "--llm-layout", "", ": empty", layout_forms);
	/* Duplicates are judged within this string, so start from unset. */
	tmp.tp = tmp.pp = tmp.cp = tmp.ep = tmp.etp = tmp.vpp = tmp.dp = ADV_UNSET;
	tmp.sp = ADV_UNSET;
	for (;;) {
		char tok[OPT_TOKEN_MAX];
		size_t n = strcspn(p, ",");

		if (n == 0 || n >= sizeof(tok)) {
			adv_strlcpy(tok, p, sizeof(tok));
			return fail(err, errlen, "--llm-layout",
				    n == 0 ? s : tok, "", layout_forms);
		}
		memcpy(tok, p, n);
		tok[n] = '\0';
		if (layout_token(tok, &tmp, err, errlen) != 0)
			return -1;
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	*lay = tmp;
	return 0;
}

static const char duration_forms[] =
	"accepted values: a positive duration such as 90s, 30m, 2h, 1h30m, 1d or plain seconds";

int options_parse_duration(const char *s, double *seconds, char *err, size_t errlen)
{
	static const struct {
		char unit;
		double scale;
	} units[] = { { 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };
	const char *p = s;
	size_t next = 0;
	double total = 0;
	long bare;

	if (s && adv_parse_long(s, &bare) == 0) {
		if (bare <= 0 || bare > OPT_MAX_DURATION_S)
			return fail(err, errlen, "duration", s, "",
				    duration_forms);
		*seconds = (double)bare;
		return 0;
	}
	if (!s || !*s)
		return fail(err, errlen, "duration", "", "",
			    duration_forms);
	while (*p) {
		char num[16];
		size_t n = 0;
		long v;

		while (isdigit((unsigned char)p[n]) && n < sizeof(num) - 1)
			n++;
		if (n == 0 || n >= sizeof(num) - 1)
			return fail(err, errlen, "duration", s, "",
				    duration_forms);
		memcpy(num, p, n);
		num[n] = '\0';
		if (adv_parse_long(num, &v) != 0)
			return fail(err, errlen, "duration", s, "",
				    duration_forms);
		/* Units must come in decreasing order, each at most once. */
		while (next < ADV_ARRAY_SIZE(units) &&
		       units[next].unit != tolower((unsigned char)p[n]))
			next++;
		if (next == ADV_ARRAY_SIZE(units))
			return fail(err, errlen, "duration", s, "",
				    duration_forms);
		total += (double)v * units[next].scale;
		next++;
		p += n + 1;
	}
	if (total <= 0 || total > OPT_MAX_DURATION_S)
		return fail(err, errlen, "duration", s, "",
			    duration_forms);
	*seconds = total;
	return 0;
}

static const char ckpt_forms[] =
	"accepted values: DURATION[,async] (90s, 30m, 2h, 1h30m, 1d) or off";

int options_parse_ckpt(const char *s, struct adv_ckpt_req *ck, char *err, size_t errlen)
{
	char buf[64];
	char *comma;
	struct adv_ckpt_req out = { .given = true };

	if (!s || !*s || strlen(s) >= sizeof(buf))
		return fail(err, errlen, "--llm-ckpt",
			    s ? s : "", "", ckpt_forms);
	if (adv_streq_nocase(s, "off")) {
		out.off = true;
		*ck = out;
		return 0;
	}
	adv_strlcpy(buf, s, sizeof(buf));
	comma = strchr(buf, ',');
	if (comma) {
		*comma = '\0';
		if (adv_streq_nocase(comma + 1, "async"))
			out.async = true;
		else if (!adv_streq_nocase(comma + 1, "sync"))
			return fail(err, errlen, "--llm-ckpt", s, "",
				    ckpt_forms);
	}
	if (options_parse_duration(buf, &out.interval_s, NULL, 0) != 0)
		return fail(err, errlen, "--llm-ckpt", s, "",
			    ckpt_forms);
	*ck = out;
	return 0;
}

int options_parse_int(const char *name, const char *s, long min, long max, int *out,
		      char *err, size_t errlen)
{
	long v;

	if (!s || adv_parse_long(s, &v) != 0 || v < min || v > max) {
		if (err && errlen)
			adv_snprintf(err, errlen,
				     "%s: '%s' is not valid; accepted values: an integer from %ld to %ld",
				     name, s ? s : "", min, max);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int options_parse_enum(const char *name, const char *s, const char *const *names,
		       int *out, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; s && names[i]; i++) {
		if (adv_streq_nocase(s, names[i])) {
			*out = (int)i;
			return 0;
		}
	}
	if (!err || !errlen)
		return -1;
	adv_snprintf(err, errlen, "%s: '%s' is not valid; accepted values: ", name, s ? s : "");
	for (i = 0; names[i]; i++) {
		if (i)
			adv_strlcat(err, ", ", errlen);
		adv_strlcat(err, names[i], errlen);
	}
	return -1;
}

/*
 * --llm-grad-dtype: the precision names without fp8 (no framework keeps
 * fp8 gradients), stored as enum adv_precision.
 */
static int parse_grad_dtype(const char *opt, const char *s, int *out, char *err, size_t errlen)
{
	int v;

	if (options_parse_enum(opt, s, options_precision_names, &v, NULL, 0) == 0 &&
	    v != ADV_PREC_FP8) {
		*out = v;
		return 0;
	}
	return fail(err, errlen, opt, s ? s : "", "", "accepted values: fp32, bf16, fp16");
}

/* --llm-mem-share: a fraction in (0, 1], kept per mille. */
static int parse_share(const char *opt, const char *s, int *out, char *err, size_t errlen)
{
	char *end;
	double v;

	v = s ? strtod(s, &end) : 0;
	if (!s || end == s || *end || !(v > 0 && v <= 1))
		return fail(err, errlen, opt, s ? s : "", "",
			    "accepted values: a fraction of GPU memory, 0 < F <= 1 (e.g. 0.9)");
	*out = (int)lround(v * 1000);
	if (*out < 1)
		*out = 1;
	return 0;
}

/* "15T", "300B", "2e12": a token count for the estimates. */
static int parse_tokens(const char *s, double *out, char *err, size_t errlen)
{
	static const struct {
		char suffix;
		double scale;
	} sfx[] = { { 'K', 1e3 }, { 'M', 1e6 }, { 'B', 1e9 }, { 'G', 1e9 }, { 'T', 1e12 } };
	char buf[48];
	size_t n, i;
	double scale = 1, v;

	if (!s || !*s || strlen(s) >= sizeof(buf))
		goto bad;
	adv_strlcpy(buf, s, sizeof(buf));
	n = strlen(buf);
	for (i = 0; i < ADV_ARRAY_SIZE(sfx); i++) {
		if (n > 1 && toupper((unsigned char)buf[n - 1]) == sfx[i].suffix) {
			scale = sfx[i].scale;
			buf[n - 1] = '\0';
			break;
		}
	}
	if (adv_parse_double(buf, &v) != 0 || v <= 0 || !isfinite(v * scale))
		goto bad;
	*out = v * scale;
	return 0;
bad:
	return fail(err, errlen, "--tokens", s ? s : "", "",
		    "accepted values: a positive token count such as 15T, 300B, 2e12");
}

static int apply_model(struct adv_workload *wl, const char *value, char *err, size_t errlen)
{
	if (!value || !*value || strlen(value) >= sizeof(wl->model))
		return fail(err, errlen, "--llm-model",
			    value ? value : "", "",
			    "accepted values: a catalog model name or alias (advisorctl catalog models)");
	adv_strlcpy(wl->model, value, sizeof(wl->model));
	return 0;
}

#define OPTIONS_DEF_ROW(id, name, arg, sbatch, plugin_help, ctl_help) \
	[OPTIONS_##id] = { name, arg, sbatch },
const struct options_def options_table[OPTIONS_COUNT] = {
	OPTIONS_LIST(OPTIONS_DEF_ROW)
};
#undef OPTIONS_DEF_ROW
/* One row per option by construction (OPTIONS_LIST makes the enum too). */
_Static_assert(ADV_ARRAY_SIZE(options_table) == OPTIONS_COUNT, "a row for each option");

int options_find(const char *name)
{
	for (int id = 0; id < OPTIONS_COUNT; id++)
		if (name && !strcmp(name, options_table[id].name))
			return id;
	return -1;
}

/* A character of an option name: the end of "--llm-seq" in "--llm-seq," is the comma. */
static bool is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_';
}

void options_ctl_spelling(const char *text, char *out, size_t len)
{
	static const char prefix[] = "--llm-";
	size_t n = 0;

	if (!len)
		return;
	while (*text && n + 1 < len) {
		size_t name_len = 0;
		int id = -1;

		if (!strncmp(text, prefix, sizeof(prefix) - 1)) {
			const char *name = text + sizeof(prefix) - 1;

			while (is_name_char(name[name_len]))
				name_len++;
			for (int i = 0; i < OPTIONS_COUNT; i++)
				if (strlen(options_table[i].name) == name_len &&
				    !strncmp(options_table[i].name, name, name_len))
					id = i;
		}
		if (id < 0) {
			out[n++] = *text++;
			continue;
		}
		/* "--NAME", then " VALUE" for "=VALUE": advisorctl's getopt form. */
		n += adv_snprintf(out + n, len - n, "--%s", options_table[id].name);
		text += sizeof(prefix) - 1 + name_len;
		if (*text == '=' && n + 1 < len) {
			out[n++] = ' ';
			text++;
		}
	}
	out[n < len ? n : len - 1] = '\0';
}

int options_apply_id(struct adv_workload *wl, enum options_id id, const char *value,
		     char *err, size_t errlen)
{
	char opt[32];

	if ((unsigned)id >= OPTIONS_COUNT)
		return fail(err, errlen, "option", value ? value : "", "", "no such option");
	/* "--llm-zero": the name in messages, as sbatch spells it. */
	adv_snprintf(opt, sizeof(opt), "--llm-%s", options_table[id].name);
	switch (id) {
	case OPTIONS_MODEL:
		return apply_model(wl, value, err, errlen);
	case OPTIONS_LAYOUT:
		return options_parse_layout(value, &wl->layout, err, errlen);
	case OPTIONS_ZERO:
		return options_parse_enum(opt, value, zero_names, &wl->zero, err, errlen);
	case OPTIONS_PRECISION:
		return options_parse_enum(opt, value, options_precision_names, &wl->precision,
					  err, errlen);
	case OPTIONS_SEQ:
		return options_parse_int(opt, value, 1, 1L << 24, &wl->seq, err, errlen);
	case OPTIONS_MBS:
		return options_parse_int(opt, value, 1, 1L << 16, &wl->mbs, err, errlen);
	case OPTIONS_GBS:
		return options_parse_int(opt, value, 1, 1L << 26, &wl->gbs, err, errlen);
	case OPTIONS_RECOMPUTE:
		return options_parse_enum(opt, value, options_recompute_names, &wl->recompute,
					  err, errlen);
	case OPTIONS_ATTENTION:
		return options_parse_enum(opt, value, options_attention_names, &wl->attention,
					  err, errlen);
	case OPTIONS_GRAD_DTYPE:
		return parse_grad_dtype(opt, value, &wl->grad_dtype, err, errlen);
	case OPTIONS_MEM_SHARE:
		return parse_share(opt, value, &wl->mem_share, err, errlen);
	case OPTIONS_KV_DTYPE:
		return options_parse_enum(opt, value, options_precision_names, &wl->kv_dtype, err,
					  errlen);
	case OPTIONS_WEIGHTS:
		return options_parse_enum(opt, value, options_weights_names, &wl->weights, err,
					  errlen);
	case OPTIONS_TASK:
		return options_parse_enum(opt, value, options_task_names, &wl->task, err, errlen);
	case OPTIONS_FRAMEWORK:
		return options_parse_enum(opt, value, options_framework_names, &wl->framework,
					  err, errlen);
	case OPTIONS_CKPT:
		return options_parse_ckpt(value, &wl->ckpt, err, errlen);
	case OPTIONS_ADVISOR:
		return options_parse_enum(opt, value, options_mode_names, &wl->mode, err, errlen);
	case OPTIONS_TOKENS:
		return parse_tokens(value, &wl->tokens, err, errlen);
	case OPTIONS_COUNT:
		break;
	}
	return -1;
}

int options_apply(struct adv_workload *wl, const char *name, const char *value,
		  char *err, size_t errlen)
{
	int id;

	if (name && strncasecmp(name, "llm-", 4) == 0)
		name += 4;
	if (!name)
		name = "";
	id = options_find(name);
	if (id >= 0)
		return options_apply_id(wl, (enum options_id)id, value, err, errlen);
	if (err && errlen) {
		adv_snprintf(err, errlen, "--llm-%s: unknown option; accepted options: ", name);
		for (id = 0; id < OPTIONS_COUNT; id++) {
			if (id)
				adv_strlcat(err, ", ", errlen);
			adv_strlcat(err, options_table[id].name, errlen);
		}
	}
	return -1;
}

bool options_is_set(const struct adv_workload *wl, enum options_id id)
{
	const struct adv_layout *l = &wl->layout;

	switch (id) {
	case OPTIONS_MODEL:
		return wl->model[0] != '\0';
	case OPTIONS_LAYOUT:
		return l->tp != ADV_UNSET || l->pp != ADV_UNSET || l->cp != ADV_UNSET ||
		       l->ep != ADV_UNSET || l->etp != ADV_UNSET || l->vpp != ADV_UNSET ||
		       l->dp != ADV_UNSET || l->sp != ADV_UNSET;
	case OPTIONS_ZERO:
		return wl->zero != ADV_UNSET;
	case OPTIONS_PRECISION:
		return wl->precision != ADV_UNSET;
	case OPTIONS_SEQ:
		return wl->seq != ADV_UNSET;
	case OPTIONS_MBS:
		return wl->mbs != ADV_UNSET;
	case OPTIONS_GBS:
		return wl->gbs != ADV_UNSET;
	case OPTIONS_RECOMPUTE:
		return wl->recompute != ADV_UNSET;
	case OPTIONS_ATTENTION:
		return wl->attention != ADV_UNSET;
	case OPTIONS_GRAD_DTYPE:
		return wl->grad_dtype != ADV_UNSET;
	case OPTIONS_MEM_SHARE:
		return wl->mem_share != ADV_UNSET;
	case OPTIONS_KV_DTYPE:
		return wl->kv_dtype != ADV_UNSET;
	case OPTIONS_WEIGHTS:
		return wl->weights != ADV_UNSET;
	case OPTIONS_TASK:
		return wl->task != ADV_UNSET;
	case OPTIONS_FRAMEWORK:
		return wl->framework != ADV_UNSET;
	case OPTIONS_CKPT:
		return wl->ckpt.given;
	case OPTIONS_ADVISOR:
		return wl->mode != ADV_UNSET;
	case OPTIONS_TOKENS:
		return wl->tokens > 0;
	case OPTIONS_COUNT:
		break;
	}
	return false;
}

void options_format_duration(double seconds, char *buf, size_t len)
{
	long s = lround(seconds);
	long d = s / 86400, h = (s % 86400) / 3600, m = (s % 3600) / 60, sec = s % 60;
	size_t n = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (s <= 0) {
		adv_strlcpy(buf, "0s", len);
		return;
	}
	if (d)
		n += adv_snprintf(buf + n, len - n, "%ldd", d);
	if (h)
		n += adv_snprintf(buf + n, len - n, "%ldh", h);
	if (m)
		n += adv_snprintf(buf + n, len - n, "%ldm", m);
	if (sec)
		adv_snprintf(buf + n, len - n, "%lds", sec);
}

static void merge_int(int *dst, int src)
{
	if (*dst == ADV_UNSET)
		*dst = src;
}

void options_merge(struct adv_workload *dst, const struct adv_workload *src)
{
	struct adv_layout *d = &dst->layout;
	const struct adv_layout *s = &src->layout;

	if (!dst->model[0])
		adv_strlcpy(dst->model, src->model, sizeof(dst->model));
	merge_int(&d->tp, s->tp);
	merge_int(&d->pp, s->pp);
	merge_int(&d->cp, s->cp);
	merge_int(&d->ep, s->ep);
	merge_int(&d->etp, s->etp);
	merge_int(&d->vpp, s->vpp);
	merge_int(&d->dp, s->dp);
	merge_int(&d->sp, s->sp);
	merge_int(&dst->zero, src->zero);
	merge_int(&dst->precision, src->precision);
	merge_int(&dst->seq, src->seq);
	merge_int(&dst->mbs, src->mbs);
	merge_int(&dst->gbs, src->gbs);
	merge_int(&dst->recompute, src->recompute);
	merge_int(&dst->task, src->task);
	merge_int(&dst->framework, src->framework);
	merge_int(&dst->mode, src->mode);
	merge_int(&dst->attention, src->attention);
	merge_int(&dst->prefill_chunk, src->prefill_chunk);
	merge_int(&dst->grad_dtype, src->grad_dtype);
	merge_int(&dst->mem_share, src->mem_share);
	merge_int(&dst->kv_dtype, src->kv_dtype);
	merge_int(&dst->weights, src->weights);
	/* SGLang's static share is the engine's, whoever states the share. */
	dst->share_static = dst->share_static || src->share_static;
	merge_int(&dst->optim_bytes, src->optim_bytes);
	dst->fp8_params = dst->fp8_params || src->fp8_params;
	if (!dst->ckpt.given)
		dst->ckpt = src->ckpt;
	if (dst->tokens <= 0)
		dst->tokens = src->tokens;
}
