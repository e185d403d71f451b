/*
 * sink.c: where our JSON lines go: stderr (the default), fd:N, a path,
 * syslog or the journal (journal.c).
 *
 * The host's rules, and how each is kept:
 * - Never block or stop the host: no lock anywhere on this path; a pipe or
 *   tty the host shares is written through a per-line O_NONBLOCK reopen
 *   (its own file description), and dropped (counted) when that is not
 *   possible; a tty only from the foreground process group; files are
 *   written with O_APPEND semantics and never wait on a reader.
 * - Hold nothing across a call that can block, be cancelled or be
 *   interrupted: a line is built on the caller's stack and written with one
 *   raw write (a trap, not a cancellation point); shared state changes
 *   by compare-and-swap only. A signal handler, a siglongjmp or a
 *   cancellation can leave at most one line unwritten.
 * - Never write where the host's peer reads: the default never writes
 *   into a socket on fd 2 (inetd, systemd Accept=yes); only an explicit
 *   fd:N may name a socket.
 * - Hold no descriptor the host can see while there is nothing to write,
 *   and never keep the caller's pipe or tty open: stderr and fd:N are the
 *   host's own fds, never duplicated; a path (or syslog) sink is opened at
 *   the first line, high and close-on-exec.
 * - Never open with privilege what the user could not: a setuid process
 *   (AT_SECURE) does not reopen anything through /proc.
 * - Whole lines only: a line is written in one call or not at all; a short
 *   write to a file leaves a flag so the next line starts on a new line; a
 *   stream socket keeps its unsent tail and sends it before anything else.
 * - Never silent: every line not written is counted (sa_sink_dropped) with
 *   the reason, which the emit path reports on the next line it writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "digits.h"
#include "line/line.h"

static enum sa_sink_kind kind = SA_SINK_STDERR;
/* Global, not static: line.h's inline close check reads this,
 * sa_sink_host_fd (sink_host.c) and sa_sink_own_failed. */

_Atomic int sa_sink_own_fd = -1;            /* our fd: path or syslog, opened at the first line; atomic */
int sa_sink_own_failed SA_START_DATA;             /* errno of the last failed open */
static dev_t own_dev;
static ino_t own_ino;
static char path[512];
static const char *path_refused;    /* why the path was refused, if it was */
/* A forked child's copy of its parent's file (%p), kept until the child's
 * own file opens, and used instead if it may not (nginx workers drop to
 * nobody). sa_sink_inherited_fd is read by the inline close check. */
_Atomic int sa_sink_inherited_fd = -1;
static int inherited_shared;        /* the fd table is the parent's (CLONE_FILES) */
static dev_t inherited_dev;
static ino_t inherited_ino;
static char inherited_path[512];
static char describe[560];   /* "" until a sink opens: "stderr"; a zero table */

static __thread int in_write SA_TLS;

/* The words threads share to write, check and shut the sink: on the
 * process page (a line bumps writers; a forked child resets it and
 * own_checked, which that page's copy costs nothing more). */
static struct {
	_Atomic long own_checked;   /* coarse second of the last identity check */
	_Atomic long own_retry;     /* coarse second of the last failed open */
	_Atomic int shut;           /* sa_sink_close: no line after a detach */
	_Atomic int writers;        /* lines being written now */
} sink SA_PROC_PAGE;
/* A forked child's reset, writing nothing that is zero already (sa_zero). */
#define ATOMIC_ZERO(x) do { if (atomic_load_explicit(&(x), memory_order_relaxed)) \
	atomic_store_explicit(&(x), 0, memory_order_relaxed); } while (0)

static void shut_now(void)
{
	int fd = atomic_exchange_explicit(&sa_sink_own_fd, -1, memory_order_acq_rel);

	if (fd >= 0)
		sa_sinkio_close(fd);
}

/* ---- our own fd (a path, syslog) ---------------------------------------- */

/* The path, opened by sink_path.c's rules; a refusal is counted with its
 * reason (the first line's warning says it too). */
static int open_path(void)
{
	const char *refused;
	int fd = sa_sinkpath_open(path, &refused);

	path_refused = refused;
	return fd;
}

/* ---- a forked child's own file (%p) ---------------------------------------- */

/*
 * Whether the parent's fd this child set aside is in its fd table. fork()
 * is not one instant for the other threads: the kernel copies the fd table
 * before the memory, so a thread of the parent that opened its log file
 * in between leaves the child a number in memory that its table never
 * had. The child's own file can then get that very number, and closing
 * "the parent's copy" would close it (every line of that child lost).
 * Asked when it is used, not at the fork: a child that writes nothing
 * pays nothing (test_sink_path).
 */
