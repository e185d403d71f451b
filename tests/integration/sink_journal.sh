#!/bin/bash
# The journal sink (SOCKAUDIT_LOG=journal, sockaudit -o journal) against a
# real systemd-journald, started here in a private mount namespace (tmpfs
# on /run/systemd and /run/log: the host's journal, if any, is untouched).
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
JD=/lib/systemd/systemd-journald
if [ ! -x "$JD" ] || ! command -v journalctl >/dev/null || ! command -v unshare >/dev/null; then
	fail "journal sink: systemd-journald, journalctl and unshare are needed" "install systemd"
	finish
fi
if [ -z "${SA_IN_JOURNAL_NS:-}" ]; then
	SA_IN_JOURNAL_NS=1 exec unshare -m --propagation private "$BASH" "$0" "$@"
fi
for d in /run/systemd /run/log; do mkdir -p $d && mount -t tmpfs -o mode=0755 tmpfs $d; done
mkdir -p /run/systemd/journal
start_journald() {
	$JD & JPID=$!
	for _ in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
}
start_journald
on_exit 'kill -CONT $JPID 2>/dev/null; kill $JPID 2>/dev/null; wait $JPID 2>/dev/null'
# The launcher under make SANITIZE=...: the sanitizer runtime handed to it
# in LD_PRELOAD, which it keeps first (as tests/integration/cli.sh does).
san_rt=$(preload_value); san_rt=${san_rt%"$LIB"}; san_rt=${san_rt%:}
launch() { if [ -n "$san_rt" ]; then LD_PRELOAD=$san_rt "$@"; else "$@"; fi; }
jq_journal() { journalctl -q -D /run/log/journal "$@" -o json 2>/dev/null; }
# Entries for FIELD=VALUE, waited for (journald writes them as they come).
# Up to 10 s: under make test's parallel jobs journald took over 3 s to
# store a trace run's last entry once.
wait_entries() {   # WANT MATCHES...: up to WAIT_S (10) seconds
	local want=$1 end=$((SECONDS + ${WAIT_S:-10})); shift
	while [ $SECONDS -le $end ]; do
		[ "$(jq_journal "$@" | wc -l)" -ge "$want" ] && return 0
		sleep 0.05
	done
	return 1
}

# A clamped backlog: one entry, found by its finding code, with its fields.
SOCKAUDIT_LOG=journal preload $PY -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(60000)
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(7)
print(s.getsockname()[1], t.getsockname()[1])' >"$T/ports"
read -r P1 P2 <"$T/ports"
wait_entries 1 SOCKAUDIT_FINDING=backlog_clamped SOCKAUDIT_LOCAL=127.0.0.1:$P1
jq_journal SOCKAUDIT_FINDING=backlog_clamped SOCKAUDIT_LOCAL=127.0.0.1:$P1 >"$T/clamped"
check "journalctl SOCKAUDIT_FINDING=backlog_clamped finds the entry" test "$(wc -l <"$T/clamped")" = 1
check_jq "entry: PRIORITY 4, SYSLOG_IDENTIFIER sockaudit, SOCKAUDIT_EVENT listen" "$T/clamped" \
  '.[0] | .PRIORITY=="4" and .SYSLOG_IDENTIFIER=="sockaudit" and .SOCKAUDIT_EVENT=="listen"'
check_jq "entry: MESSAGE is the line's msg, SOCKAUDIT_JSON the whole line" "$T/clamped" \
  '.[0] | (.SOCKAUDIT_JSON | fromjson) as $l | .MESSAGE == $l.msg and $l.backlog_requested == 60000 and $l.findings == ["backlog_clamped"]'
check_jq "entry: scalar fields as SOCKAUDIT_<KEY>" "$T/clamped" \
  '.[0] | .SOCKAUDIT_BACKLOG_REQUESTED=="60000" and (.SOCKAUDIT_BACKLOG_EFFECTIVE|tonumber) < 60000 and .SOCKAUDIT_LOCAL=="127.0.0.1:'$P1'" and (._PID == .SOCKAUDIT_PID)'
