#!/bin/bash
# The accept line's "peer" whichever way the host asked for the address:
# the shim takes it from the host's own buffer when the host's
# addrlen is a local on its stack and the address fitted, and asks
# getpeername otherwise. Every way must name the real client, and the host
# must get the same bytes and lengths as without the shim.
. "$(dirname "$0")/../lib.sh"

"$PROGS/peer_accept" >"$T/plain.out" 2>&1
SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/a.jsonl" LD_PRELOAD="$(preload_value)" "$PROGS/peer_accept" >"$T/shim.out" 2>&1
check "peer_accept runs under the shim" test -s "$T/shim.out"

# The host's view: same modes, same lengths, same bytes (ports differ per run).
strip() { sed -E 's/client=[^ ]+ //; s/^(stack|heap|v6) got=([0-9]+) (....)..../\1 got=\2 \3PORT/; s/^short got=16 (....)..../short got=16 \1PORT/' "$1"; }
if diff <(strip "$T/plain.out") <(strip "$T/shim.out") >/dev/null; then ok "the host gets the same address bytes and lengths"
else fail "the host gets the same address bytes and lengths" "$(diff <(strip "$T/plain.out") <(strip "$T/shim.out") | head -5 | tr '\n' ' ')"; fi
check "the short buffer was cut by the kernel (6 bytes written, the address's last 2 not)" \
	grep -qE '^short client=[^ ]+ got=16 ............eeeeeeeeeeeeeeeeeeee$' "$T/shim.out"
# The buffer was used where it could be: getpeername only for short, heap, null.
if command -v strace >/dev/null; then
	strace -f -qq -e trace=getpeername -o "$T/strace.out" -E LD_PRELOAD="$(preload_value)" \
		env SOCKAUDIT_LEVEL=trace SOCKAUDIT_LOG="$T/b.jsonl" "$PROGS/peer_accept" >/dev/null 2>&1
	check "getpeername only where the host's buffer could not be used (3 of 5)" \
		test "$(grep -c 'getpeername(' "$T/strace.out")" = 3
fi

n=0
while read -r mode client rest; do
	client=${client#client=}
	check_jq "$mode: the accept line's peer is the client ($client)" "$T/a.jsonl" \
		"[.[] | select(.event==\"accept\")] | .[$n].peer == \"$client\""
	n=$((n + 1))
done <"$T/shim.out"
check_jq "one accept line per connection" "$T/a.jsonl" "[.[] | select(.event==\"accept\")] | length == $n"
finish
