/*
 * hist.c: latency histograms with percentiles.
 *
 * Histograms are fixed arrays of atomic counters (no allocation, no lock),
 * log-spaced at 4 % per bucket from 1 us to 103 minutes, so p50/p95/p99
 * are accurate to 2 % (a bucket's middle); max is exact, and a percentile
 * beyond the last bucket's start is the max.
 */
#include <string.h>

#include "state/state.h"

/* Bucket i covers [base * r^i, base * r^(i+1)) ms. */
#define H_BASE 0.001
#define H_RATIO 1.04

/* log2 on the per-accept path: the exponent from the bits, log2 of the
 * mantissa from a 256-step table (hist_tables.h) with linear interpolation
 * (error below 3e-6, against buckets 0.057 wide in log2). */
#include "state/hist_tables.h"

static double fast_log2(double x)   /* x >= 1, finite */
{
	uint64_t b, m;
	unsigned i;
	int e;

	memcpy(&b, &x, sizeof b);
	e = (int)((b >> 52) & 0x7ff) - 1023;
	m = b & ((1ull << 52) - 1);
	i = (unsigned)(m >> 44);
	return e + l2tab[i] + (l2tab[i + 1] - l2tab[i]) * (double)(m & ((1ull << 44) - 1)) / (double)(1ull << 44);
}

SA_FORK_TEXT int sa_hist_bucket(double ms)
{
	int b;

	if (ms < H_BASE)
		return 0;
	if (!(ms < 1e12))
		return SA_HIST_BUCKETS - 1;
	b = (int)(fast_log2(ms * (1.0 / H_BASE)) * (1.0 / 0.056583528366367)) + 1;   /* 1 / log2(1.04) */
	return b >= SA_HIST_BUCKETS ? SA_HIST_BUCKETS - 1 : b;
}

static int bucket_of(double ms)
{
	return sa_hist_bucket(ms);
}

/* The same bucket from whole nanoseconds (ms = ns / 1e6), without the
 * floating point: the accept path's wait_ms, per accept. The ns axis is
 * cut in cells of 32 per power of two (the five bits after the leading
 * one; below 32 ns the cells of 32..63 are shared, all bucket 0). A cell
 * is narrower (log2(33/32) = 0.044) than a bucket (log2(1.04) = 0.057), so
 * at most one bucket boundary falls in it. Each cell is filled on first
 * use (or by sa_hist_ns_prepare) from sa_hist_bucket itself: the bucket of
 * its first ns, and its last ns still in that bucket (found by bisection);
 * a cell where the function does not step by 0 or 1 (never seen;
 * tests/unit/test_hist.c checks every cell) keeps asking it. No heap:
 * static arrays, written with the same values by threads or handlers that
 * race, published by cell_b's release store. */
#define NS_CELLS SA_HIST_NS_CELLS
#define CELL_SLOW SA_HIST_CELL_SLOW
#define cell_last sa_hist_cell_last
#define cell_b sa_hist_cell_b
uint64_t cell_last[NS_CELLS];      /* last ns in bucket cell_b - 1 */
uint16_t cell_b[NS_CELLS];         /* bucket at the cell's first ns, + 1; 0: not filled */
#define ns_cell sa_hist_ns_cell

static int bucket_of_ns_slow(uint64_t ns)
{
	return sa_hist_bucket((double)ns / 1e6);
}

static __attribute__((noinline, cold)) int fill_cell(unsigned c, uint64_t ns)
{
	uint64_t lo, hi, mid, first, last;
	int b0, b1;
	unsigned p;

	p = (c >> 5) + 4;
	first = (1ull << p) | ((uint64_t)(c & 31) << (p - 5));
	last = first + ((1ull << (p - 5)) - 1);
	b0 = bucket_of_ns_slow(first);
	b1 = bucket_of_ns_slow(last);
	if (b1 == b0) {
		lo = last;
	} else if (b1 == b0 + 1) {
		/* bucket(lo) == b0, bucket(hi) == b1 */
		lo = first;
		hi = last;
		while (hi - lo > 1) {
			mid = lo + (hi - lo) / 2;
			if (bucket_of_ns_slow(mid) == b0)
				lo = mid;
			else
				hi = mid;
		}
	} else {
		__atomic_store_n(&cell_b[c], CELL_SLOW, __ATOMIC_RELEASE);
		return bucket_of_ns_slow(ns);
	}
	__atomic_store_n(&cell_last[c], lo, __ATOMIC_RELAXED);
	__atomic_store_n(&cell_b[c], (uint16_t)(b0 + 1), __ATOMIC_RELEASE);
	return b0 + (ns > lo);
}

