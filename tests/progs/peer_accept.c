/* peer_accept: accepts five connections, each with the peer's address asked
 * for a different way, to check the accept line's "peer" whichever way the
 * host asked (the shim takes it from the host's buffer only when the
 * host's addrlen is a local and the address fitted):
 *   1 stack: sockaddr_storage and its length on the stack (nginx)
 *   2 short: length 6 on the stack, the kernel cuts the address short
 *   3 heap:  the length in malloc'd memory
 *   4 null:  no address asked for
 *   5 v6:    an IPv6 listener, stack buffers
 * For each it prints "MODE client=ADDR:PORT got=LEN BYTES" where ADDR:PORT
 * is the client's own address and LEN and BYTES (hex) what the host got. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int listener(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = socket(family, SOCK_STREAM, 0);
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };

	if (fd < 0)
		return -1;
	if (family == AF_INET) {
		in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(fd, (struct sockaddr *)&in, sizeof in) != 0)
			return -1;
	} else {
		in6.sin6_addr = in6addr_loopback;
		if (bind(fd, (struct sockaddr *)&in6, sizeof in6) != 0)
			return -1;
	}
	*len = sizeof *ss;
	if (listen(fd, 8) != 0 || getsockname(fd, (struct sockaddr *)ss, len) != 0)
		return -1;
	return fd;
}

/* Connects to the listener; prints the client's own address. */
static int client(const struct sockaddr_storage *to, socklen_t tolen, char *me, size_t mesz)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof ss;
	char host[INET6_ADDRSTRLEN];
	int fd = socket(to->ss_family, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)to, tolen) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &l) != 0)
		return -1;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
		snprintf(me, mesz, "%s:%u", host, ntohs(in->sin_port));
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		snprintf(me, mesz, "[%s]:%u", host, ntohs(in6->sin6_port));
	}
	return fd;
}

static void report(const char *mode, const char *me, const void *addr, socklen_t len)
{
	const unsigned char *b = addr;
	socklen_t i;

	printf("%s client=%s got=%u ", mode, me, (unsigned)len);
	for (i = 0; addr && i < len && i < 28; i++)
		printf("%02x", b[i]);
	printf("\n");
}

int main(void)
{
	struct sockaddr_storage l4, l6;
	socklen_t l4len, l6len;
	int fd4 = listener(AF_INET, &l4, &l4len), fd6 = listener(AF_INET6, &l6, &l6len);
	char me[80];
	int c, s;

	if (fd4 < 0)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	{   /* 1 stack */
		struct sockaddr_storage peer;
		socklen_t plen = sizeof peer;
		c = client(&l4, l4len, me, sizeof me);
		s = accept4(fd4, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
		if (c < 0 || s < 0)
			return 3;
		report("stack", me, &peer, plen);
		close(s);
		close(c);
	}
	{   /* 2 short: the kernel writes 6 of the 16 bytes, *alen becomes 16 */
		unsigned char peer[16];
		socklen_t plen = 6;
		memset(peer, 0xee, sizeof peer);
		c = client(&l4, l4len, me, sizeof me);
		s = accept(fd4, (struct sockaddr *)peer, &plen);
		if (c < 0 || s < 0)
			return 4;
		report("short", me, peer, 16);
		close(s);
		close(c);
	}
	{   /* 3 heap */
		struct sockaddr_storage *peer = malloc(sizeof *peer);
		socklen_t *plen = malloc(sizeof *plen);
		*plen = sizeof *peer;
		c = client(&l4, l4len, me, sizeof me);
		s = accept(fd4, (struct sockaddr *)peer, plen);
		if (c < 0 || s < 0)
			return 5;
		report("heap", me, peer, *plen);
		free(peer);
		free(plen);
		close(s);
		close(c);
	}
	{   /* 4 null */
		c = client(&l4, l4len, me, sizeof me);
		s = accept(fd4, NULL, NULL);
		if (c < 0 || s < 0)
			return 6;
		report("null", me, NULL, 0);
		close(s);
		close(c);
	}
	if (fd6 >= 0) {   /* 5 v6 (skipped where ::1 is not configured) */
		struct sockaddr_in6 peer;
		socklen_t plen = sizeof peer;
		c = client(&l6, l6len, me, sizeof me);
		s = accept4(fd6, (struct sockaddr *)&peer, &plen, 0);
		if (c < 0 || s < 0)
			return 7;
		report("v6", me, &peer, plen);
		close(s);
		close(c);
	}
	return 0;
}
