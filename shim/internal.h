/*
 * internal.h: sa_* declarations shared inside shim/. Never installed.
 *
 * Floors, lowest first: real, config, sink, event, fdtab, tcpinfo, sockopt,
 * guard, then the audit_* modules and stats, then interpose.c on top. A file
 * only calls into floors below it. Every sa_* helper returns 0 or -errno and
 * never exits, aborts or raises a signal: a wrapper can reach all of them.
 */
#ifndef SA_INTERNAL_H
#define SA_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <jansson.h>
#include <signal.h>

#define SA_HIDDEN __attribute__((visibility("hidden")))
#define SA_EXPORT __attribute__((visibility("default")))
#define SA_LIKELY(x) __builtin_expect(!!(x), 1)
#define SA_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- real.c: the real libc symbols, resolved once ---------------------- */

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
	__sighandler_t (*signal)(int, __sighandler_t);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	ssize_t (*recv_chk)(int, void *, size_t, size_t, int);
	ssize_t (*recvfrom_chk)(int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *);
};
extern struct sa_real_fns sa_real SA_HIDDEN;
/* Resolves every symbol once (dlsym RTLD_NEXT); safe to call repeatedly. */
void sa_real_init(void) SA_HIDDEN;

/* ---- config.c: SOCKAUDIT_* -> validated config (a pure function) ------- */

enum sa_level { SA_LEVEL_WARN = 0, SA_LEVEL_INFO = 1, SA_LEVEL_TRACE = 2 };

enum sa_sink_kind { SA_SINK_STDERR, SA_SINK_PATH, SA_SINK_FD, SA_SINK_SYSLOG };

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
	int sink_fd;                 /* fd:N */
	int stats_interval;          /* SOCKAUDIT_STATS_INTERVAL, seconds, 0 = exit only */
	int slow_connect_ms;         /* SOCKAUDIT_SLOW_CONNECT_MS */
	int quickack_min_reasserts;  /* SOCKAUDIT_QUICKACK_MIN_REASSERTS */
	int quickack_max_segs;       /* SOCKAUDIT_QUICKACK_MAX_SEGS */
	char comm[256];              /* SOCKAUDIT_COMM, "" = all */
	int nwarnings;
	struct sa_config_warning warnings[SA_MAX_WARNINGS];
};

typedef char *(*sa_getenv_fn)(const char *name);
/* Fills *c from the environment read through get(); bad values keep the
 * default and add a warning. pid expands %p in a path. Never fails. */
void sa_config_load(struct sa_config *c, sa_getenv_fn get, pid_t pid) SA_HIDDEN;
/* 1 when comm is in the comma list (or the list is empty). */
int sa_config_comm_match(const char *list, const char *comm) SA_HIDDEN;
const char *sa_level_name(enum sa_level l) SA_HIDDEN;

/* ---- sink.c: where lines go; never blocks or kills the host ------------ */

/* Opens the sink the config names. On failure falls back to the stderr
 * sink and returns -errno so the caller can warn once. */
int sa_sink_open(const struct sa_config *c) SA_HIDDEN;
/* Writes one complete line (ending in \n) with one write(2). Drops and
 * counts it when the sink is broken, full or gone. */
void sa_sink_write(const char *line, size_t len) SA_HIDDEN;
/* The host is about to close/dup2 over fd (or close a range): if it is
 * ours, move our sink out of the way first. Never changes the host call. */
void sa_sink_before_close(int fd) SA_HIDDEN;
void sa_sink_before_close_range(unsigned int first, unsigned int last) SA_HIDDEN;
int sa_sink_fd(void) SA_HIDDEN;       /* our current fd, -1 if none */
const char *sa_sink_describe(void) SA_HIDDEN;
uint64_t sa_sink_dropped(void) SA_HIDDEN;
/* After fork, when the child's path (%p) differs: reopen there lazily. */
void sa_sink_reopen_path(const char *newpath) SA_HIDDEN;
void sa_sink_atfork_prepare(void) SA_HIDDEN;
void sa_sink_atfork_parent(void) SA_HIDDEN;
void sa_sink_atfork_child(void) SA_HIDDEN;

