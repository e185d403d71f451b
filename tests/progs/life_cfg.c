/*
 * life_cfg: configuration seen by a host.
 *   life_cfg enabled        prints sockaudit_enabled() (-1 when no shim is
 *                           loaded), then makes one listen() call
 *   life_cfg chdir DIR      chdir(DIR) before the first socket call
 *   life_cfg forkchdir DIR  the parent makes no socket call; a forked child
 *                           chdir()s to DIR, then makes its first one
 */
#include <dlfcn.h>
#include <sys/wait.h>
#include "life_common.h"

static void one_listen(void)
{
	int l = life_listener(4, NULL);

	close(l);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "enabled")) {
		int (*en)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "sockaudit_enabled");

		printf("enabled %d\n", en ? en() : -1);
		one_listen();
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "chdir")) {
		if (chdir(argv[2]))
			return perror("chdir"), 1;
		one_listen();
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "forkchdir")) {
		int st;
		pid_t p = fork();

		if (p == 0) {
			if (chdir(argv[2]))
				_exit(1);
			one_listen();
			printf("child %d\n", (int)getpid());
			exit(0);
		}
		if (p < 0 || waitpid(p, &st, 0) != p)
			return 1;
		return WEXITSTATUS(st);
	}
	return 2;
}
