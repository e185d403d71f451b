/* Unit tests for shim/kernel/tcpinfo.c: a TCP_INFO shorter than the
 * library's struct (qemu-user gives 4 bytes, a kernel before 2.6.x less
 * than 104, before 4.1 no bytes_received) fills only the field groups its
 * length covers, and what the other groups would have said comes out null
 * or "computed", never a 0 that looks like a measurement. getsockopt is
 * sa_real's pointer: the tests put a fake there that cuts the length the
 * kernel (or a pattern) gave. The *_full tests, which read the kernel's
 * own full-length answer, skip where that answer is short (qemu-user). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "core/core.h"
#include "audit/accept.h"

static char logpath[64];
static int (*kernel_getsockopt)(int, int, int, void *, socklen_t *);
static int cut = -1;       /* the length TCP_INFO answers with; -1: as given */
static int pattern;        /* 1: no kernel, every byte 0x11 and the state LISTEN */

static int fake_getsockopt(int fd, int level, int opt, void *v, socklen_t *l)
{
	int r;

	if (level != IPPROTO_TCP || opt != TCP_INFO)
		return kernel_getsockopt(fd, level, opt, v, l);
	if (pattern) {
		memset(v, 0x11, *l);
		((unsigned char *)v)[0] = SA_TCP_LISTEN;
		r = 0;
	} else {
		r = kernel_getsockopt(fd, level, opt, v, l);
	}
	if (r == 0 && cut >= 0 && (socklen_t)cut < *l)
		*l = (socklen_t)cut;   /* what lies past it is not the answer's */
	return r;
}

static int setup(void **state)
{
	struct sa_config c;
	int fd;

	memset(&c, 0, sizeof c);
	c.level = SA_LEVEL_TRACE;   /* the accept line is written at trace */
	snprintf(logpath, sizeof logpath, "/tmp/sa-ti-unit.XXXXXX");
	fd = mkstemp(logpath);
	assert_true(fd >= 0);
	close(fd);
	c.sink = SA_SINK_PATH;
	snprintf(c.path, sizeof c.path, "%s", logpath);
	sa_real_init();
	sa_runtime_configure(&c, "test_tcpinfo");
	assert_int_equal(sa_sink_open(&c), 0);
	kernel_getsockopt = sa_real.getsockopt;
	sa_real.getsockopt = fake_getsockopt;
	return 0;
}

static int teardown(void **state)
{
	sa_real.getsockopt = kernel_getsockopt;
	unlink(logpath);
	return 0;
}

/* Each length against the groups it covers (the kernel's struct tcp_info:
 * options is byte 5, the queue ends at 32, last_data_recv at 56,
 * total_retrans at 104, bytes_received (4.1) at 136, data_segs_out (4.6)
 * at 160, total_rto (6.7) at 242). Every covered field holds the pattern,
 * every other one 0 with its flag 0. */
