#!/bin/bash
# Below trace, data waiting at accept is read only where it pays:
# on a plain TCP listener from the once-a-millisecond TCP_INFO sample (no
# FIONREAD per accept), on a deferred listener on every accept. Who spoke
# first is watched on a sample of a plain listener's connections,
# on every one of a deferred listener's.
. "$(dirname "$0")/../lib.sh"

# run NAME "SERVER ARGS": acc_server at info level under strace (ioctl
# calls counted), 100 clients that send at once; the log is $T/NAME.jsonl.
run() {
	local name=$1 sargs=$2 i port
	strace -f -qq -e trace=ioctl -o "$T/$name.strace" -E LD_PRELOAD="$(preload_value)" \
		env SOCKAUDIT_LEVEL=info SOCKAUDIT_LOG="$T/$name.jsonl" "$PROGS/acc_server" $sargs \
		>"$T/$name.out" 2>/dev/null &
	local spid=$!
	for i in $(seq 200); do grep -q PORT "$T/$name.out" 2>/dev/null && break; sleep 0.02; done
	port=$(awk '/PORT/{print $2}' "$T/$name.out")
	"$PROGS/acc_client" -p "$port" -c 100 -s 0 -H 1500 2>/dev/null
	wait $spid
}
if ! command -v strace >/dev/null; then fail "strace is installed" "scripts/ensure-deps.sh test"; finish; fi
run plain "-N -b 200 -n 100 -T 5000 -m read"
run deferred "-N -b 200 -d 1 -n 100 -T 5000 -m read"
run nodelay "-N -b 200 -n 100 -T 5000 -m nodelay"

S='[.[] | select(.event=="listener_stats")] | last'
check "plain listener: no FIONREAD on accepted sockets" \
	test "$(grep -c 'FIONREAD' "$T/plain.strace")" = 0
check_jq "plain listener: data checked on the sample" "$T/plain.jsonl" \
	"$S | .accepts==100 and .data_checked>=1 and .data_checked<=100 and (.with_data_pct|type)==\"number\""
# Who speaks first is watched on the first 64 connections, then 1 in 128
# (none more of 100 here), plus those on a TCP_INFO sample (100 ms after the
# last): 64 to 100, all client.
check_jq "plain listener: the client spoke first on every watched connection (first 64, then 1 in 128)" "$T/plain.jsonl" \
	"$S | .first_speaker.client>=64 and .first_speaker.client<=100 and .first_speaker.server==0 and .first_speaker.unknown==0"
check_jq "deferred listener: every connection watched" "$T/deferred.jsonl" \
	"$S | (.first_speaker.client + .first_speaker.server + .first_speaker.unknown)==100"
check_jq "plain listener: the summary names how many accepts were checked" "$T/plain.jsonl" \
	'[.[] | select(.event=="summary")][0].listeners[0] | .accepts==100 and .data_checked>=1'
# The accepts counted inline (no fd entry, past the first 64) are in the
# summary's event counts too: they are kept on the listener, not on the
# process page, and added there at the summary.
check_jq "plain listener: the summary's counts.accept is every accept, inline-counted ones included" "$T/plain.jsonl" \
	'[.[] | select(.event=="summary")][0].counts.accept == 100'
check_jq "deferred listener: every accept checked for data" "$T/deferred.jsonl" \
	"$S | .accepts==100 and .data_checked==100"
# A setsockopt on a connection that was counted but not watched (no fd
# entry) is still one "accepted from" that listener: all 100 in its counts.
check_jq "setsockopt on every connection, watched or not, counted as accepted from the listener" "$T/nodelay.jsonl" \
	"$S | .accepts==100 and .setsockopt.TCP_NODELAY.calls==100"
check_jq "those setsockopt calls: one line at info, the rest counted" "$T/nodelay.jsonl" \
	'[.[] | select(.event=="setsockopt" and .opt=="TCP_NODELAY")] | length == 1'
n=$(grep -c 'FIONREAD' "$T/deferred.strace")
check "deferred listener: FIONREAD on the accepts the sample did not cover ($n)" test "$n" -ge 1 -a "$n" -le 100
finish
