/*
 * sink_io.c: the ways one whole line goes to one fd, for sink.c: raw
 * writes (traps, not cancellation points), O_APPEND files with torn-line
 * recovery, pipes with SIGPIPE kept from the host, stream sockets with
 * their unsent tail, and the count of lines that could not be written.
 *
 * Holds no lock: the few shared values change by atomic operations only.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "line/line.h"

static uint64_t dropped SA_PROC_PAGE;            /* lines not written, for the summary */
uint64_t sa_sinkio_unreported SA_PROC_PAGE;      /* dropped since the last line written */
static const char *drop_reason;     /* atomic: why the last line was dropped */
static int torn;                    /* a short write left a partial line in a file */
/* A stream socket named by fd:N: the unsent tail of the last line. */
static char tail[SA_LINE_MAX + 64];
static size_t tail_len;
static pid_t tail_owner SA_PROC_PAGE;            /* tid writing to the stream now; atomic */

void sa_sinkio_drop(const char *why)
{
	__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sa_sinkio_unreported, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&drop_reason, why, __ATOMIC_RELAXED);
}

ssize_t sa_sinkio_write_raw(int fd, const char *p, size_t n)
{
	return sa_syscall(SYS_write, fd, p, n);
}

int sa_sinkio_close(int fd)
{
	return (int)sa_syscall(SYS_close, fd);
}

/* struct statx and its mask bits, from the kernel's uapi linux/stat.h, for
 * a C library whose headers lack them (musl before 1.2.5; glibc before
 * 2.28). The layout is the kernel's ABI. */
#ifndef STATX_TYPE
#define STATX_TYPE 0x00000001U
#define STATX_INO 0x00000100U
struct statx_timestamp {
	int64_t tv_sec;
	uint32_t tv_nsec;
	int32_t reserved;
};
struct statx {
	uint32_t stx_mask, stx_blksize;
	uint64_t stx_attributes;
	uint32_t stx_nlink, stx_uid, stx_gid;
	uint16_t stx_mode, spare0;
	uint64_t stx_ino, stx_size, stx_blocks, stx_attributes_mask;
	struct statx_timestamp stx_atime, stx_btime, stx_ctime, stx_mtime;
	uint32_t stx_rdev_major, stx_rdev_minor, stx_dev_major, stx_dev_minor;
	uint64_t spare2[14];
};
#endif

/*
 * The identity (device, inode, type) of an open fd, without asking for its
 * times: a queried ctime makes the next write to an ext4/xfs/tmpfs file
 * dirty the inode (multigrain timestamps, 6.13+).
 */
int sa_sinkio_identify(int fd, dev_t *dev, ino_t *ino, mode_t *mode)
{
	struct statx sx;
	struct stat st;

	if (sa_syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO, &sx) == 0 &&
	    (sx.stx_mask & (STATX_TYPE | STATX_INO)) == (STATX_TYPE | STATX_INO)) {
		*dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
		*ino = (ino_t)sx.stx_ino;
		*mode = sx.stx_mode;
		return 0;
	}
	if (errno != ENOSYS && errno != EPERM && errno != EINVAL)
		return -1;
	if (sa_fstat(fd, &st) != 0)
		return -1;
	*dev = st.st_dev;
	*ino = st.st_ino;
	*mode = st.st_mode;
	return 0;
}

/* How many fd slots the process's table has now (FDSize), or 0. */
static int fd_table_size(void)
{
	char buf[1024], *p;
	long n;
	int fd = (int)sa_syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	n = sa_syscall(SYS_read, fd, buf, sizeof buf - 1);
	sa_sinkio_close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "\nFDSize:");
	return p ? atoi(p + 8) : 0;
}

/*
 * Where the log's fd goes: the top of the fd table the process has now,
 * above the numbers a host gets from the kernel's lowest-free rule, without
 * making the table bigger. A table past the kernel's first 64 slots is
 * allocated, copied and freed again by every fork (dup_fd): a log fd at 900
 * makes each child of socat fork cost its parent ~10 us more in the kernel
 * (bench/socat_fork.sh), where a table of 64 is part of the child's
 * files_struct. Inside the soft limit; with a small limit still the top,
 * leaving one number to move to.
 */
static int high_fd_top(void)
{
	struct rlimit rl;
	int top = fd_table_size() - 1;

	if (top < 3)
		top = 63;           /* no /proc: the kernel's first table */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		if (rl.rlim_cur <= 32)
			return rl.rlim_cur >= 6 ? (int)rl.rlim_cur - 2 : 3;
		if ((rlim_t)top > rl.rlim_cur - 16)
			top = (int)(rl.rlim_cur - 16);
	}
	return top;
}

