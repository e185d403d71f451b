/*
 * event.c: the rare events built as jansson objects (listen, quickack,
 * listener_stats, summary, init, warnings), serialized through the line
 * builder: the common fields, the field writers, truncation, counting, the
 * level check and the sink hand-off are line.c's and emit.c's, so both
 * kinds of line come out the same way.
 *
 * jansson's memory comes from a private arena (sa_json_init), not
 * the host's heap, when jansson is our own static copy (SA_JANSSON_OWN):
 * memory the shim freed into malloc's per-thread cache went to the host's
 * next allocations, and a fork-per-connection server's children then wrote
 * pages they would not have (two or three faults per socat fork child). A
 * shared libjansson is the host's too: then it is left alone. Allocates:
 * not for a path a signal handler can reach at warn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>

#include "line/line.h"

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

json_t *sa_json_errno(int err)
{
	char b[SA_ERRNO_NAME_MAX];

	return json_string(sa_errno_name(err, b));
}

#ifdef SA_JANSSON_OWN
/* A bump arena, one word of state: live allocations (high half) and bytes
 * handed out (low half), changed by compare-and-swap; when the last live
 * allocation goes, the arena starts over. What does not fit, or arrives
 * while a line elsewhere holds most of it, comes from malloc. */
#define JARENA (64 * 1024)
static unsigned char jarena[JARENA] __attribute__((aligned(16)));
static uint64_t jstate;

