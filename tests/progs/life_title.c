/*
 * life_title.c: a daemon that writes its process title over its start-up
 * strings (argv and the environment after it, as nginx, postgres and
 * sendmail do) before its first socket call, then forks a child that
 * accepts one connection. The settings the process started with must still
 * hold: each process's lines in its own %p file.
 * Usage: life_title. Prints "# child PID".
 */
#include <sys/wait.h>

#include "life_common.h"

int main(int argc, char **argv)
{
	extern char **environ;
	char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]);
	struct sockaddr_in a = life_addr(0);
	socklen_t alen = sizeof a;
	int i, l, c, s;
	pid_t pid;

	for (i = 0; environ[i]; i++)
		if (environ[i] == end + 1)
			end = environ[i] + strlen(environ[i]);
	memset(start, 'x', (size_t)(end - start));
	snprintf(start, (size_t)(end - start), "title: master");
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 8) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) != 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		c = accept(l, NULL, NULL);
		close(c);
		_exit(c < 0);
	}
	printf("# child %d\n", (int)pid);
	fflush(stdout);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0)
		return 1;
	waitpid(pid, &i, 0);
	close(s);
	return WIFEXITED(i) && WEXITSTATUS(i) == 0 ? 0 : 1;
}
