/*
 * sink.c: where our JSON lines go: stderr, a path, fd:N or syslog.
 *
 * Owns our one log fd. It must never block the host, kill it with SIGPIPE,
 * take a low fd number from it, or write into an fd that has become the
 * host's. Lines that cannot be written are dropped and counted. Our fd sits
 * high (F_DUPFD_CLOEXEC); when the host closes or dup2s over it we move out
 * of the way first, and a path sink is reopened when it was lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "out/out.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int sink_fd = -1;            /* read without the lock by sa_sink_fd() */
static enum sa_sink_kind kind = SA_SINK_STDERR;
static char path[512];
static dev_t sink_dev;
static ino_t sink_ino;
static int sink_is_fifo, sink_is_socket;
static uint64_t dropped;
static time_t last_reopen;
static int retry_reopen;            /* the host freed an fd since a failed reopen */
static char describe[560] = "stderr";
static char pending_path[512];      /* a forked child's own %p path */

static int high_fd_base(void)
{
	struct rlimit rl;
	rlim_t base = 900;

	/* Stay well above the fds a host uses, below what select() can see
	 * would not matter for us, and inside the soft limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		/* A small limit: still the top, leaving one number above us to
		 * move to when the host closes or dup2s over ours. Taking 3 would
		 * shift every fd number the host gets afterwards. */
		if (rl.rlim_cur <= 32)
			return rl.rlim_cur >= 6 ? (int)rl.rlim_cur - 2 : 3;
		if (base > rl.rlim_cur - 16)
			base = rl.rlim_cur - 16;
	}
	return (int)base;
}

/* Moves fd to a high number with close-on-exec; closes the original. */
static int move_high(int fd, int min)
{
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, min > 3 ? min : high_fd_base());

	if (nfd < 0)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return fd;
	sa_real.close(fd);
	return nfd;
}

/*
 * The identity (device, inode, type) of an open fd, without asking for its
 * times. fstat() asks for mtime and ctime, and on a file system with
 * multigrain timestamps (ext4, xfs, btrfs, tmpfs since 6.13) a queried
 * ctime makes the next write stamp a fine-grained time and dirty the
 * inode: with an fstat before every line, every line paid an ext4 journal
 * update (file_update_time was 3 % of an nginx worker at trace level,
 * bench/profile.sh). statx() for STATX_TYPE | STATX_INO queries neither.
 */
static int identify(int fd, dev_t *dev, ino_t *ino, mode_t *mode)
{
	struct statx sx;
	struct stat st;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO, &sx) == 0 &&
	    (sx.stx_mask & (STATX_TYPE | STATX_INO)) == (STATX_TYPE | STATX_INO)) {
		*dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
		*ino = (ino_t)sx.stx_ino;
		*mode = sx.stx_mode;
		return 0;
	}
	if (errno != ENOSYS && errno != EPERM && errno != EINVAL)
		return -1;   /* EBADF: not open; ENOSYS/EPERM: old kernel or a seccomp filter */
	if (fstat(fd, &st) != 0)
		return -1;
	*dev = st.st_dev;
	*ino = st.st_ino;
	*mode = st.st_mode;
	return 0;
}

static void remember(int fd)
{
	dev_t dev;
	ino_t ino;
	mode_t mode;

	if (identify(fd, &dev, &ino, &mode) != 0) {
		sa_real.close(fd);
		sink_fd = -1;
		return;
	}
	sink_dev = dev;
	sink_ino = ino;
	sink_is_fifo = S_ISFIFO(mode);
	sink_is_socket = S_ISSOCK(mode);
	__atomic_store_n(&sink_fd, fd, __ATOMIC_RELEASE);
}

/* Our own copy of a host fd. A pipe gets a new open file description
 * (reopened through /proc) so O_NONBLOCK on it never touches the host's. */
static int own_copy(int src)
{
	struct stat st;
	char proc[64];
	int fd;

	if (fstat(src, &st) != 0)
		return -errno;
	if (S_ISFIFO(st.st_mode)) {
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", src);
		fd = open(proc, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0)
			return move_high(fd, 0);
	}
	fd = fcntl(src, F_DUPFD_CLOEXEC, high_fd_base());
	if (fd < 0)
		fd = fcntl(src, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -errno : fd;
}

static int open_path(void)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
		      0600);

	return fd < 0 ? -errno : move_high(fd, 0);
}

static int open_syslog(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	int fd = sa_real.socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (sa_real.connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		int err = errno;
		sa_real.close(fd);
		return -err;
	}
	return move_high(fd, 0);
}

int sa_sink_open(const struct sa_config *c)
{
	int fd, err = 0;

	pthread_mutex_lock(&lock);
	kind = c->sink;
	switch (kind) {
	case SA_SINK_PATH:
		snprintf(path, sizeof path, "%s", c->path);
		snprintf(describe, sizeof describe, "%s", path);
		fd = open_path();
		break;
	case SA_SINK_FD:
		snprintf(describe, sizeof describe, "fd:%d", c->sink_fd);
		fd = fcntl(c->sink_fd, F_GETFL);
		if (fd >= 0 && (fd & O_ACCMODE) == O_RDONLY)
			fd = -EBADF;        /* not writable: say so, fall back */
		else
			fd = own_copy(c->sink_fd);
		break;
	case SA_SINK_SYSLOG:
		snprintf(describe, sizeof describe, "syslog");
		fd = open_syslog();
		break;
	default:
		snprintf(describe, sizeof describe, "stderr");
		fd = own_copy(2);
		break;
	}
	if (fd < 0 && kind != SA_SINK_STDERR) {
		/* Fall back to stderr; the caller writes one warning there. */
		err = fd;
		kind = SA_SINK_STDERR;
		snprintf(describe, sizeof describe, "stderr");
		fd = own_copy(2);
	}
	if (fd >= 0)
		remember(fd);
	else
		err = err ? err : fd;
	pthread_mutex_unlock(&lock);
	return err;
}

