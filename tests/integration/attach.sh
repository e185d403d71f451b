#!/bin/bash
# sockaudit attach / detach on programs started plainly, under a bounded
# load the whole time: a Python threading HTTP server (attach, detach,
# attach again), the same server stopped (SIGSTOP) while we attach, real
# nginx (master and workers, then a reload), and the refusals (no such
# process, a static program, twice, a preloaded one, a user who may not
# trace it), each leaving the process as it was.
. "$(dirname "$0")/../lib.sh"
if [ -n "${SANITIZE:-}" ]; then
	echo "ok - attach # SKIP SANITIZE=$SANITIZE: a sanitizer's library cannot be loaded into a plain process"
	finish
fi
for b in python3 curl nginx ab setpriv; do
	command -v $b >/dev/null || { fail "$b not installed (scripts/ensure-deps.sh test)"; finish; }
done
SA="$TOP/sockaudit"

# A load that runs until $T/stop exists (60 s at most): one status code a line.
load() {   # load PORT OUT
	( end=$((SECONDS + 60)); while [ ! -e "$T/stop" ] && [ $SECONDS -lt $end ]; do
		curl -s -o /dev/null -m 5 -w '%{http_code}\n' "http://127.0.0.1:$1/" || echo fail
	done ) >"$2" &
	LOADPID=$!
}
stop_load() { touch "$T/stop"; wait "$LOADPID"; rm -f "$T/stop"; }
# await_load OUT N: N more answers in OUT (30 s at most), so that each phase
# (before, attached, detached, attached again) has requests in it however
# slow the machine is.
await_load() {
	local want=$(( $(wc -l <"$1") + $2 )) end=$((SECONDS + 30))
	while [ "$(wc -l <"$1")" -lt $want ] && [ $SECONDS -lt $end ]; do sleep 0.05; done
}

# ---- 1. Python's threading HTTP server: attach, detach, attach again ------
P=$(free_port)
mkdir -p "$T/www"; echo hi >"$T/www/index.html"
python3 -m http.server "$P" --bind 127.0.0.1 --directory "$T/www" >/dev/null 2>&1 &
PY=$!
on_exit "kill -9 $PY 2>/dev/null"
wait_port "$P" || { fail "python3 http.server did not start"; finish; }
load "$P" "$T/codes1"
await_load "$T/codes1" 4
"$SA" attach -o "$T/a1.jsonl" -l info "$PY" >"$T/at1.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q "attached; .* stopped for .* ms; log: $T/a1.jsonl" "$T/at1.out"; then
	ok "attach: rc 0, $(sed 's/.*attached; //' "$T/at1.out")"
else fail "attach" "rc $rc: $(cat "$T/at1.out")"; fi
await_load "$T/codes1" 6
"$SA" attach "$PY" >"$T/at2.out" 2>&1; rc=$?
check "attach twice: rc 1, 'already audited'" test $rc = 1 -a -n "$(grep 'already audited' "$T/at2.out")"
"$SA" detach "$PY" >"$T/de1.out" 2>&1; rc=$?
check "detach: rc 0 ($(sed 's/.*detached; //' "$T/de1.out"))" test $rc = 0
fds=$(ls -l /proc/$PY/fd 2>/dev/null | grep -c 'a1.jsonl')
check "after detach the log is closed in the process (no fd on it)" test "$fds" = 0
check "after detach the library stays mapped, inactive" grep -q libsockaudit "/proc/$PY/maps"
n1=$(wc -l <"$T/a1.jsonl")
sleep 0.5
await_load "$T/codes1" 4
check "after detach nothing more is written ($n1 lines)" test "$(wc -l <"$T/a1.jsonl")" = "$n1"
"$SA" attach -o "$T/a2.jsonl" "$PY" >"$T/at3.out" 2>&1; rc=$?
check "attach after detach: rc 0" test $rc = 0
await_load "$T/codes1" 6
"$SA" detach "$PY" >/dev/null 2>&1
stop_load
n=$(wc -l <"$T/codes1"); good=$(grep -cx 200 "$T/codes1")
check "the load: $n requests across attach, detach and attach, all 200" test "$n" -ge 20 -a "$good" = "$n"
check_jq "log 1: init says attached, with its time" "$T/a1.jsonl" \
	'.[0].event == "init" and .[0].attached == true and (.[0].attached_at | type) == "number"'
