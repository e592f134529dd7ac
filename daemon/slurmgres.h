/*
 * slurmgres.h - the GPU type of a partition from the live cluster.
 *
 * policy.yaml may leave a partition's gpu: out; the type then comes from the
 * nodes' Gres=gpu:TYPE:N in Slurm, matched against catalog aliases.
 */
#ifndef ADVISOR_SLURMGRES_H
#define ADVISOR_SLURMGRES_H

#include <stddef.h>

/*
 * Writes the GPU type of partition ("" = the default partition) to gpu.
 * Returns 0, or -1 when it is not known (no Slurm, no such partition, no
 * typed GPU gres).  Called from worker threads: must be thread-safe and fast
 * (cache the answer).
 */
int slurmgres_gpu_for_partition(const char *partition, char *gpu, size_t len);

/*
 * Writes the name of the cluster's default partition (Default=YES) to name.
 * A job submitted without -p runs there, so its per-partition policy
 * applies.  Returns 0, or -1 when it is not known (no Slurm, no default).
 */
int slurmgres_default_partition(char *name, size_t len);

#endif
