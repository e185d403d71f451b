/*
 * speaker.c: who speaks first on an accepted connection (the question
 * behind "would deferred help this port?"): data already waiting at
 * accept means the client; otherwise the first read or write through the
 * socket, or any copy of it, decides; a close before either, neither.
 * Counted in the listener's stats; a server that speaks first on a
 * deferred listener is a finding. Below trace, a plain TCP listener's
 * connections are watched on a sample; the others get no fd entry, only a
 * word in the fd table's origin table, so a setsockopt on one can still be
 * counted as "accepted from" its listener (sa_accept_promote).
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "audit/accept.h"
#include "syn_schedule.h"

/* Below trace, who speaks first is decided on a sample of a plain TCP
 * listener's connections: its first SA_WATCH_FIRST, then one in
 * SA_WATCH_EVERY (every one on a deferred listener, where a server that
 * speaks first is a finding, and at trace). The others are counted and
 * timed, with no fd entry: that entry, its first-I/O watch and its close
 * would be most of the instructions an accept costs (bench/counts.sh). */

struct sa_sock *sa_accept_promote(int fd, uint64_t word)
{
	int lfd = (int)(uint32_t)word - 1;
	struct sa_sock *ls = sa_fd_get(lfd), *c;
	struct sa_listener *l = ls && (sa_sock_flags(ls) & SA_F_LISTENER) ? ls->lsn.listener : NULL;

	/* The listener closed, or its number holds another one now. */
	if (!l || !__atomic_load_n(&l->in_use, __ATOMIC_ACQUIRE) ||
	    sa_accept_origin_word(lfd, l) != word || (c = sa_fd_adopt(fd)) == NULL)
		return NULL;
	/* Not watched: who spoke first on it is not known any more. */
	sa_accepted_from(c, lfd, ls, l, (uint32_t)(word >> 32));
	return c;
}

/* The listener an accepted socket came from, while it is still that
 * listener: once it closed (its line is written) or was reused, NULL. */
static struct sa_listener *origin_listener(const struct sa_sock *s)
{
	struct sa_listener *l = s->acc.listener;

	if (!l || !__atomic_load_n(&l->in_use, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&l->inc, __ATOMIC_ACQUIRE) != s->acc.listener_inc)
		return NULL;
	return l;
}

struct settle {
	const struct sa_sock *by;
	int who;
};

