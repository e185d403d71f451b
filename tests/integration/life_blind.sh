#!/bin/bash
# Programs the shim cannot see into must not pass in silence:
# - a Go program (Debian's caddy, dynamically linked: the library is mapped,
#   but Go makes its own system calls): the launcher says so in one stderr
#   line and still runs it; `sockaudit report` on the log that never came
#   names Go among the causes instead of blaming only static or setuid;
# - a process that made sockets and accepts through an io_uring set up by
#   liburing (its own system calls): a blind_spot line (call "io_uring")
#   before the summary, counted in the summary's findings; also when the
#   program closes the ring before it exits (io_uring_queue_exit), whether
#   the process connects through libc, only sets an option on the sockets
#   the ring accepted, or does neither and closes its listener first.
# Neither says anything for a program that is neither.
. "$(dirname "$0")/../lib.sh"
SA=$TOP/sockaudit

# 1. caddy. A sanitized launcher preloads the sanitizer's runtime, which a
# Go program does not start under: that build is for our C, not for caddy.
if [ -n "${SANITIZE:-}" ]; then
	echo "ok - caddy: runs under the launcher and serves # SKIP SANITIZE=$SANITIZE: the sanitizer runtime the launcher preloads does not start in a Go program"
elif command -v caddy >/dev/null; then
	P=$(free_port); mkdir -p "$T/www"; echo hello >"$T/www/index.html"
	HOME=$T XDG_DATA_HOME=$T XDG_CONFIG_HOME=$T "$SA" -o "$T/caddy-%p.jsonl" -- \
		caddy file-server --listen 127.0.0.1:$P --root "$T/www" >"$T/caddy.out" 2>"$T/caddy.err" &
	cp=$!
	on_exit "kill $cp"
	if wait_port $P; then
		[ "$(timeout 5 curl -s "http://127.0.0.1:$P/index.html")" = hello ] && ok "caddy: runs under the launcher and serves" \
			|| fail "caddy: runs under the launcher and serves"
	else fail "caddy: runs under the launcher and serves" "no listener: $(tail -2 "$T/caddy.err")"; fi
	kill $cp; wait $cp 2>/dev/null
	n=$(grep -c '^sockaudit: caddy is a Go program: Go makes its own system calls' "$T/caddy.err")
	[ "$n" = 1 ] && ok "caddy: one stderr line says it is a Go program whose sockets are not seen" \
		|| fail "caddy: one stderr line says it is a Go program whose sockets are not seen" "$n lines; $(grep sockaudit "$T/caddy.err" | head -2)"
	"$SA" report "$T/caddy-$cp.jsonl" >/dev/null 2>"$T/report.err"
	grep -q "was a Go program" "$T/report.err" && ok "caddy: report on the missing log names Go" \
		|| fail "caddy: report on the missing log names Go" "$(head -3 "$T/report.err")"
else
	fail "caddy" "caddy is not installed (scripts/ensure-deps.sh test installs it)"
fi
# Not Go: no such line (a C daemon, a script through its interpreter).
"$SA" -o "$T/x.jsonl" -- nginx -v >/dev/null 2>"$T/ng.err"
"$SA" -o "$T/x.jsonl" -- /usr/bin/python3 -c 'pass' >/dev/null 2>>"$T/ng.err"
grep -q "Go program" "$T/ng.err" && fail "nginx, python3: no Go line" "$(cat "$T/ng.err")" || ok "nginx, python3: no Go line"

# 2. io_uring through liburing: 300 accepts as IORING_OP_ACCEPT.
L="$T/uring.jsonl"
SOCKAUDIT_LOG=$L LD_PRELOAD="$(preload_value)" timeout 20 "$PROGS/life_uring" 300 >"$T/uring.out" 2>"$T/uring.err"; rc=$?
[ $rc = 0 ] && grep -q '^accepted=300 ' "$T/uring.out" && ok "io_uring: 300 accepts through the ring under the shim" \
	|| fail "io_uring: 300 accepts through the ring under the shim" "exit $rc: $(cat "$T/uring.out" "$T/uring.err" | head -3)"
rfd=$(sed -n 's/.*ring_fd=\([0-9]*\).*/\1/p' "$T/uring.out")
check_jq "io_uring: one blind_spot (call io_uring, ring_fd $rfd) before the summary" "$L" \
	"([.[] | select(.event==\"blind_spot\")] | length == 1 and .[0].call == \"io_uring\" and .[0].ring_fd == ${rfd:-0}) and
	 ([.[].event] | index(\"blind_spot\") < index(\"summary\"))"
check_jq "io_uring: the summary counts the blind_spot finding" "$L" \
	'[.[] | select(.event=="summary")][0].findings.blind_spot == 1'
# The ring closed before the exit, as well-behaved programs do: seen while
# it was open. (a) The process's own connects look.
L="$T/uring-exit.jsonl"
SOCKAUDIT_LOG=$L LD_PRELOAD="$(preload_value)" timeout 20 "$PROGS/life_uring" 50 exit >"$T/ue.out" 2>&1
rfd=$(sed -n 's/.*ring_fd=\([0-9]*\).*/\1/p' "$T/ue.out")
check_jq "io_uring closed before exit, connects through libc: one blind_spot (ring_fd $rfd) before the summary" "$L" \
	"([.[] | select(.event==\"blind_spot\")] | length == 1 and .[0].call == \"io_uring\" and .[0].ring_fd == ${rfd:-0}) and
	 ([.[].event] | index(\"blind_spot\") < index(\"summary\"))"
# (b) No connects of its own: the connections come from outside (this
# shell, not under the shim).
uring_ext() {   # mode log
	rm -f "$T/ux.out"
	SOCKAUDIT_LOG=$2 LD_PRELOAD="$(preload_value)" timeout 20 "$PROGS/life_uring" 20 "$1" >"$T/ux.out" 2>&1 &
	up=$!
	for _ in $(seq 100); do grep -q '^port=' "$T/ux.out" 2>/dev/null && break; sleep 0.05; done
	p=$(sed -n 's/^port=//p' "$T/ux.out")
	for _ in $(seq 20); do bash -c "exec 3<>/dev/tcp/127.0.0.1/${p:-1}" 2>/dev/null; done
	wait $up
	rfd=$(sed -n 's/.*ring_fd=\([0-9]*\).*/\1/p' "$T/ux.out")
}
uring_ext ext "$T/uring-ext.jsonl"
grep -q '^accepted=20 ' "$T/ux.out" && ok "io_uring, connects from outside: 20 accepts through the ring" \
	|| fail "io_uring, connects from outside: 20 accepts through the ring" "$(cat "$T/ux.out")"
check_jq "io_uring closed before exit, only a setsockopt on its accepted sockets: one blind_spot (ring_fd $rfd)" "$T/uring-ext.jsonl" \
	"([.[] | select(.event==\"blind_spot\")] | length == 1 and .[0].call == \"io_uring\" and .[0].ring_fd == ${rfd:-0}) and
	 ([.[].event] | index(\"blind_spot\") < index(\"summary\"))"
uring_ext extclose "$T/uring-extclose.jsonl"
check_jq "io_uring closed after the listener, no other call through libc: one blind_spot (ring_fd $rfd)" "$T/uring-extclose.jsonl" \
	"([.[] | select(.event==\"blind_spot\")] | length == 1 and .[0].call == \"io_uring\" and .[0].ring_fd == ${rfd:-0}) and
	 ([.[].event] | index(\"blind_spot\") < index(\"summary\"))"
# No ring: no blind_spot.
SOCKAUDIT_LOG="$T/plain.jsonl" LD_PRELOAD="$(preload_value)" timeout 20 "$PROGS/life_forkfile" single 5 >/dev/null 2>&1
check_jq "no ring: no blind_spot" "$T/plain.jsonl" 'all(.[]; .event != "blind_spot")'
finish
