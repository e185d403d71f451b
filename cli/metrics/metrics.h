/*
 * metrics.h: `sockaudit metrics`, the logs as Prometheus text (format
 * 0.0.4). model.c folds lines into per-process totals (proc.c and
 * retire.c keep and fold away the processes), print.c writes the
 * exposition, verb.c reads and follows the logs and writes the text to
 * stdout, a textfile or a scrape (http.c). Counters are sums over processes of what each one's
 * own lines say, so they only go up as programs restart.
 */
#ifndef SA_CLI_METRICS_H
#define SA_CLI_METRICS_H

#include <stdio.h>
#include <jansson.h>

#include "connect_buckets.h"
#include "connect_outcomes.h"
#include "log/log.h"

#define MX_TOP_PEERS 10          /* --top-peers default */
#define MX_LISTENERS_MAX 100     /* per comm; the rest are "other" */
#define MX_OUTCOMES SA_OUTCOMES_COUNTED /* sa_outcome_words: ok, failed, abandoned, interrupted */
#define MX_LINE_MAX (1 << 20)    /* longer lines are counted unreadable, as the report does */

/* One listener as one process saw it. */
struct mx_plst {
	char *local;
	long ev_accepts;                   /* accept lines that returned a connection */
	long st_accepts, st_queue_full;    /* the latest listener_stats (running totals) */
	long st_empty, st_empty_defer, st_empty_syncookie;
	long sum_accepts, sum_queue_full, sum_empty;   /* the summary's entry */
};

struct mx_fdmap {
	long fd;
	char *local;
};

struct mx_proc {
	long pid;
	char *comm;
	int exited;                        /* its summary was read */
	long retired;                      /* an accumulator: the exited processes folded in */
	char *node, *boot;                 /* its init line's nodename and boot_id */
	double first_ts;                   /* its first line's ts */
	long ev_conn[MX_OUTCOMES], sum_conn[MX_OUTCOMES];
	long ev_hist[SA_CONN_NBUCKETS], sum_hist[SA_CONN_NBUCKETS];
	long ev_timed;                     /* TCP connects that succeeded, from lines */
	double ev_sum_ms, sum_sum_ms;
	int have_sum_hist, have_sum_sum;
	long ev_retr, sum_retr;
	long dropped_warn, dropped_sum;
	json_t *ev_find, *sum_find;        /* code -> count */
	struct mx_plst *lst;
	size_t nlst, caplst;
	struct mx_fdmap *fds;              /* its listen()s: fd -> local */
	size_t nfds, capfds;
	struct mx_proc *hnext;
};

struct mx_peer {                       /* connect lines per (comm, peer, outcome) */
	char *comm, *peer;
	long n[MX_OUTCOMES];
};

struct mx_backlog {                    /* the latest successful listen per (comm, local) */
	char *comm, *local;
	long requested, effective;
};

struct mx_evcount {                    /* lines per (comm, event) */
	char *comm, *event;
	long n;
};

#define MX_HASH 1024
struct mx_state {
	struct mx_proc **procs;            /* running processes, then one accumulator per comm */
	size_t nprocs, capprocs;
	struct mx_proc *hash[MX_HASH];
	struct mx_proc *last;
	struct mx_peer *peers;
	size_t npeers, cappeers;
	struct mx_backlog *bl;
	size_t nbl, capbl;
	struct mx_evcount *evc;
	size_t nevc, capevc;
	struct mx_evcount *evc_last;
	struct mx_fdmap *comm_fds;         /* per comm (comm in .local's twin below) */
	char **comm_fds_comm;
	size_t ncomm_fds, capcomm_fds;
	long lines, unreadable;
	int top_peers;
	char scratch[8192];
	struct log_inner inner;            /* a journal export line's own line */
};

void mx_init(struct mx_state *st, int top_peers);
void mx_free(struct mx_state *st);
/* One line without its newline. Never fails (exits on out of memory). */
void mx_feed(struct mx_state *st, const char *line, size_t len);
/* The exposition of everything fed so far. */
void mx_print(const struct mx_state *st, FILE *out);

/* http.c: a listening socket on HOST:PORT, or -1 (said on stderr). */
int mx_http_listen(const char *hostport);
/* Answers the one connection waiting on lfd with body (GET /metrics) or
 * 404; never blocks more than a second on a slow client. */
void mx_http_serve(int lfd, const char *body, size_t len);

/* files.c: the set of logs, each read on from where the last pass stopped. */
struct mx_src {                   /* what the user named: a file, a glob or a directory */
	const char *arg;
	int kind;                 /* 0 file, 1 glob, 2 directory, 3 stdin */
};
void mx_files_add(const char *path, int is_stdin);
/* New files: the globs' matches, the directories' regular files. */
void mx_files_discover(const struct mx_src *src, size_t nsrc);
/* Everything new in every file fed to st: 0, or 1 when a file could not
 * be read (said on stderr unless quiet). */
int mx_files_read(struct mx_state *st, int quiet);
void mx_files_close(void);

/* verb.c: `sockaudit metrics [options] [LOG...|-]`; returns the exit status. */
int cli_metrics(int argc, char **argv);
/* proc.c: a process's record, which model.c and retire.c both use. */
void mx_proc_free(struct mx_proc *p);
struct mx_plst *mx_plst_get(struct mx_proc *p, const char *local);
/* retire.c: P (its summary read) added to its program's
 * accumulator and freed. */
void mx_retire(struct mx_state *st, struct mx_proc *p);
/* An outcome word's index in sa_outcome_words ("ok" -> 0), else -1; and back. */
int mx_outcome(const char *o);
const char *mx_outcome_name(int i);

#endif
