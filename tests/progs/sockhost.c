/*
 * sockhost.c: a small, deterministic host program for the sink-fault tests.
 *
 * Makes a socketpair first (so it owns the lowest free fds, 3 and 4), then N
 * loopback connections through its own listener (connect, accept, a few
 * setsockopt, 4 bytes each way, close). At the end it prints what a host
 * could notice if the shim misbehaved: stray bytes on its socketpair (the
 * shim wrote a log line into a host fd), O_NONBLOCK on its stderr (the shim
 * changed a shared file description), the SIGPIPE disposition, and exits
 * with status 7. Output never contains ports or pids.
 *
 * Usage: sockhost [N]   (default 50)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(const char *what)
{
	printf("FAILED %s: %s\n", what, strerror(errno));
	exit(3);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;
	int pair[2], ls, c, a, i, one = 1, ten = 10, stray = 0;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t l = sizeof(sa);
	struct sigaction act;
	char buf[64];
	ssize_t r;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) < 0)
		die("socketpair");
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		die("socket");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(ls, IPPROTO_TCP, TCP_DEFER_ACCEPT, &ten, sizeof(ten));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 64) < 0)
		die("listen");
	getsockname(ls, (struct sockaddr *)&sa, &l);
	for (i = 0; i < n; i++) {
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0)
			die("client socket");
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die("connect");
		if (write(c, "ping", 4) != 4)
			die("write");
		a = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (a < 0)
			die("accept");
		if (read(a, buf, sizeof(buf)) != 4)
			die("read");
		setsockopt(a, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		if (send(a, "pong", 4, 0) != 4)
			die("send");
		if (recv(c, buf, sizeof(buf), 0) != 4)
			die("recv");
		close(a);
		close(c);
	}
	/* One refused connect and one failed setsockopt, for the log. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(c, 12345, 1, &one, sizeof(one));
	close(ls);
	connect(c, (struct sockaddr *)&sa, sizeof(sa));
	close(c);
	while ((r = recv(pair[1], buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		stray += r;
	while ((r = recv(pair[0], buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		stray += r;
	sigaction(SIGPIPE, NULL, &act);
	printf("connections=%d\n", i);
	printf("stray bytes on host socketpair=%d\n", stray);
	printf("stderr O_NONBLOCK=%d\n", !!(fcntl(2, F_GETFL) & O_NONBLOCK));
	printf("stdout O_NONBLOCK=%d\n", !!(fcntl(1, F_GETFL) & O_NONBLOCK));
	printf("SIGPIPE default=%d\n", act.sa_handler == SIG_DFL);
	fflush(stdout);
	return 7;
}
