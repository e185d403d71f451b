/*
 * line.c: an event line built field by field into a buffer the caller
 * owns (on its stack), with no allocation: the common fields (ts, event,
 * schema, pid, tid, comm, severity, fd), then the caller's fields in its
 * order, then findings and msg. Every line of the shim is built here; the
 * jansson path (event.c) walks its object into the same builder.
 *
 * Pure: no system call but the clock (and gettid once per thread).
 */
#include <string.h>

#include <sys/mman.h>
#include <sys/syscall.h>

#include "line/line.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define SCHEMA_PID ",\"schema\":" STR(SOCKAUDIT_SCHEMA) ",\"pid\":"

/* ,"schema":1,"pid":P,"tid":T,"comm":"C","severity": is the same on every
 * line of a thread: written once per thread (and again after fork, or when
 * the program's name changes). */
static __thread struct {
	pid_t pid, tid;
	unsigned gen;
	unsigned short len;
	char s[448];
} ident SA_TLS;

/* Most idents (pid, tid and a short comm) are shorter: copied whole. */
#define IDENT_SHORT 128

/* The digits of the current second, for "ts". */
static __thread struct sa_real_cache ts_digits SA_TLS;


/* ---- a new process no fork handler told us of (line.h) ---------------- */
static sa_new_process_fn new_process;
/* One byte on a page of its own that the kernel gives every copy of this
 * address space zeroed (fork, vfork-less clone): 1 here, 0 in a child that
 * no fork handler told us of. NULL: not armed, or the kernel has no
 * MADV_WIPEONFORK (4.14+); then stamp_pid is compared with getpid. */
volatile unsigned char *sa_emit_stamp;
int sa_emit_stamp_fallback;
static int stamp_tried;
static pid_t stamp_pid;
/* The process epoch when the stamp was armed: a fork handler (or clone
 * wrapper) that reset a child moved the epoch on, so a zero stamp with
 * another epoch is a known child, re-armed at its first line (a write to
 * the wiped page is a page fault a child that writes no line never pays,
 * and the fork handler writes nothing for it). */
static uint32_t stamp_epoch;

void sa_emit_set_new_process(sa_new_process_fn fn)
{
	__atomic_store_n(&new_process, fn, __ATOMIC_RELEASE);
}

/* Two system calls, once per audited process (none in a forked child: the
 * page and its advice are inherited). */
void sa_emit_stamp_arm(void)
{
	if (!sa_emit_stamp && !stamp_tried) {
		long p = sa_syscall(SYS_mmap, 0L, 4096L, (long)(PROT_READ | PROT_WRITE), (long)(MAP_PRIVATE | MAP_ANONYMOUS),
				    -1L, 0L);

		stamp_tried = 1;
		if (p != -1 && sa_syscall(SYS_madvise, p, 4096L, (long)MADV_WIPEONFORK) == 0)
			sa_emit_stamp = (volatile unsigned char *)p;
		else if (p != -1)
			sa_syscall(SYS_munmap, p, 4096L);
	}
	stamp_epoch = sa_proc_epoch();
	if (sa_emit_stamp) {
		*sa_emit_stamp = 1;
	} else {
		stamp_pid = (pid_t)sa_syscall3_raw(SYS_getpid, 0, 0, 0);
		sa_emit_stamp_fallback = 1;
	}
}

void sa_emit_stamp_check_slow(void)
{
	sa_new_process_fn fn = __atomic_load_n(&new_process, __ATOMIC_ACQUIRE);

	if (stamp_epoch != sa_proc_epoch()) {   /* a fork handler's child: known, reset already */
		sa_emit_stamp_arm();
		return;
	}
	if (sa_emit_stamp ? *sa_emit_stamp != 0
			  : (!stamp_pid || (pid_t)sa_syscall3_raw(SYS_getpid, 0, 0, 0) == stamp_pid))
		return;
	if (fn)
		fn();          /* re-arms */
	else
		sa_emit_stamp_arm();
}

/* This thread's ident, written again when pid, tid or the program's name
 * changed; 0, or -1 when it does not fit. */
