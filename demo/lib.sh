# demo/lib.sh: what every demo scenario shares (bash). Source it first:
#   . "$(dirname "$0")/lib.sh"
# Gives: $TOP, $LIB (libsockaudit.so), $BIN (built demo programs), $W (a
# scratch dir removed on exit), $LOGS (where the scenario's JSON lines go:
# $DEMO_LOGDIR when run.sh set it, else $W), output helpers (heading, say,
# show, pass, fail, verdict), and cleanup that kills what the scenario
# started and deletes the namespaces it made, also on Ctrl-C.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
LIB=${SA_LIB:-$TOP/libsockaudit.so}
BIN=$BUILD/demo
PY=/usr/bin/python3
# The scenarios set what the shim needs; a SOCKAUDIT_* left in the caller's
# environment (SOCKAUDIT_DISABLE=1, a SOCKAUDIT_COMM list ...) must not change them.
for _v in $(compgen -e | grep '^SOCKAUDIT_'); do unset "$_v"; done

# Colour only on a terminal, and never when NO_COLOR is set.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ] && [ "${TERM:-dumb}" != dumb ]; then
	C_H=$'\e[1;36m' C_B=$'\e[1m' C_OK=$'\e[1;32m' C_BAD=$'\e[1;31m' C_DIM=$'\e[2m' C_0=$'\e[0m'
else
	C_H= C_B= C_OK= C_BAD= C_DIM= C_0=
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/sa-demo.XXXXXX")
LOGS=${DEMO_LOGDIR:-$W}
_pids=()
_netns=()
_scenario_failed=0
_scenario_why=()

# track PID: kill PID (and wait for it) when the scenario ends.
track() { _pids+=("$1"); }
# stop PID [SIGNAL]: signal a tracked process and wait up to 3 s for it.
stop() {
	local pid=$1 sig=${2:-TERM} i
	kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
	kill -"$sig" "$pid" 2>/dev/null
	for i in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}
# netns_new SUFFIX: creates namespace sa-demo-<pid>-SUFFIX with lo up and
# sets $NS to its name (not a subshell: cleanup must know it).
netns_new() {
	NS=sa-demo-$$-$1
	ip netns add "$NS" 2>"$W/netns.err" || { cat "$W/netns.err" >&2; return 1; }
	_netns+=("$NS")
	ip netns exec "$NS" ip link set lo up
}
# wait_listen PORT [NS]: wait up to 5 s for a TCP listener on PORT.
wait_listen() {
	local i
	for i in $(seq 250); do
		if [ -n "${2:-}" ]; then ip netns exec "$2" ss -Hltn "sport = :$1" | grep -q . && return 0
		else ss -Hltn "sport = :$1" | grep -q . && return 0; fi
		sleep 0.02
	done
	return 1
}
# have_log LOG...: every LOG must exist and hold at least one line from the shim.
have_log() {
	local l ok=0
	for l in "$@"; do
		if [ ! -s "$l" ]; then
			fail "the shim wrote nothing to $(basename "$l")"
			: >>"$l"
			ok=1
		fi
	done
	return $ok
}
_cleanup() {
	local p ns
	trap - EXIT INT TERM
	for p in "${_pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
	for ns in "${_netns[@]}"; do
		# Whatever still runs in our own namespace was started by us.
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
	done
	sleep 0.1
	for p in "${_pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for ns in "${_netns[@]}"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns delete "$ns" 2>/dev/null
	done
	rm -rf "$W"
}
trap _cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

# The environment that puts a program under the shim, writing to LOG.
# usage: env $(shim_env LOG) prog ...   (LEVEL defaults to info)
# A sanitizer build of the library (make SANITIZE=...) needs its runtime first in LD_PRELOAD.
SAN_RT=$(ldd "$LIB" 2>/dev/null | awk '/lib(a|t)san\.so/ {print $3; exit}')
shim_env() { echo "LD_PRELOAD=${SAN_RT:+$SAN_RT:}$LIB SOCKAUDIT_LOG=$1 SOCKAUDIT_LEVEL=${2:-info}"; }

# need_built PROG...: the shim and the named demo programs must exist.
need_built() {
	local p missing=""
	[ -f "$LIB" ] || missing="$missing libsockaudit.so"
	for p in "$@"; do [ -x "$BIN/$p" ] || missing="$missing $p"; done
	if [ -n "$missing" ] && [ -z "${DEMO_NO_BUILD:-}" ]; then
		make -C "$TOP" --no-print-directory -s all demo-build >"$W/build.log" 2>&1
		missing=""
		[ -f "$LIB" ] || missing="$missing libsockaudit.so"
		for p in "$@"; do [ -x "$BIN/$p" ] || missing="$missing $p"; done
	fi
	if [ -n "$missing" ]; then
		fail "not built:$missing (make all demo-build)"
		[ -s "$W/build.log" ] && tail -5 "$W/build.log" | sed 's/^/    /'
		return 1
	fi
}

