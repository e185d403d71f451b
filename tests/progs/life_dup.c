/*
 * life_dup: copy a socket whose non-blocking connect to a
 * refused port is pending (dup, dup2 or fcntl F_DUPFD), close the original,
 * then read SO_ERROR on the copy. Plainly ECONNREFUSED (111): the shim must
 * not consume it when the original closes.
 *   life_dup dup|dup2|dupfd REFUSED_PORT
 */
#include <poll.h>
#include "life_common.h"

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	struct pollfd p;
	int s, c, err = -1;
	socklen_t el = sizeof err;

	if (argc != 3)
		return 2;
	a = life_addr(atoi(argv[2]));
	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (s < 0)
		return perror("socket"), 1;
	if (connect(s, (struct sockaddr *)&a, sizeof a) == 0 || errno != EINPROGRESS)
		return printf("connect did not return EINPROGRESS: %s\n", life_errname(errno)), 1;
	if (!strcmp(argv[1], "dup"))
		c = dup(s);
	else if (!strcmp(argv[1], "dup2"))
		c = dup2(s, 50);
	else
		c = fcntl(s, F_DUPFD, 60);
	if (c < 0)
		return perror("copy"), 1;
	close(s);
	p = (struct pollfd){ .fd = c, .events = POLLOUT };
	poll(&p, 1, 2000);
	if (getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el))
		return perror("getsockopt"), 1;
	printf("%s: SO_ERROR on the copy %d (%s)\n", argv[1], err, life_errname(err));
	close(c);
	return 0;
}
