#!/bin/bash
# The shim runs the host's signal handlers in a trampoline (so socket calls
# made inside a handler pass straight through). The host must not be able
# to tell: oldact and signal() report its own handlers, SA_SIGINFO and
# SA_RESETHAND behave, bad pointers fail the same way, and a handler that
# leaves by siglongjmp does not switch auditing off.
. "$(dirname "$0")/../lib.sh"
prog=$PROGS/sigsem
"$prog" >"$T/plain" 2>&1
SOCKAUDIT_LOG="$T/log" preload "$prog" >"$T/shim" 2>&1
if diff "$T/plain" "$T/shim" >"$T/diff"; then ok "signal semantics identical with and without the shim"
else fail "signal semantics identical with and without the shim"; sed 's/^/# /' "$T/diff"; fi
check "the program's own view is what it expects" grep -q "install h2: 0 old=h1" "$T/shim"
check_jq "auditing resumes after a handler left by siglongjmp" "$T/log" \
  'any(.[]; .event=="setsockopt" and .opt=="TCP_DEFER_ACCEPT" and .requested_s==10 and .effective_s==15)'
finish
