/*
 * readback.c: the kernel's rules for what it keeps of an option value or a
 * backlog, as sentences (common/readback.h). Shared by the shim's read-back
 * audits and `sockaudit explain`, which links this object.
 *
 * Calls nothing of the shim: no sa_real, no log line, no state; the only
 * syscall is uname() in sa_kernel_at_least(). Facts come in, findings go
 * out through the caller's callback.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "readback.h"
#include "syn_schedule.h"

/* Kernel's secs_to_retrans(seconds, TCP_TIMEOUT_INIT/HZ = 1, TCP_RTO_MAX/HZ = 120). */
int sa_defer_rounds(int seconds)
{
	int res = 0, timeout = 1, period;

	if (seconds > 0) {
		period = timeout;
		res = 1;
		while (seconds > period && res < 255) {
			res++;
			timeout <<= 1;
			if (timeout > 120)
				timeout = 120;
			period += timeout;
		}
	}
	return res;
}

/* Kernel's retrans_to_secs(). */
int sa_defer_secs(int rounds)
{
	int period = 0, timeout = 1;

	/* The kernel keeps rounds in a u8 (icsk_accept_queue.rskq_defer_accept),
	 * so never more than 255; past that the loop would overflow period. */
	if (rounds > 255)
		rounds = 255;
	if (rounds > 0) {
		period = timeout;
		while (--rounds) {
			timeout <<= 1;
			if (timeout > 120)
				timeout = 120;
			period += timeout;
		}
	}
	return period;
}

int sa_backlog_effective(int backlog, long somaxconn)
{
	if (somaxconn < 0)
		return backlog;
	return (unsigned)backlog > (unsigned long)somaxconn ? (int)somaxconn : backlog;
}

static int is_buf(int level, int opt)
{
	return level == SOL_SOCKET && (opt == SO_RCVBUF || opt == SO_SNDBUF ||
				       opt == SO_RCVBUFFORCE || opt == SO_SNDBUFFORCE);
}

unsigned sa_opt_needs(int level, int opt)
{
	if (is_buf(level, opt))
		return SA_NEED_BUF_MAX;
	if (level == IPPROTO_TCP && opt == TCP_FASTOPEN)
		return SA_NEED_SOMAXCONN;
	if (level == IPPROTO_TCP && opt == TCP_DEFER_ACCEPT)
		return SA_NEED_DEFER;
	return 0;
}

const char *sa_buf_max_path(int opt)
{
	return opt == SO_RCVBUF || opt == SO_RCVBUFFORCE ? "/proc/sys/net/core/rmem_max"
							 : "/proc/sys/net/core/wmem_max";
}

#define SAY(...) do { char t_[1024]; snprintf(t_, sizeof t_, __VA_ARGS__); say(ctx, code_, t_); } while (0)

static void judge_buf(const struct sa_optfacts *k, sa_say_fn say, void *ctx)
{
	const char *code_ = "option_adjusted";
	int rcv = k->opt == SO_RCVBUF || k->opt == SO_RCVBUFFORCE;
	int forced = k->opt == SO_RCVBUFFORCE || k->opt == SO_SNDBUFFORCE;
	const char *sysctl = rcv ? "net.core.rmem_max" : "net.core.wmem_max";
	const char *autotune = rcv && k->stream
		? " Setting it also turns off the kernel's receive-buffer autotuning on this socket." : "";
	int req = k->req, eff = k->eff;

	if (req > 0 && (long)eff == 2L * req)
		SAY("%s %d reads back as %d: the kernel stores twice the value (sk_setsockopt()) and counts its own per-packet overhead against it, so how much data fits depends on the packet sizes (ss -tm shows the buffer and what is in use).%s",
		    k->name, req, eff, autotune);
	else if (!forced && k->buf_max > 0 && req > k->buf_max && (long)eff == 2L * k->buf_max)
		SAY("%s %d was capped by %s=%ld and then doubled to %d: raise %s (or use %sFORCE with CAP_NET_ADMIN) to get the size you asked for.%s",
		    k->name, req, sysctl, k->buf_max, eff, sysctl, k->name, autotune);
	else if (eff > 2L * (long)req)
		SAY("%s %d is below the kernel's minimum; it reads back as %d.%s", k->name, req, eff, autotune);
	else {
		code_ = "option_differs";
		SAY("%s %d reads back as %d.", k->name, req, eff);
	}
}

