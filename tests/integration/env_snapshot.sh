#!/bin/bash
# The constructor's copy of the SOCKAUDIT_* settings: the usual few hundred
# bytes go on the data page the loader writes anyway, a longer environment
# spills into a second buffer. Every setting must read back the same
# wherever it landed, in any order, and a setting beyond the copy's 8 kB is
# as if unset (never cut short).
. "$(dirname "$0")/../lib.sh"

# A log path of more than 320 bytes (spills) between two short settings.
long=$T/$(printf 'd%.0s' $(seq 120))/$(printf 'e%.0s' $(seq 120))/$(printf 'f%.0s' $(seq 100))
mkdir -p "$long"
log=$long/audit.jsonl
env SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$log" \
	LD_PRELOAD="$(preload_value)" "$PROGS/sockhost" 3 >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 7 ] && ok "host ran as plain (exit 7)" || fail "host ran as plain (exit 7)" "exit $rc: $(head -c 200 "$T/err")"
if [ -s "$log" ]; then
	ok "a ${#log}-byte log path read back whole: the log is there"
else
	fail "a ${#log}-byte log path read back whole" "no $log; stderr: $(head -c 200 "$T/err")"
fi
init=$(grep -m1 '"event":"init"' "$log" 2>/dev/null)
echo "$init" | grep -q '"level":"trace"' && ok "the setting before it: level trace" ||
	fail "the setting before it: level trace" "${init:0:300}"
# The sink the init line names is the whole path.
echo "$init" | grep -qF "\"sink\":\"$log\"" && ok "the init line names the whole path as its sink" ||
	fail "the init line names the whole path as its sink" "${init:0:500}"
grep -q '"event":"accept"' "$log" && ok "trace lines written (accepts at trace)" ||
	fail "trace lines written (accepts at trace)" "$(cut -c1-120 "$log" | head -3)"

# A short setting after the long one is read too: SOCKAUDIT_DISABLE=1
# there leaves no log at all.
log3=$long/audit3.jsonl
env SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$log3" SOCKAUDIT_DISABLE=1 LD_PRELOAD="$(preload_value)" "$PROGS/sockhost" 3 >/dev/null 2>&1
rc=$?
[ $rc = 7 ] && [ ! -e "$log3" ] && ok "the setting after it: SOCKAUDIT_DISABLE=1 read, no log" ||
	fail "the setting after it: SOCKAUDIT_DISABLE=1 read, no log" "exit $rc, log $([ -e "$log3" ] && echo made || echo absent)"

# The same settings, the long one first: both buffers, the other way round.
log2=$long/audit2.jsonl
env SOCKAUDIT_LOG="$log2" SOCKAUDIT_LEVEL=trace LD_PRELOAD="$(preload_value)" "$PROGS/sockhost" 3 >/dev/null 2>&1
grep -m1 '"event":"init"' "$log2" 2>/dev/null | grep -q '"level":"trace"' &&
	ok "long setting first: log and level both read back" ||
	fail "long setting first: log and level both read back" "$(head -c 300 "$log2" 2>/dev/null)"

# A setting past 8 kB is as if unset: the default (stderr), never a path
# cut short.
huge=$T/$(head -c 9000 /dev/zero | tr '\0' g)
env SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$huge" LD_PRELOAD="$(preload_value)" "$PROGS/sockhost" 3 >/dev/null 2>"$T/err3"
n=$(ls "$T" | grep -c '^ggg')
[ "$n" = 0 ] && grep -q '"event":"init"' "$T/err3" &&
	ok "a 9000-byte log path is as if unset: lines on stderr, no file made" ||
	fail "a 9000-byte log path is as if unset" "files: $n; stderr: $(head -c 200 "$T/err3")"
finish
