/*
 * report/html.c: `sockaudit report --html OUT`: the same model as the text
 * report drawn as one self-contained page. Inline CSS and SVG, no request to
 * any address, nothing that needs script (one small inline script sorts
 * tables when clicked). Every chart has its numbers in a <details> table.
 * Grey shades, dashes and labels carry the meaning, so it reads in
 * grayscale and on paper. Charts: svg.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report.h"
#include "report/fix.h"




static const char css[] =
	"body{font:15px/1.45 system-ui,sans-serif;color:#111;background:#fff;max-width:1100px;"
	"margin:1em auto;padding:0 1em}"
	"h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;border-bottom:2px solid #111;"
	"margin-top:1.6em}h3{font-size:1.02em;margin:.8em 0 .3em}"
	"table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #999;padding:2px 6px;"
	"text-align:left;vertical-align:top}th{background:#eee;cursor:pointer}"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}"
	"tr.differs td,td.differs{background:#ddd;font-weight:bold}"
	".note{border-left:4px solid #111;padding:.3em .8em;background:#f3f3f3}"
	".panel{border:1px solid #999;padding:.3em .8em;margin:.8em 0;break-inside:avoid}"
	"ol.top li{margin:.3em 0}.dim{color:#555}svg{display:block;max-width:100%}"
	"svg text{font:11px sans-serif;fill:#111}.bar{fill:#555}.cap{stroke:#111;stroke-dasharray:6 3}"
	".line{fill:none;stroke:#111;stroke-width:2}.syn{stroke:#111;stroke-dasharray:2 2}"
	".axis{stroke:#111}details{margin:.2em 0 .6em}summary{cursor:pointer;color:#333}"
	"@media print{details{display:block}details>*{display:block}th{cursor:auto}}";

/* Clicking a column head sorts that table; without script, tables read
 * in the report's own order. */
static const char js[] =
	"document.querySelectorAll('table.sort th').forEach(function(th,i){th.onclick=function(){"
	"var t=th.closest('table'),b=t.tBodies[0],r=[].slice.call(b.rows),d=th.dataset.d=-(th.dataset.d||-1);"
	"r.sort(function(x,y){var a=x.cells[i].dataset.v||x.cells[i].textContent,c=y.cells[i].dataset.v||"
	"y.cells[i].textContent,m=parseFloat(a)-parseFloat(c);return d*(isNaN(m)?a.localeCompare(c):m)});"
	"r.forEach(function(x){b.appendChild(x)})}})";

/* ---- sections ---------------------------------------------------------------- */

static void input_notes(const struct rp_state *st, FILE *out)
{
	fprintf(out, "<p id=input data-lines=%ld data-events=%ld data-skipped=%ld>%ld lines, "
		"%ld events, %zu processes", st->lines, st->events, st->skipped, st->lines,
		st->events, st->nprocs);
	if (st->skipped)
		fprintf(out, ", %ld lines skipped (%ld not JSON, %ld not an object, %ld too long)",
			st->skipped, st->skipped - st->not_object - st->too_long, st->not_object,
			st->too_long);
	fputs("</p>\n", out);
	if (!st->lines)
		fputs("<p class=note id=bad-input>The log is empty: there is nothing to report. Was the "
		      "program run under the shim (LD_PRELOAD or the sockaudit launcher), and did it "
		      "make a socket call?</p>\n", out);
	else if (!st->events)
		fprintf(out, "<p class=note id=bad-input>None of the %ld lines is a libsockaudit JSON "
			"line: this is not a sockaudit log, or every line is damaged.</p>\n", st->lines);
	else if (st->skipped)
		fprintf(out, "<p class=note id=bad-input>%ld line(s) could not be read and were "
			"skipped (a line cut short, such as the last line of a log whose writer was "
			"killed, is one of these). The rest is reported.</p>\n", st->skipped);
	if (st->schema_max > RP_SCHEMA) {
		fputs("<p class=note id=newer-schema>Some lines were written by a newer libsockaudit "
		      "(schema ", out);
		h_num(out, st->schema_max);
		fprintf(out, "); this report knows schema %d and shows the fields it knows. Use the "
			"sockaudit that came with that library for the rest.</p>\n", RP_SCHEMA);
	}
}

