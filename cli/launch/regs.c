/*
 * regs.c: the per-architecture part of a call made under ptrace (inject.c
 * is the rest): how a thread's registers and extended state are read and
 * put back, and how a call to fn(args) with return address 0 is set up.
 *
 *   x86_64   PTRACE_GETREGS; the x87/SSE/AVX state by NT_X86_XSTATE (the
 *            legacy FP area where that regset is missing); arguments in
 *            rdi, rsi, rdx, rcx; the return address 0 is a word pushed on
 *            the stack; 128 bytes below sp are the red zone; orig_rax -1:
 *            not in a system call, so nothing restarts during the call.
 *   aarch64  NT_PRSTATUS; the FP/SIMD state by NT_PRFPREG, or the whole SVE
 *            state by NT_ARM_SVE where the thread has one (the upper bits of
 *            its Z registers would be lost otherwise); arguments in x0-x3;
 *            the return address 0 is the link register x30; no red zone.
 *            No system call number to clear: the kernel has already wound
 *            back a restartable call (pc to its svc, x0 its first argument)
 *            before the stop, so putting the registers back restarts it.
 *
 * On any other architecture every function fails with ENOSYS and attach
 * says it is not built for it.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "launch/inject.h"

#if defined(__x86_64__)
#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

const size_t regs_red_zone = 128;

int regs_read(pid_t tid, struct inj_regs *r)
{
	return ptrace(PTRACE_GETREGS, tid, 0, &r->r) == 0 ? 0 : -errno;
}

int regs_write(pid_t tid, const struct inj_regs *r)
{
	return ptrace(PTRACE_SETREGS, tid, 0, &r->r) == 0 ? 0 : -errno;
}

int regs_ext_save(pid_t tid, struct inj_ext *x)
{
	struct iovec v = { x->buf, sizeof x->buf };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &v) == 0) {
		x->len = v.iov_len;
		x->kind = NT_X86_XSTATE;
		return 0;
	}
	if (ptrace(PTRACE_GETFPREGS, tid, 0, x->buf) == 0) {
		x->len = 0;   /* the legacy area only */
		x->kind = 0;
		return 0;
	}
	return -errno;
}

int regs_ext_restore(pid_t tid, struct inj_ext *x)
{
	struct iovec v = { x->buf, x->len };

	if (x->kind)
		return ptrace(PTRACE_SETREGSET, tid, (void *)(long)x->kind, &v) == 0 ? 0 : -errno;
	return ptrace(PTRACE_SETFPREGS, tid, 0, x->buf) == 0 ? 0 : -errno;
}

uintptr_t regs_sp(const struct inj_regs *r) { return r->r.rsp; }
uintptr_t regs_pc(const struct inj_regs *r) { return r->r.rip; }
long regs_ret(const struct inj_regs *r) { return (long)r->r.rax; }

uintptr_t regs_call(struct inj_regs *r, uintptr_t fn, const long *args, int nargs, uintptr_t sp)
{
	sp -= 8;   /* the return address: 0, a fault we catch */
	r->r.rsp = sp;
	r->r.rip = fn;
	r->r.rax = 0;
	r->r.orig_rax = (unsigned long)-1;   /* not in a system call: nothing to restart */
	r->r.rdi = nargs > 0 ? (unsigned long)args[0] : 0;
	r->r.rsi = nargs > 1 ? (unsigned long)args[1] : 0;
	r->r.rdx = nargs > 2 ? (unsigned long)args[2] : 0;
	r->r.rcx = nargs > 3 ? (unsigned long)args[3] : 0;
	return sp;
}

#elif defined(__aarch64__)
#ifndef NT_ARM_SVE
#define NT_ARM_SVE 0x405
#endif

const size_t regs_red_zone = 0;

int regs_read(pid_t tid, struct inj_regs *r)
{
	struct iovec v = { &r->r, sizeof r->r };

	return ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &v) == 0 ? 0 : -errno;
}

int regs_write(pid_t tid, const struct inj_regs *r)
{
	struct iovec v = { (void *)&r->r, sizeof r->r };

	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &v) == 0 ? 0 : -errno;
}

/* The SVE regset holds the FP/SIMD registers too (in its FPSIMD form when
 * the thread has no live SVE state): one save covers both. Its header's
 * size field (the first 4 bytes) says how much there is. */
int regs_ext_save(pid_t tid, struct inj_ext *x)
{
	struct iovec v = { x->buf, sizeof x->buf };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_SVE, &v) == 0 && v.iov_len >= 16) {
		uint32_t size;

		memcpy(&size, x->buf, sizeof size);
		if (size >= 16 && size <= v.iov_len) {
			x->len = size;
			x->kind = NT_ARM_SVE;
			return 0;
		}
	}
	v.iov_len = sizeof x->buf;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &v) != 0)
		return -errno;
	x->len = v.iov_len;
	x->kind = NT_PRFPREG;
	return 0;
}

int regs_ext_restore(pid_t tid, struct inj_ext *x)
{
	struct iovec v = { x->buf, x->len };

	return ptrace(PTRACE_SETREGSET, tid, (void *)(long)x->kind, &v) == 0 ? 0 : -errno;
}

uintptr_t regs_sp(const struct inj_regs *r) { return r->r.sp; }
uintptr_t regs_pc(const struct inj_regs *r) { return r->r.pc; }
long regs_ret(const struct inj_regs *r) { return (long)r->r.regs[0]; }

uintptr_t regs_call(struct inj_regs *r, uintptr_t fn, const long *args, int nargs, uintptr_t sp)
{
	for (int i = 0; i < 8; i++)
		r->r.regs[i] = i < nargs ? (unsigned long long)args[i] : 0;
	r->r.regs[30] = 0;   /* the link register: the return is a fault we catch */
	r->r.sp = sp;
	r->r.pc = fn;
	return 0;            /* nothing to write on the stack */
}

#else
const size_t regs_red_zone = 0;

int regs_read(pid_t tid, struct inj_regs *r) { (void)tid, (void)r; return -ENOSYS; }
int regs_write(pid_t tid, const struct inj_regs *r) { (void)tid, (void)r; return -ENOSYS; }
int regs_ext_save(pid_t tid, struct inj_ext *x) { (void)tid, (void)x; return -ENOSYS; }
int regs_ext_restore(pid_t tid, struct inj_ext *x) { (void)tid, (void)x; return -ENOSYS; }
uintptr_t regs_sp(const struct inj_regs *r) { (void)r; return 0; }
uintptr_t regs_pc(const struct inj_regs *r) { (void)r; return 0; }
long regs_ret(const struct inj_regs *r) { (void)r; return 0; }
uintptr_t regs_call(struct inj_regs *r, uintptr_t fn, const long *args, int nargs, uintptr_t sp)
{
	(void)r, (void)fn, (void)args, (void)nargs;
	return sp;
}
#endif
