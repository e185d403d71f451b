/*
 * finding_text.h: the words of every finding code, in one table shared by
 * the shim, `sockaudit report` and the test that checks docs/findings.md
 * (tests/unit/test_finding_words.c). For each code: its name, its anchor
 * in docs/findings.md, what it means on its own (the report's explanation,
 * which never quotes another code's sentence), and the sentence templates
 * the shim fills with the numbers its line measured (printf formats, as
 * SA_MSG_* macros, so the compiler checks each call's arguments), then the
 * mechanism behind it and the fix, which `sockaudit explain CODE` prints
 * and docs/findings.md says in the same words (the test checks both). A
 * line's msg joins the sentences of all its findings. Pure: no
 * dependencies.
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
	const char *mechanism;                /* why it happens: the kernel's part (sockaudit explain CODE) */
	const char *fix;                      /* what to do */
};

/* Each sentence says what the line measured, with its numbers, and the fix,
 * in at most SA_MSG_MAX characters with every number at its largest
 * (tests/unit/test_msg_length.c); the mechanism behind it is the table's
 * (sockaudit explain CODE, docs/findings.md). */
#define SA_MSG_MAX 240
/* What a line says instead of a sentence that no longer fits: its code,
 * whose words `sockaudit explain CODE` prints. */
#define SA_MSG_SEE_EXPLAIN "Also: %s."

/* ---- defer_rounded --------------------------------------------------------- */
#define SA_MSG_DEFER_ROUNDED \
	"TCP_DEFER_ACCEPT %d s reads back as %d s: kept as %d SYN-ACK %s. Write %d to match.%s"

/* ---- defer_on_client_socket ------------------------------------------------ */
#define SA_MSG_DEFER_ON_CLIENT_SOCKET \
	"TCP_DEFER_ACCEPT is %d s on this connecting socket: it defers nothing on the server and " \
	"holds back the final ACK up to 200 ms. Set it on the listener, or drop it here."

/* ---- defer_with_fastopen --------------------------------------------------- */
#define SA_MSG_DEFER_WITH_FASTOPEN \
	"TCP_FASTOPEN (queue %d) and TCP_DEFER_ACCEPT (%d s) are both on this listener " \
	"(net.ipv4.tcp_fastopen=%ld): Fast Open clients skip the deferral. Handle connections " \
	"without data."

/* ---- defer_bypass_risk ----------------------------------------------------- */
#define SA_MSG_DEFER_BYPASS_RISK \
	"TCP_DEFER_ACCEPT %d s, backlog %d, tcp_syncookies=%ld: past %d clients in the %s s window, " \
	"SYN cookies skip deferral. Raise the backlog to keep it.%s"

/* ---- backlog_clamped ------------------------------------------------------- */
#define SA_MSG_BACKLOG_CLAMPED_SOMAXCONN \
	"listen(%d) got a backlog of %d (%s), this network namespace's net.core.somaxconn: %u %s " \
	"can wait for accept(). Raise it: sysctl -w net.core.somaxconn=%d in this namespace."
#define SA_MSG_BACKLOG_CLAMPED_OTHER \
	"listen(%d) got a backlog of %d (%s): %u %s can wait for accept(). net.core.somaxconn " \
	"here is %ld, so it did not set this; ss -ltn (Send-Q) shows the backlog in use."

/* ---- option_adjusted ------------------------------------------------------- */
#define SA_MSG_OPTION_ADJUSTED_BUF_DOUBLED \
	"%s %d reads back as %d: the kernel stores twice the value and counts its own overhead " \
	"in it (ss -tm shows the use).%s"
#define SA_MSG_OPTION_ADJUSTED_BUF_CAPPED \
	"%s %d was capped by %s=%ld, then doubled to %d: raise %s (or use %sFORCE with " \
	"CAP_NET_ADMIN).%s"
#define SA_MSG_OPTION_ADJUSTED_BELOW_MIN \
	"%s %d is below the kernel's minimum; it reads back as %d.%s"
