/*
 * jobdigest.h - the digest of a job's own text (issue 27): what a node
 * check compares with the submission it names as its parent.
 */
#ifndef ADVISOR_JOBDIGEST_H
#define ADVISOR_JOBDIGEST_H

#include <stddef.h>

#include "advisor.pb-c.h"

/* SHA-256 as lowercase hex, and its NUL. */
#define JOBDIGEST_HEX 65

/*
 * The digest of what was shipped of the job: the kind of text (a batch
 * script or a command), the script's bytes and the arguments, each
 * length-prefixed so that no two jobs share an encoding.  Not the script's
 * name (sbatch gives the user's, slurmstepd slurmd's spool copy), the
 * environment or the files read (both differ between the submit host and
 * the node).  0, or -1 when job is NULL or the digest cannot be made
 * (out[0] = '\0').
 */
int jobdigest_of(const Advisor__JobText *job, char out[JOBDIGEST_HEX]);

#endif
