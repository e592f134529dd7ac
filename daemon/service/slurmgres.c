/*
 * slurmgres.c - GPU type of a partition from Slurm's node Gres.
 *
 * policy.yaml may leave a partition's gpu: out (design.md); the type then
 * comes from the live cluster: the nodes of the partition and their
 * configured Gres ("gpu:h100:8(S:0-1)"), read with libslurm
 * (slurm_load_partitions, slurm_load_node).  A partition whose nodes mix
 * types answers with the type holding the most GPUs.
 *
 * A worker thread must never wait on slurmctld (a dead controller costs
 * MessageTimeout per RPC): a background thread refreshes a cache every
 * ADVISOR_SLURMGRES_REFRESH_S seconds (default 60) and callers only read
 * it, waiting at most SLURMGRES_FIRST_WAIT_MS for the very first load.
 *
 * Where the configuration comes from follows libslurm's own order
 * (src/common/read_config.c, _establish_config_source, Slurm 22.05):
 * SLURM_CONF, the default /etc/slurm/slurm.conf, the configless cache
 * /run/slurm/conf/slurm.conf that slurmd and sackd keep, then a fetch from
 * slurmctld named by SLURM_CONF_SERVER or the DNS SRV record
 * _slurmctld._tcp (configless Slurm, issue 30).  libslurm calls fatal()
 * when none works, so it is never loaded without a source: a file is
 * loaded in this process as before; a fetch is made in a child process
 * (slurmgres_fetch_child), which loads the partitions and nodes and sends
 * them back over a pipe, so that a controller that cannot be reached
 * costs a child, never the daemon.  Which source, or why none, is
 * reported by slurmgres_source() (start-up, --check-config, status).
 *
 * advisorctl --local asks the same way (issue 21: it and the daemon agree),
 * but once, in the caller (slurmgres_foreground): a command line tool may
 * wait for slurmctld as sinfo does, and leaves no thread behind.  When the
 * type is not known, the reason (no slurm.conf, slurmctld did not answer,
 * no such partition, no typed gres) goes into GPU_TYPE_UNKNOWN's message.
 *
 * advisorctl check --script also reads Slurm's max_script_size here
 * (slurmgres_script_max, issue 27), from the same slurm.conf.
 */
#include "config.h"

#include <arpa/nameser.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <resolv.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "slurmgres.h"
#include "util.h"
#include "wire/scripttext.h"

/* libslurm's loaded configuration (slurm_conf_t is in slurm.h, the global
 * is not): SchedulerParameters for max_script_size. */
extern slurm_conf_t slurm_conf __attribute__((weak));

#define SLURMGRES_MAX_PARTS 256
#define SLURMGRES_NAME 64
#define SLURMGRES_TYPES 8
#define SLURMGRES_FIRST_WAIT_MS 250
#define SLURMGRES_DEFAULT_REFRESH_S 60
/* libslurm's default configuration file (Debian's build) and the cache a
 * configless slurmd or sackd keeps (read_config.c). */
#define SLURMGRES_DEFAULT_CONF "/etc/slurm/slurm.conf"
#define SLURMGRES_CACHED_CONF "/run/slurm/conf/slurm.conf"
/* A configless fetch in a child: at most this long (MessageTimeout is 10 s
 * by default; a fetch may try a backup controller too). */
#define SLURMGRES_FETCH_TIMEOUT_MS 30000

struct slurmgres_part {
	char name[SLURMGRES_NAME];
	char gpu[SLURMGRES_NAME];
	bool is_default;
};

static pthread_once_t slurmgres_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t slurmgres_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slurmgres_cond = PTHREAD_COND_INITIALIZER;
static bool slurmgres_enabled;
static bool slurmgres_in_caller;  /* advisorctl: one load, no thread */
static bool slurmgres_loaded;     /* one load finished (even a failed one) */
static bool slurmgres_answered;   /* one load succeeded */
static char slurmgres_off[320];   /* why Slurm is not asked, or "" */
static bool slurmgres_fetch;      /* configless: ask in a child (slurmgres_fetch_child) */
static char slurmgres_src[200];   /* where the configuration comes from */
static size_t slurmgres_script_limit; /* configless: max_script_size of the last answer, 0 unknown */
static char slurmgres_error[256]; /* the last load's failure */
static struct slurmgres_part slurmgres_parts[SLURMGRES_MAX_PARTS];
static size_t slurmgres_nparts;

