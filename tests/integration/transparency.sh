#!/bin/bash
# Transparency: tests/progs/transparency.c makes dozens of wrong and odd
# socket calls and prints each return value and errno. Its output must be
# identical with and without the shim, at every level and sink; the shim's
# own log must be valid JSON lines that start with the init event.
. "$(dirname "$0")/../lib.sh"

prog=$PROGS/transparency
[ -x "$prog" ] || { fail "transparency program built" "$prog missing"; finish; }

# run NAME [VAR=VALUE...]: runs the program (under the shim when NAME != plain)
# in its own scratch dir; stdout to $T/NAME.out, stderr to $T/NAME.err.
run() {
	local name=$1; shift
	mkdir -p "$T/$name.d"
	if [ "$name" = plain ]; then
		env "$@" timeout 60 "$prog" "$T/$name.d" >"$T/$name.out" 2>"$T/$name.err"
	else
		env "$@" LD_PRELOAD="$(preload_value)" timeout 60 "$prog" "$T/$name.d" >"$T/$name.out" 2>"$T/$name.err"
	fi
	echo $? >"$T/$name.rc"
}

run plain
if [ "$(cat "$T/plain.rc")" = 0 ] && grep -q '^## done' "$T/plain.out"; then
	ok "transparency runs plain ($(grep -c ': ret=' "$T/plain.out") calls)"
else
	fail "transparency runs plain" "rc $(cat "$T/plain.rc")"; sed 's/^/# /' "$T/plain.err"
fi

# same NAME [logfd]: NAME.out equals plain.out, and exit status too. With
# logfd (a path or syslog sink), the last list of open fds may hold one
# more number than plain's: the shim's own log fd, close-on-exec at the top
# of the fd table (docs/hardening.md), and nothing else.
fds() { sed -n 's/^open fds below 256: \(.*\) ([0-9]*)$/\1/p' "$1" | tr ' ' '\n' | sort; }
same() {
	local n=$1 extra=""
	if [ -n "${2:-}" ]; then
		extra=$(comm -13 <(fds "$T/plain.out") <(fds "$T/$n.out") | tr '\n' ' ')
		[ -z "$(comm -23 <(fds "$T/plain.out") <(fds "$T/$n.out"))" ] && [ "$(echo $extra | wc -w)" -le 1 ] || extra="bad: $extra"
	fi
	if [ "$(cat "$T/$n.rc")" = "$(cat "$T/plain.rc")" ] && [ "${extra#bad}" = "$extra" ] &&
	   diff -u <(grep -v '^open fds below' "$T/plain.out") <(grep -v '^open fds below' "$T/$n.out") >"$T/$n.diff" &&
	   { [ -n "${2:-}" ] || diff -u "$T/plain.out" "$T/$n.out" >"$T/$n.diff"; }; then
		ok "identical results under the shim: $n${extra:+ (plus the log fd of the shim: $extra)}"
	else
		fail "identical results under the shim: $n" "exit $(cat "$T/$n.rc") vs $(cat "$T/plain.rc")${extra:+; extra fds $extra}"
		sed 's/^/# /' "$T/$n.diff" | head -60
		sed 's/^/# stderr: /' "$T/$n.err" | grep -v '"event"' | head -10
	fi
}

