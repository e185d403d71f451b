/*
 * report/html_causes.c: the page's causes (join.c's model): each
 * cause's sentence and evidence, and its timeline: every connect drawn at
 * its start on wall-clock time, its height the connect time on a log
 * scale, its SYN resends marked, with the listener's no-accept,
 * queue-full and ListenOverflows intervals shaded behind; the same numbers
 * as a table beside it. Grey shades and shapes carry the meaning.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

#define TL_W 620
#define TL_H 250
#define TL_L 64                 /* left margin (y labels) */
#define TL_B 34                 /* bottom margin (x labels) */
#define TL_T 10
#define TL_MARKS_MAX 2000       /* connects drawn per cause */
#define TL_ROWS_MAX 60          /* table rows per cause */

struct frame {
	double t0, t1, lo, hi;  /* time window (s), decades of ms (log10) */
};

static double fx(const struct frame *f, double t)
{
	return TL_L + (t - f->t0) / (f->t1 - f->t0) * (TL_W - TL_L - 10);
}

static double fy(const struct frame *f, double ms)
{
	double v = log10(ms > 0.001 ? ms : 0.001);

	if (v < f->lo)
		v = f->lo;
	return TL_T + (f->hi - v) / (f->hi - f->lo) * (TL_H - TL_T - TL_B);
}

static int in_cause(const struct rp_cause *cz, size_t lst)
{
	int k;

	for (k = 0; k < cz->nlsts; k++)
		if ((size_t)cz->lsts[k] == lst)
			return 1;
	return 0;
}

/* The window: the cause's connects and its listeners' intervals that
 * touch them, padded by a tenth. */
static void frame_make(const struct rp_state *st, int ci, const struct rp_cause *cz, struct frame *f)
{
	double mn = 1e18, mx = 0, pad;
	size_t i;

	f->t0 = cz->t0;
	f->t1 = cz->t1;
	for (i = 0; i < st->join.nconns; i++) {
		const struct rp_conn *c = &st->join.conns[i];

		if (c->cause != ci)
			continue;
		if (c->start < f->t0)
			f->t0 = c->start;
		if (c->end > f->t1)
			f->t1 = c->end;
		if (c->ms < mn)
			mn = c->ms;
		if (c->ms > mx)
			mx = c->ms;
	}
	for (i = 0; i < st->join.nbusy && cz->joined; i++) {
		const struct rp_busy *b = &st->join.busy[i];

		/* An overflow window spans listener_stats lines: it is drawn
		 * clipped, and does not stretch the axis. */
		if (!in_cause(cz, b->lst) || b->kind == RP_BUSY_OVERFLOW || b->t1 < f->t0 - 5 || b->t0 > f->t1 + 5)
			continue;
		if (b->t0 < f->t0)
			f->t0 = b->t0;
		if (b->t1 > f->t1)
			f->t1 = b->t1;
	}
	pad = (f->t1 - f->t0) * 0.06 + 0.05;
	f->t0 -= pad;
	f->t1 += pad;
	/* At least a decade of room below the fastest and above the slowest. */
	f->lo = floor(log10(mn > 0.02 ? mn / 2 : 0.01));
	f->hi = ceil(log10(mx > 0.01 ? mx * 2 : 1));
	if (f->hi <= f->lo)
		f->hi = f->lo + 1;
}

static void axes(FILE *out, const struct frame *f)
{
	char buf[24];
	int k, d;

	fprintf(out, "<line class=axis x1=%d y1=%d x2=%d y2=%d />", TL_L, TL_H - TL_B, TL_W - 10, TL_H - TL_B);
	fprintf(out, "<line class=axis x1=%d y1=%d x2=%d y2=%d />", TL_L, TL_T, TL_L, TL_H - TL_B);
	for (k = 0; k <= 4; k++) {
		double t = f->t0 + (f->t1 - f->t0) * k / 4;

		fprintf(out, "<text x=%.1f y=%d text-anchor=%s>%s</text>", fx(f, t), TL_H - TL_B + 14,
			k == 0 ? "start" : k == 4 ? "end" : "middle", rp_clock(t, buf));
	}
	fprintf(out, "<text x=%d y=%d text-anchor=middle>wall clock (UTC): each connect at its start</text>",
		(TL_W + TL_L) / 2, TL_H - 4);
	for (d = (int)f->lo; d <= (int)f->hi; d++) {
		double ms = pow(10, d), y = fy(f, ms);

		fprintf(out, "<line x1=%d y1=%.1f x2=%d y2=%.1f stroke=#ddd />", TL_L, y, TL_W - 10, y);
		if (ms >= 1000)
			fprintf(out, "<text x=%d y=%.1f text-anchor=end>%g s</text>", TL_L - 4, y + 4, ms / 1000);
		else
			fprintf(out, "<text x=%d y=%.1f text-anchor=end>%g ms</text>", TL_L - 4, y + 4, ms);
	}
}

