#!/bin/bash
# TCP_QUICKACK: the setsockopt line once per fd with its read-back,
# and quickack_hot_loop only for "set again after every send", never for a
# program that sets it once, once per request, or once per turn.
. "$(dirname "$0")/../lib.sh"

"$PROGS/qa_echo" >"$T/port" &
on_exit "kill $!"
for i in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.05; done
port=$(cat "$T/port")
wait_port "$port" || { fail "qa_echo listens"; finish; }

# run NAME CLIENT-ARGS...: the client under the shim, log in $T/NAME.jsonl.
run() {
	local n=$1; shift
	if SOCKAUDIT_LOG="$T/$n.jsonl" preload "$PROGS/qa_client" "$port" "$@" >"$T/$n.out" 2>&1; then
		return 0
	fi
	fail "$n: qa_client ran" "$(cat "$T/$n.out")"
	return 1
}
hot='[.[] | select(.event == "quickack_hot_loop")]'
qa_lines='[.[] | select(.event == "setsockopt" and .opt == "TCP_QUICKACK")]'

# 1. Write-write-read, TCP_QUICKACK=1 after every write, Nagle on:
#    200 sets -> events at 16, 32, 64, 128 reasserts, no more.
run reassert --qa write --writes 2 --turns 100 &&
check_jq "reassert after every write with Nagle on: flagged, nagle=true" "$T/reassert.jsonl" \
	"$hot | length == 4 and all(.[]; .nagle == true and .cork == false and .severity == \"warn\"
	  and .findings == [\"quickack_hot_loop\"] and .data_segs_between <= 2 and .no_read_pct >= 25
	  and (.msg | test(\"TCP_NODELAY\")) and (.peer | test(\"127.0.0.1:$port\"))
	  and (.msg | test(\", Nagle on: each set is a syscall\")) and (.msg | test(\"Set it once, or once per reply\"))
	  and (.msg | test(\"only adds ACKs\") | not))
	  and ([.[].reasserts] == [16, 32, 64, 128])" &&
check_jq "reassert: one TCP_QUICKACK line, the rest counted" "$T/reassert.jsonl" \
	"($qa_lines | length == 1 and .[0].effective != null) and
	 (.[] | select(.event == \"summary\") | .quickack == {sets: 200, reasserts: 199, hot_loops: 1, fds: 1} and .suppressed >= 199)"

# 2. The same client setting it once after connect.
run once --qa once --writes 2 --turns 100 &&
check_jq "set once: not flagged, one setsockopt line with its read-back" "$T/once.jsonl" \
	"($hot | length == 0) and ($qa_lines | length == 1 and .[0].requested == 1 and .[0].effective == 1 and .[0].ret == 0)
	 and (.[] | select(.event == \"summary\") | .quickack.sets == 1 and .quickack.hot_loops == 0)"

# 3. Never set.
run never --qa never --writes 2 --turns 100 &&
check_jq "never set: no quickack event or line" "$T/never.jsonl" \
	"($hot | length == 0) and ($qa_lines | length == 0) and (.[] | select(.event == \"summary\") | .quickack.sets == 0)"

# 4. Keep-alive: once per request of 20 writes (then the reply is read).
run keepalive --qa request --writes 20 --size 16 --turns 100 &&
check_jq "keep-alive, once per request of 20 writes: not flagged" "$T/keepalive.jsonl" \
	"($hot | length == 0) and (.[] | select(.event == \"summary\") | .quickack.sets == 100 and .quickack.hot_loops == 0)"

# 5. Request/response, once per turn: write, read the reply, set.
run turn --qa turn --writes 1 --turns 100 &&
check_jq "request/response, once per turn: not flagged" "$T/turn.jsonl" \
	"($hot | length == 0) and (.[] | select(.event == \"summary\") | .quickack.sets == 100 and .quickack.reasserts == 99)"

# 6. TCP_NODELAY on and reasserting; warn level still shows it.
SOCKAUDIT_LEVEL=warn run nodelay --qa write --writes 2 --turns 20 --nodelay &&
check_jq "reassert with TCP_NODELAY: flagged, nagle=false (warn level)" "$T/nodelay.jsonl" \
	"($hot | length == 2 and all(.[]; .nagle == false) and .[0].reasserts == 16) and ($qa_lines | length == 0)"

# 7. The thresholds are configurable. The hot loop of case 1 under a higher
#    minimum is silent.
SOCKAUDIT_QUICKACK_MIN_REASSERTS=500 run knob --qa write --writes 2 --turns 100 &&
check_jq "SOCKAUDIT_QUICKACK_MIN_REASSERTS=500: not flagged at 199" "$T/knob.jsonl" "$hot | length == 0"
# Four writes (TCP_NODELAY: four segments) between sets, no read between
# every other pair: above the default max_segs 2, flagged with 4.
run knob2 --qa write --every 4 --writes 8 --nodelay --turns 20 &&
check_jq "4 segments between sets: not flagged by default" "$T/knob2.jsonl" "$hot | length == 0"
SOCKAUDIT_QUICKACK_MAX_SEGS=4 run knob3 --qa write --every 4 --writes 8 --nodelay --turns 20 &&
# Half the intervals hold the read of the reply: 50. Only a sample that saw
# data arrive on all three tries (quickack.c, sample()) counts its interval as
# read, erring towards silence, so the bound stays at >= 25.
check_jq "4 segments between sets, SOCKAUDIT_QUICKACK_MAX_SEGS=4: flagged" "$T/knob3.jsonl" \
	"$hot | length >= 1 and .[0].data_segs_between == 4 and .[0].no_read_pct <= 50 and .[0].no_read_pct >= 25"

finish
