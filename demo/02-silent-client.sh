#!/bin/bash
# Scenario 2: a silent client against TCP_DEFER_ACCEPT 1 and 2.
# Runs alone: demo/02-silent-client.sh
. "$(dirname "$0")/lib.sh"
NAME="2 silent client"
heading "2. A silent client: deferral delays the connection, then delivers it empty"
say "A listener sets TCP_DEFER_ACCEPT=1 (and, in a second process, 2) and a client connects" \
    "and never sends a byte, as an SMTP or SSH client waiting for the server's greeting would." \
    "The client's connect() returns at once; the server's accept() waits until the deferral" \
    "rounds run out (1 s, then 1+2 = 3 s), and then gets the connection anyway, with no data." \
    "The shim's accept event shows the wait, bytes_ready 0 and the SYN-ACK retransmission."
need_built silent_client || verdict "$NAME"
L1=$LOGS/02-silent-defer1.jsonl L2=$LOGS/02-silent-defer2.jsonl
rm -f "$L1" "$L2"
sub "What the program itself sees:"
env $(shim_env "$L1") "$BIN/silent_client" 1 >"$W/d1.out" 2>&1 &
p1=$!; track $p1
env $(shim_env "$L2") "$BIN/silent_client" 2 >"$W/d2.out" 2>&1 &
p2=$!; track $p2
wait $p1 || fail "silent_client 1 exited non-zero"
wait $p2 || fail "silent_client 2 exited non-zero"
cat "$W/d1.out" "$W/d2.out" | show
have_log "$L1" "$L2"

sub "The shim's accept events:"
show_ev 'select(.event == "accept")' "$L1" "$L2"
sub "Checks"
check_defer() {
	local log=$1 d=$2 lo=$3 hi=$4
	expect "defer=$d: accept found empty_accept_defer_expired" \
		jtrue 'any(.[]; .event == "accept" and found("empty_accept_defer_expired"))' "$log"
	expect "defer=$d: wait_ms between $lo and $hi, bytes_ready 0" \
		jtrue "any(.[]; .event == \"accept\" and .wait_ms >= $lo and .wait_ms <= $hi and .bytes_ready == 0)" "$log"
}
check_defer "$L1" 1 800 1800
check_defer "$L2" 2 2700 3800
verdict "$NAME"
