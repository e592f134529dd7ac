/*
 * advisord.c - the advisor daemon: answers the SPANK plugin and advisorctl
 * on a unix socket, and with --listen on MUNGE-authenticated TCP (issue 13),
 * and keeps the decision log (design.md, issue 4).
 *
 * main() reads top to bottom: options, log, configuration (catalog, policy
 * and advisord.conf), decision log, sockets, workers, then the signal loop
 * (SIGHUP reloads, SIGTERM/SIGINT drain and stop), and the teardown in
 * reverse order.
 *
 * Under systemd (issue 30) it takes the listening socket advisord.socket
 * passes (sd_listen_fds, libsystemd's; the socket stays systemd's, so jobs
 * submitted during a restart wait in its backlog instead of being turned
 * away) and otherwise makes its own, and tells systemd its state with
 * sd_notify (Type=notify: READY=1, RELOADING=1, STOPPING=1, and STATUS=
 * with the last reload's outcome, which `systemctl status` shows).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "advconf.h"
#include "dlog/dlog.h"
#include "handler.h"
#include "jsonlog.h"
#include "msg.h"
#include "server.h"
#include "service/slurmgres.h"
#include "service/snapshot.h"
#include "stats.h"
#include "util.h"
#include "wire/auth.h"
#include "wire/endpoint.h"

#define EXIT_USAGE 64
#define EXIT_DATAERR 65
#define MAX_CATALOGS 32

struct opts {
	const char *catalogs[MAX_CATALOGS];
	size_t n_catalogs;
	const char *policy;
	const char *socket;
	const char *db;
	const char *config;            /* advisord.conf; NULL: the default when it exists */
	const char *listen;            /* --listen, over advisord.conf's listen: */
	const char *name;              /* --name, over advisord.conf's name: (issue 20) */
	bool db_given;
	bool use_syslog;
	bool syslog_json;
	bool log_json;
	bool foreground;
	bool check_config;
	struct server_opts server;
	char *owned[MAX_CATALOGS + 1];     /* realpath() results, freed at exit */
	size_t n_owned;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: advisord [OPTION]...\n"
		"Checks LLM jobs for the advisor SPANK plugin and advisorctl on a unix socket.\n"
		"\n"
		"  -c, --catalog FILE       GPU/model catalog; repeat to add files (default\n"
		"                           " ADV_CONFDIR "/catalog.yaml)\n"
		"  -p, --policy FILE        site policy (default " ADV_CONFDIR "/policy.yaml)\n"
		"  -s, --socket PATH        socket to serve (default " ADV_SOCKET_PATH ")\n"
		"  -d, --db PATH            decision log (default " ADV_DB_PATH ")\n"
		"      --config FILE        advisord.conf: decision-log storage (SQLite or the\n"
		"                           site's MariaDB) and TCP address (default\n"
		"                           " ADV_CONFDIR "/advisord.conf when it exists; mode 0600\n"
		"                           when it holds a password)\n"
		"      --listen ADDR:PORT   also serve MUNGE-authenticated TCP (0.0.0.0:6830,\n"
		"                           [::]:6830); over advisord.conf's listen:\n"
		"      --name NAME          the name TCP credentials are bound to (default\n"
		"                           HOSTNAME:PORT); over advisord.conf's name:\n"
		"      --syslog             log to syslog instead of stderr\n"
		"      --syslog-json        also send every decision to syslog as one JSON line\n"
		"      --log-json           write decisions to stderr as JSON lines (instead of\n"
		"                           the plain \"decision ...\" line)\n"
		"  -f, --foreground         do not detach (for systemd and tests)\n"
		"      --check-config       load the files, report, exit 0 (good) or 65 (bad)\n"
		"      --workers N          event-loop threads (default: one per CPU)\n"
		"      --read-timeout MS    time a client has to finish a frame (default 5000)\n"
		"      --idle-timeout MS    time a connection may idle between requests (default 60000)\n"
		"  -h, --help               show this help\n"
		"  -V, --version            show the version\n"
		"\n"
		"Signals: SIGHUP reloads catalog and policy; SIGTERM and SIGINT drain and exit.\n"
		"See advisord(8).\n");
}

