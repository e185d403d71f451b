/* Unit tests for the setsockopt audit's pure parts: the TCP_DEFER_ACCEPT
 * rounding table measured in the reference study, option names and value
 * decoders (kernel/sockopt.c), what a read-back means
 * (judge/sockopt_judge.c, shared with `sockaudit explain`) and whether a
 * call gets a line (audit/sockopt.h), as tables. */
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
#include "audit/sockopt.h"

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
	struct sa_linebuf o = { out, out + sizeof out };
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

/* A test's sysctls: rmem_max and wmem_max 212992, somaxconn 4096. */
static int fake_sysctl(const char *path, long *out)
{
	if (strstr(path, "mem_max"))
		*out = 212992;
	else if (strstr(path, "somaxconn"))
		*out = 4096;
	else
		return -2;
	return 0;
}

static void judge_table(void **state)
{
	static const struct {
		int level, opt;
		enum sa_optkind kind;
		int req, eff;
		enum sa_opt_diff want;
		const char *why;
	} rows[] = {
		{ SOL_SOCKET, SO_RCVBUF, SA_OPT_INT, 65536, 131072, SA_OPTD_BUF_DOUBLED, "doubled" },
		{ SOL_SOCKET, SO_SNDBUF, SA_OPT_INT, 1 << 20, 425984, SA_OPTD_BUF_CAPPED, "capped, doubled" },
		{ SOL_SOCKET, SO_SNDBUFFORCE, SA_OPT_INT, 1 << 20, 425984, SA_OPTD_DIFFERS, "forced: not capped" },
		{ SOL_SOCKET, SO_RCVBUF, SA_OPT_INT, 10, 2304, SA_OPTD_BELOW_MIN, "below the minimum" },
		{ SOL_SOCKET, SO_RCVBUF, SA_OPT_INT, 65536, 65536, SA_OPTD_SAME, "kept" },
		{ IPPROTO_TCP, TCP_DEFER_ACCEPT, SA_OPT_INT, 5, 7, SA_OPTD_DEFER_ROUNDED, "5 s: 3 rounds, 7 s" },
		{ IPPROTO_TCP, TCP_DEFER_ACCEPT, SA_OPT_INT, 5, 9, SA_OPTD_DIFFERS, "defer, unexplained" },
		{ IPPROTO_TCP, TCP_DEFER_ACCEPT, SA_OPT_INT, -1, 0, SA_OPTD_SAME, "defer off" },
		{ IPPROTO_TCP, TCP_FASTOPEN, SA_OPT_INT, 100000, 4096, SA_OPTD_FASTOPEN_CAPPED, "somaxconn" },
		{ IPPROTO_TCP, TCP_FASTOPEN, SA_OPT_INT, 100000, 4095, SA_OPTD_DIFFERS_UNEXPLAINED, "not somaxconn" },
		{ IPPROTO_TCP, TCP_MAXSEG, SA_OPT_INT, 1000, 1448, SA_OPTD_MAXSEG, "the MSS in use" },
		{ IPPROTO_IP, IP_TOS, SA_OPT_INT, 0x11, 0x10, SA_OPTD_TOS_ECN, "ECN bits" },
		{ IPPROTO_IP, IP_TTL, SA_OPT_INT, -1, 64, SA_OPTD_HOPS_DEFAULT, "TTL -1" },
		{ IPPROTO_IPV6, IPV6_UNICAST_HOPS, SA_OPT_INT, -1, 64, SA_OPTD_HOPS_DEFAULT, "hops -1" },
		{ IPPROTO_TCP, TCP_WINDOW_CLAMP, SA_OPT_INT, 10, 2304, SA_OPTD_CLAMP_MIN, "clamp minimum" },
		{ IPPROTO_TCP, TCP_KEEPIDLE, SA_OPT_INT, 10, 11, SA_OPTD_DIFFERS_UNEXPLAINED, "unknown reason" },
		{ IPPROTO_TCP, TCP_NODELAY, SA_OPT_BOOL, 5, 1, SA_OPTD_SAME, "bool: any non-zero" },
		{ IPPROTO_TCP, TCP_NODELAY, SA_OPT_BOOL, 1, 0, SA_OPTD_DIFFERS, "bool differs" },
		{ IPPROTO_TCP, TCP_QUICKACK, SA_OPT_BOOL, 1, 0, SA_OPTD_SAME, "quickack: quickack.c says" },
	};
	struct sa_opt_verdict v;
	size_t i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct sa_opt_facts in = {
			.level = rows[i].level, .opt = rows[i].opt, .kind = rows[i].kind,
			.quickack = rows[i].opt == TCP_QUICKACK && rows[i].level == IPPROTO_TCP,
			.req = &rows[i].req, .reqlen = sizeof(int), .eff = &rows[i].eff, .efflen = sizeof(int),
			.read_sysctl = fake_sysctl,
		};

		sa_sockopt_judge(&in, &v);
		if (v.diff != rows[i].want)
			fail_msg("row %zu (%s): got %d, want %d", i, rows[i].why, (int)v.diff, (int)rows[i].want);
	}
	{
		/* Rounded: 3 rounds; capped: the sysctl that explains it. */
		int req = 5, eff = 7, big = 1 << 20, capped = 425984;
		struct sa_opt_facts in = { .level = IPPROTO_TCP, .opt = TCP_DEFER_ACCEPT, .kind = SA_OPT_INT,
					   .req = &req, .reqlen = sizeof req, .eff = &eff, .efflen = sizeof eff,
					   .read_sysctl = fake_sysctl };

		sa_sockopt_judge(&in, &v);
		assert_int_equal(v.rounds, 3);
		in = (struct sa_opt_facts){ .level = SOL_SOCKET, .opt = SO_SNDBUF, .kind = SA_OPT_INT, .req = &big,
					    .reqlen = sizeof big, .eff = &capped, .efflen = sizeof capped,
					    .read_sysctl = fake_sysctl };
		sa_sockopt_judge(&in, &v);
		assert_int_equal(v.sysctl, 212992);
		/* Not read back (or the call failed): nothing to compare. */
		in.eff = NULL;
		sa_sockopt_judge(&in, &v);
		assert_int_equal(v.diff, SA_OPTD_SAME);
	}
}