void sa_opt_judge_int(const struct sa_optfacts *k, sa_say_fn say, void *ctx)
{
	const char *code_ = "option_adjusted";
	int level = k->level, opt = k->opt, req = k->req, eff = k->eff;

	if (level == IPPROTO_TCP && opt == TCP_DEFER_ACCEPT) {
		if (req > 0 && eff == sa_defer_secs(sa_defer_rounds(req))) {
			int rounds = sa_defer_rounds(req);
			char note[300];

			code_ = "defer_rounded";
			SAY("TCP_DEFER_ACCEPT %d s reads back as %d s: the kernel keeps it as %d SYN-ACK retransmission %s (secs_to_retrans(); resent at 1, 3, 7, 15, 31, 63, 127 s, then every 120 s) and reports the seconds those rounds span, not the value written. A connection whose client stays silent is held for those rounds; the accept line's syn_ack_retrans and queue time show it. Write %d to say what the kernel keeps.%s",
			    req, eff, rounds, sa_plural((unsigned long long)rounds, "round", "rounds"), eff,
			    sa_defer_note(note, sizeof note, eff, k->defer_real_ms, k->defer_rto_max_ms));
		} else if (!(req <= 0 && eff == 0)) {
			code_ = "option_differs";
			SAY("TCP_DEFER_ACCEPT %d reads back as %d.", req, eff);
		}
		return;
	}
	if (is_buf(level, opt)) {
		judge_buf(k, say, ctx);
		return;
	}
	if (level == IPPROTO_TCP && opt == TCP_FASTOPEN && eff < req && k->somaxconn >= 0 && eff == k->somaxconn) {
		SAY("TCP_FASTOPEN queue %d was capped by net.core.somaxconn=%ld.", req, k->somaxconn);
		return;
	}
	if (level == IPPROTO_TCP && opt == TCP_MAXSEG) {
		SAY("TCP_MAXSEG %d reads back as %d: on a connected socket getsockopt reports the MSS in use (tcp_getsockopt() returns mss_cache), not the value set, which shapes only a handshake that follows (tcp_connect_init()). ss -ti (mss:) shows the MSS this connection uses.",
		    req, eff);
		return;
	}
	if (level == IPPROTO_IP && opt == IP_TOS && eff == (req & ~3)) {
		SAY("IP_TOS %d reads back as %d: on TCP sockets the kernel keeps the two ECN bits for itself.", req, eff);
		return;
	}
	if (((level == IPPROTO_IP && opt == IP_TTL) || (level == IPPROTO_IPV6 && opt == IPV6_UNICAST_HOPS)) && req == -1) {
		SAY("%s -1 means the system default, which is %d.", k->name, eff);
		return;
	}
	if (level == IPPROTO_TCP && opt == TCP_WINDOW_CLAMP && eff > req) {
		SAY("TCP_WINDOW_CLAMP %d is below the kernel's minimum; it reads back as %d.", req, eff);
		return;
	}
	code_ = "option_differs";
	SAY("%s %d reads back as %d: the kernel kept a value other than the one asked for, for a reason the shim does not know.",
	    k->name, req, eff);
}

void sa_opt_judge_bool(const char *name, int req, int eff, sa_say_fn say, void *ctx)
{
	const char *code_ = "option_differs";

	if ((req != 0) != (eff != 0))
		SAY("%s %d reads back as %d.", name, req, eff);
}

void sa_opt_judge_linger(int req_on, int req_s, int eff_on, int eff_s, sa_say_fn say, void *ctx)
{
	const char *code_ = "option_differs";

	if ((req_on != 0) != (eff_on != 0) || (req_on && req_s != eff_s))
		SAY("SO_LINGER {%d, %d} reads back as {%d, %d}.", req_on, req_s, eff_on, eff_s);
}

