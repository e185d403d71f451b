#!/bin/bash
# Scenario 5: nginx in front of an application server that stops for 2.5 s
# (SIGSTOP, like a long GC pause) under a steady request rate.
# Runs alone (as root): demo/05-nginx-upstream.sh
. "$(dirname "$0")/lib.sh"
NAME="5 nginx upstream connects of 1, 2, 3 s"
PORT=8005 UPORT=9005 UBACKLOG=8 RATE=80 SECS=6 PAUSE_AT=1.5 PAUSE=2.5
heading "5. nginx upstream connects of 1, 2, 3 s while the server says 0.1 ms"
say "nginx proxies to a small application server (listen backlog $UBACKLOG) while a client sends" \
    "$RATE requests/s for $SECS s. At ${PAUSE_AT} s the application server is stopped with SIGSTOP for" \
    "$PAUSE s. Its accept queue fills, its kernel drops further SYNs, and nginx's kernel resends" \
    "them once a second (Linux 6.5+). The application server's own log shows every request" \
    "handled in a fraction of a millisecond; the shim on nginx shows where the seconds went:" \
    "connect() itself, with the SYN retransmissions that explain it."
need_built || verdict "$NAME"
netns_new upstream || { fail "could not create a network namespace (root needed)"; verdict "$NAME"; }
LOG=$LOGS/05-nginx-upstream.jsonl ALOG=$LOGS/05-upstream-app.jsonl
rm -f "$LOG" "$ALOG"
ULOG=$W/upstream.log
# The application server is audited too: its listener's side is what the
# report joins nginx's slow connects to.
ip netns exec "$NS" env $(shim_env "$ALOG") "$PY" "$TOP/demo/upstream.py" $UPORT $UBACKLOG "$ULOG" >"$W/upstream.out" 2>&1 &
UP=$!; track $UP
nginx_start "$NS" "$LOG" "
	log_format lab '\$msec \$request_id \$status uct=\$upstream_connect_time urt=\$upstream_response_time rt=\$request_time';
	upstream app { server 127.0.0.1:$UPORT max_fails=0; }
	server {
		listen 127.0.0.1:$PORT;
		access_log $W/nginx/access.log lab;
		location / { proxy_pass http://app; proxy_set_header X-Request-Id \$request_id; }
	}" || verdict "$NAME"
wait_listen $UPORT "$NS" || fail "the application server did not listen"
wait_listen $PORT "$NS" || fail "nginx did not listen"

ip netns exec "$NS" "$PY" "$TOP/demo/loadgen.py" $PORT $RATE $SECS >"$W/load.out" 2>&1 &
LOAD=$!; track $LOAD
sleep $PAUSE_AT
kill -STOP $UP && echo "application server stopped (SIGSTOP) at ${PAUSE_AT} s" >"$W/pause.out"
sleep $PAUSE
kill -CONT $UP && echo "application server resumed (SIGCONT) $PAUSE s later" >>"$W/pause.out"
wait $LOAD || fail "the load generator failed"
nginx_stop
stop $UP
sub "What happened:"
cat "$W/pause.out" "$W/load.out" | show
have_log "$LOG"

sub "The application server's own view (its log, per request handling time):"
sort -k3,3g "$ULOG" | awk '{ms[++n] = $3} END {
	if (!n) { print "no requests logged"; exit }
	p99 = int(n * 0.99); if (p99 < 1) p99 = 1
	printf "%d requests handled; handling time p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
		n, ms[int((n + 1) / 2)], ms[p99], ms[n] }' | show
sub "The same requests in both logs (nginx access.log, then the application server's line):"
# One request per whole second of upstream_connect_time, matched by request id.
awk 'NR == FNR { up[$2] = $0; next }
     { split($4, u, "="); s = int(u[2] + 0.5) }
     s >= 1 && !(s in seen) && ($2 in up) { seen[s] = 1
	print "nginx: " $0; print "  app: " up[$2] }' "$ULOG" "$W/nginx/access.log" 2>/dev/null | show
