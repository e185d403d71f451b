#!/bin/bash
# Debian's rsyslog reading our JSON lines files with imfile, as
# docs/shippers.md configures it: every line arrives whole and parses as
# the same JSON (mmjsonparse), including a line of the full 4096 bytes and
# the lines of a %p file that appears after rsyslog started.
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
command -v rsyslogd >/dev/null || { fail "rsyslog is needed" "scripts/ensure-deps.sh fleet"; finish; }
mkdir -p "$T/logs" "$T/work"
# The configuration the docs give, with this test's paths.
sed -n '/^# rsyslog-begin/,/^# rsyslog-end/p' "$TOP/docs/shippers.md" | sed '1d;$d' |
	sed -e "s|/var/log/sockaudit-shipped.jsonl|$T/shipped.jsonl|g" -e "s|/var/log/sockaudit|$T/logs|g" \
	    -e "s|/var/spool/rsyslog|$T/work|g" >"$T/rsyslog.conf"
check "docs/shippers.md holds the rsyslog configuration" grep -q imfile "$T/rsyslog.conf"
# An already-written log, and one written while rsyslog runs.
SOCKAUDIT_LOG="$T/logs/early.%p.jsonl" preload $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(100000)'
rsyslogd -n -f "$T/rsyslog.conf" -i "$T/rsyslogd.pid" >"$T/rsyslogd.out" 2>&1 &
RPID=$!
on_exit "kill $RPID 2>/dev/null; wait $RPID 2>/dev/null"
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/logs/late.%p.jsonl" preload $PY -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30)
for i in range(20):
    c = socket.create_connection(s.getsockname()); a, _ = s.accept(); a.close(); c.close()
u = socket.socket(socket.AF_UNIX); u.bind("\0" + "x" * 100); u.listen(3)'
# A line of the full 4096 bytes (the most the library writes), appended the
# way the library appends, to see the shipper's line limit hold it: a
# warning about a long log path (a msg is at most 240 characters; the
# value is what grows).
late=$(ls "$T"/logs/late.*.jsonl | head -1)
$PY -c '
import json, sys
pre = {"ts": 1.5, "event": "warning", "schema": 1, "pid": 1, "severity": "warn",
       "variable": "SOCKAUDIT_LOG", "value": "", "msg": "path too long; using stderr"}
n = 4095 - len(json.dumps(pre, separators=(",", ":")))
pre["value"] = "/" + "x" * (n - 1)
sys.stdout.write(json.dumps(pre, separators=(",", ":")) + "\n")' >>"$late"
cat "$T"/logs/*.jsonl >"$T/all.jsonl"
check "the long line is 4096 bytes with its newline" test "$(tail -1 "$late" | wc -c)" = 4096
want=$(wc -l <"$T/all.jsonl")
for _ in $(seq 100); do
	[ -f "$T/shipped.jsonl" ] && [ "$(wc -l <"$T/shipped.jsonl")" -ge "$want" ] && break
	sleep 0.1
done
check "rsyslog imfile shipped every line ($want), from the early and the late file" \
	test "$(wc -l <"$T/shipped.jsonl" 2>/dev/null)" = "$want"
check "each shipped line is the same JSON as written (mmjsonparse, then the whole object)" \
	cmp <(jq -cS . "$T/all.jsonl" | sort) <(jq -cS . "$T/shipped.jsonl" | sort)
check "rsyslog said nothing about the input (no errors, no truncation)" \
	bash -c "! grep -qiE 'error|truncat|too long' '$T/rsyslogd.out'"
finish
