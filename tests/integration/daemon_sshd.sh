#!/bin/bash
# sshd in the foreground (suite of real daemons; sshd's
# close_range(3, ~0U) right after the shim placed its fd). Own host key in
# the temp dir, a spare port on 127.0.0.1, ssh-keyscan as the client N times,
# plain and under the shim (default level). The scanned key must be the same,
# sshd's own log (LogLevel VERBOSE: "Connection from") must count N, the
# listening sshd's summary accepts must equal it, every line parses.
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
skip_under_tsan "an uninstrumented multi-threaded daemon under the TSan runtime reports its own synchronisation as races"
need /usr/sbin/sshd ssh-keyscan ssh-keygen
N=4
# sshd needs its privilege separation directory (Debian's service creates it).
if [ ! -d /run/sshd ]; then mkdir -m 0755 /run/sshd && on_exit "rmdir /run/sshd"; fi
ssh-keygen -q -t ed25519 -N '' -f "$T/hostkey" || { fail "ssh-keygen"; finish; }
run() {
	local mode=$1 P=$(free_port) pre=() i
	[ "$mode" = shim ] && pre=(env SOCKAUDIT_LOG="$T/sshd.jsonl" LD_PRELOAD="$(preload_value)")
	cat >"$T/$mode.conf" <<CONF
ListenAddress 127.0.0.1
HostKey $T/hostkey
PidFile $T/$mode.pid
UsePAM no
LogLevel VERBOSE
CONF
	"${pre[@]}" /usr/sbin/sshd -D -e -f "$T/$mode.conf" -p $P 2>"$T/$mode.err" &
	local spid=$!
	on_exit "kill -9 $spid"
	wait_port $P || { fail "$mode: sshd listens" "$(tail -3 "$T/$mode.err")"; return; }
	for i in $(seq $N); do timeout 10 ssh-keyscan -T 5 -t ed25519 -p $P 127.0.0.1 2>/dev/null; done >"$T/$mode.keys"
	sleep 0.5   # the per-connection sshd children log and exit
	kill -TERM $spid
	timed stop 10 tail --pid=$spid -f /dev/null
	timed_out $stop_rc && fail "$mode: sshd stops within 10 s of SIGTERM"
	wait $spid; echo $? >"$T/$mode.rc"
	echo "$spid $P" >"$T/$mode.info"
}
run plain; run shim
key=$(cut -d' ' -f1,2 "$T/hostkey.pub")
check "plain: ssh-keyscan read the host key $N times" [ "$(grep -c "$key" "$T/plain.keys")" = $N ]
check "shim: ssh-keyscan read the host key $N times ($(grep -c "$key" "$T/shim.keys"))" [ "$(grep -c "$key" "$T/shim.keys")" = $N ]
check "same exit status on SIGTERM (plain $(cat "$T/plain.rc"), shim $(cat "$T/shim.rc"))" [ "$(cat "$T/plain.rc")" = "$(cat "$T/shim.rc")" ]
own_p=$(grep -c 'Connection from 127.0.0.1' "$T/plain.err") own_s=$(grep -c 'Connection from 127.0.0.1' "$T/shim.err")
check "sshd's own log: $own_p connections plain, $own_s shim (clients: $N)" [ "$own_p $own_s" = "$N $N" ]
L=$T/sshd.jsonl
[ -s "$L" ] || { fail "the shim wrote a log" "$L missing or empty"; finish; }
json_lines "every log line parses" "$L"
read -r spid P <"$T/shim.info"
check "the listening sshd wrote its summary at SIGTERM" grep -q "\"event\":\"summary\".*\"pid\":$spid," "$L"
n=$(accepts_on "$L" $P)
check "summary accepts on :$P ($n) = sshd's own count ($own_s)" [ "$n" = "$own_s" ]
np=$(jqs "$L" '[.[] | select(.event=="init") | .pid] | unique | length')
nos=$(jqs "$L" '([.[] | select(.event=="init") | .pid] | unique) - ([.[] | select(.event=="summary") | .pid] | unique) | length')
check "every sshd process that wrote an init line wrote a summary ($nos of $np without; the per-connection children exit after close_range)" [ "$nos" = 0 ]
echo "# processes in the log: $(jqs "$L" '[.[] | .pid] | unique | length'), with a summary: $(summary_pids "$L" | wc -l), events: $(jqs "$L" '[.[] | .event] | group_by(.) | map("\(.[0]) \(length)") | join(", ")')"
finish
