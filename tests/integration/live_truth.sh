#!/bin/bash
# Live truth: what a running process shows is current, with no interval set
# (the default, 5 s), and the thread that writes it changes nothing the
# host can see but its presence in /proc/PID/task.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/life_lib.sh"
skip_under_tsan "the live thread's futex wait and its join are TSan-intercepted"
P="$PROGS/life_live"
SA="$TOP/sockaudit"

# 1. The thread: one more, named, with all the host's calls unchanged.
for m in unshare setuid; do
	"$P" $m 1.5 >"$T/$m.plain" 2>&1
	SOCKAUDIT_STATS_INTERVAL=1 LR_LOG="$T/$m.jsonl" life_shim "$T/$m" 20 info "$P" $m 1.5
	if [ "$LR_RC" = 0 ] && cmp -s "$T/$m.plain" "$T/$m.out"; then
		ok "$m after the live thread started: same results as plain ($(tr '\n' ' ' <"$T/$m.out"))"
	else fail "$m with the live thread" "rc $LR_RC, plain '$(cat "$T/$m.plain")' shim '$(cat "$T/$m.out")'"; fi
done
SOCKAUDIT_STATS_INTERVAL=1 LR_LOG="$T/th.jsonl" life_shim "$T/th" 20 info "$P" threads 1.5
check "one thread of ours, named sockaudit" grep -qx "threads 2 names life_live,sockaudit" "$T/th.out"
LR_LOG="$T/fk.jsonl" life_shim "$T/fk" 20 info "$P" forkchild 0.2
check "a forked child that lives less than an interval gets no thread" grep -qx "child threads 1 names life_live" "$T/fk.out"
check "its parent has one" grep -qx "parent threads 2 names life_live,sockaudit" "$T/fk.out"

# 2. An idle process writes nothing more: 5 connects, then 4 s idle at a
# 1 s interval give one totals line, not four.
SOCKAUDIT_STATS_INTERVAL=1 LR_LOG="$T/idle.jsonl" life_shim "$T/idle" 20 info "$P" idle 5 4
n=$(count_events "$T/idle.jsonl" totals)
ok_=$(first_event "$T/idle.jsonl" totals | jq '.connect_peers[0].ok')
if [ "$n" = 1 ] && [ "$ok_" = 5 ]; then ok "idle after 5 connects: 1 totals line in 4 intervals, 5 ok to its peer"
else fail "idle process lines" "totals lines $n, peer ok $ok_"; fi

# 3. A long-lived client's ok connects are in metrics within seconds, and a
# listener that stopped accepting shows FULL in a top snapshot: no interval set.
# The stalled server took one connection, then stopped calling accept():
# its first accept starts the live thread (a listen alone does not: an
# nginx master never accepts, and its workers keep glibc's one-thread paths).
cat >"$T/stall.py" <<'PY'
import socket, sys, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(2)
open(sys.argv[1], "w").write(str(srv.getsockname()[1]))
c, _ = srv.accept()
time.sleep(30)
PY
cat >"$T/client.py" <<'PY'
import socket, sys, time
port = int(sys.argv[1]); cs = []
for i in range(30):
    c = socket.socket(); c.settimeout(0.3)
    try: c.connect(("127.0.0.1", port))
    except OSError: pass
    cs.append(c)
time.sleep(30)
PY
mkdir -p "$T/live"
SOCKAUDIT_LOG="$T/live/x-%p.jsonl" LD_PRELOAD="$(preload_value)" timeout 40 /usr/bin/python3 "$T/stall.py" "$T/port" &
srv=$!; on_exit "kill $srv 2>/dev/null"
for i in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
SOCKAUDIT_LOG="$T/live/x-%p.jsonl" LD_PRELOAD="$(preload_value)" timeout 40 /usr/bin/python3 "$T/client.py" "$(cat "$T/port")" &
cli=$!; on_exit "kill $cli 2>/dev/null"
got=0
for i in $(seq 90); do
	sleep 0.1
	v=$("$SA" metrics "$T/live" 2>/dev/null | awk '/^sockaudit_connects_total\{comm="python3",outcome="ok"\}/ {print $2}')
	[ "${v:-0}" -ge 3 ] 2>/dev/null && { got=$i; break; }
done
if [ "$got" -gt 0 ]; then ok "a live client's ok connects in metrics $((got / 10)).$((got % 10)) s after its start (${v})"
else fail "live client's connects in metrics within 9 s" "$("$SA" metrics "$T/live" 2>&1 | grep connects_total | head -3)"; fi
full=
for i in $(seq 90); do
	sleep 0.1
	"$SA" top "$T/live" >"$T/top.out" 2>&1 </dev/null
	grep -q "FULL" "$T/top.out" && { full=$i; break; }
done
if [ -n "$full" ]; then ok "a listener that stopped accepting (after one) shows FULL in a top snapshot within $((full / 10 + 1)) s"
else fail "stalled listener FULL in top" "$(head -8 "$T/top.out")"; fi

