/*
 * job_submit.c - advisor inside slurmctld (issue 31): the Lua C module
 * `advisor` that etc/job_submit.lua calls from Slurm's job_submit/lua
 * plugin, for every submission whatever its client (sbatch, slurmrestd, a
 * client with a copied slurm.conf and no plugstack, a script on a pipe).
 *
 *   local advisor = require("advisor")
 *   local r = advisor.check(job_desc, submit_uid, { timeout_ms = 50 })
 *   local r = advisor.check(job_desc, modify_uid, opts, job_rec)   -- slurm_job_modify
 *
 * It reads the job only through the fields job_submit/lua documents
 * (src/plugins/job_submit/lua/job_submit_lua.c _get_job_req_field, and
 * src/lua/slurm_lua.c slurm_lua_job_record_field for job_rec: the same
 * names from 22.05 to 25.11), each read in a protected call, so that no
 * Lua error can unwind through C that holds memory; the job descriptor is
 * never dereferenced, and no Slurm header is needed.  The request is the
 * one the SPANK plugin sends (plugin/local.c): the resources (js_fields
 * below, Slurm's long option names for common/wire/jobreq.c), the batch
 * script compacted as sbatch's plugin compacts it (scripttext.c: the same
 * script, the same digest), its arguments, the variables it names, and the
 * job's uid, in context CTX_SUBMIT, within timeout_ms.  The job's files
 * are never read here: slurmctld must not open a user's paths or wait on
 * their file system (the node reads them, daemon/handler.c).
 *
 * When the job's environment names the SPANK plugin's decision
 * (ADVISOR_DECISION_ID), advisord confirms it from its log as the node
 * check does and does not judge again (one decision per job).  The
 * answer is a table for the script: verdict ("accept", "warn", "reject",
 * "unavailable", "skip"), decision, message (the lines the plugin prints,
 * annotate.c), admin_comment, env (the ADVISOR_* variables for the job),
 * confirmed, deny (on_unavailable=deny).  Options are plugstack.conf's
 * (args.c), with timeout_ms 50 by default: slurmctld holds its job write
 * lock while job_submit runs.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "plugin.h"
#include "util.h"
#include "wire/jobreq.h"
#include "wire/jobship.h"
#include "wire/wire.h"

#define JS_DEFAULT_TIMEOUT_MS 50
#define JS_MAX_OPTS 16
#define JS_MAX_VARS 256          /* variables of the script shipped at most */
#define JS_VAR_MAX 128           /* a variable's name */
#define JS_MAX_ARGS 256          /* the script's arguments shipped at most */
#define JS_STR_MAX 4096          /* any other string field */

/* Slurm's "not set" values (slurm.h NO_VAL, NO_VAL16, INFINITE). */
#define JS_NO_VAL 0xfffffffeu
#define JS_NO_VAL16 0xfffeu

/* How a field's value becomes an option's. */
enum js_kind {
	JS_STR = 0,          /* as it is */
	JS_COUNT,            /* uint32_t count; NO_VAL, INFINITE or 0: not set */
	JS_COUNT16,          /* uint16_t count; NO_VAL16 and above, or 0: not set */
	JS_TRES_NODE,        /* "gres:gpu:h100:8[,...]" (22.05) or "gres/gpu:..." per node */
	JS_TRES_GPU,         /* the gpu entry of such a list, as --gpus takes it: "h100:16" */
	JS_KIND_COUNT
};

/*
 * The job's resources: job_submit/lua's field, and the sbatch option
 * jobreq_apply_named() reads it as.  Nodes and the account are read apart
 * (a range; the user's default account when none is given).
 */
static const struct js_field {
	const char *field;
	const char *option;
	enum js_kind kind;
} js_fields[] = {
	{ "num_tasks", "ntasks", JS_COUNT },
	{ "ntasks_per_node", "ntasks-per-node", JS_COUNT16 },
	{ "tres_per_node", "gres", JS_TRES_NODE },
	{ "tres_per_job", "gpus", JS_TRES_GPU },
	{ "tres_per_task", "gpus-per-task", JS_TRES_GPU },
	{ "partition", "partition", JS_STR },
	{ "features", "constraint", JS_STR },
	{ "work_dir", "chdir", JS_STR },
};

