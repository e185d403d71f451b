/*
 * readback.h: what the kernel does with a socket option value or a listen
 * backlog, and why: the knowledge behind the shim's read-back findings and
 * `sockaudit explain`, one copy for both. Implemented in
 * shim/kernel/readback.c, which calls nothing of the shim (no sa_real, no
 * log line) so the CLI links the same object.
 *
 * The judges are pure: the caller gathers the facts (the value asked, the
 * value read back, the sysctls the rule names) and each finding comes back
 * through a callback as (code, sentence). Reading a fact is the caller's
 * business, so the shim keeps its own costs (a sysctl is read only when a
 * read-back differs) and the CLI reads them in the namespace asked about.
 */
#ifndef SA_READBACK_H
#define SA_READBACK_H

#include <stddef.h>

/* Hidden in libsockaudit.so (no export), a plain symbol in the CLI. */
#define SA_RB_HIDDEN __attribute__((visibility("hidden")))

/* ---- optnames.c: the options the shim names, and their kinds ------------ */

enum sa_optkind {
	SA_OPT_INT, SA_OPT_BOOL, SA_OPT_LINGER, SA_OPT_TIMEVAL, SA_OPT_STRING, SA_OPT_OPAQUE
};
struct sa_optdesc {
	int level, opt;
	const char *name;
	enum sa_optkind kind;
};
/* The descriptor for (level, opt), or NULL when unknown. */
const struct sa_optdesc *sa_opt_lookup(int level, int opt) SA_RB_HIDDEN;
/* The descriptor named NAME ("SO_RCVBUF", case-insensitive), or NULL. */
const struct sa_optdesc *sa_opt_by_name(const char *name) SA_RB_HIDDEN;
/* The i-th descriptor of the table, NULL past its end. */
const struct sa_optdesc *sa_opt_nth(size_t i) SA_RB_HIDDEN;
/* The protocol level's name: "SOL_SOCKET", "IPPROTO_TCP", ... or NULL. */
const char *sa_sol_name(int level) SA_RB_HIDDEN;

/* ---- readback.c: the rules ----------------------------------------------- */

/* One finding: its code (common/names.h) and its sentence. */
typedef void (*sa_say_fn)(void *ctx, const char *code, const char *text);
/* Reads a /proc/sys integer into *out: 0 or -errno. */
typedef int (*sa_sysctl_fn)(const char *path, long *out);

/* TCP_DEFER_ACCEPT: the kernel's own secs_to_retrans() and
 * retrans_to_secs() (1 s initial timeout, 120 s maximum). */
int sa_defer_rounds(int seconds) SA_RB_HIDDEN;
int sa_defer_secs(int rounds) SA_RB_HIDDEN;

/* __sys_listen_socket(): (unsigned)backlog > somaxconn -> somaxconn. */
int sa_backlog_effective(int backlog, long somaxconn) SA_RB_HIDDEN;

/* The sysctls a judge reads for an option, beyond the two values. */
#define SA_NEED_BUF_MAX   1u   /* net.core.rmem_max / wmem_max */
#define SA_NEED_SOMAXCONN 2u   /* net.core.somaxconn (TCP_FASTOPEN's queue) */
#define SA_NEED_DEFER     4u   /* the real deferral window (sa_defer_window) */
unsigned sa_opt_needs(int level, int opt) SA_RB_HIDDEN;
/* The /proc/sys path of the buffer cap for SO_RCVBUF(FORCE) / SO_SNDBUF(FORCE). */
const char *sa_buf_max_path(int opt) SA_RB_HIDDEN;

/* An int-valued option whose read-back (eff) differs from the value asked. */
struct sa_optfacts {
	int level, opt;
	const char *name;         /* "SO_RCVBUF" */
	int req, eff;
	int stream;               /* on a SOCK_STREAM socket */
	long buf_max;             /* SA_NEED_BUF_MAX: the cap, 0 when unread */
	long somaxconn;           /* SA_NEED_SOMAXCONN: -1 when unread */
	long defer_real_ms;       /* SA_NEED_DEFER: the real window, ms */
	long defer_rto_max_ms;    /* and the TCP_RTO_MAX_MS that caps it */
};
void sa_opt_judge_int(const struct sa_optfacts *k, sa_say_fn say, void *ctx) SA_RB_HIDDEN;
/* Booleans: a difference only when truth differs (7 reads back 1). */
void sa_opt_judge_bool(const char *name, int req, int eff, sa_say_fn say, void *ctx) SA_RB_HIDDEN;
void sa_opt_judge_linger(int req_on, int req_s, int eff_on, int eff_s, sa_say_fn say, void *ctx) SA_RB_HIDDEN;
/* SO_RCVTIMEO / SO_SNDTIMEO in microseconds. */
void sa_opt_judge_timeval(const char *name, long long req_us, long long eff_us, sa_say_fn say, void *ctx) SA_RB_HIDDEN;
void sa_opt_judge_string(const char *name, const char *req, size_t reqlen, const char *eff,
			 size_t efflen, sa_say_fn say, void *ctx) SA_RB_HIDDEN;

/* listen(backlog) got effective (read back by source: "tcp_info",
 * "unix_diag" or "computed"); says backlog_clamped when it is smaller. */
void sa_backlog_judge(int backlog, int effective, const char *source, long somaxconn,
		      sa_say_fn say, void *ctx) SA_RB_HIDDEN;

/* This kernel's SYN and SYN-ACK settings (struct sa_syn_sched in
 * syn_schedule.h), read through rd; defaults where a file is absent. */
struct sa_syn_sched;
void sa_syn_sched_fill(struct sa_syn_sched *k, sa_sysctl_fn rd) SA_RB_HIDDEN;
/* A release at or above major.minor (uname). */
int sa_kernel_at_least(int major, int minor) SA_RB_HIDDEN;

#endif
