/*
 * diff/print.c: the rows of a diff as text for people, or as one JSON
 * document for scripts. Both print the same rows and verdicts; nothing
 * here compares or judges.
 */
#include <string.h>

#include "diff/diff.h"

/* A figure as the report writes it: counts whole, times to about three
 * digits, "-" for a side without it. */
static const char *fmt_val(char *buf, size_t len, const struct df_row *row, const struct df_val *v)
{
	if (!v->have)
		snprintf(buf, len, "-");
	else if (row->kind != DF_TIME || v->v == 0)
		snprintf(buf, len, "%.0f", v->v);
	else
		snprintf(buf, len, v->v >= 100 ? "%.0f" : v->v >= 10 ? "%.1f" : v->v >= 1 ? "%.2f" : "%.3f", v->v);
	return buf;
}

static void print_side(const char *label, const struct df_side *s, FILE *out)
{
	fprintf(out, "  %-7s", label);
	tp_safe(out, s->name, 200);
	fprintf(out, " (%d log%s, %ld lines, %zu process%s)\n", s->files, s->files == 1 ? "" : "s",
		s->st.lines, s->st.nprocs, s->st.nprocs == 1 ? "" : "es");
}

static void print_item(const struct df_item *it, FILE *out)
{
	int r;

	fputs("  ", out);
	if (it->comm) {
		tp_safe(out, it->comm, 32);
		fputc(' ', out);
	}
	tp_safe(out, it->addr, 80);
	if (!it->on_a || !it->on_b)
		fprintf(out, "  %s (%s only)", it->on_a ? "gone" : "new", it->on_a ? "before" : "after");
	else if (!it->comm)
		fprintf(out, "  connect lines %ld -> %ld", it->procs_a, it->procs_b);
	else if (it->procs_a > 1 || it->procs_b > 1)
		fprintf(out, "  processes %ld -> %ld", it->procs_a, it->procs_b);
	fputc('\n', out);
	for (r = 0; r < it->nrows; r++) {
		const struct df_row *row = &it->rows[r];
		char a[32], b[32], cell[80];

		/* The unit once, after the last figure there is. */
		snprintf(cell, sizeof cell, "%s%s -> %s%s", fmt_val(a, sizeof a, row, &row->a),
			 row->kind == DF_TIME && !row->b.have ? " ms" : "", fmt_val(b, sizeof b, row, &row->b),
			 row->kind == DF_TIME && row->b.have ? " ms" : "");
		fprintf(out, "    %-24s %-22s %s\n", row->label, cell, df_verdict_name(row->verdict));
	}
}

static void print_items(const char *title, const struct df_item *arr, size_t n, FILE *out)
{
	size_t i;

	if (!n)
		return;
	tp_heading(out, title);
	for (i = 0; i < n && i < MAX_ROWS; i++)
		print_item(&arr[i], out);
	if (n > MAX_ROWS)
		fprintf(out, "  ... %zu more\n", n - MAX_ROWS);
}

/* 1 when every process of the side logged at trace (every connect has a line). */
static int all_trace(const struct df_side *s)
{
	size_t i;

	for (i = 0; i < s->st.nprocs; i++)
		if (!s->st.procs[i].trace)
			return 0;
	return 1;
}

/* A peer on one side only, where that other side is below trace: its
 * connects may all have been fast, and fast connects have no line there. */
static void note_level(const struct df_diff *d, FILE *out)
{
	size_t i;

	for (i = 0; i < d->npeers; i++) {
		const struct df_item *it = &d->peers[i];

		if ((!it->on_b && !all_trace(d->b)) || (!it->on_a && !all_trace(d->a))) {
			fputs("  (below level trace only flagged or failed connects are logged: a peer gone\n"
			      "   or new there may only have had fast connects; audit both at -l trace)\n", out);
			return;
		}
	}
}

