#!/bin/bash
# The sockaudit launcher and `sockaudit report`: environment it sets, exit
# status passed through, -o - on stdout only, errors like a shell's, the
# report on real, hand-written and hostile logs, and make install.
. "$(dirname "$0")/../lib.sh"
SA=$TOP/sockaudit
PY=/usr/bin/python3
# Under make SANITIZE=..., the sanitizer runtime must be preloaded ahead of
# the shim: hand it to the launcher in LD_PRELOAD, which keeps it first.
# Only programs that load the shim get the runtime (shells crash under a
# preloaded TSan runtime): run_real wraps those.
SAN_RT=
case ",${SANITIZE:-}," in
*,address,*) SAN_RT=$(${SAN_CC:-gcc} -print-file-name=libasan.so)
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} ;;
*,thread,*) SAN_RT=$(${SAN_CC:-gcc} -print-file-name=libtsan.so) ;;
esac
run_real() { if [ -n "$SAN_RT" ]; then LD_PRELOAD=$SAN_RT "$@"; else "$@"; fi; }

# ---- launcher against a stub library: what it puts in the environment ----
mkdir -p "$T/stub"
cp "$SA" "$T/stub/sockaudit"
echo 'int sockaudit_stub_only;' | cc -shared -fPIC -x c - -o "$T/stub/libsockaudit.so"
S=$T/stub/sockaudit
env_of() { "$S" "$@" -- env; }
out=$(LD_PRELOAD=/nonexistent-a.so SOCKAUDIT_LOG=/tmp/x env_of -l trace --comm nginx,curl 2>/dev/null)
check "launcher: library first in LD_PRELOAD, existing entries kept" \
	grep -qx "LD_PRELOAD=$T/stub/libsockaudit.so:/nonexistent-a.so" <<<"$out"
check "launcher: no -o means SOCKAUDIT_LOG=stderr" grep -qx "SOCKAUDIT_LOG=stderr" <<<"$out"
check "launcher: -l sets SOCKAUDIT_LEVEL" grep -qx "SOCKAUDIT_LEVEL=trace" <<<"$out"
check "launcher: --comm sets SOCKAUDIT_COMM" grep -qx "SOCKAUDIT_COMM=nginx,curl" <<<"$out"
out=$(cd "$T" && env_of -o rel-%p.jsonl)
check "launcher: -o relative path made absolute" grep -qx "SOCKAUDIT_LOG=$T/rel-%p.jsonl" <<<"$out"
# -o -: fd:1, stdout itself: no duplicate that a daemon would keep open.
out=$("$S" -o - -- bash -c 'n=${SOCKAUDIT_LOG#fd:}; echo "via-fd" >&$n; echo "$SOCKAUDIT_LOG"; (cd /proc/$$/fd && echo *)' 2>"$T/err")
check "launcher: -o - gives fd:N that writes to stdout" grep -q "^via-fd$" <<<"$out"
check "launcher: -o - value is fd:1" grep -qx "fd:1" <<<"$out"
# The same command line without the launcher (the fds a shell shows depend
# on how it runs its commands, not only on what it inherited). The list is
# read by a subshell while bash waits: `ls | tr` raced bash's pipe fds.
plainfds=$(SOCKAUDIT_LOG=fd:1 bash -c 'n=${SOCKAUDIT_LOG#fd:}; echo "via-fd" >&$n; echo "$SOCKAUDIT_LOG"; (cd /proc/$$/fd && echo *)' 2>"$T/err" | tail -1)
check "launcher: -o - leaves no extra fd in the program ($(tail -1 <<<"$out"); plain $plainfds)" test "$(tail -1 <<<"$out")" = "$plainfds"

"$S" -- sh -c 'exit 7'; rc=$?
check "launcher: exit status 7 passed through (got $rc)" test $rc = 7
rc=$( ("$S" -- sh -c 'kill -TERM $$'; echo $?) 2>/dev/null)
check "launcher: death by SIGTERM passed through (got $rc)" test $rc = 143
"$S" -- sa-no-such-command-xyz 2>"$T/err"; rc=$?
check "launcher: command not found -> 127 (got $rc)" test $rc = 127
check "launcher: command not found message" grep -q "sa-no-such-command-xyz: command not found" "$T/err"
echo "echo hi" >"$T/notexec"; chmod 644 "$T/notexec"
"$S" -- "$T/notexec" 2>/dev/null; rc=$?
check "launcher: not executable -> 126 (got $rc)" test $rc = 126
for args in "" "-l debug ls" "-x ls" "--bogus ls" "-o" "--comm"; do
	# shellcheck disable=SC2086
	"$S" $args >"$T/out" 2>"$T/err"; rc=$?
	if [ $rc = 2 ] && grep -q "^sockaudit: " "$T/err" && [ ! -s "$T/out" ]; then
		ok "launcher: bad arguments '$args' -> 2 with a message"
	else fail "launcher: bad arguments '$args'" "rc=$rc err=$(head -1 "$T/err")"; fi
