/*
 * remote.c - the node-side check in slurmstepd (SPANK remote context).
 *
 * Here Slurm knows the real allocation, so a job that bypassed the
 * submission check (an edited environment, a private plugstack.conf on the
 * submit host) is checked again: once per step, on the step's node 0, with
 * the job's node count and the GPUs Slurm bound on the node
 * (SLURM_GPUS_ON_NODE), recorded by the daemon with the job id and the
 * submission's decision id.  A reject fails the step in task_init only:
 * failing init, init_post_opt or user_init of a batch step makes slurmd
 * drain the node ("batch job complete failure"), which would punish the
 * node for the user's mistake.  A job the submission judged from its
 * own text (script, command) keeps the submission's ADVISOR_* values.
 *
 * A batch step with no submission decision (the submission bypassed the
 * plugin, or the daemon was unavailable then) or whose submission could
 * not read the script (sbatch fed on a pipe: ADVISOR_SCRIPT_UNREAD=1) or
 * read part of it only (issue 27: ADVISOR_SCRIPT_UNREAD=partial) is
 * judged here from the batch script the batch host holds (issue 20):
 * slurmstepd runs it as argv[0] of the batch step, written by slurmd as
 * SlurmdSpoolDir/job%05u/slurm_script (src/slurmd/slurmstepd/mgr.c
 * _make_batch_script).  It is read in user_init, as the job's user, up to
 * Slurm's max_script_size within half of timeout_ms, never through a
 * symbolic link or from anything but a regular file, compacted as sbatch
 * compacts it (scripttext.c: the same script ships the same bytes), and
 * shipped to the daemon's job reader like sbatch ships it (jobship.c):
 * the plugin reads, the daemon parses.
 * An srun step with no decision at all (srun past the plugin) has its
 * command shipped likewise.  A step that names a decision ships its text
 * too, with the job's uid: the id comes from the job's environment, which
 * the user controls, and advisord judges the text unless its log confirms
 * the id is this job's (PARENT_UNCONFIRMED).  plugstack.conf
 * on_unchecked=allow turns this off.  Findings print their
 * fix in the job's own terms first, as at submission (annotate.c).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "context.h"
#include "engine/findings.h"
#include "util.h"
#include "wire/jobship.h"
#include "wire/wire.h"

static const char *remote_env(char **env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static int remote_env_int(char **env, const char *name)
{
	const char *v = remote_env(env, name);
	long l;

	if (!v || adv_parse_long(v, &l) != 0 || l < 0 || l > 1000000)
		return 0;
	return (int)l;
}

static void remote_fail(struct plugin_state *st, const char *line)
{
	st->remote_reject = true;
	if (st->remote_lines.n < PLUGIN_MAX_LINES)
		adv_strlcpy(st->remote_lines.line[st->remote_lines.n++], line, PLUGIN_LINE_MAX);
}

static void remote_annotate(spank_t sp, const struct adv_result *res, const char *id)
{
	char values[REPORT_NVARS][64];
	int i;

	annotate_vars(res, id, values);
	for (i = 0; i < REPORT_NVARS; i++)
		if (values[i][0] && spank_setenv(sp, annotate_var_names[i], values[i], 1) != ESPANK_SUCCESS)
			slurm_info("advisor: cannot set %s for the tasks", annotate_var_names[i]);
}

/* The job's text when no check has read it (issue 20): the batch step's
 * script (into *script, which the caller frees), or an srun step's
 * command; NULL otherwise. */
