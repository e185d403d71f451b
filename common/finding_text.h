/*
 * finding_text.h: the words of every finding code, in one table shared by
 * the shim, `sockaudit report` and the test that checks docs/findings.md
 * (tests/unit/test_finding_words.c). For each code: its name, its anchor
 * in docs/findings.md, what it means on its own (the report's explanation,
 * which never quotes another code's sentence), and the sentence templates
 * the shim fills with the numbers its line measured (printf formats, as
 * SA_MSG_* macros, so the compiler checks each call's arguments). A line's
 * msg joins the sentences of all its findings. Pure: no dependencies.
 */
#ifndef SA_FINDING_TEXT_H
#define SA_FINDING_TEXT_H

#include <string.h>

#define SA_FINDING_MAX_SENTENCES 9

struct sa_finding_text {
	const char *code;
	const char *anchor;                   /* docs/findings.md#anchor */
	const char *text;                     /* what the code means on its own */
	const char *sentences[SA_FINDING_MAX_SENTENCES];   /* the shim's templates; NULL after the last */
};

/* ---- defer_rounded --------------------------------------------------------- */
#define SA_MSG_DEFER_ROUNDED \
	"TCP_DEFER_ACCEPT %d s reads back as %d s: the kernel keeps it as %d SYN-ACK " \
	"retransmission %s (secs_to_retrans(); resent at 1, 3, 7, 15, 31, 63, 127 s, then every " \
	"120 s) and reports the seconds those rounds span, not the value written. A connection " \
	"whose client stays silent is held for those rounds; the accept line's syn_ack_retrans " \
	"and queue time show it. Write %d to say what the kernel keeps.%s"

/* ---- defer_on_client_socket ------------------------------------------------ */
#define SA_MSG_DEFER_ON_CLIENT_SOCKET \
	"TCP_DEFER_ACCEPT reads back %d s on this connecting socket. On a client it defers " \
	"nothing on the server: tcp_rcv_synsent_state_process() holds back the handshake's final " \
	"ACK for up to 200 ms (the delayed-ACK timer) so it can ride on the first data. If the " \
	"program sends at once that costs nothing; if it waits for the server to speak first, " \
	"the server sees the connection up to 200 ms late (a capture shows the gap between " \
	"SYN-ACK and ACK). Set it on the listening socket, or drop it here."

/* ---- defer_with_fastopen --------------------------------------------------- */
#define SA_MSG_DEFER_WITH_FASTOPEN \
	"TCP_FASTOPEN (queue %d) and TCP_DEFER_ACCEPT (%d s) are both set on this listener " \
	"(net.ipv4.tcp_fastopen=%ld; 0x2 lets servers take Fast Open). A client that opens with " \
	"a valid Fast Open cookie is queued for accept() at its SYN and skips the deferral. This " \
	"line does not see whether any client does: TcpExtTCPFastOpenPassive with nstat counts " \
	"them."

/* ---- defer_bypass_risk ----------------------------------------------------- */
#define SA_MSG_DEFER_BYPASS_RISK \
	"TCP_DEFER_ACCEPT is %d s on a listener with backlog %d and net.ipv4.tcp_syncookies=%ld. " \
	"Deferred connections wait as requests in the SYN queue, which holds backlog + 1 = %d " \
	"(inet_csk_reqsk_queue_is_full()); if more clients than that connect within the %s s " \
	"deferral window, the kernel answers the rest with SYN cookies and they reach accept() " \
	"without deferral. This line sees the sizes, not the traffic: TcpExtSyncookiesSent with " \
	"nstat, and this listener's empty_syncookie count, show whether it happens. Raise the " \
	"backlog if you rely on deferral.%s"

/* ---- backlog_clamped ------------------------------------------------------- */
#define SA_MSG_BACKLOG_CLAMPED_SOMAXCONN \
	"listen(%d) got a backlog of %d (%s), the value of net.core.somaxconn in this network " \
	"namespace: the kernel lowers a larger backlog to it, so the accept queue holds at most " \
	"%u %s (backlog + 1) waiting for accept(). Raise it with sysctl -w net.core.somaxconn=%d " \
	"in this namespace (each namespace has its own; a new one starts at 4096)."
