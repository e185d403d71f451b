/*
 * quickack_wwr.c: scenario 6. A write-write-read client (two 32-byte
 * writes, then read the 64 bytes back) against an in-process echo server. Nagle stays on (no TCP_NODELAY).
 *
 *   quickack_wwr reassert [ROUNDS]   TCP_QUICKACK=1 after every send
 *   quickack_wwr once [ROUNDS]       TCP_QUICKACK=1 once, after connect
 *
 * Prints the round-trip times it saw; stops after ROUNDS (default 200) or
 * 2 seconds, whichever comes first.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/tcp.h>     /* struct tcp_info with tcpi_segs_out (4.2+) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HALF 32

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int read_full(int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static void *serve(void *arg)
{
	int lfd = *(int *)arg, fd = accept(lfd, NULL, NULL);
	char buf[2 * HALF];
	ssize_t r;

	/* An echo server: answers each read with what it got, like the lab's. */
	while (fd >= 0 && (r = read(fd, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)r) != r)
			break;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int reassert, rounds, lfd, fd, one = 1, i, n = 0;
	char req[2 * HALF], resp[2 * HALF];
	double *rtt, sum = 0, t0, end;
	pthread_t th;

	if (argc < 2 || (strcmp(argv[1], "reassert") && strcmp(argv[1], "once"))) {
		fprintf(stderr, "usage: quickack_wwr reassert|once [ROUNDS]\n");
		return 2;
	}
	reassert = !strcmp(argv[1], "reassert");
	rounds = argc > 2 ? atoi(argv[2]) : 200;
	rtt = calloc(rounds > 0 ? rounds : 1, sizeof(double));
	memset(req, 'x', sizeof(req));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (!rtt || lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 4) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) ||
	    pthread_create(&th, NULL, serve, &lfd)) {
		perror("server");
		return 1;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		return 1;
	}
	if (!reassert)
		setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
	end = now() + 2.0;
	for (i = 0; i < rounds && now() < end; i++) {
		t0 = now();
		if (write(fd, req, HALF) != HALF)
			break;
		if (reassert)
			setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
		if (write(fd, req + HALF, HALF) != HALF)
			break;
		if (reassert)
			setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
		if (read_full(fd, resp, sizeof(resp)))
			break;
		rtt[n] = (now() - t0) * 1e3;
		sum += rtt[n++];
	}
	/* Segments this client sent, pure ACKs included, and data segments. */
	struct tcp_info ti;
	socklen_t tilen = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tilen);
	close(fd);
	pthread_join(th, NULL);
	close(lfd);
	if (n == 0) {
		fprintf(stderr, "no round trip completed\n");
		return 1;
	}
	qsort(rtt, n, sizeof(double), cmp);
	printf("%-8s %d write-write-read rounds (Nagle on): mean %.3f ms, p50 %.3f ms, p95 %.3f ms;"
	       " segments sent %u (%u with data)\n",
	       argv[1], n, sum / n, rtt[n / 2], rtt[(n * 95) / 100 < n ? (n * 95) / 100 : n - 1],
	       ti.tcpi_segs_out, ti.tcpi_data_segs_out);
	free(rtt);
	return 0;
}
