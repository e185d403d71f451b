#!/bin/bash
# bench/profile.sh: where the nginx worker's time goes under the shim.
#
# Starts one nginx (1 worker, return 200, temp prefix) under the shim at the
# given level, drives it with wrk, and samples the worker with
# `perf record -e cpu-clock` (a software clock: works in VMs without a PMU).
# Prints the share of samples per shared object and the top symbols, and
# the share inside libsockaudit.so, libjansson and their callees.
#
# Usage: bench/profile.sh [default|trace|plain] [close|keepalive] [SECS]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
NGINX=${NGINX:-/usr/sbin/nginx}
ARM=${1:-trace}
MODE=${2:-close}
SECS=${3:-5}
command -v perf >/dev/null || { echo "profile.sh: perf is not installed (linux-perf)" >&2; exit 2; }
T=$(mktemp -d /tmp/sa-prof.XXXXXX)
chmod 755 "$T"
MASTER=
cleanup() {
	[ -n "$MASTER" ] && kill -QUIT "$MASTER" 2>/dev/null && sleep 0.3 && kill -KILL "$MASTER" 2>/dev/null
	wait 2>/dev/null
	[ -n "${PROFILE_KEEP:-}" ] && [ -e "$T/perf.data" ] && cp "$T/perf.data" "$PROFILE_KEEP"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$((12000 + RANDOM % 20000))
. "$(dirname "$0")/nginx_conf.sh"
write_nginx_conf "$T" "$port"
env=()
case $ARM in
plain) ;;
default) env=(LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/audit.jsonl") ;;
trace) env=(LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/audit.jsonl" SOCKAUDIT_LEVEL=trace) ;;
*) echo "usage: profile.sh [default|trace|plain] [close|keepalive] [SECS]" >&2; exit 2 ;;
esac
env "${env[@]}" "$NGINX" -p "$T" -c "$T/nginx.conf" -e "$T/error.log" >"$T/stdout" 2>&1 &
MASTER=$!
for i in $(seq 100); do
	WORKER=$(pgrep -P "$MASTER" | head -1)
	[ -n "$WORKER" ] && ss -Hltn "sport = :$port" | grep -q . && break
	sleep 0.05
done
[ -n "${WORKER:-}" ] || { echo "profile.sh: nginx did not start" >&2; cat "$T/error.log" >&2; exit 2; }
hdr=()
[ "$MODE" = close ] && hdr=(-H "Connection: close")
wrk -t1 -c32 -d1s "${hdr[@]}" "http://127.0.0.1:$port/" >/dev/null 2>&1   # warm-up
wrk -t1 -c32 -d"$((SECS + 1))s" "${hdr[@]}" "http://127.0.0.1:$port/" >"$T/wrk.out" 2>&1 &
sleep 0.5
perf record -q -e cpu-clock -F 1999 --call-graph dwarf,16384 -p "$WORKER" -o "$T/perf.data" -- sleep "$SECS" >/dev/null 2>&1
wait %2 2>/dev/null
echo "== nginx worker, arm $ARM, $MODE: $(awk '/^Requests\/sec/ { print $2 " req/s" }' "$T/wrk.out") during sampling"
echo "== samples by shared object (self):"
perf report -i "$T/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -8
# Each sample's whole stack, classified by the first rule that matches.
echo "== where the worker's time goes (share of all samples, by call stack):"
perf script -i "$T/perf.data" -F ip,sym,dso 2>/dev/null | awk '
BEGIN { RS = ""; FS = "\n" }
{
	n++; s = $0; c = "not the shim: nginx, libc, kernel (real calls made through the wrappers included)"
	if (s ~ /sa_sink_write/ && s ~ /statx|fstat/) c = "shim: statx(2) of the log fd before each line (still_ours)"
	else if (s ~ /sa_sink_write/) c = "shim: write(2) of a log line (kernel included)"
	else if (s ~ /sa_line_|sa_out_/) c = "shim: writing a line into its buffer (line.c)"
	else if (s ~ /sa_event_format|json_dump/) c = "shim: formatting an object line (event.c)"
	else if (s ~ /sa_event_new|sa_event_emit|sa_event_write|json_object|json_real|json_integer|json_string|sa_json_|json_delete/) c = "shim: building/freeing an event object (jansson, malloc)"
	else if (s ~ /sa_tcpinfo_read/) c = "shim: TCP_INFO reads (accepted socket, listener)"
	else if (s ~ /sa_now_ns|sa_now_wall/) c = "shim: clock_gettime for wait times"
	else if (s ~ /getpeername/ && s ~ /libsockaudit/) c = "shim: getpeername of an accepted socket"
	else if (s ~ /getsockname/ && s ~ /libsockaudit/) c = "shim: getsockname of a socket"
	else if (s ~ /[ \t](sa_[a-z_0-9]+|lazy_track|slot|fill_kind) \(/) c = "shim: hooks, fd table, audit logic, read-back syscalls"
	else if ($1 ~ /libsockaudit/) c = "shim: the wrapper functions themselves"
	cnt[c]++
}
END { for (c in cnt) printf "  %6.2f%%  %s\n", 100 * cnt[c] / n, c | "sort -rn"; close("sort -rn"); printf "  (%d samples)\n", n }'
echo "== top symbols (self):"
perf report -i "$T/perf.data" --no-children --sort dso,sym --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -25