acc1=$(log_jq "$T/a1.jsonl" '[.[] | select(.event=="summary")][0].counts.accept // 0')
check "log 1: the summary counts the accepts made while attached ($acc1)" test "$acc1" -ge 3
bl=$(log_jq "$T/a1.jsonl" '[.[] | select(.event=="listener_stats")][0].backlog')
# The same server preloaded: its listen line's backlog.
P2=$(free_port)
# Until its listen line is written (20 s at most), however slow Python starts.
SOCKAUDIT_LOG="$T/pre.jsonl" LD_PRELOAD="$(preload_value)" timeout 25 python3 -m http.server "$P2" --bind 127.0.0.1 \
	--directory "$T/www" >/dev/null 2>&1 & PRE=$!
for i in $(seq 200); do grep -q '"event":"listen"' "$T/pre.jsonl" 2>/dev/null && break; sleep 0.1; done
kill $PRE 2>/dev/null; wait $PRE 2>/dev/null
pbl=$(log_jq "$T/pre.jsonl" '[.[] | select(.event=="listen")][0].backlog_requested')
check "the listener learnt at attach has the preloaded run's backlog ($bl vs $pbl)" test -n "$bl" -a "$bl" = "$pbl"
check_jq "log 2: its own init (attached) and summary" "$T/a2.jsonl" \
	'(map(select(.event=="init" and .attached)) | length) == 1 and (map(select(.event=="summary")) | length) == 1'

# ---- 2. A stopped process: stays stopped, runs on after SIGCONT -----------
kill -STOP "$PY"; sleep 0.2
"$SA" attach -o "$T/a3.jsonl" "$PY" >"$T/at4.out" 2>&1; rc=$?
sleep 0.3
st=$(awk '{print $3}' "/proc/$PY/stat")
check "attach to a stopped process: rc 0, still stopped after (state $st)" test $rc = 0 -a "$st" = T
kill -CONT "$PY"
code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$P/")
check "after SIGCONT it serves (HTTP $code)" test "$code" = 200
"$SA" detach "$PY" >/dev/null 2>&1
check_jq "the stopped process's requests after SIGCONT are counted" "$T/a3.jsonl" \
	'[.[] | select(.event=="summary")][0].counts.accept >= 1'
kill -TERM "$PY"; wait "$PY"; rc=$?
check "SIGTERM after the attaches ends it as plainly (status $rc, 143)" test $rc = 143

# ---- 2b. Connects: attached, the same figures as preloaded ---------------
# One Python program: its own listener (backlog 128, a thread accepting),
# then, on a signal file, 20 connects to it and 5 to a closed port. Run
# once preloaded and once attached before the signal, then detached: the
# summaries must count the same outcomes and time them alike.
cat >"$T/cl.py" <<'PY'
import socket, sys, time, os, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(128)
def serve():
    while True:
        c, _ = srv.accept(); c.close()
threading.Thread(target=serve, daemon=True).start()
r = socket.socket(); r.bind(("127.0.0.1", 0)); rport = r.getsockname()[1]; r.close()
open(sys.argv[1] + ".ready", "w").close()
end = time.time() + 20
while not os.path.exists(sys.argv[1]) and time.time() < end: time.sleep(0.05)
for i in range(20):
    socket.create_connection(("127.0.0.1", srv.getsockname()[1]), timeout=3).close()
for i in range(5):
    try: socket.create_connection(("127.0.0.1", rport), timeout=3)
    except OSError: pass
