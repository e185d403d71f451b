#!/bin/bash
# Findings say what their line measured: the backlog clamp's
# plural at somaxconn 0, TCP_DEFER_ACCEPT rounding with the real window
# (a listener's TCP_RTO_MAX_MS changes it only on 6.19+: measured here with
# a silent client), and blind_spot for a raw syscall().
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
NS=sa-fndtext-$$
ip netns add $NS || { fail "ip netns add"; finish; }
on_exit "ip netns del $NS"
ip -n $NS link set lo up

# 1. somaxconn 0: listen(5) keeps room for one connection, and says "1 connection".
ip netns exec $NS sysctl -qw net.core.somaxconn=0
cat >"$T/clamp.py" <<'PY'
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(5)
PY
SOCKAUDIT_LOG="$T/zero" timeout 20 ip netns exec $NS env LD_PRELOAD="$(preload_value)" $PY "$T/clamp.py"
check_jq "somaxconn 0: listen(5) reads back 0, room for 1, said in the singular" "$T/zero" \
  'any(.[]; .event=="listen" and .backlog_requested==5 and .backlog_effective==0 and .queue_capacity==1 and (.findings|index("backlog_clamped")) and (.msg|test("1 connection can wait for accept\\(\\)")) and (.msg|test("connections")|not) and (.msg|test("read back with TCP_INFO")))'
ip netns exec $NS sysctl -qw net.core.somaxconn=3
SOCKAUDIT_LOG="$T/three" timeout 20 ip netns exec $NS env LD_PRELOAD="$(preload_value)" $PY "$T/clamp.py"
check_jq "somaxconn 3: listen(5) says 4 connections can wait, names somaxconn and the sysctl to raise" "$T/three" \
  'any(.[]; .event=="listen" and .backlog_effective==3 and (.msg|test("4 connections can wait")) and (.msg|test("namespace.s net.core.somaxconn")) and (.msg|test("sysctl -w net.core.somaxconn=5 ")))'
ip netns exec $NS sysctl -qw net.core.somaxconn=4096

# 2. TCP_DEFER_ACCEPT 2 s is kept as 2 rounds and reads back 3 s. The
# listener also sets TCP_RTO_MAX_MS=1000 (6.15+): on 6.19+ that caps each
# SYN-ACK timeout and the window is 2 s; before, it stays 3 s. A silent
# client shows which: its connection reaches accept() after the window.
cat >"$T/defer.py" <<'PY'
import socket, time, sys
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(10)
try:
    l.setsockopt(socket.IPPROTO_TCP, 44, 1000)   # TCP_RTO_MAX_MS
    print("rto_max", l.getsockopt(socket.IPPROTO_TCP, 44))
except OSError:
    print("rto_max none")
l.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 2)
c = socket.socket(); t0 = time.monotonic(); c.connect(l.getsockname())
a, _ = l.accept()
print("accepted_after %.2f" % (time.monotonic() - t0))
PY
out=$(SOCKAUDIT_LOG="$T/defer" timeout 30 ip netns exec $NS env LD_PRELOAD="$(preload_value)" $PY "$T/defer.py")
after=$(echo "$out" | awk '/accepted_after/ {print $2}')
rel=$(uname -r); major=${rel%%.*}; minor=${rel#*.}; minor=${minor%%[!0-9]*}
check_jq "defer_rounded: 2 s reads back as 3 s, 2 rounds, no claim of a measured wait" "$T/defer" \
  'any(.[]; .opt=="TCP_DEFER_ACCEPT" and .requested_s==2 and .effective_s==3 and (.findings|index("defer_rounded")) and (.msg|test("reads back as 3 s: kept as 2 SYN-ACK rounds. Write 3 to match.")) and (.msg|test("waits and reports")|not))'
if echo "$out" | grep -q "rto_max 1000" && { [ "$major" -gt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -ge 19 ]; }; }; then
	check "6.19+: the silent client was accepted after the capped 2 s window ($after s)" \
		awk -v a="$after" 'BEGIN { exit !(a >= 1.8 && a < 2.8) }'
	check_jq "6.19+: defer_rounded says the real window (2 s) beside the reported 3 s" "$T/defer" \
		'any(.[]; .opt=="TCP_DEFER_ACCEPT" and (.msg|test("really lasts 2 s \\(TCP_RTO_MAX_MS 1000\\)")))'
else
	check "before 6.19 ($rel): the silent client was accepted after the reported 3 s ($after s; $(echo "$out" | head -1))" \
		awk -v a="$after" 'BEGIN { exit !(a >= 2.8 && a < 4.5) }'
	check_jq "before 6.19: no deferral message claims a different window" "$T/defer" \
		'[.[] | select(.msg != null and (.msg|test("really lasts")))] | length == 0'
fi
check_jq "defer_bypass_risk names the window and the fix, not a measured burst" "$T/defer" \
  'any(.[]; (.findings // [] | index("defer_bypass_risk")) and (.msg|test("past 11 clients in the [23] s window")) and (.msg|test("Raise the backlog to keep it")))'
check_jq "the silent client's accept: empty after the window" "$T/defer" \
  'any(.[]; .event=="accept" and (.findings // [] | index("empty_accept_defer_expired")))'

# 3. blind_spot: accept through libc's syscall() is named, once. The
# number is the headers' SYS_accept (it differs per architecture).
nr_accept=$(printf '#include <sys/syscall.h>\nSYS_accept\n' | cc -E -P - | tail -n 1)
cat >"$T/raw.py" <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for _ in range(3):
    libc.syscall(int(os.environ["NR_ACCEPT"]), -1, None, None)   # accept(-1): EBADF
PY
SOCKAUDIT_LOG="$T/raw" NR_ACCEPT=$nr_accept timeout 20 env LD_PRELOAD="$(preload_value)" $PY "$T/raw.py"
check_jq "blind_spot once for accept through syscall(), saying which calls are missing" "$T/raw" \
  '[.[] | select(.event=="blind_spot")] | length==1 and (.[0].call=="accept") and (.[0].msg|test("such calls are missing"))'
finish
