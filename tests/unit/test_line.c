/* Unit tests for shim/line/line.c: a line built field by field must be, byte for
 * byte, the line event.c writes for the same jansson object; and a line
 * too long for 4096 bytes must still come out as one valid JSON line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/un.h>

#include "core/core.h"

static int setup(void **state)
{
	struct sa_config c;

	(void)state;
	memset(&c, 0, sizeof c);
	c.level = SA_LEVEL_TRACE;
	/* A program name with a byte that is not UTF-8 and a quote. */
	sa_runtime_configure(&c, "ng\"x\xff");
	return 0;
}

/* Both ways of writing one event, side by side. */
struct pair {
	struct sa_line L;
	json_t *ev;
};

/* event is a literal (sa_line_begin composes it at compile time). */
#define begin(p, event, fd, f) do { sa_line_begin(&(p)->L, event, (fd), (f)); begin_ev((p), event, (fd)); } while (0)

static void begin_ev(struct pair *p, const char *event, int fd)
{
	p->ev = sa_event_new(event, fd);
	assert_non_null(p->ev);
	/* Same clock reading for both; "ts" keeps its place in the object. */
	json_object_set_new(p->ev, "ts", json_real(p->L.ts));
}

/* Each field both ways; k is a string literal (line.c's keys are). */
#define p_int(p, k, v) do { sa_line_int(&(p)->L, k, (v)); json_object_set_new((p)->ev, k, json_integer(v)); } while (0)
#define p_real(p, k, v) do { sa_line_real(&(p)->L, k, (v)); json_object_set_new((p)->ev, k, json_real(v)); } while (0)
#define p_null(p, k) do { sa_line_null(&(p)->L, k); json_object_set_new((p)->ev, k, json_null()); } while (0)
#define p_bool(p, k, v) do { sa_line_bool(&(p)->L, k, (v)); json_object_set_new((p)->ev, k, json_boolean(v)); } while (0)
#define p_str(p, k, s) do { sa_line_str(&(p)->L, k, (s)); json_object_set_new((p)->ev, k, sa_json_str(s)); } while (0)
#define p_addr(p, k, sa, len) do { sa_line_addr(&(p)->L, k, (const struct sockaddr *)(sa), (len)); \
	json_object_set_new((p)->ev, k, sa_json_addr((const struct sockaddr *)(sa), (len))); } while (0)
#define p_errno(p, k, e) do { sa_line_errno(&(p)->L, k, (e)); json_object_set_new((p)->ev, k, sa_json_errno(e)); } while (0)

/* What sa_event_emit adds for findings, then both lines compared. */
static void same(struct pair *p, const struct sa_findings *f)
{
	char want[SA_LINE_MAX];
	int n, m, i;

	if (f && f->n > 0) {
		json_t *arr = json_array();
		for (i = 0; i < f->n; i++)
			json_array_append_new(arr, json_string(f->codes[i]));
		json_object_set_new(p->ev, "severity", json_string("warn"));
		json_object_set_new(p->ev, "findings", arr);
		json_object_set_new(p->ev, "msg", sa_json_str(f->msg));
	}
	n = sa_event_format(p->ev, want, sizeof want);
	m = sa_line_finish(&p->L, f);
	assert_true(n > 0);
	assert_int_equal(m, n);
	want[n - 1] = '\0';
	p->L.buf[m - 1] = '\0';
	assert_string_equal(p->L.buf, want);
	json_decref(p->ev);
}

static void accept_line(void **state)
{
	struct sa_findings f;
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(50612) };
	struct pair p;

	(void)state;
	sa_findings_init(&f);
	inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
	begin(&p, "accept", 3, &f);
	p_int(&p, "listen_fd", 5);
	p_str(&p, "local", "127.0.0.1:18123");
	p_addr(&p, "peer", &in, sizeof in);
	p_real(&p, "wait_ms", 0.00632);
	p_int(&p, "queue_ms", 0);
	p_int(&p, "bytes_ready", 98);
	p_null(&p, "syn_ack_retrans");
	p_int(&p, "queue_len", 0);
	p_int(&p, "queue_capacity", 512);
	p_int(&p, "ret", 3);
	same(&p, &f);
}

