/*
 * report/unaccepted.c: connects the kernel completed that no accept()
 * ever took. While a listener's accept queue is full, the kernel drops the
 * client's final handshake ACK (and the data behind it): the client's
 * connect() returned 0, it sent its request, and it waits for a reply until
 * its own timeout (nginx: proxy_read_timeout, 60 s, then a 504). No line of
 * the client says so, and its connect was fast. Both sides' figures do: the
 * clients' completed connects to an address (connect_peers in their totals
 * or summary lines) against the accepts of the listeners there, when the
 * listener's figures are as late as the clients' (or it ended: what it had
 * not accepted by then it never will). One cause per address and place.
 */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

#define GROUPS_MAX 32

struct group {
	const char *peer;       /* points into a figures object */
	int place;
	long ok, pids[RP_CAUSE_PIDS], npids;
	const char *comm;
	double t0, t1;          /* the clients' first line, their figures' time */
	struct rp_loc loc;      /* one client's figures line */
};

static double figures_ts(const struct rp_proc *p)
{
	return p->summary ? p->last_ts : p->totals_ts;
}

static const struct rp_proc *proc_of(const struct rp_state *st, long pid)
{
	size_t i;

	for (i = 0; i < st->nprocs; i++)
		if (st->procs[i].pid == pid)
			return &st->procs[i];
	return NULL;
}

static int collect(const struct rp_state *st, const struct rp_places *pl, struct group *g)
{
	int ng = 0, k;
	size_t i, j;

	for (i = 0; i < st->nprocs; i++) {
		const struct rp_proc *p = &st->procs[i];
		const json_t *arr = json_object_get(rp_figures(p), "connect_peers"), *v;
		int place = rp_place_of(st, pl, p->pid);

		LOG_ARRAY_EACH(arr, j, v) {
			const char *peer = log_str(v, "peer");
			long ok = 0;

			if (!peer || !log_long(v, SA_OUTCOME_OK, &ok) || ok <= 0)
				continue;
			for (k = 0; k < ng && !(g[k].place == place && !strcmp(g[k].peer, peer)); k++)
				;
			if (k == ng) {
				if (ng == GROUPS_MAX)
					continue;
				memset(&g[k], 0, sizeof g[k]);
				g[k].peer = peer;
				g[k].place = place;
				g[k].comm = p->comm;
				g[k].loc = p->fig_loc;
				g[k].t0 = p->first_ts;
				ng++;
			}
			g[k].ok += ok;
			if (g[k].npids < RP_CAUSE_PIDS)
				g[k].pids[g[k].npids] = p->pid;
			g[k].npids++;
			if (p->first_ts > 0 && (g[k].t0 <= 0 || p->first_ts < g[k].t0))
				g[k].t0 = p->first_ts;
			if (figures_ts(p) > g[k].t1)
				g[k].t1 = figures_ts(p);
		}
	}
	return ng;
}

/* The one backlog figure for the listener: the most any cause or its own
 * lines ask, at least twice its room; every cause naming it then says it. */
static void one_figure(struct rp_state *st, struct rp_cause *cz)
{
	const struct rp_listener *l = &st->lsts[cz->lst];
	long need = 0, own = -1;
	int c;

	cz->backlog = l->have_backlog_eff ? l->backlog_effective : -1;
	if (cz->backlog < 0)
		log_long(l->stats, "backlog", &cz->backlog);
	cz->room = l->queue_capacity > 0 ? l->queue_capacity : cz->backlog >= 0 ? cz->backlog + 1 : -1;
	if (cz->room > 0)
		need = 2 * cz->room;
	if (l->stats && log_long(l->stats, "backlog_needed", &own) && own > need)
		need = own;
	cz->need_own = own;
	for (c = 0; c < st->join.ncauses; c++)
		if (st->join.causes[c].joined && st->join.causes[c].lst == cz->lst && st->join.causes[c].need > need)
			need = st->join.causes[c].need;
	cz->need = need;
	for (c = 0; c < st->join.ncauses; c++)
		if (st->join.causes[c].joined && st->join.causes[c].lst == cz->lst)
			st->join.causes[c].need = need;
}

/* The listeners at g's address in its place: their accepts, the most
 * waiting at their last look, and whether their figures cover g's. */
static int listener_side(struct rp_state *st, const struct rp_places *pl, const struct group *g,
			 struct rp_cause *cz, long *waiting)
{
	size_t i;
	int covered = 1;

