#!/bin/bash
# Issue 15, cases 1-3: nothing that a cancellation, a siglongjmp or a fork in
# a signal handler can interrupt may leave shim state held. Each program runs
# plainly and under the shim; a run the timeout has to kill fails as "hung".
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/life_lib.sh"
skip_under_tsan "TSan intercepts pthread_cancel, siglongjmp out of handlers and fork itself"
RP=$(free_port)   # nobody listens there: connects are refused (and logged at info)

# 1. pthread_cancel of workers looping socket/setsockopt/connect/accept, 300 rounds, then setsockopt.
life_plain "$T/c1p" 20 "$PROGS/life_cancel" 300 "$RP"
life_shim "$T/c1s" 10 info "$PROGS/life_cancel" 300 "$RP"
life_same "case 1: pthread_cancel of logging threads x300, then setsockopt (info)" "$T/c1p" "$T/c1s"
life_parses "case 1: log parses" "$T/c1s.jsonl"

# 2. siglongjmp out of a SIGALRM handler (every 300 us for 1 s) at info and trace.
# The shim's count must stay within a factor of 10 of plain's (both printed).
# The three run side by side, so that a machine busy with something else
# slows them alike (run one after another, plain's 8,090 against the shim's
# 775 once came from the load, not the shim).
life_plain "$T/c2p" 10 "$PROGS/life_longjmp" 1 &
for lvl in info trace; do life_shim "$T/c2$lvl" 6 "$lvl" "$PROGS/life_longjmp" 1 & done
wait
pn=$(sed -n 's/^iterations //p' "$T/c2p.out")
for lvl in info trace; do
	LR_RC=$(cat "$T/c2$lvl.rc")
	n="case 2: siglongjmp out of a SIGALRM handler, $lvl"
	if life_hung "$LR_RC"; then fail "$n" "hung: killed after the 6 s timeout (plain: $pn iterations, exit $(cat "$T/c2p.rc"))"
	elif [ "$LR_RC" != 0 ] || [ -z "$pn" ]; then fail "$n" "exit $LR_RC (plain exit $(cat "$T/c2p.rc"))"; head -3 "$T/c2$lvl.err" | sed "s/^/# shim stderr: /"
	else
		sn=$(sed -n 's/^iterations //p' "$T/c2$lvl.out")
		if [ "${sn:-0}" -ge $((pn / 10)) ]; then ok "$n: iterations plain $pn, shim $sn"
		else fail "$n" "iterations plain $pn, shim ${sn:-none}: more than 10x fewer"; fi
	fi
	life_parses "case 2: log parses ($lvl)" "$T/c2$lvl.jsonl"
done

# 3. fork() + _exit / waitpid inside a SIGALRM handler (every 5 ms: a fork costs
# about 1 ms on a loaded 2-core machine, so 1 ms starves even the plain run) during a connect loop.
# A sanitizer's fork interceptor is much slower: a longer period there.
C3P=$([ -n "${SANITIZE:-}" ] && echo 25000 || echo 5000)
life_plain "$T/c3p" 10 "$PROGS/life_forksig" 1 "$RP" "$C3P"
for lvl in info trace; do
	life_shim "$T/c3$lvl" 10 "$lvl" "$PROGS/life_forksig" 1 "$RP" "$C3P"
	life_same "case 3: fork in a SIGALRM handler during a connect loop, $lvl ($(sed -n 's/^# //p' "$T/c3p.err") plain)" \
		"$T/c3p" "$T/c3$lvl"
	life_parses "case 3: log parses ($lvl)" "$T/c3$lvl.jsonl"
done
finish
