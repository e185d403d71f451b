/*
 * audit_quickack.c: TCP_QUICKACK reasserted in a hot loop. Counts every
 * set per fd and per process.
 */
#include "internal.h"

static uint64_t qa_sets;

void sa_quickack_audit(int fd, struct sa_sock *s, int val, int effective)
{
	__atomic_add_fetch(&qa_sets, 1, __ATOMIC_RELAXED);
	if (s)
		s->qa_sets++;
}

void sa_quickack_summary(json_t *summary)
{
	json_t *q = json_object();

	json_object_set_new(q, "sets", json_integer((json_int_t)qa_sets));
	json_object_set_new(summary, "quickack", q);
}

void sa_quickack_reset(void)
{
	qa_sets = 0;
}
