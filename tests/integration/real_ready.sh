#!/bin/bash
# Code that may run before the shim's init (base/, line/, the init line's
# helpers, the exported wrappers) reaches libc through SA_REAL or after a
# READY of that slot, never through a slot that may still be NULL; and the
# check really fails on a planted offence of each kind.
. "$(dirname "$0")/../lib.sh"
CHECK=$TOP/scripts/check-real-ready.py

out=$(python3 "$CHECK" "$TOP/shim" 2>&1)
if [ $? = 0 ]; then ok "every real-function use before init is resolved first"; else fail "every real-function use before init is resolved first" "$out"; fi

cp -r "$TOP/shim" "$T/shim"
printf 'static void planted(int fd) { sa_real.close(fd); }\n' >>"$T/shim/line/journal.c"
out=$(python3 "$CHECK" "$T/shim" 2>&1)
if [ $? != 0 ] && grep -q "line/journal.c:.*sa_real.close" <<<"$out"; then
	ok "a direct sa_real.close in line/ is refused"
else
	fail "a direct sa_real.close in line/ is refused" "$out"
fi

cp "$TOP/shim/line/journal.c" "$T/shim/line/journal.c"
printf 'SA_EXPORT int planted_listen(int fd, int b)\n{\n\treturn sa_real.listen(fd, b);\n}\n' >>"$T/shim/core/interpose.c"
out=$(python3 "$CHECK" "$T/shim" 2>&1)
if [ $? != 0 ] && grep -q "core/interpose.c:.*sa_real.listen in an exported wrapper before READY" <<<"$out"; then
	ok "an exported wrapper calling sa_real.listen without READY is refused"
else
	fail "an exported wrapper calling sa_real.listen without READY is refused" "$out"
fi
finish
