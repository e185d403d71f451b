/*
 * top/model.c: the live view's state, fed one JSON line at a time: each
 * listener (listen, accept and listener_stats lines of one process), each
 * peer (connect lines) and the findings in arrival order.
 *
 * Counts come from the lines' own running totals where there are some
 * (listener_stats: accepts, peak_waiting, queue_full_seen, empty_accepts,
 * percentiles), else from counting lines (accept lines at trace; connect
 * lines). Rates are deltas of those totals over the lines' own timestamps,
 * so a log read after the fact shows the rate it had, not the reading speed.
 *
 * Lines are read by the log floor: accept and connect lines (almost all of
 * a trace log) by its scanner, the rest as a jansson tree with its getters.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "top/top.h"

/* A problem that grew stays highlighted this long (s). */
#define TP_HOT_S 5.0

void tp_model_init(struct tp_model *m)
{
	memset(m, 0, sizeof *m);
}

void tp_model_free(struct tp_model *m)
{
	free(m->lst);
	free(m->peers);
	log_inner_free(&m->inner);
	memset(m, 0, sizeof *m);
}

static void copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

static struct tp_listener *listener(struct tp_model *m, long pid, long fd, const char *local)
{
	size_t i;
	struct tp_listener *l;

	for (i = 0; i < m->nlst; i++)
		if (m->lst[i].pid == pid && m->lst[i].fd == fd &&
		    (!local || !m->lst[i].local[0] || !strcmp(m->lst[i].local, local)))
			return &m->lst[i];
	m->lst = log_grow(m->lst, &m->caplst, m->nlst + 1, sizeof *m->lst);
	l = &m->lst[m->nlst++];
	memset(l, 0, sizeof *l);
	l->pid = pid;
	l->fd = fd;
	l->backlog = l->capacity = l->defer_s = -1;
	return l;
}

static struct tp_peer *peer(struct tp_model *m, const char *addr)
{
	size_t i;
	struct tp_peer *p;

	for (i = 0; i < m->npeers; i++)
		if (!strcmp(m->peers[i].addr, addr))
			return &m->peers[i];
	m->peers = log_grow(m->peers, &m->cappeers, m->npeers + 1, sizeof *m->peers);
	p = &m->peers[m->npeers++];
	memset(p, 0, sizeof *p);
	copy(p->addr, sizeof p->addr, addr);
	return p;
}

static void note_pid(struct tp_model *m, long pid)
{
	size_t i;

	for (i = 0; i < m->npids; i++)
		if (m->pids[i] == pid)
			return;
	if (m->npids < sizeof m->pids / sizeof m->pids[0])
		m->pids[m->npids++] = pid;
}

/* A new (ts, accepts) observation: the rate over the last two. */
static void observe(struct tp_listener *l, double ts, long accepts)
{
	if (accepts < l->accepts && l->ts_last > 0)
		return;   /* an older line read after a newer one */
	if (l->ts_last > 0 && ts > l->ts_last) {
		l->ts_prev = l->ts_last;
		l->acc_prev = l->accepts;
		l->rate = (double)(accepts - l->acc_prev) / (ts - l->ts_prev);
	}
	if (ts > l->ts_last)
		l->ts_last = ts;
	l->accepts = accepts;
}

static void on_stats(struct tp_model *m, struct tp_listener *l, const json_t *o, double ts)
{
	long v, old_full = l->full, old_empty = l->empty;
	struct log_pct p;

	if (log_long(o, "backlog", &v)) {
		l->backlog = v;
		l->capacity = v + 1;
	}
	if (log_long(o, "defer_accept_s", &v))
		l->defer_s = v;
	if (log_long(o, "accepts", &v))
		observe(l, ts, v > l->accept_lines ? v : l->accept_lines);
	if (log_long(o, "peak_waiting", &v) && v > l->peak)
		l->peak = v;
	if (log_long(o, "queue_full_seen", &v) && v > l->full)
		l->full = v;
	if (log_long(o, "empty_accepts", &v) && v > l->empty)
		l->empty = v;
	/* A line without percentiles keeps the last ones seen. */
	if (log_pct_get(o, "wait_ms", &p))
		l->wait = p;
	if (log_pct_get(o, "queue_ms", &p))
		l->qage = p;
	/* The queue as the live thread read it: a listener whose program
	 * stopped accepting shows its full queue, with no accept to say so. */
	if (log_long(o, "waiting_now", &v)) {
		l->queue_len = v;
		l->have_queue_len = 1;
		if (v > l->peak)
			l->peak = v;
		if (l->capacity > 0 && v >= l->capacity)
			l->hot_until = m->now + TP_HOT_S;
	}
	if (l->full > old_full || l->empty > old_empty)
		l->hot_until = m->now + TP_HOT_S;
}

