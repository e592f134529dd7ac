/*
 * names.c - the names of the engine's enums as users write them (the
 * --llm-* option values, check --json, the ADVISOR_* job variables).
 */
#include "config.h"

#include <stddef.h>

#include "names.h"
#include "options.h"
#include "util.h"

/* names[i] when i is one of the enum's n values: every index of these
 * tables is bounded by the enum's count, never by the table (issue 27). */
static const char *name_at(const char *const *names, size_t n, int i)
{
	return i >= 0 && (size_t)i < n ? names[i] : "unknown";
}

const char *engine_verdict_name(enum adv_verdict v)
{
	static const char *const n[] = { "accept", "warn", "reject" };
	_Static_assert(ADV_ARRAY_SIZE(n) == ADV_VERDICT_COUNT, "a name for each verdict");
	return name_at(n, ADV_ARRAY_SIZE(n), (int)v);
}

const char *engine_severity_name(enum adv_severity s)
{
	static const char *const n[] = { "info", "warn", "reject" };
	_Static_assert(ADV_ARRAY_SIZE(n) == ADV_SEV_COUNT, "a name for each severity");
	return name_at(n, ADV_ARRAY_SIZE(n), (int)s);
}

const char *engine_precision_name(int p)
{
	return name_at(options_precision_names, ADV_PREC_COUNT, p);
}

const char *engine_recompute_name(int r)
{
	return name_at(options_recompute_names, ADV_RECOMPUTE_COUNT, r);
}

const char *engine_task_name(int t)
{
	return name_at(options_task_names, ADV_TASK_COUNT, t);
}

const char *engine_framework_name(int f)
{
	return name_at(options_framework_names, ADV_FW_COUNT, f);
}

const char *engine_attention_name(int a)
{
	return name_at(options_attention_names, ADV_ATTN_COUNT, a);
}

const char *engine_context_name(enum adv_context c)
{
	static const char *const n[] = { "advisorctl", "sbatch", "salloc", "srun", "step",
						  "job_submit" };
	_Static_assert(ADV_ARRAY_SIZE(n) == ADV_CTX_COUNT, "a name for each context");
	return name_at(n, ADV_ARRAY_SIZE(n), (int)c);
}

void engine_layout_string(const struct adv_layout_out *l, char *buf, size_t len)
{
	engine_layout_string_from(l, NULL, buf, len);
}

/* One size, or "?" when only the engine assumed it (issue 28: a value the
 * job does not state is never shown as the job's). */
static void size_or_unknown(char *buf, size_t len, const char *name, int v,
			    const unsigned char *from, enum adv_field f)
{
	if (from && from[f] == ADV_FROM_ASSUMED)
		adv_snprintf(buf, len, "%s?", name);
	else
		adv_snprintf(buf, len, "%s%d", name, v);
}

void engine_layout_string_from(const struct adv_layout_out *l, const unsigned char *from,
			       char *buf, size_t len)
{
	char s[5][24];

	size_or_unknown(s[0], sizeof(s[0]), "tp", l->tp, from, ADV_F_TP);
	size_or_unknown(s[1], sizeof(s[1]), "pp", l->pp, from, ADV_F_PP);
	size_or_unknown(s[2], sizeof(s[2]), "cp", l->cp, from, ADV_F_CP);
	size_or_unknown(s[3], sizeof(s[3]), "ep", l->ep, from, ADV_F_EP);
	size_or_unknown(s[4], sizeof(s[4]), "dp", l->dp, from, ADV_F_DP);
	adv_snprintf(buf, len, "%s.%s.%s.%s.%s", s[0], s[1], s[2], s[3], s[4]);
}
