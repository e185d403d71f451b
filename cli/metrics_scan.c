/*
 * metrics_scan.c: the accept and connect lines of a trace log read for
 * `sockaudit metrics` at the speed a follower must keep (100,000 lines a
 * second for a few per cent of a core): one pass over the line that finds
 * each top-level key and the end of its value, and converts only the
 * handful of values the metrics use. The report's scanner (report_scan.c)
 * converts every number, which is most of its time; this one skips them.
 *
 * Anything it is not sure of (a backslash anywhere, a syntax error, a
 * value it needs that is not of its type) returns 0, and the caller parses
 * the line with jansson: same result, slower. A raw control byte in a
 * string (the library never writes one; jansson refuses the line) is
 * taken as it is.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "metrics.h"

static const char *ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/* p after an opening quote: the closing quote, or NULL. The caller made
 * sure the line has no backslash, so the next quote is the end. */
static const char *str_end(const char *p, const char *e)
{
	/* Our strings are short (names, addresses): a loop beats a call. */
	while (p < e && *p != '"')
		p++;
	return p < e ? p : NULL;
}

/* A nested array or object: its end (after the closer), or NULL. */
static const char *skip_nested(const char *p, const char *e)
{
	int depth = 0;

	for (; p < e; p++) {
		if (*p == '"') {
			p = str_end(p + 1, e);
			if (!p)
				return NULL;
		} else if (*p == '[' || *p == '{') {
			depth++;
		} else if (*p == ']' || *p == '}') {
			if (--depth == 0)
				return p + 1;
			if (depth < 0)
				return NULL;
		}
	}
	return NULL;
}

/* A JSON number into *out: 1, or 0 when it is not one (null is 0 too). */
static int number(const char *p, const char *e, double *out)
{
	char buf[40], *end;
	size_t n = (size_t)(e - p);
	long v = 0;
	int neg = 0;
	const char *q = p;

	if (q < e && *q == '-') {
		neg = 1;
		q++;
	}
	if (q == e || *q < '0' || *q > '9')
		return 0;
	for (; q < e && *q >= '0' && *q <= '9' && v < 100000000000000L; q++)
		v = v * 10 + (*q - '0');
	if (q == e) {            /* an integer: most values */
		*out = neg ? (double)-v : (double)v;
		return 1;
	}
	if (n >= sizeof buf)
		return 0;
	memcpy(buf, p, n);
	buf[n] = '\0';
	*out = strtod(buf, &end);
	return *end == '\0';
}

/* The bytes that end a number, true, false or null. */
static const unsigned char lit_end[256] = { [','] = 1, ['}'] = 1, [' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\n'] = 1, [']'] = 1 };

#define KEY(k) (klen == sizeof(k) - 1 && memcmp(key, k, sizeof(k) - 1) == 0)

int mx_scan(char *line, size_t len, struct rp_ev *ev)
{
	const char *p = line, *e = line + len, *key, *v, *ve;
	size_t klen;

	memset(ev, 0, offsetof(struct rp_ev, fbuf));
	ev->findings = ev->fbuf;
	if (memchr(line, '\\', len))
		return 0;
	p = ws(p, e);
	if (p >= e || *p++ != '{')
		return 0;
	for (;;) {
		p = ws(p, e);
		if (p >= e || *p != '"' || !(ve = str_end(p + 1, e)))
			return 0;
		key = p + 1;
		klen = (size_t)(ve - key);
		p = ws(ve + 1, e);
		if (p >= e || *p++ != ':')
			return 0;
		p = ws(p, e);
		if (p >= e)
			return 0;
		v = p;
		if (*p == '"') {
			if (!(ve = str_end(p + 1, e)))
				return 0;
			p = ve + 1;
			/* Strings end in place: the buffer is ours. */
			if (KEY("event") || KEY("comm") || KEY("outcome") || KEY("peer")) {
				line[ve - line] = '\0';
				if (KEY("event"))
					ev->name = v + 1;
				else if (KEY("comm"))
					ev->comm = v + 1;
				else if (KEY("outcome"))
					ev->outcome = v + 1;
				else
					ev->peer = v + 1;
			}
		} else if (*p == '[' || *p == '{') {
			if (!(ve = skip_nested(p, e)))
				return 0;
			if (KEY("findings") && *p == '[') {
				const char *a = ws(p + 1, ve - 1), *q;

				ev->have_findings = 1;
				while (a < ve - 1) {
					if (*a != '"' || !(q = str_end(a + 1, ve)))
						return 0;   /* not a string: leave it to jansson */
					ev->nfindings_all++;
					if (ev->nfindings >= RP_EV_FINDINGS)
						return 0;
					line[q - line] = '\0';
					ev->fbuf[ev->nfindings++] = a + 1;
					a = ws(q + 1, ve - 1);
					if (a < ve - 1 && *a == ',')
						a = ws(a + 1, ve - 1);
				}
			}
			p = ve;
		} else {
			while (p < e && !lit_end[(unsigned char)*p])
				p++;
			if (KEY("pid"))
				ev->have_pid = number(v, p, &ev->pid);
			else if (KEY("listen_fd"))
				ev->have_listen_fd = number(v, p, &ev->listen_fd);
			else if (KEY("ret"))
				ev->have_ret = number(v, p, &ev->ret);
			else if (KEY("connect_ms"))
				ev->have_connect_ms = number(v, p, &ev->connect_ms);
			else if (KEY("syn_retrans"))
				ev->have_syn_retrans = number(v, p, &ev->syn_retrans);
		}
		p = ws(p, e);
		if (p < e && *p == ',') {
			p++;
			continue;
		}
		if (p < e && *p == '}')
			return ws(p + 1, e) == e;
		return 0;
	}
}
