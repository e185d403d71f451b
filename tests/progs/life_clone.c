/*
 * life_clone: a clone(CLONE_FILES) child, without and with
 * CLONE_VM, connects to a refused port (a failed connect: logged at info).
 * Its event must carry its own pid and tid (what the child gets from
 * syscall(SYS_getpid) / SYS_gettid, printed to stderr as "# child pid tid"),
 * and the parent's own state (its two refused connects, one before and one
 * after the child) must not be changed by it.
 *   life_clone vm|novm REFUSED_PORT
 */
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "life_common.h"

static struct sockaddr_in target;

static int refused_connect(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), e = 0;

	if (s < 0)
		return errno;
	if (connect(s, (struct sockaddr *)&target, sizeof target) < 0)
		e = errno;
	close(s);
	return e;
}

static int child(void *arg)
{
	char buf[128];
	int n, e;

	n = snprintf(buf, sizeof buf, "# child %ld %ld\n", syscall(SYS_getpid), syscall(SYS_gettid));
	write(2, buf, (size_t)n);
	e = refused_connect();
	n = snprintf(buf, sizeof buf, "child connect: %s\n", life_errname(e));
	write(1, buf, (size_t)n);
	return 0;
}

int main(int argc, char **argv)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	int flags = CLONE_FILES | SIGCHLD, st;
	pid_t pid;

	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "vm"))
		flags |= CLONE_VM;
	target = life_addr(atoi(argv[2]));
	setvbuf(stdout, NULL, _IONBF, 0);
	fprintf(stderr, "# parent %ld %ld\n", syscall(SYS_getpid), syscall(SYS_gettid));
	printf("parent connect 1: %s\n", life_errname(refused_connect()));
	pid = clone(child, stack + sizeof stack, flags, NULL);
	if (pid < 0 || waitpid(pid, &st, __WALL) != pid)
		return perror("clone/waitpid"), 1;
	printf("child exit %d\n", WEXITSTATUS(st));
	printf("parent connect 2: %s\n", life_errname(refused_connect()));
	return 0;
}
