/*
 * jobreq.c - rebuilds a job's resource request the way sbatch, salloc and
 * srun themselves see it, for the SPANK plugin's submission-time check.
 *
 * Slurm 22.05 gives a SPANK plugin in allocator/local context no item about
 * the job (spank_get_item: ESPANK_BAD_ARG / ESPANK_NOT_AVAIL), so the
 * plugin reads the same sources Slurm reads, with the same rules:
 *  - the command line, parsed with getopt_long and each tool's option table
 *    ("+" optstring: parsing stops at the script or command, as in Slurm);
 *  - the batch script's "#SBATCH" lines up to the first line that is
 *    neither blank nor a comment (sbatch's _process_options_from_script);
 *  - the INPUT ENVIRONMENT VARIABLES of sbatch(1), salloc(1), srun(1);
 *  - for srun inside a job, the allocation's OUTPUT ENVIRONMENT VARIABLES.
 * Precedence (sbatch(1)): command line > environment > script; for srun the
 * allocation only fills what nothing else gave.
 * A heterogeneous job's components ("#SBATCH hetjob"/"packjob") are parsed
 * one by one (jobreq_parse_script_het); --gpus beside GPUs per node is
 * checked as slurmctld checks it (jobreq_check_gpus, seen with 22.05.8).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/optlist.h"
#include "jobreq.h"
#include "util.h"

/* The options this module reads; everything else only needs its arity. */
enum {
	OPT_SKIP = 0x100,
	OPT_NODES,
	OPT_NTASKS,
	OPT_NTASKS_PER_NODE,
	OPT_GPUS,
	OPT_GPUS_PER_NODE,
	OPT_GPUS_PER_TASK,
	OPT_GRES,
	OPT_PARTITION,
	OPT_ACCOUNT,
	OPT_CONSTRAINT,
	OPT_MEM,
	OPT_MEM_PER_GPU,
	OPT_EXCLUSIVE,
	OPT_WRAP,
	OPT_CHDIR,
	OPT_LLM,
};

/* The --llm-* rows of engine/optlist.h, all counted alike. */
#define JOBREQ_LLM_ROW(id, name, arg, sbatch, plugin_help, ctl_help) \
	OPTIONS_IF_SBATCH(sbatch, { "llm-" name, required_argument, NULL, OPT_LLM },)

/* Long options common to sbatch, salloc and srun (Slurm 22.05 opt tables). */
static const struct option jobreq_common_opts[] = {
	{ "nodes", required_argument, NULL, OPT_NODES },
	{ "ntasks", required_argument, NULL, OPT_NTASKS },
	{ "ntasks-per-node", required_argument, NULL, OPT_NTASKS_PER_NODE },
	{ "gpus", required_argument, NULL, OPT_GPUS },
	{ "gpus-per-node", required_argument, NULL, OPT_GPUS_PER_NODE },
	{ "gpus-per-task", required_argument, NULL, OPT_GPUS_PER_TASK },
	{ "gres", required_argument, NULL, OPT_GRES },
	{ "partition", required_argument, NULL, OPT_PARTITION },
	{ "account", required_argument, NULL, OPT_ACCOUNT },
	{ "constraint", required_argument, NULL, OPT_CONSTRAINT },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "mem-per-gpu", required_argument, NULL, OPT_MEM_PER_GPU },
	{ "exclusive", optional_argument, NULL, OPT_EXCLUSIVE },
	/* The plugin's own options (SPANK adds them to Slurm's table). */
	OPTIONS_LIST(JOBREQ_LLM_ROW)
	/* Options whose values must be skipped. */
	{ "acctg-freq", required_argument, NULL, OPT_SKIP },
	{ "bb", required_argument, NULL, OPT_SKIP },
	{ "bbf", required_argument, NULL, OPT_SKIP },
	{ "begin", required_argument, NULL, OPT_SKIP },
	{ "chdir", required_argument, NULL, OPT_CHDIR },
	{ "cluster-constraint", required_argument, NULL, OPT_SKIP },
	{ "clusters", required_argument, NULL, OPT_SKIP },
	{ "comment", required_argument, NULL, OPT_SKIP },
	{ "container", required_argument, NULL, OPT_SKIP },
	{ "core-spec", required_argument, NULL, OPT_SKIP },
	{ "cores-per-socket", required_argument, NULL, OPT_SKIP },
	{ "cpu-freq", required_argument, NULL, OPT_SKIP },
	{ "cpus-per-gpu", required_argument, NULL, OPT_SKIP },
	{ "cpus-per-task", required_argument, NULL, OPT_SKIP },
	{ "deadline", required_argument, NULL, OPT_SKIP },
	{ "delay-boot", required_argument, NULL, OPT_SKIP },
	{ "dependency", required_argument, NULL, OPT_SKIP },
	{ "distribution", required_argument, NULL, OPT_SKIP },
	{ "exclude", required_argument, NULL, OPT_SKIP },
	{ "extra-node-info", required_argument, NULL, OPT_SKIP },
	{ "gid", required_argument, NULL, OPT_SKIP },
	{ "gpu-bind", required_argument, NULL, OPT_SKIP },
	{ "gpu-freq", required_argument, NULL, OPT_SKIP },
	{ "gpus-per-socket", required_argument, NULL, OPT_SKIP },
	{ "gres-flags", required_argument, NULL, OPT_SKIP },
	{ "hint", required_argument, NULL, OPT_SKIP },
	{ "job-name", required_argument, NULL, OPT_SKIP },
	{ "licenses", required_argument, NULL, OPT_SKIP },
	{ "mail-type", required_argument, NULL, OPT_SKIP },
	{ "mail-user", required_argument, NULL, OPT_SKIP },
	{ "mcs-label", required_argument, NULL, OPT_SKIP },
	{ "mem-bind", required_argument, NULL, OPT_SKIP },
	{ "mem-per-cpu", required_argument, NULL, OPT_SKIP },
	{ "mincpus", required_argument, NULL, OPT_SKIP },
	{ "network", required_argument, NULL, OPT_SKIP },
	{ "nodefile", required_argument, NULL, OPT_SKIP },
	{ "nodelist", required_argument, NULL, OPT_SKIP },
	{ "ntasks-per-core", required_argument, NULL, OPT_SKIP },
	{ "ntasks-per-gpu", required_argument, NULL, OPT_SKIP },
	{ "ntasks-per-socket", required_argument, NULL, OPT_SKIP },
	{ "power", required_argument, NULL, OPT_SKIP },
	{ "prefer", required_argument, NULL, OPT_SKIP },
	{ "priority", required_argument, NULL, OPT_SKIP },
	{ "profile", required_argument, NULL, OPT_SKIP },
	{ "qos", required_argument, NULL, OPT_SKIP },
	{ "reservation", required_argument, NULL, OPT_SKIP },
	{ "signal", required_argument, NULL, OPT_SKIP },
	{ "sockets-per-node", required_argument, NULL, OPT_SKIP },
	{ "switches", required_argument, NULL, OPT_SKIP },
	{ "thread-spec", required_argument, NULL, OPT_SKIP },
	{ "threads-per-core", required_argument, NULL, OPT_SKIP },
	{ "time", required_argument, NULL, OPT_SKIP },
	{ "time-min", required_argument, NULL, OPT_SKIP },
	{ "tmp", required_argument, NULL, OPT_SKIP },
	{ "tres-per-task", required_argument, NULL, OPT_SKIP },
	{ "uid", required_argument, NULL, OPT_SKIP },
	{ "wckey", required_argument, NULL, OPT_SKIP },
	{ "get-user-env", optional_argument, NULL, OPT_SKIP },
	{ "nice", optional_argument, NULL, OPT_SKIP },
	{ "no-kill", optional_argument, NULL, OPT_SKIP },
	{ "contiguous", no_argument, NULL, OPT_SKIP },
	{ "help", no_argument, NULL, OPT_SKIP },
	{ "hold", no_argument, NULL, OPT_SKIP },
	{ "overcommit", no_argument, NULL, OPT_SKIP },
	{ "oversubscribe", no_argument, NULL, OPT_SKIP },
	{ "quiet", no_argument, NULL, OPT_SKIP },
	{ "reboot", no_argument, NULL, OPT_SKIP },
	{ "spread-job", no_argument, NULL, OPT_SKIP },
	{ "test-only", no_argument, NULL, OPT_SKIP },
	{ "usage", no_argument, NULL, OPT_SKIP },
	{ "use-min-nodes", no_argument, NULL, OPT_SKIP },
	{ "verbose", no_argument, NULL, OPT_SKIP },
	{ "version", no_argument, NULL, OPT_SKIP },
};