static void shades(const struct rp_state *st, FILE *out, const struct rp_cause *cz, const struct frame *f)
{
	static const char *const cls[] = { "noaccept", "full", "overflow" };
	static const char *const fill[] = { "#d8d8d8", "#9a9a9a", "none" };
	size_t i;

	if (!cz->joined)
		return;
	for (i = 0; i < st->join.nbusy; i++) {
		const struct rp_busy *b = &st->join.busy[i];
		double a, z, y0 = TL_T, h = TL_H - TL_T - TL_B;

		if (!in_cause(cz, b->lst) || b->t1 < f->t0 || b->t0 > f->t1)
			continue;
		a = fx(f, b->t0 > f->t0 ? b->t0 : f->t0);
		z = fx(f, b->t1 < f->t1 ? b->t1 : f->t1);
		if (b->kind == RP_BUSY_FULL && !b->merged) {
			/* A point sample: a band a few pixels wide at the moment the
			 * accept found the queue full, over the no-accept shade. */
			a = z - 3;
			z += 3;
		}
		fprintf(out, "<rect class=\"shade %s\" data-from=%.6f data-to=%.6f x=%.1f y=%.1f width=%.1f "
			"height=%.1f fill=%s%s />", cls[b->kind], b->t0, b->t1, a, y0, z - a > 1 ? z - a : 1, h,
			fill[b->kind], b->kind == RP_BUSY_OVERFLOW ? " stroke=#555 stroke-dasharray=\"4 3\"" : "");
	}
}

static void marks(const struct rp_state *st, FILE *out, int ci, const struct frame *f, const double *sched,
		  int nsched)
{
	size_t i;
	long drawn = 0;

	for (i = 0; i < st->join.nconns && drawn < TL_MARKS_MAX; i++) {
		const struct rp_conn *c = &st->join.conns[i];
		double x = fx(f, c->start), y = fy(f, c->ms);
		int k;

		if (c->cause != ci)
			continue;
		drawn++;
		fprintf(out, "<g class=conn data-ms=%.3f data-retr=%d>", c->ms, c->retr);
		fprintf(out, "<line x1=%.1f y1=%.1f x2=%.1f y2=%.1f stroke=#777 />", x, y, fx(f, c->end), y);
		fprintf(out, "<circle cx=%.1f cy=%.1f r=4 fill=%s stroke=#111 />", x, y, c->retr > 0 ? "#111" : "#fff");
		/* Each resend as an x where the kernel sent it. */
		for (k = 1; k <= c->retr && k <= nsched; k++) {
			double rx = fx(f, c->start + sched[k - 1]);

			fprintf(out, "<path class=resend d=\"M%.1f %.1fl6 6m0 -6l-6 6\" stroke=#111 />", rx - 3, y - 3);
		}
		fputs("</g>", out);
	}
}