wait_entries 1 SOCKAUDIT_EVENT=listen SOCKAUDIT_LOCAL=127.0.0.1:$P2
jq_journal SOCKAUDIT_EVENT=listen SOCKAUDIT_LOCAL=127.0.0.1:$P2 >"$T/plain"
check_jq "a line without findings: PRIORITY 6, MESSAGE describes the event" "$T/plain" \
  '.[0] | .PRIORITY=="6" and (.MESSAGE|startswith("listen ")) and (.MESSAGE|contains("backlog_requested=7")) and (has("SOCKAUDIT_FINDING")|not)'

# Two findings on one line: SOCKAUDIT_FINDING repeated, found by each.
# Trace: a connect without findings is PRIORITY 7.
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=journal preload $PY -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
c = socket.create_connection(s.getsockname()); a, _ = s.accept()
print(s.getsockname()[1])' >"$T/tport"
TP=$(cat "$T/tport")
wait_entries 1 SOCKAUDIT_EVENT=connect SOCKAUDIT_PEER=127.0.0.1:$TP
check_jq "trace connect: PRIORITY 7" <(jq_journal SOCKAUDIT_EVENT=connect SOCKAUDIT_PEER=127.0.0.1:$TP) \
  '.[0].PRIORITY=="7" and .[0].SOCKAUDIT_OUTCOME=="ok"'
SOCKAUDIT_LOG=journal preload $PY -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 10)' >/dev/null
wait_entries 1 SOCKAUDIT_FINDING=defer_rounded
jpid=$(jq_journal SOCKAUDIT_FINDING=defer_rounded | tail -1 | jq -r ._PID)
check "a second finding code in another entry of the same process is searchable too" \
  test "$(jq_journal SOCKAUDIT_FINDING=defer_rounded _PID=$jpid | wc -l)" -ge 1

# The warn level still sends the summary (tests/unit/test_journal.c checks
# a line with two codes gives SOCKAUDIT_FINDING twice).
SOCKAUDIT_LEVEL=warn SOCKAUDIT_LOG=journal preload $PY -c '
import socket, os
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(60000)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 10)
print(os.getpid())' >"$T/wpid"
WP=$(cat "$T/wpid")
wait_entries 1 SOCKAUDIT_EVENT=summary _PID=$WP
check_jq "warn level: the summary entry arrives" <(jq_journal SOCKAUDIT_EVENT=summary _PID=$WP) \
  '.[0].SOCKAUDIT_JSON | fromjson | .event == "summary"'

# Fork, threads, a close-all daemon: every line still arrives, each from
# the process that wrote it; the same program to a file gives the count.
prog='
import socket, os, threading, sys
def L(n):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(n); return s
keep = [L(5)]
th = [threading.Thread(target=lambda i=i: keep.append(L(6 + i))) for i in range(4)]
[t.start() for t in th]; [t.join() for t in th]
pid = os.fork()
if pid == 0:
    os.closerange(3, 4096)          # a daemon closing everything it inherited
    L(20); L(21); os._exit(0)
os.waitpid(pid, 0)
os.closerange(3, 4096)
keep = [L(30)]
print(os.getpid(), pid)'
SOCKAUDIT_LOG="$T/ref.jsonl" preload $PY -c "$prog" >/dev/null
SOCKAUDIT_LOG=journal preload $PY -c "$prog" >"$T/fpids"
read -r FP CP <"$T/fpids"
want_p=$(jq -s '[.[] | select(.event=="listen")] | group_by(.pid) | map(length) | sort | map(tostring) | join(",")' "$T/ref.jsonl")
wait_entries 8 SOCKAUDIT_EVENT=listen _PID=$FP + SOCKAUDIT_EVENT=listen _PID=$CP
got_p=$( (jq_journal SOCKAUDIT_EVENT=listen _PID=$FP; jq_journal SOCKAUDIT_EVENT=listen _PID=$CP) |
	jq -s '[.[] | .SOCKAUDIT_JSON | fromjson] | group_by(.pid) | map(length) | sort | map(tostring) | join(",")')
check "fork + threads + close-all: listen entries per process as in a file ($want_p)" test "$got_p" = "$want_p"
check "the child's entries carry the child's pid (journald's _PID)" \
  test "$(jq_journal SOCKAUDIT_EVENT=listen _PID=$CP | jq -s 'all(.[]; (.SOCKAUDIT_JSON|fromjson).pid == ('$CP'))')" = true

