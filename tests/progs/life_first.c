/*
 * life_first: what can land while the library sets itself up at the
 * program's first socket call. Each mode makes the program's first socket
 * calls in one of the ways a host can interrupt, race or outlive the
 * set-up, and prints what it saw (the test compares with the log):
 *   jump       SIGALRM every 50 us siglongjmps while 2000 rounds of
 *              socket/listen/close run, then 5 rounds with the timer off;
 *              prints "listens N" (listen calls that returned 0 and were
 *              counted before a jump could skip the count)
 *   handler    the same timer's handler makes socket calls itself (no jump)
 *   threads    32 threads released together make the process's first calls
 *              (socket + listen each); prints "listens 32"
 *   cancel     a thread with a pending deferred cancel makes the first
 *              socket call; prints "socket returned" when it did, then the
 *              main thread listens and accepts 20 of its own connects
 *   forkthread another thread forks 17 times while the main thread's first
 *              call sets up; each child listens and accepts 3
 *   rawclone   listens, accepts 20 connects, each handled by a process made
 *              with syscall(SYS_clone, SIGCHLD) (vsftpd's way); prints
 *              "# session PID" per child
 *   asmclone   the same with the clone system call in inline assembly, no
 *              libc call at all (x86_64 and aarch64)
 *   inhandler  every socket call (listen, 20 connects and accepts) made in
 *              a SIGUSR1 handler
 *   sigmask    all signals blocked and SIGUSR1 read from a signalfd; prints
 *              "mask kept" when the first calls left the mask as it was
 *   exitjump   a SIGALRM handler that _exit(3)s while the first calls run
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include "life_common.h"

static sigjmp_buf env;
static volatile sig_atomic_t armed;
static volatile int cur = -1;
static volatile long listens;

static void one_round(void)
{
	cur = socket(AF_INET, SOCK_STREAM, 0);
	if (cur < 0)
		return;
	if (listen(cur, 8) == 0)
		listens++;
	int t = cur;
	cur = -1;
	close(t);
}

static void on_alarm_jump(int sig)
{
	if (armed)
		siglongjmp(env, 1);
}

static void timer(long us)
{
	struct itimerval it = { { 0, us }, { 0, us } };

	setitimer(ITIMER_REAL, &it, NULL);
}

static int mode_jump(void)
{
	struct sigaction sa = { .sa_handler = on_alarm_jump };
	volatile int i = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	if (sigsetjmp(env, 1) == 0) {    /* the jump's target first, then the timer */
		armed = 1;
		timer(50);
	}
	if (cur >= 0) {
		int t = cur;
		cur = -1;
		close(t);
	}
	while (i < 2000) {
		i++;
		one_round();
	}
	armed = 0;
	timer(0);
	for (int k = 0; k < 5; k++)
		one_round();
	printf("listens %ld\n", listens);
	return 0;
}

static volatile long handler_calls;
static void on_alarm_calls(int sig)
{
	int e = errno, s = socket(AF_INET, SOCK_STREAM, 0);

	if (s >= 0) {
		handler_calls++;
		close(s);
	}
	errno = e;
}

static int mode_handler(void)
{
	struct sigaction sa = { .sa_handler = on_alarm_calls, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	timer(50);
	for (int i = 0; i < 2000; i++)
		one_round();
	timer(0);
	printf("listens %ld\n", listens);
	printf("# handler calls %ld\n", handler_calls);
	return 0;
}

static pthread_barrier_t bar;
static void *racer(void *p)
{
	pthread_barrier_wait(&bar);
	one_round();
	return NULL;
}

static int mode_threads(void)
{
	pthread_t t[32];

	pthread_barrier_init(&bar, NULL, 32);
	for (int i = 0; i < 32; i++)
		pthread_create(&t[i], NULL, racer, NULL);
	for (int i = 0; i < 32; i++)
		pthread_join(t[i], NULL);
	printf("listens %ld\n", listens);
	return 0;
}

/* Accepts n of its own connects on l (a client thread connects). */
static int accept_own(int l, int port, int n)
{
	int got = 0;

	for (int i = 0; i < n; i++) {
		struct sockaddr_in a = life_addr(port);
		int c = socket(AF_INET, SOCK_STREAM, 0), s;

		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) != 0)
			return got;
		s = accept(l, NULL, NULL);
		if (s >= 0) {
			got++;
			close(s);
		}
		close(c);
	}
	return got;
}

static volatile int socket_returned = -2;
static void *cancelled(void *p)
{
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
	pthread_cancel(pthread_self());    /* pending: acted on at the next cancellation point */
	socket_returned = socket(AF_INET, SOCK_STREAM, 0);
	close(socket_returned);            /* a cancellation point: the thread ends here */
	return NULL;
}

