/*
 * report_join.c: the report's causes. A client's slow connects to an
 * address are joined to the listener at that address, in the same network
 * namespace of the same boot of the same host (the init line's netns,
 * nodename, boot_id), and matched in time: each SYN the client had to
 * resend was dropped at a known moment (the kernel's SYN schedule from the
 * init line), and the listener's lines say when its queue was full, when a
 * connection sat unaccepted, when ListenOverflows rose. One sentence per
 * cause, with the lines it stands on.
 *
 * It never blames a listener in another namespace or on another host: a
 * loopback address joins only within one namespace, and across namespaces
 * and hosts only an exact, non-loopback address joins (what the client
 * connected to is what the server listened on; NAT and load balancers in
 * between hide that, and such connects stay unexplained). Bounded: at most
 * RP_CONNS_MAX connect lines and RP_BUSY_MAX listener samples are kept.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* A SYN resent within this much of a listener's sign of trouble is taken
 * as dropped by it: listener samples carry jiffy (1-10 ms) and sampling
 * imprecision, and a resend timer fires up to a few ms late. */
#define JOIN_SLACK_S 0.25
#define MAX_GROUPS 64

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

const struct rp_proc *rp_proc_find(const struct rp_state *st, long pid)
{
	size_t i;

	for (i = st->nprocs; i-- > 0;)
		if (st->procs[i].pid == pid)
			return &st->procs[i];
	return NULL;
}

/* ---- addresses ------------------------------------------------------------ */

static int addr_port(const char *a)
{
	const char *c = a ? strrchr(a, ':') : NULL;

	return c && c[1] ? atoi(c + 1) : -1;
}

int rp_addr_wildcard(const char *a)
{
	return a && (strncmp(a, "0.0.0.0:", 8) == 0 || strncmp(a, "[::]:", 5) == 0);
}

static int addr_loopback(const char *a)
{
	return a && (strncmp(a, "127.", 4) == 0 || strncmp(a, "[::1]:", 6) == 0 ||
		     strncmp(a, "[::ffff:127.", 12) == 0);
}

/* Whether a connect to PEER reached listener L. SAME: the two are in one
 * namespace of one host. A wildcard listener there takes loopback peers
 * on its port and the address its accepts were made on. */
static int addr_reaches(const char *peer, const struct rp_listener *l, int same)
{
	const char *la = l->local;

	if (!peer || !la || !*la)
		return 0;
	if (!same && addr_loopback(peer))
		return 0;
	if (strcmp(peer, la) == 0)
		return 1;
	if (!rp_addr_wildcard(la) || addr_port(peer) != addr_port(la))
		return 0;
	if (l->accept_local && strcmp(peer, l->accept_local) == 0)
		return 1;
	/* 0.0.0.0 takes IPv4 only; [::] takes both unless IPV6_V6ONLY. */
	if (same && addr_loopback(peer))
		return la[0] == '[' || peer[0] != '[';
	return 0;
}

/* ---- while reading ----------------------------------------------------------- */

static int addr_intern(struct rp_join *j, const char *a)
{
	int i;

	if (!a)
		a = "(peer unknown)";
	if (j->last_addr >= 0 && j->last_addr < j->naddrs && strcmp(j->addrs[j->last_addr], a) == 0)
		return j->last_addr;
	for (i = 0; i < j->naddrs; i++)
		if (strcmp(j->addrs[i], a) == 0)
			return j->last_addr = i;
	if (j->naddrs >= RP_ADDRS_MAX)
		return -1;
	j->addrs[j->naddrs] = rp_xstrdup(a);
	return j->last_addr = j->naddrs++;
}

static int ev_has(const struct rp_ev *ev, const char *code)
{
	size_t i;

	for (i = 0; i < ev->nfindings; i++)
		if (strcmp(ev->findings[i], code) == 0)
			return 1;
	return 0;
}

