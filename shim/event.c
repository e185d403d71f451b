/*
 * event.c: an event -> one JSON line (jansson), and the counters of what
 * was emitted.
 *
 * Owns the common fields, the 4096-byte line limit and the escaping of
 * bytes that are not UTF-8 (AF_UNIX paths, program names). Must never
 * call json_set_alloc_funcs (a host using jansson shares the library) and
 * never write anywhere but through sink.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* ---- time ---------------------------------------------------------------- */

double sa_now_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000) / 1e6;
}

uint64_t sa_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- strings -------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (max n bytes), 0 if invalid. */
size_t sa_utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) { len = 2; cp = s[0] & 0x1f; }
	else if (s[0] >= 0xe0 && s[0] <= 0xef) { len = 3; cp = s[0] & 0x0f; }
	else if (s[0] >= 0xf0 && s[0] <= 0xf4) { len = 4; cp = s[0] & 0x07; }
	else return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

json_t *sa_json_bytes(const char *s, size_t n)
{
	char buf[1024];
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0, k;
	json_t *j;

	if (!s)
		return json_null();
	/* Longer inputs are cut: no field we write needs more than this. */
	while (i < n && o + 5 < sizeof buf) {
		k = sa_utf8_seq(u + i, n - i);
		if (k == 0) {
			o += (size_t)snprintf(buf + o, sizeof buf - o, "\\x%02x", u[i]);
			i++;
			continue;
		}
		if (o + k >= sizeof buf)
			break;
		memcpy(buf + o, u + i, k);
		o += k;
		i += k;
	}
	j = json_stringn(buf, o);
	return j ? j : json_null();
}

json_t *sa_json_str(const char *s)
{
	return s ? sa_json_bytes(s, strlen(s)) : json_null();
}

json_t *sa_json_addr(const struct sockaddr *sa, socklen_t len)
{
	char t[SA_ADDR_TEXT_MAX];
	int n = sa_addr_text(sa, len, t, sizeof t);

	return n < 0 ? json_null() : sa_json_bytes(t, (size_t)n);
}

const char *sa_errno_name(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "EUNKNOWN";
}

json_t *sa_json_errno(int err)
{
	char b[16];
	const char *n = strerrorname_np(err);

	if (n)
		return json_string(n);
	snprintf(b, sizeof b, "E%d", err);
	return json_string(b);
}

/* ---- findings and counters ------------------------------------------------ */

static const char *const finding_codes[] = {
	"defer_rounded", "defer_on_client_socket", "defer_with_fastopen", "defer_bypass_risk",
	"backlog_clamped", "option_adjusted", "option_differs", "empty_accept_defer_expired",
	"empty_accept_syncookie", "accept_queue_full", "accept_fd_limit", "syn_retransmitted",
	"slow_connect", "quickack_hot_loop", "server_speaks_first_deferred", "listen_overflows",
	"config_warning", "other",
};
#define NCODES (sizeof finding_codes / sizeof finding_codes[0])
static uint64_t finding_counts[NCODES];

static const char *const event_names[] = {
	"init", "warning", "setsockopt", "listen", "accept", "connect", "quickack_hot_loop",
	"listener_stats", "summary", "first_speaker", "other",
};
#define NEVENTS (sizeof event_names / sizeof event_names[0])
static uint64_t event_counts[NEVENTS];
static uint64_t suppressed;

static size_t index_of(const char *const *tab, size_t n, const char *name)
{
	size_t i;

	/* Callers pass string literals, which the linker merges with the ones
	 * in the table: a pointer match first keeps strcmp off the per-accept
	 * path (bench/callgrind.sh: accept4 at the default level +512 -> +371). */
	for (i = 0; i + 1 < n; i++)
		if (tab[i] == name)
			return i;
	for (i = 0; i + 1 < n; i++)
		if (!strcmp(tab[i], name))
			return i;
	return n - 1;
}