static int mode_cancel(void)
{
	pthread_t t;
	void *r;
	int port, l;

	pthread_create(&t, NULL, cancelled, NULL);
	pthread_join(t, &r);
	printf("socket returned %s\n", socket_returned >= 0 ? "a fd" : "no fd");
	printf("cancelled %s\n", r == PTHREAD_CANCELED ? "yes" : "no");
	l = life_listener(64, &port);
	printf("accepted %d\n", accept_own(l, port, 20));
	return 0;
}

static void child_work(void)
{
	int port, l = life_listener(16, &port);

	accept_own(l, port, 3);
	close(l);
}

static volatile int go;
static void *forker(void *p)
{
	int n = 0;

	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	for (int i = 0; i < 17; i++) {
		pid_t c = fork();

		if (c == 0) {
			child_work();
			_exit(0);
		}
		if (c > 0)
			n++;
	}
	return (void *)(long)n;
}

static int mode_forkthread(void)
{
	pthread_t t;
	void *n;
	int st, ok = 0;

	pthread_create(&t, NULL, forker, NULL);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	one_round();                     /* the first call: the set-up runs now */
	pthread_join(t, &n);
	while (wait(&st) > 0)
		ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	printf("children %ld ok %d\n", (long)n, ok);
	return 0;
}

static long asm_clone_sigchld(void)
{
#if defined(__x86_64__)
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_clone), "D"((long)SIGCHLD), "S"(0L), "d"(0L) : "rcx", "r11",
			 "r10", "r8", "memory");
	return r;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_clone;
	register long x0 __asm__("x0") = SIGCHLD;
	register long x1 __asm__("x1") = 0, x2 __asm__("x2") = 0, x3 __asm__("x3") = 0, x4 __asm__("x4") = 0;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
	return x0;
#else
	return syscall(SYS_clone, SIGCHLD, 0L, 0L, 0L, 0L);
#endif
}

/* The listener accepts; each session runs in a process of its own, which
 * makes one refused connect (a line of its own, at info) and exits. */
static int mode_clone(int in_asm)
{
	int port, l = life_listener(64, &port), st, n = 0;
	struct sockaddr_in refused = life_addr(1);

	for (int i = 0; i < 20; i++) {
		struct sockaddr_in a = life_addr(port);
		int c = socket(AF_INET, SOCK_STREAM, 0), s;
		long pid;

		connect(c, (struct sockaddr *)&a, sizeof a);
		s = accept(l, NULL, NULL);
		fflush(stdout);
		pid = in_asm ? asm_clone_sigchld() : syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
		if (pid == 0) {
			int r = socket(AF_INET, SOCK_STREAM, 0);

			connect(r, (struct sockaddr *)&refused, sizeof refused);
			close(r);
			close(s);
			exit(0);
		}
		if (pid > 0) {
			printf("# session %ld\n", pid);
			n++;
		}
		close(s);
		close(c);
	}
	while (wait(&st) > 0)
		;
	printf("sessions %d\n", n);
	return 0;
}

static volatile int handled;
static void on_usr1(int sig)
{
	int port, l = life_listener(64, &port);

	handled = accept_own(l, port, 20);
	close(l);
}

static int mode_inhandler(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	printf("accepted %d\n", handled);
	return 0;
}

static int mode_sigmask(void)
{
	sigset_t all, before, after;
	struct signalfd_siginfo si;
	int fd, port, l;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	sigprocmask(SIG_SETMASK, NULL, &before);
	fd = signalfd(-1, &all, 0);
	l = life_listener(16, &port);          /* the first socket call */
	sigprocmask(SIG_SETMASK, NULL, &after);
	printf("mask %s\n", memcmp(&before, &after, sizeof before) ? "changed" : "kept");
	printf("accepted %d\n", accept_own(l, port, 3));
	kill(getpid(), SIGUSR1);
	if (read(fd, &si, sizeof si) == sizeof si)
		printf("signalfd got %u\n", si.ssi_signo);
	return 0;
}

static void on_alarm_exit(int sig)
{
	static int n;

	if (++n == 20) {
		char m[64];
		int k = snprintf(m, sizeof m, "exiting in handler after %ld listens\n", listens);   /* no lock: safe enough here */

		write(1, m, (size_t)k);
		_exit(3);
	}
}

static int mode_exitjump(void)
{
	struct sigaction sa = { .sa_handler = on_alarm_exit, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	timer(50);
	for (;;)
		one_round();
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(m, "jump"))
		return mode_jump();
	if (!strcmp(m, "handler"))
		return mode_handler();
	if (!strcmp(m, "threads"))
		return mode_threads();
	if (!strcmp(m, "cancel"))
		return mode_cancel();
	if (!strcmp(m, "forkthread"))
		return mode_forkthread();
	if (!strcmp(m, "rawclone"))
		return mode_clone(0);
	if (!strcmp(m, "asmclone"))
		return mode_clone(1);
	if (!strcmp(m, "inhandler"))
		return mode_inhandler();
	if (!strcmp(m, "sigmask"))
		return mode_sigmask();
	if (!strcmp(m, "exitjump"))
		return mode_exitjump();
	fprintf(stderr, "usage: life_first MODE\n");
	return 2;
}
