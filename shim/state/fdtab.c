/*
 * fdtab.c: fd -> struct sa_sock, what we know about that socket.
 *
 * O(1), lock-free lookups: a fixed top array of chunk pointers (fds below
 * SA_FD_MAX), chunks of 256 entries allocated on first use. Memory grows
 * with the highest fd in use, never with RLIMIT_NOFILE (containers set it
 * to 2^30). Entries are zeroed when a new socket takes the number, so a
 * stale entry from a close we did not see cannot leak into a new socket.
 */
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>

#include "state/state.h"

#define CHUNK_BITS SA_FD_CHUNK_BITS
#define CHUNK (1u << CHUNK_BITS)
#define NCHUNKS (SA_FD_MAX / CHUNK)

/* Read by the inline sa_fd_get() in state.h. */
struct sa_sock *sa_fd_chunks[NCHUNKS];
static size_t nchunks_alloc;
static struct sa_sock *slot(int fd, int create)
{
	struct sa_sock **pp, *c, *expected = NULL;

	if ((unsigned int)fd >= SA_FD_MAX)
		return NULL;
	pp = &sa_fd_chunks[(unsigned int)fd >> CHUNK_BITS];
	c = __atomic_load_n(pp, __ATOMIC_ACQUIRE);
	if (!c && create) {
		/* mmap, not the heap: a host handler may siglongjmp out of the
		 * wrapper that makes the first socket of a chunk. */
		c = mmap(NULL, CHUNK * sizeof *c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			return NULL;
		if (!__atomic_compare_exchange_n(pp, &expected, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			munmap(c, CHUNK * sizeof *c);
			c = expected;
		} else {
			__atomic_add_fetch(&nchunks_alloc, 1, __ATOMIC_RELAXED);
		}
	}
	return c ? &c[(unsigned int)fd & (CHUNK - 1)] : NULL;
}

struct sa_sock *sa_fd_track(int fd)
{
	struct sa_sock *s = slot(fd, 1);

	if (!s)
		return NULL;
	/* The number was freed by a close in another thread (the kernel orders
	 * that close before the call that handed the number out again); this
	 * acquire pairs with sa_fd_forget's release so the reuse is ordered in
	 * the memory model too, not only through the kernel. */
	(void)__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE);
	memset(s, 0, sizeof *s);
	s->acc.listen_fd = -1;
	__atomic_store_n(&s->flags, SA_F_SOCKET, __ATOMIC_RELEASE);
	return s;
}

void sa_fd_forget(int fd)
{
	struct sa_sock *s = slot(fd, 0);

	if (s)
		__atomic_store_n(&s->flags, 0, __ATOMIC_RELEASE);
}

void sa_fd_dup(int oldfd, int newfd)
{
	struct sa_sock *o = sa_fd_get(oldfd), *n;

	if (oldfd == newfd)
		return;
	if (!o) {
		sa_fd_forget(newfd);
		return;
	}
	n = slot(newfd, 1);
	if (!n)
		return;
	(void)__atomic_load_n(&n->flags, __ATOMIC_ACQUIRE);   /* as in sa_fd_track */
	memcpy(n, o, sizeof *n);
	/* A duplicate shares the socket, not our per-call bookkeeping. */
	__atomic_store_n(&n->flags, o->flags & ~(SA_F_WATCH_IO | SA_F_CONNECTING), __ATOMIC_RELEASE);
}

void sa_fd_foreach(void (*fn)(int fd, struct sa_sock *s, void *arg), void *arg)
{
	unsigned int i, j;

	for (i = 0; i < NCHUNKS; i++) {
		struct sa_sock *c = __atomic_load_n(&sa_fd_chunks[i], __ATOMIC_ACQUIRE);
		if (!c)
			continue;
		for (j = 0; j < CHUNK; j++)
			if (__atomic_load_n(&c[j].flags, __ATOMIC_ACQUIRE))
				fn((int)(i * CHUNK + j), &c[j], arg);
	}
}

size_t sa_fdtab_bytes(void)
{
	return sizeof sa_fd_chunks + __atomic_load_n(&nchunks_alloc, __ATOMIC_RELAXED) * CHUNK * sizeof(struct sa_sock);
}

void sa_sock_fill_kind(int fd, struct sa_sock *s)
{
	int v = 0;
	socklen_t l = sizeof v;

	if (sa_real.getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) == 0)
		s->family = (uint16_t)v;
	l = sizeof v;
	if (sa_real.getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) == 0)
		s->type = (uint16_t)v;
	l = sizeof v;
	if (sa_real.getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &l) == 0)
		s->protocol = v;
}
