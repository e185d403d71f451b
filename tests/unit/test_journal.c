/* Unit tests for shim/line/journal.c: a JSON line made a native journal
 * entry (every field, the repeated SOCKAUDIT_FINDING, escapes decoded, a
 * value with a newline in the binary form, PRIORITY from the line). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "line/line.h"

static char buf[8192];

/* The entry as journald would read it: the fields before SOCKAUDIT_JSON's
 * value plus the line (the sink sends both in one datagram). */
static size_t entry(const char *line)
{
	long n = sa_journal_entry(line, strlen(line), buf, sizeof buf);

	assert_true(n > 0);
	assert_true((size_t)n + strlen(line) < sizeof buf);
	memcpy(buf + n, line, strlen(line) + 1);
	return (size_t)n + strlen(line);
}

static int has(size_t n, const char *field)
{
	size_t fl = strlen(field);
	const char *p = buf;

	/* A whole field: at the start or after a newline, ending in one. */
	while ((p = memmem(p, n - (size_t)(p - buf), field, fl)) != NULL) {
		if ((p == buf || p[-1] == '\n') && p[fl] == '\n')
			return 1;
		p++;
	}
	return 0;
}

static int count(size_t n, const char *field)
{
	int c = 0;
	const char *p = buf;
	size_t fl = strlen(field);

	while ((p = memmem(p, n - (size_t)(p - buf), field, fl)) != NULL) {
		c += (p == buf || p[-1] == '\n') && p[fl] == '\n';
		p++;
	}
	return c;
}

static void test_findings_line(void **state)
{
	const char *l = "{\"ts\":1.5,\"event\":\"listen\",\"schema\":1,\"pid\":7,\"tid\":7,\"comm\":\"nginx\","
			"\"severity\":\"warn\",\"fd\":6,\"local\":\"0.0.0.0:80\",\"backlog_requested\":511,"
			"\"somaxconn\":null,\"x\":{\"a\":[1,\"}\"]},\"findings\":[\"backlog_clamped\",\"defer_rounded\"],"
			"\"msg\":\"One \\\"quoted\\\" sentence \\u00e9.\"}\n";
	size_t n = entry(l);

	(void)state;
	assert_true(has(n, "PRIORITY=4"));
	assert_true(has(n, "SYSLOG_IDENTIFIER=sockaudit"));
	assert_true(has(n, "SOCKAUDIT_EVENT=listen"));
	assert_true(has(n, "SOCKAUDIT_COMM=nginx"));
	assert_true(has(n, "SOCKAUDIT_LOCAL=0.0.0.0:80"));
	assert_true(has(n, "SOCKAUDIT_BACKLOG_REQUESTED=511"));
	assert_true(has(n, "SOCKAUDIT_FINDING=backlog_clamped"));
	assert_true(has(n, "SOCKAUDIT_FINDING=defer_rounded"));
	assert_int_equal(count(n, "SOCKAUDIT_FINDING=backlog_clamped"), 1);
	assert_true(has(n, "MESSAGE=One \"quoted\" sentence \xc3\xa9."));
	assert_null(memmem(buf, n, "SOCKAUDIT_SOMAXCONN", 19));   /* null: left out */
	assert_null(memmem(buf, n, "SOCKAUDIT_X", 11));           /* nested: in the JSON only */
	assert_null(memmem(buf, n, "SOCKAUDIT_MSG", 13));         /* it is MESSAGE */
	assert_true(memmem(buf, n, "\nSOCKAUDIT_JSON={\"ts\":1.5,", 26) != NULL);
	assert_int_equal(buf[n - 1], '\n');
}

static void test_priority_and_message(void **state)
{
	size_t n;

	(void)state;
	n = entry("{\"ts\":2,\"event\":\"connect\",\"pid\":1,\"severity\":\"info\",\"fd\":3,\"peer\":\"127.0.0.1:9\",\"connect_ms\":0.2,\"ret\":0}\n");
	assert_true(has(n, "PRIORITY=7"));
	assert_true(has(n, "MESSAGE=connect fd=3 peer=127.0.0.1:9 connect_ms=0.2 ret=0"));
	n = entry("{\"ts\":2,\"event\":\"connect\",\"pid\":1,\"severity\":\"info\",\"fd\":3,\"ret\":-1,\"errno\":\"ECONNREFUSED\"}\n");
	assert_true(has(n, "PRIORITY=6"));
	n = entry("{\"ts\":2,\"event\":\"listen\",\"pid\":1,\"severity\":\"info\",\"fd\":3}\n");
	assert_true(has(n, "PRIORITY=6"));
}

/* An AF_UNIX path may hold a newline: the binary form, length first. */
static void test_binary_value(void **state)
{
	size_t n = entry("{\"event\":\"listen\",\"local\":\"/tmp/a\\nb\",\"severity\":\"info\"}\n");
	const char want[] = "\nSOCKAUDIT_LOCAL\n\x08\0\0\0\0\0\0\0/tmp/a\nb\n";

	(void)state;
	assert_non_null(memmem(buf, n, want, sizeof want - 1));
}

/* Keys journald would refuse are made valid or left out. */
static void test_keys(void **state)
{
	size_t n = entry("{\"event\":\"x\",\"a-b.c\":1,"
			 "\"a_very_long_key_name_that_is_much_longer_than_journald_allows_xx\":2}\n");

	(void)state;
	assert_true(has(n, "SOCKAUDIT_A_B_C=1"));
	assert_null(memmem(buf, n, "SOCKAUDIT_A_VERY", 16));
}

/* Too little room: -1, never a write past the buffer. */
static void test_small_buffer(void **state)
{
	char small[64];
	const char *l = "{\"event\":\"listen\",\"msg\":\"a sentence far longer than sixty-four bytes, which cannot fit at all\"}\n";

	(void)state;
	assert_int_equal(sa_journal_entry(l, strlen(l), small, sizeof small), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_findings_line),
		cmocka_unit_test(test_priority_and_message),
		cmocka_unit_test(test_binary_value),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_small_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
