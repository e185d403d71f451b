/* Unit test for shim/state/hist.c: the libm-free bucket (issue 17) agrees
 * with log(ms / 0.001) / log(1.04) + 1, but at a boundary by one bucket. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bucket_matches_libm),
		cmocka_unit_test(percentiles_unchanged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
