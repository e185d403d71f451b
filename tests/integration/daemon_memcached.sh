#!/bin/bash
# memcached -d (suite of real daemons; a daemon keeps the
# caller's pipe open through the shim's fd). `memcached -d ... 2>&1 | cat`
# must end as soon as memcached has daemonized, plain, under the launcher
# (default sink, and -o -) and under LD_PRELOAD (default sink). With a file log, the
# daemon's own count of connections (stats: total_connections) equals the
# shim's listener accepts, every line parses and SIGTERM leaves a summary.
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
skip_under_tsan "an uninstrumented multi-threaded daemon under the TSan runtime reports its own synchronisation as races"
need memcached
N=6
# client PORT: N connections, each set+get; prints the values read.
client() { $PY - "$1" $N <<'PY'
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
for i in range(n):
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    v = b"v%d" % i
    c.sendall(b"set k%d 0 0 %d\r\n%s\r\nget k%d\r\n" % (i, len(v), v, i))
    buf = b""
    while not buf.endswith(b"END\r\n"):
        d = c.recv(4096)
        if not d: break
        buf += d
    print(buf.split(b"\r\n")[2].decode())
    c.close()
PY
}
own_conns() { printf 'stats\r\nquit\r\n' | timeout 5 socat -T 3 - TCP:127.0.0.1:$1 | tr -d '\r' | awk '$2=="total_connections"{print $3}'; }
# daemon NAME PREFIX...: memcached -d ... 2>&1 | cat, bounded; then traffic and stop.
daemon() {
	local name=$1; shift
	local P=$(free_port) rc secs t0
	t0=$(date +%s.%N)
	timeout -k 2 10 "$@" memcached -d -u root -l 127.0.0.1 -p $P -U 0 -P "$T/$name.pid" 2>&1 | timeout 10 cat >"$T/$name.out"
	rc=${PIPESTATUS[1]}
	secs=$(printf '%.2f' "$(echo "$(date +%s.%N) - $t0" | bc)")
	echo "# $name: memcached -d ... 2>&1 | cat ended after $secs s (cat status $rc), $(grep -c . "$T/$name.out") lines through the pipe"
	if timed_out $rc; then fail "$name: memcached -d 2>&1 | cat ends promptly" "cat still reading at the 10 s timeout ($secs s)"
	else check "$name: memcached -d 2>&1 | cat ends promptly ($secs s)" [ "$(echo "$secs < 5" | bc)" = 1 ]; fi
	[ -s "$T/$name.out" ] && json_lines "$name: every line that went through the pipe parses" "$T/$name.out"
	wait_port $P || { fail "$name: memcached listens"; return; }
	client $P >"$T/$name.replies"
	own=$(own_conns $P)
	local pid=$(cat "$T/$name.pid")
	on_exit "kill -9 $pid"
	kill -TERM $pid
	timed stop 10 tail --pid=$pid -f /dev/null
	timed_out $stop_rc && fail "$name: memcached stops within 10 s of SIGTERM"
	echo "$pid $P $own" >"$T/$name.info"
}
daemon plain
daemon file_log env SOCKAUDIT_LOG="$T/mc.jsonl" LD_PRELOAD="$(preload_value)"
daemon launcher_default "$SA" --
daemon launcher_o_dash "$SA" -o -
daemon preload_default env -u SOCKAUDIT_LOG LD_PRELOAD="$(preload_value)"
want=$(seq 0 $((N - 1)) | sed 's/^/v/')
for m in plain file_log launcher_default launcher_o_dash preload_default; do
	check "$m: every client read back its value" [ "$(cat "$T/$m.replies" 2>/dev/null)" = "$want" ]
done
L=$T/mc.jsonl
if [ -s "$L" ]; then
	json_lines "file log: every line parses" "$L"
	read -r pid P own <"$T/file_log.info"
	read -r _ _ own_plain <"$T/plain.info"
	check "file log: the daemon wrote its summary at SIGTERM" grep -q "\"event\":\"summary\".*\"pid\":$pid," "$L"
	n=$(accepts_on "$L" $P)
	check "file log: summary accepts on :$P ($n) = memcached's total_connections ($own; plain $own_plain) - 1 (memcached counts its listening socket: an idle one says 2 at its first stats)" \
		[ "$n" = "$((own - 1))" ]
else
	fail "file log: the shim wrote a log" "$L missing or empty"
fi
finish
