/*
 * local.c - the submission-time check in sbatch and salloc (SPANK allocator
 * context) and srun (local context).
 *
 * Slurm 22.05 gives the plugin no job item here, so the request is rebuilt
 * from /proc/self/cmdline, the batch script and the environment (jobreq.c),
 * sent to advisord with a bounded timeout (wire_client_check), and the
 * verdict applied: reject -> return -1 so nothing is submitted; warn ->
 * print; accept -> quiet.  The verdict annotates the job through plain
 * setenv() (reaches the job environment) and spank_job_control_setenv()
 * (reaches prolog/epilog as SPANK_ADVISOR_DECISION_ID).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context.h"
#include "jobreq.h"
#include "util.h"
#include "wire.h"

/* The #SBATCH block is at the top of a script: this is plenty, and it
 * stays under glibc's mmap threshold (see local_slurp). */
#define LOCAL_SCRIPT_MAX (64 * 1024)
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
 * starts small and grows: a command line or a batch script is a few KiB,
 * and one 256 KiB malloc() would be mmap()ed and its free() would raise
 * glibc's mmap threshold, so that sbatch's own large calloc()s (setenvf's
 * 256 KiB buffers) come from the heap and get memset: that alone cost more
 * than everything else the plugin does for a job without GPUs.
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

/*
 * The batch script: the file named on the command line, or stdin when it
 * is a regular file ("sbatch < job.sh"; re-opened through /proc so sbatch's
 * own offset is untouched).  A pipe on stdin was already consumed by
 * sbatch and is skipped.
 */
static char *local_script(int argc, char *const argv[], size_t *len)
{
	struct jobreq_opts o;
	struct stat st;
	char err[128];

	jobreq_opts_init(&o);
	if (jobreq_parse_argv_spank(JOBREQ_SBATCH, argc, argv, environ, &o, NULL, err,
				    sizeof(err)) != 0 || o.wrap)
		return NULL;
	if (o.script[0])
		return local_slurp(o.script, LOCAL_SCRIPT_MAX, len);
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode))
		return local_slurp("/proc/self/fd/0", LOCAL_SCRIPT_MAX, len);
	return NULL;
}

static const char *local_getenv(const char *name, void *arg)
{
	(void)arg;
	return getenv(name);
}

static int local_unavailable(const struct plugin_state *st, const char *why)
{
	if (st->args.deny_unavailable) {
		slurm_error("advisor: the advisor is unavailable (daemon at %s: %s) and this "
			    "cluster requires every GPU/LLM job to be checked (on_unavailable=deny); "
			    "job not submitted, retry later or contact your administrators",
			    st->args.socket, why);
		return -1;
	}
	if (!st->args.quiet)
		slurm_info("advisor: daemon unavailable at %s (%s); job not checked",
			   st->args.socket, why);
	return 0;
}

static void local_annotate(spank_t sp, const struct adv_result *res, const char *id)
{
	char values[REPORT_NVARS][64];
	int i;

	report_vars(res, id, values);
	for (i = 0; i < REPORT_NVARS; i++)
		if (values[i][0] && setenv(report_var_names[i], values[i], 1) != 0)
			slurm_error("advisor: cannot set %s: %s", report_var_names[i], strerror(errno));
	if (id[0] && spank_job_control_setenv(sp, "ADVISOR_DECISION_ID", id, 1) != ESPANK_SUCCESS)
		slurm_verbose("advisor: spank_job_control_setenv(ADVISOR_DECISION_ID) failed");
}

static int local_apply(spank_t sp, const struct plugin_state *st, const struct adv_request *req,
		       const struct adv_result *res, const char *id)
{
	struct plugin_lines lines;
	int i;

	report_lines(res, req, !st->args.quiet, &lines);
	if (res->verdict == ADV_REJECT) {
		for (i = 0; i < lines.n; i++)
			slurm_error("%s", lines.line[i]);
		if (id[0])
			slurm_error("advisor: decision %s; nothing was submitted", id);
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

/* Builds the request; returns 1 when the job needs no check. */
static int local_request(const struct plugin_state *st, enum jobreq_tool tool,
			 struct adv_request *req, uint32_t *job_id)
{
	char *cmdbuf = NULL, *script = NULL, *argv[LOCAL_MAX_ARGS];
	char err[256] = "";
	size_t script_len = 0;
	struct jobreq r;
	int argc, rc;

	argc = local_cmdline(&cmdbuf, argv, LOCAL_MAX_ARGS);
	if (tool == JOBREQ_SBATCH)
		script = local_script(argc, argv, &script_len);
	rc = jobreq_build_spank(tool, argc, argv, environ, script, script_len, local_getenv, NULL, &r,
				err, sizeof(err));
	free(script);
	free(cmdbuf);
	if (rc != 0) {
		slurm_info("advisor: cannot read the job's resources (%s); job not checked", err);
		return 1;
	}
	/* Inside an allocation, a step is checked here only when it names its
	 * own --llm-* options: inherited ones were checked with the job, and
	 * the node checks every step against the real allocation. */
	if (r.in_allocation && r.llm_options == 0)
		return 1;
	if (st->n_llm == 0 && r.llm_options == 0 && r.gpus == 0)
		return 1;
	engine_request_init(req);
	req->wl = st->wl;
	adv_strlcpy(req->res.gpu, r.gpu_type, sizeof(req->res.gpu));
	req->res.gpus = r.gpus;
	req->res.nodes = r.nodes;
	req->res.gpus_per_node = r.gpus_per_node;
	adv_strlcpy(req->res.partition, r.partition, sizeof(req->res.partition));
	report_user_name((unsigned)getuid(), req->user, sizeof(req->user));
	*job_id = r.job_id;
	return 0;
}

int local_check(spank_t sp, struct plugin_state *st)
{
	enum jobreq_tool tool = local_tool();
	struct adv_request req;
	struct adv_result res;
	char id[64] = "", err[256] = "";
	uint32_t job_id = 0;
	int rc;

	if (local_request(st, tool, &req, &job_id) != 0)
		return 0;
	rc = wire_client_check(st->args.socket, st->args.timeout_ms, &req, local_wire_context(tool),
			       job_id, NULL, &res, id, sizeof(id), err, sizeof(err));
	if (rc != WIRE_OK) {
		char why[320];

		/* err often repeats wire_strerror(rc): say it once. */
		if (err[0] && strstr(err, wire_strerror(rc)))
			adv_strlcpy(why, err, sizeof(why));
		else
			adv_snprintf(why, sizeof(why), "%s%s%s", wire_strerror(rc), err[0] ? ": " : "", err);
		return local_unavailable(st, why);
	}
	return local_apply(sp, st, &req, &res, id);
}
