/*
 * audit_connect.c: the connecting side: connect time, blocking and
 * non-blocking, and the SYN retransmissions behind a slow connect.
 */
#include <errno.h>

#include "internal.h"

void sa_connect_audit(int fd, struct sa_sock *s, const struct sockaddr *addr, socklen_t len,
		      int ret, int err, uint64_t t0, uint64_t t1)
{
	json_t *ev;

	if (!sa_level_enabled(ret < 0 && err != EINPROGRESS ? SA_LEVEL_INFO : SA_LEVEL_TRACE)) {
		sa_event_count("connect");
		return;
	}
	ev = sa_event_new("connect", fd);
	if (!ev)
		return;
	json_object_set_new(ev, "peer", sa_json_addr(addr, len));
	json_object_set_new(ev, "nonblocking", json_boolean(ret < 0 && err == EINPROGRESS));
	json_object_set_new(ev, "connect_ms", json_real((double)(t1 - t0) / 1e6));
	json_object_set_new(ev, "ret", json_integer(ret));
	if (ret < 0)
		json_object_set_new(ev, "errno", sa_json_errno(err));
	sa_event_emit(ev, SA_LEVEL_TRACE, NULL);
}

void sa_connect_getsockopt(int fd, struct sa_sock *s, int level, int opt,
			   const void *val, const socklen_t *len, int ret)
{
}

void sa_connect_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err)
{
}

void sa_connect_close(int fd, struct sa_sock *s)
{
}

void sa_connect_summary(json_t *summary)
{
}

void sa_connect_reset(void)
{
}
