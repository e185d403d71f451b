/*
 * signals.c: knows when a thread is running one of the host's signal
 * handlers, so every wrapper passes straight through there.
 *
 * POSIX lets a handler call socket, setsockopt, connect, close...; the
 * shim's auditing is not async-signal-safe (jansson allocates, the sink
 * takes a lock), and a handler that interrupted the host's own malloc
 * would corrupt its heap. So the handlers the host installs with
 * sigaction() or signal() run inside a trampoline that marks the thread
 * as "inside the shim". The host always sees its own handler: oldact and
 * signal()'s result report it, never the trampoline. Calls made inside a
 * handler are not audited; only the fd table forgets closed fds there.
 *
 * No locks: sigaction itself is async-signal-safe and may be called from a
 * handler. The handler table is written before the trampoline is
 * installed, and read with atomic loads.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "core/core.h"


#define NSIGS 65

static __thread uintptr_t sig_frame SA_TLS;

/* The host's handler per signal, one table per trampoline: while a
 * sigaction() that changes the kind (SA_SIGINFO or not) is under way, the
 * trampoline the kernel still has installed reads its own table, so it
 * never calls a handler with the other kind's arguments. */
static void *handlers[2][NSIGS] SA_START_DATA;
#define PLAIN 0
#define INFO 1

/* A host handler runs while this thread blocks in a call we time: when,
 * the fd's generation and the peer, while its buffer is still there.
 * Plain loads and stores and a vDSO clock read: async-signal-safe. */
static __attribute__((noinline, cold)) void note_inflight(uint64_t t0)
{
	socklen_t n = sa_inflight.len;

	sa_inflight.sig_ns = sa_now_ns();
	sa_inflight.gen = sa_fd_gen(sa_inflight.fd);
	sa_inflight.peer_len = 0;
	if (SA_INFLIGHT_KIND(t0) == SA_INFLIGHT_CONNECT && sa_inflight.addr && n > 0 && n <= sizeof sa_inflight.peer) {
		memcpy(sa_inflight.peer, sa_inflight.addr, n);
		sa_inflight.peer_len = (uint8_t)n;
	}
	sa_inflight.sig_t0 = t0;
}

SA_FORK_TEXT static void enter(uintptr_t frame, int *saved_shim, uintptr_t *saved_frame)
{
	uint64_t t0 = __atomic_load_n(&sa_inflight.t0, __ATOMIC_RELAXED);

	if (SA_UNLIKELY(t0) && sa_inflight.sig_t0 != t0 && !sa_in_signal)
		note_inflight(t0);
	*saved_shim = sa_in_shim;
	*saved_frame = sig_frame;
	sig_frame = frame;
	sa_in_shim++;
	sa_in_signal++;
}

SA_FORK_TEXT static void leave(int saved_shim, uintptr_t saved_frame)
{
	sa_in_signal--;
	sa_in_shim = saved_shim;
	sig_frame = saved_frame;
}

/* Signals whose default action ends the process (signal(7)). */
SA_FORK_TEXT static int fatal_by_default(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
	case SIGURG: case SIGWINCH:
		return 0;
	default:
		return sig > 0 && sig < NSIGS;
	}
}

/*
 * After the host's handler: one that restored SIG_DFL and re-raised a
 * fatal signal (cleanup, then die as the signal) is ending the process the
 * moment we return. The summary goes first. One sigpending() per handled
 * signal that is itself fatal by default (the pattern re-raises the signal
 * it handles: SIGTERM, SIGINT, SIGSEGV...); none after SIGCHLD, SIGWINCH,
 * SIGURG, SIGCONT, whose handlers run once per child or resize (a
 * fork-per-connection server's SIGCHLD reaper: one syscall per connection
 * saved). The disposition is asked only when such a signal is pending.
 */
