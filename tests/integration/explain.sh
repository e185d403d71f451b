#!/bin/bash
# `sockaudit explain`: answers read from this kernel, in this namespace and in
# one made here whose sysctls the test changes; every option the shim explains
# at read-back, with the shim's own sentence (the same program under the shim
# writes the same msg); bad names and values refused with status 2.
. "$(dirname "$0")/../lib.sh"

SA=$TOP/sockaudit
NS=sa-explain-$$
ex() { "$SA" explain --json "$@"; }
# q FILTER QUERY...: jq -e FILTER on explain's JSON answer to QUERY...
q() { local f=$1; shift; ex "$@" 2>"$T/err" | jq -e "$f" >/dev/null; }
sys() { cat "/proc/sys/$1"; }
jqf() { jq -e "$1" "$2" >/dev/null; }

# --- this machine's /proc/sys -------------------------------------------------
smc=$(sys net/core/somaxconn)
check "backlog above somaxconn reads back as somaxconn ($smc) with backlog_clamped" \
	q ".[0].backlog_effective == $smc and .[0].queue_capacity == $smc + 1 and .[0].backlog_source == \"tcp_info\"
	   and (.[0].findings | map(.code) == [\"backlog_clamped\"])" "backlog=$((smc + 100))"
check "listen=511 under somaxconn is kept, no finding" \
	q ".[0].backlog_effective == ([511, $smc] | min) and .[0].somaxconn == $smc" listen=511
lin=$(sys net/ipv4/tcp_syn_linear_timeouts 2>/dev/null || echo 0)
ret=$(sys net/ipv4/tcp_syn_retries)
# The SYN schedule recomputed here from the same sysctls: 1 s steps for the
# first $lin resends, then doubling.
want=$(awk -v l="$lin" -v r="$ret" 'BEGIN { t = 0; rto = 1; s = "";
	for (k = 1; k <= r + l; k++) { t += rto; s = s (k > 1 ? "," : "") t; if (k > l) rto *= 2 } print "[" s "]" }')
check "syn: resend times from tcp_syn_retries=$ret, tcp_syn_linear_timeouts=$lin" \
	q ".[0].resend_s == $want and .[0].tcp_syn_retries == $ret" syn
sar=$(sys net/ipv4/tcp_synack_retries)
check "synack: $sar resends at 1, 3, 7 ... s" \
	q ".[0].tcp_synack_retries == $sar and (.[0].resend_s | length) == $sar and .[0].resend_s[0:2] == [1,3]" synack

# --- TCP_DEFER_ACCEPT=10: 15 s, 4 rounds, the nearby table ------------------------
check "TCP_DEFER_ACCEPT=10 reads back 15 s, 4 rounds, defer_rounded" \
	q '.[0].effective == 15 and .[0].rounds == 4 and .[0].window_ms == 15000 and .[0].findings[0].code == "defer_rounded"
	   and (.[0].nearby | map(select(.rounds == 4))[0] | .from_s == 8 and .to_s == 15)
	   and (.[0].nearby | map(.to_s) == [3, 7, 15, 31, 63])' TCP_DEFER_ACCEPT=10
"$SA" explain TCP_DEFER_ACCEPT=10 >"$T/defer.txt"
check "text: the table marks 8-15 and says what a silent client gets" \
	grep -q "8-15 .*4 .*15 s .*<- this value" "$T/defer.txt"
tr '\n' ' ' <"$T/defer.txt" | tr -s ' ' >"$T/defer.flat"
check "text: silent client accepted empty at 15 s" grep -q "At 15 s the kernel resends its SYN-ACK (round 4)" "$T/defer.flat"
check "text: fits 80 columns" awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$T/defer.txt"

# --- every option the shim explains, and the shim's own words --------------------
rmx=$(sys net/core/rmem_max) wmx=$(sys net/core/wmem_max)
check "SO_RCVBUF=100000 doubled" q '.[0].effective == 200000 and .[0].findings[0].code == "option_adjusted"' SO_RCVBUF=100000
check "SO_SNDBUF above wmem_max capped then doubled" \
	q ".[0].effective == 2 * $wmx and .[0].wmem_max == $wmx and (.[0].findings[0].msg | test(\"capped by net.core.wmem_max\"))" \
	"SO_SNDBUF=$((wmx * 4))"
check "SO_RCVBUF=1 below the minimum" q '.[0].effective > 2 and (.[0].findings[0].msg | test("minimum"))' SO_RCVBUF=1
check "SO_RCVBUFFORCE ignores rmem_max" q ".[0].effective == 4 * $rmx" "SO_RCVBUFFORCE=$((rmx * 2))"
check "IP_TOS=0x2f keeps the ECN bits" q '.[0].effective == 44 and (.[0].findings[0].msg | test("ECN"))' IP_TOS=0x2f
check "IP_TTL=-1 is the default" q ".[0].effective == $(sys net/ipv4/ip_default_ttl) and (.[0].findings[0].msg | test(\"system default\"))" IP_TTL=-1
check "IPV6_UNICAST_HOPS=-1 is the default" q '.[0].effective > 0 and (.[0].findings[0].msg | test("system default"))' IPV6_UNICAST_HOPS=-1
check "TCP_WINDOW_CLAMP=10 below the minimum" q '.[0].effective > 10 and (.[0].findings[0].msg | test("minimum"))' TCP_WINDOW_CLAMP=10
check "TCP_FASTOPEN queue capped by somaxconn" q ".[0].effective == $smc and (.[0].findings[0].msg | test(\"somaxconn\"))" "TCP_FASTOPEN=$((smc + 1))"
check "SO_RCVTIMEO rounded to the tick" q '.[0].effective.usec >= 1500 and (.[0].findings[0].msg | test("timer tick"))' SO_RCVTIMEO=0.0015
check "TCP_NODELAY=7 is no difference" q '.[0].effective == 1 and .[0].findings == []' TCP_NODELAY=7
check "SO_LINGER=1,5 kept" q '.[0].effective == {"onoff":1,"linger":5} and .[0].findings == []' SO_LINGER=1,5
check "TCP_CONGESTION=reno kept" q '.[0].effective == "reno" and .[0].findings == []' TCP_CONGESTION=reno
check "several at once, in order" q 'map(.query) == ["syn","SO_RCVBUF=4096","backlog=5"]' syn SO_RCVBUF=4096 backlog=5

# The shim's read-back line for the same calls carries the same sentence.
cat >"$T/set.py" <<'EOF'
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0x2f)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 10)
s.close()
EOF
SOCKAUDIT_LOG="$T/shim.jsonl" SOCKAUDIT_LEVEL=info preload python3 "$T/set.py"
for o in SO_RCVBUF=1 IP_TOS=0x2f TCP_DEFER_ACCEPT=10; do
	name=${o%%=*}
	shim=$(jq -r --arg o "$name" 'select(.event == "setsockopt" and .opt == $o) | .msg' "$T/shim.jsonl")
	mine=$(ex "$o" | jq -r '.[0].findings[0].msg')
	if [ -n "$shim" ] && [ "$shim" = "$mine" ]; then ok "$name: explain says what the shim wrote"
	else fail "$name: explain says what the shim wrote" "shim: '$shim' explain: '$mine'"; fi