# 4. A SIGTERM'd server has its summary and is not running.
kill -TERM $srv; wait $srv 2>/dev/null
st=$("$SA" metrics "$T/live" 2>/dev/null | awk '/^sockaudit_processes\{comm="python3",state="running"\}/ {print $2}')
ns=$(cat "$T"/live/x-*.jsonl | jq -s '[.[] | select(.event=="summary")] | length')
if [ "${ns:-0}" -ge 1 ] && [ "${st:-0}" = 1 ]; then ok "SIGTERM'd server: its summary written, the client alone running"
else fail "SIGTERM summary" "summaries ${ns:-0}, running ${st:-none}"; fi
# 5. The report: the 3 connects the client completed (the queue's room)
# that the server never accepted before it ended: the first thing to fix.
for i in $(seq 30); do
	"$SA" report "$T"/live/x-*.jsonl >"$T/report.out" 2>&1
	grep "^  1\. " "$T/report.out" | grep -q "connects never accepted" && break
	sleep 0.5
done
if grep "^  1\. " "$T/report.out" | grep -q "connects never accepted"; then
	ok "report: connects never accepted first ($(grep -m1 -o '[0-9]* connects\? to 127[^,]*' "$T/report.out"))"
else fail "report names unaccepted connects first" "$(sed -n '/Fix first/,+6p' "$T/report.out")"; fi


# 6. The issue's scenario with real nginx (2 workers) in front of a Python
# upstream with backlog 1 under ab -c 60: requests that hung until nginx's
# proxy_read_timeout (504) are connects nginx completed that the upstream
# never accepted; the report names them first.
if [ -x /usr/sbin/nginx ] && command -v ab >/dev/null; then
	N="$T/ng"; mkdir -p "$N/logs"
	UP=$(free_port); FR=$(free_port)
	cat >"$N/up.py" <<'PY'
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
end = time.time() + 20
while time.time() < end:
    c, _ = s.accept(); c.settimeout(1)
    try:
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = c.recv(4096)
            if not d: break
            buf += d
        time.sleep(0.05)
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
    except OSError: pass
    c.close()
PY
	cat >"$N/nginx.conf" <<NG
worker_processes 2; daemon off; error_log $N/logs/error.log; pid $N/logs/nginx.pid;
env LD_PRELOAD; env SOCKAUDIT_LOG;
events { worker_connections 256; }
http { access_log off; client_body_temp_path $N/logs; proxy_temp_path $N/logs; fastcgi_temp_path $N/logs;
  uwsgi_temp_path $N/logs; scgi_temp_path $N/logs;
  server { listen 127.0.0.1:$FR; location / { proxy_pass http://127.0.0.1:$UP; proxy_read_timeout 4s; } } }
NG
	SOCKAUDIT_LOG="$N/x-%p.jsonl" LD_PRELOAD="$(preload_value)" timeout 40 /usr/bin/python3 "$N/up.py" $UP &
	up=$!; on_exit "kill $up 2>/dev/null"
	wait_port $UP
	SOCKAUDIT_LOG="$N/x-%p.jsonl" LD_PRELOAD="$(preload_value)" timeout 40 /usr/sbin/nginx -c "$N/nginx.conf" &
	ng=$!; on_exit "kill $ng 2>/dev/null"
	wait_port $FR
	timeout 25 ab -n 300 -c 60 -s 8 http://127.0.0.1:$FR/ >"$N/ab.out" 2>&1
	non2xx=$(awk '/Non-2xx responses/ {print $3}' "$N/ab.out")
	sleep 5.5   # one more interval: the upstream's figures as late as nginx's
	# Threads: none of ours in nginx's master (it only listens) nor in its
	# workers (forked, single-threaded: their calls write their live lines),
	# so both keep glibc's single-threaded paths.
	master=$(cat "$N/logs/nginx.pid" 2>/dev/null)
	workers=$(pgrep -P "${master:-0}" | tr '\n' ' ')
	th=""; for p in $master $workers; do th="$th $(ls /proc/$p/task 2>/dev/null | wc -l)"; done
	# (A worker that drops root writes into its master's file: by pid.)
	wt=$(for w in $workers; do cat "$N"/x-*.jsonl | jq -c --argjson w "$w" 'select(.event=="totals" and .pid==$w)'; done | grep -c .)
	want=" 1"; for w in $workers; do want="$want 1"; done
	if [ -n "$workers" ] && [ "$th" = "$want" ] && [ "$wt" -ge 1 ]; then
		ok "threads: nginx master and workers 1 each (none of ours); the workers' calls wrote $wt live totals lines"
	else fail "threads of nginx" "master $master workers $workers: threads$th (want$want), worker totals $wt"; fi
	kill -TERM $ng $up; wait $ng $up 2>/dev/null
	"$SA" report "$N"/x-*.jsonl >"$N/report.out" 2>&1
	n=$(sed -n 's/^  1\. connects never accepted: \([0-9]*\) connects\? to .*/\1/p' "$N/report.out")
	if [ -n "$n" ] && [ "${non2xx:-0}" -gt 0 ] && [ "$n" -le "$non2xx" ] && [ "$n" -ge $((non2xx / 2)) ]; then
		ok "nginx -> backlog 1 upstream: connects never accepted first ($n; ab saw $non2xx non-2xx)"
	else fail "nginx scenario: unaccepted cause first" "n ${n:-none}, ab non-2xx ${non2xx:-none}: $(sed -n '/Fix first/,+3p' "$N/report.out")"; fi
else
	fail "nginx scenario" "nginx or ab missing (scripts/ensure-deps.sh test)"
fi
finish
