#!/bin/bash
# Scenario 7: the "random SYN drops causing connect() delays" report, live.
# Runs alone: demo/07-syn-drops.sh
. "$(dirname "$0")/lib.sh"
NAME="7 SYN drops, 1 s connects"
heading "7. A tight connect/close loop against a tiny backlog: dropped SYNs, 1 s connects"
say "The study's client opens and closes connections in a tight loop and prints each one's" \
    "local port and milliseconds; some take 3 s (the 2.6 kernel's first SYN timeout). Here a" \
    "server with listen(fd, 0) (room for 1) accepts one connection every 250 ms, in a fresh" \
    "network namespace so nstat counts only this traffic. While its queue is full the kernel" \
    "drops the SYN (ListenOverflows) and the client resends it 1 s later (Linux 6.5+ resends" \
    "the first tcp_syn_linear_timeouts SYNs 1 s apart). The shim's connect lines are matched" \
    "to the client's own timings by local port; the summary's syn_retrans_total must equal" \
    "the namespace's TcpExtTCPSynRetrans. The study says SO_LINGER on the client made the delays" \
    "disappear; the client sets SO_LINGER {1, 1} and the shim shows what the kernel kept."
need_built syn_loop_client slow_accept_server || verdict "$NAME"
netns_new s7 || { fail "cannot create a network namespace (root needed)"; verdict "$NAME"; }
CL=$LOGS/07-client.jsonl SL=$LOGS/07-server.jsonl
rm -f "$CL" "$SL"
PORT=7007 COUNT=${DEMO7_COUNT:-12}
ip netns exec "$NS" env $(shim_env "$SL" trace) "$BIN/slow_accept_server" $PORT 0 250 "$COUNT" >"$W/srv.out" 2>&1 &
sp=$!; track $sp
wait_listen $PORT "$NS" || fail "the server did not listen"
sub "What the client itself prints (as in the study, plus connect() alone):"
ip netns exec "$NS" env $(shim_env "$CL" trace) timeout 30 "$BIN/syn_loop_client" 127.0.0.1 $PORT "$COUNT" 0 1 >"$W/cli.out" 2>&1 ||
	fail "syn_loop_client exited non-zero"
show <"$W/cli.out"
wait $sp 2>/dev/null
have_log "$CL" "$SL"
ip netns exec "$NS" nstat -asz TcpExtTCPSynRetrans TcpExtListenOverflows TcpExtListenDrops >"$W/nstat.out" 2>&1
sub "nstat in the namespace (absolute counters of a fresh namespace = this run's deltas):"
show <"$W/nstat.out"
sub "The shim's connect lines (client) and its SO_LINGER read-back:"
show_ev 'select(.event == "connect") | {local, connect_ms, syn_retrans, findings}' "$CL"
show_ev 'select(.event == "setsockopt" and .opt == "SO_LINGER") | {opt, requested, effective}' "$CL" | head -1
show_ev 'select(.event == "summary") | {syn_retrans_total, connect_hist}' "$CL"

sub "Checks"
# client port -> its own connect ms; shim port -> connect_ms.
awk '{sub(/->.*/, "", $2); print $2, $NF}' "$W/cli.out" | sort >"$W/client.ms"
jlr 'select(.event == "connect") | "\(.local | sub(".*:"; "")) \(.connect_ms)"' "$CL" | sort >"$W/shim.ms"
join "$W/client.ms" "$W/shim.ms" >"$W/joined"
n_client=$(wc -l <"$W/client.ms") n_join=$(wc -l <"$W/joined")
# The shim times inside the client's own window: never longer (0.5 ms of
# rounding), and shorter by the wrapper and by any time the client's thread
# waited for a CPU (tens of ms on a loaded machine), far below the 1 s steps.
far=$(awk '{d = $2 - $3; if (d < -0.5 || d > 50) n++} END {print n + 0}' "$W/joined")
awk '{d = $2 - $3; if (d < -0.5 || d > 50) print "port " $1 ": client " $2 " ms, shim " $3 " ms"}' "$W/joined" | show
expect "every one of the client's $n_client connects has a shim connect line with its local port ($n_join matched)" \
	test "$n_client" = "$COUNT" -a "$n_join" = "$COUNT"
expect "every shim connect_ms is at most the client's own and within 50 ms of it ($far off)" test "$far" = 0
slow=$(awk '$2 >= 900' "$W/client.ms" | wc -l)
expect "some connects took about 1 s or more ($slow of $COUNT)" test "$slow" -ge 1
synr=$(awk '$1 == "TcpExtTCPSynRetrans" {print $2}' "$W/nstat.out")
total=$(js_raw '[.[] | select(.event == "summary")] | last | .syn_retrans_total' "$CL")
expect "summary syn_retrans_total ($total) equals nstat TcpExtTCPSynRetrans (${synr:-none})" \
	test -n "$synr" -a "$total" = "${synr:-x}"
expect "the slow connects carry syn_retransmitted with the wait this kernel's SYN timeouts cost" \
	jtrue 'any(.[]; .event == "connect" and found("syn_retransmitted") and (.msg | test("[0-9.]+ s of it in SYN timeouts")))' "$CL"
expect "SO_LINGER: requested {1, 1} and read back {1, 1}" \
	jtrue 'any(.[]; .event == "setsockopt" and .opt == "SO_LINGER" and .requested == {"onoff":1,"linger":1} and .effective == {"onoff":1,"linger":1})' "$CL"
sub "Both sides audited: sockaudit report joins the client's slow connects to the server's listener:"
"$TOP/sockaudit" report --color=never "$CL" "$SL" | sed -n '/^== Fix first/,/^== /p' |
	awk 'NR == 2 || NR == 3 || (/^     [0-9]+ connects? from / && !s++)' |
	fold -s -w 86 | show
"$TOP/sockaudit" report --json "$CL" "$SL" >"$W/report.json"
spid=$(js_raw '[.[] | select(.event == "listen")][0].pid' "$SL")
expect "the report's first item is the joined cause: slow_accept_server[$spid]'s listener at 127.0.0.1:$PORT" \
	jq -e ".fix_first[0].cause as \$c | .causes[\$c] | .kind == \"joined\" and .listener.pid == $spid
	       and .listener.local == \"127.0.0.1:$PORT\"" "$W/report.json"
say "SO_LINGER did not make the delays go away here: the drops come from the full queue, and" \
    "a close() that lingers 1 s only waits for the FIN to be acknowledged, which the kernel" \
    "does at once. (In the study it slowed the loop enough for the old race not to happen.)"
verdict "$NAME"
