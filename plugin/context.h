/*
 * context.h - the plugin's work in each SPANK context (local.c: sbatch,
 * salloc and srun on the submit host; remote.c: slurmstepd on the node).
 */
#ifndef ADVISOR_CONTEXT_H
#define ADVISOR_CONTEXT_H

#include <slurm/spank.h>

#include "plugin.h"

/* Allocator (sbatch, salloc) and local (srun) init_post_opt: the
 * submission-time check.  Returns -1 to stop the submission. */
int local_check(spank_t sp, struct plugin_state *st);

/* Remote init_post_opt, as root: on node 0 of a step to check, connects to
 * advisord (wire_open) for remote_check to use.  Never fails. */
void remote_connect(spank_t sp, struct plugin_state *st);
/* Remote user_init: the node-side check on node 0.  Never fails (a failure
 * there drains the node for batch jobs); a reject is kept for task_init. */
void remote_check(spank_t sp, struct plugin_state *st);
/* Remote task_init: fails the step when remote_check rejected. */
int remote_task_init(spank_t sp, struct plugin_state *st);

#endif
