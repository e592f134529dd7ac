/*
 * advisorctl.c - the advisor CLI for users and admins (design.md, advisorctl).
 *
 * Every command builds an advisor.Request and prints the Response.  With
 * --local the request is answered in-process by service.c, the same code
 * the daemon runs, so `advisorctl --local check` and `advisorctl check`
 * print the same report for the same files.  Exit status: 0 accept, 1 warn,
 * 2 reject, 64 usage, 65 bad input file, 69 daemon (or feature) unavailable,
 * 75 rate limited (over the user's request budget, issue 14), 77 permission
 * denied, 70 internal error.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "advisor.pb-c.h"
#include "audit.h"
#include "engine/options.h"
#include "jobread/jobread.h"
#include "print.h"
#include "service/arena.h"
#include "service/service.h"
#include "service/slurmgres.h"
#include "service/snapshot.h"
#include "util.h"
#include "wire/convert.h"
#include "wire/endpoint.h"
#include "wire/jobreq.h"
#include "wire/jobship.h"
#include "wire/wire.h"

#define EX_USAGE_ 64
#define EX_DATAERR_ 65
#define EX_UNAVAIL_ 69
#define EX_SOFTWARE_ 70
#define EX_TEMPFAIL_ 75
#define EX_NOPERM_ 77
#define MAX_CATALOGS 32

struct ctl {
	const char *socket;
	bool json;
	bool local;
	const char *catalogs[MAX_CATALOGS];
	size_t n_catalogs;
	const char *policy;
	int timeout_ms;
	const char *cmd;
	/* The Slurm resource options of a job command, as sbatch's command
	 * line layer (wire/jobreq.c parses them); gpu_set: --gpu was given. */
	struct jobreq_opts slurm;
	bool gpu_set;
};

/* One answer, from the daemon or in-process; reply_free() releases either. */
struct reply {
	const Advisor__Response *r;
	Advisor__Response *remote;
	Advisor__Response local;
	struct arena arena;
	struct snapshot *snap;
};

static void reply_free(struct reply *rp)
{
	if (rp->remote)
		advisor__response__free_unpacked(rp->remote, NULL);
	arena_destroy(&rp->arena);
	snapshot_put(rp->snap);
}

static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("advisorctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'advisorctl %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
	return EX_USAGE_;
}

/* ---- common options ----------------------------------------------------------- */

enum {
	OPT_SOCKET = 1000, OPT_JSON, OPT_LOCAL, OPT_CATALOG, OPT_POLICY, OPT_TIMEOUT, OPT_HELP,
	OPT_SERVER, OPT_SERVER_UID,
	/* resources */
	OPT_GPU, OPT_SLURM, OPT_ACCOUNT,
	/* workload, applied by options_apply() by name */
	OPT_WL,
	/* command specific: from OPT_TOP on, handed to the command (parse_job) */
	OPT_TOP, OPT_MTBF, OPT_WRITE, OPT_RESTART, OPT_INTERVAL, OPT_USER, OPT_JOB,
	OPT_VERDICT, OPT_SINCE, OPT_LIMIT, OPT_QUERIES, OPT_PROMETHEUS, OPT_CROSS_TP, OPT_SCRIPT,
	OPT_DECISION, OPT_UNTIL, OPT_VERBOSE, OPT_BY,
};

/*
 * The options every command may take before or among its arguments, once:
 * getopt's rows (COMMON_OPTS) and each command's --help (common_help())
 * come from this list, so a command's help lists exactly what it takes.
 * X(name, has_arg, val, arg, local_only, help): local_only rows are taken
 * only by the commands --local can answer (CTL_LOCAL_CMDS); the others
 * refuse them by name (issue 21).  A help of several lines has "\n"
 * between them.
 */
#define CTL_COMMON_LIST(X) \
	X("socket", required_argument, OPT_SOCKET, "PATH", false, \
	  "daemon socket (default " ADV_SOCKET_PATH ")") \
	X("server", required_argument, OPT_SERVER, "HOST:PORT[,HOST:PORT]", false, \
	  "advisord over MUNGE-authenticated TCP instead, tried\nin order within --timeout") \
	X("server-uid", required_argument, OPT_SERVER_UID, "UID|USER", false, \
	  "the uid advisord must prove it runs as (default: root,\n" ADV_DAEMON_USER " or slurm; your own uid is trusted too)") \
	X("json", no_argument, OPT_JSON, "", false, "print JSON for scripts") \
	X("local", no_argument, OPT_LOCAL, "", true, \
	  "answer in-process from --catalog/--policy, no daemon") \
	X("catalog", required_argument, OPT_CATALOG, "FILE", true, \
	  "catalog for --local; repeat to add files\n(default " ADV_CONFDIR "/catalog.yaml)") \
	X("policy", required_argument, OPT_POLICY, "FILE", true, \
	  "policy for --local (default " ADV_CONFDIR "/policy.yaml)") \
	X("timeout", required_argument, OPT_TIMEOUT, "MS", false, \
	  "how long to wait for the daemon (default 10000)") \
	X("help", no_argument, OPT_HELP, "", false, "this help")

#define CTL_GETOPT_ROW(name, has_arg, val, arg, local_only, help) { name, has_arg, NULL, val },
#define COMMON_OPTS CTL_COMMON_LIST(CTL_GETOPT_ROW)

/* The commands --local answers in-process (service_local); the rest need
 * the daemon's state and refuse --local, --catalog and --policy. */
/* audit judges in-process always (a candidate policy on past jobs). */
#define CTL_LOCAL_CMDS "check", "plan", "ckpt", "catalog", "policy", "audit"

/* The workload options: the rows of engine/optlist.h without the "llm-"
 * prefix, in the table's order (rows of one getopt value resolve an
 * abbreviation to the first: "--m" is --model). */
#define CTL_WL_ROW(id, name, arg, sbatch, plugin_help, ctl_help) \
	, { name, required_argument, NULL, OPT_WL }

/*
 * The resource options: advisor's --gpu, and sbatch's own options that bear
 * on the GPU count, read by wire/jobreq.c exactly as the plugin reads them
 * on sbatch's command line (the names are Slurm's, so jobreq_apply_named
 * takes them as they are).
 */
#define JOB_OPTS \
	{ "gpu", required_argument, NULL, OPT_GPU }, \
	{ "gpus", required_argument, NULL, OPT_SLURM }, \
	{ "nodes", required_argument, NULL, OPT_SLURM }, \
	{ "gpus-per-node", required_argument, NULL, OPT_SLURM }, \
	{ "gpus-per-task", required_argument, NULL, OPT_SLURM }, \
	{ "ntasks", required_argument, NULL, OPT_SLURM }, \
	{ "ntasks-per-node", required_argument, NULL, OPT_SLURM }, \
	{ "gres", required_argument, NULL, OPT_SLURM }, \
	{ "mem", required_argument, NULL, OPT_SLURM }, \
	{ "mem-per-gpu", required_argument, NULL, OPT_SLURM }, \
	{ "constraint", required_argument, NULL, OPT_SLURM }, \
	{ "exclusive", optional_argument, NULL, OPT_SLURM }, \
	{ "partition", required_argument, NULL, OPT_SLURM }, \
	{ "account", required_argument, NULL, OPT_ACCOUNT } \
	OPTIONS_LIST(CTL_WL_ROW)

/* sbatch's short forms of those options (src/sbatch/opt.c). */
#define JOB_SHORTOPTS "A:C:G:n:N:p:"

/* The command being run (NULL before one is named): its help, its refusals. */
static const char *ctl_cmd;

/* True when cmd (NULL: any, the global options) takes --local. */
static bool takes_local(const char *cmd)
{
	static const char *const local_cmds[] = { CTL_LOCAL_CMDS };

	if (!cmd)
		return true;
	for (size_t i = 0; i < ADV_ARRAY_SIZE(local_cmds); i++)
		if (!strcmp(cmd, local_cmds[i]))
			return true;
	return false;
}

/* Help column of the common options, as the hand-written help had it. */
#define CTL_COMMON_COL 24

/*
 * "Common options:" and the rows of CTL_COMMON_LIST the command being run
 * takes, the left column "      --NAME ARG" and the help at CTL_COMMON_COL
 * (on the next line when the left column is too long).
 */
