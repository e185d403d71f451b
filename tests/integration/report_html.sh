#!/bin/bash
# `sockaudit report --html`, checked in a real browser: a log from
# a real run (blocking connects to a loopback listener whose accept queue is
# full, so their SYNs are retransmitted, plus fast connects to an open one),
# rendered by headless Chromium; the DOM is checked against the log (listener
# panels, histogram bars, finding counts), the page makes no network request
# and logs no console error, a screenshot is saved under build/, and bad input
# gives a page that says so.
. "$(dirname "$0")/../lib.sh"
SA=$TOP/sockaudit
P=$PROGS/connect_probe
command -v chromium >/dev/null || { fail "chromium not installed (scripts/ensure-deps.sh test)"; finish; }
command -v jq >/dev/null || { fail "jq not installed (scripts/ensure-deps.sh test)"; finish; }
PROFILE=$(mktemp -d "$T/chromium.XXXXXX")
chrome() {  # chrome ARGS... URL: bounded, offline, no first-run work
	timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$PROFILE" "$@" 2>>"$T/chrome.err"
}

# ---- a real log ----------------------------------------------------------------
LOG=$T/run.jsonl
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=$LOG preload "$PROGS/fullq_server" "$T/port" 2500 1500 "$T/go" &
FQ=$!
for i in $(seq 100); do [ -f "$T/port" ] && break; sleep 0.02; done
FP=$(cat "$T/port" 2>/dev/null)
/usr/bin/python3 -c '
import socket, sys, os, time
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(64)
open(sys.argv[1] + ".tmp", "w").write(str(t.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(6)' "$T/port.open" &
for i in $(seq 100); do [ -f "$T/port.open" ] && break; sleep 0.02; done
OP=$(cat "$T/port.open")
pids=()
for i in 1 2 3; do
	SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=$LOG timeout 20 "$BASH" -c 'LD_PRELOAD="$1" exec "$2" block "$3"' _ \
		"$(preload_value)" "$P" "127.0.0.1:$FP" >/dev/null & pids+=($!)
done
(sleep 1.2; SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=$LOG preload timeout 20 "$P" block "127.0.0.1:$FP" >/dev/null) & pids+=($!)
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=$LOG preload "$P" fast "127.0.0.1:$OP" 20 >/dev/null
# The full listener drains after 2.5 s, and not before all four clients' SYNs
# were dropped at least once (SYN-SENT for over a second): under a loaded
# make test a client could start after the drain and connect at once.
for i in $(seq 150); do
	[ "$(ss -Htn state syn-sent "dport = :$FP" | wc -l)" -ge 4 ] && break
	sleep 0.1
done
sleep 1.1
touch "$T/go"
for p in "${pids[@]}"; do wait "$p"; done
wait $FQ
check "a real log was written" test -s "$LOG"

"$SA" report --html "$T/page.html" "$LOG"; rc=$?
check "report --html: status 0 (got $rc)" test $rc = 0
"$SA" report --html - <"$LOG" >"$T/stdin.html"
check "report --html - reads standard input, writes the same page" cmp -s "$T/page.html" "$T/stdin.html"
size=$(stat -c %s "$T/page.html")
check "page is small (aggregates, not events): $size bytes" test "$size" -lt 200000

# ---- the page in a browser -------------------------------------------------------
chrome --enable-logging=stderr --v=0 --dump-dom "file://$T/page.html" >"$T/dom.html"
check "chromium rendered the page (DOM dumped)" grep -q '<h1>sockaudit report</h1>' "$T/dom.html"
mkdir -p "$BUILD"
chrome --hide-scrollbars --window-size=1200,2600 --screenshot="$BUILD/report-html.png" \
	"file://$T/page.html" >/dev/null
check "screenshot saved to build/report-html.png" test -s "$BUILD/report-html.png"
# No console message from the page itself (script errors, blocked loads).
if grep -E 'CONSOLE|Uncaught|Failed to load resource|net::ERR' "$T/chrome.err" >"$T/console"; then
	fail "no console error" "$(head -3 "$T/console" | tr '\n' '|')"
else ok "no console error"; fi
if grep -Eio "(src|href|action|url)[ =(]*[\"']?(https?:)?//[^\"' )>]*" "$T/page.html" >"$T/net"; then
	fail "no network address in src/href/url" "$(head -3 "$T/net" | tr '\n' '|')"
else ok "no network address in src/href/url"; fi
check "no external stylesheet, script or image" \
	test "$(grep -Eic '<link|<img|<iframe|<script src|@import|@font-face' "$T/page.html")" = 0

# DOM against the log. Listeners: distinct (pid, fd) among listen lines and
# the listen_fd of accept and listener_stats lines.
want_l=$(jq -s '[.[] | select(.event == "listen" and (.fd|type) == "number") | [.pid, .fd]]
	+ [.[] | select((.event == "accept" or .event == "listener_stats") and (.listen_fd|type) == "number")
	| [.pid, .listen_fd]] | unique | length' "$LOG")
got_l=$(grep -o 'class="panel listener"' "$T/dom.html" | wc -l)
check "listener panels ($got_l) = listeners in the log ($want_l), at least one" \
	test "$got_l" = "$want_l" -a "$want_l" -ge 1
want_c=$(jq -s '[.[] | select(.event == "connect" and (.connect_ms|type) == "number")] | length' "$LOG")
got_c=$(grep -o '<rect class="bar" data-n="[0-9]*"' "$T/dom.html" | grep -o '[0-9]*"$' | tr -d '"' |
	awk '{s += $1} END {print s + 0}')
check "histogram bars sum to the log's timed connects ($got_c = $want_c, 20 or more)" \
	test "$got_c" = "$want_c" -a "$want_c" -ge 20
slow=$(jq -s '[.[] | select(.event == "connect" and (.syn_retrans // 0) >= 1)] | length' "$LOG")
check "the full listener made connects with SYN retransmissions ($slow)" test "$slow" -ge 3
marks=$(grep -o '<g class="synmark" data-k="[0-9]*" data-n="[0-9]*"' "$T/dom.html" |
	sed 's/.*data-k="\([0-9]*\)" data-n="\([0-9]*\)"/\1 \2/')
want_k=$(jq -rs '[.[] | select(.event == "connect" and (.syn_retrans // 0) >= 1 and (.syn_retrans // 0) <= 3)
	| .syn_retrans] | group_by(.) | map("\(.[0]) \(length)") | .[]' "$LOG")
bad=
while read -r k n; do
	[ -z "$k" ] && continue
	grep -qx "$k $n" <<<"$marks" || bad="$bad k=$k:$n"
done <<<"$want_k"
check "SYN retransmission marks are labelled with the log's counts (${want_k//$'\n'/, })" test -z "$bad" -a -n "$marks"
# Finding counts: per process, the larger of the summary's count and the
# lines carrying the code, summed over processes (the text report's rule).
jq -rs '[group_by(.pid)[] | (map(select(.event == "summary")) | last // {} | .findings // {}) as $s
	| ([.[] | .findings // [] | if type == "array" then .[] else empty end | strings]
	   | group_by(.) | map({key: .[0], value: length}) | from_entries) as $e
	| ($s + $e | keys[]) as $k | {k: $k, n: ([($s[$k] // 0), ($e[$k] // 0)] | max)}]
	| group_by(.k)[] | "\(.[0].k) \(map(.n) | add)"' "$LOG" | sort >"$T/want_f"
grep -o '<tr class="finding" data-code="[a-z_]*" data-count="[0-9]*"' "$T/dom.html" |
	sed 's/.*data-code="\([a-z_]*\)" data-count="\([0-9]*\)"/\1 \2/' | sort >"$T/got_f"
if [ -s "$T/want_f" ] && cmp -s "$T/want_f" "$T/got_f"; then ok "findings counts equal the log's ($(tr '\n' ' ' <"$T/want_f"))"
else fail "findings counts equal the log's" "want $(tr '\n' ' ' <"$T/want_f") got $(tr '\n' ' ' <"$T/got_f")"; fi
first=$(tr -d '\n' <"$T/dom.html" | grep -o '<ol class="top"><li data-code="[a-z_]*"' | sed 's/.*data-code="//; s/"$//')
check "the top list ranks the connect findings (seconds lost) first: $first" \
	grep -qxE 'syn_retransmitted|slow_connect' <<<"$first"
check "every chart has its table (details)" \
	test "$(grep -c '<svg' "$T/dom.html")" -le "$(grep -c '<details' "$T/dom.html")"

# ---- bad input: a page that says so, never a crash ------------------------------
: >"$T/empty.jsonl"
printf 'hello\nnot json at all\n' >"$T/nojson.jsonl"
{ head -n 5 "$LOG"; head -n 6 "$LOG" | tail -n 1 | head -c 40; } >"$T/trunc.jsonl"
sed 's/"schema":1,/"schema":7,/' "$LOG" | head -n 20 >"$T/newer.jsonl"
for c in empty:'The log is empty' nojson:'None of the 2 lines' trunc:'could not be read' newer:'newer libsockaudit'; do
	bad=${c%%:*} say=${c#*:}
	timeout 20 "$SA" report --html "$T/$bad.html" "$T/$bad.jsonl"; rc=$?
	chrome --dump-dom "file://$T/$bad.html" >"$T/$bad.dom"
	if [ $rc = 0 ] && grep -q "$say" "$T/$bad.dom" && grep -q '</html>' "$T/$bad.html"; then
		ok "bad input ($bad): status 0, the page says '$say' in the browser"
	else fail "bad input ($bad): status 0, the page says '$say' in the browser" "rc $rc"; fi
done
"$SA" report --html "$T/nodir/x.html" "$LOG" 2>"$T/err"; rc=$?
check "unwritable OUT: status 1 with a message" eval 'test $rc = 1 && grep -q nodir "$T/err"'
finish
