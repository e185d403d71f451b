#!/bin/bash
# bench/attach.sh: how long `sockaudit attach` and `detach` stop a running
# program, and what a client sees across them.
#   1. nginx (master + 1 worker, bench/nginx_conf.sh): ATTACH_ROUNDS attach and
#      detach rounds on each process; the milliseconds each stop lasted (from
#      the first thread stopped to the last let go), as sockaudit prints them;
#   2. a 16-thread server (python3: 16 threads blocked in accept() on one
#      listener, each answering its connections): the same;
#   3. request latency: ab -n ATTACH_N -c 8 against nginx twice, alone and with an
#      attach and a detach of master and worker every 0.5 s during it; ab's
#      50/99/100 % lines side by side.
# Usage: bench/attach.sh   (env: ATTACH_ROUNDS (10), ATTACH_N (20000), NGINX)
set -u
. "$(dirname "$0")/nginx_conf.sh"
TOP=$(cd "$(dirname "$0")/.." && pwd)
SA=$TOP/sockaudit
NGINX=${NGINX:-/usr/sbin/nginx}
R=${ATTACH_ROUNDS:-10}
N=${ATTACH_N:-20000}
T=$(mktemp -d /tmp/sa-attach.XXXXXX)
PIDS=()
# nginx's master is sent QUIT (a SIGKILL'd master leaves its worker holding our stdout).
trap 'kill -QUIT "${PIDS[@]}" 2>/dev/null; sleep 0.5; kill -9 "${PIDS[@]}" 2>/dev/null; pkill -9 -P "${PIDS[0]:-0}" 2>/dev/null
	wait 2>/dev/null; rm -rf "$T"' EXIT
for b in "$NGINX" ab python3; do
	command -v "$b" >/dev/null || { echo "attach.sh: $b is not installed (scripts/ensure-deps.sh bench)" >&2; exit 2; }
done
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
up() { for _ in $(seq 100); do ss -Hltn "sport = :$1" | grep -q . && return 0; sleep 0.05; done; return 1; }
# rounds NAME PID...: R attach/detach rounds; the stop times, sorted.
rounds() {
	local name=$1 i
	shift
	: >"$T/at" ; : >"$T/de"
	for i in $(seq "$R"); do
		"$SA" attach -o "$T/log-%p.jsonl" "$@" | sed -n 's/.*stopped for \([0-9.]*\) ms.*/\1/p' >>"$T/at"
		sleep 0.1
		"$SA" detach "$@" | sed -n 's/.*stopped for \([0-9.]*\) ms.*/\1/p' >>"$T/de"
		sleep 0.1
	done
	for k in at de; do
		sort -n "$T/$k" | awk -v name="$name" -v k="$k" '{ v[NR] = $1 } END {
			printf "%-28s %-7s n %3d  median %6.1f ms  p90 %6.1f ms  max %6.1f ms\n", name, k == "at" ? "attach" : "detach",
			NR, v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.5)], v[NR] }'
	done
}

echo "sockaudit attach/detach stop times: nproc $(nproc), kernel $(uname -r), $R rounds each"
P=$(port)
mkdir -p "$T/ng"
write_nginx_conf "$T/ng" "$P"
"$NGINX" -p "$T/ng" -c "$T/ng/nginx.conf" -e "$T/ng/error.log" & NG=$!
PIDS+=("$NG")
up "$P" || { echo "attach.sh: nginx did not start" >&2; exit 2; }
sleep 0.3
W=$(pgrep -P "$NG" | head -1)
rounds "nginx master + worker" "$NG" "$W"

P2=$(port)
python3 - "$P2" <<'PY' &
import socket, sys, threading
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(128)
def serve():
    while True:
        c, _ = l.accept(); c.recv(4096); c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n"); c.close()
ts = [threading.Thread(target=serve, daemon=True) for _ in range(16)]
[t.start() for t in ts]; [t.join() for t in ts]
PY
PY=$!
PIDS+=("$PY")
up "$P2" || { echo "attach.sh: the 16-thread server did not start" >&2; exit 2; }
echo "(the 16-thread server: $(ls /proc/$PY/task | wc -l) threads)"
rounds "python3, 16 threads in accept" "$PY"

echo "request latency, ab -n $N -c 8 against nginx, alone and across attach/detach every 0.5 s:"
ab -q -n "$N" -c 8 "http://127.0.0.1:$P/" >"$T/ab.plain" 2>&1
: >"$T/flip"
( while [ -e "$T/flip" ]; do "$SA" attach -o "$T/l-%p.jsonl" "$NG" "$W" >/dev/null 2>&1; sleep 0.25
	"$SA" detach "$NG" "$W" >/dev/null 2>&1; sleep 0.25; done ) &
FL=$!
ab -q -n "$N" -c 8 "http://127.0.0.1:$P/" >"$T/ab.flip" 2>&1
rm -f "$T/flip"; wait "$FL"
for f in plain flip; do
	printf '  %-28s failed %s  p50 %s ms  p99 %s ms  max %s ms\n' "$([ $f = plain ] && echo alone || echo 'attach+detach every 0.5 s')" \
		"$(awk '/^Failed requests/ {print $3}' "$T/ab.$f")" "$(awk '$1 == "50%" {print $2}' "$T/ab.$f")" \
		"$(awk '$1 == "99%" {print $2}' "$T/ab.$f")" "$(awk '$1 == "100%" {print $2}' "$T/ab.$f")"
done
