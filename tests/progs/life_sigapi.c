/*
 * life_sigapi: the signals API seen from a handler.
 * The SIGUSR1 handler asks sigaction(sig, NULL, &old) for the current
 * handler (plainly: itself), re-installs itself with signal(sig, h) (plainly
 * returns itself) and connects to a refused port (a failed connect, logged at
 * info when audited). Raised RUNS times; one line per run.
 *   life_sigapi RUNS REFUSED_PORT
 */
#include <signal.h>
#include "life_common.h"

#define MAXRUNS 64
static struct sockaddr_in target;
static volatile int run, same_sa[MAXRUNS], same_sig[MAXRUNS], cerr[MAXRUNS];

static void h(int sig)
{
	struct sigaction old;
	int s, e = errno;

	sigaction(sig, NULL, &old);
	same_sa[run] = old.sa_handler == h;
	same_sig[run] = signal(sig, h) == h;
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s >= 0) {
		cerr[run] = connect(s, (struct sockaddr *)&target, sizeof target) ? errno : 0;
		close(s);
	}
	errno = e;
}

int main(int argc, char **argv)
{
	int runs;

	if (argc != 3)
		return 2;
	runs = atoi(argv[1]);
	if (runs > MAXRUNS)
		runs = MAXRUNS;
	target = life_addr(atoi(argv[2]));
	signal(SIGUSR1, h);
	for (run = 0; run < runs; run++)
		raise(SIGUSR1);
	for (int i = 0; i < runs; i++)
		printf("run %d: sigaction old is h %d, signal() returned h %d, connect %s\n",
		       i, same_sa[i], same_sig[i], life_errname(cerr[i]));
	return 0;
}
