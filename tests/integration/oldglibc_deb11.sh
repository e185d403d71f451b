#!/bin/bash
# A real run on an older glibc: inside a Debian 11 root (glibc 2.31, built
# once and cached by scripts/deb11-root.sh), that root's own python3 runs a
# server with a known backlog accepting a known number of connections under
# LD_PRELOAD=libsockaudit.so, and a client under the `sockaudit` launcher
# making those connections plus one refused one. The facts in both logs must
# equal the truth. Then a library that needs a newer glibc than the root's:
# the launcher says so in one line and runs the program without it.
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/deb11_lib.sh"
# A sanitizer build of the library and launcher needs its runtime preloaded
# first, which neither a chroot nor a musl program has: this is about the
# release build.
case ${SANITIZE:-} in ?*) echo "ok - old glibc (Debian 11 root) # SKIP SANITIZE=$SANITIZE build"; finish ;; esac

# The launcher's own floor, read from the file (make check-abi reads it too).
top=$(objdump -T "$TOP/sockaudit" | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1)
check "launcher: no symbol version above GLIBC_2.17 (highest: $top)" \
	[ "$(printf '%s\n' "$top" GLIBC_2.17 | sort -V | tail -1)" = GLIBC_2.17 ]
check "launcher: needs no libjansson at run time" [ -z "$(readelf -d "$TOP/sockaudit" | grep -i 'NEEDED.*jansson')" ]

deb11_root "old glibc (Debian 11 root)"
deb11_lock shared
ver=$(in_root getconf GNU_LIBC_VERSION 2>&1)
check "the root's C library is glibc 2.31 ($ver)" [ "$ver" = "glibc 2.31" ]

d=/tmp/sa-old.$$                    # inside the root
D=$R$d
mkdir -p "$D/old"; on_exit rm -rf "$D"
cp "$TOP/libsockaudit.so" "$TOP/sockaudit" "$D/"
cat >"$D/server.py" <<'PY'
import socket, sys
port, backlog, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
s = socket.socket()
s.bind(("127.0.0.1", port)); s.listen(backlog)
open(sys.argv[4], "w").close()
for i in range(n):
    c, _ = s.accept(); c.sendall(b"x"); c.close()
print("accepted", n)
PY
cat >"$D/client.py" <<'PY'
import socket, sys
port, n, closed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
got = 0
for i in range(n):
    c = socket.create_connection(("127.0.0.1", port)); got += c.recv(1) == b"x"; c.close()
try:
    socket.create_connection(("127.0.0.1", closed))
    refused = 0
except ConnectionRefusedError:
    refused = 1
print("connected", got, "refused", refused)
PY

# The truth: in a network namespace of ours with net.core.somaxconn 4,
# listen(7) keeps a backlog of 4; 5 connections accepted, 5 connects ok
# and 1 refused (nothing listens on the second port there).
B=7 N=5 somax=4 EFF=4
ns=sa-old-$$
ip netns add $ns || { fail "ip netns add $ns"; finish; }
on_exit ip netns del $ns
ip -n $ns link set lo up && ip netns exec $ns sysctl -qw net.core.somaxconn=$somax
export IN_NETNS=$ns
port=5000 closed=5001
in_root env SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=$d/server.jsonl LD_PRELOAD=$d/libsockaudit.so \
	python3 $d/server.py "$port" $B $N $d/ready >"$T/server.out" 2>"$T/server.err" &
spid=$!
for i in $(seq 100); do [ -e "$D/ready" ] && break; sleep 0.05; done
in_root $d/sockaudit -l trace -o $d/client.jsonl -- python3 $d/client.py "$port" $N "$closed" \
	>"$T/client.out" 2>"$T/client.err"; crc=$?
wait $spid; src=$?
check "server under LD_PRELOAD ran to the end (status $src, $(cat "$T/server.out") $(head -c 300 "$T/server.err"))" \
	[ "$src $(cat "$T/server.out")" = "0 accepted $N" ]
check "client under the launcher ran to the end (status $crc, $(cat "$T/client.out") $(head -c 300 "$T/client.err"))" \
	[ "$crc $(cat "$T/client.out")" = "0 connected $N refused 1" ]
check "the launcher said nothing on stderr" [ ! -s "$T/client.err" ]
cp "$D/server.jsonl" "$T/server.jsonl" 2>/dev/null; cp "$D/client.jsonl" "$T/client.jsonl" 2>/dev/null
json_facts() { jq -c -s "$2" "$1" 2>/dev/null; }
echo "# server log: $(json_facts "$T/server.jsonl" '[.[] | select(.event=="listen") | {backlog_requested, backlog_effective, somaxconn}] + [{accept_events: [.[] | select(.event=="accept" and .ret >= 0)] | length}] + [.[] | select(.event=="summary") | .listeners[0] | {accepts}]')"
echo "# client log: $(json_facts "$T/client.jsonl" '[.[] | select(.event=="connect") | .outcome + ":" + (.errno // "")] | group_by(.) | map({(.[0]): length}) | add')"
echo "# truth: backlog $B requested, $EFF kept (somaxconn $somax), $N accepted, $N connects ok, 1 ECONNREFUSED"
check_jq "listen: backlog_requested $B, backlog_effective $EFF (somaxconn $somax)" "$T/server.jsonl" \
	"[.[] | select(.event==\"listen\")] | length == 1 and .[0].backlog_requested == $B and .[0].backlog_effective == $EFF and .[0].somaxconn == $somax"
