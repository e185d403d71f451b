#!/bin/bash
# Durations are real time whatever a later preload does to the clock: Debian's
# faketime (libfaketime, preloaded after the shim: the faketime program appends
# to LD_PRELOAD) running its clock ten times fast. A connect interrupted after
# 1.5 s of real time and an accept that waited ~1.5 s must say ~1.5 s, not 15;
# ts is the kernel's real-time clock, not the faked one.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/life_lib.sh"
skip_under_tsan "TSan intercepts clock_gettime itself"
command -v faketime >/dev/null || { fail "faketime installed (scripts/ensure-deps.sh test)"; finish; }

# A connect to a stalled peer, interrupted by SIGALRM after 1.5 s (real time:
# setitimer is not faked).
"$PROGS/fullq_server" "$T/port" 8000 200 & srv=$!
for i in $(seq 100); do [ -f "$T/port" ] && break; sleep 0.02; done
P=$(cat "$T/port")
t0=$(date +%s)
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=$T/c.jsonl timeout -k 2 20 env LD_PRELOAD="$(preload_value)" \
	faketime -f "+0 x10" "$PROGS/life_eintr" "$P" 1500 >"$T/c.out" 2>&1
t1=$(date +%s)
kill "$srv" 2>/dev/null
C="[.[] | select(.event==\"connect\" and .peer==\"127.0.0.1:$P\")]"
got=$(life_jq "$T/c.jsonl" "$C | map(.connect_ms) | tostring")
check_jq "faketime x10: an interrupted 1.5 s connect says 1.0-4.0 s (got $got)" "$T/c.jsonl" \
	"$C | length == 1 and (.[0].connect_ms >= 1000 and .[0].connect_ms < 4000)"
check_jq "faketime x10: ts is real time ($t0..$t1 + 1)" "$T/c.jsonl" \
	"all(.[]; .ts >= $t0 and .ts <= $t1 + 1)"

# An accept that waited ~1.5 s for its client (the client runs without faketime).
# Python under both the ASan runtime and libfaketime hangs before main, with
# or without the shim (libfaketime's known clash with ASan's interceptors).
case ",${SANITIZE:-}," in *,address,*) ok "faketime x10: accept wait # SKIP python + libfaketime + ASan hang without the shim"; finish ;; esac
P=$(free_port)
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=$T/a.jsonl timeout -k 2 20 env LD_PRELOAD="$(preload_value)" \
	faketime -f "+0 x10" python3 -c "
import socket
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(('127.0.0.1', $P)); l.listen(8)
c, _ = l.accept(); c.close(); l.close()" & srv=$!
wait_port "$P"
a0=$(date +%s%N)
sleep 1.5
python3 -c "import socket; socket.create_connection(('127.0.0.1', $P)).close()"
a1=$(date +%s%N)
wait "$srv"
# The wait is at most the real time from the port's opening to the client's
# end (1.5 s and the client's start: seconds on a loaded machine), plus
# 0.5 s; a faked clock would say ten times it.
most=$(( (a1 - a0) / 1000000 + 500 ))
got=$(life_jq "$T/a.jsonl" '[.[] | select(.event=="accept") | .wait_ms] | tostring')
check_jq "faketime x10: an accept that waited ~1.5 s says 1.0 s to the real window + 0.5 s, $most ms (got $got)" "$T/a.jsonl" \
	"[.[] | select(.event==\"accept\")] | length == 1 and (.[0].wait_ms >= 1000 and .[0].wait_ms < $most)"
finish
