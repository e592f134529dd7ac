/*
 * local.c - the submission-time check in sbatch and salloc (SPANK allocator
 * context) and srun (local context).
 *
 * Slurm 22.05 gives the plugin no job item here.  The resources come from
 * the host program's own parsed options where it exports them
 * (slurmopt.c), else are rebuilt from /proc/self/cmdline, the batch script
 * and the environment (jobreq.c; plugstack.conf resources=parse forces
 * this).  The job's own text goes with the request (jobship.c): for
 * sbatch the batch script (read here as the user, like sbatch's
 * src/sbatch/sbatch.c _get_script_buffer, up to Slurm's max_script_size
 * within half of timeout_ms, and compacted by scripttext.c; or the --wrap
 * command) and its arguments, for srun the command it runs, for salloc
 * nothing.  It is sent to advisord within the rest of timeout_ms
 * (wire_client_check_job, which also
 * ships the config files the daemon's reader asks for), and the verdict
 * applied: reject -> return -1 so nothing is submitted; warn -> print;
 * accept -> quiet; not an LLM job -> silent.  The verdict annotates the
 * job through plain setenv() (reaches the job environment) and
 * spank_job_control_setenv() (reaches prolog/epilog as
 * SPANK_ADVISOR_DECISION_ID).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context.h"
#include "slurmopt.h"
#include "util.h"
#include "wire/jobreq.h"
#include "wire/jobship.h"
#include "wire/endpoint.h"
#include "wire/wire.h"

#define LOCAL_CMDLINE_MAX (256 * 1024)
#define LOCAL_MAX_ARGS 4096

extern char *program_invocation_short_name;
extern char **environ;

static enum jobreq_tool local_tool(void)
{
	const char *p = program_invocation_short_name;

	if (p && strcmp(p, "salloc") == 0)
		return JOBREQ_SALLOC;
	if (p && strcmp(p, "srun") == 0)
		return JOBREQ_SRUN;
	return JOBREQ_SBATCH;
}

static enum adv_context local_wire_context(enum jobreq_tool t)
{
	return t == JOBREQ_SALLOC ? ADV_CTX_SALLOC : t == JOBREQ_SRUN ? ADV_CTX_SRUN : ADV_CTX_SBATCH;
}

/*
 * Reads up to max bytes of a file; NULL when it cannot be read.  The buffer
 * starts small and grows: a command line is a few KiB, and one 256 KiB
 * malloc() would be mmap()ed and its free() would raise glibc's mmap
 * threshold, so that sbatch's own large calloc()s (setenvf's 256 KiB
 * buffers) come from the heap and get memset: that alone cost more than
 * everything else the plugin does for a job without GPUs.  The batch
 * script is read the same way (scripttext_read, from a buffer of its size
 * up to 64 KiB): only a script whose shipped text, comments left out, is
 * over about 60 KiB pays that.
 */
#define LOCAL_SLURP_FIRST 4096

static char *local_slurp(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	size_t got = 0, cap = LOCAL_SLURP_FIRST < max ? LOCAL_SLURP_FIRST : max;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (got == cap) {
			size_t ncap = cap * 2 < max ? cap * 2 : max;
			char *nbuf;

			if (ncap == cap)
				break;
			nbuf = realloc(buf, ncap + 1);
			if (!nbuf)
				break;   /* keep what was read: the #SBATCH block is at the top */
			buf = nbuf;
			cap = ncap;
		}
		n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

/* argv of this process, from /proc/self/cmdline (NUL-separated). */
static int local_cmdline(char **buf, char **argv, int max)
{
	size_t len = 0, i;
	int n = 0;

	*buf = local_slurp("/proc/self/cmdline", LOCAL_CMDLINE_MAX, &len);
	if (!*buf)
		return 0;
	for (i = 0; i < len && n < max - 1; i += strlen(*buf + i) + 1)
		argv[n++] = *buf + i;
	argv[n] = NULL;
	return n;
}

/* What the submission command sees of the job; the buffers live until the
 * daemon has answered (the shipped text borrows them). */
struct local_job {
	char *cmdbuf;                 /* /proc/self/cmdline */
	char *argv[LOCAL_MAX_ARGS];
	int argc;
	struct jobreq_opts cmd;       /* the command line layer */
	int llm_options;              /* --llm-* on the command line */
	char cmd_err[256];            /* why the command line did not parse, "" when it did */
	struct scripttext text;       /* the script's shipped text (scripttext.h) */
	const char *script;           /* the script (or the --wrap command) as shipped, or NULL */
	size_t script_len;
	const char *script_name;      /* as the user named it */
	char *const *args;            /* sbatch: the script's arguments; srun: the command */
	int nargs;
};

/*
 * The batch script: the file named on the command line, or stdin when it
 * is a regular file ("sbatch < job.sh"; re-opened through /proc so sbatch's
 * own offset is untouched), or the --wrap command.  A pipe on stdin was
 * already consumed by sbatch and is skipped.  Read as sbatch sends it, up
 * to Slurm's max_script_size, within half of timeout_ms (the daemon gets
 * the rest), and compacted as the node will compact its copy.
 */
static void local_script(const struct plugin_state *ps, struct local_job *j)
{
	const char *path = NULL;
	struct stat st;
	int rc = -1;

	if (j->cmd.wrap) {
		if (j->cmd.wrap_text) {
			rc = scripttext_set(&j->text, j->cmd.wrap_text, strlen(j->cmd.wrap_text));
			j->script_name = "--wrap";
		}
	} else if (j->cmd.script[0]) {
		path = j->cmd.script;
		j->script_name = j->cmd.script;
		/* The words after the script are its arguments. */
		if (j->cmd.first_arg < j->argc) {
			j->args = j->argv + j->cmd.first_arg + 1;
			j->nargs = j->argc - j->cmd.first_arg - 1;
		}
	} else if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
		path = "/proc/self/fd/0";
		j->script_name = "stdin";
	}
	if (path)
		rc = scripttext_read(&j->text, path, 0, ps->script_max, args_read_ms(&ps->args));
	if (rc != 0)
		return;
	j->script = j->text.text;
	j->script_len = j->text.len;
	if (j->text.cut != JOBREAD_CUT_NONE)
		slurm_verbose("advisor: the batch script is %zu bytes; its first %zu are read "
			      "(%zu shipped)", j->text.size, j->text.read, j->text.len);
}

