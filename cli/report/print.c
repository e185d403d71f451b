/*
 * report/print.c: the gathered state -> a report a person reads in ten
 * seconds. Sections: input, what to fix first, processes, listeners
 * (print_listener.c), option read-back, connects, findings,
 * namespace counters.
 *
 * Every string printed came from a log anyone could have written: control
 * characters are escaped so a log cannot drive the terminal. Colour only
 * when asked (verb.c decides: a terminal, no NO_COLOR).
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "report/report.h"

#define BAR_WIDTH 40


static void style_set(int colour)
{
	static const struct tp_style on = { "\033[1m", "\033[31m", "\033[33m", "\033[32m", "\033[2m",
					  "\033[0m" };
	static const struct tp_style off = { "", "", "", "", "", "" };

	tp_S = colour ? on : off;
}


void tp_cell(FILE *out, const char *s, int width)
{
	int n = tp_safe(out, s, width > 2 ? width - 1 : 0);

	for (; n < width; n++)
		fputc(' ', out);
}





/* A JSON value in a table cell: compact, shortened. */
void tp_json_cell(FILE *out, const json_t *v, int width)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	tp_cell(out, s ? s : "-", width);
	free(s);
}




/* ---- sections ---------------------------------------------------------------- */

static void print_input(const struct rp_state *st, FILE *out)
{
	const char *k;
	json_t *v;
	void *it;

	fprintf(out, "%ssockaudit report%s: %ld lines, %ld events, %zu processes",
		tp_S.bold, tp_S.off, st->lines, st->events, st->nprocs);
	if (st->skipped) {
		fprintf(out, ", %s%ld lines skipped%s (", tp_S.yellow, st->skipped, tp_S.off);
		fprintf(out, "%ld not JSON", st->skipped - st->not_object - st->too_long);
		if (st->not_object)
			fprintf(out, ", %ld not an object", st->not_object);
		if (st->too_long)
			fprintf(out, ", %ld too long", st->too_long);
		fputc(')', out);
	}
	fputc('\n', out);
	if (json_object_size(st->counts)) {
		fputs("  events: ", out);
		tp_counts(out, st->counts, 0);
		fputc('\n', out);
	}
	LOG_OBJECT_EACH(st->warnings, it, k, v) {
		fprintf(out, "  %slibrary warning%s (%" JSON_INTEGER_FORMAT "x): ", tp_S.yellow, tp_S.off,
			json_integer_value(v));
		tp_safe(out, k, 300);
		fputc('\n', out);
	}
}

/* The process's title line: pid, comm, its time span and settings. */
static void print_proc_title(const struct rp_proc *p, FILE *out)
{
	const char *s;
	long n;

	if (p->pid >= 0)
		fprintf(out, "  %spid %ld%s  ", tp_S.bold, p->pid, tp_S.off);
	else
		fprintf(out, "  %spid ?%s  ", tp_S.bold, tp_S.off);
	tp_safe(out, p->comm, 32);
	if (p->first_ts > 0) {
		fputs("  ", out);
		tp_time(out, p->first_ts);
		fputs("-", out);
		tp_time(out, p->last_ts);
		fprintf(out, " UTC (%.1f s)", p->last_ts - p->first_ts);
	}
	fprintf(out, "  %ld events", p->events);
	if (p->init) {
		if ((s = log_str(p->init, "level"))) {
			fputs("  level ", out);
			tp_safe(out, s, 10);
		}
		if ((s = log_str(p->init, "kernel"))) {
			fputs("  kernel ", out);
			tp_safe(out, s, 40);
		}
		if (log_long(p->init, "somaxconn", &n))
			fprintf(out, "  somaxconn %ld", n);
	}
	fputc('\n', out);
}

/* The process's own figures (its summary, or its last totals line). */
static void print_proc_figures(const json_t *sum, FILE *out)
{
	const json_t *q;
	struct log_pct pct;
	long n;

	/* Zeros are left out: a process that made no connect has no
	 * connect line, one that never set TCP_QUICKACK no QUICKACK line. */
	if (log_pct_get(sum, "connect_ms", &pct) && pct.n != 0 &&
	    (pct.n > 0 || pct.max > 0 || pct.p50 > 0))
		tp_pct(out, "connect_ms", &pct, "ms");
	if (log_long(sum, "syn_retrans_total", &n) && n)
		fprintf(out, "    %-14s %s%ld%s\n", "SYN retrans", tp_S.yellow, n, tp_S.off);
	q = json_object_get(sum, "quickack");
	if (json_is_object(q) && !tp_all_zero(q)) {
		long hot = 0;

		fprintf(out, "    %-14s ", "TCP_QUICKACK");
		if (log_long(q, "hot_loops", &hot) && hot)
			fputs(tp_S.red, out);
		tp_counts(out, q, 0);
		fprintf(out, "%s\n", hot ? tp_S.off : "");
	}
	{
		long dropped = 0, supp = 0;
		int hd = log_long(sum, "dropped", &dropped), hs = log_long(sum, "suppressed", &supp);

		if ((hd && dropped) || (hs && supp)) {
			fprintf(out, "    %-14s", "lines");
			if (hd)
				fprintf(out, " dropped %s%ld%s", dropped ? tp_S.red : "", dropped,
					dropped ? tp_S.off : "");
			if (hs)
				fprintf(out, "  suppressed (repeats counted, not logged) %ld", supp);
			fputc('\n', out);
		}
	}
	if (log_long(sum, "listeners_omitted", &n) && n)
		fprintf(out, "    %-14s %ld listeners left out of the summary line\n", "listeners", n);
	q = json_object_get(sum, "counts");
	if (json_is_object(q)) {
		fprintf(out, "    %-14s ", "calls seen");
		tp_counts(out, q, 1);
		fputc('\n', out);
	}
}