static void groups_by_length(void **state)
{
	static const struct {
		int len, options, queue, times, retrans, bytes, segs, rto;
	} rows[] = {
		{ 1, 0, 0, 0, 0, 0, 0, 0 },     { 4, 0, 0, 0, 0, 0, 0, 0 },     { 5, 0, 0, 0, 0, 0, 0, 0 },
		{ 6, 1, 0, 0, 0, 0, 0, 0 },     { 31, 1, 0, 0, 0, 0, 0, 0 },    { 32, 1, 1, 0, 0, 0, 0, 0 },
		{ 55, 1, 1, 0, 0, 0, 0, 0 },    { 56, 1, 1, 1, 0, 0, 0, 0 },    { 103, 1, 1, 1, 0, 0, 0, 0 },
		{ 104, 1, 1, 1, 1, 0, 0, 0 },   { 135, 1, 1, 1, 1, 0, 0, 0 },   { 136, 1, 1, 1, 1, 1, 0, 0 },
		{ 159, 1, 1, 1, 1, 1, 0, 0 },   { 160, 1, 1, 1, 1, 1, 1, 0 },   { 241, 1, 1, 1, 1, 1, 1, 0 },
		{ 242, 1, 1, 1, 1, 1, 1, 1 },   { -1, 1, 1, 1, 1, 1, 1, 1 },
	};
	const uint32_t p32 = 0x11111111u;
	struct sa_tcpinfo ti;
	size_t i;

	pattern = 1;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		cut = rows[i].len;
		assert_int_equal(sa_tcpinfo_read(0, &ti), 0);
		assert_int_equal(ti.valid, 1);
		assert_int_equal(ti.state, SA_TCP_LISTEN);
		if (ti.has_options != rows[i].options || ti.has_queue != rows[i].queue || ti.has_times != rows[i].times ||
		    ti.has_retrans != rows[i].retrans || ti.has_bytes_received != rows[i].bytes ||
		    ti.has_data_segs != rows[i].segs || ti.has_total_rto != rows[i].rto)
			fail_msg("length %d: groups %d %d %d %d %d %d %d", rows[i].len, ti.has_options, ti.has_queue,
				 ti.has_times, ti.has_retrans, ti.has_bytes_received, ti.has_data_segs, ti.has_total_rto);
		assert_int_equal(ti.options, rows[i].options ? 0x11 : 0);
		assert_int_equal(ti.sacked, rows[i].queue ? p32 : 0);
		assert_int_equal(ti.unacked, rows[i].queue ? p32 : 0);
		assert_int_equal(ti.last_data_sent, rows[i].times ? p32 : 0);
		assert_int_equal(ti.last_data_recv, rows[i].times ? p32 : 0);
		assert_int_equal(ti.total_retrans, rows[i].retrans ? p32 : 0);
		assert_int_equal(ti.bytes_received, rows[i].bytes ? 0x1111111111111111ull : 0);
		assert_int_equal(ti.data_segs_out, rows[i].segs ? p32 : 0);
		assert_int_equal(ti.total_rto, rows[i].rto ? 0x1111 : 0);
		assert_true(sa_tcpinfo_listener_queue(&ti) == !!rows[i].queue);
	}
	/* Not even the state: no TCP_INFO at all. */
	cut = 0;
	assert_int_equal(sa_tcpinfo_read(0, &ti), -ENODATA);
	assert_int_equal(ti.valid, 0);
	pattern = 0;
	cut = -1;
}

/* The last line named event in the log, or NULL. */
static json_t *last_event(const char *event)
{
	FILE *f = fopen(logpath, "r");
	char line[SA_LINE_MAX + 2];
	json_t *last = NULL;

	assert_non_null(f);
	while (fgets(line, sizeof line, f)) {
		json_t *ev = json_loads(line, 0, NULL);
		const char *name = json_string_value(json_object_get(ev, "event"));

		if (name && !strcmp(name, event)) {
			json_decref(last);
			last = ev;
		} else {
			json_decref(ev);
		}
	}
	fclose(f);
	return last;
}

/* The kernel's own TCP_INFO on fd is full length here (not under qemu-user). */
static int kernel_full(int fd)
{
	unsigned char b[256];
	socklen_t l = sizeof b;

	return kernel_getsockopt(fd, IPPROTO_TCP, TCP_INFO, b, &l) == 0 && l >= 160;
}

static int loopback_listener(struct sockaddr_in *a, int backlog)
{
	socklen_t al = sizeof *a;
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	memset(a, 0, sizeof *a);
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)a, sizeof *a), 0);
	assert_int_equal(listen(lfd, backlog), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)a, &al), 0);
	return lfd;
}

static struct sa_sock tcp_sock(void)
{
	struct sa_sock s;

	memset(&s, 0, sizeof s);
	s.flags = SA_F_SOCKET;
	s.family = AF_INET;
	s.type = SOCK_STREAM;
	return s;
}

/* listen: a TCP_INFO without the queue group gives the backlog from
 * somaxconn ("computed"), never tcpi_sacked's absent 0; with the kernel's
 * full answer (cut < 0) tcpi_sacked itself. */
