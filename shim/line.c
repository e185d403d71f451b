/*
 * line.c: JSON written straight into a buffer.
 *
 * The sa_out_* writers are the compact serializer under every line (event.c
 * walks a jansson object with them). The sa_line_* builder writes the
 * events of the per-connection paths (accept, connect, first speaker)
 * without building an object at all: at trace level the jansson object of
 * an accept line (one malloc per field, a hash table, the free walk) was
 * three quarters of its 32,000 instructions (bench/callgrind.sh). A line
 * comes out byte for byte as event.c would write the same fields
 * (tests/unit/test_line.c checks it against event.c), in the order the
 * caller adds them after the common ones. Pure: no syscall but the clock
 * until sa_line_emit hands the line to the sink.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "internal.h"

/* ---- writers ------------------------------------------------------------ */

int sa_out_put(struct sa_out *o, const char *s, size_t n)
{
	if ((size_t)(o->end - o->p) < n)
		return -1;
	memcpy(o->p, s, n);
	o->p += n;
	return 0;
}

int sa_out_u64(struct sa_out *o, uint64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char tmp[24];
	int i = (int)sizeof tmp;

	if (v < 10 && o->p < o->end) {   /* most of what we write: 0, fds, counts */
		*o->p++ = (char)('0' + v);
		return 0;
	}
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		tmp[--i] = pairs[2 * r + 1];
		tmp[--i] = pairs[2 * r];
	}
	if (v >= 10) {
		tmp[--i] = pairs[2 * v + 1];
		tmp[--i] = pairs[2 * v];
	} else {
		tmp[--i] = (char)('0' + v);
	}
	return sa_out_put(o, tmp + i, sizeof tmp - (size_t)i);
}

int sa_out_int(struct sa_out *o, long long v)
{
	if (v < 0) {
		if (sa_out_put(o, "-", 1))
			return -1;
		return sa_out_u64(o, (uint64_t)0 - (uint64_t)v);
	}
	return sa_out_u64(o, (uint64_t)v);
}

/* Reals with microsecond precision, trailing zeros cut ("1.5", "0.0"):
 * every real we write is a time in s or ms, or a rounded percentile. */
