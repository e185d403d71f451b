/*
 * tfo_client: a TCP Fast Open client (run where net.ipv4.tcp_fastopen has
 * the client bits, 1, and 4 for data without a cookie).
 *   tfo_client PORT connect   setsockopt(TCP_FASTOPEN_CONNECT), connect()
 *                             (returns 0 before any SYN), send "hello"
 *   tfo_client PORT sendto    sendto("hello", MSG_FASTOPEN) on an
 *                             unconnected socket
 * then, if the send worked, read the peer's answer (or EOF). Prints each
 * call's result: "connect 0", "send 5" / "send -1 ECONNREFUSED", "recv N".
 */
#include <netinet/tcp.h>
#include "life_common.h"

#ifndef TCP_FASTOPEN_CONNECT
#define TCP_FASTOPEN_CONNECT 30
#endif

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	char buf[64];
	ssize_t n;
	int s, one = 1, r;

	if (argc != 3)
		return 2;
	a = life_addr(atoi(argv[1]));
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return perror("socket"), 1;
	if (strcmp(argv[2], "connect") == 0) {
		if (setsockopt(s, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one) != 0)
			return perror("TCP_FASTOPEN_CONNECT"), 1;
		r = connect(s, (struct sockaddr *)&a, sizeof a);
		printf("connect %d %s\n", r, r ? life_errname(errno) : "");
		n = send(s, "hello", 5, MSG_NOSIGNAL);
	} else {
		n = sendto(s, "hello", 5, MSG_FASTOPEN | MSG_NOSIGNAL, (struct sockaddr *)&a, sizeof a);
	}
	printf("send %zd %s\n", n, n < 0 ? life_errname(errno) : "");
	if (n > 0) {
		n = recv(s, buf, sizeof buf, 0);
		printf("recv %zd\n", n);
	}
	close(s);
	return 0;
}
