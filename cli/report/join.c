/*
 * report/join.c: the report's causes. A client's slow connects to an
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* A SYN resent within this much of a listener's sign of trouble is taken
 * as dropped by it: listener samples carry jiffy (1-10 ms) and sampling
 * imprecision, and a resend timer fires up to a few ms late. */
#define JOIN_SLACK_S 0.25
#define MAX_GROUPS 64

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
	j->addrs[j->naddrs] = log_strdup(a);
	return j->last_addr = j->naddrs++;
}

static int ev_has(const struct log_ev *ev, const char *code)
{
	size_t i;

	for (i = 0; i < ev->nfindings; i++)
		if (strcmp(ev->findings[i], code) == 0)
			return 1;
	return 0;
}

void rp_join_connect(struct rp_state *st, const struct log_ev *ev, long pid)
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
	j->conns = log_grow(j->conns, &j->capconns, j->nconns, sizeof(*j->conns));
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
	size_t i;

	if (t0 > t1)
		t0 = t1;
	/* Half full: a sample that overlaps (queue waits) or nearly touches
	 * (queue-full points) a recent one of the same listener and kind
	 * widens it, so a listener in trouble for minutes stays covered. */
	for (i = j->nbusy; j->nbusy >= RP_BUSY_MAX / 2 && i-- > 0 && i + 16 >= j->nbusy;) {
		b = &j->busy[i];
		if (b->lst != lst || b->kind != kind ||
		    t0 > b->t1 + (kind == RP_BUSY_NOACCEPT ? 0 : JOIN_SLACK_S) || t1 < b->t0)
			continue;
		b->t0 = t0 < b->t0 ? t0 : b->t0;
		b->t1 = t1 > b->t1 ? t1 : b->t1;
		b->n = kind == RP_BUSY_OVERFLOW ? b->n + n : kind == RP_BUSY_FULL ? (n > b->n ? n : b->n) : 0;
		b->merged = 1;
		return;
	}
	if (j->nbusy >= RP_BUSY_MAX) {
		j->busy_over++;
		return;
	}
	j->busy = log_grow(j->busy, &j->capbusy, j->nbusy, sizeof(*j->busy));
	b = &j->busy[j->nbusy++];
	b->merged = 0;
	b->t0 = t0;
	b->t1 = t1;
	b->kind = kind;
	b->n = n;
	b->lst = lst;
	b->loc.file = st->cur_file;
	b->loc.line = st->cur_line;
}

/* ListenOverflows rising between a listener's two listener_stats lines:
 * the namespace's kernel dropped SYNs or handshake ACKs in that window. */
void rp_join_overflows(struct rp_state *st, struct rp_listener *l, const json_t *obj, double ts)
{
	long v;
	json_t *f = json_object_get(obj, "findings"), *x;
	size_t i;

	LOG_ARRAY_EACH(f, i, x)
		if (json_is_string(x) && strcmp(json_string_value(x), "listen_overflows") == 0)
			l->overflow_lines++;
	if (!log_long(json_object_get(obj, "netns_counters"), "ListenOverflows", &v))
		return;
	if (v > l->last_overflows && ts > 1e9) {
		double t0 = l->last_stats_ts > 0 ? l->last_stats_ts : l->have_listen_loc ? l->listen_ts : ts;

		rp_join_busy(st, (size_t)(l - st->lsts), RP_BUSY_OVERFLOW, t0, ts, v - l->last_overflows);
	}
	l->last_overflows = v;
	l->last_stats_ts = ts;
}

/* The most connects of a cause waiting at one moment: how many the
 * queue would have had to hold at once. */
struct edge {
	double t;
	int d;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->d - y->d;     /* an end before a start at the same moment */
}

