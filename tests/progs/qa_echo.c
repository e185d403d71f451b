/*
 * qa_echo: a loopback TCP echo server for the TCP_QUICKACK tests. Binds
 * 127.0.0.1:PORT (0 = any free port), prints the port on stdout, and
 * echoes every connection byte for byte in its own thread until the peer
 * closes. Exits after --conns N connections have closed (default: never).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int conns_left = -1;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *echo(void *arg)
{
	int fd = (int)(long)arg, done;
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof buf)) > 0) {
		ssize_t off = 0;
		while (off < n) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));
			if (w <= 0)
				goto out;
			off += w;
		}
	}
out:
	close(fd);
	pthread_mutex_lock(&mu);
	done = conns_left > 0 && --conns_left == 0;
	pthread_mutex_unlock(&mu);
	if (done)
		exit(0);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof a;
	int one = 1, lfd, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--conns") && i + 1 < argc)
			conns_left = atoi(argv[++i]);
		else
			a.sin_port = htons((unsigned short)atoi(argv[i]));
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&a, &al)) {
		perror("qa_echo");
		return 1;
	}
	printf("%d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		pthread_t t;
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		if (pthread_create(&t, NULL, echo, (void *)(long)fd) != 0) {
			close(fd);
			continue;
		}
		pthread_detach(t);
	}
}
