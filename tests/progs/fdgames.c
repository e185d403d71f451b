/*
 * fdgames.c: a host that plays rough with its file descriptors.
 *
 * Each mode makes some socket calls, does something drastic to the fd table
 * (close everything, dup2 /dev/null over everything, close_range, exec,
 * fork, fork while other threads are inside socket calls), then makes more
 * socket calls. Listen backlogs are markers (71, 72, ...) so a test can find
 * in the shim's log which calls were logged, and by which pid. stdout holds
 * only deterministic results (compared with and without the shim); stderr
 * gets "# " lines with pids and fd numbers for the test to read.
 *
 * Usage: fdgames closeall|dup2null|closerange|closefrom|exec|fork|forkthreads|spawn|badcalls|rawclose DECOY
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/close_range.h>

extern char **environ;

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "?";
}

/* A listener with backlog `marker`, one connection through it, closed. */
static int round_trip(int marker)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t l = sizeof(sa);
	int ls, c, a, one = 1, ok = 0;
	char b[4];

	ls = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls >= 0 && bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    listen(ls, marker) == 0 && getsockname(ls, (struct sockaddr *)&sa, &l) == 0) {
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			a = accept(ls, NULL, NULL);
			if (a >= 0 && write(c, "abc", 3) == 3 && read(a, b, 3) == 3)
				ok = 1;
			close(a);
		}
		close(c);
	}
	close(ls);
	printf("round trip %d: %s\n", marker, ok ? "ok" : ename(errno));
	fflush(stdout);
	return ok;
}

static int highest_open_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int hi = 2, fd, dfd = d ? dirfd(d) : -1;

	while (d && (e = readdir(d))) {
		fd = atoi(e->d_name);
		if (fd > hi && fd != dfd)
			hi = fd;
	}
	if (d)
		closedir(d);
	return hi;
}

/* Reports (on stderr) the fds >= 3 that are open: under the shim, its own. */
static void show_fds(const char *when)
{
	int fd, hi = highest_open_fd();

	fprintf(stderr, "# fds open %s:", when);
	for (fd = 3; fd <= hi; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			fprintf(stderr, " %d%s", fd, (fcntl(fd, F_GETFD) & FD_CLOEXEC) ? "(cloexec)" : "");
	fprintf(stderr, "\n");
}

static int span_end(void)
{
	int hi = highest_open_fd();

	return hi > 1024 ? hi : 1024;
}

static int mode_closeall(void)
{
	int fd, hi, bad = 0;

	round_trip(71);
	show_fds("before closing all");
	hi = span_end();
	for (fd = 3; fd <= hi; fd++) {
		/* A successful close leaves errno alone, also when it closes
		 * the shim's own log fd (which then moves). */
		errno = 4242;
		if (close(fd) == 0) {
			if (errno != 4242)
				bad++;
			continue;
		}
		if (errno != EBADF)
			bad++;
	}
	printf("close 3..max: unexpected errors %d\n", bad);
	round_trip(72);
	show_fds("after");
	return 0;
}

static int mode_dup2null(void)
{
	int fd, hi, n, bad = 0;

	round_trip(73);
	show_fds("before dup2");
	hi = span_end();
	n = open("/dev/null", O_RDWR);
	for (fd = 3; fd <= hi; fd++)
		if (fd != n && dup2(n, fd) != fd)
			bad++;
	printf("dup2 /dev/null over 3..max: failures %d\n", bad);
	round_trip(74);
	/* Give the numbers back, then once more. */
	for (fd = 3; fd <= hi; fd++)
		close(fd);
	round_trip(75);
	show_fds("after");
	return 0;
}

static int mode_closerange(void)
{
	int r;

	round_trip(76);
	show_fds("before close_range");
	r = close_range(3, ~0U, 0);
	printf("close_range(3, ~0U, 0) = %d\n", r);
	round_trip(77);
	r = close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	printf("close_range(3, ~0U, CLOEXEC) = %d\n", r);
	round_trip(78);
	show_fds("after");
	return 0;
}

/* closefrom(3) while an accepted socket waits for its first byte; a file
 * then gets that socket's number and is written to. The shim must know the
 * socket is gone: nobody "spoke first" on it, and the file is not it. */
static int mode_closefrom(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t l = sizeof(sa);
	int ls, c, a, f = -1;

	round_trip(81);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 4) != 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &l) != 0)
		return 2;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return 3;
	a = accept(ls, NULL, NULL);   /* nothing sent yet: the shim waits to see who speaks */
	if (a < 0)
		return 4;
	closefrom(3);
	/* Files take the lowest free numbers: open until one lands on a's. */
	while (f < a) {
		f = open("/dev/null", O_WRONLY);
		if (f < 0)
			return 5;
	}
	printf("file on the accepted socket's number: %s\n", f == a ? "yes" : "no");
	printf("write = %zd\n", write(f, "x", 1));
	round_trip(82);
	show_fds("after");
	return 0;
}

