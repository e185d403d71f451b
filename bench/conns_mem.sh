#!/bin/bash
# bench/conns_mem.sh: what tracked connections cost a server in memory, and
# whether it comes back when they close.
#
# nginx (1 worker, return 200) plain and under the shim; a client opens
# CONNS idle connections (one request each, kept alive), then closes them.
# Prints the worker's private dirty memory (smaps_rollup) before, with the
# connections open, and after they closed, and the shim's share per
# connection (shim arm minus plain arm, divided by CONNS).
# Usage: bench/conns_mem.sh [CONNS]  (env: SA_LIB, NGINX)
set -u
. "$(dirname "$0")/nginx_conf.sh"
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
NGINX=${NGINX:-/usr/sbin/nginx}
CONNS=${1:-10000}
ulimit -n $((CONNS + 500)) 2>/dev/null || { echo "conns_mem.sh: cannot raise RLIMIT_NOFILE to $((CONNS + 500))" >&2; exit 2; }
T=$(mktemp -d /tmp/sa-cmem.XXXXXX)
chmod 755 "$T"
MASTER=
trap '[ -n "$MASTER" ] && kill -KILL "$MASTER" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
priv() { awk '/^Private_Dirty:/ { s += $2 } END { print s + 0 }' "/proc/$1/smaps_rollup"; }

cat >"$T/client.py" <<'PY'
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
socks = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    socks.append(s)
for s in socks:
    s.recv(4096)
print("open", flush=True)
sys.stdin.readline()
for s in socks:
    s.close()
print("closed", flush=True)
sys.stdin.readline()
PY

# arm NAME ENV...: prints "before open after" kB of the worker
arm() {
	local d=$T/$1 port=$((12000 + RANDOM % 20000)) w= i
	shift
	mkdir -p "$d"; chmod 777 "$d"
	write_nginx_conf "$d" "$port"
	sed -i "s/worker_connections 4096;/worker_connections $((CONNS + 100));/; s/http {/http { keepalive_timeout 600s;/" "$d/nginx.conf"
	env "$@" "$NGINX" -p "$d" -c "$d/nginx.conf" -e "$d/error.log" >/dev/null 2>&1 &
	MASTER=$!
	for i in $(seq 100); do
		[ -s "$d/nginx.pid" ] && w=$(pgrep -P "$(cat "$d/nginx.pid")" | head -1)
		[ -n "$w" ] && ss -Hltn "sport = :$port" | grep -q . && break
		sleep 0.05
	done
	[ -n "$w" ] || { echo "conns_mem.sh: nginx did not start" >&2; exit 2; }
	ab -q -n 200 -c 4 "http://127.0.0.1:$port/" >/dev/null 2>&1
	local b o a
	b=$(priv "$w")
	coproc CL { python3 "$T/client.py" "$port" "$CONNS"; }
	read -r _ <&"${CL[0]}"
	sleep 0.5; o=$(priv "$w")
	echo >&"${CL[1]}"; read -r _ <&"${CL[0]}"
	sleep 1.5; a=$(priv "$w")
	echo >&"${CL[1]}"; wait "$CL_PID" 2>/dev/null
	kill -QUIT "$MASTER"; wait "$MASTER" 2>/dev/null; MASTER=
	echo "$b $o $a"
}
read -r pb po pa <<<"$(arm plain)"
read -r sb so sa <<<"$(arm shim LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/audit.jsonl")"
echo "nginx worker private dirty memory (kB), $CONNS idle connections; nproc $(nproc); kernel $(uname -r)"
printf '%-6s %8s %10s %8s\n' arm before "$CONNS open" closed
printf '%-6s %8s %10s %8s\n' plain "$pb" "$po" "$pa" shim "$sb" "$so" "$sa"
awk -v pb="$pb" -v po="$po" -v pa="$pa" -v sb="$sb" -v so="$so" -v sa="$sa" -v n="$CONNS" 'BEGIN {
	printf "shim adds with the connections open: %+d kB (%.0f B per connection)\n", (so - sb) - (po - pb), 1024 * ((so - sb) - (po - pb)) / n
	printf "shim keeps after they closed:        %+d kB\n", (sa - sb) - (pa - pb) }'
