/* Unit tests for cli/metrics/: the log scanner reads the fields the
 * metrics use as jansson reads them, or declines;
 * per process the larger of lines and totals, summed over processes; a
 * pid seen again after its summary is a new process; the exposition's
 * histogram is cumulative and ends at _count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics/metrics.h"

static const char *const lines[] = {
	"{\"ts\":1.5,\"event\":\"accept\",\"schema\":1,\"pid\":7,\"tid\":7,\"comm\":\"nginx\",\"severity\":\"info\",\"fd\":9,\"listen_fd\":6,\"local\":\"127.0.0.1:80\",\"peer\":\"127.0.0.1:5000\",\"wait_ms\":0.004,\"queue_ms\":null,\"ret\":9}",
	"{\"ts\":1.5,\"event\":\"accept\",\"pid\":7,\"comm\":\"nginx\",\"listen_fd\":6,\"ret\":-1,\"errno\":\"EMFILE\",\"findings\":[\"fd_limit\",\"x\"],\"msg\":\"m\"}",
	"{\"ts\":2,\"event\":\"connect\",\"pid\":8,\"comm\":\"curl\",\"peer\":\"[::1]:443\",\"proto\":\"tcp\",\"outcome\":\"ok\",\"connect_ms\":1012.25,\"syn_retrans\":1,\"ret\":0,\"findings\":[\"syn_retransmitted\"],\"n\":{\"a\":[1,{\"b\":\"]\"}]}}",
	"{\"ts\":2,\"event\":\"connect\",\"pid\":8,\"comm\":\"curl\",\"peer\":\"/run/x.sock\",\"proto\":\"unix\",\"outcome\":\"failed\",\"connect_ms\":0.1,\"syn_retrans\":null,\"ret\":-1}",
	" {\"event\" : \"connect\" , \"pid\" : 9 , \"outcome\" : \"abandoned\" } ",
};

/* A string field as the scanner left it and as the tree has it. */
static void same_str(const char *scanned, const json_t *o, const char *key)
{
	const char *tree = log_str(o, key);

	assert_true((scanned == NULL) == (tree == NULL));
	if (scanned)
		assert_string_equal(scanned, tree);
}

/* A number field: present in both or neither, and equal. */
static void same_num(int have, double v, const json_t *o, const char *key)
{
	double d;

	assert_int_equal(have, log_num(o, key, &d));
	assert_true(!have || v == d);
}

static void test_scan_matches_jansson(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof lines / sizeof *lines; i++) {
		char a[1024];
		struct log_ev x;
		size_t n = strlen(lines[i]), k, m = 0;
		json_t *o = json_loads(lines[i], 0, NULL), *f, *v;

		assert_non_null(o);
		memcpy(a, lines[i], n + 1);
		assert_int_equal(log_scan(a, n, &x), 1);
		same_str(x.name, o, "event");
		same_str(x.comm, o, "comm");
		same_str(x.outcome, o, "outcome");
		same_str(x.peer, o, "peer");
		same_num(x.have_pid, x.pid, o, "pid");
		same_num(x.have_ret, x.ret, o, "ret");
		same_num(x.have_listen_fd, x.listen_fd, o, "listen_fd");
		same_num(x.have_connect_ms, x.connect_ms, o, "connect_ms");
		same_num(x.have_syn_retrans, x.syn_retrans, o, "syn_retrans");
		f = json_object_get(o, "findings");
		LOG_ARRAY_EACH(f, k, v)
			if (json_is_string(v))
				assert_string_equal(x.findings[m++], json_string_value(v));
		assert_int_equal(x.nfindings, m);
		json_decref(o);
	}
}

static void test_scan_declines(void **state)
{
	static const char *const bad[] = {
		"{\"event\":\"accept\",\"comm\":\"a\\\"b\",\"pid\":1}",   /* an escape: jansson's */
		"{\"event\":\"accept\",\"pid\":1",                      /* cut off */
		"{\"event\":\"accept\",\"pid\":1} x",
		"[1,2]",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof *bad; i++) {
		char a[256];
		struct log_ev x;

		snprintf(a, sizeof a, "%s", bad[i]);
		assert_int_equal(log_scan(a, strlen(a), &x), 0);
	}
}

static char *exposition(struct mx_state *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	mx_print(st, m);
	fclose(m);
	return text;
}

static void feed(struct mx_state *st, const char *l)
{
	mx_feed(st, l, strlen(l));
}