SA_FORK_TEXT static void after_handler(int handled)
{
	sigset_t pend;
	struct sigaction cur;
	int sig;

	if (!fatal_by_default(handled) || !sa_active() || sa_in_vfork || sigpending(&pend) != 0)
		return;
	for (sig = 1; sig < NSIGS; sig++) {
		if (!sigismember(&pend, sig) || !fatal_by_default(sig))
			continue;
		if (SA_REAL(sigaction)(sig, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_handler == SIG_DFL) {
			sa_lifecycle_end_in_handler();
			return;
		}
	}
}

SA_FORK_TEXT static void tramp_plain(int sig)
{
	void (*h)(int) = __atomic_load_n((void (**)(int))&handlers[PLAIN][sig], __ATOMIC_ACQUIRE);
	uintptr_t f;
	int s;

	enter((uintptr_t)__builtin_frame_address(0), &s, &f);
	if (h && h != SIG_DFL && h != SIG_IGN)
		h(sig);
	after_handler(sig);
	leave(s, f);
}

SA_FORK_TEXT static void tramp_info(int sig, siginfo_t *si, void *uc)
{
	void (*h)(int, siginfo_t *, void *) =
		__atomic_load_n((void (**)(int, siginfo_t *, void *))&handlers[INFO][sig], __ATOMIC_ACQUIRE);
	uintptr_t f;
	int s;

	enter((uintptr_t)__builtin_frame_address(0), &s, &f);
	if (h && (void *)h != (void *)SIG_DFL && (void *)h != (void *)SIG_IGN)
		h(sig, si, uc);
	after_handler(sig);
	leave(s, f);
}

/*
 * A fatal signal that no handler catches (SIGTERM from kill, timeout or
 * systemd, SIGINT, SIGHUP...) ends the process before any of our code
 * runs: no summary. So where the host leaves such a signal at SIG_DFL, the
 * shim catches it itself (the "ender"): the summary is written, SIG_DFL is
 * put back and the signal raised again, and the process dies of it as
 * plainly (same status, same core). The host never sees the ender: a
 * sigaction() or signal() asking reports the SIG_DFL it set (its flags and
 * mask too), and one setting SIG_DFL gets the ender back. Only the
 * asynchronous ones: not SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP,
 * SIGSYS (a broken heap: no summary is worth a hang), nor SIGPIPE (our own
 * sink's), nor the timer signals a profiler uses.
 *
 * Never a hang: the ender runs with its signal unblocked (SA_NODEFER) and
 * SIG_DFL already back, and arms a kernel timer that sends the same signal
 * in 1 s: a summary stuck on a lock the signal interrupted (the host's
 * malloc) still ends as the signal, 1 s late. A second signal of the kind
 * during the summary ends the process at once, as plain.
 */
#define ENDER_TIMEOUT_S 1
static struct sigaction ender_prev[NSIGS];   /* what the host set: SIG_DFL and its flags */
static int enders_on SA_START_DATA;   /* read by a shell's every signal(SIG_DFL): on the start page */

static int ender_sig(int sig)
{
	switch (sig) {
	case SIGHUP: case SIGINT: case SIGQUIT: case SIGTERM: case SIGUSR1: case SIGUSR2:
	case SIGALRM: case SIGXCPU: case SIGXFSZ:
		return 1;
	default:
		return 0;
	}
}

static void end_by_signal(int sig)
{
	struct sigevent ev;
	struct itimerspec when;
	int timer, s;
	uintptr_t f;

	SA_REAL(sigaction)(sig, &ender_prev[sig], NULL);
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = sig;
	memset(&when, 0, sizeof when);
	when.it_value.tv_sec = ENDER_TIMEOUT_S;
	if (sa_syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &timer) == 0)
		sa_syscall(SYS_timer_settime, timer, 0, &when, NULL);
	/* A child sharing our memory (vfork, clone(CLONE_VM)) writes nothing. */
	if (!sa_in_vfork && sa_active()) {
		enter((uintptr_t)__builtin_frame_address(0), &s, &f);
		sa_lifecycle_end_in_handler();
		leave(s, f);
	}
	sa_syscall(SYS_tgkill, sa_syscall(SYS_getpid), sa_syscall(SYS_gettid), sig);
}

static void ender_act(struct sigaction *a)
{
	memset(a, 0, sizeof *a);
	a->sa_handler = end_by_signal;
	a->sa_flags = SA_RESTART | SA_NODEFER;
	sigemptyset(&a->sa_mask);
}

/* The signals with a handler or ignored, from /proc/self/status's SigCgt
 * and SigIgn (one read, no rt_sigaction): 0 if it cannot be read. */
