/*
 * summary.c: the per-process summary line. Each audit module adds its own
 * part (listeners, connects, quickack), the namespace's counters follow,
 * then the counts of everything emitted, dropped and suppressed.
 */
#include "core/core.h"

static int forked_child SA_PROC_PAGE;

/* What the summary and a totals line carry: the figures so far. */
static void add_figures(json_t *ev, int final)
{
	json_t *na;

	sa_accept_summary(ev, final);
	sa_connect_summary(ev);
	sa_quickack_summary(ev);
	sa_sockopt_summary(ev);
	sa_netns_summary(ev);
	/* Counts last, so they include the listener_stats written above, and
	 * the accepts counted inline on each listener. */
	sa_listener_fold_counted();
	json_object_set_new(ev, "counts", sa_event_counts());
	json_object_set_new(ev, "findings", sa_findings_totals());
	json_object_set_new(ev, "dropped", json_integer((json_int_t)sa_sink_dropped()));
	json_object_set_new(ev, "suppressed", json_integer((json_int_t)sa_suppressed_count()));
	if ((na = sa_unaudited_json()) != NULL)
		json_object_set_new(ev, "not_audited", na);
}

/* From the live thread (all signals blocked there). */
void sa_totals_write(void)
{
	json_t *ev = sa_event_new("totals", -1);

	if (!ev)
		return;
	add_figures(ev, 0);
	sa_event_emit(ev, SA_LEVEL_WARN, NULL);
}

SA_FORK_TEXT void sa_summary_write(void)
{
	sigset_t old;
	json_t *ev;

	sa_emit_stamp_check();   /* a child no fork handler saw: not its parent's counts */

	/* A forked child below trace that accepted nothing, found nothing and
	 * wrote no line has nothing to say: under a fork-per-connection server
	 * (socat fork, inetd style) its init and summary would be two lines per
	 * connection. Its counts (a healthy connect to the backend, say) are
	 * lost; SOCKAUDIT_LEVEL=trace keeps every child's summary. */
	/* Asked without building anything: every page a child of a
	 * fork-per-connection server writes (malloc's included) is a copy. */
	if (forked_child && !sa_level_enabled(SA_LEVEL_TRACE) && !sa_accept_active() && !sa_lines_written() &&
	    !sa_findings_any() && !sa_unaudited_any())
		return;
	sa_signals_hold(&old);
	sa_unaudited_say();      /* once, before the summary that counts it */
	/* Before the summary, so its findings totals count it. */
	sa_blind_ring_at_summary();
	ev = sa_event_new("summary", -1);
	if (!ev) {
		sa_signals_release(&old);
		return;
	}
	add_figures(ev, 1);
	/* Summary-level findings (the object above holds totals, not codes). */
	sa_event_emit(ev, SA_LEVEL_WARN, NULL);
	sa_signals_release(&old);
}

SA_FORK_TEXT void sa_summary_reset_after_fork(void)
{
	if (!forked_child)   /* a child's child: written already (every page written is a copy) */
		forked_child = 1;
	sa_accept_reset();
	sa_connect_reset();
	sa_quickack_reset();
	sa_sockopt_reset();
}
