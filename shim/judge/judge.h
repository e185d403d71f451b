/*
 * judge.h: the judge floor (shim/judge/), the lowest of the shim: what a
 * fact means. Each judge takes the facts an audit gathered (a struct or a
 * few numbers) and returns a verdict (a code, flags and the numbers the
 * words need): accept_judge.c (one accepted connection, and which way it
 * goes), connect_judge.c (when a connect is complete, how it ended, which
 * findings it carries), sockopt_judge.c (what a setsockopt's read-back or
 * a listen backlog means, and the kernel's TCP_DEFER_ACCEPT arithmetic).
 *
 * Calls nothing of the shim and makes no system call: no sa_real, no
 * state, no line, no words (the audits word a verdict with the templates
 * of common/finding_text.h). A sysctl a rule needs comes through the
 * facts' callback. So cmocka tests call every judge as a table of cases,
 * and the CLI links the same objects (`sockaudit explain`). Includes only
 * libc and common/ headers: every floor above includes this one.
 */
#ifndef SA_JUDGE_H
#define SA_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Hidden in libsockaudit.so (no export), a plain symbol in the CLI. */
#define SA_JUDGE_HIDDEN __attribute__((visibility("hidden")))

/* ---- the facts TCP_INFO gives (read by kernel/tcpinfo.c) ----------------- */

/* TCP states as tcp_info reports them (include/net/tcp_states.h). */
enum sa_tcp_state {
	SA_TCP_UNKNOWN = -1,        /* not TCP, or TCP_INFO unreadable */
	SA_TCP_ESTABLISHED = 1,
	SA_TCP_SYN_SENT = 2,
	SA_TCP_SYN_RECV = 3,
	SA_TCP_CLOSE = 7,
	SA_TCP_CLOSE_WAIT = 8,
	SA_TCP_LISTEN = 10,
};

/* The kernel copies min(optlen, its struct tcp_info) and says how much: an
 * older kernel fills less than 104 bytes, qemu-user 4 (the state and three
 * counters). So the facts come in groups, each set only when the length
 * covers all of its fields, with a has_ flag that says so; a fact from a
 * group that did not come is null or unknown where it is used, never its
 * 0. A TCP_INFO without even the state is a failed read. */
struct sa_tcpinfo {
	int valid;                  /* getsockopt(TCP_INFO) succeeded, with the state */
	unsigned len;               /* bytes the kernel filled */
	uint8_t state;              /* enum sa_tcp_state: byte 0, always there when valid */
	uint8_t options;            /* TCPI_OPT_*: byte 5 */
	int has_options;
	uint32_t unacked, sacked;   /* on a listener: queue length, backlog (to byte 32) */
	int has_queue;
	uint32_t last_data_sent, last_data_recv; /* ms (to byte 56) */
	int has_times;
	uint32_t total_retrans;     /* to byte 104 */
	int has_retrans;
	uint32_t data_segs_out, data_segs_in; /* 0 when has_data_segs is 0 */
	int has_data_segs;
	uint64_t bytes_received;
	int has_bytes_received;     /* 4.1+ */
	uint32_t total_rto;          /* 6.7+, else 0 */
	int has_total_rto;
};

/* A listener's TCP_INFO that holds its queue: the state and the group. */
static inline bool sa_tcpinfo_listener_queue(const struct sa_tcpinfo *ti)
{
	return ti->state == SA_TCP_LISTEN && ti->has_queue;
}

/* ---- accept_judge.c: what one accept's facts mean ------------------------ */

enum sa_empty_cause { SA_EMPTY_NONE, SA_EMPTY_DEFER_EXPIRED, SA_EMPTY_SYNCOOKIE };
/* Why a deferred listener handed over a child with no data (kernel facts
 * Q5): a SYN-ACK was resent -> the window expired; none and not Fast Open
 * -> SYN cookies skipped the gate. */
enum sa_empty_cause sa_empty_cause(int defer_s, long bytes_ready, int state,
				   uint32_t total_retrans, uint32_t total_rto, uint8_t options) SA_JUDGE_HIDDEN;
