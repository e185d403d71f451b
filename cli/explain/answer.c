/*
 * explain/answer.c: the kernel's answer to one `sockaudit explain` query,
 * asked of the kernel itself (a fresh socket, the real setsockopt or
 * listen, the read-back), judged and worded by the library's own code
 * (sa_sockopt_judge and sa_sockopt_say, sa_backlog_judge and
 * sa_backlog_say: shim/judge/sockopt_judge.c and shim/kernel/readback.c, the shim's
 * read-back audits' judges and words), and printed for people or as JSON.
 *
 * Sockets made here never connect anywhere but loopback in the namespace
 * asked about, and are closed before the answer is printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <jansson.h>

#include "explain/explain.h"

#ifndef TCP_RTO_MAX_MS
#define TCP_RTO_MAX_MS 44
#endif

/* TCP_MAXSEG's read-back after a handshake over loopback, where the MSS
 * in use replaces the value set; 0 when loopback is down. */
static int maxseg_connected(int mss, int *out)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a, l = sizeof *out;
	int lfd, cfd = -1, ok = 0;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return 0;
	if (bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) != 0)
		goto out;
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cfd < 0 || setsockopt(cfd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss) != 0 ||
	    connect(cfd, (struct sockaddr *)&a, sizeof a) != 0)
		goto out;
	ok = getsockopt(cfd, IPPROTO_TCP, TCP_MAXSEG, out, &l) == 0;
out:
	if (cfd >= 0)
		close(cfd);
	close(lfd);
	return ok;
}

/* A sysctl of this network namespace, as the judges read one (readback.h). */
static int open_ro(const char *path, int flags)
{
	return open(path, flags);
}

int ex_sysctl(const char *path, long *out)
{
	return sa_sysctl_read(path, out, open_ro, read, close);
}

/* Judges one read-back as the shim does (sa_sockopt_judge) and says its
 * finding in the shim's words (sa_sockopt_say). */
static void judge(struct ex_answer *a, const void *req, socklen_t reqlen, const void *eff,
		  socklen_t efflen, sa_say_fn say)
{
	const struct sa_optdesc *d = a->desc;
	/* quickack stays 0: the CLI has no quickack audit, so TCP_QUICKACK is
	 * judged as the boolean it is. */
	struct sa_opt_facts in = {
		.level = d->level, .opt = d->opt, .kind = d->kind, .req = req, .reqlen = reqlen,
		.eff = eff, .efflen = efflen, .read_sysctl = ex_sysctl,
	};
	struct sa_opt_verdict v;

	sa_sockopt_judge(&in, &v);
	if (v.diff != SA_OPTD_SAME)
		sa_sockopt_say(&in, &v, &a->words, say, a);
}

/* The facts the shim reads only when a read-back differs, read here
 * always: they are the answer's context. */
static void option_context(struct ex_answer *a, int fd)
{
	const struct sa_optdesc *d = a->desc;
	unsigned need = sa_opt_needs(d->level, d->opt);

	if (need & SA_NEED_BUF_MAX)
		ex_sysctl(sa_buf_max_path(d->opt), &a->buf_max);
	if (need & SA_NEED_SOMAXCONN)
		ex_sysctl("/proc/sys/net/core/somaxconn", &a->somaxconn);
	if (need & SA_NEED_DEFER) {
		sa_syn_sched_fill(&a->sched, ex_sysctl);
		a->rounds = sa_defer_rounds(a->req_i);
		a->words.defer_rto_max_ms = SA_RTO_MAX_DEFAULT_MS;
		if (a->sched.synack_capped) {
			int v = 0;
			socklen_t l = sizeof v;
			a->words.defer_rto_max_ms = getsockopt(fd, IPPROTO_TCP, TCP_RTO_MAX_MS, &v, &l) == 0 && v >= 1000
				? v : a->sched.rto_max_ms;
		}
		a->words.defer_real_ms = sa_defer_real_ms(a->rounds, a->words.defer_rto_max_ms, a->sched.synack_capped);
	}
}

