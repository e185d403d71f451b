/*
 * readback.c: the words of a verdict of the judge floor's sockopt_judge.c
 * (a read-back or a backlog), filled from the one table of finding words
 * (common/finding_text.h) and said through the caller's callback
 * (common/readback.h), and the readers of this kernel's settings behind
 * the read-back findings (this kernel's SYN schedules, a sysctl file, the
 * release). Shared by the shim's read-back audits and `sockaudit
 * explain`, which links this object.
 *
 * Calls nothing of the shim: no sa_real, no log line, no state; the only
 * syscalls are uname() in sa_kernel_at_least() and the sysctl read of
 * sa_sysctl_read() through the caller's functions. Decides nothing: what
 * a read-back means is judged in shim/judge/.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "digits.h"
#include "finding_text.h"
#include "readback.h"
#include "syn_schedule.h"

/* Out of line, so that its note's 300 bytes are not on the stack (nor
 * behind a stack-protector check) of every other finding's words. */
static void __attribute__((noinline)) say_defer_rounded(const struct sa_opt_verdict *v,
							const struct sa_opt_context *c, sa_say_fn say, void *ctx)
{
	char note[300];

	say(ctx, "defer_rounded", SA_MSG_DEFER_ROUNDED, v->req_i, v->eff_i, v->rounds,
	    sa_plural((unsigned long long)v->rounds, "round", "rounds"), v->eff_i,
	    sa_defer_note(note, sizeof note, v->eff_i, c->defer_real_ms, c->defer_rto_max_ms));
}

void sa_sockopt_say(const struct sa_opt_facts *in, const struct sa_opt_verdict *v,
		    const struct sa_opt_context *c, sa_say_fn say, void *ctx)
{
	int req = v->req_i, eff = v->eff_i, rcv = in->opt == SO_RCVBUF || in->opt == SO_RCVBUFFORCE;
	const char *name = c->name, *sysctl = rcv ? "net.core.rmem_max" : "net.core.wmem_max";
	const char *autotune = (rcv && c->stream)
		? SA_MSG_OPTION_ADJUSTED_AUTOTUNE_TAIL : "";

	switch (v->diff) {
	case SA_OPTD_SAME:
		break;
	case SA_OPTD_DIFFERS:
		say(ctx, "option_differs", SA_MSG_OPTION_DIFFERS, name, req, eff);
		break;
	case SA_OPTD_DIFFERS_UNEXPLAINED:
		say(ctx, "option_differs", SA_MSG_OPTION_DIFFERS_UNEXPLAINED, name, req, eff);
		break;
	case SA_OPTD_LINGER:
		say(ctx, "option_differs", SA_MSG_OPTION_DIFFERS_LINGER,
		    v->linger[0], v->linger[1], v->linger[2], v->linger[3]);
		break;
	case SA_OPTD_TIMEOUT:
		say(ctx, "option_differs", SA_MSG_OPTION_DIFFERS_TIMEOUT, name, v->req_us, v->eff_us);
		break;
	case SA_OPTD_NAME:
		say(ctx, "option_differs", SA_MSG_OPTION_DIFFERS_NAME, name);
		break;
	case SA_OPTD_DEFER_ROUNDED:
		say_defer_rounded(v, c, say, ctx);
		break;
	case SA_OPTD_BUF_DOUBLED:
		say(ctx, "option_adjusted", SA_MSG_OPTION_ADJUSTED_BUF_DOUBLED, name, req, eff, autotune);
		break;
	case SA_OPTD_BUF_CAPPED:
		say(ctx, "option_adjusted", SA_MSG_OPTION_ADJUSTED_BUF_CAPPED,
		    name, req, sysctl, v->sysctl, eff, sysctl, name, autotune);
		break;
	case SA_OPTD_BELOW_MIN:
		say(ctx, "option_adjusted", SA_MSG_OPTION_ADJUSTED_BELOW_MIN, name, req, eff, autotune);
		break;
	case SA_OPTD_FASTOPEN_CAPPED:
		say(ctx, "option_adjusted", SA_MSG_OPTION_ADJUSTED_FASTOPEN_CAPPED, req, v->sysctl);
		break;
	case SA_OPTD_MAXSEG:
		say(ctx, "option_adjusted", SA_MSG_OPTION_ADJUSTED_MAXSEG, req, eff);
		break;
	case SA_OPTD_TOS_ECN:
		say(ctx, "option_adjusted", SA_MSG_OPTION_ADJUSTED_TOS_ECN, req, eff);
		break;
	case SA_OPTD_HOPS_DEFAULT:
		say(ctx, "option_adjusted", SA_MSG_OPTION_ADJUSTED_HOPS_DEFAULT, name, eff);
		break;
	case SA_OPTD_CLAMP_MIN:
		say(ctx, "option_adjusted", SA_MSG_OPTION_ADJUSTED_CLAMP_MIN, req, eff);
		break;
	case SA_OPTD_TIMER_TICK:
		say(ctx, "option_adjusted", SA_MSG_OPTION_ADJUSTED_TIMER_TICK, name, v->req_us, v->eff_us);
		break;
	}
}

void sa_backlog_say(const struct sa_backlog_facts *in, enum sa_backlog_verdict v, sa_say_fn say, void *ctx)
{
	const char *how = !strcmp(in->source, "tcp_info") ? "read back with TCP_INFO" :
			  !strcmp(in->source, "unix_diag") ? "read back with unix_diag" :
			  "computed from somaxconn, not read back";
	unsigned room = (unsigned)in->effective + 1;

	if (v == SA_BACKLOG_CLAMPED_SOMAXCONN)
		say(ctx, "backlog_clamped", SA_MSG_BACKLOG_CLAMPED_SOMAXCONN, in->backlog, in->effective,
		      how, room, sa_plural(room, "connection", "connections"), in->backlog);
	else if (v == SA_BACKLOG_CLAMPED_OTHER)
		say(ctx, "backlog_clamped", SA_MSG_BACKLOG_CLAMPED_OTHER, in->backlog, in->effective,
		      how, room, sa_plural(room, "connection", "connections"), in->somaxconn);
}

int sa_sysctl_read(const char *path, long *out, int (*open_fn)(const char *, int),
		   ssize_t (*read_fn)(int, void *, size_t), int (*close_fn)(int))
{
	char buf[64];
	ssize_t n;
	char *end;
	int fd = open_fn(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read_fn(fd, buf, sizeof buf - 1);
	close_fn(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	*out = strtol(buf, &end, 10);
	return end == buf ? -EINVAL : 0;
}

int sa_kernel_at_least(int major, int minor)
{
	struct utsname u;
	unsigned long long a, b;
	const char *p;

	if (uname(&u) != 0 || !(p = sa_digits(u.release, &a)) || *p != '.' || !sa_digits(p + 1, &b))
		return 0;
	return a > (unsigned long long)major || (a == (unsigned long long)major && b >= (unsigned long long)minor);
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
