/*
 * conf/apache.c: apache2's ListenBacklog. apache2 reads -f FILE (relative:
 * to the ServerRoot, -d), else Debian's /etc/apache2/apache2.conf;
 * `Include` and `IncludeOptional` take a glob or a folder, relative to the
 * ServerRoot. ListenBacklog is one value for every Listen (the last one
 * read wins); without it apache asks for 511 (DEFAULT_LISTENBACKLOG).
 * Directive names are case-insensitive; sections (<IfModule> ...) are read
 * through, not evaluated.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "conf/conf.h"

#define APACHE_DEFAULT_ROOT "/etc/apache2"
#define APACHE_DEFAULT_CONF "apache2.conf"
#define APACHE_BACKLOG 511

struct ap {
	struct cf_walk w;
	const struct cf_query *q;
	char root[CF_PATH];
	int found, listen_found;
	char file[CF_PATH], listen_file[CF_PATH];
	long line, value, listen_line;
	char raw[CF_TEXT], listen_raw[CF_TEXT];
};

static void read_file(struct ap *p, const char *path);

static int one_path(void *ctx, const char *path)
{
	struct ap *p = ctx;
	struct dirent **ents;
	struct stat sb;
	int n, i;

	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		n = scandir(path, &ents, NULL, alphasort);
		for (i = 0; i < n; i++) {
			char full[CF_PATH];

			if (ents[i]->d_name[0] != '.') {
				cf_join(path, ents[i]->d_name, full, sizeof full);
				read_file(p, full);
			}
			free(ents[i]);
		}
		if (n >= 0)
			free(ents);
		return 0;
	}
	read_file(p, path);
	return 0;
}

static int listen_matches(const char *w, const char *local)
{
	const char *c = strrchr(w, ':');
	char host[CF_PATH];

	if (!c || (w[0] == '[' && c < strchr(w, ']')))
		return cf_addr_match("", w, local);
	cf_put(host, sizeof host, "%.*s", (int)(c - w), w);
	return cf_addr_match(host, c + 1, local);
}

static void read_file(struct ap *p, const char *path)
{
	struct cf_file f;
	struct cf_words *ln = malloc(sizeof *ln);
	size_t pos = 0;
	long line = 0;
	int rc;

	if (!ln || p->w.files >= CF_FILES_MAX || p->w.depth >= CF_DEPTH_MAX) {
		free(ln);
		return;
	}
	rc = cf_file_read(&f, path);
	if (rc) {
		cf_unread(&p->w, path, rc);
		free(ln);
		return;
	}
	p->w.files++;
	p->w.depth++;
	while (cf_next_line(f.text, &pos, &line, 1, ln)) {
		const char *k = ln->w[0];
		int optional = !strcasecmp(k, "IncludeOptional");

		if ((optional || !strcasecmp(k, "Include")) && ln->n >= 2) {
			if (strstr(ln->w[1], "${")) {
				char why[CF_TEXT];

				cf_put(why, sizeof why, "cannot expand %s (line %ld of %s): its environment is not in the "
				       "log", ln->w[1], ln->line, path);
				cf_doubt(&p->w, why);
				continue;
			}
			rc = cf_glob(p->root, ln->w[1], one_path, p);
			if (rc < 0 && !optional) {
				char full[CF_PATH];

				cf_join(p->root, ln->w[1], full, sizeof full);
				cf_unread(&p->w, full, rc);
			}
		} else if (!strcasecmp(k, "ServerRoot") && ln->n >= 2) {
			cf_put(p->root, sizeof p->root, "%s", ln->w[1]);
		} else if (!strcasecmp(k, "ListenBacklog") && ln->n >= 2) {
			p->found = 1;
			cf_put(p->file, sizeof p->file, "%s", path);
			p->line = ln->line;
			p->value = strtol(ln->w[1], NULL, 10);
			cf_put(p->raw, sizeof p->raw, "%s", ln->raw);
		} else if (!strcasecmp(k, "Listen") && ln->n >= 2 && !p->listen_found &&
			   listen_matches(ln->w[1], p->q->local)) {
			p->listen_found = 1;
			cf_put(p->listen_file, sizeof p->listen_file, "%s", path);
			p->listen_line = ln->line;
			cf_put(p->listen_raw, sizeof p->listen_raw, "%s", ln->raw);
		}
	}
	p->w.depth--;
	cf_file_free(&f);
	free(ln);
}

int cf_apache(const struct cf_query *q, struct cf_answer *a)
{
	struct ap *p = calloc(1, sizeof *p);
	const char *f = cf_arg(q, "-f", NULL), *d = cf_arg(q, "-d", NULL);
	char main_file[CF_PATH];

	a->program = "apache2";
	if (!p)
		return a->origin = CF_UNREADABLE;
	p->q = q;
	cf_put(p->root, sizeof p->root, "%s", d ? d : APACHE_DEFAULT_ROOT);
	cf_join(p->root, f ? f : APACHE_DEFAULT_CONF, main_file, sizeof main_file);
	read_file(p, main_file);
	cf_put(a->fix, sizeof a->fix, "ListenBacklog %s", cf_n(q));
	if (!p->w.files || (!p->found && p->w.unread[0])) {
		cf_put(a->file, sizeof a->file, "%s", main_file);
		cf_put(a->note, sizeof a->note, "%s", p->w.unread);
		free(p);
		return a->origin = CF_UNREADABLE;
	}
	if (p->found) {
		cf_put(a->file, sizeof a->file, "%s", p->file);
		a->line = p->line;
		a->value = p->value;
		cf_put(a->directive, sizeof a->directive, "%s", p->raw);
		cf_put(a->where, sizeof a->where, "instead of line %ld of %s, then apache2 -k graceful", p->line, p->file);
		a->origin = CF_SET;
	} else {
		a->value = APACHE_BACKLOG;
		if (p->listen_found) {
			cf_put(a->file, sizeof a->file, "%s", p->listen_file);
			a->line = p->listen_line;
			cf_put(a->directive, sizeof a->directive, "%s", p->listen_raw);
			cf_put(a->where, sizeof a->where, "beside `%s` (line %ld of %s), then apache2 -k graceful",
				 p->listen_raw, p->listen_line, p->listen_file);
		} else {
			cf_put(a->file, sizeof a->file, "%s", main_file);
			cf_put(a->where, sizeof a->where, "in %s, then apache2 -k graceful", main_file);
		}
		cf_put(a->note, sizeof a->note, "no ListenBacklog is written: apache asks for %d, its default",
			 APACHE_BACKLOG);
		a->origin = CF_DEFAULT;
	}
	if (p->w.unread[0])
		cf_say(a->note, sizeof a->note, " (%s)", p->w.unread);
	free(p);
	return a->origin;
}