static const char *common_help(void)
{
	static const struct {
		const char *name, *arg, *help;
		bool local_only;
	} rows[] = {
#define CTL_HELP_COMMON_ROW(name, has_arg, val, arg, local_only, help) \
		{ name, arg, help, local_only },
		CTL_COMMON_LIST(CTL_HELP_COMMON_ROW)
#undef CTL_HELP_COMMON_ROW
	};
	static char text[2048];
	size_t n;

	n = adv_strlcpy(text, "Common options:\n", sizeof(text));
	for (size_t i = 0; i < ADV_ARRAY_SIZE(rows); i++) {
		char left[96];
		const char *h = rows[i].help;
		size_t w;

		if (rows[i].local_only && !takes_local(ctl_cmd))
			continue;
		w = adv_snprintf(left, sizeof(left), "      --%s%s%s", rows[i].name,
				 rows[i].arg[0] ? " " : "", rows[i].arg);
		if (w + 2 > CTL_COMMON_COL)
			n += adv_snprintf(text + n, sizeof(text) - n, "%s\n%*s", left, CTL_COMMON_COL, "");
		else
			n += adv_snprintf(text + n, sizeof(text) - n, "%-*s", CTL_COMMON_COL, left);
		while (h) {
			const char *nl = strchr(h, '\n');
			int len = nl ? (int)(nl - h) : (int)strlen(h);

			n += adv_snprintf(text + n, sizeof(text) - n, "%.*s\n", len, h);
			h = nl ? nl + 1 : NULL;
			if (h)
				n += adv_snprintf(text + n, sizeof(text) - n, "%*s", CTL_COMMON_COL, "");
		}
	}
	return text;
}

static const char job_help_resources[] =
	"Resources (sbatch's options and syntax, read as sbatch reads them):\n"
	"      --gpu TYPE             catalog GPU name or alias\n"
	"  -G, --gpus [TYPE:]N        total GPUs, or --nodes N --gpus-per-node G\n"
	"  -N, --nodes N[-MAX]        nodes (a range counts its minimum)\n"
	"      --gpus-per-node [TYPE:]G\n"
	"      --gres gpu[:TYPE][:G]  GPUs per node, as a generic resource\n"
	"  -n, --ntasks N             tasks (processes), with --gpus-per-task\n"
	"      --ntasks-per-node T\n"
	"      --gpus-per-task [TYPE:]G\n"
	"      --mem SIZE, --mem-per-gpu SIZE, -C/--constraint LIST, --exclusive[=MODE]\n"
	"                             checked as sbatch checks them (4000, 64G, 224GB)\n"
	"  -p, --partition P          Slurm partition (policy limits, GPU type)\n"
	"  -A, --account A            Slurm account (policy exemptions)\n"
	"Workload (the --llm-* options of sbatch without the prefix):\n";

/* Help column of the workload lines, and the least gap before it. */
#define CTL_HELP_COL 29
#define CTL_HELP_GAP 2

/*
 * The help of the job commands: the resources, then one line per row of
 * engine/optlist.h, "      --NAME ARG" and the row's ctl_help at column
 * CTL_HELP_COL; rows without a ctl_help join the line before.
 */
static const char *job_help(void)
{
	static const struct {
		const char *name, *arg, *help;
	} rows[] = {
#define CTL_HELP_ROW(id, name, arg, sbatch, plugin_help, ctl_help) { name, arg, ctl_help },
		OPTIONS_LIST(CTL_HELP_ROW)
#undef CTL_HELP_ROW
	};
	static char text[4096];
	size_t i, j;

	if (text[0])
		return text;
	adv_strlcpy(text, job_help_resources, sizeof(text));
	for (i = 0; i < ADV_ARRAY_SIZE(rows); i = j) {
		char left[128];
		size_t n;

		n = (size_t)adv_snprintf(left, sizeof(left), "      --%s %s", rows[i].name,
					 rows[i].arg);
		for (j = i + 1; j < ADV_ARRAY_SIZE(rows) && !rows[j].help; j++)
			n += (size_t)adv_snprintf(left + n, sizeof(left) - n, " --%s %s",
						  rows[j].name, rows[j].arg);
		adv_snprintf(text + strlen(text), sizeof(text) - strlen(text), "%-*s%s\n",
			     n + CTL_HELP_GAP > CTL_HELP_COL ? (int)(n + CTL_HELP_GAP)
							     : CTL_HELP_COL,
			     left, rows[i].help ? rows[i].help : "");
	}
	return text;
}

static int common_opt(struct ctl *c, int opt, const char *arg)
{
	long v;

	if ((opt == OPT_LOCAL || opt == OPT_CATALOG || opt == OPT_POLICY) && !takes_local(c->cmd))
		return usage_error(c->cmd, "%s does not take --%s: it needs the running daemon's "
				   "state (--local answers check, plan, ckpt, catalog and policy)",
				   c->cmd, opt == OPT_LOCAL ? "local" : opt == OPT_CATALOG ? "catalog"
							      : "policy");
	switch (opt) {
	case OPT_SOCKET: c->socket = arg; return 0;
	case OPT_SERVER: {
		struct endpoint eps[ENDPOINT_MAX];
		char why[200];

		if (endpoint_list(arg, eps, ENDPOINT_MAX, why, sizeof(why)) < 0)
			return usage_error(c->cmd, "--server: %s", why);
		c->socket = arg;
		return 0;
	}
	case OPT_SERVER_UID: {
		struct passwd *pw;

		if (adv_parse_long(arg, &v) == 0 && v >= 0 && v < 0xffffffffL)
			wire_set_server_uid((uid_t)v);
		else if ((pw = getpwnam(arg)))
			wire_set_server_uid(pw->pw_uid);
		else
			return usage_error(c->cmd, "--server-uid: '%s' is neither a uid nor a user", arg);
		return 0;
	}
	case OPT_JSON: c->json = true; return 0;
	case OPT_LOCAL: c->local = true; return 0;
	case OPT_POLICY: c->policy = arg; return 0;
	case OPT_CATALOG:
		if (c->n_catalogs == MAX_CATALOGS)
			return usage_error(c->cmd, "--catalog: at most %d files", MAX_CATALOGS);
		c->catalogs[c->n_catalogs++] = arg;
		return 0;
	case OPT_TIMEOUT:
		if (adv_parse_long(arg, &v) != 0 || v < 1 || v > 3600000)
			return usage_error(c->cmd, "--timeout: '%s' is not a number of milliseconds "
					   "(accepted: 1..3600000)", arg);
		c->timeout_ms = (int)v;
		return 0;
	default:
		return usage_error(c->cmd, "unknown option");
	}
}

/* options.c names the sbatch spelling (--llm-seq); advisorctl's is --seq. */
static void unprefix(char *msg)
{
	char *p;

	while ((p = strstr(msg, "--llm-")))
		memmove(p + 2, p + 6, strlen(p + 6) + 1);
}

static int job_opt(struct ctl *c, struct adv_request *req, int opt, const char *name,
		   const char *arg)
{
	char err[ADV_ERR_MAX];

	switch (opt) {
	case OPT_GPU:
		if (strlen(arg) >= sizeof(req->res.gpu))
			return usage_error(c->cmd, "--gpu: name too long");
		adv_strlcpy(req->res.gpu, arg, sizeof(req->res.gpu));
		c->gpu_set = true;
		return 0;
	case OPT_ACCOUNT:
		adv_strlcpy(req->account, arg, sizeof(req->account));
		return 0;
	case OPT_SLURM:
		if (strcmp(name, "partition") == 0 && strlen(arg) >= sizeof(req->res.partition))
			return usage_error(c->cmd, "--partition: name too long");
		/* --exclusive alone: jobreq_apply_named takes Slurm's mode names. */
		if (jobreq_apply_named(&c->slurm, name, arg ? arg : "exclusive", err,
				       sizeof(err)) != 0)
			return usage_error(c->cmd, "%s", err);
		return 0;
	case OPT_WL:
		if (options_apply(&req->wl, name, arg, err, sizeof(err)) != 0) {
			unprefix(err);
			return usage_error(c->cmd, "%s", err);
		}
		return 0;
	default:
		return common_opt(c, opt, arg);
	}
}

/*
 * The resources of the request from the command line layer over script
 * (the #SBATCH lines; NULL: none), merged and resolved by jobreq.c as the
 * plugin does for sbatch; the tasks in *ntasks and *ntasks_per_node.
 */
static void job_resources(const struct ctl *c, const struct jobreq_opts *script,
			  struct adv_request *req, int *ntasks, int *ntasks_per_node,
			  char *workdir, size_t wlen)
{
	const struct jobreq_opts *layers[2] = { &c->slurm, script };
	struct jobreq r;

	memset(&r, 0, sizeof(r));
	jobreq_merge(layers, 2, &r.opt);
	jobreq_resolve(&r);
	if (!c->gpu_set)
		adv_strlcpy(req->res.gpu, r.gpu_type, sizeof(req->res.gpu));
	adv_strlcpy(req->res.partition, r.partition, sizeof(req->res.partition));
	adv_strlcpy(req->res.constraint, r.opt.constraint, sizeof(req->res.constraint));
	req->res.gpus = r.gpus;
	req->res.nodes = r.nodes;
	req->res.gpus_per_node = r.gpus_per_node;
	if (ntasks)
		*ntasks = r.opt.ntasks;
	if (ntasks_per_node)
		*ntasks_per_node = r.opt.ntasks_per_node;
	if (workdir)
		jobreq_workdir(&r.opt, workdir, wlen);
}

