/*
 * sockopt.h: the pure decisions of sockopt.c, shared with their cmocka
 * tests: whether a setsockopt is read back, what its read-back means, and
 * whether it gets a line or is only counted. Nothing here makes a system
 * call; the few sysctls a read-back is explained by are read through the
 * facts' read_sysctl, only when the comparison needs them.
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

/* What a read-back means: one sentence template of a finding each. */
enum sa_opt_diff {
	SA_OPTD_SAME,              /* nothing to say */
	SA_OPTD_DIFFERS,           /* option_differs: "NAME req reads back as eff." */
	SA_OPTD_DIFFERS_UNEXPLAINED, /* option_differs, for a reason the shim does not know */
	SA_OPTD_LINGER,            /* option_differs: SO_LINGER {on, s} */
	SA_OPTD_TIMEOUT,           /* option_differs: a timeout, in us */
	SA_OPTD_NAME,              /* option_differs: a device or algorithm name */
	SA_OPTD_DEFER_ROUNDED,     /* defer_rounded */
	SA_OPTD_BUF_DOUBLED,       /* option_adjusted: a buffer size stored doubled */
	SA_OPTD_BUF_CAPPED,        /* option_adjusted: capped by [rw]mem_max, then doubled */
	SA_OPTD_BELOW_MIN,         /* option_adjusted: below the kernel's minimum (buffers) */
	SA_OPTD_FASTOPEN_CAPPED,   /* option_adjusted: TCP_FASTOPEN capped by somaxconn */
	SA_OPTD_MAXSEG,            /* option_adjusted: TCP_MAXSEG reads back the MSS in use */
	SA_OPTD_TOS_ECN,           /* option_adjusted: IP_TOS without the ECN bits */
	SA_OPTD_HOPS_DEFAULT,      /* option_adjusted: IP_TTL/IPV6_UNICAST_HOPS -1 */
	SA_OPTD_CLAMP_MIN,         /* option_adjusted: TCP_WINDOW_CLAMP below the minimum */
	SA_OPTD_TIMER_TICK,        /* option_adjusted: a timeout rounded up to the tick */
};
struct sa_opt_facts {
	int level, opt;
	enum sa_optkind kind;
	int quickack;                      /* TCP_QUICKACK: quickack.c says what it means */
	const void *req; socklen_t reqlen; /* what the host asked; NULL: the call failed */
	const void *eff; socklen_t efflen; /* what was read back; NULL: not read */
	/* Reads a sysctl (0, or -errno): sa_read_sysctl, or a test's table. */
	int (*read_sysctl)(const char *path, long *out);
};
struct sa_opt_verdict {
	enum sa_opt_diff diff;
	int req_i, eff_i;                  /* int and bool options: the values compared (0: not decoded) */
	long long req_us, eff_us;          /* timeouts */
	int linger[4];                     /* SO_LINGER: asked {onoff, linger}, read back {onoff, linger} */
	long sysctl;                       /* the sysctl that explains it (buffers, TCP_FASTOPEN) */
	int rounds;                        /* TCP_DEFER_ACCEPT: the SYN-ACK rounds kept */
};
/* An option value as an int: all of it from 4 bytes, else its first byte. */
static inline int sa_opt_as_int(const void *buf, socklen_t len, int *out)
{
	if (!buf || len == 0)
		return 0;
	if (len >= (socklen_t)sizeof(int))
		memcpy(out, buf, sizeof *out);
	else
		*out = *(const unsigned char *)buf;
	return 1;
}
/* An int option whose read-back differs from the value asked. */
enum sa_opt_diff sa_sockopt_judge_int(const struct sa_opt_facts *in, struct sa_opt_verdict *v) SA_HIDDEN;
/* SO_LINGER, timeouts and names. */
void sa_sockopt_judge_other(const struct sa_opt_facts *in, struct sa_opt_verdict *v) SA_HIDDEN;
/* What a read-back means (v->diff, and the values it was judged on). Pure;
 * its common case, an int or bool that reads back as asked, inline. */
static inline void sa_sockopt_judge(const struct sa_opt_facts *in, struct sa_opt_verdict *v)
{
	v->diff = SA_OPTD_SAME;
	v->req_i = v->eff_i = 0;
	if (!in->req || !in->eff)
		return;
	if (in->kind == SA_OPT_INT) {
		if (sa_opt_as_int(in->req, in->reqlen, &v->req_i) && sa_opt_as_int(in->eff, in->efflen, &v->eff_i) &&
		    v->req_i != v->eff_i)
			v->diff = sa_sockopt_judge_int(in, v);
	} else if (in->kind == SA_OPT_BOOL) {
		if (!in->quickack && sa_opt_as_int(in->req, in->reqlen, &v->req_i) &&
		    sa_opt_as_int(in->eff, in->efflen, &v->eff_i) && (v->req_i != 0) != (v->eff_i != 0))
			v->diff = SA_OPTD_DIFFERS;
	} else {
		sa_sockopt_judge_other(in, v);
	}
}

#endif
