#!/bin/bash
# Sink faults: whatever happens to the log, the host runs exactly as it does
# without the shim (same stdout, same exit status 7), is never killed by
# SIGPIPE, never blocks, and never has a log line written into one of its own
# fds. Bad SOCKAUDIT_* values give the default plus exactly one warning each.
. "$(dirname "$0")/../lib.sh"

host=$PROGS/sockhost
[ -x "$host" ] || { fail "sockhost built" "$host missing"; finish; }
N=300   # connections: at trace level well over a pipe's 64 KiB of log

# Reference run without the shim.
env --default-signal=PIPE "$host" $N >"$T/plain.out" 2>"$T/plain.err"; prc=$?
[ $prc = 7 ] && grep -q '^stray bytes on host socketpair=0$' "$T/plain.out" \
	&& ok "host runs plain (exit 7)" || { fail "host runs plain" "exit $prc"; finish; }

# host_same NAME RC OUTFILE: the host's exit status and stdout equal the plain run's.
host_same() {
	if [ "$2" = $prc ] && cmp -s "$T/plain.out" "$3"; then ok "$1: host unchanged"
	else fail "$1: host unchanged" "exit $2 (plain $prc)"; diff "$T/plain.out" "$3" | sed 's/^/# /' | head; fi
}
# warnings FILE...: number of warning lines in the files.
warnings() { cat "$@" 2>/dev/null | grep -c '"event":[ ]*"warning"'; }

# 1. stderr sink, the pipe's reader has exited: no SIGPIPE death.
s=$SECONDS
{ sleep 0.3; exec env --default-signal=PIPE SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=stderr \
	LD_PRELOAD="$(preload_value)" "$host" $N >"$T/gone.out"; } 2>&1 | true
rc=${PIPESTATUS[0]}
[ "$rc" != 141 ] && ok "reader gone: not killed by SIGPIPE" || fail "reader gone: not killed by SIGPIPE" "exit 141"
host_same "reader gone" "$rc" "$T/gone.out"

# 2. stderr sink into a pipe nobody reads (full after 64 KiB): never blocks.
mkfifo "$T/fifo"
exec 7<>"$T/fifo"            # we hold the read end open and never read
s0=$(date +%s%N)
timeout -k 2 20 env --default-signal=PIPE SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=stderr LD_PRELOAD="$(preload_value)" \
	"$host" $N >"$T/stall.out" 2>"$T/fifo"; rc=$?
ms=$(( ($(date +%s%N) - s0) / 1000000 ))
exec 7<&-
[ $rc != 124 ] && [ $rc != 137 ] && ok "stalled reader: host did not block (${ms} ms for $N connections)" \
	|| fail "stalled reader: host did not block" "killed by timeout after ${ms} ms"
host_same "stalled reader" "$rc" "$T/stall.out"

# 2b. The same through fd:9: a FIFO nobody reads, and a stream socket whose
# peer never reads (its buffer fills); neither may block the host.
exec 7<>"$T/fifo"
s0=$(date +%s%N)
timeout -k 2 20 env --default-signal=PIPE SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=fd:9 LD_PRELOAD="$(preload_value)" \
	"$host" $N >"$T/stall9.out" 9>"$T/fifo"; rc=$?
ms=$(( ($(date +%s%N) - s0) / 1000000 ))
exec 7<&-
[ $rc != 124 ] && [ $rc != 137 ] && ok "fd:9 FIFO nobody reads: host did not block (${ms} ms)" || fail "fd:9 FIFO nobody reads: host did not block" "timeout"
host_same "fd:9 FIFO nobody reads" "$rc" "$T/stall9.out"
/usr/bin/python3 - "$host" 1500 "$(preload_value)" >"$T/sock9.out" 2>"$T/sock9.err" <<'PY'
import os, socket, subprocess, sys
a, b = socket.socketpair()            # we keep b and never read it
env = dict(os.environ, SOCKAUDIT_LEVEL="trace", SOCKAUDIT_LOG="fd:9", LD_PRELOAD=sys.argv[3])
os.dup2(a.fileno(), 9); os.set_inheritable(9, True)
try:
    r = subprocess.run([sys.argv[1], sys.argv[2]], env=env, pass_fds=(9,), timeout=20, stdout=subprocess.PIPE)
    sys.stdout.write(r.stdout.decode()); print("rc=%d" % r.returncode, file=sys.stderr)
except subprocess.TimeoutExpired:
    print("rc=timeout", file=sys.stderr)
PY
rc=$(sed -n 's/^rc=//p' "$T/sock9.err")
[ "$rc" != timeout ] && ok "fd:9 socket whose peer never reads: host did not block" || fail "fd:9 socket whose peer never reads: host did not block" "timeout"
# (1500 connections: about 1.3 MB of log, far past the socket buffer.)
if [ "$rc" = 7 ] && grep -q '^connections=1500$' "$T/sock9.out" && grep -q '^stray bytes on host socketpair=0$' "$T/sock9.out"; then
	ok "fd:9 socket whose peer never reads: host unchanged"
else fail "fd:9 socket whose peer never reads: host unchanged" "exit $rc"; fi

