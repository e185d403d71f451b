/*
 * test_report.c: `sockaudit report`'s gathering, fed lines directly:
 * histogram bucket edges, skipped lines, finding counts merged from events
 * and summaries, listeners keyed by (pid, fd, address), wrong field types.
 * Linked with the cli objects (mk/cli.mk), not with the shim.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/report.h"

static void feed(struct rp_state *st, const char *line)
{
	rp_feed_line(st, line, strlen(line));
}

static void test_buckets(void **unused)
{
	assert_int_equal(sa_conn_bucket(0), 0);
	assert_int_equal(sa_conn_bucket(9.99), 0);
	assert_int_equal(sa_conn_bucket(10), 1);
	assert_int_equal(sa_conn_bucket(499.9), 2);
	assert_int_equal(sa_conn_bucket(999.9), 3);
	assert_int_equal(sa_conn_bucket(1000), 4);      /* one SYN retransmission */
	assert_int_equal(sa_conn_bucket(2040), 5);      /* two */
	assert_int_equal(sa_conn_bucket(3070), 6);      /* three */
	assert_int_equal(sa_conn_bucket(3500), 7);
	assert_string_equal(sa_conn_bucket_names[4], "1-1.5s");
}

static void test_skipped(void **unused)
{
	struct rp_state st;

	rp_state_init(&st);
	feed(&st, "not json");
	feed(&st, "{\"event\":\"init\"");            /* cut short */
	feed(&st, "[1,2]");                           /* JSON, not an object */
	feed(&st, "   ");                             /* blank: not counted */
	feed(&st, "{\"event\":\"init\",\"pid\":5}\r");
	assert_int_equal(st.lines, 4);
	assert_int_equal(st.skipped, 3);
	assert_int_equal(st.not_object, 1);
	assert_int_equal(st.events, 1);
	assert_int_equal(st.nprocs, 1);
	assert_int_equal(st.procs[0].pid, 5);
	rp_state_free(&st);
}

static long finding_count(const struct rp_state *st, const char *code)
{
	size_t i;

	for (i = 0; i < st->nfinds; i++)
		if (strcmp(st->finds[i].code, code) == 0)
			return st->finds[i].count;
	return -1;
}

static void test_findings_merge(void **unused)
{
	struct rp_state st;

	rp_state_init(&st);
	/* pid 1: two events, summary says 5 (3 suppressed): 5. */
	feed(&st, "{\"event\":\"connect\",\"pid\":1,\"findings\":[\"slow_connect\",\"syn_retransmitted\"],\"msg\":\"both\"}");
	feed(&st, "{\"event\":\"connect\",\"pid\":1,\"findings\":[\"slow_connect\"],\"msg\":\"slow only\"}");
	feed(&st, "{\"event\":\"summary\",\"pid\":1,\"findings\":{\"slow_connect\":5}}");
	/* pid 2: no summary, one event: 1. */
	feed(&st, "{\"event\":\"connect\",\"pid\":2,\"findings\":[\"slow_connect\"]}");
	/* pid 3: summary lower than events seen: events win. */
	feed(&st, "{\"event\":\"listen\",\"pid\":3,\"fd\":4,\"findings\":[\"backlog_clamped\"]}");
	feed(&st, "{\"event\":\"listen\",\"pid\":3,\"fd\":4,\"findings\":[\"backlog_clamped\"]}");
	feed(&st, "{\"event\":\"summary\",\"pid\":3,\"findings\":{\"backlog_clamped\":1,\"x\":\"bad\"}}");
	rp_finish(&st);
	assert_int_equal(finding_count(&st, "slow_connect"), 6);
	assert_int_equal(finding_count(&st, "syn_retransmitted"), 1);
	assert_int_equal(finding_count(&st, "backlog_clamped"), 2);
	assert_int_equal(finding_count(&st, "x"), -1);
	/* Sorted by count; the msg from the event with only that code. */
	assert_string_equal(st.finds[0].code, "slow_connect");
	assert_string_equal(st.finds[0].msg, "slow only");
	rp_state_free(&st);
}

