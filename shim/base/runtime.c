/*
 * runtime.c: what this process is to the shim: whether it audits (the run
 * state), the configuration in force, its pid, tids, program name, the
 * per-thread re-entry flag, the stack probe and the clocks.
 *
 * Owns only plain values: no lock, no allocation, nothing a signal handler
 * or a forked child could find half-changed. Setting them up (init, fork)
 * is the lifecycle's job in shim/core/.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

__thread int sa_in_signal SA_TLS;
__thread int sa_in_vfork SA_TLS;
/* Read inline through base.h (sa_run_state, sa_cfg, sa_pid, sa_tid,
 * sa_comm_gen); written only here. */
__thread pid_t sa_rt_tid SA_TLS;
int sa_rt_state SA_START_DATA = SA_RUN_NEW;
struct sa_config sa_rt_cfg;
struct sa_rt_proc sa_rt_proc SA_FORK_WORDS;
unsigned sa_rt_comm_gen;    /* bumped whenever comm changes */
static char comm[64] = "?";

void sa_run_set_state(enum sa_run_state st)
{
	__atomic_store_n(&sa_rt_state, (int)st, __ATOMIC_RELEASE);
}

SA_FORK_TEXT struct sa_config *sa_cfg_slot(void)
{
	return &sa_rt_cfg;
}

SA_FORK_TEXT void sa_proc_epoch_next(void)
{
	sa_rt_proc.epoch++;
}

SA_FORK_TEXT void sa_set_pid(pid_t p)
{
	if (__atomic_load_n(&sa_rt_proc.pid, __ATOMIC_RELAXED) != p)
		__atomic_store_n(&sa_rt_proc.pid, p, __ATOMIC_RELAXED);
}

pid_t sa_pid_fill(void)
{
	pid_t p = (pid_t)sa_syscall(SYS_getpid);

	__atomic_store_n(&sa_rt_proc.pid, p, __ATOMIC_RELAXED);
	return p;
}

pid_t sa_tid_fill(void)
{
	sa_rt_tid = (pid_t)sa_syscall(SYS_gettid);
	return sa_rt_tid;
}

SA_FORK_TEXT void sa_tid_forget(void)
{
	if (sa_rt_tid)
		sa_rt_tid = 0;
}

const char *sa_comm(void)
{
	return comm;
}

int sa_nc_open_fn(const char *path, int flags)
{
	return sa_nc_open(path, flags);
}

ssize_t sa_nc_read_fn(int fd, void *buf, size_t n)
{
	return sa_nc_read(fd, buf, n);
}

int sa_nc_close_fn(int fd)
{
	return sa_nc_close(fd);
}

void sa_comm_read(void)
{
	ssize_t n;
	int fd = sa_nc_open("/proc/self/comm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = sa_nc_read(fd, comm, sizeof comm - 1);
	sa_nc_close(fd);
	if (n <= 0)
		return;
	comm[n] = '\0';
	if (comm[n - 1] == '\n')
		comm[n - 1] = '\0';
	__atomic_add_fetch(&sa_rt_comm_gen, 1, __ATOMIC_RELEASE);
}

void sa_runtime_configure(const struct sa_config *c, const char *name)
{
	sa_rt_cfg = *c;
	sa_real_init();   /* what the shim's init does before it turns active */
	sa_rt_proc.pid = getpid();
	sa_rt_tid = 0;
	if (strcmp(comm, name) != 0) {
		snprintf(comm, sizeof comm, "%s", name);
		__atomic_add_fetch(&sa_rt_comm_gen, 1, __ATOMIC_RELEASE);
	}
	sa_run_set_state(SA_RUN_ACTIVE);
}

/*
 * Whether [p, p + n) lies in this thread's stack, between our own frame and
 * the stack's top: frames of our callers, so mapped, and readable without a
 * fault. Lets accept's wrapper read the host's addrlen before the call
 * (nginx keeps it in a local) and take the peer from the host's buffer
 * after it, instead of a getpeername() per line (1 % of an nginx worker at
 * trace level, bench/profile.sh). Not on a signal stack, a coroutine's
 * stack or anything we cannot place: then 0, and the caller asks the kernel.
 * The bounds are read once per thread (for the main thread glibc parses
 * /proc/self/maps).
 */
__thread uintptr_t sa_stack_lo SA_TLS, sa_stack_hi SA_TLS;

void sa_stack_probe(void)
{
	/* Found by name, once: before glibc 2.32 both are libpthread's, which
	 * a host may not load (then the bounds stay unknown). */
	static int (*getattr)(pthread_t, pthread_attr_t *);
	static int (*getstack)(const pthread_attr_t *, void **, size_t *);
	pthread_attr_t at;
	void *lo;
	size_t sz;

	sa_stack_lo = sa_stack_hi = 1;   /* unknown unless the C library tells us */
	if (!__atomic_load_n(&getstack, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&getattr, (__typeof__(getattr))sa_real_sym("pthread_getattr_np"), __ATOMIC_RELAXED);
		__atomic_store_n(&getstack, (__typeof__(getstack))sa_real_sym("pthread_attr_getstack"), __ATOMIC_RELEASE);
	}
	if (getstack && getattr && getattr(pthread_self(), &at) == 0) {
		if (getstack(&at, &lo, &sz) == 0 && sz) {
			sa_stack_lo = (uintptr_t)lo;
			sa_stack_hi = (uintptr_t)lo + sz;
		}
		pthread_attr_destroy(&at);
	}
}

void sa_signals_hold(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	sa_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, _NSIG / 8);
}

void sa_signals_release(const sigset_t *old)
{
	sa_syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
}

int sa_trylock(int *lock)
{
	int me = (int)sa_tid(), cur = 0;

	if (__atomic_compare_exchange_n(lock, &cur, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 1;
	return cur == me;   /* abandoned by this thread: a jump left it held */
}

void sa_unlock(int *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

_Static_assert(sizeof(struct sa_rt_proc) <= SA_FORK_WORDS_BYTES, "the fork words fit their place");

#if defined(__SANITIZE_ADDRESS__)
/* Out of line under AddressSanitizer (base.h says why). */
double sa_now_wall(void)
{
	struct timespec ts;

	if (!sa_clock_trap(CLOCK_REALTIME, &ts))
		sa_clock(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000) / 1e6;
}

uint64_t sa_now_ns(void)
{
	struct timespec ts;

	if (!sa_clock_trap(CLOCK_MONOTONIC, &ts))
		sa_clock(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

#if defined(__aarch64__)
/* Debian's arm64 libjansson.a, linked in, is built with the stack
 * protector, and glibc keeps aarch64's canary in its loader
 * (__stack_chk_guard@GLIBC_2.17, where x86_64 reads %fs:0x28): bound to
 * that, the library needed ld-linux-aarch64.so.1 by name, and a musl
 * program that preloads it failed to start (status 127) instead of running
 * unaudited. Our own copy, hidden, from the same AT_RANDOM bytes glibc
 * uses (low byte zero), set by the constructor before any jansson code. */
uintptr_t __stack_chk_guard SA_HIDDEN = 0xff0a0d0000000000ull;

void sa_canary_init(void)
{
	const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
	uintptr_t g;

	if (!r)
		return;
	memcpy(&g, r, sizeof g);
	__stack_chk_guard = g & ~(uintptr_t)0xff;
}
#endif