void rp_join_connect(struct rp_state *st, const struct rp_ev *ev, long pid)
{
	struct rp_join *j = &st->join;
	struct rp_conn *c;
	int addr;

	/* Only timed connects have a place on a time axis. */
	if (!ev->have_connect_ms || !isfinite(ev->connect_ms) || ev->connect_ms < 0 ||
	    ev->connect_ms > 1e9 || !ev->have_ts || !(ev->ts > 1e9))
		return;
	if (j->nconns >= RP_CONNS_MAX || (addr = addr_intern(j, ev->peer)) < 0) {
		j->conns_over++;
		return;
	}
	j->conns = rp_grow(j->conns, &j->capconns, j->nconns, sizeof(*j->conns));
	c = &j->conns[j->nconns++];
	memset(c, 0, sizeof(*c));
	c->end = ev->ts;
	c->ms = ev->connect_ms;
	c->start = ev->ts - ev->connect_ms / 1000.0;
	c->pid = pid;
	c->retr = ev->have_syn_retrans && ev->syn_retrans >= 0 && ev->syn_retrans < 100 ? (int)ev->syn_retrans : -1;
	c->addr = addr;
	c->ok = ev->have_ret && ev->ret == 0 && !ev->err;
	c->f_slow = (unsigned char)ev_has(ev, "slow_connect");
	c->f_synr = (unsigned char)ev_has(ev, "syn_retransmitted");
	c->slow = c->f_slow || c->f_synr || c->retr > 0;
	c->cause = -1;
	c->loc.file = st->cur_file;
	c->loc.line = st->cur_line;
}

void rp_join_busy(struct rp_state *st, size_t lst, int kind, double t0, double t1, long n)
{
	struct rp_join *j = &st->join;
	struct rp_busy *b;

	if (j->nbusy >= RP_BUSY_MAX) {
		j->busy_over++;
		return;
	}
	j->busy = rp_grow(j->busy, &j->capbusy, j->nbusy, sizeof(*j->busy));
	b = &j->busy[j->nbusy++];
	b->t0 = t0 < t1 ? t0 : t1;
	b->t1 = t1;
	b->kind = kind;
	b->n = n;
	b->lst = lst;
	b->loc.file = st->cur_file;
	b->loc.line = st->cur_line;
}

/* ---- places: (netns, nodename, boot_id) ------------------------------------- */

struct places {
	int *of_proc;           /* per st->procs index: place id, -1 unknown */
	char **key;             /* per place */
	int n;
};

static void places_make(const struct rp_state *st, struct places *pl)
{
	size_t i;
	int k;

	pl->of_proc = calloc(st->nprocs + 1, sizeof(int));
	pl->key = calloc(st->nprocs + 1, sizeof(char *));
	pl->n = 0;
	if (!pl->of_proc || !pl->key) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	for (i = 0; i < st->nprocs; i++) {
		const json_t *in = st->procs[i].init;
		const char *node = rp_str(in, "nodename"), *boot = rp_str(in, "boot_id");
		double ns;
		char buf[400];

		pl->of_proc[i] = -1;
		if (!node || !boot || !rp_num(in, "netns", &ns))
			continue;
		snprintf(buf, sizeof buf, "%.0f %s %s", ns, boot, node);
		for (k = 0; k < pl->n && strcmp(pl->key[k], buf) != 0; k++)
			;
		if (k == pl->n)
			pl->key[pl->n++] = rp_xstrdup(buf);
		pl->of_proc[i] = k;
	}
}

static int place_of(const struct rp_state *st, const struct places *pl, long pid)
{
	const struct rp_proc *p = rp_proc_find(st, pid);

	return p ? pl->of_proc[p - st->procs] : -1;
}

static void places_free(struct places *pl)
{
	int k;

	for (k = 0; k < pl->n; k++)
		free(pl->key[k]);
	free(pl->key);
	free(pl->of_proc);
}

/* ---- matching in time ---------------------------------------------------------- */

/* The moments this connect's unanswered SYNs were sent: the first at its
 * start, then each resend but the last (which was answered). */
static int dropped_syns(const struct rp_conn *c, const double *sched, int nsched, double *t, int max)
{
	int k, n = 0;

	for (k = 0; k < c->retr && n < max; k++)
		t[n++] = c->start + (k == 0 ? 0 : k - 1 < nsched ? sched[k - 1] : sched[nsched - 1] * 2);
	return n;
}

