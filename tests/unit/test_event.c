/* Unit tests for shim/line/event.c: common fields, escaping of bytes that are
 * not UTF-8, address strings, and the 4096-byte line limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <math.h>

#include "core/core.h"

static int setup(void **state)
{
	struct sa_config c;

	memset(&c, 0, sizeof c);
	c.level = SA_LEVEL_TRACE;
	/* A program name that is not UTF-8. */
	sa_runtime_configure(&c, "bad\xc3\x28name");
	return 0;
}

static json_t *parse_line(const char *buf, int n)
{
	json_error_t e;

	assert_true(n > 0);
	assert_true(n <= SA_LINE_MAX);
	assert_int_equal(buf[n - 1], '\n');
	assert_null(memchr(buf, '\n', (size_t)n - 1));
	return json_loadb(buf, (size_t)n, 0, &e);
}

static void common_fields(void **state)
{
	char buf[SA_LINE_MAX];
	json_t *ev = sa_event_new("listen", 5), *back;
	int n;

	n = sa_event_format(ev, buf, sizeof buf);
	back = parse_line(buf, n);
	assert_non_null(back);
	assert_string_equal(json_string_value(json_object_get(back, "event")), "listen");
	assert_int_equal(json_integer_value(json_object_get(back, "schema")), 1);
	assert_int_equal(json_integer_value(json_object_get(back, "fd")), 5);
	assert_true(json_is_real(json_object_get(back, "ts")));
	assert_true(json_is_integer(json_object_get(back, "pid")));
	assert_true(json_is_integer(json_object_get(back, "tid")));
	assert_string_equal(json_string_value(json_object_get(back, "comm")), "bad\\xc3(name");
	assert_string_equal(json_string_value(json_object_get(back, "severity")), "info");
	json_decref(ev);
	json_decref(back);
}

static void escaping(void **state)
{
	json_t *j;

	j = sa_json_bytes("ok \xe2\x82\xac", 6);              /* valid euro sign */
	assert_string_equal(json_string_value(j), "ok \xe2\x82\xac");
	json_decref(j);
	j = sa_json_bytes("\xff\xfe", 2);
	assert_string_equal(json_string_value(j), "\\xff\\xfe");
	json_decref(j);
	j = sa_json_bytes("\xed\xa0\x80", 3);                 /* a surrogate */
	assert_string_equal(json_string_value(j), "\\xed\\xa0\\x80");
	json_decref(j);
	j = sa_json_bytes("\xc0\xaf", 2);                     /* overlong '/' */
	assert_string_equal(json_string_value(j), "\\xc0\\xaf");
	json_decref(j);
	j = sa_json_bytes("a\0b", 3);                         /* NUL kept */
	assert_int_equal(json_string_length(j), 3);
	json_decref(j);
	j = sa_json_bytes("\xe2\x82", 2);                     /* cut sequence */
	assert_string_equal(json_string_value(j), "\\xe2\\x82");
	json_decref(j);
}

static void addresses(void **state)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(8080) };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(443) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	json_t *j;

	inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
	j = sa_json_addr((struct sockaddr *)&in, sizeof in);
	assert_string_equal(json_string_value(j), "127.0.0.1:8080");
	json_decref(j);
	inet_pton(AF_INET6, "::1", &in6.sin6_addr);
	j = sa_json_addr((struct sockaddr *)&in6, sizeof in6);
	assert_string_equal(json_string_value(j), "[::1]:443");
	json_decref(j);
	/* Short length: no read beyond it. */
	j = sa_json_addr((struct sockaddr *)&in, 4);
	assert_true(json_is_null(j));
	/* Abstract AF_UNIX name with a non-UTF-8 byte. */
	memcpy(un.sun_path, "\0sock\xff", 6);
	j = sa_json_addr((struct sockaddr *)&un, offsetof(struct sockaddr_un, sun_path) + 6);
	assert_string_equal(json_string_value(j), "@sock\\xff");
	json_decref(j);
	memcpy(un.sun_path, "/tmp/s", 7);
	j = sa_json_addr((struct sockaddr *)&un, sizeof un);
	assert_string_equal(json_string_value(j), "/tmp/s");
	json_decref(j);
	j = sa_json_addr((struct sockaddr *)&un, sizeof(sa_family_t));
	assert_string_equal(json_string_value(j), "unnamed");
	json_decref(j);
}

