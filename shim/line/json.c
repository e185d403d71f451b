/*
 * json.c: the compact JSON writer under every line: numbers, strings (valid
 * UTF-8, or any bytes with the rest as \xNN) and errno names, written
 * straight into a caller's buffer (addresses: addr.c).
 *
 * Pure: no allocation, no lock, no system call. Every writer returns 0, or
 * -1 when the bytes do not fit, and then the caller drops or truncates.
 */
#include <stdio.h>
#include <string.h>

#include "line/line.h"

/* Length of the valid UTF-8 sequence at s (max n bytes), 0 if invalid. */
size_t sa_utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) { len = 2; cp = s[0] & 0x1f; }
	else if (s[0] >= 0xe0 && s[0] <= 0xef) { len = 3; cp = s[0] & 0x0f; }
	else if (s[0] >= 0xf0 && s[0] <= 0xf4) { len = 4; cp = s[0] & 0x07; }
	else return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* ---- writers ------------------------------------------------------------ */

const char sa_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* The decimal digits of v, right-aligned to end; returns where they start. */
static inline char *dec_back(char *end, uint64_t v)
{
	uint32_t w;

	while (v > UINT32_MAX) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		*--end = sa_pairs[2 * r + 1];
		*--end = sa_pairs[2 * r];
	}
	/* 32-bit divisions from here: cheaper, and every fd, count and
	 * second since 1970 fits. */
	w = (uint32_t)v;
	while (w >= 100) {
		unsigned r = w % 100;
		w /= 100;
		*--end = sa_pairs[2 * r + 1];
		*--end = sa_pairs[2 * r];
	}
	if (w >= 10) {
		*--end = sa_pairs[2 * w + 1];
		*--end = sa_pairs[2 * w];
	} else {
		*--end = (char)('0' + w);
	}
	return end;
}

int sa_linebuf_u64(struct sa_linebuf *o, uint64_t v)
{
	char tmp[24], *b;

	if (v < 10 && o->p < o->end) {   /* most of what we write: 0, fds, counts */
		*o->p++ = (char)('0' + v);
		return 0;
	}
	b = dec_back(tmp + sizeof tmp, v);
	return sa_linebuf_put(o, b, (size_t)(tmp + sizeof tmp - b));
}

int sa_linebuf_int(struct sa_linebuf *o, long long v)
{
	if (v < 0) {
		if (sa_linebuf_put(o, "-", 1))
			return -1;
		return sa_linebuf_u64(o, (uint64_t)0 - (uint64_t)v);
	}
	return sa_linebuf_u64(o, (uint64_t)v);
}

/* The integer and microsecond parts of a in [1e-6, 1e15), rounded as
 * sa_linebuf_real has always rounded them (one expression, shared). */
static inline void real_parts(double a, uint64_t *ip, uint32_t *frac)
{
	/* a < 2^63 and the fraction's term < 2^63: the signed conversions
	 * truncate to the same integers, one instruction each. */
	uint64_t i = (uint64_t)(int64_t)a, f = (uint64_t)(int64_t)((a - (double)i) * 1e6 + 0.5);

	if (f >= 1000000) {
		i++;
		f -= 1000000;
	}
	*ip = i;
	*frac = (uint32_t)f;
}

/* sa_trips (line.h), built at compile time. */
#define TRIP(a, b, c) { '0' + (a), '0' + (b), '0' + (c), (c) ? 3 : (b) ? 2 : (a) ? 1 : 0 }
#define TRIP10(a, b) TRIP(a, b, 0), TRIP(a, b, 1), TRIP(a, b, 2), TRIP(a, b, 3), TRIP(a, b, 4), \
		     TRIP(a, b, 5), TRIP(a, b, 6), TRIP(a, b, 7), TRIP(a, b, 8), TRIP(a, b, 9)
#define TRIP100(a) TRIP10(a, 0), TRIP10(a, 1), TRIP10(a, 2), TRIP10(a, 3), TRIP10(a, 4), \
		   TRIP10(a, 5), TRIP10(a, 6), TRIP10(a, 7), TRIP10(a, 8), TRIP10(a, 9)
