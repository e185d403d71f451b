/*
 * audit.h: the audit floor (shim/audit/): what each socket call means.
 * One module per call family: sockopt, listen, accept (with its per-
 * listener stats), connect, quickack. Above state/, below core/, whose
 * dispatcher calls the entry points below once the real call returned.
 *
 * Siblings share only the listener stats (accept.h) and the deferral
 * checks (sa_listen_defer_checks). A module never reads kernel state a
 * host may read later (SO_ERROR) and never holds a lock across a call that
 * can block.
 */
#ifndef SA_AUDIT_H
#define SA_AUDIT_H

#include "state/state.h"

enum sa_io_dir { SA_IO_READ, SA_IO_WRITE };

/* The facts of one call as its wrapper saw them, built in interpose.c once
 * the real call returned and handed down whole. */
struct sa_setsockopt_call {
	int fd, level, opt;
	const void *val;               /* the host's value: NULL when the call failed */
	socklen_t len;                 /* 0 when the call failed */
	int ret, err;                  /* err: 0 when ret is 0 */
};
struct sa_accept_call {
	int lfd, ret, err;             /* err: 0 when ret >= 0 */
	uint64_t t0, t1;               /* CLOCK_MONOTONIC around the real call */
	const struct sockaddr *peer;   /* NULL: read (getpeername) only for a line */
	socklen_t peerlen;
	uint32_t listen_gen;           /* which socket lfd named as the call began */
	int sampled;                   /* the counted path found a TCP_INFO sample due */
};

/* ---- sockopt.c ----------------------------------------------------------- */
void sa_sockopt_audit(struct sa_sock *s, const struct sa_setsockopt_call *c) SA_HIDDEN;
/* What was seen, per process: one entry per (option, value, outcome, kind
 * of socket). Counts are relaxed atomics. */
enum sa_optsock { SA_OPTSOCK_OTHER, SA_OPTSOCK_LISTENER, SA_OPTSOCK_ACCEPTED, SA_OPTSOCK_OUTGOING };
#define SA_OPTSEEN_SLOTS 1024
#define SA_OPTSEEN_PROBE 16
#define SA_OPT_SAMPLE_FIRST 8       /* below trace: read back the first 8 of each entry, */
#define SA_OPT_SAMPLE_EVERY 64      /* then one in 64 */
struct sa_optseen {
	uint64_t key;               /* sa_optseen_key(); 0 = free */
	uint32_t claim;             /* the epoch of the process that took it (0: free) */
	int level, opt;
	uint8_t sock_kind;          /* enum sa_optsock */
	uint8_t full;               /* a difference was seen: read back every call */
	uint8_t logged;             /* its line went out (or was claimed) */
	uint64_t sock_id;           /* accepted: the listener; outgoing: a hash of the peer */
	uint64_t eff_hash;          /* the logged call's read-back (0: none) */
	uint64_t calls, read_back, logged_n, differs, failed;
};
uint64_t sa_optseen_key(int level, int opt, int ret, int err, const void *val, socklen_t len,
			enum sa_optsock kind, uint64_t id) SA_HIDDEN;
/* The entry for key, made on first use; NULL when the table is full. */
struct sa_optseen *sa_optseen_get(uint64_t key, int level, int opt, enum sa_optsock kind,
				  uint64_t id) SA_HIDDEN;
/* Whether the nth call (from 1) of an entry is read back. Pure. */
int sa_optseen_readback(uint64_t nth, int full, int always) SA_HIDDEN;
const char *sa_optsock_name(enum sa_optsock k) SA_HIDDEN;
/* FNV-1a over n bytes, continuing from h (SA_FNV64_BASIS to start). */
uint64_t sa_fnv64(uint64_t h, const void *p, size_t n) SA_HIDDEN;
#define SA_FNV64_BASIS 14695981039346656037ull   /* FNV-1a's 64-bit offset basis */
/* {"OPTION": {calls, logged, read_back, not_read_back, differs, failed}},
 * over all kinds, or (only_accepted) the sockets accepted from listener id. */
json_t *sa_sockopt_counts_json(int only_accepted, uint64_t id) SA_HIDDEN;
void sa_sockopt_summary(json_t *summary) SA_HIDDEN;   /* "setsockopt" */
void sa_sockopt_reset(void) SA_HIDDEN;                /* a forked child starts over */

