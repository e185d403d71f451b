/*
 * transparency.c: dozens of wrong and odd socket calls, each result printed.
 *
 * Every call prints one line "label: ret=R errno=NAME" (plus what came back
 * in out-parameters). errno is set to a sentinel (4242) before each call, so
 * a successful call that leaves errno alone prints "errno=sentinel": the shim
 * must not leak its own errno into a successful call either. Nothing that
 * varies between runs (ports, pids, addresses of the loopback port) is
 * printed, so tests/integration/transparency.sh can diff a plain run against
 * a run under LD_PRELOAD=libsockaudit.so: identical output = transparent.
 *
 * Buffers that must not be read past their length sit at the very end of a
 * page followed by a PROT_NONE page: a shim that decodes beyond optlen (or
 * runs strlen on a string option) dies with SIGSEGV there.
 *
 * Usage: transparency DIR   (DIR: an empty scratch directory; we chdir there)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/close_range.h>

#define SENTINEL 4242

/* The sanitizers' own accept() interceptor reads *addrlen before the call
 * (sanitizer_common_interceptors.inc), so an unmapped addrlen crashes a
 * sanitized build with or without the shim: those calls are left out there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static char *guard_base;   /* one RW page followed by one PROT_NONE page */
static long pagesz;

static const char *ename(int e)
{
	static char buf[32];
	const char *n;

	if (e == SENTINEL)
		return "sentinel";
	n = strerrorname_np(e);
	if (n)
		return n;
	snprintf(buf, sizeof(buf), "%d", e);
	return buf;
}

static void report(const char *label, long ret, int err)
{
	printf("%s: ret=%ld errno=%s\n", label, ret, ename(err));
	fflush(stdout);
}

/* Evaluates expr with errno at the sentinel; prints result and errno. */
#define CALL(label, expr) ({                          \
	long r_;                                      \
	int e_;                                       \
	errno = SENTINEL;                             \
	r_ = (long)(expr);                            \
	e_ = errno;                                   \
	report(label, r_, e_);                        \
	errno = e_;                                   \
	r_;                                           \
})

/* A pointer p such that p[0..n) is readable/writable and p[n] faults. */
static void *at_end(const void *src, size_t n)
{
	char *p = guard_base + pagesz - n;

	if (src)
		memcpy(p, src, n);
	else
		memset(p, 0, n);
	return p;
}

static int intopt(int fd, int level, int opt)
{
	int v = -12345;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, level, opt, &v, &l) < 0)
		return -100000 - errno;
	return v;
}

static void show_getsockopt(const char *label, int fd, int level, int opt, socklen_t len)
{
	unsigned char buf[256];
	socklen_t l = len;
	char line[128];
	long r;
	unsigned i;

	memset(buf, 0xAA, sizeof(buf));
	snprintf(line, sizeof(line), "%s (len %u)", label, (unsigned)len);
	r = CALL(line, getsockopt(fd, level, opt, buf, &l));
	if (r == 0) {
		printf("  optlen=%u bytes=", (unsigned)l);
		for (i = 0; i < l && i < 16; i++)
			printf("%02x", buf[i]);
		printf("\n");
	}
}

static int tcp_listener(int backlog, struct sockaddr_in *out)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;

	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, backlog) < 0) {
		perror("listener");
		exit(2);
	}
	getsockname(s, (struct sockaddr *)out, &l);
	return s;
}

/* A UDP port nobody can receive on, and nobody else can take: a UDP socket
 * bound to it but connected elsewhere (a connected socket only matches
 * datagrams from its peer, so ours get ICMP port unreachable). */
static int closed_udp_port(struct sockaddr_in *out)
{
	struct sockaddr_in a = { .sin_family = AF_INET }, peer = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	a.sin_addr.s_addr = peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	peer.sin_port = htons(1);
	bind(s, (struct sockaddr *)&a, sizeof(a));
	connect(s, (struct sockaddr *)&peer, sizeof(peer));
	getsockname(s, (struct sockaddr *)out, &l);
	return s;
}

/* A loopback port with a bound, non-listening socket on it: connect is refused. */
static int closed_port(struct sockaddr_in *out)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(s, (struct sockaddr *)&a, sizeof(a));
	getsockname(s, (struct sockaddr *)out, &l);
	return s;
}

