/*
 * explain/verb.c: `sockaudit explain [--json] [--netns PID] QUERY...`: what this
 * kernel will do with a value, before a program sets it.
 *
 * Each option value is set on a fresh socket in the network namespace
 * asked about and read back with getsockopt, then judged by the shim's own
 * judge and words (shim/judge/sockopt_judge.c and shim/kernel/readback.c, linked
 * here): the same sentence the shim would write at read-back. backlog=N listens on a fresh socket and reads
 * the backlog back with TCP_INFO; syn and synack read the sysctls the shim
 * reads. A finding code (listen_overflows) prints its meaning, mechanism
 * and fix, the words docs/findings.md says under it. Nothing is guessed: a
 * name, value or code it does not know is an error (exit 2), a value the
 * kernel refuses is said so (exit 1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "explain/explain.h"

static void explain_usage(FILE *out)
{
	fputs(
"usage: sockaudit explain [--json] [--netns PID] QUERY...\n"
"       sockaudit explain --list | --codes\n"
"\n"
"Says what this kernel does with a value, without running a program: each\n"
"option is set on a fresh socket in this network namespace (or PID's), read\n"
"back, and explained with the library's own rules.\n"
"\n"
"QUERY is one of:\n"
"  NAME=VALUE          a socket option (SO_RCVBUF=1000000, TCP_DEFER_ACCEPT=10,\n"
"                      IP_TOS=0x2f, TCP_CONGESTION=reno, SO_LINGER=1,5,\n"
"                      SO_RCVTIMEO=0.0015 in seconds)\n"
"  backlog=N           listen(N): the effective backlog here, the queue's\n"
"                      room, the somaxconn clamp (also listen=N)\n"
"  syn                 when this kernel resends a SYN and connect() gives up\n"
"  synack              when it resends a SYN-ACK and drops a half-open request\n"
"  CODE                a finding code of the log's lines (listen_overflows,\n"
"                      accept_queue_full ...): what it means, the mechanism\n"
"                      behind it and the fix\n"
"\n"
"      --json          one JSON array, an object per query\n"
"      --netns PID     answer for the network namespace of process PID\n"
"                      (or run under `ip netns exec NAME`)\n"
"      --list          the option names known, with their levels and kinds\n"
"      --codes         the finding codes known\n"
"  -h, --help          this text\n"
"\n"
"Exit status: 0 every query answered, 1 the kernel refused a value (said\n"
"so), 2 a name, value or code not understood, or --netns failed.\n",
	      out);
}

/* The library's sa_say_fn: each finding's sentence kept for the answer. */
static void __attribute__((format(printf, 3, 4))) say_collect(void *ctx, const char *code, const char *fmt, ...)
{
	struct ex_answer *a = ctx;
	va_list ap;

	if (a->nfind < EX_FINDINGS_MAX) {
		a->find[a->nfind].code = code;
		va_start(ap, fmt);
		vsnprintf(a->find[a->nfind].text, sizeof a->find[a->nfind].text, fmt, ap);
		va_end(ap);
		a->nfind++;
	}
}