void df_print(const struct df_diff *d, FILE *out)
{
	size_t i;

	fputs("sockaudit diff\n", out);
	print_side("before", d->a, out);
	print_side("after", d->b, out);
	print_items("Listeners (program, address)", d->lsts, d->nlsts, out);
	print_items("Peers (the address connected to)", d->peers, d->npeers, out);
	note_level(d, out);
	if (d->conns_over)
		fprintf(out, "  (%ld connect lines beyond what the report keeps are not in the times)\n",
			d->conns_over);
	if (d->nfinds)
		tp_heading(out, "Findings (count)");
	for (i = 0; i < d->nfinds && i < MAX_ROWS; i++) {
		char cell[64];

		snprintf(cell, sizeof cell, "%ld -> %ld", d->finds[i].a, d->finds[i].b);
		fputs("    ", out);
		tp_cell(out, d->finds[i].code, 32);
		fprintf(out, " %-14s %s\n", cell, df_verdict_name(d->finds[i].verdict));
	}
	if (d->nfinds > MAX_ROWS)
		fprintf(out, "  ... %zu more\n", d->nfinds - MAX_ROWS);
	if (!d->nlsts && !d->npeers && !d->nfinds)
		fputs("\nno listener, connect or finding on either side\n", out);
}

/* ---- JSON ------------------------------------------------------------------ */

#define SET(o, k, v) json_object_set_new((o), (k), (v))

static json_t *val_json(const struct df_row *row, const struct df_val *v)
{
	if (!v->have)
		return json_null();
	return row->kind == DF_TIME ? json_real(v->v) : json_integer((json_int_t)v->v);
}

static json_t *side_json(const struct df_side *s)
{
	json_t *o = json_object();

	SET(o, "input", json_string(s->name));
	SET(o, "logs", json_integer(s->files));
	SET(o, "lines", json_integer(s->st.lines));
	SET(o, "events", json_integer(s->st.events));
	SET(o, "processes", json_integer((json_int_t)s->st.nprocs));
	return o;
}

static json_t *items_json(const struct df_item *arr, size_t n, int peer)
{
	json_t *list = json_array();
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		const struct df_item *it = &arr[i];
		json_t *o = json_object(), *rows = json_array();

		if (!peer)
			SET(o, "comm", json_string(it->comm));
		SET(o, peer ? "peer" : "local", json_string(it->addr));
		SET(o, "seen", json_string(it->on_a && it->on_b ? "both" : it->on_a ? "before" : "after"));
		SET(o, peer ? "connect_lines_before" : "processes_before",
		    it->on_a ? json_integer(it->procs_a) : json_null());
		SET(o, peer ? "connect_lines_after" : "processes_after",
		    it->on_b ? json_integer(it->procs_b) : json_null());
		for (r = 0; r < it->nrows; r++) {
			const struct df_row *row = &it->rows[r];
			json_t *ro = json_object();

			SET(ro, "row", json_string(row->key));
			SET(ro, "before", val_json(row, &row->a));
			SET(ro, "after", val_json(row, &row->b));
			SET(ro, "verdict", json_string(df_verdict_name(row->verdict)));
			json_array_append_new(rows, ro);
		}
		SET(o, "rows", rows);
		json_array_append_new(list, o);
	}
	return list;
}

void df_json(const struct df_diff *d, FILE *out)
{
	json_t *doc = json_object(), *finds = json_array();
	size_t i;

	SET(doc, "before", side_json(d->a));
	SET(doc, "after", side_json(d->b));
	SET(doc, "listeners", items_json(d->lsts, d->nlsts, 0));
	SET(doc, "peers", items_json(d->peers, d->npeers, 1));
	SET(doc, "connect_lines_not_kept", json_integer(d->conns_over));
	for (i = 0; i < d->nfinds; i++) {
		json_t *o = json_object();

		SET(o, "code", json_string(d->finds[i].code));
		SET(o, "before", json_integer(d->finds[i].a));
		SET(o, "after", json_integer(d->finds[i].b));
		SET(o, "verdict", json_string(df_verdict_name(d->finds[i].verdict)));
		json_array_append_new(finds, o);
	}
	SET(doc, "findings", finds);
	json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(doc);
}
