/*
 * sockopt.c: what a setsockopt means. Reads the value back with
 * getsockopt, names the option, explains known kernel adjustments
 * (TCP_DEFER_ACCEPT rounds, SO_RCVBUF doubling and caps, ...), flags any
 * other difference, and counts repeats instead of logging them again.
 *
 * Repeats are kept per process, not per fd (fd numbers are reused, so a
 * per-fd rule never helped a server): a call is "seen" by its (option,
 * value, outcome, kind of socket), the kind being listener, accepted from
 * listener X, outgoing to peer Y, or other. At info the first of each is
 * logged; later ones that read back as the logged one did (the value asked,
 * or the same explained adjustment, e.g. SO_RCVBUF doubled) are counted
 * (summary and listener_stats "setsockopt"). A read-back unlike the logged
 * one and every failure are logged each time; trace logs every call.
 *
 * Below trace the read-back itself is sampled where its answer cannot
 * differ between sockets of one kind: the first SA_OPT_SAMPLE_FIRST calls of
 * each seen entry are read back, then one in SA_OPT_SAMPLE_EVERY, the rest
 * counted as not_read_back. Any difference turns full read-back on for that
 * entry for good. Listeners and TCP_DEFER_ACCEPT are always read back;
 * trace reads back every call. TCP_QUICKACK calls all reach quickack.c.
 *
 * Only decodes optval after the real call succeeded, and only within optlen.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "audit/audit.h"
#include "audit/accept.h"
#include "syn_schedule.h"

/* Which kind of socket s is, for the seen table. */
static enum sa_optsock sock_kind(const struct sa_sock *s, uint64_t *id)
{
	*id = 0;
	if (!s)
		return SA_OPTSOCK_OTHER;
	if (s->flags & SA_F_LISTENER)
		return SA_OPTSOCK_LISTENER;
	if (s->flags & SA_F_ACCEPTED) {
		*id = s->acc.listener ? (uint64_t)(uintptr_t)s->acc.listener : (uint64_t)(unsigned)s->acc.listen_fd;
		return SA_OPTSOCK_ACCEPTED;
	}
	if (s->conn.peer_len > 0 && s->conn.peer_len <= sizeof s->conn.peer) {
		*id = sa_fnv64(14695981039346656037ull, s->conn.peer, s->conn.peer_len);
		return SA_OPTSOCK_OUTGOING;
	}
	return SA_OPTSOCK_OTHER;
}

/* "sol" (which 0) or "opt" (which 1): the name, or the number as a string. */
static void name_or_number(struct sa_line *L, int which, const char *name, int n)
{
	char b[16];

	if (!name) {
		snprintf(b, sizeof b, "%d", n);
		name = b;
	}
	if (which)
		sa_line_str(L, "opt", name);
	else
		sa_line_str(L, "sol", name);
}

static int as_int(const void *buf, socklen_t len, int *out)
{
	if (!buf || len == 0)
		return 0;
	if (len >= (socklen_t)sizeof(int))
		memcpy(out, buf, sizeof *out);
	else
		*out = *(const unsigned char *)buf;
	return 1;
}