struct slurmgres_count {
	char type[SLURMGRES_NAME];
	long gpus;
};

/* Adds the typed GPUs of one node's Gres string to counts. */
static void slurmgres_count_node(const char *gres, struct slurmgres_count *c, size_t *n)
{
	char buf[1024];
	char *save = NULL, *tok;

	if (!gres)
		return;
	adv_strlcpy(buf, gres, sizeof(buf));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *type, *num;
		long gpus = 1;
		size_t i;

		tok[strcspn(tok, "(")] = '\0';
		if (strncmp(tok, "gres/", 5) == 0 || strncmp(tok, "gres:", 5) == 0)
			tok += 5;
		if (strncmp(tok, "gpu:", 4) != 0)
			continue;
		type = tok + 4;
		num = strchr(type, ':');
		if (!num)
			continue;   /* "gpu:8": untyped */
		*num++ = '\0';
		if (adv_parse_long(num, &gpus) != 0 || gpus <= 0)
			gpus = 1;
		for (i = 0; i < *n && strcmp(c[i].type, type) != 0; i++)
			;
		if (i == *n) {
			if (*n == SLURMGRES_TYPES)
				continue;
			adv_strlcpy(c[i].type, type, sizeof(c[i].type));
			c[i].gpus = 0;
			(*n)++;
		}
		c[i].gpus += gpus;
	}
}

static void slurmgres_part_type(const partition_info_t *p, const node_info_msg_t *nodes,
				char *gpu, size_t len)
{
	struct slurmgres_count counts[SLURMGRES_TYPES];
	size_t n = 0, i, best = 0;
	int k;

	gpu[0] = '\0';
	for (k = 0; p->node_inx && p->node_inx[k] >= 0 && p->node_inx[k + 1] >= 0; k += 2) {
		int32_t j;

		for (j = p->node_inx[k]; j <= p->node_inx[k + 1]; j++)
			if (j >= 0 && (uint32_t)j < nodes->record_count)
				slurmgres_count_node(nodes->node_array[j].gres, counts, &n);
	}
	for (i = 1; i < n; i++)
		if (counts[i].gpus > counts[best].gpus)
			best = i;
	if (n)
		adv_strlcpy(gpu, counts[best].type, len);
}

static int slurmgres_load(struct slurmgres_part *out, size_t *nout, char *err, size_t errlen)
{
	partition_info_msg_t *parts = NULL;
	node_info_msg_t *nodes = NULL;
	uint32_t i;

	if (slurm_load_partitions((time_t)0, &parts, SHOW_ALL) != 0 || !parts) {
		adv_snprintf(err, errlen, "slurmctld did not answer (%s)",
			     slurm_strerror(errno));
		return -1;
	}
	if (slurm_load_node((time_t)0, &nodes, SHOW_ALL) != 0 || !nodes) {
		adv_snprintf(err, errlen, "slurmctld did not list its nodes (%s)",
			     slurm_strerror(errno));
		slurm_free_partition_info_msg(parts);
		return -1;
	}
	*nout = 0;
	for (i = 0; i < parts->record_count && *nout < SLURMGRES_MAX_PARTS; i++) {
		const partition_info_t *p = &parts->partition_array[i];
		struct slurmgres_part *e = &out[*nout];

		if (!p->name)
			continue;
		adv_strlcpy(e->name, p->name, sizeof(e->name));
		e->is_default = (p->flags & PART_FLAG_DEFAULT) != 0;
		slurmgres_part_type(p, nodes, e->gpu, sizeof(e->gpu));
		(*nout)++;
	}
	slurm_free_node_info_msg(nodes);
	slurm_free_partition_info_msg(parts);
	return 0;
}

/* What a configless child sends back (slurmgres_fetch_child). */
struct slurmgres_answer {
	int rc;
	char err[256];
	size_t n;
	size_t script_max;
	struct slurmgres_part parts[SLURMGRES_MAX_PARTS];
};

