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

/* Where attach is built: elsewhere inj_prepare() says it is not. */
#if defined(__x86_64__) || defined(__aarch64__)
#define INJ_ARCH_OK 1
#else
#define INJ_ARCH_OK 0
#endif

/* regs.c, the per-architecture part: a thread's registers (glibc's
 * user_regs_struct on x86_64 and aarch64) and its extended state (x87/SSE/
 * AVX; FP/SIMD or SVE), read and put back; fn(args) set up in the
 * registers with its stack at sp (16-aligned) and return address 0. */
struct inj_regs {
#if INJ_ARCH_OK
	struct user_regs_struct r;
#else
	int none;
#endif
};
struct inj_ext {
	unsigned char buf[16384] __attribute__((aligned(64)));
	size_t len;
	int kind;              /* the regset it came from (0: x86_64's legacy FP area) */
};
extern const size_t regs_red_zone;   /* bytes below sp the code there may use */
int regs_read(pid_t tid, struct inj_regs *r);
int regs_write(pid_t tid, const struct inj_regs *r);
int regs_ext_save(pid_t tid, struct inj_ext *x);
int regs_ext_restore(pid_t tid, struct inj_ext *x);
uintptr_t regs_sp(const struct inj_regs *r);
uintptr_t regs_pc(const struct inj_regs *r);
long regs_ret(const struct inj_regs *r);
/* r pointed at fn(args...) (up to 4), its stack at sp: where the return
 * address 0 is to be written on the stack (r's new sp), or 0 when the
 * architecture keeps it in a register. */
uintptr_t regs_call(struct inj_regs *r, uintptr_t fn, const long *args, int nargs, uintptr_t sp);

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
	struct inj_regs regs;  /* its registers and extended state when we came */
	struct inj_ext ext;
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
