/*
 * line.h: the line floor (shim/line/): a log line and where it goes. The
 * JSON writer, findings and the counters of what was emitted, the line
 * builder, the one emit path and the sink. Above base/, below everything
 * else.
 *
 * A line is built whole in a buffer on the caller's stack and handed to the
 * sink in one call; nothing here holds a lock across a call that can block,
 * be cancelled or be interrupted (see sink.c). The jansson path (event.c)
 * serializes through the same builder, so the common fields, truncation,
 * counting, the level check and the sink hand-off exist once.
 */
#ifndef SA_LINE_H
#define SA_LINE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <jansson.h>

#include "base/base.h"
#include "names.h"
#include "finding_text.h"   /* the SA_MSG_* sentence templates */

#define SA_LINE_MAX 4096
#define SA_MAX_FINDINGS 8

/* ---- json.c: JSON written straight into a buffer -------------------------- */

/* Writers: each returns 0, or -1 when the bytes do not fit before end. */
struct sa_linebuf {
	char *p, *end;
};
/* Inline: it is most of what a line costs (a dozen calls per accept line
 * at trace; bench/callgrind.sh). */
static inline int sa_linebuf_put(struct sa_linebuf *o, const char *s, size_t n)
{
	if ((size_t)(o->end - o->p) < n)
		return -1;
	__builtin_memcpy(o->p, s, n);
	o->p += n;
	return 0;
}
int sa_linebuf_u64(struct sa_linebuf *o, uint64_t v) SA_HIDDEN;
int sa_linebuf_int(struct sa_linebuf *o, long long v) SA_HIDDEN;
int sa_linebuf_real(struct sa_linebuf *o, double v) SA_HIDDEN;
/* sa_linebuf_real's bytes, the integer part's digits kept in c (one thread's,
 * in TLS): a timestamp's seconds are written again every line. */
struct sa_real_cache {
	uint64_t ip;
	unsigned seq;
	unsigned char len;    /* 0: empty */
	char s[16];           /* the digits of ip (< 1e15 + 1) */
};
int sa_linebuf_real_cached(struct sa_linebuf *o, double v, struct sa_real_cache *c) SA_HIDDEN;
/* The same bytes for v = sec + us / 1e6 (as sa_now_wall() makes it, the
 * caller's v), from the integers. */
int sa_linebuf_ts_cached(struct sa_linebuf *o, double v, uint64_t sec, uint32_t us, struct sa_real_cache *c) SA_HIDDEN;
/* sa_linebuf_real(o, ns / 1e6): a duration in ns written in ms, from integers. */
int sa_linebuf_ms_ns(struct sa_linebuf *o, uint64_t ns) SA_HIDDEN;
/* "00" "01" .. "99": two digits at a time. */
extern const char sa_pairs[201] SA_HIDDEN;
/* "000" .. "999", each with the number of its digits left once its
 * trailing zeros are cut ("120" 2, "100" 1, "000" 0). */
extern const char sa_trips[1000][4] SA_HIDDEN;
/* ".dddddd", the trailing zeros cut (one digit kept), into d: 8 bytes
 * written, the length returned. Two 4-byte copies of three digits each
 * (f < 1e6), and the length from the table: one division, no loop. */
static inline size_t sa_frac_text(char *d, uint32_t f)
{
	uint32_t hi = f / 1000, lo = f - hi * 1000;

	d[0] = '.';
	__builtin_memcpy(d + 1, sa_trips[hi], 4);
	__builtin_memcpy(d + 4, sa_trips[lo], 4);   /* d[7]: lo's length byte, past the text */
	return lo ? 4 + (size_t)sa_trips[lo][3] : hi ? 1 + (size_t)sa_trips[hi][3] : 2;
}
/* The line's ts (sa_linebuf_ts_cached) with its common case inline: this
 * second's digits already in c, room for them. */