static bool slurmgres_read_all(int fd, void *buf, size_t len, int timeout_ms)
{
	char *p = buf;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (len > 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t r;
		long left;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = timeout_ms - ((t1.tv_sec - t0.tv_sec) * 1000L +
				     (t1.tv_nsec - t0.tv_nsec) / 1000000L);
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return false;
		r = read(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		p += r;
		len -= (size_t)r;
	}
	return true;
}

/*
 * Configless: libslurm fetches the configuration from slurmctld and calls
 * fatal() when it cannot, so the fetch and the loads run in a child that
 * writes a struct slurmgres_answer to a pipe; its stderr (libslurm's
 * "error: ..." lines) goes to /dev/null.  A child that dies, or says
 * nothing within SLURMGRES_FETCH_TIMEOUT_MS, is killed and reported.
 */
static int slurmgres_fetch_child(struct slurmgres_answer *a)
{
	int fds[2], status;
	pid_t pid;
	bool ok;

	memset(a, 0, sizeof(*a));
	if (pipe(fds) != 0) {
		adv_snprintf(a->err, sizeof(a->err), "no pipe to a configless fetch: %s",
			     strerror(errno));
		return -1;
	}
	/* The child may exit() through libslurm's fatal(), which flushes
	 * stdio: nothing of the parent's may be left in its buffers. */
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		adv_snprintf(a->err, sizeof(a->err), "no child for a configless fetch: %s",
			     strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		static struct slurmgres_answer out;
		int null = open("/dev/null", O_WRONLY);

		close(fds[0]);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		slurm_init(NULL);
		out.rc = slurmgres_load(out.parts, &out.n, out.err, sizeof(out.err));
		out.script_max = scripttext_limit(&slurm_conf ? slurm_conf.sched_params : NULL);
		_exit(write(fds[1], &out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 : 1);
	}
	close(fds[1]);
	ok = slurmgres_read_all(fds[0], a, sizeof(*a), SLURMGRES_FETCH_TIMEOUT_MS);
	close(fds[0]);
	if (!ok)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!ok) {
		adv_snprintf(a->err, sizeof(a->err),
			     "libslurm could not fetch the configuration from slurmctld (%s)",
			     WIFEXITED(status) ? "it gave up" : "no answer in time");
		a->rc = -1;
	}
	a->err[sizeof(a->err) - 1] = '\0';
	if (a->n > SLURMGRES_MAX_PARTS)
		a->n = SLURMGRES_MAX_PARTS;
	return a->rc;
}

/* One load: in this process from a file, or configless in a child, which
 * also brings max_script_size back (*script_max, 0 when not fetched). */
static int slurmgres_load_any(struct slurmgres_part *out, size_t *n, size_t *script_max,
			      char *err, size_t errlen)
{
	static struct slurmgres_answer a;
	int rc;

	*script_max = 0;
	if (!slurmgres_fetch)
		return slurmgres_load(out, n, err, errlen);
	rc = slurmgres_fetch_child(&a);
	adv_strlcpy(err, a.err, errlen);
	if (rc == 0) {
		memcpy(out, a.parts, a.n * sizeof(a.parts[0]));
		*n = a.n;
		*script_max = a.script_max;
	}
	return rc;
}

static void slurmgres_refresh(void)
{
	static struct slurmgres_part fresh[SLURMGRES_MAX_PARTS];
	char err[sizeof(slurmgres_error)] = "";
	size_t n = 0, script_max;
	int rc = slurmgres_load_any(fresh, &n, &script_max, err, sizeof(err));

	pthread_mutex_lock(&slurmgres_lock);
	adv_strlcpy(slurmgres_error, err, sizeof(slurmgres_error));
	if (rc == 0) {
		memcpy(slurmgres_parts, fresh, n * sizeof(fresh[0]));
		slurmgres_nparts = n;
		slurmgres_script_limit = script_max;
		slurmgres_answered = true;
	}
	slurmgres_loaded = true;
	pthread_cond_broadcast(&slurmgres_cond);
	pthread_mutex_unlock(&slurmgres_lock);
}

static void *slurmgres_thread(void *arg)
{
	long interval = SLURMGRES_DEFAULT_REFRESH_S;
	const char *env = getenv("ADVISOR_SLURMGRES_REFRESH_S");
	long v;

	(void)arg;
	if (env && adv_parse_long(env, &v) == 0 && v > 0)
		interval = v;
	if (!slurmgres_fetch)
		slurm_init(NULL);
	for (;;) {
		slurmgres_refresh();
		sleep((unsigned)interval);
	}
	return NULL;
}

/* Whether a DNS SRV record names slurmctld (libslurm's last resort). */
static bool slurmgres_srv_record(void)
{
	unsigned char ans[NS_PACKETSZ];
	struct __res_state rs;
	int n;

	memset(&rs, 0, sizeof(rs));
	if (res_ninit(&rs) != 0)
		return false;
	n = res_nsearch(&rs, "_slurmctld._tcp", ns_c_in, ns_t_srv, ans, sizeof(ans));
	res_nclose(&rs);
	return n > 0;
}

/*
 * Where libslurm would take its configuration from, in its own order (see
 * the top): true with the source in src, false with why Slurm is not asked
 * in off.  *fetch: configless, ask in a child.
 */
static bool slurmgres_find_source(char *src, size_t srclen, char *off, size_t len, bool *fetch)
{
	const char *conf = getenv("SLURM_CONF"), *server = getenv("SLURM_CONF_SERVER");
	struct stat st;

	*fetch = false;
	src[0] = off[0] = '\0';
	if (getenv("ADVISOR_NO_SLURM")) {
		adv_strlcpy(off, "Slurm not asked: ADVISOR_NO_SLURM is set", len);
		return false;
	}
	/* SLURM_CONF, then the default file iff it exists: libslurm takes
	 * either as it is, and fatal()s on one it cannot read. */
	if ((!conf || !*conf) && stat(SLURMGRES_DEFAULT_CONF, &st) == 0)
		conf = SLURMGRES_DEFAULT_CONF;
	if ((!conf || !*conf) && stat(SLURMGRES_CACHED_CONF, &st) == 0)
		conf = SLURMGRES_CACHED_CONF;
	if (conf && *conf) {
		if (access(conf, R_OK) != 0) {
			adv_snprintf(off, len, "Slurm not asked: %s: %s", conf, strerror(errno));
			return false;
		}
		adv_snprintf(src, srclen, "%s", conf);
		return true;
	}
	if (server && *server) {
		adv_snprintf(src, srclen, "configless, from slurmctld %s (SLURM_CONF_SERVER)",
			     server);
		*fetch = true;
		return true;
	}
	if (slurmgres_srv_record()) {
		adv_strlcpy(src, "configless, from the slurmctld of DNS SRV _slurmctld._tcp",
			    srclen);
		*fetch = true;
		return true;
	}
	adv_snprintf(off, len, "Slurm not asked: %s: No such file or directory, no %s, no "
		     "SLURM_CONF_SERVER and no DNS SRV _slurmctld._tcp for configless Slurm",
		     SLURMGRES_DEFAULT_CONF, SLURMGRES_CACHED_CONF);
	return false;
}

static void slurmgres_start(void)
{
	pthread_attr_t attr;
	pthread_t t;

	if (!slurmgres_find_source(slurmgres_src, sizeof(slurmgres_src), slurmgres_off,
				   sizeof(slurmgres_off), &slurmgres_fetch))
		return;
	if (slurmgres_in_caller) {
		if (!slurmgres_fetch)
			slurm_init(NULL);
		slurmgres_refresh();
		if (!slurmgres_fetch)
			slurm_fini();
		slurmgres_enabled = true;
		return;
	}
	if (pthread_attr_init(&attr) != 0)
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, slurmgres_thread, NULL) == 0)
		slurmgres_enabled = true;
	else
		adv_strlcpy(slurmgres_off, "Slurm not asked: no thread to ask it",
			    sizeof(slurmgres_off));
	pthread_attr_destroy(&attr);
}

