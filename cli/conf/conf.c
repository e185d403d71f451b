/*
 * conf/conf.c: cf_backlog(), which picks the reader of the program's
 * family by its name (argv[0]'s basename, else comm).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

struct family {
	const char *name;           /* argv[0]'s basename or comm */
	const char *program;        /* as the answers name it */
	int (*read)(const struct cf_query *q, struct cf_answer *a);
};

static const struct family families[] = {
	{ "nginx", "nginx", cf_nginx },
	{ "haproxy", "haproxy", cf_haproxy },
	{ "redis-server", "redis", cf_redis },
	{ "redis-sentinel", "redis", cf_redis },
	{ "apache2", "apache2", cf_apache },
	{ "httpd", "apache2", cf_apache },
	{ "lighttpd", "lighttpd", cf_lighttpd },
	{ "memcached", "memcached", cf_memcached },
	{ "postgres", "postgres", cf_postgres },
	{ "postmaster", "postgres", cf_postgres },
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

/* The family of the program started as ARGV0 (or named COMM), as its
 * answers name it; NULL when it is none of ours. */
static const struct family *family_of(const char *argv0, const char *comm)
{
	const char *argv[1] = { argv0 };
	struct cf_query q = { comm, argv0 ? argv : NULL, argv0 ? 1 : 0, NULL, -1, -1 };
	char name[64];
	size_t i;

	cf_progname(&q, name, sizeof name);
	for (i = 0; i < sizeof families / sizeof families[0]; i++)
		if (!strcmp(name, families[i].name) || (comm && !strcmp(comm, families[i].name)))
			return &families[i];
	return NULL;
}

const char *cf_family(const char *argv0, const char *comm)
{
	const struct family *f = family_of(argv0, comm);

	return f ? f->program : NULL;
}

int cf_backlog(const struct cf_query *q0, struct cf_answer *a)
{
	struct cf_query q = *q0;
	const struct family *f;
	char *copy = NULL;
	const char *words[CF_WORDS_MAX];
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
	f = family_of(q.argv && q.argc ? q.argv[0] : NULL, q.comm);
	if (f && !copy && q.argc == 1 && strchr(q.argv[0], ' ')) {
		/* "redis-server 127.0.0.1:6379": a title, not the command line. */
		a->program = f->program;
		cf_put(a->note, sizeof a->note, "the process rewrote its command line before its first line "
		       "(\"%s\"): the files it was started with are unknown", q.argv[0]);
		rc = CF_UNREADABLE;
	} else if (f) {
		rc = f->read(&q, a);
	}
	free(copy);
	return a->origin = rc;
}