static inline int sa_linebuf_ts_fast(struct sa_linebuf *o, double v, uint64_t sec, uint32_t us, struct sa_real_cache *c)
{
	char *start = o->p;
	unsigned seq = c->seq;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (SA_UNLIKELY(!c->len || c->ip != sec || sec == 0 || sec >= (1ull << 32) || us >= 1000000 ||
			(size_t)(o->end - o->p) < sizeof c->s + 8))
		return sa_linebuf_ts_cached(o, v, sec, us, c);
	__builtin_memcpy(o->p, c->s, sizeof c->s);
	o->p += c->len;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (SA_UNLIKELY(c->seq != seq)) {   /* a handler rewrote c meanwhile */
		o->p = start;
		return sa_linebuf_ts_cached(o, v, sec, us, c);
	}
	o->p += sa_frac_text(o->p, us);
	return 0;
}
int sa_linebuf_str(struct sa_linebuf *o, const char *s, size_t n) SA_HIDDEN;   /* valid UTF-8 */
/* Any bytes: valid UTF-8 kept, every other byte as the characters \xNN. */
int sa_linebuf_bytes(struct sa_linebuf *o, const char *s, size_t n) SA_HIDDEN;
/* An address as sa_addr_text() spells it, or null. */
int sa_linebuf_addr(struct sa_linebuf *o, const struct sockaddr *sa, socklen_t len) SA_HIDDEN;

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
size_t sa_utf8_seq(const unsigned char *s, size_t n) SA_HIDDEN;
/* "a.b.c.d:port", "[v6]:port", an AF_UNIX path ("@name" when abstract,
 * "unnamed" when empty) into out (cap >= SA_ADDR_TEXT_MAX), AF_UNIX bytes
 * as they are (not yet escaped); returns its length, or -1 for null. */
#define SA_ADDR_TEXT_MAX 128
int sa_addr_text(const struct sockaddr *sa, socklen_t len, char *out, size_t cap) SA_HIDDEN;
/* "ECONNREFUSED"; "E<n>" for a number glibc cannot name (into buf). */
#define SA_ERRNO_NAME_MAX 16
const char *sa_errno_name(int err, char buf[SA_ERRNO_NAME_MAX]) SA_HIDDEN;

/* ---- findings.c: findings and the counters of what was emitted ------------ */

/* Findings collected while auditing one call; msg is sentences joined, at
 * most SA_MSG_MAX characters (common/finding_text.h): a sentence that does
 * not fit is replaced by the name of its explanation (findings.c). */
struct sa_findings {
	int n;
	const char *codes[SA_MAX_FINDINGS];
	char msg[SA_MSG_MAX + 1];
};
/* Empties f. On the per-connection paths use this, not "= { 0 }", which
 * zeroes all of msg on every call (bench/callgrind.sh). */
static inline void sa_findings_init(struct sa_findings *f)
{
	f->n = 0;
	f->msg[0] = '\0';
}
void sa_findings_add(struct sa_findings *f, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4))) SA_HIDDEN;
/* sa_findings_add as the kernel floor's sa_say_fn (common/readback.h):
 * ctx is the struct sa_findings. */
void sa_findings_say(void *f, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4))) SA_HIDDEN;

/* Counters for the summary, indexed by common/names.h. */
void sa_findings_count(const char *code) SA_HIDDEN;
json_t *sa_findings_totals(void) SA_HIDDEN;
int sa_findings_any(void) SA_HIDDEN;   /* a finding was counted in this process */
void sa_event_count(const char *event) SA_HIDDEN;
/* sa_event_count's hit, inline (for the emit path): the slot an event
 * name's address remembers its index in, checked against the table. */
#define SA_EVENT_SLOTS 32
extern unsigned char sa_event_slot[SA_EVENT_SLOTS] SA_HIDDEN;
extern uint64_t sa_event_counters[SA_NEVENT_NAMES] SA_HIDDEN;
/* sa_event_count without the name lookup (the counted accept, inline). */
static inline void sa_event_count_id(enum sa_event_id id)
{
	__atomic_add_fetch(&sa_event_counters[id], 1, __ATOMIC_RELAXED);
}
static inline void sa_event_count_add(enum sa_event_id id, uint64_t n)
{
	__atomic_add_fetch(&sa_event_counters[id], n, __ATOMIC_RELAXED);
}
static inline void sa_event_count_fast(const char *event)
{
	size_t i = __atomic_load_n(&sa_event_slot[((uintptr_t)event >> 2) % SA_EVENT_SLOTS], __ATOMIC_RELAXED);

	if (SA_LIKELY(i < SA_NEVENT_NAMES - 1 && sa_event_names[i] == event))
		__atomic_add_fetch(&sa_event_counters[i], 1, __ATOMIC_RELAXED);
	else
		sa_event_count(event);
}
json_t *sa_event_counts(void) SA_HIDDEN;
int sa_event_any(void) SA_HIDDEN;                  /* anything audited yet? */
void sa_event_counts_reset(void) SA_HIDDEN;
uint64_t sa_suppressed_count(void) SA_HIDDEN;
void sa_suppressed_add(uint64_t n) SA_HIDDEN;