static int busy_in(const struct rp_cause *cz, const struct rp_busy *b)
{
	int i;

	for (i = 0; i < cz->nlsts; i++)
		if ((size_t)cz->lsts[i] == b->lst)
			return 1;
	return 0;
}

/* Whether C waited on the listeners of CZ: a SYN it sent went unanswered
 * while one of them showed trouble, or (no resend known) its wait overlaps
 * such a time. Marks the samples and the drop times it used. */
static int conn_matches(struct rp_state *st, struct rp_cause *cz, const struct rp_conn *c,
			const double *sched, int nsched, unsigned char *used, double *first_drop)
{
	double t[16];
	int nd = dropped_syns(c, sched, nsched, t, 16), k, hit = 0;
	size_t i;

	for (i = 0; i < st->join.nbusy; i++) {
		const struct rp_busy *b = &st->join.busy[i];
		int m = 0;

		if (!busy_in(cz, b))
			continue;
		for (k = 0; k < nd; k++)
			if (t[k] >= b->t0 - JOIN_SLACK_S && t[k] <= b->t1 + JOIN_SLACK_S) {
				m = 1;
				if (*first_drop == 0 || t[k] < *first_drop)
					*first_drop = t[k];
			}
		if (!nd && c->start <= b->t1 + JOIN_SLACK_S && c->end >= b->t0 - JOIN_SLACK_S)
			m = 1;
		if (m) {
			used[i] = 1;
			hit = 1;
		}
	}
	return hit;
}

/* ---- causes -------------------------------------------------------------------- */

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...)
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

static void evid_add(struct rp_cause *cz, const struct rp_loc *loc, char *what)
{
	if (cz->nevid >= RP_EVID_MAX) {
		free(what);
		return;
	}
	cz->evid[cz->nevid] = *loc;
	cz->evid_what[cz->nevid++] = what;
}

static void conn_add(struct rp_cause *cz, const struct rp_conn *c)
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
	return rp_xstrdup(buf);
}

static char *resends(const struct rp_cause *cz)
{
	if (!cz->resent)
		return rp_xstrdup("no SYN resent");
	if (cz->resent < cz->n)
		return xprintf("%ld of them with SYN resends", cz->resent);
	if (cz->retr_min == cz->retr_max)
		return xprintf("%ld SYN resend%s each", cz->retr_max, cz->retr_max == 1 ? "" : "s");
	return xprintf("%ld to %ld SYN resends each", cz->retr_min, cz->retr_max);
}

static void conn_evidence(const struct rp_state *st, struct rp_cause *cz, int ci, int max)
{
	const struct rp_conn *c = &st->join.conns[ci];
	char a[24];

	(void)max;
	evid_add(cz, &c->loc, xprintf("connect by pid %ld, started %s: %.1f ms, %d SYN resend%s",
				      c->pid, rp_clock(c->start, a), c->ms, c->retr < 0 ? 0 : c->retr,
				      c->retr == 1 ? "" : "s"));
}

static void busy_evidence(const struct rp_state *st, struct rp_cause *cz, const struct rp_busy *b)
{
	const struct rp_listener *l = &st->lsts[b->lst];
	char a[24], z[24];

	if (b->kind == RP_BUSY_FULL)
		evid_add(cz, &b->loc, xprintf("accept by %s[%ld] at %s found the queue full (%ld waiting); "
					      "that connection had waited %.0f ms unaccepted",
					      l->comm, l->pid, rp_clock(b->t1, a), b->n, (b->t1 - b->t0) * 1000));
	else if (b->kind == RP_BUSY_NOACCEPT && b->n == 1)
		evid_add(cz, &b->loc, xprintf("accept by %s[%ld] at %s, the first since %s (every accept is "
					      "logged at trace)", l->comm, l->pid, rp_clock(b->t1, a), rp_clock(b->t0, z)));
	else if (b->kind == RP_BUSY_NOACCEPT)
		evid_add(cz, &b->loc, xprintf("accept by %s[%ld] at %s: the connection had waited %.0f ms "
					      "unaccepted (since %s)", l->comm, l->pid, rp_clock(b->t1, a),
					      (b->t1 - b->t0) * 1000, rp_clock(b->t0, z)));
	else
		evid_add(cz, &b->loc, xprintf("listener_stats of %s[%ld] at %s: ListenOverflows +%ld since %s "
					      "(namespace-wide)", l->comm, l->pid, rp_clock(b->t1, a), b->n,
					      rp_clock(b->t0, z)));
}

