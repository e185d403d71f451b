/*
 * log/args.c: the one argument style every verb parses with: getopt_long
 * in order ("-" or "+" first in the option string, so the element an
 * option came from is argv[optind] as it was before the call), and this
 * check that the element spells the option whole.
 *
 * getopt_long alone would take "--js" for --json, "-hx" for -h, and
 * "--interval=2" where a verb wants "--interval 2"; each of those is an
 * unknown option, said with the element as it was typed.
 */
#include <string.h>

#include "log/log.h"

int log_arg_whole(const char *elem, char letter, const char *name, enum log_arg_eq eq)
{
	size_t n = name ? strlen(name) : 0;

	if (letter && elem[0] == '-' && elem[1] == letter && !elem[2])
		return 1;
	if (!name || strncmp(elem, "--", 2) != 0 || strncmp(elem + 2, name, n) != 0)
		return 0;
	if (elem[2 + n] == '\0')
		return eq != LOG_ARG_EQ_ONLY;
	return elem[2 + n] == '=' && eq != LOG_ARG_SPLIT_ONLY;
}
