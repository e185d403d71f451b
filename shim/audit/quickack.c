/*
 * quickack.c: TCP_QUICKACK reasserted in a hot loop.
 *
 * TCP_QUICKACK is not sticky: getsockopt reports "not in delayed-ACK
 * (pingpong) mode", and the kernel re-enters that mode on its own
 * (tcp_event_data_sent() after a reply, tcp_fin()). Programs that "fix"
 * this by setting it again after every send, with Nagle on, push extra pure
 * ACKs and fragment their writes. We find that pattern without hooking
 * send(): at each set we sample tcpi_data_segs_out and tcpi_data_segs_in
 * and keep, per fd, the last SA_QA_WINDOW intervals between sets.
 *
 * The rule (sa_quickack_judge, pure, documented in docs/findings.md, "TCP_QUICKACK"):
 * hot when reasserts >= quickack_min_reasserts, the median of data segments
 * out between sets <= quickack_max_segs, and in at least
 * SA_QA_MIN_QUIET_PCT % of the intervals the program read nothing. The
 * last part spares a request/response program that sets it once per turn:
 * each of its intervals holds the read of the reply. "Set after every
 * write" under a write-write-read pattern has sets with no read between.
 *
 * What the program read is tcpi_bytes_received minus the unread bytes
 * (SIOCINQ), so it needs no read() hook either. tcpi_data_segs_in, the
 * first idea, depends on timing: on loopback the echo of the first write
 * often arrives before the second set, and the shim's own syscalls make
 * that likelier (measured in docs/findings.md, "TCP_QUICKACK").
 *
 * One quickack_hot_loop event per fd when first found, then again only
 * when the reasserts double: a hot loop never floods the log. Never
 * changes what the program sees; the setsockopt line itself is written
 * (once per fd) by sockopt.c.
 */
#include <netinet/in.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "audit/audit.h"

_Static_assert(SA_QA_WINDOW == sizeof(((struct sa_sock_quickack *)0)->out) / sizeof(uint16_t),
	       "qa_out holds one window");
_Static_assert(SA_QA_WINDOW <= 32, "qa_quiet is a 32-bit mask");

static struct {
	uint64_t sets, reasserts, hot_loops, fds;
} qa SA_PROC_PAGE;

void sa_quickack_judge(uint32_t reasserts, const uint16_t *segs_out, unsigned n, unsigned quiet,
		       int min_reasserts, int max_segs, int min_quiet_pct,
		       struct sa_qa_verdict *v)
{
	uint16_t sorted[SA_QA_WINDOW];
	unsigned i, j;

