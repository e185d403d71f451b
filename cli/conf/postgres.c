/*
 * conf/postgres.c: postgres has no backlog setting: it asks listen() for
 * twice its MaxBackends (max_connections + autovacuum_max_workers + 1 +
 * max_worker_processes + max_wal_senders: 2 x (100 + 22) = 244 by
 * default), at most 10000 (PG_SOMAXCONN). So the setting to name is max_connections:
 * -N or -c max_connections=N on the command line, else the config file
 * (-c config_file=, --config-file=, else DATADIR/postgresql.conf, -D),
 * its `include`, `include_if_exists` and `include_dir` (relative to the
 * including file's folder), then DATADIR/postgresql.auto.conf (ALTER
 * SYSTEM); the last one read wins. The default is 100.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/conf.h"

#define PG_MAXCONN 100

struct pg {
	struct cf_walk w;
	int found;
	char file[CF_PATH];
	long line, value;
	char raw[CF_TEXT];
};

static void read_file(struct pg *g, const char *path, int must);

static int conf_entry(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && !strcmp(d->d_name + n - 5, ".conf") && d->d_name[0] != '.';
}

static void read_dir(struct pg *g, const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, conf_entry, alphasort), i;

	if (n < 0) {
		cf_unread(&g->w, dir, -errno);
		return;
	}
	for (i = 0; i < n; i++) {
		char full[CF_PATH];

		cf_join(dir, ents[i]->d_name, full, sizeof full);
		read_file(g, full, 1);
		free(ents[i]);
	}
	free(ents);
}

/* "name = value", "name value", "name=value" */
static int setting(const struct cf_words *ln, char *name, size_t nl, char *value, size_t vl)
{
	const char *eq = strchr(ln->w[0], '=');

	if (eq) {
		cf_put(name, nl, "%.*s", (int)(eq - ln->w[0]), ln->w[0]);
		cf_put(value, vl, "%s", eq[1] ? eq + 1 : ln->n > 1 ? ln->w[1] : "");
		return 1;
	}
	cf_put(name, nl, "%s", ln->w[0]);
	if (ln->n >= 3 && !strcmp(ln->w[1], "="))
		cf_put(value, vl, "%s", ln->w[2]);
	else if (ln->n >= 2 && ln->w[1][0] == '=')
		cf_put(value, vl, "%s", ln->w[1] + 1);
	else if (ln->n >= 2)
		cf_put(value, vl, "%s", ln->w[1]);
	else
		return 0;
	return 1;
}

static void read_file(struct pg *g, const char *path, int must)
{
	struct cf_file f;
	struct cf_words *ln = malloc(sizeof *ln);
	char dir[CF_PATH], name[64], value[256], full[CF_PATH];
	size_t pos = 0;
	long line = 0;
	int rc;

	if (!ln || g->w.files >= CF_FILES_MAX || g->w.depth >= CF_DEPTH_MAX) {
		free(ln);
		return;
	}
	rc = cf_file_read(&f, path);
	if (rc) {
		if (must || rc != -ENOENT)
			cf_unread(&g->w, path, rc);
		free(ln);
		return;
	}
	cf_dirname(path, dir, sizeof dir);
	g->w.files++;
	g->w.depth++;
	while (cf_next_line(f.text, &pos, &line, 0, ln)) {
		if (!setting(ln, name, sizeof name, value, sizeof value))
			continue;
		cf_join(dir, value, full, sizeof full);
		if (!strcasecmp(name, "include"))
			read_file(g, full, 1);
		else if (!strcasecmp(name, "include_if_exists"))
			read_file(g, full, 0);
		else if (!strcasecmp(name, "include_dir"))
			read_dir(g, full);
		else if (!strcasecmp(name, "max_connections")) {
			g->found = 1;
			cf_put(g->file, sizeof g->file, "%s", path);
			g->line = ln->line;
			g->value = strtol(value, NULL, 10);
			cf_put(g->raw, sizeof g->raw, "%s", ln->raw);
		}
	}
	g->w.depth--;
	cf_file_free(&f);
	free(ln);
}