# 3. SOCKAUDIT_LOG=/dev/full: every write fails with ENOSPC.
env --default-signal=PIPE SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=/dev/full LD_PRELOAD="$(preload_value)" \
	"$host" $N >"$T/full.out" 2>"$T/full.err"; rc=$?
host_same "/dev/full" "$rc" "$T/full.out"

# 4. An unwritable path: one warning (on the fallback stderr), host unchanged.
for p in "$T/no/such/dir/a.jsonl" "$T"; do
	env --default-signal=PIPE SOCKAUDIT_LOG="$p" LD_PRELOAD="$(preload_value)" "$host" 20 >"$T/unw.out" 2>"$T/unw.err"; rc=$?
	if [ "$rc" = 7 ] && grep -q '^connections=20$' "$T/unw.out" && grep -q '^stray bytes on host socketpair=0$' "$T/unw.out"; then
		ok "unwritable path $(basename "$p"): host unchanged"
	else fail "unwritable path $(basename "$p"): host unchanged" "exit $rc"; fi
	w=$(warnings "$T/unw.err")
	[ "$w" = 1 ] && ok "unwritable path $(basename "$p"): exactly one warning" \
		|| { fail "unwritable path $(basename "$p"): exactly one warning" "$w warnings"; sed 's/^/# /' "$T/unw.err" | head -5; }
done

# 5. A symlink planted at the log path is not followed.
echo "precious" >"$T/target"
ln -s "$T/target" "$T/link.jsonl"
ln -s "$T/absent" "$T/dangling.jsonl"
env --default-signal=PIPE SOCKAUDIT_LOG="$T/link.jsonl" LD_PRELOAD="$(preload_value)" "$host" 20 >"$T/sym.out" 2>"$T/sym.err"; rc=$?
env --default-signal=PIPE SOCKAUDIT_LOG="$T/dangling.jsonl" LD_PRELOAD="$(preload_value)" "$host" 20 >"$T/sym2.out" 2>>"$T/sym.err"; rc2=$?
[ "$(cat "$T/target")" = precious ] && ok "symlink at the log path: target untouched" \
	|| fail "symlink at the log path: target untouched" "target now $(head -c 200 "$T/target")"
[ ! -e "$T/absent" ] && ok "dangling symlink at the log path: target not created" \
	|| fail "dangling symlink at the log path: target not created"
[ $rc = 7 ] && [ $rc2 = 7 ] && ok "symlink at the log path: host unchanged" || fail "symlink at the log path: host unchanged" "exit $rc/$rc2"
w=$(warnings "$T/sym.err")
[ "$w" = 2 ] && ok "symlink at the log path: one warning per run" || fail "symlink at the log path: one warning per run" "$w warnings in 2 runs"

# 6. A path sink is created 0600 (the log shows what a program does).
env --default-signal=PIPE SOCKAUDIT_LOG="$T/mode.jsonl" LD_PRELOAD="$(preload_value)" "$host" 2 >/dev/null 2>&1
[ "$(stat -c %a "$T/mode.jsonl" 2>/dev/null)" = 600 ] && ok "path sink created with mode 0600" \
	|| fail "path sink created with mode 0600" "mode $(stat -c %a "$T/mode.jsonl" 2>&1)"

# 7. fd:N naming a closed fd. fd 3 is closed at exec and the host's first
# socket takes it: the shim must not write its log into the host's socket.
env --default-signal=PIPE SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=fd:3 LD_PRELOAD="$(preload_value)" "$host" $N 3<&- \
	>"$T/fdc.out" 2>"$T/fdc.err"; rc=$?
host_same "fd:3 closed at start" "$rc" "$T/fdc.out"
w=$(warnings "$T/fdc.err")
[ "$w" = 1 ] && ok "fd:3 closed at start: exactly one warning" || { fail "fd:3 closed at start: exactly one warning" "$w warnings"; sed 's/^/# /' "$T/fdc.err" | head -3; }
env --default-signal=PIPE SOCKAUDIT_LOG=fd:200 LD_PRELOAD="$(preload_value)" "$host" 20 >"$T/fdc2.out" 2>"$T/fdc2.err"; rc=$?
[ $rc = 7 ] && [ "$(warnings "$T/fdc2.err")" = 1 ] && ok "fd:200 (closed): host unchanged, one warning" \
	|| fail "fd:200 (closed): host unchanged, one warning" "exit $rc, $(warnings "$T/fdc2.err") warnings"

# 8. fd:N naming a read-only fd.
echo "ro" >"$T/ro.txt"
env --default-signal=PIPE SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=fd:9 LD_PRELOAD="$(preload_value)" "$host" $N 9<"$T/ro.txt" \
	>"$T/fdro.out" 2>"$T/fdro.err"; rc=$?
