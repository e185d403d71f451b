/* sigsem: signal-handler semantics a program can observe, printed one per
 * line, so a run under the shim can be compared with a plain run: oldact
 * and signal() report the program's own handlers, SA_SIGINFO handlers get
 * their siginfo, SA_RESETHAND, invalid signals, and a handler that leaves by
 * siglongjmp. Then it makes socket calls (which the shim must audit again
 * after the longjmp). */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t hits, info_code, info_ok;
static sigjmp_buf jb;

static void h1(int sig) { hits++; }
static void h2(int sig) { hits += 10; }
static void hinfo(int sig, siginfo_t *si, void *uc) { info_ok = si && si->si_signo == sig && uc != NULL; info_code = si ? si->si_code : -1; }
static void hjump(int sig) { siglongjmp(jb, 1); }
/* For the kind switch: each handler checks it got its own arguments. */
static volatile sig_atomic_t plain_runs, info_runs, info_bad;
static void hplain(int sig) { plain_runs++; }
static void hinfo2(int sig, siginfo_t *si, void *uc)
{
	if (!si || si->si_signo != sig || !uc)
		info_bad++;
	info_runs++;
}

/* The handler switched between plain and SA_SIGINFO while a child keeps
 * sending the signal: one that arrives during sigaction() runs the old
 * handler or the new, each with its own arguments, never one with the
 * other's. */
static void kind_switch(void)
{
	struct sigaction sa;
	pid_t child, me = getpid();
	int i, status;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = hplain;
	sigaction(SIGWINCH, &sa, NULL);
	child = fork();
	if (child == 0) {
		for (i = 0; i < 4000 && kill(me, SIGWINCH) == 0; i++)
			;
		_exit(0);
	}
	for (i = 0; i < 8000; i++) {
		memset(&sa, 0, sizeof sa);
		if (i & 1) {
			sa.sa_sigaction = hinfo2;
			sa.sa_flags = SA_SIGINFO;
		} else {
			sa.sa_handler = hplain;
		}
		sigaction(SIGWINCH, &sa, NULL);
	}
	waitpid(child, &status, 0);
	signal(SIGWINCH, SIG_DFL);
	printf("kind switch: a handler with the other kind's arguments: %d\n", info_bad);
	fprintf(stderr, "# kind switch: plain %d, info %d\n", plain_runs, info_runs);
}

static const char *name(void *h)
{
	if (h == (void *)h1) return "h1";
	if (h == (void *)h2) return "h2";
	if (h == (void *)hinfo) return "hinfo";
	if (h == (void *)hjump) return "hjump";
	if (h == (void *)SIG_DFL) return "SIG_DFL";
	if (h == (void *)SIG_IGN) return "SIG_IGN";
	return "OTHER";
}

int main(void)
{
	struct sigaction sa, old;
	int r, fd, one = 1;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h1;
	r = sigaction(SIGUSR1, &sa, &old);
	printf("install h1: %d old=%s\n", r, name((void *)old.sa_handler));
	sa.sa_handler = h2;
	r = sigaction(SIGUSR1, &sa, &old);
	printf("install h2: %d old=%s flags=%#x\n", r, name((void *)old.sa_handler), old.sa_flags & ~0x04000000);
	r = sigaction(SIGUSR1, NULL, &old);
	printf("query: %d cur=%s\n", r, name((void *)old.sa_handler));
	raise(SIGUSR1);
	printf("hits after raise: %d\n", hits);

	printf("signal(h2) returned %s\n", name((void *)signal(SIGUSR2, h2)));
	printf("signal(h1) returned %s\n", name((void *)signal(SIGUSR2, h1)));
	printf("signal(SIG_IGN) returned %s\n", name((void *)signal(SIGUSR2, SIG_IGN)));
	printf("signal(SIG_DFL) returned %s\n", name((void *)signal(SIGUSR2, SIG_DFL)));
	errno = 0;
	printf("signal(0) %s errno=%d\n", signal(0, h1) == SIG_ERR ? "SIG_ERR" : "?", errno);

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = hinfo;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, NULL);
	r = sigaction(SIGUSR2, NULL, &old);
	printf("siginfo query: flags_siginfo=%d cur=%s\n", !!(old.sa_flags & SA_SIGINFO), name((void *)old.sa_sigaction));
	raise(SIGUSR2);
	printf("siginfo handler: ok=%d code=%d\n", info_ok, info_code);

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h1;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGHUP, &sa, NULL);
	raise(SIGHUP);
	r = sigaction(SIGHUP, NULL, &old);
	printf("resethand: after one signal cur=%s\n", name((void *)old.sa_handler));

	/* (A bad act pointer crashes inside glibc, which copies it, with or
	 * without the shim: not something to compare.) */
	errno = 0;
	r = sigaction(SIGKILL, &sa, NULL);
	printf("SIGKILL: %d errno=%d\n", r, errno);
	errno = 0;
	r = sigaction(999, &sa, NULL);
	printf("sig 999: %d errno=%d\n", r, errno);
	errno = 12345;
	sa.sa_flags = 0;
	r = sigaction(SIGUSR1, &sa, NULL);
	printf("success keeps errno: %d errno=%d\n", r, errno);

	kind_switch();

	/* A handler that never returns. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = hjump;
	sigaction(SIGALRM, &sa, NULL);
	if (sigsetjmp(jb, 1) == 0) {
		raise(SIGALRM);
		printf("not reached\n");
	}
	printf("left the handler by siglongjmp\n");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	r = setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &(int){ 10 }, sizeof(int));
	printf("setsockopt after longjmp: %d\n", r);
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	close(fd);
	return 0;
}