static void top_section(const struct rp_state *st, FILE *out)
{
	size_t i;

	fputs("<section id=top><h2>Fix first</h2>\n", out);
	if (!st->events) {
		fputs("<p>Nothing to report.</p></section>\n", out);
		return;
	}
	if (!st->nitems) {
		fprintf(out, "<p>Nothing flagged: no finding in %ld events.</p></section>\n",
			st->events);
		return;
	}
	fputs("<ol class=top>\n", out);
	for (i = 0; i < st->nitems; i++) {
		const struct rp_finding *f;

		if (st->items[i].is_cause) {
			const struct rp_cause *cz = &st->join.causes[st->items[i].idx];

			fprintf(out, "<li data-code=cause data-kind=%s data-count=%ld><b><a href=\"#cause-%zu\">%s</a></b>: ",
				cz->unaccepted ? "unaccepted" : cz->joined ? "joined" : "not-joined", cz->n, st->items[i].idx,
				rp_cause_title(cz));
			rp_fix_html(st, i, out);
			h_esc(out, cz->sentence);
			fputs("</li>\n", out);
			continue;
		}
		f = &st->finds[st->items[i].idx];

		fputs("<li data-code=\"", out);
		h_esc(out, f->code);
		fprintf(out, "\" data-count=%ld><b>", f->count);
		h_esc(out, f->code);
		fprintf(out, "</b>: %ld time(s)", f->count);
		if (f->secs > 0)
			fprintf(out, ", %.1f s spent in the connects it flagged", f->secs);
		if (f->first_ts > 0) {
			fputs(", ", out);
			tp_time(out, f->first_ts);
			fputs("&ndash;", out);
			tp_time(out, f->last_ts);
			fputs(" UTC", out);
		}
		rp_fix_html(st, i, out);
		if (f->text) {
			fputs("<br><span class=dim>", out);
			h_esc(out, f->text);
			fputs("</span>", out);
		}
		fputs("</li>\n", out);
	}
	fputs("</ol>", out);
	if (st->join.conns_over)
		fprintf(out, "<p class=dim>%ld timed connect lines beyond the first %d were not joined: their "
			"findings are ranked on their own.</p>", st->join.conns_over, RP_CONNS_MAX);
	fputs("</section>\n", out);
}

