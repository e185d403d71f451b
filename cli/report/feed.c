/*
 * report/feed.c: `sockaudit report [FILE...]` reads JSON lines and gathers them
 * per process, per listener, per option difference, per finding.
 *
 * Input is whatever a log holds: lines from several processes interleaved,
 * lines cut short by a crash, other programs' output (`-o -` shares stdout),
 * fields missing or of the wrong type. Nothing here may trust a field's type
 * or a line's length: every access goes through the rp_* getters, and a line
 * that is not one JSON object is counted and skipped.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"

/* Distinct option differences kept; the rest are only counted. */
#define RP_DIFFS_MAX 2000

/* ---- growable arrays ------------------------------------------------------ */

static struct rp_proc *proc_get(struct rp_state *st, long pid, const char *comm)
{
	static size_t last;
	struct rp_proc *p;
	size_t i;

	/* Logs come in runs from one process: try the last hit first. */
	if (last < st->nprocs && st->procs[last].pid == pid) {
		p = &st->procs[last];
		goto found;
	}
	for (i = st->nprocs; i-- > 0;)
		if (st->procs[i].pid == pid) {
			last = i;
			p = &st->procs[i];
			goto found;
		}
	st->procs = log_grow(st->procs, &st->capprocs, st->nprocs, sizeof(*st->procs));
	last = st->nprocs;
	p = &st->procs[st->nprocs++];
	p->pid = pid;
	p->comm = log_strdup(comm ? comm : "?");
	p->finding_counts = json_object();
	return p;
found:
	/* After exec the same pid carries a new comm: keep the latest. */
	if (comm && strcmp(p->comm, comm) != 0) {
		free(p->comm);
		p->comm = log_strdup(comm);
	}
	return p;
}

/* A listener is (pid, fd); a different local address on the same fd means
 * the fd number was reused for another socket. */
static struct rp_listener *lst_get(struct rp_state *st, long pid, long fd, const char *comm,
				   const char *local)
{
	struct rp_listener *l;
	size_t i;

	for (i = st->nlsts; i-- > 0;) {
		l = &st->lsts[i];
		if (l->pid != pid || l->fd != fd)
			continue;
		if (local && l->local && *l->local && strcmp(local, l->local) != 0)
			break;
		if (local && (!l->local || !*l->local)) {
			free(l->local);
			l->local = log_strdup(local);
		}
		return l;
	}
	st->lsts = log_grow(st->lsts, &st->caplsts, st->nlsts, sizeof(*st->lsts));
	l = &st->lsts[st->nlsts++];
	l->pid = pid;
	l->fd = fd;
	l->comm = log_strdup(comm ? comm : "?");
	l->local = local ? log_strdup(local) : NULL;
	return l;
}

/* ---- per event ---------------------------------------------------------------- */

static void on_findings(struct rp_state *st, struct rp_proc *p, const struct log_ev *ev, double ts)
{
	const char *msg = ev->msg;
	size_t i, n = ev->nfindings_all;

	if (!ev->have_findings)
		return;
	for (i = 0; i < ev->nfindings; i++) {
		const char *code = ev->findings[i];
		struct rp_finding *f;

		if (!code || !*code)
			continue;
		log_obj_add(p->finding_counts, code, 1);
		f = rp_finding_get(st, code);
		f->logged++;
		if (ts > 0 && (f->first_ts == 0 || ts < f->first_ts))
			f->first_ts = ts;
		if (ts > f->last_ts)
			f->last_ts = ts;
		if (ev->have_connect_ms && isfinite(ev->connect_ms) && ev->connect_ms > 0 &&
		    ev->connect_ms < 1e9)
			f->secs += ev->connect_ms / 1000.0;
		/* Keep one msg per code, preferring an event that has only this
		 * finding: its msg speaks about this code alone. */
		if (msg && *msg && (!json_object_get(st->msgs, code) ||
				    (n == 1 && !json_is_true(json_object_get(st->msg_single, code))))) {
			json_object_set_new(st->msgs, code, json_string(msg));
			json_object_set_new(st->msg_single, code, json_boolean(n == 1));
		}
	}
}

static int has_finding(const struct log_ev *ev, const char *code)
{
	size_t i;

	for (i = 0; i < ev->nfindings; i++)
		if (strcmp(ev->findings[i], code) == 0)
			return 1;
	return 0;
}

