/*
 * fdtab_mem.c: what the fd table holds when a socket sits at the highest
 * fd a million-entry RLIMIT_NOFILE allows, without needing that limit
 * (raising it takes CAP_SYS_RESOURCE). Linked with the shim's objects.
 * Prints the table's bytes (sa_fdtab_bytes) before and after tracking
 * fd 3 and fd SA_FD_MAX - 1 (1048575), and sizeof(struct sa_sock).
 */
#include <stdio.h>

#include "core/core.h"

int main(void)
{
	size_t b0 = sa_fdtab_bytes(), b1, b2;

	if (!sa_fd_track(3))
		return 1;
	b1 = sa_fdtab_bytes();
	if (!sa_fd_track(SA_FD_MAX - 1) || !sa_fd_get(SA_FD_MAX - 1))
		return 1;
	b2 = sa_fdtab_bytes();
	printf("sizeof(struct sa_sock): %zu\n", sizeof(struct sa_sock));
	printf("fd table bytes: empty %zu, with fd 3 %zu, with fd 3 and fd %d %zu\n",
	       b0, b1, SA_FD_MAX - 1, b2);
	return 0;
}
