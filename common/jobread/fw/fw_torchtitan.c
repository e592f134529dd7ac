/*
 * fw_torchtitan.c - torchtitan training jobs (`-m torchtitan.train`,
 * torchtitan/train.py, run_train.sh).
 *
 * Up to v0.2.2 the configuration is a TOML file named by
 * --job.config_file (or --job.config-file), then `--section.key VALUE` or
 * `--section.key=VALUE` overrides parsed by tyro, which win over the file
 * (torchtitan/config/manager.py, ConfigManager.parse_args: "CLI args >
 * TOML file > JobConfig defaults"); tyro accepts '-' for '_' in names and
 * writes booleans as `--section.flag` / `--section.no-flag`.  The fields
 * and defaults are those of torchtitan/config/job_config.py:
 * [model] name, flavor (-> a catalog model: "llama3" + "405B" is
 * llama3-405b), converters ("float8": fp8 training);
 * [parallelism] data_parallel_replicate_degree (1),
 * data_parallel_shard_degree (-1: whatever is left of the world after the
 * other degrees; > 1 means FSDP, ZeRO 3), tensor_parallel_degree,
 * pipeline_parallel_degree, context_parallel_degree,
 * expert_parallel_degree, expert_tensor_parallel_degree,
 * pipeline_parallel_microbatch_size (1: under PP the local batch is split
 * into micro-batches of this size, pipeline_parallel.py);
 * [training] local_batch_size (older: batch_size), global_batch_size,
 * seq_len, mixed_precision_param (bfloat16); [checkpoint] enable (older:
 * enable_checkpoint; default false: no checkpoint), interval (500),
 * interval_type (older: "steps" or "seconds"); [activation_checkpoint]
 * mode (selective by default).  Older releases kept the degrees under
 * [training] and [experimental]; they are read too.
 *
 * Since February 2026 ConfigManager takes `--module NAME --config NAME`:
 * a Python function of the module's config_registry builds the config
 * (e.g. llama3.config_registry.llama3_405b) and the same `--section.key`
 * overrides apply.  The function's name resolves through the catalog
 * ("llama3_405b" -> llama3-405b); what the Python sets is not known and
 * is reported so, except where the command line overrides it.  No Python
 * is run.
 *
 * run_train.sh (the repository's launcher script) passes
 * `--job.config_file $CONFIG_FILE "$@"` to torchrun with NGPU processes;
 * its CONFIG_FILE and NGPU come from the environment.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobread/ctx.h"
#include "jobread/reader.h"
#include "util.h"

/* Override words looked at, at most (a hostile command is cut there). */
#define TT_MAX_ARGS 1024
/* A parallel degree above this is not a real job (and would overflow). */
#define TT_MAX_DEGREE (1 << 15)

struct titan {
	struct jr_ctx *cx;
	const struct jr_cmd *p;
	const struct cfg_node *root;   /* the TOML, or NULL */
	const char *display;
	bool registry;                 /* --module/--config form */
	bool failed;                   /* the TOML was named but could not be read */
};

/* One setting: from the command line (wins) or the TOML. */
struct tv {
	bool found;
	bool unknown;
	bool bare;                     /* a bare --flag (true) or --no-flag (false) */
	char text[256];
	struct jobread_src src;
};

