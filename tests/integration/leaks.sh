#!/bin/bash
# No leaks and no memory errors in the shim: a socket program (sockhost, and
# the transparency matrix) under the shim at trace level, checked by
# (and threads, fork) valgrind memcheck (plain build) or LeakSanitizer (SANITIZE=address build).
# The host programs themselves free everything they allocate.
. "$(dirname "$0")/../lib.sh"

case ",${SANITIZE:-}," in
*,thread,*) echo "ok - leaks # SKIP SANITIZE=thread build (run with a plain or address build)"; finish ;;
*,address,*)
	mkdir -p "$T/d"
	SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/a.jsonl" ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:exitcode=86 \
		LD_PRELOAD="$(preload_value)" "$PROGS/sockhost" 50 >"$T/out" 2>"$T/err"; rc=$?
	[ $rc = 7 ] && ! grep -q 'LeakSanitizer' "$T/err" && ok "LeakSanitizer: no leak in sockhost under the shim" \
		|| { fail "LeakSanitizer: no leak in sockhost under the shim" "exit $rc"; grep -A12 -E 'ERROR|SUMMARY' "$T/err" | head -40 | sed 's/^/# /'; }
	SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/b.jsonl" ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:exitcode=86 \
		LD_PRELOAD="$(preload_value)" "$PROGS/transparency" "$T/d" >"$T/out" 2>"$T/err"; rc=$?
	[ $rc = 0 ] && ! grep -q 'LeakSanitizer' "$T/err" && ok "LeakSanitizer: no leak in the transparency matrix under the shim" \
		|| { fail "LeakSanitizer: no leak in the transparency matrix under the shim" "exit $rc"; grep -A12 -E 'ERROR|SUMMARY' "$T/err" | head -40 | sed 's/^/# /'; }
	finish ;;
esac

command -v valgrind >/dev/null || { echo "ok - leaks # SKIP valgrind not installed"; finish; }
# vg NAME CMD...: memcheck; our frames only count (the shim's objects are
# the ones whose stack mentions libsockaudit.so).
vg() {
	local name=$1; shift
	SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/$name.jsonl" LD_PRELOAD="$(preload_value)" \
		timeout -k 5 150 valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=99 --track-fds=no \
		--log-file="$T/$name.vg" "$@" >"$T/$name.out" 2>"$T/$name.err"
}
vg sockhost "$PROGS/sockhost" 30; rc=$?
if [ $rc = 7 ] && [ ! -s "$T/sockhost.vg" ]; then ok "valgrind: no leak or memory error in sockhost under the shim"
else fail "valgrind: no leak or memory error in sockhost under the shim" "exit $rc"; head -60 "$T/sockhost.vg" | sed 's/^/# /'; fi
# (Not the transparency matrix here: valgrind itself aborts on its bind()
# of a full, unterminated sun_path ending at a guard page.)
vg threads "$PROGS/threads" 2 3 20; rc=$?
if [ $rc = 0 ] && [ ! -s "$T/threads.vg" ]; then ok "valgrind: no leak or memory error with 5 threads under the shim"
else fail "valgrind: no leak or memory error with 5 threads under the shim" "exit $rc"; head -60 "$T/threads.vg" | sed 's/^/# /'; fi
vg fork "$PROGS/fdgames" fork; rc=$?
if [ $rc = 0 ] && [ ! -s "$T/fork.vg" ]; then ok "valgrind: no leak or memory error across fork under the shim"
else fail "valgrind: no leak or memory error across fork under the shim" "exit $rc"; head -60 "$T/fork.vg" | sed 's/^/# /'; fi
check_jq "valgrind run was audited (init event)" "$T/sockhost.jsonl" 'any(.[]; .event=="init")'
finish