done
"$S" --help >"$T/out" 2>"$T/err"; rc=$?
check "launcher: --help on stdout, status 0" test $rc = 0 -a ! -s "$T/err"
check "launcher: --help shows usage" grep -q "^usage: sockaudit \[-o FILE|-\]" "$T/out"
# Options after COMMAND belong to COMMAND.
out=$("$S" -- sh -c 'echo "$@"' sh -l -o x 2>&1)
check "launcher: COMMAND's own options untouched" test "$out" = "-l -o x"

# ---- launcher with the real library: a Python HTTP-like server + client ----
cat >"$T/hc.py" <<'EOF'
import socket, sys, threading
n, status = int(sys.argv[1]), int(sys.argv[2])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 10)
srv.bind(("127.0.0.1", 0))
srv.listen(16)
port = srv.getsockname()[1]
def serve():
    for _ in range(n):
        c, _ = srv.accept()
        req = b""
        while b"\r\n\r\n" not in req:
            d = c.recv(1024)
            if not d:
                break
            req += d
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi")
        c.close()
t = threading.Thread(target=serve)
t.start()
served = 0
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET / HTTP/1.0\r\nHost: t\r\n\r\n")
    data = b""
    while True:
        d = s.recv(1024)
        if not d:
            break
        data += d
    s.close()
    served += data.endswith(b"hi")
t.join()
print("served", served)
sys.exit(status)
EOF
run_real "$SA" -o "$T/a.jsonl" -l trace -- $PY "$T/hc.py" 5 3 >"$T/out" 2>"$T/err"; rc=$?
check "real: exit status 3 of the Python program passed through (got $rc)" test $rc = 3
check "real: the program worked under the shim" grep -qx "served 5" "$T/out"
check "real: nothing on stderr with -o FILE" test ! -s "$T/err"
check_jq "real: log has init, listen, accept, connect" "$T/a.jsonl" \
	'(map(.event) | (index("init") and index("listen") and index("accept") and index("connect"))) != null'
check_jq "real: log has listener_stats" "$T/a.jsonl" 'any(.[]; .event == "listener_stats")'
check_jq "real: log has a summary" "$T/a.jsonl" 'any(.[]; .event == "summary")'
check_jq "real: TCP_DEFER_ACCEPT 10 read back as 15" "$T/a.jsonl" \
	'any(.[]; .event == "setsockopt" and .opt == "TCP_DEFER_ACCEPT" and .effective_s == 15)'

run_real "$SA" -o - -- $PY "$T/hc.py" 3 0 >"$T/out" 2>"$T/err"; rc=$?
check "real -o -: status 0 (got $rc)" test $rc = 0
check "real -o -: stderr stays empty" test ! -s "$T/err"
check "real -o -: the program's own output is on stdout" grep -qx "served 3" "$T/out"
grep '^{' "$T/out" >"$T/b.jsonl"
check_jq "real -o -: JSON lines on stdout, summary among them" "$T/b.jsonl" \
	'length > 3 and any(.[]; .event == "summary")'
run_real "$SA" -- $PY "$T/hc.py" 2 0 >"$T/out" 2>"$T/err"; rc=$?
check "real, no -o: JSON on stderr, not on stdout" \
	test $rc = 0 -a "$(grep -c '^{' "$T/out")" = 0 -a "$(grep -c '^{"' "$T/err")" -gt 0

# ---- report ----
"$SA" report "$T/a.jsonl" >"$T/r1" 2>"$T/err"; rc=$?
check "report: real log, status 0 (got $rc)" test $rc = 0 -a ! -s "$T/err"
check "report: real log shows the listener" grep -qE "^  python3\[[0-9]+\] fd [0-9]+  127\.0\.0\.1:[0-9]+" "$T/r1"
check "report: real log shows TCP_DEFER_ACCEPT 10 -> 15" \
	grep -qE "TCP_DEFER_ACCEPT +10 +15 " "$T/r1"
check "report: real log shows the listener's accepts and first speaker" \
	grep -qE "first speaker +client 5," "$T/r1"
check "report: no colour when stdout is not a terminal" test "$(grep -c $'\033' "$T/r1")" = 0
"$SA" report <"$T/a.jsonl" >"$T/r2"; rc=$?
check "report: standard input gives the same report" cmp -s "$T/r1" "$T/r2"
"$SA" report --color=always "$T/a.jsonl" >"$T/r3"
check "report: --color=always colours" grep -q $'\033\\[1m' "$T/r3"

