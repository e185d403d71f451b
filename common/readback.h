/*
 * readback.h: what the kernel does with a socket option value or a listen
 * backlog, and why: the knowledge behind the shim's read-back findings and
 * `sockaudit explain`, one copy for both. Implemented in shim/kernel/
 * (optnames.c, sockopt_judge.c, readback.c), which call nothing of the shim
 * (no sa_real, no log line) so the CLI links the same objects.
 *
 * Facts, judgement, words: the caller gathers the facts (the value asked,
 * the value read back), a pure judge says what they mean as a verdict
 * code (sockopt_judge.c; a sysctl it needs is read through the facts'
 * callback, only when a read-back differs, so the shim keeps its costs and
 * the CLI reads them in the namespace asked about), and the verdict is
 * worded from the one table of finding words (common/finding_text.h)
 * through the caller's callback (readback.c): the shim appends it to its
 * line, the CLI prints it.
 */
#ifndef SA_READBACK_H
#define SA_READBACK_H

#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

/* Hidden in libsockaudit.so (no export), a plain symbol in the CLI. */
#define SA_RB_HIDDEN __attribute__((visibility("hidden")))

/* ---- optnames.c: the options the shim names, and their kinds ------------ */

enum sa_optkind {
	SA_OPT_INT, SA_OPT_BOOL, SA_OPT_LINGER, SA_OPT_TIMEVAL, SA_OPT_STRING, SA_OPT_OPAQUE
};
/* The name inline, not a pointer: a table of pointers is relocated by the
 * loader in every exec (107 relative relocations, most of a written page). */
#define SA_OPTNAME_MAX 25   /* "SO_ATTACH_REUSEPORT_EBPF" and its NUL */
struct sa_optdesc {
	int level, opt;
	char name[SA_OPTNAME_MAX];
	unsigned char kind;  /* enum sa_optkind */
};
/* The descriptor for (level, opt), or NULL when unknown. */
const struct sa_optdesc *sa_opt_lookup(int level, int opt) SA_RB_HIDDEN;
/* The descriptor named NAME ("SO_RCVBUF", case-insensitive), or NULL. */
const struct sa_optdesc *sa_opt_by_name(const char *name) SA_RB_HIDDEN;
/* The i-th descriptor of the table, NULL past its end. */
const struct sa_optdesc *sa_opt_nth(size_t i) SA_RB_HIDDEN;
/* The protocol level's name: "SOL_SOCKET", "IPPROTO_TCP", ... or NULL. */
const char *sa_sol_name(int level) SA_RB_HIDDEN;

/* ---- sockopt_judge.c: what a read-back or a backlog means (pure) -------- */

/* One finding: its code (common/names.h) and its sentence, a template of
 * common/finding_text.h with its arguments (checked against each other by
 * the compiler). The shim appends it to the line's findings
 * (sa_findings_say), the CLI formats it for its answer. */