static void table(const struct rp_state *st, FILE *out, int ci, const struct rp_cause *cz)
{
	static const char *const kind[] = { "no accept", "queue found full at \"to\"", "ListenOverflows rose" };
	char a[24], z[24];
	size_t i;
	long rows = 0, more = 0;

	fputs("<details open><summary>The numbers as a table</summary>"
	      "<div style=\"max-height:220px;overflow:auto\"><table class=sort><thead><tr>"
	      "<th>connect started (UTC)</th><th class=n>connect ms</th><th class=n>SYN resends</th>"
	      "<th class=n>pid</th></tr></thead><tbody>\n", out);
	for (i = 0; i < st->join.nconns; i++) {
		const struct rp_conn *c = &st->join.conns[i];

		if (c->cause != ci)
			continue;
		if (rows++ >= TL_ROWS_MAX) {
			more++;
			continue;
		}
		fprintf(out, "<tr><td data-v=%.6f>%s</td><td class=n>%.1f</td><td class=n>", c->start,
			rp_clock(c->start, a), c->ms);
		if (c->retr >= 0)
			fprintf(out, "%d", c->retr);
		else
			fputs("?", out);
		fprintf(out, "</td><td class=n>%ld</td></tr>\n", c->pid);
	}
	fputs("</tbody></table></div>", out);
	if (more)
		fprintf(out, "<p class=dim>... %ld more connects</p>", more);
	if (cz->joined) {
		fputs("<table><thead><tr><th>listener</th><th>from (UTC)</th><th>to</th><th class=n>s</th>"
		      "<th class=n>n</th></tr></thead><tbody>\n", out);
		for (i = 0, rows = 0; i < st->join.nbusy && rows < TL_ROWS_MAX; i++) {
			const struct rp_busy *b = &st->join.busy[i];

			if (!in_cause(cz, b->lst))
				continue;
			rows++;
			fprintf(out, "<tr class=interval><td>%s</td><td>%s</td><td>%s</td><td class=n>%.3f</td>"
				"<td class=n>%ld</td></tr>\n", kind[b->kind], rp_clock(b->t0, a), rp_clock(b->t1, z),
				b->t1 - b->t0, b->n);
		}
		fputs("</tbody></table>", out);
	}
	fputs("</details>\n", out);
}

static void timeline(const struct rp_state *st, FILE *out, int ci)
{
	const struct rp_cause *cz = &st->join.causes[ci];
	struct frame f;
	double sched[8];
	long lin = 0;
	int nsched = rp_syn_schedule(st, sched, 8, &lin);

	frame_make(st, ci, cz, &f);
	fprintf(out, "<div class=timeline id=cause-%d style=\"display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start\">"
		"<svg viewBox=\"0 0 %d %d\" width=%d role=img aria-label=\"connects over time\">", ci, TL_W, TL_H,
		TL_W * 7 / 8);
	shades(st, out, cz, &f);
	axes(out, &f);
	marks(st, out, ci, &f, sched, nsched);
	fputs("</svg><div>", out);
	table(st, out, ci, cz);
	fputs("</div></div>\n<p class=dim>Circle: a connect at its start, as high as it took (log scale); filled "
	      "when its SYN was resent, each resend an &times; where the kernel sent it, the line running to "
	      "its end. Shaded: the listener kept a connection unaccepted (light), found its queue full (dark "
	      "band), ListenOverflows rose between two of its listener_stats lines (dashed).</p>\n", out);
}

void h_causes(const struct rp_state *st, FILE *out)
{
	char a[24], b[24];
	int ci, k;

	if (!st->join.ncauses)
		return;
	fputs("<section id=causes><h2>Causes: slow connects and their listeners</h2>\n", out);
	for (ci = 0; ci < st->join.ncauses; ci++) {
		const struct rp_cause *cz = &st->join.causes[ci];

		fprintf(out, "<div class=\"panel cause\" data-kind=%s data-connects=%ld><h3>",
			cz->unaccepted ? "unaccepted" : cz->joined ? "joined" : "not-joined", cz->n);
		fprintf(out, "%c%s: %ld connect%s to ", rp_cause_title(cz)[0] - 32, rp_cause_title(cz) + 1, cz->n,
			cz->n == 1 ? "" : "s");
		h_esc(out, st->join.addrs[cz->addr]);
		fprintf(out, ", %s&ndash;%s UTC</h3>\n<p class=sentence>", rp_clock(cz->t0, a), rp_clock(cz->t1, b));
		h_esc(out, cz->sentence);
		fputs("</p>\n", out);
		if (cz->decide) {
			fputs("<p class=note>", out);
			h_esc(out, cz->decide);
			fputs("</p>\n", out);
		}
		timeline(st, out, ci);
		if (cz->nevid)
			fputs("<details><summary>Evidence: the lines this stands on</summary><ul class=evidence>\n", out);
		for (k = 0; k < cz->nevid; k++) {
			fputs("<li><code>", out);
			h_esc(out, rp_loc_file(st, &cz->evid[k]));
			fprintf(out, ":%ld</code> ", cz->evid[k].line);
			h_esc(out, cz->evid_what[k]);
			fputs("</li>\n", out);
		}
		if (cz->nevid)
			fputs("</ul></details>\n", out);
		fputs("</div>\n", out);
	}
	if (st->join.causes_over)
		fprintf(out, "<p class=dim>%ld more groups of slow connects are not shown.</p>\n", st->join.causes_over);
	fputs("</section>\n", out);
}
