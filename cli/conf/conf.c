/*
 * conf/conf.c: cf_backlog(), which picks the reader of the program's
 * family by its name (argv[0]'s basename, else comm).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

struct family {
	const char *name;
	int (*read)(const struct cf_query *q, struct cf_answer *a);
};

static const struct family families[] = {
	{ "nginx", cf_nginx },
	{ "haproxy", cf_haproxy },
	{ "redis-server", cf_redis },
	{ "redis-sentinel", cf_redis },
	{ "apache2", cf_apache },
	{ "httpd", cf_apache },
	{ "lighttpd", cf_lighttpd },
	{ "memcached", cf_memcached },
	{ "postgres", cf_postgres },
	{ "postmaster", cf_postgres },
};

const char *cf_origin_name(int origin)
{
	switch (origin) {
	case CF_SET: return "set";
	case CF_DEFAULT: return "default";
	case CF_DERIVED: return "derived";
	case CF_ARGV: return "command_line";
	case CF_UNREADABLE: return "unreadable";
	default: return "unknown";
	}
}

int cf_backlog(const struct cf_query *q0, struct cf_answer *a)
{
	struct cf_query q = *q0;
	char name[64], *copy = NULL;
	const char *words[CF_WORDS_MAX];
	size_t i;
	int rc = CF_UNKNOWN;

	memset(a, 0, sizeof *a);
	a->value = -1;
	/* A process that retitled itself before its first line ("nginx:
	 * master process /usr/sbin/nginx -c /etc/x.conf") holds its old
	 * command line after the colon, one string. */
	if (q.argv && q.argc == 1 && strstr(q.argv[0], " process ")) {
		char *save = NULL, *w;

		copy = strdup(strstr(q.argv[0], " process ") + 9);
		q.argc = 0;
		for (w = copy ? strtok_r(copy, " ", &save) : NULL; w && q.argc < CF_WORDS_MAX;
		     w = strtok_r(NULL, " ", &save))
			words[q.argc++] = w;
		q.argv = words;
	}
	cf_progname(&q, name, sizeof name);
	for (i = 0; i < sizeof families / sizeof families[0]; i++)
		if (!strcmp(name, families[i].name) || (q.comm && !strcmp(q.comm, families[i].name))) {
			rc = families[i].read(&q, a);
			break;
		}
	free(copy);
	return a->origin = rc;
}
