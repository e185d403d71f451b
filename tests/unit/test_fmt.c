/* Randomized tests for shim/line/json.c's formatters: each fast path must
 * write, byte for byte, what the code it replaced wrote. The replaced code
 * is kept here as the reference (ref_*), unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>

#include "core/core.h"

/* ---- the reference: json.c as it was ---------------------------------- */

static const char ref_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static char *ref_dec_back(char *end, uint64_t v)
{
	uint32_t w;

	while (v > UINT32_MAX) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		*--end = ref_pairs[2 * r + 1];
		*--end = ref_pairs[2 * r];
	}
	w = (uint32_t)v;
	while (w >= 100) {
		unsigned r = w % 100;
		w /= 100;
		*--end = ref_pairs[2 * r + 1];
		*--end = ref_pairs[2 * r];
	}
	if (w >= 10) {
		*--end = ref_pairs[2 * w + 1];
		*--end = ref_pairs[2 * w];
	} else {
		*--end = (char)('0' + w);
	}
	return end;
}

static int ref_u64(struct sa_linebuf *o, uint64_t v)
{
	char tmp[24], *b;

	if (v < 10 && o->p < o->end) {
		*o->p++ = (char)('0' + v);
		return 0;
	}
	b = ref_dec_back(tmp + sizeof tmp, v);
	return sa_linebuf_put(o, b, (size_t)(tmp + sizeof tmp - b));
}

static int ref_int(struct sa_linebuf *o, long long v)
{
	if (v < 0) {
		if (sa_linebuf_put(o, "-", 1))
			return -1;
		return ref_u64(o, (uint64_t)0 - (uint64_t)v);
	}
	return ref_u64(o, (uint64_t)v);
}

static int ref_real(struct sa_linebuf *o, double v)
{
	double a = v < 0 ? -v : v;
	uint64_t ip, frac;
	uint32_t f32;
	char digits[7];
	int n, i;

	if (!(a <= 1.7976931348623157e308))
		return sa_linebuf_put(o, "null", 4);
	if (a >= 1e15 || (a > 0 && a < 1e-6)) {
		char tmp[32];
		n = snprintf(tmp, sizeof tmp, "%.16g", v);
		if (n <= 0 || n >= (int)sizeof tmp)
			return -1;
		return sa_linebuf_put(o, tmp, (size_t)n);
	}
	ip = (uint64_t)a;
	frac = (uint64_t)((a - (double)ip) * 1e6 + 0.5);
	if (frac >= 1000000) {
		ip++;
		frac -= 1000000;
	}
	if (v < 0 && (ip || frac) && sa_linebuf_put(o, "-", 1))
		return -1;
	if (ref_u64(o, ip))
		return -1;
	digits[0] = '.';
	f32 = (uint32_t)frac;
	for (i = 5; i >= 1; i -= 2) {
		unsigned r = f32 % 100;
		f32 /= 100;
		digits[i] = ref_pairs[2 * r];
		digits[i + 1] = ref_pairs[2 * r + 1];
	}
	for (n = 7; n > 2 && digits[n - 1] == '0'; n--)
		;
	return sa_linebuf_put(o, digits, (size_t)n);
}

/* The octet table as json.c spelled it: "d...", "dd..", "ddd.". */
static char ref_octets[256][4];

static void ref_octets_init(void)
{
	char t[8];
	int i;

	for (i = 0; i < 256; i++) {
		memset(ref_octets[i], '.', 4);
		memcpy(ref_octets[i], t, (size_t)snprintf(t, sizeof t, "%d", i));
	}
}

static int ref_addr_text(const struct sockaddr *sa, socklen_t len, char *out, size_t cap)
{
	size_t n = 0;
	int i;

	if (!sa || len < (socklen_t)sizeof(sa_family_t) || cap < SA_ADDR_TEXT_MAX)
		return -1;
	if (sa->sa_family != AF_INET)
		return sa_addr_text(sa, len, out, cap);   /* unchanged */
	{
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		const unsigned char *a = (const unsigned char *)&in->sin_addr;
		if (len < (socklen_t)sizeof *in)
			return -1;
		char port[8], *pb;
		for (i = 0; i < 4; i++) {
			memcpy(out + n, ref_octets[a[i]], 4);
			n += a[i] >= 100 ? 4 : a[i] >= 10 ? 3 : 2;
		}
		out[n - 1] = ':';
		pb = ref_dec_back(port + sizeof port, ntohs(in->sin_port));
		memcpy(out + n, pb, (size_t)(port + sizeof port - pb));
		return (int)(n + (size_t)(port + sizeof port - pb));
	}
}

