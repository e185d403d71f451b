/* Unit tests for shim/audit/connect.c: when a connect is complete and how
 * it ended, its findings, the histogram buckets, and the summary counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "audit/connect.h"

static int setup(void **state)
{
	struct sa_config c;

	memset(&c, 0, sizeof c);
	c.level = SA_LEVEL_WARN;        /* keep the test output clean */
	c.slow_connect_ms = 500;
	sa_runtime_configure(&c, "test_connect");
	return 0;
}

static void buckets(void **state)
{
	assert_string_equal(sa_conn_bucket_names[sa_conn_bucket(0)], "<10ms");
	assert_string_equal(sa_conn_bucket_names[sa_conn_bucket(9.99)], "<10ms");
	assert_string_equal(sa_conn_bucket_names[sa_conn_bucket(10)], "10-100ms");
	assert_string_equal(sa_conn_bucket_names[sa_conn_bucket(499)], "100-500ms");
	assert_string_equal(sa_conn_bucket_names[sa_conn_bucket(500)], "0.5-1s");
	/* The 1, 2 and 3 s SYN-retransmission clusters land in separate buckets. */
	assert_string_equal(sa_conn_bucket_names[sa_conn_bucket(1001.2)], "1-1.5s");
	assert_string_equal(sa_conn_bucket_names[sa_conn_bucket(2070)], "1.5-2.5s");
	assert_string_equal(sa_conn_bucket_names[sa_conn_bucket(3110)], "2.5-3.5s");
	assert_string_equal(sa_conn_bucket_names[sa_conn_bucket(7003)], ">3.5s");
}

static void judge_sockerr(void **state)
{
	int e;

	assert_int_equal(sa_conn_judge_sockerr(0, SA_TCP_ESTABLISHED, &e), SA_CONN_OK);
	/* SO_ERROR 0 during the handshake is "no error yet", not completion. */
	assert_int_equal(sa_conn_judge_sockerr(0, SA_TCP_SYN_SENT, &e), SA_CONN_PENDING);
	assert_int_equal(sa_conn_judge_sockerr(ECONNREFUSED, SA_TCP_CLOSE, &e), SA_CONN_FAILED);
	assert_int_equal(e, ECONNREFUSED);
	assert_int_equal(sa_conn_judge_sockerr(ETIMEDOUT, SA_TCP_UNKNOWN, &e), SA_CONN_FAILED);
	assert_int_equal(e, ETIMEDOUT);
	assert_int_equal(sa_conn_judge_sockerr(0, SA_TCP_CLOSE, &e), SA_CONN_FAILED);
	assert_int_equal(e, 0);
	assert_int_equal(sa_conn_judge_sockerr(0, SA_TCP_UNKNOWN, &e), SA_CONN_OK);
	assert_int_equal(sa_conn_judge_sockerr(0, 8 /* CLOSE_WAIT */, &e), SA_CONN_OK);
}

static void judge_io(void **state)
{
	int e;

	assert_int_equal(sa_conn_judge_io(-1, EAGAIN, SA_TCP_SYN_SENT, &e), SA_CONN_PENDING);
	assert_int_equal(sa_conn_judge_io(-1, EINTR, SA_TCP_UNKNOWN, &e), SA_CONN_PENDING);
	assert_int_equal(sa_conn_judge_io(5, 0, SA_TCP_ESTABLISHED, &e), SA_CONN_OK);
	assert_int_equal(sa_conn_judge_io(0, 0, SA_TCP_UNKNOWN, &e), SA_CONN_OK);
	/* Data queued with the SYN (Fast Open) proves nothing yet. */
	assert_int_equal(sa_conn_judge_io(5, 0, SA_TCP_SYN_SENT, &e), SA_CONN_PENDING);
	assert_int_equal(sa_conn_judge_io(-1, ECONNREFUSED, SA_TCP_CLOSE, &e), SA_CONN_FAILED);
	assert_int_equal(e, ECONNREFUSED);
	assert_int_equal(sa_conn_judge_io(-1, ENOTCONN, SA_TCP_UNKNOWN, &e), SA_CONN_FAILED);
	assert_int_equal(e, ENOTCONN);
	/* A call error on an established socket is not a connect failure. */
	assert_int_equal(sa_conn_judge_io(-1, EFAULT, SA_TCP_ESTABLISHED, &e), SA_CONN_OK);
}

