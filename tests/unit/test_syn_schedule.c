/* Unit tests for common/syn_schedule.h: the kernel's SYN and SYN-ACK
 * retransmission times, the TCP_DEFER_ACCEPT window, the schedule text and
 * the plural helper, and a connect message built from a non-default kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "audit/connect.h"
#include "syn_schedule.h"

static void syn_linear_default(void **state)
{
	/* ip-sysctl.rst: with tcp_syn_linear_timeouts=4, RTOs 1,1,1,1,1,2,4...;
	 * the 10th (6 + 4) retransmission at 67 s, failure at 131 s. */
	static const long want[] = { 1000, 2000, 3000, 4000, 5000, 7000, 11000, 19000, 35000, 67000 };
	int i;

	assert_int_equal(sa_syn_retrans_at_ms(0, 4, 120000), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(sa_syn_retrans_at_ms(i + 1, 4, 120000), want[i]);
	assert_int_equal(sa_syn_give_up_ms(4, 6, 120000), 131000);
}

static void syn_before_6_5(void **state)
{
	/* No linear phase: 1, 3, 7, 15, 31, 63 s and failure at 127 s. */
	assert_int_equal(sa_syn_retrans_at_ms(1, 0, 120000), 1000);
	assert_int_equal(sa_syn_retrans_at_ms(3, 0, 120000), 7000);
	assert_int_equal(sa_syn_retrans_at_ms(6, 0, 120000), 63000);
	assert_int_equal(sa_syn_give_up_ms(0, 6, 120000), 127000);
}

static void syn_rto_max(void **state)
{
	/* TCP_RTO_MAX_MS=1000 keeps every interval at 1 s; 3000 caps at 3 s. */
	assert_int_equal(sa_syn_retrans_at_ms(10, 4, 1000), 10000);
	assert_int_equal(sa_syn_retrans_at_ms(7, 4, 3000), 5000 + 2000 + 3000);
	/* Below the kernel's minimum: treated as the default. */
	assert_int_equal(sa_syn_retrans_at_ms(7, 4, 10), 11000);
}

static void synack_and_defer(void **state)
{
	assert_int_equal(sa_synack_retrans_at_ms(1, 120000), 1000);
	assert_int_equal(sa_synack_retrans_at_ms(3, 120000), 7000);
	/* The getsockopt table: R=3 -> 7 s, R=8 -> 247 s. */
	assert_int_equal(sa_defer_window_ms(3, 120000), 7000);
	assert_int_equal(sa_defer_window_ms(8, 120000), 247000);
	/* A 6.19+ listener with TCP_RTO_MAX_MS=1000 waits 3 s for R=3. */
	assert_int_equal(sa_defer_window_ms(3, 1000), 3000);
}

static void defer_real_window(void **state)
{
	char b[300], s[24];

	/* Before 6.19 the listener's cap does not apply: the reported seconds. */
	assert_int_equal(sa_defer_real_ms(3, 1000, 0), 7000);
	assert_int_equal(sa_defer_real_ms(3, 120000, 1), 7000);
	assert_int_equal(sa_defer_real_ms(3, 1000, 1), 3000);
	assert_int_equal(sa_defer_real_ms(4, 2500, 1), 1000 + 2000 + 2500 + 2500);
	assert_string_equal(sa_secs_str(s, sizeof s, 3000), "3");
	assert_string_equal(sa_secs_str(s, sizeof s, 8000 - 500), "7.5");
	/* Equal, unknown (0) or no deferral: nothing to add. */
	assert_string_equal(sa_defer_note(b, sizeof b, 7, 7000, 120000), "");
	assert_string_equal(sa_defer_note(b, sizeof b, 7, 0, 1000), "");
	assert_string_equal(sa_defer_note(b, sizeof b, 0, 3000, 1000), "");
	sa_defer_note(b, sizeof b, 7, 3000, 1000);
	assert_string_equal(b, " The window really lasts 3 s (TCP_RTO_MAX_MS 1000).");
	sa_defer_note(b, sizeof b, 15, 7500, 2500);
	assert_non_null(strstr(b, "really lasts 7.5 s (TCP_RTO_MAX_MS 2500)"));
	/* Cut to the buffer, still terminated. */
	{
		volatile size_t small = 10;   /* not a constant: the cut is the point */

		sa_defer_note(b, small, 7, 3000, 1000);
	}
	assert_int_equal(strlen(b), 9);
}

static void schedule_text(void **state)
{
	char b[64];

	assert_string_equal(sa_syn_schedule_str(b, sizeof b, 3, 4, 120000), "1, 2, 3 s");
	assert_string_equal(sa_syn_schedule_str(b, sizeof b, 7, 4, 120000), "1, 2, 3, 4, 5, 7, 11 s");
	assert_string_equal(sa_syn_schedule_str(b, sizeof b, 3, 0, 120000), "1, 3, 7 s");
	assert_string_equal(sa_syn_schedule_str(b, 8, 7, 4, 120000), "1, 2, 3");   /* truncated, terminated */
}

static void plurals(void **state)
{
	assert_string_equal(sa_plural(1, "connection", "connections"), "connection");
	assert_string_equal(sa_plural(0, "connection", "connections"), "connections");
	assert_string_equal(sa_plural(2, "connection", "connections"), "connections");
}

static void connect_message_uses_kernel(void **state)
{
	struct sa_syn_sched k = SA_SYN_SCHED_DEFAULTS;
	struct sa_findings f;

	k.linear = 0;   /* a 6.1 kernel */
	k.syn_retries = 3;
	memset(&f, 0, sizeof f);
	sa_conn_findings(&f, SA_CONN_OK, 3010, 2, 0, 500, 0, &k);
	/* Resends at 1 and 3 s (not 1 and 2): 3 s of the wait were timeouts. */
	assert_non_null(strstr(f.msg, "completed after 3010 ms, 3.0 s of it in SYN timeouts"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(syn_linear_default),
		cmocka_unit_test(syn_before_6_5),
		cmocka_unit_test(syn_rto_max),
		cmocka_unit_test(synack_and_defer),
		cmocka_unit_test(defer_real_window),
		cmocka_unit_test(schedule_text),
		cmocka_unit_test(plurals),
		cmocka_unit_test(connect_message_uses_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