static void test_listeners(void **unused)
{
	struct rp_state st;

	rp_state_init(&st);
	feed(&st, "{\"event\":\"listen\",\"pid\":1,\"fd\":6,\"local\":\"127.0.0.1:80\",\"backlog_requested\":511,\"backlog_effective\":128}");
	feed(&st, "{\"event\":\"setsockopt\",\"pid\":1,\"fd\":6,\"opt\":\"TCP_DEFER_ACCEPT\",\"requested\":10,\"effective\":15,\"requested_s\":10,\"effective_s\":15,\"ret\":0}");
	feed(&st, "{\"event\":\"accept\",\"pid\":1,\"listen_fd\":6,\"findings\":[\"empty_accept_syncookie\"]}");
	feed(&st, "{\"event\":\"listener_stats\",\"ts\":1764442800,\"pid\":1,\"listen_fd\":6,\"local\":\"127.0.0.1:80\",\"accepts\":1}");
	feed(&st, "{\"event\":\"listener_stats\",\"ts\":1764442801,\"pid\":1,\"listen_fd\":6,\"local\":\"127.0.0.1:80\",\"accepts\":9}");
	/* The same fd number reused for another address: another listener. */
	feed(&st, "{\"event\":\"listen\",\"pid\":1,\"fd\":6,\"local\":\"127.0.0.1:81\",\"backlog_requested\":\"bad\"}");
	/* Wrong types everywhere: ignored, no listener without an fd. */
	feed(&st, "{\"event\":\"listen\",\"pid\":1,\"fd\":\"6\"}");
	feed(&st, "{\"event\":\"summary\",\"pid\":1,\"listeners\":[1,null,{\"listen_fd\":[]}]}");
	rp_finish(&st);
	assert_int_equal(st.nlsts, 2);
	assert_int_equal(st.lsts[0].backlog_requested, 511);
	assert_int_equal(st.lsts[0].backlog_effective, 128);
	assert_true(st.lsts[0].have_defer_req && st.lsts[0].defer_req_s == 10);
	assert_true(st.lsts[0].have_defer_eff && st.lsts[0].defer_eff_s == 15);
	assert_int_equal(st.lsts[0].empty_syncookie, 1);
	assert_int_equal(json_integer_value(json_object_get(st.lsts[0].stats, "accepts")), 9);
	assert_string_equal(st.lsts[1].local, "127.0.0.1:81");
	assert_false(st.lsts[1].have_backlog_req);
	/* The TCP_DEFER_ACCEPT 10 -> 15 difference is in the option table. */
	assert_int_equal(st.ndiffs, 1);
	assert_string_equal(st.diffs[0].opt, "TCP_DEFER_ACCEPT");
	rp_state_free(&st);
}

static void test_connects(void **unused)
{
	struct rp_state st;

	rp_state_init(&st);
	feed(&st, "{\"event\":\"connect\",\"pid\":1,\"connect_ms\":1010,\"syn_retrans\":1,\"ret\":0}");
	feed(&st, "{\"event\":\"connect\",\"pid\":1,\"connect_ms\":0.1,\"ret\":-1,\"errno\":\"ECONNREFUSED\"}");
	feed(&st, "{\"event\":\"connect\",\"pid\":1,\"connect_ms\":\"x\",\"syn_retrans\":1e30}");
	feed(&st, "{\"event\":\"summary\",\"pid\":1,\"connect_hist\":{\"1-1.5s\":4,\"2.5-3.5s\":2,\"<10ms\":\"x\"},\"syn_retrans_total\":8}");
	feed(&st, "{\"event\":\"summary\",\"pid\":2,\"connect_hist\":{\"1-1.5s\":1}}");
	rp_finish(&st);
	assert_int_equal(st.conn.logged, 3);
	assert_int_equal(st.conn.ok, 2);
	assert_int_equal(st.conn.failed, 1);
	assert_int_equal(st.conn.hist[4], 1);
	assert_int_equal(st.conn.hist[0], 1);
	assert_int_equal(st.conn.syn_retrans[1], 1);
	assert_true(st.conn.have_sum_hist);
	assert_int_equal(st.conn.sum_hist[4], 5);
	assert_int_equal(st.conn.sum_hist[6], 2);
	assert_int_equal(st.conn.sum_hist[0], 0);
	assert_int_equal(st.conn.syn_retrans_total, 8);
	rp_state_free(&st);
}

/* The fast scanner and jansson read the same fields: each line is fed as
 * is (scanner) and with an escape in a field the report ignores (which
 * sends it to jansson); both states must agree. */