/* ---- transport ---------------------------------------------------------------- */

static const char *me(void)
{
	struct passwd *pw = getpwuid(getuid());

	return pw ? pw->pw_name : "";
}

static int call_local(struct ctl *c, Advisor__Request *req, struct reply *rp)
{
	struct snapshot_files files;
	char err[ADV_ERR_MAX];

	if (c->n_catalogs == 0)
		c->catalogs[c->n_catalogs++] = ADV_CONFDIR "/catalog.yaml";
	files = (struct snapshot_files){ c->catalogs, c->n_catalogs,
					 c->policy ? c->policy : ADV_CONFDIR "/policy.yaml" };
	if (snapshot_load(&files, &rp->snap, err, sizeof(err)) != 0) {
		fprintf(stderr, "advisorctl: %s\n", err);
		return EX_DATAERR_;
	}
	/* The partition's GPU type from Slurm as the daemon asks it, but here,
	 * once: no thread of its own in a command line tool. */
	slurmgres_foreground();
	service_local(rp->snap, req, me(), &rp->arena, &rp->local);
	rp->r = &rp->local;
	return 0;
}

static int call_remote(struct ctl *c, Advisor__Request *req, struct reply *rp)
{
	char err[ADV_ERR_MAX] = "";
	int rc = wire_call(c->socket, c->timeout_ms, req, &rp->remote, err, sizeof(err));

	if (rc == WIRE_OK || rc == WIRE_ERR_REMOTE) {
		rp->r = rp->remote;
		return 0;
	}
	if (rc == WIRE_ERR_SERVER || rc == WIRE_ERR_AUTH || rc == WIRE_ERR_REFUSED) {
		/* Not advisord, or not the one server_uid names (issue 20): nothing it said is shown. */
		fprintf(stderr, "advisorctl: %s\n", err[0] ? ADV_TEXT(err) : wire_strerror(rc));
	} else if (rc != WIRE_ERR_REMOTE && !endpoint_is_path(c->socket) && strchr(c->socket, ':')) {
		/* A server list (issue 20): each server's failure, and where the address is set. */
		fprintf(stderr, "advisorctl: no advisord of %s answered within --timeout %d ms (%s); "
			"on the service nodes advisord must run with `--listen HOST:PORT` (or listen: "
			"in advisord.conf), and --server must name those addresses\n", c->socket,
			c->timeout_ms, err[0] ? ADV_TEXT(err) : strerror(errno));
	} else if (rc == WIRE_ERR_CONNECT) {
		fprintf(stderr, "advisorctl: cannot reach advisord at %s (%s); start it with "
			"`systemctl start advisord` or `advisord --foreground --socket %s ...`, "
			"or use --local\n", c->socket, strerror(errno), c->socket);
	} else {
		fprintf(stderr, "advisorctl: advisord at %s: %s%s%s\n", c->socket,
			wire_strerror(rc), err[0] ? ": " : "", ADV_TEXT(err));
	}
	return EX_UNAVAIL_;
}

/* Sends req; on success rp->r holds an answer without error, else an exit code. */
static int call(struct ctl *c, Advisor__Request *req, struct reply *rp)
{
	const Advisor__Error *e;
	int rc;

	memset(rp, 0, sizeof(*rp));
	arena_init(&rp->arena);
	req->has_version = 1;
	req->version = WIRE_VERSION;
	rc = c->local ? call_local(c, req, rp) : call_remote(c, req, rp);
	if (rc)
		return rc;
	e = rp->r->error;
	if (!e || e->code == ADVISOR__ERROR_CODE__ERR_NONE)
		return 0;
	/* The daemon's words may quote a client's (an unknown model's name): escaped (issue 20). */
	fprintf(stderr, "advisorctl: %s\n", e->message ? ADV_TEXT(e->message) : "error");
	switch (e->code) {
	case ADVISOR__ERROR_CODE__ERR_DENIED: return EX_NOPERM_;
	case ADVISOR__ERROR_CODE__ERR_UNAVAILABLE: return EX_UNAVAIL_;
	case ADVISOR__ERROR_CODE__ERR_BAD_REQUEST: return EX_USAGE_;
	/* The message says "rate limited, retry in N ms"; sysexits' temporary failure. */
	case ADVISOR__ERROR_CODE__ERR_RATE_LIMITED: return EX_TEMPFAIL_;
	default: return EX_SOFTWARE_;
	}
}

/* ---- commands ----------------------------------------------------------------- */

static void check_help(void)
{
	printf("Usage: advisorctl [--json] [--local ...] check [--script FILE] [RESOURCES] [WORKLOAD]\n"
	       "          [-- ARGS]\n"
	       "Checks a job as the SPANK plugin would: verdict, findings with fixes, memory\n"
	       "per GPU, checkpoint interval and estimates.  Exit 0 accept, 1 warn, 2 reject.\n\n"
	       "      --script FILE          read FILE as sbatch would: its #SBATCH lines, then the\n"
	       "                             launch command, the trainer's flags and the config\n"
	       "                             files they name (relative to the current directory);\n"
	       "                             resource and workload options given here win\n"
	       "      -- ARGS                the script's arguments ($1, $2, ...), as the words\n"
	       "                             after the script name on sbatch's command line\n"
	       "      --verbose              for a job that is not an LLM job, what the reader\n"
	       "                             read that says so (the program it runs)\n"
	       "%s\n%s", job_help(), common_help());
}

/* A command's own option (OPT_TOP and after); returns 0 or an exit status. */
typedef int (*own_opt_fn)(struct ctl *c, int opt, const char *arg, void *ctx);

/*
 * The options every job command takes (common + resources + workload), plus
 * the command's own from longopts (NULL: none), handed to own with ctx.
 */
static int parse_job_rest(struct ctl *c, int argc, char **argv, struct adv_request *req,
			  void (*help)(void), const struct option *longopts, own_opt_fn own,
			  void *ctx, int *rest)
{
	static const struct option job_longopts[] = {
		COMMON_OPTS JOB_OPTS, { NULL, 0, NULL, 0 }
	};
	/* sbatch's short options, by the long name jobreq_apply_named takes. */
	static const struct {
		int opt;
		const char *name;
	} shorts[] = {
		{ 'G', "gpus" }, { 'N', "nodes" }, { 'n', "ntasks" }, { 'p', "partition" },
		{ 'C', "constraint" },
	};
	int opt, idx, rc;

	if (!longopts)
		longopts = job_longopts;
	engine_request_init(req);
	jobreq_opts_init(&c->slurm);
	c->gpu_set = false;
	optind = 1;
	while ((opt = getopt_long(argc, argv, JOB_SHORTOPTS, longopts, &idx)) != -1) {
		const char *name = opt < 0x100 ? NULL : longopts[idx].name;

		if (opt == OPT_HELP) {
			help();
			exit(0);
		}
		if (opt == '?')
			return usage_error(c->cmd, "bad option");
		if (opt == 'A')
			opt = OPT_ACCOUNT;
		for (size_t i = 0; i < ADV_ARRAY_SIZE(shorts); i++)
			if (opt == shorts[i].opt) {
				opt = OPT_SLURM;
				name = shorts[i].name;
			}
		if (own && opt >= OPT_TOP)
			rc = own(c, opt, optarg, ctx);
		else
			rc = job_opt(c, req, opt, name, optarg);
		if (rc)
			return rc;
	}
	/* After "--": the words for the caller (check --script FILE -- ARGS). */
	if (rest && optind > 1 && optind <= argc && !strcmp(argv[optind - 1], "--")) {
		*rest = optind;
		return 0;
	}
	if (rest)
		*rest = argc;
	if (optind < argc)
		return usage_error(c->cmd, "unexpected argument '%s'", argv[optind]);
	job_resources(c, NULL, req, NULL, NULL, NULL, 0);
	return 0;
}

static int parse_job(struct ctl *c, int argc, char **argv, struct adv_request *req,
		     void (*help)(void), const struct option *longopts, own_opt_fn own,
		     void *ctx)
{
	return parse_job_rest(c, argc, argv, req, help, longopts, own, ctx, NULL);
}

/* ---- check --script ---------------------------------------------------------- */

struct script {
	const char *path;           /* as given */
	struct scripttext text;     /* as sbatch would ship it (scripttext.h) */
	bool verbose;               /* --verbose */
};