/* What the module read of one job. */
struct js_job {
	struct jobreq_opts opts;
	int llm_options;
	bool batch;                    /* a batch script: the only jobs judged here */
	bool changes_resources;        /* a modification names one of js_fields or nodes */
	struct jobreq r;               /* the resources resolved from opts */
	bool judge;                    /* worth a call (js_read_fn): else "skip" */
	const char *script;            /* on the Lua stack while the check runs */
	size_t script_len;
	char script_name[256];
	char *args[JS_MAX_ARGS + 1];
	int nargs;
	char *env[JS_MAX_VARS + 1];    /* "NAME=value" of the variables the script names */
	char vars[JS_MAX_VARS][JS_VAR_MAX];   /* their names */
	int nenv;
	char parent[64];               /* ADVISOR_DECISION_ID, "" none */
	char unread[16];               /* ADVISOR_SCRIPT_UNREAD */
	uint32_t uid;
	uint32_t job_id;               /* job_rec's (a modification), else 0 */
	char err[256];
};

/* ---- reading fields ------------------------------------------------------------
 * All reads run inside one protected call (js_read_fn): a metamethod that
 * fails, or Lua out of memory, ends the read there, and js_check frees what
 * was read and answers "skip".  Tables are at absolute stack indices. */

/* t[name] as a string into buf ("" when nil or not a string or number). */
static void js_get_str(lua_State *L, int t, const char *name, char *buf, size_t len)
{
	buf[0] = '\0';
	lua_getfield(L, t, name);
	if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER)
		adv_strlcpy(buf, lua_tostring(L, -1), len);
	lua_pop(L, 1);
}

/* t[name] as a count; 0 when not set (nil, NO_VAL, out of range). */
static unsigned long js_get_count(lua_State *L, int t, const char *name, enum js_kind kind)
{
	lua_Number n = 0;

	lua_getfield(L, t, name);
	if (lua_type(L, -1) == LUA_TNUMBER)
		n = lua_tonumber(L, -1);
	lua_pop(L, 1);
	if (!(n >= 1) || n >= (kind == JS_COUNT16 ? (lua_Number)JS_NO_VAL16 : (lua_Number)JS_NO_VAL))
		return 0;
	return (unsigned long)n;
}

/* The field from job_desc, else (a modification) from job_rec. */
static void js_field_str(lua_State *L, int desc, int rec, const char *name, char *buf, size_t len,
			 struct js_job *j)
{
	js_get_str(L, desc, name, buf, len);
	if (buf[0]) {
		j->changes_resources = true;
		return;
	}
	if (rec)
		js_get_str(L, rec, name, buf, len);
}

static unsigned long js_field_count(lua_State *L, int desc, int rec, const char *name,
				    enum js_kind kind, struct js_job *j)
{
	unsigned long n = js_get_count(L, desc, name, kind);

	if (n) {
		j->changes_resources = true;
		return n;
	}
	return rec ? js_get_count(L, rec, name, kind) : 0;
}

/*
 * The gpu entry of a TRES list, as --gpus takes it: "gres:gpu:h100:16" or
 * "gres/gpu:h100:16,gres/shard:2" -> "h100:16"; "gres/gpu=4" (a TRES
 * string) -> "4".  "" when there is none.
 */
static void js_tres_gpu(const char *tres, char *out, size_t len)
{
	char buf[JS_STR_MAX], *save = NULL, *tok;

	out[0] = '\0';
	adv_strlcpy(buf, tres, sizeof(buf));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "gres:", 5) == 0 || strncmp(tok, "gres/", 5) == 0)
			tok += 5;
		if (strncmp(tok, "gpu", 3) != 0 || (tok[3] != ':' && tok[3] != '=' && tok[3] != '\0'))
			continue;
		adv_strlcpy(out, tok[3] ? tok + 4 : "1", len);
		return;
	}
}