static int parse_ms(const char *opt, const char *s, int *out)
{
	long v;

	if (adv_parse_long(s, &v) != 0 || v < 1 || v > 3600000) {
		fprintf(stderr, "advisord: %s: '%s' is not a number of milliseconds "
			"(accepted: 1..3600000)\n", opt, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* A detached daemon runs in /: reloads must find the files wherever it was started. */
static const char *absolute(struct opts *o, const char *path)
{
	char *p = realpath(path, NULL);

	if (!p)
		return path;
	o->owned[o->n_owned++] = p;
	return p;
}

static void absolute_paths(struct opts *o)
{
	for (size_t i = 0; i < o->n_catalogs; i++)
		o->catalogs[i] = absolute(o, o->catalogs[i]);
	o->policy = absolute(o, o->policy);
}

static void free_paths(struct opts *o)
{
	for (size_t i = 0; i < o->n_owned; i++)
		free(o->owned[i]);
	o->n_owned = 0;
}

enum { OPT_SYSLOG = 256, OPT_CHECK, OPT_WORKERS, OPT_READ_TO, OPT_IDLE_TO, OPT_SYSLOG_JSON,
       OPT_LOG_JSON, OPT_CONFIG, OPT_LISTEN, OPT_NAME };

static int parse_options(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "catalog", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'p' },
		{ "socket", required_argument, NULL, 's' },
		{ "db", required_argument, NULL, 'd' },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "syslog", no_argument, NULL, OPT_SYSLOG },
		{ "syslog-json", no_argument, NULL, OPT_SYSLOG_JSON },
		{ "log-json", no_argument, NULL, OPT_LOG_JSON },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check-config", no_argument, NULL, OPT_CHECK },
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "read-timeout", required_argument, NULL, OPT_READ_TO },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE_TO },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	long v;
	int c;

	o->socket = ADV_SOCKET_PATH;
	o->db = ADV_DB_PATH;
	o->policy = ADV_CONFDIR "/policy.yaml";
	o->server.workers = ncpu < 1 ? 1 : ncpu > 16 ? 16 : (int)ncpu;
	o->server.read_timeout_ms = 5000;
	o->server.idle_timeout_ms = 60000;
	o->server.drain_ms = 2000;
	o->server.tcp_fd = -1;
	while ((c = getopt_long(argc, argv, "c:p:s:d:fhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (o->n_catalogs == MAX_CATALOGS) {
				fprintf(stderr, "advisord: --catalog: at most %d files\n", MAX_CATALOGS);
				return -1;
			}
			o->catalogs[o->n_catalogs++] = optarg;
			break;
		case 'p': o->policy = optarg; break;
		case 's': o->socket = optarg; break;
		case 'd': o->db = optarg; o->db_given = true; break;
		case OPT_CONFIG: o->config = optarg; break;
		case OPT_LISTEN: o->listen = optarg; break;
		case OPT_NAME:
			if (!auth_name_ok(optarg)) {
				fprintf(stderr, "advisord: --name: '%s' is not a name (1 to 255 "
					"printable characters without spaces)\n", optarg);
				return -1;
			}
			o->name = optarg;
			break;
		case OPT_SYSLOG: o->use_syslog = true; break;
		case OPT_SYSLOG_JSON: o->syslog_json = true; break;
		case OPT_LOG_JSON: o->log_json = true; break;
		case 'f': o->foreground = true; break;
		case OPT_CHECK: o->check_config = true; break;
		case OPT_WORKERS:
			if (adv_parse_long(optarg, &v) != 0 || v < 1 || v > 64) {
				fprintf(stderr, "advisord: --workers: '%s' is not a thread count "
					"(accepted: 1..64)\n", optarg);
				return -1;
			}
			o->server.workers = (int)v;
			break;
		case OPT_READ_TO:
			if (parse_ms("--read-timeout", optarg, &o->server.read_timeout_ms))
				return -1;
			break;
		case OPT_IDLE_TO:
			if (parse_ms("--idle-timeout", optarg, &o->server.idle_timeout_ms))
				return -1;
			break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("advisord %s\n", PACKAGE_VERSION); exit(0);
		default:
			fprintf(stderr, "Try 'advisord --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "advisord: unexpected argument '%s'\nTry 'advisord --help'.\n",
			argv[optind]);
		return -1;
	}
	if (o->log_json && !o->foreground && !o->check_config) {
		fprintf(stderr, "advisord: --log-json needs --foreground (a detached daemon has "
			"no stderr); use --syslog-json\nTry 'advisord --help'.\n");
		return -1;
	}
	if (o->n_catalogs == 0)
		o->catalogs[o->n_catalogs++] = ADV_CONFDIR "/catalog.yaml";
	absolute_paths(o);
	return 0;
}

