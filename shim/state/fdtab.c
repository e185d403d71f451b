/*
 * fdtab.c: fd -> struct sa_sock, what we know about that socket.
 *
 * O(1), lock-free lookups: a fixed top array of chunk pointers (fds below
 * SA_FD_MAX), chunks of 256 entries allocated on first use. Memory grows
 * with the highest fd in use, never with RLIMIT_NOFILE (containers set it
 * to 2^30). Entries are zeroed when a new socket takes the number, so a
 * stale entry from a close we did not see cannot leak into a new socket.
 *
 * Memory goes back when connections close: chunks are mmap'd, each counts
 * its tracked entries, and one that empties is handed back to the kernel
 * with madvise(MADV_DONTNEED) (at most once a second per chunk, so a server
 * whose fds hover at a chunk's edge does not pay a syscall per close). The
 * mapping stays, so a lock-free reader never touches freed memory: the
 * pages read back as zeros, i.e. "not tracked". A chunk being handed back
 * is marked (RELEASING) and sa_fd_track() waits for the mark to clear.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>

#include "state/state.h"

#define CHUNK_BITS SA_FD_CHUNK_BITS
#define CHUNK (1u << CHUNK_BITS)
#define NCHUNKS (SA_FD_MAX / CHUNK)
#define NLOCKS 64

/* Read by the inline sa_fd_get() in state.h. */
struct sa_sock *sa_fd_chunks[NCHUNKS];
static size_t nchunks_alloc;
/* Per chunk: tracked entries, plus RELEASING while madvise runs. */
#define RELEASING (1u << 31)
static uint32_t live[NCHUNKS];
static uint32_t released_at_s[NCHUNKS];   /* coarse monotonic seconds */
static size_t ntracked;
#define CHUNK_BYTES (CHUNK * sizeof(struct sa_sock))
static pthread_mutex_t locks[NLOCKS];
static pthread_once_t locks_once = PTHREAD_ONCE_INIT;

static void init_locks(void)
{
	int i;

	for (i = 0; i < NLOCKS; i++)
		pthread_mutex_init(&locks[i], NULL);
}

static struct sa_sock *slot(int fd, int create)
{
	struct sa_sock **pp, *c, *expected = NULL;

