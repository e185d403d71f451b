/*
 * state.h: the state floor (shim/state/): what the shim remembers per fd
 * (the fd table, one entry per socket, in per-module parts) and latency
 * histograms. Above kernel/, below audit/.
 *
 * Lookups are lock-free; an entry is zeroed when a new socket takes the
 * number, so a stale entry from a close the shim did not see cannot leak
 * into a new socket.
 */
#ifndef SA_STATE_H
#define SA_STATE_H

#include <netinet/in.h>

#include "kernel/kernel.h"

/* ---- fdtab.c: fd -> what we know about that socket, O(1) --------------- */

#define SA_F_SOCKET      0x01u  /* created by socket()/accept() */
#define SA_F_LISTENER    0x02u  /* listen() succeeded on it */
#define SA_F_ACCEPTED    0x04u  /* returned by accept()/accept4() */
#define SA_F_WATCH_IO    0x08u  /* the I/O wrappers report to sa_on_io */
#define SA_F_CONNECTING  0x10u  /* non-blocking connect in progress */
#define SA_F_DUPED       0x20u  /* an accepted socket copied by dup() while undecided */
/* Made by socket() under us, on one fd number: every option set on it came
 * through our setsockopt (or syscall) wrapper onto this entry, so the
 * values kept in opt are the socket's. Cleared on both numbers by dup(). */
#define SA_F_BORN        0x40u
/* A plain TCP listener (IPv4/IPv6 stream), not deferred, with its listener
 * state: what the counted accept (audit/accept.h) needs to know of it, in
 * one bit. Set by the full accept path when it finds all that true, cleared
 * whenever TCP_DEFER_ACCEPT is learnt again (sa_sock_set_defer). */
#define SA_F_PLAIN_LISTENER   0x80u

struct sa_listener;             /* audit/accept.h */

/* audit/sockopt.c. Which calls were already logged is kept per process and
 * kind of socket (sockopt.c), not per fd: fd numbers are reused. */
struct sa_sock_opts {
	uint8_t nodelay;            /* TCP_NODELAY as last read back */
	uint8_t cork;               /* TCP_CORK as last read back */
	int defer_accept_s;         /* TCP_DEFER_ACCEPT read back, seconds */
};

/* audit/listen.c, audit/accept.c: a listening socket. listener holds one
 * reference (audit/listener_stats.c), dropped through the fd table's hook
 * when the entry is discarded. */
struct sa_sock_listen {
	int backlog_effective;
	struct sa_listener *listener;
};

/* audit/accept.c: an accepted connection */
struct sa_sock_accepted {
	struct sa_listener *listener;   /* where it came from; holds no reference */
	int listen_fd;
	uint32_t listener_inc;          /* listener->inc at accept: valid while equal */
	uint32_t serial;                /* per-process accept number, shared by dups */
	uint16_t forks;             /* sa_fd_forks() at accept, truncated: a fork since, and a child may hold it */
	uint8_t first_speaker;      /* 0 not decided, 1 client, 2 server, 3 neither (EOF/error/close first) */
};

/* audit/connect.c: a connect in progress */
struct sa_sock_connect {
	uint64_t start_ns;
	uint8_t peer_len;           /* bytes of peer in use */
	uint8_t interrupted : 1;    /* a blocking connect that returned EINTR, already reported */
	uint8_t fast_open : 1;      /* TCP Fast Open: connect() returned before any SYN, or sendto(MSG_FASTOPEN) */
	uint8_t retrans_counted;    /* SYN retransmissions already in the summary (at EINTR) */
	uint8_t epoch;              /* audit/connect.c's process epoch when it started */
	uint8_t peer[28];           /* pending connect's address (sockaddr_in/in6 fit) */
};

/* audit/quickack.c: in a side table (sa_fd_qa), mapped per chunk at the
 * first TCP_QUICKACK set on one of its fds (most programs never set one);
 * cleared when a new socket takes the number. */
#define SA_QA_WINDOW 32
struct sa_sock_quickack {
	uint32_t sets;              /* successful setsockopt(TCP_QUICKACK) */
	uint32_t reported_at;       /* reasserts when the last event went out, 0 = none */
	uint32_t last_out;          /* tcpi_data_segs_out at the last set */
	uint32_t last_read;         /* bytes the program had read (low 32 bits) at the last set */
	uint32_t quiet;             /* bit i: the program read nothing in interval i */
	uint8_t have_last;          /* last_* hold a sample */
	uint8_t win_n;              /* intervals in the window (<= SA_QA_WINDOW) */
	uint8_t win_next;           /* ring position of the next interval */
	int busy;                   /* sa_trylock: one thread updates the window */
	uint16_t out[SA_QA_WINDOW]; /* data segments out per interval, capped at 65535 */
};