done

# --- a namespace of our own: change its sysctls, see the answers change ----------
if ip netns add $NS; then
	on_exit "ip netns del $NS"
	ip -n $NS link set lo up
	ip netns exec $NS sysctl -qw net.core.somaxconn=300 net.ipv4.tcp_syn_retries=2
	ip netns exec $NS sysctl -qw net.ipv4.tcp_syn_linear_timeouts=1 2>/dev/null
	check "netns: backlog=511 clamped to its somaxconn 300" \
		sh -c "ip netns exec $NS '$SA' explain backlog=511 | tr '\n' ' ' | tr -s ' ' | grep -q 'listen(511) gets a backlog of 300'"
	ip netns exec $NS "$SA" explain --json backlog=511 syn >"$T/ns1.json"
	check "netns: 300 and the syn schedule of tcp_syn_retries=2" \
		jqf '.[0].backlog_effective == 300 and .[0].findings[0].code == "backlog_clamped" and
		       (.[1].resend_s | length) == 2 + .[1].tcp_syn_linear_timeouts' "$T/ns1.json"
	ip netns exec $NS sysctl -qw net.core.somaxconn=200
	ip netns exec $NS sleep 30 &
	holder=$!
	on_exit "kill $holder"
	sleep 0.2
	check "--netns PID: the changed somaxconn (200) answers" \
		q '.[0].backlog_effective == 200 and .[0].somaxconn == 200' --netns $holder backlog=511
	check "--netns PID: this namespace is untouched" q ".[0].backlog_effective == ([511, $smc] | min)" backlog=511
	check "netns: TCP_MAXSEG=1000 after a loopback handshake is the MSS in use" \
		ip netns exec $NS sh -c "'$SA' explain --json TCP_MAXSEG=1000 | jq -e '.[0].effective == 1000 and .[0].effective_connected < 1000 and .[0].findings[0].code == \"option_adjusted\"' >/dev/null"
