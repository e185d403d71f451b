/*
 * explain/print.c: `sockaudit explain` answers for people (text) and for
 * scripts (--json). Every number printed was read from this kernel or
 * computed by the library's own functions (common/syn_schedule.h,
 * shim/judge/sockopt_judge.c and shim/kernel/readback.c); the sentences beside them say which rule
 * applies.
 */
#include <errno.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <jansson.h>

#include "explain/explain.h"

/* The errno's name: what the shim's lines and the man pages use. */
static const char *errno_name(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case ENOPROTOOPT: return "ENOPROTOOPT";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case EBUSY: return "EBUSY";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EISCONN: return "EISCONN";
	case EFAULT: return "EFAULT";
	case EADDRINUSE: return "EADDRINUSE";
	default: return "errno";
	}
}

/* A paragraph: "  " then the words, wrapped at 78 columns under a
 * 4-space indent (2 when flat). */
static void para(FILE *out, int flat, const char *fmt, ...)
{
	char text[2048];
	const char *p = text;
	size_t col = 1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	fputc(' ', out);
	while (*p) {
		size_t w = strcspn(p, " ");

		if (col + 1 + w > 78 && col > 4) {
			fputs(flat ? "\n " : "\n   ", out);
			col = flat ? 1 : 3;
		}
		fprintf(out, " %.*s", (int)w, p);
		col += 1 + w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

/* "  code: sentence", wrapped. */
static void print_finding(FILE *out, const char *code, const char *text)
{
	para(out, 0, "%s: %s", code, text);
}

static int is_defer(const struct ex_answer *a)
{
	return a->what == EX_OPTION && a->desc->level == IPPROTO_TCP && a->desc->opt == TCP_DEFER_ACCEPT;
}

static void value_str(const struct ex_answer *a, int eff, char *b, size_t n)
{
	switch (a->desc->kind) {
	case SA_OPT_LINGER:
		snprintf(b, n, "{onoff %d, linger %d s}", eff ? a->eff_i : a->req_i, eff ? a->eff_i2 : a->req_i2);
		break;
	case SA_OPT_TIMEVAL:
		snprintf(b, n, "%lld us", eff ? a->eff_us : a->req_us);
		break;
	case SA_OPT_STRING:
		snprintf(b, n, "%s", eff ? a->eff_s : a->req_s);
		break;
	default:
		snprintf(b, n, "%d", eff ? a->eff_i : a->req_i);
		break;
	}
}

/* The SYN-ACK resend times ("1, 3, 7, 15, 31 s") for n resends. */
static const char *synack_str(char *b, size_t len, int n, long rto_max_ms)
{
	size_t off = 0;
	int k;
	char s[24];

	b[0] = '\0';
	for (k = 1; k <= n && off < len; k++)
		off += (size_t)snprintf(b + off, len - off, "%s%s", k > 1 ? ", " : "",
					sa_secs_str(s, sizeof s, sa_synack_retrans_at_ms(k, rto_max_ms)));
	if (off < len)
		snprintf(b + off, len - off, " s");
	return b;
}

/* The TCP_DEFER_ACCEPT values around the one asked: the range of seconds
 * that keeps each number of rounds, what getsockopt reports for it, and
 * how long a silent client waits. */
static void defer_table(const struct ex_answer *a, FILE *out)
{
	int r, lo = a->rounds > 2 ? a->rounds - 2 : 1, hi = a->rounds + 2 > 255 ? 255 : a->rounds + 2;
	char win[24];

	fprintf(out, "  nearby values:\n    %-13s %-7s %-18s %s\n", "you write", "rounds", "getsockopt says", "a silent client is accepted after");
	for (r = lo; r <= hi; r++) {
		int from = sa_defer_secs(r - 1) + 1, to = sa_defer_secs(r);
		char range[32];

		if (from == to)
			snprintf(range, sizeof range, "%d", from);
		else
			snprintf(range, sizeof range, "%d-%d", from, to);
		char said[24];

		snprintf(said, sizeof said, "%d s", to);
		sa_secs_str(win, sizeof win, sa_defer_real_ms(r, a->words.defer_rto_max_ms, a->sched.synack_capped));
		strcat(win, " s");
		if (r == a->rounds)
			fprintf(out, "    %-13s %-7d %-18s %-10s<- this value\n", range, r, said, win);
		else
			fprintf(out, "    %-13s %-7d %-18s %s\n", range, r, said, win);
	}
}

static void print_defer(const struct ex_answer *a, FILE *out)
{
	char win[24];

	if (a->rounds == 0) {
		para(out, 1, "%d turns deferral off: accept() returns each connection as soon as its handshake completes.", a->req_i);
		return;
	}
	sa_secs_str(win, sizeof win, a->words.defer_real_ms);
	para(out, 1, "Kept as %d SYN-ACK %s: getsockopt says %d s; a silent client waits %s s.",
		a->rounds, sa_plural((unsigned long long)a->rounds, "round", "rounds"), sa_defer_secs(a->rounds), win);
	defer_table(a, out);
	para(out, 1, "A silent client: its handshake completes, but tcp_check_req() drops its bare ACK while the listener defers (TcpExtTCPDeferAcceptDrop) and the connection waits in the SYN queue, where neither accept() nor ss -lt's Recv-Q sees it. At %s s the kernel resends its SYN-ACK (round %d), the client's ACK to it makes the connection, and accept() returns it with no data (empty_accept_defer_expired). A client that sends its request sooner is accepted at once, request waiting. A SYN cookie (SYN queue full) or a Fast Open cookie skips the deferral.",
	     win, a->rounds);
}

static void print_option(const struct ex_answer *a, FILE *out)
{
	char req[96], eff[96];
	int i;

	fprintf(out, "%s\n  %s %s on a fresh %s socket in this network namespace\n", a->query,
		sa_sol_name(a->desc->level), a->desc->name, a->desc->level == IPPROTO_IPV6 ? "TCP/IPv6" : "TCP");
	value_str(a, 0, req, sizeof req);
	if (a->refused) {
		fprintf(out, "  refused: setsockopt(%s, %s) fails with %s (%s); a program that sets it gets that error\n",
			a->desc->name, req, errno_name(a->err), strerror(a->err));
		return;
	}
	if (!a->have_eff) {
		fprintf(out, "  accepted, but getsockopt cannot read it back: %s (%s)\n", errno_name(a->err), strerror(a->err));
		return;
	}
	value_str(a, 1, eff, sizeof eff);
	fprintf(out, "  reads back as %s", eff);
	if (a->buf_max > 0)
		fprintf(out, "   (net.core.%s = %ld)", strstr(a->desc->name, "RCV") ? "rmem_max" : "wmem_max", a->buf_max);
	if (a->somaxconn >= 0)
		fprintf(out, "   (net.core.somaxconn = %ld)", a->somaxconn);
	fputc('\n', out);
	if (a->have_conn)
		fprintf(out, "  after a handshake over loopback it reads back as %d (the MSS in use)\n", a->conn_mss);
	if (a->nfind == 0)
		fprintf(out, "  kept as asked%s\n",
			a->desc->kind == SA_OPT_BOOL && a->req_i != a->eff_i ? " (a boolean reads back as 0 or 1)" : "");
	for (i = 0; i < a->nfind; i++)
		print_finding(out, a->find[i].code, a->find[i].text);
	if (is_defer(a))
		print_defer(a, out);
}

static void print_backlog(const struct ex_answer *a, FILE *out)
{
	char syn[160];
	int i;

	fprintf(out, "%s\n", a->query);
	if (a->refused) {
		fprintf(out, "  refused: listen(%d) fails with %s (%s)\n", a->req_i, errno_name(a->err), strerror(a->err));
		return;
	}
	para(out, 1, "listen(%d) gets a backlog of %d (%s on a listening socket in this network namespace).",
	     a->req_i, a->effective, strcmp(a->source, "tcp_info") ? "computed from somaxconn" : "read back with TCP_INFO");
	para(out, 1, "net.core.somaxconn = %ld here: listen() lowers a larger backlog, and -1, to it (each network namespace has its own; a new one starts at 4096).",
	     a->somaxconn);
	para(out, 1, "Room: %d connections wait for accept() (backlog + 1: sk_acceptq_is_full() tests >), and as many half-open ones in the SYN queue%s%s.",
	     a->effective + 1, a->syncookies < 0 ? "" : a->syncookies == 0 ? "; beyond that, new SYNs are dropped (net.ipv4.tcp_syncookies = 0)" :
	     a->syncookies == 1 ? "; beyond that, the kernel answers with SYN cookies (net.ipv4.tcp_syncookies = 1)" :
	     "; every SYN gets a cookie anyway (net.ipv4.tcp_syncookies = 2)", "");
	sa_syn_schedule_str(syn, sizeof syn, 3, a->sched.linear, a->sched.rto_max_ms);
	para(out, 1, "When the accept queue is full, new SYNs are dropped (TcpExtListenOverflows), so a client resends at %s ...; a final ACK is %s (net.ipv4.tcp_abort_on_overflow = %ld).",
	     syn, a->abort_on_overflow == 1 ? "answered with a reset" : "ignored and the SYN-ACK resent later",
	     a->abort_on_overflow);
	for (i = 0; i < a->nfind; i++)
		print_finding(out, a->find[i].code, a->find[i].text);
}

static void print_syn(const struct ex_answer *a, FILE *out)
{
	const struct sa_syn_sched *k = &a->sched;
	int n = (int)(k->syn_retries + (k->linear > 0 ? k->linear : 0));
	char sched[256], s[24];

	sa_syn_schedule_str(sched, sizeof sched, n, k->linear, k->rto_max_ms);
	fprintf(out, "syn\n");
	para(out, 1, "net.ipv4.tcp_syn_retries = %ld, tcp_syn_linear_timeouts = %ld, tcp_rto_max_ms = %ld.",
	     k->syn_retries, k->linear, k->rto_max_ms);
	para(out, 1, "A connect() nobody answers resends its SYN at %s (%d %s) and fails with ETIMEDOUT at %s s.",
	     sched, n, sa_plural((unsigned long long)n, "resend", "resends"),
	     sa_secs_str(s, sizeof s, sa_syn_give_up_ms(k->linear, k->syn_retries, k->rto_max_ms)));
	if (k->linear > 0)
		para(out, 1, "The first %ld resends come 1 s apart (tcp_syn_linear_timeouts), then the wait doubles up to %s s.",
		     k->linear, sa_secs_str(s, sizeof s, k->rto_max_ms));
	para(out, 1, "So a connect that took about 1, 2 or 3 s lost its first 1, 2 or 3 SYNs (the connect line's syn_retrans); per socket, TCP_SYNCNT replaces tcp_syn_retries.");
}

static void print_synack(const struct ex_answer *a, FILE *out)
{
	const struct sa_syn_sched *k = &a->sched;
	char sched[256], s[24];

	synack_str(sched, sizeof sched, (int)k->synack_retries, SA_RTO_MAX_DEFAULT_MS);
	fprintf(out, "synack\n");
	para(out, 1, "net.ipv4.tcp_synack_retries = %ld.", k->synack_retries);
	para(out, 1, "A handshake whose final ACK never comes: the server resends its SYN-ACK at %s and drops the half-open request at %s s.",
	     sched, sa_secs_str(s, sizeof s, sa_synack_retrans_at_ms((int)k->synack_retries + 1, SA_RTO_MAX_DEFAULT_MS)));
	para(out, 1, "TCP_DEFER_ACCEPT counts its rounds on the same timer (1, 3, 7, 15, 31 s ...)%s.",
	     k->synack_capped ? "; on this kernel a listener's TCP_RTO_MAX_MS caps each wait" : "");
}

/* A finding code: its meaning, the mechanism behind it, the fix, and where
 * docs/findings.md says the same. */
static void print_code(const struct ex_answer *a, FILE *out)
{
	const struct sa_finding_text *t = a->code;

	fprintf(out, "%s\n", t->code);
	para(out, 1, "Meaning. %s", t->text);
	para(out, 1, "Mechanism. %s", t->mechanism);
	para(out, 1, "Fix. %s", t->fix);
	para(out, 1, "More, with measurements: docs/findings.md#%s", t->anchor);
}

void ex_print_text(const struct ex_answer *a, FILE *out)
{
	switch (a->what) {
	case EX_CODE: print_code(a, out); break;
	case EX_OPTION: print_option(a, out); break;
	case EX_BACKLOG: print_backlog(a, out); break;
	case EX_SYN: print_syn(a, out); break;
	case EX_SYNACK: print_synack(a, out); break;
	}
	fputc('\n', out);
}

static json_t *value_json(const struct ex_answer *a, int eff)
{
	switch (a->desc->kind) {
	case SA_OPT_LINGER:
		return json_pack("{s:i,s:i}", "onoff", eff ? a->eff_i : a->req_i, "linger", eff ? a->eff_i2 : a->req_i2);
	case SA_OPT_TIMEVAL: {
		long long us = eff ? a->eff_us : a->req_us;
		return json_pack("{s:I,s:I}", "sec", (json_int_t)(us / 1000000), "usec", (json_int_t)(us % 1000000));
	}
	case SA_OPT_STRING:
		return json_string(eff ? a->eff_s : a->req_s);
	default:
		return json_integer(eff ? a->eff_i : a->req_i);
	}
}

static json_t *times_json(int n, int synack, const struct sa_syn_sched *k)
{
	json_t *arr = json_array();
	int i;

	for (i = 1; i <= n; i++)
		json_array_append_new(arr, json_real((synack ? sa_synack_retrans_at_ms(i, SA_RTO_MAX_DEFAULT_MS)
						      : sa_syn_retrans_at_ms(i, k->linear, k->rto_max_ms)) / 1000.0));
	return arr;
}

static json_t *answer_json(const struct ex_answer *a)
{
	json_t *o = json_pack("{s:s}", "query", a->query), *f = json_array();
	const struct sa_syn_sched *k = &a->sched;
	int i, n;

	for (i = 0; i < a->nfind; i++)
		json_array_append_new(f, json_pack("{s:s,s:s}", "code", a->find[i].code, "msg", a->find[i].text));
	switch (a->what) {
	case EX_OPTION:
		json_object_set_new(o, "sol", json_string(sa_sol_name(a->desc->level)));
		json_object_set_new(o, "opt", json_string(a->desc->name));
		json_object_set_new(o, "requested", value_json(a, 0));
		json_object_set_new(o, "effective", a->have_eff ? value_json(a, 1) : json_null());
		if (a->refused)
			json_object_set_new(o, "errno", json_string(errno_name(a->err)));
		if (a->have_conn)
			json_object_set_new(o, "effective_connected", json_integer(a->conn_mss));
		if (a->buf_max > 0)
			json_object_set_new(o, strstr(a->desc->name, "RCV") ? "rmem_max" : "wmem_max", json_integer(a->buf_max));
		if (a->somaxconn >= 0)
			json_object_set_new(o, "somaxconn", json_integer(a->somaxconn));
		if (is_defer(a) && a->have_eff) {
			json_t *near = json_array();
			int r, lo = a->rounds > 2 ? a->rounds - 2 : 1;
			json_object_set_new(o, "rounds", json_integer(a->rounds));
			json_object_set_new(o, "window_ms", json_integer(a->words.defer_real_ms));
			for (r = lo; a->rounds > 0 && r <= a->rounds + 2 && r <= 255; r++)
				json_array_append_new(near, json_pack("{s:i,s:i,s:i,s:I}", "from_s", sa_defer_secs(r - 1) + 1,
					"to_s", sa_defer_secs(r), "rounds", r, "window_ms",
					(json_int_t)sa_defer_real_ms(r, a->words.defer_rto_max_ms, a->sched.synack_capped)));
			json_object_set_new(o, "nearby", near);
		}
		break;
	case EX_BACKLOG:
		json_object_set_new(o, "backlog_requested", json_integer(a->req_i));
		if (a->refused) {
			json_object_set_new(o, "errno", json_string(errno_name(a->err)));
			break;
		}
		json_object_set_new(o, "backlog_effective", json_integer(a->effective));
		json_object_set_new(o, "backlog_source", json_string(a->source));
		json_object_set_new(o, "somaxconn", json_integer(a->somaxconn));
		json_object_set_new(o, "queue_capacity", json_integer(a->effective + 1));
		json_object_set_new(o, "tcp_syncookies", json_integer(a->syncookies));
		json_object_set_new(o, "tcp_abort_on_overflow", json_integer(a->abort_on_overflow));
		break;
	case EX_SYN:
		n = (int)(k->syn_retries + (k->linear > 0 ? k->linear : 0));
		json_object_set_new(o, "tcp_syn_retries", json_integer(k->syn_retries));
		json_object_set_new(o, "tcp_syn_linear_timeouts", json_integer(k->linear));
		json_object_set_new(o, "tcp_rto_max_ms", json_integer(k->rto_max_ms));
		json_object_set_new(o, "resend_s", times_json(n, 0, k));
		json_object_set_new(o, "give_up_s", json_real(sa_syn_give_up_ms(k->linear, k->syn_retries, k->rto_max_ms) / 1000.0));
		break;
	case EX_CODE:
		json_object_set_new(o, "code", json_string(a->code->code));
		json_object_set_new(o, "meaning", json_string(a->code->text));
		json_object_set_new(o, "mechanism", json_string(a->code->mechanism));
		json_object_set_new(o, "fix", json_string(a->code->fix));
		json_object_set_new(o, "doc", json_sprintf("docs/findings.md#%s", a->code->anchor));
		break;
	case EX_SYNACK:
		json_object_set_new(o, "tcp_synack_retries", json_integer(k->synack_retries));
		json_object_set_new(o, "resend_s", times_json((int)k->synack_retries, 1, k));
		json_object_set_new(o, "give_up_s",
			json_real(sa_synack_retrans_at_ms((int)k->synack_retries + 1, SA_RTO_MAX_DEFAULT_MS) / 1000.0));
		break;
	}
	json_object_set_new(o, "findings", f);
	return o;
}

void ex_print_json(const struct ex_answer *a, int n, FILE *out)
{
	json_t *arr = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(arr, answer_json(&a[i]));
	json_dumpf(arr, out, JSON_INDENT(1));
	fputc('\n', out);
	json_decref(arr);
}
