/*
 * optseen.c: the setsockopt calls this process has made, kept per (option,
 * value, outcome, kind of socket) rather than per fd: what decides whether
 * a call is logged or only counted, whether its read-back is sampled, and
 * the "setsockopt" counts of the summary and of each listener_stats line.
 * A fixed table (no heap) updated with atomics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "audit/accept.h"

uint64_t sa_fnv64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 1099511628211ull;
	return h;
}

/* ---- what was seen, per process ------------------------------------------ */

static struct sa_optseen seen[SA_OPTSEEN_SLOTS];
static uint64_t seen_overflow SA_PROC_PAGE;          /* calls that found no free slot */
/* A slot is this process's when its claim is the current process epoch
 * (+1). A forked child starts a new epoch instead of clearing the table: clearing 80 kB
 * would copy-on-write 20 pages in every child of a fork-per-connection
 * server, most of which never set an option. */
#define epoch (sa_proc_epoch() + 1)   /* 0 is a free slot */

static int is_mine(const struct sa_optseen *e)
{
	return __atomic_load_n(&e->claim, __ATOMIC_ACQUIRE) == epoch;
}

const char *sa_optsock_name(enum sa_optsock k)
{
	switch (k) {
	case SA_OPTSOCK_LISTENER: return "listener";
	case SA_OPTSOCK_ACCEPTED: return "accepted";
	case SA_OPTSOCK_OUTGOING: return "outgoing";
	default: return "other";
	}
}

/* One 64-bit word into the key: xor, an odd multiply and a fold, each a
 * bijection, so words in a different order or of another value give
 * another key (a word at a time, because FNV over the 32 bytes byte by
 * byte costs ~240 instructions per setsockopt). */
static inline uint64_t key_mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 32);
}

uint64_t sa_optseen_key(int level, int opt, int ret, int err, const void *val, socklen_t len,
			enum sa_optsock kind, uint64_t id)
{
	uint64_t h = SA_FNV64_BASIS, w;
	const unsigned char *b = val;
	size_t n, i;

	h = key_mix(h, (uint64_t)(uint32_t)level << 32 | (uint32_t)opt);
	h = key_mix(h, (uint64_t)(uint32_t)ret << 32 | (uint32_t)err);
	h = key_mix(h, (uint64_t)(uint32_t)kind);
	h = key_mix(h, id);
	if (ret == 0 && val) {
		n = len < 64 ? len : 64;
		h = key_mix(h, n);
		for (i = 0; i + 8 <= n; i += 8) {
			memcpy(&w, b + i, 8);
			h = key_mix(h, w);
		}
		if (i < n) {
			uint32_t x = 0;
			unsigned sh = 0;

			w = 0;
			if (n - i >= 4) {   /* an int, most of the time */
				memcpy(&x, b + i, 4);
				w = x;
				i += 4;
				sh = 32;
			}
			for (; i < n; i++, sh += 8)
				w |= (uint64_t)b[i] << sh;
			h = key_mix(h, w);
		}
	}
	return h ? h : 1;
}

struct sa_optseen *sa_optseen_get(uint64_t key, int level, int opt, enum sa_optsock kind, uint64_t id)
{
	uint32_t ep = epoch;
	unsigned i, n;

