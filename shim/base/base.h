/*
 * base.h: the shim's ground floor (shim/base/): the real libc symbols,
 * the configuration (a pure parse of SOCKAUDIT_*), the process's runtime
 * state (active or not, pid, tid, comm, the re-entry flag) and the clocks.
 *
 * Layers, lowest first: judge (the pure judges, which call nothing of the
 * shim, not even this floor), base, line, kernel, state, audit, core. A
 * file calls only into its own layer and the ones below; a lower layer that needs
 * something from a higher one gets a registered hook (`make check-layers`
 * fails on an upward reference). Never installed.
 *
 * Every sa_* helper returns 0 or -errno and never exits, aborts or raises
 * a signal: a wrapper can reach all of them.
 */
#ifndef SA_BASE_H
#define SA_BASE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>

#include "sockaudit.h"

#define SA_HIDDEN __attribute__((visibility("hidden")))
#include "base/placement.h"
#define SA_EXPORT __attribute__((visibility("default")))
#define SA_LIKELY(x) __builtin_expect(!!(x), 1)
#define SA_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- real.c: the real libc symbols, resolved once ---------------------- */

/* The slots, in the order of real.c's names[]. */

struct sa_real_fns {
	int (*socket)(int, int, int);
	int (*socketpair)(int, int, int, int[2]);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*listen)(int, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*close)(int);
	int (*close_range)(unsigned int, unsigned int, int);
	void (*closefrom)(int);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	sighandler_t (*signal)(int, sighandler_t);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	ssize_t (*recv_chk)(int, void *, size_t, size_t, int);
	ssize_t (*recvfrom_chk)(int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *);
	long (*syscall)(long, ...);
	int (*clone)(int (*)(void *), void *, int, void *, ...);
	void (*_exit)(int);
	/* exec and spawn: resolved with the rest, or on first use without
	 * allocating (a vfork child, a signal handler). */
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			   char *const[], char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			    char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
};
extern struct sa_real_fns sa_real SA_HIDDEN;
/* Resolves every missing symbol in one pass over the objects loaded after
 * ours (what dlsym(RTLD_NEXT) finds); lock-free, safe to call repeatedly,
 * from any thread or signal handler. The shim's init calls it: code that
 * runs only once the shim is set up (audit, state, kernel/tcpinfo) calls sa_real.*
 * directly; code that may run before (wrappers, line, base, the signal
 * trampoline's set-up) goes through SA_REAL or SA_REAL_READY. */
void sa_real_init(void) SA_HIDDEN;
/* Any other function (or variable) by name, from any object but ours, in
 * load order (default version), or NULL: for the few the shim uses that old glibc keeps in libpthread,
 * a library the host may not have loaded. The names the shim asks for are
 * found in the set-up's walk (sa_real_init) and kept; any other walks. */
void *sa_real_sym(const char *name) SA_HIDDEN;
void *sa_self_sym(const char *name) SA_HIDDEN;   /* our own definition (an attach's): walks */
/* got.c: every loaded object's GOT slots for names[i] (not ours, the
 * loader's, libc's, the vDSO's) at ours[i]: the number changed, or
 * -(those that could not be). sa_got_restore puts them back. */
int sa_got_patch(const char *const *names, void *const *ours, size_t n) SA_HIDDEN;
void sa_got_restore(void) SA_HIDDEN;
size_t sa_got_patched(void) SA_HIDDEN;
/* Resolves one slot (SA_REAL_SLOT(name)): what the shim's own code needs
 * before its init (the sink, the signal trampoline's set-up), without
 * paying for the rest; a slot of the few every shell calls (sigaction,
 * read, write, close, dup2, _exit, ...) brings those along in the same
 * walk. */
void sa_real_one(unsigned slot) SA_HIDDEN;
#define SA_REAL_SLOT(fn) ((unsigned)(offsetof(struct sa_real_fns, fn) / sizeof(void (*)(void))))
#define SA_REAL_READY(fn) do { if (SA_UNLIKELY(!sa_real.fn)) sa_real_one(SA_REAL_SLOT(fn)); } while (0)
/* The real function, resolved first if it is not yet: what the shim's own
 * code calls (SA_REAL(close)(fd)). */
#define SA_REAL(fn) (__extension__({ SA_REAL_READY(fn); sa_real.fn; }))
/* The process's environment now (what environ holds), or NULL when the
 * variable is not found. Looked up by name in every object but ours, the
 * program first (sa_real_sym): a program that uses environ has its own copy
 * (a copy relocation), and libc's then is not the one in use. Not linked
 * to: that would be a symbol lookup the loader makes at every exec. */
