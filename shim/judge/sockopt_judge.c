/*
 * sockopt_judge.c: what the kernel's answer to a setsockopt or a listen
 * means (judge/judge.h): a read-back unlike the value asked, with the
 * kernel function behind each adjustment, a backlog smaller than the one
 * asked, and the kernel's TCP_DEFER_ACCEPT and backlog arithmetic they
 * rest on. Pure: facts in, a verdict code out, no system call (a sysctl
 * a rule needs is read through the facts' callback). The shim's audits
 * and `sockaudit explain` both judge here, and word the verdict with
 * kernel/readback.c; cmocka tests it as tables (tests/unit/test_sockopt.c,
 * test_readback.c). Whether a call is read back at all, and whether it
 * gets a line, is the audit's business (shim/audit/sockopt.h).
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/time.h>

#include "judge/judge.h"

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

static inline const char *buf_max_path(int opt)
{
	return opt == SO_RCVBUF || opt == SO_RCVBUFFORCE ? "/proc/sys/net/core/rmem_max"
							 : "/proc/sys/net/core/wmem_max";
}

const char *sa_buf_max_path(int opt)
{
	return buf_max_path(opt);
}

/* A buffer size: sk_setsockopt() stores twice the value, capped by
 * [rw]mem_max unless forced, and never below SOCK_MIN_[RS]CVBUF. */
static enum sa_opt_diff judge_buf(const struct sa_opt_facts *in, struct sa_opt_verdict *v)
{
	int forced = in->opt == SO_RCVBUFFORCE || in->opt == SO_SNDBUFFORCE;
	long max = 0;
	int req = v->req_i, eff = v->eff_i;

	in->read_sysctl(buf_max_path(in->opt), &max);
	v->sysctl = max;
	if (req > 0 && (long)eff == 2L * req)
		return SA_OPTD_BUF_DOUBLED;
	if (!forced && max > 0 && req > max && (long)eff == 2L * max)
		return SA_OPTD_BUF_CAPPED;
	if (eff > 2L * (long)req)
		return SA_OPTD_BELOW_MIN;
	return SA_OPTD_DIFFERS;
}

/* An int-valued option whose read-back differs. */
static enum sa_opt_diff judge_int(const struct sa_opt_facts *in, struct sa_opt_verdict *v)
{
	int level = in->level, opt = in->opt, req = v->req_i, eff = v->eff_i;
	long n = 0;

	if (level == IPPROTO_TCP && opt == TCP_DEFER_ACCEPT) {
		/* secs_to_retrans(): kept as SYN-ACK rounds, read back as the
		 * seconds those rounds span. */
		if (req > 0 && eff == sa_defer_secs(sa_defer_rounds(req))) {
			v->rounds = sa_defer_rounds(req);
			return SA_OPTD_DEFER_ROUNDED;
		}
		return req <= 0 && eff == 0 ? SA_OPTD_SAME : SA_OPTD_DIFFERS;
	}
	if (is_buf(level, opt))
		return judge_buf(in, v);
	if (level == IPPROTO_TCP && opt == TCP_FASTOPEN && eff < req &&
	    in->read_sysctl("/proc/sys/net/core/somaxconn", &n) == 0 && eff == n) {
		v->sysctl = n;
		return SA_OPTD_FASTOPEN_CAPPED;
	}
	if (level == IPPROTO_TCP && opt == TCP_MAXSEG)
		return SA_OPTD_MAXSEG;
	if (level == IPPROTO_IP && opt == IP_TOS && eff == (req & ~3))
		return SA_OPTD_TOS_ECN;
	if (((level == IPPROTO_IP && opt == IP_TTL) || (level == IPPROTO_IPV6 && opt == IPV6_UNICAST_HOPS)) &&
	    req == -1)
		return SA_OPTD_HOPS_DEFAULT;
	if (level == IPPROTO_TCP && opt == TCP_WINDOW_CLAMP && eff > req)
		return SA_OPTD_CLAMP_MIN;
	return SA_OPTD_DIFFERS_UNEXPLAINED;
}

static enum sa_opt_diff judge_timeval(const struct sa_opt_facts *in, struct sa_opt_verdict *v)
{
	struct timeval a, b;

	memcpy(&a, in->req, sizeof a);
	memcpy(&b, in->eff, sizeof b);
	v->req_us = (long long)a.tv_sec * 1000000 + a.tv_usec;
	v->eff_us = (long long)b.tv_sec * 1000000 + b.tv_usec;
	if (v->req_us == v->eff_us)
		return SA_OPTD_SAME;
	/* The kernel rounds timeouts up to its timer tick. */
	if (v->eff_us > v->req_us && v->eff_us - v->req_us < 20000)
		return SA_OPTD_TIMER_TICK;
	return SA_OPTD_TIMEOUT;
}

static enum sa_opt_diff judge_linger(const struct sa_opt_facts *in, struct sa_opt_verdict *v)
{
	struct linger a, b;

	memcpy(&a, in->req, sizeof a);
	memcpy(&b, in->eff, sizeof b);
	v->linger[0] = a.l_onoff;
	v->linger[1] = a.l_linger;
	v->linger[2] = b.l_onoff;
	v->linger[3] = b.l_linger;
	if ((a.l_onoff != 0) != (b.l_onoff != 0) || (a.l_onoff && a.l_linger != b.l_linger))
		return SA_OPTD_LINGER;
	return SA_OPTD_SAME;
}

enum sa_opt_diff sa_sockopt_judge_int(const struct sa_opt_facts *in, struct sa_opt_verdict *v)
{
	return judge_int(in, v);
}

void sa_sockopt_judge_other(const struct sa_opt_facts *in, struct sa_opt_verdict *v)
{
	socklen_t len = in->reqlen, efflen = in->efflen;

	switch (in->kind) {
	case SA_OPT_LINGER:
		if (len >= (socklen_t)sizeof(struct linger) && efflen >= (socklen_t)sizeof(struct linger))
			v->diff = judge_linger(in, v);
		break;
	case SA_OPT_TIMEVAL:
		if (len >= (socklen_t)sizeof(struct timeval) && efflen >= (socklen_t)sizeof(struct timeval))
			v->diff = judge_timeval(in, v);
		break;
	case SA_OPT_STRING:
		if (strncmp((const char *)in->req, (const char *)in->eff, len < efflen ? len : efflen) != 0 &&
		    strnlen((const char *)in->req, len) != 0)
			v->diff = SA_OPTD_NAME;
		break;
	default:
		break;
	}
}

/* The request, what the kernel reports, and somaxconn beside it;
 * somaxconn named as the cause only when the effective backlog equals it
 * (__sys_listen_socket() lowers to it). */
enum sa_backlog_verdict sa_backlog_judge(const struct sa_backlog_facts *in)
{
	/* listen(-1) asks for the maximum: no finding. So does a request above
	 * any backlog Linux keeps (systemd and others pass INT_MAX): the kernel
	 * lowering it is what was asked. */
	if (in->backlog <= 0 || in->backlog > SA_BACKLOG_MOST || in->effective < 0 || in->effective >= in->backlog)
		return SA_BACKLOG_KEPT;
	if (in->somaxconn >= 0 && in->effective == in->somaxconn)
		return SA_BACKLOG_CLAMPED_SOMAXCONN;
	return SA_BACKLOG_CLAMPED_OTHER;
}

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
