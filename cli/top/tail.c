/*
 * top/tail.c: follows the logs `sockaudit top` watches: plain files, %p
 * patterns (the library's per-process names: %p matches any pid) and
 * directories (every regular file in them), looked for again at each
 * poll so new processes' files join.
 *
 * A file is opened, read from where the last read stopped and closed
 * again within one poll: top never holds a log open, so rotation
 * (rename, then a new file at the path) frees the old file at once. Files
 * are known by device and inode, not by name: the file at a path that now
 * has another inode is read from its start, a renamed file that still
 * matches (a directory's app.jsonl.1) is not read twice, and one that
 * shrank (truncated) is read again from the start.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "top/top.h"

/* A line longer than this is skipped (no library line comes close). */
#define TP_LINE_MAX (1u << 20)

void tp_tail_init(struct tp_tail *t, char **specs, int n)
{
	memset(t, 0, sizeof *t);
	t->specs = specs;
	t->nspecs = n;
}

void tp_tail_free(struct tp_tail *t)
{
	size_t i;

	for (i = 0; i < t->nfiles; i++) {
		free(t->files[i].path);
		free(t->files[i].part);
	}
	free(t->files);
	memset(t, 0, sizeof *t);
}

static struct tp_file *by_inode(struct tp_tail *t, dev_t dev, ino_t ino)
{
	size_t i;

	for (i = 0; i < t->nfiles; i++)
		if (t->files[i].ino == ino && t->files[i].dev == dev)
			return &t->files[i];
	return NULL;
}

static struct tp_file *by_path(struct tp_tail *t, const char *path)
{
	size_t i;

	for (i = 0; i < t->nfiles; i++)
		if (!strcmp(t->files[i].path, path))
			return &t->files[i];
	return NULL;
}

static void hand_lines(struct tp_file *f, const char *buf, size_t n, tp_line_fn fn, void *ctx)
{
	size_t start = 0, i;

	for (i = 0; i < n; i++) {
		if (buf[i] != '\n')
			continue;
		if (f->npart) {
			if (f->npart + (i - start) <= TP_LINE_MAX) {
				f->part = realloc(f->part, f->npart + (i - start) + 1);
				if (!f->part)
					abort();
				memcpy(f->part + f->npart, buf + start, i - start);
				fn(ctx, f->part, f->npart + (i - start));
			}
			f->npart = 0;
		} else if (i > start) {
			fn(ctx, buf + start, i - start);
		}
		start = i + 1;
	}
	if (start < n && f->npart + (n - start) <= TP_LINE_MAX) {
		f->part = realloc(f->part, f->npart + (n - start) + 1);
		if (!f->part)
			abort();
		memcpy(f->part + f->npart, buf + start, n - start);
		f->npart += n - start;
	}
}

/* Reads what path gained since the last look; the file is closed again. */
static void read_path(struct tp_tail *t, const char *path, tp_line_fn fn, void *ctx)
{
	struct stat st;
	struct tp_file *f, *other;
	char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	f = by_inode(t, st.st_dev, st.st_ino);
	other = by_path(t, path);
	/* The entry that had this name holds another file now (the old one
	 * was renamed or removed): it keeps its inode and offset, nameless,
	 * so the old file found under its new name goes on where it was. */
	if (other && other != f)
		other->path[0] = '\0';
	if (f && strcmp(f->path, path) != 0) {
		free(f->path);
		f->path = strdup(path);
	}
	if (!f) {
		t->files = log_grow(t->files, &t->capfiles, t->nfiles + 1, sizeof *t->files);
		f = &t->files[t->nfiles++];
		memset(f, 0, sizeof *f);
		f->path = strdup(path);
		f->dev = st.st_dev;
		f->ino = st.st_ino;
	}
	if (!f->path)
		abort();
	if (st.st_size < f->off) {   /* truncated */
		f->off = 0;
		f->npart = 0;
	}
	while (f->off < st.st_size && (n = pread(fd, buf, sizeof buf, f->off)) > 0) {
		f->off += n;
		t->bytes += n;
		hand_lines(f, buf, (size_t)n, fn, ctx);
	}
	close(fd);
}

/* "/tmp/a-%p.jsonl" -> "/tmp/a-*.jsonl" ("%%" is a literal %). */
static char *pattern(const char *spec)
{
	size_t n = strlen(spec), i, o = 0;
	char *p = malloc(2 * n + 1);

	if (!p)
		abort();
	for (i = 0; i < n; i++) {
		if (spec[i] == '%' && spec[i + 1] == 'p') {
			p[o++] = '*';
			i++;
		} else if (spec[i] == '%' && spec[i + 1] == '%') {
			p[o++] = '%';
			i++;
		} else if (strchr("*?[\\", spec[i])) {
			p[o++] = '\\';
			p[o++] = spec[i];
		} else {
			p[o++] = spec[i];
		}
	}
	p[o] = '\0';
	return p;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir (sorted by name) whose name matches the
 * fnmatch() pattern pat, or every one when pat is NULL. */
static void read_dir(struct tp_tail *t, const char *dir, const char *pat, tp_line_fn fn, void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || (pat && fnmatch(pat, e->d_name, 0) != 0))
			continue;
		names = log_grow(names, &cap, n + 1, sizeof *names);
		if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0)
			abort();
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	for (i = 0; i < n; i++) {
		read_path(t, names[i], fn, ctx);
		free(names[i]);
	}
	free(names);
}

/* A %p pattern: its directory (no %p there) read for the names that
 * match the last component, %p standing for any pid. No glob(): its
 * default version is newer than the launcher's glibc floor. */
static void read_pattern(struct tp_tail *t, const char *spec, tp_line_fn fn, void *ctx)
{
	const char *slash = strrchr(spec, '/');
	char *dir, *pat;

	if (slash)
		dir = strndup(spec, slash == spec ? 1 : (size_t)(slash - spec));
	else
		dir = strdup(".");
	pat = pattern(slash ? slash + 1 : spec);
	if (!dir)
		abort();
	read_dir(t, dir, pat, fn, ctx);
	free(dir);
	free(pat);
}

void tp_tail_poll(struct tp_tail *t, tp_line_fn fn, void *ctx)
{
	struct stat st;
	int i;

	for (i = 0; i < t->nspecs; i++) {
		const char *s = t->specs[i];

		if (strstr(s, "%p")) {
			read_pattern(t, s, fn, ctx);
		} else if (stat(s, &st) == 0 && S_ISDIR(st.st_mode)) {
			read_dir(t, s, NULL, fn, ctx);
		} else {
			read_path(t, s, fn, ctx);
		}
	}
}
