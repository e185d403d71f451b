/*
 * finding_text.h: one explanation per finding code, shared by the shim and
 * `sockaudit report`. A line's msg joins the sentences of all its findings
 * with the numbers that line measured; this table says what each code means
 * on its own, so the report can explain a code without quoting another
 * code's sentence. Pure: no dependencies.
 */
#ifndef SA_FINDING_TEXT_H
#define SA_FINDING_TEXT_H

#include <string.h>

struct sa_finding_text {
	const char *code;
	const char *text;
};

static const struct sa_finding_text sa_finding_texts[] __attribute__((unused)) = {
	{ "syn_retransmitted",
	  "The client sent its SYN again: the connect's time includes the kernel's retransmission "
	  "timeouts (about 1 s each for the first tcp_syn_linear_timeouts, then doubling). The peer's "
	  "accept queue was probably full or SYNs were lost; the peer's own logs do not show this wait." },
	{ "slow_connect",
	  "The connect took longer than SOCKAUDIT_SLOW_CONNECT_MS. Its syn_retrans field says whether "
	  "SYN retransmissions explain the time; if 0, the peer or the path was slow to answer." },
	{ "accept_queue_full",
	  "The listener's accept queue was full when accept() ran. While it is full the kernel drops "
	  "new SYNs or final ACKs; clients may then retransmit (check TCPSynRetrans on the client, "
	  "ListenOverflows here). A larger backlog or faster accepting gives room." },
	{ "listen_overflows",
	  "The namespace's ListenOverflows counter rose while this process ran: some listener's accept "
	  "queue overflowed. Whether clients waited shows in their SYN retransmissions." },
	{ "backlog_clamped",
	  "listen()'s backlog was lowered to net.core.somaxconn of this network namespace: fewer "
	  "connections can wait for accept() than the program asked for." },
	{ "empty_accept_defer_expired",
	  "A connection was accepted without data after the TCP_DEFER_ACCEPT window ran out: the "
	  "deferral cost the client that window and saved nothing." },
	{ "empty_accept_syncookie",
	  "A connection came in through SYN cookies with no data although TCP_DEFER_ACCEPT is on: the "
	  "SYN queue was full, so the deferral was skipped." },
	{ "accept_fd_limit",
	  "accept() failed with EMFILE or ENFILE: the process or system ran out of file descriptors "
	  "and the connection stays queued." },
	{ "defer_rounded",
	  "TCP_DEFER_ACCEPT counts SYN-ACK retransmission rounds, not seconds: the kernel keeps and "
	  "reports a rounded value." },
	{ "defer_on_client_socket",
	  "TCP_DEFER_ACCEPT set on a connecting socket holds back the handshake's final ACK until "
	  "data is sent; it defers nothing on the server." },
	{ "defer_with_fastopen",
	  "TCP_DEFER_ACCEPT and TCP_FASTOPEN are both on: Fast Open connections skip the deferral." },
	{ "defer_bypass_risk",
	  "Deferred connections wait in the SYN queue (backlog + 1); a burst larger than that within "
	  "the deferral window is accepted through SYN cookies without deferral." },
	{ "server_speaks_first_deferred",
	  "The server writes first on a TCP_DEFER_ACCEPT listener: the client waits for it, so every "
	  "connection sits out the whole deferral window." },
	{ "option_adjusted",
	  "The kernel stored a different value than requested in a documented way (buffers are "
	  "doubled for bookkeeping, or capped by a sysctl)." },
	{ "option_differs",
	  "An option reads back different from what was requested." },
	{ "blind_spot",
	  "This process made socket calls the shim cannot see: through io_uring, or through "
	  "syscall() instead of libc. Those accepts, connects and closes are missing from the lines "
	  "and counts; the line says which call." },
	{ "config_warning",
	  "A SOCKAUDIT_* setting could not be used as given; the line says which and what was "
	  "used instead." },
	{ "quickack_hot_loop",
	  "TCP_QUICKACK is set again and again on one socket: the kernel leaves quick-ACK mode on its "
	  "own, so each set costs a syscall for little effect." },
};

/* The explanation of CODE, or NULL for a code this table does not know. */
static inline const char *sa_finding_text(const char *code)
{
	size_t i;

	for (i = 0; code && i < sizeof(sa_finding_texts) / sizeof(sa_finding_texts[0]); i++)
		if (strcmp(sa_finding_texts[i].code, code) == 0)
			return sa_finding_texts[i].text;
	return NULL;
}

#endif