static int busy_signals(uint64_t *busy)
{
	char b[4096], *p;
	long n;
	int fd = (int)sa_syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC, 0), got = 0;

	if (fd < 0)
		return 0;
	n = sa_syscall(SYS_read, fd, b, sizeof b - 1);
	sa_syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	b[n] = 0;
	*busy = 0;
	for (p = b; (p = strstr(p, "\nSig")) != NULL; p++) {
		if (strncmp(p + 4, "Ign:", 4) && strncmp(p + 4, "Cgt:", 4))
			continue;
		*busy |= strtoull(p + 9, NULL, 16);
		got++;
	}
	return got == 2;
}

/* At set-up, in an audited process: one sigaction per signal the host left
 * at SIG_DFL, known from /proc/self/status (9 rt_sigaction once per
 * process, inherited across fork, reset by exec as any caught signal;
 * without /proc, a query first for each). One that the host changed in
 * between (a thread's sigaction racing the set-up) is put back. */
void sa_sig_enders_install(void)
{
	struct sigaction a, old;
	uint64_t busy = 0;
	int sig, known = busy_signals(&busy);

#ifdef __SANITIZE_THREAD__
	/* No sigaction wrappers in a TSan build: the host would read the
	 * catcher back. */
	return;
#endif
	ender_act(&a);
	__atomic_store_n(&enders_on, 1, __ATOMIC_RELEASE);
	for (sig = 1; sig < NSIGS; sig++) {
		if (!ender_sig(sig) || (known && (busy >> (sig - 1)) & 1))
			continue;
		if (!known && (SA_REAL(sigaction)(sig, NULL, &old) != 0 ||
			       (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL))
			continue;
		memset(&ender_prev[sig], 0, sizeof ender_prev[sig]);   /* SIG_DFL, as the kernel starts it */
		if (SA_REAL(sigaction)(sig, &a, &old) != 0)
			continue;
		if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			SA_REAL(sigaction)(sig, &old, NULL);
		else
			ender_prev[sig] = old;
	}
}

/* The first call's set-up, and once it is done the catchers (here, above
 * the set-up: the trampoline's own sigaction sets the shim up too). Once
 * per process: a forked child inherits them. */
int sa_setup_slow(void)
{
	static int installed;

	if (!sa_ensure_init_slow())
		return 0;
	if (!__atomic_load_n(&installed, __ATOMIC_ACQUIRE) && !__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
		sa_sig_enders_install();
	return 1;
}

SA_EXPORT int sockaudit_enabled(void)
{
	return sa_ensure_init();
}

/* What the host set, where the kernel has the ender. */
static void unwrap_ender(struct sigaction *o, int sig)
{
	if (!(o->sa_flags & SA_SIGINFO) && o->sa_handler == end_by_signal)
		*o = ender_prev[sig];
}

/* A SIG_DFL the host sets for an ender signal: the ender, the host's
 * flags and mask kept for it to read back. */
static int wants_ender(int sig, const struct sigaction *a)
{
	return __atomic_load_n(&enders_on, __ATOMIC_ACQUIRE) && ender_sig(sig) &&
	       !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL;
}

/* A handler the host wrote itself (not default, ignore or empty). */
SA_FORK_TEXT static int wants_tramp(const struct sigaction *a)
{
	if (a->sa_flags & SA_SIGINFO)
		return a->sa_sigaction != NULL;
	return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN && a->sa_handler != NULL;
}

/* Not stored when unchanged: a forked child that installs its parent's
 * handler again (socat's) would copy the data page for nothing. */
SA_FORK_TEXT static void set_handler(int kind, int sig, void *h)
{
	if (__atomic_load_n(&handlers[kind][sig], __ATOMIC_ACQUIRE) != h)
		__atomic_store_n(&handlers[kind][sig], h, __ATOMIC_RELEASE);
}

/* The host's handler in place of a trampoline the kernel reported. */
SA_FORK_TEXT static void *unwrap(void *k, void *prev_plain, void *prev_info)
{
	return k == (void *)tramp_plain ? prev_plain : k == (void *)tramp_info ? prev_info : k;
}

/* Whether a handler the host installs goes into the trampoline: in an
 * audited process, from the start. Before the shim is set up, a process
 * whose environment neither disables it nor limits it to some programs
 * will be audited, and that is all the trampoline needs to know: a shell
 * that installs its SIGCHLD handler is not set up for it (the set-up was
 * a fifth of the start cost of a `sh -c`). Otherwise set up now, to know. */
static const char disable_name[] = SOCKAUDIT_ENV_DISABLE, comm_name[] = SOCKAUDIT_ENV_COMM;

SA_FORK_TEXT static int tramp_wanted(void)
{
	/* What the constructor's environment (it never changes after) says,
	 * kept: 1 neither variable set, the trampoline; 2 SOCKAUDIT_DISABLE
	 * alone, set to disable, none. A shell's every sigaction need not
	 * read it again. */
	static int quiet_env SA_START_DATA;
	enum sa_run_state st = sa_run_state();
	int q;

	if (st == SA_RUN_ACTIVE)
		return 1;
	if (st == SA_RUN_DISABLED)
		return 0;
	if ((q = __atomic_load_n(&quiet_env, __ATOMIC_RELAXED)) != 0)
		return q == 1;
	sa_env_capture(NULL);   /* nothing when the constructor took it */
	/* Present at all, secure execution aside (init applies that rule):
	 * a shell's sigaction then binds no getauxval, and the names are
	 * .rodata arrays in the library's first pages, not literals after
	 * .text (a page fault each in every shell). */
	if (!sa_env_present(disable_name) && !sa_env_present(comm_name)) {
		if (sa_env_final())
			__atomic_store_n(&quiet_env, 1, __ATOMIC_RELAXED);
		return 1;
	}
	/* SOCKAUDIT_DISABLE alone: whether it switches the shim off, as init
	 * would find, without init (a shell of a disabled host set up its
	 * config, read its comm and filled every real function at each exec:
	 * 10 page faults). Any other value leaves auditing on; secure
	 * execution ignores the variable (sa_env_get: NULL). A comm filter
	 * needs the comm: init decides. */
	if (sa_env_final() && !sa_env_present(comm_name)) {
		q = sa_config_disables(sa_env_get(disable_name)) ? 2 : 1;
		__atomic_store_n(&quiet_env, q, __ATOMIC_RELAXED);
		return q == 1;
	}
	return sa_ensure_init();
}

/*
 * One system call, as the host's own: the host's handler goes into the
 * table first, then the trampoline into the kernel with the host's mask
 * and flags. A signal that arrives during the call runs the old handler or
 * the new one, as it could without us. libc reads *act in user space too
 * (a bad pointer faults there as here); the kernel checks the rest
 * (EINVAL), and on an error the table is put back.
 */
SA_FORK_TEXT int sa_sig_action(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	struct sigaction kold, a;
	void *prev[2], *h = NULL;
	int ret, err = errno, kind = PLAIN;

	if (sig <= 0 || sig >= NSIGS || sig == SIGKILL || sig == SIGSTOP || !tramp_wanted())
		return SA_REAL(sigaction)(sig, act, oldact);
	prev[PLAIN] = __atomic_load_n(&handlers[PLAIN][sig], __ATOMIC_ACQUIRE);
	prev[INFO] = __atomic_load_n(&handlers[INFO][sig], __ATOMIC_ACQUIRE);
	if (act && wants_tramp(act)) {
		a = *act;           /* before oldact is written: they may alias */
		kind = (a.sa_flags & SA_SIGINFO) ? INFO : PLAIN;
		h = kind == INFO ? (void *)a.sa_sigaction : (void *)a.sa_handler;
		set_handler(kind, sig, h);
		if (kind == INFO)
			a.sa_sigaction = tramp_info;
		else
			a.sa_handler = tramp_plain;
		act = &a;
	} else if (act && wants_ender(sig, act)) {
		ender_prev[sig] = *act;
		ender_act(&a);
		act = &a;
	}
	ret = SA_REAL(sigaction)(sig, act, oldact ? &kold : NULL);
	if (ret != 0) {
		if (h)
			set_handler(kind, sig, prev[kind]);
		return ret;
	}
	if (oldact) {
		unwrap_ender(&kold, sig);
		*oldact = kold;
		if (kold.sa_flags & SA_SIGINFO)
			oldact->sa_sigaction = (void (*)(int, siginfo_t *, void *))unwrap(
				(void *)kold.sa_sigaction, prev[PLAIN], prev[INFO]);
		else
			oldact->sa_handler = (void (*)(int))unwrap((void *)kold.sa_handler, prev[PLAIN], prev[INFO]);
	}
	errno = err;
	return 0;
}

/* signal() through libc's own, with the trampoline: libc picks the flags
 * (SA_RESTART unless siginterrupt), one system call as without us. */
SA_FORK_TEXT sighandler_t sa_sig_signal(int sig, sighandler_t h)
{
	sighandler_t old;
	void *prev[2];
	int wrap = h != SIG_DFL && h != SIG_IGN && h != NULL;

	if (sig <= 0 || sig >= NSIGS || !tramp_wanted())
		return SA_REAL(signal)(sig, h);
	if (h == SIG_DFL && ender_sig(sig) && __atomic_load_n(&enders_on, __ATOMIC_ACQUIRE)) {
		struct sigaction d, o;

		memset(&d, 0, sizeof d);
		d.sa_handler = SIG_DFL;
		d.sa_flags = SA_RESTART;   /* what libc's signal() gives */
		if (sa_sig_action(sig, &d, &o) != 0)
			return SIG_ERR;
		return (o.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)o.sa_sigaction : o.sa_handler;
	}
	prev[PLAIN] = __atomic_load_n(&handlers[PLAIN][sig], __ATOMIC_ACQUIRE);
	prev[INFO] = __atomic_load_n(&handlers[INFO][sig], __ATOMIC_ACQUIRE);
	if (wrap)
		set_handler(PLAIN, sig, (void *)h);
	old = SA_REAL(signal)(sig, wrap ? tramp_plain : h);
	if (old == SIG_ERR) {
		if (wrap)
			set_handler(PLAIN, sig, prev[PLAIN]);
		return old;
	}
	if (old == end_by_signal)
		return SIG_DFL;
	return (sighandler_t)unwrap((void *)old, prev[PLAIN], prev[INFO]);
}

int sa_signal_escaped(void)
{
	/* A handler that left by longjmp never ran leave(): if this call's
	 * frame sits above the trampoline's, the handler is gone. */
	if (sa_in_signal && (uintptr_t)__builtin_frame_address(0) > sig_frame) {
		sa_in_signal = 0;
		sa_in_shim = 0;
		sig_frame = 0;
		if (__atomic_load_n(&sa_inflight.t0, __ATOMIC_RELAXED))
			sa_inflight_settle();
		return 1;
	}
	return 0;
}

/* An attach: the handlers the host installed before it get the
 * trampoline, and the enders go in (again, after a detach). */
void sa_sig_adopt_all(void)
{
	struct sigaction k;
	int sig;

	if (!__atomic_load_n(&enders_on, __ATOMIC_ACQUIRE))
		sa_sig_enders_install();
	for (sig = 1; sig < NSIGS; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && SA_REAL(sigaction)(sig, NULL, &k) == 0 && wants_tramp(&k) &&
		    unwrap((void *)k.sa_handler, NULL, NULL) == (void *)k.sa_handler)
			sa_sig_action(sig, &k, NULL);
}

/* A detach: the host's own handlers back in the kernel, in place of the
 * trampolines and the enders. */
void sa_sig_release_all(void)
{
	struct sigaction k;
	void *h;
	int sig;

	__atomic_store_n(&enders_on, 0, __ATOMIC_RELEASE);
	for (sig = 1; sig < NSIGS; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || SA_REAL(sigaction)(sig, NULL, &k) != 0)
			continue;
		h = (void *)k.sa_handler;
		if (h == (void *)tramp_plain || h == (void *)tramp_info) {
			k.sa_handler = (void (*)(int))unwrap(h, handlers[PLAIN][sig], handlers[INFO][sig]);
			SA_REAL(sigaction)(sig, &k, NULL);
		} else if (!(k.sa_flags & SA_SIGINFO) && h == (void *)end_by_signal)
			SA_REAL(sigaction)(sig, &ender_prev[sig], NULL);
	}
}
