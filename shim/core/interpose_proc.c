/*
 * interpose_proc.c: the libc names of process life (the rest are in
 * interpose.c and interpose_io.c, the only other files that define libc names):
 * syscall(), vfork() where no assembly exists, clone(), _exit()/_Exit(),
 * sigaction() and signal(). Same rule as interpose.c: the host sees
 * exactly what libc would have given it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core.h"

#define READY(fn) do { if (SA_UNLIKELY(!sa_real.fn)) sa_real_init(); } while (0)

/*
 * syscall(): a program that closes or duplicates through it (libuv, Go's
 * cgo runtime, a hand-rolled close-all loop) would otherwise close our log
 * fd or a tracked socket behind our back. Same checks as the libc calls,
 * then the call exactly as made. Calls we would audit through libc are
 * noted once as a blind spot.
 */
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
	if (!sa_in_shim && !IN_VM_CHILD() && sa_active()) {
		switch (n) {
		case SYS_close:
			sa_before_close((int)a[0]);
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

#if !defined(__x86_64__)
/* No assembly for this machine: a plain fork() is always safe (TSan does
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
		sa_lifecycle_new_process();
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
		sa_real_init();
		real_clone = (__typeof__(real_clone))sa_real.clone;
	}
	if (sa_in_shim || !sa_active() || !fn)
		return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	if (flags & CLONE_VM) {
		sa_vm_child_register(stack);
		return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	}
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
	/* Resolved with the rest at init: a dlsym here would write (and
	 * copy) several pages of ld.so's state in every exiting child. */
	if (!sa_real._exit)
		sa_real_init();
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

SA_EXPORT __sighandler_t signal(int sig, __sighandler_t h)
{
	READY(signal);
	if (SIGNALS_RAW())
		return sa_real.signal(sig, h);
	return sa_sig_signal(sig, h);
}
#endif
