#!/bin/bash
# What a listener is, and what its backlog is:
#  - an AF_UNIX listener (backlog 10) passed to a child that never saw its
#    listen() (as haproxy's -x or systemd pass sockets): the child's
#    listener_stats says backlog 10, as ss -xl does (unix_diag), never -1;
#  - listen(INT_MAX) ("as many as allowed") is not flagged backlog_clamped;
#    listen(5000) under somaxconn 4096 still is;
#  - an AF_UNIX datagram socket whose listen() failed, then accept() failed,
#    is no listener: no listener_stats line, no summary listener;
#  - a UDP connect(AF_UNSPEC) (a disconnect) is a trace line with outcome
#    "disconnect" and counted in connects.disconnects.
. "$(dirname "$0")/../lib.sh"

# 1. The inherited AF_UNIX listener.
cat >"$T/parent.py" <<'EOF'
import os, socket, subprocess, sys
path, log, lib = sys.argv[1:4]
l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
l.bind(path); l.listen(10)
ss = subprocess.run(['ss', '-Hxl', 'src', path], capture_output=True, text=True).stdout.split()
print('ss_backlog', ss[3] if len(ss) > 3 else '?')
env = dict(os.environ, LD_PRELOAD=lib, SOCKAUDIT_LOG=log, SOCKAUDIT_LEVEL='info')
child = subprocess.Popen([sys.executable, '-c',
    'import socket,sys; l = socket.socket(fileno=int(sys.argv[1])); c, _ = l.accept(); c.close()',
    str(l.fileno())], pass_fds=(l.fileno(),), env=env)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect(path); c.close()
print('child', child.wait())
EOF
python3 "$T/parent.py" "$T/u.sock" "$T/inh.jsonl" "$(preload_value)" >"$T/inh.out" 2>&1
ssb=$(awk '/ss_backlog/{print $2}' "$T/inh.out")
got=$(jq -s -c '[.[] | select(.event=="listener_stats") | {backlog, accepts}]' "$T/inh.jsonl" 2>/dev/null)
check_jq "inherited AF_UNIX listener: listener_stats backlog 10 as ss -xl says ($ssb), 1 accept (got $got)" "$T/inh.jsonl" \
	"[.[] | select(.event==\"listener_stats\")] | length >= 1 and all(.backlog == 10 and .backlog == ${ssb:-0}) and .[-1].accepts == 1"

# 2-4. A small program of calls, at trace.
cat >"$T/calls.py" <<'EOF'
import ctypes, socket, sys
d = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(d + '/dg.sock')
for f in (lambda: s.listen(5), s.accept):
    try: f(); print('no error')
    except OSError as e: print(e.errno)
s.close()
for b in (2147483647, 5000):
    t = socket.socket(); t.bind(('127.0.0.1', 0)); t.listen(b); t.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.connect(('127.0.0.1', 9))
unspec = (ctypes.c_char * 16)()
print('disconnect', ctypes.CDLL(None).connect(u.fileno(), unspec, 16))
u.close()
EOF
python3 "$T/calls.py" "$T" >"$T/calls.plain" 2>&1
rm -f "$T/dg.sock"
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=$T/calls.jsonl LD_PRELOAD="$(preload_value)" python3 "$T/calls.py" "$T" >"$T/calls.shim" 2>&1
check "the calls return as plain ($(tr '\n' ' ' <"$T/calls.plain"))" cmp -s "$T/calls.plain" "$T/calls.shim"
L=$T/calls.jsonl
somax=$(cat /proc/sys/net/core/somaxconn)
check_jq "listen(INT_MAX): no backlog_clamped (got $(jq -s -c '[.[]|select(.event=="listen" and .backlog_requested==2147483647)|.findings]' "$L"))" "$L" \
	'[.[] | select(.event=="listen" and .backlog_requested==2147483647)] | length == 1 and ((.[0].findings // []) | index("backlog_clamped") | not)'
if [ "$somax" -lt 5000 ]; then
	check_jq "listen(5000) under somaxconn $somax: still backlog_clamped" "$L" \
		'[.[] | select(.event=="listen" and .backlog_requested==5000)] | length == 1 and (.[0].findings | index("backlog_clamped"))'
fi
check_jq "unix dgram socket whose listen failed: no listener_stats, no summary listener" "$L" \
	'([.[] | select(.event=="listener_stats")] | length == 0) and ([.[] | select(.event=="summary")] | .[0].listeners == [])'
check_jq "UDP connect(AF_UNSPEC): a disconnect line and count (got $(jq -s -c '[.[]|select(.event=="connect")|.outcome]' "$L"))" "$L" \
	'([.[] | select(.event=="connect" and .outcome=="disconnect" and .proto=="udp" and .ret==0)] | length == 1) and ([.[] | select(.event=="summary")] | .[0].connects.disconnects == 1 and .[0].connects.ok == 1)'
finish
