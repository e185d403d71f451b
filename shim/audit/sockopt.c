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
 *
 * The shape: the seen entry and the level are the gate's facts; whether the
 * call is read back and whether it gets a line are sa_sockopt_read_back_due
 * and sa_sockopt_route (sockopt.h); what a read-back means is
 * sa_sockopt_judge and its words sa_sockopt_say (shim/judge/
 * sockopt_judge.c and shim/kernel/readback.c, shared with `sockaudit explain`); this
 * file reads, counts and writes.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "audit/sockopt.h"
#include "audit/accept.h"
#include "syn_schedule.h"

/* Which kind of socket s is, for the seen table. */
static enum sa_optsock sock_kind(const struct sa_sock *s, uint64_t *id)
{
	*id = 0;
	if (!s)
		return SA_OPTSOCK_OTHER;
	if (sa_sock_flags(s) & SA_F_LISTENER)
		return SA_OPTSOCK_LISTENER;
	if (sa_sock_flags(s) & SA_F_ACCEPTED) {
		*id = s->acc.listener ? (uint64_t)(uintptr_t)s->acc.listener : (uint64_t)(unsigned)s->acc.listen_fd;
		return SA_OPTSOCK_ACCEPTED;
	}
	if (s->conn.peer_len > 0 && s->conn.peer_len <= sizeof s->conn.peer) {
		*id = sa_fnv64(SA_FNV64_BASIS, s->conn.peer, s->conn.peer_len);
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

/* The findings a read-back carries (sa_sockopt_judge said which), worded
 * by sa_sockopt_say, the words `sockaudit explain` prints too. The real
 * deferral window is read only for the finding that names it. */
static void option_findings(struct sa_findings *f, int fd, const struct sa_sock *s, const char *name,
			    const struct sa_opt_facts *in, const struct sa_opt_verdict *v)
{
	struct sa_opt_context c = { .name = name, .stream = s && s->type == SOCK_STREAM };

	if (v->diff == SA_OPTD_DEFER_ROUNDED)
		sa_defer_window(fd, v->eff_i, &c.defer_real_ms, &c.defer_rto_max_ms);
	sa_sockopt_say(in, v, &c, sa_findings_say, f);
}

/* TCP_NODELAY and TCP_CORK as the host set them (the quickack audit reads them). */
static void remember_flags(struct sa_sock *s, const struct sa_setsockopt_call *c)
{
	int on;

	if (s && c->ret == 0 && c->level == IPPROTO_TCP && (c->opt == TCP_NODELAY || c->opt == TCP_CORK) &&
	    sa_opt_as_int(c->val, c->len, &on)) {
		if (c->opt == TCP_NODELAY)
			s->opt.nodelay = on != 0;
		else
			s->opt.cork = on != 0;
	}
}

/* The call's seen entry (NULL: the table is full), counted, and what it
 * says for the gate: seen before in this process, on this kind of socket?
 * A quickack is one entry whatever its value (quickack.c counts each call). */
static struct sa_optseen *seen_entry(const struct sa_sock *s, const struct sa_setsockopt_call *c,
				     struct sa_opt_gate *g)
{
	uint64_t id;
	enum sa_optsock sk = sock_kind(s, &id);
	int quickack = c->level == IPPROTO_TCP && c->opt == TCP_QUICKACK;
	struct sa_optseen *e = sa_optseen_get(sa_optseen_key(c->level, c->opt, c->ret, c->err, quickack ? NULL : c->val,
							     c->len, sk, id),
					      c->level, c->opt, sk, id);

	*g = (struct sa_opt_gate){
		.ok = c->ret == 0, .trace = sa_level_enabled(SA_LEVEL_TRACE), .entry = e != NULL,
		.listener = sk == SA_OPTSOCK_LISTENER, .defer_accept = c->level == IPPROTO_TCP && c->opt == TCP_DEFER_ACCEPT,
		.first = 1, .nth = 1,
	};
	if (e) {
		g->nth = __atomic_add_fetch(&e->calls, 1, __ATOMIC_RELAXED);
		g->first = !__atomic_exchange_n(&e->logged, 1, __ATOMIC_ACQ_REL);
		if (c->ret != 0)
			__atomic_add_fetch(&e->failed, 1, __ATOMIC_RELAXED);
		g->full = __atomic_load_n(&e->full, __ATOMIC_RELAXED);
	}
	return e;
}

/* Reads the value back into eff (never for an opaque option). */
static void read_back(int fd, struct sa_opt_facts *in, struct sa_optseen *e, unsigned char *eff, socklen_t cap)
{
	socklen_t efflen = cap;

	memset(eff, 0, cap);
	if (in->kind == SA_OPT_INT || in->kind == SA_OPT_BOOL)
		efflen = sizeof(int);
	else if (in->kind == SA_OPT_OPAQUE)
		efflen = in->reqlen < cap ? in->reqlen : cap;
	if (in->kind == SA_OPT_OPAQUE || sa_real.getsockopt(fd, in->level, in->opt, eff, &efflen) != 0)
		return;
	in->eff = eff;
	in->efflen = efflen;
	if (e)
		__atomic_add_fetch(&e->read_back, 1, __ATOMIC_RELAXED);
}

/* The setsockopt line. Written straight into a buffer: no allocation at
 * any level. */
static void option_line(int fd, const struct sa_optdesc *d, const struct sa_opt_facts *in,
			const struct sa_opt_verdict *v, int ret, int err, const struct sa_findings *f)
{
	struct sa_line L;
	int req_i = 0;

	sa_line_begin(&L, "setsockopt", fd, f);
	name_or_number(&L, 0, sa_sol_name(in->level), in->level);
	name_or_number(&L, 1, d ? d->name : NULL, in->opt);
	if (ret == 0)
		sa_line_opt(&L, "requested", in->kind, in->req, in->reqlen);
	else
		sa_line_null(&L, "requested");
	if (in->eff)
		sa_line_opt(&L, "effective", in->kind, in->eff, in->efflen);
	else
		sa_line_null(&L, "effective");
	if (in->level == IPPROTO_TCP && in->opt == TCP_DEFER_ACCEPT && ret == 0 &&
	    sa_opt_as_int(in->req, in->reqlen, &req_i)) {
		sa_line_int(&L, "requested_s", req_i);
		if (in->eff)
			sa_line_int(&L, "effective_s", v->eff_i);
		else
			sa_line_null(&L, "effective_s");
		sa_line_int(&L, "rounds", sa_defer_rounds(req_i));
	}
	sa_line_int(&L, "ret", ret);
	if (ret != 0)
		sa_line_errno(&L, "errno", err);
	sa_line_emit(&L, SA_LEVEL_INFO, f);
}

/* A call that is read back: the read, what it means (sa_sockopt_judge),
 * and its line or count (sa_sockopt_route). Inline in sa_sockopt_audit:
 * one frame per call, which a trace-level repeat pays on every setsockopt
 * (bench/callgrind.sh). */
static inline __attribute__((always_inline)) void audit_read_back(struct sa_sock *s, struct sa_optseen *e,
								  struct sa_opt_gate *g,
								  const struct sa_setsockopt_call *c)
{
	const int fd = c->fd, level = c->level, opt = c->opt, ret = c->ret, err = c->err;
	const void *val = c->val;
	const socklen_t len = c->len;
	const struct sa_optdesc *d = sa_opt_lookup(level, opt);
	struct sa_opt_facts in = {
		.level = level, .opt = opt, .kind = d ? d->kind : (len == sizeof(int) ? SA_OPT_INT : SA_OPT_OPAQUE),
		.quickack = level == IPPROTO_TCP && opt == TCP_QUICKACK, .req = val, .reqlen = len,
		.read_sysctl = sa_read_sysctl,
	};
	unsigned char eff[256];
	struct sa_opt_verdict v;
	struct sa_findings f;
	uint64_t effhash;

	if (ret == 0)
		read_back(fd, &in, e, eff, sizeof eff);
	g->read_back = in.eff != NULL;
	g->info = sa_level_enabled(SA_LEVEL_INFO);
	if (sa_sockopt_route(g) == SA_OPT_QUIET)
		return;
	sa_findings_init(&f);
	sa_sockopt_judge(&in, &v);
	if (v.diff != SA_OPTD_SAME)
		option_findings(&f, fd, s, d ? d->name : "option", &in, &v);
	if (e && f.n > 0) {
		__atomic_add_fetch(&e->differs, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&e->full, 1, __ATOMIC_RELAXED);   /* read back every call from now on */
	}
	/* Deferral on a listener: remember it and check its interplay. */
	if (s && ret == 0 && g->defer_accept) {
		sa_sock_set_defer(s, in.eff ? v.eff_i : 0);
		if (sa_sock_flags(s) & SA_F_LISTENER)
			sa_listen_defer_checks(fd, s, &f);
	}
	effhash = in.eff ? sa_fnv64(SA_FNV64_BASIS, in.eff, in.efflen) | 1 : 0;
	if (e && g->first)
		__atomic_store_n(&e->eff_hash, effhash, __ATOMIC_RELAXED);
	g->differs = f.n > 0;
	g->same_as_logged = e && effhash == __atomic_load_n(&e->eff_hash, __ATOMIC_RELAXED);
	switch (sa_sockopt_route(g)) {
	case SA_OPT_COUNTED:
		/* A repeat of a logged line: its findings still count (the
		 * summary's totals are every occurrence at every level). */
		if (!f.n)
			sa_suppressed_add(1);
		sa_emit_skip("setsockopt", &f);
		return;
	case SA_OPT_SKIP:
		sa_emit_skip("setsockopt", &f);
		return;
	default:
		break;
	}
	if (e)
		__atomic_add_fetch(&e->logged_n, 1, __ATOMIC_RELAXED);
	option_line(fd, d, &in, &v, ret, err, &f);
}

/* One setsockopt the host made: its seen entry (seen_entry), then, unless
 * it is off the read-back sample, the read-back and what follows. */
void sa_sockopt_audit(struct sa_sock *s, const struct sa_setsockopt_call *c)
{
	struct sa_opt_gate g;
	struct sa_optseen *e;

	remember_flags(s, c);
	e = seen_entry(s, c, &g);
	if (!sa_sockopt_read_back_due(&g)) {
		sa_suppressed_add(1);
		sa_emit_skip("setsockopt", NULL);
		return;
	}
	audit_read_back(s, e, &g, c);
}
