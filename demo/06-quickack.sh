#!/bin/bash
# Scenario 6: TCP_QUICKACK reasserted after every send, beside set once.
# Runs alone: demo/06-quickack.sh
. "$(dirname "$0")/lib.sh"
NAME="6 quickack hot loop"
heading "6. TCP_QUICKACK after every send: the hot loop, beside setting it once"
say "Two write-write-read clients with Nagle on (no TCP_NODELAY) run against an echo server." \
    "The first sets TCP_QUICKACK=1 again after every send, the second sets it once after" \
    "connect. Quick-ACK mode is not sticky: the kernel drops back to delayed ACKs on its own," \
    "so reasserting it in a hot loop is a setsockopt per send that changes little, and under" \
    "Nagle can multiply segments and latency. The shim counts the reasserts and the data" \
    "segments sent between them (tcpi_data_segs_out) without hooking send()."
need_built quickack_wwr || verdict "$NAME"
LR=$LOGS/06-quickack-reassert.jsonl LO=$LOGS/06-quickack-once.jsonl
rm -f "$LR" "$LO"
sub "What the programs see (round-trip times on this machine):"
env $(shim_env "$LR") "$BIN/quickack_wwr" reassert 200 >"$W/r.out" 2>&1 || fail "quickack_wwr reassert exited non-zero"
env $(shim_env "$LO") "$BIN/quickack_wwr" once 200 >"$W/o.out" 2>&1 || fail "quickack_wwr once exited non-zero"
cat "$W/r.out" "$W/o.out" | show
have_log "$LR" "$LO"
sub "The shim's quickack_hot_loop events, reasserting client:"
HOT='(.event == "quickack_hot_loop" or found("quickack_hot_loop"))'
jl "select($HOT) | $TRIM" "$LR" | head -1 | show
n_re=$(js "[.[] | select($HOT)] | length" "$LR" 2>/dev/null)
[ "${n_re:-0}" -gt 1 ] && say "... then again each time the count doubled, at $(js_raw "[.[] | select($HOT) | .reasserts] | map(tostring) | join(\", \")" "$LR") reasserts."
sub "... and for the client that set it once:"
n_once=$(js "[.[] | select($HOT)] | length" "$LO" 2>/dev/null)
echo "${n_once:-0} quickack_hot_loop events" | show
sub "Checks"
expect "reassert after every send: quickack_hot_loop, with nagle true" \
	jtrue "any(.[]; $HOT and .nagle == true)" "$LR"
expect "set once: no quickack_hot_loop (and the shim did log this process)" \
	jtrue "(length > 0) and all(.[]; $HOT | not)" "$LO"
verdict "$NAME"
