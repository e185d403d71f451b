/*
 * report/model.c: what the text and HTML reports both print, so the two
 * never disagree: typed field access, findings merged and ranked, and the
 * aggregates only a picture needs (connect times per peer on a log scale,
 * each listener's listener_stats intervals, every option value seen).
 * Everything here is bounded: at most RP_PEERS_MAX peers, RP_SERIES_MAX
 * points per listener, RP_OPTS_MAX distinct option values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

struct rp_finding *rp_finding_get(struct rp_state *st, const char *code)
{
	size_t i;

	for (i = 0; i < st->nfinds; i++)
		if (strcmp(st->finds[i].code, code) == 0)
			return &st->finds[i];
	st->finds = log_grow(st->finds, &st->capfinds, st->nfinds, sizeof(*st->finds));
	st->finds[st->nfinds].code = log_strdup(code);
	return &st->finds[st->nfinds++];
}

/* ---- after the last line --------------------------------------------------- */

static int finding_cmp(const void *a, const void *b)
{
	const struct rp_finding *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->code, y->code);
}

/* Impact: seconds lost first (connect time of the flagged connects), then
 * how often it happened. Ties keep the findings order (count, code). */
static int worse(const struct rp_finding *a, const struct rp_finding *b)
{
	if (a->secs != b->secs)
		return a->secs > b->secs;
	return a->count > b->count;
}

static void rank_top(struct rp_state *st)
{
	size_t i, j;

	st->ntop = 0;
	for (i = 0; i < st->nfinds; i++) {
		size_t at = st->ntop;

		if (st->finds[i].count <= 0)
			continue;
		while (at > 0 && worse(&st->finds[i], &st->finds[st->top[at - 1]]))
			at--;
		if (at >= RP_TOP_MAX)
			continue;
		if (st->ntop < RP_TOP_MAX)
			st->ntop++;
		for (j = st->ntop - 1; j > at; j--)
			st->top[j] = st->top[j - 1];
		st->top[at] = i;
	}
}

void rp_finish(struct rp_state *st)
{
	size_t i;
	int b;

	for (i = 0; i < st->nprocs; i++) {
		struct rp_proc *p = &st->procs[i];
		json_t *sumf = json_object_get(rp_figures(p), "findings");
		json_t *hist = json_object_get(rp_figures(p), "connect_hist");
		const char *code;
		json_t *v;
		void *it;
		long n;

		/* The summary counts every finding, logged or suppressed; events
		 * are all we have for a process that died without one. Take the
		 * larger so neither source undercounts. */
		LOG_OBJECT_EACH(p->finding_counts, it, code, v)
			rp_finding_get(st, code)->count += (long)json_integer_value(v);
		LOG_OBJECT_EACH(sumf, it, code, v) {
			long seen = 0;

			if (!json_is_number(v))
				continue;
			log_long(p->finding_counts, code, &seen);
			n = (long)json_number_value(v);
			if (n > seen)
				rp_finding_get(st, code)->count += n - seen;
		}
		for (b = 0; json_is_object(hist) && b < SA_CONN_NBUCKETS; b++) {
			if (!json_object_get(hist, sa_conn_bucket_names[b]))
				continue;
			st->conn.have_sum_hist = 1;
			if (log_long(hist, sa_conn_bucket_names[b], &n) && n > 0)
				st->conn.sum_hist[b] += n;
		}
		for (b = 0; b < SA_OUTCOMES_COUNTED; b++) {
			if (log_long(json_object_get(rp_figures(p), "connects"), sa_outcome_words[b], &n)) {
				st->conn.sum_outcome[b] += n;
				st->conn.have_sum_outcome = 1;
			}
		}
		if (log_long(rp_figures(p), "syn_retrans_total", &n)) {
			st->conn.syn_retrans_total += n;
			st->conn.have_syn_retrans_total = 1;
		}
	}
	for (i = 0; i < st->nfinds; i++) {
		const char *msg = log_str(st->msgs, st->finds[i].code);

		if (msg)
			st->finds[i].msg = log_strdup(msg);
		st->finds[i].msg_single = json_is_true(json_object_get(st->msg_single,
									st->finds[i].code));
	}
	for (i = 0; i < st->nfinds; i++)
		st->finds[i].text = sa_finding_text(st->finds[i].code);
	if (st->nfinds > 1)
		qsort(st->finds, st->nfinds, sizeof(*st->finds), finding_cmp);
	rank_top(st);
	rp_join_finish(st);
}

