# Shared helpers for tests/integration/*.sh (bash). Source it first:
#   . "$(dirname "$0")/../lib.sh"
# Gives: $TOP, $LIB (libsockaudit.so), $PROGS (built helper programs), $T (a
# temp dir removed on exit), ok/fail/check/check_jq, log_jq/first_event/count_events, wait_port, and
# preload CMD... (runs CMD under the shim; set SOCKAUDIT_* yourself).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
LIB=${SA_LIB:-$TOP/libsockaudit.so}
PROGS=$BUILD/progs
T=$(mktemp -d /tmp/sa-it.XXXXXX)
# SA_SLOW: how many times slower than this project's 2-core amd64 machine
# the machine running the tests is (1 by default; `make test-arm64` measures
# it under TCG emulation: scripts/arm64-test.sh). `slack MS` scales a margin
# a test leaves for its own programs to start and get going (a fixture that
# must outlast them, a pause they must all fall in), never a bound on what
# the kernel or the shim measures: those stay as they are.
SA_SLOW=${SA_SLOW:-1}
slack() { echo $(($1 * SA_SLOW)); }
_sa_cleanup_fns=()
on_exit() { _sa_cleanup_fns+=("$*"); }
# keep_lines: under tests/run-tests.sh (SA_TEST_LINES set), the lines with a
# msg that this script's programs wrote anywhere in $T, kept in
# SA_TEST_LINES/SCRIPT.jsonl before $T goes, for the last group
# (tests/final/msg_length.sh) to check.
keep_lines() {
	[ -n "${SA_TEST_LINES:-}" ] && [ -d "$SA_TEST_LINES" ] || return 0
	find "$T" -type f -size -64M -print0 2>/dev/null | xargs -0 -r grep -ahoE '\{"ts":.*"msg":.*' 2>/dev/null \
		>>"$SA_TEST_LINES/$(basename "$0" .sh).jsonl"
	return 0
}
_sa_cleanup() {
	local f
	for f in "${_sa_cleanup_fns[@]}"; do eval "$f" >/dev/null 2>&1; done
	jobs -p | xargs -r kill 2>/dev/null
	keep_lines
	rm -rf "$T"
}
trap _sa_cleanup EXIT
trap 'exit 130' INT TERM
_sa_failed=0
ok()   { echo "ok - $1"; }
fail() { echo "not ok - $1${2:+ # $2}"; _sa_failed=1; }
# check NAME CMD...: passes when CMD succeeds.
check() { local n=$1; shift; if "$@"; then ok "$n"; else fail "$n" "command failed: $*"; fi; }
# check_jq NAME FILE FILTER: passes when jq -e FILTER on the slurped JSON lines is true.
check_jq() {
	local n=$1 f=$2 q=$3
	if jq -e -s "$q" "$f" >/dev/null 2>&1; then ok "$n"
	else fail "$n" "jq -s '$q' was false on $f"; echo "# --- $f:"; sed 's/^/# /' "$f" | head -40; fi
}
# preload_value: what LD_PRELOAD must hold to load the shim. A sanitized build
# (make SANITIZE=...) needs the sanitizer runtime loaded before the shim and
# before anything else ("ASan runtime does not come first"); UBSan alone is a
# plain dependency of the shim. Errors end the host with a distinct status so
# tests notice them; leak checking of the host program itself is off (python
# or nginx leaks are not ours; tests/integration/leaks.sh checks ours).
# Named jq questions a test asks of a log (JSON lines, slurped):
#   log_jq FILE FILTER       FILTER over the lines as one array
#   first_event FILE EVENT   the first line of that event (compact), or null
#   count_events FILE EVENT  how many lines of that event
log_jq()       { jq -s "$2" "$1" 2>/dev/null; }
first_event()  { jq -c -s --arg e "$2" '[.[] | select(.event == $e)][0]' "$1" 2>/dev/null; }
count_events() { jq -s --arg e "$2" '[.[] | select(.event == $e)] | length' "$1" 2>/dev/null; }
preload_value() {
	local v=$LIB rt=""
	case ",${SANITIZE:-}," in
	*,address,*) rt=$(${SAN_CC:-gcc} -print-file-name=libasan.so) ;;
	*,thread,*)  rt=$(${SAN_CC:-gcc} -print-file-name=libtsan.so) ;;
	esac
	[ -n "$rt" ] && v="$rt:$v"
	echo "$v${LD_PRELOAD:+:$LD_PRELOAD}"
}
if [ -n "${SANITIZE:-}" ]; then
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:exitcode=86}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=87}
	# report_signal_unsafe=0: the life_* programs call fork(), connect and
	# setsockopt from signal handlers on purpose (as real servers do), which
	# TSan reports as signal-unsafe in the host; what those tests check is that
	# the shim stays correct there.
	export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=88:report_signal_unsafe=0}
fi
preload() { LD_PRELOAD="$(preload_value)" "$@"; }
# wait_port PORT [NETNS]: wait up to 5 s for a TCP listener on 127.0.0.1:PORT.
wait_port() {
	local i
	for i in $(seq 100); do
		if [ -n "${2:-}" ]; then ip netns exec "$2" ss -Hltn "sport = :$1" | grep -q . && return 0
		else ss -Hltn "sport = :$1" | grep -q . && return 0; fi
		sleep 0.05
	done
	return 1
}
# free_port: a TCP port nobody listens on now (race-tolerant enough for tests).
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
finish() { exit $_sa_failed; }
# skip_under_tsan WHY: a ThreadSanitizer build of the shim cannot run this
# script meaningfully (TSan defers signals and intercepts fork and
# cancellation itself, and an uninstrumented multi-threaded host looks like
# races to it): one ok line saying so, and the script ends.
skip_under_tsan() {
	case ",${SANITIZE:-}," in *,thread,*) echo "ok - $(basename "$0" .sh) # SKIP SANITIZE=thread: $1"; finish ;; esac
}