	if ((unsigned int)fd >= SA_FD_MAX)
		return NULL;
	pp = &sa_fd_chunks[(unsigned int)fd >> CHUNK_BITS];
	c = __atomic_load_n(pp, __ATOMIC_ACQUIRE);
	if (!c && create) {
		c = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			return NULL;
		if (!__atomic_compare_exchange_n(pp, &expected, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			munmap(c, CHUNK_BYTES);
			c = expected;
		} else {
			__atomic_add_fetch(&nchunks_alloc, 1, __ATOMIC_RELAXED);
		}
	}
	return c ? &c[(unsigned int)fd & (CHUNK - 1)] : NULL;
}

/* One more tracked entry in fd's chunk; waits while the chunk is handed back. */
static void live_inc(int fd)
{
	uint32_t *p = &live[(unsigned int)fd >> CHUNK_BITS], v = __atomic_load_n(p, __ATOMIC_ACQUIRE);

	for (;;) {
		if (v & RELEASING) {
			sched_yield();
			v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
			continue;
		}
		if (__atomic_compare_exchange_n(p, &v, v + 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
	}
	__atomic_add_fetch(&ntracked, 1, __ATOMIC_RELAXED);
}

/* One fewer; the last one out hands the chunk's pages back. */
static void live_dec(int fd)
{
	unsigned int i = (unsigned int)fd >> CHUNK_BITS;
	uint32_t zero = 0, now, v = __atomic_load_n(&live[i], __ATOMIC_ACQUIRE);
	struct sa_sock *c;

	/* Never below zero: a racing writer may have set flags on an entry
	 * after it was forgotten, and its forget must not wrap the count. */
	do {
		if (v == 0 || (v & RELEASING))
			return;
	} while (!__atomic_compare_exchange_n(&live[i], &v, v - 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	__atomic_sub_fetch(&ntracked, 1, __ATOMIC_RELAXED);
	if (v - 1 != 0)
		return;
	now = (uint32_t)(sa_now_ns() / 1000000000ull);
	if (now == __atomic_load_n(&released_at_s[i], __ATOMIC_RELAXED))
		return;
	if (!__atomic_compare_exchange_n(&live[i], &zero, RELEASING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	c = __atomic_load_n(&sa_fd_chunks[i], __ATOMIC_ACQUIRE);
	if (c)
		madvise(c, CHUNK_BYTES, MADV_DONTNEED);
	__atomic_store_n(&released_at_s[i], now, __ATOMIC_RELAXED);
	__atomic_store_n(&live[i], 0, __ATOMIC_RELEASE);
}

/* Clears an entry that may still hold a quickack window (a close we did not see). */
static void clear_entry(struct sa_sock *s)
{
	struct sa_sock_quickack *q = __atomic_exchange_n(&s->qa, NULL, __ATOMIC_ACQ_REL);

	free(q);
	memset(s, 0, sizeof *s);
}

struct sa_sock *sa_fd_track(int fd)
{
	struct sa_sock *s = slot(fd, 1);
	uint32_t old;

	if (!s)
		return NULL;
	live_inc(fd);
	/* The number was freed by a close in another thread (the kernel orders
	 * that close before the call that handed the number out again); this
	 * acquire pairs with sa_fd_forget's release so the reuse is ordered in
	 * the memory model too, not only through the kernel. */
	old = __atomic_load_n(&s->flags, __ATOMIC_ACQUIRE);
	clear_entry(s);
	s->acc.listen_fd = -1;
	__atomic_store_n(&s->flags, SA_F_SOCKET, __ATOMIC_RELEASE);
	if (old)
		live_dec(fd);   /* it was counted already: a close we did not see */
	return s;
}

void sa_fd_forget(int fd)
{
	struct sa_sock *s = slot(fd, 0);
	struct sa_sock_quickack *q;

	if (!s || !__atomic_exchange_n(&s->flags, 0, __ATOMIC_ACQ_REL))
		return;
	q = __atomic_exchange_n(&s->qa, NULL, __ATOMIC_ACQ_REL);
	free(q);
	live_dec(fd);
}

void sa_fd_dup(int oldfd, int newfd)
{
	struct sa_sock *o = sa_fd_get(oldfd), *n;
	uint32_t old;

	if (oldfd == newfd)
		return;
	if (!o) {
		sa_fd_forget(newfd);
		return;
	}
	n = slot(newfd, 1);
	if (!n)
		return;
	live_inc(newfd);
	old = __atomic_load_n(&n->flags, __ATOMIC_ACQUIRE);   /* as in sa_fd_track */
	clear_entry(n);
	memcpy(n, o, sizeof *n);
	/* A duplicate shares the socket, not our per-call bookkeeping. */
	n->qa = NULL;
	__atomic_store_n(&n->flags, o->flags & ~(SA_F_WATCH_IO | SA_F_CONNECTING), __ATOMIC_RELEASE);
	if (old)
		live_dec(newfd);
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

void sa_fd_lock(int fd)
{
	pthread_once(&locks_once, init_locks);
	pthread_mutex_lock(&locks[(unsigned int)fd % NLOCKS]);
}

void sa_fd_unlock(int fd)
{
	pthread_mutex_unlock(&locks[(unsigned int)fd % NLOCKS]);
}

void sa_fdtab_atfork_prepare(void)
{
	int i;

	pthread_once(&locks_once, init_locks);
	for (i = 0; i < NLOCKS; i++)
		pthread_mutex_lock(&locks[i]);
}

void sa_fdtab_atfork_parent(void)
{
	int i;

	for (i = 0; i < NLOCKS; i++)
		pthread_mutex_unlock(&locks[i]);
}

void sa_fdtab_atfork_child(void)
{
	unsigned int i;

	init_locks();
	/* A thread of the parent may have been handing a chunk back. */
	for (i = 0; i < NCHUNKS; i++)
		live[i] &= ~RELEASING;
}

/* Address space of the table; resident memory is less once chunks empty
 * (bench/mem.sh reads the process's RSS for that). */
size_t sa_fdtab_bytes(void)
{
	return sizeof sa_fd_chunks + __atomic_load_n(&nchunks_alloc, __ATOMIC_RELAXED) * CHUNK_BYTES;
}

size_t sa_fdtab_tracked(void)
{
	return __atomic_load_n(&ntracked, __ATOMIC_RELAXED);
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