/* Moves fd to a high number with close-on-exec; closes the original. The
 * highest free number at or below the top: F_DUPFD takes the lowest free
 * number from its base up, so bases step down until one lands inside the
 * table (a few tries; else the number above, as before). */
int sa_sinkio_move_high(int fd)
{
	int top = high_fd_top(), base, nfd = -1;

	for (base = top; base >= 3 && base > top - 64; base -= 16) {
		if (nfd >= 0)
			sa_sinkio_close(nfd);
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, base);
		if (nfd < 0 || nfd <= top)
			break;
	}
	if (nfd < 0)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return fd;
	sa_sinkio_close(fd);
	return nfd;
}


/* Whether a background job may write to the tty without SIGTTOU. */
int sa_sinkio_tty_writable(int fd)
{
	struct termios t;
	pid_t fg = tcgetpgrp(fd);

	if (fg < 0 || fg == getpgrp())
		return 1;
	return tcgetattr(fd, &t) == 0 && !(t.c_lflag & TOSTOP);
}

/* A pipe or tty the host shares: our own O_NONBLOCK description of it for
 * this one line, so the host's blocking mode is never touched and a full
 * pipe or a stopped tty drops the line instead of stopping the host. */
int sa_sinkio_reopen_nonblock(int fd_)
{
	char proc[32];
	int fd;

	if (getauxval(AT_SECURE))
		return -EPERM;       /* would open with privileges the user lacks */
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd_);
	fd = (int)sa_syscall(SYS_openat, AT_FDCWD, proc, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

/* SIGPIPE is blocked for this thread while writing to a pipe; one our
 * write raised (and that was not already pending for the host) is taken. */
ssize_t sa_sinkio_write_pipe(int fd, const char *line, size_t len)
{
	sigset_t pipe_set, old, pending;
	int was_pending, err;
	ssize_t n;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	sa_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &pipe_set, &old, _NSIG / 8);
	n = sa_sinkio_write_raw(fd, line, len);
	err = errno;
	if (n < 0 && err == EPIPE && !was_pending) {
		/* The raw call: sigtimedwait() is a cancellation point. */
		struct timespec zero = { 0, 0 };
		sa_syscall(SYS_rt_sigtimedwait, &pipe_set, NULL, &zero, _NSIG / 8);
	}
	sa_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	errno = err;
	return n;
}


/* A short write of w bytes (ENOSPC) left the head of a line at the end of
 * the file: cut it off again when nobody wrote after it (the file ends
 * where our write ended), so the file holds whole lines only. 1 when cut.
 * (Another writer's whole line landing between our write and the lseek
 * would need the full file system to free space at that instant.) */
static int cut_partial(int fd, ssize_t w)
{
	struct stat st;
	long end = sa_syscall(SYS_lseek, fd, 0, SEEK_CUR);

	if (end < (long)w || sa_syscall(SYS_fstat, fd, &st) != 0 || st.st_size != (off_t)end ||
	    sa_syscall(SYS_ftruncate, fd, end - (long)w) != 0)
		return 0;
	sa_syscall(SYS_lseek, fd, end - (long)w, SEEK_SET);   /* a host fd without O_APPEND */
	return 1;
}

/* After a file write of w bytes (or -errno) that was not whole: a short
 * one is cut off again, or, when it cannot be (another writer appended
 * after it), the next line starts afresh. errno is left as it was. */
static int file_failed(int fd, long w, int was_torn)
{
	int saved = errno, err = w < 0 ? (int)-w : saved;

	/* An older partial line is still there unless a write ended it. */
	if ((was_torn && w <= 0) || (w > 0 && (!cut_partial(fd, w) || was_torn)))
		__atomic_store_n(&torn, 1, __ATOMIC_RELEASE);
	sa_sinkio_drop(err == ENOSPC || w > 0 ? "the file system is full" : "the log file cannot be written");
	errno = saved;
	return 0;
}

/* Files: one raw write, errno untouched (the line of nearly every call:
 * no libc call on the way). After a torn line, a newline first. */