static int check_opt(struct ctl *c, int opt, const char *arg, void *ctx)
{
	struct script *sc = ctx;

	(void)c;
	if (opt == OPT_VERBOSE)
		sc->verbose = true;
	else
		sc->path = arg;
	return 0;
}

/*
 * The script as sbatch sends it and the plugin ships it (issue 27): up to
 * Slurm's max_script_size, compacted by the plugin's own scripttext.c.
 * slurm.conf is loaded for the limit only when the script is over Slurm's
 * default (a site may have raised it).
 */
static int script_read(struct script *sc)
{
	size_t limit = scripttext_limit(NULL);
	struct stat st;

	if (stat(sc->path, &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size > limit)
		limit = slurmgres_script_max();
	if (scripttext_read(&sc->text, sc->path, 0, limit, 0) != 0) {
		fprintf(stderr, "advisorctl: --script %s: %s\n", sc->path, strerror(errno));
		return errno == ENOMEM ? EX_SOFTWARE_ : EX_DATAERR_;
	}
	return 0;
}

/* True when a script line ends the #SBATCH block (a command), as sbatch. */
static bool script_is_command(const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	return *line != '\0' && *line != '\n' && *line != '#';
}

/*
 * The --llm-* options of the #SBATCH lines (SPANK options are sbatch
 * options there too): "--llm-layout=tp8" or "--llm-layout tp8".
 */
static int script_llm_options(struct ctl *c, const struct script *sc, struct adv_workload *wl)
{
	const char *p = sc->text.text;
	char err[ADV_ERR_MAX];

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char line[1024], *save = NULL, *w;

		if (!strncmp(p, "#SBATCH", 7) && n < sizeof(line)) {
			memcpy(line, p + 7, n - 7);
			line[n - 7] = '\0';
			line[strcspn(line, "#")] = '\0';
			for (w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
				char *eq, *val;

				if (strncmp(w, "--llm-", 6) != 0)
					continue;
				eq = strchr(w, '=');
				if (eq) {
					*eq = '\0';
					val = eq + 1;
				} else {
					val = strtok_r(NULL, " \t\r", &save);
				}
				if (!val || options_apply(wl, w + 2, val, err, sizeof(err)) != 0) {
					fprintf(stderr, "advisorctl: %s: #SBATCH %s: %s\n", sc->path, w,
						val ? err : "a value is required");
					return EX_DATAERR_;
				}
			}
		} else if (script_is_command(p)) {
			break;
		}
		p = eol ? eol + 1 : NULL;
	}
	return 0;
}

/* Resources from the #SBATCH lines, under the command line's (as sbatch). */
static int script_resources(struct ctl *c, const struct script *sc, struct adv_request *ar,
			    int *ntasks, int *ntasks_per_node, char *workdir, size_t wlen)
{
	struct jobreq_opts script, *comp = calloc(JOBREQ_HET_MAX, sizeof(*comp));
	char err[256];
	int n = 0;

	if (!comp) {
		fprintf(stderr, "advisorctl: out of memory\n");
		return EX_SOFTWARE_;
	}
	if (jobreq_parse_script_het(sc->text.text, sc->text.len, comp, JOBREQ_HET_MAX, &n, NULL, err,
				    sizeof(err)) != 0) {
		fprintf(stderr, "advisorctl: %s: %s\n", sc->path, err);
		free(comp);
		return EX_DATAERR_;
	}
	/* What Slurm refuses of --gpus beside GPUs per node, per component
	 * (the first under the command line's options, as sbatch merges). */
	for (int i = 0; i < n && i < JOBREQ_HET_MAX; i++) {
		const struct jobreq_opts *layers[2] = { &c->slurm, &comp[i] };
		struct jobreq_opts m;

		jobreq_merge(layers + (i > 0), i > 0 ? 1 : 2, &m);
		if (jobreq_check_gpus(&m, err, sizeof(err)) != 0) {
			fprintf(stderr, "advisorctl: %s: %s\n", sc->path, err);
			free(comp);
			return EX_DATAERR_;
		}
	}
	script = comp[0];
	if (n > 1) {
		/* A heterogeneous job holds every component's nodes and GPUs;
		 * the reader judges each srun step against its own component
		 * (launch.c, het_step).  Tasks stay the first component's: a
		 * step without --het-group runs there. */
		struct jobreq u;

		jobreq_het_union(comp, n < JOBREQ_HET_MAX ? n : JOBREQ_HET_MAX, &u);
		script.nodes = u.nodes;
		script.gpus = u.gpus;
		adv_strlcpy(script.gpus_type, u.gpu_type, sizeof(script.gpus_type));
		script.gpus_per_node = u.gpus_per_node;
		adv_strlcpy(script.gpn_type, u.gpu_type, sizeof(script.gpn_type));
		script.gpus_per_task = 0;
		script.gres_gpus = 0;
	}
	free(comp);
	job_resources(c, &script, ar, ntasks, ntasks_per_node, workdir, wlen);
	return 0;
}

extern char **environ;

/*
 * Sends a check that carries the job's text, and ships the files the
 * reader asks for (read here, as the user, like the plugin does) until it
 * answers, within JOBREAD_MAX_ROUNDS.
 */
static int check_call(struct ctl *c, Advisor__Request *req, struct jobship *js, struct reply *rp)
{
	int rc;

	for (int round = 0;; round++) {
		const Advisor__CheckResponse *cr;

		if (js)
			req->check->job = jobship_text(js, round + 1 >= JOBREAD_MAX_ROUNDS);
		rc = call(c, req, rp);
		if (rc)
			return rc;
		cr = rp->r->check;
		if (!js || !cr || cr->n_need_files == 0 || round + 1 >= JOBREAD_MAX_ROUNDS)
			return 0;
		if (jobship_fetch(js, cr->need_files, cr->n_need_files) != 0) {
			fprintf(stderr, "advisorctl: out of memory reading the job's files\n");
			return EX_SOFTWARE_;   /* rp stays for the caller to free */
		}
		reply_free(rp);
	}
}

/*
 * Judges the script sc->path (NULL: the resources alone) as sbatch would
 * run it, with the resources of ar and c->slurm over its #SBATCH lines,
 * args its arguments and env the environment it would see: the one path
 * of `check --script` and `audit` (issue 30), so both judge a job alike.
 * On 0, rp holds the check's answer; *js is the caller's to free.
 */
static int script_check(struct ctl *c, struct script *sc, struct adv_request *ar, int nargs,
			char **args, char **env, struct jobship **js, struct reply *rp)
{
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	struct convert_request_pb buf;
	int ntasks = 0, ntpn = 0, rc;

	*js = NULL;
	memset(rp, 0, sizeof(*rp));
	arena_init(&rp->arena);
	if (sc->path) {
		struct adv_request sb;
		char cwd[JOBREAD_PATH_MAX];

		engine_request_init(&sb);
		rc = script_read(sc);
		if (!rc)
			rc = script_resources(c, sc, ar, &ntasks, &ntpn, cwd, sizeof(cwd));
		if (!rc)
			rc = script_llm_options(c, sc, &sb.wl);
		if (rc)
			return rc;
		options_merge(&ar->wl, &sb.wl);
		if (!cwd[0])
			adv_strlcpy(cwd, "/", sizeof(cwd));
		*js = jobship_new(JOBREAD_SCRIPT, sc->path, &sc->text, nargs, args, env, cwd,
				  ntasks, ntpn);
		if (!*js) {
			fprintf(stderr, "advisorctl: out of memory\n");
			return EX_SOFTWARE_;
		}
	}
	req.body_case = ADVISOR__REQUEST__BODY_CHECK;
	req.check = convert_request_to_pb(ar, ADV_CTX_ADVISORCTL, 0, NULL, &buf);
	rc = check_call(c, &req, *js, rp);
	if (rc == 0 && (!rp->r->check || rp->r->body_case != ADVISOR__RESPONSE__BODY_CHECK)) {
		fprintf(stderr, "advisorctl: the daemon answered a check with something else\n");
		rc = EX_SOFTWARE_;
	}
	return rc;
}

