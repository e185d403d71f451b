/*
 * metrics/model.c: lines folded into per-process totals for `sockaudit
 * metrics`.
 *
 * Each process (pid; a new init line after its summary starts another)
 * keeps what its lines counted and what its summary and listener_stats
 * said; a counter is, per process, the larger of the two (lines can be
 * dropped or not written below trace; a totals line comes every few
 * seconds while something changes, a summary at exit), and
 * the exposition sums processes. A restarted program is a new process,
 * so the sums only go up. Accept and connect lines, almost all of a trace
 * log, are read without jansson (log_scan()).
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

void mx_init(struct mx_state *st, int top_peers)
{
	memset(st, 0, sizeof *st);
	st->top_peers = top_peers;
}

void mx_free(struct mx_state *st)
{
	size_t i;

	for (i = 0; i < st->nprocs; i++)
		mx_proc_free(st->procs[i]);
	for (i = 0; i < st->npeers; i++) {
		free(st->peers[i].comm);
		free(st->peers[i].peer);
	}
	for (i = 0; i < st->nbl; i++) {
		free(st->bl[i].comm);
		free(st->bl[i].local);
	}
	for (i = 0; i < st->nevc; i++) {
		free(st->evc[i].comm);
		free(st->evc[i].event);
	}
	for (i = 0; i < st->ncomm_fds; i++) {
		free(st->comm_fds[i].local);
		free(st->comm_fds_comm[i]);
	}
	log_inner_free(&st->inner);
	free(st->procs);
	free(st->peers);
	free(st->bl);
	free(st->evc);
	free(st->comm_fds);
	free(st->comm_fds_comm);
}

int mx_outcome(const char *o)
{
	int i;

	for (i = 0; o && i < MX_OUTCOMES; i++)
		if (strcmp(o, sa_outcome_words[i]) == 0)
			return i;
	return -1;
}

const char *mx_outcome_name(int i)
{
	return sa_outcome_words[i];
}

/* ---- processes ----------------------------------------------------------- */

static struct mx_proc *proc_new(struct mx_state *st, long pid, const char *comm)
{
	struct mx_proc *p = calloc(1, sizeof *p);
	size_t h = (size_t)pid % MX_HASH;

	if (!p) {
		fputs("sockaudit metrics: out of memory\n", stderr);
		exit(1);
	}
	p->pid = pid;
	p->comm = log_strdup(comm ? comm : "unknown");
	st->procs = log_grow(st->procs, &st->capprocs, st->nprocs + 1, sizeof *st->procs);
	st->procs[st->nprocs++] = p;
	p->hnext = st->hash[h];        /* the newest of a reused pid first */
	st->hash[h] = p;
	return p;
}

static struct mx_proc *proc_get(struct mx_state *st, long pid, const char *comm, int is_init)
{
	struct mx_proc *p = st->last;

	if (!p || p->pid != pid)
		for (p = st->hash[(size_t)pid % MX_HASH]; p && p->pid != pid; p = p->hnext)
			;
	/* The pid again after its summary: a new process (a restart). */
	if (!p || (is_init && p->exited))
		p = proc_new(st, pid, comm);
	else if (comm && strcmp(p->comm, comm) != 0) {
		free(p->comm);   /* exec'd another program: the newest name */
		p->comm = log_strdup(comm);
	}
	st->last = p;
	return p;
}

static void fd_set_local(struct mx_fdmap **arr, size_t *n, size_t *cap, long fd, const char *local)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*arr)[i].fd == fd) {
			free((*arr)[i].local);
			(*arr)[i].local = log_strdup(local);
			return;
		}
	*arr = log_grow(*arr, cap, *n + 1, sizeof **arr);
	(*arr)[*n].fd = fd;
	(*arr)[*n].local = log_strdup(local);
	(*n)++;
}

