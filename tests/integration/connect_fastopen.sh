#!/bin/bash
# TCP Fast Open, in a network namespace with net.ipv4.tcp_fastopen=7 (client
# on, data in the SYN without a cookie): connect() with TCP_FASTOPEN_CONNECT
# returns 0 before any SYN, and sendto(MSG_FASTOPEN) on an unconnected socket
# is the connect. Each is logged and counted when the handshake ends: ok
# against a listener, failed ECONNREFUSED against a closed port (the first
# send fails), never "ok" at connect() time.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/life_lib.sh"

NS=sa-tfo-$$
ip netns add $NS || { fail "ip netns add $NS"; finish; }
on_exit "ip netns del $NS"
ip -n $NS link set lo up
ip netns exec $NS sysctl -qw net.ipv4.tcp_fastopen=7

# A listener that answers "ok" to each of 4 clients (plain and under the shim).
ip netns exec $NS python3 -c "
import socket
l = socket.socket(); l.bind(('127.0.0.1', 7070)); l.listen(8)
for i in range(4):
    c, _ = l.accept(); c.recv(10); c.send(b'ok'); c.close()
" & srv=$!
for i in $(seq 100); do ip netns exec $NS ss -Hltn 'sport = :7070' | grep -q . && break; sleep 0.05; done

for m in connect sendto; do
	for port in 7070 7071; do
		n="$m to ${port/7070/a listener}"; n=${n/7071/a closed port}
		life_plain "$T/$m$port.p" 10 ip netns exec $NS "$PROGS/tfo_client" $port $m
		life_shim "$T/$m$port.s" 10 trace ip netns exec $NS "$PROGS/tfo_client" $port $m
		life_same "$n: same results as plain ($(tr '\n' ' ' <"$T/$m$port.p.out"))" "$T/$m$port.p" "$T/$m$port.s"
		L=$T/$m$port.s.jsonl
		C='[.[] | select(.event=="connect")]'
		got=$(life_jq "$L" "$C | map({outcome, fast_open, errno, completed_by}) | tostring")
		if [ $port = 7070 ]; then
			check_jq "$n: one connect line, ok, fast_open (got $got)" "$L" \
				"$C | length == 1 and .[0].outcome == \"ok\" and .[0].fast_open == true"
			check_jq "$n: counted ok, timed" "$L" \
				'[.[] | select(.event=="summary")] | .[0].connects.ok == 1 and .[0].connects.failed == 0 and .[0].connect_ms.n == 1'
		else
			check_jq "$n: one connect line, failed ECONNREFUSED, fast_open (got $got)" "$L" \
				"$C | length == 1 and .[0].outcome == \"failed\" and .[0].errno == \"ECONNREFUSED\" and .[0].fast_open == true"
			check_jq "$n: counted failed, not ok" "$L" \
				'[.[] | select(.event=="summary")] | .[0].connects.ok == 0 and .[0].connects.failed == 1'
		fi
	done
done
wait "$srv"
finish
