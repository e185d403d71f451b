/* Unit tests for the per-process setsockopt rule (shim/audit/sockopt.c):
 * kinds of socket, logged once then counted, sampled read-back, a
 * different read-back logged again, failures every time, trace every call. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/core.h"

static char logpath[64];
static struct sa_config cfg;

static int setup(void **state)
{
	int fd;

	memset(&cfg, 0, sizeof cfg);
	cfg.level = SA_LEVEL_INFO;
	snprintf(logpath, sizeof logpath, "/tmp/sa-optseen-unit.XXXXXX");
	fd = mkstemp(logpath);
	assert_true(fd >= 0);
	close(fd);
	cfg.sink = SA_SINK_PATH;
	snprintf(cfg.path, sizeof cfg.path, "%s", logpath);
	sa_real_init();
	sa_runtime_configure(&cfg, "test_optseen");
	assert_int_equal(sa_sink_open(&cfg), 0);
	return 0;
}

static int teardown(void **state)
{
	unlink(logpath);
	return 0;
}

/* setsockopt lines in the log since the last call. */
/* One setsockopt as the wrapper hands it down (interpose.c). */
static void audit_set(int fd, struct sa_sock *s, int level, int opt, const void *val, socklen_t len,
		      int ret, int err)
{
	const struct sa_setsockopt_call c = {
		.fd = fd, .level = level, .opt = opt, .val = ret == 0 ? val : NULL, .len = ret == 0 ? len : 0,
		.ret = ret, .err = ret == 0 ? 0 : err,
	};

	sa_sockopt_audit(s, &c);
}

static int new_lines(const char *opt)
{
	static long off;
	FILE *f = fopen(logpath, "r");
	char buf[4096], pat[64];
	int n = 0;

	assert_non_null(f);
	fseek(f, off, SEEK_SET);
	snprintf(pat, sizeof pat, "\"opt\":\"%s\"", opt);
	while (fgets(buf, sizeof buf, f))
		if (strstr(buf, "\"event\":\"setsockopt\"") && strstr(buf, pat))
			n++;
	off = ftell(f);
	fclose(f);
	return n;
}

static void set_level(enum sa_level l)
{
	cfg.level = l;
	sa_runtime_configure(&cfg, "test_optseen");
}

static json_t *counts(const char *opt)
{
	json_t *all = sa_sockopt_counts_json(0, 0), *o = json_incref(json_object_get(all, opt));

	json_decref(all);
	return o;
}

