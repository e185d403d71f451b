/* Unit tests for `sockaudit diff`'s verdicts (cli/diff/judge.c), as a
 * table: each kind of figure, before and after, and what it is called;
 * and the compare of two models fed real-shaped lines (cli/diff/compare.c):
 * a listener matched by comm and address across sides, one on a side only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "diff/diff.h"

static void verdict_table(void **state)
{
	static const struct {
		enum df_kind kind;
		int ha; double a;
		int hb; double b;
		enum df_verdict want;
	} t[] = {
		{ DF_COUNT, 1, 6, 1, 0, DF_FIXED },
		{ DF_COUNT, 1, 6, 1, 2, DF_BETTER },
		{ DF_COUNT, 1, 0, 1, 0, DF_SAME },
		{ DF_COUNT, 1, 0, 1, 3, DF_WORSE },
		{ DF_COUNT, 0, 0, 1, 3, DF_NEW },
		{ DF_COUNT, 1, 3, 0, 0, DF_GONE },
		{ DF_ROOM, 1, 1, 1, 64, DF_BETTER },
		{ DF_ROOM, 1, 64, 1, 1, DF_WORSE },
		{ DF_ROOM, 1, 0, 1, 0, DF_SAME },          /* a room of 0 is not "fixed" */
		{ DF_TIME, 1, 1008, 1, 0.128, DF_BETTER },
		{ DF_TIME, 1, 0.1, 1, 0.9, DF_SAME },      /* within 1 ms */
		{ DF_TIME, 1, 100, 1, 109, DF_SAME },      /* within 10% */
		{ DF_TIME, 1, 100, 1, 120, DF_WORSE },
		{ DF_TIME, 1, 5, 1, 0, DF_BETTER },        /* a time of 0 is better, not fixed */
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct df_val a = { t[i].ha, t[i].a, -1 }, b = { t[i].hb, t[i].b, -1 };

		assert_int_equal(df_judge(t[i].kind, &a, &b), t[i].want);
	}
	assert_string_equal(df_verdict_name(DF_FIXED), "fixed");
	assert_string_equal(df_verdict_name(DF_GONE), "gone");
}

static void feed(struct df_side *s, const char *line)
{
	rp_feed_line(&s->st, line, strlen(line));
}

static const struct df_row *row(const struct df_item *it, const char *key)
{
	int r;

	for (r = 0; r < it->nrows; r++)
		if (strcmp(it->rows[r].key, key) == 0)
			return &it->rows[r];
	return NULL;
}

static void listener_matched_by_comm_and_address(void **state)
{
	struct df_side a, b;
	struct df_diff d;
	const struct df_row *r;

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	rp_state_init(&a.st);
	rp_state_init(&b.st);
	feed(&a, "{\"ts\":1764442800,\"event\":\"listen\",\"pid\":7,\"comm\":\"web\",\"fd\":3,"
		 "\"local\":\"127.0.0.1:80\",\"backlog_requested\":1,\"backlog_effective\":1,\"ret\":0}");
	feed(&a, "{\"ts\":1764442801,\"event\":\"listener_stats\",\"pid\":7,\"comm\":\"web\",\"listen_fd\":3,"
		 "\"local\":\"127.0.0.1:80\",\"backlog\":1,\"accepts\":8,\"queue_full_seen\":3,\"empty_accepts\":0}");
	feed(&a, "{\"ts\":1764442800,\"event\":\"listen\",\"pid\":7,\"comm\":\"web\",\"fd\":4,"
		 "\"local\":\"127.0.0.1:81\",\"backlog_requested\":8,\"backlog_effective\":8,\"ret\":0}");
	/* Another pid, the same program and address: the same listener. */
	feed(&b, "{\"ts\":1764442900,\"event\":\"listen\",\"pid\":9,\"comm\":\"web\",\"fd\":5,"
		 "\"local\":\"127.0.0.1:80\",\"backlog_requested\":64,\"backlog_effective\":64,\"ret\":0}");
	feed(&b, "{\"ts\":1764442901,\"event\":\"listener_stats\",\"pid\":9,\"comm\":\"web\",\"listen_fd\":5,"
		 "\"local\":\"127.0.0.1:80\",\"backlog\":64,\"accepts\":8,\"queue_full_seen\":0,\"empty_accepts\":0}");
	rp_finish(&a.st);
	rp_finish(&b.st);
	df_compare(&d, &a, &b);
	assert_int_equal(d.nlsts, 2);
	assert_string_equal(d.lsts[0].addr, "127.0.0.1:80");
	assert_true(d.lsts[0].on_a && d.lsts[0].on_b);
	r = row(&d.lsts[0], "backlog_effective");
	assert_non_null(r);
	assert_true(r->a.v == 1 && r->b.v == 64 && r->verdict == DF_BETTER);
	r = row(&d.lsts[0], "queue_full_seen");
	assert_non_null(r);
	assert_true(r->a.v == 3 && r->b.v == 0 && r->verdict == DF_FIXED);
	assert_string_equal(d.lsts[1].addr, "127.0.0.1:81");
	assert_true(d.lsts[1].on_a && !d.lsts[1].on_b);
	assert_int_equal(row(&d.lsts[1], "backlog_effective")->verdict, DF_GONE);
	df_free(&d);
	rp_state_free(&a.st);
	rp_state_free(&b.st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(verdict_table),
		cmocka_unit_test(listener_matched_by_comm_and_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
