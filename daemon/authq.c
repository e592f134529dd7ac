/*
 * authq.c - MUNGE calls off the workers (issue 20): a queue and a few
 * threads that make them, as slurmctld's auth/munge work runs on its RPC
 * threads rather than its main loop.  libmunge blocks while munged is slow
 * or hung (it retries for about 10 s), so no worker may make the call:
 * with munged stopped, three TCP clients once stalled both workers and
 * unix-socket users waited 9.1 s.  The queue is bounded; a job whose
 * connection closed meanwhile (its auth_timeout_ms passed) is skipped.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "authq.h"
#include "util.h"

#define AUTHQ_MAX 512
#define AUTHQ_THREADS_MAX 8

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct authq_job *head, *tail;
	int n;
	bool stop;
	const char *socket;
	pthread_t thread[AUTHQ_THREADS_MAX];
	int nthreads;
} Q = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

void authq_job_free(struct authq_job *j)
{
	if (!j)
		return;
	free(j->text);
	free(j);
}

static void run(struct authq_job *j)
{
	char *cred = NULL;

	if (atomic_load(&j->cancelled)) {
		j->rc = AUTH_ERR_OTHER;
		return;
	}
	if (j->kind == AUTHQ_ENCODE) {
		j->rc = auth_encode(Q.socket, j->text, 0, &cred, j->err, sizeof(j->err));
		free(j->text);
		j->text = cred;
		j->len = cred ? strlen(cred) : 0;
	} else {
		j->rc = auth_decode(Q.socket, j->text, j->len, j->bind, &j->uid, &j->gid, j->err,
				    sizeof(j->err));
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct authq_job *j;
		struct authq_sink *s;
		uint64_t one = 1;

		pthread_mutex_lock(&Q.lock);
		while (!Q.head && !Q.stop)
			pthread_cond_wait(&Q.cond, &Q.lock);
		if (!Q.head) {
			pthread_mutex_unlock(&Q.lock);
			return NULL;
		}
		j = Q.head;
		Q.head = j->next;
		if (!Q.head)
			Q.tail = NULL;
		Q.n--;
		pthread_mutex_unlock(&Q.lock);
		run(j);
		s = j->sink;
		pthread_mutex_lock(&s->lock);
		j->next = s->done;
		s->done = j;
		pthread_mutex_unlock(&s->lock);
		if (write(s->efd, &one, sizeof(one)) < 0) {
			/* The counter is already set: the worker wakes anyway. */
		}
	}
}

int authq_start(const char *munge_socket, int threads, char *err, size_t errlen)
{
	Q.socket = munge_socket;
	Q.stop = false;
	if (threads < 1)
		threads = 1;
	if (threads > AUTHQ_THREADS_MAX)
		threads = AUTHQ_THREADS_MAX;
	for (Q.nthreads = 0; Q.nthreads < threads; Q.nthreads++) {
		int rc = pthread_create(&Q.thread[Q.nthreads], NULL, thread_main, NULL);

		if (rc) {
			adv_snprintf(err, errlen, "cannot start a MUNGE thread: %s", strerror(rc));
			authq_stop();
			return -1;
		}
	}
	return 0;
}

void authq_stop(void)
{
	pthread_mutex_lock(&Q.lock);
	Q.stop = true;
	/* Queued jobs are not made: their workers are gone. */
	while (Q.head) {
		struct authq_job *j = Q.head;

		Q.head = j->next;
		authq_job_free(j);
	}
	Q.tail = NULL;
	Q.n = 0;
	pthread_cond_broadcast(&Q.cond);
	pthread_mutex_unlock(&Q.lock);
	for (int i = 0; i < Q.nthreads; i++)
		pthread_join(Q.thread[i], NULL);
	Q.nthreads = 0;
}

int authq_sink_init(struct authq_sink *s)
{
	pthread_mutex_init(&s->lock, NULL);
	s->done = NULL;
	s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return s->efd < 0 ? -1 : 0;
}

void authq_sink_destroy(struct authq_sink *s)
{
	struct authq_job *j = authq_take(s);

	while (j) {
		struct authq_job *next = j->next;

		authq_job_free(j);
		j = next;
	}
	if (s->efd >= 0)
		close(s->efd);
	s->efd = -1;
	pthread_mutex_destroy(&s->lock);
}

struct authq_job *authq_submit(struct authq_sink *s, int kind, const char *text, size_t len,
			       const char *bind, void *owner)
{
	struct authq_job *j;

	if (len > AUTH_CRED_MAX)
		return NULL;
	j = calloc(1, sizeof(*j));
	if (!j || !(j->text = malloc(len + 1))) {
		free(j);
		return NULL;
	}
	memcpy(j->text, text, len);
	j->text[len] = '\0';
	j->len = len;
	j->kind = kind;
	if (bind)
		adv_strlcpy(j->bind, bind, sizeof(j->bind));
	j->owner = owner;
	atomic_init(&j->cancelled, false);
	j->sink = s;
	pthread_mutex_lock(&Q.lock);
	if (Q.n >= AUTHQ_MAX || Q.stop || Q.nthreads == 0) {
		pthread_mutex_unlock(&Q.lock);
		authq_job_free(j);
		return NULL;
	}
	if (Q.tail)
		Q.tail->next = j;
	else
		Q.head = j;
	Q.tail = j;
	Q.n++;
	pthread_cond_signal(&Q.cond);
	pthread_mutex_unlock(&Q.lock);
	return j;
}

void authq_cancel(struct authq_job *j)
{
	j->owner = NULL;
	atomic_store(&j->cancelled, true);
}

struct authq_job *authq_take(struct authq_sink *s)
{
	struct authq_job *list;
	uint64_t v;

	if (read(s->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing was signalled since the last take. */
	}
	pthread_mutex_lock(&s->lock);
	list = s->done;
	s->done = NULL;
	pthread_mutex_unlock(&s->lock);
	return list;
}
