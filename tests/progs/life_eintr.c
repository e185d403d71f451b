/*
 * life_eintr: a blocking connect to a stalled peer (a
 * listener whose accept queue is full, so its SYNs are dropped: see
 * fullq_server.c) interrupted by SIGALRM after MS milliseconds, the handler
 * installed without SA_RESTART (as wget's --connect-timeout does).
 * connect() returns -1 EINTR; the program closes the socket and exits.
 *   life_eintr PORT MS
 */
#include <signal.h>
#include <sys/time.h>
#include "life_common.h"

static void on_alarm(int sig)
{
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };   /* no SA_RESTART */
	struct itimerval it = { { 0, 0 }, { 0, 0 } };
	struct sockaddr_in a;
	int s, r, e = 0, ms;

	if (argc != 3)
		return 2;
	a = life_addr(atoi(argv[1]));
	ms = atoi(argv[2]);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return perror("socket"), 1;
	setitimer(ITIMER_REAL, &it, NULL);
	r = connect(s, (struct sockaddr *)&a, sizeof a);
	if (r < 0)
		e = errno;
	printf("connect %d %s\n", r, life_errname(e));
	close(s);
	return 0;
}
