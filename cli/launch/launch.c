/*
 * launch/launch.c: `sockaudit [-o FILE|-] [-l LEVEL] [--comm NAMES] [--] CMD ...`
 *
 * Finds libsockaudit.so, puts it first in LD_PRELOAD (keeping what was
 * there), sets the SOCKAUDIT_* variables and execs CMD in its own place, so
 * the exit status, signals and pid are the program's own. It must never
 * leave a descriptor or variable behind that the user did not ask for:
 * `-o -` is fd:1, the program's stdout itself (a duplicate would keep the
 * caller's pipe open in a daemon that closed its own stdout).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch/launch.h"
#include "sockaudit.h"

void cli_usage(FILE *out)
{
	fputs(
"usage: sockaudit [-o FILE|-] [-l warn|info|trace] [--comm NAME,...] [--] COMMAND [ARGS...]\n"
"       sockaudit report [--color=auto|always|never] [--html OUT.html] [--json] [FILE...]\n"
"       sockaudit metrics [--textfile FILE.prom] [--follow] [--interval S]\n"
"                         [--listen HOST:PORT] [--top-peers N] [LOG...|-]\n"
"       sockaudit explain [--json] [--netns PID] [--list] [--codes] QUERY...\n"
"       sockaudit top [--interval SECONDS] LOG...\n"
"       sockaudit diff [--json] BEFORE AFTER\n"
"       sockaudit attach [-o FILE|-] [-l LEVEL] [--comm NAMES] PID...\n"
"       sockaudit detach PID...\n"
"       sockaudit VERB --help\n"
"\n"
"Runs COMMAND with libsockaudit preloaded; COMMAND's exit status is sockaudit's.\n"
"Every socket call is audited and written as one JSON object per line.\n"
"\n"
"  -o, --output FILE   write the JSON lines to FILE (%p becomes the pid);\n"
"                      '-' writes them to standard output itself (a daemon\n"
"                      that detaches from it logs nothing there: use FILE);\n"
"                      also accepts the SOCKAUDIT_LOG values stderr, syslog,\n"
"                      journal (native journald entries) and fd:N.\n"
"                      Default: standard error.\n"
"  -l, --level LEVEL   warn (findings and summaries), info (+ every setsockopt\n"
"                      and listen), trace (+ every accept and connect).\n"
"                      Default: $SOCKAUDIT_LEVEL, else info.\n"
"      --comm NAMES    audit only programs whose name (comm) is in the comma list.\n"
"  -h, --help          this text.\n"
"  -V, --version       print the version.\n"
"\n"
"Verbs:\n"
"  report [FILE...]    read JSON lines (standard input when no FILE) and print\n"
"                      per process, per listener, option read-back, connect\n"
"                      and finding summaries for people.\n"
"      --html OUT.html the same report as one self-contained HTML page\n"
"                      ('-': standard output).\n"
"      --json          the report's model (ranked causes with their evidence,\n"
"                      listeners, connects, read-back, findings) as one JSON document.\n"
"      --color=auto|always|never\n"
"                      colour the report (auto: on a terminal, unless NO_COLOR\n"
"                      is set); --colour= and --no-color work too.\n"
"  metrics [LOG...]    the same lines as Prometheus metrics (text format 0.0.4):\n"
"                      printed, written atomically to a node_exporter textfile,\n"
"                      or served on GET /metrics; see 'sockaudit metrics --help'.\n"
"  explain QUERY...    what this kernel does with a value, before a program\n"
"                      runs: NAME=VALUE (TCP_DEFER_ACCEPT=10, SO_RCVBUF=N ...),\n"
"                      backlog=N, syn, synack; or a finding CODE of a line\n"
"                      (listen_overflows): its mechanism and fix (--codes).\n"
"  top LOG...          a live view of the JSON lines being written: listeners,\n"
"                      peers, findings (sockaudit top --help).\n"
"  diff BEFORE AFTER   what changed between two audits (logs or folders of them),\n"
"                      per listener, peer and finding, with a verdict per row;\n"
"      --json          the same as one JSON document (sockaudit diff --help).\n"
"  attach PID...       audit a program already running, no restart (ptrace; its\n"
"                      threads stop for milliseconds); -o, -l, --comm as above.\n"
"  detach PID...       let it go: calls and handlers put back, summary written.\n"
"  VERB --help         a verb's own help.\n"
"Every verb reads journald's JSON export too (journalctl -o json -t sockaudit).\n"
"\n"
"Before running COMMAND, says on stderr when LD_PRELOAD cannot work for it\n"
"(statically linked, setuid/setgid/setcap, another ELF class); as COMMAND ends,\n"
"says on stderr how many lines could not be written, if any.\n"
"\n"
"The library is looked for beside this program, in ../lib/sockaudit, ../lib, then in\n"
SOCKAUDIT_LIBDIR "; a musl program gets libsockaudit-musl.so, and a program no\n"
"library fits (musl without it, a glibc older than the library needs) runs without one.\n"
"Example: sockaudit -o - -- nginx -g 'daemon off;' | jq 'select(.findings)'\n",
	      out);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("sockaudit: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'sockaudit --help' for more information.\n", stderr);
	return 2;
}

/* getopt already moved past the bad option: name it as the user typed it
 * (optopt holds the letter for a short option, 0 for a long one). */