static long long cnt(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static void readback_sampling_rule(void **state)
{
	uint64_t n, rb = 0;

	for (n = 1; n <= 64 * 10; n++)
		rb += sa_optseen_readback(n, 0, 0);
	/* The first 8, then 64, 128, ... 640 (9 more, 64 itself inside) */
	assert_int_equal(rb, SA_OPT_SAMPLE_FIRST + 10);
	assert_true(sa_optseen_readback(9, 1, 0));     /* a difference was seen: every call */
	assert_true(sa_optseen_readback(9, 0, 1));     /* listeners, trace: always */
	assert_false(sa_optseen_readback(9, 0, 0));
}

static void keys_separate_kinds_values_outcomes(void **state)
{
	int one = 1, two = 2;
	uint64_t a = sa_optseen_key(IPPROTO_TCP, TCP_NODELAY, 0, 0, &one, sizeof one, SA_OPTSOCK_ACCEPTED, 7);

	assert_true(a != 0);
	assert_true(a == sa_optseen_key(IPPROTO_TCP, TCP_NODELAY, 0, 0, &one, sizeof one, SA_OPTSOCK_ACCEPTED, 7));
	assert_true(a != sa_optseen_key(IPPROTO_TCP, TCP_NODELAY, 0, 0, &two, sizeof two, SA_OPTSOCK_ACCEPTED, 7));
	assert_true(a != sa_optseen_key(IPPROTO_TCP, TCP_NODELAY, 0, 0, &one, sizeof one, SA_OPTSOCK_ACCEPTED, 8));
	assert_true(a != sa_optseen_key(IPPROTO_TCP, TCP_NODELAY, 0, 0, &one, sizeof one, SA_OPTSOCK_LISTENER, 7));
	assert_true(a != sa_optseen_key(IPPROTO_TCP, TCP_NODELAY, -1, EBADF, NULL, 0, SA_OPTSOCK_ACCEPTED, 7));
	assert_true(a != sa_optseen_key(IPPROTO_TCP, TCP_CORK, 0, 0, &one, sizeof one, SA_OPTSOCK_ACCEPTED, 7));
	assert_string_equal(sa_optsock_name(SA_OPTSOCK_OUTGOING), "outgoing");
}

static void table_finds_and_fills(void **state)
{
	struct sa_optseen *e1, *e2;
	int i, got = 0;

	sa_proc_epoch_next();
	sa_sockopt_reset();
	e1 = sa_optseen_get(42, 6, 1, SA_OPTSOCK_OTHER, 0);
	e2 = sa_optseen_get(42, 6, 1, SA_OPTSOCK_OTHER, 0);
	assert_non_null(e1);
	assert_ptr_equal(e1, e2);
	assert_ptr_not_equal(e1, sa_optseen_get(43, 6, 1, SA_OPTSOCK_OTHER, 0));
	/* A full table answers NULL (the caller then logs and reads back). */
	for (i = 0; i < 2 * SA_OPTSEEN_SLOTS; i++)
		got += sa_optseen_get(1000 + (uint64_t)i * SA_OPTSEEN_SLOTS, 6, 1, SA_OPTSOCK_OTHER, 0) != NULL;
	assert_true(got < 2 * SA_OPTSEEN_SLOTS);
	sa_proc_epoch_next();
	sa_sockopt_reset();
	assert_non_null(sa_optseen_get(42, 6, 1, SA_OPTSOCK_OTHER, 0));
	sa_proc_epoch_next();
	sa_sockopt_reset();
}

/* A fresh tracked socket per call: fd numbers are reused, as on a server. */
static void per_process_not_per_fd(void **state)
{
	int i, one = 1;
	json_t *o;

	sa_proc_epoch_next();
	sa_sockopt_reset();
	set_level(SA_LEVEL_INFO);
	new_lines("TCP_NODELAY");
	for (i = 0; i < 200; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sa_sock *s = sa_fd_track(fd);
		int r;

		s->family = AF_INET;
		s->type = SOCK_STREAM;
		r = setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		audit_set(fd, s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one, r, 0);
		sa_fd_forget(fd);
		close(fd);
	}
	assert_int_equal(new_lines("TCP_NODELAY"), 1);
	o = counts("TCP_NODELAY");
	assert_non_null(o);
	assert_int_equal(cnt(o, "calls"), 200);
	assert_int_equal(cnt(o, "logged"), 1);
	/* 8 first, then 64, 128, 192 */
	assert_int_equal(cnt(o, "read_back"), SA_OPT_SAMPLE_FIRST + 3);
	assert_int_equal(cnt(o, "not_read_back"), 200 - SA_OPT_SAMPLE_FIRST - 3);
	assert_int_equal(cnt(o, "differs"), 0);
	json_decref(o);
}

/* SO_RCVBUF doubles: logged once with its explanation, counted after; a
 * different value is a new entry; failures are logged every time. */
static void adjusted_failed_and_trace(void **state)
{
	int i, v = 100000, w = 50000, fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sa_sock *s = sa_fd_track(fd);
	json_t *o;

	sa_proc_epoch_next();
	sa_sockopt_reset();
	set_level(SA_LEVEL_INFO);
	new_lines("SO_RCVBUF");
	s->family = AF_INET;
	s->type = SOCK_STREAM;
	for (i = 0; i < 20; i++) {
		int r = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
		audit_set(fd, s, SOL_SOCKET, SO_RCVBUF, &v, sizeof v, r, 0);
	}
	assert_int_equal(new_lines("SO_RCVBUF"), 1);
	o = counts("SO_RCVBUF");
	assert_int_equal(cnt(o, "calls"), 20);
	assert_int_equal(cnt(o, "read_back"), 20);   /* a difference: full read-back */
	assert_int_equal(cnt(o, "differs"), 20);
	json_decref(o);
	audit_set(fd, s, SOL_SOCKET, SO_RCVBUF, &w, sizeof w,
			 setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &w, sizeof w), 0);
	assert_int_equal(new_lines("SO_RCVBUF"), 1);
	for (i = 0; i < 3; i++)
		audit_set(fd, s, SOL_SOCKET, SO_RCVBUF, NULL, 0, -1, EINVAL);
	assert_int_equal(new_lines("SO_RCVBUF"), 3);
	o = counts("SO_RCVBUF");
	assert_int_equal(cnt(o, "failed"), 3);
	json_decref(o);
	set_level(SA_LEVEL_TRACE);
	for (i = 0; i < 5; i++)
		audit_set(fd, s, SOL_SOCKET, SO_RCVBUF, &v, sizeof v,
				 setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v), 0);
	assert_int_equal(new_lines("SO_RCVBUF"), 5);
	set_level(SA_LEVEL_INFO);
	sa_fd_forget(fd);
	close(fd);
}

/* Sockets accepted from different listeners are different kinds, and each
 * listener's counts are its own. */
static void accepted_kinds_by_listener(void **state)
{
	static int l1, l2;   /* stand-ins for two struct sa_listener */
	int i, one = 1;
	json_t *a, *o;

	sa_proc_epoch_next();
	sa_sockopt_reset();
	new_lines("TCP_NODELAY");
	for (i = 0; i < 10; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sa_sock *s = sa_fd_track(fd);

		s->family = AF_INET;
		s->type = SOCK_STREAM;
		s->flags |= SA_F_ACCEPTED;
		s->acc.listener = (struct sa_listener *)(i % 2 ? (void *)&l1 : (void *)&l2);
		audit_set(fd, s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one,
				 setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
		sa_fd_forget(fd);
		close(fd);
	}
	assert_int_equal(new_lines("TCP_NODELAY"), 2);   /* one per listener */
	a = sa_sockopt_counts_json(1, (uint64_t)(uintptr_t)&l1);
	o = json_object_get(a, "TCP_NODELAY");
	assert_int_equal(cnt(o, "calls"), 5);
	assert_int_equal(cnt(o, "logged"), 1);
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(readback_sampling_rule),
		cmocka_unit_test(keys_separate_kinds_values_outcomes),
		cmocka_unit_test(table_finds_and_fills),
		cmocka_unit_test(per_process_not_per_fd),
		cmocka_unit_test(adjusted_failed_and_trace),
		cmocka_unit_test(accepted_kinds_by_listener),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
