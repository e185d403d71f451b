/*
 * life_uring: a server that accepts through io_uring (liburing, which makes
 * its own system calls): a listener made through libc, N accepts submitted
 * as IORING_OP_ACCEPT while a thread connects N times through libc. The
 * shim sees the listener and the connects, never the ring's accepts, and
 * must say so (a blind_spot). Prints "accepted=N ring_fd=FD".
 *   life_uring N            the ring stays open to the end
 *   life_uring N exit       io_uring_queue_exit before returning
 *   life_uring N ext        no connects of its own: prints "port=P" and
 *                           waits for N connects from outside; each
 *                           accepted fd gets TCP_NODELAY through libc;
 *                           the ring is closed, then the listener
 *   life_uring N extclose   as ext without the setsockopt; the listener is
 *                           closed through libc, then the ring
 */
#include <netinet/tcp.h>
#include <liburing.h>
#include <pthread.h>
#include "life_common.h"

static int port, n;

static void *connector(void *arg)
{
	struct sockaddr_in a = life_addr(port);
	int i, s;

	for (i = 0; i < n; i++) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0)
			close(s);
		else if (s >= 0)
			close(s);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	pthread_t t;
	int l, i, got = 0, r;

	const char *mode = argc == 3 ? argv[2] : "";
	int ext = strncmp(mode, "ext", 3) == 0;

	if (argc != 2 && argc != 3)
		return 2;
	n = atoi(argv[1]);
	l = life_listener(n + 16, &port);
	r = io_uring_queue_init(8, &ring, 0);
	if (r < 0) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-r));
		return 3;
	}
	if (ext) {
		printf("port=%d\n", port);
		fflush(stdout);
	} else if (pthread_create(&t, NULL, connector, NULL) != 0)
		return 4;
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_accept(sqe, l, NULL, NULL, 0);
		io_uring_submit(&ring);
		if (io_uring_wait_cqe(&ring, &cqe) == 0) {
			if (cqe->res >= 0) {
				int one = 1;

				got++;
				if (strcmp(mode, "ext") == 0)
					setsockopt(cqe->res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
				close(cqe->res);
			}
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	if (!ext)
		pthread_join(t, NULL);
	printf("accepted=%d ring_fd=%d\n", got, ring.ring_fd);
	if (strcmp(mode, "extclose") == 0) {
		close(l);
		io_uring_queue_exit(&ring);
	} else if (*mode) {
		io_uring_queue_exit(&ring);   /* as every well-behaved program does */
		close(l);
	}
	/* Otherwise the ring stays open to the end, as a server's may. */
	return got == n ? 0 : 1;
}
