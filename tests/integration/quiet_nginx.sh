#!/bin/bash
# Issue 17: a default worth leaving on. nginx (1 worker, 4 requests per
# keep-alive connection, so it sets TCP_NODELAY on every connection) at info:
# after a warm-up the shim writes (almost) nothing per request, and the
# counts it keeps instead (summary and listener_stats "setsockopt") equal
# the setsockopt calls strace saw the worker make.
. "$(dirname "$0")/../lib.sh"
for b in nginx ab strace; do
	command -v $b >/dev/null || { fail "$b not installed (scripts/ensure-deps.sh test bench)"; finish; }
done
P=$(free_port)
cat >"$T/nginx.conf" <<CONF
daemon off;
user root;
worker_processes 1;
error_log $T/error.log;
pid $T/nginx.pid;
events { worker_connections 256; }
http {
  access_log off;
  keepalive_requests 4;
  client_body_temp_path $T; proxy_temp_path $T; fastcgi_temp_path $T; uwsgi_temp_path $T; scgi_temp_path $T;
  server { listen 127.0.0.1:$P; location / { return 200 "ok\n"; } }
}
CONF
SOCKAUDIT_LOG="$T/a.jsonl" LD_PRELOAD="$(preload_value)" \
	strace -f -qq -e trace=setsockopt -o "$T/strace.out" nginx -c "$T/nginx.conf" -e "$T/error.log" &
SPID=$!
on_exit "kill -9 $SPID 2>/dev/null; [ -s $T/nginx.pid ] && kill -9 \$(cat $T/nginx.pid) 2>/dev/null"
wait_port $P || { fail "nginx did not start"; finish; }
NPID=$(cat "$T/nginx.pid")
timeout 60 ab -q -k -n 400 -c 8 "http://127.0.0.1:$P/" >"$T/warm.out" 2>&1
before=$(wc -l <"$T/a.jsonl")
N=4000
timeout 120 ab -q -k -n $N -c 8 "http://127.0.0.1:$P/" >"$T/ab.out" 2>&1
after=$(wc -l <"$T/a.jsonl")
check "ab: $N requests, none failed" grep -q "^Failed requests: *0" "$T/ab.out"
lines=$((after - before))
check "info, keep-alive x4: $lines lines for $N requests after warm-up (<= $((N / 1000)))" test "$lines" -le $((N / 1000))
kill -QUIT "$NPID"; wait $SPID 2>/dev/null
W=$(jq -r 'select(.event=="listener_stats") | .pid' "$T/a.jsonl" | head -1)
check "the worker wrote listener_stats" test -n "$W"
# strace pads the pid to 5 columns: "2546  setsockopt(" on a fresh machine's low pids.
seen=$(grep -cE "^$W +setsockopt\(.*TCP_NODELAY, \[1\]" "$T/strace.out")
check "strace saw the worker set TCP_NODELAY ($seen times)" test "$seen" -ge 400
check_jq "summary: setsockopt.TCP_NODELAY.calls == $seen (strace), logged once" "$T/a.jsonl" \
  "any(.[]; .event==\"summary\" and .pid==$W and .setsockopt.TCP_NODELAY.calls==$seen and .setsockopt.TCP_NODELAY.logged==1)"
check_jq "listener_stats: the listener's setsockopt.TCP_NODELAY.calls == $seen" "$T/a.jsonl" \
  "[.[] | select(.event==\"listener_stats\" and .pid==$W)] | last | .setsockopt.TCP_NODELAY.calls==$seen"
check_jq "worker: one TCP_NODELAY line in all" "$T/a.jsonl" \
  "[.[] | select(.event==\"setsockopt\" and .pid==$W and .opt==\"TCP_NODELAY\")] | length == 1"
check_jq "summary: read_back + not_read_back == calls" "$T/a.jsonl" \
  "any(.[]; .event==\"summary\" and .pid==$W and (.setsockopt.TCP_NODELAY | .read_back + .not_read_back == .calls and .read_back < .calls))"
finish