static void *jalloc(size_t n)
{
	uint64_t s = __atomic_load_n(&jstate, __ATOMIC_RELAXED), ns;
	size_t sz = n ? (n + 15) & ~(size_t)15 : 16;

	do {
		if (sz > JARENA - (uint32_t)s)
			return malloc(n);
		ns = (((s >> 32) + 1) << 32) | ((uint32_t)s + sz);
	} while (!__atomic_compare_exchange_n(&jstate, &s, ns, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return jarena + (uint32_t)s;
}

static void jfree(void *p)
{
	uint64_t s, ns;

	if ((unsigned char *)p < jarena || (unsigned char *)p >= jarena + JARENA) {
		free(p);
		return;
	}
	s = __atomic_load_n(&jstate, __ATOMIC_RELAXED);
	do
		ns = (s >> 32) <= 1 ? 0 : ((((s >> 32) - 1) << 32) | (uint32_t)s);
	while (!__atomic_compare_exchange_n(&jstate, &s, ns, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
}
#endif

/* jansson's own (hashtable_seed.c, 2.14): global in its static archive,
 * hidden in our library; not exported by a shared libjansson (then NULL). */
extern volatile uint32_t hashtable_seed __attribute__((weak));

/* A seed for jansson's string hash with no system call: the kernel's
 * AT_RANDOM bytes (mixed, so nothing of them is exposed), the pid and the
 * clock. Never 0 (0 is jansson's "not seeded yet"). */
static uint32_t hash_seed(void)
{
	const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)sa_syscall3_raw(SYS_getpid, 0, 0, 0) ^ (uint64_t)(sa_now_wall() * 1e6);
	int i;

	for (i = 0; r && i < 16; i++)
		h = (h ^ r[i]) * 0x100000001b3ull;
	h ^= h >> 29;
	return (uint32_t)h ? (uint32_t)h : 1u;
}

/*
 * jansson seeds its hash at its first object: one thread sets a flag,
 * reads /dev/urandom (open, read, close), then stores the seed, while any
 * other thread spins on sched_yield until it is stored. A fork from another
 * thread inside that window gives a child whose copy of the seed stays 0
 * forever: its first line would spin without end (life_first.sh case 10).
 * So the seed is stored by us, in one compare-and-swap, before any object
 * is made: a fork sees 0 or the seed, never the flag alone, and no file is
 * opened. A shared libjansson (not ours) is seeded through its API, whose
 * window is then a few instructions, not a file read.
 */
void sa_json_init(void)
{
	uint32_t zero = 0;

#ifdef SA_JANSSON_OWN
	json_set_alloc_funcs(jalloc, jfree);
#endif
	if (!&hashtable_seed)
		json_object_seed(hash_seed());
	else if (!__atomic_load_n(&hashtable_seed, __ATOMIC_ACQUIRE))
		__atomic_compare_exchange_n(&hashtable_seed, &zero, hash_seed(), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

json_t *sa_event_new(const char *event, int fd)
{
	json_t *ev = json_object();

	if (!ev)
		return NULL;
	json_object_set_new(ev, "ts", json_real(sa_now_wall()));
	json_object_set_new(ev, "event", json_string(event));
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

/* A value with the line's writers, in the object's order. Strings are
 * valid UTF-8 already (jansson checked them). */
static int put_value(struct sa_linebuf *o, json_t *v, int depth)
{
	const char *key;
	json_t *val;
	size_t i;
	int first = 1;

	if (depth > 16)
		return -1;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (sa_linebuf_put(o, "{", 1))
			return -1;
		json_object_foreach(v, key, val) {
			if ((!first && sa_linebuf_put(o, ",", 1)) || sa_linebuf_str(o, key, strlen(key)) || sa_linebuf_put(o, ":", 1) ||
			    put_value(o, val, depth + 1))
				return -1;
			first = 0;
		}
		return sa_linebuf_put(o, "}", 1);
	case JSON_ARRAY:
		if (sa_linebuf_put(o, "[", 1))
			return -1;
		json_array_foreach(v, i, val) {
			if ((i && sa_linebuf_put(o, ",", 1)) || put_value(o, val, depth + 1))
				return -1;
		}
		return sa_linebuf_put(o, "]", 1);
	case JSON_STRING:
		return sa_linebuf_str(o, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return sa_linebuf_int(o, json_integer_value(v));
	case JSON_REAL:
		return sa_linebuf_real(o, json_real_value(v));
	case JSON_TRUE:
		return sa_linebuf_put(o, "true", 4);
	case JSON_FALSE:
		return sa_linebuf_put(o, "false", 5);
	default:
		return sa_linebuf_put(o, "null", 4);
	}
}

/* The common fields come from the builder: these keys of the object only
 * steer it. */
static int is_common(const char *k)
{
	static const char *const common[] = { "ts", "event", "schema", "pid", "tid", "comm", "severity", "fd" };
	size_t i;

	for (i = 0; i < sizeof common / sizeof common[0]; i++)
		if (!strcmp(k, common[i]))
			return 1;
	return 0;
}

static void build(json_t *ev, struct sa_line *L, const struct sa_findings *f)
{
	const char *event = json_string_value(json_object_get(ev, "event"));
	json_t *fd = json_object_get(ev, "fd"), *val;
	const char *sev = json_string_value(json_object_get(ev, "severity"));
	const char *key;
	int warn = (f && f->n > 0) || (sev && !strcmp(sev, "warn"));

	sa_line_begin_at(L, event ? event : "other", json_is_integer(fd) ? (int)json_integer_value(fd) : -1,
			 warn, json_real_value(json_object_get(ev, "ts")));
	json_object_foreach(ev, key, val) {
		if (is_common(key) || sa_line_key(L, key))
			continue;
		sa_line_check(L, put_value(&L->o, val, 0));
	}
}

/* Builds ev into L; an overlong line has its strings cut shorter and
 * shorter and "truncated":true added, then only the common fields. */
static void build_fitting(json_t *ev, struct sa_line *L, const struct sa_findings *f)
{
	size_t max;

	build(ev, L, f);
	if (!L->over)
		return;
	json_object_set_new(ev, "truncated", json_true());
	for (max = 512; max >= 32; max /= 2) {
		shorten_strings(ev, max);
		build(ev, L, f);
		if (!L->over)
			return;
	}
}

int sa_event_format(json_t *ev, char *buf, size_t cap)
{
	struct sa_line L;
	int n;

	if (!ev || !buf || cap < 64)
		return -1;
	build_fitting(ev, &L, NULL);
	n = sa_line_finish(&L, NULL);
	if (n < 0 || (size_t)n > cap)
		return -1;
	memcpy(buf, L.buf, (size_t)n);
	return n;
}

void sa_event_emit(json_t *ev, enum sa_level l, const struct sa_findings *f)
{
	struct sa_line L;
	const char *event;

	if (!ev)
		return;
	if ((!f || f->n == 0) && !sa_level_enabled(l)) {
		event = json_string_value(json_object_get(ev, "event"));
		sa_emit_skip(event ? event : "other", f);
		json_decref(ev);
		return;
	}
	build_fitting(ev, &L, f);
	sa_line_emit(&L, l, f);       /* L.event points into ev: free it after */
	json_decref(ev);
}

void sa_event_write(json_t *ev)
{
	struct sa_line L;

	if (!ev)
		return;
	build_fitting(ev, &L, NULL);
	sa_line_write(&L, NULL);
	json_decref(ev);
}
