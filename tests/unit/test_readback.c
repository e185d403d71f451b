/* Unit tests for shim/judge/sockopt_judge.c, shim/kernel/readback.c and optnames.c:
 * what the shim's read-back audits and `sockaudit explain` both say, as
 * tables of (facts -> finding code and words) through the judge and its
 * words, the backlog judge as a table, the SYN schedule, and the option
 * table by name. The judge's verdicts alone are test_sockopt.c's table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "digits.h"
#include "readback.h"
#include "syn_schedule.h"

struct said {
	int n;
	const char *code;
	char text[1536];
};

/* The sa_say_fn under test: the last finding's code and sentence. */
static void __attribute__((format(printf, 3, 4))) say(void *ctx, const char *code, const char *fmt, ...)
{
	struct said *s = ctx;
	va_list ap;

	s->n++;
	s->code = code;
	va_start(ap, fmt);
	vsnprintf(s->text, sizeof s->text, fmt, ap);
	va_end(ap);
}

/* rmem_max and wmem_max 212992, somaxconn 4096. */
static int table_sysctl(const char *path, long *out)
{
	if (strstr(path, "mem_max"))
		*out = 212992;
	else if (strstr(path, "somaxconn"))
		*out = 4096;
	else
		return -2;
	return 0;
}

/* Judged, then worded: what the shim writes and explain prints. */
static void judge_and_say(const struct sa_opt_facts *in, const struct sa_opt_context *c, struct said *s)
{
	struct sa_opt_verdict v;

	sa_sockopt_judge(in, &v);
	if (v.diff != SA_OPTD_SAME)
		sa_sockopt_say(in, &v, c, say, s);
}