static void overlong_values_fit_one_line(void **state)
{
	static char big[20000];
	char buf[SA_LINE_MAX];
	json_t *ev, *back, *arr;
	int n, i;

	memset(big, 'x', sizeof big - 1);
	ev = sa_event_new("setsockopt", 3);
	json_object_set_new(ev, "msg", json_string(big));
	arr = json_array();
	for (i = 0; i < 50; i++)
		json_array_append_new(arr, json_string(big + 19000));
	json_object_set_new(ev, "advice", arr);
	n = sa_event_format(ev, buf, sizeof buf);
	back = parse_line(buf, n);
	assert_non_null(back);
	assert_true(json_is_true(json_object_get(back, "truncated")));
	assert_string_equal(json_string_value(json_object_get(back, "event")), "setsockopt");
	json_decref(ev);
	json_decref(back);

	/* Multi-byte characters are never cut in the middle. */
	ev = sa_event_new("listen", 3);
	for (i = 0; i < 6000; i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	big[6000] = '\0';
	json_object_set_new(ev, "msg", json_string(big));
	n = sa_event_format(ev, buf, sizeof buf);
	back = parse_line(buf, n);
	assert_non_null(back);
	json_decref(ev);
	json_decref(back);
}

/* The hand-written serializer must write JSON that parses back to the
 * same values: reals at microsecond precision, every escape. */
static void serializer_round_trip(void **state)
{
	static const double reals[] = { 0.0, 1.5, -2.25, 1795979448.632113, 1017.228595, 0.000001,
					1e-9, 1e20, -0.0000004, 999999.9999996, 2.0 };
	char buf[SA_LINE_MAX];
	json_t *ev = sa_event_new("connect", 7), *back, *arr = json_array();
	size_t i;
	int n;

	for (i = 0; i < sizeof reals / sizeof reals[0]; i++)
		json_array_append_new(arr, json_real(reals[i]));
	json_object_set_new(ev, "reals", arr);
	json_object_set_new(ev, "big", json_integer(INT64_MIN));
	json_object_set_new(ev, "max", json_integer(INT64_MAX));
	json_object_set_new(ev, "esc", json_string("q\"b\\n\nt\tc\x01\x1f\x7f \xc3\xa9 /"));
	json_object_set_new(ev, "nul", json_stringn("a\0b", 3));
	json_object_set_new(ev, "flags", json_pack("[b,b,n,{}]", 1, 0));
	n = sa_event_format(ev, buf, sizeof buf);
	back = json_loadb(buf, (size_t)n, JSON_ALLOW_NUL, NULL);
	assert_non_null(back);
	arr = json_object_get(back, "reals");
	for (i = 0; i < sizeof reals / sizeof reals[0]; i++) {
		double got = json_number_value(json_array_get(arr, i)), want = reals[i];
		double tol = fabs(want) >= 1e15 ? fabs(want) * 1e-15 : (fabs(want) < 1e-6 ? 1e-15 : 1e-6);
		if (fabs(got - want) > tol)
			fail_msg("real %zu: wrote %.17g, read back %.17g", i, want, got);
	}
	/* Reals stay reals (a decimal point), so typed readers see floats. */
	assert_true(json_is_real(json_array_get(arr, 10)));
	assert_true(json_integer_value(json_object_get(back, "big")) == INT64_MIN);
	assert_true(json_integer_value(json_object_get(back, "max")) == INT64_MAX);
	assert_string_equal(json_string_value(json_object_get(back, "esc")), "q\"b\\n\nt\tc\x01\x1f\x7f \xc3\xa9 /");
	assert_int_equal(json_string_length(json_object_get(back, "nul")), 3);
	assert_true(json_equal(json_object_get(back, "flags"), json_object_get(ev, "flags")));
	assert_string_equal(json_string_value(json_object_get(back, "event")), "connect");
	json_decref(ev);
	json_decref(back);
}

static void findings_accumulate(void **state)
{
	struct sa_findings f = { 0 };

	sa_findings_add(&f, "backlog_clamped", "First %d.", 1);
	sa_findings_add(&f, "backlog_clamped", "Again.");
	sa_findings_add(&f, "defer_bypass_risk", "Second.");
	assert_int_equal(f.n, 2);
	assert_string_equal(f.msg, "First 1. Again. Second.");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(common_fields),
		cmocka_unit_test(escaping),
		cmocka_unit_test(addresses),
		cmocka_unit_test(overlong_values_fit_one_line),
		cmocka_unit_test(serializer_round_trip),
		cmocka_unit_test(findings_accumulate),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
