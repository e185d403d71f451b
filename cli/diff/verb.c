/*
 * diff/verb.c: `sockaudit diff [--json] BEFORE AFTER`: the options, then
 * each side read into its own report model, compared and printed.
 *
 * A side is a log file, a folder (its *.jsonl, in name order) or "-"
 * (standard input, for one side: `journalctl -o json | sockaudit diff
 * before.jsonl -`). Whatever the verdicts, the status is 0; 2 for a usage
 * error, 1 when a side cannot be read or holds no line of ours, said in
 * one message before anything is printed.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diff/diff.h"

static void diff_usage(FILE *out)
{
	fputs("usage: sockaudit diff [--json] BEFORE AFTER\n"
	      "Compares two audits: BEFORE and AFTER are each a log of libsockaudit JSON\n"
	      "lines, a folder of them (*.jsonl) or '-' (standard input, for one side).\n"
	      "Per listener (program and address) and per peer (the address connected to),\n"
	      "before -> after: the backlog, queue full seen, empty accepts, the accept queue\n"
	      "wait and connect time (p50, p99), slow connects, SYN resends; and each finding\n"
	      "code's count. Each row has a verdict: fixed, better, same, worse, or new/gone\n"
	      "when only one side has it. Exit status 0 whatever changed; 1 when a side\n"
	      "cannot be read, 2 for a usage error.\n"
	      "--json prints the same rows as one JSON document.\n",
	      out);
}

static int read_file(struct df_side *s, const char *path, FILE *f)
{
	if (!f) {
		fprintf(stderr, "sockaudit diff: %s: %s\n", path, strerror(errno));
		return -1;
	}
	s->st.cur_line = 0;
	rp_read_stream(&s->st, f);
	if (ferror(f)) {
		fprintf(stderr, "sockaudit diff: %s: read error\n", path);
		if (f != stdin)
			fclose(f);
		return -1;
	}
	if (f != stdin)
		fclose(f);
	s->files++;
	return 0;
}

static int is_log_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* A folder's *.jsonl files, in name order. */
static int read_folder(struct df_side *s, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "sockaudit diff: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL)
		if (is_log_name(e->d_name)) {
			names = log_grow(names, &cap, n, sizeof(*names));
			names[n++] = log_strdup(e->d_name);
		}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		char *path = rp_xprintf("%s/%s", dir, names[i]);

		if (rc == 0 && read_file(s, path, fopen(path, "r")) != 0)
			rc = -1;
		free(path);
		free(names[i]);
	}
	free(names);
	if (rc == 0 && !n) {
		fprintf(stderr, "sockaudit diff: %s: a folder without any *.jsonl log\n", dir);
		rc = -1;
	}
	return rc;
}

static int read_side(struct df_side *s, const char *name)
{
	struct stat sb;

	s->name = name;
	rp_state_init(&s->st);
	s->st.cur_file = -1;
	if (strcmp(name, "-") == 0) {
		if (read_file(s, "standard input", stdin) != 0)
			return -1;
	} else if (stat(name, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (read_folder(s, name) != 0)
			return -1;
	} else if (read_file(s, name, fopen(name, "r")) != 0) {
		return -1;
	}
	/* Nothing of ours on a side would make every row "gone" or "new":
	 * more likely the wrong file than a clean audit. */
	if (!s->st.events) {
		fprintf(stderr, "sockaudit diff: %s: no libsockaudit JSON line in it\n", name);
		return -1;
	}
	rp_finish(&s->st);
	return 0;
}

/* What the command line asked for. */
struct df_opts {
	const char *names[2];   /* BEFORE and AFTER */
	int n, json;
};

static int add_side(struct df_opts *o, const char *name)
{
	if (o->n >= 2) {
		fputs("sockaudit diff: give two sides, BEFORE and AFTER\n", stderr);
		return 2;
	}
	o->names[o->n++] = name;
	return 0;
}

/* The options and the two sides, in the order given (after "--", every
 * argument is a side). Returns -1 to run, else the exit status. */
static int parse_args(struct df_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	for (;;) {
		const char *elem = optind < argc ? argv[optind] : "";

		c = getopt_long(argc, argv, "-h", longopts, NULL);
		if (c == -1)
			break;
		if (c == 1) {
			if (add_side(o, optarg) != 0)
				return 2;
			continue;
		}
		if (c == '?' || !log_arg_whole(elem, c == 'h' ? 'h' : 0, c == 'h' ? "help" : "json",
					       LOG_ARG_SPLIT_ONLY)) {
			fprintf(stderr, "sockaudit diff: unknown option '%s'\n", elem);
			diff_usage(stderr);
			return 2;
		}
		if (c == 'h') {
			diff_usage(stdout);
			return 0;
		}
		o->json = 1;
	}
	while (optind < argc)
		if (add_side(o, argv[optind++]) != 0)
			return 2;
	if (o->n != 2) {
		fputs("sockaudit diff: give two sides, BEFORE and AFTER (sockaudit diff --help)\n", stderr);
		return 2;
	}
	return -1;
}

int cli_diff(int argc, char **argv)
{
	struct df_opts o = { { NULL, NULL }, 0, 0 };
	struct df_side a, b;
	struct df_diff d;
	int status = parse_args(&o, argc, argv);

	if (status >= 0)
		return status;
	status = 0;
	if (strcmp(o.names[0], "-") == 0 && strcmp(o.names[1], "-") == 0) {
		fputs("sockaudit diff: standard input can be one side only\n", stderr);
		return 2;
	}
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (read_side(&a, o.names[0]) != 0 || read_side(&b, o.names[1]) != 0) {
		rp_state_free(&a.st);
		rp_state_free(&b.st);
		return 1;
	}
	df_compare(&d, &a, &b);
	if (o.json)
		df_json(&d, stdout);
	else
		df_print(&d, stdout);
	df_free(&d);
	rp_state_free(&a.st);
	rp_state_free(&b.st);
	if (fflush(stdout) != 0)
		status = 1;
	return status;
}