static int cmd_check(struct ctl *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_OPTS JOB_OPTS,
		{ "script", required_argument, NULL, OPT_SCRIPT },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
		{ NULL, 0, NULL, 0 },
	};
	struct adv_request ar;
	struct adv_result res;
	struct script sc = { NULL, { NULL, 0, 0, 0, JOBREAD_CUT_NONE }, false };
	struct jobship *js = NULL;
	struct reply rp;
	int rest = argc;
	int rc = parse_job_rest(c, argc, argv, &ar, check_help, longopts, check_opt, &sc, &rest);

	if (rc)
		return rc;
	if (rest < argc && !sc.path)
		return usage_error(c->cmd, "arguments after '--' are the script's: give --script FILE");
	/* The words after "--" are the script's arguments, as sbatch's words
	 * after the script name. */
	rc = script_check(c, &sc, &ar, argc - rest, argv + rest, environ, &js, &rp);
	if (rc == 0) {
		convert_result_from_pb(rp.r->check, &res);
		print_check(stdout, &res, rp.r->check->decision_id, c->json);
		/* Why a job is not an LLM job (issue 28: the program read). */
		if (sc.verbose && !c->json)
			print_not_llm_why(stdout, &res);
		rc = (int)res.verdict;
	}
	reply_free(&rp);
	jobship_free(js);
	scripttext_free(&sc.text);
	return rc;
}

static void plan_help(void)
{
	printf("Usage: advisorctl [--json] [--local ...] plan [RESOURCES] --model NAME [WORKLOAD]\n"
	       "          [--top N] [--cross-node-tp]\n"
	       "Ranks the layouts that fit, best first, by estimated tokens/s; each is complete\n"
	       "enough that passing it back to check gives the same memory figures.  The\n"
	       "layout, --zero, --mbs and --recompute are what the planner chooses.\n"
	       "Exit 0 with plans, 2 when nothing fits.\n\n%s"
	       "      --top N                how many plans (default 5, at most 64)\n"
	       "      --cross-node-tp        also plans whose TP spans nodes\n\n%s",
	       job_help(), common_help());
}

static int plan_opt(struct ctl *c, int opt, const char *arg, void *ctx)
{
	Advisor__PlanRequest *pr = ctx;
	char err[ADV_ERR_MAX];

	if (opt == OPT_TOP) {
		if (options_parse_int("--top", arg, 1, 100, &pr->top, err, sizeof(err)) != 0)
			return usage_error(c->cmd, "%s", err);
		pr->has_top = 1;
	} else {
		pr->has_cross_node_tp = 1;
		pr->cross_node_tp = 1;
	}
	return 0;
}

static int cmd_plan(struct ctl *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_OPTS JOB_OPTS,
		{ "top", required_argument, NULL, OPT_TOP },
		{ "cross-node-tp", no_argument, NULL, OPT_CROSS_TP },
		{ NULL, 0, NULL, 0 },
	};
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	Advisor__PlanRequest pr = ADVISOR__PLAN_REQUEST__INIT;
	struct convert_resources_pb rb;
	struct convert_workload_pb wb;
	struct adv_request ar;
	struct reply rp;
	int rc;

	rc = parse_job(c, argc, argv, &ar, plan_help, longopts, plan_opt, &pr);
	if (rc)
		return rc;
	pr.resources = convert_resources_to_pb(&ar.res, &rb);
	pr.workload = convert_workload_to_pb(&ar.wl, &wb);
	req.body_case = ADVISOR__REQUEST__BODY_PLAN;
	req.plan = &pr;
	rc = call(c, &req, &rp);
	if (rc == 0 && rp.r->plan) {
		print_plan(stdout, rp.r->plan, c->json);
		/* Nothing fits: the job as asked would be rejected. */
		rc = rp.r->plan->n_plans ? 0 : ADV_REJECT;
	}
	reply_free(&rp);
	return rc;
}

static void ckpt_help(void)
{
	printf("Usage: advisorctl [--json] [--local ...] ckpt [RESOURCES] --model NAME [--ckpt D]\n"
	       "       advisorctl ckpt --job-mtbf-hours M --write-seconds C [--restart-seconds R]\n"
	       "          [--interval DURATION]\n"
	       "The checkpoint interval: Young and Daly optima, the exact-model optimum and the\n"
	       "waste of an interval.  Exit 0 accept, 1 warn, 2 reject.\n\n"
	       "Raw form:\n"
	       "      --job-mtbf-hours M     mean time between interruptions of the job, hours\n"
	       "      --write-seconds C      blocking time of one checkpoint\n"
	       "      --restart-seconds R    restart cost (default: policy restart_minutes)\n"
	       "      --interval DURATION    interval to score (90s, 30m, 2h, 1h30m)\n\n"
	       "%s\n%s", job_help(), common_help());
}

static int raw_double(struct ctl *c, const char *opt, const char *arg, double *out)
{
	if (adv_parse_double(arg, out) != 0 || *out < 0)
		return usage_error(c->cmd, "%s: '%s' is not a number (accepted: a number >= 0)",
				   opt, arg);
	return 0;
}

static int ckpt_opt(struct ctl *c, int opt, const char *arg, void *ctx)
{
	Advisor__CkptRequest *cr = ctx;
	char err[ADV_ERR_MAX];
	int rc = 0;

	switch (opt) {
	case OPT_MTBF:
		rc = raw_double(c, "--job-mtbf-hours", arg, &cr->job_mtbf_hours);
		cr->has_job_mtbf_hours = 1;
		if (!rc && cr->job_mtbf_hours <= 0)
			rc = usage_error(c->cmd, "--job-mtbf-hours: must be above 0");
		break;
	case OPT_WRITE:
		rc = raw_double(c, "--write-seconds", arg, &cr->write_seconds);
		cr->has_write_seconds = 1;
		break;
	case OPT_RESTART:
		rc = raw_double(c, "--restart-seconds", arg, &cr->restart_seconds);
		cr->has_restart_seconds = 1;
		break;
	default: /* OPT_INTERVAL */
		if (options_parse_duration(arg, &cr->interval_s, err, sizeof(err)) != 0)
			rc = usage_error(c->cmd, "--interval: %s", err);
		cr->has_interval_s = 1;
	}
	return rc;
}

static int cmd_ckpt(struct ctl *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_OPTS JOB_OPTS,
		{ "job-mtbf-hours", required_argument, NULL, OPT_MTBF },
		{ "write-seconds", required_argument, NULL, OPT_WRITE },
		{ "restart-seconds", required_argument, NULL, OPT_RESTART },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ NULL, 0, NULL, 0 },
	};
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	Advisor__CkptRequest cr = ADVISOR__CKPT_REQUEST__INIT;
	struct convert_resources_pb rb;
	struct convert_workload_pb wb;
	struct adv_request ar;
	struct reply rp;
	int rc;

	rc = parse_job(c, argc, argv, &ar, ckpt_help, longopts, ckpt_opt, &cr);
	if (rc)
		return rc;
	if ((cr.has_job_mtbf_hours || cr.has_write_seconds || cr.has_restart_seconds ||
	     cr.has_interval_s) && !(cr.has_job_mtbf_hours && cr.has_write_seconds))
		return usage_error(c->cmd, "the raw form needs --job-mtbf-hours and --write-seconds");
	if (!cr.has_job_mtbf_hours) {
		cr.resources = convert_resources_to_pb(&ar.res, &rb);
		cr.workload = convert_workload_to_pb(&ar.wl, &wb);
	}
	req.body_case = ADVISOR__REQUEST__BODY_CKPT;
	req.ckpt = &cr;
	rc = call(c, &req, &rp);
	if (rc == 0 && rp.r->ckpt) {
		print_ckpt(stdout, rp.r->ckpt, c->json);
		rc = rp.r->ckpt->has_verdict ? rp.r->ckpt->verdict : 0;
	}
	reply_free(&rp);
	return rc;
}

/* Commands whose only options are the common ones; returns positional args. */
static int parse_plain(struct ctl *c, int argc, char **argv, void (*help)(void), int max_pos)
{
	static const struct option longopts[] = { COMMON_OPTS { NULL, 0, NULL, 0 } };
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == OPT_HELP) {
			help();
			exit(0);
		}
		if (opt == '?')
			return -usage_error(c->cmd, "bad option");
		rc = common_opt(c, opt, optarg);
		if (rc)
			return -rc;
	}
	if (argc - optind > max_pos)
		return -usage_error(c->cmd, "unexpected argument '%s'", argv[optind + max_pos]);
	return optind;
}

static void catalog_help(void)
{
	printf("Usage: advisorctl [--json] catalog [gpus|models] [NAME]\n"
	       "Lists the catalog in force, or one GPU or model by name or alias.\n\n%s",
	       common_help());
}

static int cmd_catalog(struct ctl *c, int argc, char **argv)
{
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	Advisor__CatalogRequest cr = ADVISOR__CATALOG_REQUEST__INIT;
	struct reply rp;
	int i = parse_plain(c, argc, argv, catalog_help, 2), rc;

	if (i < 0)
		return -i;
	if (i < argc && (strcmp(argv[i], "gpus") == 0 || strcmp(argv[i], "models") == 0))
		cr.kind = argv[i++];
	if (i < argc)
		cr.name = argv[i++];
	if (i < argc)
		return usage_error(c->cmd, "unexpected argument '%s' (accepted: gpus, models, "
				   "then a NAME)", argv[i]);
	req.body_case = ADVISOR__REQUEST__BODY_CATALOG;
	req.catalog = &cr;
	rc = call(c, &req, &rp);
	if (rc == 0 && rp.r->catalog)
		print_catalog(stdout, rp.r->catalog, c->json);
	reply_free(&rp);
	return rc;
}