static long long timeval_us(const void *buf)
{
	struct timeval tv;

	memcpy(&tv, buf, sizeof tv);
	return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* A judge's finding goes into the line's findings. */
static void say_finding(void *ctx, const char *code, const char *text)
{
	sa_findings_add(ctx, code, "%s", text);
}

/* Findings for an int-valued option whose read-back differs: the facts
 * its rule names (a sysctl, the deferral window) are read only now. */
static void explain_int(struct sa_findings *f, struct sa_sock *s, int fd, int level, int opt,
			const char *name, int req, int eff)
{
	struct sa_optfacts k = {
		.level = level, .opt = opt, .name = name, .req = req, .eff = eff,
		.stream = s && s->type == SOCK_STREAM, .somaxconn = -1,
	};
	unsigned need = sa_opt_needs(level, opt);

	if (need & SA_NEED_BUF_MAX)
		sa_read_sysctl(sa_buf_max_path(opt), &k.buf_max);
	if (need & SA_NEED_SOMAXCONN)
		sa_read_sysctl("/proc/sys/net/core/somaxconn", &k.somaxconn);
	if ((need & SA_NEED_DEFER) && req > 0 && eff == sa_defer_secs(sa_defer_rounds(req)))
		sa_defer_window(fd, eff, &k.defer_real_ms, &k.defer_rto_max_ms);
	sa_opt_judge_int(&k, say_finding, f);
}

void sa_sockopt_audit(int fd, struct sa_sock *s, int level, int opt, const void *val,
		      socklen_t len, int ret, int err)
{
	const struct sa_optdesc *d = sa_opt_lookup(level, opt);
	enum sa_optkind kind = d ? d->kind : (len == sizeof(int) ? SA_OPT_INT : SA_OPT_OPAQUE);
	unsigned char eff[256];
	socklen_t efflen = sizeof eff;
	int have_eff = 0, req_i = 0, eff_i = 0, quickack = level == IPPROTO_TCP && opt == TCP_QUICKACK;
	int trace = sa_level_enabled(SA_LEVEL_TRACE), always, first = 1;
	struct sa_findings f;
	struct sa_optseen *e;
	enum sa_optsock sk;
	uint64_t id, nth = 1, effhash;
	struct sa_line L;

	sa_findings_init(&f);
	if (s && ret == 0 && level == IPPROTO_TCP && (opt == TCP_NODELAY || opt == TCP_CORK) &&
	    as_int(val, len, &req_i)) {
		if (opt == TCP_NODELAY)
			s->opt.nodelay = req_i != 0;
		else
			s->opt.cork = req_i != 0;
	}
	/* Seen before in this process, on this kind of socket? A quickack is
	 * one entry whatever its value (quickack.c counts each call). */
	sk = sock_kind(s, &id);
	e = sa_optseen_get(sa_optseen_key(level, opt, ret, err, quickack ? NULL : val, len, sk, id),
			   level, opt, sk, id);
	if (e) {
		nth = __atomic_add_fetch(&e->calls, 1, __ATOMIC_RELAXED);
		first = !__atomic_exchange_n(&e->logged, 1, __ATOMIC_ACQ_REL);
		if (ret != 0)
			__atomic_add_fetch(&e->failed, 1, __ATOMIC_RELAXED);
	}
	always = trace || !e || sk == SA_OPTSOCK_LISTENER ||
		 (level == IPPROTO_TCP && opt == TCP_DEFER_ACCEPT);
	/* Sampled: nothing to learn from this read-back that the previous
	 * ones of this kind did not say. Counted (not_read_back). */
	if (ret == 0 && !sa_optseen_readback(nth, e ? __atomic_load_n(&e->full, __ATOMIC_RELAXED) : 1, always)) {
		sa_suppressed_add(1);
		sa_emit_skip("setsockopt", NULL);
		return;
	}

	if (ret == 0) {
		memset(eff, 0, sizeof eff);
		if (kind == SA_OPT_INT || kind == SA_OPT_BOOL)
			efflen = sizeof(int);
		else if (kind == SA_OPT_OPAQUE)
			efflen = len < sizeof eff ? len : sizeof eff;
		have_eff = kind != SA_OPT_OPAQUE &&
			   sa_real.getsockopt(fd, level, opt, eff, &efflen) == 0;
		if (e && have_eff)
			__atomic_add_fetch(&e->read_back, 1, __ATOMIC_RELAXED);
	}
	if (!sa_level_enabled(SA_LEVEL_INFO) && ret == 0 && !have_eff)
		return;

	if (have_eff && val) {
		const char *name = d ? d->name : "option";
		switch (kind) {
		case SA_OPT_INT:
			if (as_int(val, len, &req_i) && as_int(eff, efflen, &eff_i) && req_i != eff_i)
				explain_int(&f, s, fd, level, opt, name, req_i, eff_i);
			break;
		case SA_OPT_BOOL:
			if (!quickack && as_int(val, len, &req_i) && as_int(eff, efflen, &eff_i))
				sa_opt_judge_bool(name, req_i, eff_i, say_finding, &f);
			break;
		case SA_OPT_LINGER: {
			struct linger a, b;
			if (len >= (socklen_t)sizeof a && efflen >= (socklen_t)sizeof b) {
				memcpy(&a, val, sizeof a);
				memcpy(&b, eff, sizeof b);
				sa_opt_judge_linger(a.l_onoff, a.l_linger, b.l_onoff, b.l_linger, say_finding, &f);
			}
			break;
		}
		case SA_OPT_TIMEVAL:
			if (len >= (socklen_t)sizeof(struct timeval) && efflen >= (socklen_t)sizeof(struct timeval))
				sa_opt_judge_timeval(name, timeval_us(val), timeval_us(eff), say_finding, &f);
			break;
		case SA_OPT_STRING:
			sa_opt_judge_string(name, (const char *)val, len, (const char *)eff, efflen, say_finding, &f);
			break;
		default:
			break;
		}
	}

	if (e && f.n > 0) {
		__atomic_add_fetch(&e->differs, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&e->full, 1, __ATOMIC_RELAXED);   /* read back every call from now on */
	}

	/* Deferral on a listener: remember it and check its interplay. */
	if (s && ret == 0 && level == IPPROTO_TCP && opt == TCP_DEFER_ACCEPT) {
		sa_sock_set_defer(s, have_eff ? eff_i : 0);
		if (s->flags & SA_F_LISTENER)
			sa_listen_defer_checks(fd, s, &f);
	}

	/* This kind already has its line and the kernel kept what it kept
	 * then (the value asked, or the same explained adjustment): counted.
	 * A read-back unlike the logged one is logged again. */
	effhash = have_eff ? sa_fnv64(14695981039346656037ull, eff, efflen) | 1 : 0;
	if (e && first)
		__atomic_store_n(&e->eff_hash, effhash, __ATOMIC_RELAXED);
	if (!trace && ret == 0 && !first && e &&
	    (f.n == 0 || effhash == __atomic_load_n(&e->eff_hash, __ATOMIC_RELAXED))) {
		sa_suppressed_add(1);
		sa_emit_skip("setsockopt", NULL);
		return;
	}
	/* Nothing to say at this level: count it without building a JSON object
	 * (no allocation: warn is the level for hosts that call setsockopt from
	 * a signal handler, where malloc may be the code that was interrupted). */
	if (f.n == 0 && !sa_level_enabled(SA_LEVEL_INFO)) {
		sa_emit_skip("setsockopt", &f);
		return;
	}
	if (e)
		__atomic_add_fetch(&e->logged_n, 1, __ATOMIC_RELAXED);
	/* Written straight into a buffer: no allocation at any level. */
	sa_line_begin(&L, "setsockopt", fd, &f);
	name_or_number(&L, 0, sa_sol_name(level), level);
	name_or_number(&L, 1, d ? d->name : NULL, opt);
	if (ret == 0)
		sa_line_opt(&L, "requested", kind, val, len);
	else
		sa_line_null(&L, "requested");
	if (have_eff)
		sa_line_opt(&L, "effective", kind, eff, efflen);
	else
		sa_line_null(&L, "effective");
	if (level == IPPROTO_TCP && opt == TCP_DEFER_ACCEPT && ret == 0 && as_int(val, len, &req_i)) {
		sa_line_int(&L, "requested_s", req_i);
		if (have_eff)
			sa_line_int(&L, "effective_s", eff_i);
		else
			sa_line_null(&L, "effective_s");
		sa_line_int(&L, "rounds", sa_defer_rounds(req_i));
	}
	sa_line_int(&L, "ret", ret);
	if (ret != 0)
		sa_line_errno(&L, "errno", err);
	sa_line_emit(&L, SA_LEVEL_INFO, &f);
}
