#!/bin/bash
# Core: listen() backlog read back, somaxconn per network namespace.
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
NS=sa-listen-$$
ip netns add $NS || { fail "ip netns add"; finish; }
on_exit "ip netns del $NS"
ip -n $NS link set lo up
ip netns exec $NS sysctl -qw net.core.somaxconn=128

cat >"$T/listen.py" <<'PY'
import socket, os, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(511)
s.listen(64)                      # a second listen (nginx reload): a new event
import ctypes   # Python turns listen(-1) into listen(0): call libc directly
t = socket.socket(); t.bind(("127.0.0.1", 0)); ctypes.CDLL(None).listen(t.fileno(), -1)
d = socket.socket(); d.bind(("127.0.0.1", 0))
d.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 1); d.listen(10)
n = socket.socket(); n.bind(("127.0.0.1", 0)); n.listen(0)
u = socket.socket(socket.AF_UNIX); u.bind(sys.argv[1]); u.listen(5)
g = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    g.listen(5)
except OSError as e:
    print("udp listen", e.errno)
PY
SOCKAUDIT_LOG="$T/log" ip netns exec $NS env LD_PRELOAD="$(preload_value)" /usr/bin/python3 "$T/listen.py" "$T/u.sock" >/dev/null
L="$T/log"
check_jq "init reports the namespace's somaxconn" "$L" '.[0].event=="init" and .[0].somaxconn==128'
check_jq "listen(511) reported clamped to 128" "$L" \
  'any(.[]; .event=="listen" and .backlog_requested==511 and .backlog_effective==128 and .somaxconn==128 and .queue_capacity==129 and .backlog_source=="tcp_info" and (.findings|index("backlog_clamped")) and (.msg|test("net.core.somaxconn")))'
check_jq "the second listen() is a new event" "$L" \
  'any(.[]; .event=="listen" and .backlog_requested==64 and .backlog_effective==64 and .findings==null)'
check_jq "listen(-1) is somaxconn, not a clamp" "$L" \
  'any(.[]; .event=="listen" and .backlog_requested==-1 and .backlog_effective==128 and .findings==null)'
check_jq "listen(0) stays 0 with room for 1" "$L" \
  'any(.[]; .event=="listen" and .backlog_requested==0 and .backlog_effective==0 and .queue_capacity==1)'
check_jq "deferral + syncookies + small backlog: defer_bypass_risk" "$L" \
  'any(.[]; .event=="listen" and .backlog_requested==10 and .defer_accept_s==1 and (.findings|index("defer_bypass_risk")))'
check_jq "AF_UNIX backlog read back (unix_diag or computed)" "$L" \
  'any(.[]; .event=="listen" and (.local|endswith("u.sock")) and .backlog_effective==5 and (.backlog_source=="unix_diag" or .backlog_source=="computed"))'
check_jq "UDP listen fails with EOPNOTSUPP, logged" "$L" \
  'any(.[]; .event=="listen" and .ret==-1 and .errno=="EOPNOTSUPP")'
finish
