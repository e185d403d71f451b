/*
 * report/html_util.c: how the HTML page writes text and numbers: every
 * string from a log escaped for HTML, numbers in a short fixed form.
 * Shared by html.c and svg.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

void h_esc(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	for (; *p; p++) {
		switch (*p) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(out, "\\x%02x", *p);
			else
				fputc(*p, out);
		}
	}
}

/* The text report's numbers (tp_num), "?" where there is none. */
void h_num(FILE *out, double v)
{
	if (!isfinite(v))
		fputs("?", out);
	else
		tp_num(out, v);
}
