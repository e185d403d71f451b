/*
 * main.c: the `sockaudit` command picks its subcommand.
 *
 *   sockaudit report [FILE...]        turn JSON lines into a report
 *   sockaudit metrics [LOG...]        the same lines as Prometheus metrics
 *   sockaudit [options] [--] CMD ...  run CMD under libsockaudit
 *
 * A program that happens to be called "report" or "metrics" runs as
 * `sockaudit -- report`.
 */
#include <string.h>

#include "cli.h"
#include "metrics.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "report") == 0)
		return cli_report(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "metrics") == 0)
		return cli_metrics(argc - 1, argv + 1);
	return cli_launch(argc, argv);
}