static int ref_out_addr(struct sa_linebuf *o, const struct sockaddr *sa, socklen_t len)
{
	char t[SA_ADDR_TEXT_MAX];
	int n = ref_addr_text(sa, len, t, sizeof t);

	if (n < 0)
		return sa_linebuf_put(o, "null", 4);
	if (sa->sa_family == AF_UNIX)
		return sa_linebuf_bytes(o, t, (size_t)n);
	return sa_linebuf_put(o, "\"", 1) || sa_linebuf_put(o, t, (size_t)n) || sa_linebuf_put(o, "\"", 1);
}

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Both writers into buffers of room bytes; same result, same bytes. */
#define SAME(room, call_ref, call_new) do {                                     \
	char a_[64], b_[64];                                                      \
	struct sa_linebuf ra_ = { a_, a_ + (room) }, rb_ = { b_, b_ + (room) };       \
	struct sa_linebuf *o_;                                                        \
	int x_, y_;                                                               \
	o_ = &ra_; x_ = (call_ref);                                               \
	o_ = &rb_; y_ = (call_new);                                               \
	(void)o_;                                                                 \
	if (x_ != y_ || (!x_ && (ra_.p - a_ != rb_.p - b_ || memcmp(a_, b_, (size_t)(ra_.p - a_))))) { \
		print_error("differ at room %d: %.*s | %.*s\n", (int)(room),   \
			    (int)(ra_.p - a_), a_, (int)(rb_.p - b_), b_);        \
		fail();                                                           \
	}                                                                         \
} while (0)

/* ---- reals -------------------------------------------------------------- */

static double some_real(void)
{
	static const double edge[] = {
		0.0, -0.0, 1.0, -1.0, 0.5, 1e-6, 9.99999e-7, 1e-7, 0.0000005, 0.0000004999999,
		0.9999995, 0.99999949999, 1.9999995, 9.9999995, 99.9999995, 0.1, 0.01, 0.001,
		999999999999999.0, 1e15, 1e15 - 0.5, 1e16, 1e300, 1.7976931348623157e308,
		4.9e-324, 2.2250738585072014e-308, 1796119764.91225, 1796119764.9999995,
		1796119764.000001, 1795985079.374779, 4294967295.5, 4294967296.0, 18446744073.709551,
	};
	uint64_t r = rnd();
	double v;
	int e;

	switch (r % 8) {
	case 0:
		v = edge[(r >> 8) % (sizeof edge / sizeof edge[0])];
		break;
	case 1: {   /* a timestamp, at microseconds or finer */
		v = 1.7e9 + (double)((r >> 8) % 200000000) + (double)(rnd() % 1000000000) / 1e9;
		break;
	}
	case 2: {   /* near a rounding boundary: k + m/1e6 + 0.5e-6 (+-) */
		double k = (double)((r >> 8) % 100000), m = (double)(rnd() % 1000000);
		v = k + m / 1e6 + 0.5e-6 + ((double)(int)(rnd() % 9) - 4) * 1e-13 * (k + 1);
		break;
	}
	case 3:   /* a power of ten, or one ulp either side */
		e = (int)((r >> 8) % 40) - 20;
		v = pow(10, e);
		v = (r >> 40) & 1 ? nextafter(v, 0) : (r >> 41) & 1 ? nextafter(v, 1e300) : v;
		break;
	case 4: {   /* any bit pattern: NaN, inf, subnormals, huge */
		uint64_t bits = rnd();
		memcpy(&v, &bits, sizeof v);
		break;
	}
	case 5:   /* milliseconds */
		v = (double)((r >> 8) % 100000000) / 1e6;
		break;
	case 6:   /* a few decimals */
		v = (double)((r >> 8) % 100000) / (double)(1 + rnd() % 1000);
		break;
	default:
		e = (int)((r >> 8) % 70) - 30;
		v = ldexp((double)(rnd() >> 11) / 9007199254740992.0, e * 3);
		break;
	}
	if ((r >> 60) & 1)
		v = -v;
	return v;
}

static void reals(void **state)
{
	static const double special[] = { NAN, -NAN, INFINITY, -INFINITY };
	struct sa_real_cache c;
	long i;
	size_t k;

	(void)state;
	memset(&c, 0, sizeof c);
	for (k = 0; k < sizeof special / sizeof special[0]; k++) {
		SAME(64, ref_real(o_, special[k]), sa_linebuf_real(o_, special[k]));
		SAME(64, ref_real(o_, special[k]), sa_linebuf_real_cached(o_, special[k], &c));
	}
	for (i = 0; i < 2000000; i++) {
		double v = some_real();
		int room = i % 16 == 0 ? (int)(rnd() % 30) : 64;

		SAME(room, ref_real(o_, v), sa_linebuf_real(o_, v));
		SAME(room, ref_real(o_, v), sa_linebuf_real_cached(o_, v, &c));
	}
}