#define SA_MSG_OPTION_ADJUSTED_FASTOPEN_CAPPED \
	"TCP_FASTOPEN queue %d was capped by net.core.somaxconn=%ld."
#define SA_MSG_OPTION_ADJUSTED_MAXSEG \
	"TCP_MAXSEG %d reads back as %d: on a connected socket getsockopt reports the MSS in use; " \
	"the value set shapes only a later handshake. ss -ti (mss:) shows it."
#define SA_MSG_OPTION_ADJUSTED_TOS_ECN \
	"IP_TOS %d reads back as %d: on TCP sockets the kernel keeps the two ECN bits for itself."
#define SA_MSG_OPTION_ADJUSTED_HOPS_DEFAULT \
	"%s -1 means the system default, which is %d."
#define SA_MSG_OPTION_ADJUSTED_CLAMP_MIN \
	"TCP_WINDOW_CLAMP %d is below the kernel's minimum; it reads back as %d."
#define SA_MSG_OPTION_ADJUSTED_TIMER_TICK \
	"%s %lld us reads back as %lld us: the kernel rounds timeouts up to its timer tick."
/* The buffer sentences' tail on a TCP socket's SO_RCVBUF. */
#define SA_MSG_OPTION_ADJUSTED_AUTOTUNE_TAIL \
	" It also turns off receive autotuning."

/* ---- option_differs -------------------------------------------------------- */
#define SA_MSG_OPTION_DIFFERS \
	"%s %d reads back as %d."
#define SA_MSG_OPTION_DIFFERS_UNEXPLAINED \
	"%s %d reads back as %d: the kernel kept another value, for a reason the shim does not " \
	"know."
#define SA_MSG_OPTION_DIFFERS_LINGER \
	"SO_LINGER {%d, %d} reads back as {%d, %d}."
#define SA_MSG_OPTION_DIFFERS_TIMEOUT \
	"%s %lld us reads back as %lld us."
#define SA_MSG_OPTION_DIFFERS_NAME \
	"%s reads back as a different name."

/* ---- the deferral window's tail (sa_defer_note, syn_schedule.h) ------------ */
#define SA_MSG_DEFER_REAL_WINDOW_TAIL \
	" The window really lasts %s s (TCP_RTO_MAX_MS %ld)."

/* ---- empty_accept_defer_expired -------------------------------------------- */
#define SA_MSG_EMPTY_ACCEPT_DEFER_EXPIRED \
	"No data after the TCP_DEFER_ACCEPT=%d s window ran out (%u SYN-ACK %s): " \
	"deferral delays, it does not filter. Handle empty connections, or turn deferral off.%s"

/* ---- empty_accept_syncookie ------------------------------------------------ */
#define SA_MSG_EMPTY_ACCEPT_SYNCOOKIE \
	"No data, no SYN-ACK resend, TCP_DEFER_ACCEPT=%d s: a SYN cookie skipped deferral; the " \
	"SYN queue (backlog %d) was full. Raise the backlog past %s s of clients.%s"

/* ---- accept_queue_full ----------------------------------------------------- */
#define SA_MSG_ACCEPT_QUEUE_FULL_ABORT \
	"Accept queue full: %u %s still waiting, room for %d.%s tcp_abort_on_overflow=%ld resets " \
	"new clients. Fix: backlog %d or more (and somaxconn), or accept faster."
#define SA_MSG_ACCEPT_QUEUE_FULL_DROP \
	"Accept queue full: %u %s still waiting, room for %d.%s SYNs and final ACKs are dropped. " \
	"Fix: backlog %d or more (and somaxconn), or accept faster."
/* This connection's own figures, in the sentence above. */
#define SA_MSG_ACCEPT_QUEUE_FULL_CHILD_TAIL \
	" It waited %u ms, %u SYN-ACK %s."

/* ---- accept_fd_limit ------------------------------------------------------- */
#define SA_MSG_ACCEPT_FD_LIMIT_EMFILE \
	"accept() failed with EMFILE: RLIMIT_NOFILE %llu reached; connections wait in the listen " \
	"queue (%s). Raise it (ulimit -n, systemd LimitNOFILE=) or close idle connections."