static int inherited_is_there(int fd)
{
	dev_t dev;
	ino_t ino;
	mode_t mode;

	return sa_sinkio_identify(fd, &dev, &ino, &mode) == 0 && dev == inherited_dev && ino == inherited_ino;
}

/* The child's own file is open: the parent's copy goes (not closed when
 * the fd table is shared: it is the parent's fd too). */
static void drop_inherited(void)
{
	int fd = atomic_exchange_explicit(&sa_sink_inherited_fd, -1, memory_order_acq_rel);

	if (fd >= 0 && !inherited_shared && inherited_is_there(fd))
		sa_sinkio_close(fd);
}

/* The child may not open its own file: the parent's takes its lines (each
 * with the child's pid), and the init line names it. -1 if there is none. */
static int keep_inherited(void)
{
	int fd = atomic_exchange_explicit(&sa_sink_inherited_fd, -1, memory_order_acq_rel), expected = -1;

	if (fd < 0 || !inherited_is_there(fd))
		return -1;
	memcpy(path, inherited_path, sizeof path);
	snprintf(describe, sizeof describe, "%s", path);
	own_dev = inherited_dev;
	own_ino = inherited_ino;
	atomic_store_explicit(&sink.own_checked, sa_sinkio_now_s(), memory_order_relaxed);
	if (!atomic_compare_exchange_strong_explicit(&sa_sink_own_fd, &expected, fd, memory_order_acq_rel, memory_order_acquire))
		return expected;   /* another thread opened one: ours stays unused until exit */
	return fd;
}

/* Our fd, opened at the first line (and again when lost, once a second):
 * a process with nothing to say opens nothing. */
static int own_fd_open(void)
{
	int fd = atomic_load_explicit(&sa_sink_own_fd, memory_order_acquire), nfd, expected = -1;
	dev_t dev;
	ino_t ino;
	mode_t mode;
	long now = sa_sinkio_now_s();

	if (fd >= 0 && now == atomic_load_explicit(&sink.own_checked, memory_order_relaxed))
		return fd;
	if (fd >= 0) {
		/* Once a second: still the file we opened? A host may have
		 * closed it behind our back (syscall(), __close_nocancel) and got
		 * the number again: then never write into it, never close it. */
		atomic_store_explicit(&sink.own_checked, now, memory_order_relaxed);
		if (sa_sinkio_identify(fd, &dev, &ino, &mode) == 0 && dev == own_dev && ino == own_ino)
			return fd;
		atomic_compare_exchange_strong_explicit(&sa_sink_own_fd, &fd, -1, memory_order_acq_rel, memory_order_relaxed);
	}
	if (sa_sink_own_failed && now == atomic_load_explicit(&sink.own_retry, memory_order_relaxed))
		return -sa_sink_own_failed;
	nfd = kind == SA_SINK_SYSLOG ? sa_sinkio_open_syslog() : kind == SA_SINK_JOURNAL ? sa_journal_open() : open_path();
	if (nfd < 0 && kind == SA_SINK_PATH && (fd = keep_inherited()) >= 0)
		return fd;
	if (nfd < 0) {
		sa_sink_own_failed = -nfd;
		atomic_store_explicit(&sink.own_retry, now, memory_order_relaxed);
		return nfd;
	}
	sa_sink_own_failed = 0;
	if (sa_sinkio_identify(nfd, &dev, &ino, &mode) == 0) {
		own_dev = dev;
		own_ino = ino;
	}
	if (!atomic_compare_exchange_strong_explicit(&sa_sink_own_fd, &expected, nfd, memory_order_acq_rel, memory_order_acquire)) {
		sa_sinkio_close(nfd);      /* another thread opened it first */
		return expected;
	}
	atomic_store_explicit(&sink.own_checked, now, memory_order_relaxed);
	drop_inherited();
	return nfd;
}


/* ---- the interface ---------------------------------------------------------- */

int sa_sink_open(const struct sa_config *c)
{
	int fl;

	kind = c->sink;
	sa_sinkhost_use(2, 0);
	switch (kind) {
	case SA_SINK_PATH:
		snprintf(path, sizeof path, "%s", c->path);
		snprintf(describe, sizeof describe, "%s", path);
		return 0;
	case SA_SINK_SYSLOG:
	case SA_SINK_JOURNAL:
		snprintf(describe, sizeof describe, "%s", kind == SA_SINK_SYSLOG ? "syslog" : "journal");
		return 0;
	case SA_SINK_FD:
		fl = fcntl(c->sink_fd, F_GETFL);
		if (fl >= 0 && (fl & O_ACCMODE) != O_RDONLY) {
			sa_sinkhost_use(c->sink_fd, 1);
			snprintf(describe, sizeof describe, "fd:%d", c->sink_fd);
			return 0;
		}
		/* Closed or not writable: say so (on stderr), and use stderr. */
		kind = SA_SINK_STDERR;
		snprintf(describe, sizeof describe, "stderr");
		return -EBADF;
	default:
		snprintf(describe, sizeof describe, "stderr");
		return 0;
	}
}

