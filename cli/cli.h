/*
 * cli.h: what the pieces of the `sockaudit` command share.
 *
 * main.c picks the subcommand, launcher.c wraps a program under the shim,
 * report*.c turn JSON lines into a report for people. None of these files
 * is linked into libsockaudit.so: they may exit(), print and allocate freely.
 */
#ifndef SA_CLI_H
#define SA_CLI_H

#include <stdio.h>
#include <jansson.h>

#ifndef SOCKAUDIT_VERSION_STR
#define SOCKAUDIT_VERSION_STR "unknown"
#endif
/* The installed libdir; the Makefile passes $(LIBDIR). */
#ifndef SOCKAUDIT_LIBDIR
#define SOCKAUDIT_LIBDIR "/usr/local/lib"
#endif

#define SA_LIB_NAME "libsockaudit.so"
#define SA_MUSL_LIB_NAME "libsockaudit-musl.so"

/* launcher.c: `sockaudit [options] [--] COMMAND [ARGS...]`. Returns only
 * on error (the exit status to use); on success it has exec'd. */
int cli_launch(int argc, char **argv);
void cli_usage(FILE *out);
/* progcheck.c: one line on ERR when LD_PRELOAD cannot work for the program
 * NAME resolves to (static, another ELF class, setuid/setgid/setcap). */
void cli_check_program(const char *name, FILE *err);
/* NAME resolved like execvp does, in out; -1 when not found. */
int cli_resolve(const char *name, char *out, size_t cap);
/* The interpreter a #! script at fd names (through `env NAME`), in out;
 * -1 when the file is not a script. */
int cli_script_interp(int fd, char *out, size_t cap);

/* libpick.c: the library to preload into the program NAME runs, by its
 * interpreter (glibc or musl) and the running glibc's version. */
enum { SA_PICK_PRELOAD, SA_PICK_NONE, SA_PICK_MISSING };
/* SA_PICK_PRELOAD: the library's absolute path is in lib. SA_PICK_NONE: no
 * library fits; one line said why on err, run the program as it is.
 * SA_PICK_MISSING: libsockaudit.so is not installed anywhere we look. */
int cli_pick_library(const char *name, char *lib, size_t cap, FILE *err);
/* Library NAME beside this program, in ../lib/sockaudit, ../lib, or the
 * configured directory; 0 with its absolute path in out. */
int cli_find_library(const char *name, char *out, size_t cap);
/* 1 with the highest GLIBC_x.y the ELF at path needs in ver ("2.17"),
 * 0 when it needs none, -1 unreadable. */
int cli_glibc_needed(const char *path, char *ver, size_t cap);
/* gocheck.c: 1 when the ELF file at fd is a Go program (its build-id note
 * or .go.buildinfo section): Go makes its own system calls. */
int cli_is_go_program(int fd);
/* Set by the launcher to its own pid, which the program keeps across exec:
 * the library's exit message is for that process only (shim/core/lifecycle.c). */
#define SA_ENV_LAUNCHED "SOCKAUDIT_LAUNCHED"

/* report.c: `sockaudit report [FILE...]`; returns the exit status. */
int cli_report(int argc, char **argv);
/* explain.c: `sockaudit explain QUERY...`; top.c: `sockaudit top LOG...`. */
int cli_explain(int argc, char **argv);
int cli_top(int argc, char **argv);

/* ---- report internals (report.c reads, report_print.c prints) ---------- */

/* Latency percentiles as the shim writes them: {p50,p95,p99,max}. */
struct rp_pct {
	int have;
	double p50, p95, p99, max;
	double n;               /* samples, -1 when the line does not say */
};

#include "connect_buckets.h"   /* the library's own connect-time buckets */
#include "finding_text.h"      /* each finding code's own explanation */
#include "syn_schedule.h"      /* when this kernel resends a SYN (as the shim says) */
#include "report_join.h"       /* causes: slow connects joined to their listener */

struct rp_proc {
	long pid;
	char *comm;
	double first_ts, last_ts;
	long events;
	json_t *init;           /* the last init event, or NULL */
	int trace;              /* its init line says level trace: every accept is logged */
	json_t *summary;        /* the last summary event, or NULL */
	json_t *finding_counts; /* code -> count seen in this process's events */
};

/* One listener_stats interval (running totals at ts). */
struct rp_point {
	double ts;
	long accepts, peak_waiting, queue_full, empty;
	double wait_p99, queue_p99;
	long overflows;         /* the namespace's ListenOverflows delta, -1 unknown */
};
#define RP_SERIES_MAX 240

/* Connect times per peer on a log scale, 10 buckets a decade (fine enough
 * that connects of 1, 2 and 3 s fall in different buckets): bucket 0 is
 * under 0.1 ms, bucket i (1..60) is [0.1 * 10^((i-1)/10), 0.1 * 10^(i/10))
 * ms, the last 100 s and more. */
