/*
 * explain_answer.c: the kernel's answer to one `sockaudit explain` query,
 * asked of the kernel itself (a fresh socket, the real setsockopt or
 * listen, the read-back), judged by the library's rules
 * (shim/kernel/readback.c), and printed for people or as JSON.
 *
 * Sockets made here never connect anywhere but loopback in the namespace
 * asked about, and are closed before the answer is printed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <jansson.h>

#include "explain.h"

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

static void answer_option(struct ex_answer *a, sa_say_fn say)
{
	const struct sa_optdesc *d = a->desc;
	int family = d->level == IPPROTO_IPV6 ? AF_INET6 : AF_INET;
	unsigned char eff[128];
	socklen_t efflen = sizeof eff;
	unsigned need = sa_opt_needs(d->level, d->opt);
	struct sa_optfacts *k = &a->facts;
	int fd, rc;

	memset(k, 0, sizeof *k);
	k->level = d->level;
	k->opt = d->opt;
	k->name = d->name;
	k->stream = 1;
	k->somaxconn = -1;
	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		a->refused = 1;
		a->err = errno;
		return;
	}
	switch (d->kind) {
	case SA_OPT_LINGER: {
		struct linger l = { .l_onoff = a->req_i, .l_linger = a->req_i2 };
		rc = setsockopt(fd, d->level, d->opt, &l, sizeof l);
		break;
	}
	case SA_OPT_TIMEVAL: {
		struct timeval tv = { .tv_sec = a->req_us / 1000000, .tv_usec = a->req_us % 1000000 };
		rc = setsockopt(fd, d->level, d->opt, &tv, sizeof tv);
		break;
	}
	case SA_OPT_STRING:
		rc = setsockopt(fd, d->level, d->opt, a->req_s, (socklen_t)strlen(a->req_s));
		break;
	default:
		rc = setsockopt(fd, d->level, d->opt, &a->req_i, sizeof a->req_i);
		break;
	}
	if (rc != 0) {
		a->refused = 1;
		a->err = errno;
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
		struct linger l;
		memcpy(&l, eff, sizeof l);
		a->eff_i = l.l_onoff;
		a->eff_i2 = l.l_linger;
		sa_opt_judge_linger(a->req_i, a->req_i2, a->eff_i, a->eff_i2, say, a);
		break;
	}
	case SA_OPT_TIMEVAL: {
		struct timeval tv;
		memcpy(&tv, eff, sizeof tv);
		a->eff_us = (long long)tv.tv_sec * 1000000 + tv.tv_usec;
		sa_opt_judge_timeval(d->name, a->req_us, a->eff_us, say, a);
		break;
	}
	case SA_OPT_STRING:
		snprintf(a->eff_s, sizeof a->eff_s, "%.*s", (int)efflen, (const char *)eff);
		sa_opt_judge_string(d->name, a->req_s, strlen(a->req_s), a->eff_s, strlen(a->eff_s), say, a);
		break;
	case SA_OPT_BOOL:
		memcpy(&a->eff_i, eff, sizeof a->eff_i);
		sa_opt_judge_bool(d->name, a->req_i, a->eff_i, say, a);
		break;
	default:
		memcpy(&a->eff_i, eff, sizeof a->eff_i);
		k->req = a->req_i;
		k->eff = a->eff_i;
		/* The facts the shim reads when a read-back differs, read here
		 * always: they are the answer's context. */
		if (need & SA_NEED_BUF_MAX)
			ex_sysctl(sa_buf_max_path(d->opt), &k->buf_max);
		if (need & SA_NEED_SOMAXCONN)
			ex_sysctl("/proc/sys/net/core/somaxconn", &k->somaxconn);
		if (need & SA_NEED_DEFER) {
			sa_syn_sched_fill(&a->sched, ex_sysctl);
			a->rounds = sa_defer_rounds(a->req_i);
			k->defer_rto_max_ms = SA_RTO_MAX_DEFAULT_MS;
			if (a->sched.synack_capped) {
				int v = 0;
				socklen_t l = sizeof v;
				k->defer_rto_max_ms = getsockopt(fd, IPPROTO_TCP, TCP_RTO_MAX_MS, &v, &l) == 0 && v >= 1000
					? v : a->sched.rto_max_ms;
			}
			k->defer_real_ms = sa_defer_real_ms(a->rounds, k->defer_rto_max_ms, a->sched.synack_capped);
		}
		if (a->req_i != a->eff_i)
			sa_opt_judge_int(k, say, a);
		if (d->level == IPPROTO_TCP && d->opt == TCP_MAXSEG &&
		    (a->have_conn = maxseg_connected(a->req_i, &a->conn_mss)) && a->conn_mss != a->req_i) {
			k->eff = a->conn_mss;
			sa_opt_judge_int(k, say, a);
		}
		break;
	}
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
	if (a->source)
		sa_backlog_judge(a->req_i, a->effective, a->source, a->somaxconn, say, a);
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
	default:
		sa_syn_sched_fill(&a->sched, ex_sysctl);
		break;
	}
}
