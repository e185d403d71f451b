#!/bin/bash
# lighttpd (suite of real daemons; at trace level
# 5,005 accepts gave 0 accept lines). lighttpd -D, N HTTP/1.0 GETs from 4
# threads (one connection per request; http_get in daemon_lib.sh, not ab), plain, under the shim at the
# default level and at trace. The client's counts must be the same; lighttpd's access
# log, the shim's summary accepts and (at trace) the accept lines must all
# equal the requests; the client speaks first on every connection; every line
# parses; the summary is written at SIGTERM.
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
skip_under_tsan "an uninstrumented multi-threaded daemon under the TSan runtime reports its own synchronisation as races"
need lighttpd
N=300
mkdir -p "$T/www"; echo hello >"$T/www/index.html"
run() {
	local mode=$1 P=$(free_port) pre=()
	[ "$mode" = info ] && pre=(env SOCKAUDIT_LOG="$T/info.jsonl" LD_PRELOAD="$(preload_value)")
	[ "$mode" = trace ] && pre=(env SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/trace.jsonl" LD_PRELOAD="$(preload_value)")
	cat >"$T/$mode.conf" <<CONF
server.document-root = "$T/www"
server.bind = "127.0.0.1"
server.port = $P
server.pid-file = "$T/$mode.pid"
server.errorlog = "$T/$mode.err"
server.modules = ( "mod_accesslog" )
accesslog.filename = "$T/$mode.access"
index-file.names = ( "index.html" )
CONF
	"${pre[@]}" lighttpd -D -f "$T/$mode.conf" >"$T/$mode.out" 2>&1 &
	local lpid=$!
	on_exit "kill -9 $lpid"
	wait_port $P || { fail "$mode: lighttpd listens" "$(tail -3 "$T/$mode.err" "$T/$mode.out")"; return; }
	timeout 30 bash -c "$(declare -f http_get); PY=$PY http_get $P $N 4 /index.html" >"$T/$mode.cl" 2>&1; echo $? >"$T/$mode.cl.rc"
	sleep 0.3   # the access log line of the last request
	kill -TERM $lpid
	timed stop 10 tail --pid=$lpid -f /dev/null
	timed_out $stop_rc && fail "$mode: lighttpd stops within 10 s of SIGTERM"
	wait $lpid; echo $? >"$T/$mode.rc"
	echo "$lpid $P" >"$T/$mode.info"
}
run plain; run info; run trace
for m in plain info trace; do
	check "$m: client exit $(cat "$T/$m.cl.rc"), replies 200/other: $(cat "$T/$m.cl")" [ "$(cat "$T/$m.cl.rc") $(cat "$T/$m.cl")" = "0 $N 0" ]
	check "$m: lighttpd's access log has $N requests ($(wc -l <"$T/$m.access"))" [ "$(wc -l <"$T/$m.access")" = $N ]
	[ $m = plain ] || check "$m: same exit status on SIGTERM (plain $(cat "$T/plain.rc"), $m $(cat "$T/$m.rc"))" [ "$(cat "$T/plain.rc")" = "$(cat "$T/$m.rc")" ]
done
for m in info trace; do
	L=$T/$m.jsonl
	[ -s "$L" ] || { fail "$m: the shim wrote a log" "$L missing or empty"; continue; }
	json_lines "$m: every log line parses" "$L"
	read -r lpid P <"$T/$m.info"
	check "$m: lighttpd wrote its summary at SIGTERM" grep -q "\"event\":\"summary\".*\"pid\":$lpid," "$L"
	n=$(accepts_on "$L" $P) s=$(stats_accepts_on "$L" $P)
	check "$m: summary accepts on :$P ($n) = requests ($N)" [ "$n" = $N ]
	check "$m: listener_stats accepts on :$P ($s) = requests ($N)" [ "$s" = $N ]
	fs=$(jqs "$L" "[.[] | select(.event==\"listener_stats\" and (.local|endswith(\":$P\")))] | last | .first_speaker")
	# Every connection is watched at trace; below trace the first 64, then
	# 1 in 128 (accepts 128, 256, ... before this one; and those on a
	# TCP_INFO sample).
	c=$(jqs "$L" "[.[] | select(.event==\"listener_stats\" and (.local|endswith(\":$P\")))] | last | .first_speaker | select(.server==0 and .unknown==0) | .client")
	lo=$N; [ $m = info ] && lo=$((N < 64 ? N : 64 + (N - 1) / 128))
	check "$m: the client spoke first on every watched connection, $lo to $N of them (first_speaker $fs)" \
		bash -c '[ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]' _ "$c" $lo $N
done
read -r lpid P <"$T/trace.info"
a=$(jqs "$T/trace.jsonl" "[.[] | select(.event==\"accept\" and .ret>=0 and (.local|endswith(\":$P\")))] | length")
check "trace: one accept line per accepted connection ($a lines, $N requests)" [ "$a" = $N ]
finish