/* ---- sink.c: where lines go; never blocks, stops or harms the host ------- */

/* Takes the destination the config names; opens nothing (a path or
 * syslog is opened at the first line). -errno when fd:N is unusable: then
 * stderr is used and the caller warns once. */
int sa_sink_open(const struct sa_config *c) SA_HIDDEN;
/* Before the first line of a process: opens a path/syslog sink now; on
 * failure falls back to stderr and returns -errno (the caller warns). */
int sa_sink_ready(void) SA_HIDDEN;
/* Writes one complete line (ending in \n) in one call, whole or not at
 * all; returns 1 when written, 0 when dropped (counted, with a reason).
 * Holds no lock; safe in any thread at any time. */
int sa_sink_write(const char *line, size_t len) SA_HIDDEN;
/* Lines dropped since the last call, and why the last one was. */
uint64_t sa_sink_take_unreported(const char **why) SA_HIDDEN;
/* The host is about to close/dup2 over fd (or close a range): if it is
 * ours, move our sink out of the way first; if it is the host fd we write
 * through, look at it again before the next line. Never changes the host
 * call. */
/* What sa_sink_before_close looks at (sink.c), inline on every close. */
extern int sa_sink_host_fd SA_HIDDEN, sa_sink_own_failed SA_HIDDEN;
extern _Atomic int sa_sink_own_fd SA_HIDDEN, sa_sink_inherited_fd SA_HIDDEN;
void sa_sink_before_close_slow(int fd) SA_HIDDEN;
/* Whether a close of fd concerns the sink. No own fd yet (a forked child
 * before its first line) is the rare case that also looks at the parent's
 * fd it set aside. */
static inline __attribute__((always_inline)) int sa_sink_near(int fd)
{
	int cur = atomic_load_explicit(&sa_sink_own_fd, memory_order_acquire);

	return fd == sa_sink_host_fd || fd == cur ||
	       (cur < 0 && (sa_sink_own_failed || fd == atomic_load_explicit(&sa_sink_inherited_fd, memory_order_relaxed)));
}
static inline __attribute__((always_inline)) void sa_sink_before_close(int fd)
{
	if (SA_UNLIKELY(sa_sink_near(fd)))
		sa_sink_before_close_slow(fd);
}
void sa_sink_before_close_range(unsigned int first, unsigned int last) SA_HIDDEN;
int sa_sink_fd(void) SA_HIDDEN;       /* the fd lines go to now, -1 if none */
const char *sa_sink_describe(void) SA_HIDDEN;
uint64_t sa_sink_dropped(void) SA_HIDDEN;
/* After fork, when the child's path (%p) differs: its own file from its
 * first line; shares_fds when the fd table is the parent's (CLONE_FILES). */
void sa_sink_reopen_path(const char *newpath, int shares_fds) SA_HIDDEN;
/* Why the log path was refused (sink_path.c), or NULL. */
const char *sa_sink_refused(void) SA_HIDDEN;

/* ---- sink_path.c: the log path opened like a careful daemon ------------- */

/* The path's fd (high, close-on-exec), or -errno; -EPERM with *refused
 * set when the path holds something we did not create and may not use. */
int sa_sinkpath_open(const char *path, const char **refused) SA_HIDDEN;
/* Why an existing file with these facts is refused, or NULL to use it. */
const char *sa_sinkpath_judge(mode_t mode, uid_t uid, unsigned long nlink, uid_t euid) SA_HIDDEN;
void sa_sink_atfork_child(void) SA_HIDDEN;
void sa_sink_close(void) SA_HIDDEN;    /* a detach: our own fd closed, no line after */
void sa_sink_reopen_allowed(void) SA_HIDDEN;   /* a new attach: lines again */

