#!/bin/bash
# `sockaudit top` in a real terminal (tmux, 80x24) against logs a live audited
# server and client are writing: the screen shows the listener's address and
# an accept count that grows, the peer, q exits 0, and the terminal is as it
# was (main screen back with what was on it, cursor shown, stty settings).
# Also: the one-shot snapshot without a terminal, new files and a rotated
# log picked up, and SIGTERM restoring the terminal.
. "$(dirname "$0")/../lib.sh"

SA=$TOP/sockaudit
command -v tmux >/dev/null || { fail "tmux is installed (scripts/ensure-deps.sh test)"; finish; }
TM="tmux -L sa-top-$$ -f /dev/null"
on_exit "$TM kill-server"

# The live program: a listener that accepts for 30 s, a client connecting
# every 25 ms for 25 s (both killed when the test ends); both audited, stats every second, the client at trace so each
# connect has its line.
SOCKAUDIT_STATS_INTERVAL=1 SOCKAUDIT_LOG="$T/srv-%p.jsonl" LD_PRELOAD="$(preload_value)" \
	"$PROGS/acc_server" -p 0 -n 100000 -T 30000 -m close >"$T/srv.out" 2>/dev/null &
srv=$!
on_exit "kill $srv"
for i in $(seq 100); do grep -q PORT "$T/srv.out" 2>/dev/null && break; sleep 0.05; done
port=$(awk '/PORT/{print $2}' "$T/srv.out")
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/cli-%p.jsonl" LD_PRELOAD="$(preload_value)" \
	"$PROGS/acc_client" -p "$port" -c 1000 -G 25 -s 0 -H 27000 2>/dev/null &
cli=$!
on_exit "kill $cli"

# pane_has PATTERN [TRIES]: capture-pane shows PATTERN within TRIES x 0.2 s.
pane_has() {
	local i
	for i in $(seq "${2:-50}"); do
		$TM capture-pane -p -t top >"$T/screen" 2>/dev/null && grep -q -- "$1" "$T/screen" && return 0
		sleep 0.2
	done
	return 1
}
# accepts: the ACCEPTS column of the listener's row.
accepts() { awk -v a="127.0.0.1:$port" '$1 == a { print $NF; exit }' "$T/screen"; }

cat >"$T/pane.sh" <<EOF
stty -g >"$T/stty.before"
echo MARKER-BEFORE-TOP
"$SA" top "$T/srv-%p.jsonl" "$T/cli-%p.jsonl"
echo "TOP-EXIT=\$?"
stty -g >"$T/stty.after"
sleep 60
EOF
$TM new-session -d -s top -x 80 -y 24 "bash $T/pane.sh"
if pane_has "127.0.0.1:$port"; then ok "top shows the listener's address"
else fail "top shows the listener's address" "$(cat "$T/screen")"; fi
a1=$(accepts)
sleep 2.5
pane_has "127.0.0.1:$port" 5
a2=$(accepts)
cp "$T/screen" "$T/screen.live"
if [ -n "$a1" ] && [ -n "$a2" ] && [ "$a2" -gt "$a1" ]; then ok "the accept count grows ($a1 -> $a2)"
else fail "the accept count grows" "first '$a1' then '$a2'"; fi
check "the peer's row is there, with its connects" \
	awk -v a="127.0.0.1:$port" '/^ PEER/ { p = 1; next } p && $1 == a && $3 > 0 { ok = 1 } END { exit !ok }' "$T/screen"
check "the screen fits 80x24" awk 'length($0) > 80 { bad = 1 } END { exit bad || NR > 24 }' "$T/screen"
check "alternate screen while running" test "$($TM display -p -t top '#{alternate_on}')" = 1
$TM send-keys -t top s
check "s changes the sort" pane_has "sort: accepts " 10
$TM send-keys -t top p
check "p pauses" pane_has "PAUSED" 10
$TM send-keys -t top p
$TM send-keys -t top q
check "q exits with status 0" pane_has "TOP-EXIT=0"
check "the main screen is back with what was on it" grep -q MARKER-BEFORE-TOP "$T/screen"
check "nothing of top is left on it" sh -c "! grep -q LISTENER '$T/screen'"
check "alternate screen off" test "$($TM display -p -t top '#{alternate_on}')" = 0
check "cursor shown" test "$($TM display -p -t top '#{cursor_flag}')" = 1
for i in $(seq 25); do [ -s "$T/stty.after" ] && break; sleep 0.2; done
check "stty settings as they were" cmp -s "$T/stty.before" "$T/stty.after"

