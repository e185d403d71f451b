#!/bin/bash
# Connect side: SYNs dropped at a full accept queue and
# retransmitted, blocking and non-blocking; refused, fast, abandoned,
# deferred, UDP and AF_UNIX connects.
. "$(dirname "$0")/../lib.sh"
P=$PROGS/connect_probe
PY=/usr/bin/python3

# Five listeners whose queue is full, each drained after 1.5 s; abandon's
# must stay full until its client closes, 1.2 s after the client started
# (slack: on a slow machine the client takes longer to get to its connect).
cases="block nb nbslow abandon abandon300"
for c in $cases; do
	d=1500; [ $c = abandon ] && d=$((1200 + $(slack 300)))
	"$PROGS/fullq_server" "$T/port.$c" $d 1500 &
done
for i in $(seq 100); do
	n=0; for c in $cases; do [ -f "$T/port.$c" ] && n=$((n + 1)); done
	[ $n = 5 ] && break; sleep 0.02
done
port() { cat "$T/port.$1"; }
pids=()
SOCKAUDIT_LOG="$T/block" preload "$P" block 127.0.0.1:$(port block) >"$T/block.out" & pids+=($!)
SOCKAUDIT_LOG="$T/nb" preload "$P" nb 127.0.0.1:$(port nb) >"$T/nb.out" & pids+=($!)
SOCKAUDIT_LOG="$T/nbslow" SOCKAUDIT_SLOW_CONNECT_MS=5000 preload "$P" nb 127.0.0.1:$(port nbslow) >/dev/null & pids+=($!)
SOCKAUDIT_LOG="$T/abandon" preload "$P" abandon 127.0.0.1:$(port abandon) 1200 >/dev/null & pids+=($!)
SOCKAUDIT_LOG="$T/abandon300" SOCKAUDIT_LEVEL=trace preload "$P" abandon 127.0.0.1:$(port abandon300) 300 >/dev/null & pids+=($!)

# Meanwhile: refused, fast, deferred, UDP, AF_UNIX, poll-then-close.
RP=$(free_port)
SOCKAUDIT_LOG="$T/refused" preload "$P" block 127.0.0.1:$RP >/dev/null
SOCKAUDIT_LOG="$T/refused" preload "$P" nb 127.0.0.1:$RP >/dev/null
$PY -c '
import socket, sys, time
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(64)
u = socket.socket(socket.AF_UNIX); u.bind(sys.argv[1]); u.listen(64)
open(sys.argv[2] + ".tmp", "w").write(str(t.getsockname()[1])); import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])
time.sleep(8)' "$T/u.sock" "$T/port.fast" &
for i in $(seq 100); do [ -f "$T/port.fast" ] && break; sleep 0.02; done
FP=$(cat "$T/port.fast")
SOCKAUDIT_LOG="$T/fast_info" preload "$P" fast 127.0.0.1:$FP 3 >/dev/null
SOCKAUDIT_LOG="$T/fast_trace" SOCKAUDIT_LEVEL=trace preload "$P" fast 127.0.0.1:$FP 3 >/dev/null
SOCKAUDIT_LOG="$T/fast_trace" SOCKAUDIT_LEVEL=trace preload "$P" nb 127.0.0.1:$FP >/dev/null
SOCKAUDIT_LOG="$T/fast_trace" SOCKAUDIT_LEVEL=trace preload "$P" nbio 127.0.0.1:$FP >/dev/null
SOCKAUDIT_LOG="$T/pollclose" SOCKAUDIT_LEVEL=trace preload "$P" abandon 127.0.0.1:$FP 200 >/dev/null
SOCKAUDIT_LOG="$T/defer" preload "$P" defer 127.0.0.1:$FP >/dev/null
# The connect wrapper trusts what it saw set on a socket made under it (no
# read-back per connect); set through another number or a raw syscall, it
# must still be seen.
SOCKAUDIT_LOG="$T/deferdup" preload "$P" deferdup 127.0.0.1:$FP >/dev/null
SOCKAUDIT_LOG="$T/deferraw" preload "$P" deferraw 127.0.0.1:$FP >/dev/null
SOCKAUDIT_LOG="$T/other" SOCKAUDIT_LEVEL=trace preload "$P" block udp:127.0.0.1:$FP >/dev/null
SOCKAUDIT_LOG="$T/other" SOCKAUDIT_LEVEL=trace preload "$P" block unix:"$T/u.sock" >/dev/null
wait "${pids[@]}"

