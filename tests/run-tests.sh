#!/bin/bash
# Runs every test and prints one final line "N passed, N failed".
# Each test (cmocka binary or integration script) prints TAP-style lines
# "ok - name" / "not ok - name # why" (a skip, "ok - name # SKIP why", is
# printed under its test too); a test that exits non-zero without
# printing "not ok" counts as one failure. Integration scripts run two at a
# time, each under a timeout, output kept together per script.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
jobs=${TEST_JOBS:-2}
filter=${TESTS:-}
# Unit tests run without tests/lib.sh: give them its sanitizer options too
# (why each is set: tests/lib.sh).
if [ -n "${SANITIZE:-}" ]; then
	export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=88:report_signal_unsafe=0}
fi
out=$(mktemp -d /tmp/sa-tests.XXXXXX)
trap 'rm -rf "$out"' EXIT INT TERM

run_one() {   # $1 = label, rest = command
	local label=$1; shift
	local log="$out/$(echo "$label" | tr '/ ' '__').log"
	local start=$(date +%s.%N)
	CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 5 "${TEST_TIMEOUT:-180}" "$@" >"$log" 2>&1
	local rc=$?
	local secs=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo "?")
	local p=$(grep -cE '^ok( |$)' "$log") f=$(grep -cE '^not ok( |$)' "$log")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $label exited with status $rc" >>"$log"; f=1
	fi
	echo "$p $f" >"$log.count"
	{
		printf '== %s (%s passed, %s failed, %.1fs)\n' "$label" "$p" "$f" "$secs" 2>/dev/null || echo "== $label"
		if [ "$f" != 0 ] || [ -n "${VERBOSE:-}" ]; then sed 's/^/   /' "$log"; else grep -E '^not ok|^ok .*# SKIP' "$log" | sed 's/^/   /'; fi
	} >"$log.report"
	cat "$log.report"
}
export -f run_one
export out top build

list=()
for t in "$build"/tests/unit/test_*; do
	[ -x "$t" ] || continue
	[ -n "$filter" ] && [[ "$(basename "$t")" != *$filter* ]] && continue
	list+=("unit/$(basename "$t")|$t")
done
for t in "$top"/tests/integration/*.sh; do
	[ -x "$t" ] || continue
	[ -n "$filter" ] && [[ "$(basename "$t")" != *$filter* ]] && continue
	list+=("integration/$(basename "$t" .sh)|$t")
done
# The longest groups first (each 10 s or more on 2 cores; the order of
# their last clean run): two at a time, the others then fill the gaps, so
# the run does not end waiting on one long group started last.
slow="peer_python peer_python_subprocess live_truth layers pkg_deb layout fuzz life_vfork attach
      life_hangs daemon_memcached report_join life_first metrics_prom life_sigdfl life_exec report_html
      life_jump test_fmt"
first=() rest=()
for s in $slow; do
	for e in "${list[@]}"; do
		l=${e%%|*}
		[ "${l##*/}" = "$s" ] && first+=("$e")
	done
done
for e in "${list[@]}"; do
	l=${e%%|*}; case " $(echo $slow) " in *" ${l##*/} "*) continue ;; esac
	rest+=("$e")
done
list=("${first[@]}" "${rest[@]}")

# The lines every integration script's programs wrote (tests/lib.sh keeps
# them before its temp dir goes), for the groups in tests/final/, which run
# after all the others: a fresh set whenever integration scripts run.
lines=$build/test-lines
case "${list[*]:-}" in *integration/*)
	rm -rf "$lines"; mkdir -p "$lines"; export SA_TEST_LINES=$lines ;;
esac
export SA_TEST_LINES_DIR=$lines
final=()
for t in "$top"/tests/final/*.sh; do
	[ -x "$t" ] || continue
	if [ -n "$filter" ] && [[ "$(basename "$t")" != *$filter* ]] && [ -z "${SA_TEST_LINES:-}" ]; then continue; fi
	final+=("final/$(basename "$t" .sh)|$t")
done

[ ${#list[@]} = 0 ] || printf '%s\n' "${list[@]}" | xargs -P "$jobs" -I{} bash -c 'e="{}"; run_one "${e%%|*}" "${e#*|}"'
for e in "${final[@]}"; do run_one "${e%%|*}" "${e#*|}"; done
list+=("${final[@]}")

passed=0; failed=0
for c in "$out"/*.count; do
	[ -f "$c" ] || continue
	read -r p f <"$c"
	passed=$((passed + p)); failed=$((failed + f))
done
[ ${#list[@]} = 0 ] && { echo "no tests found"; failed=1; }
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
