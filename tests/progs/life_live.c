/*
 * life_live.c: what the library's live thread must never change in its
 * host. Each mode prints what a test checks, the same whether the program
 * runs plainly or under the library (only "threads" differs, and says so).
 * Each listens and connects once to itself first (the connect starts the
 * library's live thread; a listen alone does not).
 *   threads S       sleep S s: the threads of this process and
 *                   their names ("threads N names a,b")
 *   unshare S       sleep S s, then unshare(CLONE_NEWNS) and
 *                   unshare(CLONE_FS) and setns() back (all need a single
 *                   thread): their results, then a listen again
 *   setuid S        sleep S s, then setgid/setuid(65534) (libc
 *                   signals every thread to change its ids): the results,
 *                   within an alarm of 5 s
 *   forkchild S     listen and connect, fork: the child connects and
 *                   prints its threads at once; the parent sleeps S s
 *   idle N S        N connects to a listener of its own, then S s idle
 */

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "life_common.h"

static void threads(const char *who)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char names[256] = "", path[300], comm[32];
	int n = 0;

	while (d && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		n++;
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		if ((f = fopen(path, "r")) && fgets(comm, sizeof comm, f)) {
			comm[strcspn(comm, "\n")] = '\0';
			if (strlen(names) + strlen(comm) + 2 < sizeof names)
				strcat(strcat(names, names[0] ? "," : ""), comm);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	printf("%sthreads %d names %s\n", who, n, names);
	fflush(stdout);
}

static void one_connect(int port)
{
	struct sockaddr_in a = life_addr(port);
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (connect(c, (struct sockaddr *)&a, sizeof a) != 0)
		perror("connect");
	close(c);
}

static void on_alarm(int sig)
{
	(void)sig;
	write(1, "hung\n", 5);
	_exit(3);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "threads";
	double secs = argc > 2 ? atof(argv[2]) : 1.5;
	int port, l = life_listener(16, &port), r1, r2, r3, e1, e2, e3, ns;

	if (l < 0)
		return 2;
	if (strcmp(mode, "forkchild") && strcmp(mode, "idle"))
		one_connect(port);
	if (!strcmp(mode, "threads")) {
		usleep((useconds_t)(secs * 1e6));
		threads("");
	} else if (!strcmp(mode, "unshare")) {
		usleep((useconds_t)(secs * 1e6));
		ns = open("/proc/self/ns/mnt", O_RDONLY);
		errno = 0;
		r1 = unshare(CLONE_NEWNS);
		e1 = errno;
		r2 = unshare(CLONE_FS);
		e2 = errno;
		r3 = setns(ns, CLONE_NEWNS);
		e3 = errno;
		printf("unshare_newns %d %s\nunshare_fs %d %s\nsetns_mnt %d %s\n", r1, r1 ? strerror(e1) : "ok",
		       r2, r2 ? strerror(e2) : "ok", r3, r3 ? strerror(e3) : "ok");
		printf("listen_after %d\n", listen(l, 32));
	} else if (!strcmp(mode, "setuid")) {
		usleep((useconds_t)(secs * 1e6));
		signal(SIGALRM, on_alarm);
		alarm(5);
		r1 = setgid(65534);
		r2 = setuid(65534);
		alarm(0);
		printf("setgid %d setuid %d uid %d\n", r1, r2, (int)getuid());
	} else if (!strcmp(mode, "forkchild")) {
		pid_t pid;
		int st;

		one_connect(port);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			one_connect(port);
			threads("child ");
			_exit(0);
		}
		waitpid(pid, &st, 0);
		usleep((useconds_t)(secs * 1e6));
		threads("parent ");
	} else if (!strcmp(mode, "idle")) {
		int i, n = (int)secs;

		for (i = 0; i < n; i++)
			one_connect(port);
		usleep((useconds_t)((argc > 3 ? atof(argv[3]) : 3) * 1e6));
		printf("connects %d\n", n);
	}
	close(l);
	return 0;
}
