#!/bin/bash
# Issue 15, cases 10-12: the signals API seen from a handler, memory under
# listener churn, configuration values.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/life_lib.sh"
RP=$(free_port)

# 10. In a SIGUSR1 handler (raised 20 times): sigaction(sig, NULL, &old) gives
# the handler itself, signal(sig, h) returns it; the refused connect the
# handler makes is treated the same on every run: logged on all 20 or none.
life_plain "$T/sp" 10 "$PROGS/life_sigapi" 20 "$RP"
life_shim "$T/ss" 10 info "$PROGS/life_sigapi" 20 "$RP"
life_same "case 10: sigaction/signal inside the handler return the host's handler on every run (shim: $(grep -c 'old is h 1, signal() returned h 1' "$T/ss.out")/20 runs, plain $(grep -c 'old is h 1, signal() returned h 1' "$T/sp.out")/20)" \
	"$T/sp" "$T/ss"
L="$T/ss.jsonl"
# Calls inside a host handler are not audited; a process with nothing else
# to say opens no log at all.
if [ -e "$L" ]; then life_parses "case 10: log parses" "$L"; else ok "case 10: nothing audited, so no log file was created"; : >"$L"; fi
check_jq "case 10: the handler's connect is audited on every run or on none (got $(life_jq "$L" '[.[]|select(.event=="connect")]|length') of 20)" "$L" \
	'[.[] | select(.event=="connect")] | length as $n | $n == 0 or $n == 20'

# 11. 6,000 short-lived listeners (listen, one accept, close) after 100
# warm-up ones. VmRSS growth under the shim at most plain's + 1 MB; the
# second half grows at most 512 kB more than plain's; a listener_stats line
# for each of the 6,100 listeners.
NL=$([ -n "${SANITIZE:-}" ] && echo 1000 || echo 6000)   # sanitizers make each listener slow
life_plain "$T/lp" 30 "$PROGS/life_listeners" $NL
life_shim "$T/ls" 30 info "$PROGS/life_listeners" $NL
life_same "case 11: 6,000 short-lived listeners run as plain" "$T/lp" "$T/ls"
L="$T/ls.jsonl"
life_parses "case 11: log parses" "$L"
read -r _ _ p0 p1 p2 < <(grep '^# rss_kb' "$T/lp.err")
read -r _ _ s0 s1 s2 < <(grep '^# rss_kb' "$T/ls.err")
if [ -n "${SANITIZE:-}" ]; then
	# ASan keeps freed blocks in a quarantine (256 MB) and TSan shadows every
	# page: resident memory says nothing about the shim's own there.
	ok "case 11: RSS growth # SKIP sanitizer build ($SANITIZE)"
elif [ -z "${s2:-}" ] || [ -z "${p2:-}" ]; then fail "case 11: RSS growth" "no rss_kb line (plain '${p2:-}', shim '${s2:-}')"
else
	msg="VmRSS kB plain $p0 -> $p1 -> $p2 (+$((p2 - p0))), shim $s0 -> $s1 -> $s2 (+$((s2 - s0)))"
	if [ $((s2 - s0)) -le $((p2 - p0 + 1024)) ]; then ok "case 11: RSS growth small: $msg"
	else fail "case 11: RSS growth small" "$msg"; fi
	if [ $((s2 - s1)) -le $((p2 - p1 + 512)) ]; then ok "case 11: memory flat in the second 3,000: shim +$((s2 - s1)) kB, plain +$((p2 - p1)) kB"
	else fail "case 11: memory flat in the second 3,000" "shim +$((s2 - s1)) kB, plain +$((p2 - p1)) kB"; fi
fi
check_jq "case 11: a listener_stats line with its accept for each of the $((NL + 100)) listeners (got $(life_jq "$L" '[.[]|select(.event=="listener_stats" and .accepts >= 1)]|length'))" "$L" \
	"[.[] | select(.event==\"listener_stats\" and .accepts >= 1)] | length == $((NL + 100))"

# 12. Configuration.
for v in on yes true; do
	SOCKAUDIT_DISABLE=$v life_shim "$T/dis$v" 10 info "$PROGS/life_cfg" enabled
	got="$(head -1 "$T/dis$v.out"), log file $([ -e "$T/dis$v.jsonl" ] && echo created || echo absent)"
	if [ "$LR_RC" = 0 ] && grep -qx 'enabled 0' "$T/dis$v.out" && [ ! -e "$T/dis$v.jsonl" ]; then
		ok "case 12: SOCKAUDIT_DISABLE=$v disables ($got)"
	else fail "case 12: SOCKAUDIT_DISABLE=$v disables" "$got (exit $LR_RC)"; fi
done
long=$(seq -f 'prog%03g' 60 | paste -sd,),life_cfg
SOCKAUDIT_COMM=$long life_shim "$T/comm" 10 info "$PROGS/life_cfg" enabled
ev=$( [ -e "$T/comm.jsonl" ] && life_jq "$T/comm.jsonl" '[.[]|.event]|join(",")')
if [ -z "$(life_jq "$T/comm.jsonl" '[.[]|select(.event!="warning")]|length' | grep -v '^0$')" ]; then
	ok "case 12: an over-long SOCKAUDIT_COMM (${#long} chars) audits none (events: ${ev:-none})"
else fail "case 12: an over-long SOCKAUDIT_COMM (${#long} chars) audits none" "events logged: $ev"; fi
if grep -q SOCKAUDIT_COMM "$T/comm.err" 2>/dev/null || life_jq "$T/comm.jsonl" 'any(.[]; .variable=="SOCKAUDIT_COMM")' | grep -q true; then
	ok "case 12: an over-long SOCKAUDIT_COMM warns"
else fail "case 12: an over-long SOCKAUDIT_COMM warns" "no warning on stderr or in the log"; fi
for v in 'fd: 2' 'fd:+2'; do
	LR_LOG="$v" life_shim "$T/fd" 10 info "$PROGS/life_cfg" enabled
	w=$(grep '^{' "$T/fd.err" | jq -s -r '[.[] | select(.variable=="SOCKAUDIT_LOG") | .msg] | join("; ")' 2>/dev/null)
	if [ -n "$w" ]; then ok "case 12: SOCKAUDIT_LOG='$v' is rejected with a warning ($w)"
	else fail "case 12: SOCKAUDIT_LOG='$v' is rejected with a warning" "accepted silently (stderr events: $(grep '^{' "$T/fd.err" | jq -s -r '[.[].event]|join(",")'))"; fi
done
# A relative %p path: the child chdir()s before its first socket call; the
# file is opened in the directory the process started in.
mkdir -p "$T/start/sub"
for m in chdir forkchdir; do
	rm -f "$T"/start/rel-* "$T"/start/sub/rel-*
	(cd "$T/start" && LR_LOG='rel-%p.jsonl' life_shim "$T/rel$m" 10 info "$PROGS/life_cfg" "$m" sub)
	where=$(cd "$T/start" && find . -name 'rel-*.jsonl' -size +0 | sort | tr '\n' ' ')
	if [ -n "$where" ] && [ -z "$(ls "$T"/start/sub/rel-* 2>/dev/null)" ] &&
	   cat "$T"/start/rel-*.jsonl | jq -s -e 'any(.[]; .event=="listen")' >/dev/null 2>&1; then
		ok "case 12 ($m): SOCKAUDIT_LOG=rel-%p.jsonl opened in the start directory (non-empty: $where)"
	else fail "case 12 ($m): SOCKAUDIT_LOG=rel-%p.jsonl opened in the start directory" "non-empty logs: ${where:-none}"; fi
done
finish
