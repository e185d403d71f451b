/*
 * report.c: `sockaudit report [FILE...]` reads JSON lines and gathers them
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

#include "cli.h"

/* Distinct option differences kept; the rest are only counted. */
#define RP_DIFFS_MAX 2000


/* ---- typed getters ------------------------------------------------------ */

int rp_num(const json_t *o, const char *key, double *out)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
	double d;

	if (!json_is_number(v))
		return 0;
	d = json_number_value(v);
	if (!isfinite(d))
		return 0;
	*out = d;
	return 1;
}

int rp_long(const json_t *o, const char *key, long *out)
{
	double d;

	if (!rp_num(o, key, &d) || d > 9.0e18 || d < -9.0e18)
		return 0;
	*out = (long)d;
	return 1;
}

const char *rp_str(const json_t *o, const char *key)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int rp_pct_get(const json_t *o, const char *key, struct rp_pct *p)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
	int n = 0;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(v))
		return 0;
	n += rp_num(v, "p50", &p->p50);
	n += rp_num(v, "p95", &p->p95);
	n += rp_num(v, "p99", &p->p99);
	n += rp_num(v, "max", &p->max);
	if (!rp_num(v, "n", &p->n))
		p->n = -1;
	p->have = n > 0;
	return p->have;
}

/* ---- growable arrays ------------------------------------------------------ */

static void *grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(arr, ncap * size);
	if (!p) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	memset((char *)p + *cap * size, 0, (ncap - *cap) * size);
	*cap = ncap;
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");

	if (!p) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

static void obj_add(json_t *obj, const char *key, long n)
{
	json_t *v = json_object_get(obj, key);
	long cur = json_is_integer(v) ? (long)json_integer_value(v) : 0;

	json_object_set_new(obj, key, json_integer(cur + n));
}

/* ---- state ------------------------------------------------------------------ */

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
		json_decref(st->procs[i].finding_counts);
	}
	for (i = 0; i < st->nlsts; i++) {
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
}

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
	st->procs = grow(st->procs, &st->capprocs, st->nprocs, sizeof(*st->procs));
	last = st->nprocs;
	p = &st->procs[st->nprocs++];
	p->pid = pid;
	p->comm = xstrdup(comm ? comm : "?");
	p->finding_counts = json_object();
	return p;
found:
	/* After exec the same pid carries a new comm: keep the latest. */
	if (comm && strcmp(p->comm, comm) != 0) {
		free(p->comm);
		p->comm = xstrdup(comm);
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
			l->local = xstrdup(local);
		}
		return l;
	}
	st->lsts = grow(st->lsts, &st->caplsts, st->nlsts, sizeof(*st->lsts));
	l = &st->lsts[st->nlsts++];
	l->pid = pid;
	l->fd = fd;
	l->comm = xstrdup(comm ? comm : "?");
	l->local = local ? xstrdup(local) : NULL;
	return l;
}

/* ---- per event ---------------------------------------------------------------- */

static void on_findings(struct rp_state *st, struct rp_proc *p, json_t *ev)
{
	json_t *arr = json_object_get(ev, "findings"), *v;
	const char *msg = rp_str(ev, "msg");
	size_t i, n;

	if (!json_is_array(arr))
		return;
	n = json_array_size(arr);
	RP_ARRAY_EACH(arr, i, v) {
		const char *code = json_string_value(v);

		if (!code || !*code)
			continue;
		obj_add(p->finding_counts, code, 1);
		/* Keep one msg per code, preferring an event that has only this
		 * finding: its msg speaks about this code alone. */
		if (msg && *msg && (!json_object_get(st->msgs, code) ||
				    (n == 1 && !json_is_true(json_object_get(st->msg_single, code))))) {
			json_object_set_new(st->msgs, code, json_string(msg));
			json_object_set_new(st->msg_single, code, json_boolean(n == 1));
		}
	}
}

static int has_finding(json_t *ev, const char *code)
{
	json_t *arr = json_object_get(ev, "findings"), *v;
	size_t i;

	RP_ARRAY_EACH(arr, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), code) == 0)
			return 1;
	return 0;
}

static void on_listen(struct rp_state *st, json_t *ev, long pid, const char *comm)
{
	long fd = -1, v;
	double d;
	struct rp_listener *l;

	/* Without its fd a listen line cannot be matched to anything. */
	if (!rp_long(ev, "fd", &fd))
		return;
	l = lst_get(st, pid, fd, comm, rp_str(ev, "local"));
	l->have_listen = 1;
	l->listens++;
	if (rp_long(ev, "backlog_requested", &v)) { l->backlog_requested = v; l->have_backlog_req = 1; }
	if (rp_long(ev, "backlog_effective", &v)) { l->backlog_effective = v; l->have_backlog_eff = 1; }
	if (rp_long(ev, "somaxconn", &v)) { l->somaxconn = v; l->have_somaxconn = 1; }
	if (rp_long(ev, "queue_capacity", &v))
		l->queue_capacity = v;
	if (rp_num(ev, "defer_accept_s", &d) && !l->have_defer_eff) {
		l->defer_eff_s = d;
		l->have_defer_eff = 1;
	}
}

