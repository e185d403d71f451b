/* Unit test for shim/state/hist.c: the libm-free bucket agrees
 * with log(ms / 0.001) / log(1.04) + 1, but at a boundary by one bucket. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <string.h>
#include <sys/mman.h>

#include "core/core.h"

static int ref(double ms)
{
	int b;

	if (ms < 0.001)
		return 0;
	b = (int)(log(ms / 0.001) / log(1.04)) + 1;
	return b >= SA_HIST_BUCKETS ? SA_HIST_BUCKETS - 1 : b;
}

static void bucket_matches_libm(void **state)
{
	long i, diff = 0;
	unsigned seed = 1;

	for (i = 0; i < 1000000; i++) {
		double ms = exp((rand_r(&seed) / (double)RAND_MAX) * 30 - 8);
		int a = ref(ms), b = sa_hist_bucket(ms);
		if (a != b)
			diff++;
		if (abs(a - b) > 1)
			fail_msg("%g ms: bucket %d, libm says %d", ms, b, a);
	}
	assert_true(diff < 100);   /* 1 in 10,000 at most, at boundaries */
	assert_int_equal(sa_hist_bucket(0), 0);
	assert_int_equal(sa_hist_bucket(0.0009), 0);
	assert_int_equal(sa_hist_bucket(0.001), 1);
	assert_int_equal(sa_hist_bucket(1e300), SA_HIST_BUCKETS - 1);
	assert_int_equal(sa_hist_bucket(INFINITY), SA_HIST_BUCKETS - 1);
}

/* The shim loads no libm: its tables (hist_tables.h) and sa_round must be
 * libm's values, bit for bit. */
#include "state/hist_tables.h"
static void tables_are_libm(void **state)
{
	int i;
	unsigned seed = 7;

	for (i = 0; i <= 256; i++)
		assert_true(l2tab[i] == log2(1.0 + i / 256.0));
	for (i = 0; i < (int)(sizeof ratio_pow / sizeof ratio_pow[0]); i++)
		assert_true(ratio_pow[i] == pow(1.04, i));
	assert_int_equal(sizeof ratio_pow / sizeof ratio_pow[0], SA_HIST_BUCKETS - 1);
	{
		static const double edge[] = { 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994,
					       -0.49999999999999994, 4503599627370495.5, 4503599627370496.0,
					       -4503599627370495.5, 1e300, -1e300, INFINITY, -INFINITY };
		for (i = 0; i < (int)(sizeof edge / sizeof edge[0]); i++) {
			double a = sa_round(edge[i]), b = round(edge[i]);
			assert_true(a == b && signbit(a) == signbit(b));
		}
		assert_true(isnan(sa_round(NAN)));
	}
	for (i = 0; i < 1000000; i++) {
		double x = (rand_r(&seed) / (double)RAND_MAX - 0.5) * 2e6 / (1 + rand_r(&seed) % 1000);
		double a = sa_round(x * 1000.0), b = round(x * 1000.0);

		if (!(a == b && signbit(a) == signbit(b)))
			fail_msg("sa_round(%.17g) = %.17g, round says %.17g", x * 1000.0, a, b);
	}
}

static void percentiles_unchanged(void **state)
{
	static struct sa_hist h;
	int i;

	for (i = 1; i <= 1000; i++)
		sa_hist_add(&h, i);   /* 1 .. 1000 ms */
	assert_true(fabs(sa_hist_pct(&h, 50) - 500) / 500 < 0.05);
	assert_true(fabs(sa_hist_pct(&h, 99) - 990) / 990 < 0.05);
	assert_true(sa_hist_max(&h) == 1000);
}

/* SYN-retry connects take 7, 15, 31 s, quiet listeners wait minutes: the
 * range reaches past an hour at the same 4 % (a percentile within 2 % of
 * the value), and beyond it a percentile is the max, never a bucket's
 * edge below the values. */
