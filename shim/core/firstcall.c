/*
 * firstcall.c: the first call that needs the shim set up, from whichever
 * thread, signal handler or child it comes: one claims the set-up and runs
 * it guarded (signals blocked, cancellation off), the others wait for it
 * for a bounded time, and a child forked or cloned while it ran sets up
 * itself. The set-up itself is sa_lifecycle_init (lifecycle.c).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

/* Set by the one caller that runs the set-up; init_here on its thread. The
 * process that claimed it (a child forked or cloned while it ran has
 * another pid, and no thread of its own setting up). */
static int init_claimed;
static pid_t init_pid;
static __thread int init_here SA_TLS;
/* A waiter gave up on a set-up that outlived INIT_WAIT_NS: later first
 * calls do not wait again (each passes through, counted) until it ends. */
static int init_given_up;

/*
 * The set-up runs inside the host's life (its first socket call), so
 * nothing of the host's may land inside it: every signal blocked (one
 * rt_sigprocmask each way, once per process: a handler that jumps out,
 * exits, execs or forks can no longer leave it half done, and one that
 * makes socket calls makes them after it), and cancellation disabled
 * (its open/read/close are cancellation points; socket() is not), both
 * put back exactly as they were. glibc's SIGCANCEL and SIGSETXID stay
 * deliverable (sigfillset leaves them out): a setuid() in another thread
 * never waits on us.
 */
static void do_init_guarded(void)
{
	static int (*setcancel)(int, int *);
	int err = errno, cs = PTHREAD_CANCEL_ENABLE;

	if (!setcancel)
		setcancel = (int (*)(int, int *))sa_real_sym("pthread_setcancelstate");
	if (setcancel)
		setcancel(PTHREAD_CANCEL_DISABLE, &cs);
	sa_lifecycle_init();
	if (setcancel && cs != PTHREAD_CANCEL_DISABLE)
		setcancel(cs, NULL);
	errno = err;
}

/* How long a first call waits for another thread's set-up (which takes
 * about 0.1 ms, and tens of ms on a loaded machine): bounded by time, not
 * iterations, so a busy machine does not shorten it, and a set-up thread
 * stopped under a debugger cannot hold the others longer. */
#define INIT_WAIT_NS (2ull * 1000 * 1000 * 1000)

static uint64_t raw_now_ns(void)
{
	struct timespec ts;

	if (sa_syscall3_raw(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Runs the set-up on this thread, which claimed it with every signal
 * blocked (a handler that jumped out between the claim and the set-up
 * would leave it claimed and never run). */
static void init_here_now(void)
{
	init_pid = (pid_t)sa_syscall3_raw(SYS_getpid, 0, 0, 0);
	init_here = 1;
	do_init_guarded();
	init_here = 0;
}

/*
 * Another thread is setting up (init runs at a program's first socket
 * call, when its threads may race): wait for it, as pthread_once would, so
 * that their first calls are audited too. Raw system calls only (no
 * cancellation point, errno kept): a few yields, then 50 us sleeps, so
 * waiters leave the CPU to the thread that sets up. A child forked or
 * cloned while the set-up ran has no thread setting up: it sets up itself.
 */
static int wait_for_init(void)
{
	struct timespec nap = { 0, 50 * 1000 };
	uint64_t t0 = 0, now;
	int err = errno;

	if ((pid_t)sa_syscall3_raw(SYS_getpid, 0, 0, 0) != init_pid && init_pid) {
		int shares = 0;

		/* Only the forking thread exists here: nobody races this. */
		sa_lifecycle_new_process_fds(shares);
		sa_run_set_state(SA_RUN_NEW);
		init_given_up = 0;
		errno = err;
		{
			sigset_t old;

			sa_signals_hold(&old);
			init_here_now();
			sa_signals_release(&old);
		}
		errno = err;
		return sa_active();
	}
	for (int i = 0; sa_run_state() <= SA_RUN_INITIALIZING; i++) {
		if (__atomic_load_n(&init_given_up, __ATOMIC_RELAXED))
			goto give_up;
		now = raw_now_ns();
		if (!t0)
			t0 = now;
		else if (now - t0 > INIT_WAIT_NS) {
			__atomic_store_n(&init_given_up, 1, __ATOMIC_RELAXED);
			goto give_up;
		}
		if (i < 8)
			sa_syscall3_raw(SYS_sched_yield, 0, 0, 0);
		else
			sa_syscall3_raw(SYS_nanosleep, (long)&nap, 0, 0);
	}
	errno = err;
	return sa_active();
give_up:
	sa_unaudited_note(SA_UNAUD_INIT_WAIT);
	errno = err;
	return 0;
}

int sa_ensure_init_slow(void)
{
	enum sa_run_state st = sa_run_state();

	if (st == SA_RUN_ACTIVE)
		return 1;
	if (st == SA_RUN_DISABLED)
		return 0;
	if (st == SA_RUN_NEW) {
		/* Before the claim (every thread of this process writes the
		 * same): a child forked right after it knows it is not this. */
		sigset_t old;
		int err = errno, won;

		if (!init_pid)
			init_pid = (pid_t)sa_syscall3_raw(SYS_getpid, 0, 0, 0);
		sa_signals_hold(&old);
		won = __atomic_exchange_n(&init_claimed, 1, __ATOMIC_ACQ_REL) == 0;
		if (won)
			init_here_now();
		sa_signals_release(&old);
		errno = err;
		if (won)
			return sa_active();
	}
	/* Not on the thread that is setting up (its own calls, made by our
	 * code, never come here). */
	if (init_here)
		return 0;
	return wait_for_init();
}

/* An attach after a detach: set up again, as a new process would (its own
 * init line and counts), on this thread. */
void sa_init_again(void)
{
	sigset_t old;

	sa_lifecycle_new_process_fds(1);
	sa_run_set_state(SA_RUN_NEW);
	init_given_up = 0;
	sa_signals_hold(&old);
	init_here_now();
	sa_signals_release(&old);
}

/* The process ends (sa_lifecycle_summary says when and what is written). */
SA_FORK_TEXT void sa_lifecycle_end(void)
{
	/* A call of this thread's still in flight at its exit() never
	 * returns (a handler jumped out of it, or is exiting from inside it):
	 * that call first, so the summary counts it. */
	if (__atomic_load_n(&sa_inflight.t0, __ATOMIC_RELAXED) && !sa_in_vfork && (!sa_in_shim || sa_in_signal))
		sa_inflight_settle();
	/* Every socket call of this process was made inside a signal handler
	 * (none set it up): set up now, outside any handler, to say so. */
	if (sa_run_state() == SA_RUN_NEW && !sa_in_shim && !sa_in_vfork && sa_unaudited_any())
		sa_ensure_init_slow();
	sa_lifecycle_summary();
}

SA_FORK_TEXT __attribute__((destructor)) static void sa_dtor(void)
{
	sa_lifecycle_end();
}

