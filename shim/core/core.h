/*
 * core.h: the top floor (shim/core/): interpose.c (the only file that
 * defines libc names), the signal trampolines, the dispatcher the wrappers
 * hand their facts to, the summary, and the lifecycle (init, fork,
 * constructor and destructor, public API). Calls every floor below; none
 * of them calls here (the init line reaches line/ as a registered hook).
 */
#ifndef SA_CORE_H
#define SA_CORE_H

#include "audit/audit.h"

/* ---- lifecycle.c ---------------------------------------------------------- */
/* Lazy init from any wrapper; returns sa_active(). Inline when active. */
int sa_ensure_init_slow(void) SA_HIDDEN;
/* signals.c: sa_ensure_init_slow, then (once per process) the catchers
 * that write the summary before a default-action death. */
int sa_setup_slow(void) SA_HIDDEN;
static inline int sa_ensure_init(void)
{
	return SA_LIKELY(sa_active()) || sa_setup_slow();
}
/* The process is ending: its summary, once (exit, _exit, a re-raised
 * fatal signal). */
void sa_lifecycle_end(void) SA_HIDDEN;
void sa_lifecycle_summary(void) SA_HIDDEN;
void sa_lifecycle_end_in_handler(void) SA_HIDDEN;   /* the in-flight call, the summary */
/* In a new process that is a copy of this one (fork, clone without
 * CLONE_VM): its own pid, tid, counts, init line and %p file. */
void sa_lifecycle_new_process(void) SA_HIDDEN;
void sa_lifecycle_new_process_fds(int shares_fds) SA_HIDDEN;
void sa_lifecycle_init(void) SA_HIDDEN;

/* ---- unaudited.c: calls that passed through, counted by reason -------- */
enum sa_unaudited {
	SA_UNAUD_SIGNAL,      /* made inside a host signal handler */
	SA_UNAUD_INIT_WAIT,   /* another thread's set-up outlived the wait */
	SA_UNAUD_N
};
void sa_unaudited_note(enum sa_unaudited why) SA_HIDDEN;   /* async-signal-safe */
extern int sa_unaudited_seen SA_HIDDEN;
static inline int sa_unaudited_any(void)
{
	return __atomic_load_n(&sa_unaudited_seen, __ATOMIC_RELAXED);
}
uint64_t sa_unaudited_count(enum sa_unaudited why) SA_HIDDEN;
void sa_unaudited_say(void) SA_HIDDEN;        /* one warning per reason, once */
json_t *sa_unaudited_json(void) SA_HIDDEN;    /* NULL when none */
void sa_unaudited_reset(void) SA_HIDDEN;
/* ---- summary.c ------------------------------------------------------------ */
/* The summary event of this process, written now. */
void sa_summary_write(void) SA_HIDDEN;
/* The summary's figures so far, as a totals line (the live thread's). */
void sa_totals_write(void) SA_HIDDEN;

/* ---- ticker.c: the thread that writes the live lines ------------------- */
extern int sa_ticker_state SA_HIDDEN;   /* 0: none yet (may start one) */
void sa_ticker_start(uint64_t now) SA_HIDDEN;
/* From a listen, accept or connect just audited: one load when running. */
enum { TK_NONE, TK_STARTING, TK_RUNNING, TK_STOPPING, TK_OFF, TK_CALLS };
extern uint64_t sa_ticker_next_ns SA_HIDDEN;
void sa_ticker_calls_tick(uint64_t now) SA_HIDDEN;
/* After a listen: a TK_CALLS tick when due, never a thread. A process that
 * only listens (an nginx or apache master: it forks workers that accept)
 * gets none, so its workers keep glibc's single-threaded paths. */