const char sa_trips[1000][4] = {
	TRIP100(0), TRIP100(1), TRIP100(2), TRIP100(3), TRIP100(4),
	TRIP100(5), TRIP100(6), TRIP100(7), TRIP100(8), TRIP100(9),
};
#undef TRIP100
#undef TRIP10
#undef TRIP

/* The integer part ip and the microseconds frac, as sa_linebuf_real writes
 * them. */
static inline int parts_out(struct sa_linebuf *o, uint64_t ip, uint32_t frac)
{
	char digits[8];

	if (ip < 10 && o->end - o->p >= 9) {   /* most times in ms: 0.dddddd */
		*o->p = (char)('0' + ip);
		o->p += 1 + sa_frac_text(o->p + 1, frac);
		return 0;
	}
	if (sa_linebuf_u64(o, ip))
		return -1;
	return sa_linebuf_put(o, digits, sa_frac_text(digits, frac));
}

/* Reals with microsecond precision, trailing zeros cut ("1.5", "0.0"):
 * every real we write is a time in s or ms, or a rounded percentile. */
int sa_linebuf_real(struct sa_linebuf *o, double v)
{
	double a = v < 0 ? -v : v;
	uint64_t ip;
	uint32_t frac;
	int n;

	if (!(a <= 1.7976931348623157e308))
		return sa_linebuf_put(o, "null", 4);   /* NaN and infinities are not JSON */
	if (a >= 1e15 || (a > 0 && a < 1e-6)) {
		char tmp[32];
		n = snprintf(tmp, sizeof tmp, "%.16g", v);
		if (n <= 0 || n >= (int)sizeof tmp)
			return -1;
		return sa_linebuf_put(o, tmp, (size_t)n);
	}
	real_parts(a, &ip, &frac);
	if (v < 0 && (ip || frac) && sa_linebuf_put(o, "-", 1))
		return -1;
	return parts_out(o, ip, frac);
}

/* sa_linebuf_real(o, ns / 1e6), the same bytes from integer parts: below
 * 1e15 ns (11 days) the double's rounding error is under 0.06 ns, so
 * real_parts() gives exactly ns / 1e6 and ns % 1e6 (test_fmt compares the
 * two over every ns to 2e7 and at random). Saves the floating point of a
 * duration written on every accept line. */
#define MS_NS_EXACT 1000000000000000ull
int sa_linebuf_ms_ns(struct sa_linebuf *o, uint64_t ns)
{
	if (SA_UNLIKELY(ns >= MS_NS_EXACT))
		return sa_linebuf_real(o, (double)ns / 1e6);
	return parts_out(o, ns / 1000000, (uint32_t)(ns % 1000000));
}

/* sa_linebuf_real(o, v), the same bytes, with the integer part's digits kept
 * in c (a thread's own): a timestamp's seconds change once a second.
 * c->seq tells a reader or a writer that a signal handler rewrote c in
 * the middle (then the bytes are redone, or the cache forgotten). */
/* Once a second: c holds ip's digits. Returns c's new sequence number,
 * 0 when a handler wrote c in between (then c is left empty). Apart, so
 * the common path keeps its registers. */
static __attribute__((noinline)) unsigned cache_fill(struct sa_real_cache *c, uint64_t ip)
{
	char tmp[24], *b = dec_back(tmp + sizeof tmp, ip);
	unsigned char len = (unsigned char)(tmp + sizeof tmp - b);
	unsigned seq = ++c->seq;

	c->len = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(c->s, b, len);
	c->ip = ip;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->len = len;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (c->seq != seq || !seq) {   /* a handler wrote in between (or the count wrapped to 0) */
		c->len = 0;
		return 0;
	}
	return seq;
}

/* ip's digits from c and frac's after them; v (the same value) the long
 * way when a handler rewrote c meanwhile. Room was checked. */
static inline int cached_parts(struct sa_linebuf *o, double v, uint64_t ip, uint32_t frac, struct sa_real_cache *c)
{
	unsigned seq;
	char *start = o->p;

	seq = c->seq;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (SA_UNLIKELY(!c->len || c->ip != ip)) {
		seq = cache_fill(c, ip);
		if (!seq)
			return sa_linebuf_real(o, v);
	}
	__builtin_memcpy(o->p, c->s, sizeof c->s);
	o->p += c->len;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (SA_UNLIKELY(c->seq != seq)) {
		o->p = start;
		return sa_linebuf_real(o, v);
	}
	o->p += sa_frac_text(o->p, frac);
	return 0;
}

