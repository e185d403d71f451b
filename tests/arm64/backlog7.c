/* One case for scripts/arm64-run: a listener with backlog 7 and 25
 * connections to itself, each accepted at once. Under the library its log
 * has a listen line with backlog_requested 7 and backlog_effective 7 (as
 * this kernel keeps it: somaxconn is larger) and a summary with 25 accepts
 * and 25 connects ok.
 *   scripts/arm64-run tests/arm64/backlog7.c */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), n = 0;
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 7) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0) {
		perror("listener");
		return 1;
	}
	for (int i = 0; i < 25; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0) {
			perror("connect");
			return 1;
		}
		int s = accept(l, NULL, NULL);
		if (s >= 0)
			n++;
		close(s);
		close(c);
	}
	printf("listen(7) on 127.0.0.1:%d, %d of 25 connections accepted\n", ntohs(a.sin_port), n);
	close(l);
	return n == 25 ? 0 : 1;
}
