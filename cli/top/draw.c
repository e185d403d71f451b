/*
 * top/draw.c: lays out one screen of `sockaudit top`: a status line, the
 * listeners (two lines each), the peers (one line each), and the findings,
 * newest at the bottom, in whatever rows are left. Made for 80x24 and
 * wider; every line is cut at the terminal's width so nothing wraps.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "top/top.h"

#define BOLD "\033[1m"
#define HOT "\033[1;31m"
#define HEAD "\033[7m"
#define OFF "\033[0m"

struct screen {
	FILE *out;
	int rows, cols, used, ansi;
};

/* One line, cut at the width; style is an SGR sequence or NULL. */
static void line(struct screen *s, const char *style, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	if (s->rows && s->used >= s->rows)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (s->cols > 0 && (size_t)s->cols < sizeof buf)
		buf[s->cols] = '\0';
	if (s->ansi && style)
		fprintf(s->out, "%s%s%s", style, buf, OFF);
	else
		fputs(buf, s->out);
	/* Clear the rest of the row; no newline after the screen's last row,
	 * which would scroll it. */
	if (s->ansi)
		fputs("\033[K", s->out);
	s->used++;
	if (!s->rows || s->used < s->rows)
		fputc('\n', s->out);
}

static const struct tp_model *sort_m;
static enum tp_sort sort_by;