# SIGTERM: the terminal is restored too, status 128+15.
cat >"$T/pane2.sh" <<EOF
stty -g >"$T/stty2.before"
"$SA" top "$T/srv-%p.jsonl" & echo \$! >"$T/top2.pid"; wait \$!
echo "TOP-EXIT=\$?"
stty -g >"$T/stty2.after"
sleep 60
EOF
$TM new-session -d -s top2 -x 80 -y 24 "bash $T/pane2.sh"
for i in $(seq 50); do [ -s "$T/top2.pid" ] && break; sleep 0.1; done
sleep 1
kill -TERM "$(cat "$T/top2.pid")"
for i in $(seq 50); do $TM capture-pane -p -t top2 >"$T/screen2"; grep -q TOP-EXIT "$T/screen2" && break; sleep 0.1; done
check "SIGTERM: exits 143" grep -q "TOP-EXIT=143" "$T/screen2"
check "SIGTERM: alternate screen off" test "$($TM display -p -t top2 '#{alternate_on}')" = 0
for i in $(seq 25); do [ -s "$T/stty2.after" ] && break; sleep 0.2; done
check "SIGTERM: stty settings as they were" cmp -s "$T/stty2.before" "$T/stty2.after"

# No terminal: one snapshot, then exit 0.
timeout 10 "$SA" top "$T" >"$T/snap.txt"
check "snapshot without a terminal exits 0" test $? = 0
check "snapshot shows the listener" grep -q "^ 127.0.0.1:$port " "$T/snap.txt"
check "snapshot has no escape sequences" sh -c "! grep -q $'\033' '$T/snap.txt'"

# Rotation: the file renamed and a new one at the path; and a new file.
mkdir "$T/rot"
echo '{"ts":1,"event":"listen","pid":7,"comm":"rot","fd":3,"local":"10.0.0.1:1","backlog_effective":5,"queue_capacity":6,"ret":0}' >"$T/rot/a.jsonl"
cat >"$T/pane3.sh" <<EOF
"$SA" top "$T/rot"
sleep 60
EOF
$TM new-session -d -s top3 -x 80 -y 24 "bash $T/pane3.sh"
sess=top3
pane_has_s() { local i; for i in $(seq 30); do $TM capture-pane -p -t $sess >"$T/screen3"; grep -q -- "$1" "$T/screen3" && return 0; sleep 0.2; done; return 1; }
pane_has_s "10.0.0.1:1"
mv "$T/rot/a.jsonl" "$T/rot/a.jsonl.1"
echo '{"ts":2,"event":"listener_stats","pid":7,"comm":"rot","listen_fd":3,"local":"10.0.0.1:1","backlog":5,"accepts":41}' >>"$T/rot/a.jsonl.1"
echo '{"ts":3,"event":"listen","pid":8,"comm":"new","fd":3,"local":"10.0.0.2:2","backlog_effective":5,"queue_capacity":6,"ret":0}' >"$T/rot/a.jsonl"
check "rotated: the renamed file is followed" pane_has_s " 41$"
check "rotated: the new file at the path is read" pane_has_s "10.0.0.2:2"
check "rotated: the renamed file is not read twice" sh -c "[ \$(grep -c '10.0.0.1:1' '$T/screen3') = 1 ]"
check "top holds no log open" sh -c "! ls -l /proc/\$(pgrep -n -f '$SA top $T/rot')/fd | grep -q '$T/rot'"
$TM send-keys -t $sess q

# Bad arguments.
"$SA" top >/dev/null 2>"$T/err"; rc=$?
check "no LOG: usage, status 2" sh -c "[ $rc = 2 ] && grep -q 'usage: sockaudit top' '$T/err'"
"$SA" top --bogus x >/dev/null 2>"$T/err"; rc=$?
check "unknown option: status 2" sh -c "[ $rc = 2 ] && grep -q \"unknown option '--bogus'\" '$T/err'"
check "--help exits 0" sh -c "'$SA' top --help | grep -q 'q quits'"
finish