/*
 * advisord.conf: the named file, or the default one when it exists (a site
 * that never wrote one keeps SQLite and the unix socket only).  --listen
 * wins over its listen:, --db over its sqlite path:.
 */
static int load_config(const struct opts *o, struct advconf *conf, char *err, size_t errlen)
{
	const char *path = o->config ? o->config : ADV_CONFDIR "/advisord.conf";
	char why[ADV_ERR_MAX];

	advconf_defaults(conf);
	if (o->config || access(path, F_OK) == 0) {
		if (advconf_load(path, conf, why, sizeof(why)) != ADVCONF_OK) {
			adv_snprintf(err, errlen, "%s", why);
			return -1;
		}
	}
	if (o->listen)
		adv_strlcpy(conf->listen, o->listen, sizeof(conf->listen));
	if (o->name)
		adv_strlcpy(conf->name, o->name, sizeof(conf->name));
	/* The name TCP credentials are bound to (issue 20): by default this
	 * host's and the port, so each daemon of a failover pair has its own. */
	if (!conf->name[0] && conf->listen[0]) {
		struct endpoint ep;
		char host[200] = "localhost";

		if (endpoint_split(conf->listen, &ep, err, errlen) != 0)
			return -1;
		if (gethostname(host, sizeof(host)) != 0)
			adv_strlcpy(host, "localhost", sizeof(host));
		host[sizeof(host) - 1] = '\0';
		adv_snprintf(conf->name, sizeof(conf->name), "%s:%d", host, ep.port);
		if (!auth_name_ok(conf->name))
			adv_snprintf(conf->name, sizeof(conf->name), "advisord:%d", ep.port);
	}
	if (conf->storage == ADVCONF_SQLITE && o->db_given)
		conf->path[0] = '\0';
	return 0;
}

#ifdef HAVE_LIBSYSTEMD
static void notify_systemd(const char *state)
{
	int rc = sd_notify(0, state);

	if (rc < 0)
		msg_log(LOG_WARNING, "cannot notify systemd: %s", strerror(-rc));
}
#else
/* Built without libsystemd: Type=notify's one datagram to $NOTIFY_SOCKET. */
static void notify_systemd(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t sl;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, sl) < 0)
		msg_log(LOG_WARNING, "cannot notify systemd: %s", strerror(errno));
	close(fd);
}
#endif

/*
 * The unix socket: the one systemd passes (advisord.socket), else one of
 * our own at --socket.  *adopted says which: systemd's socket file is
 * never removed (it keeps taking connections while advisord restarts).
 */
static int listen_unix(const char *path, int *lock_fd, bool *adopted, char *err, size_t errlen)
{
#ifdef HAVE_LIBSYSTEMD
	int n = sd_listen_fds(1);

	if (n < 0) {
		adv_snprintf(err, errlen, "the sockets systemd passed: %s", strerror(-n));
		return -1;
	}
	if (n > 1) {
		adv_snprintf(err, errlen, "systemd passed %d sockets; advisord takes one, the unix "
			     "socket (advisord.socket: one ListenStream=%s)", n, path);
		return -1;
	}
	if (n == 1) {
		*adopted = true;
		return server_adopt(SD_LISTEN_FDS_START, path, lock_fd, err, errlen);
	}
#else
	if (getenv("LISTEN_FDS"))
		msg_log(LOG_WARNING, "systemd passed a socket (LISTEN_FDS), but this advisord was "
			"built without libsystemd: it makes its own socket %s (rebuild with "
			"libsystemd-dev for advisord.socket)", path);
#endif
	*adopted = false;
	return server_listen(path, lock_fd, err, errlen);
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			msg_log(LOG_WARNING, "cannot raise the file limit: %s", strerror(errno));
	}
}

/*
 * The directory of the decision log (or of the MariaDB spool), missing
 * parents included, each created 0750 whatever the umask: the log in it is
 * every user's decisions (issue 20), and advisord(8) promises the mode for
 * all it creates (issue 30: only the last component was).  With create
 * false (--check-config) nothing is made: it says whether advisord could
 * make and use it.  0, or -1 with why in err.
 */