static int ident_ready(void)
{
	pid_t pid = sa_pid(), tid = sa_tid();
	unsigned gen = sa_comm_gen();
	const char *comm;
	struct sa_linebuf w;

	if (SA_UNLIKELY(ident.pid != pid || ident.tid != tid || ident.gen != gen || !ident.len)) {
		comm = sa_comm();
		w.p = ident.s;
		w.end = ident.s + sizeof ident.s;
		ident.len = 0;
		if (sa_linebuf_put(&w, SCHEMA_PID, sizeof SCHEMA_PID - 1) || sa_linebuf_int(&w, pid) ||
		    sa_linebuf_put(&w, ",\"tid\":", 7) || sa_linebuf_int(&w, tid) ||
		    sa_linebuf_put(&w, ",\"comm\":", 8) ||
		    (comm ? sa_linebuf_bytes(&w, comm, strlen(comm)) : sa_linebuf_put(&w, "null", 4)) ||
		    sa_linebuf_put(&w, ",\"severity\":", 12))
			return -1;
		ident.pid = pid;
		ident.tid = tid;
		ident.gen = gen;
		ident.len = (unsigned short)(w.p - ident.s);
	}
	return 0;
}

/* The common fields; evtext is ,"event":"NAME" composed (SA_EVTEXT_PAD bytes), or NULL for a
 * name escaped here. */
static void begin(struct sa_line *L, const char *event, const char *evtext, size_t evlen, int fd, int warn,
		  double ts)
{
	struct sa_linebuf *o = &L->o;
	int r;

	sa_emit_stamp_check();   /* a new process no fork handler saw: its own pid first */
	L->o.p = L->buf;
	L->o.end = L->buf + sizeof L->buf - 1;   /* room for the newline */
	L->over = 0;
	L->event = event;
	__builtin_memcpy(L->buf, "{\"ts\":", 6);   /* the buffer is empty */
	o->p = L->buf + 6;
	if (ts > 0) {
		L->ts = ts;
		r = sa_linebuf_real_cached(o, ts, &ts_digits);
	} else {
		/* sa_now_wall(), kept as integers for the writer too. */
		struct timespec now;
		uint32_t us;

		sa_clock(CLOCK_REALTIME, &now);
		us = (uint32_t)(now.tv_nsec / 1000);
		L->ts = (double)now.tv_sec + (double)us / 1e6;
		r = sa_linebuf_ts_fast(o, L->ts, (uint64_t)now.tv_sec, us, &ts_digits);
	}
	r = r || ident_ready();
	if (!r && evtext && (size_t)(o->end - o->p) >= SA_EVTEXT_PAD + sizeof ident.s + 6) {
		/* A composed event name: the rest is copies, room checked once
		 * (for whole copies: what lies past each text is overwritten
		 * next, or is past the line's end). Fixed sizes are moves, not
		 * calls to memcpy. */
		char *p = o->p;

		__builtin_memcpy(p, evtext, SA_EVTEXT_PAD);
		p += evlen;
		if (SA_LIKELY(ident.len <= IDENT_SHORT))
			__builtin_memcpy(p, ident.s, IDENT_SHORT);
		else
			__builtin_memcpy(p, ident.s, ident.len);
		p += ident.len;
		__builtin_memcpy(p, warn ? "\"warn\"" : "\"info\"", 6);
		o->p = p + 6;
	} else {
		r = r ||
		    (evtext ? sa_linebuf_put(o, evtext, evlen)
			    : sa_linebuf_put(o, ",\"event\":", 9) || sa_linebuf_str(o, event, strlen(event))) ||
		    sa_linebuf_put(o, ident.s, ident.len) ||
		    (warn ? sa_linebuf_put(o, "\"warn\"", 6) : sa_linebuf_put(o, "\"info\"", 6));
	}
	sa_line_check(L, r);
	L->core = L->o.p;
	if (fd >= 0) {
		sa_line_int(L, "fd", fd);
		L->core = L->o.p;
	}
}

/* A warn line for a task that shares our memory but is not us (a vfork
 * child): its pid and tid as given, nothing cached or changed. */
