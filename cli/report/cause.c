/*
 * report/cause.c: the words of the report's causes (join.c finds
 * them): each cause's figures, its sentence, what would decide an
 * unexplained one, the lines it stands on; and the ranking of causes and
 * findings by the seconds they cost. Text, HTML and JSON print these
 * strings as they are.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report.h"

const char *rp_clock(double ts, char buf[24])
{
	time_t t = (time_t)floor(ts);
	struct tm tm;
	int ms = (int)((ts - floor(ts)) * 1000);

	if (ts <= 0 || !gmtime_r(&t, &tm)) {
		snprintf(buf, 24, "?");
		return buf;
	}
	snprintf(buf, 24, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec, ms > 999 ? 999 : ms);
	return buf;
}

const char *rp_loc_file(const struct rp_state *st, const struct rp_loc *loc)
{
	return loc->file >= 0 && loc->file < st->nfiles ? st->files[loc->file] : "(stdin)";
}

/* ---- causes -------------------------------------------------------------------- */

char *rp_xprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0 || !s) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	return s;
}

/* One entry per line: a later word on the same line (an accept that
 * found the queue full, after the wait it measured) replaces the earlier. */
void rp_evid_add(struct rp_cause *cz, const struct rp_loc *loc, char *what)
{
	int k;

	for (k = 0; k < cz->nevid; k++)
		if (cz->evid[k].file == loc->file && cz->evid[k].line == loc->line) {
			free(cz->evid_what[k]);
			cz->evid_what[k] = what;
			return;
		}
	if (cz->nevid >= RP_EVID_MAX) {
		free(what);
		return;
	}
	cz->evid[cz->nevid] = *loc;
	cz->evid_what[cz->nevid++] = what;
}

void rp_cause_add_conn(struct rp_cause *cz, const struct rp_conn *c)
{
	long i;

	cz->n++;
	cz->secs += c->ms / 1000.0;
	if (c->retr > 0)
		cz->resent++;
	if (c->retr >= 0 && (cz->retr_min < 0 || c->retr < cz->retr_min))
		cz->retr_min = c->retr;
	if (c->retr > cz->retr_max)
		cz->retr_max = c->retr;
	if (cz->t0 == 0 || c->start < cz->t0)
		cz->t0 = c->start;
	if (c->end > cz->t1)
		cz->t1 = c->end;
	for (i = 0; i < cz->npids && i < RP_CAUSE_PIDS; i++)
		if (cz->pids[i] == c->pid)
			return;
	if (i < RP_CAUSE_PIDS)
		cz->pids[i] = c->pid;
	cz->npids++;
}