else
	fail "ip netns add $NS"
fi

# --- bad input: a clear message and a non-zero status ----------------------------
bad() {   # bad NAME STATUS PATTERN ARGS...
	local n=$1 want=$2 pat=$3 rc; shift 3
	"$SA" explain "$@" >"$T/out" 2>"$T/err"; rc=$?
	if [ "$rc" = "$want" ] && grep -q -- "$pat" "$T/err" "$T/out"; then ok "$n"
	else fail "$n" "status $rc, stderr: $(head -c 300 "$T/err")"; fi
}
bad "unknown option name" 2 "unknown option 'TCP_NOSUCH'" TCP_NOSUCH=1
bad "not an integer" 2 "SO_RCVBUF takes an integer" SO_RCVBUF=lots
bad "not a query" 2 "is not a query" frobnicate
bad "opaque option" 2 "does not read back" SO_ATTACH_FILTER=1
bad "linger without seconds" 2 "ONOFF,SECONDS" SO_LINGER=1
bad "no query" 2 "usage: sockaudit explain"
bad "bad --netns" 2 "ns/net" --netns 2147483646 syn
bad "unknown flag" 2 "unknown option" --bogus syn
bad "a good and a bad query answer nothing" 2 "unknown option" syn NOPE=1
check "nothing printed for a bad list" test ! -s "$T/out"
bad "the kernel refuses TCP_MAXSEG=10: EINVAL, status 1" 1 "fails with EINVAL" TCP_MAXSEG=10
check "--list names every explained option" sh -c "'$SA' explain --list | grep -q '^TCP_DEFER_ACCEPT .*IPPROTO_TCP .*int'"
check "--help exits 0" sh -c "'$SA' explain --help | grep -q -- '--netns PID'"

# --- a finding code: its meaning, mechanism and fix, the words of docs/findings.md ----
bad "unknown finding code: a clear error, status 2" 2 "unknown finding code 'no_such_code'" no_such_code
bad "a good query and an unknown code answer nothing" 2 "unknown finding code" syn listen_overflow
"$SA" explain --codes >"$T/codes"
n=$(wc -l <"$T/codes")
docs_codes=$(grep -c '^### `[a-z_]*`$' "$TOP/docs/findings.md")
[ "$n" -ge 10 ] && [ "$n" = "$docs_codes" ] && ok "--codes lists the $n codes docs/findings.md has a section for" ||
	fail "--codes lists every code of docs/findings.md" "$n listed, $docs_codes sections"
all_ok=1
for c in $(awk '{ print $1 }' "$T/codes"); do
	"$SA" explain "$c" >"$T/code.txt" 2>"$T/code.err" || { all_ok=0; echo "# $c: status $?"; continue; }
	for w in "^$c\$" "^  Meaning\. " "^  Mechanism\. " "^  Fix\. " "docs/findings.md#$c"; do
		grep -q -- "$w" "$T/code.txt" || { all_ok=0; echo "# $c: no '$w'"; }
	done
	awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$T/code.txt" || { all_ok=0; echo "# $c: over 80 columns"; }
done
[ "$all_ok" = 1 ] && ok "every code explained: its meaning, mechanism, fix and section, within 80 columns" ||
	fail "every code explained: its meaning, mechanism, fix and section"
# The text printed is the page's: the fix of accept_queue_full, as findings.md says it.
fix=$(ex accept_queue_full | jq -r '.[0].fix')
page=$(sed -n '/^### `accept_queue_full`/,/^### /p' "$TOP/docs/findings.md" | tr '\n' ' ' | sed 's/  */ /g')
case "$page" in *"**Fix.** $fix"*) ok "explain --json accept_queue_full: its fix is the page's words" ;;
	*) fail "explain --json accept_queue_full: its fix is the page's words" "fix: $fix" ;; esac
check "explain --json listen_overflows: code, meaning, mechanism, fix, doc" \
	sh -c "'$SA' explain --json listen_overflows | jq -e '.[0] | .code == \"listen_overflows\" and (.meaning|length) > 40 and (.mechanism|test(\"ListenOverflows\")) and (.fix|test(\"backlog\")) and .doc == \"docs/findings.md#listen_overflows\"' >/dev/null"
check "a code and an option in one call answer in order" \
	sh -c "'$SA' explain --json slow_connect SO_RCVBUF=1000 | jq -e '.[0].code == \"slow_connect\" and .[1].opt == \"SO_RCVBUF\"' >/dev/null"
finish