/* ---- listen.c ------------------------------------------------------------ */
void sa_listen_audit(int fd, struct sa_sock *s, int backlog, int ret, int err) SA_HIDDEN;
/* An AF_UNIX listener's backlog from unix_diag (NETLINK_SOCK_DIAG), and
 * its connections waiting in *pending; -errno when it cannot be read. */
int sa_unix_backlog(int fd, unsigned *pending) SA_HIDDEN;
/* Whether s is a listener (its listen() succeeded, or it said
 * SO_ACCEPTCONN when met late); reads a late AF_UNIX one's backlog. */
int sa_listen_is_listener(int fd, struct sa_sock *s) SA_HIDDEN;
/* Deferral interplay on a listener (fastopen, SYN-cookie bypass risk). */
void sa_listen_defer_checks(int fd, struct sa_sock *s, struct sa_findings *f) SA_HIDDEN;

/* ---- accept.c, listener_stats.c ------------------------------------------- */
/* After a successful listen(): the listener's stats entry, the netns baseline. */
void sa_accept_on_listening(int fd, struct sa_sock *s) SA_HIDDEN;
/* peer may be NULL: then read (getpeername) only for a line. */
/* An fd entry for a connection that was only counted (its origin word,
 * sa_fd_origin_take): accepted from the listener it names, if that listener
 * is still open; NULL otherwise. */
struct sa_sock *sa_accept_promote(int fd, uint64_t word) SA_HIDDEN;
/* What the counted accept (audit/accept.h, inline in the wrapper) left to
 * do: nothing (SA_ACCEPT_DONE), or sa_accept_audit, told whether this
 * accept was found due for a TCP_INFO sample (that decision moves the next
 * one, so it is taken once). */
enum { SA_ACCEPT_FULL, SA_ACCEPT_FULL_SAMPLED, SA_ACCEPT_DONE };
void sa_accept_audit(const struct sa_accept_call *c) SA_HIDDEN;
void sa_accept_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err) SA_HIDDEN;
void sa_accept_close(int fd, struct sa_sock *s, int defer) SA_HIDDEN;
/* Whether sa_accept_close has anything to do for an entry with these
 * flags: a listener, or an accepted socket nobody has spoken on yet.
 * Inline, so closing a decided connection makes no call. */
static inline int sa_accept_close_needed(uint32_t flags)
{
	return (flags & SA_F_LISTENER) ||
	       (flags & (SA_F_ACCEPTED | SA_F_WATCH_IO)) == (SA_F_ACCEPTED | SA_F_WATCH_IO);
}
void sa_listener_flush(void) SA_HIDDEN;   /* lines of listeners closed by close_range */
void sa_listener_hooks_init(void) SA_HIDDEN;   /* the fd table's listener reference hooks; init calls it */
void sa_accept_summary(json_t *summary, int final) SA_HIDDEN;   /* listeners; final: their last listener_stats */
void sa_accept_reset(void) SA_HIDDEN;
int sa_accept_active(void) SA_HIDDEN;                   /* a listener accepted (or failed) here */
/* Every listener's inline-counted accepts into the accept event count
 * (the summary's counts, before they are read). */
void sa_listener_fold_counted(void) SA_HIDDEN;
/* The live thread's look (listener_live.c): a line for each listener of
 * this process whose counts moved or whose queue holds connections now. */
void sa_listener_live(uint64_t now_ns) SA_HIDDEN;
/* 1: the live thread writes the interval's lines; 0: the accept path does. */
void sa_listener_live_on(int on) SA_HIDDEN;

/* A blocking accept on lfd this thread left by a jump out of a signal
 * handler (lfd's generation gen when the handler ran): waited from t0 to
 * sig_ns. Counted on the listener (left_by_jump, wait_ms); a trace line. */
void sa_accept_left(int lfd, uint32_t gen, uint64_t t0, uint64_t sig_ns) SA_HIDDEN;

/* ---- connect.c ------------------------------------------------------------ */
void sa_connect_audit(int fd, struct sa_sock *s, const struct sockaddr *addr, socklen_t len,
		      int ret, int err, uint64_t t0, uint64_t t1) SA_HIDDEN;
void sa_connect_getsockopt(int fd, struct sa_sock *s, int level, int opt,
			   const void *val, const socklen_t *len, int ret) SA_HIDDEN;
void sa_connect_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err) SA_HIDDEN;
void sa_connect_close(int fd, struct sa_sock *s) SA_HIDDEN;
/* sendto/sendmsg with MSG_FASTOPEN on a socket not already connecting: a
 * connect (and a send) in one call. */
