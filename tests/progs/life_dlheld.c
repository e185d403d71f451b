/*
 * life_dlheld.c: a child forked while another thread is inside
 * dl_iterate_phdr. glibc's fork resets the loader's dl_load_lock in the
 * child but not the lock dl_iterate_phdr holds, so anything in that child
 * that walks the loaded objects waits forever. The child here makes only
 * calls a forked child of a threaded program may make (socket, listen,
 * connect, accept, close); under the shim it must not hang either.
 *
 *   life_dlheld after    the first socket call (the set-up) is made first;
 *                        then a thread holds dl_iterate_phdr while the main
 *                        thread forks
 *   life_dlheld during   a thread holds dl_iterate_phdr, the main thread's
 *                        first socket call (the set-up) waits on it, and a
 *                        third thread forks meanwhile
 *
 * The child listens, waits 1.2 s (with SOCKAUDIT_STATS_INTERVAL=1 its next
 * audited call starts the shim's live thread) and accepts 3 of its own
 * connects. Prints "child ok" or "child hung" (killed after 5 s); exits 0
 * either way.
 */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include "life_common.h"

static volatile int inside, release;

static int hold(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info, (void)size, (void)data;
	__atomic_store_n(&inside, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&release, __ATOMIC_ACQUIRE))
		usleep(1000);
	return 1;   /* one object is enough: the lock is held until here */
}

static void *holder(void *p)
{
	(void)p;
	dl_iterate_phdr(hold, NULL);
	return NULL;
}

static void child(void)
{
	int port, l = life_listener(8, &port), got = 0;

	usleep(1200 * 1000);
	for (int i = 0; i < 3; i++) {
		struct sockaddr_in a = life_addr(port);
		int c = socket(AF_INET, SOCK_STREAM, 0), s;

		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) != 0)
			_exit(2);
		if ((s = accept(l, NULL, NULL)) >= 0) {
			got++;
			close(s);
		}
		close(c);
	}
	_exit(got == 3 ? 0 : 3);
}

/* Forks, waits up to 5 s for the child, says how it ended. */
static void *forker(void *p)
{
	pid_t c;
	int st = 0;

	(void)p;
	while (!__atomic_load_n(&inside, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(100 * 1000);   /* "during": the main thread's first call is waiting by now */
	c = fork();
	if (c == 0)
		child();
	for (int i = 0; i < 500 && waitpid(c, &st, WNOHANG) == 0; i++)
		usleep(10 * 1000);
	if (waitpid(c, &st, WNOHANG) == 0) {
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
		printf("child hung\n");
	} else
		printf(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "child ok\n" : "child failed %d\n", st);
	fflush(stdout);
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t h, f;
	int during = argc > 1 && !strcmp(argv[1], "during");

	if (!during)
		close(socket(AF_INET, SOCK_STREAM, 0));   /* the set-up, now */
	pthread_create(&h, NULL, holder, NULL);
	pthread_create(&f, NULL, forker, NULL);
	if (during) {
		while (!__atomic_load_n(&inside, __ATOMIC_ACQUIRE))
			usleep(1000);
		close(socket(AF_INET, SOCK_STREAM, 0));   /* the set-up waits on the holder */
	}
	pthread_join(f, NULL);
	pthread_join(h, NULL);
	return 0;
}
