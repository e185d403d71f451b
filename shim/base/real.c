/*
 * real.c: the real libc symbols, resolved once with dlsym(RTLD_NEXT).
 *
 * Owns sa_real. Must never call an exported wrapper name: everything inside
 * the shim reaches libc through sa_real. dlsym may allocate and may call
 * back into our wrappers; the per-thread sa_in_shim flag makes those calls pass
 * straight through, and the wrappers themselves resolve lazily through
 * sa_real_init() so a constructor of another library that calls socket()
 * before ours ran still works.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"

struct sa_real_fns sa_real;
/* The re-entry flag (base.h): dlsym below may call back into the wrappers. */
__thread int sa_in_shim __attribute__((tls_model("initial-exec")));
static int resolved;

/* close_range() is new in glibc 2.34; when libc lacks it, go to the kernel. */
static int fallback_close_range(unsigned int first, unsigned int last, int flags)
{
#ifdef SYS_close_range
	return (int)sa_syscall(SYS_close_range, first, last, flags);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* closefrom() as glibc does it, for a libc without one (before 2.34). */
static void fallback_closefrom(int lowfd)
{
	struct rlimit rl;
	unsigned int fd, top = 65536;

	if (lowfd < 0)
		lowfd = 0;
	if (fallback_close_range((unsigned int)lowfd, ~0U, 0) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < top)
		top = (unsigned int)rl.rlim_cur;
	for (fd = (unsigned int)lowfd; fd < top; fd++)
		sa_real.close((int)fd);
}

static void resolve(void)
{
	int saved = errno;

#define R(name) sa_real.name = (__typeof__(sa_real.name))dlsym(RTLD_NEXT, #name)
	R(socket); R(socketpair); R(setsockopt); R(getsockopt); R(listen);
	R(accept); R(accept4); R(connect); R(close); R(close_range); R(closefrom);
	R(dup); R(dup2); R(dup3); R(read); R(write); R(recv); R(send);
	R(recvfrom); R(sendto); R(recvmsg); R(sendmsg); R(readv); R(writev);
	R(sigaction); R(signal); R(syscall); R(clone); R(_exit);
#undef R
	/* _FORTIFY_SOURCE builds call these instead of read/recv/recvfrom. */
	sa_real.read_chk = (__typeof__(sa_real.read_chk))dlsym(RTLD_NEXT, "__read_chk");
	sa_real.recv_chk = (__typeof__(sa_real.recv_chk))dlsym(RTLD_NEXT, "__recv_chk");
	sa_real.recvfrom_chk = (__typeof__(sa_real.recvfrom_chk))dlsym(RTLD_NEXT, "__recvfrom_chk");
	if (!sa_real.close_range)
		sa_real.close_range = fallback_close_range;
	if (!sa_real.closefrom)
		sa_real.closefrom = fallback_closefrom;
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
	errno = saved;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

void sa_real_init(void)
{
	/* The common case after start-up: one predictable load. */
	if (SA_LIKELY(__atomic_load_n(&resolved, __ATOMIC_ACQUIRE)))
		return;
	int saved = sa_in_shim;
	sa_in_shim = 1;
	pthread_once(&once, resolve);
	sa_in_shim = saved;
}
