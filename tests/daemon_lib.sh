# Helpers for tests/integration/daemon_*.sh ("a suite of real
# daemons"). Source after tests/lib.sh:
#   . "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
# Each daemon runs plain and under the shim; every wait is bounded by timeout
# and a timeout fails the check.
SA=$TOP/sockaudit   # the launcher build
# Under make SANITIZE=..., the sanitizer runtime must come first in
# LD_PRELOAD: the launcher keeps what LD_PRELOAD holds ahead of the shim.
case ",${SANITIZE:-}," in
*,address,*|*,thread,*)
	_rt=$(preload_value); _rt=${_rt%%:*}
	printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$_rt" "$TOP/sockaudit" >"$T/sockaudit-san"
	chmod +x "$T/sockaudit-san"; SA=$T/sockaudit-san ;;
esac
PY=/usr/bin/python3

# need PROG...: fail and finish when a program is not installed.
need() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null 2>&1 || [ -x "$p" ] || { fail "$p installed" "scripts/ensure-deps.sh daemons"; finish; }
	done
}

# timed VAR SECS CMD...: runs CMD under `timeout -k 2 SECS`; sets VAR_rc (exit
# status, 124/137 = timed out) and VAR_s (elapsed seconds, 2 decimals).
timed() {
	local v=$1 secs=$2; shift 2
	local t0=$(date +%s.%N) rc
	timeout -k 2 "$secs" "$@"; rc=$?
	printf -v "${v}_rc" '%s' "$rc"
	printf -v "${v}_s" '%.2f' "$(echo "$(date +%s.%N) - $t0" | bc)"
}
timed_out() { [ "$1" = 124 ] || [ "$1" = 137 ]; }

# json_lines NAME FILE...: every line of every FILE is one whole JSON object,
# and each file ends with a newline (a last line without one is torn).
json_lines() {
	local n=$1; shift
	local msg
	if msg=$($PY - "$@" <<'PY'
import json, sys
total = bad = 0; first = None
for f in sys.argv[1:]:
    data = open(f, "rb").read()
    if data and not data.endswith(b"\n"):
        bad += 1; first = first or "%s: last line has no newline: %r" % (f, data[-80:])
    for i, l in enumerate(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")):
        total += 1
        try:
            if not isinstance(json.loads(l), dict): raise ValueError("not an object")
        except Exception:
            bad += 1; first = first or "%s:%d: %r" % (f, i + 1, l[:160])
if total == 0:
    print("no line at all"); sys.exit(1)
if bad:
    print("%d of %d lines do not parse; first: %s" % (bad, total, first)); sys.exit(1)
print("%d lines" % total)
PY
	); then ok "$n ($msg)"; else fail "$n" "$msg"; fi
}

# jqs FILE FILTER: jq -s FILTER over the JSON lines of FILE, skipping lines
# that do not parse (json_lines reports those); prints the result.
jqs() { $PY -c '
import json, sys
for l in open(sys.argv[1], "rb"):
    try: o = json.loads(l)
    except Exception: continue
    if isinstance(o, dict): print(json.dumps(o))' "$1" | jq -s -c "$2"; }

# accepts_on FILE PORT: the accepts the shim counted on listeners bound to
# :PORT, from each process's last summary (null when no summary has one).
accepts_on() { jqs "$1" "[.[] | select(.event==\"summary\")] | group_by(.pid) | map(last)
	| map(.listeners // [] | map(select(.local|endswith(\":$2\"))) | map(.accepts) | add // 0) | add"; }
# stats_accepts_on FILE PORT: the same from each (pid, listener)'s last listener_stats.
stats_accepts_on() { jqs "$1" "[.[] | select(.event==\"listener_stats\" and (.local|endswith(\":$2\")))]
	| group_by(.pid, .listen_fd) | map(last.accepts) | add // 0"; }
# summary_pids FILE: pids that wrote a summary.
summary_pids() { jqs "$1" '[.[] | select(.event=="summary") | .pid] | unique | .[]'; }

# http_get PORT N C PATH: exactly N HTTP/1.0 GETs, one connection each, from C
# threads (ab may open a connection more than it sends requests on: measured
# 302 accepts for `ab -n 300 -c 4` against plain lighttpd). Prints
# "N_ok N_failed" and exits 0 when every reply was 200.
http_get() { $PY - "$@" <<'PY'
import socket, sys, threading
port, n, c, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
res = []; lock = threading.Lock()
def worker(k):
    for _ in range(k):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET %s HTTP/1.0\r\nHost: x\r\n\r\n" % path.encode())
            buf = b""
            while True:
                d = s.recv(65536)
                if not d: break
                buf += d
            s.close()
            r = buf.split(b" ", 2)[1] == b"200" if buf else False
        except Exception:
            r = False
        with lock: res.append(r)
ts = [threading.Thread(target=worker, args=(n // c + (i < n % c),)) for i in range(c)]
for t in ts: t.start()
for t in ts: t.join()
print(sum(res), len(res) - sum(res))
sys.exit(0 if all(res) and len(res) == n else 1)
PY
}
