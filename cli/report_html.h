/*
 * report_html.h: what the HTML page's files share (report_html.c writes the
 * page and its tables, report_svg.c the listener and connect charts).
 */
#ifndef SA_REPORT_HTML_H
#define SA_REPORT_HTML_H

#include <stdio.h>
#include "cli.h"

void h_esc(FILE *out, const char *s);   /* text and attribute values */
void h_num(FILE *out, double v);
void h_listeners(const struct rp_state *st, FILE *out);
void h_connects(const struct rp_state *st, FILE *out);
void h_causes(const struct rp_state *st, FILE *out);   /* report_html_causes.c */

#endif