static inline void sa_ticker_poll_quiet(uint64_t now)
{
	if (SA_UNLIKELY(__atomic_load_n(&sa_ticker_state, __ATOMIC_RELAXED) == TK_CALLS) &&
	    now >= __atomic_load_n(&sa_ticker_next_ns, __ATOMIC_RELAXED))
		sa_ticker_calls_tick(now);
}
/* After an accept or a connect: the thread's start, or a TK_CALLS tick. */
static inline void sa_ticker_poll(uint64_t now)
{
	int s = __atomic_load_n(&sa_ticker_state, __ATOMIC_RELAXED);

	if (SA_UNLIKELY(s == TK_NONE))
		sa_ticker_start(now);
	else if (SA_UNLIKELY(s == TK_CALLS) && now >= __atomic_load_n(&sa_ticker_next_ns, __ATOMIC_RELAXED))
		sa_ticker_calls_tick(now);
}
void sa_ticker_pause(void) SA_HIDDEN;        /* joined; a later call starts another */
void sa_ticker_end(void) SA_HIDDEN;          /* for good (the summary); async-signal-safe */
void sa_ticker_after_fork(void) SA_HIDDEN;   /* in the child */
void sa_ticker_listening(void) SA_HIDDEN;   /* a listen() of this process's own succeeded */
/* In a forked child: each module forgets the parent's per-process counts. */
void sa_summary_reset_after_fork(void) SA_HIDDEN;

/* ---- signals.c: the host's signal handlers run in a trampoline -------- */
int sa_sig_action(int sig, const struct sigaction *act, struct sigaction *oldact) SA_HIDDEN;
void sa_sig_adopt_all(void) SA_HIDDEN;     /* an attach: the host's earlier handlers, trampolined */
void sa_sig_release_all(void) SA_HIDDEN;   /* a detach: the host's handlers back, no ender */
/* firstcall.c: an attach after a detach sets up again, as a new process. */
void sa_init_again(void) SA_HIDDEN;
extern double sa_attached_at SA_HIDDEN;    /* lifecycle.c: the attach's wall clock, 0: preloaded */
sighandler_t sa_sig_signal(int sig, sighandler_t h) SA_HIDDEN;
/* At set-up: the summary for fatal signals the host leaves at SIG_DFL. */
void sa_sig_enders_install(void) SA_HIDDEN;
/* 1 when a handler left by longjmp (the guard is then reset). */
int sa_signal_escaped(void) SA_HIDDEN;
/* A wrapper's call while sa_in_shim is set: 1 when a handler left by a
 * jump (audit it), else 0, counting a call made inside a host handler. */
static inline int sa_pass_in_shim(void)
{
	if (sa_signal_escaped())
		return 1;
	if (sa_in_signal && !sa_in_vfork)
		sa_unaudited_note(SA_UNAUD_SIGNAL);
	return 0;
}

/* A blocking call of this thread's in flight (between the wrapper's real
 * call and its return): a host handler that siglongjmp()s out of it, as
 * wget's --connect-timeout does (gnulib run_with_timeout), never returns
 * there, so the wrapper's own report never runs. The trampoline notes when
 * a handler first ran during the call (and copies the peer, whose buffer a
 * jump may free); the thread's next wrapper call (sa_signal_escaped) or the
 * process's end reports the call as left by a jump. Initial-exec TLS:
 * plain stores on the connect path, nothing allocated. */