static void policy_help(void)
{
	printf("Usage: advisorctl [--json] policy\n"
	       "Prints the policy in force as YAML, every default filled in.\n\n%s", common_help());
}

static int cmd_policy(struct ctl *c, int argc, char **argv)
{
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	Advisor__PolicyRequest pr = ADVISOR__POLICY_REQUEST__INIT;
	struct reply rp;
	int i = parse_plain(c, argc, argv, policy_help, 0), rc;

	if (i < 0)
		return -i;
	req.body_case = ADVISOR__REQUEST__BODY_POLICY;
	req.policy = &pr;
	rc = call(c, &req, &rp);
	if (rc == 0 && rp.r->policy)
		print_policy(stdout, rp.r->policy, c->json);
	reply_free(&rp);
	return rc;
}

static void history_help(void)
{
	printf("Usage: advisorctl [--json] history [--user U] [--job ID] [--verdict V]\n"
	       "          [--since TIME] [--until TIME] [--script NAME] [--limit N]\n"
	       "          [--include-queries]\n"
	       "       advisorctl [--json] history --decision ID\n"
	       "Past decisions, newest first.  Users see their own; admins anyone's.\n"
	       "Decisions are what the plugin asked at sbatch, salloc, srun and on the node;\n"
	       "a record with REPEAT above 1 stands for that many identical checks of a user\n"
	       "over the request budget.\n\n"
	       "      --user U        decisions for user U (admins only for others)\n"
	       "      --job ID        decisions for Slurm job ID\n"
	       "      --verdict V     accept, warn or reject\n"
	       "      --since TIME    a duration back from now (7d, 24h, 30m) or a date\n"
	       "                      (2025-01-31 or 2025-01-31T12:00:00, local time)\n"
	       "      --until TIME    only decisions before TIME (the same forms)\n"
	       "      --script NAME   decisions of the batch script NAME, as sbatch was given\n"
	       "                      it (jobs/train.sbatch, stdin) or its file name alone\n"
	       "                      (train.sbatch): a rejected job has no job id\n"
	       "      --limit N       at most N decisions (default 50, at most 5000)\n"
	       "      --include-queries\n"
	       "                      also the what-if queries (advisorctl check), kept 7\n"
	       "                      days apart from the decisions\n"
	       "      --decision ID   one decision as the user saw it: advisorctl show ID\n\n%s",
	       common_help());
}

static void show_help(void)
{
	printf("Usage: advisorctl [--json] show DECISION\n"
	       "One decision (or what-if query) as its user saw it: the verdict, every\n"
	       "finding with its message and fixes, the workload and where each of its\n"
	       "values came from, the script, and the linked decisions: the submission a\n"
	       "node check belongs to and the node checks of a submission.  DECISION is the\n"
	       "id sbatch printed (\"advisor: decision ID\"), ADVISOR_DECISION_ID in the job,\n"
	       "or the DECISION column of history.  Users see their own; admins anyone's.\n"
	       "Exit 0, 65 when no decision has that id, 77 for another user's decision.\n\n%s",
	       common_help());
}

/* Prints show's answer: 0, or EX_DATAERR_ when no decision has the id. */
static int show_print(struct ctl *c, const Advisor__HistoryResponse *r, const char *id)
{
	if (!r || r->n_decisions == 0) {
		fprintf(stderr, "advisorctl: no decision %s in the decision log (history lists the "
			"ids; decisions older than the policy's retention_days are pruned)\n", ADV_TEXT(id));
		return EX_DATAERR_;
	}
	print_show(stdout, r, c->json);
	return 0;
}

static int show_call(struct ctl *c, const char *id)
{
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	Advisor__HistoryRequest hr = ADVISOR__HISTORY_REQUEST__INIT;
	struct reply rp;
	int rc;

	hr.decision = (char *)id;
	req.body_case = ADVISOR__REQUEST__BODY_HISTORY;
	req.history = &hr;
	rc = call(c, &req, &rp);
	if (rc == 0)
		rc = show_print(c, rp.r->history, id);
	reply_free(&rp);
	return rc;
}

static int cmd_show(struct ctl *c, int argc, char **argv)
{
	int i = parse_plain(c, argc, argv, show_help, 1);

	if (i < 0)
		return -i;
	if (i >= argc || !argv[i][0])
		return usage_error(c->cmd, "which decision? (the id sbatch printed, or history's "
				   "DECISION column)");
	return show_call(c, argv[i]);
}

static int parse_since(struct ctl *c, const char *opt, const char *s, int64_t *out)
{
	static const char *const fmts[] = { "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S",
					    "%Y-%m-%dT%H:%M", "%Y-%m-%d" };
	char err[ADV_ERR_MAX];
	double secs;

	if (options_parse_duration(s, &secs, err, sizeof(err)) == 0) {
		*out = (int64_t)time(NULL) - (int64_t)secs;
		return 0;
	}
	for (size_t i = 0; i < ADV_ARRAY_SIZE(fmts); i++) {
		struct tm tm = { 0 };
		const char *end = strptime(s, fmts[i], &tm);

		if (end && !*end) {
			tm.tm_isdst = -1;
			*out = (int64_t)mktime(&tm);
			return 0;
		}
	}
	return usage_error(c->cmd, "%s: '%s' is neither a duration (7d, 24h, 30m) nor a "
			   "date (2025-01-31, 2025-01-31T12:00:00)", opt, s);
}

static int cmd_history(struct ctl *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_OPTS
		{ "user", required_argument, NULL, OPT_USER },
		{ "job", required_argument, NULL, OPT_JOB },
		{ "verdict", required_argument, NULL, OPT_VERDICT },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "include-queries", no_argument, NULL, OPT_QUERIES },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "script", required_argument, NULL, OPT_SCRIPT },
		{ "decision", required_argument, NULL, OPT_DECISION },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const verdicts[] = { "accept", "warn", "reject", NULL };
	const char *decision = NULL;
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	Advisor__HistoryRequest hr = ADVISOR__HISTORY_REQUEST__INIT;
	char err[ADV_ERR_MAX];
	struct reply rp;
	int opt, rc, v;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		rc = 0;
		switch (opt) {
		case OPT_HELP: history_help(); exit(0);
		case '?': return usage_error(c->cmd, "bad option");
		case OPT_USER: hr.user = optarg; break;
		case OPT_JOB:
			if (options_parse_int("--job", optarg, 1, 0x7fffffff, &v, err, sizeof(err)))
				return usage_error(c->cmd, "%s", err);
			hr.has_job_id = 1;
			hr.job_id = (uint32_t)v;
			break;
		case OPT_VERDICT:
			if (options_parse_enum("--verdict", optarg, verdicts, &v, err, sizeof(err)))
				return usage_error(c->cmd, "%s", err);
			hr.has_verdict = 1;
			hr.verdict = v;
			break;
		case OPT_SINCE:
			rc = parse_since(c, "--since", optarg, &hr.since);
			hr.has_since = 1;
			break;
		case OPT_UNTIL:
			rc = parse_since(c, "--until", optarg, &hr.until);
			hr.has_until = 1;
			break;
		case OPT_SCRIPT:
			if (!optarg[0])
				return usage_error(c->cmd, "--script: give the script's name");
			hr.script = optarg;
			break;
		case OPT_DECISION:
			if (!optarg[0])
				return usage_error(c->cmd, "--decision: give the decision's id");
			decision = optarg;
			break;
		case OPT_LIMIT:
			if (options_parse_int("--limit", optarg, 1, 5000, &v, err, sizeof(err)))
				return usage_error(c->cmd, "%s", err);
			hr.has_limit = 1;
			hr.limit = v;
			break;
		case OPT_QUERIES:
			hr.has_include_queries = 1;
			hr.include_queries = 1;
			break;
		default:
			rc = common_opt(c, opt, optarg);
		}
		if (rc)
			return rc;
	}
	if (optind < argc)
		return usage_error(c->cmd, "unexpected argument '%s'", argv[optind]);
	/* One decision: the filters of a list do not apply to it. */
	if (decision)
		return show_call(c, decision);
	req.body_case = ADVISOR__REQUEST__BODY_HISTORY;
	req.history = &hr;
	rc = call(c, &req, &rp);
	if (rc == 0 && rp.r->history)
		print_history(stdout, rp.r->history, c->json);
	reply_free(&rp);
	return rc;
}