/* The listener an accept's listen_fd is: this process's listen() of it,
 * else the last listen() of that fd by a process of the same name (nginx
 * workers accept on what the master listened on). */
static const char *listener_of(struct mx_state *st, struct mx_proc *p, long fd)
{
	size_t i;

	for (i = 0; i < p->nfds; i++)
		if (p->fds[i].fd == fd)
			return p->fds[i].local;
	for (i = st->ncomm_fds; i-- > 0;)
		if (st->comm_fds[i].fd == fd && strcmp(st->comm_fds_comm[i], p->comm) == 0)
			return st->comm_fds[i].local;
	return NULL;
}

static void count_event(struct mx_state *st, const char *comm, const char *event)
{
	struct mx_evcount *e = st->evc_last;
	size_t i;

	if (e && strcmp(e->event, event) == 0 && strcmp(e->comm, comm) == 0) {
		e->n++;
		return;
	}
	for (i = 0; i < st->nevc; i++)
		if (strcmp(st->evc[i].event, event) == 0 && strcmp(st->evc[i].comm, comm) == 0)
			break;
	if (i == st->nevc) {
		st->evc = log_grow(st->evc, &st->capevc, st->nevc + 1, sizeof *st->evc);
		st->evc[i].comm = log_strdup(comm);
		st->evc[i].event = log_strdup(event);
		st->evc[i].n = 0;
		st->nevc++;
	}
	st->evc[i].n++;
	st->evc_last = &st->evc[i];
}

static void count_findings(struct mx_proc *p, const char *const *codes, size_t n)
{
	size_t i;

	if (!n)
		return;
	if (!p->ev_find)
		p->ev_find = json_object();
	for (i = 0; i < n; i++)
		log_obj_add(p->ev_find, codes[i], 1);
}

/* ---- accept and connect (either path) ------------------------------------ */

static void on_accept(struct mx_state *st, struct mx_proc *p, const struct log_ev *ev)
{
	const char *local;

	if (!ev->have_ret || ev->ret < 0 || !ev->have_listen_fd)
		return;
	local = listener_of(st, p, (long)ev->listen_fd);
	mx_plst_get(p, local ? local : "unknown")->ev_accepts++;
}

static void on_connect(struct mx_state *st, struct mx_proc *p, const struct log_ev *ev)
{
	int o = ev->outcome ? mx_outcome(ev->outcome) : !ev->have_ret ? -1 : ev->ret == 0 ? 0 : 1;
	size_t i;

	if (o < 0)
		return;
	p->ev_conn[o]++;
	if (ev->have_syn_retrans && ev->syn_retrans > 0)
		p->ev_retr += (long)ev->syn_retrans;
	/* The summary's histogram holds TCP connects that succeeded: TCP is
	 * the line with syn_retrans (null or absent otherwise). */
	if (o == 0 && ev->have_connect_ms && ev->have_syn_retrans) {
		p->ev_hist[sa_conn_bucket(ev->connect_ms)]++;
		p->ev_sum_ms += ev->connect_ms;
		p->ev_timed++;
	}
	if (!ev->peer)
		return;
	for (i = 0; i < st->npeers; i++)
		if (strcmp(st->peers[i].peer, ev->peer) == 0 && strcmp(st->peers[i].comm, p->comm) == 0)
			break;
	if (i == st->npeers) {
		st->peers = log_grow(st->peers, &st->cappeers, st->npeers + 1, sizeof *st->peers);
		memset(&st->peers[i], 0, sizeof st->peers[i]);
		st->peers[i].comm = log_strdup(p->comm);
		st->peers[i].peer = log_strdup(ev->peer);
		st->npeers++;
	}
	st->peers[i].n[o]++;
}

/* ---- the jansson path ---------------------------------------------------- */

static long num_or0(const json_t *o, const char *k)
{
	long v = 0;

	return log_long(o, k, &v) == 0 ? 0 : v;
}

