/*
 * vfork_x86_64.S: vfork() for the shim (x86_64). The child shares our
 * memory and this thread's TLS until it execs or exits, so while it runs
 * every wrapper must pass straight through (CPython's subprocess child
 * calls close_range, sigaction and dup2 through them): sa_vfork_child()
 * marks the thread, sa_vfork_parent() unmarks it when the parent resumes.
 * The return address cannot stay on the shared stack across the call (the
 * child's frames overwrite it): it waits in a TLS slot, as in glibc's own
 * vfork.S. Not for shadow-stack (CET) processes, which glibc 2.36 does not
 * enable.
 */
#if defined(__x86_64__)
#include <sys/syscall.h>

	.text
	.globl	vfork
	.type	vfork, @function
vfork:
	.cfi_startproc
	popq	%rdi
	.cfi_adjust_cfa_offset -8
#if defined(SA_TLS_DESC)
	/* The attach build's TLS (base.h, SA_TLS): the descriptor's call
	 * returns the slot's offset in %rax and keeps every other register.
	 * Each side of the vfork makes its own call after the syscall. */
	leaq	sa_vfork_ret@tlsdesc(%rip), %rax
	call	*sa_vfork_ret@tlscall(%rax)
	movq	%rdi, %fs:(%rax)
	movl	$SYS_vfork, %eax
	syscall
	movq	%rax, %rdx
	leaq	sa_vfork_ret@tlsdesc(%rip), %rax
	call	*sa_vfork_ret@tlscall(%rax)
	pushq	%fs:(%rax)
	.cfi_adjust_cfa_offset 8
	movq	%rdx, %rax
#else
	movq	sa_vfork_ret@gottpoff(%rip), %rcx
	movq	%rdi, %fs:(%rcx)
	movl	$SYS_vfork, %eax
	syscall
	movq	sa_vfork_ret@gottpoff(%rip), %rcx
	pushq	%fs:(%rcx)
	.cfi_adjust_cfa_offset 8
#endif
	testq	%rax, %rax
	jz	1f
	movq	%rax, %rdi
	jmp	sa_vfork_parent		/* returns the pid, or -1 with errno set */
1:	jmp	sa_vfork_child		/* returns 0 */
	.cfi_endproc
	.size	vfork, .-vfork
#endif
	.section .note.GNU-stack,"",@progbits