/* -N N, -c max_connections=N, --max_connections=N: the last one. */
static const char *argv_maxconn(const struct cf_query *q, char *what, size_t len)
{
	const char *v = NULL;
	int i;

	for (i = 1; q->argv && i < q->argc; i++) {
		const char *x = q->argv[i], *n = i + 1 < q->argc ? q->argv[i + 1] : NULL;

		if (!strcmp(x, "-N") && n)
			cf_put(what, len, "-N %s", v = n);
		else if (!strcmp(x, "-c") && n && !strncmp(n, "max_connections=", 16))
			cf_put(what, len, "-c %s", n), v = n + 16;
		else if (!strncmp(x, "--max_connections=", 18) || !strncmp(x, "--max-connections=", 18))
			cf_put(what, len, "%s", x), v = x + 18;
	}
	return v;
}

static const char *config_file(const struct cf_query *q)
{
	int i;

	for (i = 1; q->argv && i < q->argc; i++) {
		if (!strcmp(q->argv[i], "-c") && i + 1 < q->argc && !strncmp(q->argv[i + 1], "config_file=", 12))
			return q->argv[i + 1] + 12;
		if (!strncmp(q->argv[i], "--config-file=", 14) || !strncmp(q->argv[i], "--config_file=", 14))
			return q->argv[i] + 14;
	}
	return NULL;
}

int cf_postgres(const struct cf_query *q, struct cf_answer *a)
{
	struct pg *g = calloc(1, sizeof *g);
	const char *data = cf_arg(q, "-D", NULL), *cfile = config_file(q), *v;
	char main_file[CF_PATH], autof[CF_PATH], what[CF_TEXT];
	/* Less the other 22 slots of a default configuration. */
	long slots = q->want > 44 ? (q->want + 1) / 2 - 22 : 1;

	a->program = "postgres";
	if (!g)
		return a->origin = CF_UNREADABLE;
	if (q->want > 0)
		cf_put(a->fix, sizeof a->fix, "max_connections = %ld", slots);
	else
		cf_put(a->fix, sizeof a->fix, "max_connections = N");
	cf_put(a->note, sizeof a->note, "postgres has no backlog setting: it asks listen() for twice "
		 "max_connections plus its other slots (autovacuum, background workers, WAL senders: 22 by "
		 "default), at most 10000");
	if ((v = argv_maxconn(q, what, sizeof what))) {
		a->value = strtol(v, NULL, 10);
		cf_put(a->directive, sizeof a->directive, "%s", what);
		cf_put(a->fix, sizeof a->fix, q->want > 0 ? "-c max_connections=%ld" : "-c max_connections=N", slots);
		cf_put(a->where, sizeof a->where, "on postgres's command line instead of %s, then restart it", what);
		free(g);
		return a->origin = CF_DERIVED;
	}
	if ((!cfile && (!data || data[0] != '/')) || (cfile && cfile[0] != '/')) {
		cf_say(a->note, sizeof a->note, "; its config file is not named by an absolute path on its command line "
		       "(-D, PGDATA or a relative path): the report cannot read max_connections");
		free(g);
		return a->origin = CF_UNREADABLE;
	}
	if (cfile)
		cf_put(main_file, sizeof main_file, "%s", cfile);
	else
		cf_join(data, "postgresql.conf", main_file, sizeof main_file);
	read_file(g, main_file, 1);
	if (data && data[0] == '/') {
		cf_join(data, "postgresql.auto.conf", autof, sizeof autof);
		read_file(g, autof, 0);
	}
	if (!g->found && g->w.unread[0]) {
		cf_put(a->file, sizeof a->file, "%s", main_file);
		cf_say(a->note, sizeof a->note, "; %s", g->w.unread);
		free(g);
		return a->origin = CF_UNREADABLE;
	}
	if (g->found) {
		cf_put(a->file, sizeof a->file, "%s", g->file);
		a->line = g->line;
		a->value = g->value;
		cf_put(a->directive, sizeof a->directive, "%s", g->raw);
		cf_put(a->where, sizeof a->where, "instead of line %ld of %s, then restart postgres", g->line, g->file);
	} else {
		cf_put(a->file, sizeof a->file, "%s", main_file);
		a->value = PG_MAXCONN;
		cf_say(a->note, sizeof a->note, "; max_connections is not written: its default is %d", PG_MAXCONN);
		cf_put(a->where, sizeof a->where, "as a line of %s, then restart postgres", main_file);
	}
	if (g->w.unread[0])
		cf_say(a->note, sizeof a->note, " (%s)", g->w.unread);
	free(g);
	return a->origin = CF_DERIVED;
}