static void on_stats(struct mx_proc *p, const json_t *o, int from_summary)
{
	const char *local = log_str(o, "local");
	struct mx_plst *l;

	if (!local)
		return;
	l = mx_plst_get(p, local);
	if (from_summary) {
		l->sum_accepts = num_or0(o, "accepts");
		l->sum_queue_full = num_or0(o, "queue_full_seen");
		l->sum_empty = num_or0(o, "empty_accepts");
		return;
	}
	l->st_accepts = num_or0(o, "accepts");
	l->st_queue_full = num_or0(o, "queue_full_seen");
	l->st_empty = num_or0(o, "empty_accepts");
	l->st_empty_defer = num_or0(o, "empty_defer_expired");
	l->st_empty_syncookie = num_or0(o, "empty_syncookie");
}

/* A summary's figures, or a totals line's (the same figures while the
 * process runs, written by its live thread). */
static void on_figures(struct mx_proc *p, const json_t *o)
{
	const json_t *c = json_object_get(o, "connects"), *h = json_object_get(o, "connect_hist"), *v;
	double d;
	size_t i;
	int k;

	for (k = 0; k < MX_OUTCOMES; k++)
		p->sum_conn[k] = num_or0(c, sa_outcome_words[k]);
	if (json_is_object(h)) {
		p->have_sum_hist = 1;
		for (k = 0; k < SA_CONN_NBUCKETS; k++)
			p->sum_hist[k] = num_or0(h, sa_conn_bucket_names[k]);
	}
	if (log_num(o, "connect_ms_sum", &d)) {
		p->have_sum_sum = 1;
		p->sum_sum_ms = d;
	}
	p->sum_retr = num_or0(o, "syn_retrans_total");
	p->dropped_sum = num_or0(o, "dropped");
	v = json_object_get(o, "findings");
	if (json_is_object(v)) {
		json_decref(p->sum_find);
		p->sum_find = json_deep_copy(v);
	}
	LOG_ARRAY_EACH(json_object_get(o, "listeners"), i, v)
		on_stats(p, v, 1);
}

static void on_summary(struct mx_proc *p, const json_t *o)
{
	p->exited = 1;
	on_figures(p, o);
}

static void on_listen(struct mx_state *st, struct mx_proc *p, const json_t *o)
{
	const char *local = log_str(o, "local");
	long fd, ret = -1, req, eff;
	size_t i;

	if (!local || !log_long(o, "fd", &fd) || !log_long(o, "ret", &ret) || ret != 0)
		return;
	fd_set_local(&p->fds, &p->nfds, &p->capfds, fd, local);
	for (i = 0; i < st->ncomm_fds; i++)
		if (st->comm_fds[i].fd == fd && strcmp(st->comm_fds_comm[i], p->comm) == 0)
			break;
	if (i == st->ncomm_fds) {
		size_t cap = st->capcomm_fds;

		st->comm_fds = log_grow(st->comm_fds, &st->capcomm_fds, i + 1, sizeof *st->comm_fds);
		st->comm_fds_comm = log_grow(st->comm_fds_comm, &cap, i + 1, sizeof *st->comm_fds_comm);
		st->comm_fds[i].fd = fd;
		st->comm_fds[i].local = NULL;
		st->comm_fds_comm[i] = log_strdup(p->comm);
		st->ncomm_fds++;
	}
	free(st->comm_fds[i].local);
	st->comm_fds[i].local = log_strdup(local);
	if (!log_long(o, "backlog_requested", &req) || !log_long(o, "backlog_effective", &eff))
		return;
	for (i = 0; i < st->nbl; i++)
		if (strcmp(st->bl[i].local, local) == 0 && strcmp(st->bl[i].comm, p->comm) == 0)
			break;
	if (i == st->nbl) {
		st->bl = log_grow(st->bl, &st->capbl, st->nbl + 1, sizeof *st->bl);
		st->bl[i].comm = log_strdup(p->comm);
		st->bl[i].local = log_strdup(local);
		st->nbl++;
	}
	st->bl[i].requested = req;
	st->bl[i].effective = eff;
}

