/*
 * ticker.c: the live lines. Counts below trace reach the log in lines
 * written now and then (listener_stats) or at exit (summary); a process
 * that lives for weeks, or a listener whose program stopped calling
 * accept(), would show nothing current. One thread of ours wakes every
 * SOCKAUDIT_STATS_INTERVAL seconds (5 by default) and writes, only when
 * something changed:
 *   - listener_stats for each listener of this process whose counts moved
 *     or whose accept queue holds connections now (read with TCP_INFO);
 *   - a totals line (the summary's figures so far) when any count moved.
 * An idle process gets no line and its thread one futex wake per interval.
 *
 * When the thread exists, and what it must never do:
 *   - started by the first accept or connect this process audits, never by
 *     socket() (a tool that only opens netlink sockets keeps one thread)
 *     nor by listen(): a second thread turns on glibc's multi-threaded
 *     paths in the process for good, and in every child it forks after
 *     (__libc_single_threaded stays false): the cancellation bookkeeping
 *     around each cancellable system call, malloc's locks. In an nginx
 *     worker that is +284 instructions per request (bench/counts.sh, the
 *     thread against SOCKAUDIT_STATS_INTERVAL=0), as much as the shim's
 *     own 293. A master that listens and forks workers that accept (nginx,
 *     apache) so makes no thread, and its workers pay nothing;
 *   - outside any host signal handler and never in a vfork child;
 *   - in a forked child only once the child has lived a second (a
 *     fork-per-connection server's children are gone long before), and
 *     not at all in a forked child that is single-threaded, whose parent
 *     is still there and which listened on nothing itself (a worker; a
 *     daemon's child outlives its parent, and a child that listens owns
 *     its queue): its own calls write its totals line instead (TK_CALLS:
 *     an audited accept, connect or listen finds the interval passed) and
 *     its accept path its listener_stats. A child that has made threads of
 *     its own by then gets the thread (it costs nothing more);
 *   - created with every signal blocked (it inherits the mask: no host
 *     signal is ever delivered to it; libc's own, used by setuid() in a
 *     threaded process, stay open because sigfillset leaves them out);
 *   - stopped and joined before unshare() or setns() (CLONE_NEWUSER,
 *     CLONE_NEWNS and CLONE_FS need a single-threaded caller), started
 *     again by a later call;
 *   - stopped for good by the summary.
 * Without pthread_create (a failure, a limit) the accept path's own ticks
 * remain (sa_listener_tick), as before.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include "core/core.h"

int sa_ticker_state SA_PROC_PAGE;           /* a forked child: TK_NONE, the thread stayed behind */
uint64_t sa_ticker_next_ns SA_PROC_PAGE;    /* TK_CALLS: when a call writes the next totals */
/* The process epoch (1 + its forks) in which this process listen()ed
 * itself: a child's own listen, never its parent's. */
static uint32_t listened_epoch;
static uint32_t wake_word;                  /* futex the thread sleeps on */
static pthread_t thread;
/* A forked child's first audited call: 0 in the first process, 1 in a
 * child until that call (no clock read at the fork itself). */
static uint64_t born_ns SA_PROC_PAGE;
static uint64_t last_fp;                    /* fingerprint of the last totals line */

/* Looked up, not linked: glibc before 2.34 keeps them in libpthread, which
 * a single-threaded host never loaded (no live thread there), and a link
 * would raise the library's glibc floor. */
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*join_fn)(pthread_t, void **);
typedef int (*detach_fn)(pthread_t);
typedef int (*stacksize_fn)(pthread_attr_t *, size_t);
static create_fn p_create;
static join_fn p_join;
static detach_fn p_detach;
static stacksize_fn p_stacksize;

static int find_pthread(void)
{
	if (!p_create) {
		p_join = (join_fn)sa_real_sym("pthread_join");
		p_detach = (detach_fn)sa_real_sym("pthread_detach");
		p_stacksize = (stacksize_fn)sa_real_sym("pthread_attr_setstacksize");
		if (p_join && p_detach && p_stacksize)
			p_create = (create_fn)sa_real_sym("pthread_create");
	}
	return p_create != NULL;
}

static int is_alive(int s)
{
	return s == TK_STARTING || s == TK_RUNNING;
}

