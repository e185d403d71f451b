/*
 * blind.c: what the shim cannot see, said once per process. A program
 * that accepts or connects through syscall() or io_uring gets no accept or
 * connect lines: the first such call seen through libc's syscall() writes
 * one blind_spot finding naming it. (Inline system calls, as newer liburing
 * makes them, leave no trace a preload can see at all.)
 */
#include <sys/syscall.h>

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
