/*
 * jobdigest.c - the digest of a job's own text (issue 27).
 *
 * A node check names its submission's decision in ADVISOR_DECISION_ID,
 * which the job's user controls: a job submitted around the plugin could
 * name a decision made for another script.  advisord stores this digest
 * with every decision made from a job's text and vouches for a parent
 * only when the node ships the same text (dlog_confirm).  A user chooses
 * both texts, so the digest must resist a chosen collision: SHA-256, from
 * OpenSSL's EVP interface (the library munge and MariaDB's connector use
 * on Debian), never written here.
 *
 * What the two sides ship for the same job is the same: sbatch's plugin
 * reads the batch script the user gave (src/sbatch/sbatch.c
 * _get_script_buffer) and slurmstepd's reads the copy slurmd wrote of it
 * (src/slurmd/slurmstepd/mgr.c _make_batch_script), both through
 * common/wire/jobship.c; srun's plugin and the step ship the step's argv.
 * sbatch --wrap is the exception: the node holds the script sbatch wrote
 * around the command, so such a node check is judged from its text.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "jobdigest.h"

/* Length-prefixed, so that ("ab", "c") and ("a", "bc") differ. */
static int put(EVP_MD_CTX *c, const void *p, size_t n)
{
	uint8_t len[8];

	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)((uint64_t)n >> (8 * i));
	return EVP_DigestUpdate(c, len, sizeof(len)) == 1 && (n == 0 || EVP_DigestUpdate(c, p, n) == 1)
	       ? 0 : -1;
}

int jobdigest_of(const Advisor__JobText *job, char out[JOBDIGEST_HEX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *c;
	uint8_t tool[4];
	int rc = -1;

	out[0] = '\0';
	if (!job || !(c = EVP_MD_CTX_new()))
		return -1;
	for (int i = 0; i < 4; i++)
		tool[i] = (uint8_t)((uint32_t)(job->has_tool ? job->tool : 0) >> (8 * i));
	if (EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1 || put(c, "advisor-job-1", 13) ||
	    put(c, tool, sizeof(tool)) ||
	    put(c, job->has_script ? job->script.data : NULL, job->has_script ? job->script.len : 0))
		goto out;
	for (size_t i = 0; i < job->n_argv; i++)
		if (put(c, job->argv[i], job->argv[i] ? strlen(job->argv[i]) : 0))
			goto out;
	if (EVP_DigestFinal_ex(c, md, &mdlen) != 1 || mdlen * 2 + 1 > JOBDIGEST_HEX)
		goto out;
	for (unsigned int i = 0; i < mdlen; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	rc = 0;
out:
	EVP_MD_CTX_free(c);
	return rc;
}