#define SA_MSG_ACCEPT_FD_LIMIT_ENFILE \
	"accept() failed with ENFILE: the system's open files reached fs.file-max; connections " \
	"wait in the listen queue (%s). Raise fs.file-max or find who holds them."
/* The queue's figures in the sentences above. */
#define SA_MSG_ACCEPT_FD_LIMIT_QUEUE "%u waiting, room for %u"
#define SA_MSG_ACCEPT_FD_LIMIT_NO_QUEUE "not read"

/* ---- server_speaks_first_deferred ------------------------------------------ */
#define SA_MSG_SERVER_SPEAKS_FIRST_DEFERRED \
	"The server wrote first (no client byte yet) on a TCP_DEFER_ACCEPT=%d s listener: " \
	"greeting-first clients wait out the window. Turn deferral (nginx deferred) off here.%s"

/* ---- listen_overflows ------------------------------------------------------ */
#define SA_MSG_LISTEN_OVERFLOWS \
	"ListenOverflows +%llu in this netns while this queue (room for %d) was seen full at %llu " \
	"%s: SYNs or final ACKs were dropped.%s Fix: backlog %d or more, or accept faster."
#define SA_MSG_LISTEN_OVERFLOWS_NO_SYN_RETRANS_TAIL \
	" TCPSynRetrans +0."
#define SA_MSG_LISTEN_OVERFLOWS_SYN_RETRANS_TAIL \
	" TCPSynRetrans +%llu."

/* ---- syn_retransmitted ----------------------------------------------------- */
#define SA_MSG_SYN_RETRANSMITTED \
	"%d SYN %s (tcpi_total_retrans): %s after %.0f ms, %.1f s of it in SYN " \
	"timeouts: check the server's backlog (ListenOverflows) or loss."

/* ---- slow_connect ---------------------------------------------------------- */
#define SA_MSG_SLOW_CONNECT_ABANDONED \
	"The connect waited %.0f ms and was closed unfinished (SOCKAUDIT_SLOW_CONNECT_MS=%d)."
#define SA_MSG_SLOW_CONNECT_INTERRUPTED \
	"The connect waited %.0f ms and was interrupted by a signal (SOCKAUDIT_SLOW_CONNECT_MS=%d): " \
	"a connect timeout built on alarm() or a timer ran out."
#define SA_MSG_SLOW_CONNECT \
	"The connect took %.0f ms (SOCKAUDIT_SLOW_CONNECT_MS=%d).%s"
#define SA_MSG_SLOW_CONNECT_UNIX_TAIL \
	" unix_stream_connect() waits only while the listener's queue is full: compare ss -xl " \
	"Recv-Q with its backlog, or accept faster."
#define SA_MSG_SLOW_CONNECT_NO_SYN_DROP_TAIL \
	" No SYN was retransmitted (tcpi_total_retrans 0), so none was dropped: look at the rtt " \
	"(ss -ti) and completed_by."

/* ---- quickack_hot_loop ----------------------------------------------------- */
#define SA_MSG_QUICKACK_HOT_LOOP \
	"TCP_QUICKACK set %u times, a median %u data segments apart, no read " \
	"between %u%% of them%s: each set is a syscall. Set it once, or once per reply%s."
#define SA_MSG_QUICKACK_NAGLE_TAIL ", Nagle on"
#define SA_MSG_QUICKACK_NAGLE_FIX_TAIL "; with Nagle on, write each message at once or set TCP_NODELAY"

/* ---- blind_spot ------------------------------------------------------------ */
#define SA_MSG_BLIND_SPOT_IO_URING \
	"This process set up an io_uring (through syscall()): accepts and connects submitted " \
	"there bypass libc and are not seen. Compare its counts with its own logs or ss -tnp."
#define SA_MSG_BLIND_SPOT_IO_URING_OPEN \
	"This process has an io_uring open (fd %d), set up without libc: accepts and connects " \
	"submitted there are not in these lines and counts. Compare with its own counters or " \
	"ss -tnp."
