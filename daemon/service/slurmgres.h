/*
 * slurmgres.h - the GPU type of a partition from the live cluster.
 *
 * policy.yaml may leave a partition's gpu: out; the type then comes from the
 * nodes' Gres=gpu:TYPE:N in Slurm, matched against catalog aliases.  The
 * daemon and `advisorctl --local` both ask through this module (service.c),
 * so they give the same answer, or the same reason why there is none.
 */
#ifndef ADVISOR_SLURMGRES_H
#define ADVISOR_SLURMGRES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * advisorctl: Slurm is asked once, in the caller, on first use, instead of
 * by the daemon's background thread.  Call before any function below.
 */
void slurmgres_foreground(void);

/*
 * Writes the GPU type of partition ("" = the default partition) to gpu.
 * Returns 0, or -1 when it is not known (no Slurm, no such partition, no
 * typed GPU gres), with why it is not in why (may be NULL).  Called from
 * worker threads: thread-safe, and never waits on slurmctld beyond the
 * first load (the answers are cached).
 */
int slurmgres_gpu_for_partition(const char *partition, char *gpu, size_t len,
				char *why, size_t whylen);

/*
 * Writes the name of the cluster's default partition (Default=YES) to name.
 * A job submitted without -p runs there, so its per-partition policy
 * applies.  Returns 0, or -1 when it is not known (no Slurm, no default).
 */
int slurmgres_default_partition(char *name, size_t len);

/*
 * Slurm's max_script_size (issue 27), from the configuration libslurm loads
 * (its own order, slurmgres.c; configless in a child), loaded and freed here: for
 * advisorctl, which reads a script as sbatch would send it.  Slurm's
 * default when no slurm.conf is readable or ADVISOR_NO_SLURM is set.
 */
size_t slurmgres_script_max(void);

/*
 * Where the GPU types come from, for start-up, --check-config and status:
 * "Slurm asked through /etc/slurm/slurm.conf: 3 partitions", "... through
 * configless, from slurmctld HOST:PORT (SLURM_CONF_SERVER) ...", or why
 * Slurm is not asked (issue 30: loudly, not only in a finding).  Starts
 * the refresh on first use, waits for the first load as callers do.
 * True when Slurm answered.
 */
bool slurmgres_source(char *buf, size_t len);
/* Room for slurmgres_source's text. */
#define SLURMGRES_SOURCE_MAX 512

#endif
