/* Unit tests for `sockaudit top`'s model (cli/top/model.c) and log
 * follower (cli/top/tail.c): totals and rates from the lines' own
 * numbers, the connect-time buckets, the findings ring, the same model
 * whether the scanner or jansson read a line; a partial line
 * waits for its end, a rotated file is followed, a truncated one re-read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "top/top.h"

static void feed(struct tp_model *m, const char *line)
{
	tp_model_line(m, line, strlen(line));
}

static void listener_totals_and_rate(void **state)
{
	struct tp_model m;
	const struct tp_listener *l;

	tp_model_init(&m);
	feed(&m, "{\"ts\":100,\"event\":\"listen\",\"pid\":7,\"comm\":\"web\",\"fd\":3,\"local\":\"127.0.0.1:80\","
		 "\"backlog_effective\":511,\"queue_capacity\":512,\"defer_accept_s\":1,\"ret\":0}");
	feed(&m, "{\"ts\":101,\"event\":\"listener_stats\",\"pid\":7,\"comm\":\"web\",\"listen_fd\":3,\"local\":\"127.0.0.1:80\","
		 "\"backlog\":511,\"accepts\":10,\"queue_full_seen\":0,\"peak_waiting\":2,\"empty_accepts\":1,"
		 "\"wait_ms\":{\"n\":10,\"p50\":1,\"p95\":2,\"p99\":3,\"max\":4}}");
	feed(&m, "{\"ts\":103,\"event\":\"listener_stats\",\"pid\":7,\"comm\":\"web\",\"listen_fd\":3,\"local\":\"127.0.0.1:80\","
		 "\"backlog\":511,\"accepts\":30,\"queue_full_seen\":4,\"peak_waiting\":512,\"empty_accepts\":1}");
	feed(&m, "{\"ts\":103.5,\"event\":\"accept\",\"pid\":7,\"comm\":\"web\",\"listen_fd\":3,\"local\":\"127.0.0.1:80\","
		 "\"queue_len\":5,\"queue_capacity\":512,\"ret\":9}");
	feed(&m, "not json");
	assert_int_equal(m.nlst, 1);
	l = &m.lst[0];
	assert_string_equal(l->local, "127.0.0.1:80");
	assert_int_equal(l->backlog, 511);
	assert_int_equal(l->accepts, 30);           /* the stats total runs ahead of accept lines */
	assert_true(l->rate > 9.99 && l->rate < 10.01);   /* (30 - 10) / (103 - 101) */
	assert_int_equal(l->full, 4);
	assert_int_equal(l->peak, 512);
	assert_int_equal(l->capacity - l->queue_len, 507);
	assert_int_equal(l->defer_s, 1);
	assert_true(l->wait.have);
	assert_int_equal(m.bad_lines, 1);
	assert_int_equal(m.npids, 1);
	tp_model_free(&m);
}

/* ACC/S while the logs are written: a listener's line each interval while
 * it has traffic; when the lines stop, the rate falls, and is 0 after three
 * intervals without one (it never freezes at the last value). */
static void rate_decays_when_traffic_stops(void **state)
{
	struct tp_model m;
	const struct tp_listener *l;

	tp_model_init(&m);
	feed(&m, "{\"ts\":100,\"event\":\"listener_stats\",\"pid\":7,\"comm\":\"web\",\"listen_fd\":3,"
		 "\"local\":\"127.0.0.1:80\",\"backlog\":511,\"accepts\":100}");
	feed(&m, "{\"ts\":105,\"event\":\"listener_stats\",\"pid\":7,\"comm\":\"web\",\"listen_fd\":3,"
		 "\"local\":\"127.0.0.1:80\",\"backlog\":511,\"accepts\":150}");
	l = &m.lst[0];
	m.now = 106;                                  /* within the interval: the last rate */
	assert_true(tp_listener_rate(&m, l) > 9.99 && tp_listener_rate(&m, l) < 10.01);
	m.now = 115;                                  /* 2 intervals late: 50 accepts over 15 s */
	assert_true(tp_listener_rate(&m, l) > 3.33 && tp_listener_rate(&m, l) < 3.34);
	m.now = 121;                                  /* over 3 intervals: none */
	assert_true(tp_listener_rate(&m, l) == 0);
	m.now = 200;                                  /* a log no longer written: as of its newest line */
	assert_true(tp_listener_rate(&m, l) > 9.99 && tp_listener_rate(&m, l) < 10.01);
	tp_model_free(&m);
}