/* ---- state ------------------------------------------------------------------- */

/* The event-name counts, one per line: a few names, so each name's
 * integer in st->counts is kept at hand instead of looked up (the object
 * keeps its order, which the report prints in). */
void rp_count_event(struct rp_state *st, const char *name)
{
	json_t *v;
	size_t i;

	for (i = 0; i < st->nnames; i++)
		if (strcmp(st->names[i], name) == 0) {
			json_integer_set(st->name_vals[i], json_integer_value(st->name_vals[i]) + 1);
			return;
		}
	log_obj_add(st->counts, name, 1);
	v = json_object_get(st->counts, name);
	if (st->nnames < RP_NAMES_MAX && strlen(name) < sizeof(st->names[0])) {
		strcpy(st->names[st->nnames], name);
		st->name_vals[st->nnames++] = v;
	}
}

void rp_state_init(struct rp_state *st)
{
	memset(st, 0, sizeof(*st));
	st->counts = json_object();
	st->msgs = json_object();
	st->msg_single = json_object();
	st->conn.by_errno = json_object();
	st->warnings = json_object();
}

void rp_state_free(struct rp_state *st)
{
	size_t i;

	for (i = 0; i < st->nprocs; i++) {
		free(st->procs[i].comm);
		json_decref(st->procs[i].init);
		json_decref(st->procs[i].summary);
		json_decref(st->procs[i].totals);
		json_decref(st->procs[i].finding_counts);
	}
	rp_model_free(st);
	rp_join_free(st);
	for (i = 0; i < st->nlsts; i++) {
		free(st->lsts[i].accept_local);
		free(st->lsts[i].series);
		free(st->lsts[i].comm);
		free(st->lsts[i].local);
		json_decref(st->lsts[i].stats);
	}
	for (i = 0; i < st->ndiffs; i++) {
		free(st->diffs[i].comm);
		free(st->diffs[i].sol);
		free(st->diffs[i].opt);
		json_decref(st->diffs[i].requested);
		json_decref(st->diffs[i].effective);
		json_decref(st->diffs[i].findings);
	}
	for (i = 0; i < st->nfinds; i++) {
		free(st->finds[i].code);
		free(st->finds[i].msg);
	}
	free(st->procs);
	free(st->lsts);
	free(st->diffs);
	free(st->finds);
	json_decref(st->counts);
	json_decref(st->msgs);
	json_decref(st->msg_single);
	json_decref(st->conn.by_errno);
	json_decref(st->warnings);
	log_inner_free(&st->inner);
}

/* ---- connects per peer ------------------------------------------------------ */

int rp_logb(double ms)
{
	int b;

	if (!(ms >= 0.1))
		return 0;
	b = 1 + (int)floor(10.0 * log10(ms / 0.1) + 1e-9);
	return b < 1 ? 1 : b > RP_LOGB - 1 ? RP_LOGB - 1 : b;
}

double rp_logb_lo(int b)
{
	return b <= 0 ? 0 : 0.1 * pow(10.0, (b - 1) / 10.0);
}

static struct rp_peer *peer_get(struct rp_state *st, const char *peer)
{
	size_t i;

	if (!peer)
		peer = "(peer unknown)";
	for (i = 0; i < st->npeers; i++)
		if (strcmp(st->peers[i].peer, peer) == 0)
			return &st->peers[i];
	if (st->npeers >= RP_PEERS_MAX) {
		if (!st->other_peers.peer)
			st->other_peers.peer = log_strdup("(other peers)");
		return &st->other_peers;
	}
	st->peers = log_grow(st->peers, &st->cappeers, st->npeers, sizeof(*st->peers));
	st->peers[st->npeers].peer = log_strdup(peer);
	return &st->peers[st->npeers++];
}