void sa_findings_add(struct sa_findings *f, const char *code, const char *fmt, ...)
{
	size_t used = strlen(f->msg);
	va_list ap;
	int i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->codes[i], code))
			break;
	if (i == f->n && f->n < SA_MAX_FINDINGS)
		f->codes[f->n++] = code;
	if (!fmt || used + 2 >= sizeof f->msg)
		return;
	if (used) {
		f->msg[used++] = ' ';
		f->msg[used] = '\0';
	}
	va_start(ap, fmt);
	vsnprintf(f->msg + used, sizeof f->msg - used, fmt, ap);
	va_end(ap);
}

void sa_findings_count(const char *code)
{
	__atomic_add_fetch(&finding_counts[index_of(finding_codes, NCODES, code)], 1, __ATOMIC_RELAXED);
}

json_t *sa_findings_totals(void)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < NCODES; i++) {
		uint64_t n = __atomic_load_n(&finding_counts[i], __ATOMIC_RELAXED);
		if (n)
			json_object_set_new(o, finding_codes[i], json_integer((json_int_t)n));
	}
	return o;
}

void sa_event_count(const char *event)
{
	__atomic_add_fetch(&event_counts[index_of(event_names, NEVENTS, event)], 1, __ATOMIC_RELAXED);
}

json_t *sa_event_counts(void)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < NEVENTS; i++) {
		uint64_t n = __atomic_load_n(&event_counts[i], __ATOMIC_RELAXED);
		if (n)
			json_object_set_new(o, event_names[i], json_integer((json_int_t)n));
	}
	return o;
}

int sa_event_any(void)
{
	size_t i;

	for (i = 0; i < NEVENTS; i++)
		if (__atomic_load_n(&event_counts[i], __ATOMIC_RELAXED))
			return 1;
	return 0;
}

void sa_event_counts_reset(void)
{
	memset(event_counts, 0, sizeof event_counts);
	memset(finding_counts, 0, sizeof finding_counts);
	suppressed = 0;
}

uint64_t sa_suppressed_count(void)
{
	return __atomic_load_n(&suppressed, __ATOMIC_RELAXED);
}

void sa_suppressed_add(uint64_t n)
{
	__atomic_add_fetch(&suppressed, n, __ATOMIC_RELAXED);
}

/* ---- events ----------------------------------------------------------------- */

int sa_level_enabled(enum sa_level l)
{
	const struct sa_config *c = sa_config();

	return c && l <= c->level;
}

json_t *sa_event_new(const char *event, int fd)
{
	json_t *ev = json_object();

	if (!ev)
		return NULL;
	json_object_set_new(ev, "ts", json_real(sa_now_wall()));
	json_object_set_new(ev, "event", json_string(event));
	json_object_set_new(ev, "schema", json_integer(1));
	json_object_set_new(ev, "pid", json_integer(sa_pid()));
	json_object_set_new(ev, "tid", json_integer(sa_tid()));
	json_object_set_new(ev, "comm", sa_json_str(sa_comm()));
	json_object_set_new(ev, "severity", json_string("info"));
	if (fd >= 0)
		json_object_set_new(ev, "fd", json_integer(fd));
	return ev;
}

/* Cuts a string value to at most max bytes, never inside a UTF-8 sequence. */
static void cut(json_t *str, size_t max)
{
	const char *s = json_string_value(str);

	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	json_string_setn(str, s, max);
}

static void shorten_strings(json_t *v, size_t max)
{
	const char *key;
	json_t *val;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach(v, key, val) {
			if (json_is_string(val) && json_string_length(val) > max)
				cut(val, max);
			else
				shorten_strings(val, max);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, val) {
			if (json_is_string(val) && json_string_length(val) > max)
				cut(val, max);
			else
				shorten_strings(val, max);
		}
	}
}

/*
 * json_dumpb() formats every number through snprintf and was about 60 % of
 * a line's cost at trace level (bench/profile.sh); put_value writes the
 * same compact JSON, in the object's order, with line.c's writers.
 * Strings are already valid UTF-8 (jansson checked them).
 */
