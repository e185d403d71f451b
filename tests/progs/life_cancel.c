/*
 * life_cancel: pthread_cancel of threads that make
 * socket calls. ROUNDS times: start two workers that loop socket,
 * setsockopt (one that fails, so the shim logs it every time at info),
 * connect to a refused port (logged as failed) and accept on a
 * non-blocking listener; the main thread waits a random 0-2 ms, cancels and
 * joins them. Then it calls setsockopt once more and prints "done".
 * A shim that holds a lock across a cancellation point (write(2)) hangs here.
 *   life_cancel ROUNDS REFUSED_PORT
 */
#include <pthread.h>
#include "life_common.h"

static int refused_port;

static void close_it(void *p)
{
	int *fd = p;

	if (*fd >= 0)
		close(*fd);
}

static void *worker(void *arg)
{
	int l = *(int *)arg, s = -1;
	struct sockaddr_in a = life_addr(refused_port);

	pthread_cleanup_push(close_it, &s);
	for (;;) {
		int v = 4096;
		int c;

		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0)
			continue;
		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, 1);  /* EINVAL: logged each time */
		connect(s, (struct sockaddr *)&a, sizeof a);
		c = accept(l, NULL, NULL);                   /* EAGAIN */
		if (c >= 0)
			close(c);
		int t = s;
		s = -1;
		close(t);
		pthread_testcancel();
	}
	pthread_cleanup_pop(0);
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds, i, l, s, v = 1;
	pthread_t t[2];

	if (argc != 3)
		return 2;
	rounds = atoi(argv[1]);
	refused_port = atoi(argv[2]);
	srand(15);
	l = life_listener(16, NULL);
	fcntl(l, F_SETFL, O_NONBLOCK);
	for (i = 0; i < rounds; i++) {
		for (int k = 0; k < 2; k++)
			if (pthread_create(&t[k], NULL, worker, &l))
				return perror("pthread_create"), 1;
		usleep((useconds_t)(rand() % 2000));
		for (int k = 0; k < 2; k++) {
			pthread_cancel(t[k]);
			pthread_join(t[k], NULL);
		}
	}
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &v, sizeof v))
		return perror("final setsockopt"), 1;
	close(s);
	printf("done %d rounds\n", rounds);
	return 0;
}