# Socket calls from a signal handler firing every 200 us while the main
# thread writes trace lines to the journal: the host runs as plain (a
# lock or malloc on the sink path would deadlock it: a timeout).
if [ -x "$PROGS/sighandler" ]; then
	"$PROGS/sighandler" 800 >"$T/sig.plain" 2>/dev/null
	SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=journal timeout -k 2 30 env LD_PRELOAD="$(preload_value)" \
		"$PROGS/sighandler" 800 >"$T/sig.out" 2>"$T/sig.err"; rc=$?
	# A trace flood: journald may take many seconds to index it on a loaded machine.
	WAIT_S=30 wait_entries 1 SOCKAUDIT_EVENT=summary _COMM=sighandler
	spid=$(jq_journal SOCKAUDIT_EVENT=summary _COMM=sighandler | tail -1 | jq -r ._PID)
	check "signal handler making socket calls: host unchanged, its summary in the journal (rc $rc)" \
		bash -c "[ $rc = 0 ] && cmp -s '$T/sig.plain' '$T/sig.out' && [ -n '$spid' ] && [ '$spid' != null ]"
else
	fail "signal handler program built" "$PROGS/sighandler missing"
fi

# The journal's JSON export read back by every verb that reads logs: a
# listener with backlog 2 and six connects (each accepted) at trace, written to journald,
# then `journalctl -o json` piped in. The report, metrics and diff of the
# export equal those of the same lines as a plain log (SOCKAUDIT_JSON
# taken out with jq), and no event goes without a name.
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=journal preload $PY -c '
import os, socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(2)
for _ in range(6):
    c = socket.create_connection(s.getsockname(), timeout=5); s.accept()[0].close(); c.close()