open(sys.argv[1] + ".done", "w").close()
time.sleep(20)
PY
cl_wait() { for i in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.05; done; return 1; }
SOCKAUDIT_LOG="$T/cpre.jsonl" LD_PRELOAD="$(preload_value)" python3 "$T/cl.py" "$T/g1" & CL=$!
on_exit "kill -9 $CL 2>/dev/null"
cl_wait "$T/g1.ready"; touch "$T/g1"; cl_wait "$T/g1.done"; kill "$CL"; wait "$CL" 2>/dev/null
python3 "$T/cl.py" "$T/g2" & CL=$!
on_exit "kill -9 $CL 2>/dev/null"
cl_wait "$T/g2.ready"
"$SA" attach -o "$T/catt.jsonl" "$CL" >/dev/null 2>&1; rc=$?
touch "$T/g2"; cl_wait "$T/g2.done"
"$SA" detach "$CL" >/dev/null 2>&1; rcd=$?
kill "$CL"; wait "$CL" 2>/dev/null
q='[.[] | select(.event=="summary")][0] | {ok: .connects.ok, failed: .connects.failed, n: .connect_ms.n, fast: (.connect_ms.p99 < 50)}'
pre=$(log_jq "$T/cpre.jsonl" "$q" | tr -d ' \n'); att=$(log_jq "$T/catt.jsonl" "$q" | tr -d ' \n')
if [ $rc = 0 ] && [ $rcd = 0 ] && [ "$pre" = '{"ok":20,"failed":5,"n":20,"fast":true}' ] && [ "$att" = "$pre" ]; then
	ok "connects attached as preloaded: $att (p99 preloaded $(log_jq "$T/cpre.jsonl" '[.[] | select(.event=="summary")][0].connect_ms.p99') ms, attached $(log_jq "$T/catt.jsonl" '[.[] | select(.event=="summary")][0].connect_ms.p99') ms)"
else fail "connects attached as preloaded" "rc $rc/$rcd preloaded $pre attached $att"; fi

# ---- 2c. The thread the call runs on has room on its stack ---------------
# attach_stack: a thread accepts; the main thread sleeps on its own stack
# ("main"), or on a 60 KiB stack of its own mapping, as a coroutine would
# ("small"). The library's first line (init) is written by the thread the
# call ran on: the main thread when its stack is the process's, else the
# acceptor (tests/progs/attach_stack.c prints its tid).
for m in main small; do
	"$PROGS/attach_stack" $m >"$T/as-$m.out" 2>&1 & AS=$!
	on_exit "kill -9 $AS 2>/dev/null"
	for i in $(seq 50); do grep -q '^PORT' "$T/as-$m.out" && break; sleep 0.1; done
	"$SA" attach -o "$T/as-$m.jsonl" "$AS" >/dev/null 2>&1; rc=$?
	python3 -c 'import socket,sys
for i in range(5): socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3).close()' \
		"$(awk '/^PORT/ {print $2}' "$T/as-$m.out")"
	"$SA" detach "$AS" >/dev/null 2>&1
	kill "$AS"; wait "$AS" 2>/dev/null
	tid=$(log_jq "$T/as-$m.jsonl" '[.[] | select(.event=="init")][0].tid')
	acc=$(log_jq "$T/as-$m.jsonl" '[.[] | select(.event=="summary")][0].counts.accept // 0')
	want=$AS; [ $m = small ] && want=$(awk '/^PORT/ {print $4}' "$T/as-$m.out")
	if [ $rc = 0 ] && [ "$tid" = "$want" ] && [ "$acc" -ge 4 ]; then
		ok "main thread on $m stack: the call ran on tid $tid ($([ $m = small ] && echo "the acceptor, not the 60 KiB stack" || echo "the main thread")), $acc accepts"
	else fail "the call's thread with the main thread on a $m stack" "rc $rc, init tid $tid, wanted $want, accepts $acc"; fi
done

