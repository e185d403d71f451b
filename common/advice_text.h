/*
 * advice_text.h: the sentences of a listener_stats line's advice, as
 * printf templates beside their names, so the rules in
 * shim/audit/advice.c read as rules (sa_listener_advice fills them with
 * the listener's counts). Pure: no dependencies.
 */
#ifndef SA_ADVICE_TEXT_H
#define SA_ADVICE_TEXT_H

/* Each at most SA_MSG_MAX characters with its numbers at their largest
 * (tests/unit/test_msg_length.c), like a msg. */
#define SA_ADVICE_SERVER_FIRST_DEFERRED \
	"The server speaks first here (%llu of %llu connections) with TCP_DEFER_ACCEPT=%d s: " \
	"greeting-first clients wait out the %s s window. Turn it off here.%s"

#define SA_ADVICE_SERVER_FIRST \
	"The server speaks first on this port (%llu of %llu connections): do not use " \
	"TCP_DEFER_ACCEPT (nginx deferred) here; greeting-first clients would wait out its window."

#define SA_ADVICE_CLIENT_FIRST_MOSTLY_EMPTY \
	"The client speaks first and %d%% of accepts found no data yet: TCP_DEFER_ACCEPT=1 " \
	"(nginx: listen ... deferred) could save those wake-ups; empty ones still come after ~1 s."

#define SA_ADVICE_CLIENT_FIRST_WITH_DATA \
	"The client speaks first and %d%% of accepts already had data: TCP_DEFER_ACCEPT would " \
	"gain little on this port."

#define SA_ADVICE_CLIENT_FIRST_DEFERRED \
	"The client speaks first (%llu %s): TCP_DEFER_ACCEPT=%d s suits this port."

#define SA_ADVICE_DEFER_EMPTY_ACCEPTS \
	"TCP_DEFER_ACCEPT=%d s, yet %llu of %llu accepts were empty (%llu after the window, %llu " \
	"by SYN cookies): handle empty connections.%s"

#define SA_ADVICE_QUEUE_FULL \
	"The accept queue was seen full at %llu %s (room for %d, backlog %d, peak %u waiting): " \
	"clients' SYNs were likely dropped. Fix: backlog %d or more (and somaxconn), or accept " \
	"faster."

#define SA_ADVICE_QUEUE_FULL_DEFERRED \
	"Deferred connections wait in the SYN queue, which the same backlog bounds: once it " \
	"fills, SYN cookies accept new clients without deferral."

#define SA_ADVICE_NO_DEFER_DROP \
	"TCPDeferAcceptDrop did not rise in this network namespace: deferral held back no " \
	"handshake ACK, so it saved no wake-up for these connections."

#define SA_ADVICE_SYNCOOKIES_RECV \
	"SyncookiesRecv rose by %llu in this network namespace while this listener defers: up to " \
	"%llu connections skipped deferral (another listener may account for some)."

#endif
