#!/bin/bash
# bench/counts.sh: what the shim adds per request to an nginx worker, in
# figures the kernel and valgrind count exactly, not in clock
# ratios that swing 2-15 % on a shared machine.
#
# For each arm (plain; the shim at the default level; plain nginx that
# `sockaudit attach` then audits at the default level; at trace; strace
# --seccomp-bpf) and each mode (close: Connection: close; ka4: keep-alive with
# nginx's keepalive_requests 4, so 4 requests per connection):
#   syscalls/req  every syscall the worker made (perf stat -e
#                 'syscalls:sys_enter_*' -p WORKER), epoll_wait aside, over
#                 exactly N requests (ab -n N -c 16), after a warm-up of N/10;
#   lines/req     lines the shim wrote over the same requests;
# and, with callgrind (BENCH_CALLGRIND=1, the default; nginx's master and
# worker under valgrind, two lives of the worker, N/4 and N/4 + N requests,
# subtracted: start-up and exit cancel):
#   instr/req     user-space instructions per request, shim included;
#   shim/req      of those, the ones callgrind attributes to the shim's own
#                 files (exact: the "+" column also carries nginx's variation).
# "+" columns are the difference to plain in the same mode.
#
# Usage: bench/counts.sh   (env: SA_LIB, NGINX, COUNTS_N (20000), COUNTS_CG_N
#        (2000), COUNTS_ARMS ("plain default attached trace strace"), COUNTS_MODES
#        ("close ka4"), BENCH_CALLGRIND (1), SOCKAUDIT_LOG_DIR (a temp dir: the
#        shim's log is a regular file there; set COUNTS_LOG=/dev/null for none),
#        COUNTS_CG_KEEP (a directory: keep each callgrind output there as
#        cg.ARM.MODE.REQUESTS, for callgrind_annotate --inclusive=yes))
# Exit status: 0 when every target holds, 1 when one is missed, 2 on a broken run.
set -u
. "$(dirname "$0")/nginx_conf.sh"
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
NGINX=${NGINX:-/usr/sbin/nginx}
N=${COUNTS_N:-20000}
CGN=${COUNTS_CG_N:-2000}
read -r -a ARMS <<<"${COUNTS_ARMS:-plain default attached trace strace}"
read -r -a MODES <<<"${COUNTS_MODES:-close ka4}"
CG=${BENCH_CALLGRIND:-1}
STRACE_CALLS=socket,setsockopt,listen,accept4,connect
# Targets: arm mode column max-added.
TARGETS=("default close sys 0.05" "default ka4 sys 0.05" "attached close sys 0.05" "attached ka4 sys 0.05"
	 "trace close sys 1.2"
	 "default close lines 0.001" "default ka4 lines 0.001"
	 "default close instr 300" "trace close instr 1500")
for b in "$NGINX" ab perf ss; do
	command -v "$b" >/dev/null || { echo "counts.sh: $b is not installed (scripts/ensure-deps.sh bench)" >&2; exit 2; }
