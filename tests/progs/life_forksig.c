/*
 * life_forksig: fork() inside a SIGALRM handler during a
 * connect loop. The handler forks; the child _exit()s at once, the parent
 * waitpid()s. The main loop connects to a refused port (a failed connect,
 * logged at info) for SECS seconds; the timer fires every millisecond.
 * glibc runs the shim's atfork handlers inside the signal handler: one that
 * waits for a lock the interrupted log write holds hangs the process.
 *   life_forksig SECS REFUSED_PORT
 */
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include "life_common.h"

static volatile sig_atomic_t forks, armed;

static void on_alarm(int sig)
{
	int e = errno;
	pid_t p;

	if (!armed)
		return;
	p = fork();
	if (p == 0)
		_exit(0);
	if (p > 0 && waitpid(p, NULL, 0) == p)
		forks++;
	errno = e;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sockaddr_in a;
	long n = 0, odd = 0;
	double end;

	if (argc != 3 && argc != 4)
		return 2;
	if (argc == 4)   /* the timer's period in microseconds */
		it.it_interval.tv_usec = it.it_value.tv_usec = atoi(argv[3]);
	a = life_addr(atoi(argv[2]));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	end = life_now() + atof(argv[1]);
	armed = 1;
	setitimer(ITIMER_REAL, &it, NULL);
	while (life_now() < end) {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (s < 0)
			continue;
		if (connect(s, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINTR && errno != EALREADY && errno != ECONNREFUSED)
			odd++;   /* anything but refused (or the signal) */
		close(s);
		n++;
	}
	armed = 0;
	setitimer(ITIMER_REAL, &off, NULL);
	printf("unexpected errors: %ld\n", odd);
	fprintf(stderr, "# connects %ld forks %d\n", n, (int)forks);
	return forks > 0 ? 0 : 3;
}
