/*
 * top/top.h: what the pieces of `sockaudit top` share. tail.c finds and
 * reads the logs (never holding one open between reads), model.c turns
 * their lines into listeners, peers and findings, draw.c lays them out,
 * ui.c parses the options and runs the terminal.
 */
#ifndef SA_CLI_TOP_H
#define SA_CLI_TOP_H

#include <stdio.h>
#include <sys/types.h>

#include "connect_buckets.h"
#include "connect_outcomes.h"
#include "log/log.h"

/* ui.c: `sockaudit top [--interval S] LOG...`; returns the exit status. */
int cli_top(int argc, char **argv);

/* ---- tail.c ---------------------------------------------------------- */

struct tp_file {
	char *path;
	dev_t dev;
	ino_t ino;
	off_t off;             /* bytes consumed */
	char *part;            /* a line not finished yet */
	size_t npart;
};
struct tp_tail {
	char **specs;          /* the arguments: files, %p patterns, directories */
	int nspecs;
	struct tp_file *files;
	size_t nfiles, capfiles;
	long bytes;            /* read so far, all files */
};
typedef void (*tp_line_fn)(void *ctx, const char *line, size_t len);
void tp_tail_init(struct tp_tail *t, char **specs, int n);
/* Finds new files, reads what was added to every file since the last call
 * (from the start of a file that was replaced or truncated) and hands each
 * complete line to fn. Opens and closes each file within the call. */
void tp_tail_poll(struct tp_tail *t, tp_line_fn fn, void *ctx);
void tp_tail_free(struct tp_tail *t);

/* ---- model.c --------------------------------------------------------- */

#define TP_HIST_N SA_CONN_NBUCKETS
struct tp_listener {
	long pid;
	long fd;
	char comm[32];
	char local[64];
	long backlog, capacity, defer_s;
	long accepts, accept_lines, queue_len, peak, full, empty;
	int have_queue_len;
	struct log_pct wait, qage;
	/* accepts/s: the last two (ts, accepts) observations */
	double ts_prev, ts_last;
	long acc_prev;
	double rate;
	double hot_until;      /* wall clock: highlight until (a problem grew) */
};
struct tp_peer {
	char addr[64];
	long n, failed, syn_retrans;
	long hist[TP_HIST_N];
	double first_ts, last_ts;
	long sec[8], cnt[8];   /* connects per second of log time, a ring */
	double hot_until;
};
#define TP_FIND_MAX 200
struct tp_finding {
	double ts, seen;       /* the line's ts; wall clock when top read it */
	long pid;
	char comm[32];
	char text[480];        /* "code, code: msg" (the latest line's msg) */
	char codes[160];       /* "code, code": one entry per pid and codes */
	long count;            /* lines it stands for */
};
struct tp_model {
	struct tp_listener *lst; size_t nlst, caplst;
	struct tp_peer *peers; size_t npeers, cappeers;
	struct tp_finding find[TP_FIND_MAX];
	size_t nfind, find_head;   /* a ring: the newest at (head + n - 1) % MAX */
	long lines, bad_lines, findings_total;
	long pids[256]; size_t npids;
	double now;            /* wall clock of the current read */
	double max_ts;         /* the newest line's ts */
	struct log_inner inner; /* a journal export line's own line */
	char scratch[8192];     /* the scanner's copy of a line (log_scan) */
};
void tp_model_init(struct tp_model *m);
void tp_model_free(struct tp_model *m);
/* One JSON line (not NUL-terminated). */
void tp_model_line(void *m, const char *line, size_t len);
/* Connects per second to p over the last TP_RATE_S of log time. */
#define TP_RATE_S 5.0
double tp_peer_rate(const struct tp_model *m, const struct tp_peer *p);
/* The i-th finding, oldest first. */
/* accepts/s as of the newest line (or now, while the logs are written):
 * falls to 0 once a listener's lines stop coming. */
double tp_listener_rate(const struct tp_model *m, const struct tp_listener *l);
const struct tp_finding *tp_model_finding(const struct tp_model *m, size_t i);

/* ---- ui.c, draw.c ------------------------------------------------ */

enum tp_sort { TP_SORT_RATE, TP_SORT_ACCEPTS, TP_SORT_FULL, TP_SORT_WAIT, TP_SORT_ADDR, TP_SORT_N };
const char *tp_sort_name(enum tp_sort s);
/* draw.c: draws one screen of at most rows x cols into out (rows 0: no
 * limit); ansi adds the sequences that clear each line, colour the
 * highlights. */
void tp_draw(const struct tp_model *m, const struct tp_tail *t, FILE *out, int rows, int cols,
	     enum tp_sort sort, int paused, int colour, int ansi);

#endif
