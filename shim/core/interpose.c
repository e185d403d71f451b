/*
 * interpose.c: with interpose_proc.c and interpose_io.c, the only files that define libc names. Each wrapper calls
 * the real function, keeps exactly the return value and errno the host
 * must see, hands the facts to dispatch.c inside the re-entry guard, and
 * gives the result back. Nothing here may change what the host observes.
 *
 * Wrappers on I/O calls cost one table lookup on fds we do not watch: they
 * exist only to see the first read/write on accepted sockets and the first
 * I/O after a non-blocking connect.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/core.h"
#include "audit/accept.h"


/* glibc 2.34's; a C library without them (musl) declares neither. */
int close_range(unsigned int first, unsigned int last, int flags);
#ifndef CLOSE_RANGE_UNSHARE   /* <linux/close_range.h>, which a glibc before 2.34 lacks */
#define CLOSE_RANGE_UNSHARE (1U << 1)
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
void closefrom(int lowfd);

/* Run a hook inside the guard with the host's errno kept. */
/* Our part after the real call, errno as the call left it. Only while we
 * audit: a detach can come while the call blocks (the thread stopped in
 * accept() goes on in our wrapper once it returns), and after it nothing
 * of the audit is set up (sa_cfg() is NULL). */
#define HOOK(err, stmt) do { \
	if (SA_LIKELY(sa_active())) { sa_in_shim++; stmt; sa_in_shim--; } \
	errno = (err); } while (0)
/* The real function, resolved on first use by a cold function of its own
 * that takes no argument: a call with the slot number as an argument made
 * every I/O wrapper save and restore the fd around it, 4 instructions a
 * call on the hot path. One slot, not all (with the few a shell calls,
 * sa_real_one): a shell under the shim never sets the shim up. */
#define COLD_RESOLVER(fn) \
	static __attribute__((noinline, cold)) void resolve_##fn(void) { sa_real_one(SA_REAL_SLOT(fn)); }
#define READY(fn) do { if (SA_UNLIKELY(!sa_real.fn)) resolve_##fn(); } while (0)
COLD_RESOLVER(socket) COLD_RESOLVER(socketpair) COLD_RESOLVER(setsockopt) COLD_RESOLVER(getsockopt)
COLD_RESOLVER(listen) COLD_RESOLVER(accept) COLD_RESOLVER(accept4) COLD_RESOLVER(connect)
COLD_RESOLVER(close) COLD_RESOLVER(close_range) COLD_RESOLVER(closefrom) COLD_RESOLVER(dup)
COLD_RESOLVER(dup2) COLD_RESOLVER(dup3)
/* Our own calls (jansson, dlsym, the sink) and disabled processes pass
 * through; a call inside a host signal handler passes through counted
 * (sa_pass_in_shim). */
#define AUDITING() ((SA_LIKELY(!sa_in_shim) || sa_pass_in_shim()) && !IN_VM_CHILD() && sa_ensure_init())


SA_FORK_TEXT SA_EXPORT int socket(int domain, int type, int protocol)
{
	int ret, err;

	READY(socket);
	if (!AUDITING())
		return sa_real.socket(domain, type, protocol);
	ret = sa_real.socket(domain, type, protocol);
	err = errno;
	if (ret >= 0)
		HOOK(err, sa_on_socket(ret, domain, type, protocol));
	return ret;
}

SA_FORK_TEXT SA_EXPORT int socketpair(int domain, int type, int protocol, int sv[2])
{
	int ret, err;

	READY(socketpair);
	if (!AUDITING())
		return sa_real.socketpair(domain, type, protocol, sv);
	ret = sa_real.socketpair(domain, type, protocol, sv);
	err = errno;
	if (ret == 0)
		HOOK(err, (sa_on_socket(sv[0], domain, type, protocol), sa_on_socket(sv[1], domain, type, protocol)));
	return ret;
}

SA_EXPORT int setsockopt(int fd, int level, int opt, const void *val, socklen_t len)
{
	int ret, err;

	READY(setsockopt);
	if (!AUDITING())
		return sa_real.setsockopt(fd, level, opt, val, len);
	ret = sa_real.setsockopt(fd, level, opt, val, len);
	err = errno;
	{
		const struct sa_setsockopt_call c = {
			.fd = fd, .level = level, .opt = opt, .val = ret == 0 ? val : NULL, .len = ret == 0 ? len : 0,
			.ret = ret, .err = ret == 0 ? 0 : err,
		};
		HOOK(err, sa_on_setsockopt(&c));
	}
	return ret;
}

