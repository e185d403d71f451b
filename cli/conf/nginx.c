/*
 * conf/nginx.c: the `listen` of an nginx configuration that opened a
 * listener, and its `backlog=`. nginx reads -c FILE (relative: to its
 * prefix, -p), else /etc/nginx/nginx.conf (Debian's); `include` takes a
 * glob, relative to the main file's folder (nginx's conf_prefix), read in
 * sorted order. Without backlog= nginx asks listen() for 511 on Linux
 * (NGX_LISTEN_BACKLOG).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

#define NGINX_DEFAULT_CONF "/etc/nginx/nginx.conf"
#define NGINX_BACKLOG 511

struct nx {
	struct cf_walk w;
	const struct cf_query *q;
	char prefix[CF_PATH];       /* the main file's folder */
	int found;                  /* the best match's score (cf_addr_match) */
	char file[CF_PATH];
	long line;
	char words[CF_TEXT];        /* the listen's arguments but backlog= */
	long backlog;               /* -1: no backlog= */
	char raw[CF_TEXT];
};

static int read_file(struct nx *x, const char *path);

static int include_one(void *ctx, const char *path)
{
	read_file(ctx, path);
	return 0;
}

/* "127.0.0.1:8080", "8080", "*:8080", "[::]:80", "unix:/p" against the listener. */
static int listen_matches(const char *addr, const char *local)
{
	char host[CF_PATH], port[32];
	const char *c;

	if (!strncmp(addr, "unix:", 5))
		return local && !strcmp(addr + 5, local) ? 2 : 0;
	c = strrchr(addr, ':');
	if (addr[0] == '[' && (!c || c < strchr(addr, ']')))
		c = NULL;
	if (!c) {
		if (strspn(addr, "0123456789") == strlen(addr))
			return cf_addr_match("", addr, local);
		return cf_addr_match(addr, "80", local);
	}
	cf_put(host, sizeof host, "%.*s", (int)(c - addr), addr);
	cf_put(port, sizeof port, "%s", c + 1);
	return cf_addr_match(host, port, local);
}

static void listen_directive(struct nx *x, const char *file, struct cf_tok *args, int n)
{
	int i, score = n >= 2 ? listen_matches(args[1].s, x->q->local) : 0;

	/* The first listen of the best score: its own address before a wildcard. */
	if (score <= x->found)
		return;
	x->found = score;
	cf_put(x->file, sizeof x->file, "%s", file);
	x->line = args[0].line;
	x->backlog = -1;
	x->words[0] = x->raw[0] = '\0';
	for (i = 0; i < n; i++) {
		cf_say(x->raw, sizeof x->raw, "%s%s", i ? " " : "", args[i].s);
		if (!strncmp(args[i].s, "backlog=", 8)) {
			x->backlog = strtol(args[i].s + 8, NULL, 10);
			continue;
		}
		cf_say(x->words, sizeof x->words, "%s%s", i ? " " : "", args[i].s);
	}
	cf_say(x->raw, sizeof x->raw, ";");
}

static int read_file(struct nx *x, const char *path)
{
	struct cf_file f;
	struct cf_tok args[CF_WORDS_MAX];
	size_t pos = 0;
	long line = 1;
	int n = 0, rc;

	if (x->w.files >= CF_FILES_MAX || x->w.depth >= CF_DEPTH_MAX)
		return -1;
	rc = cf_file_read(&f, path);
	if (rc) {
		cf_unread(&x->w, path, rc);
		return rc;
	}
	x->w.files++;
	x->w.depth++;
	while (cf_next_tok(f.text, &pos, &line, &args[n])) {
		struct cf_tok *t = &args[n];

		if (!t->special) {
			if (n < CF_WORDS_MAX - 1)
				n++;
			continue;
		}
		/* A directive ends at ';'; a block's name at '{'; '}' ends a block. */
		if (t->special == ';' && n > 0) {
			if (!strcmp(args[0].s, "include") && n >= 2) {
				rc = cf_glob(x->prefix, args[1].s, include_one, x);
				if (rc < 0) {
					char full[CF_PATH];

					cf_join(x->prefix, args[1].s, full, sizeof full);
					cf_unread(&x->w, full, rc);
				}
			} else if (!strcmp(args[0].s, "listen")) {
				listen_directive(x, path, args, n);
			}
		}
		n = 0;
	}
	x->w.depth--;
	cf_file_free(&f);
	return 0;
}

int cf_nginx(const struct cf_query *q, struct cf_answer *a)
{
	struct nx *x = calloc(1, sizeof *x);
	const char *c = cf_arg(q, "-c", NULL), *p = cf_arg(q, "-p", NULL);
	char main_file[CF_PATH];

	a->program = "nginx";
	if (!x)
		return a->origin = CF_UNREADABLE;
	x->q = q;
	if (c && c[0] != '/' && !p) {
		cf_put(a->note, sizeof a->note, "nginx was started with -c %s, a path relative to its compiled-in "
			 "prefix (nginx -V shows it), which the report does not know", c);
		free(x);
		return a->origin = CF_UNREADABLE;
	}
	cf_join(p, c ? c : NGINX_DEFAULT_CONF, main_file, sizeof main_file);
	cf_dirname(main_file, x->prefix, sizeof x->prefix);
	read_file(x, main_file);
	if (!x->found) {
		cf_put(a->file, sizeof a->file, "%s", main_file);
		if (x->w.unread[0])
			cf_put(a->note, sizeof a->note, "%s: the listen for %s may be there", x->w.unread, q->local);
		else
			cf_put(a->note, sizeof a->note, "no listen in %s or its includes (%d files) names %s",
				 main_file, x->w.files, q->local);
		free(x);
		return a->origin = CF_UNREADABLE;
	}
	cf_put(a->file, sizeof a->file, "%s", x->file);
	a->line = x->line;
	cf_put(a->directive, sizeof a->directive, "%s", x->raw);
	cf_put(a->fix, sizeof a->fix, "%s backlog=%s;", x->words, cf_n(q));
	cf_put(a->where, sizeof a->where, "instead of line %ld of %s, then nginx -s reload", x->line, x->file);
	if (x->backlog >= 0) {
		a->value = x->backlog;
		a->origin = CF_SET;
	} else {
		a->value = NGINX_BACKLOG;
		cf_put(a->note, sizeof a->note, "this listen has no backlog=, so nginx asks for %d (its default on Linux)",
			 NGINX_BACKLOG);
		a->origin = CF_DEFAULT;
	}
	if (x->w.unread[0])
		cf_say(a->note, sizeof a->note, "%s(and %s)", a->note[0] ? "; " : "", x->w.unread);
	free(x);
	return a->origin;
}