static void on_setsockopt(struct rp_state *st, json_t *ev, long pid, const char *comm)
{
	const char *sol = rp_str(ev, "sol"), *opt = rp_str(ev, "opt");
	json_t *req = json_object_get(ev, "requested"), *eff = json_object_get(ev, "effective");
	long ret = 0, fd = -1;
	struct rp_optdiff *d;
	size_t i;

	rp_long(ev, "ret", &ret);
	rp_long(ev, "fd", &fd);
	if (opt && strcmp(opt, "TCP_DEFER_ACCEPT") == 0 && ret == 0 && fd >= 0) {
		struct rp_listener *l = lst_get(st, pid, fd, comm, rp_str(ev, "local"));
		double s;

		if (rp_num(ev, "requested_s", &s) || rp_num(ev, "requested", &s)) {
			l->defer_req_s = s;
			l->have_defer_req = 1;
		}
		if (rp_num(ev, "effective_s", &s)) {
			l->defer_eff_s = s;
			l->have_defer_eff = 1;
		}
	}
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
	st->diffs = grow(st->diffs, &st->capdiffs, st->ndiffs, sizeof(*st->diffs));
	d = &st->diffs[st->ndiffs++];
	d->comm = xstrdup(comm ? comm : "?");
	d->sol = xstrdup(sol ? sol : "?");
	d->opt = xstrdup(opt ? opt : "?");
	d->requested = json_incref(req);
	d->effective = json_incref(eff);
	d->findings = json_is_array(json_object_get(ev, "findings")) ?
		json_incref(json_object_get(ev, "findings")) : NULL;
	d->count = 1;
}

static void on_accept(struct rp_state *st, json_t *ev, long pid, const char *comm)
{
	long lfd = -1;
	struct rp_listener *l;

	if (!rp_long(ev, "listen_fd", &lfd))
		return;
	l = lst_get(st, pid, lfd, comm, NULL);
	l->accepts_logged++;
	if (has_finding(ev, "empty_accept_defer_expired"))
		l->empty_defer_expired++;
	if (has_finding(ev, "empty_accept_syncookie"))
		l->empty_syncookie++;
	if (has_finding(ev, "accept_queue_full"))
		l->accept_queue_full++;
}

