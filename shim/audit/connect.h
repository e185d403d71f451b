/*
 * connect.h: the connecting side's files (connect.c, connect_line.c,
 * connect_peers.c) and their tests. Its judges (when a connect is
 * complete, how it ended, which findings it carries) are the judge
 * floor's (judge/judge.h, through audit.h); here are the findings' words,
 * the line, the peers and the histogram bucket.
 */
#ifndef SA_AUDIT_CONNECT_H
#define SA_AUDIT_CONNECT_H

#include <sys/types.h>

#include "audit/audit.h"

/* Adds the findings for one finished connect, as sa_conn_judge (judge.h)
 * decides them, worded (connect_line.c). syn_retrans < 0 means unknown (not
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
/* The outcome's word on the line ("ok", "failed", ...: connect_outcomes.h). */
const char *sa_conn_outcome_name(enum sa_conn_outcome o) SA_HIDDEN;

/* connect_peers.c: a finished connect counted under its peer (TCP, IPv4
 * and IPv6); the summary's connect_peers and connect_peers_rest. */
void sa_connect_peer_count(const struct sockaddr *peer, socklen_t len, enum sa_conn_outcome o, int retrans) SA_HIDDEN;
void sa_connect_peers_json(json_t *summary) SA_HIDDEN;

#endif
