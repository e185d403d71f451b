#!/bin/bash
# bench/socat_fork.sh: a fork-per-connection server under the shim.
#
# socat TCP-LISTEN,fork in front of a fixed backend (a plain nginx, 1 worker,
# return 200, shared by all arms; -t 0.01: a child ends as soon as the
# backend closed): a plain socat, one under the shim at the default level
# and a second plain one (the noise floor), driven at the same time, ROUNDS
# rounds of SECS seconds. Prints req/s per arm and the median ratio of the
# shim to the plain arms' mean; then, counted apart under perf stat
# (inherited), the syscalls and page faults per request of the front socat
# and all its children.
# Usage: bench/socat_fork.sh   (env: SA_LIB, SOCAT_ROUNDS (6), SOCAT_SECS (4),
#        SOCAT_COUNT_N (2000))
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
ROUNDS=${SOCAT_ROUNDS:-6}
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
# The rate: each round starts its three socats afresh (new ports, a new
# address-space layout: where ASLR puts each library moves a child's page
# faults by one or two), warms them up, then drives all three at once for
# SECS seconds, ab -c 2 each: the arms share the machine's cores and
# whatever else runs on it at the same moments, so a neighbour's load
# falls on all three alike (rounds taken one arm after another swung by
# 10-30 % between two plain socats on this shared machine; at once, 2 %).
# The shim's ratio is to the mean of the two plain arms.
SECS=${SOCAT_SECS:-4}
: >"$T/res"; : >"$T/audit.jsonl"
for r in $(seq "$ROUNDS"); do
	PP=$(port) SP=$(port) QP=$(port)
	RP=()
	socat -t 0.01 TCP-LISTEN:$PP,fork,reuseaddr,backlog=128 TCP:127.0.0.1:$BP & RP+=($!)
	env LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/audit.$r.jsonl" socat -t 0.01 TCP-LISTEN:$SP,fork,reuseaddr,backlog=128 \
		TCP:127.0.0.1:$BP & RP+=($!)
	socat -t 0.01 TCP-LISTEN:$QP,fork,reuseaddr,backlog=128 TCP:127.0.0.1:$BP & RP+=($!)
	PIDS+=("${RP[@]}")
	sleep 0.5
	for p in $PP $SP $QP; do ab -q -n 50 -c 2 "http://127.0.0.1:$p/" >/dev/null 2>&1; done
	W=()
	for p in $PP $SP $QP; do
		ab -q -t "$SECS" -n 200000 -c 2 "http://127.0.0.1:$p/" >"$T/ab.$p" 2>&1 & W+=($!)
	done
	wait "${W[@]}"
	for p in $PP $SP $QP; do
		awk '/^Failed requests/ { f = $3 } /^Complete requests/ { n = $3 } END { print (f == 0 && n > 0) ? n : "failed" }' "$T/ab.$p"
	done | tr '\n' ' ' >>"$T/res"
	echo >>"$T/res"
	kill "${RP[@]}" 2>/dev/null; wait "${RP[@]}" 2>/dev/null
	cat "$T/audit.$r.jsonl" >>"$T/audit.jsonl" 2>/dev/null
done
rate_reqs=$(awk '{ s += $1 + $2 + $3 } END { print s }' "$T/res")
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
echo "socat fork, plain vs the shim (default level) vs plain again, at the same time; ab -c 2 each, $ROUNDS rounds of $SECS s; nproc $(nproc); kernel $(uname -r)"
if grep -q failed "$T/res"; then echo "some rounds failed: $(tr '\n' ';' <"$T/res")"; fi
grep -v failed "$T/res" >"$T/ok"
med() {   # med EXPR LABEL: the median over rounds, with the range
	awk "{ print $1 }" "$T/ok" | sort -n | awk -v l="$2" '
		{ r[NR] = $1 } END { if (NR) printf "median ratio %s %.3f (rounds %.3f-%.3f)\n", l, r[int((NR + 1) / 2)], r[1], r[NR] }'
}
awk -v s="$SECS" '{ p += $1; h += $2; q += $3; n++ } END { if (n) printf "req/s plain %.0f, shim %.0f, plain again %.0f (means, each arm a third of the machine)\n", p / n / s, h / n / s, q / n / s }' "$T/ok"
med '2 * $2 / ($1 + $3)' "shim/plain (the two plain arms' mean)"
med '$3 / $1' "plain again/plain (noise floor)"
echo "counted apart, under perf stat, $CN requests each:"
echo "syscalls per request (front socat and its children, exit included): plain $(sys $CN "$T/perf.plain"), shim $(sys $CN "$T/perf.shim")"
# Every page a process writes after a fork is a copy-on-write fault (tens of
# microseconds on a virtual machine): the cost that syscall counts miss.
echo "page faults per request (same processes): plain $(pf $CN "$T/perf.plain"), shim $(pf $CN "$T/perf.shim")"
echo "lines the shim wrote: $lines for $rate_reqs requests (rate phase), $(wc -l <"$T/audit2.jsonl") for $CN (counted phase)"
[ -n "${SOCAT_DETAIL:-}" ] && for a in plain shim; do echo "== $a"; awk -F, '$3 ~ /sys_enter_/ && $1 ~ /^[0-9]+$/ && $1 > 0 { print "  " $3, $1 }' "$T/perf.$a" | sort -k2 -rn | head -25; done
exit 0
