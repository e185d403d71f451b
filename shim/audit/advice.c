/*
 * advice.c: the sentences a listener_stats line gives a person, from the
 * plain numbers of struct sa_advice_in (pure: cmocka tests call it). Each
 * says what the counts showed and what to change; anything they cannot
 * show is worded as a possibility with the check that settles it.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "audit/accept.h"
#include "advice_text.h"
#include "syn_schedule.h"

/* Advice about emptiness needs a few accepts to mean anything. */
#define ADVICE_MIN_ACCEPTS 10

int sa_needed_backlog(uint32_t peak_waiting, int backlog)
{
	long need = 2L * (long)peak_waiting, floor2 = 2L * ((long)backlog + 1);

	if (need < floor2)
		need = floor2;
	return need > 65535 ? 65535 : (int)need;
}

int sa_pct(uint64_t part, uint64_t whole)
{
	return whole ? (int)((part * 100 + whole / 2) / whole) : 0;
}

static void advise(json_t *arr, int *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void advise(json_t *arr, int *n, const char *fmt, ...)
{
	char buf[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	json_array_append_new(arr, json_string(buf));
	(*n)++;
}

int sa_listener_advice(const struct sa_advice_in *in, json_t *arr)
{
	uint64_t decided = in->first_client + in->first_server;
	/* Over the accepts checked for data (all of them on a deferred
	 * listener, the sampled ones on others): empty + with_data. */
	int n = 0, empty_pct = sa_pct(in->empty_accepts, in->empty_accepts + in->with_data);
	/* The real window where the listener's TCP_RTO_MAX_MS shortens it (6.19+); 0: not known. */
	long real_ms = in->defer_real_ms > 0 ? in->defer_real_ms : in->defer_s * 1000L;
	char win[24], note[300];

	sa_secs_str(win, sizeof win, real_ms);
	sa_defer_note(note, sizeof note, in->defer_s, in->defer_real_ms, in->rto_max_ms);

	/* 1. Who sends the first byte on this port? */
	if (in->first_server > 0 && in->first_server >= in->first_client) {
		if (in->defer_s > 0)
			advise(arr, &n, SA_ADVICE_SERVER_FIRST_DEFERRED,
			       (unsigned long long)in->first_server, (unsigned long long)decided, in->defer_s, win, note);
		else
			advise(arr, &n, SA_ADVICE_SERVER_FIRST,
			       (unsigned long long)in->first_server, (unsigned long long)decided);
	} else if (in->first_client > 0 && in->defer_s <= 0 && in->accepts >= ADVICE_MIN_ACCEPTS &&
		   in->empty_accepts + in->with_data >= ADVICE_MIN_ACCEPTS) {
		/* 2. What would deferral gain? The accepts that found no data. */
		if (empty_pct >= 50)
			advise(arr, &n, SA_ADVICE_CLIENT_FIRST_MOSTLY_EMPTY,
			       empty_pct);
		else
			advise(arr, &n, SA_ADVICE_CLIENT_FIRST_WITH_DATA,
			       100 - empty_pct);
	} else if (in->first_client > 0 && in->defer_s > 0 && in->first_server == 0) {
		advise(arr, &n, SA_ADVICE_CLIENT_FIRST_DEFERRED,
		       (unsigned long long)in->first_client, sa_plural(in->first_client, "connection", "connections"),
		       in->defer_s);
	}
	/* 4. The window expires and the connection arrives anyway. */
	if (in->defer_s > 0 && (in->defer_expired || in->syncookie))
		advise(arr, &n, SA_ADVICE_DEFER_EMPTY_ACCEPTS,
		       in->defer_s, (unsigned long long)in->empty_accepts, (unsigned long long)in->accepts,
		       (unsigned long long)in->defer_expired, (unsigned long long)in->syncookie, note);
	/* 5. Under load the queue, bounded by the backlog, fills. */
	if (in->queue_full_seen > 0) {
		advise(arr, &n, SA_ADVICE_QUEUE_FULL,
		       (unsigned long long)in->queue_full_seen, sa_plural(in->queue_full_seen, "accept", "accepts"),
		       in->backlog + 1, in->backlog, in->peak_waiting,
		       sa_needed_backlog(in->peak_waiting, in->backlog));
		if (in->defer_s > 0)
			advise(arr, &n, SA_ADVICE_QUEUE_FULL_DEFERRED);
	}
	/* 6. The kernel's counters tell whether deferral engaged at all. */
	if (in->ns_valid && in->defer_s > 0 && in->accepts > 0) {
		if (in->has_defer_drop && in->defer_drop == 0)
			advise(arr, &n, SA_ADVICE_NO_DEFER_DROP);
		if (in->has_cookies_recv && in->cookies_recv > 0)
			advise(arr, &n, SA_ADVICE_SYNCOOKIES_RECV,
			       (unsigned long long)in->cookies_recv, (unsigned long long)in->cookies_recv);
	}
	return n;
}