/* Every microsecond of a second, exactly: all of the fraction's texts. */
static void every_microsecond(void **state)
{
	static const double base[] = { 0, 7, 1796119764 };
	struct sa_real_cache c;
	size_t b;
	long f;

	(void)state;
	memset(&c, 0, sizeof c);
	for (b = 0; b < sizeof base / sizeof base[0]; b++)
		for (f = 0; f < 1000000; f++) {
			double v = base[b] + (double)f / 1e6;
			SAME(64, ref_real(o_, v), sa_linebuf_real(o_, v));
			SAME(64, ref_real(o_, v), sa_linebuf_real_cached(o_, v, &c));
		}
}

/* A timestamp's cache across seconds, and one a handler rewrote. */
static void ts_cache(void **state)
{
	struct sa_real_cache c;
	double t = 1796119764.0;
	long i;

	(void)state;
	memset(&c, 0, sizeof c);
	for (i = 0; i < 1000000; i++) {
		double v = t + (double)i * 0.0000137;
		SAME(64, ref_real(o_, v), sa_linebuf_real_cached(o_, v, &c));
		if (i % 1000 == 7) {   /* as if a handler left its second half written */
			memcpy(c.s, "99", 2);
			c.seq++;
			c.len = 0;
		}
	}
}

/* A duration in ns as ms (sa_linebuf_ms_ns) against the double it replaced:
 * every ns to 2e7, then at random over every magnitude, and at the edge of
 * its integer path (1e15 ns). */
static void ms_from_ns(void **state)
{
	static const uint64_t edge[] = {
		999999999999999ull, 1000000000000000ull, 1000000000000001ull, 9007199254740992ull,
		UINT64_MAX, UINT64_MAX - 1, 1ull << 63,
	};
	uint64_t ns;
	size_t k;
	long i;

	(void)state;
	for (ns = 0; ns < 20000000; ns++)
		SAME(64, ref_real(o_, (double)ns / 1e6), sa_linebuf_ms_ns(o_, ns));
	for (k = 0; k < sizeof edge / sizeof edge[0]; k++)
		for (ns = edge[k] - 3; ns != edge[k] + 3; ns++)
			SAME(64, ref_real(o_, (double)ns / 1e6), sa_linebuf_ms_ns(o_, ns));
	for (i = 0; i < 3000000; i++) {
		uint64_t r = rnd();
		int room = i % 16 == 0 ? (int)(rnd() % 30) : 64;

		ns = rnd() >> (r % 64);
		SAME(room, ref_real(o_, (double)ns / 1e6), sa_linebuf_ms_ns(o_, ns));
	}
}

/* The line's ts from integers (sa_linebuf_ts_cached) against the double
 * sa_now_wall() makes: every microsecond of some seconds (the year 2026,
 * the last second before 2^31 and before 2^32, past 2^32), then random
 * seconds, with the cache carried across and rooms too small. */
static void ts_from_ints(void **state)
{
	static const uint64_t secs[] = { 1, 9, 1796119764, 2147483647, 4294967295ull, 4294967296ull };
	struct sa_real_cache ca, cb;
	size_t k;
	long i;
	uint32_t us;

	(void)state;
	memset(&ca, 0, sizeof ca);
	memset(&cb, 0, sizeof cb);
	for (k = 0; k < sizeof secs / sizeof secs[0]; k++)
		for (us = 0; us < 1000000; us++) {
			double v = (double)secs[k] + (double)us / 1e6;

			SAME(64, ref_real(o_, v), sa_linebuf_ts_cached(o_, v, secs[k], us, &cb));
			SAME(64, ref_real(o_, v), sa_linebuf_ts_fast(o_, v, secs[k], us, &cb));
		}
	for (i = 0; i < 3000000; i++) {
		uint64_t r = rnd(), sec = r % 8 == 0 ? rnd() % 100000000000ull : 1700000000 + (r >> 8) % 600000000;
		int room = i % 16 == 0 ? (int)(rnd() % 40) : 64;
		double v;

		us = (uint32_t)(rnd() % 1000000);
		v = (double)sec + (double)us / 1e6;
		SAME(room, sa_linebuf_real_cached(o_, v, &ca), sa_linebuf_ts_cached(o_, v, sec, us, &cb));
		SAME(room, ref_real(o_, v), sa_linebuf_ts_cached(o_, v, sec, us, &cb));
		SAME(room, ref_real(o_, v), sa_linebuf_ts_fast(o_, v, sec, us, &cb));
		if (i % 1000 == 7) {   /* as if a handler left its second half written */
			memcpy(cb.s, "99", 2);
			cb.seq++;
			cb.len = 0;
		}
	}
}