SA_EXPORT int getsockopt(int fd, int level, int opt, void *val, socklen_t *len)
{
	struct sa_sock *s;
	int ret, err;

	READY(getsockopt);
	ret = sa_real.getsockopt(fd, level, opt, val, len);
	if (SA_LIKELY(!(s = sa_fd_get(fd)) || !(sa_sock_flags(s) & SA_F_CONNECTING)) || sa_in_shim)
		return ret;
	err = errno;
	HOOK(err, sa_on_getsockopt(fd, level, opt, val, len, ret));
	return ret;
}

SA_EXPORT int listen(int fd, int backlog)
{
	int ret, err;

	READY(listen);
	if (!AUDITING())
		return sa_real.listen(fd, backlog);
	ret = sa_real.listen(fd, backlog);
	err = errno;
	HOOK(err, sa_on_listen(fd, backlog, ret, ret == 0 ? 0 : err));
	return ret;
}

/* At trace every accept has a line, with the peer: after the call *alen
 * holds the full length while addr holds only what the host offered, and
 * reading *alen before the call could fault where the kernel returns
 * EFAULT. So it is taken from the host's buffer only when *alen is a local
 * of the host's (on this thread's stack, which nginx's is) and the address
 * fitted; otherwise sa_accept_audit asks getpeername. */
static __attribute__((noinline)) int accept_traced(int fd, struct sockaddr *addr, socklen_t *alen,
						   int flags, int is4)
{
	struct sa_accept_call c = { .lfd = fd };
	socklen_t offered = 0;
	int known = addr && alen && sa_stack_holds(alen, sizeof *alen);
	int ret, err;

	if (known)
		offered = *alen;
	/* Which socket fd names now: if another thread closes it while we
	 * block, the accept is not credited to whatever takes the number. */
	c.listen_gen = sa_fd_gen(fd);
	c.t0 = sa_now_ns();
	sa_inflight_begin_fd(SA_INFLIGHT_ACCEPT, fd, c.t0);
	ret = is4 ? sa_real.accept4(fd, addr, alen, flags) : sa_real.accept(fd, addr, alen);
	err = errno;
	sa_inflight_end();
	c.t1 = sa_now_ns();
	c.ret = ret;
	c.err = ret >= 0 ? 0 : err;
	/* The kernel wrote min(offered, *alen) bytes of addr. */
	if (ret >= 0 && known && *alen <= offered && *alen <= sizeof(struct sockaddr_storage)) {
		c.peer = addr;
		c.peerlen = *alen;
	}
	HOOK(err, sa_on_accept(&c));
	return ret;
}

/* What the counted path left to do (or a failed accept), out of line: the
 * common accept, counted and done, builds no call and keeps no frame for
 * it. errno is the call's (or as the counted path kept it) and stays so. */
static __attribute__((noinline)) void accept_left(int fd, int ret, uint64_t t0, uint64_t t1,
						  uint32_t listen_gen, int sampled)
{
	int err = errno;
	const struct sa_accept_call c = {
		.lfd = fd, .ret = ret, .err = ret >= 0 ? 0 : err, .t0 = t0, .t1 = t1,
		.listen_gen = listen_gen, .sampled = sampled,
	};

	HOOK(err, sa_on_accept(&c));
}

/* Below trace most accepts are only counted, inline (audit/accept.h); the
 * others go to sa_accept_audit, which asks getpeername for the peer only
 * when it writes a line (a finding's). */