int sa_linebuf_real_cached(struct sa_linebuf *o, double v, struct sa_real_cache *c)
{
	uint64_t ip;
	uint32_t frac;

	if (!(v >= 1e-6 && v < 1e15) || (size_t)(o->end - o->p) < sizeof c->s + 8)
		return sa_linebuf_real(o, v);
	real_parts(v, &ip, &frac);
	return cached_parts(o, v, ip, frac, c);
}

/* sa_linebuf_real_cached(o, sec + us / 1e6, c) from the integers: while sec <
 * 2^32 (the year 2106) the double is within 0.48 us of them, so
 * real_parts() gives back exactly sec and us (test_fmt: every microsecond
 * of several seconds, and at random). */
int sa_linebuf_ts_cached(struct sa_linebuf *o, double v, uint64_t sec, uint32_t us, struct sa_real_cache *c)
{
	if (SA_UNLIKELY(sec == 0 || sec >= (1ull << 32) || us >= 1000000) ||
	    (size_t)(o->end - o->p) < sizeof c->s + 8)
		return sa_linebuf_real_cached(o, v, c);
	return cached_parts(o, v, sec, us, c);
}

static int is_plain_byte(unsigned char c)
{
	return c >= 0x20 && c != '"' && c != '\\';
}

/* One escape for a byte JSON will not take as it is. */
static int escape(struct sa_linebuf *o, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

	switch (c) {
	case '"': return sa_linebuf_put(o, "\\\"", 2);
	case '\\': return sa_linebuf_put(o, "\\\\", 2);
	case '\n': return sa_linebuf_put(o, "\\n", 2);
	case '\t': return sa_linebuf_put(o, "\\t", 2);
	case '\r': return sa_linebuf_put(o, "\\r", 2);
	default: return sa_linebuf_put(o, esc, 6);
	}
}

/* A JSON string of n bytes that are valid UTF-8 already. */
/* s, n bytes that need no escape, quoted, when the buffer has room. */
static inline int put_quoted(struct sa_linebuf *o, const char *s, size_t n)
{
	*o->p++ = '"';
	memcpy(o->p, s, n);
	o->p += n;
	*o->p++ = '"';
	return 0;
}

int sa_linebuf_str(struct sa_linebuf *o, const char *s, size_t n)
{
	size_t i = 0, run = 0;

	/* Most strings (event names, codes) need no escape: one copy. */
	while (i < n && is_plain_byte((unsigned char)s[i]))
		i++;
	if (i == n && (size_t)(o->end - o->p) >= n + 2)
		return put_quoted(o, s, n);
	if (sa_linebuf_put(o, "\"", 1))
		return -1;
	for (i = 0; i < n; i++) {
		if (is_plain_byte((unsigned char)s[i]))
			continue;
		if (sa_linebuf_put(o, s + run, i - run) || escape(o, (unsigned char)s[i]))
			return -1;
		run = i + 1;
	}
	if (sa_linebuf_put(o, s + run, n - run))
		return -1;
	return sa_linebuf_put(o, "\"", 1);
}

/* A JSON string of any bytes, as sa_json_bytes() then sa_linebuf_str() would
 * write it: valid UTF-8 kept, any other byte as the characters \xNN
 * (its backslash escaped in JSON). */