/* A log_ev from a tree, for the accept and connect lines the scanner
 * left to jansson (escapes, non-ASCII bytes). */
static void ev_from_tree(const json_t *o, struct log_ev *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->outcome = log_str(o, "outcome");
	ev->peer = log_str(o, "peer");
	ev->have_ret = log_num(o, "ret", &ev->ret);
	ev->have_listen_fd = log_num(o, "listen_fd", &ev->listen_fd);
	ev->have_connect_ms = log_num(o, "connect_ms", &ev->connect_ms);
	ev->have_syn_retrans = log_num(o, "syn_retrans", &ev->syn_retrans);
}

static void on_tree(struct mx_state *st, const json_t *o)
{
	const char *name = log_str(o, "event"), *comm = log_str(o, "comm");
	const json_t *f = json_object_get(o, "findings"), *v;
	const char *codes[LOG_EV_FINDINGS];
	struct mx_proc *p;
	struct log_ev ev;
	size_t i, n = 0;
	long pid;

	if (!name || !log_long(o, "pid", &pid))
		return;
	p = proc_get(st, pid, comm, strcmp(name, "init") == 0);
	if (!p->first_ts)
		log_num(o, "ts", &p->first_ts);
	if (strcmp(name, "init") == 0 && !p->node && log_str(o, "nodename") && log_str(o, "boot_id")) {
		p->node = log_strdup(log_str(o, "nodename"));
		p->boot = log_strdup(log_str(o, "boot_id"));
	}
	count_event(st, p->comm, name);
	LOG_ARRAY_EACH(f, i, v)
		if (json_is_string(v) && n < LOG_EV_FINDINGS)
			codes[n++] = json_string_value(v);
	count_findings(p, codes, n);
	if (strcmp(name, "accept") == 0 || strcmp(name, "connect") == 0) {
		ev_from_tree(o, &ev);
		if (name[0] == 'a')
			on_accept(st, p, &ev);
		else
			on_connect(st, p, &ev);
	} else if (strcmp(name, "listen") == 0) {
		on_listen(st, p, o);
	} else if (strcmp(name, "listener_stats") == 0) {
		on_stats(p, o, 0);
	} else if (strcmp(name, "totals") == 0) {
		if (!p->exited)   /* one the thread wrote as the summary was */
			on_figures(p, o);
	} else if (strcmp(name, "summary") == 0) {
		on_summary(p, o);
		mx_retire(st, p);
	} else if (strcmp(name, "warning") == 0) {
		p->dropped_warn += num_or0(o, "dropped");
	}
}

void mx_feed(struct mx_state *st, const char *line, size_t len)
{
	struct log_ev ev;
	json_error_t jerr;
	json_t *o;

	log_journal_inner(&st->inner, &line, &len);
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (!len)
		return;
	st->lines++;
	if (len <= sizeof st->scratch) {
		memcpy(st->scratch, line, len);
		if (log_scan(st->scratch, len, &ev) && ev.name && ev.have_pid &&
		    (strcmp(ev.name, "accept") == 0 || strcmp(ev.name, "connect") == 0)) {
			struct mx_proc *p = proc_get(st, (long)ev.pid, ev.comm, 0);

			count_event(st, p->comm, ev.name);
			count_findings(p, ev.findings, ev.nfindings);
			if (ev.name[0] == 'a')
				on_accept(st, p, &ev);
			else
				on_connect(st, p, &ev);
			return;   /* the scanner's findings point into scratch: nothing to free */
		}
	}
	o = json_loadb(line, len, JSON_ALLOW_NUL, &jerr);
	if (!json_is_object(o)) {
		st->unreadable++;
		json_decref(o);
		return;
	}
	on_tree(st, o);
	json_decref(o);
}
