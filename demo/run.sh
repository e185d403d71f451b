#!/bin/bash
# demo/run.sh: `make demo`. Replays the reference studies' scenarios under the
# shim, one after another, then shows the report of the whole run.
#   demo/run.sh            all seven scenarios
#   demo/run.sh 2 5        only scenarios 2 and 5
#   DEMO_KEEP=/tmp/logs demo/run.sh    keep the JSON lines in /tmp/logs
# Exit status: 0 when every scenario showed its finding, 1 otherwise.
set -u
DEMO=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$DEMO/.." && pwd)
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ] && [ "${TERM:-dumb}" != dumb ]; then
	C_H=$'\e[1;36m' C_OK=$'\e[1;32m' C_BAD=$'\e[1;31m' C_0=$'\e[0m'
else
	C_H= C_OK= C_BAD= C_0=
fi

if [ -n "${DEMO_KEEP:-}" ]; then
	mkdir -p "$DEMO_KEEP" && DEMO_LOGDIR=$(cd "$DEMO_KEEP" && pwd)
else
	DEMO_LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/sa-demo-logs.XXXXXX")
fi
export DEMO_LOGDIR
child=
cleanup() {
	trap - EXIT INT TERM
	# A scenario cleans up after itself on TERM (its processes, namespaces, files).
	if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	[ -z "${DEMO_KEEP:-}" ] && rm -rf "$DEMO_LOGDIR"
}
trap cleanup EXIT
trap 'echo; echo "demo interrupted"; exit 130' INT TERM

all=(01-defer-table 02-silent-client 03-syncookies 04-nginx-backlog 05-nginx-upstream 06-quickack 07-syn-drops)
pick=()
if [ $# -gt 0 ]; then
	for n in "$@"; do
		for s in "${all[@]}"; do [ "${s%%-*}" = "0${n#0}" ] && pick+=("$s"); done
	done
	[ ${#pick[@]} -gt 0 ] || { echo "usage: demo/run.sh [1-7 ...]" >&2; exit 2; }
else
	pick=("${all[@]}")
fi

printf '%slibsockaudit demo%s: the reference studies, replayed live under the shim\n' "$C_H" "$C_0"
printf '  kernel %s, %s CPUs; shim %s\n' "$(uname -r)" "$(nproc)" "$TOP/libsockaudit.so"
printf '  Each scenario runs real programs with LD_PRELOAD=libsockaudit.so and reads what the\n'
printf '  shim wrote (JSON lines) with jq. Logs: %s%s\n' "$DEMO_LOGDIR" \
	"$([ -z "${DEMO_KEEP:-}" ] && echo ' (removed at the end; DEMO_KEEP=DIR keeps them)')"
[ "$(id -u)" = 0 ] || printf '  Not root: scenarios 3-5 need network namespaces and will fail.\n'

passed=() failed=()
for s in "${pick[@]}"; do
	# In the background so a TERM to this script can be passed on; the
	# scenario's output still goes straight to our stdout.
	DEMO_VERDICT=$DEMO_LOGDIR/$s.verdict "$DEMO/$s.sh" &
	child=$!
	if wait "$child"; then passed+=("$s"); else failed+=("$s"); fi
	child=
done

printf '\n%s== The report of the whole run ==%s\n' "$C_H" "$C_0"
logs=("$DEMO_LOGDIR"/*.jsonl)
if [ ! -e "${logs[0]}" ]; then
	echo "  (no logs: the shim wrote nothing)"
elif [ -x "$TOP/sockaudit" ] && { "$TOP/sockaudit" report --color="$([ -n "$C_H" ] && echo always || echo never)" \
	"${logs[@]}" || "$TOP/sockaudit" report "${logs[@]}"; } >"$DEMO_LOGDIR/report.txt" 2>&1; then
	echo "  ./sockaudit report $DEMO_LOGDIR/*.jsonl"
	sed 's/^./    &/' "$DEMO_LOGDIR/report.txt"
else
	[ -x "$TOP/sockaudit" ] && echo "  (./sockaudit report failed: $(head -1 "$DEMO_LOGDIR/report.txt" 2>/dev/null); a jq summary instead)"
	echo "  Findings per log (jq):"
	for l in "${logs[@]}"; do
		jq -R -r 'fromjson? // empty | (.findings | arrays)[]' "$l" | sort | uniq -c |
			awk -v f="$(basename "$l")" 'BEGIN {printf "    %-30s", f; n = 0}
				{printf "%s%s x%d", (n++ ? ", " : ""), $2, $1} END {if (!n) printf "(none)"; print ""}'
	done
	echo "  Events per log:"
	for l in "${logs[@]}"; do
		jq -R -r 'fromjson? // empty | .event' "$l" | sort | uniq -c |
			awk -v f="$(basename "$l")" 'BEGIN {printf "    %-30s", f; n = 0}
				{printf "%s%s %d", (n++ ? ", " : ""), $2, $1} END {if (!n) printf "(none)"; print ""}'
	done
fi

printf '\n%s== Result ==%s\n' "$C_H" "$C_0"
for s in "${pick[@]}"; do
	case " ${failed[*]:-} " in
	*" $s "*) printf '  %sFAIL%s  %-20s %s\n' "$C_BAD" "$C_0" "$s" \
		"$(cat "$DEMO_LOGDIR/$s.verdict" 2>/dev/null || echo "(no verdict: the scenario stopped early)")" ;;
	*) printf '  %sPASS%s  %-20s %s\n' "$C_OK" "$C_0" "$s" "$(cat "$DEMO_LOGDIR/$s.verdict" 2>/dev/null)" ;;
	esac
done
printf '  %d of %d scenarios showed their finding, in %d s.\n' "${#passed[@]}" "${#pick[@]}" "$SECONDS"
if [ ${#failed[@]} -gt 0 ]; then
	printf '  Did not show its finding: %s\n' "${failed[*]}"
	exit 1
fi
exit 0