static void settle_copy(int fd, struct sa_sock *c, void *arg)
{
	const struct settle *st = arg;
	uint8_t expected = 0;

	(void)fd;   /* the walker's callback: the entry is what matters */
	if (c == st->by || !(sa_sock_flags(c) & SA_F_DUPED) || c->acc.serial != st->by->acc.serial ||
	    c->acc.listener != st->by->acc.listener)
		return;
	__atomic_compare_exchange_n(&c->acc.first_speaker, &expected, (uint8_t)st->who, 0,
				    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	sa_flags_clear(c, SA_F_WATCH_IO);
}

/* The server spoke first (counted as the n-th time on l): a finding on
 * a deferred listener, a line at trace. Apart from record_speaker(), whose
 * common cases (the client, or nobody) then need no frame for the line
 * and its findings (bench/counts.sh: ~20 instructions per connection). */
static __attribute__((noinline)) void server_first(int fd, const struct sa_sock *s, struct sa_listener *l,
						   uint64_t n)
{
	struct sa_findings f;
	struct sa_line L;

	sa_findings_init(&f);
	if (__atomic_load_n(&l->defer_s, __ATOMIC_RELAXED) > 0) {
		char note[300];

		sa_findings_add(&f, "server_speaks_first_deferred",
			SA_MSG_SERVER_SPEAKS_FIRST_DEFERRED,
			l->defer_s, sa_defer_note(note, sizeof note, l->defer_s,
						  __atomic_load_n(&l->defer_real_ms, __ATOMIC_RELAXED),
						  __atomic_load_n(&l->rto_max_ms, __ATOMIC_RELAXED)));
	}
	if (!sa_level_enabled(SA_LEVEL_TRACE) && !(f.n && sa_nth_worth_a_line(n))) {
		if (f.n) {
			sa_findings_count(f.codes[0]);
			sa_suppressed_add(1);
		}
		return;
	}
	sa_line_begin(&L, "first_speaker", fd, &f);
	sa_line_int(&L, "listen_fd", s->acc.listen_fd);
	sa_line_str(&L, "local", l->local[0] ? l->local : NULL);
	sa_line_str(&L, "speaker", "server");
	sa_line_int(&L, "defer_accept_s", l->defer_s);
	sa_line_emit(&L, SA_LEVEL_TRACE, &f);
}

SA_FORK_TEXT static void record_speaker(int fd, struct sa_sock *s, int who)
{
	struct sa_listener *l = origin_listener(s);
	uint8_t expected = 0;

	sa_flags_clear(s, SA_F_WATCH_IO);
	/* Two threads doing the first I/O at once: count it once. */
	if (!__atomic_compare_exchange_n(&s->acc.first_speaker, &expected, (uint8_t)who, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	/* The socket has other numbers (dup): settle them too, so the host's
	 * first I/O through any of them is not counted again. Rare: a table
	 * walk only for sockets dup'd before anyone spoke. */
	if (sa_sock_flags(s) & SA_F_DUPED) {
		struct settle st = { s, who };

		sa_fd_foreach(settle_copy, &st);
	}
	if (!l)
		return;
	sa_listener_mine(l);
	if (who == SA_SPEAKER_CLIENT) {
		SA_RELAXED_ADD(l->first_client, 1);
		return;
	}
	if (who == SA_SPEAKER_UNKNOWN) {
		SA_RELAXED_ADD(l->first_unknown, 1);
		return;
	}
	server_first(fd, s, l, SA_RELAXED_ADD(l->first_server, 1));
}

SA_FORK_TEXT void sa_accept_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err)
{
	int n = 0;

	if (dir == SA_IO_READ) {
		if (ret > 0)
			record_speaker(fd, s, SA_SPEAKER_CLIENT);
		else if (ret == 0)
			record_speaker(fd, s, SA_SPEAKER_UNKNOWN);   /* closed without a word */
		else if (err != EAGAIN && err != EWOULDBLOCK && err != EINTR)
			record_speaker(fd, s, SA_SPEAKER_UNKNOWN);
		return;
	}
	if (ret < 0) {
		if (err != EAGAIN && err != EWOULDBLOCK && err != EINTR)
			record_speaker(fd, s, SA_SPEAKER_UNKNOWN);
		return;
	}
	if (ret == 0)
		return;
	/* The program wrote before reading: if the client's bytes were
	 * already waiting, the client still spoke first. */
	if (ioctl(fd, FIONREAD, &n) == 0 && n > 0)
		record_speaker(fd, s, SA_SPEAKER_CLIENT);
	else
		record_speaker(fd, s, SA_SPEAKER_SERVER);
}

/* An undecided socket with other numbers is closing on this one: the
 * socket may live on. TCP_INFO (a read; rare: only dup'd sockets) tells
 * whether someone already spoke through another number; if nobody did,
 * the copies stay watched and decide later. */
static void close_duped(int fd, struct sa_sock *s)
{
	struct sa_tcpinfo ti;
	uint64_t in;
	uint32_t out;

	if (sa_tcpinfo_read(fd, &ti) != 0 || !ti.has_bytes_received || !ti.has_data_segs) {
		sa_flags_clear(s, SA_F_WATCH_IO);
		return;
	}
	in = ti.bytes_received;
	out = ti.data_segs_out;
	if (in > 0 && out == 0)
		record_speaker(fd, s, SA_SPEAKER_CLIENT);
	else if (in == 0 && out > 0)
		record_speaker(fd, s, SA_SPEAKER_SERVER);
	else if (in > 0 && out > 0)
		record_speaker(fd, s, SA_SPEAKER_UNKNOWN);   /* both spoke, order unseen */
	else
		sa_flags_clear(s, SA_F_WATCH_IO);
}

SA_FORK_TEXT void sa_accept_close(int fd, struct sa_sock *s, int defer)
{
	if (sa_sock_flags(s) & SA_F_LISTENER)
		sa_listener_release(s, defer);
	if ((sa_sock_flags(s) & (SA_F_ACCEPTED | SA_F_WATCH_IO)) != (SA_F_ACCEPTED | SA_F_WATCH_IO))
		return;
	/* Accepted before a fork since (socat fork, sshd, inetd style): the
	 * child that serves it holds a copy, so this close is not the end of
	 * the conversation and decides nothing by itself; the child decides. */
	if ((sa_sock_flags(s) & SA_F_DUPED) || s->acc.forks != (uint16_t)sa_fd_forks())
		close_duped(fd, s);
	else
		record_speaker(fd, s, SA_SPEAKER_UNKNOWN);
}
