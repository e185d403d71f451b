/*
 * report/svg.c: the page's charts, SVG written directly (as
 * systemd-analyze plot does): each listener's listener_stats intervals and
 * each peer's connect times on a log scale with this kernel's SYN
 * retransmission points. Every chart is followed by a <details> table of
 * the same numbers.
 */
#include <math.h>
#include <string.h>

#include "report/report.h"

#define W 760
#define H 170
#define L 56   /* left margin: y labels */
#define B 30   /* bottom margin: x labels */

static double xpos(size_t i, size_t n)
{
	return L + (n > 1 ? (double)i * (W - L - 10) / (double)(n - 1) : (W - L - 10) / 2.0);
}

static double ypos(double v, double max)
{
	return 8 + (H - B - 8) * (1 - (max > 0 ? v / max : 0));
}

static void axes(FILE *out, double max, const char *ylabel, double t0, double t1)
{
	fprintf(out, "<line class=axis x1=%d y1=%d x2=%d y2=%d />", L, H - B, W - 10, H - B);
	fprintf(out, "<line class=axis x1=%d y1=8 x2=%d y2=%d />", L, L, H - B);
	fprintf(out, "<text x=%d y=14 text-anchor=end>", L - 4);
	h_num(out, max);
	fprintf(out, "</text><text x=%d y=%d text-anchor=end>0</text>", L - 4, H - B);
	fprintf(out, "<text x=4 y=%d>", H / 2);
	h_esc(out, ylabel);
	fputs("</text>", out);
	if (t1 > t0) {
		fprintf(out, "<text x=%d y=%d>", L, H - 10);
		tp_time(out, t0);
		fprintf(out, " UTC</text><text x=%d y=%d text-anchor=end>+%.0f s</text>", W - 10, H - 10,
			t1 - t0);
	}
}

/* A line over the intervals, with an optional dashed capacity line. */
static void series_chart(FILE *out, const char *title, const struct rp_listener *l,
			 const double *y, double cap, const char *ylabel)
{
	double max = cap;
	size_t i, n = l->nseries;

	for (i = 0; i < n; i++)
		if (y[i] > max)
			max = y[i];
	if (max <= 0)
		max = 1;
	fprintf(out, "<h3>%s</h3>\n<svg role=img aria-label=\"", title);
	h_esc(out, title);
	fprintf(out, "\" viewBox=\"0 0 %d %d\" width=%d height=%d>", W, H, W, H);
	axes(out, max, ylabel, n ? l->series[0].ts : 0, n ? l->series[n - 1].ts : 0);
	if (cap > 0) {
		fprintf(out, "<line class=cap x1=%d y1=%.1f x2=%d y2=%.1f />", L, ypos(cap, max), W - 10,
			ypos(cap, max));
		fprintf(out, "<text x=%d y=%.1f text-anchor=end>capacity ", W - 12, ypos(cap, max) + 13);
		h_num(out, cap);
		fputs("</text>", out);
	}
	if (n == 1)
		fprintf(out, "<circle cx=%.1f cy=%.1f r=4 />", xpos(0, 1), ypos(y[0], max));
	else {
		fputs("<polyline class=line points=\"", out);
		for (i = 0; i < n; i++)
			fprintf(out, "%.1f,%.1f ", xpos(i, n), ypos(y[i], max));
		fputs("\" />", out);
	}
	fputs("</svg>\n", out);
}

/* The panel's opening and its title: program, pid, fd, address, place. */
static void listener_title(const struct rp_state *rs, const struct rp_listener *l, FILE *out)
{
	fprintf(out, "<article class=\"panel listener\" data-pid=%ld data-fd=%ld data-local=\"", l->pid,
		l->fd);
	h_esc(out, l->local ? l->local : "");
	fputs("\"><h3>", out);
	h_esc(out, l->comm);
	fprintf(out, "[%ld] fd %ld &nbsp;", l->pid, l->fd);
	h_esc(out, l->local && *l->local ? l->local : "(address unknown)");
	{
		char where[160];

		if (rp_place(rs, l->pid, where, sizeof where)) {
			fputs(" <span class=dim>", out);
			h_esc(out, where);
			fputs("</span>", out);
		}
	}
	fputs("</h3>\n", out);
}

/* Backlog and deferral, requested against effective; returns how many
 * connections the queue holds (the y limit of the queue chart). */