static void answer_option(struct ex_answer *a, sa_say_fn say)
{
	const struct sa_optdesc *d = a->desc;
	int family = d->level == IPPROTO_IPV6 ? AF_INET6 : AF_INET;
	unsigned char eff[128];
	socklen_t efflen = sizeof eff;
	struct linger lg = { .l_onoff = a->req_i, .l_linger = a->req_i2 };
	struct timeval tv = { .tv_sec = a->req_us / 1000000, .tv_usec = a->req_us % 1000000 };
	const void *req = &a->req_i;
	socklen_t reqlen = sizeof a->req_i;
	int fd;

	a->words = (struct sa_opt_context){ .name = d->name, .stream = 1 };
	a->buf_max = 0;
	a->somaxconn = -1;
	if (d->kind == SA_OPT_LINGER) {
		req = &lg;
		reqlen = sizeof lg;
	} else if (d->kind == SA_OPT_TIMEVAL) {
		req = &tv;
		reqlen = sizeof tv;
	} else if (d->kind == SA_OPT_STRING) {
		req = a->req_s;
		reqlen = (socklen_t)strlen(a->req_s);
	}
	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, d->level, d->opt, req, reqlen) != 0) {
		a->refused = 1;
		a->err = errno;
		if (fd >= 0)
			close(fd);
		return;
	}
	memset(eff, 0, sizeof eff);
	/* getsockopt knows no SO_*BUFFORCE: the size is read back as SO_*BUF. */
	a->have_eff = getsockopt(fd, d->level, d->opt == SO_RCVBUFFORCE ? SO_RCVBUF :
				 d->opt == SO_SNDBUFFORCE ? SO_SNDBUF : d->opt, eff, &efflen) == 0;
	if (!a->have_eff) {
		a->err = errno;
		close(fd);
		return;
	}
	switch (d->kind) {
	case SA_OPT_LINGER: {
		struct linger e;
		memcpy(&e, eff, sizeof e);
		a->eff_i = e.l_onoff;
		a->eff_i2 = e.l_linger;
		break;
	}
	case SA_OPT_TIMEVAL: {
		struct timeval e;
		memcpy(&e, eff, sizeof e);
		a->eff_us = (long long)e.tv_sec * 1000000 + e.tv_usec;
		break;
	}
	case SA_OPT_STRING:
		snprintf(a->eff_s, sizeof a->eff_s, "%.*s", (int)efflen, (const char *)eff);
		/* Compared as the names they are, without the kernel's padding. */
		efflen = (socklen_t)strlen(a->eff_s);
		break;
	default:
		memcpy(&a->eff_i, eff, sizeof a->eff_i);
		option_context(a, fd);
		break;
	}
	judge(a, req, reqlen, eff, efflen, say);
	if (d->level == IPPROTO_TCP && d->opt == TCP_MAXSEG &&
	    (a->have_conn = maxseg_connected(a->req_i, &a->conn_mss)))
		judge(a, req, reqlen, &a->conn_mss, sizeof a->conn_mss, say);
	close(fd);
}

static void answer_backlog(struct ex_answer *a, sa_say_fn say)
{
	struct tcp_info ti;
	socklen_t l = sizeof ti;
	int fd;

	a->somaxconn = a->syncookies = a->abort_on_overflow = -1;
	sa_syn_sched_fill(&a->sched, ex_sysctl);
	ex_sysctl("/proc/sys/net/core/somaxconn", &a->somaxconn);
	ex_sysctl("/proc/sys/net/ipv4/tcp_syncookies", &a->syncookies);
	ex_sysctl("/proc/sys/net/ipv4/tcp_abort_on_overflow", &a->abort_on_overflow);
	a->effective = -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* An unbound listen() takes an ephemeral port of its own (inet_autobind()). */
	if (fd < 0 || listen(fd, a->req_i) != 0) {
		a->refused = 1;
		a->err = errno;
	} else if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) == 0 && ti.tcpi_state == 10) {
		/* tcp_get_info(): on a listener tcpi_sacked is sk_max_ack_backlog. */
		a->effective = (int)ti.tcpi_sacked;
		a->source = "tcp_info";
	} else if (a->somaxconn >= 0) {
		a->effective = sa_backlog_effective(a->req_i, a->somaxconn);
		a->source = "computed";
	}
	if (fd >= 0)
		close(fd);
	if (a->source) {
		struct sa_backlog_facts in = {
			.backlog = a->req_i, .effective = a->effective, .source = a->source, .somaxconn = a->somaxconn,
		};
		enum sa_backlog_verdict v = sa_backlog_judge(&in);

		if (v != SA_BACKLOG_KEPT)
			sa_backlog_say(&in, v, say, a);
	}
}

void ex_answer(struct ex_answer *a, sa_say_fn say)
{
	switch (a->what) {
	case EX_OPTION:
		answer_option(a, say);
		break;
	case EX_BACKLOG:
		answer_backlog(a, say);
		break;
	case EX_CODE:
		break;          /* words only: nothing to ask the kernel */
	default:
		sa_syn_sched_fill(&a->sched, ex_sysctl);
		break;
	}
}
