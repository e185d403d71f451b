/*
 * metrics/verb.c: `sockaudit metrics [options] [LOG...|-]`: the logs as
 * Prometheus text, printed once, written to a textfile for node_exporter
 * (atomically: a temporary file in the same directory, then rename), or
 * served on GET /metrics; with --follow, the logs are read as they grow
 * (and new files matching a glob or in a directory are picked up) and
 * the output is rewritten every --interval seconds.
 *
 * Reading is by offset: each file is read from where the last pass
 * stopped, a partial last line kept for the next pass. A file replaced
 * at its name (rotated by rename) is read to its end, then the new one
 * from its start; a file cut shorter is read again from its start.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

struct mx_src {                   /* what the user named: a file, a glob or a directory */
	const char *arg;
	int kind;                 /* 0 file, 1 glob, 2 directory, 3 stdin */
};

static struct mx_file *files;
static size_t nfiles, capfiles;
static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *out)
{
	fputs(
"usage: sockaudit metrics [--textfile FILE.prom] [--follow] [--interval S]\n"
"                         [--listen HOST:PORT] [--top-peers N] [LOG...|-]\n"
"\n"
"Prints the Prometheus text exposition (format 0.0.4) of what the logs hold:\n"
"connects by outcome, connect times as a histogram, SYN resends, accepts,\n"
"full accept queues and empty accepts per listener, listen backlogs,\n"
"findings per code, dropped lines; labelled by program (comm). Counters sum\n"
"the processes' own totals (totals lines, summaries), so they only go up as\n"
"programs restart. LOG may be a file, a directory (every file in it), a\n"
"quoted glob ('/var/log/sockaudit/nginx.*.jsonl'), or '-' for standard input\n"
"(the default when none is given).\n"
"\n"
"  --textfile FILE   write the text to FILE (node_exporter's textfile\n"
"                    collector reads *.prom) through a temporary file in the\n"
"                    same directory and a rename, never half-written.\n"
"  --follow          keep reading the logs as they grow, and new files that\n"
"                    match a glob or appear in a directory; rewrite the\n"
"                    output every interval. Ends on SIGINT or SIGTERM.\n"
"  --interval S      seconds between rewrites with --follow (default 15).\n"
"  --listen HOST:PORT  serve GET /metrics on HOST:PORT (implies --follow),\n"
"                    for a Prometheus without node_exporter.\n"
"  --top-peers N     label connect lines with the N peers that have the most\n"
"                    and the rest as peer=\"other\" (default 10; 0: all other).\n"
"  -h, --help        this text.\n",
	      out);
}

/* ---- the set of files -------------------------------------------------------- */

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

/* ---- output ------------------------------------------------------------------ */

static char *render(const struct mx_state *st, size_t *len)
{
	char *text = NULL;
	FILE *m = open_memstream(&text, len);

	if (!m) {
		fputs("sockaudit metrics: out of memory\n", stderr);
		exit(1);
	}
	mx_print(st, m);
	if (fclose(m) != 0) {
		fputs("sockaudit metrics: out of memory\n", stderr);
		exit(1);
	}
	return text;
}

/* FILE's directory, a temporary name there (a dot file, not *.prom, so a
 * collector never reads it half-written), then rename over FILE. */
