#!/bin/bash
# Socket calls from a signal handler (POSIX allows socket, setsockopt,
# connect and close there) that interrupts a main thread busy in malloc.
# At SOCKAUDIT_LEVEL=warn the shim allocates nothing on those paths and the
# host must run as it does plainly. At info and trace the shim builds JSON
# (malloc) inside the handler: a known limitation, measured by
# `make check-signals` (tests/hardening/signals_levels.sh), not here.
. "$(dirname "$0")/../lib.sh"

prog=$PROGS/sighandler
[ -x "$prog" ] || { fail "sighandler built" "$prog missing"; finish; }
"$prog" 1000 >"$T/plain.out" 2>/dev/null; prc=$?
[ $prc = 0 ] && ok "signal handler making socket calls, plain" || { fail "signal handler making socket calls, plain" "exit $prc"; finish; }
for mode in full close; do
	SOCKAUDIT_LEVEL=warn SOCKAUDIT_LOG="$T/$mode.jsonl" timeout -k 2 30 env LD_PRELOAD="$(preload_value)" \
		"$prog" 1500 $mode >"$T/$mode.out" 2>"$T/$mode.err"; rc=$?
	if [ $rc = 0 ] && cmp -s "$T/plain.out" "$T/$mode.out"; then
		ok "warn level, handler $mode: host unchanged ($(sed -n 's/^# //p' "$T/$mode.err"))"
	else
		fail "warn level, handler $mode: host unchanged" "exit $rc"; grep -v '^# ' "$T/$mode.err" | head -3 | sed 's/^/# /'
	fi
done
check_jq "warn level: the calls were counted in the summary" "$T/full.jsonl" \
	'any(.[]; .event=="summary" and .counts.setsockopt > 0)'
finish
