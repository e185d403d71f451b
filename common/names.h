/*
 * names.h: the event names and finding codes of schema 1 (docs/events.md,
 * docs/findings.md), one definition for the library (its counters) and the
 * CLI (its report).
 * Pure: no dependencies. The last entry of each table is the catch-all.
 */
#ifndef SA_NAMES_H
#define SA_NAMES_H

static const char *const sa_finding_codes[] __attribute__((unused)) = {
	"defer_rounded", "defer_on_client_socket", "defer_with_fastopen", "defer_bypass_risk",
	"backlog_clamped", "option_adjusted", "option_differs", "empty_accept_defer_expired",
	"empty_accept_syncookie", "accept_queue_full", "accept_fd_limit", "syn_retransmitted",
	"slow_connect", "quickack_hot_loop", "server_speaks_first_deferred", "listen_overflows",
	"config_warning", "blind_spot", "other",
};
#define SA_NFINDING_CODES (sizeof sa_finding_codes / sizeof sa_finding_codes[0])

static const char *const sa_event_names[] __attribute__((unused)) = {
	"init", "warning", "setsockopt", "listen", "accept", "connect", "quickack_hot_loop",
	"listener_stats", "summary", "first_speaker", "blind_spot", "totals", "other",
};
#define SA_NEVENT_NAMES (sizeof sa_event_names / sizeof sa_event_names[0])
/* Indexes into sa_event_names, for the counters of the hot paths. */
enum sa_event_id {
	SA_EV_INIT, SA_EV_WARNING, SA_EV_SETSOCKOPT, SA_EV_LISTEN, SA_EV_ACCEPT, SA_EV_CONNECT,
	SA_EV_QUICKACK_HOT_LOOP, SA_EV_LISTENER_STATS, SA_EV_SUMMARY, SA_EV_FIRST_SPEAKER,
	SA_EV_BLIND_SPOT, SA_EV_TOTALS, SA_EV_OTHER,
};

#endif
