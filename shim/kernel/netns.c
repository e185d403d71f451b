/*
 * netns.c: the network namespace's own TCP counters (/proc/net/netstat,
 * /proc/net/snmp) beside the shim's findings.
 *
 * The kernel counts what a process cannot see: SYNs dropped while its
 * accept queue was full (ListenOverflows), connections made by SYN cookies,
 * bare ACKs held back by TCP_DEFER_ACCEPT. These counters are per network
 * namespace, not per process: everything here says so in its names.
 *
 * Read only once per process for the baseline (its first TCP socket(),
 * listen or accept), at each listener_stats line and at exit; never on
 * the per-call path. The files
 * are header/value line pairs whose field sets differ between kernels, so
 * they are parsed by name, and a counter this kernel lacks stays absent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel/kernel.h"

static const struct {
	const char *group;      /* the line prefix before ':' */
	const char *name;
} counters[SA_NS_N] = {
	[SA_NS_LISTEN_OVERFLOWS] = { "TcpExt", "ListenOverflows" },
	[SA_NS_LISTEN_DROPS] = { "TcpExt", "ListenDrops" },
	[SA_NS_DEFER_ACCEPT_DROP] = { "TcpExt", "TCPDeferAcceptDrop" },
	[SA_NS_SYNCOOKIES_SENT] = { "TcpExt", "SyncookiesSent" },
	[SA_NS_SYNCOOKIES_RECV] = { "TcpExt", "SyncookiesRecv" },
	[SA_NS_SYNCOOKIES_FAILED] = { "TcpExt", "SyncookiesFailed" },
	[SA_NS_REQQ_FULL_DO_COOKIES] = { "TcpExt", "TCPReqQFullDoCookies" },
	[SA_NS_REQQ_FULL_DROP] = { "TcpExt", "TCPReqQFullDrop" },
	[SA_NS_SYN_RETRANS] = { "TcpExt", "TCPSynRetrans" },
	[SA_NS_FASTOPEN_PASSIVE] = { "TcpExt", "TCPFastOpenPassive" },
	[SA_NS_RETRANS_SEGS] = { "Tcp", "RetransSegs" },
	[SA_NS_ATTEMPT_FAILS] = { "Tcp", "AttemptFails" },
};

const char *sa_netns_name(int i)
{
	return i >= 0 && i < SA_NS_N ? counters[i].name : "?";
}

/* Next whitespace-separated token in [*p, end) on the current line. */
static int next_token(const char **p, const char *end, const char **tok, size_t *len)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s >= end || *s == '\n')
		return 0;
	*tok = s;
	while (s < end && *s != ' ' && *s != '\t' && *s != '\n')
		s++;
	*len = (size_t)(s - *tok);
	*p = s;
	return 1;
}

static const char *line_end(const char *s, const char *end)
{
	const char *nl = memchr(s, '\n', (size_t)(end - s));

	return nl ? nl : end;
}

/* One header line h and its value line v (same prefix). */
static int parse_pair(const char *h, const char *he, const char *v, const char *ve,
		      size_t plen, struct sa_netns_snap *snap)
{
	const char *hp = h + plen + 1, *vp = v + plen + 1, *ht, *vt;
	size_t hl, vl;
	int i, found = 0;
	char num[32];

	while (next_token(&hp, he, &ht, &hl)) {
		if (!next_token(&vp, ve, &vt, &vl))
			break;
		for (i = 0; i < SA_NS_N; i++) {
			if (strlen(counters[i].group) != plen || strncmp(counters[i].group, h, plen) != 0 ||
			    strlen(counters[i].name) != hl || strncmp(counters[i].name, ht, hl) != 0)
				continue;
			if (vl == 0 || vl >= sizeof num)
				break;
			memcpy(num, vt, vl);
			num[vl] = '\0';
			{
				char *e;
				/* Some Tcp fields (MaxConn) are signed; ours are not. */
				unsigned long long x = strtoull(num, &e, 10);
				if (*e != '\0' || num[0] == '-')
					break;
				snap->v[i] = x;
				snap->present |= 1u << i;
				found++;
			}
			break;
		}
	}
	return found;
}

