/*
 * launch/inject.h: calls made on a thread of a running process under
 * ptrace (inject.c), and the addresses of its functions (remote.c): what
 * `sockaudit attach` and `detach` (attach.c) are made of.
 */
#ifndef SA_CLI_INJECT_H
#define SA_CLI_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#define INJ_MAX_THREADS 4096

struct inj_thread {
	pid_t tid;
	int seized, gone;
	int group_stop;        /* in a group stop (SIGSTOP'd) when we came */
	uint64_t pending;      /* signals held for it, a bit each */
};

struct inj {
	pid_t pid;
	int n;
	struct inj_thread t[INJ_MAX_THREADS];
	int saved;
	int caller;            /* the thread calls run on, -1 until chosen */
#if defined(__x86_64__)
	struct user_regs_struct regs;
#endif
	unsigned char xstate[16384] __attribute__((aligned(64)));
	size_t xstate_len;
	double stopped_at, call_ms;
};

/* Seizes and stops every thread of pid; 0, or -errno with why in err. */
int inj_stop_all(struct inj *j, pid_t pid, char *err, size_t cap);
/* Reads the registers of the thread calls will run on; where data of len
 * bytes will be put for a call (below its stack). */
int inj_prepare(struct inj *j, char *err, size_t cap);
uintptr_t inj_data_at(const struct inj *j, size_t len);
/* Calls fn(args...) on the first stopped thread, data (len bytes) copied
 * below its stack first (its address in *data_at); the return value in
 * *ret. 0, or -errno with why in err. */
int inj_call(struct inj *j, uintptr_t fn, const long *args, int nargs, const void *data, size_t len,
	     uintptr_t *data_at, long *ret, char *err, size_t cap);
int inj_read(struct inj *j, uintptr_t at, void *p, size_t n);
/* Every thread let go; the milliseconds since the first was stopped. */
double inj_release(struct inj *j);

/* remote.c: the process's loaded object whose file name begins with one
 * of prefix (a NULL-terminated list; "=NAME": exactly NAME): its path as the process sees it,
 * the path to open from here (through /proc/PID/root) and its load base.
 * 0, or -1 when none is loaded. */
int remote_object(pid_t pid, const char *const *prefix, char *path, size_t cap, uintptr_t *base);
/* The address of name (default version) in that object, or 0. */
uintptr_t remote_sym(pid_t pid, const char *path, uintptr_t base, const char *name);

#endif