/* ---- integers ----------------------------------------------------------- */

static long long some_int(void)
{
	static const long long edge[] = {
		0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 65535, 65536, 4294967295LL, 4294967296LL,
		-1, -9, -10, -99, -100, 9223372036854775807LL, -9223372036854775807LL - 1,
	};
	uint64_t r = rnd();
	long long v, p10 = 1;
	int e;

	switch (r % 6) {
	case 0:
		return edge[(r >> 8) % (sizeof edge / sizeof edge[0])];
	case 1:
		return (long long)((r >> 8) % 130) - 10;   /* around the inline range */
	case 2:   /* a power of ten, +-1 */
		for (e = (int)((r >> 8) % 19); e > 0; e--)
			p10 *= 10;
		return p10 + (long long)((r >> 16) % 3) - 1;
	case 3:
		return (long long)rnd();
	case 4:
		return (long long)((r >> 8) % 100000);
	default:
		v = (long long)(rnd() >> ((r >> 8) % 64));
		return (r >> 20) & 1 ? -v : v;
	}
}

/* sa_line_int (0..99 inline) against the old writer, with ",\"k\":". */
static void ints(void **state)
{
	static struct sa_line L;
	long i;

	(void)state;
	for (i = 0; i < 2000000; i++) {
		long long v = some_int();
		int room = i % 8 == 0 ? (int)(rnd() % 30) : 64;
		char want[64];
		struct sa_linebuf w = { want, want + room };
		int r = sa_linebuf_put(&w, ",\"k\":", 5) || ref_int(&w, v);

		L.o.p = L.buf;
		L.o.end = L.buf + room;
		L.over = 0;
		sa_line_int(&L, "k", v);
		if (r != L.over || (!r && (w.p - want != L.o.p - L.buf || memcmp(want, L.buf, (size_t)(w.p - want))))) {
			print_error("int %lld room %d: %.*s | %.*s\n", v, room, (int)(w.p - want), want,
				    (int)(L.o.p - L.buf), L.buf);
			fail();
		}
	}
}

/* ---- IPv4 addresses ----------------------------------------------------- */

static void ipv4(void **state)
{
	static const uint16_t ports[] = { 0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 65535 };
	static const unsigned char octs[] = { 0, 1, 9, 10, 99, 100, 199, 255 };
	struct sockaddr_in in = { .sin_family = AF_INET };
	long i;

	(void)state;
	ref_octets_init();
	for (i = 0; i < 1500000; i++) {
		uint64_t r = rnd();
		socklen_t len = sizeof in;
		int room = i % 8 == 0 ? (int)(rnd() % 40) : 64;
		unsigned char *a = (unsigned char *)&in.sin_addr;
		char x[SA_ADDR_TEXT_MAX], y[SA_ADDR_TEXT_MAX], h[INET_ADDRSTRLEN + 8];
		int k, nx, ny;

		if (r & 1) {
			for (k = 0; k < 4; k++)
				a[k] = octs[(r >> (8 + 3 * k)) % sizeof octs];
			in.sin_port = htons(ports[(r >> 24) % (sizeof ports / sizeof ports[0])]);
		} else {
			memcpy(a, &r, 4);
			in.sin_port = (uint16_t)(r >> 40);
		}
		if (i % 64 == 1)
			len = sizeof in - 1;   /* too short: null */
		nx = ref_addr_text((struct sockaddr *)&in, len, x, sizeof x);
		ny = sa_addr_text((struct sockaddr *)&in, len, y, sizeof y);
		assert_int_equal(nx, ny);
		if (nx > 0) {
			assert_memory_equal(x, y, (size_t)nx);
			inet_ntop(AF_INET, &in.sin_addr, h, sizeof h);
			snprintf(h + strlen(h), 8, ":%u", ntohs(in.sin_port));
			assert_int_equal(nx, (int)strlen(h));
			assert_memory_equal(x, h, (size_t)nx);
		}
		SAME(room, ref_out_addr(o_, (struct sockaddr *)&in, len),
		     sa_linebuf_addr(o_, (struct sockaddr *)&in, len));
		/* Again from the thread's last address (json.c's last4), on
		 * another port now and then. */
		if (i % 3 == 0)
			in.sin_port = (uint16_t)(in.sin_port + 1);
		SAME(room, ref_out_addr(o_, (struct sockaddr *)&in, len),
		     sa_linebuf_addr(o_, (struct sockaddr *)&in, len));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reals),
		cmocka_unit_test(every_microsecond),
		cmocka_unit_test(ts_cache),
		cmocka_unit_test(ms_from_ns),
		cmocka_unit_test(ts_from_ints),
		cmocka_unit_test(ints),
		cmocka_unit_test(ipv4),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