/* Whether the accept queue was at capacity when accept() ran, from the
 * listener's queue length read right after. */
int sa_queue_was_full(int backlog, uint32_t len_after, long queue_ms) SA_JUDGE_HIDDEN;
/* The bytes waiting on a child nobody read from yet, from its TCP_INFO;
 * 0 when TCP_INFO cannot say (then FIONREAD can). */
int sa_accept_bytes_from_tcpinfo(const struct sa_tcpinfo *ti, int *bytes) SA_JUDGE_HIDDEN;

/* What the full audit read about one accepted connection. */
struct sa_accept_facts {
	int tcp, defer_s;
	const struct sa_tcpinfo *ti;     /* the child's; NULL: not read */
	const struct sa_tcpinfo *listener_ti;    /* the listener's, with its queue; NULL: not read */
	const int *bytes;                /* bytes waiting; NULL: not known */
	int last_backlog;                /* the listener's last read-back; -1: none */
};
/* What they mean. */
struct sa_accept_verdict {
	enum sa_empty_cause cause;       /* why it arrived empty on a deferred listener */
	int full;                        /* the accept queue was at capacity */
	int backlog;                     /* effective: the listener's TCP_INFO, else last_backlog */
	int with_data;                   /* 1 data waiting, 0 none, -1 not known */
	int client_first;                /* the client spoke first (data already here) */
	int plain;                       /* nothing was read from the kernel */
};
void sa_accept_judge(const struct sa_accept_facts *in, struct sa_accept_verdict *v) SA_JUDGE_HIDDEN;

/* ---- which way an accept goes: the count-only rule, written once ---------- */

/* The TCP_INFO sample (sa_accept_route): one accept in SA_ACCEPT_SAMPLE_EVERY (by count, so the cost per request
 * does not grow with the request rate: 2 getsockopt / 128 = 0.016 syscalls
 * per accept, and the sampled accept's full path, ~1,300 instructions, is
 * ~10 per accept), and any accept 100 ms or more after the last sample, so
 * a quiet listener is sampled at every accept (10 a second at most). */
#define SA_ACCEPT_SAMPLE_EVERY 128
#define SA_ACCEPT_SAMPLE_EVERY_TRACE 16   /* trace: every accept has a line, 1 in 16 its TCP_INFO */
#define SA_ACCEPT_SAMPLE_NS 100000000ull

#define SA_WATCH_FIRST 64
/* The same connections as the TCP_INFO sample (accepts % 128 == 0): one fd
 * entry serves both, and a watched connection costs ~600 instructions. */
#define SA_WATCH_EVERY SA_ACCEPT_SAMPLE_EVERY

/* What decides how much work one accepted connection gets. Gathered by the
 * inline fast path (sa_accept_counted in audit/accept.h, from the
 * listener's fd entry, before any call) and by sa_accept_audit (from the
 * entry it made or found); judged by sa_accept_route, the one place the
 * rule is written. */
struct sa_accept_gate {
	bool tcp;                   /* the listener is a TCP socket */
	bool listener;              /* it has listener state (struct sa_listener) */
	bool deferred;              /* TCP_DEFER_ACCEPT is set on it */
	bool trace;                 /* every accept has a line */
	bool sample_due;            /* 100 ms since the listener's last TCP_INFO sample, or sampled already */
	bool child_known;           /* an fd entry holds the new connection's number */
	bool netns_ready;           /* the namespace baseline is taken */
	uint64_t accepts;           /* the listener's accepts before this one */
};
enum sa_accept_route {
	SA_ROUTE_COUNT,          /* counted and timed only: no fd entry, no line, no syscall */
	SA_ROUTE_TRACE_PLAIN,    /* trace, nothing to read from the kernel: entry, watch, line */
	SA_ROUTE_SAMPLE,         /* the full audit, with the TCP_INFO sample */
	SA_ROUTE_FULL,           /* the full audit, off the sample */
};
/* Pure. A TCP connection is sampled on its listener's every 128th accept
 * (16th at trace), 100 ms after the last sample, or when it has no listener
 * state; off the sample, one from a plain listener (TCP, listener state,
 * not deferred) is only counted below trace unless it is watched for who
 * speaks first (the listener's first SA_WATCH_FIRST), its number already
 * has an entry (a close we did not see), or the baseline is missing; at
 * trace it gets the plain line. Everything else takes the full audit.
 * Inline: the accept wrapper runs it on every accept. */