static void bad_fds(void)
{
	int one = 1, v;
	socklen_t l = sizeof(v);
	struct sockaddr_in a = { .sin_family = AF_INET };
	int closed = socket(AF_INET, SOCK_STREAM, 0);

	close(closed);
	puts("## bad fds");
	CALL("setsockopt(-1)", setsockopt(-1, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	CALL("setsockopt(99999)", setsockopt(99999, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	CALL("setsockopt(closed)", setsockopt(closed, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	CALL("setsockopt(INT_MAX)", setsockopt(INT_MAX, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
	CALL("getsockopt(-1)", getsockopt(-1, SOL_SOCKET, SO_TYPE, &v, &l));
	CALL("getsockopt(closed)", getsockopt(closed, SOL_SOCKET, SO_TYPE, &v, &l));
	CALL("listen(-1)", listen(-1, 10));
	CALL("listen(99999)", listen(99999, 10));
	CALL("listen(closed)", listen(closed, 10));
	CALL("accept(-1)", accept(-1, NULL, NULL));
	CALL("accept(closed)", accept(closed, NULL, NULL));
	CALL("accept4(99999)", accept4(99999, NULL, NULL, SOCK_CLOEXEC));
	CALL("connect(-1)", connect(-1, (struct sockaddr *)&a, sizeof(a)));
	CALL("connect(closed)", connect(closed, (struct sockaddr *)&a, sizeof(a)));
	CALL("close(-1)", close(-1));
	CALL("close(99999)", close(99999));
	CALL("close(closed)", close(closed));
	CALL("dup(-1)", dup(-1));
	CALL("dup2(-1,50)", dup2(-1, 50));
	CALL("dup2(-1,-1)", dup2(-1, -1));
	CALL("dup3(-1,50,0)", dup3(-1, 50, 0));
	CALL("shutdown(-1)", shutdown(-1, SHUT_RDWR));
	CALL("socket(bogus domain)", socket(12345, SOCK_STREAM, 0));
	CALL("socket(bogus type)", socket(AF_INET, 99, 0));
	CALL("socket(bogus protocol)", socket(AF_INET, SOCK_STREAM, 99));
	CALL("socket(bogus flags)", socket(AF_INET, SOCK_STREAM | 0x40000000, 0));
	CALL("socketpair(AF_INET)", socketpair(AF_INET, SOCK_STREAM, 0, (int[2]){0, 0}));
}

static void non_sockets(void)
{
	int p[2], dn, one = 1, v;
	socklen_t l = sizeof(v);
	struct sockaddr_in a = { .sin_family = AF_INET };
	char c = 'x';

	puts("## non-socket fds");
	CALL("pipe", pipe(p));
	dn = CALL("open(/dev/null)", open("/dev/null", O_RDWR));
	CALL("setsockopt(pipe)", setsockopt(p[0], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	CALL("getsockopt(pipe)", getsockopt(p[0], SOL_SOCKET, SO_TYPE, &v, &l));
	CALL("listen(pipe)", listen(p[0], 5));
	CALL("accept(pipe)", accept(p[0], NULL, NULL));
	CALL("accept4(pipe)", accept4(p[0], NULL, NULL, SOCK_NONBLOCK));
	CALL("connect(pipe)", connect(p[1], (struct sockaddr *)&a, sizeof(a)));
	CALL("setsockopt(/dev/null)", setsockopt(dn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
	CALL("listen(/dev/null)", listen(dn, 5));
	CALL("accept(/dev/null)", accept(dn, NULL, NULL));
	CALL("connect(/dev/null)", connect(dn, (struct sockaddr *)&a, sizeof(a)));
	CALL("send(pipe)", send(p[1], &c, 1, 0));
	CALL("recv(pipe)", recv(p[0], &c, 1, MSG_DONTWAIT));
	CALL("write(pipe)", write(p[1], &c, 1));
	CALL("read(pipe)", read(p[0], &c, 1));
	CALL("shutdown(pipe)", shutdown(p[0], SHUT_RD));
	CALL("dup2(pipe over /dev/null)", dup2(p[0], dn));
	CALL("listen(dup of pipe)", listen(dn, 5));
	CALL("close(dn)", close(dn));
	CALL("close(p0)", close(p[0]));
	CALL("close(p1)", close(p[1]));
}

static void optvals(void)
{
	int s, one = 1, big_n = 1 << 16;
	int *big = calloc(big_n, sizeof(int));
	unsigned char *page_end;
	struct linger lg = { 1, 5 };
	struct timeval tv = { 1, 500000 }, badtv = { 1, -5 };
	socklen_t l;
	int v;

	puts("## optval and optlen");
	s = CALL("socket(tcp)", socket(AF_INET, SOCK_STREAM, 0));
	CALL("setsockopt NULL optval", setsockopt(s, SOL_SOCKET, SO_REUSEADDR, NULL, sizeof(int)));
	CALL("setsockopt NULL optval len 0", setsockopt(s, SOL_SOCKET, SO_REUSEADDR, NULL, 0));
	CALL("setsockopt PROT_NONE optval", setsockopt(s, SOL_SOCKET, SO_REUSEADDR, guard_base + pagesz, sizeof(int)));
	CALL("setsockopt TCP_NODELAY PROT_NONE", setsockopt(s, IPPROTO_TCP, TCP_NODELAY, guard_base + pagesz, sizeof(int)));
	CALL("setsockopt optlen 0", setsockopt(s, SOL_SOCKET, SO_REUSEADDR, at_end(NULL, 0), 0));
	CALL("setsockopt optlen 1", setsockopt(s, SOL_SOCKET, SO_REUSEADDR, at_end("\1", 1), 1));
	CALL("setsockopt optlen 3", setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, at_end("\1\0\0", 3), 3));
	CALL("setsockopt TCP_NODELAY optlen 1", setsockopt(s, IPPROTO_TCP, TCP_NODELAY, at_end("\1", 1), 1));
	CALL("setsockopt TCP_DEFER_ACCEPT optlen 2", setsockopt(s, IPPROTO_TCP, TCP_DEFER_ACCEPT, at_end("\12\0", 2), 2));
	CALL("setsockopt optlen -1", setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, (socklen_t)-1));
	CALL("setsockopt optlen INT_MAX+1", setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, (socklen_t)INT_MAX + 1));
	/* Oversize but backed by a real buffer: the kernel reads sizeof(int). */
	big[0] = 1 << 20;
	CALL("setsockopt SO_RCVBUF optlen 256K", setsockopt(s, SOL_SOCKET, SO_RCVBUF, big, big_n * sizeof(int)));
	printf("  SO_RCVBUF=%d\n", intopt(s, SOL_SOCKET, SO_RCVBUF));
	big[0] = 1;
	CALL("setsockopt TCP_NODELAY optlen 256K", setsockopt(s, IPPROTO_TCP, TCP_NODELAY, big, big_n * sizeof(int)));
	CALL("setsockopt TCP_CONGESTION optlen 256K", setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, memcpy(big, "reno", 5), big_n * sizeof(int)));
	show_getsockopt("getsockopt TCP_CONGESTION", s, IPPROTO_TCP, TCP_CONGESTION, 16);
	/* IP_TOS and IP_TTL accept a single byte (do_ip_setsockopt). */
	CALL("setsockopt IP_TOS optlen 1", setsockopt(s, IPPROTO_IP, IP_TOS, at_end("\x10", 1), 1));
	printf("  IP_TOS=%d\n", intopt(s, IPPROTO_IP, IP_TOS));
	CALL("setsockopt IP_TTL optlen 1", setsockopt(s, IPPROTO_IP, IP_TTL, at_end("\x21", 1), 1));
	printf("  IP_TTL=%d\n", intopt(s, IPPROTO_IP, IP_TTL));
	CALL("setsockopt IP_TOS optlen 0", setsockopt(s, IPPROTO_IP, IP_TOS, at_end(NULL, 0), 0));
	/* Strings without a NUL, ending right at the guard page. */
	CALL("setsockopt TCP_CONGESTION no NUL", setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, at_end("cubic", 5), 5));
	CALL("setsockopt TCP_CONGESTION unknown", setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, at_end("nope-cc", 7), 7));
	CALL("setsockopt TCP_CONGESTION len 0", setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, at_end(NULL, 0), 0));
	CALL("setsockopt TCP_CONGESTION bytes", setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, at_end("\xff\xfe\x01\"\\", 5), 5));
	CALL("setsockopt SO_BINDTODEVICE lo no NUL", setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, at_end("lo", 2), 2));
	CALL("setsockopt SO_BINDTODEVICE unknown", setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, at_end("nodev\xff", 6), 6));
	CALL("setsockopt SO_BINDTODEVICE empty", setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, at_end(NULL, 0), 0));
	/* Structs, whole and short. */
	CALL("setsockopt SO_LINGER", setsockopt(s, SOL_SOCKET, SO_LINGER, at_end(&lg, sizeof(lg)), sizeof(lg)));
	CALL("setsockopt SO_LINGER short", setsockopt(s, SOL_SOCKET, SO_LINGER, at_end(&lg, 4), 4));
	show_getsockopt("getsockopt SO_LINGER", s, SOL_SOCKET, SO_LINGER, sizeof(lg));
	CALL("setsockopt SO_RCVTIMEO", setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, at_end(&tv, sizeof(tv)), sizeof(tv)));
	CALL("setsockopt SO_RCVTIMEO short", setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, at_end(&tv, 8), 8));
	CALL("setsockopt SO_RCVTIMEO bad usec", setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &badtv, sizeof(badtv)));
	show_getsockopt("getsockopt SO_RCVTIMEO", s, SOL_SOCKET, SO_RCVTIMEO, sizeof(tv));
	/* getsockopt: NULL, short and odd lengths. */
	l = sizeof(v);
	CALL("getsockopt NULL optval", getsockopt(s, SOL_SOCKET, SO_TYPE, NULL, &l));
	CALL("getsockopt NULL optlen", getsockopt(s, SOL_SOCKET, SO_TYPE, &v, NULL));
	CALL("getsockopt PROT_NONE optlen", getsockopt(s, SOL_SOCKET, SO_TYPE, &v, (socklen_t *)(guard_base + pagesz)));
	l = (socklen_t)-1;
	CALL("getsockopt optlen -1", getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &l));
	show_getsockopt("getsockopt SO_TYPE", s, SOL_SOCKET, SO_TYPE, 0);
	show_getsockopt("getsockopt SO_TYPE", s, SOL_SOCKET, SO_TYPE, 1);
	show_getsockopt("getsockopt SO_TYPE", s, SOL_SOCKET, SO_TYPE, 3);
	show_getsockopt("getsockopt SO_TYPE", s, SOL_SOCKET, SO_TYPE, 200);
	show_getsockopt("getsockopt IP_TOS", s, IPPROTO_IP, IP_TOS, 1);
	l = 1;
	page_end = at_end(NULL, 1);
	CALL("getsockopt IP_TTL into last byte", getsockopt(s, IPPROTO_IP, IP_TTL, page_end, &l));
	printf("  optlen=%u byte=%u\n", (unsigned)l, page_end[0]);
	l = big_n * sizeof(int);
	CALL("getsockopt TCP_INFO optlen 256K", getsockopt(s, IPPROTO_TCP, TCP_INFO, big, &l));
	printf("  optlen>0: %d\n", l > 0 && l < 4096);
	/* Bogus levels and option numbers. */
	CALL("setsockopt level 12345", setsockopt(s, 12345, 1, &one, sizeof(one)));
	CALL("setsockopt level -1", setsockopt(s, -1, 1, &one, sizeof(one)));
	CALL("setsockopt SOL_SOCKET opt 9999", setsockopt(s, SOL_SOCKET, 9999, &one, sizeof(one)));
	CALL("setsockopt SOL_SOCKET opt -5", setsockopt(s, SOL_SOCKET, -5, &one, sizeof(one)));
	CALL("setsockopt IPPROTO_TCP opt 9999", setsockopt(s, IPPROTO_TCP, 9999, &one, sizeof(one)));
	CALL("setsockopt IPPROTO_IPV6 on v4", setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)));
	CALL("setsockopt IPPROTO_UDP on tcp", setsockopt(s, IPPROTO_UDP, 1, &one, sizeof(one)));
	CALL("getsockopt level 12345", getsockopt(s, 12345, 1, &v, &l));
	CALL("getsockopt SOL_SOCKET opt 9999", getsockopt(s, SOL_SOCKET, 9999, &v, &l));
	/* Values the kernel adjusts: results must be exactly libc's. */
	v = 10;
	CALL("setsockopt TCP_DEFER_ACCEPT 10", setsockopt(s, IPPROTO_TCP, TCP_DEFER_ACCEPT, &v, sizeof(v)));
	printf("  TCP_DEFER_ACCEPT=%d\n", intopt(s, IPPROTO_TCP, TCP_DEFER_ACCEPT));
	v = -7;
	CALL("setsockopt TCP_DEFER_ACCEPT -7", setsockopt(s, IPPROTO_TCP, TCP_DEFER_ACCEPT, &v, sizeof(v)));
	printf("  TCP_DEFER_ACCEPT=%d\n", intopt(s, IPPROTO_TCP, TCP_DEFER_ACCEPT));
	v = 1 << 30;
	CALL("setsockopt SO_SNDBUF 1G", setsockopt(s, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
	v = -1;
	CALL("setsockopt SO_RCVBUF -1", setsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)));
	printf("  SO_RCVBUF=%d\n", intopt(s, SOL_SOCKET, SO_RCVBUF));
	v = 1;
	for (int i = 0; i < 5; i++)  /* repeats: counted, not re-logged */
		CALL("setsockopt TCP_QUICKACK repeat", setsockopt(s, IPPROTO_TCP, TCP_QUICKACK, &v, sizeof(v)));
	CALL("setsockopt TCP_MAXSEG 1", setsockopt(s, IPPROTO_TCP, TCP_MAXSEG, &v, sizeof(v)));
	v = 12;
	CALL("setsockopt TCP_KEEPIDLE 0", setsockopt(s, IPPROTO_TCP, TCP_KEEPIDLE, (int[]){0}, sizeof(int)));
	CALL("setsockopt TCP_KEEPIDLE 12", setsockopt(s, IPPROTO_TCP, TCP_KEEPIDLE, &v, sizeof(v)));
	CALL("close(s)", close(s));
	free(big);
}

