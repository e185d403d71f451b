/*
 * accept_line.c: the accept line, field by field, from what accept.c saw.
 * At trace every accepted connection writes one, so the parts that do not
 * change between lines are made once: a bound listener's listen_fd and
 * local address when the listener is made, the five fields a connection
 * off the TCP_INFO sample has null as one composed copy.
 *
 * Asks the kernel for nothing but the local address of a wildcard
 * listener's child and, when the host's buffer could not be read, the peer;
 * changes nothing.
 */
#include <netinet/in.h>
#include <string.h>

#include "audit/accept.h"

/* "a.b.c.d:port" or "[v6]:port" with a specific address, not a wildcard. */
static int bound_to_one(const char *local)
{
	/* By the first byte, so a bound IPv4 listener costs no strncmp. */
	switch (local[0]) {
	case '[':
		return strncmp(local, "[::]:", 5) && strncmp(local, "[::ffff:0.0.0.0]:", 17);
	case '0':
		return strncmp(local, "0.0.0.0:", 8) != 0;
	default:
		return local[0] >= '1' && local[0] <= '9';
	}
}

void sa_accept_line_part(struct sa_listener *l)
{
	struct sa_linebuf o = { l->line_part, l->line_part + sizeof l->line_part };
	size_t n = strlen(l->local);

	l->line_part_len = 0;
	/* Address text of a bound listener: nothing to escape. */
	if ((l->family != AF_INET && l->family != AF_INET6) || !bound_to_one(l->local) ||
	    sa_linebuf_put(&o, ",\"listen_fd\":", 13) || sa_linebuf_int(&o, l->listen_fd) ||
	    sa_linebuf_put(&o, ",\"local\":\"", 10) || sa_linebuf_put(&o, l->local, n) || sa_linebuf_put(&o, "\"", 1))
		return;
	l->line_part_len = (unsigned char)(o.p - l->line_part);
}

/* listen_fd and local. A listener bound to one address and port gives its
 * children that local address; only wildcard (and AF_UNIX) ones need
 * asking. On the listener's own fd both fields were written once, with
 * the listener. */
static void line_local(struct sa_line *L, const struct sa_accept_seen *a)
{
	const struct sa_listener *l = a->l;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	if (l && a->lfd == l->listen_fd && l->line_part_len) {
		(void)sa_line_key_k(L, l->line_part, l->line_part_len);
		return;
	}
	sa_line_int(L, "listen_fd", a->lfd);
	if (l && bound_to_one(l->local)) {
		if (l->family == AF_INET || l->family == AF_INET6)   /* address text: nothing to escape */
			sa_line_plain(L, "local", l->local, strlen(l->local));
		else
			sa_line_str(L, "local", l->local);
	} else if (getsockname(a->ret, (struct sockaddr *)&ss, &sl) == 0) {
		sa_line_addr(L, "local", (struct sockaddr *)&ss, sl);
	}
}

static void line_peer(struct sa_line *L, const struct sa_accept_seen *a)
{
	struct sockaddr_storage ss;
	socklen_t sl, len = a->peerlen;

	if (a->peer) {
		/* An aligned copy of the host's buffer (IPv4's fixed size inline). */
		if (len == sizeof(struct sockaddr_in))
			__builtin_memcpy(&ss, a->peer, sizeof(struct sockaddr_in));
		else
			memcpy(&ss, a->peer, len);
	} else {
		/* do_accept could not take it from the host: ask, for a line only. */
		sl = sizeof ss;
		len = getpeername(a->ret, (struct sockaddr *)&ss, &sl) == 0 ? sl : 0;
	}
	sa_line_addr(L, "peer", (const struct sockaddr *)&ss, len);
}

/* The fields from queue_ms to defer_accept_s of a TCP connection off the
 * TCP_INFO sample on a listener without TCP_DEFER_ACCEPT (15 accepts in 16
 * at trace: the seen struct's plain), as the field writers spell them one
 * by one. */
#define PLAIN_TAIL ",\"queue_ms\":null,\"bytes_ready\":null,\"syn_ack_retrans\":null," \
		   "\"queue_len\":null,\"queue_capacity\":null,\"defer_accept_s\":0"

/* queue_ms .. queue_capacity: from the child's TCP_INFO (ti), the data
 * waiting (bytes) and the listener's (listener_ti), each NULL when not read;
 * null too where a short TCP_INFO left out the field's group. */
static void sample_fields(struct sa_line *L, const struct sa_tcpinfo *ti, const int *bytes,
			  const struct sa_tcpinfo *listener_ti)
{
	if (ti && ti->has_times)
		sa_line_int(L, "queue_ms", ti->last_data_sent);
	else
		sa_line_null(L, "queue_ms");
	if (bytes)
		sa_line_int(L, "bytes_ready", *bytes);
	else
		sa_line_null(L, "bytes_ready");
	if (ti && ti->has_retrans)
		sa_line_int(L, "syn_ack_retrans", ti->total_retrans);
	else
		sa_line_null(L, "syn_ack_retrans");
	if (listener_ti) {
		sa_line_int(L, "queue_len", listener_ti->unacked);
		sa_line_int(L, "queue_capacity", (long long)listener_ti->sacked + 1);
	} else {
		sa_line_null(L, "queue_len");
		sa_line_null(L, "queue_capacity");
	}
}

void sa_accept_line(const struct sa_accept_seen *a, const struct sa_findings *f)
{
	struct sa_line L;

	sa_line_begin(&L, "accept", a->ret, f);
	line_local(&L, a);
	line_peer(&L, a);
	sa_line_ms_ns(&L, "wait_ms", a->wait_ns);
	if (SA_LIKELY(a->plain)) {
		(void)sa_line_key_k(&L, PLAIN_TAIL, sizeof PLAIN_TAIL - 1);   /* one copy */
	} else {
		sample_fields(&L, a->ti, a->bytes, a->listener_ti);
		if (a->tcp)
			sa_line_int(&L, "defer_accept_s", a->defer_s);
	}
	sa_line_int(&L, "ret", a->ret);
	sa_line_emit(&L, SA_LEVEL_TRACE, f);
}
