/*
 * interpose_proc.c: the libc names of process life (the rest are in
 * interpose.c and interpose_io.c, the only other files that define libc names):
 * syscall(), vfork() where no assembly exists, clone(), _exit()/_Exit(),
 * the exec family and posix_spawn(), sigaction() and signal(), unshare() and setns(). Same rule as
 * interpose.c: the host sees
 * exactly what libc would have given it.
 */
#include <errno.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core.h"

/* As in interpose.c: a cold resolver of its own per function, no argument. */
#define COLD_RESOLVER(fn) \
	static __attribute__((noinline, cold)) void resolve_##fn(void) { sa_real_one(SA_REAL_SLOT(fn)); }
#define READY(fn) do { if (SA_UNLIKELY(!sa_real.fn)) resolve_##fn(); } while (0)
COLD_RESOLVER(syscall)
#ifndef __SANITIZE_THREAD__
COLD_RESOLVER(sigaction) COLD_RESOLVER(signal)
#endif

/*
 * syscall(): a program that closes or duplicates through it (libuv, Go's
 * cgo runtime, a hand-rolled close-all loop) would otherwise close our log
 * fd or a tracked socket behind our back. Same checks as the libc calls,
 * then the call exactly as made. Calls we would audit through libc are
 * noted once as a blind spot.
 */
/*
 * A process made by syscall(SYS_clone, ...) (vsftpd's sessions, with
 * CLONE_NEWIPC; bubblewrap's raw_clone), SYS_clone3 or SYS_fork is a new
 * process that no fork handler hears of: its own pid, counts and %p file
 * from its first instruction, as after fork(). Only a child that returns
 * here on a copy of our stack can (no CLONE_VM: with a stack of its own it
 * could not return through syscall() at all). The flags are read after the
 * call: a clone3 whose arguments the kernel read is readable.
 */
static __attribute__((noinline)) long raw_clone(long n, const long a[6])
{
	long r = sa_real.syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	unsigned long long flags = 0;
	int err;

	if (r != 0 || sa_in_vfork || IN_VM_CHILD())
		return r;
	err = errno;
#ifdef SYS_clone3
	if (n == SYS_clone3)
		flags = *(const unsigned long long *)a[0];
	else
#endif
	if (n == SYS_clone)
		flags = (unsigned long)a[0];
	if (!(flags & CLONE_VM) && sa_active())
		sa_lifecycle_new_process_fds(!!(flags & CLONE_FILES));
	errno = err;
	return r;
}

/* unshare() and setns() calls that need a single-threaded caller (the
 * kernel says EINVAL otherwise): a new user namespace, a new or joined
 * mount namespace, an fs_struct of its own. setns(fd, 0) joins whatever fd
 * is. Our live thread is stopped and joined first; a later audited call
 * starts another. The calls themselves are the system calls, as glibc's
 * and musl's are (no slot of ours: sa_real's table shares a page with the
 * data every exec writes, and has no room left on it). */
#define SA_NEEDS_ONE_THREAD (CLONE_NEWUSER | CLONE_NEWNS | CLONE_FS)

SA_EXPORT int unshare(int flags)
{
	if (flags & SA_NEEDS_ONE_THREAD)
		sa_ticker_pause();
	return (int)sa_syscall(SYS_unshare, flags);
}

SA_EXPORT int setns(int fd, int nstype)
{
	if (nstype == 0 || (nstype & SA_NEEDS_ONE_THREAD))
		sa_ticker_pause();
	return (int)sa_syscall(SYS_setns, fd, nstype);
}

static inline int is_raw_clone(long n)
{
	return n == SYS_clone
#ifdef SYS_clone3
	       || n == SYS_clone3
#endif
#ifdef SYS_fork
	       || n == SYS_fork
#endif
		;
}

