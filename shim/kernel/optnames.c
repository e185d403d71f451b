/*
 * optnames.c: the socket options the shim knows by name: level, number,
 * name and the kind of value (int, bool, linger, timeval, string, opaque).
 * The shim looks options up by number (setsockopt); `sockaudit explain`
 * by name, from the same table.
 *
 * No syscalls; no state but a cache of lookups; calls nothing of the shim.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <strings.h>
#include <sys/socket.h>

#include "base/placement.h"
#include "readback.h"

/* Option numbers newer than some build machines' headers. */
#ifndef TCP_TX_DELAY
#define TCP_TX_DELAY 37
#endif
#ifndef TCP_RTO_MAX_MS
#define TCP_RTO_MAX_MS 44
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif
#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE 51
#endif
#ifndef TCP_FASTOPEN_NO_COOKIE
#define TCP_FASTOPEN_NO_COOKIE 34
#endif

/* A name longer than the inline array is a compile error, not a name
 * without its NUL. */
#define O(l, o, k) { l, o, #o, SA_OPT_##k + 0 * sizeof(char[sizeof(#o) <= SA_OPTNAME_MAX ? 1 : -1]) }

/* After .text with the long strings (the Makefile's script places every
 * .rodata.s* there): only an audited setsockopt and `sockaudit explain`
 * read it, and the library's first pages are for what every exec and
 * every forked child reads. */
static const struct sa_optdesc table[] SA_COLD_RODATA(optnames) = {
	O(SOL_SOCKET, SO_DEBUG, BOOL), O(SOL_SOCKET, SO_REUSEADDR, BOOL),
	O(SOL_SOCKET, SO_TYPE, INT), O(SOL_SOCKET, SO_ERROR, INT),
	O(SOL_SOCKET, SO_DONTROUTE, BOOL), O(SOL_SOCKET, SO_BROADCAST, BOOL),
	O(SOL_SOCKET, SO_SNDBUF, INT), O(SOL_SOCKET, SO_RCVBUF, INT),
	O(SOL_SOCKET, SO_SNDBUFFORCE, INT), O(SOL_SOCKET, SO_RCVBUFFORCE, INT),
	O(SOL_SOCKET, SO_KEEPALIVE, BOOL), O(SOL_SOCKET, SO_OOBINLINE, BOOL),
	O(SOL_SOCKET, SO_NO_CHECK, BOOL), O(SOL_SOCKET, SO_PRIORITY, INT),
	O(SOL_SOCKET, SO_LINGER, LINGER), O(SOL_SOCKET, SO_REUSEPORT, BOOL),
	O(SOL_SOCKET, SO_PASSCRED, BOOL), O(SOL_SOCKET, SO_RCVLOWAT, INT),
	O(SOL_SOCKET, SO_SNDLOWAT, INT), O(SOL_SOCKET, SO_RCVTIMEO, TIMEVAL),
	O(SOL_SOCKET, SO_SNDTIMEO, TIMEVAL), O(SOL_SOCKET, SO_BINDTODEVICE, STRING),
	O(SOL_SOCKET, SO_TIMESTAMP, BOOL), O(SOL_SOCKET, SO_TIMESTAMPNS, BOOL),
	O(SOL_SOCKET, SO_TIMESTAMPING, INT), O(SOL_SOCKET, SO_MARK, INT),
	O(SOL_SOCKET, SO_RXQ_OVFL, BOOL), O(SOL_SOCKET, SO_BUSY_POLL, INT),
	O(SOL_SOCKET, SO_INCOMING_CPU, INT), O(SOL_SOCKET, SO_ZEROCOPY, BOOL),
	O(SOL_SOCKET, SO_MAX_PACING_RATE, INT), O(SOL_SOCKET, SO_ATTACH_FILTER, OPAQUE),
	O(SOL_SOCKET, SO_DETACH_FILTER, OPAQUE), O(SOL_SOCKET, SO_LOCK_FILTER, BOOL),
	O(SOL_SOCKET, SO_PEEK_OFF, INT), O(SOL_SOCKET, SO_ATTACH_BPF, OPAQUE),
	O(SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, OPAQUE), O(SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, OPAQUE),
	O(SOL_SOCKET, SO_PASSSEC, BOOL), O(SOL_SOCKET, SO_SELECT_ERR_QUEUE, BOOL),
	O(SOL_SOCKET, SO_BUSY_POLL_BUDGET, INT), O(SOL_SOCKET, SO_PREFER_BUSY_POLL, BOOL),

	O(IPPROTO_TCP, TCP_NODELAY, BOOL), O(IPPROTO_TCP, TCP_MAXSEG, INT),
	O(IPPROTO_TCP, TCP_CORK, BOOL), O(IPPROTO_TCP, TCP_KEEPIDLE, INT),
	O(IPPROTO_TCP, TCP_KEEPINTVL, INT), O(IPPROTO_TCP, TCP_KEEPCNT, INT),
	O(IPPROTO_TCP, TCP_SYNCNT, INT), O(IPPROTO_TCP, TCP_LINGER2, INT),
	O(IPPROTO_TCP, TCP_DEFER_ACCEPT, INT), O(IPPROTO_TCP, TCP_WINDOW_CLAMP, INT),
	O(IPPROTO_TCP, TCP_INFO, OPAQUE), O(IPPROTO_TCP, TCP_QUICKACK, BOOL),
	O(IPPROTO_TCP, TCP_CONGESTION, STRING), O(IPPROTO_TCP, TCP_MD5SIG, OPAQUE),
	O(IPPROTO_TCP, TCP_THIN_LINEAR_TIMEOUTS, BOOL), O(IPPROTO_TCP, TCP_THIN_DUPACK, BOOL),
	O(IPPROTO_TCP, TCP_USER_TIMEOUT, INT), O(IPPROTO_TCP, TCP_REPAIR, INT),
	O(IPPROTO_TCP, TCP_FASTOPEN, INT), O(IPPROTO_TCP, TCP_TIMESTAMP, INT),
	O(IPPROTO_TCP, TCP_NOTSENT_LOWAT, INT), O(IPPROTO_TCP, TCP_SAVE_SYN, BOOL),
	O(IPPROTO_TCP, TCP_FASTOPEN_CONNECT, BOOL), O(IPPROTO_TCP, TCP_ULP, STRING),
	O(IPPROTO_TCP, TCP_FASTOPEN_NO_COOKIE, BOOL), O(IPPROTO_TCP, TCP_TX_DELAY, INT),
	O(IPPROTO_TCP, TCP_RTO_MAX_MS, INT),

	O(IPPROTO_IP, IP_TOS, INT), O(IPPROTO_IP, IP_TTL, INT),
	O(IPPROTO_IP, IP_HDRINCL, BOOL), O(IPPROTO_IP, IP_OPTIONS, OPAQUE),
	O(IPPROTO_IP, IP_RECVOPTS, BOOL), O(IPPROTO_IP, IP_PKTINFO, BOOL),
	O(IPPROTO_IP, IP_MTU_DISCOVER, INT), O(IPPROTO_IP, IP_RECVERR, BOOL),
	O(IPPROTO_IP, IP_RECVTTL, BOOL), O(IPPROTO_IP, IP_RECVTOS, BOOL),
	O(IPPROTO_IP, IP_MTU, INT), O(IPPROTO_IP, IP_FREEBIND, BOOL),
	O(IPPROTO_IP, IP_TRANSPARENT, BOOL), O(IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, BOOL),
	O(IPPROTO_IP, IP_MULTICAST_TTL, INT), O(IPPROTO_IP, IP_MULTICAST_LOOP, BOOL),
	O(IPPROTO_IP, IP_MULTICAST_IF, OPAQUE), O(IPPROTO_IP, IP_ADD_MEMBERSHIP, OPAQUE),
	O(IPPROTO_IP, IP_DROP_MEMBERSHIP, OPAQUE), O(IPPROTO_IP, IP_NODEFRAG, BOOL),
	O(IPPROTO_IP, IP_LOCAL_PORT_RANGE, INT),

	O(IPPROTO_IPV6, IPV6_V6ONLY, BOOL), O(IPPROTO_IPV6, IPV6_UNICAST_HOPS, INT),
	O(IPPROTO_IPV6, IPV6_MULTICAST_HOPS, INT), O(IPPROTO_IPV6, IPV6_MULTICAST_LOOP, BOOL),
	O(IPPROTO_IPV6, IPV6_MULTICAST_IF, INT), O(IPPROTO_IPV6, IPV6_TCLASS, INT),
	O(IPPROTO_IPV6, IPV6_RECVPKTINFO, BOOL), O(IPPROTO_IPV6, IPV6_MTU_DISCOVER, INT),
	O(IPPROTO_IPV6, IPV6_RECVERR, BOOL), O(IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, OPAQUE),
	O(IPPROTO_IPV6, IPV6_DROP_MEMBERSHIP, OPAQUE), O(IPPROTO_IPV6, IPV6_FREEBIND, BOOL),
	O(IPPROTO_IPV6, IPV6_TRANSPARENT, BOOL), O(IPPROTO_IPV6, IPV6_RECVTCLASS, BOOL),
	O(IPPROTO_IPV6, IPV6_AUTOFLOWLABEL, BOOL), O(IPPROTO_IPV6, IPV6_DONTFRAG, BOOL),
	O(IPPROTO_IPV6, IPV6_MTU, INT),
};
#undef O