static double settings_table(const struct rp_listener *l, FILE *out)
{
	const json_t *st = l->stats;
	double cap = (double)l->queue_capacity;
	long n;

	fputs("<table><tr><th>backlog requested</th><th>effective</th><th>somaxconn</th>"
	      "<th>queue holds</th><th>deferral requested</th><th>effective</th></tr><tr>", out);
	if (!cap && log_long(st, "backlog", &n))
		cap = (double)n + 1;
	if (l->have_backlog_req)
		fprintf(out, "<td class=n>%ld</td>", l->backlog_requested);
	else
		fputs("<td>(inherited)</td>", out);
	if (l->have_backlog_eff)   /* shaded and marked when it differs */
		fprintf(out, "<td class=\"n%s\">%s%ld</td>",
			l->have_backlog_req && l->backlog_effective != l->backlog_requested ?
			" differs" : "", l->have_backlog_req && l->backlog_effective !=
			l->backlog_requested ? "&ne; " : "", l->backlog_effective);
	else if (log_long(st, "backlog", &n))
		fprintf(out, "<td class=n>%ld</td>", n);
	else
		fputs("<td>?</td>", out);
	if (l->have_somaxconn)
		fprintf(out, "<td class=n>%ld</td>", l->somaxconn);
	else
		fputs("<td>?</td>", out);
	fputs("<td class=n>", out);
	h_num(out, cap);
	fputs("</td><td class=n>", out);
	if (l->have_defer_req) {
		h_num(out, l->defer_req_s);
		fputs(" s", out);
	} else
		fputs("-", out);
	if (l->have_defer_req && l->have_defer_eff && l->defer_eff_s != l->defer_req_s)
		fputs("</td><td class=\"n differs\">&ne; ", out);
	else
		fputs("</td><td class=n>", out);
	if (l->have_defer_eff) {
		h_num(out, l->defer_eff_s);
		fputs(" s", out);
	} else
		fputs("-", out);
	fputs("</td></tr></table>\n", out);
	return cap;
}

/* The listener_stats intervals: two charts when there are two or more,
 * and the intervals as a table. */
static void series_part(const struct rp_listener *l, double cap, FILE *out)
{
	double y[RP_SERIES_MAX];
	size_t i;

	/* One interval is a point, not a picture: then only the table. */
	if (l->nseries >= 2) {
		for (i = 0; i < l->nseries; i++)
			y[i] = (double)l->series[i].peak_waiting;
		series_chart(out, "Accept queue: most connections waiting so far, against its capacity",
			     l, y, cap, "waiting");
		for (i = 0; i < l->nseries; i++)
			y[i] = l->series[i].wait_p99;
		series_chart(out, "Accept waits: p99 of the time blocked in accept() so far (ms)", l, y,
			     0, "ms");
	}
	if (l->nseries) {
		fputs(l->nseries >= 2 ? "<details><summary>The intervals as a table</summary>" :
		      "<details open><summary>listener_stats</summary>", out);
		fputs("<table class=sort><thead><tr>"
		      "<th>time (UTC)</th><th class=n>accepts so far</th><th class=n>in the interval</th>"
		      "<th class=n>most waiting</th><th class=n>queue full seen</th><th class=n>empty "
		      "accepts</th><th class=n>wait p99 ms</th><th class=n>queue p99 ms</th></tr></thead>"
		      "<tbody>\n", out);
		for (i = 0; i < l->nseries; i++) {
			const struct rp_point *p = &l->series[i];

			fputs("<tr><td>", out);
			tp_time(out, p->ts);
			fprintf(out, "</td><td class=n>%ld</td><td class=n>%ld</td><td class=n>%ld</td>"
				"<td class=n>%ld</td><td class=n>%ld</td><td class=n>", p->accepts,
				i ? p->accepts - l->series[i - 1].accepts : p->accepts, p->peak_waiting,
				p->queue_full, p->empty);
			h_num(out, p->wait_p99);
			fputs("</td><td class=n>", out);
			h_num(out, p->queue_p99);
			fputs("</td></tr>\n", out);
		}
		fputs("</tbody></table></details>\n", out);
	}
}

/* The latest percentiles of queue age and accept wait, and the empty
 * accepts by cause. */