static const char *local_getenv(const char *name, void *arg)
{
	(void)arg;
	return getenv(name);
}

/* Where the address and the time are set, for admins reading the line (issue 20). */
static const char *local_where(const struct plugin_state *st)
{
	if (!endpoint_is_path(st->args.socket) && strchr(st->args.socket, ':'))
		return " (plugstack.conf server= and timeout_ms=; advisord --listen on the servers)";
	return " (plugstack.conf socket= and timeout_ms=; advisord --socket)";
}

static int local_unavailable(const struct plugin_state *st, const char *why)
{
	if (st->args.deny_unavailable) {
		slurm_error("advisor: the advisor is unavailable (daemon at %s: %s) and this "
			    "cluster requires every GPU/LLM job to be checked (on_unavailable=deny); "
			    "job not submitted, retry later or contact your administrators%s",
			    st->args.socket, ADV_TEXT(why), local_where(st));
		return -1;
	}
	if (!st->args.quiet)
		slurm_info("advisor: daemon unavailable at %s (%s); job not checked%s",
			   st->args.socket, ADV_TEXT(why), local_where(st));
	return 0;
}

static void local_annotate(spank_t sp, const struct adv_result *res, const char *id)
{
	char values[REPORT_NVARS][64];
	int i;

	annotate_vars(res, id, values);
	for (i = 0; i < REPORT_NVARS; i++)
		if (values[i][0] && setenv(annotate_var_names[i], values[i], 1) != 0)
			slurm_error("advisor: cannot set %s: %s", annotate_var_names[i], strerror(errno));
	if (id[0] && spank_job_control_setenv(sp, "ADVISOR_DECISION_ID", id, 1) != ESPANK_SUCCESS)
		slurm_verbose("advisor: spank_job_control_setenv(ADVISOR_DECISION_ID) failed");
}

static int local_apply(spank_t sp, const struct plugin_state *st, const struct adv_request *req,
		       const struct adv_result *res, const char *id)
{
	struct plugin_lines lines;
	int i;

	/* Read and found to be no LLM job (a plain MPI or CUDA program):
	 * silent, and only the decision id goes with the job, so that the
	 * node's check is linked to this one. */
	if (!res->llm_job && res->n_findings == 0 && res->verdict == ADV_ACCEPT) {
		/* The reason quotes the job's own words: escaped, as every
		 * other job text the plugin prints. */
		slurm_verbose("advisor: not an LLM job%s%s (decision %s)",
			      res->not_llm_why[0] ? ": " : "", ADV_TEXT(res->not_llm_why),
			      id[0] ? id : "none");
		if (id[0] && setenv("ADVISOR_DECISION_ID", id, 1) != 0)
			slurm_error("advisor: cannot set ADVISOR_DECISION_ID: %s", strerror(errno));
		if (id[0] && spank_job_control_setenv(sp, "ADVISOR_DECISION_ID", id, 1) != ESPANK_SUCCESS)
			slurm_verbose("advisor: spank_job_control_setenv(ADVISOR_DECISION_ID) failed");
		return 0;
	}
	annotate_lines(res, req, !st->args.quiet, &lines);
	if (res->verdict == ADV_REJECT) {
		for (i = 0; i < lines.n; i++)
			slurm_error("%s", lines.line[i]);
		/* Issue 21: the one command that shows the full reason again later. */
		if (id[0])
			slurm_error("advisor: decision %s; nothing was submitted; see: advisorctl show %s",
				    id, id);
		return -1;
	}
	for (i = 0; i < lines.n; i++) {
		if (res->verdict == ADV_WARN && !st->args.quiet)
			slurm_info("%s", lines.line[i]);
		else
			slurm_verbose("%s", lines.line[i]);
	}
	local_annotate(sp, res, id);
	return 0;
}

