/*
 * life_exec: execs /bin/true (in a child, waited for) in the way MODE names,
 * after listening once (so a log file is open at info):
 *   env      fork, execve with an environment of its own (PATH only)
 *   keep     fork, execve with environ (the shim stays: no line expected)
 *   execle   fork, execle with PATH only
 *   unset    fork, unsetenv("LD_PRELOAD"), execv
 *   setenv   fork, setenv a new variable (glibc moves environ to a new
 *            array), unsetenv("LD_PRELOAD"), execv (MARK_CALL=execvp:
 *            execvp) of sh, which exits 0 only if the variable arrived
 *   vfork    vfork, execve with PATH only (a child sharing our memory)
 *   spawn    posix_spawn with PATH only
 *   handler  fork; the child execs from a SIGALRM handler (PATH only)
 * Prints "child PID status N" (the exec'd program's pid and status).
 *   life_exec MODE
 */
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include "life_common.h"

extern char **environ;
static char *env[] = { "PATH=/bin:/usr/bin", NULL };
static char *av[] = { "true", NULL };

static void on_alarm(int sig)
{
	execve("/bin/true", av, env);
	_exit(9);
}

int main(int argc, char **argv)
{
	const char *m = argc == 2 ? argv[1] : "";
	pid_t pid = -1;
	int st = -1, l;

	l = life_listener(8, NULL);
	if (!strcmp(m, "vfork")) {
		pid = vfork();
		if (pid == 0) {
			execve("/bin/true", av, env);
			_exit(9);
		}
	} else if (!strcmp(m, "spawn")) {
		if (posix_spawn(&pid, "/bin/true", NULL, NULL, av, env) != 0)
			pid = -1;
	} else if ((pid = fork()) == 0) {
		if (!strcmp(m, "env"))
			execve("/bin/true", av, env);
		else if (!strcmp(m, "keep"))
			execve("/bin/true", av, environ);
		else if (!strcmp(m, "execle"))
			execle("/bin/true", "true", (char *)0, env);
		else if (!strcmp(m, "unset")) {
			unsetenv("LD_PRELOAD");
			execv("/bin/true", av);
		} else if (!strcmp(m, "setenv")) {
			char *sh[] = { "sh", "-c", "test \"$SA_LIFE_MARK\" = kept", NULL };
			const char *how = getenv("MARK_CALL");

			setenv("SA_LIFE_MARK", "kept", 1);
			unsetenv("LD_PRELOAD");
			if (how && !strcmp(how, "execvp"))
				execvp("sh", sh);
			else
				execv("/bin/sh", sh);
		} else if (!strcmp(m, "handler")) {
			signal(SIGALRM, on_alarm);
			alarm(1);
			for (;;)
				pause();
		}
		_exit(9);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return perror("spawn/wait"), 1;
	printf("child %ld status %d\n", (long)pid, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	close(l);
	return 0;
}
