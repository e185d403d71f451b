/* bench/onefunc.c: the smallest useful preload, the yardstick of
 * bench/start_cost.sh: it wraps socket() and finds the real one with
 * dlsym(RTLD_NEXT) on first use. What it costs an exec is what any
 * LD_PRELOAD costs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/socket.h>

int socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);

	if (!real)
		real = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	return real(domain, type, protocol);
}