static inline __attribute__((always_inline)) int bucket_of_ns(uint64_t ns)
{
	unsigned c = ns_cell(ns);
	unsigned b = __atomic_load_n(&cell_b[c], __ATOMIC_ACQUIRE);

	if (SA_LIKELY(b - 1 < CELL_SLOW - 1))
		return (int)(b - 1) + (ns > __atomic_load_n(&cell_last[c], __ATOMIC_RELAXED));
	if (b == CELL_SLOW)
		return bucket_of_ns_slow(ns);
	return fill_cell(c, ns);
}

int sa_hist_bucket_ns(uint64_t ns)
{
	return bucket_of_ns(ns);
}

void sa_hist_ns_prepare(void)
{
	unsigned c;

	for (c = 32; c < NS_CELLS; c++)
		if (!__atomic_load_n(&cell_b[c], __ATOMIC_ACQUIRE))
			fill_cell(c, 0);
}

static double bucket_mid(int b)
{
	if (b == 0)
		return 0;
	return H_BASE * ratio_pow[b - 1] * (1 + H_RATIO) / 2;   /* pow(H_RATIO, b - 1) */
}

SA_FORK_TEXT void sa_hist_add(struct sa_hist *h, double ms)
{
	uint64_t bits, old;

	if (!(ms >= 0))
		ms = 0;
	__atomic_add_fetch(&h->n, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(sa_hist_slot(h, (unsigned)bucket_of(ms)), 1, __ATOMIC_RELAXED);
	memcpy(&bits, &ms, sizeof bits);
	old = __atomic_load_n(&h->max_bits, __ATOMIC_RELAXED);
	/* Non-negative doubles order like their bit patterns. */
	while (bits > old && !__atomic_compare_exchange_n(&h->max_bits, &old, bits, 1,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void sa_hist_add_ns(struct sa_hist *h, uint64_t ns)
{
	sa_hist_add_ns_inline(h, ns);
}

double sa_hist_max(const struct sa_hist *h)
{
	uint64_t bits = __atomic_load_n(&h->max_bits, __ATOMIC_RELAXED);
	double v;

	memcpy(&v, &bits, sizeof v);
	return v;
}

double sa_hist_pct(const struct sa_hist *h, double pct)
{
	uint64_t n = __atomic_load_n(&h->n, __ATOMIC_RELAXED), seen = 0, rank;
	int i;
	double v, x, max = sa_hist_max(h);

	if (n == 0)
		return 0;
	x = pct / 100.0 * (double)n;   /* ceil(x), x >= 0 */
	rank = x > 0 ? (uint64_t)x : 0;
	if ((double)rank < x)
		rank++;
	if (rank == 0)
		rank = 1;
	for (i = 0; i < SA_HIST_BUCKETS; i++) {
		seen += __atomic_load_n(sa_hist_slot(h, (unsigned)i), __ATOMIC_RELAXED);
		if (i == SA_HIST_HOT - 1 && !h->tail) {
			/* Without a tail the last hot bucket is the open one. */
			if (seen >= rank)
				return max;
			break;
		}
		if (seen >= rank) {
			/* The last bucket has no upper end: only max says where
			 * its values lie. */
			if (i == SA_HIST_BUCKETS - 1)
				return max;
			v = bucket_mid(i);
			return v > max ? max : v;
		}
	}
	return max;
}

static json_t *round3(double v)
{
	return json_real(sa_round(v * 1000.0) / 1000.0);
}

json_t *sa_hist_json(const struct sa_hist *h)
{
	json_t *o = json_object();

	json_object_set_new(o, "n", json_integer((json_int_t)__atomic_load_n(&h->n, __ATOMIC_RELAXED)));
	json_object_set_new(o, "p50", round3(sa_hist_pct(h, 50)));
	json_object_set_new(o, "p95", round3(sa_hist_pct(h, 95)));
	json_object_set_new(o, "p99", round3(sa_hist_pct(h, 99)));
	json_object_set_new(o, "max", round3(sa_hist_max(h)));
	return o;
}

SA_FORK_TEXT void sa_hist_reset(struct sa_hist *h)
{
	sa_zero(h, offsetof(struct sa_hist, tail));
	if (h->tail)
		sa_zero(h->tail, SA_HIST_TAIL * sizeof h->tail[0]);
}
