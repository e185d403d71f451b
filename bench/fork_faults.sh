#!/bin/bash
# bench/fork_faults.sh: what a fork-per-connection server with a shell per
# connection pays the library per request, counted exactly.
#
# socat TCP-LISTEN,fork in front of SYSTEM: a script that reads the request
# and answers (per connection: socat forks, the child forks again for
# SYSTEM, and sh is exec'd twice: `sh -c script`, then the script's own
# #!/bin/sh). Each arm is the same server under perf stat (inherited: the
# front socat and every process it makes), driven by FORK_N (400) requests
# (ab -c 2): page faults, system calls and task-clock per request. The arms:
#   plain         no preload
#   empty         an empty library (cc -shared -nostdlib): what any preload costs
#   library       libsockaudit.so, default level (SA_LIB to choose one)
#   other build   FORK_VS=path: a second build of the library
# Faults move by one or two per request with where ASLR puts a 64 kB
# fault-around window; FORK_K (3) runs of each arm, in turn, and the median.
# bench/socat_fork.sh times the same server side by side.
# Usage: bench/fork_faults.sh   (env: SA_LIB, FORK_N, FORK_K, FORK_VS)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
N=${FORK_N:-400}
K=${FORK_K:-3}
for b in socat ab perf; do
	command -v $b >/dev/null || { echo "fork_faults.sh: $b is not installed" >&2; exit 2; }
done
[ -f "$LIB" ] || { echo "fork_faults.sh: $LIB not found (make first)" >&2; exit 2; }
T=$(mktemp -d /tmp/sa-ffault.XXXXXX)
trap 'pkill -P $$ 2>/dev/null; rm -rf "$T"' EXIT
echo 'int sa_bench_nothing;' >"$T/empty.c"
${CC:-cc} -shared -fPIC -nostdlib -o "$T/empty.so" "$T/empty.c" || exit 2
cat >"$T/respond.sh" <<'SH'
#!/bin/sh
while read -r l; do [ "${#l}" -le 1 ] && break; done
printf 'HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n'
SH
chmod 755 "$T/respond.sh"

# run PRELOAD OUT: one server under perf stat, N requests; "faults syscalls ms" per request.
run() {
	local port=$((12000 + RANDOM % 20000)) pp c
	perf stat -x, -e page-faults -e raw_syscalls:sys_enter -e task-clock -o "$T/perf" -- \
		env ${1:+LD_PRELOAD=$1} SOCKAUDIT_LOG="$T/audit.jsonl" \
		socat -t 0.01 TCP-LISTEN:$port,fork,reuseaddr,backlog=128 SYSTEM:"$T/respond.sh" &
	pp=$!
	for _ in $(seq 50); do ss -ltn "sport = :$port" | grep -q LISTEN && break; sleep 0.05; done
	ab -q -n "$N" -c 2 "http://127.0.0.1:$port/" >"$T/ab" 2>&1
	# perf prints when its socat ends: SIGINT to socat, the children have answered.
	sleep 0.3
	c=$(pgrep -P "$pp" -x socat); [ -n "$c" ] && kill -INT $c
	for _ in $(seq 100); do kill -0 "$pp" 2>/dev/null || break; sleep 0.1; done
	kill "$pp" 2>/dev/null; wait "$pp" 2>/dev/null
	if ! grep -q '^Failed requests: *0' "$T/ab" || ! grep -q "^Complete requests: *$N" "$T/ab"; then
		echo "failed"; return
	fi
	awk -F, -v n="$N" '$3 == "page-faults" { f = $1 } $3 == "raw_syscalls:sys_enter" { s = $1 } $3 == "task-clock" { t = $1 }
		END { if (f == "" || s == "") print "failed"; else printf "%.1f %.1f %.2f\n", f / n, s / n, t / n }' "$T/perf"
}
arms=("plain:" "empty library:$T/empty.so" "libsockaudit.so:$LIB")
[ -n "${FORK_VS:-}" ] && arms+=("other build (FORK_VS):$(cd "$(dirname "$FORK_VS")" && pwd)/$(basename "$FORK_VS")")
for ((k = 0; k < K; k++)); do
	for a in "${arms[@]}"; do
		echo "${a%%:*}|$(run "${a#*:}")" >>"$T/res"
	done
done
echo "socat fork + SYSTEM shell: per request (perf stat, inherited; $N requests, ab -c 2; median of $K runs per arm, arms in turn); nproc $(nproc); kernel $(uname -r)"
printf '%-26s %12s %12s %14s\n' arm "page faults" syscalls "task-clock ms"
for a in "${arms[@]}"; do
	name=${a%%:*}
	grep -F "$name|" "$T/res" | cut -d'|' -f2 | python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin if l.strip() and l.strip() != "failed"]
name = sys.argv[1]
if not rows:
    print("%-26s %12s" % (name, "failed"))
else:
    m = [statistics.median(float(r[i]) for r in rows) for i in range(3)]
    print("%-26s %12.1f %12.1f %14.2f" % (name, m[0], m[1], m[2]))' "$name"
done
