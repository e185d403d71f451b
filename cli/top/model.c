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

static void on_accept(struct tp_model *m, struct tp_listener *l, const json_t *o, double ts)
{
	long v;

	l->accept_lines++;
	if (l->accept_lines > l->accepts)
		observe(l, ts, l->accept_lines);
	if (log_long(o, "queue_len", &v)) {
		l->queue_len = v;
		l->have_queue_len = 1;
		if (v > l->peak)
			l->peak = v;
	}
	if (log_long(o, "queue_capacity", &v))
		l->capacity = v;
	if (json_is_array(json_object_get(o, "findings")))
		l->hot_until = m->now + TP_HOT_S;
}

static void on_connect(struct tp_model *m, const json_t *o, double ts)
{
	const char *addr = log_str(o, "peer"), *outcome = log_str(o, "outcome");
	struct tp_peer *p;
	double ms;
	long v;

	if (!addr || json_is_true(json_object_get(o, "after_interrupt")))
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
	if (log_num(o, "connect_ms", &ms))
		p->hist[sa_conn_bucket(ms)]++;
	if (log_long(o, "syn_retrans", &v) && v > 0) {
		p->syn_retrans += v;
		p->hot_until = m->now + TP_HOT_S;
	}
}

static void on_findings(struct tp_model *m, const json_t *o, double ts, long pid, const char *comm)
{
	json_t *arr = json_object_get(o, "findings"), *v;
	const char *msg = log_str(o, "msg");
	struct tp_finding *f;
	char codes[sizeof f->codes] = "";
	size_t i, off = 0, slot;

	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return;
	m->findings_total++;
	LOG_ARRAY_EACH(arr, i, v)
		if (json_is_string(v) && off < sizeof codes)
			off += (size_t)snprintf(codes + off, sizeof codes - off, "%s%s", i ? ", " : "",
						json_string_value(v));
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

void tp_model_line(void *ctx, const char *line, size_t len)
{
	struct tp_model *m = ctx;
	json_error_t err;
	json_t *o;
	const char *ev, *comm;
	double ts = 0, pidd = 0;
	long pid, fd = -1, v;
	struct tp_listener *l;

	if (log_journal_inner(&m->inner, &line, &len) && !len)
		return;         /* another program's journal entry */
	o = json_loadb(line, len, 0, &err);
	m->lines++;
	if (!json_is_object(o) || !(ev = log_str(o, "event"))) {
		m->bad_lines++;
		json_decref(o);
		return;
	}
	log_num(o, "ts", &ts);
	log_num(o, "pid", &pidd);
	pid = (long)pidd;
	comm = log_str(o, "comm");
	note_pid(m, pid);
	if (ts > m->max_ts)
		m->max_ts = ts;
	if (!strcmp(ev, "listen") && log_long(o, "fd", &fd) && log_long(o, "ret", &v) && v == 0) {
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
	} else if (!strcmp(ev, "listener_stats") && log_long(o, "listen_fd", &fd)) {
		l = listener(m, pid, fd, log_str(o, "local"));
		if (!l->local[0])
			copy(l->local, sizeof l->local, log_str(o, "local"));
		copy(l->comm, sizeof l->comm, comm);
		on_stats(m, l, o, ts);
	} else if (!strcmp(ev, "accept") && log_long(o, "listen_fd", &fd) && log_long(o, "ret", &v) && v >= 0) {
		l = listener(m, pid, fd, NULL);
		if (!l->local[0])
			copy(l->local, sizeof l->local, log_str(o, "local"));
		copy(l->comm, sizeof l->comm, comm);
		on_accept(m, l, o, ts);
	} else if (!strcmp(ev, "connect")) {
		on_connect(m, o, ts);
	}
	on_findings(m, o, ts, pid, comm);
	json_decref(o);
}