if command -v script >/dev/null; then
	script -qc "'$SA' report '$TOP/tests/data/report_sample.jsonl'" /dev/null >"$T/tty" 2>&1 </dev/null
	check "report: colour on a terminal" grep -q $'\033\\[1m== Listeners' "$T/tty"
	NO_COLOR=1 script -qc "'$SA' report '$TOP/tests/data/report_sample.jsonl'" /dev/null >"$T/tty" 2>&1 </dev/null
	check "report: NO_COLOR on a terminal: no colour" test "$(grep -c $'\033' "$T/tty")" = 0
fi

# A listener with backlog 0 that accepts one connection a second: the
# second and third clients' SYNs are dropped and retransmitted, and the
# report's histogram shows them at ~2 and ~3 s (about 4 s of test time).
cat >"$T/slow.py" <<'EOF'
import socket, threading, time
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(0)
port = srv.getsockname()[1]
done = []
def client():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.recv(1)
    s.close()
    done.append(1)
th = [threading.Thread(target=client) for _ in range(3)]
for t in th:
    t.start()
    time.sleep(0.02)
time.sleep(1.3)
srv.settimeout(0.3)
end = time.monotonic() + 8
while len(done) < 3 and time.monotonic() < end:
    try:
        c, _ = srv.accept()
        c.sendall(b"x")
        c.close()
    except socket.timeout:
        pass
    time.sleep(0.9)
for t in th:
    t.join()
EOF
run_real "$SA" -o "$T/slow.jsonl" -- $PY "$T/slow.py" 2>"$T/err"; rc=$?
check "real slow connects: program ran (got $rc)" test $rc = 0
"$SA" report "$T/slow.jsonl" >"$T/r"
if grep -qE "^    (1-1.5s|1.5-2.5s|2.5-3.5s) +\|#+ +[1-9][0-9]*  ~[123] s" "$T/r" &&
   grep -q "Connects near 1, 2 or 3 s are SYNs" "$T/r"; then
	ok "report: real SYN-retransmission clusters at 1-3 s in the histogram"
else fail "report: real SYN-retransmission clusters" "$(sed -n '/== Connects/,/== Findings/p' "$T/r" | tr '\n' '|')"; fi
check "report: real slow connects have their finding" grep -qE "^ +[1-9][0-9]*  syn_retransmitted$" "$T/r"

# Every finding code the shim can write has its own explanation in
# common/finding_text.h, so the report never falls back to another code's msg.
codes=$(grep -rhoE 'sa_findings_(add|count)\(&?[a-z_>-]+, *"[a-z_0-9]+"' "$TOP/shim" | grep -oE '"[a-z_0-9]+"' | tr -d '"' | sort -u)
missing=$(for c in $codes; do grep -q "\"$c\"," "$TOP/common/finding_text.h" || echo "$c"; done)
check "report: each of the shim's $(wc -w <<<"$codes") finding codes has an explanation ($missing missing)" \
	test -z "$missing" -a "$(wc -w <<<"$codes")" -ge 10
D=$TOP/tests/data/report_sample.jsonl
"$SA" report "$D" >"$T/r"; rc=$?
check "report: sample, status 0" test $rc = 0
check "report: counts skipped lines" grep -q "3 lines skipped (2 not JSON, 1 not an object)" "$T/r"
check "report: backlog requested vs effective" grep -q "511 requested -> 128 effective (somaxconn 128" "$T/r"
check "report: deferral requested vs effective" grep -q "deferral       10 s requested -> 15 s effective" "$T/r"
check "report: queue_ms percentiles" grep -qE "queue_ms +p50 0.10  p95 2  p99 5  max 700" "$T/r"
check "report: empty accepts by cause" grep -q "12 (logged: 1 deferral expired, 0 SYN cookie)" "$T/r"
check "report: first speaker and advice" grep -q "Most connections arrive with data" "$T/r"
check "report: option table row" grep -qE "SO_RCVBUF +65536 +131072 +1 +option_adjusted" "$T/r"
check "report: histogram 1 s cluster" grep -qE "^    1-1.5s +\|#+ +20  ~1 s" "$T/r"
check "report: histogram 3 s cluster" grep -qE "^    2.5-3.5s +\|#+ +5  ~3 s" "$T/r"
check "report: finding counts (summary over events)" grep -qE "^ +12  slow_connect$" "$T/r"
check "report: finding msg" grep -q "listen(511) was clamped to 128" "$T/r"
check "report: netns counters" grep -q "ListenOverflows 35, TCPSynRetrans 55" "$T/r"
check "report: connect outcomes" grep -q "ok 1, failed: ECONNREFUSED 1" "$T/r"

"$SA" report "$D" "$T/does-not-exist" >"$T/r" 2>"$T/err"; rc=$?
check "report: unreadable file -> status 1, named on stderr" \
	test $rc = 1 -a "$(grep -c does-not-exist "$T/err")" = 1
