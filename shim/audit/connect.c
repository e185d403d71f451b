/*
 * connect.c: the connecting side: how long connect() took until the
 * connection was established or failed, for blocking and non-blocking
 * sockets, and the SYN retransmissions behind a slow connect (a peer whose
 * accept queue overflowed drops SYNs; the client resends them 1 s apart on
 * Linux 6.5+, so connects cluster at 1, 2 and 3 s while the server's own
 * logs show nothing).
 *
 * A non-blocking connect's EINPROGRESS is not its outcome. The fd is
 * marked SA_F_CONNECTING (getsockopt reports to us) and SA_F_WATCH_IO (the
 * I/O wrappers report to us); the first of these that proves the outcome
 * completes it: the program's getsockopt(SO_ERROR), its first read/write,
 * a second connect(), or close() (abandoned, or failed if TCP_INFO says the
 * socket is already closed). Both flags are cleared then, so later I/O
 * costs one table lookup again.
 *
 * A blocking connect interrupted by a signal (EINTR: wget's
 * --connect-timeout, alarm()) is reported at once as "interrupted", with
 * its time and SYN retransmissions, and counted as such. The kernel keeps
 * connecting (inet_wait_for_connect leaves SYN_SENT), so the socket stays
 * watched: if the program goes on waiting, the final outcome gets a second
 * line (after_interrupt: true); a close adds nothing.
 *
 * Contract, for anyone who touches this file:
 * - Never read SO_ERROR (or anything else that changes kernel state) on a
 *   socket: the read clears the error, and the program, or a dup of the fd
 *   we do not know about (F_DUPFD, SCM_RIGHTS, a forked child), may read it
 *   later. What the program itself sees comes to us through its own
 *   getsockopt(SO_ERROR) (sa_connect_getsockopt). Where we must judge
 *   alone (close), TCP_INFO's state is the only read: a socket in CLOSE is
 *   "failed", errno "unknown".
 * - Never attribute a fact to a socket the fd no longer refers to: a close
 *   we did not see (fclose(fdopen()), syscall(SYS_close), io_uring) leaves
 *   our entry behind and the number may now be a pipe. The completion path
 *   already reads TCP_INFO; ENOTSOCK/EBADF there, or a socket in LISTEN,
 *   means the entry is stale: it is dropped without a line.
 * - Never change what a call returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "audit/connect.h"
#include "connect_outcomes.h"
#include "syn_schedule.h"

/* ---- per-process statistics -------------------------------------------------- */

static struct sa_hist hist SA_PROC_PAGE;     /* TCP connects that succeeded (a fork-per-connection child's one connect) */
static uint64_t hist_tail[SA_HIST_TAIL];     /* its buckets past 6.2 s, off the process page */
static uint64_t buckets[SA_CONN_NBUCKETS] SA_PROC_PAGE;
static uint64_t sum_us SA_PROC_PAGE;         /* their times added up, in us: a Prometheus histogram's _sum */
static uint64_t n_ok SA_PROC_PAGE, n_failed SA_PROC_PAGE, n_abandoned SA_PROC_PAGE, n_interrupted SA_PROC_PAGE,
	retrans_total SA_PROC_PAGE;
static uint64_t n_disconnect;   /* connect(AF_UNSPEC): rare, off the process page */