# ---- 3. Refusals: the process as it was -----------------------------------
"$SA" attach 999999 >"$T/r1.out" 2>&1; rc=$?
check "no such process: rc 1, said" test $rc = 1 -a -n "$(grep 'no such process' "$T/r1.out")"
printf '#include <unistd.h>\nint main(void){sleep(30);return 0;}\n' >"$T/st.c"
if gcc -static -o "$T/st" "$T/st.c" 2>/dev/null; then
	"$T/st" & SP=$!
	on_exit "kill -9 $SP 2>/dev/null"
	sleep 0.2
	"$SA" attach "$SP" >"$T/r2.out" 2>&1; rc=$?
	check "a static program: rc 1, 'static program', it runs on" \
		test $rc = 1 -a -n "$(grep 'static program' "$T/r2.out")" -a -d "/proc/$SP" -a "$(awk '{print $3}' /proc/$SP/stat)" = S
	kill "$SP"
else fail "a static test program builds (gcc -static)"; fi
# A detach while the thread blocks in accept() through our wrapper (the
# attach's stop made the blocked call return into the program's loop, whose
# next accept is ours): when it returns after the detach, our part must not
# run (it crashed the program: nothing of the audit is set up then).
"$PROGS/acc_server" -b 16 -n 20 -T 30000 -m close >"$T/bd.out" 2>&1 & BP=$!
on_exit "kill -9 $BP 2>/dev/null"
for i in $(seq 50); do grep -q '^PORT' "$T/bd.out" && break; sleep 0.1; done
BPORT=$(awk '/^PORT/ {print $2}' "$T/bd.out")
"$SA" attach -o "$T/bd.jsonl" "$BP" >"$T/bd1.out" 2>&1; rc1=$?
sleep 0.3
"$SA" detach "$BP" >"$T/bd2.out" 2>&1; rc2=$?
python3 -c 'import socket,sys
for i in range(20): socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3).close()' "$BPORT" 2>"$T/bd3.out"
wait "$BP"; rc=$?
check "attach, detach while blocked in accept, then 20 connects: the program ends plainly (status $rc)" \
	test $rc1 = 0 -a $rc2 = 0 -a $rc = 0
# A musl program: the musl attach build (global-dynamic TLS, which musl's
# dlopen takes), a non-blocking accept loop (every accept after the attach
# goes through the wrappers), 30 connects audited, then detach and 10 more.
MLIB="$TOP/libsockaudit-musl-attach.so" MSRV="$TOP/build/musl/progs/acc_server"
if [ -f "$MLIB" ] && [ -x "$MSRV" ]; then
	"$MSRV" -N -b 16 -n 40 -T 30000 -m close >"$T/m.out" 2>&1 & MP=$!
	on_exit "kill -9 $MP 2>/dev/null"
	for i in $(seq 50); do grep -q '^PORT' "$T/m.out" && break; sleep 0.1; done
	MPORT=$(awk '/^PORT/ {print $2}' "$T/m.out")
	mconnect() { python3 -c 'import socket,sys
for i in range(int(sys.argv[2])):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3); s.close()' "$MPORT" "$1"; }
	"$SA" attach -o "$T/m.jsonl" -l info "$MP" >"$T/r6.out" 2>&1; rc=$?
	mconnect 30
	sleep 0.3
	"$SA" detach "$MP" >"$T/r6d.out" 2>&1; rcd=$?
	acc=$(log_jq "$T/m.jsonl" '[.[] | select(.event=="summary")][0].counts.accept // 0')
	lib=$(log_jq "$T/m.jsonl" '[.[] | select(.event=="init")][0].attached')
	if [ $rc = 0 ] && [ $rcd = 0 ] && [ "$acc" = 30 ] && [ "$lib" = true ]; then
		ok "a musl program: attached ($(sed 's/.*attached; //' "$T/r6.out" | cut -c1-60)), 30 accepts audited, detached"
	else fail "a musl program attached" "rc $rc/$rcd accepts $acc attached $lib: $(cat "$T/r6.out" "$T/r6d.out" | head -3)"; fi
	mconnect 10
	wait "$MP"; rc=$?
	check "the musl program ends as plainly after the detach (status $rc, its 40 accepts)" test $rc = 0
