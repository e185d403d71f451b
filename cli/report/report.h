/*
 * report/report.h: `sockaudit report`: the logs as a report for people,
 * as HTML, or as one JSON document.
 *
 * feed.c reads each line into the state below (the fast path through
 * log_scan(), jansson otherwise); model.c folds and ranks it; join.c makes
 * the causes (a client's slow connects joined to the listener that made
 * them wait, across processes and hosts) with cause.c's words and
 * place.c's namespaces and hosts; print*.c, html*.c with svg.c, and json.c
 * write it. verb.c parses the options, then reads the files. Only log/ is
 * below this folder; nothing here calls another verb.
 */
#ifndef SA_CLI_REPORT_H
#define SA_CLI_REPORT_H

#include <stdio.h>
#include <jansson.h>

#include "log/log.h"

/* ---- causes: slow connects joined to their listener (join.c) ---- */

#define RP_CONNS_MAX 20000      /* connect lines kept for the join and the timeline */
#define RP_BUSY_MAX 4096        /* listener-side samples kept */
#define RP_ADDRS_MAX 512        /* distinct peer addresses kept */
#define RP_CAUSES_MAX 12
#define RP_EVID_MAX 10          /* evidence lines quoted per cause */
#define RP_CAUSE_PIDS 4         /* client pids named per cause */

/* Where a line is: the index of its file among the inputs, its line number. */
struct rp_loc {
	int file;
	long line;
};

struct rp_conn {
	double start, end, ms;  /* wall clock (s) and connect_ms */
	long pid;
	int retr;               /* SYN resends, -1 when the line does not say */
	int addr;               /* index into rp_join.addrs */
	unsigned char ok;       /* outcome ok */
	unsigned char slow;     /* slow_connect or syn_retransmitted or retr > 0 */
	unsigned char f_slow, f_synr; /* the line's slow_connect, syn_retransmitted */
	unsigned char counted;  /* one of its cause's connects (else only drawn) */
	int cause;              /* index into rp_join.causes, -1 */
	struct rp_loc loc;
};

/* One listener-side sign: no accept from t0 to t1 (an accepted
 * connection's queue_ms), the queue found full at t1, or ListenOverflows
 * rising between two listener_stats lines (t0, t1]. */
enum rp_busy_kind { RP_BUSY_NOACCEPT, RP_BUSY_FULL, RP_BUSY_OVERFLOW };
struct rp_busy {
	double t0, t1;
	int kind;
	long n;                 /* ListenOverflows rise; queue length seen; 1 on a trace gap */
	size_t lst;             /* index into st->lsts */
	int merged;             /* several samples widened into one (many of them) */
	struct rp_loc loc;
};

/* One cause: the slow connects of one client namespace to one address,
 * or (unaccepted) the connects its clients completed there that the
 * listener never accepted (unaccepted.c). */
struct rp_cause {
	int joined;             /* a listener among the logs explains them */
	int unaccepted;         /* n: connects completed, never accepted */
	long ok, accepts;       /* unaccepted: the clients' completed connects, the listeners' accepts */
	int addr;               /* rp_join.addrs */
	long lst;               /* st->lsts index of the listener named, -1 */
#define RP_CAUSE_LSTS 16
	long lsts[RP_CAUSE_LSTS]; /* every listener at that address in that place */
	int nlsts;
	int place;              /* the clients' namespace and host, -1 unknown */
	long lst_elsewhere;     /* listeners at that address in another namespace or host */
	int lst_no_identity;    /* a listener at that address, but a side has no identity */
	long n, resent, retr_min, retr_max, npids;
	long pids[RP_CAUSE_PIDS];
	char *comm;             /* the clients' program */
	double secs, t0, t1;    /* connect time in all; first start, last end */
	/* the listener side, when joined */
	int have_full, have_gap, have_overflow;
	int gap_exact;          /* the gap is between two accepts (trace), not one's queue wait */
	double full_t0, full_t1, gap_s, gap_t0, gap_t1, ov_t0, ov_t1;
	long overflows, backlog, room, need;
	long need_own;          /* the listener's own lines' figure (backlog_needed), -1 none */
	long at_once;           /* most of its connects with resends waiting at one moment */
	struct rp_loc evid[RP_EVID_MAX];
	char *evid_what[RP_EVID_MAX];
	int nevid;
	char *sentence;         /* the whole cause, for people */
	char *decide;           /* unjoined: what would decide it */
};

struct rp_join {
	struct rp_conn *conns; size_t nconns, capconns;
	long conns_over;        /* connect lines not kept (beyond RP_CONNS_MAX) */
	struct rp_busy *busy; size_t nbusy, capbusy;
	long busy_over;
	char *addrs[RP_ADDRS_MAX]; int naddrs, last_addr;
	struct rp_cause causes[RP_CAUSES_MAX]; int ncauses;
	long causes_over;       /* groups beyond RP_CAUSES_MAX, not explained */
};

/* cause.c: a cause's figures and words, and the ranking (the
 * functions take struct rp_state, declared below). */

/* verb.c: `sockaudit report [FILE...]`; returns the exit status. */
int cli_report(int argc, char **argv);


#include "connect_buckets.h"   /* the library's own connect-time buckets */
#include "connect_outcomes.h" /* the words of a connect's outcome, as the shim writes them */
#include "finding_text.h"      /* each finding code's own explanation */
#include "syn_schedule.h"      /* when this kernel resends a SYN (as the shim says) */

struct rp_proc {
	long pid;
	char *comm;
	double first_ts, last_ts;
	long events;
	json_t *init;           /* the last init event, or NULL */
	int trace;              /* its init line says level trace: every accept is logged */
	json_t *summary;        /* the last summary event, or NULL */
	json_t *totals;         /* the last totals event (the figures while it ran), or NULL */
	double totals_ts;
	struct rp_loc fig_loc;  /* the line rp_figures() is */
	json_t *finding_counts; /* code -> count seen in this process's events */
};

