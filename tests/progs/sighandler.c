/*
 * sighandler.c: socket calls from a signal handler.
 *
 * POSIX lists socket, connect, setsockopt, close and accept among the
 * async-signal-safe functions, so a host may call them from a signal
 * handler, even one that interrupted malloc. A timer sends SIGALRM every
 * 200 us while the main thread allocates and frees in a loop and makes its
 * own socket calls; the handler makes a UDP socket, connects it and closes
 * it. Prints the number of handler runs (never 0) and exits 0; a shim that
 * calls malloc or takes a lock from inside the handler deadlocks here,
 * which the test sees as a timeout.
 *
 * Usage: sighandler [MILLISECONDS [close]]   (default 1500; "close": the
 * handler only makes a socket and closes it)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t runs, failures;
static struct sockaddr_in dst;
static int close_only;

static void on_alarm(int sig)
{
	int saved = errno, s = socket(AF_INET, SOCK_DGRAM, 0), one = 1;

	if (close_only) {
		if (s < 0)
			failures++;
	} else if (s < 0 || setsockopt(s, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) < 0 ||
		   connect(s, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		failures++;
	}
	if (s >= 0)
		close(s);
	runs++;
	errno = saved;
	(void)sig;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 1500, end;
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct sigaction sa;
	void *p[64];
	long loops = 0;
	int i, s;

	close_only = argc > 2 && !strcmp(argv[2], "close");
	dst.sin_family = AF_INET;
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	dst.sin_port = htons(9);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	end = now() + ms / 1000;
	while (now() < end) {
		for (i = 0; i < 64; i++)
			p[i] = malloc(16 + (size_t)(i * 37 + loops) % 4000);
		for (i = 0; i < 64; i++)
			free(p[i]);
		if (loops++ % 16 == 0) {
			s = socket(AF_INET, SOCK_DGRAM, 0);
			connect(s, (struct sockaddr *)&dst, sizeof(dst));
			close(s);
		}
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	printf("handler ran: %s, failures: %d\n", runs > 0 ? "yes" : "no", (int)failures);
	fprintf(stderr, "# handler runs %d, main loops %ld\n", (int)runs, loops);
	return runs > 0 && failures == 0 ? 0 : 1;
}