elif command -v musl-gcc >/dev/null; then
	fail "the musl attach library was built (make musl)" "$(tail -3 "$TOP/build/musl/build.log" 2>/dev/null)"
fi
if command -v prometheus-node-exporter >/dev/null; then
	P=$(free_port)
	prometheus-node-exporter --web.listen-address="127.0.0.1:$P" >/dev/null 2>&1 & GO=$!
	on_exit "kill -9 $GO 2>/dev/null"
	wait_port "$P"
	"$SA" attach "$GO" >"$T/r7.out" 2>&1; rc=$?
	code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$P/metrics")
	check "a Go program (node_exporter): rc 1, 'Go program', it serves on (HTTP $code)" \
		test $rc = 1 -a -n "$(grep 'Go program' "$T/r7.out")" -a "$code" = 200
	kill "$GO"
else fail "prometheus-node-exporter installed (scripts/ensure-deps.sh test): the Go case"; fi
sleep 30 & SL=$!
on_exit "kill -9 $SL 2>/dev/null"
setpriv --reuid=65534 --regid=65534 --clear-groups "$SA" attach "$SL" >"$T/r3.out" 2>&1; rc=$?
check "a user who may not trace it: rc 1, says why ($(head -c 90 "$T/r3.out"))" \
	test $rc = 1 -a -n "$(grep -E 'uid|ptrace' "$T/r3.out")" -a -d "/proc/$SL"
kill "$SL"
P3=$(free_port)
SOCKAUDIT_LOG="$T/pre2.jsonl" LD_PRELOAD="$(preload_value)" python3 -m http.server "$P3" --bind 127.0.0.1 \
	--directory "$T/www" >/dev/null 2>&1 &
PP=$!
on_exit "kill -9 $PP 2>/dev/null"
wait_port "$P3"
"$SA" attach "$PP" >"$T/r4.out" 2>&1; rc=$?
check "a preloaded process: rc 1, 'already audited'" test $rc = 1 -a -n "$(grep 'already audited' "$T/r4.out")"
"$SA" detach "$PP" >"$T/r5.out" 2>&1; rc=$?
check "detach of a preloaded process: rc 1, 'not attached'" test $rc = 1 -a -n "$(grep 'not attached' "$T/r5.out")"
kill "$PP"

# ---- 4. nginx, master and workers, then a reload --------------------------
P=$(free_port)
cat >"$T/nginx.conf" <<CONF
daemon off;
user root;
worker_processes 2;
error_log $T/error.log;
pid $T/nginx.pid;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $T; proxy_temp_path $T; fastcgi_temp_path $T; uwsgi_temp_path $T; scgi_temp_path $T;
  server { listen 127.0.0.1:$P; location / { return 200 "ok\n"; } }
}
CONF
nginx -c "$T/nginx.conf" -e "$T/error.log" &
NG=$!
on_exit "kill -9 $NG 2>/dev/null; pkill -9 -P $NG 2>/dev/null"
wait_port "$P" || { fail "nginx did not start"; finish; }
sleep 0.3
load "$P" "$T/codes2"
NPIDS="$NG $(pgrep -P "$NG" | tr '\n' ' ')"
"$SA" attach -o "$T/ng-%p.jsonl" -l info $NPIDS >"$T/ng.out" 2>&1; rc=$?
check "nginx: attach to master and workers ($NPIDS): rc 0, $(grep -c attached "$T/ng.out") attached" test $rc = 0
timeout 60 ab -q -n 400 -c 8 "http://127.0.0.1:$P/" >"$T/ab.out" 2>&1
check "ab: 400 requests while attached, none failed" grep -q "^Failed requests: *0" "$T/ab.out"
nginx -c "$T/nginx.conf" -e "$T/error.log" -s reload; sleep 1
NEW=$(pgrep -P "$NG" | tr '\n' ' ')
timeout 60 ab -q -n 200 -c 4 "http://127.0.0.1:$P/" >"$T/ab2.out" 2>&1
check "after nginx -s reload: ab, none failed" grep -q "^Failed requests: *0" "$T/ab2.out"
stop_load
kill -QUIT "$NG"; wait "$NG"; rc=$?
check "nginx -s quit: status $rc, as plainly" test $rc = 0
n=$(wc -l <"$T/codes2"); good=$(grep -cx 200 "$T/codes2")
check "the load across nginx's attach and reload: $n requests, all 200" test "$n" -ge 10 -a "$good" = "$n"
acc=$(cat "$T"/ng-*.jsonl | jq -s '[.[] | select(.event=="summary") | .counts.accept // 0] | add // 0')
check "the workers' logs count the accepts ($acc >= 400)" test "$acc" -ge 400
nnew=0; for w in $NEW; do [ -s "$T/ng-$w.jsonl" ] && nnew=$((nnew + 1)); done
check "the reload's new workers (forked by the attached master) have logs of their own ($nnew of $(echo $NEW | wc -w))" \
	test "$nnew" -ge 1