static void addresses(void **state)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(0) };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(443) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct sockaddr odd = { .sa_family = 99 };
	socklen_t ulen;
	struct pair p;

	(void)state;
	inet_pton(AF_INET, "255.10.0.254", &in.sin_addr);
	inet_pton(AF_INET6, "2001:db8::ff00:42:8329", &in6.sin6_addr);
	begin(&p, "connect", -1, NULL);
	p_addr(&p, "v4", &in, sizeof in);
	p_addr(&p, "v4short", &in, sizeof in - 1);
	p_addr(&p, "v6", &in6, sizeof in6);
	p_addr(&p, "null", NULL, 0);
	p_addr(&p, "odd", &odd, sizeof odd);
	p_addr(&p, "unnamed", &un, offsetof(struct sockaddr_un, sun_path));
	/* Abstract: a NUL inside, a byte that is not UTF-8, a valid euro sign. */
	memcpy(un.sun_path, "\0ab\0c\xfe\xe2\x82\xac\x01", 10);
	p_addr(&p, "abstract", &un, offsetof(struct sockaddr_un, sun_path) + 10);
	memset(un.sun_path, 0, sizeof un.sun_path);
	strcpy(un.sun_path, "/run/a \"q\" \\b\tc\xc0\xaf");
	ulen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(un.sun_path) + 1);
	p_addr(&p, "path", &un, ulen);
	/* A full 108-byte path, no NUL. */
	memset(un.sun_path, 'z', sizeof un.sun_path);
	p_addr(&p, "full", &un, sizeof un);
	same(&p, NULL);
}

static void values(void **state)
{
	struct pair p;

	(void)state;
	begin(&p, "connect", 0, NULL);
	p_real(&p, "zero", 0.0);
	p_real(&p, "half", 1.5);
	p_real(&p, "tiny", 1e-7);
	p_real(&p, "neg", -2.25);
	p_real(&p, "negtiny", -0.0000001);
	p_real(&p, "round", 0.9999999);
	p_real(&p, "big", 3.5e15);
	p_real(&p, "when", 1795985079.374779);
	p_int(&p, "min", -9223372036854775807LL - 1);
	p_int(&p, "max", 9223372036854775807LL);
	p_bool(&p, "t", 1);
	p_bool(&p, "f", 0);
	p_str(&p, "nullstr", NULL);
	p_str(&p, "ctl", "a\nb\rc\x7f\x1f");
	p_errno(&p, "errno", ECONNREFUSED);
	p_errno(&p, "unknown", 4000);
	same(&p, NULL);
}

static void with_findings(void **state)
{
	struct sa_findings f;
	struct pair p;

	(void)state;
	sa_findings_init(&f);
	sa_findings_add(&f, "accept_queue_full", "The \"queue\" was full at %s.", "@sock\xff");
	sa_findings_add(&f, "empty_accept_syncookie", "Second\tsentence.");
	begin(&p, "accept", 7, &f);
	p_int(&p, "ret", 7);
	same(&p, &f);
}

/* Fields that cannot fit: still one valid line, with the common fields,
 * the codes and "truncated", never cut inside an escape. */
static void too_long(void **state)
{
	struct sa_findings f;
	struct sa_line L;
	char big[1400];
	json_error_t e;
	json_t *back;
	int n, i;

	(void)state;
	memset(big, '\x01', sizeof big - 1);   /* 6 bytes each once escaped */
	big[sizeof big - 1] = '\0';
	sa_findings_init(&f);
	sa_findings_add(&f, "other", "%s", big);
	sa_line_begin(&L, "accept", 9, &f);
	for (i = 0; i < 3; i++)
		sa_line_str(&L, "local", big);
	n = sa_line_finish(&L, &f);
	assert_true(n > 0 && n <= SA_LINE_MAX);
	assert_int_equal(L.buf[n - 1], '\n');
	back = json_loadb(L.buf, (size_t)n, 0, &e);
	assert_non_null(back);
	assert_true(json_is_true(json_object_get(back, "truncated")));
	assert_int_equal(json_integer_value(json_object_get(back, "fd")), 9);
	assert_string_equal(json_string_value(json_array_get(json_object_get(back, "findings"), 0)), "other");
	assert_string_equal(json_string_value(json_object_get(back, "severity")), "warn");
	assert_null(json_object_get(back, "local"));
	json_decref(back);
}

/* The common fields are kept per thread: a new program name, a forked
 * child and another thread each get their own. */
static json_t *one_line(void)
{
	struct sa_line L;
	json_error_t e;
	int n;

	sa_line_begin(&L, "accept", 1, NULL);
	n = sa_line_finish(&L, NULL);
	assert_true(n > 0);
	return json_loadb(L.buf, (size_t)n, 0, &e);
}

static void *in_thread(void *arg)
{
	*(json_t **)arg = one_line();
	return NULL;
}