static void judge_structs(void **state)
{
	struct linger la = { 1, 5 }, lb = { 1, 6 }, off1 = { 0, 5 }, off2 = { 0, 9 };
	struct timeval ta = { 0, 100000 }, tick = { 0, 104000 }, far = { 1, 0 };
	struct sa_opt_verdict v;
	struct sa_opt_facts in = { .level = SOL_SOCKET, .opt = SO_LINGER, .kind = SA_OPT_LINGER,
				   .req = &la, .reqlen = sizeof la, .eff = &lb, .efflen = sizeof lb,
				   .read_sysctl = fake_sysctl };

	sa_sockopt_judge(&in, &v);
	assert_int_equal(v.diff, SA_OPTD_LINGER);
	assert_int_equal(v.linger[3], 6);
	in.req = &off1;
	in.eff = &off2;   /* off: the seconds do not matter */
	sa_sockopt_judge(&in, &v);
	assert_int_equal(v.diff, SA_OPTD_SAME);
	in = (struct sa_opt_facts){ .level = SOL_SOCKET, .opt = SO_RCVTIMEO, .kind = SA_OPT_TIMEVAL, .req = &ta,
				    .reqlen = sizeof ta, .eff = &tick, .efflen = sizeof tick, .read_sysctl = fake_sysctl };
	sa_sockopt_judge(&in, &v);
	assert_int_equal(v.diff, SA_OPTD_TIMER_TICK);
	assert_int_equal(v.eff_us, 104000);
	in.eff = &far;
	sa_sockopt_judge(&in, &v);
	assert_int_equal(v.diff, SA_OPTD_TIMEOUT);
	in.eff = &ta;
	sa_sockopt_judge(&in, &v);
	assert_int_equal(v.diff, SA_OPTD_SAME);
	in = (struct sa_opt_facts){ .level = SOL_SOCKET, .opt = SO_BINDTODEVICE, .kind = SA_OPT_STRING,
				    .req = "eth0", .reqlen = 5, .eff = "eth1", .efflen = 5, .read_sysctl = fake_sysctl };
	sa_sockopt_judge(&in, &v);
	assert_int_equal(v.diff, SA_OPTD_NAME);
	in.req = "";
	sa_sockopt_judge(&in, &v);
	assert_int_equal(v.diff, SA_OPTD_SAME);   /* unbinding */
}