/* ---- event.c: an event -> one JSON line --------------------------------- */

#define SA_LINE_MAX 4096
#define SA_MAX_FINDINGS 8

/* Findings collected while auditing one call; msg is sentences joined. */
struct sa_findings {
	int n;
	const char *codes[SA_MAX_FINDINGS];
	char msg[1536];
};
/* Empties f. On the per-connection paths use this, not "= { 0 }", which
 * zeroes all 1.6 kB of msg on every call (bench/callgrind.sh: ~200
 * instructions of a 481-instruction EAGAIN accept). */
static inline void sa_findings_init(struct sa_findings *f)
{
	f->n = 0;
	f->msg[0] = '\0';
}
void sa_findings_add(struct sa_findings *f, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4))) SA_HIDDEN;

/* Whether events visible at level l are written at the configured level. */
int sa_level_enabled(enum sa_level l) SA_HIDDEN;
/* A new event object with "event" set (and "fd" when fd >= 0). */
json_t *sa_event_new(const char *event, int fd) SA_HIDDEN;
/* Adds findings/msg (if any), counts them, fills the common fields and
 * writes the line when level l is enabled (findings force warn). Steals ev. */
void sa_event_emit(json_t *ev, enum sa_level l, const struct sa_findings *f) SA_HIDDEN;
/* Formats ev (common fields already present) into buf as one line with a
 * trailing \n, at most cap (<= SA_LINE_MAX) bytes: overlong strings are
 * shortened and "truncated":true added. Returns the length, or -1. Pure. */
int sa_event_format(json_t *ev, char *buf, size_t cap) SA_HIDDEN;
/* Formats and writes ev as it is (no level check, no counting). Steals ev. */
void sa_event_write(json_t *ev) SA_HIDDEN;
/* A JSON string from arbitrary bytes: valid UTF-8 kept, every other byte
 * written as the four characters \xNN. Never NULL (json_null on OOM). */
json_t *sa_json_bytes(const char *s, size_t n) SA_HIDDEN;
json_t *sa_json_str(const char *s) SA_HIDDEN;
/* "a.b.c.d:port", "[v6]:port", an AF_UNIX path ("@name" when abstract,
 * "unnamed" when empty). Returns a json string or json null. */
json_t *sa_json_addr(const struct sockaddr *sa, socklen_t len) SA_HIDDEN;
/* The same address as text (AF_UNIX bytes as they are, not yet escaped)
 * into out (cap >= SA_ADDR_TEXT_MAX); returns its length, or -1 for null. */
#define SA_ADDR_TEXT_MAX 128
int sa_addr_text(const struct sockaddr *sa, socklen_t len, char *out, size_t cap) SA_HIDDEN;
json_t *sa_json_errno(int err) SA_HIDDEN;       /* "ECONNREFUSED" */
const char *sa_errno_name(int err) SA_HIDDEN;
double sa_now_wall(void) SA_HIDDEN;             /* Unix seconds */
uint64_t sa_now_ns(void) SA_HIDDEN;             /* CLOCK_MONOTONIC */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
size_t sa_utf8_seq(const unsigned char *s, size_t n) SA_HIDDEN;

/* ---- line.c: JSON written straight into a buffer ------------------------- */

/* Writers: each returns 0, or -1 when the bytes do not fit before end. */
struct sa_out {
	char *p, *end;
};
int sa_out_put(struct sa_out *o, const char *s, size_t n) SA_HIDDEN;
int sa_out_u64(struct sa_out *o, uint64_t v) SA_HIDDEN;
int sa_out_int(struct sa_out *o, long long v) SA_HIDDEN;
int sa_out_real(struct sa_out *o, double v) SA_HIDDEN;
int sa_out_str(struct sa_out *o, const char *s, size_t n) SA_HIDDEN;   /* valid UTF-8 */
/* Any bytes, as sa_json_bytes() keeps them: other than UTF-8 as \xNN. */
int sa_out_bytes(struct sa_out *o, const char *s, size_t n) SA_HIDDEN;

