/*
 * connect_peers.c: connects counted per peer (TCP over IPv4 and IPv6), so
 * that the summary and the totals lines say how many connects to each
 * address completed, failed or were abandoned, and a report can set one
 * process's completed connects to an address beside the accepts another
 * process's listener there made (connects the kernel completed that no
 * accept() ever took). The first SA_PEER_SLOTS peers of a process; the
 * rest are counted together.
 *
 * The slots are tagged with the process epoch: a
 * forked child finds its parent's slots stale and takes them over one by
 * one as it connects, with no reset at the fork (a page it would write).
 */
#include <netinet/in.h>
#include <string.h>

#include "audit/connect.h"

#define SA_PEER_SLOTS 8

struct peer_slot {
	uint32_t tag;                /* (epoch + 1) * 2: this process's; one less: being filled; 0: empty */
	uint16_t family, port;
	unsigned char addr[16];
	uint64_t n[4];               /* ok, failed, abandoned, interrupted */
	uint64_t retrans;
};
/* The first slot on the process page (a fork-per-connection child's one
 * backend writes no other page of ours), the rest beside. */
static struct peer_slot first SA_PROC_PAGE;
static struct peer_slot more[SA_PEER_SLOTS - 1];
static uint64_t rest SA_PROC_PAGE;       /* connects to peers past the slots */
static uint32_t rest_tag SA_PROC_PAGE;   /* the epoch (+ 1) rest counts for */

static int peer_key(const struct sockaddr *sa, socklen_t len, uint16_t *port, unsigned char addr[16])
{
	if (sa && sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		*port = in->sin_port;
		memset(addr, 0, 16);
		memcpy(addr, &in->sin_addr, 4);
		return AF_INET;
	}
	if (sa && sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		*port = in6->sin6_port;
		memcpy(addr, &in6->sin6_addr, 16);
		return AF_INET6;
	}
	return 0;
}

static struct peer_slot *slot_for(int family, uint16_t port, const unsigned char addr[16])
{
	uint32_t mine = (sa_proc_epoch() + 1) * 2, t;
	struct peer_slot *p;
	size_t i;

	for (i = 0; i < SA_PEER_SLOTS; i++) {
		p = i ? &more[i - 1] : &first;
		t = __atomic_load_n(&p->tag, __ATOMIC_ACQUIRE);
		if (t == mine) {
			if (p->family == family && p->port == port && !memcmp(p->addr, addr, 16))
				return p;
			continue;
		}
		if (t == mine - 1)   /* another thread is filling it */
			continue;
		/* Empty, or a parent's: this process's from now on. */
		if (!__atomic_compare_exchange_n(&p->tag, &t, mine - 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			i--;   /* look at it again: perhaps the same peer */
			continue;
		}
		p->family = (uint16_t)family;
		p->port = port;
		memcpy(p->addr, addr, 16);
		memset(p->n, 0, sizeof p->n);
		p->retrans = 0;
		__atomic_store_n(&p->tag, mine, __ATOMIC_RELEASE);
		return p;
	}
	return NULL;
}

void sa_connect_peer_count(const struct sockaddr *peer, socklen_t len, enum sa_conn_outcome o, int retrans)
{
	unsigned char addr[16];
	uint16_t port;
	int family = peer_key(peer, len, &port, addr), k;
	struct peer_slot *p;
	uint32_t want;

	if (!family || o < SA_CONN_OK || o > SA_CONN_INTERRUPTED)
		return;
	k = (int)o - SA_CONN_OK;
	p = slot_for(family, port, addr);
	if (!p) {
		want = sa_proc_epoch() + 1;
		if (__atomic_load_n(&rest_tag, __ATOMIC_RELAXED) != want) {
			__atomic_store_n(&rest, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&rest_tag, want, __ATOMIC_RELAXED);
		}
		__atomic_add_fetch(&rest, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_add_fetch(&p->n[k], 1, __ATOMIC_RELAXED);
	if (retrans > 0)
		__atomic_add_fetch(&p->retrans, (uint64_t)retrans, __ATOMIC_RELAXED);
}

static json_t *slot_json(const struct peer_slot *p)
{
	struct sockaddr_storage ss;
	char text[SA_ADDR_TEXT_MAX + 1];
	socklen_t len;
	json_t *o;
	int i, n;

	memset(&ss, 0, sizeof ss);
	if (p->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = p->port;
		memcpy(&in->sin_addr, p->addr, 4);
		len = sizeof *in;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = p->port;
		memcpy(&in6->sin6_addr, p->addr, 16);
		len = sizeof *in6;
	}
	n = sa_addr_text((const struct sockaddr *)&ss, len, text, SA_ADDR_TEXT_MAX);
	text[n > 0 ? n : 0] = '\0';   /* a length, not a string */
	o = json_object();
	json_object_set_new(o, "peer", n > 0 ? sa_json_str(text) : json_null());
	for (i = 0; i < 4; i++)
		json_object_set_new(o, sa_conn_outcome_name((enum sa_conn_outcome)(SA_CONN_OK + i)),
				    json_integer((json_int_t)__atomic_load_n(&p->n[i], __ATOMIC_RELAXED)));
	json_object_set_new(o, "syn_retrans", json_integer((json_int_t)__atomic_load_n(&p->retrans, __ATOMIC_RELAXED)));
	return o;
}

void sa_connect_peers_json(json_t *summary)
{
	uint32_t mine = (sa_proc_epoch() + 1) * 2;
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < SA_PEER_SLOTS; i++) {
		const struct peer_slot *p = i ? &more[i - 1] : &first;

		if (__atomic_load_n(&p->tag, __ATOMIC_ACQUIRE) == mine)
			json_array_append_new(arr, slot_json(p));
	}
	json_object_set_new(summary, "connect_peers", arr);
	json_object_set_new(summary, "connect_peers_rest",
			    json_integer(__atomic_load_n(&rest_tag, __ATOMIC_RELAXED) == sa_proc_epoch() + 1 ?
					 (json_int_t)__atomic_load_n(&rest, __ATOMIC_RELAXED) : 0));
}
