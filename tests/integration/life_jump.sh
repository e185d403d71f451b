#!/bin/bash
# A blocking connect left by siglongjmp out of a SIGALRM handler (wget's
# --connect-timeout, gnulib run_with_timeout) is logged and counted at the
# thread's next call, the fd's close, or the process's end, whichever first:
# outcome "interrupted", left_by_jump, connect_ms = the time until the
# signal, the SYN resends seen. Real Debian wget, and tests/progs/life_jumpconn
# (checked first to make the same system calls as wget).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/life_lib.sh"
skip_under_tsan "TSan defers signals to its own handler"
command -v wget >/dev/null || { fail "wget installed (scripts/ensure-deps.sh test)"; finish; }

# The full queue must outlast every case below (about 5 s here, far more on
# a loaded machine or under TCG): 60 s, more with SA_SLOW; killed at the end.
"$PROGS/fullq_server" "$T/port" "$(slack 60000)" 100 & srv=$!
on_exit "kill $srv"
for i in $(seq 100); do [ -f "$T/port" ] && break; sleep 0.02; done
P=$(cat "$T/port")

# The stand-in is a model of wget only if it makes the same calls: from the
# socket to the end, the same system calls with the same flags.
norm() { sed -n '/^socket(AF_INET/,$p' "$1" | grep -v '^timeout$' |
	sed -E 's/0x[0-9a-f]+/X/g; s/htons\([0-9]+\)/P/; s/ +=/ =/'; }
if command -v strace >/dev/null; then
	strace -o "$T/w.st" -e trace=socket,rt_sigaction,setitimer,connect,close \
		wget -q -t 1 --connect-timeout=0.6 "http://127.0.0.1:$P/" 2>/dev/null
	strace -o "$T/s.st" -e trace=socket,rt_sigaction,setitimer,connect,close \
		"$PROGS/life_jumpconn" "$P" 600 close >/dev/null 2>&1
	if diff <(norm "$T/w.st" | grep -v SIGRT) <(norm "$T/s.st" | grep -v SIGRT) >"$T/st.diff"; then
		ok "life_jumpconn makes wget's system calls ($(norm "$T/s.st" | grep -c .) calls from socket to exit)"
	else
		fail "life_jumpconn makes wget's system calls"; sed 's/^/# /' "$T/st.diff" | head -12
	fi
fi

one() {   # NAME LOG: one connect line left by the jump, counted as interrupted
	local n=$1 L=$2 C="[.[] | select(.event==\"connect\" and .peer==\"127.0.0.1:$P\")]" got
	got=$(life_jq "$L" "$C | map({outcome, left_by_jump, connect_ms, syn_retrans, ret}) | tostring")
	life_parses "$n: log parses" "$L"
	check_jq "$n: one connect line, interrupted, left_by_jump, connect_ms 500-3000, syn_retrans a number, ret null (got $got)" "$L" \
		"$C | length == 1 and (.[0] | .outcome == \"interrupted\" and .left_by_jump == true and .connect_ms >= 500 and .connect_ms < 3000 and (.syn_retrans | type == \"number\") and .ret == null)"
	check_jq "$n: the summary counts it ($(life_jq "$L" '[.[]|select(.event=="summary")|.connects]|tostring'))" "$L" \
		'[.[] | select(.event=="summary")] | length == 1 and .[0].connects.interrupted == 1 and .[0].connects.ok == 0'
}

# Real wget at info (the connect is logged for its slow_connect finding).
life_plain "$T/wp" 10 wget -q -t 1 --connect-timeout=0.6 "http://127.0.0.1:$P/"
life_shim "$T/ws" 10 info wget -q -t 1 --connect-timeout=0.6 "http://127.0.0.1:$P/"
life_same "wget: ends as plain (status $(cat "$T/wp.rc"))" "$T/wp" "$T/ws"
one "wget" "$T/ws.jsonl"

# The same for a blocking accept on a listener nobody connects to: the next
# call is the listener's close, or exit(). Counted on the listener
# (left_by_jump, wait_ms) at every level; a trace line.
for m in close exit; do
	for lvl in trace info; do
		life_plain "$T/a$m$lvl.p" 10 "$PROGS/life_jumpacc" 300 "$m"
		life_shim "$T/a$m$lvl.s" 10 $lvl "$PROGS/life_jumpacc" 300 "$m"
		life_same "accept left by a jump, then $m ($lvl): ends as plain" "$T/a$m$lvl.p" "$T/a$m$lvl.s"
		L=$T/a$m$lvl.s.jsonl
		got=$(life_jq "$L" '[.[] | select(.event=="listener_stats") | {left_by_jump, wait_ms}] | tostring')
		check_jq "accept left by a jump, then $m ($lvl): listener_stats left_by_jump 1, wait_ms n 1, 250-3000 ms (got $got)" "$L" \
			'[.[] | select(.event=="listener_stats")] | length == 1 and .[0].left_by_jump == 1 and .[0].wait_ms.n == 1 and .[0].wait_ms.max >= 250 and .[0].wait_ms.max < 3000'
		if [ $lvl = trace ]; then
			check_jq "accept left by a jump, then $m (trace): one accept line, left_by_jump, ret null" "$L" \
				'[.[] | select(.event=="accept")] | length == 1 and .[0].left_by_jump == true and .[0].ret == null and .[0].wait_ms >= 250'
		fi
	done
done

# The stand-in: the next call is the close (as wget), another socket call, or exit().
for m in close next exit; do
	life_plain "$T/${m}p" 10 "$PROGS/life_jumpconn" "$P" 600 "$m"
	life_shim "$T/${m}s" 10 trace "$PROGS/life_jumpconn" "$P" 600 "$m"
	life_same "jump then $m: ends as plain (status $(cat "$T/${m}p.rc"))" "$T/${m}p" "$T/${m}s"
	one "jump then $m" "$T/${m}s.jsonl"
done
finish
