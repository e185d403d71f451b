/*
 * fdtab.c: fd -> struct sa_sock, what we know about that socket.
 *
 * O(1), lock-free lookups: a fixed top array of chunk pointers (fds below
 * SA_FD_MAX), chunks of 256 entries allocated on first use. Memory grows
 * with the highest fd in use, never with RLIMIT_NOFILE (containers set it
 * to 2^30). Entries are zeroed when a new socket takes the number, so a
 * stale entry from a close we did not see cannot leak into a new socket.
 *
 * Each entry keeps a generation (gen) across that zeroing: a wrapper that
 * blocks (accept) reads it before and compares after, so a fact learned
 * after the number changed socket under it is not credited to the new one.
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

static void (*listener_ref)(struct sa_listener *);
static void (*listener_unref)(struct sa_listener *);

void sa_fd_set_listener_hooks(void (*ref)(struct sa_listener *), void (*unref)(struct sa_listener *))
{
	listener_ref = ref;
	listener_unref = unref;
}

/* An entry about to be overwritten may still hold a listener reference:
 * the close that should have dropped it was not seen (syscall(SYS_close),
 * a close inside a signal handler that only forgot the number). */
static void drop_listener(struct sa_sock *s)
{
	struct sa_listener *l = __atomic_exchange_n(&s->lsn.listener, NULL, __ATOMIC_ACQ_REL);

	if (l && listener_unref)
		listener_unref(l);
}

static struct sa_sock *fresh(int fd, int bump)
{
	struct sa_sock *s = slot(fd, 1);
	uint32_t gen;

	if (!s)
		return NULL;
	/* The number was freed by a close in another thread (the kernel orders
	 * that close before the call that handed the number out again); this
	 * acquire pairs with sa_fd_forget's release so the reuse is ordered in
	 * the memory model too, not only through the kernel. */
	(void)__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE);
	drop_listener(s);
	gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
	memset(s, 0, sizeof *s);
	__atomic_store_n(&s->gen, gen + (bump ? 1 : 0), __ATOMIC_RELAXED);
	s->acc.listen_fd = -1;
	__atomic_store_n(&s->flags, SA_F_SOCKET, __ATOMIC_RELEASE);
	return s;
}

struct sa_sock *sa_fd_track(int fd)
{
	return fresh(fd, 1);
}

struct sa_sock *sa_fd_adopt(int fd)
{
	return fresh(fd, 0);
}

uint32_t sa_fd_gen(int fd)
{
	struct sa_sock *s = slot(fd, 0);

	return s ? __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) : 0;
}

void sa_fd_forget(int fd)
{
	struct sa_sock *s = slot(fd, 0);

	if (s) {
		__atomic_add_fetch(&s->gen, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&s->flags, 0, __ATOMIC_RELEASE);
	}
}

void sa_fd_dup(int oldfd, int newfd)
{
	struct sa_sock *o = sa_fd_get(oldfd), *n;
	struct sa_listener *l;
	uint32_t gen, keep;

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
	drop_listener(n);
	/* The copy's reference is taken before it exists, so a close of the
	 * original racing with this dup cannot drop the last one first. */
	l = __atomic_load_n(&o->lsn.listener, __ATOMIC_ACQUIRE);
	if (l && listener_ref)
		listener_ref(l);
	gen = __atomic_load_n(&n->gen, __ATOMIC_RELAXED);
	memcpy(n, o, sizeof *n);
	n->lsn.listener = l;
	__atomic_store_n(&n->gen, gen + 1, __ATOMIC_RELAXED);
	/* A duplicate shares the socket, not our per-call bookkeeping; but an
	 * accepted socket nobody has spoken on yet stays watched on both
	 * numbers (the host may read through either), marked so the first
	 * decision settles every copy (audit/accept.c). */
	keep = o->flags & ~(SA_F_WATCH_IO | SA_F_CONNECTING);
	if ((o->flags & (SA_F_ACCEPTED | SA_F_WATCH_IO)) == (SA_F_ACCEPTED | SA_F_WATCH_IO) &&
	    !__atomic_load_n(&o->acc.first_speaker, __ATOMIC_ACQUIRE)) {
		keep |= SA_F_WATCH_IO | SA_F_DUPED;
		__atomic_or_fetch(&o->flags, SA_F_DUPED, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&n->flags, keep, __ATOMIC_RELEASE);
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