static void test_scan_same_as_jansson(void **unused)
{
	static const char *const lines[] = {
		"{\"ts\":1700000000.5,\"event\":\"connect\",\"pid\":7,\"comm\":\"c\",\"connect_ms\":1013.2,"
		"\"syn_retrans\":1,\"ret\":0,\"findings\":[\"slow_connect\",\"syn_retransmitted\"],\"msg\":\"m\",\"x\":\"%s\"}",
		"{\"ts\":1700000001,\"event\":\"connect\",\"pid\":7,\"comm\":\"c\",\"ret\":-1,\"errno\":\"ECONNREFUSED\",\"x\":\"%s\"}",
		"{\"ts\":1700000002,\"event\":\"accept\",\"pid\":8,\"comm\":\"s\",\"listen_fd\":3,\"x\":\"%s\","
		"\"findings\":[\"accept_queue_full\", 5, \"empty_accept_syncookie\"], \"nested\":{\"a\":[1,{\"b\":null}]}}",
		"{\"ts\":1700000003,\"event\":\"accept\",\"pid\":8,\"comm\":\"s\",\"listen_fd\":\"3\",\"x\":\"%s\"}",
		"{\"ts\":1700000004,\"event\":\"accept\",\"pid\":8,\"listen_fd\":3,\"x\":\"%s\"",  /* cut short */
		"{\"ts\":1700000005,\"event\":\"connect\",\"pid\":01,\"x\":\"%s\"}",               /* not JSON */
	};
	struct rp_state a, b;
	char buf[512];
	size_t i;

	rp_state_init(&a);
	rp_state_init(&b);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct log_ev ev;

		snprintf(buf, sizeof(buf), lines[i], "plain");
		feed(&a, buf);
		if (i < 4) {
			assert_int_equal(log_scan(buf, strlen(buf), &ev), 1);
		}
		snprintf(buf, sizeof(buf), lines[i], "esc\\u0041");
		assert_int_equal(log_scan(buf, strlen(buf), &ev), 0);
		snprintf(buf, sizeof(buf), lines[i], "esc\\u0041");
		feed(&b, buf);
	}
	assert_int_equal(a.lines, b.lines);
	assert_int_equal(a.events, 4);
	assert_int_equal(a.events, b.events);
	assert_int_equal(a.skipped, b.skipped);
	assert_int_equal(a.conn.logged, b.conn.logged);
	assert_int_equal(a.conn.ok, 1);
	assert_int_equal(a.conn.failed, b.conn.failed);
	assert_int_equal(a.conn.hist[4], 1);
	assert_int_equal(a.conn.hist[4], b.conn.hist[4]);
	assert_int_equal(a.conn.syn_retrans[1], b.conn.syn_retrans[1]);
	assert_int_equal(a.nlsts, 1);
	assert_int_equal(a.nlsts, b.nlsts);
	assert_int_equal(a.lsts[0].accepts_logged, 1);
	assert_int_equal(a.lsts[0].accepts_logged, b.lsts[0].accepts_logged);
	assert_int_equal(a.lsts[0].accept_queue_full, b.lsts[0].accept_queue_full);
	assert_int_equal(a.lsts[0].empty_syncookie, 1);
	rp_finish(&a);
	rp_finish(&b);
	assert_int_equal(a.nfinds, 4);
	assert_int_equal(a.nfinds, b.nfinds);
	for (i = 0; i < a.nfinds; i++) {
		assert_string_equal(a.finds[i].code, b.finds[i].code);
		assert_int_equal(a.finds[i].count, b.finds[i].count);
	}
	rp_state_free(&a);
	rp_state_free(&b);
}

/* The whole text report of st, as a string the test frees. */
static char *print_all(struct rp_state *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	rp_finish(st);
	rp_print(st, f, 0);
	fclose(f);
	return buf;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay++;
	}
	return n;
}

/* A line carrying two findings: each code is explained by its own text,
 * and the joined msg is not quoted as either one's example. */
static void test_explanation_own(void **unused)
{
	struct rp_state st;
	char *r;

	rp_state_init(&st);
	feed(&st, "{\"ts\":1700000000,\"event\":\"connect\",\"pid\":1,\"comm\":\"c\",\"ret\":0,"
		  "\"connect_ms\":2040,\"syn_retrans\":2,\"findings\":[\"syn_retransmitted\",\"slow_connect\"],"
		  "\"msg\":\"JOINED-SYN-SENTENCE. JOINED-SLOW-SENTENCE.\"}");
	r = print_all(&st);
	assert_null(strstr(r, "JOINED-SYN-SENTENCE"));
	assert_non_null(strstr(r, sa_finding_text("slow_connect")));
	assert_non_null(strstr(r, sa_finding_text("syn_retransmitted")));
	free(r);
	rp_state_free(&st);
	/* alone on its line, the msg is that finding's evidence */
	rp_state_init(&st);
	feed(&st, "{\"ts\":1700000000,\"event\":\"listen\",\"pid\":1,\"fd\":3,\"findings\":[\"backlog_clamped\"],"
		  "\"msg\":\"listen(511) was clamped to 128.\"}");
	r = print_all(&st);
	assert_non_null(strstr(r, "e.g. listen(511) was clamped to 128."));
	free(r);
	rp_state_free(&st);
}

