#!/bin/bash
# socat TCP-LISTEN:P,fork,reuseaddr (suite of real daemons): an echo
# server that forks a child per connection, run plain and under the shim at
# the default level, five clients each. The replies must be the same, socat's
# own count of accepted connections (-d -d) must equal the shim's listener
# accepts, every line parses, and the listening process writes its summary
# when stopped with SIGTERM (socat's handler re-raises it: status 143).
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
skip_under_tsan "an uninstrumented multi-threaded daemon under the TSan runtime reports its own synchronisation as races"
need socat
N=5
# run MODE: one server, N clients; replies in $T/MODE.replies.
run() {
	local mode=$1 P=$(free_port) pre=() i
	[ "$mode" = shim ] && pre=(env SOCKAUDIT_LOG="$T/socat.jsonl" LD_PRELOAD="$(preload_value)")
	"${pre[@]}" socat -d -d TCP-LISTEN:$P,bind=127.0.0.1,fork,reuseaddr EXEC:/bin/cat 2>"$T/$mode.err" &
	local spid=$!
	on_exit "kill -9 $spid"
	wait_port $P || { fail "$mode: socat listens" "$(tail -3 "$T/$mode.err")"; return; }
	for i in $(seq $N); do
		echo "ping $i" | timeout 5 socat -T 2 - TCP:127.0.0.1:$P
	done >"$T/$mode.replies"
	sleep 0.3   # the forked children finish their copy loop
	kill -TERM $spid
	timed stop 10 tail --pid=$spid -f /dev/null
	timed_out $stop_rc && fail "$mode: socat stops within 10 s of SIGTERM" "still running"
	wait $spid; echo $? >"$T/$mode.rc"
	echo $spid >"$T/$mode.pid"; echo $P >"$T/$mode.port"
}
run plain
run shim
want=$(seq $N | sed 's/^/ping /')
check "plain: every client got its echo" [ "$(cat "$T/plain.replies")" = "$want" ]
check "shim: every client got its echo (same replies as plain)" [ "$(cat "$T/shim.replies")" = "$want" ]
check "same exit status on SIGTERM (plain $(cat "$T/plain.rc"), shim $(cat "$T/shim.rc"))" [ "$(cat "$T/plain.rc")" = "$(cat "$T/shim.rc")" ]
own_plain=$(grep -c 'accepting connection from' "$T/plain.err")
own_shim=$(grep -c 'accepting connection from' "$T/shim.err")
check "socat's own accept count: $own_plain plain, $own_shim shim (clients: $N)" [ "$own_plain$own_shim" = "$N$N" ]
L=$T/socat.jsonl
[ -s "$L" ] || { fail "the shim wrote a log" "$L is empty or missing"; finish; }
json_lines "every log line parses" "$L"
spid=$(cat "$T/shim.pid") P=$(cat "$T/shim.port")
check "the listening socat wrote its summary (ended by SIGTERM)" \
	grep -q "\"event\":\"summary\".*\"pid\":$spid," "$L"
n_sum=$(accepts_on "$L" $P) n_st=$(stats_accepts_on "$L" $P)
check "summary accepts on :$P ($n_sum) = socat's own count ($own_shim)" [ "$n_sum" = "$own_shim" ]
check "listener_stats accepts on :$P ($n_st) = socat's own count ($own_shim)" [ "$n_st" = "$own_shim" ]
# socat closes its copy of each connection right after the fork, before
# anyone spoke: that close decides nothing (the child holds the socket and
# decides), so the listening socat counts no "nobody spoke" for them.
unk=$(jq -s "[.[] | select(.event == \"listener_stats\" and .pid == $spid) | .first_speaker.unknown // 0] | add // 0" "$L")
check "the listening socat counts no connection as closed unspoken (unknown: $unk; its children spoke)" [ "$unk" = 0 ]
finish
