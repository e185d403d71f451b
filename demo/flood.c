/*
 * flood.c: scenario 3, both sides.
 *
 *   flood server PORT DEFER BACKLOG SECONDS
 *       A listener on 127.0.0.1:PORT with TCP_DEFER_ACCEPT=DEFER and the
 *       given listen() backlog that accepts as fast as it can for SECONDS,
 *       then prints how many connections it accepted and how many were empty.
 *   flood clients PORT N HOLD_SECONDS [SPREAD_MS]
 *       N non-blocking connects, spread evenly over SPREAD_MS (default 0:
 *       back to back), none of which ever sends a byte; keeps them open
 *       HOLD_SECONDS, then closes them.
 *
 * The deferred request queue is bounded by the backlog: once it is full the
 * kernel answers with SYN cookies, and a cookie's ACK builds the child
 * straight into the accept queue (tcp_get_cookie_sock()), skipping the
 * deferral gate in tcp_check_req().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	return a;
}

static int server(int port, int defer, int backlog, double secs)
{
	struct sockaddr_in a = loopback(port);
	int one = 1, lfd, fd, accepted = 0, empty = 0, ready, maxfd = 0;
	int *held = calloc(4096, sizeof(int));
	double end;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (lfd < 0 || !held ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, backlog) ||
	    setsockopt(lfd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof(defer))) {
		perror("flood server: listener");
		return 1;
	}
	end = now() + secs;
	for (;;) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		double left = end - now();

		if (left <= 0)
			break;
		if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		while ((fd = accept(lfd, NULL, NULL)) >= 0) {
			ready = -1;
			ioctl(fd, FIONREAD, &ready);
			accepted++;
			if (ready == 0)
				empty++;
			/* Keep them open: closing would let the clients see RSTs
			 * and change nothing the demo shows. */
			if (maxfd < 4096)
				held[maxfd++] = fd;
			else
				close(fd);
		}
	}
	printf("server: accepted %d connections in %.1f s, %d of them empty\n",
	       accepted, secs, empty);
	while (maxfd > 0)
		close(held[--maxfd]);
	close(lfd);
	free(held);
	return 0;
}

static int clients(int port, int n, double hold, double spread_ms)
{
	struct sockaddr_in a = loopback(port);
	int *fds = calloc(n, sizeof(int));
	int i, started = 0;
	double t0 = now();

	if (!fds)
		return 1;
	for (i = 0; i < n; i++) {
		double due = t0 + spread_ms / 1e3 * i / n;

		while (now() < due)
			;	/* sub-millisecond pacing: sleeping would overshoot */
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (fds[i] < 0) {
			perror("flood clients: socket");
			break;
		}
		if (connect(fds[i], (struct sockaddr *)&a, sizeof(a)) == 0 ||
		    errno == EINPROGRESS)
			started++;
	}
	printf("clients: %d silent connects started in %.1f ms\n", started,
	       (now() - t0) * 1000);
	fflush(stdout);
	usleep((useconds_t)(hold * 1e6));
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atof(argv[5]));
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "clients"))
		return clients(atoi(argv[2]), atoi(argv[3]), atof(argv[4]),
			       argc == 6 ? atof(argv[5]) : 0);
	fprintf(stderr, "usage: flood server PORT DEFER BACKLOG SECONDS\n"
			"       flood clients PORT N HOLD_SECONDS [SPREAD_MS]\n");
	return 2;
}