static void add(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

static uint64_t get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

int sa_connect_active(void)
{
	return get(&n_ok) || get(&n_failed) || get(&n_abandoned) || get(&n_interrupted) || get(&n_disconnect);
}

void sa_connect_summary(json_t *summary)
{
	json_t *h = json_object(), *c = json_object();
	int i;

	json_object_set_new(summary, "connect_ms", sa_hist_json(&hist));
	for (i = 0; i < SA_CONN_NBUCKETS; i++)
		json_object_set_new(h, sa_conn_bucket_names[i], json_integer((json_int_t)get(&buckets[i])));
	json_object_set_new(summary, "connect_hist", h);
	json_object_set_new(summary, "connect_ms_sum", json_real((double)get(&sum_us) / 1000.0));
	json_object_set_new(summary, "syn_retrans_total", json_integer((json_int_t)get(&retrans_total)));
	json_object_set_new(c, SA_OUTCOME_OK, json_integer((json_int_t)get(&n_ok)));
	json_object_set_new(c, SA_OUTCOME_FAILED, json_integer((json_int_t)get(&n_failed)));
	json_object_set_new(c, SA_OUTCOME_ABANDONED, json_integer((json_int_t)get(&n_abandoned)));
	json_object_set_new(c, SA_OUTCOME_INTERRUPTED, json_integer((json_int_t)get(&n_interrupted)));
	json_object_set_new(c, "disconnects", json_integer((json_int_t)get(&n_disconnect)));
	json_object_set_new(summary, "connects", c);
	sa_connect_peers_json(summary);
}

/* A pending connect carries the process epoch (sa_proc_epoch, mod 256: a
 * pending connect is ignored by its 256th-generation descendant at worst).
 * The parent owns the connect it started: a child that reads, polls or
 * closes its copy of the fd has not completed or abandoned anything.
 * Marking pending connects, instead of walking the fd table at fork, keeps
 * a child of a fork-per-connection server from touching pages it never
 * uses. */
static inline uint8_t cur_epoch(void)
{
	return (uint8_t)sa_proc_epoch();
}

/* Whether s's pending connect is this process's; forgets it otherwise. */
static int is_ours(struct sa_sock *s)
{
	if (s->conn.epoch == cur_epoch())
		return 1;
	sa_flags_clear(s, SA_F_CONNECTING | SA_F_WATCH_IO);
	return 0;
}

void sa_connect_reset(void)
{
	sa_hist_reset(&hist);
	SA_ZERO(buckets);
	SA_ZERO(sum_us);
	SA_ZERO(n_ok);
	SA_ZERO(n_failed);
	SA_ZERO(n_abandoned);
	SA_ZERO(n_interrupted);
	SA_ZERO(n_disconnect);
	SA_ZERO(retrans_total);
}

/* ---- one connect's report ----------------------------------------------------- */


static int tcp_state_of(const struct sa_tcpinfo *ti)
{
	return ti->valid ? ti->state : SA_TCP_UNKNOWN;
}

static int defer_of(int fd, const struct sa_sock *s)
{
	int v = 0;
	socklen_t l = sizeof v;

	if (s->opt.defer_accept_s)
		return s->opt.defer_accept_s;
	/* A socket made under us whose options all came through us: nothing
	 * set means nothing to read (no system call per connect), unless the
	 * program also sets options where we cannot see (blind.c). Otherwise
	 * read back: it may have been set before we saw the socket. */
	if ((s->flags & SA_F_BORN) && !__atomic_load_n(&sa_blind_opts, __ATOMIC_RELAXED) &&
	    !sa_level_enabled(SA_LEVEL_TRACE))
		return 0;
	if (sa_real.getsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &v, &l) != 0)
		return 0;
	return v;
}