static void on_listen(struct rp_state *st, json_t *ev, long pid, const char *comm, double ts)
{
	long fd = -1, v;
	double d;
	struct rp_listener *l;

	/* Without its fd a listen line cannot be matched to anything. */
	if (!log_long(ev, "fd", &fd))
		return;
	l = lst_get(st, pid, fd, comm, log_str(ev, "local"));
	l->have_listen = 1;
	l->listens++;
	if (!l->have_listen_loc || ts < l->listen_ts) {
		l->listen_ts = ts;
		l->listen_loc.file = st->cur_file;
		l->listen_loc.line = st->cur_line;
		l->have_listen_loc = 1;
	}
	if (log_long(ev, "backlog_requested", &v)) { l->backlog_requested = v; l->have_backlog_req = 1; }
	if (log_long(ev, "backlog_effective", &v)) { l->backlog_effective = v; l->have_backlog_eff = 1; }
	if (log_long(ev, "somaxconn", &v)) { l->somaxconn = v; l->have_somaxconn = 1; }
	if (log_long(ev, "queue_capacity", &v))
		l->queue_capacity = v;
	if (log_num(ev, "defer_accept_s", &d) && !l->have_defer_eff) {
		l->defer_eff_s = d;
		l->have_defer_eff = 1;
	}
}

static void on_setsockopt(struct rp_state *st, json_t *ev, long pid, const char *comm)
{
	const char *sol = log_str(ev, "sol"), *opt = log_str(ev, "opt");
	json_t *req = json_object_get(ev, "requested"), *eff = json_object_get(ev, "effective");
	long ret = 0, fd = -1;
	struct rp_optdiff *d;
	size_t i;

	log_long(ev, "ret", &ret);
	log_long(ev, "fd", &fd);
	if (opt && strcmp(opt, "TCP_DEFER_ACCEPT") == 0 && ret == 0 && fd >= 0) {
		struct rp_listener *l = lst_get(st, pid, fd, comm, log_str(ev, "local"));
		double s;

		if (log_num(ev, "requested_s", &s) || log_num(ev, "requested", &s)) {
			l->defer_req_s = s;
			l->have_defer_req = 1;
		}
		if (log_num(ev, "effective_s", &s)) {
			l->defer_eff_s = s;
			l->have_defer_eff = 1;
		}
	}
	if (ret == 0)
		rp_model_option(st, ev);
	/* A failed call has nothing to read back; absent fields are not a difference. */
	if (ret != 0 || !req || !eff || json_equal(req, eff))
		return;
	for (i = 0; i < st->ndiffs; i++) {
		d = &st->diffs[i];
		if (strcmp(d->comm, comm ? comm : "?") == 0 && strcmp(d->sol, sol ? sol : "?") == 0 &&
		    strcmp(d->opt, opt ? opt : "?") == 0 && json_equal(d->requested, req) &&
		    json_equal(d->effective, eff)) {
			d->count++;
			return;
		}
	}
	if (st->ndiffs >= RP_DIFFS_MAX) {
		st->diffs_over++;
		return;
	}
	st->diffs = log_grow(st->diffs, &st->capdiffs, st->ndiffs, sizeof(*st->diffs));
	d = &st->diffs[st->ndiffs++];
	d->comm = log_strdup(comm ? comm : "?");
	d->sol = log_strdup(sol ? sol : "?");
	d->opt = log_strdup(opt ? opt : "?");
	d->requested = json_incref(req);
	d->effective = json_incref(eff);
	d->findings = json_is_array(json_object_get(ev, "findings")) ?
		json_incref(json_object_get(ev, "findings")) : NULL;
	d->count = 1;
}

