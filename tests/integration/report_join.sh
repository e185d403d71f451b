#!/bin/bash
# The report joins a client's slow connects to the listener that made them
# wait, built live in network namespaces of our own:
#  - a python listener with backlog 1 that does not accept for 1.5 s, eight
#    python clients connecting to it, all under the shim at the default
#    level, in one namespace; an idle listener at the same 127.0.0.1 address
#    and port in a second namespace, also audited;
#  - the same listener reached over a veth at its 10.x address by clients in
#    a third namespace with a hostname of their own (another host, as the
#    init lines tell it): joined on the exact, non-loopback address;
#  - the clients' log alone: the cause says the listener is not in the logs
#    and what would decide it.
# Checked: the first ranked cause names the listener's pid, address and
# backlog; the other namespace's listener is never named in a cause;
# slow_connect and syn_retransmitted are not ranked again beside it; --json
# carries the same cause; the page in headless Chromium draws one mark per
# connect line and the listener's shaded intervals.
. "$(dirname "$0")/../lib.sh"
SA=$TOP/sockaudit
command -v jq >/dev/null || { fail "jq not installed (scripts/ensure-deps.sh test)"; finish; }

NA=sa-join-a-$$ NB=sa-join-b-$$ NC=sa-join-c-$$
for ns in $NA $NB $NC; do
	ip netns add $ns || { fail "ip netns add $ns"; finish; }
	on_exit "ip netns del $ns"
	ip -n $ns link set lo up
done
ip link add sjA$$ type veth peer name sjC$$ || { fail "veth pair"; finish; }
ip link set sjA$$ netns $NA && ip link set sjC$$ netns $NC
ip -n $NA addr add 10.213.7.1/24 dev sjA$$ && ip -n $NA link set sjA$$ up
ip -n $NC addr add 10.213.7.2/24 dev sjC$$ && ip -n $NC link set sjC$$ up

PORT=$(free_port)
# The listener: backlog 1; accepts nothing until $T/go exists and 1.5 s
# have passed since listen(), then accepts everything for 3 s.
cat >"$T/srv.py" <<'EOF'
import os, socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1)
t0 = time.time()
open(sys.argv[3] + ".tmp", "w").write(str(os.getpid())); os.rename(sys.argv[3] + ".tmp", sys.argv[3])
while not os.path.exists(sys.argv[4]) or time.time() - t0 < 1.5:
    if time.time() - t0 > 20: break
    time.sleep(0.01)
s.settimeout(0.2); keep = []; end = time.time() + 3
while time.time() < end:
    try: keep.append(s.accept()[0])
    except socket.timeout: pass
EOF
cat >"$T/cli.py" <<'EOF'
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=15)
time.sleep(0.1); c.close()
EOF

# scenario NAME SERVER_NS CLIENT_NS SERVER_ADDR CONNECT_ADDR [IDLE_NS]
scenario() {
	local name=$1 sns=$2 cns=$3 saddr=$4 caddr=$5 idle=${6:-} i pids=()
	local d=$T/$name
	mkdir -p "$d"
	if [ -n "$idle" ]; then
		ip netns exec "$idle" env SOCKAUDIT_LOG="$d/idle.jsonl" LD_PRELOAD="$(preload_value)" /usr/bin/python3 -c '
import os, socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
open(sys.argv[2] + ".tmp", "w").write(str(os.getpid())); os.rename(sys.argv[2] + ".tmp", sys.argv[2])
time.sleep(8)' "$PORT" "$d/idle.pid" &
		for i in $(seq 200); do [ -f "$d/idle.pid" ] && break; sleep 0.05; done
	fi
	ip netns exec "$sns" env SOCKAUDIT_LOG="$d/srv.jsonl" LD_PRELOAD="$(preload_value)" \
		/usr/bin/python3 "$T/srv.py" "$saddr" "$PORT" "$d/srv.pid" "$d/go" & pids+=($!)
	for i in $(seq 200); do [ -f "$d/srv.pid" ] && break; sleep 0.05; done
	for i in 1 2 3 4 5 6 7 8; do
		ip netns exec "$cns" ${CLIENT_HOST:+unshare --uts} env SOCKAUDIT_LOG="$d/cli.jsonl" \
			LD_PRELOAD="$(preload_value)" CLIENT_HOST="${CLIENT_HOST:-}" /bin/bash -c \
			'[ -n "$CLIENT_HOST" ] && hostname "$CLIENT_HOST"; exec timeout 30 /usr/bin/python3 "$@"' \
			_ "$T/cli.py" "$caddr" "$PORT" & pids+=($!)
	done
	# Two connections fill the queue (room 2); wait until the others'
	# SYNs went unanswered (SYN-SENT), so each resends at least once.
	for i in $(seq 200); do
		[ "$(ip netns exec "$cns" ss -Htn state syn-sent "dport = :$PORT" | wc -l)" -ge 4 ] && break
		sleep 0.05
	done
	touch "$d/go"
	for i in "${pids[@]}"; do wait "$i"; done
	[ -n "$idle" ] && wait
}

