/* acc_client: many TCP clients at once for the accept-side tests.
 *   acc_client -p port [-a addr] [-c count] [-s send_after_ms] [-H hold_ms] [-G gap_ms]
 * Starts count non-blocking connects (gap_ms apart, 0 = all at once), sends a
 * short request send_after_ms after its connect started (-1: never, a silent
 * client), reads whatever the server says, and keeps every socket open for
 * hold_ms from the start. Prints "connected N greeted G" on stderr. */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char **argv)
{
	int port = 0, count = 1, send_after = -1, hold = 2000, gap = 0, o, i, connected = 0, greeted = 0;
	const char *addr = "127.0.0.1";
	struct sockaddr_in a = { .sin_family = AF_INET };
	int *fd, *sent, *done, *conn;
	long *t0, start, end;

	while ((o = getopt(argc, argv, "p:a:c:s:H:G:")) != -1) {
		switch (o) {
		case 'p': port = atoi(optarg); break;
		case 'a': addr = optarg; break;
		case 'c': count = atoi(optarg); break;
		case 's': send_after = atoi(optarg); break;
		case 'H': hold = atoi(optarg); break;
		case 'G': gap = atoi(optarg); break;
		default: return 2;
		}
	}
	inet_pton(AF_INET, addr, &a.sin_addr);
	a.sin_port = htons(port);
	fd = calloc(count, sizeof *fd); sent = calloc(count, sizeof *sent);
	done = calloc(count, sizeof *done); conn = calloc(count, sizeof *conn);
	t0 = calloc(count, sizeof *t0);
	start = now_ms();
	for (i = 0; i < count; i++)
		fd[i] = -1;
	end = start + hold;
	while (now_ms() < end) {
		for (i = 0; i < count; i++) {
			struct pollfd p = { .fd = fd[i], .events = POLLIN | POLLOUT };
			if (fd[i] < 0) {
				/* Connection i starts gap_ms * i after the first. */
				if (now_ms() - start < (long)gap * i)
					continue;
				fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
				t0[i] = now_ms();
				connect(fd[i], (struct sockaddr *)&a, sizeof a);
				p.fd = fd[i];
			}
			if (done[i])
				continue;
			if (poll(&p, 1, 0) <= 0)
				continue;
			if (!conn[i] && (p.revents & POLLOUT)) {
				conn[i] = 1;
				connected++;
			}
			if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
				char b[256];
				ssize_t n = read(fd[i], b, sizeof b);
				if (n > 0)
					greeted++;
				if (n == 0 || (n < 0 && errno != EAGAIN))
					done[i] = 1;
			}
			if (conn[i] && !sent[i] && send_after >= 0 && now_ms() - t0[i] >= send_after) {
				if (write(fd[i], "GET / HTTP/1.0\r\n\r\n", 18) > 0)
					sent[i] = 1;
			}
		}
		usleep(count > 50 ? 2000 : 1000);
	}
	fprintf(stderr, "connected %d greeted %d\n", connected, greeted);
	return 0;
}
