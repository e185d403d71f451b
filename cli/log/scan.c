/*
 * log/scan.c: a fast path for the lines that make up almost all of a
 * trace log (accept and connect), read without building a jansson tree.
 *
 * log_scan() checks that a line is one JSON object in the plain subset the
 * shim writes (ASCII, no escapes, integers that fit, nesting under 64) and
 * picks out the top-level fields the report uses for those events. Anything
 * it is not sure of (any backslash, any byte >= 0x80, an exponent, a long
 * integer, too many findings, any syntax error) makes it return 0 and the
 * caller parses the line with jansson exactly as before, so both paths give
 * the same result: the same lines skipped, the same fields read.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"

struct scan {
	char *p, *end;
	struct log_ev *ev;
	int depth;
};

static void ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* A string without escapes; on success *out points at its first byte and
 * the closing quote is overwritten with NUL (the buffer is ours). */
static int str(struct scan *s, char **out)
{
	char *q;

	if (s->p >= s->end || *s->p != '"')
		return 0;
	for (q = s->p + 1; q < s->end; q++) {
		unsigned char c = (unsigned char)*q;

		if (c == '"')
			break;
		if (c == '\\' || c < 0x20 || c >= 0x80)
			return 0;
	}
	if (q >= s->end)
		return 0;
	*out = s->p + 1;
	*q = '\0';
	s->p = q + 1;
	return 1;
}

/* A number in jansson's grammar, without exponents; integers of more than
 * 18 digits are left to jansson (it rejects what overflows). */
static int num(struct scan *s, double *out)
{
	char *b = s->p, *q = s->p;
	int digits = 0, real = 0;

	if (q < s->end && *q == '-')
		q++;
	if (q < s->end && *q == '0') {
		q++;
		digits = 1;
	} else {
		while (q < s->end && *q >= '0' && *q <= '9') {
			q++;
			digits++;
		}
	}
	if (!digits)
		return 0;
	if (q < s->end && *q == '.') {
		int frac = 0;

		real = 1;
		q++;
		while (q < s->end && *q >= '0' && *q <= '9') {
			q++;
			frac++;
		}
		if (!frac)
			return 0;
	}
	if (q < s->end && (*q == 'e' || *q == 'E'))
		return 0;
	if (!real && digits > 18)
		return 0;
	if (out && !real) {
		/* At most 18 digits: exact in a long long, and the common case
		 * (pids, fds, queue lengths) costs no strtoll. */
		const char *d = b + (*b == '-');
		long long v = 0;

		for (; d < q; d++)
			v = v * 10 + (*d - '0');
		*out = (double)(*b == '-' ? -v : v);
	} else if (out) {
		char save = q < s->end ? *q : 0, *e;

		/* strtod needs a terminator; the byte after a number is never
		 * part of it, so borrow it. */
		if (q < s->end)
			*q = '\0';
		*out = strtod(b, &e);
		if (q < s->end)
			*q = save;
		if (!isfinite(*out))    /* jansson calls it an overflow */
			return 0;
	}
	s->p = q;
	return 1;
}

static int lit(struct scan *s, const char *w, size_t n)
{
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
		return 0;
	s->p += n;
	return 1;
}

static int value(struct scan *s);

static int container(struct scan *s, char open)
{
	char close = open == '{' ? '}' : ']';

	if (++s->depth > 64)
		return 0;
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		s->depth--;
		return 1;
	}
	for (;;) {
		if (open == '{') {
			char *k;

			ws(s);
			if (!str(s, &k))
				return 0;
			ws(s);
			if (s->p >= s->end || *s->p++ != ':')
				return 0;
		}
		ws(s);
		if (!value(s))
			return 0;
		ws(s);
		if (s->p >= s->end)
			return 0;
		if (*s->p == ',') {
			s->p++;
			continue;
		}
		if (*s->p++ != close)
			return 0;
		s->depth--;
		return 1;
	}
}

static int value(struct scan *s)
{
	char *x;

	if (s->p >= s->end)
		return 0;
	switch (*s->p) {
	case '"': return str(s, &x);
	case '{': case '[': return container(s, *s->p);
	case 't': return lit(s, "true", 4);
	case 'f': return lit(s, "false", 5);
	case 'n': return lit(s, "null", 4);
	default: return num(s, NULL);
	}
}

/* The findings array: strings are kept (up to LOG_EV_FINDINGS), anything
 * else in it is checked and ignored, as the jansson path ignores it. */
