/*
 * syn_schedule.h: when this kernel resends a SYN or a SYN-ACK, so a message
 * can turn "3 SYNs were retransmitted" into "resent at 1, 2 and 3 s", and
 * the real length of a TCP_DEFER_ACCEPT window; plus the one plural helper
 * every message uses ("1 connection", "2 connections"). Pure: no syscalls,
 * no state; the callers read the sysctls (once per process) and pass them in.
 *
 * The kernel's rules, with the function that applies each:
 * - A client's SYN: the first timeout is TCP_TIMEOUT_INIT (1 s). After the
 *   k-th retransmission tcp_retransmit_timer() keeps the RTO while
 *   total_rto <= net.ipv4.tcp_syn_linear_timeouts (6.5+; 0 before, i.e. it
 *   always doubles), else doubles it, capped by tcp_rto_max(sk): the socket's
 *   TCP_RTO_MAX_MS (6.15+), net.ipv4.tcp_rto_max_ms by default, 120 s before.
 *   tcp_write_timeout() allows tcp_syn_retries + tcp_syn_linear_timeouts
 *   retransmissions in SYN_SENT. Defaults (4, 6): 1, 2, 3, 4, 5, 7, 11, 19, 35,
 *   67 s, and the connect fails at 131 s.
 * - A server's SYN-ACK: tcp_reqsk_timeout() is 1 s << num_timeout, capped at
 *   120 s (and by the listener's TCP_RTO_MAX_MS on 6.19+): 1, 3, 7, 15, 31 s.
 * - TCP_DEFER_ACCEPT keeps R SYN-ACK rounds (secs_to_retrans(), always with
 *   the 120 s constant); the bare ACK waits until the R-th timeout, so the
 *   window is the same sum over R rounds, which getsockopt reports with the
 *   constant cap whatever the listener's TCP_RTO_MAX_MS. From 6.19 the real
 *   timeouts are capped by it ("tcp: Apply max RTO to non-TFO SYN+ACK"), so
 *   the real window can be shorter than the reported seconds.
 */
#ifndef SA_SYN_SCHEDULE_H
#define SA_SYN_SCHEDULE_H

#include <stdio.h>
#include "finding_text.h"   /* SA_MSG_DEFER_REAL_WINDOW_TAIL */

#define SA_SYN_RTO_INIT_MS 1000L
#define SA_RTO_MAX_DEFAULT_MS 120000L

/* The kernel's settings behind the schedules; -1 where the kernel has none
 * (tcp_syn_linear_timeouts before 6.5, tcp_rto_max_ms before 6.15). */
struct sa_syn_sched {
	long linear;          /* net.ipv4.tcp_syn_linear_timeouts */
	long syn_retries;     /* net.ipv4.tcp_syn_retries */
	long synack_retries;  /* net.ipv4.tcp_synack_retries */
	long rto_max_ms;      /* net.ipv4.tcp_rto_max_ms, or the socket's TCP_RTO_MAX_MS */
	int synack_capped;    /* 1 when the listener's TCP_RTO_MAX_MS caps SYN-ACK timers (6.19+) */
	long abort_on_overflow; /* net.ipv4.tcp_abort_on_overflow */
};
/* Linux's defaults, for when /proc/sys cannot be read. */
#define SA_SYN_SCHED_DEFAULTS { 4, 6, 5, SA_RTO_MAX_DEFAULT_MS, 0, 0 }

/* ms after the first SYN at which retransmission n (1-based) leaves; 0 for n <= 0. */
static inline long sa_syn_retrans_at_ms(int n, long linear, long rto_max_ms)
{
	long rto = SA_SYN_RTO_INIT_MS, t = 0;
	int k;

	if (rto_max_ms < SA_SYN_RTO_INIT_MS)
		rto_max_ms = SA_RTO_MAX_DEFAULT_MS;
	if (linear < 0)
		linear = 0;
	for (k = 1; k <= n; k++) {
		t += rto;
		/* After retransmission k, total_rto == k. */
		if (k > linear)
			rto = rto * 2 > rto_max_ms ? rto_max_ms : rto * 2;
	}
	return t;
}

