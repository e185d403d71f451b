/*
 * blind.c: what the shim cannot see, said once per process. A program
 * that accepts or connects through syscall() or io_uring gets no accept or
 * connect lines: the first such call seen through libc's syscall() writes
 * one blind_spot finding naming it. A ring set up by inline system calls
 * (liburing makes its own) leaves no call a preload can see, but its fd
 * does: at the summary, a process-wide look at /proc/self/fd finds an
 * io_uring still open and says so.
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
 * may run in a signal handler's exit() or _exit(). */
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
			if (fd_number(d->d_name) < 0 || fd_number(d->d_name) == dir)
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
	__atomic_store_n(&sa_blind_opts, 1, __ATOMIC_RELAXED);
	sa_findings_init(&f);
	sa_findings_add(&f, "blind_spot", SA_MSG_BLIND_SPOT_IO_URING_OPEN, fd);
	sa_line_begin(&L, "blind_spot", -1, &f);
	sa_line_str(&L, "call", "io_uring");
	sa_line_int(&L, "ring_fd", fd);
	sa_line_emit(&L, SA_LEVEL_WARN, &f);
}
