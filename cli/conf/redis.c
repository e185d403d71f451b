/*
 * conf/redis.c: redis-server's tcp-backlog. The first argument that is
 * not an option names the config file (redis has no default path: without
 * one it runs on its built-in values), `include` pulls in another file
 * (relative to the process's working directory, which the log does not
 * carry), the last `tcp-backlog` read wins, and `--tcp-backlog N` on the
 * command line comes after every file. The default is 511. redis reads it
 * at start only (CONFIG SET cannot change it): the fix needs a restart.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/conf.h"

#define REDIS_BACKLOG 511

struct rd {
	struct cf_walk w;
	char main_file[CF_PATH];
	int found;
	char file[CF_PATH];
	long line, value;
	char raw[CF_TEXT];
};

static void read_file(struct rd *r, const char *path)
{
	struct cf_file f;
	struct cf_words *ln = malloc(sizeof *ln);
	size_t pos = 0;
	long line = 0;
	int rc;

	if (!ln || r->w.files >= CF_FILES_MAX || r->w.depth >= CF_DEPTH_MAX) {
		free(ln);
		return;
	}
	rc = cf_file_read(&f, path);
	if (rc) {
		cf_unread(&r->w, path, rc);
		free(ln);
		return;
	}
	r->w.files++;
	r->w.depth++;
	while (cf_next_line(f.text, &pos, &line, 0, ln)) {
		if (!strcasecmp(ln->w[0], "include") && ln->n >= 2) {
			if (ln->w[1][0] != '/')
				cf_unread(&r->w, ln->w[1], -ENOENT);
			else
				read_file(r, ln->w[1]);
		} else if (!strcasecmp(ln->w[0], "tcp-backlog") && ln->n >= 2) {
			r->found = 1;
			cf_put(r->file, sizeof r->file, "%s", path);
			r->line = ln->line;
			r->value = strtol(ln->w[1], NULL, 10);
			cf_put(r->raw, sizeof r->raw, "%s", ln->raw);
		}
	}
	r->w.depth--;
	cf_file_free(&f);
	free(ln);
}

int cf_redis(const struct cf_query *q, struct cf_answer *a)
{
	struct rd *r = calloc(1, sizeof *r);
	const char *file = q->argv && q->argc > 1 && q->argv[1][0] != '-' ? q->argv[1] : NULL;
	const char *opt = cf_arg(q, NULL, "--tcp-backlog");

	a->program = "redis";
	if (!r)
		return a->origin = CF_UNREADABLE;
	cf_put(a->fix, sizeof a->fix, "tcp-backlog %s", cf_n(q));
	if (opt) {
		a->value = strtol(opt, NULL, 10);
		cf_put(a->directive, sizeof a->directive, "--tcp-backlog %s", opt);
		cf_put(a->fix, sizeof a->fix, "--tcp-backlog %s", cf_n(q));
		cf_put(a->where, sizeof a->where, "on redis-server's command line instead, then restart it");
		free(r);
		return a->origin = CF_ARGV;
	}
	if (!file) {
		a->value = REDIS_BACKLOG;
		cf_put(a->note, sizeof a->note, "redis-server was started without a config file: tcp-backlog is "
			 "its default, %d", REDIS_BACKLOG);
		cf_put(a->where, sizeof a->where, "in a config file named on its command line "
			 "(or --tcp-backlog %s), then restart it", cf_n(q));
		free(r);
		return a->origin = CF_DEFAULT;
	}
	if (file[0] != '/') {
		cf_put(a->note, sizeof a->note, "redis-server was started with %s, a path relative to its working "
			 "directory, which the log does not carry", file);
		free(r);
		return a->origin = CF_UNREADABLE;
	}
	read_file(r, file);
	if (r->w.unread[0] && !r->found) {
		cf_put(a->file, sizeof a->file, "%s", file);
		cf_put(a->note, sizeof a->note, "%s", r->w.unread);
		free(r);
		return a->origin = CF_UNREADABLE;
	}
	if (r->found) {
		cf_put(a->file, sizeof a->file, "%s", r->file);
		a->line = r->line;
		a->value = r->value;
		cf_put(a->directive, sizeof a->directive, "%s", r->raw);
		cf_put(a->where, sizeof a->where, "instead of line %ld of %s, then restart redis-server "
			 "(CONFIG SET cannot change it)", r->line, r->file);
		a->origin = CF_SET;
	} else {
		cf_put(a->file, sizeof a->file, "%s", file);
		a->value = REDIS_BACKLOG;
		cf_put(a->note, sizeof a->note, "%s sets no tcp-backlog: redis's default is %d", file, REDIS_BACKLOG);
		cf_put(a->where, sizeof a->where, "as a line of %s, then restart redis-server", file);
		a->origin = CF_DEFAULT;
	}
	if (r->w.unread[0])
		cf_say(a->note, sizeof a->note, "%s(%s: it may set tcp-backlog too)", a->note[0] ? " " : "", r->w.unread);
	free(r);
	return a->origin;
}
