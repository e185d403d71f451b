/*
 * log/get.c: typed field access on a line's jansson tree that tolerates
 * missing fields and wrong types (a missing or non-finite number is "not
 * there", never 0). Every verb reads lines through these, and a line the
 * scanner left to jansson becomes the same struct log_ev here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"

int log_num(const json_t *o, const char *key, double *out)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
	double d;

	if (!json_is_number(v))
		return 0;
	d = json_number_value(v);
	if (!isfinite(d))
		return 0;
	*out = d;
	return 1;
}

int log_long(const json_t *o, const char *key, long *out)
{
	double d;

	if (!log_num(o, key, &d) || d > 9.0e18 || d < -9.0e18)
		return 0;
	*out = (long)d;
	return 1;
}

const char *log_str(const json_t *o, const char *key)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int log_pct_get(const json_t *o, const char *key, struct log_pct *p)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
	int n = 0;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(v))
		return 0;
	n += log_num(v, "p50", &p->p50);
	n += log_num(v, "p95", &p->p95);
	n += log_num(v, "p99", &p->p99);
	n += log_num(v, "max", &p->max);
	if (!log_num(v, "n", &p->n))
		p->n = -1;
	p->have = n > 0;
	return p->have;
}

/* The fields log_scan() reads, from a jansson tree: the two paths give the
 * same struct for the same line. */
void log_ev_from_tree(const json_t *o, struct log_ev *ev)
{
	json_t *arr = json_object_get(o, "findings"), *v;
	size_t i;

	memset(ev, 0, sizeof(*ev));
	ev->findings = ev->fbuf;
	ev->name = log_str(o, "event");
	ev->comm = log_str(o, "comm");
	ev->msg = log_str(o, "msg");
	ev->err = log_str(o, "errno");
	ev->outcome = log_str(o, "outcome");
	ev->peer = log_str(o, "peer");
	ev->local = log_str(o, "local");
	ev->have_queue_ms = log_num(o, "queue_ms", &ev->queue_ms);
	ev->have_queue_len = log_num(o, "queue_len", &ev->queue_len);
	ev->have_queue_capacity = log_num(o, "queue_capacity", &ev->queue_capacity);
	ev->have_schema = log_num(o, "schema", &ev->schema);
	ev->have_pid = log_num(o, "pid", &ev->pid);
	ev->have_ts = log_num(o, "ts", &ev->ts);
	ev->have_listen_fd = log_num(o, "listen_fd", &ev->listen_fd);
	ev->have_ret = log_num(o, "ret", &ev->ret);
	ev->have_connect_ms = log_num(o, "connect_ms", &ev->connect_ms);
	ev->have_syn_retrans = log_num(o, "syn_retrans", &ev->syn_retrans);
	ev->after_interrupt = json_is_true(json_object_get(o, "after_interrupt"));
	if (!json_is_array(arr))
		return;
	ev->have_findings = 1;
	ev->nfindings_all = json_array_size(arr);
	if (ev->nfindings_all > LOG_EV_FINDINGS) {
		ev->findings = malloc(ev->nfindings_all * sizeof(*ev->findings));
		if (!ev->findings) {
			fputs("sockaudit report: out of memory\n", stderr);
			exit(1);
		}
	}
	LOG_ARRAY_EACH(arr, i, v)
		if (json_is_string(v))
			ev->findings[ev->nfindings++] = json_string_value(v);
}

void log_ev_free(struct log_ev *ev)
{
	if (ev->findings != ev->fbuf)
		free(ev->findings);
	ev->findings = ev->fbuf;
}

int log_ev_long(int have, double d, long *out)
{
	if (!have || !isfinite(d) || d > 9.0e18 || d < -9.0e18)
		return 0;
	*out = (long)d;
	return 1;
}
