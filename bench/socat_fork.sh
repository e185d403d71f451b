#!/bin/bash
# bench/socat_fork.sh: a fork-per-connection server under the shim (issue 17).
#
# socat TCP-LISTEN,fork in front of a fixed backend (a plain nginx, 1 worker,
# return 200, shared by both arms), plain and under the shim at the default level, side
# by side (-t 0.01: a child ends as soon as the backend closed): ROUNDS interleaved rounds of ab -n N -c 4 against each. Prints
# req/s per arm, the median ratio shim/plain, and the syscalls per request
# and page faults of the front socat and all its children (perf stat,
# inherited).
# Usage: bench/socat_fork.sh   (env: SA_LIB, SOCAT_N (1000), SOCAT_ROUNDS (5))
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
N=${SOCAT_N:-1000}
ROUNDS=${SOCAT_ROUNDS:-5}
for b in socat ab perf; do
	command -v $b >/dev/null || { echo "socat_fork.sh: $b is not installed" >&2; exit 2; }
done
T=$(mktemp -d /tmp/sa-socat.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT
port() { echo $((12000 + RANDOM % 20000)); }
. "$(dirname "$0")/nginx_conf.sh"
BP=$(port)
chmod 755 "$T"; mkdir -p "$T/nginx"; chmod 777 "$T/nginx"
write_nginx_conf "$T/nginx" "$BP"
/usr/sbin/nginx -p "$T/nginx" -c "$T/nginx/nginx.conf" -e "$T/nginx/error.log" >/dev/null 2>&1 & PIDS+=($!)
PP=$(port) SP=$(port)
perf stat -x, -e 'syscalls:sys_enter_*' -e page-faults -o "$T/perf.plain" -- \
	socat -t 0.01 TCP-LISTEN:$PP,fork,reuseaddr,backlog=128 TCP:127.0.0.1:$BP & PIDS+=($!)
perf stat -x, -e 'syscalls:sys_enter_*' -e page-faults -o "$T/perf.shim" -- \
	env LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/audit.jsonl" socat -t 0.01 TCP-LISTEN:$SP,fork,reuseaddr,backlog=128 TCP:127.0.0.1:$BP & PIDS+=($!)
sleep 1
ab -q -n 50 -c 2 "http://127.0.0.1:$PP/" >/dev/null 2>&1; ab -q -n 50 -c 2 "http://127.0.0.1:$SP/" >/dev/null 2>&1
rps() { ab -q -n "$N" -c 4 "http://127.0.0.1:$1/" 2>&1 | awk '/^Failed requests/ { f = $3 } /^Requests per second/ { r = $4 } END { if (f != 0) r = "failed"; print r }'; }
: >"$T/res"
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then a=$(rps $PP); b=$(rps $SP); else b=$(rps $SP); a=$(rps $PP); fi
	echo "$a $b" >>"$T/res"
done
# perf prints its counts when its socat ends; with the shim and 7 rounds it
# took more than the 10 s waited before (nothing printed), so up to 60 s.
for p in "${PIDS[@]:1}"; do c=$(pgrep -P "$p" -x socat); [ -n "$c" ] && kill -INT $c; done
for _ in $(seq 600); do
	alive=0
	for p in "${PIDS[@]:1}"; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ $alive = 0 ] && break
	sleep 0.1
done
sys() { awk -F, -v n="$1" '$3 ~ /sys_enter_/ && $1 ~ /^[0-9]+$/ { s += $1; c++ } END { if (c) printf "%.1f", s / n; else printf "(no count: perf printed nothing)" }' "$2"; }
pf() { awk -F, -v n="$1" '$3 == "page-faults" && $1 ~ /^[0-9]+$/ { printf "%.1f", $1 / n }' "$2"; }
reqs=$(( ROUNDS * N + 50 ))
echo "socat fork, plain vs the shim (default level), side by side; ab -n $N -c 4, $ROUNDS rounds; nproc $(nproc); kernel $(uname -r)"
awk '{ print NR, $1, $2, $2 / $1 }' "$T/res" | sort -k4 -n | awk -v n="$ROUNDS" '
	{ r[NR] = $4; p += $2; s += $3 } END { printf "req/s plain %.0f, shim %.0f (means); median ratio shim/plain %.3f\n", p / n, s / n, r[int((n + 1) / 2)] }'
echo "syscalls per request (front socat and its children, warm-up and exit included): plain $(sys $reqs "$T/perf.plain"), shim $(sys $reqs "$T/perf.shim")"
# Every page a process writes after a fork is a copy-on-write fault (tens of
# microseconds on a virtual machine): the cost that syscall counts miss.
echo "page faults per request (same processes): plain $(pf $reqs "$T/perf.plain"), shim $(pf $reqs "$T/perf.shim")"
echo "lines the shim wrote: $(wc -l <"$T/audit.jsonl") for $reqs requests"
[ -n "${SOCAT_DETAIL:-}" ] && for a in plain shim; do echo "== $a"; awk -F, '$3 ~ /sys_enter_/ && $1 ~ /^[0-9]+$/ && $1 > 0 { print "  " $3, $1 }' "$T/perf.$a" | sort -k2 -rn | head -25; done
exit 0
