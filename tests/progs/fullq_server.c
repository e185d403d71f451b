/*
 * fullq_server: a TCP listener whose accept queue is full, drained later.
 *   fullq_server PORTFILE DRAIN_MS LINGER_MS [GOFILE]
 * listen(0) on 127.0.0.1 (the queue holds backlog + 1 = 1 connection), fill
 * it with one connection of our own, write the port to PORTFILE (atomically,
 * when the queue is full), sleep DRAIN_MS while SYNs to it are dropped (and,
 * with GOFILE, until GOFILE exists, at most 20 s more: a test that needs
 * every client's SYN dropped says when they all were), then accept
 * everything for LINGER_MS and exit.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof a;
	char tmp[512];
	long long end;
	FILE *f;
	int l, c;

	if (argc != 4 && argc != 5)
		return 2;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 0) ||
	    getsockname(l, (struct sockaddr *)&a, &al))
		return perror("listen"), 1;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a))
		return perror("filler connect"), 1;
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
	f = fopen(tmp, "w");
	if (!f)
		return perror(tmp), 1;
	fprintf(f, "%u\n", ntohs(a.sin_port));
	fclose(f);
	rename(tmp, argv[1]);
	usleep((useconds_t)atoi(argv[2]) * 1000);
	for (end = now_ms() + 20000; argc == 5 && access(argv[4], F_OK) != 0 && now_ms() < end;)
		usleep(20000);
	end = now_ms() + atoi(argv[3]);
	while (now_ms() < end) {
		struct pollfd p = { .fd = l, .events = POLLIN };
		if (poll(&p, 1, 20) > 0) {
			int s = accept(l, NULL, NULL);
			/* Keep them open: the clients measure the connect only. */
			if (s < 0)
				break;
		}
	}
	return 0;
}
