#!/bin/bash
# Core: every setsockopt is read back and explained.
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3

cat >"$T/opts.py" <<'PY'
import socket, struct
s = socket.socket()
for v in (1, 2, 3, 4, 7, 10, 15, 30, 60, 128, 300, 3600, 0, -5):
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, v)
u = socket.socket()
u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 100000)
u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 100000)   # repeat: counted, not logged
u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 100000)
big = int(open("/proc/sys/net/core/wmem_max").read()) * 4
u.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, big)
u.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 5))
u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 1, 500000))
u.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"reno")
u.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"lo")
u.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 7)
u.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0x13)
u.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 33)
try:
    u.setsockopt(99, 99, 1)
except OSError as e:
    print("errno", e.errno)
try:
    u.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, -1)
except OSError as e:
    print("errno", e.errno)
PY
out=$(SOCKAUDIT_LOG="$T/log" SOCKAUDIT_LEVEL=info preload $PY "$T/opts.py")
plain=$($PY "$T/opts.py")
check "host output unchanged under the shim" test "$out" = "$plain"
L="$T/log"
check_jq "log is JSON lines starting with init" "$L" '.[0].event == "init" and .[0].schema == 1'

# The rounding table from the TCP_DEFER_ACCEPT study, straight from the events.
got=$(jq -r 'select(.opt=="TCP_DEFER_ACCEPT") | "\(.requested_s)->\(.effective_s)"' "$L" | tr '\n' ' ')
check "TCP_DEFER_ACCEPT read back: $got" test "$got" = "1->1 2->3 3->3 4->7 7->7 10->15 15->15 30->31 60->63 128->247 300->367 3600->3607 0->0 -5->0 "
check_jq "10 -> 15 is defer_rounded with 4 rounds" "$L" \
  'any(.[]; .opt=="TCP_DEFER_ACCEPT" and .requested_s==10 and .effective_s==15 and .rounds==4 and (.findings|index("defer_rounded")) and (.msg|test("15 s")))'
check_jq "exact values carry no finding" "$L" \
  '[.[] | select(.opt=="TCP_DEFER_ACCEPT" and (.requested_s==1 or .requested_s==15 or .requested_s==0))] | length == 3 and all(.findings == null)'
check_jq "SO_RCVBUF doubled is option_adjusted" "$L" \
  'any(.[]; .opt=="SO_RCVBUF" and .requested==100000 and .effective==200000 and (.findings|index("option_adjusted")) and (.msg|test("autotuning")))'
check_jq "a repeat is counted, not logged" "$L" \
  '([.[] | select(.opt=="SO_RCVBUF")] | length == 1) and (.[] | select(.event=="summary") | .suppressed >= 2)'
check_jq "SO_SNDBUF above wmem_max: the cap is named" "$L" \
  'any(.[]; .opt=="SO_SNDBUF" and (.findings|index("option_adjusted")) and (.msg|test("net.core.wmem_max")))'
check_jq "SO_LINGER decoded both ways" "$L" \
  'any(.[]; .opt=="SO_LINGER" and .requested=={"onoff":1,"linger":5} and .effective=={"onoff":1,"linger":5} and .findings==null)'
check_jq "SO_RCVTIMEO decoded as a timeval" "$L" \
  'any(.[]; .opt=="SO_RCVTIMEO" and .requested.sec==1 and .requested.usec==500000 and .effective.sec==1)'
check_jq "TCP_CONGESTION and SO_BINDTODEVICE as strings" "$L" \
  'any(.[]; .opt=="TCP_CONGESTION" and .effective=="reno") and any(.[]; .opt=="SO_BINDTODEVICE" and .requested=="lo" and .effective=="lo")'
check_jq "a boolean set to 7 reads back 1 without a finding" "$L" \
  'any(.[]; .opt=="SO_REUSEADDR" and .requested==7 and .effective==1 and .findings==null)'
check_jq "IP_TOS on TCP: ECN bits explained" "$L" \
  'any(.[]; .opt=="IP_TOS" and .requested==19 and .effective==16 and (.findings|index("option_adjusted")))'
check_jq "failed calls carry the errno name" "$L" \
  'any(.[]; .event=="setsockopt" and .sol=="99" and .opt=="99" and .ret==-1 and .errno=="ENOPROTOOPT") and any(.[]; .opt=="TCP_KEEPIDLE" and .ret==-1 and .errno=="EINVAL")'
check_jq "every line has the common fields" "$L" \
  'all(.[]; (.ts|type)=="number" and (.pid|type)=="number" and (.tid|type)=="number" and .comm=="python3" and .schema==1 and (.severity=="info" or .severity=="warn"))'
check_jq "summary at exit with finding totals" "$L" \
  'any(.[]; .event=="summary" and .findings.defer_rounded >= 8 and .counts.setsockopt >= 20)'
finish
