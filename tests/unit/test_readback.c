/* Unit tests for shim/kernel/readback.c and optnames.c: the judges the
 * shim's read-back audits and `sockaudit explain` share, as a table of
 * (facts -> finding code and words), and the option table by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "readback.h"
#include "syn_schedule.h"

struct said {
	int n;
	const char *code;
	char text[1024];
};

static void say(void *ctx, const char *code, const char *text)
{
	struct said *s = ctx;

	s->n++;
	s->code = code;
	snprintf(s->text, sizeof s->text, "%s", text);
}

static void int_judges(void **state)
{
	static const struct {
		struct sa_optfacts k;
		const char *code;     /* NULL: no finding */
		const char *words;
	} cases[] = {
		{ { SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF", 1000, 2000, 1, 212992, -1, 0, 0 }, "option_adjusted", "stores twice the value" },
		{ { SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF", 1000, 2000, 1, 212992, -1, 0, 0 }, "option_adjusted", "autotuning" },
		{ { SOL_SOCKET, SO_SNDBUF, "SO_SNDBUF", 1000000, 425984, 1, 212992, -1, 0, 0 }, "option_adjusted", "capped by net.core.wmem_max=212992" },
		{ { SOL_SOCKET, SO_SNDBUFFORCE, "SO_SNDBUFFORCE", 1000000, 425984, 1, 212992, -1, 0, 0 }, "option_differs", "reads back as 425984" },
		{ { SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF", 1, 2304, 1, 212992, -1, 0, 0 }, "option_adjusted", "below the kernel's minimum" },
		{ { IPPROTO_TCP, TCP_DEFER_ACCEPT, "TCP_DEFER_ACCEPT", 10, 15, 1, 0, -1, 15000, 120000 }, "defer_rounded", "4 SYN-ACK retransmission rounds" },
		{ { IPPROTO_TCP, TCP_DEFER_ACCEPT, "TCP_DEFER_ACCEPT", 10, 15, 1, 0, -1, 4000, 1000 }, "defer_rounded", "really lasts 4 s" },
		{ { IPPROTO_TCP, TCP_DEFER_ACCEPT, "TCP_DEFER_ACCEPT", -5, 0, 1, 0, -1, 0, 0 }, NULL, NULL },
		{ { IPPROTO_TCP, TCP_DEFER_ACCEPT, "TCP_DEFER_ACCEPT", 10, 7, 1, 0, -1, 0, 0 }, "option_differs", "10 reads back as 7" },
		{ { IPPROTO_TCP, TCP_FASTOPEN, "TCP_FASTOPEN", 5000, 4096, 1, 0, 4096, 0, 0 }, "option_adjusted", "capped by net.core.somaxconn=4096" },
		{ { IPPROTO_TCP, TCP_MAXSEG, "TCP_MAXSEG", 1000, 988, 1, 0, -1, 0, 0 }, "option_adjusted", "MSS in use" },
		{ { IPPROTO_IP, IP_TOS, "IP_TOS", 0x2f, 0x2c, 1, 0, -1, 0, 0 }, "option_adjusted", "ECN bits" },
		{ { IPPROTO_IP, IP_TTL, "IP_TTL", -1, 64, 1, 0, -1, 0, 0 }, "option_adjusted", "system default, which is 64" },
		{ { IPPROTO_IPV6, IPV6_UNICAST_HOPS, "IPV6_UNICAST_HOPS", -1, 64, 1, 0, -1, 0, 0 }, "option_adjusted", "system default" },
		{ { IPPROTO_TCP, TCP_WINDOW_CLAMP, "TCP_WINDOW_CLAMP", 10, 1152, 1, 0, -1, 0, 0 }, "option_adjusted", "below the kernel's minimum" },
		{ { SOL_SOCKET, SO_PRIORITY, "SO_PRIORITY", 9, 6, 1, 0, -1, 0, 0 }, "option_differs", "for a reason the shim does not know" },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct said s = { 0 };

		sa_opt_judge_int(&cases[i].k, say, &s);
		if (!cases[i].code) {
			assert_int_equal(s.n, 0);
			continue;
		}
		assert_int_equal(s.n, 1);
		assert_string_equal(s.code, cases[i].code);
		if (!strstr(s.text, cases[i].words))
			fail_msg("case %zu: '%s' not in '%s'", i, cases[i].words, s.text);
	}
}

static void other_kinds(void **state)
{
	struct said s = { 0 };

	sa_opt_judge_bool("TCP_NODELAY", 7, 1, say, &s);
	assert_int_equal(s.n, 0);
	sa_opt_judge_bool("SO_KEEPALIVE", 1, 0, say, &s);
	assert_string_equal(s.code, "option_differs");
	memset(&s, 0, sizeof s);
	sa_opt_judge_linger(1, 5, 1, 5, say, &s);
	sa_opt_judge_linger(0, 5, 0, 0, say, &s);
	assert_int_equal(s.n, 0);
	sa_opt_judge_timeval("SO_RCVTIMEO", 1500, 4000, say, &s);
	assert_string_equal(s.code, "option_adjusted");
	assert_non_null(strstr(s.text, "timer tick"));
	sa_opt_judge_timeval("SO_RCVTIMEO", 1500, 900000, say, &s);
	assert_string_equal(s.code, "option_differs");
	memset(&s, 0, sizeof s);
	sa_opt_judge_string("TCP_CONGESTION", "reno", 4, "reno", 4, say, &s);
	assert_int_equal(s.n, 0);
	sa_opt_judge_string("TCP_CONGESTION", "bbr", 3, "cubic", 5, say, &s);
	assert_int_equal(s.n, 1);
}

static void backlog(void **state)
{
	struct said s = { 0 };

	assert_int_equal(sa_backlog_effective(511, 4096), 511);
	assert_int_equal(sa_backlog_effective(100000, 4096), 4096);
	assert_int_equal(sa_backlog_effective(-1, 300), 300);
	assert_int_equal(sa_backlog_effective(0, 300), 0);
	sa_backlog_judge(511, 511, "tcp_info", 4096, say, &s);
	sa_backlog_judge(-1, 4096, "tcp_info", 4096, say, &s);
	assert_int_equal(s.n, 0);
	sa_backlog_judge(511, 300, "tcp_info", 300, say, &s);
	assert_string_equal(s.code, "backlog_clamped");
	assert_non_null(strstr(s.text, "the value of net.core.somaxconn"));
	assert_non_null(strstr(s.text, "at most 301 connections"));
	sa_backlog_judge(511, 128, "computed", 4096, say, &s);
	assert_non_null(strstr(s.text, "did not set this value"));
}

static int fake_sysctl(const char *path, long *out)
{
	if (strstr(path, "tcp_syn_linear_timeouts"))
		return -2;   /* a kernel before 6.5 */
	if (strstr(path, "tcp_syn_retries")) {
		*out = 2;
		return 0;
	}
	return -2;
}

static void sched_and_names(void **state)
{
	struct sa_syn_sched k;

	sa_syn_sched_fill(&k, fake_sysctl);
	assert_int_equal(k.linear, 0);
	assert_int_equal(k.syn_retries, 2);
	assert_int_equal(k.synack_retries, 5);
	/* No linear phase: 1, 3 s and the connect fails at 7 s. */
	assert_int_equal(sa_syn_retrans_at_ms(2, k.linear, k.rto_max_ms), 3000);
	assert_int_equal(sa_syn_give_up_ms(k.linear, k.syn_retries, k.rto_max_ms), 7000);
	assert_ptr_equal(sa_opt_by_name("tcp_defer_accept"), sa_opt_lookup(IPPROTO_TCP, TCP_DEFER_ACCEPT));
	assert_ptr_equal(sa_opt_by_name("SO_RCVBUF"), sa_opt_lookup(SOL_SOCKET, SO_RCVBUF));
	assert_null(sa_opt_by_name("TCP_NOSUCH"));
	assert_int_equal(sa_opt_needs(SOL_SOCKET, SO_SNDBUFFORCE), SA_NEED_BUF_MAX);
	assert_string_equal(sa_buf_max_path(SO_RCVBUFFORCE), "/proc/sys/net/core/rmem_max");
	assert_non_null(sa_opt_nth(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(int_judges),
		cmocka_unit_test(other_kinds),
		cmocka_unit_test(backlog),
		cmocka_unit_test(sched_and_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