/* ---- sink_io.c: one whole line to one fd (sink.c's tools) --------------- */

static inline long sa_sinkio_now_s(void)             /* CLOCK_MONOTONIC_COARSE seconds */
{
	struct timespec ts;

	sa_clock(CLOCK_MONOTONIC_COARSE, &ts);   /* vDSO: no system call */
	return (long)ts.tv_sec;
}
void sa_sinkio_drop(const char *why) SA_HIDDEN;        /* count a line not written */
/* Lines dropped since the last one written (atomic): the emit path looks
 * at it after each line and reports them (sa_sink_take_unreported). */
extern uint64_t sa_sinkio_unreported SA_HIDDEN;
ssize_t sa_sinkio_write_raw(int fd, const char *p, size_t n) SA_HIDDEN;
int sa_sinkio_close(int fd) SA_HIDDEN;
int sa_sinkio_identify(int fd, dev_t *dev, ino_t *ino, mode_t *mode) SA_HIDDEN;
int sa_sinkio_move_high(int fd) SA_HIDDEN;             /* high, close-on-exec */
int sa_sinkio_tty_writable(int fd) SA_HIDDEN;          /* no SIGTTOU from writing */
int sa_sinkio_reopen_nonblock(int fd) SA_HIDDEN;       /* own O_NONBLOCK description, or -errno */
ssize_t sa_sinkio_write_pipe(int fd, const char *line, size_t len) SA_HIDDEN;
/* 1 written; 0 dropped (counted). errno untouched either way. */
int sa_sinkio_write_file(int fd, const char *line, size_t len) SA_HIDDEN;
int sa_sinkio_write_stream(int fd, const char *line, size_t len) SA_HIDDEN;  /* 1 written */
void sa_sinkio_atfork_child(void) SA_HIDDEN;
int sa_sinkio_open_syslog(void) SA_HIDDEN;          /* high, close-on-exec, or -errno */
int sa_sinkio_write_syslog(int fd, const char *line, size_t len) SA_HIDDEN;
int sa_sinkio_syslog_slot(_Atomic int *slot) SA_HIDDEN;

/* ---- sink_host.c: lines to the host's fd (stderr, fd:N) ------------------- */

void sa_sinkhost_use(int fd, int explicit_fd) SA_HIDDEN;   /* looked at again at the next line */
void sa_sinkhost_forget(void) SA_HIDDEN;                   /* the host closed or replaced it */
int sa_sinkhost_file_fd(long now) SA_HIDDEN;               /* the fd when a file looked at this second, or -1 */
/* 1 written; 0 dropped (counted); -1 the journal's stream (syslog takes it). */
int sa_sinkhost_write(const char *line, size_t len) SA_HIDDEN;
extern __thread int sa_sink_stale_fd SA_TLS SA_HIDDEN;

/* ---- journal.c: the journald sink (sink.c's, for SOCKAUDIT_LOG=journal) -- */

int sa_journal_open(void) SA_HIDDEN;                  /* an unconnected datagram socket, or -errno */
/* 1 sent as one native entry; 0 dropped (counted, with a reason). */
int sa_journal_write(int fd, const char *line, size_t len) SA_HIDDEN;
/* The entry's fields before SOCKAUDIT_JSON's value (which is the line
 * itself) into buf; the length, or -1 when it cannot fit. Pure. */
long sa_journal_entry(const char *line, size_t len, char *buf, size_t cap) SA_HIDDEN;

/* ---- line.c: an event line built field by field, no allocation ---------- */

/*   struct sa_line L;
 *   sa_line_begin(&L, "accept", fd, &f);   -- ts .. severity, fd
 *   sa_line_int(&L, "listen_fd", lfd); ...
 *   sa_line_emit(&L, SA_LEVEL_TRACE, &f);  -- counts, level check, write */
struct sa_line {
	struct sa_linebuf o;
	char *core;          /* end of the common fields */
	int over;            /* a field did not fit */
	const char *event;
	double ts;
	char buf[SA_LINE_MAX];
};
/* EVENT must be a string literal of plain characters (a name from
 * common/names.h): ,"event":"EVENT" is composed at compile time, in an
 * array of SA_EVTEXT_PAD bytes (zeros after the text) that begin copies
 * whole, inline, rather than through memcpy with its length. */