s.close(); print(os.getpid())' >"$T/jpid" 2>/dev/null
JP=$(cat "$T/jpid")
wait_entries 1 SOCKAUDIT_EVENT=summary _PID=$JP
jq_journal SYSLOG_IDENTIFIER=sockaudit _PID=$JP >"$T/export.json"
jq -r .SOCKAUDIT_JSON "$T/export.json" >"$T/plain.jsonl"
"$TOP/sockaudit" report --json - <"$T/export.json" >"$T/rep.export" 2>&1
"$TOP/sockaudit" report --json "$T/plain.jsonl" >"$T/rep.plain" 2>&1
# A busy journald may not take every line (its socket full): the shim then
# says how many it lost in a warning, and the listener's counts stay whole.
check_jq "export: the report sees the listener (backlog 2, 6 accepts) and 6 connects (or a warning of lines lost), every event named" "$T/rep.export" \
  '.[0] | (.listeners | map(select(.backlog_effective == 2 and .stats.accepts == 6)) | length) == 1 and
   (.input.events_by_type | has("(no event name)") | not) and
   ((.connects.logged == 6 and .input.events_by_type.accept == 6) or (.input.events_by_type.warning // 0) >= 1)'
check "export: the same listeners, connects, findings and counts as the plain lines' report" \
	test "$(jq -c '.listeners, .connects, .findings, .input, .processes' "$T/rep.export")" = \
	     "$(jq -c '.listeners, .connects, .findings, .input, .processes' "$T/rep.plain")"
jq_journal SYSLOG_IDENTIFIER=sockaudit _PID=$JP | "$TOP/sockaudit" report - >"$T/txt.export"
check "journalctl -o json | sockaudit report -: the text report of the plain lines" \
	cmp -s "$T/txt.export" <("$TOP/sockaudit" report - <"$T/plain.jsonl")
check "export: sockaudit metrics prints what it prints for the plain lines" \
	cmp -s <("$TOP/sockaudit" metrics - <"$T/export.json") <("$TOP/sockaudit" metrics "$T/plain.jsonl")
# top's snapshot (standard output is not a terminal), its clock line left out.
check "export: sockaudit top shows what it shows for the plain lines" \
	cmp -s <("$TOP/sockaudit" top "$T/export.json" | tail -n +2) <("$TOP/sockaudit" top "$T/plain.jsonl" | tail -n +2)
"$TOP/sockaudit" diff --json "$T/plain.jsonl" - <"$T/export.json" >"$T/diff.export"
check_jq "export: sockaudit diff of the plain lines against the export, every row same" "$T/diff.export" \
  '.[0] | ([.listeners[], .peers[] | .rows[] | .verdict] | length > 0 and all(. == "same")) and all(.findings[]; .verdict == "same")'
if command -v systemd-cat >/dev/null; then
	# Another program's entries among ours (journalctl without -t): passed
	# over, not events without a name.
	printf 'hello\n{"not": "ours"}x\n' | systemd-cat -t other-prog
	wait_entries 2 SYSLOG_IDENTIFIER=other-prog
	cat <(jq_journal SYSLOG_IDENTIFIER=other-prog) "$T/export.json" | "$TOP/sockaudit" report --json - >"$T/rep.mixed"
	check "another program's journal entries mixed in: the same report" \
		test "$(jq -c '.listeners, .connects, .input' "$T/rep.mixed")" = "$(jq -c '.listeners, .connects, .input' "$T/rep.plain")"
	# Lines that reached the journal as a program's output: MESSAGE holds them.
	systemd-cat -t sockaudit-stdout cat "$T/plain.jsonl"
	wait_entries "$(wc -l <"$T/plain.jsonl")" SYSLOG_IDENTIFIER=sockaudit-stdout
	jq_journal SYSLOG_IDENTIFIER=sockaudit-stdout | "$TOP/sockaudit" report --json - >"$T/rep.msg"
	check "lines in MESSAGE (systemd-cat): the same report" \
		test "$(jq -c '.listeners, .connects, .input' "$T/rep.msg")" = "$(jq -c '.listeners, .connects, .input' "$T/rep.plain")"
fi

# A process that writes nothing opens nothing.
plain=$($PY -c 'import os; print(sorted(os.listdir("/proc/self/fd")))')
under=$(SOCKAUDIT_LOG=journal preload $PY -c 'import os; print(sorted(os.listdir("/proc/self/fd")))')
check "no line, no fd: the journal socket is opened at the first line" test "$plain" = "$under"

# journald stopped (SIGSTOP): its queue fills, the host never waits; the
# lines not taken are counted and said on stderr as the program ends.
kill -STOP $JPID
t0=$(date +%s%N)
launch timeout 20 "$TOP/sockaudit" -o journal -- $PY -c '
import socket
for i in range(1500):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(60000); s.close()
print("done")' >"$T/stop.out" 2>"$T/stop.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 600000 ))
kill -CONT $JPID
check "journald stopped: the program ends normally (rc 0, in ${ms} ms)" test $rc = 0 -a "$(cat "$T/stop.out")" = done
check "journald stopped: the loss is said on stderr" grep -q "^sockaudit: [0-9]* lines were dropped (the journal is not taking messages" "$T/stop.err"

# No journald at all: the program runs as plain, the loss is said.
kill $JPID; wait $JPID 2>/dev/null
rm -f /run/systemd/journal/socket
plain=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(60000); print("up")'; echo "rc=$?")
under=$(launch "$TOP/sockaudit" -o journal -- $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(60000); print("up")' 2>"$T/none.err"; echo "rc=$?")
check "no journald: the program runs as plain" test "$plain" = "$under"
# As the syslog sink: stderr instead, with one warning naming the journal
# and why, launcher or plain LD_PRELOAD alike.
for how in launcher preload; do
	if [ $how = launcher ]; then
		launch "$TOP/sockaudit" -o journal -- $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(60000); print("up")' >/dev/null 2>"$T/none.$how.err"
	else
		SOCKAUDIT_LOG=journal LD_PRELOAD="$(preload_value)" $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(60000); print("up")' >/dev/null 2>"$T/none.$how.err"
	fi
	check "no journald ($how): a warning on stderr names the journal and why, then the lines there" \
		jq -e -s '(map(select(.event=="warning" and .value=="journal" and (.msg | test("journal cannot be reached \\(ENOENT")))) | length == 1)
			and (map(select(.event=="listen")) | length >= 1) and (map(select(.event=="init"))[0].sink == "stderr")' "$T/none.$how.err"
done
finish
