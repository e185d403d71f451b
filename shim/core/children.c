/*
 * children.c: children that share our memory. A vfork child runs on this
 * thread (and its TLS) until it execs or exits: core/vfork_<arch>.S marks
 * the thread through sa_vfork_child() and the parent unmarks it in
 * sa_vfork_parent(). A clone(CLONE_VM) child runs on a stack of its own
 * that the parent registers here, so wrappers can tell its calls apart
 * (IN_VM_CHILD in core.h) and pass them straight through.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core.h"

#if defined(__x86_64__)
/* vfork_x86_64.S's return address across the call (aarch64 keeps it in x30). */
__thread void *sa_vfork_ret SA_TLS SA_HIDDEN;
#endif

int sa_vfork_child(void)
{
	sa_in_vfork++;
	sa_in_shim++;
	return 0;
}

pid_t sa_vfork_parent(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	/* The child ran (and exec'd or exited) on this thread's TLS. */
	if (sa_in_vfork > 0) {
		sa_in_vfork--;
		sa_in_shim--;
	}
	return (pid_t)r;
}

/*
 * clone(): a child without CLONE_VM is a new process that glibc's fork
 * handlers never see: it starts with its own pid, tid and counts. A child
 * with CLONE_VM shares our memory (and, without CLONE_SETTLS, this
 * thread's TLS): nothing of ours may change there, so its calls pass
 * straight through, found by the stack it runs on.
 */
#define VM_STACKS 16
#define VM_STACK_SPAN (256 * 1024)
static uintptr_t vm_stack_top[VM_STACKS];
static unsigned vm_stack_next;
int sa_vm_children SA_START_DATA;

void sa_vm_child_register(void *stack)
{
	/* Registered for good: the parent never learns when it ends. */
	unsigned i = __atomic_fetch_add(&vm_stack_next, 1, __ATOMIC_RELAXED) % VM_STACKS;

	__atomic_store_n(&vm_stack_top[i], (uintptr_t)stack, __ATOMIC_RELEASE);
	__atomic_store_n(&sa_vm_children, 1, __ATOMIC_RELEASE);
}

int sa_on_vm_child_stack(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	int i;

	for (i = 0; i < VM_STACKS; i++) {
		uintptr_t top = __atomic_load_n(&vm_stack_top[i], __ATOMIC_ACQUIRE);
		if (top && sp < top && sp >= top - VM_STACK_SPAN)
			return 1;
	}
	return 0;
}