#define SA_EVTEXT_PAD 32
#define sa_line_begin(L, event, fd, f) ({                                                \
	static const char evtext_[SA_EVTEXT_PAD] = ",\"event\":\"" event "\"";            \
	_Static_assert(sizeof(",\"event\":\"" event "\"") <= SA_EVTEXT_PAD, "event name too long"); \
	sa_line_begin_lit((L), "" event, evtext_, sizeof(",\"event\":\"" event "\"") - 1, (fd), (f)); \
})
/* evtext: SA_EVTEXT_PAD bytes, the first evlen of them the text. */
void sa_line_begin_lit(struct sa_line *L, const char *event, const char *evtext, size_t evlen, int fd,
		       const struct sa_findings *f) SA_HIDDEN;
/* Any event name (escaped as needed), the time and severity given (ts <=
 * 0: now). */
void sa_line_begin_at(struct sa_line *L, const char *event, int fd, int warn, double ts) SA_HIDDEN;
/* For a vfork child: its own pid/tid, no per-thread cache read or written. */
void sa_line_begin_as(struct sa_line *L, const char *event, pid_t pid, pid_t tid) SA_HIDDEN;
/* KEY must be a string literal: ,"KEY": is composed at compile time. */
#define SA_LINE_K(key) ",\"" key "\":", sizeof(",\"" key "\":") - 1
#define sa_line_int(L, key, v) sa_line_int_k((L), SA_LINE_K(key), (v))
#define sa_line_real(L, key, v) sa_line_real_k((L), SA_LINE_K(key), (v))
/* ,"KEY":null in one copy, composed at compile time. */
#define sa_line_null(L, key) ((void)sa_line_key_k((L), ",\"" key "\":null", sizeof(",\"" key "\":null") - 1))
#define sa_line_bool(L, key, v) sa_line_bool_k((L), SA_LINE_K(key), (v))
#define sa_line_str(L, key, s) sa_line_str_k((L), SA_LINE_K(key), (s))   /* any bytes; NULL -> null */
#define sa_line_addr(L, key, sa, len) sa_line_addr_k((L), SA_LINE_K(key), (sa), (len))
#define sa_line_errno(L, key, err) sa_line_errno_k((L), SA_LINE_K(key), (err))
/* A string the caller knows needs no JSON escape (an IPv4/IPv6 address as
 * sa_addr_text spells it: digits, hex, dots, colons, brackets): one copy. */
#define sa_line_plain(L, key, s, n) sa_line_plain_k((L), SA_LINE_K(key), (s), (n))
/* A field that did not fit: the line is over, and its end is pulled back
 * to where it stopped, so every later field fails its one room check
 * (each needs at least its key) with no separate look at over. */
static inline void sa_line_overflow(struct sa_line *L)
{
	L->over = 1;
	L->o.end = L->o.p;
}
static inline void sa_line_plain_k(struct sa_line *L, const char *k, size_t kn, const char *s, size_t n)
{
	char *p = L->o.p;

	if ((size_t)(L->o.end - p) < kn + n + 2) {
		sa_line_overflow(L);
		return;
	}
	__builtin_memcpy(p, k, kn);
	p += kn;
	*p++ = '"';
	__builtin_memcpy(p, s, n);
	p += n;
	*p++ = '"';
	L->o.p = p;
}
/* ,"key": for a key known only at run time (the jansson path); then a
 * value written with the sa_linebuf_* writers on &L->o, checked with
 * sa_line_check(). Returns 0 when the key fitted. */
int sa_line_key(struct sa_line *L, const char *key) SA_HIDDEN;
static inline void sa_line_check(struct sa_line *L, int r)
{
	if (r)
		sa_line_overflow(L);
}
/* A field whose key the caller spelled (,"key": already composed). Always
 * inlined: kn is a constant there, so the key is a few moves, not a call
 * to memcpy; p is kept in a register (a store through a char pointer
 * would make the compiler read L->o.p again). */