#define SA_MSG_BLIND_SPOT_SYSCALL \
	"This process called %s through syscall(), not libc's %s(): such calls are missing from " \
	"the lines and counts here. Read its counts as a lower bound."

/* ---- config_warning -------------------------------------------------------- */
/* (no sentence: config_warning lines word the setting they refuse) */

static const struct sa_finding_text sa_finding_texts[] __attribute__((unused)) = {
	{ "defer_rounded", "defer_rounded",
	  "TCP_DEFER_ACCEPT counts SYN-ACK retransmission rounds, not seconds: the kernel keeps rounds and "
	  "reports the seconds they span. On 6.19+ a listener's TCP_RTO_MAX_MS can make the real window "
	  "shorter than the reported seconds; the line then says both.",
	  { SA_MSG_DEFER_ROUNDED },
	  "The kernel converts TCP_DEFER_ACCEPT seconds to SYN-ACK retransmission rounds "
	  "(secs_to_retrans(): the first timeout 1 s, doubling, capped at 120 s) and getsockopt reports the"
	  " seconds those rounds span (retrans_to_secs()): 10 is kept as 4 rounds and reads back as 15. A "
	  "connection whose client stays silent is held for those rounds; the accept line's syn_ack_retrans"
	  " and queue time show it. From Linux 6.19 each SYN-ACK timeout is also capped by the listener's "
	  "TCP_RTO_MAX_MS, so the real window can be shorter than the seconds reported; the line then says "
	  "how long it really lasts.",
	  "Nothing, if the rounded value suits you; otherwise write a value the kernel keeps as written (1,"
	  " 3, 7, 15, 31, 63, ...)." },
	{ "defer_on_client_socket", "defer_on_client_socket",
	  "TCP_DEFER_ACCEPT reads back set on a connecting socket: it defers nothing on the server; the "
	  "client's kernel holds back the handshake's final ACK (up to 200 ms) until data is sent.",
	  { SA_MSG_DEFER_ON_CLIENT_SOCKET },
	  "On a connecting socket TCP_DEFER_ACCEPT defers nothing on the server: "
	  "tcp_rcv_synsent_state_process() holds back the handshake's final ACK for up to 200 ms (the "
	  "delayed-ACK timer) so that it can ride on the first data. If the program sends at once that "
	  "costs nothing; if it waits for the server to speak first, the server sees the connection up to "
	  "200 ms late (a capture shows the gap between SYN-ACK and ACK).",
	  "Set it on the listening socket instead, or drop it on the client." },
	{ "defer_with_fastopen", "defer_with_fastopen",
	  "TCP_DEFER_ACCEPT and TCP_FASTOPEN are both set on a listener: a client that opens with a valid "
	  "Fast Open cookie skips the deferral (TcpExtTCPFastOpenPassive counts them).",
	  { SA_MSG_DEFER_WITH_FASTOPEN },
	  "A client that opens with a valid Fast Open cookie is queued for accept() at its SYN "
	  "(tcp_try_fastopen()) and never meets tcp_check_req()'s deferral gate; the 0x2 bit of "
	  "net.ipv4.tcp_fastopen lets servers take Fast Open. The line does not see whether any client "
	  "does: TcpExtTCPFastOpenPassive with nstat counts them.",
	  "Do not count on deferral for Fast Open clients: the program must handle connections without "
	  "data." },
	{ "defer_bypass_risk", "defer_bypass_risk",
	  "Deferred connections wait in the SYN queue (backlog + 1) and net.ipv4.tcp_syncookies is on: "
	  "a burst larger than that within the deferral window would be accepted through SYN cookies "
	  "without deferral. The line sees the sizes, not the traffic (TcpExtSyncookiesSent does).",
	  { SA_MSG_DEFER_BYPASS_RISK },
	  "Deferred connections wait as requests in the SYN queue, which holds backlog + 1 "
	  "(inet_csk_reqsk_queue_is_full()). If more clients than that connect within the deferral window "
	  "and net.ipv4.tcp_syncookies is on, the kernel answers the rest with SYN cookies, and a "
	  "SYN-cookie connection goes straight to accept() without deferral. The line sees the sizes, not "
	  "the traffic: TcpExtSyncookiesSent with nstat, and the listener's empty_syncookie count, show "
	  "whether it happens.",
	  "If you rely on deferral, raise the backlog above the number of clients that connect within the "
	  "deferral window." },
	{ "backlog_clamped", "backlog_clamped",
	  "listen() got a smaller backlog than it asked for (read back with TCP_INFO or unix_diag): "
	  "fewer connections can wait for accept(). When the value equals net.core.somaxconn of the "
	  "network namespace, that sysctl lowered it.",
	  { SA_MSG_BACKLOG_CLAMPED_SOMAXCONN, SA_MSG_BACKLOG_CLAMPED_OTHER },
	  "The kernel lowers a listen() backlog above net.core.somaxconn to it (__sys_listen()), and the "
	  "accept queue holds backlog + 1 connections waiting for accept(). Each network namespace has its "
	  "own somaxconn (a new one starts at 4096, whatever the host has). When the backlog read back is "
	  "below the request but not equal to somaxconn, somaxconn did not set it: ss -ltn (Send-Q) shows "
	  "the backlog the kernel uses. listen(-1) and a request above 65535 ask for the most allowed and "
	  "are not flagged.",
	  "Raise net.core.somaxconn in the namespace the program runs in (sysctl -w net.core.somaxconn=N, "
	  "and a file under /etc/sysctl.d to keep it), or ask for less." },
	{ "option_adjusted", "option_adjusted",
	  "An option reads back different from what was requested, in a way the kernel documents (buffers "
	  "stored doubled, caps by a sysctl, rounding to the timer tick, the MSS in use); the line names which.",
	  { SA_MSG_OPTION_ADJUSTED_BUF_DOUBLED, SA_MSG_OPTION_ADJUSTED_BUF_CAPPED, SA_MSG_OPTION_ADJUSTED_BELOW_MIN, SA_MSG_OPTION_ADJUSTED_FASTOPEN_CAPPED, SA_MSG_OPTION_ADJUSTED_MAXSEG, SA_MSG_OPTION_ADJUSTED_TOS_ECN, SA_MSG_OPTION_ADJUSTED_HOPS_DEFAULT, SA_MSG_OPTION_ADJUSTED_CLAMP_MIN, SA_MSG_OPTION_ADJUSTED_TIMER_TICK },
	  "The kernel keeps another value than the one written, for a known reason: SO_RCVBUF and SO_SNDBUF"
	  " are stored doubled (sk_setsockopt()), capped by net.core.rmem_max or wmem_max, with the "
	  "kernel's own per-packet overhead counted against them, and setting SO_RCVBUF on a TCP socket "
	  "turns off receive autotuning; TCP_FASTOPEN's queue is capped by somaxconn; TCP_MAXSEG on a "
	  "connected socket reads back the MSS in use (mss_cache); IP_TOS loses its ECN bits on TCP; a TTL "
	  "or hop limit of -1 means the system default; timeouts are rounded up to the timer tick; "
	  "TCP_WINDOW_CLAMP has a minimum.",
	  "Check that the kept value is the one you want: raise rmem_max or wmem_max for a larger buffer "
	  "(or use SO_RCVBUFFORCE with CAP_NET_ADMIN), or leave SO_RCVBUF unset to keep autotuning." },
	{ "option_differs", "option_differs",
	  "An option reads back different from what was requested, for a reason the shim does not know.",
	  { SA_MSG_OPTION_DIFFERS, SA_MSG_OPTION_DIFFERS_UNEXPLAINED, SA_MSG_OPTION_DIFFERS_LINGER, SA_MSG_OPTION_DIFFERS_TIMEOUT, SA_MSG_OPTION_DIFFERS_NAME },
	  "getsockopt reads back another value than the one setsockopt wrote, and the library knows no "
	  "kernel rule that explains it.",
	  "The program is not getting what it asked for: look the option up in the kernel sources of the "
	  "running version." },
	{ "empty_accept_defer_expired", "empty_accept_defer_expired",
	  "A connection was accepted without data after the TCP_DEFER_ACCEPT window ran out: the "
	  "deferral cost the client that window and saved nothing.",
	  { SA_MSG_EMPTY_ACCEPT_DEFER_EXPIRED },
	  "With TCP_DEFER_ACCEPT the kernel keeps a connection whose client has not spoken in the SYN queue"
	  " and drops its bare final ACK (tcp_check_req()). When the window runs out, syn_ack_recalc() "
	  "sends one last SYN-ACK; the client's ACK to it creates the connection, and accept() gets it with"
	  " no data. TCP_DEFER_ACCEPT is a delay, not a filter.",
	  "The program must still handle empty connections. If this is common, the clients are slow to "
	  "speak or the server speaks first: turn deferral off." },
	{ "empty_accept_syncookie", "empty_accept_syncookie",
	  "A connection came in with no data and no SYN-ACK resend although TCP_DEFER_ACCEPT is on, "
	  "which only a SYN-cookie connection does: the SYN queue was probably full (TcpExtSyncookiesRecv "
	  "confirms it), so the deferral was skipped.",
	  { SA_MSG_EMPTY_ACCEPT_SYNCOOKIE },
	  "Deferred connections wait in the SYN queue, which the listen backlog bounds. When it was full, "
	  "SYN cookies made this connection, and a SYN-cookie connection goes straight to the accept queue "
	  "without meeting tcp_check_req()'s deferral gate: it arrives with no data and no SYN-ACK resend. "
	  "Under load, deferral turns itself off. The namespace's SyncookiesRecv (in listener_stats' "
	  "netns_counters, or nstat) confirms it.",
	  "If you rely on deferral, raise the backlog above the number of clients that connect within the "
	  "deferral window." },
	{ "accept_queue_full", "accept_queue_full",
	  "The listener's accept queue was full when accept() ran. While it is full the kernel drops "
	  "new SYNs or final ACKs; clients may then retransmit (check TCPSynRetrans on the client, "
	  "ListenOverflows here). A larger backlog or faster accepting gives room.",
	  { SA_MSG_ACCEPT_QUEUE_FULL_ABORT, SA_MSG_ACCEPT_QUEUE_FULL_DROP },
	  "After accept() took one connection, backlog + 1 were still waiting: the kernel's full test "
	  "(sk_acceptq_is_full()) was true. While the queue is full, tcp_conn_request() drops new SYNs "
	  "(their clients resend after 1 s, so connect() takes 1 s or more) and tcp_v4_syn_recv_sock() "
	  "drops final handshake ACKs: with net.ipv4.tcp_abort_on_overflow=0 connect() returns at once and "
	  "the handshake completes when the client's data, or its ACK to a SYN-ACK resent at 1, 3, 7 s, "
	  "finds room; with 1 the client gets a reset. The line does not see which happened: "
	  "TcpExtListenOverflows with nstat here, TcpExtTCPSynRetrans on the clients, or the clients' own "
	  "times tell. The backlog the line advises is twice the most connections seen waiting at once.",
	  "Raise the backlog to the one the line names (and net.core.somaxconn to match), or accept faster." },
	{ "accept_fd_limit", "accept_fd_limit",
	  "accept() failed with EMFILE or ENFILE: the process (RLIMIT_NOFILE) or the system "
	  "(fs.file-max) reached its limit of open files, and the connection stays queued until an "
	  "accept succeeds.",
	  { SA_MSG_ACCEPT_FD_LIMIT_EMFILE, SA_MSG_ACCEPT_FD_LIMIT_ENFILE },
	  "accept() fails with EMFILE when the process reached its RLIMIT_NOFILE, or with ENFILE when the "
	  "system reached fs.file-max (/proc/sys/fs/file-nr shows used and max). Connections stay in the "
	  "listen queue until an accept succeeds; how long their clients wait shows in the next accepts' "
	  "queue_ms and, if the queue fills, in TcpExtListenOverflows.",
	  "Raise the limit (ulimit -n, systemd LimitNOFILE=, or fs.file-max) or close idle connections "
	  "sooner." },
	{ "server_speaks_first_deferred", "server_speaks_first_deferred",
	  "The server wrote first on a TCP_DEFER_ACCEPT listener: a client that waits for the greeting "
	  "sends nothing, so its connection sits out the whole deferral window (the accept line's "
	  "syn_ack_retrans and queue time show it).",
	  { SA_MSG_SERVER_SPEAKS_FIRST_DEFERRED },
	  "With TCP_DEFER_ACCEPT a connection reaches accept() only when the client's first data arrives or"
	  " the deferral window ends. Where the server speaks first (an SMTP-like protocol: the client "
	  "waits for the greeting), nobody speaks until the window ends, so every connection waits it out "
	  "and then arrives empty (empty_accept_defer_expired; the accept line's syn_ack_retrans and queue "
	  "time show it).",
	  "Turn TCP_DEFER_ACCEPT (nginx deferred) off on this port." },
	{ "listen_overflows", "listen_overflows",
	  "The namespace's ListenOverflows counter rose while this process ran: some listener's accept "
	  "queue overflowed. Whether clients waited shows in their SYN retransmissions.",
	  { SA_MSG_LISTEN_OVERFLOWS, SA_MSG_LISTEN_OVERFLOWS_NO_SYN_RETRANS_TAIL, SA_MSG_LISTEN_OVERFLOWS_SYN_RETRANS_TAIL },
	  "ListenOverflows, a counter of the whole network namespace, rose since the listener's previous "
	  "line while this listener's own accept queue was seen full: the kernel dropped that many SYNs or "
	  "final handshake ACKs. A dropped SYN costs its client a resend after 1 s; a dropped final ACK "
	  "costs little when the client's data soon finds room, up to seconds when it waits for a SYN-ACK "
	  "resend (1, 3, 7 s). TCPSynRetrans over the same time counts the SYNs and SYN-ACKs resent by any "
	  "socket in the namespace; clients elsewhere count theirs in their own TcpExtTCPSynRetrans.",
	  "Raise the backlog to the one the line names (and net.core.somaxconn to match), or accept faster." },
	{ "syn_retransmitted", "syn_retransmitted",
	  "The connect resent its SYN (tcpi_total_retrans): its time includes this kernel's SYN "
	  "timeouts (1 s each for the first tcp_syn_linear_timeouts resends, then doubling). Why the "
	  "first SYN went unanswered is not measured: a full accept queue on the server "
	  "(TcpExtListenOverflows there) or loss (a capture on both ends); the server's logs do not show this wait.",
	  { SA_MSG_SYN_RETRANSMITTED },
	  "The connect's SYN got no SYN-ACK in time and was resent. The kernel resends an unanswered SYN as"
	  " tcp_retransmit_timer() does: 1 s apart for the first net.ipv4.tcp_syn_linear_timeouts resends "
	  "(Linux 6.5+, default 4), then doubling, capped by the socket's TCP_RTO_MAX_MS; connect() gives "
	  "up after tcp_syn_retries + tcp_syn_linear_timeouts resends (at 131 s with the defaults). So such"
	  " connects cluster at about 1, 2 and 3 s (sockaudit explain syn prints this kernel's schedule). "
	  "The server starts its clock at accept, so its own logs do not show this wait.",
	  "On the server, check nstat -az TcpExtListenOverflows and ss -ltn (Recv-Q against Send-Q): give "
	  "it a backlog above its request rate times its longest stall (and net.core.somaxconn to match), "
	  "or find what stalled it; a capture on both ends shows loss." },
	{ "slow_connect", "slow_connect",
	  "The connect took longer than SOCKAUDIT_SLOW_CONNECT_MS. Its syn_retrans field says whether "
	  "SYN retransmissions explain the time; if 0, the peer or the path was slow to answer.",
	  { SA_MSG_SLOW_CONNECT_ABANDONED, SA_MSG_SLOW_CONNECT_INTERRUPTED, SA_MSG_SLOW_CONNECT, SA_MSG_SLOW_CONNECT_UNIX_TAIL, SA_MSG_SLOW_CONNECT_NO_SYN_DROP_TAIL },
	  "The connect took at least SOCKAUDIT_SLOW_CONNECT_MS (default 500 ms). With SYNs retransmitted, "
	  "see syn_retransmitted. With none, no SYN was dropped: the time went to the round trip (ss -ti "
	  "shows rtt), a slow SYN-ACK, or, for a non-blocking connect, the program noticing completion late"
	  " (completed_by). On AF_UNIX, unix_stream_connect() blocks only while the listener's queue "
	  "(backlog + 1) is full. An interrupted connect was cut by a signal: a connect timeout built on "
	  "alarm() or a timer ran out.",
	  "With syn_retransmitted beside it, see to the server's backlog; otherwise look at the path to the"
	  " peer and at the program's event loop (on AF_UNIX, compare ss -xl Recv-Q with the backlog, or "
	  "accept faster)." },
	{ "quickack_hot_loop", "quickack_hot_loop",
	  "TCP_QUICKACK is set again and again on one socket, mostly with no read between sets: each set "
	  "is a syscall, and it acts only on ACKs owed for received data. The line does not count the ACKs "
	  "sent; a capture or nstat (TcpOutSegs, TcpExtDelayedACKs) shows what the sets changed.",
	  { SA_MSG_QUICKACK_HOT_LOOP },
	  "TCP_QUICKACK=1 takes the socket out of delayed-ACK (pingpong) mode and sends an ACK that is "
	  "already due. It is not sticky: the kernel re-enters pingpong mode when the program sends soon "
	  "after receiving (tcp_event_data_sent()). Set after every send, it costs a syscall each time and "
	  "mostly changes nothing, since it acts only on ACKs owed for received data. The line does not "
	  "count the ACKs that went out: a capture, or nstat's TcpOutSegs and TcpExtDelayedACKs over runs "
	  "with and without the sets, shows what they changed.",
	  "Set it once, or once per received reply; with Nagle on, fix the write pattern (one write per "
	  "message, or TCP_CORK around it) or set TCP_NODELAY first." },
	{ "blind_spot", "blind_spot",
	  "The process made calls the shim cannot see: accept or connect through syscall() (those calls "
	  "are missing from the lines and counts), or an io_uring set up, whose submitted accepts and "
	  "connects, if any, would be missing too.",
	  { SA_MSG_BLIND_SPOT_IO_URING, SA_MSG_BLIND_SPOT_IO_URING_OPEN, SA_MSG_BLIND_SPOT_SYSCALL },
	  "The program made a call the shim would audit through a path a preload cannot follow: accept, "
	  "accept4 or connect through libc's syscall(), or an io_uring, whose submitted accepts and "
	  "connects never pass through libc. A ring set up by the program's own system calls (liburing, Go)"
	  " is found when the shim looks at /proc/self/fd. The lines and counts of that process cover only "
	  "the calls made through libc.",
	  "Read that process's counts as a lower bound, or audit it from outside the process (ss, strace -f"
	  " -e trace=network, eBPF)." },
	{ "config_warning", "config_warning",
	  "A SOCKAUDIT_* setting could not be used as given; the line says which and what was "
	  "used instead.",
	  { NULL },
	  "A SOCKAUDIT_* value that cannot be used, or an unusable log destination, is reported as a "
	  "warning event (with variable, value and msg), not as a finding on a socket event: no event "
	  "carries this code in its findings array; it is a counter slot.",
	  "Correct the variable the warning names; its msg says what was used instead." },
};

/* CODE's entry, or NULL for a code this table does not know. */
static inline const struct sa_finding_text *sa_finding_entry(const char *code)
{
	size_t i;

	for (i = 0; code && i < sizeof(sa_finding_texts) / sizeof(sa_finding_texts[0]); i++)
		if (strcmp(sa_finding_texts[i].code, code) == 0)
			return &sa_finding_texts[i];
	return NULL;
}

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