/* About 90 bytes (the quickack window is in a side table): bench/fdtab_mem
 * prints it. */
struct sa_sock {
	uint32_t flags;
	uint16_t family;
	uint16_t type;              /* SOCK_STREAM ... without flags */
	int protocol;
	struct sa_sock_opts opt;
	struct sa_sock_listen lsn;
	struct sa_sock_accepted acc;
	struct sa_sock_connect conn;
};

/* What TCP_DEFER_ACCEPT is now on s: a listener that may have become
 * deferred is not plain any more (SA_F_PLAIN_LISTENER) until the full accept
 * path looks again. */
/* s's flags, as any thread may be setting or clearing a bit of them
 * (atomically): a relaxed load, which is the plain load on x86_64 and
 * aarch64, and no data race (a listener's entry is read by every thread
 * that accepts from it). */
static inline uint32_t sa_sock_flags(const struct sa_sock *s)
{
	return __atomic_load_n(&s->flags, __ATOMIC_RELAXED);
}

static inline void sa_sock_set_defer(struct sa_sock *s, int defer_s)
{
	s->opt.defer_accept_s = defer_s;
	__atomic_and_fetch(&s->flags, ~SA_F_PLAIN_LISTENER, __ATOMIC_RELEASE);
}

/* TCP over IPv4 or IPv6: the sockets tcp_info and the TCP findings are for. */
static inline int sa_sock_is_tcp(const struct sa_sock *s)
{
	return s && (s->family == AF_INET || s->family == AF_INET6) && s->type == SOCK_STREAM &&
	       (s->protocol == 0 || s->protocol == IPPROTO_TCP);
}

/* The fd table is chunked (see fdtab.c); the lookup is inline because every
 * I/O wrapper makes it on every call, tracked fd or not. */
#define SA_FD_MAX (1 << 20)                    /* fds at or above are not tracked */
#define SA_FD_CHUNK_BITS 8
extern struct sa_sock *sa_fd_chunks[SA_FD_MAX >> SA_FD_CHUNK_BITS] SA_HIDDEN;
/* 1 once any chunk or side page of the table has been set up in this
 * process (inherited by a fork child; never cleared). On the data page the
 * loader writes at every exec: a process that never tracked a socket (a
 * shell's close and dup2) looks at nothing else of the table, so it reads
 * no page of the zero tables (shim/sa_proc.ld). */
extern unsigned char sa_fd_used SA_HIDDEN;
static inline int sa_fd_table_used(void)
{
	return __atomic_load_n(&sa_fd_used, __ATOMIC_ACQUIRE);
}
/* The entry for fd, or NULL when fd is not a socket we track. Lock-free. */
static inline struct sa_sock *sa_fd_get(int fd)
{
	struct sa_sock *c, *s;

	if (SA_UNLIKELY((unsigned int)fd >= SA_FD_MAX))
		return NULL;
	c = __atomic_load_n(&sa_fd_chunks[(unsigned int)fd >> SA_FD_CHUNK_BITS], __ATOMIC_ACQUIRE);
	if (!c)
		return NULL;
	s = &c[(unsigned int)fd & ((1u << SA_FD_CHUNK_BITS) - 1)];
	/* Acquire: pairs with the release store in sa_fd_track() (fdtab.c). */
	return __atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) ? s : NULL;
}
/* Beside each chunk, one page (fdtab.c) with what must outlive the chunk's
 * hand-back or is written on paths that keep no entry: the origin words
 * (which listener an accepted connection with no entry came from), the
 * generations, the chunk's count of tracked entries. One page, so a forked
 * child that closes an inherited socket copies one page for all three, not
 * three. Read inline on hot paths. */