static const struct option jobreq_sbatch_opts[] = {
	{ "array", required_argument, NULL, OPT_SKIP },
	{ "batch", required_argument, NULL, OPT_SKIP },
	{ "error", required_argument, NULL, OPT_SKIP },
	{ "export", optional_argument, NULL, OPT_SKIP },
	{ "export-file", required_argument, NULL, OPT_SKIP },
	{ "input", required_argument, NULL, OPT_SKIP },
	{ "open-mode", required_argument, NULL, OPT_SKIP },
	{ "output", required_argument, NULL, OPT_SKIP },
	{ "propagate", optional_argument, NULL, OPT_SKIP },
	{ "wrap", required_argument, NULL, OPT_WRAP },
	{ "kill-on-invalid-dep", required_argument, NULL, OPT_SKIP },
	{ "ignore-pbs", no_argument, NULL, OPT_SKIP },
	{ "no-requeue", no_argument, NULL, OPT_SKIP },
	{ "parsable", no_argument, NULL, OPT_SKIP },
	{ "requeue", no_argument, NULL, OPT_SKIP },
	{ "wait", no_argument, NULL, OPT_SKIP },
	{ "wait-all-nodes", required_argument, NULL, OPT_SKIP },
	{ NULL, 0, NULL, 0 },
};

static const struct option jobreq_salloc_opts[] = {
	{ "bell", no_argument, NULL, OPT_SKIP },
	{ "no-bell", no_argument, NULL, OPT_SKIP },
	{ "immediate", optional_argument, NULL, OPT_SKIP },
	{ "kill-command", optional_argument, NULL, OPT_SKIP },
	{ "wait-all-nodes", required_argument, NULL, OPT_SKIP },
	{ NULL, 0, NULL, 0 },
};

static const struct option jobreq_srun_opts[] = {
	{ "bcast", optional_argument, NULL, OPT_SKIP },
	{ "bcast-exclude", required_argument, NULL, OPT_SKIP },
	{ "compress", optional_argument, NULL, OPT_SKIP },
	{ "cpu-bind", required_argument, NULL, OPT_SKIP },
	{ "epilog", required_argument, NULL, OPT_SKIP },
	{ "error", required_argument, NULL, OPT_SKIP },
	{ "export", required_argument, NULL, OPT_SKIP },
	{ "het-group", required_argument, NULL, OPT_SKIP },
	{ "immediate", optional_argument, NULL, OPT_SKIP },
	{ "input", required_argument, NULL, OPT_SKIP },
	{ "jobid", required_argument, NULL, OPT_SKIP },
	{ "kill-on-bad-exit", optional_argument, NULL, OPT_SKIP },
	{ "mpi", required_argument, NULL, OPT_SKIP },
	{ "open-mode", required_argument, NULL, OPT_SKIP },
	{ "output", required_argument, NULL, OPT_SKIP },
	{ "prolog", required_argument, NULL, OPT_SKIP },
	{ "propagate", optional_argument, NULL, OPT_SKIP },
	{ "relative", required_argument, NULL, OPT_SKIP },
	{ "resv-ports", optional_argument, NULL, OPT_SKIP },
	{ "send-libs", optional_argument, NULL, OPT_SKIP },
	{ "slurmd-debug", required_argument, NULL, OPT_SKIP },
	{ "task-epilog", required_argument, NULL, OPT_SKIP },
	{ "task-prolog", required_argument, NULL, OPT_SKIP },
	{ "threads", required_argument, NULL, OPT_SKIP },
	{ "wait", required_argument, NULL, OPT_SKIP },
	{ "disable-status", no_argument, NULL, OPT_SKIP },
	{ "exact", no_argument, NULL, OPT_SKIP },
	{ "label", no_argument, NULL, OPT_SKIP },
	{ "multi-prog", no_argument, NULL, OPT_SKIP },
	{ "no-allocate", no_argument, NULL, OPT_SKIP },
	{ "overlap", no_argument, NULL, OPT_SKIP },
	{ "preserve-env", no_argument, NULL, OPT_SKIP },
	{ "pty", no_argument, NULL, OPT_SKIP },
	{ "quit-on-interrupt", no_argument, NULL, OPT_SKIP },
	{ "unbuffered", no_argument, NULL, OPT_SKIP },
	{ NULL, 0, NULL, 0 },
};

/* Short options of each tool (Slurm 22.05 src/{sbatch,salloc,srun}/opt.c). */
static const char jobreq_sbatch_short[] =
	"+a:A:b:B:c:C:d:D:e:F:G:hHi:J:kL:m:M:n:N:o:Op:q:QsS:t:vVw:Wx:";
static const char jobreq_salloc_short[] =
	"+A:b:B:c:C:d:D:F:G:hHI::J:kK::L:m:M:n:N:Op:q:QsS:t:vVw:x:";
static const char jobreq_srun_short[] =
	"+A:b:B:c:C:d:D:e:EG:hHi:I::J:kK::lL:m:M:n:N:o:Op:q:Qr:sS:t:T:uvVW:w:x:XZ";

#define JOBREQ_MAX_OPTS 160

void jobreq_opts_init(struct jobreq_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->exclusive = -1;
}

