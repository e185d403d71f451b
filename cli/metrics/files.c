/*
 * metrics/files.c: the logs a metrics run reads: the files named, a glob's
 * matches and a directory's files, looked for again at each pass (new ones
 * join the set).
 *
 * Reading is by offset: each file is read from where the last pass
 * stopped, a partial last line kept for the next pass. A file replaced
 * at its name (rotated by rename) is read to its end, then the new one
 * from its start; a file cut shorter is read again from its start.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics/metrics.h"

struct mx_file {
	char *path;
	int fd;
	dev_t dev;
	ino_t ino;
	off_t off;
	char *part;               /* a line not yet ended by its newline */
	size_t npart, cappart;
	int overlong;             /* the partial line passed MX_LINE_MAX: skipped to its end */
	int is_stdin;
	int opened;               /* dev, ino and off describe a file read before */
	int idle;                 /* passes in a row that found nothing new */
};

/* A file that gave nothing for this many passes is closed (offset kept)
 * and looked at with stat() alone until its name shows more: a follower
 * of a fork-per-connection server's %p files holds an fd per active
 * file, not one per file ever seen. */
#define MX_IDLE_CLOSE 4

static struct mx_file *files;
static size_t nfiles, capfiles;

static void add_file(const char *path, int is_stdin)
{
	size_t i;

	for (i = 0; i < nfiles; i++)
		if (!is_stdin && !files[i].is_stdin && strcmp(files[i].path, path) == 0)
			return;
	files = log_grow(files, &capfiles, nfiles + 1, sizeof *files);
	memset(&files[nfiles], 0, sizeof files[nfiles]);
	files[nfiles].path = log_strdup(path);
	files[nfiles].fd = is_stdin ? STDIN_FILENO : -1;
	files[nfiles].is_stdin = is_stdin;
	nfiles++;
}

/* New files: the glob's matches, the directory's regular files (not
 * dot files: a textfile's temporary, an editor's). */
static void discover(const struct mx_src *src, size_t nsrc)
{
	size_t i, j;

	for (i = 0; i < nsrc; i++) {
		if (src[i].kind == 1) {
			glob_t g;

			if (glob(src[i].arg, 0, NULL, &g) == 0)
				for (j = 0; j < g.gl_pathc; j++)
					add_file(g.gl_pathv[j], 0);
			globfree(&g);
		} else if (src[i].kind == 2) {
			DIR *d = opendir(src[i].arg);
			struct dirent *e;
			char p[4096];
			struct stat sb;

			while (d && (e = readdir(d)) != NULL) {
				if (e->d_name[0] == '.')
					continue;
				snprintf(p, sizeof p, "%s/%s", src[i].arg, e->d_name);
				if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
					add_file(p, 0);
			}
			if (d)
				closedir(d);
		}
	}
}

static void feed_block(struct mx_state *st, struct mx_file *f, const char *p, size_t n)
{
	const char *end = p + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t take = (size_t)((nl ? nl : end) - p);

		if (!f->overlong && !f->npart && nl) {
			mx_feed(st, p, take);     /* the whole line in the block: no copy */
			p = nl + 1;
			continue;
		}
		if (!f->overlong && f->npart + take > MX_LINE_MAX) {
			f->overlong = 1;
			f->npart = 0;
		}
		if (!f->overlong) {
			while (f->npart + take >= f->cappart)   /* log_grow doubles once a call */
				f->part = log_grow(f->part, &f->cappart, f->cappart, 1);
			memcpy(f->part + f->npart, p, take);
			f->npart += take;
		}
		if (!nl)
			break;
		if (f->overlong) {
			st->lines++;
			st->unreadable++;
		} else {
			mx_feed(st, f->part, f->npart);
		}
		f->npart = 0;
		f->overlong = 0;
		p = nl + 1;
	}
}

/* Everything new in f. Returns 0, or -1 when the file could not be read. */
static int read_file(struct mx_state *st, struct mx_file *f, int quiet)
{
	static char buf[1 << 16];
	struct stat sb;
	ssize_t r;

	if (f->fd < 0) {
		/* Closed while idle: nothing to do while the name is the same
		 * file, no longer than what was read. */
		if (f->opened && stat(f->path, &sb) == 0 && sb.st_dev == f->dev && sb.st_ino == f->ino &&
		    sb.st_size == f->off)
			return 0;
		f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
		if (f->fd < 0) {
			if (!quiet)
				fprintf(stderr, "sockaudit metrics: %s: %s\n", f->path, strerror(errno));
			return -1;
		}
		if (fstat(f->fd, &sb) == 0 && (!f->opened || sb.st_dev != f->dev || sb.st_ino != f->ino)) {
			f->dev = sb.st_dev;      /* a new file at the name: from its start */
			f->ino = sb.st_ino;
			f->off = 0;
			f->npart = 0;
		}
		f->opened = 1;
		f->idle = 0;
	}
	if (!f->is_stdin && fstat(f->fd, &sb) == 0 && sb.st_size < f->off) {
		f->off = 0;              /* cut shorter (copytruncate): from the start */
		f->npart = 0;
	}
	for (;;) {
		struct pollfd pf = { .fd = f->fd, .events = POLLIN };

		/* A pipe on stdin is read only as far as it has data: a follower
		 * never waits there past its interval (its mode is not ours to
		 * make non-blocking). A file or EOF polls readable. */
		if (f->is_stdin && poll(&pf, 1, 0) <= 0)
			break;
		r = f->is_stdin ? read(f->fd, buf, sizeof buf) : pread(f->fd, buf, sizeof buf, f->off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		f->idle = -1;
		f->off += r;
		feed_block(st, f, buf, (size_t)r);
	}
	/* Renamed away and a new file at the name: the old one is read to
	 * its end (above), then the new one from its start. */
	if (!f->is_stdin && stat(f->path, &sb) == 0 && (sb.st_dev != f->dev || sb.st_ino != f->ino)) {
		if (f->npart && !f->overlong)
			mx_feed(st, f->part, f->npart);
		f->npart = 0;
		close(f->fd);
		f->fd = -1;
		f->opened = 0;
		return read_file(st, f, quiet);
	}
	if (!f->is_stdin && ++f->idle >= MX_IDLE_CLOSE) {
		close(f->fd);
		f->fd = -1;
	}
	return 0;
}

void mx_files_add(const char *path, int is_stdin)
{
	add_file(path, is_stdin);
}

void mx_files_discover(const struct mx_src *src, size_t nsrc)
{
	discover(src, nsrc);
}

int mx_files_read(struct mx_state *st, int quiet)
{
	size_t i;
	int status = 0;

	for (i = 0; i < nfiles; i++)
		if (read_file(st, &files[i], quiet) != 0)
			status = 1;
	return status;
}

void mx_files_close(void)
{
	size_t i;

	for (i = 0; i < nfiles; i++) {
		if (files[i].fd > STDIN_FILENO)
			close(files[i].fd);
		free(files[i].path);
		free(files[i].part);
	}
	free(files);
}
