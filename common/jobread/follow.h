/*
 * follow.h - the scan for launchers and trainers the reader did not reach
 * or could not follow (SCRIPT_NOT_FOLLOWED; follow.c).
 */
#ifndef ADVISOR_JOBREAD_FOLLOW_H
#define ADVISOR_JOBREAD_FOLLOW_H

#include <stddef.h>

#include "ctx.h"
#include "jobread/shell/shell.h"
#include "jobtypes.h"

/*
 * When out names no launcher or trainer: scans text (the script named
 * name, evaluated by sh with result rc) for a line that starts one, and
 * notes SCRIPT_NOT_FOLLOWED with the line and the reason; the job then
 * counts as an LLM job.
 */
void follow_scan(struct jr_ctx *cx, const sh_t *sh, const char *name, const char *text,
		 size_t len, int rc, struct jobread_out *out);

/*
 * After the walk and the scan (issue 28: LLM-ness from evidence): a job
 * judged an LLM job only because a launcher that starts any program was
 * seen (torchrun, deepspeed, accelerate, srun python), or whose trainer
 * takes any model and was given one that is not an LLM (BERT, a vision
 * model), with nothing in the script that names an LLM, is not an LLM job:
 * what was read is dropped and out->not_llm_why says why.  A program the
 * reader could not read (PROGRAM_NOT_READ) keeps its job's workload
 * unknown instead.
 */
void follow_gate(const char *text, size_t len, struct jobread_out *out);

#endif