/* The listener side of a joined cause, from the samples its connects used. */
static void listener_side(struct rp_state *st, struct rp_cause *cz, const unsigned char *used,
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
		rp_long(l->stats, "backlog", &cz->backlog);
	cz->room = l->queue_capacity > 0 ? l->queue_capacity : cz->backlog >= 0 ? cz->backlog + 1 : -1;
	/* Room for what waited plus the connects that found no room at once
	 * (the shim's own rule, 2 x peak, as a floor). */
	if (cz->room > 0) {
		long w = peak > cz->room ? peak : cz->room;

		cz->need = 2 * w;
		if (w + cz->resent - 1 > cz->need)
			cz->need = w + cz->resent - 1;
	}
	if (l->have_listen_loc)
		evid_add(cz, &l->listen_loc, xprintf("listen by %s[%ld] on %s: backlog %ld, room %ld", l->comm,
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

static void sentence_joined(const struct rp_state *st, struct rp_cause *cz)
{
	const struct rp_listener *l = &st->lsts[cz->lst];
	char *w = who(cz), *r = resends(cz), *full = NULL, *gap = NULL, *ov = NULL;
	char a[24], b[24], nb[80] = "";
	const char *addr = st->join.addrs[cz->addr];

	if (cz->have_full)
		full = xprintf("was full from %s to %s UTC", rp_clock(cz->full_t0, a), rp_clock(cz->full_t1, b));
	if (cz->have_gap)
		gap = xprintf("%s for %.2f s (%s to %s UTC)",
			      cz->gap_exact ? "did not accept" : "left a connection unaccepted", cz->gap_s,
			      rp_clock(cz->gap_t0, a), rp_clock(cz->gap_t1, b));
	if (cz->have_overflow && !full)
		ov = xprintf("overflowed (ListenOverflows +%ld in its namespace, %s to %s UTC)", cz->overflows,
			     rp_clock(cz->ov_t0, a), rp_clock(cz->ov_t1, b));
	if (cz->need > 0)
		snprintf(nb, sizeof nb, "raise its backlog to at least %ld, or accept faster", cz->need);
	cz->sentence = xprintf("%ld connect%s from %s to %s took %.1f s in all (%s) while %s[%ld]'s listener at %s "
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

static void sentence_unjoined(const struct rp_state *st, struct rp_cause *cz)
{
	char *w = who(cz), *r = resends(cz), *why;
	char a[24], b[24];
	const char *addr = st->join.addrs[cz->addr];

	if (cz->lst >= 0) {
		const struct rp_listener *l = &st->lsts[cz->lst];

		why = xprintf("%s[%ld]'s listener at %s is among these logs, but none of its lines shows its queue "
			      "full, a connection left unaccepted or ListenOverflows rising when these SYNs went "
			      "unanswered", l->comm, l->pid, l->local ? l->local : addr);
		cz->decide = xprintf("What would decide it: ListenOverflows and TCPReqQFullDrop where it runs "
				     "(nstat -az TcpExtListenOverflows TcpExtTCPReqQFullDrop), its accept lines at "
				     "SOCKAUDIT_LEVEL=trace, or a capture on both ends (SYNs lost on the way).");
	} else {
		if (cz->lst_elsewhere)
			why = xprintf("no listener at %s in the clients' network namespace and host is among these "
				      "logs (%ld at that address elsewhere, in another namespace or on another host, "
				      "are not the one these connects reached)", addr, cz->lst_elsewhere);
		else if (cz->lst_no_identity)
			why = xprintf("a listener at %s is among these logs, but a log without the init line's netns, "
				      "nodename and boot_id cannot say it is the one these connects reached", addr);
		else
			why = xprintf("the listener at %s is not among these logs", addr);
		cz->decide = xprintf("What would decide it: audit the program listening at %s (sockaudit -o FILE "
				     "-- PROGRAM there; its accept and listener_stats lines say whether its queue was "
				     "full), or check ListenOverflows where it runs (nstat -az TcpExtListenOverflows); "
				     "SYNs lost on the way leave both quiet.", addr);
	}
	cz->sentence = xprintf("%ld connect%s from %s to %s took %.1f s in all (%s), %s to %s UTC; %s.",
			       cz->n, cz->n == 1 ? "" : "s", w, addr, cz->secs, r, rp_clock(cz->t0, a),
			       rp_clock(cz->t1, b), why);
	free(w);
	free(r);
	free(why);
}

/* ---- after the last line -------------------------------------------------------- */

struct group {
	int addr, place;
	double secs;
};

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return x->secs != y->secs ? (x->secs < y->secs ? 1 : -1) : x->addr - y->addr;
}

static struct rp_cause *cause_new(struct rp_state *st, const struct group *g)
{
	struct rp_cause *cz;

	if (st->join.ncauses >= RP_CAUSES_MAX) {
		st->join.causes_over++;
		return NULL;
	}
	cz = &st->join.causes[st->join.ncauses++];
	memset(cz, 0, sizeof(*cz));
	cz->addr = g->addr;
	cz->place = g->place;
	cz->lst = -1;
	cz->retr_min = -1;
	return cz;
}

/* The listeners at the group's address in its place, and how many at
 * that address are elsewhere. */
static void find_listeners(struct rp_state *st, const struct places *pl, const struct group *g,
			   struct rp_cause *cz)
{
	const char *peer = st->join.addrs[g->addr];
	size_t i;

	for (i = 0; i < st->nlsts; i++) {
		const struct rp_listener *l = &st->lsts[i];
		int lp = place_of(st, pl, l->pid), same = g->place >= 0 && lp == g->place;

		if (g->place < 0 || lp < 0) {
			if (addr_reaches(peer, l, 1))
				cz->lst_no_identity++;
			continue;
		}
		if (addr_reaches(peer, l, same)) {
			if (cz->nlsts < RP_CAUSE_LSTS)
				cz->lsts[cz->nlsts++] = (long)i;
		} else if (!same && addr_reaches(peer, l, 1)) {
			cz->lst_elsewhere++;
		}
	}
	/* The one named: the socket listen() was called on (it has the backlog). */
	for (i = 0; i < (size_t)cz->nlsts && cz->lst < 0; i++)
		if (st->lsts[cz->lsts[i]].have_backlog_eff)
			cz->lst = cz->lsts[i];
	if (cz->lst < 0 && cz->nlsts)
		cz->lst = cz->lsts[0];
}

static void copy_listeners(struct rp_cause *to, const struct rp_cause *from)
{
	memcpy(to->lsts, from->lsts, sizeof(to->lsts));
	to->nlsts = from->nlsts;
	to->lst = from->lst;
	to->lst_elsewhere = from->lst_elsewhere;
	to->lst_no_identity = from->lst_no_identity;
}

static void one_group(struct rp_state *st, const struct places *pl, const struct group *g,
		      const double *sched, int nsched, int *cplace)
{
	struct rp_join *j = &st->join;
	struct rp_cause probe, *cz, *un = NULL;
	int jidx = -1, uidx = -1;
	unsigned char *used = calloc(j->nbusy + 1, 1), *hit = calloc(j->nconns + 1, 1);
	double first_drop = 0;
	size_t i;
	long nhit = 0, nmiss = 0, quoted = 0;

	if (!used || !hit) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	memset(&probe, 0, sizeof(probe));
	probe.lst = -1;
	find_listeners(st, pl, g, &probe);
	for (i = 0; i < j->nconns; i++) {
		const struct rp_conn *c = &j->conns[i];

		if (!c->slow || c->addr != g->addr || cplace[i] != g->place)
			continue;
		hit[i] = probe.nlsts && conn_matches(st, &probe, c, sched, nsched, used, &first_drop);
		if (hit[i])
			nhit++;
		else
			nmiss++;
	}
	if (nhit && (cz = cause_new(st, g)) != NULL) {
		copy_listeners(cz, &probe);
		cz->joined = 1;
		jidx = (int)(cz - j->causes);
		for (i = 0; i < j->nconns; i++)
			if (hit[i]) {
				conn_add(cz, &j->conns[i]);
				j->conns[i].cause = (int)(cz - j->causes);
				j->conns[i].counted = 1;
				if (!cz->comm)
					cz->comm = rp_xstrdup(rp_proc_find(st, j->conns[i].pid) ?
							      rp_proc_find(st, j->conns[i].pid)->comm : "?");
			}
		listener_side(st, cz, used, first_drop);
		for (i = 0; i < j->nconns && quoted < 3; i++)
			if (hit[i]) {
				conn_evidence(st, cz, (int)i, 3);
				quoted++;
			}
		sentence_joined(st, cz);
	}
	if (nmiss && (un = cause_new(st, g)) != NULL) {
		copy_listeners(un, &probe);
		uidx = (int)(un - j->causes);
		quoted = 0;
		for (i = 0; i < j->nconns; i++) {
			struct rp_conn *c = &j->conns[i];

			if (!c->slow || c->addr != g->addr || cplace[i] != g->place || hit[i])
				continue;
			conn_add(un, c);
			c->cause = (int)(un - j->causes);
			c->counted = 1;
			if (!un->comm)
				un->comm = rp_xstrdup(rp_proc_find(st, c->pid) ? rp_proc_find(st, c->pid)->comm : "?");
			if (quoted++ < 4)
				conn_evidence(st, un, (int)i, 4);
		}
		sentence_unjoined(st, un);
	}
	/* The group's other connects are drawn beside its cause. */
	for (i = 0; i < j->nconns; i++)
		if (j->conns[i].cause < 0 && !j->conns[i].slow && j->conns[i].addr == g->addr &&
		    cplace[i] == g->place)
			j->conns[i].cause = jidx >= 0 ? jidx : uidx;
	free(used);
	free(hit);
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

	if (sa != sb)
		return sa > sb;
	if (a->is_cause != b->is_cause)
		return a->is_cause;
	return ca > cb;
}

static void rank_items(struct rp_state *st)
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

void rp_join_finish(struct rp_state *st)
{
	struct rp_join *j = &st->join;
	struct places pl;
	struct group groups[MAX_GROUPS];
	int ng = 0, g, nsched, *cplace = calloc(j->nconns + 1, sizeof(int));
	double sched[8];
	long lin = 0;
	size_t i;

	if (!cplace) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	places_make(st, &pl);
	nsched = rp_syn_schedule(st, sched, 8, &lin);
	if (!nsched)
		for (nsched = 0; nsched < 8; nsched++)
			sched[nsched] = sa_syn_retrans_at_ms(nsched + 1, 0, SA_RTO_MAX_DEFAULT_MS) / 1000.0;
	for (i = 0; i < j->nconns; i++) {
		const struct rp_conn *c = &j->conns[i];

		cplace[i] = place_of(st, &pl, c->pid);
		if (!c->slow)
			continue;
		for (g = 0; g < ng && !(groups[g].addr == c->addr && groups[g].place == cplace[i]); g++)
			;
		if (g == ng) {
			if (ng == MAX_GROUPS) {
				j->causes_over++;
				continue;
			}
			groups[ng].addr = c->addr;
			groups[ng].place = cplace[i];
			groups[ng++].secs = 0;
		}
		groups[g].secs += c->ms / 1000.0;
	}
	qsort(groups, (size_t)ng, sizeof(*groups), group_cmp);
	for (g = 0; g < ng; g++)
		one_group(st, &pl, &groups[g], sched, nsched, cplace);
	free(cplace);
	places_free(&pl);
	rank_items(st);
}

void rp_join_free(struct rp_state *st)
{
	struct rp_join *j = &st->join;
	int i, k;

	for (i = 0; i < j->ncauses; i++) {
		free(j->causes[i].comm);
		free(j->causes[i].sentence);
		free(j->causes[i].decide);
		for (k = 0; k < j->causes[i].nevid; k++)
			free(j->causes[i].evid_what[k]);
	}
	for (i = 0; i < j->naddrs; i++)
		free(j->addrs[i]);
	free(j->conns);
	free(j->busy);
}
