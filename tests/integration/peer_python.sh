#!/bin/bash
# A real peer's test suite under the shim: CPython's own test_socket (Debian's
# libpython3.X-testsuite) run plainly and with the shim preloaded at trace
# level must give the same verdict for every test case. Tests that differ are
# run once more both ways, to tell a flaky test from one the shim broke.
# (--ignore '*VSOCK*': the VSOCK tests hang on machines without a vsock peer.)
. "$(dirname "$0")/../lib.sh"

py=/usr/bin/python3
v=$($py -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
if [ ! -f "/usr/lib/python$v/test/test_socket.py" ]; then
	fail "CPython test_socket available" "libpython$v-testsuite not installed (scripts/ensure-deps.sh test)"
	finish
fi
verdicts() { $py "$TOP/tests/peer/junit_verdicts.py" "$1" | sort; }

# suite NAME [pattern...]: one run, junit XML to $T/NAME.xml
suite() {
	local name=$1; shift
	local m=() p
	for p in "$@"; do m+=(-m "$p"); done
	( cd "$T" && timeout -k 5 600 $py -m test test_socket --ignore '*VSOCK*' "${m[@]}" \
		--junit-xml "$T/$name.xml" >"$T/$name.log" 2>&1 )
}

s0=$SECONDS
suite plain; prc=$?
s1=$SECONDS
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/audit.jsonl" SOCKAUDIT_STATS_INTERVAL=0 \
	LD_PRELOAD="$(preload_value)" suite shim; src=$?
s2=$SECONDS
echo "# test_socket took $((s1 - s0)) s plain, $((s2 - s1)) s under the shim (trace)"
[ -s "$T/plain.xml" ] || { fail "test_socket runs plain" "exit $prc, no XML"; tail -5 "$T/plain.log" | sed 's/^/# /'; finish; }
[ -s "$T/shim.xml" ] || { fail "test_socket runs under the shim" "exit $src, no XML"; tail -20 "$T/shim.log" | sed 's/^/# /'; finish; }
verdicts "$T/plain.xml" >"$T/plain.v"; verdicts "$T/shim.xml" >"$T/shim.v"
count() { awk '{print $2}' "$1" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}'; }
echo "# plain: $(count "$T/plain.v")exit $prc"
echo "# shim:  $(count "$T/shim.v")exit $src"

diff "$T/plain.v" "$T/shim.v" | grep '^[<>]' | awk '{print $2}' | sort -u >"$T/differ"
if [ -s "$T/differ" ]; then
	echo "# differing on the first run: $(tr '\n' ' ' <"$T/differ")"
	mapfile -t pats <"$T/differ"
	suite plain2 "${pats[@]}"
	SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/audit2.jsonl" LD_PRELOAD="$(preload_value)" suite shim2 "${pats[@]}"
	verdicts "$T/plain2.xml" >"$T/plain2.v" 2>/dev/null; verdicts "$T/shim2.xml" >"$T/shim2.v" 2>/dev/null
	if [ -s "$T/plain2.v" ] && cmp -s "$T/plain2.v" "$T/shim2.v"; then
		echo "# ... and the same on the rerun (flaky tests):"; sed 's/^/#   /' "$T/plain2.v"
		ok "test_socket: same verdict for every test with and without the shim (after one rerun of $(wc -l <"$T/differ"))"
	else
		fail "test_socket: same verdict for every test with and without the shim" "differ on rerun too"
		diff "$T/plain2.v" "$T/shim2.v" | sed 's/^/# /' | head -30
		grep -B2 -A25 -E '^(FAIL|ERROR):' "$T/shim2.log" | sed 's/^/# /' | head -80
	fi
else
	ok "test_socket: same verdict for all $(wc -l <"$T/plain.v") tests with and without the shim"
fi
[ "$src" = "$prc" ] && ok "test_socket: same exit status ($prc)" || fail "test_socket: same exit status" "shim $src, plain $prc"

# The shim really was there: its log parses and saw the suite's sockets.
if jq -e . "$T/audit.jsonl" >/dev/null 2>&1; then ok "shim log of the suite is valid JSON lines ($(wc -l <"$T/audit.jsonl") lines)"
else fail "shim log of the suite is valid JSON lines" "$(jq . "$T/audit.jsonl" 2>&1 >/dev/null | head -2)"; fi
n_init=$(grep -c '"event":[ ]*"init"' "$T/audit.jsonl")
n_conn=$(grep -c '"event":[ ]*"connect"' "$T/audit.jsonl")
n_acc=$(grep -c '"event":[ ]*"accept"' "$T/audit.jsonl")
[ "$n_init" -ge 1 ] && [ "$n_conn" -ge 100 ] && [ "$n_acc" -ge 100 ] \
	&& ok "shim was active: $n_init init, $n_conn connect, $n_acc accept events" \
	|| fail "shim was active" "$n_init init, $n_conn connect, $n_acc accept events"
finish
