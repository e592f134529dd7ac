/*
 * msg_stub.h - daemon/msg.c for the targets that link the daemon's modules
 * (fuzz_wire, fuzz_path): build.sh leaves msg.c out of the fuzz library,
 * because one log line per decision would drown the fuzzer.  Included by
 * one source of each target, which it gives these definitions.
 */
#ifndef ADVISOR_FUZZ_MSG_STUB_H
#define ADVISOR_FUZZ_MSG_STUB_H

#include "msg.h"

void msg_open(const char *ident, bool use_syslog)
{
	(void)ident;
	(void)use_syslog;
}

void msg_close(void)
{
}

void msg_log(int level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}

#endif