void slurmgres_foreground(void)
{
	slurmgres_in_caller = true;
}

static bool slurmgres_lock_loaded(void);

size_t slurmgres_script_max(void)
{
	char off[sizeof(slurmgres_off)], src[sizeof(slurmgres_src)];
	bool fetch;
	size_t max;

	if (!slurmgres_find_source(src, sizeof(src), off, sizeof(off), &fetch) || !&slurm_conf)
		return scripttext_limit(NULL);
	if (fetch) {
		/* The configless load the partitions come from brought it
		 * back: one fetch from slurmctld, not two. */
		if (!slurmgres_lock_loaded())
			return scripttext_limit(NULL);
		max = slurmgres_script_limit ? slurmgres_script_limit : scripttext_limit(NULL);
		pthread_mutex_unlock(&slurmgres_lock);
		return max;
	}
	slurm_init(NULL);
	max = scripttext_limit(slurm_conf.sched_params);
	slurm_fini();
	return max;
}

static void slurmgres_wait_first(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)SLURMGRES_FIRST_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	while (!slurmgres_loaded)
		if (pthread_cond_timedwait(&slurmgres_cond, &slurmgres_lock, &until) == ETIMEDOUT)
			break;
}

/*
 * Starts the refresh thread on first use and takes the lock once the first
 * load is in; false (lock not taken) when the daemon has no Slurm to ask.
 */