static uint64_t every_ns(void)
{
	const struct sa_config *c = sa_cfg();

	return c && c->stats_interval > 0 ? (uint64_t)c->stats_interval * 1000000000ull : 0;
}

/* Whether anything a totals line carries moved: every event counted
 * (lines written, and those counted below the level) but the live lines
 * themselves, and the lines dropped. */
static uint64_t take_fingerprint(void)
{
	uint64_t fp = sa_sink_dropped();
	size_t i;

	for (i = 0; i < SA_NEVENT_NAMES; i++)
		if (i != SA_EV_LISTENER_STATS && i != SA_EV_TOTALS)
			fp += __atomic_load_n(&sa_event_counters[i], __ATOMIC_RELAXED);
	return fp;
}

static void tick(uint64_t now)
{
	uint64_t fp;

	sa_listener_live(now);
	sa_listener_fold_counted();
	fp = take_fingerprint();
	if (fp == last_fp)
		return;
	last_fp = fp;
	sa_totals_write();
}

/* TK_CALLS: a call of the host's found the interval passed. One caller
 * claims it; the live lines are what the thread's tick would write, but the
 * listeners' own (their accept path writes those). */
void sa_ticker_calls_tick(uint64_t now)
{
	uint64_t next = __atomic_load_n(&sa_ticker_next_ns, __ATOMIC_RELAXED), fp;
	uint64_t every = every_ns();

	if (now < next || !every ||
	    !__atomic_compare_exchange_n(&sa_ticker_next_ns, &next, now + every, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	if (sa_proc_threads() > 1) {
		/* Threads of its own now: the thread costs nothing more. */
		int s = TK_CALLS;

		if (__atomic_compare_exchange_n(&sa_ticker_state, &s, TK_NONE, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			sa_ticker_start(now);
		return;
	}
	sa_listener_fold_counted();
	fp = take_fingerprint();
	if (fp == last_fp)
		return;
	last_fp = fp;
	sa_totals_write();
}

static void *run(void *arg)
{
	struct timespec ts;
	uint64_t every = (uint64_t)(uintptr_t)arg;
	uint32_t seen;

	(void)arg;
	sa_in_shim = 1;   /* this thread's own calls pass through our wrappers */
	prctl(PR_SET_NAME, "sockaudit", 0, 0, 0);
	ts.tv_sec = (time_t)(every / 1000000000ull);
	ts.tv_nsec = (long)(every % 1000000000ull);
	for (;;) {
		seen = __atomic_load_n(&wake_word, __ATOMIC_ACQUIRE);
		if (!is_alive(__atomic_load_n(&sa_ticker_state, __ATOMIC_ACQUIRE)))
			break;
		/* A relative wait: a wake (stop) or the interval, whichever first. */
		sa_syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
		if (!is_alive(__atomic_load_n(&sa_ticker_state, __ATOMIC_ACQUIRE)))
			break;
		tick(sa_now_ns());
	}
	return NULL;
}

void sa_ticker_start(uint64_t now)
{
	uint64_t every = every_ns();
	pthread_attr_t attr;
	sigset_t old;
	int expected = TK_NONE, rc;

	if (!every) {
		__atomic_store_n(&sa_ticker_state, TK_OFF, __ATOMIC_RELAXED);
		return;
	}
	/* A forked child waits a second (or the interval, if shorter): most
	 * such children are gone by then, and a worker's first live line
	 * comes while its first burst still runs. */
	{
		/* Threads of a child race here: any first time will do. */
		uint64_t b = __atomic_load_n(&born_ns, __ATOMIC_RELAXED);

		if (b == 1)
			__atomic_store_n(&born_ns, b = now, __ATOMIC_RELAXED);
		if (b && now - b < (every < 1000000000ull ? every : 1000000000ull))
			return;
		/* A single-threaded worker: its calls write its lines. */
		pid_t parent = __atomic_load_n(&sa_rt_proc.parent, __ATOMIC_RELAXED);

		if (b && parent && __atomic_load_n(&listened_epoch, __ATOMIC_RELAXED) != sa_proc_epoch() + 1 &&
		    !sa_in_signal && !sa_in_vfork && sa_proc_threads() == 1 && (pid_t)sa_syscall(SYS_getppid) == parent) {
			int none = TK_NONE;

			if (__atomic_compare_exchange_n(&sa_ticker_state, &none, TK_CALLS, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED)) {
				/* Its first interval's counts: a line now. */
				last_fp = 0;
				__atomic_store_n(&sa_ticker_next_ns, now, __ATOMIC_RELAXED);
				sa_ticker_calls_tick(now);
			}
			return;
		}
	}
	if (sa_in_signal || sa_in_vfork ||
	    !__atomic_compare_exchange_n(&sa_ticker_state, &expected, TK_STARTING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	last_fp = take_fingerprint();   /* what the first lines already said */
	if (!find_pthread() || pthread_attr_init(&attr) != 0) {
		__atomic_store_n(&sa_ticker_state, TK_OFF, __ATOMIC_RELEASE);
		return;
	}
	/* Its deepest path is a listener_stats line (jansson, the sink). */
	p_stacksize(&attr, 256 * 1024);
	/* The thread inherits the mask: every signal but libc's own
	 * (sigfillset leaves those out). */
	sa_signals_hold(&old);
	rc = p_create(&thread, &attr, run, (void *)(uintptr_t)every);
	sa_signals_release(&old);
	pthread_attr_destroy(&attr);
	/* RUNNING only once `thread` is set: a pause waits out STARTING. */
	__atomic_store_n(&sa_ticker_state, rc == 0 ? TK_RUNNING : TK_OFF, __ATOMIC_RELEASE);
}

/* Stops the thread and waits for it; the next audited call may start
 * another (pause) or none will (for good). */
static void stop(int for_good)
{
	int s, spins = 0;

	/* Another thread starting or stopping it: wait for that to end (a
	 * pause that returned early would let unshare() fail). */
	while ((s = __atomic_load_n(&sa_ticker_state, __ATOMIC_ACQUIRE)) == TK_STARTING || s == TK_STOPPING) {
		if (++spins > 100000)
			return;
		sched_yield();
	}
	if (s != TK_RUNNING) {
		if (for_good)
			__atomic_store_n(&sa_ticker_state, TK_OFF, __ATOMIC_RELEASE);
		return;
	}
	if (!__atomic_compare_exchange_n(&sa_ticker_state, &s, TK_STOPPING, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	__atomic_add_fetch(&wake_word, 1, __ATOMIC_RELEASE);
	sa_syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	if (!for_good && pthread_self() != thread)
		p_join(thread, NULL);
	else
		p_detach(thread);
	__atomic_store_n(&sa_ticker_state, for_good ? TK_OFF : TK_NONE, __ATOMIC_RELEASE);
}

void sa_ticker_pause(void)
{
	int err = errno;

	stop(0);
	sa_listener_live_on(0);
	errno = err;
}

/* At the summary, perhaps inside a fatal signal's catcher: no join (not
 * async-signal-safe); the thread sees the state at its next wake and ends,
 * or ends with the process. */
void sa_ticker_end(void)
{
	int s = __atomic_exchange_n(&sa_ticker_state, TK_OFF, __ATOMIC_ACQ_REL);

	if (s == TK_RUNNING) {
		__atomic_add_fetch(&wake_word, 1, __ATOMIC_RELEASE);
		sa_syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

void sa_ticker_listening(void)
{
	int s = TK_CALLS;

	if (__atomic_load_n(&listened_epoch, __ATOMIC_RELAXED) != sa_proc_epoch() + 1)
		__atomic_store_n(&listened_epoch, sa_proc_epoch() + 1, __ATOMIC_RELAXED);
	/* Its own queue: the thread, from the next call on (sa_ticker_poll). */
	__atomic_compare_exchange_n(&sa_ticker_state, &s, TK_NONE, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* In a forked child: the thread did not come along. */
void sa_ticker_after_fork(void)
{
	if (__atomic_load_n(&sa_ticker_state, __ATOMIC_RELAXED) != TK_NONE) {
		__atomic_store_n(&sa_ticker_state, TK_NONE, __ATOMIC_RELAXED);
		sa_listener_live_on(0);   /* the accept path writes them until its own starts */
	}
	if (born_ns != 1)
		born_ns = 1;
}
