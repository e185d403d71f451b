/*
 * report_text.h: what the text report's files share (report_print.c and
 * report_print_listener.c): the colour style and the printing helpers.
 * Every string from a log goes through tp_safe (control characters escaped).
 */
#ifndef SA_REPORT_TEXT_H
#define SA_REPORT_TEXT_H

#include <stdio.h>
#include "cli.h"

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
void tp_pct(FILE *out, const char *label, const struct rp_pct *p, const char *unit);
void tp_time(FILE *out, double ts);
void tp_json_cell(FILE *out, const json_t *v, int width);
void tp_counts(FILE *out, const json_t *obj, int skip_zero);
int tp_all_zero(const json_t *obj);
void tp_first_sentence(FILE *out, const char *s);
void tp_listeners(const struct rp_state *st, FILE *out);  /* report_print_listener.c */
void tp_top(const struct rp_state *st, FILE *out);        /* report_print_findings.c */
void tp_findings(const struct rp_state *st, FILE *out);

#endif
