/*
 * life_unseen: facts after closes the shim cannot see.
 *   life_unseen fclose|sysclose
 *     A non-blocking connect to a loopback listener whose accept queue is
 *     full (its SYNs are dropped) is closed by fclose(fdopen(fd)) or
 *     syscall(SYS_close, fd), neither of which passes through close().
 *     pipe() then takes the number; 300 ms later the program reads from the
 *     pipe. That read is not the connect completing. Prints "# fd N".
 *   life_unseen relisten
 *     A thread blocks in accept() on listener A; the main thread closes A
 *     (the blocked accept keeps the socket listening), opens listener B,
 *     which takes A's fd number, then connects once to A (the thread accepts
 *     it) and once to B (the main thread accepts it). B had 1 accept.
 *     Prints "# ports A B".
 *   life_unseen dupread
 *     A client connects; the server accepts (nothing to read yet) and dup()s
 *     the accepted socket; the client then speaks first and the server
 *     reads through the copy only. Prints "# port P".
 *   life_unseen dupclose
 *     The same, with the accepted socket closed before the read.
 */
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "life_common.h"

static int conn_to(int port, int flags)
{
	struct sockaddr_in a = life_addr(port);
	int s = socket(AF_INET, SOCK_STREAM | flags, 0);

	if (s < 0 || (connect(s, (struct sockaddr *)&a, sizeof a) && errno != EINPROGRESS)) {
		perror("connect");
		exit(1);
	}
	return s;
}

static int unseen_close(const char *how)
{
	int l, port, s, n, p[2];
	char b;

	l = life_listener(0, &port);
	(void)l;                                /* stays open: its queue stays full */
	conn_to(port, 0);                       /* fills the queue (1 slot) */
	s = conn_to(port, SOCK_NONBLOCK);       /* its SYN is dropped: pending */
	n = s;
	if (!strcmp(how, "fclose")) {
		FILE *f = fdopen(s, "r+");
		if (!f)
			return perror("fdopen"), 1;
		fclose(f);
	} else {
		syscall(SYS_close, s);
	}
	if (pipe(p))
		return perror("pipe"), 1;
	fprintf(stderr, "# fd %d\n", n);
	printf("pipe took the number: %s\n", p[0] == n ? "yes" : "no");
	usleep(300000);
	if (write(p[1], "x", 1) != 1 || read(p[0], &b, 1) != 1)
		return perror("pipe io"), 1;
	printf("read from the pipe: %c\n", b);
	return 0;
}

static int lfd;

static void *acceptor(void *arg)
{
	int a = accept(lfd, NULL, NULL);

	printf("thread accept on the closed listener: %s\n", a >= 0 ? "ok" : life_errname(errno));
	return NULL;
}

static int relisten(void)
{
	int pa, pb, b, c1, c2, a;
	pthread_t t;

	lfd = life_listener(16, &pa);
	if (pthread_create(&t, NULL, acceptor, NULL))
		return 1;
	usleep(150000);                          /* the thread is in accept() */
	int old = lfd;
	close(lfd);
	b = life_listener(16, &pb);
	fprintf(stderr, "# ports %d %d\n", pa, pb);
	printf("B took A's number: %s\n", b == old ? "yes" : "no");
	c1 = conn_to(pa, 0);
	pthread_join(t, NULL);
	c2 = conn_to(pb, 0);
	a = accept(b, NULL, NULL);
	printf("main accept on B: %s\n", a >= 0 ? "ok" : life_errname(errno));
	close(a);
	close(c1);
	close(c2);
	close(b);
	return 0;
}

static int dupread(int closefirst)
{
	int port, l = life_listener(16, &port), c, a, d;
	char buf[16];
	ssize_t n;

	fprintf(stderr, "# port %d\n", port);
	c = conn_to(port, 0);
	a = accept(l, NULL, NULL);              /* nothing to read yet */
	d = dup(a);
	if (closefirst)
		close(a);
	if (write(c, "hello", 5) != 5)          /* the client speaks first */
		return 1;
	n = read(d, buf, sizeof buf);
	printf("read through the dup: %zd\n", n);
	close(d);
	if (!closefirst)
		close(a);
	close(c);
	close(l);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "relisten"))
		return relisten();
	if (!strcmp(argv[1], "dupread"))
		return dupread(0);
	if (!strcmp(argv[1], "dupclose"))
		return dupread(1);
	return unseen_close(argv[1]);
}
