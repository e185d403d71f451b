/*
 * listener_stats.c: per-listener state (struct sa_listener) and the
 * listener_stats line: counts, queue and wait percentiles, who speaks
 * first, the namespace counters beside them, and advice that answers the
 * TCP_DEFER_ACCEPT decision frame (who sends the first byte, what deferral
 * would gain, what happens when its window expires or the queue fills).
 *
 * A listener lives while an fd entry names it (the fd, its dups, one inherited across fork); the
 * last close writes its line and pools it (accept.h: never freed). Lines are written by the live
 * thread (listener_live.c) or the accept path when the interval passed, at that close, and at exit.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "audit/accept.h"
#include "syn_schedule.h"

/* A process with more listeners open at once than this gets no stats for
 * the rest (each one holds two histograms, ~9 KB). */
#define MAX_LISTENERS 4096
/* At most this many listeners are listed in the summary line (4 KB). */
#define SUMMARY_LISTENERS 12

static struct sa_listener *head;

struct sa_listener *sa_listener_head(void)
{
	return __atomic_load_n(&head, __ATOMIC_ACQUIRE);
}

static int nlisteners;
/* The first listener made, not mmap'd: sa_proc_tail follows the process
 * page's variables (shim/sa_proc.ld), so its header, in_use and refs among
 * it, shares the process page, which a forked child writes anyway. A
 * fork-per-connection child's close of the inherited listener then writes
 * no page of its own (a listener of its own would be one fault per child). */
static struct sa_listener first_listener SA_PROC_TAIL;
static int first_taken;
/* Serialises listener_stats lines (rare: each interval and at exit), so a
 * listener's previous-line snapshot is read and replaced by one thread. */
static int emit_lock SA_PROC_PAGE;   /* sa_trylock: a busy line is written at the next tick */

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static int is_active(const struct sa_listener *l);

/* One from the pool, or a new one. Lock-free: a listen() is rare, and a
 * lock here could be left held by a handler that siglongjmp()s away. */
static struct sa_listener *claim(void)
{
	struct sa_listener *l, *next;
	uint32_t zero, inc;