#define SA_LINE_INLINE static inline __attribute__((always_inline))
SA_LINE_INLINE int sa_line_key_k(struct sa_line *L, const char *k, size_t kn)
{
	char *p = L->o.p;

	if (SA_UNLIKELY((size_t)(L->o.end - p) < kn)) {
		sa_line_overflow(L);
		return -1;
	}
	__builtin_memcpy(p, k, kn);
	L->o.p = p + kn;
	return 0;
}
/* The key and a value from 0 to 99 (most fds, counts and flags) with one
 * room check; anything else, or too little room, by sa_line_int_slow. */
void sa_line_int_slow(struct sa_line *L, const char *k, size_t kn, long long v) SA_HIDDEN;
SA_LINE_INLINE void sa_line_int_k(struct sa_line *L, const char *k, size_t kn, long long v)
{
	char *p = L->o.p;
	int one = v < 10;

	if (SA_LIKELY((unsigned long long)v < 100 && (size_t)(L->o.end - p) >= kn + 2)) {
		__builtin_memcpy(p, k, kn);
		/* "0".."9" as the second byte of "00".."09": two bytes always
		 * (room was checked for both), one kept. */
		__builtin_memcpy(p + kn, sa_pairs + 2 * v + one, 2);
		L->o.p = p + kn + 2 - one;
		return;
	}
	sa_line_int_slow(L, k, kn, v);
}
SA_LINE_INLINE void sa_line_real_k(struct sa_line *L, const char *k, size_t kn, double v)
{
	if (!sa_line_key_k(L, k, kn))
		sa_line_check(L, sa_linebuf_real(&L->o, v));
}
/* sa_line_real(L, key, ns / 1e6) for a duration in ns, the same bytes. */
#define sa_line_ms_ns(L, key, ns) sa_line_ms_ns_k((L), SA_LINE_K(key), (ns))
SA_LINE_INLINE void sa_line_ms_ns_k(struct sa_line *L, const char *k, size_t kn, uint64_t ns)
{
	if (!sa_line_key_k(L, k, kn))
		sa_line_check(L, sa_linebuf_ms_ns(&L->o, ns));
}
SA_LINE_INLINE void sa_line_null_k(struct sa_line *L, const char *k, size_t kn)
{
	if (!sa_line_key_k(L, k, kn))
		sa_line_check(L, sa_linebuf_put(&L->o, "null", 4));
}
SA_LINE_INLINE void sa_line_bool_k(struct sa_line *L, const char *k, size_t kn, int v)
{
	if (!sa_line_key_k(L, k, kn))
		sa_line_check(L, v ? sa_linebuf_put(&L->o, "true", 4) : sa_linebuf_put(&L->o, "false", 5));
}
SA_LINE_INLINE void sa_line_str_k(struct sa_line *L, const char *k, size_t kn, const char *s)
{
	if (!sa_line_key_k(L, k, kn))
		sa_line_check(L, s ? sa_linebuf_bytes(&L->o, s, __builtin_strlen(s)) : sa_linebuf_put(&L->o, "null", 4));
}
SA_LINE_INLINE void sa_line_addr_k(struct sa_line *L, const char *k, size_t kn, const struct sockaddr *sa,
				   socklen_t len)
{
	if (!sa_line_key_k(L, k, kn))
		sa_line_check(L, sa_linebuf_addr(&L->o, sa, len));
}
void sa_line_errno_k(struct sa_line *L, const char *k, size_t kn, int err) SA_HIDDEN;
/* Closes the line (findings and msg when f has any) into L->buf with its
 * newline; returns the length. Pure. A line without findings that fitted
 * is closed right here. */
int sa_line_finish_full(struct sa_line *L, const struct sa_findings *f) SA_HIDDEN;
static inline int sa_line_finish(struct sa_line *L, const struct sa_findings *f)
{
	char *p = L->o.p;

	if (SA_LIKELY((!f || f->n == 0) && p < L->o.end)) {   /* an over line has no room */
		p[0] = '}';
		p[1] = '\n';            /* the byte kept free at end */
		L->o.p = p + 2;
		return (int)(p + 2 - L->buf);
	}
	return sa_line_finish_full(L, f);
}

/* ---- emit.c: the one emit path -------------------------------------------- */

