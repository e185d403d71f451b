/* Unit tests for the accepting side's pure parts: /proc/net/{netstat,snmp}
 * parsing and deltas (netns.c), which way an accept goes and what its facts
 * mean (judge/accept_judge.c, sa_accept_route in judge/judge.h), and
 * listener_stats advice (listener_stats.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "audit/accept.h"

static const char netstat_new[] =
	"TcpExt: SyncookiesSent SyncookiesRecv SyncookiesFailed EmbryonicRsts ListenOverflows ListenDrops TCPDeferAcceptDrop TCPReqQFullDoCookies TCPReqQFullDrop TCPSynRetrans TCPFastOpenPassive\n"
	"TcpExt: 189 201 0 0 274 274 11 326 0 148 0\n"
	"IpExt: InNoRoutes InTruncatedPkts\n"
	"IpExt: 0 0\n"
	"MPTcpExt: MPCapableSYNRX ListenOverflows\n"
	"MPTcpExt: 5 999\n";
/* An old kernel: no TCPDeferAcceptDrop yet, fields in another order. */
static const char netstat_old[] =
	"TcpExt: ListenDrops SyncookiesRecv ListenOverflows SyncookiesSent\n"
	"TcpExt: 3 7 2 9\n";
static const char snmp[] =
	"Ip: Forwarding DefaultTTL\n"
	"Ip: 2 64\n"
	"Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs\n"
	"Tcp: 1 200 120000 -1 200 75 4 11 0 1098 961 148\n";

static void parse_netstat(void **state)
{
	struct sa_netns_snap s;

	memset(&s, 0, sizeof s);
	assert_int_equal(sa_netns_parse(netstat_new, &s), 10);
	assert_true(s.valid);
	assert_int_equal(s.v[SA_NS_SYNCOOKIES_SENT], 189);
	assert_int_equal(s.v[SA_NS_SYNCOOKIES_RECV], 201);
	/* TcpExt's ListenOverflows, not MPTcpExt's. */
	assert_int_equal(s.v[SA_NS_LISTEN_OVERFLOWS], 274);
	assert_int_equal(s.v[SA_NS_DEFER_ACCEPT_DROP], 11);
	assert_false(s.present & (1u << SA_NS_RETRANS_SEGS));
	assert_int_equal(sa_netns_parse(snmp, &s), 2);
	assert_int_equal(s.v[SA_NS_RETRANS_SEGS], 148);
	assert_int_equal(s.v[SA_NS_ATTEMPT_FAILS], 4);
	assert_true(s.present & (1u << SA_NS_ATTEMPT_FAILS));
}

static void absent_is_absent(void **state)
{
	struct sa_netns_snap a, b;
	uint64_t d;
	json_t *j;

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	sa_netns_parse(netstat_old, &a);
	sa_netns_parse(netstat_old, &b);
	b.v[SA_NS_LISTEN_OVERFLOWS] += 5;
	assert_int_equal(a.v[SA_NS_SYNCOOKIES_SENT], 9);
	assert_true(sa_netns_delta(&a, &b, SA_NS_LISTEN_OVERFLOWS, &d));
	assert_int_equal(d, 5);
	assert_false(sa_netns_delta(&a, &b, SA_NS_DEFER_ACCEPT_DROP, &d));
	j = sa_netns_delta_json(&a, &b);
	assert_int_equal(json_integer_value(json_object_get(j, "ListenOverflows")), 5);
	assert_int_equal(json_integer_value(json_object_get(j, "SyncookiesRecv")), 0);
	assert_null(json_object_get(j, "TCPDeferAcceptDrop"));
	assert_null(json_object_get(j, "RetransSegs"));
	json_decref(j);
}

static void malformed(void **state)
{
	struct sa_netns_snap s;

	memset(&s, 0, sizeof s);
	/* A header with no value line, a short value line, junk, no final newline. */
	assert_int_equal(sa_netns_parse("TcpExt: ListenOverflows\nnonsense\n", &s), 0);
	assert_false(s.valid);
	assert_int_equal(sa_netns_parse("TcpExt: ListenDrops ListenOverflows\nTcpExt: 4\n", &s), 1);
	assert_int_equal(s.v[SA_NS_LISTEN_DROPS], 4);
	assert_false(s.present & (1u << SA_NS_LISTEN_OVERFLOWS));
	assert_int_equal(sa_netns_parse("TcpExt: SyncookiesFailed\nTcpExt: x12\n", &s), 0);
	assert_int_equal(sa_netns_parse("TcpExt: SyncookiesFailed\nTcpExt: 12", &s), 1);
	assert_int_equal(sa_netns_parse("", &s), 0);
}