/* The resources: as Slurm resolved them, else parsed here. */
static int local_resources(const struct plugin_state *st, enum jobreq_tool tool,
			   const struct local_job *j, struct jobreq *r)
{
	struct jobreq_opts slurm;
	char err[256] = "";
	int rc = 0;

	if (!st->args.resources_parse) {
		jobreq_opts_init(&slurm);
		rc = slurmopt_read(tool, &slurm, err, sizeof(err));
		if (rc == 1) {
			jobreq_build_resolved(tool, &slurm, j->llm_options, local_getenv, NULL, r);
			slurm_verbose("advisor: resources as Slurm resolved them: %d GPUs, %d nodes, "
				      "%d tasks, partition '%s', account '%s'", r->gpus, r->nodes,
				      r->opt.ntasks, r->partition, r->opt.account);
			return 0;
		}
		if (rc < 0)
			slurm_verbose("advisor: Slurm's options not usable (%s); parsing the job", err);
		err[0] = '\0';
	}
	if (j->cmd_err[0]) {
		slurm_info("advisor: cannot read the job's resources (%s); job not checked",
			   j->cmd_err);
		return -1;
	}
	if (jobreq_build_parsed(tool, &j->cmd, j->llm_options, j->script, j->script_len,
				local_getenv, NULL, r, err, sizeof(err)) != 0) {
		slurm_info("advisor: cannot read the job's resources (%s); job not checked", err);
		return -1;
	}
	slurm_verbose("advisor: resources as parsed: %d GPUs, %d nodes, %d tasks, partition '%s', "
		      "account '%s'", r->gpus, r->nodes, r->opt.ntasks, r->partition, r->opt.account);
	return 0;
}

/* Does the job's text name a launcher or trainer (worth reading)? */
static bool local_has_launcher(enum jobreq_tool tool, const struct local_job *j)
{
	int i;

	if (tool == JOBREQ_SBATCH)
		return jobreq_mentions_launcher(j->script, j->script_len);
	if (tool == JOBREQ_SRUN)
		for (i = 0; i < j->nargs; i++)
			if (jobreq_mentions_launcher(j->args[i], strlen(j->args[i])))
				return true;
	return false;
}

/* The job's text for the daemon's reader; NULL when there is none. */
static struct jobship *local_ship(enum jobreq_tool tool, const struct local_job *j,
				  const struct jobreq *r)
{
	char cwd[JOBREAD_PATH_MAX];
	int ntasks = r->opt.ntasks, nodes = r->nodes > 0 ? r->nodes : 1;

	if (tool == JOBREQ_SALLOC || (tool == JOBREQ_SBATCH && !j->script) ||
	    (tool == JOBREQ_SRUN && j->nargs == 0))
		return NULL;
	/* The script (and srun's tasks) run in --chdir when the job gives one:
	 * its relative paths are read from there. */
	jobreq_workdir(&r->opt, cwd, sizeof(cwd));
	/* As Slurm derives it: one task per node unless told otherwise
	 * (counts are at most a million each: the product fits a long). */
	if (ntasks <= 0) {
		long n = r->opt.ntasks_per_node > 0 ? (long)r->opt.ntasks_per_node * nodes : nodes;

		ntasks = n > INT_MAX ? INT_MAX : (int)n;
	}
	if (tool == JOBREQ_SRUN)
		return jobship_new(JOBREAD_SRUN, NULL, NULL, j->nargs, j->args, environ, cwd, ntasks,
				   r->opt.ntasks_per_node);
	return jobship_new(JOBREAD_SBATCH, j->script_name, &j->text, j->nargs, j->args, environ, cwd,
			   ntasks, r->opt.ntasks_per_node);
}

/* Builds the request; returns 1 when the job needs no check. */
static int local_request(const struct plugin_state *st, enum jobreq_tool tool,
			 struct local_job *j, struct adv_request *req, uint32_t *job_id,
			 struct jobship **js)
{
	char err[256] = "";
	struct jobreq r;

