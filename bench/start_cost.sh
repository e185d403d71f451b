#!/bin/bash
# bench/start_cost.sh: what every exec pays for loading the shim, counted.
#
# Instructions of one run of /bin/true (callgrind, following the exec of
# `sh -c 'exec /bin/true'`, so the count is of /bin/true's process alone,
# the dynamic loader's work included): plain, under a one-function preload
# (bench/onefunc.c: socket() found with dlsym on first use, the floor of any
# LD_PRELOAD), and under libsockaudit.so at the default level. Then the
# loader's own relocation counts (LD_DEBUG=statistics) for plain and the
# shim. Exits 1 when the shim adds more than START_LIMIT (20000)
# instructions.
# Usage: bench/start_cost.sh   (env: SA_LIB, START_LIMIT, START_PROG)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
LIMIT=${START_LIMIT:-20000}
PROG=${START_PROG:-/bin/true}
command -v valgrind >/dev/null || { echo "start_cost.sh: valgrind is not installed" >&2; exit 2; }
T=$(mktemp -d /tmp/sa-start.XXXXXX)
trap 'rm -rf "$T"' EXIT
${CC:-cc} -shared -fPIC -O2 -o "$T/onefunc.so" "$TOP/bench/onefunc.c" -ldl || exit 2

# count PRELOAD: Ir of $PROG after the exec (the last callgrind instance).
count() {
	env -u LD_PRELOAD $(env | sed -n 's/^\(SOCKAUDIT_[A-Z_]*\)=.*/-u \1/p') \
		valgrind --tool=callgrind --trace-children=yes --log-file="$T/vg.%p" \
		--callgrind-out-file="$T/cg.%p" sh -c "${1:+LD_PRELOAD=$1 }exec $PROG" >/dev/null 2>&1
	grep -h 'Collected' "$T"/vg.* | tail -n 1 | awk '{ gsub(",", "", $NF); print $NF }'
	rm -f "$T"/vg.* "$T"/cg.*
}
plain=$(count "")
one=$(count "$T/onefunc.so")
shim=$(count "$LIB")
echo "start cost: instructions of one $PROG (callgrind, following the exec; valgrind $(valgrind --version | sed 's/valgrind-//'), $(ldd --version | head -n 1 | sed 's/.* //'))"
printf '%-44s %9s %9s\n' "" "Ir" "added"
printf '%-44s %9d %9s\n' "plain" "$plain" ""
printf '%-44s %9d %+9d\n' "one-function preload (dlsym on first use)" "$one" $((one - plain))
printf '%-44s %9d %+9d\n' "libsockaudit.so, default level" "$shim" $((shim - plain))
stats() {
	env ${1:+LD_PRELOAD=$1} LD_DEBUG=statistics "$PROG" 2>&1 |
		awk '/number of relocations:/ { r = $NF } /relocations from cache:/ { c = $NF } /relative relocations:/ { rel = $NF } END { printf "%s symbol, %s from cache, %s relative", r, c, rel }'
}
echo "loader relocations at start (LD_DEBUG=statistics): plain $(stats ""); shim $(stats "$LIB")"
added=$((shim - plain))
if [ "$added" -gt "$LIMIT" ]; then
	echo "over the limit: +$added instructions > +$LIMIT"
	exit 1
fi
echo "within the limit: +$added <= +$LIMIT instructions per exec"