static void int_words(void **state)
{
	static const struct {
		int level, opt;
		const char *name;
		int req, eff;
		long real_ms, rto_max_ms;
		const char *code;     /* NULL: no finding */
		const char *words;
	} cases[] = {
		{ SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF", 1000, 2000, 0, 0, "option_adjusted", "stores twice the value" },
		{ SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF", 1000, 2000, 0, 0, "option_adjusted", "autotuning" },
		{ SOL_SOCKET, SO_SNDBUF, "SO_SNDBUF", 1000000, 425984, 0, 0, "option_adjusted", "capped by net.core.wmem_max=212992, then doubled to 425984: raise net.core.wmem_max (or use SO_SNDBUFFORCE" },
		{ SOL_SOCKET, SO_SNDBUFFORCE, "SO_SNDBUFFORCE", 1000000, 425984, 0, 0, "option_differs", "SO_SNDBUFFORCE 1000000 reads back as 425984." },
		{ SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF", 1, 2304, 0, 0, "option_adjusted", "below the kernel's minimum" },
		{ IPPROTO_TCP, TCP_DEFER_ACCEPT, "TCP_DEFER_ACCEPT", 10, 15, 15000, 120000, "defer_rounded", "kept as 4 SYN-ACK rounds. Write 15 to match." },
		{ IPPROTO_TCP, TCP_DEFER_ACCEPT, "TCP_DEFER_ACCEPT", 10, 15, 4000, 1000, "defer_rounded", "really lasts 4 s" },
		{ IPPROTO_TCP, TCP_DEFER_ACCEPT, "TCP_DEFER_ACCEPT", -5, 0, 0, 0, NULL, NULL },
		{ IPPROTO_TCP, TCP_DEFER_ACCEPT, "TCP_DEFER_ACCEPT", 10, 7, 0, 0, "option_differs", "TCP_DEFER_ACCEPT 10 reads back as 7." },
		{ IPPROTO_TCP, TCP_FASTOPEN, "TCP_FASTOPEN", 5000, 4096, 0, 0, "option_adjusted", "capped by net.core.somaxconn=4096" },
		{ IPPROTO_TCP, TCP_MAXSEG, "TCP_MAXSEG", 1000, 988, 0, 0, "option_adjusted", "MSS in use" },
		{ IPPROTO_IP, IP_TOS, "IP_TOS", 0x2f, 0x2c, 0, 0, "option_adjusted", "ECN bits" },
		{ IPPROTO_IP, IP_TTL, "IP_TTL", -1, 64, 0, 0, "option_adjusted", "IP_TTL -1 means the system default, which is 64." },
		{ IPPROTO_IPV6, IPV6_UNICAST_HOPS, "IPV6_UNICAST_HOPS", -1, 64, 0, 0, "option_adjusted", "system default" },
		{ IPPROTO_TCP, TCP_WINDOW_CLAMP, "TCP_WINDOW_CLAMP", 10, 1152, 0, 0, "option_adjusted", "below the kernel's minimum" },
		{ SOL_SOCKET, SO_PRIORITY, "SO_PRIORITY", 9, 6, 0, 0, "option_differs", "for a reason the shim does not know" },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct said s = { 0 };
		struct sa_opt_facts in = {
			.level = cases[i].level, .opt = cases[i].opt, .kind = SA_OPT_INT,
			.req = &cases[i].req, .reqlen = sizeof(int), .eff = &cases[i].eff, .efflen = sizeof(int),
			.read_sysctl = table_sysctl,
		};
		struct sa_opt_context c = { .name = cases[i].name, .stream = 1, .defer_real_ms = cases[i].real_ms,
					    .defer_rto_max_ms = cases[i].rto_max_ms };

		judge_and_say(&in, &c, &s);
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

/* A receive buffer's autotuning sentence only on a stream socket. */
static void autotune_only_on_streams(void **state)
{
	int req = 1000, eff = 2000;
	struct said s = { 0 };
	struct sa_opt_facts in = { .level = SOL_SOCKET, .opt = SO_RCVBUF, .kind = SA_OPT_INT, .req = &req,
				   .reqlen = sizeof req, .eff = &eff, .efflen = sizeof eff, .read_sysctl = table_sysctl };
	struct sa_opt_context c = { .name = "SO_RCVBUF", .stream = 0 };

	judge_and_say(&in, &c, &s);
	assert_int_equal(s.n, 1);
	assert_null(strstr(s.text, "autotuning"));
}

static void other_kinds(void **state)
{
	int seven = 7, one = 1, zero = 0;
	struct linger l5 = { 1, 5 }, off5 = { 0, 5 }, off0 = { 0, 0 }, l6 = { 1, 6 };
	struct timeval asked = { 0, 1500 }, tick = { 0, 4000 }, far = { 0, 900000 };
	struct said s = { 0 };
	struct sa_opt_context c = { .name = "TCP_NODELAY" };
	struct sa_opt_facts in = { .level = IPPROTO_TCP, .opt = TCP_NODELAY, .kind = SA_OPT_BOOL, .req = &seven,
				   .reqlen = sizeof(int), .eff = &one, .efflen = sizeof(int), .read_sysctl = table_sysctl };

	judge_and_say(&in, &c, &s);
	assert_int_equal(s.n, 0);
	in.req = &one;
	in.eff = &zero;
	c.name = "SO_KEEPALIVE";
	judge_and_say(&in, &c, &s);
	assert_string_equal(s.code, "option_differs");
	assert_string_equal(s.text, "SO_KEEPALIVE 1 reads back as 0.");
	memset(&s, 0, sizeof s);
	in = (struct sa_opt_facts){ .level = SOL_SOCKET, .opt = SO_LINGER, .kind = SA_OPT_LINGER, .req = &l5,
				    .reqlen = sizeof l5, .eff = &l5, .efflen = sizeof l5 };
	judge_and_say(&in, &c, &s);
	in.req = &off5;
	in.eff = &off0;
	judge_and_say(&in, &c, &s);
	assert_int_equal(s.n, 0);
	in.req = &l5;
	in.eff = &l6;
	judge_and_say(&in, &c, &s);
	assert_string_equal(s.text, "SO_LINGER {1, 5} reads back as {1, 6}.");
	c.name = "SO_RCVTIMEO";
	in = (struct sa_opt_facts){ .level = SOL_SOCKET, .opt = SO_RCVTIMEO, .kind = SA_OPT_TIMEVAL, .req = &asked,
				    .reqlen = sizeof asked, .eff = &tick, .efflen = sizeof tick };
	judge_and_say(&in, &c, &s);
	assert_string_equal(s.code, "option_adjusted");
	assert_non_null(strstr(s.text, "SO_RCVTIMEO 1500 us reads back as 4000 us: the kernel rounds timeouts up to its timer tick."));
	in.eff = &far;
	judge_and_say(&in, &c, &s);
	assert_string_equal(s.code, "option_differs");
	memset(&s, 0, sizeof s);
	c.name = "TCP_CONGESTION";
	in = (struct sa_opt_facts){ .level = IPPROTO_TCP, .opt = TCP_CONGESTION, .kind = SA_OPT_STRING, .req = "reno",
				    .reqlen = 4, .eff = "reno", .efflen = 4 };
	judge_and_say(&in, &c, &s);
	assert_int_equal(s.n, 0);
	in.req = "bbr";
	in.reqlen = 3;
	in.eff = "cubic";
	in.efflen = 5;
	judge_and_say(&in, &c, &s);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.text, "TCP_CONGESTION reads back as a different name.");
}

/* The backlog judge as a table, and its words. */
static void backlog(void **state)
{
	static const struct {
		struct sa_backlog_facts in;
		enum sa_backlog_verdict want;
		const char *words;
	} rows[] = {
		{ { 511, 511, "tcp_info", 4096 }, SA_BACKLOG_KEPT, NULL },
		{ { -1, 4096, "tcp_info", 4096 }, SA_BACKLOG_KEPT, NULL },
		{ { 0, 0, "tcp_info", 4096 }, SA_BACKLOG_KEPT, NULL },
		{ { 511, -1, "tcp_info", 4096 }, SA_BACKLOG_KEPT, NULL },
		{ { 511, 300, "tcp_info", 300 }, SA_BACKLOG_CLAMPED_SOMAXCONN, "this network namespace's net.core.somaxconn" },
		{ { 511, 300, "tcp_info", 300 }, SA_BACKLOG_CLAMPED_SOMAXCONN, "301 connections can wait for accept(). Raise it: sysctl -w net.core.somaxconn=511" },
		{ { 511, 0, "unix_diag", 0 }, SA_BACKLOG_CLAMPED_SOMAXCONN, "(read back with unix_diag), this network namespace's net.core.somaxconn: 1 connection can wait" },
		{ { 511, 128, "computed", 4096 }, SA_BACKLOG_CLAMPED_OTHER, "(computed from somaxconn, not read back): 129 connections can wait" },
		{ { 511, 128, "tcp_info", -1 }, SA_BACKLOG_CLAMPED_OTHER, "did not set this" },
	};
	size_t i;

	assert_int_equal(sa_backlog_effective(511, 4096), 511);
	assert_int_equal(sa_backlog_effective(100000, 4096), 4096);
	assert_int_equal(sa_backlog_effective(-1, 300), 300);
	assert_int_equal(sa_backlog_effective(0, 300), 0);
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct said s = { 0 };
		enum sa_backlog_verdict v = sa_backlog_judge(&rows[i].in);

		if (v != rows[i].want)
			fail_msg("row %zu: got %d, want %d", i, (int)v, (int)rows[i].want);
		sa_backlog_say(&rows[i].in, v, say, &s);
		if (!rows[i].words) {
			assert_int_equal(s.n, 0);
			continue;
		}
		assert_string_equal(s.code, "backlog_clamped");
		if (!strstr(s.text, rows[i].words))
			fail_msg("row %zu: '%s' not in '%s'", i, rows[i].words, s.text);
	}
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

/* The digits the shim reads by hand (a kernel release, JOURNAL_STREAM,
 * the netns inode): the number, where it stops, NULL without a digit. */
static void digits(void **state)
{
	unsigned long long v;
	const char *p;

	(void)state;
	p = sa_digits("6.1.0-28-amd64", &v);
	assert_non_null(p);
	assert_int_equal(v, 6);
	assert_string_equal(p, ".1.0-28-amd64");
	p = sa_digits("8:123456", &v);
	assert_int_equal(v, 8);
	assert_int_equal(*p, ':');
	p = sa_digits(p + 1, &v);
	assert_int_equal(v, 123456);
	assert_int_equal(*p, '\0');
	assert_null(sa_digits(":1", &v));
	assert_null(sa_digits("", &v));
	p = sa_digits("4026531840]", &v);
	assert_int_equal(v, 4026531840ULL);
	assert_int_equal(*p, ']');
	/* Stops before it could overflow: 2^60 and more end the number. */
	p = sa_digits("99999999999999999999999", &v);
	assert_true(v >= (1ULL << 60) && v < 10 * (1ULL << 60));
	assert_int_equal(*p, '9');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(int_words),
		cmocka_unit_test(autotune_only_on_streams),
		cmocka_unit_test(other_kinds),
		cmocka_unit_test(backlog),
		cmocka_unit_test(sched_and_names),
		cmocka_unit_test(digits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