/* An event line built field by field, no allocation, same bytes as
 * sa_event_new + json_object_set_new + sa_event_emit would write:
 *   struct sa_line L;
 *   sa_line_begin(&L, "accept", fd, &f);   -- ts .. severity, fd
 *   sa_line_int(&L, "listen_fd", lfd); ...
 *   sa_line_emit(&L, SA_LEVEL_TRACE, &f);  -- counts, level check, write */
struct sa_line {
	struct sa_out o;
	char *core;          /* end of the common fields */
	int over;            /* a field did not fit */
	const char *event;
	double ts;
	char buf[SA_LINE_MAX];
};
void sa_line_begin(struct sa_line *L, const char *event, int fd, const struct sa_findings *f) SA_HIDDEN;
/* KEY must be a string literal: ,"KEY": is composed at compile time. */
#define SA_LINE_K(key) ",\"" key "\":", sizeof(",\"" key "\":") - 1
#define sa_line_int(L, key, v) sa_line_int_k((L), SA_LINE_K(key), (v))
#define sa_line_real(L, key, v) sa_line_real_k((L), SA_LINE_K(key), (v))
#define sa_line_null(L, key) sa_line_null_k((L), SA_LINE_K(key))
#define sa_line_bool(L, key, v) sa_line_bool_k((L), SA_LINE_K(key), (v))
#define sa_line_str(L, key, s) sa_line_str_k((L), SA_LINE_K(key), (s))   /* any bytes; NULL -> null */
#define sa_line_addr(L, key, sa, len) sa_line_addr_k((L), SA_LINE_K(key), (sa), (len))
#define sa_line_errno(L, key, err) sa_line_errno_k((L), SA_LINE_K(key), (err))
void sa_line_int_k(struct sa_line *L, const char *k, size_t kn, long long v) SA_HIDDEN;
void sa_line_real_k(struct sa_line *L, const char *k, size_t kn, double v) SA_HIDDEN;
void sa_line_null_k(struct sa_line *L, const char *k, size_t kn) SA_HIDDEN;
void sa_line_bool_k(struct sa_line *L, const char *k, size_t kn, int v) SA_HIDDEN;
void sa_line_str_k(struct sa_line *L, const char *k, size_t kn, const char *s) SA_HIDDEN;
void sa_line_addr_k(struct sa_line *L, const char *k, size_t kn, const struct sockaddr *sa, socklen_t len) SA_HIDDEN;
void sa_line_errno_k(struct sa_line *L, const char *k, size_t kn, int err) SA_HIDDEN;
/* Closes the line (findings and msg when f has any) into L->buf with its
 * newline; returns the length. Pure: sa_line_emit uses it. */
int sa_line_finish(struct sa_line *L, const struct sa_findings *f) SA_HIDDEN;
void sa_line_emit(struct sa_line *L, enum sa_level l, const struct sa_findings *f) SA_HIDDEN;

/* Finding counters for the summary (indexed by code). */
void sa_findings_count(const char *code) SA_HIDDEN;
json_t *sa_findings_totals(void) SA_HIDDEN;
void sa_event_count(const char *event) SA_HIDDEN;   /* count without emitting */
void sa_event_counts_reset(void) SA_HIDDEN;
int sa_event_any(void) SA_HIDDEN;                  /* anything audited yet? */
json_t *sa_event_counts(void) SA_HIDDEN;
uint64_t sa_suppressed_count(void) SA_HIDDEN;
void sa_suppressed_add(uint64_t n) SA_HIDDEN;

/* ---- fdtab.c: fd -> what we know about that socket, O(1) --------------- */

