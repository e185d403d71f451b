#!/bin/bash
# CPython's own test_subprocess (Debian's libpython3.X-testsuite), plainly and
# with the shim preloaded: the same verdict for every test case
# (a shim fd that survived exec would be seen by test_pass_fds_redirected
# in the child and by test_close_fds_when_max_fd_is_lowered at
# RLIMIT_NOFILE-2).
# Bounded: the classes POSIXProcessTestCase (the fd-inheritance tests),
# ProcessTestCase, RunFuncTestCase, ContextManagerTests and MiscTests, about
# 25 s a run; left out: ProcessTestCaseNoPoll (ProcessTestCase again without
# poll, 11 s), Win32ProcessTestCase and CommandsWithSpaces (Windows only).
# Kept apart from peer_python.sh (test_socket) so each stays inside the
# runner's per-script timeout.
# Under the shim, the suite runs in a process that first listens once, so
# the shim has written its first line before any test: with the default
# sink (stderr, nothing of ours open) and with a path sink at trace level
# (our file open, high and close-on-exec, for the whole run).
. "$(dirname "$0")/../lib.sh"
skip_under_tsan "every subprocess the suite starts loads the TSan runtime: far past the time limit"

py=/usr/bin/python3
v=$($py -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
if [ ! -f "/usr/lib/python$v/test/test_subprocess.py" ]; then
	fail "CPython test_subprocess available" "libpython$v-testsuite not installed (scripts/ensure-deps.sh test)"
	finish
fi
verdicts() { $py "$TOP/tests/peer/junit_verdicts.py" "$1" | sort; }
classes=(POSIXProcessTestCase ProcessTestCase RunFuncTestCase ContextManagerTests MiscTests)

# suite NAME CLASS...: one run of those classes, junit XML to $T/NAME.xml;
# the first line of NAME.log lists the runner's fds after its first line.
suite() {
	local name=$1 m=() c; shift
	for c in "$@"; do m+=(-m "*.$c.*"); done
	( cd "$T" && timeout -k 5 150 $py -c '
import os, runpy, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); s.close()
print("# fds after the first line:", sorted(int(x) for x in os.listdir("/proc/self/fd")), file=sys.stderr)
sys.argv = ["python -m test"] + sys.argv[1:]
runpy.run_module("test", run_name="__main__", alter_sys=True)' \
		test_subprocess "${m[@]}" --junit-xml "$T/$name.xml" >"$T/$name.log" 2>&1 </dev/null )
}
count() { awk '{print $2}' "$1" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}'; }
# same NAME: NAME's verdicts equal the plain run's, test by test.
same() {
	local name=$1 rc=$2
	[ -s "$T/$name.xml" ] || { fail "test_subprocess runs ($name)" "exit $rc, no XML"; tail -20 "$T/$name.log" | sed 's/^/# /'; return; }
	verdicts "$T/$name.xml" >"$T/$name.v"
	echo "# $name: $(count "$T/$name.v")exit $rc; $(grep -a -m1 "^# fds" "$T/$name.log" | sed "s/^# //")"
	if cmp -s "$T/plain.v" "$T/$name.v"; then
		ok "test_subprocess $name: same verdict as plain for all $(wc -l <"$T/$name.v") tests"
	else
		fail "test_subprocess $name: same verdict as plain" "$(diff "$T/plain.v" "$T/$name.v" | grep '^[<>]' | head -5 | tr '\n' ' ')"
		grep -a -A20 -E '^(FAIL|ERROR):' "$T/$name.log" | sed 's/^/# /' | head -60
	fi
	for t in test_pass_fds_redirected test_close_fds_when_max_fd_is_lowered; do
		check "test_subprocess $name: $t passes" grep -q "\.$t pass$" "$T/$name.v"
	done
}

s0=$SECONDS
suite plain "${classes[@]}"; prc=$?
s1=$SECONDS
[ -s "$T/plain.xml" ] || { fail "test_subprocess runs plain" "exit $prc, no XML"; tail -5 "$T/plain.log" | sed 's/^/# /'; finish; }
verdicts "$T/plain.xml" >"$T/plain.v"
echo "# plain: $(count "$T/plain.v")exit $prc, $((s1 - s0)) s"

# The default sink (stderr): the case of the issue.
( unset SOCKAUDIT_LOG; LD_PRELOAD="$(preload_value)" suite shim_stderr "${classes[@]}" ); rc=$?
s2=$SECONDS
same shim_stderr $rc
echo "# shim_stderr took $((s2 - s1)) s"
check "shim_stderr: the shim was active (its init and listen lines on the runner's stderr)" \
	grep -q '"event":"listen"' "$T/shim_stderr.log"

# A path sink at trace: our own fd is open during every test.
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/audit.jsonl" SOCKAUDIT_STATS_INTERVAL=0 \
	LD_PRELOAD="$(preload_value)" suite shim_file POSIXProcessTestCase; rc=$?
echo "# shim_file (POSIXProcessTestCase only) took $((SECONDS - s2)) s"
if [ -s "$T/shim_file.xml" ]; then
	verdicts "$T/shim_file.xml" >"$T/shim_file.v"
	grep '\.POSIXProcessTestCase\.' "$T/plain.v" >"$T/plain_posix.v"
	echo "# shim_file: $(count "$T/shim_file.v")exit $rc; $(grep -a -m1 "^# fds" "$T/shim_file.log" | sed "s/^# //")"
	if cmp -s "$T/plain_posix.v" "$T/shim_file.v"; then
		ok "test_subprocess shim_file: same verdict as plain for all $(wc -l <"$T/shim_file.v") POSIXProcessTestCase tests"
	else
		fail "test_subprocess shim_file: same verdict as plain" "$(diff "$T/plain_posix.v" "$T/shim_file.v" | grep '^[<>]' | head -5 | tr '\n' ' ')"
	fi
	fa=$(grep -a -m1 "^# fds" "$T/shim_file.log"); fb=$(grep -a -m1 "^# fds" "$T/shim_stderr.log")
	check "shim_file: the runner held one more fd (the shim's log) than with the stderr sink ($fa; $fb)" \
		test "$(wc -w <<<"$fa")" = "$(($(wc -w <<<"$fb") + 1))"
	check "shim_file: its log has the runner's init, listen and summary" \
		test "$(grep -cE '"event":"(init|listen|summary)"' "$T/audit.jsonl")" -ge 3
else
	fail "test_subprocess runs (shim_file)" "exit $rc, no XML"
fi
finish