void sa_line_begin_as(struct sa_line *L, const char *event, pid_t pid, pid_t tid)
{
	struct sa_linebuf *o = &L->o;
	struct timespec now;
	const char *comm = sa_comm();
	int r;

	L->over = 0;
	L->event = event;
	L->o.p = L->buf;
	L->o.end = L->buf + sizeof L->buf - 1;
	clock_gettime(CLOCK_REALTIME, &now);
	L->ts = (double)now.tv_sec + (double)(now.tv_nsec / 1000) / 1e6;
	r = sa_linebuf_put(o, "{\"ts\":", 6) || sa_linebuf_real(o, L->ts) || sa_linebuf_put(o, ",\"event\":", 9) ||
	    sa_linebuf_str(o, event, strlen(event)) || sa_linebuf_put(o, SCHEMA_PID, sizeof SCHEMA_PID - 1) ||
	    sa_linebuf_int(o, pid) || sa_linebuf_put(o, ",\"tid\":", 7) || sa_linebuf_int(o, tid) ||
	    sa_linebuf_put(o, ",\"comm\":", 8) ||
	    (comm ? sa_linebuf_bytes(o, comm, strlen(comm)) : sa_linebuf_put(o, "null", 4)) ||
	    sa_linebuf_put(o, ",\"severity\":\"warn\"", 18);
	sa_line_check(L, r);
	L->core = L->o.p;
}

void sa_line_begin_at(struct sa_line *L, const char *event, int fd, int warn, double ts)
{
	begin(L, event, NULL, 0, fd, warn, ts);
}

void sa_line_begin_lit(struct sa_line *L, const char *event, const char *evtext, size_t evlen, int fd,
		       const struct sa_findings *f)
{
	begin(L, event, evtext, evlen, fd, f && f->n > 0, 0);
}

int sa_line_key(struct sa_line *L, const char *key)
{
	size_t n = strlen(key);

	if (L->over)
		return -1;
	if (sa_linebuf_put(&L->o, ",", 1) || sa_linebuf_str(&L->o, key, n) || sa_linebuf_put(&L->o, ":", 1)) {
		sa_line_overflow(L);
		return -1;
	}
	return 0;
}

/* sa_line_int_k's other cases: 100 and up, negative, or little room. */
void sa_line_int_slow(struct sa_line *L, const char *k, size_t kn, long long v)
{
	if (sa_line_key_k(L, k, kn))
		return;
	if ((unsigned long long)v < 100 && L->o.end - L->o.p >= 2) {
		if (v < 10) {
			*L->o.p++ = (char)('0' + v);
		} else {
			memcpy(L->o.p, sa_pairs + 2 * v, 2);
			L->o.p += 2;
		}
		return;
	}
	sa_line_check(L, sa_linebuf_int(&L->o, v));
}

void sa_line_errno_k(struct sa_line *L, const char *k, size_t kn, int err)
{
	char b[SA_ERRNO_NAME_MAX];
	const char *n;

	if (sa_line_key_k(L, k, kn))
		return;
	n = sa_errno_name(err, b);
	sa_line_check(L, sa_linebuf_str(&L->o, n, strlen(n)));
}

static int out_codes(struct sa_linebuf *o, const struct sa_findings *f)
{
	int i;

	if (sa_linebuf_put(o, ",\"findings\":[", 13))
		return -1;
	for (i = 0; i < f->n; i++)
		if ((i && sa_linebuf_put(o, ",", 1)) || sa_linebuf_str(o, f->codes[i], strlen(f->codes[i])))
			return -1;
	return sa_linebuf_put(o, "]", 1);
}

int sa_line_finish_full(struct sa_line *L, const struct sa_findings *f)
{
	struct sa_linebuf *o = &L->o;
	int has = f && f->n > 0;

	if (!L->over && has)
		L->over = out_codes(o, f) || sa_linebuf_put(o, ",\"msg\":", 7) ||
			  sa_linebuf_bytes(o, f->msg, strlen(f->msg));
	if (!L->over)
		L->over = sa_linebuf_put(o, "}", 1);
	if (L->over) {
		/* Too long (it cannot be, for the fields these events carry):
		 * the common fields, the codes and "truncated", as event.c does. */
		o->p = L->core;
		o->end = L->buf + sizeof L->buf - 1;
		if ((has && out_codes(o, f)) || sa_linebuf_put(o, ",\"truncated\":true}", 18))
			return -1;
	}
	*o->p++ = '\n';
	return (int)(o->p - L->buf);
}