#define SA_MSG_BACKLOG_CLAMPED_OTHER \
	"listen(%d) got a backlog of %d (%s), so the accept queue holds at most %u %s (backlog + " \
	"1) waiting for accept(). net.core.somaxconn here is %ld, so it did not set this value; " \
	"ss -ltn (Send-Q) shows the backlog the kernel uses."

/* ---- option_adjusted ------------------------------------------------------- */
#define SA_MSG_OPTION_ADJUSTED_BUF_DOUBLED \
	"%s %d reads back as %d: the kernel stores twice the value (sk_setsockopt()) and counts " \
	"its own per-packet overhead against it, so how much data fits depends on the packet " \
	"sizes (ss -tm shows the buffer and what is in use).%s"
#define SA_MSG_OPTION_ADJUSTED_BUF_CAPPED \
	"%s %d was capped by %s=%ld and then doubled to %d: raise %s (or use %sFORCE with " \
	"CAP_NET_ADMIN) to get the size you asked for.%s"
#define SA_MSG_OPTION_ADJUSTED_BELOW_MIN \
	"%s %d is below the kernel's minimum; it reads back as %d.%s"
#define SA_MSG_OPTION_ADJUSTED_FASTOPEN_CAPPED \
	"TCP_FASTOPEN queue %d was capped by net.core.somaxconn=%ld."
#define SA_MSG_OPTION_ADJUSTED_MAXSEG \
	"TCP_MAXSEG %d reads back as %d: on a connected socket getsockopt reports the MSS in use " \
	"(tcp_getsockopt() returns mss_cache), not the value set, which shapes only a handshake " \
	"that follows (tcp_connect_init()). ss -ti (mss:) shows the MSS this connection uses."
#define SA_MSG_OPTION_ADJUSTED_TOS_ECN \
	"IP_TOS %d reads back as %d: on TCP sockets the kernel keeps the two ECN bits for itself."
#define SA_MSG_OPTION_ADJUSTED_HOPS_DEFAULT \
	"%s -1 means the system default, which is %d."
#define SA_MSG_OPTION_ADJUSTED_CLAMP_MIN \
	"TCP_WINDOW_CLAMP %d is below the kernel's minimum; it reads back as %d."
#define SA_MSG_OPTION_ADJUSTED_TIMER_TICK \
	"%s %lld us reads back as %lld us: the kernel rounds timeouts up to its timer tick."

/* ---- option_differs -------------------------------------------------------- */
#define SA_MSG_OPTION_DIFFERS \
	"%s %d reads back as %d."
#define SA_MSG_OPTION_DIFFERS_UNEXPLAINED \
	"%s %d reads back as %d: the kernel kept a value other than the one asked for, for a " \
	"reason the shim does not know."
#define SA_MSG_OPTION_DIFFERS_LINGER \
	"SO_LINGER {%d, %d} reads back as {%d, %d}."
#define SA_MSG_OPTION_DIFFERS_TIMEOUT \
	"%s %lld us reads back as %lld us."
#define SA_MSG_OPTION_DIFFERS_NAME \
	"%s reads back as a different name."

/* ---- empty_accept_defer_expired -------------------------------------------- */
#define SA_MSG_EMPTY_ACCEPT_DEFER_EXPIRED \
	"This connection arrived with no data (FIONREAD 0) on a listener with " \
	"TCP_DEFER_ACCEPT=%d s, after %u SYN-ACK %s (tcpi_total_retrans): the kernel resends the " \
	"SYN-ACK once when the window runs out and then accepts the connection empty. Deferral " \
	"is a delay, not a filter, so handle empty connections; if clients of this port are slow " \
	"to speak or the server speaks first, turn deferral off.%s"

/* ---- empty_accept_syncookie ------------------------------------------------ */
#define SA_MSG_EMPTY_ACCEPT_SYNCOOKIE \
	"This connection arrived with no data and no SYN-ACK resend although TCP_DEFER_ACCEPT is " \
	"%d s, which only a connection made by a SYN cookie does (it never waits at the deferral " \
	"gate): the SYN queue, bounded by the backlog (%d), was probably full; " \
	"TcpExtSyncookiesRecv in listener_stats.netns_counters (or nstat) confirms it. If you " \
	"rely on deferral, raise the backlog above the number of clients that connect within %s " \
	"s.%s"