static int bad_option(int missing_arg, const char *arg)
{
	char shortopt[3] = { '-', (char)optopt, '\0' };
	const char *name = optopt ? shortopt : arg;

	if (missing_arg)
		return usage_error("option '%s' needs an argument", name);
	return usage_error("unknown option '%s'", name);
}

/* A sanitizer runtime must be the first library loaded ("ASan runtime
 * does not come first in initial library list"): it stays ahead of us. */
static int is_sanitizer_runtime(const char *path)
{
	static const char *const names[] = { "libasan.so", "libtsan.so", "libhwasan.so",
					     "libclang_rt.asan", "libclang_rt.tsan" };
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strncmp(base, names[i], strlen(names[i])) == 0)
			return 1;
	return 0;
}

/* LD_PRELOAD with lib first (after any sanitizer runtime) and the existing
 * entries after it; ld.so splits on spaces and colons. lib is not repeated
 * if already listed. */
static char *build_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	size_t cap = strlen(lib) + 2 * (old ? strlen(old) : 0) + 4;
	char *res = calloc(1, cap), *copy, *tok, *save = NULL;
	int pass;

	if (!res)
		return NULL;
	copy = strdup(old ? old : "");
	if (!copy) {
		free(res);
		return NULL;
	}
	/* Pass 0: sanitizer runtimes; then lib; pass 1: everything else. */
	for (pass = 0; pass < 2; pass++) {
		char *work = strdup(copy);

		if (!work)
			break;
		if (pass == 1) {
			strcat(res, *res ? ":" : "");
			strcat(res, lib);
		}
		save = NULL;
		for (tok = strtok_r(work, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
			if (strcmp(tok, lib) == 0 || is_sanitizer_runtime(tok) != (pass == 0))
				continue;
			strcat(res, *res ? ":" : "");
			strcat(res, tok);
		}
		free(work);
	}
	free(copy);
	if (!strstr(res, lib)) {        /* out of memory half way */
		free(res);
		return NULL;
	}
	return res;
}

/* The SOCKAUDIT_LOG value for -o ARG. Paths become absolute for the same
 * reason as the library path; stderr, syslog, journal and fd:N pass through. */
static int log_value(const char *arg, char *out, size_t cap)
{
	char cwd[PATH_MAX];

	if (strcmp(arg, "-") == 0) {
		/* stdout itself, never a duplicate: a daemon that lets go of its
		 * stdout lets go of the caller's pipe (`out=$(sockaudit -o - --
		 * redis-server --daemonize yes)` returns). */
		int fl = fcntl(STDOUT_FILENO, F_GETFL);

		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
			fprintf(stderr, "sockaudit: -o -: standard output is not usable: %s\n",
				fl < 0 ? strerror(errno) : "open read-only");
			return -1;
		}
		snprintf(out, cap, "fd:%d", STDOUT_FILENO);
		return 0;
	}
	if (!*arg) {
		fprintf(stderr, "sockaudit: -o: empty file name\n");
		return -1;
	}
	if (arg[0] == '/' || strcmp(arg, "stderr") == 0 || strcmp(arg, "syslog") == 0 ||
	    strcmp(arg, "journal") == 0 || strncmp(arg, "fd:", 3) == 0) {
		if ((size_t)snprintf(out, cap, "%s", arg) >= cap)
			goto toolong;
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "sockaudit: cannot resolve %s: %s\n", arg, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(out, cap, "%s/%s", cwd, arg) >= cap)
		goto toolong;
	return 0;