done
[ -e "$LIB" ] || { echo "counts.sh: $LIB is missing (make)" >&2; exit 2; }
T=$(mktemp -d /tmp/sa-counts.XXXXXX)
chmod 755 "$T"
MASTER= TRACER=
stop() {
	[ -n "$MASTER" ] && kill -QUIT "$MASTER" 2>/dev/null
	for _ in $(seq "${STOP_WAIT:-30}"); do [ -n "$MASTER" ] && kill -0 "$MASTER" 2>/dev/null || break; sleep 0.1; done
	[ -n "$MASTER" ] && kill -KILL "$MASTER" 2>/dev/null
	[ -n "$TRACER" ] && kill "$TRACER" 2>/dev/null
	wait 2>/dev/null
	MASTER= TRACER=
}
trap 'stop; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
pick_port() {
	local p
	while :; do
		p=$((12000 + RANDOM % 20000))
		ss -Htan "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}

# start ARM MODE [valgrind...]: nginx for this arm; sets PORT, MASTER, WORKER, LOG.
start() {
	local a=$1 mode=$2 d=$T/$1.$2 i
	shift 2
	PORT=$(pick_port)
	mkdir -p "$d"; chmod 777 "$d"
	LOG=${COUNTS_LOG:-$d/audit.jsonl}
	local kr=1000000
	[ "$mode" = ka4 ] && kr=4
	KEEPALIVE_REQUESTS=$kr write_nginx_conf "$d" "$PORT"
	local env=() pre=("$@")
	case $a in
	plain | attached) ;;
	default) env=(LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$LOG") ;;
	trace) env=(LD_PRELOAD="$LIB" SOCKAUDIT_LOG="$LOG" SOCKAUDIT_LEVEL=trace) ;;
	strace) pre=(strace -f --seccomp-bpf -qq -o /dev/null -e trace=$STRACE_CALLS "${pre[@]}") ;;
	esac
	env "${env[@]}" "${pre[@]}" "$NGINX" -p "$d" -c "$d/nginx.conf" -e "$d/error.log" >"$d/stdout" 2>&1 &
	MASTER=$!
	[ "$a" = strace ] && TRACER=$MASTER
	WORKER=
	for i in $(seq 600); do
		if ss -Hltn "sport = :$PORT" | grep -q .; then
			if [ "${NGINX_MASTER:-on}" = off ]; then WORKER=$MASTER; break; fi
			[ -s "$d/nginx.pid" ] && WORKER=$(pgrep -P "$(cat "$d/nginx.pid")" | head -1)
			[ -n "$WORKER" ] && break
		fi
		sleep 0.05
	done
	[ "$a" = strace ] && [ -s "$d/nginx.pid" ] && MASTER=$(cat "$d/nginx.pid")
	[ -n "$WORKER" ] || { echo "counts.sh: nginx ($a $mode) did not start" >&2; tail -3 "$d/error.log" >&2; return 1; }
	if [ "$a" = attached ]; then
		SOCKAUDIT_LOG="$LOG" "$TOP/sockaudit" attach "$MASTER" "$WORKER" >"$d/attach.out" 2>&1 ||
			{ echo "counts.sh: sockaudit attach failed:" >&2; cat "$d/attach.out" >&2; return 1; }
	fi
}

drive() {   # drive MODE N: exactly N requests, 16 at a time
	local k=()
	[ "$1" = ka4 ] && k=(-k)
	ab -q -r -n "$2" -c 16 "${k[@]}" "http://127.0.0.1:$PORT/" >"$T/ab.out" 2>&1
	grep -q "^Failed requests: *0" "$T/ab.out" || { echo "counts.sh: ab reported failures:" >&2; grep -E "Failed|Non-2xx" "$T/ab.out" >&2; }
}

declare -A SYS LINES INS OWN
for mode in "${MODES[@]}"; do
	for a in "${ARMS[@]}"; do
		start "$a" "$mode" || exit 2
		drive "$mode" $((N / 10))
		[ -f "$LOG" ] && [ "$LOG" != /dev/null ] && : >"$LOG"
		perf stat -x, -e 'syscalls:sys_enter_*' -p "$WORKER" -o "$T/perf.$a.$mode" -- sleep 600 >/dev/null 2>&1 &
		pp=$!
		sleep 1
		drive "$mode" "$N"
		# End perf's sleep (its workload), not perf: it then prints its counts.
		sp=$(pgrep -P "$pp" | head -1)
		[ -n "$sp" ] && kill "$sp" 2>/dev/null
		wait $pp 2>/dev/null
		SYS[$a.$mode]=$(awk -F, -v n="$N" '$3 ~ /sys_enter_/ && $3 !~ /epoll_wait|epoll_pwait/ && $1 ~ /^[0-9]+$/ { s += $1 } END { printf "%.3f", s / n }' "$T/perf.$a.$mode")
		if [ -f "$LOG" ] && [ "$LOG" != /dev/null ] && [ "$a" != plain ] && [ "$a" != strace ]; then
			LINES[$a.$mode]=$(awk -v n="$N" -v l="$(wc -l <"$LOG")" 'BEGIN { printf "%.4f", l / n }')
		fi
		awk -F, '$3 ~ /sys_enter_/ && $1 ~ /^[0-9]+$/ && $1 > 0 { print "  " $3 " " $1 }' "$T/perf.$a.$mode" >"$T/detail.$a.$mode"
		stop
	done
done

