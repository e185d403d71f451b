/*
 * log/get.c: typed field access on a line's jansson tree that tolerates
 * missing fields and wrong types (a missing or non-finite number is "not
 * there", never 0). Every verb reads lines through these.
 */
#include <math.h>
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
