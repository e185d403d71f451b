/*
 * accept.c: the accepting side: how long accept() blocked, how long
 * the connection sat in the accept queue, the queue's depth, empty
 * connections and their cause, and who speaks first.
 *
 * Per accepted TCP connection it costs no syscall but on a sample (TCP_INFO
 * on the child and the listener: one accept in 128 per listener below trace,
 * one in 16 at trace, and any accept 100 ms after the previous sample),
 * when a finding needs one, and FIONREAD on a deferred listener; at trace
 * getsockname only for a wildcard listener (the trace line's queue_ms,
 * queue_len and bytes_ready are null off the sample). One more (FIONREAD)
 * on the first write when nobody spoke yet. After that the socket's
 * SA_F_WATCH_IO bit is cleared and the I/O wrappers are back to one
 * lookup. EAGAIN from a non-blocking accept loop is only counted.
 * Never changes the child or the listener.
 *
 * The shape: which way an accept goes is sa_accept_route() (judge/judge.h, the
 * one rule the inline path asks too); for the full audit this file reads
 * the facts (read_facts), judge/accept_judge.c says what they mean
 * (sa_accept_judge, pure), and this file counts (count_accept), words the
 * findings and writes the line.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "audit/accept.h"
#include "syn_schedule.h"

/* A child that sat this long in the accept queue makes us look at the
 * listener's queue even off the sample. */
#define QUEUE_WAIT_CHECK_MS 5

/* The listener's entry, made now for a listener we never saw listen()
 * (inherited across exec, or opened before we were loaded). */
static struct sa_sock *listener_sock(int lfd)
{
	struct sa_sock *s = sa_fd_get(lfd);
	struct sa_tcpinfo ti;
	int v = 0;
	socklen_t l = sizeof v;

	if (s && (sa_sock_flags(s) & SA_F_LISTENER))
		return s;
	if (sa_real.getsockopt(lfd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) != 0 || !v)
		return s;
	if (!s && (s = sa_fd_adopt(lfd)) == NULL)
		return NULL;
	sa_sock_fill_kind(lfd, s);
	s->lsn.backlog_effective = -1;
	if (sa_sock_is_tcp(s)) {
		if (sa_tcpinfo_read(lfd, &ti) == 0 && sa_tcpinfo_listener_queue(&ti))
			s->lsn.backlog_effective = (int)ti.sacked;
		l = sizeof v;
		if (sa_real.getsockopt(lfd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &v, &l) == 0)
			s->opt.defer_accept_s = v;   /* not a listener to us until now: SA_F_PLAIN_LISTENER is not set */
	}
	__atomic_or_fetch(&s->flags, SA_F_LISTENER, __ATOMIC_RELEASE);
	return s;
}

void sa_accept_on_listening(int fd, struct sa_sock *s)
{
	struct sa_listener *l;

	if (!(sa_sock_flags(s) & SA_F_LISTENER))
		return;
	sa_netns_baseline();
	sa_hist_ns_prepare();   /* wait_ms's table, before workers fork */
	l = sa_listener_get(fd, s);
	if (l) {
		/* A second listen() (nginx reload) changes the backlog. */
		__atomic_store_n(&l->backlog, s->lsn.backlog_effective, __ATOMIC_RELAXED);
		__atomic_store_n(&l->defer_s, s->opt.defer_accept_s, __ATOMIC_RELAXED);
		{
			long real_ms, rto_max;

			sa_defer_window(fd, s->opt.defer_accept_s, &real_ms, &rto_max);
			__atomic_store_n(&l->defer_real_ms, real_ms, __ATOMIC_RELAXED);
			__atomic_store_n(&l->rto_max_ms, rto_max, __ATOMIC_RELAXED);
		}
	}
}

