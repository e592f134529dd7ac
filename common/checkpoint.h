/*
 * checkpoint.h - checkpoint interval arithmetic (Young 1974, Daly 2006 and
 * the exact exponential waste model; see checkpoint.c).
 */
#ifndef ADVISOR_CHECKPOINT_H
#define ADVISOR_CHECKPOINT_H

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
void ckpt_compute(const struct ckpt_input *in, struct ckpt_output *out);

#endif