static void udp(void)
{
	int u, one = 1;
	struct sockaddr_in cp, a = { .sin_family = AF_INET };
	struct sockaddr_in un = { .sin_family = AF_UNSPEC };
	int cps = closed_udp_port(&cp);
	char buf[8];
	socklen_t l;

	puts("## UDP");
	u = CALL("socket(udp)", socket(AF_INET, SOCK_DGRAM, 0));
	CALL("listen(udp)", listen(u, 5));
	CALL("accept(udp)", accept(u, NULL, NULL));
	CALL("accept4(udp)", accept4(u, NULL, NULL, SOCK_NONBLOCK));
	CALL("setsockopt TCP_NODELAY on udp", setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
	CALL("setsockopt SO_BROADCAST", setsockopt(u, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)));
	CALL("setsockopt SO_REUSEPORT", setsockopt(u, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)));
	CALL("setsockopt IP_MULTICAST_TTL 1 byte", setsockopt(u, IPPROTO_IP, IP_MULTICAST_TTL, at_end("\3", 1), 1));
	CALL("setsockopt IP_MULTICAST_LOOP 1 byte", setsockopt(u, IPPROTO_IP, IP_MULTICAST_LOOP, at_end("\0", 1), 1));
	show_getsockopt("getsockopt SO_TYPE", u, SOL_SOCKET, SO_TYPE, 4);
	show_getsockopt("getsockopt SO_PROTOCOL", u, SOL_SOCKET, SO_PROTOCOL, 4);
	CALL("getsockopt TCP_INFO on udp", getsockopt(u, IPPROTO_TCP, TCP_INFO, buf, &(socklen_t){sizeof(buf)}));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = cp.sin_port;
	CALL("connect(udp)", connect(u, (struct sockaddr *)&a, sizeof(a)));
	CALL("send(udp to closed)", send(u, "x", 1, 0));
	{	/* the ICMP port unreachable comes back as a socket error */
		struct pollfd pe = { .fd = u, .events = 0 };
		poll(&pe, 1, 1000);
	}
	CALL("recv(udp ECONNREFUSED)", recv(u, buf, sizeof(buf), MSG_DONTWAIT));
	CALL("connect(udp AF_UNSPEC)", connect(u, (struct sockaddr *)&un, sizeof(un)));
	CALL("connect(udp short addrlen)", connect(u, (struct sockaddr *)&a, 3));
	l = sizeof(a);
	CALL("recvfrom(udp empty)", recvfrom(u, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&a, &l));
	CALL("sendto(udp no addr)", sendto(u, "x", 1, 0, NULL, 0));
	CALL("close(udp)", close(u));
	close(cps);
	u = CALL("socket(udplite)", socket(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE));
	if (u >= 0)
		close(u);
	u = CALL("socket(raw icmp)", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	if (u >= 0) {
		CALL("listen(raw)", listen(u, 1));
		close(u);
	}
}