static void percentiles_part(const struct rp_listener *l, FILE *out)
{
	const json_t *st = l->stats;
	struct log_pct pct;
	long e1 = l->empty_defer_expired, e2 = l->empty_syncookie, empty = -1;

	if (st) {
		static const char *const keys[2] = { "queue_ms", "wait_ms" };
		static const char *const what[2] = { "queue age: established, waiting in the queue",
						     "blocked in accept()" };
		int k, any = 0;

		for (k = 0; k < 2; k++) {
			if (!log_pct_get(st, keys[k], &pct))
				continue;
			if (!any++)
				fputs("<table><tr><th>ms</th><th class=n>p50</th><th class=n>p95</th>"
				      "<th class=n>p99</th><th class=n>max</th><th class=n>n</th></tr>", out);
			fprintf(out, "<tr><td>%s</td>", what[k]);
			fputs("<td class=n>", out); h_num(out, pct.p50);
			fputs("</td><td class=n>", out); h_num(out, pct.p95);
			fputs("</td><td class=n>", out); h_num(out, pct.p99);
			fputs("</td><td class=n>", out); h_num(out, pct.max);
			fputs("</td><td class=n>", out); h_num(out, pct.n);
			fputs("</td></tr>", out);
		}
		if (any)
			fputs("</table>\n", out);
		log_long(st, "empty_accepts", &empty);
		log_long(st, "empty_defer_expired", &e1);
		log_long(st, "empty_syncookie", &e2);
	}
	if (empty > 0 || e1 > 0 || e2 > 0) {
		fputs("<table><tr><th>empty accepts (no data yet)</th><th class=n>count</th></tr>", out);
		if (empty >= 0)
			fprintf(out, "<tr><td>all</td><td class=n>%ld</td></tr>", empty);
		fprintf(out, "<tr><td>after the deferral expired</td><td class=n>%ld</td></tr>"
			"<tr><td>through SYN cookies</td><td class=n>%ld</td></tr></table>\n", e1, e2);
	}
}

static void listener_panel(const struct rp_state *rs, const struct rp_listener *l, FILE *out)
{
	double cap;

	listener_title(rs, l, out);
	cap = settings_table(l, out);
	series_part(l, cap, out);
	percentiles_part(l, out);
	fputs("</article>\n", out);
}

void h_listeners(const struct rp_state *st, FILE *out)
{
	size_t i, total = 0;

	for (i = 0; i < st->nlsts; i++) {
		const struct rp_listener *l = &st->lsts[i];

		if (!l->have_listen && !l->stats && !l->accepts_logged)
			continue;
		if (!total++)
			fputs("<section id=listeners><h2>Listeners</h2>\n", out);
		if (total <= 60)
			listener_panel(st, l, out);
	}
	if (total > 60)
		fprintf(out, "<p>%zu more listeners not drawn.</p>\n", total - 60);
	if (total)
		fputs("</section>\n", out);
}

/* ---- connects ----------------------------------------------------------------- */

static double lx(double ms)
{
	double lo = log10(0.05), hi = log10(200000.0);

	if (ms < 0.05)
		ms = 0.05;
	return L + (W - L - 10) * (log10(ms) - lo) / (hi - lo);
}

/* The connect times on a log scale, with this kernel's SYN resend
 * points and the connects that needed each. */
static void peer_chart(const struct rp_peer *p, long max, int last_retr, const double *sched, int nsched,
		       long linear, FILE *out)
{
	static const double ticks[] = { 0.1, 1, 10, 100, 1000, 10000, 100000 };
	static const char *const tick_names[] = { "0.1 ms", "1 ms", "10 ms", "100 ms", "1 s", "10 s",
						  "100 s" };
	int b, k;

	fprintf(out, "<svg role=img aria-label=\"connect times, log scale\" viewBox=\"0 0 %d %d\" "
		"width=%d height=%d>", W, H + 14, W, H + 14);
	fprintf(out, "<line class=axis x1=%d y1=%d x2=%d y2=%d />", L, H - B, W - 10, H - B);
	fprintf(out, "<text x=%d y=%.1f text-anchor=end>%ld</text><text x=4 y=%d>connects</text>",
		L - 4, ypos(max, max / 0.7) + 4, max, H / 2);
	for (k = 0; k < 7; k++)
		fprintf(out, "<text x=%.1f y=%d text-anchor=middle>%s</text>", lx(ticks[k]),
			H - B + 14, tick_names[k]);
	for (b = 0; b < RP_LOGB; b++) {
		double x0 = lx(b ? rp_logb_lo(b) : 0.05), x1 = lx(b + 1 < RP_LOGB ?
							   rp_logb_lo(b + 1) : 200000);
		/* The tallest bar stops at 70%: the marks' labels sit above. */
		double y = ypos((double)p->hist[b], max / 0.7);

		if (!p->hist[b])
			continue;
		fprintf(out, "<rect class=bar data-n=%ld x=%.1f y=%.1f width=%.1f height=%.1f>"
			"<title>%ld</title></rect>", p->hist[b], x0 + 1, y, x1 - x0 - 2,
			H - B - y, p->hist[b]);
	}
	/* This kernel's retransmission points, each with its connects. */
	for (k = 1; k <= nsched && k <= (last_retr > 3 ? last_retr : 3); k++) {
		double x = lx(sched[k - 1] * 1000.0);
		long c = k < RP_RETR_MAX - 1 ? p->retr[k] : 0;

		fprintf(out, "<g class=synmark data-k=%d data-n=%ld><line class=syn x1=%.1f y1=%d "
			"x2=%.1f y2=%d /><text x=%.1f y=%d>", k, c, x, 4 + 12 * ((k - 1) % 3), x,
			H - B, x + 3, 12 + 12 * ((k - 1) % 3));
		h_num(out, sched[k - 1]);
		fprintf(out, " s: %d SYN retr., %ld</text></g>", k, c);
	}
	fputs("</svg>\n", out);
	if (nsched) {
		char buf[120];

		fprintf(out, "<p class=dim>Dashed lines: when this kernel sends the k-th SYN again "
			"(%s with tcp_syn_linear_timeouts=%ld), each with the connects that needed "
			"k retransmissions.</p>\n", sa_syn_schedule_str(buf, sizeof(buf), 6, linear,
									   SA_RTO_MAX_DEFAULT_MS), linear);
	}
}