/* Whether a setsockopt is read back (sa_sockopt_read_back_due), one row
 * per fact. */
static void read_back_table(void **state)
{
	static const struct {
		struct sa_opt_gate g;
		bool want;
		const char *why;
	} rows[] = {
		{ { .ok = 1, .entry = 1, .nth = 9 }, 0, "9th: off the sample" },
		{ { .ok = 1, .entry = 1, .nth = 64 }, 1, "64th: sampled" },
		{ { .ok = 1, .entry = 1, .nth = 8 }, 1, "the first 8" },
		{ { .ok = 1, .entry = 1, .nth = 9, .full = 1 }, 1, "a difference seen: every call" },
		{ { .ok = 1, .entry = 1, .nth = 9, .listener = 1 }, 1, "listener: every call" },
		{ { .ok = 1, .entry = 1, .nth = 9, .defer_accept = 1 }, 1, "TCP_DEFER_ACCEPT" },
		{ { .ok = 1, .entry = 1, .nth = 9, .trace = 1 }, 1, "trace" },
		{ { .ok = 1, .entry = 0, .nth = 1 }, 1, "no entry" },
		{ { .ok = 0, .entry = 1, .nth = 9 }, 1, "failed: never sampled out" },
	};
	size_t i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (sa_sockopt_read_back_due(&rows[i].g) != rows[i].want)
			fail_msg("row %zu (%s): got %d", i, rows[i].why, !rows[i].want);
}

/* Whether a call that was read back gets a line (sa_sockopt_route). */
static void route_table(void **state)
{
	static const struct {
		struct sa_opt_gate g;
		enum sa_opt_route want;
		const char *why;
	} rows[] = {
		{ { .ok = 1, .info = 0, .entry = 1, .nth = 2 }, SA_OPT_QUIET, "warn, not read back" },
		{ { .ok = 1, .info = 1, .entry = 1, .nth = 2, .read_back = 1, .first = 1 }, SA_OPT_LINE, "first: its line" },
		{ { .ok = 1, .info = 1, .entry = 1, .nth = 2, .read_back = 1 }, SA_OPT_COUNTED, "a repeat" },
		{ { .ok = 1, .info = 1, .entry = 1, .nth = 2, .read_back = 1, .differs = 1, .same_as_logged = 1 },
		  SA_OPT_COUNTED, "the same adjustment again" },
		{ { .ok = 1, .info = 1, .entry = 1, .nth = 2, .read_back = 1, .differs = 1 }, SA_OPT_LINE, "a new read-back" },
		{ { .ok = 0, .info = 1, .entry = 1, .nth = 2 }, SA_OPT_LINE, "failures: every one" },
		{ { .ok = 1, .info = 1, .entry = 0, .nth = 1, .read_back = 1 }, SA_OPT_LINE, "no entry: not counted" },
		{ { .ok = 1, .info = 1, .entry = 1, .nth = 2, .read_back = 1, .trace = 1 }, SA_OPT_LINE, "trace: every call" },
		{ { .ok = 1, .info = 0, .entry = 1, .nth = 2, .read_back = 1, .first = 1 }, SA_OPT_SKIP, "warn, nothing to say" },
		{ { .ok = 1, .info = 0, .entry = 1, .nth = 2, .read_back = 1, .first = 1, .differs = 1 }, SA_OPT_LINE, "warn, a finding" },
		{ { .ok = 0, .info = 0, .entry = 1, .nth = 2 }, SA_OPT_SKIP, "warn, a failure" },
	};
	size_t i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (sa_sockopt_route(&rows[i].g) != rows[i].want)
			fail_msg("row %zu (%s): got %d", i, rows[i].why, (int)sa_sockopt_route(&rows[i].g));
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
		cmocka_unit_test(judge_table),
		cmocka_unit_test(judge_structs),
		cmocka_unit_test(read_back_table),
		cmocka_unit_test(route_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
