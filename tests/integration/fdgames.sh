#!/bin/bash
# Host fd games: a host that closes every fd, dup2s /dev/null over every fd,
# calls close_range, execs itself, forks, and forks and posix_spawns while 4
# threads are busy in socket calls. Under the shim its results are the same
# as without, the log (a path sink) recovers and keeps every later event, the
# new image logs with the same settings, a child logs with its own pid, and
# nothing hangs.
. "$(dirname "$0")/../lib.sh"

prog=$PROGS/fdgames
[ -x "$prog" ] || { fail "fdgames built" "$prog missing"; finish; }

# game MODE [NOFILE]: plain run and shim run (trace, path sink), with the
# soft RLIMIT_NOFILE lowered to NOFILE if given (1024 is the usual default:
# there the host can fill every fd the shim could move to); compares stdout.
game() {
	local m=$1 n=${2:-} f=$1${2:+-$2} lim=${2:-$(ulimit -n)}
	( ulimit -n "$lim"; timeout -k 2 60 "$prog" "$m" ) >"$T/$f.plain" 2>"$T/$f.plain.err"; local prc=$?
	( ulimit -n "$lim"; SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/$f.jsonl" SOCKAUDIT_STATS_INTERVAL=0 \
		timeout -k 2 60 env LD_PRELOAD="$(preload_value)" "$prog" "$m" ) >"$T/$f.out" 2>"$T/$f.err"; local rc=$?
	if [ $rc = $prc ] && [ $rc != 124 ] && cmp -s "$T/$f.plain" "$T/$f.out"; then ok "$f: host results unchanged (exit $rc)"
	else
		fail "$f: host results unchanged" "exit $rc, plain $prc"
		diff "$T/$f.plain" "$T/$f.out" | sed 's/^/# /' | head -20; sed 's/^/# stderr: /' "$T/$f.err" | head -5
	fi
	grep "^# fds" "$T/$f.err" | head -3 | sed "s/^# /# $f: shim /"
}
# logged FILE MARKER...: a listen event with each backlog marker is in the log.
logged() {
	local name=$1 f=$2; shift 2
	local q='true' m
	for m in "$@"; do q="$q and any(.[]; .event==\"listen\" and .backlog_requested==$m)"; done
	check_jq "$name" "$f" "$q"
}

game closeall
logged "closeall: the log recovers after every fd is closed" "$T/closeall.jsonl" 71 72
game dup2null
logged "dup2null: the log recovers after /dev/null is dup2ed over every fd" "$T/dup2null.jsonl" 73 74 75
game closerange
logged "close_range: the log recovers after close_range(3, ~0U)" "$T/closerange.jsonl" 76 77 78
check_jq "close_range: log lines stay valid JSON" "$T/closerange.jsonl" 'length > 0'
# The same with RLIMIT_NOFILE 1024: after dup2 over every fd the shim has
# no fd at all (round trip 74 fails with EMFILE for the host too); once the
# host closes them the log must come back at once, not a second later.
# closefrom() goes to the kernel inside glibc, past a close_range wrapper.
game closefrom
logged "closefrom: the log recovers after closefrom(3)" "$T/closefrom.jsonl" 81 82
check "closefrom: a file took the accepted socket's number" grep -q 'number: yes' "$T/closefrom.out"
check_jq "closefrom: the socket it closed did not 'speak first' through the file" "$T/closefrom.jsonl" \
	'[.[] | select(.event=="first_speaker")] | length == 0'
check_jq "closefrom: the exit summary counts no server-first connection" "$T/closefrom.jsonl" \
	'[.[] | select(.event=="listener_stats") | .first_speaker.server // 0] | add // 0 | . == 0'
game closeall 1024
logged "closeall, nofile 1024: the log recovers" "$T/closeall-1024.jsonl" 71 72
game dup2null 1024
logged "dup2null, nofile 1024: the log recovers as soon as the host frees fds" "$T/dup2null-1024.jsonl" 73 75
game closerange 1024
logged "close_range, nofile 1024: the log recovers" "$T/closerange-1024.jsonl" 76 77 78

game exec
logged "exec: the log continues in the new image" "$T/exec.jsonl" 79 80
check_jq "exec: new image has its own init event with the same settings" "$T/exec.jsonl" \
	'[.[] | select(.event=="init")] | length == 2 and all(.[]; .level=="trace") and (.[0].pid == .[1].pid)'
check_jq "exec: the new image's init comes before its first event" "$T/exec.jsonl" \
	'(map(.event) | indices("init")[1]) as $i | (map(.backlog_requested) | index(80)) as $j | $i != null and $j != null and $i < $j'
grep -q '^fds that would survive exec: 0$' "$T/exec.plain" || echo "# note: the test environment leaks fds into the program: $(grep survive "$T/exec.plain")"

game fork
child=$(sed -n 's/^# child pid //p' "$T/fork.err"); parent=$(sed -n 's/^# parent pid //p' "$T/fork.err")
if [ -n "$child" ] && [ -n "$parent" ]; then
	check_jq "fork: the child's events carry the child's pid" "$T/fork.jsonl" \
		"any(.[]; .event==\"listen\" and .backlog_requested==82 and .pid==$child) and all(.[] | select(.event==\"listen\" and .backlog_requested==82); .pid==$child)"
	check_jq "fork: the parent's events carry the parent's pid" "$T/fork.jsonl" \
		"all(.[] | select(.event==\"listen\" and (.backlog_requested==81 or .backlog_requested==83)); .pid==$parent) and any(.[]; .backlog_requested==83)"
	check_jq "fork: tid of the child's lines is the child's" "$T/fork.jsonl" \
		"all(.[] | select(.pid==$child); .tid==$child)"
	# A non-blocking connect the parent left pending across the fork is the
	# parent's: the child's close of its copy abandons nothing.
	check_jq "fork: the parent's pending connect is reported once, by the parent, completed by getsockopt" "$T/fork.jsonl" \
		"[.[] | select(.event==\"connect\" and .nonblocking==true)] | length == 1 and .[0].pid==$parent and .[0].completed_by==\"getsockopt\" and .[0].outcome==\"ok\""
	check_jq "fork: the child's summary counts no connect of the parent's" "$T/fork.jsonl" \
		"[.[] | select(.event==\"summary\" and .pid==$child)] | length == 1 and .[0].connects.abandoned == 0"
else fail "fork: pids reported" "child '$child' parent '$parent'"; fi

# A raw close of our log fd (syscall(SYS_close), as glibc-internal closes do)
# and the host's own file dup3ed onto that number: never written into.
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/raw.jsonl" timeout -k 2 30 env LD_PRELOAD="$(preload_value)" \
	"$prog" rawclose "$T/decoy" >"$T/raw.out" 2>"$T/raw.err"; rc=$?
if [ $rc = 0 ] && grep -q '^# took 1 shim fds; decoy bytes 0$' "$T/raw.err"; then
	ok "raw close of our fd, host file on its number: not written into"
else fail "raw close of our fd, host file on its number: not written into" "exit $rc; $(grep took "$T/raw.err")"; fi
logged "raw close: the log recovers" "$T/raw.jsonl" 87 88 89

# With %p in the path, the child writes its own file from its first line on.
mkdir -p "$T/pp"
SOCKAUDIT_LOG="$T/pp/a-%p.jsonl" timeout -k 2 30 env LD_PRELOAD="$(preload_value)" "$prog" fork >/dev/null 2>"$T/pp.err"
child=$(sed -n 's/^# child pid //p' "$T/pp.err"); parent=$(sed -n 's/^# parent pid //p' "$T/pp.err")
if [ -s "$T/pp/a-$child.jsonl" ] && [ -s "$T/pp/a-$parent.jsonl" ]; then
	check_jq "fork with %p: the child's file has its init and its round trip, only its pid" "$T/pp/a-$child.jsonl" \
		"any(.[]; .event==\"init\") and any(.[]; .backlog_requested==82) and all(.[]; .pid==$child)"
	check_jq "fork with %p: the parent's file has only the parent's lines" "$T/pp/a-$parent.jsonl" \
		"any(.[]; .backlog_requested==83) and all(.[]; .pid==$parent)"
else fail "fork with %p: one file per process" "$(ls "$T/pp" | tr '\n' ' ')"; fi

s0=$(date +%s%N)
game forkthreads
ms=$(( ($(date +%s%N) - s0) / 1000000 ))
grep -q 'hung 0, failed 0' "$T/forkthreads.out" && ok "forkthreads: 40 forks while 4 threads are in the shim, none hung (${ms} ms both runs)" \
	|| fail "forkthreads: no child deadlocked" "$(cat "$T/forkthreads.out")"
check_jq "forkthreads: children logged (listen 84 from 40 pids)" "$T/forkthreads.jsonl" \
	'[.[] | select(.event=="listen" and .backlog_requested==84) | .pid] | unique | length == 40'

game badcalls
game badcalls 64
pn=$(sed -n 's/^# open fds at the end: //p' "$T/badcalls.plain.err"); sn=$(sed -n 's/^# open fds at the end: //p' "$T/badcalls.err")
[ -n "$pn" ] && [ "$sn" = $((pn + 1)) ] && ok "badcalls: failed close_range/dup2/dup3 leave the shim with one fd" \
	|| fail "badcalls: failed close_range/dup2/dup3 leave the shim with one fd" "$pn fds open plain, $sn under the shim"
logged "badcalls: the log is still written after failed calls" "$T/badcalls.jsonl" 85 86
game spawn
grep -q 'spawns 20: failed 0' "$T/spawn.out" && ok "spawn: 20 posix_spawns while 4 threads are in the shim, all ran" \
	|| fail "spawn: 20 posix_spawns while 4 threads are in the shim" "$(tail -1 "$T/spawn.out")"
check_jq "spawn: each spawned image logged its own round trip (20 pids, 20 init events beyond the parent's)" "$T/spawn.jsonl" \
	'([.[] | select(.event=="listen" and .backlog_requested==80) | .pid] | unique | length == 20) and ([.[] | select(.event=="init")] | length == 21)'

for f in "$T"/*.jsonl; do
	if ! jq -e . "$f" >/dev/null 2>&1; then fail "$(basename "$f"): valid JSON lines" "$(jq . "$f" 2>&1 >/dev/null | head -2)"; fi
done
ok "all logs parsed as JSON lines (or failures listed above)"
finish