static void ipv6(void)
{
	int s, c, a, one = 1, zero = 0;
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 }, peer;
	socklen_t l = sizeof(sa);

	puts("## IPv6");
	s = CALL("socket(inet6 stream)", socket(AF_INET6, SOCK_STREAM, 0));
	if (s < 0)
		return;
	CALL("setsockopt IPV6_V6ONLY", setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)));
	CALL("setsockopt IPV6_V6ONLY optlen 1", setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, at_end("\1", 1), 1));
	CALL("setsockopt IPV6_TCLASS", setsockopt(s, IPPROTO_IPV6, IPV6_TCLASS, (int[]){0x20}, sizeof(int)));
	CALL("setsockopt IPV6_TCLASS 300", setsockopt(s, IPPROTO_IPV6, IPV6_TCLASS, (int[]){300}, sizeof(int)));
	CALL("setsockopt IP_TOS on v6", setsockopt(s, IPPROTO_IP, IP_TOS, (int[]){0x10}, sizeof(int)));
	CALL("setsockopt IPV6_UNICAST_HOPS -1", setsockopt(s, IPPROTO_IPV6, IPV6_UNICAST_HOPS, (int[]){-1}, sizeof(int)));
	CALL("setsockopt IPV6 opt 9999", setsockopt(s, IPPROTO_IPV6, 9999, &one, sizeof(one)));
	show_getsockopt("getsockopt IPV6_V6ONLY", s, IPPROTO_IPV6, IPV6_V6ONLY, 4);
	sa.sin6_addr = in6addr_loopback;
	if (CALL("bind [::1]:0", bind(s, (struct sockaddr *)&sa, sizeof(sa))) < 0) {
		close(s);
		return;
	}
	CALL("listen v6 -1", listen(s, -1));
	CALL("listen v6 again 0", listen(s, 0));
	CALL("listen v6 again 7", listen(s, 7));
	getsockname(s, (struct sockaddr *)&sa, &l);
	c = CALL("socket(inet6 client)", socket(AF_INET6, SOCK_STREAM, 0));
	CALL("setsockopt IPV6_V6ONLY after", setsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)));
	CALL("connect v6 short addrlen", connect(c, (struct sockaddr *)&sa, sizeof(struct sockaddr_in)));
	CALL("connect v6", connect(c, (struct sockaddr *)&sa, sizeof(sa)));
	CALL("connect v6 again", connect(c, (struct sockaddr *)&sa, sizeof(sa)));
	CALL("setsockopt IPV6_V6ONLY connected", setsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)));
	l = sizeof(peer);
	a = CALL("accept v6", accept(s, (struct sockaddr *)&peer, &l));
	printf("  addrlen=%u family=%d\n", (unsigned)l, peer.sin6_family);
	CALL("close v6 accepted", close(a));
	CALL("close v6 client", close(c));
	CALL("close v6 listener", close(s));
}