SA_EXPORT long syscall(long n, ...)
{
	va_list ap;
	long a[6];
	int i;

	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	READY(syscall);
	if (SA_UNLIKELY(is_raw_clone(n)) && (!sa_in_shim || sa_in_signal))
		return raw_clone(n, a);
	/* Set up on a call that is worth a line even when it is the
	 * program's first (init runs at the first call that needs it); any
	 * other number before init passes straight through, at no cost. Not
	 * in a vfork child: its set-up would be the parent's. */
	if (!sa_in_shim && !IN_VM_CHILD() &&
	    (SA_LIKELY(sa_active()) || (sa_blind_watches(n) && !sa_in_vfork && sa_ensure_init()))) {
		switch (n) {
		case SYS_close:
			sa_before_close((int)a[0]);
			break;
		case SYS_unshare:
			if (a[0] & SA_NEEDS_ONE_THREAD)
				sa_ticker_pause();
			break;
		case SYS_setns:
			if (a[1] == 0 || (a[1] & SA_NEEDS_ONE_THREAD))
				sa_ticker_pause();
			break;
#ifdef SYS_close_range
		case SYS_close_range:
			if (!(a[2] & ~6) && !(a[2] & 4) && (unsigned long)a[0] <= (unsigned long)a[1])
				sa_before_close_range((unsigned int)a[0], (unsigned int)a[1]);
			break;
#endif
#ifdef SYS_dup2
		case SYS_dup2:
			if (sa_dup_closes_newfd((int)a[0], (int)a[1], 0, 0))
				sa_before_close((int)a[1]);
			break;
#endif
		case SYS_dup3:
			if (sa_dup_closes_newfd((int)a[0], (int)a[1], (int)a[2], 1))
				sa_before_close((int)a[1]);
			break;
		default: {
			int err = errno;
			sa_in_shim++;
			sa_blind_raw_syscall(n);
			sa_in_shim--;
			errno = err;
			break;
		}
		}
	}
	return sa_real.syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

#if !defined(__x86_64__) && !defined(__aarch64__)
/* No assembly for this machine (core/vfork_*.S): a plain fork() is always safe (TSan does
 * the same), at the cost of copying the page tables on every spawn. */
SA_EXPORT pid_t vfork(void)
{
	return fork();
}
#endif

struct clone_arg {
	int (*fn)(void *);
	void *arg;
	int flags;
};

static int clone_child(void *p)
{
	struct clone_arg a = *(struct clone_arg *)p;

	if (!(a.flags & CLONE_VM)) {
		sa_lifecycle_new_process_fds(!!(a.flags & CLONE_FILES));
		free(p);   /* our copy of the parent's heap */
	}
	return a.fn(a.arg);
}

SA_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	static int (*real_clone)(int (*)(void *), void *, int, void *, ...);
	struct clone_arg *ca;
	va_list ap;
	pid_t *ptid;
	void *tls;
	pid_t *ctid;
	int ret, err;

	va_start(ap, arg);
	ptid = va_arg(ap, pid_t *);
	tls = va_arg(ap, void *);
	ctid = va_arg(ap, pid_t *);
	va_end(ap);
	if (!real_clone) {
		SA_REAL_READY(clone);
		real_clone = (__typeof__(real_clone))sa_real.clone;
	}
	if (sa_in_shim || !fn)
		return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	/* A child sharing our memory is registered whether or not the shim
	 * is set up yet: its first socket call must not set it up in ours. */
	if (flags & CLONE_VM) {
		sa_vm_child_register(stack);
		return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	}
	if (!sa_ensure_init())
		return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	ca = malloc(sizeof *ca);
	if (!ca)
		return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	ca->fn = fn;
	ca->arg = arg;
	ca->flags = flags;
	ret = real_clone(clone_child, stack, flags, ca, ptid, tls, ctid);
	err = errno;
	free(ca);   /* the child has its own copy */
	errno = err;
	return ret;
}

/* ---- _exit: the summary before a process ends without exit() ---------------- */

SA_EXPORT void _exit(int status)
{
	/* Resolved with the rest at init (an audited process's children
	 * inherit it); else now, which writes only our own table. */
	SA_REAL_READY(_exit);
	if (!sa_in_vfork && !IN_VM_CHILD())
		sa_lifecycle_end();
	if (sa_real._exit)
		sa_real._exit(status);
	sa_syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

SA_EXPORT void _Exit(int status)
{
	_exit(status);
}

/* ---- exec: say when the new program will run unaudited ---------------------
 * Thin and async-signal-safe (exec may follow vfork or run in a handler):
 * the check (audit/exec.c) allocates nothing; then the real call, as made.
 * execv/execl/execle/execlp end in the real execve/execvp, as in libc. */
static void exec_check(const char *call, const char *prog, char *const envp[])
{
	int err = errno, shared = sa_in_vfork || IN_VM_CHILD();

	/* Our own code never execs; a host handler or a vfork child may. */
	if (sa_in_shim && !sa_in_signal && !shared)
		return;
	/* A process the shim has not set up (no socket call yet: a shell, a
	 * wrapper script) sets up here, only for an exec that drops the
	 * library, and only where set-up may run: not in a vfork child (the
	 * parent's memory, its own fd table) nor in a handler (init
	 * allocates). An exec that keeps the library costs it nothing. */
	if (!sa_active() && (shared || sa_in_signal || !sa_exec_drops_preload(envp) || !sa_ensure_init()))
		return;
	sa_in_shim++;
	sa_exec_check(call, prog, envp, shared);
	sa_in_shim--;
	errno = err;
}

#define EXEC_READY(fn) SA_REAL_READY(fn)

SA_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	EXEC_READY(execve);
	exec_check("execve", path, envp);
	return sa_real.execve(path, argv, envp);
}

