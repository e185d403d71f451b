/*
 * readback.h: what the kernel does with a socket option value or a listen
 * backlog, in words: the option table (shim/kernel/optnames.c), the words
 * of a read-back or backlog verdict and the readers of this kernel's
 * settings (shim/kernel/readback.c). One copy for the shim's read-back
 * findings and `sockaudit explain`: these objects call nothing of the shim
 * (no sa_real, no log line) so the CLI links them with the judge floor.
 *
 * Facts, judgement, words: the caller gathers the facts (the value asked,
 * the value read back), the pure judge says what they mean as a verdict
 * code (shim/judge/sockopt_judge.c, declared in shim/judge/judge.h; a
 * sysctl it needs is read through the facts' callback, only when a
 * read-back differs, so the shim keeps its costs and the CLI reads them
 * in the namespace asked about), and the verdict is worded from the one
 * table of finding words (common/finding_text.h) through the caller's
 * callback (readback.c): the shim appends it to its line, the CLI prints it.
 */
#ifndef SA_READBACK_H
#define SA_READBACK_H

#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "judge/judge.h"

/* Hidden in libsockaudit.so (no export), a plain symbol in the CLI. */
#define SA_RB_HIDDEN __attribute__((visibility("hidden")))

/* ---- optnames.c: the options the shim names, and their kinds ------------ */

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

/* ---- readback.c: the words of a verdict, and this kernel's settings ---- */

/* One finding: its code (common/names.h) and its sentence, a template of
 * common/finding_text.h with its arguments (checked against each other by
 * the compiler). The shim appends it to the line's findings
 * (sa_findings_say), the CLI formats it for its answer. */
typedef void (*sa_say_fn)(void *ctx, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

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