struct sa_fd_side {
	uint64_t origin[1u << SA_FD_CHUNK_BITS];   /* sa_fd_origin_set; 0 = none */
	/* sa_fd_gen. 16 bits: compared for equality across one blocking
	 * call, which 65,536 reuses of its number would have to span to be
	 * fooled; half the bytes leave room for more fds' entries on the
	 * first side page (struct sa_fd_first). */
	uint16_t gen[1u << SA_FD_CHUNK_BITS];
	uint32_t live;                            /* tracked entries in the chunk (+ RELEASING) */
	uint32_t released_at_s;                   /* when the chunk was last handed back */
};
/* What a process writes of the table when it forks or tracks a socket. */
struct sa_fd_hot {
	uint64_t forks;             /* sa_fd_forks() */
	size_t ntracked;            /* tracked entries, all chunks */
	unsigned long watching;     /* sa_watching */
	uint32_t accept_serial;     /* sa_accept_serial (audit/accept.h): written with the entry it numbers */
};
/* The first chunk (fds 0-255) and its side, static in the zero tables,
 * at the start of a page right after the fork words (SA_FORK_WORDS,
 * shim/sa_proc.ld): those words, the side words, the counters above and
 * the entries of fds 0-13 share one page. A process that forks per connection, or a child
 * that closes what it inherited, makes sockets and forks again (socat's
 * SYSTEM child), writes that page and no other of the table. */
#define SA_FD_FIRST_PAGE_FDS 14
struct sa_fd_first {
	struct sa_fd_side side;
	struct sa_fd_hot hot;
	struct sa_sock ent[1u << SA_FD_CHUNK_BITS];
};
extern struct sa_fd_first sa_fd_first SA_HIDDEN;
/* How many entries may have SA_F_WATCH_IO set. Raised before the bit is
 * set (sa_watch_on), lowered only where an atomic read-modify-write saw the
 * bit go from 1 to 0 (sa_flags_clear, fdtab.c), so it is never below the
 * true count: a decrement missed leaves it high, and the I/O wrappers then
 * only look the fd up as they would anyway. 0: no fd is watched, and the
 * I/O wrappers (read, write, recv, send...) skip even the lookup. */
#define sa_watching (sa_fd_first.hot.watching)
static inline int sa_watching_any(void)
{
	/* The table's used flag first: it is on the data page, and a process
	 * that never tracked a socket (a shell's read and write) then reads no
	 * page of the zero tables. */
	return sa_fd_table_used() && __atomic_load_n(&sa_watching, __ATOMIC_ACQUIRE) != 0;
}
/* Sets SA_F_WATCH_IO (and more) on s. */
static inline void sa_watch_on(struct sa_sock *s, uint32_t more)
{
	__atomic_add_fetch(&sa_watching, 1, __ATOMIC_SEQ_CST);
	if (__atomic_fetch_or(&s->flags, more | SA_F_WATCH_IO, __ATOMIC_ACQ_REL) & SA_F_WATCH_IO)
		__atomic_sub_fetch(&sa_watching, 1, __ATOMIC_RELAXED);   /* it was set already */
}
/* Clears mask in s->flags; returns the flags before. */
static inline uint32_t sa_flags_clear(struct sa_sock *s, uint32_t mask)
{
	uint32_t old = __atomic_fetch_and(&s->flags, ~mask, __ATOMIC_ACQ_REL);

	if (old & mask & SA_F_WATCH_IO)
		__atomic_sub_fetch(&sa_watching, 1, __ATOMIC_RELAXED);
	return old;
}
extern struct sa_fd_side *sa_fd_sides[SA_FD_MAX >> SA_FD_CHUNK_BITS] SA_HIDDEN;
static inline struct sa_fd_side *sa_fd_side_of(int fd)
{
	return (unsigned int)fd < SA_FD_MAX
		? __atomic_load_n(&sa_fd_sides[(unsigned int)fd >> SA_FD_CHUNK_BITS], __ATOMIC_ACQUIRE)
		: NULL;
}
#define SA_FD_IDX(fd) ((unsigned int)(fd) & ((1u << SA_FD_CHUNK_BITS) - 1))
/* fd's TCP_QUICKACK window (created when create is set), or NULL. */
struct sa_sock_quickack *sa_fd_qa(int fd, int create) SA_HIDDEN;
/* A fresh, zeroed entry for fd (a new socket with this number); NULL if
 * fd is out of range or memory is short. */
struct sa_sock *sa_fd_track(int fd) SA_HIDDEN;
/* The entry for an fd that already refers to a socket we meet late
 * (inherited, made before us): like sa_fd_track but it keeps the number's
 * generation, since the fd did not change socket. */
struct sa_sock *sa_fd_adopt(int fd) SA_HIDDEN;
/* The number's generation: changes whenever we see the fd start to refer
 * to another socket (track, forget, dup onto it). Read before a blocking
 * call and compared after, it tells whether the entry still describes the
 * socket the call ran on. A plain memory read: no system call. */
