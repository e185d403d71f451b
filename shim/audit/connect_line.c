/*
 * connect_line.c: the connect line, from what connect.c decided about one
 * connect (struct sa_conn_done), and the words of the findings it carries
 * (which ones apply is the judge floor's sa_conn_judge). Writes only.
 */
#include <netinet/in.h>
#include <sys/socket.h>

#include "audit/connect.h"
#include "connect_outcomes.h"
#include "syn_schedule.h"

const char *sa_conn_outcome_name(enum sa_conn_outcome o)
{
	switch (o) {
	case SA_CONN_OK: return SA_OUTCOME_OK;
	case SA_CONN_FAILED: return SA_OUTCOME_FAILED;
	case SA_CONN_ABANDONED: return SA_OUTCOME_ABANDONED;
	case SA_CONN_INTERRUPTED: return SA_OUTCOME_INTERRUPTED;
	case SA_CONN_DISCONNECT: return SA_OUTCOME_DISCONNECT;
	default: return SA_OUTCOME_PENDING;
	}
}

SA_FORK_TEXT void sa_conn_findings(struct sa_findings *f, enum sa_conn_outcome o, double connect_ms,
		      int syn_retrans, int defer_s, int slow_ms, int is_unix,
		      const struct sa_syn_sched *k)
{
	const struct sa_conn_facts in = {
		.outcome = o, .ms = connect_ms, .syn_retrans = syn_retrans, .defer_s = defer_s,
		.slow_ms = slow_ms, .is_unix = is_unix, .sched = k,
	};
	struct sa_conn_verdict v;

	sa_conn_judge(&in, &v);
	if (v.syn_retransmitted)
		sa_findings_add(f, "syn_retransmitted",
				SA_MSG_SYN_RETRANSMITTED,
				syn_retrans, sa_plural((unsigned)syn_retrans, "retransmission", "retransmissions"),
				o == SA_CONN_FAILED ? "failed" : o == SA_CONN_ABANDONED ? "was given up" :
				o == SA_CONN_INTERRUPTED ? "was interrupted by a signal" : "completed",
				connect_ms, v.syn_last_due_s);
	if (v.slow == SA_CONN_SLOW_ABANDONED)
		sa_findings_add(f, "slow_connect",
				SA_MSG_SLOW_CONNECT_ABANDONED,
				connect_ms, slow_ms);
	else if (v.slow == SA_CONN_SLOW_INTERRUPTED)
		sa_findings_add(f, "slow_connect",
				SA_MSG_SLOW_CONNECT_INTERRUPTED,
				connect_ms, slow_ms);
	else if (v.slow == SA_CONN_SLOW_DONE)
		sa_findings_add(f, "slow_connect", SA_MSG_SLOW_CONNECT,
				connect_ms, slow_ms,
				v.slow_tail == SA_CONN_TAIL_UNIX ? SA_MSG_SLOW_CONNECT_UNIX_TAIL :
				v.slow_tail == SA_CONN_TAIL_NO_SYN_DROP ? SA_MSG_SLOW_CONNECT_NO_SYN_DROP_TAIL : "");
	if (v.defer_on_client)
		sa_findings_add(f, "defer_on_client_socket",
				SA_MSG_DEFER_ON_CLIENT_SOCKET,
				defer_s);
}

static const char *proto_name(const struct sa_sock *s)
{
	if (s->family == AF_UNIX)
		return s->type == SOCK_STREAM ? "unix" : s->type == SOCK_DGRAM ? "unix_dgram" : "unix_seqpacket";
	if (s->family == AF_INET || s->family == AF_INET6) {
		if (sa_sock_is_tcp(s))
			return "tcp";
		if (s->type == SOCK_DGRAM)
			return "udp";
	}
	return NULL;
}

/* The connect line, in its own frame: its buffer (a few KB of stack) is
 * touched only when a line is written, not on every counted connect (a
 * fresh stack page is a fault in a forked child). */
__attribute__((noinline)) void sa_connect_line(int fd, const struct sa_sock *s, const struct sockaddr *peer,
					     socklen_t plen, const struct sa_conn_done *d, struct sa_findings *f,
		     enum sa_level lvl, int retrans, int defer_s)
{
	struct sockaddr_storage local;
	socklen_t llen = sizeof local;
	int tcp = sa_sock_is_tcp(s);
	struct sa_line L;

	sa_line_begin(&L, "connect", fd, f);
	sa_line_addr(&L, "peer", peer, plen);
	if (getsockname(fd, (struct sockaddr *)&local, &llen) == 0 && s->family != AF_UNIX)
		sa_line_addr(&L, "local", (struct sockaddr *)&local, llen);
	sa_line_str(&L, "proto", proto_name(s));
	sa_line_bool(&L, "nonblocking", d->nonblocking);
	if (d->fast_open)
		sa_line_bool(&L, "fast_open", 1);
	sa_line_str(&L, "outcome", sa_conn_outcome_name(d->outcome));
	sa_line_str(&L, "completed_by", d->by);
	if (d->after_interrupt)
		sa_line_bool(&L, "after_interrupt", 1);
	if (d->left_by_jump)
		sa_line_bool(&L, "left_by_jump", 1);
	sa_line_real(&L, "connect_ms", sa_round(d->ms * 1000.0) / 1000.0);
	if (tcp) {
		if (retrans >= 0)
			sa_line_int(&L, "syn_retrans", retrans);
		else
			sa_line_null(&L, "syn_retrans");
		if (d->ti.valid && d->ti.has_total_rto)
			sa_line_int(&L, "syn_rto", d->ti.total_rto);
		if (defer_s > 0)
			sa_line_int(&L, "defer_accept_s", defer_s);
	}
	if (d->outcome == SA_CONN_DISCONNECT) {
		sa_line_int(&L, "ret", d->err ? -1 : 0);
		if (d->err)
			sa_line_errno(&L, "errno", d->err);
	} else if (d->outcome == SA_CONN_OK) {
		sa_line_int(&L, "ret", 0);
	} else if (d->left_by_jump) {
		/* The call never returned: the program saw no result. */
		sa_line_null(&L, "ret");
		sa_line_null(&L, "errno");
	} else if (d->outcome == SA_CONN_FAILED || d->outcome == SA_CONN_INTERRUPTED) {
		sa_line_int(&L, "ret", -1);
		if (d->err)
			sa_line_errno(&L, "errno", d->err);
		else
			sa_line_str(&L, "errno", "unknown");
	}
	sa_line_emit(&L, lvl, f);
}