static inline __attribute__((always_inline)) enum sa_accept_route sa_accept_route(const struct sa_accept_gate *g)
{
	if (!g->tcp)
		return SA_ROUTE_FULL;
	if (!g->listener || g->sample_due ||
	    g->accepts % (g->trace ? SA_ACCEPT_SAMPLE_EVERY_TRACE : SA_ACCEPT_SAMPLE_EVERY) == 0)
		return SA_ROUTE_SAMPLE;
	if (g->deferred)
		return SA_ROUTE_FULL;
	if (g->trace)
		return SA_ROUTE_TRACE_PLAIN;
	if (g->accepts < SA_WATCH_FIRST || g->child_known || !g->netns_ready)
		return SA_ROUTE_FULL;
	return SA_ROUTE_COUNT;
}

/* ---- connect_judge.c: when a connect is complete, and how it ended ------- */

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
enum sa_conn_outcome sa_conn_judge_sockerr(int so_error, int tcp_state, int *err) SA_JUDGE_HIDDEN;
/* The first read/write-family call after connect returned ret (err when
 * ret < 0). */
enum sa_conn_outcome sa_conn_judge_io(ssize_t ret, int err, int tcp_state, int *errout) SA_JUDGE_HIDDEN;
/* connect() called again on a socket whose connect is pending. */
enum sa_conn_outcome sa_conn_judge_reconnect(int ret, int err, int *errout) SA_JUDGE_HIDDEN;
/* SYN_SENT or SYN_RECV: the handshake is still under way. */
int sa_conn_handshaking(int tcp_state) SA_JUDGE_HIDDEN;

/* What one finished connect measured, for its findings. */
struct sa_syn_sched;
struct sa_conn_facts {
	enum sa_conn_outcome outcome;
	double ms;                           /* how long the connect took */
	int syn_retrans;                     /* SYNs resent; < 0: unknown (not TCP) */
	int defer_s;                         /* TCP_DEFER_ACCEPT as read back on the connecting socket */
	int slow_ms;                         /* SOCKAUDIT_SLOW_CONNECT_MS */
	int is_unix;                         /* an AF_UNIX connect */
	const struct sa_syn_sched *sched;    /* the kernel's SYN schedule; NULL: Linux's defaults */
};
/* Which slow_connect sentence, and which tail on the plain one. */
enum sa_conn_slow {
	SA_CONN_SLOW_NONE,                   /* faster than slow_ms */
	SA_CONN_SLOW_DONE,                   /* SA_MSG_SLOW_CONNECT */
	SA_CONN_SLOW_ABANDONED,              /* SA_MSG_SLOW_CONNECT_ABANDONED */
	SA_CONN_SLOW_INTERRUPTED,            /* SA_MSG_SLOW_CONNECT_INTERRUPTED */
};
enum sa_conn_slow_tail {
	SA_CONN_TAIL_NONE,
	SA_CONN_TAIL_UNIX,                   /* SA_MSG_SLOW_CONNECT_UNIX_TAIL */
	SA_CONN_TAIL_NO_SYN_DROP,            /* SA_MSG_SLOW_CONNECT_NO_SYN_DROP_TAIL */
};
/* The findings a finished connect carries, and the numbers their words need. */
struct sa_conn_verdict {
	bool syn_retransmitted;              /* syn_retransmitted */
	double syn_last_due_s;               /* when the schedule sent the last of them (s) */
	enum sa_conn_slow slow;              /* slow_connect */
	enum sa_conn_slow_tail slow_tail;
	bool defer_on_client;                /* defer_on_client_socket */
};
void sa_conn_judge(const struct sa_conn_facts *in, struct sa_conn_verdict *v) SA_JUDGE_HIDDEN;

