/*
 * spank_advisor.c - the SPANK entry points of spank_advisor.so.
 *
 * Registers the --llm-* options of engine/optlist.h (spank_option_register
 * in slurm_spank_init: Slurm 22.05 does not read a static spank_options[]
 * table in allocator context), validates each value in its callback with
 * the same parser as advisorctl (options_apply_id), and hands the work to
 * the file of the context: local.c (sbatch, salloc, srun) or remote.c
 * (slurmstepd).
 * All state is file-static and the .so exports only the SPANK symbols, so
 * nothing can bind to sbatch's or srun's own globals (e.g. their `opt`).
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "context.h"
#include "engine/options.h"
#include "util.h"
#include "wire/scripttext.h"
#include "wire/wire.h"

/*
 * libslurm's loaded configuration, for SlurmUser (issue 20) and
 * SchedulerParameters' max_script_size (issue 27): not in
 * Slurm's public headers, but a global of libslurm (libslurmfull in sbatch,
 * srun and slurmstepd) since 20.11 whose type slurm.h declares.  Weak: a
 * process without it leaves the default (root, the caller, user "slurm").
 */
extern slurm_conf_t slurm_conf __attribute__((weak, visibility("default")));

/*
 * The build hides every symbol (-fvisibility=hidden); the SPANK ones must
 * be visible again for Slurm's dlsym().  Everything else in this file is
 * static.
 */
#pragma GCC visibility push(default)
SPANK_PLUGIN(advisor, 1);

static struct plugin_state advisor_state;
static bool advisor_options_bad;
static char advisor_options_err[ADV_MSG_MAX];

static int advisor_option_cb(int val, const char *optarg, int remote);

/* The SPANK rows of engine/optlist.h, val = enum options_id. */
#define ADVISOR_SPANK_ROW(id, name, arg, sbatch, plugin_help, ctl_help) \
	OPTIONS_IF_SBATCH(sbatch, { "llm-" name, arg, "advisor: " plugin_help, 1, \
				    OPTIONS_##id, advisor_option_cb },)
static struct spank_option advisor_options[] = {
	OPTIONS_LIST(ADVISOR_SPANK_ROW)
};
#undef ADVISOR_SPANK_ROW

static int advisor_option_cb(int val, const char *optarg, int remote)
{
	char err[ADV_MSG_MAX];

	if (val < 0 || val >= OPTIONS_COUNT)
		return -1;
	if (options_apply_id(&advisor_state.wl, (enum options_id)val, optarg ? optarg : "",
			     err, sizeof(err)) != 0) {
		if (remote) {
			/* Failing here on the node would drain it: fail the tasks instead. */
			advisor_options_bad = true;
			adv_snprintf(advisor_options_err, sizeof(advisor_options_err), "advisor: %s", err);
			return 0;
		}
		slurm_error("advisor: %s", err);
		return -1;
	}
	advisor_state.n_llm++;
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	struct adv_request blank;
	char err[1024];
	size_t i;

	/* Field by field, not memset: remote_lines is 20 KiB that only a
	 * remote reject writes, and touching it costs page faults in every
	 * sbatch.  The state is static, so it starts zeroed anyway. */
	advisor_state.n_llm = 0;
	advisor_state.remote_reject = false;
	advisor_state.remote_fd = -1;
	advisor_state.remote_rc = WIRE_ERR_CONNECT;
	advisor_state.remote_lines.n = 0;
	/* The batch script as sbatch may send it: Slurm's own bound. */
	advisor_state.script_max = scripttext_limit(&slurm_conf ? slurm_conf.sched_params : NULL);
	engine_request_init(&blank);
	advisor_state.wl = blank.wl;
	args_defaults(&advisor_state.args);
	if (args_parse(ac, av, &advisor_state.args, err, sizeof(err)) > 0)
		slurm_error("advisor: plugstack.conf: %s (ignored)", err);
	if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE)
		return 0;
	/* Who advisord must be (issue 20): server_uid=, else SlurmUser from
	 * the slurm.conf sbatch, srun or slurmstepd has loaded; root and the
	 * caller are trusted anyway (wire.h). */
	if (advisor_state.args.server_uid != (uid_t)-1)
		wire_set_server_uid(advisor_state.args.server_uid);
	else if (&slurm_conf && slurm_conf.slurm_user_id != 0)
		wire_set_server_uid((uid_t)slurm_conf.slurm_user_id);
	/* A failed registration (e.g. the plugin listed twice) is reported but
	 * never fails init: a required plugin failing init stops every sbatch
	 * and srun on the cluster, and the user who types --llm-* still gets
	 * Slurm's own "unrecognized option". */
	for (i = 0; i < ADV_ARRAY_SIZE(advisor_options); i++)
		if (spank_option_register(sp, &advisor_options[i]) != ESPANK_SUCCESS)
			slurm_error("advisor: cannot register --%s", advisor_options[i].name);
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	switch (spank_context()) {
	case S_CTX_ALLOCATOR:
	case S_CTX_LOCAL:
		return local_check(sp, &advisor_state);
	case S_CTX_REMOTE:
		/* Still root here: advisord believes a node check's uid only from root. */
		if (!advisor_options_bad)
			remote_connect(sp, &advisor_state);
		return 0;
	default:
		/* Never fail here in remote context: it drains the node. */
		return 0;
	}
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE && !advisor_options_bad)
		remote_check(sp, &advisor_state);
	return 0;
}

/* A step whose user_init never ran (none to check there after all) leaves
 * the node check's connection open: it is closed here, not at the
 * daemon's idle timeout. */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (advisor_state.remote_fd >= 0) {
		close(advisor_state.remote_fd);
		advisor_state.remote_fd = -1;
	}
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	if (advisor_options_bad) {
		slurm_error("%s", advisor_options_err);
		return -1;
	}
	return remote_task_init(sp, &advisor_state);
}
#pragma GCC visibility pop