int sa_sinkio_write_file(int fd, const char *line, size_t len)
{
	struct iovec iov[2];
	long w;

	if (SA_LIKELY(!__atomic_load_n(&torn, __ATOMIC_ACQUIRE))) {
		w = sa_syscall3_raw(SYS_write, fd, (long)line, (long)len);
		return SA_LIKELY(w == (long)len) ? 1 : file_failed(fd, w, 0);
	}
	if (!__atomic_exchange_n(&torn, 0, __ATOMIC_ACQ_REL)) {   /* another thread ended it */
		w = sa_syscall3_raw(SYS_write, fd, (long)line, (long)len);
		return w == (long)len ? 1 : file_failed(fd, w, 0);
	}
	iov[0] = (struct iovec){ (void *)"\n", 1 };
	iov[1] = (struct iovec){ (void *)line, len };
	w = sa_syscall3_raw(SYS_writev, fd, (long)iov, 2);
	return w == (long)len + 1 ? 1 : file_failed(fd, w, 1);
}


/* A stream socket named by fd:N: a line goes whole or waits as a tail. */
int sa_sinkio_write_stream(int fd, const char *line, size_t len)
{
	pid_t me = sa_tid(), cur = 0;
	ssize_t n;
	int ok = 0;

	if (!__atomic_compare_exchange_n(&tail_owner, &cur, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED) &&
	    cur != me) {
		sa_sinkio_drop("another thread is writing to the log socket");
		return 0;
	}
	/* (cur == me: a handler on this thread, or a jump out of a write.) */
	if (tail_len) {
		n = sa_syscall(SYS_sendto, fd, tail, tail_len, MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);
		if (n > 0) {
			memmove(tail, tail + n, tail_len - (size_t)n);
			tail_len -= (size_t)n;
		}
	}
	if (tail_len) {
		sa_sinkio_drop("the log socket is full");
	} else {
		n = sa_syscall(SYS_sendto, fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);
		if (n >= 0 && (size_t)n < len && len - (size_t)n <= sizeof tail) {
			memcpy(tail, line + n, len - (size_t)n);
			tail_len = len - (size_t)n;
			ok = 1;            /* whole once the tail goes */
		} else if (n == (ssize_t)len) {
			ok = 1;
		} else {
			sa_sinkio_drop("the log socket is full or closed");
		}
	}
	__atomic_store_n(&tail_owner, 0, __ATOMIC_RELEASE);
	return ok;
}


uint64_t sa_sink_take_unreported(const char **why)
{
	uint64_t n = __atomic_exchange_n(&sa_sinkio_unreported, 0, __ATOMIC_ACQ_REL);

	if (why)
		*why = __atomic_load_n(&drop_reason, __ATOMIC_RELAXED);
	return n;
}

uint64_t sa_sink_dropped(void)
{
	return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}


SA_FORK_TEXT void sa_sinkio_atfork_child(void)
{
	/* Only the forking thread exists: nobody owns the stream tail. A child
	 * counts its own drops. */
	SA_ZERO(dropped);
	SA_ZERO(sa_sinkio_unreported);
	SA_ZERO(tail_owner);
}

/* A datagram socket to /dev/log (syslog, or the journal behind it). */
int sa_sinkio_open_syslog(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	int fd = SA_REAL(socket)(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (sa_syscall(SYS_connect, fd, (struct sockaddr *)&sun, sizeof sun) != 0) {   /* libc's is a cancellation point */
		int err = errno;
		sa_sinkio_close(fd);
		return -err;
	}
	return sa_sinkio_move_high(fd);
}

/* One line as one syslog datagram, tagged with our pid; 1 when sent. */
int sa_sinkio_write_syslog(int fd, const char *line, size_t len)
{
	char buf[SA_LINE_MAX + 64];
	int hl = snprintf(buf, sizeof buf, "<14>sockaudit[%ld]: ", (long)sa_pid());

	if (hl <= 0 || (size_t)hl + len > sizeof buf) {
		sa_sinkio_drop("the line is too long for syslog");
		return 0;
	}
	memcpy(buf + hl, line, len - 1);   /* no newline in syslog */
	if (sa_syscall(SYS_sendto, fd, buf, (size_t)hl + len - 1, MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0) ==
	    (long)((size_t)hl + len - 1))
		return 1;
	sa_sinkio_drop("syslog is not taking messages");
	return 0;
}

/* The syslog socket kept in *slot, opened into it when there is none (a
 * thread that loses the race uses the winner's). */
int sa_sinkio_syslog_slot(_Atomic int *slot)
{
	int fd = atomic_load_explicit(slot, memory_order_acquire), expected = -1;

	if (fd >= 0)
		return fd;
	fd = sa_sinkio_open_syslog();
	if (fd >= 0 && !atomic_compare_exchange_strong_explicit(slot, &expected, fd, memory_order_acq_rel,
								memory_order_acquire)) {
		sa_sinkio_close(fd);
		fd = expected;
	}
	return fd;
}
