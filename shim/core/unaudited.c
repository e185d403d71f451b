/*
 * unaudited.c: the calls that passed through unaudited, counted by reason,
 * so that nothing is lost without a word. A socket call made inside one of
 * the host's signal handlers passes through by design (signals.c: our
 * auditing is not async-signal-safe); a call made while another thread's
 * set-up outlived the wait passes through too (lifecycle.c). Each is
 * counted here with one atomic add (async-signal-safe), said once in a
 * `warning` line by the next line this process writes outside a handler,
 * and carried by the summary as "not_audited".
 */
#include "core/core.h"

/* Arrays of characters, not of pointers: pointers would be relocations the
 * loader writes at every exec (a page fault in every shell). */
static const char reason_name[SA_UNAUD_N][20] = {
	[SA_UNAUD_SIGNAL] = "in_signal_handler",
	[SA_UNAUD_INIT_WAIT] = "init_wait",
};

static const char reason_msg[SA_UNAUD_N][160] = {
	[SA_UNAUD_SIGNAL] = "socket calls made inside a signal handler pass through unaudited (not async-signal-safe to "
			    "audit); the summary's not_audited counts them",
	[SA_UNAUD_INIT_WAIT] = "socket calls passed through unaudited while another thread's set-up outlived the wait; "
			       "the summary's not_audited counts them",
};

static uint64_t counts[SA_UNAUD_N];
/* Any count above: beside the run state, on the data every exec reads
 * anyway, so that a shell's _exit (sa_lifecycle_end) asks it without a
 * page of this file's. Written once, when a first call passes. */
int sa_unaudited_seen SA_START_DATA;
static int said[SA_UNAUD_N];

void sa_unaudited_note(enum sa_unaudited why)
{
	__atomic_add_fetch(&counts[why], 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&sa_unaudited_seen, __ATOMIC_RELAXED))
		__atomic_store_n(&sa_unaudited_seen, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&said[why], __ATOMIC_RELAXED))
		sa_emit_notes_pending = 1;
}

uint64_t sa_unaudited_count(enum sa_unaudited why)
{
	return __atomic_load_n(&counts[why], __ATOMIC_RELAXED);
}

/* One warning per reason, the first time its count is seen from outside a
 * handler (the emit path's notes hook, or the summary). */
void sa_unaudited_say(void)
{
	if (sa_in_signal || sa_in_vfork)
		return;
	sa_emit_notes_pending = 0;
	for (int i = 0; i < SA_UNAUD_N; i++) {
		uint64_t n = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
		json_t *ev;

		if (!n || __atomic_exchange_n(&said[i], 1, __ATOMIC_ACQ_REL))
			continue;
		ev = sa_event_new("warning", -1);
		if (!ev)
			continue;
		json_object_set_new(ev, "severity", json_string("warn"));
		json_object_set_new(ev, "not_audited", json_string(reason_name[i]));
		json_object_set_new(ev, "calls", json_integer((json_int_t)n));
		json_object_set_new(ev, "msg", json_string(reason_msg[i]));
		sa_event_emit(ev, SA_LEVEL_WARN, NULL);   /* after the init line, counted */
	}
}

/* The summary's "not_audited": {"in_signal_handler": N, ...}, or NULL when
 * every call was audited. */
json_t *sa_unaudited_json(void)
{
	json_t *o;

	if (!sa_unaudited_any())
		return NULL;
	o = json_object();
	for (int i = 0; o && i < SA_UNAUD_N; i++) {
		uint64_t n = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);

		if (n)
			json_object_set_new(o, reason_name[i], json_integer((json_int_t)n));
	}
	return o;
}

/* A new process (fork, clone): its own counts. */
void sa_unaudited_reset(void)
{
	SA_ZERO(sa_unaudited_seen);
	for (int i = 0; i < SA_UNAUD_N; i++) {
		SA_ZERO(counts[i]);
		SA_ZERO(said[i]);
	}
}