/* The top ranks by seconds lost before counts. */
static void test_top_ranked(void **unused)
{
	struct rp_state st;
	char *r, *a, *b;
	int i;

	rp_state_init(&st);
	for (i = 0; i < 10; i++)
		feed(&st, "{\"ts\":1700000000,\"event\":\"setsockopt\",\"pid\":1,\"ret\":0,"
			  "\"findings\":[\"option_adjusted\"]}");
	feed(&st, "{\"ts\":1700000001,\"event\":\"connect\",\"pid\":1,\"ret\":0,\"connect_ms\":3070,"
		  "\"findings\":[\"syn_retransmitted\"]}");
	r = print_all(&st);
	assert_int_equal(st.ntop, 2);
	assert_string_equal(st.finds[st.top[0]].code, "syn_retransmitted");
	/* The slow connect is a cause (its listener is not in the log), and
	 * its finding is not ranked again beside it. */
	assert_int_equal(st.nitems, 2);
	assert_true(st.items[0].is_cause);
	a = strstr(r, "1. slow connects, listener not joined: 1 connect to (peer unknown), 3.1 s");
	b = strstr(r, "2. option_adjusted: 10 time(s)");
	assert_null(strstr(r, ". syn_retransmitted: 1 time(s)"));
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	assert_true(strstr(r, "== Fix first") < strstr(r, "== Processes"));
	free(r);
	rp_state_free(&st);
}

/* A listener at the peer address: joined in the clients' namespace only
 * when the times match; never across namespaces on a loopback address;
 * across namespaces (or hosts) on the exact non-loopback address. */
#define INIT(pid, ns) "{\"ts\":1700000000,\"event\":\"init\",\"pid\":" #pid ",\"comm\":\"p\",\"level\":\"info\"," \
	"\"kernel\":\"6.8\",\"tcp_syn_linear_timeouts\":4,\"netns\":" #ns ",\"nodename\":\"h\"," \
	"\"boot_id\":\"00000000-0000-0000-0000-000000000001\"}"
static struct rp_state *join_case(struct rp_state *st, const char *addr, int client_ns, double accept_ts,
				  int client_boot)
{
	char line[600];

	rp_state_init(st);
	feed(st, INIT(10, 111));
	snprintf(line, sizeof line, "{\"ts\":1700000000.5,\"event\":\"listen\",\"pid\":10,\"comm\":\"srv\","
		 "\"fd\":3,\"local\":\"%s\",\"backlog_requested\":1,\"backlog_effective\":1,\"queue_capacity\":2}", addr);
	feed(st, line);
	snprintf(line, sizeof line, "{\"ts\":%.3f,\"event\":\"accept\",\"pid\":10,\"comm\":\"srv\",\"listen_fd\":3,"
		 "\"queue_ms\":900,\"queue_len\":1,\"queue_capacity\":2,\"findings\":[\"accept_queue_full\"]}", accept_ts);
	feed(st, line);
	snprintf(line, sizeof line, "{\"ts\":1700000000,\"event\":\"init\",\"pid\":20,\"comm\":\"cli\",\"level\":\"info\","
		 "\"kernel\":\"6.8\",\"netns\":%d,\"nodename\":\"h\",\"boot_id\":\"00000000-0000-0000-0000-00000000000%d\"}",
		 client_ns, client_boot);
	feed(st, line);
	/* Started at 1700000001.0, its first SYN dropped then, resent at +1 s. */
	snprintf(line, sizeof line, "{\"ts\":1700000002.01,\"event\":\"connect\",\"pid\":20,\"comm\":\"cli\","
		 "\"peer\":\"%s\",\"ret\":0,\"connect_ms\":1010,\"syn_retrans\":1,"
		 "\"findings\":[\"syn_retransmitted\",\"slow_connect\"]}", addr);
	feed(st, line);
	rp_finish(st);
	return st;
}

/* One figure for one fix: the listener's own lines asked for more
 * (backlog_needed 12) than the joined connects do (4): the cause says 12. */