static void on_connect(struct rp_state *st, json_t *ev)
{
	struct rp_connects *c = &st->conn;
	const char *err = rp_str(ev, "errno"), *outcome = rp_str(ev, "outcome");
	long ret = 0, retr;
	double ms;

	c->logged++;
	rp_long(ev, "ret", &ret);
	if (outcome && strcmp(outcome, "abandoned") == 0) {
		/* Closed before the handshake finished. */
		c->abandoned++;
	} else if (outcome && strcmp(outcome, "pending") == 0) {
		c->pending++;
	} else if (ret == 0 && !err) {
		c->ok++;
	} else if (err && (strcmp(err, "EINPROGRESS") == 0 || strcmp(err, "EALREADY") == 0)) {
		/* A non-blocking connect whose outcome the line does not carry. */
		c->pending++;
	} else {
		c->failed++;
		obj_add(c->by_errno, err ? err : "failed", 1);
	}
	if (rp_num(ev, "connect_ms", &ms) && ms >= 0) {
		c->hist[sa_conn_bucket(ms)]++;
		if (ms > c->max_ms)
			c->max_ms = ms;
	}
	if (rp_long(ev, "syn_retrans", &retr) && retr >= 0)
		c->syn_retrans[retr > 4 ? 4 : retr]++;
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
	if (!rp_long(obj, "listen_fd", &fd) && !rp_long(obj, "fd", &fd) && !rp_str(obj, "local"))
		return;
	l = lst_get(st, pid, fd, comm, rp_str(obj, "local"));
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

static void on_event(struct rp_state *st, json_t *ev)
{
	const char *name = rp_str(ev, "event"), *comm = rp_str(ev, "comm");
	long pid = -1;
	double ts = 0;
	struct rp_proc *p;

	rp_long(ev, "pid", &pid);
	/* Only plausible Unix times (2001 to 5000) count for spans. */
	if (!rp_num(ev, "ts", &ts) || ts < 1e9 || ts > 95617584000.0)
		ts = 0;
	p = proc_get(st, pid, comm);
	comm = p->comm;
	p->events++;
	if (ts > 0 && (p->first_ts == 0 || ts < p->first_ts))
		p->first_ts = ts;
	if (ts > p->last_ts)
		p->last_ts = ts;
	obj_add(st->counts, name ? name : "(no event name)", 1);
	on_findings(st, p, ev);
	if (!name)
		return;
	if (strcmp(name, "init") == 0) {
		json_decref(p->init);
		p->init = json_incref(ev);
	} else if (strcmp(name, "summary") == 0) {
		json_t *arr = json_object_get(ev, "listeners"), *v;
		size_t i;

		json_decref(p->summary);
		p->summary = json_incref(ev);
		RP_ARRAY_EACH(arr, i, v)
			on_listener_stats(st, v, pid, comm, ts, 1);
	} else if (strcmp(name, "listen") == 0) {
		on_listen(st, ev, pid, comm);
	} else if (strcmp(name, "setsockopt") == 0) {
		on_setsockopt(st, ev, pid, comm);
	} else if (strcmp(name, "accept") == 0) {
		on_accept(st, ev, pid, comm);
	} else if (strcmp(name, "connect") == 0) {
		on_connect(st, ev);
	} else if (strcmp(name, "warning") == 0) {
		/* A bad SOCKAUDIT_* value or an unusable sink: few, and worth showing. */
		const char *msg = rp_str(ev, "msg");

		if (msg && json_object_size(st->warnings) < 20)
			obj_add(st->warnings, msg, 1);
	} else if (strcmp(name, "listener_stats") == 0) {
		on_listener_stats(st, ev, pid, comm, ts, 0);
	}
}

void rp_feed_line(struct rp_state *st, const char *line, size_t len)
{
	json_t *ev;
	json_error_t jerr;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	if (!len)
		return;
	st->lines++;
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

/* ---- after the last line --------------------------------------------------- */

static struct rp_finding *finding_get(struct rp_state *st, const char *code)
{
	size_t i;

	for (i = 0; i < st->nfinds; i++)
		if (strcmp(st->finds[i].code, code) == 0)
			return &st->finds[i];
	st->finds = grow(st->finds, &st->capfinds, st->nfinds, sizeof(*st->finds));
	st->finds[st->nfinds].code = xstrdup(code);
	return &st->finds[st->nfinds++];
}

static int finding_cmp(const void *a, const void *b)
{
	const struct rp_finding *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->code, y->code);
}

void rp_finish(struct rp_state *st)
{
	size_t i;
	int b;

	for (i = 0; i < st->nprocs; i++) {
		struct rp_proc *p = &st->procs[i];
		json_t *sumf = json_object_get(p->summary, "findings");
		json_t *hist = json_object_get(p->summary, "connect_hist");
		const char *code;
		json_t *v;
		void *it;
		long n;

		/* The summary counts every finding, logged or suppressed; events
		 * are all we have for a process that died without one. Take the
		 * larger so neither source undercounts. */
		RP_OBJECT_EACH(p->finding_counts, it, code, v)
			finding_get(st, code)->count += (long)json_integer_value(v);
		RP_OBJECT_EACH(sumf, it, code, v) {
			long seen = 0;

			if (!json_is_number(v))
				continue;
			rp_long(p->finding_counts, code, &seen);
			n = (long)json_number_value(v);
			if (n > seen)
				finding_get(st, code)->count += n - seen;
		}
		for (b = 0; json_is_object(hist) && b < SA_CONN_NBUCKETS; b++) {
			if (!json_object_get(hist, sa_conn_bucket_names[b]))
				continue;
			st->conn.have_sum_hist = 1;
			if (rp_long(hist, sa_conn_bucket_names[b], &n) && n > 0)
				st->conn.sum_hist[b] += n;
		}
		for (b = 0; b < 3; b++) {
			static const char *const key[3] = { "ok", "failed", "abandoned" };

			if (rp_long(json_object_get(p->summary, "connects"), key[b], &n)) {
				st->conn.sum_outcome[b] += n;
				st->conn.have_sum_outcome = 1;
			}
		}
		if (rp_long(p->summary, "syn_retrans_total", &n)) {
			st->conn.syn_retrans_total += n;
			st->conn.have_syn_retrans_total = 1;
		}
	}
	for (i = 0; i < st->nfinds; i++) {
		const char *msg = rp_str(st->msgs, st->finds[i].code);

		if (msg)
			st->finds[i].msg = xstrdup(msg);
		st->finds[i].msg_single = json_is_true(json_object_get(st->msg_single,
									st->finds[i].code));
	}
	if (st->nfinds > 1)
		qsort(st->finds, st->nfinds, sizeof(*st->finds), finding_cmp);
}