static void stats_help(void)
{
	printf("Usage: advisorctl [--json] stats [--prometheus]\n"
	       "Requests, verdicts, errors and latency (p50/p99) since the daemon started.\n\n"
	       "      --prometheus    Prometheus text exposition: requests by kind, checks by\n"
	       "                      partition and verdict, findings by code and severity,\n"
	       "                      latency histogram, reloads, decision log queue, uptime.\n"
	       "                      Prints advisor_up 0 (and exits 69) when the daemon is\n"
	       "                      down, for node_exporter's textfile collector.\n\n%s",
	       common_help());
}

static int cmd_stats(struct ctl *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_OPTS
		{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
		{ NULL, 0, NULL, 0 },
	};
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	Advisor__StatsRequest sr = ADVISOR__STATS_REQUEST__INIT;
	bool prometheus = false;
	struct reply rp;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == OPT_HELP) {
			stats_help();
			exit(0);
		}
		if (opt == '?')
			return usage_error(c->cmd, "bad option");
		if (opt == OPT_PROMETHEUS) {
			prometheus = true;
			continue;
		}
		rc = common_opt(c, opt, optarg);
		if (rc)
			return rc;
	}
	if (optind < argc)
		return usage_error(c->cmd, "unexpected argument '%s'", argv[optind]);
	if (prometheus && c->json)
		return usage_error(c->cmd, "--prometheus and --json exclude each other");
	req.body_case = ADVISOR__REQUEST__BODY_STATS;
	req.stats = &sr;
	rc = call(c, &req, &rp);
	if (rc == 0 && rp.r->stats) {
		if (prometheus)
			print_prometheus(stdout, rp.r->stats);
		else
			print_stats(stdout, rp.r->stats, c->json);
	} else if (prometheus && rc == EX_UNAVAIL_) {
		print_prometheus_down(stdout);
	}
	reply_free(&rp);
	return rc;
}

static void report_help(void)
{
	printf("Usage: advisorctl [--json] report [--since TIME] [--user U] [--by job|decision]\n"
	       "What the decision log says about a period: jobs by verdict, mode and\n"
	       "partition, and per finding code and severity how many jobs and distinct users\n"
	       "it concerned.  WOULD-REJECT counts jobs judged in mode warn that mode enforce\n"
	       "would have rejected: what enforcement would have blocked.  EXEMPT jobs (the\n"
	       "policy's exempt: users and accounts, a partition's mode off) were accepted\n"
	       "unchecked and are counted apart.  Users see their own decisions; admins\n"
	       "everyone's.\n\n"
	       "      --since TIME    a duration back from now (7d, 24h, 30m) or a date\n"
	       "                      (2025-01-31 or 2025-01-31T12:00:00, local time);\n"
	       "                      default 7d\n"
	       "      --user U        only decisions of user U (admins only for others)\n"
	       "      --by job        (default) one count per job: its submission (sbatch,\n"
	       "                      salloc, srun), with the node checks that name it folded\n"
	       "                      in; a node check that names none counts as a job\n"
	       "      --by decision   one count per decision: a job's submission and each of\n"
	       "                      its node checks\n\n%s",
	       common_help());
}

static void reload_help(void)
{
	printf("Usage: advisorctl reload\n"
	       "Reloads catalog and policy (admins only).  A broken file is reported with\n"
	       "file:line:col and the previous configuration stays; exit 65 then.\n\n%s",
	       common_help());
}

static void status_help(void)
{
	printf("Usage: advisorctl [--json] status\n"
	       "Is the daemon up, which files it serves, since when.  Exit 69 when it is not.\n\n%s",
	       common_help());
}

static int cmd_simple(struct ctl *c, int argc, char **argv, Advisor__Request__BodyCase body,
		      void (*help)(void))
{
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	Advisor__ReloadRequest rr = ADVISOR__RELOAD_REQUEST__INIT;
	Advisor__StatusRequest st = ADVISOR__STATUS_REQUEST__INIT;
	struct reply rp;
	int i = parse_plain(c, argc, argv, help, 0), rc;

	if (i < 0)
		return -i;
	req.body_case = body;
	if (body == ADVISOR__REQUEST__BODY_RELOAD)
		req.reload = &rr;
	else
		req.status = &st;
	rc = call(c, &req, &rp);
	if (rc == 0) {
		if (body == ADVISOR__REQUEST__BODY_STATUS && rp.r->status)
			print_status(stdout, rp.r->status, c->json);
		else if (body == ADVISOR__REQUEST__BODY_RELOAD && rp.r->reload) {
			print_reload(c->json || rp.r->reload->ok ? stdout : stderr, rp.r->reload,
				      c->json);
			if (!rp.r->reload->ok)
				rc = EX_DATAERR_;
		}
	}
	reply_free(&rp);
	return rc;
}

#define REPORT_DEFAULT_SINCE_S (7 * 86400)
#define AUDIT_DEFAULT_SINCE_S (7 * 86400)
#define AUDIT_DEFAULT_LIMIT 1000
#define AUDIT_MAX_LIMIT 100000

static int cmd_report(struct ctl *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_OPTS
		{ "user", required_argument, NULL, OPT_USER },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "by", required_argument, NULL, OPT_BY },
		{ NULL, 0, NULL, 0 },
	};
	Advisor__Request req = ADVISOR__REQUEST__INIT;
	Advisor__ReportRequest rr = ADVISOR__REPORT_REQUEST__INIT;
	struct reply rp;
	int opt, rc;

	rr.has_since = 1;
	rr.since = (int64_t)time(NULL) - REPORT_DEFAULT_SINCE_S;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_HELP: report_help(); exit(0);
		case '?': return usage_error(c->cmd, "bad option");
		case OPT_USER: rr.user = optarg; rc = 0; break;
		case OPT_SINCE: rc = parse_since(c, "--since", optarg, &rr.since); break;
		case OPT_BY:
			if (strcmp(optarg, "job") && strcmp(optarg, "decision"))
				return usage_error(c->cmd, "--by takes job or decision, not '%s'",
						   optarg);
			rr.has_by_decision = 1;
			rr.by_decision = strcmp(optarg, "decision") == 0;
			rc = 0;
			break;
		default: rc = common_opt(c, opt, optarg);
		}
		if (rc)
			return rc;
	}
	if (optind < argc)
		return usage_error(c->cmd, "unexpected argument '%s'", argv[optind]);
	req.body_case = ADVISOR__REQUEST__BODY_REPORT;
	req.report = &rr;
	rc = call(c, &req, &rp);
	if (rc == 0 && rp.r->report)
		print_report(stdout, rp.r->report, c->json);
	reply_free(&rp);
	return rc;
}

static void audit_help(void)
{
	printf("Usage: advisorctl [--json] audit [--since TIME] [--until TIME] [--user U]\n"
	       "          [--partition P] [--limit N] [--catalog FILE] [--policy FILE]\n"
	       "Judges the jobs Slurm's accounting kept (sacct), each batch script as\n"
	       "`check --script` judges one, in-process with the given (or installed) catalog\n"
	       "and policy: what advisor would have said, the GPU-hours, and how each job\n"
	       "really ended.  Needs sacct and slurmdbd with AccountingStoreFlags=job_script\n"
	       "(and job_env for the environment); a job without a stored script is listed,\n"
	       "not judged.  Exit 0, or 69 when sacct or slurmdbd is not there.\n\n"
	       "      --since TIME    jobs that ran since TIME (default 7d)\n"
	       "      --until TIME    ... until TIME (default now)\n"
	       "      --user U        jobs of user U only\n"
	       "      --partition P   jobs of partition P only\n"
	       "      --limit N       at most N jobs, the oldest first (default %d)\n"
	       "\n%s", AUDIT_DEFAULT_LIMIT, common_help());
}