static void report_connect(int fd, const struct sa_sock *s, const struct sockaddr *peer, socklen_t plen,
			   const struct sa_conn_done *d)
{
	const struct sa_config *cfg = sa_cfg();
	struct sa_findings f;
	int tcp = sa_sock_is_tcp(s), retrans = -1, defer_s = 0;
	enum sa_level lvl = d->outcome == SA_CONN_FAILED ? SA_LEVEL_INFO : SA_LEVEL_TRACE;

	sa_findings_init(&f);
	if (tcp && d->ti.has_retrans)   /* else null: a short TCP_INFO */
		retrans = (int)d->ti.total_retrans;
	if (tcp)
		defer_s = defer_of(fd, s);
	add(d->outcome == SA_CONN_OK ? &n_ok : d->outcome == SA_CONN_FAILED ? &n_failed :
	    d->outcome == SA_CONN_INTERRUPTED ? &n_interrupted :
	    d->outcome == SA_CONN_DISCONNECT ? &n_disconnect : &n_abandoned, 1);
	if (tcp && s->type == SOCK_STREAM)
		sa_connect_peer_count(peer, plen, d->outcome,
				      retrans > s->conn.retrans_counted ? retrans - s->conn.retrans_counted : 0);
	/* After an interrupt the count is cumulative: add only what is new. */
	if (retrans > s->conn.retrans_counted)
		add(&retrans_total, (uint64_t)(retrans - s->conn.retrans_counted));
	if (tcp && d->outcome == SA_CONN_OK) {
		if (SA_UNLIKELY(!__atomic_load_n(&hist.tail, __ATOMIC_ACQUIRE))) {
			/* Once per process image, by one thread (a plain store by
			 * every thread raced under TSan); inherited by a child. */
			uint64_t *none = NULL;

			__atomic_compare_exchange_n(&hist.tail, &none, hist_tail, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		}
		sa_hist_add(&hist, d->ms);
		add(&buckets[sa_conn_bucket(d->ms)], 1);
		add(&sum_us, d->ms > 0 ? (uint64_t)(d->ms * 1000.0 + 0.5) : 0);
	}
	/* UDP and AF_UNIX datagram connects only set a default address; a
	 * disconnect waits for nothing. */
	if (s->type != SOCK_DGRAM && d->outcome != SA_CONN_DISCONNECT) {
		int slow = cfg && cfg->slow_connect_ms > 0 ? cfg->slow_connect_ms : 500;
		struct sa_syn_sched k = SA_SYN_SCHED_DEFAULTS;

		/* The schedule only for a connect that retransmitted: no reads on
		 * the common path. The socket's own TCP_RTO_MAX_MS caps its SYN
		 * backoff (tcp_retransmit_timer(), 6.15+). */
		if (tcp && retrans > 0) {
			k = *sa_syn_sched();
			k.rto_max_ms = sa_sock_rto_max_ms(fd, k.rto_max_ms);
		}
		sa_conn_findings(&f, d->outcome, d->ms, retrans, defer_s, slow, s->family == AF_UNIX, &k);
	}
	if (f.n == 0 && !sa_level_enabled(lvl)) {
		sa_emit_skip("connect", &f);
		return;
	}
	sa_connect_line(fd, s, peer, plen, d, &f, lvl, retrans, defer_s);
}

/* Reports a pending connect once: whoever clears SA_F_CONNECTING first
 * (two threads may race on one socket) writes the event. */
static void complete(int fd, struct sa_sock *s, struct sa_conn_done *d, uint64_t now)
{
	uint32_t old = sa_flags_clear(s, SA_F_CONNECTING | SA_F_WATCH_IO);
	struct sockaddr_storage peer;   /* aligned copy: the table keeps bytes */

	if (!(old & SA_F_CONNECTING) || s->conn.epoch != cur_epoch())
		return;
	if (s->conn.interrupted) {
		/* Already reported as interrupted: a close adds nothing. */
		if (d->outcome == SA_CONN_ABANDONED)
			return;
		d->after_interrupt = 1;
	} else if (s->conn.fast_open) {
		/* connect() (or sendto) returned before the handshake whatever
		 * the socket's mode: the mode is the file's. */
		int fl = fcntl(fd, F_GETFL);

		d->fast_open = 1;
		d->nonblocking = fl >= 0 && (fl & O_NONBLOCK);
	} else {
		d->nonblocking = 1;
	}
	if (d->ms < 0)
		d->ms = now > s->conn.start_ns ? (double)(now - s->conn.start_ns) / 1e6 : 0;
	memcpy(&peer, s->conn.peer, s->conn.peer_len);
	report_connect(fd, s, (const struct sockaddr *)&peer, s->conn.peer_len, d);
}

static void init_done(struct sa_conn_done *d, const char *by)
{
	memset(d, 0, sizeof *d);
	d->by = by;
	d->ms = -1;
}

/* Whether the entry no longer describes what fd refers to (a close we did
 * not see, then a pipe or another socket took the number): TCP_INFO, read
 * anyway on this path, fails with ENOTSOCK on a non-socket, and our
 * connecting socket is never a listener. A stale entry is forgotten. */
static int forget_if_stale(int fd, struct sa_sock *s, int tcpinfo_ret, const struct sa_tcpinfo *ti)
{
	if (tcpinfo_ret == -ENOTSOCK || tcpinfo_ret == -EBADF ||
	    (tcpinfo_ret == 0 && ti->state == SA_TCP_LISTEN)) {
		sa_flags_clear(s, SA_F_CONNECTING | SA_F_WATCH_IO);
		sa_fd_forget(fd);
		return 1;
	}
	return 0;
}

/* The kernel goes on connecting s: watch for its end (interrupted: a
 * line already said so, with ti's resends). */
static void mark_pending(struct sa_sock *s, const struct sockaddr *addr, socklen_t len, uint64_t t0,
			 int interrupted, const struct sa_tcpinfo *ti)
{
	s->conn.interrupted = interrupted != 0;
	s->conn.fast_open = 0;
	s->conn.retrans_counted = interrupted && ti->has_retrans ? (uint8_t)(ti->total_retrans > 255 ? 255 : ti->total_retrans) : 0;
	s->conn.start_ns = t0;
	s->conn.epoch = cur_epoch();
	s->conn.peer_len = 0;
	if (addr && len > 0 && len <= (socklen_t)sizeof s->conn.peer) {
		memcpy(s->conn.peer, addr, len);
		s->conn.peer_len = (uint8_t)len;
	}
	sa_watch_on(s, SA_F_CONNECTING);
}

/* ---- hooks -------------------------------------------------------------------- */

void sa_connect_left(int fd, struct sa_sock *s, const struct sockaddr *peer, socklen_t plen,
		     uint64_t t0, uint64_t sig_ns)
{
	struct sa_sock tmp;
	struct sa_conn_done d;

	if (!s) {
		/* Closed (and maybe reused) since: the facts we kept only. */
		memset(&tmp, 0, sizeof tmp);
		tmp.family = peer && plen >= sizeof(sa_family_t) ? peer->sa_family : 0;
		tmp.type = SOCK_STREAM;
		s = &tmp;
	}
	init_done(&d, "signal");
	d.outcome = SA_CONN_INTERRUPTED;
	d.left_by_jump = 1;
	d.ms = sig_ns > t0 ? (double)(sig_ns - t0) / 1e6 : 0;
	if (s != &tmp && sa_sock_is_tcp(s))
		sa_tcpinfo_read(fd, &d.ti);
	report_connect(fd, s, peer, plen, &d);
	/* The kernel keeps connecting, as after EINTR: its end (or the close)
	 * is reported with after_interrupt. Only a TCP socket still in the
	 * handshake. */
	if (s != &tmp && sa_sock_is_tcp(s) && d.ti.valid && sa_conn_handshaking(d.ti.state))
		mark_pending(s, peer, plen, t0, 1, &d.ti);
}

void sa_connect_audit(int fd, struct sa_sock *s, const struct sockaddr *addr, socklen_t len,
		      int ret, int err, uint64_t t0, uint64_t t1)
{
	struct sa_sock tmp;
	struct sa_conn_done d;
	int e;

	if (!s) {
		/* Not a socket we can track (ENOTSOCK, EBADF): still say it failed. */
		memset(&tmp, 0, sizeof tmp);
		s = &tmp;
	}
	/* A connect the parent started before a fork is not this process's. */
	if (sa_sock_flags(s) & SA_F_CONNECTING)
		is_ours(s);
	/* connect(AF_UNSPEC) dissolves an association or aborts a connection:
	 * no connect to time, but it ends one that was pending. */
	if (addr && len >= (socklen_t)sizeof(sa_family_t) && addr->sa_family == AF_UNSPEC) {
		if (sa_sock_flags(s) & SA_F_CONNECTING) {
			init_done(&d, "connect");
			d.outcome = SA_CONN_ABANDONED;
			complete(fd, s, &d, t1);
			return;
		}
		/* A disconnect: a datagram socket forgets its default peer
		 * (udp_disconnect), a TCP connection is aborted
		 * (tcp_disconnect). A line at trace, a count; no peer. */
		init_done(&d, "call");
		d.outcome = SA_CONN_DISCONNECT;
		d.err = ret == 0 ? 0 : err;
		d.ms = (double)(t1 - t0) / 1e6;
		if (s != &tmp)
			report_connect(fd, s, NULL, 0, &d);
		return;
	}
	if (sa_sock_flags(s) & SA_F_CONNECTING) {
		init_done(&d, "connect");
		d.outcome = sa_conn_judge_reconnect(ret, err, &e);
		if (d.outcome == SA_CONN_PENDING)
			return;
		d.err = e;
		if (sa_sock_is_tcp(s))
			sa_tcpinfo_read(fd, &d.ti);
		complete(fd, s, &d, t1);
		return;
	}
	/* A blocking connect interrupted by a signal (a non-blocking one never
	 * waits, so EINTR means blocking): its outcome is "interrupted", now. */
	if (ret < 0 && err == EINTR && sa_sock_is_tcp(s)) {
		init_done(&d, "call");
		d.outcome = SA_CONN_INTERRUPTED;
		d.err = EINTR;
		d.ms = (double)(t1 - t0) / 1e6;
		sa_tcpinfo_read(fd, &d.ti);
		report_connect(fd, s, addr, len, &d);
	}
	/* The kernel keeps connecting after EINPROGRESS (non-blocking socket,
	 * or SO_SNDTIMEO ran out) and after EINTR on TCP (inet_wait_for_connect
	 * leaves the socket in SYN_SENT). */
	if (ret < 0 && s != &tmp && (err == EINPROGRESS || (err == EINTR && sa_sock_is_tcp(s)))) {
		mark_pending(s, addr, len, t0, err == EINTR, &d.ti);
		return;
	}
	init_done(&d, "call");
	d.outcome = ret == 0 ? SA_CONN_OK : SA_CONN_FAILED;
	d.err = ret == 0 ? 0 : err;
	d.ms = (double)(t1 - t0) / 1e6;
	if (sa_sock_is_tcp(s))
		sa_tcpinfo_read(fd, &d.ti);
	/* TCP_FASTOPEN_CONNECT: tcp_v4_connect() stops at
	 * tcp_fastopen_defer_connect() and connect() returns 0 in SYN_SENT
	 * before any SYN; the first send starts the handshake. Its end is the
	 * connect's (a refused one fails that send). */
	if (ret == 0 && s != &tmp && d.ti.valid && d.ti.state == SA_TCP_SYN_SENT) {
		mark_pending(s, addr, len, t0, 0, &d.ti);
		s->conn.fast_open = 1;
		return;
	}
	report_connect(fd, s, addr, len, &d);
}

void sa_connect_fastopen(int fd, struct sa_sock *s, const struct sockaddr *addr, socklen_t len,
			 ssize_t ret, int err, uint64_t t0, uint64_t t1)
{
	struct sa_conn_done d;

	/* EISCONN: already connected, a plain send. Others before any
	 * connect (EBADF, ENOTSOCK, EOPNOTSUPP without the sysctl...) are
	 * the send's, not a connect's: only a TCP socket's outcome counts. */
	if (!s || !sa_sock_is_tcp(s) || (ret < 0 && (err == EISCONN || err == EBADF || err == ENOTSOCK ||
						      err == EFAULT || err == EOPNOTSUPP)))
		return;
	init_done(&d, "sendto");
	d.fast_open = 1;
	sa_tcpinfo_read(fd, &d.ti);
	if (ret < 0 && err != EINPROGRESS && err != EAGAIN && err != EWOULDBLOCK && err != EINTR &&
	    err != EALREADY) {
		d.outcome = SA_CONN_FAILED;
		d.err = err;
	} else if (d.ti.valid && sa_conn_handshaking(d.ti.state)) {
		/* Non-blocking: the data went with the SYN (or waits for it). */
		mark_pending(s, addr, len, t0, 0, &d.ti);
		s->conn.fast_open = 1;
		return;
	} else {
		d.outcome = SA_CONN_OK;
	}
	d.ms = (double)(t1 - t0) / 1e6;
	d.nonblocking = 0;
	report_connect(fd, s, addr, len, &d);
}

void sa_connect_getsockopt(int fd, struct sa_sock *s, int level, int opt,
			   const void *val, const socklen_t *len, int ret)
{
	struct sa_conn_done d;
	int so_error;

	if (ret != 0 || level != SOL_SOCKET || opt != SO_ERROR || !val || !len ||
	    *len < (socklen_t)sizeof so_error || !is_ours(s))
		return;
	memcpy(&so_error, val, sizeof so_error);
	init_done(&d, "getsockopt");
	if (sa_sock_is_tcp(s))
		sa_tcpinfo_read(fd, &d.ti);
	d.outcome = sa_conn_judge_sockerr(so_error, tcp_state_of(&d.ti), &d.err);
	if (d.outcome != SA_CONN_PENDING)
		complete(fd, s, &d, sa_now_ns());
}

void sa_connect_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err)
{
	struct sa_conn_done d;
	int e;

	/* Not yet connected: no system call of ours on this path. */
	if ((ret < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR)) || !is_ours(s))
		return;
	init_done(&d, dir == SA_IO_READ ? "read" : "write");
	if (sa_sock_is_tcp(s) && forget_if_stale(fd, s, sa_tcpinfo_read(fd, &d.ti), &d.ti))
		return;
	d.outcome = sa_conn_judge_io(ret, err, tcp_state_of(&d.ti), &e);
	d.err = e;
	if (d.outcome != SA_CONN_PENDING)
		complete(fd, s, &d, sa_now_ns());
}

