/*
 * diff/diff.h: `sockaudit diff [--json] BEFORE AFTER`: what changed between
 * two audits, per listener, per peer and per finding code.
 *
 * verb.c parses the options and reads each side (a log, a folder of *.jsonl
 * or standard input) into its own report model (cli/report): there is no
 * scanner here. compare.c turns the two models into rows, each with its
 * verdict (judge.c decides from the two figures alone); print.c writes them
 * as text or as one JSON document. This folder stands on report/ and log/
 * and nothing stands on it but main.c.
 */
#ifndef SA_CLI_DIFF_H
#define SA_CLI_DIFF_H

#include <stdio.h>

#include "report/report.h"

/* verb.c: the verb; returns the exit status (0 whatever changed). */
int cli_diff(int argc, char **argv);

/* ---- judge.c: one figure before and after ---------------------------- */

enum df_verdict { DF_SAME, DF_BETTER, DF_FIXED, DF_WORSE, DF_NEW, DF_GONE };

/* How a figure is read: a count of bad things (fewer is better, none is
 * fixed), a time (shorter is better, near is the same), a room (more is
 * better: the backlog). */
enum df_kind { DF_COUNT, DF_TIME, DF_ROOM };

struct df_val {
	int have;
	double v;
	long n;                 /* DF_TIME: the samples it stands on, -1 unknown */
};

enum df_verdict df_judge(enum df_kind kind, const struct df_val *before, const struct df_val *after);
const char *df_verdict_name(enum df_verdict v);

/* ---- compare.c: the rows --------------------------------------------- */

#define DF_ROWS 8
struct df_row {
	const char *key;        /* the JSON name: "backlog_effective" */
	const char *label;      /* the text's: "backlog (effective)" */
	enum df_kind kind;
	struct df_val a, b;     /* before, after */
	enum df_verdict verdict;
};

/* A listener (comm and local address) or a peer (the address connected to,
 * comm NULL), on one side or both. */
struct df_item {
	char *comm, *addr;
	int on_a, on_b;
	long procs_a, procs_b;  /* listener: processes; peer: connect lines */
	struct df_row rows[DF_ROWS];
	int nrows;
};

struct df_find {
	const char *code;       /* points into a side's model */
	long a, b;
	enum df_verdict verdict;
};

struct df_side {
	const char *name;       /* as given: a file, a folder, "-" */
	int files;              /* logs read */
	struct rp_state st;
};

struct df_diff {
	struct df_side *a, *b;
	struct df_item *lsts; size_t nlsts, caplsts;
	struct df_item *peers; size_t npeers, cappeers;
	struct df_find *finds; size_t nfinds, capfinds;
	long conns_over;        /* connect lines either model did not keep */
};

void df_compare(struct df_diff *d, struct df_side *a, struct df_side *b);
void df_free(struct df_diff *d);

/* ---- print.c ------------------------------------------------------------ */

void df_print(const struct df_diff *d, FILE *out);
void df_json(const struct df_diff *d, FILE *out);

#endif
