/*
 * listen.c: what the kernel kept of a listen(): the effective
 * backlog read back (TCP_INFO tcpi_sacked on TCP, UNIX_DIAG_RQLEN on
 * AF_UNIX), the namespace's somaxconn, and how deferral interacts with
 * Fast Open and SYN cookies on that listener.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "audit/audit.h"
#include "syn_schedule.h"

/* Below this effective backlog, a burst of silent clients overflows the
 * SYN queue that deferred connections wait in (see README). */
#define DEFER_BYPASS_BACKLOG 128

/* AF_UNIX has no TCP_INFO: ask unix_diag for the listener's
 * (pending, max_ack_backlog) by inode. Returns the backlog or -errno. */
int sa_unix_backlog(int fd, unsigned *pending)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} rq;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	union {
		struct nlmsghdr nlh;
		char buf[8192];
	} resp;
	struct stat st;
	int nfd, backlog = -ENOENT;
	ssize_t n;

	if (sa_fstat(fd, &st) != 0)
		return -errno;
	nfd = sa_real.socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nfd < 0)
		return -errno;
	memset(&rq, 0, sizeof rq);
	rq.nlh.nlmsg_len = sizeof rq;
	rq.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	rq.nlh.nlmsg_flags = NLM_F_REQUEST;
	rq.req.sdiag_family = AF_UNIX;
	rq.req.udiag_states = 1u << 10;            /* TCP_LISTEN */
	rq.req.udiag_ino = (uint32_t)st.st_ino;
	rq.req.udiag_show = UDIAG_SHOW_RQLEN;
	rq.req.udiag_cookie[0] = rq.req.udiag_cookie[1] = ~0u;   /* no cookie */
	/* System calls, not libc's sendto/recv/close: cancellation points. */
	if (sa_syscall(SYS_sendto, nfd, &rq, sizeof rq, 0, (struct sockaddr *)&nl, sizeof nl) < 0) {
		backlog = -errno;
		goto out;
	}
	n = sa_syscall(SYS_recvfrom, nfd, &resp, sizeof resp, 0, NULL, NULL);
	if (n < (ssize_t)sizeof(struct nlmsghdr) || resp.nlh.nlmsg_type != SOCK_DIAG_BY_FAMILY) {
		backlog = -ENOENT;
		goto out;
	}
	{
		struct unix_diag_msg *m = NLMSG_DATA(&resp.nlh);
		int rem = (int)resp.nlh.nlmsg_len - (int)NLMSG_LENGTH(sizeof *m);
		struct rtattr *a = (struct rtattr *)(m + 1);
		for (; rem > 0 && RTA_OK(a, rem); a = RTA_NEXT(a, rem)) {
			if (a->rta_type == UNIX_DIAG_RQLEN && RTA_PAYLOAD(a) >= sizeof(struct unix_diag_rqlen)) {
				struct unix_diag_rqlen *q = RTA_DATA(a);
				*pending = q->udiag_rqueue;
				backlog = (int)q->udiag_wqueue;
			}
		}
	}
out:
	sa_nc_close(nfd);
	return backlog;
}

int sa_listen_is_listener(int fd, struct sa_sock *s)
{
	/* No listener without a listen() that succeeded (or SO_ACCEPTCONN on
	 * one met late): an accept on a datagram socket, or on one whose
	 * listen() failed, is a failed call, not a listener's. */
	if (!(__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) & SA_F_LISTENER))
		return 0;
	/* An AF_UNIX listener we never saw listen() (passed over SCM_RIGHTS,
	 * inherited across exec) has no TCP_INFO: unix_diag gives its
	 * backlog. Unknown stays -1 and is written as null. */
	if (s->lsn.backlog_effective < 0 && s->family == AF_UNIX) {
		unsigned waiting = 0;
		int b = sa_unix_backlog(fd, &waiting);

		if (b >= 0)
			__atomic_store_n(&s->lsn.backlog_effective, b, __ATOMIC_RELAXED);
	}
	return 1;
}