static void percentiles_reach_an_hour(void **state)
{
	static const double v[] = { 0.05, 3.0, 1000, 6135, 7115.569, 15000, 31000, 63000, 600000, 3600000, 6000000 };
	static struct sa_hist h;
	static uint64_t tail[SA_HIST_TAIL];
	unsigned i;

	h.tail = tail;
	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		sa_hist_reset(&h);
		sa_hist_add(&h, v[i]);
		if (fabs(sa_hist_pct(&h, 50) - v[i]) / v[i] > 0.021)
			fail_msg("p50 of %.3f ms alone: %.3f", v[i], sa_hist_pct(&h, 50));
		sa_hist_reset(&h);
		sa_hist_add_ns(&h, (uint64_t)(v[i] * 1e6));
		if (fabs(sa_hist_pct(&h, 95) - v[i]) / v[i] > 0.021)
			fail_msg("p95 of %.3f ms alone (ns path): %.3f", v[i], sa_hist_pct(&h, 95));
	}
	/* Beyond the last bucket: the max, not the bucket's start. */
	sa_hist_reset(&h);
	sa_hist_add(&h, 2e7);
	assert_true(sa_hist_pct(&h, 50) == 2e7);
	/* One slow connect among fast ones: p95 is still the fast ones, max
	 * the slow one; two of two slow: p95 within 2 %. */
	sa_hist_reset(&h);
	sa_hist_add(&h, 7115.569);
	sa_hist_add(&h, 7900);
	assert_true(fabs(sa_hist_pct(&h, 95) - 7900) / 7900 < 0.021);
	/* Two long ones apart: each percentile in its own bucket (the tail
	 * is separate buckets, not one clamp). */
	sa_hist_reset(&h);
	assert_true(h.tail == tail);
	sa_hist_add(&h, 7115.569);
	sa_hist_add(&h, 3600000);
	assert_true(fabs(sa_hist_pct(&h, 50) - 7115.569) / 7115.569 < 0.021);
	assert_true(fabs(sa_hist_pct(&h, 99) - 3600000) / 3600000 < 0.021);
}

static int by_ms(uint64_t ns)
{
	return sa_hist_bucket((double)ns / 1e6);
}

static void check_ns(uint64_t ns)
{
	int a = by_ms(ns), b = sa_hist_bucket_ns(ns);

	if (a != b)
		fail_msg("%llu ns: table says bucket %d, sa_hist_bucket %d", (unsigned long long)ns, b, a);
}

static void check_around(uint64_t ns, uint64_t r)
{
	uint64_t lo = ns > r ? ns - r : 0, hi = ns < UINT64_MAX - r ? ns + r : UINT64_MAX, i;

	for (i = lo;; i++) {
		check_ns(i);
		if (i == hi)
			break;
	}
}

/* sa_hist_bucket is monotone over whole nanoseconds: within one cell of
 * its log2 table (x = ms * 1000 with the same exponent and top 8 mantissa
 * bits) every step it takes is monotone, so only where x crosses from one
 * cell to the next can it go back. Checked there, near each such x, up to
 * where every bucket is the last. With that, a table of per-cell thresholds
 * that agrees at each threshold +-1 and at each cell's ends agrees
 * everywhere. */
static void bucket_monotone_in_ns(void **state)
{
	int e, i, prev;
	uint64_t ns, c;

	for (e = 0; e < 34; e++)
		for (i = 0; i < 256; i++) {
			c = (uint64_t)(ldexp(1.0 + i / 256.0, e) * 1000.0);
			prev = -1;
			for (ns = c > 64 ? c - 64 : 0; ns <= c + 64; ns++) {
				int b = by_ms(ns);

				if (b < prev)
					fail_msg("not monotone at %llu ns", (unsigned long long)ns);
				prev = b;
			}
		}
	assert_int_equal(by_ms(1ull << 43), SA_HIST_BUCKETS - 1);
}