/* ---- accept_queue_full ----------------------------------------------------- */
#define SA_MSG_ACCEPT_QUEUE_FULL_ABORT \
	"The accept queue was full when accept() ran: %u %s still waiting after this one, room " \
	"for %d (backlog %d).%s While it is full the kernel drops new SYNs (their clients resend " \
	"after 1 s) and, with net.ipv4.tcp_abort_on_overflow=%ld, answers a final handshake ACK " \
	"with a reset (the client sees ECONNRESET). This line does not see whether any arrived " \
	"meanwhile: check TcpExtListenOverflows and TcpExtListenDrops with nstat here, " \
	"TcpExtTCPSynRetrans on the clients. A backlog of at least %d (and net.core.somaxconn to " \
	"match), or accepting faster, keeps the queue from filling."
#define SA_MSG_ACCEPT_QUEUE_FULL_DROP \
	"The accept queue was full when accept() ran: %u %s still waiting after this one, room " \
	"for %d (backlog %d).%s While it is full the kernel drops new SYNs (their clients resend " \
	"after 1 s, so connect() takes 1 s or more) and final handshake ACKs " \
	"(net.ipv4.tcp_abort_on_overflow=0: connect() returns at once, and the handshake " \
	"completes when the client's data or its ACK to a SYN-ACK resent at 1, 3, 7 s finds " \
	"room, so the delay goes from milliseconds to seconds). This line does not see whether " \
	"either happened: check TcpExtListenOverflows with nstat here (drops) and " \
	"TcpExtTCPSynRetrans on the clients (SYN resends), or the clients' own times. A backlog " \
	"of at least %d (and net.core.somaxconn to match), or accepting faster, keeps the queue " \
	"from filling."

/* ---- accept_fd_limit ------------------------------------------------------- */
#define SA_MSG_ACCEPT_FD_LIMIT_EMFILE \
	"accept() failed with EMFILE: this process has reached its RLIMIT_NOFILE of %llu open " \
	"file descriptors. Connections stay in the listen queue (%s) until an accept succeeds; " \
	"how long their clients wait shows in the next accepts' queue_ms, and if the queue " \
	"fills, in TcpExtListenOverflows. Raise the limit (ulimit -n, systemd LimitNOFILE=) or " \
	"close idle connections sooner."
#define SA_MSG_ACCEPT_FD_LIMIT_ENFILE \
	"accept() failed with ENFILE: the system reached its limit of open files (fs.file-max; " \
	"/proc/sys/fs/file-nr shows used and max). Connections stay in the listen queue (%s) " \
	"until an accept succeeds. Raise fs.file-max or find the process holding them."

/* ---- server_speaks_first_deferred ------------------------------------------ */
#define SA_MSG_SERVER_SPEAKS_FIRST_DEFERRED \
	"The server wrote first on a listener with TCP_DEFER_ACCEPT=%d s: no client byte had " \
	"arrived (FIONREAD 0 at the write). A client that waits for a greeting (SMTP-like) sends " \
	"nothing, so its connection reaches accept() only when the deferral window runs out (the " \
	"accept line's syn_ack_retrans >= 1 and queue time show it). Turn TCP_DEFER_ACCEPT " \
	"(nginx deferred) off on this port.%s"

/* ---- listen_overflows ------------------------------------------------------ */
#define SA_MSG_LISTEN_OVERFLOWS \
	"ListenOverflows rose by %llu in this network namespace (a namespace-wide kernel " \
	"counter, not only this process) while this listener's accept queue (room for %d) was " \
	"seen full at %llu %s: the kernel dropped that many SYNs or final handshake ACKs.%s A " \
	"dropped SYN costs its client a resend after 1 s; a dropped final ACK costs little when " \
	"the client's data soon finds room, up to seconds when it waits for a SYN-ACK resend (1, " \
	"3, 7 s). Raise the backlog to at least %d or accept faster."
#define SA_MSG_LISTEN_OVERFLOWS_NO_SYN_RETRANS_TAIL \
	" TCPSynRetrans did not rise here over the same time: no SYN-ACK was resent and no " \
	"client in this namespace resent a SYN; clients elsewhere show theirs in their own " \
	"TcpExtTCPSynRetrans."