void rp_model_connect(struct rp_state *st, const struct log_ev *ev)
{
	struct rp_peer *p = peer_get(st, ev->peer);

	p->n++;
	if (ev->have_ret && ev->ret == 0 && !ev->err)
		p->ok++;
	else if (ev->err && strcmp(ev->err, "EINPROGRESS") != 0 && strcmp(ev->err, "EALREADY") != 0)
		p->failed++;
	if (ev->have_connect_ms && isfinite(ev->connect_ms) && ev->connect_ms >= 0) {
		p->timed++;
		p->hist[rp_logb(ev->connect_ms)]++;
		if (ev->connect_ms < 1e9)
			p->secs += ev->connect_ms / 1000.0;
	}
	if (ev->have_syn_retrans && isfinite(ev->syn_retrans) && ev->syn_retrans >= 0)
		p->retr[ev->syn_retrans >= RP_RETR_MAX - 1 ? RP_RETR_MAX - 1 : (int)ev->syn_retrans]++;
}

/* ---- listener intervals ------------------------------------------------------ */

void rp_model_stats(struct rp_listener *l, const json_t *obj, double ts)
{
	struct rp_point *pt;
	struct log_pct pct;
	size_t i;

	if (!l->stride)
		l->stride = 1;
	if (l->skip++ % l->stride)
		return;
	if (l->nseries == RP_SERIES_MAX) {
		/* Full: keep every other point and take half as many from now on. */
		for (i = 0; i < RP_SERIES_MAX / 2; i++)
			l->series[i] = l->series[2 * i + 1];
		l->nseries = RP_SERIES_MAX / 2;
		l->stride *= 2;
	}
	if (!l->series) {
		l->series = calloc(RP_SERIES_MAX, sizeof(*l->series));
		if (!l->series) {
			fputs("sockaudit report: out of memory\n", stderr);
			exit(1);
		}
	}
	pt = &l->series[l->nseries++];
	memset(pt, 0, sizeof(*pt));
	pt->ts = ts;
	log_long(obj, "accepts", &pt->accepts);
	log_long(obj, "peak_waiting", &pt->peak_waiting);
	log_long(obj, "queue_full_seen", &pt->queue_full);
	log_long(obj, "empty_accepts", &pt->empty);
	if (!log_long(json_object_get(obj, "netns_counters"), "ListenOverflows", &pt->overflows))
		pt->overflows = -1;
	if (log_pct_get(obj, "wait_ms", &pct))
		pt->wait_p99 = pct.p99;
	if (log_pct_get(obj, "queue_ms", &pct))
		pt->queue_p99 = pct.p99;
}

/* ---- every option value ---------------------------------------------------- */

static char *dump(const json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	return s ? s : log_strdup("-");
}

void rp_model_option(struct rp_state *st, const json_t *ev)
{
	const char *sol = log_str(ev, "sol"), *opt = log_str(ev, "opt");
	char *req = dump(json_object_get(ev, "requested")), *eff = dump(json_object_get(ev, "effective"));
	struct rp_opt *o;
	size_t i;

	sol = sol ? sol : "?";
	opt = opt ? opt : "?";
	for (i = 0; i < st->nopts; i++) {
		o = &st->opts[i];
		if (!strcmp(o->sol, sol) && !strcmp(o->opt, opt) && !strcmp(o->req, req) &&
		    !strcmp(o->eff, eff)) {
			o->count++;
			free(req);
			free(eff);
			return;
		}
	}
	if (st->nopts >= RP_OPTS_MAX) {
		st->opts_over++;
		free(req);
		free(eff);
		return;
	}
	st->opts = log_grow(st->opts, &st->capopts, st->nopts, sizeof(*st->opts));
	o = &st->opts[st->nopts++];
	o->sol = log_strdup(sol);
	o->opt = log_strdup(opt);
	o->req = req;
	o->eff = eff;
	o->count = 1;
	o->differs = strcmp(req, "-") && strcmp(eff, "-") && strcmp(req, eff);
}

void rp_model_free(struct rp_state *st)
{
	size_t i;

	for (i = 0; i < st->npeers; i++)
		free(st->peers[i].peer);
	free(st->peers);
	free(st->other_peers.peer);
	for (i = 0; i < st->nopts; i++) {
		free(st->opts[i].sol);
		free(st->opts[i].opt);
		free(st->opts[i].req);
		free(st->opts[i].eff);
	}
	free(st->opts);
}