	*waiting = 0;
	for (i = 0; i < st->nlsts; i++) {
		const struct rp_listener *l = &st->lsts[i];
		const struct rp_proc *lp = proc_of(st, l->pid);
		long acc = 0, w = 0;

		if (g->place < 0 || rp_place_of(st, pl, l->pid) != g->place || !rp_addr_reaches(g->peer, l, 1))
			continue;
		if (!l->stats || !log_long(l->stats, "accepts", &acc))
			return 0;   /* a listener there with no figures: cannot tell */
		cz->accepts += acc;
		/* Still waiting in a live queue is not yet "never". */
		if (!(lp && lp->summary) && log_long(l->stats, "waiting_now", &w) && w > *waiting)
			*waiting = w;
		if (!(lp && lp->summary) && l->stats_ts + 0.001 < g->t1)
			covered = 0;
		if (cz->nlsts < RP_CAUSE_LSTS)
			cz->lsts[cz->nlsts++] = (long)i;
		if (cz->lst < 0 || (!st->lsts[cz->lst].have_backlog_eff && l->have_backlog_eff))
			cz->lst = (long)i;
	}
	return cz->nlsts > 0 && covered;
}

static void sentence(struct rp_state *st, struct rp_cause *cz, const struct group *g)
{
	const struct rp_listener *l = &st->lsts[cz->lst];
	char pids[80] = "";
	size_t off = 0;
	int k;

	for (k = 0; k < cz->npids && k < RP_CAUSE_PIDS && off < sizeof pids; k++)
		off += (size_t)snprintf(pids + off, sizeof pids - off, "%s%ld", k ? "," : "", cz->pids[k]);
	if (cz->npids > RP_CAUSE_PIDS && off < sizeof pids)
		snprintf(pids + off, sizeof pids - off, ",...");
	cz->sentence = rp_xprintf(
		"%ld connect%s that %s[%s] completed to %s %s never accepted: %s[%ld]'s listener there accepted %ld of "
		"%ld. Each client waited for a reply until its own timeout (a hang, then an error such as nginx's "
		"504), with no slow connect to show it. Raise the backlog to at least %ld and accept faster.",
		cz->n, cz->n == 1 ? "" : "s", g->comm ? g->comm : "?", pids, g->peer, cz->n == 1 ? "was" : "were",
		l->comm ? l->comm : "?", l->pid, cz->accepts, cz->ok, cz->need);
	rp_evid_add(cz, &g->loc, rp_xprintf("figures of %s[%ld] and the other clients: %ld completed connects to %s",
					    g->comm ? g->comm : "?", g->pids[0], cz->ok, g->peer));
	if (l->have_listen_loc)
		rp_evid_add(cz, &l->listen_loc, rp_xprintf("listen by %s[%ld] on %s: backlog %ld, room %ld", l->comm,
							    l->pid, l->local ? l->local : "?", cz->backlog, cz->room));
}

void rp_join_unaccepted(struct rp_state *st, const struct rp_places *pl)
{
	struct group g[GROUPS_MAX];
	struct rp_cause probe, *cz;
	int ng = collect(st, pl, g), i, k;
	long waiting;

	for (i = 0; i < ng; i++) {
		memset(&probe, 0, sizeof probe);
		probe.lst = -1;
		probe.ok = g[i].ok;
		if (!listener_side(st, pl, &g[i], &probe, &waiting) || probe.ok - probe.accepts - waiting <= 0)
			continue;
		if (st->join.ncauses >= RP_CAUSES_MAX) {
			st->join.causes_over++;
			continue;
		}
		cz = &st->join.causes[st->join.ncauses++];
		*cz = probe;
		cz->joined = cz->unaccepted = 1;
		cz->n = probe.ok - probe.accepts - waiting;
		cz->addr = -1;
		for (k = 0; k < st->join.naddrs && cz->addr < 0; k++)
			if (!strcmp(st->join.addrs[k], g[i].peer))
				cz->addr = k;
		if (cz->addr < 0 && st->join.naddrs < RP_ADDRS_MAX) {
			st->join.addrs[st->join.naddrs] = log_strdup(g[i].peer);
			cz->addr = st->join.naddrs++;
		}
		if (cz->addr < 0) {
			st->join.ncauses--;
			st->join.causes_over++;
			continue;
		}
		cz->place = g[i].place;
		cz->comm = log_strdup(g[i].comm ? g[i].comm : "?");
		memcpy(cz->pids, g[i].pids, sizeof cz->pids);
		cz->npids = g[i].npids;
		cz->t0 = g[i].t0;
		cz->t1 = g[i].t1;
		cz->retr_min = -1;
		one_figure(st, cz);
		sentence(st, cz, &g[i]);
	}
}

const char *rp_cause_kind(const struct rp_cause *cz)
{
	return cz->unaccepted ? "unaccepted" : cz->joined ? "joined" : "listener_not_joined";
}

const char *rp_cause_title(const struct rp_cause *cz)
{
	return cz->unaccepted ? "connects never accepted" :
	       cz->joined ? "connects waited on a listener" : "slow connects, listener not joined";
}