void sa_opt_judge_timeval(const char *name, long long ua, long long ub, sa_say_fn say, void *ctx)
{
	const char *code_ = "option_adjusted";

	if (ua == ub)
		return;
	if (ub > ua && ub - ua < 20000) {
		SAY("%s %lld us reads back as %lld us: the kernel rounds timeouts up to its timer tick.", name, ua, ub);
	} else {
		code_ = "option_differs";
		SAY("%s %lld us reads back as %lld us.", name, ua, ub);
	}
}

void sa_opt_judge_string(const char *name, const char *req, size_t reqlen, const char *eff,
			 size_t efflen, sa_say_fn say, void *ctx)
{
	const char *code_ = "option_differs";

	if (strncmp(req, eff, reqlen < efflen ? reqlen : efflen) != 0 && strnlen(req, reqlen) != 0)
		SAY("%s reads back as a different name.", name);
}

/* The request, what the kernel reports, how it was read, and somaxconn
 * beside it; somaxconn named as the cause only when the effective backlog
 * equals it (__sys_listen_socket() lowers to it). */
void sa_backlog_judge(int backlog, int effective, const char *source, long somaxconn,
		      sa_say_fn say, void *ctx)
{
	const char *code_ = "backlog_clamped";
	const char *how = !strcmp(source, "tcp_info") ? "read back with TCP_INFO" :
			  !strcmp(source, "unix_diag") ? "read back with unix_diag" :
			  "computed from somaxconn, not read back";
	unsigned room = (unsigned)effective + 1;

	/* listen(-1) asks for the maximum: no finding. */
	if (backlog <= 0 || effective < 0 || effective >= backlog)
		return;
	if (somaxconn >= 0 && effective == somaxconn)
		SAY("listen(%d) got a backlog of %d (%s), the value of net.core.somaxconn in this network namespace: the kernel lowers a larger backlog to it, so the accept queue holds at most %u %s (backlog + 1) waiting for accept(). Raise it with sysctl -w net.core.somaxconn=%d in this namespace (each namespace has its own; a new one starts at 4096).",
		    backlog, effective, how, room, sa_plural(room, "connection", "connections"), backlog);
	else
		SAY("listen(%d) got a backlog of %d (%s), so the accept queue holds at most %u %s (backlog + 1) waiting for accept(). net.core.somaxconn here is %ld, so it did not set this value; ss -ltn (Send-Q) shows the backlog the kernel uses.",
		    backlog, effective, how, room, sa_plural(room, "connection", "connections"), somaxconn);
}

int sa_kernel_at_least(int major, int minor)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return 0;
	return a > major || (a == major && b >= minor);
}

void sa_syn_sched_fill(struct sa_syn_sched *k, sa_sysctl_fn rd)
{
	static const struct sa_syn_sched defaults = SA_SYN_SCHED_DEFAULTS;
	long v;

	*k = defaults;
	/* Before 6.5 there is no linear phase: every SYN timeout doubles. */
	k->linear = rd("/proc/sys/net/ipv4/tcp_syn_linear_timeouts", &v) == 0 ? v : 0;
	if (rd("/proc/sys/net/ipv4/tcp_syn_retries", &v) == 0)
		k->syn_retries = v;
	if (rd("/proc/sys/net/ipv4/tcp_synack_retries", &v) == 0)
		k->synack_retries = v;
	if (rd("/proc/sys/net/ipv4/tcp_rto_max_ms", &v) == 0 && v >= 1000)
		k->rto_max_ms = v;
	/* "tcp: Apply max RTO to non-TFO SYN+ACK." (6.19): tcp_reqsk_timeout()
	 * caps by the listener's rto_max; before, the constant 120 s (measured
	 * on 6.18.44: TCP_DEFER_ACCEPT 7 s with TCP_RTO_MAX_MS=1000 took 7.2 s). */
	k->synack_capped = sa_kernel_at_least(6, 19);
	if (rd("/proc/sys/net/ipv4/tcp_abort_on_overflow", &v) == 0)
		k->abort_on_overflow = v;
}