static void ident_cache(void **state)
{
	struct sa_config c;
	json_t *a, *b, *t = NULL;
	pthread_t th;
	int fds[2], st;
	pid_t kid;
	char buf[64] = "";

	(void)state;
	memset(&c, 0, sizeof c);
	c.level = SA_LEVEL_TRACE;
	sa_runtime_configure(&c, "first");
	a = one_line();
	sa_runtime_configure(&c, "second");
	b = one_line();
	assert_string_equal(json_string_value(json_object_get(a, "comm")), "first");
	assert_string_equal(json_string_value(json_object_get(b, "comm")), "second");
	assert_int_equal(pthread_create(&th, NULL, in_thread, &t), 0);
	pthread_join(th, NULL);
	assert_non_null(t);
	assert_true(json_integer_value(json_object_get(t, "tid")) != json_integer_value(json_object_get(b, "tid")));
	assert_int_equal(json_integer_value(json_object_get(t, "pid")), json_integer_value(json_object_get(b, "pid")));
	/* A forked child: its own pid and tid in the line. */
	fflush(NULL);
	assert_int_equal(pipe(fds), 0);
	kid = fork();
	if (kid == 0) {
		json_t *k;
		/* What the shim's atfork handler does: new pid, tid forgotten;
		 * the name is the same, so only pid and tid can tell. */
		sa_runtime_configure(&c, "second");
		k = one_line();
		snprintf(buf, sizeof buf, "%lld %lld %d", (long long)json_integer_value(json_object_get(k, "pid")),
			 (long long)json_integer_value(json_object_get(k, "tid")), (int)getpid());
		if (write(fds[1], buf, strlen(buf)) < 0)
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	assert_true(read(fds[0], buf, sizeof buf - 1) > 0);
	waitpid(kid, &st, 0);
	{
		long long p, t2;
		int real;
		assert_int_equal(sscanf(buf, "%lld %lld %d", &p, &t2, &real), 3);
		assert_int_equal(p, real);
		assert_int_equal(t2, real);
	}
	close(fds[0]);
	json_decref(a);
	json_decref(b);
	json_decref(t);
}

/* An event name composed at compile time and one escaped at run time
 * (the jansson path's): the same common fields. */
static void begin_both_ways(void **state)
{
	struct sa_line A, B;
	int n, m;

	(void)state;
	sa_line_begin(&A, "accept", 12, NULL);
	sa_line_begin_at(&B, "accept", 12, 0, A.ts);
	sa_line_int(&A, "ret", 12);
	sa_line_int(&B, "ret", 12);
	n = sa_line_finish(&A, NULL);
	m = sa_line_finish(&B, NULL);
	assert_int_equal(n, m);
	assert_memory_equal(A.buf, B.buf, (size_t)n);
}

/* A line closed right where it ends (the inline close) and by the full
 * one: the same bytes at every length up to the buffer's last byte,
 * including the one where "}" no longer fits and it is truncated. */
static void finish_edges(void **state)
{
	static struct sa_line A, B;
	static char s[SA_LINE_MAX];
	size_t len;
	int n, m;

	(void)state;
	for (len = 3800; len < SA_LINE_MAX - 1; len++) {
		memset(s, 'a', len);
		s[len] = '\0';
		sa_line_begin(&A, "accept", 3, NULL);
		sa_line_str(&A, "local", s);
		sa_line_int(&A, "ret", 3);
		B = A;   /* its pointers moved into its own buffer */
		B.o.p = B.buf + (A.o.p - A.buf);
		B.o.end = B.buf + (A.o.end - A.buf);
		B.core = B.buf + (A.core - A.buf);
		n = sa_line_finish(&A, NULL);
		m = sa_line_finish_full(&B, NULL);
		assert_int_equal(n, m);
		assert_true(n > 0 && n <= SA_LINE_MAX);
		assert_memory_equal(A.buf, B.buf, (size_t)n);
		assert_int_equal(A.buf[n - 1], '\n');
		assert_int_equal(A.buf[n - 2], '}');
	}
}

/* emit counts the event and its findings whatever the level. */
static void emit_counts(void **state)
{
	struct sa_findings f;
	struct sa_line L;
	json_t *c, *t;

	(void)state;
	sa_event_counts_reset();
	sa_findings_init(&f);
	sa_findings_add(&f, "slow_connect", "slow");
	sa_line_begin(&L, "connect", 4, &f);
	sa_line_emit(&L, SA_LEVEL_TRACE, &f);
	c = sa_event_counts();
	t = sa_findings_totals();
	assert_int_equal(json_integer_value(json_object_get(c, "connect")), 1);
	assert_int_equal(json_integer_value(json_object_get(t, "slow_connect")), 1);
	json_decref(c);
	json_decref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(accept_line, setup),
		cmocka_unit_test_setup(addresses, setup),
		cmocka_unit_test_setup(values, setup),
		cmocka_unit_test_setup(with_findings, setup),
		cmocka_unit_test_setup(too_long, setup),
		cmocka_unit_test_setup(emit_counts, setup),
		cmocka_unit_test_setup(ident_cache, setup),
		cmocka_unit_test_setup(begin_both_ways, setup),
		cmocka_unit_test_setup(finish_edges, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
