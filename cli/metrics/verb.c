/*
 * metrics/verb.c: `sockaudit metrics [options] [LOG...|-]`: the logs as
 * Prometheus text, printed once, written to a textfile for node_exporter
 * (atomically: a temporary file in the same directory, then rename), or
 * served on GET /metrics; with --follow, the logs are read as they grow
 * (and new files matching a glob or in a directory are picked up) and
 * the output is rewritten every --interval seconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "metrics/metrics.h"

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
	int status = mx_files_read(st, 0);
	size_t len;
	char *text;

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
	mx_files_read(st, 1);
	free(old);
	return render(st, len);
}

/* --follow (and --listen): rewrite every interval, serve scrapes between,
 * until SIGINT or SIGTERM. */
static void run_follow(struct mx_state *st, const struct mx_opts *o, int lfd)
{
	char *text = NULL;
	size_t len = 0;
	double next;

	mx_files_read(st, 0);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGPIPE, SIG_IGN);
	next = now_s();
	while (!stop) {
		double t = now_s();
		struct pollfd pf = { .fd = lfd, .events = POLLIN };

		if (t >= next) {
			mx_files_discover(o->src, o->nsrc);
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
			mx_files_add(o.src[i].arg, o.src[i].kind == 3);
	mx_files_discover(o.src, o.nsrc);
	mx_init(&st, (int)o.top);
	if (o.follow) {
		run_follow(&st, &o, lfd);
		status = 0;
		mx_files_close();
	} else {
		status = run_once(&st, &o);
	}
	mx_free(&st);
	free(o.src);
	if (lfd >= 0)
		close(lfd);
	return status;
}