static inline uint32_t sa_fd_gen(int fd)
{
	struct sa_fd_side *d = sa_fd_side_of(fd);

	return d ? __atomic_load_n(&d->gen[SA_FD_IDX(fd)], __ATOMIC_ACQUIRE) : 0;
}
/* Hooks for the listener reference an entry holds (lsn.listener): ref when
 * dup copies an entry, unref when an entry holding one is overwritten.
 * Registered by audit/listener_stats.c (calls only go down). */
void sa_fd_set_listener_hooks(void (*ref)(struct sa_listener *), void (*unref)(struct sa_listener *)) SA_HIDDEN;
/* Fills family, type and protocol of a socket we meet late (inherited). */
void sa_sock_fill_kind(int fd, struct sa_sock *s) SA_HIDDEN;
/* Forget fd (called before the real close). */
void sa_fd_forget(int fd) SA_HIDDEN;
/* Counted, not watched: below trace most accepted connections get no entry,
 * only this word (audit/accept.c: which listener, while it is that one), so
 * that a later setsockopt on the fd can still name it "accepted from X".
 * Cleared when the fd is tracked, forgotten or closed. 0 = none. */
void sa_fd_origin_map(int fd, uint64_t v) SA_HIDDEN;   /* sa_fd_origin_set's first use of a chunk */
static inline __attribute__((always_inline)) void sa_fd_origin_set(int fd, uint64_t v)
{
	struct sa_fd_side *d = sa_fd_side_of(fd);

	if (SA_LIKELY(d != NULL))
		__atomic_store_n(&d->origin[SA_FD_IDX(fd)], v, __ATOMIC_RELEASE);
	else
		sa_fd_origin_map(fd, v);
}
/* The word of fd, left as it is. */
static inline __attribute__((always_inline)) uint64_t sa_fd_origin_peek(int fd)
{
	struct sa_fd_side *d = sa_fd_side_of(fd);

	return d ? __atomic_load_n(&d->origin[SA_FD_IDX(fd)], __ATOMIC_RELAXED) : 0;
}
/* The word of fd, cleared. */
static inline __attribute__((always_inline)) uint64_t sa_fd_origin_take(int fd)
{
	struct sa_fd_side *d = sa_fd_side_of(fd);
	uint64_t *w = d ? &d->origin[SA_FD_IDX(fd)] : NULL;

	return w && __atomic_load_n(w, __ATOMIC_RELAXED) ? __atomic_exchange_n(w, 0, __ATOMIC_ACQ_REL) : 0;
}
/* Clears the words of fds first..last (close_range, closefrom). */
void sa_fd_origin_clear_range(unsigned int first, unsigned int last) SA_HIDDEN;
/* Copy oldfd's entry to newfd (dup), or forget newfd if oldfd untracked. */
void sa_fd_dup(int oldfd, int newfd) SA_HIDDEN;
/* This process's forks so far (the parent's fork handler counts them), kept
 * on the fd table's first page, which a server that forks per connection
 * writes after each fork anyway (its close of the connection). */
uint64_t sa_fd_forks(void) SA_HIDDEN;
void sa_fd_forked(void) SA_HIDDEN;
/* In a forked child: no chunk is being handed back any more. */
void sa_fdtab_atfork_child(void) SA_HIDDEN;
/* Visit every tracked fd (summary at exit). */
void sa_fd_foreach(void (*fn)(int fd, struct sa_sock *s, void *arg), void *arg) SA_HIDDEN;
size_t sa_fdtab_bytes(void) SA_HIDDEN;          /* memory held, for bench */
size_t sa_fdtab_tracked(void) SA_HIDDEN;        /* fds tracked now */

/* ---- hist.c: latency histograms -------------------------------------------- */

/* Fixed arrays of atomic counters (no allocation, no lock), log-spaced at
 * 4 % per bucket from 1 us to 103 minutes (1.04^575 us): SYN-retry
 * connects take 7, 15, 31 s and more, quiet listeners wait minutes. The
 * last bucket is open: a percentile that falls in it is the max.
 * The first SA_HIST_HOT buckets (to 6.2 s) are in the struct, the rest in
 * an array of SA_HIST_TAIL the owner gives (tail): a histogram on the
 * process page (a forked child writes that page anyway) keeps its common
 * values there and its rare long ones elsewhere. Without a tail, values
 * past the hot buckets count in the last of them. sa_hist_reset keeps
 * the tail pointer. */
