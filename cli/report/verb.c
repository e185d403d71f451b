/*
 * report/verb.c: `sockaudit report [FILE...]`: options, files, lines.
 *
 * Reads each file (or standard input) as lines of any length and hands
 * them to feed.c; a file that cannot be read is named on stderr and makes
 * the exit status 1, but the report still covers every file that could.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"

/* Longer lines are skipped: the shim writes at most 4096 bytes a line. */
#define RP_LINE_MAX (1 << 20)

/* ---- input ----------------------------------------------------------------------- */

/* Reads lines of any length, keeping at most RP_LINE_MAX bytes of each:
 * a longer line is counted and skipped instead of swallowing memory.
 * Reads in blocks and finds newlines with memchr, and a line that lies
 * whole in the block is fed from there without a copy: the read stays a
 * small part of the report's time on a large log. */
void rp_read_stream(struct rp_state *st, FILE *f)
{
	size_t blk = 1 << 16, len = 0, n;
	char *buf = malloc(RP_LINE_MAX), *in = malloc(blk);
	int overlong = 0;

	if (!buf || !in) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	while ((n = fread(in, 1, blk, f)) > 0) {
		char *p = in, *end = in + n;

		while (p < end) {
			char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t take = (size_t)((nl ? nl : end) - p);

			if (!overlong) {
				if (take > RP_LINE_MAX - len) {
					overlong = 1;
				} else if (nl && !len) {
					/* The whole line is in the block: no copy. */
					rp_feed_line(st, p, take);
					p = nl + 1;
					continue;
				} else {
					memcpy(buf + len, p, take);
					len += take;
				}
			}
			if (!nl)
				break;
			if (overlong) {
				st->cur_line++;
				st->lines++;
				st->skipped++;
				st->too_long++;
			} else {
				rp_feed_line(st, buf, len);
			}
			len = 0;
			overlong = 0;
			p = nl + 1;
		}
	}
	/* A last line without its newline (a log cut off mid-write). */
	if (overlong) {
		st->cur_line++;
		st->lines++;
		st->skipped++;
		st->too_long++;
	} else if (len) {
		rp_feed_line(st, buf, len);
	}
	free(in);
	free(buf);
}

static void report_usage(FILE *out)
{
	fputs("usage: sockaudit report [--color=auto|always|never] [--html OUT.html] [--json] [FILE...]\n"
	      "Reads libsockaudit JSON lines (standard input when no FILE, or '-')\n"
	      "and prints a report for people. Lines that are not JSON are counted and skipped;\n"
	      "journald's JSON export (journalctl -o json -t sockaudit) is read as the lines it holds.\n"
	      "Slow connects are joined to the listener that made them wait when both sides'\n"
	      "logs are given (same network namespace and host, or the exact address).\n"
	      "--html OUT.html writes the same report as one self-contained page instead\n"
	      "(OUT '-' is standard output).\n"
	      "--json prints the report's model (causes, evidence, listeners, connects,\n"
	      "option read-back, findings) as one JSON document instead of the text.\n",
	      out);
}

/* What the command line asked for, parsed before anything is read. */
struct rp_opts {
	int colour;             /* -1 auto, 0 never, 1 always */
	int json;
	const char *html;       /* --html OUT, NULL for the text */
	const char **files;     /* the logs named, in order; none: stdin */
	int nfiles;
};

enum { RP_OPT_HTML = 'H', RP_OPT_JSON = 'j', RP_OPT_COLOR = 'c', RP_OPT_COLOUR = 'C',
       RP_OPT_NO_COLOR = 'n' };