run trace SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/trace.jsonl" SOCKAUDIT_STATS_INTERVAL=0
same trace logfd
run info SOCKAUDIT_LOG="$T/info.jsonl"
same info logfd
run stderr SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=stderr
same stderr
run fdsink SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=fd:2
same fdsink
run syslog SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG=syslog
same syslog logfd
run stats SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/stats.jsonl" SOCKAUDIT_STATS_INTERVAL=1
same stats logfd
# A low RLIMIT_NOFILE: the host's fd numbers must still be its own (the
# last line, the list of open fds, shows ours and is left out).
( ulimit -n 32; run plain32 ); ( ulimit -n 32; run shim32 SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/shim32.jsonl" )
if [ "$(cat "$T/shim32.rc")" = "$(cat "$T/plain32.rc")" ] && \
   diff <(grep -v '^open fds below' "$T/plain32.out") <(grep -v '^open fds below' "$T/shim32.out") >"$T/32.diff"; then
	ok "identical results under the shim with RLIMIT_NOFILE 32"
else fail "identical results under the shim with RLIMIT_NOFILE 32" "$(grep -c '^<' "$T/32.diff") lines differ"; head -6 "$T/32.diff" | sed 's/^/# /'; fi
run disabled SOCKAUDIT_DISABLE=1 SOCKAUDIT_LOG="$T/disabled.jsonl"
same disabled
run othercomm SOCKAUDIT_COMM=nosuchprog SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/othercomm.jsonl"
same othercomm

# The log: every line is one JSON object, at most 4096 bytes, schema 1.
log=$T/trace.jsonl
if [ -s "$log" ] && jq -e . "$log" >/dev/null 2>&1; then ok "trace log is valid JSON lines ($(wc -l <"$log") lines)"
else fail "trace log is valid JSON lines" "$(jq . "$log" 2>&1 >/dev/null | head -3)"; fi
long=$(awk 'length($0) > 4095' "$log" | wc -l)
[ "$long" = 0 ] && ok "no log line over 4096 bytes" || fail "no log line over 4096 bytes" "$long lines"
check_jq "init event first, with version/level/sink" "$log" \
	'.[0].event == "init" and (.[0].version|type=="string") and .[0].level == "trace" and (.[0].sink|type=="string")'
check_jq "every line has the common fields" "$log" \
	'all(.[]; (.ts|type=="number") and (.event|type=="string") and .schema == 1 and (.pid|type=="number") and (.tid|type=="number") and (.comm|type=="string") and (.severity == "info" or .severity == "warn"))'
check_jq "exactly one init event" "$log" '[.[] | select(.event=="init")] | length == 1'
check_jq "setsockopt, listen, accept, connect events logged at trace" "$log" \
	'([.[].event] | unique) as $e | all(["setsockopt","listen","accept","connect"][]; . as $x | $e | index($x))'
check_jq "failed setsockopt logged with its errno name" "$log" \
	'any(.[]; .event=="setsockopt" and .ret == -1 and .errno == "ENOPROTOOPT")'
check_jq "TCP_DEFER_ACCEPT 10 read back as 15" "$log" \
	'any(.[]; .event=="setsockopt" and .opt=="TCP_DEFER_ACCEPT" and .requested_s==10 and .effective_s==15)'
check_jq "non-UTF-8 AF_UNIX name logged as a JSON string" "$log" \
	'any(.[]; (.local // "" | type=="string") and (.local // "" | startswith("@sa")))'
check_jq "refused connect logged as ECONNREFUSED" "$log" \
	'any(.[]; .event=="connect" and .errno=="ECONNREFUSED")'
# Trace logs every setsockopt; info logs the first of each and counts the rest.
check_jq "TCP_QUICKACK repeats: each logged at trace, and counted in the summary" "$log" \
	'([.[] | select(.event=="setsockopt" and .opt=="TCP_QUICKACK")] | length) as $n | $n >= 5 and any(.[]; .event=="summary" and .setsockopt.TCP_QUICKACK.calls == $n)'
check_jq "summary event at exit" "$log" 'any(.[]; .event=="summary")'
if jq -e . <(grep '^{' "$T/stderr.err") >/dev/null 2>&1 && grep -q '"event":"init"' "$T/stderr.err"; then
	ok "stderr sink: JSON lines with init on the program's stderr"
else fail "stderr sink: JSON lines with init on the program's stderr"; sed 's/^/# /' "$T/stderr.err" | head; fi
[ ! -s "$T/disabled.jsonl" ] && ok "SOCKAUDIT_DISABLE=1 writes nothing" || fail "SOCKAUDIT_DISABLE=1 writes nothing" "$(head -c 300 "$T/disabled.jsonl")"
finish