#define SA_F_SOCKET      0x01u  /* created by socket()/accept() */
#define SA_F_LISTENER    0x02u  /* listen() succeeded on it */
#define SA_F_ACCEPTED    0x04u  /* returned by accept()/accept4() */
#define SA_F_WATCH_IO    0x08u  /* the I/O wrappers report to sa_on_io */
#define SA_F_CONNECTING  0x10u  /* non-blocking connect in progress */

#define SA_OPTCACHE 8
struct sa_optcache {            /* last value logged per option, for repeats */
	int level, opt;
	uint32_t hash;
	uint32_t repeats;
};

struct sa_listener;             /* audit_accept.c */

struct sa_sock {
	uint32_t flags;
	uint16_t family;
	uint16_t type;              /* SOCK_STREAM ... without flags */
	int protocol;
	/* sockopt state */
	struct sa_optcache opts[SA_OPTCACHE];
	uint8_t opts_next;
	uint8_t nodelay;            /* TCP_NODELAY as last read back */
	uint8_t cork;               /* TCP_CORK as last read back */
	int defer_accept_s;         /* TCP_DEFER_ACCEPT read back, seconds */
	/* listener state (audit_listen.c, audit_accept.c) */
	int backlog_effective;
	struct sa_listener *lst;
	/* accepted-connection state (audit_accept.c) */
	int listen_fd;
	uint8_t first_speaker;      /* 0 not decided, 1 client, 2 server, 3 neither (EOF/error/close first) */
	/* connect state (audit_connect.c) */
	uint64_t connect_start_ns;
	uint8_t connect_peer_len;   /* bytes of connect_peer in use */
	uint8_t connect_peer[28];   /* pending connect's address (sockaddr_in/in6 fit) */
	/* quickack state (audit_quickack.c) */
	uint32_t qa_sets;           /* successful setsockopt(TCP_QUICKACK) */
	uint32_t qa_reported_at;    /* reasserts when the last event went out, 0 = none */
	uint32_t qa_last_out;       /* tcpi_data_segs_out at the last set */
	uint32_t qa_last_read;      /* bytes the program had read (low 32 bits) at the last set */
	uint32_t qa_quiet;          /* bit i: the program read nothing in interval i */
	uint8_t qa_have_last;       /* qa_last_* hold a sample */
	uint8_t qa_win_n;           /* intervals in the window (<= SA_QA_WINDOW) */
	uint8_t qa_win_next;        /* ring position of the next interval */
	uint16_t qa_out[32];        /* data segments out per interval, capped at 65535 */
};

/* The fd table is chunked (see fdtab.c); the lookup is inline because every
 * I/O wrapper makes it on every call, tracked fd or not. */
#define SA_FD_MAX (1 << 20)                    /* fds at or above are not tracked */
#define SA_FD_CHUNK_BITS 8
extern struct sa_sock *sa_fd_chunks[SA_FD_MAX >> SA_FD_CHUNK_BITS] SA_HIDDEN;
/* The entry for fd, or NULL when fd is not a socket we track. Lock-free. */
static inline struct sa_sock *sa_fd_get(int fd)
{
	struct sa_sock *c, *s;

	if (SA_UNLIKELY((unsigned int)fd >= SA_FD_MAX))
		return NULL;
	c = __atomic_load_n(&sa_fd_chunks[(unsigned int)fd >> SA_FD_CHUNK_BITS], __ATOMIC_ACQUIRE);
	if (!c)
		return NULL;
	s = &c[(unsigned int)fd & ((1u << SA_FD_CHUNK_BITS) - 1)];
	/* Acquire: pairs with the release store in sa_fd_track() (fdtab.c). */
	return __atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) ? s : NULL;
}
/* A fresh, zeroed entry for fd (a new socket with this number); NULL if
 * fd is out of range or memory is short. */
