/*
 * report/text_util.c: how the text report prints a value: escaped strings
 * (a log cannot drive the terminal), headings, numbers, percentiles, times
 * and counts. Shared by report_print*.c and the HTML page's times.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report/report.h"

struct tp_style tp_S = { "", "", "", "", "", "" };   /* plain until a verb sets colour */

/* Prints s with control characters escaped (C0, DEL and UTF-8-encoded C1),
 * at most max display characters (0 = no limit); returns the characters
 * printed so callers can pad. */
int tp_safe(FILE *out, const char *s, int max)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	int n = 0;

	for (; *p; p++) {
		if (max && n >= max) {
			fputs("…", out);
			return n + 1;
		}
		if (*p < 0x20 || *p == 0x7f) {
			n += fprintf(out, "\\x%02x", *p);
		} else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			n += fprintf(out, "\\u%04x", p[1]);
			p++;
		} else {
			fputc(*p, out);
			if ((*p & 0xc0) != 0x80)
				n++;
		}
	}
	return n;
}

void tp_heading(FILE *out, const char *title)
{
	fprintf(out, "\n%s== %s%s\n", tp_S.bold, title, tp_S.off);
}

/* Numbers as people write them: 12, 0.25, 1.5, 1234. */
void tp_num(FILE *out, double v)
{
	if (fabs(v) >= 1e15)
		fprintf(out, "%.3g", v);
	else if (v == floor(v))
		fprintf(out, "%.0f", v);
	else if (fabs(v) < 10)
		fprintf(out, "%.2f", v);
	else
		fprintf(out, "%.1f", v);
}

void tp_pct(FILE *out, const char *label, const struct log_pct *p, const char *unit)
{
	fprintf(out, "    %-14s p50 ", label);
	tp_num(out, p->p50);
	fputs("  p95 ", out);
	tp_num(out, p->p95);
	fputs("  p99 ", out);
	tp_num(out, p->p99);
	fputs("  max ", out);
	tp_num(out, p->max);
	fprintf(out, " %s", unit);
	if (p->n >= 0) {
		fputs(" (n ", out);
		tp_num(out, p->n);
		fputc(')', out);
	}
	fputc('\n', out);
}

void tp_time(FILE *out, double ts)
{
	time_t t = (time_t)ts;
	struct tm tm;
	char buf[32];

	if (ts <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%H:%M:%S", &tm))
		fputs("?", out);
	else
		fputs(buf, out);
}

/* "name 3, other 1" for an object of counts, in the order the shim wrote
 * them; with skip_zero, zeros are left out and counted at the end. */
void tp_counts(FILE *out, const json_t *obj, int skip_zero)
{
	const char *k;
	json_t *v;
	void *it;
	int first = 1, zeros = 0;

	LOG_OBJECT_EACH(obj, it, k, v) {
		if (!json_is_number(v))
			continue;
		if (skip_zero && json_number_value(v) == 0) {
			zeros++;
			continue;
		}
		fputs(first ? "" : ", ", out);
		tp_safe(out, k, 40);
		fputc(' ', out);
		tp_num(out, json_number_value(v));
		first = 0;
	}
	if (first)
		fputs(zeros ? "all 0" : "none", out);
	else if (zeros)
		fprintf(out, " (%d more at 0)", zeros);
}

/* 1 when obj has no number other than 0 (or no number at all). */
int tp_all_zero(const json_t *obj)
{
	const char *k;
	json_t *v;
	void *it;

	LOG_OBJECT_EACH(obj, it, k, v)
		if (json_is_number(v) && json_number_value(v) != 0)
			return 0;
	return 1;
}

/* The first sentence of an explanation, for the top list. */
void tp_first_sentence(FILE *out, const char *s)
{
	const char *e = s ? strstr(s, ". ") : NULL;
	char buf[400];
	size_t n = e ? (size_t)(e - s) + 1 : (s ? strlen(s) : 0);

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s ? s : "", n);
	buf[n] = '\0';
	tp_safe(out, buf, 0);
}
