/*
 * blind.c: what the shim cannot see, said once per process. A program
 * that accepts or connects through syscall() or io_uring gets no accept or
 * connect lines: the first such call seen through libc's syscall() writes
 * one blind_spot finding naming it. A ring set up by inline system calls
 * (liburing makes its own) leaves no call a preload can see, but its fd
 * does: a look at /proc/self/fd finds an io_uring open and says so, at
 * every listen and every close of a listener, at the first accept, connect
 * or socket met by adoption (an fd that became a socket where we did not
 * see it: an accept through the ring is one) and then on a doubling
 * schedule up to once per stats interval (sa_blind_ring_scan), and at the
 * summary. A ring that a program opens and closes between two looks is
 * not seen (docs/events.md).
 */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit/audit.h"

static int said;   /* bit per kind of call */
/* Set once options may reach a socket without our setsockopt wrapper
 * (syscall(SYS_setsockopt), an io_uring): from then on what we saw set on a
 * socket is not all there is, and readers that trust it read back instead
 * (connect.c's defer_of). Never cleared: a property of the program. */
int sa_blind_opts;
/* When sa_blind_ring_poll looks next (CLOCK_MONOTONIC ns); UINT64_MAX once
 * a ring was said. 0: at the first call that polls. */
uint64_t sa_blind_ring_next_ns SA_PROC_PAGE;

static const char *name_of(long n, int *bit)
{
	switch (n) {
	case SYS_accept: *bit = 1; return "accept";
	case SYS_accept4: *bit = 2; return "accept4";
	case SYS_connect: *bit = 4; return "connect";
#ifdef SYS_io_uring_setup
	case SYS_io_uring_setup: *bit = 8; return "io_uring_setup";
#endif
	default: return NULL;
	}
}

int sa_blind_watches(long n)
{
	int bit;

	return n == SYS_setsockopt || name_of(n, &bit) != NULL;
}

void sa_blind_raw_syscall(long n)
{
	struct sa_findings f;
	struct sa_line L;
	const char *name;
	int bit = 0;

	if (n == SYS_setsockopt
#ifdef SYS_io_uring_setup
	    || n == SYS_io_uring_setup
#endif
	    )
		__atomic_store_n(&sa_blind_opts, 1, __ATOMIC_RELAXED);
	name = name_of(n, &bit);
	if (bit == 8)
		__atomic_store_n(&sa_blind_ring_next_ns, UINT64_MAX, __ATOMIC_RELAXED);
	if (!name || (__atomic_fetch_or(&said, bit, __ATOMIC_RELAXED) & bit))
		return;
	sa_findings_init(&f);
	if (bit == 8)
		sa_findings_add(&f, "blind_spot",
			SA_MSG_BLIND_SPOT_IO_URING);
	else
		sa_findings_add(&f, "blind_spot",
			SA_MSG_BLIND_SPOT_SYSCALL,
			name, name);
	sa_line_begin(&L, "blind_spot", -1, &f);
	sa_line_str(&L, "call", name);
	sa_line_emit(&L, SA_LEVEL_WARN, &f);
}

/* The kernel's getdents64 record (libc names and guards vary: musl 1.2.4
 * dropped dirent64). */
struct kdirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int fd_number(const char *s)
{
	int v = 0;

	for (; *s >= '0' && *s <= '9' && v < 1 << 26; s++)
		v = v * 10 + (*s - '0');
	return *s ? -1 : v;
}

/* The first fd of ours that is an io_uring ("anon_inode:[io_uring]"), or -1.
 * Raw getdents64/readlinkat on a stack buffer: called at the summary, which
 * may run in a signal handler's exit() or _exit(). A socket in our table
 * is no ring: one getdents64 per 2 kB of names, and a readlinkat only for
 * the fds we do not track. */
