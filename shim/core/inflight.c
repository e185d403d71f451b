/*
 * inflight.c: the blocking call this thread has in flight (core.h), and
 * its report when a jump out of a signal handler left it: from the
 * thread's next call (signals.c finds the jump) or the process's end
 * (lifecycle.c). The record is written by the wrappers and, while the
 * call blocks, by the trampoline; read here on this thread only.
 */
#include <errno.h>

#include "core/core.h"

__thread struct sa_inflight sa_inflight SA_TLS;

void sa_inflight_settle(void)
{
	struct sa_inflight r = sa_inflight;
	int err = errno;

	sa_inflight_end();
	if (!r.t0 || !sa_active())
		return;
	if (r.sig_t0 != r.t0) {
		/* A handler we did not see: what we know now. */
		r.sig_ns = sa_now_ns();
		r.gen = sa_fd_gen(r.fd);
		r.peer_len = 0;
	}
	sa_in_shim++;
	sa_on_left_by_jump(&r);
	sa_in_shim--;
	errno = err;
}