	memset(v, 0, sizeof *v);
	if (n == 0 || !segs_out)
		return;
	if (n > SA_QA_WINDOW)
		n = SA_QA_WINDOW;
	if (quiet > n)
		quiet = n;
	/* Insertion sort: at most 32 small numbers. */
	for (i = 0; i < n; i++) {
		uint16_t x = segs_out[i];
		for (j = i; j > 0 && sorted[j - 1] > x; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = x;
	}
	/* The upper median for an even count: the stricter one, so a window
	 * split evenly between short and long intervals is not called hot. */
	v->median_out = sorted[n / 2];
	v->quiet_pct = 100u * quiet / n;
	v->hot = reasserts >= (uint32_t)(min_reasserts > 0 ? min_reasserts : 1) &&
		 v->median_out <= (unsigned)(max_segs > 0 ? max_segs : 0) &&
		 100u * quiet >= (unsigned)(min_quiet_pct > 0 ? min_quiet_pct : 0) * n;
}

/* 1 when the option reads back non-zero, 0 when zero, -1 when unreadable. */
static int read_flag(int fd, int opt)
{
	int v = 0;
	socklen_t l = sizeof v;

	if (sa_real.getsockopt(fd, IPPROTO_TCP, opt, &v, &l) != 0)
		return -1;
	return v != 0;
}

static void emit(int fd, struct sa_sock *s, uint32_t sets, const struct sa_qa_verdict *v)
{
	struct sa_findings f = { 0 };
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	json_t *ev;
	int nodelay, cork, nagle;

	/* What the kernel holds now, not only what the program wrote: an
	 * accepted socket inherits TCP_NODELAY from its listener, and a
	 * program may never have set it. The tracked value is the fallback. */
	nodelay = read_flag(fd, TCP_NODELAY);
	cork = read_flag(fd, TCP_CORK);
	if (nodelay < 0)
		nodelay = s->opt.nodelay;
	if (cork < 0)
		cork = s->opt.cork;
	nagle = !nodelay;

	/* tcp_setsockopt(TCP_QUICKACK) acts only on ACKs owed for received
	 * data: it sends a pending one and leaves pingpong mode, which the
	 * kernel re-enters on its own; the ACKs sent are not counted here. */
	sa_findings_add(&f, "quickack_hot_loop",
		SA_MSG_QUICKACK_HOT_LOOP,
		sets, v->median_out, v->quiet_pct, nagle ? SA_MSG_QUICKACK_NAGLE_TAIL : "",
		nagle ? SA_MSG_QUICKACK_NAGLE_FIX_TAIL : "");

	ev = sa_event_new("quickack_hot_loop", fd);
	if (!ev)
		return;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		json_object_set_new(ev, "local", sa_json_addr((struct sockaddr *)&ss, sl));
	sl = sizeof ss;
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		json_object_set_new(ev, "peer", sa_json_addr((struct sockaddr *)&ss, sl));
	json_object_set_new(ev, "sets", json_integer(sets));
	json_object_set_new(ev, "reasserts", json_integer(sets - 1));
	json_object_set_new(ev, "data_segs_between", json_integer(v->median_out));
	json_object_set_new(ev, "no_read_pct", json_integer(v->quiet_pct));
	json_object_set_new(ev, "nagle", json_boolean(nagle));
	json_object_set_new(ev, "cork", json_boolean(cork));
	sa_event_emit(ev, SA_LEVEL_WARN, &f);
}

/*
 * What the program has read so far is bytes_received (TCP_INFO) minus the
 * unread bytes (SIOCINQ), two calls: data arriving between them makes the
 * pair disagree. The peer's reply to the write just made often lands right
 * then, more often on a loaded machine, and each time a no-read interval
 * looked like a read; enough of them at a doubling point kept the verdict
 * off and the line came sets late (71 and 145 instead of 64 and 128). So
 * SIOCINQ is read between two TCP_INFO reads and kept only when
 * bytes_received did not move across it (tcp_rcv_established() bumps it
 * under the socket lock that both calls take). A concurrent read() by
 * another thread moves only the unread count, which the pair then shows
 * as read, as it was. After SA_QA_SAMPLE_TRIES the last pair is used:
 * arrivals then show as a read, which errs towards silence.
 */
#define SA_QA_SAMPLE_TRIES 3

static int sample(int fd, struct sa_tcpinfo *ti, int *unread)
{
	struct sa_tcpinfo after;
	int i;

	if (sa_tcpinfo_read(fd, ti) != 0 || !ti->has_data_segs)
		return -1;
	for (i = 0; i < SA_QA_SAMPLE_TRIES; i++) {
		if (ioctl(fd, SIOCINQ, unread) != 0 || *unread < 0 ||
		    sa_tcpinfo_read(fd, &after) != 0 || !after.has_data_segs)
			return -1;
		if (after.bytes_received == ti->bytes_received) {
			*ti = after;
			return 0;
		}
		*ti = after;
	}
	return 0;
}

/* Reads back what the host just set; the dispatcher calls this before the
 * setsockopt audit, for every TCP_QUICKACK call (the hot-loop check needs
 * each one, repeats included). */
void sa_quickack_audit(int fd, struct sa_sock *s)
{
	const struct sa_config *c = sa_cfg();
	struct sa_tcpinfo ti;
	struct sa_qa_verdict v = { 0 };
	uint32_t sets, reasserts;
	int report = 0, first_hot = 0, unread = 0;
	uint32_t read_total;

	struct sa_sock_quickack *q;

	__atomic_add_fetch(&qa.sets, 1, __ATOMIC_RELAXED);
	if (!s)
		return;
	/* The window exists only for fds that set TCP_QUICKACK (fdtab.c's
	 * side table: mmap, no heap). */
	q = sa_fd_qa(fd, 1);
	if (!q)
		return;
	/* Sample before taking the lock: these are syscalls. A listener has
	 * no data to send, so repeated sets there say nothing about sends. */
	memset(&ti, 0, sizeof ti);
	if (sa_sock_flags(s) & SA_F_LISTENER || sample(fd, &ti, &unread) != 0)
		ti.valid = 0;
	read_total = (uint32_t)ti.bytes_received - (uint32_t)unread;

	/* Two threads setting it on one fd at once: one samples, the other
	 * is only counted (no lock a handler or a fork could meet held). */
	if (!sa_trylock(&q->busy))
		return;
	sets = ++q->sets;
	if (ti.valid && q->have_last) {
		uint32_t out = ti.data_segs_out - q->last_out;   /* u32 wrap is fine */
		/* Negative only through the race above: nothing read. */
		int32_t rd = (int32_t)(read_total - q->last_read);
		unsigned i = q->win_next % SA_QA_WINDOW;

		q->out[i] = out > 65535 ? 65535 : (uint16_t)out;
		if (rd <= 0)
			q->quiet |= 1u << i;
		else
			q->quiet &= ~(1u << i);
		q->win_next = (uint8_t)((i + 1) % SA_QA_WINDOW);
		if (q->win_n < SA_QA_WINDOW)
			q->win_n++;
	}
	q->have_last = (uint8_t)ti.valid;
	q->last_out = ti.data_segs_out;
	q->last_read = read_total;
	reasserts = sets - 1;
	/* Judge only from the threshold on, and after an event only once the
	 * reasserts have doubled. */
	if (c && reasserts >= (uint32_t)c->quickack_min_reasserts &&
	    reasserts >= 2ull * q->reported_at) {
		unsigned n = q->win_n;
		uint32_t mask = n >= 32 ? 0xffffffffu : (1u << n) - 1;
		/* The ring fills from 0, so until it wraps the first n slots are
		 * the valid ones; after that all of them are. */
		sa_quickack_judge(reasserts, q->out, n,
				  (unsigned)__builtin_popcount(q->quiet & mask),
				  c->quickack_min_reasserts, c->quickack_max_segs,
				  SA_QA_MIN_QUIET_PCT, &v);
		if (v.hot) {
			first_hot = q->reported_at == 0;
			q->reported_at = reasserts;
			report = 1;
		}
	}
	sa_unlock(&q->busy);

	if (sets == 1)
		__atomic_add_fetch(&qa.fds, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&qa.reasserts, 1, __ATOMIC_RELAXED);
	if (first_hot)
		__atomic_add_fetch(&qa.hot_loops, 1, __ATOMIC_RELAXED);
	if (report) {
		sigset_t old;   /* jansson allocates: no handler may jump out of it */

		sa_signals_hold(&old);
		emit(fd, s, sets, &v);
		sa_signals_release(&old);
	}
}

void sa_quickack_summary(json_t *summary)
{
	json_t *q = json_object();

	if (!q)
		return;
	json_object_set_new(q, "sets", json_integer((json_int_t)qa.sets));
	json_object_set_new(q, "reasserts", json_integer((json_int_t)qa.reasserts));
	json_object_set_new(q, "hot_loops", json_integer((json_int_t)qa.hot_loops));
	json_object_set_new(q, "fds", json_integer((json_int_t)qa.fds));
	json_object_set_new(summary, "quickack", q);
}

SA_FORK_TEXT void sa_quickack_reset(void)
{
	SA_ZERO(qa);
}