static inline __attribute__((always_inline)) int do_accept(int fd, struct sockaddr *addr, socklen_t *alen,
							   int flags, int is4)
{
	struct sa_fd_side *d;
	uint64_t t0, t1;
	uint32_t listen_gen;
	int ret, r;

	if (SA_UNLIKELY(sa_rt_cfg.level >= SA_LEVEL_TRACE))   /* AUDITING(): the configuration is loaded */
		return accept_traced(fd, addr, alen, flags, is4);
	/* Which socket fd names now (see accept_traced). */
	d = sa_fd_side_of(fd);
	listen_gen = d ? __atomic_load_n(&d->gen[SA_FD_IDX(fd)], __ATOMIC_ACQUIRE) : 0;
	t0 = sa_now_ns();
	sa_inflight_begin_fd(SA_INFLIGHT_ACCEPT, fd, t0);
	ret = is4 ? sa_real.accept4(fd, addr, alen, flags) : sa_real.accept(fd, addr, alen);
	sa_inflight_end();
	t1 = sa_now_ns();   /* CLOCK_MONOTONIC does not fail: errno is the call's */
	if (SA_UNLIKELY(!sa_active()))
		return ret;   /* detached while it blocked (HOOK) */
	if (ret >= 0) {
		/* errno as the call left it: what the counted path may call
		 * that could touch it keeps it. */
		sa_in_shim++;
#if defined(__SANITIZE_ADDRESS__)
		r = sa_accept_counted_out(fd, ret, t0, t1, d, listen_gen);
#else
		r = sa_accept_counted(fd, ret, t0, t1, d, listen_gen);
#endif
		sa_in_shim--;
		if (SA_LIKELY(r == SA_ACCEPT_DONE))
			return ret;
		accept_left(fd, ret, t0, t1, listen_gen, r == SA_ACCEPT_FULL_SAMPLED);
	} else {
		accept_left(fd, ret, t0, t1, listen_gen, 0);
	}
	return ret;
}

SA_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *alen)
{
	READY(accept);
	if (!AUDITING())
		return sa_real.accept(fd, addr, alen);
	return do_accept(fd, addr, alen, 0, 0);
}

SA_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *alen, int flags)
{
	READY(accept4);
	if (!AUDITING())
		return sa_real.accept4(fd, addr, alen, flags);
	return do_accept(fd, addr, alen, flags, 1);
}

SA_FORK_TEXT SA_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	uint64_t t0, t1;
	int ret, err;

	READY(connect);
	if (!AUDITING())
		return sa_real.connect(fd, addr, len);
	t0 = sa_now_ns();
	sa_inflight_begin(SA_INFLIGHT_CONNECT, fd, addr, len, t0);
	ret = sa_real.connect(fd, addr, len);
	err = errno;
	sa_inflight_end();
	t1 = sa_now_ns();
	HOOK(err, sa_on_connect(fd, addr, len, ret, ret == 0 ? 0 : err, t0, t1));
	return ret;
}

/* The parts of before_close off its common path, out of line so that
 * close() keeps a small frame. */
SA_FORK_TEXT static __attribute__((noinline, cold)) void close_inside(int fd)
{
	/* In a host signal handler only the lock-free part: forget fd. In a
	 * child that shares our memory, nothing at all: its fds are its own
	 * copies, our table is the parent's. */
	if (sa_in_signal && !sa_in_vfork && !IN_VM_CHILD())
		sa_fd_forget(fd);
}

SA_FORK_TEXT static __attribute__((noinline)) void close_tracked(int fd, struct sa_sock *s)
{
	int err = errno;

	if (sa_active())
		sa_on_close(fd, s);
	sa_fd_forget(fd);
	errno = err;
}

/* Forget what we knew about fd before it is closed: another thread may get
 * the number back from accept() the moment close returns. Inline in close()
 * (a connection per request closes through it). */
static inline __attribute__((always_inline)) void before_close(int fd)
{
	struct sa_sock *s;

	/* A handler that jumped out of the shim is over (sa_signal_escaped
	 * reports the call it left, which may be the one on this fd). */
	if ((sa_in_shim && !sa_signal_escaped()) || IN_VM_CHILD()) {
		close_inside(fd);
		return;
	}
	sa_in_shim++;
	sa_sink_before_close(fd);   /* keeps errno */
	/* No system call, no errno: a connection that was only counted (its
	 * origin word: such an fd never has an entry, since tracking the
	 * number clears the word), or one with no entry (not tracked, or not
	 * a socket of ours); nothing at all in a process that never set the
	 * table up (a shell). */
	if (sa_fd_table_used() && sa_fd_origin_take(fd) == 0 && SA_UNLIKELY((s = sa_fd_get(fd)) != NULL))
		close_tracked(fd, s);
	sa_in_shim--;
}

SA_FORK_TEXT void sa_before_close(int fd)
{
	before_close(fd);
}

SA_FORK_TEXT SA_EXPORT int close(int fd)
{
	READY(close);
	before_close(fd);
	return sa_real.close(fd);
}

