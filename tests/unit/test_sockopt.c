/* Unit tests for shim/sockopt.c: the TCP_DEFER_ACCEPT rounding table
 * measured in the reference study, option names and value decoders. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/time.h>

#include "core/core.h"

static void defer_rounding_matches_study(void **state)
{
	/* write -> read table from tcp_defer_accept_write10_read15.txt */
	static const int table[][2] = {
		{ 1, 1 }, { 2, 3 }, { 3, 3 }, { 4, 7 }, { 7, 7 }, { 10, 15 }, { 15, 15 },
		{ 30, 31 }, { 60, 63 }, { 128, 247 }, { 300, 367 }, { 3600, 3607 },
		{ 0, 0 }, { -1, 0 }, { -100, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof table / sizeof table[0]; i++) {
		int got = sa_defer_secs(sa_defer_rounds(table[i][0]));
		if (got != table[i][1])
			fail_msg("TCP_DEFER_ACCEPT %d: expected %d, got %d", table[i][0], table[i][1], got);
	}
	assert_int_equal(sa_defer_rounds(10), 4);
	assert_int_equal(sa_defer_rounds(1), 1);
	assert_int_equal(sa_defer_rounds(0), 0);
	/* Saturates at 255 rounds like the kernel's u8. */
	assert_int_equal(sa_defer_rounds(1 << 30), 255);
	assert_int_equal(sa_defer_secs(255), 29887);
}

static void names_of_common_options(void **state)
{
	const struct sa_optdesc *d = sa_opt_lookup(IPPROTO_TCP, TCP_DEFER_ACCEPT);

	assert_non_null(d);
	assert_string_equal(d->name, "TCP_DEFER_ACCEPT");
	assert_string_equal(sa_opt_lookup(SOL_SOCKET, SO_RCVBUF)->name, "SO_RCVBUF");
	assert_string_equal(sa_opt_lookup(IPPROTO_IP, IP_TOS)->name, "IP_TOS");
	assert_string_equal(sa_opt_lookup(IPPROTO_IPV6, IPV6_V6ONLY)->name, "IPV6_V6ONLY");
	assert_int_equal(sa_opt_lookup(SOL_SOCKET, SO_LINGER)->kind, SA_OPT_LINGER);
	assert_int_equal(sa_opt_lookup(IPPROTO_TCP, TCP_CONGESTION)->kind, SA_OPT_STRING);
	assert_null(sa_opt_lookup(12345, 1));
	assert_string_equal(sa_sol_name(SOL_SOCKET), "SOL_SOCKET");
	assert_null(sa_sol_name(9999));
}

/* sa_optval_write's JSON, parsed back for the checks. */
static json_t *decode(enum sa_optkind k, const void *buf, socklen_t len)
{
	char out[512];
	struct sa_out o = { out, out + sizeof out };
	json_error_t e;
	json_t *j;

	assert_int_equal(sa_optval_write(&o, k, buf, len), 0);
	j = json_loadb(out, (size_t)(o.p - out), JSON_DECODE_ANY, &e);
	assert_non_null(j);
	return j;
}

static void decode_int_and_short(void **state)
{
	int v = 42;
	unsigned char c = 7;
	json_t *j;

	j = decode(SA_OPT_INT, &v, sizeof v);
	assert_int_equal(json_integer_value(j), 42);
	json_decref(j);
	/* A one-byte value (IPPROTO_IP accepts them) reads only that byte. */
	j = decode(SA_OPT_INT, &c, 1);
	assert_int_equal(json_integer_value(j), 7);
	json_decref(j);
	j = decode(SA_OPT_INT, NULL, 4);
	assert_true(json_is_null(j));
	j = decode(SA_OPT_INT, &v, 0);
	assert_true(json_is_null(j));
}

static void decode_structs_need_full_length(void **state)
{
	struct linger l = { 1, 30 };
	struct timeval tv = { 2, 500000 };
	json_t *j;

	j = decode(SA_OPT_LINGER, &l, sizeof l);
	assert_int_equal(json_integer_value(json_object_get(j, "onoff")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "linger")), 30);
	json_decref(j);
	j = decode(SA_OPT_LINGER, &l, sizeof l - 1);
	assert_true(json_is_null(j));
	j = decode(SA_OPT_TIMEVAL, &tv, sizeof tv);
	assert_int_equal(json_integer_value(json_object_get(j, "sec")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "usec")), 500000);
	json_decref(j);
	j = decode(SA_OPT_TIMEVAL, &tv, 8);
	assert_true(json_is_null(j));
}

static void decode_string_stays_within_optlen(void **state)
{
	/* No terminating NUL inside optlen: the decoder must stop at optlen.
	 * The buffer is exactly 4 bytes on the heap so ASan would catch an
	 * overread. */
	char *b = malloc(4);
	json_t *j;

	memcpy(b, "reno", 4);
	j = decode(SA_OPT_STRING, b, 4);
	assert_string_equal(json_string_value(j), "reno");
	json_decref(j);
	j = decode(SA_OPT_STRING, b, 2);
	assert_string_equal(json_string_value(j), "re");
	json_decref(j);
	free(b);
	/* Non-UTF-8 bytes are escaped, not dropped. */
	j = decode(SA_OPT_STRING, "e\xff" "0", 3);
	assert_string_equal(json_string_value(j), "e\\xff0");
	json_decref(j);
}

static void decode_opaque_reports_size(void **state)
{
	char buf[20] = { 0 };
	json_t *j = decode(SA_OPT_OPAQUE, buf, sizeof buf);

	assert_int_equal(json_integer_value(json_object_get(j, "bytes")), 20);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defer_rounding_matches_study),
		cmocka_unit_test(names_of_common_options),
		cmocka_unit_test(decode_int_and_short),
		cmocka_unit_test(decode_structs_need_full_length),
		cmocka_unit_test(decode_string_stays_within_optlen),
		cmocka_unit_test(decode_opaque_reports_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
