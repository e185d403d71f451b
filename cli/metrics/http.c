/*
 * metrics/http.c: the smallest HTTP server Prometheus can scrape: GET
 * /metrics answered with the exposition, anything else 404, one request
 * per connection, served in the follow loop (no threads). A client that
 * does not send its request within a second is dropped.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "metrics/metrics.h"

int mx_http_listen(const char *hostport)
{
	char host[256];
	const char *colon = strrchr(hostport, ':');
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res, *ai;
	int fd = -1, one = 1, rc;
	size_t hl;

	if (!colon || !colon[1]) {
		fprintf(stderr, "sockaudit metrics: --listen %s: HOST:PORT expected\n", hostport);
		return -1;
	}
	hl = (size_t)(colon - hostport);
	if (hl >= sizeof host)
		hl = sizeof host - 1;
	memcpy(host, hostport, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {   /* [::1]:9 */
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
	if (rc) {
		fprintf(stderr, "sockaudit metrics: --listen %s: %s\n", hostport, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		fprintf(stderr, "sockaudit metrics: --listen %s: %s\n", hostport, strerror(errno));
	freeaddrinfo(res);
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		struct pollfd pf = { .fd = fd, .events = POLLOUT };
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (poll(&pf, 1, 1000) <= 0)
				return;
		} else {
			return;
		}
	}
}

void mx_http_serve(int lfd, const char *body, size_t len)
{
	char req[2048], hdr[256];
	size_t got = 0;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), n;

	if (fd < 0)
		return;
	/* The request line and headers, until the blank line. */
	while (got < sizeof req - 1 && !memmem(req, got, "\r\n\r\n", 4) && !memmem(req, got, "\n\n", 2)) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		ssize_t r = recv(fd, req + got, sizeof req - 1 - got, MSG_DONTWAIT);

		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0 || (errno != EAGAIN && errno != EINTR) || poll(&pf, 1, 1000) <= 0) {
			close(fd);
			return;
		}
	}
	req[got] = '\0';
	if (strncmp(req, "GET /metrics ", 13) == 0 || strncmp(req, "GET /metrics?", 13) == 0) {
		n = snprintf(hdr, sizeof hdr,
			     "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
			     "Content-Length: %zu\r\nConnection: close\r\n\r\n", len);
		send_all(fd, hdr, (size_t)n);
		send_all(fd, body, len);
	} else {
		static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 28\r\n"
					 "Connection: close\r\n\r\nsockaudit serves /metrics.\r\n";
		send_all(fd, nf, sizeof nf - 1);
	}
	shutdown(fd, SHUT_WR);
	close(fd);
}
