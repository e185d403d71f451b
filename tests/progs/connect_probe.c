/*
 * connect_probe: one connect done the way a given kind of program does it,
 * for the connect tests. Prints what the program itself saw.
 *   connect_probe MODE ADDR [ARG]
 * ADDR: 127.0.0.1:PORT (TCP), udp:127.0.0.1:PORT, or unix:/path.
 * MODE:
 *   block    blocking connect()
 *   nb       non-blocking connect, an early getsockopt(SO_ERROR) (may be 0
 *            while still connecting), poll for POLLOUT, getsockopt(SO_ERROR)
 *   nbio     non-blocking connect, poll, then the first write() decides
 *   nbagain  non-blocking connect, poll, then connect() again (EISCONN)
 *   abandon  non-blocking connect, wait ARG ms, close
 *   defer    setsockopt(TCP_DEFER_ACCEPT, 1) then blocking connect()
 *   deferdup the same, set through a dup() of the fd (closed before connect)
 *   deferraw the same, set with syscall(SYS_setsockopt)
 *   fast     ARG blocking connects in a row (default 3)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>

#ifndef __GLIBC__
/* musl has no strerrorname_np: the names this program can print. */
static const char *strerrorname_np(int e)
{
	switch (e) {
	case ECONNREFUSED: return "ECONNREFUSED";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINPROGRESS: return "EINPROGRESS";
	case EALREADY: return "EALREADY";
	case EISCONN: return "EISCONN";
	case ENOENT: return "ENOENT";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ENETUNREACH: return "ENETUNREACH";
	case ECONNRESET: return "ECONNRESET";
	case EPIPE: return "EPIPE";
	case EAGAIN: return "EAGAIN";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	default: return "E?";
	}
}
#endif
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static socklen_t parse(const char *s, struct sockaddr_storage *ss, int *type)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_un *un = (struct sockaddr_un *)ss;
	char host[64];
	const char *c;

	memset(ss, 0, sizeof *ss);
	*type = SOCK_STREAM;
	if (!strncmp(s, "unix:", 5)) {
		un->sun_family = AF_UNIX;
		snprintf(un->sun_path, sizeof un->sun_path, "%s", s + 5);
		return sizeof *un;
	}
	if (!strncmp(s, "udp:", 4)) {
		*type = SOCK_DGRAM;
		s += 4;
	}
	c = strrchr(s, ':');
	if (!c || (size_t)(c - s) >= sizeof host)
		exit(2);
	memcpy(host, s, (size_t)(c - s));
	host[c - s] = '\0';
	in->sin_family = AF_INET;
	in->sin_port = htons((unsigned short)atoi(c + 1));
	inet_pton(AF_INET, host, &in->sin_addr);
	return sizeof *in;
}

static void out(const char *mode, int rc, int err, double t0)
{
	printf("mode=%s rc=%d errno=%s ms=%.1f\n", mode, rc, rc ? strerrorname_np(err) : "0", now_ms() - t0);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len, el;
	const char *mode;
	int type, fd, rc, err = 0, one = 1, i, n;
	double t0;

	if (argc < 3)
		return 2;
	mode = argv[1];
	len = parse(argv[2], &ss, &type);
	if (!strcmp(mode, "fast")) {
		n = argc > 3 ? atoi(argv[3]) : 3;
		for (i = 0; i < n; i++) {
			fd = socket(ss.ss_family, type, 0);
			t0 = now_ms();
			rc = connect(fd, (struct sockaddr *)&ss, len);
			out(mode, rc, errno, t0);
			close(fd);
		}
		return 0;
	}
	fd = socket(ss.ss_family, type, 0);
	if (fd < 0)
		return perror("socket"), 1;
	if (!strcmp(mode, "defer"))
		setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof one);
	if (!strcmp(mode, "deferdup")) {
		int d = dup(fd);

		setsockopt(d, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof one);
		close(d);
	}
	if (!strcmp(mode, "deferraw"))
		syscall(SYS_setsockopt, fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof one);
	t0 = now_ms();
	if (!strcmp(mode, "block") || !strncmp(mode, "defer", 5)) {
		rc = connect(fd, (struct sockaddr *)&ss, len);
		out(mode, rc, errno, t0);
		if (rc == 0 && type == SOCK_STREAM)
			(void)!write(fd, "x", 1);
		close(fd);
		return 0;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	rc = connect(fd, (struct sockaddr *)&ss, len);
	if (rc == 0 || errno != EINPROGRESS) {
		out(mode, rc, errno, t0);
		close(fd);
		return 0;
	}
	if (!strcmp(mode, "abandon")) {
		usleep((useconds_t)(argc > 3 ? atoi(argv[3]) : 300) * 1000);
		close(fd);
		out(mode, -1, EINPROGRESS, t0);
		return 0;
	}
	if (!strcmp(mode, "nb")) {
		/* A spurious early check: 0 here means "no error yet". */
		el = sizeof err;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
	}
	{
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		poll(&p, 1, 10000);
	}
	if (!strcmp(mode, "nbio")) {
		rc = (int)write(fd, "x", 1);
		err = errno;
		out(mode, rc < 0 ? -1 : 0, err, t0);
	} else if (!strcmp(mode, "nbagain")) {
		rc = connect(fd, (struct sockaddr *)&ss, len);
		err = errno;
		out(mode, rc == 0 || err == EISCONN ? 0 : -1, err, t0);
	} else {
		el = sizeof err;
		err = 0;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		out(mode, err ? -1 : 0, err, t0);
	}
	close(fd);
	return 0;
}
