/*
 * threads.c: many threads accepting and connecting at once on loopback.
 *
 * A listeners with A acceptor threads (poll + accept4) and C connector
 * threads, each making K connections (socket, setsockopt TCP_NODELAY,
 * connect, 1 byte, close). The acceptors read the byte and close. Prints the
 * totals; the test compares them with the shim's trace log (every accept and
 * connect is one line, none lost, none torn).
 *
 * Usage: threads [ACCEPTORS CONNECTORS PER_CONNECTOR]   (default 4 8 150)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static int lfd, per;
static struct sockaddr_in lsa;
static atomic_int accepted, connected, connect_failed, total_expected;

static void *acceptor(void *arg)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	char b;

	while (atomic_load(&accepted) < atomic_load(&total_expected)) {
		int a;

		if (poll(&p, 1, 50) <= 0)
			continue;
		a = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
		if (a < 0)
			continue;                  /* another acceptor won the race */
		atomic_fetch_add(&accepted, 1);
		struct pollfd q = { .fd = a, .events = POLLIN };
		poll(&q, 1, 2000);
		if (read(a, &b, 1) != 1)
			fprintf(stderr, "read on accepted fd: %d\n", errno);
		close(a);
	}
	return arg;
}

static void *connector(void *arg)
{
	int i, one = 1;

	for (i = 0; i < per; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);

		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(c, (struct sockaddr *)&lsa, sizeof(lsa)) == 0 && write(c, "x", 1) == 1)
			atomic_fetch_add(&connected, 1);
		else
			atomic_fetch_add(&connect_failed, 1);
		close(c);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int na = argc > 3 ? atoi(argv[1]) : 4;
	int nc = argc > 3 ? atoi(argv[2]) : 8;
	pthread_t th[256];
	socklen_t l = sizeof(lsa);
	int i, one = 1;

	per = argc > 3 ? atoi(argv[3]) : 150;
	if (na + nc > 256 || na < 1 || nc < 1)
		return 2;
	atomic_store(&total_expected, nc * per);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	lsa.sin_family = AF_INET;
	lsa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&lsa, sizeof(lsa)) < 0 || listen(lfd, 4096) < 0) {
		perror("listen");
		return 2;
	}
	getsockname(lfd, (struct sockaddr *)&lsa, &l);
	for (i = 0; i < na; i++)
		pthread_create(&th[i], NULL, acceptor, NULL);
	for (i = 0; i < nc; i++)
		pthread_create(&th[na + i], NULL, connector, NULL);
	for (i = na; i < na + nc; i++)
		pthread_join(th[i], NULL);
	/* Connectors done: failed ones will never be accepted. */
	atomic_fetch_sub(&total_expected, atomic_load(&connect_failed));
	for (i = 0; i < na; i++)
		pthread_join(th[i], NULL);
	printf("listen_fd=%d threads=%d connected=%d failed=%d accepted=%d\n",
	       lfd, na + nc, atomic_load(&connected), atomic_load(&connect_failed),
	       atomic_load(&accepted));
	close(lfd);
	return atomic_load(&accepted) == atomic_load(&connected) ? 0 : 1;
}
