#!/bin/bash
# The shim runs the host's signal handlers in a trampoline (so socket calls
# made inside a handler pass straight through). The host must not be able
# to tell: oldact and signal() report its own handlers, SA_SIGINFO and
# SA_RESETHAND behave, bad pointers fail the same way, and a handler that
# leaves by siglongjmp does not switch auditing off.
. "$(dirname "$0")/../lib.sh"
prog=$PROGS/sigsem
"$prog" >"$T/plain" 2>"$T/plain.err"
SOCKAUDIT_LOG="$T/log" preload "$prog" >"$T/shim" 2>"$T/shim.err"
if diff "$T/plain" "$T/shim" >"$T/diff"; then ok "signal semantics identical with and without the shim"
else fail "signal semantics identical with and without the shim"; sed 's/^/# /' "$T/diff"; fi
check "the program's own view is what it expects" grep -q "install h2: 0 old=h1" "$T/shim"
# One rt_sigaction per sigaction() or signal() of the host's, as plain: the
# trampoline goes in with the host's call, not in a second one. Besides
# them, once per process at set-up: the summary's catcher for each fatal
# signal still at SIG_DFL (SA_RESTART|SA_NODEFER over a SIG_DFL), at most 9.
n_plain=$(strace -f -qq -e trace=rt_sigaction "$prog" 2>&1 >/dev/null | grep -c '^.*rt_sigaction(')
SOCKAUDIT_LOG="$T/log2" strace -f -qq -E LD_PRELOAD="$(preload_value)" -e trace=rt_sigaction "$prog" 2>&1 >/dev/null | grep '^.*rt_sigaction(' >"$T/st"
n_all=$(wc -l <"$T/st")
n_enders=$(grep -c 'sa_flags=SA_RESTORER|SA_RESTART|SA_NODEFER, sa_restorer=[^}]*}, {sa_handler=SIG_DFL,' "$T/st")
n_shim=$((n_all - n_enders))
if [ "$n_plain" -gt 8000 ] && [ "$n_shim" = "$n_plain" ] && [ "$n_enders" -le 9 ]; then ok "one rt_sigaction per host call: $n_shim under the shim, $n_plain plain (and $n_enders at set-up)"
else fail "one rt_sigaction per host call" "plain $n_plain, under the shim $n_shim"; fi
check_jq "auditing resumes after a handler left by siglongjmp" "$T/log" \
  'any(.[]; .event=="setsockopt" and .opt=="TCP_DEFER_ACCEPT" and .requested_s==10 and .effective_s==15)'
finish
