/*
 * kernel.h: the kernel floor (shim/kernel/): what the kernel stores and
 * how to read it across versions: struct tcp_info, the TCP states, the
 * network namespace's counters, /proc/sys values, the socket option table
 * and its decoders, and the words of a read-back's verdict (the verdict
 * itself is the judge floor's, judge/judge.h). Above line/ (decoders write
 * JSON), below state/.
 *
 * Reads only: nothing here changes kernel state a host may read later
 * (never SO_ERROR, which the kernel clears when it is read).
 */
#ifndef SA_KERNEL_H
#define SA_KERNEL_H

#include "line/line.h"
/* optnames.c (the option table) and readback.c (a read-back verdict's
 * words, this kernel's settings): shared with `sockaudit explain`. It
 * brings the judge floor's header (judge/judge.h): the TCP_INFO facts, what
 * a read-back or a backlog means. */
#include "readback.h"

/* ---- tcpinfo.c: struct tcp_info across kernels ---------------------------- */

/* Fills the judge floor's struct sa_tcpinfo (judge/judge.h) from getsockopt(TCP_INFO). */
int sa_tcpinfo_read(int fd, struct sa_tcpinfo *ti) SA_HIDDEN;
/* Reads a /proc/sys integer; returns -errno when absent. */
int sa_read_sysctl(const char *path, long *out) SA_HIDDEN;

/* identity.c: the init line's netns, nodename and boot_id (where a report
 * may join this process's connects to a listener). */
unsigned long long sa_netns_inode(void) SA_HIDDEN;
int sa_boot_id(char out[37]) SA_HIDDEN;
/* This process's threads now (/proc/self/stat's num_threads); 0 unread. */
int sa_proc_threads(void) SA_HIDDEN;
void sa_identity_fields(json_t *ev) SA_HIDDEN;
/* This kernel's SYN/SYN-ACK retransmission settings, read from /proc/sys
 * once per process on first use (only when a message needs them). */
struct sa_syn_sched;
const struct sa_syn_sched *sa_syn_sched(void) SA_HIDDEN;
/* The socket's TCP_RTO_MAX_MS (6.15+), or fallback where it has none. */
long sa_sock_rto_max_ms(int fd, long fallback) SA_HIDDEN;
/* A deferring listener's real TCP_DEFER_ACCEPT window (ms) and the
 * TCP_RTO_MAX_MS that caps it; on kernels before 6.19 defer_s * 1000 and
 * 120000 without a syscall. */
void sa_defer_window(int fd, int defer_s, long *real_ms, long *rto_max_ms) SA_HIDDEN;

/* ---- netns.c: the namespace's TCP counters --------------------------------- */

enum sa_netns_counter {
	SA_NS_LISTEN_OVERFLOWS,
	SA_NS_LISTEN_DROPS,
	SA_NS_DEFER_ACCEPT_DROP,
	SA_NS_SYNCOOKIES_SENT,
	SA_NS_SYNCOOKIES_RECV,
	SA_NS_SYNCOOKIES_FAILED,
	SA_NS_REQQ_FULL_DO_COOKIES,
	SA_NS_REQQ_FULL_DROP,
	SA_NS_SYN_RETRANS,
	SA_NS_FASTOPEN_PASSIVE,
	SA_NS_RETRANS_SEGS,
	SA_NS_ATTEMPT_FAILS,
	SA_NS_N
};

struct sa_netns_snap {
	int valid;
	uint32_t present;            /* bit i: counter i exists on this kernel */
	uint64_t v[SA_NS_N];
};

/* The counter's name as the kernel spells it ("ListenOverflows"). */
const char *sa_netns_name(int i) SA_HIDDEN;
/* Parses /proc/net/netstat or /proc/net/snmp text (header/value line
 * pairs, "TcpExt: A B" then "TcpExt: 1 2") into snap, adding to what is
 * there. Counters missing from text stay absent. Pure; returns how many
 * counters it found. */
int sa_netns_parse(const char *text, struct sa_netns_snap *snap) SA_HIDDEN;
/* Reads both files now. 0 or -errno. */
int sa_netns_read(struct sa_netns_snap *snap) SA_HIDDEN;
/* b - a for counter i when both have it: 1 and *out set, else 0. */
int sa_netns_delta(const struct sa_netns_snap *a, const struct sa_netns_snap *b, int i,
		   uint64_t *out) SA_HIDDEN;
/* {"ListenOverflows": d, ...}: only counters both snapshots have. */
json_t *sa_netns_delta_json(const struct sa_netns_snap *a, const struct sa_netns_snap *b) SA_HIDDEN;
/* Takes the process's baseline once (its first TCP socket(), listen or
 * accept); cheap after the first call. */
void sa_netns_baseline(void) SA_HIDDEN;
/* The baseline, or NULL when not taken yet. */
const struct sa_netns_snap *sa_netns_base(void) SA_HIDDEN;
/* Whether sa_netns_base() is there, inline (the counted accept). */
extern int sa_netns_base_state SA_HIDDEN;   /* 0 none, 1 being taken, 2 valid */
static inline int sa_netns_base_ready(void)
{
	return __atomic_load_n(&sa_netns_base_state, __ATOMIC_ACQUIRE) == 2;
}
/* The baseline, taken now if it is not yet (an inline load after that). */
static inline void sa_netns_baseline_due(void)
{
	if (!sa_netns_base_ready())
		sa_netns_baseline();
}
/* In a forked child: forget the baseline; the next accept takes a new one. */
void sa_netns_reset(void) SA_HIDDEN;
/* Adds netns_counters (since the baseline) to the summary. */
void sa_netns_summary(json_t *summary) SA_HIDDEN;

/* ---- sockopt.c: option value decoders ------------------------------------ */

/* The option table (struct sa_optdesc, sa_opt_lookup, sa_sol_name) is in
 * optnames.c, declared in common/readback.h for `sockaudit explain` too. */
/* An option value of kind k from buf[0..len) (never beyond len), written as
 * JSON: an int, {"onoff","linger"}, {"sec","usec"}, a string, or {"bytes":
 * n} for anything we cannot name; NULL buf or short len -> null. Returns 0,
 * or -1 when it does not fit. */
int sa_optval_write(struct sa_linebuf *o, enum sa_optkind k, const void *buf, socklen_t len) SA_HIDDEN;
#define sa_line_opt(L, key, kind, buf, len) sa_line_opt_k((L), SA_LINE_K(key), (kind), (buf), (len))
void sa_line_opt_k(struct sa_line *L, const char *k, size_t kn, enum sa_optkind kind,
		   const void *buf, socklen_t len) SA_HIDDEN;

#endif
