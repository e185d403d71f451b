#!/bin/bash
# Secure execution: the loader ignores LD_PRELOAD for setuid and setcap
# programs (AT_SECURE), so the shim never runs there; and the shim reads its
# SOCKAUDIT_* variables with secure_getenv, never getenv, so even when it is
# loaded into a secure-execution process (from /etc/ld.so.preload, say) it
# takes no direction from a user's environment.
. "$(dirname "$0")/../lib.sh"

# The library imports secure_getenv and not getenv.
nm -D --undefined-only "$LIB" | awk '{print $NF}' | sed 's/@.*//' >"$T/undef"
grep -qx secure_getenv "$T/undef" && ok "shim imports secure_getenv" || fail "shim imports secure_getenv"
grep -qx getenv "$T/undef" && fail "shim does not import getenv" "getenv is imported" || ok "shim does not import getenv"

if ! command -v setcap >/dev/null || ! command -v setpriv >/dev/null || [ "$(id -u)" != 0 ]; then
	echo "ok - setcap program ignores LD_PRELOAD # SKIP needs root, setcap (libcap2-bin) and setpriv"
	finish
fi
# A non-root user runs a copy of a socket program, once plain, once with a
# file capability. Both with LD_PRELOAD and a log path that user may write.
chmod 755 "$T"; mkdir -p "$T/sec"; chmod 777 "$T/sec"
cp "$LIB" "$T/sec/libsockaudit.so"; chmod 755 "$T/sec/libsockaudit.so"
cp "$PROGS/sockhost" "$T/sec/plain"; cp "$PROGS/sockhost" "$T/sec/capped"
chmod 755 "$T/sec/plain" "$T/sec/capped"
if ! setcap cap_net_bind_service+ep "$T/sec/capped" 2>"$T/err"; then
	echo "ok - setcap program ignores LD_PRELOAD # SKIP setcap failed here: $(head -1 "$T/err")"
	finish
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env "$@"; }
as_nobody SOCKAUDIT_LOG="$T/sec/plain.jsonl" LD_PRELOAD="$(LIB=$T/sec/libsockaudit.so preload_value)" "$T/sec/plain" 3 >"$T/p.out" 2>"$T/p.err"; prc=$?
as_nobody SOCKAUDIT_LOG="$T/sec/capped.jsonl" LD_PRELOAD="$(LIB=$T/sec/libsockaudit.so preload_value)" "$T/sec/capped" 3 >"$T/c.out" 2>"$T/c.err"; crc=$?
if [ $prc = 7 ] && grep -q '"event":[ ]*"init"' "$T/sec/plain.jsonl" 2>/dev/null; then
	ok "control: the same program without a capability is audited"
else fail "control: the same program without a capability is audited" "exit $prc; $(head -c 200 "$T/p.err")"; fi
if [ $crc = 7 ] && [ ! -e "$T/sec/capped.jsonl" ] && ! grep -q '"event"' "$T/c.err"; then
	ok "setcap program: the loader ignores LD_PRELOAD (no shim, program unchanged)"
else fail "setcap program: the loader ignores LD_PRELOAD" "exit $crc; log exists: $([ -e "$T/sec/capped.jsonl" ] && echo yes || echo no)"; fi
finish