/* ---- the job ------------------------------------------------------------------ */

/* Names the script expands ($NAME, ${NAME...}), each once, at most JS_MAX_VARS. */
static int js_script_vars(const char *s, size_t len, char names[][JS_VAR_MAX], int max)
{
	int n = 0;

	for (size_t i = 0; i + 1 < len && n < max; i++) {
		size_t k, start;
		int m;

		if (s[i] != '$')
			continue;
		start = i + 1 + (s[i + 1] == '{');
		for (k = start; k < len && k - start < JS_VAR_MAX - 1 &&
		     (s[k] == '_' || (s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= 'a' && s[k] <= 'z') ||
		      (k > start && s[k] >= '0' && s[k] <= '9')); k++)
			;
		if (k == start)
			continue;
		memcpy(names[n], s + start, k - start);
		names[n][k - start] = '\0';
		for (m = 0; m < n && strcmp(names[m], names[n]) != 0; m++)
			;
		if (m == n)
			n++;
		i = k - 1;
	}
	return n;
}

/* "NAME=value" of env[name] into j->env (malloc'ed; js_job_free). */
static void js_env_add(lua_State *L, int env, const char *name, struct js_job *j)
{
	size_t vlen, nlen = strlen(name);
	const char *v;
	char *e;

	if (j->nenv >= JS_MAX_VARS)
		return;
	lua_getfield(L, env, name);
	if (lua_type(L, -1) != LUA_TSTRING) {
		lua_pop(L, 1);
		return;
	}
	v = lua_tolstring(L, -1, &vlen);
	if (vlen <= JS_STR_MAX && (e = malloc(nlen + vlen + 2))) {
		memcpy(e, name, nlen);
		e[nlen] = '=';
		memcpy(e + nlen + 1, v, vlen);
		e[nlen + 1 + vlen] = '\0';
		j->env[j->nenv++] = e;
	}
	lua_pop(L, 1);
}

static void js_job_free(struct js_job *j)
{
	for (int i = 0; i < j->nenv; i++)
		free(j->env[i]);
	for (int i = 0; i < j->nargs; i++)
		free(j->args[i]);
	j->nenv = j->nargs = 0;
}