int sa_out_real(struct sa_out *o, double v)
{
	double a = v < 0 ? -v : v;
	uint64_t ip, frac;
	char digits[7];
	int n, i;

	if (!(a <= 1.7976931348623157e308))
		return sa_out_put(o, "null", 4);   /* NaN and infinities are not JSON */
	if (a >= 1e15 || (a > 0 && a < 1e-6)) {
		char tmp[32];
		n = snprintf(tmp, sizeof tmp, "%.16g", v);
		if (n <= 0 || n >= (int)sizeof tmp)
			return -1;
		return sa_out_put(o, tmp, (size_t)n);
	}
	ip = (uint64_t)a;
	frac = (uint64_t)((a - (double)ip) * 1e6 + 0.5);
	if (frac >= 1000000) {
		ip++;
		frac -= 1000000;
	}
	if (v < 0 && (ip || frac) && sa_out_put(o, "-", 1))
		return -1;
	if (sa_out_u64(o, ip) || sa_out_put(o, ".", 1))
		return -1;
	for (i = 5; i >= 0; i--) {
		digits[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	for (n = 6; n > 1 && digits[n - 1] == '0'; n--)
		;
	return sa_out_put(o, digits, (size_t)n);
}

static int plain(unsigned char c)
{
	return c >= 0x20 && c != '"' && c != '\\';
}

/* One escape for a byte JSON will not take as it is. */
static int escape(struct sa_out *o, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

	switch (c) {
	case '"': return sa_out_put(o, "\\\"", 2);
	case '\\': return sa_out_put(o, "\\\\", 2);
	case '\n': return sa_out_put(o, "\\n", 2);
	case '\t': return sa_out_put(o, "\\t", 2);
	case '\r': return sa_out_put(o, "\\r", 2);
	default: return sa_out_put(o, esc, 6);
	}
}

/* A JSON string of n bytes that are valid UTF-8 already. */
int sa_out_str(struct sa_out *o, const char *s, size_t n)
{
	size_t i, run = 0;

	if (sa_out_put(o, "\"", 1))
		return -1;
	for (i = 0; i < n; i++) {
		if (plain((unsigned char)s[i]))
			continue;
		if (sa_out_put(o, s + run, i - run) || escape(o, (unsigned char)s[i]))
			return -1;
		run = i + 1;
	}
	if (sa_out_put(o, s + run, n - run))
		return -1;
	return sa_out_put(o, "\"", 1);
}

/* A JSON string of any bytes, as sa_json_bytes() then sa_out_str() would
 * write it: valid UTF-8 kept, any other byte as the characters \xNN
 * (its backslash escaped in JSON). */
int sa_out_bytes(struct sa_out *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0, k;
	char x[6];

	if (sa_out_put(o, "\"", 1))
		return -1;
	while (i < n) {
		if (u[i] < 0x80 && plain(u[i])) {
			i++;
			continue;
		}
		if (u[i] >= 0x80 && (k = sa_utf8_seq(u + i, n - i)) > 0) {
			i += k;
			continue;
		}
		if (sa_out_put(o, s + run, i - run))
			return -1;
		if (u[i] < 0x80) {
			if (escape(o, u[i]))
				return -1;
		} else {
			snprintf(x, sizeof x, "\\\\x%02x", u[i]);
			if (sa_out_put(o, x, 5))
				return -1;
		}
		run = ++i;
	}
	if (sa_out_put(o, s + run, n - run))
		return -1;
	return sa_out_put(o, "\"", 1);
}

/* Decimal digits of v at p; returns how many. */
static size_t put_dec(char *p, unsigned v)
{
	char tmp[10];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

int sa_addr_text(const struct sockaddr *sa, socklen_t len, char *out, size_t cap)
{
	char host[INET6_ADDRSTRLEN];
	size_t n = 0;
	int i;

	if (!sa || len < (socklen_t)sizeof(sa_family_t) || cap < SA_ADDR_TEXT_MAX)
		return -1;
	switch (sa->sa_family) {
	case AF_INET: {
		/* By hand, not inet_ntop and printf: they were a third of an
		 * accept line's instructions. */
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		const unsigned char *a = (const unsigned char *)&in->sin_addr;
		if (len < (socklen_t)sizeof *in)
			return -1;
		for (i = 0; i < 4; i++) {
			n += put_dec(out + n, a[i]);
			out[n++] = i < 3 ? '.' : ':';
		}
		return (int)(n + put_dec(out + n, ntohs(in->sin_port)));
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		if (len < (socklen_t)sizeof *in6 || !inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host))
			return -1;
		return snprintf(out, cap, "[%s]:%u", host, ntohs(in6->sin6_port));
	}
	case AF_UNIX: {
		const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
		size_t max = len - offsetof(struct sockaddr_un, sun_path);
		if (max > sizeof un->sun_path)
			max = sizeof un->sun_path;
		if (max == 0) {
			memcpy(out, "unnamed", 7);
			return 7;
		}
		if (un->sun_path[0] == '\0') {
			/* Abstract: "@" then the name, which may hold any byte. */
			out[0] = '@';
			memcpy(out + 1, un->sun_path + 1, max - 1);
			return (int)max;
		}
		n = strnlen(un->sun_path, max);
		memcpy(out, un->sun_path, n);
		return (int)n;
	}
	default:
		return snprintf(out, cap, "family:%d", sa->sa_family);
	}
}

/* The address as sa_json_addr() gives it. */
static int out_addr(struct sa_out *o, const struct sockaddr *sa, socklen_t len)
{
	char t[SA_ADDR_TEXT_MAX];
	int n = sa_addr_text(sa, len, t, sizeof t);

	if (n < 0)
		return sa_out_put(o, "null", 4);
	if (sa->sa_family == AF_UNIX)   /* a path: any bytes */
		return sa_out_bytes(o, t, (size_t)n);
	/* Digits, dots, colons, brackets, hex: nothing to escape. */
	return sa_out_put(o, "\"", 1) || sa_out_put(o, t, (size_t)n) || sa_out_put(o, "\"", 1);
}

/* ---- the builder -------------------------------------------------------- */

/* k is ,"name": already (the macros in internal.h compose it). */
static int key(struct sa_line *L, const char *k, size_t kn)
{
	if (L->over)
		return -1;
	if ((size_t)(L->o.end - L->o.p) < kn) {
		L->over = 1;
		return -1;
	}
	memcpy(L->o.p, k, kn);
	L->o.p += kn;
	return 0;
}

static void check(struct sa_line *L, int r)
{
	if (r)
		L->over = 1;
}

/* ,"schema":1,"pid":P,"tid":T,"comm":"C","severity": is the same on every
 * line of a thread: written once per thread (and again after fork, or when
 * the program's name changes). */
static __thread struct {
	pid_t pid, tid;
	unsigned gen;
	unsigned short len;
	char s[448];
} ident;

static int out_ident(struct sa_out *o)
{
	pid_t pid = sa_pid(), tid = sa_tid();
	unsigned gen = sa_comm_gen();
	const char *comm;
	struct sa_out w;

	if (SA_UNLIKELY(ident.pid != pid || ident.tid != tid || ident.gen != gen || !ident.len)) {
		comm = sa_comm();
		w.p = ident.s;
		w.end = ident.s + sizeof ident.s;
		ident.len = 0;
		if (sa_out_put(&w, ",\"schema\":1,\"pid\":", 18) || sa_out_int(&w, pid) ||
		    sa_out_put(&w, ",\"tid\":", 7) || sa_out_int(&w, tid) ||
		    sa_out_put(&w, ",\"comm\":", 8) ||
		    (comm ? sa_out_bytes(&w, comm, strlen(comm)) : sa_out_put(&w, "null", 4)) ||
		    sa_out_put(&w, ",\"severity\":", 12))
			return -1;
		ident.pid = pid;
		ident.tid = tid;
		ident.gen = gen;
		ident.len = (unsigned short)(w.p - ident.s);
	}
	return sa_out_put(o, ident.s, ident.len);
}

void sa_line_begin(struct sa_line *L, const char *event, int fd, const struct sa_findings *f)
{
	struct sa_out *o = &L->o;
	int r;

	L->o.p = L->buf;
	L->o.end = L->buf + sizeof L->buf - 1;   /* room for the newline */
	L->over = 0;
	L->event = event;
	L->ts = sa_now_wall();
	r = sa_out_put(o, "{\"ts\":", 6) || sa_out_real(o, L->ts) ||
	    sa_out_put(o, ",\"event\":", 9) || sa_out_str(o, event, strlen(event)) ||
	    out_ident(o) ||
	    (f && f->n > 0 ? sa_out_put(o, "\"warn\"", 6) : sa_out_put(o, "\"info\"", 6));
	if (!r && fd >= 0)
		r = sa_out_put(o, ",\"fd\":", 6) || sa_out_int(o, fd);
	check(L, r);
	L->core = L->o.p;
}

void sa_line_int_k(struct sa_line *L, const char *k, size_t kn, long long v)
{
	if (!key(L, k, kn))
		check(L, sa_out_int(&L->o, v));
}

void sa_line_real_k(struct sa_line *L, const char *k, size_t kn, double v)
{
	if (!key(L, k, kn))
		check(L, sa_out_real(&L->o, v));
}

void sa_line_null_k(struct sa_line *L, const char *k, size_t kn)
{
	if (!key(L, k, kn))
		check(L, sa_out_put(&L->o, "null", 4));
}

void sa_line_bool_k(struct sa_line *L, const char *k, size_t kn, int v)
{
	if (!key(L, k, kn))
		check(L, v ? sa_out_put(&L->o, "true", 4) : sa_out_put(&L->o, "false", 5));
}

void sa_line_str_k(struct sa_line *L, const char *k, size_t kn, const char *s)
{
	if (!key(L, k, kn))
		check(L, s ? sa_out_bytes(&L->o, s, strlen(s)) : sa_out_put(&L->o, "null", 4));
}

void sa_line_addr_k(struct sa_line *L, const char *k, size_t kn, const struct sockaddr *sa, socklen_t len)
{
	if (!key(L, k, kn))
		check(L, out_addr(&L->o, sa, len));
}

void sa_line_errno_k(struct sa_line *L, const char *k, size_t kn, int err)
{
	const char *n = strerrorname_np(err);
	char b[16];
	int len;

	if (key(L, k, kn))
		return;
	if (n) {
		check(L, sa_out_str(&L->o, n, strlen(n)));
		return;
	}
	len = snprintf(b, sizeof b, "E%d", err);
	check(L, sa_out_str(&L->o, b, (size_t)len));
}

void sa_line_opt_k(struct sa_line *L, const char *k, size_t kn, enum sa_optkind kind,
		   const void *buf, socklen_t len)
{
	if (!key(L, k, kn))
		check(L, sa_opt_out(&L->o, kind, buf, len));
}

static int out_codes(struct sa_out *o, const struct sa_findings *f)
{
	int i;

	if (sa_out_put(o, ",\"findings\":[", 13))
		return -1;
	for (i = 0; i < f->n; i++)
		if ((i && sa_out_put(o, ",", 1)) || sa_out_str(o, f->codes[i], strlen(f->codes[i])))
			return -1;
	return sa_out_put(o, "]", 1);
}

int sa_line_finish(struct sa_line *L, const struct sa_findings *f)
{
	struct sa_out *o = &L->o;
	int has = f && f->n > 0;

	if (!L->over && has)
		L->over = out_codes(o, f) || sa_out_put(o, ",\"msg\":", 7) ||
			  sa_out_bytes(o, f->msg, strlen(f->msg));
	if (!L->over)
		L->over = sa_out_put(o, "}", 1);
	if (L->over) {
		/* Too long (it cannot be, for the fields these events carry):
		 * the common fields, the codes and "truncated", as event.c does. */
		o->p = L->core;
		if ((has && out_codes(o, f)) || sa_out_put(o, ",\"truncated\":true}", 18))
			return -1;
	}
	*o->p++ = '\n';
	return (int)(o->p - L->buf);
}

void sa_line_emit(struct sa_line *L, enum sa_level l, const struct sa_findings *f)
{
	int i, n;

	sa_event_count(L->event);
	if (f && f->n > 0) {
		l = SA_LEVEL_WARN;
		for (i = 0; i < f->n; i++)
			sa_findings_count(f->codes[i]);
	}
	if (!sa_level_enabled(l))
		return;
	n = sa_line_finish(L, f);
	sa_emit_init_once(L->ts);
	if (n > 0)
		sa_sink_write(L->buf, (size_t)n);
}