static int put_value(struct sa_out *o, json_t *v, int depth)
{
	const char *key;
	json_t *val;
	size_t i;
	int first = 1;

	if (depth > 16)
		return -1;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (sa_out_put(o, "{", 1))
			return -1;
		json_object_foreach(v, key, val) {
			if ((!first && sa_out_put(o, ",", 1)) || sa_out_str(o, key, strlen(key)) || sa_out_put(o, ":", 1) ||
			    put_value(o, val, depth + 1))
				return -1;
			first = 0;
		}
		return sa_out_put(o, "}", 1);
	case JSON_ARRAY:
		if (sa_out_put(o, "[", 1))
			return -1;
		json_array_foreach(v, i, val) {
			if ((i && sa_out_put(o, ",", 1)) || put_value(o, val, depth + 1))
				return -1;
		}
		return sa_out_put(o, "]", 1);
	case JSON_STRING:
		return sa_out_str(o, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return sa_out_int(o, json_integer_value(v));
	case JSON_REAL:
		return sa_out_real(o, json_real_value(v));
	case JSON_TRUE:
		return sa_out_put(o, "true", 4);
	case JSON_FALSE:
		return sa_out_put(o, "false", 5);
	default:
		return sa_out_put(o, "null", 4);
	}
}

static int dump(json_t *ev, char *buf, size_t cap)
{
	struct sa_out o = { buf, buf + cap - 1 };   /* room for the newline */

	if (put_value(&o, ev, 0) != 0)
		return -1;
	*o.p++ = '\n';
	return (int)(o.p - buf);
}

int sa_event_format(json_t *ev, char *buf, size_t cap)
{
	static const char *const keep[] = { "ts", "event", "schema", "pid", "tid", "comm",
					    "severity", "fd", "findings" };
	size_t max, i;
	int n;

	if (!ev || !buf || cap < 64)
		return -1;
	if (cap > SA_LINE_MAX)
		cap = SA_LINE_MAX;
	n = dump(ev, buf, cap);
	if (n > 0)
		return n;
	/* Too long: cut strings shorter and shorter, then keep only the core. */
	json_object_set_new(ev, "truncated", json_true());
	for (max = 512; max >= 32; max /= 2) {
		shorten_strings(ev, max);
		n = dump(ev, buf, cap);
		if (n > 0)
			return n;
	}
	json_t *core = json_object();
	for (i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		json_t *v = json_object_get(ev, keep[i]);
		if (v)
			json_object_set(core, keep[i], v);
	}
	json_object_set_new(core, "truncated", json_true());
	shorten_strings(core, 32);
	n = dump(core, buf, cap);
	json_decref(core);
	return n;
}

void sa_event_emit(json_t *ev, enum sa_level l, const struct sa_findings *f)
{
	json_t *arr;
	int i;

	if (!ev)
		return;
	sa_event_count(json_string_value(json_object_get(ev, "event")) ?: "other");
	if (f && f->n > 0) {
		l = SA_LEVEL_WARN;
		arr = json_array();
		for (i = 0; i < f->n; i++) {
			json_array_append_new(arr, json_string(f->codes[i]));
			sa_findings_count(f->codes[i]);
		}
		json_object_set_new(ev, "severity", json_string("warn"));
		json_object_set_new(ev, "findings", arr);
		json_object_set_new(ev, "msg", sa_json_str(f->msg));
	}
	if (!sa_level_enabled(l)) {
		json_decref(ev);
		return;
	}
	sa_emit_init_once(json_real_value(json_object_get(ev, "ts")));
	sa_event_write(ev);
}

void sa_event_write(json_t *ev)
{
	char line[SA_LINE_MAX];
	int n = sa_event_format(ev, line, sizeof line);

	json_decref(ev);
	if (n > 0)
		sa_sink_write(line, (size_t)n);
}
