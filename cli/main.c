/*
 * main.c: the `sockaudit` command picks its subcommand.
 *
 *   sockaudit report [FILE...]        turn JSON lines into a report
 *   sockaudit metrics [LOG...]        the same lines as Prometheus metrics
 *   sockaudit explain QUERY...        what this kernel does with a value
 *   sockaudit top LOG...              a live view of logs being written
 *   sockaudit diff BEFORE AFTER       what changed between two audits
 *   sockaudit attach [options] PID... audit a program already running
 *   sockaudit detach PID...           and let it go
 *   sockaudit [options] [--] CMD ...  run CMD under libsockaudit
 *
 * A program that happens to be called "report" (or "metrics", "explain", "top", "diff", "attach",
 * "detach") runs as
 * `sockaudit -- report`.
 */
#include <string.h>

#include "diff/diff.h"
#include "explain/explain.h"
#include "launch/launch.h"
#include "metrics/metrics.h"
#include "report/report.h"
#include "top/top.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "report") == 0)
		return cli_report(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "metrics") == 0)
		return cli_metrics(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "explain") == 0)
		return cli_explain(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "top") == 0)
		return cli_top(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "diff") == 0)
		return cli_diff(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "attach") == 0)
		return cli_attach(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "detach") == 0)
		return cli_detach(argc - 1, argv + 1);
	return cli_launch(argc, argv);
}