struct sa_sock *sa_fd_track(int fd) SA_HIDDEN;
/* Forget fd (called before the real close). */
void sa_fd_forget(int fd) SA_HIDDEN;
/* Copy oldfd's entry to newfd (dup), or forget newfd if oldfd untracked. */
void sa_fd_dup(int oldfd, int newfd) SA_HIDDEN;
/* Visit every tracked fd (summary at exit). */
void sa_fd_foreach(void (*fn)(int fd, struct sa_sock *s, void *arg), void *arg) SA_HIDDEN;
/* Striped locks for updates to an entry shared between threads. */
void sa_fd_lock(int fd) SA_HIDDEN;
void sa_fd_unlock(int fd) SA_HIDDEN;
void sa_fdtab_atfork_prepare(void) SA_HIDDEN;
void sa_fdtab_atfork_parent(void) SA_HIDDEN;
void sa_fdtab_atfork_child(void) SA_HIDDEN;
size_t sa_fdtab_bytes(void) SA_HIDDEN;          /* memory held, for bench */

/* ---- tcpinfo.c: struct tcp_info across kernels -------------------------- */

struct sa_tcpinfo {
	int valid;                  /* getsockopt(TCP_INFO) succeeded */
	unsigned len;               /* bytes the kernel filled */
	uint8_t state;
	uint32_t unacked, sacked;   /* on a listener: queue length, backlog */
	uint32_t total_retrans;
	uint32_t last_data_sent, last_data_recv, last_ack_recv; /* ms */
	uint32_t rtt, rto;          /* us */
	uint32_t data_segs_out, data_segs_in; /* 0 when has_data_segs is 0 */
	int has_data_segs;
	uint64_t bytes_received;
	int has_bytes_received;     /* 4.1+ */
	uint32_t total_rto;          /* 6.7+, else 0 */
	int has_total_rto;
	uint8_t options;
};
int sa_tcpinfo_read(int fd, struct sa_tcpinfo *ti) SA_HIDDEN;
/* Fills family, type and protocol of a socket we meet late (inherited). */
void sa_sock_fill_kind(int fd, struct sa_sock *s) SA_HIDDEN;
/* Reads a /proc/sys integer; returns -errno when absent. */
int sa_read_sysctl(const char *path, long *out) SA_HIDDEN;
/* This kernel's SYN/SYN-ACK retransmission settings, read from /proc/sys
 * once per process on first use (only when a message needs them). */
struct sa_syn_sched;
const struct sa_syn_sched *sa_syn_sched(void) SA_HIDDEN;
/* The socket's TCP_RTO_MAX_MS (6.15+), or fallback where it has none. */
long sa_sock_rto_max_ms(int fd, long fallback) SA_HIDDEN;

/* ---- sockopt.c: known options: names, decoders, adjustments ------------ */

enum sa_optkind {
	SA_OPT_INT, SA_OPT_BOOL, SA_OPT_LINGER, SA_OPT_TIMEVAL, SA_OPT_STRING, SA_OPT_OPAQUE
};
struct sa_optdesc {
	int level, opt;
	const char *name;
	enum sa_optkind kind;
};
/* The descriptor for (level, opt), or NULL when unknown. */
const struct sa_optdesc *sa_opt_lookup(int level, int opt) SA_HIDDEN;
/* "SOL_SOCKET", "IPPROTO_TCP", ... or NULL. */
const char *sa_level_name_of(int level) SA_HIDDEN;
/* An option value of kind k from buf[0..len) (never beyond len), written as
 * JSON: an int, {"onoff","linger"}, {"sec","usec"}, a string, or {"bytes":
 * n} for anything we cannot name; NULL buf or short len -> null. Returns 0,
 * or -1 when it does not fit. */
int sa_opt_out(struct sa_out *o, enum sa_optkind k, const void *buf, socklen_t len) SA_HIDDEN;
#define sa_line_opt(L, key, kind, buf, len) sa_line_opt_k((L), SA_LINE_K(key), (kind), (buf), (len))
void sa_line_opt_k(struct sa_line *L, const char *k, size_t kn, enum sa_optkind kind,
		   const void *buf, socklen_t len) SA_HIDDEN;
