/*
 * life_sigdfl: what a program reads back of its fatal signals' dispositions
 * once the shim is set up (a socket made first), printed so a plain run and
 * a run under the shim can be compared line for line:
 *   life_sigdfl query     SIGTERM, SIGINT, SIGHUP, SIGQUIT as inherited
 *   life_sigdfl set       SIG_DFL set with SA_RESTART and a mask, read back;
 *                         signal(SIG_DFL)'s results around a handler
 *   life_sigdfl serve     a listener, "ready" on stdout, then pause() until
 *                         a signal ends it
 *   life_sigdfl mallocs   the same, while 3 threads malloc and free without
 *                         pause: a signal lands inside malloc, holding its
 *                         arena's lock, often
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include "life_common.h"

static void h(int sig) { (void)sig; }

static void *churn(void *arg)
{
	unsigned n = (unsigned)(uintptr_t)arg;
	void *p[64] = { 0 };

	for (;;) {
		n = n * 1103515245u + 12345u;
		free(p[n % 64]);
		p[n % 64] = malloc(16 + (n >> 16) % 4000);
	}
	return NULL;
}

static void show(const char *what, int sig)
{
	struct sigaction o;

	sigaction(sig, NULL, &o);
	printf("%s %d: %s flags=%#x usr1_in_mask=%d\n", what, sig,
	       (o.sa_flags & SA_SIGINFO) ? "info" : o.sa_handler == SIG_DFL ? "SIG_DFL" :
	       o.sa_handler == SIG_IGN ? "SIG_IGN" : o.sa_handler == h ? "h" : "other",
	       (unsigned)(o.sa_flags & ~0x04000000u /* SA_RESTORER: libc's */), sigismember(&o.sa_mask, SIGUSR1));
}

int main(int argc, char **argv)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);   /* sets the shim up */
	int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT }, i;

	if (argc != 2 || s < 0)
		return 2;
	if (strcmp(argv[1], "query") == 0) {
		for (i = 0; i < 4; i++)
			show("inherited", sigs[i]);
	} else if (strcmp(argv[1], "set") == 0) {
		struct sigaction a = { .sa_handler = SIG_DFL, .sa_flags = SA_RESTART };

		sigemptyset(&a.sa_mask);
		sigaddset(&a.sa_mask, SIGUSR1);
		sigaction(SIGTERM, &a, NULL);
		show("set-dfl", SIGTERM);
		printf("signal(h) returned %s\n", signal(SIGTERM, h) == SIG_DFL ? "SIG_DFL" : "other");
		show("after-h", SIGTERM);
		printf("signal(SIG_DFL) returned %s\n", signal(SIGTERM, SIG_DFL) == h ? "h" : "other");
		printf("signal(SIG_DFL) again returned %s\n", signal(SIGTERM, SIG_DFL) == SIG_DFL ? "SIG_DFL" : "other");
		show("after-dfl", SIGTERM);
	} else if (strcmp(argv[1], "serve") == 0 || strcmp(argv[1], "mallocs") == 0) {
		int port;
		pthread_t t;

		life_listener(16, &port);
		if (argv[1][0] == 'm')
			for (i = 0; i < 3; i++)
				pthread_create(&t, NULL, churn, (void *)(uintptr_t)(i + 1));
		if (argv[1][0] == 'm') {
			/* The main thread blocks them all: a signal for the
			 * process goes to a thread inside malloc. */
			sigset_t all;

			sigfillset(&all);
			pthread_sigmask(SIG_BLOCK, &all, NULL);
		}
		printf("ready %d\n", port);
		fflush(stdout);
		for (;;)
			pause();
	}
	return 0;
}