static int write_textfile(const char *path, const char *text, size_t len)
{
	char tmp[4200];
	const char *slash = strrchr(path, '/');
	int fd, n;

	if (slash)
		n = snprintf(tmp, sizeof tmp, "%.*s/.%s.%ld.tmp", (int)(slash - path), path, slash + 1, (long)getpid());
	else
		n = snprintf(tmp, sizeof tmp, ".%s.%ld.tmp", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof tmp) {
		fprintf(stderr, "sockaudit metrics: %s: name too long\n", path);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "sockaudit metrics: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	while (len) {
		ssize_t w = write(fd, text, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "sockaudit metrics: %s: %s\n", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			return -1;
		}
		text += w;
		len -= (size_t)w;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "sockaudit metrics: %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_num(const char *opt, const char *v, double lo, double hi, double *out)
{
	char *end;
	double d = strtod(v, &end);

	if (!*v || *end || !(d >= lo && d <= hi)) {
		fprintf(stderr, "sockaudit metrics: %s %s: a number from %g to %g expected\n", opt, v, lo, hi);
		return -1;
	}
	*out = d;
	return 0;
}

/* What the command line asked for, parsed before anything is read. */
struct mx_opts {
	const char *textfile, *listen_at;
	double interval, top;
	int follow;
	struct mx_src *src;       /* what the user named, in order */
	size_t nsrc;
};

enum { MX_OPT_TEXTFILE = 't', MX_OPT_INTERVAL = 'i', MX_OPT_LISTEN = 'l', MX_OPT_TOP = 'p',
       MX_OPT_FOLLOW = 'f' };

static const struct option mx_longopts[] = {
	{ "textfile", required_argument, NULL, MX_OPT_TEXTFILE },
	{ "interval", required_argument, NULL, MX_OPT_INTERVAL },
	{ "listen", required_argument, NULL, MX_OPT_LISTEN },
	{ "top-peers", required_argument, NULL, MX_OPT_TOP },
	{ "follow", no_argument, NULL, MX_OPT_FOLLOW },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The long name of an option's code, for its messages. */
static const char *opt_name(int code)
{
	const struct option *o;

	for (o = mx_longopts; o->name; o++)
		if (o->val == code)
			return o->name;
	return NULL;
}

static void add_src(struct mx_opts *o, const char *arg)
{
	struct stat sb;

	o->src[o->nsrc].arg = arg;
	o->src[o->nsrc].kind = strcmp(arg, "-") == 0 ? 3 : strpbrk(arg, "*?[") ? 1
			       : stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode) ? 2 : 0;
	o->nsrc++;
}

/* One option's value into o; 0, or 2 after its message. */
static int take_value(struct mx_opts *o, int code, const char *v)
{
	switch (code) {
	case MX_OPT_INTERVAL:
		return parse_num("--interval", v, 0.05, 86400, &o->interval) ? 2 : 0;
	case MX_OPT_TOP:
		return parse_num("--top-peers", v, 0, 10000, &o->top) ? 2 : 0;
	case MX_OPT_TEXTFILE:
		o->textfile = v;
		return 0;
	case MX_OPT_LISTEN:
		o->listen_at = v;
		return 0;
	default:
		o->follow = 1;
		return 0;
	}
}

/* The options, in the order given (each checked as typed, so "--js" or
 * "-hx" is an unknown option), and the logs among them; after "--" every
 * argument is a log. Returns -1 to run, else the exit status. */
static int parse_args(struct mx_opts *o, int argc, char **argv)
{
	int c;

	optind = 1;
	opterr = 0;
	for (;;) {
		const char *elem = optind < argc ? argv[optind] : "";
		const char *name;

		c = getopt_long(argc, argv, "-:h", mx_longopts, NULL);
		if (c == -1)
			break;
		if (c == 1) {
			add_src(o, optarg);
			continue;
		}
		name = c == ':' ? opt_name(optopt) : c == '?' ? NULL : opt_name(c);
		if (!log_arg_whole(elem, c == 'h' ? 'h' : 0, name,
				   c == MX_OPT_FOLLOW ? LOG_ARG_SPLIT_ONLY : LOG_ARG_EITHER)) {
			fprintf(stderr, "sockaudit metrics: unknown option '%s'\n", elem);
			usage(stderr);
			return 2;
		}
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (c == ':') {
			fprintf(stderr, "sockaudit metrics: --%s needs a value\n", name);
			return 2;
		}
		if (take_value(o, c, optarg) != 0)
			return 2;
	}
	while (optind < argc)
		add_src(o, argv[optind++]);
	if (!o->nsrc)
		add_src(o, "-");
	return -1;
}

/* Not following: read every file once, print or write the text once. */
static int run_once(struct mx_state *st, const struct mx_opts *o)
{
	int status = 0;
	size_t i, len;
	char *text;

	for (i = 0; i < nfiles; i++)
		if (read_file(st, &files[i], 0) != 0)
			status = 1;
	text = render(st, &len);
	if (o->textfile ? write_textfile(o->textfile, text, len) != 0
			: fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
		status = 1;
	free(text);
	return status;
}

/* Everything new in every file, then the text for it. */
static char *read_all_and_render(struct mx_state *st, char *old, size_t *len)
{
	size_t i;

	for (i = 0; i < nfiles; i++)
		read_file(st, &files[i], 1);
	free(old);
	return render(st, len);
}

/* --follow (and --listen): rewrite every interval, serve scrapes between,
 * until SIGINT or SIGTERM. */
static void run_follow(struct mx_state *st, const struct mx_opts *o, int lfd)
{
	char *text = NULL;
	size_t len = 0, i;
	double next;

	for (i = 0; i < nfiles; i++)
		read_file(st, &files[i], 0);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGPIPE, SIG_IGN);
	next = now_s();
	while (!stop) {
		double t = now_s();
		struct pollfd pf = { .fd = lfd, .events = POLLIN };

		if (t >= next) {
			discover(o->src, o->nsrc);
			text = read_all_and_render(st, text, &len);
			if (o->textfile)
				write_textfile(o->textfile, text, len);
			else if (lfd < 0) {
				fwrite(text, 1, len, stdout);
				fputs("\n", stdout);      /* a blank line between rewrites */
				fflush(stdout);
			}
			next += o->interval;
			if (next < t)
				next = t + o->interval;
			continue;
		}
		if (poll(&pf, lfd >= 0 ? 1 : 0, (int)((next - t) * 1000) + 1) > 0 && (pf.revents & POLLIN)) {
			/* A scrape gets what the logs hold now. */
			text = read_all_and_render(st, text, &len);
			mx_http_serve(lfd, text, len);
		}
	}
	free(text);
}

static void close_files(void)
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

int cli_metrics(int argc, char **argv)
{
	struct mx_opts o = { .interval = 15, .top = MX_TOP_PEERS };
	struct mx_state st;
	int status, lfd = -1;
	size_t i;

	o.src = calloc((size_t)argc + 1, sizeof *o.src);
	if (!o.src)
		return 1;
	status = parse_args(&o, argc, argv);
	if (status >= 0) {
		free(o.src);
		return status;
	}
	if (o.listen_at) {
		o.follow = 1;
		lfd = mx_http_listen(o.listen_at);
		if (lfd < 0) {
			free(o.src);
			return 1;
		}
	}
	for (i = 0; i < o.nsrc; i++)
		if (o.src[i].kind == 0 || o.src[i].kind == 3)
			add_file(o.src[i].arg, o.src[i].kind == 3);
	discover(o.src, o.nsrc);
	mx_init(&st, (int)o.top);
	if (o.follow) {
		run_follow(&st, &o, lfd);
		status = 0;
		close_files();
	} else {
		status = run_once(&st, &o);
	}
	mx_free(&st);
	free(o.src);
	if (lfd >= 0)
		close(lfd);
	return status;
}
