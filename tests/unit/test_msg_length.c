/* Unit tests for the length of every msg the shim writes: each line
 * builder's sentence, with the longest names and tails it can append and
 * every number at its largest, is at most SA_MSG_MAX characters
 * (common/finding_text.h), so the limit holds by construction and not only
 * for what the integration tests happen to write (tests/final/msg_length.sh
 * checks those). A line with several findings stays within it too
 * (findings.c).
 *
 * "Largest": a 32-bit field at its type's bound; a value the judge bounds
 * (a flagged backlog is at most SA_BACKLOG_MOST, a kept TCP_DEFER_ACCEPT
 * at most 255 rounds, SYN-ACK resends at most 255) at that bound; a sysctl
 * at the largest the kernel accepts (int, or 0-2); a 64-bit event counter
 * at COUNT, a trillion events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "audit/connect.h"
#include "audit/accept.h"
#include "readback.h"
#include "syn_schedule.h"
#include "advice_text.h"
#include "event_text.h"

#define U32 UINT32_MAX
#define U64 ((unsigned long long)UINT64_MAX)
#define COUNT 1000000000000ull
/* The kept TCP_DEFER_ACCEPT of 255 rounds, and its window at
 * TCP_RTO_MAX_MS's largest (120 s) as sa_secs_str writes it. */
#define DEFER_MOST 29887
#define WIN_MOST "30600.5"
/* The longest "how" sa_backlog_say names, the longest plural, the
 * longest option name a buffer verdict is worded with. */
#define LONG_CONN "connections"
#define LONG_OPT "SO_RCVBUFFORCE"

static size_t longest;

/* One sentence as its builder formats it: at most SA_MSG_MAX. */
static void __attribute__((format(printf, 2, 3))) fits(const char *what, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	assert_true(n > 0);
	if ((size_t)n > longest)
		longest = (size_t)n;
	if (n > SA_MSG_MAX)
		fail_msg("%s: %d characters, more than %d: %s", what, n, SA_MSG_MAX, buf);
}

/* The kernel floor's callback (sa_say_fn), checking each sentence. */
static void say_fits(void *ctx, const char *code, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	(*(int *)ctx)++;
	if ((size_t)n > longest)
		longest = (size_t)n;
	if (n > SA_MSG_MAX)
		fail_msg("%s: %d characters, more than %d: %s", code, n, SA_MSG_MAX, buf);
}

/* The longest tail a deferral sentence appends: the real window at the
 * most rounds the kernel keeps (255) at TCP_RTO_MAX_MS's largest. */
static const char *worst_note(char *buf, size_t len)
{
	sa_defer_note(buf, len, DEFER_MOST, 255L * 120000 + 500, 120000);
	assert_true(strlen(buf) > 20);
	return buf;
}

/* The read-back and backlog words (shim/kernel/readback.c), through the
 * builder itself, for every verdict. */
static void readback_words(void **state)
{
	struct sa_opt_facts in;
	struct sa_opt_verdict v;
	struct sa_opt_context c = { .name = "SO_ATTACH_REUSEPORT_EBPF", .stream = 1,
				    .defer_real_ms = 255L * 120000 + 500, .defer_rto_max_ms = 120000 };
	int said = 0, d;

	memset(&in, 0, sizeof in);
	in.level = SOL_SOCKET;
	in.opt = SO_RCVBUFFORCE;
	for (d = SA_OPTD_DIFFERS; d <= SA_OPTD_TIMER_TICK; d++) {
		memset(&v, 0, sizeof v);
		v.diff = (enum sa_opt_diff)d;
		v.req_i = v.eff_i = INT_MIN;
		v.req_us = v.eff_us = LLONG_MIN;
		v.linger[0] = v.linger[1] = v.linger[2] = v.linger[3] = INT_MIN;
		v.sysctl = INT_MIN;
		v.rounds = 255;
		/* A buffer's sentence names its sysctl and option twice: the
		 * longest option those verdicts are given. */
		c.name = d == SA_OPTD_BUF_CAPPED || d == SA_OPTD_BUF_DOUBLED || d == SA_OPTD_BELOW_MIN
			 ? LONG_OPT : "SO_ATTACH_REUSEPORT_EBPF";
		sa_sockopt_say(&in, &v, &c, say_fits, &said);
	}
	assert_int_equal(said, SA_OPTD_TIMER_TICK - SA_OPTD_DIFFERS + 1);

	{
		struct sa_backlog_facts b = { .backlog = SA_BACKLOG_MOST, .effective = SA_BACKLOG_MOST - 1,
					      .source = "computed", .somaxconn = INT_MIN };

		said = 0;
		sa_backlog_say(&b, SA_BACKLOG_CLAMPED_SOMAXCONN, say_fits, &said);
		sa_backlog_say(&b, SA_BACKLOG_CLAMPED_OTHER, say_fits, &said);
		assert_int_equal(said, 2);
	}
}

