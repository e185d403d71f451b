#!/bin/bash
# bench/callgrind.sh: instructions per call of the shim's wrappers, counted by
# callgrind (repeatable on a noisy machine, unlike a clock).
#
# For each path, build/bench/microbench runs the call N and 2N times under
# valgrind --tool=callgrind --collect-atstart=no --toggle-collect='op_*', so
# only the measured call (the op_* function, inclusive of the shim and libc)
# is counted. (total(2N) - total(N)) / N is the steady cost of one call, free
# of one-time costs (lazy binding, the shim's init). Done without the shim,
# with it at the default level and at trace level; "added" is the difference.
# Instructions the kernel runs are not counted: callgrind sees user space only,
# which is exactly what the shim adds.
#
# Usage: bench/callgrind.sh [N]   (env: SA_LIB, MICROBENCH)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
MB=${MICROBENCH:-$TOP/build/bench/microbench}
N=${1:-4000}
UNTRACKED_TARGET=30
for f in "$LIB" "$MB"; do
	[ -e "$f" ] || { echo "callgrind.sh: $f is missing (make all $MB)" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 2; }
T=$(mktemp -d /tmp/sa-cg.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

# total MODE ITER ENV...: the Ir callgrind collected inside op_* functions.
total() {
	local mode=$1 n=$2 out
	shift 2
	out=$T/cg.$mode.$n.$RANDOM
	if ! env "$@" valgrind --tool=callgrind --callgrind-out-file="$out" \
		--collect-atstart=no --toggle-collect='op_*' "$MB" "$mode" "$n" \
		>"$T/stdout" 2>"$T/vg.log"; then
		echo "callgrind.sh: microbench $mode $n failed ($*):" >&2
		grep -v '^==' "$T/vg.log" | head -5 >&2
		return 1
	fi
	awk '/^totals:/ { print $2; found = 1 } END { if (!found) exit 1 }' "$out"
}

# per_call MODE CALLS ENV...: steady instructions per call, 1 decimal.
per_call() {
	local mode=$1 calls=$2 a b
	shift 2
	a=$(total "$mode" "$N" "$@") || return 1
	b=$(total "$mode" $((2 * N)) "$@") || return 1
	awk -v a="$a" -v b="$b" -v n="$N" -v c="$calls" 'BEGIN { printf "%.1f", (b - a) / n / c }'
}

# mode | calls per iteration | label
paths=(
	"pipe-read|1|read() on an untracked fd (pipe)"
	"pipe-write|1|write() on an untracked fd (pipe)"
	"tcp-rw|2|read()/write() on an accepted socket"
	"recv-send|2|recv()/send() on an accepted socket"
	"setsockopt-same|1|setsockopt(TCP_NODELAY) repeat (read-back)"
	"setsockopt-new|1|setsockopt(SO_RCVBUF) new value (a line)"
	"accept4|1|accept4() with a queued connection"
	"accept4-eagain|1|accept4() EAGAIN on an empty queue"
	"socket-close|2|socket() / close()"
	"connect|1|connect() on loopback (blocking)"
)

noshim=(SOCKAUDIT_DISABLE=0)
info=(LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/info.jsonl")
trace=(LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/trace.jsonl" SOCKAUDIT_LEVEL=trace)

echo "libsockaudit per-call cost: user-space instructions per call (callgrind, (Ir(2N)-Ir(N))/N, N=$N)"
printf '%-46s %9s %9s %9s %9s %9s\n' "path" "no shim" "default" "+added" "trace" "+added"
rc=0
untracked_worst=
for p in "${paths[@]}"; do
	IFS='|' read -r mode calls label <<<"$p"
	base=$(per_call "$mode" "$calls" "${noshim[@]}") || { rc=1; continue; }
	def=$(per_call "$mode" "$calls" "${info[@]}") || { rc=1; continue; }
	trc=$(per_call "$mode" "$calls" "${trace[@]}") || { rc=1; continue; }
	printf '%-46s %9s %9s %9s %9s %9s\n' "$label" "$base" "$def" \
		"$(awk -v a="$def" -v b="$base" 'BEGIN { printf "%+.1f", a - b }')" "$trc" \
		"$(awk -v a="$trc" -v b="$base" 'BEGIN { printf "%+.1f", a - b }')"
	case $mode in pipe-read|pipe-write)
		untracked_worst=$(awk -v w="${untracked_worst:-0}" -v a="$def" -v b="$base" \
			'BEGIN { d = a - b; print (d > w ? d : w) }') ;;
	esac
done
if [ -n "$untracked_worst" ]; then
	if awk -v d="$untracked_worst" -v t="$UNTRACKED_TARGET" 'BEGIN { exit !(d <= t) }'; then
		echo "PASS untracked-fd path: +$untracked_worst instructions per call (target <= $UNTRACKED_TARGET)"
	else
		echo "MISS untracked-fd path: +$untracked_worst instructions per call (target <= $UNTRACKED_TARGET)"
	fi
fi
exit $rc