/* TCP_DEFER_ACCEPT: seconds -> rounds, rounds -> seconds (kernel's own
 * secs_to_retrans / retrans_to_secs with 1 s initial and 120 s max). */
int sa_defer_rounds(int seconds) SA_HIDDEN;
int sa_defer_secs(int rounds) SA_HIDDEN;

/* ---- guard.c: one-time init, per-thread re-entry guard, fork ----------- */

extern __thread int sa_in_shim SA_HIDDEN;
/* 1 when the shim audits this process (init done, not disabled). Cheap. */
int sa_active(void) SA_HIDDEN;
/* Lazy init from any wrapper; returns sa_active(). */
int sa_ensure_init(void) SA_HIDDEN;
const struct sa_config *sa_config(void) SA_HIDDEN;
pid_t sa_pid(void) SA_HIDDEN;
pid_t sa_tid(void) SA_HIDDEN;
const char *sa_comm(void) SA_HIDDEN;
unsigned sa_comm_gen(void) SA_HIDDEN;   /* changes when sa_comm() does */
/* Emits the init event if this process has not yet (called by emit). */
void sa_emit_init_once(double ts) SA_HIDDEN;   /* ts: that of the line that triggers it */
/* 1 when [p, p + n) is in this thread's stack above our own frame (the
 * host's locals): readable without a fault. */
int sa_stack_holds(const void *p, size_t n) SA_HIDDEN;
/* Tests: make the shim active with this config and program name. */
void sa_guard_configure(const struct sa_config *c, const char *comm) SA_HIDDEN;

/* ---- signals.c: the host's signal handlers run in a trampoline -------- */

extern __thread int sa_in_signal SA_HIDDEN;   /* inside a host signal handler */
int sa_sig_action(int sig, const struct sigaction *act, struct sigaction *oldact) SA_HIDDEN;
__sighandler_t sa_sig_signal(int sig, __sighandler_t h) SA_HIDDEN;
/* 1 when a handler left by longjmp (the guard is then reset). */
int sa_signal_escaped(void) SA_HIDDEN;

/* ---- hooks the wrappers call (audit_*.c, stats.c) ---------------------- */

enum sa_io_dir { SA_IO_READ, SA_IO_WRITE };

void sa_on_socket(int fd, int domain, int type, int protocol) SA_HIDDEN;
void sa_on_setsockopt(int fd, int level, int opt, const void *val, socklen_t len,
		      int ret, int err) SA_HIDDEN;
void sa_on_getsockopt(int fd, int level, int opt, const void *val, const socklen_t *len,
		      int ret, int err) SA_HIDDEN;
void sa_on_listen(int fd, int backlog, int ret, int err) SA_HIDDEN;
/* peer may be NULL: sa_accept_audit then reads it (getpeername) only for a line. */
void sa_on_accept(int lfd, int ret, int err, uint64_t t0, uint64_t t1,
		  const struct sockaddr *peer, socklen_t peerlen, int flags) SA_HIDDEN;
void sa_on_connect(int fd, const struct sockaddr *addr, socklen_t len,
		   int ret, int err, uint64_t t0, uint64_t t1) SA_HIDDEN;
/* Only for fds with SA_F_WATCH_IO; ret/err of the real call. */
void sa_on_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err) SA_HIDDEN;
/* Before the real close of a tracked fd. */
void sa_on_close(int fd, struct sa_sock *s) SA_HIDDEN;

/* Module pieces the hooks dispatch to. */
void sa_sockopt_audit(int fd, struct sa_sock *s, int level, int opt, const void *val,
		      socklen_t len, int ret, int err) SA_HIDDEN;
