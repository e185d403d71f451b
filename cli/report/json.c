/*
 * report/json.c: `sockaudit report --json`: the report's model as one JSON
 * document, for scripts and tests. It prints the same state the text and
 * HTML views print (the causes with their sentences and evidence, the
 * ranking, listeners, connects, option read-back, findings, processes);
 * nothing here computes a figure of its own.
 */
#include <string.h>

#include "report/report.h"
#include "report/fix.h"

#define SET(o, k, v) json_object_set_new((o), (k), (v))

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *copy_or_null(json_t *v)
{
	return v ? json_incref(v) : json_null();
}

static json_t *ts_or_null(double ts)
{
	return ts > 0 ? json_real(ts) : json_null();
}

static json_t *listener_ref(const struct rp_state *st, long i)
{
	const struct rp_listener *l;
	json_t *o;

	if (i < 0 || (size_t)i >= st->nlsts)
		return json_null();
	l = &st->lsts[i];
	o = json_object();
	SET(o, "pid", json_integer(l->pid));
	SET(o, "comm", str_or_null(l->comm));
	SET(o, "fd", json_integer(l->fd));
	SET(o, "local", str_or_null(l->local));
	return o;
}

/* The lines that show the cause: file, line, what each says. */
static json_t *evidence_json(const struct rp_state *st, const struct rp_cause *cz)
{
	json_t *ev = json_array();
	int k;

	for (k = 0; k < cz->nevid; k++) {
		json_t *e = json_object();

		SET(e, "file", json_string(rp_loc_file(st, &cz->evid[k])));
		SET(e, "line", json_integer(cz->evid[k].line));
		SET(e, "what", json_string(cz->evid_what[k]));
		json_array_append_new(ev, e);
	}
	return ev;
}

/* The timeline's connects: every connect line drawn with this cause. */
static json_t *timeline_connects_json(const struct rp_state *st, int ci)
{
	json_t *conns = json_array();
	size_t i;

	for (i = 0; i < st->join.nconns; i++) {
		const struct rp_conn *c = &st->join.conns[i];
		json_t *e;

		if (c->cause != ci)
			continue;
		e = json_object();
		SET(e, "start", json_real(c->start));
		SET(e, "connect_ms", json_real(c->ms));
		SET(e, "syn_retrans", c->retr >= 0 ? json_integer(c->retr) : json_null());
		SET(e, "pid", json_integer(c->pid));
		SET(e, "counted", json_boolean(c->counted));
		json_array_append_new(conns, e);
	}
	return conns;
}

/* The intervals of the cause's listeners: no accept, queue full, overflows. */
static json_t *timeline_intervals_json(const struct rp_state *st, const struct rp_cause *cz)
{
	json_t *iv = json_array();
	size_t i;
	int k;

	for (i = 0; i < st->join.nbusy && cz->joined; i++) {
		const struct rp_busy *b = &st->join.busy[i];
		static const char *const kind[] = { "no_accept", "queue_full", "listen_overflows" };
		json_t *e;

		for (k = 0; k < cz->nlsts && (size_t)cz->lsts[k] != b->lst; k++)
			;
		if (k == cz->nlsts)
			continue;
		e = json_object();
		SET(e, "kind", json_string(kind[b->kind]));
		SET(e, "from", json_real(b->t0));
		SET(e, "to", json_real(b->t1));
		json_array_append_new(iv, e);
	}
	return iv;
}

static json_t *cause_json(const struct rp_state *st, int ci)
{
	const struct rp_cause *cz = &st->join.causes[ci];
	json_t *o = json_object(), *pids = json_array(), *lst;
	int k;

	SET(o, "kind", json_string(rp_cause_kind(cz)));
	if (cz->unaccepted) {
		SET(o, "completed_connects", json_integer(cz->ok));
		SET(o, "accepts", json_integer(cz->accepts));
	}
	SET(o, "sentence", json_string(cz->sentence));
	if (cz->decide)
		SET(o, "decide", json_string(cz->decide));
	SET(o, "peer", json_string(st->join.addrs[cz->addr]));
	SET(o, "connects", json_integer(cz->n));
	SET(o, "resent", json_integer(cz->resent));
	SET(o, "seconds", json_real(cz->secs));
	SET(o, "from", ts_or_null(cz->t0));
	SET(o, "to", ts_or_null(cz->t1));
	SET(o, "client_comm", str_or_null(cz->comm));
	for (k = 0; k < cz->npids && k < RP_CAUSE_PIDS; k++)
		json_array_append_new(pids, json_integer(cz->pids[k]));
	SET(o, "client_pids", pids);
	SET(o, "client_processes", json_integer(cz->npids));
	lst = listener_ref(st, cz->lst);
	if (json_is_object(lst)) {
		SET(lst, "backlog", cz->backlog >= 0 ? json_integer(cz->backlog) : json_null());
		SET(lst, "room", cz->room >= 0 ? json_integer(cz->room) : json_null());
	}
	SET(o, "listener", lst);
	SET(o, "listeners_elsewhere", json_integer(cz->lst_elsewhere));
	if (cz->joined) {
		SET(o, "full_from", cz->have_full ? json_real(cz->full_t0) : json_null());
		SET(o, "full_to", cz->have_full ? json_real(cz->full_t1) : json_null());
		SET(o, "no_accept_s", cz->have_gap ? json_real(cz->gap_s) : json_null());
		SET(o, "listen_overflows", cz->have_overflow ? json_integer(cz->overflows) : json_null());
		SET(o, "backlog_needed", cz->need > 0 ? json_integer(cz->need) : json_null());
	}
	SET(o, "evidence", evidence_json(st, cz));
	SET(o, "timeline_connects", timeline_connects_json(st, ci));
	SET(o, "timeline_intervals", timeline_intervals_json(st, cz));
	return o;
}