host_same "fd:9 read-only" "$rc" "$T/fdro.out"
w=$(warnings "$T/fdro.err")
[ "$w" = 1 ] && ok "fd:9 read-only: exactly one warning" || { fail "fd:9 read-only: exactly one warning" "$w warnings"; sed 's/^/# /' "$T/fdro.err" | head -3; }
[ "$(cat "$T/ro.txt")" = ro ] && ok "fd:9 read-only: file untouched" || fail "fd:9 read-only: file untouched"
grep '^{' "$T/fdro.err" >"$T/fdro.all"
check_jq "fd:9 read-only: the warning names SOCKAUDIT_LOG=fd:9" "$T/fdro.all" \
	'any(.[]; .event=="warning" and .variable=="SOCKAUDIT_LOG" and .value=="fd:9")'
grep '^{' "$T/unw.err" >"$T/unw.all"
check_jq "unwritable path: the warning names SOCKAUDIT_LOG and the path" "$T/unw.all" \
	"any(.[]; .event==\"warning\" and .variable==\"SOCKAUDIT_LOG\" and .value==\"$T\")"

# 9. A working fd:N sink, for contrast: lines arrive there.
env --default-signal=PIPE SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=fd:9 LD_PRELOAD="$(preload_value)" "$host" 5 9>"$T/fd9.jsonl" \
	>"$T/fd9.out" 2>"$T/fd9.err"; rc=$?
[ $rc = 7 ] && grep -q '^stray bytes on host socketpair=0$' "$T/fd9.out" && ok "fd:9 writable: host unchanged" || fail "fd:9 writable: host unchanged" "exit $rc"
check_jq "fd:9 writable: init and 5 connects logged there" "$T/fd9.jsonl" \
	'any(.[]; .event=="init") and ([.[] | select(.event=="connect" and .ret==0)] | length) == 5'

# 10. Bad SOCKAUDIT_* values: default used, one warning line each, naming the variable.
bad_value() {   # bad_value VAR VALUE: run with it, log to a file (or stderr)
	local var=$1 val=$2 tag=$3 shown
	shown=$(printf '%q' "$2"); val=$2
	env --default-signal=PIPE SOCKAUDIT_LOG="$T/$tag.jsonl" "$var=$val" LD_PRELOAD="$(preload_value)" "$host" 20 \
		>"$T/$tag.out" 2>"$T/$tag.err"; local rc=$?
	if [ $rc = 7 ] && grep -q '^connections=20$' "$T/$tag.out"; then ok "$var=$shown: host unchanged"
	else fail "$var=$shown: host unchanged" "exit $rc"; fi
	cat "$T/$tag.jsonl" "$T/$tag.err" 2>/dev/null | grep '^{' >"$T/$tag.all"
	check_jq "$var=$shown: exactly one warning naming the variable" "$T/$tag.all" \
		"[.[] | select(.event==\"warning\")] | length == 1 and .[0].variable == \"$var\""
}
bad_value SOCKAUDIT_LEVEL loud level
check_jq "SOCKAUDIT_LEVEL=loud: default level info used" "$T/level.all" '.[] | select(.event=="init") | .level == "info"'
bad_value SOCKAUDIT_STATS_INTERVAL -3 stats
bad_value SOCKAUDIT_DISABLE maybe disable
bad_value SOCKAUDIT_LEVEL "$(printf 'tr\xffce"\\')" levelbytes
env --default-signal=PIPE SOCKAUDIT_LOG=fd:abc LD_PRELOAD="$(preload_value)" "$host" 20 >"$T/fdabc.out" 2>"$T/fdabc.err"; rc=$?
[ $rc = 7 ] && ok "SOCKAUDIT_LOG=fd:abc: host unchanged" || fail "SOCKAUDIT_LOG=fd:abc: host unchanged" "exit $rc"
grep '^{' "$T/fdabc.err" >"$T/fdabc.all"
check_jq "SOCKAUDIT_LOG=fd:abc: one warning naming the variable, log on stderr" "$T/fdabc.all" \
	'([.[] | select(.event=="warning")] | length == 1) and ([.[] | select(.event=="warning")][0].variable == "SOCKAUDIT_LOG") and any(.[]; .event=="init")'
# All at once: three warnings, one per variable.
env --default-signal=PIPE SOCKAUDIT_LEVEL=loud SOCKAUDIT_STATS_INTERVAL=-3 SOCKAUDIT_LOG=fd:abc LD_PRELOAD="$(preload_value)" \
	"$host" 20 >"$T/all3.out" 2>"$T/all3.err"; rc=$?
[ $rc = 7 ] && ok "three bad values: host unchanged" || fail "three bad values: host unchanged" "exit $rc"
grep '^{' "$T/all3.err" >"$T/all3.all"
check_jq "three bad values: three warnings, one per variable" "$T/all3.all" \
	'[.[] | select(.event=="warning") | .variable] | sort == ["SOCKAUDIT_LEVEL","SOCKAUDIT_LOG","SOCKAUDIT_STATS_INTERVAL"]'
# Every line the shim wrote anywhere here is valid JSON.
bad=0
for f in "$T"/*.jsonl "$T"/*.err; do
	[ -f "$f" ] || continue
	grep '^{' "$f" | jq -e . >/dev/null 2>&1 || { bad=1; echo "# invalid JSON in $f"; }
done
[ $bad = 0 ] && ok "every log line written is valid JSON" || fail "every log line written is valid JSON"
finish
