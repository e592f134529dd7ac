/*
 * checkpoint.h - checkpoint interval arithmetic (Young 1974, Daly 2006 and
 * the exact exponential waste model; see checkpoint.c).
 */
#ifndef ADVISOR_CHECKPOINT_H
#define ADVISOR_CHECKPOINT_H

#include "layout.h"

/* Raw inputs, all in seconds. */
struct ckpt_input {
	double write_s;        /* C: blocking time per checkpoint */
	double mtbf_s;         /* M: job mean time between interruptions */
	double restart_s;      /* R */
	double interval_s;     /* T to score; 0 = score the optimum only */
};

struct ckpt_output {
	double young_s;
	double daly_s;
	double optimal_s;      /* minimises ckpt_waste() */
	double optimal_waste;
	double waste;          /* at interval_s (the optimum when 0) */
};

double ckpt_young(double c, double m);
double ckpt_daly(double c, double m);
/* W(T) = 1 - T / (M e^(R/M) (e^((T+C)/M) - 1)) */
double ckpt_waste(double t, double c, double m, double r);
/* The T that minimises ckpt_waste() (independent of R). */
double ckpt_optimal(double c, double m);
void ckpt_compute(const struct ckpt_input *in, struct ckpt_output *out);

/*
 * Device-to-host copy bandwidth per GPU (GB/s) assumed for the blocking
 * snapshot of an asynchronous checkpoint: PCIe Gen4 x16 in practice.
 */
#define CKPT_D2H_GBS 25.0
/* Full training state: bf16 weights + fp32 master + Adam m, v. */
#define CKPT_FULL_BYTES_PER_PARAM 14.0
/* Weights only (serving). */
#define CKPT_WEIGHTS_BYTES_PER_PARAM 2.0

/* Checkpoint size of the job in bytes (full state, weights or adapters). */
double ckpt_size_bytes(const struct adv_job *job);

/*
 * The job's checkpoint figures from policy MTBF, storage bandwidth and
 * restart cost, and the CKPT_* findings (res may be NULL).  mem is the job's
 * memory (sets the asynchronous snapshot).
 */
void ckpt_check(const struct adv_job *job, const struct adv_policy *pol,
		const struct adv_memory *mem, const struct adv_ckpt_req *req,
		struct adv_checkpoint *out, struct adv_result *res);

/*
 * The checkpoint line a user reads (advisorctl check and ckpt): what the
 * interval loses against the optimum, or, for a job that does not
 * checkpoint (interval_s 0), that a failure loses the whole run so far and
 * how often one comes.
 */
void ckpt_describe(const struct adv_checkpoint *c, char *buf, size_t len);

#endif
