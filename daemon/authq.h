/*
 * authq.h - the daemon's MUNGE calls, made on threads of their own (issue
 * 20).  A worker that needs a credential decoded (a TCP client's) or
 * minted (the daemon's answer to a hello) submits a job and goes on
 * serving; the job comes back on the worker's sink, whose eventfd wakes
 * its epoll loop.  With munged hung, only TCP connections waiting for
 * their credential wait (and are closed at auth_timeout_ms); unix-socket
 * users, who need no MUNGE, are answered as ever.
 */
#ifndef ADVISOR_AUTHQ_H
#define ADVISOR_AUTHQ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "wire/auth.h"

enum authq_kind { AUTHQ_ENCODE = 1, AUTHQ_DECODE };

struct authq_job {
	int kind;
	char *text;               /* in: payload (encode) or credential (decode); out: credential (encode) */
	size_t len;
	char bind[AUTH_BINDING_MAX]; /* decode: the payload the credential must carry */
	int rc;                   /* auth_err */
	uid_t uid;
	gid_t gid;
	char err[256];
	void *owner;              /* the worker's: NULL once the connection closed */
	atomic_bool cancelled;    /* the owner closed: skip the call */
	struct authq_sink *sink;
	struct authq_job *next;
};

/* Where a worker's jobs come back. */
struct authq_sink {
	pthread_mutex_t lock;
	struct authq_job *done;
	int efd;                  /* eventfd, readable while done is not empty */
};

/* Starts threads making MUNGE calls on munge_socket (NULL: libmunge's default). */
int authq_start(const char *munge_socket, int threads, char *err, size_t errlen);
/* Joins the threads (a call in progress ends first) and frees queued jobs. */
void authq_stop(void);
int authq_sink_init(struct authq_sink *s);
/* Frees the jobs that came back and were not taken. */
void authq_sink_destroy(struct authq_sink *s);
/*
 * Queues a job (text: len bytes, copied; bind may be NULL); NULL when the
 * queue is full (AUTHQ_MAX jobs waiting) or memory is out.
 */
struct authq_job *authq_submit(struct authq_sink *s, int kind, const char *text, size_t len,
			       const char *bind, void *owner);
/* The owner is gone: the call is skipped if not started, the job freed on its return. */
void authq_cancel(struct authq_job *j);
/* The jobs that came back, in a list (next); clears the eventfd. */
struct authq_job *authq_take(struct authq_sink *s);
void authq_job_free(struct authq_job *j);

#endif
