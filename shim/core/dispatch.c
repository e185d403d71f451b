/*
 * dispatch.c: what each wrapper hands over once the real call returned:
 * keeps the fd table true (including sockets we first meet through a
 * setsockopt or listen, such as inherited listeners) and dispatches to the
 * audit_* modules. Runs inside the re-entry guard; errno is restored by
 * the wrapper.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "core/core.h"


/* The entry for a socket fd, created on first sight (inherited sockets,
 * sockets made before our constructor ran). NULL for non-sockets. */
SA_FORK_TEXT static struct sa_sock *lazy_track(int fd)
{
	struct sa_sock *s = sa_fd_get(fd);
	uint64_t w;
	int v;
	socklen_t l = sizeof v;

	if (s)
		return s;
	/* An accepted connection that was counted, not tracked: no system
	 * call needed to know what it is. */
	if ((w = sa_fd_origin_take(fd)) != 0 && (s = sa_accept_promote(fd, w)) != NULL)
		return s;
	if (fd < 0 || sa_real.getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) != 0)
		return NULL;
	s = sa_fd_adopt(fd);   /* the fd did not change socket: keep its generation */
	if (s)
		sa_sock_fill_kind(fd, s);
	/* A socket made where we did not see it (inherited, or accepted
	 * through an io_uring): time for a look at the fds, on its schedule. */
	sa_blind_ring_poll(sa_now_ns());
	return s;
}

SA_FORK_TEXT void sa_on_socket(int fd, int domain, int type, int protocol)
{
	struct sa_sock *s = sa_fd_track(fd);

	if (!s)
		return;
	s->family = (uint16_t)domain;
	s->type = (uint16_t)(type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC));
	s->protocol = protocol;
	__atomic_or_fetch(&s->flags, SA_F_BORN, __ATOMIC_RELEASE);
	/* The namespace's TCP counters start from here in processes that
	 * only connect (one /proc read per process; an atomic load after). */
	if (sa_sock_is_tcp(s))
		sa_netns_baseline();
}

void sa_on_setsockopt(const struct sa_setsockopt_call *c)
{
	struct sa_sock *s = c->ret == 0 ? lazy_track(c->fd) : sa_fd_get(c->fd);

	if (c->ret == 0 && c->level == IPPROTO_TCP && c->opt == TCP_QUICKACK)
		sa_quickack_audit(c->fd, s);
	sa_sockopt_audit(s, c);
}

void sa_on_getsockopt(int fd, int level, int opt, const void *val, const socklen_t *len, int ret)
{
	struct sa_sock *s = sa_fd_get(fd);

	if (s && (sa_sock_flags(s) & SA_F_CONNECTING))
		sa_connect_getsockopt(fd, s, level, opt, val, len, ret);
}

void sa_on_listen(int fd, int backlog, int ret, int err)
{
	struct sa_sock tmp, *s = lazy_track(fd);
	sigset_t old;

	if (!s) {
		/* Not a socket (or a bad fd): still say what failed. */
		memset(&tmp, 0, sizeof tmp);
		s = &tmp;
	}
	/* listen() is rare and its line and the listener's state allocate:
	 * no host handler may jump out of the heap half-way. */
	sa_signals_hold(&old);
	sa_blind_ring_look();
	sa_listen_audit(fd, s, backlog, ret, err);
	if (ret == 0 && s != &tmp)
		sa_accept_on_listening(fd, s);
	sa_signals_release(&old);
	if (ret == 0) {
		sa_ticker_listening();
		sa_ticker_poll_quiet(sa_now_ns());
	}
}

void sa_on_accept(const struct sa_accept_call *c)
{
	sa_accept_audit(c);
	sa_blind_ring_poll(c->t1);
	sa_ticker_poll(c->t1);
}

/* Whether connect()'s addr may be read: only when the kernel read it.
 * __sys_connect checks the fd and move_addr_to_kernel() the length before
 * copying, and EFAULT means the copy itself failed; in those cases addr
 * may point anywhere, or to fewer bytes than len says. */