void sa_listen_defer_checks(int fd, struct sa_sock *s, struct sa_findings *f)
{
	int tfo = 0;
	socklen_t l = sizeof tfo;
	long cookies = 0, tfo_mode = -1, real_ms, rto_max;
	char win[24], note[300];

	if (s->opt.defer_accept_s <= 0 || s->type != SOCK_STREAM ||
	    (s->family != AF_INET && s->family != AF_INET6))
		return;
	sa_defer_window(fd, s->opt.defer_accept_s, &real_ms, &rto_max);
	sa_defer_note(note, sizeof note, s->opt.defer_accept_s, real_ms, rto_max);
	if (sa_real.getsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN, &tfo, &l) == 0 && tfo > 0) {
		sa_read_sysctl("/proc/sys/net/ipv4/tcp_fastopen", &tfo_mode);
		/* tcp_try_fastopen() queues the child at the SYN when the
		 * cookie is valid: it never meets tcp_check_req()'s gate. */
		sa_findings_add(f, "defer_with_fastopen",
			SA_MSG_DEFER_WITH_FASTOPEN,
			tfo, s->opt.defer_accept_s, tfo_mode);
	}
	if (sa_read_sysctl("/proc/sys/net/ipv4/tcp_syncookies", &cookies) == 0 && cookies != 0 &&
	    s->lsn.backlog_effective > 0 && s->lsn.backlog_effective < DEFER_BYPASS_BACKLOG)
		sa_findings_add(f, "defer_bypass_risk",
			SA_MSG_DEFER_BYPASS_RISK,
			s->opt.defer_accept_s, s->lsn.backlog_effective, cookies, s->lsn.backlog_effective + 1,
			sa_secs_str(win, sizeof win, real_ms), note);
}

/* backlog_clamped when the kernel kept less than was asked: judged and
 * worded as the judge and kernel floors say (sa_backlog_judge, sa_backlog_say), as
 * `sockaudit explain backlog=N` does. */
static void backlog_findings(struct sa_findings *f, int backlog, int effective, const char *source,
			     long somaxconn)
{
	struct sa_backlog_facts in = {
		.backlog = backlog, .effective = effective, .source = source, .somaxconn = somaxconn,
	};
	enum sa_backlog_verdict v = sa_backlog_judge(&in);

	if (v != SA_BACKLOG_KEPT)
		sa_backlog_say(&in, v, sa_findings_say, f);
}

void sa_listen_audit(int fd, struct sa_sock *s, int backlog, int ret, int err)
{
	struct sa_findings f = { 0 };
	struct sa_tcpinfo ti;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	long somaxconn = -1;
	int effective = -1, defer = 0, inet;
	unsigned pending = 0;
	const char *source = NULL;
	socklen_t dl = sizeof defer;
	json_t *ev;

	sa_read_sysctl("/proc/sys/net/core/somaxconn", &somaxconn);
	inet = s->family == AF_INET || s->family == AF_INET6;
	if (ret == 0) {
		__atomic_or_fetch(&s->flags, SA_F_LISTENER, __ATOMIC_RELEASE);
		if (inet && sa_tcpinfo_read(fd, &ti) == 0 && sa_tcpinfo_listener_queue(&ti)) {
			/* tcp_get_info(): on a listener tcpi_sacked is sk_max_ack_backlog.
			 * A TCP_INFO too short to hold it: computed, below. */
			effective = (int)ti.sacked;
			source = "tcp_info";
		} else if (s->family == AF_UNIX) {
			effective = sa_unix_backlog(fd, &pending);
			source = "unix_diag";
		}
		if (effective < 0 && somaxconn >= 0) {
			effective = sa_backlog_effective(backlog, somaxconn);
			source = "computed";
		}
		s->lsn.backlog_effective = effective;
		if (inet && sa_real.getsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, &dl) == 0)
			sa_sock_set_defer(s, defer);
		if (source)
			backlog_findings(&f, backlog, effective, source, somaxconn);
		sa_listen_defer_checks(fd, s, &f);
	}
	if (!sa_level_enabled(SA_LEVEL_INFO) && f.n == 0 && ret == 0) {
		sa_emit_skip("listen", &f);
		return;
	}
	ev = sa_event_new("listen", fd);
	if (!ev)
		return;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		json_object_set_new(ev, "local", sa_json_addr((struct sockaddr *)&ss, sl));
	json_object_set_new(ev, "backlog_requested", json_integer(backlog));
	json_object_set_new(ev, "backlog_effective", effective >= 0 ? json_integer(effective) : json_null());
	json_object_set_new(ev, "backlog_source", source ? json_string(source) : json_null());
	json_object_set_new(ev, "somaxconn", somaxconn >= 0 ? json_integer(somaxconn) : json_null());
	json_object_set_new(ev, "queue_capacity", effective >= 0 ? json_integer(effective + 1) : json_null());
	json_object_set_new(ev, "defer_accept_s", inet && ret == 0 ? json_integer(s->opt.defer_accept_s) : json_null());
	json_object_set_new(ev, "ret", json_integer(ret));
	if (ret != 0)
		json_object_set_new(ev, "errno", sa_json_errno(err));
	sa_event_emit(ev, SA_LEVEL_INFO, &f);
}