static void peers_and_findings(void **state)
{
	struct tp_model m;
	const struct tp_peer *p;
	char line[512];
	int i;

	tp_model_init(&m);
	feed(&m, "{\"ts\":200.1,\"event\":\"connect\",\"pid\":8,\"comm\":\"c\",\"peer\":\"10.0.0.1:80\",\"outcome\":\"ok\",\"connect_ms\":0.3}");
	feed(&m, "{\"ts\":200.2,\"event\":\"connect\",\"pid\":8,\"comm\":\"c\",\"peer\":\"10.0.0.1:80\",\"outcome\":\"ok\",\"connect_ms\":1021,"
		 "\"syn_retrans\":1,\"findings\":[\"syn_retransmitted\"],\"msg\":\"1 SYN was retransmitted\"}");
	feed(&m, "{\"ts\":200.3,\"event\":\"connect\",\"pid\":8,\"comm\":\"c\",\"peer\":\"10.0.0.1:80\",\"outcome\":\"failed\",\"connect_ms\":3010,\"syn_retrans\":3}");
	feed(&m, "{\"ts\":201.5,\"event\":\"summary\",\"pid\":8,\"comm\":\"c\"}");
	assert_int_equal(m.npeers, 1);
	p = &m.peers[0];
	assert_int_equal(p->n, 3);
	assert_int_equal(p->failed, 1);
	assert_int_equal(p->syn_retrans, 4);
	assert_int_equal(p->hist[sa_conn_bucket(0.3)], 1);
	assert_int_equal(p->hist[4], 1);           /* 1-1.5 s: one SYN resent */
	assert_int_equal(p->hist[6], 1);           /* 2.5-3.5 s */
	/* 3 connects in the seconds before the newest line's, over 5 s. */
	assert_true(tp_peer_rate(&m, p) > 0.59 && tp_peer_rate(&m, p) < 0.61);
	assert_int_equal(m.nfind, 1);
	assert_string_equal(tp_model_finding(&m, 0)->text, "syn_retransmitted: 1 SYN was retransmitted");
	for (i = 0; i < TP_FIND_MAX + 5; i++) {
		snprintf(line, sizeof line, "{\"ts\":300,\"event\":\"warning\",\"pid\":8,\"findings\":[\"f%d\"]}", i);
		feed(&m, line);
	}
	assert_int_equal(m.nfind, TP_FIND_MAX);
	assert_int_equal(m.findings_total, TP_FIND_MAX + 6);
	assert_string_equal(tp_model_finding(&m, 0)->text, "f5");
	assert_string_equal(tp_model_finding(&m, TP_FIND_MAX - 1)->text, "f204");
	assert_null(tp_model_finding(&m, TP_FIND_MAX));
	tp_model_free(&m);
}

/* 28 listen_overflows lines of one process, its msg changing: one row
 * counting 28 with the latest msg; another process's line is its own row. */
static void findings_grouped(void **state)
{
	struct tp_model m;
	char line[512];
	int i;

	(void)state;
	tp_model_init(&m);
	for (i = 0; i < 28; i++) {
		snprintf(line, sizeof line, "{\"ts\":%d,\"event\":\"listener_stats\",\"pid\":9,\"comm\":\"srv\","
			 "\"findings\":[\"listen_overflows\"],\"msg\":\"ListenOverflows rose by %d\"}", 400 + i, i + 1);
		feed(&m, line);
	}
	feed(&m, "{\"ts\":430,\"event\":\"connect\",\"pid\":10,\"findings\":[\"listen_overflows\"]}");
	assert_int_equal(m.findings_total, 29);
	assert_int_equal(m.nfind, 2);
	assert_int_equal(tp_model_finding(&m, 0)->count, 28);
	assert_int_equal((long)tp_model_finding(&m, 0)->ts, 427);
	assert_string_equal(tp_model_finding(&m, 0)->text, "listen_overflows: ListenOverflows rose by 28");
	assert_int_equal(tp_model_finding(&m, 1)->count, 1);
	tp_model_free(&m);
}

struct got {
	int n;
	char last[256];
};

static void collect(void *ctx, const char *line, size_t len)
{
	struct got *g = ctx;

	g->n++;
	snprintf(g->last, sizeof g->last, "%.*s", (int)len, line);
}