sub "The shim on nginx: the first slow upstream connect of each whole second:"
SLOW='select(.event == "connect" and found("syn_retransmitted"))'
js "[.[] | $SLOW] | group_by(.connect_ms / 1000 | round) | .[] | .[0]
    | {event, comm, fd, peer, nonblocking, connect_ms, syn_retrans, findings}" "$LOG" | show
js_raw "[.[] | $SLOW] | .[0].msg // empty" "$LOG" | fold -s -w 86 | sed 's/ *$//' | show
sub "Upstream connects by duration, shim (connect_ms) beside nginx's own \$upstream_connect_time:"
{
	printf '%-16s %-30s %s\n' "connect took" "shim: connects (syn_retrans)" "nginx access.log: uct"
	js_raw "[.[] | $SLOW] | group_by(.connect_ms / 1000 | round) | .[]
	        | \"\\(.[0].connect_ms / 1000 | round) \\(length) (\\(map(.syn_retrans) | unique | map(tostring) | join(\",\")))\"" \
		"$LOG" >"$W/shim.hist"
	sed -n 's/.* uct=\([0-9.]*\) .*/\1/p' "$W/nginx/access.log" 2>/dev/null |
		awk '{printf "%d\n", $1 + 0.5}' | sort -n | uniq -c | awk '{print $2, $1}' >"$W/nginx.hist"
	for s in 0 1 2 3 4 5; do
		a=$(awk -v s=$s '$1 == s {print $2, $3}' "$W/shim.hist"); b=$(awk -v s=$s '$1 == s {print $2}' "$W/nginx.hist")
		[ -z "$a$b" ] && continue
		[ "$s" = 0 ] && a="${a:-(fast: no finding, not logged)}"
		printf '%-16s %-30s %s\n' "about $s s" "${a:-0}" "${b:-0}"
	done
} | show
sub "Both sides audited: sockaudit report joins nginx's slow connects to the server's listener:"
"$TOP/sockaudit" report --color=never "$LOG" "$ALOG" | sed -n '/^== Fix first/,/^== /p' |
	awk 'NR == 2 || NR == 3 || (/^     [0-9]+ connects? from / && !s++)' |
	fold -s -w 86 | show
"$TOP/sockaudit" report --json "$LOG" "$ALOG" >"$W/report.json"
# The page outlives the demo's log folder: build/demo/ is kept.
sub "The same log as one page (sockaudit report --html), open it in a browser:"
PAGE=$BUILD/demo/05-nginx-upstream.html
mkdir -p "$BUILD/demo" && "$TOP/sockaudit" report --html "$PAGE" "$LOG" "$ALOG" && echo "$PAGE" | show
sub "Checks"
expect "the shim flagged upstream connects with syn_retransmitted" \
	jtrue 'any(.[]; .event == "connect" and found("syn_retransmitted"))' "$LOG"
expect "flagged connects took about 1 s and about 2 s or more (connect_ms, syn_retrans >= 1)" \
	jtrue '[.[] | select(.event == "connect" and found("syn_retransmitted") and .syn_retrans >= 1)
	       | (.connect_ms / 1000 | round)] | (index(1) != null) and any(.[]; . >= 2)' "$LOG"
expect "the report's first item joins them: the application server's listener at 127.0.0.1:$UPORT (backlog $UBACKLOG)" \
	jq -e ".fix_first[0].cause as \$c | .causes[\$c] | .kind == \"joined\" and .listener.local == \"127.0.0.1:$UPORT\"
	       and .listener.backlog == $UBACKLOG" "$W/report.json"
# Median and 95%, not every request: on a busy 2-core machine a Python
# process that loses the CPU mid-request logs a few milliseconds.
if [ -s "$ULOG" ] && sort -k3,3g "$ULOG" | awk '{ms[++n] = $3; if ($3 < 1) fast++}
	END {exit !(n > 0 && ms[int((n + 1) / 2)] < 0.5 && fast >= 0.95 * n)}'; then
	pass "the application server's median was under 0.5 ms, and 95% or more of its requests under 1 ms"
else
	fail "the application server was not fast by its own log (median 0.5 ms or more, or over 5% at 1 ms+)"
fi
verdict "$NAME"