char **sa_environ(void) SA_HIDDEN;
/* libc's syscall() (a plain trap: no cancellation point, no other preload's
 * wrapper), never our own exported syscall(). */
static inline long (*sa_sysfn(void))(long, ...)
{
	if (SA_UNLIKELY(!sa_real.syscall))
		sa_real_one(SA_REAL_SLOT(syscall));
	return sa_real.syscall;
}
#define sa_syscall(...) (sa_sysfn()(__VA_ARGS__))
/* The same trap written inline, for the one call every line makes (its
 * write): no call into libc, errno untouched; returns the result or
 * -errno. */
static inline long sa_syscall3_raw(long nr, long a, long b, long c)
{
#if defined(__x86_64__)
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "0"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
#else
	int *e = __errno_location(), saved = *e;
	long r = sa_syscall(nr, a, b, c);

	if (r < 0) {
		r = -*e;
		*e = saved;
	}
	return r;
#endif
}

/* fstat(2) as the kernel's system call: glibc's fstat symbol is 2.33's
 * (before, an inline call of __fxstat), and the kernel's struct stat is
 * the C library's on x86_64 and arm64 (glibc and musl). 0, or -1 with
 * errno set. */
static inline int sa_fstat(int fd, struct stat *st)
{
	long r = sa_syscall3_raw(SYS_fstat, fd, (long)st, 0);

	if (SA_UNLIKELY(r < 0)) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

/* open, read and close as the kernel's system calls, never libc's: libc's
 * are cancellation points, and the shim's own reads (/proc, sysctls) run
 * inside calls that are none (socket, listen, setsockopt): a thread with a
 * pending cancel must not be cancelled inside the host's socket(). -1 with
 * errno set, as libc's. openat's mode is not passed: none creates. */
static inline long sa_nc_ret(long r)
{
	if (SA_UNLIKELY(r < 0 && r > -4096)) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
static inline int sa_nc_open(const char *path, int flags)
{
	return (int)sa_nc_ret(sa_syscall3_raw(SYS_openat, AT_FDCWD, (long)path, flags));
}
static inline ssize_t sa_nc_read(int fd, void *buf, size_t n)
{
	return sa_nc_ret(sa_syscall3_raw(SYS_read, fd, (long)buf, (long)n));
}
static inline int sa_nc_close(int fd)
{
	return (int)sa_nc_ret(sa_syscall3_raw(SYS_close, fd, 0, 0));
}
/* Function-pointer forms, for code shared with the CLI. */
int sa_nc_open_fn(const char *path, int flags) SA_HIDDEN;
ssize_t sa_nc_read_fn(int fd, void *buf, size_t n) SA_HIDDEN;
int sa_nc_close_fn(int fd) SA_HIDDEN;

/* Zeroes n bytes at p unless they are all zero already. A forked child
 * resets its counters with this: every page it writes is a private copy
 * (a page fault each, tens of microseconds on a virtual machine), so the
 * counters it never used stay shared with its parent. */
static inline void sa_zero(void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i = 0;
	uint64_t w[8], acc = 0;

	/* Looked at 64 bytes at a time: a child resets a few kB of
	 * histograms it inherited unused, where a byte loop would take 16,000
	 * instructions, a sixth of a socat fork child's own. */
	for (; i + sizeof w <= n; i += sizeof w) {
		__builtin_memcpy(w, b + i, sizeof w);
		if (w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7])
			goto dirty;
	}
	for (; i + sizeof acc <= n; i += sizeof acc) {
		__builtin_memcpy(w, b + i, sizeof acc);
		acc |= w[0];
	}
	for (; i < n; i++)
		acc |= b[i];
	if (!acc)
		return;
dirty:
	__builtin_memset(p, 0, n);
}
#define SA_ZERO(x) sa_zero(&(x), sizeof(x))

/* round() (halves away from zero) without libm, which the shim does not
 * load: the same value for every double. */
static inline double sa_round(double x)
{
	double t;

	if (!(x > -4503599627370496.0 && x < 4503599627370496.0))   /* 2^52: whole already, or NaN */
		return x;
	t = (double)(long long)x;          /* toward zero, exact */
	if (x - t >= 0.5)
		t += 1.0;
	else if (t - x >= 0.5)
		t -= 1.0;
	return t == 0.0 ? __builtin_copysign(0.0, x) : t;
}

/* ---- config.c: SOCKAUDIT_* -> validated config (a pure function) ------- */

enum sa_level { SA_LEVEL_WARN = 0, SA_LEVEL_INFO = 1, SA_LEVEL_TRACE = 2 };

enum sa_sink_kind { SA_SINK_STDERR, SA_SINK_PATH, SA_SINK_FD, SA_SINK_SYSLOG, SA_SINK_JOURNAL };
/* The sinks that write through an fd of the shim's own, opened at the first line. */
#define SA_SINK_OWNS_FD(k) ((k) == SA_SINK_PATH || (k) == SA_SINK_SYSLOG || (k) == SA_SINK_JOURNAL)

#define SA_MAX_WARNINGS 16
struct sa_config_warning {
	char var[48];
	char value[80];
	char why[200];
};

struct sa_config {
	int disable;                 /* SOCKAUDIT_DISABLE=1 */
	enum sa_level level;         /* SOCKAUDIT_LEVEL */
	enum sa_sink_kind sink;      /* SOCKAUDIT_LOG */
	char path[512];              /* path sink, %p already expanded */
	int path_pid;                /* the path named the pid (%p) */
	int sink_fd;                 /* fd:N */
	int stats_interval;          /* SOCKAUDIT_STATS_INTERVAL, seconds, 0 = exit only */
	int slow_connect_ms;         /* SOCKAUDIT_SLOW_CONNECT_MS */
	int quickack_min_reasserts;  /* SOCKAUDIT_QUICKACK_MIN_REASSERTS */
	int quickack_max_segs;       /* SOCKAUDIT_QUICKACK_MAX_SEGS */
	char comm[256];              /* SOCKAUDIT_COMM, "" = all */
	int comm_overflow;           /* SOCKAUDIT_COMM too long: audit no program */
	int nwarnings;
	struct sa_config_warning warnings[SA_MAX_WARNINGS];
};

typedef char *(*sa_getenv_fn)(const char *name);
/* Takes the SOCKAUDIT_* variables (and, for a relative log path, the
 * working directory) as the process started; once, from the constructor
 * or the first init. sa_env_get reads that copy (a sa_getenv_fn). */
void sa_env_capture(char **envp) SA_HIDDEN;   /* NULL: environ */
void sa_env_capture_attach(char **settings) SA_HIDDEN;   /* the attach tool's, in place of the start's */
int sa_env_secure(void) SA_HIDDEN;   /* AT_SECURE: asked once, on first use */
/* Whether NAME is among the settings copied, secure execution or not (no
 * getauxval): for a decision that sa_env_get() then makes properly. */
int sa_env_present(const char *name) SA_HIDDEN;
/* LD_PRELOAD's value as sa_env_capture(envp) found it: for the constructor. */
const char *sa_env_start_preload(void) SA_HIDDEN;
char *sa_env_get(const char *name) SA_HIDDEN;
/* 1 once the copy is the constructor's, which nothing changes after. */
int sa_env_final(void) SA_HIDDEN;
/* Whether SOCKAUDIT_DISABLE's value v asks to disable (1, on, yes, true,
 * any case); pure, no libc call. */
int sa_config_disables(const char *v) SA_HIDDEN;
/* Fills *c from the environment read through get(); bad values keep the
 * default and add a warning. pid expands %p in a path. Never fails. */
void sa_config_load(struct sa_config *c, sa_getenv_fn get, pid_t pid) SA_HIDDEN;
/* Makes a relative path absolute against dir (an absolute directory; ""
 * leaves the path as it is), in place. 0, or -ENAMETOOLONG. Pure. */
int sa_config_absolute(const char *dir, char *path, size_t cap) SA_HIDDEN;
/* 1 when comm is in the comma list (or the list is empty). */
int sa_config_comm_match(const char *list, const char *comm) SA_HIDDEN;
/* "warn", "info", "trace". */
const char *sa_level_name(enum sa_level l) SA_HIDDEN;

/* ---- runtime.c: this process's state ------------------------------------ */

/* The shim's TLS model, on every declaration (or the compiler calls
 * __tls_get_addr on each access from other files). Initial-exec: loaded at
 * startup or by LD_PRELOAD, the library's TLS is static, one %fs-relative
 * load. The musl build for attach (libsockaudit-musl-attach.so) says
 * global-dynamic with TLS descriptors: musl's dlopen refuses initial-exec
 * TLS, and a descriptor costs one indirect call that returns the offset. */
#ifndef SA_TLS_MODEL
#define SA_TLS_MODEL "initial-exec"
#endif
#define SA_TLS __attribute__((tls_model(SA_TLS_MODEL)))
/* Per thread: >0 while the shim's own code runs (or a host signal handler
 * that the trampoline marked); wrappers then pass straight through. */
extern __thread int sa_in_shim SA_HIDDEN SA_TLS;
/* Per thread: inside a host signal handler (core/signals.c's trampoline). */
extern __thread int sa_in_signal SA_HIDDEN SA_TLS;
/* Per thread: a vfork child runs on it (core/vfork_*.S): the child shares
 * our memory, so every wrapper passes straight through until it execs or
 * exits. */
extern __thread int sa_in_vfork SA_HIDDEN SA_TLS;

enum sa_run_state { SA_RUN_NEW, SA_RUN_INITIALIZING, SA_RUN_ACTIVE, SA_RUN_DISABLED };
/* The values behind the accessors below: runtime.c owns and sets them.
 * Read inline: every line reads the state, the level, pid, tid and the
 * program name's generation (a call each would add ~40 instructions to an
 * accept line at trace; bench/callgrind.sh). */
extern int sa_rt_state SA_HIDDEN;
extern struct sa_config sa_rt_cfg SA_HIDDEN;
/* pid and the process epoch side by side, with the parent's pid and the
 * clock traps (below): a forked child writes them all, on the fd table's
 * first page (SA_FORK_WORDS). */
struct sa_rt_proc {
	pid_t pid;
	uint32_t epoch;
	pid_t parent;          /* a forked child: its parent's pid (0: not known, or none) */
	uint32_t clock_traps;  /* sa_clock_traps */
};
extern struct sa_rt_proc sa_rt_proc SA_HIDDEN;
extern unsigned sa_rt_comm_gen SA_HIDDEN;
extern __thread pid_t sa_rt_tid SA_HIDDEN SA_TLS;
pid_t sa_tid_fill(void) SA_HIDDEN;           /* gettid, cached for the thread */

static inline enum sa_run_state sa_run_state(void)
{
	return (enum sa_run_state)__atomic_load_n(&sa_rt_state, __ATOMIC_ACQUIRE);
}
void sa_run_set_state(enum sa_run_state st) SA_HIDDEN;
/* 1 when the shim audits this process (init done, not disabled). Cheap. */
static inline int sa_active(void)
{
	return sa_run_state() == SA_RUN_ACTIVE;
}
/* The configuration in force, or NULL when the shim is not active. */
static inline const struct sa_config *sa_cfg(void)
{
	return sa_active() ? &sa_rt_cfg : NULL;
}
/* The one configuration object, for lifecycle code to (re)load. */
struct sa_config *sa_cfg_slot(void) SA_HIDDEN;

/* This process's pid, asked (getpid) the first time it is needed after a
 * fork: a child that writes no line never asks. */
pid_t sa_pid_fill(void) SA_HIDDEN;
static inline pid_t sa_pid(void)
{
	pid_t p = __atomic_load_n(&sa_rt_proc.pid, __ATOMIC_RELAXED);

	return SA_LIKELY(p != 0) ? p : sa_pid_fill();
}
void sa_set_pid(pid_t pid) SA_HIDDEN;
/* Which process this is, in the line of forks since the program started:
 * 0 in the first, one more in each forked child (sa_proc_epoch_next, from
 * the atfork handler). State that belongs to one process is stamped with
 * it and ignored by a child, instead of being cleared at every fork. */
static inline uint32_t sa_proc_epoch(void)
{
	return __atomic_load_n(&sa_rt_proc.epoch, __ATOMIC_RELAXED);
}
void sa_proc_epoch_next(void) SA_HIDDEN;
static inline pid_t sa_tid(void)
{
	return SA_LIKELY(sa_rt_tid) ? sa_rt_tid : sa_tid_fill();
}
void sa_tid_forget(void) SA_HIDDEN;          /* in a forked child */
#if defined(__aarch64__)
void sa_canary_init(void) SA_HIDDEN;         /* our stack-protector canary (runtime.c) */
#endif
const char *sa_comm(void) SA_HIDDEN;
static inline unsigned sa_comm_gen(void)    /* changes when sa_comm() does */
{
	return __atomic_load_n(&sa_rt_comm_gen, __ATOMIC_ACQUIRE);
}
void sa_comm_read(void) SA_HIDDEN;           /* from /proc/self/comm */
/* Tests: make the shim active with this config and program name. */
void sa_runtime_configure(const struct sa_config *c, const char *comm) SA_HIDDEN;

/* 1 when [p, p + n) is in this thread's stack above our own frame (the
 * host's locals): readable without a fault. */
extern __thread uintptr_t sa_stack_lo SA_HIDDEN SA_TLS, sa_stack_hi SA_HIDDEN SA_TLS;
void sa_stack_probe(void) SA_HIDDEN;   /* reads this thread's bounds once */
static inline int sa_stack_holds(const void *p, size_t n)
{
	/* The stack pointer, not a local's address: an addressable local in a
	 * wrapper's frame gets AddressSanitizer redzones, which a thread
	 * cancelled inside the wrapper's blocking call leaves poisoned. */
#if defined(__x86_64__)
	uintptr_t me;

	__asm__ volatile("mov %%rsp, %0" : "=r"(me));
#elif defined(__aarch64__)
	uintptr_t me;

	__asm__ volatile("mov %0, sp" : "=r"(me));
#else
	uintptr_t me = (uintptr_t)__builtin_frame_address(0);
#endif
	uintptr_t a = (uintptr_t)p;

	if (SA_UNLIKELY(!sa_stack_hi))
		sa_stack_probe();
	return me >= sa_stack_lo && me < sa_stack_hi && a >= me && n <= sa_stack_hi - a && a < sa_stack_hi;
}

/* Every signal held off for this thread across one rare piece of shim work
 * that allocates (a jansson event, a new listener's state): a host handler
 * that would siglongjmp or fork must not meet the heap or a lock half-way.
 * Two rt_sigprocmask calls; never on a per-connection path. */
void sa_signals_hold(sigset_t *old) SA_HIDDEN;
void sa_signals_release(const sigset_t *old) SA_HIDDEN;
/* A lock that is only ever tried, never waited for: 1 when taken. A
 * holder that a siglongjmp or a cancellation abandoned on this same thread
 * is taken over; one on another thread makes the caller skip its work. */
int sa_trylock(int *lock) SA_HIDDEN;
void sa_unlock(int *lock) SA_HIDDEN;

/* A forked child's first SA_CLOCK_TRAPS clock reads are system calls,
 * inline: the vDSO's page and libc's clock_gettime are file pages a child
 * has no page table entries for, a fault each (mapping 16 pages around
 * it: several microseconds on a virtual machine), where a socat fork child
 * reads the clock twice in all (around its connect).
 * Set by the fork handler (sa_lifecycle_new_process); 0 in every other
 * process. With the pid (SA_FORK_WORDS), on the page the child writes anyway. */
#define SA_CLOCK_TRAPS 4
#define sa_clock_traps (sa_rt_proc.clock_traps)
static inline int sa_clock_trap(clockid_t id, struct timespec *ts)
{
	uint32_t n = __atomic_load_n(&sa_clock_traps, __ATOMIC_RELAXED);

	if (SA_LIKELY(n == 0))
		return 0;
	__atomic_store_n(&sa_clock_traps, n - 1, __ATOMIC_RELAXED);
	return sa_syscall3_raw(SYS_clock_gettime, id, (long)ts, 0) == 0;
}

/* ---- clock.c: the kernel's clocks -------------------------------------- */

/* The vDSO's clock_gettime (or the system call where there is none), never
 * the global-scope clock_gettime: a preload after us (libfaketime) may
 * fake that one, and durations are real time. Inline: a clock read on
 * the accept path is a call through this pointer. */
extern int (*sa_clock_fn)(clockid_t, struct timespec *) SA_HIDDEN;
void sa_clock_failed(clockid_t id, struct timespec *ts) SA_HIDDEN;
int sa_clock_is_vdso(void) SA_HIDDEN;   /* 1: the vDSO's; 0: the system call or libc's */
static inline void sa_clock(clockid_t id, struct timespec *ts)
{
	if (SA_UNLIKELY(sa_clock_fn(id, ts) != 0))
		sa_clock_failed(id, ts);
}

/* Inline: a call each would be a tenth of an accept's cost. Not under
 * AddressSanitizer: the timespec would be an instrumented local of the
 * wrapper's frame, and a thread cancelled in the wrapper's blocking call
 * (accept, connect) would leave its redzones poisoned. */
#if defined(__SANITIZE_ADDRESS__)
double sa_now_wall(void) SA_HIDDEN;             /* Unix seconds */
uint64_t sa_now_ns(void) SA_HIDDEN;             /* CLOCK_MONOTONIC */
#else
static inline double sa_now_wall(void)          /* Unix seconds */
{
	struct timespec ts;

	if (!sa_clock_trap(CLOCK_REALTIME, &ts))
		sa_clock(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000) / 1e6;
}
static inline uint64_t sa_now_ns(void)          /* CLOCK_MONOTONIC */
{
	struct timespec ts;

	if (!sa_clock_trap(CLOCK_MONOTONIC, &ts))
		sa_clock(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

#endif
