#!/bin/bash
# A forked child writes every line into its own %p file from its first line,
# whichever of its threads writes first, and its init line names that file:
# fork() with a thread connecting while the main thread accepts, a
# single-threaded fork() child, a clone() child without CLONE_VM, and real
# haproxy master-worker (-W) workers. No line of a process may land in
# another's file.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/life_lib.sh"

# own_files NAME DIR: every file DIR/f-PID.jsonl holds only lines of PID, has
# exactly one init line, and that init names the file itself.
own_files() {
	local n=$1 d=$2 f pid bad=""
	for f in "$d"/f-*.jsonl; do
		[ -e "$f" ] || { fail "$n" "no log file in $d"; return; }
		pid=${f##*/f-}; pid=${pid%.jsonl}
		jq -e -s --arg f "$f" --argjson p "$pid" \
			'all(.[]; .pid == $p) and ([.[] | select(.event=="init")] | length == 1 and .[0].sink == $f)' \
			"$f" >/dev/null 2>&1 ||
			bad="$bad ${f##*/}: $(jq -s -c '[group_by(.pid)[] | {pid: .[0].pid, lines: length, init_sink: ([.[] | select(.event=="init") | .sink] | first)}]' "$f" 2>/dev/null)"
	done
	[ -z "$bad" ] && ok "$n ($(ls "$d" | wc -l) files)" || fail "$n" "$bad"
}

# 1. Our program: parent listens at trace (its file is open), then a child.
for mode in thread single clone; do
	for r in 1 2 3; do
		d="$T/$mode$r"; mkdir -p "$d"
		LR_LOG="$d/f-%p.jsonl" life_shim "$d/run" 20 trace "$PROGS/life_forkfile" $mode 50
		mv "$d"/run.* "$T/"
		child=$(awk '/^# child/ {print $3}' "$T/run.err")
		if [ "$LR_RC" != 0 ]; then fail "$mode run $r: the program works under the shim" "exit $LR_RC"; continue; fi
		own_files "$mode run $r: every line in its own process's file, init naming it" "$d"
		# The child's 50 connects and 50 accepts, all in its file.
		check_jq "$mode run $r: the child's file holds its 50 connects and 50 accepts" "$d/f-$child.jsonl" \
			'([.[] | select(.event=="connect")] | length == 50) and ([.[] | select(.event=="accept")] | length == 50)'
	done
done

# 1b. A child that may not create its own file (it became nobody, the
# directory is root's 0755): its lines go on to the parent's file, carrying
# its own pid, and its init line names that file.
if [ "$(id -u)" = 0 ]; then
	d="$T/nobody"; mkdir -p "$d"; chmod 755 "$d"
	LR_LOG="$d/f-%p.jsonl" life_shim "$d/run" 20 trace "$PROGS/life_forkfile" nobody 20
	mv "$d"/run.* "$T/"
	child=$(awk '/^# child/ {print $3}' "$T/run.err")
	parent=$(ls "$d" | sed -n 's/^f-\([0-9]*\)\.jsonl$/\1/p')
	if [ "$LR_RC" = 0 ] && [ ! -e "$d/f-$child.jsonl" ] && [ -n "$parent" ]; then
		check_jq "nobody child: its 20 connects in the parent's file under its own pid, its init naming that file" "$d/f-$parent.jsonl" \
			"([.[] | select(.pid==$child and .event==\"connect\")] | length == 20) and ([.[] | select(.pid==$child and .event==\"init\") | .sink] == [\"$d/f-$parent.jsonl\"])"
	else fail "nobody child: falls back to the parent's file" "exit $LR_RC, files: $(ls "$d")"; fi
fi

# 2. haproxy -W (master-worker): the worker is forked by the master after
# the master wrote its own lines; nbthread 2 starts the worker's threads at
# once. Two rounds of requests, then a soft stop.
if command -v haproxy >/dev/null; then
	P=$(free_port)
	cat >"$T/h.cfg" <<CFG
global
  maxconn 100
  nbthread 2
defaults
  mode http
  timeout connect 3s
  timeout client 5s
  timeout server 5s
frontend fe
  bind 127.0.0.1:$P
  http-request return status 200 content-type text/plain string ok
CFG
	for r in 1 2; do
		d="$T/haproxy$r"; mkdir -p "$d"
		SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$d/f-%p.jsonl" LD_PRELOAD="$(preload_value)" \
			haproxy -W -db -f "$T/h.cfg" >"$d/err" 2>&1 &
		hp=$!
		on_exit "kill -9 $hp"
		if ! wait_port $P; then fail "haproxy -W run $r listens" "$(tail -3 "$d/err")"; continue; fi
		got=0
		for i in $(seq 20); do [ "$(timeout 5 curl -s "http://127.0.0.1:$P/")" = ok ] && got=$((got + 1)); done
		kill -USR1 $hp
		timeout 10 tail --pid=$hp -f /dev/null
		wait $hp 2>/dev/null
		[ $got = 20 ] && ok "haproxy -W run $r: 20 of 20 requests answered under the shim" \
			|| fail "haproxy -W run $r: 20 of 20 requests answered under the shim" "$got answered"
		n=$(ls "$d"/f-*.jsonl 2>/dev/null | wc -l)
		[ "$n" -ge 2 ] && ok "haproxy -W run $r: master and worker each have a file ($n)" \
			|| fail "haproxy -W run $r: master and worker each have a file" "$n files"
		own_files "haproxy -W run $r: every line in its own process's file, init naming it" "$d"
	done
else
	fail "haproxy -W" "haproxy is not installed (scripts/ensure-deps.sh installs it)"
fi
# 3. A process that writes its title over its start-up strings (environment
# included) before its first socket call, then forks: the settings it
# started with still name each process's own file.
d="$T/title"; mkdir -p "$d"
LR_LOG="$d/f-%p.jsonl" life_shim "$T/title-run" 20 info "$PROGS/life_title"
child=$(awk '/^# child/ {print $3}' "$T/title-run.out")
if [ "$LR_RC" != 0 ] || [ -z "$child" ]; then
	fail "title: the program works under the shim" "exit $LR_RC"
else
	own_files "title: master and child each in their own file after the title overwrote the environment" "$d"
	check_jq "title: the child's file holds its accept" "$d/f-$child.jsonl" \
		'[.[] | select(.event=="listener_stats") | .accepts] | add == 1'
fi
finish