/* ---- sockopt_judge.c: what a read-back or a backlog means ---------------- */

/* How the shim decodes an option's value (the option table, kernel/optnames.c). */
enum sa_optkind {
	SA_OPT_INT, SA_OPT_BOOL, SA_OPT_LINGER, SA_OPT_TIMEVAL, SA_OPT_STRING, SA_OPT_OPAQUE
};
/* Reads a /proc/sys integer into *out: 0 or -errno. */
typedef int (*sa_sysctl_fn)(const char *path, long *out);

/* The sysctls the judge reads for an option, beyond the two values (the
 * CLI reads them up front to show them beside its answer). */
#define SA_NEED_BUF_MAX   1u   /* net.core.rmem_max / wmem_max */
#define SA_NEED_SOMAXCONN 2u   /* net.core.somaxconn (TCP_FASTOPEN's queue) */
#define SA_NEED_DEFER     4u   /* the real deferral window (sa_defer_window) */
unsigned sa_opt_needs(int level, int opt) SA_JUDGE_HIDDEN;
/* The /proc/sys path of the buffer cap for SO_RCVBUF(FORCE) / SO_SNDBUF(FORCE). */
const char *sa_buf_max_path(int opt) SA_JUDGE_HIDDEN;

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
	int quickack;                      /* TCP_QUICKACK: the shim's quickack.c says what it means */
	const void *req; socklen_t reqlen; /* what was asked; NULL: the call failed */
	const void *eff; socklen_t efflen; /* what was read back; NULL: not read */
	/* Reads a sysctl (0, or -errno), only when the comparison needs it:
	 * sa_read_sysctl in the shim, the CLI's own, or a test's table. */
	sa_sysctl_fn read_sysctl;
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
enum sa_opt_diff sa_sockopt_judge_int(const struct sa_opt_facts *in, struct sa_opt_verdict *v) SA_JUDGE_HIDDEN;
/* SO_LINGER, timeouts and names. */
void sa_sockopt_judge_other(const struct sa_opt_facts *in, struct sa_opt_verdict *v) SA_JUDGE_HIDDEN;
/* What a read-back means (v->diff, and the values it was judged on). Pure;
 * its common case, an int or bool that reads back as asked, inline: the
 * shim asks on every setsockopt it reads back. */
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

/* What listen() got: the backlog asked, the one the kernel reports (-1:
 * unknown) and how it was read ("tcp_info", "unix_diag" or "computed"),
 * and the namespace's somaxconn (-1: unread). */
struct sa_backlog_facts {
	int backlog, effective;
	const char *source;
	long somaxconn;
};
enum sa_backlog_verdict {
	SA_BACKLOG_KEPT,              /* nothing to say (listen(-1) asks for the maximum) */
	SA_BACKLOG_CLAMPED_SOMAXCONN, /* backlog_clamped: lowered to somaxconn */
	SA_BACKLOG_CLAMPED_OTHER,     /* backlog_clamped: smaller, somaxconn not the cause */
};
enum sa_backlog_verdict sa_backlog_judge(const struct sa_backlog_facts *in) SA_JUDGE_HIDDEN;

/* TCP_DEFER_ACCEPT: the kernel's own secs_to_retrans() and
 * retrans_to_secs() (1 s initial timeout, 120 s maximum). */
int sa_defer_rounds(int seconds) SA_JUDGE_HIDDEN;
int sa_defer_secs(int rounds) SA_JUDGE_HIDDEN;

/* The largest backlog a request is taken at its word for. Above it (up to
 * INT_MAX: systemd's and others' "as many as allowed") it means the most
 * allowed, as -1 does, and the kernel lowering it to somaxconn is what was
 * asked: sixteen times somaxconn's default (4096), no queue anyone sizes. */
#define SA_BACKLOG_MOST 65535

/* __sys_listen_socket(): (unsigned)backlog > somaxconn -> somaxconn. */
int sa_backlog_effective(int backlog, long somaxconn) SA_JUDGE_HIDDEN;

#endif