/* The connect line's findings (judged by shim/judge/connect_judge.c, worded by
 * shim/audit/connect_line.c), one finding at a time:
 * the longest outcome word, a connect of about 23 days. */
static void connect_words(void **state)
{
	struct sa_findings f;
	const struct sa_syn_sched k = SA_SYN_SCHED_DEFAULTS;
	enum sa_conn_outcome o[] = { SA_CONN_OK, SA_CONN_FAILED, SA_CONN_ABANDONED, SA_CONN_INTERRUPTED };
	size_t i;

	for (i = 0; i < sizeof o / sizeof o[0]; i++) {
		/* syn_retransmitted alone (not slow), then slow_connect alone. */
		sa_findings_init(&f);
		sa_conn_findings(&f, o[i], 2000000000.0, 255, 0, INT_MAX, 0, &k);
		assert_int_equal(f.n, 1);
		fits("syn_retransmitted", "%s", f.msg);
		assert_null(strstr(f.msg, "Also:"));
		sa_findings_init(&f);
		sa_conn_findings(&f, o[i], 2000000000.0, 0, 0, 1, 0, &k);
		fits("slow_connect", "%s", f.msg);
		assert_null(strstr(f.msg, "Also:"));
		sa_findings_init(&f);
		sa_conn_findings(&f, o[i], 2000000000.0, 0, 0, 1, 1, &k);
		fits("slow_connect (AF_UNIX)", "%s", f.msg);
	}
	sa_findings_init(&f);
	sa_conn_findings(&f, SA_CONN_OK, 1, 0, INT_MIN + 1, INT_MAX, 0, &k);
	fits("defer_on_client_socket", SA_MSG_DEFER_ON_CLIENT_SOCKET, INT_MIN);
}

/* The accept lines (shim/audit/accept.c): the same templates and tails
 * its builders fill, each number at its type's largest. */
static void accept_words(void **state)
{
	char child[160], queue[96], note[300];

	snprintf(child, sizeof child, SA_MSG_ACCEPT_QUEUE_FULL_CHILD_TAIL, U32, 255u, "resends");
	fits("accept_queue_full (reset)", SA_MSG_ACCEPT_QUEUE_FULL_ABORT, U32, LONG_CONN, INT_MAX, child, 1L,
	     INT_MAX);
	fits("accept_queue_full (drop)", SA_MSG_ACCEPT_QUEUE_FULL_DROP, U32, LONG_CONN, INT_MAX, child, INT_MAX);
	snprintf(queue, sizeof queue, SA_MSG_ACCEPT_FD_LIMIT_QUEUE, U32, U32);
	fits("accept_fd_limit EMFILE", SA_MSG_ACCEPT_FD_LIMIT_EMFILE, U64, queue);
	fits("accept_fd_limit ENFILE", SA_MSG_ACCEPT_FD_LIMIT_ENFILE, queue);
	worst_note(note, sizeof note);
	fits("empty_accept_defer_expired", SA_MSG_EMPTY_ACCEPT_DEFER_EXPIRED, DEFER_MOST, 255u, "resends", note);
	fits("empty_accept_syncookie", SA_MSG_EMPTY_ACCEPT_SYNCOOKIE, DEFER_MOST, INT_MAX, WIN_MOST, note);
}

/* The listen line (shim/audit/listen.c): deferral beside Fast Open, and
 * the SYN-cookie risk, which the judge raises only below backlog 128. */
static void listen_words(void **state)
{
	char note[300];

	worst_note(note, sizeof note);
	fits("defer_with_fastopen", SA_MSG_DEFER_WITH_FASTOPEN, INT_MIN, DEFER_MOST, (long)INT_MIN);
	fits("defer_bypass_risk", SA_MSG_DEFER_BYPASS_RISK, DEFER_MOST, 127, 2L, 128, WIN_MOST, note);
}

/* The listener_stats, first_speaker, quickack_hot_loop, blind_spot and
 * exec_unaudited lines, and every advice sentence (sa_listener_advice,
 * through the builder with every count at its largest). */
