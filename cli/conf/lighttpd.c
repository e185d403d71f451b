/*
 * conf/lighttpd.c: lighttpd's server.listen-backlog. lighttpd reads -f
 * FILE, else /etc/lighttpd/lighttpd.conf; `include "PATTERN"` (a glob) is
 * relative to the main file's folder; `include_shell` runs a command,
 * which the report does not: it is said. The value at the top level is
 * every socket's; one inside `$SERVER["socket"] == "ADDR" { }` is that
 * socket's. The default is 1024.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

#define LIGHTTPD_DEFAULT_CONF "/etc/lighttpd/lighttpd.conf"
#define LIGHTTPD_BACKLOG 1024

struct set {
	int found;
	char file[CF_PATH];
	long line, value;
	char raw[CF_TEXT];
};

struct lt {
	struct cf_walk w;
	const struct cf_query *q;
	char base[CF_PATH];
	int depth;                  /* { } nesting */
	int sock_depth;             /* the nesting of a matching $SERVER["socket"] block, 0 none */
	struct set top, sock;
	char main_file[CF_PATH];
	char shell[CF_TEXT];        /* an include_shell seen, said in the answer */
};

static void read_file(struct lt *l, const char *path);

static int include_one(void *ctx, const char *path)
{
	read_file(ctx, path);
	return 0;
}

static int socket_matches(const char *w, const char *local)
{
	const char *c = strrchr(w, ':');
	char host[CF_PATH];

	if (!c)
		return 0;
	cf_put(host, sizeof host, "%.*s", (int)(c - w), w);
	return cf_addr_match(host, c + 1, local);
}

static void assignment(struct lt *l, const char *path, const struct cf_words *ln)
{
	const char *r = ln->raw, *eq = strchr(r, '=');
	size_t kn = strcspn(r, " \t=+");
	struct set *s;

	if (!eq || kn != strlen("server.listen-backlog") || strncmp(r, "server.listen-backlog", kn))
		return;
	s = l->sock_depth && l->depth >= l->sock_depth ? &l->sock : l->depth == 0 ? &l->top : NULL;
	if (!s)
		return;   /* inside another condition: not this socket's */
	s->found = 1;
	cf_put(s->file, sizeof s->file, "%s", path);
	s->line = ln->line;
	s->value = strtol(eq + 1 + strspn(eq + 1, " \t\""), NULL, 10);
	cf_put(s->raw, sizeof s->raw, "%s", ln->raw);
}

static void read_file(struct lt *l, const char *path)
{
	struct cf_file f;
	struct cf_words *ln = malloc(sizeof *ln);
	size_t pos = 0;
	long line = 0;
	int rc;

	if (!ln || l->w.files >= CF_FILES_MAX || l->w.depth >= CF_DEPTH_MAX) {
		free(ln);
		return;
	}
	rc = cf_file_read(&f, path);
	if (rc) {
		cf_unread(&l->w, path, rc);
		free(ln);
		return;
	}
	l->w.files++;
	l->w.depth++;
	while (cf_next_line(f.text, &pos, &line, 0, ln)) {
		const char *k = ln->w[0];

		if (!strcmp(k, "include") && ln->n >= 2) {
			rc = cf_glob(l->base, ln->w[1], include_one, l);
			if (rc < 0) {
				char full[CF_PATH];

				cf_join(l->base, ln->w[1], full, sizeof full);
				cf_unread(&l->w, full, rc);
			}
		} else if (!strcmp(k, "include_shell")) {
			/* Debian's stock file runs one to make its MIME table: a
			 * command's output is not read, only said. */
			if (!l->shell[0])
				cf_put(l->shell, sizeof l->shell, "%s at %s:%ld was not run: its output could set it too",
				       ln->raw, path, ln->line);
		} else if (k[0] == '$' && !strcmp(ln->w[ln->n - 1], "{")) {
			l->depth++;
			if (!strcmp(k, "$SERVER[socket]") && ln->n >= 4 && !strcmp(ln->w[1], "==") &&
			    socket_matches(ln->w[2], l->q->local))
				l->sock_depth = l->depth;
		} else if (!strcmp(k, "}") || (k[0] == '}' && ln->n > 1)) {
			if (l->sock_depth == l->depth)
				l->sock_depth = 0;
			if (l->depth > 0)
				l->depth--;
			/* `} else $X == "y" {` opens the next branch. */
			if (ln->n > 1 && !strcmp(ln->w[ln->n - 1], "{"))
				l->depth++;
		} else {
			assignment(l, path, ln);
		}
	}
	l->w.depth--;
	cf_file_free(&f);
	free(ln);
}

int cf_lighttpd(const struct cf_query *q, struct cf_answer *a)
{
	struct lt *l = calloc(1, sizeof *l);
	const char *f = cf_arg(q, "-f", NULL);
	const struct set *s;

	a->program = "lighttpd";
	if (!l)
		return a->origin = CF_UNREADABLE;
	l->q = q;
	cf_put(l->main_file, sizeof l->main_file, "%s", f ? f : LIGHTTPD_DEFAULT_CONF);
	cf_put(a->file, sizeof a->file, "%s", l->main_file);
	cf_put(a->fix, sizeof a->fix, "server.listen-backlog = %s", cf_n(q));
	if (l->main_file[0] != '/') {
		cf_put(a->note, sizeof a->note, "lighttpd was started with -f %s, a path relative to its working "
			 "directory, which the log does not carry", l->main_file);
		free(l);
		return a->origin = CF_UNREADABLE;
	}
	cf_dirname(l->main_file, l->base, sizeof l->base);
	read_file(l, l->main_file);
	s = l->sock.found ? &l->sock : l->top.found ? &l->top : NULL;
	if (!l->w.files || (!s && l->w.unread[0])) {
		cf_put(a->note, sizeof a->note, "%s", l->w.unread);
		free(l);
		return a->origin = CF_UNREADABLE;
	}
	if (s) {
		cf_put(a->file, sizeof a->file, "%s", s->file);
		a->line = s->line;
		a->value = s->value;
		cf_put(a->directive, sizeof a->directive, "%s", s->raw);
		cf_put(a->where, sizeof a->where, "instead of line %ld of %s, then restart lighttpd", s->line, s->file);
		a->origin = CF_SET;
	} else {
		a->value = LIGHTTPD_BACKLOG;
		cf_put(a->note, sizeof a->note, "no server.listen-backlog is written: lighttpd asks for %d, "
			 "its default", LIGHTTPD_BACKLOG);
		cf_put(a->where, sizeof a->where, "as a line of %s, then restart lighttpd", l->main_file);
		a->origin = CF_DEFAULT;
	}
	if (l->w.unread[0])
		cf_say(a->note, sizeof a->note, "%s(%s)", a->note[0] ? " " : "", l->w.unread);
	if (l->shell[0])
		cf_say(a->note, sizeof a->note, "%s(%s)", a->note[0] ? " " : "", l->shell);
	free(l);
	return a->origin;
}