static void listen_at(int cut_to)
{
	struct sockaddr_in a;
	int lfd = loopback_listener(&a, 7);
	struct sa_sock s = tcp_sock();
	json_t *ev;
	long somaxconn = -1;

	if (cut_to < 0 && !kernel_full(lfd)) {
		close(lfd);
		skip();   /* the kernel's own answer is short here (qemu-user) */
	}
	assert_int_equal(sa_read_sysctl("/proc/sys/net/core/somaxconn", &somaxconn), 0);
	cut = cut_to;
	sa_listen_audit(lfd, &s, 7, 0, 0);
	cut = -1;
	ev = last_event("listen");
	assert_non_null(ev);
	assert_string_equal(json_string_value(json_object_get(ev, "backlog_source")), cut_to < 0 ? "tcp_info" : "computed");
	assert_int_equal(json_integer_value(json_object_get(ev, "backlog_effective")), somaxconn < 7 ? somaxconn : 7);
	json_decref(ev);
	close(lfd);
}

/* connect: syn_retrans is null without total_retrans (a 0 would say "no
 * SYN was resent"); the kernel's 0 with its full answer. */
static void connect_at(int cut_to)
{
	struct sockaddr_in a;
	int lfd = loopback_listener(&a, 4), c = socket(AF_INET, SOCK_STREAM, 0);
	struct sa_sock s = tcp_sock();
	json_t *ev;

	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof a), 0);
	if (cut_to < 0 && !kernel_full(c)) {
		close(c);
		close(lfd);
		skip();
	}
	cut = cut_to;
	sa_connect_audit(c, &s, (struct sockaddr *)&a, sizeof a, 0, 0, sa_now_ns(), sa_now_ns());
	cut = -1;
	ev = last_event("connect");
	assert_non_null(ev);
	assert_string_equal(json_string_value(json_object_get(ev, "outcome")), "ok");
	if (cut_to < 0)
		assert_int_equal(json_integer_value(json_object_get(ev, "syn_retrans")), 0);
	else
		assert_true(json_is_null(json_object_get(ev, "syn_retrans")));
	json_decref(ev);
	close(c);
	close(lfd);
}

/* accept: queue_ms and syn_ack_retrans null from a 4-byte TCP_INFO of the
 * child, the kernel's numbers from its full one. */
static void accept_at(int cut_to)
{
	struct sockaddr_in a;
	int lfd = loopback_listener(&a, 4), c = socket(AF_INET, SOCK_STREAM, 0), child;
	struct sa_tcpinfo ti;
	struct sa_accept_seen seen;
	json_t *ev;

	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof a), 0);
	child = accept(lfd, NULL, NULL);
	assert_true(child >= 0);
	if (cut_to < 0 && !kernel_full(child)) {
		close(child);
		close(c);
		close(lfd);
		skip();
	}
	cut = cut_to;
	assert_int_equal(sa_tcpinfo_read(child, &ti), 0);
	cut = -1;
	memset(&seen, 0, sizeof seen);
	seen.lfd = lfd;
	seen.ret = child;
	seen.ti = &ti;
	seen.tcp = 1;
	sa_accept_line(&seen, NULL);
	ev = last_event("accept");
	assert_non_null(ev);
	if (cut_to < 0) {
		assert_true(json_is_integer(json_object_get(ev, "queue_ms")));
		assert_int_equal(json_integer_value(json_object_get(ev, "syn_ack_retrans")), 0);
	} else {
		assert_true(json_is_null(json_object_get(ev, "queue_ms")));
		assert_true(json_is_null(json_object_get(ev, "syn_ack_retrans")));
	}
	json_decref(ev);
	close(child);
	close(c);
	close(lfd);
}

static void listen_short(void **state) { listen_at(4); }
static void listen_full(void **state) { listen_at(-1); }
static void connect_short(void **state) { connect_at(4); }
static void connect_full(void **state) { connect_at(-1); }
static void accept_short(void **state) { accept_at(4); }
static void accept_full(void **state) { accept_at(-1); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(groups_by_length),
		cmocka_unit_test(listen_short),
		cmocka_unit_test(listen_full),
		cmocka_unit_test(connect_short),
		cmocka_unit_test(connect_full),
		cmocka_unit_test(accept_short),
		cmocka_unit_test(accept_full),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