C='[.[] | select(.event=="connect")]'
S='[.[] | select(.event=="summary")][0]'
check_jq "blocking connect to a full queue: ~1-2.5 s, SYNs retransmitted" "$T/block" \
  "$C | length==1 and (.[0] | .outcome==\"ok\" and .nonblocking==false and .connect_ms>=900 and .connect_ms<=2600 and .syn_retrans>=1 and (.findings|index(\"syn_retransmitted\")) and (.findings|index(\"slow_connect\")) and (.msg|test(\"[0-9.]+ s of it in SYN timeouts: check the server's backlog\")))"
check_jq "non-blocking connect: completion at getsockopt(SO_ERROR), not at the early 0" "$T/nb" \
  "$C | length==1 and (.[0] | .outcome==\"ok\" and .nonblocking==true and .completed_by==\"getsockopt\" and .connect_ms>=900 and .connect_ms<=2600 and .syn_retrans>=1 and (.findings|index(\"syn_retransmitted\")))"
check_jq "summary: histogram bucket, SYN retransmission total, outcome counts" "$T/nb" \
  "$S | .connects.ok==1 and .syn_retrans_total>=1 and .connect_ms.n==1 and .connect_ms.max>=900 and ((.connect_hist[\"1-1.5s\"] + .connect_hist[\"1.5-2.5s\"] + .connect_hist[\"2.5-3.5s\"])==1) and (.connect_hist|length==8)"
check_jq "SOCKAUDIT_SLOW_CONNECT_MS=5000: syn_retransmitted without slow_connect" "$T/nbslow" \
  "$C | length==1 and .[0].findings==[\"syn_retransmitted\"]"
check_jq "closed after 1.2 s while retransmitting: abandoned, waited ~1200 ms" "$T/abandon" \
  "($C | length==1 and (.[0] | .outcome==\"abandoned\" and .completed_by==\"close\" and .connect_ms>=1150 and .connect_ms<1600 and .syn_retrans==1 and .ret==null)) and ($S | .connects.abandoned==1 and .connect_ms.n==0)"
check_jq "closed after 0.3 s: abandoned, no finding (trace only)" "$T/abandon300" \
  "$C | length==1 and (.[0] | .outcome==\"abandoned\" and .connect_ms>=250 and .connect_ms<600 and .syn_retrans==0 and .findings==null and .severity==\"info\")"
check_jq "refused: ECONNREFUSED for blocking and non-blocking" "$T/refused" \
  "$C | length==2 and all(.[]; .outcome==\"failed\" and .ret==-1 and .errno==\"ECONNREFUSED\" and .syn_retrans==0) and (map(.nonblocking)|sort==[false,true])"
check_jq "fast connects: nothing at info level, counted in the summary" "$T/fast_info" \
  "($C | length==0) and ($S | .connects.ok==3 and .connect_hist[\"<10ms\"]==3 and .syn_retrans_total==0 and .counts.connect==3)"
check_jq "fast connects at trace: every one, syn_retrans 0, each completion kind" "$T/fast_trace" \
  "$C | length==5 and all(.[]; .outcome==\"ok\" and .syn_retrans==0 and .findings==null and .connect_ms<100 and (.local|startswith(\"127.0.0.1:\"))) and (map(.completed_by)|sort==[\"call\",\"call\",\"call\",\"getsockopt\",\"write\"])"
check_jq "polled then closed: ok at close, connect time dated by the kernel" "$T/pollclose" \
  "$C | length==1 and (.[0] | .outcome==\"ok\" and .completed_by==\"close\" and .connect_ms<100)"
check_jq "TCP_DEFER_ACCEPT on a connecting socket: defer_on_client_socket" "$T/defer" \
  "$C | length==1 and (.[0] | .defer_accept_s==1 and (.findings|index(\"defer_on_client_socket\")) and .outcome==\"ok\")"
check_jq "TCP_DEFER_ACCEPT set through a dup: still defer_on_client_socket" "$T/deferdup" \
  "$C | length==1 and (.[0] | .defer_accept_s==1 and (.findings|index(\"defer_on_client_socket\")))"
check_jq "TCP_DEFER_ACCEPT set by syscall(SYS_setsockopt): still defer_on_client_socket" "$T/deferraw" \
  "$C | length==1 and (.[0] | .defer_accept_s==1 and (.findings|index(\"defer_on_client_socket\")))"
check_jq "UDP connect: instant, no TCP fields; AF_UNIX connect: ok" "$T/other" \
  "$C | length==2 and (map(select(.proto==\"udp\"))[0] | .outcome==\"ok\" and (has(\"syn_retrans\")|not)) and (map(select(.proto==\"unix\"))[0] | .outcome==\"ok\" and (.peer|endswith(\"u.sock\")))"
for f in block nb abandon; do echo "# $f: $(jq -c 'select(.event=="connect") | {outcome,completed_by,connect_ms,syn_retrans}' "$T/$f")"; done
finish