check_jq "accept: $N accept lines, and the summary counts $N accepts" "$T/server.jsonl" \
	"([.[] | select(.event==\"accept\" and .ret >= 0)] | length == $N) and ([.[] | select(.event==\"summary\") | .listeners[0].accepts] == [$N])"
check_jq "connect: $N ok and 1 ECONNREFUSED, in the lines and in the summary" "$T/client.jsonl" \
	"([.[] | select(.event==\"connect\" and .outcome==\"ok\")] | length == $N) and
	 ([.[] | select(.event==\"connect\" and .outcome==\"failed\" and .errno==\"ECONNREFUSED\")] | length == 1) and
	 ([.[] | select(.event==\"summary\") | .connects | [.ok, .failed]] == [[$N, 1]])"

# The launcher's own start-up (cli/floor/start.c) in a small program: its
# constructor, atexit handler and destructor run once each, argv and the
# exit status pass through, on glibc 2.31 as on this machine's.
if [ -f "$BUILD/cli/floor/start.o" ]; then
	printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' \
		'static void __attribute__((constructor)) c(void) { puts("ctor"); }' \
		'static void __attribute__((destructor)) d(void) { puts("dtor"); }' \
		'static void ae(void) { puts("atexit"); }' \
		'int main(int argc, char **argv) { atexit(ae); printf("main %d %s\n", argc, argv[1]); return 3; }' >"$T/st.c"
	cc -o "$D/st" -nostartfiles $(cc -print-file-name=crti.o) $(cc -print-file-name=crtbeginS.o) \
		"$BUILD/cli/floor/start.o" "$T/st.c" -lm $(cc -print-file-name=crtendS.o) $(cc -print-file-name=crtn.o)
	want=$(printf 'ctor\nmain 2 x\natexit\ndtor')
	"$D/st" x >"$T/st.here"; rc1=$?
	in_root $d/st x >"$T/st.old"; rc2=$?
	check "start-up: ctor, main, atexit, dtor once each, status 3, here and on 2.31 ($rc1 $rc2)" \
		[ "$rc1 $rc2 $(cat "$T/st.here")" = "3 3 $want" ] && [ "$(cat "$T/st.old")" = "$want" ]
else
	ok "start-up # SKIP the launcher is linked the usual way here (not x86_64 glibc, or a sanitizer build)"
fi

unset IN_NETNS

# A library that needs glibc 2.34 (what a build on Debian 12 binds by
# default) beside a copy of the launcher: plainly preloaded it stops the
# program; through the launcher the program runs without it, one line said.
printf '#include <pthread.h>\nstatic pthread_once_t o = PTHREAD_ONCE_INIT;\nstatic void f(void) {}\nvoid sa_fixture(void) { pthread_once(&o, f); }\n' >"$T/new.c"
cc -shared -fPIC -o "$D/old/libsockaudit.so" "$T/new.c"
cp "$TOP/sockaudit" "$D/old/"
need=$(objdump -T "$D/old/libsockaudit.so" | grep -o 'GLIBC_2\.[0-9]*' | sort -V | tail -1)
if [ "$need" != GLIBC_2.34 ]; then
	ok "library newer than the root's glibc # SKIP this compiler binds pthread_once to $need, not GLIBC_2.34"
else
	in_root env LD_PRELOAD=$d/old/libsockaudit.so python3 -c 'import sys; sys.exit(5)' 2>"$T/plain.err"; rc=$?
	check "plain LD_PRELOAD of a GLIBC_2.34 library stops python3 (status $rc: $(head -c 200 "$T/plain.err"))" \
		[ "$rc" = 1 ] && grep -q "GLIBC_2.34' not found" "$T/plain.err"
	in_root $d/old/sockaudit -o $d/old.jsonl -- python3 -c 'import sys; print("ran"); sys.exit(5)' \
		>"$T/old.out" 2>"$T/old.err"; rc=$?
	check "launcher: the program runs without the library, its status 5 kept (got $rc, $(cat "$T/old.out"))" \
		[ "$rc $(cat "$T/old.out")" = "5 ran" ]
	check "launcher: one line says why ($(cat "$T/old.err"))" \
		[ "$(cat "$T/old.err")" = "sockaudit: $d/old/libsockaudit.so needs glibc 2.34 and this system has 2.31: running python3 without it, nothing will be logged" ]
	check "launcher: and no log was written" [ ! -e "$D/old.jsonl" ]
fi
finish
