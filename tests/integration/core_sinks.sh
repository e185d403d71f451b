#!/bin/bash
# Core: sinks, levels, SOCKAUDIT_COMM / SOCKAUDIT_DISABLE.
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
prog='import socket; s=socket.socket(); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 10); s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)'

# A path with %p: one file per process, created 0600.
SOCKAUDIT_LOG="$T/a.%p.jsonl" preload $PY -c "$prog"
f=$(ls "$T"/a.*.jsonl 2>/dev/null | head -1)
check "path sink with %p creates a file named by pid" test -n "$f"
[ -n "$f" ] && check "log file mode is 0600" test "$(stat -c %a "$f")" = 600
[ -n "$f" ] && check_jq "pid in the name matches the lines" "$f" ".[0].pid == $(basename "$f" | cut -d. -f2)"

# stderr is fd 2 itself, never a copy: when the host points fd 2 at its
# own file, lines follow it there (as the host's own messages do), and
# nothing keeps the stderr it started with open.
SOCKAUDIT_LOG=stderr preload $PY -c "import os; fd=os.open('$T/own.log', os.O_WRONLY|os.O_CREAT|os.O_APPEND); os.dup2(fd, 2); $prog" 2>"$T/err"
check_jq "stderr sink follows fd 2 to where the host points it" "$T/own.log" 'any(.[]; .opt=="TCP_DEFER_ACCEPT")'
check "stderr sink: nothing left on the stderr the host let go of" test ! -s "$T/err"

# fd:N
preload env SOCKAUDIT_LOG=fd:7 $PY -c "$prog" 7>"$T/fd7"
check_jq "fd:N sink" "$T/fd7" 'any(.[]; .opt=="SO_KEEPALIVE")'

# Levels: warn keeps findings and the summary only.
SOCKAUDIT_LEVEL=warn SOCKAUDIT_LOG="$T/warn" preload $PY -c "$prog"
check_jq "warn level: findings and summary, no plain setsockopt" "$T/warn" \
  '(map(select(.event=="setsockopt")) | length == 1 and .[0].opt=="TCP_DEFER_ACCEPT") and any(.[]; .event=="summary")'

# SOCKAUDIT_DISABLE and SOCKAUDIT_COMM: pure pass-through.
SOCKAUDIT_DISABLE=1 SOCKAUDIT_LOG="$T/dis" preload $PY -c "$prog"
check "SOCKAUDIT_DISABLE=1 writes nothing" test ! -s "$T/dis"
SOCKAUDIT_COMM=nginx,haproxy SOCKAUDIT_LOG="$T/comm1" preload $PY -c "$prog"
check "SOCKAUDIT_COMM without this program writes nothing" test ! -s "$T/comm1"
SOCKAUDIT_COMM=nginx,python3 SOCKAUDIT_LOG="$T/comm2" preload $PY -c "$prog"
check_jq "SOCKAUDIT_COMM with this program audits it" "$T/comm2" 'any(.[]; .event=="setsockopt")'

# A process that never touches a socket stays silent.
SOCKAUDIT_LOG="$T/quiet" preload /bin/true
check "no socket calls, no lines" test ! -s "$T/quiet"

# Bad values: default plus one warning line each; the host runs unchanged.
out=$(SOCKAUDIT_LEVEL=loud SOCKAUDIT_STATS_INTERVAL=-3 SOCKAUDIT_LOG="$T/bad" preload $PY -c "$prog; print('ran')")
check "host unchanged with bad SOCKAUDIT_* values" test "$out" = ran
check_jq "one warning per bad value, defaults kept" "$T/bad" \
  '([.[] | select(.event=="warning")] | map(.variable) | sort) == ["SOCKAUDIT_LEVEL","SOCKAUDIT_STATS_INTERVAL"] and .[0].level=="info"'

# A symlink at the log path is not followed: one warning on stderr instead.
ln -s "$T/target" "$T/link"
SOCKAUDIT_LOG="$T/link" preload $PY -c "$prog" 2>"$T/err2"
check "symlinked log path not followed" test ! -e "$T/target"
check_jq "unusable path: warning on stderr" "$T/err2" 'any(.[]; .event=="warning" and .variable=="SOCKAUDIT_LOG")'
# The log file's fd: high, but inside the fd table the process has (the
# kernel's first 64 slots here), so it does not grow the table every fork
# then copies; a table the host made bigger gets its top slot.
fdprog='import os, socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1); fds=sorted(int(f) for f in os.listdir("/proc/self/fd")); size=[l.split()[1] for l in open("/proc/self/status") if l.startswith("FDSize")][0]; lg=[f for f in fds if os.path.realpath("/proc/self/fd/%d" % f).endswith(".jsonl")]; print(size, lg)'
out=$(SOCKAUDIT_LOG="$T/fdpos.jsonl" preload $PY -c "$fdprog" 200>&- 251>&- 255>&-)
check "log fd at the top of a 64-slot table, table not grown (FDSize, log fds: $out)" test "$out" = "64 [63]"
out=$(SOCKAUDIT_LOG="$T/fdpos2.jsonl" preload $PY -c "import os; os.dup2(2, 200); $fdprog" 251>&- 255>&-)
check "log fd at the top of a table the host grew to 256 (FDSize, log fds: $out)" test "$out" = "256 [255]"
finish
