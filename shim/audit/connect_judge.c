/*
 * connect_judge.c: the pure decisions of the connecting side (connect.h):
 * when a connect is complete and how it ended, from what the program saw
 * and the socket's TCP state, and which findings a finished connect
 * carries, worded from what its line measured. No system call: cmocka
 * tests call these directly.
 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
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

int sa_conn_handshaking(int tcp_state)
{
	return tcp_state == SA_TCP_SYN_SENT || tcp_state == SA_TCP_SYN_RECV;
}

enum sa_conn_outcome sa_conn_judge_sockerr(int so_error, int tcp_state, int *err)
{
	*err = so_error;
	/* The program got the error, so for it the connect failed. */
	if (so_error != 0)
		return SA_CONN_FAILED;
	/* An event loop may ask before the handshake is done (a spurious
	 * wakeup, or a poll on another event): 0 then means "no error yet". */
	if (sa_conn_handshaking(tcp_state))
		return SA_CONN_PENDING;
	/* Closed with no error left: something already consumed it. */
	if (tcp_state == SA_TCP_CLOSE)
		return SA_CONN_FAILED;
	return SA_CONN_OK;
}

enum sa_conn_outcome sa_conn_judge_io(ssize_t ret, int err, int tcp_state, int *errout)
{
	*errout = 0;
	/* tcp_sendmsg/tcp_recvmsg on a SYN_SENT socket wait or say EAGAIN. */
	if (ret < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR ||
			err == EINPROGRESS || err == EALREADY))
		return SA_CONN_PENDING;
	/* A write that succeeds during the handshake (TCP Fast Open queues
	 * data with the SYN) proves nothing yet. */
	if (sa_conn_handshaking(tcp_state))
		return SA_CONN_PENDING;
	if (ret >= 0)
		return SA_CONN_OK;
	/* An error on a socket that did get established (EFAULT, EMSGSIZE...)
	 * is about the call, not the connect. */
	if (tcp_state != SA_TCP_UNKNOWN && tcp_state != SA_TCP_CLOSE)
		return SA_CONN_OK;
	*errout = err;
	return SA_CONN_FAILED;
}

enum sa_conn_outcome sa_conn_judge_reconnect(int ret, int err, int *errout)
{
	*errout = 0;
	/* __inet_stream_connect(): 0 once the handshake finished (first call
	 * after completion), EISCONN after that, EALREADY/EINPROGRESS while
	 * still in SYN_SENT, the socket's error once it failed. */
	if (ret == 0 || err == EISCONN)
		return SA_CONN_OK;
	if (err == EALREADY || err == EINPROGRESS || err == EINTR)
		return SA_CONN_PENDING;
	*errout = err;
	return SA_CONN_FAILED;
}

void sa_conn_findings(struct sa_findings *f, enum sa_conn_outcome o, double connect_ms,
		      int syn_retrans, int defer_s, int slow_ms, int is_unix,
		      const struct sa_syn_sched *k)
{
	static const struct sa_syn_sched defaults = SA_SYN_SCHED_DEFAULTS;

	if (!k)
		k = &defaults;
	if (syn_retrans > 0)
		sa_findings_add(f, "syn_retransmitted",
				SA_MSG_SYN_RETRANSMITTED,
				syn_retrans, sa_plural((unsigned)syn_retrans, "retransmission", "retransmissions"),
				o == SA_CONN_FAILED ? "failed" : o == SA_CONN_ABANDONED ? "was given up" :
				o == SA_CONN_INTERRUPTED ? "was interrupted by a signal" : "completed",
				connect_ms, sa_syn_retrans_at_ms(syn_retrans, k->linear, k->rto_max_ms) / 1000.0);
	if (connect_ms >= slow_ms) {
		if (o == SA_CONN_ABANDONED)
			sa_findings_add(f, "slow_connect",
					SA_MSG_SLOW_CONNECT_ABANDONED,
					connect_ms, slow_ms);
		else if (o == SA_CONN_INTERRUPTED)
			sa_findings_add(f, "slow_connect",
					SA_MSG_SLOW_CONNECT_INTERRUPTED,
					connect_ms, slow_ms);
		else
			sa_findings_add(f, "slow_connect", SA_MSG_SLOW_CONNECT,
					connect_ms, slow_ms,
					is_unix ? SA_MSG_SLOW_CONNECT_UNIX_TAIL :
					syn_retrans == 0 ? SA_MSG_SLOW_CONNECT_NO_SYN_DROP_TAIL : "");
	}
	if (defer_s > 0)
		sa_findings_add(f, "defer_on_client_socket",
				SA_MSG_DEFER_ON_CLIENT_SOCKET,
				defer_s);
}