static void live_proc(void **state)
{
	struct sa_netns_snap s;

	/* This kernel has /proc/net: the counters we rely on are there. */
	assert_int_equal(sa_netns_read(&s), 0);
	assert_true(s.present & (1u << SA_NS_LISTEN_OVERFLOWS));
	assert_true(s.present & (1u << SA_NS_RETRANS_SEGS));
}

static void empty_cause(void **state)
{
	/* defer_s, bytes, state, total_retrans, total_rto, options */
	assert_int_equal(sa_empty_cause(1, 0, 1, 1, 1, 0), SA_EMPTY_DEFER_EXPIRED);
	assert_int_equal(sa_empty_cause(3, 0, 1, 0, 2, 0), SA_EMPTY_DEFER_EXPIRED);
	assert_int_equal(sa_empty_cause(1, 0, 1, 0, 0, 0), SA_EMPTY_SYNCOOKIE);
	assert_int_equal(sa_empty_cause(0, 0, 1, 0, 0, 0), SA_EMPTY_NONE);    /* no deferral */
	assert_int_equal(sa_empty_cause(1, 18, 1, 0, 0, 0), SA_EMPTY_NONE);   /* data */
	assert_int_equal(sa_empty_cause(1, 0, 8, 0, 0, 0), SA_EMPTY_NONE);    /* FIN only: CLOSE_WAIT */
	assert_int_equal(sa_empty_cause(1, 0, 1, 0, 0, 128), SA_EMPTY_NONE);  /* Fast Open child */
}

/* The count-only rule (sa_accept_route): one row per fact that sends an
 * accept another way. */
static void route_table(void **state)
{
	static const struct {
		struct sa_accept_gate g;
		enum sa_accept_route want;
		const char *why;
	} rows[] = {
		{ { .tcp = 1, .listener = 1, .netns_ready = 1, .accepts = 100 }, SA_ROUTE_COUNT, "plain, off the sample" },
		{ { .tcp = 0, .listener = 1, .netns_ready = 1, .accepts = 100 }, SA_ROUTE_FULL, "not TCP" },
		{ { .tcp = 0, .listener = 1, .netns_ready = 1, .accepts = 128 }, SA_ROUTE_FULL, "not TCP: never sampled" },
		{ { .tcp = 1, .listener = 0, .netns_ready = 1, .accepts = 100 }, SA_ROUTE_SAMPLE, "no listener state" },
		{ { .tcp = 1, .listener = 1, .netns_ready = 1, .accepts = 128 }, SA_ROUTE_SAMPLE, "every 128th" },
		{ { .tcp = 1, .listener = 1, .netns_ready = 1, .accepts = 0 }, SA_ROUTE_SAMPLE, "the first" },
		{ { .tcp = 1, .listener = 1, .netns_ready = 1, .accepts = 100, .sample_due = 1 }, SA_ROUTE_SAMPLE, "100 ms" },
		{ { .tcp = 1, .listener = 1, .netns_ready = 1, .accepts = 100, .deferred = 1 }, SA_ROUTE_FULL, "deferred" },
		{ { .tcp = 1, .listener = 1, .netns_ready = 1, .accepts = 128, .deferred = 1 }, SA_ROUTE_SAMPLE, "deferred, sampled" },
		{ { .tcp = 1, .listener = 1, .netns_ready = 1, .accepts = 63 }, SA_ROUTE_FULL, "watched: the first 64" },
		{ { .tcp = 1, .listener = 1, .netns_ready = 1, .accepts = 64 }, SA_ROUTE_COUNT, "the 65th" },
		{ { .tcp = 1, .listener = 1, .netns_ready = 1, .accepts = 100, .child_known = 1 }, SA_ROUTE_FULL, "number has an entry" },
		{ { .tcp = 1, .listener = 1, .netns_ready = 0, .accepts = 100 }, SA_ROUTE_FULL, "no netns baseline" },
		{ { .tcp = 1, .listener = 1, .trace = 1, .accepts = 100 }, SA_ROUTE_TRACE_PLAIN, "trace, off the sample" },
		{ { .tcp = 1, .listener = 1, .trace = 1, .accepts = 5 }, SA_ROUTE_TRACE_PLAIN, "trace: nobody is watched" },
		{ { .tcp = 1, .listener = 1, .trace = 1, .accepts = 112 }, SA_ROUTE_SAMPLE, "trace: every 16th" },
		{ { .tcp = 1, .listener = 1, .trace = 1, .accepts = 100, .sample_due = 1 }, SA_ROUTE_SAMPLE, "trace, 100 ms" },
		{ { .tcp = 1, .listener = 1, .trace = 1, .accepts = 100, .deferred = 1 }, SA_ROUTE_FULL, "trace, deferred" },
		{ { .tcp = 0, .listener = 0, .trace = 1 }, SA_ROUTE_FULL, "trace, not TCP" },
	};
	size_t i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if (sa_accept_route(&rows[i].g) != rows[i].want)
			fail_msg("row %zu (%s): got %d, want %d", i, rows[i].why,
				 (int)sa_accept_route(&rows[i].g), (int)rows[i].want);
	}
}