# Output. Everything is plain text with optional colour, so a log file reads
# the same as the terminal.
heading() { printf '\n%s== %s ==%s\n' "$C_H" "$*" "$C_0"; }
say() { printf '%s\n' "$*" | fold -s -w 90 | sed -e 's/ *$//' -e 's/^/  /'; }
sub() { printf '\n  %s%s%s\n' "$C_B" "$*" "$C_0"; }
# show: indent stdin (the JSON lines and tables the reader looks at).
show() { sed 's/^./    &/'; }
# jl FILTER FILE...: each JSON line of the shim's logs through FILTER
# (lines that are not JSON are skipped, so a truncated tail cannot break it).
# found("code"): the line's findings array names code (a summary's findings
# is an object of totals, not an array: never a match).
JQDEFS='def found($c): ((.findings | arrays) // []) | any(. == $c);'
jl() { local f=$1; shift; jq -R -c "$JQDEFS fromjson? // empty | $f" "$@"; }
jlr() { local f=$1; shift; jq -R -r "$JQDEFS fromjson? // empty | $f" "$@"; }
# js FILTER FILE...: FILTER on the array of all JSON lines.
js() { local f=$1; shift; jq -R -s -c "$JQDEFS [split(\"\n\")[] | fromjson? // empty] | $f" "$@"; }
js_raw() { local f=$1; shift; jq -R -s -r "$JQDEFS [split(\"\n\")[] | fromjson? // empty] | $f" "$@"; }
# jtrue FILTER FILE...: succeeds when FILTER on the array of lines is true.
jtrue() { local f=$1; shift; jq -R -s -e "$JQDEFS [split(\"\n\")[] | fromjson? // empty] | $f" "$@" >/dev/null 2>&1; }
# Shim fields worth seeing, without the common ones (ts, pid, tid, schema ...).
TRIM='del(.ts, .schema, .tid, .severity)'

# show_ev FILTER FILE...: the shim's lines FILTER selects (at most $SHOW_MAX),
# one compact JSON line each without the long "msg", then each distinct msg
# once, wrapped.
show_ev() {
	local f=$1; shift
	jl "$f | $TRIM" "$@" | head -n "${SHOW_MAX:-1000}" >"$W/ev.jsonl"
	jq -c 'del(.msg)' <"$W/ev.jsonl" | show
	jq -r '.msg // empty' <"$W/ev.jsonl" | awk '!seen[$0]++' | while IFS= read -r m; do
		printf '%s\n' "$m" | fold -s -w 84 | sed -e 's/ *$//' -e '1s/^/msg: /' -e '2,$s/^/     /' | show
	done
}

pass() { printf '  %sok%s   %s\n' "$C_OK" "$C_0" "$*"; }
fail() { printf '  %sMISS%s %s\n' "$C_BAD" "$C_0" "$*"; _scenario_failed=1; _scenario_why+=("$*"); }
# expect DESCRIPTION CMD...: pass when CMD succeeds.
expect() { local d=$1; shift; if "$@" >/dev/null 2>&1; then pass "$d"; else fail "$d"; fi; }
# verdict NAME: the scenario's last line, and its exit status.
# run.sh reads the reason from $DEMO_VERDICT when it set one.
verdict() {
	if [ "$_scenario_failed" = 0 ]; then
		printf '%sPASS%s  %s\n' "$C_OK" "$C_0" "$1"
		[ -n "${DEMO_VERDICT:-}" ] && echo "showed its finding" >"$DEMO_VERDICT"
		exit 0
	fi
	local more=""
	[ ${#_scenario_why[@]} -gt 1 ] && more=" (+$((${#_scenario_why[@]} - 1)) more)"
	printf '%sFAIL%s  %s: %s%s\n' "$C_BAD" "$C_0" "$1" "${_scenario_why[0]}" "$more"
	[ -n "${DEMO_VERDICT:-}" ] && echo "${_scenario_why[0]}$more" >"$DEMO_VERDICT"
	exit 1
}

NGINX=${NGINX:-/usr/sbin/nginx}
# nginx_start NS LOG HTTP_BLOCK: a real nginx in namespace NS under the shim
# (log LOG), with its own prefix, temp paths and error log under $W/nginx,
# master + one worker, not daemonized (so its pid is ours). HTTP_BLOCK is
# pasted inside http {}. Sets $NGINX_PID and $NGX (the prefix dir).
nginx_start() {
	local ns=$1 log=$2 body=$3
	NGX=$W/nginx
	mkdir -p "$NGX"
	cat >"$NGX/nginx.conf" <<NGINXCONF
daemon off;
master_process on;
worker_processes 1;
user root;
pid $NGX/nginx.pid;
error_log $NGX/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $NGX/client_body;
	proxy_temp_path $NGX/proxy;
	fastcgi_temp_path $NGX/fastcgi;
	uwsgi_temp_path $NGX/uwsgi;
	scgi_temp_path $NGX/scgi;
$body
}
NGINXCONF
	if [ ! -x "$NGINX" ]; then fail "$NGINX not installed (nginx-light)"; return 1; fi
	ip netns exec "$ns" env $(shim_env "$log") "$NGINX" -p "$NGX/" -c "$NGX/nginx.conf" \
		-e "$NGX/error.log" >"$NGX/stdout" 2>&1 &
	NGINX_PID=$!
	track "$NGINX_PID"
}
# nginx_stop: graceful stop (SIGQUIT), so every process writes its summary.
nginx_stop() { stop "$NGINX_PID" QUIT; }
