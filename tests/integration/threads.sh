#!/bin/bash
# Threads: 4 acceptor and 8 connector threads at once on loopback, 1200
# connections, at trace level. Every line parses (none torn or interleaved),
# none lost: accept events == connections accepted, connect events ==
# connections made, and the connector threads' tids are all there.
. "$(dirname "$0")/../lib.sh"

prog=$PROGS/threads
[ -x "$prog" ] || { fail "threads built" "$prog missing"; finish; }
A=4 C=8 K=150
log=$T/threads.jsonl
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$log" SOCKAUDIT_STATS_INTERVAL=0 \
	timeout -k 2 60 env LD_PRELOAD="$(preload_value)" "$prog" $A $C $K >"$T/out" 2>"$T/err"; rc=$?
cat "$T/out" | sed 's/^/# /'
[ $rc = 0 ] && ok "$((A + C)) threads, $((C * K)) connections under the shim (exit 0)" \
	|| { fail "threads run under the shim" "exit $rc"; sed 's/^/# /' "$T/err" | head; }
lfd=$(sed -n 's/.*listen_fd=\([0-9]*\).*/\1/p' "$T/out")
acc=$(sed -n 's/.* accepted=\([0-9]*\).*/\1/p' "$T/out")
con=$(sed -n 's/.* connected=\([0-9]*\).*/\1/p' "$T/out")
[ -n "$acc" ] || { fail "threads printed its counts"; finish; }

# Torn or interleaved lines would fail to parse one by one.
lines=$(wc -l <"$log")
bad=$(jq -R -r 'try (fromjson | if type == "object" then "ok" else "BAD" end) catch "BAD"' "$log" | grep -c BAD)
[ $bad = 0 ] && [ "$lines" -gt 0 ] && ok "all $lines lines parse on their own" || fail "all lines parse on their own" "$bad of $lines do not"
[ -z "$(tail -c1 "$log")" ] && ok "log ends with a complete line" || fail "log ends with a complete line"
check_jq "accept events == connections accepted ($acc)" "$log" \
	"[.[] | select(.event==\"accept\" and .ret >= 0 and .listen_fd == $lfd)] | length == $acc"
check_jq "connect events == connections made ($con)" "$log" \
	"[.[] | select(.event==\"connect\" and .ret == 0)] | length == $con"
check_jq "TCP_NODELAY setsockopt events == sockets ($((C * K)))" "$log" \
	"[.[] | select(.event==\"setsockopt\" and .opt==\"TCP_NODELAY\")] | length == $((C * K))"
check_jq "connect events come from $C distinct tids" "$log" \
	"[.[] | select(.event==\"connect\") | .tid] | unique | length == $C"
check_jq "exactly one init event" "$log" '[.[] | select(.event=="init")] | length == 1'
check_jq "summary at exit says no line was dropped" "$log" \
	'any(.[]; .event=="summary" and .dropped == 0)'
finish
