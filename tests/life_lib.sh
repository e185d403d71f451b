# Helpers for the issue-15 host-safety tests (tests/integration/life_*.sh).
# Source after tests/lib.sh. Every case runs the same program plainly and
# under the shim, bounded by timeout; a run that had to be killed fails its
# check with "hung".
#   life_plain OUT TMO CMD...        run CMD plainly: OUT.out, OUT.err, $LR_RC
#   life_shim OUT TMO LEVEL CMD...   run CMD under the shim at LEVEL (SOCKAUDIT_LOG=OUT.jsonl
#                                    unless LR_LOG is set; LR_LOG=- leaves SOCKAUDIT_LOG unset)
#   life_same NAME PLAIN SHIM        the shim run ended like the plain one (status, stdout)
#   life_parses NAME LOG             the log exists and every line is a JSON object
#   life_hung RC                     true when RC says timeout killed the run
life_plain() {
	local o=$1 tmo=$2; shift 2
	timeout -k 2 "$tmo" "$@" >"$o.out" 2>"$o.err"; LR_RC=$?
	echo "$LR_RC" >"$o.rc"; echo "$tmo" >"$o.tmo"
}
life_shim() {
	local o=$1 tmo=$2 lvl=$3 log=${LR_LOG:-$1.jsonl}; shift 3
	if [ "$log" = - ]; then
		SOCKAUDIT_LEVEL=$lvl timeout -k 2 "$tmo" env LD_PRELOAD="$(preload_value)" "$@" >"$o.out" 2>"$o.err"
	else
		SOCKAUDIT_LEVEL=$lvl SOCKAUDIT_LOG=$log timeout -k 2 "$tmo" env LD_PRELOAD="$(preload_value)" \
			"$@" >"$o.out" 2>"$o.err"
	fi
	LR_RC=$?
	echo "$LR_RC" >"$o.rc"; echo "$tmo" >"$o.tmo"
}
life_hung() { [ "$1" = 124 ] || [ "$1" = 137 ]; }
life_same() {
	local n=$1 p=$2 s=$3 prc src
	prc=$(cat "$p.rc"); src=$(cat "$s.rc")
	if life_hung "$prc"; then fail "$n" "the PLAIN run hung (killed after $(cat "$p.tmo") s): the test itself is broken"
	elif life_hung "$src"; then fail "$n" "hung: killed after the $(cat "$s.tmo") s timeout (plain ended with status $prc)"
	elif [ "$prc" != "$src" ]; then fail "$n" "exit status $src, plain $prc"; sed 's/^/# shim stderr: /' "$s.err" | head -5
	elif ! cmp -s "$p.out" "$s.out"; then
		fail "$n" "output differs from plain"
		diff "$p.out" "$s.out" | head -8 | sed 's/^/# /'
	else ok "$n"
	fi
}
life_parses() {
	local n=$1 f=$2 bad
	if [ ! -s "$f" ]; then fail "$n" "no log at $f"; return; fi
	bad=$(jq -R -s '[split("\n")[] | select(length > 0) | (fromjson? | type) // "bad"] | map(select(. != "object")) | length' "$f" 2>/dev/null)
	if [ "$bad" = 0 ]; then ok "$n ($(wc -l <"$f") lines)"
	else fail "$n" "${bad:-?} lines of $f do not parse as JSON objects"; grep -v '^{.*}$' "$f" | head -3 | sed 's/^/# /'; fi
}
# life_jq FILE FILTER: prints jq -s FILTER on the log (empty on error).
life_jq() { jq -s -r "$2" "$1" 2>/dev/null; }
