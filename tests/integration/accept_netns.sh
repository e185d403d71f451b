#!/bin/bash
# Accept side under load, each case in a network namespace of its own so the
# namespace-wide kernel counters see only this test:
#  - 200 silent clients at once against backlog 10 with TCP_DEFER_ACCEPT=1:
#    ~11 pass the deferral gate, the rest arrive through SYN cookies, empty;
#    the shim's counts must agree with nstat.
#  - a backlog-0 listener paused while 20 clients connect: ListenOverflows
#    rises and the listen_overflows finding names it.
. "$(dirname "$0")/../lib.sh"

NS1=sa-acc-sc-$$ NS2=sa-acc-ov-$$
for ns in $NS1 $NS2; do
	ip netns add $ns || { fail "ip netns add $ns"; finish; }
	on_exit "ip netns del $ns"
	ip -n $ns link set lo up
done

# nstat_abs NS COUNTER...: "name value" lines, absolute, history untouched.
nstat_abs() { local ns=$1; ip netns exec "$ns" nstat -asz TcpExtSyncookiesRecv TcpExtSyncookiesSent TcpExtTCPDeferAcceptDrop TcpExtListenOverflows | awk 'NR>1 && NF>=2 {print $1, $2}'; }
val() { awk -v k="$2" '$1==k {print $2}' "$1"; }

# scenario NS NAME "SERVER ARGS" "CLIENT ARGS"
scenario() {
	local ns=$1 name=$2 sargs=$3 cargs=$4 i port
	nstat_abs "$ns" >"$T/$name.before"
	ip netns exec "$ns" env SOCKAUDIT_LEVEL=info SOCKAUDIT_LOG="$T/$name.jsonl" LD_PRELOAD="$(preload_value)" \
		"$PROGS/acc_server" $sargs >"$T/$name.out" 2>/dev/null &
	local spid=$!
	for i in $(seq 100); do grep -q PORT "$T/$name.out" 2>/dev/null && break; sleep 0.02; done
	port=$(awk '/PORT/{print $2}' "$T/$name.out")
	ip netns exec "$ns" "$PROGS/acc_client" -p "$port" $cargs 2>/dev/null &
	local cpid=$!
	wait $spid
	# The listener is gone now: no counter below can move for it any more.
	nstat_abs "$ns" >"$T/$name.after"
	wait $cpid
}

# The clients leave at 1.7 s and the server stops at 2 s: the deferred connections
# expire at ~1 s, and the clients' next SYN retransmission wave (~2.8 s) comes
# after the listener is gone, so nothing moves the counters after the summary.
scenario $NS1 cookies "-b 10 -d 1 -n 1000 -T 2000 -m hold" "-c 200 -s -1 -H 1700" &
# The paused server: 20 clients must all have connected 1 s before the pause
# ends (0.5 s to start them, slack on a slow machine).
P2=$((1000 + $(slack 500)))
scenario $NS2 overflow "-b 0 -P $P2 -n 20 -T $((P2 + 1500)) -m close" "-c 20 -s -1 -H $((P2 + 1700))" &
wait

# nstat deltas (absolute after - before) as a JSON object, for jq --argjson.
deltas() {
	join <(sort "$T/$1.before") <(sort "$T/$1.after") | awk '{printf "%s\"%s\":%d", (n++?",":"{"), $1, $3-$2} END {print (n?"}":"{}")}'
}
D1=$(deltas cookies)
D2=$(deltas overflow)
echo "# nstat cookies: $D1"
echo "# nstat overflow: $D2"

L=$T/cookies.jsonl
S='(.[] | select(.event=="listener_stats"))'
check_jq "200 silent clients: SYN-cookie empties flagged and counted" "$L" \
  "$S | .empty_syncookie>=1 and .empty_defer_expired>=1 and .accepts==.empty_accepts"
check_jq "200 silent clients: accept lines carry empty_accept_syncookie with a msg about SYN cookies" "$L" \
  'any(.[]; .event=="accept" and .findings==["empty_accept_syncookie"] and .syn_ack_retrans==0 and .bytes_ready==0 and (.msg|test("SYN cookie")))'
check_jq "200 silent clients: summary finding totals match listener_stats" "$L" \
  "($S) as \$s | any(.[]; .event==\"summary\" and .findings.empty_accept_syncookie==\$s.empty_syncookie and .findings.empty_accept_defer_expired==\$s.empty_defer_expired)"
check_jq "200 silent clients: summary SyncookiesRecv delta >= syncookie empties, TCPDeferAcceptDrop rose" "$L" \
  "($S) as \$s | any(.[]; .event==\"summary\" and .netns_counters.SyncookiesRecv >= \$s.empty_syncookie and .netns_counters.TCPDeferAcceptDrop >= 1 and .netns_counters.TCPDeferAcceptDrop >= \$s.empty_defer_expired)"
check_jq "200 silent clients: netns_counters agree with nstat (SyncookiesRecv, TCPDeferAcceptDrop, SyncookiesSent)" "$L" \
  "any(.[]; .event==\"summary\" and .netns_counters.SyncookiesRecv==$D1.TcpExtSyncookiesRecv and .netns_counters.TCPDeferAcceptDrop==$D1.TcpExtTCPDeferAcceptDrop and .netns_counters.SyncookiesSent==$D1.TcpExtSyncookiesSent)"
check_jq "200 silent clients: advice says deferral was bypassed (a namespace counter)" "$L" \
  "$S | any(.advice[]; test(\"SyncookiesRecv rose by [0-9]+ in this network namespace.*skipped deferral\"))"

L=$T/overflow.jsonl
check_jq "backlog 0 paused: nstat ListenOverflows rose and netns_counters agree" "$L" \
  "$D2.TcpExtListenOverflows > 0 and any(.[]; .event==\"summary\" and .netns_counters.ListenOverflows==$D2.TcpExtListenOverflows)"
check_jq "backlog 0 paused: first accept flagged accept_queue_full" "$L" \
  'any(.[]; .event=="accept" and .queue_capacity==1 and .queue_ms>=1000 and (.findings|index("accept_queue_full")))'
# any listener_stats line: a run longer than the stats interval (a slow
# machine's) writes a later one, without the finding, that jq -e would judge alone.
check_jq "backlog 0 paused: listen_overflows finding names ListenOverflows in this namespace, and the fix" "$L" \
  "any($S; (.findings|index(\"listen_overflows\")) and (.msg|test(\"ListenOverflows \\\\+[0-9]+ in this netns\")) and (.msg|test(\"Fix: backlog [0-9]+ or more\")) and .netns_counters.ListenOverflows > 0)"
KEEP=${KEEP:-}; [ -n "$KEEP" ] && cp -r "$T" "$KEEP"
echo "# measured: $(jq -s -c "$S | {accepts, empty_syncookie, empty_defer_expired, queue_full_seen, netns_counters}" "$T/cookies.jsonl")"
finish