typedef void (*sa_say_fn)(void *ctx, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Reads a /proc/sys integer into *out: 0 or -errno. */
typedef int (*sa_sysctl_fn)(const char *path, long *out);

/* The sysctls the judge reads for an option, beyond the two values (the
 * CLI reads them up front to show them beside its answer). */
#define SA_NEED_BUF_MAX   1u   /* net.core.rmem_max / wmem_max */
#define SA_NEED_SOMAXCONN 2u   /* net.core.somaxconn (TCP_FASTOPEN's queue) */
#define SA_NEED_DEFER     4u   /* the real deferral window (sa_defer_window) */
unsigned sa_opt_needs(int level, int opt) SA_RB_HIDDEN;
/* The /proc/sys path of the buffer cap for SO_RCVBUF(FORCE) / SO_SNDBUF(FORCE). */
const char *sa_buf_max_path(int opt) SA_RB_HIDDEN;

/* What a read-back means: one sentence template of a finding each. */
enum sa_opt_diff {
	SA_OPTD_SAME,              /* nothing to say */
	SA_OPTD_DIFFERS,           /* option_differs: "NAME req reads back as eff." */
	SA_OPTD_DIFFERS_UNEXPLAINED, /* option_differs, for a reason the shim does not know */
	SA_OPTD_LINGER,            /* option_differs: SO_LINGER {on, s} */
	SA_OPTD_TIMEOUT,           /* option_differs: a timeout, in us */
	SA_OPTD_NAME,              /* option_differs: a device or algorithm name */
	SA_OPTD_DEFER_ROUNDED,     /* defer_rounded */
	SA_OPTD_BUF_DOUBLED,       /* option_adjusted: a buffer size stored doubled */
	SA_OPTD_BUF_CAPPED,        /* option_adjusted: capped by [rw]mem_max, then doubled */
	SA_OPTD_BELOW_MIN,         /* option_adjusted: below the kernel's minimum (buffers) */
	SA_OPTD_FASTOPEN_CAPPED,   /* option_adjusted: TCP_FASTOPEN capped by somaxconn */
	SA_OPTD_MAXSEG,            /* option_adjusted: TCP_MAXSEG reads back the MSS in use */
	SA_OPTD_TOS_ECN,           /* option_adjusted: IP_TOS without the ECN bits */
	SA_OPTD_HOPS_DEFAULT,      /* option_adjusted: IP_TTL/IPV6_UNICAST_HOPS -1 */
	SA_OPTD_CLAMP_MIN,         /* option_adjusted: TCP_WINDOW_CLAMP below the minimum */
	SA_OPTD_TIMER_TICK,        /* option_adjusted: a timeout rounded up to the tick */
};
struct sa_opt_facts {
	int level, opt;
	enum sa_optkind kind;
	int quickack;                      /* TCP_QUICKACK: the shim's quickack.c says what it means */
	const void *req; socklen_t reqlen; /* what was asked; NULL: the call failed */
	const void *eff; socklen_t efflen; /* what was read back; NULL: not read */
	/* Reads a sysctl (0, or -errno), only when the comparison needs it:
	 * sa_read_sysctl in the shim, the CLI's own, or a test's table. */
	sa_sysctl_fn read_sysctl;
};
struct sa_opt_verdict {
	enum sa_opt_diff diff;
	int req_i, eff_i;                  /* int and bool options: the values compared (0: not decoded) */
	long long req_us, eff_us;          /* timeouts */
	int linger[4];                     /* SO_LINGER: asked {onoff, linger}, read back {onoff, linger} */
	long sysctl;                       /* the sysctl that explains it (buffers, TCP_FASTOPEN) */
	int rounds;                        /* TCP_DEFER_ACCEPT: the SYN-ACK rounds kept */
};
/* An option value as an int: all of it from 4 bytes, else its first byte. */
static inline int sa_opt_as_int(const void *buf, socklen_t len, int *out)
{
	if (!buf || len == 0)
		return 0;
	if (len >= (socklen_t)sizeof(int))
		memcpy(out, buf, sizeof *out);
	else
		*out = *(const unsigned char *)buf;
	return 1;
}
/* An int option whose read-back differs from the value asked. */
enum sa_opt_diff sa_sockopt_judge_int(const struct sa_opt_facts *in, struct sa_opt_verdict *v) SA_RB_HIDDEN;
/* SO_LINGER, timeouts and names. */
void sa_sockopt_judge_other(const struct sa_opt_facts *in, struct sa_opt_verdict *v) SA_RB_HIDDEN;
/* What a read-back means (v->diff, and the values it was judged on). Pure;
 * its common case, an int or bool that reads back as asked, inline: the
 * shim asks on every setsockopt it reads back. */
static inline void sa_sockopt_judge(const struct sa_opt_facts *in, struct sa_opt_verdict *v)
{
	v->diff = SA_OPTD_SAME;
	v->req_i = v->eff_i = 0;
	if (!in->req || !in->eff)
		return;
	if (in->kind == SA_OPT_INT) {
		if (sa_opt_as_int(in->req, in->reqlen, &v->req_i) && sa_opt_as_int(in->eff, in->efflen, &v->eff_i) &&
		    v->req_i != v->eff_i)
			v->diff = sa_sockopt_judge_int(in, v);
	} else if (in->kind == SA_OPT_BOOL) {
		if (!in->quickack && sa_opt_as_int(in->req, in->reqlen, &v->req_i) &&
		    sa_opt_as_int(in->eff, in->efflen, &v->eff_i) && (v->req_i != 0) != (v->eff_i != 0))
			v->diff = SA_OPTD_DIFFERS;
	} else {
		sa_sockopt_judge_other(in, v);
	}
}

/* What listen() got: the backlog asked, the one the kernel reports (-1:
 * unknown) and how it was read ("tcp_info", "unix_diag" or "computed"),
 * and the namespace's somaxconn (-1: unread). */
struct sa_backlog_facts {
	int backlog, effective;
	const char *source;
	long somaxconn;
};
enum sa_backlog_verdict {
	SA_BACKLOG_KEPT,              /* nothing to say (listen(-1) asks for the maximum) */
	SA_BACKLOG_CLAMPED_SOMAXCONN, /* backlog_clamped: lowered to somaxconn */
	SA_BACKLOG_CLAMPED_OTHER,     /* backlog_clamped: smaller, somaxconn not the cause */
};
enum sa_backlog_verdict sa_backlog_judge(const struct sa_backlog_facts *in) SA_RB_HIDDEN;

/* ---- readback.c: the kernel's arithmetic, and the words of a verdict ---- */

/* TCP_DEFER_ACCEPT: the kernel's own secs_to_retrans() and
 * retrans_to_secs() (1 s initial timeout, 120 s maximum). */
int sa_defer_rounds(int seconds) SA_RB_HIDDEN;
int sa_defer_secs(int rounds) SA_RB_HIDDEN;

/* The largest backlog a request is taken at its word for. Above it (up to
 * INT_MAX: systemd's and others' "as many as allowed") it means the most
 * allowed, as -1 does, and the kernel lowering it to somaxconn is what was
 * asked: sixteen times somaxconn's default (4096), no queue anyone sizes. */
#define SA_BACKLOG_MOST 65535

/* __sys_listen_socket(): (unsigned)backlog > somaxconn -> somaxconn. */
int sa_backlog_effective(int backlog, long somaxconn) SA_RB_HIDDEN;

/* What a read-back's words need beyond its verdict. */
struct sa_opt_context {
	const char *name;          /* "SO_RCVBUF" ("option" for one the table does not name) */
	int stream;                /* a SOCK_STREAM socket: a receive buffer set stops autotuning */
	long defer_real_ms;        /* defer_rounded: the real deferral window (sa_defer_window) */
	long defer_rto_max_ms;     /* and the TCP_RTO_MAX_MS that caps it */
};
/* The finding of a verdict other than SA_OPTD_SAME, said through say with
 * its SA_MSG_* template (common/finding_text.h). */
void sa_sockopt_say(const struct sa_opt_facts *in, const struct sa_opt_verdict *v,
		    const struct sa_opt_context *c, sa_say_fn say, void *ctx) SA_RB_HIDDEN;
/* backlog_clamped for a verdict other than SA_BACKLOG_KEPT. */
void sa_backlog_say(const struct sa_backlog_facts *in, enum sa_backlog_verdict v, sa_say_fn say,
		    void *ctx) SA_RB_HIDDEN;

/* This kernel's SYN and SYN-ACK settings (struct sa_syn_sched in
 * syn_schedule.h), read through rd; defaults where a file is absent. */
struct sa_syn_sched;
void sa_syn_sched_fill(struct sa_syn_sched *k, sa_sysctl_fn rd) SA_RB_HIDDEN;
/* A release at or above major.minor (uname). */
int sa_kernel_at_least(int major, int minor) SA_RB_HIDDEN;
/* The integer in the sysctl file PATH (/proc/sys/...) into *out: 0, or a
 * negative errno. Read with READ and closed with CLOSE: the shim passes
 * its real libc functions (no wrapper of its own on the way), the CLI
 * libc's. */
int sa_sysctl_read(const char *path, long *out, int (*open_fn)(const char *, int),
		   ssize_t (*read_fn)(int, void *, size_t), int (*close_fn)(int)) SA_RB_HIDDEN;

#endif
