/*
 * qa_client: the TCP_QUICKACK patterns the shim must tell apart, against
 * an echo server on 127.0.0.1.
 *
 *   qa_client PORT [--turns N] [--writes W] [--size B] [--nodelay]
 *             [--qa never|once|write|request|turn] [--every K] [--trace]
 *
 * Each turn writes W messages of B bytes, then reads the W*B echoed bytes.
 *   --qa never    never sets TCP_QUICKACK
 *   --qa once     sets TCP_QUICKACK=1 once, right after connect
 *   --qa write    sets it after every write (the hot loop); with
 *                 --every K, after every K-th write of a turn
 *   --qa request  sets it once per turn, before the turn's writes (keep-alive)
 *   --qa turn     sets it once per turn, after reading the reply (request/response)
 * Prints one line of figures: per-turn latency (p50, p95, mean, in us), the
 * connection's data segments out/in and segs out (TCP_INFO), and the sets.
 * --trace also prints, at each set, the data segments out/in and the bytes
 * the program read (tcpi_bytes_received - FIONREAD) since the last set.
 */
#include <arpa/inet.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int fd, trace;
static long sets;
static uint32_t last_out, last_in;
static uint64_t last_read;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int info(struct tcp_info *ti)
{
	socklen_t l = sizeof *ti;

	memset(ti, 0, sizeof *ti);
	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &l);
}

static void set_quickack(void)
{
	int one = 1, unread = 0;
	struct tcp_info ti;

	if (setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one) != 0) {
		perror("setsockopt TCP_QUICKACK");
		exit(1);
	}
	sets++;
	if (trace && ioctl(fd, FIONREAD, &unread) == 0 && info(&ti) == 0) {
		uint64_t rd = ti.tcpi_bytes_received - (uint64_t)unread;
		printf("set %ld out+%u in+%u read+%lld\n", sets, ti.tcpi_data_segs_out - last_out,
		       ti.tcpi_data_segs_in - last_in, (long long)(rd - last_read));
		last_out = ti.tcpi_data_segs_out;
		last_in = ti.tcpi_data_segs_in;
		last_read = rd;
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int turns = 200, writes = 2, size = 32, nodelay = 0, every = 1, i, t, w;
	const char *qa = "never";
	double *lat, sum = 0;
	char *buf;
	struct tcp_info ti;

	if (argc < 2) {
		fprintf(stderr, "usage: qa_client PORT [--turns N] [--writes W] [--size B] [--nodelay] [--qa MODE] [--every K] [--trace]\n");
		return 2;
	}
	a.sin_port = htons((unsigned short)atoi(argv[1]));
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--turns") && i + 1 < argc) turns = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--writes") && i + 1 < argc) writes = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--size") && i + 1 < argc) size = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--qa") && i + 1 < argc) qa = argv[++i];
		else if (!strcmp(argv[i], "--every") && i + 1 < argc) every = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--nodelay")) nodelay = 1;
		else if (!strcmp(argv[i], "--trace")) trace = 1;
		else { fprintf(stderr, "qa_client: bad argument %s\n", argv[i]); return 2; }
	}
	if (turns < 1 || writes < 1 || size < 1 || size > 65536 || every < 1)
		return 2;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	buf = calloc((size_t)writes, (size_t)size);
	lat = calloc((size_t)turns, sizeof *lat);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (!buf || !lat || fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		perror("qa_client");
		return 1;
	}
	if (nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay) != 0) {
		perror("TCP_NODELAY");
		return 1;
	}
	if (!strcmp(qa, "once"))
		set_quickack();
	for (t = 0; t < turns; t++) {
		double t0 = now_us();
		size_t want = (size_t)writes * (size_t)size, got = 0;

		if (!strcmp(qa, "request"))
			set_quickack();
		for (w = 0; w < writes; w++) {
			if (write(fd, buf + (size_t)w * size, (size_t)size) != size) {
				perror("write");
				return 1;
			}
			if (!strcmp(qa, "write") && (w + 1) % every == 0)
				set_quickack();
		}
		while (got < want) {
			ssize_t n = read(fd, buf, want - got);
			if (n <= 0) {
				perror("read");
				return 1;
			}
			got += (size_t)n;
		}
		if (!strcmp(qa, "turn"))
			set_quickack();
		lat[t] = now_us() - t0;
		sum += lat[t];
	}
	info(&ti);
	qsort(lat, (size_t)turns, sizeof *lat, cmp);
	printf("qa=%s nodelay=%d turns=%d writes=%d size=%d sets=%ld p50_us=%.1f p95_us=%.1f mean_us=%.1f data_segs_out=%u data_segs_in=%u segs_out=%u\n",
	       qa, nodelay, turns, writes, size, sets, lat[turns / 2], lat[(int)(turns * 0.95)],
	       sum / turns, ti.tcpi_data_segs_out, ti.tcpi_data_segs_in, ti.tcpi_segs_out);
	close(fd);
	free(buf);
	free(lat);
	return 0;
}
