/*
 * conf/haproxy.c: the `bind` of a haproxy frontend or listen section that
 * opened a listener, and where its backlog comes from. haproxy reads every
 * -f FILE or DIR (a folder: its *.cfg files in name order), Debian's
 * service /etc/haproxy/haproxy.cfg. Its listener_backlog() takes the
 * bind's `backlog`, else the section's `backlog`, else the section's
 * `maxconn` (a `defaults` section's values carry into the sections after
 * it; a frontend without maxconn has the global one): so the backlog
 * derives from maxconn unless a `backlog` is written.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

#define HAPROXY_DEFAULT_CONF "/etc/haproxy/haproxy.cfg"

struct setting {
	long value;                 /* -1 unset */
	char file[CF_PATH];
	long line;
	char raw[CF_TEXT];
};

struct hp {
	struct cf_walk w;
	const struct cf_query *q;
	int section;                /* 0 none/other, 'g' global, 'd' defaults, 'p' frontend or listen */
	struct setting def_backlog, def_maxconn, glob_maxconn, px_backlog, px_maxconn;
	int in_match;               /* the current section holds the bind */
	int done;
	struct setting bind, bind_backlog, backlog, maxconn;
	char bind_words[CF_TEXT];   /* the bind line without its backlog */
};

static void set(struct setting *s, const char *file, const struct cf_words *ln, const char *value)
{
	s->value = strtol(value, NULL, 10);
	cf_put(s->file, sizeof s->file, "%s", file);
	s->line = ln->line;
	cf_put(s->raw, sizeof s->raw, "%s", ln->raw);
}

/* The section that held the bind is over: keep what applied to it. */
static void section_end(struct hp *h)
{
	if (h->in_match && !h->done) {
		h->backlog = h->px_backlog.value >= 0 ? h->px_backlog : h->def_backlog;
		h->maxconn = h->px_maxconn.value >= 0 ? h->px_maxconn : h->def_maxconn;
		h->done = 1;
	}
	h->in_match = 0;
}