/* Is our fd still the file we opened? A host may have closed it behind
 * our back (syscall(), __close_nocancel) and got the number again. */
static int still_ours(int fd)
{
	dev_t dev;
	ino_t ino;
	mode_t mode;

	return identify(fd, &dev, &ino, &mode) == 0 && dev == sink_dev && ino == sink_ino;
}

static ssize_t write_fifo(int fd, const char *line, size_t len)
{
	sigset_t pipe_set, old, pending;
	int was_pending, err;
	ssize_t n;

	/* Block SIGPIPE for this thread while writing; if our write raised it
	 * (and it was not already pending for the host), consume it. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	n = sa_real.write(fd, line, len);
	err = errno;
	if (n < 0 && err == EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return n;
}

/* A forked child moves to its own file when it can create it. */
static void switch_to_pending(void)
{
	char old[sizeof path];
	int fd;

	memcpy(old, path, sizeof old);
	memcpy(path, pending_path, sizeof path);
	pending_path[0] = '\0';
	fd = open_path();
	if (fd < 0) {
		memcpy(path, old, sizeof path);
		return;
	}
	if (sink_fd >= 0 && still_ours(sink_fd))
		sa_real.close(sink_fd);
	remember(fd);
	snprintf(describe, sizeof describe, "%s", path);
}

void sa_sink_write(const char *line, size_t len)
{
	int saved = errno;
	ssize_t n = -1;
	int fd;

	pthread_mutex_lock(&lock);
	if (SA_UNLIKELY(pending_path[0]))
		switch_to_pending();
	fd = sink_fd;
	if (fd >= 0 && !still_ours(fd)) {
		/* Not ours any more: never write into it, never close it. */
		__atomic_store_n(&sink_fd, -1, __ATOMIC_RELEASE);
		fd = -1;
	}
	if (fd < 0 && kind == SA_SINK_PATH) {
		time_t now = time(NULL);
		/* One attempt a second, or right after the host closed an fd: a
		 * reopen that failed with EMFILE can work now. */
		if (now != last_reopen || __atomic_exchange_n(&retry_reopen, 0, __ATOMIC_RELAXED)) {
			last_reopen = now;
			fd = open_path();
			if (fd >= 0)
				remember(fd);
			fd = sink_fd;
		}
	}
	if (fd >= 0) {
		if (kind == SA_SINK_SYSLOG) {
			char buf[SA_LINE_MAX + 64];
			int hl = snprintf(buf, sizeof buf, "<14>sockaudit[%ld]: ", (long)sa_pid());
			if (hl > 0 && (size_t)hl + len <= sizeof buf) {
				memcpy(buf + hl, line, len - 1);   /* no newline in syslog */
				n = sa_real.send(fd, buf, (size_t)hl + len - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
			}
		} else if (sink_is_socket) {
			n = sa_real.send(fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		} else if (sink_is_fifo) {
			n = write_fifo(fd, line, len);
		} else {
			n = sa_real.write(fd, line, len);
		}
	}
	if (n != (ssize_t)len)
		__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
	errno = saved;
}

static void relocate_above(unsigned int last)
{
	int fd = sink_fd, nfd = -1;

	if (last < (unsigned int)INT32_MAX - 1)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)last + 1);
	if (nfd >= 0) {
		__atomic_store_n(&sink_fd, nfd, __ATOMIC_RELEASE);
		/* The host's own call closes the old number: not us. */
	} else {
		/* Nowhere to go: the host's call will close it; a path sink is
		 * reopened on the next line. */
		__atomic_store_n(&sink_fd, -1, __ATOMIC_RELEASE);
	}
}

void sa_sink_before_close(int fd)
{
	int cur = __atomic_load_n(&sink_fd, __ATOMIC_ACQUIRE);

	if (cur < 0 && fd >= 0)
		__atomic_store_n(&retry_reopen, 1, __ATOMIC_RELAXED);
	if (fd < 0 || fd != cur)
		return;
	pthread_mutex_lock(&lock);
	if (fd == sink_fd)
		relocate_above((unsigned int)fd);
	pthread_mutex_unlock(&lock);
}

void sa_sink_before_close_range(unsigned int first, unsigned int last)
{
	int fd = __atomic_load_n(&sink_fd, __ATOMIC_ACQUIRE);

	if (fd < 0)
		__atomic_store_n(&retry_reopen, 1, __ATOMIC_RELAXED);
	if (fd < 0 || (unsigned int)fd < first || (unsigned int)fd > last)
		return;
	pthread_mutex_lock(&lock);
	fd = sink_fd;
	if (fd >= 0 && (unsigned int)fd >= first && (unsigned int)fd <= last)
		relocate_above(last);
	pthread_mutex_unlock(&lock);
}

int sa_sink_fd(void)
{
	return __atomic_load_n(&sink_fd, __ATOMIC_ACQUIRE);
}

const char *sa_sink_describe(void)
{
	return describe;
}

uint64_t sa_sink_dropped(void)
{
	return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

void sa_sink_atfork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void sa_sink_atfork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

void sa_sink_atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	dropped = 0;
}

void sa_sink_reopen_path(const char *newpath)
{
	if (kind != SA_SINK_PATH)
		return;
	/* Opened lazily by the next line; until then, and if the child may not
	 * create it (nginx workers drop to nobody), the inherited fd stays. */
	snprintf(pending_path, sizeof pending_path, "%s", newpath);
}