static void print_proc(const struct rp_proc *p, FILE *out)
{
	const json_t *sum = rp_figures(p);

	print_proc_title(p, out);
	if (!p->summary && sum) {
		fprintf(out, "    %sno summary line yet: figures as of its last totals line, ", tp_S.dim);
		tp_time(out, p->totals_ts);
		fprintf(out, " UTC%s\n", tp_S.off);
	}
	if (!sum) {
		enum log_alive al = log_alive(p->pid, log_str(p->init, "nodename"), log_str(p->init, "boot_id"), p->first_ts);

		fprintf(out, "    %sno summary line: %s%s\n", tp_S.dim,
			al == LOG_ALIVE_GONE ? "the process ended without one (its pid is gone: SIGKILL, a crash, or it exec'd), "
					       "these are its last figures" :
			al == LOG_ALIVE_YES ? "the process is still running (these figures are as of its last line)" :
			"the process was still running, was killed, or exec'd", tp_S.off);
		return;
	}
	print_proc_figures(sum, out);
}

static void print_procs(const struct rp_state *st, FILE *out)
{
	size_t i;

	if (!st->nprocs)
		return;
	tp_heading(out, "Processes");
	for (i = 0; i < st->nprocs && i < MAX_ROWS; i++)
		print_proc(&st->procs[i], out);
	if (st->nprocs > MAX_ROWS)
		fprintf(out, "  ... %zu more processes\n", st->nprocs - MAX_ROWS);
}

static void print_optdiffs(const struct rp_state *st, FILE *out)
{
	size_t i;

	if (!st->ndiffs)
		return;
	tp_heading(out, "Option read-back: effective differs from requested");
	fprintf(out, "  %s", tp_S.dim);
	tp_cell(out, "program", 16);
	tp_cell(out, "level", 12);
	tp_cell(out, "option", 22);
	tp_cell(out, "requested", 14);
	tp_cell(out, "effective", 14);
	tp_cell(out, "count", 7);
	fprintf(out, "finding%s\n", tp_S.off);
	for (i = 0; i < st->ndiffs && i < MAX_ROWS; i++) {
		const struct rp_optdiff *d = &st->diffs[i];
		json_t *f;
		size_t k;

		fputs("  ", out);
		tp_cell(out, d->comm, 16);
		tp_cell(out, d->sol, 12);
		tp_cell(out, d->opt, 22);
		tp_json_cell(out, d->requested, 14);
		fputs(tp_S.yellow, out);
		tp_json_cell(out, d->effective, 14);
		fputs(tp_S.off, out);
		fprintf(out, "%-7ld", d->count);
		LOG_ARRAY_EACH(d->findings, k, f) {
			fputs(k ? "," : "", out);
			tp_safe(out, json_string_value(f), 40);
		}
		fputc('\n', out);
	}
	if (st->ndiffs > MAX_ROWS)
		fprintf(out, "  ... %zu more rows\n", st->ndiffs - MAX_ROWS);
	if (st->diffs_over)
		fprintf(out, "  ... and %ld more differences not tabulated\n", st->diffs_over);
}

/* The 1, 2 and 3 s clusters are SYN retransmissions: say so beside them. */
static const char *const bucket_note[SA_CONN_NBUCKETS] = {
	"", "", "", "",
	"~1 s: one SYN retransmitted",
	"~2 s: two SYN retransmissions (kernel >= 6.5)",
	"~3 s: three (>= 6.5) or two (older kernels) SYN retransmissions",
	"longer: more retransmissions or a slow peer",
};

