#!/bin/bash
# redis-server (suite of real daemons).
# 1. Foreground, plain and under the shim (default level): redis-benchmark
#    (small -n) completes the same requests; redis's own
#    total_connections_received equals the shim's listener accepts; every line
#    parses; the summary is written at SIGTERM.
# 2. `--daemonize yes` under command substitution must return promptly
#    (plain takes ~0.01 s): out=$(sockaudit -o - -- redis-server --daemonize yes
#    ...), and again with the plain LD_PRELOAD default sink and stderr captured
#    (the daemon kept the caller's pipe open through fd 900).
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
skip_under_tsan "an uninstrumented multi-threaded daemon under the TSan runtime reports its own synchronisation as races"
need redis-server redis-benchmark redis-cli
N=200 C=4
common=(--bind 127.0.0.1 --save '' --appendonly no --dir "$T")
fg() {   # fg MODE: foreground server, benchmark, own count, SIGTERM
	local mode=$1 P=$(free_port) pre=()
	[ "$mode" = shim ] && pre=(env SOCKAUDIT_LOG="$T/fg.jsonl" LD_PRELOAD="$(preload_value)")
	"${pre[@]}" redis-server --port $P "${common[@]}" --logfile "$T/$mode.log" &
	local rpid=$!
	on_exit "kill -9 $rpid"
	wait_port $P || { fail "$mode: redis listens" "$(tail -3 "$T/$mode.log")"; return; }
	timeout 30 redis-benchmark -h 127.0.0.1 -p $P -n $N -c $C -t set,get >"$T/$mode.bench" 2>&1
	echo $? >"$T/$mode.bench.rc"
	timeout 5 redis-cli -h 127.0.0.1 -p $P info stats | tr -d '\r' | sed -n 's/^total_connections_received://p' >"$T/$mode.own"
	kill -TERM $rpid
	timed stop 10 tail --pid=$rpid -f /dev/null
	timed_out $stop_rc && fail "$mode: redis stops within 10 s of SIGTERM"
	wait $rpid; echo $? >"$T/$mode.rc"
	echo $rpid >"$T/$mode.pid"; echo $P >"$T/$mode.port"
}
fg plain
fg shim
done_lines() { grep -Eo '[0-9]+ requests completed' "$1" | tr '\n' ' '; }
check "plain: redis-benchmark completes ($(done_lines "$T/plain.bench"))" \
	[ "$(cat "$T/plain.bench.rc") $(done_lines "$T/plain.bench")" = "0 $N requests completed $N requests completed " ]
check "shim: redis-benchmark exit $(cat "$T/shim.bench.rc") and the same completed counts ($(done_lines "$T/shim.bench"))" \
	[ "$(cat "$T/shim.bench.rc") $(done_lines "$T/shim.bench")" = "0 $(done_lines "$T/plain.bench")" ]
check "same exit status on SIGTERM (plain $(cat "$T/plain.rc"), shim $(cat "$T/shim.rc"))" [ "$(cat "$T/plain.rc")" = "$(cat "$T/shim.rc")" ]
L=$T/fg.jsonl
if [ -s "$L" ]; then
	json_lines "foreground: every log line parses" "$L"
	rpid=$(cat "$T/shim.pid") P=$(cat "$T/shim.port") own=$(cat "$T/shim.own")
	check "foreground: redis wrote its summary at SIGTERM" grep -q "\"event\":\"summary\".*\"pid\":$rpid," "$L"
	n=$(accepts_on "$L" $P)
	check "foreground: summary accepts on :$P ($n) = redis's total_connections_received ($own; plain $(cat "$T/plain.own"))" [ "$n" = "$own" ]
else
	fail "foreground: the shim wrote a log" "$L missing or empty"
fi

# --daemonize yes under $(...): each returns promptly; the daemon answers.
daemon() {   # daemon NAME CMD-PREFIX...: sets NAME_s, NAME_rc, checks, stops the daemon
	local name=$1; shift
	local P=$(free_port) out t0 rc secs
	t0=$(date +%s.%N)
	# `| timeout 20 cat` bounds the wait for the pipe's end: $(...) itself
	# waits for every writer, and a daemon holding the pipe outlives timeout.
	out=$(timeout -k 2 20 "$@" redis-server --daemonize yes --port $P "${common[@]}" \
		--pidfile "$T/$name.pid" --logfile "$T/$name.log" 2>&1 | timeout 20 cat; exit ${PIPESTATUS[1]})
	rc=$?
	secs=$(printf '%.2f' "$(echo "$(date +%s.%N) - $t0" | bc)")
	[ -n "$out" ] && printf '%s\n' "$out" >"$T/$name.out"   # $(...) strips the last newline
	echo "# $name: \$(...) returned after $secs s, status $rc, $(printf '%s' "$out" | grep -c .) lines of output"
	if timed_out $rc; then fail "$name: \$(... redis-server --daemonize yes) returns promptly" "hit the 20 s timeout ($secs s)"
	else check "$name: \$(... redis-server --daemonize yes) returns promptly ($secs s, status $rc)" [ "$rc $(echo "$secs < 5" | bc)" = "0 1" ]; fi
	wait_port $P && r=$(timeout 5 redis-cli -h 127.0.0.1 -p $P ping | tr -d '\r')
	check "$name: the daemon answers PING (${r:-nothing})" [ "${r:-}" = PONG ]
	timeout 5 redis-cli -h 127.0.0.1 -p $P shutdown nosave >/dev/null 2>&1
	[ -f "$T/$name.pid" ] && kill -9 "$(cat "$T/$name.pid")" 2>/dev/null
	eval "${name}_out=\$out"
}
daemon plain_daemonize
daemon launcher_o_dash "$SA" -o -
[ -n "$launcher_o_dash_out" ] && json_lines "launcher -o -: every line of \$(...) parses" "$T/launcher_o_dash.out" \
	|| echo "# launcher -o -: no line in \$(...) (the parent made no socket call before daemonizing; the daemon's stdout is /dev/null)"
# -o FILE with %p: only the processes that wrote a line have a file (the
# parent that forks and exits makes no socket call: no empty file of its pid).
daemon launcher_o_pid "$SA" -o "$T/d-%p.jsonl"
files=$(cd "$T" && ls d-*.jsonl 2>/dev/null | tr '\n' ' ')
check "launcher -o d-%p.jsonl: one file, the daemon's ($files)" [ "$(wc -w <<<"$files")" = 1 ]
for f in $files; do
	p=${f#d-}; p=${p%.jsonl}
	json_lines "launcher -o d-%p.jsonl: $f parses" "$T/$f"
	check "launcher -o d-%p.jsonl: $f is the daemon's own (init and summary of pid $p)" \
		grep -q "\"event\":\"summary\".*\"pid\":$p," "$T/$f"
done
daemon preload_default env -u SOCKAUDIT_LOG LD_PRELOAD="$(preload_value)"
[ -n "$preload_default_out" ] && json_lines "LD_PRELOAD default sink: every line of \$(... 2>&1) parses" "$T/preload_default.out"
finish