static json_t *finding_json(const struct rp_finding *f)
{
	json_t *o = json_object();

	SET(o, "code", json_string(f->code));
	SET(o, "count", json_integer(f->count));
	SET(o, "logged", json_integer(f->logged));
	SET(o, "seconds", json_real(f->secs));
	SET(o, "first", ts_or_null(f->first_ts));
	SET(o, "last", ts_or_null(f->last_ts));
	SET(o, "text", str_or_null(f->text));
	SET(o, "example", f->msg && f->msg_single ? json_string(f->msg) : json_null());
	return o;
}

static json_t *listeners_json(const struct rp_state *st)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < st->nlsts; i++) {
		const struct rp_listener *l = &st->lsts[i];
		json_t *o = listener_ref(st, (long)i);

		SET(o, "backlog_requested", l->have_backlog_req ? json_integer(l->backlog_requested) : json_null());
		SET(o, "backlog_effective", l->have_backlog_eff ? json_integer(l->backlog_effective) : json_null());
		SET(o, "somaxconn", l->have_somaxconn ? json_integer(l->somaxconn) : json_null());
		SET(o, "queue_capacity", l->queue_capacity > 0 ? json_integer(l->queue_capacity) : json_null());
		SET(o, "defer_requested_s", l->have_defer_req ? json_real(l->defer_req_s) : json_null());
		SET(o, "defer_effective_s", l->have_defer_eff ? json_real(l->defer_eff_s) : json_null());
		SET(o, "accepts_logged", json_integer(l->accepts_logged));
		SET(o, "accept_queue_full_logged", json_integer(l->accept_queue_full));
		SET(o, "stats", l->stats ? json_incref(l->stats) : json_null());
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *connects_json(const struct rp_state *st)
{
	const struct rp_connects *c = &st->conn;
	json_t *o = json_object(), *hist = json_object(), *peers = json_array();
	size_t i;
	int b;

	SET(o, "logged", json_integer(c->logged));
	SET(o, SA_OUTCOME_OK, json_integer(c->ok));
	SET(o, SA_OUTCOME_FAILED, json_integer(c->failed));
	SET(o, SA_OUTCOME_PENDING, json_integer(c->pending));
	SET(o, SA_OUTCOME_ABANDONED, json_integer(c->abandoned));
	SET(o, SA_OUTCOME_INTERRUPTED, json_integer(c->interrupted));
	SET(o, "by_errno", json_incref(c->by_errno));
	for (b = 0; b < SA_CONN_NBUCKETS; b++)
		SET(hist, sa_conn_bucket_names[b],
		    json_integer(c->have_sum_hist ? c->sum_hist[b] : c->hist[b]));
	SET(o, "hist", hist);
	SET(o, "hist_from", json_string(c->have_sum_hist ? "summaries" : "connect lines"));
	SET(o, "syn_retrans_total", c->have_syn_retrans_total ? json_integer(c->syn_retrans_total) : json_null());
	for (i = 0; i < st->npeers; i++) {
		json_t *p = json_object();

		SET(p, "peer", json_string(st->peers[i].peer));
		SET(p, "connects", json_integer(st->peers[i].n));
		SET(p, SA_OUTCOME_OK, json_integer(st->peers[i].ok));
		SET(p, SA_OUTCOME_FAILED, json_integer(st->peers[i].failed));
		SET(p, "seconds", json_real(st->peers[i].secs));
		json_array_append_new(peers, p);
	}
	SET(o, "peers", peers);
	SET(o, "lines_not_kept", json_integer(st->join.conns_over));
	return o;
}

/* What was read: lines, events, what was skipped and why. */
static json_t *input_json(const struct rp_state *st)
{
	json_t *input = json_object();

	SET(input, "lines", json_integer(st->lines));
	SET(input, "events", json_integer(st->events));
	SET(input, "skipped", json_integer(st->skipped));
	SET(input, "too_long", json_integer(st->too_long));
	SET(input, "not_object", json_integer(st->not_object));
	SET(input, "events_by_type", json_incref(st->counts));
	SET(input, "newest_schema", st->schema_max > 0 ? json_real(st->schema_max) : json_null());
	return input;
}

/* "Fix first": the causes and findings in the order the report ranks them. */
static json_t *fix_first_json(const struct rp_state *st)
{
	json_t *top = json_array();
	size_t i;

	for (i = 0; i < st->nitems; i++) {
		json_t *it = json_object();

		SET(it, "rank", json_integer((json_int_t)i + 1));
		if (st->items[i].is_cause) {
			SET(it, "cause", json_integer((json_int_t)st->items[i].idx));
			SET(it, "sentence", json_string(st->join.causes[st->items[i].idx].sentence));
		} else {
			SET(it, "finding", json_string(st->finds[st->items[i].idx].code));
		}
		SET(it, "fix", rp_fix_json(st, i));
		json_array_append_new(top, it);
	}
	return top;
}

/* Each option set, requested against what the kernel read back. */
static json_t *options_json(const struct rp_state *st)
{
	json_t *opts = json_array();
	size_t i;

	for (i = 0; i < st->nopts; i++) {
		json_t *o = json_object();

		SET(o, "sol", json_string(st->opts[i].sol));
		SET(o, "opt", json_string(st->opts[i].opt));
		SET(o, "requested", json_loads(st->opts[i].req, JSON_DECODE_ANY, NULL));
		SET(o, "effective", json_loads(st->opts[i].eff, JSON_DECODE_ANY, NULL));
		SET(o, "count", json_integer(st->opts[i].count));
		SET(o, "differs", json_boolean(st->opts[i].differs));
		json_array_append_new(opts, o);
	}
	return opts;
}

static json_t *option_differences_json(const struct rp_state *st)
{
	json_t *opts = json_array();
	size_t i;

	for (i = 0; i < st->ndiffs; i++) {
		const struct rp_optdiff *d = &st->diffs[i];
		json_t *o = json_object();

		SET(o, "comm", json_string(d->comm));
		SET(o, "sol", json_string(d->sol));
		SET(o, "opt", json_string(d->opt));
		SET(o, "requested", copy_or_null(d->requested));
		SET(o, "effective", copy_or_null(d->effective));
		SET(o, "findings", copy_or_null(d->findings));
		SET(o, "count", json_integer(d->count));
		json_array_append_new(opts, o);
	}
	return opts;
}

static json_t *processes_json(const struct rp_state *st)
{
	json_t *procs = json_array();
	size_t i;

	for (i = 0; i < st->nprocs; i++) {
		const struct rp_proc *p = &st->procs[i];
		json_t *o = json_object();

		SET(o, "pid", json_integer(p->pid));
		SET(o, "comm", str_or_null(p->comm));
		SET(o, "first", ts_or_null(p->first_ts));
		SET(o, "last", ts_or_null(p->last_ts));
		SET(o, "events", json_integer(p->events));
		SET(o, "netns", copy_or_null(json_object_get(p->init, "netns")));
		SET(o, "nodename", copy_or_null(json_object_get(p->init, "nodename")));
		SET(o, "boot_id", copy_or_null(json_object_get(p->init, "boot_id")));
		SET(o, "summary", p->summary ? json_incref(p->summary) : json_null());
		SET(o, "totals", !p->summary && p->totals ? json_incref(p->totals) : json_null());
		json_array_append_new(procs, o);
	}
	return procs;
}

void rp_json(const struct rp_state *st, FILE *out)
{
	json_t *doc = json_object(), *causes = json_array(), *finds = json_array();
	size_t i;
	int c;

	SET(doc, "input", input_json(st));
	for (c = 0; c < st->join.ncauses; c++)
		json_array_append_new(causes, cause_json(st, c));
	SET(doc, "fix_first", fix_first_json(st));
	SET(doc, "causes", causes);
	SET(doc, "causes_not_shown", json_integer(st->join.causes_over));
	SET(doc, "listeners", listeners_json(st));
	SET(doc, "connects", connects_json(st));
	SET(doc, "options", options_json(st));
	SET(doc, "option_differences", option_differences_json(st));
	for (i = 0; i < st->nfinds; i++)
		json_array_append_new(finds, finding_json(&st->finds[i]));
	SET(doc, "findings", finds);
	SET(doc, "processes", processes_json(st));
	json_dumpf(doc, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(doc);
}
