#!/bin/bash
# bench/follow_cost.sh [RATE] [SECONDS]: the CPU `sockaudit metrics --follow`
# uses on a trace log growing at RATE lines per second (default 100,000) for
# SECONDS (default 20). The lines are a real nginx trace log
# (bench/report_log.sh, kept as build/bench/report-1m.jsonl), appended to a
# fresh file in slices every 10 ms by a small writer; the follower rewrites
# its textfile every 15 s (the default interval; INTERVAL=S to change it) and
# reads every interval. The follower's CPU is counted from the writer's
# first line until the follower has read the last one (its textfile counts
# every line), and divided by the writer's time: the share of a core that
# following such a log costs.
# Prints the follower's user + system CPU over the run as a share of one
# core, from /proc/PID/stat.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
rate=${1:-100000}
secs=${2:-20}
src=$here/build/bench/report-1m.jsonl
[ -s "$src" ] && [ "$(wc -l <"$src")" -ge 100000 ] || "$here/bench/report_log.sh" "$src" 1000000
d=$(mktemp -d)
trap 'kill $wpid $fpid 2>/dev/null; wait 2>/dev/null; rm -rf "$d"' EXIT
: >"$d/grow.jsonl"
/usr/bin/python3 - "$src" "$d/grow.jsonl" "$rate" "$secs" <<'PY' &
import sys, time, os
src, dst, rate, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
lines = open(src, 'rb').read().splitlines(keepends=True)
per = max(1, rate // 100)                 # one slice every 10 ms
fd = os.open(dst, os.O_WRONLY | os.O_APPEND)
open(dst + ".started", "w").close()       # the measure starts here, not while loading
i, n, t0 = 0, 0, time.monotonic()
while time.monotonic() - t0 < secs:
    chunk = lines[i:i + per]
    if len(chunk) < per:
        i = 0
        chunk = lines[:per]
    os.write(fd, b''.join(chunk))
    i += per
    n += per
    nxt = t0 + n / rate
    d = nxt - time.monotonic()
    if d > 0:
        time.sleep(d)
print(f"writer: {n} lines in {time.monotonic() - t0:.2f} s ({n / (time.monotonic() - t0):.0f} lines/s)", file=sys.stderr)
PY
wpid=$!
"$here/sockaudit" metrics --follow --interval "${INTERVAL:-15}" --textfile "$d/out.prom" "$d/grow.jsonl" &
fpid=$!
tick=$(getconf CLK_TCK)
while [ ! -e "$d/grow.jsonl.started" ]; do sleep 0.05; done
read -r u0 s0 < <(awk '{ print $14, $15 }' /proc/$fpid/stat)
t0=$(date +%s.%N)
wait $wpid
t1=$(date +%s.%N)
# Until the follower has read every line (its next pass, at most one
# interval later): that CPU belongs to these lines too.
lines=$(wc -l <"$d/grow.jsonl")
read_lines() { awk '/^sockaudit_log_lines_total/ { s += $NF } /^sockaudit_unreadable_lines_total/ { s += $NF } END { print s + 0 }' "$d/out.prom" 2>/dev/null; }
for _ in $(seq $(( (${INTERVAL:-15} + 10) * 10 ))); do
	[ "$(read_lines)" = "$lines" ] && break
	sleep 0.1
done
read -r u1 s1 < <(awk '{ print $14, $15 }' /proc/$fpid/stat)
awk -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v tk="$tick" -v a="$t0" -v b="$t1" -v r="$rate" -v l="$lines" -v rl="$(read_lines)" -v iv="${INTERVAL:-15}" 'BEGIN {
	w = b - a; c = (u + s) / tk
	printf "follow (--interval %s): %.2f s CPU (user %.2f, sys %.2f) for %d lines written in %.1f s at %d lines/s = %.2f%% of one core; %d lines read\n", iv, c, u / tk, s / tk, l, w, r, 100 * c / w, rl
}'
