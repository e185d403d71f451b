/*
 * slow_accept_server.c: a listener with a tiny backlog that accepts slowly,
 * the server side of demo scenario 7.
 *   slow_accept_server PORT BACKLOG ACCEPT_EVERY_MS COUNT
 * Listens on 127.0.0.1:PORT, then accepts COUNT connections, sleeping
 * ACCEPT_EVERY_MS before each, and closes them. Prints "ready" once listening.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int one = 1, ls, i, n;

	if (argc < 5) {
		fprintf(stderr, "usage: %s PORT BACKLOG ACCEPT_EVERY_MS COUNT\n", argv[0]);
		return 2;
	}
	a.sin_port = htons((unsigned short)atoi(argv[1]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, atoi(argv[2]))) {
		perror("listen");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	n = atoi(argv[4]);
	for (i = 0; i < n; i++) {
		int c;

		usleep((useconds_t)atoi(argv[3]) * 1000);
		if ((c = accept(ls, NULL, NULL)) >= 0)
			close(c);
	}
	return 0;
}
