/*
 * jobtext.h - the bounds of a job's text that both ends keep: the client
 * that ships the script and the files it names (jobship.c, compiled into
 * sbatch and srun) and the reader that reads them in the daemon
 * (common/jobread).  Types and limits only, so that the plugin's side
 * pulls in nothing of the reader or the engine.
 */
#ifndef ADVISOR_WIRE_JOBTEXT_H
#define ADVISOR_WIRE_JOBTEXT_H

/* Bytes of user files (script + config files) read for one job, in all. */
#define JOBREAD_MAX_BYTES (256 * 1024)
/* Files one job may name (script included). */
#define JOBREAD_MAX_FILES 16
/* Round trips a client makes to satisfy the reader's file requests. */
#define JOBREAD_MAX_ROUNDS 4
#define JOBREAD_PATH_MAX 1024

/* Which program submitted the job text (proto JobText.tool). */
enum jobread_tool { JOBREAD_SBATCH = 0, JOBREAD_SRUN, JOBREAD_SALLOC, JOBREAD_SCRIPT };

/*
 * Why the shipped script stands for less than the whole script (proto
 * JobText.script_cut, issue 27; scripttext.h): its compacted text is over
 * JOBREAD_MAX_BYTES, the script is over Slurm's max_script_size, or the
 * client's time to read it ran out.
 */
enum jobread_cut { JOBREAD_CUT_NONE = 0, JOBREAD_CUT_SHIP, JOBREAD_CUT_LIMIT, JOBREAD_CUT_TIME };

#endif