static void test_join_one_figure(void **unused)
{
	struct rp_state st;
	const struct rp_cause *c;

	rp_state_init(&st);
	feed(&st, INIT(10, 111));
	feed(&st, "{\"ts\":1700000000.5,\"event\":\"listen\",\"pid\":10,\"comm\":\"srv\",\"fd\":3,"
		  "\"local\":\"127.0.0.1:18400\",\"backlog_requested\":1,\"backlog_effective\":1,\"queue_capacity\":2}");
	feed(&st, "{\"ts\":1700000001.5,\"event\":\"accept\",\"pid\":10,\"comm\":\"srv\",\"listen_fd\":3,"
		  "\"queue_ms\":900,\"queue_len\":1,\"queue_capacity\":2,\"findings\":[\"accept_queue_full\"]}");
	feed(&st, "{\"ts\":1700000003,\"event\":\"listener_stats\",\"pid\":10,\"comm\":\"srv\",\"listen_fd\":3,"
		  "\"local\":\"127.0.0.1:18400\",\"backlog\":1,\"queue_full_seen\":3,\"peak_waiting\":6,\"backlog_needed\":12}");
	feed(&st, "{\"ts\":1700000000,\"event\":\"init\",\"pid\":20,\"comm\":\"cli\",\"level\":\"info\","
		  "\"kernel\":\"6.8\",\"netns\":111,\"nodename\":\"h\",\"boot_id\":\"00000000-0000-0000-0000-000000000001\"}");
	feed(&st, "{\"ts\":1700000002.01,\"event\":\"connect\",\"pid\":20,\"comm\":\"cli\",\"peer\":\"127.0.0.1:18400\","
		  "\"ret\":0,\"connect_ms\":1010,\"syn_retrans\":1,\"findings\":[\"syn_retransmitted\",\"slow_connect\"]}");
	rp_finish(&st);
	assert_int_equal(st.join.ncauses, 1);
	c = &st.join.causes[0];
	assert_true(c->joined);
	assert_int_equal(c->need_own, 12);
	assert_int_equal(c->need, 12);
	assert_non_null(strstr(c->sentence, "raise its backlog to at least 12"));
	rp_state_free(&st);
}

static void test_join(void **unused)
{
	struct rp_state st;
	const struct rp_cause *c;

	/* Same namespace, the queue full while the first SYN was sent. */
	c = &join_case(&st, "127.0.0.1:18400", 111, 1700000001.5, 1)->join.causes[0];
	assert_int_equal(st.join.ncauses, 1);
	assert_true(c->joined);
	assert_int_equal(st.lsts[c->lst].pid, 10);
	assert_non_null(strstr(c->sentence, "srv[10]'s listener at 127.0.0.1:18400 (backlog 1, room 2) was full"));
	assert_non_null(strstr(c->sentence, "raise its backlog to at least 4"));
	assert_true(st.items[0].is_cause);
	assert_int_equal(st.nitems, 1);  /* the four findings are that one cause */
	rp_state_free(&st);
	/* Same namespace, but the listener's trouble came seconds later. */
	c = &join_case(&st, "127.0.0.1:18400", 111, 1700000009, 1)->join.causes[0];
	assert_false(c->joined);
	assert_non_null(strstr(c->sentence, "none of its lines shows its queue full"));
	rp_state_free(&st);
	/* Another namespace, loopback: never that listener. */
	c = &join_case(&st, "127.0.0.1:18400", 222, 1700000001.5, 1)->join.causes[0];
	assert_false(c->joined);
	assert_int_equal(c->lst, -1);
	assert_int_equal(c->lst_elsewhere, 1);
	assert_null(strstr(c->sentence, "srv[10]"));
	rp_state_free(&st);
	/* The same namespace inode on another boot (or host): another place. */
	c = &join_case(&st, "127.0.0.1:18400", 111, 1700000001.5, 2)->join.causes[0];
	assert_false(c->joined);
	assert_int_equal(c->lst_elsewhere, 1);
	rp_state_free(&st);
	/* Another namespace, the exact address: joined, as across hosts. */
	c = &join_case(&st, "10.1.2.3:80", 222, 1700000001.5, 1)->join.causes[0];
	assert_true(c->joined);
	rp_state_free(&st);
}