/* sa_accept_judge: what one full accept's facts mean. */
static void judge_table(void **state)
{
	/* state, bytes_received, total_retrans, last_data_sent (queue ms); sacked
	 * (backlog) and unacked (queue length) for the listener. GROUPS: the
	 * field groups a full-length TCP_INFO has (judge.h); short4 is
	 * qemu-user's 4 bytes, the state alone, with a queue time its cleared
	 * has_times disowns: the judge goes by the flags, not by the zeros. */
#define GROUPS .valid = 1, .has_options = 1, .has_queue = 1, .has_times = 1, .has_retrans = 1
	static const struct sa_tcpinfo est_empty = { GROUPS, .state = SA_TCP_ESTABLISHED, .has_bytes_received = 1 };
	static const struct sa_tcpinfo est_resent = { GROUPS, .state = SA_TCP_ESTABLISHED, .total_retrans = 1 };
	static const struct sa_tcpinfo short4 = { .valid = 1, .len = 4, .state = SA_TCP_ESTABLISHED, .last_data_sent = 1500 };
	static const struct sa_tcpinfo waited = { GROUPS, .state = SA_TCP_ESTABLISHED, .last_data_sent = 1500 };
	static const struct sa_tcpinfo lsn_full = { GROUPS, .state = SA_TCP_LISTEN, .sacked = 3, .unacked = 3 };
	static const struct sa_tcpinfo lsn_room = { GROUPS, .state = SA_TCP_LISTEN, .sacked = 3, .unacked = 1 };
	static const struct sa_tcpinfo lsn_zero = { GROUPS, .state = SA_TCP_LISTEN, .sacked = 0, .unacked = 0 };
#undef GROUPS
	static const int zero = 0, five = 5;
	static const struct {
		struct sa_accept_facts in;
		enum sa_empty_cause cause;
		int full, backlog, with_data, client_first, plain;
		const char *why;
	} rows[] = {
		{ { .tcp = 1, .last_backlog = 511 }, SA_EMPTY_NONE, 0, 511, -1, 0, 1, "nothing read" },
		{ { .tcp = 1, .last_backlog = -1 }, SA_EMPTY_NONE, 0, -1, -1, 0, 1, "nothing known" },
		{ { .tcp = 1, .bytes = &five, .last_backlog = 8 }, SA_EMPTY_NONE, 0, 8, 1, 1, 0, "client spoke" },
		{ { .tcp = 1, .defer_s = 5, .bytes = &zero, .ti = &est_resent, .last_backlog = 8 },
		  SA_EMPTY_DEFER_EXPIRED, 0, 8, 0, 0, 0, "deferred, SYN-ACK resent" },
		{ { .tcp = 1, .defer_s = 5, .bytes = &zero, .ti = &est_empty, .last_backlog = 8 },
		  SA_EMPTY_SYNCOOKIE, 0, 8, 0, 0, 0, "deferred, no resend: a SYN cookie" },
		{ { .tcp = 1, .defer_s = 0, .bytes = &zero, .ti = &est_empty, .last_backlog = 8 },
		  SA_EMPTY_NONE, 0, 8, 0, 0, 0, "empty, not deferred" },
		{ { .tcp = 1, .defer_s = 5, .bytes = &zero, .ti = &short4, .last_backlog = 8 },
		  SA_EMPTY_NONE, 0, 8, 0, 0, 0, "deferred, 4-byte TCP_INFO: no resend count, no cause" },
		{ { .tcp = 1, .ti = &short4, .listener_ti = &lsn_zero }, SA_EMPTY_NONE, 0, 0, -1, 0, 0,
		  "backlog 0, 4-byte TCP_INFO: no queue time, not called full" },
		{ { .tcp = 1, .ti = &waited, .listener_ti = &lsn_full, .last_backlog = 100 },
		  SA_EMPTY_NONE, 1, 3, -1, 0, 0, "queue full: the listener's backlog wins" },
		{ { .tcp = 1, .ti = &waited, .listener_ti = &lsn_room, .last_backlog = 100 },
		  SA_EMPTY_NONE, 0, 3, -1, 0, 0, "room left" },
		{ { .tcp = 1, .ti = &waited, .listener_ti = &lsn_zero }, SA_EMPTY_NONE, 1, 0, -1, 0, 0, "backlog 0, waited 1.5 s" },
		{ { .tcp = 1, .listener_ti = &lsn_zero }, SA_EMPTY_NONE, 0, 0, -1, 0, 0, "backlog 0, child not read" },
		{ { .tcp = 0, .bytes = &zero, .last_backlog = -1 }, SA_EMPTY_NONE, 0, -1, 0, 0, 0, "not TCP" },
	};
	struct sa_accept_verdict v;
	size_t i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		sa_accept_judge(&rows[i].in, &v);
		if (v.cause != rows[i].cause || v.full != rows[i].full || v.backlog != rows[i].backlog ||
		    v.with_data != rows[i].with_data || v.client_first != rows[i].client_first ||
		    v.plain != rows[i].plain)
			fail_msg("row %zu (%s): cause %d full %d backlog %d with_data %d client_first %d plain %d",
				 i, rows[i].why, (int)v.cause, v.full, v.backlog, v.with_data, v.client_first, v.plain);
	}
}