static struct jobship *remote_ship(spank_t sp, const struct plugin_state *st, char **env,
				   struct scripttext *script)
{
	uint32_t step = 0;
	int argc = 0, ntasks, per_node;
	char **argv = NULL, path[PLUGIN_PATH_MAX];
	const char *base, *cwd;

	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return NULL;
	/* The script runs in the job's working directory (srun's tasks in
	 * srun's): relative paths are read from there. */
	cwd = remote_env(env, "PWD");
	if (!cwd || cwd[0] != '/')
		cwd = remote_env(env, "SLURM_SUBMIT_DIR");
	ntasks = remote_env_int(env, "SLURM_NTASKS");
	per_node = remote_env_int(env, "SLURM_NTASKS_PER_NODE");
	/* An srun step: its command, as srun would have shipped it. */
	if (step != SLURM_BATCH_SCRIPT) {
		if (step == SLURM_EXTERN_CONT || step == SLURM_INTERACTIVE_STEP ||
		    spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 || !argv)
			return NULL;
		return jobship_new(JOBREAD_SRUN, NULL, NULL, argc, argv, env, cwd ? cwd : "/", ntasks,
				   per_node);
	}
	/* slurmd's own file, not whatever the user's job names: argv[0] of
	 * the batch step is the script slurmd wrote (mgr.c
	 * _make_batch_script sets it: observed on 22.05, and so in the
	 * source of later releases). */
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 || !argv ||
	    !argv[0] || argv[0][0] != '/')
		return NULL;
	base = strrchr(argv[0], '/');
	if (!base || strcmp(base + 1, "slurm_script") != 0)
		return NULL;
	adv_strlcpy(path, argv[0], sizeof(path));
	if (scripttext_read(script, path, SCRIPTTEXT_SPOOL, st->script_max,
			    args_read_ms(&st->args)) != 0) {
		slurm_info("advisor: cannot read the batch script %s: %s", path, strerror(errno));
		return NULL;
	}
	return jobship_new(JOBREAD_SBATCH, "batch script", script, argc - 1, argv + 1, env,
			   cwd ? cwd : "/", ntasks, per_node);
}

/* The job's resources as Slurm allocated them; 1 when nothing to check. */
static int remote_request(spank_t sp, const struct plugin_state *st, struct adv_request *req,
			  uint32_t *job_id, const char **parent, char ***envp)
{
	uint32_t nodeid = 1, nnodes = 0, uid = 0;
	char **env = NULL;
	int nodes, gpn;
	const char *part, *acct;

	if (spank_get_item(sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS || nodeid != 0)
		return 1;
	if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS)
		env = NULL;
	if (spank_get_item(sp, S_JOB_ID, job_id) != ESPANK_SUCCESS)
		*job_id = 0;
	if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS)
		nnodes = 0;
	/* The job's allocation, not the step's: every step of a job is judged
	 * like the job, so `srun -N1 hostname` inside it is not a new job. */
	nodes = remote_env_int(env, "SLURM_JOB_NUM_NODES");
	if (!nodes)
		nodes = (int)nnodes;
	gpn = remote_env_int(env, "SLURM_GPUS_ON_NODE");
	if (st->n_llm == 0 && gpn == 0)
		return 1;
	engine_request_init(req);
	req->wl = st->wl;
	req->res.nodes = nodes;
	req->res.gpus_per_node = gpn;
	req->res.gpus = nodes * gpn;
	part = remote_env(env, "SLURM_JOB_PARTITION");
	if (part)
		adv_strlcpy(req->res.partition, part, sizeof(req->res.partition));
	/* The account Slurm charged (the user's default when none was given). */
	acct = remote_env(env, "SLURM_JOB_ACCOUNT");
	if (acct)
		adv_strlcpy(req->account, acct, sizeof(req->account));
	if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS) {
		annotate_user_name(uid, req->user, sizeof(req->user));
		req->has_job_uid = true;
		req->job_uid = uid;
	}
	*parent = remote_env(env, "ADVISOR_DECISION_ID");
	if (!*parent)
		*parent = remote_env(env, "SLURM_SPANK_ADVISOR_DECISION_ID");
	*envp = env;
	return 0;
}

void remote_connect(spank_t sp, struct plugin_state *st)
{
	struct adv_request req;
	const char *parent;
	char **env, err[256];
	uint32_t job_id;
	int rc;

	st->remote_fd = -1;
	if (remote_request(sp, st, &req, &job_id, &parent, &env) != 0)
		return;
	rc = wire_open(st->args.socket, st->args.timeout_ms, &st->remote_fd, err, sizeof(err));
	st->remote_rc = rc;
	if (rc != WIRE_OK) {
		st->remote_fd = -1;
		slurm_info("advisor: job %u: cannot reach advisord at %s as root (%s); the node "
			   "check will connect as the job's user", job_id, st->args.socket,
			   err[0] ? err : wire_strerror(rc));
	}
}