/* The script's arguments: argv[1..argc-1] (argv[0] is the script as named). */
static void js_read_args(lua_State *L, int t, struct js_job *j)
{
	int argv;

	lua_getfield(L, t, "argv");
	argv = lua_gettop(L);
	if (lua_type(L, argv) == LUA_TTABLE) {
		lua_rawgeti(L, argv, 0);
		if (lua_type(L, -1) == LUA_TSTRING) {
			const char *name = lua_tostring(L, -1), *base = strrchr(name, '/');

			adv_strlcpy(j->script_name, base ? base + 1 : name, sizeof(j->script_name));
		}
		lua_pop(L, 1);
		for (int i = 1; i <= JS_MAX_ARGS; i++) {
			const char *a;

			lua_rawgeti(L, argv, i);
			a = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
			if (!a || strlen(a) > JS_STR_MAX || !(j->args[j->nargs] = strdup(a))) {
				lua_pop(L, 1);
				break;
			}
			j->nargs++;
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	j->args[j->nargs] = NULL;
}

/*
 * Reads the job from job_desc (stack index desc) and, for a modification,
 * job_rec (rec; 0 none).  The script stays on the Lua stack (pushed last,
 * the caller pops it).  Returns 0, or -1 with j->err set.
 */
static int js_read_job(lua_State *L, int desc, int rec, struct js_job *j)
{
	char val[JS_STR_MAX], nodes[64], gpus[JS_STR_MAX];
	unsigned long nmin, nmax;
	size_t i;

	jobreq_opts_init(&j->opts);
	adv_strlcpy(j->script_name, "batch script", sizeof(j->script_name));
	for (i = 0; i < ADV_ARRAY_SIZE(js_fields); i++) {
		const struct js_field *f = &js_fields[i];

		if (f->kind == JS_COUNT || f->kind == JS_COUNT16) {
			unsigned long n = js_field_count(L, desc, rec, f->field, f->kind, j);

			if (!n)
				continue;
			adv_snprintf(val, sizeof(val), "%lu", n);
		} else {
			js_field_str(L, desc, rec, f->field, val, sizeof(val), j);
			if (!val[0])
				continue;
			if (f->kind == JS_TRES_GPU) {
				js_tres_gpu(val, gpus, sizeof(gpus));
				if (!gpus[0])
					continue;
				adv_strlcpy(val, gpus, sizeof(val));
			}
		}
		if (jobreq_apply_named(&j->opts, f->option, val, j->err, sizeof(j->err)) != 0)
			return -1;
	}
	nmin = js_field_count(L, desc, rec, "min_nodes", JS_COUNT, j);
	nmax = js_field_count(L, desc, rec, "max_nodes", JS_COUNT, j);
	if (nmin) {
		if (nmax >= nmin)
			adv_snprintf(nodes, sizeof(nodes), "%lu-%lu", nmin, nmax);
		else
			adv_snprintf(nodes, sizeof(nodes), "%lu", nmin);
		if (jobreq_apply_named(&j->opts, "nodes", nodes, j->err, sizeof(j->err)) != 0)
			return -1;
	}
	/* The account Slurm will charge: the user's default when none is given
	 * (sbatch's plugin sees -A only when the user writes it). */
	js_field_str(L, desc, rec, "account", val, sizeof(val), j);
	if (!val[0])
		js_get_str(L, desc, "default_account", val, sizeof(val));
	adv_strlcpy(j->opts.account, val, sizeof(j->opts.account));
	j->uid = (uint32_t)js_get_count(L, desc, "user_id", JS_COUNT);
	if (!j->uid && rec)
		j->uid = (uint32_t)js_get_count(L, rec, "user_id", JS_COUNT);
	if (rec)
		j->job_id = (uint32_t)js_get_count(L, rec, "job_id", JS_COUNT);
	/* The environment (batch jobs only; job_rec has none). */
	lua_getfield(L, desc, "environment");
	if (lua_type(L, -1) == LUA_TTABLE) {
		int env = lua_gettop(L);

		js_get_str(L, env, "ADVISOR_DECISION_ID", j->parent, sizeof(j->parent));
		js_get_str(L, env, "ADVISOR_SCRIPT_UNREAD", j->unread, sizeof(j->unread));
	} else {
		lua_pop(L, 1);
		lua_pushnil(L);
	}
	js_read_args(L, desc, j);
	if (rec && j->nargs == 0)
		js_read_args(L, rec, j);
	/* The script, left on the stack. */
	lua_getfield(L, desc, "script");
	if (lua_type(L, -1) != LUA_TSTRING && rec) {
		lua_pop(L, 1);
		lua_getfield(L, rec, "script");
	}
	if (lua_type(L, -1) == LUA_TSTRING) {
		j->script = lua_tolstring(L, -1, &j->script_len);
		j->batch = j->script_len > 0;
	}
	return 0;
}

/* The variables the script names, from the environment under it on the stack. */
static void js_read_vars(lua_State *L, int env, struct js_job *j)
{
	int n;

	j->env[0] = NULL;
	if (lua_type(L, env) != LUA_TTABLE || !j->script)
		return;
	n = js_script_vars(j->script, j->script_len, j->vars, JS_MAX_VARS);
	for (int i = 0; i < n; i++)
		js_env_add(L, env, j->vars[i], j);
	j->env[j->nenv] = NULL;
}

/* ---- options ------------------------------------------------------------------ */

/* The options table (stack index t, may be nil) as plugstack.conf words. */
static int js_options(lua_State *L, int t, struct plugin_args *a, char *err, size_t errlen)
{
	char words[JS_MAX_OPTS][PLUGIN_PATH_MAX + 32];
	char *argv[JS_MAX_OPTS];
	int n = 0;

	args_defaults(a);
	a->timeout_ms = JS_DEFAULT_TIMEOUT_MS;
	if (lua_type(L, t) != LUA_TTABLE)
		return 0;
	lua_pushnil(L);
	while (lua_next(L, t) != 0) {
		/* Keys are names; values strings, numbers or booleans (quiet=true). */
		if (n < JS_MAX_OPTS && lua_type(L, -2) == LUA_TSTRING) {
			const char *k = lua_tostring(L, -2);

			if (lua_type(L, -1) == LUA_TBOOLEAN)
				adv_snprintf(words[n], sizeof(words[n]), "%s=%d", k, lua_toboolean(L, -1));
			else if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER)
				adv_snprintf(words[n], sizeof(words[n]), "%s=%s", k,
					     lua_tostring(L, -1));
			else
				adv_snprintf(words[n], sizeof(words[n]), "%s=", k);
			argv[n] = words[n];
			n++;
		}
		lua_pop(L, 1);
	}
	return args_parse(n, argv, a, err, errlen);
}

/* ---- the answer --------------------------------------------------------------- */

static void js_set(lua_State *L, const char *k, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, k);
}

