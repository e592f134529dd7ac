/*
 * handler.h - one request frame in, one response frame out.
 *
 * Decodes the Request, checks the protocol version and the caller's rights,
 * dispatches (check, plan, ckpt, catalog, policy, history, stats, reload,
 * status), records decisions and appends the encoded Response frame to the
 * connection's output buffer.  One handler per worker thread.
 */
#ifndef ADVISOR_HANDLER_H
#define ADVISOR_HANDLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "advisor.pb-c.h"
#include "config/policy.h"
#include "service/arena.h"
#include "wire/auth.h"

/*
 * A MUNGE call a frame needs (handler_frame returned HANDLER_MUNGE): the
 * server makes it off the worker (authq.h) and gives the same frame to
 * handler_frame again with the result here (issue 20).
 */
enum { PEER_MUNGE_NONE = 0, PEER_MUNGE_ENCODE, PEER_MUNGE_DECODE };
struct peer_munge {
	int want;
	bool done;
	char *text;                    /* malloc'ed: the payload or credential; the credential minted */
	size_t len;
	char bind[AUTH_BINDING_MAX];   /* decode: the payload the credential must carry */
	int rc;                        /* auth_err */
	uid_t uid;
	gid_t gid;
	char err[256];
};

struct peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	/* TCP (issue 13): uid and gid come from the MUNGE credential of the
	 * connection's first request (authed), never from the socket. */
	bool tcp;
	bool authed;
	char addr[64];                 /* the client's address, for the log */
	/* The hello (issue 20): the daemon proved itself to this connection. */
	bool hello;
	uint8_t cnonce[AUTH_NONCE_LEN], snonce[AUTH_NONCE_LEN];
	struct peer_munge munge;
};

/* Frees what a peer's MUNGE call holds. */
void handler_munge_clear(struct peer_munge *m);

struct outbuf {
	uint8_t *data;
	size_t len, cap;
};

#define HANDLER_NAME_CACHE 64

struct handler {
	struct arena arena;
	struct {
		uid_t uid;
		time_t at;
		char name[64];
		/* Whether the uid is an admin under the snapshot of that load time. */
		bool admin_known, admin;
		time_t admin_loaded;
	} names[HANDLER_NAME_CACHE];
	/* Set by handler_frame(): the caller was over its request budget (issue 14). */
	bool over_budget;
	uint32_t retry_ms;         /* with a rate-limited answer: when a token is there again */
};

/* What `status` reports; set once at start. */
struct handler_info {
	const char *socket;
	const char *db;
	time_t started;
	const char *munge_socket;      /* munged's socket for TCP credentials; NULL: default */
	const char *name;              /* the daemon's name in TCP credentials (issue 20) */
};

void handler_set_info(const struct handler_info *info);
void handler_init(struct handler *h);
void handler_destroy(struct handler *h);

/*
 * Puts a policy's decision-log retention and size bound and its per-user
 * request budget in force (at start and after every reload).  0, or -1 when
 * the budget cannot be set up (out of memory).
 */
int handler_apply_policy(const struct adv_policy *pol);
/* Frees what handler_apply_policy() set up (shutdown). */
void handler_cleanup(void);

/*
 * Reloads catalog and policy (SIGHUP and `advisorctl reload`); a new policy
 * brings its decision-log retention, size bound and request budget.  0 and
 * a summary in msg, or -1 and the error (the old snapshot stays).
 */
int handler_reload(char *msg, size_t len);

/*
 * HANDLER_KEEP, or HANDLER_CLOSE when the connection must be closed once
 * the answer is sent, or HANDLER_MUNGE: nothing was answered, the frame
 * needs the MUNGE call p->munge describes; make it (off the worker) and
 * give the same frame again with the result in p->munge.  On a TCP
 * connection the daemon first answers a hello with its own credential,
 * then the first request must carry the client's, bound to the hello,
 * which sets p's uid and gid (and p->authed) for it and every later
 * request.
 */
enum { HANDLER_KEEP = 0, HANDLER_CLOSE, HANDLER_MUNGE };
int handler_frame(struct handler *h, struct peer *p, const uint8_t *frame, size_t len,
		  struct outbuf *out);
/* Whether uid is over its request budget now (takes nothing from it). */
bool handler_over_budget(uid_t uid);
/*
 * Connection caps (issue 20): called when a TCP connection's first
 * credential verifies, with p's uid and gid set; 0 admits it, anything else
 * refuses it with the message in err (ERR_UNAVAILABLE, then closed).
 */
typedef int (*handler_admit_fn)(struct peer *p, char *err, size_t errlen);
void handler_set_admit(handler_admit_fn fn);
/*
 * Whether uid keeps the connection reserve: root, the daemon's own uid, the
 * user "slurm" (Debian's SlurmUser) and the admins of the policy in force.
 */
bool handler_privileged(uid_t uid, gid_t gid);
/* An error answer without a request (frame too large, truncated). */
void handler_refuse(struct handler *h, int code, const char *message, struct outbuf *out);

void handler_outbuf_free(struct outbuf *b);

/*
 * The decision log's side of a check and of show (issue 21), for the
 * fuzz target of the whole path (tests/fuzz/fuzz_path.c) as much as for
 * the daemon: what the user of check m saw (res's findings and sources as
 * dlog_detail.h lines, the script's name) into r; and a record as history
 * lists it, with detail as show prints it (in a; NULL out of memory).
 */
struct adv_result;
struct dlog_rec;
void handler_log_detail(const Advisor__CheckRequest *m, const struct adv_result *res,
			struct dlog_rec *r);
Advisor__Decision *handler_decision_pb(struct arena *a, const struct dlog_rec *r, bool detail);

#endif