toolong:
	fprintf(stderr, "sockaudit: -o %s: path too long\n", arg);
	return -1;
}

static int valid_level(const char *s)
{
	return strcmp(s, "warn") == 0 || strcmp(s, "info") == 0 || strcmp(s, "trace") == 0;
}

/* Execs the program in our place; returns only when it could not, with
 * the status a shell gives: 127 not found, 126 found but not runnable. */
static int run_program(char **cmd)
{
	int err;

	execvp(cmd[0], cmd);
	err = errno;
	if (err == ENOENT) {
		fprintf(stderr, "sockaudit: %s: %s\n", cmd[0],
			strchr(cmd[0], '/') ? "No such file or directory" : "command not found");
		return 127;
	}
	fprintf(stderr, "sockaudit: %s: %s\n", cmd[0], strerror(err));
	return 126;
}

int cli_launch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "level", required_argument, NULL, 'l' },
		{ "comm", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *level = NULL, *comm = NULL;
	char lib[PATH_MAX], logv[PATH_MAX + 16], pidv[24];
	char *preload;
	int c, err;

	opterr = 0;
	/* '+': stop at the first non-option, so COMMAND's own options stay its own. */
	while ((c = getopt_long(argc, argv, "+:o:l:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'l': level = optarg; break;
		case 'c': comm = optarg; break;
		case 'h': cli_usage(stdout); return 0;
		case 'V': printf("sockaudit %s\n", SOCKAUDIT_VERSION_STR); return 0;
		case ':':
		default:
			return bad_option(c == ':', argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("%s", "no COMMAND to run");
	if (level && !valid_level(level))
		return usage_error("bad level '%s' (use warn, info or trace)", level);
	if (comm && (!*comm || strchr(comm, ' ')))
		return usage_error("bad --comm '%s' (a comma list of program names)", comm);

	switch (cli_pick_library(argv[optind], lib, sizeof(lib), stderr)) {
	case SA_PICK_NONE:      /* said why; the program runs as it is */
		return run_program(argv + optind);
	case SA_PICK_MISSING:
		fprintf(stderr, "sockaudit: cannot find %s beside this program, in "
			"../lib/sockaudit, ../lib, nor in %s\n", SA_LIB_NAME, SOCKAUDIT_LIBDIR);
		return 127;
	default:
		break;
	}
	if (strpbrk(lib, ": ")) {
		fprintf(stderr, "sockaudit: %s: LD_PRELOAD cannot hold a path with ':' or ' '\n",
			lib);
		return 127;
	}
	preload = build_preload(lib);
	if (!preload) {
		fprintf(stderr, "sockaudit: out of memory\n");
		return 127;
	}
	if (output) {
		if (log_value(output, logv, sizeof(logv)) < 0) {
			free(preload);
			return 2;
		}
	} else {
		strcpy(logv, "stderr");
	}
	snprintf(pidv, sizeof pidv, "%ld", (long)getpid());
	err = setenv("LD_PRELOAD", preload, 1) || setenv(SOCKAUDIT_ENV_LOG, logv, 1) ||
	      setenv(SA_ENV_LAUNCHED, pidv, 1) ||
	      (level && setenv(SOCKAUDIT_ENV_LEVEL, level, 1)) ||
	      (comm && setenv(SOCKAUDIT_ENV_COMM, comm, 1));
	free(preload);
	if (err) {
		fprintf(stderr, "sockaudit: setenv: %s\n", strerror(errno));
		return 127;
	}

	/* Blind spots said out loud; the program runs anyway. */
	cli_check_program(argv[optind], stderr);
	return run_program(argv + optind);
}
