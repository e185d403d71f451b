/*
 * report_join.h: the report's causes: a client's slow connects joined to
 * the listener that made them wait, across processes and hosts.
 *
 * report.c records each connect line (when it started, how long it took,
 * its SYN resends) and each listener-side sign of trouble (an accept that
 * found the queue full, a connection that sat unaccepted, a ListenOverflows
 * rise); report_join.c groups the slow connects by the address they went
 * to and by the client's network namespace and host, finds the listener at
 * that address in the same namespace and host (or, across hosts and
 * namespaces, at exactly that non-loopback address), matches the two in
 * time and writes one cause per group. Text, HTML and JSON print the
 * causes as they are: the sentences are made here, once.
 */
#ifndef SA_REPORT_JOIN_H
#define SA_REPORT_JOIN_H

#include <stddef.h>

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

/* One cause: the slow connects of one client namespace to one address. */
struct rp_cause {
	int joined;             /* a listener among the logs explains them */
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

/* report_cause.c: a cause's figures and words, and the ranking (the
 * functions take struct rp_state, declared in cli.h). */
struct rp_state;
struct rp_conn;
void rp_cause_add_conn(struct rp_cause *cz, const struct rp_conn *c);
void rp_cause_conn_evidence(const struct rp_state *st, struct rp_cause *cz, int ci, int max);
void rp_cause_listener_side(struct rp_state *st, struct rp_cause *cz, const unsigned char *used,
			    double first_drop);
void rp_cause_sentence_joined(const struct rp_state *st, struct rp_cause *cz);
void rp_cause_sentence_unjoined(const struct rp_state *st, struct rp_cause *cz);
void rp_rank_items(struct rp_state *st);

/* report_place.c: each process's place (netns, nodename, boot_id), and
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

#endif
