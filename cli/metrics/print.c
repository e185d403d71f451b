/*
 * metrics/print.c: the Prometheus text exposition (format 0.0.4, what
 * node_exporter's textfile collector parses) of model.c's totals.
 * One HELP and one TYPE per name, all its samples together, each label
 * set once, no timestamps; label values escaped (\\, \", \n). Per
 * process, a counter is the larger of what its lines counted and what
 * its summary or listener_stats said; the samples sum processes.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"


static void label(FILE *out, const char *name, const char *v, int first)
{
	fprintf(out, "%s%s=\"", first ? "" : ",", name);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n') {
			fputs("\\n", out);
			continue;
		}
		fputc(*v, out);
	}
	fputc('"', out);
}

/* The shortest decimal that reads back as v (Prometheus parses it with
 * strtod): 1.0015, not 1.0015000000000001. */
static void put_num(FILE *out, double v)
{
	char b[40];
	int prec;

	for (prec = 15; prec < 17; prec++) {
		snprintf(b, sizeof b, "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(b, sizeof b, "%.17g", v);
	fputs(b, out);
}

static void head(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static long maxl(long a, long b)
{
	return a > b ? a : b;
}

/* ---- sums per label set ---------------------------------------------------- */

/* Label values joined with '\x1f' -> a number; a sorted, deduplicated
 * list of samples to print. */
struct agg {
	char **keys;
	double *vals;
	size_t n, cap, capv;
	size_t *slot, nslot;     /* open addressing: index + 1, 0 empty; half full at most */
};

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211u;
	return h;
}

static void agg_rehash(struct agg *a)
{
	size_t i, j;

	free(a->slot);
	a->nslot = a->nslot ? a->nslot * 2 : 64;
	a->slot = calloc(a->nslot, sizeof *a->slot);
	if (!a->slot) {
		fputs("sockaudit metrics: out of memory\n", stderr);
		exit(1);
	}
	for (i = 0; i < a->n; i++) {
		for (j = hash(a->keys[i]) & (a->nslot - 1); a->slot[j]; j = (j + 1) & (a->nslot - 1))
			;
		a->slot[j] = i + 1;
	}
}

static void agg_add(struct agg *a, const char *k1, const char *k2, const char *k3, double v)
{
	char key[1024];
	size_t j;

	snprintf(key, sizeof key, "%s\x1f%s\x1f%s", k1, k2 ? k2 : "", k3 ? k3 : "");
	if (2 * (a->n + 1) > a->nslot)
		agg_rehash(a);
	for (j = hash(key) & (a->nslot - 1); a->slot[j]; j = (j + 1) & (a->nslot - 1))
		if (strcmp(a->keys[a->slot[j] - 1], key) == 0) {
			a->vals[a->slot[j] - 1] += v;
			return;
		}
	a->keys = log_grow(a->keys, &a->cap, a->n + 1, sizeof *a->keys);
	a->vals = log_grow(a->vals, &a->capv, a->n + 1, sizeof *a->vals);
	a->keys[a->n] = log_strdup(key);
	a->vals[a->n] = v;
	a->slot[j] = ++a->n;
}

static char **sort_keys;
static int by_key(const void *x, const void *y)
{
	return strcmp(sort_keys[*(const size_t *)x], sort_keys[*(const size_t *)y]);
}

/* Samples in label order; names: the label names (NULL after the last). */
static void agg_print(FILE *out, struct agg *a, const char *metric, const char *const names[3])
{
	size_t *idx = calloc(a->n ? a->n : 1, sizeof *idx), i;
	int k;

	if (!idx) {
		fputs("sockaudit metrics: out of memory\n", stderr);
		exit(1);
	}
	for (i = 0; i < a->n; i++)
		idx[i] = i;
	sort_keys = a->keys;
	qsort(idx, a->n, sizeof *idx, by_key);
	for (i = 0; i < a->n; i++) {
		char *key = a->keys[idx[i]], *parts[3], *p = key;

		for (k = 0; k < 3; k++) {
			parts[k] = p;
			p = strchr(p, '\x1f');
			if (p)
				*p++ = '\0';
			else
				p = parts[k] + strlen(parts[k]);
		}
		fprintf(out, "%s{", metric);
		for (k = 0; k < 3 && names[k]; k++)
			label(out, names[k], parts[k], k == 0);
		fputs("} ", out);
		put_num(out, a->vals[idx[i]]);
		fputc('\n', out);
	}
	for (i = 0; i < a->n; i++)
		free(a->keys[i]);
	free(a->keys);
	free(a->vals);
	free(a->slot);
	free(idx);
	memset(a, 0, sizeof *a);
}

/* ---- the metrics ------------------------------------------------------------- */

/* One program's connect-time histogram: the processes of that comm summed. */
struct conn_hist {
	char *comm;
	double b[SA_CONN_NBUCKETS];
	double sum;
};

/* Each process's histogram (its summary's when that has at least what its
 * lines had) added to its comm's, the comms in name order. */
static struct conn_hist *hist_by_comm(const struct mx_state *st, size_t *nhp)
{
	struct conn_hist *h = NULL;
	size_t nh = 0, caph = 0, i, j;
	int k;

	for (i = 0; i < st->nprocs; i++) {
		const struct mx_proc *p = st->procs[i];
		const long *b;
		double sum;
		long nsum = 0, nev = p->ev_timed;

		for (k = 0; k < SA_CONN_NBUCKETS; k++)
			nsum += p->sum_hist[k];
		/* The summary when it has at least what the lines had. */
		if (p->have_sum_hist && nsum >= nev) {
			b = p->sum_hist;
			sum = p->have_sum_sum ? p->sum_sum_ms : p->ev_sum_ms;
		} else {
			b = p->ev_hist;
			sum = p->ev_sum_ms;
		}
		for (j = 0; j < nh; j++)
			if (strcmp(h[j].comm, p->comm) == 0)
				break;
		if (j == nh) {
			h = log_grow(h, &caph, nh + 1, sizeof *h);
			memset(&h[j], 0, sizeof h[j]);
			h[j].comm = p->comm;
			nh++;
		}
		for (k = 0; k < SA_CONN_NBUCKETS; k++)
			h[j].b[k] += (double)b[k];
		h[j].sum += sum / 1000.0;
	}
	for (j = 1; j < nh; j++)      /* by comm, as the other metrics */
		for (i = j; i > 0 && strcmp(h[i - 1].comm, h[i].comm) > 0; i--) {
			struct conn_hist t = h[i];
			h[i] = h[i - 1];
			h[i - 1] = t;
		}
	*nhp = nh;
	return h;
}

/* The histogram lines: cumulative buckets, then _sum and _count. */
static void hist_print(FILE *out, const struct conn_hist *h, size_t nh)
{
	static const double le[SA_CONN_NBUCKETS - 1] = { 0.01, 0.1, 0.5, 1, 1.5, 2.5, 3.5 };
	size_t j;
	int k;

	for (j = 0; j < nh; j++) {
		double cum = 0;

		for (k = 0; k < SA_CONN_NBUCKETS; k++) {
			cum += h[j].b[k];
			fputs("sockaudit_connect_duration_seconds_bucket{", out);
			label(out, "comm", h[j].comm, 1);
			if (k < SA_CONN_NBUCKETS - 1)
				fprintf(out, ",le=\"%g\"} ", le[k]);
			else
				fputs(",le=\"+Inf\"} ", out);
			put_num(out, cum);
			fputc('\n', out);
		}
		fputs("sockaudit_connect_duration_seconds_sum{", out);
		label(out, "comm", h[j].comm, 1);
		fputs("} ", out);
		put_num(out, h[j].sum);
		fputs("\nsockaudit_connect_duration_seconds_count{", out);
		label(out, "comm", h[j].comm, 1);
		fputs("} ", out);
		put_num(out, cum);
		fputc('\n', out);
	}
}

static void print_connects(const struct mx_state *st, FILE *out)
{
	static const char *const lc[3] = { "comm", "outcome", NULL }, *const lcomm[3] = { "comm", NULL, NULL };
	struct agg a = { 0 }, r = { 0 };
	struct conn_hist *h;
	size_t i, nh;
	int k;

	head(out, "sockaudit_connects_total", "counter",
	     "Connects by final outcome (ok, failed, abandoned, interrupted), per program.");
	for (i = 0; i < st->nprocs; i++)
		for (k = 0; k < MX_OUTCOMES; k++)
			agg_add(&a, st->procs[i]->comm, mx_outcome_name(k), NULL,
				(double)maxl(st->procs[i]->ev_conn[k], st->procs[i]->sum_conn[k]));
	agg_print(out, &a, "sockaudit_connects_total", lc);

	/* Histogram: per comm, cumulative buckets. */
	head(out, "sockaudit_connect_duration_seconds", "histogram",
	     "Time of TCP connects that succeeded, from connect() to established; 1-1.5, 1.5-2.5 and 2.5-3.5 s hold the connects that waited for 1, 2, 3 SYN resends.");
	h = hist_by_comm(st, &nh);
	hist_print(out, h, nh);
	free(h);

	head(out, "sockaudit_syn_retransmits_total", "counter",
	     "SYNs the kernel resent for this program's TCP connects (a full accept queue or lost SYNs on the way).");
	for (i = 0; i < st->nprocs; i++)
		agg_add(&r, st->procs[i]->comm, NULL, NULL, (double)maxl(st->procs[i]->ev_retr, st->procs[i]->sum_retr));
	agg_print(out, &r, "sockaudit_syn_retransmits_total", lcomm);
}

static long peer_total(const struct mx_peer *p)
{
	long t = 0;
	int k;

	for (k = 0; k < MX_OUTCOMES; k++)
		t += p->n[k];
	return t;
}

/* The top N peers by connect lines over all programs; the rest "other". */
static void print_peers(const struct mx_state *st, FILE *out)
{
	static const char *const names[3] = { "comm", "peer", "outcome" };
	struct agg tot = { 0 }, a = { 0 };
	size_t i, j, *rank;
	char **top;
	int k, ntop = 0;

	head(out, "sockaudit_connect_lines_total", "counter",
	     "Connect lines logged per peer and outcome (all connects at trace, failed and slow ones below it); the top peers by lines, the rest as peer=\"other\" (--top-peers).");
	for (i = 0; i < st->npeers; i++)
		agg_add(&tot, st->peers[i].peer, NULL, NULL, (double)peer_total(&st->peers[i]));
	rank = calloc(tot.n ? tot.n : 1, sizeof *rank);
	top = calloc((size_t)st->top_peers + 1, sizeof *top);
	if (!rank || !top) {
		fputs("sockaudit metrics: out of memory\n", stderr);
		exit(1);
	}
	/* Pick the top N by count (ties: the lower address), N small. */
	for (k = 0; k < st->top_peers; k++) {
		long best = -1;
		size_t bi = 0;

		for (i = 0; i < tot.n; i++)
			if (!rank[i] && ((long)tot.vals[i] > best ||
					 ((long)tot.vals[i] == best && strcmp(tot.keys[i], tot.keys[bi]) < 0))) {
				best = (long)tot.vals[i];
				bi = i;
			}
		if (best < 0)
			break;
		rank[bi] = 1;
		top[ntop++] = tot.keys[bi];
	}
	for (i = 0; i < st->npeers; i++) {
		const char *peer = "other";
		char pk[1024];

		for (j = 0; j < (size_t)ntop; j++) {
			snprintf(pk, sizeof pk, "%s\x1f\x1f", st->peers[i].peer);
			if (strcmp(top[j], pk) == 0) {
				peer = st->peers[i].peer;
				break;
			}
		}
		for (k = 0; k < MX_OUTCOMES; k++)
			if (st->peers[i].n[k])
				agg_add(&a, st->peers[i].comm, peer, mx_outcome_name(k), (double)st->peers[i].n[k]);
	}
	agg_print(out, &a, "sockaudit_connect_lines_total", names);
	free(rank);
	free(top);
	for (i = 0; i < tot.n; i++)
		free(tot.keys[i]);
	free(tot.keys);
	free(tot.vals);
	free(tot.slot);
}

static void print_listeners(const struct mx_state *st, FILE *out)
{
	static const char *const lcl[3] = { "comm", "listener", NULL }, *const lclc[3] = { "comm", "listener", "cause" },
				  *const lk[3] = { "comm", "listener", "kind" };
	struct agg acc = { 0 }, full = { 0 }, empty = { 0 }, bl = { 0 };
	size_t i, j;

	for (i = 0; i < st->nprocs; i++) {
		const struct mx_proc *p = st->procs[i];

		for (j = 0; j < p->nlst; j++) {
			const struct mx_plst *l = &p->lst[j];
			long e = maxl(l->st_empty, l->sum_empty);
			long rest = e - l->st_empty_defer - l->st_empty_syncookie;

			agg_add(&acc, p->comm, l->local, NULL, (double)maxl(maxl(l->ev_accepts, l->st_accepts), l->sum_accepts));
			agg_add(&full, p->comm, l->local, NULL, (double)maxl(l->st_queue_full, l->sum_queue_full));
			agg_add(&empty, p->comm, l->local, "defer_expired", (double)l->st_empty_defer);
			agg_add(&empty, p->comm, l->local, "syncookie", (double)l->st_empty_syncookie);
			agg_add(&empty, p->comm, l->local, "no_data", (double)(rest > 0 ? rest : 0));
		}
	}
	head(out, "sockaudit_accepts_total", "counter", "Connections accepted, per program and listening address.");
	agg_print(out, &acc, "sockaudit_accepts_total", lcl);
	head(out, "sockaudit_accept_queue_full_total", "counter",
	     "Accepts that found the listener's accept queue at capacity (new connections were being refused or dropped).");
	agg_print(out, &full, "sockaudit_accept_queue_full_total", lcl);
	head(out, "sockaudit_empty_accepts_total", "counter",
	     "Connections accepted with no request data waiting, by cause: defer_expired (TCP_DEFER_ACCEPT ran out), syncookie (a cookie bypassed the deferral), no_data (among those checked).");
	agg_print(out, &empty, "sockaudit_empty_accepts_total", lclc);
	for (i = 0; i < st->nbl; i++) {
		agg_add(&bl, st->bl[i].comm, st->bl[i].local, "requested", (double)st->bl[i].requested);
		agg_add(&bl, st->bl[i].comm, st->bl[i].local, "effective", (double)st->bl[i].effective);
	}
	head(out, "sockaudit_listen_backlog", "gauge",
	     "listen() backlog as the program asked (requested) and as the kernel set it (effective), from the last listen on the address.");
	agg_print(out, &bl, "sockaudit_listen_backlog", lk);
}

static void print_process(const struct mx_state *st, FILE *out)
{
	static const char *const lcc[3] = { "comm", "code", NULL }, *const lcomm[3] = { "comm", NULL, NULL },
				  *const lce[3] = { "comm", "event", NULL }, *const lcs[3] = { "comm", "state", NULL };
	struct agg f = { 0 }, d = { 0 }, ev = { 0 }, pr = { 0 };
	size_t i;

	for (i = 0; i < st->nprocs; i++) {
		const struct mx_proc *p = st->procs[i];
		const char *code, *state;
		json_t *v;
		void *it;

		/* Per code: the larger of the summary's total and the lines. */
		LOG_OBJECT_EACH(p->sum_find, it, code, v) {
			long n = json_is_integer(v) ? (long)json_integer_value(v) : 0;
			json_t *e = json_object_get(p->ev_find, code);

			agg_add(&f, p->comm, code, NULL, (double)maxl(n, e ? (long)json_integer_value(e) : 0));
		}
		LOG_OBJECT_EACH(p->ev_find, it, code, v)
			if (!json_object_get(p->sum_find, code))
				agg_add(&f, p->comm, code, NULL, (double)json_integer_value(v));
		agg_add(&d, p->comm, NULL, NULL, (double)maxl(p->dropped_warn, p->dropped_sum));
		state = p->exited ? "exited" :
			log_alive(p->pid, p->node, p->boot, p->first_ts) == LOG_ALIVE_GONE ? "ended" : "running";
		agg_add(&pr, p->comm, "exited", NULL, 0);
		agg_add(&pr, p->comm, "ended", NULL, 0);
		agg_add(&pr, p->comm, "running", NULL, 0);
		agg_add(&pr, p->comm, state, NULL, p->retired ? (double)p->retired : 1);
	}
	head(out, "sockaudit_findings_total", "counter",
	     "Findings per code (see docs/findings.md), per program: the larger of the lines and the exit summary, per process.");
	agg_print(out, &f, "sockaudit_findings_total", lcc);
	head(out, "sockaudit_lines_dropped_total", "counter",
	     "Lines the library could not write (a full pipe, a full disk, no journal), as its warning lines and summaries say.");
	agg_print(out, &d, "sockaudit_lines_dropped_total", lcomm);
	for (i = 0; i < st->nevc; i++)
		agg_add(&ev, st->evc[i].comm, st->evc[i].event, NULL, (double)st->evc[i].n);
	head(out, "sockaudit_log_lines_total", "counter", "Lines read from the logs, per program and event.");
	agg_print(out, &ev, "sockaudit_log_lines_total", lce);
	head(out, "sockaudit_processes", "gauge",
	     "Processes seen in the logs: exited (their summary was read), ended (no summary, and its pid is gone from the "
	     "machine and boot its log names: SIGKILL, a crash) or running (neither).");
	agg_print(out, &pr, "sockaudit_processes", lcs);
	head(out, "sockaudit_unreadable_lines_total", "counter", "Lines in the logs that are not one JSON object.");
	fprintf(out, "sockaudit_unreadable_lines_total %ld\n", st->unreadable);
}

void mx_print(const struct mx_state *st, FILE *out)
{
	print_connects(st, out);
	print_peers(st, out);
	print_listeners(st, out);
	print_process(st, out);
}
