#!/bin/bash
# haproxy's seamless reload (-x): the new process gets the old one's
# listeners over SCM_RIGHTS from the stats socket (expose-fd listeners),
# the AF_UNIX stats listener among them, and never calls listen() on them.
# Under the shim (default level) the new process's listener_stats says the
# stats listener's real backlog, what ss -xl shows as Send-Q (read with
# unix_diag), never -1; the TCP frontend's says its TCP_INFO backlog.
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
skip_under_tsan "an uninstrumented multi-threaded daemon under the TSan runtime reports its own synchronisation as races"
need haproxy curl socat
P=$(free_port)
cat >"$T/h.cfg" <<CFG
global
  maxconn 100
  stats socket $T/h.sock mode 600 level admin expose-fd listeners
defaults
  mode http
  timeout connect 3s
  timeout client 5s
  timeout server 5s
frontend fe
  bind 127.0.0.1:$P
  http-request return status 200
CFG
haproxy -db -f "$T/h.cfg" >"$T/a.err" 2>&1 & A=$!
on_exit "kill -9 $A"
wait_port $P || { fail "the first haproxy listens" "$(tail -3 "$T/a.err")"; finish; }
for i in $(seq 50); do [ -S "$T/h.sock" ] && break; sleep 0.05; done
# The stats listener as the kernel has it: its bound name and backlog (Send-Q).
read -r sname sback < <(ss -Hxl | awk -v d="$T/" 'index($5, d) == 1 {print $5, $4; exit}')
env SOCKAUDIT_LOG="$T/b.jsonl" LD_PRELOAD="$(preload_value)" haproxy -db -f "$T/h.cfg" -x "$T/h.sock" -sf $A >"$T/b.err" 2>&1 & B=$!
on_exit "kill -9 $B"
for i in $(seq 100); do kill -0 $A 2>/dev/null || break; sleep 0.05; done   # the old one hands over and leaves
echo "show info" | timeout 5 socat -T 3 - "UNIX-CONNECT:$T/h.sock" >"$T/info.out"
timeout 10 curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/" >"$T/curl.out"
kill -USR1 $B
timed stop 10 tail --pid=$B -f /dev/null
check "the new haproxy answers on the stats socket and the frontend ($(head -1 "$T/info.out"), $(cat "$T/curl.out"))" \
	grep -q "^Name: HAProxy" "$T/info.out"
got=$(jq -s -c '[.[] | select(.event=="listener_stats") | {local, backlog, accepts}]' "$T/b.jsonl" 2>/dev/null)
check_jq "the passed AF_UNIX stats listener ($sname): backlog $sback as ss -xl says, not -1 (got $got)" "$T/b.jsonl" \
	"[.[] | select(.event==\"listener_stats\" and .local==\"$sname\")] | length >= 1 and all(.backlog == ${sback:--2})"
check_jq "the passed TCP frontend: a backlog read back (got $got)" "$T/b.jsonl" \
	"[.[] | select(.event==\"listener_stats\" and .local==\"127.0.0.1:$P\")] | length >= 1 and all(.backlog | type == \"number\" and . > 0)"
finish
