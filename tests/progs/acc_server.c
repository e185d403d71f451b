/* acc_server: a small TCP listener for the accept-side tests.
 *   acc_server [-p port] [-b backlog] [-d defer_s] [-P pause_ms] [-n accepts]
 *              [-T deadline_ms] [-m close|read|banner|hold] [-N]
 * Binds 127.0.0.1:port (0 = any), prints "PORT n" on stdout, sleeps pause_ms,
 * then accepts until it has n connections or deadline_ms passed.
 * -m close: close at once; read: wait up to 2 s for a request, read it,
 * answer, close (a client-first protocol); banner: write a greeting first,
 * then read (server-first, SMTP-like); hold: keep every connection open.
 * -Q: the pause starts when the first connection is queued.
 * -L N: lower RLIMIT_NOFILE to N after listen (accept then fails with EMFILE).
 * -t N: N threads accept on the listener at once (blocking).
 * -N: non-blocking listener, poll + accept4 until EAGAIN (nginx style). */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void serve(int c, const char *mode)
{
	char buf[512];
	struct pollfd p = { .fd = c, .events = POLLIN };

	if (!strcmp(mode, "nodelay")) {
		/* As nginx does on keep-alive connections. */
		int one = 1;

		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		mode = "read";
	}
	if (!strcmp(mode, "read")) {
		if (poll(&p, 1, 2000) > 0 && read(c, buf, sizeof buf) > 0)
			(void)!write(c, "HTTP/1.0 200 OK\r\n\r\n", 19);
		close(c);
	} else if (!strcmp(mode, "banner")) {
		(void)!write(c, "220 ready\r\n", 11);
		if (poll(&p, 1, 500) > 0)
			(void)!read(c, buf, sizeof buf);
		close(c);
	} else if (!strcmp(mode, "close")) {
		close(c);
	}   /* hold: leak it until exit */
}

struct worker {
	int fd, want, deadline;
	const char *mode;
};
static int total_got;

/* -t N: N threads block in accept() on the same listener until together
 * they have the wanted count (a multi-threaded server). */
static void *worker(void *arg)
{
	struct worker *w = arg;
	long end = now_ms() + w->deadline;

	while (__atomic_load_n(&total_got, __ATOMIC_RELAXED) < w->want && now_ms() < end) {
		int c = accept(w->fd, NULL, NULL);
		if (c >= 0) {
			__atomic_add_fetch(&total_got, 1, __ATOMIC_RELAXED);
			serve(c, w->mode);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int port = 0, backlog = 16, defer = 0, pause_ms = 0, want = 1, deadline = 10000, nb = 0, first_pause = 0, threads = 0, nofile = 0, o, one = 1;
	const char *mode = "close";
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof a;
	int fd, got = 0;
	long end;

	while ((o = getopt(argc, argv, "p:b:d:P:n:T:m:NQt:L:")) != -1) {
		switch (o) {
		case 'p': port = atoi(optarg); break;
		case 'b': backlog = atoi(optarg); break;
		case 'd': defer = atoi(optarg); break;
		case 'P': pause_ms = atoi(optarg); break;
		case 'n': want = atoi(optarg); break;
		case 'T': deadline = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'N': nb = 1; break;
		case 'Q': first_pause = 1; break;
		case 't': threads = atoi(optarg); break;
		case 'L': nofile = atoi(optarg); break;
		default: return 2;
		}
	}
	fd = socket(AF_INET, SOCK_STREAM | (nb ? SOCK_NONBLOCK : 0), 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (defer)
		setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof defer);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, backlog)) {
		perror("bind/listen");
		return 1;
	}
	getsockname(fd, (struct sockaddr *)&a, &al);
	if (nofile > 0) {
		struct rlimit rl = { nofile, nofile };
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	printf("PORT %d\n", ntohs(a.sin_port));
	fflush(stdout);
	if (first_pause) {
		/* Start the pause when the first connection is queued. */
		struct pollfd p = { .fd = fd, .events = POLLIN };
		poll(&p, 1, deadline);
	}
	if (pause_ms)
		usleep(pause_ms * 1000);
	end = now_ms() + deadline;
	if (!nb) {
		/* Block in accept() itself (its wait is what we measure),
		 * bounded by SO_RCVTIMEO. */
		struct timeval tv = { .tv_sec = deadline / 1000, .tv_usec = (deadline % 1000) * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	}
	if (threads > 0) {
		struct worker w = { fd, want, deadline, mode };
		pthread_t tid[64];
		int i;
		if (threads > 64)
			threads = 64;
		for (i = 0; i < threads; i++)
			pthread_create(&tid[i], NULL, worker, &w);
		/* Wake the threads still blocked once the count is reached. */
		while (__atomic_load_n(&total_got, __ATOMIC_RELAXED) < want && now_ms() < end)
			usleep(10000);
		shutdown(fd, SHUT_RDWR);
		for (i = 0; i < threads; i++)
			pthread_join(tid[i], NULL);
		got = total_got;
	}
	while (got < want && now_ms() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int c;
		if (!nb) {
			if ((c = accept(fd, NULL, NULL)) >= 0) {
				got++;
				serve(c, mode);
			}
			continue;
		}
		if (poll(&p, 1, (int)(end - now_ms()) > 0 ? (int)(end - now_ms()) : 0) <= 0)
			continue;
		{
			while (got < want && (c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
				got++;
				serve(c, mode);
			}
		}
	}
	/* Non-blocking: one more accept finds the queue empty (EAGAIN), so
	 * every run has at least one, whatever the clients' timing (a loop
	 * that stops at `want` may never drain the queue). */
	if (nb) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c >= 0)
			close(c);
	}
	/* Closed before exit, so the namespace counters about this listener are
	 * final when the shim's summary reads them. */
	close(fd);
	fprintf(stderr, "accepted %d\n", got);
	return 0;
}