static void unix_sockets(void)
{
	int s, c, a, d, one = 1, pair[2];
	struct sockaddr_un ua = { .sun_family = AF_UNIX }, peer;
	socklen_t l, alen;
	char buf[16];
	char ucred[64];

	puts("## AF_UNIX");
	s = CALL("socket(unix stream)", socket(AF_UNIX, SOCK_STREAM, 0));
	strcpy(ua.sun_path, "s1");
	CALL("bind path", bind(s, (struct sockaddr *)&ua, offsetof(struct sockaddr_un, sun_path) + 3));
	CALL("setsockopt SO_RCVBUF unix", setsockopt(s, SOL_SOCKET, SO_RCVBUF, (int[]){4096}, sizeof(int)));
	CALL("setsockopt TCP_NODELAY unix", setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
	CALL("setsockopt SO_PASSCRED", setsockopt(s, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)));
	CALL("accept unix not listening", accept(s, NULL, NULL));
	CALL("listen unix 3", listen(s, 3));
	CALL("listen unix -1", listen(s, -1));
	CALL("listen unix 3 again", listen(s, 3));
	c = CALL("socket(unix client)", socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	CALL("connect unix path", connect(c, (struct sockaddr *)&ua, sizeof(ua)));
	CALL("connect unix again", connect(c, (struct sockaddr *)&ua, sizeof(ua)));
	l = sizeof(peer);
	memset(&peer, 0x55, sizeof(peer));
	a = CALL("accept unix", accept(s, (struct sockaddr *)&peer, &l));
	printf("  addrlen=%u family=%d\n", (unsigned)l, peer.sun_family);
	l = sizeof(ucred);
	CALL("getsockopt SO_PEERCRED", getsockopt(a, SOL_SOCKET, SO_PEERCRED, ucred, &l));
	printf("  optlen=%u\n", (unsigned)l);
	CALL("write unix", write(c, "hello", 5));
	CALL("read unix", read(a, buf, sizeof(buf)));
	CALL("setsockopt SO_SNDBUF accepted", setsockopt(a, SOL_SOCKET, SO_SNDBUF, (int[]){1}, sizeof(int)));
	printf("  SO_SNDBUF=%d\n", intopt(a, SOL_SOCKET, SO_SNDBUF));
	CALL("close unix a", close(a));
	CALL("close unix c", close(c));
	/* connect to nothing */
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(ua.sun_path, "nonexistent");
	CALL("connect unix missing path", connect(c, (struct sockaddr *)&ua, sizeof(ua)));
	ua.sun_path[0] = '\0';
	snprintf(ua.sun_path + 1, sizeof(ua.sun_path) - 1, "sa-transp-none-%d", (int)getpid());
	CALL("connect unix missing abstract", connect(c, (struct sockaddr *)&ua,
		offsetof(struct sockaddr_un, sun_path) + 1 + strlen(ua.sun_path + 1)));
	CALL("connect unix addrlen 2", connect(c, (struct sockaddr *)&ua, 2));
	CALL("connect unix addrlen 200", connect(c, (struct sockaddr *)&ua, 200));
	close(c);
	CALL("close unix listener", close(s));
	/* Abstract names with non-UTF-8 bytes and an embedded quote. */
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(ua.sun_path, 0, sizeof(ua.sun_path));
	alen = offsetof(struct sockaddr_un, sun_path) + 1 +
		snprintf(ua.sun_path + 1, sizeof(ua.sun_path) - 1, "sa\xff\xfe\"\\\x01-%d", (int)getpid());
	CALL("bind abstract odd bytes", bind(s, (struct sockaddr *)&ua, alen));
	CALL("listen abstract", listen(s, 4));
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CALL("connect abstract", connect(c, (struct sockaddr *)&ua, alen));
	l = 3;
	a = CALL("accept abstract addrlen 3", accept(s, (struct sockaddr *)&peer, &l));
	printf("  addrlen=%u\n", (unsigned)l);
	close(a);
	close(c);
	close(s);
	/* A path that fills sun_path exactly, no NUL, addr ending at the guard page. */
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	{
		struct sockaddr_un *full = at_end(NULL, sizeof(struct sockaddr_un));
		full->sun_family = AF_UNIX;
		memset(full->sun_path, 'p', sizeof(full->sun_path));
		CALL("bind full sun_path", bind(s, (struct sockaddr *)full, sizeof(*full)));
		CALL("listen full sun_path", listen(s, 2));
		c = socket(AF_UNIX, SOCK_STREAM, 0);
		CALL("connect full sun_path", connect(c, (struct sockaddr *)full, sizeof(*full)));
		a = CALL("accept4 full sun_path", accept4(s, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC));
		printf("  cloexec=%d nonblock=%d\n", !!(fcntl(a, F_GETFD) & FD_CLOEXEC),
		       !!(fcntl(a, F_GETFL) & O_NONBLOCK));
		close(a);
		close(c);
		close(s);
	}
	/* Datagram sockets. */
	d = CALL("socket(unix dgram)", socket(AF_UNIX, SOCK_DGRAM, 0));
	strcpy(ua.sun_path, "d1");
	CALL("bind unix dgram", bind(d, (struct sockaddr *)&ua, sizeof(ua)));
	CALL("listen unix dgram", listen(d, 5));
	CALL("accept unix dgram", accept(d, NULL, NULL));
	c = socket(AF_UNIX, SOCK_DGRAM, 0);
	CALL("connect unix dgram", connect(c, (struct sockaddr *)&ua, sizeof(ua)));
	CALL("send unix dgram", send(c, "abc", 3, 0));
	l = sizeof(peer);
	CALL("recvfrom unix dgram", recvfrom(d, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &l));
	printf("  addrlen=%u\n", (unsigned)l);
	close(c);
	close(d);
	s = CALL("socket(unix seqpacket)", socket(AF_UNIX, SOCK_SEQPACKET, 0));
	CALL("listen unbound seqpacket", listen(s, 1));
	close(s);
	CALL("socketpair(unix)", socketpair(AF_UNIX, SOCK_STREAM, 0, pair));
	CALL("listen socketpair", listen(pair[0], 1));
	CALL("connect socketpair", connect(pair[0], (struct sockaddr *)&ua, sizeof(ua)));
	CALL("setsockopt socketpair SO_SNDBUF", setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, (int[]){8192}, sizeof(int)));
	close(pair[0]);
	close(pair[1]);
}

