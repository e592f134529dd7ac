/*
 * args.c - the plugin's plugstack.conf arguments (design.md):
 *   required spank_advisor.so socket=PATH timeout_ms=N on_unavailable=allow|deny quiet=0|1
 *                             resources=slurm|parse server=HOST:PORT[,HOST:PORT]
 *                             server_uid=UID|USER on_unchecked=recheck|allow
 * Each word is split with getsubopt(3), except server=, whose value is a
 * comma-separated list of its own (issue 13: advisord over MUNGE-
 * authenticated TCP, tried in order; it replaces the socket).  An unknown key or a bad value is
 * reported (the caller logs it) and ignored, so that a typo in
 * plugstack.conf never stops every job on the cluster.
 */
#include "config.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"
#include "util.h"
#include "wire/endpoint.h"

#ifndef ADV_SOCKET_PATH
#define ADV_SOCKET_PATH "/run/advisor/advisord.sock"
#endif

/* The arguments by their index in args_parse's keys (getsubopt's answer). */
enum { ARG_SOCKET, ARG_TIMEOUT, ARG_UNAVAILABLE, ARG_QUIET, ARG_RESOURCES, ARG_SERVER_UID,
       ARG_UNCHECKED, ARG_COUNT };

void args_defaults(struct plugin_args *a)
{
	memset(a, 0, sizeof(*a));
	adv_strlcpy(a->socket, ADV_SOCKET_PATH, sizeof(a->socket));
	a->timeout_ms = PLUGIN_DEFAULT_TIMEOUT_MS;
	a->server_uid = (uid_t)-1;
}

int args_read_ms(const struct plugin_args *a)
{
	return a->timeout_ms > 1 ? a->timeout_ms / 2 : 1;
}

static void args_complain(char *err, size_t errlen, int *n, const char *what, const char *word)
{
	if (err[0])
		adv_strlcat(err, "; ", errlen);
	adv_strlcat(err, what, errlen);
	adv_strlcat(err, " '", errlen);
	adv_strlcat(err, word, errlen);
	adv_strlcat(err, "'", errlen);
	(*n)++;
}

static int args_apply(struct plugin_args *a, int key, const char *value)
{
	long v;

	if (!value)
		return -1;
	switch (key) {
	case ARG_SOCKET:
		if (!*value || strlen(value) >= sizeof(a->socket))
			return -1;
		adv_strlcpy(a->socket, value, sizeof(a->socket));
		return 0;
	case ARG_TIMEOUT:
		if (adv_parse_long(value, &v) != 0 || v < 1 || v > 60000)
			return -1;
		a->timeout_ms = (int)v;
		return 0;
	case ARG_UNAVAILABLE:
		if (strcmp(value, "allow") == 0)
			a->deny_unavailable = false;
		else if (strcmp(value, "deny") == 0)
			a->deny_unavailable = true;
		else
			return -1;
		return 0;
	case ARG_QUIET:
		if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
			return -1;
		a->quiet = value[0] == '1';
		return 0;
	case ARG_SERVER_UID:
		/* A number costs nothing; a name is looked up in every sbatch. */
		if (adv_parse_long(value, &v) == 0) {
			if (v < 0 || v >= 0xffffffffL)
				return -1;
			a->server_uid = (uid_t)v;
		} else {
			struct passwd pw, *r = NULL;
			char buf[1024];

			if (getpwnam_r(value, &pw, buf, sizeof(buf), &r) != 0 || !r)
				return -1;
			a->server_uid = pw.pw_uid;
		}
		return 0;
	case ARG_UNCHECKED:
		if (strcmp(value, "recheck") == 0)
			a->allow_unchecked = false;
		else if (strcmp(value, "allow") == 0)
			a->allow_unchecked = true;
		else
			return -1;
		return 0;
	case ARG_RESOURCES:
		if (strcmp(value, "slurm") == 0)
			a->resources_parse = false;
		else if (strcmp(value, "parse") == 0)
			a->resources_parse = true;
		else
			return -1;
		return 0;
	default:
		return -1;
	}
}

int args_parse(int argc, char *const argv[], struct plugin_args *a, char *err, size_t errlen)
{
	char *const keys[] = { "socket", "timeout_ms", "on_unavailable", "quiet", "resources",
			       "server_uid", "on_unchecked", NULL };
	_Static_assert(ADV_ARRAY_SIZE(keys) == ARG_COUNT + 1, "a key for each argument, then NULL");
	int i, problems = 0;

	err[0] = '\0';
	for (i = 0; i < argc; i++) {
		char word[PLUGIN_PATH_MAX + 32];
		char *opt = word, *value;
		int key;

		if (!strncmp(argv[i], "server=", 7)) {
			struct endpoint eps[ENDPOINT_MAX];
			char why[200];

			if (endpoint_list(argv[i] + 7, eps, ENDPOINT_MAX, why, sizeof(why)) < 0 ||
			    strlen(argv[i] + 7) >= sizeof(a->socket))
				args_complain(err, errlen, &problems,
					      "bad value in plugstack.conf argument (server=HOST:PORT"
					      "[,HOST:PORT])", argv[i]);
			else
				adv_strlcpy(a->socket, argv[i] + 7, sizeof(a->socket));
			continue;
		}
		/* getsubopt splits on ',' too: a socket path may not contain one. */
		adv_strlcpy(word, argv[i], sizeof(word));
		while (*opt) {
			char *start = opt;

			key = getsubopt(&opt, keys, &value);
			if (key < 0)
				args_complain(err, errlen, &problems,
					      "unknown plugstack.conf argument (accepted: socket=PATH "
					      "server=HOST:PORT[,HOST:PORT] timeout_ms=N "
					      "on_unavailable=allow|deny quiet=0|1 resources=slurm|parse "
					      "server_uid=UID|USER on_unchecked=recheck|allow)",
					      start);
			else if (args_apply(a, key, value) != 0)
				args_complain(err, errlen, &problems, "bad value in plugstack.conf argument",
					      argv[i]);
		}
	}
	return problems;
}
