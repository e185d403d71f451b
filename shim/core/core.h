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
static inline int sa_ensure_init(void)
{
	return SA_LIKELY(sa_active()) || sa_ensure_init_slow();
}
/* The process is ending: its summary, once (exit, _exit, a re-raised
 * fatal signal). */
void sa_lifecycle_end(void) SA_HIDDEN;
/* In a new process that is a copy of this one (fork, clone without
 * CLONE_VM): its own pid, tid, counts, init line and %p file. */
void sa_lifecycle_new_process(void) SA_HIDDEN;
void sa_lifecycle_new_process_fds(int shares_fds) SA_HIDDEN;

/* ---- summary.c ------------------------------------------------------------ */
/* The summary event of this process, written now. */
void sa_summary_write(void) SA_HIDDEN;
/* In a forked child: each module forgets the parent's per-process counts. */
void sa_summary_reset_after_fork(void) SA_HIDDEN;

/* ---- signals.c: the host's signal handlers run in a trampoline -------- */
int sa_sig_action(int sig, const struct sigaction *act, struct sigaction *oldact) SA_HIDDEN;
sighandler_t sa_sig_signal(int sig, sighandler_t h) SA_HIDDEN;
/* 1 when a handler left by longjmp (the guard is then reset). */
int sa_signal_escaped(void) SA_HIDDEN;

/* ---- children.c: children that share our memory ------------------------ */
/* A clone(CLONE_VM) child of ours is running somewhere: is it this code? */
extern int sa_vm_children SA_HIDDEN;
int sa_on_vm_child_stack(void) SA_HIDDEN;
void sa_vm_child_register(void *stack) SA_HIDDEN;
#define IN_VM_CHILD() (SA_UNLIKELY(__atomic_load_n(&sa_vm_children, __ATOMIC_RELAXED)) && sa_on_vm_child_stack())
/* Called (tail-jumped) by vfork in vfork_x86_64.S. */
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
void sa_on_setsockopt(int fd, int level, int opt, const void *val, socklen_t len,
		      int ret, int err) SA_HIDDEN;
void sa_on_getsockopt(int fd, int level, int opt, const void *val, const socklen_t *len,
		      int ret, int err) SA_HIDDEN;
void sa_on_listen(int fd, int backlog, int ret, int err) SA_HIDDEN;
/* peer may be NULL: sa_accept_audit then reads it (getpeername) only for a
 * line. An accept that sa_accept_counted did not finish (sampled: it found
 * a TCP_INFO sample due). */
void sa_on_accept(int lfd, int ret, int err, uint64_t t0, uint64_t t1,
		  const struct sockaddr *peer, socklen_t peerlen, int flags, uint32_t listen_gen, int sampled) SA_HIDDEN;
void sa_on_connect(int fd, const struct sockaddr *addr, socklen_t len,
		   int ret, int err, uint64_t t0, uint64_t t1) SA_HIDDEN;
/* Only for fds with SA_F_WATCH_IO; ret/err of the real call. */
void sa_on_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err) SA_HIDDEN;
/* Before the real close of a tracked fd. */
void sa_on_close(int fd, struct sa_sock *s) SA_HIDDEN;
void sa_on_close_in_range(int fd, struct sa_sock *s) SA_HIDDEN;
void sa_on_close_range_done(void) SA_HIDDEN;

#endif
