/*
 * addr.c: socket addresses as the lines spell them ("a.b.c.d:port",
 * "[v6]:port", AF_UNIX paths), as text and straight into a line. IPv4,
 * which nearly every accept and connect line carries, is tables and fixed
 * copies, and the thread's last address is kept as text.
 *
 * Pure: no allocation, no lock, no system call.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "line/line.h"

/* "d.", "dd.", "ddd." for every octet, padded to 4 bytes with dots: an
 * IPv4 address is four 4-byte copies, each advanced by its own length. */
static const char octets[256][4] = {
	"0...", "1...", "2...", "3...", "4...", "5...", "6...", "7...",
	"8...", "9...", "10..", "11..", "12..", "13..", "14..", "15..",
	"16..", "17..", "18..", "19..", "20..", "21..", "22..", "23..",
	"24..", "25..", "26..", "27..", "28..", "29..", "30..", "31..",
	"32..", "33..", "34..", "35..", "36..", "37..", "38..", "39..",
	"40..", "41..", "42..", "43..", "44..", "45..", "46..", "47..",
	"48..", "49..", "50..", "51..", "52..", "53..", "54..", "55..",
	"56..", "57..", "58..", "59..", "60..", "61..", "62..", "63..",
	"64..", "65..", "66..", "67..", "68..", "69..", "70..", "71..",
	"72..", "73..", "74..", "75..", "76..", "77..", "78..", "79..",
	"80..", "81..", "82..", "83..", "84..", "85..", "86..", "87..",
	"88..", "89..", "90..", "91..", "92..", "93..", "94..", "95..",
	"96..", "97..", "98..", "99..", "100.", "101.", "102.", "103.",
	"104.", "105.", "106.", "107.", "108.", "109.", "110.", "111.",
	"112.", "113.", "114.", "115.", "116.", "117.", "118.", "119.",
	"120.", "121.", "122.", "123.", "124.", "125.", "126.", "127.",
	"128.", "129.", "130.", "131.", "132.", "133.", "134.", "135.",
	"136.", "137.", "138.", "139.", "140.", "141.", "142.", "143.",
	"144.", "145.", "146.", "147.", "148.", "149.", "150.", "151.",
	"152.", "153.", "154.", "155.", "156.", "157.", "158.", "159.",
	"160.", "161.", "162.", "163.", "164.", "165.", "166.", "167.",
	"168.", "169.", "170.", "171.", "172.", "173.", "174.", "175.",
	"176.", "177.", "178.", "179.", "180.", "181.", "182.", "183.",
	"184.", "185.", "186.", "187.", "188.", "189.", "190.", "191.",
	"192.", "193.", "194.", "195.", "196.", "197.", "198.", "199.",
	"200.", "201.", "202.", "203.", "204.", "205.", "206.", "207.",
	"208.", "209.", "210.", "211.", "212.", "213.", "214.", "215.",
	"216.", "217.", "218.", "219.", "220.", "221.", "222.", "223.",
	"224.", "225.", "226.", "227.", "228.", "229.", "230.", "231.",
	"232.", "233.", "234.", "235.", "236.", "237.", "238.", "239.",
	"240.", "241.", "242.", "243.", "244.", "245.", "246.", "247.",
	"248.", "249.", "250.", "251.", "252.", "253.", "254.", "255.",
};

/* A port's digits (0..65535) forward at d, no loop; returns the end.
 * Writes up to 6 bytes (a 5-digit port leaves one more past its text). */
static inline char *port_text(char *d, unsigned v)
{
	if (v < 100) {
		if (v < 10) {
			*d = (char)('0' + v);
			return d + 1;
		}
		__builtin_memcpy(d, sa_pairs + 2 * v, 2);
		return d + 2;
	}
	if (v < 10000) {
		unsigned hi = v / 100, lo = v % 100;
		if (hi < 10) {
			*d++ = (char)('0' + hi);
		} else {
			__builtin_memcpy(d, sa_pairs + 2 * hi, 2);
			d += 2;
		}
		__builtin_memcpy(d, sa_pairs + 2 * lo, 2);
		return d + 2;
	}
	/* 10000 .. 65535 (most ephemeral ports): two digits, then three from
	 * the table (its fourth byte, written at d[5], is past the text). */
	{
		unsigned hi = v / 1000, lo = v - hi * 1000;

		__builtin_memcpy(d, sa_pairs + 2 * hi, 2);
		__builtin_memcpy(d + 2, sa_trips[lo], 4);
		return d + 5;
	}
}

/* "a.b.c.d:port" at out, which has room for 24 bytes (each octet is a
 * 4-byte copy, advanced by its own length); returns the length. By hand,
 * not inet_ntop and printf: they were a third of an accept line. */
/* Each octet's text with its dot: one load, not two compares, per octet. */
static const unsigned char octet_len[256] = { [0 ... 9] = 2, [10 ... 99] = 3, [100 ... 255] = 4 };