static int bind_matches(const char *addrs, const char *local)
{
	char buf[CF_TEXT], *save = NULL, *a;

	cf_put(buf, sizeof buf, "%s", addrs);
	for (a = strtok_r(buf, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		char *c = strrchr(a, ':');
		char host[CF_PATH];

		if (!c)
			continue;
		cf_put(host, sizeof host, "%.*s", (int)(c - a), a);
		if (!strncmp(host, "ipv4@", 5) || !strncmp(host, "ipv6@", 5))
			memmove(host, host + 5, strlen(host + 5) + 1);
		if (cf_addr_match(host, c + 1, local))
			return 1;
	}
	return 0;
}

static void bind_line(struct hp *h, const char *file, const struct cf_words *ln, int first)
{
	int i;

	if (h->done || h->in_match || ln->n <= first || !bind_matches(ln->w[first], h->q->local))
		return;
	h->in_match = 1;
	set(&h->bind, file, ln, "0");
	h->bind_words[0] = '\0';
	for (i = 0; i < ln->n; i++) {
		if (!strcmp(ln->w[i], "backlog") && i + 1 < ln->n) {
			set(&h->bind_backlog, file, ln, ln->w[i + 1]);
			i++;
			continue;
		}
		cf_say(h->bind_words, sizeof h->bind_words, "%s%s", i ? " " : "", ln->w[i]);
	}
}

static void read_file(struct hp *h, const char *path)
{
	struct cf_file f;
	struct cf_words *ln = malloc(sizeof *ln);
	size_t pos = 0;
	long line = 0;
	int rc;

	if (!ln || h->w.files >= CF_FILES_MAX) {
		free(ln);
		return;
	}
	rc = cf_file_read(&f, path);
	if (rc) {
		cf_unread(&h->w, path, rc);
		free(ln);
		return;
	}
	h->w.files++;
	while (cf_next_line(f.text, &pos, &line, 1, ln)) {
		const char *k = ln->w[0];

		if (!strcmp(k, "global") || !strcmp(k, "defaults") || !strcmp(k, "frontend") || !strcmp(k, "listen") ||
		    !strcmp(k, "backend") || !strcmp(k, "userlist") || !strcmp(k, "peers") || !strcmp(k, "resolvers") ||
		    !strcmp(k, "program") || !strcmp(k, "cache") || !strcmp(k, "ring") || !strcmp(k, "mailers") ||
		    !strcmp(k, "http-errors") || !strcmp(k, "crt-store") || !strcmp(k, "traces")) {
			section_end(h);
			h->section = !strcmp(k, "global") ? 'g' : !strcmp(k, "defaults") ? 'd' :
				     !strcmp(k, "frontend") || !strcmp(k, "listen") ? 'p' : 0;
			if (h->section == 'd')
				h->def_backlog.value = h->def_maxconn.value = -1;
			h->px_backlog.value = h->px_maxconn.value = -1;
			/* The old form `listen NAME ADDR:PORT` binds on its header. */
			if (h->section == 'p' && !strcmp(k, "listen") && ln->n >= 3)
				bind_line(h, path, ln, 2);
			continue;
		}
		if (!strcmp(k, "maxconn") && ln->n >= 2) {
			set(h->section == 'g' ? &h->glob_maxconn : h->section == 'd' ? &h->def_maxconn : &h->px_maxconn,
			    path, ln, ln->w[1]);
		} else if (!strcmp(k, "backlog") && ln->n >= 2 && h->section != 'g') {
			set(h->section == 'd' ? &h->def_backlog : &h->px_backlog, path, ln, ln->w[1]);
		} else if (!strcmp(k, "bind") && h->section == 'p') {
			bind_line(h, path, ln, 1);
		}
	}
	cf_file_free(&f);
	free(ln);
}

static int cfg_entry(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && !strcmp(d->d_name + n - 4, ".cfg") && d->d_name[0] != '.';
}

static void read_path(struct hp *h, const char *path)
{
	struct dirent **ents;
	int n, i;

	n = scandir(path, &ents, cfg_entry, alphasort);
	if (n < 0) {
		read_file(h, path);   /* a file (or an error said by read_file) */
		return;
	}
	for (i = 0; i < n; i++) {
		char full[CF_PATH];

		cf_join(path, ents[i]->d_name, full, sizeof full);
		read_file(h, full);
		free(ents[i]);
	}
	free(ents);
}

static void answer_from(struct cf_answer *a, const struct setting *s, const char *what)
{
	a->value = s->value;
	cf_put(a->file, sizeof a->file, "%s", s->file);
	a->line = s->line;
	cf_put(a->directive, sizeof a->directive, "%s", s->raw);
	(void)what;
}

int cf_haproxy(const struct cf_query *q, struct cf_answer *a)
{
	struct hp *h = calloc(1, sizeof *h);
	int i, any = 0;

	a->program = "haproxy";
	if (!h)
		return a->origin = CF_UNREADABLE;
	h->q = q;
	h->def_backlog.value = h->def_maxconn.value = h->glob_maxconn.value = -1;
	h->px_backlog.value = h->px_maxconn.value = h->bind_backlog.value = -1;
	for (i = 1; q->argv && i + 1 < q->argc; i++)
		if (!strcmp(q->argv[i], "-f")) {
			if (q->argv[i + 1][0] != '/')
				cf_unread(&h->w, q->argv[i + 1], -ENOENT);
			else
				read_path(h, q->argv[i + 1]);
			any = 1;
		}
	if (!any)
		read_path(h, HAPROXY_DEFAULT_CONF);
	section_end(h);
	if (!h->done) {
		cf_put(a->note, sizeof a->note, "%s", h->w.unread[0] ? h->w.unread : "");
		cf_say(a->note, sizeof a->note, "%sno bind in %d haproxy file(s) names %s", a->note[0] ? "; " : "",
		       h->w.files, q->local);
		free(h);
		return a->origin = CF_UNREADABLE;
	}
	cf_put(a->fix, sizeof a->fix, "%s backlog %s", h->bind_words, cf_n(q));
	cf_put(a->where, sizeof a->where, "instead of line %ld of %s, then reload haproxy", h->bind.line, h->bind.file);
	if (h->bind_backlog.value >= 0) {
		answer_from(a, &h->bind_backlog, "bind");
		a->origin = CF_SET;
	} else if (h->backlog.value >= 0) {
		answer_from(a, &h->backlog, "backlog");
		a->origin = CF_SET;
	} else {
		const struct setting *m = h->maxconn.value >= 0 ? &h->maxconn : &h->glob_maxconn;

		if (m->value >= 0) {
			answer_from(a, m, "maxconn");
			cf_put(a->note, sizeof a->note, "no backlog is written for this bind: haproxy derives it from "
				 "maxconn (%ld, at %s:%ld)", m->value, m->file, m->line);
		} else {
			a->value = -1;
			cf_put(a->file, sizeof a->file, "%s", h->bind.file);
			cf_put(a->note, sizeof a->note, "no backlog and no maxconn is written: haproxy derives the "
				 "backlog from the global maxconn it computes from its fd limit");
		}
		a->origin = CF_DERIVED;
	}
	if (h->w.unread[0])
		cf_say(a->note, sizeof a->note, "%s(and %s)", a->note[0] ? " " : "", h->w.unread);
	free(h);
	return a->origin;
}