static void on_accept(struct rp_state *st, const struct log_ev *ev, const struct rp_proc *p)
{
	long pid = p->pid;
	const char *comm = p->comm;
	long lfd = -1;
	struct rp_listener *l;

	if (!log_ev_long(ev->have_listen_fd, ev->listen_fd, &lfd))
		return;
	l = lst_get(st, pid, lfd, comm, NULL);
	l->accepts_logged++;
	if (has_finding(ev, "empty_accept_defer_expired"))
		l->empty_defer_expired++;
	if (has_finding(ev, "empty_accept_syncookie"))
		l->empty_syncookie++;
	if (has_finding(ev, "accept_queue_full"))
		l->accept_queue_full++;
	/* The address the connection reached: a wildcard listener's real one,
	 * and the only one of a worker that accepts on an inherited listener
	 * before its first listener_stats line. */
	if (ev->local && !l->accept_local && (!l->local || rp_addr_wildcard(l->local)))
		l->accept_local = log_strdup(ev->local);
	/* The listener's side of a join: a connection that sat unaccepted
	 * for queue_ms, and an accept that found the queue full. */
	if (ev->have_ts && ev->ts > 1e9) {
		double q = ev->have_queue_ms && ev->queue_ms > 0 && ev->queue_ms < 1e9 ? ev->queue_ms / 1000 : 0;
		int full = has_finding(ev, "accept_queue_full") ||
			(ev->have_queue_len && ev->have_queue_capacity && ev->queue_capacity > 0 &&
			 ev->queue_len + 1 >= ev->queue_capacity);

		if (q >= 0.1)
			rp_join_busy(st, (size_t)(l - st->lsts), RP_BUSY_NOACCEPT, ev->ts - q, ev->ts, 0);
		/* At trace every accept is logged: when the process that called
		 * listen() is the one accepting, the time since its previous
		 * accept is a time it did not accept at all. */
		if (p->trace && l->have_listen_loc) {
			double last = l->last_accept_ts > 0 ? l->last_accept_ts : l->listen_ts;

			if (last > 0 && ev->ts - last >= 0.1 && ev->ts - last > q)
				rp_join_busy(st, (size_t)(l - st->lsts), RP_BUSY_NOACCEPT, last, ev->ts, 1);
			l->last_accept_ts = ev->ts;
		}
		if (full)
			rp_join_busy(st, (size_t)(l - st->lsts), RP_BUSY_FULL, ev->ts - q, ev->ts,
				     ev->have_queue_len ? (long)ev->queue_len + 1 : 0);
	}
}

static void on_connect(struct rp_state *st, const struct log_ev *ev)
{
	struct rp_connects *c = &st->conn;
	const char *err = ev->err, *outcome = ev->outcome;
	long ret = 0, retr;
	double ms = ev->connect_ms;

	c->logged++;
	log_ev_long(ev->have_ret, ev->ret, &ret);
	if (outcome && strcmp(outcome, SA_OUTCOME_ABANDONED) == 0) {
		/* Closed before the handshake finished. */
		c->abandoned++;
	} else if (outcome && strcmp(outcome, SA_OUTCOME_INTERRUPTED) == 0) {
		/* A blocking connect a signal interrupted (EINTR); its end, if the
		 * program waited on, is a later line with after_interrupt. */
		c->interrupted++;
	} else if (outcome && strcmp(outcome, SA_OUTCOME_PENDING) == 0) {
		c->pending++;
	} else if (ret == 0 && !err) {
		c->ok++;
	} else if (err && (strcmp(err, "EINPROGRESS") == 0 || strcmp(err, "EALREADY") == 0)) {
		/* A non-blocking connect whose outcome the line does not carry. */
		c->pending++;
	} else {
		c->failed++;
		log_obj_add(c->by_errno, err ? err : SA_OUTCOME_FAILED, 1);
	}
	if (ev->have_connect_ms && ms >= 0) {
		c->hist[sa_conn_bucket(ms)]++;
		if (ms > c->max_ms)
			c->max_ms = ms;
	}
	if (log_ev_long(ev->have_syn_retrans, ev->syn_retrans, &retr) && retr >= 0)
		c->syn_retrans[retr > 4 ? 4 : retr]++;
	rp_model_connect(st, ev);
}

/* A listener_stats-shaped object, from its own line or a summary's list.
 * The summary's entries carry only a few counters: they stand in for a
 * listener that never had a listener_stats line, never replace one. */
static void on_listener_stats(struct rp_state *st, json_t *obj, long pid, const char *comm,
			      double ts, int from_summary)
{
	long fd = -1;
	struct rp_listener *l;

	if (!json_is_object(obj))
		return;
	if (!log_long(obj, "listen_fd", &fd) && !log_long(obj, "fd", &fd) && !log_str(obj, "local"))
		return;
	l = lst_get(st, pid, fd, comm, log_str(obj, "local"));
	if (!from_summary) {
		rp_model_stats(l, obj, ts);
		rp_join_overflows(st, l, obj, ts);
	}
	if (from_summary && l->stats && !l->stats_from_summary)
		return;
	/* The latest line holds the running totals. */
	if (!l->stats || ts >= l->stats_ts || (l->stats_from_summary && !from_summary)) {
		json_decref(l->stats);
		l->stats = json_incref(obj);
		l->stats_ts = ts;
		l->stats_from_summary = from_summary;
	}
}

/* What every event feeds: its process, the event counts, its findings.
 * Returns the process. */
static struct rp_proc *on_common(struct rp_state *st, const struct log_ev *ev, long *pidp)
{
	const char *name = ev->name;
	long pid = -1;
	double ts = ev->ts;
	struct rp_proc *p;