static int findings(struct scan *s)
{
	struct log_ev *ev = s->ev;

	ev->nfindings = 0;
	ev->nfindings_all = 0;
	ev->have_findings = 1;
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		return 1;
	}
	for (;;) {
		ws(s);
		ev->nfindings_all++;
		if (s->p < s->end && *s->p == '"') {
			char *c;

			if (!str(s, &c) || ev->nfindings >= LOG_EV_FINDINGS)
				return 0;
			ev->fbuf[ev->nfindings++] = c;
		} else if (!value(s)) {
			return 0;
		}
		ws(s);
		if (s->p >= s->end)
			return 0;
		if (*s->p == ',') {
			s->p++;
			continue;
		}
		return *s->p++ == ']';
	}
}

/* One top-level member: a field the report reads is decoded, the rest
 * only checked. A repeated key takes the last value, as in jansson. */
static int member(struct scan *s, const char *k, size_t klen)
{
	struct log_ev *ev = s->ev;
	char c = s->p < s->end ? *s->p : 0;
	const char **sp = NULL;
	double *dp = NULL;
	int *hp = NULL;

	/* Keys by length, then bytes: most keys differ in length, so most
	 * tests are one integer compare, where strcmp walks each key's bytes
	 * for every member of every line. */
#define KEY(lit) (klen == sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)
	if (KEY("event")) sp = &ev->name;
	else if (KEY("comm")) sp = &ev->comm;
	else if (KEY("msg")) sp = &ev->msg;
	else if (KEY("errno")) sp = &ev->err;
	else if (KEY("outcome")) sp = &ev->outcome;
	else if (KEY("peer")) sp = &ev->peer;
	else if (KEY("local")) sp = &ev->local;
	else if (KEY("queue_ms")) { dp = &ev->queue_ms; hp = &ev->have_queue_ms; }
	else if (KEY("queue_len")) { dp = &ev->queue_len; hp = &ev->have_queue_len; }
	else if (KEY("queue_capacity")) { dp = &ev->queue_capacity; hp = &ev->have_queue_capacity; }
	else if (KEY("schema")) { dp = &ev->schema; hp = &ev->have_schema; }
	else if (KEY("pid")) { dp = &ev->pid; hp = &ev->have_pid; }
	else if (KEY("ts")) { dp = &ev->ts; hp = &ev->have_ts; }
	else if (KEY("listen_fd")) { dp = &ev->listen_fd; hp = &ev->have_listen_fd; }
	else if (KEY("ret")) { dp = &ev->ret; hp = &ev->have_ret; }
	else if (KEY("connect_ms")) { dp = &ev->connect_ms; hp = &ev->have_connect_ms; }
	else if (KEY("syn_retrans")) { dp = &ev->syn_retrans; hp = &ev->have_syn_retrans; }
	else if (KEY("after_interrupt")) {
		/* Only true counts, as json_is_true() on the jansson path. */
		ev->after_interrupt = c == 't';
		return value(s);
	}
	else if (KEY("findings")) {
		if (c == '[')
			return findings(s);
		ev->have_findings = 0;
		ev->nfindings = 0;
		ev->nfindings_all = 0;
		return value(s);
	}
	if (sp) {
		char *v;

		if (c == '"') {
			if (!str(s, &v))
				return 0;
			*sp = v;
			return 1;
		}
		*sp = NULL;
		return value(s);
	}
	if (dp) {
		if (c == '-' || (c >= '0' && c <= '9')) {
			if (!num(s, dp))
				return 0;
			*hp = 1;
			return 1;
		}
		*hp = 0;
		return value(s);
	}
	return value(s);
}

int log_scan(char *line, size_t len, struct log_ev *ev)
{
	struct scan s = { line, line + len, ev, 1 };

	memset(ev, 0, sizeof(*ev));
	ev->findings = ev->fbuf;
	ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return 0;
	s.p++;
	ws(&s);
	if (s.p < s.end && *s.p == '}') {
		s.p++;
	} else {
		for (;;) {
			char *k;
			size_t klen;

			ws(&s);
			if (!str(&s, &k))
				return 0;
			klen = (size_t)(s.p - 1 - k);   /* str left s.p past the quote */
			ws(&s);
			if (s.p >= s.end || *s.p++ != ':')
				return 0;
			ws(&s);
			if (!member(&s, k, klen))
				return 0;
			ws(&s);
			if (s.p >= s.end)
				return 0;
			if (*s.p == ',') {
				s.p++;
				continue;
			}
			if (*s.p++ != '}')
				return 0;
			break;
		}
	}
	ws(&s);
	return s.p == s.end;
}
