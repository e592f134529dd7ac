/*
 * auth.c - MUNGE credentials (libmunge) for the TCP side of the protocol
 * (issue 13), both ways (issue 20).  Errors keep munge's own wording
 * (munge_strerror: "Expired credential", "Replayed credential", ...), so a
 * refused client reads what munge itself would report.  The payload names
 * the role, the daemon and the connection's nonces (auth_binding), so that
 * a credential minted for something else (an srun's, another daemon's,
 * another connection's) is not accepted: MUNGE's replay cache is per
 * munged, so without the binding a credential used on one daemon of a
 * failover pair would be good on the other, and one a fake server
 * collected good on the real daemon.
 */
#include "config.h"

#include <errno.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "auth.h"
#include "util.h"

static const char *const auth_errors[AUTH_ERR_COUNT] = {
	[AUTH_OK] = "success",
	[AUTH_ERR_SOCKET] = "munged is not reachable",
	[AUTH_ERR_INVALID] = "invalid credential",
	[AUTH_ERR_EXPIRED] = "expired credential",
	[AUTH_ERR_REWOUND] = "rewound credential (clock skew)",
	[AUTH_ERR_REPLAYED] = "replayed credential",
	[AUTH_ERR_OTHER] = "munge error",
	[AUTH_ERR_BINDING] = "credential minted for another daemon or connection",
};
/* A code left out is a NULL row, which test_tables finds (issue 27). */
_Static_assert(ADV_ARRAY_SIZE(auth_errors) == AUTH_ERR_COUNT, "a message for each error");

int auth_nonce(uint8_t *nonce)
{
	size_t got = 0;

	while (got < AUTH_NONCE_LEN) {
		ssize_t n = getrandom(nonce + got, AUTH_NONCE_LEN - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static void hex(char *out, const uint8_t *b)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < AUTH_NONCE_LEN; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * AUTH_NONCE_LEN] = '\0';
}

size_t auth_binding(char *buf, size_t len, int role, const char *name, const uint8_t *cnonce,
		    const uint8_t *snonce)
{
	char c[2 * AUTH_NONCE_LEN + 1], s[2 * AUTH_NONCE_LEN + 1];

	hex(c, cnonce);
	hex(s, snonce);
	return adv_snprintf(buf, len, "advisor-%s name=%s cnonce=%s snonce=%s",
			    role == AUTH_SERVER ? "server" : "client", name, c, s);
}

int auth_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= AUTH_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] <= ' ' || (unsigned char)name[i] >= 0x7f)
			return 0;
	return 1;
}

const char *auth_strerror(int code)
{
	if (code < 0 || (size_t)code >= ADV_ARRAY_SIZE(auth_errors))
		return "unknown auth error";
	return auth_errors[code];
}

static int auth_code(munge_err_t e)
{
	switch (e) {
	case EMUNGE_SUCCESS:
		return AUTH_OK;
	case EMUNGE_SOCKET:
		return AUTH_ERR_SOCKET;
	case EMUNGE_CRED_EXPIRED:
		return AUTH_ERR_EXPIRED;
	case EMUNGE_CRED_REWOUND:
		return AUTH_ERR_REWOUND;
	case EMUNGE_CRED_REPLAYED:
		return AUTH_ERR_REPLAYED;
	case EMUNGE_BAD_ARG:
	case EMUNGE_BAD_LENGTH:
	case EMUNGE_BAD_CRED:
	case EMUNGE_BAD_VERSION:
	case EMUNGE_BAD_CIPHER:
	case EMUNGE_BAD_MAC:
	case EMUNGE_BAD_ZIP:
	case EMUNGE_BAD_REALM:
	case EMUNGE_CRED_INVALID:
	case EMUNGE_CRED_UNAUTHORIZED:
		return AUTH_ERR_INVALID;
	default:
		return AUTH_ERR_OTHER;
	}
}

static munge_ctx_t auth_ctx(const char *socket)
{
	munge_ctx_t ctx = munge_ctx_create();

	if (ctx && socket && *socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
		munge_ctx_destroy(ctx);
		return NULL;
	}
	return ctx;
}

int auth_encode(const char *socket, const char *payload, int ttl_s, char **cred, char *err,
		size_t errlen)
{
	munge_ctx_t ctx = auth_ctx(socket);
	munge_err_t e;

	*cred = NULL;
	if (!ctx) {
		adv_snprintf(err, errlen, "munge: cannot set up a context (socket %s)",
			     socket ? socket : "default");
		return AUTH_ERR_OTHER;
	}
	/* The payload is no secret: a MAC-only credential (munge still signs
	 * uid, gid, time and payload with the shared key and refuses replays)
	 * spares munged the encryption, about a third of its time per
	 * credential (remunge -d: 10.5k encode+decode pairs/s with the default
	 * cipher, 13.8k without, on a 2-core machine). */
	if (munge_ctx_set(ctx, MUNGE_OPT_CIPHER_TYPE, MUNGE_CIPHER_NONE) != EMUNGE_SUCCESS ||
	    (ttl_s > 0 && munge_ctx_set(ctx, MUNGE_OPT_TTL, ttl_s) != EMUNGE_SUCCESS)) {
		adv_snprintf(err, errlen, "munge: %s", munge_ctx_strerror(ctx));
		munge_ctx_destroy(ctx);
		return AUTH_ERR_OTHER;
	}
	e = munge_encode(cred, ctx, payload, (int)strlen(payload));
	if (e != EMUNGE_SUCCESS) {
		adv_snprintf(err, errlen, "munge: %s", munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx)
								 : munge_strerror(e));
		free(*cred);
		*cred = NULL;
	}
	munge_ctx_destroy(ctx);
	return auth_code(e);
}

int auth_decode(const char *socket, const char *cred, size_t len, const char *want, uid_t *uid,
		gid_t *gid, char *err, size_t errlen)
{
	munge_ctx_t ctx;
	munge_err_t e;
	void *payload = NULL;
	int plen = 0, rc;
	char *text;

	if (!cred || len == 0 || len > AUTH_CRED_MAX || memchr(cred, '\0', len)) {
		adv_snprintf(err, errlen, "munge: %s", munge_strerror(EMUNGE_BAD_CRED));
		return AUTH_ERR_INVALID;
	}
	text = malloc(len + 1);
	if (!text) {
		adv_snprintf(err, errlen, "out of memory");
		return AUTH_ERR_OTHER;
	}
	memcpy(text, cred, len);
	text[len] = '\0';
	ctx = auth_ctx(socket);
	if (!ctx) {
		free(text);
		adv_snprintf(err, errlen, "munge: cannot set up a context");
		return AUTH_ERR_OTHER;
	}
	e = munge_decode(text, ctx, &payload, &plen, uid, gid);
	rc = auth_code(e);
	if (e != EMUNGE_SUCCESS) {
		adv_snprintf(err, errlen, "munge: %s", munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx)
								 : munge_strerror(e));
	} else if (plen != (int)strlen(want) || memcmp(payload, want, (size_t)plen)) {
		adv_snprintf(err, errlen, "the credential was not minted for this daemon and "
			     "connection (its payload is not this connection's binding)");
		rc = AUTH_ERR_BINDING;
	}
	free(payload);
	free(text);
	munge_ctx_destroy(ctx);
	return rc;
}
