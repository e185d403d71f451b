#!/bin/bash
# A CPython server that runs subprocess.run(['/bin/true']) between accepts,
# at ulimit -n 1024 (the vfork child's close_range corrupted
# the shim's table). N connections, plain and under the shim (default
# level): every reply arrives, the fds open at the end are the same (apart
# from the shim's own log file), every accepted connection is counted once.
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
skip_under_tsan "an uninstrumented multi-threaded daemon under the TSan runtime reports its own synchronisation as races"
N=300
cat >"$T/srv.py" <<'PY'
import os, socket, subprocess, sys
port, n, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen(16)
print("ready", flush=True)
for i in range(n):
    c, _ = s.accept()
    subprocess.run(["/bin/true"])
    c.sendall(b"%d\n" % i); c.close()
s.close()
fds = sorted(os.listdir("/proc/self/fd"))
targets = [os.readlink("/proc/self/fd/" + f) if os.path.exists("/proc/self/fd/" + f) else "?" for f in fds]
print("fds", " ".join("%s=%s" % (f, t) for f, t in zip(fds, targets) if t != log))
PY
run() {
	local mode=$1 P=$(free_port) pre=()
	[ "$mode" = shim ] && pre=(env SOCKAUDIT_LOG="$T/py.jsonl" LD_PRELOAD="$(preload_value)")
	( ulimit -n 1024; exec "${pre[@]}" $PY "$T/srv.py" $P $N "$T/py.jsonl" ) >"$T/$mode.out" 2>&1 &
	local spid=$!
	on_exit "kill -9 $spid"
	wait_port $P || { fail "$mode: server listens"; return; }
	timeout 40 $PY -c "
import socket, sys
for i in range($N):
    c = socket.create_connection(('127.0.0.1', $P), timeout=10)
    print(c.makefile().readline().strip()); c.close()" >"$T/$mode.replies" 2>&1
	timed done 20 tail --pid=$spid -f /dev/null
	timed_out $done_rc && fail "$mode: the server ends after $N connections"
	wait $spid; echo $? >"$T/$mode.rc"
	echo "$spid $P" >"$T/$mode.info"
}
run plain; run shim
want=$(seq 0 $((N - 1)))
check "plain: $N replies" [ "$(cat "$T/plain.replies")" = "$want" ]
check "shim: $N replies, the same" [ "$(cat "$T/shim.replies")" = "$want" ]
check "same exit status (plain $(cat "$T/plain.rc"), shim $(cat "$T/shim.rc"))" [ "$(cat "$T/plain.rc")" = "$(cat "$T/shim.rc")" ]
fp=$(grep "^fds" "$T/plain.out" | sed "s/plain.out/MODE.out/g") fs=$(grep "^fds" "$T/shim.out" | sed "s/shim.out/MODE.out/g")
echo "# plain: $fp"; echo "# shim:  $fs"
check "fds open at the end: the same plain and shim (the shim's log file aside)" [ "${fp:-none}" = "${fs:-missing}" ]
L=$T/py.jsonl
[ -s "$L" ] || { fail "the shim wrote a log" "$L missing or empty"; finish; }
json_lines "every log line parses" "$L"
read -r spid P <"$T/shim.info"
check "the server wrote its summary" grep -q "\"event\":\"summary\".*\"pid\":$spid," "$L"
n=$(accepts_on "$L" $P) s=$(stats_accepts_on "$L" $P)
check "summary accepts on :$P ($n) = connections ($N)" [ "$n" = $N ]
check "listener_stats accepts on :$P ($s) = connections ($N)" [ "$s" = $N ]
finish