static void js_set_bool(lua_State *L, const char *k, bool v)
{
	lua_pushboolean(L, v);
	lua_setfield(L, -2, k);
}

/* What the script gets: the answer, built from C memory only (no field reads). */
struct js_answer {
	const char *verdict;
	char decision[64];
	char *message;                 /* malloc'ed, "" none */
	char admin_comment[256];
	char env[REPORT_NVARS][64];
	bool has_env;
	bool confirmed;
	bool deny;
};

static void js_push_answer(lua_State *L, const struct js_answer *a)
{
	lua_createtable(L, 0, 8);
	js_set(L, "verdict", a->verdict);
	if (a->decision[0])
		js_set(L, "decision", a->decision);
	js_set(L, "message", a->message ? a->message : "");
	if (a->admin_comment[0])
		js_set(L, "admin_comment", a->admin_comment);
	js_set_bool(L, "confirmed", a->confirmed);
	js_set_bool(L, "deny", a->deny);
	if (a->has_env) {
		lua_createtable(L, 0, REPORT_NVARS);
		for (int i = 0; i < REPORT_NVARS; i++)
			if (a->env[i][0])
				js_set(L, annotate_var_names[i], a->env[i]);
		lua_setfield(L, -2, "env");
	}
}

/* The lines joined with newlines, as slurm.log_user sends them; NULL out of memory. */
static char *js_join(const struct plugin_lines *lines, const char *last)
{
	size_t len = 1;
	char *m;

	for (int i = 0; i < lines->n; i++)
		len += strlen(lines->line[i]) + 1;
	len += last ? strlen(last) + 1 : 0;
	if (!(m = malloc(len)))
		return NULL;
	m[0] = '\0';
	for (int i = 0; i < lines->n; i++) {
		if (m[0])
			adv_strlcat(m, "\n", len);
		adv_strlcat(m, lines->line[i], len);
	}
	if (last) {
		if (m[0])
			adv_strlcat(m, "\n", len);
		adv_strlcat(m, last, len);
	}
	return m;
}

