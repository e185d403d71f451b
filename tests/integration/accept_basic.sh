#!/bin/bash
# Accept side on loopback: accept waits with TCP_DEFER_ACCEPT, empty
# connections and their cause, queue age and depth, who speaks first, and
# listener_stats. Every case runs at once; the longest (D=2) takes ~3 s.
. "$(dirname "$0")/../lib.sh"

# scenario NAME "SERVER ARGS" "CLIENT ARGS" [ENV...]: runs acc_server under the
# shim (trace level) and acc_client against it; the log is $T/NAME.jsonl.
scenario() {
	local name=$1 sargs=$2 cargs=$3 i port; shift 3
	env SOCKAUDIT_LEVEL=${SOCKAUDIT_LEVEL:-trace} SOCKAUDIT_LOG="$T/$name.jsonl" "$@" LD_PRELOAD="$(preload_value)" \
		"$PROGS/acc_server" $sargs >"$T/$name.out" 2>/dev/null &
	local spid=$!
	for i in $(seq 100); do grep -q PORT "$T/$name.out" 2>/dev/null && break; sleep 0.02; done
	port=$(awk '/PORT/{print $2}' "$T/$name.out")
	"$PROGS/acc_client" -p "$port" $cargs 2>/dev/null
	wait $spid
}

# nginx-like: the parent listens, two forked workers accept on the inherited
# listener; each worker's listener_stats are its own.
fork_workers() {
	cat >"$T/workers.py" <<'PY'
import os, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
port = s.getsockname()[1]
kids = []
for w in range(2):
    pid = os.fork()
    if pid == 0:
        for i in range(3):
            c, _ = s.accept(); c.recv(100); c.sendall(b"ok"); c.close()
        sys.exit(0)
    kids.append(pid)
for i in range(6):
    c = socket.create_connection(("127.0.0.1", port)); c.sendall(b"GET / HTTP/1.0\r\n\r\n"); c.recv(10); c.close()
for k in kids:
    os.waitpid(k, 0)
PY
	SOCKAUDIT_LEVEL=info SOCKAUDIT_LOG="$T/workers.jsonl" LD_PRELOAD="$(preload_value)" timeout 10 /usr/bin/python3 "$T/workers.py"
}

# at_once CMD...: the cases run side by side; on a slow machine (SA_SLOW > 1,
# tests/lib.sh) one after another instead: ten programs starting at once on
# two emulated CPUs take longer to start than the windows below leave them
# (a client must connect well inside the server's deferral or pause).
at_once() { if [ "$SA_SLOW" -gt 1 ]; then "$@"; else "$@" & fi; }
# Backlog 200 keeps the listen-time defer_bypass_risk finding out of the negative cases.
at_once scenario d1      "-b 200 -d 1 -n 1 -T 4000"                "-c 1 -s -1 -H 1500"
at_once scenario d2      "-b 200 -d 2 -n 1 -T 5000"                "-c 1 -s -1 -H 3500"
at_once scenario speaks  "-b 200 -d 1 -n 1 -T 4000 -m read"        "-c 1 -s 200 -H 800"
at_once scenario queued  "-Q -P 600 -n 1 -T 4000 -m read"          "-c 1 -s 0 -H 1000"
# full: the 8 clients must all connect inside the server's pause.
FP=$(slack 300)
at_once scenario full    "-b 3 -P $FP -n 8 -T $((2700 + FP))"      "-c 8 -s -1 -H $((2200 + FP))"
at_once scenario banner  "-b 200 -d 1 -n 1 -T 4000 -m banner"      "-c 1 -s -1 -H 1800"
at_once scenario http    "-N -n 10 -T 3000 -m read"                "-c 10 -s 150 -G 150 -H 2200" SOCKAUDIT_STATS_INTERVAL=1
at_once scenario threads "-t 4 -n 40 -T 4000 -m read"            "-c 40 -s 30 -G 5 -H 1500"
at_once fork_workers
# Out of fds: fd 4 is the last one allowed, so the second accept fails with
# EMFILE and the server retries for 1 s (a busy loop, as a naive server would;
# long enough that a client slowed by a loaded machine still connects in it).
SOCKAUDIT_LEVEL=info at_once scenario fdlimit "-L 5 -n 3 -T 1000 -m hold" "-c 3 -s 0 -H 600"
wait

A='[.[] | select(.event=="accept")]'
# The deferral window is the kernel's (1 s, 3 s); the margin above it is the
# client's time to start and connect, which a slow machine stretches (slack).
M1=$((1000 + $(slack 500))) M2=$((3000 + $(slack 600)))
check_jq "D=1 silent client: accept after ~1 s, empty, SYN-ACK resent, flagged" "$T/d1.jsonl" \
  "$A | length==1 and (.[0] | .wait_ms>900 and .wait_ms<$M1 and .bytes_ready==0 and .syn_ack_retrans>=1 and .listen_fd==3 and (.peer|test(\"^127.0.0.1:\")) and (.local|test(\"^127.0.0.1:\")) and .findings==[\"empty_accept_defer_expired\"] and (.msg|test(\"1 s\")))"
