#!/bin/bash
# A real server under the shim: nginx with two workers, one listener
# with `deferred` (TCP_DEFER_ACCEPT=1), one without. Each worker writes its own
# listener_stats for the listeners it inherited from the master; HTTP clients
# speak first; no finding on either port.
. "$(dirname "$0")/../lib.sh"
command -v nginx >/dev/null || { fail "nginx not installed (scripts/ensure-deps.sh test)"; finish; }
P1=$(free_port) P2=$(free_port)
cat >"$T/nginx.conf" <<CONF
daemon off;
user root;
worker_processes 2;
error_log $T/error.log;
pid $T/nginx.pid;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $T; proxy_temp_path $T; fastcgi_temp_path $T; uwsgi_temp_path $T; scgi_temp_path $T;
  server { listen 127.0.0.1:$P1 deferred; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:$P2; location / { return 200 "ok\n"; } }
}
CONF
SOCKAUDIT_STATS_INTERVAL=1 SOCKAUDIT_LOG="$T/a.jsonl" LD_PRELOAD="$(preload_value)" nginx -c "$T/nginx.conf" -e "$T/error.log" &
NPID=$!
on_exit "kill -9 $NPID"
wait_port $P1 && wait_port $P2 || { fail "nginx did not start"; finish; }
for i in $(seq 15); do curl -s "http://127.0.0.1:$P1/" >/dev/null; curl -s "http://127.0.0.1:$P2/" >/dev/null; done
kill -QUIT $NPID; wait $NPID

L=$T/a.jsonl
S='[.[] | select(.event=="listener_stats")] | group_by(.pid, .local) | map(last)'
check_jq "nginx: listen deferred read back as 1 s" "$L" \
  "any(.[]; .event==\"setsockopt\" and .opt==\"TCP_DEFER_ACCEPT\" and .effective_s==1)"
check_jq "nginx: workers' listener_stats add up to every request on each port" "$L" \
  "$S | (map(select(.local|endswith(\":$P1\"))) | map(.accepts) | add)==15 and (map(select(.local|endswith(\":$P2\"))) | map(.accepts) | add)==15"
check_jq "nginx: only workers accept (the master writes no listener_stats)" "$L" \
  "([.[] | select(.event==\"listener_stats\" and .pid==$NPID)] | length)==0 and any(.[]; .event==\"summary\" and .pid==$NPID and .listeners==[]) and ($S | map(.pid) | unique | length)>=1"
check_jq "nginx: the deferred port always had the request at accept; the client speaks first" "$L" \
  "$S | map(select(.local|endswith(\":$P1\"))) | all(.[]; .with_data_pct==100 and .first_speaker.client==.accepts and .defer_accept_s==1 and .empty_accepts==0)"
check_jq "nginx: the plain port: client first, with_data_pct reported" "$L" \
  "$S | map(select(.local|endswith(\":$P2\"))) | all(.[]; (.with_data_pct|type)==\"number\" and .first_speaker.client==.accepts and .first_speaker.server==0)"
check_jq "nginx: no finding at all" "$L" 'all(.[]; .findings==null or (.findings|type)=="object")'
finish