/* The accept path's table agrees with sa_hist_bucket(ns / 1e6) for every
 * ns: exhaustively below 2^22 (4 ms), at every bucket boundary +-2, at both
 * ends of every table cell +-1, at UINT64_MAX, and at 4 million random
 * values spread over every power of two. */
static void bucket_ns_identical(void **state)
{
	uint64_t ns, lo, hi, mid;
	unsigned seed = 7;
	int k, p, j;
	long i;

	for (ns = 0; ns < (1ull << 22); ns++)
		check_ns(ns);
	for (k = 1; k < SA_HIST_BUCKETS; k++) {
		/* the first ns in bucket k or above */
		lo = 0;
		hi = 1ull << 43;
		while (hi - lo > 1) {
			mid = lo + (hi - lo) / 2;
			if (by_ms(mid) >= k)
				hi = mid;
			else
				lo = mid;
		}
		assert_int_equal(by_ms(hi), k);
		check_around(hi, 2);
	}
	for (p = 5; p < 64; p++)
		for (j = 0; j < 32; j++) {
			uint64_t first = (1ull << p) | ((uint64_t)j << (p - 5));
			uint64_t last = first + ((1ull << (p - 5)) - 1);

			check_around(first, 1);
			check_around(last, 1);
		}
	check_ns(UINT64_MAX);
	sa_hist_ns_prepare();   /* the table filled at once says the same */
	for (ns = 0; ns < (1ull << 20); ns++)
		check_ns(ns);
	for (i = 0; i < 4000000; i++) {
		p = rand_r(&seed) % 64;
		ns = ((uint64_t)rand_r(&seed) << 33) ^ ((uint64_t)rand_r(&seed) << 11) ^ (uint64_t)rand_r(&seed);
		ns = p == 63 ? ns : ns & ((2ull << p) - 1);
		check_ns(ns);
	}
}

static void add_ns_same_as_add(void **state)
{
	static struct sa_hist a, b;
	unsigned seed = 3;
	int i;

	for (i = 0; i < 100000; i++) {
		uint64_t ns = (uint64_t)rand_r(&seed) * (uint64_t)(rand_r(&seed) % 4096);

		sa_hist_add(&a, (double)ns / 1e6);
		sa_hist_add_ns(&b, ns);
	}
	/* What they hold (max_ns is add_ns's own shortcut, not a result). */
	assert_true(a.n == b.n);
	assert_true(a.max_bits == b.max_bits);
	assert_true(sa_hist_max(&a) == sa_hist_max(&b));
	assert_memory_equal(a.b, b.b, sizeof a.b);
}

/* sa_hist_reset and the child's resets (sa_zero): every size and every
 * position of one stray byte is cleared, and memory that is all zero is
 * not written: here it is a read-only page, where a write would crash. */
static void zero_clears_and_never_writes_zeros(void **state)
{
	unsigned char *ro, buf[300];
	size_t n, at;

	(void)state;
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(ro != MAP_FAILED);
	for (n = 0; n <= 256; n++)
		sa_zero(ro + 4096 - n, n);           /* all zero: only read */
	sa_zero(ro + 3, 4000);                     /* unaligned */
	munmap(ro, 4096);
	for (n = 1; n <= 200; n++)
		for (at = 0; at < n; at++) {
			memset(buf, 0, sizeof buf);
			buf[1 + at] = 0x80;
			buf[0] = buf[1 + n] = 7;           /* outside: untouched */
			sa_zero(buf + 1, n);
			assert_int_equal(buf[1 + at], 0);
			assert_int_equal(buf[0], 7);
			assert_int_equal(buf[1 + n], 7);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bucket_matches_libm),
		cmocka_unit_test(tables_are_libm),
		cmocka_unit_test(percentiles_unchanged),
		cmocka_unit_test(percentiles_reach_an_hour),
		cmocka_unit_test(bucket_monotone_in_ns),
		cmocka_unit_test(bucket_ns_identical),
		cmocka_unit_test(add_ns_same_as_add),
		cmocka_unit_test(zero_clears_and_never_writes_zeros),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