int sa_sink_ready(void)
{
	int fd;

	if (!SA_SINK_OWNS_FD(kind))
		return 0;
	fd = own_fd_open();
	if (fd >= 0)
		return 0;
	/* Unusable: fall back to stderr; the caller writes one warning there. */
	kind = SA_SINK_STDERR;
	sa_sinkhost_use(2, 0);
	snprintf(describe, sizeof describe, "stderr");
	return fd;
}

/* A line the fast path below does not take: the sink opened, reopened,
 * switched, looked at again or written some other way. */
static __attribute__((noinline)) int write_slow(const char *line, size_t len)
{
	int saved = errno, ok, fd;

	if (atomic_load_explicit(&sink.shut, memory_order_acquire))
		return 0;   /* detached: nothing opened again, nothing written */
	if (SA_SINK_OWNS_FD(kind)) {
		fd = own_fd_open();
		if (fd < 0) {
			sa_sinkio_drop(kind == SA_SINK_SYSLOG ? "syslog cannot be reached" :
				       kind == SA_SINK_JOURNAL ? "no journal socket" :
				       fd == -EPERM && path_refused ? "the file at the log path is not ours (refused)" :
				       "the log file cannot be opened");
			ok = 0;
		} else {
			ok = kind == SA_SINK_SYSLOG ? sa_sinkio_write_syslog(fd, line, len) :
			     kind == SA_SINK_JOURNAL ? sa_journal_write(fd, line, len) : sa_sinkio_write_file(fd, line, len);
		}
	} else {
		ok = sa_sinkhost_write(line, len);
		if (ok < 0) {        /* the journal's stream on fd 2: its datagram socket instead */
			fd = sa_sinkio_syslog_slot(&sa_sink_own_fd);
			ok = fd >= 0 ? sa_sinkio_write_syslog(fd, line, len) : (sa_sinkio_drop("the journal cannot be reached"), 0);
		}
	}
	errno = saved;
	return ok;
}

static __attribute__((noinline)) void close_stale(void)
{
	int saved = errno;

	sa_sinkio_close(sa_sink_stale_fd);   /* a jump out of a write on this thread left it */
	sa_sink_stale_fd = -1;
	errno = saved;
}

/* The fd a file line goes to as it is, or -1 for write_slow: a path sink
 * opened and identified this second; or the host
 * fd (stderr, fd:N) classified this second as a file. Read after this
 * thread counts itself in writers: a closer waits for it from then on. */
static inline int fast_fd(void)
{
	long now = sa_sinkio_now_s();
	int fd;

	if (kind == SA_SINK_PATH) {
		fd = atomic_load_explicit(&sa_sink_own_fd, memory_order_acquire);
		return fd >= 0 && now == atomic_load_explicit(&sink.own_checked, memory_order_relaxed) ? fd : -1;
	}
	return SA_SINK_OWNS_FD(kind) ? -1 : sa_sinkhost_file_fd(now);
}

int sa_sink_write(const char *line, size_t len)
{
	int ok, fd;

	if (SA_UNLIKELY(sa_sink_stale_fd >= 0))
		close_stale();
	in_write++;
	atomic_fetch_add_explicit(&sink.writers, 1, memory_order_acq_rel);
	fd = fast_fd();
	ok = SA_LIKELY(fd >= 0) ? sa_sinkio_write_file(fd, line, len) : write_slow(line, len);
	if (SA_UNLIKELY(atomic_fetch_sub_explicit(&sink.writers, 1, memory_order_acq_rel) == 1 &&
			atomic_load_explicit(&sink.shut, memory_order_acquire)))
		shut_now();   /* the last line in flight at a detach */
	in_write--;
	return ok;
}

/* Lines other threads are writing now through a number the host is about
 * to close: let them finish (they write to files or non-blocking fds, so
 * briefly), unless this thread is one of them (a handler). */
static void wait_writers(void)
{
	int i;

	if (in_write)
		return;
	for (i = 0; i < 1000 && atomic_load_explicit(&sink.writers, memory_order_acquire) > 0; i++)
		sched_yield();
}

/* Keeps errno (close()'s fast path keeps no copy). The host's own call
 * closes the old number, not us. Nowhere to go (nfd -1): the next line
 * reopens a path sink. */
