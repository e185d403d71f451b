/*
 * syn_loop_client.c: the tight connect/close loop of the "random SYN drops
 * causing connect() delays" report (reference/studies/random_syn_drops_3s_connect.txt).
 *   syn_loop_client HOST PORT [COUNT=1000] [DELAY_MS=0] [LINGER_S=-1]
 * One line per connect, as in the study, plus the connect() time alone:
 *   [i] LOCALPORT-> Time to open socket (clock): MS connect_ms X.X
 * LINGER_S >= 0 sets SO_LINGER {1, LINGER_S} before connect (the study:
 * "Enabling SO_LINGER on the client side will make the issue disappear").
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct sockaddr_in srv = { .sin_family = AF_INET }, local;
	int count = argc > 3 ? atoi(argv[3]) : 1000, delay = argc > 4 ? atoi(argv[4]) : 0;
	int linger_s = argc > 5 ? atoi(argv[5]) : -1, i;

	if (argc < 3 || inet_pton(AF_INET, argv[1], &srv.sin_addr) != 1) {
		fprintf(stderr, "usage: %s HOST PORT [COUNT=1000] [DELAY_MS=0] [LINGER_S=-1]\n", argv[0]);
		return 2;
	}
	srv.sin_port = htons((unsigned short)atoi(argv[2]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < count; i++) {
		socklen_t len = sizeof local;
		double start = now_ms(), c0, c1;
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (s < 0) {
			perror("socket");
			return 1;
		}
		if (linger_s >= 0) {
			struct linger lg = { .l_onoff = 1, .l_linger = linger_s };
			setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		}
		c0 = now_ms();
		if (connect(s, (struct sockaddr *)&srv, sizeof srv) != 0) {
			perror("connect");
			return 1;
		}
		c1 = now_ms();
		getsockname(s, (struct sockaddr *)&local, &len);
		close(s);
		printf("[%d] %u-> Time to open socket (clock): %d connect_ms %.1f\n", i,
		       ntohs(local.sin_port), (int)(now_ms() - start), c1 - c0);
		if (delay > 0)
			usleep((useconds_t)delay * 1000);
	}
	return 0;
}