#define SA_HIST_BUCKETS 576
#define SA_HIST_HOT 400
#define SA_HIST_TAIL (SA_HIST_BUCKETS - SA_HIST_HOT)
struct sa_hist {
	uint64_t n;
	uint64_t max_bits;           /* a double's bits; compare as integers */
	uint64_t max_ns;             /* the most sa_hist_add_ns_inline has seen: below it, max_bits holds */
	uint64_t b[SA_HIST_HOT];
	uint64_t *tail;              /* SA_HIST_TAIL counters, or NULL */
};
/* The counter of bucket i (i < SA_HIST_BUCKETS). */
static inline uint64_t *sa_hist_slot(const struct sa_hist *h, unsigned i)
{
	if (SA_LIKELY(i < SA_HIST_HOT))
		return (uint64_t *)&h->b[i];
	if (!h->tail)
		return (uint64_t *)&h->b[SA_HIST_HOT - 1];
	return &h->tail[i - SA_HIST_HOT];
}
void sa_hist_add(struct sa_hist *h, double ms) SA_HIDDEN;
double sa_hist_pct(const struct sa_hist *h, double pct) SA_HIDDEN;
double sa_hist_max(const struct sa_hist *h) SA_HIDDEN;
json_t *sa_hist_json(const struct sa_hist *h) SA_HIDDEN;   /* {n,p50,p95,p99,max} */
void sa_hist_reset(struct sa_hist *h) SA_HIDDEN;
int sa_hist_bucket(double ms) SA_HIDDEN;   /* the bucket ms falls in */
/* The same as sa_hist_add(h, ns / 1e6) and sa_hist_bucket(ns / 1e6), with
 * a table instead of floating point (the accept path). */
int sa_hist_bucket_ns(uint64_t ns) SA_HIDDEN;
/* Its table (hist.c): the ns axis in cells of 32 per power of two, each
 * with the bucket at its first ns (+ 1; 0: not filled, SLOW: ask
 * sa_hist_bucket) and its last ns still in that bucket. Inline below for
 * the accept path. */
#define SA_HIST_NS_CELLS (60 * 32)
#define SA_HIST_CELL_SLOW 0xffffu
extern uint64_t sa_hist_cell_last[SA_HIST_NS_CELLS] SA_HIDDEN;
extern uint16_t sa_hist_cell_b[SA_HIST_NS_CELLS] SA_HIDDEN;
static inline unsigned sa_hist_ns_cell(uint64_t ns)
{
	int p = 63 - __builtin_clzll(ns | 32);

	return ((unsigned)(p - 4) << 5) | (unsigned)((ns >> (p - 5)) & 31);
}
void sa_hist_add_ns(struct sa_hist *h, uint64_t ns) SA_HIDDEN;   /* the same, out of line */
static inline __attribute__((always_inline)) void sa_hist_add_ns_inline(struct sa_hist *h, uint64_t ns)
{
	unsigned c = sa_hist_ns_cell(ns);
	unsigned b = __atomic_load_n(&sa_hist_cell_b[c], __ATOMIC_ACQUIRE);
	double ms;
	uint64_t bits, old;

	/* The cell's bucket, or (not filled yet, or slow) the table's own. */
	b = SA_LIKELY(b - 1 < SA_HIST_CELL_SLOW - 1)
		? (b - 1) + (ns > __atomic_load_n(&sa_hist_cell_last[c], __ATOMIC_RELAXED))
		: (unsigned)sa_hist_bucket_ns(ns);
	__atomic_add_fetch(&h->n, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(sa_hist_slot(h, b), 1, __ATOMIC_RELAXED);
	/* Not above the most seen here: max_bits is already at least its ms. */
	old = __atomic_load_n(&h->max_ns, __ATOMIC_RELAXED);
	if (SA_LIKELY(ns <= old))
		return;
	while (ns > old && !__atomic_compare_exchange_n(&h->max_ns, &old, ns, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	ms = (double)ns / 1e6;
	__builtin_memcpy(&bits, &ms, sizeof bits);
	old = __atomic_load_n(&h->max_bits, __ATOMIC_RELAXED);
	/* Non-negative doubles order like their bit patterns. */
	while (bits > old && !__atomic_compare_exchange_n(&h->max_bits, &old, bits, 1,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}
/* Fills sa_hist_bucket_ns's table now (~0.5M instructions; at listen(),
 * so forked workers inherit it), rather than one cell at a time. */
void sa_hist_ns_prepare(void) SA_HIDDEN;

#endif
