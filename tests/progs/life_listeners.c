/*
 * life_listeners: short-lived listeners, as an FTP
 * server's passive mode makes them: listen, accept one connection, close.
 * 100 warm-up rounds, then N; VmRSS (kB, /proc/self/status) is read after
 * the warm-up, half-way and at the end: "# rss_kb BEFORE MID AFTER".
 *   life_listeners N
 */
#include "life_common.h"

static long rss_kb(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

static int round1(void)
{
	struct linger lg = { 1, 0 };
	struct sockaddr_in a;
	int port, l = life_listener(1, &port), c, s;

	a = life_addr(port);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a))
		return perror("connect"), -1;
	s = accept(l, NULL, NULL);
	if (s < 0)
		return perror("accept"), -1;
	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);   /* RST: no TIME_WAIT */
	close(c);
	close(s);
	close(l);
	return 0;
}

int main(int argc, char **argv)
{
	long n, r0, r1, i;

	if (argc != 2)
		return 2;
	n = atol(argv[1]);
	for (i = 0; i < 100; i++)
		if (round1())
			return 1;
	r0 = rss_kb();
	for (i = 0; i < n / 2; i++)
		if (round1())
			return 1;
	r1 = rss_kb();
	for (; i < n; i++)
		if (round1())
			return 1;
	fprintf(stderr, "# rss_kb %ld %ld %ld\n", r0, r1, rss_kb());
	printf("listeners %ld, one accept each\n", n + 100);
	return 0;
}