#define RP_LOGB 62
#define RP_PEERS_MAX 24
#define RP_RETR_MAX 8            /* syn_retrans 0..6, 7 = 7 or more */
struct rp_peer {
	char *peer;
	long n, timed, ok, failed;   /* connect lines; timed: with connect_ms */
	long hist[RP_LOGB];
	long retr[RP_RETR_MAX];
	double secs;
};
int rp_logb(double ms);
double rp_logb_lo(int b);        /* lower edge in ms (0 for bucket 0) */

/* Every option value seen: (level, option, requested, effective). */
#define RP_OPTS_MAX 200
struct rp_opt {
	char *sol, *opt, *req, *eff; /* values as compact JSON */
	long count;
	int differs;
};

struct rp_listener {
	long pid;
	long fd;
	char *comm;
	char *local;
	/* from listen events */
	int have_listen;
	long backlog_requested, backlog_effective, somaxconn, queue_capacity;
	int have_backlog_req, have_backlog_eff, have_somaxconn;
	long listens;
	/* from setsockopt(TCP_DEFER_ACCEPT) and listen's defer_accept_s */
	int have_defer_req, have_defer_eff;
	double defer_req_s, defer_eff_s;
	/* accept events we saw, per empty-accept cause */
	long accepts_logged, empty_defer_expired, empty_syncookie, accept_queue_full;
	/* the latest listener_stats-shaped object (event or summary), or NULL */
	json_t *stats;
	double stats_ts;
	int stats_from_summary; /* stats is a summary's slim entry */
	/* the listener_stats lines over time, thinned to RP_SERIES_MAX */
	struct rp_point *series;
	size_t nseries;
	unsigned stride, skip;
	/* for the join: when and where it listened, an address it accepted on */
	double listen_ts;
	struct rp_loc listen_loc;
	int have_listen_loc;
	char *accept_local;     /* a wildcard listener's address as its accepts saw it */
	long overflow_lines;    /* listener_stats lines with listen_overflows */
	long last_overflows;    /* ListenOverflows at its previous listener_stats line */
	double last_stats_ts;
	double last_accept_ts;
};

struct rp_optdiff {
	char *comm;
	char *sol, *opt;
	json_t *requested, *effective;
	json_t *findings;       /* array or NULL */
	long count;
};

struct rp_connects {
	long logged, ok, failed, pending, abandoned, interrupted;
	json_t *by_errno;       /* errno name -> count */
	long hist[SA_CONN_NBUCKETS]; /* from logged connect events */
	long syn_retrans[5];    /* 0,1,2,3,4+ SYN retransmissions */
	double max_ms;
	/* merged from summaries */
	long sum_hist[SA_CONN_NBUCKETS];
	int have_sum_hist;
	long syn_retrans_total;
	int have_syn_retrans_total;
	long sum_outcome[4];    /* summaries' connects: ok, failed, abandoned, interrupted */
	int have_sum_outcome;
};

struct rp_finding {
	char *code;
	long count;             /* per process: max(summary, events), summed */
	char *msg;              /* one msg from an event carrying the code */
	int msg_single;         /* msg came from an event with only this code */
	const char *text;       /* the code's own explanation (finding_text.h) */
	/* from the logged events that carry the code */
	long logged;
	double first_ts, last_ts;
	double secs;            /* connect time (connect_ms) of those events, in s */
};

/* The top of the report: what to fix first, by seconds lost then count:
 * causes (report_join.c) and the findings no cause took in. */
#define RP_TOP_MAX 5
struct rp_item {
	int is_cause;
	size_t idx;             /* into join.causes or finds */
};

struct rp_state {
	long lines, events, skipped, too_long, not_object;
	struct rp_proc *procs; size_t nprocs, capprocs;
	struct rp_listener *lsts; size_t nlsts, caplsts;
	struct rp_optdiff *diffs; size_t ndiffs, capdiffs;
	long diffs_over;        /* differences beyond the distinct ones kept */
	struct rp_finding *finds; size_t nfinds, capfinds;
	size_t top[RP_TOP_MAX], ntop; /* indices into finds, ranked */
	struct rp_item items[RP_TOP_MAX]; size_t nitems; /* causes and findings, ranked */
	struct rp_join join;
	const char *const *files; int nfiles; /* the input names, for evidence */
	int cur_file;           /* -1: standard input */
	long cur_line;          /* the physical line being read */
	struct rp_peer *peers; size_t npeers, cappeers;
	struct rp_peer other_peers;   /* connects to peers beyond RP_PEERS_MAX */
	struct rp_opt *opts; size_t nopts, capopts;
	long opts_over;
	double schema_max;            /* the highest "schema" seen */
	struct rp_connects conn;
	json_t *counts;         /* event name -> count, over all input */
#define RP_NAMES_MAX 32
	char names[RP_NAMES_MAX][32]; /* count_event's shortcut into counts */
	json_t *name_vals[RP_NAMES_MAX];
	size_t nnames;
	char scratch[8192];     /* the fast path's copy of a line */
	json_t *msgs;           /* finding code -> msg */
	json_t *msg_single;     /* finding code -> true when msg is specific */
	json_t *warnings;       /* distinct msgs of the library's warning lines */
};

