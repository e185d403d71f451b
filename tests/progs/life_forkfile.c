/*
 * life_forkfile: a forked child's lines must go to its own %p file from the
 * first line. The parent listens (at trace its listen line opens its own
 * file), then makes a child by MODE:
 *   thread: fork(); the child starts a thread that connects N times to the
 *           parent's listener while its main thread accepts N times
 *   single: fork(); the child connects N times and accepts them, one thread
 *   clone:  clone() without CLONE_VM (a new process glibc's fork handlers
 *           never see), single-threaded like "single"
 *   nobody: like "single", but the child first becomes uid/gid 65534 (an
 *           nginx worker), which may not create its file next to ours
 * Prints "# child PID" on stderr; exits 0 when every call worked.
 *   life_forkfile thread|single|clone|nobody N
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "life_common.h"

static int lfd, port, n;

static void *connector(void *arg)
{
	struct sockaddr_in a = life_addr(port);
	long bad = 0;
	int i, s;

	for (i = 0; i < n; i++) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0)
			bad++;
		if (s >= 0)
			close(s);
	}
	return (void *)bad;
}

static int accept_n(void)
{
	int i, c, bad = 0;

	for (i = 0; i < n; i++) {
		c = accept(lfd, NULL, NULL);
		if (c < 0)
			bad++;
		else
			close(c);
	}
	return bad;
}

static int child_main(int threaded)
{
	char buf[64];
	pthread_t t;
	void *tbad = NULL;
	int len, bad;

	len = snprintf(buf, sizeof buf, "# child %ld\n", syscall(SYS_getpid));
	if (write(2, buf, (size_t)len) != len)
		return 3;
	if (threaded == 2 && (setgid(65534) != 0 || setuid(65534) != 0))
		return 5;
	if (threaded == 1) {
		if (pthread_create(&t, NULL, connector, NULL) != 0)
			return 4;
		bad = accept_n();
		pthread_join(t, &tbad);
		return bad || tbad ? 1 : 0;
	}
	/* One thread: connect, then accept what is queued (N fits the backlog). */
	tbad = connector(NULL);
	bad = accept_n();
	return bad || tbad ? 1 : 0;
}

static int clone_fn(void *arg)
{
	return child_main(0);
}

int main(int argc, char **argv)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	int st;
	pid_t pid;

	if (argc != 3)
		return 2;
	n = atoi(argv[2]);
	lfd = life_listener(n + 16, &port);
	if (!strcmp(argv[1], "clone"))
		pid = clone(clone_fn, stack + sizeof stack, SIGCHLD, NULL);
	else if ((pid = fork()) == 0)
		_exit(child_main(!strcmp(argv[1], "thread") ? 1 : !strcmp(argv[1], "nobody") ? 2 : 0));
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return perror("fork/waitpid"), 1;
	printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	close(lfd);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