/* The request and its answer; no Lua call in here. */
static void js_judge(const struct plugin_args *args, struct js_job *j, struct js_answer *ans)
{
	struct scripttext text;
	struct jobship *js = NULL;
	struct adv_request req;
	struct adv_result *res = NULL;
	struct plugin_lines *lines = NULL;
	const struct jobreq *r = &j->r;
	char err[256] = "", last[PLUGIN_LINE_MAX];
	int rc;

	memset(&text, 0, sizeof(text));
	res = malloc(sizeof(*res));
	lines = malloc(sizeof(*lines));
	if (!res || !lines || scripttext_set(&text, j->script, j->script_len) != 0) {
		adv_strlcpy(j->err, "out of memory", sizeof(j->err));
		goto unavailable;
	}
	engine_request_init(&req);
	adv_strlcpy(req.res.gpu, r->gpu_type, sizeof(req.res.gpu));
	req.res.gpus = r->gpus;
	req.res.nodes = r->nodes;
	req.res.gpus_per_node = r->gpus_per_node;
	adv_strlcpy(req.res.partition, r->partition, sizeof(req.res.partition));
	adv_strlcpy(req.res.constraint, r->opt.constraint, sizeof(req.res.constraint));
	adv_strlcpy(req.account, r->opt.account, sizeof(req.account));
	annotate_user_name(j->uid, req.user, sizeof(req.user));
	req.has_job_uid = true;
	req.job_uid = j->uid;
	{
		char cwd[JOBREAD_PATH_MAX];
		int ntasks = r->opt.ntasks, nodes = r->nodes > 0 ? r->nodes : 1;

		adv_strlcpy(cwd, r->opt.chdir[0] == '/' ? r->opt.chdir : "/", sizeof(cwd));
		if (ntasks <= 0)
			ntasks = r->opt.ntasks_per_node > 0 ? r->opt.ntasks_per_node * nodes : nodes;
		js = jobship_new(JOBREAD_SBATCH, j->script_name, &text, j->nargs, j->args, j->env,
				 cwd, ntasks, r->opt.ntasks_per_node);
	}
	if (!js) {
		adv_strlcpy(j->err, "out of memory", sizeof(j->err));
		goto unavailable;
	}
	/* The plugin's decision, unless sbatch said it could not read the
	 * script (that decision stands for the resources only). */
	rc = wire_client_check_job(args->socket, args->timeout_ms, &req, ADV_CTX_SUBMIT, j->job_id,
				   j->parent[0] && !j->unread[0] && !j->job_id ? j->parent : NULL,
				   js, res, ans->decision, sizeof(ans->decision), err, sizeof(err));
	if (rc != WIRE_OK) {
		if (err[0] && strstr(err, wire_strerror(rc)))
			adv_strlcpy(j->err, err, sizeof(j->err));
		else
			adv_snprintf(j->err, sizeof(j->err), "%s%s%s", wire_strerror(rc),
				     err[0] ? ": " : "", err);
		goto unavailable;
	}
	ans->verdict = engine_verdict_name(res->verdict);
	ans->confirmed = res->parent_confirmed;
	adv_snprintf(ans->admin_comment, sizeof(ans->admin_comment), "advisor: decision %s %s%s",
		     ans->decision, ans->verdict,
		     res->parent_confirmed ? " (sbatch)"
		     : !res->llm_job && res->n_findings == 0 ? " (not an LLM job)" : "");
	if (res->parent_confirmed) {
		/* The user saw sbatch's lines already. */
		ans->message = NULL;
	} else if (!res->llm_job && res->n_findings == 0 && res->verdict == ADV_ACCEPT) {
		ans->has_env = true;
		memset(ans->env, 0, sizeof(ans->env));
		adv_strlcpy(ans->env[REPORT_DECISION_ID], ans->decision, 64);
	} else {
		annotate_lines(res, &req, !args->quiet, lines);
		last[0] = '\0';
		if (res->verdict == ADV_REJECT && ans->decision[0])
			adv_snprintf(last, sizeof(last),
				     "advisor: decision %s; nothing was submitted; see: advisorctl show %s",
				     ans->decision, ans->decision);
		/* As the plugin: an accepted job's lines are for --verbose only. */
		if (res->verdict == ADV_REJECT || res->verdict == ADV_WARN)
			ans->message = js_join(lines, last[0] ? last : NULL);
		annotate_vars(res, ans->decision, ans->env);
		ans->has_env = true;
	}
	goto out;
unavailable:
	ans->verdict = "unavailable";
	ans->deny = args->deny_unavailable;
	adv_snprintf(ans->admin_comment, sizeof(ans->admin_comment), "advisor: not checked (%s)",
		     j->err);
	{
		size_t len = sizeof(last) + 512;

		if ((ans->message = malloc(len))) {
			if (args->deny_unavailable)
				adv_snprintf(ans->message, len,
					     "advisor: the advisor is unavailable (daemon at %s: %s) and "
					     "this cluster requires every GPU/LLM job to be checked "
					     "(on_unavailable=deny); job not submitted, retry later or "
					     "contact your administrators", args->socket, j->err);
			else if (!args->quiet)
				adv_snprintf(ans->message, len,
					     "advisor: daemon unavailable at %s (%s); job not checked",
					     args->socket, j->err);
			else
				ans->message[0] = '\0';
		}
	}
out:
	jobship_free(js);
	scripttext_free(&text);
	free(res);
	free(lines);
}