/* No empty section, no all-zero histogram or counter line. */
static void test_no_empty_sections(void **unused)
{
	struct rp_state st;
	char *r;

	rp_state_init(&st);
	feed(&st, "{\"ts\":1700000000,\"event\":\"init\",\"pid\":1,\"comm\":\"x\",\"level\":\"info\"}");
	feed(&st, "{\"ts\":1700000001,\"event\":\"summary\",\"pid\":1,\"comm\":\"x\",\"connects\":"
		  "{\"ok\":0,\"failed\":0,\"abandoned\":0},\"syn_retrans_total\":0,\"connect_hist\":"
		  "{\"<10ms\":0,\"1-1.5s\":0},\"netns_counters\":{\"ListenOverflows\":0},\"quickack\":"
		  "{\"sets\":0},\"dropped\":0,\"suppressed\":0,\"connect_ms\":{\"p50\":0,\"max\":0,\"n\":0}}");
	r = print_all(&st);
	assert_null(strstr(r, "== Connects"));
	assert_null(strstr(r, "== Findings"));
	assert_null(strstr(r, "== Option read-back"));
	assert_null(strstr(r, "== Listeners"));
	assert_null(strstr(r, "== Network namespace"));
	assert_null(strstr(r, "all 0"));
	assert_null(strstr(r, "none"));
	assert_null(strstr(r, "|"));
	assert_null(strstr(r, "TCP_QUICKACK"));
	assert_null(strstr(r, "connect_ms"));
	assert_non_null(strstr(r, "nothing flagged"));
	free(r);
	rp_state_free(&st);
}

/* The namespace-counters section is capped like Processes and leaves out
 * processes whose counters were all 0. */
static void test_netns_capped(void **unused)
{
	struct rp_state st;
	char line[256], *r;
	int i;

	rp_state_init(&st);
	for (i = 0; i < 2000; i++) {
		snprintf(line, sizeof(line), "{\"event\":\"summary\",\"pid\":%d,\"comm\":\"w\","
			 "\"netns_counters\":{\"ListenOverflows\":%d}}", 1000 + i, i < 100 ? 3 : 0);
		feed(&st, line);
	}
	r = print_all(&st);
	assert_non_null(strstr(r, "== Network namespace"));
	assert_int_equal(count_of(r, ": ListenOverflows 3"), 60);
	assert_non_null(strstr(r, "... 40 more processes with counters"));
	assert_null(strstr(r, ": all 0"));
	free(r);
	rp_state_free(&st);
}

/* The page's log-scale buckets keep 1, 2 and 3 s connects apart, and the
 * SYN schedule follows the init line's tcp_syn_linear_timeouts. */
static void test_logb_and_schedule(void **unused)
{
	struct rp_state st;
	double t[6];
	long lin = -1;

	assert_int_equal(rp_logb(0.05), 0);
	assert_int_equal(rp_logb(0.1), 1);
	assert_int_equal(rp_logb(99999), RP_LOGB - 2);
	assert_int_equal(rp_logb(1e6), RP_LOGB - 1);
	assert_true(rp_logb(1011) != rp_logb(2040));
	assert_true(rp_logb(2040) != rp_logb(3070));
	assert_true(rp_logb_lo(rp_logb(2040)) <= 2040 && rp_logb_lo(rp_logb(2040) + 1) > 2040);
	rp_state_init(&st);
	assert_int_equal(rp_syn_schedule(&st, t, 6, &lin), 0);     /* no init line */
	feed(&st, "{\"event\":\"init\",\"pid\":1,\"kernel\":\"6.18\",\"tcp_syn_linear_timeouts\":4}");
	assert_int_equal(rp_syn_schedule(&st, t, 6, &lin), 6);
	assert_int_equal(lin, 4);
	assert_true(t[0] == 1 && t[1] == 2 && t[2] == 3 && t[3] == 4 && t[4] == 5 && t[5] == 7);
	rp_state_free(&st);
	rp_state_init(&st);
	feed(&st, "{\"event\":\"init\",\"pid\":1,\"kernel\":\"5.10\"}");  /* before 6.5 */
	assert_int_equal(rp_syn_schedule(&st, t, 4, &lin), 4);
	assert_int_equal(lin, 0);
	assert_true(t[0] == 1 && t[1] == 3 && t[2] == 7 && t[3] == 15);
	rp_state_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_skipped),
		cmocka_unit_test(test_findings_merge),
		cmocka_unit_test(test_listeners),
		cmocka_unit_test(test_connects),
		cmocka_unit_test(test_scan_same_as_jansson),
		cmocka_unit_test(test_explanation_own),
		cmocka_unit_test(test_top_ranked),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_join_one_figure),
		cmocka_unit_test(test_no_empty_sections),
		cmocka_unit_test(test_netns_capped),
		cmocka_unit_test(test_logb_and_schedule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
