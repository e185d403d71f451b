/* Unit test for shim/base/clock.c: the shim's clocks come from the vDSO
 * (found from AT_SYSINFO_EHDR) and agree with libc's clock_gettime;
 * tests/integration/life_clock.sh shows a later preload cannot fake them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <sys/auxv.h>
#include <time.h>

#include "core/core.h"

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void vdso_found_and_agrees(void **state)
{
	static const clockid_t ids[] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_MONOTONIC_COARSE };
	struct timespec a, b, c;
	unsigned i;

	/* Valgrind hides the vDSO: the system call is the fallback there. */
	if (getauxval(AT_SYSINFO_EHDR) != 0)
		assert_int_equal(sa_clock_is_vdso(), 1);
	for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		clock_gettime(ids[i], &a);
		sa_clock(ids[i], &b);
		clock_gettime(ids[i], &c);
		/* b between a and c, give or take a coarse tick. */
		if (ns_of(&b) < ns_of(&a) - 20000000 || ns_of(&b) > ns_of(&c) + 20000000)
			fail_msg("clock %d: shim %lld not within libc's %lld..%lld", (int)ids[i],
				 (long long)ns_of(&b), (long long)ns_of(&a), (long long)ns_of(&c));
	}
	/* A clock the vDSO does not serve in user space still reads. */
	sa_clock(CLOCK_PROCESS_CPUTIME_ID, &b);
	assert_true(ns_of(&b) > 0);
}

static void now_ns_monotonic(void **state)
{
	uint64_t prev = sa_now_ns(), t;
	int i;

	for (i = 0; i < 100000; i++) {
		t = sa_now_ns();
		assert_true(t >= prev);
		prev = t;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vdso_found_and_agrees),
		cmocka_unit_test(now_ns_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
