/*
 * accept.h: declarations shared by the accepting side's files (accept.c,
 * listener_stats.c) and their tests. Never installed, never included by
 * the floors below. Pure helpers are here so cmocka tests can
 * reach them without preloading anything.
 */
#ifndef SA_ACCEPT_H
#define SA_ACCEPT_H

#include <stdbool.h>
#include <stdint.h>

#include "audit/audit.h"

/* ---- listener_stats.c: per-listener state and the listener_stats line ------ */

/* Counters are updated with relaxed atomics from any thread. Every fd
 * entry that names it as its listener (the listening fd and its dups)
 * holds one reference; when the last goes (the last of those fds closes)
 * its listener_stats line is written and it goes back to a pool for the
 * next listen(). Its memory is never given back to malloc: the accept path
 * reads it without a lock, and a pointer read just before the close stays
 * a valid sa_listener (type-stable memory), at worst one already reused,
 * which inc tells. Memory is bounded by the most listeners open at once. */
struct sa_listener {
	struct sa_listener *next;        /* push-only list of every struct made */
	uint32_t in_use;                 /* 0: in the pool, free for the next listen() */
	uint32_t refs;                   /* fd entries naming it */
	uint32_t inc;                    /* bumped at each reuse */
	uint32_t epoch;                  /* sa_proc_epoch() the counters below belong to */
	struct sa_listener *pending_next; /* on the list of lines to write (close_range) */
	int listen_fd;
	int family;
	char local[80];
	/* The accept line's ,"listen_fd":N,"local":"a.b.c.d:p" for listen_fd,
	 * made once with local (sa_accept_line_part); 0: not made (local is a
	 * wildcard, AF_UNIX or unknown, which each line asks or escapes). */
	unsigned char line_part_len;
	char line_part[127];
	int backlog;                     /* effective, as last read back */
	int defer_s;                     /* TCP_DEFER_ACCEPT seconds, as last known */
	long defer_real_ms, rto_max_ms;  /* its real window and cap (sa_defer_window); 0: not known */
	uint64_t accepts, eagain, errors;
	uint64_t left_by_jump;           /* accept calls a signal handler jumped out of */
	/* Of accepts, those counted inline (sa_accept_count_only) and not yet
	 * added to the process's accept event count: that count is on the
	 * process page, which a fork-per-connection parent would otherwise
	 * write (a fault after every fork) beside this page it writes anyway.
	 * Added when the listener retires and at the summary. */
	uint64_t counted;
	uint64_t empty_accepts, with_data;
	uint64_t defer_expired, syncookie, fd_limit;
	uint64_t queue_full_seen;
	uint32_t peak_waiting;           /* most connections seen queued at once */
	uint64_t first_client, first_server, first_unknown;
	struct sa_hist queue_ms, wait_ms;
	uint64_t last_emit_ns;
	uint64_t live_sum;               /* the counts the live thread's last line saw */
	uint64_t next_sample_ns;         /* TCP_INFO sampled by count, and 100 ms after the last */
	/* What the previous listener_stats line saw, for per-interval findings. */
	struct sa_netns_snap ns_prev;
	uint64_t queue_full_prev;
	uint64_t queue_tail[SA_HIST_TAIL], wait_tail[SA_HIST_TAIL];   /* the histograms' buckets past 6.2 s */
};

/* A listener's histograms keep their buckets past 6.2 s in it too. */
static inline void sa_listener_hist_tails(struct sa_listener *l)
{
	l->queue_ms.tail = l->queue_tail;
	l->wait_ms.tail = l->wait_tail;
}
/* The listener for s (a listening socket), created on first use. NULL when
 * memory is short or too many listeners are open at once. */
struct sa_listener *sa_listener_get(int fd, struct sa_sock *s) SA_HIDDEN;
/* Drops s's reference (the listening fd closes): the last one writes the
 * listener_stats line (if it had accepts) and returns it to the pool. With
 * defer (inside close_range/closefrom, where our sink may be reopened on a
 * number about to be closed) the line waits for sa_listener_flush(). */