static void tcp_flow(void)
{
	struct sockaddr_in la, cp, peer;
	int ls, c, a, nb, cps, err;
	socklen_t l;
	struct pollfd pfd;
	char buf[16];
	int avail;

	puts("## TCP accept and connect");
	ls = tcp_listener(8, &la);
	cps = closed_port(&cp);
	c = CALL("socket(tcp client)", socket(AF_INET, SOCK_STREAM, 0));
	CALL("connect closed port", connect(c, (struct sockaddr *)&cp, sizeof(cp)));
	CALL("connect after refused", connect(c, (struct sockaddr *)&la, sizeof(la)));
	CALL("connect again (EISCONN)", connect(c, (struct sockaddr *)&la, sizeof(la)));
	CALL("listen connected", listen(c, 5));
	CALL("accept on connected", accept(c, NULL, NULL));
	a = CALL("accept NULL addr", accept(ls, NULL, NULL));
	CALL("write client", write(c, "ping", 4));
	avail = -1;
	usleep(10000);
	CALL("ioctl FIONREAD", ioctl(a, FIONREAD, &avail));
	printf("  avail=%d\n", avail);
	CALL("recv accepted", recv(a, buf, sizeof(buf), 0));
	CALL("send accepted", send(a, "pong", 4, MSG_NOSIGNAL));
	CALL("read client", read(c, buf, sizeof(buf)));
	CALL("shutdown client WR", shutdown(c, SHUT_WR));
	CALL("read accepted EOF", read(a, buf, sizeof(buf)));
	CALL("close accepted", close(a));
	CALL("close accepted twice", close(a));
	CALL("close client", close(c));

	/* accept with NULL addr but an addrlen, and short / zero addrlen. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&la, sizeof(la));
	l = 5;
	a = CALL("accept NULL addr with addrlen", accept(ls, NULL, &l));
	printf("  addrlen=%u\n", (unsigned)l);
	close(a);
	close(c);
	c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&la, sizeof(la));
	l = 2;
	memset(&peer, 0x55, sizeof(peer));
	a = CALL("accept addrlen 2", accept(ls, (struct sockaddr *)&peer, &l));
	printf("  addrlen=%u family=%d port_untouched=%d\n", (unsigned)l, peer.sin_family,
	       peer.sin_port == 0x5555);
	close(a);
	close(c);
	c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&la, sizeof(la));
	l = 0;
	a = CALL("accept addrlen 0", accept(ls, (struct sockaddr *)&peer, &l));
	printf("  addrlen=%u\n", (unsigned)l);
	close(a);
	close(c);
	c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&la, sizeof(la));
	a = CALL("accept4 bad flags", accept4(ls, NULL, NULL, 0x1234));
	a = CALL("accept4 CLOEXEC", accept4(ls, NULL, NULL, SOCK_CLOEXEC));
	printf("  cloexec=%d\n", !!(fcntl(a, F_GETFD) & FD_CLOEXEC));
	close(a);
	close(c);
	/* addr pointer faults after the connection was taken off the queue. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&la, sizeof(la));
	l = sizeof(peer);
	CALL("accept PROT_NONE addr", accept(ls, (struct sockaddr *)(guard_base + pagesz), &l));
	close(c);
	c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&la, sizeof(la));
	if (!SANITIZED)
		CALL("accept PROT_NONE addrlen", accept(ls, (struct sockaddr *)&peer, (socklen_t *)(guard_base + pagesz)));
	close(c);
	c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&la, sizeof(la));
	l = 4;   /* a 4-byte buffer at the guard page: the kernel writes 4 bytes, says 16 */
	a = CALL("accept 4-byte addr at page end", accept(ls, at_end(NULL, 4), &l));
	printf("  addrlen=%u\n", (unsigned)l);
	close(a);
	close(c);
	if (!SANITIZED)
		CALL("accept(-1) PROT_NONE addrlen", accept(-1, (struct sockaddr *)&peer, (socklen_t *)(guard_base + pagesz)));
	fcntl(ls, F_SETFL, O_NONBLOCK);
	CALL("accept nonblocking EAGAIN", accept(ls, NULL, NULL));
	fcntl(ls, F_SETFL, 0);

	/* Non-blocking connect: EINPROGRESS, then SO_ERROR. */
	nb = CALL("socket(NONBLOCK)", socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
	CALL("connect nonblocking", connect(nb, (struct sockaddr *)&la, sizeof(la)));
	pfd.fd = nb;
	pfd.events = POLLOUT;
	CALL("poll", poll(&pfd, 1, 2000));
	l = sizeof(err);
	err = -1;
	CALL("getsockopt SO_ERROR", getsockopt(nb, SOL_SOCKET, SO_ERROR, &err, &l));
	printf("  so_error=%s\n", err ? ename(err) : "0");
	CALL("connect nonblocking again", connect(nb, (struct sockaddr *)&la, sizeof(la)));
	a = accept(ls, NULL, NULL);
	close(a);
	close(nb);
	nb = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	CALL("connect nonblocking refused", connect(nb, (struct sockaddr *)&cp, sizeof(cp)));
	CALL("poll refused", poll(&pfd, (pfd.fd = nb, 1), 2000));
	l = sizeof(err);
	CALL("getsockopt SO_ERROR refused", getsockopt(nb, SOL_SOCKET, SO_ERROR, &err, &l));
	printf("  so_error=%s\n", err ? ename(err) : "0");
	CALL("getsockopt SO_ERROR again", getsockopt(nb, SOL_SOCKET, SO_ERROR, &err, &l));
	printf("  so_error=%s\n", err ? ename(err) : "0");
	close(nb);
	c = socket(AF_INET, SOCK_STREAM, 0);
	CALL("connect NULL addr", connect(c, NULL, sizeof(la)));
	CALL("connect PROT_NONE addr", connect(c, (struct sockaddr *)(guard_base + pagesz), sizeof(la)));
	CALL("connect(-1) PROT_NONE addr", connect(-1, (struct sockaddr *)(guard_base + pagesz), sizeof(la)));
	CALL("connect(closed) PROT_NONE addr", connect(cps + 100, (struct sockaddr *)(guard_base + pagesz), sizeof(la)));
	{
		/* A 16-byte AF_UNIX-looking address claiming 200 bytes: the kernel
		 * refuses the length before reading a byte. */
		struct sockaddr *tiny = at_end(NULL, 16);
		tiny->sa_family = AF_UNIX;
		CALL("connect 16-byte addr, addrlen 200", connect(c, tiny, 200));
		CALL("connect 16-byte addr, addrlen -1", connect(c, tiny, (socklen_t)-1));
		tiny->sa_family = AF_INET6;
		CALL("connect 16-byte v6 addr, addrlen 28", connect(c, tiny, 28));
	}
	CALL("connect addrlen 0", connect(c, (struct sockaddr *)&la, 0));
	CALL("connect addrlen 1000", connect(c, (struct sockaddr *)&la, 1000));
	CALL("connect AF_UNIX addr on tcp", connect(c, (struct sockaddr *)&(struct sockaddr_un){ .sun_family = AF_UNIX, .sun_path = "s1" }, sizeof(struct sockaddr_un)));
	close(c);

	puts("## getsockopt basics");
	show_getsockopt("SO_TYPE", ls, SOL_SOCKET, SO_TYPE, 4);
	show_getsockopt("SO_DOMAIN", ls, SOL_SOCKET, SO_DOMAIN, 4);
	show_getsockopt("SO_PROTOCOL", ls, SOL_SOCKET, SO_PROTOCOL, 4);
	show_getsockopt("SO_ACCEPTCONN", ls, SOL_SOCKET, SO_ACCEPTCONN, 4);
	show_getsockopt("SO_ERROR", ls, SOL_SOCKET, SO_ERROR, 4);
	show_getsockopt("SO_REUSEADDR", ls, SOL_SOCKET, SO_REUSEADDR, 4);
	show_getsockopt("TCP_NODELAY", ls, IPPROTO_TCP, TCP_NODELAY, 4);
	show_getsockopt("TCP_DEFER_ACCEPT", ls, IPPROTO_TCP, TCP_DEFER_ACCEPT, 4);
	show_getsockopt("TCP_CONGESTION", ls, IPPROTO_TCP, TCP_CONGESTION, 16);
	CALL("listen listener INT_MAX", listen(ls, INT_MAX));
	CALL("listen listener -5", listen(ls, -5));
	CALL("close listener", close(ls));
	CALL("close listener twice", close(ls));
	close(cps);
}

static void fd_calls(void)
{
	int s, t, p[2];

	puts("## dup and close");
	s = CALL("socket", socket(AF_INET, SOCK_STREAM, 0));
	CALL("dup2 onto itself", dup2(s, s));
	CALL("dup3 onto itself", dup3(s, s, 0));
	CALL("dup3 bad flags", dup3(s, 60, 0x4321));
	CALL("dup3 O_CLOEXEC", dup3(s, 61, O_CLOEXEC));
	printf("  cloexec=%d\n", !!(fcntl(61, F_GETFD) & FD_CLOEXEC));
	CALL("listen via dup3 fd", listen(61, 3));
	CALL("close 61", close(61));
	t = CALL("dup", dup(s));
	CALL("close original", close(s));
	CALL("setsockopt via dup", setsockopt(t, SOL_SOCKET, SO_KEEPALIVE, (int[]){1}, sizeof(int)));
	CALL("pipe", pipe(p));
	/* dup2 a pipe over a socket fd, then use the fd as a socket again. */
	CALL("dup2 pipe over socket", dup2(p[0], t));
	CALL("setsockopt on dup2'd pipe", setsockopt(t, SOL_SOCKET, SO_KEEPALIVE, (int[]){1}, sizeof(int)));
	CALL("listen on dup2'd pipe", listen(t, 1));
	s = socket(AF_INET, SOCK_STREAM, 0);
	CALL("dup2 socket over pipe", dup2(s, t));
	CALL("setsockopt after dup2 back", setsockopt(t, IPPROTO_TCP, TCP_NODELAY, (int[]){1}, sizeof(int)));
	CALL("dup2 onto 1023", dup2(s, 1023));
	CALL("dup2 onto 1<<20", dup2(s, 1 << 20));
	CALL("dup2 onto -1", dup2(s, -1));
	CALL("close_range bad flags", close_range(3, ~0U, 0x80));
	CALL("close_range first>last", close_range(10, 5, 0));
	CALL("close_range CLOEXEC", close_range(1023, 1023, CLOSE_RANGE_CLOEXEC));
	printf("  cloexec=%d\n", !!(fcntl(1023, F_GETFD) & FD_CLOEXEC));
	CALL("close_range one", close_range(1023, 1023, 0));
	CALL("fcntl 1023 after", fcntl(1023, F_GETFD));
	CALL("close_range empty span", close_range(900, 1000, 0));
	CALL("close s", close(s));
	CALL("close t", close(t));
	CALL("close p0", close(p[0]));
	CALL("close p1", close(p[1]));
	/* A number freed by close is handed out again: fresh state. */
	s = CALL("socket reuse", socket(AF_INET, SOCK_DGRAM, 0));
	CALL("listen reused as udp", listen(s, 1));
	close(s);
}

static void final_state(void)
{
	struct sigaction sa;
	sigset_t set;
	int fd, n = 0;

	puts("## process state");
	sigaction(SIGPIPE, NULL, &sa);
	printf("SIGPIPE handler default=%d\n", sa.sa_handler == SIG_DFL);
	sigprocmask(SIG_BLOCK, NULL, &set);
	printf("SIGPIPE blocked=%d\n", sigismember(&set, SIGPIPE));
	printf("open fds below 256:");
	for (fd = 0; fd < 256; fd++)
		if (fcntl(fd, F_GETFD) >= 0) {
			printf(" %d", fd);
			n++;
		}
	printf(" (%d)\n", n);
	printf("cwd entries: s1=%d d1=%d\n", access("s1", F_OK) == 0, access("d1", F_OK) == 0);
}

int main(int argc, char **argv)
{
	if (argc != 2 || chdir(argv[1]) < 0) {
		fprintf(stderr, "usage: transparency EMPTY-DIR\n");
		return 2;
	}
	pagesz = sysconf(_SC_PAGESIZE);
	guard_base = mmap(NULL, 2 * pagesz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard_base == MAP_FAILED || mprotect(guard_base + pagesz, pagesz, PROT_NONE) < 0) {
		perror("mmap");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	bad_fds();
	non_sockets();
	optvals();
	udp();
	ipv6();
	unix_sockets();
	tcp_flow();
	fd_calls();
	final_state();
	puts("## done");
	return 0;
}