static int db_dir(const char *db, bool create, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	char *slash, *p;
	struct stat st;

	adv_strlcpy(dir, db, sizeof(dir));
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			adv_snprintf(err, errlen, "decision log directory %s is not a directory", dir);
			return -1;
		}
		/* At start-up a directory that is there but not writable (a
		 * read-only mount) is not fatal: decisions are answered and the
		 * log reports what it cannot write (test_faults.sh); only
		 * --check-config calls it an error. */
		if (!create && access(dir, W_OK | X_OK) != 0) {
			adv_snprintf(err, errlen, "decision log directory %s: %s", dir, strerror(errno));
			return -1;
		}
		return 0;
	}
	/* Walk down from the root: each component that exists must be a
	 * directory; the first missing one is made in its parent. */
	for (p = dir + 1;; p++) {
		bool last = *p == '\0';

		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (stat(dir, &st) == 0) {
			if (!S_ISDIR(st.st_mode)) {
				adv_snprintf(err, errlen, "cannot create the decision log directory: "
					     "%s is not a directory", dir);
				return -1;
			}
		} else if (errno != ENOENT) {
			adv_snprintf(err, errlen, "cannot create the decision log directory: %s: %s",
				     dir, strerror(errno));
			return -1;
		} else if (!create) {
			/* Its parent exists (the walk got here): can advisord write there? */
			char *up = strrchr(dir, '/');
			int rc;

			if (!up) {
				rc = access(".", W_OK | X_OK);
			} else if (up == dir) {
				rc = access("/", W_OK | X_OK);
			} else {
				*up = '\0';
				rc = access(dir, W_OK | X_OK);
				*up = '/';
			}
			if (rc != 0) {
				adv_snprintf(err, errlen, "cannot create the decision log directory %s: %s",
					     dir, strerror(errno));
				return -1;
			}
			return 0;
		} else if (mkdir(dir, 0750) != 0 && errno != EEXIST) {
			adv_snprintf(err, errlen, "cannot create the decision log directory %s: %s",
				     dir, strerror(errno));
			return -1;
		} else if (chmod(dir, 0750) != 0) {
			adv_snprintf(err, errlen, "cannot set mode 0750 on %s: %s", dir, strerror(errno));
			return -1;
		}
		if (last)
			return 0;
		*p = '/';
	}
}

/* Waits for signals in the main thread; returns when asked to stop. */
static void signal_loop(const sigset_t *set)
{
	for (;;) {
		char msg[ADV_ERR_MAX];
		int sig = sigwaitinfo(set, NULL);

		if (sig < 0)
			continue;
		if (sig == SIGHUP) {
			char state[ADV_ERR_MAX + 64];
			int rc;

			notify_systemd("RELOADING=1");
			rc = handler_reload(msg, sizeof(msg));
			if (rc == 0)
				msg_log(LOG_INFO, "SIGHUP: %s", msg);
			else
				msg_log(LOG_ERR, "SIGHUP: %s", msg);
			/* systemctl status shows the last reload's outcome; the
			 * unit's ExecReload= checks the files first, so that
			 * `systemctl reload` itself fails on a broken file. */
			adv_snprintf(state, sizeof(state), "READY=1\nSTATUS=%s: %s",
				     rc == 0 ? "reloaded" : "reload failed, previous configuration kept",
				     msg);
			notify_systemd(state);
			continue;
		}
		msg_log(LOG_INFO, "%s: draining and stopping", strsignal(sig));
		return;
	}
}

static int run(struct opts *op);

/*
 * Connection caps from advisord.conf, kept well below the descriptor limit
 * (issue 20): what the caps allow, plus the refusals held, the listeners,
 * the log and a margin, must fit in three quarters of RLIMIT_NOFILE.
 */
