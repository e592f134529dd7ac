/*
 * wire.h - the advisor wire protocol on a unix stream socket.
 *
 * A frame is a 4-byte big-endian length followed by that many bytes of a
 * protobuf-c encoded advisor.Request or advisor.Response
 * (proto/advisor.proto).  Frames over WIRE_MAX_FRAME are refused.  Every
 * blocking call takes a timeout so that neither side can hang the other.
 */
#ifndef ADVISOR_WIRE_H
#define ADVISOR_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/engine.h"

#define WIRE_MAX_FRAME (1u << 20)
/* Until a connection's first request is decoded (and, on TCP, its credential
 * verified) the daemon takes no bigger frame (issue 20); a client whose
 * first request is bigger sends a `status` first. */
#define WIRE_FIRST_FRAME_MAX 4096u
#define WIRE_VERSION 1u

enum wire_err {
	WIRE_OK = 0,
	WIRE_ERR_CONNECT,      /* no daemon on the socket */
	WIRE_ERR_TIMEOUT,
	WIRE_ERR_CLOSED,       /* peer closed the connection */
	WIRE_ERR_IO,
	WIRE_ERR_TOO_LARGE,
	WIRE_ERR_MALFORMED,    /* cannot decode */
	WIRE_ERR_REMOTE,       /* the daemon answered with an error */
	WIRE_ERR_NOMEM,
	WIRE_ERR_AUTH,         /* TCP: no MUNGE credential could be minted */
	WIRE_ERR_SERVER,       /* the server did not prove it is advisord (issue 20) */
	WIRE_ERR_REFUSED,      /* TCP: the daemon, proven, refused this client's credential */
};
const char *wire_strerror(int code);

/*
 * The uid the daemon must run as (plugstack.conf server_uid=, advisorctl
 * --server-uid; issue 20): a TCP server proves it with a MUNGE credential
 * bound to the client's nonce, a unix socket's daemon by SO_PEERCRED.
 * root and the caller's own uid are always trusted (they could read
 * anything the caller can), and so is the system user advisord.service
 * runs the daemon as (ADV_DAEMON_USER, "advisor", when it exists; issue
 * 30); (uid_t)-1, the default, trusts the user "slurm" besides.
 * Process-wide; set it before connecting.
 */
void wire_set_server_uid(uid_t uid);

/*
 * Connects to path, a unix socket, or "HOST:PORT[,HOST:PORT]" (TCP, tried
 * in order; the server proves its identity and the connection is
 * authenticated with a MUNGE credential before this returns); the whole
 * connect is bounded by timeout_ms (<0: none).  WIRE_ERR_SERVER: the
 * daemon is not who server_uid says (on TCP the next server is tried).
 * The socket is non-blocking and close-on-exec; the wire_* calls wait with
 * poll().  On WIRE_ERR_CONNECT errno says why (ENOENT, ECONNREFUSED, ...).
 */
int wire_connect(const char *path, int timeout_ms, int *fd_out);
/* Why the last WIRE_ERR_SERVER of this thread was refused. */
const char *wire_server_why(void);

/* Tests: the first server of a TCP list, connected without the hello. */
int wire_connect_bare(const char *list, int timeout_ms, int *fd_out);
/*
 * Tests: the hello on a bare connection: the daemon's name and the two
 * nonces in *h once its credential verified (WIRE_OK), else
 * WIRE_ERR_SERVER or a transport error.
 */
struct wire_hello {
	char name[256];
	uint8_t cnonce[16], snonce[16];
};
int wire_hello(int fd, int timeout_ms, struct wire_hello *h, char *err, size_t errlen);
/* Writes one frame; returns a wire_err. */
int wire_write_frame(int fd, const uint8_t *buf, size_t len, int timeout_ms);
/* Reads one frame into a malloc'ed buffer (caller frees). */
int wire_read_frame(int fd, uint8_t **buf, size_t *len, int timeout_ms);

/*
 * One check round trip for the plugin and advisorctl: connect, send,
 * receive, close, all within timeout_ms.  On WIRE_OK res is filled and
 * decision_id holds the daemon's id.  On WIRE_ERR_REMOTE err holds the
 * daemon's message.
 */
int wire_client_check(const char *socket_path, int timeout_ms,
		      const struct adv_request *req, enum adv_context ctx,
		      uint32_t job_id, const char *parent_decision,
		      struct adv_result *res, char *decision_id, size_t idlen,
		      char *err, size_t errlen);

/*
 * As wire_client_check, with the job's own text (jobship.h; NULL: none):
 * while the daemon answers with need_files instead of a verdict, the files
 * are read as the caller (jobship_fetch) and the check is sent again on the
 * same connection, at most JOBREAD_MAX_ROUNDS requests in all (the last
 * one marked final), everything within the one timeout_ms.
 */
struct jobship;
int wire_client_check_job(const char *socket_path, int timeout_ms,
			  const struct adv_request *req, enum adv_context ctx,
			  uint32_t job_id, const char *parent_decision, struct jobship *js,
			  struct adv_result *res, char *decision_id, size_t idlen,
			  char *err, size_t errlen);

/*
 * Issue 27: a connection made now, as the caller is now, and used later
 * with wire_client_check_job_on() (the caller closes it).  The daemon
 * believes a node check's job_uid and parent only from root, and
 * slurmstepd is root in init_post_opt but the job's user in user_init,
 * where the job's files must be read.  The connection is made as
 * wire_connect() makes it, and a status request is sent at once, so that
 * the daemon keeps it for its idle timeout (60 s by default).
 */
int wire_open(const char *target, int timeout_ms, int *fd_out, char *err, size_t errlen);
int wire_client_check_job_on(int fd, int timeout_ms, const struct adv_request *req,
			     enum adv_context ctx, uint32_t job_id, const char *parent_decision,
			     struct jobship *js, struct adv_result *res, char *decision_id,
			     size_t idlen, char *err, size_t errlen);

/*
 * Message-level helpers (advisorctl, tests, benchmarks).  The types are the
 * generated ones of advisor.pb-c.h; they are only forward-declared here so
 * that wire.h stays usable without the generated header.
 */
struct Advisor__Request;
struct Advisor__Response;
struct ProtobufCMessage;

/* Packs msg and writes it as one frame. */
int wire_write_message(int fd, const struct ProtobufCMessage *msg, int timeout_ms);
/*
 * Sends req (version and id are filled in when unset) on an open connection
 * and reads the answer.  Returns WIRE_OK or WIRE_ERR_REMOTE with *resp set
 * (free it with advisor__response__free_unpacked(*resp, NULL)); on
 * WIRE_ERR_REMOTE err holds the daemon's message.  Other codes: *resp NULL.
 */
int wire_exchange(int fd, int timeout_ms, struct Advisor__Request *req,
		  struct Advisor__Response **resp, char *err, size_t errlen);
/* connect + wire_exchange + close, all within timeout_ms. */
int wire_call(const char *socket_path, int timeout_ms, struct Advisor__Request *req,
	      struct Advisor__Response **resp, char *err, size_t errlen);

#endif