void remote_check(spank_t sp, struct plugin_state *st)
{
	struct adv_request req;
	struct adv_result res;
	struct plugin_lines lines;
	char id[64] = "", err[256] = "", line[PLUGIN_LINE_MAX];
	const char *parent = NULL, *unread;
	struct jobship *js = NULL;
	struct scripttext script;
	char **env = NULL;
	uint32_t job_id = 0;
	bool from_script, batch, partly;
	int rc, i;

	if (remote_request(sp, st, &req, &job_id, &parent, &env) != 0)
		return;
	/* A submission decision judged the script already, unless sbatch said
	 * it could not read it: judging it twice would only repeat it.  The
	 * srun steps of a job judged here have this check's decision as their
	 * parent.  But the parent comes from the job's environment, which the
	 * user controls: the text goes along with the job's uid, and advisord
	 * judges it unless its log vouches for the parent (issue 27: this
	 * user's accepted or warned decision of the same text, used by no
	 * other job, that read the whole script; the answer says text_read;
	 * a submission that could not read its script, ADVISOR_SCRIPT_UNREAD,
	 * has no digest to vouch with).  It believes the uid and the parent
	 * only from root: the connection was made in init_post_opt, before
	 * slurmstepd dropped its privileges (remote_connect). */
	unread = remote_env(env, "ADVISOR_SCRIPT_UNREAD");
	partly = unread && strcmp(unread, PLUGIN_UNREAD_PART) == 0;
	memset(&script, 0, sizeof(script));
	if (!st->args.allow_unchecked)
		js = remote_ship(sp, st, env, &script);
	/* A daemon that did not answer root within timeout_ms is not asked
	 * again: the step would wait twice the budget. */
	rc = st->remote_rc == WIRE_ERR_TIMEOUT ? WIRE_ERR_TIMEOUT : WIRE_ERR_CONNECT;
	if (st->remote_fd >= 0) {
		rc = wire_client_check_job_on(st->remote_fd, st->args.timeout_ms, &req, ADV_CTX_STEP,
					      job_id, parent, js, &res, id, sizeof(id), err,
					      sizeof(err));
		close(st->remote_fd);
		st->remote_fd = -1;
	}
	/* No connection from root (or the daemon closed it since): as the
	 * user, whose check advisord judges from its text. */
	if (rc == WIRE_ERR_CONNECT || rc == WIRE_ERR_CLOSED || rc == WIRE_ERR_IO)
		rc = wire_client_check_job(st->args.socket, st->args.timeout_ms, &req, ADV_CTX_STEP,
					   job_id, parent, js, &res, id, sizeof(id), err,
					   sizeof(err));
	from_script = js != NULL && res.text_read;
	batch = from_script && script.text != NULL;
	jobship_free(js);
	scripttext_free(&script);
	if (rc != WIRE_OK) {
		if (err[0] && strstr(err, wire_strerror(rc)))
			adv_snprintf(line, sizeof(line), "advisor: daemon unavailable at %s (%s)",
				     st->args.socket, ADV_TEXT(err));
		else
			adv_snprintf(line, sizeof(line), "advisor: daemon unavailable at %s (%s%s%s)",
				     st->args.socket, wire_strerror(rc), err[0] ? ": " : "",
				     ADV_TEXT(err));
		if (st->args.deny_unavailable) {
			remote_fail(st, line);
			remote_fail(st, "advisor: step not started: this cluster requires a check "
				        "(on_unavailable=deny)");
		} else {
			slurm_info("%s; job %u not checked on the node", line, job_id);
		}
		return;
	}
	slurm_info("advisor: job %u node check: %s (model '%s', %d --llm options, %d GPUs on %d nodes%s; "
		   "decision %s, parent %s)", job_id, engine_verdict_name(res.verdict),
		   ADV_TEXT(req.wl.model), st->n_llm, req.res.gpus, req.res.nodes,
		   !from_script ? "" : batch ? ", batch script read" : ", command read", ADV_TEXT(id),
		   parent ? ADV_TEXT(parent) : "none");
	if (res.verdict == ADV_REJECT) {
		annotate_lines(&res, &req, false, &lines);
		for (i = 0; i < lines.n; i++)
			remote_fail(st, lines.line[i]);
		if (from_script && !batch)
			remote_fail(st, "advisor: this step's command was not checked at submission; "
				        "it was read on the node");
		else if (from_script && partly && parent && parent[0])
			remote_fail(st, "advisor: this job's batch script was checked only in part at "
				        "submission; it was read on the node");
		else if (from_script)
			remote_fail(st, "advisor: this job's batch script was not checked at submission; "
				        "it was read on the node");
		adv_snprintf(line, sizeof(line), "advisor: step rejected on the node (decision %s)", id);
		remote_fail(st, line);
		return;
	}
	/* A job judged at submission from its own text (no --llm-* option):
	 * the node sees only the allocation, so its answer knows less than
	 * the submission's.  The tasks keep the submission's ADVISOR_* values
	 * (already in the job's environment); the node's decision is logged. */
	if (!from_script && st->n_llm == 0 && parent && parent[0])
		return;
	/* Judged now: the job's later steps and the jobs it submits are not
	 * "unread" any more. */
	if (from_script && spank_unsetenv(sp, "ADVISOR_SCRIPT_UNREAD") != ESPANK_SUCCESS)
		slurm_info("advisor: cannot unset ADVISOR_SCRIPT_UNREAD for the tasks");
	remote_annotate(sp, &res, id);
}

