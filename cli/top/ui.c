/*
 * top/ui.c: `sockaudit top LOG...`: the live view, drawn with the
 * terminal's plain ANSI/VT100 sequences (every terminal ssh reaches speaks
 * them; no terminfo needed), refreshed every second.
 *
 * The terminal is the user's: the view runs on the alternate screen with
 * the cursor hidden and the keyboard in non-canonical mode, and all three
 * are put back on q, on SIGINT, SIGTERM and SIGHUP, and on any error exit.
 * Without a terminal on stdout it prints one snapshot and exits.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "top/top.h"

static volatile sig_atomic_t got_signal, got_winch;
static struct termios saved_tio;
static int tio_saved, screen_on;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void on_winch(int sig)
{
	(void)sig;
	got_winch = 1;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void top_usage(FILE *out)
{
	fputs(
"usage: sockaudit top [--interval SECONDS] LOG...\n"
"\n"
"A live view of the JSON lines libsockaudit is writing, redrawn every second:\n"
"each listener (address, process, backlog and free room, accepts per second and\n"
"in all, queue peak and queue-full count, accept wait and queue age p50/p99, empty\n"
"accepts), each peer connected to (connects per second, connect times in the\n"
"<1, ~1, ~2, ~3, >3.5 s buckets, SYN resends), and the findings, newest at the\n"
"bottom. What changed in the last seconds is highlighted.\n"
"\n"
"LOG is a file, a %p pattern as given to -o (/tmp/audit-%p.jsonl: every pid),\n"
"or a directory (every file in it). New files and growth are picked up at each\n"
"refresh; files are opened only to read and closed again, so rotation is never\n"
"held up, and a file replaced at its path is read from its start.\n"
"\n"
"Keys: q quits, s changes the sort of listeners, p pauses (and resumes).\n"
"Without a terminal on standard output, prints one snapshot and exits.\n"
"\n"
"      --interval SECONDS   refresh period (default 1, 0.2 .. 60)\n"
"  -h, --help               this text\n",
	      out);
}

static void term_restore(void)
{
	if (screen_on) {
		/* Cursor back, attributes off, the user's screen back. */
		fputs("\033[0m\033[?25h\033[?1049l", stdout);
		fflush(stdout);
		screen_on = 0;
	}
	if (tio_saved) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
		tio_saved = 0;
	}
}

static void term_setup(void)
{
	struct sigaction sa;
	struct termios raw;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		raw = saved_tio;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0)
			tio_saved = 1;
	}
	atexit(term_restore);
	fputs("\033[?1049h\033[?25l\033[H\033[2J", stdout);
	fflush(stdout);
	screen_on = 1;
}

static void win_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* One screen, written at once (no flicker over a slow ssh link). */
static void redraw(struct tp_model *m, struct tp_tail *t, enum tp_sort sort, int paused)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rows, cols;

	if (!f)
		return;
	win_size(&rows, &cols);
	fputs("\033[H", f);
	tp_draw(m, t, f, rows, cols, sort, paused, 1, 1);
	fputs("\033[J", f);
	fclose(f);
	fwrite(buf, 1, len, stdout);
	fflush(stdout);
	free(buf);
}

/* What the command line asked for. */
struct tp_opts {
	double interval;
	char **logs;
	int nlogs;
};

/* The options, up to the first LOG (or "--"): "top LOG --interval 2" names
 * three logs, as it always did. Returns -1 to run, else the exit status. */
static int parse_args(struct tp_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	for (;;) {
		const char *elem = optind < argc ? argv[optind] : "";
		char *end;

		c = getopt_long(argc, argv, "+h", longopts, NULL);
		if (c == -1)
			break;
		if (c == 'h' && log_arg_whole(elem, 'h', "help", LOG_ARG_SPLIT_ONLY)) {
			top_usage(stdout);
			return 0;
		}
		if (c != 'i' || !log_arg_whole(elem, 0, "interval", LOG_ARG_SPLIT_ONLY)) {
			fprintf(stderr, "sockaudit top: unknown option '%s'\nTry 'sockaudit top --help' for more information.\n", elem);
			return 2;
		}
		o->interval = strtod(optarg, &end);
		if (*end || !(o->interval >= 0.2 && o->interval <= 60)) {
			fprintf(stderr, "sockaudit top: --interval wants seconds from 0.2 to 60, not '%s'\n", optarg);
			return 2;
		}
	}
	if (optind >= argc) {
		top_usage(stderr);
		return 2;
	}
	o->logs = argv + optind;
	o->nlogs = argc - optind;
	return -1;
}

/* The keys read since the last look: q quits, s sorts, p pauses. Returns
 * 1 when the screen must be drawn again now. */
static int read_keys(enum tp_sort *sort, int *paused, int *quit)
{
	char c[16];
	ssize_t n = read(STDIN_FILENO, c, sizeof c), k;
	int again = 0;

	for (k = 0; k < n; k++) {
		if (c[k] == 'q' || c[k] == 'Q')
			*quit = 1;
		else if (c[k] == 's' || c[k] == 'S')
			*sort = (*sort + 1) % TP_SORT_N, again = 1;
		else if (c[k] == 'p' || c[k] == 'P')
			*paused = !*paused, again = 1;
	}
	return n == 0 && !tio_saved ? -1 : again;
}

/* The live view until q or a signal; the exit status. */
static int run_live(struct tp_model *m, struct tp_tail *t, double interval)
{
	enum tp_sort sort = TP_SORT_RATE;
	int first = 1, paused = 0, quit = 0, status = 0;
	double next;

	term_setup();
	next = wall();
	while (!quit) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		double now = wall();
		int wait_ms, redraw_now = 0;

		if (now >= next) {
			m->now = now;
			if (!paused && !first)
				tp_tail_poll(t, tp_model_line, m);
			first = 0;
			redraw(m, t, sort, paused);
			next = now + interval;
		}
		wait_ms = (int)((next - wall()) * 1000);
		if (wait_ms < 0)
			wait_ms = 0;
		if (poll(&p, tio_saved ? 1 : 0, wait_ms) > 0 && (p.revents & POLLIN)) {
			redraw_now = read_keys(&sort, &paused, &quit);
			if (redraw_now < 0)
				continue;
		}
		if (got_signal) {
			status = 128 + got_signal;
			break;
		}
		if (got_winch || redraw_now) {
			got_winch = 0;
			redraw(m, t, sort, paused);
		}
	}
	term_restore();
	return status;
}

int cli_top(int argc, char **argv)
{
	struct tp_opts o = { .interval = 1.0 };
	struct tp_model m;
	struct tp_tail t;
	int status = parse_args(&o, argc, argv);

	if (status >= 0)
		return status;
	tp_model_init(&m);
	tp_tail_init(&t, o.logs, o.nlogs);
	m.now = wall();
	tp_tail_poll(&t, tp_model_line, &m);
	if (!isatty(STDOUT_FILENO) || !getenv("TERM") || !strcmp(getenv("TERM"), "dumb")) {
		tp_draw(&m, &t, stdout, 0, 132, TP_SORT_RATE, 0, 0, 0);
		status = ferror(stdout) ? 1 : 0;
	} else {
		status = run_live(&m, &t, o.interval);
	}
	tp_tail_free(&t);
	tp_model_free(&m);
	return status;
}