void sa_listener_release(struct sa_sock *s, int defer) SA_HIDDEN;
/* The counters below belong to one process (epoch): a forked child does
 * not clear them at fork (every page it wrote would be a copy), it takes a
 * listener over the first time it counts on it (sa_listener_mine), and
 * until then the listener reads as having no accepts in this process. */
void sa_listener_adopt(struct sa_listener *l) SA_HIDDEN;
static inline struct sa_listener *sa_listener_mine(struct sa_listener *l)
{
	if (SA_UNLIKELY(__atomic_load_n(&l->epoch, __ATOMIC_ACQUIRE) != sa_proc_epoch()))
		sa_listener_adopt(l);
	return l;
}
/* ---- listener_live.c: lines while the process runs ---------------------- */
/* From the accept path: writes listener_stats when the interval passed. */
void sa_listener_tick(struct sa_listener *l, uint64_t now_ns) SA_HIDDEN;
/* The interval in ns; 0: not read yet; UINT64_MAX: close and exit only;
 * SA_LISTENER_EVERY_LIVE: the live thread writes them (the accept path's
 * inline test then never passes). */
extern uint64_t sa_listener_every_ns SA_HIDDEN;
#define SA_LISTENER_EVERY_LIVE (UINT64_MAX - 1)
struct sa_listener *sa_listener_head(void) SA_HIDDEN;   /* every struct made, newest first */
/* Connections in l's accept queue now (TCP_INFO on its fd, which must
 * still be l's listener); raises its peak. -1: not known. */
int sa_listener_waiting_now(struct sa_listener *l) SA_HIDDEN;
extern uint64_t sa_listener_reset_ns SA_HIDDEN;   /* the first count after a fork (1: not yet) */
/* sa_listener_tick for a listener, with its common case (the interval is
 * known and has not passed) inline. */
static inline __attribute__((always_inline)) void sa_listener_tick_l(struct sa_listener *l, uint64_t now_ns)
{
	uint64_t every = __atomic_load_n(&sa_listener_every_ns, __ATOMIC_RELAXED), last = __atomic_load_n(&l->last_emit_ns, __ATOMIC_RELAXED);
	int err;

	/* every == 0 (not read yet) and now_ns < last (another thread's later
	 * time) fail the test and go to sa_listener_tick, which sorts them
	 * out. last is this process's: sa_listener_mine, which every caller
	 * ran first, started the interval at the fork (sa_listener_adopt). */
	if (SA_LIKELY(now_ns - last < every))
		return;
	err = errno;   /* the counted accept's caller did not keep it */
	sa_listener_tick(l, now_ns);
	errno = err;
}
/* Writes one listener_stats line now. */
void sa_listener_emit(struct sa_listener *l) SA_HIDDEN;

/* The backlog a listener that was full needs: twice the peak seen waiting,
 * and never below twice its capacity. Pure. */
int sa_needed_backlog(uint32_t peak_waiting, int backlog) SA_HIDDEN;

/* Plain numbers the advice is computed from (pure, testable). */
struct sa_advice_in {
	uint64_t accepts, empty_accepts, with_data;
	uint64_t defer_expired, syncookie;
	uint64_t first_client, first_server, first_unknown;
	uint64_t queue_full_seen;
	uint32_t peak_waiting;
	int backlog, defer_s;
	long defer_real_ms, rto_max_ms;  /* the real window when it differs (6.19+) */
	int ns_valid;                    /* the ns_* deltas below are known */
	int has_defer_drop, has_cookies_recv, has_overflows;
	uint64_t defer_drop, cookies_recv, overflows;
};
/* 100 * part / whole, rounded; 0 when whole is 0. */
int sa_pct(uint64_t part, uint64_t whole) SA_HIDDEN;
/* Appends advice sentences (strings) to arr. Returns how many. */
int sa_listener_advice(const struct sa_advice_in *in, json_t *arr) SA_HIDDEN;