static void judge_reconnect(void **state)
{
	int e;

	assert_int_equal(sa_conn_judge_reconnect(0, 0, &e), SA_CONN_OK);
	assert_int_equal(sa_conn_judge_reconnect(-1, EISCONN, &e), SA_CONN_OK);
	assert_int_equal(sa_conn_judge_reconnect(-1, EALREADY, &e), SA_CONN_PENDING);
	assert_int_equal(sa_conn_judge_reconnect(-1, EINPROGRESS, &e), SA_CONN_PENDING);
	assert_int_equal(sa_conn_judge_reconnect(-1, ECONNREFUSED, &e), SA_CONN_FAILED);
	assert_int_equal(e, ECONNREFUSED);
}

static void findings(void **state)
{
	struct sa_findings f;

	memset(&f, 0, sizeof f);
	sa_conn_findings(&f, SA_CONN_OK, 30, 0, 0, 500, 0, NULL);
	assert_int_equal(f.n, 0);

	memset(&f, 0, sizeof f);
	sa_conn_findings(&f, SA_CONN_OK, 2045, 2, 0, 500, 0, NULL);
	assert_int_equal(f.n, 2);
	assert_string_equal(f.codes[0], "syn_retransmitted");
	assert_string_equal(f.codes[1], "slow_connect");
	assert_non_null(strstr(f.msg, "2 SYN retransmissions (tcpi_total_retrans): completed after 2045 ms"));
	/* The default schedule: resends at 1 and 2 s, so 2 s of SYN timeouts. */
	assert_non_null(strstr(f.msg, "2.0 s of it in SYN timeouts"));
	assert_non_null(strstr(f.msg, "check the server's backlog"));
	assert_null(strstr(f.msg, "probably full"));
	assert_non_null(strstr(f.msg, "SOCKAUDIT_SLOW_CONNECT_MS=500"));

	memset(&f, 0, sizeof f);
	sa_conn_findings(&f, SA_CONN_ABANDONED, 1200, 1, 0, 5000, 0, NULL);
	assert_int_equal(f.n, 1);
	assert_non_null(strstr(f.msg, "1 SYN retransmission (tcpi_total_retrans): was given up after 1200 ms, 1.0 s of it"));

	memset(&f, 0, sizeof f);
	sa_conn_findings(&f, SA_CONN_OK, 0.1, 0, 1, 500, 0, NULL);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.codes[0], "defer_on_client_socket");

	memset(&f, 0, sizeof f);
	sa_conn_findings(&f, SA_CONN_OK, 800, -1, 0, 500, 1, NULL);
	assert_int_equal(f.n, 1);
	assert_non_null(strstr(f.msg, "unix_stream_connect() waits only while the listener's queue is full"));
}

/* sa_conn_judge alone: which findings a finished connect carries, and
 * the numbers their words need, as a table. */
