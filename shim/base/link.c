/*
 * link.c: what the C runtime's start files would have put into the
 * library, kept to what it needs, so that the loader does less for it at
 * every exec (docs/performance.md, "Start cost").
 *
 * The library is linked without crtbeginS.o (-nostartfiles): its
 * transactional-memory and gmon hooks were three weak symbols the loader
 * looked for in every object of the process, and __cxa_finalize a fourth
 * lookup, for work a preload never needs (it is never unloaded). What it
 * did need is here: __dso_handle, which names this library to
 * pthread_atfork (libc_nonshared's pthread_atfork passes it to libc).
 *
 * jansson's memory.c starts with malloc and free in static pointers: two
 * symbol lookups at load. The link wraps both (--wrap=malloc,--wrap=free):
 * the pointers hold these local functions instead, and libc's malloc and
 * free are bound lazily, on their first call. Must stay trivial: any
 * allocation of the shim's passes through here.
 */
#include <stddef.h>

#include "base/base.h"

void *__dso_handle SA_HIDDEN = &__dso_handle;

void *__real_malloc(size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n) SA_HIDDEN;
void __wrap_free(void *p) SA_HIDDEN;

void *__wrap_malloc(size_t n)
{
	return __real_malloc(n);
}

void __wrap_free(void *p)
{
	__real_free(p);
}

/* The end of the fork text (shim/sa_fork_text.ld puts it last there). */
void sa_fork_text_end(void) SA_HIDDEN __attribute__((used, noinline));
void sa_fork_text_end(void)
{
	__asm__ volatile("");
}
