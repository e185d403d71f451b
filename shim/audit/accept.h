/*
 * accept.h: declarations shared by the accepting side's files (accept.c,
 * listener_stats.c) and their tests. Never installed, never included by
 * the floors below. Pure helpers are here so cmocka tests can
 * reach them without preloading anything.
 */
#ifndef SA_ACCEPT_H
#define SA_ACCEPT_H

#include <stdint.h>

#include "audit/audit.h"

/* ---- listener_stats.c: per-listener state and the listener_stats line ------ */

/* Counters are updated with relaxed atomics from any thread; the struct is
 * never freed (dup'd and inherited fds may share it), so a pointer to it
 * stays valid for the process's life. */
struct sa_listener {
	struct sa_listener *next;        /* push-only list of every listener */
	int listen_fd;
	int family;
	char local[80];
	int backlog;                     /* effective, as last read back */
	int defer_s;                     /* TCP_DEFER_ACCEPT seconds, as last known */
	uint64_t accepts, eagain, errors;
	uint64_t empty_accepts, with_data;
	uint64_t defer_expired, syncookie, fd_limit;
	uint64_t queue_full_seen;
	uint32_t peak_waiting;           /* most connections seen queued at once */
	uint64_t first_client, first_server, first_unknown;
	struct sa_hist queue_ms, wait_ms;
	uint64_t last_emit_ns;
	uint64_t next_sample_ns;         /* TCP_INFO sampled by count, and 100 ms after the last */
	/* What the previous listener_stats line saw, for per-interval findings. */
	struct sa_netns_snap ns_prev;
	uint64_t queue_full_prev;
};

/* The listener for s (a listening socket), created on first use. NULL when
 * memory is short or too many listeners exist. */
struct sa_listener *sa_listener_get(int fd, struct sa_sock *s) SA_HIDDEN;
/* From the accept path: writes listener_stats when the interval passed. */
void sa_listener_tick(struct sa_listener *l, uint64_t now_ns) SA_HIDDEN;
/* Writes one listener_stats line now. */
void sa_listener_emit(struct sa_listener *l) SA_HIDDEN;
/* The backlog a listener that was full needs: twice the peak seen waiting,
 * and never below twice its capacity. Pure. */
int sa_needed_backlog(uint32_t peak_waiting, int backlog) SA_HIDDEN;

/* Plain numbers the advice is computed from (pure, testable). */
struct sa_advice_in {
	uint64_t accepts, empty_accepts, with_data;
	uint64_t defer_expired, syncookie;
	uint64_t first_client, first_server, first_unknown;
	uint64_t queue_full_seen;
	uint32_t peak_waiting;
	int backlog, defer_s;
	int ns_valid;                    /* the ns_* deltas below are known */
	int has_defer_drop, has_cookies_recv, has_overflows;
	uint64_t defer_drop, cookies_recv, overflows;
};
/* Appends advice sentences (strings) to arr. Returns how many. */
int sa_listener_advice(const struct sa_advice_in *in, json_t *arr) SA_HIDDEN;

/* ---- accept.c ------------------------------------------------------- */

enum sa_empty_cause { SA_EMPTY_NONE, SA_EMPTY_DEFER_EXPIRED, SA_EMPTY_SYNCOOKIE };
/* Why a deferred listener handed over a child with no data (kernel facts
 * Q5): a SYN-ACK was resent -> the window expired; none and not Fast Open
 * -> SYN cookies skipped the gate. Pure. */
enum sa_empty_cause sa_empty_cause(int defer_s, long bytes_ready, int state,
				   uint32_t total_retrans, uint32_t total_rto, uint8_t options) SA_HIDDEN;
/* Whether the accept queue was at capacity when accept() ran, from the
 * listener's queue length read right after. Pure. */
int sa_queue_was_full(int backlog, uint32_t len_after, long queue_ms) SA_HIDDEN;

#endif