enum sa_inflight_kind { SA_INFLIGHT_NONE = 0, SA_INFLIGHT_CONNECT, SA_INFLIGHT_ACCEPT };
struct sa_inflight {
	uint64_t t0;                     /* the call's start, its kind in the low 2 bits; 0: none */
	int fd;
	const struct sockaddr *addr;     /* connect: the host's, valid while the call blocks */
	socklen_t len;
	/* Written by the trampoline when a host handler first runs during the
	 * call whose t0 is sig_t0 (a note for an earlier call is stale). */
	uint64_t sig_t0, sig_ns;
	uint32_t gen;                    /* fd's table generation then */
	uint8_t peer_len;
	unsigned char peer[sizeof(struct sockaddr_in6) + 4] __attribute__((aligned(8)));   /* read as a sockaddr */
};
extern __thread struct sa_inflight sa_inflight SA_HIDDEN SA_TLS;
#define SA_INFLIGHT_KIND(t0) ((int)((t0) & 3))
/* Two stores before the call (accept), one after. */
static inline void sa_inflight_begin_fd(int kind, int fd, uint64_t t0)
{
	sa_inflight.fd = fd;
	__atomic_store_n(&sa_inflight.t0, (t0 & ~(uint64_t)3) | (uint64_t)kind, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}
static inline void sa_inflight_begin(int kind, int fd, const struct sockaddr *addr, socklen_t len, uint64_t t0)
{
	sa_inflight.addr = addr;
	sa_inflight.len = len;
	sa_inflight_begin_fd(kind, fd, t0);
}
static inline void sa_inflight_end(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&sa_inflight.t0, 0, __ATOMIC_RELAXED);
}
/* Reports the call in flight as left by a jump, if there is one. */
void sa_inflight_settle(void) SA_HIDDEN;

/* ---- children.c: children that share our memory ------------------------ */
/* A clone(CLONE_VM) child of ours is running somewhere: is it this code? */
extern int sa_vm_children SA_HIDDEN;
int sa_on_vm_child_stack(void) SA_HIDDEN;
void sa_vm_child_register(void *stack) SA_HIDDEN;
#define IN_VM_CHILD() (SA_UNLIKELY(__atomic_load_n(&sa_vm_children, __ATOMIC_RELAXED)) && sa_on_vm_child_stack())
/* Called (tail-jumped) by vfork in core/vfork_<arch>.S. */
int sa_vfork_child(void) SA_HIDDEN;
pid_t sa_vfork_parent(long r) SA_HIDDEN;

/* ---- interpose.c: what the libc closers share ------------------------------ */
/* fd (or first..last) is about to close: move our log out of the way,
 * forget the sockets. Keeps errno. */
void sa_before_close(int fd) SA_HIDDEN;
void sa_before_close_range(unsigned int first, unsigned int last) SA_HIDDEN;
/* Whether dup2/dup3 will close newfd. */
int sa_dup_closes_newfd(int oldfd, int newfd, int flags, int is3) SA_HIDDEN;

/* ---- dispatch.c: what each wrapper hands over once the real call returned */
void sa_on_socket(int fd, int domain, int type, int protocol) SA_HIDDEN;
void sa_on_setsockopt(const struct sa_setsockopt_call *c) SA_HIDDEN;
void sa_on_getsockopt(int fd, int level, int opt, const void *val, const socklen_t *len, int ret) SA_HIDDEN;
void sa_on_listen(int fd, int backlog, int ret, int err) SA_HIDDEN;
/* An accept that sa_accept_counted did not finish, or any at trace. */
void sa_on_accept(const struct sa_accept_call *c) SA_HIDDEN;
void sa_on_connect(int fd, const struct sockaddr *addr, socklen_t len,
		   int ret, int err, uint64_t t0, uint64_t t1) SA_HIDDEN;
/* sendto/sendmsg with MSG_FASTOPEN on a socket not connecting yet. */
void sa_on_fastopen(int fd, const struct sockaddr *addr, socklen_t len, ssize_t ret, int err,
		    uint64_t t0, uint64_t t1) SA_HIDDEN;
/* A call this thread left by a jump out of a host signal handler. */
void sa_on_left_by_jump(const struct sa_inflight *r) SA_HIDDEN;
/* Only for fds with SA_F_WATCH_IO; ret/err of the real call. */
void sa_on_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err) SA_HIDDEN;
/* Before the real close of a tracked fd. */
void sa_on_close(int fd, struct sa_sock *s) SA_HIDDEN;
void sa_on_close_in_range(int fd, struct sa_sock *s) SA_HIDDEN;
void sa_on_close_range_done(void) SA_HIDDEN;

#endif
