/*
 * connect_line.c: the connect line, from what connect.c decided about one
 * connect (struct sa_conn_done) and the findings it carries. Writes only.
 */
#include <netinet/in.h>
#include <sys/socket.h>

#include "audit/connect.h"

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
