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

#include "arena.h"

struct peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
};

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
	} names[HANDLER_NAME_CACHE];
};

/* What `status` reports; set once at start. */
struct handler_info {
	const char *socket;
	const char *db;
	time_t started;
};

void handler_set_info(const struct handler_info *info);
void handler_init(struct handler *h);
void handler_destroy(struct handler *h);

/*
 * Reloads catalog and policy (SIGHUP and `advisorctl reload`); a new policy
 * brings its decision-log retention.  0 and a summary in msg, or -1 and the
 * error (the old snapshot stays).
 */
int handler_reload(char *msg, size_t len);

/* Returns true when the connection must be closed once the answer is sent. */
bool handler_frame(struct handler *h, const struct peer *p, const uint8_t *frame, size_t len,
		   struct outbuf *out);
/* An error answer without a request (frame too large, truncated). */
void handler_refuse(struct handler *h, int code, const char *message, struct outbuf *out);

void outbuf_free(struct outbuf *b);

#endif
