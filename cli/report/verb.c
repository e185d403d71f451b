/*
 * report/verb.c: `sockaudit report [FILE...]`: options, files, lines.
 *
 * Reads each file (or standard input) as lines of any length and hands
 * them to feed.c; a file that cannot be read is named on stderr and makes
 * the exit status 1, but the report still covers every file that could.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"

/* Longer lines are skipped: the shim writes at most 4096 bytes a line. */
#define RP_LINE_MAX (1 << 20)

/* ---- input ----------------------------------------------------------------------- */

/* Reads lines of any length, keeping at most RP_LINE_MAX bytes of each:
 * a longer line is counted and skipped instead of swallowing memory.
 * Reads in blocks and finds newlines with memchr: a line byte by byte
 * through getc was a fifth of the report's time on a 1M-line log. */
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

int cli_report(int argc, char **argv)
{
	struct rp_state st;
	int i, colour = -1, files = 0, status = 0, opts_done = 0, nread = 0, read_stdin = 0;
	const char *html = NULL;
	int json = 0;
	FILE *hf = NULL;

	/* Options first, so a missing file is reported before any output. */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opts_done || a[0] != '-' || strcmp(a, "-") == 0) {
			files++;
			continue;
		}
		if (strcmp(a, "--html") == 0) {
			if (i + 1 >= argc) {
				fputs("sockaudit report: --html needs a file name (OUT.html)\n", stderr);
				return 2;
			}
			html = argv[++i];
			continue;
		}
		if (strncmp(a, "--html=", 7) == 0) {
			html = a + 7;
			continue;
		}
		if (strcmp(a, "--json") == 0) {
			json = 1;
		} else if (strcmp(a, "--") == 0) {
			opts_done = 1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			report_usage(stdout);
			return 0;
		} else if (strcmp(a, "--color=always") == 0 || strcmp(a, "--colour=always") == 0) {
			colour = 1;
		} else if (strcmp(a, "--color=never") == 0 || strcmp(a, "--colour=never") == 0 ||
			   strcmp(a, "--no-color") == 0) {
			colour = 0;
		} else if (strcmp(a, "--color=auto") == 0 || strcmp(a, "--colour=auto") == 0) {
			colour = -1;
		} else {
			fprintf(stderr, "sockaudit report: unknown option '%s'\n", a);
			report_usage(stderr);
			return 2;
		}
	}
	if (colour < 0)
		colour = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");

	rp_state_init(&st);
	st.files = (const char *const *)argv;
	st.nfiles = argc;
	st.cur_file = -1;
	if (!files)
		rp_read_stream(&st, stdin);
	for (i = 1, opts_done = 0; i < argc; i++) {
		const char *a = argv[i];
		FILE *f;

		if (!opts_done && a[0] == '-' && strcmp(a, "-") != 0) {
			opts_done = strcmp(a, "--") == 0;
			i += strcmp(a, "--html") == 0;
			continue;
		}
		st.cur_file = strcmp(a, "-") == 0 ? -1 : i;
		st.cur_line = 0;
		if (strcmp(a, "-") == 0) {
			read_stdin = 1;
			rp_read_stream(&st, stdin);
			continue;
		}
		f = fopen(a, "r");
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
				a);
			status = 1;
			continue;
		}
		if (!f) {
			fprintf(stderr, "sockaudit report: %s: %s\n", a, strerror(errno));
			status = 1;
			continue;
		}
		nread++;
		rp_read_stream(&st, f);
		if (ferror(f)) {
			fprintf(stderr, "sockaudit report: %s: read error\n", a);
			status = 1;
		}
		fclose(f);
	}
	if (files && !nread && !read_stdin) {
		/* Nothing could be read: an empty report would look like a clean audit. */
		rp_state_free(&st);
		return status;
	}
	rp_finish(&st);
	if (html) {
		/* The page goes to OUT; the text report is not printed then. */
		hf = strcmp(html, "-") == 0 ? stdout : fopen(html, "w");
		if (!hf) {
			fprintf(stderr, "sockaudit report: %s: %s\n", html, strerror(errno));
			rp_state_free(&st);
			return 1;
		}
		rp_html(&st, hf);
		if (hf != stdout && fclose(hf) != 0) {
			fprintf(stderr, "sockaudit report: %s: write error\n", html);
			status = 1;
		}
		if (json && hf != stdout)
			rp_json(&st, stdout);
		rp_state_free(&st);
		if (fflush(stdout) != 0)
			status = 1;
		return status;
	}
	if (json)
		rp_json(&st, stdout);
	else
		rp_print(&st, stdout, colour);
	rp_state_free(&st);
	if (fflush(stdout) != 0)
		status = 1;
	return status;
}