static void raise_peak(uint32_t *p, uint32_t v)
{
	uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > old && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void report_failed(int lfd, struct sa_listener *l, int err, uint64_t t0, uint64_t t1)
{
	struct sa_findings f = { 0 };
	struct sa_tcpinfo listener_ti;
	struct rlimit rl;
	uint64_t nerr = l ? SA_RELAXED_ADD(l->errors, 1) : 1, nlim = 0;
	int have_q = sa_tcpinfo_read(lfd, &listener_ti) == 0 && sa_tcpinfo_listener_queue(&listener_ti);
	struct sa_line L;
	char queue[96];

	if (err == EMFILE || err == ENFILE) {
		nlim = l ? SA_RELAXED_ADD(l->fd_limit, 1) : 1;
		getrlimit(RLIMIT_NOFILE, &rl);
		if (have_q)
			snprintf(queue, sizeof queue, SA_MSG_ACCEPT_FD_LIMIT_QUEUE,
				 listener_ti.unacked, listener_ti.sacked + 1);
		else
			snprintf(queue, sizeof queue, SA_MSG_ACCEPT_FD_LIMIT_NO_QUEUE);
		if (err == EMFILE)
			sa_findings_add(&f, "accept_fd_limit",
				SA_MSG_ACCEPT_FD_LIMIT_EMFILE,
				(unsigned long long)rl.rlim_cur, queue);
		else
			sa_findings_add(&f, "accept_fd_limit",
				SA_MSG_ACCEPT_FD_LIMIT_ENFILE,
				queue);
	}
	/* Trace shows every failure; otherwise the 1st, 2nd, 4th ... per listener. */
	if (!sa_level_enabled(SA_LEVEL_TRACE) &&
	    !(f.n ? sa_nth_worth_a_line(nlim) : sa_nth_worth_a_line(nerr))) {
		sa_emit_skip("accept", &f);
		if (!f.n)
			sa_suppressed_add(1);
		return;
	}
	sa_line_begin(&L, "accept", -1, &f);
	sa_line_int(&L, "listen_fd", lfd);
	sa_line_real(&L, "wait_ms", (double)(t1 - t0) / 1e6);
	if (have_q) {
		sa_line_int(&L, "queue_len", listener_ti.unacked);
		sa_line_int(&L, "queue_capacity", (long long)listener_ti.sacked + 1);
	}
	if (l && l->local[0])
		sa_line_str(&L, "local", l->local);
	sa_line_int(&L, "ret", -1);
	sa_line_errno(&L, "errno", err);
	sa_line_int(&L, "errors_on_listener", (long long)nerr);
	sa_line_emit(&L, SA_LEVEL_INFO, &f);
}

/* accept_queue_full: what this line measured (the queue's depth after
 * this accept, this child's wait and SYN-ACK resends), what a full queue
 * can do to a client on this kernel, and the counters that tell which
 * happened. Runs only for a full queue; the sysctls are read once. */
static void queue_full_msg(struct sa_findings *f, const struct sa_tcpinfo *listener_ti, int backlog,
			   const struct sa_tcpinfo *ti, int need)
{
	const struct sa_syn_sched *k = sa_syn_sched();
	char child[160] = "";

	if (ti && ti->has_times && ti->has_retrans)
		snprintf(child, sizeof child, SA_MSG_ACCEPT_QUEUE_FULL_CHILD_TAIL,
			 ti->last_data_sent, ti->total_retrans,
			 sa_plural(ti->total_retrans, "resend", "resends"));
	/* tcp_conn_request() drops a SYN while sk_acceptq_is_full();
	 * tcp_v4_syn_recv_sock() drops the final ACK, and tcp_check_req()
	 * keeps the request (acked = 1) unless tcp_abort_on_overflow, so the
	 * client's next segment or the SYN-ACK timer completes it later. */
	if (k->abort_on_overflow)
		sa_findings_add(f, "accept_queue_full",
			SA_MSG_ACCEPT_QUEUE_FULL_ABORT,
			listener_ti->unacked, sa_plural(listener_ti->unacked, "connection", "connections"), backlog + 1,
			child, k->abort_on_overflow, need);
	else
		sa_findings_add(f, "accept_queue_full",
			SA_MSG_ACCEPT_QUEUE_FULL_DROP,
			listener_ti->unacked, sa_plural(listener_ti->unacked, "connection", "connections"), backlog + 1,
			child, need);
}


/* ls, a TCP listener with its listener state, is not deferred: the
 * counted accept (accept.h) may take its next connections. Looked at again
 * after the bit is set: a TCP_DEFER_ACCEPT learnt meanwhile
 * (sa_sock_set_defer: the value, then the bit cleared) wins. */
static __attribute__((noinline)) void mark_plain(struct sa_sock *ls)
{
	if (__atomic_load_n(&ls->flags, __ATOMIC_ACQUIRE) & SA_F_PLAIN_LISTENER)
		return;
	__atomic_or_fetch(&ls->flags, SA_F_PLAIN_LISTENER, __ATOMIC_ACQ_REL);
	if (__atomic_load_n(&ls->opt.defer_accept_s, __ATOMIC_ACQUIRE) != 0)
		__atomic_and_fetch(&ls->flags, ~SA_F_PLAIN_LISTENER, __ATOMIC_ACQ_REL);
}

void sa_accepted_from(struct sa_sock *c, int lfd, const struct sa_sock *ls, struct sa_listener *l, uint32_t inc)
{
	c->acc.listen_fd = lfd;
	c->acc.listener = l;
	c->acc.listener_inc = inc;
	c->acc.serial = __atomic_add_fetch(&sa_accept_serial, 1, __ATOMIC_RELAXED);
	c->acc.forks = (uint16_t)sa_fd_forks();
	if (ls) {
		c->family = ls->family;
		c->type = ls->type;
		c->protocol = ls->protocol;
	}
	__atomic_or_fetch(&c->flags, SA_F_ACCEPTED, __ATOMIC_RELEASE);
}

/* The entry of a connection accepted from ls (listener l) now. */
static void accepted_entry(struct sa_sock *c, int lfd, const struct sa_sock *ls, struct sa_listener *l)
{
	sa_accepted_from(c, lfd, ls, l, l ? __atomic_load_n(&l->inc, __ATOMIC_ACQUIRE) : 0);
}

/* Out-of-line copies of the inline counted path (accept.h), for the
 * callers that need a function: sa_accept_audit's counted route, and the
 * wrapper under AddressSanitizer. */
void sa_accept_counted_only(int lfd, int fd, struct sa_listener *l, uint64_t t0, uint64_t t1)
{
	sa_accept_count_only(lfd, fd, l, t0, t1, NULL);
}

int sa_accept_counted_out(int lfd, int fd, uint64_t t0, uint64_t t1, struct sa_fd_side *d, uint32_t listen_gen)
{
	return sa_accept_counted(lfd, fd, t0, t1, d, listen_gen);
}

/* At trace, a connection off the TCP_INFO sample on a plain TCP listener
 * (no TCP_DEFER_ACCEPT), most of what trace accepts: what the general path
 * below does when nothing was read from the kernel (no TCP_INFO, no
 * FIONREAD, so no finding), without its tests of each fact. */
static void trace_plain(const struct sa_accept_call *call, const struct sa_sock *ls, struct sa_listener *l)
{
	struct sa_accept_seen a = {
		.lfd = call->lfd, .ret = call->ret, .l = l, .peer = call->peer, .peerlen = call->peerlen,
		.wait_ns = call->t1 - call->t0, .tcp = 1, .plain = 1,
	};
	struct sa_sock *c = sa_fd_track(call->ret);

	if (c)
		accepted_entry(c, call->lfd, ls, l);
	__atomic_store_n(&l->defer_s, 0, __ATOMIC_RELAXED);
	SA_RELAXED_ADD(l->accepts, 1);
	sa_hist_add_ns(&l->wait_ms, call->t1 - call->t0);
	/* Nobody spoke yet that we know of: the first read or write decides. */
	if (c)
		sa_watch_on(c, 0);
	sa_accept_line(&a, NULL);
	sa_listener_tick_l(l, call->t1);
}

/* The listener lfd names for this accept, and its state (made now for a
 * listener we never saw listen()). None when the number changed socket
 * while accept() blocked (another thread closed the listener, and a new
 * one may hold the number now): this accept ran on a socket we can no
 * longer name, so no listener gets it. */
static struct sa_sock *accept_listener(int lfd, uint32_t listen_gen, struct sa_listener **lp)
{
	struct sa_sock *ls = sa_fd_gen(lfd) != listen_gen ? NULL : listener_sock(lfd);
	struct sa_listener *l = !ls ? NULL : __atomic_load_n(&ls->lsn.listener, __ATOMIC_ACQUIRE) ?: sa_listener_get(lfd, ls);

	if (l)
		sa_listener_mine(l);   /* a forked child's first count on it starts from zero */
	*lp = l;
	return ls;
}

/* A failed accept. EAGAIN is a wasted wake-up of a non-blocking accept
 * loop and EINTR a signal: counted only. */
static void accept_failed(int lfd, struct sa_listener *l, int err, uint64_t t0, uint64_t t1)
{
	if (err == EAGAIN || err == EWOULDBLOCK) {
		if (l) {
			SA_RELAXED_ADD(l->eagain, 1);
			sa_listener_tick(l, t1);
		}
		return;
	}
	if (err != EINTR)
		report_failed(lfd, l, err, t0, t1);
	sa_listener_tick(l, t1);
}

void sa_accept_left(int lfd, uint32_t gen, uint64_t t0, uint64_t sig_ns)
{
	struct sa_findings f = { 0 };
	struct sa_listener *l;
	struct sa_line L;
	uint64_t wait = sig_ns > t0 ? sig_ns - t0 : 0;

	accept_listener(lfd, gen, &l);
	if (l) {
		SA_RELAXED_ADD(l->left_by_jump, 1);
		sa_hist_add_ns(&l->wait_ms, wait);
	}
	if (!sa_level_enabled(SA_LEVEL_TRACE))
		return;
	/* The call never returned: the program saw no result. */
	sa_line_begin(&L, "accept", -1, &f);
	sa_line_int(&L, "listen_fd", lfd);
	sa_line_real(&L, "wait_ms", (double)wait / 1e6);
	if (l && l->local[0])
		sa_line_str(&L, "local", l->local);
	sa_line_bool(&L, "left_by_jump", 1);
	sa_line_null(&L, "ret");
	sa_line_null(&L, "errno");
	sa_line_emit(&L, SA_LEVEL_TRACE, &f);
}

/* sa_accept_route's facts as this path knows them. The sample's 100 ms
 * clock moves here unless the inline path took the sample (sampled). */
static enum sa_accept_route audit_route(const struct sa_sock *ls, struct sa_listener *l, int fd, uint64_t t1,
					int sampled, int trace)
{
	struct sa_accept_gate g = {
		.tcp = sa_sock_is_tcp(ls), .listener = l != NULL, .trace = trace,
		.deferred = ls && ls->opt.defer_accept_s != 0,
		.sample_due = sampled || (l && t1 >= __atomic_load_n(&l->next_sample_ns, __ATOMIC_RELAXED)),
		.accepts = l ? __atomic_load_n(&l->accepts, __ATOMIC_RELAXED) : 0,
		/* Read only where the rule asks: below trace. */
		.child_known = !trace && sa_fd_get(fd) != NULL, .netns_ready = !trace && sa_netns_base() != NULL,
	};
	enum sa_accept_route r = sa_accept_route(&g);

	if (r == SA_ROUTE_SAMPLE && l && !sampled)
		__atomic_store_n(&l->next_sample_ns, t1 + SA_ACCEPT_SAMPLE_NS, __ATOMIC_RELAXED);
	return r;
}

/* Where read_facts keeps what it read. */
struct accept_reads {
	struct sa_tcpinfo ti, listener_ti;
	int bytes;
};

/* What the kernel says about the child fd and its listener lfd. TCP_INFO
 * on the child and the listener is most of what a full accept costs us: it
 * is read on the sample (which the queue_ms histogram and the queue depth
 * are built from) and where a finding depends on it. */
static void read_facts(int lfd, int fd, const struct sa_sock *ls, const struct sa_listener *l, int sample,
		       struct accept_reads *k, struct sa_accept_facts *in)
{
	int tcp = sa_sock_is_tcp(ls), defer_s = ls ? ls->opt.defer_accept_s : 0;
	int have_ti = 0, have_lti = 0, bytes_ok;

	if (sample) {
		/* Right after accept and before the program writes: tcp_get_info()
		 * gives last_data_sent = now - lsndtime, set when the child was
		 * established, i.e. its time in the accept queue. */
		have_ti = sa_tcpinfo_read(fd, &k->ti) == 0;
		have_lti = sa_tcpinfo_read(lfd, &k->listener_ti) == 0 && sa_tcpinfo_listener_queue(&k->listener_ti);
	}
	/* Data waiting at accept: free from the sample's TCP_INFO. Otherwise
	 * FIONREAD, only where it pays: a deferred listener (an empty
	 * connection there is a finding) or one that is not TCP. On a plain
	 * TCP listener empty accepts are normal, its with_data_pct comes from
	 * the sample, and who speaks first is decided at the first I/O. */
	k->bytes = 0;
	bytes_ok = sa_accept_bytes_from_tcpinfo(have_ti ? &k->ti : NULL, &k->bytes) ||
		   ((!tcp || defer_s > 0) && ioctl(fd, FIONREAD, &k->bytes) == 0);
	/* An empty connection on a deferred listener: its cause needs the
	 * child's retransmission counts. */
	if (tcp && !have_ti && defer_s > 0 && bytes_ok && k->bytes == 0)
		have_ti = sa_tcpinfo_read(fd, &k->ti) == 0;
	/* It waited in the queue: was the queue full? */
	if (tcp && !have_lti && have_ti && k->ti.has_times && k->ti.last_data_sent >= QUEUE_WAIT_CHECK_MS)
		have_lti = sa_tcpinfo_read(lfd, &k->listener_ti) == 0 && sa_tcpinfo_listener_queue(&k->listener_ti);
	*in = (struct sa_accept_facts){
		.tcp = tcp, .defer_s = defer_s,
		.ti = have_ti ? &k->ti : NULL, .listener_ti = have_lti ? &k->listener_ti : NULL, .bytes = bytes_ok ? &k->bytes : NULL,
		.last_backlog = l ? __atomic_load_n(&l->backlog, __ATOMIC_RELAXED) : -1,
	};
}

/* Counts a fully audited accept on its listener. Returns whether its
 * findings are worth a line: the 1st, 2nd, 4th ... of each kind per
 * listener, and every one on a socket with no listener state. */
static int count_accept(struct sa_sock *ls, struct sa_listener *l, const struct sa_accept_facts *in,
			const struct sa_accept_verdict *v, int sample, uint64_t t0, uint64_t t1)
{
	int report = 0;

	if (in->listener_ti) {
		__atomic_store_n(&ls->lsn.backlog_effective, v->backlog, __ATOMIC_RELAXED);
		if (l)
			__atomic_store_n(&l->backlog, v->backlog, __ATOMIC_RELAXED);
	}
	if (!l)
		return 1;
	__atomic_store_n(&l->defer_s, in->defer_s, __ATOMIC_RELAXED);
	if (in->tcp && in->defer_s == 0)
		mark_plain(ls);
	SA_RELAXED_ADD(l->accepts, 1);
	sa_hist_add_ns(&l->wait_ms, t1 - t0);
	if (in->ti && in->ti->has_times && sample)   /* the sample only: extra reads are biased */
		sa_hist_add(&l->queue_ms, (double)in->ti->last_data_sent);
	if (v->with_data > 0)
		SA_RELAXED_ADD(l->with_data, 1);
	else if (v->with_data == 0)
		SA_RELAXED_ADD(l->empty_accepts, 1);
	if (in->listener_ti)
		raise_peak(&l->peak_waiting, in->listener_ti->unacked + 1);
	if (v->cause == SA_EMPTY_DEFER_EXPIRED)
		report |= sa_nth_worth_a_line(SA_RELAXED_ADD(l->defer_expired, 1));
	else if (v->cause == SA_EMPTY_SYNCOOKIE)
		report |= sa_nth_worth_a_line(SA_RELAXED_ADD(l->syncookie, 1));
	if (v->full)
		report |= sa_nth_worth_a_line(SA_RELAXED_ADD(l->queue_full_seen, 1));
	return report;
}

/* The findings a judged accept carries, worded from what it measured. */
static void accept_findings(struct sa_findings *f, int lfd, const struct sa_accept_facts *in,
			    const struct sa_accept_verdict *v, const struct sa_listener *l)
{
	if (v->cause == SA_EMPTY_DEFER_EXPIRED || v->cause == SA_EMPTY_SYNCOOKIE) {
		long real_ms, rto_max;
		char win[24], note[300];
		int defer_s = in->defer_s;
		unsigned retrans = in->ti->total_retrans;

		sa_defer_window(lfd, defer_s, &real_ms, &rto_max);
		sa_defer_note(note, sizeof note, defer_s, real_ms, rto_max);
		if (v->cause == SA_EMPTY_DEFER_EXPIRED)
			sa_findings_add(f, "empty_accept_defer_expired",
				SA_MSG_EMPTY_ACCEPT_DEFER_EXPIRED,
				defer_s, retrans, sa_plural(retrans, "resend", "resends"), note);
		else
			sa_findings_add(f, "empty_accept_syncookie",
				SA_MSG_EMPTY_ACCEPT_SYNCOOKIE,
				defer_s, v->backlog, sa_secs_str(win, sizeof win, real_ms), note);
	}
	if (v->full)
		queue_full_msg(f, in->listener_ti, v->backlog, in->ti,
			       sa_needed_backlog(l ? __atomic_load_n(&l->peak_waiting, __ATOMIC_RELAXED) :
						 in->listener_ti->unacked + 1, v->backlog));
}

/* An accept the inline path (accept.h) did not finish, and every accept
 * at trace: which way it goes (sa_accept_route), then for the full audit
 * its facts (read_facts), what they mean (sa_accept_judge), its counts
 * (count_accept) and its line. */
void sa_accept_audit(const struct sa_accept_call *call)
{
	const int lfd = call->lfd, ret = call->ret;
	const uint64_t t0 = call->t0, t1 = call->t1;
	struct sa_listener *l;
	struct sa_sock *ls = accept_listener(lfd, call->listen_gen, &l), *c;
	int trace = sa_level_enabled(SA_LEVEL_TRACE), report;
	enum sa_accept_route r;
	struct accept_reads k;
	struct sa_accept_facts in;
	struct sa_accept_verdict v;
	struct sa_findings f;

	if (l)
		sa_netns_baseline_due();   /* first accept of a process that never listened (a forked worker) */
	if (ret < 0) {
		accept_failed(lfd, l, call->err, t0, t1);
		return;
	}
	r = audit_route(ls, l, ret, t1, call->sampled, trace);
	if (r == SA_ROUTE_COUNT) {
		sa_accept_counted_only(lfd, ret, l, t0, t1);
		return;
	}
	if (r == SA_ROUTE_TRACE_PLAIN) {
		trace_plain(call, ls, l);
		return;
	}
	sa_findings_init(&f);
	if ((c = sa_fd_track(ret)) != NULL)
		accepted_entry(c, lfd, ls, l);
	read_facts(lfd, ret, ls, l, r == SA_ROUTE_SAMPLE, &k, &in);
	sa_accept_judge(&in, &v);
	report = count_accept(ls, l, &in, &v, r == SA_ROUTE_SAMPLE, t0, t1);
	accept_findings(&f, lfd, &in, &v, l);
	if (c && in.tcp && l) {
		if (v.client_first) {
			c->acc.first_speaker = SA_SPEAKER_CLIENT;
			SA_RELAXED_ADD(l->first_client, 1);
		} else {
			sa_watch_on(c, 0);   /* the first read or write decides (sa_accept_io) */
		}
	}
	if (!trace && !(f.n && report)) {
		sa_emit_skip("accept", &f);
		sa_listener_tick(l, t1);
		return;
	}
	sa_accept_line(&(struct sa_accept_seen){
		.lfd = lfd, .ret = ret, .l = l, .peer = call->peer, .peerlen = call->peerlen, .wait_ns = t1 - t0,
		.ti = in.ti, .listener_ti = in.listener_ti, .bytes = in.bytes, .tcp = in.tcp, .defer_s = in.defer_s, .plain = v.plain,
	}, &f);
	if (l)
		sa_listener_tick_l(l, t1);
	else
		sa_listener_tick(l, t1);
}
