/*
 * audit.c - reads the jobs Slurm's accounting kept, for `advisorctl audit`
 * (issue 30): the jobs of a period, each one's batch script and
 * environment, through Slurm's own sacct rather than slurmdbd's protocol
 * or its database, so whatever version and storage the site runs, what
 * advisor reads is what the admin would see with sacct.
 *
 * Every sacct run is bounded: its output (what it prints beyond is an
 * error, not a cut list that looks complete), its time (killed after
 * timeout_ms: a slurmdbd that hangs does not hang the audit), and the
 * number of jobs taken.
 *
 * audit_print writes the result: a row per job, then the summary (by
 * verdict, the GPU-hours of the jobs that would be rejected and how those
 * ended), as text or --json.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "audit.h"
#include "engine/names.h"
#include "print.h"
#include "util.h"

/* The whole job list: far above 1000 jobs' rows (~200 bytes each). */
#define AUDIT_LIST_MAX ((size_t)64 << 20)
/* One job's environment: Slurm's own bound on an environment is 1 MiB-ish
 * per variable; the whole is bounded here. */
#define AUDIT_ENV_MAX ((size_t)4 << 20)
#define AUDIT_ENV_VARS 4096
/* What sacct says on stderr, for the error message. */
#define AUDIT_ERR_MAX 1024

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Runs sacct with argv (argv[0] "sacct", found on PATH), its stdout in
 * *out (NUL-terminated, at most max bytes) and its stderr in err.  0 when
 * it exited 0; 127 when it could not be run; else 1, with why in err.
 */
