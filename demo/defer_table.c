/*
 * defer_table.c: scenario 1. Writes each TCP_DEFER_ACCEPT value of the
 * study (seconds) on a fresh listening socket, one socket per value, the way
 * nginx does it (after listen). It prints nothing about what the kernel kept:
 * under the shim, the table comes from the shim's setsockopt events.
 *
 * Usage: defer_table [SECONDS...]   (default: the study's twelve values)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const int study[] = { 1, 2, 3, 4, 7, 10, 15, 30, 60, 128, 300, 3600 };

static int one(int secs)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0) {
		perror("socket");
		return -1;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16)) {
		perror("bind/listen");
		close(fd);
		return -1;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &secs, sizeof(secs))) {
		perror("setsockopt TCP_DEFER_ACCEPT");
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int i, bad = 0;

	if (argc > 1) {
		for (i = 1; i < argc; i++)
			bad |= one(atoi(argv[i]));
	} else {
		for (i = 0; i < (int)(sizeof(study) / sizeof(study[0])); i++)
			bad |= one(study[i]);
	}
	return bad ? 1 : 0;
}
