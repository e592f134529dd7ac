/*
 * jobship.h - the client's half of the job reader: the job's own text
 * (batch script, command, environment, submit directory) packed into an
 * advisor.JobText, and the files the daemon's reader asks for
 * (CheckResponse.need_files) read here, as the calling user, within the
 * reader's bounds (JOBREAD_MAX_BYTES of content in all, script included;
 * JOBREAD_MAX_FILES files).
 *
 * Used by the SPANK plugin (inside every sbatch and srun) and by
 * advisorctl check --script.  It never parses anything: no libyaml, no
 * jobread code, only bounded reads, so that the plugin stays small.
 */
#ifndef ADVISOR_JOBSHIP_H
#define ADVISOR_JOBSHIP_H

#include <stdbool.h>
#include <stddef.h>

#include "advisor.pb-c.h"
#include "jobtext.h"
#include "scripttext.h"

struct jobship;

/*
 * A job to ship.  script (its shipped text and how much of the script it
 * stands for, scripttext.h; NULL: none), the argv strings and the env
 * strings ("NAME=value", NULL-terminated, may be NULL) are borrowed: they
 * must outlive js.  script_name and cwd are copied.  Variables whose names
 * suggest a secret are left out (jobship_env_secret).  NULL when out of
 * memory.
 */
struct jobship *jobship_new(enum jobread_tool tool, const char *script_name,
			    const struct scripttext *script, int argc, char *const argv[],
			    char *const env[], const char *cwd, int ntasks, int ntasks_per_node);
void jobship_free(struct jobship *js);

/*
 * The message to put in CheckRequest.job, owned by js and valid until the
 * next jobship_fetch() or jobship_free().  final says this is the last
 * round: the daemon must answer without asking for more files.
 */
Advisor__JobText *jobship_text(struct jobship *js, bool final);

/*
 * Reads the absolute paths the daemon asked for, as the calling user
 * (symbolic links followed, O_NONBLOCK so a FIFO never blocks).  Each
 * becomes a JobFile: status 0 with the content (a directory: is_dir and no
 * content), 1 missing, 2 unreadable, not a regular file or directory, not
 * absolute, under /proc, /sys or /dev, or over the remaining byte budget.
 * A path already shipped is skipped; past JOBREAD_MAX_FILES files the rest
 * are left out (the daemon counts them as unreadable).  Returns 0, or -1
 * when out of memory (what was read stays).
 */
int jobship_fetch(struct jobship *js, char *const paths[], size_t n);

/* Bytes of content shipped so far (script included). */
size_t jobship_bytes(const struct jobship *js);

/*
 * true when the variable named by env (a "NAME=value" string, or a bare
 * name) must not leave the process: one of its '_'-separated words
 * contains SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, PRIVATE,
 * COOKIE or TOKEN (TOKENIZER... is a tokenizer, not a token), ends with
 * KEY or KEYS, or is PASS or AUTH (case-insensitive): HF_TOKEN,
 * WANDB_API_KEY, AWS_SECRET_ACCESS_KEY, MLFLOW_TRACKING_PASSWORD...
 */
bool jobship_env_secret(const char *env);

#endif
