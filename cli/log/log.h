/*
 * log/log.h: the log-reading floor every verb stands on.
 *
 * One line scanner (scan.c) reads the plain JSON the library writes without
 * building a jansson tree, and declines anything it is not sure of, so the
 * caller parses that line with jansson instead and both paths give the same
 * fields. The typed getters (get.c) read a jansson tree the same tolerant
 * way, journal.c finds our line inside a journal export, args.c holds
 * the verbs' one check of an option as typed, and util.c holds the
 * allocation helpers that exit on out of memory (a report of a
 * huge log is not worth half an answer).
 *
 * This floor knows no verb: it never includes a verb's header, and nothing
 * here prints except the out-of-memory message.
 */
#ifndef SA_CLI_LOG_H
#define SA_CLI_LOG_H

#include <stddef.h>
#include <jansson.h>

/* Latency percentiles as the shim writes them: {p50,p95,p99,max}. */
struct log_pct {
	int have;
	double p50, p95, p99, max;
	double n;               /* samples, -1 when the line does not say */
};

/* The fields of one line that every event feeds (process, counts,
 * findings) and that accept and connect lines feed: read by log_scan()
 * without jansson, or copied from a jansson tree. Strings point into the
 * line's buffer or the tree; a have_* flag is 0 when the field is missing
 * or not a number. */
#define LOG_EV_FINDINGS 16
struct log_ev {
	const char *name, *comm, *msg, *err, *outcome, *peer, *local;
	double pid, ts, listen_fd, ret, connect_ms, syn_retrans, schema;
	double queue_ms, queue_len, queue_capacity;
	int have_pid, have_ts, have_listen_fd, have_ret, have_connect_ms, have_syn_retrans;
	int have_queue_ms, have_queue_len, have_queue_capacity;
	int have_schema;
	int after_interrupt;     /* "after_interrupt": true (a connect that went on after EINTR) */
	int have_findings;       /* "findings" is an array */
	size_t nfindings_all;    /* its elements, strings or not */
	size_t nfindings;        /* its strings, in findings[] */
	const char **findings;   /* fbuf, or an array the jansson path allocated */
	const char *fbuf[LOG_EV_FINDINGS];
};

/* scan.c: 1 when LINE (modified in place: strings end with NUL) is one
 * JSON object in the plain subset the library writes, with its fields in
 * *ev; 0 to parse it with jansson. */
int log_scan(char *line, size_t len, struct log_ev *ev);

/* get.c: typed field access that tolerates missing fields and wrong types;
 * log_ev_from_tree() fills a log_ev from a jansson tree with the fields
 * log_scan() reads (log_ev_free() after), and log_ev_long() takes one of
 * its numbers as a long when it is there and fits. */
int log_num(const json_t *o, const char *key, double *out);
int log_long(const json_t *o, const char *key, long *out);
const char *log_str(const json_t *o, const char *key);
int log_pct_get(const json_t *o, const char *key, struct log_pct *p);
void log_ev_from_tree(const json_t *o, struct log_ev *ev);
void log_ev_free(struct log_ev *ev);
int log_ev_long(int have, double d, long *out);

/* alive.c: whether the process of a log still runs, judged only on the
 * machine and boot its init line names (else UNKNOWN). */
enum log_alive { LOG_ALIVE_UNKNOWN, LOG_ALIVE_YES, LOG_ALIVE_GONE };
enum log_alive log_alive(long pid, const char *nodename, const char *boot_id, double first_ts);

/* journal.c: when LINE is one object of journald's JSON export (`journalctl
 * -o json`) with our line in SOCKAUDIT_JSON (or MESSAGE), points *line and
 * *len at that inner line, kept in IN until the next call, and returns 1
 * (an empty line for another program's entry); else 0 and leaves them. */
struct log_inner {
	char *buf;
	size_t cap;
};
int log_journal_inner(struct log_inner *in, const char **line, size_t *len);
void log_inner_free(struct log_inner *in);

/* args.c: 1 when ELEM, the argument getopt_long read an option from,
 * spells it whole: "-LETTER" (LETTER not 0), "--NAME", or "--NAME=VALUE";
 * EQ says which of the last two a value may take. */
enum log_arg_eq { LOG_ARG_EITHER, LOG_ARG_SPLIT_ONLY, LOG_ARG_EQ_ONLY };
int log_arg_whole(const char *elem, char letter, const char *name, enum log_arg_eq eq);

/* util.c: growable arrays, strings and counts (exit on out of memory). */
void *log_grow(void *arr, size_t *cap, size_t n, size_t size);
char *log_strdup(const char *s);
void log_obj_add(json_t *obj, const char *key, long n);

/* Loops over a JSON array / object; NULL or the wrong type loops zero
 * times. Plain functions, so cppcheck (which does not see jansson.h in
 * `make lint`) can follow them, unlike json_*_foreach. */
#define LOG_ARRAY_EACH(arr, i, v) \
	for ((i) = 0; ((v) = json_array_get((arr), (i))) != NULL; (i)++)
#define LOG_OBJECT_EACH(obj, it, k, v) \
	for ((it) = json_object_iter((json_t *)(obj)); \
	     (it) && ((k) = json_object_iter_key(it)) != NULL && \
	     ((v) = json_object_iter_value(it)) != NULL; \
	     (it) = json_object_iter_next((json_t *)(obj), (it)))

#endif