/* The last "--section.key[=]value" (or "--section.no-key") on the command. */
static bool from_args(const struct titan *t, const char *section, const char *key, struct tv *out)
{
	const struct jr_cmd *p = t->p;
	char full[128], neg[128];
	int found = -1;
	bool eq = false, no = false;
	int limit = p->argc < TT_MAX_ARGS ? p->argc : TT_MAX_ARGS;

	adv_snprintf(full, sizeof(full), "%s.%s", section, key);
	adv_snprintf(neg, sizeof(neg), "%s.no_%s", section, key);
	for (int i = 1; i < limit; i++) {
		const char *w = p->argv[i], *e;
		size_t n;

		if (!w || strncmp(w, "--", 2))
			continue;
		w += 2;
		e = strchr(w, '=');
		n = e ? (size_t)(e - w) : strlen(w);
		if (jr_same_key(w, n, full)) {
			found = i;
			eq = e != NULL;
			no = false;
		} else if (jr_same_key(w, n, neg) && !e) {
			found = i;
			eq = false;
			no = true;
		}
	}
	if (found < 0)
		return false;
	memset(out, 0, sizeof(*out));
	out->found = true;
	{
		const char *w = p->argv[found];
		const char *e = strchr(w, '=');
		char written[96];

		adv_snprintf(written, sizeof(written), "%.*s", (int)(e ? (size_t)(e - w) : strlen(w)), w);
		jr_src_arg(&out->src, p, written, eq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
		if (no) {
			out->bare = true;
			adv_strlcpy(out->text, "false", sizeof(out->text));
			out->src.style = JR_STYLE_BOOL;
			return true;
		}
		if (eq) {
			out->unknown = p->unknown && p->unknown[found];
			adv_strlcpy(out->text, e + 1, sizeof(out->text));
		} else if (found + 1 < p->argc && p->argv[found + 1] &&
			   (strncmp(p->argv[found + 1], "--", 2) || !p->argv[found + 1][2])) {
			out->unknown = p->unknown && p->unknown[found + 1];
			adv_strlcpy(out->text, p->argv[found + 1], sizeof(out->text));
		} else {
			out->bare = true;
			adv_strlcpy(out->text, "true", sizeof(out->text));
			out->src.style = JR_STYLE_BOOL;
		}
	}
	if (out->unknown)
		adv_strlcpy(out->text, "a value computed at run time", sizeof(out->text));
	return true;
}

static bool from_toml(const struct titan *t, const char *section, const char *key, struct tv *out)
{
	char path[128];
	const struct cfg_node *n;

	if (!t->root)
		return false;
	adv_snprintf(path, sizeof(path), "%s.%s", section, key);
	n = cfg_path(t->root, path);
	if (!n || n->type == CFG_NULL || !cfg_str(n))
		return false;
	memset(out, 0, sizeof(*out));
	out->found = true;
	adv_strlcpy(out->text, cfg_str(n), sizeof(out->text));
	jr_src_node(&out->src, t->display, n, path, JR_STYLE_TOML);
	return true;
}

static bool get(const struct titan *t, const char *section, const char *key, struct tv *out)
{
	return from_args(t, section, key, out) || from_toml(t, section, key, out);
}

/* The first spelling present, newest first (fields moved between sections). */
static bool get_any(const struct titan *t, const char *const pairs[], struct tv *out)
{
	/* The command line wins over the file whatever the spelling. */
	for (size_t k = 0; pairs[k]; k += 2)
		if (from_args(t, pairs[k], pairs[k + 1], out))
			return true;
	for (size_t k = 0; pairs[k]; k += 2)
		if (from_toml(t, pairs[k], pairs[k + 1], out))
			return true;
	return false;
}

#define PAIRS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* An integer setting: its value (or false when absent, unknown or bad). */
static bool int_of(struct titan *t, const struct tv *v, enum jobread_field f, long long *out,
		   bool set)
{
	long long n;

	if (v->unknown) {
		if (set)
			jr_set_unknown(t->cx, f, &v->src, v->text);
		return false;
	}
	if (!jr_parse_ll(v->text, &n)) {
		jr_note(t->cx, ADV_CODE_SCRIPT_UNKNOWN, NULL, "%s:%d: %s '%s' is not a whole number; ignored",
			v->src.file, v->src.line, v->src.key, v->text);
		return false;
	}
	if (set)
		jr_set_int(t->cx, f, n, &v->src);
	*out = n;
	return true;
}

static bool set_int(struct titan *t, enum jobread_field f, const char *const pairs[], long long *out)
{
	struct tv v;
	long long n;

	if (!get_any(t, pairs, &v))
		return false;
	if (!int_of(t, &v, f, &n, true))
		return false;
	if (out)
		*out = n;
	return true;
}

/* ---- the model --------------------------------------------------------------------- */

/* "llama3" + "405B", or "llama3_405b": the catalog's spelling is
 * lower-case with hyphens ("llama3-405b", "deepseek-v3-671b"). */
static const struct adv_model *catalog_name(const catalog_t *cat, const char *name)
{
	char v[160];
	size_t o = 0;
	const struct adv_model *m;

	if (!cat || !name || !*name || strlen(name) >= sizeof(v))
		return NULL;
	if ((m = catalog_find_model(cat, name)) != NULL)
		return m;
	for (const char *s = name; *s; s++)
		v[o++] = *s == '_' ? '-' : (char)tolower((unsigned char)*s);
	v[o] = '\0';
	return catalog_find_model(cat, v);
}

static void model_toml(struct titan *t)
{
	const catalog_t *cat = jr_catalog(t->cx);
	const struct adv_model *m = NULL;
	struct tv name, flavor;
	char both[300];
	bool hn = get(t, "model", "name", &name), hf = get(t, "model", "flavor", &flavor);

	/* JobConfig's defaults: llama3, debugmodel (a registry config
	 * chooses its own: both must be overridden then). */
	if ((!hn && !hf) || (t->registry && !(hn && hf)))
		return;
	if (!hn) {
		memset(&name, 0, sizeof(name));
		adv_strlcpy(name.text, "llama3", sizeof(name.text));
	}
	if (!hf) {
		memset(&flavor, 0, sizeof(flavor));
		adv_strlcpy(flavor.text, "debugmodel", sizeof(flavor.text));
		flavor.src = name.src;
	}
	if (name.unknown || flavor.unknown) {
		jr_set_unknown(t->cx, JR_MODEL, flavor.unknown ? &flavor.src : &name.src,
			       "a value computed at run time");
		return;
	}
	adv_snprintf(both, sizeof(both), "%s-%s", name.text, flavor.text);
	m = catalog_name(cat, both);
	if (!m) {
		adv_snprintf(both, sizeof(both), "%s_%s", name.text, flavor.text);
		m = catalog_name(cat, both);
	}
	/* The flavor is where the size is written: a fix edits it. */
	if (m)
		jr_set_str(t->cx, JR_MODEL, m->name, hf ? &flavor.src : &name.src);
	else {
		adv_snprintf(both, sizeof(both), "%s-%s", name.text, flavor.text);
		for (char *s = both; *s; s++)
			*s = (char)tolower((unsigned char)*s);
		jr_set_str(t->cx, JR_MODEL, both, hf ? &flavor.src : &name.src);
	}
}

/* A registry function's name: the model is its longest prefix the catalog
 * knows ("llama3_8b_float8" -> llama3-8b); at least two words. */
static void model_registry(struct titan *t, const char *module, const char *config,
			   const struct jobread_src *src)
{
	const catalog_t *cat = jr_catalog(t->cx);
	const struct adv_model *m = NULL;
	char buf[160], what[256];

	adv_strlcpy(buf, config, sizeof(buf));
	for (int k = 0; k < 8 && !m; k++) {
		char *u;

		m = catalog_name(cat, buf);
		if (m)
			break;
		u = strrchr(buf, '_');
		if (!u || !strchr(buf, '_') || u == strchr(buf, '_'))
			break;   /* keep "family_size" at least */
		*u = '\0';
	}
	if (!m && module && strcmp(module, config)) {
		/* "--module llama3 --config 405b_fp8"? */
		adv_snprintf(buf, sizeof(buf), "%s_%s", module, config);
		m = catalog_name(cat, buf);
	}
	if (m) {
		jr_set_str(t->cx, JR_MODEL, m->name, src);
		return;
	}
	adv_snprintf(what, sizeof(what), "the Python config %s of torchtitan module %s", config,
		     module ? module : "?");
	jr_set_unknown(t->cx, JR_MODEL, src, what);
}

/* ---- the rest ------------------------------------------------------------------------ */

static void layout(struct titan *t)
{
	long long rep = 1, shard = -1, tp = 1, pp = 1, cp = 1, n;
	bool have_shard = false, have_others = true;
	const struct jobread_value *w = jr_get(t->cx, JR_WORLD);
	struct tv sv;
	struct jobread_src ssrc;

	memset(&ssrc, 0, sizeof(ssrc));
	if (!set_int(t, JR_TP, PAIRS("parallelism", "tensor_parallel_degree",
				      "training", "tensor_parallel_degree"), &tp))
		have_others = have_others && !t->registry;
	if (!set_int(t, JR_PP, PAIRS("parallelism", "pipeline_parallel_degree",
				      "experimental", "pipeline_parallel_degree"), &pp))
		have_others = have_others && !t->registry;
	if (!set_int(t, JR_CP, PAIRS("parallelism", "context_parallel_degree",
				      "experimental", "context_parallel_degree"), &cp))
		have_others = have_others && !t->registry;
	set_int(t, JR_EP, PAIRS("parallelism", "expert_parallel_degree"), NULL);
	set_int(t, JR_ETP, PAIRS("parallelism", "expert_tensor_parallel_degree"), NULL);
	{
		struct tv rv;

		if (get_any(t, PAIRS("parallelism", "data_parallel_replicate_degree"), &rv)) {
			if (!int_of(t, &rv, JR_DP, &rep, false))
				have_others = false;
		} else if (t->registry) {
			have_others = false;
		}
	}
	if (get_any(t, PAIRS("parallelism", "data_parallel_shard_degree",
			     "training", "data_parallel_degree"), &sv)) {
		have_shard = int_of(t, &sv, JR_DP, &shard, false);
		ssrc = sv.src;
		if (!have_shard && sv.unknown) {
			jr_set_unknown(t->cx, JR_DP, &sv.src, sv.text);
			return;
		}
	} else if (t->failed) {
		return;   /* the TOML could not be read: its degrees are not known */
	} else {
		/* JobConfig's default: FSDP over the rest. */
		jr_src_arg(&ssrc, t->p, t->registry ? "--config" : NULL, JR_STYLE_FLAG);
		if (!t->registry)
			ssrc.key[0] = '\0';
	}
	/* Degrees past any real machine would overflow the products below. */
	if (tp <= 0 || pp <= 0 || cp <= 0 || rep <= 0 || tp > TT_MAX_DEGREE || pp > TT_MAX_DEGREE ||
	    cp > TT_MAX_DEGREE || rep > TT_MAX_DEGREE)
		return;
	if (shard == -1) {
		long long others = rep * tp * pp * cp;

		/* The rest of the world, once it and the other degrees are known. */
		if (have_others && w && w->set && !w->unknown && w->i > 0 && w->i % others == 0) {
			n = w->i / others;
			ssrc.key[0] = '\0';   /* derived: no value to rewrite */
			jr_set_int(t->cx, JR_DP, rep * n, &ssrc);
		}
		jr_set_int(t->cx, JR_ZERO, 3, &ssrc);
		jr_set_int(t->cx, JR_FRAMEWORK, ADV_FW_FSDP, &ssrc);
	} else if (shard >= 1) {
		if (rep <= INT_MAX / shard)
			jr_set_int(t->cx, JR_DP, rep * shard, &ssrc);
		if (shard > 1) {
			jr_set_int(t->cx, JR_ZERO, 3, &ssrc);
			jr_set_int(t->cx, JR_FRAMEWORK, ADV_FW_FSDP, &ssrc);
		} else {
			jr_set_int(t->cx, JR_ZERO, 0, &ssrc);
		}
	}
}

/*
 * Under pipeline parallelism the local batch is not one micro-batch:
 * torchtitan's pipeline (torchtitan/distributed/pipeline_parallel.py,
 * build_pipeline_schedule) splits it into n_microbatches = local_batch_size
 * / [parallelism] pipeline_parallel_microbatch_size (JobConfig default 1)
 * and the schedule keeps min(p - i, n) of those in flight.  So the
 * micro-batch is pipeline_parallel_microbatch_size and the local batch its
 * count per data-parallel rank (as accumulation: global = micro-batch x
 * count x data parallel, unless global_batch_size says it).
 * Releases that kept the degrees under [experimental] (up to early 2025,
 * e.g. 9dec370, the commit of benchmarks/llama3_h100_202412_torchtitan.md)
 * split it into a COUNT instead: [experimental]
 * pipeline_parallel_microbatches, default the pipeline degree
 * (torchtitan/parallelisms/pipelining_utils.py, build_pipeline_schedule:
 * "if n_microbatches is None: n_microbatches = pipeline_parallel_degree"),
 * so a local batch of 32 at PP 8 runs micro-batches of 4.
 */
static void pipeline_microbatches(struct titan *t)
{
	const struct jobread_value *pp = jr_get(t->cx, JR_PP), *lb = jr_get(t->cx, JR_MBS);
	struct jobread_src src;
	struct tv v;
	long long mb = 1, n = 0;
	bool older = false;

	if (!pp || !pp->set || pp->unknown || pp->i <= 1 || !lb || !lb->set || lb->unknown ||
	    lb->i <= 0)
		return;
	if (get(t, "parallelism", "pipeline_parallel_microbatch_size", &v)) {
		if (!int_of(t, &v, JR_MBS, &mb, false))
			return;
		src = v.src;
	} else if (get(t, "experimental", "pipeline_parallel_microbatches", &v)) {
		/* The older count, stated. */
		if (!int_of(t, &v, JR_MBS, &n, false))
			return;
		src = v.src;
		older = true;
	} else if (get(t, "experimental", "pipeline_parallel_degree", &v)) {
		/* The older count's default, the degree, where the job would say it. */
		n = pp->i;
		src = v.src;
		adv_strlcpy(src.key, "experimental.pipeline_parallel_microbatches", sizeof(src.key));
		src.fw_default = true;
		src.val_line = 0;
		older = true;
	} else {
		/* JobConfig's documented default, where the job would say it. */
		src = lb->src;
		adv_strlcpy(src.key, "parallelism.pipeline_parallel_microbatch_size", sizeof(src.key));
		src.fw_default = true;
		src.val_line = 0;
	}
	if (older) {
		if (n <= 0 || lb->i % n != 0) {
			jr_note(t->cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
				"%s:%d: torchtitan's local batch %lld does not split into %lld "
				"pipeline micro-batches (torchtitan refuses it)", src.file, src.line,
				lb->i, n);
			return;
		}
		mb = lb->i / n;
	}
	if (mb <= 0 || lb->i % mb != 0) {
		jr_note(t->cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
			"%s:%d: torchtitan's local batch %lld does not split into pipeline "
			"micro-batches of %lld (torchtitan refuses it)", src.file, src.line, lb->i, mb);
		return;
	}
	if (!jr_get(t->cx, JR_GBS) || !jr_get(t->cx, JR_GBS)->set)
		jr_set_int(t->cx, JR_GAS, lb->i / mb, &lb->src);
	jr_set_int(t->cx, JR_MBS, mb, &src);
}

static void precision(struct titan *t)
{
	struct tv v;

	if (get(t, "training", "mixed_precision_param", &v) && !v.unknown) {
		if (!strcmp(v.text, "bfloat16"))
			jr_set_int(t->cx, JR_PRECISION, ADV_PREC_BF16, &v.src);
		else if (!strcmp(v.text, "float32"))
			jr_set_int(t->cx, JR_PRECISION, ADV_PREC_FP32, &v.src);
	}
	/* Float8 training: model.converters = ["float8"] (a list in the TOML,
	 * "float8" or "a,b" on the command line). */
	if (from_args(t, "model", "converters", &v)) {
		if (!v.unknown && strstr(v.text, "float8"))
			jr_set_int(t->cx, JR_PRECISION, ADV_PREC_FP8, &v.src);
	} else if (t->root) {
		const struct cfg_node *c = cfg_path(t->root, "model.converters");

		for (const struct cfg_node *e = c && c->type == CFG_LIST ? c->child : NULL; e; e = e->next)
			if (cfg_str(e) && !strcmp(cfg_str(e), "float8")) {
				jr_src_node(&v.src, t->display, c, "model.converters", JR_STYLE_TOML);
				jr_set_int(t->cx, JR_PRECISION, ADV_PREC_FP8, &v.src);
			}
	}
}

static void recompute(struct titan *t)
{
	static const struct {
		const char *s;
		int r;
	} map[] = { { "none", ADV_RECOMPUTE_NONE }, { "selective", ADV_RECOMPUTE_SELECTIVE },
		    { "full", ADV_RECOMPUTE_FULL } };
	struct tv v;

	if (!get(t, "activation_checkpoint", "mode", &v))
		return;
	if (v.unknown) {
		jr_set_unknown(t->cx, JR_RECOMPUTE, &v.src, v.text);
		return;
	}
	for (size_t k = 0; k < ADV_ARRAY_SIZE(map); k++)
		if (!strcasecmp(v.text, map[k].s))
			jr_set_int(t->cx, JR_RECOMPUTE, map[k].r, &v.src);
}

static void checkpoint(struct titan *t)
{
	struct tv en, iv, it;
	int on;
	long long n;

	memset(&en, 0, sizeof(en));
	if (get_any(t, PAIRS("checkpoint", "enable", "checkpoint", "enable_checkpoint"), &en)) {
		if (en.unknown)
			return;
		on = jr_parse_bool(en.text);
		if (on == 0) {
			jr_set_int(t->cx, JR_CKPT_OFF, 1, &en.src);
			return;
		}
	} else if (!t->registry && !t->failed) {
		/* JobConfig's default: no checkpoint at all. */
		struct jobread_src src;

		jr_src_arg(&src, t->p, NULL, JR_STYLE_FLAG);
		if (t->root && cfg_child(t->root, "checkpoint"))
			jr_src_node(&src, t->display, cfg_child(t->root, "checkpoint"), "checkpoint.enable",
				    JR_STYLE_TOML);
		else
			src.key[0] = '\0';
		jr_set_int(t->cx, JR_CKPT_OFF, 1, &src);
		return;
	} else {
		on = -1;   /* the Python config decides */
	}
	if (!get(t, "checkpoint", "interval", &iv)) {
		if (on == 1) {
			/* JobConfig's default interval: 500 steps. */
			en.src.key[0] = '\0';
			jr_set_int(t->cx, JR_CKPT_STEPS, 500, &en.src);
		}
		return;
	}
	if (!int_of(t, &iv, JR_CKPT_STEPS, &n, false)) {
		if (iv.unknown)
			jr_set_unknown(t->cx, JR_CKPT_STEPS, &iv.src, iv.text);
		return;
	}
	if (n <= 0)
		return;
	if (get(t, "checkpoint", "interval_type", &it) && !it.unknown && !strcasecmp(it.text, "seconds"))
		jr_set_num(t->cx, JR_CKPT_TIME, (double)n, &iv.src);
	else
		jr_set_int(t->cx, JR_CKPT_STEPS, n, &iv.src);
}

/* ---- recognition ----------------------------------------------------------------------- */

static const char *const config_flags[] = { "--job.config_file", "--job.config-file", NULL };

static bool is_titan(const struct jr_cmd *p, bool is_module)
{
	const char *a0 = p->argv[0], *b = jr_basename(a0);

	if (is_module)
		return !strcmp(a0, "torchtitan.train") || !strncmp(a0, "torchtitan.", 11);
	if (!strcmp(b, "run_train.sh") || strstr(a0, "torchtitan/"))
		return true;
	/* train.py with torchtitan's own config flags. */
	return !strcmp(b, "train.py") &&
	       (jr_arg_find_any(p, 1, config_flags, NULL, NULL, NULL) >= 0 ||
		(jr_arg_find(p, 1, "--module", NULL, NULL) >= 0 &&
		 jr_arg_find(p, 1, "--config", NULL, NULL) >= 0));
}

/* An environment variable of the submission (run_train.sh's knobs). */
static const char *env_of(struct jr_ctx *cx, const char *name)
{
	const struct jobread_input *in = jr_input(cx);
	size_t n = strlen(name);

	for (char *const *e = in ? in->env : NULL; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

bool jr_fw_torchtitan(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module)
{
	struct titan t = { cx, prog, NULL, NULL, false, false };
	struct jobread_src src;
	const char *cf = NULL, *which = NULL, *module = NULL, *config = NULL;
	bool eq = false, run_sh;
	int i;

	if (!prog || prog->argc < 1 || !prog->argv[0] || !is_titan(prog, is_module))
		return false;
	run_sh = !is_module && !strcmp(jr_basename(prog->argv[0]), "run_train.sh");
	jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
	src.key[0] = '\0';
	jr_set_trainer(cx, "torchtitan", ADV_FW_FSDP, &src);
	jr_set_int(cx, JR_TASK, ADV_TASK_TRAIN, &src);

	i = jr_arg_find_any(prog, 1, config_flags, &cf, &eq, &which);
	if (i >= 0) {
		if (!cf || (prog->unknown && prog->unknown[eq ? i : i + 1])) {
			jr_src_arg(&src, prog, which, JR_STYLE_FLAG);
			jr_set_unknown(cx, JR_MODEL, &src, "a TOML config named at run time");
			cf = NULL;
		}
	} else if (run_sh) {
		cf = env_of(cx, "CONFIG_FILE");
		if (!cf) {
			jr_src_arg(&src, prog, NULL, JR_STYLE_FLAG);
			jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-model=NAME --llm-layout=...",
				"%s:%d: run_train.sh takes its TOML from $CONFIG_FILE, which is not "
				"known here", src.file, src.line);
		}
	}
	if (cf) {
		const cfg_t *c = jr_load(cx, cf, CFG_TOML, &t.display);

		t.root = c ? cfg_root(c) : NULL;
		if (t.root && t.root->type != CFG_MAP)
			t.root = NULL;
		t.failed = !t.root;
	}
	if (!t.root && !cf) {
		const char *mv = NULL;
		bool meq = false, ceq = false;
		int mi = jr_arg_find(prog, 1, "--module", &mv, &meq);
		int ci = jr_arg_find(prog, 1, "--config", &config, &ceq);

		if (ci >= 0) {
			t.registry = true;
			module = mi >= 0 && mv && !(prog->unknown && prog->unknown[meq ? mi : mi + 1]) ? mv
												: NULL;
			jr_src_arg(&src, prog, "--config", ceq ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
			if (!config || (prog->unknown && prog->unknown[ceq ? ci : ci + 1]))
				jr_set_unknown(cx, JR_MODEL, &src, "a Python config named at run time");
			else
				model_registry(&t, module, config, &src);
			jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, "--llm-layout=... --llm-ckpt=DURATION",
				"%s:%d: torchtitan's config %s is Python: what it sets is not known "
				"except where the command line overrides it", src.file, src.line,
				config ? config : "(run time)");
		}
	}
	if (t.root || cf == NULL)
		model_toml(&t);
	if (run_sh) {
		/* run_train.sh starts NGPU processes on this node (default 8). */
		const char *ng = env_of(cx, "NGPU");
		long long n = 8;

		jr_src_arg(&src, prog, NULL, JR_STYLE_ENV);
		adv_strlcpy(src.key, "NGPU", sizeof(src.key));
		if (!ng || (jr_parse_ll(ng, &n) && n > 0)) {
			jr_set_int(cx, JR_NPROC_PER_NODE, n, &src);
			jr_set_int(cx, JR_WORLD, n, &src);
		}
	}
	layout(&t);
	set_int(&t, JR_MBS, PAIRS("training", "local_batch_size", "training", "batch_size"), NULL);
	pipeline_microbatches(&t);
	{
		struct tv g;
		long long n;

		/* -1: local batch x data-parallel degree. */
		if (get(&t, "training", "global_batch_size", &g) && int_of(&t, &g, JR_GBS, &n, false) &&
		    n > 0)
			jr_set_int(cx, JR_GBS, n, &g.src);
	}
	set_int(&t, JR_SEQ, PAIRS("training", "seq_len"), NULL);
	precision(&t);
	recompute(&t);
	checkpoint(&t);
	return true;
}