/* Whether events visible at level l are written at the configured level. */
static inline int sa_level_enabled(enum sa_level l)
{
	const struct sa_config *c = sa_cfg();

	return c && l <= c->level;
}
/* Counts the event and its findings; writes the line when level l is
 * enabled (findings make it warn); the first line of a process is preceded
 * by what the first-line hook writes. */
void sa_line_emit(struct sa_line *L, enum sa_level l, const struct sa_findings *f) SA_HIDDEN;
/* Lines this process has written (reset in a forked child). */
uint64_t sa_lines_written(void) SA_HIDDEN;
void sa_lines_written_reset(void) SA_HIDDEN;
/* Writes the line as it is: no count, no level check (init, warnings). */
void sa_line_write(struct sa_line *L, const struct sa_findings *f) SA_HIDDEN;
/* An event not written at this level: counted as if it were (its findings
 * too), and as suppressed when it carried findings. */
void sa_emit_skip(const char *event, const struct sa_findings *f) SA_HIDDEN;
/* Registered by the lifecycle (shim/core/): writes the init line once per
 * process, with the time of the line that triggers it. */
typedef void (*sa_first_line_fn)(double ts);
void sa_emit_set_first_line(sa_first_line_fn fn) SA_HIDDEN;
/* Something to say once, outside a signal handler (the calls that passed
 * through unaudited): set by the upper floor, async-signal-safe; the next
 * line written runs the registered hook (one load per line written). */
extern int sa_emit_notes_pending SA_HIDDEN;
typedef void (*sa_notes_fn)(void);
void sa_emit_set_notes(sa_notes_fn fn) SA_HIDDEN;
/* A new process that no fork handler told us of (a raw clone system call
 * in assembly): checked where each line is written, with one load of a
 * page the kernel wipes in every copy of this address space
 * (MADV_WIPEONFORK), or a getpid where that page could not be had. The
 * hook is the upper floor's reset for a new process. */
typedef void (*sa_new_process_fn)(void);
void sa_emit_set_new_process(sa_new_process_fn fn) SA_HIDDEN;
/* Arms the check in this process (after its set-up, and in each child). */
void sa_emit_stamp_arm(void) SA_HIDDEN;
void sa_emit_stamp_check_slow(void) SA_HIDDEN;
extern int sa_emit_stamp_fallback SA_HIDDEN;
extern volatile unsigned char *sa_emit_stamp SA_HIDDEN;
static inline void sa_emit_stamp_check(void)
{
	if (SA_UNLIKELY(sa_emit_stamp_fallback) || SA_UNLIKELY(sa_emit_stamp && !*sa_emit_stamp))
		sa_emit_stamp_check_slow();
}

/* ---- event.c: events built as jansson objects (rare lines) ----------------- */

/* A new event object with "event" set (and "fd" when fd >= 0). The common
 * fields are the line builder's; "ts" and "severity" set on the object
 * replace the builder's own. */
void sa_json_init(void) SA_HIDDEN;   /* jansson: our arena, our seed (event.c) */
json_t *sa_event_new(const char *event, int fd) SA_HIDDEN;
/* Adds the findings, counts, checks the level and writes. Steals ev. */
void sa_event_emit(json_t *ev, enum sa_level l, const struct sa_findings *f) SA_HIDDEN;
/* Writes ev as it is (no level check, no counting). Steals ev. */
void sa_event_write(json_t *ev) SA_HIDDEN;
/* Formats ev into buf as one line with a trailing \n, at most cap (<=
 * SA_LINE_MAX) bytes: overlong strings are shortened and "truncated":true
 * added. Returns the length, or -1. Pure. */
int sa_event_format(json_t *ev, char *buf, size_t cap) SA_HIDDEN;
/* A JSON string from arbitrary bytes: valid UTF-8 kept, every other byte
 * written as the four characters \xNN. Never NULL (json_null on OOM). */
json_t *sa_json_bytes(const char *s, size_t n) SA_HIDDEN;
json_t *sa_json_str(const char *s) SA_HIDDEN;
json_t *sa_json_addr(const struct sockaddr *sa, socklen_t len) SA_HIDDEN;
json_t *sa_json_errno(int err) SA_HIDDEN;       /* "ECONNREFUSED" */

#endif