void sa_listen_audit(int fd, struct sa_sock *s, int backlog, int ret, int err) SA_HIDDEN;
/* Deferral interplay on a listener (fastopen, SYN-cookie bypass risk). */
void sa_listen_defer_checks(int fd, struct sa_sock *s, struct sa_findings *f) SA_HIDDEN;
void sa_accept_audit(int lfd, int ret, int err, uint64_t t0, uint64_t t1,
		     const struct sockaddr *peer, socklen_t peerlen) SA_HIDDEN;
/* After a successful listen(): the listener's stats entry, the netns baseline. */
void sa_accept_listen(int fd, struct sa_sock *s) SA_HIDDEN;
void sa_accept_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err) SA_HIDDEN;
void sa_accept_close(int fd, struct sa_sock *s) SA_HIDDEN;
void sa_connect_audit(int fd, struct sa_sock *s, const struct sockaddr *addr, socklen_t len,
		      int ret, int err, uint64_t t0, uint64_t t1) SA_HIDDEN;
void sa_connect_getsockopt(int fd, struct sa_sock *s, int level, int opt,
			   const void *val, const socklen_t *len, int ret) SA_HIDDEN;
void sa_connect_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err) SA_HIDDEN;
void sa_connect_close(int fd, struct sa_sock *s) SA_HIDDEN;
void sa_quickack_audit(int fd, struct sa_sock *s, int val, int effective) SA_HIDDEN;
/* The hot-loop rule (audit_quickack.c, pure): over the last n intervals
 * between sets, segs_out[] data segments out each, quiet of them in which
 * the program read nothing. Hot when reasserts >= min_reasserts, the median
 * of segs_out <= max_segs and quiet*100 >= min_quiet_pct*n (not a turn). */
#define SA_QA_WINDOW 32
#define SA_QA_MIN_QUIET_PCT 25
struct sa_qa_verdict {
	int hot;
	unsigned median_out;        /* upper median of segs_out[0..n) */
	unsigned quiet_pct;         /* 100 * quiet / n, rounded down */
};
void sa_quickack_judge(uint32_t reasserts, const uint16_t *segs_out, unsigned n, unsigned quiet,
		       int min_reasserts, int max_segs, int min_quiet_pct,
		       struct sa_qa_verdict *v) SA_HIDDEN;

/* stats.c: latency histograms and the summary event at exit. */
#define SA_HIST_BUCKETS 400
struct sa_hist {
	uint64_t n;
	uint64_t max_bits;           /* a double's bits; compare as integers */
	uint64_t b[SA_HIST_BUCKETS];
};
void sa_hist_add(struct sa_hist *h, double ms) SA_HIDDEN;
double sa_hist_pct(const struct sa_hist *h, double pct) SA_HIDDEN;
double sa_hist_max(const struct sa_hist *h) SA_HIDDEN;
json_t *sa_hist_json(const struct sa_hist *h) SA_HIDDEN;   /* {n,p50,p95,p99,max} */
void sa_hist_reset(struct sa_hist *h) SA_HIDDEN;
void sa_stats_summary(void) SA_HIDDEN;
void sa_stats_reset_after_fork(void) SA_HIDDEN;
/* Each module adds its part to the summary event, and forgets its
 * per-process counts in a forked child. */
void sa_accept_summary(json_t *summary) SA_HIDDEN;      /* listeners, final listener_stats */
void sa_connect_summary(json_t *summary) SA_HIDDEN;     /* connect_ms, connect_hist, syn_retrans_total */
void sa_quickack_summary(json_t *summary) SA_HIDDEN;    /* quickack {sets, reasserts, hot_loops, fds} */
void sa_netns_summary(json_t *summary) SA_HIDDEN;       /* netns_counters */
/* netns.c: reads the namespace's counters once per process (the baseline of
 * netns_counters); cheap after the first call. */
void sa_netns_baseline(void) SA_HIDDEN;
void sa_accept_reset(void) SA_HIDDEN;
void sa_connect_reset(void) SA_HIDDEN;
void sa_quickack_reset(void) SA_HIDDEN;

#endif
