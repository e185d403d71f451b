/*
 * emit.c: the one emit path. Every line the shim writes passes here:
 * counted (event and findings), checked against the level (findings make
 * a line warn), preceded by the process's init line the first time, and
 * handed to the sink whole.
 *
 * The init line is written by the lifecycle (shim/core/), which registers
 * it here: this floor never calls up.
 */
#include <stdio.h>

#include "line/line.h"

static sa_first_line_fn first_line;
static sa_notes_fn notes;
int sa_emit_notes_pending;
static int first_done SA_PROC_PAGE;              /* first_line ran in this process */
static uint64_t written SA_PROC_PAGE;            /* lines this process wrote */

SA_FORK_TEXT uint64_t sa_lines_written(void)
{
	return __atomic_load_n(&written, __ATOMIC_RELAXED);
}

SA_FORK_TEXT void sa_lines_written_reset(void)
{
	SA_ZERO(written);
	SA_ZERO(first_done);    /* a forked child: its own first line */
}

void sa_emit_set_first_line(sa_first_line_fn fn)
{
	__atomic_store_n(&first_line, fn, __ATOMIC_RELEASE);
	__atomic_store_n(&first_done, 0, __ATOMIC_RELEASE);
}

void sa_emit_set_notes(sa_notes_fn fn)
{
	__atomic_store_n(&notes, fn, __ATOMIC_RELEASE);
}

static void count_findings(const struct sa_findings *f)
{
	int i;

	for (i = 0; i < f->n; i++)
		sa_findings_count(f->codes[i]);
}

SA_FORK_TEXT void sa_emit_skip(const char *event, const struct sa_findings *f)
{
	sa_event_count(event);
	if (f && f->n > 0) {
		count_findings(f);
		sa_suppressed_add(1);
	}
}

/* Lines the sink could not write are said out loud on the next line it
 * can: one warning with how many and why (and in the summary's dropped). */
static __attribute__((noinline)) void report_drops(void)
{
	struct sa_line W;
	const char *why;
	char msg[256];
	uint64_t n = sa_sink_take_unreported(&why);
	int len;

	if (!n)
		return;
	snprintf(msg, sizeof msg, "%llu line%s could not be written: %s.", (unsigned long long)n,
		 n == 1 ? "" : "s", why ? why : "the log destination failed");
	sa_line_begin_at(&W, "warning", -1, 1, 0);
	sa_line_str(&W, "variable", SOCKAUDIT_ENV_LOG);
	sa_line_int(&W, "dropped", (long long)n);
	sa_line_str(&W, "msg", msg);
	sa_event_count("warning");
	len = sa_line_finish(&W, NULL);
	if (len > 0)
		sa_sink_write(W.buf, (size_t)len);
}

static __attribute__((noinline)) void say_notes(void)
{
	sa_notes_fn fn = __atomic_load_n(&notes, __ATOMIC_ACQUIRE);

	if (fn)
		fn();          /* clears sa_emit_notes_pending when it can speak */
}

/* The line, closed, to the sink; then the drops since the last line
 * written, if there were any (one load when there were none). */
static inline void write_line(struct sa_line *L, const struct sa_findings *f)
{
	int n = sa_line_finish(L, f);

	if (n > 0 && sa_sink_write(L->buf, (size_t)n)) {
		__atomic_add_fetch(&written, 1, __ATOMIC_RELAXED);
		if (SA_UNLIKELY(__atomic_load_n(&sa_sinkio_unreported, __ATOMIC_RELAXED)))
			report_drops();
		if (SA_UNLIKELY(__atomic_load_n(&sa_emit_notes_pending, __ATOMIC_RELAXED)))
			say_notes();
	}
}

void sa_line_write(struct sa_line *L, const struct sa_findings *f)
{
	write_line(L, f);
}

/* The first line of a process: the hook (the init line) before it. */
static __attribute__((noinline)) void first_line_hook(double ts)
{
	sa_first_line_fn fn = __atomic_load_n(&first_line, __ATOMIC_ACQUIRE);

	if (fn) {
		fn(ts);
		__atomic_store_n(&first_done, 1, __ATOMIC_RELEASE);
	}
}

void sa_line_emit(struct sa_line *L, enum sa_level l, const struct sa_findings *f)
{
	sa_event_count_fast(L->event);
	if (SA_UNLIKELY(f && f->n > 0)) {
		count_findings(f);
		l = SA_LEVEL_WARN;
	}
	if (!sa_level_enabled(l))
		return;
	if (SA_UNLIKELY(!__atomic_load_n(&first_done, __ATOMIC_ACQUIRE)))
		first_line_hook(L->ts);
	write_line(L, f);
}
