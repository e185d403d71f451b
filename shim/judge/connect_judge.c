/*
 * connect_judge.c: the pure decisions of the connecting side (judge/judge.h):
 * when a connect is complete and how it ended, from what the program saw
 * and the socket's TCP state, and which findings a finished connect
 * carries, with the numbers their words need. The words themselves are
 * the audit's (shim/audit/connect_line.c). No system call: cmocka tests
 * call these directly.
 */
#include <errno.h>
#include <string.h>

#include "judge/judge.h"
#include "syn_schedule.h"

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

void sa_conn_judge(const struct sa_conn_facts *in, struct sa_conn_verdict *v)
{
	static const struct sa_syn_sched defaults = SA_SYN_SCHED_DEFAULTS;
	const struct sa_syn_sched *k = in->sched ? in->sched : &defaults;
	enum sa_conn_outcome o = in->outcome;

	memset(v, 0, sizeof *v);
	if (in->syn_retrans > 0) {
		v->syn_retransmitted = true;
		v->syn_last_due_s = sa_syn_retrans_at_ms(in->syn_retrans, k->linear, k->rto_max_ms) / 1000.0;
	}
	if (in->ms >= in->slow_ms) {
		if (o == SA_CONN_ABANDONED)
			v->slow = SA_CONN_SLOW_ABANDONED;
		else if (o == SA_CONN_INTERRUPTED)
			v->slow = SA_CONN_SLOW_INTERRUPTED;
		else
			v->slow = SA_CONN_SLOW_DONE;
		/* A unix socket has no SYN to drop; a TCP connect that resent
		 * none was slow for another reason. */
		if (v->slow == SA_CONN_SLOW_DONE)
			v->slow_tail = in->is_unix ? SA_CONN_TAIL_UNIX :
				       in->syn_retrans == 0 ? SA_CONN_TAIL_NO_SYN_DROP : SA_CONN_TAIL_NONE;
	}
	v->defer_on_client = in->defer_s > 0;
}
