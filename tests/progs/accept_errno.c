/*
 * accept_errno: errno across accept4 as the host sees it, on the paths the
 * shim takes below trace: a listener's first connections (full audit),
 * then the counted ones (no errno copy in the wrapper), the samples among
 * them, and EAGAIN on an empty non-blocking queue.
 *   accept_errno ROUNDS
 * Each round: connect a client, set errno to a sentinel, accept4; a
 * success must leave the sentinel, an empty queue must give EAGAIN.
 * Prints "accepted N bad B eagain_bad E".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof a;
	int rounds = argc > 1 ? atoi(argv[1]) : 300, i, l, accepted = 0, bad = 0, eagain_bad = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 64) ||
	    getsockname(l, (struct sockaddr *)&a, &al))
		return perror("listen"), 1;
	for (i = 0; i < rounds; i++) {
		struct pollfd p = { .fd = l, .events = POLLIN };
		int c = socket(AF_INET, SOCK_STREAM, 0), s;

		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a))
			return perror("connect"), 1;
		if (poll(&p, 1, 2000) != 1)
			return fprintf(stderr, "no connection queued\n"), 1;
		errno = 4242;
		s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0)
			return perror("accept4"), 1;
		accepted++;
		bad += errno != 4242;
		errno = 4242;
		if (accept4(l, NULL, NULL, 0) >= 0 || errno != EAGAIN)
			eagain_bad++;
		close(s);
		close(c);
	}
	printf("accepted %d bad %d eagain_bad %d\n", accepted, bad, eagain_bad);
	return 0;
}
