#!/bin/bash
# Issue 15, cases 6 and 9: the shim never consumes kernel state the host will
# read, and never attributes an event to a socket the fd no longer refers to.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/life_lib.sh"
RP=$(free_port)

# 6. Copy a socket whose non-blocking connect (refused port) is pending, close
# the original, read SO_ERROR on the copy: 111 as plain.
for m in dup dup2 dupfd; do
	life_plain "$T/d${m}p" 10 "$PROGS/life_dup" "$m" "$RP"
	life_shim "$T/d${m}s" 10 info "$PROGS/life_dup" "$m" "$RP"
	life_same "case 6 ($m): SO_ERROR on the copy: $(head -1 "$T/d${m}s.out" | sed 's/.*copy //'), plain $(head -1 "$T/d${m}p.out" | sed 's/.*copy //')" \
		"$T/d${m}p" "$T/d${m}s"
	life_parses "case 6 ($m): log parses" "$T/d${m}s.jsonl"
done

# 9a. fclose(fdopen(fd)) / syscall(SYS_close) of a pending connect to a full
# queue, pipe() takes the number, a read on the pipe 300 ms later: not logged
# as that connect completing, not counted (the summary's ok counts only the
# program's one real connect, the one that filled the queue).
for m in fclose sysclose; do
	life_plain "$T/u${m}p" 10 "$PROGS/life_unseen" "$m"
	life_shim "$T/u${m}s" 10 trace "$PROGS/life_unseen" "$m"
	life_same "case 9 ($m): the host runs as plain" "$T/u${m}p" "$T/u${m}s"
	L="$T/u${m}s.jsonl"
	life_parses "case 9 ($m): log parses" "$L"
	fd=$(sed -n 's/^# fd //p' "$T/u${m}s.err")
	check_jq "case 9 ($m): no connect on fd ${fd:-?} logged ok after its close (got: $(life_jq "$L" "[.[]|select(.event==\"connect\" and .fd==${fd:-0})|\"\(.outcome) by \(.completed_by) after \(.connect_ms) ms\"]|join(\", \")"))" "$L" \
		"[.[] | select(.event==\"connect\" and .fd==${fd:-0} and .outcome==\"ok\")] | length == 0"
	check_jq "case 9 ($m): summary connects.ok == 1 (got $(life_jq "$L" '[.[]|select(.event=="summary")|.connects]|tostring'))" "$L" \
		'[.[] | select(.event=="summary")] | length == 1 and .[0].connects.ok == 1'
done

# 9b. An accept on listener A, which another thread closed and whose fd number
# listener B took, is not credited to B: B's listener_stats show its 1 accept.
life_plain "$T/rp" 10 "$PROGS/life_unseen" relisten
life_shim "$T/rs" 10 info "$PROGS/life_unseen" relisten
life_same "case 9 (relisten): the host runs as plain" "$T/rp" "$T/rs"
L="$T/rs.jsonl"
life_parses "case 9 (relisten): log parses" "$L"
read -r _ _ pa pb < <(grep '^# ports' "$T/rs.err")
check_jq "case 9 (relisten): listener B (127.0.0.1:$pb) has exactly its own 1 accept (got $(life_jq "$L" "[.[]|select(.event==\"listener_stats\" and .local==\"127.0.0.1:$pb\")|.accepts]|tostring"))" "$L" \
	"[.[] | select(.event==\"listener_stats\" and .local==\"127.0.0.1:$pb\")] | length >= 1 and (map(.accepts) | add) == 1"

# 9c. The server accepts, dup()s the accepted socket (and in "dupclose"
# closes the original), then the client speaks first and the host reads
# through the copy: first_speaker is decided (client), not unknown.
for m in dupread dupclose; do
	life_plain "$T/f${m}p" 10 "$PROGS/life_unseen" "$m"
	life_shim "$T/f${m}s" 10 info "$PROGS/life_unseen" "$m"
	life_same "case 9 ($m): the host runs as plain" "$T/f${m}p" "$T/f${m}s"
	L="$T/f${m}s.jsonl"
	life_parses "case 9 ($m): log parses" "$L"
	port=$(sed -n 's/^# port //p' "$T/f${m}s.err")
	check_jq "case 9 ($m): first_speaker client 1, unknown 0 (got $(life_jq "$L" "[.[]|select(.event==\"listener_stats\" and .local==\"127.0.0.1:$port\")|.first_speaker]|tostring"))" "$L" \
		"[.[] | select(.event==\"listener_stats\" and .local==\"127.0.0.1:${port:-0}\")] | length == 1 and .[0].first_speaker.client == 1 and .[0].first_speaker.unknown == 0"
done
finish
