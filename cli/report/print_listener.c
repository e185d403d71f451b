/*
 * report/print_listener.c: the text report's Listeners section: backlog and
 * deferral read-back, accepts, empty accepts by cause, queue and wait
 * percentiles, first speaker, namespace deltas and the shim's advice.
 */
#include <math.h>
#include <string.h>

#include "report/report.h"

/* empty_accepts with its causes: empty_defer_expired and empty_syncookie
 * from the stats line, else the accept lines that carried the findings. */
static void print_empty(const struct rp_listener *l, FILE *out)
{
	const json_t *e = json_object_get(l->stats, "empty_accepts");
	long n = 0, defer, cookie;
	int have_causes;

	fprintf(out, "    %-14s ", "empty accepts");
	if (json_is_object(e)) {        /* a {cause: count} form, should one appear */
		tp_counts(out, e, 0);
		fputc('\n', out);
		return;
	}
	if (!log_long(l->stats, "empty_accepts", &n))
		n = l->empty_defer_expired + l->empty_syncookie;
	fprintf(out, "%s%ld%s", n ? tp_S.yellow : "", n, n ? tp_S.off : "");
	have_causes = log_long(l->stats, "empty_defer_expired", &defer) &
		      log_long(l->stats, "empty_syncookie", &cookie);
	if (have_causes && n && (defer || cookie))
		fprintf(out, " (%ld after the deferral expired, %ld through SYN cookies)", defer,
			cookie);
	else if (!have_causes && (l->empty_defer_expired || l->empty_syncookie))
		fprintf(out, " (logged: %ld deferral expired, %ld SYN cookie)",
			l->empty_defer_expired, l->empty_syncookie);
	fputc('\n', out);
}

/* The one backlog figure for this listener, when the clients' logs joined
 * to it ask for more than its own lines do (its advice below names the
 * smaller one: it saw only its own queue). Fix first gives the same. */
static void print_backlog_to_set(const struct rp_state *rs, const struct rp_listener *l, FILE *out)
{
	long need = -1, own = -1;
	int i;

	for (i = 0; i < rs->join.ncauses; i++) {
		const struct rp_cause *cz = &rs->join.causes[i];

		if (cz->joined && cz->lst >= 0 && &rs->lsts[cz->lst] == l && cz->need > need) {
			need = cz->need;
			own = cz->need_own;
		}
	}
	if (need <= 0 || own >= need)
		return;
	fprintf(out, "    %-14s %s%ld%s (as in Fix first: the connects joined to it need room at once", "backlog to set",
		tp_S.bold, need, tp_S.off);
	if (own > 0)
		fprintf(out, "; its own lines, which see only its queue, say at least %ld", own);
	fputs(")\n", out);
}

/* The listener's title line: program, pid, fd, address, place. */
static void print_title(const struct rp_state *rs, const struct rp_listener *l, FILE *out)
{
	fprintf(out, "  %s", tp_S.bold);
	tp_safe(out, l->comm, 32);
	fprintf(out, "[%ld] fd %ld%s  ", l->pid, l->fd, tp_S.off);
	tp_safe(out, l->local && *l->local ? l->local : "(address unknown)", 60);
	{
		char where[160];

		if (rp_place(rs, l->pid, where, sizeof where)) {
			fprintf(out, "  %s", tp_S.dim);
			tp_safe(out, where, 160);
			fputs(tp_S.off, out);
		}
	}
	fputc('\n', out);
}

/* The backlog asked for, what the kernel made of it, and the queue. */
static void print_backlog(const struct rp_listener *l, FILE *out)
{
	const json_t *st = l->stats;
	long n;

	if (l->have_backlog_req || l->have_backlog_eff) {
		int clamped = l->have_backlog_req && l->have_backlog_eff &&
			      l->backlog_effective != l->backlog_requested;

		fprintf(out, "    %-14s ", "backlog");
		if (l->have_backlog_req)
			fprintf(out, "%ld requested", l->backlog_requested);
		if (l->have_backlog_eff)
			fprintf(out, " -> %s%ld effective%s", clamped ? tp_S.red : "", l->backlog_effective,
				clamped ? tp_S.off : "");
		if (l->have_somaxconn)
			fprintf(out, " (somaxconn %ld", l->somaxconn);
		if (l->queue_capacity)
			fprintf(out, "%squeue holds %ld", l->have_somaxconn ? ", " : " (", l->queue_capacity);
		if (l->have_somaxconn || l->queue_capacity)
			fputc(')', out);
		if (l->listens > 1)
			fprintf(out, " [listen() called %ld times]", l->listens);
		fputc('\n', out);
	}
	if (!l->have_backlog_req && !l->have_backlog_eff && log_long(st, "backlog", &n))
		fprintf(out, "    %-14s %ld effective (listen() not in this process: inherited)\n",
			"backlog", n);
}