/* A whole integer (decimal, 0x hex), or -1 with *bad set. */
static int parse_int(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (!*s || *end || errno || v < INT_MIN || v > INT_MAX)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_value(struct ex_answer *a, const char *v)
{
	switch (a->desc->kind) {
	case SA_OPT_INT:
		return parse_int(v, &a->req_i);
	case SA_OPT_BOOL:
		if (!strcasecmp(v, "on") || !strcasecmp(v, "true") || !strcasecmp(v, "yes")) {
			a->req_i = 1;
			return 0;
		}
		if (!strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcasecmp(v, "no")) {
			a->req_i = 0;
			return 0;
		}
		return parse_int(v, &a->req_i);
	case SA_OPT_LINGER: {
		char on[32], *comma = strchr(v, ',');
		size_t n = comma ? (size_t)(comma - v) : 0;

		if (!comma || n >= sizeof on)
			return -1;
		memcpy(on, v, n);
		on[n] = '\0';
		return parse_int(on, &a->req_i) || parse_int(comma + 1, &a->req_i2) ? -1 : 0;
	}
	case SA_OPT_TIMEVAL: {
		char *end;
		double s;

		errno = 0;
		s = strtod(v, &end);
		if (!*v || *end || errno || s < 0 || s > 1e9)
			return -1;
		a->req_us = (long long)(s * 1e6 + 0.5);
		return 0;
	}
	case SA_OPT_STRING:
		if (!*v || strlen(v) >= sizeof a->req_s)
			return -1;
		snprintf(a->req_s, sizeof a->req_s, "%s", v);
		return 0;
	default:
		return -1;
	}
}

static const char *kind_name(enum sa_optkind k)
{
	static const char *const n[] = { "int", "bool", "linger", "timeval", "string", "opaque" };

	return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : "?";
}

static const char *value_hint(enum sa_optkind k)
{
	switch (k) {
	case SA_OPT_INT: return "an integer";
	case SA_OPT_BOOL: return "0, 1, on or off";
	case SA_OPT_LINGER: return "ONOFF,SECONDS (e.g. 1,5)";
	case SA_OPT_TIMEVAL: return "seconds (e.g. 0.5)";
	case SA_OPT_STRING: return "a name";
	default: return "nothing: an opaque structure";
	}
}

/* A word in a finding code's spelling (lower case, digits, '_', with a
 * '_'): one the table does not know is called an unknown code. */
static int looks_like_code(const char *q)
{
	return strchr(q, '_') && strspn(q, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(q);
}

/* Parses one query into a; 0, or -1 after an error message on stderr. */
static int parse_query(const char *q, struct ex_answer *a)
{
	const char *eq = strchr(q, '=');
	char name[64];
	size_t n;

	memset(a, 0, sizeof *a);
	a->query = q;
	if (!eq) {
		if (!strcasecmp(q, "syn")) {
			a->what = EX_SYN;
			return 0;
		}
		if (!strcasecmp(q, "synack")) {
			a->what = EX_SYNACK;
			return 0;
		}
		a->code = sa_finding_entry(q);
		if (a->code) {
			a->what = EX_CODE;
			return 0;
		}
		if (looks_like_code(q))
			fprintf(stderr, "sockaudit explain: unknown finding code '%s' (sockaudit explain --codes lists them)\n", q);
		else
			fprintf(stderr, "sockaudit explain: '%s' is not a query: write NAME=VALUE, backlog=N, syn, synack "
				"or a finding code\n", q);
		return -1;
	}
	n = (size_t)(eq - q);
	if (n == 0 || n >= sizeof name) {
		fprintf(stderr, "sockaudit explain: '%s': no option name before '='\n", q);
		return -1;
	}
	memcpy(name, q, n);
	name[n] = '\0';
	if (!strcasecmp(name, "backlog") || !strcasecmp(name, "listen")) {
		a->what = EX_BACKLOG;
		if (parse_int(eq + 1, &a->req_i) != 0) {
			fprintf(stderr, "sockaudit explain: '%s': the backlog must be an integer\n", q);
			return -1;
		}
		return 0;
	}
	a->what = EX_OPTION;
	a->desc = sa_opt_by_name(name);
	if (!a->desc) {
		fprintf(stderr, "sockaudit explain: unknown option '%s' (sockaudit explain --list shows the names known)\n", name);
		return -1;
	}
	if (a->desc->kind == SA_OPT_OPAQUE) {
		fprintf(stderr, "sockaudit explain: %s takes a structure the library does not read back; nothing to explain\n",
			a->desc->name);
		return -1;
	}
	if (parse_value(a, eq + 1) != 0) {
		fprintf(stderr, "sockaudit explain: '%s': %s takes %s\n", q, a->desc->name, value_hint(a->desc->kind));
		return -1;
	}
	return 0;
}

static int enter_netns(const char *pid)
{
	char path[64];
	int fd, bad;
	int p;

	if (parse_int(pid, &p) != 0 || p <= 0) {
		fprintf(stderr, "sockaudit explain: --netns wants a process id, not '%s'\n", pid);
		return -1;
	}
	snprintf(path, sizeof path, "/proc/%d/ns/net", p);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "sockaudit explain: %s: %s\n", path, strerror(errno));
		return -1;
	}
	bad = setns(fd, CLONE_NEWNET);
	if (bad)
		fprintf(stderr, "sockaudit explain: cannot enter the network namespace of %d: %s\n", p, strerror(errno));
	close(fd);
	return bad ? -1 : 0;
}

static void list_codes(void)
{
	size_t i;

	for (i = 0; i < sizeof sa_finding_texts / sizeof sa_finding_texts[0]; i++)
		printf("%-30s docs/findings.md#%s\n", sa_finding_texts[i].code, sa_finding_texts[i].anchor);
}

static void list_options(void)
{
	const struct sa_optdesc *d;
	size_t i;

	for (i = 0; (d = sa_opt_nth(i)) != NULL; i++)
		if (d->kind != SA_OPT_OPAQUE)
			printf("%-28s %-13s %s\n", d->name, sa_sol_name(d->level), kind_name(d->kind));
}

int cli_explain(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "netns", required_argument, NULL, 'n' },
		{ "list", no_argument, NULL, 'L' },
		{ "codes", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ex_answer *ans;
	int c, json = 0, list = 0, codes = 0, i, n, refused = 0;
	const char *netns = NULL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'n': netns = optarg; break;
		case 'L': list = 1; break;
		case 'C': codes = 1; break;
		case 'h': explain_usage(stdout); return 0;
		default:
			fprintf(stderr, "sockaudit explain: %s '%s'\nTry 'sockaudit explain --help' for more information.\n",
				"unknown option or missing argument", argv[optind - 1]);
			return 2;
		}
	}
	if (list || codes) {
		if (list)
			list_options();
		if (codes)
			list_codes();
		return 0;
	}
	n = argc - optind;
	if (n <= 0) {
		explain_usage(stderr);
		return 2;
	}
	ans = calloc((size_t)n, sizeof *ans);
	if (!ans) {
		perror("sockaudit explain");
		return 2;
	}
	/* Every query is parsed before anything is answered: one bad query
	 * answers nothing rather than half of a script's list. */
	for (i = 0; i < n; i++)
		if (parse_query(argv[optind + i], &ans[i]) != 0) {
			free(ans);
			return 2;
		}
	if (netns && enter_netns(netns) != 0) {
		free(ans);
		return 2;
	}
	for (i = 0; i < n; i++) {
		ex_answer(&ans[i], say_collect);
		refused |= ans[i].refused;
	}
	if (json)
		ex_print_json(ans, n, stdout);
	else
		for (i = 0; i < n; i++)
			ex_print_text(&ans[i], stdout);
	free(ans);
	return refused ? 1 : 0;
}