void sa_connect_fastopen(int fd, struct sa_sock *s, const struct sockaddr *addr, socklen_t len,
			 ssize_t ret, int err, uint64_t t0, uint64_t t1) SA_HIDDEN;
/* A blocking connect this thread left by a jump out of a signal handler:
 * it ran from t0 until the handler (sig_ns); s is the fd's entry if fd
 * still names that socket, else NULL. */
void sa_connect_left(int fd, struct sa_sock *s, const struct sockaddr *peer, socklen_t plen,
		     uint64_t t0, uint64_t sig_ns) SA_HIDDEN;
void sa_connect_summary(json_t *summary) SA_HIDDEN;
int sa_connect_active(void) SA_HIDDEN;       /* any connect finished in this process */     /* connect_ms, connect_hist, syn_retrans_total */
void sa_connect_reset(void) SA_HIDDEN;

/* ---- blind.c --------------------------------------------------------------- */
/* A call made through syscall() that the shim would have audited. */
/* Whether a syscall(n) is one blind.c has something to say about (or to
 * note): the syscall() wrapper sets the shim up for these even when no
 * other call has yet. */
int sa_blind_watches(long n) SA_HIDDEN;
void sa_blind_raw_syscall(long n) SA_HIDDEN;
/* At the summary: an io_uring this process still has open, said once. */
void sa_blind_ring_at_summary(void) SA_HIDDEN;
/* While the process runs: the same look at every listen and a listener's
 * close (sa_blind_ring_look), and from accept, connect and a socket first
 * met by adoption on a doubling schedule up to once per stats interval
 * (one load and compare otherwise). */
extern uint64_t sa_blind_ring_next_ns SA_HIDDEN;
void sa_blind_ring_scan(uint64_t now_ns) SA_HIDDEN;
void sa_blind_ring_look(void) SA_HIDDEN;
static inline void sa_blind_ring_poll(uint64_t now_ns)
{
	if (SA_UNLIKELY(now_ns >= __atomic_load_n(&sa_blind_ring_next_ns, __ATOMIC_RELAXED)))
		sa_blind_ring_scan(now_ns);
}
extern int sa_blind_opts SA_HIDDEN;   /* options may be set where we do not see them */

/* ---- exec.c ---------------------------------------------------------------- */
/* Once, at load: whether our own environment preloads us. */
void sa_exec_init(char *const envp[]) SA_HIDDEN;
/* Whether an exec with envp starts the new program without this library
 * (our environment preloaded it; envp does not). Allocates nothing. */
int sa_exec_drops_preload(char *const envp[]) SA_HIDDEN;
/* Whether envp has an LD_PRELOAD naming our library (pure). */
int sa_exec_env_preloads(char *const envp[]) SA_HIDDEN;
/* Before an exec/spawn of PROG with envp: one exec_unaudited line when the
 * shim will not be in it. shared_mem: a vfork/CLONE_VM child. No
 * allocation, no lock: async-signal-safe. */
void sa_exec_check(const char *call, const char *prog, char *const envp[], int shared_mem) SA_HIDDEN;

/* ---- quickack.c ------------------------------------------------------------ */
/* A setsockopt(TCP_QUICKACK) the host made that succeeded: every one
 * counts as a set, whatever its value (docs/events.md, quickack_hot_loop). */
void sa_quickack_audit(int fd, struct sa_sock *s) SA_HIDDEN;
/* The hot-loop rule (pure): over the last n intervals between sets,
 * segs_out[] data segments out each, quiet of them in which the program
 * read nothing. Hot when reasserts >= min_reasserts, the median of
 * segs_out <= max_segs and quiet*100 >= min_quiet_pct*n (not a turn). */
#define SA_QA_MIN_QUIET_PCT 25
struct sa_qa_verdict {
	int hot;
	unsigned median_out;        /* upper median of segs_out[0..n) */
	unsigned quiet_pct;         /* 100 * quiet / n, rounded down */
};
void sa_quickack_judge(uint32_t reasserts, const uint16_t *segs_out, unsigned n, unsigned quiet,
		       int min_reasserts, int max_segs, int min_quiet_pct,
		       struct sa_qa_verdict *v) SA_HIDDEN;
void sa_quickack_summary(json_t *summary) SA_HIDDEN;    /* quickack {sets, reasserts, hot_loops, fds} */
void sa_quickack_reset(void) SA_HIDDEN;

#endif