static int mode_exec(char **argv, int second)
{
	int fd, hi, leaked = 0;

	if (second) {
		round_trip(80);
		show_fds("in the new image");
		return 0;
	}
	round_trip(79);
	hi = highest_open_fd();
	for (fd = 3; fd <= hi; fd++) {
		int fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && !(fl & FD_CLOEXEC))
			leaked++;
	}
	/* The test closes inherited fds; whatever survives exec here is ours. */
	printf("fds that would survive exec: %d\n", leaked);
	fflush(stdout);
	execl("/proc/self/exe", argv[0], "exec2", (char *)NULL);
	printf("exec failed: %s\n", ename(errno));
	return 1;
}

/* The parent leaves a non-blocking connect pending across the fork: it is
 * the parent's to complete, so the child closing its copy abandons nothing. */
static int mode_fork(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t l = sizeof(sa);
	pid_t p;
	int st, ls, c = -1, err = -1, r = -1;

	round_trip(81);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls >= 0 && bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(ls, 84) == 0 &&
	    getsockname(ls, (struct sockaddr *)&sa, &l) == 0) {
		c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		r = connect(c, (struct sockaddr *)&sa, sizeof(sa));
	}
	printf("pending connect: %s\n", r == 0 ? "done at once" : ename(errno));
	fflush(stdout);
	p = fork();
	if (p == 0) {
		fprintf(stderr, "# child pid %d\n", (int)getpid());
		close(c);
		round_trip(82);
		_exit(0);
	}
	waitpid(p, &st, 0);
	printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	fprintf(stderr, "# parent pid %d\n", (int)getpid());
	{
		struct pollfd pf = { .fd = c, .events = POLLOUT };
		socklen_t el = sizeof(err);

		poll(&pf, 1, 2000);
		getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el);
	}
	printf("parent's connect: SO_ERROR %d\n", err);
	close(c);
	close(ls);
	round_trip(83);
	return 0;
}

/* ---- fork while 4 other threads are inside socket calls ---------------- */

static atomic_int stop;
static struct sockaddr_in lsa;
static int lfd;

static void *t_setsockopt(void *arg)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), v = 0;

	while (!stop) {
		v = (v + 1) % 30;
		setsockopt(s, IPPROTO_TCP, TCP_DEFER_ACCEPT, &v, sizeof(v));
		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &(int){4096 + v}, sizeof(int));
	}
	close(s);
	return arg;
}

static void *t_accept(void *arg)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int a;

	while (!stop) {
		if (poll(&p, 1, 20) <= 0)
			continue;
		a = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
		if (a >= 0)
			close(a);
	}
	return arg;
}

static void *t_connect(void *arg)
{
	int c;

	while (!stop) {
		c = socket(AF_INET, SOCK_STREAM, 0);
		connect(c, (struct sockaddr *)&lsa, sizeof(lsa));
		close(c);
	}
	return arg;
}

/* A loopback listener and 4 threads busy in setsockopt, accept and
 * connect, so a fork or spawn happens while other threads are inside the
 * shim. Returns 0, or -1 when the listener cannot be set up. */
static int start_busy_threads(pthread_t th[4])
{
	socklen_t l = sizeof(lsa);
	int one = 1;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	lsa.sin_family = AF_INET;
	lsa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&lsa, sizeof(lsa)) < 0 || listen(lfd, 4096) < 0)
		return -1;
	getsockname(lfd, (struct sockaddr *)&lsa, &l);
	pthread_create(&th[0], NULL, t_setsockopt, NULL);
	pthread_create(&th[1], NULL, t_accept, NULL);
	pthread_create(&th[2], NULL, t_connect, NULL);
	pthread_create(&th[3], NULL, t_connect, NULL);
	return 0;
}

static int mode_forkthreads(void)
{
	pthread_t th[4];
	int i, st, hung = 0, failed = 0;
	const int forks = 40;

	if (start_busy_threads(th) != 0)
		return 2;
	usleep(20000);
	for (i = 0; i < forks; i++) {
		pid_t p = fork();
		struct timespec t0, t;

		if (p == 0) {
			/* The child: into the shim right away, from the only thread left. */
			int s = socket(AF_INET, SOCK_STREAM, 0), v = 5;
			int r = setsockopt(s, IPPROTO_TCP, TCP_DEFER_ACCEPT, &v, sizeof(v));
			r |= listen(s, 84);
			r |= close(s);
			_exit(r == 0 ? 0 : 1);
		}
		if (p < 0) {
			failed++;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			pid_t w = waitpid(p, &st, WNOHANG);
			if (w == p) {
				if (!WIFEXITED(st) || WEXITSTATUS(st))
					failed++;
				break;
			}
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec >= 5) {  /* deadlocked child */
				/* Said at once (stderr), so a run the timeout kills
				 * still tells which fork hung. */
				char wp[64], wc[64] = "?";
				FILE *wf;

				snprintf(wp, sizeof wp, "/proc/%d/wchan", (int)p);
				if ((wf = fopen(wp, "r")) != NULL) {
					if (!fgets(wc, sizeof wc, wf))
						strcpy(wc, "?");
					fclose(wf);
				}
				fprintf(stderr, "# fork %d: child %d hung 5 s (kernel wait: %s), killed\n", i, (int)p, wc);
				kill(p, SIGKILL);
				waitpid(p, &st, 0);
				hung++;
				break;
			}
			usleep(1000);
		}
	}
	stop = 1;
	fprintf(stderr, "# forks done (hung %d), joining the threads\n", hung);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	close(lfd);
	printf("forks %d: hung %d, failed %d\n", forks, hung, failed);
	return hung || failed;
}

