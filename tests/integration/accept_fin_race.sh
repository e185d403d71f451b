#!/bin/bash
# A FIN racing the accept-time TCP_INFO read is not a client byte: 3000
# data-less connections (each client connects and closes at once, two client
# processes at a time) against a listener that accepts and closes, at trace.
# No accept line may say bytes_ready > 0 and first_speaker.client stays 0
# (tcp_get_info() reads the state before the socket lock, the counters
# under it; the shim decides from the counters: tests/unit/test_accept.c
# holds the exact cases, this run the real kernel).
. "$(dirname "$0")/../lib.sh"

cat >"$T/client.py" <<'PY'
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
for i in range(n):
    s = socket.socket(); s.connect(('127.0.0.1', port)); s.close()
PY
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=$T/f.jsonl LD_PRELOAD="$(preload_value)" \
	timeout 60 "$PROGS/acc_server" -m close -b 4096 -n 3000 -T 30000 >"$T/srv.out" 2>"$T/srv.err" & srv=$!
for i in $(seq 100); do grep -q PORT "$T/srv.out" 2>/dev/null && break; sleep 0.02; done
P=$(awk '/PORT/{print $2}' "$T/srv.out")
python3 "$T/client.py" "$P" 1500 & c1=$!
python3 "$T/client.py" "$P" 1500
wait "$c1"; wait "$srv"
check "3000 connections accepted ($(cat "$T/srv.err"))" grep -q "accepted 3000" "$T/srv.err"
got=$(jq -s -c '[.[] | select(.event=="accept" and (.bytes_ready // 0) > 0) | {fd, bytes_ready}]' "$T/f.jsonl" 2>/dev/null)
check_jq "no accept line says bytes_ready > 0 (got $got)" "$T/f.jsonl" \
	'[.[] | select(.event=="accept" and (.bytes_ready // 0) > 0)] | length == 0'
check_jq "first_speaker.client stays 0 ($(jq -s -c '[.[]|select(.event=="listener_stats")]|.[-1].first_speaker' "$T/f.jsonl"))" "$T/f.jsonl" \
	'[.[] | select(.event=="listener_stats")] | .[-1].first_speaker.client == 0 and .[-1].accepts == 3000'
finish