void sa_connect_close(int fd, struct sa_sock *s)
{
	struct sa_conn_done d;
	uint64_t now = sa_now_ns(), est;
	int r = -1;   /* TCP_INFO's result, read for TCP only */

	if (!is_ours(s))
		return;
	init_done(&d, "close");
	d.outcome = SA_CONN_ABANDONED;
	if (sa_sock_is_tcp(s) && forget_if_stale(fd, s, r = sa_tcpinfo_read(fd, &d.ti), &d.ti))
		return;
	if (sa_sock_is_tcp(s) && r == 0) {
		if (d.ti.state == SA_TCP_CLOSE) {
			/* It failed and the program never asked why. Closing this
			 * fd need not close the socket (a dup, F_DUPFD, a forked
			 * child may hold it and read SO_ERROR later), so the error
			 * is not read here: failed, errno unknown. */
			d.outcome = SA_CONN_FAILED;
		} else if (!sa_conn_handshaking(d.ti.state)) {
			/* Established, but the program only polled for it. Before
			 * any data, tcpi_last_data_recv counts from the handshake's
			 * end (tcp_finish_connect sets lrcvtime), which dates it. */
			d.outcome = SA_CONN_OK;
			est = (uint64_t)d.ti.last_data_recv * 1000000u;
			/* The kernel's clock is jiffies: est can exceed the time
			 * since connect() by a tick; that means "at once". */
			if (d.ti.has_times && d.ti.has_data_segs && d.ti.data_segs_in == 0 &&
			    est <= now - s->conn.start_ns + 20000000u)
				d.ms = est >= now - s->conn.start_ns ? 0.0
					: (double)(now - est - s->conn.start_ns) / 1e6;
		}
	}
	complete(fd, s, &d, now);
}