static long most_at_once(const struct rp_join *j, const unsigned char *hit)
{
	struct edge *e = malloc(2 * (j->nconns + 1) * sizeof(*e));
	size_t i, n = 0;
	long cur = 0, best = 0;

	if (!e)
		return 0;
	for (i = 0; i < j->nconns; i++)
		if (hit[i] && j->conns[i].retr > 0) {
			e[n].t = j->conns[i].start;
			e[n++].d = 1;
			e[n].t = j->conns[i].end;
			e[n++].d = -1;
		}
	qsort(e, n, sizeof(*e), edge_cmp);
	for (i = 0; i < n; i++) {
		cur += e[i].d;
		if (cur > best)
			best = cur;
	}
	free(e);
	return best;
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
static int conn_matches(struct rp_state *st, const unsigned char *mine, const struct rp_conn *c,
			const double *sched, int nsched, unsigned char *used, double *first_drop)
{
	double t[16];
	int nd = dropped_syns(c, sched, nsched, t, 16), k, hit = 0;
	size_t i;

	for (i = 0; i < st->join.nbusy; i++) {
		const struct rp_busy *b = &st->join.busy[i];
		int m = 0;

		if (!mine[i])
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
static void find_listeners(struct rp_state *st, const struct rp_places *pl, const struct group *g,
			   struct rp_cause *cz)
{
	const char *peer = st->join.addrs[g->addr];
	size_t i;

	for (i = 0; i < st->nlsts; i++) {
		const struct rp_listener *l = &st->lsts[i];
		int lp = rp_place_of(st, pl, l->pid), same = g->place >= 0 && lp == g->place;

		if (g->place < 0 || lp < 0) {
			if (rp_addr_reaches(peer, l, 1))
				cz->lst_no_identity++;
			continue;
		}
		if (rp_addr_reaches(peer, l, same)) {
			if (cz->nlsts < RP_CAUSE_LSTS)
				cz->lsts[cz->nlsts++] = (long)i;
		} else if (!same && rp_addr_reaches(peer, l, 1)) {
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

/* The group's slow connects that its listeners explain (hit[]) as one
 * joined cause; returns its index, or -1. */
static int joined_cause(struct rp_state *st, const struct group *g, const struct rp_cause *probe,
			const unsigned char *hit, unsigned char *used, double first_drop)
{
	struct rp_join *j = &st->join;
	struct rp_cause *cz = cause_new(st, g);
	size_t i;
	long quoted = 0;

	if (!cz)
		return -1;
	copy_listeners(cz, probe);
	cz->joined = 1;
	for (i = 0; i < j->nconns; i++)
		if (hit[i]) {
			rp_cause_add_conn(cz, &j->conns[i]);
			j->conns[i].cause = (int)(cz - j->causes);
			j->conns[i].counted = 1;
			if (!cz->comm)
				cz->comm = log_strdup(rp_proc_find(st, j->conns[i].pid) ?
						      rp_proc_find(st, j->conns[i].pid)->comm : "?");
		}
	cz->at_once = most_at_once(j, hit);
	rp_cause_listener_side(st, cz, used, first_drop);
	for (i = 0; i < j->nconns && quoted < 3; i++)
		if (hit[i]) {
			rp_cause_conn_evidence(st, cz, (int)i, 3);
			quoted++;
		}
	rp_cause_sentence_joined(st, cz);
	return (int)(cz - j->causes);
}

/* The group's slow connects that no listener explains, as one cause
 * without a join; returns its index, or -1. */
static int unjoined_cause(struct rp_state *st, const struct group *g, const struct rp_cause *probe,
			  const unsigned char *hit, const int *cplace)
{
	struct rp_join *j = &st->join;
	struct rp_cause *un = cause_new(st, g);
	size_t i;
	long quoted = 0;

	if (!un)
		return -1;
	copy_listeners(un, probe);
	for (i = 0; i < j->nconns; i++) {
		struct rp_conn *c = &j->conns[i];

		if (!c->slow || c->addr != g->addr || cplace[i] != g->place || hit[i])
			continue;
		rp_cause_add_conn(un, c);
		c->cause = (int)(un - j->causes);
		c->counted = 1;
		if (!un->comm)
			un->comm = log_strdup(rp_proc_find(st, c->pid) ? rp_proc_find(st, c->pid)->comm : "?");
		if (quoted++ < 4)
			rp_cause_conn_evidence(st, un, (int)i, 4);
	}
	rp_cause_sentence_unjoined(st, un);
	return (int)(un - j->causes);
}

static void one_group(struct rp_state *st, const struct rp_places *pl, const struct group *g,
		      const double *sched, int nsched, int *cplace)
{
	struct rp_join *j = &st->join;
	struct rp_cause probe;
	int jidx = -1, uidx = -1;
	unsigned char *used = calloc(j->nbusy + 1, 1), *hit = calloc(j->nconns + 1, 1);
	unsigned char *mine = calloc(j->nbusy + 1, 1);
	double first_drop = 0;
	size_t i;
	long nhit = 0, nmiss = 0;

	if (!used || !hit || !mine) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	memset(&probe, 0, sizeof(probe));
	probe.lst = -1;
	find_listeners(st, pl, g, &probe);
	/* The samples of those listeners, once, not per connect. */
	for (i = 0; i < j->nbusy; i++)
		mine[i] = (unsigned char)busy_in(&probe, &j->busy[i]);
	for (i = 0; i < j->nconns; i++) {
		const struct rp_conn *c = &j->conns[i];

		if (!c->slow || c->addr != g->addr || cplace[i] != g->place)
			continue;
		hit[i] = probe.nlsts && conn_matches(st, mine, c, sched, nsched, used, &first_drop);
		if (hit[i])
			nhit++;
		else
			nmiss++;
	}
	if (nhit)
		jidx = joined_cause(st, g, &probe, hit, used, first_drop);
	if (nmiss)
		uidx = unjoined_cause(st, g, &probe, hit, cplace);
	/* The group's other connects are drawn beside its cause. */
	for (i = 0; i < j->nconns; i++)
		if (j->conns[i].cause < 0 && !j->conns[i].slow && j->conns[i].addr == g->addr &&
		    cplace[i] == g->place)
			j->conns[i].cause = jidx >= 0 ? jidx : uidx;
	free(used);
	free(hit);
	free(mine);
}

void rp_join_finish(struct rp_state *st)
{
	struct rp_join *j = &st->join;
	struct rp_places pl;
	struct group groups[MAX_GROUPS];
	int ng = 0, g, nsched, *cplace = calloc(j->nconns + 1, sizeof(int));
	double sched[8];
	long lin = 0;
	size_t i;

	if (!cplace) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	rp_places_make(st, &pl);
	nsched = rp_syn_schedule(st, sched, 8, &lin);
	if (!nsched)
		for (nsched = 0; nsched < 8; nsched++)
			sched[nsched] = sa_syn_retrans_at_ms(nsched + 1, 0, SA_RTO_MAX_DEFAULT_MS) / 1000.0;
	for (i = 0; i < j->nconns; i++) {
		const struct rp_conn *c = &j->conns[i];

		cplace[i] = rp_place_of(st, &pl, c->pid);
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
	rp_join_unaccepted(st, &pl);
	rp_places_free(&pl);
	rp_rank_items(st);
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