/* The fields of one line that every event feeds (process, counts,
 * findings) and that accept and connect lines feed: read by report_scan.c
 * without jansson, or copied from a jansson tree. Strings point into the
 * line's buffer or the tree; a have_* flag is 0 when the field is missing
 * or not a number. */
#define RP_EV_FINDINGS 16
struct rp_ev {
	const char *name, *comm, *msg, *err, *outcome, *peer, *local;
	double pid, ts, listen_fd, ret, connect_ms, syn_retrans, schema;
	double queue_ms, queue_len, queue_capacity;
	int have_pid, have_ts, have_listen_fd, have_ret, have_connect_ms, have_syn_retrans;
	int have_queue_ms, have_queue_len, have_queue_capacity;
	int have_schema;
	int have_findings;       /* "findings" is an array */
	size_t nfindings_all;    /* its elements, strings or not */
	size_t nfindings;        /* its strings, in findings[] */
	const char **findings;   /* fbuf, or an array the jansson path allocated */
	const char *fbuf[RP_EV_FINDINGS];
};

/* report_scan.c: 1 when LINE (modified in place) is one JSON object the
 * fast path can read, with its fields in *ev; 0 to parse it with jansson. */
int rp_scan(char *line, size_t len, struct rp_ev *ev);

void rp_state_init(struct rp_state *st);
void rp_state_free(struct rp_state *st);
/* Feeds one input line (without the newline). Never fails. */
void rp_feed_line(struct rp_state *st, const char *line, size_t len);
/* Folds per-process data (summaries) into the totals before printing. */
void rp_finish(struct rp_state *st);
void rp_print(const struct rp_state *st, FILE *out, int colour);
/* report_html.c: the same state as one self-contained HTML page. */
void rp_html(const struct rp_state *st, FILE *out);
/* report_json.c: the same state as one JSON document. */
void rp_json(const struct rp_state *st, FILE *out);

/* report_join.c: recording while reading, causes after the last line. */
void rp_join_connect(struct rp_state *st, const struct rp_ev *ev, long pid);
void rp_join_busy(struct rp_state *st, size_t lst, int kind, double t0, double t1, long n);
void rp_join_overflows(struct rp_state *st, struct rp_listener *l, const json_t *obj, double ts);
void rp_join_finish(struct rp_state *st);
void rp_join_free(struct rp_state *st);
const char *rp_loc_file(const struct rp_state *st, const struct rp_loc *loc);
/* The process of PID (NULL when none) and its identity from its init line. */
const struct rp_proc *rp_proc_find(const struct rp_state *st, long pid);
int rp_place(const struct rp_state *st, long pid, char *buf, size_t len);
/* "HH:MM:SS.mmm" (UTC) into buf[24]. */
const char *rp_clock(double ts, char buf[24]);
int rp_addr_wildcard(const char *addr);   /* 0.0.0.0:port or [::]:port */

/* Loops over a JSON array / object; NULL or the wrong type loops zero
 * times. Plain functions, so cppcheck (which does not see jansson.h in
 * `make lint`) can follow them, unlike json_*_foreach. */
#define RP_ARRAY_EACH(arr, i, v) \
	for ((i) = 0; ((v) = json_array_get((arr), (i))) != NULL; (i)++)
#define RP_OBJECT_EACH(obj, it, k, v) \
	for ((it) = json_object_iter((json_t *)(obj)); \
	     (it) && ((k) = json_object_iter_key(it)) != NULL && \
	     ((v) = json_object_iter_value(it)) != NULL; \
	     (it) = json_object_iter_next((json_t *)(obj), (it)))

/* report.c's helpers (exit on out of memory). */
void *rp_grow(void *arr, size_t *cap, size_t n, size_t size);
char *rp_xstrdup(const char *s);
void rp_obj_add(json_t *obj, const char *key, long n);
/* report_model.c */
struct rp_finding *rp_finding_get(struct rp_state *st, const char *code);
void rp_count_event(struct rp_state *st, const char *name);
void rp_model_connect(struct rp_state *st, const struct rp_ev *ev);
void rp_model_stats(struct rp_listener *l, const json_t *obj, double ts);
void rp_model_option(struct rp_state *st, const json_t *ev);
void rp_model_free(struct rp_state *st);
/* The kernel's SYN retransmission schedule from the init lines: t[k] is the
 * time in s at which the k-th retransmission (k = 1..n) is sent. Returns
 * how many it filled, 0 without an init line that says. */
int rp_syn_schedule(const struct rp_state *st, double *t, int n, long *linear);
#define RP_SCHEMA 1             /* the newest line format this report knows */

/* Typed field access that tolerates missing fields and wrong types. */
int rp_num(const json_t *o, const char *key, double *out);
int rp_long(const json_t *o, const char *key, long *out);
const char *rp_str(const json_t *o, const char *key);
int rp_pct_get(const json_t *o, const char *key, struct rp_pct *p);

#endif