int sa_netns_parse(const char *text, struct sa_netns_snap *snap)
{
	const char *p = text, *end = text + strlen(text);
	int found = 0;

	while (p < end) {
		const char *he = line_end(p, end), *colon, *v, *ve;
		size_t plen;

		colon = memchr(p, ':', (size_t)(he - p));
		if (!colon || he >= end) {
			p = he + 1;
			continue;
		}
		plen = (size_t)(colon - p);
		v = he + 1;
		ve = line_end(v, end);
		/* A header line is followed by a value line with the same
		 * prefix; anything else is skipped one line at a time. */
		if ((size_t)(ve - v) > plen && strncmp(v, p, plen) == 0 && v[plen] == ':') {
			found += parse_pair(p, he, v, ve, plen, snap);
			p = ve + 1;
		} else {
			p = he + 1;
		}
	}
	if (found)
		snap->valid = 1;
	return found;
}

static int read_file(const char *path, char *buf, size_t cap)
{
	size_t used = 0;
	ssize_t n;
	int fd = sa_nc_open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (used + 1 < cap && (n = sa_nc_read(fd, buf + used, cap - 1 - used)) > 0)
		used += (size_t)n;
	sa_nc_close(fd);
	buf[used] = '\0';
	return used ? 0 : -EIO;
}

int sa_netns_read(struct sa_netns_snap *snap)
{
	/* /proc/net/netstat is ~4 KB on 6.x; leave room for kernels to come. */
	size_t cap = 64 * 1024;
	/* Not the heap: this runs inside wrappers a host handler may jump out of. */
	char *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int r1, r2;

	memset(snap, 0, sizeof *snap);
	if (buf == MAP_FAILED)
		return -ENOMEM;
	r1 = read_file("/proc/net/netstat", buf, cap);
	if (r1 == 0)
		sa_netns_parse(buf, snap);
	r2 = read_file("/proc/net/snmp", buf, cap);
	if (r2 == 0)
		sa_netns_parse(buf, snap);
	munmap(buf, cap);
	return snap->valid ? 0 : (r1 ? r1 : -ENOENT);
}

int sa_netns_delta(const struct sa_netns_snap *a, const struct sa_netns_snap *b, int i, uint64_t *out)
{
	if (!a || !b || !a->valid || !b->valid || i < 0 || i >= SA_NS_N)
		return 0;
	if (!(a->present & b->present & (1u << i)))
		return 0;
	/* Counters only rise; a smaller value means they were reset. */
	*out = b->v[i] >= a->v[i] ? b->v[i] - a->v[i] : b->v[i];
	return 1;
}

json_t *sa_netns_delta_json(const struct sa_netns_snap *a, const struct sa_netns_snap *b)
{
	json_t *o = json_object();
	uint64_t d;
	int i;

	for (i = 0; i < SA_NS_N; i++)
		if (sa_netns_delta(a, b, i, &d))
			json_object_set_new(o, counters[i].name, json_integer((json_int_t)d));
	return o;
}

/* 0 none, 1 being taken, 2 valid. */
#define base_state sa_netns_base_state
int base_state;
static struct sa_netns_snap base;

SA_FORK_TEXT void sa_netns_baseline(void)
{
	int expected = 0;

	if (__atomic_load_n(&base_state, __ATOMIC_ACQUIRE) != 0 ||
	    !__atomic_compare_exchange_n(&base_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (sa_netns_read(&base) == 0)
		__atomic_store_n(&base_state, 2, __ATOMIC_RELEASE);
	/* Unreadable (/proc not mounted): stay at 1, never try again. */
}

const struct sa_netns_snap *sa_netns_base(void)
{
	return __atomic_load_n(&base_state, __ATOMIC_ACQUIRE) == 2 ? &base : NULL;
}

void sa_netns_reset(void)
{
	__atomic_store_n(&base_state, 0, __ATOMIC_RELEASE);
}

void sa_netns_summary(json_t *summary)
{
	const struct sa_netns_snap *b = sa_netns_base();
	struct sa_netns_snap now;

	if (!b || sa_netns_read(&now) != 0)
		return;
	json_object_set_new(summary, "netns_counters", sa_netns_delta_json(b, &now));
}