#define SA_MSG_LISTEN_OVERFLOWS_SYN_RETRANS_TAIL \
	" TCPSynRetrans rose by %llu here over the same time (SYNs and SYN-ACKs resent by any " \
	"socket in this namespace; clients elsewhere count theirs in their own " \
	"TcpExtTCPSynRetrans)."

/* ---- syn_retransmitted ----------------------------------------------------- */
#define SA_MSG_SYN_RETRANSMITTED \
	"%d SYN %s on this connect (tcpi_total_retrans) and it %s after %.0f ms: the first %s " \
	"got no SYN-ACK in time. This kernel resends an unanswered SYN at %s%s after the first " \
	"(net.ipv4.tcp_syn_linear_timeouts=%ld, tcp_syn_retries=%ld, TCP_RTO_MAX_MS=%ld on this " \
	"socket; it gives up at %ld s), so the resends account for about %.1f s of the wait. Not " \
	"measured here is why: the server's accept queue may have been full (check " \
	"TcpExtListenOverflows with nstat on the server and its listen backlog) or packets were " \
	"lost (a capture on both ends); the server's own logs do not show this wait."

/* ---- slow_connect ---------------------------------------------------------- */
#define SA_MSG_SLOW_CONNECT_ABANDONED \
	"The connect waited %.0f ms and was closed unfinished (threshold " \
	"SOCKAUDIT_SLOW_CONNECT_MS=%d)."
#define SA_MSG_SLOW_CONNECT_INTERRUPTED \
	"The connect waited %.0f ms and was interrupted by a signal (EINTR, or its handler " \
	"jumped out of the call) before it finished " \
	"(threshold SOCKAUDIT_SLOW_CONNECT_MS=%d): a connect timeout built on alarm() or a timer " \
	"ran out."
#define SA_MSG_SLOW_CONNECT \
	"The connect took %.0f ms (threshold SOCKAUDIT_SLOW_CONNECT_MS=%d).%s"
#define SA_MSG_SLOW_CONNECT_UNIX_TAIL \
	" unix_stream_connect() blocks only while the listener's queue (backlog + 1) is full, so " \
	"it was full for most of that time: compare the listener's queue_capacity with `ss -xl` " \
	"Recv-Q, or accept faster."
#define SA_MSG_SLOW_CONNECT_NO_SYN_DROP_TAIL \
	" No SYN was retransmitted (tcpi_total_retrans 0), so no SYN was dropped: the time went " \
	"to a slow SYN-ACK, the round trip (ss -ti shows rtt), or, for a non-blocking connect, " \
	"the program looking late (see completed_by)."

/* ---- quickack_hot_loop ----------------------------------------------------- */
#define SA_MSG_QUICKACK_HOT_LOOP \
	"TCP_QUICKACK was set %u times on this socket, with a median of %u data segments sent " \
	"between sets and no read between %u%% of them%s. Each set is a syscall, and it acts " \
	"only on ACKs this socket owes for data it received: it sends a pending one at once and " \
	"leaves delayed-ACK mode, which the kernel re-enters on its own. This line does not " \
	"count the ACKs that went out: a capture, or nstat's TcpOutSegs and TcpExtDelayedACKs " \
	"over runs with and without the sets, shows what they changed. Set it once, or once per " \
	"received reply%s."

/* ---- blind_spot ------------------------------------------------------------ */
#define SA_MSG_BLIND_SPOT_IO_URING \
	"This process set up an io_uring (io_uring_setup through syscall()). Accepts, connects " \
	"and closes submitted there do not go through libc, so the shim would neither see nor " \
	"count them. This line does not see what the ring is used for (a ring for file I/O " \
	"changes nothing here): compare this process's accept and connect counts with its own " \
	"logs, or with ss -tnp, to tell."
#define SA_MSG_BLIND_SPOT_IO_URING_OPEN \
	"This process has an io_uring open (fd %d), set up by system calls of its own (liburing " \
	"makes them itself, not through libc). Accepts, connects and closes submitted through a ring " \
	"(IORING_OP_ACCEPT, IORING_OP_CONNECT) are not seen: the accept and connect lines and counts " \
	"here leave them out. Compare with the program's own counters or ss -tnp."
