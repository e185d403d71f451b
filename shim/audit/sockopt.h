/*
 * sockopt.h: the pure decisions of sockopt.c, shared with their cmocka
 * tests: whether a setsockopt is read back, and whether it gets a line or
 * is only counted. What a read-back means (sa_sockopt_judge, the judge
 * floor's: judge/judge.h) and its words (sa_sockopt_say, the kernel floor's:
 * common/readback.h) are shared with
 * `sockaudit explain`. Nothing here makes a system call.
 */
#ifndef SA_AUDIT_SOCKOPT_H
#define SA_AUDIT_SOCKOPT_H

#include <stdbool.h>
#include <string.h>

#include "audit/audit.h"

/* What the seen table and the level say about one setsockopt call. */
struct sa_opt_gate {
	bool ok;                     /* the call succeeded */
	bool trace;                  /* every call has a line, every call is read back */
	bool info;                   /* a call with nothing to say still has a line */
	bool entry;                  /* it has a seen entry (the table was not full) */
	bool listener;               /* on a listening socket: always read back */
	bool defer_accept;           /* TCP_DEFER_ACCEPT: always read back */
	bool full;                   /* its entry once read back a difference: read back every call */
	bool first;                  /* the first of its entry */
	bool read_back;              /* the value was read back (after the read) */
	bool differs;                /* the read-back carries a finding */
	bool same_as_logged;         /* the read-back is the one its entry's line showed */
	uint64_t nth;                /* its entry's calls, this one included (from 1) */
};
/* Whether the call is read back: always at trace, on listeners, for
 * TCP_DEFER_ACCEPT, for a failure (nothing to read) and with no seen entry;
 * otherwise on sa_optseen_readback's sample. Off it, the call is only
 * counted (not_read_back). Pure; inline, since every setsockopt asks. */
static inline bool sa_sockopt_read_back_due(const struct sa_opt_gate *g)
{
	return !g->ok || sa_optseen_readback(g->nth, g->entry ? g->full : 1,
					     g->trace || !g->entry || g->listener || g->defer_accept);
}
enum sa_opt_route {
	SA_OPT_LINE,             /* a setsockopt line */
	SA_OPT_COUNTED,          /* its kind has a line that said the same: counted */
	SA_OPT_SKIP,             /* nothing to say at this level: counted as skipped */
	SA_OPT_QUIET,            /* below info, not read back: nothing at all */
};
/* The count-only rule for a call that was read back (or failed), asked as
 * the facts come in: SA_OPT_QUIET right after the read-back (read_back
 * known, differs not yet), the others once its findings are known. Pure. */
static inline enum sa_opt_route sa_sockopt_route(const struct sa_opt_gate *g)
{
	if (!g->info && g->ok && !g->read_back)
		return SA_OPT_QUIET;
	/* This kind already has its line and the kernel kept what it kept
	 * then (the value asked, or the same explained adjustment, e.g.
	 * SO_RCVBUF doubled). A read-back unlike the logged one, and every
	 * failure, are logged again. */
	if (!g->trace && g->ok && !g->first && g->entry && (!g->differs || g->same_as_logged))
		return SA_OPT_COUNTED;
	/* Nothing to say at this level: no line is built (warn is the level
	 * for hosts that call setsockopt from a signal handler). */
	if (!g->differs && !g->info)
		return SA_OPT_SKIP;
	return SA_OPT_LINE;
}

#endif