/* "python3[12]", "python3[12,13,14,15 and 4 more]". */
static char *who(const struct rp_cause *cz)
{
	char buf[160];
	size_t n = 0;
	long i;

	n += (size_t)snprintf(buf, sizeof buf, "%s[", cz->comm ? cz->comm : "?");
	for (i = 0; i < cz->npids && i < RP_CAUSE_PIDS && n < sizeof buf; i++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%ld", i ? "," : "", cz->pids[i]);
	if (cz->npids > RP_CAUSE_PIDS && n < sizeof buf)
		n += (size_t)snprintf(buf + n, sizeof buf - n, " and %ld more", cz->npids - RP_CAUSE_PIDS);
	if (n < sizeof buf)
		snprintf(buf + n, sizeof buf - n, "]");
	return log_strdup(buf);
}

static char *resends(const struct rp_cause *cz)
{
	if (!cz->resent)
		return log_strdup("no SYN resent");
	if (cz->resent < cz->n)
		return rp_xprintf("%ld of them with SYN resends", cz->resent);
	if (cz->retr_min == cz->retr_max)
		return rp_xprintf("%ld SYN resend%s each", cz->retr_max, cz->retr_max == 1 ? "" : "s");
	return rp_xprintf("%ld to %ld SYN resends each", cz->retr_min, cz->retr_max);
}

void rp_cause_conn_evidence(const struct rp_state *st, struct rp_cause *cz, int ci, int max)
{
	const struct rp_conn *c = &st->join.conns[ci];
	char a[24];

	(void)max;
	rp_evid_add(cz, &c->loc, rp_xprintf("connect by pid %ld, started %s: %.1f ms, %d SYN resend%s",
				      c->pid, rp_clock(c->start, a), c->ms, c->retr < 0 ? 0 : c->retr,
				      c->retr == 1 ? "" : "s"));
}

static void busy_evidence(const struct rp_state *st, struct rp_cause *cz, const struct rp_busy *b)
{
	const struct rp_listener *l = &st->lsts[b->lst];
	char a[24], z[24];

	if (b->merged && b->kind != RP_BUSY_OVERFLOW)
		rp_evid_add(cz, &b->loc, rp_xprintf("the first of the accepts by %s[%ld] from %s to %s that %s",
					      l->comm, l->pid, rp_clock(b->t0, z), rp_clock(b->t1, a),
					      b->kind == RP_BUSY_FULL ? "found the queue full" :
					      "took connections left waiting unaccepted"));
	else if (b->kind == RP_BUSY_FULL)
		rp_evid_add(cz, &b->loc, rp_xprintf("accept by %s[%ld] at %s found the queue full (%ld waiting); "
					      "that connection had waited %.0f ms unaccepted",
					      l->comm, l->pid, rp_clock(b->t1, a), b->n, (b->t1 - b->t0) * 1000));
	else if (b->kind == RP_BUSY_NOACCEPT && b->n == 1)
		rp_evid_add(cz, &b->loc, rp_xprintf("accept by %s[%ld] at %s, the first since %s (every accept is "
					      "logged at trace)", l->comm, l->pid, rp_clock(b->t1, a), rp_clock(b->t0, z)));
	else if (b->kind == RP_BUSY_NOACCEPT)
		rp_evid_add(cz, &b->loc, rp_xprintf("accept by %s[%ld] at %s: the connection had waited %.0f ms "
					      "unaccepted (since %s)", l->comm, l->pid, rp_clock(b->t1, a),
					      (b->t1 - b->t0) * 1000, rp_clock(b->t0, z)));
	else
		rp_evid_add(cz, &b->loc, rp_xprintf("listener_stats of %s[%ld] at %s: ListenOverflows +%ld since %s "
					      "(namespace-wide)", l->comm, l->pid, rp_clock(b->t1, a), b->n,
					      rp_clock(b->t0, z)));
}

/* The listener side of a joined cause, from the samples its connects used. */
void rp_cause_listener_side(struct rp_state *st, struct rp_cause *cz, const unsigned char *used,
			  double first_drop)
{
	const struct rp_listener *l = &st->lsts[cz->lst];
	long peak = 0;
	size_t i;
	int quoted = 0;

	for (i = 0; i < st->join.nbusy; i++) {
		const struct rp_busy *b = &st->join.busy[i];

		if (!used[i])
			continue;
		if (b->kind == RP_BUSY_FULL) {
			if (!cz->have_full || b->t1 < cz->full_t0)
				cz->full_t0 = b->t1;
			if (b->t1 > cz->full_t1)
				cz->full_t1 = b->t1;
			cz->have_full = 1;
			if (b->n > peak)
				peak = b->n;
		} else if (b->kind == RP_BUSY_NOACCEPT) {
			if (b->t1 - b->t0 > cz->gap_s) {
				cz->gap_exact = b->n == 1;
				cz->gap_s = b->t1 - b->t0;
				cz->gap_t0 = b->t0;
				cz->gap_t1 = b->t1;
			}
			cz->have_gap = 1;
		} else {
			if (!cz->have_overflow || b->t0 < cz->ov_t0)
				cz->ov_t0 = b->t0;
			if (b->t1 > cz->ov_t1)
				cz->ov_t1 = b->t1;
			cz->overflows += b->n;
			cz->have_overflow = 1;
		}
	}
	/* The queue was full from the first SYN it dropped. */
	if (cz->have_full && first_drop > 0 && first_drop < cz->full_t0)
		cz->full_t0 = first_drop;
	cz->backlog = l->have_backlog_eff ? l->backlog_effective : -1;
	if (cz->backlog < 0)
		log_long(l->stats, "backlog", &cz->backlog);
	cz->room = l->queue_capacity > 0 ? l->queue_capacity : cz->backlog >= 0 ? cz->backlog + 1 : -1;
	/* Room for what waited plus the most connects that found no room at
	 * one moment (the shim's own rule, 2 x peak, as a floor). */
	if (cz->room > 0) {
		long w = peak > cz->room ? peak : cz->room;

		cz->need = 2 * w;
		if (w + cz->at_once - 1 > cz->need)
			cz->need = w + cz->at_once - 1;
	}
	/* One figure for one fix: the listener's own (its advice and
	 * listen_overflows name it) when that is more. */
	cz->need_own = -1;
	if (l->stats && log_long(l->stats, "backlog_needed", &cz->need_own) && cz->need_own > cz->need)
		cz->need = cz->need_own;
	if (l->have_listen_loc)
		rp_evid_add(cz, &l->listen_loc, rp_xprintf("listen by %s[%ld] on %s: backlog %ld, room %ld", l->comm,
						     l->pid, l->local ? l->local : "?", cz->backlog, cz->room));
	for (i = 0; i < st->join.nbusy && quoted < 4; i++)
		if (used[i] && st->join.busy[i].kind != RP_BUSY_OVERFLOW) {
			busy_evidence(st, cz, &st->join.busy[i]);
			quoted++;
		}
	for (i = 0; i < st->join.nbusy; i++)
		if (used[i] && st->join.busy[i].kind == RP_BUSY_OVERFLOW) {
			busy_evidence(st, cz, &st->join.busy[i]);
			break;
		}
}

void rp_cause_sentence_joined(const struct rp_state *st, struct rp_cause *cz)
{
	const struct rp_listener *l = &st->lsts[cz->lst];
	char *w = who(cz), *r = resends(cz), *full = NULL, *gap = NULL, *ov = NULL;
	char a[24], b[24], nb[80] = "";
	const char *addr = st->join.addrs[cz->addr];

	if (cz->have_full)
		full = rp_xprintf("was full from %s to %s UTC", rp_clock(cz->full_t0, a), rp_clock(cz->full_t1, b));
	if (cz->have_gap)
		gap = rp_xprintf("%s for %.2f s (%s to %s UTC)",
			      cz->gap_exact ? "did not accept" : "let connections wait unaccepted", cz->gap_s,
			      rp_clock(cz->gap_t0, a), rp_clock(cz->gap_t1, b));
	if (cz->have_overflow && !full)
		ov = rp_xprintf("overflowed (ListenOverflows +%ld in its namespace, %s to %s UTC)", cz->overflows,
			     rp_clock(cz->ov_t0, a), rp_clock(cz->ov_t1, b));
	if (cz->need > 0)
		snprintf(nb, sizeof nb, "raise its backlog to at least %ld, or accept faster", cz->need);
	cz->sentence = rp_xprintf("%ld connect%s from %s to %s took %.1f s in all (%s) while %s[%ld]'s listener at %s "
			       "(backlog %ld, room %ld) %s%s%s%s%s; %s.",
			       cz->n, cz->n == 1 ? "" : "s", w, addr, cz->secs, r, l->comm, l->pid,
			       l->local ? l->local : addr, cz->backlog, cz->room, full ? full : "",
			       full && gap ? " and " : "", gap ? gap : "", (full || gap) && ov ? " and " : "",
			       ov ? ov : "", *nb ? nb : "accept faster or raise its backlog");
	free(w);
	free(r);
	free(full);
	free(gap);
	free(ov);
}

void rp_cause_sentence_unjoined(const struct rp_state *st, struct rp_cause *cz)
{
	char *w = who(cz), *r = resends(cz), *why;
	char a[24], b[24];
	const char *addr = st->join.addrs[cz->addr];

	if (cz->lst >= 0) {
		const struct rp_listener *l = &st->lsts[cz->lst];

		why = rp_xprintf("%s[%ld]'s listener at %s is among these logs, but none of its lines %sshows its queue "
			      "full, a connection left unaccepted or ListenOverflows rising when these SYNs went "
			      "unanswered", l->comm, l->pid, l->local ? l->local : addr,
			      st->join.busy_over ? "the report kept (it keeps the first 4096 signs of trouble) " : "");
		cz->decide = rp_xprintf("What would decide it: ListenOverflows and TCPReqQFullDrop where it runs "
				     "(nstat -az TcpExtListenOverflows TcpExtTCPReqQFullDrop), its accept lines at "
				     "SOCKAUDIT_LEVEL=trace, or a capture on both ends (SYNs lost on the way).");
	} else {
		if (cz->lst_elsewhere)
			why = rp_xprintf("no listener at %s in the clients' network namespace and host is among these "
				      "logs (the %ld listener%s at that address in another namespace or on another "
				      "host %s not the one these connects reached)", addr, cz->lst_elsewhere,
				      cz->lst_elsewhere == 1 ? "" : "s", cz->lst_elsewhere == 1 ? "is" : "are");
		else if (cz->lst_no_identity)
			why = rp_xprintf("a listener at %s is among these logs, but a log without the init line's netns, "
				      "nodename and boot_id cannot say it is the one these connects reached", addr);
		else
			why = rp_xprintf("the listener at %s is not among these logs", addr);
		cz->decide = rp_xprintf("What would decide it: audit the program listening at %s (sockaudit -o FILE "
				     "-- PROGRAM there; its accept and listener_stats lines say whether its queue was "
				     "full), or check ListenOverflows where it runs (nstat -az TcpExtListenOverflows); "
				     "SYNs lost on the way leave both quiet.", addr);
	}
	cz->sentence = rp_xprintf("%ld connect%s from %s to %s took %.1f s in all (%s), %s to %s UTC; %s.",
			       cz->n, cz->n == 1 ? "" : "s", w, addr, cz->secs, r, rp_clock(cz->t0, a),
			       rp_clock(cz->t1, b), why);
	free(w);
	free(r);
	free(why);
}

/* A finding every logged line of which a cause took in is not ranked
 * again on its own. */
static int absorbed(const struct rp_state *st, const struct rp_finding *f)
{
	long n = 0;
	size_t i;
	int k, c;

	if (!f->logged)
		return 0;
	if (!strcmp(f->code, "slow_connect") || !strcmp(f->code, "syn_retransmitted")) {
		int slow = f->code[0] == 's' && f->code[1] == 'l';

		for (i = 0; i < st->join.nconns; i++)
			if (st->join.conns[i].counted && (slow ? st->join.conns[i].f_slow : st->join.conns[i].f_synr))
				n++;
		return n == f->logged;
	}
	if (strcmp(f->code, "accept_queue_full") && strcmp(f->code, "listen_overflows"))
		return 0;
	for (i = 0; i < st->nlsts; i++) {
		int in = 0;

		for (c = 0; c < st->join.ncauses && !in; c++)
			for (k = 0; k < st->join.causes[c].nlsts && st->join.causes[c].joined; k++)
				if ((size_t)st->join.causes[c].lsts[k] == i)
					in = 1;
		if (in)
			n += f->code[0] == 'a' ? st->lsts[i].accept_queue_full : st->lsts[i].overflow_lines;
	}
	return n == f->logged;
}

static int item_worse(const struct rp_state *st, const struct rp_item *a, const struct rp_item *b)
{
	double sa = a->is_cause ? st->join.causes[a->idx].secs : st->finds[a->idx].secs;
	double sb = b->is_cause ? st->join.causes[b->idx].secs : st->finds[b->idx].secs;
	long ca = a->is_cause ? st->join.causes[a->idx].n : st->finds[a->idx].count;
	long cb = b->is_cause ? st->join.causes[b->idx].n : st->finds[b->idx].count;

	/* A connect never accepted is a request that hung until its client
	 * gave up: worse than any wait that ended. */
	if (a->is_cause != b->is_cause || (a->is_cause && st->join.causes[a->idx].unaccepted !=
						   st->join.causes[b->idx].unaccepted)) {
		int ua = a->is_cause && st->join.causes[a->idx].unaccepted;
		int ub = b->is_cause && st->join.causes[b->idx].unaccepted;

		if (ua != ub)
			return ua;
	}
	if (sa != sb)
		return sa > sb;
	if (a->is_cause != b->is_cause)
		return a->is_cause;
	return ca > cb;
}

void rp_rank_items(struct rp_state *st)
{
	struct rp_item cand;
	size_t i, j, total = (size_t)st->join.ncauses + st->nfinds;

	st->nitems = 0;
	for (i = 0; i < total; i++) {
		size_t at;

		cand.is_cause = i < (size_t)st->join.ncauses;
		cand.idx = cand.is_cause ? i : i - (size_t)st->join.ncauses;
		if (!cand.is_cause && (st->finds[cand.idx].count <= 0 || absorbed(st, &st->finds[cand.idx])))
			continue;
		at = st->nitems;
		while (at > 0 && item_worse(st, &cand, &st->items[at - 1]))
			at--;
		if (at >= RP_TOP_MAX)
			continue;
		if (st->nitems < RP_TOP_MAX)
			st->nitems++;
		for (j = st->nitems - 1; j > at; j--)
			st->items[j] = st->items[j - 1];
		st->items[at] = cand;
	}
}

