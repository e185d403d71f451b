#!/bin/bash
# Scenario 1: TCP_DEFER_ACCEPT, what you write and what the kernel keeps.
# Runs alone: demo/01-defer-table.sh
. "$(dirname "$0")/lib.sh"
NAME="1 defer table"
heading "1. TCP_DEFER_ACCEPT: write seconds, the kernel keeps rounds"
say "A program sets TCP_DEFER_ACCEPT to the study's twelve values, one listening socket each," \
    "and reads nothing back itself. The table below is built only from the shim's setsockopt" \
    "events: requested_s is what the program wrote, effective_s what getsockopt() returned," \
    "rounds the SYN-ACK retransmission rounds the kernel stores (1 s, doubling, 120 s cap)."
need_built defer_table || verdict "$NAME"
LOG=$LOGS/01-defer-table.jsonl
rm -f "$LOG"
env $(shim_env "$LOG") "$BIN/defer_table" || fail "defer_table exited non-zero"
have_log "$LOG"

sub "The shim's setsockopt event for 10 s (the study's title):"
show_ev 'select(.event == "setsockopt" and .opt == "TCP_DEFER_ACCEPT" and .requested_s == 10)' "$LOG"
sub "The table, straight from those events:"
{
	printf '%-10s %-16s %-7s %s\n' "wrote (s)" "kernel kept (s)" "rounds" "finding"
	jlr 'select(.event == "setsockopt" and .opt == "TCP_DEFER_ACCEPT")
	    | [.requested_s, .effective_s, .rounds,
	       ((.findings // []) | map(select(. == "defer_rounded")) | join(","))] | @tsv' "$LOG" |
		while IFS=$'\t' read -r w k r f; do printf '%-10s %-16s %-7s %s\n' "$w" "$k" "$r" "${f:--}"; done
} | show
others=$(js_raw '[.[] | select(.event == "setsockopt" and .opt == "TCP_DEFER_ACCEPT") | (.findings // [])[]
	| select(. != "defer_rounded")] | group_by(.) | map("\(.[0]) on \(length)") | join(", ")' "$LOG" 2>/dev/null)
[ -n "$others" ] && say "(Other findings on these lines, not this scenario's subject: $others.)"

# The study's measured table (reference/studies/tcp_defer_accept_write10_read15.txt).
want='[[1,1],[2,3],[3,3],[4,7],[7,7],[10,15],[15,15],[30,31],[60,63],[128,247],[300,367],[3600,3607]]'
got=$(js '[.[] | select(.event == "setsockopt" and .opt == "TCP_DEFER_ACCEPT") | [.requested_s, .effective_s]]' "$LOG" 2>/dev/null)
sub "Checks"
if [ "$(jq -c . <<<"$want")" = "$got" ]; then
	pass "all 12 read-backs match the study (10 -> 15, 128 -> 247, 3600 -> 3607 ...)"
else
	fail "read-backs differ from the study: got ${got:-nothing}"
fi
expect "defer_rounded on every value the kernel changed (8 of 12)" \
	jtrue '[.[] | select(.event == "setsockopt" and .opt == "TCP_DEFER_ACCEPT" and .requested_s != .effective_s
	        and found("defer_rounded"))] | length == 8' "$LOG"
expect "no defer_rounded on the 4 values the kernel kept (1, 3, 7, 15)" \
	jtrue '[.[] | select(.event == "setsockopt" and .opt == "TCP_DEFER_ACCEPT" and .requested_s == .effective_s)]
	       | length == 4 and all(found("defer_rounded") | not)' "$LOG"
verdict "$NAME"