int sa_linebuf_bytes(struct sa_linebuf *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0, k;
	char x[6];

	/* Most strings are printable ASCII with nothing to escape: one copy. */
	while (i < n && u[i] >= 0x20 && u[i] < 0x80 && u[i] != '"' && u[i] != '\\')
		i++;
	if (i == n && (size_t)(o->end - o->p) >= n + 2)
		return put_quoted(o, s, n);
	if (sa_linebuf_put(o, "\"", 1))
		return -1;
	while (i < n) {
		if (u[i] < 0x80 && is_plain_byte(u[i])) {
			i++;
			continue;
		}
		if (u[i] >= 0x80 && (k = sa_utf8_seq(u + i, n - i)) > 0) {
			i += k;
			continue;
		}
		if (sa_linebuf_put(o, s + run, i - run))
			return -1;
		if (u[i] < 0x80) {
			if (escape(o, u[i]))
				return -1;
		} else {
			snprintf(x, sizeof x, "\\\\x%02x", u[i]);
			if (sa_linebuf_put(o, x, 5))
				return -1;
		}
		run = ++i;
	}
	if (sa_linebuf_put(o, s + run, n - run))
		return -1;
	return sa_linebuf_put(o, "\"", 1);
}

/* Linux's errno names by number (the kernel's asm-generic/errno*.h, the
 * same on x86_64 and arm64), spelled as glibc's strerrorname_np() spells
 * them: that function is glibc 2.32's and musl has none, and the library
 * must load on glibc 2.17. Fixed-width strings, not pointers: no
 * relocation for the loader to apply at every exec. */
/* After .text (.rodata.s*: the Makefile's script): read only for a line
 * that names an errno, not by what every exec or child runs. */
static const char errno_names[][SA_ERRNO_NAME_MAX] SA_COLD_RODATA(errno_names) = {
	"0", "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO",
	"ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD", "EAGAIN",
	"ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST",
	"EXDEV", "ENODEV", "ENOTDIR", "EISDIR", "EINVAL", "ENFILE",
	"EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC", "ESPIPE",
	"EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE", "EDEADLK",
	"ENAMETOOLONG", "ENOLCK", "ENOSYS", "ENOTEMPTY", "ELOOP", "",
	"ENOMSG", "EIDRM", "ECHRNG", "EL2NSYNC", "EL3HLT", "EL3RST",
	"ELNRNG", "EUNATCH", "ENOCSI", "EL2HLT", "EBADE", "EBADR",
	"EXFULL", "ENOANO", "EBADRQC", "EBADSLT", "", "EBFONT",
	"ENOSTR", "ENODATA", "ETIME", "ENOSR", "ENONET", "ENOPKG",
	"EREMOTE", "ENOLINK", "EADV", "ESRMNT", "ECOMM", "EPROTO",
	"EMULTIHOP", "EDOTDOT", "EBADMSG", "EOVERFLOW", "ENOTUNIQ", "EBADFD",
	"EREMCHG", "ELIBACC", "ELIBBAD", "ELIBSCN", "ELIBMAX", "ELIBEXEC",
	"EILSEQ", "ERESTART", "ESTRPIPE", "EUSERS", "ENOTSOCK", "EDESTADDRREQ",
	"EMSGSIZE", "EPROTOTYPE", "ENOPROTOOPT", "EPROTONOSUPPORT", "ESOCKTNOSUPPORT", "EOPNOTSUPP",
	"EPFNOSUPPORT", "EAFNOSUPPORT", "EADDRINUSE", "EADDRNOTAVAIL", "ENETDOWN", "ENETUNREACH",
	"ENETRESET", "ECONNABORTED", "ECONNRESET", "ENOBUFS", "EISCONN", "ENOTCONN",
	"ESHUTDOWN", "ETOOMANYREFS", "ETIMEDOUT", "ECONNREFUSED", "EHOSTDOWN", "EHOSTUNREACH",
	"EALREADY", "EINPROGRESS", "ESTALE", "EUCLEAN", "ENOTNAM", "ENAVAIL",
	"EISNAM", "EREMOTEIO", "EDQUOT", "ENOMEDIUM", "EMEDIUMTYPE", "ECANCELED",
	"ENOKEY", "EKEYEXPIRED", "EKEYREVOKED", "EKEYREJECTED", "EOWNERDEAD", "ENOTRECOVERABLE",
	"ERFKILL", "EHWPOISON",
};

const char *sa_errno_name(int err, char buf[SA_ERRNO_NAME_MAX])
{
	if (err >= 0 && (size_t)err < sizeof errno_names / sizeof errno_names[0] && errno_names[err][0])
		return errno_names[err];
	snprintf(buf, SA_ERRNO_NAME_MAX, "E%d", err);
	return buf;
}