static void set_caps(struct server_opts *s, const struct advconf *conf)
{
	struct rlimit rl;
	long budget, fixed;

	s->max_conns = conf->conn_max;
	s->max_per_user = conf->conn_per_user;
	s->reserve = conf->conn_reserve;
	s->max_unauth = conf->conn_unauth;
	s->auth_timeout_ms = conf->auth_timeout_ms;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return;
	budget = (long)(rl.rlim_cur / 4 * 3);
	fixed = 64 + 32L * s->workers;
	if (s->max_conns + s->reserve + (s->tcp_fd >= 0 ? s->max_unauth : 0) + fixed <= budget)
		return;
	if (s->tcp_fd >= 0 && s->max_unauth > budget / 8)
		s->max_unauth = budget / 8 > 1 ? (int)(budget / 8) : 1;
	if (s->reserve > budget / 16)
		s->reserve = (int)(budget / 16);
	s->max_conns = (int)(budget - fixed - s->reserve - (s->tcp_fd >= 0 ? s->max_unauth : 0));
	if (s->max_conns < 16)
		s->max_conns = 16;
	msg_log(LOG_WARNING, "connection caps lowered to fit the file limit %lu: max %d, reserve %d, "
		"unauthenticated %d (raise LimitNOFILE, or set advisord.conf connections:)",
		(unsigned long)rl.rlim_cur, s->max_conns, s->reserve, s->max_unauth);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	int rc;

	if (parse_options(argc, argv, &o) != 0) {
		free_paths(&o);
		return EXIT_USAGE;
	}
	rc = run(&o);
	free_paths(&o);
	return rc;
}