check "report: the readable file is still reported" grep -q "511 requested" "$T/r"
"$SA" report --bogus </dev/null >/dev/null 2>&1; rc=$?
check "report: bad option -> 2" test $rc = 2

# Hostile input: random bytes, truncated lines, wrong types, a 3 MB line,
# deep nesting, NUL bytes, escape sequences in strings.
{
	head -c 200000 /dev/urandom
	echo
	while read -r l; do echo "${l:0:$(( ${#l} / 2 ))}"; done <"$D"
	head -c 3000000 /dev/zero | tr '\0' 'a'; echo
	printf '%*s\n' 50000 '' | tr ' ' '['
	printf '{"event":"li\0sten","pid":1}\n'
	echo '{"event":"listen","pid":"x","fd":[1],"backlog_requested":"511","findings":"x","msg":7}'
	echo '{"event":"listener_stats","pid":1,"listen_fd":3,"queue_ms":[1],"wait_ms":{"p50":"x"},"first_speaker":3,"advice":{"a":1},"empty_accepts":{"defer":2}}'
	echo '{"event":"summary","pid":1,"findings":[1],"connect_hist":{"<10ms":"x","1-1.5s":-3},"listeners":[1,null,{"fd":"x"}],"netns_counters":[],"quickack":7,"connect_ms":{"p50":1e308}}'
	echo '{"event":"setsockopt","pid":1,"comm":"\u001b[2J\u0085","fd":3,"sol":{},"opt":"TCP_DEFER_ACCEPT","requested":[1],"effective":{"x":1}}'
	echo '{"event":"connect","pid":1,"connect_ms":-5,"syn_retrans":99999999999999999999,"ret":"0"}'
	echo '{"ts":1e400,"pid":1e30,"event":"init"}'
	printf '{"event":"accept","listen_fd":3,"findings":["empty_accept_syncookie"]}'
} >"$T/bad.jsonl"
timeout 20 "$SA" report "$T/bad.jsonl" >"$T/r" 2>"$T/err"; rc=$?
check "report: hostile input, status 0 (got $rc)" test $rc = 0
check "report: hostile input, report printed" grep -q "^== Findings" "$T/r"
check "report: hostile input, no raw escape reaches the terminal" test "$(grep -c $'\033' "$T/r")" = 0
check "report: hostile input, overlong line counted" grep -q "1 too long" "$T/r"
head -c 100000 /dev/urandom | timeout 20 "$SA" report >/dev/null 2>&1; rc=$?
check "report: random bytes on stdin, status 0 (got $rc)" test $rc = 0
timeout 20 "$SA" report </dev/null >"$T/r"; rc=$?
check "report: empty input, status 0, says so, no empty sections" \
	test $rc = 0 -a "$(grep -c '^== ' "$T/r")" = 1 -a "$(grep -c 'has no libsockaudit JSON lines' "$T/r")" = 1

# ---- make install ----
make -C "$TOP" --no-print-directory install DESTDIR="$T/inst" >"$T/inst.log" 2>&1; rc=$?
check "install: make install DESTDIR= succeeds" test $rc = 0
P=$(make -C "$TOP" --no-print-directory -s -f - print-prefix <<'EOF' 2>/dev/null
include Makefile
print-prefix: ; @echo $(PREFIX) $(PKGLIBDIR) $(BINDIR) $(INCDIR) $(PKGDIR) $(MANDIR) $(DOCDIR)
EOF
)
read -r prefix libdir bindir incdir pkgdir mandir docdir <<<"${P:-/usr/local /usr/local/lib/sockaudit /usr/local/bin /usr/local/include /usr/local/lib/pkgconfig /usr/local/share/man /usr/local/share/doc/sockaudit}"
for f in "$libdir/libsockaudit.so" "$bindir/sockaudit" "$incdir/sockaudit.h" "$pkgdir/sockaudit.pc" \
	 "$mandir/man1/sockaudit.1" "$mandir/man7/libsockaudit.7" "$docdir/README.md"; do
	check "install: $f laid out" test -s "$T/inst$f"
done
check "install: launcher is executable" test -x "$T/inst$bindir/sockaudit"
check "install: pkg-config file names the libdir" grep -qx "libdir=$libdir" "$T/inst$pkgdir/sockaudit.pc"
out=$(PKG_CONFIG_PATH="$T/inst$pkgdir" pkg-config --modversion sockaudit 2>&1)
check "install: pkg-config reads it (version $out)" grep -qE '^[0-9]+\.[0-9]+' <<<"$out"
out=$(run_real "$T/inst$bindir/sockaudit" -- printenv LD_PRELOAD 2>/dev/null)
check "install: installed launcher finds the installed library via ../lib/sockaudit" \
	grep -qx "$(realpath "$T/inst$libdir")/libsockaudit.so" <<<"${out//:/$'\n'}"
finish