/* What one accept's facts mean and which way it goes (sa_accept_judge,
 * sa_accept_route) are the judge floor's: judge/judge.h, through audit.h. */

/* ---- accept_line.c: the accept line ------------------------------------- */

/* Fills l->line_part from l->listen_fd and l->local; before l is published. */
void sa_accept_line_part(struct sa_listener *l) SA_HIDDEN;
/* What an accept line says. */
struct sa_accept_seen {
	int lfd, ret;
	struct sa_listener *l;               /* NULL: none */
	const struct sockaddr *peer;         /* the host's buffer, or NULL: getpeername */
	socklen_t peerlen;
	uint64_t wait_ns;                    /* accept() blocked */
	const struct sa_tcpinfo *ti, *listener_ti;   /* the child's and the listener's; NULL: not read */
	const int *bytes;                    /* bytes waiting; NULL: not known */
	int tcp, defer_s;
	int plain;                           /* tcp, defer_s 0, ti, listener_ti and bytes NULL */
};
/* Writes the accept line (at trace, or warn with findings f). */
void sa_accept_line(const struct sa_accept_seen *a, const struct sa_findings *f) SA_HIDDEN;

/* ---- shared by accept.c and speaker.c ------------------------------------ */

/* Who spoke first on an accepted connection (sa_sock's acc.first_speaker;
 * 0: not decided yet). */
enum { SA_SPEAKER_UNKNOWN = 3, SA_SPEAKER_CLIENT = 1, SA_SPEAKER_SERVER = 2 };
/* A listener counter bumped from any thread; returns the new value. */
#define SA_RELAXED_ADD(x, n) __atomic_add_fetch(&(x), (n), __ATOMIC_RELAXED)

/* speaker.c: which connections are watched for who speaks first. */
/* Accepts with an fd entry, numbered: on the fd table's first page, which
 * the new entry is written on too (a fork-per-connection parent's sampled
 * accept then writes no page of the process page after a fork). */
#define sa_accept_serial (sa_fd_first.hot.accept_serial)
/* Counts and times an accept that gets no entry. */
void sa_accept_counted_only(int lfd, int fd, struct sa_listener *l, uint64_t t0, uint64_t t1) SA_HIDDEN;
/* c's entry says: accepted from ls (listener l, at its incarnation inc). */
void sa_accepted_from(struct sa_sock *c, int lfd, const struct sa_sock *ls, struct sa_listener *l,
		      uint32_t inc) SA_HIDDEN;

/* The word an accepted connection that is only counted keeps (fdtab.c's
 * origin table): its listener's fd and incarnation, so that a setsockopt on
 * it later is still "accepted from" that listener. */
static inline uint64_t sa_accept_origin_word(int lfd, const struct sa_listener *l)
{
	return ((uint64_t)__atomic_load_n(&l->inc, __ATOMIC_ACQUIRE) << 32) | (uint32_t)(lfd + 1);
}

/* Counts and times an accepted connection that gets no entry. d: fd's side
 * page when the caller has it (the listener's, same chunk), else NULL. */
static inline __attribute__((always_inline)) void sa_accept_count_only(int lfd, int fd, struct sa_listener *l,
								      uint64_t t0, uint64_t t1, struct sa_fd_side *d)
{
	if (d)
		__atomic_store_n(&d->origin[SA_FD_IDX(fd)], sa_accept_origin_word(lfd, l), __ATOMIC_RELEASE);
	else
		sa_fd_origin_set(fd, sa_accept_origin_word(lfd, l));
	SA_RELAXED_ADD(l->accepts, 1);
	SA_RELAXED_ADD(l->counted, 1);
	sa_hist_add_ns_inline(&l->wait_ms, t1 - t0);
	sa_listener_tick_l(l, t1);
}

