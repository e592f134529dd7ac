/*
 * server.h - the daemon's socket: listening, worker threads, timeouts.
 */
#ifndef ADVISOR_SERVER_H
#define ADVISOR_SERVER_H

#include <stddef.h>

struct server_opts {
	int workers;           /* event-loop threads */
	int read_timeout_ms;   /* a started frame must complete within this */
	int idle_timeout_ms;   /* a connection may wait this long between requests */
	/* Connection caps (issue 20; advisord.conf connections:). */
	int max_conns;         /* identified connections in all, every worker */
	int max_per_user;      /* of one uid (privileged uids: only max_conns + reserve) */
	int reserve;           /* above max_conns, for root, slurm, admins */
	int max_unauth;        /* TCP connections whose credential has not verified yet */
	int auth_timeout_ms;   /* how long a TCP connection has to present a good credential */
	int drain_ms;          /* on stop, how long answers in flight may take */
	int tcp_fd;            /* server_listen_tcp()'s socket, -1 for none */
	const char *munge_socket;  /* munged's, for TCP credentials; NULL: libmunge's default */
};

/*
 * Creates the socket directory (0755) and binds path (0666).  A stale socket
 * of a dead daemon is replaced; a live daemon's is not: -1 with a message.
 * The returned lock_fd (held for the daemon's life) proves ownership.
 */
int server_listen(const char *path, int *lock_fd, char *err, size_t errlen);
#ifdef HAVE_LIBSYSTEMD
/*
 * Takes fd, a listening socket systemd passed (advisord.socket), as the
 * socket to serve: it must be a listening unix stream socket bound to
 * path (else -1 with a message naming both), and path's lock is taken as
 * server_listen() takes it.  fd is made non-blocking and close-on-exec.
 * The socket file stays systemd's: the caller must not unlink it.
 */
int server_adopt(int fd, const char *path, int *lock_fd, char *err, size_t errlen);
#endif
/*
 * A listening TCP socket on "ADDR:PORT" ("[V6]:PORT"; 0.0.0.0 for every
 * IPv4 address), for clients that authenticate with MUNGE.  -1 with err.
 */
int server_listen_tcp(const char *addr, char *err, size_t errlen);
int server_start(int listen_fd, const struct server_opts *o, char *err, size_t errlen);
/* Stops accepting, lets answers in flight finish (drain_ms), joins the workers. */
void server_stop(void);

#endif
