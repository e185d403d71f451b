/* forkpages: a fork-per-connection server with a shell per connection, as
 * socat fork,SYSTEM: runs it, stopped where each process has done its part
 * so that a test can read which pages each one wrote after its fork
 * (/proc/PID/pagemap, tests/integration/layout.sh).
 *
 * The parent listens, accepts one connection (from a client process of its
 * own), forks the connection child
 * (C1) and closes the connection. C1 closes the listener, makes three
 * socket pairs (fds up to 10, as socat's child does), closes two ends and
 * forks the SYSTEM child (C2), then closes its side of the pair it hands
 * over. C2 puts that pair on stdin and stdout and closes the rest, as before
 * an exec. Each prints "ROLE PID" on stderr and waits for SIGTERM. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *role)
{
	fprintf(stderr, "%s %d\n", role, (int)getpid());
	fflush(stderr);
}

int main(void)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;
	int l, a, sp1[2], sp2[2], sp3[2];
	pid_t c, c1, c2;
	sigset_t term;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);   /* each process waits for it below */
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(l, 8) != 0 ||
	    getsockname(l, (struct sockaddr *)&sin, &len) != 0)
		return 1;
	/* The client is a process of its own: the server makes no connect. */
	c = fork();
	if (c == 0) {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (s < 0 || connect(s, (struct sockaddr *)&sin, sizeof sin) != 0)
			_exit(1);
		sigwaitinfo(&term, NULL);
		_exit(0);
	}
	a = accept(l, NULL, NULL);
	if (a < 0)
		return 1;
	c1 = fork();
	if (c1 < 0)
		return 1;
	if (c1 == 0) {
		close(l);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp1) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp2) != 0 ||
		    socketpair(AF_UNIX, SOCK_DGRAM, 0, sp3) != 0)
			_exit(1);
		close(sp2[1]);
		close(sp3[1]);
		c2 = fork();
		if (c2 == 0) {
			dup2(sp1[0], 0);
			dup2(sp1[0], 1);
			close(sp1[0]);
			close(sp1[1]);
			close(sp2[0]);
			close(sp3[0]);
			report("C2");
			sigwaitinfo(&term, NULL);
			_exit(0);
		}
		close(sp1[0]);
		report("C1");
		sigwaitinfo(&term, NULL);
		if (c2 > 0) {
			kill(c2, SIGTERM);
			waitpid(c2, NULL, 0);
		}
		_exit(0);
	}
	close(a);
	report("P");
	sigwaitinfo(&term, NULL);
	kill(c1, SIGTERM);
	waitpid(c1, NULL, 0);
	kill(c, SIGTERM);
	waitpid(c, NULL, 0);
	return 0;
}
