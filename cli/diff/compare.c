/*
 * diff/compare.c: two report models side by side. A listener is matched by
 * its program (comm) and local address, a peer by the address connected
 * to, a finding by its code; the figures are the ones the report already
 * derived (the listener_stats totals, the connect lines kept for the join),
 * folded over the processes that share a key (nginx's workers). Nothing
 * here reads a line or prints.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff.h"

static const char *lst_addr(const struct rp_listener *l)
{
	if (l->local && *l->local)
		return l->local;
	return l->accept_local ? l->accept_local : "(address unknown)";
}

/* A TCP_DEFER_ACCEPT on a socket that never listened is a client socket,
 * as the report's Listeners section says. */
static int lst_real(const struct rp_listener *l)
{
	return l->have_listen || l->stats || l->accepts_logged;
}

static void val_max(struct df_val *v, double x)
{
	if (!v->have || x > v->v)
		v->v = x;
	v->have = 1;
}

static void val_add(struct df_val *v, double x)
{
	v->v = v->have ? v->v + x : x;
	v->have = 1;
}

/* One side's figures of the listeners with this comm and address. */
static long lst_fold(const struct rp_state *st, const char *comm, const char *addr, struct df_val *f)
{
	long procs = 0, n;
	size_t i;

	for (i = 0; i < st->nlsts; i++) {
		const struct rp_listener *l = &st->lsts[i];
		struct log_pct pct;

		if (!lst_real(l) || strcmp(l->comm, comm) || strcmp(lst_addr(l), addr))
			continue;
		procs++;
		if (l->have_backlog_eff)
			val_max(&f[0], (double)l->backlog_effective);
		else if (log_long(l->stats, "backlog", &n))
			val_max(&f[0], (double)n);
		/* The stats line's running totals; the logged accepts when the
		 * listener never had one. */
		if (log_long(l->stats, "queue_full_seen", &n))
			val_add(&f[1], (double)n);
		else if (l->accepts_logged)
			val_add(&f[1], (double)l->accept_queue_full);
		if (log_long(l->stats, "empty_accepts", &n))
			val_add(&f[2], (double)n);
		else if (l->accepts_logged)
			val_add(&f[2], (double)(l->empty_defer_expired + l->empty_syncookie));
		/* Percentiles of several processes do not add: the largest is
		 * what the slowest of them made its clients wait. */
		if (log_pct_get(l->stats, "queue_ms", &pct)) {
			val_max(&f[3], pct.p50);
			val_max(&f[4], pct.p99);
			f[3].n = f[4].n = (f[3].n > 0 ? f[3].n : 0) + (pct.n > 0 ? (long)pct.n : 0);
		}
	}
	return procs;
}

static const struct {
	const char *key, *label;
	enum df_kind kind;
} lst_rows[] = {
	{ "backlog_effective", "backlog (effective)", DF_ROOM },
	{ "queue_full_seen", "queue full seen", DF_COUNT },
	{ "empty_accepts", "empty accepts", DF_COUNT },
	{ "queue_ms_p50", "accept queue wait p50", DF_TIME },
	{ "queue_ms_p99", "accept queue wait p99", DF_TIME },
}, peer_rows[] = {
	{ "failed_connects", "failed connects", DF_COUNT },
	{ "slow_connects", "slow connects", DF_COUNT },
	{ "syn_resends", "SYN resends", DF_COUNT },
	{ "connect_ms_p50", "connect time p50", DF_TIME },
	{ "connect_ms_p99", "connect time p99", DF_TIME },
};
#define NLST_ROWS (sizeof lst_rows / sizeof lst_rows[0])
#define NPEER_ROWS (sizeof peer_rows / sizeof peer_rows[0])

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Nearest rank: the smallest time that at least P of the connects took. */
static double rank(const double *ms, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n);

	return ms[k ? k - 1 : 0];
}

/* One side's figures of the connects to ADDR: failures from the report's
 * per-peer counts, the rest from the connect lines it kept with a time. */
static long peer_fold(const struct rp_state *st, const char *addr, struct df_val *f)
{
	const struct rp_join *j = &st->join;
	double *ms = NULL;
	size_t i, n = 0, cap = 0;
	long lines = -1, slow = 0, resent = 0;

	for (i = 0; i < st->npeers; i++)
		if (strcmp(st->peers[i].peer, addr) == 0) {
			lines = st->peers[i].n;
			val_add(&f[0], (double)st->peers[i].failed);
		}
	if (lines < 0)
		return -1;
	for (i = 0; i < j->nconns; i++) {
		const struct rp_conn *c = &j->conns[i];

		if (strcmp(j->addrs[c->addr], addr) != 0)
			continue;
		ms = log_grow(ms, &cap, n, sizeof(*ms));
		ms[n++] = c->ms;
		slow += c->slow;
		resent += c->retr > 0 ? c->retr : 0;
	}
	val_add(&f[1], (double)slow);
	val_add(&f[2], (double)resent);
	if (n) {
		qsort(ms, n, sizeof(*ms), cmp_double);
		val_add(&f[3], rank(ms, n, 0.50));
		val_add(&f[4], rank(ms, n, 0.99));
		f[3].n = f[4].n = (long)n;
	}
	free(ms);
	return lines;
}