# ---- the scenario, with the idle same-address listener in another namespace ----
scenario same $NA $NA 127.0.0.1 127.0.0.1 $NB
D=$T/same
SPID=$(cat "$D/srv.pid") IPID=$(cat "$D/idle.pid")
check_jq "init lines carry netns, nodename and boot_id" "$D/srv.jsonl" \
	'map(select(.event == "init")) | length >= 1 and all(.netns > 0 and (.nodename | length > 0) and (.boot_id | test("^[0-9a-f-]{36}$")))'
ns_a=$(jq -s 'map(select(.event == "init"))[0].netns' "$D/srv.jsonl")
ns_b=$(jq -s 'map(select(.event == "init"))[0].netns' "$D/idle.jsonl")
check "the two namespaces have different netns inodes ($ns_a, $ns_b)" test "$ns_a" != "$ns_b" -a "$ns_b" != null
slow=$(jq -s '[.[] | select(.event == "connect" and (.syn_retrans // 0) >= 1)] | length' "$D/cli.jsonl")
check "the clients resent SYNs ($slow connects)" test "$slow" -ge 3

"$SA" report --color=never "$D/cli.jsonl" "$D/idle.jsonl" "$D/srv.jsonl" >"$D/report.txt"; rc=$?
check "report: status 0" test $rc = 0
sed -n '/^== Fix first/,/^== /p' "$D/report.txt" >"$D/top.txt"
# The title, then the fix (docs/report.md, "The fix in the program's words"), then the sentence.
sentence_of() { grep -m1 -E '^     [0-9]+ connects? from ' "$1"; }
first=$(sed -n '2p' "$D/top.txt"; sentence_of "$D/top.txt")
echo "# $(head -3 "$D/top.txt" | tail -2 | tr '\n' ' ')"
check "it leads with the fix: python3's listen(fd, N), not a file" \
	grep -qE '^     Fix: listen\(fd, [0-9]+\) where python3 sets its backlog .*it called listen\(fd, 1\)' <(sed -n 3p "$D/top.txt")
check "the first item is the joined cause" grep -q '^  1\. connects waited on a listener' <<<"$first"
check "it names the listener's pid, address and backlog: python3[$SPID]'s listener at 127.0.0.1:$PORT (backlog 1" \
	grep -qF "python3[$SPID]'s listener at 127.0.0.1:$PORT (backlog 1, room 2)" <<<"$first"
check "it says how big a backlog would do" grep -qE 'raise its backlog to at least [0-9]+, or accept faster' <<<"$first"
# One figure for one fix: Fix first's, which is never below the listener's
# own (backlog_needed, what its advice says), and the listener's section
# gives the same number when it is more than the listener's own.
fig=$(grep -oE 'raise its backlog to at least [0-9]+' <<<"$first" | grep -oE '[0-9]+$')
own=$(jq -s '[.[] | select(.event == "listener_stats") | .backlog_needed // 0] | max // 0' "$D/srv.jsonl")
set_line=$(grep -E '^    backlog to set' "$D/report.txt" | grep -oE 'set +[0-9]+' | grep -oE '[0-9]+$')
echo "# fix first $fig, the listener's own $own, its section ${set_line:-none}"
check "one backlog figure: Fix first's ($fig) >= the listener's own ($own), its section says ${set_line:-none}" \
	eval '[ -n "$fig" ] && [ "$fig" -ge "$own" ] && { [ "$fig" = "$own" ] && [ -z "$set_line" ] || [ "$set_line" = "$fig" ]; }'
check "it has its time range and evidence lines" \
	eval 'grep -qE "[0-9:.]{12}-[0-9:.]{12} UTC" <<<"$first" && grep -q "srv.jsonl:[0-9]*  listen by python3\[$SPID\]" "$D/top.txt"'
check "the idle listener in the other namespace (pid $IPID) is never named in Fix first" \
	eval '! grep -qw "$IPID" "$D/top.txt"'
check "slow_connect and syn_retransmitted are one item, not ranked again" \
	eval '! grep -qE "^  [0-9]\. (slow_connect|syn_retransmitted):" "$D/top.txt"'