check_jq "D=2 (kernel: 3 s) silent client: accept after ~3 s, empty, flagged" "$T/d2.jsonl" \
  "$A | length==1 and (.[0] | .wait_ms>2700 and .wait_ms<$M2 and .bytes_ready==0 and .findings==[\"empty_accept_defer_expired\"] and (.msg|test(\"3 s\")))"
check_jq "client speaking after 0.2 s: accepted with data, no finding anywhere" "$T/speaks.jsonl" \
  "($A | length==1 and (.[0] | .wait_ms>150 and .wait_ms<900 and .bytes_ready>0 and .syn_ack_retrans==0)) and all(.[]; .findings==null or (.findings|type)==\"object\")"
check_jq "connection left 0.6 s in the queue: queue_ms ~600" "$T/queued.jsonl" \
  "$A | length==1 and (.[0] | .queue_ms>=550 and .queue_ms<=750 and .wait_ms<50 and .findings==null)"
check_jq "backlog 3, 8 pending clients: accept_queue_full with the backlog needed" "$T/full.jsonl" \
  "$A | (.[0] | .queue_capacity==4 and .queue_len==3 and (.findings|index(\"accept_queue_full\")) and (.msg|test(\"Fix: backlog [0-9]+ or more\"))) and (map(select(.findings)) | length) < length"
check_jq "queue full: listener_stats counts it and advises a bigger backlog" "$T/full.jsonl" \
  'any(.[]; .event=="listener_stats" and .queue_full_seen>=1 and .peak_waiting==4 and .accepts==8 and any(.advice[]; test("Fix: backlog 8 or more")))'
check_jq "server-first protocol on a deferred listener: server_speaks_first_deferred" "$T/banner.jsonl" \
  'any(.[]; .event=="first_speaker" and .speaker=="server" and .findings==["server_speaks_first_deferred"] and (.msg|test("TCP_DEFER_ACCEPT"))) and any(.[]; .event=="listener_stats" and .first_speaker.server==1 and any(.advice[]; test("server speaks first")))'
check_jq "HTTP-like listener: listener_stats with first_speaker.client and with_data_pct" "$T/http.jsonl" \
  '[.[] | select(.event=="listener_stats")] | length>=2 and (last | .accepts==10 and .first_speaker.client==10 and .first_speaker.server==0 and (.with_data_pct|type)=="number" and .eagain>=1 and .errors==0 and .wait_ms.n==10 and .queue_ms.n==10 and (.queue_ms|has("p99")) and (.advice|type)=="array")'
check_jq "HTTP-like listener: no finding, periodic line before the exit line" "$T/http.jsonl" \
  'all(.[]; .findings==null or (.findings|type)=="object") and ([.[] | select(.event=="listener_stats")][0].accepts < 10)'
check_jq "summary lists the listener" "$T/http.jsonl" \
  'any(.[]; .event=="summary" and (.listeners|length)==1 and .listeners[0].accepts==10)'
check_jq "4 threads accepting on one listener: every connection counted once" "$T/threads.jsonl" \
  '([.[] | select(.event=="accept" and .ret>=0)] | length)==40 and any(.[]; .event=="listener_stats" and .accepts==40 and .first_speaker.client==40 and .wait_ms.n==40 and .queue_ms.n>=1 and .queue_ms.n<=40)'
check_jq "EMFILE: accept_fd_limit naming RLIMIT_NOFILE, logged 1st/2nd/4th... not every time" "$T/fdlimit.jsonl" \
  '[.[] | select(.event=="accept" and .errno=="EMFILE")] as $e | ($e|length)>=2 and all($e[]; .findings==["accept_fd_limit"] and (.msg|test("RLIMIT_NOFILE"))) and any($e[]; .queue_len>=1) and any(.[]; .event=="listener_stats" and .fd_limit>=10 and .errors==.fd_limit and .fd_limit > 2*($e|length) and .accepts==1)'
check_jq "forked workers on an inherited listener: each has its own listener_stats" "$T/workers.jsonl" \
  '[.[] | select(.event=="listener_stats")] as $l | ($l|length)==2 and ($l|map(.pid)|unique|length)==2 and all($l[]; .accepts==3 and .first_speaker.client==3 and .listen_fd==3) and ([.[] | select(.event=="summary" and .listeners==[])]|length)==1'
[ -n "${KEEP:-}" ] && cp -r "$T" "$KEEP"
# errno across accept4, as the host sees it, over a listener's first 64
# (full audit), the counted ones after (the wrapper keeps no errno copy
# there), their samples, and EAGAIN: 300 rounds at info and at trace.
for lvl in info trace; do
	out=$(SOCKAUDIT_LEVEL=$lvl SOCKAUDIT_LOG=$T/errno.$lvl.jsonl preload "$PROGS/accept_errno" 300 2>&1)
	check "$lvl: errno after a successful accept4 is the host's, EAGAIN on an empty queue ($out)" \
		test "$out" = "accepted 300 bad 0 eagain_bad 0"
done
finish
