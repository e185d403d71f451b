#!/bin/bash
# bench/mem.sh: the shim's resident memory, and whether it scales with
# RLIMIT_NOFILE (it must not: containers often set the limit to 2^20 or more).
#
# Runs `microbench mem` (a listener, a connection, and a socket moved to the
# highest fd the limit allows, then its VmRSS/VmSize) with and without the
# shim, at RLIMIT_NOFILE 1024 and at 1048576 (or the hard limit, if this
# machine does not allow 1048576: raising it needs CAP_SYS_RESOURCE).
# The table the shim keeps grows with the highest fd in use, so the high
# limit costs one more 256-entry chunk for the high fd, not a million entries.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
MB=${MICROBENCH:-$TOP/build/bench/microbench}
WANT=1048576
for f in "$LIB" "$MB"; do
	[ -e "$f" ] || { echo "mem.sh: $f is missing (make bench-build)" >&2; exit 2; }
done
T=$(mktemp -d /tmp/sa-mem.XXXXXX)
trap 'rm -rf "$T"' EXIT

high=$WANT
if ! (ulimit -n "$WANT") 2>/dev/null; then
	high=$(ulimit -Hn)
	[ "$high" = unlimited ] && high=$WANT
	echo "note: RLIMIT_NOFILE $WANT is not allowed here (hard limit $(ulimit -Hn), no CAP_SYS_RESOURCE); using $high"
fi

# run NOFILE SHIM(0|1): prints "rss size private high_fd", each the median of 5 runs
# (a process's RSS moves by a couple of hundred kB from run to run).
run() {
	local i out
	for i in 1 2 3 4 5; do
		if [ "$2" = 1 ]; then
			out=$( (ulimit -n "$1" && LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$T/mem.jsonl" "$MB" mem) ) || return 1
		else
			out=$( (ulimit -n "$1" && "$MB" mem) ) || return 1
		fi
		awk '/^VmRSS:/ { r = $2 } /^VmSize:/ { s = $2 } /^Private:/ { p = $2 } /^high_fd:/ { h = $2 }
			END { print r, s, p, h }' <<<"$out"
	done | sort -n -k1,1 | sed -n 3p
}

printf '%-8s %-8s %8s %10s %10s %12s\n' "nofile" "shim" "high fd" "VmRSS kB" "VmSize kB" "PrivDirty kB"
declare -A R S P
for lim in 1024 "$high"; do
	for shim in 0 1; do
		read -r rss size priv hfd <<<"$(run "$lim" "$shim")"
		[ -n "${hfd:-}" ] || { echo "mem.sh: microbench mem failed" >&2; exit 1; }
		R[$lim.$shim]=$rss S[$lim.$shim]=$size P[$lim.$shim]=$priv
		printf '%-8s %-8s %8s %10s %10s %12s\n' "$lim" "$([ "$shim" = 1 ] && echo with || echo without)" \
			"$hfd" "$rss" "$size" "$priv"
	done
done
echo
for lim in 1024 "$high"; do
	printf 'shim adds at nofile %-8s: VmRSS %+d kB, VmSize %+d kB, private dirty %+d kB\n' "$lim" \
		$((R[$lim.1] - R[$lim.0])) $((S[$lim.1] - S[$lim.0])) $((P[$lim.1] - P[$lim.0]))
done
d=$(( (P[$high.1] - P[$high.0]) - (P[1024.1] - P[1024.0]) ))
if [ "$d" -le 128 ]; then
	echo "PASS the shim's private dirty memory at nofile $high is within 128 kB of nofile 1024 (${d} kB)"
else
	echo "MISS the shim's private dirty memory grows with RLIMIT_NOFILE: ${d} kB more at $high than at 1024"
fi
grep -q '"event"' "$T/mem.jsonl" 2>/dev/null || echo "warning: the shim wrote nothing: was it active?"
FT=${FDTAB_MEM:-$TOP/build/bench/fdtab_mem}
if [ -x "$FT" ]; then
	echo
	echo "fd table alone (build/bench/fdtab_mem, the shim's objects linked in, no preload):"
	"$FT" | sed 's/^/  /'
fi