static bool slurmgres_lock_loaded(void)
{
	pthread_once(&slurmgres_once, slurmgres_start);
	if (!slurmgres_enabled)
		return false;
	pthread_mutex_lock(&slurmgres_lock);
	slurmgres_wait_first();
	return true;
}

/* The partition of that name, or the default one for NULL or ""; lock held. */
static const struct slurmgres_part *slurmgres_find(const char *partition)
{
	size_t i;

	for (i = 0; i < slurmgres_nparts; i++) {
		const struct slurmgres_part *e = &slurmgres_parts[i];

		if (partition && *partition ? adv_streq_nocase(e->name, partition) : e->is_default)
			return e;
	}
	return NULL;
}

int slurmgres_gpu_for_partition(const char *partition, char *gpu, size_t len,
				char *why, size_t whylen)
{
	const struct slurmgres_part *e;
	char where[SLURMGRES_NAME + 16], none[8];
	int rc = -1;

	if (!why || !whylen) {
		why = none;
		whylen = sizeof(none);
	}
	why[0] = '\0';
	if (!gpu || !len)
		return -1;
	gpu[0] = '\0';
	if (!slurmgres_lock_loaded()) {
		adv_strlcpy(why, slurmgres_off, whylen);
		return -1;
	}
	e = slurmgres_find(partition);
	if (e && e->gpu[0]) {
		adv_strlcpy(gpu, e->gpu, len);
		rc = 0;
	} else {
		if (partition && *partition)
			adv_snprintf(where, sizeof(where), "partition %s", partition);
		else
			adv_strlcpy(where, "the default partition", sizeof(where));
		if (!slurmgres_answered)
			adv_snprintf(why, whylen, "Slurm could not tell the GPU type of %s: %s", where,
				     slurmgres_loaded ? slurmgres_error : "slurmctld did not answer in time");
		else if (!e)
			adv_snprintf(why, whylen, "Slurm has no %s", where);
		else
			adv_snprintf(why, whylen, "the nodes of Slurm's %s have no typed GPU "
				     "(Gres=gpu:TYPE:N)", where);
	}
	pthread_mutex_unlock(&slurmgres_lock);
	return rc;
}

int slurmgres_default_partition(char *name, size_t len)
{
	const struct slurmgres_part *e;
	int rc = -1;

	if (!name || !len)
		return -1;
	name[0] = '\0';
	if (!slurmgres_lock_loaded())
		return -1;
	e = slurmgres_find(NULL);
	if (e) {
		adv_strlcpy(name, e->name, len);
		rc = 0;
	}
	pthread_mutex_unlock(&slurmgres_lock);
	return rc;
}

bool slurmgres_source(char *buf, size_t len)
{
	pthread_once(&slurmgres_once, slurmgres_start);
	if (!slurmgres_enabled) {
		adv_strlcpy(buf, slurmgres_off[0] ? slurmgres_off : "Slurm not asked", len);
		return false;
	}
	pthread_mutex_lock(&slurmgres_lock);
	slurmgres_wait_first();
	if (slurmgres_answered)
		adv_snprintf(buf, len, "Slurm asked through %s: %zu partitions", slurmgres_src,
			     slurmgres_nparts);
	else
		adv_snprintf(buf, len, "Slurm asked through %s, without an answer yet: %s",
			     slurmgres_src, slurmgres_loaded ? slurmgres_error : "slurmctld is slow");
	pthread_mutex_unlock(&slurmgres_lock);
	return slurmgres_answered;
}