static int find_ring(void)
{
	static const char ring[] = "anon_inode:[io_uring]";
	char buf[2048] __attribute__((aligned(8))), link[64];
	int dir = (int)sa_syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	long n, off;
	int found = -1;

	if (dir < 0)
		return -1;
	while (found < 0 && (n = sa_syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
		for (off = 0; off < n && found < 0;) {
			struct kdirent64 *d = (struct kdirent64 *)(buf + off);
			long l;

			off += d->d_reclen;
			if (fd_number(d->d_name) < 0 || fd_number(d->d_name) == dir || sa_fd_get(fd_number(d->d_name)))
				continue;
			l = sa_syscall(SYS_readlinkat, dir, d->d_name, link, sizeof link - 1);
			if (l == (long)sizeof ring - 1 && memcmp(link, ring, sizeof ring - 1) == 0)
				found = fd_number(d->d_name);
		}
	}
	sa_syscall(SYS_close, dir);
	return found;
}

void sa_blind_ring_at_summary(void)
{
	struct sa_findings f;
	struct sa_line L;
	int fd;

	if (__atomic_load_n(&said, __ATOMIC_RELAXED) & 8)
		return;           /* said already, when it was set up through syscall() */
	fd = find_ring();
	if (fd < 0 || (__atomic_fetch_or(&said, 8, __ATOMIC_RELAXED) & 8))
		return;
	__atomic_store_n(&sa_blind_ring_next_ns, UINT64_MAX, __ATOMIC_RELAXED);
	__atomic_store_n(&sa_blind_opts, 1, __ATOMIC_RELAXED);
	sa_findings_init(&f);
	sa_findings_add(&f, "blind_spot", SA_MSG_BLIND_SPOT_IO_URING_OPEN, fd);
	sa_line_begin(&L, "blind_spot", -1, &f);
	sa_line_str(&L, "call", "io_uring");
	sa_line_int(&L, "ring_fd", fd);
	sa_line_emit(&L, SA_LEVEL_WARN, &f);
}

/* A look for a ring while the process runs: one thread looks, the others
 * go on. The looks come at the first accept, connect or adopted socket,
 * then 1, 2, 4 ... s later, up to once per stats interval (60 s when it is
 * 0): a ring set up early in a process's life is seen within seconds, and
 * a server that lives for weeks looks once a minute. A listen or a
 * listener's close looks whatever that schedule, but not within 10 ms of
 * the last look: a program that listens in a loop pays one walk of
 * /proc/self/fd (tens of microseconds) per 10 ms, not per call. Host
 * signals are held around a look (2 rt_sigprocmask, rare): a handler that
 * jumps out of it would leave our directory fd open. */
#define LOOK_GAP_NS 10000000ull
/* On the process page with sa_blind_ring_next_ns: a forked child that
 * connects after its parent's next look is due looks itself and writes
 * these, on the page it writes anyway, not a page of the zero tables. */
static unsigned int step_s SA_PROC_PAGE;
static uint64_t last_look_ns SA_PROC_PAGE;

static void look(uint64_t now_ns)
{
	sigset_t old;

	__atomic_store_n(&last_look_ns, now_ns, __ATOMIC_RELAXED);
	sa_signals_hold(&old);
	sa_blind_ring_at_summary();
	sa_signals_release(&old);
}

void sa_blind_ring_scan(uint64_t now_ns)
{
	uint64_t next = __atomic_load_n(&sa_blind_ring_next_ns, __ATOMIC_RELAXED);
	unsigned int every = sa_cfg()->stats_interval > 0 ? (unsigned int)sa_cfg()->stats_interval : 60;
	unsigned int step = __atomic_load_n(&step_s, __ATOMIC_RELAXED);

	step = step ? (step * 2 < every ? step * 2 : every) : 1;
	if (now_ns < next || next == UINT64_MAX ||
	    !__atomic_compare_exchange_n(&sa_blind_ring_next_ns, &next, now_ns + (uint64_t)step * 1000000000u,
					 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&step_s, step, __ATOMIC_RELAXED);
	look(now_ns);
}

void sa_blind_ring_look(void)
{
	uint64_t now = sa_now_ns(), last = __atomic_load_n(&last_look_ns, __ATOMIC_RELAXED);

	if (__atomic_load_n(&sa_blind_ring_next_ns, __ATOMIC_RELAXED) == UINT64_MAX ||
	    (last && now - last < LOOK_GAP_NS) ||
	    !__atomic_compare_exchange_n(&last_look_ns, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	look(now);
}