/* libc's own execv and execvp pass the environment on; environ is read
 * only for the check, which a NULL (not found) skips. */
SA_EXPORT int execv(const char *path, char *const argv[])
{
	char **env;

	EXEC_READY(execv);
	if ((env = sa_environ()) != NULL)
		exec_check("execv", path, env);
	return sa_real.execv(path, argv);
}

SA_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_READY(execvpe);
	exec_check("execvpe", file, envp);
	return sa_real.execvpe(file, argv, envp);
}

SA_EXPORT int execvp(const char *file, char *const argv[])
{
	char **env;

	EXEC_READY(execvp);
	if ((env = sa_environ()) != NULL)
		exec_check("execvp", file, env);
	return sa_real.execvp(file, argv);
}

SA_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char *const *volatile av = argv;    /* may be NULL (EFAULT), whatever the prototype says */

	EXEC_READY(fexecve);
	exec_check("fexecve", av && av[0] ? av[0] : "", envp);
	return sa_real.fexecve(fd, argv, envp);
}

/* The execl forms: the arguments into an array on this stack, as libc does. */
#define ARGV_FROM_VA(argv, arg, ap, envp_out)                                           \
	size_t n_ = 1;                                                                  \
	va_start(ap, arg);                                                              \
	while (va_arg(ap, char *))                                                      \
		n_++;                                                                   \
	va_end(ap);                                                                     \
	char *argv[n_ + 1];                                                             \
	argv[0] = (char *)arg;                                                          \
	va_start(ap, arg);                                                              \
	for (size_t i_ = 1; i_ <= n_; i_++)                                              \
		argv[i_] = va_arg(ap, char *);                                          \
	envp_out;                                                                       \
	va_end(ap)

SA_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	ARGV_FROM_VA(argv, arg, ap, (void)0);
	return execv(path, argv);
}

SA_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	ARGV_FROM_VA(argv, arg, ap, (void)0);
	return execvp(file, argv);
}

SA_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **envp;
	ARGV_FROM_VA(argv, arg, ap, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}

/* posix_spawn's child runs libc's internal exec, which no preload sees:
 * checked here, in the parent, before the spawn (which may still fail). */
SA_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	EXEC_READY(posix_spawn);
	exec_check("posix_spawn", path, envp);
	return sa_real.posix_spawn(pid, path, fa, attr, argv, envp);
}

SA_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	EXEC_READY(posix_spawnp);
	exec_check("posix_spawnp", file, envp);
	return sa_real.posix_spawnp(pid, file, fa, attr, argv, envp);
}

/* ---- signal handlers: run in a trampoline that keeps the shim out ----------- */

/* ThreadSanitizer already defers a signal until the thread is out of its
 * runtime (malloc included), and it calls sigaction while it initializes,
 * before an instrumented wrapper may run: a TSan build leaves these out. */
#ifndef __SANITIZE_THREAD__

/* Inside a host handler these still go through the trampoline's table
 * (lock-free, async-signal-safe): a handler that asks for its own
 * disposition, or re-installs itself with signal(), gets and sets the
 * host's handler, never the trampoline. Only the shim's own calls and a
 * child sharing our memory go straight to libc. */
#define SIGNALS_RAW() ((sa_in_shim && !sa_in_signal) || sa_in_vfork || IN_VM_CHILD())

SA_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	READY(sigaction);
	if (SIGNALS_RAW())
		return sa_real.sigaction(sig, act, oldact);
	return sa_sig_action(sig, act, oldact);
}

SA_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	READY(signal);
	if (SIGNALS_RAW())
		return sa_real.signal(sig, h);
	return sa_sig_signal(sig, h);
}
#endif
