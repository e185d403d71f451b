#!/bin/bash
# bench/report_log.sh OUT [LINES]: a real trace log for timing `sockaudit report`.
# nginx (bench/nginx_conf.sh) runs under the shim at trace level while
# wrk sends Connection: close requests on loopback, in rounds, until the log has
# at least LINES lines (default 1,000,000). Nothing synthetic: every line is one the
# shim wrote. Needs nginx and wrk (scripts/ensure-deps.sh bench).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: bench/report_log.sh OUT [LINES]}
want=${2:-1000000}
. "$here/bench/nginx_conf.sh"
d=$(mktemp -d)
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
write_nginx_conf "$d" "$port"
rm -f "$out"
SOCKAUDIT_LEVEL=trace SOCKAUDIT_STATS_INTERVAL=1 SOCKAUDIT_LOG="$out" \
	LD_PRELOAD="$here/libsockaudit.so" nginx -c "$d/nginx.conf" -e "$d/error.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$d"' EXIT
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
rounds=0
while [ "$(wc -l <"$out")" -lt "$want" ] && [ $rounds -lt 200 ]; do
	timeout 30 wrk -t1 -c16 -d3s -H 'Connection: close' "http://127.0.0.1:$port/" >/dev/null
	rounds=$((rounds + 1))
done
kill -QUIT $pid; wait $pid 2>/dev/null || true
trap 'rm -rf "$d"' EXIT
echo "$out: $(wc -l <"$out") lines, $(du -h "$out" | cut -f1) after $rounds rounds of wrk" >&2