	log_ev_long(ev->have_pid, ev->pid, &pid);
	/* Only plausible Unix times (2001 to 5000) count for spans. */
	if (!ev->have_ts || !isfinite(ts) || ts < 1e9 || ts > 95617584000.0)
		ts = 0;
	p = proc_get(st, pid, ev->comm);
	p->events++;
	if (ts > 0 && (p->first_ts == 0 || ts < p->first_ts))
		p->first_ts = ts;
	if (ts > p->last_ts)
		p->last_ts = ts;
	rp_count_event(st, name ? name : "(no event name)");
	if (ev->have_schema && isfinite(ev->schema) && ev->schema > st->schema_max)
		st->schema_max = ev->schema;
	on_findings(st, p, ev, ts);
	*pidp = pid;
	return p;
}

static void on_event(struct rp_state *st, json_t *o)
{
	struct log_ev ev;
	const char *name, *comm;
	long pid;
	struct rp_proc *p;
	double ts = 0;

	log_ev_from_tree(o, &ev);
	name = ev.name ? ev.name : "";   /* no event name: nothing more */
	p = on_common(st, &ev, &pid);
	comm = p->comm;
	if (!log_num(o, "ts", &ts) || ts < 1e9 || ts > 95617584000.0)
		ts = 0;
	if (strcmp(name, "init") == 0) {
		json_decref(p->init);
		p->init = json_incref(o);
		p->trace = log_str(o, "level") && strcmp(log_str(o, "level"), "trace") == 0;
	} else if (strcmp(name, "summary") == 0 || (strcmp(name, "totals") == 0 && !p->summary && ts >= p->totals_ts)) {
		/* A summary, or the same figures while the process ran (the
		 * latest totals line, until its summary comes). */
		json_t **slot = name[0] == 's' ? &p->summary : &p->totals, *v;
		size_t i;

		json_decref(*slot);
		*slot = json_incref(o);
		if (name[0] == 't')
			p->totals_ts = ts;
		p->fig_loc.file = st->cur_file;
		p->fig_loc.line = st->cur_line;
		LOG_ARRAY_EACH(json_object_get(o, "listeners"), i, v)
			on_listener_stats(st, v, pid, comm, ts, 1);
	} else if (strcmp(name, "listen") == 0) {
		on_listen(st, o, pid, comm, ts);
	} else if (strcmp(name, "setsockopt") == 0) {
		on_setsockopt(st, o, pid, comm);
	} else if (strcmp(name, "accept") == 0) {
		on_accept(st, &ev, p);
	} else if (strcmp(name, "connect") == 0) {
		on_connect(st, &ev);
		rp_join_connect(st, &ev, pid);
	} else if (strcmp(name, "warning") == 0) {
		/* A bad SOCKAUDIT_* value or an unusable sink: few, and worth showing. */
		const char *msg = log_str(o, "msg");

		if (msg && json_object_size(st->warnings) < 20)
			log_obj_add(st->warnings, msg, 1);
	} else if (strcmp(name, "listener_stats") == 0) {
		on_listener_stats(st, o, pid, comm, ts, 0);
	}
	log_ev_free(&ev);
}

/* The fast path: accept and connect lines the scanner could read. */
static int on_scanned(struct rp_state *st, const struct log_ev *ev)
{
	struct rp_proc *p;
	long pid;

	if (!ev->name)
		return 0;
	if (strcmp(ev->name, "accept") == 0) {
		p = on_common(st, ev, &pid);
		on_accept(st, ev, p);
		return 1;
	}
	if (strcmp(ev->name, "connect") == 0) {
		on_common(st, ev, &pid);
		on_connect(st, ev);
		rp_join_connect(st, ev, pid);
		return 1;
	}
	return 0;
}

void rp_feed_line(struct rp_state *st, const char *line, size_t len)
{
	json_t *ev;
	json_error_t jerr;
	struct log_ev sev;

	st->cur_line++;
	log_journal_inner(&st->inner, &line, &len);
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	if (!len)
		return;
	st->lines++;
	if (len <= sizeof(st->scratch)) {
		memcpy(st->scratch, line, len);
		if (log_scan(st->scratch, len, &sev) && on_scanned(st, &sev)) {
			st->events++;
			return;
		}
	}
	ev = json_loadb(line, len, 0, &jerr);
	if (!ev) {
		st->skipped++;
		return;
	}
	if (!json_is_object(ev)) {
		st->skipped++;
		st->not_object++;
		json_decref(ev);
		return;
	}
	st->events++;
	on_event(st, ev);
	json_decref(ev);
}