	j->argc = local_cmdline(&j->cmdbuf, j->argv, LOCAL_MAX_ARGS);
	jobreq_opts_init(&j->cmd);
	/* A value this parser does not take (Slurm did: it got this far) only
	 * matters when Slurm's own values are not there (local_resources). */
	if (j->argc > 0 && jobreq_parse_argv_spank(tool, j->argc, j->argv, environ, &j->cmd,
						   &j->llm_options, err, sizeof(err)) != 0)
		adv_strlcpy(j->cmd_err, err, sizeof(j->cmd_err));
	if (tool == JOBREQ_SBATCH) {
		local_script(st, j);
	} else if (tool == JOBREQ_SRUN && j->cmd.first_arg < j->argc) {
		/* srun's command: the words after its options. */
		j->args = j->argv + j->cmd.first_arg;
		j->nargs = j->argc - j->cmd.first_arg;
	}
	if (local_resources(st, tool, j, &r) != 0)
		return 1;
	/* Inside an allocation, a step is checked here only when it names its
	 * own --llm-* options: inherited ones were checked with the job, and
	 * the node checks every step against the real allocation. */
	if (r.in_allocation && r.llm_options == 0)
		return 1;
	/* No GPU, no --llm-* and nothing that launches a trainer: no call. */
	if (st->n_llm == 0 && r.llm_options == 0 && r.gpus == 0 && !local_has_launcher(tool, j))
		return 1;
	engine_request_init(req);
	req->wl = st->wl;
	adv_strlcpy(req->res.gpu, r.gpu_type, sizeof(req->res.gpu));
	req->res.gpus = r.gpus;
	req->res.nodes = r.nodes;
	req->res.gpus_per_node = r.gpus_per_node;
	adv_strlcpy(req->res.partition, r.partition, sizeof(req->res.partition));
	adv_strlcpy(req->res.constraint, r.opt.constraint, sizeof(req->res.constraint));
	/* The policy's exempt accounts (issue 20); "" when the job names none. */
	adv_strlcpy(req->account, r.opt.account, sizeof(req->account));
	annotate_user_name((unsigned)getuid(), req->user, sizeof(req->user));
	*job_id = r.job_id;
	*js = local_ship(tool, j, &r);
	return 0;
}

int local_check(spank_t sp, struct plugin_state *st)
{
	enum jobreq_tool tool = local_tool();
	struct local_job job;
	struct jobship *js = NULL;
	struct adv_request req;
	struct adv_result res;
	char id[64] = "", err[256] = "";
	const char *unread = NULL;
	long long start = adv_now_ms(), left;
	uint32_t job_id = 0;
	int rc;

	/* Field by field: argv[] is 32 KiB that only local_cmdline writes. */
	job.cmdbuf = NULL;
	job.argc = 0;
	job.llm_options = 0;
	job.cmd_err[0] = '\0';
	memset(&job.text, 0, sizeof(job.text));
	job.script = NULL;
	job.script_len = 0;
	job.script_name = NULL;
	job.args = NULL;
	job.nargs = 0;
	rc = local_request(st, tool, &job, &req, &job_id, &js);
	/* The daemon gets what reading the job left of timeout_ms, and at
	 * least what the script's read may not take (args_read_ms). */
	left = st->args.timeout_ms - (adv_now_ms() - start);
	if (left < st->args.timeout_ms - args_read_ms(&st->args))
		left = st->args.timeout_ms - args_read_ms(&st->args);
	if (left < 1)
		left = 1;
	if (rc == 0)
		rc = wire_client_check_job(st->args.socket, (int)left, &req, local_wire_context(tool),
					   job_id, NULL, js, &res, id, sizeof(id), err, sizeof(err));
	else
		rc = -1;
	/* sbatch fed on a pipe: the script was consumed before the plugin
	 * ran, so the decision knows the resources only; or its text stood
	 * for part of it (issue 27).  remote.c reads the script on the node. */
	if (rc != -1 && tool == JOBREQ_SBATCH)
		unread = !job.script ? PLUGIN_UNREAD_NONE
		       : job.text.cut != JOBREAD_CUT_NONE ? PLUGIN_UNREAD_PART : NULL;
	jobship_free(js);
	scripttext_free(&job.text);
	free(job.cmdbuf);
	if (rc < 0)
		return 0;
	if (rc != WIRE_OK) {
		char why[320];

		/* err often repeats wire_strerror(rc): say it once. */
		if (err[0] && strstr(err, wire_strerror(rc)))
			adv_strlcpy(why, err, sizeof(why));
		else
			adv_snprintf(why, sizeof(why), "%s%s%s", wire_strerror(rc), err[0] ? ": " : "", err);
		return local_unavailable(st, why);
	}
	rc = local_apply(sp, st, &req, &res, id);
	if (rc == 0 && tool == JOBREQ_SBATCH) {
		if (unread ? setenv("ADVISOR_SCRIPT_UNREAD", unread, 1) : unsetenv("ADVISOR_SCRIPT_UNREAD"))
			slurm_error("advisor: cannot set ADVISOR_SCRIPT_UNREAD: %s", strerror(errno));
	}
	return rc;
}