static int connect_addr_readable(int ret, int err, socklen_t len)
{
	if (len > sizeof(struct sockaddr_storage))
		return 0;
	return ret == 0 || (err != EFAULT && err != EBADF && err != ENOTSOCK);
}

SA_FORK_TEXT void sa_on_connect(int fd, const struct sockaddr *addr, socklen_t len, int ret, int err,
		   uint64_t t0, uint64_t t1)
{
	if (!connect_addr_readable(ret, err, len)) {
		addr = NULL;
		len = 0;
	}
	sa_connect_audit(fd, lazy_track(fd), addr, len, ret, err, t0, t1);
	sa_blind_ring_poll(t1);
	sa_ticker_poll(t1);
}

void sa_on_fastopen(int fd, const struct sockaddr *addr, socklen_t len, ssize_t ret, int err,
		    uint64_t t0, uint64_t t1)
{
	if (!connect_addr_readable(ret >= 0 ? 0 : -1, err, len)) {
		addr = NULL;
		len = 0;
	}
	sa_connect_fastopen(fd, lazy_track(fd), addr, len, ret, err, t0, t1);
}

void sa_on_left_by_jump(const struct sa_inflight *r)
{
	/* The same socket only if the number was not closed and reused since
	 * the handler ran (the generation moves on every close we see). */
	struct sa_sock *s = sa_fd_gen(r->fd) == r->gen ? lazy_track(r->fd) : NULL;

	uint64_t t0 = r->t0 & ~(uint64_t)3;

	if (SA_INFLIGHT_KIND(r->t0) == SA_INFLIGHT_CONNECT)
		sa_connect_left(r->fd, s, r->peer_len ? (const struct sockaddr *)r->peer : NULL, r->peer_len,
				t0, r->sig_ns);
	else if (SA_INFLIGHT_KIND(r->t0) == SA_INFLIGHT_ACCEPT)
		sa_accept_left(r->fd, r->gen, t0, r->sig_ns);
}

/* A non-blocking connect's first I/O; then, as sa_on_io, an accepted one. */
static __attribute__((noinline)) void on_io_connecting(int fd, struct sa_sock *s, enum sa_io_dir dir,
						       ssize_t ret, int err)
{
	sa_connect_io(fd, s, dir, ret, err);
	if ((sa_sock_flags(s) & (SA_F_ACCEPTED | SA_F_WATCH_IO)) == (SA_F_ACCEPTED | SA_F_WATCH_IO))
		sa_accept_io(fd, s, dir, ret, err);
}

/* The accepted socket's first I/O (every trace connection) is a tail call:
 * the connect case, which has a call to come back from, is apart. */
SA_FORK_TEXT void sa_on_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err)
{
	if (SA_UNLIKELY(sa_sock_flags(s) & SA_F_CONNECTING)) {
		on_io_connecting(fd, s, dir, ret, err);
		return;
	}
	if ((sa_sock_flags(s) & (SA_F_ACCEPTED | SA_F_WATCH_IO)) == (SA_F_ACCEPTED | SA_F_WATCH_IO))
		sa_accept_io(fd, s, dir, ret, err);
}

SA_FORK_TEXT void sa_on_close(int fd, struct sa_sock *s)
{
	uint32_t f = sa_sock_flags(s);

	if (f & SA_F_CONNECTING)
		sa_connect_close(fd, s);
	if (f & SA_F_LISTENER)
		sa_blind_ring_look();   /* before the listener's last line */
	if (sa_accept_close_needed(f))
		sa_accept_close(fd, s, 0);
}

/* One fd of a close_range/closefrom about to happen: a listener's line
 * waits for sa_on_close_range_done(), since writing it now could reopen
 * our sink on a number the same call is about to close. */
void sa_on_close_in_range(int fd, struct sa_sock *s)
{
	if (sa_sock_flags(s) & SA_F_CONNECTING)
		sa_connect_close(fd, s);
	if (sa_accept_close_needed(sa_sock_flags(s)))
		sa_accept_close(fd, s, 1);
}

void sa_on_close_range_done(void)
{
	sa_listener_flush();
}