static void on_accept(struct tp_model *m, struct tp_listener *l, const struct log_ev *ev, double ts)
{
	long v;

	l->accept_lines++;
	if (l->accept_lines > l->accepts)
		observe(l, ts, l->accept_lines);
	if (log_ev_long(ev->have_queue_len, ev->queue_len, &v)) {
		l->queue_len = v;
		l->have_queue_len = 1;
		if (v > l->peak)
			l->peak = v;
	}
	if (log_ev_long(ev->have_queue_capacity, ev->queue_capacity, &v))
		l->capacity = v;
	if (ev->have_findings)
		l->hot_until = m->now + TP_HOT_S;
}

static void on_connect(struct tp_model *m, const struct log_ev *ev, double ts)
{
	const char *addr = ev->peer, *outcome = ev->outcome;
	struct tp_peer *p;
	long v;

	if (!addr || ev->after_interrupt)
		return;
	p = peer(m, addr);
	p->n++;
	if (!p->first_ts || ts < p->first_ts)
		p->first_ts = ts;
	if (ts > p->last_ts)
		p->last_ts = ts;
	{
		long sec = (long)ts;
		int b = (int)(sec & 7);

		if (p->sec[b] != sec) {
			p->sec[b] = sec;
			p->cnt[b] = 0;
		}
		p->cnt[b]++;
	}
	if (outcome && strcmp(outcome, SA_OUTCOME_OK) != 0 && strcmp(outcome, SA_OUTCOME_INTERRUPTED) != 0)
		p->failed++;
	if (ev->have_connect_ms)
		p->hist[sa_conn_bucket(ev->connect_ms)]++;
	if (log_ev_long(ev->have_syn_retrans, ev->syn_retrans, &v) && v > 0) {
		p->syn_retrans += v;
		p->hot_until = m->now + TP_HOT_S;
	}
}

static void on_findings(struct tp_model *m, const struct log_ev *ev, double ts, long pid, const char *comm)
{
	const char *msg = ev->msg;
	struct tp_finding *f;
	char codes[sizeof f->codes] = "";
	size_t i, off = 0, slot;

	if (!ev->have_findings || ev->nfindings_all == 0)
		return;
	m->findings_total++;
	for (i = 0; i < ev->nfindings && off < sizeof codes; i++)
		off += (size_t)snprintf(codes + off, sizeof codes - off, "%s%s", i ? ", " : "",
					ev->findings[i]);
	/* The same codes from the same process again: one row, counted, with
	 * the latest line's time and msg (a queue that overflows for a minute
	 * is one row, not the pane). */
	f = NULL;
	for (i = 0; i < m->nfind && !f; i++) {
		struct tp_finding *g = &m->find[(m->find_head + i) % TP_FIND_MAX];

		if (g->pid == pid && !strcmp(g->codes, codes))
			f = g;
	}
	if (f) {
		f->count++;
	} else {
		slot = (m->find_head + m->nfind) % TP_FIND_MAX;
		if (m->nfind < TP_FIND_MAX)
			m->nfind++;
		else
			m->find_head = (m->find_head + 1) % TP_FIND_MAX;
		f = &m->find[slot];
		f->count = 1;
		f->pid = pid;
		copy(f->codes, sizeof f->codes, codes);
	}
	f->ts = ts;
	f->seen = m->now;
	copy(f->comm, sizeof f->comm, comm);
	snprintf(f->text, sizeof f->text, "%s%s%s", codes, msg ? ": " : "", msg ? msg : "");
}

/* Log time "now": the newest line's, or the wall clock while the logs are
 * being written (their newest line within a minute of it). */
static double log_now(const struct tp_model *m)
{
	return m->now > m->max_ts && m->now - m->max_ts < 60 ? m->now : m->max_ts;
}

