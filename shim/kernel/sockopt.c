/*
 * sockopt.c: option value decoders: a value of a known kind written as
 * JSON (the option table is optnames.c, the rules for what the kernel keeps
 * readback.c).
 *
 * No syscalls; no state but a cache of lookups. Decoders read at most len bytes of a buffer that the
 * caller has already seen the kernel accept or fill.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/time.h>

#include "kernel/kernel.h"

int sa_optval_write(struct sa_linebuf *o, enum sa_optkind k, const void *buf, socklen_t len)
{
	const unsigned char *b = buf;
	int v;

	if (!buf || len == 0)
		return sa_linebuf_put(o, "null", 4);
	switch (k) {
	case SA_OPT_INT:
	case SA_OPT_BOOL:
		if (len >= (socklen_t)sizeof(int)) {
			memcpy(&v, b, sizeof v);
			return sa_linebuf_int(o, v);
		}
		/* IPPROTO_IP options also take a single byte (do_ip_setsockopt). */
		return sa_linebuf_int(o, b[0]);
	case SA_OPT_LINGER: {
		struct linger l;
		if (len < (socklen_t)sizeof l)
			return sa_linebuf_put(o, "null", 4);
		memcpy(&l, b, sizeof l);
		return sa_linebuf_put(o, "{\"onoff\":", 9) || sa_linebuf_int(o, l.l_onoff) ||
		       sa_linebuf_put(o, ",\"linger\":", 10) || sa_linebuf_int(o, l.l_linger) ||
		       sa_linebuf_put(o, "}", 1);
	}
	case SA_OPT_TIMEVAL: {
		struct timeval tv;
		if (len < (socklen_t)sizeof tv)
			return sa_linebuf_put(o, "null", 4);
		memcpy(&tv, b, sizeof tv);
		return sa_linebuf_put(o, "{\"sec\":", 7) || sa_linebuf_int(o, tv.tv_sec) ||
		       sa_linebuf_put(o, ",\"usec\":", 8) || sa_linebuf_int(o, tv.tv_usec) ||
		       sa_linebuf_put(o, "}", 1);
	}
	case SA_OPT_STRING:
		/* Names (TCP_CONGESTION, SO_BINDTODEVICE) are under 16 bytes: a
		 * longer value is cut, as sa_json_bytes() cut it before. */
		return sa_linebuf_bytes(o, (const char *)b, strnlen((const char *)b, len < 200 ? len : 200));
	default:
		return sa_linebuf_put(o, "{\"bytes\":", 9) || sa_linebuf_u64(o, len) || sa_linebuf_put(o, "}", 1);
	}
}

void sa_line_opt_k(struct sa_line *L, const char *k, size_t kn, enum sa_optkind kind,
		   const void *buf, socklen_t len)
{
	if (!sa_line_key_k(L, k, kn))
		sa_line_check(L, sa_optval_write(&L->o, kind, buf, len));
}
