#!/bin/bash
# A file or FIFO another user planted at the log path is refused: the path
# sink uses only a file it created, or a regular file owned by its effective
# uid with one link (judged on the opened fd). With fs.protected_regular and
# fs.protected_fifos off (older and container hosts), in a sticky
# world-writable directory of our own (where those sysctls would apply), as
# root: nobody's 0666 file stays as it was, nobody's FIFO gets no byte, a
# hard link to a file of ours is refused; one warning says why each time and
# the lines go to stderr (as for a planted symlink). A file of ours is used.
# A file planted after the log was lost in mid-life is refused too: the
# lines are dropped and counted.
. "$(dirname "$0")/../lib.sh"

host=$PROGS/sockhost
[ -x "$host" ] || { fail "sockhost built" "$host missing"; finish; }
if [ "$(id -u)" != 0 ]; then ok "sink_planted # SKIP needs root (files owned by nobody)"; finish; fi

# The sysctls as the issue's hosts have them, restored on exit.
for s in protected_regular protected_fifos; do
	old=$(sysctl -n fs.$s 2>/dev/null) || continue
	on_exit "sysctl -qw fs.$s=$old"
	sysctl -qw fs.$s=0
done
chmod 711 "$T"            # nobody must reach the sticky directory inside
D="$T/pub"; mkdir -m 1777 "$D"
warns() { grep -c '"event":[ ]*"warning"' "$1"; }

# run NAME PATH: the host at trace with SOCKAUDIT_LOG=PATH; stderr in $T/NAME.err.
run() {
	env --default-signal=PIPE SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$2" LD_PRELOAD="$(preload_value)" \
		timeout -k 2 20 "$host" 20 >"$T/$1.out" 2>"$T/$1.err"
	echo $? >"$T/$1.rc"
}
refused() {
	local n=$1 why=$2
	[ "$(cat "$T/$n.rc")" = 7 ] && grep -q '^connections=20$' "$T/$n.out" && ok "$n: host unchanged" \
		|| fail "$n: host unchanged" "exit $(cat "$T/$n.rc")"
	if [ "$(warns "$T/$n.err")" = 1 ] && grep '"event":[ ]*"warning"' "$T/$n.err" | grep -q "refused the log path: it holds $why"; then
		ok "$n: one warning: refused, $why"
	else fail "$n: one warning: refused, $why" "$(grep warning "$T/$n.err" | head -2)"; fi
	check_jq "$n: the lines went to stderr instead (init names stderr, 20 accepts)" "$T/$n.err" \
		'any(.[]; .event=="init" and .sink=="stderr") and ([.[] | select(.event=="accept")] | length == 20)'
}

# 1. nobody's 0666 file.
printf 'planted\n' >"$D/x.jsonl"; chown nobody:nogroup "$D/x.jsonl"; chmod 666 "$D/x.jsonl"
run file "$D/x.jsonl"
[ "$(cat "$D/x.jsonl")" = planted ] && ok "file: nobody's planted file untouched" \
	|| fail "file: nobody's planted file untouched" "now $(wc -l <"$D/x.jsonl") lines"
refused file "a file owned by another user"

# 2. nobody's FIFO, with a reader (who would get our lines) and without.
mkfifo -m 666 "$D/f.jsonl"; chown nobody:nogroup "$D/f.jsonl"
timeout 10 cat "$D/f.jsonl" >"$T/fifo.got" &
rd=$!
sleep 0.2
run fifo "$D/f.jsonl"
exec 8<>"$D/f.jsonl"; exec 8>&-         # ends the reader if it is still waiting
wait $rd 2>/dev/null
[ ! -s "$T/fifo.got" ] && ok "fifo: the FIFO's reader got no byte" || fail "fifo: the FIFO's reader got no byte" "got $(wc -c <"$T/fifo.got") bytes"
refused fifo "a FIFO we did not create"
run fifo_noreader "$D/f.jsonl"
[ "$(cat "$T/fifo_noreader.rc")" = 7 ] && [ "$(warns "$T/fifo_noreader.err")" = 1 ] \
	&& ok "fifo without a reader: host unchanged, one warning" \
	|| fail "fifo without a reader: host unchanged, one warning" "exit $(cat "$T/fifo_noreader.rc"), $(warns "$T/fifo_noreader.err") warnings"

# 3. A hard link (made by someone else) to a file of ours: two links.
printf 'ours\n' >"$T/ours"; ln "$T/ours" "$D/l.jsonl"
run link "$D/l.jsonl"
[ "$(cat "$T/ours")" = ours ] && ok "link: the linked file untouched" || fail "link: the linked file untouched"
refused link "a file with more than one link"

# 4. A regular file of ours with one link (a previous run's) is used, and so
# is /dev/null (a character device only root can make); a new path is
# created 0600.
printf '' >"$D/mine.jsonl"; chmod 600 "$D/mine.jsonl"
run mine "$D/mine.jsonl"
check_jq "mine: our own existing file is used (init names it, 20 accepts)" "$D/mine.jsonl" \
	"any(.[]; .event==\"init\" and .sink==\"$D/mine.jsonl\") and ([.[] | select(.event==\"accept\")] | length == 20)"
[ "$(warns "$T/mine.err")" = 0 ] && ok "mine: no warning" || fail "mine: no warning" "$(head -2 "$T/mine.err")"
run devnull /dev/null
[ "$(cat "$T/devnull.rc")" = 7 ] && [ "$(warns "$T/devnull.err")" = 0 ] && ok "/dev/null (a device of root's): used, no warning" \
	|| fail "/dev/null (a device of root's): used, no warning" "exit $(cat "$T/devnull.rc"); $(head -2 "$T/devnull.err")"
run new "$D/new.jsonl"
[ "$(stat -c '%a %U' "$D/new.jsonl" 2>/dev/null)" = "600 root" ] && ok "new: created 0600, ours" \
	|| fail "new: created 0600, ours" "$(stat -c '%a %U' "$D/new.jsonl" 2>&1)"

# 5. In mid-life: the log file is removed, nobody plants a 0666 file at the
# path, and the program closes every fd from 3 (the log fd has nowhere to
# go): the lines after it are dropped, not written into nobody's file, and
# counted; the launcher's process says so on stderr as it ends.
rm -f "$D/r.jsonl"
# As the launcher runs it (SOCKAUDIT_LAUNCHED: the pid the program keeps).
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$D/r.jsonl" LD_PRELOAD="$(preload_value)" \
	bash -c 'SOCKAUDIT_LAUNCHED=$$ exec "$@"' - "$PROGS/life_replant" "$D/r.jsonl" 10 >"$T/replant.out" 2>"$T/replant.err"; rc=$?
[ $rc = 0 ] && grep -q '^connects=20$' "$T/replant.out" && ok "replant: host unchanged (20 connects)" \
	|| fail "replant: host unchanged (20 connects)" "exit $rc: $(head -2 "$T/replant.err")"
[ "$(cat "$D/r.jsonl")" = planted ] && ok "replant: nobody's file planted in mid-life untouched" \
	|| fail "replant: nobody's file planted in mid-life untouched" "now $(wc -l <"$D/r.jsonl") lines"
grep -Eq '^sockaudit: [0-9]+ lines were dropped \(the file at the log path is not ours \(refused\)\)$' "$T/replant.err" \
	&& ok "replant: the dropped lines are counted and said ($(grep -o '[0-9]* lines were dropped' "$T/replant.err"))" \
	|| fail "replant: the dropped lines are counted and said" "$(tail -2 "$T/replant.err")"
finish
