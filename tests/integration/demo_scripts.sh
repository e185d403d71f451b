#!/bin/bash
# The demo's scripts parse, reject a bad scenario number, and scenario 1 (the
# fastest, under a second) passes and cleans up after itself. The full demo
# is `make demo`; this only keeps it from rotting silently.
. "$(dirname "$0")/../lib.sh"
for f in "$TOP"/demo/*.sh; do
	check "bash -n $(basename "$f")" bash -n "$f"
done
"$TOP/demo/run.sh" 9 >"$T/bad.out" 2>&1
check "run.sh 9 is a usage error (status 2)" test $? = 2
make -C "$TOP" --no-print-directory -s demo-build >"$T/build.out" 2>&1
check "make demo-build" test $? = 0
# A TMPDIR of our own, so a demo running elsewhere cannot disturb the count.
mkdir -p "$T/tmp"
NO_COLOR=1 DEMO_NO_BUILD=1 TMPDIR=$T/tmp "$TOP/demo/run.sh" 1 >"$T/s1.out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q '^PASS  1 defer table' "$T/s1.out"; then ok "scenario 1 passes"
else fail "scenario 1 passes" "status $rc"; sed 's/^/# /' "$T/s1.out" | tail -20; fi
check "scenario 1 output has no colour codes when piped" bash -c "! grep -q $'\e' '$T/s1.out'"
check "scenario 1 left no temporary file or directory" test -z "$(ls -A "$T/tmp")"
# Scenario 7: shim connect lines vs the client's own times by
# local port, summary syn_retrans_total vs nstat TCPSynRetrans in a fresh
# namespace, SO_LINGER read-back. Needs root for the namespace.
if [ "$(id -u)" = 0 ]; then
	NO_COLOR=1 DEMO_NO_BUILD=1 TMPDIR=$T/tmp timeout 60 "$TOP/demo/run.sh" 7 >"$T/s7.out" 2>&1
	rc=$?
	if [ $rc = 0 ] && grep -q 'summary syn_retrans_total ([1-9][0-9]*) equals nstat TcpExtTCPSynRetrans' "$T/s7.out"; then
		ok "scenario 7: connect lines match the client by port, syn_retrans_total equals nstat"
	else fail "scenario 7: connect lines match the client by port, syn_retrans_total equals nstat" "status $rc"
		sed 's/^/# /' "$T/s7.out" | grep -E 'MISS|FAIL|port ' | head -20; fi
	check "scenario 7 left no temporary file or directory" test -z "$(ls -A "$T/tmp")"
else
	ok "scenario 7 # SKIP needs root for a network namespace"
fi
finish