/* ---- the common accept, judged by sa_accept_route (judge/judge.h) ------ */

/* The common accept below trace, inline in the accept wrapper (called
 * below trace only: at trace every accept goes on). It gathers the gate's
 * facts from the listener's entry and, when sa_accept_route says so,
 * counts and times the connection here (SA_ACCEPT_DONE); otherwise
 * sa_accept_audit does the rest, told whether the sample was taken (its
 * 100 ms clock moved). d is lfd's side page, where its generation was read
 * before the call (listen_gen; NULL: the number had no side page then). The
 * listener's number must not have changed socket, and its entry must say
 * plain (SA_F_PLAIN_LISTENER: TCP and not deferred, set by sa_accept_audit when
 * it found both). errno is kept: the wrapper does not save it for this
 * path, so what could touch it (the stats interval's line, a side page's
 * mmap) keeps it itself. */
static inline __attribute__((always_inline)) int sa_accept_counted(int lfd, int fd, uint64_t t0, uint64_t t1,
								  struct sa_fd_side *d, uint32_t listen_gen)
{
	struct sa_accept_gate g = { .tcp = 1, .listener = 1 };
	struct sa_sock *ls;
	struct sa_listener *l;
	enum sa_accept_route r;

	if ((d ? __atomic_load_n(&d->gen[SA_FD_IDX(lfd)], __ATOMIC_ACQUIRE) : sa_fd_gen(lfd)) != listen_gen ||
	    (ls = sa_fd_get(lfd)) == NULL || !(__atomic_load_n(&ls->flags, __ATOMIC_ACQUIRE) & SA_F_PLAIN_LISTENER) ||
	    (l = __atomic_load_n(&ls->lsn.listener, __ATOMIC_ACQUIRE)) == NULL)
		return SA_ACCEPT_FULL;
	g.accepts = __atomic_load_n(&sa_listener_mine(l)->accepts, __ATOMIC_RELAXED);
	g.netns_ready = sa_netns_base_ready();
	g.sample_due = t1 >= __atomic_load_n(&l->next_sample_ns, __ATOMIC_RELAXED);
	/* Most servers' connections share the listener's chunk of 256
	 * numbers: then the new number's entry and side page are found from
	 * the listener's. */
	if (d && ((unsigned)fd ^ (unsigned)lfd) < (1u << SA_FD_CHUNK_BITS)) {
		g.child_known = __atomic_load_n(&ls[fd - lfd].flags, __ATOMIC_ACQUIRE) != 0;
	} else {
		g.child_known = sa_fd_get(fd) != NULL;
		d = NULL;
	}
	r = sa_accept_route(&g);
	if (SA_LIKELY(r == SA_ROUTE_COUNT)) {
		sa_accept_count_only(lfd, fd, l, t0, t1, d);
		return SA_ACCEPT_DONE;
	}
	if (r != SA_ROUTE_SAMPLE)
		return SA_ACCEPT_FULL;
	/* Threads racing here may both sample once: harmless. */
	__atomic_store_n(&l->next_sample_ns, t1 + SA_ACCEPT_SAMPLE_NS, __ATOMIC_RELAXED);
	return SA_ACCEPT_FULL_SAMPLED;
}

/* sa_accept_counted out of line, for AddressSanitizer builds: inline, its
 * instrumented locals (the histogram's compare-and-swap) would sit in the
 * accept wrapper's frame, and a thread cancelled in the blocking accept
 * would leave their redzones poisoned (life_hangs case 1). */
int sa_accept_counted_out(int lfd, int fd, uint64_t t0, uint64_t t1, struct sa_fd_side *d,
			  uint32_t listen_gen) SA_HIDDEN;

/* Whether the nth occurrence of a finding on a listener gets a line: the
 * 1st, 2nd, 4th, 8th ...; the rest are counted as suppressed. */
static inline int sa_nth_worth_a_line(uint64_t n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

#endif
