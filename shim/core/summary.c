/*
 * summary.c: the per-process summary line. Each audit module adds its own
 * part (listeners, connects, quickack), the namespace's counters follow,
 * then the counts of everything emitted, dropped and suppressed.
 */
#include "core/core.h"

void sa_summary_write(void)
{
	json_t *ev = sa_event_new("summary", -1);

	if (!ev)
		return;
	sa_accept_summary(ev);
	sa_connect_summary(ev);
	sa_quickack_summary(ev);
	sa_sockopt_summary(ev);
	sa_netns_summary(ev);
	/* Counts last, so they include the listener_stats written above. */
	json_object_set_new(ev, "counts", sa_event_counts());
	json_object_set_new(ev, "findings", sa_findings_totals());
	json_object_set_new(ev, "dropped", json_integer((json_int_t)sa_sink_dropped()));
	json_object_set_new(ev, "suppressed", json_integer((json_int_t)sa_suppressed_count()));
	/* Summary-level findings (the object above holds totals, not codes). */
	sa_event_emit(ev, SA_LEVEL_WARN, NULL);
}

void sa_summary_reset_after_fork(void)
{
	sa_accept_reset();
	sa_connect_reset();
	sa_quickack_reset();
	sa_sockopt_reset();
}
