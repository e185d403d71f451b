/*
 * life_replant: the log file is lost in mid-life and another user plants a
 * file at its path before the shim opens it again. After N connects (their
 * lines go to the log), the program (root) removes the log file, a child
 * that became nobody creates a 0666 file there with "planted", and the
 * program closes every fd from 3 (close_range: the shim's log fd has
 * nowhere to move), then makes N more connects: their lines may not go
 * into nobody's file. Prints "connects=2N".
 *   life_replant LOGPATH N
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "life_common.h"

static int round_of(int n)
{
	int port, l = life_listener(n + 8, &port), i, ok = 0;
	struct sockaddr_in a = life_addr(port);

	for (i = 0; i < n; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0), c;

		if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0 && (c = accept(l, NULL, NULL)) >= 0) {
			ok++;
			close(c);
		}
		if (s >= 0)
			close(s);
	}
	close(l);
	return ok;
}

int main(int argc, char **argv)
{
	int n, got, st, fd;
	pid_t pid;

	if (argc != 3)
		return 2;
	n = atoi(argv[2]);
	got = round_of(n);
	unlink(argv[1]);
	if ((pid = fork()) == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd < 0 || fchmod(fd, 0666) != 0 || write(fd, "planted\n", 8) != 8)
			_exit(4);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return fprintf(stderr, "planting child failed\n"), 1;
	syscall(SYS_close_range, 3, ~0U, 0);
	got += round_of(n);
	printf("connects=%d\n", got);
	return got == 2 * n ? 0 : 1;
}
