#!/bin/bash
# The last group of tests/run-tests.sh: no `msg` in any line the
# integration scripts' programs wrote is longer than 240 characters (a
# person reads a line at a glance; the mechanism is `sockaudit explain
# CODE`'s). tests/lib.sh keeps those lines in build/test-lines/SCRIPT.jsonl
# before each script's temp dir goes. Run alone (TESTS=msg_length) it checks
# the lines of the last run.
unset SA_TEST_LINES   # its own temp dir holds no lines to keep
. "$(dirname "$0")/../lib.sh"
MAX=240
D=${SA_TEST_LINES_DIR:-$BUILD/test-lines}

shopt -s nullglob
files=("$D"/*.jsonl)
if [ ${#files[@]} = 0 ]; then
	ok "msg length # SKIP no integration lines kept in $D (run integration tests first)"
	exit 0
fi
# Lines that are not JSON (a write cut by a killed program) are left out:
# fromjson? skips them; the count says how many were read.
report=$(cat "${files[@]}" | jq -R -r --argjson max "$MAX" '
	fromjson? | select(type == "object" and (.msg | type) == "string")
	| "\(.msg | length)\t\(.event)\t\(.findings // [] | join(","))\t\(.msg)"' | sort -t$'\t' -k1,1nr)
n=$(printf '%s\n' "$report" | grep -c .)
longest=$(printf '%s\n' "$report" | head -1 | cut -f1)
echo "# $n lines with a msg from ${#files[@]} scripts; the longest msg is ${longest:-0} characters"
printf '%s\n' "$report" | head -3 | cut -c1-300 | sed 's/^/#   /'
if [ "$n" -lt 1 ]; then
	# The scripts that ran (TESTS=layout, say) wrote no line with a msg.
	ok "msg length # SKIP no line with a msg in the ${#files[@]} scripts' logs kept in $D"
elif [ "${longest:-0}" -le "$MAX" ]; then
	ok "every msg of $n lines is at most $MAX characters"
else
	over=$(printf '%s\n' "$report" | awk -F'\t' -v m="$MAX" '$1 > m' | wc -l)
	for f in "${files[@]}"; do
		jq -R -r --argjson max "$MAX" 'fromjson? | select((.msg | type) == "string" and (.msg | length) > $max) | .msg' "$f" 2>/dev/null |
			head -2 | sed "s|^|# $(basename "$f" .jsonl): |" | cut -c1-200
	done
	fail "every msg is at most $MAX characters" "$over lines are longer, the longest $longest"
fi
exit $_sa_failed
