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
 *
 * Memory goes back when connections close: chunks are mmap'd, each counts
 * its tracked entries, and one that empties is handed back to the kernel
 * with madvise(MADV_DONTNEED) (at most once a second per chunk, so a server
 * whose fds hover at a chunk's edge does not pay a syscall per close). The
 * mapping stays, so a lock-free reader never touches freed memory: the
 * pages read back as zeros, i.e. "not tracked". A chunk being handed back
 * is marked (RELEASING, signals blocked meanwhile) and sa_fd_track() waits
 * a bounded while for the mark to clear.
 *
 * The first chunk (fds 0-255) and its side page are one static block
 * (struct sa_fd_first, state.h): side, counters, entries, so fds 0-13 sit
 * on the side's page (a socat-style fork child copies one page, not two),
 * and no process maps a table of its own until it passes fd 255.
 *
 * The TCP_QUICKACK windows, which few programs need, live in a side table
 * of the same shape, mapped per chunk on first use and never handed back.
 * No heap anywhere: a host handler may siglongjmp out of any wrapper.
 */
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <string.h>

#include "state/state.h"

#define CHUNK_BITS SA_FD_CHUNK_BITS
#define CHUNK (1u << CHUNK_BITS)
#define NCHUNKS (SA_FD_MAX / CHUNK)
#define CHUNK_BYTES (CHUNK * sizeof(struct sa_sock))

/* Read by the inline sa_fd_get() in state.h. */
struct sa_sock *sa_fd_chunks[NCHUNKS];
unsigned char sa_fd_used SA_START_DATA;
static size_t nchunks_alloc;
/* One past the highest chunk ever mapped: the walks below stop there, so a
 * forked child does not read (and fault in) pages of tables it never used. */
static unsigned int chunks_top;
/* Per chunk (in its side page): tracked entries, plus RELEASING while
 * madvise runs. */
#define RELEASING (1u << 31)
static struct sa_sock_quickack *qa_chunks[NCHUNKS];
/* The generations, origin words and live counts live beside the chunks, not
 * in them: a chunk handed back reads as zeros, and a generation must never
 * go back. One side page per chunk (state.h), never handed back. */
struct sa_fd_side *sa_fd_sides[NCHUNKS];
_Static_assert(sizeof(struct sa_fd_side) <= 4096, "a chunk's side data fits one page");
/* Placed by shim/sa_proc.ld right after the fork words (SA_FORK_WORDS) at
 * the start of a page. */
struct sa_fd_first sa_fd_first SA_FD_FIRST_PAGE;
_Static_assert(SA_FORK_WORDS_BYTES + offsetof(struct sa_fd_first, ent) + SA_FD_FIRST_PAGE_FDS * sizeof(struct sa_sock) <= 4096,
	       "the first fds have their entries on the first side page");

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The chunk *pp of `bytes`, mapped on first use (two threads racing: one
 * mapping wins; *won says whether it was this call's). NULL when memory is
 * short. */
SA_FORK_TEXT static void *chunk_map(void **pp, size_t bytes, int *won)
{
	void *c = __atomic_load_n(pp, __ATOMIC_ACQUIRE), *expected = NULL;

	*won = 0;
	if (c)
		return c;
	__atomic_store_n(&sa_fd_used, 1, __ATOMIC_RELEASE);   /* before the pointer is published */
	/* Chunk 0's entries and side page: the static block. */
	if (pp == (void **)&sa_fd_chunks[0] || pp == (void **)&sa_fd_sides[0]) {
		c = pp == (void **)&sa_fd_chunks[0] ? (void *)sa_fd_first.ent : (void *)&sa_fd_first.side;
		if (!__atomic_compare_exchange_n(pp, &expected, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return expected;
		*won = 1;
		return c;
	}
	c = map(bytes);
	if (!c)
		return NULL;
	if (!__atomic_compare_exchange_n(pp, &expected, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(c, bytes);
		return expected;
	}
	*won = 1;
	return c;
}

SA_FORK_TEXT static struct sa_sock *entry_at(int fd, int create)
{
	struct sa_sock **pp, *c;
	int won = 0;

	if ((unsigned int)fd >= SA_FD_MAX)
		return NULL;
	pp = &sa_fd_chunks[(unsigned int)fd >> CHUNK_BITS];
	c = create ? chunk_map((void **)pp, CHUNK_BYTES, &won) : __atomic_load_n(pp, __ATOMIC_ACQUIRE);
	if (won) {
		unsigned int top = __atomic_load_n(&chunks_top, __ATOMIC_RELAXED), i = ((unsigned int)fd >> CHUNK_BITS) + 1;

		__atomic_add_fetch(&nchunks_alloc, 1, __ATOMIC_RELAXED);
		while (top < i && !__atomic_compare_exchange_n(&chunks_top, &top, i, 1, __ATOMIC_RELEASE,
							       __ATOMIC_RELAXED))
			;
	}
	return c ? &c[(unsigned int)fd & (CHUNK - 1)] : NULL;
}

/* The slot of fd in a side table of chunks (one pointer per chunk in
 * *chunks, each chunk `size` bytes per entry), mapped on first use when
 * create is set; NULL otherwise. */
static void *side_page(void **chunks, size_t size, int fd, int create)
{
	void **pp, *c;
	int won;

	if ((unsigned int)fd >= SA_FD_MAX)
		return NULL;
	pp = &chunks[(unsigned int)fd >> CHUNK_BITS];
	c = create ? chunk_map(pp, CHUNK * size, &won) : __atomic_load_n(pp, __ATOMIC_ACQUIRE);
	return c ? (char *)c + ((unsigned int)fd & (CHUNK - 1)) * size : NULL;
}

/* fd's chunk's side page, mapped on first use when create is set. */
SA_FORK_TEXT static inline struct sa_fd_side *side_of(int fd, int create)
{
	struct sa_fd_side *d = sa_fd_side_of(fd);
	int won;

	if (d || !create || (unsigned int)fd >= SA_FD_MAX)
		return d;
	return chunk_map((void **)&sa_fd_sides[(unsigned int)fd >> CHUNK_BITS], sizeof(struct sa_fd_side), &won);
}

SA_FORK_TEXT static void gen_bump(int fd)
{
	struct sa_fd_side *d = side_of(fd, 1);

	if (d)
		__atomic_add_fetch(&d->gen[SA_FD_IDX(fd)], 1, __ATOMIC_RELEASE);
}

struct sa_sock_quickack *sa_fd_qa(int fd, int create)
{
	return side_page((void **)qa_chunks, sizeof(struct sa_sock_quickack), fd, create);
}

void sa_fd_origin_map(int fd, uint64_t v)
{
	int err = errno;   /* the counted accept's caller did not keep it */
	struct sa_fd_side *d = side_of(fd, 1);

	errno = err;
	if (d)
		__atomic_store_n(&d->origin[SA_FD_IDX(fd)], v, __ATOMIC_RELEASE);
}

void sa_fd_origin_clear_range(unsigned int first, unsigned int last)
{
	unsigned int i, j, hi = last >> CHUNK_BITS;

	if (hi >= NCHUNKS)
		hi = NCHUNKS - 1;
	for (i = first >> CHUNK_BITS; i <= hi; i++) {
		struct sa_fd_side *d = __atomic_load_n(&sa_fd_sides[i], __ATOMIC_ACQUIRE);

		if (!d)
			continue;
		for (j = 0; j < CHUNK; j++) {
			unsigned int fd = i * CHUNK + j;

			if (fd >= first && fd <= last && d->origin[j])
				__atomic_store_n(&d->origin[j], 0, __ATOMIC_RELEASE);
		}
	}
}

/* A new socket on fd starts with no quickack history. */
SA_FORK_TEXT static inline void qa_clear(int fd)
{
	struct sa_sock_quickack *q;

	if ((unsigned int)fd >= SA_FD_MAX)
		return;
	q = __atomic_load_n(&qa_chunks[(unsigned int)fd >> CHUNK_BITS], __ATOMIC_ACQUIRE);
	if (SA_UNLIKELY(q != NULL)) {
		q += (unsigned int)fd & (CHUNK - 1);
		if (q->sets)
			memset(q, 0, sizeof *q);
	}
}

/* One more tracked entry in the chunk whose side page is d; waits (a
 * bounded while) when the chunk is being handed back. 0 when it could not. */
SA_FORK_TEXT static inline int live_inc(struct sa_fd_side *d)
{
	uint32_t *p, v;
	int spins = 0;

	if (!d)
		return 0;
	p = &d->live;
	v = __atomic_load_n(p, __ATOMIC_ACQUIRE);

	for (;;) {
		if (v & RELEASING) {
			/* A handler on this very thread could be the one that
			 * interrupted the madvise: never wait for good. */
			if (++spins > 1000)
				return 0;
			sched_yield();
			v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
			continue;
		}
		if (__atomic_compare_exchange_n(p, &v, v + 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
	}
	__atomic_add_fetch(&sa_fd_first.hot.ntracked, 1, __ATOMIC_RELAXED);
	return 1;
}

/* The chunk of fd (side page d) emptied just now: its pages go back,
 * at most once a second. */
static __attribute__((noinline)) void chunk_emptied(int fd, struct sa_fd_side *d)
{
	unsigned int i = (unsigned int)fd >> CHUNK_BITS;
	uint32_t zero = 0, now;
	struct sa_sock *c;
	sigset_t all, old;

	now = (uint32_t)(sa_now_ns() / 1000000000ull);
	if (now == __atomic_load_n(&d->released_at_s, __ATOMIC_RELAXED))
		return;
	/* No handler between flag and clear: a siglongjmp out would leave it
	 * RELEASING, every later socket here 1000 yields late (seconds). */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if (!__atomic_compare_exchange_n(&d->live, &zero, RELEASING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return;
	}
	c = __atomic_load_n(&sa_fd_chunks[i], __ATOMIC_ACQUIRE);
	if (c == sa_fd_first.ent) {
		/* Not the side's page, which holds the first fds too. */
		uintptr_t a = ((uintptr_t)c + 4095) & ~(uintptr_t)4095, end = (uintptr_t)(c + CHUNK) & ~(uintptr_t)4095;

		madvise((void *)a, end - a, MADV_DONTNEED);
	} else if (c)
		madvise(c, CHUNK_BYTES, MADV_DONTNEED);
	__atomic_store_n(&d->released_at_s, now, __ATOMIC_RELAXED);
	__atomic_store_n(&d->live, 0, __ATOMIC_RELEASE);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* One fewer in fd's chunk (side page d); the last one out hands the
 * chunk's pages back. Inline: every close of a tracked fd comes here. */
SA_FORK_TEXT static inline void live_dec(int fd, struct sa_fd_side *d)
{
	uint32_t v;

	if (!d)
		return;
	v = __atomic_load_n(&d->live, __ATOMIC_ACQUIRE);
	/* Never below zero: a racing writer may have set flags on an entry
	 * after it was forgotten, and its forget must not wrap the count. */
	do {
		if (v == 0 || (v & RELEASING))
			return;
	} while (!__atomic_compare_exchange_n(&d->live, &v, v - 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	__atomic_sub_fetch(&sa_fd_first.hot.ntracked, 1, __ATOMIC_RELAXED);
	if (SA_UNLIKELY(v - 1 == 0))
		chunk_emptied(fd, d);
}

static void (*listener_ref)(struct sa_listener *) SA_START_DATA;
static void (*listener_unref)(struct sa_listener *) SA_START_DATA;

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

/* memset(s, 0, sizeof *s) as six 16-byte stores and one of 8 (gcc's rep
 * stos costs an instruction per 8 bytes and more cycles to start). */
typedef char sa_zero16 __attribute__((vector_size(16), may_alias, aligned(1)));
typedef uint64_t sa_zero8 __attribute__((may_alias, aligned(1)));
_Static_assert(sizeof(struct sa_sock) == 6 * 16 + 8, "zero_entry stores 104 bytes");
static inline void zero_entry(struct sa_sock *s)
{
	sa_zero16 *p = (sa_zero16 *)(void *)s;

	p[0] = (sa_zero16){ 0 };
	p[1] = (sa_zero16){ 0 };
	p[2] = (sa_zero16){ 0 };
	p[3] = (sa_zero16){ 0 };
	p[4] = (sa_zero16){ 0 };
	p[5] = (sa_zero16){ 0 };
	*(sa_zero8 *)(void *)&p[6] = 0;
}

/* fd's entry, its chunk mapped on first use: the chunk pointer read
 * inline, entry_at() only for a chunk not mapped yet. fd < SA_FD_MAX. */
static inline struct sa_sock *slot_made(int fd)
{
	struct sa_sock *c = __atomic_load_n(&sa_fd_chunks[(unsigned int)fd >> CHUNK_BITS], __ATOMIC_ACQUIRE);

	return SA_LIKELY(c != NULL) ? &c[(unsigned int)fd & (CHUNK - 1)] : entry_at(fd, 1);
}

/* A new socket on fd: its entry zeroed, its origin word and quickack window
 * gone, its generation bumped (bump); the side page looked up once. */
SA_FORK_TEXT static struct sa_sock *reset_entry(int fd, int bump)
{
	struct sa_fd_side *d;
	struct sa_sock *s;
	uint64_t *w;
	uint32_t old;

	if ((unsigned int)fd >= SA_FD_MAX)
		return NULL;
	s = slot_made(fd);
	d = side_of(fd, 1);
	if (!s || !live_inc(d))
		return NULL;
	/* The number was freed by a close in another thread (the kernel orders
	 * that close before the call that handed the number out again); this
	 * acquire pairs with sa_fd_forget's release so the reuse is ordered in
	 * the memory model too, not only through the kernel. */
	old = __atomic_exchange_n(&s->flags, 0, __ATOMIC_ACQ_REL);
	if (old & SA_F_WATCH_IO)
		__atomic_sub_fetch(&sa_watching, 1, __ATOMIC_RELAXED);
	drop_listener(s);
	zero_entry(s);
	qa_clear(fd);
	w = &d->origin[SA_FD_IDX(fd)];
	if (__atomic_load_n(w, __ATOMIC_RELAXED))
		__atomic_exchange_n(w, 0, __ATOMIC_ACQ_REL);
	if (bump)
		__atomic_add_fetch(&d->gen[SA_FD_IDX(fd)], 1, __ATOMIC_RELEASE);
	s->acc.listen_fd = -1;
	__atomic_store_n(&s->flags, SA_F_SOCKET, __ATOMIC_RELEASE);
	if (old)
		live_dec(fd, d);   /* it was counted already: a close we did not see */
	return s;
}

SA_FORK_TEXT struct sa_sock *sa_fd_track(int fd)
{
	return reset_entry(fd, 1);
}

struct sa_sock *sa_fd_adopt(int fd)
{
	return reset_entry(fd, 0);
}

/* The side page is looked up once, for the origin word, the generation
 * and the live count. */
SA_FORK_TEXT void sa_fd_forget(int fd)
{
	struct sa_fd_side *d;
	struct sa_sock *c;
	uint32_t old;

	if ((unsigned int)fd >= SA_FD_MAX)
		return;
	d = sa_fd_side_of(fd);
	if (d && __atomic_load_n(&d->origin[SA_FD_IDX(fd)], __ATOMIC_RELAXED))
		__atomic_exchange_n(&d->origin[SA_FD_IDX(fd)], 0, __ATOMIC_ACQ_REL);
	c = __atomic_load_n(&sa_fd_chunks[(unsigned int)fd >> CHUNK_BITS], __ATOMIC_ACQUIRE);
	if (!c)
		return;
	if (SA_UNLIKELY(!d))
		d = side_of(fd, 1);
	if (d)
		__atomic_add_fetch(&d->gen[SA_FD_IDX(fd)], 1, __ATOMIC_RELEASE);
	old = __atomic_exchange_n(&c[SA_FD_IDX(fd)].flags, 0, __ATOMIC_ACQ_REL);
	if (old & SA_F_WATCH_IO)
		__atomic_sub_fetch(&sa_watching, 1, __ATOMIC_RELAXED);
	if (old && d)
		live_dec(fd, d);
}

SA_FORK_TEXT void sa_fd_dup(int oldfd, int newfd)
{
	struct sa_sock *o = sa_fd_get(oldfd), *n;
	struct sa_listener *l;
	uint32_t keep, old;

	if (oldfd == newfd || !sa_fd_table_used())
		return;
	sa_fd_origin_take(newfd);   /* a copy is not counted twice; newfd's own word is gone */
	if (!o) {
		sa_fd_forget(newfd);
		return;
	}
	n = entry_at(newfd, 1);
	if (!n || !live_inc(side_of(newfd, 1)))
		return;
	old = __atomic_exchange_n(&n->flags, 0, __ATOMIC_ACQ_REL);   /* as in sa_fd_track */
	if (old & SA_F_WATCH_IO)
		__atomic_sub_fetch(&sa_watching, 1, __ATOMIC_RELAXED);
	drop_listener(n);
	/* The copy's reference is taken before it exists, so a close of the
	 * original racing with this dup cannot drop the last one first. */
	l = __atomic_load_n(&o->lsn.listener, __ATOMIC_ACQUIRE);
	if (l && listener_ref)
		listener_ref(l);
	memcpy(n, o, sizeof *n);
	n->lsn.listener = l;
	qa_clear(newfd);   /* a duplicate shares the socket, not its quickack samples */
	gen_bump(newfd);
	/* A duplicate shares the socket, not our per-call bookkeeping; but an
	 * accepted socket nobody has spoken on yet stays watched on both
	 * numbers (the host may read through either), marked so the first
	 * decision settles every copy (audit/speaker.c). */
	keep = sa_sock_flags(o) & ~(SA_F_WATCH_IO | SA_F_CONNECTING | SA_F_BORN);
	if (sa_sock_flags(o) & SA_F_BORN)   /* an option set through either number lands on one entry only */
		__atomic_and_fetch(&o->flags, ~SA_F_BORN, __ATOMIC_RELEASE);
	if ((sa_sock_flags(o) & (SA_F_ACCEPTED | SA_F_WATCH_IO)) == (SA_F_ACCEPTED | SA_F_WATCH_IO) &&
	    !__atomic_load_n(&o->acc.first_speaker, __ATOMIC_ACQUIRE)) {
		keep |= SA_F_WATCH_IO | SA_F_DUPED;
		__atomic_add_fetch(&sa_watching, 1, __ATOMIC_SEQ_CST);   /* before the bit is stored */
		__atomic_or_fetch(&o->flags, SA_F_DUPED, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&n->flags, keep, __ATOMIC_RELEASE);
	if (old)
		live_dec(newfd, side_of(newfd, 0));
}

void sa_fd_foreach(void (*fn)(int fd, struct sa_sock *s, void *arg), void *arg)
{
	unsigned int i, j, top = __atomic_load_n(&chunks_top, __ATOMIC_ACQUIRE);

	for (i = 0; i < top; i++) {
		struct sa_sock *c = __atomic_load_n(&sa_fd_chunks[i], __ATOMIC_ACQUIRE);
		struct sa_fd_side *d = __atomic_load_n(&sa_fd_sides[i], __ATOMIC_ACQUIRE);

		/* An empty chunk holds no entry to visit (and may be handed back). */
		if (!c || !d || !(__atomic_load_n(&d->live, __ATOMIC_ACQUIRE) & ~RELEASING))
			continue;
		for (j = 0; j < CHUNK; j++)
			if (__atomic_load_n(&c[j].flags, __ATOMIC_ACQUIRE))
				fn((int)(i * CHUNK + j), &c[j], arg);
	}
}

uint64_t sa_fd_forks(void)
{
	return __atomic_load_n(&sa_fd_first.hot.forks, __ATOMIC_RELAXED);
}

SA_FORK_TEXT void sa_fd_forked(void)
{
	__atomic_add_fetch(&sa_fd_first.hot.forks, 1, __ATOMIC_RELAXED);
}

SA_FORK_TEXT void sa_fdtab_atfork_child(void)
{
	unsigned int i;

	/* A thread of the parent may have been handing a chunk back. Written
	 * only where set: every page this child writes is a copy. */
	for (i = 0; i < chunks_top; i++)
		if (sa_fd_sides[i] && (sa_fd_sides[i]->live & RELEASING))
			sa_fd_sides[i]->live &= ~RELEASING;
}

/* Address space of the table; resident memory is less once chunks empty
 * (bench/mem.sh reads the process's RSS for that). */
size_t sa_fdtab_bytes(void)
{
	return sizeof sa_fd_chunks + __atomic_load_n(&nchunks_alloc, __ATOMIC_RELAXED) * CHUNK_BYTES;
}

size_t sa_fdtab_tracked(void)
{
	return __atomic_load_n(&sa_fd_first.hot.ntracked, __ATOMIC_RELAXED);
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
