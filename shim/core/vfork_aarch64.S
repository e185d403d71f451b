/*
 * vfork_aarch64.S: vfork() for the shim (aarch64). As on x86_64
 * (vfork_x86_64.S), the child shares our memory and this thread's TLS
 * until it execs or exits, so sa_vfork_child() marks the thread for it
 * and sa_vfork_parent() unmarks it when the parent resumes.
 *
 * What differs here: the return address is in x30, a register, which the
 * kernel keeps for each side, not on the stack the child overwrites; so
 * no TLS slot holds it (and the attach build's TLS descriptors are not
 * needed either: nothing here touches TLS). Both sides tail-call their C
 * half, which returns to vfork's caller through the untouched x30.
 * aarch64 has no vfork system call: glibc's own vfork is clone with
 * CLONE_VM | CLONE_VFORK | SIGCHLD on the caller's stack, and so is this.
 * bti c (hint 34, a no-op before BTI) is where a PLT's br lands; the file
 * carries no BTI property note, so a branch-protected build links a
 * library the kernel does not hold to BTI (safe, not enforced).
 */
#if defined(__aarch64__)
#define __ASSEMBLY__ 1		/* the uapi headers' guard: their #defines only */
#include <sys/syscall.h>
#include <linux/sched.h>
#include <asm/signal.h>

	.text
	.globl	vfork
	.type	vfork, %function
	.p2align 2
vfork:
	.cfi_startproc
	hint	34			/* bti c */
	mov	x0, #(CLONE_VM | CLONE_VFORK | SIGCHLD)
	mov	x1, sp
	mov	x8, #SYS_clone
	svc	#0
	cbz	x0, 1f
	b	sa_vfork_parent		/* x0: the pid or -errno; returns the pid, or -1 with errno set */
1:	b	sa_vfork_child		/* returns 0 */
	.cfi_endproc
	.size	vfork, .-vfork

#endif
	.section .note.GNU-stack,"",%progbits