static const struct option rp_longopts[] = {
	{ "html", required_argument, NULL, RP_OPT_HTML },
	{ "json", no_argument, NULL, RP_OPT_JSON },
	{ "color", required_argument, NULL, RP_OPT_COLOR },
	{ "colour", required_argument, NULL, RP_OPT_COLOUR },
	{ "no-color", no_argument, NULL, RP_OPT_NO_COLOR },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Whether ELEM spells option C whole: --color and --colour take their
 * word only after '=', --html either way. */
static int typed_whole(const char *elem, int c)
{
	const struct option *o;

	for (o = rp_longopts; o->name; o++)
		if (o->val == c)
			return log_arg_whole(elem, c == 'h' ? 'h' : 0, o->name,
					     c == RP_OPT_COLOR || c == RP_OPT_COLOUR ? LOG_ARG_EQ_ONLY
					     : c == RP_OPT_HTML ? LOG_ARG_EITHER : LOG_ARG_SPLIT_ONLY);
	return 0;
}

static int colour_word(const char *w)
{
	return strcmp(w, "always") == 0 ? 1 : strcmp(w, "never") == 0 ? 0 : strcmp(w, "auto") == 0 ? -1 : -2;
}

/* The options, in the order given, and the logs among them (after "--",
 * every argument is a log). Options come first, so a missing file is
 * reported before any output. Returns -1 to run, else the exit status. */
static int parse_args(struct rp_opts *o, int argc, char **argv)
{
	int c;

	optind = 1;
	opterr = 0;
	for (;;) {
		const char *elem = optind < argc ? argv[optind] : "";
		int word = -2;

		c = getopt_long(argc, argv, "-:h", rp_longopts, NULL);
		if (c == -1)
			break;
		if (c == 1) {
			o->files[o->nfiles++] = optarg;
			continue;
		}
		if (c == RP_OPT_COLOR || c == RP_OPT_COLOUR)
			word = colour_word(optarg);
		if (c == ':' && optopt == RP_OPT_HTML && typed_whole(elem, RP_OPT_HTML)) {
			fputs("sockaudit report: --html needs a file name (OUT.html)\n", stderr);
			return 2;
		}
		if (c == '?' || c == ':' || !typed_whole(elem, c) ||
		    ((c == RP_OPT_COLOR || c == RP_OPT_COLOUR) && word == -2)) {
			fprintf(stderr, "sockaudit report: unknown option '%s'\n", elem);
			report_usage(stderr);
			return 2;
		}
		switch (c) {
		case 'h': report_usage(stdout); return 0;
		case RP_OPT_HTML: o->html = optarg; break;
		case RP_OPT_JSON: o->json = 1; break;
		case RP_OPT_NO_COLOR: o->colour = 0; break;
		default: o->colour = word; break;
		}
	}
	while (optind < argc)
		o->files[o->nfiles++] = argv[optind++];
	return -1;
}
/* One log into the model: 0; 1 when it was opened but not read to its end,
 * -1 when it could not be opened (each said on stderr). */
static int read_log(struct rp_state *st, const char *name)
{
	FILE *f = fopen(name, "r");
	int status = 0;

	if (!f && errno == ENOENT) {
		/* The library opens a path log at its first line: no file
		 * means no line was written, not an empty audit. */
		fprintf(stderr,
			"sockaudit report: %s does not exist: no line was ever written to it.\n"
			"  Usually the program made no socket call, was statically linked or setuid/setcap\n"
			"  (LD_PRELOAD could not load the library), or was a Go program (Go makes its own\n"
			"  system calls: the library is loaded but sees no socket); the launcher says which\n"
			"  when it starts it,\n"
			"  or --comm / SOCKAUDIT_COMM excluded it (a per-process %%p log exists only for\n  the processes that wrote a line).\n",
			name);
		return -1;
	}
	if (!f) {
		fprintf(stderr, "sockaudit report: %s: %s\n", name, strerror(errno));
		return -1;
	}
	rp_read_stream(st, f);
	if (ferror(f)) {
		fprintf(stderr, "sockaudit report: %s: read error\n", name);
		status = 1;
	}
	fclose(f);
	return status;
}

/* Every log named (or standard input) into the model, in order. Returns
 * the exit status so far; *nothing is set when logs were named and none
 * could be read. */
static int read_logs(struct rp_state *st, const struct rp_opts *o, int *nothing)
{
	int i, rc, status = 0, nread = 0, read_stdin = 0;

	st->files = o->files;
	st->nfiles = o->nfiles;
	st->cur_file = -1;
	if (!o->nfiles)
		rp_read_stream(st, stdin);
	for (i = 0; i < o->nfiles; i++) {
		st->cur_file = strcmp(o->files[i], "-") == 0 ? -1 : i;
		st->cur_line = 0;
		if (strcmp(o->files[i], "-") == 0) {
			read_stdin = 1;
			rp_read_stream(st, stdin);
			continue;
		}
		rc = read_log(st, o->files[i]);
		nread += rc >= 0;
		if (rc != 0)
			status = 1;
	}
	/* Nothing could be read: an empty report would look like a clean audit. */
	*nothing = o->nfiles && !nread && !read_stdin;
	return status;
}

/* --html OUT: the page goes to OUT, and the text report is not printed;
 * --json beside it still goes to standard output. */
static int write_html(struct rp_state *st, const struct rp_opts *o, int status)
{
	FILE *hf = strcmp(o->html, "-") == 0 ? stdout : fopen(o->html, "w");

	if (!hf) {
		fprintf(stderr, "sockaudit report: %s: %s\n", o->html, strerror(errno));
		return 1;
	}
	rp_html(st, hf);
	if (hf != stdout && fclose(hf) != 0) {
		fprintf(stderr, "sockaudit report: %s: write error\n", o->html);
		status = 1;
	}
	if (o->json && hf != stdout)
		rp_json(st, stdout);
	return status;
}

int cli_report(int argc, char **argv)
{
	struct rp_opts o = { .colour = -1 };
	struct rp_state st;
	int status, nothing;

	o.files = calloc((size_t)argc + 1, sizeof *o.files);
	if (!o.files) {
		fputs("sockaudit report: out of memory\n", stderr);
		return 1;
	}
	status = parse_args(&o, argc, argv);
	if (status >= 0) {
		free(o.files);
		return status;
	}
	if (o.colour < 0)
		o.colour = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	rp_state_init(&st);
	status = read_logs(&st, &o, &nothing);
	if (!nothing) {
		rp_finish(&st);
		if (o.html)
			status = write_html(&st, &o, status);
		else if (o.json)
			rp_json(&st, stdout);
		else
			rp_print(&st, stdout, o.colour);
	}
	rp_state_free(&st);
	free(o.files);
	if (!nothing && fflush(stdout) != 0)
		status = 1;
	return status;
}
