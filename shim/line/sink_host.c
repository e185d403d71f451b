/*
 * sink_host.c: the sink's lines to a host fd, stderr (the default) or
 * fd:N: what the fd is (a file, a pipe, a tty, a socket, the journal's
 * stream), looked at again when the host closes or replaces it and once a
 * second, and each kind written by its rule (sink.c's header says which).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "digits.h"
#include "line/line.h"

/* What the host fd (fd 2 or fd:N) is, as last looked at. */
enum cls { CL_UNKNOWN, CL_FILE, CL_NULL, CL_PIPE, CL_TTY, CL_STREAM, CL_DGRAM, CL_JOURNAL, CL_NONE };

int sa_sink_host_fd = 2;            /* stderr and fd:N: the host's own fd; read by line.h */
static int explicit_fd;             /* fd:N: the user named it (sockets allowed) */
static int cls = CL_UNKNOWN;        /* atomic */
static int cls_nonblock;            /* host fd already O_NONBLOCK */
static long cls_checked;            /* coarse second of the last look */
static const char *cls_reason;      /* why the host fd is not used */
static dev_t host_dev;
static ino_t host_ino;
/* A pipe or tty's per-line fd a handler jumped out of: the next line on
 * this thread closes it (sa_sink_write). */
__thread int sa_sink_stale_fd SA_TLS = -1;

/* ---- the host's fd (stderr, fd:N) --------------------------------------- */

/* A socket on fd 2 is the journal only when JOURNAL_STREAM names it. */
static int is_journal(dev_t dev, ino_t ino)
{
	const char *js = secure_getenv("JOURNAL_STREAM");
	unsigned long long d, i;

	return js && (js = sa_digits(js, &d)) && *js == ':' && sa_digits(js + 1, &i) &&
	       d == (unsigned long long)dev && i == (unsigned long long)ino;
}

static enum cls classify(void)
{
	dev_t dev;
	ino_t ino;
	mode_t mode = 0;
	int fl = -1, type = 0;
	socklen_t tl = sizeof type;
	enum cls c;

	if (sa_sinkio_identify(sa_sink_host_fd, &dev, &ino, &mode) != 0 || (fl = fcntl(sa_sink_host_fd, F_GETFL)) < 0 ||
	    (fl & O_ACCMODE) == O_RDONLY)
		c = CL_NONE;
	else if (S_ISREG(mode))
		c = CL_FILE;
	else if (S_ISCHR(mode))
		c = isatty(sa_sink_host_fd) ? CL_TTY : (major(dev) == 1 && minor(dev) == 3) ? CL_NULL : CL_FILE;
	else if (S_ISFIFO(mode))
		c = CL_PIPE;
	else if (S_ISSOCK(mode)) {
		if (SA_REAL(getsockopt)(sa_sink_host_fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0)
			c = CL_NONE;
		else if (!explicit_fd)
			c = is_journal(dev, ino) ? CL_JOURNAL : CL_NONE;   /* inetd: never */
		else
			c = type == SOCK_STREAM ? CL_STREAM : CL_DGRAM;

	} else
		c = CL_FILE;
	cls_reason = c == CL_NONE && S_ISSOCK(mode) ? "stderr is a socket (inetd-style): never written; set SOCKAUDIT_LOG" : NULL;
	cls_nonblock = fl >= 0 && (fl & O_NONBLOCK);
	host_dev = dev;
	host_ino = ino;
	__atomic_store_n(&cls_checked, sa_sinkio_now_s(), __ATOMIC_RELAXED);
	__atomic_store_n(&cls, (int)c, __ATOMIC_RELEASE);
	return c;
}

static int write_shared(const char *line, size_t len, int tty)
{
	ssize_t n;
	int fd;

	if (tty && !sa_sinkio_tty_writable(sa_sink_host_fd)) {
		sa_sinkio_drop("a background job on a tty with tostop");
		return 0;
	}
	if (!tty && cls_nonblock)
		return sa_sinkio_write_pipe(sa_sink_host_fd, line, len) == (ssize_t)len ? 1 : (sa_sinkio_drop("the pipe is full or closed"), 0);
	fd = sa_sinkio_reopen_nonblock(sa_sink_host_fd);
	if (fd < 0) {
		sa_sinkio_drop(fd == -ENXIO ? "the pipe has no reader" : "the pipe or tty cannot be reopened non-blocking");
		return 0;
	}
	/* If a handler jumps out of the write, the next line closes it. */
	sa_sink_stale_fd = fd;
	n = tty ? sa_sinkio_write_raw(fd, line, len) : sa_sinkio_write_pipe(fd, line, len);
	sa_sink_stale_fd = -1;
	sa_sinkio_close(fd);
	if (n != (ssize_t)len) {
		sa_sinkio_drop(tty ? "the tty is not taking output" : "the pipe is full or closed");
		return 0;
	}
	return 1;
}

int sa_sinkhost_write(const char *line, size_t len)
{
	int c = __atomic_load_n(&cls, __ATOMIC_ACQUIRE);

	/* Looked at again when the host closed or replaced the fd (seen by
	 * our wrappers), and once a second for changes we cannot see
	 * (daemon()'s internal dup2, sa_syscall(SYS_dup2)). */
	if (c == CL_UNKNOWN || sa_sinkio_now_s() != __atomic_load_n(&cls_checked, __ATOMIC_RELAXED))
		c = classify();
	switch (c) {
	case CL_FILE:
		return sa_sinkio_write_file(sa_sink_host_fd, line, len);
	case CL_PIPE:
		return write_shared(line, len, 0);
	case CL_TTY:
		return write_shared(line, len, 1);
	case CL_STREAM:
		return sa_sinkio_write_stream(sa_sink_host_fd, line, len);
	case CL_DGRAM:
		if (sa_syscall(SYS_sendto, sa_sink_host_fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0) == (long)len)
			return 1;
		sa_sinkio_drop("the log socket is full or closed");
		return 0;
	case CL_NULL:
		sa_sinkio_drop("stderr is /dev/null");
		return 0;
	case CL_JOURNAL:
		return -1;           /* the caller sends it to syslog */
	default:
		sa_sinkio_drop(explicit_fd ? "the log fd is closed or not writable" : cls_reason ? cls_reason : "stderr is closed or not writable");
		return 0;
	}
}


void sa_sinkhost_use(int fd, int explicit)
{
	sa_sink_host_fd = fd;
	explicit_fd = explicit;
	__atomic_store_n(&cls, CL_UNKNOWN, __ATOMIC_RELEASE);
}

void sa_sinkhost_forget(void)
{
	__atomic_store_n(&cls, CL_UNKNOWN, __ATOMIC_RELEASE);
}

int sa_sinkhost_file_fd(long now)
{
	return __atomic_load_n(&cls, __ATOMIC_ACQUIRE) == CL_FILE &&
	       now == __atomic_load_n(&cls_checked, __ATOMIC_RELAXED) ? sa_sink_host_fd : -1;
}