/* Bytes waiting, from one TCP_INFO: the state is read before the socket
 * lock, the counters under it, so a FIN racing the read can leave
 * ESTABLISHED beside a bytes_received that already counts the FIN. The
 * counters decide: no data segment and no data in a Fast Open SYN is 0. */
static void bytes_from_tcpinfo(void **state)
{
	static const struct {
		struct sa_tcpinfo ti;
		int ok, bytes;
		const char *what;
	} t[] = {
		{ { .state = SA_TCP_ESTABLISHED, .has_bytes_received = 1, .has_data_segs = 1 }, 1, 0, "silent" },
		{ { .state = SA_TCP_ESTABLISHED, .has_bytes_received = 1, .bytes_received = 1, .has_data_segs = 1 },
		  1, 0, "FIN racing the read: ESTABLISHED, the FIN in bytes_received, no data segment" },
		{ { .state = SA_TCP_CLOSE_WAIT, .has_bytes_received = 1, .bytes_received = 1, .has_data_segs = 1 },
		  1, 0, "FIN only" },
		{ { .state = SA_TCP_ESTABLISHED, .has_bytes_received = 1, .bytes_received = 5, .has_data_segs = 1,
		    .data_segs_in = 1 }, 1, 5, "5 bytes" },
		{ { .state = SA_TCP_CLOSE_WAIT, .has_bytes_received = 1, .bytes_received = 6, .has_data_segs = 1,
		    .data_segs_in = 1 }, 1, 5, "5 bytes + FIN" },
		{ { .state = SA_TCP_ESTABLISHED, .has_bytes_received = 1, .bytes_received = 5, .has_data_segs = 1,
		    .options = 32 }, 1, 5, "5 bytes in a Fast Open SYN (no data segment on the child)" },
		{ { .state = SA_TCP_ESTABLISHED, .has_bytes_received = 1, .bytes_received = 5 }, 1, 5,
		  "a kernel without data_segs_in: bytes_received alone" },
		{ { .state = SA_TCP_CLOSE, .has_bytes_received = 1, .has_data_segs = 1 }, 0, -1, "reset: ask FIONREAD" },
		{ { .state = SA_TCP_ESTABLISHED }, 0, -1, "no bytes_received (before 4.1)" },
	};
	unsigned i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		int b = -1, ok = sa_accept_bytes_from_tcpinfo(&t[i].ti, &b);

		if (ok != t[i].ok || (ok && b != t[i].bytes))
			fail_msg("%s: got ok %d bytes %d, want ok %d bytes %d", t[i].what, ok, b, t[i].ok, t[i].bytes);
	}
}

static void queue_full(void **state)
{
	assert_true(sa_queue_was_full(3, 3, 0));    /* 4 of 4 before this accept */
	assert_false(sa_queue_was_full(3, 2, 500));
	assert_true(sa_queue_was_full(0, 0, 1500));  /* backlog 0: one waited 1.5 s */
	assert_false(sa_queue_was_full(0, 0, 0));    /* and one taken at once */
	assert_false(sa_queue_was_full(-1, 5, 5));
	assert_int_equal(sa_needed_backlog(4, 3), 8);
	assert_int_equal(sa_needed_backlog(1, 0), 2);
	assert_int_equal(sa_needed_backlog(100000, 10), 65535);
}