static int run(struct opts *op)
{
	struct opts o = *op;
	struct snapshot_files files;
	struct snapshot *snap;
	struct handler_info info;
	struct advconf conf;
	char err[ADV_ERR_MAX];
	sigset_t set;
	size_t n_gpus, n_models;
	int lfd, lock_fd, tfd = -1;
	bool adopted = false;

	msg_open("advisord", o.use_syslog || !o.foreground);
	files = (struct snapshot_files){ o.catalogs, o.n_catalogs, o.policy };
	if (snapshot_load(&files, &snap, err, sizeof(err)) != 0) {
		fprintf(stderr, "advisord: %s\n", err);
		msg_log(LOG_ERR, "%s", err);
		return EXIT_DATAERR;
	}
	if (load_config(&o, &conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "advisord: %s\n", err);
		msg_log(LOG_ERR, "%s", err);
		snapshot_put(snap);
		return EXIT_DATAERR;
	}
	if (conf.storage == ADVCONF_SQLITE && conf.path[0])
		o.db = conf.path;
	if (o.check_config) {
		/* Issue 30: a log directory advisord cannot make or write fails
		 * here, not at the start that follows. */
		if (db_dir(conf.storage == ADVCONF_MARIADB && conf.spool[0] ? conf.spool : o.db, false,
			   err, sizeof(err)) != 0) {
			fprintf(stderr, "advisord: %s\n", err);
			snapshot_put(snap);
			memset(conf.password, 0, sizeof(conf.password));
			return EXIT_DATAERR;
		}
		printf("advisord: configuration OK: %zu GPUs and %zu models from %zu catalog "
		       "file%s, policy %s, decision log %s%s%s\n", catalog_gpu_count(snap->cat),
		       catalog_model_count(snap->cat), o.n_catalogs, o.n_catalogs == 1 ? "" : "s",
		       o.policy, conf.storage == ADVCONF_MARIADB ? "mariadb " : "",
		       conf.storage == ADVCONF_MARIADB ? conf.database : o.db,
		       conf.listen[0] ? ", TCP " : "");
		if (conf.listen[0])
			printf("advisord: TCP %s (MUNGE, name %s)\n", conf.listen, conf.name);
		/* Issue 30: say whether Slurm answers, in the words status uses. */
		{
			char sl[SLURMGRES_SOURCE_MAX];

			slurmgres_foreground();
			printf("advisord: %s%s\n", slurmgres_source(sl, sizeof(sl)) ? "" : "WARNING: ",
			       sl);
		}
		snapshot_put(snap);
		memset(conf.password, 0, sizeof(conf.password));
		return 0;
	}
	raise_fd_limit();
	if (!o.foreground && daemon(0, 0) != 0) {
		fprintf(stderr, "advisord: cannot detach: %s\n", strerror(errno));
		snapshot_put(snap);
		return 1;
	}
	/* Signals go to the main thread only: block them before any thread starts. */
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 || signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		msg_log(LOG_ERR, "cannot set up signal handling: %s", strerror(errno));
		snapshot_put(snap);
		return 1;
	}

	stats_init();
	jsonlog_open(o.syslog_json, o.log_json);
	snapshot_install(&files, snap);
	if (db_dir(conf.storage == ADVCONF_MARIADB && conf.spool[0] ? conf.spool : o.db, true,
		   err, sizeof(err)) != 0) {
		memset(conf.password, 0, sizeof(conf.password));
		msg_log(LOG_ERR, "%s", err);
		snapshot_uninstall();
		return 1;
	}
	if (dlog_open_storage(&conf, o.db, err, sizeof(err)) != 0) {
		memset(conf.password, 0, sizeof(conf.password));
		msg_log(LOG_ERR, "%s", err);
		snapshot_uninstall();
		return 1;
	}
	/* dlog keeps its own copy for reconnects. */
	memset(conf.password, 0, sizeof(conf.password));
	if (handler_apply_policy(snap->pol) != 0) {
		msg_log(LOG_ERR, "cannot set up the request budget: out of memory");
		dlog_close();
		snapshot_uninstall();
		return 1;
	}
	lfd = listen_unix(o.socket, &lock_fd, &adopted, err, sizeof(err));
	if (lfd < 0) {
		msg_log(LOG_ERR, "%s", err);
		handler_cleanup();
		dlog_close();
		snapshot_uninstall();
		return 1;
	}
	if (conf.listen[0]) {
		tfd = server_listen_tcp(conf.listen, err, sizeof(err));
		if (tfd < 0) {
			msg_log(LOG_ERR, "%s", err);
			close(lfd);
			if (!adopted)
				unlink(o.socket);
			close(lock_fd);
			handler_cleanup();
			dlog_close();
			snapshot_uninstall();
			return 1;
		}
	}
	o.server.tcp_fd = tfd;
	o.server.munge_socket = conf.munge_socket[0] ? conf.munge_socket : NULL;
	set_caps(&o.server, &conf);
	info = (struct handler_info){ o.socket, o.db, time(NULL),
				      conf.munge_socket[0] ? conf.munge_socket : NULL, conf.name };
	handler_set_info(&info);
	/* Counted now: once the workers run, a reload may free snap. */
	n_gpus = catalog_gpu_count(snap->cat);
	n_models = catalog_model_count(snap->cat);
	snap = NULL;
	if (server_start(lfd, &o.server, err, sizeof(err)) != 0) {
		msg_log(LOG_ERR, "%s", err);
		if (tfd >= 0)
			close(tfd);
		close(lfd);
		if (!adopted)
			unlink(o.socket);
		close(lock_fd);
		handler_cleanup();
		dlog_close();
		snapshot_uninstall();
		return 1;
	}
	msg_log(LOG_INFO, "advisord %s serving %s%s%s%s with %d worker%s (%zu GPUs, %zu models, "
		"policy %s, decision log %s%s%s%s)", PACKAGE_VERSION, o.socket,
		adopted ? " (systemd's socket)" : "",
		tfd >= 0 ? " and TCP " : "", tfd >= 0 ? conf.listen : "", o.server.workers,
		o.server.workers == 1 ? "" : "s", n_gpus, n_models, o.policy,
		conf.storage == ADVCONF_MARIADB ? "mariadb " : o.db,
		conf.storage == ADVCONF_MARIADB ? conf.database : "",
		conf.storage == ADVCONF_MARIADB ? "@" : "",
		conf.storage == ADVCONF_MARIADB ? (conf.host[0] ? conf.host : conf.socket) : "");
	{
		/* Issue 30: a partition without gpu: in the policy depends on
		 * Slurm's answer; say at start-up whether there is one. */
		char sl[SLURMGRES_SOURCE_MAX];

		if (slurmgres_source(sl, sizeof(sl)))
			msg_log(LOG_INFO, "%s", sl);
		else
			msg_log(LOG_WARNING, "%s: partitions without gpu: in the policy get "
				"GPU_TYPE_UNKNOWN", sl);
	}
	notify_systemd("READY=1");

	signal_loop(&set);

	notify_systemd("STOPPING=1");
	server_stop();
	if (tfd >= 0)
		close(tfd);
	close(lfd);
	if (!adopted)
		unlink(o.socket);
	handler_cleanup();
	dlog_close();
	close(lock_fd);
	snapshot_uninstall();
	jsonlog_close();
	msg_log(LOG_INFO, "stopped");
	msg_close();
	return 0;
}