void jobreq_workdir(const struct jobreq_opts *o, char *buf, size_t len)
{
	char cwd[4096];
	int n;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (o && o->chdir[0] == '/') {
		if (strlen(o->chdir) < len)
			adv_strlcpy(buf, o->chdir, len);
		return;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return;
	if (!o || !o->chdir[0])
		n = snprintf(buf, len, "%s", cwd);
	else
		n = snprintf(buf, len, "%s/%s", strcmp(cwd, "/") ? cwd : "", o->chdir);
	if (n < 0 || (size_t)n >= len)
		buf[0] = '\0';
}

/* No Slurm cluster has a million nodes or GPUs per node: a larger count is a typo. */
#define JOBREQ_COUNT_MAX 1000000L

/*
 * Products of counts (each at most JOBREQ_COUNT_MAX) can pass INT_MAX:
 * saturate rather than overflow; Slurm refuses such a job itself.
 */
static int jobreq_mul(long a, long b)
{
	long p = a * b;

	return p > INT_MAX ? INT_MAX : (int)p;
}

static int jobreq_count(const char *name, const char *s, int *out, char *err, size_t errlen)
{
	long v;

	if (adv_parse_long(s, &v) != 0 || v < 0 || v > JOBREQ_COUNT_MAX) {
		adv_snprintf(err, errlen, "invalid %s value '%s': expected a count", name, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/*
 * A task count: sbatch's parse_int (src/common/slurm_opt.c) takes only a
 * whole number of 1 or more ("Invalid numeric value "0" for --ntasks.").
 */
static int jobreq_positive(const char *name, const char *s, int *out, char *err, size_t errlen)
{
	if (jobreq_count(name, s, out, err, errlen) != 0)
		return -1;
	if (*out == 0) {
		adv_snprintf(err, errlen, "invalid %s value '%s': expected a count of 1 or more",
			     name, s);
		return -1;
	}
	return 0;
}

/*
 * One end of a node count as Slurm 22.05's _str_to_nodes reads it
 * (src/common/proc_args.c): strtol, then an optional k/K (x1024) and m/M
 * (x1048576); what is left must be blank.  Returns 0, or -1 when it is not
 * a count.  An empty end reads 0, as there.
 */
static long jobreq_node_scale(long v, long mult)
{
	if (v > LONG_MAX / mult)
		return LONG_MAX;
	if (v < LONG_MIN / mult)
		return LONG_MIN;
	return v * mult;
}

static int jobreq_node_end(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s) {
		v = 0;
	} else {
		/* Saturate, either sign: "-N --9999999999m" is refused below. */
		if (*end == 'k' || *end == 'K') {
			v = jobreq_node_scale(v, 1024);
			end++;
		}
		if (*end == 'm' || *end == 'M') {
			v = jobreq_node_scale(v, 1024L * 1024);
			end++;
		}
	}
	while (isspace((unsigned char)*end))
		end++;
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
}

/*
 * "-N 4", "-N 2-4" (the minimum), "-N -4" (1 to 4), "-N 2k" (2048): Slurm
 * 22.05's verify_node_count.  sbatch refuses "x", "4-2", "2-4:2" and, as
 * Debian 12's sbatch 22.05.8 does, "2-" (no maximum after the dash); it
 * takes "0" (a job without nodes) and "1-0" (no maximum).
 */
static int jobreq_nodes(const char *s, int *out, int *out_max, char *err, size_t errlen)
{
	char buf[64];
	char *dash;
	long min, max = 0;

	adv_strlcpy(buf, s, sizeof(buf));
	dash = strchr(buf, '-');
	if (dash) {
		*dash = '\0';
		if (jobreq_node_end(buf, &min) != 0) {
			adv_snprintf(err, errlen, "invalid --nodes value '%s': \"%s\" is not a valid "
				     "node count", s, buf);
			return -1;
		}
		if (min == 0)
			min = 1;
		if (jobreq_node_end(dash + 1, &max) != 0) {
			adv_snprintf(err, errlen, "invalid --nodes value '%s': \"%s\" is not a valid "
				     "node count", s, dash + 1);
			return -1;
		}
		if (dash[1] == '\0' || (max != 0 && max < min)) {
			adv_snprintf(err, errlen, "invalid --nodes value '%s': the maximum node count "
				     "is less than the minimum %ld", s, min);
			return -1;
		}
	} else if (jobreq_node_end(buf, &min) != 0 || !buf[strspn(buf, " \t")]) {
		adv_snprintf(err, errlen, "invalid --nodes value '%s': \"%s\" is not a valid node "
			     "count", s, s);
		return -1;
	}
	if (min < 0 || min > JOBREQ_COUNT_MAX) {
		adv_snprintf(err, errlen, "invalid --nodes value '%s': expected a count", s);
		return -1;
	}
	*out = (int)min;
	if (out_max)
		*out_max = !dash ? (int)min : max > 0 && max <= JOBREQ_COUNT_MAX ? (int)max : 0;
	return 0;
}

/* "[TYPE:]N" of --gpus, --gpus-per-node, --gpus-per-task (the gpu: prefix allowed). */
static int jobreq_gpu_spec(const char *name, const char *s, int *count, char *type,
			   size_t typelen, char *err, size_t errlen)
{
	char buf[128];
	char *colon, *num;

	adv_strlcpy(buf, s, sizeof(buf));
	num = buf;
	/* Newer Slurm may print the TRES form: "gres/gpu:h100:8". */
	if (strncmp(num, "gres/", 5) == 0 || strncmp(num, "gres:", 5) == 0)
		num += 5;
	if (strncmp(num, "gpu:", 4) == 0)
		num += 4;
	colon = strrchr(num, ':');
	type[0] = '\0';
	if (colon) {
		*colon = '\0';
		adv_strlcpy(type, num, typelen);
		num = colon + 1;
	}
	if (jobreq_count(name, num, count, err, errlen) != 0) {
		adv_snprintf(err, errlen, "invalid %s value '%s': expected [TYPE:]COUNT", name, s);
		return -1;
	}
	return 0;
}

/*
 * --gres=LIST: "gpu:8", "gpu:h100:8", "gres:gpu:8", "gres/gpu:h100:4",
 * "gpu" (one), "gpu:h100" (one of that type), mixed with other GRES.
 */
static int jobreq_gres(const char *s, struct jobreq_opts *o, char *err, size_t errlen)
{
	char buf[512];
	char *save = NULL, *tok;

	adv_strlcpy(buf, s, sizeof(buf));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *paren = strchr(tok, '(');
		char *rest, *colon;
		int n = 1;

		if (paren)
			*paren = '\0';
		if (strncmp(tok, "gres:", 5) == 0 || strncmp(tok, "gres/", 5) == 0)
			tok += 5;
		if (strncmp(tok, "gpu", 3) != 0 || (tok[3] != '\0' && tok[3] != ':'))
			continue;
		rest = tok[3] ? tok + 4 : tok + 3;
		o->gres_type[0] = '\0';
		colon = strrchr(rest, ':');
		if (colon) {
			*colon = '\0';
			adv_strlcpy(o->gres_type, rest, sizeof(o->gres_type));
			if (jobreq_count("--gres", colon + 1, &n, err, errlen) != 0)
				return -1;
		} else if (*rest && isdigit((unsigned char)*rest)) {
			if (jobreq_count("--gres", rest, &n, err, errlen) != 0)
				return -1;
		} else if (*rest) {
			adv_strlcpy(o->gres_type, rest, sizeof(o->gres_type));
		}
		o->gres_gpus = n;
	}
	return 0;
}

/* A unit letter ends the value, or is followed by a B alone (proc_args.c _end_on_byte). */
static bool jobreq_mem_unit_end(const char *unit)
{
	return unit[1] == '\0' || ((unit[1] == 'B' || unit[1] == 'b') && unit[2] == '\0');
}

/*
 * Slurm 22.05's str_to_mbytes (src/common/proc_args.c), which sbatch uses
 * for --mem and --mem-per-gpu: a decimal count (strtoll: leading blanks and
 * '+' pass), then nothing (MB) or one of K M G T in either case, alone or
 * followed by B or b ("224GB", "64g", "2048KB"); K rounds up.  "224 ",
 * "1.5G", "224B", "224GiB" and "224P" are refused, by sbatch as here.
 */
long jobreq_parse_mem_mb(const char *s)
{
	char *end;
	long long v;
	long mult;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		return -1;
	switch (*end) {
	case '\0': return v > LONG_MAX ? -1 : (long)v;
	case 'k': case 'K': mult = -1024; break;
	case 'm': case 'M': mult = 1; break;
	case 'g': case 'G': mult = 1024; break;
	case 't': case 'T': mult = 1024L * 1024; break;
	default: return -1;
	}
	if (!jobreq_mem_unit_end(end))
		return -1;
	if (mult < 0)
		return (long)((v + 1023) / 1024);   /* round up, as Slurm */
	/* Any user can type --mem=9999999999999T: refuse what a long cannot hold. */
	if (v > LONG_MAX / mult)
		return -1;
	return (long)v * mult;
}

static int jobreq_mem(const char *name, const char *s, long *out, char *err, size_t errlen)
{
	long v = jobreq_parse_mem_mb(s);

	if (v < 0) {
		adv_snprintf(err, errlen, "invalid %s value '%s': expected a size such as 4000, "
			     "64G or 64GB", name, s);
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * -p a,b: the whole list travels (issue 20: the daemon applies the
 * strictest of their modes); one that does not fit keeps the names that
 * do, never a piece of one.
 */
static void jobreq_list(char *dst, size_t len, const char *s)
{
	if (adv_strlcpy(dst, s, len) >= len) {
		char *comma = strrchr(dst, ',');

		if (comma)
			*comma = '\0';
	}
}

static int jobreq_apply(struct jobreq_opts *o, int code, const char *arg, int *llm,
			char *err, size_t errlen)
{
	switch (code) {
	case 'N': case OPT_NODES:
		return jobreq_nodes(arg, &o->nodes, &o->nodes_max, err, errlen);
	case 'n': case OPT_NTASKS:
		return jobreq_positive("--ntasks", arg, &o->ntasks, err, errlen);
	case OPT_NTASKS_PER_NODE:
		return jobreq_positive("--ntasks-per-node", arg, &o->ntasks_per_node, err, errlen);
	case 'G': case OPT_GPUS:
		return jobreq_gpu_spec("--gpus", arg, &o->gpus, o->gpus_type,
				       sizeof(o->gpus_type), err, errlen);
	case OPT_GPUS_PER_NODE:
		return jobreq_gpu_spec("--gpus-per-node", arg, &o->gpus_per_node, o->gpn_type,
				       sizeof(o->gpn_type), err, errlen);
	case OPT_GPUS_PER_TASK:
		return jobreq_gpu_spec("--gpus-per-task", arg, &o->gpus_per_task, o->gpt_type,
				       sizeof(o->gpt_type), err, errlen);
	case OPT_GRES:
		return jobreq_gres(arg, o, err, errlen);
	case 'D': case OPT_CHDIR:
		adv_strlcpy(o->chdir, arg, sizeof(o->chdir));
		return 0;
	case 'p': case OPT_PARTITION:
		jobreq_list(o->partition, sizeof(o->partition), arg);
		return 0;
	case 'A': case OPT_ACCOUNT:
		adv_strlcpy(o->account, arg, sizeof(o->account));
		return 0;
	case 'C': case OPT_CONSTRAINT:
		adv_strlcpy(o->constraint, arg, sizeof(o->constraint));
		return 0;
	case OPT_MEM:
		return jobreq_mem("--mem", arg, &o->mem_mb, err, errlen);
	case OPT_MEM_PER_GPU:
		return jobreq_mem("--mem-per-gpu", arg, &o->mem_per_gpu_mb, err, errlen);
	case OPT_EXCLUSIVE:
		o->exclusive = 1;
		return 0;
	case OPT_WRAP:
		o->wrap = true;
		o->wrap_text = arg;
		return 0;
	case OPT_LLM:
		if (llm)
			(*llm)++;
		return 0;
	default:
		return 0;
	}
}

static size_t jobreq_table(enum jobreq_tool tool, struct option *tab, const char **shortopts)
{
	const struct option *extra;
	size_t n = ADV_ARRAY_SIZE(jobreq_common_opts);

	memcpy(tab, jobreq_common_opts, sizeof(jobreq_common_opts));
	switch (tool) {
	case JOBREQ_SALLOC: extra = jobreq_salloc_opts; *shortopts = jobreq_salloc_short; break;
	case JOBREQ_SRUN: extra = jobreq_srun_opts; *shortopts = jobreq_srun_short; break;
	default: extra = jobreq_sbatch_opts; *shortopts = jobreq_sbatch_short; break;
	}
	for (; extra->name && n < JOBREQ_MAX_OPTS - 1; extra++)
		tab[n++] = *extra;
	memset(&tab[n], 0, sizeof(tab[n]));
	return n;
}

#define JOBREQ_SPANK_PREFIX "_SLURM_SPANK_OPTION_"

/*
 * Another SPANK plugin's option given as "--opt value": Slurm knows it
 * takes a value, this table does not.  Slurm has already put every SPANK
 * option it parsed in the environment as _SLURM_SPANK_OPTION_<plugin>_<opt>
 * (with '-' as '_'), so the word after an unknown "--opt" is its value when
 * such a variable for that option holds exactly that word.
 */
static bool jobreq_spank_value(char *const spank_env[], const char *optword, const char *next)
{
	char name[128];
	size_t i, n;

	if (!spank_env || !next || !*next || strncmp(optword, "--", 2) != 0 || strchr(optword, '='))
		return false;
	adv_snprintf(name, sizeof(name), "_%s=", optword + 2);
	for (i = 0; name[i]; i++)
		if (name[i] == '-')
			name[i] = '_';
	n = strlen(name);
	for (; *spank_env; spank_env++) {
		const char *e = *spank_env, *hit;

		if (strncmp(e, JOBREQ_SPANK_PREFIX, sizeof(JOBREQ_SPANK_PREFIX) - 1) != 0)
			continue;
		e += sizeof(JOBREQ_SPANK_PREFIX) - 1;
		/* <plugin>_<opt>=value: the option name ends right before '='. */
		hit = strstr(e, name);
		if (hit && hit > e && strcmp(hit + n, next) == 0)
			return true;
	}
	return false;
}

/* "--opt" (no '=') followed by a word that is no option: the pair of an unknown option. */
static bool jobreq_unknown_value(const char *optword, const char *next)
{
	return strncmp(optword, "--", 2) == 0 && optword[2] && !strchr(optword, '=') &&
	       next && next[0] && next[0] != '-';
}

int jobreq_parse_argv(enum jobreq_tool tool, int argc, char *const argv[],
		      struct jobreq_opts *o, int *llm_options, char *err, size_t errlen)
{
	return jobreq_parse_argv_spank(tool, argc, argv, NULL, o, llm_options, err, errlen);
}

/*
 * The getopt loop of jobreq_parse_argv_spank.  in_script: the words of
 * #SBATCH lines, where no script path follows the options, so a bare word
 * right after an unknown "--opt" is taken for that option's value (another
 * SPANK plugin's option, which sbatch knows and this table does not).
 */
/*
 * getopt_long keeps its state in process globals (optind, optarg, and
 * glibc's own scan position), so two threads in it at once corrupt each
 * other: advisord's workers read #SBATCH lines of jobs side by side (the
 * job reader's srun and hetjob components), and one crashed in
 * _getopt_internal_r under 16 clients shipping scripts.  One parse at a
 * time, then.  The host's state is still put back afterwards.
 */
static pthread_mutex_t jobreq_getopt_lock = PTHREAD_MUTEX_INITIALIZER;

static int jobreq_parse_words(enum jobreq_tool tool, int argc, char *const argv[],
			      char *const spank_env[], bool in_script, struct jobreq_opts *o,
			      int *llm_options, char *err, size_t errlen)
{
	struct option tab[JOBREQ_MAX_OPTS];
	const char *shortopts;
	int save_optind, save_opterr, save_optopt;
	char *save_optarg;
	int c, rc = 0;

	jobreq_table(tool, tab, &shortopts);
	pthread_mutex_lock(&jobreq_getopt_lock);
	/* getopt's state belongs to the host program: put it back afterwards. */
	save_optind = optind;
	save_opterr = opterr;
	save_optopt = optopt;
	save_optarg = optarg;
	optind = 0;   /* GNU: full re-initialisation */
	opterr = 0;
	/* To the end even past a bad value: the script, the command and the
	 * --llm-* count are still found (the plugin may have Slurm's own values,
	 * slurmopt.c); the first error is the one reported. */
	while ((c = getopt_long(argc, argv, shortopts, tab, NULL)) != -1) {
		char later[8];

		if (c == '?' || c == ':') {
			if (optind > 0 && optind < argc &&
			    (jobreq_spank_value(spank_env, argv[optind - 1], argv[optind]) ||
			     (in_script && jobreq_unknown_value(argv[optind - 1], argv[optind]))))
				optind++;
			continue;
		}
		if (jobreq_apply(o, c, optarg ? optarg : "", llm_options,
				 rc == 0 ? err : later, rc == 0 ? errlen : sizeof(later)) != 0)
			rc = -1;
	}
	o->first_arg = optind > 0 && optind < argc ? optind : argc;
	if (tool == JOBREQ_SBATCH && optind < argc && !o->wrap)
		adv_strlcpy(o->script, argv[optind], sizeof(o->script));
	optind = save_optind;
	opterr = save_opterr;
	optopt = save_optopt;
	optarg = save_optarg;
	pthread_mutex_unlock(&jobreq_getopt_lock);
	return rc;
}

int jobreq_parse_argv_spank(enum jobreq_tool tool, int argc, char *const argv[],
			    char *const spank_env[], struct jobreq_opts *o, int *llm_options,
			    char *err, size_t errlen)
{
	return jobreq_parse_words(tool, argc, argv, spank_env, false, o, llm_options, err,
				  errlen);
}

/*
 * Splits the rest of a "#SBATCH" line into words as sbatch's _get_argument
 * does: blanks separate, quotes group, an unquoted '#' starts a comment.
 */
static int jobreq_split_line(char *line, char **words, int max)
{
	int n = 0;
	char *p = line;

	while (*p && n < max) {
		char *out, quote = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '#')
			break;
		words[n++] = out = p;
		while (*p && (quote || (*p != ' ' && *p != '\t'))) {
			if (!quote && (*p == '"' || *p == '\'')) {
				quote = *p++;
				continue;
			}
			if (quote && *p == quote) {
				quote = 0;
				p++;
				continue;
			}
			*out++ = *p++;
		}
		if (*p)
			p++;
		*out = '\0';
	}
	return n;
}

/* True when a script line ends the #SBATCH block (a command). */
static bool jobreq_is_command(const char *line)
{
	while (isspace((unsigned char)*line))
		line++;
	return *line != '\0' && *line != '#';
}

#define JOBREQ_SCRIPT_MAX_WORDS 256

/*
 * A "#SBATCH hetjob" (or the older "#SBATCH packjob") line ends one
 * component of a heterogeneous job and starts the next, each with options
 * of its own (sbatch(1), HETEROGENEOUS JOB SUPPORT; Slurm 22.05
 * src/sbatch/opt.c _opt_batch_script and src/common/slurm_opt.c: the
 * separator is a directive line whose text holds "hetjob" or "packjob").
 */
static bool jobreq_het_separator(const char *rest)
{
	while (*rest == ' ' || *rest == '\t')
		rest++;
	return (!strncmp(rest, "hetjob", 6) && (!rest[6] || isspace((unsigned char)rest[6]))) ||
	       (!strncmp(rest, "packjob", 7) && (!rest[7] || isspace((unsigned char)rest[7])));
}

/* The words of one component, parsed as sbatch parses its directives. */
static int jobreq_parse_component(char **words, const int *word_line, int n,
				  struct jobreq_opts *o, int *llm_options, char *err,
				  size_t errlen)
{
	int rc;

	words[n] = NULL;
	rc = jobreq_parse_words(JOBREQ_SBATCH, n, words, NULL, true, o, llm_options, err, errlen);
	/*
	 * sbatch's _opt_batch_script: a word its getopt stops at (no option,
	 * no option's value) is "Invalid directive found in batch script",
	 * and sbatch refuses the job; a placeholder left in a published
	 * script ("#SBATCH <SLURM OPTIONS>") is one.
	 */
	if (rc == 0 && o->first_arg > 0 && o->first_arg < n) {
		adv_snprintf(err, errlen, "line %d: invalid #SBATCH directive '%s': sbatch "
			     "refuses the script (\"Invalid directive found in batch script\")",
			     word_line[o->first_arg], words[o->first_arg]);
		rc = -1;
	}
	o->script[0] = '\0';
	/* Both would point into the copy: a script names neither. */
	o->wrap_text = NULL;
	o->first_arg = 0;
	return rc;
}

int jobreq_parse_script_het(const char *text, size_t len, struct jobreq_opts comp[], int max,
			    int *n_comp, int *llm_options, char *err, size_t errlen)
{
	static const char magic[] = "#SBATCH";
	char *copy, *words[JOBREQ_SCRIPT_MAX_WORDS + 1];
	int word_line[JOBREQ_SCRIPT_MAX_WORDS + 1];
	char *line, *next;
	int n = 1, k, lineno = 0, rc = 0, c = 0;
	struct jobreq_opts extra;
	char later[8];

	*n_comp = 0;
	if (max < 1)
		return -1;
	copy = malloc(len + 1);
	if (!copy) {
		adv_snprintf(err, errlen, "out of memory reading the batch script");
		return -1;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	words[0] = (char *)"sbatch";
	word_line[0] = 0;
	for (int i = 0; i < max; i++)
		jobreq_opts_init(&comp[i]);
	/* Line by line (blank lines count for the line numbers). */
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line[strcspn(line, "\r")] = '\0';
		if (strncmp(line, magic, sizeof(magic) - 1) == 0) {
			if (jobreq_het_separator(line + sizeof(magic) - 1)) {
				/* Components past max are parsed (their directives
				 * must be valid too) and not kept. */
				struct jobreq_opts *o = c < max ? &comp[c] : &extra;

				jobreq_opts_init(&extra);
				if (jobreq_parse_component(words, word_line, n, o, llm_options,
							   rc == 0 ? err : later,
							   rc == 0 ? errlen : sizeof(later)) != 0)
					rc = -1;
				c++;
				n = 1;
				continue;
			}
			k = jobreq_split_line(line + sizeof(magic) - 1, words + n,
					      JOBREQ_SCRIPT_MAX_WORDS - n);
			while (k-- > 0)
				word_line[n++] = lineno;
			continue;
		}
		if (jobreq_is_command(line))
			break;
	}
	jobreq_opts_init(&extra);
	if (jobreq_parse_component(words, word_line, n, c < max ? &comp[c] : &extra, llm_options,
				   rc == 0 ? err : later, rc == 0 ? errlen : sizeof(later)) != 0)
		rc = -1;
	c++;
	*n_comp = c;
	free(copy);
	return rc;
}

int jobreq_parse_script(const char *text, size_t len, struct jobreq_opts *o,
			int *llm_options, char *err, size_t errlen)
{
	/* A heterogeneous job: the first component is what the batch
	 * script's own environment and a plain srun describe. */
	int n;

	return jobreq_parse_script_het(text, len, o, 1, &n, llm_options, err, errlen);
}

void jobreq_het_union(const struct jobreq_opts comp[], int n, struct jobreq *r)
{
	if (n == 1) {
		memset(r, 0, sizeof(*r));
		r->opt = comp[0];
		jobreq_resolve(r);
		return;
	}
	int gpn = -1;

	memset(r, 0, sizeof(*r));
	if (n < 1)
		return;
	for (int i = 0; i < n; i++) {
		struct jobreq one;

		memset(&one, 0, sizeof(one));
		one.opt = comp[i];
		jobreq_resolve(&one);
		if (i == 0) {
			*r = one;
			gpn = one.gpus_per_node;
			if (r->nodes <= 0)
				r->nodes = 1;
			continue;
		}
		/* A component without -N has one node (sbatch's default). */
		r->nodes = jobreq_mul(1, (long)r->nodes + (one.nodes > 0 ? one.nodes : 1));
		r->gpus = jobreq_mul(1, (long)r->gpus + one.gpus);
		if (one.gpus_per_node != gpn)
			gpn = 0;
		if (!r->gpu_type[0])
			adv_strlcpy(r->gpu_type, one.gpu_type, sizeof(r->gpu_type));
	}
	r->gpus_per_node = gpn > 0 ? gpn : 0;
}

struct jobreq_envmap {
	const char *suffix;   /* after SBATCH_ / SALLOC_ / SLURM_ */
	int code;
};

/* The input variables of sbatch(1)/salloc(1)/srun(1) for the options we read. */
static const struct jobreq_envmap jobreq_env_common[] = {
	{ "GPUS", OPT_GPUS },
	{ "GPUS_PER_NODE", OPT_GPUS_PER_NODE },
	{ "GPUS_PER_TASK", OPT_GPUS_PER_TASK },
	{ "GRES", OPT_GRES },
	{ "PARTITION", OPT_PARTITION },
	{ "ACCOUNT", OPT_ACCOUNT },
	{ "CONSTRAINT", OPT_CONSTRAINT },
	{ "MEM_PER_NODE", OPT_MEM },
	{ "MEM_PER_GPU", OPT_MEM_PER_GPU },
	{ "EXCLUSIVE", OPT_EXCLUSIVE },
};

/* srun only: its input variables include the node and task counts. */
static const struct jobreq_envmap jobreq_env_srun[] = {
	{ "NNODES", OPT_NODES },
	{ "JOB_NUM_NODES", OPT_NODES },
	{ "NPROCS", OPT_NTASKS },
	{ "NTASKS", OPT_NTASKS },
	{ "NTASKS_PER_NODE", OPT_NTASKS_PER_NODE },
};

static int jobreq_env_table(const char *prefix, const struct jobreq_envmap *map, size_t n,
			    jobreq_getenv_fn get, void *arg, struct jobreq_opts *o,
			    char *err, size_t errlen)
{
	char name[64];
	size_t i;

	for (i = 0; i < n; i++) {
		const char *v;

		adv_snprintf(name, sizeof(name), "%s%s", prefix, map[i].suffix);
		v = get(name, arg);
		if (!v)
			continue;
		if (jobreq_apply(o, map[i].code, v, NULL, err, errlen) != 0) {
			adv_snprintf(err + strlen(err), errlen - strlen(err), " (from %s)", name);
			return -1;
		}
	}
	return 0;
}

int jobreq_parse_env(enum jobreq_tool tool, jobreq_getenv_fn get, void *arg,
		     struct jobreq_opts *o, char *err, size_t errlen)
{
	const char *prefix = tool == JOBREQ_SBATCH ? "SBATCH_" :
			     tool == JOBREQ_SALLOC ? "SALLOC_" : "SLURM_";

	if (jobreq_env_table(prefix, jobreq_env_common, ADV_ARRAY_SIZE(jobreq_env_common),
			     get, arg, o, err, errlen) != 0)
		return -1;
	if (tool == JOBREQ_SRUN) {
		const char *g = get("SLURM_STEP_GRES", arg);

		if (g && jobreq_gres(g, o, err, errlen) != 0)
			return -1;
		return jobreq_env_table(prefix, jobreq_env_srun, ADV_ARRAY_SIZE(jobreq_env_srun),
					get, arg, o, err, errlen);
	}
	return 0;
}

/* "0,1,2,3" or "0-3,6" (SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES style) -> 4 / 5 */
static int jobreq_count_list(const char *s)
{
	char buf[256];
	char *save = NULL, *tok;
	int n = 0;

	adv_strlcpy(buf, s, sizeof(buf));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		long a, b;

		if (dash) {
			*dash = '\0';
			if (adv_parse_long(tok, &a) == 0 && adv_parse_long(dash + 1, &b) == 0 &&
			    b >= a && b - a < JOBREQ_COUNT_MAX)
				n += (int)(b - a + 1);
		} else if (*tok) {
			n++;
		}
		if (n > JOBREQ_COUNT_MAX)
			return (int)JOBREQ_COUNT_MAX;
	}
	return n;
}

uint32_t jobreq_parse_allocation(jobreq_getenv_fn get, void *arg, struct jobreq_opts *o)
{
	const char *id = get("SLURM_JOB_ID", arg);
	const char *v;
	long l, job;

	if (!id || adv_parse_long(id, &job) != 0 || job <= 0 || job > (long)UINT32_MAX)
		return 0;
	if ((v = get("SLURM_JOB_NUM_NODES", arg)) && adv_parse_long(v, &l) == 0 && l > 0 &&
	    l <= JOBREQ_COUNT_MAX)
		o->nodes = (int)l;
	if ((v = get("SLURM_GPUS_ON_NODE", arg)) && adv_parse_long(v, &l) == 0 && l > 0 &&
	    l <= JOBREQ_COUNT_MAX)
		o->gres_gpus = (int)l;
	else if ((v = get("SLURM_JOB_GPUS", arg)) && *v)
		o->gres_gpus = jobreq_count_list(v);
	if ((v = get("SLURM_JOB_PARTITION", arg)))
		jobreq_list(o->partition, sizeof(o->partition), v);
	if ((v = get("SLURM_JOB_ACCOUNT", arg)))
		adv_strlcpy(o->account, v, sizeof(o->account));
	return (uint32_t)job;
}

static bool jobreq_has_gpu_request(const struct jobreq_opts *o)
{
	return o->gpus || o->gpus_per_node || o->gpus_per_task || o->gres_gpus;
}

/* The GPU fields travel together: Slurm keeps each option, but a layer's
 * type belongs to that layer's count. */
void jobreq_merge(const struct jobreq_opts *const layers[], size_t n, struct jobreq_opts *out)
{
	size_t i;

	jobreq_opts_init(out);
	for (i = n; i-- > 0;) {
		const struct jobreq_opts *l = layers[i];

		if (!l)
			continue;
		if (l->nodes) {
			out->nodes = l->nodes;
			out->nodes_max = l->nodes_max;
		}
		if (l->ntasks) out->ntasks = l->ntasks;
		if (l->ntasks_per_node) out->ntasks_per_node = l->ntasks_per_node;
		if (l->gpus) {
			out->gpus = l->gpus;
			adv_strlcpy(out->gpus_type, l->gpus_type, sizeof(out->gpus_type));
		}
		if (l->gpus_per_node) {
			out->gpus_per_node = l->gpus_per_node;
			adv_strlcpy(out->gpn_type, l->gpn_type, sizeof(out->gpn_type));
		}
		if (l->gpus_per_task) {
			out->gpus_per_task = l->gpus_per_task;
			adv_strlcpy(out->gpt_type, l->gpt_type, sizeof(out->gpt_type));
		}
		if (l->gres_gpus) {
			out->gres_gpus = l->gres_gpus;
			adv_strlcpy(out->gres_type, l->gres_type, sizeof(out->gres_type));
		}
		if (l->partition[0])
			adv_strlcpy(out->partition, l->partition, sizeof(out->partition));
		if (l->account[0])
			adv_strlcpy(out->account, l->account, sizeof(out->account));
		if (l->constraint[0])
			adv_strlcpy(out->constraint, l->constraint, sizeof(out->constraint));
		if (l->mem_mb) out->mem_mb = l->mem_mb;
		if (l->mem_per_gpu_mb) out->mem_per_gpu_mb = l->mem_per_gpu_mb;
		if (l->exclusive >= 0) out->exclusive = l->exclusive;
		if (l->wrap) out->wrap = true;
		if (l->chdir[0])
			adv_strlcpy(out->chdir, l->chdir, sizeof(out->chdir));
		if (l->script[0])
			adv_strlcpy(out->script, l->script, sizeof(out->script));
	}
}

static const char *jobreq_first_type(const struct jobreq_opts *o)
{
	if (o->gpus && o->gpus_type[0]) return o->gpus_type;
	if (o->gpus_per_node && o->gpn_type[0]) return o->gpn_type;
	if (o->gres_gpus && o->gres_type[0]) return o->gres_type;
	if (o->gpus_per_task && o->gpt_type[0]) return o->gpt_type;
	return "";
}

void jobreq_resolve(struct jobreq *r)
{
	const struct jobreq_opts *o = &r->opt;
	int nodes = o->nodes;
	int gpn = o->gpus_per_node ? o->gpus_per_node : o->gres_gpus;

	if (!nodes && o->ntasks && o->ntasks_per_node)
		nodes = (o->ntasks + o->ntasks_per_node - 1) / o->ntasks_per_node;
	r->gpus = 0;
	r->gpus_per_node = 0;
	if (o->gpus) {
		r->gpus = o->gpus;
		if (gpn)
			r->gpus_per_node = gpn;
		else if (nodes && o->gpus % nodes == 0)
			r->gpus_per_node = o->gpus / nodes;
	} else if (gpn) {
		/* Per-node requests without -N get one node, as in Slurm. */
		if (!nodes)
			nodes = 1;
		r->gpus_per_node = gpn;
		r->gpus = jobreq_mul(gpn, nodes);
	} else if (o->gpus_per_task) {
		int ntasks = o->ntasks;

		if (!ntasks)
			ntasks = o->ntasks_per_node ? jobreq_mul(o->ntasks_per_node, nodes ? nodes : 1)
						    : (nodes ? nodes : 1);
		r->gpus = jobreq_mul(o->gpus_per_task, ntasks);
		if (nodes && r->gpus % nodes == 0)
			r->gpus_per_node = r->gpus / nodes;
	}
	r->nodes = nodes;
	adv_strlcpy(r->gpu_type, jobreq_first_type(o), sizeof(r->gpu_type));
	adv_strlcpy(r->partition, o->partition, sizeof(r->partition));
}

int jobreq_build(enum jobreq_tool tool, int argc, char *const argv[],
		 const char *script_text, size_t script_len,
		 jobreq_getenv_fn get, void *arg, struct jobreq *r,
		 char *err, size_t errlen)
{
	return jobreq_build_spank(tool, argc, argv, NULL, script_text, script_len, get, arg, r,
				  err, errlen);
}

/* The allocation, for srun inside one, then the derived totals. */
static void jobreq_finish(enum jobreq_tool tool, jobreq_getenv_fn get, void *arg, struct jobreq *r)
{
	struct jobreq_opts alloc;

	if (tool == JOBREQ_SRUN) {
		jobreq_opts_init(&alloc);
		r->job_id = jobreq_parse_allocation(get, arg, &alloc);
		r->in_allocation = r->job_id != 0;
		/* The allocation fills only what the step itself does not say. */
		if (r->in_allocation) {
			if (!r->opt.nodes)
				r->opt.nodes = alloc.nodes;
			if (!jobreq_has_gpu_request(&r->opt))
				r->opt.gres_gpus = alloc.gres_gpus;
			if (!r->opt.partition[0])
				adv_strlcpy(r->opt.partition, alloc.partition, sizeof(r->opt.partition));
			if (!r->opt.account[0])
				adv_strlcpy(r->opt.account, alloc.account, sizeof(r->opt.account));
		}
	}
	jobreq_resolve(r);
}

int jobreq_build_parsed(enum jobreq_tool tool, const struct jobreq_opts *cmd, int llm_options,
			const char *script_text, size_t script_len,
			jobreq_getenv_fn get, void *arg, struct jobreq *r,
			char *err, size_t errlen)
{
	struct jobreq_opts env, script;
	const struct jobreq_opts *layers[3] = { cmd, &env, &script };

	memset(r, 0, sizeof(*r));
	r->llm_options = llm_options;
	jobreq_opts_init(&env);
	jobreq_opts_init(&script);
	if (jobreq_parse_env(tool, get, arg, &env, err, errlen) != 0)
		return -1;
	if (tool == JOBREQ_SBATCH && script_text &&
	    jobreq_parse_script(script_text, script_len, &script, &r->llm_options, err, errlen) != 0)
		return -1;
	jobreq_merge(layers, 3, &r->opt);
	jobreq_finish(tool, get, arg, r);
	return 0;
}

void jobreq_build_resolved(enum jobreq_tool tool, const struct jobreq_opts *resolved,
			   int llm_options, jobreq_getenv_fn get, void *arg, struct jobreq *r)
{
	memset(r, 0, sizeof(*r));
	r->llm_options = llm_options;
	r->opt = *resolved;
	jobreq_finish(tool, get, arg, r);
}

int jobreq_build_spank(enum jobreq_tool tool, int argc, char *const argv[],
		       char *const spank_env[], const char *script_text, size_t script_len,
		       jobreq_getenv_fn get, void *arg, struct jobreq *r,
		       char *err, size_t errlen)
{
	struct jobreq_opts cmd;
	int llm = 0;

	jobreq_opts_init(&cmd);
	if (argc > 0 && jobreq_parse_argv_spank(tool, argc, argv, spank_env, &cmd, &llm,
						err, errlen) != 0) {
		memset(r, 0, sizeof(*r));
		return -1;
	}
	return jobreq_build_parsed(tool, &cmd, llm, script_text, script_len, get, arg, r,
				   err, errlen);
}

/* Slurm's long option names (src/common/slurm_opt.c) for what this module reads. */
static const struct {
	const char *name;
	int code;
} jobreq_named[] = {
	{ "nodes", OPT_NODES },
	{ "ntasks", OPT_NTASKS },
	{ "ntasks-per-node", OPT_NTASKS_PER_NODE },
	{ "gpus", OPT_GPUS },
	{ "gpus-per-node", OPT_GPUS_PER_NODE },
	{ "gpus-per-task", OPT_GPUS_PER_TASK },
	{ "gres", OPT_GRES },
	{ "partition", OPT_PARTITION },
	{ "account", OPT_ACCOUNT },
	{ "constraint", OPT_CONSTRAINT },
	{ "mem", OPT_MEM },
	{ "mem-per-gpu", OPT_MEM_PER_GPU },
	{ "exclusive", OPT_EXCLUSIVE },
	{ "chdir", OPT_CHDIR },
};

int jobreq_apply_named(struct jobreq_opts *o, const char *name, const char *value,
		       char *err, size_t errlen)
{
	size_t i;

	if (!name || !value)
		return 0;
	for (i = 0; i < ADV_ARRAY_SIZE(jobreq_named); i++) {
		if (strcmp(name, jobreq_named[i].name) != 0)
			continue;
		if (jobreq_named[i].code == OPT_EXCLUSIVE) {
			/* slurm_opt.c arg_get_exclusive: the sharing mode by name
			 * ("topo" from 23.11; from 26.05 srun's --exclusive reads
			 * "allocation" unless --exact is in effect). */
			if (strcmp(value, "exclusive") == 0 || strcmp(value, "user") == 0 ||
			    strcmp(value, "mcs") == 0 || strcmp(value, "topo") == 0 ||
			    strcmp(value, "allocation") == 0)
				o->exclusive = 1;
			else if (strcmp(value, "oversubscribe") == 0)
				o->exclusive = 0;
			return 0;
		}
		return jobreq_apply(o, jobreq_named[i].code, value, NULL, err, errlen);
	}
	return 0;
}

/*
 * --gpus (per job) beside --gpus-per-node or --gres=gpu (per node): Slurm
 * 22.05 takes the node count from their quotient and refuses the job
 * when it is not whole or falls outside -N (slurmctld's job spec check,
 * src/common/gres.c; sbatch 22.05.8 prints "--gpus is not multiple of
 * --gres=gpu/--gpus-per-node" and "Based on --gpu and
 * --gres=gpu/--gpus-per-node required nodes (1) doesn't fall between
 * min_nodes (2) and max_nodes (2) boundaries").
 */
int jobreq_check_gpus(const struct jobreq_opts *o, char *err, size_t errlen)
{
	int gpn = o->gpus_per_node ? o->gpus_per_node : o->gres_gpus;
	int need;

	if (o->gpus <= 0 || gpn <= 0)
		return 0;
	if (o->gpus % gpn) {
		adv_snprintf(err, errlen, "--gpus=%d is not a multiple of the %d GPUs per node "
			     "(--gpus-per-node/--gres=gpu): Slurm refuses the job (\"--gpus is not "
			     "multiple of --gres=gpu/--gpus-per-node\")", o->gpus, gpn);
		return -1;
	}
	need = o->gpus / gpn;
	if (o->nodes > 0 && (need < o->nodes || (o->nodes_max > 0 && need > o->nodes_max))) {
		char range[32];

		if (o->nodes_max == o->nodes)
			adv_snprintf(range, sizeof(range), "%d", o->nodes);
		else if (o->nodes_max > 0)
			adv_snprintf(range, sizeof(range), "%d-%d", o->nodes, o->nodes_max);
		else
			adv_snprintf(range, sizeof(range), "at least %d", o->nodes);
		adv_snprintf(err, errlen, "--gpus=%d at %d per node (--gpus-per-node/--gres=gpu) needs "
			     "%d %s but --nodes asks %s: Slurm refuses the job (\"required nodes (%d) "
			     "doesn't fall between min_nodes and max_nodes\")", o->gpus, gpn, need,
			     need == 1 ? "node" : "nodes", range, need);
		return -1;
	}
	return 0;
}

const char *const jobreq_launcher_words[] = {
	"torchrun", "srun", "deepspeed", "accelerate", "python", "vllm", "sglang", "tune",
	"axolotl", "mpirun", "mpiexec", NULL,
};

bool jobreq_mentions_launcher(const char *text, size_t len)
{
	size_t i;

	if (!text)
		return false;
	for (i = 0; jobreq_launcher_words[i]; i++)
		if (memmem(text, len, jobreq_launcher_words[i], strlen(jobreq_launcher_words[i])))
			return true;
	return false;
}
