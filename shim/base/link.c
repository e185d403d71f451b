/*
 * link.c: what the C runtime's start files would have put into the
 * library, kept to what it needs, so that the loader does less for it at
 * every exec (docs/performance.md, "Start cost").
 *
 * The library is linked without crtbeginS.o (-nostartfiles): its
 * transactional-memory and gmon hooks were three weak symbols the loader
 * looked for in every object of the process, and __cxa_finalize a fourth
 * lookup, for work a preload never needs (it is never unloaded). What it
 * did need is here: __dso_handle, which names this library to glibc's
 * __register_atfork (core/lifecycle.c passes it, as libc_nonshared's
 * pthread_atfork would).
 *
 * jansson's memory.c starts with malloc and free in static pointers: two
 * symbol lookups at load. The link wraps both (--wrap=malloc,--wrap=free):
 * the pointers hold these local functions instead, and libc's malloc and
 * free are bound lazily, on their first call. Must stay trivial: any
 * allocation of the shim's passes through here.
 *
 * Debian builds jansson's archive, and dpkg-buildflags the .deb's objects,
 * with _FORTIFY_SOURCE: their snprintf, memcpy and memmove calls are
 * glibc's __*_chk functions, which musl's libc does not have. When an
 * audited glibc program execs a musl one, LD_PRELOAD still names this
 * build, musl's loader takes it, and an import it cannot find stops the
 * program before main (status 127). So they are defined here, hidden,
 * with glibc's check: a destination smaller than the size given aborts,
 * as __chk_fail does. (tests/integration/musl.sh and pkg_deb.sh compare
 * the library's imports with musl's libc.)
 */
#undef _FORTIFY_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int vsnprintf(char *s, size_t n, const char *fmt, va_list ap);

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

int __vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, va_list ap) SA_HIDDEN;
int __snprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, ...) SA_HIDDEN;

int __vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, va_list ap)
{
	(void)flag;
	if (maxlen > slen)
		abort();
	return vsnprintf(s, maxlen, fmt, ap);
}

int __snprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = __vsnprintf_chk(s, maxlen, flag, slen, fmt, ap);
	va_end(ap);
	return r;
}

void *__memcpy_chk(void *d, const void *s, size_t n, size_t dlen) SA_HIDDEN;
void *__memmove_chk(void *d, const void *s, size_t n, size_t dlen) SA_HIDDEN;

void *__memcpy_chk(void *d, const void *s, size_t n, size_t dlen)
{
	if (n > dlen)
		abort();
	return memcpy(d, s, n);
}

void *__memmove_chk(void *d, const void *s, size_t n, size_t dlen)
{
	if (n > dlen)
		abort();
	return memmove(d, s, n);
}

/* The end of the fork text (shim/sa_fork_text.ld puts it last there). */
void sa_fork_text_end(void) SA_HIDDEN __attribute__((used, noinline));
void sa_fork_text_end(void)
{
	__asm__ volatile("");
}