static void test_processes_add_up(void **state)
{
	struct mx_state st;
	char *t;
	int i;

	(void)state;
	mx_init(&st, 10);
	/* pid 1: 3 accept lines, then a summary that says 5 (lines were sampled). */
	feed(&st, "{\"event\":\"init\",\"pid\":1,\"comm\":\"srv\"}");
	feed(&st, "{\"event\":\"listen\",\"pid\":1,\"comm\":\"srv\",\"fd\":3,\"local\":\"0.0.0.0:80\",\"backlog_requested\":511,\"backlog_effective\":128,\"ret\":0}");
	for (i = 0; i < 3; i++)
		feed(&st, "{\"event\":\"accept\",\"pid\":1,\"comm\":\"srv\",\"listen_fd\":3,\"ret\":5}");
	feed(&st, "{\"event\":\"summary\",\"pid\":1,\"comm\":\"srv\",\"listeners\":[{\"local\":\"0.0.0.0:80\",\"accepts\":5}],"
		  "\"connects\":{\"ok\":2,\"failed\":0},\"connect_hist\":{\"<10ms\":1,\"1-1.5s\":1},\"connect_ms_sum\":1001.5}");
	/* The same pid again (a restart that got it back): a new process with 2 accept lines. */
	feed(&st, "{\"event\":\"init\",\"pid\":1,\"comm\":\"srv\"}");
	for (i = 0; i < 2; i++)
		feed(&st, "{\"event\":\"accept\",\"pid\":1,\"comm\":\"srv\",\"listen_fd\":3,\"ret\":5}");
	feed(&st, "not json");
	t = exposition(&st);
	assert_non_null(strstr(t, "sockaudit_accepts_total{comm=\"srv\",listener=\"0.0.0.0:80\"} 7\n"));
	assert_non_null(strstr(t, "sockaudit_connects_total{comm=\"srv\",outcome=\"ok\"} 2\n"));
	assert_non_null(strstr(t, "sockaudit_connect_duration_seconds_bucket{comm=\"srv\",le=\"1\"} 1\n"));
	assert_non_null(strstr(t, "sockaudit_connect_duration_seconds_bucket{comm=\"srv\",le=\"1.5\"} 2\n"));
	assert_non_null(strstr(t, "sockaudit_connect_duration_seconds_bucket{comm=\"srv\",le=\"+Inf\"} 2\n"));
	assert_non_null(strstr(t, "sockaudit_connect_duration_seconds_sum{comm=\"srv\"} 1.0015\n"));
	assert_non_null(strstr(t, "sockaudit_connect_duration_seconds_count{comm=\"srv\"} 2\n"));
	assert_non_null(strstr(t, "sockaudit_listen_backlog{comm=\"srv\",listener=\"0.0.0.0:80\",kind=\"effective\"} 128\n"));
	assert_non_null(strstr(t, "sockaudit_processes{comm=\"srv\",state=\"exited\"} 1\n"));
	assert_non_null(strstr(t, "sockaudit_processes{comm=\"srv\",state=\"running\"} 1\n"));
	assert_non_null(strstr(t, "sockaudit_unreadable_lines_total 1\n"));
	free(t);
	mx_free(&st);
}

/* Label values escaped; peers beyond the top N are "other". */
static void test_labels_and_peers(void **state)
{
	struct mx_state st;
	char *t;

	(void)state;
	mx_init(&st, 1);
	feed(&st, "{\"event\":\"connect\",\"pid\":2,\"comm\":\"a\\\"b\\\\c\\nd\",\"peer\":\"10.0.0.1:1\",\"outcome\":\"ok\"}");
	feed(&st, "{\"event\":\"connect\",\"pid\":2,\"comm\":\"a\\\"b\\\\c\\nd\",\"peer\":\"10.0.0.1:1\",\"outcome\":\"ok\"}");
	feed(&st, "{\"event\":\"connect\",\"pid\":2,\"comm\":\"a\\\"b\\\\c\\nd\",\"peer\":\"10.0.0.2:1\",\"outcome\":\"failed\"}");
	t = exposition(&st);
	assert_non_null(strstr(t, "sockaudit_connect_lines_total{comm=\"a\\\"b\\\\c\\nd\",peer=\"10.0.0.1:1\",outcome=\"ok\"} 2\n"));
	assert_non_null(strstr(t, "sockaudit_connect_lines_total{comm=\"a\\\"b\\\\c\\nd\",peer=\"other\",outcome=\"failed\"} 1\n"));
	assert_null(strstr(t, "10.0.0.2"));
	free(t);
	mx_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_matches_jansson),
		cmocka_unit_test(test_scan_declines),
		cmocka_unit_test(test_processes_add_up),
		cmocka_unit_test(test_labels_and_peers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