	for (n = 0, i = (unsigned)(key ^ (key >> 29)) % SA_OPTSEEN_SLOTS; n < SA_OPTSEEN_PROBE;
	     n++, i = (i + 1) % SA_OPTSEEN_SLOTS) {
		struct sa_optseen *e = &seen[i];
		uint32_t c = __atomic_load_n(&e->claim, __ATOMIC_ACQUIRE);

		if (c == ep) {
			/* Taken this epoch; key 0 while its claimer fills it. */
			if (__atomic_load_n(&e->key, __ATOMIC_ACQUIRE) == key)
				return e;
			continue;
		}
		/* Free, or left by the parent before a fork. Fill the fields
		 * first, then publish the key. A racing thread with the same key
		 * may claim the next slot: a count split in two. */
		if (!__atomic_compare_exchange_n(&e->claim, &c, ep, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			if (c == ep && __atomic_load_n(&e->key, __ATOMIC_ACQUIRE) == key)
				return e;
			continue;
		}
		__atomic_store_n(&e->key, 0, __ATOMIC_RELEASE);
		e->level = level;
		e->opt = opt;
		e->sock_kind = (uint8_t)kind;
		e->full = e->logged = 0;
		e->sock_id = id;
		e->eff_hash = 0;
		e->calls = e->read_back = e->logged_n = e->differs = e->failed = 0;
		__atomic_store_n(&e->key, key, __ATOMIC_RELEASE);
		return e;
	}
	__atomic_add_fetch(&seen_overflow, 1, __ATOMIC_RELAXED);
	return NULL;
}

int sa_optseen_readback(uint64_t nth, int full, int always)
{
	return always || full || nth <= SA_OPT_SAMPLE_FIRST || nth % SA_OPT_SAMPLE_EVERY == 0;
}

SA_FORK_TEXT void sa_sockopt_reset(void)
{
	/* The process epoch moved on (sa_proc_epoch_next): every slot is free. */
	SA_ZERO(seen_overflow);
}

/* The option's name as the summary keys it. */
static const char *opt_key(const struct sa_optseen *e, char *b, size_t n)
{
	const struct sa_optdesc *d = sa_opt_lookup(e->level, e->opt);

	if (d)
		return d->name;
	snprintf(b, n, "%d:%d", e->level, e->opt);
	return b;
}

static void add(json_t *o, const char *k, uint64_t v)
{
	json_t *x = json_object_get(o, k);

	json_object_set_new(o, k, json_integer((json_int_t)(json_integer_value(x) + (json_int_t)v)));
}

#define LOADS(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* At most this many options in a counts object (the busiest), the rest
 * summed under "other_options": a line stays far below 4 KB. */
#define COUNTS_MAX_OPTIONS 10

static int by_calls_desc(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "calls"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "calls"));

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Zero counts left out; only "calls" is always there. */
static void drop_zeros(json_t *o)
{
	static const char *const k[] = { "logged", "read_back", "not_read_back", "differs", "failed" };
	size_t i;

	for (i = 0; i < sizeof k / sizeof k[0]; i++)
		if (json_integer_value(json_object_get(o, k[i])) == 0)
			json_object_del(o, k[i]);
}

json_t *sa_sockopt_counts_json(int only_accepted, uint64_t id)
{
	json_t *all = json_object(), *v, *vals[SA_OPTSEEN_SLOTS];
	const char *name;
	unsigned i;
	size_t n = 0, j;
	char b[32];

	for (i = 0; i < SA_OPTSEEN_SLOTS; i++) {
		const struct sa_optseen *e = &seen[i];
		json_t *o;

		if (!is_mine(e) || !__atomic_load_n(&e->key, __ATOMIC_ACQUIRE))
			continue;
		if (only_accepted && (e->sock_kind != SA_OPTSOCK_ACCEPTED || e->sock_id != id))
			continue;
		name = opt_key(e, b, sizeof b);
		o = json_object_get(all, name);
		if (!o) {
			o = json_object();
			json_object_set_new(all, name, o);
		}
		add(o, "calls", LOADS(e->calls));
		add(o, "logged", LOADS(e->logged_n));
		add(o, "read_back", LOADS(e->read_back));
		add(o, "not_read_back", LOADS(e->calls) - LOADS(e->read_back) - LOADS(e->failed));
		add(o, "differs", LOADS(e->differs));
		add(o, "failed", LOADS(e->failed));
	}
	json_object_foreach(all, name, v) {
		drop_zeros(v);
		json_object_set_new(v, "_name", json_string(name));
		vals[n++] = v;
	}
	if (n > COUNTS_MAX_OPTIONS) {
		json_t *rest = json_object(), *top = json_object();
		json_int_t calls = 0;

		qsort(vals, n, sizeof vals[0], by_calls_desc);
		for (j = 0; j < n; j++) {
			if (j < COUNTS_MAX_OPTIONS)
				json_object_set(top, json_string_value(json_object_get(vals[j], "_name")), vals[j]);
			else
				calls += json_integer_value(json_object_get(vals[j], "calls"));
		}
		json_object_set_new(rest, "options", json_integer((json_int_t)(n - COUNTS_MAX_OPTIONS)));
		json_object_set_new(rest, "calls", json_integer(calls));
		json_object_set_new(top, "other_options", rest);
		json_decref(all);
		all = top;
	}
	json_object_foreach(all, name, v)
		json_object_del(v, "_name");
	return all;
}

void sa_sockopt_summary(json_t *summary)
{
	json_t *o = sa_sockopt_counts_json(0, 0);

	if (LOADS(seen_overflow))
		json_object_set_new(o, "untracked_calls", json_integer((json_int_t)LOADS(seen_overflow)));
	json_object_set_new(summary, "setsockopt", o);
}

