/*
 * scripttext.h - a batch script as advisor reads and ships it (issue 27).
 *
 * sbatch accepts a script up to Slurm's own bound, SchedulerParameters
 * max_script_size (4 MiB unless set); advisord's reader takes
 * JOBREAD_MAX_BYTES of it.  What lies between is one function of the
 * script's bytes, used by every client that ships a script: the plugin at
 * submission (plugin/local.c) and on the node (plugin/remote.c, slurmd's
 * copy), and advisorctl check --script, so that the same script is shipped
 * as the same bytes wherever it is read:
 *
 *  - a line that holds only blanks, or only a comment, is shipped as an
 *    empty line: its newline stays, so the line numbers in messages stay
 *    right, and 300 KiB of comments cost a byte a line.  Kept are "#!"
 *    lines and Slurm's directives ("#SBATCH", "#SLURM", "#PBS", "#BSUB";
 *    after blanks too, as a here-document writing another job script has
 *    them), a '#' line that continues the line before (a backslash at its
 *    end), and the line that ends a here-document whose word starts with
 *    '#'.  A '#' line inside a here-document or a quoted string is data to
 *    the shell, a comment of the Python or YAML it holds: nothing the
 *    reader uses either;
 *  - every other line is kept byte for byte;
 *  - the text ends after the last whole line that fits JOBREAD_MAX_BYTES.
 *
 * Where the text stands for less than the whole script, cut says why
 * (JobText.script_cut), and the daemon says so (SCRIPT_TRUNCATED).
 */
#ifndef ADVISOR_SCRIPTTEXT_H
#define ADVISOR_SCRIPTTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "jobtext.h"

/* Slurm's max_script_size unless SchedulerParameters sets it
 * (src/slurmctld/job_mgr.c, _test_job_desc_fields), and the most it may
 * be (src/common/read_config.c refuses a larger one). */
#define SCRIPTTEXT_SLURM_DEFAULT (4u * 1024 * 1024)
#define SCRIPTTEXT_SLURM_MAX (512u * 1024 * 1024)

struct scripttext {
	char *text;                   /* the shipped text, NUL-terminated (malloc'ed) */
	size_t len;                   /* at most JOBREAD_MAX_BYTES */
	size_t size;                  /* bytes in the script */
	size_t read;                  /* bytes of the script the text stands for (its start) */
	enum jobread_cut cut;         /* JOBREAD_CUT_NONE: read == size */
};

/*
 * Slurm's max_script_size in a SchedulerParameters string (slurm_conf's
 * sched_params), found and read as slurmctld does: the first
 * "max_script_size=" in any case, a decimal number after it.  NULL, no such
 * key or no positive number: SCRIPTTEXT_SLURM_DEFAULT; at most
 * SCRIPTTEXT_SLURM_MAX.
 */
size_t scripttext_limit(const char *sched_params);

/* scripttext_read flags: slurmd's spool copy, whose name the user does not
 * choose: never through a symbolic link (ELOOP), a regular file only (EINVAL). */
#define SCRIPTTEXT_SPOOL 1u

/*
 * Reads the script at path up to limit bytes (at most
 * SCRIPTTEXT_SLURM_MAX), and no longer than
 * timeout_ms (<= 0: no bound; checked between reads), never blocking on a
 * FIFO (O_NONBLOCK), and fills st with its shipped text.  Reading stops
 * where the text is full.  The buffer starts at the file's size (4 to 64
 * KiB) and grows only with the text and the longest line, so that an
 * ordinary script costs one small malloc (plugin/local.c says why that
 * matters in sbatch).  Returns 0, or -1 with errno set (st left empty).
 */
int scripttext_read(struct scripttext *st, const char *path, unsigned flags, size_t limit,
		    int timeout_ms);

/* The shipped text of a script already in memory (sbatch --wrap, tests).
 * Returns 0, or -1 when out of memory. */
int scripttext_set(struct scripttext *st, const char *script, size_t len);

void scripttext_free(struct scripttext *st);

#endif
