/*
 * fuzz_shim.c: a libFuzzer target over the shim's pure parsers and formatters.
 *
 * The first input byte picks what to feed the rest to:
 *   0  sa_optval_write: every option kind, over a heap copy of exactly optlen
 *      bytes (ASan catches a read past optlen), plus sa_opt_lookup and the
 *      TCP_DEFER_ACCEPT rounding with hostile integers;
 *   1  sa_config_load: the SOCKAUDIT_* variables from a fake getenv, the
 *      input split at NUL bytes (a field "\x01" means unset);
 *   2  event formatting: sa_json_bytes / sa_json_addr over hostile bytes,
 *      packed into an event and formatted with sa_event_format at a hostile
 *      capacity; the result must be one line of valid JSON within the cap.
 *      The same bytes through line.c's builder (strings, an address, a
 *      finding's msg): one line of valid JSON within SA_LINE_MAX.
 * A broken invariant calls __builtin_trap(), which libFuzzer reports.
 *
 * Built by mk/hardening.mk with clang -fsanitize=fuzzer,address,undefined;
 * run by tests/integration/fuzz.sh (20 s) and `make fuzz` (longer).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <jansson.h>
#include "core/core.h"

#define CHECK(cond) do { if (!(cond)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t take32(const uint8_t **p, size_t *n)
{
	uint32_t v = 0;
	size_t i;

	for (i = 0; i < 4 && *n; i++, (*p)++, (*n)--)
		v |= (uint32_t)**p << (8 * i);
	return v;
}

/* A heap copy of exactly n bytes (n may be 0), so ASan sees the edge. */
static void *exact(const uint8_t *p, size_t n)
{
	void *b = malloc(n ? n : 1);

	if (b && n)
		memcpy(b, p, n);
	return b;
}

/* sa_optval_write must write valid JSON when it fits, and fail cleanly (never
 * past the end) when it does not. */