static void judge_findings(void **state)
{
	static const struct {
		struct sa_conn_facts in;
		bool syn;
		double due_s;
		enum sa_conn_slow slow;
		enum sa_conn_slow_tail tail;
		bool defer;
	} rows[] = {
		{ { SA_CONN_OK, 30, 0, 0, 500, 0, NULL }, false, 0, SA_CONN_SLOW_NONE, SA_CONN_TAIL_NONE, false },
		/* Linux's schedule: SYNs resent at 1 and 2 s, the second one 2 s in. */
		{ { SA_CONN_OK, 2045, 2, 0, 500, 0, NULL }, true, 2.0, SA_CONN_SLOW_DONE, SA_CONN_TAIL_NONE, false },
		{ { SA_CONN_OK, 600, 0, 0, 500, 0, NULL }, false, 0, SA_CONN_SLOW_DONE, SA_CONN_TAIL_NO_SYN_DROP, false },
		{ { SA_CONN_OK, 800, -1, 0, 500, 1, NULL }, false, 0, SA_CONN_SLOW_DONE, SA_CONN_TAIL_UNIX, false },
		/* slow_ms is inclusive: a connect of exactly 500 ms is slow. */
		{ { SA_CONN_FAILED, 500, -1, 0, 500, 0, NULL }, false, 0, SA_CONN_SLOW_DONE, SA_CONN_TAIL_NONE, false },
		{ { SA_CONN_ABANDONED, 1200, 1, 0, 1000, 0, NULL }, true, 1.0, SA_CONN_SLOW_ABANDONED, SA_CONN_TAIL_NONE, false },
		{ { SA_CONN_INTERRUPTED, 1200, 0, 0, 1000, 1, NULL }, false, 0, SA_CONN_SLOW_INTERRUPTED, SA_CONN_TAIL_NONE, false },
		{ { SA_CONN_OK, 0.1, 0, 1, 500, 0, NULL }, false, 0, SA_CONN_SLOW_NONE, SA_CONN_TAIL_NONE, true },
		{ { SA_CONN_OK, 0.1, 0, -1, 500, 0, NULL }, false, 0, SA_CONN_SLOW_NONE, SA_CONN_TAIL_NONE, false },
	};
	struct sa_conn_verdict v;
	size_t i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		sa_conn_judge(&rows[i].in, &v);
		if (v.syn_retransmitted != rows[i].syn || v.slow != rows[i].slow || v.slow_tail != rows[i].tail ||
		    v.defer_on_client != rows[i].defer || (rows[i].syn && v.syn_last_due_s != rows[i].due_s))
			fail_msg("row %zu: syn %d (%.1f s) slow %d tail %d defer %d", i, v.syn_retransmitted,
				 v.syn_last_due_s, v.slow, v.slow_tail, v.defer_on_client);
	}
}

static json_t *summary(void)
{
	json_t *s = json_object();

	sa_connect_summary(s);
	return s;
}

static json_int_t count(json_t *s, const char *outcome)
{
	return json_integer_value(json_object_get(json_object_get(s, "connects"), outcome));
}

/* The hooks with an fd that is no socket: no TCP_INFO, outcome from the
 * values the program saw. */
