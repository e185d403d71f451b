/*
 * log/util.c: the report's small helpers every part shares: growable
 * arrays, strings and counts that exit with a message when memory runs out
 * (a report of a huge log is not worth half an answer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"

void *log_grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(arr, ncap * size);
	if (!p) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	memset((char *)p + *cap * size, 0, (ncap - *cap) * size);
	*cap = ncap;
	return p;
}

char *log_strdup(const char *s)
{
	char *p = strdup(s ? s : "");

	if (!p) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

void log_obj_add(json_t *obj, const char *key, long n)
{
	json_t *v = json_object_get(obj, key);
	long cur = json_is_integer(v) ? (long)json_integer_value(v) : 0;

	json_object_set_new(obj, key, json_integer(cur + n));
}
