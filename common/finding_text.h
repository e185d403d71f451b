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
	  "The connect resent its SYN (tcpi_total_retrans): its time includes this kernel's SYN "
	  "timeouts (1 s each for the first tcp_syn_linear_timeouts resends, then doubling). Why the "
	  "first SYN went unanswered is not measured: a full accept queue on the server "
	  "(TcpExtListenOverflows there) or loss (a capture on both ends); the server's logs do not show this wait." },
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
	  "listen() got a smaller backlog than it asked for (read back with TCP_INFO or unix_diag): "
	  "fewer connections can wait for accept(). When the value equals net.core.somaxconn of the "
	  "network namespace, that sysctl lowered it." },
	{ "empty_accept_defer_expired",
	  "A connection was accepted without data after the TCP_DEFER_ACCEPT window ran out: the "
	  "deferral cost the client that window and saved nothing." },
	{ "empty_accept_syncookie",
	  "A connection came in with no data and no SYN-ACK resend although TCP_DEFER_ACCEPT is on, "
	  "which only a SYN-cookie connection does: the SYN queue was probably full (TcpExtSyncookiesRecv "
	  "confirms it), so the deferral was skipped." },
	{ "accept_fd_limit",
	  "accept() failed with EMFILE or ENFILE: the process (RLIMIT_NOFILE) or the system "
	  "(fs.file-max) reached its limit of open files, and the connection stays queued until an "
	  "accept succeeds." },
	{ "defer_rounded",
	  "TCP_DEFER_ACCEPT counts SYN-ACK retransmission rounds, not seconds: the kernel keeps rounds and "
	  "reports the seconds they span. On 6.19+ a listener's TCP_RTO_MAX_MS can make the real window "
	  "shorter than the reported seconds; the line then says both." },
	{ "defer_on_client_socket",
	  "TCP_DEFER_ACCEPT reads back set on a connecting socket: it defers nothing on the server; the "
	  "client's kernel holds back the handshake's final ACK (up to 200 ms) until data is sent." },
	{ "defer_with_fastopen",
	  "TCP_DEFER_ACCEPT and TCP_FASTOPEN are both set on a listener: a client that opens with a valid "
	  "Fast Open cookie skips the deferral (TcpExtTCPFastOpenPassive counts them)." },
	{ "defer_bypass_risk",
	  "Deferred connections wait in the SYN queue (backlog + 1) and net.ipv4.tcp_syncookies is on: "
	  "a burst larger than that within the deferral window would be accepted through SYN cookies "
	  "without deferral. The line sees the sizes, not the traffic (TcpExtSyncookiesSent does)." },
	{ "server_speaks_first_deferred",
	  "The server wrote first on a TCP_DEFER_ACCEPT listener: a client that waits for the greeting "
	  "sends nothing, so its connection sits out the whole deferral window (the accept line's "
	  "syn_ack_retrans and queue time show it)." },
	{ "option_adjusted",
	  "An option reads back different from what was requested, in a way the kernel documents (buffers "
	  "stored doubled, caps by a sysctl, rounding to the timer tick, the MSS in use); the line names which." },
	{ "option_differs",
	  "An option reads back different from what was requested, for a reason the shim does not know." },
	{ "config_warning",
	  "A SOCKAUDIT_* setting could not be used as given; the line says which and what was "
	  "used instead." },
	{ "quickack_hot_loop",
	  "TCP_QUICKACK is set again and again on one socket, mostly with no read between sets: each set "
	  "is a syscall, and it acts only on ACKs owed for received data. The line does not count the ACKs "
	  "sent; a capture or nstat (TcpOutSegs, TcpExtDelayedACKs) shows what the sets changed." },
	{ "blind_spot",
	  "The process made calls the shim cannot see: accept or connect through syscall() (those calls "
	  "are missing from the lines and counts), or an io_uring set up, whose submitted accepts and "
	  "connects, if any, would be missing too." },
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