"$SA" report --json "$D/cli.jsonl" "$D/idle.jsonl" "$D/srv.jsonl" >"$D/report.json"
check_jq "--json: the first ranked item is the joined cause naming pid $SPID, 127.0.0.1:$PORT, backlog 1" "$D/report.json" \
	".[0] | .fix_first[0].cause as \$c | .causes[\$c] | .kind == \"joined\" and .listener.pid == $SPID
	 and .listener.local == \"127.0.0.1:$PORT\" and .listener.backlog == 1 and .connects >= 3"
text_sentence=$(sentence_of "$D/top.txt" | sed 's/^     //')
json_sentence=$(jq -r '.fix_first[0].sentence' "$D/report.json")
check "--json carries the text's sentence" test "$text_sentence" = "$json_sentence"
check_jq "--json: no cause names the other namespace's listener" "$D/report.json" \
	"[.[0].causes[] | select((.listener.pid? // 0) == $IPID or (.sentence | contains(\"[$IPID]\")))] | length == 0"

# ---- the page in a browser --------------------------------------------------------
if command -v chromium >/dev/null; then
	PROFILE=$(mktemp -d "$T/chromium.XXXXXX")
	"$SA" report --html "$D/page.html" "$D/cli.jsonl" "$D/idle.jsonl" "$D/srv.jsonl"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--user-data-dir="$PROFILE" --dump-dom "file://$D/page.html" 2>/dev/null >"$D/dom.html"
	mkdir -p "$BUILD"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--user-data-dir="$PROFILE" --hide-scrollbars --window-size=1200,1300 \
		--screenshot="$BUILD/report-join.png" "file://$D/page.html" >/dev/null 2>&1
	want=$(jq -s '[.[] | select(.event == "connect" and (.connect_ms | type) == "number")] | length' "$D/cli.jsonl")
	got=$(grep -o '<g class="conn"' "$D/dom.html" | wc -l)
	check "the timeline draws one mark per connect line ($got = $want)" test "$got" = "$want" -a "$want" -ge 3
	resends=$(grep -o '<path class="resend"' "$D/dom.html" | wc -l)
	want_r=$(jq -s '[.[] | select(.event == "connect") | .syn_retrans // 0] | add' "$D/cli.jsonl")
	check "SYN resends are marked ($resends = $want_r)" test "$resends" = "$want_r"
	shaded=$(grep -oE '<rect class="shade (noaccept|full)"' "$D/dom.html" | wc -l)
	check "the listener's no-accept and queue-full intervals are shaded ($shaded)" test "$shaded" -ge 2
	check "the cause's numbers are in a table beside the chart" grep -q '<div class="timeline" id="cause-0"' "$D/dom.html"
	check "screenshot saved to build/report-join.png" test -s "$BUILD/report-join.png"
else
	fail "chromium not installed (scripts/ensure-deps.sh test)"
fi

# ---- the clients' log alone: not joined, and what would decide it -----------------
"$SA" report --color=never "$D/cli.jsonl" >"$D/alone.txt"
sed -n '/^== Fix first/,/^== /p' "$D/alone.txt" >"$D/alone.top"
check "clients alone: the cause says the listener is not among the logs" \
	grep -q "the listener at 127.0.0.1:$PORT is not among these logs" "$D/alone.top"
check "clients alone: it says what would decide it" grep -q 'What would decide it: audit the program listening at' "$D/alone.top"
"$SA" report --color=never "$D/cli.jsonl" "$D/idle.jsonl" >"$D/idle.txt"
check "clients and the other namespace's idle listener: not joined, the listener not named" \
	eval 'grep -q "the 1 listener at that address in another namespace or on another host is not the one" "$D/idle.txt" && ! sed -n "/^== Fix first/,/^== /p" "$D/idle.txt" | grep -q "$IPID"'

"$SA" report --help >"$T/help.txt"
check "report --help names --json" grep -q -- '--json' "$T/help.txt"
check "the man page names --json" grep -qF '.B \-\-json' "$TOP/docs/man/sockaudit.1"

# ---- another host (its own namespace and hostname), the exact address ---------------
CLIENT_HOST=sa-join-client scenario veth $NA $NC 10.213.7.1 10.213.7.1
D=$T/veth
SPID=$(cat "$D/srv.pid")
"$SA" report --json "$D/cli.jsonl" "$D/srv.jsonl" >"$D/report.json"
check_jq "the clients' init lines name their own host (a UTS namespace)" "$D/cli.jsonl" \
	'map(select(.event == "init")) | length >= 1 and all(.nodename == "sa-join-client")'
check_jq "another host and namespace, the exact listen address 10.213.7.1:$PORT: joined to pid $SPID" "$D/report.json" \
	".[0] | .causes[0] | .kind == \"joined\" and .listener.pid == $SPID and .peer == \"10.213.7.1:$PORT\""
[ -n "${JOIN_KEEP:-}" ] && cp -r "$T/same" "$JOIN_KEEP"
finish