# cg_life ARM MODE N: nginx's master and worker under callgrind (the fork
# stays in valgrind), N requests, a graceful stop: "TOTAL OWN" for the
# worker's whole life (its file, written as it exits), OWN the instructions
# callgrind_annotate attributes to a file under shim/ (inline code counted
# where it was written, headers included). callgrind_control cannot reach a
# forked child, so two lives are subtracted instead (start and exit cancel).
cg_life() {
	local f w t o
	start "$1" "$2" valgrind --tool=callgrind --callgrind-out-file="$T/cg.$1.$2.%p" || return 1
	w=$WORKER
	drive "$2" "$3"
	STOP_WAIT=300 stop
	f=$T/cg.$1.$2.$w
	[ -s "$f" ] || { echo "counts.sh: no callgrind output for the $1 worker" >&2; return 1; }
	t=$(awk '/^(summary|totals):/ { t = $2 } END { printf "%.0f", t }' "$f")
	o=0
	[ "$1" != plain ] && command -v callgrind_annotate >/dev/null &&
		o=$(callgrind_annotate --inclusive=no --threshold=100 "$f" 2>/dev/null |
			awk '/^ *[0-9,]+ +\(.*\) +[^ ]*shim\// { x = $1; gsub(",", "", x); s += x } END { printf "%.0f", s }')
	[ -n "${COUNTS_CG_KEEP:-}" ] && cp "$f" "$COUNTS_CG_KEEP/cg.$1.$2.$3"
	rm -f "$T"/cg."$1.$2".*
	echo "$t $o"
}

if [ "$CG" = 1 ] && command -v valgrind >/dev/null; then
	for mode in "${MODES[@]}"; do
		for a in "${ARMS[@]}"; do
			# A process under valgrind runs its code on valgrind's CPU:
			# an attach from outside would run ours natively there.
			[ "$a" = strace ] || [ "$a" = attached ] && continue
			r1=$(cg_life "$a" "$mode" $((CGN / 4))) || exit 2
			r2=$(cg_life "$a" "$mode" $((CGN / 4 + CGN))) || exit 2
			read -r t1 o1 <<<"$r1"; read -r t2 o2 <<<"$r2"
			INS[$a.$mode]=$(awk -v a="$t1" -v b="$t2" -v n="$CGN" 'BEGIN { printf "%.0f", (b - a) / n }')
			[ "$a" != plain ] && OWN[$a.$mode]=$(awk -v a="$o1" -v b="$o2" -v n="$CGN" 'BEGIN { printf "%.0f", (b - a) / n }')
		done
	done
fi

echo "libsockaudit counted cost per request: nginx $("$NGINX" -v 2>&1 | sed 's/.*\///'), 1 worker, return 200, 127.0.0.1;" \
	"ab -c 16 -n $N (callgrind: -n $CGN); nproc $(nproc); kernel $(uname -r); log ${COUNTS_LOG:-a regular file}"
printf '%-8s %-6s %10s %9s %10s %9s %9s %10s\n' arm mode "sys/req" "+sys" "instr/req" "+instr" "shim/req" "lines/req"
for mode in "${MODES[@]}"; do
	for a in "${ARMS[@]}"; do
		s=${SYS[$a.$mode]:-} i=${INS[$a.$mode]:-}
		ps=${SYS[plain.$mode]:-} pi=${INS[plain.$mode]:-}
		printf '%-8s %-6s %10s %9s %10s %9s %9s %10s\n' "$a" "$mode" "${s:--}" \
			"$([ -n "$s" ] && [ -n "$ps" ] && awk -v a="$s" -v b="$ps" 'BEGIN { printf "%+.3f", a - b }' || echo -)" \
			"${i:--}" "$([ -n "$i" ] && [ -n "$pi" ] && awk -v a="$i" -v b="$pi" 'BEGIN { printf "%+.0f", a - b }' || echo -)" \
			"${OWN[$a.$mode]:--}" "${LINES[$a.$mode]:--}"
	done
done
echo "(+instr: all user instructions against plain's, nginx's own run-to-run variation included;" \
	"shim/req: the lines callgrind_annotate attributes to the shim's files, exact)"
if [ -n "${COUNTS_DETAIL:-}" ]; then
	for f in "$T"/detail.*; do echo "== ${f##*/detail.}"; sort -k2 -rn "$f"; done
fi
rc=0
for t in "${TARGETS[@]}"; do
	read -r a mode col max <<<"$t"
	case $col in
	sys) v=${SYS[$a.$mode]:-}; p=${SYS[plain.$mode]:-} ;;
	instr) v=${INS[$a.$mode]:-}; p=${INS[plain.$mode]:-} ;;
	lines) v=${LINES[$a.$mode]:-}; p=0 ;;
	esac
	[ -n "$v" ] && [ -n "$p" ] || continue
	d=$(awk -v a="$v" -v b="$p" 'BEGIN { printf "%.4g", a - b }')
	if awk -v d="$d" -v m="$max" 'BEGIN { exit !(d <= m) }'; then
		echo "PASS $a $mode: +$d $col per request (target <= $max)"
	else
		echo "MISS $a $mode: +$d $col per request (target <= $max)"; rc=1
	fi
done
exit $rc
