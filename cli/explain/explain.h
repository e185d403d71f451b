/*
 * explain/explain.h: what verb.c (queries, options), answer.c (the
 * kernel's answers) and print.c (their printing) share. The judges and their words come
 * from common/readback.h (shim/judge/sockopt_judge.c and shim/kernel/readback.c), the
 * SYN schedules from common/syn_schedule.h, a finding code's words from
 * common/finding_text.h: the library's own code and words.
 */
#ifndef SA_CLI_EXPLAIN_H
#define SA_CLI_EXPLAIN_H

#include <stdio.h>

#include "readback.h"
#include "syn_schedule.h"
#include "finding_text.h"

enum ex_what { EX_OPTION, EX_BACKLOG, EX_SYN, EX_SYNACK, EX_CODE };

#define EX_FINDINGS_MAX 4
struct ex_answer {
	const char *query;
	enum ex_what what;
	const struct sa_optdesc *desc;      /* EX_OPTION */
	const struct sa_finding_text *code; /* EX_CODE: its words, nothing read from the kernel */
	/* the value asked: req_i (int, bool, linger on), req_i2 (linger s),
	 * req_us (timeval), req_s (string) */
	int req_i, req_i2;
	long long req_us;
	char req_s[64];
	/* what the kernel did */
	int refused, err;                   /* setsockopt or listen failed: errno */
	int have_eff;
	int eff_i, eff_i2;
	long long eff_us;
	char eff_s[64];
	int have_conn;                      /* TCP_MAXSEG after a loopback handshake */
	int conn_mss;
	struct sa_opt_context words;        /* what the judge's words were given */
	long buf_max;                       /* [rw]mem_max for a buffer size (0: not read) */
	/* backlog */
	int effective;
	const char *source;
	long somaxconn;                     /* also TCP_FASTOPEN's cap (-1: not read) */
	long syncookies, abort_on_overflow;
	/* TCP_DEFER_ACCEPT and the schedules */
	struct sa_syn_sched sched;
	int rounds;
	struct {
		const char *code;
		char text[1024];
	} find[EX_FINDINGS_MAX];
	int nfind;
};

/* verb.c: `sockaudit explain [--json] [--netns PID] QUERY...`; returns the exit status. */
int cli_explain(int argc, char **argv);
/* answer.c: a /proc/sys integer of this process's namespace: 0 or -errno. */
int ex_sysctl(const char *path, long *out);
/* answer.c; print.c */
void ex_answer(struct ex_answer *a, sa_say_fn say);
void ex_print_text(const struct ex_answer *a, FILE *out);
void ex_print_json(const struct ex_answer *a, int n, FILE *out);

#endif
