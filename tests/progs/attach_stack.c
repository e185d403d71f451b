/* attach_stack: a process for the attach's choice of thread.
 *   attach_stack small|main
 * A second thread accepts on 127.0.0.1 (any port) and closes, 30 s at most;
 * the main thread sleeps, with "small" on a 60 KiB stack of its own mapping
 * (guard pages above and below, as a coroutine's), with "main" on its own.
 * Prints "PORT p TID t" (t: the accepting thread's tid) once listening. */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define PAGE 4096
#define SMALL (60 * 1024)

static int lfd;
static ucontext_t main_ctx, small_ctx;

static void *acceptor(void *arg)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;

	(void)arg;
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 64) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) != 0)
		exit(2);
	printf("PORT %d TID %ld\n", ntohs(a.sin_port), (long)syscall(SYS_gettid));
	fflush(stdout);
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		if (c >= 0)
			close(c);
	}
	return NULL;
}

static void sleep_here(void)
{
	struct timespec end, now;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 30;
	do {
		struct timespec d = { 0, 50 * 1000 * 1000 };
		nanosleep(&d, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec);
}

int main(int argc, char **argv)
{
	pthread_t t;
	char *m;

	if (argc != 2 || (strcmp(argv[1], "small") && strcmp(argv[1], "main"))) {
		fprintf(stderr, "usage: attach_stack small|main\n");
		return 2;
	}
	if (pthread_create(&t, NULL, acceptor, NULL) != 0)
		return 2;
	if (strcmp(argv[1], "main") == 0) {
		sleep_here();
		return 0;
	}
	m = mmap(NULL, SMALL + 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m, PAGE, PROT_NONE) != 0 || mprotect(m + PAGE + SMALL, PAGE, PROT_NONE) != 0)
		return 2;
	getcontext(&small_ctx);
	small_ctx.uc_stack.ss_sp = m + PAGE;
	small_ctx.uc_stack.ss_size = SMALL;
	small_ctx.uc_link = &main_ctx;
	makecontext(&small_ctx, sleep_here, 0);
	swapcontext(&main_ctx, &small_ctx);
	return 0;
}