static void check_opt(int kind, const void *buf, socklen_t len)
{
	char out[1300], tiny[8];   /* a string option is cut at 200 bytes, 6 out per byte at most */
	struct sa_linebuf o = { out, out + sizeof out }, t = { tiny, tiny + sizeof tiny };
	json_error_t e;
	json_t *v;

	CHECK(sa_optval_write(&o, (enum sa_optkind)kind, buf, len) == 0);
	v = json_loadb(out, (size_t)(o.p - out), JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	CHECK(v != NULL);
	json_decref(v);
	(void)sa_optval_write(&t, (enum sa_optkind)kind, buf, len);
	CHECK(t.p >= tiny && t.p <= tiny + sizeof tiny);
}

static void fuzz_sockopt(const uint8_t *p, size_t n)
{
	int kind = n ? p[0] % (SA_OPT_OPAQUE + 1) : 0;
	int level, opt, secs;
	socklen_t len;
	void *buf;

	if (n) {
		p++;
		n--;
	}
	level = (int)take32(&p, &n);
	opt = (int)take32(&p, &n);
	secs = (int)take32(&p, &n);
	(void)sa_opt_lookup(level, opt);
	(void)sa_opt_lookup(level & 0xff, opt & 0xff);
	(void)sa_sol_name(level);
	(void)sa_sol_name(level & 0xff);
	(void)sa_defer_rounds(secs);
	(void)sa_defer_secs(secs);
	(void)sa_defer_rounds(secs & 0xffff);
	(void)sa_defer_secs(secs & 0xff);
	if (secs > 0 && secs <= 3600)  /* rounding never goes down (table: 3600 -> 3607) */
		CHECK(sa_defer_secs(sa_defer_rounds(secs)) >= secs);

	len = (socklen_t)n;
	buf = exact(p, n);
	if (!buf)
		return;
	check_opt(kind, buf, len);
	/* Every kind over the same bytes, and a NULL buffer with a length. */
	for (kind = 0; kind <= SA_OPT_OPAQUE; kind++)
		check_opt(kind, buf, len);
	check_opt(n ? p[0] % (SA_OPT_OPAQUE + 1) : 0, NULL, len);
	free(buf);
}

static const char *const vars[] = {
	"SOCKAUDIT_LOG", "SOCKAUDIT_LEVEL", "SOCKAUDIT_STATS_INTERVAL", "SOCKAUDIT_COMM",
	"SOCKAUDIT_DISABLE", "SOCKAUDIT_SLOW_CONNECT_MS", "SOCKAUDIT_QUICKACK_MIN_REASSERTS",
	"SOCKAUDIT_QUICKACK_MAX_SEGS",
};
#define NVARS (sizeof(vars) / sizeof(vars[0]))
static const char *values[NVARS];

static char *fake_getenv(const char *name)
{
	size_t i;

	for (i = 0; i < NVARS; i++)
		if (!strcmp(name, vars[i]))
			return (char *)values[i];
	return NULL;
}

static int nul_within(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

static void fuzz_config(const uint8_t *p, size_t n)
{
	char *copy = malloc(n + 1), *s, *e;
	struct sa_config *c = malloc(sizeof(*c));
	size_t i;
	int w;

	if (!copy || !c)
		goto out;
	memcpy(copy, p, n);
	copy[n] = '\0';
	s = copy;
	for (i = 0; i < NVARS; i++) {
		if (s > copy + n) {
			values[i] = NULL;
			continue;
		}
		e = s + strlen(s);
		values[i] = (s[0] == '\x01' && s[1] == '\0') ? NULL : s;
		s = e + 1;
	}
	memset(c, 0xA5, sizeof(*c));       /* the loader must fill everything */
	sa_config_load(c, fake_getenv, (pid_t)(n * 7919 % 4194304));
	CHECK(c->level >= SA_LEVEL_WARN && c->level <= SA_LEVEL_TRACE);
	CHECK(c->sink >= SA_SINK_STDERR && c->sink <= SA_SINK_JOURNAL);
	CHECK(c->disable == 0 || c->disable == 1);
	CHECK(c->stats_interval >= 0);
	CHECK(c->nwarnings >= 0 && c->nwarnings <= SA_MAX_WARNINGS);
	CHECK(nul_within(c->path, sizeof(c->path)));
	CHECK(nul_within(c->comm, sizeof(c->comm)));
	if (c->sink == SA_SINK_FD)
		CHECK(c->sink_fd >= 0);
	for (w = 0; w < c->nwarnings; w++) {
		CHECK(nul_within(c->warnings[w].var, sizeof(c->warnings[w].var)));
		CHECK(nul_within(c->warnings[w].value, sizeof(c->warnings[w].value)));
		CHECK(nul_within(c->warnings[w].why, sizeof(c->warnings[w].why)));
		CHECK(strncmp(c->warnings[w].var, "SOCKAUDIT_", 10) == 0);
	}
	/* A valid value gives no warning: all-defaults input must be clean. */
	for (i = 0; i < NVARS; i++)
		values[i] = NULL;
	sa_config_load(c, fake_getenv, 1);
	CHECK(c->nwarnings == 0 && c->disable == 0 && c->level == SA_LEVEL_INFO);
	(void)sa_config_comm_match(copy, n > 4 ? copy + n / 2 : "nginx");
	(void)sa_config_comm_match("", copy);
out:
	free(copy);
	free(c);
}

/* line.c's builder over hostile bytes: strings, an address of any
 * length and family, a finding whose msg holds them. */
static void fuzz_line(const uint8_t *p, size_t n, size_t split)
{
	static struct sa_line L;
	struct sa_findings f;
	char *s1 = malloc(split + 1), *s2 = malloc(n - split + 1);
	void *sa = exact(p, n);
	json_error_t err;
	json_t *back;
	size_t i, nl;
	int len;

	if (!s1 || !s2 || !sa)
		goto out;
	memcpy(s1, p, split);
	s1[split] = '\0';
	memcpy(s2, p + split, n - split);
	s2[n - split] = '\0';
	if (n >= sizeof(sa_family_t))
		((struct sockaddr *)sa)->sa_family = (p[0] & 1) ? AF_UNIX : (p[0] & 2) ? AF_INET6 : AF_INET;
	sa_findings_init(&f);
	if (n & 1)
		sa_findings_add(&f, "accept_queue_full", "%s then %s", s1, s2);
	sa_line_begin(&L, "accept", (int)(n % 5) - 1, &f);
	sa_line_str(&L, "a", s1);
	sa_line_addr(&L, "peer", sa, (socklen_t)n);
	sa_line_str(&L, "b", s2);
	sa_line_real(&L, "r", (double)n / 7.0 - 3.0);
	sa_line_int(&L, "i", (long long)n * -977);
	sa_line_errno(&L, "errno", (int)n);
	len = sa_line_finish(&L, &f);
	CHECK(len > 0 && len <= SA_LINE_MAX);
	CHECK(L.buf[len - 1] == '\n');
	for (i = 0, nl = 0; i < (size_t)len; i++)
		nl += L.buf[i] == '\n';
	CHECK(nl == 1);
	back = json_loadb(L.buf, (size_t)len - 1, JSON_ALLOW_NUL, &err);
	CHECK(back != NULL && json_is_object(back));
	CHECK(json_is_string(json_object_get(back, "event")));
	json_decref(back);
out:
	free(s1);
	free(s2);
	free(sa);
}

static void fuzz_event(const uint8_t *p, size_t n)
{
	static char line[SA_LINE_MAX + 64];
	size_t cap, split, i, nl;
	json_t *ev, *s1, *s2, *addr;
	void *sa;
	int len;

	cap = n >= 2 ? (p[0] | p[1] << 8) % (SA_LINE_MAX + 1) : SA_LINE_MAX;
	if (n >= 2) {
		p += 2;
		n -= 2;
	}
	split = n ? p[0] % (n + 1) : 0;
	s1 = sa_json_bytes((const char *)p, split);
	s2 = sa_json_bytes((const char *)p + split, n - split);
	CHECK(json_is_string(s1) || json_is_null(s1));
	CHECK(json_is_string(s2) || json_is_null(s2));
	/* The address formatter over the same bytes as a sockaddr of any length. */
	sa = exact(p, n);
	addr = NULL;
	if (sa) {
		if (n >= sizeof(sa_family_t))
			((struct sockaddr *)sa)->sa_family = (p[0] & 1) ? AF_UNIX : (p[0] & 2) ? AF_INET6 : AF_INET;
		addr = sa_json_addr(sa, (socklen_t)n);
	}
	CHECK(addr == NULL || json_is_string(addr) || json_is_null(addr));
	free(sa);

	ev = json_object();
	json_object_set_new(ev, "ts", json_real(1764441600.123456));
	json_object_set_new(ev, "event", json_string("accept"));
	json_object_set_new(ev, "schema", json_integer(1));
	json_object_set_new(ev, "pid", json_integer(4242));
	json_object_set_new(ev, "tid", json_integer(4243));
	json_object_set_new(ev, "comm", s1);
	json_object_set_new(ev, "severity", json_string("info"));
	json_object_set_new(ev, "fd", json_integer(7));
	json_object_set_new(ev, "peer", s2);
	json_object_set_new(ev, "local", addr ? addr : json_null());
	json_object_set_new(ev, "msg", sa_json_bytes((const char *)p, n));
	json_object_set_new(ev, "findings", json_pack("[s]", "accept_queue_full"));
	len = sa_event_format(ev, line, cap);
	if (cap == SA_LINE_MAX)       /* a full-size line always fits by truncation */
		CHECK(len > 0);
	if (len >= 0) {
		json_error_t err;
		json_t *back;

		CHECK((size_t)len <= cap && len > 0);
		CHECK(line[len - 1] == '\n');
		for (i = 0, nl = 0; i < (size_t)len; i++)
			nl += line[i] == '\n';
		CHECK(nl == 1);
		back = json_loadb(line, (size_t)len - 1, JSON_ALLOW_NUL, &err);
		CHECK(back != NULL && json_is_object(back));
		CHECK(json_is_string(json_object_get(back, "event")));
		json_decref(back);
	}
	json_decref(ev);
	fuzz_line(p, n, split);
	/* And the errno names for any integer. */
	i = n >= 4 ? (size_t)(int)take32(&p, &n) : n;
	{ char eb[SA_ERRNO_NAME_MAX]; (void)sa_errno_name((int)i, eb); }
	json_decref(sa_json_errno((int)i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0: fuzz_sockopt(data + 1, size - 1); break;
	case 1: fuzz_config(data + 1, size - 1); break;
	default: fuzz_event(data + 1, size - 1); break;
	}
	return 0;
}
