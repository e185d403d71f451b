/*
 * accept_judge.c: the pure decisions of the accepting side (judge/judge.h):
 * which way an accepted connection goes (sa_accept_route, inline in
 * judge.h because the accept wrapper runs it), and, for one that took the
 * full audit (shim/audit/accept.c), what its facts mean: why it arrived
 * empty, whether the queue was full, how many bytes were waiting. No
 * system call and no words: cmocka tests call these directly with tables
 * of facts.
 */
#include <limits.h>
#include <string.h>

#include "judge/judge.h"

#define TCPI_OPT_TFO_CHILD 128
#ifndef TCPI_OPT_SYN_DATA
#define TCPI_OPT_SYN_DATA 32
#endif
/* A backlog-0 queue holds one connection: call it full only when that one
 * waited long enough for a new SYN to be likely to meet it. */
#define FULL_MIN_QUEUE_MS 10

enum sa_empty_cause sa_empty_cause(int defer_s, long bytes_ready, int state,
				   uint32_t total_retrans, uint32_t total_rto, uint8_t options)
{
	if (defer_s <= 0 || bytes_ready != 0 || state != SA_TCP_ESTABLISHED)
		return SA_EMPTY_NONE;   /* FIN-only children reach accept in CLOSE_WAIT */
	/* Fast Open children are queued at SYN time and skip the gate. */
	if (options & TCPI_OPT_TFO_CHILD)
		return SA_EMPTY_NONE;
	/* tcp_create_openreq_child(): total_retrans = req->num_retrans, the
	 * "last chance" SYN-ACK syn_ack_recalc() resends when the window ends. */
	if (total_retrans >= 1 || total_rto >= 1)
		return SA_EMPTY_DEFER_EXPIRED;
	/* cookie_tcp_reqsk_init(): a SYN-cookie child never had a request in
	 * the SYN queue, so tcp_check_req()'s deferral gate never ran. */
	return SA_EMPTY_SYNCOOKIE;
}

int sa_queue_was_full(int backlog, uint32_t len_after, long queue_ms)
{
	if (backlog < 0)
		return 0;
	/* sk_acceptq_is_full(): len > backlog, so it held backlog + 1 before
	 * this accept took one when len_after >= backlog. */
	if ((long)len_after < (long)backlog)
		return 0;
	return backlog > 0 || len_after > 0 || queue_ms >= FULL_MIN_QUEUE_MS;
}

/* FIONREAD of a child nobody has read from yet, without the ioctl: there
 * tcpi_bytes_received (4.1+) counts the same bytes, plus one for a FIN
 * (tcp_fin() moves rcv_nxt past it; tcp_inq() takes it back off). Checked on
 * 6.18 for silent, 5 bytes, 5 bytes + FIN, FIN only and 3000 bytes. Other
 * states (a reset child) go to the ioctl. Saves a syscall per accept, ~1.7%
 * of an nginx worker's CPU with Connection: close (bench/profile.sh). */
int sa_accept_bytes_from_tcpinfo(const struct sa_tcpinfo *ti, int *bytes)
{
	uint64_t b;

	if (!ti || !ti->has_bytes_received)
		return 0;
	/* tcp_get_info() reads tcpi_state before it takes the socket lock and
	 * the counters after: a FIN that lands in between leaves the state
	 * ESTABLISHED and bytes_received already one past it. The counters
	 * agree with each other: no data segment (tcp_segs_in() counts only
	 * segments with payload) and no data in a Fast Open SYN
	 * (TCPI_OPT_SYN_DATA) means nothing to read, whatever the state says. */
	if (ti->has_data_segs && ti->data_segs_in == 0 && !(ti->options & TCPI_OPT_SYN_DATA) &&
	    (ti->state == SA_TCP_ESTABLISHED || ti->state == SA_TCP_CLOSE_WAIT)) {
		*bytes = 0;
		return 1;
	}
	b = ti->bytes_received;
	if (ti->state == SA_TCP_CLOSE_WAIT && b > 0)
		b--;
	else if (ti->state != SA_TCP_ESTABLISHED)
		return 0;
	*bytes = b > INT_MAX ? INT_MAX : (int)b;
	return 1;
}

void sa_accept_judge(const struct sa_accept_facts *in, struct sa_accept_verdict *v)
{
	const struct sa_tcpinfo *ti = in->ti, *listener_ti = in->listener_ti;

	memset(v, 0, sizeof *v);
	v->cause = SA_EMPTY_NONE;
	v->with_data = in->bytes ? *in->bytes > 0 : -1;
	/* Below trace the listener's TCP_INFO is sampled: else its last read-back. */
	v->backlog = listener_ti ? (int)listener_ti->sacked : in->last_backlog;
	if (listener_ti)
		v->full = sa_queue_was_full(v->backlog, listener_ti->unacked,
					    ti && ti->has_times ? (long)ti->last_data_sent : 0);
	/* The cause needs the resends and the options: a TCP_INFO without them
	 * names none (a SYN cookie is what no resend would have meant). */
	if (ti && in->bytes && ti->has_retrans && ti->has_options)
		v->cause = sa_empty_cause(in->defer_s, *in->bytes, ti->state, ti->total_retrans,
					  ti->has_total_rto ? ti->total_rto : 0, ti->options);
	/* Who speaks first: data already here means the client; otherwise the
	 * first read or write decides (sa_accept_io). */
	v->client_first = in->bytes && *in->bytes > 0;
	/* Nothing was read from the kernel: the trace line's short form. */
	v->plain = in->tcp && in->defer_s == 0 && !ti && !listener_ti && !in->bytes;
}