static void relocate_above(int fd, unsigned int last)
{
	int nfd = -1, err = errno;

	if (last < (unsigned int)INT32_MAX - 1)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)last + 1);
	if (atomic_compare_exchange_strong_explicit(&sa_sink_own_fd, &fd, nfd, memory_order_acq_rel, memory_order_relaxed))
		wait_writers();
	else if (nfd >= 0)
		sa_sinkio_close(nfd);
	errno = err;
}

/* The host closes the number of the parent's fd we set aside: it is the
 * host's to close; we only stop counting on it. */
static void forget_inherited(int fd)
{
	atomic_compare_exchange_strong_explicit(&sa_sink_inherited_fd, &fd, -1, memory_order_acq_rel, memory_order_relaxed);
}

SA_FORK_TEXT void sa_sink_before_close_slow(int fd)
{
	int cur = atomic_load_explicit(&sa_sink_own_fd, memory_order_acquire);

	if (fd < 0)
		return;
	if (fd == sa_sink_host_fd)
		sa_sinkhost_forget();
	if (fd == atomic_load_explicit(&sa_sink_inherited_fd, memory_order_acquire))
		forget_inherited(fd);
	if (fd == cur)
		relocate_above(cur, (unsigned int)fd);
	else if (cur < 0 && sa_sink_own_failed)
		atomic_store_explicit(&sink.own_retry, 0, memory_order_relaxed);   /* an EMFILE reopen can work now */
}

void sa_sink_before_close_range(unsigned int first, unsigned int last)
{
	int cur = atomic_load_explicit(&sa_sink_own_fd, memory_order_acquire);
	int inh = atomic_load_explicit(&sa_sink_inherited_fd, memory_order_acquire);

	if ((unsigned int)sa_sink_host_fd >= first && (unsigned int)sa_sink_host_fd <= last)
		sa_sinkhost_forget();
	if (inh >= 0 && (unsigned int)inh >= first && (unsigned int)inh <= last)
		forget_inherited(inh);
	if (cur >= 0 && (unsigned int)cur >= first && (unsigned int)cur <= last)
		relocate_above(cur, last);
	else if (cur < 0 && sa_sink_own_failed)
		atomic_store_explicit(&sink.own_retry, 0, memory_order_relaxed);
}

int sa_sink_fd(void)
{
	return SA_SINK_OWNS_FD(kind) ? atomic_load_explicit(&sa_sink_own_fd, memory_order_acquire) : sa_sink_host_fd;
}

const char *sa_sink_refused(void)
{
	return path_refused;
}

const char *sa_sink_describe(void)
{
	return describe[0] ? describe : "stderr";
}

SA_FORK_TEXT void sa_sink_atfork_child(void)
{
	/* Only the forking thread exists: nobody is writing. The fd our
	 * memory names is looked at again before the first line (see
	 * inherited_is_there: it may be missing from this table). */
	ATOMIC_ZERO(sink.writers);
	SA_ZERO(in_write);
	ATOMIC_ZERO(sink.own_checked);
	sa_sinkio_atfork_child();
}

/* A forked child (only the forking thread exists) whose path names its
 * pid: every line goes to its own file from the first, whichever thread
 * writes it. The parent's fd is set aside for own_fd_open() (closed unless the fd
 * table is shared, CLONE_FILES; used if the child may not create its file). */
void sa_sink_reopen_path(const char *newpath, int shares_fds)
{
	int cur;

	if (kind != SA_SINK_PATH)
		return;
	cur = atomic_exchange_explicit(&sa_sink_own_fd, -1, memory_order_acq_rel);
	if (cur >= 0) {
		memcpy(inherited_path, path, sizeof inherited_path);
		inherited_dev = own_dev;
		inherited_ino = own_ino;
		inherited_shared = shares_fds;
		atomic_store_explicit(&sa_sink_inherited_fd, cur, memory_order_release);
	}
	snprintf(path, sizeof path, "%s", newpath);
	snprintf(describe, sizeof describe, "%s", path);
	SA_ZERO(sa_sink_own_failed);
	ATOMIC_ZERO(sink.own_retry);
}

/* A detach: our fd given back to the host, and no line written after.
 * A thread in the middle of a line (the attach tool stops threads
 * wherever they are) closes it as it leaves: never closed under a write
 * that could then land in a file the host opened with that number. */
void sa_sink_close(void)
{
	atomic_store_explicit(&sink.shut, 1, memory_order_release);
	if (atomic_load_explicit(&sink.writers, memory_order_acquire) == 0)
		shut_now();
}

/* An attach after a detach: lines again (the sink opens at the first). */
void sa_sink_reopen_allowed(void)
{
	atomic_store_explicit(&sink.shut, 0, memory_order_release);
}