#define SA_MSG_BLIND_SPOT_SYSCALL \
	"This process called %s through syscall(), not libc's %s(): the shim does not audit " \
	"calls made that way, so this one and any like it are missing from the accept/connect " \
	"lines and counts here."

/* ---- config_warning -------------------------------------------------------- */
/* (no sentence: config_warning lines word the setting they refuse) */

static const struct sa_finding_text sa_finding_texts[] __attribute__((unused)) = {
	{ "defer_rounded", "defer_rounded",
	  "TCP_DEFER_ACCEPT counts SYN-ACK retransmission rounds, not seconds: the kernel keeps rounds and "
	  "reports the seconds they span. On 6.19+ a listener's TCP_RTO_MAX_MS can make the real window "
	  "shorter than the reported seconds; the line then says both.",
	  { SA_MSG_DEFER_ROUNDED } },
	{ "defer_on_client_socket", "defer_on_client_socket",
	  "TCP_DEFER_ACCEPT reads back set on a connecting socket: it defers nothing on the server; the "
	  "client's kernel holds back the handshake's final ACK (up to 200 ms) until data is sent.",
	  { SA_MSG_DEFER_ON_CLIENT_SOCKET } },
	{ "defer_with_fastopen", "defer_with_fastopen",
	  "TCP_DEFER_ACCEPT and TCP_FASTOPEN are both set on a listener: a client that opens with a valid "
	  "Fast Open cookie skips the deferral (TcpExtTCPFastOpenPassive counts them).",
	  { SA_MSG_DEFER_WITH_FASTOPEN } },
	{ "defer_bypass_risk", "defer_bypass_risk",
	  "Deferred connections wait in the SYN queue (backlog + 1) and net.ipv4.tcp_syncookies is on: "
	  "a burst larger than that within the deferral window would be accepted through SYN cookies "
	  "without deferral. The line sees the sizes, not the traffic (TcpExtSyncookiesSent does).",
	  { SA_MSG_DEFER_BYPASS_RISK } },
	{ "backlog_clamped", "backlog_clamped",
	  "listen() got a smaller backlog than it asked for (read back with TCP_INFO or unix_diag): "
	  "fewer connections can wait for accept(). When the value equals net.core.somaxconn of the "
	  "network namespace, that sysctl lowered it.",
	  { SA_MSG_BACKLOG_CLAMPED_SOMAXCONN, SA_MSG_BACKLOG_CLAMPED_OTHER } },
	{ "option_adjusted", "option_adjusted",
	  "An option reads back different from what was requested, in a way the kernel documents (buffers "
	  "stored doubled, caps by a sysctl, rounding to the timer tick, the MSS in use); the line names which.",
	  { SA_MSG_OPTION_ADJUSTED_BUF_DOUBLED, SA_MSG_OPTION_ADJUSTED_BUF_CAPPED, SA_MSG_OPTION_ADJUSTED_BELOW_MIN, SA_MSG_OPTION_ADJUSTED_FASTOPEN_CAPPED, SA_MSG_OPTION_ADJUSTED_MAXSEG, SA_MSG_OPTION_ADJUSTED_TOS_ECN, SA_MSG_OPTION_ADJUSTED_HOPS_DEFAULT, SA_MSG_OPTION_ADJUSTED_CLAMP_MIN, SA_MSG_OPTION_ADJUSTED_TIMER_TICK } },
	{ "option_differs", "option_differs",
	  "An option reads back different from what was requested, for a reason the shim does not know.",
	  { SA_MSG_OPTION_DIFFERS, SA_MSG_OPTION_DIFFERS_UNEXPLAINED, SA_MSG_OPTION_DIFFERS_LINGER, SA_MSG_OPTION_DIFFERS_TIMEOUT, SA_MSG_OPTION_DIFFERS_NAME } },
	{ "empty_accept_defer_expired", "empty_accept_defer_expired",
	  "A connection was accepted without data after the TCP_DEFER_ACCEPT window ran out: the "
	  "deferral cost the client that window and saved nothing.",
	  { SA_MSG_EMPTY_ACCEPT_DEFER_EXPIRED } },
	{ "empty_accept_syncookie", "empty_accept_syncookie",
	  "A connection came in with no data and no SYN-ACK resend although TCP_DEFER_ACCEPT is on, "
	  "which only a SYN-cookie connection does: the SYN queue was probably full (TcpExtSyncookiesRecv "
	  "confirms it), so the deferral was skipped.",
	  { SA_MSG_EMPTY_ACCEPT_SYNCOOKIE } },
	{ "accept_queue_full", "accept_queue_full",
	  "The listener's accept queue was full when accept() ran. While it is full the kernel drops "
	  "new SYNs or final ACKs; clients may then retransmit (check TCPSynRetrans on the client, "
	  "ListenOverflows here). A larger backlog or faster accepting gives room.",
	  { SA_MSG_ACCEPT_QUEUE_FULL_ABORT, SA_MSG_ACCEPT_QUEUE_FULL_DROP } },
	{ "accept_fd_limit", "accept_fd_limit",
	  "accept() failed with EMFILE or ENFILE: the process (RLIMIT_NOFILE) or the system "
	  "(fs.file-max) reached its limit of open files, and the connection stays queued until an "
	  "accept succeeds.",
	  { SA_MSG_ACCEPT_FD_LIMIT_EMFILE, SA_MSG_ACCEPT_FD_LIMIT_ENFILE } },
	{ "server_speaks_first_deferred", "server_speaks_first_deferred",
	  "The server wrote first on a TCP_DEFER_ACCEPT listener: a client that waits for the greeting "
	  "sends nothing, so its connection sits out the whole deferral window (the accept line's "
	  "syn_ack_retrans and queue time show it).",
	  { SA_MSG_SERVER_SPEAKS_FIRST_DEFERRED } },
	{ "listen_overflows", "listen_overflows",
	  "The namespace's ListenOverflows counter rose while this process ran: some listener's accept "
	  "queue overflowed. Whether clients waited shows in their SYN retransmissions.",
	  { SA_MSG_LISTEN_OVERFLOWS, SA_MSG_LISTEN_OVERFLOWS_NO_SYN_RETRANS_TAIL, SA_MSG_LISTEN_OVERFLOWS_SYN_RETRANS_TAIL } },
	{ "syn_retransmitted", "syn_retransmitted",
	  "The connect resent its SYN (tcpi_total_retrans): its time includes this kernel's SYN "
	  "timeouts (1 s each for the first tcp_syn_linear_timeouts resends, then doubling). Why the "
	  "first SYN went unanswered is not measured: a full accept queue on the server "
	  "(TcpExtListenOverflows there) or loss (a capture on both ends); the server's logs do not show this wait.",
	  { SA_MSG_SYN_RETRANSMITTED } },
	{ "slow_connect", "slow_connect",
	  "The connect took longer than SOCKAUDIT_SLOW_CONNECT_MS. Its syn_retrans field says whether "
	  "SYN retransmissions explain the time; if 0, the peer or the path was slow to answer.",
	  { SA_MSG_SLOW_CONNECT_ABANDONED, SA_MSG_SLOW_CONNECT_INTERRUPTED, SA_MSG_SLOW_CONNECT, SA_MSG_SLOW_CONNECT_UNIX_TAIL, SA_MSG_SLOW_CONNECT_NO_SYN_DROP_TAIL } },
	{ "quickack_hot_loop", "quickack_hot_loop",
	  "TCP_QUICKACK is set again and again on one socket, mostly with no read between sets: each set "
	  "is a syscall, and it acts only on ACKs owed for received data. The line does not count the ACKs "
	  "sent; a capture or nstat (TcpOutSegs, TcpExtDelayedACKs) shows what the sets changed.",
	  { SA_MSG_QUICKACK_HOT_LOOP } },
	{ "blind_spot", "blind_spot",
	  "The process made calls the shim cannot see: accept or connect through syscall() (those calls "
	  "are missing from the lines and counts), or an io_uring set up, whose submitted accepts and "
	  "connects, if any, would be missing too.",
	  { SA_MSG_BLIND_SPOT_IO_URING, SA_MSG_BLIND_SPOT_IO_URING_OPEN, SA_MSG_BLIND_SPOT_SYSCALL } },
	{ "config_warning", "config_warning",
	  "A SOCKAUDIT_* setting could not be used as given; the line says which and what was "
	  "used instead.",
	  { NULL } },
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