/* "a.b.c.d:" at out (16 bytes written); returns its length. */
static inline size_t addr4_text(char *out, const unsigned char *a)
{
	size_t n = 0;

#define OCTET(x) do { __builtin_memcpy(out + n, octets[x], 4); n += octet_len[x]; } while (0)
	OCTET(a[0]);
	OCTET(a[1]);
	OCTET(a[2]);
	OCTET(a[3]);
#undef OCTET
	out[n - 1] = ':';
	return n;
}

static inline size_t ipv4_text(char *out, const struct sockaddr_in *in)
{
	size_t n = addr4_text(out, (const unsigned char *)&in->sin_addr);

	return (size_t)(port_text(out + n, ntohs(in->sin_port)) - out);
}

/* The last IPv4 address this thread wrote, as "a.b.c.d:": a server's
 * peers repeat (a proxy in front, a client's many connections), and then
 * the text is one copy. seq as in sa_real_cache: a signal handler that
 * writes a line in the middle changes it, and the text is made again. */
static __thread struct {
	uint32_t addr;
	unsigned seq;
	unsigned char len;   /* 0: empty */
	char s[16];
} last4 SA_TLS;

/* A new address: its text at out, and kept in last4. */
static __attribute__((noinline)) size_t last4_fill(char *out, uint32_t addr)
{
	size_t n = addr4_text(out, (const unsigned char *)&addr);
	unsigned seq = ++last4.seq;

	last4.len = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__builtin_memcpy(last4.s, out, 16);
	last4.addr = addr;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	last4.len = (unsigned char)n;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (last4.seq != seq)   /* a handler wrote in between */
		last4.len = 0;
	return n;
}

/* "a.b.c.d:port" at out (at most 22 bytes written); returns its length. */
static inline size_t ipv4_text_cached(char *out, const struct sockaddr_in *in)
{
	uint32_t addr = in->sin_addr.s_addr;
	unsigned seq = last4.seq;
	size_t n;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (SA_LIKELY(last4.len && last4.addr == addr)) {
		__builtin_memcpy(out, last4.s, 16);
		n = last4.len;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (SA_UNLIKELY(last4.seq != seq))
			n = addr4_text(out, (const unsigned char *)&addr);
	} else {
		n = last4_fill(out, addr);
	}
	return (size_t)(port_text(out + n, ntohs(in->sin_port)) - out);
}

int sa_addr_text(const struct sockaddr *sa, socklen_t len, char *out, size_t cap)
{
	char host[INET6_ADDRSTRLEN];
	size_t n = 0;

	if (!sa || len < (socklen_t)sizeof(sa_family_t) || cap < SA_ADDR_TEXT_MAX)
		return -1;
	switch (sa->sa_family) {
	case AF_INET:
		if (len < (socklen_t)sizeof(struct sockaddr_in))
			return -1;
		return (int)ipv4_text(out, (const struct sockaddr_in *)sa);
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		if (len < (socklen_t)sizeof *in6 || !inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host))
			return -1;
		return snprintf(out, cap, "[%s]:%u", host, ntohs(in6->sin6_port));
	}
	case AF_UNIX: {
		const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
		size_t max = len - offsetof(struct sockaddr_un, sun_path);
		if (max > sizeof un->sun_path)
			max = sizeof un->sun_path;
		if (max == 0) {
			memcpy(out, "unnamed", 7);
			return 7;
		}
		if (un->sun_path[0] == '\0') {
			/* Abstract: "@" then the name, which may hold any byte. */
			out[0] = '@';
			memcpy(out + 1, un->sun_path + 1, max - 1);
			return (int)max;
		}
		n = strnlen(un->sun_path, max);
		memcpy(out, un->sun_path, n);
		return (int)n;
	}
	default:
		return snprintf(out, cap, "family:%d", sa->sa_family);
	}
}

/* The address as sa_json_addr() gives it. */
/* sa_linebuf_addr's other cases, apart: the IPv4 one then needs no frame. */
static __attribute__((noinline)) int addr_other(struct sa_linebuf *o, const struct sockaddr *sa, socklen_t len)
{
	char t[SA_ADDR_TEXT_MAX];
	int n = sa_addr_text(sa, len, t, sizeof t);

	if (n < 0)
		return sa_linebuf_put(o, "null", 4);
	if (sa->sa_family == AF_UNIX)   /* a path: any bytes */
		return sa_linebuf_bytes(o, t, (size_t)n);
	/* Digits, dots, colons, brackets, hex: nothing to escape. */
	return sa_linebuf_put(o, "\"", 1) || sa_linebuf_put(o, t, (size_t)n) || sa_linebuf_put(o, "\"", 1);
}

int sa_linebuf_addr(struct sa_linebuf *o, const struct sockaddr *sa, socklen_t len)
{
	/* IPv4, most of what we write: straight into the line. */
	if (sa && len >= (socklen_t)sizeof(struct sockaddr_in) && sa->sa_family == AF_INET &&
	    o->end - o->p >= 32) {
		*o->p = '"';
		o->p += 1 + ipv4_text_cached(o->p + 1, (const struct sockaddr_in *)sa);
		*o->p++ = '"';
		return 0;
	}
	return addr_other(o, sa, len);
}
