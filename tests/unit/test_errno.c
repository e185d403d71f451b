/* shim/line/json.c's errno names: the library carries its own table (glibc
 * 2.17 and musl have no strerrorname_np); on this glibc it must spell every
 * number as strerrorname_np does, and an unknown one as E<number>. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/core.h"

static void same_as_glibc(void **state)
{
	char buf[SA_ERRNO_NAME_MAX], want[32];
	int e;

	(void)state;
	for (e = -3; e < 300; e++) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
		const char *g = e >= 0 ? strerrorname_np(e) : NULL;

		if (g)
			snprintf(want, sizeof want, "%s", g);
		else
#endif
			snprintf(want, sizeof want, "E%d", e);
		assert_string_equal(sa_errno_name(e, buf), want);
	}
	assert_string_equal(sa_errno_name(ECONNREFUSED, buf), "ECONNREFUSED");
	assert_string_equal(sa_errno_name(EAGAIN, buf), "EAGAIN");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_as_glibc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
