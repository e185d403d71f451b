/*
 * advice_text.h: the sentences of a listener_stats line's advice, as
 * printf templates beside their names, so the rules in
 * shim/audit/advice.c read as rules (sa_listener_advice fills them with
 * the listener's counts). Pure: no dependencies.
 */
#ifndef SA_ADVICE_TEXT_H
#define SA_ADVICE_TEXT_H

#define SA_ADVICE_SERVER_FIRST_DEFERRED \
	"The server speaks first on this port (%llu of %llu connections) and TCP_DEFER_ACCEPT is " \
	"%d s: a client that waits for the server's greeting reaches accept() only after the " \
	"whole %s s window (the accept lines' syn_ack_retrans and queue_ms show whether they " \
	"did). Turn TCP_DEFER_ACCEPT off here.%s"

#define SA_ADVICE_SERVER_FIRST \
	"The server speaks first on this port (%llu of %llu connections): do not use " \
	"TCP_DEFER_ACCEPT (nginx deferred) here: a client that waits for the greeting would wait " \
	"out the whole window."

#define SA_ADVICE_CLIENT_FIRST_MOSTLY_EMPTY \
	"The client speaks first and %d%% of accepts found no data yet: TCP_DEFER_ACCEPT=1 " \
	"(nginx: listen ... deferred) could save those wake-ups; the window is about 1 s and " \
	"empty connections still arrive when it expires."

#define SA_ADVICE_CLIENT_FIRST_WITH_DATA \
	"The client speaks first and %d%% of accepts already had data: TCP_DEFER_ACCEPT would " \
	"gain little on this port."

#define SA_ADVICE_CLIENT_FIRST_DEFERRED \
	"The client speaks first (%llu %s): TCP_DEFER_ACCEPT=%d s suits this port."

#define SA_ADVICE_DEFER_EMPTY_ACCEPTS \
	"TCP_DEFER_ACCEPT is %d s here, yet %llu of %llu accepts arrived empty (%llu after the " \
	"window expired, %llu made by SYN cookies that skip deferral): deferral is a delay, not " \
	"a filter, so the program must handle empty connections.%s"

#define SA_ADVICE_QUEUE_FULL \
	"The accept queue was seen full at %llu %s (room for %d, backlog %d; peak %u waiting). " \
	"Whether clients waited for it shows in ListenOverflows here (drops) and TCPSynRetrans " \
	"on the clients (SYNs resent after 1 s); a backlog of at least %d (and " \
	"net.core.somaxconn to match), or accepting faster, keeps it from filling."

#define SA_ADVICE_QUEUE_FULL_DEFERRED \
	"Deferred connections wait in the SYN queue, which the same backlog bounds: once it " \
	"fills, SYN cookies accept new clients without deferral."

#define SA_ADVICE_NO_DEFER_DROP \
	"TCPDeferAcceptDrop did not rise in this network namespace (a namespace-wide counter): " \
	"deferral held back no handshake ACK, so it saved no wake-up for these connections."

#define SA_ADVICE_SYNCOOKIES_RECV \
	"SyncookiesRecv rose by %llu in this network namespace (a namespace-wide counter) while " \
	"this listener defers: connections made by SYN cookies skip deferral, so up to %llu of " \
	"them did (another listener in the namespace may account for some)."

#endif