/* The table is searched in order; what was found is remembered in a small
 * direct-mapped cache of pointers into it (a hit is checked against the
 * entry itself, so a racing or stale slot costs only the search). A
 * setsockopt repeat looks its option up more than once, and the search
 * costs ~60 instructions each time (bench/counts.sh ka4). */
#define LOOKUP_SLOTS 32
static const struct sa_optdesc *found[LOOKUP_SLOTS];

const struct sa_optdesc *sa_opt_lookup(int level, int opt)
{
	unsigned h = ((unsigned)level * 31u + (unsigned)opt) % LOOKUP_SLOTS;
	const struct sa_optdesc *d = __atomic_load_n(&found[h], __ATOMIC_RELAXED);
	size_t i;

	if (d && d->level == level && d->opt == opt)
		return d;
	for (i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].level == level && table[i].opt == opt) {
			__atomic_store_n(&found[h], &table[i], __ATOMIC_RELAXED);
			return &table[i];
		}
	return NULL;
}

const char *sa_sol_name(int level)
{
	switch (level) {
	case SOL_SOCKET: return "SOL_SOCKET";
	case IPPROTO_TCP: return "IPPROTO_TCP";
	case IPPROTO_IP: return "IPPROTO_IP";
	case IPPROTO_IPV6: return "IPPROTO_IPV6";
	case IPPROTO_UDP: return "IPPROTO_UDP";
	case SOL_RAW: return "SOL_RAW";
	default: return NULL;
	}
}

const struct sa_optdesc *sa_opt_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcasecmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

const struct sa_optdesc *sa_opt_nth(size_t i)
{
	return i < sizeof table / sizeof table[0] ? &table[i] : NULL;
}
