#!/bin/bash
# bench/socat_fork.sh: a fork-per-connection server under the shim (issue 17).
#
# socat TCP-LISTEN,fork in front of a fixed backend (a plain nginx, 1 worker,
# return 200, shared by both arms), plain and under the shim at the default level, side
# by side (-t 0.01: a child ends as soon as the backend closed): ROUNDS interleaved rounds of ab -n N -c 4 against each. Prints
# req/s per arm and the median ratio shim/plain (socat alone); then, counted
# apart under perf stat (inherited), the syscalls and page faults per
# request of the front socat and all its children.
# Usage: bench/socat_fork.sh   (env: SA_LIB, SOCAT_N (1000), SOCAT_ROUNDS (5),
#        SOCAT_COUNT_N (2000))
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
# Two phases. The rate: socat with nothing around it, plain and under the
# shim, ROUNDS interleaved rounds (perf with every syscall tracepoint on
# slowed each connection several times over and weighed syscalls above
# everything else, so rates taken under it said little). Then the counts:
# the same two under perf stat (inherited), SOCAT_COUNT_N requests each.
PP=$(port) SP=$(port) QP=$(port)
socat -t 0.01 TCP-LISTEN:$PP,fork,reuseaddr,backlog=128 TCP:127.0.0.1:$BP & PIDS+=($!)
socat -t 0.01 TCP-LISTEN:$QP,fork,reuseaddr,backlog=128 TCP:127.0.0.1:$BP & PIDS+=($!)
env LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/audit.jsonl" socat -t 0.01 TCP-LISTEN:$SP,fork,reuseaddr,backlog=128 \
	TCP:127.0.0.1:$BP & PIDS+=($!)
sleep 1
for p in $PP $QP $SP; do ab -q -n 50 -c 2 "http://127.0.0.1:$p/" >/dev/null 2>&1; done
rps() { ab -q -n "$N" -c 4 "http://127.0.0.1:$1/" 2>&1 | awk '/^Failed requests/ { f = $3 } /^Requests per second/ { r = $4 } END { if (f != 0) r = "failed"; print r }'; }
: >"$T/res"
for r in $(seq "$ROUNDS"); do
	# A second plain socat is the noise floor; the order rotates.
	case $((r % 3)) in
	1) a=$(rps $PP); b=$(rps $SP); c=$(rps $QP) ;;
	2) b=$(rps $SP); c=$(rps $QP); a=$(rps $PP) ;;
	0) c=$(rps $QP); a=$(rps $PP); b=$(rps $SP) ;;
	esac
	echo "$a $b $c" >>"$T/res"
done
rate_reqs=$(( ROUNDS * N + 50 ))
lines=$(wc -l <"$T/audit.jsonl")
for p in "${PIDS[@]:1}"; do kill "$p" 2>/dev/null; done
PIDS=("${PIDS[0]}")
CN=${SOCAT_COUNT_N:-2000}
PP=$(port) SP=$(port)
perf stat -x, -e 'syscalls:sys_enter_*' -e page-faults -o "$T/perf.plain" -- \
	socat -t 0.01 TCP-LISTEN:$PP,fork,reuseaddr,backlog=128 TCP:127.0.0.1:$BP & PIDS+=($!)
perf stat -x, -e 'syscalls:sys_enter_*' -e page-faults -o "$T/perf.shim" -- \
	env LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/audit2.jsonl" socat -t 0.01 TCP-LISTEN:$SP,fork,reuseaddr,backlog=128 \
	TCP:127.0.0.1:$BP & PIDS+=($!)
sleep 1
ab -q -n "$CN" -c 4 "http://127.0.0.1:$PP/" >/dev/null 2>&1; ab -q -n "$CN" -c 4 "http://127.0.0.1:$SP/" >/dev/null 2>&1
# perf prints its counts when its socat ends; with the shim that took more
# than 10 s once, so up to 60 s.
for p in "${PIDS[@]:1}"; do c=$(pgrep -P "$p" -x socat); [ -n "$c" ] && kill -INT $c; done
for _ in $(seq 600); do
	alive=0
	for p in "${PIDS[@]:1}"; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ $alive = 0 ] && break
	sleep 0.1
done
sys() { awk -F, -v n="$1" '$3 ~ /sys_enter_/ && $1 ~ /^[0-9]+$/ { s += $1; c++ } END { if (c) printf "%.1f", s / n; else printf "(no count: perf printed nothing)" }' "$2"; }
pf() { awk -F, -v n="$1" '$3 == "page-faults" && $1 ~ /^[0-9]+$/ { printf "%.1f", $1 / n }' "$2"; }
echo "socat fork, plain vs the shim (default level), side by side; ab -n $N -c 4, $ROUNDS rounds; nproc $(nproc); kernel $(uname -r)"
med() {   # med COLUMN LABEL: the median over rounds of column / plain, with the range
	awk -v c="$1" '{ print $c / $1 }' "$T/res" | sort -n | awk -v n="$ROUNDS" -v l="$2" '
		{ r[NR] = $1 } END { printf "median ratio %s/plain %.3f (rounds %.3f-%.3f)\n", l, r[int((n + 1) / 2)], r[1], r[n] }'
}
awk -v n="$ROUNDS" '{ p += $1; s += $2; q += $3 } END { printf "req/s plain %.0f, shim %.0f, plain again %.0f (means)\n", p / n, s / n, q / n }' "$T/res"
med 2 shim
med 3 "plain again (noise floor)"
echo "counted apart, under perf stat, $CN requests each:"
echo "syscalls per request (front socat and its children, exit included): plain $(sys $CN "$T/perf.plain"), shim $(sys $CN "$T/perf.shim")"
# Every page a process writes after a fork is a copy-on-write fault (tens of
# microseconds on a virtual machine): the cost that syscall counts miss.
echo "page faults per request (same processes): plain $(pf $CN "$T/perf.plain"), shim $(pf $CN "$T/perf.shim")"
echo "lines the shim wrote: $lines for $rate_reqs requests (rate phase), $(wc -l <"$T/audit2.jsonl") for $CN (counted phase)"
[ -n "${SOCAT_DETAIL:-}" ] && for a in plain shim; do echo "== $a"; awk -F, '$3 ~ /sys_enter_/ && $1 ~ /^[0-9]+$/ && $1 > 0 { print "  " $3, $1 }' "$T/perf.$a" | sort -k2 -rn | head -25; done
exit 0