static void print_hist(FILE *out, const long *h, const char *title)
{
	long max = 0;
	int b, i, w;

	for (b = 0; b < SA_CONN_NBUCKETS; b++)
		if (h[b] > max)
			max = h[b];
	if (!max)       /* an all-zero histogram says nothing */
		return;
	fputs(title, out);
	for (b = 0; b < SA_CONN_NBUCKETS; b++) {
		w = max ? (int)((h[b] * BAR_WIDTH + max - 1) / max) : 0;
		fprintf(out, "    %-10s |%s", sa_conn_bucket_names[b], b >= 4 && h[b] ? tp_S.red : "");
		for (i = 0; i < BAR_WIDTH; i++)
			fputc(i < w ? '#' : ' ', out);
		fprintf(out, "%s %7ld", b >= 4 && h[b] ? tp_S.off : "", h[b]);
		if (h[b] && *bucket_note[b])
			fprintf(out, "  %s", bucket_note[b]);
		fputc('\n', out);
	}
}

static void print_connects(const struct rp_state *st, FILE *out)
{
	const struct rp_connects *c = &st->conn;
	int b, slow = 0;

	/* Summaries of processes that made no connect say 0 everywhere. */
	if (!c->logged && !c->syn_retrans_total && !(c->sum_outcome[0] + c->sum_outcome[1] +
						     c->sum_outcome[2]))
		return;
	tp_heading(out, "Connects");
	if (c->logged) {
		fprintf(out, "  logged connect events: %ld (ok %ld", c->logged, c->ok);
		if (c->pending)
			fprintf(out, ", in progress when logged %ld", c->pending);
		if (c->abandoned)
			fprintf(out, ", abandoned before the handshake finished %ld", c->abandoned);
		if (c->interrupted)
			fprintf(out, ", interrupted by a signal %ld", c->interrupted);
		if (c->failed) {
			fputs(", failed: ", out);
			tp_counts(out, c->by_errno, 1);
		}
		fputs(")\n", out);
		if (c->syn_retrans[0] + c->syn_retrans[1] + c->syn_retrans[2] + c->syn_retrans[3] +
		    c->syn_retrans[4])
			fprintf(out, "  SYN retransmissions per connect: 0: %ld, 1: %ld, 2: %ld, 3: %ld, "
				"4+: %ld\n", c->syn_retrans[0], c->syn_retrans[1], c->syn_retrans[2],
				c->syn_retrans[3], c->syn_retrans[4]);
	}
	if (c->have_sum_outcome) {
		fprintf(out, "  all connects (summaries): ok %ld, failed %ld, abandoned %ld",
			c->sum_outcome[0], c->sum_outcome[1], c->sum_outcome[2]);
		if (c->sum_outcome[3])
			fprintf(out, ", interrupted %ld", c->sum_outcome[3]);
		fputc('\n', out);
	}
	if (c->have_syn_retrans_total)
		fprintf(out, "  SYN retransmissions, all processes (summaries): %ld\n",
			c->syn_retrans_total);
	if (c->have_sum_hist) {
		print_hist(out, c->sum_hist, "  connect time, every connect (from the summaries):\n");
		for (b = 4; b < SA_CONN_NBUCKETS; b++)
			slow += c->sum_hist[b] > 0;
	} else if (c->logged) {
		print_hist(out, c->hist,
			   "  connect time, logged connects only (trace level logs them all):\n");
		for (b = 4; b < SA_CONN_NBUCKETS; b++)
			slow += c->hist[b] > 0;
	}
	if (slow)
		fprintf(out, "  %sConnects near 1, 2 or 3 s are SYNs the client sent again: the peer's "
			"accept queue was full or its SYNs were dropped. Check the peer's listener "
			"(backlog, queue_full) and ListenOverflows.%s\n", tp_S.yellow, tp_S.off);
}

static void print_netns(const struct rp_state *st, FILE *out)
{
	size_t i, any = 0;

	for (i = 0; i < st->nprocs; i++) {
		const json_t *n = json_object_get(st->procs[i].summary, "netns_counters");

		if (!json_is_object(n) || tp_all_zero(n))
			continue;
		if (any >= MAX_ROWS) {
			any++;
			continue;
		}
		if (!any++)
			tp_heading(out, "Network namespace TCP counters (namespace-wide deltas while each "
				"process ran, not only its own traffic)");
		fprintf(out, "  pid %ld ", st->procs[i].pid);
		tp_safe(out, st->procs[i].comm, 32);
		fputs(": ", out);
		tp_counts(out, n, 1);
		fputc('\n', out);
	}
	if (any > MAX_ROWS)
		fprintf(out, "  ... %zu more processes with counters (processes whose counters "
			"were all 0 are left out)\n", any - MAX_ROWS);
}

void rp_print(const struct rp_state *st, FILE *out, int colour)
{
	style_set(colour);
	print_input(st, out);
	tp_top(st, out);
	print_procs(st, out);
	tp_listeners(st, out);
	print_optdiffs(st, out);
	print_connects(st, out);
	tp_findings(st, out);
	print_netns(st, out);
}