/*
 * The protected read: 1 job_desc, 2 job_rec or nil, 3 the job (light
 * userdata).  Returns the environment (or nil) and the script (or nil),
 * which stay referenced on the caller's stack while the check runs.
 */
static int js_read_fn(lua_State *L)
{
	struct js_job *j = lua_touserdata(L, 3);
	int env;

	lua_settop(L, 3);
	if (js_read_job(L, 1, lua_type(L, 2) == LUA_TTABLE ? 2 : 0, j) != 0)
		return luaL_error(L, "%s", j->err);
	env = lua_gettop(L) - 1;
	jobreq_build_resolved(JOBREQ_SBATCH, &j->opts, 0, NULL, NULL, &j->r);
	/* As the plugin: no GPU and nothing that launches a trainer, no call;
	 * nor a modification that leaves the resources alone.  Most jobs stop
	 * here, under slurmctld's lock: their variables are not looked up. */
	j->judge = j->batch && (lua_type(L, 2) != LUA_TTABLE || j->changes_resources) &&
		   (j->r.gpus > 0 || jobreq_mentions_launcher(j->script, j->script_len));
	if (j->judge)
		js_read_vars(L, env, j);
	return 2;
}

/* The answer table, pushed inside a protected call: 1 the answer (light userdata). */
static int js_push_fn(lua_State *L)
{
	js_push_answer(L, lua_touserdata(L, 1));
	return 1;
}

/*
 * advisor.check(job_desc, uid, [options], [job_rec]) -> answer table.
 * Bad options raise an error (the site's script is wrong); a job never
 * does: one that cannot be read is "skip", with the reason in
 * admin_comment.  The job's strings are C memory from the first read to
 * the answer, and no Lua error can unwind past them: every Lua call in
 * between is protected.
 */
static int js_check(lua_State *L)
{
	struct plugin_args args;
	struct js_answer ans;
	struct js_job *j;
	char err[512] = "";
	int base;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 4);
	if (js_options(L, 3, &args, err, sizeof(err)) != 0)
		return luaL_error(L, "advisor: options: %s", err);
	luaL_checkstack(L, 24, "advisor");
	j = lua_newuserdata(L, sizeof(*j));
	memset(j, 0, sizeof(*j));
	memset(&ans, 0, sizeof(ans));
	ans.verdict = "skip";
	lua_pushcfunction(L, js_push_fn);
	base = lua_gettop(L);
	lua_pushcfunction(L, js_read_fn);
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 4);
	lua_pushlightuserdata(L, j);
	/* From here to js_job_free, nothing may raise. */
	if (lua_pcall(L, 3, 2, 0) != 0) {
		adv_snprintf(ans.admin_comment, sizeof(ans.admin_comment),
			     "advisor: not checked (cannot read the job: %s)",
			     lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "error");
	} else if (j->judge) {
		js_judge(&args, j, &ans);
	}
	js_job_free(j);
	lua_settop(L, base);
	lua_pushlightuserdata(L, &ans);
	if (lua_pcall(L, 1, 1, 0) != 0) {
		free(ans.message);
		return lua_error(L);
	}
	free(ans.message);
	return 1;
}

/* The build hides every symbol (-fvisibility=hidden): require() needs this one. */
__attribute__((visibility("default"))) int luaopen_advisor(lua_State *L);

int luaopen_advisor(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "check", js_check },
		{ NULL, NULL },
	};

	lua_createtable(L, 0, 2);
	for (const luaL_Reg *f = fns; f->name; f++) {
		lua_pushcfunction(L, f->func);
		lua_setfield(L, -2, f->name);
	}
	lua_pushstring(L, PACKAGE_VERSION);
	lua_setfield(L, -2, "version");
	return 1;
}
