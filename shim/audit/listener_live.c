/*
 * listener_live.c: when a listener's line is written while the process
 * runs. The live thread (shim/core/ticker.c) looks at every listener of
 * this process once an interval and writes a line for each whose counts
 * moved or whose accept queue holds connections now (a program that
 * stopped calling accept() shows its full queue, not silence); while that
 * thread runs, the accept path writes none of its own. Without it (not
 * started yet, in a forked child's first interval, or no thread could be
 * made) the accept path writes one when the interval passed
 * (sa_listener_tick). And a forked child's first count on a listener,
 * which starts its stats from zero.
 */
#include <netinet/in.h>
#include <stddef.h>

#include "audit/accept.h"

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* SOCKAUDIT_STATS_INTERVAL in ns, read once (the configuration does not
 * change after init); UINT64_MAX: at close and exit only; 0: not read
 * yet; SA_LISTENER_EVERY_LIVE while the live thread writes the lines. On
 * the process page: a forked child (no thread) puts the interval back. */
uint64_t sa_listener_every_ns SA_PROC_PAGE;
static uint64_t every_cfg;

static uint64_t interval_ns(void)
{
	const struct sa_config *c;
	uint64_t e = __atomic_load_n(&every_cfg, __ATOMIC_RELAXED);

	if (SA_LIKELY(e))
		return e;
	c = sa_cfg();
	if (!c)
		return 0;
	/* Any thread may be first: the same value from each. */
	e = c->stats_interval > 0 ? (uint64_t)c->stats_interval * 1000000000ull : UINT64_MAX;
	__atomic_store_n(&every_cfg, e, __ATOMIC_RELAXED);
	return e;
}

void sa_listener_live_on(int on)
{
	uint64_t want = on ? SA_LISTENER_EVERY_LIVE : interval_ns();

	if (__atomic_load_n(&sa_listener_every_ns, __ATOMIC_RELAXED) != want)
		__atomic_store_n(&sa_listener_every_ns, want, __ATOMIC_RELAXED);
}

/* One thread claims the line of an interval: the first to move last_emit_ns
 * from last to now. */
static int claim(struct sa_listener *l, uint64_t last, uint64_t now_ns)
{
	return __atomic_compare_exchange_n(&l->last_emit_ns, &last, now_ns, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static uint64_t moved_sum(const struct sa_listener *l)
{
	return LOAD(l->accepts) + LOAD(l->eagain) + LOAD(l->errors) + LOAD(l->left_by_jump) +
	       LOAD(l->queue_full_seen) + LOAD(l->empty_accepts) + LOAD(l->counted);
}

void sa_listener_live(uint64_t now_ns)
{
	uint64_t every = interval_ns(), last, sum;
	struct sa_listener *l;

	if (!every || every == UINT64_MAX)
		return;
	sa_listener_live_on(1);
	for (l = sa_listener_head(); l; l = l->next) {
		if (!__atomic_load_n(&l->in_use, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&l->epoch, __ATOMIC_ACQUIRE) != sa_proc_epoch())
			continue;
		sum = moved_sum(l);
		if (sum == l->live_sum && sa_listener_waiting_now(l) <= 0)
			continue;
		/* Not within half an interval of a line already written (at a
		 * close racing us, or the accept path's before we started). */
		last = __atomic_load_n(&l->last_emit_ns, __ATOMIC_RELAXED);
		if (now_ns <= last || now_ns - last < every / 2 || !claim(l, last, now_ns))
			continue;
		l->live_sum = sum;
		sa_listener_emit(l);
	}
}

void sa_listener_tick(struct sa_listener *l, uint64_t now_ns)
{
	/* Atomic (relaxed: plain moves): threads tick the same listener. */
	uint64_t last, every = __atomic_load_n(&sa_listener_every_ns, __ATOMIC_RELAXED), reset;

	if (SA_UNLIKELY(!every)) {
		every = interval_ns();
		if (!every)
			return;
		__atomic_store_n(&sa_listener_every_ns, every, __ATOMIC_RELAXED);
	}
	if (!l || every >= SA_LISTENER_EVERY_LIVE)
		return;
	last = __atomic_load_n(&l->last_emit_ns, __ATOMIC_RELAXED);
	reset = __atomic_load_n(&sa_listener_reset_ns, __ATOMIC_RELAXED);
	if (last < reset) {
		/* This process's interval starts at its fork. */
		if (!__atomic_compare_exchange_n(&l->last_emit_ns, &last, reset, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return;
		last = reset;
	}
	/* Another thread may have claimed a later time than our now_ns. */
	if (now_ns <= last || now_ns - last < every)
		return;
	if (!claim(l, last, now_ns))
		return;
	sa_listener_emit(l);
}


/* A forked child's first count on a listener: its stats start from zero
 * (written only where set). Threads of the child racing here: one clears,
 * and a count another makes meanwhile may be lost (once per listener and
 * process). */
void sa_listener_adopt(struct sa_listener *l)
{
	uint32_t e = __atomic_load_n(&l->epoch, __ATOMIC_ACQUIRE), now = sa_proc_epoch();

	if (e == now || !__atomic_compare_exchange_n(&l->epoch, &e, now, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	SA_ZERO(l->accepts);
	SA_ZERO(l->counted);
	SA_ZERO(l->eagain);
	SA_ZERO(l->errors);
	SA_ZERO(l->left_by_jump);
	SA_ZERO(l->empty_accepts);
	SA_ZERO(l->with_data);
	SA_ZERO(l->defer_expired);
	SA_ZERO(l->syncookie);
	SA_ZERO(l->fd_limit);
	SA_ZERO(l->queue_full_seen);
	SA_ZERO(l->queue_full_prev);
	SA_ZERO(l->peak_waiting);
	SA_ZERO(l->first_client);
	SA_ZERO(l->first_server);
	SA_ZERO(l->first_unknown);
	sa_hist_reset(&l->queue_ms);
	sa_hist_reset(&l->wait_ms);
	SA_ZERO(l->ns_prev);
	/* The stats interval starts at the first count after a fork (1: clock
	 * not read yet), so sa_listener_tick_l need not look at reset_ns. */
	if (__atomic_load_n(&sa_listener_reset_ns, __ATOMIC_RELAXED) == 1)
		__atomic_store_n(&sa_listener_reset_ns, sa_now_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&l->last_emit_ns, __atomic_load_n(&sa_listener_reset_ns, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}
