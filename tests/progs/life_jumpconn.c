/*
 * life_jumpconn: a blocking connect left by siglongjmp out of a SIGALRM
 * handler, as wget's --connect-timeout does (gnulib run_with_timeout:
 * signal(SIGALRM, h), so SA_RESTART; sigsetjmp(env, 1); setitimer; the
 * call; the handler siglongjmp()s and the call never returns). The peer is
 * a stalled listener (fullq_server: its SYNs are dropped). After the jump:
 *   close  restore SIG_DFL and close the socket (what wget does)
 *   next   restore SIG_DFL, make another socket call first (socket+close
 *          of a new socket), then close the first
 *   exit   restore SIG_DFL and exit(4) with the socket open
 * Prints "timeout" when the jump came, "connected"/errno otherwise.
 *   life_jumpconn PORT MS close|next|exit
 */
#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>
#include "life_common.h"

static sigjmp_buf env;

static void on_alarm(int sig)
{
	siglongjmp(env, -1);
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 0 }, { 0, 0 } };
	struct sockaddr_in a;
	int ms, r;
	volatile int s;

	if (argc != 4)
		return 2;
	a = life_addr(atoi(argv[1]));
	ms = atoi(argv[2]);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return perror("socket"), 1;
	signal(SIGALRM, on_alarm);
	if (sigsetjmp(env, 1) != 0) {
		signal(SIGALRM, SIG_DFL);
		printf("timeout\n");
		fflush(stdout);
		if (strcmp(argv[3], "exit") == 0)
			exit(4);
		if (strcmp(argv[3], "next") == 0)
			close(socket(AF_INET, SOCK_STREAM, 0));
		close(s);
		return 4;
	}
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	r = connect(s, (struct sockaddr *)&a, sizeof a);
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	printf(r == 0 ? "connected\n" : "connect %s\n", life_errname(errno));
	close(s);
	return 0;
}
