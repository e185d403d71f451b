/*
 * interpose_io.c: the read/write-family wrappers (with interpose.c and
 * interpose_proc.c, the only files that define libc names). They exist
 * only to see the first I/O on accepted sockets, the I/O that completes a
 * non-blocking connect, and sendto/sendmsg with MSG_FASTOPEN (a connect in
 * a send); any other fd costs one table lookup, or none while no fd is
 * watched. Nothing here may change what the host observes.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/core.h"

/* Glibc's _FORTIFY_SOURCE entry points have no public prototypes. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
		       struct sockaddr *a, socklen_t *al);

/* As in interpose.c: a hook inside the guard with the host's errno kept;
 * the real symbols resolved; our own calls and disabled processes pass. */
/* Our part after the real call, errno as the call left it. Only while we
 * audit: a detach can come while the call blocks (the thread stopped in
 * accept() goes on in our wrapper once it returns), and after it nothing
 * of the audit is set up (sa_cfg() is NULL). */
#define HOOK(err, stmt) do { \
	if (SA_LIKELY(sa_active())) { sa_in_shim++; stmt; sa_in_shim--; } \
	errno = (err); } while (0)
/* The real function, resolved on first use by a cold function of its own
 * that takes no argument (see interpose.c): no register saved around it on
 * the hot path. */
#define COLD_RESOLVER(fn) \
	static __attribute__((noinline, cold)) void resolve_##fn(void) { sa_real_one(SA_REAL_SLOT(fn)); }
#define READY(fn) do { if (SA_UNLIKELY(!sa_real.fn)) resolve_##fn(); } while (0)
COLD_RESOLVER(read) COLD_RESOLVER(write) COLD_RESOLVER(recv) COLD_RESOLVER(send) COLD_RESOLVER(recvfrom)
COLD_RESOLVER(sendto) COLD_RESOLVER(recvmsg) COLD_RESOLVER(sendmsg) COLD_RESOLVER(readv)
COLD_RESOLVER(writev) COLD_RESOLVER(read_chk) COLD_RESOLVER(recv_chk) COLD_RESOLVER(recvfrom_chk)
#define AUDITING() ((SA_LIKELY(!sa_in_shim) || sa_signal_escaped()) && !IN_VM_CHILD() && sa_ensure_init())

/* ---- I/O: only fds we watch go further than one lookup ------------------- */

/* Out of line and cold, so the common path of every I/O wrapper (an fd we
 * do not watch) is one table lookup and needs no saved registers: measured
 * with bench/callgrind.sh, read() on a pipe went from +38 to +19 instructions
 * over the real call. errno is still the real call's when this runs. */
SA_FORK_TEXT static __attribute__((noinline, cold)) void io_watched(int fd, struct sa_sock *s,
						       enum sa_io_dir dir, ssize_t ret)
{
	int err = errno;

	if (sa_in_shim)
		return;
	HOOK(err, sa_on_io(fd, s, dir, ret, ret < 0 ? err : 0));
}

/* The I/O wrappers' body. While no fd is watched (sa_watching: never
 * below the true count, raised before a watch is set, and a watch is set
 * on a connection before the host gets its number) the real call is a
 * tail call, with no frame of ours around it. Otherwise the fd is looked
 * up after the call. */
#define IO_WRAP(name, dir, ...) do {                                            \
	struct sa_sock *s_;                                                      \
	ssize_t ret_;                                                            \
	READY(name);                                                             \
	if (SA_LIKELY(!sa_watching_any()))                                       \
		return sa_real.name(__VA_ARGS__);                                \
	ret_ = sa_real.name(__VA_ARGS__);                                        \
	if ((s_ = sa_fd_get(fd)) != NULL && (sa_sock_flags(s_) & SA_F_WATCH_IO))          \
		io_watched(fd, s_, dir, ret_);                                   \
	return ret_;                                                             \
} while (0)

SA_FORK_TEXT SA_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	IO_WRAP(read, SA_IO_READ, fd, buf, n);
}

SA_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	IO_WRAP(read_chk, SA_IO_READ, fd, buf, n, buflen);
}

SA_FORK_TEXT SA_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	IO_WRAP(write, SA_IO_WRITE, fd, buf, n);
}

SA_FORK_TEXT SA_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	IO_WRAP(recv, SA_IO_READ, fd, buf, n, flags);
}

SA_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	IO_WRAP(recv_chk, SA_IO_READ, fd, buf, n, buflen, flags);
}

SA_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	IO_WRAP(send, SA_IO_WRITE, fd, buf, n, flags);
}

SA_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *a, socklen_t *al)
{
	IO_WRAP(recvfrom, SA_IO_READ, fd, buf, n, flags, a, al);
}

SA_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
				 struct sockaddr *a, socklen_t *al)
{
	IO_WRAP(recvfrom_chk, SA_IO_READ, fd, buf, n, buflen, flags, a, al);
}

/* sendto/sendmsg with MSG_FASTOPEN: a connect and a send in one call
 * (tcp_sendmsg_fastopen), timed like connect(). A socket already
 * connecting (or connected) is I/O as usual. addr is read only when the
 * kernel could read it (sa_on_fastopen). */
static __attribute__((noinline, cold)) ssize_t fastopen_send(int fd, const void *buf, size_t n, int flags,
							     const struct sockaddr *a, socklen_t al,
							     struct msghdr *m)
{
	struct sa_sock *s;
	uint64_t t0, t1;
	ssize_t ret;
	int err;

	if (!AUDITING())
		return m ? sa_real.sendmsg(fd, m, flags) : sa_real.sendto(fd, buf, n, flags, a, al);
	t0 = sa_now_ns();
	ret = m ? sa_real.sendmsg(fd, m, flags) : sa_real.sendto(fd, buf, n, flags, a, al);
	err = errno;
	t1 = sa_now_ns();
	if ((s = sa_fd_get(fd)) != NULL && (sa_sock_flags(s) & (SA_F_WATCH_IO | SA_F_CONNECTING))) {
		if (sa_sock_flags(s) & SA_F_WATCH_IO)
			io_watched(fd, s, SA_IO_WRITE, ret);
	} else {
		if (m && (ret >= 0 || err != EFAULT)) {
			a = m->msg_name;
			al = m->msg_namelen;
		} else if (m) {
			a = NULL;
			al = 0;
		}
		HOOK(err, sa_on_fastopen(fd, a, al, ret, ret < 0 ? err : 0, t0, t1));
	}
	errno = err;
	return ret;
}

SA_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *a, socklen_t al)
{
	if (SA_UNLIKELY(flags & MSG_FASTOPEN)) {
		READY(sendto);
		return fastopen_send(fd, buf, n, flags, a, al, NULL);
	}
	IO_WRAP(sendto, SA_IO_WRITE, fd, buf, n, flags, a, al);
}

SA_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	IO_WRAP(recvmsg, SA_IO_READ, fd, m, flags);
}

SA_EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	if (SA_UNLIKELY(flags & MSG_FASTOPEN)) {
		READY(sendmsg);
		return fastopen_send(fd, NULL, 0, flags, NULL, 0, (struct msghdr *)m);
	}
	IO_WRAP(sendmsg, SA_IO_WRITE, fd, m, flags);
}

SA_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	IO_WRAP(readv, SA_IO_READ, fd, iov, n);
}

SA_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	IO_WRAP(writev, SA_IO_WRITE, fd, iov, n);
}