/*
 * slurm_kill_job_step() changed twice (slurm/slurm.h at each tag):
 *   up to 23.02: (uint32_t job_id, uint32_t step_id, uint16_t signal)
 *   23.11-25.05: (uint32_t job_id, uint32_t step_id, uint16_t signal, uint16_t flags)
 *   25.11 on:    (slurm_step_id_t *step_id, uint16_t signal, uint16_t flags),
 *                the struct with a sluid first (0: the controller goes by
 *                job_id) and step_het_comp NO_VAL for a plain step, as
 *                SLURM_STEP_ID_INITIALIZER sets it.
 * Flags 0 in both newer forms: signal the step, as scancel does.
 */
static int remote_kill_step(uint32_t job, uint32_t step)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;

	id.job_id = job;
	id.step_id = step;
	return slurm_kill_job_step(&id, SIGKILL, 0);
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
	return slurm_kill_job_step(job, step, SIGKILL, 0);
#else
	return slurm_kill_job_step(job, step, SIGKILL);
#endif
}

/*
 * Only node 0 checks, so the tasks of the other nodes would run on: the
 * first task cancels the whole step.  slurm_kill_job_step() comes from the
 * host's own Slurm library (slurmstepd links libslurmfull), so the plugin
 * does not link libslurm itself.  The batch step runs on one node only.
 */
static void remote_cancel_step(spank_t sp)
{
	uint32_t job = 0, step = 0, task = 1;

	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &task) != ESPANK_SUCCESS || task != 0)
		return;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return;
	if (step == SLURM_BATCH_SCRIPT || step == SLURM_INTERACTIVE_STEP)
		return;
	if (remote_kill_step(job, step) != 0)
		slurm_info("advisor: cannot cancel step %u.%u", job, step);
}

/*
 * The lines go to the task's stderr, which slurmstepd forwards to srun once
 * srun has the step's I/O connected.  A step cancelled while srun is still
 * launching it loses them ("aborted before step completely launched"), and
 * the user would see only "Killed": so the first task waits a moment for
 * the launch to complete before it cancels the step.  Only a rejected step
 * pays the wait.
 */
static const struct timespec remote_cancel_delay = { 1, 0 };

int remote_task_init(spank_t sp, struct plugin_state *st)
{
	int i;

	if (!st->remote_reject)
		return 0;
	for (i = 0; i < st->remote_lines.n; i++)
		slurm_error("%s", st->remote_lines.line[i]);
	fflush(stderr);
	nanosleep(&remote_cancel_delay, NULL);
	remote_cancel_step(sp);
	return -1;
}