/* Calls that fail: close_range with bad flags, dup2 from a bad fd and dup3
 * with bad flags onto every fd (the shim's own among them). They change
 * nothing for the host, so they must change nothing for the shim either:
 * no fd of ours left behind, the log still written. */
static int mode_badcalls(void)
{
	int fd, hi, i, bad = 0, s, n = 0;

	round_trip(85);
	hi = span_end();
	s = socket(AF_INET, SOCK_STREAM, 0);
	for (i = 0; i < 50; i++)
		bad += close_range(3, ~0U, 0x80) != -1;
	for (fd = 3; fd <= hi; fd++) {
		bad += dup2(-1, fd) != -1;
		bad += dup3(s, fd == s ? fd + 1 : fd, 0x80) != -1;
	}
	bad += close_range(10, 5, 0) != -1;
	close(s);
	printf("failing calls that succeeded: %d\n", bad);
	round_trip(86);
	for (fd = 3; fd <= highest_open_fd(); fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	fprintf(stderr, "# open fds at the end: %d\n", n);
	return 0;
}

/* The host closes the shim's log fd behind its back (a raw close syscall,
 * as glibc's internal __close_nocancel or libuv do) and puts its own file
 * on that number: the shim must notice and never write into the host's
 * file. The decoy file is argv[2]. */
static int mode_rawclose(const char *decoy)
{
	int fd, hi, d, taken = 0;
	char p[64], l[512];
	struct stat st;

	round_trip(87);
	hi = highest_open_fd();
	d = open(decoy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	for (fd = 3; fd <= hi; fd++) {
		ssize_t n;

		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n = readlink(p, l, sizeof(l) - 1);
		if (n <= 6)
			continue;
		l[n] = '\0';
		if (strcmp(l + n - 6, ".jsonl"))
			continue;
		syscall(SYS_close, fd);
		syscall(SYS_dup3, d, fd, 0);
		taken++;
	}
	round_trip(88);
	round_trip(89);
	fstat(d, &st);
	fprintf(stderr, "# took %d shim fds; decoy bytes %lld\n", taken, (long long)st.st_size);
	close(d);
	return 0;
}

/* posix_spawn (clone(CLONE_VM|CLONE_VFORK) in glibc: no atfork handlers run,
 * the child shares our memory until it execs) while 4 threads are busy in
 * socket calls; each child runs round_trip(80) in its new image. */
static int mode_spawn(char **argv)
{
	pthread_t th[4];
	int i, st, failed = 0;
	const int spawns = 20;
	posix_spawn_file_actions_t fa;

	if (start_busy_threads(th) != 0)
		return 2;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addclose(&fa, lfd);
	for (i = 0; i < spawns; i++) {
		char *args[] = { argv[0], "exec2", NULL };
		pid_t p;

		fflush(stdout);
		if (posix_spawn(&p, "/proc/self/exe", &fa, NULL, args, environ) != 0) {
			failed++;
			continue;
		}
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	}
	posix_spawn_file_actions_destroy(&fa);
	stop = 1;
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	close(lfd);
	printf("spawns %d: failed %d\n", spawns, failed);
	return failed != 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(m, "closeall"))
		return mode_closeall();
	if (!strcmp(m, "dup2null"))
		return mode_dup2null();
	if (!strcmp(m, "closerange"))
		return mode_closerange();
	if (!strcmp(m, "closefrom"))
		return mode_closefrom();
	if (!strcmp(m, "exec"))
		return mode_exec(argv, 0);
	if (!strcmp(m, "exec2"))
		return mode_exec(argv, 1);
	if (!strcmp(m, "fork"))
		return mode_fork();
	if (!strcmp(m, "forkthreads"))
		return mode_forkthreads();
	if (!strcmp(m, "rawclose") && argc > 2)
		return mode_rawclose(argv[2]);
	if (!strcmp(m, "badcalls"))
		return mode_badcalls();
	if (!strcmp(m, "spawn"))
		return mode_spawn(argv);
	fprintf(stderr, "usage: fdgames closeall|dup2null|closerange|closefrom|exec|fork|forkthreads|spawn|badcalls|rawclose DECOY\n");
	return 2;
}