static void hooks_and_summary(void **state)
{
	struct sa_sock s;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
	int v;
	socklen_t l = sizeof v;
	json_t *sum;
	uint64_t now = sa_now_ns();

	sa_connect_reset();
	memset(&s, 0, sizeof s);
	s.flags = SA_F_SOCKET;
	s.family = AF_INET;
	s.type = SOCK_STREAM;

	sa_connect_audit(-1, &s, (struct sockaddr *)&a, sizeof a, -1, ECONNREFUSED, 0, 1000000);
	assert_int_equal(s.flags & SA_F_CONNECTING, 0);

	sa_connect_audit(-1, &s, (struct sockaddr *)&a, sizeof a, -1, EINPROGRESS, now, now);
	assert_int_equal(s.flags & (SA_F_CONNECTING | SA_F_WATCH_IO), SA_F_CONNECTING | SA_F_WATCH_IO);
	assert_int_equal(s.conn.peer_len, sizeof a);
	/* Another option, or EAGAIN on a read: still pending. */
	v = 1;
	sa_connect_getsockopt(-1, &s, SOL_SOCKET, SO_TYPE, &v, &l, 0);
	sa_connect_io(-1, &s, SA_IO_READ, -1, EAGAIN);
	assert_true(s.flags & SA_F_CONNECTING);
	/* A second connect() saying EALREADY: still pending. */
	sa_connect_audit(-1, &s, (struct sockaddr *)&a, sizeof a, -1, EALREADY, now, now);
	assert_true(s.flags & SA_F_CONNECTING);
	v = ETIMEDOUT;
	sa_connect_getsockopt(-1, &s, SOL_SOCKET, SO_ERROR, &v, &l, 0);
	assert_int_equal(s.flags & (SA_F_CONNECTING | SA_F_WATCH_IO), 0);

	sa_connect_audit(-1, &s, (struct sockaddr *)&a, sizeof a, 0, 0, 0, 20000000);
	/* A close of a number that is no socket (closed behind our back):
	 * the entry is stale, nothing is reported or counted. */
	sa_connect_audit(-1, &s, (struct sockaddr *)&a, sizeof a, -1, EINPROGRESS, now, now);
	sa_connect_close(-1, &s);
	assert_int_equal(s.flags & SA_F_CONNECTING, 0);
	/* A real pending connect (loopback listener with a full queue drops
	 * its SYN) closed unfinished: abandoned. */
	{
		struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t ll = sizeof la;
		int lfd = socket(AF_INET, SOCK_STREAM, 0), c1, c2;

		assert_true(lfd >= 0);
		assert_int_equal(bind(lfd, (struct sockaddr *)&la, sizeof la), 0);
		assert_int_equal(listen(lfd, 0), 0);
		assert_int_equal(getsockname(lfd, (struct sockaddr *)&la, &ll), 0);
		c1 = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(connect(c1, (struct sockaddr *)&la, sizeof la), 0);
		c2 = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		assert_int_equal(connect(c2, (struct sockaddr *)&la, sizeof la), -1);
		assert_int_equal(errno, EINPROGRESS);
		sa_connect_audit(c2, &s, (struct sockaddr *)&la, sizeof la, -1, EINPROGRESS, now, now);
		sa_connect_close(c2, &s);
		assert_int_equal(s.flags & SA_F_CONNECTING, 0);
		close(c2);
		close(c1);
		close(lfd);
	}

	sum = summary();
	assert_int_equal(count(sum, "failed"), 2);
	assert_int_equal(count(sum, "ok"), 1);
	assert_int_equal(count(sum, "abandoned"), 1);
	assert_int_equal(count(sum, "interrupted"), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(sum, "connect_hist"), "10-100ms")), 1);
	assert_int_equal(json_object_size(json_object_get(sum, "connect_hist")), SA_CONN_NBUCKETS);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(sum, "connect_ms"), "n")), 1);
	assert_non_null(json_object_get(sum, "syn_retrans_total"));
	json_decref(sum);

	sa_connect_reset();
	sum = summary();
	assert_int_equal(count(sum, "failed"), 0);
	json_decref(sum);

	/* A blocking connect interrupted by a signal: counted as interrupted at
	 * once, still followed (the kernel keeps connecting). */
	memset(&s, 0, sizeof s);
	s.flags = SA_F_SOCKET;
	s.family = AF_INET;
	s.type = SOCK_STREAM;
	sa_connect_audit(-1, &s, (struct sockaddr *)&a, sizeof a, -1, EINTR, 0, 1500000000ull);
	assert_true(s.flags & SA_F_CONNECTING);
	assert_int_equal(s.conn.interrupted, 1);
	sum = summary();
	assert_int_equal(count(sum, "interrupted"), 1);
	assert_int_equal(count(sum, "ok"), 0);
	assert_int_equal(count(sum, "abandoned"), 0);
	json_decref(sum);
	assert_string_equal(sa_conn_outcome_name(SA_CONN_INTERRUPTED), "interrupted");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buckets),
		cmocka_unit_test(judge_sockerr),
		cmocka_unit_test(judge_io),
		cmocka_unit_test(judge_reconnect),
		cmocka_unit_test(findings),
		cmocka_unit_test(judge_findings),
		cmocka_unit_test(hooks_and_summary),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