/* A process's figures: its summary, else its last totals line. */
static inline const json_t *rp_figures(const struct rp_proc *p)
{
	return p->summary ? p->summary : p->totals;
}

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
 * causes (join.c) and the findings no cause took in. */
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
	struct log_inner inner; /* a journal export line's own line */
	json_t *msgs;           /* finding code -> msg */
	json_t *msg_single;     /* finding code -> true when msg is specific */
	json_t *warnings;       /* distinct msgs of the library's warning lines */
};



void rp_state_init(struct rp_state *st);
void rp_state_free(struct rp_state *st);
/* verb.c: every line of F, fed one by one (lines over 1 MiB counted and skipped). */
void rp_read_stream(struct rp_state *st, FILE *f);
/* Feeds one input line (without the newline). Never fails. */
void rp_feed_line(struct rp_state *st, const char *line, size_t len);
/* Folds per-process data (summaries) into the totals before printing. */
void rp_finish(struct rp_state *st);
void rp_print(const struct rp_state *st, FILE *out, int colour);
/* html.c: the same state as one self-contained HTML page. */
void rp_html(const struct rp_state *st, FILE *out);
/* json.c: the same state as one JSON document. */
void rp_json(const struct rp_state *st, FILE *out);

/* join.c: recording while reading, causes after the last line. */
void rp_join_connect(struct rp_state *st, const struct log_ev *ev, long pid);
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


/* model.c */
struct rp_finding *rp_finding_get(struct rp_state *st, const char *code);
void rp_count_event(struct rp_state *st, const char *name);
void rp_model_connect(struct rp_state *st, const struct log_ev *ev);
void rp_model_stats(struct rp_listener *l, const json_t *obj, double ts);
void rp_model_option(struct rp_state *st, const json_t *ev);
void rp_model_free(struct rp_state *st);
/* syn.c: the kernel's SYN retransmission schedule from the init lines: t[k] is the
 * time in s at which the k-th retransmission (k = 1..n) is sent. Returns
 * how many it filled, 0 without an init line that says. */
int rp_syn_schedule(const struct rp_state *st, double *t, int n, long *linear);
#define RP_SCHEMA 1             /* the newest line format this report knows */

/* join.c's helpers: the words of a cause (cause.c), places (place.c). */
struct rp_conn;
char *rp_xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));   /* exits when out of memory */
/* An evidence line for cz (one per log line: a later word replaces). */
void rp_evid_add(struct rp_cause *cz, const struct rp_loc *loc, char *what);
void rp_cause_add_conn(struct rp_cause *cz, const struct rp_conn *c);
void rp_cause_conn_evidence(const struct rp_state *st, struct rp_cause *cz, int ci, int max);
void rp_cause_listener_side(struct rp_state *st, struct rp_cause *cz, const unsigned char *used,
			    double first_drop);
void rp_cause_sentence_joined(const struct rp_state *st, struct rp_cause *cz);
void rp_cause_sentence_unjoined(const struct rp_state *st, struct rp_cause *cz);
void rp_rank_items(struct rp_state *st);
/* unaccepted.c: a cause for each address where the clients' completed
 * connects outnumber what its listeners accepted (both sides logged). */
struct rp_places;
void rp_join_unaccepted(struct rp_state *st, const struct rp_places *pl);
/* A cause's kind and title, as every output names it. */
const char *rp_cause_kind(const struct rp_cause *cz);    /* "unaccepted", "joined", "listener_not_joined" */
const char *rp_cause_title(const struct rp_cause *cz);

/* place.c: each process's place (netns, nodename, boot_id), and
 * whether a connect to PEER reached listener L (SAME: one place). */
struct rp_places {
	int *of_proc;           /* per st->procs index: place id, -1 unknown */
	char **key;             /* per place */
	int n;
};
struct rp_listener;
void rp_places_make(const struct rp_state *st, struct rp_places *pl);
int rp_place_of(const struct rp_state *st, const struct rp_places *pl, long pid);
void rp_places_free(struct rp_places *pl);
int rp_addr_reaches(const char *peer, const struct rp_listener *l, int same);

/* ---- html.c, html_causes.c, svg.c ---- */
void h_esc(FILE *out, const char *s);   /* text and attribute values */
void h_num(FILE *out, double v);
void h_listeners(const struct rp_state *st, FILE *out);
void h_connects(const struct rp_state *st, FILE *out);
void h_causes(const struct rp_state *st, FILE *out);   /* html_causes.c */

/* ---- print.c, print_findings.c, print_listener.c, text_util.c ---- */
/* Rows printed per table before "... N more". */
#define MAX_ROWS 60

struct tp_style {
	const char *bold, *red, *yellow, *green, *dim, *off;
};
extern struct tp_style tp_S;

int tp_safe(FILE *out, const char *s, int max);
void tp_cell(FILE *out, const char *s, int width);
void tp_heading(FILE *out, const char *title);
void tp_num(FILE *out, double v);
void tp_pct(FILE *out, const char *label, const struct log_pct *p, const char *unit);
void tp_time(FILE *out, double ts);
void tp_json_cell(FILE *out, const json_t *v, int width);
void tp_counts(FILE *out, const json_t *obj, int skip_zero);
int tp_all_zero(const json_t *obj);
void tp_first_sentence(FILE *out, const char *s);
void tp_listeners(const struct rp_state *st, FILE *out);  /* print_listener.c */
void tp_top(const struct rp_state *st, FILE *out);        /* print_findings.c */
void tp_findings(const struct rp_state *st, FILE *out);

#endif
