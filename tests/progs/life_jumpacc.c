/*
 * life_jumpacc: a blocking accept left by siglongjmp out of a SIGALRM
 * handler (the gnulib run_with_timeout pattern of life_jumpconn.c, around
 * accept): a loopback listener nobody connects to, the handler jumps after
 * MS milliseconds; then the listener is closed (close) or the process
 * exits with it open (exit). Prints "timeout" when the jump came.
 *   life_jumpacc MS close|exit
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
	volatile int l;
	int ms;

	if (argc != 3)
		return 2;
	ms = atoi(argv[1]);
	l = life_listener(8, NULL);
	signal(SIGALRM, on_alarm);
	if (sigsetjmp(env, 1) != 0) {
		signal(SIGALRM, SIG_DFL);
		printf("timeout\n");
		fflush(stdout);
		if (strcmp(argv[2], "exit") == 0)
			exit(4);
		close(l);
		return 4;
	}
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	accept(l, NULL, NULL);
	printf("accepted\n");
	return 0;
}