static int cmp_listener(const void *a, const void *b)
{
	const struct tp_listener *x = *(const struct tp_listener *const *)a, *y = *(const struct tp_listener *const *)b;
	double dx = 0, dy = 0;

	switch (sort_by) {
	case TP_SORT_RATE: dx = tp_listener_rate(sort_m, x); dy = tp_listener_rate(sort_m, y); break;
	case TP_SORT_ACCEPTS: dx = (double)x->accepts; dy = (double)y->accepts; break;
	case TP_SORT_FULL: dx = (double)x->full; dy = (double)y->full; break;
	case TP_SORT_WAIT: dx = x->wait.p99; dy = y->wait.p99; break;
	default: break;
	}
	if (dx != dy)
		return dx < dy ? 1 : -1;
	if (sort_by != TP_SORT_ADDR && x->accepts != y->accepts)
		return x->accepts < y->accepts ? 1 : -1;
	int c = strcmp(x->local, y->local);
	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_peer(const void *a, const void *b)
{
	const struct tp_peer *x = *(const struct tp_peer *const *)a, *y = *(const struct tp_peer *const *)b;

	if (x->last_ts != y->last_ts)
		return x->last_ts < y->last_ts ? 1 : -1;
	return strcmp(x->addr, y->addr);
}

/* "12", "0.4", "-": a percentile in ms, short. */
static const char *ms(char *b, size_t n, const struct log_pct *p, double v)
{
	if (!p->have)
		snprintf(b, n, "-");
	else if (v >= 100 || v == (long)v)
		snprintf(b, n, "%.0f", v);
	else
		snprintf(b, n, "%.1f", v);
	return b;
}

static void listeners(struct screen *s, const struct tp_model *m, enum tp_sort sort, int room_rows)
{
	const struct tp_listener **v = calloc(m->nlst + 1, sizeof *v);
	size_t i, shown = 0;

	if (!v)
		return;
	for (i = 0; i < m->nlst; i++)
		v[i] = &m->lst[i];
	sort_m = m;
	sort_by = sort;
	qsort(v, m->nlst, sizeof *v, cmp_listener);
	line(s, HEAD, " %-21s %7s %-9s %7s %6s %8s %9s%*s", "LISTENER", "PID", "COMM", "BACKLOG", "FREE",
	     "ACC/S", "ACCEPTS", s->ansi && s->cols > 74 ? s->cols - 74 : 0, "");
	if (m->nlst == 0)
		line(s, NULL, "  (no listen, accept or listener_stats line yet)");
	for (i = 0; i < m->nlst; i++) {
		const struct tp_listener *l = v[i];
		char a[16], b[16], c[16], d[16], room[24], defer[32];
		int hot = l->hot_until > m->now;

		if (room_rows && (int)shown * 2 + 2 > room_rows && i + 1 < m->nlst) {
			line(s, NULL, "  ... %zu more listeners", m->nlst - i);
			break;
		}
		/* FREE: the room (backlog + 1) less what waits now. */
		if (l->capacity > 0 && l->have_queue_len && l->queue_len >= l->capacity)
			snprintf(room, sizeof room, "FULL");
		else if (l->capacity > 0)
			snprintf(room, sizeof room, "%ld", l->capacity - (l->have_queue_len ? l->queue_len : 0));
		else
			snprintf(room, sizeof room, "-");
		line(s, hot ? HOT : BOLD, " %-21.21s %7ld %-9.9s %7ld %6s %8.1f %9ld",
		     l->local[0] ? l->local : "?", l->pid, l->comm, l->backlog, room, tp_listener_rate(m, l),
		     l->accepts);
		snprintf(defer, sizeof defer, " defer %lds", l->defer_s);
		line(s, hot ? HOT : NULL, "    room %ld peak %ld full %ld  wait %s/%s  age %s/%s ms (p50/p99)  empty %ld%s",
		     l->capacity, l->peak, l->full, ms(a, sizeof a, &l->wait, l->wait.p50),
		     ms(b, sizeof b, &l->wait, l->wait.p99),
		     ms(c, sizeof c, &l->qage, l->qage.p50), ms(d, sizeof d, &l->qage, l->qage.p99), l->empty,
		     l->defer_s > 0 ? defer : "");
		shown++;
	}
	free(v);
}

static void peers(struct screen *s, const struct tp_model *m, int room_rows)
{
	const struct tp_peer **v = calloc(m->npeers + 1, sizeof *v);
	size_t i;

	if (!v)
		return;
	for (i = 0; i < m->npeers; i++)
		v[i] = &m->peers[i];
	qsort(v, m->npeers, sizeof *v, cmp_peer);
	line(s, HEAD, " %-21s %6s %6s %4s %5s %5s %5s %5s %5s %4s%*s", "PEER", "CONN/S", "CONNS", "FAIL", "<1s",
	     "~1s", "~2s", "~3s", ">3.5s", "SYN+", s->ansi && s->cols > 78 ? s->cols - 78 : 0, "");
	if (m->npeers == 0)
		line(s, NULL, "  (no connect line yet: every connect is logged at trace)");
	for (i = 0; i < m->npeers; i++) {
		const struct tp_peer *p = v[i];
		long under = p->hist[0] + p->hist[1] + p->hist[2] + p->hist[3];

		if (room_rows && (int)i + 2 > room_rows && i + 1 < m->npeers) {
			line(s, NULL, "  ... %zu more peers", m->npeers - i);
			break;
		}
		line(s, p->hot_until > m->now ? HOT : NULL, " %-21.21s %6.1f %6ld %4ld %5ld %5ld %5ld %5ld %5ld %4ld",
		     p->addr, tp_peer_rate(m, p), p->n, p->failed, under, p->hist[4], p->hist[5], p->hist[6],
		     p->hist[7], p->syn_retrans);
	}
	free(v);
}

/* Findings by their lines' time; arrival order among equal times. Lines
 * read in one refresh come file by file, so arrival alone would mix
 * processes' times. */
static int cmp_finding(const void *a, const void *b)
{
	const struct tp_finding *x = *(const struct tp_finding *const *)a, *y = *(const struct tp_finding *const *)b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void findings(struct screen *s, const struct tp_model *m, int room_rows)
{
	const struct tp_finding *v[TP_FIND_MAX];
	size_t n = m->nfind, from = 0, i, k = 0;

	line(s, HEAD, " FINDINGS %-*ld", s->ansi && s->cols > 10 ? s->cols - 10 : 0, m->findings_total);
	if (room_rows > 1 && n > (size_t)(room_rows - 1))
		from = n - (size_t)(room_rows - 1);
	if (!room_rows && n > 20)
		from = n - 20;
	for (i = from; i < n; i++)
		v[k++] = tp_model_finding(m, i);
	qsort(v, k, sizeof *v, cmp_finding);
	for (i = 0; i < k; i++) {
		const struct tp_finding *f = v[i];
		time_t ts = (time_t)f->ts;
		struct tm tm;
		char when[16];

		localtime_r(&ts, &tm);
		strftime(when, sizeof when, "%H:%M:%S", &tm);
		if (f->count > 1)
			line(s, f->seen + 5.0 > m->now ? HOT : NULL, " %s %s[%ld] %ldx %s", when, f->comm, f->pid,
			     f->count, f->text);
		else
			line(s, f->seen + 5.0 > m->now ? HOT : NULL, " %s %s[%ld] %s", when, f->comm, f->pid, f->text);
	}
}

/* The sort of listeners, as the status line names it. */
static const char *const sort_names[TP_SORT_N] = { "accepts/s", "accepts", "queue full", "wait p99", "address" };

const char *tp_sort_name(enum tp_sort s)
{
	return (unsigned)s < TP_SORT_N ? sort_names[s] : "?";
}

void tp_draw(const struct tp_model *m, const struct tp_tail *t, FILE *out, int rows, int cols,
	     enum tp_sort sort, int paused, int colour, int ansi)
{
	struct screen s = { out, rows, cols, 0, ansi && colour };
	int avail, lrows, prows;
	size_t files = 0, i;
	time_t now = (time_t)m->now;
	struct tm tm;
	char when[16];

	for (i = 0; i < t->nfiles; i++)
		files += t->files[i].path[0] != '\0';
	localtime_r(&now, &tm);
	strftime(when, sizeof when, "%H:%M:%S", &tm);
	line(&s, BOLD, "sockaudit top %s  %zu %s, %zu %s, %ld lines  sort: %s%s  q s p", when, files,
	     files == 1 ? "file" : "files", m->npids, m->npids == 1 ? "process" : "processes", m->lines,
	     tp_sort_name(sort), paused ? "  PAUSED" : "");
	if (!rows) {
		listeners(&s, m, sort, 0);
		peers(&s, m, 0);
		findings(&s, m, 0);
		return;
	}
	/* Rows below the status line: listeners first (at most half), then
	 * peers (at most half of what is left), the findings get the rest
	 * and at least 3 rows. */
	avail = rows - 1;
	lrows = 1 + (int)(m->nlst ? m->nlst * 2 : 1);
	if (lrows > avail / 2)
		lrows = avail / 2;
	prows = 1 + (int)(m->npeers ? m->npeers : 1);
	if (prows > (avail - lrows) / 2)
		prows = (avail - lrows) / 2;
	listeners(&s, m, sort, lrows - 1);
	while (s.used < 1 + lrows)
		line(&s, NULL, "%s", "");
	peers(&s, m, prows - 1);
	while (s.used < 1 + lrows + prows)
		line(&s, NULL, "%s", "");
	findings(&s, m, rows - s.used);
}