static void append(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void tail_follows(void **state)
{
	char dir[] = "/tmp/sa-top-unit.XXXXXX", a[256], a1[256], spec[256];
	struct tp_tail t;
	struct got g = { 0 };
	char *specs[1] = { spec };

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof a, "%s/log-1.jsonl", dir);
	snprintf(a1, sizeof a1, "%s/log-1.jsonl.1", dir);
	snprintf(spec, sizeof spec, "%s", dir);
	tp_tail_init(&t, specs, 1);
	append(a, "w", "one\ntw");
	tp_tail_poll(&t, collect, &g);
	assert_int_equal(g.n, 1);
	append(a, "a", "o\n");
	tp_tail_poll(&t, collect, &g);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.last, "two");
	/* Rotation: renamed, then a new file at the old name. */
	assert_int_equal(rename(a, a1), 0);
	append(a1, "a", "three\n");
	append(a, "w", "new\n");
	tp_tail_poll(&t, collect, &g);
	assert_int_equal(g.n, 4);                /* three and new, nothing read twice */
	tp_tail_poll(&t, collect, &g);
	assert_int_equal(g.n, 4);
	/* Truncated: read again from its start. */
	append(a, "w", "x\n");
	tp_tail_poll(&t, collect, &g);
	assert_int_equal(g.n, 5);
	assert_string_equal(g.last, "x");
	tp_tail_free(&t);
	/* A %p pattern matches the pid's place. */
	snprintf(spec, sizeof spec, "%s/log-%%p.jsonl", dir);
	memset(&g, 0, sizeof g);
	tp_tail_init(&t, specs, 1);
	tp_tail_poll(&t, collect, &g);
	assert_int_equal(g.n, 1);                /* log-1.jsonl, not log-1.jsonl.1 */
	tp_tail_free(&t);
	unlink(a);
	unlink(a1);
	rmdir(dir);
}

/* The scanner reads plain lines; an escape sends the same line to jansson.
 * Both must leave the same model. */
static void scanned_as_parsed(void **state)
{
	static const char *const lines[] = {
		"{\"ts\":200,\"event\":\"accept\",\"pid\":9,\"comm\":\"%s\",\"listen_fd\":4,\"local\":\"10.0.0.1:80\","
		"\"queue_len\":3,\"queue_capacity\":9,\"ret\":7,\"findings\":[\"accept_queue_full\"],\"msg\":\"m\"}",
		"{\"ts\":201,\"event\":\"connect\",\"pid\":9,\"comm\":\"%s\",\"peer\":\"10.0.0.2:5\",\"outcome\":\"failed\","
		"\"connect_ms\":1200,\"syn_retrans\":1,\"ret\":-1}",
		"{\"ts\":202,\"event\":\"connect\",\"pid\":9,\"comm\":\"%s\",\"peer\":\"10.0.0.3:5\",\"outcome\":\"ok\","
		"\"after_interrupt\":true,\"connect_ms\":5,\"ret\":0}",
	};
	struct tp_model a, b;
	char buf[512];
	size_t i;

	tp_model_init(&a);
	tp_model_init(&b);
	for (i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		snprintf(buf, sizeof buf, lines[i], "web");
		feed(&a, buf);
		snprintf(buf, sizeof buf, lines[i], "w\\u0065b");
		feed(&b, buf);
	}
	assert_int_equal(a.nlst, 1);
	assert_int_equal(b.nlst, 1);
	assert_string_equal(a.lst[0].local, b.lst[0].local);
	assert_int_equal(a.lst[0].queue_len, 3);
	assert_int_equal(b.lst[0].queue_len, 3);
	assert_int_equal(a.lst[0].capacity, b.lst[0].capacity);
	assert_int_equal(a.npeers, 1);              /* the after_interrupt line is not a new connect */
	assert_int_equal(b.npeers, 1);
	assert_int_equal(a.peers[0].failed, 1);
	assert_int_equal(b.peers[0].failed, 1);
	assert_int_equal(a.peers[0].syn_retrans, b.peers[0].syn_retrans);
	assert_memory_equal(a.peers[0].hist, b.peers[0].hist, sizeof a.peers[0].hist);
	assert_int_equal(a.nfind, 1);
	assert_int_equal(b.nfind, 1);
	assert_string_equal(a.find[0].text, b.find[0].text);
	assert_string_equal(a.find[0].comm, "web");
	assert_string_equal(b.find[0].comm, "web");
	tp_model_free(&a);
	tp_model_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(listener_totals_and_rate),
		cmocka_unit_test(rate_decays_when_traffic_stops),
		cmocka_unit_test(peers_and_findings),
		cmocka_unit_test(findings_grouped),
		cmocka_unit_test(scanned_as_parsed),
		cmocka_unit_test(tail_follows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