/* Writes text to path (mode 0600: another user's script). */
static int write_file(const char *path, const char *text, size_t len)
{
	FILE *f;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);

	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fwrite(text, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/*
 * Judges job j (its script in text) as its own sbatch would have been:
 * the resources Slurm gave it (partition, nodes, account, the working
 * directory; the GPUs when the script does not ask for them, i.e. they
 * were given on sbatch's command line) over its #SBATCH lines, with its
 * stored environment.
 */
static void audit_judge(struct ctl *c, struct audit_job *j, const char *path, char **env)
{
	struct script sc = { path, { NULL, 0, 0, 0, JOBREAD_CUT_NONE }, false };
	struct adv_request ar, probe;
	struct adv_result res;
	struct jobship *js = NULL;
	struct reply rp;
	char err[ADV_ERR_MAX], num[32];
	int rc;

	jobreq_opts_init(&c->slurm);
	c->gpu_set = false;
	engine_request_init(&ar);
	adv_strlcpy(ar.account, j->account, sizeof(ar.account));
	if (j->partition[0])
		jobreq_apply_named(&c->slurm, "partition", j->partition, err, sizeof(err));
	if (j->nnodes > 0) {
		adv_snprintf(num, sizeof(num), "%d", j->nnodes);
		jobreq_apply_named(&c->slurm, "nodes", num, err, sizeof(err));
	}
	if (j->workdir[0])
		jobreq_apply_named(&c->slurm, "chdir", j->workdir, err, sizeof(err));
	engine_request_init(&probe);
	if (script_read(&sc) == 0 &&
	    script_resources(c, &sc, &probe, NULL, NULL, NULL, 0) == 0 && probe.res.gpus == 0 &&
	    j->gpus > 0) {
		adv_snprintf(num, sizeof(num), "%d", j->gpus);
		jobreq_apply_named(&c->slurm, "gpus", num, err, sizeof(err));
	}
	scripttext_free(&sc.text);
	rc = script_check(c, &sc, &ar, 0, NULL, env, &js, &rp);
	if (rc == 0) {
		size_t n = 0;

		convert_result_from_pb(rp.r->check, &res);
		j->judged = true;
		j->verdict = res.verdict;
		j->exempt = res.exempt[0] != '\0';
		for (int i = 0; i < res.n_findings && i < ADV_MAX_FINDINGS; i++)
			if (res.findings[i].severity != ADV_SEV_INFO)
				n += adv_snprintf(j->codes + n, sizeof(j->codes) - n, "%s%s",
						  n ? "," : "", res.findings[i].code);
	} else {
		adv_snprintf(j->why, sizeof(j->why), "not judged (exit %d, see stderr)", rc);
	}
	reply_free(&rp);
	jobship_free(js);
	scripttext_free(&sc.text);
}

static int cmd_audit(struct ctl *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_OPTS
		{ "user", required_argument, NULL, OPT_USER },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "partition", required_argument, NULL, OPT_SLURM },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ NULL, 0, NULL, 0 },
	};
	struct audit_query q = { 0, 0, NULL, NULL, AUDIT_DEFAULT_LIMIT, 0 };
	struct audit_job *jobs = NULL;
	char dir[] = "/tmp/advisor-audit.XXXXXX", path[sizeof(dir) + 16];
	size_t n = 0, max;
	bool more = false;
	long v;
	int opt, rc;

	q.since = (int64_t)time(NULL) - AUDIT_DEFAULT_SINCE_S;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_HELP: audit_help(); exit(0);
		case '?': return usage_error(c->cmd, "bad option");
		case OPT_USER: q.user = optarg; rc = 0; break;
		case OPT_SLURM: q.partition = optarg; rc = 0; break;
		case OPT_SINCE: rc = parse_since(c, "--since", optarg, &q.since); break;
		case OPT_UNTIL: rc = parse_since(c, "--until", optarg, &q.until); break;
		case OPT_LIMIT:
			if (adv_parse_long(optarg, &v) != 0 || v < 1 || v > AUDIT_MAX_LIMIT)
				return usage_error(c->cmd, "--limit: '%s' is not a number of jobs "
						   "(accepted: 1..%d)", optarg, AUDIT_MAX_LIMIT);
			q.limit = (size_t)v;
			rc = 0;
			break;
		default: rc = common_opt(c, opt, optarg);
		}
		if (rc)
			return rc;
	}
	if (optind < argc)
		return usage_error(c->cmd, "unexpected argument '%s'", argv[optind]);
	/* The policy under test, in this process: never the daemon's. */
	c->local = true;
	q.timeout_ms = c->timeout_ms;
	rc = audit_list(&q, &jobs, &n, &more);
	if (rc)
		return rc;
	if (!mkdtemp(dir)) {
		fprintf(stderr, "advisorctl: mkdtemp: %s\n", strerror(errno));
		free(jobs);
		return EX_SOFTWARE_;
	}
	/* As sbatch's own bound: the site's max_script_size, or Slurm's default. */
	max = slurmgres_script_max();
	/* The name slurmd gives the script it runs. */
	adv_snprintf(path, sizeof(path), "%s/slurm_script", dir);
	for (size_t i = 0; i < n; i++) {
		struct audit_job *j = &jobs[i];
		char *text = NULL, **env = NULL;
		size_t len = 0;
		int s = audit_script(j->id, c->timeout_ms, max, &text, &len, j->why, sizeof(j->why));

		if (s == 1)
			adv_strlcpy(j->why, "no script stored", sizeof(j->why));
		if (s != 0)
			continue;
		if (write_file(path, text, len) != 0) {
			adv_snprintf(j->why, sizeof(j->why), "%s: %s", path, strerror(errno));
		} else {
			/* No stored environment: the job's own script alone decides. */
			static char *no_env[] = { NULL };

			if (audit_env(j->id, c->timeout_ms, &env) != 0)
				env = NULL;
			audit_judge(c, j, path, env ? env : no_env);
		}
		audit_env_free(env);
		free(text);
		unlink(path);
	}
	rmdir(dir);
	audit_print(stdout, jobs, n, more, c->json);
	free(jobs);
	return 0;
}

static int cmd_reload(struct ctl *c, int argc, char **argv)
{
	return cmd_simple(c, argc, argv, ADVISOR__REQUEST__BODY_RELOAD, reload_help);
}

static int cmd_status(struct ctl *c, int argc, char **argv)
{
	return cmd_simple(c, argc, argv, ADVISOR__REQUEST__BODY_STATUS, status_help);
}

static const struct command {
	const char *name;
	int (*fn)(struct ctl *c, int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "check", cmd_check, "resources + workload -> verdict, findings, memory, checkpoint, estimates" },
	{ "plan", cmd_plan, "resources + model -> ranked layouts that fit, best first" },
	{ "ckpt", cmd_ckpt, "checkpoint interval of a job, or the raw --job-mtbf-hours form" },
	{ "catalog", cmd_catalog, "[gpus|models] [NAME]: the GPU and model catalog" },
	{ "policy", cmd_policy, "the policy in force" },
	{ "history", cmd_history, "past decisions (--user --job --verdict --since --until\n"
	  "           --script --limit --include-queries --decision)" },
	{ "show", cmd_show, "DECISION: one decision as its user saw it, with its linked ones" },
	{ "report", cmd_report, "per-code summary of a period: what enforcement would block" },
	{ "audit", cmd_audit, "past jobs from Slurm's accounting, judged with this policy" },
	{ "stats", cmd_stats, "counters and latency of the running daemon (--prometheus)" },
	{ "reload", cmd_reload, "reload catalog and policy (admins only)" },
	{ "status", cmd_status, "is the daemon up, which files it serves, since when" },
};

static void main_help(FILE *f)
{
	fprintf(f, "Usage: advisorctl [--socket PATH] [--json] [--local --catalog FILE... "
		"--policy FILE]\n                  COMMAND [ARGS]\n\nCommands:\n");
	for (size_t i = 0; i < ADV_ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n%s\n'advisorctl COMMAND --help' describes each command.\n"
		"Exit status: 0 accept, 1 warn, 2 reject, 64 usage, 65 bad input file,\n"
		"69 daemon unavailable, 70 internal error, 75 rate limited (retry later),\n"
		"77 permission denied.  See advisorctl(1).\n",
		common_help());
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_OPTS
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl c = { .socket = ADV_SOCKET_PATH, .timeout_ms = 10000 };
	int opt, rc;

	/* "+": global options end at the command name. */
	while ((opt = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		if (opt == OPT_HELP || opt == 'h') {
			main_help(stdout);
			return 0;
		}
		if (opt == 'V') {
			printf("advisorctl %s\n", PACKAGE_VERSION);
			return 0;
		}
		if (opt == '?')
			return usage_error(NULL, "bad option");
		rc = common_opt(&c, opt, optarg);
		if (rc)
			return rc;
	}
	if (optind >= argc) {
		main_help(stderr);
		return EX_USAGE_;
	}
	for (size_t i = 0; i < ADV_ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[optind], commands[i].name) == 0) {
			c.cmd = ctl_cmd = commands[i].name;
			/* --local before the command: refused as after it. */
			if ((c.local || c.n_catalogs || c.policy) && !takes_local(c.cmd))
				return usage_error(c.cmd, "%s does not take --local, --catalog or "
						   "--policy: it needs the running daemon's state "
						   "(--local answers check, plan, ckpt, catalog and "
						   "policy)", c.cmd);
			return commands[i].fn(&c, argc - optind, argv + optind);
		}
	}
	return usage_error(NULL, "unknown command '%s' (accepted: check, plan, ckpt, catalog, "
			   "policy, history, show, report, audit, stats, reload, status)", argv[optind]);
}
