/*
 * silent_client.c: scenario 2. A listener with TCP_DEFER_ACCEPT=D and a
 * client that connects and never sends a byte. The client's connect()
 * returns at once (its handshake is done); the listener's accept() waits
 * for the deferral window to run out, then gets the connection anyway,
 * empty. Prints what the program itself can see: how long accept() took
 * and how many bytes were ready (FIONREAD).
 *
 * Usage: silent_client DEFER_SECONDS
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int defer = argc > 1 ? atoi(argv[1]) : 1;
	int lfd, cfd, afd, ready = -1;
	double t0, t1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 16) ||
	    setsockopt(lfd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof(defer)) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen)) {
		perror("listener");
		return 1;
	}
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	t0 = now();
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		return 1;
	}
	t1 = now();
	printf("defer=%d: client connect() returned after %.3f s; the client sends nothing\n",
	       defer, t1 - t0);
	fflush(stdout);
	afd = accept(lfd, NULL, NULL);
	t1 = now();
	if (afd < 0) {
		perror("accept");
		return 1;
	}
	ioctl(afd, FIONREAD, &ready);
	printf("defer=%d: server accept() returned after %.3f s with %d bytes ready\n",
	       defer, t1 - t0, ready);
	close(afd);
	close(cfd);
	close(lfd);
	return 0;
}