static void print_deferral(const struct rp_listener *l, FILE *out)
{
	/* A listener without deferral has nothing to say here. */
	if (l->have_defer_req || (l->have_defer_eff && l->defer_eff_s != 0)) {
		fprintf(out, "    %-14s ", "deferral");
		if (l->have_defer_req) {
			tp_num(out, l->defer_req_s);
			fputs(" s requested", out);
		}
		if (l->have_defer_eff) {
			int differs = l->have_defer_req && l->defer_eff_s != l->defer_req_s;

			fprintf(out, "%s%s", l->have_defer_req ? " -> " : "", differs ? tp_S.yellow : "");
			tp_num(out, l->defer_eff_s);
			fprintf(out, " s effective%s", differs ? tp_S.off : "");
		}
		fputc('\n', out);
	}
}

/* The accepts line of the latest listener_stats. */
static void print_accepts(const json_t *st, FILE *out)
{
	double d;
	long n;

	fprintf(out, "    %-14s ", "accepts");
	if (log_long(st, "accepts", &n))
		fprintf(out, "%ld", n);
	else
		fputs("?", out);
	if (log_long(st, "eagain", &n) && n)
		fprintf(out, ", EAGAIN %ld", n);
	if (log_long(st, "errors", &n) && n)
		fprintf(out, ", errors %s%ld%s", tp_S.red, n, tp_S.off);
	if (log_num(st, "with_data_pct", &d)) {
		fputs(", ", out);
		tp_num(out, d);
		fputs("% arrived with data", out);
	}
	fputc('\n', out);
}

/* How long connections waited, and how full the queue got. */
static void print_queue(const json_t *st, FILE *out)
{
	struct log_pct pct;
	long n;

	if (log_pct_get(st, "queue_ms", &pct))
		tp_pct(out, "queue_ms", &pct, "ms (established, waiting in the accept queue)");
	if (log_pct_get(st, "wait_ms", &pct))
		tp_pct(out, "wait_ms", &pct, "ms (blocked in accept)");
	if (log_long(st, "queue_full_seen", &n) && n) {
		fprintf(out, "    %-14s %s%ld%s time(s)", "queue full", tp_S.red, n, tp_S.off);
		if (log_long(st, "peak_waiting", &n))
			fprintf(out, ", at most %ld waiting", n);
		fputc('\n', out);
	} else if (log_long(st, "peak_waiting", &n) && n) {
		fprintf(out, "    %-14s at most %ld waiting, never full\n", "queue", n);
	}
	if (log_long(st, "fd_limit", &n) && n)
		fprintf(out, "    %-14s %s%ld accepts failed with EMFILE/ENFILE%s\n", "fd limit", tp_S.red, n,
			tp_S.off);
}

/* Who spoke first, and the network namespace's counters meanwhile. */
static void print_counters(const json_t *st, FILE *out)
{
	const json_t *fs, *v;

	fs = json_object_get(st, "first_speaker");
	if (json_is_object(fs)) {
		fprintf(out, "    %-14s ", "first speaker");
		tp_counts(out, fs, 0);
		fputc('\n', out);
	}
	v = json_object_get(st, "netns_counters");
	if (json_is_object(v) && !tp_all_zero(v)) {
		fprintf(out, "    %-14s ", "netns deltas");
		tp_counts(out, v, 1);
		fputc('\n', out);
	}
}

static void print_advice(const json_t *st, FILE *out)
{
	const json_t *adv, *v;
	size_t i;

	adv = json_object_get(st, "advice");
	if (json_is_array(adv) && json_array_size(adv)) {
		fprintf(out, "    %sadvice%s\n", tp_S.green, tp_S.off);
		LOG_ARRAY_EACH(adv, i, v) {
			if (!json_is_string(v))
				continue;
			fputs("      - ", out);
			tp_safe(out, json_string_value(v), 0);
			fputc('\n', out);
		}
	}
}

static void print_listener(const struct rp_state *rs, const struct rp_listener *l, FILE *out)
{
	const json_t *st = l->stats;

	print_title(rs, l, out);
	print_backlog(l, out);
	print_deferral(l, out);
	if (!st) {
		if (l->accepts_logged)
			fprintf(out, "    %-14s %ld logged (no listener_stats line)\n", "accepts",
				l->accepts_logged);
		if (l->empty_defer_expired || l->empty_syncookie)
			print_empty(l, out);
		return;
	}
	print_accepts(st, out);
	print_empty(l, out);
	print_queue(st, out);
	print_counters(st, out);
	print_backlog_to_set(rs, l, out);
	print_advice(st, out);
}

void tp_listeners(const struct rp_state *st, FILE *out)
{
	size_t i, shown = 0, total = 0;

	for (i = 0; i < st->nlsts; i++) {
		const struct rp_listener *l = &st->lsts[i];

		/* A TCP_DEFER_ACCEPT on a socket that never listened is a client
		 * socket: the option table and findings cover it. */
		if (!l->have_listen && !l->stats && !l->accepts_logged)
			continue;
		if (!total++)
			tp_heading(out, "Listeners");
		if (shown >= MAX_ROWS)
			continue;
		print_listener(st, l, out);
		shown++;
	}
	if (total > shown)
		fprintf(out, "  ... %zu more listeners\n", total - shown);
}