double tp_listener_rate(const struct tp_model *m, const struct tp_listener *l)
{
	double t = log_now(m), gap = l->ts_last - l->ts_prev, since = t - l->ts_last;

	if (l->ts_prev <= 0 || gap <= 0)
		return l->rate;
	if (gap < 1)
		gap = 1;
	/* A listener with traffic writes a line each interval; one that has
	 * written none for longer has had fewer accepts, and none after three. */
	if (since <= 1.5 * gap)
		return l->rate;
	if (since > 3 * gap)
		return 0;
	return (double)(l->accepts - l->acc_prev) / (t - l->ts_prev);
}

double tp_peer_rate(const struct tp_model *m, const struct tp_peer *p)
{
	long newest = (long)m->max_ts, c = 0;
	int b;

	/* The TP_RATE_S whole seconds before the newest line's second. */
	for (b = 0; b < 8; b++)
		if (p->sec[b] < newest && p->sec[b] >= newest - (long)TP_RATE_S)
			c += p->cnt[b];
	return c / TP_RATE_S;
}

const struct tp_finding *tp_model_finding(const struct tp_model *m, size_t i)
{
	return i < m->nfind ? &m->find[(m->find_head + i) % TP_FIND_MAX] : NULL;
}

/* A line into ev: by the scanner when it is an accept or connect line it
 * can read (*tree stays NULL), else parsed into *tree. 0 when the line is
 * not a JSON object with an event name. */
static int read_line(struct tp_model *m, const char *line, size_t len, struct log_ev *ev, json_t **tree)
{
	json_error_t err;

	*tree = NULL;
	if (len <= sizeof m->scratch) {
		memcpy(m->scratch, line, len);
		if (log_scan(m->scratch, len, ev) && ev->name &&
		    (!strcmp(ev->name, "accept") || !strcmp(ev->name, "connect")))
			return 1;
	}
	*tree = json_loadb(line, len, 0, &err);
	if (!json_is_object(*tree) || !log_str(*tree, "event")) {
		json_decref(*tree);
		*tree = NULL;
		return 0;
	}
	log_ev_from_tree(*tree, ev);
	return 1;
}

/* One line's event; o is its tree (NULL for a scanned accept or connect). */
static void on_line(struct tp_model *m, const struct log_ev *ev, const json_t *o)
{
	const char *name = ev->name, *comm = ev->comm;
	double ts = ev->have_ts ? ev->ts : 0;
	long pid = ev->have_pid ? (long)ev->pid : 0, fd = -1, v;
	struct tp_listener *l;

	note_pid(m, pid);
	if (ts > m->max_ts)
		m->max_ts = ts;
	if (o && !strcmp(name, "listen") && log_long(o, "fd", &fd) && log_long(o, "ret", &v) && v == 0) {
		l = listener(m, pid, fd, NULL);
		copy(l->local, sizeof l->local, log_str(o, "local"));
		copy(l->comm, sizeof l->comm, comm);
		if (log_long(o, "backlog_effective", &v))
			l->backlog = v;
		if (log_long(o, "queue_capacity", &v))
			l->capacity = v;
		if (log_long(o, "defer_accept_s", &v))
			l->defer_s = v;
		if (!l->ts_last)
			l->ts_last = ts;
	} else if (o && !strcmp(name, "listener_stats") && log_long(o, "listen_fd", &fd)) {
		l = listener(m, pid, fd, log_str(o, "local"));
		if (!l->local[0])
			copy(l->local, sizeof l->local, log_str(o, "local"));
		copy(l->comm, sizeof l->comm, comm);
		on_stats(m, l, o, ts);
	} else if (!strcmp(name, "accept") && log_ev_long(ev->have_listen_fd, ev->listen_fd, &fd) &&
		   log_ev_long(ev->have_ret, ev->ret, &v) && v >= 0) {
		l = listener(m, pid, fd, NULL);
		if (!l->local[0])
			copy(l->local, sizeof l->local, ev->local);
		copy(l->comm, sizeof l->comm, comm);
		on_accept(m, l, ev, ts);
	} else if (!strcmp(name, "connect")) {
		on_connect(m, ev, ts);
	}
	on_findings(m, ev, ts, pid, comm);
}

void tp_model_line(void *ctx, const char *line, size_t len)
{
	struct tp_model *m = ctx;
	struct log_ev ev;
	json_t *o;

	if (log_journal_inner(&m->inner, &line, &len) && !len)
		return;         /* another program's journal entry */
	m->lines++;
	if (!read_line(m, line, len, &ev, &o)) {
		m->bad_lines++;
		return;
	}
	on_line(m, &ev, o);
	log_ev_free(&ev);
	json_decref(o);
}
