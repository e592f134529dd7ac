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

#include "engine.h"

#define WIRE_MAX_FRAME (1u << 20)
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
};
const char *wire_strerror(int code);

/* Connects to path; the whole connect is bounded by timeout_ms (<0: none). */
int wire_connect(const char *path, int timeout_ms, int *fd_out);
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

#endif
