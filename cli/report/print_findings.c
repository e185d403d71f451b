/*
 * report/print_findings.c: the text report's "Fix first" list (findings
 * ranked by rp_finish) and its Findings section: each code's count, when it
 * was seen, its own explanation (common/finding_text.h) and, when a line
 * carried that code alone, that line's msg as an example.
 */
#include <string.h>

#include "report/report.h"
#include "report/fix.h"

static void put_span(FILE *out, const struct rp_finding *f)
{
	if (f->first_ts <= 0)
		return;
	fputs(", ", out);
	tp_time(out, f->first_ts);
	if (f->last_ts > f->first_ts) {
		fputs("-", out);
		tp_time(out, f->last_ts);
	}
	fputs(" UTC", out);
}

void tp_findings(const struct rp_state *st, FILE *out)
{
	size_t i;

	if (!st->nfinds)
		return;
	tp_heading(out, "Findings");
	for (i = 0; i < st->nfinds && i < MAX_ROWS; i++) {
		const struct rp_finding *f = &st->finds[i];

		fprintf(out, "  %s%6ld  ", tp_S.red, f->count);
		tp_safe(out, f->code, 60);
		fprintf(out, "%s\n", tp_S.off);
		if (f->logged) {
			fprintf(out, "          %s%ld logged", tp_S.dim, f->logged);
			if (f->secs > 0)
				fprintf(out, ", %.1f s in those connects", f->secs);
			put_span(out, f);
			fprintf(out, "%s\n", tp_S.off);
		}
		if (f->text) {
			fputs("          ", out);
			tp_safe(out, f->text, 0);
			fputc('\n', out);
		}
		/* A line's msg speaks for all of its findings: quote it only
		 * when this code was the line's only finding. */
		if (f->msg && f->msg_single) {
			fputs("          e.g. ", out);
			tp_safe(out, f->msg, 0);
			fputc('\n', out);
		} else if (f->msg && !f->text) {
			fputs("          ", out);
			tp_safe(out, f->msg, 0);
			fputc('\n', out);
		}
	}
	if (st->nfinds > MAX_ROWS)
		fprintf(out, "  ... %zu more finding codes\n", st->nfinds - MAX_ROWS);
}

/* One cause: a title with its time range, the sentence, the lines it
 * stands on, and for an unexplained one what would decide it. */
static void put_cause(const struct rp_state *st, FILE *out, size_t rank, const struct rp_cause *cz)
{
	char a[24], b[24];
	int k;

	fprintf(out, "  %zu. %s%s%s: %ld connect%s to ", rank, tp_S.bold, rp_cause_title(cz), tp_S.off,
		cz->n, cz->n == 1 ? "" : "s");
	tp_safe(out, st->join.addrs[cz->addr], 80);
	if (cz->unaccepted)
		fprintf(out, ", %s-%s UTC\n", rp_clock(cz->t0, a), rp_clock(cz->t1, b));
	else
		fprintf(out, ", %.1f s, %s-%s UTC\n", cz->secs, rp_clock(cz->t0, a), rp_clock(cz->t1, b));
	rp_fix_text(st, rank - 1, out, "     ");
	fputs("     ", out);
	tp_safe(out, cz->sentence, 0);
	fputc('\n', out);
	if (cz->decide) {
		fputs("     ", out);
		tp_safe(out, cz->decide, 0);
		fputc('\n', out);
	}
	if (cz->nevid)
		fprintf(out, "     %sevidence:%s\n", tp_S.dim, tp_S.off);
	for (k = 0; k < cz->nevid; k++) {
		fprintf(out, "       %s", tp_S.dim);
		tp_safe(out, rp_loc_file(st, &cz->evid[k]), 120);
		fprintf(out, ":%ld%s  ", cz->evid[k].line, tp_S.off);
		tp_safe(out, cz->evid_what[k], 0);
		fputc('\n', out);
	}
}

/* What to fix first, in a few lines: causes (slow connects joined to the
 * listener that made them wait) and the findings no cause took in, ranked
 * by the seconds they cost, then by count (rp_finish ranks them). */
void tp_top(const struct rp_state *st, FILE *out)
{
	size_t i;

	tp_heading(out, "Fix first");
	if (!st->events) {
		fputs("  nothing to report: the input has no libsockaudit JSON lines\n", out);
		return;
	}
	if (!st->nitems) {
		fprintf(out, "  nothing flagged: no finding in %ld events\n", st->events);
		return;
	}
	for (i = 0; i < st->nitems; i++) {
		const struct rp_finding *f;

		if (st->items[i].is_cause) {
			put_cause(st, out, i + 1, &st->join.causes[st->items[i].idx]);
			continue;
		}
		f = &st->finds[st->items[i].idx];
		fprintf(out, "  %zu. %s", i + 1, tp_S.bold);
		tp_safe(out, f->code, 60);
		fprintf(out, "%s: %ld time(s)", tp_S.off, f->count);
		if (f->secs > 0)
			fprintf(out, ", %.1f s spent in the connects it flagged", f->secs);
		put_span(out, f);
		fputc('\n', out);
		rp_fix_text(st, i, out, "     ");
		if (f->text) {
			fputs("     ", out);
			tp_first_sentence(out, f->text);
			fputc('\n', out);
		}
	}
	if (st->join.conns_over)
		fprintf(out, "  %s(%ld timed connect lines beyond the first %d were not joined: their findings "
			"are ranked on their own)%s\n", tp_S.dim, st->join.conns_over, RP_CONNS_MAX, tp_S.off);
}
