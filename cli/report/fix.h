/*
 * report/fix.h: the fix of one "Fix first" item in the program's own
 * words (fix.c): the listener it is about, the line to write in its
 * configuration (cli/conf/ reads it) or the sysctl to run, in the right
 * network namespace, and how to keep it. Each output form prints it with
 * one call: rp_fix_text, rp_fix_html, rp_fix_json.
 */
#ifndef SA_CLI_REPORT_FIX_H
#define SA_CLI_REPORT_FIX_H

#include <stdio.h>
#include <jansson.h>

#include "conf/conf.h"

struct rp_state;
struct rp_listener;

#define RP_FIX_LINES 5
struct rp_fix {
	const struct rp_listener *l;
	long pid;
	long requested, effective, somaxconn, want;   /* -1 unknown */
	char *config;           /* the configuration line to write and where, or NULL */
	char *sysctl;           /* the sysctl -w line, in the listener's namespace, or NULL */
	char *keep;             /* how to keep it after a reboot, or NULL */
	char *why;              /* where the value came from, in a few words */
	char *set_in;           /* where the program's own setting goes (with N), when the fix is the sysctl */
	char *lines[RP_FIX_LINES]; /* the action first, then the rest: as printed */
	int nlines, nact;       /* lines[0..nact-1] are the action */
	struct cf_answer conf;
};

/* The fix of st->items[item]; 0 when the item has none (not about a backlog). */
int rp_fix_make(const struct rp_state *st, size_t item, struct rp_fix *fx);
void rp_fix_free(struct rp_fix *fx);
/* Each prints nothing (or returns json null) when the item has no fix. */
void rp_fix_text(const struct rp_state *st, size_t item, FILE *out, const char *indent);
void rp_fix_html(const struct rp_state *st, size_t item, FILE *out);
json_t *rp_fix_json(const struct rp_state *st, size_t item);

#endif