static void other_words(void **state)
{
	struct sa_advice_in in;
	char note[300], retr[96];
	json_t *a;
	size_t i;

	worst_note(note, sizeof note);
	snprintf(retr, sizeof retr, SA_MSG_LISTEN_OVERFLOWS_SYN_RETRANS_TAIL, COUNT);
	fits("listen_overflows", SA_MSG_LISTEN_OVERFLOWS, COUNT, INT_MAX, COUNT, "accepts", retr, INT_MAX);
	fits("listen_overflows", SA_MSG_LISTEN_OVERFLOWS, COUNT, INT_MAX, COUNT, "accepts",
	     SA_MSG_LISTEN_OVERFLOWS_NO_SYN_RETRANS_TAIL, INT_MAX);
	fits("server_speaks_first_deferred", SA_MSG_SERVER_SPEAKS_FIRST_DEFERRED, DEFER_MOST, note);
	fits("quickack_hot_loop", SA_MSG_QUICKACK_HOT_LOOP, U32, U32, 100u, SA_MSG_QUICKACK_NAGLE_TAIL,
	     SA_MSG_QUICKACK_NAGLE_FIX_TAIL);
	fits("blind_spot io_uring", SA_MSG_BLIND_SPOT_IO_URING "%s", "");
	fits("blind_spot io_uring open", SA_MSG_BLIND_SPOT_IO_URING_OPEN, INT_MIN);
	fits("blind_spot syscall", SA_MSG_BLIND_SPOT_SYSCALL, "io_uring_setup", "io_uring_setup");
	fits("exec_unaudited", SA_MSG_EXEC_UNAUDITED_ENV_REPLACED "%s", "");
	fits("exec_unaudited", SA_MSG_EXEC_UNAUDITED_PRELOAD_REMOVED "%s", "");

	memset(&in, 0, sizeof in);
	in.accepts = in.empty_accepts = in.defer_expired = in.syncookie = COUNT;
	in.queue_full_seen = in.cookies_recv = COUNT;
	in.peak_waiting = UINT32_MAX;
	in.backlog = INT_MAX - 1;
	in.defer_real_ms = 255L * 120000 + 500;
	in.rto_max_ms = 120000;
	in.ns_valid = in.has_defer_drop = in.has_cookies_recv = 1;
	/* Server first with and without deferral, client first mostly empty,
	 * deferred, and mostly with data. */
	for (int pass = 0; pass < 5; pass++) {
		in.defer_s = pass & 1 ? DEFER_MOST : 0;
		in.first_server = pass < 2 ? COUNT : 0;
		in.first_client = pass < 2 ? COUNT - 1 : COUNT;
		in.with_data = pass >= 2 ? COUNT : 0;
		in.empty_accepts = pass == 4 ? 1 : COUNT;
		a = json_array();
		assert_true(sa_listener_advice(&in, a) > 0);
		for (i = 0; i < json_array_size(a); i++)
			fits("advice", "%s", json_string_value(json_array_get(a, i)));
		json_decref(a);
	}
}

/* Three long sentences on one line: the msg stays within SA_MSG_MAX, the
 * first sentence whole, a later one that does not fit named by its
 * explanation, every code kept. */
static void several_findings(void **state)
{
	struct sa_findings f;
	const struct sa_syn_sched k = SA_SYN_SCHED_DEFAULTS;

	sa_findings_init(&f);
	sa_conn_findings(&f, SA_CONN_INTERRUPTED, 2000000000.0, 255, INT_MAX, 1, 1, &k);
	assert_int_equal(f.n, 3);
	assert_true(strlen(f.msg) <= SA_MSG_MAX);
	assert_true(strncmp(f.msg, "255 SYN retransmissions", 23) == 0);
	assert_true(f.msg[strlen(f.msg) - 1] == '.');    /* no sentence cut */
	assert_string_equal(f.codes[2], "defer_on_client_socket");

	/* The usual pair, a slow connect that resent its SYN, both whole;
	 * a third that no longer fits is named. */
	sa_findings_init(&f);
	sa_conn_findings(&f, SA_CONN_OK, 1002, 1, 1, 500, 0, &k);
	assert_int_equal(f.n, 3);
	assert_true(strlen(f.msg) <= SA_MSG_MAX);
	assert_true(strncmp(f.msg, "1 SYN retransmission (", 22) == 0);
	assert_non_null(strstr(f.msg, " The connect took 1002 ms"));
	if (!strstr(f.msg, " Also: defer_on_client_socket."))
		fail_msg("no \"Also: defer_on_client_socket.\" in: %s", f.msg);
}

static int report(void **state)
{
	printf("# the longest worst-case sentence: %zu characters (limit %d)\n", longest, SA_MSG_MAX);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(readback_words),
		cmocka_unit_test(connect_words),
		cmocka_unit_test(accept_words),
		cmocka_unit_test(listen_words),
		cmocka_unit_test(other_words),
		cmocka_unit_test(several_findings),
	};

	return cmocka_run_group_tests(tests, NULL, report);
}
