/*
 * log/alive.c: whether a process a log speaks of still runs. Only on the
 * machine and boot its init line names (nodename, boot_id): there, its pid
 * is gone, or is now another process that started after the log's first
 * line of it. A log from another machine cannot say.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "log/log.h"

static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* When a pid started (epoch seconds), from /proc/PID/stat and btime. */
static double started(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks = 0, btime = 0;
	FILE *f;
	unsigned long hz;
	int i;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if (read_line(path, buf, sizeof buf) != 0 || !(p = strrchr(buf, ')')))
		return -1;
	for (i = 0; i < 20 && p; i++)   /* field 22, starttime: 20 fields after the name's ')' */
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &ticks) != 1)
		return -1;
	if (!(f = fopen("/proc/stat", "re")))
		return -1;
	while (fgets(buf, sizeof buf, f))
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	/* AT_CLKTCK, not sysconf (whose symbol asks Debian for glibc 2.34). */
	hz = getauxval(AT_CLKTCK);
	return btime ? (double)btime + (double)ticks / (double)(hz ? hz : 100) : -1;
}

enum log_alive log_alive(long pid, const char *nodename, const char *boot_id, double first_ts)
{
	static char node[128], boot[64];
	static int have = -1;
	double t;

	if (have < 0) {
		struct utsname u;

		have = uname(&u) == 0 && read_line("/proc/sys/kernel/random/boot_id", boot, sizeof boot) == 0;
		if (have)
			snprintf(node, sizeof node, "%s", u.nodename);
	}
	if (!have || !nodename || !boot_id || pid <= 0 || strcmp(nodename, node) != 0)
		return LOG_ALIVE_UNKNOWN;
	if (strcmp(boot_id, boot) != 0)
		return LOG_ALIVE_GONE;   /* this machine, an earlier boot */
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return LOG_ALIVE_GONE;
	/* The pid taken again by a later process (2 s: clock ticks, and the
	 * first line a moment after the start). */
	if (first_ts > 0 && (t = started(pid)) > 0 && t > first_ts + 2)
		return LOG_ALIVE_GONE;
	return LOG_ALIVE_YES;
}
