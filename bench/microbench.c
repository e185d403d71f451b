/*
 * microbench.c: per-call cost of the shim's wrappers, for callgrind.
 *
 * Usage: microbench MODE N
 * Runs the call MODE names N times. Each measured call sits alone in an
 * op_* function that is never inlined, so bench/callgrind.sh can count
 * exactly its instructions (callgrind --toggle-collect=op_*), with and
 * without LD_PRELOAD=libsockaudit.so. The setup around each call (a byte
 * into a pipe, a client connect before an accept) is outside op_* and not
 * counted. Running N and 2N iterations and differencing the totals cancels
 * one-time costs (lazy binding, the shim's own init).
 *
 * Mode "mem" does no loop: it opens a few sockets, moves one to the highest
 * fd RLIMIT_NOFILE allows, and prints VmRSS, VmSize and Private_Dirty in kB, so
 * bench/mem.sh can compare the shim's memory at different fd limits.
 *
 * This program must never fail silently: any unexpected result exits 1
 * with a message, so a broken shim cannot look fast.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define OP __attribute__((noinline, noclone, used))

static void die(const char *what)
{
	fprintf(stderr, "microbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The measured calls. Extern and noinline so their names survive -O2. */
OP ssize_t op_read(int fd, void *buf, size_t n) { return read(fd, buf, n); }
OP ssize_t op_write(int fd, const void *buf, size_t n) { return write(fd, buf, n); }
OP ssize_t op_tcp_read(int fd, void *buf, size_t n) { return read(fd, buf, n); }
OP ssize_t op_tcp_write(int fd, const void *buf, size_t n) { return write(fd, buf, n); }
OP ssize_t op_recv(int fd, void *buf, size_t n) { return recv(fd, buf, n, 0); }
OP ssize_t op_send(int fd, const void *buf, size_t n) { return send(fd, buf, n, 0); }
OP int op_setsockopt(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val));
}
OP int op_accept4(int lfd) { return accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }
OP int op_socket(void) { return socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); }
OP int op_close(int fd) { return close(fd); }
OP int op_connect(int fd, const struct sockaddr_in *a)
{
	return connect(fd, (const struct sockaddr *)a, sizeof(*a));
}

/* A TCP listener on 127.0.0.1, an ephemeral port; *addr gets its address. */
static int listener(struct sockaddr_in *addr, int backlog, int nonblock)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);

	if (fd < 0)
		die("socket");
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) < 0)
		die("bind");
	if (listen(fd, backlog) < 0)
		die("listen");
	if (getsockname(fd, (struct sockaddr *)addr, &len) < 0)
		die("getsockname");
	return fd;
}

static int client(const struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0)
		die("connect");
	return fd;
}

/* Close with an RST (SO_LINGER 0) so thousands of loop connections leave no
 * TIME_WAIT behind to exhaust the ephemeral ports. */
