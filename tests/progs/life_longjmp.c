/*
 * life_longjmp: siglongjmp out of a SIGALRM handler.
 * A timer fires every 300 us for SECS seconds; its handler siglongjmp()s back
 * to the top of a loop of socket calls that the shim logs at info and trace
 * (listen is logged on every call; a failing setsockopt too). Prints how many
 * iterations completed while the timer ran, then runs 200 more without the
 * timer: a lock left held by a jumped-over log write hangs there.
 *   life_longjmp SECS
 */
#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>
#include "life_common.h"

static sigjmp_buf env;
static volatile sig_atomic_t armed, jumps;
static volatile int cur = -1;

static void on_alarm(int sig)
{
	if (!armed)
		return;
	jumps++;
	siglongjmp(env, 1);
}

static void one(void)
{
	int v = 1;

	cur = socket(AF_INET, SOCK_STREAM, 0);
	if (cur < 0)
		return;
	setsockopt(cur, SOL_SOCKET, SO_REUSEADDR, &v, 1);   /* EINVAL: logged */
	listen(cur, 8);                                     /* logged */
	int t = cur;
	cur = -1;
	close(t);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 300 }, { 0, 300 } }, off = { { 0, 0 }, { 0, 0 } };
	volatile long iters = 0;
	double end;

	if (argc != 2)
		return 2;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	end = life_now() + atof(argv[1]);
	armed = 1;
	setitimer(ITIMER_REAL, &it, NULL);
	sigsetjmp(env, 1);
	if (cur >= 0) {          /* jumped out between socket() and close() */
		int t = cur;
		cur = -1;
		close(t);
	}
	while (life_now() < end) {
		one();
		iters++;
	}
	armed = 0;
	setitimer(ITIMER_REAL, &off, NULL);
	for (int i = 0; i < 200; i++)
		one();
	printf("iterations %ld\n", (long)iters);
	fprintf(stderr, "# jumps %d\n", (int)jumps);
	return 0;
}
