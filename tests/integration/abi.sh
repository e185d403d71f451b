#!/bin/bash
# The glibc floor: libsockaudit.so and the sockaudit launcher load on
# glibc 2.17 and later (no symbol version above GLIBC_2.17, no
# GLIBC_PRIVATE), and the musl library, when built, needs nothing musl's
# libc.so lacks. The same check as `make check-abi` (scripts/check-abi.sh).
. "$(dirname "$0")/../lib.sh"

abi() {
	local name=$1 out
	shift
	if out=$("$TOP/scripts/check-abi.sh" "$@" 2>&1); then
		ok "$name"
	else
		fail "$name"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}

abi "libsockaudit.so needs no glibc version above 2.17" --floor 2.17 "$LIB"
# A sanitized build links the launcher the usual way (mk/launcher.mk): its
# runtime needs today's glibc, and it is a test build, never shipped.
if [ -n "${SANITIZE:-}" ]; then
	echo "ok - the sockaudit launcher needs no glibc version above 2.17 # SKIP SANITIZE=$SANITIZE: the launcher is linked without its floor"
else
	abi "the sockaudit launcher needs no glibc version above 2.17" --floor 2.17 "$TOP/sockaudit"
fi

# The arm64 build (make arm64), when there: the same floor, GLIBC_2.17
# being aarch64's first glibc. objdump reads its symbols as any ELF's.
if [ -f "$BUILD/arm64/libsockaudit.so" ] && [ -f "$BUILD/arm64/sockaudit" ] && [ -z "${SANITIZE:-}" ]; then
	abi "build/arm64: library and launcher need no glibc version above 2.17" --floor 2.17 \
		"$BUILD/arm64/libsockaudit.so" "$BUILD/arm64/sockaudit"
else
	echo "ok - build/arm64 needs no glibc version above 2.17 # SKIP no arm64 build (make arm64)"
fi

# The check itself fails on what it must refuse: a library that needs a
# GLIBC_2.34 symbol (pthread_once, as glibc 2.34+ links it by default).
cat >"$T/new.c" <<'C'
#include <pthread.h>
static pthread_once_t o = PTHREAD_ONCE_INIT;
static void f(void) {}
void g(void);
void g(void) { pthread_once(&o, f); }
C
if cc -shared -fPIC -o "$T/new.so" "$T/new.c" 2>/dev/null && objdump -T "$T/new.so" | grep -q 'GLIBC_2\.3[4-9]'; then
	if "$TOP/scripts/check-abi.sh" --floor 2.17 "$T/new.so" >/dev/null 2>&1; then
		fail "the check refuses a library that needs GLIBC_2.34"
	else
		ok "the check refuses a library that needs GLIBC_2.34"
	fi
else
	ok "the check refuses a library that needs GLIBC_2.34 # SKIP this glibc links pthread_once below 2.34"
fi

MUSL_SO=${SA_MUSL_LIB:-$TOP/libsockaudit-musl.so}
MUSL_LIBC=${MUSL_LIBC:-/usr/lib/x86_64-linux-musl/libc.so}
if [ -f "$MUSL_SO" ] && [ -f "$MUSL_LIBC" ]; then
	abi "libsockaudit-musl.so needs nothing musl's libc.so lacks" --musl "$MUSL_LIBC" "$MUSL_SO"
fi
exit $_sa_failed