static void options_section(const struct rp_state *st, FILE *out)
{
	size_t i, nd = 0;

	if (!st->nopts)
		return;
	for (i = 0; i < st->nopts; i++)
		nd += st->opts[i].differs != 0;
	fprintf(out, "<section id=options><h2>Option read-back</h2>\n<p>Every option value the "
		"programs set, and what the kernel reports back. %zu of %zu differ (shaded, marked "
		"&ne;).</p>\n<table class=sort><thead><tr><th>level</th><th>option</th><th>requested"
		"</th><th>effective</th><th></th><th class=n>calls</th><th>why it differs</th></tr>"
		"</thead><tbody>\n", nd, st->nopts);
	for (i = 0; i < st->nopts; i++) {
		const struct rp_opt *o = &st->opts[i];
		size_t k;

		fprintf(out, "<tr%s><td>", o->differs ? " class=differs" : "");
		h_esc(out, o->sol);
		fputs("</td><td>", out);
		h_esc(out, o->opt);
		fputs("</td><td>", out);
		h_esc(out, o->req);
		fputs("</td><td>", out);
		h_esc(out, o->eff);
		fprintf(out, "</td><td>%s</td><td class=n>%ld</td><td>", o->differs ? "&ne;" : "=",
			o->count);
		for (k = 0; o->differs && k < st->ndiffs; k++) {
			const struct rp_optdiff *d = &st->diffs[k];
			json_t *f;
			size_t j;

			if (strcmp(d->sol, o->sol) || strcmp(d->opt, o->opt))
				continue;
			LOG_ARRAY_EACH(d->findings, j, f) {
				const char *t = sa_finding_text(json_string_value(f));

				h_esc(out, t ? t : json_string_value(f));
				fputc(' ', out);
			}
			break;
		}
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
	if (st->opts_over)
		fprintf(out, "<p>%ld more calls with other values not tabulated.</p>\n",
			st->opts_over);
	fputs("</section>\n", out);
}

static void findings_section(const struct rp_state *st, FILE *out)
{
	size_t i;

	if (!st->nfinds)
		return;
	fputs("<section id=findings><h2>Findings</h2>\n<table class=sort><thead><tr><th>code</th>"
	      "<th class=n>count</th><th class=n>logged</th><th>first</th><th>last</th>"
	      "<th class=n>s in flagged connects</th><th>evidence (one line's own message)</th>"
	      "<th>explanation</th></tr></thead><tbody>\n", out);
	for (i = 0; i < st->nfinds; i++) {
		const struct rp_finding *f = &st->finds[i];

		fputs("<tr class=finding data-code=\"", out);
		h_esc(out, f->code);
		fprintf(out, "\" data-count=%ld><td>", f->count);
		h_esc(out, f->code);
		fprintf(out, "</td><td class=n>%ld</td><td class=n>%ld</td><td>", f->count, f->logged);
		tp_time(out, f->first_ts);
		fputs("</td><td>", out);
		tp_time(out, f->last_ts);
		fputs("</td><td class=n>", out);
		h_num(out, f->secs);
		fputs("</td><td>", out);
		if (f->msg && f->msg_single)
			h_esc(out, f->msg);
		else
			fputs("<span class=dim>(no line with this finding alone)</span>", out);
		fputs("</td><td>", out);
		h_esc(out, f->text ? f->text : (f->msg ? f->msg : ""));
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></section>\n", out);
}

/* Processes grouped by program: 150 short-lived curls are one row. */
static void procs_section(const struct rp_state *st, FILE *out)
{
	size_t i, j, ng = 0;
	size_t *group;

	if (!st->nprocs)
		return;
	group = calloc(st->nprocs, sizeof(*group));
	if (!group)
		return;
	fputs("<section id=processes><h2>Processes, by program</h2>\n<table class=sort><thead><tr>"
	      "<th>program</th><th class=n>processes</th><th class=n>with summary</th><th class=n>"
	      "events</th><th class=n>connects ok</th><th class=n>failed</th><th class=n>SYN "
	      "retransmissions</th><th>first</th><th>last</th></tr></thead><tbody>\n", out);
	for (i = 0; i < st->nprocs; i++) {
		const struct rp_proc *p = &st->procs[i];
		long procs = 0, sums = 0, events = 0, ok = 0, failed = 0, retr = 0, n;
		double first = 0, last = 0;

		for (j = 0; j < ng; j++)
			if (strcmp(st->procs[group[j]].comm, p->comm) == 0)
				break;
		if (j < ng)
			continue;
		if (ng == 200) {        /* capped like the text report's sections */
			fputs("<tr><td colspan=9>... more programs not listed</td></tr>\n", out);
			break;
		}
		group[ng++] = i;
		for (j = i; j < st->nprocs; j++) {
			const struct rp_proc *q = &st->procs[j];

			if (strcmp(q->comm, p->comm) != 0)
				continue;
			procs++;
			events += q->events;
			if (rp_figures(q)) {
				sums++;
				if (log_long(json_object_get(rp_figures(q), "connects"), SA_OUTCOME_OK, &n))
					ok += n;
				if (log_long(json_object_get(rp_figures(q), "connects"), SA_OUTCOME_FAILED, &n))
					failed += n;
				if (log_long(rp_figures(q), "syn_retrans_total", &n))
					retr += n;
			}
			if (q->first_ts > 0 && (!first || q->first_ts < first))
				first = q->first_ts;
			if (q->last_ts > last)
				last = q->last_ts;
		}
		fputs("<tr><td>", out);
		h_esc(out, p->comm);
		fprintf(out, "</td><td class=n>%ld</td><td class=n>%ld</td><td class=n>%ld</td>"
			"<td class=n>%ld</td><td class=n>%ld</td><td class=n>%ld</td><td>", procs, sums,
			events, ok, failed, retr);
		tp_time(out, first);
		fputs("</td><td>", out);
		tp_time(out, last);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></section>\n", out);
	free(group);
}

void rp_html(const struct rp_state *st, FILE *out)
{
	fprintf(out, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n<meta name=viewport "
		"content=\"width=device-width\">\n<title>sockaudit report</title>\n<style>%s</style>"
		"</head><body>\n<h1>sockaudit report</h1>\n", css);
	input_notes(st, out);
	top_section(st, out);
	h_causes(st, out);
	h_listeners(st, out);
	h_connects(st, out);
	options_section(st, out);
	findings_section(st, out);
	procs_section(st, out);
	fprintf(out, "<p class=dim>Made by sockaudit %s from the log alone: no request to any "
		"network address.</p>\n<script>%s</script>\n</body></html>\n", SOCKAUDIT_VERSION_STR, js);
}