static struct df_item *item_get(struct df_item **arr, size_t *n, size_t *cap, const char *comm,
				const char *addr)
{
	struct df_item *it;
	size_t i;

	for (i = 0; i < *n; i++) {
		it = &(*arr)[i];
		if (!strcmp(it->addr, addr) && (!comm || !strcmp(it->comm, comm)))
			return it;
	}
	*arr = log_grow(*arr, cap, *n, sizeof(**arr));
	it = &(*arr)[(*n)++];
	memset(it, 0, sizeof(*it));
	it->comm = comm ? log_strdup(comm) : NULL;
	it->addr = log_strdup(addr);
	return it;
}

/* The rows of one item from both sides' folded figures: a row neither side
 * has is left out. */
static void item_rows(struct df_item *it, const struct df_val *fa, const struct df_val *fb,
		      size_t nrows, int peer)
{
	size_t r;

	for (r = 0; r < nrows; r++) {
		struct df_row *row;

		if (!fa[r].have && !fb[r].have)
			continue;
		row = &it->rows[it->nrows++];
		row->key = peer ? peer_rows[r].key : lst_rows[r].key;
		row->label = peer ? peer_rows[r].label : lst_rows[r].label;
		row->kind = peer ? peer_rows[r].kind : lst_rows[r].kind;
		row->a = fa[r];
		row->b = fb[r];
		row->verdict = df_judge(row->kind, &row->a, &row->b);
	}
}

static void compare_listeners(struct df_diff *d)
{
	const struct rp_state *sides[2] = { &d->a->st, &d->b->st };
	size_t s, i;

	for (s = 0; s < 2; s++)
		for (i = 0; i < sides[s]->nlsts; i++)
			if (lst_real(&sides[s]->lsts[i]))
				item_get(&d->lsts, &d->nlsts, &d->caplsts, sides[s]->lsts[i].comm,
					 lst_addr(&sides[s]->lsts[i]));
	for (i = 0; i < d->nlsts; i++) {
		struct df_item *it = &d->lsts[i];
		struct df_val fa[NLST_ROWS] = { { 0 } }, fb[NLST_ROWS] = { { 0 } };

		it->procs_a = lst_fold(sides[0], it->comm, it->addr, fa);
		it->procs_b = lst_fold(sides[1], it->comm, it->addr, fb);
		it->on_a = it->procs_a > 0;
		it->on_b = it->procs_b > 0;
		item_rows(it, fa, fb, NLST_ROWS, 0);
	}
}

static void compare_peers(struct df_diff *d)
{
	const struct rp_state *sides[2] = { &d->a->st, &d->b->st };
	size_t s, i;

	for (s = 0; s < 2; s++) {
		for (i = 0; i < sides[s]->npeers; i++)
			item_get(&d->peers, &d->npeers, &d->cappeers, NULL, sides[s]->peers[i].peer);
		d->conns_over += sides[s]->join.conns_over;
	}
	for (i = 0; i < d->npeers; i++) {
		struct df_item *it = &d->peers[i];
		struct df_val fa[NPEER_ROWS] = { { 0 } }, fb[NPEER_ROWS] = { { 0 } };

		it->procs_a = peer_fold(sides[0], it->addr, fa);
		it->procs_b = peer_fold(sides[1], it->addr, fb);
		it->on_a = it->procs_a >= 0;
		it->on_b = it->procs_b >= 0;
		item_rows(it, fa, fb, NPEER_ROWS, 1);
	}
}

static long find_count(const struct rp_state *st, const char *code)
{
	size_t i;

	for (i = 0; i < st->nfinds; i++)
		if (strcmp(st->finds[i].code, code) == 0)
			return st->finds[i].count;
	return 0;
}

/* Every code either side has; a code one side lacks counted 0 there (the
 * logs were read: it did not happen), so it is fixed or worse, not gone. */
static void compare_findings(struct df_diff *d)
{
	const struct rp_state *sides[2] = { &d->a->st, &d->b->st };
	size_t s, i, k;

	for (s = 0; s < 2; s++)
		for (i = 0; i < sides[s]->nfinds; i++) {
			const char *code = sides[s]->finds[i].code;
			struct df_find *f;
			struct df_val a = { 1, 0, -1 }, b = { 1, 0, -1 };

			for (k = 0; k < d->nfinds && strcmp(d->finds[k].code, code); k++)
				;
			if (k < d->nfinds || sides[s]->finds[i].count <= 0)
				continue;
			d->finds = log_grow(d->finds, &d->capfinds, d->nfinds, sizeof(*d->finds));
			f = &d->finds[d->nfinds++];
			f->code = code;
			f->a = find_count(sides[0], code);
			f->b = find_count(sides[1], code);
			a.v = (double)f->a;
			b.v = (double)f->b;
			f->verdict = df_judge(DF_COUNT, &a, &b);
		}
}

void df_compare(struct df_diff *d, struct df_side *a, struct df_side *b)
{
	memset(d, 0, sizeof(*d));
	d->a = a;
	d->b = b;
	compare_listeners(d);
	compare_peers(d);
	compare_findings(d);
}

static void items_free(struct df_item *arr, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(arr[i].comm);
		free(arr[i].addr);
	}
	free(arr);
}

void df_free(struct df_diff *d)
{
	items_free(d->lsts, d->nlsts);
	items_free(d->peers, d->npeers);
	free(d->finds);
	memset(d, 0, sizeof(*d));
}