static int run_sacct(char *const argv[], size_t max, int timeout_ms, char **out, size_t *len,
		     char *err, size_t errlen)
{
	int po[2], pe[2], status = 0;
	size_t n = 0, en = 0, cap = 65536;
	char *buf = malloc(cap + 1);
	bool over = false, timed_out = false;
	long deadline = now_ms() + timeout_ms;
	pid_t pid;

	err[0] = '\0';
	*out = NULL;
	*len = 0;
	if (!buf || pipe(po) != 0) {
		free(buf);
		adv_snprintf(err, errlen, "%s", strerror(errno));
		return 1;
	}
	if (pipe(pe) != 0) {
		close(po[0]);
		close(po[1]);
		free(buf);
		adv_snprintf(err, errlen, "%s", strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		adv_snprintf(err, errlen, "fork: %s", strerror(errno));
		close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
		free(buf);
		return 1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]); close(pe[0]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		long left = deadline - now_ms();
		char tmp[4096];

		if (left <= 0) {
			timed_out = true;
			break;
		}
		if (fds[0].fd < 0 && fds[1].fd < 0)
			break;
		if (poll(fds, 2, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t r;

			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(fds[i].fd, tmp, sizeof(tmp));
			if (r <= 0) {
				close(fds[i].fd);
				if (i == 0)
					po[0] = -1;
				else
					pe[0] = -1;
				open_fds--;
				continue;
			}
			if (i == 1) {
				size_t k = (size_t)r < errlen - 1 - en ? (size_t)r : errlen - 1 - en;

				memcpy(err + en, tmp, k);
				en += k;
				err[en] = '\0';
				continue;
			}
			if (n + (size_t)r > max) {
				over = true;
				break;
			}
			if (n + (size_t)r > cap) {
				size_t ncap = cap * 2 < max ? cap * 2 : max;
				char *nb;

				while (ncap < n + (size_t)r)
					ncap *= 2;
				nb = realloc(buf, ncap + 1);
				if (!nb) {
					over = true;
					break;
				}
				buf = nb;
				cap = ncap;
			}
			memcpy(buf + n, tmp, (size_t)r);
			n += (size_t)r;
		}
		if (over)
			break;
	}
	if (po[0] >= 0)
		close(po[0]);
	if (pe[0] >= 0)
		close(pe[0]);
	if (over || timed_out)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[n] = '\0';
	/* sacct's own words on one line: they end the message. */
	for (char *p = err; *p; p++)
		if (*p == '\n')
			*p = *(p + 1) ? ' ' : '\0';
	if (timed_out) {
		adv_snprintf(err, errlen, "sacct did not answer within %d ms", timeout_ms);
		free(buf);
		return 1;
	}
	if (over) {
		adv_snprintf(err, errlen, "sacct printed more than %zu bytes", max);
		free(buf);
		return 1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		free(buf);
		return 127;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (!err[0])
			adv_snprintf(err, errlen, "sacct failed (status %d)", status);
		free(buf);
		return 1;
	}
	*out = buf;
	*len = n;
	return 0;
}

static void fmt_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	localtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* "cpu=2,mem=1G,node=1,billing=2,gres/gpu=8,gres/gpu:h100=8": the GPUs. */
static int tres_gpus(const char *tres)
{
	const char *p = tres;

	while (p && *p) {
		if (!strncmp(p, "gres/gpu=", 9))
			return atoi(p + 9);
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return 0;
}

/* Elapsed as sacct prints it: [D-]HH:MM:SS or MM:SS. */
static long elapsed_seconds(const char *s)
{
	long d = 0, h = 0, m = 0, sec = 0;
	const char *dash = strchr(s, '-');

	if (dash) {
		d = atol(s);
		s = dash + 1;
	}
	if (sscanf(s, "%ld:%ld:%ld", &h, &m, &sec) == 3)
		return ((d * 24 + h) * 60 + m) * 60 + sec;
	if (sscanf(s, "%ld:%ld", &m, &sec) == 2)
		return m * 60 + sec;
	return 0;
}

#define AUDIT_FIELDS "JobID,User,Account,Partition,State,ExitCode,Elapsed,AllocTRES,NNodes,WorkDir"

int audit_list(const struct audit_query *q, struct audit_job **jobs, size_t *n, bool *more)
{
	char since[32], until[32], err[AUDIT_ERR_MAX], *out, *line, *save = NULL;
	char *argv[16];
	size_t len, cap = 0;
	int k = 0, rc;

	*jobs = NULL;
	*n = 0;
	*more = false;
	fmt_time(q->since, since, sizeof(since));
	fmt_time(q->until, until, sizeof(until));
	argv[k++] = "sacct";
	/* -X: the job, not its steps; -P: '|' between fields, no padding. */
	argv[k++] = "-a";
	argv[k++] = "-X";
	argv[k++] = "-P";
	argv[k++] = "-n";
	argv[k++] = "-o" AUDIT_FIELDS;
	argv[k++] = "-S";
	argv[k++] = since;
	/* No --until: sacct's own end, now, as it sees it. */
	if (q->until) {
		argv[k++] = "-E";
		argv[k++] = until;
	}
	if (q->user) {
		argv[k++] = "-u";
		argv[k++] = (char *)q->user;
	}
	if (q->partition) {
		argv[k++] = "-r";
		argv[k++] = (char *)q->partition;
	}
	argv[k] = NULL;
	rc = run_sacct(argv, AUDIT_LIST_MAX, q->timeout_ms, &out, &len, err, sizeof(err));
	if (rc == 127) {
		fprintf(stderr, "advisorctl: audit needs Slurm's sacct on PATH (Debian package "
			"slurm-client), run against the cluster's slurmdbd\n");
		return AUDIT_UNAVAIL;
	}
	if (rc) {
		/* Accounting off, slurmdbd down: the audit has nothing to read. */
		fprintf(stderr, "advisorctl: sacct: %s\nadvisorctl: audit reads the jobs from "
			"slurmdbd (AccountingStorageType=accounting_storage/slurmdbd, with "
			"AccountingStoreFlags=job_script,job_env to keep the scripts)\n",
			ADV_TEXT(err));
		return AUDIT_UNAVAIL;
	}
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[10], *p = line;
		struct audit_job *j;
		int nf = 0;

		while (nf < 10) {
			f[nf++] = p;
			p = strchr(p, '|');
			if (!p)
				break;
			*p++ = '\0';
		}
		if (nf < 10)
			continue;   /* not a row of ours (a warning sacct printed) */
		if (*n == q->limit) {
			*more = true;
			break;
		}
		if (*n == cap) {
			struct audit_job *nj;

			cap = cap ? cap * 2 : 64;
			nj = realloc(*jobs, cap * sizeof(**jobs));
			if (!nj) {
				free(out);
				fprintf(stderr, "advisorctl: out of memory\n");
				return AUDIT_SOFTWARE;
			}
			*jobs = nj;
		}
		j = &(*jobs)[(*n)++];
		memset(j, 0, sizeof(*j));
		adv_strlcpy(j->id, f[0], sizeof(j->id));
		adv_strlcpy(j->user, f[1], sizeof(j->user));
		adv_strlcpy(j->account, f[2], sizeof(j->account));
		adv_strlcpy(j->partition, f[3], sizeof(j->partition));
		/* "CANCELLED by 0": the state alone. */
		f[4][strcspn(f[4], " ")] = '\0';
		adv_strlcpy(j->state, f[4], sizeof(j->state));
		adv_strlcpy(j->exit, f[5], sizeof(j->exit));
		j->elapsed_s = elapsed_seconds(f[6]);
		j->gpus = tres_gpus(f[7]);
		j->nnodes = atoi(f[8]);
		adv_strlcpy(j->workdir, f[9], sizeof(j->workdir));
	}
	free(out);
	return 0;
}

/* sacct's --batch-script and --env-vars put a title and a rule of dashes
 * before the text: the text starts after the rule. */
static char *after_rule(char *s)
{
	char *rule = strstr(s, "\n----");

	if (!rule)
		return NULL;
	rule = strchr(rule + 1, '\n');
	return rule ? rule + 1 : NULL;
}

int audit_script(const char *id, int timeout_ms, size_t max, char **text, size_t *len,
		 char *why, size_t whylen)
{
	char *argv[] = { "sacct", "-j", (char *)id, "--batch-script", NULL };
	char err[AUDIT_ERR_MAX], *out, *body;
	size_t n;
	/* The title and rule on top of the script itself. */
	int rc = run_sacct(argv, max + 4096, timeout_ms, &out, &n, err, sizeof(err));

	*text = NULL;
	*len = 0;
	if (rc) {
		adv_snprintf(why, whylen, "%s", rc == 127 ? "sacct not found" : err);
		return -1;
	}
	body = after_rule(out);
	/* Slurm prints NONE (and blank lines) where no script was kept: an
	 * srun or salloc job, or AccountingStoreFlags without job_script. */
	if (!body || !*body || (!strncmp(body, "NONE", 4) && !body[4 + strspn(body + 4, "\n")])) {
		free(out);
		return 1;
	}
	n -= (size_t)(body - out);
	if (n > max) {
		adv_snprintf(why, whylen, "script over %zu bytes", max);
		free(out);
		return -1;
	}
	memmove(out, body, n + 1);
	*text = out;
	*len = n;
	return 0;
}

int audit_env(const char *id, int timeout_ms, char ***env)
{
	char *argv[] = { "sacct", "-j", (char *)id, "--env-vars", NULL };
	char err[AUDIT_ERR_MAX], *out, *body, *line, *save = NULL;
	size_t n, k = 0;
	char **v;

	*env = NULL;
	if (run_sacct(argv, AUDIT_ENV_MAX, timeout_ms, &out, &n, err, sizeof(err)) != 0)
		return -1;
	body = after_rule(out);
	if (!body || !*body || (!strncmp(body, "NONE", 4) && !body[4 + strspn(body + 4, "\n")])) {
		free(out);
		return 0;
	}
	v = calloc(AUDIT_ENV_VARS + 1, sizeof(*v));
	if (!v) {
		free(out);
		return -1;
	}
	/* One variable a line; a line without '=' continues a value that had
	 * a newline in it, which the reader does not need: dropped. */
	for (line = strtok_r(body, "\n", &save); line && k < AUDIT_ENV_VARS;
	     line = strtok_r(NULL, "\n", &save))
		if (strchr(line, '=') && line[0] != '=' && !(v[k++] = strdup(line))) {
			audit_env_free(v);
			free(out);
			return -1;
		}
	free(out);
	*env = v;
	return 0;
}

void audit_env_free(char **env)
{
	if (!env)
		return;
	for (char **p = env; *p; p++)
		free(*p);
	free(env);
}

static void put(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

/* ---- audit -------------------------------------------------------------------- */

static const char *audit_verdict(const struct audit_job *j)
{
	if (!j->judged)
		return "-";
	/* An exempt job was not checked: not a clean accept (issue 30). */
	return j->exempt ? "exempt" : engine_verdict_name(j->verdict);
}

static double audit_gpu_hours(const struct audit_job *j)
{
	return (double)j->gpus * (double)j->elapsed_s / 3600.0;
}

#define AUDIT_STATES 16

/* How the jobs advisor would have rejected really ended: state, count. */
struct audit_summary {
	size_t judged, by_verdict[ADV_VERDICT_COUNT], exempt, not_judged;
	double reject_gpu_hours, gpu_hours;
	struct { char state[32]; size_t n; } ended[AUDIT_STATES];
	size_t n_ended;
};

static void audit_sum(const struct audit_job *jobs, size_t n, struct audit_summary *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		const struct audit_job *j = &jobs[i];
		size_t k;

		if (!j->judged) {
			s->not_judged++;
			continue;
		}
		s->judged++;
		s->gpu_hours += audit_gpu_hours(j);
		if (j->exempt) {
			s->exempt++;
			continue;
		}
		s->by_verdict[j->verdict < ADV_VERDICT_COUNT ? j->verdict : ADV_REJECT]++;
		if (j->verdict != ADV_REJECT)
			continue;
		s->reject_gpu_hours += audit_gpu_hours(j);
		for (k = 0; k < s->n_ended && strcmp(s->ended[k].state, j->state); k++)
			;
		if (k == s->n_ended) {
			/* More distinct states than the table: the last row takes them. */
			if (k == AUDIT_STATES)
				k--;
			else
				adv_strlcpy(s->ended[s->n_ended++].state, j->state,
					    sizeof(s->ended[0].state));
		}
		s->ended[k].n++;
	}
}

void audit_print(FILE *f, const struct audit_job *jobs, size_t n, bool more, bool json)
{
	struct audit_summary s;

	audit_sum(jobs, n, &s);
	if (json) {
		json_object *o = json_object_new_object(), *a = json_object_new_array(),
			    *sum = json_object_new_object(), *v = json_object_new_object(),
			    *e = json_object_new_object();

		for (size_t i = 0; i < n; i++) {
			const struct audit_job *j = &jobs[i];
			json_object *r = json_object_new_object();

			put(r, "job_id", json_object_new_string(j->id));
			put(r, "user", json_object_new_string(j->user));
			put(r, "account", json_object_new_string(j->account));
			put(r, "partition", json_object_new_string(j->partition));
			put(r, "gpus", json_object_new_int(j->gpus));
			put(r, "nodes", json_object_new_int(j->nnodes));
			put(r, "elapsed_s", json_object_new_int64(j->elapsed_s));
			put(r, "gpu_hours", json_object_new_double(audit_gpu_hours(j)));
			put(r, "state", json_object_new_string(j->state));
			put(r, "exit_code", json_object_new_string(j->exit));
			put(r, "judged", json_object_new_boolean(j->judged));
			if (j->judged) {
				json_object *codes = json_object_new_array();
				char buf[sizeof(j->codes)], *save = NULL;

				put(r, "verdict", json_object_new_string(audit_verdict(j)));
				adv_strlcpy(buf, j->codes, sizeof(buf));
				for (char *c = strtok_r(buf, ",", &save); c; c = strtok_r(NULL, ",", &save))
					json_object_array_add(codes, json_object_new_string(c));
				put(r, "codes", codes);
			} else {
				put(r, "why", json_object_new_string(j->why));
			}
			json_object_array_add(a, r);
		}
		put(o, "jobs", a);
		put(sum, "jobs", json_object_new_int64((int64_t)n));
		put(sum, "judged", json_object_new_int64((int64_t)s.judged));
		put(sum, "not_judged", json_object_new_int64((int64_t)s.not_judged));
		for (int k = 0; k < ADV_VERDICT_COUNT; k++)
			put(v, engine_verdict_name((enum adv_verdict)k),
			    json_object_new_int64((int64_t)s.by_verdict[k]));
		put(v, "exempt", json_object_new_int64((int64_t)s.exempt));
		put(sum, "by_verdict", v);
		put(sum, "gpu_hours", json_object_new_double(s.gpu_hours));
		put(sum, "reject_gpu_hours", json_object_new_double(s.reject_gpu_hours));
		for (size_t k = 0; k < s.n_ended; k++)
			put(e, s.ended[k].state, json_object_new_int64((int64_t)s.ended[k].n));
		put(sum, "rejected_ended", e);
		put(sum, "truncated", json_object_new_boolean(more));
		put(o, "summary", sum);
		print_json(f, o);
		return;
	}
	fprintf(f, "%-12s %-10s %-10s %4s %9s %-13s %-5s %-7s %s\n", "JOBID", "USER", "PARTITION",
		"GPUS", "GPU-HOURS", "STATE", "EXIT", "VERDICT", "CODES");
	for (size_t i = 0; i < n; i++) {
		const struct audit_job *j = &jobs[i];

		/* Names come from sacct, i.e. from users: escaped (issue 20). */
		fprintf(f, "%-12s %-10s %-10s %4d %9.2f %-13s %-5s %-7s %s\n", ADV_TEXT(j->id),
			ADV_TEXT(j->user), ADV_TEXT(j->partition), j->gpus, audit_gpu_hours(j),
			ADV_TEXT(j->state), ADV_TEXT(j->exit), audit_verdict(j),
			j->judged ? (j->codes[0] ? j->codes : "-") : ADV_TEXT(j->why));
	}
	fprintf(f, "\n%zu job%s, %zu judged: %zu accept, %zu warn, %zu reject, %zu exempt; "
		"%zu not judged\n", n, n == 1 ? "" : "s", s.judged, s.by_verdict[ADV_ACCEPT],
		s.by_verdict[ADV_WARN], s.by_verdict[ADV_REJECT], s.exempt, s.not_judged);
	fprintf(f, "GPU-hours judged: %.2f; of the jobs advisor would reject: %.2f\n", s.gpu_hours,
		s.reject_gpu_hours);
	if (s.n_ended) {
		fprintf(f, "The jobs advisor would reject ended:");
		for (size_t k = 0; k < s.n_ended; k++)
			fprintf(f, "%s %s %zu", k ? "," : "", ADV_TEXT(s.ended[k].state),
				s.ended[k].n);
		fputc('\n', f);
	}
	if (more)
		fprintf(f, "More jobs than --limit in the period: narrow --since/--until or raise "
			"--limit\n");
}
