#!/bin/bash
# make check-signals: the signal-handler host (tests/progs/sighandler.c) at
# every level, 3 runs each. The host must run unchanged: a call made inside
# a handler goes straight to libc, unaudited, so the shim never allocates
# or takes malloc's lock in a handler that may have interrupted the host's
# own malloc (docs/hardening.md, "Signals").
. "$(dirname "$0")/../lib.sh"

prog=$PROGS/sighandler
for lvl in warn info trace; do
	for mode in close full; do
		bad=0
		for i in 1 2 3; do
			SOCKAUDIT_LEVEL=$lvl SOCKAUDIT_LOG="$T/$lvl.jsonl" timeout -k 2 30 env LD_PRELOAD="$(preload_value)" \
				"$prog" 1500 $mode >"$T/out" 2>"$T/err" || { bad=$((bad + 1)); last=$(grep -v '^# ' "$T/err" | head -1); }
		done
		[ $bad = 0 ] && ok "$lvl, handler $mode: 3 runs unchanged" || fail "$lvl, handler $mode: host unchanged" "$bad of 3 runs failed: ${last:-timeout}"
	done
done
finish
