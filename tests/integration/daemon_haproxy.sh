#!/bin/bash
# haproxy (suite of real daemons): a frontend with
# `bind 127.0.0.1:P defer-accept` and `backlog 8`, a backend to a local
# python HTTP server, N curl requests, plain and under the shim (default
# level). Replies must be the same; haproxy's own counters (stats socket:
# frontend stot, backend connect) must equal the shim's listener accepts and
# connects; the shim reads back TCP_DEFER_ACCEPT and the backlog; every line
# parses; the summary is there after a soft stop (SIGUSR1).
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
skip_under_tsan "an uninstrumented multi-threaded daemon under the TSan runtime reports its own synchronisation as races"
need haproxy curl socat
N=20
B=$(free_port)
mkdir -p "$T/www"; echo hello >"$T/www/index.html"
( cd "$T/www" && exec $PY -m http.server --bind 127.0.0.1 $B ) >/dev/null 2>&1 &
on_exit "kill $!"
wait_port $B || { fail "backend python http.server listens"; finish; }
run() {
	local mode=$1 P=$(free_port) pre=() i
	[ "$mode" = shim ] && pre=(env SOCKAUDIT_LOG="$T/haproxy.jsonl" LD_PRELOAD="$(preload_value)")
	[ "$mode" = trace ] && pre=(env SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/trace.jsonl" LD_PRELOAD="$(preload_value)")
	cat >"$T/$mode.cfg" <<CFG
global
  maxconn 100
  nbthread 2
  stats socket $T/$mode.sock mode 600 level admin
defaults
  mode http
  timeout connect 3s
  timeout client 5s
  timeout server 5s
  http-reuse never
frontend fe
  bind 127.0.0.1:$P defer-accept
  backlog 8
  default_backend be
backend be
  server s1 127.0.0.1:$B
CFG
	"${pre[@]}" haproxy -db -f "$T/$mode.cfg" >"$T/$mode.err" 2>&1 &
	local hpid=$!
	on_exit "kill -9 $hpid"
	wait_port $P || { fail "$mode: haproxy listens" "$(tail -3 "$T/$mode.err")"; return; }
	for i in $(seq $N); do timeout 10 curl -s "http://127.0.0.1:$P/index.html"; done >"$T/$mode.replies"
	# stats: frontend fe stot (field 8), backend be connect (field "connect")
	echo "show stat" | timeout 5 socat -T 3 - "UNIX-CONNECT:$T/$mode.sock" >"$T/$mode.stat"
	kill -USR1 $hpid   # soft stop; haproxy leaves SIGTERM at its default action (killed, status 143)
	timed stop 10 tail --pid=$hpid -f /dev/null
	timed_out $stop_rc && fail "$mode: haproxy stops within 10 s of SIGUSR1 (soft stop)"
	wait $hpid; echo $? >"$T/$mode.rc"
	echo "$hpid $P" >"$T/$mode.info"
}
run plain
run shim
run trace
# stat CSV: field NAME of row (pxname, svname)
stat() { awk -F, -v px="$2" -v sv="$3" -v name="$4" 'NR==1{sub(/^# /,""); for(i=1;i<=NF;i++) c[$i]=i; next} $1==px && $2==sv {print $c[name]}' "$1"; }
want=$(for i in $(seq $N); do echo hello; done)
check "plain: every request got the page" [ "$(cat "$T/plain.replies")" = "$want" ]
check "shim: every request got the page (same replies)" [ "$(cat "$T/shim.replies")" = "$want" ]
check "same exit status on SIGUSR1 (plain $(cat "$T/plain.rc"), shim $(cat "$T/shim.rc"))" [ "$(cat "$T/plain.rc")" = "$(cat "$T/shim.rc")" ]
fe_p=$(stat "$T/plain.stat" fe FRONTEND stot) fe_s=$(stat "$T/shim.stat" fe FRONTEND stot)
be_p=$(stat "$T/plain.stat" be BACKEND connect) be_s=$(stat "$T/shim.stat" be BACKEND connect)
echo "# haproxy's own counts: frontend sessions plain $fe_p shim $fe_s; backend connects plain $be_p shim $be_s"
check "haproxy's own counts are the same plain and shim (sessions $fe_p/$fe_s, connects $be_p/$be_s)" [ "$fe_p $be_p" = "$fe_s $be_s" ]
L=$T/haproxy.jsonl
[ -s "$L" ] || { fail "the shim wrote a log" "$L missing or empty"; finish; }
json_lines "every log line parses" "$L"
read -r hpid P <"$T/shim.info"
check "haproxy wrote its summary at its soft stop (SIGUSR1)" grep -q "\"event\":\"summary\".*\"pid\":$hpid," "$L"
n=$(accepts_on "$L" $P)
check "summary accepts on :$P ($n) = haproxy's frontend sessions ($fe_s)" [ "$n" = "$fe_s" ]
# haproxy also connect()s a UDP socket to the resolver from resolv.conf at
# start (its default `resolvers`): the trace run shows each connect's peer.
c=$(jqs "$L" "[.[] | select(.event==\"summary\" and .pid==$hpid)] | last | .connects.ok")
TL=$T/trace.jsonl
read -r tpid TP <"$T/trace.info"
be_t=$(stat "$T/trace.stat" be BACKEND connect)
ct_be=$(jqs "$TL" "[.[] | select(.event==\"connect\" and .ret==0 and (.peer|endswith(\":$B\")))] | length")
ct_other=$(jqs "$TL" "[.[] | select(.event==\"connect\" and .ret==0 and (.peer|endswith(\":$B\")|not))] | length")
ct_sum=$(jqs "$TL" "[.[] | select(.event==\"summary\" and .pid==$tpid)] | last | .connects.ok")
echo "# trace: connect lines to the backend $ct_be, to others $ct_other ($(jqs "$TL" '[.[] | select(.event=="connect" and (.peer|endswith(":'$B'")|not)) | .peer] | unique | join(" ")')); summary connects.ok $ct_sum"
json_lines "trace: every log line parses" "$TL"
check "trace: connect lines to the backend ($ct_be) = haproxy's backend connects ($be_t)" [ "$ct_be" = "$be_t" ]
check "trace: summary connects.ok ($ct_sum) = connect lines ($ct_be + $ct_other)" [ "$ct_sum" = "$((ct_be + ct_other))" ]
check "default level: summary connects.ok ($c) = haproxy's backend connects ($be_s) + the other connects seen at trace ($ct_other)" [ "$c" = "$((be_s + ct_other))" ]
ta=$(jqs "$TL" "[.[] | select(.event==\"accept\" and .ret>=0 and (.local|endswith(\":$TP\")))] | length")
check "trace: accept lines on :$TP ($ta) = haproxy's frontend sessions ($(stat "$T/trace.stat" fe FRONTEND stot))" [ "$ta" = "$(stat "$T/trace.stat" fe FRONTEND stot)" ]
check_jq "defer-accept read back (TCP_DEFER_ACCEPT effective) and listen backlog 8 on :$P" <(jqs "$L" '.[]') \
	"any(.[]; .event==\"setsockopt\" and .opt==\"TCP_DEFER_ACCEPT\" and (.effective_s|type)==\"number\" and .effective_s>0) and any(.[]; .event==\"listen\" and (.local|endswith(\":$P\")) and .backlog_requested==8 and .backlog_effective==8)"
finish
