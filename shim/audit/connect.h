/*
 * connect.h: the pure decisions of connect.c (when a connect
 * is complete, what its outcome is, which findings it carries, which
 * histogram bucket it falls in), shared with its cmocka tests. Nothing
 * here makes a system call.
 */
#ifndef SA_AUDIT_CONNECT_H
#define SA_AUDIT_CONNECT_H

#include <sys/types.h>

#include "audit/audit.h"

enum sa_conn_outcome {
	SA_CONN_PENDING = 0,        /* still in the handshake: keep waiting */
	SA_CONN_OK,
	SA_CONN_FAILED,
	SA_CONN_ABANDONED,          /* closed before the handshake finished */
	SA_CONN_INTERRUPTED,        /* a blocking connect returned EINTR (a signal) */
	SA_CONN_DISCONNECT,         /* connect(AF_UNSPEC): a datagram socket's peer dissolved, or a connection aborted */
};

/* The program read SO_ERROR and got so_error; tcp_state is the socket's
 * state right after. *err gets the final errno (0 when unknown). */
enum sa_conn_outcome sa_conn_judge_sockerr(int so_error, int tcp_state, int *err) SA_HIDDEN;
/* The first read/write-family call after connect returned ret (err when
 * ret < 0). */
enum sa_conn_outcome sa_conn_judge_io(ssize_t ret, int err, int tcp_state, int *errout) SA_HIDDEN;
/* connect() called again on a socket whose connect is pending. */
enum sa_conn_outcome sa_conn_judge_reconnect(int ret, int err, int *errout) SA_HIDDEN;

/* Findings for one finished connect. syn_retrans < 0 means unknown (not
 * TCP); defer_s is TCP_DEFER_ACCEPT as read back on the connecting socket;
 * k is the kernel's SYN schedule (NULL: Linux's defaults). */
struct sa_syn_sched;
void sa_conn_findings(struct sa_findings *f, enum sa_conn_outcome o, double connect_ms,
		      int syn_retrans, int defer_s, int slow_ms, int is_unix,
		      const struct sa_syn_sched *k) SA_HIDDEN;

/* The summary histogram: coarse buckets whose edges split the 1, 2 and
 * 3 s SYN-retransmission clusters. */
#include "connect_buckets.h"   /* SA_CONN_NBUCKETS, sa_conn_bucket(), names */

/* One finished connect, as connect.c decided it (the line's facts). */
struct sa_conn_done {
	enum sa_conn_outcome outcome;
	int err;                    /* final errno when failed, 0 if unknown */
	int nonblocking;            /* completed after the call returned */
	int after_interrupt;        /* a blocking connect that went on after EINTR */
	int left_by_jump;           /* a handler siglongjmp()ed out of the blocking call */
	int fast_open;              /* TCP Fast Open: the handshake began at the first send */
	const char *by;             /* what proved the outcome */
	double ms;
	struct sa_tcpinfo ti;       /* read once at completion (TCP only) */
};
/* Writes the connect line (connect_line.c). */
void sa_connect_line(int fd, const struct sa_sock *s, const struct sockaddr *peer, socklen_t plen,
		     const struct sa_conn_done *d, struct sa_findings *f, enum sa_level lvl, int retrans,
		     int defer_s) SA_HIDDEN;
const char *sa_conn_outcome_name(enum sa_conn_outcome o) SA_HIDDEN;
/* SYN_SENT or SYN_RECV: the handshake is still under way. */
int sa_conn_handshaking(int tcp_state) SA_HIDDEN;

/* connect_peers.c: a finished connect counted under its peer (TCP, IPv4
 * and IPv6); the summary's connect_peers and connect_peers_rest. */
void sa_connect_peer_count(const struct sockaddr *peer, socklen_t len, enum sa_conn_outcome o, int retrans) SA_HIDDEN;
void sa_connect_peers_json(json_t *summary) SA_HIDDEN;

#endif
