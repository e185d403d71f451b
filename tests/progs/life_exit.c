/*
 * life_exit: the ways a server ends. It accepts 3
 * connections of its own, then blocks in accept(); a helper thread (with
 * SIGTERM blocked, so the main thread takes it) sends SIGTERM 300 ms later.
 *   life_exit exit     the SIGTERM handler calls exit(0)
 *   life_exit _exit    the handler calls _exit(0)
 *   life_exit fatal    the handler restores SIG_DFL and re-raises: killed by SIGTERM
 *   life_exit return   no signal: main returns 0 after the accepts
 */
#include <pthread.h>
#include <signal.h>
#include "life_common.h"

static const char *mode;

static void on_term(int sig)
{
	if (!strcmp(mode, "exit"))
		exit(0);
	if (!strcmp(mode, "_exit"))
		_exit(0);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void *killer(void *arg)
{
	sigset_t m;

	sigemptyset(&m);
	sigaddset(&m, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &m, NULL);
	usleep(300000);
	kill(getpid(), SIGTERM);
	return NULL;
}

int main(int argc, char **argv)
{
	int l, port, c[3];
	pthread_t t;

	if (argc != 2)
		return 2;
	mode = argv[1];
	signal(SIGTERM, on_term);
	l = life_listener(16, &port);
	for (int i = 0; i < 3; i++) {
		struct sockaddr_in a = life_addr(port);

		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (c[i] < 0 || connect(c[i], (struct sockaddr *)&a, sizeof a))
			return perror("connect"), 1;
		if (accept(l, NULL, NULL) < 0)
			return perror("accept"), 1;
	}
	printf("accepted 3\n");
	fflush(stdout);
	if (!strcmp(mode, "return"))
		return 0;
	if (pthread_create(&t, NULL, killer, NULL))
		return 1;
	accept(l, NULL, NULL);
	printf("accept returned: not expected\n");
	return 1;
}