/* The same numbers as tables, for a reader without the picture. */
static void peer_tables(const struct rp_peer *p, FILE *out)
{
	int b, k;

	fputs("<details><summary>The numbers as a table</summary><table><thead><tr><th>connect time"
	      "</th><th class=n>connects</th></tr></thead><tbody>\n", out);
	for (b = 0; b < RP_LOGB; b++) {
		if (!p->hist[b])
			continue;
		fputs("<tr><td>", out);
		if (!b)
			fputs("under 0.1 ms", out);
		else {
			h_num(out, rp_logb_lo(b));
			fputs(" ms and up", out);
		}
		fprintf(out, "</td><td class=n>%ld</td></tr>\n", p->hist[b]);
	}
	fputs("</tbody></table><table><thead><tr><th>SYN retransmissions</th><th class=n>connects"
	      "</th></tr></thead><tbody>\n", out);
	for (k = 0; k < RP_RETR_MAX; k++)
		if (p->retr[k])
			fprintf(out, "<tr><td>%d%s</td><td class=n>%ld</td></tr>\n", k,
				k == RP_RETR_MAX - 1 ? " or more" : "", p->retr[k]);
	fputs("</tbody></table></details></article>\n", out);
}

static void peer_panel(const struct rp_peer *p, const double *sched, int nsched, long linear,
		       FILE *out)
{
	long max = 0;
	int b, k, last_retr = 0;

	for (b = 0; b < RP_LOGB; b++)
		if (p->hist[b] > max)
			max = p->hist[b];
	for (k = 1; k < RP_RETR_MAX; k++)
		if (p->retr[k])
			last_retr = k;
	fputs("<article class=\"panel peer\" data-peer=\"", out);
	h_esc(out, p->peer);
	fprintf(out, "\" data-connects=%ld data-timed=%ld><h3>to ", p->n, p->timed);
	h_esc(out, p->peer);
	fprintf(out, ": %ld connect line(s), %ld ok, %ld failed, %.1f s in all</h3>\n", p->n, p->ok,
		p->failed, p->secs);
	if (max)
		peer_chart(p, max, last_retr, sched, nsched, linear, out);
	peer_tables(p, out);
}

void h_connects(const struct rp_state *st, FILE *out)
{
	double sched[RP_RETR_MAX];
	long linear = 0;
	int nsched = rp_syn_schedule(st, sched, RP_RETR_MAX - 1, &linear);
	size_t i;

	const struct rp_connects *c = &st->conn;
	long all = c->sum_outcome[0] + c->sum_outcome[1] + c->sum_outcome[2] + c->sum_outcome[3];
	int b;

	if (!st->npeers && !all)
		return;
	fprintf(out, "<section id=connects data-connects=%ld><h2>Connects</h2>\n", c->logged);
	if (c->have_sum_outcome && all) {
		fprintf(out, "<p>All processes' summaries count %ld connects (%ld ok, %ld failed, %ld "
			"abandoned, %ld interrupted by a signal) and %ld SYN retransmissions", all,
			c->sum_outcome[0], c->sum_outcome[1], c->sum_outcome[2], c->sum_outcome[3],
			c->syn_retrans_total);
		if (c->have_sum_hist) {
			fputs("; by time:", out);
			for (b = 0; b < SA_CONN_NBUCKETS; b++)
				if (c->sum_hist[b])
					fprintf(out, " %s %ld;", sa_conn_bucket_names[b], c->sum_hist[b]);
		}
		fprintf(out, " %ld of them are logged as lines (every connect at level trace, only "
			"those with findings below it).</p>\n", c->logged);
	}
	if (st->npeers)
		fputs("<p>Per peer, from the connect lines: each bar counts the lines whose connect_ms "
		      "fell in it; the time axis is logarithmic.</p>\n", out);
	for (i = 0; i < st->npeers; i++)
		peer_panel(&st->peers[i], sched, nsched, linear, out);
	if (st->other_peers.n)
		peer_panel(&st->other_peers, sched, nsched, linear, out);
	fputs("</section>\n", out);
}
