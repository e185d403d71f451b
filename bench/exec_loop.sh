#!/bin/bash
# bench/exec_loop.sh: what the shim costs a program that execs all the time
# (inetd-style services, CGI, shell scripts, `sockaudit -- make`), timed.
#
# A shell loop of EXEC_N (300) execs of /bin/true, plain and with the shim
# preloaded (the shell and every /bin/true load it, default level), run in
# turn, plain then shim, EXEC_ROUNDS (5) pairs: the ratio is taken pair by
# pair (a neighbour's load drifts slower than one pair), and the median
# pair is printed with the range. Ratio = plain's time / the shim's: 1.0 is
# no cost, 0.95 is 5 % slower.
# Usage: bench/exec_loop.sh   (env: SA_LIB, EXEC_N, EXEC_ROUNDS, EXEC_PROG)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
N=${EXEC_N:-300}
ROUNDS=${EXEC_ROUNDS:-5}
PROG=${EXEC_PROG:-/bin/true}
T=$(mktemp -d /tmp/sa-exec.XXXXXX)
trap 'rm -rf "$T"' EXIT
loop="i=0; while [ \$i -lt $N ]; do $PROG; i=\$((i + 1)); done"
# ns ARM: wall nanoseconds of one loop.
ns() {
	local t0 t1
	t0=$(date +%s%N)
	if [ "$1" = shim ]; then
		env LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/log" sh -c "$loop"
	else
		env -u LD_PRELOAD sh -c "$loop"
	fi
	t1=$(date +%s%N)
	echo $((t1 - t0))
}
ns plain >/dev/null; ns shim >/dev/null   # warm the page cache
: >"$T/pairs"
for _ in $(seq "$ROUNDS"); do
	p=$(ns plain) s=$(ns shim)
	echo "$p $s" >>"$T/pairs"
done
echo "exec loop: $N x $PROG in sh, plain then shim (default level), $ROUNDS pairs; nproc $(nproc)"
awk -v n="$N" '{ print $1 / $2, $1 / n / 1000, $2 / n / 1000 }' "$T/pairs" | sort -n |
	awk '{ r[NR] = $1; p[NR] = $2; s[NR] = $3 } END {
		m = int((NR + 1) / 2)
		printf "median pair: plain %.0f us/exec, shim %.0f us/exec; speed ratio plain/shim %.3f (pairs %.3f-%.3f)\n", p[m], s[m], r[m], r[1], r[NR] }'
if [ -s "$T/log" ]; then echo "note: the shim wrote $(wc -l <"$T/log") lines"; fi
exit 0