	for (l = __atomic_load_n(&head, __ATOMIC_ACQUIRE); l; l = l->next) {
		zero = 0;
		if (__atomic_load_n(&l->in_use, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&l->in_use, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		next = l->next;
		inc = __atomic_load_n(&l->inc, __ATOMIC_RELAXED);
		memset(l, 0, sizeof *l);
		l->next = next;
		l->in_use = 1;
		l->epoch = sa_proc_epoch();
		__atomic_store_n(&l->inc, inc + 1, __ATOMIC_RELEASE);
		return l;
	}
	if (__atomic_add_fetch(&nlisteners, 1, __ATOMIC_RELAXED) > MAX_LISTENERS) {
		__atomic_sub_fetch(&nlisteners, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	/* mmap, not the heap: a host handler may jump out of the wrapper. */
	if (!__atomic_exchange_n(&first_taken, 1, __ATOMIC_ACQ_REL))
		l = &first_listener;
	else
		l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (l == MAP_FAILED) {
		__atomic_sub_fetch(&nlisteners, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	l->in_use = 1;
	l->epoch = sa_proc_epoch();
	l->next = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
	while (!__atomic_compare_exchange_n(&head, &l->next, l, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	return l;
}

static void unclaim(struct sa_listener *l)
{
	__atomic_store_n(&l->in_use, 0, __ATOMIC_RELEASE);
}

static void ref(struct sa_listener *l)
{
	__atomic_add_fetch(&l->refs, 1, __ATOMIC_ACQ_REL);
}

static struct sa_listener *pending;   /* closed, line not yet written */

/* What the summary at exit says about listeners already closed: the first
 * SUMMARY_LISTENERS of them, and how many more. */
struct closed_rec {
	int listen_fd;
	char local[80];
	uint64_t accepts, empty_accepts, data_checked, queue_full_seen;
};
static struct closed_rec closed[SUMMARY_LISTENERS];
static uint32_t nclosed SA_PROC_PAGE;
uint64_t sa_listener_reset_ns SA_PROC_PAGE;   /* this process's first count after a fork (0: never forked) */

static void remember_closed(const struct sa_listener *l)
{
	uint32_t i = __atomic_fetch_add(&nclosed, 1, __ATOMIC_RELAXED);
	struct closed_rec *r;

	if (i >= SUMMARY_LISTENERS)
		return;
	r = &closed[i];
	r->listen_fd = l->listen_fd;
	memcpy(r->local, l->local, sizeof r->local);
	r->accepts = LOAD(l->accepts);
	r->empty_accepts = LOAD(l->empty_accepts);
	r->data_checked = LOAD(l->empty_accepts) + LOAD(l->with_data);
	r->queue_full_seen = LOAD(l->queue_full_seen);
}

/* l's inline-counted accepts into the accept event count, if this
 * process's (an inherited listener holds the parent's until adopted). */
static void fold_counted(struct sa_listener *l)
{
	uint64_t n;

	if (__atomic_load_n(&l->epoch, __ATOMIC_ACQUIRE) == sa_proc_epoch() && LOAD(l->counted) &&
	    (n = __atomic_exchange_n(&l->counted, 0, __ATOMIC_ACQ_REL)) != 0)
		sa_event_count_add(SA_EV_ACCEPT, n);
}

void sa_listener_fold_counted(void)
{
	struct sa_listener *l;

	for (l = __atomic_load_n(&head, __ATOMIC_ACQUIRE); l; l = l->next)
		if (__atomic_load_n(&l->in_use, __ATOMIC_ACQUIRE))
			fold_counted(l);
}

static void retire(struct sa_listener *l)
{
	fold_counted(l);
	if (is_active(l)) {
		sa_listener_emit(l);
		remember_closed(l);
	}
	unclaim(l);
}

static void unref_maybe_later(struct sa_listener *l, int defer)
{
	if (__atomic_sub_fetch(&l->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (!defer) {
		retire(l);
		return;
	}
	l->pending_next = __atomic_load_n(&pending, __ATOMIC_ACQUIRE);
	while (!__atomic_compare_exchange_n(&pending, &l->pending_next, l, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
}

static void unref(struct sa_listener *l)
{
	unref_maybe_later(l, 0);
}

void sa_listener_flush(void)
{
	struct sa_listener *l = __atomic_exchange_n(&pending, NULL, __ATOMIC_ACQ_REL), *next;

	for (; l; l = next) {
		next = l->pending_next;
		retire(l);
	}
}

/* Registered by init, before any fd entry can hold a reference (entries
 * get listeners only from an audited listen or accept). Not a constructor:
 * its code would be one more page every exec reads. */
void sa_listener_hooks_init(void)
{
	sa_fd_set_listener_hooks(ref, unref);
}

void sa_listener_release(struct sa_sock *s, int defer)
{
	struct sa_listener *l = __atomic_exchange_n(&s->lsn.listener, NULL, __ATOMIC_ACQ_REL);

	if (l)
		unref_maybe_later(l, defer);
}

struct sa_listener *sa_listener_get(int fd, struct sa_sock *s)
{
	struct sa_listener *l = __atomic_load_n(&s->lsn.listener, __ATOMIC_ACQUIRE), *expected = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char text[SA_ADDR_TEXT_MAX];
	int n;

	if (l || !sa_listen_is_listener(fd, s))
		return l;
	l = claim();
	if (!l)
		return NULL;
	sa_listener_hist_tails(l);
	l->refs = 1;                 /* s's */
	l->listen_fd = fd;
	l->family = s->family;
	l->backlog = s->lsn.backlog_effective;
	l->defer_s = s->opt.defer_accept_s;
	l->last_emit_ns = sa_now_ns();
	/* As text, no allocation; escaped when written (sa_json_str, sa_line_str). */
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
	    (n = sa_addr_text((struct sockaddr *)&ss, sl, text, sizeof text)) > 0)
		snprintf(l->local, sizeof l->local, "%.*s", n, text);
	sa_accept_line_part(l);
	/* Two threads meeting a new listener at once: one entry wins. */
	if (!__atomic_compare_exchange_n(&s->lsn.listener, &expected, l, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		unclaim(l);
		return expected;
	}
	return l;
}

static void raise_peak(uint32_t *p, uint32_t v)
{
	uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > old && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

int sa_listener_waiting_now(struct sa_listener *l)
{
	struct sa_sock *s = sa_fd_get(l->listen_fd);
	struct sa_tcpinfo ti;

	if ((l->family != AF_INET && l->family != AF_INET6) || !s ||
	    __atomic_load_n(&s->lsn.listener, __ATOMIC_ACQUIRE) != l)
		return -1;
	/* A short TCP_INFO (an emulator, an old kernel) or a socket that is
	 * no longer this listener: unknown, never a number from elsewhere. */
	if (sa_tcpinfo_read(l->listen_fd, &ti) != 0 || !sa_tcpinfo_listener_queue(&ti) ||
	    __atomic_load_n(&s->lsn.listener, __ATOMIC_ACQUIRE) != l)
		return -1;
	raise_peak(&l->peak_waiting, ti.unacked);
	return (int)ti.unacked;
}

static json_t *speaker_json(const struct sa_advice_in *in)
{
	json_t *o = json_object();

	json_object_set_new(o, "client", json_integer((json_int_t)in->first_client));
	json_object_set_new(o, "server", json_integer((json_int_t)in->first_server));
	json_object_set_new(o, "unknown", json_integer((json_int_t)in->first_unknown));
	return o;
}

static void fill_advice_in(const struct sa_listener *l, struct sa_advice_in *in)
{
	memset(in, 0, sizeof *in);
	/* Parts before the whole: each part is counted after accepts, so
	 * loading accepts last keeps them from exceeding it. */
	in->empty_accepts = LOAD(l->empty_accepts);
	in->with_data = LOAD(l->with_data);
	in->defer_expired = LOAD(l->defer_expired);
	in->syncookie = LOAD(l->syncookie);
	in->first_client = LOAD(l->first_client);
	in->first_server = LOAD(l->first_server);
	in->first_unknown = LOAD(l->first_unknown);
	in->queue_full_seen = LOAD(l->queue_full_seen);
	in->peak_waiting = LOAD(l->peak_waiting);
	in->backlog = LOAD(l->backlog);
	in->defer_s = LOAD(l->defer_s);
	in->defer_real_ms = LOAD(l->defer_real_ms);
	in->rto_max_ms = LOAD(l->rto_max_ms);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	in->accepts = LOAD(l->accepts);
}

static void emit_line(struct sa_listener *l)
{
	const struct sa_netns_snap *base;
	struct sa_netns_snap now;
	struct sa_findings f = { 0 };
	struct sa_advice_in in;
	json_t *ev, *advice;
	uint64_t accepts, qfull, eagain, errors, fd_limit, d;
	int have_now, waiting;

	if (!sa_trylock(&emit_lock))
		return;
	ev = sa_event_new("listener_stats", -1);
	if (!ev) {
		sa_unlock(&emit_lock);
		return;
	}
	sa_netns_baseline();
	base = sa_netns_base();
	have_now = base && sa_netns_read(&now) == 0;
	/* The queue now, before the counts: a connection waiting is one the
	 * peak may count. */
	waiting = sa_listener_waiting_now(l);
	/* All counts at one moment, so they add up on the line. */
	fill_advice_in(l, &in);
	accepts = in.accepts;
	qfull = in.queue_full_seen;
	eagain = LOAD(l->eagain);
	errors = LOAD(l->errors);
	fd_limit = LOAD(l->fd_limit);
	if (have_now) {
		in.ns_valid = 1;
		in.has_defer_drop = sa_netns_delta(base, &now, SA_NS_DEFER_ACCEPT_DROP, &in.defer_drop);
		in.has_cookies_recv = sa_netns_delta(base, &now, SA_NS_SYNCOOKIES_RECV, &in.cookies_recv);
		in.has_overflows = sa_netns_delta(base, &now, SA_NS_LISTEN_OVERFLOWS, &in.overflows);
		/* Per interval: did ListenOverflows rise since this listener's
		 * previous line, while its own queue was seen full? */
		if (sa_netns_delta(l->ns_prev.valid ? &l->ns_prev : base, &now, SA_NS_LISTEN_OVERFLOWS, &d) &&
		    d > 0 && qfull > l->queue_full_prev) {
			uint64_t synr = 0;
			char retr[300] = "";

			if (sa_netns_delta(l->ns_prev.valid ? &l->ns_prev : base, &now, SA_NS_SYN_RETRANS, &synr))
				snprintf(retr, sizeof retr, synr == 0 ?
					SA_MSG_LISTEN_OVERFLOWS_NO_SYN_RETRANS_TAIL :
					SA_MSG_LISTEN_OVERFLOWS_SYN_RETRANS_TAIL,
					(unsigned long long)synr);
			sa_findings_add(&f, "listen_overflows",
				SA_MSG_LISTEN_OVERFLOWS,
				(unsigned long long)d, in.backlog + 1,
				(unsigned long long)(qfull - l->queue_full_prev),
				sa_plural(qfull - l->queue_full_prev, "accept", "accepts"), retr,
				sa_needed_backlog(in.peak_waiting, in.backlog));
		}
		l->ns_prev = now;
	}
	l->queue_full_prev = qfull;
	sa_unlock(&emit_lock);

	json_object_set_new(ev, "listen_fd", json_integer(l->listen_fd));
	json_object_set_new(ev, "local", l->local[0] ? sa_json_str(l->local) : json_null());
	json_object_set_new(ev, "backlog", in.backlog >= 0 ? json_integer(in.backlog) : json_null());
	json_object_set_new(ev, "defer_accept_s", json_integer(in.defer_s));
	json_object_set_new(ev, "accepts", json_integer((json_int_t)accepts));
	json_object_set_new(ev, "eagain", json_integer((json_int_t)eagain));
	json_object_set_new(ev, "errors", json_integer((json_int_t)errors));
	json_object_set_new(ev, "left_by_jump", json_integer((json_int_t)LOAD(l->left_by_jump)));
	json_object_set_new(ev, "empty_accepts", json_integer((json_int_t)in.empty_accepts));
	json_object_set_new(ev, "empty_defer_expired", json_integer((json_int_t)in.defer_expired));
	json_object_set_new(ev, "empty_syncookie", json_integer((json_int_t)in.syncookie));
	json_object_set_new(ev, "data_checked", json_integer((json_int_t)(in.empty_accepts + in.with_data)));
	json_object_set_new(ev, "with_data_pct", in.empty_accepts + in.with_data ?
			    json_integer(sa_pct(in.with_data, in.empty_accepts + in.with_data)) : json_null());
	json_object_set_new(ev, "queue_ms", sa_hist_json(&l->queue_ms));
	json_object_set_new(ev, "wait_ms", sa_hist_json(&l->wait_ms));
	json_object_set_new(ev, "queue_full_seen", json_integer((json_int_t)qfull));
	json_object_set_new(ev, "peak_waiting", json_integer(in.peak_waiting));
	json_object_set_new(ev, "backlog_needed", qfull > 0 && in.backlog >= 0 ?   /* the advice's figure */
			    json_integer(sa_needed_backlog(in.peak_waiting, in.backlog)) : json_null());
	json_object_set_new(ev, "fd_limit", json_integer((json_int_t)fd_limit));
	json_object_set_new(ev, "waiting_now", waiting >= 0 ? json_integer(waiting) : json_null());
	json_object_set_new(ev, "first_speaker", speaker_json(&in));
	/* setsockopt calls on connections accepted here (logged once, counted after). */
	json_object_set_new(ev, "setsockopt", sa_sockopt_counts_json(1, (uint64_t)(uintptr_t)l));
	if (have_now)
		json_object_set_new(ev, "netns_counters", sa_netns_delta_json(base, &now));
	advice = json_array();
	sa_listener_advice(&in, advice);
	json_object_set_new(ev, "advice", advice);
	sa_event_emit(ev, SA_LEVEL_WARN, &f);
}

/* jansson allocates: every signal is held while the line is built, so no
 * host handler can jump out of the heap half-way (rare: once an interval,
 * at a listener's close and at exit). */
void sa_listener_emit(struct sa_listener *l)
{
	sigset_t old;

	sa_signals_hold(&old);
	emit_line(l);
	sa_signals_release(&old);
}

static int is_active(const struct sa_listener *l)
{
	return __atomic_load_n(&l->epoch, __ATOMIC_ACQUIRE) == sa_proc_epoch() &&
	       (LOAD(l->accepts) || LOAD(l->eagain) || LOAD(l->errors) || LOAD(l->left_by_jump));
}

int sa_accept_active(void)
{
	struct sa_listener *l;

	for (l = __atomic_load_n(&head, __ATOMIC_ACQUIRE); l; l = l->next)
		if (is_active(l))
			return 1;
	return 0;
}

void sa_accept_summary(json_t *summary, int final)
{
	struct sa_listener *l;
	json_t *arr = json_array();
	int listed = 0, omitted = 0;
	uint32_t i, nc;

	sa_listener_flush();
	/* Listeners closed earlier wrote their line then; the summary still
	 * names them, first the closed ones (in closing order), then the open. */
	nc = __atomic_load_n(&nclosed, __ATOMIC_RELAXED);
	for (i = 0; i < nc; i++) {
		const struct closed_rec *r = &closed[i];
		json_t *o;

		if (i >= SUMMARY_LISTENERS) {
			omitted += (int)(nc - i);
			break;
		}
		o = json_object();
		json_object_set_new(o, "listen_fd", json_integer(r->listen_fd));
		json_object_set_new(o, "local", r->local[0] ? json_string(r->local) : json_null());
		json_object_set_new(o, "accepts", json_integer((json_int_t)r->accepts));
		json_object_set_new(o, "empty_accepts", json_integer((json_int_t)r->empty_accepts));
		json_object_set_new(o, "data_checked", json_integer((json_int_t)r->data_checked));
		json_object_set_new(o, "queue_full_seen", json_integer((json_int_t)r->queue_full_seen));
		json_object_set_new(o, "closed", json_true());
		json_array_append_new(arr, o);
		listed++;
	}
	for (l = __atomic_load_n(&head, __ATOMIC_ACQUIRE); l; l = l->next) {
		if (!__atomic_load_n(&l->in_use, __ATOMIC_ACQUIRE) || !is_active(l))
			continue;
		if (final)
			sa_listener_emit(l);
		if (listed >= SUMMARY_LISTENERS) {
			omitted++;
			continue;
		}
		json_t *o = json_object();
		json_object_set_new(o, "listen_fd", json_integer(l->listen_fd));
		json_object_set_new(o, "local", l->local[0] ? sa_json_str(l->local) : json_null());
		json_object_set_new(o, "accepts", json_integer((json_int_t)LOAD(l->accepts)));
		json_object_set_new(o, "empty_accepts", json_integer((json_int_t)LOAD(l->empty_accepts)));
		json_object_set_new(o, "data_checked",
				    json_integer((json_int_t)(LOAD(l->empty_accepts) + LOAD(l->with_data))));
		json_object_set_new(o, "queue_full_seen", json_integer((json_int_t)LOAD(l->queue_full_seen)));
		json_array_append_new(arr, o);
		listed++;
	}
	json_object_set_new(summary, "listeners", arr);
	if (omitted)
		json_object_set_new(summary, "listeners_omitted", json_integer(omitted));
}

/* In a forked child (one thread): a worker's stats are its own. The
 * listener entries stay, since workers accept on inherited listeners; their
 * counters are cleared when the child first counts on one
 * (sa_listener_adopt), so a child that never accepts writes none of them. */
void sa_accept_reset(void)
{
	/* Another thread of the parent may have held it at fork time. */
	SA_ZERO(emit_lock);
	SA_ZERO(nclosed);
	/* Intervals start at its first count (adopt): a child that never
	 * accepts never reads the clock. */
	if (__atomic_load_n(&sa_listener_reset_ns, __ATOMIC_RELAXED) != 1)
		__atomic_store_n(&sa_listener_reset_ns, 1, __ATOMIC_RELAXED);
	/* The namespace baseline stays the parent's: a child serving one
	 * connection does not read /proc/net twice more for it (the counters
	 * are namespace-wide, so its deltas simply start at the parent's). */
}
