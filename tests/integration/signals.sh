#!/bin/bash
# Socket calls from a signal handler (POSIX allows socket, setsockopt,
# connect and close there) that interrupts a main thread busy in malloc.
# The shim runs the host's handlers in a trampoline (shim/signals.c), so
# calls inside them pass straight through: at every level the host must run
# as it does plainly. (Before the trampoline, info and trace corrupted the
# heap: jansson's malloc inside the handler.)
. "$(dirname "$0")/../lib.sh"

prog=$PROGS/sighandler
[ -x "$prog" ] || { fail "sighandler built" "$prog missing"; finish; }
"$prog" 1000 >"$T/plain.out" 2>/dev/null; prc=$?
[ $prc = 0 ] && ok "signal handler making socket calls, plain" || { fail "signal handler making socket calls, plain" "exit $prc"; finish; }
for lvl in warn trace; do
for mode in full close; do
	SOCKAUDIT_LEVEL=$lvl SOCKAUDIT_LOG="$T/$lvl-$mode.jsonl" timeout -k 2 30 env LD_PRELOAD="$(preload_value)" \
		"$prog" 1500 $mode >"$T/$mode.out" 2>"$T/$mode.err"; rc=$?
	if [ $rc = 0 ] && cmp -s "$T/plain.out" "$T/$mode.out"; then
		ok "$lvl level, handler $mode: host unchanged ($(sed -n 's/^# //p' "$T/$mode.err"))"
	else
		fail "$lvl level, handler $mode: host unchanged" "exit $rc"; grep -v '^# ' "$T/$mode.err" | head -3 | sed 's/^/# /'
	fi
done
done
# The main thread connects on every 16th loop; the handler's calls pass
# through unaudited: the summary counts exactly the main thread's connects.
loops=$(sed -n 's/^# handler runs [0-9]*, main loops \([0-9]*\)$/\1/p' "$T/full.err")
want=$(( (${loops:-0} + 15) / 16 ))
# A TSan build leaves the signal wrappers out: the handler's own connects
# are audited there too, so the main thread's are a lower bound.
cmp="=="; case ",${SANITIZE:-}," in *,thread,*) cmp=">=" ;; esac
check_jq "the main thread's own calls are still audited: all $want of them ($loops loops)" "$T/trace-full.jsonl" \
	"any(.[]; .event==\"summary\" and .counts.connect $cmp $want) and $want > 0 and any(.[]; .event==\"connect\" and .proto==\"udp\")"
finish
