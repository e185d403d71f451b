/*
 * life_common.h: small helpers shared by the life_*.c reproducers of
 * host safety under real process life. Header only: each
 * program is still built from its one .c file by the Makefile's pattern rule.
 */
#ifndef LIFE_COMMON_H
#define LIFE_COMMON_H
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline double life_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline struct sockaddr_in life_addr(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* A loopback TCP listener on an ephemeral port; its port in *port. */
static inline int life_listener(int backlog, int *port)
{
	struct sockaddr_in a = life_addr(0);
	socklen_t al = sizeof a;
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, backlog) ||
	    getsockname(l, (struct sockaddr *)&a, &al)) {
		perror("listener");
		exit(1);
	}
	if (port)
		*port = ntohs(a.sin_port);
	return l;
}

static inline const char *life_errname(int e)
{
	switch (e) {
	case 0: return "0";
	case EINTR: return "EINTR";
	case EINPROGRESS: return "EINPROGRESS";
	case ECONNREFUSED: return "ECONNREFUSED";
	case EAGAIN: return "EAGAIN";
	case EMFILE: return "EMFILE";
	default: return strerror(e);
	}
}
#endif