static void close_rst(int fd)
{
	struct linger l = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

static void print_mem(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		die("/proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6) || !strncmp(line, "VmSize:", 7))
			fputs(line, stdout);
	fclose(f);
	/* Pages this process wrote and alone holds (heap, data, relocations).
	 * Private_Clean is left out: it counts library pages no other process
	 * happens to map right now, which is not memory the shim owns. */
	if ((f = fopen("/proc/self/smaps_rollup", "r")) != NULL) {
		long priv = 0, v;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Private_Dirty: %ld", &v) == 1)
				priv += v;
		fclose(f);
		printf("Private: %ld kB\n", priv);
	}
}

static int mode_mem(void)
{
	struct sockaddr_in a;
	struct rlimit rl;
	int lfd = listener(&a, 16, 0);
	int c = client(&a);
	int s = accept(lfd, NULL, NULL);
	int high, one = 1;

	if (s < 0)
		die("accept");
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("getrlimit");
	/* A socket at the highest fd number the limit allows: the fd table must
	 * cope with it without allocating for every number below. */
	high = (int)(rl.rlim_cur > 1u << 30 ? 1u << 30 : rl.rlim_cur) - 1;
	if (dup2(c, high) < 0)
		die("dup2 to the highest fd");
	if (setsockopt(high, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		die("setsockopt on the highest fd");
	printf("nofile: %lu\nhigh_fd: %d\n", (unsigned long)rl.rlim_cur, high);
	print_mem();
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode;
	long n, i;
	char b = 'x';
	int p[2];

	if (argc == 2 && !strcmp(argv[1], "mem"))
		return mode_mem();
	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: microbench MODE N | microbench mem\n"
			"modes: pipe-read pipe-write setsockopt-same setsockopt-new\n"
			"       accept4 accept4-eagain tcp-rw recv-send socket-close connect\n");
		return 2;
	}
	mode = argv[1];

	if (!strcmp(mode, "pipe-read") || !strcmp(mode, "pipe-write")) {
		/* An fd the shim does not track: the cost must be next to nothing. */
		int rd = !strcmp(mode, "pipe-read");

		if (pipe(p) < 0)
			die("pipe");
		for (i = 0; i < n; i++) {
			if ((rd ? write(p[1], &b, 1) : op_write(p[1], &b, 1)) != 1)
				die("pipe write");
			if ((rd ? op_read(p[0], &b, 1) : read(p[0], &b, 1)) != 1)
				die("pipe read");
		}
	} else if (!strcmp(mode, "setsockopt-same") || !strcmp(mode, "setsockopt-new")) {
		/* same: TCP_NODELAY=1 again and again, a repeat the shim counts but
		 * does not log (read-back + cache); new: SO_RCVBUF with a value never
		 * used before on each call, so every call writes a line. */
		int fresh = !strcmp(mode, "setsockopt-new");
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			die("socket");
		for (i = 0; i < n; i++)
			if ((fresh ? op_setsockopt(fd, SOL_SOCKET, SO_RCVBUF, 4096 + (int)i)
				   : op_setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, 1)) < 0)
				die("setsockopt");
	} else if (!strcmp(mode, "accept4")) {
		/* One queued, established connection per accept, as nginx sees it. */
		struct sockaddr_in a;
		int lfd = listener(&a, 64, 1);

		for (i = 0; i < n; i++) {
			int c = client(&a), s = op_accept4(lfd);

			if (s < 0)
				die("accept4");
			close_rst(c);
			close(s);
		}
	} else if (!strcmp(mode, "accept4-eagain")) {
		/* nginx's accept loop ends with one EAGAIN per wakeup. */
		struct sockaddr_in a;
		int lfd = listener(&a, 64, 1);

		for (i = 0; i < n; i++)
			if (op_accept4(lfd) >= 0 || errno != EAGAIN)
				die("accept4 on an empty queue did not fail with EAGAIN");
	} else if (!strcmp(mode, "tcp-rw") || !strcmp(mode, "recv-send")) {
		/* A request/response on an accepted (tracked) socket: keep-alive. */
		int rs = !strcmp(mode, "recv-send");
		struct sockaddr_in a;
		int lfd = listener(&a, 16, 0);
		int c = client(&a), s = accept(lfd, NULL, NULL);

		if (s < 0)
			die("accept");
		for (i = 0; i < n; i++) {
			if (write(c, &b, 1) != 1)
				die("client write");
			if ((rs ? op_recv(s, &b, 1) : op_tcp_read(s, &b, 1)) != 1)
				die("server read");
			if ((rs ? op_send(s, &b, 1) : op_tcp_write(s, &b, 1)) != 1)
				die("server write");
			if (read(c, &b, 1) != 1)
				die("client read");
		}
	} else if (!strcmp(mode, "socket-close")) {
		for (i = 0; i < n; i++) {
			int fd = op_socket();

			if (fd < 0)
				die("socket");
			if (op_close(fd) < 0)
				die("close");
		}
	} else if (!strcmp(mode, "connect")) {
		struct sockaddr_in a;
		int lfd = listener(&a, 64, 0);

		for (i = 0; i < n; i++) {
			int c = socket(AF_INET, SOCK_STREAM, 0), s;

			if (c < 0)
				die("socket");
			if (op_connect(c, &a) < 0)
				die("connect");
			if ((s = accept(lfd, NULL, NULL)) < 0)
				die("accept");
			close_rst(c);
			close(s);
		}
	} else {
		fprintf(stderr, "microbench: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