/* ms after the first SYN at which a connect that got no answer fails. */
static inline long sa_syn_give_up_ms(long linear, long retries, long rto_max_ms)
{
	long max = retries + (linear > 0 ? linear : 0);

	return sa_syn_retrans_at_ms((int)max + 1, linear, rto_max_ms);
}

/* ms after the first SYN-ACK at which SYN-ACK retransmission n leaves. */
static inline long sa_synack_retrans_at_ms(int n, long rto_max_ms)
{
	long t = 0, step = SA_SYN_RTO_INIT_MS;
	int k;

	if (rto_max_ms < SA_SYN_RTO_INIT_MS)
		rto_max_ms = SA_RTO_MAX_DEFAULT_MS;
	for (k = 1; k <= n; k++) {
		t += step < rto_max_ms ? step : rto_max_ms;
		if (step < rto_max_ms)
			step *= 2;
	}
	return t;
}

/* The TCP_DEFER_ACCEPT window in ms for R rounds with a SYN-ACK cap. */
static inline long sa_defer_window_ms(int rounds, long rto_max_ms)
{
	return sa_synack_retrans_at_ms(rounds, rto_max_ms);
}

/* The wall-clock TCP_DEFER_ACCEPT window in ms of a listener that keeps
 * ROUNDS rounds: each SYN-ACK timeout capped by the listener's
 * TCP_RTO_MAX_MS where the kernel applies it (synack_capped, 6.19+), by
 * the 120 s constant before, where it equals the seconds getsockopt
 * reports (retrans_to_secs()). */
static inline long sa_defer_real_ms(int rounds, long rto_max_ms, int synack_capped)
{
	return sa_defer_window_ms(rounds, synack_capped ? rto_max_ms : SA_RTO_MAX_DEFAULT_MS);
}

/* "7" or "2.5": ms as seconds, one decimal where needed. Returns buf. */
static inline const char *sa_secs_str(char *buf, size_t len, long ms)
{
	if (ms % 1000)
		snprintf(buf, len, "%.1f", ms / 1000.0);
	else
		snprintf(buf, len, "%ld", ms / 1000);
	return buf;
}

/* The sentence a deferral message appends when the real window (real_ms)
 * differs from the DEFER_S seconds getsockopt(TCP_DEFER_ACCEPT) reports,
 * else "" (every kernel before 6.19, and any listener whose TCP_RTO_MAX_MS
 * does not shorten its rounds). Returns buf. */
static inline const char *sa_defer_note(char *buf, size_t len, int defer_s, long real_ms, long rto_max_ms)
{
	char s[24];

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (defer_s <= 0 || real_ms <= 0 || real_ms == defer_s * 1000L)
		return buf;
	snprintf(buf, len, SA_MSG_DEFER_REAL_WINDOW_TAIL, sa_secs_str(s, sizeof s, real_ms), rto_max_ms);
	return buf;
}

/* "1, 2, 3 s": the first n SYN retransmission times, seconds with one
 * decimal where needed, into buf. Returns buf. */
static inline const char *sa_syn_schedule_str(char *buf, size_t len, int n, long linear, long rto_max_ms)
{
	size_t off = 0;
	int k, w;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (k = 1; k <= n && off < len; k++) {
		long ms = sa_syn_retrans_at_ms(k, linear, rto_max_ms);

		if (ms % 1000)
			w = snprintf(buf + off, len - off, "%s%.1f", k > 1 ? ", " : "", ms / 1000.0);
		else
			w = snprintf(buf + off, len - off, "%s%ld", k > 1 ? ", " : "", ms / 1000);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	if (off < len)
		snprintf(buf + off, len - off, " s");
	return buf;
}

/* "connection" or "connections" for a count: every message's plurals. */
static inline const char *sa_plural(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

#endif