static void forget_one(int fd, struct sa_sock *s, void *arg)
{
	const unsigned int *r = arg;

	if ((unsigned int)fd >= r[0] && (unsigned int)fd <= r[1]) {
		if (sa_active())
			sa_on_close_in_range(fd, s);
		sa_fd_forget(fd);
	}
}

/* Fds first..last are about to close: move our log out of the way and
 * forget the sockets, with the host's errno kept. */
void sa_before_close_range(unsigned int first, unsigned int last)
{
	unsigned int r[2] = { first, last };
	int err = errno;

	sa_in_shim++;
	sa_sink_before_close_range(first, last);
	sa_fd_foreach(forget_one, r);
	sa_fd_origin_clear_range(first, last);
	sa_in_shim--;
	errno = err;
}

SA_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	READY(close_range);
	/* CLOSE_RANGE_CLOEXEC only marks fds; nothing is closed now. Flags
	 * beyond UNSHARE and CLOEXEC make the kernel fail before closing
	 * anything: then our sink and our table must stay as they are. */
	int ret, err, ours = !sa_in_shim && !IN_VM_CHILD() &&
			     !(flags & ~(int)(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) &&
			     !(flags & (int)CLOSE_RANGE_CLOEXEC) && first <= last;

	if (ours)
		sa_before_close_range(first, last);
	ret = sa_real.close_range(first, last, flags);
	if (ours && sa_active()) {
		err = errno;
		HOOK(err, sa_on_close_range_done());
	}
	return ret;
}

/* closefrom() (glibc 2.34) reaches the kernel through glibc's internal
 * close_range, past our wrapper: without this one a daemon's closefrom(3)
 * would leave our table naming sockets that are gone. It cannot fail. */
SA_EXPORT void closefrom(int lowfd)
{
	READY(closefrom);
	int err, ours = !sa_in_shim && !IN_VM_CHILD();

	if (ours)
		sa_before_close_range(lowfd > 0 ? (unsigned int)lowfd : 0, ~0U);
	sa_real.closefrom(lowfd);
	if (ours && sa_active()) {
		err = errno;
		HOOK(err, sa_on_close_range_done());
	}
}

SA_FORK_TEXT SA_EXPORT int dup(int fd)
{
	int ret, err;

	READY(dup);
	ret = sa_real.dup(fd);
	if (ret >= 0 && !sa_in_shim) {
		err = errno;
		HOOK(err, sa_fd_dup(fd, ret));
	}
	return ret;
}

/* Whether dup2/dup3 will close newfd, when that concerns us: onto itself
 * it closes nothing (dup3 fails), and with a bad oldfd or bad flags the
 * kernel fails before touching newfd. Moving our sink out of the way then
 * would leave our fd behind, and forgetting newfd would lose what we know
 * about a socket that stays open. oldfd is asked about only when newfd is
 * our log's or one we know (a shell's or a spawner's dup2 onto 0, 1 and 2
 * makes no system call of ours). */
SA_FORK_TEXT int sa_dup_closes_newfd(int oldfd, int newfd, int flags, int is3)
{
	int err = errno, ok;

	if (oldfd == newfd || newfd < 0 || (is3 && (flags & ~O_CLOEXEC)))
		return 0;
	if (!sa_sink_near(newfd) &&
	    (!sa_fd_table_used() || (sa_fd_origin_peek(newfd) == 0 && sa_fd_get(newfd) == NULL)))
		return 0;
	ok = fcntl(oldfd, F_GETFD) >= 0;
	errno = err;
	return ok;
}

SA_FORK_TEXT static int do_dup2(int oldfd, int newfd, int flags, int is3)
{
	int ret, err;

	if (sa_dup_closes_newfd(oldfd, newfd, flags, is3))
		sa_before_close(newfd);
	ret = is3 ? sa_real.dup3(oldfd, newfd, flags) : sa_real.dup2(oldfd, newfd);
	if (ret >= 0 && oldfd != newfd && !sa_in_shim) {
		err = errno;
		HOOK(err, sa_fd_dup(oldfd, newfd));
	}
	return ret;
}

SA_FORK_TEXT SA_EXPORT int dup2(int oldfd, int newfd)
{
	READY(dup2);
	return do_dup2(oldfd, newfd, 0, 0);
}

SA_FORK_TEXT SA_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	READY(dup3);
	return do_dup2(oldfd, newfd, flags, 1);
}
