/*
 * auth.h - MUNGE credentials for advisord over TCP (issue 13), both ways
 * (issue 20).
 *
 * A TCP connection opens with a hello: the client sends a nonce, the daemon
 * answers with its name, a nonce of its own and a credential it minted
 * (as its own uid) whose payload binds the name and both nonces.  The
 * client checks that credential's uid against the server uids it trusts
 * before it sends anything else, then mints a credential bound the same
 * way for its first request.  advisord decodes it with its munged, which
 * checks the shared key, the time to live and replays, and takes the
 * credential's uid and gid in place of SO_PEERCRED for every access rule
 * (as Slurm's auth/munge plugin does for slurmctld and slurmdbd).  So a
 * fake server never sees a user's credential, and a credential is good
 * only on the one connection of the one daemon it was minted for.
 */
#ifndef ADVISOR_AUTH_H
#define ADVISOR_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AUTH_NONCE_LEN 16
#define AUTH_NAME_MAX 256          /* a daemon's name, NUL included */
#define AUTH_BINDING_MAX 400       /* auth_binding()'s text, NUL included */
#define AUTH_CRED_MAX 4096         /* longer is no credential */

enum auth_err {
	AUTH_OK = 0,
	AUTH_ERR_SOCKET,      /* munged not reachable */
	AUTH_ERR_INVALID,     /* not a credential, wrong key, corrupted */
	AUTH_ERR_EXPIRED,
	AUTH_ERR_REWOUND,     /* from the future: clock skew */
	AUTH_ERR_REPLAYED,
	AUTH_ERR_OTHER,
	AUTH_ERR_BINDING,     /* a good credential minted for another daemon or connection */
	AUTH_ERR_COUNT        /* sizes auth_strerror's table; no error */
};

enum auth_role { AUTH_SERVER = 0, AUTH_CLIENT };

/* AUTH_NONCE_LEN random bytes (getrandom); 0, or -1 with errno. */
int auth_nonce(uint8_t *nonce);
/*
 * The payload a credential of role carries: the role, the daemon's name and
 * the connection's two nonces, as text ("advisor-client name=NAME cnonce=HEX
 * snonce=HEX").  Writes at most len bytes; returns the text's length.
 */
size_t auth_binding(char *buf, size_t len, int role, const char *name, const uint8_t *cnonce,
		    const uint8_t *snonce);
/* Whether name can be a daemon's name: 1-255 printable bytes, no space. */
int auth_name_ok(const char *name);

/*
 * A fresh credential carrying payload in *cred (malloc'ed, NUL-terminated;
 * free()).  socket: munged's socket, NULL for libmunge's default; ttl_s: 0
 * for munged's default.  AUTH_OK, or a code with munge's own message in err.
 */
int auth_encode(const char *socket, const char *payload, int ttl_s, char **cred, char *err,
		size_t errlen);
/*
 * Decodes cred (len bytes, not necessarily NUL-terminated) into the uid and
 * gid it was minted by; its payload must be want (AUTH_ERR_BINDING
 * otherwise).  AUTH_OK, or a code with munge's message in err.
 */
int auth_decode(const char *socket, const char *cred, size_t len, const char *want, uid_t *uid,
		gid_t *gid, char *err, size_t errlen);
const char *auth_strerror(int code);

#endif