# ---- 5. A library the program loads with dlopen after the attach ---------
cat >"$T/plug.c" <<'C'
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
int plug_connect(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int c = socket(AF_INET, SOCK_STREAM, 0), r = connect(c, (struct sockaddr *)&a, sizeof a);
	close(c);
	return r;
}
C
cat >"$T/host.c" <<'C'
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	int l = socket(AF_INET, SOCK_STREAM, 0), ok = 0;
	bind(l, (struct sockaddr *)&a, sizeof a); listen(l, 8); getsockname(l, (struct sockaddr *)&a, &al);
	while (access(argv[2], F_OK) != 0) usleep(10000);   /* the attach comes first */
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*pc)(int) = h ? (int (*)(int))dlsym(h, "plug_connect") : NULL;
	for (int i = 0; pc && i < 3; i++) {
		if (pc(ntohs(a.sin_port)) == 0) { int s = accept(l, NULL, NULL); ok += s >= 0; close(s); }
	}
	printf("accepted %d\n", ok);
	return 0;
}
C
if gcc -shared -fPIC -o "$T/plug.so" "$T/plug.c" && gcc -o "$T/host" "$T/host.c" -ldl; then
	"$T/host" "$T/plug.so" "$T/go" >"$T/host.out" & HP=$!
	on_exit "kill -9 $HP 2>/dev/null"
	sleep 0.2
	"$SA" attach -o "$T/plug.jsonl" -l trace "$HP" >/dev/null 2>&1; rc=$?
	touch "$T/go"; wait "$HP"; hrc=$?
	c=$(log_jq "$T/plug.jsonl" '[.[] | select(.event=="connect")] | length')
	check "a library dlopen'd after the attach is redirected: its 3 connects audited ($c), host status $hrc" \
		test $rc = 0 -a "$hrc" = 0 -a "$c" = 3 -a "$(cat "$T/host.out")" = "accepted 3"
else fail "the dlopen test's program and library build"; fi

# ---- 6. redis and haproxy ------------------------------------------------
if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
	P=$(free_port)
	redis-server --port "$P" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & RS=$!
	on_exit "kill -9 $RS 2>/dev/null"
	wait_port "$P"
	"$SA" attach -o "$T/redis.jsonl" "$RS" >/dev/null 2>&1; rc=$?
	ok_n=0; for i in $(seq 30); do [ "$(redis-cli -p "$P" ping)" = PONG ] && ok_n=$((ok_n + 1)); done
	"$SA" detach "$RS" >/dev/null 2>&1
	acc=$(log_jq "$T/redis.jsonl" '[.[] | select(.event=="summary")][0].counts.accept // 0')
	check "redis: attached (rc $rc), 30 of 30 PINGs answered ($ok_n), the accepts counted ($acc)" \
		test $rc = 0 -a $ok_n = 30 -a "$acc" -ge 30
	kill -TERM "$RS"; wait "$RS"; rc=$?
	check "redis ends as plainly after the detach (status $rc)" test $rc = 0
