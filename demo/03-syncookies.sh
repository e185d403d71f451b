#!/bin/bash
# Scenario 3: 200 silent clients at once against a deferred listener with
# backlog 10, in a network namespace of its own so the kernel's counters
# start at zero.  Runs alone (as root): demo/03-syncookies.sh
. "$(dirname "$0")/lib.sh"
NAME="3 SYN cookies skip the deferral"
N=200 BACKLOG=10 PORT=7003 WINDOW=3 SPREAD_MS=50
heading "3. Under load, deferral turns itself off: SYN cookies skip the gate"
say "A listener with TCP_DEFER_ACCEPT=1 and listen() backlog $BACKLOG; $N silent clients connect" \
    "within $SPREAD_MS ms. Deferred connections wait in the request queue, which the backlog" \
    "bounds; once it is full the kernel answers with SYN cookies, and a cookie's ACK builds the" \
    "connection straight into the accept queue, never seeing the deferral. So about ten" \
    "connections are held for the 1 s window, and the rest reach accept() at once, empty." \
    "This runs in a fresh network namespace, so nstat's counters below are this run's alone." \
    "(The connects are spread over $SPREAD_MS ms, not fired in one burst, only so that a server" \
    "slowed by auditing still drains its 11-slot accept queue: a cookie's ACK that finds it full" \
    "is dropped, and a silent client never retries.)"
need_built flood || verdict "$NAME"
netns_new syncookies || { fail "could not create a network namespace (root needed)"; verdict "$NAME"; }
ip netns exec "$NS" sysctl -qw net.ipv4.tcp_syncookies=1
LOG=$LOGS/03-syncookies.jsonl
rm -f "$LOG"
ip netns exec "$NS" env $(shim_env "$LOG") "$BIN/flood" server $PORT 1 $BACKLOG $WINDOW >"$W/server.out" 2>&1 &
srv=$!; track $srv
wait_listen $PORT "$NS" || fail "the flood server did not listen"
ip netns exec "$NS" "$BIN/flood" clients $PORT $N $((WINDOW + 1)) $SPREAD_MS >"$W/clients.out" 2>&1 &
cli=$!; track $cli
wait $srv || fail "flood server exited non-zero"
sub "What the programs see:"
cat "$W/clients.out" "$W/server.out" | show
sub "The kernel's own counters (ip netns exec $NS nstat -az ...):"
NSTAT_HISTORY=$W/nstat.hist ip netns exec "$NS" nstat -azs TcpExtSyncookiesRecv TcpExtTCPDeferAcceptDrop \
	TcpExtListenOverflows >"$W/nstat.out" 2>&1
grep -v '^#' "$W/nstat.out" | awk '{printf "%-28s %s\n", $1, $2}' | show
stop $cli
have_log "$LOG"

sub "The shim's accept events, one of each cause (it logs the 1st, 2nd, 4th, 8th ... of each):"
SHOW_MAX=1 show_ev 'select(.event == "accept" and found("empty_accept_syncookie"))' "$LOG"
SHOW_MAX=1 show_ev 'select(.event == "accept" and found("empty_accept_defer_expired"))' "$LOG"
sub "The shim's listener_stats at exit (counts of every accept, and its advice):"
jl 'select(.event == "listener_stats") | {accepts, empty_accepts, empty_defer_expired, empty_syncookie,
	queue_full_seen, netns_counters: (.netns_counters // {} | {SyncookiesRecv, TCPDeferAcceptDrop, ListenOverflows})}' "$LOG" | show
jlr 'select(.event == "listener_stats") | (.advice // [])[0] // empty' "$LOG" | fold -s -w 86 | sed 's/ *$//' | show
sub "Findings in the shim's summary (every accept counted, logged or not):"
jlr 'select(.event == "summary") | .findings | objects | to_entries[]
	| select(.key | startswith("empty_accept")) | "\(.value)\t\(.key)"' "$LOG" |
	awk -F'\t' '{printf "%5s  %s\n", $1, $2}' | show
# The summary's totals count every accept; without a summary, count the lines.
cookies=$(js '(map(select(.event == "summary") | .findings | objects | .empty_accept_syncookie // 0) | add)
	// ([.[] | select(.event == "accept" and found("empty_accept_syncookie"))] | length)' "$LOG" 2>/dev/null)
deferred=$(js '(map(select(.event == "summary") | .findings | objects | .empty_accept_defer_expired // 0) | add)
	// ([.[] | select(.event == "accept" and found("empty_accept_defer_expired"))] | length)' "$LOG" 2>/dev/null)
recv=$(awk '$1 == "TcpExtSyncookiesRecv" {print $2}' "$W/nstat.out")
sub "Checks"
if [ "${cookies:-0}" -gt 0 ] && [ "${cookies:-0}" -gt "${deferred:-0}" ]; then
	pass "empty_accept_syncookie on $cookies accepts, more than the $deferred that waited out the deferral"
else
	fail "empty_accept_syncookie on ${cookies:-0} accepts (expected most of them)"
fi
if [ -n "$recv" ] && [ "$recv" -gt 0 ]; then
	pass "the kernel agrees: TcpExtSyncookiesRecv $recv"
else
	fail "TcpExtSyncookiesRecv is ${recv:-unknown}: the flood did not reach the SYN-cookie path"
fi
verdict "$NAME"
