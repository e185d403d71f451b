/*
 * conf/memcached.c: memcached has no configuration file of its own: its
 * backlog is the -b (--listen-backlog) flag of its command line, 1024
 * when not given. (Debian's service turns the lines of
 * /etc/memcached.conf into that command line.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

#define MEMCACHED_BACKLOG 1024

int cf_memcached(const struct cf_query *q, struct cf_answer *a)
{
	const char *b = cf_arg(q, "-b", "--listen-backlog");

	a->program = "memcached";
	cf_put(a->fix, sizeof a->fix, "-b %s", cf_n(q));
	if (!q->argv) {
		cf_put(a->note, sizeof a->note, "the log does not carry memcached's command line");
		return a->origin = CF_UNREADABLE;
	}
	if (b) {
		a->value = strtol(b, NULL, 10);
		cf_put(a->directive, sizeof a->directive, "-b %s", b);
		cf_put(a->where, sizeof a->where, "on memcached's command line instead of -b %s, then restart it "
			 "(Debian's service: the -b line of /etc/memcached.conf)", b);
		return a->origin = CF_ARGV;
	}
	a->value = MEMCACHED_BACKLOG;
	cf_put(a->note, sizeof a->note, "memcached was started without -b: it asks for %d, its default",
		 MEMCACHED_BACKLOG);
	cf_put(a->where, sizeof a->where, "on memcached's command line, then restart it "
		 "(Debian's service: a line of /etc/memcached.conf)");
	return a->origin = CF_DEFAULT;
}
