/*
 * life_vfork: a vfork child closes every fd from 3 up
 * (as CPython's subprocess does) in memory it shares with the parent, then
 * execs /bin/true. Meanwhile the parent has a non-blocking connect to a
 * refused port pending; afterwards it reads SO_ERROR, which must be
 * ECONNREFUSED (111) as it is plainly: the child's close_range must not
 * consume the parent's socket state.
 *   life_vfork REFUSED_PORT
 */
#include <poll.h>
#include <sys/wait.h>
#include "life_common.h"

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	struct pollfd p;
	int s, err = -1, st;
	socklen_t el = sizeof err;
	pid_t pid;

	if (argc != 2)
		return 2;
	a = life_addr(atoi(argv[1]));
	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (s < 0)
		return perror("socket"), 1;
	if (connect(s, (struct sockaddr *)&a, sizeof a) == 0 || errno != EINPROGRESS)
		return printf("connect did not return EINPROGRESS: %s\n", life_errname(errno)), 1;
	pid = vfork();
	if (pid == 0) {
		close_range(3, ~0U, 0);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return perror("vfork/waitpid"), 1;
	p = (struct pollfd){ .fd = s, .events = POLLOUT };
	poll(&p, 1, 2000);
	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el))
		return perror("getsockopt"), 1;
	printf("child exit %d; SO_ERROR %d (%s)\n", WEXITSTATUS(st), err, life_errname(err));
	close(s);
	return 0;
}