else fail "redis-server installed (scripts/ensure-deps.sh test)"; fi
if command -v haproxy >/dev/null; then
	B=$(free_port) P=$(free_port)
	python3 -m http.server "$B" --bind 127.0.0.1 --directory "$T/www" >/dev/null 2>&1 & BK=$!
	on_exit "kill -9 $BK 2>/dev/null"
	cat >"$T/h.cfg" <<CFG
global
  maxconn 100
  nbthread 2
defaults
  mode http
  timeout connect 3s
  timeout client 5s
  timeout server 5s
  http-reuse never
frontend fe
  bind 127.0.0.1:$P
  default_backend be
backend be
  server s1 127.0.0.1:$B
CFG
	haproxy -db -f "$T/h.cfg" >"$T/h.err" 2>&1 & HA=$!
	on_exit "kill -9 $HA 2>/dev/null"
	wait_port "$B"; wait_port "$P"
	"$SA" attach -o "$T/haproxy.jsonl" "$HA" >"$T/ha.out" 2>&1; rc=$?
	good=0; for i in $(seq 30); do [ "$(curl -s -m 5 "http://127.0.0.1:$P/")" = hi ] && good=$((good + 1)); done
	"$SA" detach "$HA" >/dev/null 2>&1
	acc=$(log_jq "$T/haproxy.jsonl" '[.[] | select(.event=="summary")][0].counts | (.accept // 0)')
	con=$(log_jq "$T/haproxy.jsonl" '[.[] | select(.event=="summary")][0].connects.ok // 0')
	check "haproxy (2 threads): attached (rc $rc, $(grep -o '[0-9]* threads* stopped' "$T/ha.out")), 30 of 30 replies ($good), accepts $acc, backend connects $con" \
		test $rc = 0 -a $good = 30 -a "$acc" -ge 30 -a "$con" -ge 30
	kill -USR1 "$HA"; wait "$HA"; rc=$?
	check "haproxy's soft stop after the detach: status $rc, as plainly" test $rc = 0
fi

# ---- 7. A JVM: its calls come from libnio.so, not the executable ---------
if command -v java >/dev/null && java --list-modules 2>/dev/null | grep -q '^jdk.compiler'; then
	P=$(free_port)
	cat >"$T/S.java" <<'JAVA'
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
public class S {
    public static void main(String[] a) throws Exception {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(a[0])), 50);
        s.createContext("/", x -> { byte[] b = "hi\n".getBytes(); x.sendResponseHeaders(200, b.length);
            x.getResponseBody().write(b); x.close(); });
        s.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(4));
        s.start();
    }
}
JAVA
	java "$T/S.java" "$P" >"$T/java.out" 2>&1 & JV=$!
	on_exit "kill -9 $JV 2>/dev/null"
	for i in $(seq 300); do ss -Hltn "sport = :$P" | grep -q . && break; sleep 0.1; done
	"$SA" attach -o "$T/java.jsonl" "$JV" >"$T/jv.out" 2>&1; rc=$?
	good=0; for i in $(seq 20); do [ "$(curl -s -m 5 "http://127.0.0.1:$P/")" = hi ] && good=$((good + 1)); done
	"$SA" detach "$JV" >/dev/null 2>&1
	acc=$(log_jq "$T/java.jsonl" '[.[] | select(.event=="summary")][0].counts.accept // 0')
	check "a JVM ($(grep -o '[0-9]* threads stopped for [0-9.]* ms' "$T/jv.out")): 20 of 20 replies ($good), its libnio accepts counted ($acc)" \
		test $rc = 0 -a $good = 20 -a "$acc" -ge 20
	kill "$JV"
else
	echo "ok - a JVM # SKIP no java with jdk.compiler here (openjdk-17-jdk-headless)"
fi
finish