static int any_matches(json_t *arr, const char *needle)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (strstr(json_string_value(v), needle))
			return 1;
	return 0;
}

static void advice(void **state)
{
	struct sa_advice_in in;
	json_t *a;

	memset(&in, 0, sizeof in);
	in.accepts = 100; in.empty_accepts = 80; in.with_data = 20; in.first_client = 100;
	a = json_array();
	assert_int_equal(sa_listener_advice(&in, a), 1);
	assert_true(any_matches(a, "80% of accepts found no data yet: TCP_DEFER_ACCEPT=1"));
	json_decref(a);

	in.empty_accepts = 5; in.with_data = 95;
	a = json_array();
	sa_listener_advice(&in, a);
	assert_true(any_matches(a, "95% of accepts already had data"));
	json_decref(a);

	/* On a plain listener only sampled accepts are checked for data: the
	 * share is over those (8 of 10 here, of 1000 accepts), and too few
	 * checked say nothing. */
	in.accepts = 1000; in.empty_accepts = 8; in.with_data = 2;
	a = json_array();
	sa_listener_advice(&in, a);
	assert_true(any_matches(a, "80% of accepts found no data yet"));
	json_decref(a);
	in.empty_accepts = 4; in.with_data = 1;
	a = json_array();
	assert_int_equal(sa_listener_advice(&in, a), 0);
	json_decref(a);

	memset(&in, 0, sizeof in);
	in.accepts = 3; in.first_server = 3; in.defer_s = 1; in.empty_accepts = 3; in.defer_expired = 3;
	a = json_array();
	sa_listener_advice(&in, a);
	assert_true(any_matches(a, "server speaks first"));
	assert_true(any_matches(a, "Turn it off here"));
	assert_true(any_matches(a, "handle empty connections"));
	/* No real window known (0): the advice names the reported seconds only. */
	assert_true(any_matches(a, "wait out the 1 s window"));
	assert_false(any_matches(a, "really lasts"));
	json_decref(a);

	/* A 6.19+ listener whose TCP_RTO_MAX_MS shortens 7 s to 3 s: both said. */
	in.defer_s = 7; in.defer_real_ms = 3000; in.rto_max_ms = 1000;
	a = json_array();
	sa_listener_advice(&in, a);
	assert_true(any_matches(a, "TCP_DEFER_ACCEPT=7 s: greeting-first clients wait out the 3 s window"));
	assert_true(any_matches(a, "The window really lasts 3 s (TCP_RTO_MAX_MS 1000)"));
	json_decref(a);
	in.defer_real_ms = 7000; in.rto_max_ms = 120000;
	a = json_array();
	sa_listener_advice(&in, a);
	assert_true(any_matches(a, "wait out the 7 s window"));
	assert_false(any_matches(a, "really lasts"));
	json_decref(a);

	memset(&in, 0, sizeof in);
	in.accepts = 8; in.queue_full_seen = 12; in.backlog = 3; in.peak_waiting = 4;
	a = json_array();
	sa_listener_advice(&in, a);
	assert_true(any_matches(a, "seen full at 12 accepts (room for 4, backlog 3, peak 4 waiting)"));
	assert_true(any_matches(a, "SYNs were likely dropped"));
	assert_true(any_matches(a, "Fix: backlog 8 or more"));
	json_decref(a);

	memset(&in, 0, sizeof in);
	in.accepts = 5; in.defer_s = 1; in.first_client = 5; in.ns_valid = 1;
	in.has_defer_drop = 1; in.defer_drop = 0; in.has_cookies_recv = 1; in.cookies_recv = 0;
	a = json_array();
	sa_listener_advice(&in, a);
	assert_true(any_matches(a, "TCPDeferAcceptDrop did not rise"));
	assert_false(any_matches(a, "SyncookiesRecv rose"));
	json_decref(a);

	/* Nothing known, nothing said. */
	memset(&in, 0, sizeof in);
	a = json_array();
	assert_int_equal(sa_listener_advice(&in, a), 0);
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_netstat),
		cmocka_unit_test(absent_is_absent),
		cmocka_unit_test(malformed),
		cmocka_unit_test(live_proc),
		cmocka_unit_test(empty_cause),
		cmocka_unit_test(queue_full),
		cmocka_unit_test(bytes_from_tcpinfo),
		cmocka_unit_test(route_table),
		cmocka_unit_test(judge_table),
		cmocka_unit_test(advice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
