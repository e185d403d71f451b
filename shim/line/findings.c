/*
 * findings.c: the findings of one audited call (codes and sentences), and
 * the per-process counters of events, findings and suppressed repeats that
 * the summary reports.
 *
 * Counters are relaxed atomics in fixed arrays: no lock, so a signal
 * handler, a cancelled thread or the destructor can always read them.
 */
#include <stdio.h>
#include <string.h>

#include "names.h"
#include "line/line.h"

#define NCODES SA_NFINDING_CODES
#define finding_codes sa_finding_codes
static uint64_t finding_counts[NCODES] SA_PROC_PAGE;

#define NEVENTS SA_NEVENT_NAMES
#define event_names sa_event_names
#define event_counts sa_event_counters
uint64_t event_counts[NEVENTS] SA_PROC_PAGE;
static uint64_t suppressed SA_PROC_PAGE;

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

/* Records code once; returns where its sentence goes in msg (after a
 * space when msg has one already), or NULL when there is no sentence. */
static inline char *finding_slot(struct sa_findings *f, const char *code, const char *fmt)
{
	size_t used = strlen(f->msg);
	int i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->codes[i], code))
			break;
	if (i == f->n && f->n < SA_MAX_FINDINGS)
		f->codes[f->n++] = code;
	if (!fmt)
		return NULL;
	return f->msg + used + (used != 0);
}

/* A sentence that does not fit in what is left of the SA_MSG_MAX
 * characters (a line with several findings) is not cut: the line names
 * the code's explanation instead, or says nothing more when even that
 * does not fit (the code is in findings either way). */
static void add_v(struct sa_findings *f, const char *code, const char *fmt, va_list ap)
{
	char *p = finding_slot(f, code, fmt);
	size_t room;
	int n;

	if (!p)
		return;
	room = sizeof f->msg - (size_t)(p - f->msg);
	if (p >= f->msg + sizeof f->msg - 1)
		return;
	n = vsnprintf(p, room, fmt, ap);
	if (n >= 0 && (size_t)n < room) {
		if (p != f->msg)
			p[-1] = ' ';
		return;
	}
	n = snprintf(p, room, SA_MSG_SEE_EXPLAIN, code);
	if (n >= 0 && (size_t)n < room) {
		if (p != f->msg)
			p[-1] = ' ';
		return;
	}
	*(p != f->msg ? p - 1 : p) = '\0';
}

void sa_findings_add(struct sa_findings *f, const char *code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_v(f, code, fmt, ap);
	va_end(ap);
}

/* The read-back words' callback (sa_say_fn): the same as sa_findings_add. */
void sa_findings_say(void *ctx, const char *code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_v(ctx, code, fmt, ap);
	va_end(ap);
}

void sa_findings_count(const char *code)
{
	__atomic_add_fetch(&finding_counts[index_of(finding_codes, NCODES, code)], 1, __ATOMIC_RELAXED);
}

/* Whether any of n counters is set. */
static int any_set(const uint64_t *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (__atomic_load_n(&c[i], __ATOMIC_RELAXED))
			return 1;
	return 0;
}

SA_FORK_TEXT int sa_findings_any(void)
{
	return any_set(finding_counts, NCODES);
}

/* {name: count} for the names whose count is not 0. */
static json_t *counts_object(const char *const *names, const uint64_t *counts, size_t n)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t c = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
		if (c)
			json_object_set_new(o, names[i], json_integer((json_int_t)c));
	}
	return o;
}

json_t *sa_findings_totals(void)
{
	return counts_object(finding_codes, finding_counts, NCODES);
}

_Static_assert(SA_EV_OTHER + 1 == NEVENTS, "enum sa_event_id follows sa_event_names");

/* An event name's index, remembered by its address (a literal's, merged
 * with the table's): a hit is checked against the table itself, so a
 * stale or racing slot costs only the search. */
#define event_slot sa_event_slot
unsigned char event_slot[SA_EVENT_SLOTS] SA_PROC_PAGE;

SA_FORK_TEXT void sa_event_count(const char *event)
{
	size_t h = ((uintptr_t)event >> 2) % SA_EVENT_SLOTS;
	size_t i = __atomic_load_n(&event_slot[h], __ATOMIC_RELAXED);

	if (i >= NEVENTS - 1 || event_names[i] != event) {
		i = index_of(event_names, NEVENTS, event);
		__atomic_store_n(&event_slot[h], (unsigned char)i, __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&event_counts[i], 1, __ATOMIC_RELAXED);
}

json_t *sa_event_counts(void)
{
	return counts_object(event_names, event_counts, NEVENTS);
}

SA_FORK_TEXT int sa_event_any(void)
{
	return any_set(event_counts, NEVENTS);
}

SA_FORK_TEXT void sa_event_counts_reset(void)
{
	SA_ZERO(event_counts);
	SA_ZERO(finding_counts);
	SA_ZERO(suppressed);
}

uint64_t sa_suppressed_count(void)
{
	return __atomic_load_n(&suppressed, __ATOMIC_RELAXED);
}

void sa_suppressed_add(uint64_t n)
{
	__atomic_add_fetch(&suppressed, n, __ATOMIC_RELAXED);
}
